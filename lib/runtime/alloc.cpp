/* SPDX-License-Identifier: MIT */
/* The less frequent allocation paths: start-up and the switch, aligned blocks,
 * realloc, blocks without a plain record, checks. */
#include "alloc.h"

#include <string.h>
#include <unistd.h>

namespace allocinfo {

alloc_tag g_discard_tag = { "", "", 0, 0, ALLOCINFO_TAG_DISCARD,
			    counter_offset(ALLOCINFO_TAG_DISCARD) };

slow_plan slow_mode()
{
	ensure_init();
	switch (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE)) {
	case STATE_RUNNING:
		break;
	case STATE_STARTING:	/* the initialising thread, allocating */
	case STATE_UNINIT:	/* a sanitizer build before constructors: the bootstrap arena */
		return { how::discard, RECORD_F_UNCOUNTED };
	default:
		return { how::never, 0 };
	}
	uint32_t debug = g_fast.debug ? RECORD_F_DEBUG : 0;
	if (__atomic_load_n(g_fast.enabled, __ATOMIC_RELAXED))
		return { how::counted, debug };
	if (debug || RECORD_ALWAYS)
		return { how::discard, debug | RECORD_F_UNCOUNTED };
	return { how::off, 0 };
}

void *finish_unowned(alloc_record *rec, uint32_t slot, size_t size, uint32_t meta)
{
	counter_add_unowned(slot, (int64_t)size, 1);
	rec->size = size;
	rec->counter = counter_offset(slot);
	rec->meta = meta;
	return rec + 1;
}

void release_unowned(void *p) noexcept
{
	alloc_record *rec = record_of(p);
	counter_add_unowned(record_slot(rec), -(int64_t)rec->size, -1);
	rec->meta = 0;	/* see release() */
	backend::free(rec);
}

void *allocate_planned(slow_plan plan, size_t n, bool zero)
{
	if (plan.mode == how::discard)
		return allocate(ALLOCINFO_TAG_DISCARD, n, zero, plan.flags);
	return zero ? backend::calloc(1, n) : backend::malloc(n);
}

void *allocate_aligned(uint32_t slot, size_t align, size_t size, size_t reserve, uint32_t flags)
{
	if (reserve < size)
		reserve = size;
	if (align <= sizeof(alloc_record) && reserve == size)
		return allocate(slot, size, false, flags);
	if (align & (align - 1))	/* as glibc's memalign: round up to a power of two */
		align = (size_t)1 << (64 - __builtin_clzl(align));
	size_t total;
	if (align == 0 || align > ((size_t)1 << 62) ||
	    __builtin_add_overflow(reserve, align, &total)) {
		errno = align == 0 || align > ((size_t)1 << 62) ? EINVAL : ENOMEM;
		return nullptr;
	}
	char *base = static_cast<char *>(backend::memalign(align, total));
	if (!base)
		return nullptr;
	uint32_t shift = (uint32_t)__builtin_ctzl(align);
	return finish(reinterpret_cast<alloc_record *>(base + align) - 1, slot, size,
		      RECORD_MAGIC | shift << 8 | flags);
}

