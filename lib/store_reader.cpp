/* SPDX-License-Identifier: MIT */
/* Parsing and validation of stores, and their conversion to report rows. */
#include "store_reader.h"

#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* A string at off in the strings area; "" for offset 0. An offset outside the area
 * or a string without its NUL makes the store bad. */
std::string string_at(const std::vector<char> &strings, uint32_t off, bool *bad)
{
	if (off == 0)
		return std::string();
	if (off >= strings.size()) {
		*bad = true;
		return std::string();
	}
	const char *s = strings.data() + off;
	const void *nul = memchr(s, 0, strings.size() - off);
	if (!nul) {
		*bad = true;
		return std::string();
	}
	size_t n = (size_t)(static_cast<const char *>(nul) - s);
	return std::string(s, n < READER_MAX_STRING ? n : READER_MAX_STRING);
}

/* The report is one line per tag, space-separated: a name from a store must not be
 * able to add a token or a line. */
std::string one_token(const std::string &s, const char *fallback)
{
	if (s.empty())
		return fallback;
	std::string r(s);
	for (char &c : r)
		if ((unsigned char)c <= ' ' || c == 0x7f)
			c = '_';
	return r;
}

/* Counter sums of a hostile store must not overflow (undefined behaviour). */
int64_t saturating_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

} /* namespace */

bool read_store(const store_source &src, store_snapshot &out, std::string &why)
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

	out = store_snapshot();
	out.pid = h.pid;
	out.start_time = h.start_time;
	out.nr_cpus = h.nr_cpus;
	out.state = h.state;
	out.enabled = h.enabled;
	out.backend = h.backend;

	std::vector<char> strings(h.strings_used);
	if (h.strings_used && !src.read(h.strings_offset, strings.data(), strings.size())) {
		why = "cannot read strings";
		return false;
	}
	uint32_t nr = h.nr_tags;
	std::vector<allocinfo_store_tag> tags(nr);
	if (nr && !src.read(h.tags_offset, tags.data(), nr * sizeof(allocinfo_store_tag))) {
		why = "cannot read tags";
		return false;
	}
	/* Shards past shards_used were never written. */
	uint32_t shards = h.shards_used >= 1 && h.shards_used <= h.nr_cpus ? h.shards_used : h.nr_cpus;
	std::vector<allocinfo_counter> sums(nr), cpu(nr);
	for (uint32_t c = 0; c < shards && nr; c++) {
		if (!src.read(h.counters_offset + c * h.cpu_stride, cpu.data(),
			      nr * sizeof(allocinfo_counter))) {
			why = "cannot read counters";
			return false;
		}
		for (uint32_t i = 0; i < nr; i++) {
			sums[i].bytes = saturating_add(sums[i].bytes, cpu[i].bytes);
			sums[i].calls = saturating_add(sums[i].calls, cpu[i].calls);
		}
	}

	bool bad = false;
	out.exe = string_at(strings, h.exe_off, &bad);
	for (uint32_t i = ALLOCINFO_TAG_FIRST; i < nr; i++) {
		allocinfo_store_tag t = tags[i];
		for (int tries = 0; (t.seq & 1) && tries < 3; tries++)
			if (!src.read(h.tags_offset + (uint64_t)i * sizeof(t), &t, sizeof(t)))
				break;
		if ((t.seq & 1) || !(t.flags & ALLOCINFO_TAGF_USED))
			continue;	/* being rewritten, or free */
		tag_snapshot s;
		s.slot = i;
		s.flags = t.flags;
		s.line = t.line;
		s.addr = t.addr;
		s.file = string_at(strings, t.file_off, &bad);
		s.func = string_at(strings, t.func_off, &bad);
		s.module_path = string_at(strings, t.module_off, &bad);
		s.bytes = sums[i].bytes;
		s.calls = sums[i].calls;
		out.tags.push_back(std::move(s));
	}
	if (bad) {
		why = "string offsets out of bounds";
		return false;
	}
	return true;
}

void name_tag(const tag_snapshot &t, symbolizer *sym, site_row &r)
{
	const char *slash = strrchr(t.module_path.c_str(), '/');
	r.module = one_token(slash ? slash + 1 : t.module_path, "??");
	if (t.flags & ALLOCINFO_TAGF_DYNAMIC) {
		source_location loc;
		if (sym)
			sym->lookup(t.module_path, t.addr, true, loc);
		else {
			char hex[32];
			snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)t.addr);
			loc.file = "??";
			loc.func = hex;
		}
		r.file = one_token(loc.file, "??");
		r.line = loc.line;
		r.func = one_token(loc.func, "??");
	} else {
		r.file = one_token(t.file, "??");
		r.line = t.line;
		r.func = one_token(t.func, "??");
	}
}

void snapshot_rows(const store_snapshot &s, symbolizer *sym, std::vector<site_row> &rows)
{
	for (const tag_snapshot &t : s.tags) {
		bool zero = t.bytes == 0 && t.calls == 0;
		if ((t.flags & ALLOCINFO_TAGF_UNLOADED) && zero)
			continue;	/* its memory is gone: the tag leaves the report */
		if ((t.flags & (ALLOCINFO_TAGF_OVERFLOW | ALLOCINFO_TAGF_DYNAMIC)) && zero)
			continue;	/* only static tags are listed while idle */
		site_row r;
		name_tag(t, sym, r);
		r.bytes = t.bytes;
		r.calls = t.calls;
		r.unloaded = (t.flags & ALLOCINFO_TAGF_UNLOADED) != 0;
		r.pid = s.pid;
		rows.push_back(std::move(r));
	}
}

} /* namespace allocinfo */
