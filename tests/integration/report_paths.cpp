// SPDX-License-Identifier: MIT
// The subject of report_paths.sh: one file with both kinds of tag, a tagged malloc
// (its name from __FILE__) and new-expressions (caller tags, named from debug info),
// in a template, a lambda and a constructor (named by its scopes: no linkage name).
// Prints its own report, then, with "wait", says "ready" and waits for its standard
// input to close. Lines are pinned.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
template <typename T> struct box {
	__attribute__((noinline)) static T *make() { return new T(3); } /* line 12 */
};
namespace shapes { struct grid { grid() { cells = new int[4]; } int *cells; }; } /* line 14 */
void *keep[5];

int main(int argc, char **argv)
{
	keep[0] = malloc(100); static_assert(__LINE__ == 19, "LINE_MALLOC");
	keep[1] = new long(1); static_assert(__LINE__ == 20, "LINE_NEW");
	keep[2] = box<long>::make();
	auto lambda = []() __attribute__((noinline)) { return new char[5]; }; /* line 22 */
	keep[3] = lambda(); static shapes::grid g; keep[4] = g.cells;
	allocinfo_print(1);
	if (argc > 1 && !strcmp(argv[1], "wait")) {
		char c;
		printf("ready %d\n", (int)getpid());
		fflush(stdout);
		while (read(0, &c, 1) > 0)
			;
	}
	return 0;
}
