/* SPDX-License-Identifier: MIT */
/* Parsing and validation of stores, and their conversion to report rows. */
#include "store_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>

#include "saturating.h"
#include "symbolize.h"

namespace allocinfo {

bool memory_source::read(uint64_t off, void *buf, size_t len) const
{
	if (off > size_ || len > size_ - off)
		return false;
	memcpy(buf, static_cast<const char *>(base_) + off, len);
	return true;
}

file_source::file_source(int fd) : fd_(fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && st.st_size > 0)
		size_ = (uint64_t)st.st_size;
}

bool file_source::read(uint64_t off, void *buf, size_t len) const
{
	if (off > size_ || len > size_ - off)
		return false;
	size_t done = 0;
	while (done < len) {
		ssize_t n = pread(fd_, static_cast<char *>(buf) + done, len - done,
				  (off_t)(off + done));
		if (n <= 0)
			return false;
		done += (size_t)n;
	}
	return true;
}

namespace {

bool region_ok(uint64_t off, uint64_t len, uint64_t size)
{
	return off <= size && len <= size - off;
}

/*
 * The strings area of a store: NUL-terminated strings, looked up by offset. An
 * offset outside the area or a string without its NUL makes the store bad; names
 * longer than READER_MAX_STRING are cut. Finding the NUL costs at most
 * READER_MAX_STRING bytes whatever the area holds (the last NUL of the area is known),
 * and tags usually repeat the offsets of the tag before them, which are remembered.
 */
class strings_area {
public:
	explicit strings_area(const std::vector<char> &s) : s_(s)
	{
		const void *nul = s.empty() ? nullptr : memrchr(s.data(), 0, s.size());
		last_nul_ = nul ? (size_t)(static_cast<const char *>(nul) - s.data()) : 0;
		has_nul_ = nul != nullptr;
	}

	/* field: which of the tag's names (0..2), for the memory of the last offset. */
	std::string_view at(uint32_t off, unsigned field, bool *bad)
	{
		if (off == 0)
			return std::string_view();
		last &l = last_[field];
		if (l.off == off)
			return l.view;
		if (off >= s_.size()) {
			*bad = true;
			return std::string_view();
		}
		const char *p = s_.data() + off;
		size_t room = s_.size() - off;
		size_t limit = room < READER_MAX_STRING ? room : READER_MAX_STRING;
		const void *nul = memchr(p, 0, limit);
		size_t n;
		if (nul)
			n = (size_t)(static_cast<const char *>(nul) - p);
		else if (has_nul_ && last_nul_ >= off)
			n = READER_MAX_STRING;	/* a longer string, cut */
		else {
			*bad = true;
			return std::string_view();
		}
		l.off = off;
		l.view = std::string_view(p, n);
		return l.view;
	}

private:
	struct last {
		uint32_t off = 0;
		std::string_view view;
	};
	const std::vector<char> &s_;
	size_t last_nul_ = 0;
	bool has_nul_ = false;
	last last_[3];
};

/* Shards past shards_used were never written. */
uint32_t shards_to_read(const allocinfo_store_header &h)
{
	return h.shards_used >= 1 && h.shards_used <= h.nr_cpus ? h.shards_used : h.nr_cpus;
}

/*
 * The live bytes and calls of slots [0, nr): the sums over the counter shards. The
 * one place where a reader adds up shards.
 */
bool sum_counters(const store_source &src, const allocinfo_store_header &h, uint32_t nr,
		  std::vector<allocinfo_counter> &sums)
{
	sums.assign(nr, allocinfo_counter{0, 0});
	std::vector<allocinfo_counter> cpu(nr);
	uint32_t shards = shards_to_read(h);
	for (uint32_t c = 0; c < shards && nr; c++) {
		if (!src.read(h.counters_offset + c * h.cpu_stride, cpu.data(),
			      nr * sizeof(allocinfo_counter)))
			return false;
		for (uint32_t i = 0; i < nr; i++) {
			sums[i].bytes = saturating_add(sums[i].bytes, cpu[i].bytes);
			sums[i].calls = saturating_add(sums[i].calls, cpu[i].calls);
		}
	}
	return true;
}

/* A header that says nothing about the tags has changed: equal but for the
 * run-time switch, which anyone may write, and the shards in use, which grow as
 * threads start. */
bool same_tags(const allocinfo_store_header &a, const allocinfo_store_header &b)
{
	allocinfo_store_header x = a, y = b;
	x.enabled = y.enabled = 0;
	x.shards_used = y.shards_used = 0;
	return memcmp(&x, &y, sizeof(x)) == 0;
}

/* A tag's sums, never below zero: one store's tag is added to other stores' tags
 * of the same site, which a negative value would lower. */
void set_counts(tag_snapshot &t, const allocinfo_counter &sum, uint32_t &negative)
{
	t.bytes = sum.bytes < 0 ? 0 : sum.bytes;
	t.calls = sum.calls < 0 ? 0 : sum.calls;
	if (sum.bytes < 0 || sum.calls < 0)
		negative++;
}

/* Every full reading of tags gets its own id (see store_snapshot::tags_id). */
std::atomic<uint64_t> g_tags_id{0};

} /* namespace */

