/* SPDX-License-Identifier: MIT */
/*
 * Definitions shared by every part of liballocinfo: branch hints, the process-wide
 * state the fast path reads, the per-allocation record, and the recursion guard.
 */
#ifndef ALLOCINFO_INTERNAL_H
#define ALLOCINFO_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#define ALLOCINFO_LIBRARY 1
#include "allocinfo.h"
#include "store_format.h"

#define likely(x)   __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define HIDDEN      __attribute__((visibility("hidden")))
#define EXPORT      __attribute__((visibility("default")))
/* A frame pointer kept in a function that calls the allocator and goes on after it
 * (copies a string in, stores the pointer): a sanitizer's frame-pointer walk from
 * inside that allocator (its leak and error reports) must get through it to the
 * program's frames. The rest of the library keeps its frames by its flags (local.mk);
 * the exported entry points' file does not, for the fast path's sake. */
#if defined(__clang__)
#define KEEPS_FRAME	/* no per-function optimize attribute */
#else
#define KEEPS_FRAME __attribute__((optimize("no-omit-frame-pointer")))
#endif

/* glibc's _dl_find_object (2.35): an address's object and its unwind table, lock-free
 * and without the symbol search of dladdr(). */
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
#define ALLOCINFO_HAVE_DL_FIND_OBJECT 1
#endif

