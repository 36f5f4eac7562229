/* SPDX-License-Identifier: MIT */
/* The restartable sequence that counts in this CPU's shard (see cpu_shard.h). */
#include "cpu_shard.h"

#include <sys/rseq.h>

namespace allocinfo {

namespace {

struct cpu_shards {
	char *first;		/* counter of (first CPU shard, slot 0) */
	uint64_t stride;	/* bytes between two CPUs' shards */
	intptr_t rseq_offset;	/* glibc's __rseq_offset */
	uint32_t nr;		/* CPU ids below this count here; 0 without rseq */
};
cpu_shards g_cpu;

} /* namespace */

void cpu_shards_init(char *first, uint64_t stride, uint32_t nr)
{
	g_cpu.first = first;
	g_cpu.stride = stride;
	g_cpu.rseq_offset = __rseq_offset;
	g_cpu.nr = __rseq_size > 0 ? nr : 0;
}

#if defined(__x86_64__) && !defined(ALLOCINFO_NO_RSEQ)

typedef long long v2di __attribute__((vector_size(16)));

/* Offsets in struct rseq (uapi/linux/rseq.h): cpu_id at 4, rseq_cs at 8. The abort
 * handler must be preceded by this signature, which glibc registered. */
#define ALLOCINFO_RSEQ_SIG 0x53053053

bool cpu_shard_add(uint32_t slot, int64_t bytes, int64_t calls)
{
	char *slot_base = g_cpu.first + counter_offset(slot);
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
		"jae %l[no_rseq]\n\t"
		"imulq %[stride], %%rax\n\t"
		"movdqu (%%rax,%[base]), %%xmm0\n\t"
		"paddq %[delta], %%xmm0\n\t"
		"movdqu %%xmm0, (%%rax,%[base])\n\t"	/* the commit */
		"2:\n\t"
		".pushsection __rseq_failure, \"ax\"\n\t"
		".byte 0x0f, 0xb9, 0x3d\n\t"		/* ud1: the signature is its operand */
		".long %c[sig]\n\t"
		"4:\n\t"
		"jmp 6b\n\t"
		".popsection\n\t"
		:
		: [rs] "r" (g_cpu.rseq_offset), [ncpu] "m" (g_cpu.nr),
		  [stride] "m" (g_cpu.stride), [base] "r" (slot_base),
		  [delta] "x" (delta), [sig] "i" (ALLOCINFO_RSEQ_SIG)
		: "rax", "xmm0", "memory", "cc"
		: no_rseq);
	return true;
no_rseq:
	return false;
}

#else

bool cpu_shard_add(uint32_t, int64_t, int64_t)
{
	return false;
}

#endif

} /* namespace allocinfo */
