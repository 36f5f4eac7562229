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
 * atomic adds on the store's last shard, which no CPU uses: plain rseq adds and
 * atomic adds never meet on the same counter.
 */
#ifndef ALLOCINFO_PERCPU_H
#define ALLOCINFO_PERCPU_H

#include "internal.h"

namespace allocinfo {

/*
 * The fallback: relaxed atomic adds on the shard reserved for threads without rseq.
 * Inline, so that a process without rseq pays no extra calls on top of the atomics.
 */
extern __thread uint32_t t_fallback_shard __attribute__((tls_model("initial-exec"))) HIDDEN;
uint32_t fallback_shard_init() HIDDEN;

static inline void counter_add_atomic(uint32_t slot, int64_t bytes, int64_t calls)
{
	uint32_t shard = t_fallback_shard;
	if (unlikely(!shard))
		shard = fallback_shard_init();
	auto *c = reinterpret_cast<allocinfo_counter *>(
		g_fast.counters + ((uint64_t)(shard - 1) << g_fast.cpu_shift) + ((uint64_t)slot << 4));
	__atomic_fetch_add(&c->bytes, bytes, __ATOMIC_RELAXED);
	__atomic_fetch_add(&c->calls, calls, __ATOMIC_RELAXED);
}

/* The same, out of line. */
void counter_add_fallback(uint32_t slot, int64_t bytes, int64_t calls) HIDDEN;

#if defined(__x86_64__) && !defined(ALLOCINFO_NO_RSEQ)

typedef long long v2di __attribute__((vector_size(16)));

/* Offsets in struct rseq (uapi/linux/rseq.h): cpu_id at 4, rseq_cs at 8. */
#define ALLOCINFO_RSEQ_SIG 0x53053053

/*
 * The sequence, applying `op` (paddq or psubq) to slot's {bytes, calls} on this CPU.
 * The CPU's array is found with one multiply by the stride, and the bounds check on
 * the CPU id uses g_fast in place: nothing is loaded that the sequence does not need.
 */
#define ALLOCINFO_PERCPU_ASM(op) \
	asm goto( \
		".pushsection __rseq_cs, \"aw\"\n\t" \
		".balign 32\n\t" \
		"3:\n\t" \
		".long 0x0, 0x0\n\t"			/* version, flags */ \
		".quad 1f, (2f - 1f), 4f\n\t"		/* start, post-commit offset, abort */ \
		".popsection\n\t" \
		"6:\n\t" \
		"leaq 3b(%%rip), %%rax\n\t" \
		"movq %%rax, %%fs:8(%[rs])\n\t"		/* arm: rseq->rseq_cs = &descriptor */ \
		"1:\n\t" \
		"movl %%fs:4(%[rs]), %%eax\n\t"		/* rseq->cpu_id */ \
		"cmpl %[ncpu], %%eax\n\t" \
		"jae %l[fallback]\n\t" \
		"imulq %[stride], %%rax\n\t" \
		"movdqu (%%rax,%[base]), %%xmm0\n\t" \
		op " %[delta], %%xmm0\n\t" \
		"movdqu %%xmm0, (%%rax,%[base])\n\t"	/* the commit */ \
		"2:\n\t" \
		".pushsection __rseq_failure, \"ax\"\n\t" \
		".byte 0x0f, 0xb9, 0x3d\n\t"		/* ud1: the signature is its operand */ \
		".long %c[sig]\n\t" \
		"4:\n\t" \
		"jmp 6b\n\t" \
		".popsection\n\t" \
		: \
		: [rs] "r" (g_fast.rseq_offset), [ncpu] "m" (g_fast.rseq_cpus), \
		  [stride] "m" (g_fast.cpu_stride), [base] "r" (slot_base), \
		  [delta] "x" (delta), [sig] "i" (ALLOCINFO_RSEQ_SIG) \
		: "rax", "xmm0", "memory", "cc" \
		: fallback)

/* Adds {bytes, calls} on this CPU; false when this thread has no rseq (the caller
 * then takes the atomic fallback). */
static inline __attribute__((always_inline)) bool
counter_add_rseq(uint32_t slot, int64_t bytes, int64_t calls)
{
	char *slot_base = g_fast.counters + ((uintptr_t)slot << 4);
	v2di delta = { bytes, calls };
	ALLOCINFO_PERCPU_ASM("paddq");
	return true;
fallback:
	return false;
}

/* Subtracts {bytes, calls}: as counter_add_rseq(slot, -bytes, -calls), shorter. */
static inline __attribute__((always_inline)) bool
counter_sub_rseq(uint32_t slot, int64_t bytes, int64_t calls)
{
	char *slot_base = g_fast.counters + ((uintptr_t)slot << 4);
	v2di delta = { bytes, calls };
	ALLOCINFO_PERCPU_ASM("psubq");
	return true;
fallback:
	return false;
}

#undef ALLOCINFO_PERCPU_ASM

#else

static inline bool counter_add_rseq(uint32_t, int64_t, int64_t) { return false; }
static inline bool counter_sub_rseq(uint32_t, int64_t, int64_t) { return false; }

#endif

static inline __attribute__((always_inline)) void
counter_add(uint32_t slot, int64_t bytes, int64_t calls)
{
	if (unlikely(!counter_add_rseq(slot, bytes, calls)))
		counter_add_fallback(slot, bytes, calls);
}

static inline __attribute__((always_inline)) void
counter_sub(uint32_t slot, int64_t bytes, int64_t calls)
{
	if (unlikely(!counter_sub_rseq(slot, bytes, calls)))
		counter_add_fallback(slot, -bytes, -calls);
}

} /* namespace allocinfo */

#endif /* ALLOCINFO_PERCPU_H */
