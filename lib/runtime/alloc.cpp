/* SPDX-License-Identifier: MIT */
/* The less frequent allocation paths: start-up and the switch, aligned blocks,
 * realloc, blocks without a plain record, checks. */
#include "alloc.h"
#include "block_find.h"
#include "callbacks.h"
#include "route.h"
#include "sanitizer_double_free.h"
#include "sampler.h"

#include <string.h>
#include <unistd.h>

namespace allocinfo {

alloc_tag g_discard_tag = { "", "", 0, 0, ALLOCINFO_TAG_DISCARD,
			    counter_offset(ALLOCINFO_TAG_DISCARD) };

slow_plan slow_mode()
{
	uint32_t state = __atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE);
	/* Over another allocator every allocation comes here: its common case first. */
	if (likely(state == STATE_RUNNING) && backend::g_foreign_flag && !g_fast.debug &&
	    __atomic_load_n(g_fast.enabled, __ATOMIC_RELAXED)) {
		if (route_pending())	/* objects loaded since: their calls too */
			route_new_objects();
		return { how::counted, RECORD_F_FOREIGN };
	}
	if (state != STATE_RUNNING && state != STATE_NEVER)
		ensure_init();
	if (route_pending())
		route_new_objects();
	switch (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE)) {
	case STATE_RUNNING:
		break;
	case STATE_STARTING:	/* the initialising thread, allocating */
	case STATE_UNINIT:	/* a sanitizer build before constructors: the bootstrap arena */
		return { how::discard, RECORD_F_UNCOUNTED | backend::g_foreign_flag };
	default:
		/* Another allocator's blocks carry a record even then, unless none ever
		 * did (ALLOCINFO=never from the start): a record-less block of ours could
		 * not be told from one the allocator made itself. */
		if (backend::g_foreign_flag && !backend::g_no_records)
			return { how::discard, RECORD_F_UNCOUNTED | RECORD_F_FOREIGN };
		return { how::never, 0 };
	}
	uint32_t debug = g_fast.debug ? RECORD_F_DEBUG : 0;
	uint32_t foreign = backend::g_foreign_flag;
	if (__atomic_load_n(g_fast.enabled, __ATOMIC_RELAXED))
		return { how::counted, debug | foreign };
	if (debug || RECORD_ALWAYS || foreign)
		return { how::discard, debug | RECORD_F_UNCOUNTED | foreign };
	return { how::off, 0 };
}

void *finish_unowned(alloc_record *rec, uint32_t slot, size_t size, uint32_t meta)
{
	counter_add_unowned(slot, (int64_t)size, 1);
	rec->size = size;
	rec->counter = counter_offset(slot);
	rec->meta = meta;
	return page_starts::note(rec + 1);
}

void release_unowned(void *p) noexcept
{
	if (unlikely(backend::g_no_records)) {	/* no counters either */
		backend::foreign.free(p);
		return;
	}
	alloc_record *rec = record_of(p);
	counter_add_unowned(record_slot(rec), -(int64_t)rec->size, -1);
	rec->meta = 0;	/* see release() */
	backend::free(rec);
}

void release_large(alloc_record *rec, size_t size) noexcept
{
	/* A block glibc mapped on its own goes back to the system as it is freed: it
	 * leaves no hole. */
	const uint64_t *chunk_size = reinterpret_cast<const uint64_t *>(rec) - 1;
	if (backend::g_underneath != backend::underneath::glibc ||
	    !(*chunk_size & block_find::CHUNK_IS_MMAPPED))
		small::freed_underneath(size);
	backend::free(rec);
}

/* Over glibc's allocator, a size too large for the record gets glibc's answer without
 * asking: in the sanitizer builds the allocator underneath is the sanitizer's, which
 * reports such a size as an error where glibc returns ENOMEM. */
static bool answer_too_large_here(bool foreign)
{
	return !foreign && backend::g_underneath == backend::underneath::glibc;
}

void *allocate_edge(uint32_t slot, size_t size, bool zero, uint32_t flags, bool foreign)
{
	if (size && answer_too_large_here(foreign)) {
		errno = ENOMEM;
		return nullptr;
	}
	size_t total = size ? size : sizeof(alloc_record) + 1;
	void *p = foreign ? (zero ? backend::foreign.calloc(1, total) : backend::foreign.malloc(total))
			  : (zero ? backend::calloc(1, total) : backend::malloc(total));
	if (size || !p)
		return p;	/* too large: the allocator's own answer */
	return finish(static_cast<alloc_record *>(p), slot, 0, RECORD_MAGIC | flags);
}

