/* SPDX-License-Identifier: MIT */
/* The less frequent allocation paths: aligned blocks, realloc, checks, start-up. */
#include "alloc.h"

#include <string.h>
#include <unistd.h>

namespace allocinfo {

alloc_tag g_discard_tag = { "", "", 0, 0, ALLOCINFO_TAG_DISCARD, 0 };

settle settle_state()
{
	ensure_init();
	switch (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE)) {
	case STATE_RUNNING:
		return settle::run;
	case STATE_STARTING:
	case STATE_UNINIT:	/* a sanitizer build before constructors: the bootstrap arena */
		return settle::discard;	/* the initialising thread, allocating */
	default:
		return settle::plain;
	}
}

void *allocate_aligned(uint32_t slot, size_t align, size_t size, size_t reserve)
{
	if (reserve < size)
		reserve = size;
	if (align <= sizeof(alloc_record) && reserve == size)
		return allocate(slot, size, false);
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
	return finish(base, reinterpret_cast<alloc_record *>(base + align) - 1, slot, size, shift);
}

bool check_pointer(void *p, const char *what)
{
	alloc_record *rec = record_of(p);
	const char *problem = nullptr;
	if ((uintptr_t)p & (sizeof(alloc_record) - 1))
		problem = "misaligned";
	else if ((rec->meta & RECORD_MAGIC_MASK) != RECORD_MAGIC)
		problem = "no allocinfo record: never allocated here, or already freed";
	else if (rec->tag > g_fast.slot_mask)
		problem = "corrupt record";
	if (!problem)
		return true;
	log_message("%s(%p): %s; leaving it alone", what, p, problem);
	return false;
}

void *reallocate(uint32_t slot, void *p, size_t size)
{
	if (unlikely(g_fast.debug) && !check_pointer(p, "realloc")) {
		errno = EINVAL;
		return nullptr;
	}
	if (foreign(p))
		return backend::realloc(p, size);	/* stays the sanitizer's, uncounted */
	alloc_record *rec = record_of(p);
	uint32_t old_slot = rec->tag;
	size_t old_size = rec->size;
	if ((rec->meta & RECORD_SHIFT_MASK) || backend::owns_bootstrap(rec)) {
		/* glibc's realloc would not keep the alignment: move it by hand. */
		void *q = allocate(slot, size, false);
		if (!q)
			return nullptr;
		memcpy(q, p, old_size < size ? old_size : size);
		release(p);
		return q;
	}
	size_t total;
	if (__builtin_add_overflow(size, sizeof(alloc_record), &total)) {
		errno = ENOMEM;
		return nullptr;
	}
	auto *nrec = static_cast<alloc_record *>(backend::realloc(rec, total));
	if (!nrec)
		return nullptr;	/* the old block is untouched, and so are its counts */
	nrec->size = size;
	nrec->tag = slot;
	if (old_slot == slot) {
		count(slot, (int64_t)size - (int64_t)old_size, 0);
	} else {
		count_recorded(old_slot, -(int64_t)old_size, -1);
		count(slot, (int64_t)size, 1);
	}
	return nrec + 1;
}

size_t usable_size(void *p)
{
	if (foreign(p))
		return backend::usable_size(p);
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
