/* SPDX-License-Identifier: MIT */
/*
 * A program built with allocinfo.h whose allocator may be another one: linked in
 * (before or after liballocinfo), or preloaded. Its argument names the allocator
 * that must have served every block (jemalloc, tcmalloc, mimalloc, glibc, or selfcall:
 * tests/integration/self_calling_alloc.c, or glibc-debug, which keeps no figures of
 * its own); its own
 * statistics or functions, found with dlsym, show that it did. The counts of every
 * call site are checked exactly, with malloc_usable_size and the aligned forms.
 * Prints "ok" and exits 0, or names each failure and exits 1.
 */
#include <allocinfo.h>

#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "site_report.h"

static int failures;
static const char *allocator;
/* Bytes of record in front of each block: none with ALLOCINFO=never over another
 * allocator, whose blocks are then exactly the allocator's. */
static size_t record = 16;
static int never;

#define check(cond, ...) do { \
	if (!(cond)) { \
		printf("%s:%d: %s: ", __FILE__, __LINE__, allocator); \
		printf(__VA_ARGS__); \
		printf("\n"); \
		failures++; \
	} \
} while (0)

static void *symbol(const char *name)
{
	void *fn = dlsym(RTLD_DEFAULT, name);
	if (!fn) {
		printf("%s: no %s in the process: not the allocator underneath\n", allocator, name);
		exit(1);
	}
	return fn;
}

/* Bytes the allocator says it has handed out, or -1 where it keeps no such figure. */
static long long allocator_bytes(void)
{
	if (!strcmp(allocator, "jemalloc")) {
		int (*mallctl)(const char *, void *, size_t *, void *, size_t) =
			(int (*)(const char *, void *, size_t *, void *, size_t))symbol("mallctl");
		uint64_t epoch = 1;
		size_t len = sizeof(epoch), bytes;
		mallctl("epoch", &epoch, &len, &epoch, len);
		len = sizeof(bytes);
		if (mallctl("stats.allocated", &bytes, &len, NULL, 0))
			return -1;
		return (long long)bytes;
	}
	if (!strcmp(allocator, "tcmalloc")) {
		int (*get)(const char *, size_t *) =
			(int (*)(const char *, size_t *))symbol("MallocExtension_GetNumericProperty");
		size_t bytes;
		if (!get("generic.current_allocated_bytes", &bytes))
			return -1;
		return (long long)bytes;
	}
	if (!strcmp(allocator, "selfcall"))	/* tests/integration/self_calling_alloc.c */
		return (long long)((size_t (*)(void))symbol("self_calling_bytes"))();
	return -1;
}

/* The allocator's own size for a block of n bytes (its size class), or 0. */
static size_t allocator_class(size_t n)
{
	if (!strcmp(allocator, "jemalloc") || !strcmp(allocator, "tcmalloc"))
		return ((size_t (*)(size_t, int))symbol("nallocx"))(n, 0);
	if (!strcmp(allocator, "mimalloc"))
		return ((size_t (*)(size_t))symbol("mi_good_size"))(n);
	if (!strcmp(allocator, "selfcall"))	/* the size asked for, exactly */
		return n;
	return 0;
}

/* Whether the allocator made p: 1 or 0, or -1 where it cannot say for a pointer it
 * did not make (jemalloc's functions would fault on one). */
static int allocator_owns(const void *p)
{
	if (!strcmp(allocator, "mimalloc"))
		return ((int (*)(const void *))symbol("mi_is_in_heap_region"))(p) != 0;
	if (!strcmp(allocator, "tcmalloc"))	/* kOwned is 1 */
		return ((int (*)(const void *))symbol("MallocExtension_GetOwnership"))(p) == 1;
	return -1;
}

/* The allocator's usable size for `base`, a block it made: its own function, which
 * accepts only its own blocks. */
static size_t allocator_usable(void *base)
{
	if (!strcmp(allocator, "jemalloc"))
		return ((size_t (*)(void *, int))symbol("sallocx"))(base, 0);
	if (!strcmp(allocator, "tcmalloc"))
		return ((size_t (*)(void *))symbol("tc_malloc_size"))(base);
	if (!strcmp(allocator, "mimalloc")) {
		int (*owned)(const void *) = (int (*)(const void *))symbol("mi_is_in_heap_region");
		if (!owned(base))
			return 0;
		return ((size_t (*)(void *))symbol("mi_usable_size"))(base);
	}
	if (!strcmp(allocator, "selfcall"))
		return ((size_t (*)(void *))symbol("self_calling_usable"))(base);
	return 0;
}

