// SPDX-License-Identifier: MIT
/*
 * C++ new and delete over another allocator (which defines operator new and delete
 * itself: jemalloc, tcmalloc, mimalloc), preloaded before or after the library: the
 * forms it defines must reach the library all the same. Its argument names the
 * allocator, whose own usable-size function must accept each block; prints "ok".
 */
#include <allocinfo.h>

#include <dlfcn.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#if __has_include(<gperftools/malloc_extension.h>)
#include <gperftools/malloc_extension.h>
#define HAVE_MALLOC_EXTENSION 1
#endif

#include "site_report.h"

static int failures;

#define check(cond, ...) do { \
	if (!(cond)) { \
		printf("%s:%d: ", __FILE__, __LINE__); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failures++; \
	} \
} while (0)

/* The allocator's own usable size of a block it made, or 0 if it did not. */
static int handler_calls;

/* Gives up at once: the retry then finds no handler and throws. */
static void give_up()
{
	handler_calls++;
	std::set_new_handler(nullptr);
}

static size_t allocator_usable(const char *name, void *base)
{
	const char *fn = !strcmp(name, "jemalloc") ? "sallocx"
		       : !strcmp(name, "tcmalloc") ? "tc_malloc_size"
		       : !strcmp(name, "selfcall") ? "self_calling_usable" : "mi_usable_size";
	void *sym = dlsym(RTLD_DEFAULT, fn);
	if (!sym)
		return 0;
	if (!strcmp(name, "jemalloc"))
		return reinterpret_cast<size_t (*)(void *, int)>(sym)(base, 0);
	return reinterpret_cast<size_t (*)(void *)>(sym)(base);
}

