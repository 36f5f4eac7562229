/* SPDX-License-Identifier: MIT */
/*
 * A program built without allocinfo.h and without the library. Run under
 * LD_PRELOAD=liballocinfo.so, its allocations appear under caller tags; it prints the
 * report if the library is there (found with dlsym, as it is not linked).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

const int make_buffer_line = __LINE__ + 3;
__attribute__((noinline)) static char *make_buffer(size_t n)
{
	char *p = malloc(n);
	__asm__ volatile("" ::: "memory");
	return p;
}

int main(void)
{
	char *keep[3];
	for (int i = 0; i < 3; i++) {
		keep[i] = make_buffer(1000);
		memset(keep[i], i, 1000);
	}
	char *gone = make_buffer(5);
	free(gone);
	printf("line %d\n", make_buffer_line);
	fflush(stdout);
	ssize_t (*print)(int) = (ssize_t (*)(int))dlsym(RTLD_DEFAULT, "allocinfo_print");
	if (print)
		print(STDOUT_FILENO);
	for (int i = 0; i < 3; i++)
		free(keep[i]);
	return 0;
}
