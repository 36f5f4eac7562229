/* SPDX-License-Identifier: MIT */
/*
 * The writer's side of the BPF store (store_bpf_format.h): creating and pinning the
 * maps, mapping the counters map where a shm store has its counters region (so the
 * fast path and every in-process reader see one layout), keeping the `tags` map in
 * step with the tag slots, loading the report iterator, fork and exit.
 *
 * Without BPF support in the build, every function is an inline no-op and
 * store_bpf_create() says why it cannot help.
 */
#ifndef ALLOCINFO_STORE_BPF_H
#define ALLOCINFO_STORE_BPF_H

#include <sys/types.h>

#include "internal.h"

namespace allocinfo {

#ifdef ALLOCINFO_HAVE_BPF

/*
 * Creates the maps and pins of pid's BPF store and the store's shm file, and maps
 * both in one reservation: the file, then the counters map at counters_offset.
 * Fills g_store.path, *capacity (the tag capacity chosen for nr_cpus) and *size (of
 * the whole reservation), and returns its base. On failure returns nullptr, after
 * one "allocinfo:" line saying why when `loud` (ALLOCINFO_STORE=bpf).
 */
char *store_bpf_create(pid_t pid, uint32_t nr_cpus, bool loud, uint32_t *capacity,
		       size_t *size) HIDDEN;

/* From the library's constructor, once the C library is up: loads the report
 * iterator and pins it. */
void store_bpf_ready() HIDDEN;

/* Registry lock held: slot was published, had its flags changed, or was cleared. */
void store_bpf_tag_published(uint32_t slot) HIDDEN;
void store_bpf_tag_flags(uint32_t slot) HIDDEN;
void store_bpf_tag_cleared(uint32_t slot) HIDDEN;

/* In a forked child of a BPF-backed process, at fork: the maps and pins held are
 * the parent's, and nothing here writes them until store_bpf_fork_child(). */
void store_bpf_fork_pending() HIDDEN;

/* In a forked child of a BPF-backed process, when it publishes its store: new maps,
 * pins and file for the child, starting from a copy of the store as mapped, mapped
 * at the same address. Allocates nothing before they are in place. False when that
 * failed and nothing was changed: the caller then falls back. */
bool store_bpf_fork_child() HIDDEN;

/* After store_bpf_fork_child(), once the store is published: the child's report
 * iterator, where the parent had loaded one. */
void store_bpf_published() HIDDEN;

/* Forgets the BPF side (a fork child that fell back to another store). */
void store_bpf_forget() HIDDEN;

/* At exit: removes this process's pins. */
void store_bpf_retire() HIDDEN;

#else

inline char *store_bpf_create(pid_t, uint32_t, bool loud, uint32_t *, size_t *)
{
	if (loud)
		log_message("ALLOCINFO_STORE=bpf: this build has no BPF support; using shm");
	return nullptr;
}
inline void store_bpf_ready() {}
inline void store_bpf_tag_published(uint32_t) {}
inline void store_bpf_tag_flags(uint32_t) {}
inline void store_bpf_tag_cleared(uint32_t) {}
inline void store_bpf_fork_pending() {}
inline bool store_bpf_fork_child() { return false; }
inline void store_bpf_published() {}
inline void store_bpf_forget() {}
inline void store_bpf_retire() {}

#endif

} /* namespace allocinfo */

#endif /* ALLOCINFO_STORE_BPF_H */