int main(int argc, char **argv)
{
	const char *name = argc > 1 ? argv[1] : "glibc";
	bool foreign = strcmp(name, "glibc") != 0;
	/* With ALLOCINFO=never nothing is counted, and the allocator's blocks carry no
	 * record. */
	const char *mode = getenv("ALLOCINFO");
	bool never = mode && !strcmp(mode, "never");
	long long k = never ? 0 : 1;
	size_t record = never ? 0 : 16;
	char *blocks[4];
	char *aligned;
	int line, aligned_line;
	{
		line = __LINE__ + 1;
		ALLOC_TAG_SCOPE();
		for (int i = 0; i < 4; i++)
			blocks[i] = new char[100000];
	}
	{
		aligned_line = __LINE__ + 1;
		ALLOC_TAG_SCOPE();
		aligned = new (std::align_val_t(256)) char[1000];
	}
	check((uintptr_t)aligned % 256 == 0, "aligned new: %p", (void *)aligned);
	struct site_counts c = site_lookup(__FILE__, line, nullptr);
	check((c.found || never) && c.bytes == k * 400000 && c.calls == (unsigned long long)k * 4,
	      "new[]: %lld bytes in %llu calls", c.bytes, c.calls);
	c = site_lookup(__FILE__, aligned_line, nullptr);
	check((c.found || never) && c.bytes == k * 1000 && c.calls == (unsigned long long)k,
	      "aligned new: %lld bytes in %llu calls", c.bytes, c.calls);
	for (int i = 0; i < 4; i++) {
		size_t usable = malloc_usable_size(blocks[i]);
		check(usable >= 100000, "malloc_usable_size %zu", usable);
		if (foreign)
			check(usable + record == allocator_usable(name, blocks[i] - record),
			      "%s's usable size %zu of the block, not %zu", name,
			      allocator_usable(name, blocks[i] - record), usable + record);
		memset(blocks[i], 1, usable);
		delete[] blocks[i];
	}
	::operator delete[](aligned, std::align_val_t(256));
	c = site_lookup(__FILE__, line, nullptr);
	check(c.bytes == 0 && c.calls == 0, "after delete[]: %lld bytes in %llu calls", c.bytes,
	      c.calls);
	c = site_lookup(__FILE__, aligned_line, nullptr);
	check(c.bytes == 0 && c.calls == 0, "after aligned delete: %lld bytes in %llu calls",
	      c.bytes, c.calls);

	/* A new with no tag: charged to its own line (the caller tag of its return
	 * address), and uncharged by delete. */
	int untagged_line = __LINE__ + 1;
	int *numbers = new int[1000];
	c = site_lookup(__FILE__, untagged_line, nullptr);
	check((c.found || never) && c.bytes == k * 4000 && c.calls == (unsigned long long)k,
	      "new int[1000]: %lld bytes in %llu calls", c.bytes, c.calls);
	delete[] numbers;
	c = site_lookup(__FILE__, untagged_line, nullptr);
	check(c.bytes == 0 && c.calls == 0, "after delete[]: %lld bytes in %llu calls", c.bytes,
	      c.calls);

	/* A request no allocator can meet: the new handler runs once, then
	 * std::bad_alloc reaches the program, and nothing is counted. Not with
	 * ALLOCINFO=never: the allocator's own operator new may answer, as without the
	 * library (mimalloc's aborts). */
	if (!never) {
		std::set_new_handler(give_up);
		bool thrown = false;
		int huge_line = __LINE__ + 2;
		try {
			char *volatile huge = new char[(size_t)1 << 62];
			(void)huge;
		} catch (const std::bad_alloc &) {
			thrown = true;
		}
		check(thrown && handler_calls == 1,
		      "new of 2^62 bytes: thrown %d, new handler called %d times", thrown,
		      handler_calls);
		c = site_lookup(__FILE__, huge_line, nullptr);
		check(c.bytes == 0 && c.calls == 0, "failed new: %lld bytes in %llu calls",
		      c.bytes, c.calls);
	}
	/* tcmalloc's new mode: its malloc calls the new handler when it fails. A size
	 * that the record would take past SIZE_MAX, or past PTRDIFF_MAX with an
	 * alignment, reaches it as it is, and fails there. */
	if (!never && !strcmp(name, "tcmalloc")) {
		auto set_mode = reinterpret_cast<int (*)(int)>(dlsym(RTLD_DEFAULT, "tc_set_new_mode"));
		check(set_mode != nullptr, "no tc_set_new_mode");
		int old_mode = set_mode ? set_mode(1) : 0;
		static volatile size_t past_record = SIZE_MAX - 4, past_align = SIZE_MAX - 100000;
		for (int form = 0; set_mode && form < 4; form++) {
			handler_calls = 0;
			std::set_new_handler(give_up);
			void *volatile p = nullptr;
			switch (form) {
			case 0: p = malloc(past_record); break;
			case 1: p = calloc(1, past_record); break;
			case 2: p = realloc(nullptr, past_record); break;
			default: p = memalign(32, past_align);
			}
			check(!p && handler_calls == 1, "new mode, form %d: %p, new handler called %d times",
			      form, p, handler_calls);
		}
		std::set_new_handler(nullptr);
		if (set_mode)
			set_mode(old_mode);
	}
#ifdef HAVE_MALLOC_EXTENSION
	/* tcmalloc's C++ interface: MallocExtension::instance()->GetAllocatedSize(p), a
	 * virtual call, must give a block of malloc's the size malloc_usable_size gives
	 * (not the size of the allocator's block around it, 16 bytes more), and give the
	 * allocator's own blocks their own. */
	auto instance = reinterpret_cast<MallocExtension *(*)()>(
		dlsym(RTLD_DEFAULT, "_ZN15MallocExtension8instanceEv"));
	if (!strcmp(name, "tcmalloc")) {
		check(instance != nullptr, "no MallocExtension::instance()");
		auto own_malloc = reinterpret_cast<void *(*)(size_t)>(dlsym(RTLD_DEFAULT, "tc_malloc"));
		for (size_t n = 0; instance && own_malloc && n < 70000; n += n < 1024 ? 7 : 997) {
			void *p = malloc(n), *own = own_malloc(n);
			size_t got = instance()->GetAllocatedSize(p);
			check(got == malloc_usable_size(p), "GetAllocatedSize of %zu bytes: %zu, not %zu",
			      n, got, malloc_usable_size(p));
			check(instance()->GetAllocatedSize(own) == allocator_usable(name, own),
			      "GetAllocatedSize of its own %zu bytes: %zu, not %zu", n,
			      instance()->GetAllocatedSize(own), allocator_usable(name, own));
			free(p);
			free(own);
		}
		/* The library asks tcmalloc the size of the block under each of its own,
		 * and tcmalloc's answer is that same virtual call, from inside it: it
		 * must stay tcmalloc's. Were it asked whether the block is the library's,
		 * a record forged by the program at the end of the block below (its own
		 * data) would be believed. */
		enum { N = 64, SIZE = 32 };
		char *near[N], *lower = nullptr, *upper = nullptr;
		const char *heap = getenv("ALLOCINFO_HEAP");
		bool records = !never && !(heap && !strcmp(heap, "own"));	/* else slots */
		/* tcmalloc's own class of a block with its record: what lies between two
		 * neighbours (dlsym's tc_nallocx is tcmalloc's, not routed) */
		auto own_nallocx = reinterpret_cast<size_t (*)(size_t, int)>(
			dlsym(RTLD_DEFAULT, "tc_nallocx"));
		size_t step = own_nallocx ? own_nallocx(SIZE + 16, 0) : 0;
		for (int i = 0; i < N; i++)
			near[i] = static_cast<char *>(malloc(SIZE));
		for (int i = 0; i < N && !upper && records; i++)
			for (int j = 0; j < N && !upper; j++)
				if (near[j] == near[i] + step) {
					lower = near[i];
					upper = near[j];
				}
		check(!records || upper, "no two neighbouring blocks of %d bytes: the case is not tried",
		      SIZE);
		if (upper) {
			/* A size past the block's: believed, it would be the usable size. */
			struct {
				unsigned long long size;
				unsigned int counter, meta;
			} forged = { 100 * SIZE, 16, ALLOCINFO__MAGIC_V1 | 0x20 };
			memcpy(lower + SIZE - sizeof(forged), &forged, sizeof(forged));
			__asm__ volatile("" : : "r"(lower) : "memory");
			check(malloc_usable_size(upper) == SIZE,
			      "below a record forged at the end of its neighbour: usable %zu, not %d",
			      malloc_usable_size(upper), SIZE);
		}
		for (int i = 0; i < N; i++)
			free(near[i]);
	}
#endif
	if (failures) {
		printf("%s", site_report_text());
		return 1;
	}
	printf("ok\n");
	return 0;
}