bool read_store(const store_source &src, store_snapshot &out, std::string &why,
		store_snapshot *reuse)
{
	allocinfo_store_header h;
	uint64_t size = src.size();
	if (!src.read(0, &h, sizeof(h))) {
		why = "truncated header";
		return false;
	}
	if (memcmp(h.magic, ALLOCINFO_STORE_MAGIC, sizeof(h.magic)) != 0) {
		why = "bad magic";
		return false;
	}
	if (h.version != ALLOCINFO_STORE_VERSION) {
		why = "unsupported version " + std::to_string(h.version);
		return false;
	}
	if (h.header_size < sizeof(h) || h.header_size > size) {
		why = "bad header size";
		return false;
	}
	if (h.nr_cpus == 0 || h.nr_cpus > READER_MAX_CPUS || h.tag_capacity == 0 ||
	    h.tag_capacity > READER_MAX_TAGS || h.nr_tags > h.tag_capacity ||
	    h.strings_used > h.strings_capacity || h.strings_capacity > READER_MAX_STRINGS) {
		why = "implausible sizes";
		return false;
	}
	if (!region_ok(h.tags_offset, (uint64_t)h.tag_capacity * sizeof(allocinfo_store_tag), size) ||
	    !region_ok(h.strings_offset, h.strings_used, size) ||
	    h.cpu_stride < (uint64_t)h.tag_capacity * sizeof(allocinfo_counter) ||
	    h.cpu_stride > (1ull << 40) ||
	    !region_ok(h.counters_offset, (uint64_t)(h.nr_cpus - 1) * h.cpu_stride +
				(uint64_t)h.nr_tags * sizeof(allocinfo_counter), size)) {
		why = "regions out of bounds";
		return false;
	}
	uint64_t counter_bytes = (uint64_t)shards_to_read(h) * h.nr_tags * sizeof(allocinfo_counter);
	if (counter_bytes > READER_MAX_COUNTER_BYTES) {
		why = "too many counters to read (" + std::to_string(counter_bytes >> 20) +
		      " MiB, at most " + std::to_string(READER_MAX_COUNTER_BYTES >> 20) + " MiB)";
		return false;
	}

	store_snapshot earlier;
	if (reuse) {
		earlier = std::move(*reuse);
		*reuse = store_snapshot();
	}
	out = store_snapshot();
	out.pid = h.pid;
	out.start_time = h.start_time;
	out.nr_cpus = h.nr_cpus;
	out.state = h.state;
	out.enabled = h.enabled;
	out.backend = h.backend;
	out.header = h;

	uint32_t nr = h.nr_tags;
	std::vector<allocinfo_counter> sums;
	if (earlier.tags_id && same_tags(earlier.header, h)) {
		/* The same tags: only their counters are read. */
		if (!sum_counters(src, h, nr, sums)) {
			why = "cannot read counters";
			return false;
		}
		out.exe = std::move(earlier.exe);
		out.tags = std::move(earlier.tags);
		out.strings = std::move(earlier.strings);
		out.tags_id = earlier.tags_id;
		for (tag_snapshot &t : out.tags)
			set_counts(t, sums[t.slot], out.negative_tags);
		return true;
	}

	std::vector<allocinfo_store_tag> tags(nr);
	if (nr && !src.read(h.tags_offset, tags.data(), nr * sizeof(allocinfo_store_tag))) {
		why = "cannot read tags";
		return false;
	}
	if (!sum_counters(src, h, nr, sums)) {
		why = "cannot read counters";
		return false;
	}
	/* Tokens: a region newer writers add; a store without one has none. */
	std::vector<allocinfo_store_tag_ext> ext;
	if (h.ext_offset) {
		if (!region_ok(h.ext_offset,
			       (uint64_t)h.tag_capacity * sizeof(allocinfo_store_tag_ext), size)) {
			why = "regions out of bounds";
			return false;
		}
		ext.resize(nr);
		if (nr && !src.read(h.ext_offset, ext.data(), nr * sizeof(allocinfo_store_tag_ext))) {
			why = "cannot read tags";
			return false;
		}
	}

	/* Strings last, as far as they reach now: a slot republished since the header
	 * was read (a freed slot given to a new tag) names strings appended meanwhile,
	 * which the writer adds before the tag. */
	uint64_t used = h.strings_used, now = 0;
	if (src.read(offsetof(allocinfo_store_header, strings_used), &now, sizeof(now)) &&
	    now > used && now <= h.strings_capacity && region_ok(h.strings_offset, now, size))
		used = now;
	out.strings.resize(used);
	if (used && !src.read(h.strings_offset, out.strings.data(), out.strings.size())) {
		why = "cannot read strings";
		return false;
	}

	bool bad = false, torn = false;
	strings_area strings(out.strings);
	out.exe = std::string(strings.at(h.exe_off, 0, &bad));
	out.tags.reserve(nr > ALLOCINFO_TAG_FIRST ? nr - ALLOCINFO_TAG_FIRST : 0);
	for (uint32_t i = ALLOCINFO_TAG_FIRST; i < nr; i++) {
		allocinfo_store_tag t = tags[i];
		for (int tries = 0; (t.seq & 1) && tries < 3; tries++)
			if (!src.read(h.tags_offset + (uint64_t)i * sizeof(t), &t, sizeof(t)))
				break;
		torn |= (t.seq & 1) != 0;
		if ((t.seq & 1) || !(t.flags & ALLOCINFO_TAGF_USED))
			continue;	/* being rewritten, or free */
		tag_snapshot s;
		s.slot = i;
		s.flags = t.flags;
		s.line = t.line;
		s.addr = t.addr;
		s.file = strings.at(t.file_off, 0, &bad);
		s.func = strings.at(t.func_off, 1, &bad);
		s.module_path = strings.at(t.module_off, 2, &bad);
		if (!ext.empty()) {
			s.via = strings.at(ext[i].via_off, 0, &bad);
			s.allocator = strings.at(ext[i].allocator_off, 0, &bad);
		}
		set_counts(s, sums[i], out.negative_tags);
		out.tags.push_back(s);
	}
	if (bad) {
		why = "string offsets out of bounds";
		return false;
	}
	/* A tag caught being rewritten is missing here: such tags are read afresh. */
	out.tags_id = torn ? 0 : ++g_tags_id;
	return true;
}

