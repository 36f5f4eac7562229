/* SPDX-License-Identifier: MIT */
/*
 * Example callback library: logs every allocation above a size, with its call site.
 *
 *   ALLOCINFO_CALLBACKS=./libcallbacks_log_large.so LOG_LARGE_ABOVE=65536 ./program
 *
 * prints, for each malloc, calloc, realloc, aligned allocation or new of more than
 * LOG_LARGE_ABOVE bytes (default 65536), one line on stderr:
 *
 *   large: malloc 100000 bytes at demo.c:17 func:main [demo]
 *
 * A call site that carries no tag of its own (code built without allocinfo.h, or run
 * under LD_PRELOAD) is a caller tag not yet named: the line then gives the module and
 * the call's offset in it, for addr2line:
 *
 *   large: malloc 100000 bytes at [demo] +0x11a4 (addr2line -f -e demo 0x11a4)
 *
 * Build: cc -shared -fPIC -o libcallbacks_log_large.so callbacks_log_large.c
 */
#define _GNU_SOURCE
#include <allocinfo.h>

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static size_t threshold = 65536;

static const char *const op_names[ALLOCINFO_OP_COUNT] = {
	"malloc", "calloc", "realloc", "aligned", "free", "usable_size", "new", "delete",
};

/* Runs after the allocation: e->size is what was allocated, e->ptr the result. */
static void log_large(void *user_data, struct allocinfo_event *e)
{
	(void)user_data;
	if (e->size <= threshold || !e->ptr)
		return;
	char line[1024];
	int n;
	if (e->file) {
		n = snprintf(line, sizeof(line), "large: %s %zu bytes at %s:%u func:%s [%s]\n",
			     op_names[e->op], e->size, e->file, e->line, e->func ? e->func : "??",
			     e->module ? e->module : "??");
	} else {
		/* A caller tag: where the call returns to, inside its module. */
		Dl_info di;
		uintptr_t off = 0;
		if (e->caller && dladdr(e->caller, &di) && di.dli_fbase)
			off = (uintptr_t)e->caller - (uintptr_t)di.dli_fbase;
		const char *m = e->module ? e->module : "??";
		n = snprintf(line, sizeof(line),
			     "large: %s %zu bytes at [%s] +0x%lx (addr2line -f -e %s 0x%lx)\n",
			     op_names[e->op], e->size, m, (unsigned long)off, m,
			     (unsigned long)off);
	}
	if (n > 0 && (size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n);
}

int allocinfo_callbacks_init(void);
int allocinfo_callbacks_init(void)
{
	const char *v = getenv("LOG_LARGE_ABOVE");
	if (v && *v)
		threshold = strtoull(v, NULL, 0);
	struct allocinfo_callbacks cb = {
		.size = sizeof(cb),
		.ops = 1u << ALLOCINFO_OP_MALLOC | 1u << ALLOCINFO_OP_CALLOC |
		       1u << ALLOCINFO_OP_REALLOC | 1u << ALLOCINFO_OP_ALIGNED |
		       1u << ALLOCINFO_OP_NEW,
		.post = log_large,
	};
	int h = allocinfo_callbacks_add(&cb);
	return h < 0 ? h : 0;
}