void *allocate_foreign(uint32_t slot, size_t size, bool zero, uint32_t flags)
{
	return allocate_foreign_inline(slot, size, zero, flags);
}

void *allocate_foreign_new(uint32_t slot, size_t size, bool array, uint32_t flags)
{
	/* 0 bytes get one, as malloc's do (allocate_edge()) */
	size_t total = size ? size + sizeof(alloc_record) : sizeof(alloc_record) + 1;
	if (total < size)
		return nullptr;
	/* An object of our own: std::nothrow is libstdc++'s, which the library does not
	 * link (process_lean.sh). */
	const std::nothrow_t nothrow{};
	auto *rec = static_cast<alloc_record *>(array ? backend::foreign_new_array(total, nothrow)
						      : backend::foreign_new(total, nothrow));
	if (unlikely(!rec))
		return nullptr;
	return finish(rec, slot, size, RECORD_MAGIC | flags | RECORD_F_CXX);
}

void *allocate_planned(slow_plan plan, size_t n, bool zero)
{
	if (plan.mode == how::discard)
		return allocate_flagged(ALLOCINFO_TAG_DISCARD, n, zero, plan.flags);
	return zero ? backend::calloc_plain(1, n) : backend::malloc_plain(n);
}

/*
 * Blocks aligned to 64 bytes or more keep their record in their last 16 bytes
 * instead of in front: in front it would cost a whole alignment of padding
 * (posix_memalign(4096, 64) would take two pages where glibc takes one). At the end,
 * the block is asked of glibc 16 bytes larger, which leaves the caller glibc's usable
 * size exactly. free() looks for it only for a pointer without a record in front,
 * aligned to 64, once any such block exists: the magic, a 16-bit check of the pointer
 * mixed with a per-process key, and a size that fits tell it from program data.
 * Under ALLOCINFO_DEBUG and sanitizers every record stays in front, where the checks
 * look.
 */
struct tail_record {
	uint64_t size_check;	/* bytes the caller asked for, the check in the top 16 bits */
	uint32_t counter;	/* as in a record */
	uint32_t meta;		/* RECORD_MAGIC | RECORD_F_* */
};
static_assert(sizeof(tail_record) == sizeof(alloc_record), "a tail record is 16 bytes");
constexpr size_t TAIL_ALIGN = 64;
constexpr unsigned TAIL_CHECK_SHIFT = 48;
/* Readers find tail records too (block_find.h). */
static_assert(TAIL_ALIGN == block_find::TAIL_ALIGN &&
	      TAIL_CHECK_SHIFT == block_find::TAIL_CHECK_SHIFT &&
	      sizeof(tail_record) == sizeof(block_find::tail_record) &&
	      offsetof(tail_record, meta) == offsetof(block_find::tail_record, meta) &&
	      offsetof(tail_record, counter) == offsetof(block_find::tail_record, counter),
	      "block_find.h knows the tail record");
static bool g_tail_records;	/* one was ever made: free() looks for them */

static uint64_t tail_check(const void *p)
{
	return block_find::tail_check((uintptr_t)p, g_fast.small_key);
}

/* p's tail record, when it has one; p has no record in front. */
static tail_record *tail_of(void *p)
{
	if (!__atomic_load_n(&g_tail_records, __ATOMIC_RELAXED) ||
	    ((uintptr_t)p & (TAIL_ALIGN - 1)))
		return nullptr;
	size_t n = backend::usable_size(p);
	if (n < sizeof(tail_record))
		return nullptr;
	auto *t = reinterpret_cast<tail_record *>(static_cast<char *>(p) + n - sizeof(tail_record));
	uint64_t size = t->size_check & (((uint64_t)1 << TAIL_CHECK_SHIFT) - 1);
	if ((t->meta & RECORD_MAGIC_MASK) != RECORD_MAGIC ||
	    (t->size_check & ~(((uint64_t)1 << TAIL_CHECK_SHIFT) - 1)) != tail_check(p) ||
	    size > n - sizeof(tail_record) || (t->counter & ~g_fast.counter_mask))
		return nullptr;
	return t;
}

