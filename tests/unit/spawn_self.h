/* SPDX-License-Identifier: MIT */
/*
 * Test helper: runs this test program again, as `argv0 mode`, with a changed
 * environment, and collects what it writes to stderr (the library's messages).
 */
#ifndef ALLOCINFO_TEST_SPAWN_SELF_H
#define ALLOCINFO_TEST_SPAWN_SELF_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The child's environment is this one without the variables whose "NAME=" starts
 * with a string of env_drop, plus env_add (each list null-terminated). Returns the
 * child's exit status (CMocka fails the test if it did not exit); its stderr is in
 * err, null-terminated. */
int spawn_self(const char *mode, const char *const *env_drop, const char *const *env_add,
	       char *err, size_t errlen);

/* The same, for a child that may die of a signal: its wait status, as waitpid's. */
int spawn_self_status(const char *mode, const char *const *env_drop,
		      const char *const *env_add, char *err, size_t errlen);

#ifdef __cplusplus
}
#endif

#endif
