/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU counter updates without a lock-prefixed instruction.
 *
 * On x86-64 with glibc's restartable sequence registered (glibc 2.35+), the update
 * is a restartable sequence: read this CPU's number, load its {bytes, calls} pair,
 * add, and store the pair back with one 16-byte store that commits the sequence.
 * If the thread is preempted, migrated or signalled before the store, the kernel
 * restarts the sequence from the top, so no other thread on that CPU can interleave
 * and nothing is counted twice.
 *
 * Where rseq is not registered (valgrind, old kernels, glibc.pthread.rseq=0) the
 * CPU number reads as -1 or -2, the range check fails and the update falls back to
 * atomic adds on a per-thread shard.
 */
#ifndef ALLOCINFO_PERCPU_H
#define ALLOCINFO_PERCPU_H

#include "internal.h"

namespace allocinfo {

void counter_add_fallback(uint32_t slot, int64_t bytes, int64_t calls) HIDDEN;

#if defined(__x86_64__) && !defined(ALLOCINFO_NO_RSEQ)

typedef long long v2di __attribute__((vector_size(16)));

/* Offsets in struct rseq (uapi/linux/rseq.h): cpu_id at 4, rseq_cs at 8. */
#define ALLOCINFO_RSEQ_SIG 0x53053053

static inline __attribute__((always_inline)) void
counter_add(uint32_t slot, int64_t bytes, int64_t calls)
{
	char *slot_base = g_fast.counters + ((uintptr_t)slot << 4);
	v2di delta = { bytes, calls };

	asm goto(
		".pushsection __rseq_cs, \"aw\"\n\t"
		".balign 32\n\t"
		"3:\n\t"
		".long 0x0, 0x0\n\t"			/* version, flags */
		".quad 1f, (2f - 1f), 4f\n\t"		/* start, post-commit offset, abort */
		".popsection\n\t"
		"6:\n\t"
		"leaq 3b(%%rip), %%rax\n\t"
		"movq %%rax, %%fs:8(%[rs])\n\t"		/* arm: rseq->rseq_cs = &descriptor */
		"1:\n\t"
		"movl %%fs:4(%[rs]), %%eax\n\t"		/* rseq->cpu_id */
		"cmpl %[ncpu], %%eax\n\t"
		"jae %l[fallback]\n\t"
		"shlq %%cl, %%rax\n\t"
		"addq %[base], %%rax\n\t"
		"movdqu (%%rax), %%xmm0\n\t"
		"paddq %[delta], %%xmm0\n\t"
		"movdqu %%xmm0, (%%rax)\n\t"		/* the commit */
		"2:\n\t"
		".pushsection __rseq_failure, \"ax\"\n\t"
		".byte 0x0f, 0xb9, 0x3d\n\t"		/* ud1: the signature is its operand */
		".long %c[sig]\n\t"
		"4:\n\t"
		"jmp 6b\n\t"
		".popsection\n\t"
		:
		: [rs] "r" (g_fast.rseq_offset), [ncpu] "r" (g_fast.rseq_cpus),
		  [shift] "c" (g_fast.cpu_shift), [base] "r" (slot_base),
		  [delta] "x" (delta), [sig] "i" (ALLOCINFO_RSEQ_SIG)
		: "rax", "xmm0", "memory", "cc"
		: fallback);
	return;
fallback:
	counter_add_fallback(slot, bytes, calls);
}

#else

static inline void counter_add(uint32_t slot, int64_t bytes, int64_t calls)
{
	counter_add_fallback(slot, bytes, calls);
}

#endif

} /* namespace allocinfo */

#endif /* ALLOCINFO_PERCPU_H */
