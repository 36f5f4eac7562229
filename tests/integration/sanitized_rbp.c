/* SPDX-License-Identifier: MIT */
/*
 * Code built without frame pointers keeps anything in rbp, often the address of one
 * of its own variables. A sanitizer's fast unwinder, recording where a block was made
 * or freed, follows the frame chain from the allocator out through rbp, and reads
 * that variable and the word after it as a frame. Here each call is made with rbp
 * pointing at such a "frame" whose return address is a different word each time,
 * not code (sanitizers.sh):
 *   leak N   N blocks made at one line and leaked: one stack, one leak record;
 *   churn N  N blocks made and freed: a handful of stacks in the sanitizer's depot.
 * x86-64 only (the call with a chosen rbp is written in assembly).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* fn(arg) with rbp = frame, from a function with no frame record of its own. */
uintptr_t call_with_rbp(uintptr_t (*fn)(uintptr_t), uintptr_t arg, uintptr_t *frame);
__asm__(".text\n"
	".globl call_with_rbp\n"
	".type call_with_rbp, @function\n"
	"call_with_rbp:\n"
	"	push %rbp\n"
	"	mov %rdx, %rbp\n"
	"	mov %rdi, %rax\n"
	"	mov %rsi, %rdi\n"
	"	call *%rax\n"
	"	pop %rbp\n"
	"	ret\n"
	".size call_with_rbp, . - call_with_rbp\n");

/* Built without frame pointers: rbp reaches the allocator as call_with_rbp set it. */
__attribute__((noinline)) static uintptr_t make(uintptr_t n)
{
	return (uintptr_t)malloc(n);		/* made */
}

__attribute__((noinline)) static uintptr_t drop(uintptr_t p)
{
	free((void *)p);
	return 0;
}

/* A word that is no code: a page-aligned address far from any mapping. */
static uintptr_t not_code(long i)
{
	return (uintptr_t)0x7e0000000000 + (uintptr_t)i * 4096;
}

int main(int argc, char **argv)
{
	const char *what = argc > 1 ? argv[1] : "";
	long n = argc > 2 ? atol(argv[2]) : 3;
	_Alignas(16) uintptr_t frame[2];
	static void *volatile leaked;
	for (long i = 0; i < n; i++) {
		frame[0] = 0;
		frame[1] = not_code(i);
		uintptr_t p = call_with_rbp(make, 40, frame);
		if (!p)
			return 1;
		memset((void *)p, 0, 40);
		if (!strcmp(what, "leak")) {
			leaked = (void *)p;
			leaked = NULL;
			continue;
		}
		frame[1] = not_code(n + i);
		call_with_rbp(drop, p, frame);
	}
	puts("ok");
	return 0;
}
