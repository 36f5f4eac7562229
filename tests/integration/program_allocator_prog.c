/* SPDX-License-Identifier: MIT */
/*
 * A program whose malloc and free are built into the executable: an allocator of its
 * own (below), or with -DNO_OWN_MALLOC one linked statically (libjemalloc.a,
 * libtcmalloc_minimal.a), or none (then the process's, under a preloaded wrapper). Its own calls of free are bound inside it, where the
 * library cannot route them, so every block that reaches them must be the
 * allocator's own: libc's blocks for it (strdup, realpath, asprintf, getline,
 * open_memstream) as well as its own.
 *
 * Prints "ok" and exits 0 when each block libc made is the allocator's block of that
 * size (the same usable size as a malloc() of it) and, with its own allocator, when
 * every block it handed out was freed and nothing else was; its free() ends the
 * program (exit 3) at the first pointer it did not hand out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef NO_OWN_MALLOC
#include <sys/mman.h>

/* A bump allocator: each block has its size and a mark in the 16 bytes before it. */
static const uint64_t MARK = 0x6f776e2d6d616c6cull;
static char *arena, *arena_top, *arena_end;
static long handed_out, taken_back;

static void refuse(const char *what)
{
	static const char msg[] = "program_allocator_prog: a pointer not mine given to ";
	if (write(2, msg, sizeof(msg) - 1) < 0 || write(2, what, strlen(what)) < 0 ||
	    write(2, "\n", 1) < 0)
		_exit(4);
	_exit(3);
}

static void *bump(size_t n, size_t align)
{
	if (!arena) {
		arena = mmap(NULL, 1 << 28, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (arena == MAP_FAILED)
			_exit(5);
		arena_top = arena;
		arena_end = arena + (1 << 28);
	}
	if (align < 16)
		align = 16;
	uintptr_t p = ((uintptr_t)arena_top + 16 + align - 1) & ~(uintptr_t)(align - 1);
	if (n > (uintptr_t)arena_end - p) {
		errno = ENOMEM;
		return NULL;
	}
	((uint64_t *)p)[-2] = MARK;
	((uint64_t *)p)[-1] = n;
	arena_top = (char *)(p + n);
	handed_out++;
	return (void *)p;
}

static size_t size_of(void *p, const char *what)
{
	if ((char *)p < arena + 16 || (char *)p >= arena_end || (uintptr_t)p % 16 ||
	    ((uint64_t *)p)[-2] != MARK)
		refuse(what);
	return ((uint64_t *)p)[-1];
}

void *malloc(size_t n) { return bump(n, 16); }

void free(void *p)
{
	if (!p)
		return;
	size_of(p, "free");
	((uint64_t *)p)[-2] = 0;	/* a second free is refused */
	taken_back++;
}

void *calloc(size_t count, size_t size)
{
	size_t n;
	if (__builtin_mul_overflow(count, size, &n)) {
		errno = ENOMEM;
		return NULL;
	}
	return bump(n, 16);	/* fresh mmap()ed memory is zero */
}

void *realloc(void *p, size_t n)
{
	if (!p)
		return bump(n, 16);
	size_t old = size_of(p, "realloc");
	void *q = bump(n, 16);
	if (q) {
		memcpy(q, p, old < n ? old : n);
		free(p);
	}
	return q;
}

int posix_memalign(void **out, size_t align, size_t n)
{
	void *p = bump(n, align);
	if (!p)
		return ENOMEM;
	*out = p;
	return 0;
}

void *aligned_alloc(size_t align, size_t n) { return bump(n, align); }
void *memalign(size_t align, size_t n) { return bump(n, align); }
size_t malloc_usable_size(void *p) { return p ? size_of(p, "malloc_usable_size") : 0; }
#endif

static int failures;

/* p, of n bytes, made by libc for the program: the allocator's block of that size. */
static void expect_plain(void *p, size_t n, const char *what)
{
	void *q = malloc(n);
	if (!p || !q) {
		printf("%s: no block\n", what);
		failures++;
	} else if (malloc_usable_size(p) != malloc_usable_size(q)) {
		printf("%s: %zu usable bytes, where malloc(%zu) has %zu\n", what,
		       malloc_usable_size(p), n, malloc_usable_size(q));
		failures++;
	}
	free(q);
	free(p);
}

int main(void)
{
#ifndef NO_OWN_MALLOC
	long out_before = handed_out, back_before = taken_back;
#endif
	/* The program's own blocks. */
	void *blocks[100];
	for (int i = 0; i < 100; i++) {
		blocks[i] = i % 3 ? malloc(24 + (size_t)i) : calloc(1, 24 + (size_t)i);
		memset(blocks[i], i, 24 + (size_t)i);
	}
	for (int i = 0; i < 100; i += 2)
		blocks[i] = realloc(blocks[i], 4000 + (size_t)i);
	void *aligned = NULL;
	if (posix_memalign(&aligned, 4096, 64))
		return 1;

	/* libc's blocks for it. */
	const char *text = "a string libc copies for the program";
	expect_plain(strdup(text), strlen(text) + 1, "strdup");
	expect_plain(strndup(text, 8), 9, "strndup");
	char *path = realpath("/", NULL);
	expect_plain(path, 2, "realpath");
	char *printed = NULL;
	int len = asprintf(&printed, "%d blocks", 100);
	if (len < 0)
		return 1;
	expect_plain(printed, (size_t)len + 1, "asprintf");
	char *buf = NULL;
	size_t size = 0;
	FILE *stream = open_memstream(&buf, &size);
	if (!stream)
		return 1;
	fputs(text, stream);
	fclose(stream);
	free(buf);	/* its size is the stream's to choose: freed, not compared */
	char *line = NULL;
	size_t cap = 0;
	FILE *in = fmemopen((void *)text, strlen(text), "r");
	if (!in || getline(&line, &cap, in) < 0)
		return 1;
	fclose(in);
	free(line);

	for (int i = 0; i < 100; i++)
		free(blocks[i]);
	free(aligned);
#ifndef NO_OWN_MALLOC
	long out = handed_out - out_before, back = taken_back - back_before;
	if (out != back) {
		printf("%ld blocks handed out, %ld taken back\n", out, back);
		failures++;
	}
#endif
	if (failures)
		return 1;
	printf("ok\n");
	return 0;
}