/* Whether fn is defined in the object of `ours`. */
static int defined_in(const void *fn, const Dl_info *ours)
{
	Dl_info where;
	return dladdr(fn, &where) && where.dli_fbase == ours->dli_fbase;
}

/*
 * Where the program's own references to malloc and free lead: to liballocinfo,
 * never to another allocator directly (a block with a record would reach a free that
 * does not know it). When the allocator comes first (UNDERNEATH_FIRST, set by
 * underneath.sh), the references were routed to the library's lean entry points for
 * that case, not to its exported functions; otherwise they are the exported ones.
 * With ALLOCINFO=never and the allocator first nothing is routed: they lead to it.
 */
static void check_references(void)
{
	void *(*volatile own_malloc)(size_t) = malloc;
	void (*volatile own_free)(void *) = free;
	void *lib = dlopen("liballocinfo.so.0", RTLD_NOW | RTLD_NOLOAD);
	check(lib != NULL, "liballocinfo.so.0 is not loaded");
	if (!lib)
		return;
	Dl_info ours;
	void *exported_malloc = dlsym(lib, "malloc"), *exported_free = dlsym(lib, "free");
	check(dladdr(exported_free, &ours), "no liballocinfo free");
	int in_library = defined_in((void *)own_malloc, &ours) &&
			 defined_in((void *)own_free, &ours);
	if (getenv("UNDERNEATH_FIRST") && never) {
		check(!defined_in((void *)own_malloc, &ours) && !defined_in((void *)own_free, &ours),
		      "ALLOCINFO=never: the program's malloc or free leads to liballocinfo");
	} else if (getenv("UNDERNEATH_FIRST")) {
		check(in_library, "the program's malloc and free lead outside liballocinfo");
		check((void *)own_malloc != exported_malloc && (void *)own_free != exported_free,
		      "routed to the exported malloc and free, not the lean entry points");
	} else {
		check(in_library, "the program's malloc and free lead outside liballocinfo");
		check((void *)own_malloc == exported_malloc && (void *)own_free == exported_free,
		      "malloc and free do not lead to the exported functions");
	}
	dlclose(lib);
}

/* The allocator's own malloc, which bypasses liballocinfo: its blocks carry no
 * record. Null for glibc's. */
static void *(*direct_mallocx)(size_t, int);
static void *via_mallocx(size_t n) { return direct_mallocx(n, 0); }
static void *(*direct_malloc(void))(size_t)
{
	if (!strcmp(allocator, "jemalloc")) {
		direct_mallocx = (void *(*)(size_t, int))symbol("mallocx");
		return via_mallocx;
	}
	if (!strcmp(allocator, "tcmalloc"))
		return (void *(*)(size_t))symbol("tc_malloc");
	if (!strcmp(allocator, "mimalloc"))
		return (void *(*)(size_t))symbol("mi_malloc");
	if (!strcmp(allocator, "selfcall"))
		return (void *(*)(size_t))symbol("self_calling_malloc");
	return NULL;
}

/* The allocator's own blocks, some at the start of a fresh mapping: measured and
 * freed through the library's functions, which must not read below them. */
static void measure_and_free_own_blocks(void *(*direct)(size_t))
{
	static const size_t sizes[] = { 24, 4096, 8192, 65536, 1 << 20, 4 << 20, 16 << 20,
					64 << 20 };
	for (int round = 0; round < 100; round++)
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			char *p = direct(sizes[i]);
			check(p != NULL, "the allocator's own malloc(%zu)", sizes[i]);
			p[0] = 1;
			check(malloc_usable_size(p) == allocator_usable(p),
			      "malloc_usable_size of the allocator's own block: %zu, not %zu",
			      malloc_usable_size(p), allocator_usable(p));
			free(p);
		}
}

/*
 * Pointers that start a page. Below one the allocator made itself there may be no
 * mapped page at all (jemalloc puts a 4 MiB block at the start of a fresh mapping):
 * free, realloc and malloc_usable_size must not read there. The library's own such
 * pointers (aligned to a page, or a small block whose allocator block begins 16 bytes
 * before a page) are still counted and uncounted exactly.
 */
