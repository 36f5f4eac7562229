/* SPDX-License-Identifier: MIT */
/*
 * Per-CPU counter shards, for threads that have no shard of their own (more threads
 * alive at once than thread shards; see thread_shard.h).
 *
 * On x86-64 with glibc's restartable sequence registered (glibc 2.35+), the update is
 * a restartable sequence: read this CPU's number, load its {bytes, calls} pair, add,
 * and store the pair back with one 16-byte store that commits the sequence. If the
 * thread is preempted, migrated or signalled before the store, the kernel restarts
 * the sequence from the top, so no other thread on that CPU can interleave and
 * nothing is counted twice. No lock prefix, as in the kernel's per-CPU counters.
 *
 * Where rseq is not registered (valgrind, old kernels, glibc.pthread.rseq=0) the CPU
 * number reads as -1 or -2, the range check fails, and the caller falls back to
 * atomic adds on the shared shard 0: plain rseq stores and atomic adds never meet on
 * the same counter.
 */
#ifndef ALLOCINFO_CPU_SHARD_H
#define ALLOCINFO_CPU_SHARD_H

#include "internal.h"

namespace allocinfo {

/* nr shards of stride bytes from first, one per CPU id below nr. */
void cpu_shards_init(char *first, uint64_t stride, uint32_t nr) HIDDEN;

/* Adds {bytes, calls} to slot in this CPU's shard; false without rseq (or for a CPU
 * id beyond the shards). */
bool cpu_shard_add(uint32_t slot, int64_t bytes, int64_t calls) HIDDEN;

} /* namespace allocinfo */

#endif /* ALLOCINFO_CPU_SHARD_H */