static void *allocate_with_tail(uint32_t slot, size_t align, size_t size, size_t reserve,
				uint32_t flags)
{
	size_t total;
	if (__builtin_add_overflow(reserve, sizeof(tail_record), &total) || total > PTRDIFF_MAX) {
		errno = ENOMEM;
		return nullptr;
	}
	void *p = backend::memalign(align, total);
	if (!p)
		return nullptr;
	if (!__atomic_load_n(&g_tail_records, __ATOMIC_RELAXED))
		__atomic_store_n(&g_tail_records, true, __ATOMIC_RELAXED);
	if (!(flags & RECORD_F_UNCOUNTED))
		counter_add(slot, (int64_t)size, 1);
	auto *t = reinterpret_cast<tail_record *>(static_cast<char *>(p) + backend::usable_size(p) -
						  sizeof(tail_record));
	t->size_check = size | tail_check(p);
	t->counter = counter_offset(slot);
	t->meta = RECORD_MAGIC | flags;
	return p;
}

void *allocate_aligned(uint32_t slot, size_t align, size_t size, size_t reserve, uint32_t flags)
{
	if (reserve < size)
		reserve = size;
	if (align <= sizeof(alloc_record) && reserve == size)
		return allocate_flagged(slot, size, false, flags);
	/* glibc's answers: an alignment past 2^63 is invalid; any other is rounded up to
	 * a power of two; one too large to be had is a lack of memory. */
	if (align > ((size_t)1 << 63)) {
		errno = EINVAL;
		return nullptr;
	}
	if (align & (align - 1))
		align = (size_t)1 << (64 - __builtin_clzl(align));
	/* At least glibc's smallest usable size (its chunks are 32 bytes or more). */
	if (reserve < 24)
		reserve = 24;
	/* Tail records only over glibc, whose usable size tail_of() trusts. */
	if (align >= TAIL_ALIGN && !RECORD_ALWAYS &&
	    backend::g_underneath == backend::underneath::glibc &&
	    !(flags & (RECORD_F_DEBUG | RECORD_F_CALLBACKS | RECORD_F_FOREIGN)))
		return allocate_with_tail(slot, align, size, reserve, flags);
	bool foreign = flags & RECORD_F_FOREIGN;
	size_t total;
	if (__builtin_add_overflow(reserve, align, &total) || total > PTRDIFF_MAX) {
		if (answer_too_large_here(foreign)) {	/* as allocate_edge() does */
			errno = ENOMEM;
			return nullptr;
		}
		return foreign ? backend::foreign.memalign(align, size) : backend::memalign(align, size);
	}
	char *base = static_cast<char *>(foreign ? backend::foreign.memalign(align, total)
						 : backend::memalign(align, total));
	if (!base)
		return nullptr;
	/* mimalloc 2.0.9 (Debian 12's) hands out a block whose size is a power of two of
	 * at most 1 KiB from its small pages, without the alignment asked for (its issue
	 * 700): aligned_alloc(512, 512) asks it for 1 KiB aligned to 512. Asked once more
	 * for a size that is no power of two, it aligns. (The record is found whatever the
	 * alignment: it lies `align` bytes into the block.) */
	if (unlikely((uintptr_t)base & (align - 1))) {
		if (foreign)
			backend::foreign.free(base);
		else
			backend::free(base);
		total += sizeof(alloc_record);
		base = static_cast<char *>(foreign ? backend::foreign.memalign(align, total)
						   : backend::memalign(align, total));
		if (!base)
			return nullptr;
	}
	uint32_t shift = (uint32_t)__builtin_ctzl(align);
	return finish(reinterpret_cast<alloc_record *>(base + align) - 1, slot, size,
		      RECORD_MAGIC | shift << 8 | flags);
}

bool check_pointer(void *p, const char *what, bool below_readable_known)
{
	alloc_record *rec = record_of(p);
	const char *problem = nullptr;
	if ((uintptr_t)p & (sizeof(alloc_record) - 1))
		problem = "misaligned";
	else if (!(below_readable_known || below_readable(p)) ||
		 (rec->meta & RECORD_MAGIC_MASK) != RECORD_MAGIC)
		problem = "no allocinfo record: never allocated here, or already freed";
	else if (rec->counter & ~g_fast.counter_mask)
		problem = "corrupt record";
	if (!problem)
		return true;
	log_message("%s(%p): %s; leaving it alone", what, p, problem);
	return false;
}

/* Under ALLOCINFO_DEBUG over glibc every block we made has a record: one without is
 * a wrong pointer, unless it passes the checks. */
