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
 * At start, when a BPF store is asked for: whether this process may make one (a map
 * of one entry, bpffs, the pin directory), after one "allocinfo:" line saying why not
 * when `loud` (ALLOCINFO_STORE=bpf). Returns the tag capacity of a BPF store with
 * nr_cpus shards (its counters map is allocated in full), 0 when it cannot have one.
 * The store then starts as shm, in that layout, and gets its maps later.
 */
uint32_t store_bpf_probe(bool loud, uint32_t nr_cpus) HIDDEN;

/* Makes and pins the maps of pid's BPF store, empty. Allocates nothing. */
bool store_bpf_prepare(pid_t pid) HIDDEN;

/* Registry lock held and every counter update waiting: the counters map, filled
 * from the store's counters, mapped onto their address; the header says so. The
 * store file must be this process's. Allocates nothing. */
bool store_bpf_attach() HIDDEN;

/* After store_bpf_prepare() when the store does not become a BPF store: the maps and
 * pins go. */
void store_bpf_abandon() HIDDEN;

/* From the library's constructor, once the C library is up: starts the thread that
 * makes the maps (after a short delay), or loads the iterator of maps already made. */
void store_bpf_ready() HIDDEN;

/* Registry lock held: slot was published, had its flags changed, or was cleared. */
void store_bpf_tag_published(uint32_t slot) HIDDEN;
void store_bpf_tag_flags(uint32_t slot) HIDDEN;
void store_bpf_tag_cleared(uint32_t slot) HIDDEN;

/* Before fork: whether the counters map is left out of the child (MADV_DONTFORK),
 * which then neither copies nor unmaps its page tables; only when the child gets its
 * counters from a private copy made before fork. */
void store_bpf_fork_counters(bool leave_out) HIDDEN;

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

inline uint32_t store_bpf_probe(bool loud, uint32_t)
{
	if (loud)
		log_message("ALLOCINFO_STORE=bpf: this build has no BPF support; using shm");
	return 0;
}
inline bool store_bpf_prepare(pid_t) { return false; }
inline bool store_bpf_attach() { return false; }
inline void store_bpf_abandon() {}
inline void store_bpf_ready() {}
inline void store_bpf_tag_published(uint32_t) {}
inline void store_bpf_tag_flags(uint32_t) {}
inline void store_bpf_tag_cleared(uint32_t) {}
inline void store_bpf_fork_counters(bool) {}
inline void store_bpf_fork_pending() {}
inline bool store_bpf_fork_child() { return false; }
inline void store_bpf_published() {}
inline void store_bpf_forget() {}
inline void store_bpf_retire() {}

#endif

} /* namespace allocinfo */

#endif /* ALLOCINFO_STORE_BPF_H */