bool check_pointer(void *p, const char *what)
{
	alloc_record *rec = record_of(p);
	const char *problem = nullptr;
	if ((uintptr_t)p & (sizeof(alloc_record) - 1))
		problem = "misaligned";
	else if ((rec->meta & RECORD_MAGIC_MASK) != RECORD_MAGIC)
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

/* Every branch a tail call: the path of blocks made while counting was off needs no
 * stack frame. */
void release_other(void *p) noexcept
{
	if ((record_of(p)->meta & RECORD_MAGIC_MASK) == RECORD_MAGIC)
		release_slow(p);
	else if (!RECORD_ALWAYS && unlikely(g_fast.debug))
		release_checked(p);
	else
		backend::free(p);	/* made while counting was off, or by a sanitizer */
}

void release_slow(void *p) noexcept
{
	alloc_record *rec = record_of(p);
	uint32_t meta = rec->meta;
	if ((meta & RECORD_F_DEBUG) && !check_pointer(p, "free"))
		return;
	if (!(meta & RECORD_F_UNCOUNTED))
		counter_sub(record_slot(rec), (int64_t)rec->size, 1);
	void *base = rec;
	if (meta & RECORD_SHIFT_MASK)
		base = static_cast<char *>(p) - ((size_t)1 << ((meta & RECORD_SHIFT_MASK) >> 8));
	/* A second free of p is then caught; and allocinfo_pointer_info() does not take
	 * the record, which glibc leaves in place when it merges the chunk with a free
	 * neighbour (or, aligned, keeps in the padding), for a live one. */
	rec->meta = 0;
	backend::free(base);
}

void release_small_other(void *p) noexcept
{
	uintptr_t base = g_fast.small_base;
	unsigned c = small::class_at(p, base);
	small::trailer *t = small::trailer_of(p, c);
	if (!small::live_slot(p, base, c, t)) {
		small::report_bad_slot(p, "free");
		return;
	}
	counter_sub((t->counter & g_fast.counter_mask) >> 4, t->size, 1);
	t->size = small::FREED;
	small::release_to_central(p, c);
}

/* Moves p (with or without a record) into a new block by hand. */
static void *move_block(uint32_t slot, void *p, size_t old_size, size_t size, uint32_t flags)
{
	void *q = allocate(slot, size, false, flags);
	if (!q)
		return nullptr;
	memcpy(q, p, old_size < size ? old_size : size);
	release(p);
	return q;
}

/* realloc of a slot of the small-block heap: in place within its class. */
static void *reallocate_small(uint32_t slot, void *p, size_t size, uint32_t flags)
{
	uintptr_t base = g_fast.small_base;
	unsigned c = small::class_at(p, base);
	small::trailer *t = small::trailer_of(p, c);
	if (!small::live_slot(p, base, c, t)) {
		small::report_bad_slot(p, "realloc");
		errno = EINVAL;
		return nullptr;
	}
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
	t->size = (uint32_t)size;
	t->counter = counter_offset(slot);
	return p;
}

void *reallocate(uint32_t slot, void *p, size_t size, uint32_t flags)
{
	if (small::contains(p, g_fast.small_base))
		return reallocate_small(slot, p, size, flags);
	if (!has_record(p)) {
		if (!RECORD_ALWAYS && unlikely(g_fast.debug) && !check_pointer(p, "realloc")) {
			errno = EINVAL;
			return nullptr;
		}
		/* Made while counting was off (or by a sanitizer): it gets a record now. */
		return move_block(slot, p, backend::usable_size(p), size, flags);
	}
	alloc_record *rec = record_of(p);
	uint32_t meta = rec->meta;
	if ((meta & RECORD_F_DEBUG) && !check_pointer(p, "realloc")) {
		errno = EINVAL;
		return nullptr;
	}
	uint32_t old_slot = record_slot(rec);
	size_t old_size = rec->size;
	if ((meta & RECORD_SHIFT_MASK) || backend::owns_bootstrap(rec))
		/* glibc's realloc would not keep the alignment. */
		return move_block(slot, p, old_size, size, flags);
	size_t total;
	if (__builtin_add_overflow(size, sizeof(alloc_record), &total)) {
		errno = ENOMEM;
		return nullptr;
	}
	rec->meta = 0;	/* if it moves, the old place keeps no record (release()) */
	auto *nrec = static_cast<alloc_record *>(backend::realloc(rec, total));
	if (!nrec) {
		rec->meta = meta;
		return nullptr;	/* the old block is untouched, and so are its counts */
	}
	nrec->size = size;
	nrec->counter = counter_offset(slot);
	nrec->meta = RECORD_MAGIC | flags;
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
	if (!small::contains(p, g_fast.small_base) && !has_record(p))
		return backend::realloc(p, size);
	/* Counted when made: uncounted now, and kept in a record charged to nothing. */
	return reallocate(ALLOCINFO_TAG_DISCARD, p, size, RECORD_F_UNCOUNTED);
}

size_t usable_size(void *p)
{
	uintptr_t small_base = g_fast.small_base;
	if (small::contains(p, small_base))
		return small::usable(small::class_at(p, small_base));
	alloc_record *rec = record_of(p);
	uint32_t meta = rec->meta;
	if (meta & RECORD_SHIFT_MASK) {
		size_t align = (size_t)1 << ((meta & RECORD_SHIFT_MASK) >> 8);
		char *base = static_cast<char *>(p) - align;
		return backend::usable_size(base) - align;
	}
	size_t n = backend::usable_size(rec);
	return n >= sizeof(alloc_record) ? n - sizeof(alloc_record) : 0;
}

} /* namespace allocinfo */