[[gnu::noinline]] static void release_checked(void *p) noexcept
{
	if (check_pointer(p, "free"))
		backend::free(p);
}

/* free() of an aligned block with its record at the end. */
[[gnu::noinline]] static void release_tail(void *p, tail_record *t) noexcept
{
	if (!(t->meta & RECORD_F_UNCOUNTED))
		counter_sub((t->counter & g_fast.counter_mask) >> 4,
			    (int64_t)(t->size_check & (((uint64_t)1 << TAIL_CHECK_SHIFT) - 1)), 1);
	t->meta = 0;
	backend::free(p);
}

/* free() of a block without a record in front, once blocks with a tail record exist
 * (never under ALLOCINFO_DEBUG). */
[[gnu::noinline]] static void release_maybe_tail(void *p) noexcept
{
	if (tail_record *t = tail_of(p))
		release_tail(p, t);
	else
		backend::free(p);
}

/* A block without a record under debugging (one of ours has a record: this is a wrong
 * pointer, unless it passes the checks), or over another allocator (the allocator
 * made it itself, and gets it back by its own function of the kind: Op; a sanitizer
 * gets a counted block freed before as the block it was). */
template <int Op>
[[gnu::noinline]] static void release_plain_other(void *p) noexcept
{
	if (!backend::g_foreign_flag)
		release_checked(p);
	else if (unlikely(backend::g_sanitizer))
		backend::free_foreign_as(sanitizer_double_free::block_for(p), Op);
	else
		backend::free_foreign_as(p, Op);
}

/* Debugging, or another allocator underneath. */
template <int Op>
[[gnu::noinline]] static void release_checked_as(void *p) noexcept
{
	/* Over another allocator, a pointer that starts a page and was not handed out
	 * here is the allocator's own: the page below it may not be mapped. With no
	 * record anywhere, no block is ours to tell apart. */
	if (backend::g_no_records || (page_starts::guarded_start(p) && !page_starts::take(p))) {
		backend::free_foreign_as(p, Op);
		return;
	}
	alloc_record *rec = record_of(p);
	char *shard = thread_shard();
	if (rec->meta == (RECORD_MAGIC | RECORD_F_FOREIGN) && likely(shard))
		/* Another allocator's counted block, its common case, without
		 * release_slow()'s call and checks. */
		release_foreign(rec, shard);
	else if ((rec->meta & RECORD_MAGIC_MASK) == RECORD_MAGIC)
		release_slow(p, Op);
	else if (unlikely(__atomic_load_n(&g_tail_records, __ATOMIC_RELAXED)))
		release_maybe_tail(p);
	else
		release_plain_other<Op>(p);
}

/* Every branch a tail call: the path of blocks made while counting was off needs no
 * stack frame. The flag is tested first, where the checked cases part from the
 * plain ones, so that the plain path tests no more than it did at its end. */
template <int Op>
static inline void release_other_as(void *p) noexcept
{
	if (!RECORD_ALWAYS && unlikely(g_fast.plain_free_checked)) {
		release_checked_as<Op>(p);
		return;
	}
	if (RECORD_ALWAYS && unlikely(sanitizer_page_start(p))) {
		backend::free(p);	/* nothing of ours below it, maybe nothing mapped */
		return;
	}
	alloc_record *rec = record_of(p);
	if ((rec->meta & RECORD_MAGIC_MASK) == RECORD_MAGIC)
		release_slow(p, Op);
	else if (unlikely(__atomic_load_n(&g_tail_records, __ATOMIC_RELAXED)))
		release_maybe_tail(p);
	else	/* made while counting was off, or by a sanitizer */
		backend::free(p);
}

void route_then_free_foreign(alloc_record *rec) noexcept
{
	route_new_objects();
	backend::foreign.free(rec);
}

void release_other(void *p, bool exported) noexcept
{
	/* A block the object before the library passes on to the exported free():
	 * below's, unless the library made it (exported_off()). */
	if (exported && unlikely(backend::g_passing_on) && !block_is_ours(p)) {
		backend::below.free(p);
		return;
	}
	release_other_as<ALLOCINFO_OP_FREE>(p);
}
void release_other_delete(void *p) noexcept { release_other_as<ALLOCINFO_OP_DELETE>(p); }
void release_other_delete_array(void *p) noexcept { release_other_as<OP_DELETE_ARRAY>(p); }

