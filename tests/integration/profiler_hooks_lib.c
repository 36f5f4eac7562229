/* SPDX-License-Identifier: MIT */
/*
 * A profiler for profiler_hooks.sh, loaded with ALLOCINFO_CALLBACKS: attaches at rate
 * 1 and prints, for each block of HOOKS_SIZE bytes, what its callbacks see: the
 * functions of its first three frames (dladdr: the program is linked with -rdynamic),
 * its sample data on free and on realloc in place. Never allocates while printing.
 */
#include <allocinfo.h>

#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t watched;

static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		(void)!write(2, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static const char *function_of(void *ra)
{
	Dl_info di;
	if (!dladdr((char *)ra - 1, &di) || !di.dli_sname)
		return "?";
	return di.dli_sname;
}

static size_t on_alloc(void *arg, const struct allocinfo_sample *s)
{
	(void)arg;
	if (s->size != watched)
		return 0;
	memcpy(s->sample_data, "hooks-ok", 8);
	say("alloc %zu:", s->size);
	for (int i = 0; i < 3 && i < s->nframes; i++)
		say(" %s", function_of(s->frames[i]));
	say("\n");
	return 0;
}

static void on_free(void *arg, void *block, size_t size, void *data)
{
	(void)arg;
	(void)block;
	if (size == watched || size == watched / 2)
		say("free %zu: %.8s\n", size, (const char *)data);
}

static void on_realloc(void *arg, void *block, size_t old_size, size_t new_size, void *data)
{
	(void)arg;
	(void)block;
	say("realloc in place %zu -> %zu: %.8s\n", old_size, new_size, (const char *)data);
}

int allocinfo_callbacks_init(void);
int allocinfo_callbacks_init(void)
{
	const char *v = getenv("HOOKS_SIZE");
	watched = v ? strtoul(v, NULL, 10) : 123457;
	struct allocinfo_profiler p = { 0 };
	p.sample_data_size = 8;
	p.initial_sample_rate = 1;
	p.on_alloc = on_alloc;
	p.on_free = on_free;
	p.on_realloc_inplace = on_realloc;
	int r = allocinfo_profiler_attach(&p, NULL);
	if (r == 0)
		r = allocinfo_profiler_start();
	return r;
}