static void check_page_starts(long long k)
{
	void *(*direct)(size_t) = direct_malloc();
	if (direct) {
		measure_and_free_own_blocks(direct);
		char *p = direct(4 << 20);
		memset(p, 3, 100);
		int realloc_at = __LINE__ + 1;
		p = realloc(p, 5 << 20);
		check(p && p[99] == 3, "realloc of the allocator's own block lost its contents");
		struct site_counts c = site_lookup(__FILE__, realloc_at, "check_page_starts");
		check((c.found || !k) && c.bytes == k * (5 << 20) && c.calls == (unsigned long long)k,
		      "the allocator's own block, resized: %lld bytes in %llu calls",
		      c.bytes, c.calls);
		free(p);
		c = site_lookup(__FILE__, realloc_at, "check_page_starts");
		check(c.bytes == 0 && c.calls == 0, "resized, freed: %lld bytes in %llu calls",
		      c.bytes, c.calls);
	}

	enum { PAGES = 64, SMALL = 4096 };
	void *aligned[PAGES];
	int aligned_at = 0;
	for (int i = 0; i < PAGES; i++) {
		aligned_at = __LINE__ + 1;
		aligned[i] = aligned_alloc(4096, 4096 * (size_t)(i % 4 + 1));
		check(aligned[i] && (uintptr_t)aligned[i] % 4096 == 0, "aligned_alloc(4096): %p",
		      aligned[i]);
	}
	static void *small[SMALL];
	int small_at = 0, starts = 0;
	for (int i = 0; i < SMALL; i++) {
		small_at = __LINE__ + 1;
		small[i] = malloc(32);
		starts += (uintptr_t)small[i] % 4096 == 0;
	}
	/* About 1 in 256 over jemalloc, tcmalloc and mimalloc: 15-24 here. */
	if (direct)
		check(starts > 0, "no small block starts a page: the case is not tried");
	struct site_counts c = site_lookup(__FILE__, aligned_at, "check_page_starts");
	check((c.found || !k) && c.bytes == k * 4096 * 10 * (PAGES / 4) &&
	      c.calls == (unsigned long long)(k * PAGES),
	      "page-aligned blocks: %lld bytes in %llu calls", c.bytes, c.calls);
	c = site_lookup(__FILE__, small_at, "check_page_starts");
	check((c.found || !k) && c.bytes == k * 32 * SMALL && c.calls == (unsigned long long)(k * SMALL),
	      "small blocks (%d start a page): %lld bytes in %llu calls", starts, c.bytes,
	      c.calls);
	/* Half of each resized (in place or moved), then all freed. */
	int grown_at = __LINE__ + 2;
	for (int i = 0; i < PAGES; i += 2)
		aligned[i] = realloc(aligned[i], 20000);
	int regrown_at = __LINE__ + 2;
	for (int i = 0; i < SMALL; i += 2)
		small[i] = realloc(small[i], 48);
	c = site_lookup(__FILE__, grown_at, "check_page_starts");
	check((c.found || !k) && c.bytes == k * 20000 * PAGES / 2 &&
	      c.calls == (unsigned long long)(k * PAGES / 2),
	      "page-aligned blocks, resized: %lld bytes in %llu calls", c.bytes, c.calls);
	c = site_lookup(__FILE__, regrown_at, "check_page_starts");
	check((c.found || !k) && c.bytes == k * 48 * SMALL / 2 &&
	      c.calls == (unsigned long long)(k * SMALL / 2),
	      "small blocks, resized: %lld bytes in %llu calls", c.bytes, c.calls);
	for (int i = 0; i < PAGES; i++)
		free(aligned[i]);
	for (int i = 0; i < SMALL; i++)
		free(small[i]);
	int lines[] = { aligned_at, small_at, grown_at, regrown_at };
	for (size_t i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		c = site_lookup(__FILE__, lines[i], "check_page_starts");
		check(c.bytes == 0 && c.calls == 0, "line %d, freed: %lld bytes in %llu calls",
		      lines[i], c.bytes, c.calls);
	}
}

/* The same from four threads, each block freed by another thread, and across fork:
 * the child inherits the set of pointers that start a page and frees them all. */
enum { THREADS = 4, PER_THREAD = 1024, ALIGNED_EVERY = 64 };
static void *thread_blocks[THREADS][PER_THREAD];
static int thread_small_at, thread_aligned_at;

static void *make_blocks(void *arg)
{
	void **b = arg;
	for (int i = 0; i < PER_THREAD; i++) {
		if (i % ALIGNED_EVERY == 0) {
			thread_aligned_at = __LINE__ + 1;
			b[i] = aligned_alloc(4096, 4096);
		} else {
			thread_small_at = __LINE__ + 1;
			b[i] = malloc(32);
		}
	}
	return NULL;
}

static void *free_blocks(void *arg)
{
	void **b = arg;
	for (int i = 0; i < PER_THREAD; i++)
		free(b[i]);
	return NULL;
}

/* Runs fn on each thread's blocks, thread t taking those of thread t + shift. */
static void in_threads(void *(*fn)(void *), int shift)
{
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, fn, thread_blocks[(i + shift) % THREADS]);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
}

