// SPDX-License-Identifier: MIT
/*
 * Writes the fuzz seed corpus: small stores (a few KiB each), valid and broken, in
 * the layout of lib/store/store_format.h. Usage: gen_corpus DIR. The files are kept in
 * the source tree (tests/fuzz/corpus); `make fuzz-corpus` rewrites them.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <vector>

#include "store_format.h"

namespace {

struct tag {
	uint32_t flags;
	std::string file, func, module;
	uint32_t line;
	uint64_t addr;
	std::vector<allocinfo_counter> per_cpu;	/* one per CPU */
	uint32_t seq = 0;
};

/* A compact, valid store: header, tag slots, strings, then the counters. */
std::vector<uint8_t> build(uint32_t nr_cpus, uint32_t capacity, const std::vector<tag> &tags,
			   const std::string &exe = "/usr/bin/demo")
{
	allocinfo_store_header h;
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, ALLOCINFO_STORE_MAGIC, sizeof(h.magic));
	h.version = ALLOCINFO_STORE_VERSION;
	h.header_size = sizeof(h);
	h.pid = 4242;
	h.nr_cpus = nr_cpus;
	h.start_time = 123456;
	h.tag_capacity = capacity;
	h.nr_tags = ALLOCINFO_TAG_FIRST + (uint32_t)tags.size();
	h.enabled = 1;
	h.state = ALLOCINFO_STATE_LIVE;

	std::string strings(1, '\0');	/* offset 0: no string */
	auto intern = [&](const std::string &s) -> uint32_t {
		if (s.empty())
			return 0;
		uint32_t off = (uint32_t)strings.size();
		strings += s;
		strings += '\0';
		return off;
	};
	std::vector<allocinfo_store_tag> slots(capacity);
	memset(slots.data(), 0, slots.size() * sizeof(slots[0]));
	for (size_t i = 0; i < tags.size(); i++) {
		allocinfo_store_tag &s = slots[ALLOCINFO_TAG_FIRST + i];
		s.seq = tags[i].seq;
		s.flags = tags[i].flags;
		s.file_off = intern(tags[i].file);
		s.func_off = intern(tags[i].func);
		s.module_off = intern(tags[i].module);
		s.line = tags[i].line;
		s.addr = tags[i].addr;
	}
	h.exe_off = intern(exe);

	h.tags_offset = sizeof(h);
	h.strings_offset = h.tags_offset + capacity * sizeof(allocinfo_store_tag);
	h.strings_capacity = strings.size() + 64;
	h.strings_used = strings.size();
	h.counters_offset = h.strings_offset + h.strings_capacity;
	h.cpu_stride = capacity * sizeof(allocinfo_counter);
	h.total_size = h.counters_offset + nr_cpus * h.cpu_stride;

	std::vector<uint8_t> out(h.total_size);
	memcpy(out.data(), &h, sizeof(h));
	memcpy(out.data() + h.tags_offset, slots.data(), slots.size() * sizeof(slots[0]));
	memcpy(out.data() + h.strings_offset, strings.data(), strings.size());
	for (size_t i = 0; i < tags.size(); i++)
		for (uint32_t c = 0; c < nr_cpus && c < tags[i].per_cpu.size(); c++)
			memcpy(out.data() + h.counters_offset + c * h.cpu_stride +
				       (ALLOCINFO_TAG_FIRST + i) * sizeof(allocinfo_counter),
			       &tags[i].per_cpu[c], sizeof(allocinfo_counter));
	return out;
}

allocinfo_store_header *header(std::vector<uint8_t> &s)
{
	return reinterpret_cast<allocinfo_store_header *>(s.data());
}

