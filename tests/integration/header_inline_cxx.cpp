// SPDX-License-Identifier: MIT
// Tagged calls in every kind of C++ function in one file (g++ once refused an inline
// function's tag beside an ordinary function's: "section type conflict"). Prints the
// report; header_cxx.sh checks each line (its numbers are this file's).
#include <cstdlib>
#include <cstring>
#include <allocinfo.h>

struct holder {
	void *get(size_t n) { return malloc(n); }	// inline member
};
template <class T> T *make_zeroed() { return static_cast<T *>(calloc(4, sizeof(T))); }
static void *internal(size_t n) { return malloc(n); }
void *external(size_t n);
void *external(size_t n) { return std::malloc(n); }
inline char *copy(const char *s) { return strdup(s); }
namespace {
void *anonymous(size_t n) { return ::malloc(n); }
}

int main(int argc, char **argv)
{
	(void)argv;
	size_t big = 2000 + static_cast<size_t>(argc) - 1;
	holder h;
	auto lambda = [](size_t n) { return malloc(n); };
	void *keep[7] = {
		h.get(big), make_zeroed<double>(), internal(40), external(big + 1),
		copy("abc"), anonymous(24), lambda(big + 2),
	};
	allocinfo_print(1);
	for (void *p : keep)
		free(p);
	return 0;
}