static int thread_lines_are(long long k, long long per)
{
	long long aligned = THREADS * PER_THREAD / ALIGNED_EVERY;
	long long small = THREADS * PER_THREAD - aligned;
	struct site_counts a = site_lookup(__FILE__, thread_aligned_at, "make_blocks");
	struct site_counts m = site_lookup(__FILE__, thread_small_at, "make_blocks");
	int ok = a.bytes == k * per * aligned * 4096 &&
		 a.calls == (unsigned long long)(k * per * aligned) &&
		 m.bytes == k * per * small * 32 &&
		 m.calls == (unsigned long long)(k * per * small);
	if (!ok)
		printf("%s: threads' blocks: %lld bytes in %llu calls aligned, %lld in %llu small\n",
		       allocator, a.bytes, a.calls, m.bytes, m.calls);
	return ok;
}

static void check_page_starts_threads(long long k)
{
	in_threads(make_blocks, 0);
	check(thread_lines_are(k, 1), "after four threads allocated");
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		for (int t = 0; t < THREADS; t++)
			free_blocks(thread_blocks[t]);
		_exit(thread_lines_are(k, 0) ? 0 : 1);
	}
	int status = 0;
	check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "the forked child freeing them: status %#x", status);
	in_threads(free_blocks, 1);
	check(thread_lines_are(k, 0), "after other threads freed them");
}

/*
 * The set of page starts out of memory. This program's mmap() (exported, so that
 * the library's calls bind to it) fails the library's requests once asked to; the
 * set then cannot grow and says so. From then on, below a page start it does not
 * hold, the library asks the kernel whether it may read: the allocator's own blocks
 * at the start of a fresh mapping must still not be read below (SIGSEGV), and the
 * library's page-aligned blocks are still counted and uncounted exactly.
 */
static volatile int fail_library_mmap;
static uintptr_t library_lo, library_hi;

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	uintptr_t from = (uintptr_t)__builtin_return_address(0);
	if (fail_library_mmap && from >= library_lo && from < library_hi) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}

/* The bounds of the object that holds addr, from its loadable segments. */
static int find_object(struct dl_phdr_info *info, size_t size, void *addr)
{
	(void)size;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD) {
			uintptr_t start = info->dlpi_addr + info->dlpi_phdr[i].p_vaddr;
			lo = start < lo ? start : lo;
			hi = start + info->dlpi_phdr[i].p_memsz > hi ? start + info->dlpi_phdr[i].p_memsz
								      : hi;
		}
	if ((uintptr_t)addr < lo || (uintptr_t)addr >= hi)
		return 0;
	library_lo = lo;
	library_hi = hi;
	return 1;
}

enum { LOST_MAX = 1 << 16 };

static void check_page_starts_no_memory(long long k)
{
	dl_iterate_phdr(find_object, (void *)allocinfo_set_enabled);
	check(library_hi > library_lo, "liballocinfo's segments not found");
	int log = memfd_create("allocinfo-messages", 0);
	check(log >= 0, "memfd_create: %s", strerror(errno));
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(log, 2);
		/* The child's own store first: the library makes it on the first call. */
		free(malloc(1));
		struct stat st = { 0 };
		fstat(log, &st);
		off_t said = st.st_size;
		fail_library_mmap = 1;
		static void *blocks[LOST_MAX];
		int n = 0, lost_at = 0;
		/* Until the set is full and cannot grow: its message is the sign. */
		while (n < LOST_MAX && (n % 256 || fstat(log, &st) || st.st_size == said)) {
			lost_at = __LINE__ + 1;
			blocks[n] = aligned_alloc(4096, 4096);
			check(blocks[n] != NULL, "aligned_alloc(4096, 4096) number %d", n);
			n++;
		}
		check(st.st_size > said, "%d page-aligned blocks and the set never ran out", n);
		measure_and_free_own_blocks(direct_malloc());
		struct site_counts c = site_lookup(__FILE__, lost_at, "check_page_starts_no_memory");
		check((c.found || !k) && c.bytes == k * 4096 * n && c.calls == (unsigned long long)(k * n),
		      "%d page-aligned blocks, some not noted: %lld bytes in %llu calls", n,
		      c.bytes, c.calls);
		int grown_at = __LINE__ + 2;
		for (int i = 0; i < n; i += 2)
			blocks[i] = realloc(blocks[i], 5000);
		c = site_lookup(__FILE__, grown_at, "check_page_starts_no_memory");
		check((c.found || !k) && c.bytes == k * 5000 * ((n + 1) / 2) &&
		      c.calls == (unsigned long long)(k * ((n + 1) / 2)),
		      "half of them resized: %lld bytes in %llu calls", c.bytes, c.calls);
		for (int i = 0; i < n; i++)
			free(blocks[i]);
		int lines[] = { lost_at, grown_at };
		for (int i = 0; i < 2; i++) {
			c = site_lookup(__FILE__, lines[i], "check_page_starts_no_memory");
			check(c.bytes == 0 && c.calls == 0, "line %d, freed: %lld bytes in %llu calls",
			      lines[i], c.bytes, c.calls);
		}
		fflush(stdout);
		_exit(failures ? 1 : 0);
	}
	int status = 0;
	check(pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	      WEXITSTATUS(status) == 0, "the child whose set ran out: status %#x", status);
	char text[4096] = "";
	ssize_t got = pread(log, text, sizeof(text) - 1, 0);
	text[got > 0 ? got : 0] = '\0';
	check(strstr(text, "allocinfo: no memory to note a block that starts a page") != NULL,
	      "the child said: \"%s\"", text);
	close(log);
}

