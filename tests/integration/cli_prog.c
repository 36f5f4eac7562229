/* SPDX-License-Identifier: MIT */
/*
 * The instrumented program the allocinfo tests read: allocates known sizes at known
 * lines, says "ready <pid> <__FILE__>", then obeys one command per line of standard
 * input and acknowledges each with "ok <command>". Built twice: as cli_prog and,
 * with -DCLI_OTHER, as cli_other (same lines, another module).
 *
 * Only read(2) and write(2) do I/O, so that no allocation is made behind the
 * test's back. Each line the tests expect is pinned by a _Static_assert on it.
 *
 * Commands:
 *   grow      2 x malloc(1000) at LINE_GROW
 *   shrink    frees the strdup("hello") of LINE_STRDUP
 *   untagged  malloc(777) without a tag, from untagged_alloc() (a caller tag)
 *   exit      exit(0)
 */
#include <allocinfo.h>

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *keep[256];
static int nkeep;

static void say(const char *a, const char *b)
{
	char line[512];
	size_t n = 0, la = strlen(a), lb = strlen(b);

	if (la + lb + 2 > sizeof(line))
		_exit(3);
	memcpy(line, a, la);
	n = la;
	memcpy(line + n, b, lb);
	n += lb;
	line[n++] = '\n';
	if (write(1, line, n) != (ssize_t)n)
		_exit(3);
}

static void put(void *p)
{
	if (!p || nkeep == (int)(sizeof(keep) / sizeof(keep[0])))
		_exit(4);
	keep[nkeep++] = p;
}

static void *hello;

__attribute__((noinline)) static void initial(void)
{
	for (int i = 0; i < 3; i++) {
		put(malloc(100)); _Static_assert(__LINE__ == 54, "LINE_MALLOC");
	}
	put(calloc(4, 256)); _Static_assert(__LINE__ == 56, "LINE_CALLOC");
	hello = strdup("hello"); _Static_assert(__LINE__ == 57, "LINE_STRDUP");
}

__attribute__((noinline)) static void grow(void)
{
	for (int i = 0; i < 2; i++) {
		put(malloc(1000)); _Static_assert(__LINE__ == 63, "LINE_GROW");
	}
}

/* The parentheses keep the call out of the header's macro: no tag is current, so
 * the allocation is charged to a caller tag for the return address here. */
__attribute__((noinline)) static void untagged_alloc(void)
{
	put((malloc)(777)); _Static_assert(__LINE__ == 71, "LINE_UNTAGGED");
	__asm__ volatile("" ::: "memory");	/* no tail call */
}

int main(void)
{
	char buf[256], pid[32], *p;
	size_t used = 0;

	initial();
	p = pid + sizeof(pid) - 1;
	*p = '\0';
	for (unsigned v = (unsigned)getpid(); v || p == pid + sizeof(pid) - 1; v /= 10)
		*--p = (char)('0' + v % 10);
	say("ready ", p);
	say("file ", __FILE__);

	for (;;) {
		ssize_t n = read(0, buf + used, sizeof(buf) - 1 - used);
		if (n <= 0)
			return 0;
		used += (size_t)n;
		char *nl;
		while ((nl = memchr(buf, '\n', used))) {
			*nl = '\0';
			if (!strcmp(buf, "grow"))
				grow();
			else if (!strcmp(buf, "shrink")) {
				free(hello);
				hello = NULL;
			} else if (!strcmp(buf, "untagged"))
				untagged_alloc();
			else if (!strcmp(buf, "exit"))
				exit(0);
			else
				_exit(5);
			say("ok ", buf);
			used -= (size_t)(nl + 1 - buf);
			memmove(buf, nl + 1, used);
		}
		if (used == sizeof(buf) - 1)
			_exit(6);
	}
}
