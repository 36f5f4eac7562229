/* SPDX-License-Identifier: MIT */
/*
 * A program built without allocinfo.h and linked with jemalloc, as a program that
 * chose jemalloc is. Run under LD_PRELOAD=liballocinfo.so, jemalloc must still serve
 * its blocks: it prints how far jemalloc's stats.allocated moved for 8 blocks of
 * 100000 bytes (and the size class of each block with its record), then the report
 * if the library is there (found with dlsym, as it is not linked).
 */
#include <dlfcn.h>
#include <jemalloc/jemalloc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static size_t allocated(void)
{
	uint64_t epoch = 1;
	size_t len = sizeof(epoch), bytes = 0;
	mallctl("epoch", &epoch, &len, &epoch, len);
	len = sizeof(bytes);
	mallctl("stats.allocated", &bytes, &len, NULL, 0);
	return bytes;
}

const int make_block_line = __LINE__ + 3;
__attribute__((noinline)) static void *make_block(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(void)
{
	void *keep[8];
	size_t before = allocated();
	for (int i = 0; i < 8; i++) {
		keep[i] = make_block(100000);
		memset(keep[i], i, 100000);
	}
	size_t after = allocated();
	printf("line %d\n", make_block_line);
	/* The program's nallocx answers for the library's blocks (routed): with the
	 * record, jemalloc's size class; dlsym's is jemalloc's own. */
	size_t (*own_nallocx)(size_t, int) =
		(size_t (*)(size_t, int))dlsym(RTLD_DEFAULT, "nallocx");
	printf("jemalloc %zu alone %zu recorded %zu\n", after - before, 8 * own_nallocx(100000, 0),
	       8 * (nallocx(100000, 0) + 16));
	fflush(stdout);
	ssize_t (*print)(int) = (ssize_t (*)(int))dlsym(RTLD_DEFAULT, "allocinfo_print");
	if (print)
		print(STDOUT_FILENO);
	for (int i = 0; i < 8; i++)
		free(keep[i]);
	return 0;
}
