/* SPDX-License-Identifier: MIT */
/*
 * Memory overhead: COUNT live allocations of SIZE bytes, measured as resident memory
 * (/proc/self/statm) and as the allocator's own count of bytes in use (mallinfo2),
 * each per allocation. Usage: memory SIZE COUNT.
 */
#include "bench.h"

#include <malloc.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long resident_bytes(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (!f || fscanf(f, "%ld %ld", &pages, &resident) != 2)
		abort();
	fclose(f);
	return resident * sysconf(_SC_PAGESIZE);
}

int main(int argc, char **argv)
{
	size_t size = bench_arg(argc, argv, 1, 32);
	size_t count = bench_arg(argc, argv, 2, 1000000);
	/* The pointer array is mapped, not allocated, and touched before the first
	 * reading, so that only the blocks are measured. */
	void **blocks = mmap(NULL, count * sizeof(void *), PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (blocks == MAP_FAILED)
		abort();
	memset(blocks, 0, count * sizeof(void *));
	free(malloc(size));	/* the library's start-up, and the first arena */

	long rss0 = resident_bytes();
	size_t heap0 = mallinfo2().uordblks;
	for (size_t i = 0; i < count; i++) {
		blocks[i] = malloc(size);
		memset(blocks[i], 1, size);
	}
	long rss1 = resident_bytes();
	size_t heap1 = mallinfo2().uordblks;

	printf("rss_bytes_per_alloc=%.2f heap_bytes_per_alloc=%.2f count=%zu size=%zu\n",
	       (double)(rss1 - rss0) / (double)count, (double)(heap1 - heap0) / (double)count,
	       count, size);
	for (size_t i = 0; i < count; i++)
		free(blocks[i]);
	return 0;
}