/*
 * ALLOCINFO=never over another allocator: blocks carry no record, and free() must not
 * take what the program wrote below a block for one. A block's lower neighbour ends
 * in a forged record (the plain magic, or the one of another allocator's counted
 * block, with a size and counter that fit); the block is measured, resized and freed
 * as the allocator's own, at its own address: were the record believed, the
 * allocator would be handed a pointer 16 bytes lower, inside the live neighbour, and
 * hand out that memory again.
 */
enum { NEIGHBOURS = 64, REUSE = 4096, NEIGHBOUR_SIZE = 48 };

static void check_forged_neighbour(unsigned int meta)
{
	size_t size = allocator_class(NEIGHBOUR_SIZE);
	char *blocks[NEIGHBOURS], *lower = NULL, *upper = NULL;
	for (int i = 0; i < NEIGHBOURS; i++)
		blocks[i] = malloc(NEIGHBOUR_SIZE);
	for (int i = 0; i < NEIGHBOURS && !upper; i++)
		for (int j = 0; j < NEIGHBOURS && !upper; j++)
			if (blocks[j] == blocks[i] + size && (uintptr_t)blocks[j] % 4096) {
				lower = blocks[i];
				upper = blocks[j];
			}
	check(upper != NULL, "no two neighbouring blocks of %zu bytes: the case is not tried",
	      size);
	if (upper) {
		/* A size below the block's: believed, it would shrink the usable size. */
		struct { unsigned long long size; unsigned int counter, meta; } forged = {
			NEIGHBOUR_SIZE / 2, 16, meta
		};
		/* Written as the neighbour's own last bytes, and kept: the compiler may
		 * not drop them as stores into a block about to be freed. */
		memcpy(lower + size - sizeof(forged), &forged, sizeof(forged));
		__asm__ volatile("" : : "r"(lower) : "memory");
		/* Measured and resized as the allocator's own block, not as a record's. */
		check(malloc_usable_size(upper) == allocator_usable(upper),
		      "meta %#x below a block: malloc_usable_size %zu, not the allocator's %zu",
		      meta, malloc_usable_size(upper), allocator_usable(upper));
		memset(upper, 0x5a, NEIGHBOUR_SIZE);
		char *resized = realloc(upper, NEIGHBOUR_SIZE);
		check(resized == upper && resized[NEIGHBOUR_SIZE - 1] == 0x5a,
		      "meta %#x below a block: realloc to its size moved it to %p, not %p",
		      meta, (void *)resized, (void *)upper);
		upper = resized;
		free(upper);
		static char *again[REUSE];
		int inside = 0;
		for (int i = 0; i < REUSE; i++) {
			again[i] = malloc(NEIGHBOUR_SIZE);
			inside += again[i] >= lower && again[i] < lower + size;
		}
		check(!inside, "meta %#x below a block: %d blocks handed out inside its live "
		      "neighbour", meta, inside);
		for (int i = 0; i < REUSE; i++)
			free(again[i]);
	}
	for (int i = 0; i < NEIGHBOURS; i++)
		if (blocks[i] != upper)
			free(blocks[i]);
}

/* ALLOCINFO_HEAP=own, where the allocator cannot say which pointers are its own:
 * 1,000 small counted blocks move its statistics by nearly nothing (they would move
 * by at least 64,000 bytes were they its blocks, its caches filled in batches or not). */
static void check_small_blocks_elsewhere(void)
{
	enum { N = 1000 };
	static void *blocks[N];
	long long before = allocator_bytes();
	for (int i = 0; i < N; i++)
		blocks[i] = malloc(64);
	long long moved = allocator_bytes() - before;
	if (before >= 0)
		check(moved < N * 64 / 4, "ALLOCINFO_HEAP=own: %s's allocated bytes moved by "
		      "%lld for %d small blocks", allocator, moved, N);
	for (int i = 0; i < N; i++)
		free(blocks[i]);
}

