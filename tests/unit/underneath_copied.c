/* SPDX-License-Identifier: MIT */
/*
 * A program built with allocinfo.h over another allocator, using a library's copies of
 * the allocator's functions (copied_pointers.c: lib_free, lib_malloc, lib_realloc,
 * lib_hooks), which this executable holds, copied by the loader from the library
 * before the library started. Blocks the program made, with a record in front, are
 * freed through them, by the program and by the library; blocks made through them
 * are freed by the program. Under an allocator that comes first, a copy left pointing
 * at the allocator's free handed it pointers 16 bytes into its blocks (a crash, or a
 * corrupted heap). Every site's count is checked exactly; prints "ok" and exits 0.
 */
#include <allocinfo.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "site_report.h"

extern void (*lib_free)(void *);
extern void *(*lib_malloc)(size_t);
extern void *(*lib_realloc)(void *, size_t);
extern struct lib_hooks {
	int version;
	void *(*alloc)(size_t);
	void (*release)(void *);
} lib_hooks;
void lib_release(void *p);
void lib_release_hooked(void *p);

enum { ROUNDS = 2000, HELD = 10 };
static int failures;

/* A site's count; a caller tag with nothing live may be left out of the report. */
static void expect(const char *what, int line, long long bytes, unsigned long long calls)
{
	struct site_counts c = site_lookup(__FILE__, line, NULL);
	if (!c.found && !bytes && !calls)
		return;
	if (!c.found || c.bytes != bytes || c.calls != calls) {
		printf("%s (line %d): %lld bytes in %llu calls, want %lld in %llu\n", what, line,
		       c.found ? c.bytes : -1, c.found ? c.calls : 0, bytes, calls);
		failures++;
	}
}

int main(void)
{
	void *made[HELD], *copied[HELD], *grown[HELD], *hooked[HELD];
	int made_line = 0, copied_line = 0, grown_line = 0, hooked_line = 0;
	for (int i = 0; i < ROUNDS; i++) {
		char *p = malloc(24 + i % 100); made_line = __LINE__;
		memset(p, 1, 24 + i % 100);
		switch (i % 4) {
		case 0: lib_free(p); break;
		case 1: lib_hooks.release(p); break;
		case 2: lib_release(p); break;
		default: lib_release_hooked(p); break;
		}
		char *q = lib_malloc(56); copied_line = __LINE__;
		memset(q, 2, 56);
		q = lib_realloc(q, 200); grown_line = __LINE__;
		memset(q, 3, 200);
		free(q);
		void *r = lib_hooks.alloc(72); hooked_line = __LINE__;
		memset(r, 4, 72);
		lib_free(r);
	}
	expect("made, freed through the copies", made_line, 0, 0);
	expect("made through lib_malloc, grown, freed", copied_line, 0, 0);
	expect("grown through lib_realloc, freed", grown_line, 0, 0);
	expect("made through lib_hooks.alloc, freed", hooked_line, 0, 0);
	int held_made = 0, held_copied = 0, held_grown = 0, held_hooked = 0;
	for (int i = 0; i < HELD; i++) {
		made[i] = malloc(100); held_made = __LINE__;
		copied[i] = lib_malloc(110); held_copied = __LINE__;
		grown[i] = lib_realloc(lib_realloc(NULL, 120), 130); held_grown = __LINE__;
		hooked[i] = lib_hooks.alloc(140); held_hooked = __LINE__;
	}
	expect("made", held_made, 100 * HELD, HELD);
	expect("made through lib_malloc", held_copied, 110 * HELD, HELD);
	expect("made and grown through lib_realloc", held_grown, 130 * HELD, HELD);
	expect("made through lib_hooks.alloc", held_hooked, 140 * HELD, HELD);
	for (int i = 0; i < HELD; i++) {
		lib_release(made[i]);
		lib_release_hooked(copied[i]);
		lib_free(grown[i]);
		lib_hooks.release(hooked[i]);
	}
	expect("made, freed by the library", held_made, 0, 0);
	expect("made through lib_malloc, freed by the library", held_copied, 0, 0);
	expect("grown through lib_realloc, freed", held_grown, 0, 0);
	expect("made through lib_hooks.alloc, freed", held_hooked, 0, 0);
	if (failures) {
		printf("%s", site_report_text());
		return 1;
	}
	puts("ok");
	return 0;
}
