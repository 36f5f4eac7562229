// SPDX-License-Identifier: MIT
//
// A C++ program's blocks given back by the wrong function, for AddressSanitizer's
// alloc-dealloc-mismatch check (sanitizers.sh): new[] by delete, new by free, malloc
// by delete, new by delete[]. Each report must name both lines marked with the mode's
// name. Without a mode every block goes back as it came, in each form (nothrow,
// aligned, sized, and the malloc family's), and the program runs clean.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>
#include <vector>

struct alignas(64) wide {
	char bytes[64];
};

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	std::vector<std::string> strings;
	for (int i = 0; i < 100; i++)
		strings.push_back(std::string(100, 'x'));
	if (!strcmp(what, "array")) {
		int *p = new int[4];			// array
		delete p;				// array
	} else if (!strcmp(what, "new-free")) {
		int *p = new int;			// new-free
		free(p);				// new-free
	} else if (!strcmp(what, "malloc-delete")) {
		int *p = static_cast<int *>(malloc(sizeof(int)));	// malloc-delete
		delete p;				// malloc-delete
	} else if (!strcmp(what, "new-array-delete")) {
		int *p = new int;			// new-array-delete
		delete[] p;				// new-array-delete
	} else {
		delete[] new int[4];
		delete new int;
		delete[] new (std::nothrow) int[3];
		delete new (std::nothrow) int;
		delete new wide;
		delete[] new wide[3];
		free(malloc(10));
		free(calloc(2, 8));
		free(realloc(malloc(8), 64));
		free(strdup("x"));
#ifdef __cpp_sized_deallocation
		::operator delete(::operator new(24), 24);
#endif
	}
	std::puts("done");
	return 0;
}