void release_slow(void *p, int op) noexcept
{
	alloc_record *rec = record_of(p);
	uint32_t meta = rec->meta;
	char *shard = thread_shard();
	if (likely(meta == (RECORD_MAGIC | RECORD_F_FOREIGN) && shard)) {
		release_foreign(rec, shard);	/* another allocator's counted block */
		return;
	}
	/* below p is known readable: the magic was read (a page start was taken out of
	 * page_starts' set on the way) */
	if ((meta & RECORD_F_DEBUG) && !check_pointer(p, "free", true))
		return;
	if (unlikely(meta & (RECORD_F_CALLBACKS | RECORD_F_MOVED | RECORD_F_SAMPLED))) {
		if ((meta & RECORD_F_MOVED) ||
		    ((meta & RECORD_F_CALLBACKS) && callbacks::chain_wanted())) {
			callbacks::release(p, public_op(op));
			return;
		}
		if (meta & RECORD_F_SAMPLED)	/* its profiler's on_free, then freed */
			sampler::released(p);
	}
	if (!(meta & RECORD_F_UNCOUNTED))
		counter_sub(record_slot(rec), (int64_t)rec->size, 1);
	void *base = rec;
	if (meta & RECORD_SHIFT_MASK)
		base = static_cast<char *>(p) - ((size_t)1 << ((meta & RECORD_SHIFT_MASK) >> 8));
	/* A second free of p is then caught; and allocinfo_pointer_info() does not take
	 * the record, which glibc leaves in place when it merges the chunk with a free
	 * neighbour (or, aligned, keeps in the padding), for a live one. */
	rec->meta = 0;
	if (meta & (RECORD_F_CXX | RECORD_F_MALLOC))	/* the sanitizer sees the program's call */
		backend::free_foreign_as(base, op);
	else if (meta & RECORD_F_FOREIGN)
		backend::foreign.free(base);
	else
		backend::free(base);
}

void release_small_other(void *p) noexcept
{
	uintptr_t base = g_fast.small_base;
	unsigned c = small::class_at(p, base);
	small::trailer *t = small::trailer_of(p, c);
	if (!small::live_slot(p, base, c, t))
		small::report_bad_slot(p, "free");
	counter_sub((t->counter & g_fast.counter_mask) >> 4, t->size, 1);
	uint32_t freed = small::FREED_WORD;
	__builtin_memcpy(t, &freed, sizeof(freed));
	small::release_to_span(p, c);
}

/* Moves p (with or without a record) into a new block by hand. */
static void *move_block(uint32_t slot, void *p, size_t old_size, size_t size, uint32_t flags)
{
	void *q = allocate_flagged(slot, size, false, flags);
	if (!q)
		return nullptr;
	memcpy(q, p, old_size < size ? old_size : size);
	release(p);
	return q;
}

/* realloc of a block with a record that glibc's realloc cannot take: moved, except a
 * sampled one (which has a shift) that fits, kept in place. Out of line, so that
 * realloc's common path stays as it was before the sampler. */
[[gnu::noinline]] static void *move_shifted(uint32_t slot, void *p, size_t old_size, size_t size,
					    uint32_t flags)
{
	if (record_of(p)->meta & RECORD_F_SAMPLED)
		return sampler::reallocate_sampled(slot, p, size, flags);
	return move_block(slot, p, old_size, size, flags);
}

/* realloc of a slot of the small-block heap: in place within its class. */
static void *reallocate_small(uint32_t slot, void *p, size_t size, uint32_t flags)
{
	uintptr_t base = g_fast.small_base;
	unsigned c = small::class_at(p, base);
	small::trailer *t = small::trailer_of(p, c);
	if (!small::live_slot(p, base, c, t))
		small::report_bad_slot(p, "realloc");
	if (flags || size > small::MAX || small::class_of(size) != c)
		/* Every byte the caller could use is kept (malloc_usable_size's). */
		return move_block(slot, p, small::usable(c), size, flags);
	size_t old_size = t->size;
	uint32_t old_slot = (t->counter & g_fast.counter_mask) >> 4;
	if (old_slot == slot) {
		counter_add(slot, (int64_t)size - (int64_t)old_size, 0);
	} else {
		counter_sub(old_slot, (int64_t)old_size, 1);
		counter_add(slot, (int64_t)size, 1);
	}
	t->size = (uint16_t)size;
	t->counter = counter_offset(slot);
	return p;
}