namespace allocinfo {

/* What the process is doing with allocations; decided once, at the first one. */
enum run_state : uint32_t {
	STATE_UNINIT = 0,	/* nothing allocated yet */
	STATE_NEVER = 1,	/* ALLOCINFO=never, or start-up failed: plain glibc, no record */
	STATE_RUNNING = 2,	/* allocations made while counting carry a record */
	STATE_STARTING = 3,	/* one thread is initialising; its own allocations carry a
				 * record charged to nothing */
};

/*
 * Everything the fast path reads, on one cache line and the start of the next (the
 * small-block heap's length, key and canary). Written during start-up and after fork
 * (single-threaded), read without synchronisation afterwards, except small_len,
 * which only grows (a block is freed by a thread that saw it allocated).
 *
 * `go` is the one word an allocation tests: it points at the store's run-time switch
 * while the fast path may be taken (running, not debugging), and at a word that
 * stays 0 otherwise, so "not started", "never", "off" and "debug" cost the fast path
 * a single load and branch together.
 */
struct alignas(64) fast_state {
	const uint32_t *go;		/* nonzero: take the fast path */
	char *counters;			/* counter of (shard 0, slot 0) */
	uint32_t counter_mask;		/* a record's counter offset, kept within the
					 * store's tag capacity (a power of two) */
	uint32_t state;			/* enum run_state */
	uint32_t debug;			/* ALLOCINFO_DEBUG */
	uint32_t nr_shards;		/* counter shards (thread_shard.h) */
	uint32_t shard_shift;		/* log2 of the bytes between two shards */
	uint32_t plain_when_off;	/* never, or running without debug, glibc
					 * underneath: an allocation that finds `go` at 0
					 * is a plain one */
	const uint32_t *enabled;	/* the store's run-time switch */
	uintptr_t small_base;		/* the small-block heap (small_heap.h), or
					 * small::NO_BASE */
	size_t small_end;		/* small::MAX + 1 with the heap, else 0: the
					 * requests below it take a slot, and one
					 * compare tells both */
	/* The rest of the small-block heap's words, on the second line: */
	uintptr_t small_len;		/* bytes mapped from small_base (grows) */
	uintptr_t small_key;		/* XORed into its free lists' links */
	uint32_t small_canary;		/* a live slot's trailer check */
	uint32_t plain_free_checked;	/* debugging, or another allocator underneath:
					 * free() of a block without a record is not
					 * glibc's plain free */
	size_t large_free;		/* with the heap, blocks of this size and more
					 * freed underneath are noted (small_heap.h);
					 * SIZE_MAX without it */
};
extern fast_state g_fast HIDDEN;

/* What `go` points at when the fast path must not be taken. */
extern const uint32_t g_stop HIDDEN;

/*
 * The record in front of an allocation made while counting: 16 bytes, so the pointer
 * handed out keeps glibc's 16-byte alignment. `tag` is a slot index, valid after
 * dlclose.
 *
 * Allocations made while counting is off (or never on) have no record: free() tells
 * them apart by `meta`, the 4 bytes just below the pointer. Below a glibc pointer
 * those are the high half of the chunk's size word, which is 0 for any chunk under
 * 4 GiB and can never reach RECORD_MAGIC's range (chunks of 2^63 bytes and more).
 * With ALLOCINFO_DEBUG or a sanitizer's or another allocator underneath (whose headers
 * we do not know), every allocation gets a record instead.
 *
 * `meta` == RECORD_MAGIC exactly is the common case that free() handles inline; any
 * other bit (an alignment shift, a debug record, a sampler's mark) sends it to the
 * out-of-line path, so each such feature costs the fast path nothing.
 */
struct alloc_record {
	uint64_t size;		/* bytes the caller asked for */
	uint32_t counter;	/* slot * 16: the offset of the slot's counter in a shard,
				 * so that free() indexes without a shift; the discard
				 * slot's when not counted */
	uint32_t meta;		/* RECORD_MAGIC | align_shift << 8 | RECORD_F_* */
};
static_assert(sizeof(alloc_record) == 16, "the record keeps 16-byte alignment");
/* The header's inline fast path writes records too (layout version 1). */
static_assert(offsetof(alloc_record, size) == offsetof(allocinfo__record_v1, size) &&
	      offsetof(alloc_record, counter) == offsetof(allocinfo__record_v1, counter) &&
	      offsetof(alloc_record, meta) == offsetof(allocinfo__record_v1, meta) &&
	      sizeof(alloc_record) == sizeof(allocinfo__record_v1),
	      "the record is the header's version 1");

constexpr uint32_t RECORD_MAGIC = ALLOCINFO__MAGIC_V1;
constexpr uint32_t RECORD_MAGIC_MASK = 0xffff0000u;
constexpr uint32_t RECORD_SHIFT_MASK = 0x0000ff00u; /* log2(alignment) when > 16 */
constexpr uint32_t RECORD_F_SAMPLED = 0x1u;	/* spare: a sampler's mark */
constexpr uint32_t RECORD_F_DEBUG = 0x2u;	/* made under ALLOCINFO_DEBUG: checked at free */
constexpr uint32_t RECORD_F_UNCOUNTED = 0x4u;	/* charged to nothing, not even the discard slot */
constexpr uint32_t RECORD_F_CALLBACKS = 0x8u;	/* made while user callbacks were registered:
						 * its free takes the path that calls them */
constexpr uint32_t RECORD_F_MOVED = 0x10u;	/* not a record: the mark below a pointer a
						 * post callback moved into the block; size is
						 * the distance back to the block (callbacks.h) */
constexpr uint32_t RECORD_F_FOREIGN = 0x20u;	/* the block is another allocator's (backend.h) */
constexpr uint32_t RECORD_F_CXX = 0x40u;	/* made by that allocator's operator new or
						 * new[]: freed by its function of the kind
						 * the program's call was (backend::g_new_kinds) */
constexpr uint32_t RECORD_F_MALLOC = 0x80u;	/* likewise, made by its malloc or calloc
						 * for the program's own call of them */

/* operator delete[] inside the library; callbacks see ALLOCINFO_OP_DELETE
 * (public_op()). The allocator underneath may tell its new[] blocks from new's
 * (backend::free_foreign_as()). */
constexpr int OP_DELETE_ARRAY = ALLOCINFO_OP_COUNT;
constexpr int public_op(int op)
{
	return op == OP_DELETE_ARRAY ? ALLOCINFO_OP_DELETE : op;
}

#ifdef ALLOCINFO_BACKEND_NEXT
constexpr bool RECORD_ALWAYS = true;	/* the sanitizer's headers are not glibc's */
#else
constexpr bool RECORD_ALWAYS = false;
#endif

/* The pointers handed out over another allocator that start a page (page_starts.h). */
namespace page_starts {
/* Set once at start-up, with another allocator underneath. */
extern bool g_guarded HIDDEN;
static inline bool starts_page(const void *p)
{
	return ((uintptr_t)p & 4095) == 0;
}
/* A page start over another allocator: what the set is asked about. */
static inline bool guarded_start(const void *p)
{
	return unlikely(starts_page(p)) && g_guarded;
}
/* p, which starts a page, was handed out by the library (and not freed since); or a
 * pointer could not be noted for want of memory, and the 16 bytes below p can be read
 * (asked of the kernel: page_starts.cpp). */
bool contains(const void *p) HIDDEN;
/* This thread's last page start found absent, and the count of pointers noted then
 * (page_starts.cpp): while none was noted since, it is still absent. */
extern __thread uintptr_t t_absent HIDDEN;
extern __thread uint64_t t_absent_noted HIDDEN;
extern uint64_t g_noted HIDDEN;
static inline bool known_absent(const void *p)
{
	return (uintptr_t)p == t_absent &&
	       t_absent_noted == __atomic_load_n(&g_noted, __ATOMIC_ACQUIRE);
}
/* Whether the 16 bytes below p can be read, asked of the kernel (page_starts.cpp). */
bool readable_below(const void *p) HIDDEN;
} /* namespace page_starts */

/* In the sanitizer builds: p starts a page, and the page below it is not mapped, so
 * that p is not the library's (its record would be there) but a block the sanitizer
 * made without the library: an interceptor's, such as realpath()'s.
 * ThreadSanitizer's allocator starts its regions with such blocks. (Its
 * __sanitizer_get_ownership() says yes to any pointer into a block, the library's
 * included, so it cannot tell them apart.) */
static inline bool sanitizer_page_start(const void *p)
{
	return RECORD_ALWAYS && page_starts::starts_page(p) && !page_starts::readable_below(p);
}

/* Whether the 16 bytes below p may be read: always, except over another allocator
 * for a pointer that starts a page and that the library did not hand out, whose page
 * below may not be mapped, and in the sanitizer builds below a page start whose page
 * below is not mapped. */
static inline bool below_readable(const void *p)
{
	if (RECORD_ALWAYS)
		return !sanitizer_page_start(p);
	return !page_starts::guarded_start(p) ||
	       (!page_starts::known_absent(p) && page_starts::contains(p));
}

static inline bool has_record(const void *p)
{
	if (!below_readable(p))
		return false;
	const uint32_t *meta = static_cast<const uint32_t *>(p) - 1;
	return (*meta & RECORD_MAGIC_MASK) == RECORD_MAGIC;
}

static inline alloc_record *record_of(void *p)
{
	return reinterpret_cast<alloc_record *>(static_cast<char *>(p) - sizeof(alloc_record));
}

/* A slot's counter offset, as records keep it; and back. */
static inline uint32_t counter_offset(uint32_t slot)
{
	return slot << 4;
}

static inline uint32_t record_slot(const alloc_record *rec)
{
	return (rec->counter & g_fast.counter_mask) >> 4;
}

/* A tag whose slot is the discard slot: what the library's own allocations use. */
extern alloc_tag g_discard_tag HIDDEN;

/*
 * The recursion guard, for library code that may allocate (registration, reports,
 * symbolization): it makes the discard tag this thread's override, so those
 * allocations get a record but are charged to nothing and take no lock. Using the
 * override costs the fast path nothing extra: it reads that word anyway.
 */
class busy_guard {
public:
	busy_guard() noexcept : saved_(allocinfo__thread.override)
	{
		allocinfo__thread.override = &g_discard_tag;
	}
	~busy_guard() { allocinfo__thread.override = saved_; }
	busy_guard(const busy_guard &) = delete;
	busy_guard &operator=(const busy_guard &) = delete;
private:
	const alloc_tag *saved_;
};

/* The start-up work, done once by whichever thread allocates first. */
void ensure_init() HIDDEN;
/* Called from constructors: from now on start-up may use the whole C library. */
void note_constructors_running() HIDDEN;

/* One line on stderr, starting "allocinfo: ". Never allocates. */
void log_message(const char *fmt, ...) HIDDEN __attribute__((format(printf, 1, 2)));

/* CLOCK_MONOTONIC in nanoseconds, for spacing out slow housekeeping. */
static inline uint64_t monotonic_ns()
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000 + (uint64_t)ts.tv_nsec;
}

} /* namespace allocinfo */

#endif /* ALLOCINFO_INTERNAL_H */
