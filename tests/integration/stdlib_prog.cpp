// SPDX-License-Identifier: MIT
/*
 * Allocations made by the standard libraries for their caller: std::vector growth,
 * std::string construction (libstdc++.so's code), strdup (the C library's). Built
 * at -O0 and -O2, with and without allocinfo.h; prints the lines, then its report.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <string>
#include <vector>

static std::vector<int> numbers;
static std::vector<std::string> names;

int main()
{
	int l_vector = __LINE__ + 2;
	for (int i = 0; i < 1000; i++)
		numbers.push_back(i);
	int l_string = __LINE__ + 1;
	std::string s(100, 'x');
	int l_copy = __LINE__ + 1;
	names.push_back(s);
	int l_strdup = __LINE__ + 1;
	char *d = strdup("hello");
	printf("lines vector=%d string=%d copy=%d strdup=%d\n", l_vector, l_string, l_copy,
	       l_strdup);
	fflush(stdout);
	auto print = (ssize_t (*)(int))dlsym(RTLD_DEFAULT, "allocinfo_print");
	if (print)
		print(STDOUT_FILENO);
	free(d);
	return 0;
}
