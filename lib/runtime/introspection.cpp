/* SPDX-License-Identifier: MIT */
/*
 * glibc's introspection of the heap (mallinfo2, mallinfo, malloc_stats, malloc_info,
 * malloc_trim), interposed so that what they say includes the small-block heap's
 * blocks: each asks the next definition (glibc's) and adds the heap's figures.
 */
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "introspection.h"
#include "next_definition.h"
#include "small_heap.h"

using namespace allocinfo;

namespace {

int (*next_malloc_trim)(size_t);

struct heap_figures {
	size_t system;	/* bytes the heap holds from the system */
	size_t in_use;	/* bytes of slots handed out */
};

heap_figures figures()
{
	small::usage u = small::usage_now();
	return { u.mapped, u.in_use < u.mapped ? u.in_use : u.mapped };
}

} /* namespace */

extern "C" {

EXPORT struct mallinfo2 mallinfo2(void) noexcept
{
	static struct mallinfo2 (*next)(void);
	struct mallinfo2 m;
	memset(&m, 0, sizeof(m));
	if (auto fn = next_definition(&next, "mallinfo2"))
		m = fn();
	heap_figures h = figures();
	m.arena += h.system;
	m.uordblks += h.in_use;
	m.fordblks += h.system - h.in_use;
	return m;
}

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
EXPORT struct mallinfo mallinfo(void) noexcept
{
	static struct mallinfo (*next)(void);
	struct mallinfo m;
	memset(&m, 0, sizeof(m));
	if (auto fn = next_definition(&next, "mallinfo"))
		m = fn();
	/* int fields, as glibc's: they wrap past 2 GiB there too */
	heap_figures h = figures();
	m.arena = (int)((size_t)(unsigned)m.arena + h.system);
	m.uordblks = (int)((size_t)(unsigned)m.uordblks + h.in_use);
	m.fordblks = (int)((size_t)(unsigned)m.fordblks + h.system - h.in_use);
	return m;
}
#pragma GCC diagnostic pop

EXPORT void malloc_stats(void) noexcept
{
	static void (*next)(void);
	if (auto fn = next_definition(&next, "malloc_stats"))
		fn();
	heap_figures h = figures();
	fprintf(stderr, "allocinfo small-block heap:\nsystem bytes     = %10zu\n"
			"in use bytes     = %10zu\n", h.system, h.in_use);
}

/* glibc's document, with the heap as one more <heap> element before its end. */
EXPORT int malloc_info(int options, FILE *fp) noexcept
{
	static int (*next)(int, FILE *);
	auto fn = next_definition(&next, "malloc_info");
	if (!fn)
		return -1;
	char *doc = nullptr;
	size_t len = 0;
	FILE *mem = open_memstream(&doc, &len);
	if (!mem)
		return fn(options, fp);
	int r = fn(options, mem);
	fclose(mem);
	if (r != 0 || !doc) {
		free(doc);
		return r;
	}
	const char *end = strstr(doc, "</malloc>");
	size_t head = end ? (size_t)(end - doc) : len;
	fwrite(doc, 1, head, fp);
	heap_figures h = figures();
	small::usage u = small::usage_now();
	fprintf(fp, "<heap nr=\"allocinfo\">\n<spans in-use=\"%zu\" empty=\"%zu\" purged=\"%zu\" "
		    "taken=\"%llu\"/>\n"
		    "<purge delay-ms=\"%u\" regrets=\"%llu\"/>\n"
		    "<glibc-trims done=\"%llu\" spaced-out=\"%llu\" time-us=\"%llu\"/>\n"
		    "<total type=\"rest\" size=\"%zu\"/>\n"
		    "<system type=\"current\" size=\"%zu\"/>\n</heap>\n",
		u.spans_in_classes, u.spans_empty, u.spans_purged,
		(unsigned long long)u.spans_taken, u.purge_delay_ms,
		(unsigned long long)u.purge_regrets, (unsigned long long)u.trims_done, (unsigned long long)u.trims_spaced_out,
		(unsigned long long)(u.trims_ns / 1000),
		h.system - h.in_use, h.system);
	fputs(end ? end : "</malloc>\n", fp);
	free(doc);
	return 0;
}

/* Both heaps give back what they can: the small-block heap every empty span (and this
 * thread's cached slots), glibc what its malloc_trim does. 1 if either gave any. */
EXPORT int malloc_trim(size_t pad) noexcept
{
	bool ours = small::trim();
	int theirs = 0;
	if (auto fn = next_definition(&next_malloc_trim, "malloc_trim"))
		theirs = fn(pad);
	return ours || theirs;
}

} /* extern "C" */

void allocinfo::trim_underneath(size_t pad)
{
	if (auto fn = next_definition(&next_malloc_trim, "malloc_trim"))
		fn(pad);
}