std::string negative_tags_reason(uint32_t n)
{
	return std::to_string(n) + (n == 1 ? " tag" : " tags") +
	       " with counts below zero, shown as 0";
}

void name_tag(const tag_snapshot &t, symbolizer *sym, site_row &r, const store_owner *owner)
{
	if (!sym || !(t.flags & ALLOCINFO_TAGF_DYNAMIC)) {
		name_tag_unsymbolized(t, r);
		return;
	}
	r.module = printed_module(t.module_path);
	source_location loc;
	sym->lookup(std::string(t.module_path), t.addr, true, loc, owner);
	r.file = printed_file(loc.file);
	r.line = loc.line;
	r.func = printed_word(loc.func);
	if (loc.full_func != loc.func)
		r.full_func = loc.full_func;
	name_tokens(t, r);
}

bool tag_listed(const tag_snapshot &t)
{
	bool zero = t.bytes == 0 && t.calls == 0;
	if ((t.flags & ALLOCINFO_TAGF_UNLOADED) && zero)
		return false;	/* its memory is gone: the tag leaves the report */
	if ((t.flags & (ALLOCINFO_TAGF_OVERFLOW | ALLOCINFO_TAGF_DYNAMIC)) && zero)
		return false;	/* only static tags are listed while idle */
	return true;
}

void snapshot_rows(const store_snapshot &s, symbolizer *sym, std::vector<site_row> &rows)
{
	for (const tag_snapshot &t : s.tags) {
		if (!tag_listed(t))
			continue;
		site_row r;
		name_tag(t, sym, r, &s.owner);
		r.user = s.owner.user;
		r.bytes = t.bytes;
		r.calls = t.calls;
		r.unloaded = (t.flags & ALLOCINFO_TAGF_UNLOADED) != 0;
		r.pid = s.pid;
		rows.push_back(std::move(r));
	}
}

} /* namespace allocinfo */
