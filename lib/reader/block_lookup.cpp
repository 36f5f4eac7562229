/* SPDX-License-Identifier: MIT */
/* Finding the block that holds an address in another process (block_lookup.h). */
#include "block_lookup.h"

#include <errno.h>
#include <string.h>
#include <sys/uio.h>

#include "block_find.h"

namespace allocinfo {

bool find_block_owner(int pid, const store_snapshot &snap, uint64_t addr, symbolizer *sym,
		      block_owner &out, std::string &why)
{
	why.clear();
	int err = 0;
	auto read = [pid, &err](uintptr_t at, void *buf, size_t len) {
		struct iovec local = { buf, len };
		struct iovec remote = { reinterpret_cast<void *>(at), len };
		ssize_t n = process_vm_readv(pid, &local, 1, &remote, 1, 0);
		if (n < 0 && errno != EFAULT && errno != EIO)
			err = errno;
		return n == (ssize_t)len;
	};
	const allocinfo_store_header &h = snap.header;
	block_find::process_layout l;
	l.small_base = h.small_base;
	/* The heap's length grows: read where the process keeps it. */
	uint64_t small_len = 0;
	if (!h.small_len_at || !read((uintptr_t)h.small_len_at, &small_len, sizeof(small_len)))
		l.small_base = 0;
	l.small_len = (uintptr_t)small_len;
	l.small_check = 0;	/* the canary is the process's own */
	l.counter_mask = h.tag_capacity ? (h.tag_capacity - 1) << 4 : 0;
	l.nr_tags = h.nr_tags;
	l.glibc_chunks = (h.block_layout & ALLOCINFO_BLOCKS_GLIBC) != 0;
	l.tail_key_known = false;	/* the process's own secret */
	l.tail_key = 0;
	block_find::block b;
	bool found = block_find::find(read, l, (uintptr_t)addr, b);
	if (err) {
		why = std::string("cannot read the memory of process ") + std::to_string(pid) +
		      ": " + strerror(err);
		return false;
	}
	if (!found)
		return false;
	for (const tag_snapshot &t : snap.tags)
		if (t.slot == b.slot) {
			out.start = b.start;
			out.size = b.size;
			name_tag(t, sym, out.site);
			if (out.site.allocator.empty())
				out.site.allocator = "malloc";
			return true;
		}
	return false;	/* a slot the store does not list: not a counted tag */
}

std::string describe_block_owner(uint64_t addr, const block_owner &b)
{
	char head[160];
	snprintf(head, sizeof(head), "0x%llx: %llu bytes into %llu bytes at 0x%llx from ",
		 (unsigned long long)addr, (unsigned long long)(addr - b.start),
		 (unsigned long long)b.size, (unsigned long long)b.start);
	std::string s = head;
	const site_row &r = b.site;
	s += r.file + ":" + std::to_string(r.line);
	if (!r.module.empty())
		s += " [" + r.module + "]";
	s += " func:" + r.func;
	if (!r.via.empty())
		s += " via:" + r.via;
	s += " allocator:" + r.allocator;
	return s;
}

} /* namespace allocinfo */
