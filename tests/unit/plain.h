/* SPDX-License-Identifier: MIT */
/* A library built without allocinfo.h, as most third-party code is. */
#ifndef ALLOCINFO_TEST_PLAIN_H
#define ALLOCINFO_TEST_PLAIN_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

void *plain_alloc(size_t n);
void plain_free(void *p);
extern const int plain_alloc_line;

#ifdef __cplusplus
}
#endif

#endif
