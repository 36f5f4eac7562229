/* SPDX-License-Identifier: MIT */
/*
 * allocinfo_pointer_info(): which live counted block holds an address (block_find.h),
 * and where it was allocated. Every read goes through process_vm_readv() on this
 * process, which fails instead of faulting, so any address may be asked about; a
 * block freed meanwhile gives a stale answer, never a crash.
 */
#include <errno.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <string>

#include "alloc.h"
#include "allocators.h"
#include "block_find.h"
#include "registry.h"
#include "store.h"
#include "store_reader.h"
#include "symbolize.h"

namespace allocinfo {
symbolizer *own_symbolizer() HIDDEN;	/* api.cpp */
}

using namespace allocinfo;

namespace {

static_assert(block_find::MAGIC == RECORD_MAGIC && block_find::MAGIC_MASK == RECORD_MAGIC_MASK &&
	      block_find::SHIFT_MASK == RECORD_SHIFT_MASK &&
	      block_find::F_UNCOUNTED == RECORD_F_UNCOUNTED &&
	      sizeof(block_find::record) == sizeof(alloc_record) &&
	      offsetof(block_find::record, meta) == offsetof(alloc_record, meta),
	      "block_find.h knows the record");
static_assert(block_find::SMALL_CLASS_SHIFT == small::CLASS_SHIFT &&
	      block_find::SMALL_CLASSES == small::CLASSES &&
	      block_find::SMALL_FREED == small::FREED &&
	      sizeof(block_find::trailer) == sizeof(small::trailer),
	      "block_find.h knows the small-block heap");

bool safe_read(uintptr_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len };
	struct iovec remote = { reinterpret_cast<void *>(addr), len };
	return process_vm_readv(getpid(), &local, 1, &remote, 1, 0) == (ssize_t)len;
}

void copy(char *dst, size_t len, const std::string &s)
{
	snprintf(dst, len, "%s", s.c_str());
}

/* The names of slot's tag, as the report prints them. */
void name_slot(uint32_t slot, allocinfo_ptr_info *out)
{
	allocinfo_store_tag t;
	allocinfo_store_tag_ext ext;
	for (int tries = 0;; tries++) {
		uint32_t seq = __atomic_load_n(&g_store.tags[slot].seq, __ATOMIC_ACQUIRE);
		memcpy(&t, &g_store.tags[slot], sizeof(t));
		ext = g_store.ext[slot];
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
		if (!(seq & 1) && seq == __atomic_load_n(&g_store.tags[slot].seq, __ATOMIC_RELAXED))
			break;
		if (tries == 100)
			return;
	}
	uint64_t used = __atomic_load_n(&g_store.hdr->strings_used, __ATOMIC_ACQUIRE);
	auto str = [used](uint32_t off) {
		return off && off < used ? std::string_view(g_store.strings + off) : std::string_view();
	};
	tag_snapshot ts;
	ts.slot = slot;
	ts.flags = t.flags;
	ts.line = t.line;
	ts.addr = t.addr;
	ts.file = str(t.file_off);
	ts.func = str(t.func_off);
	ts.module_path = str(t.module_off);
	ts.via = str(ext.via_off);
	ts.allocator = str(ext.allocator_off);
	site_row row;
	name_tag(ts, (t.flags & ALLOCINFO_TAGF_DYNAMIC) ? own_symbolizer() : nullptr, row);
	out->line = row.line;
	copy(out->file, sizeof(out->file), row.file);
	copy(out->func, sizeof(out->func), row.func);
	copy(out->module, sizeof(out->module), row.module);
	copy(out->via, sizeof(out->via), row.via);
	copy(out->allocator, sizeof(out->allocator), row.allocator.empty() ? "malloc" : row.allocator);
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
	l.small_base = g_fast.small_base == small::NO_BASE ? 0 : g_fast.small_base;
	l.counter_mask = g_fast.counter_mask;
	l.nr_tags = __atomic_load_n(&g_store.hdr->nr_tags, __ATOMIC_ACQUIRE);
	l.glibc_chunks = !RECORD_ALWAYS;
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
