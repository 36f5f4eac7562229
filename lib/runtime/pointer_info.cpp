/* SPDX-License-Identifier: MIT */
/*
 * allocinfo_pointer_info(): which live counted block holds an address (block_find.h),
 * and where it was allocated. Every read goes through process_vm_readv() on this
 * process, which fails instead of faulting, so any address may be asked about; a
 * block freed meanwhile gives a stale answer, never a crash. The tag is named by the
 * reader module (reader_module.h), as the report names it.
 */
#include <errno.h>
#include <string.h>

#include "alloc.h"
#include "allocators.h"
#include "backend.h"
#include "block_find.h"
#include "read_self.h"
#include "reader_loader.h"
#include "registry.h"
#include "small_heap.h"
#include "store.h"
#include "thread_shard.h"

using namespace allocinfo;

namespace {

static_assert(block_find::MAGIC == RECORD_MAGIC && block_find::MAGIC_MASK == RECORD_MAGIC_MASK &&
	      block_find::SHIFT_MASK == RECORD_SHIFT_MASK &&
	      block_find::F_UNCOUNTED == RECORD_F_UNCOUNTED &&
	      sizeof(block_find::record) == sizeof(alloc_record) &&
	      offsetof(block_find::record, meta) == offsetof(alloc_record, meta),
	      "block_find.h knows the record");
static_assert(block_find::SMALL_SPAN_SHIFT == small::SPAN_SHIFT &&
	      block_find::SMALL_MAX_SPANS == small::MAX_SPANS &&
	      block_find::SMALL_CLASSES == small::CLASSES &&
	      block_find::SMALL_FREED == small::FREED_WORD &&
	      sizeof(block_find::trailer) == sizeof(small::trailer) &&
	      offsetof(block_find::trailer, check) == offsetof(small::trailer, check) &&
	      offsetof(block_find::trailer, size) == offsetof(small::trailer, size) &&
	      offsetof(block_find::trailer, counter) == offsetof(small::trailer, counter),
	      "block_find.h knows the small-block heap");
static_assert(block_find::small_usable(5) == small::usable(5) &&
	      block_find::small_stride(63) == small::stride(63) &&
	      block_find::small_slots(63) == small::slots_per_span(63),
	      "block_find.h cuts spans as the heap does");

#define SAME_FIELD(f) \
	(sizeof(allocinfo_reader_tag_names::f) == sizeof(allocinfo_ptr_info::f))
static_assert(SAME_FIELD(line) && SAME_FIELD(file) && SAME_FIELD(func) && SAME_FIELD(module) &&
	      SAME_FIELD(via) && SAME_FIELD(allocator),
	      "the reader module names a tag into allocinfo_ptr_info's fields");
#undef SAME_FIELD

bool safe_read(uintptr_t addr, void *buf, size_t len)
{
	return read_self(reinterpret_cast<const void *>(addr), buf, len) == 0;
}

/* The names of slot's tag, as the report prints them; left empty when the reader
 * module cannot be loaded (it says so, once). */
void name_slot(uint32_t slot, allocinfo_ptr_info *out)
{
	reader_in_use using_reader;
	const allocinfo_reader_v1 *reader = reader_module();
	if (!reader)
		return;
	allocinfo_reader_tag_names names;
	memset(&names, 0, sizeof(names));
	reader->name_pointer_tag(g_store.base, g_store.size, slot, &names);
	out->line = names.line;
	memcpy(out->file, names.file, sizeof(out->file));
	memcpy(out->func, names.func, sizeof(out->func));
	memcpy(out->module, names.module, sizeof(out->module));
	memcpy(out->via, names.via, sizeof(out->via));
	memcpy(out->allocator, names.allocator, sizeof(out->allocator));
}

} /* namespace */

extern "C" EXPORT int allocinfo_pointer_info(const void *ptr, struct allocinfo_ptr_info *out)
{
	if (!out) {
		errno = EINVAL;
		return -1;
	}
	memset(out, 0, sizeof(*out));
	uintptr_t p = (uintptr_t)ptr;
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING) {
		errno = ENOENT;
		return -1;
	}
	busy_guard guard;
	allocator_block ab;
	if (allocators_find(p, ab)) {	/* a block of the program's own allocators */
		out->start = reinterpret_cast<const void *>(ab.start);
		out->size = (size_t)ab.size;
		name_slot(ab.slot, out);
		return 0;
	}
	object_info oi;
	if (describe_object(p, oi)) {	/* code or static data of a loaded object */
		errno = ENOENT;
		return -1;
	}
	block_find::process_layout l;
	uintptr_t base = __atomic_load_n(&g_fast.small_base, __ATOMIC_ACQUIRE);
	l.small_base = base == small::NO_BASE ? 0 : base;
	l.small_len = __atomic_load_n(&g_fast.small_len, __ATOMIC_ACQUIRE);
	l.small_check = (uint16_t)g_fast.small_canary;
	l.counter_mask = g_fast.counter_mask;
	l.nr_tags = __atomic_load_n(&g_store.hdr->nr_tags, __ATOMIC_ACQUIRE);
	/* glibc's chunk headers vouch for a record only over glibc's allocator. */
	l.glibc_chunks = !RECORD_ALWAYS && backend::g_underneath == backend::underneath::glibc;
	l.tail_key_known = true;
	l.tail_key = g_fast.small_key;
	block_find::block b;
	if (!block_find::find(safe_read, l, p, b)) {
		errno = ENOENT;
		return -1;
	}
	out->start = reinterpret_cast<const void *>(b.start);
	out->size = (size_t)b.size;
	name_slot(b.slot, out);
	return 0;
}

/* The sampler names its samples' tags through here (sampling.md). */
extern "C" EXPORT int allocinfo_tag_info(unsigned int tag, struct allocinfo_ptr_info *out,
					 long long *bytes, long long *count)
{
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING || !g_store.hdr ||
	    tag < ALLOCINFO_TAG_FIRST || tag >= __atomic_load_n(&g_store.hdr->nr_tags,
							       __ATOMIC_ACQUIRE)) {
		errno = ENOENT;
		return -1;
	}
	busy_guard guard;
	if (out) {
		memset(out, 0, sizeof(*out));
		name_slot(tag, out);
	}
	/* Counts are sums over the shards that may hold any (thread_shard.h). */
	long long b = 0, c = 0;
	for (uint32_t i = 0, n = shards_in_use(); i < n; i++) {
		const char *shard = g_fast.counters + ((uint64_t)i << g_fast.shard_shift);
		const auto *ctr = reinterpret_cast<const allocinfo_counter *>(shard +
									 counter_offset(tag));
		b += __atomic_load_n(&ctr->bytes, __ATOMIC_RELAXED);
		c += __atomic_load_n(&ctr->calls, __ATOMIC_RELAXED);
	}
	if (bytes)
		*bytes = b;
	if (count)
		*count = c;
	return 0;
}
