// SPDX-License-Identifier: MIT
// Leaks of every kind of operator new, for LeakSanitizer (sanitizers.sh): each
// report's stack must get through the library to the line that leaked (those that end
// in the comment "leaks").
#include <new>
#include <vector>

struct alignas(64) aligned_block {
	char c[64];
};

__attribute__((noinline)) static void leak_all()
{
	new int(1);					// leaks
	new int[7];					// leaks
	new (std::nothrow) char[13];			// leaks
	new (std::nothrow) long;			// leaks
	new aligned_block;				// leaks
	new aligned_block[2];				// leaks
	new (std::nothrow) aligned_block;		// leaks
	new std::vector<long>(5);			// leaks
}

int main()
{
	leak_all();
	return 0;
}