std::vector<tag> basic_tags()
{
	return {
		{ALLOCINFO_TAGF_USED, "src/main.c", "main", "/usr/bin/demo", 12, 0,
		 {{4096, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED, "src/list.c", "list_add", "/usr/bin/demo", 40, 0,
		 {{320, 10}, {64, 2}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_CXX, "src/obj.cpp",
		 "void ns::obj<int>::grow(size_t) [with T = int]", "/usr/lib/libobj.so.1", 7, 0,
		 {{100, 1}, {100, 1}}},
		{ALLOCINFO_TAGF_USED, "src/idle.c", "idle", "/usr/bin/demo", 3, 0, {{0, 0}, {0, 0}}},
	};
}

bool write_file(const std::string &dir, const char *name, const std::vector<uint8_t> &data)
{
	std::string path = dir + "/" + name;
	FILE *f = fopen(path.c_str(), "wb");
	if (!f || fwrite(data.data(), 1, data.size(), f) != data.size() || fclose(f) != 0) {
		perror(path.c_str());
		return false;
	}
	return true;
}

} /* namespace */

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: gen_corpus DIR\n");
		return 2;
	}
	std::string dir = argv[1];
	bool ok = true;
	auto put = [&](const char *name, const std::vector<uint8_t> &d) {
		ok = write_file(dir, name, d) && ok;
	};

	/* Valid stores. */
	put("valid-basic", build(2, 8, basic_tags()));
	put("valid-empty", build(1, 2, {}));
	put("valid-dynamic", build(2, 8, {
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/usr/lib/libc.so.6", 0,
		 0x9a3f0, {{72704, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/usr/bin/demo", 0, 0x1234,
		 {{0, 0}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_OVERFLOW | ALLOCINFO_TAGF_DYNAMIC, "", "",
		 "", 0, 0, {{16, 1}, {16, 1}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_UNLOADED, "plugin.c", "load",
		 "/usr/lib/plugin.so", 5, 0, {{256, 2}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_UNLOADED, "plugin.c", "gone",
		 "/usr/lib/plugin.so", 9, 0, {{0, 0}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_SCOPE, "scope.c", "work", "/usr/bin/demo",
		 77, 0, {{8, 1}, {8, 1}}},
	}));
	put("valid-hostile-names", build(2, 8, {
		{ALLOCINFO_TAGF_USED, "a b\nfake 1 2 x.c:1 [m] func:f", "f\tg\r", "/x/m\n", 1, 0,
		 {{1, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED, "q\"uo\\te", "\xff\xfe\xc3(", "/lib/\x01\x7f.so", 2, 0,
		 {{2, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED, "same.c", "f", "/bin/m", 3, 0, {{5, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED, "same.c", "f", "/usr/bin/m", 3, 0, {{6, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED, "", "", "", 4294967295u, 0, {{7, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED, std::string(5000, 'L'), "long", "/bin/m", 5, 0,
		 {{8, 1}, {0, 0}}},
	}, "/bin/\n"));
	put("valid-extreme-counts", build(4, 8, {
		{ALLOCINFO_TAGF_USED, "neg.c", "f", "/bin/m", 1, 0,
		 {{-100, -1}, {50, 1}, {0, 0}, {0, -1}}},
		{ALLOCINFO_TAGF_USED, "big.c", "f", "/bin/m", 2, 0,
		 {{INT64_MAX, INT64_MAX}, {INT64_MAX, 1}, {1, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED, "small.c", "f", "/bin/m", 3, 0,
		 {{INT64_MIN, INT64_MIN}, {-1, -1}, {0, 0}, {0, 0}}},
		{ALLOCINFO_TAGF_USED, "big.c", "f", "/bin/m", 2, 0, {{1, 1}, {0, 0}, {0, 0}, {0, 0}}},
	}));
	/* Another program's site with negative counts, as a store that would lower
	 * that program's line in the combined report. */
	put("valid-negative-site", build(2, 8, {
		{ALLOCINFO_TAGF_USED, "hold.c", "main", "/usr/bin/hold", 7, 0,
		 {{-102000, -4}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/usr/bin/hold", 0, 0x1139,
		 {{-1, 0}, {0, -1}}},
	}));
	/* Caller tags in objects that are not regular files, or not there: a reader must
	 * not open, block on or read them. */
	put("valid-hostile-modules", build(2, 16, {
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/dev/zero", 0, 0x1000,
		 {{1, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/dev/stdin", 0, 0x1000,
		 {{1, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/proc/self/fd/0", 0, 0,
		 {{1, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/tmp", 0, ~0ull,
		 {{1, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/nonexistent/x.so", 0, 1,
		 {{1, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/proc/self/exe", 0,
		 0x8000000000000000ull, {{1, 1}, {0, 0}}},
		{ALLOCINFO_TAGF_USED | ALLOCINFO_TAGF_DYNAMIC, "", "", "/etc/shadow", 0, 0x10,
		 {{1, 1}, {0, 0}}},
	}));
	{
		std::vector<tag> t = basic_tags();
		t[1].seq = 3;	/* a slot being rewritten */
		t.push_back({0, "free.c", "unused", "/bin/m", 1, 0, {{9, 9}, {0, 0}}});
		t.push_back({0xffffffffu, "flags.c", "all", "/bin/m", 1, 0x10, {{1, 1}, {0, 0}}});
		put("valid-odd-slots", build(2, 16, t));
	}

	/* Broken stores. */
	put("bad-empty", {});
	std::vector<uint8_t> good = build(2, 8, basic_tags());
	put("bad-truncated-header", std::vector<uint8_t>(good.begin(), good.begin() + 40));
	put("bad-truncated-counters", std::vector<uint8_t>(good.begin(), good.end() - 20));
	{
		std::vector<uint8_t> s = good;
		s[0] = 'X';
		put("bad-magic", s);
		s = good;
		header(s)->version = 99;
		put("bad-version", s);
		s = good;
		header(s)->header_size = 8;
		put("bad-header-size", s);
		s = good;
		header(s)->nr_tags = header(s)->tag_capacity + 1;
		put("bad-nr-tags", s);
		s = good;
		header(s)->nr_cpus = 0xffffffffu;
		put("bad-nr-cpus", s);
		s = good;
		header(s)->cpu_stride = 1ull << 62;
		put("bad-cpu-stride", s);
		s = good;
		header(s)->counters_offset = ~0ull - 8;
		put("bad-counters-offset", s);
		s = good;
		header(s)->tags_offset = ~0ull - 16;
		put("bad-tags-offset", s);
		s = good;
		header(s)->strings_used = header(s)->strings_capacity + 1;
		put("bad-strings-used", s);
		s = good;
		header(s)->strings_offset = (uint64_t)s.size() - 1;
		put("bad-strings-offset", s);
		s = good;
		header(s)->tag_capacity = 0;
		put("bad-capacity", s);
		s = good;
		header(s)->tag_capacity = 65537;	/* past the readers' bound */
		put("bad-too-many-tags", s);
		s = good;
		header(s)->strings_capacity = (16ull << 20) + 1;
		put("bad-too-many-strings", s);
		s = good;
		header(s)->exe_off = 0xfffffff0u;
		put("bad-exe-offset", s);
		s = good;
		/* A string that runs to the end of the strings area without its NUL. */
		allocinfo_store_header *h = header(s);
		s[h->strings_offset + h->strings_used - 1] = 'x';
		put("bad-unterminated-string", s);
		s = good;
		h = header(s);
		reinterpret_cast<allocinfo_store_tag *>(s.data() + h->tags_offset)[2].func_off =
			0x7fffffff;
		put("bad-func-offset", s);
	}
	return ok ? 0 : 1;
}