static int big_line, small_line, calloc_line, strdup_line, realloc_line, aligned_line, posix_line,
	memalign_line, cxx_line;

enum { BIG = 100000, NBIG = 16 };

int main(int argc, char **argv)
{
	allocator = argc > 1 ? argv[1] : "glibc";
	/* With ALLOCINFO=0 or never nothing is counted, and nothing must break. */
	const char *mode = getenv("ALLOCINFO");
	long long k = !mode || (strcmp(mode, "0") && strcmp(mode, "never"));
	int foreign = strcmp(allocator, "glibc") != 0;
	never = mode && !strcmp(mode, "never");
	if (never && foreign)
		record = 0;
	if (foreign && strcmp(allocator, "glibc-debug"))
		symbol(!strcmp(allocator, "jemalloc") ? "mallctl"
		       : !strcmp(allocator, "tcmalloc") ? "tc_malloc_size"
		       : !strcmp(allocator, "selfcall") ? "self_calling_bytes" : "mi_usable_size");

	check_references();

	/* Large blocks: the allocator's statistics move by exactly its size class of
	 * each block with its record, and back. */
	long long before = allocator_bytes();
	void *big[NBIG];
	for (int i = 0; i < NBIG; i++) {
		big_line = __LINE__ + 1;
		big[i] = malloc(BIG);
		check(big[i] != NULL, "malloc(%d) failed", BIG);
		memset(big[i], i, BIG);
	}
	long long after = allocator_bytes();
	if (before >= 0)
		check(after - before == (long long)(NBIG * allocator_class(BIG + record)),
		      "%s's allocated bytes moved by %lld, not %d blocks of %zu",
		      allocator, after - before, NBIG, allocator_class(BIG + record));
	for (int i = 0; i < NBIG; i++) {
		size_t usable = malloc_usable_size(big[i]);
		check(usable >= BIG, "malloc_usable_size %zu < %d", usable, BIG);
		if (allocator_class(1))
			check(usable + record == allocator_usable((char *)big[i] - record),
			      "malloc_usable_size %zu is not the allocator's %zu less the record",
			      usable, allocator_usable((char *)big[i] - record));
		memset(big[i], 0xff, usable);	/* all of it is the caller's */
	}
	{
		struct site_counts c = site_lookup(__FILE__, big_line, "main");
		check((c.found || !k) && c.bytes == k * NBIG * BIG &&
		      c.calls == (unsigned long long)(k * NBIG),
		      "big blocks: %lld bytes in %llu calls", c.bytes, c.calls);
	}
	long long held = allocator_bytes();
	for (int i = 0; i < NBIG / 2; i++)
		free(big[i]);
	if (before >= 0)
		check(held - allocator_bytes() ==
		      (long long)(NBIG / 2 * allocator_class(BIG + record)),
		      "%s's allocated bytes fell by %lld, not %d blocks of %zu", allocator,
		      held - allocator_bytes(), NBIG / 2, allocator_class(BIG + record));
	{
		struct site_counts c = site_lookup(__FILE__, big_line, "main");
		check(c.bytes == k * NBIG / 2 * BIG &&
		      c.calls == (unsigned long long)(k * NBIG / 2),
		      "after free: %lld bytes in %llu calls", c.bytes, c.calls);
	}
	for (int i = NBIG / 2; i < NBIG; i++)
		free(big[i]);

	/* A small block: the allocator's, unless the library's own heap was asked for
	 * (UNDERNEATH_OWN_HEAP, with mimalloc, which tells any pointer apart). */
	small_line = __LINE__ + 1;
	char *small = malloc(64);
	memset(small, 7, 64);
	{
		struct site_counts c = site_lookup(__FILE__, small_line, "main");
		check((c.found || !k) && c.bytes == k * 64 && c.calls == (unsigned long long)k,
		      "small block: %lld bytes in %llu calls", c.bytes, c.calls);
	}
	if (getenv("UNDERNEATH_OWN_HEAP")) {
		int owns = allocator_owns(small);
		if (owns >= 0)
			check(!owns, "ALLOCINFO_HEAP=own: the small block is %s's", allocator);
		else
			check_small_blocks_elsewhere();
	} else if (allocator_class(1)) {
		check(malloc_usable_size(small) + record == allocator_usable(small - record),
		      "the small block is not %s's: usable %zu", allocator,
		      malloc_usable_size(small));
	}
	free(small);

	/* Every other form, small and large, each at its own site. */
	calloc_line = __LINE__ + 1;
	unsigned char *z = calloc(10, 3000);
	int zero = 1;
	for (int i = 0; i < 30000; i++)
		zero &= z[i] == 0;
	check(zero, "calloc's block is not zeroed");
	char text[3000];
	memset(text, 'x', sizeof(text) - 1);
	text[sizeof(text) - 1] = '\0';
	strdup_line = __LINE__ + 1;
	char *s = strdup(text);
	check(s && !strcmp(s, text), "strdup");
	realloc_line = __LINE__ + 1;
	char *r = realloc(NULL, 24);
	strcpy(r, "kept across realloc");
	for (size_t n = 100; n <= 200000; n *= 3) {
		realloc_line = __LINE__ + 1;
		r = realloc(r, n);
		check(r && !strcmp(r, "kept across realloc"), "realloc to %zu", n);
	}
	aligned_line = __LINE__ + 1;
	void *a = aligned_alloc(64, 6400);
	check(a && (uintptr_t)a % 64 == 0, "aligned_alloc(64): %p", a);
	void *pm = NULL;
	posix_line = __LINE__ + 1;
	int err = posix_memalign(&pm, 4096, 5000);
	check(!err && (uintptr_t)pm % 4096 == 0, "posix_memalign(4096): %d %p", err, pm);
	memalign_line = __LINE__ + 1;
	void *m = memalign(256, 300);
	check(m && (uintptr_t)m % 256 == 0, "memalign(256): %p", m);
	check(malloc_usable_size(a) >= 6400 && malloc_usable_size(pm) >= 5000 &&
	      malloc_usable_size(m) >= 300, "usable sizes of aligned blocks %zu %zu %zu",
	      malloc_usable_size(a), malloc_usable_size(pm), malloc_usable_size(m));
	memset(a, 1, malloc_usable_size(a));
	memset(pm, 1, malloc_usable_size(pm));
	memset(m, 1, malloc_usable_size(m));

	struct { int *line; long long bytes; } sites[] = {
		{ &calloc_line, 30000 }, { &strdup_line, 3000 }, { &realloc_line, 72900 },
		{ &aligned_line, 6400 }, { &posix_line, 5000 }, { &memalign_line, 300 },
	};
	for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
		struct site_counts c = site_lookup(__FILE__, *sites[i].line, "main");
		check((c.found || !k) && c.bytes == k * sites[i].bytes && c.calls == (unsigned long long)k,
		      "line %d: %lld bytes in %llu calls, not %lld in %lld", *sites[i].line,
		      c.bytes, c.calls, k * sites[i].bytes, k);
	}
	free(z);
	free(s);
	free(r);
	free(a);
	free(pm);
	free(m);
	for (size_t i = 0; i < sizeof(sites) / sizeof(sites[0]); i++) {
		struct site_counts c = site_lookup(__FILE__, *sites[i].line, "main");
		check(c.bytes == 0 && c.calls == 0, "line %d after free: %lld bytes in %llu calls",
		      *sites[i].line, c.bytes, c.calls);
	}
	(void)cxx_line;

	/* The same calls without a tag (through pointers: no macro of the header's
	 * applies), charged to their callers' lines: calloc, then realloc of its block. */
	{
		void *(*volatile untagged_calloc)(size_t, size_t) = calloc;
		void *(*volatile untagged_realloc)(void *, size_t) = realloc;
		int calloc_at = __LINE__ + 1;
		unsigned char *u = untagged_calloc(100, 30);
		int zeroed = u != NULL;
		for (int i = 0; zeroed && i < 3000; i++)
			zeroed = u[i] == 0;
		check(zeroed, "untagged calloc's block is not zeroed");
		struct site_counts c = site_lookup(__FILE__, calloc_at, NULL);
		check((c.found || !k) && c.bytes == k * 3000 && c.calls == (unsigned long long)k,
		      "untagged calloc: %lld bytes in %llu calls", c.bytes, c.calls);
		int realloc_at = __LINE__ + 1;
		u = untagged_realloc(u, 5000);
		check(u && u[2999] == 0, "untagged realloc lost the block's contents");
		c = site_lookup(__FILE__, realloc_at, NULL);
		check((c.found || !k) && c.bytes == k * 5000 && c.calls == (unsigned long long)k,
		      "untagged realloc: %lld bytes in %llu calls", c.bytes, c.calls);
		c = site_lookup(__FILE__, calloc_at, NULL);
		check(c.bytes == 0 && c.calls == 0,
		      "calloc's line after realloc: %lld bytes in %llu calls", c.bytes, c.calls);
		free(u);
		c = site_lookup(__FILE__, realloc_at, NULL);
		check(c.bytes == 0 && c.calls == 0,
		      "untagged realloc, freed: %lld bytes in %llu calls", c.bytes, c.calls);
	}

	/* Counting switched off and on at run time: a block made while off is not
	 * counted, one made before is uncounted when freed while off, and each goes back
	 * to the allocator that made it. */
	if (k) {
		int on_line = __LINE__ + 1;
		void *before_off = malloc(1500);
		allocinfo_set_enabled(0);
		int off_line = __LINE__ + 1;
		void *while_off = malloc(2500);
		free(before_off);
		struct site_counts c = site_lookup(__FILE__, on_line, "main");
		check(c.bytes == 0 && c.calls == 0, "freed while off: %lld bytes in %llu calls",
		      c.bytes, c.calls);
		allocinfo_set_enabled(1);
		c = site_lookup(__FILE__, off_line, "main");
		check(!c.found || (c.bytes == 0 && c.calls == 0),
		      "made while off: %lld bytes in %llu calls", c.bytes, c.calls);
		int again_line = __LINE__ + 1;
		void *again = malloc(3500);
		c = site_lookup(__FILE__, again_line, "main");
		check(c.bytes == 3500 && c.calls == 1, "on again: %lld bytes in %llu calls",
		      c.bytes, c.calls);
		/* Resized now: counted at the realloc's line, as a new block. */
		int resized_line = __LINE__ + 1;
		while_off = realloc(while_off, 2600);
		c = site_lookup(__FILE__, resized_line, "main");
		check(c.bytes == 2600 && c.calls == 1,
		      "made while off, resized: %lld bytes in %llu calls", c.bytes, c.calls);
		free(while_off);
		c = site_lookup(__FILE__, resized_line, "main");
		check(c.bytes == 0 && c.calls == 0, "resized, freed: %lld bytes in %llu calls",
		      c.bytes, c.calls);
		/* realloc to 0 frees, as glibc's does, and uncounts the block. */
		void *gone = realloc(again, 0);
		check(gone == NULL, "realloc(p, 0) returned %p", gone);
		c = site_lookup(__FILE__, again_line, "main");
		check(c.bytes == 0 && c.calls == 0, "on again, freed: %lld bytes in %llu calls",
		      c.bytes, c.calls);
	}

	check_page_starts(k);
	check_page_starts_threads(k);
	if (!never && allocator_class(1))
		check_page_starts_no_memory(k);
	/* Not over selfcall, whose blocks lie apart (a header, glibc's chunk). */
	if (never && foreign && allocator_class(1) && strcmp(allocator, "selfcall")) {
		check_forged_neighbour(ALLOCINFO__MAGIC_V1);
		check_forged_neighbour(ALLOCINFO__MAGIC_V1 | 0x20);	/* RECORD_F_FOREIGN */
	}

	/* A library loaded now, built without the header: once any call reaches the
	 * library, the new object's calls are routed too, and blocks cross freely. */
	if (argc > 2) {
		void *h = dlopen(argv[2], RTLD_NOW);
		check(h != NULL, "dlopen(%s): %s", argv[2], dlerror());
		if (!h)
			return 1;
		void *(*plain_alloc)(size_t) = (void *(*)(size_t))dlsym(h, "plain_alloc");
		void (*plain_free)(void *) = (void (*)(void *))dlsym(h, "plain_free");
		const int *plain_line = (const int *)dlsym(h, "plain_alloc_line");
		void *ours = malloc(2000);		/* also routes the new object */
		void *theirs = plain_alloc(3000);
		struct site_counts c = site_lookup("plain.c", *plain_line, NULL);
		check((c.found || !k) && c.bytes == k * 3000 && c.calls == (unsigned long long)k,
		      "the loaded library's block: %lld bytes in %llu calls", c.bytes, c.calls);
		plain_free(ours);
		free(theirs);
		c = site_lookup("plain.c", *plain_line, NULL);
		check(c.bytes == 0 && c.calls == 0, "after free: %lld bytes in %llu calls",
		      c.bytes, c.calls);
		dlclose(h);
		/* After dlclose, routing goes on for what is loaded next. */
		h = dlopen(argv[2], RTLD_NOW);
		plain_alloc = (void *(*)(size_t))dlsym(h, "plain_alloc");
		plain_free = (void (*)(void *))dlsym(h, "plain_free");
		ours = malloc(500);
		theirs = plain_alloc(700);
		plain_free(ours);
		free(theirs);
		dlclose(h);
	}
	if (failures) {
		printf("%s", site_report_text());
		return 1;
	}
	printf("ok\n");
	return 0;
}