void *reallocate(uint32_t slot, void *p, size_t size, uint32_t flags)
{
	if (small::contains(p, g_fast.small_base))
		return reallocate_small(slot, p, size, flags);
	if (!has_record(p)) {
		if (!RECORD_ALWAYS && unlikely(g_fast.debug) && !backend::g_foreign_flag &&
		    !check_pointer(p, "realloc")) {
			errno = EINVAL;
			return nullptr;
		}
		/* Made while counting was off (or by a sanitizer or the allocator itself): it
		 * gets a record now. An aligned block with a tail record moves too (glibc's
		 * realloc would not keep the alignment), and release() uncounts it. */
		return move_block(slot, p, usable_size(p), size, flags);
	}
	alloc_record *rec = record_of(p);
	uint32_t meta = rec->meta;
	if ((meta & RECORD_F_DEBUG) && !check_pointer(p, "realloc")) {
		errno = EINVAL;
		return nullptr;
	}
	if (unlikely(meta & RECORD_F_MOVED))	/* a pointer a callback moved: a new block */
		return move_block(slot, p, callbacks::moved_usable_size(p), size, flags);
	uint32_t old_slot = record_slot(rec);
	size_t old_size = rec->size;
	if ((meta & RECORD_SHIFT_MASK) || backend::owns_bootstrap(rec) ||
	    ((meta ^ flags) & RECORD_F_FOREIGN))
		/* glibc's realloc would not keep the alignment; nor can one allocator's
		 * realloc take another's block. */
		return move_shifted(slot, p, old_size, size, flags);
	size_t total;
	if (__builtin_add_overflow(size, sizeof(alloc_record), &total)) {
		errno = ENOMEM;
		return nullptr;
	}
	rec->meta = 0;	/* if it moves, the old place keeps no record (release()) */
	auto *nrec = static_cast<alloc_record *>(meta & RECORD_F_FOREIGN
						 ? backend::foreign.realloc(rec, total)
						 : backend::realloc(rec, total));
	if (!nrec) {
		rec->meta = meta;
		return nullptr;	/* the old block is untouched, and so are its counts */
	}
	nrec->size = size;
	nrec->counter = counter_offset(slot);
	nrec->meta = RECORD_MAGIC | flags;
	if (page_starts::guarded_start(p))
		page_starts::take(p);
	page_starts::note(nrec + 1);
	bool was_counted = !(meta & RECORD_F_UNCOUNTED), counted = !(flags & RECORD_F_UNCOUNTED);
	if (was_counted && counted && old_slot == slot) {
		counter_add(slot, (int64_t)size - (int64_t)old_size, 0);
	} else {
		if (was_counted)
			counter_sub(old_slot, (int64_t)old_size, 1);
		if (counted)
			counter_add(slot, (int64_t)size, 1);
	}
	return nrec + 1;
}

void *reallocate_off(void *p, size_t size)
{
	if (!small::contains(p, g_fast.small_base) && !has_record(p) && !tail_of(p))
		return backend::realloc_plain(p, size);
	/* Counted when made: uncounted now, and kept in a record charged to nothing. */
	return reallocate(ALLOCINFO_TAG_DISCARD, p, size, RECORD_F_UNCOUNTED);
}

bool block_is_ours_slow(void *p)
{
	return p && !backend::g_no_records &&
	       (small::contains(p, g_fast.small_base) || has_record(p));
}

size_t usable_size(void *p)
{
	if (unlikely(backend::g_no_records))
		return backend::foreign.usable_size(p);
	uintptr_t small_base = g_fast.small_base;
	if (small::contains(p, small_base))
		return small::usable(small::class_at(p, small_base));
	if (!has_record(p)) {	/* a plain block, or one with a tail record */
		size_t n = backend::usable_size_plain(p);
		return tail_of(p) ? n - sizeof(tail_record) : n;
	}
	alloc_record *rec = record_of(p);
	uint32_t meta = rec->meta;
	if (unlikely(meta & RECORD_F_MOVED))
		return callbacks::moved_usable_size(p);
	size_t offset = sizeof(alloc_record);
	if (meta & RECORD_SHIFT_MASK)
		offset = (size_t)1 << ((meta & RECORD_SHIFT_MASK) >> 8);
	char *base = static_cast<char *>(p) - offset;
	size_t n = meta & RECORD_F_FOREIGN ? backend::foreign.usable_size(base)
					   : backend::usable_size(base);
	/* An allocator without malloc_usable_size: what was asked for. */
	return n >= offset + rec->size ? n - offset : rec->size;
}

} /* namespace allocinfo */
