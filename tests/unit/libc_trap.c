/* SPDX-License-Identifier: MIT */
/*
 * Preloaded by test_startup_libc: glibc's formatting and number-parsing entry points,
 * each counting the calls made from liballocinfo and then doing glibc's work through
 * glibc's own internal names (no dlsym, which may allocate this early).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long libc_trap_calls;	/* read by the test through dlsym */
char libc_trap_last[32];	/* the last function called */

extern int __vsnprintf_chk(char *, size_t, int, size_t, const char *, va_list);
extern long __strtol_internal(const char *, char **, int, int);
extern unsigned long __strtoul_internal(const char *, char **, int, int);
extern unsigned long long __strtoull_internal(const char *, char **, int, int);

static void note(const char *fn, const void *caller)
{
	Dl_info info;
	if (dladdr(caller, &info) && info.dli_fname && strstr(info.dli_fname, "liballocinfo")) {
		__atomic_add_fetch(&libc_trap_calls, 1, __ATOMIC_RELAXED);
		strncpy(libc_trap_last, fn, sizeof(libc_trap_last) - 1);
	}
}

int vsnprintf(char *s, size_t n, const char *fmt, va_list ap)
{
	note("vsnprintf", __builtin_return_address(0));
	return __vsnprintf_chk(s, n, 0, n, fmt, ap);
}

int snprintf(char *s, size_t n, const char *fmt, ...)
{
	note("snprintf", __builtin_return_address(0));
	va_list ap;
	va_start(ap, fmt);
	int r = __vsnprintf_chk(s, n, 0, n, fmt, ap);
	va_end(ap);
	return r;
}

long strtol(const char *p, char **end, int base)
{
	note("strtol", __builtin_return_address(0));
	return __strtol_internal(p, end, base, 0);
}

unsigned long strtoul(const char *p, char **end, int base)
{
	note("strtoul", __builtin_return_address(0));
	return __strtoul_internal(p, end, base, 0);
}

unsigned long long strtoull(const char *p, char **end, int base)
{
	note("strtoull", __builtin_return_address(0));
	return __strtoull_internal(p, end, base, 0);
}
