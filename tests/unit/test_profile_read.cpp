/* SPDX-License-Identifier: MIT */
/*
 * test_profile_read.cpp - unit tests of lib/reader/profile_read.cpp and the pprof
 * writers: a profile written by render_pprof() or render_heap_proto() reads back with
 * every field, the merged profile keeps the sampled types and replaces the exact ones
 * (whatever ids the sampled file used), and hostile input (every truncation, byte
 * overwrites, huge lengths, ids defined twice, a gzip bomb) is refused with a
 * reason, never a crash (run it under ASan).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include <cmocka.h>
}

#include <zlib.h>

#include <string>
#include <vector>

#include "heap_profile.h"
#include "profile_read.h"
#include "proto_write.h"
#include "report.h"

using namespace allocinfo;

namespace {

site_row row(const char *file, unsigned line, const char *func, int64_t bytes, int64_t calls)
{
	site_row r;
	r.module = "demo";
	r.file = file;
	r.line = line;
	r.func = func;
	r.bytes = bytes;
	r.calls = calls;
	return r;
}

std::vector<site_row> two_rows()
{
	return { row("a.c", 10, "make_a", 4096, 2), row("b.c", 20, "make_b", 100, 1) };
}

std::string gunzipped(const std::string &gz)
{
	std::string out(1 << 20, '\0');
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)gz.data();
	zs.avail_in = (uInt)gz.size();
	zs.next_out = (Bytef *)&out[0];
	zs.avail_out = (uInt)out.size();
	assert_int_equal(inflate(&zs, Z_FINISH), Z_STREAM_END);
	out.resize(out.size() - zs.avail_out);
	inflateEnd(&zs);
	return out;
}

const std::string &str(const pprof_profile &p, int64_t i)
{
	return p.strings[(size_t)i];
}

bool has_label(const pprof_profile &p, const pprof_sample &s, const char *key, const char *value)
{
	for (const pprof_label &l : s.labels)
		if (str(p, l.key) == key && str(p, l.str) == value)
			return true;
	return false;
}

void test_round_trip(void **)
{
	std::string gz, why;
	assert_true(render_pprof(gz, two_rows(), 1234));
	pprof_profile p;
	assert_true(read_pprof(gz, p, why));
	assert_int_equal(p.sample_types.size(), 2);
	assert_string_equal(str(p, p.sample_types[1].first).c_str(), "inuse_space");
	assert_string_equal(str(p, p.sample_types[1].second).c_str(), "bytes");
	assert_int_equal(p.samples.size(), 2);
	assert_int_equal(p.samples[0].values[0], 2);
	assert_int_equal(p.samples[0].values[1], 4096);
	assert_int_equal(p.locations.size(), 2);
	assert_int_equal(p.functions.size(), 2);
	assert_string_equal(str(p, p.functions[1].name).c_str(), "make_b");
	assert_string_equal(str(p, p.functions[1].filename).c_str(), "b.c");
	assert_int_equal(p.locations[1].lines[0].line, 20);
	assert_int_equal(p.mappings.size(), 1);
	assert_string_equal(str(p, p.mappings[0].filename).c_str(), "demo");
	assert_int_equal(p.time_nanos, 1234);
	assert_int_equal(p.period, 1);
	assert_string_equal(str(p, p.default_sample_type).c_str(), "inuse_space");
	/* A bare (not gzipped) profile reads the same. */
	pprof_profile q;
	assert_true(read_pprof(gunzipped(gz), q, why));
	assert_int_equal(q.samples.size(), 2);
}

void test_merged(void **)
{
	/* A "sampled" profile: render_pprof's, its types renamed by hand is not needed:
	 * its two types are kept and the exact pair added after them. */
	std::string gz, merged, why;
	assert_true(render_pprof(gz, two_rows(), 1));
	pprof_profile p, m;
	assert_true(read_pprof(gz, p, why));
	std::vector<site_row> now = { row("c.c", 30, "make_c", 777, 3) };
	assert_true(render_pprof_merged(merged, p, now, 99));
	assert_true(read_pprof(merged, m, why));
	assert_int_equal(m.sample_types.size(), 4);
	assert_string_equal(str(m, m.sample_types[2].first).c_str(), "exact_inuse_objects");
	assert_string_equal(str(m, m.sample_types[3].first).c_str(), "exact_inuse_space");
	assert_int_equal(m.samples.size(), 3);
	assert_int_equal(m.samples[0].values[1], 4096);
	assert_int_equal(m.samples[0].values[3], 0);
	assert_int_equal(m.samples[2].values[0], 0);
	assert_int_equal(m.samples[2].values[2], 3);
	assert_int_equal(m.samples[2].values[3], 777);
	assert_true(has_label(m, m.samples[2], "site", "c.c:30"));

	/* Merged again: the exact samples of the first merge are replaced, not kept. */
	std::string again;
	pprof_profile a;
	assert_true(render_pprof_merged(again, m, now, 99));
	assert_true(read_pprof(again, a, why));
	assert_int_equal(a.sample_types.size(), 4);
	assert_int_equal(a.samples.size(), 3);
}

void test_hostile(void **)
{
#if defined(__SANITIZE_THREAD__)
	/* One thread parsing: nothing for ThreadSanitizer to find, at 40 s of its time.
	 * The plain and ASan builds run it, and `make fuzz` goes further. */
	skip();
#endif
	std::string gz, why;
	std::vector<site_row> rows = two_rows();
	for (int i = 0; i < 40; i++)
		rows.push_back(row("many.c", 100 + i, "f", i, 1));
	assert_true(render_pprof(gz, rows, 1));
	const std::string raw = gunzipped(gz);
	pprof_profile p;
	/* Every truncation of the bare and of the gzipped bytes: no crash. A bare cut
	 * between two of the profile's fields can still be a valid, shorter profile;
	 * any other cut fails with a reason. The gzipped ones all fail (the stream is
	 * cut). */
	assert_true(read_pprof(raw, p, why));
	const size_t full_samples = p.samples.size();
	assert_int_equal(full_samples, 42);
	size_t cuts_read = 0;
	for (size_t n = 0; n < raw.size(); n++) {
		why.clear();
		const bool ok = read_pprof(raw.substr(0, n), p, why);
		assert_int_equal(ok, why.empty());
		if (ok) {
			cuts_read++;
			assert_true(p.samples.size() <= full_samples);
			for (const pprof_sample &smp : p.samples)
				assert_int_equal(smp.values.size(), p.sample_types.size());
		}
	}
	/* The samples come first and the string table after them: every cut before
	 * the string table ends loses the empty string or a named string, so almost
	 * every cut fails. */
	assert_true(cuts_read < raw.size() / 4);
	for (size_t n = 2; n < gz.size(); n++) {
		why.clear();
		assert_false(read_pprof(gz.substr(0, n), p, why));
		assert_false(why.empty());
	}
	/* Every byte overwritten with a few values. */
	const unsigned char values[] = { 0x00, 0x01, 0x7f, 0x80, 0xff };
	for (size_t i = 0; i < raw.size(); i++)
		for (unsigned char v : values) {
			std::string bad = raw;
			bad[i] = (char)v;
			why.clear();
			const bool ok = read_pprof(bad, p, why);
			assert_int_equal(ok, why.empty());
			if (ok)
				for (const pprof_sample &smp : p.samples)
					assert_int_equal(smp.values.size(), p.sample_types.size());
		}
	/* A field claiming more bytes than there are. */
	assert_false(read_pprof(std::string("\x12\xff\xff\xff\xff\x0f", 6), p, why));
	assert_string_equal(why.c_str(), "a malformed protobuf field");
	/* Empty input: no string table. */
	assert_false(read_pprof(std::string(), p, why));
	assert_string_equal(why.c_str(), "its string table does not start with the empty string");
	/* A gzip bomb: 8 MiB of zeros, read with a 1 MiB bound. */
	std::string zeros(8 << 20, '\0'), bomb(1 << 20, '\0');
	uLongf n = (uLongf)bomb.size();
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	assert_int_equal(deflateInit2(&zs, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
	zs.next_in = (Bytef *)zeros.data();
	zs.avail_in = (uInt)zeros.size();
	zs.next_out = (Bytef *)&bomb[0];
	zs.avail_out = (uInt)n;
	assert_int_equal(deflate(&zs, Z_FINISH), Z_STREAM_END);
	bomb.resize(n - zs.avail_out);
	deflateEnd(&zs);
	assert_false(read_pprof(bomb, p, why, 1 << 20));
	assert_string_equal(why.c_str(), "it inflates to more than 1 MiB");
}

/* A hand-built profile: one sample type, the given functions and locations (each
 * location with one line naming function fid), one sample on the first location. */
std::string hand_built(const std::vector<uint64_t> &function_ids,
		       const std::vector<std::pair<uint64_t, uint64_t>> &locations)
{
	using namespace proto;
	profile_parts pp;
	std::string out;
	put_msg(pp.prof, PROFILE_SAMPLE_TYPE, value_type(pp.st, "alloc_space", "bytes"));
	for (uint64_t fid : function_ids)
		put_function(pp.functions, pp.st, fid, "f" + std::to_string(fid), "", "f.c");
	for (auto &l : locations)
		pp.location(l.first, 0, 0x1000 + l.first, l.second, 7);
	std::string smp;
	const uint64_t loc = locations[0].first, value = 640;
	put_packed(smp, SAMPLE_LOCATION_ID, &loc, 1);
	put_packed(smp, SAMPLE_VALUE, &value, 1);
	put_msg(pp.samples, PROFILE_SAMPLE, smp);
	const std::string period_type = value_type(pp.st, "space", "bytes");
	assert_true(pp.finish(out, period_type, 512, 0, 5, 6));
	return out;
}

void test_ids_twice(void **)
{
	pprof_profile p;
	std::string why;
	assert_true(read_pprof(hand_built({ 1, 2 }, { { 1, 1 }, { 2, 2 } }), p, why));
	assert_false(read_pprof(hand_built({ 1, 1 }, { { 1, 1 } }), p, why));
	assert_string_equal(why.c_str(), "it defines a mapping, location or function id twice");
	why.clear();
	assert_false(read_pprof(hand_built({ 1 }, { { 3, 1 }, { 3, 1 } }), p, why));
	assert_string_equal(why.c_str(), "it defines a mapping, location or function id twice");
}

/* Ids at the top of uint64_t: the merged profile renumbers them, so the exact
 * sites' ids that follow neither wrap to 0 nor collide. */
void test_merged_huge_ids(void **)
{
	const uint64_t top = UINT64_MAX;
	pprof_profile p, m;
	std::string why, merged;
	assert_true(read_pprof(hand_built({ top, top - 1 }, { { top, top - 1 }, { top - 1, top } }),
			       p, why));
	std::vector<site_row> now = { row("c.c", 30, "make_c", 777, 3) };
	assert_true(render_pprof_merged(merged, p, now, 99));
	assert_true(read_pprof(merged, m, why));
	assert_int_equal(m.locations.size(), 3);
	assert_int_equal(m.functions.size(), 3);
	for (size_t i = 0; i < 3; i++) {
		assert_int_equal(m.locations[i].id, i + 1);
		assert_int_equal(m.functions[i].id, i + 1);
	}
	/* Location top named function top - 1: now location 1, function 2 ("f<top-1>"). */
	assert_int_equal(m.locations[0].lines[0].function_id, 2);
	assert_string_equal(str(m, m.functions[1].name).c_str(),
			    ("f" + std::to_string(top - 1)).c_str());
	assert_int_equal(m.locations[0].address, 0x1000 + top);
	assert_int_equal(m.samples.size(), 2);
	assert_int_equal(m.samples[0].location_ids[0], 1);
	assert_int_equal(m.samples[0].values[0], 640);
	assert_int_equal(m.samples[1].location_ids[0], 3);
	assert_int_equal(m.samples[1].values[1], 3);
	assert_int_equal(m.samples[1].values[2], 777);
	assert_string_equal(str(m, m.functions[2].name).c_str(), "make_c");
	assert_int_equal(m.period, 512);
	assert_int_equal(m.duration_nanos, 6);
}

/* The built-in profiler's file: six sample types, the sampled stacks with their
 * site labels, one exact sample per site with live blocks, the mappings as given. */
void test_heap_proto(void **)
{
	allocinfo_heap_site sites[2];
	memset(sites, 0, sizeof(sites));
	sites[0].tag = 1;
	sites[0].line = 10;
	sites[0].bytes = 4096;
	sites[0].count = 2;
	strcpy(sites[0].file, "a.c");
	strcpy(sites[0].func, "make_a");
	strcpy(sites[0].module, "demo");
	sites[1].tag = 2;	/* nothing live: no exact sample */
	sites[1].line = 20;
	strcpy(sites[1].file, "b.c");
	strcpy(sites[1].func, "make_b");
	const uintptr_t deep[2] = { 0x1010, 0x2020 }, shallow[1] = { 0x2020 };
	allocinfo_heap_stack stacks[2];
	memset(stacks, 0, sizeof(stacks));
	stacks[0] = { 2, 1, deep, 3.4, 1234.5, 1.6, 700.49, 1, 100, 1, 100 };
	stacks[1] = { 1, 9, shallow, 1, 64, 0, 0, 1, 64, 0, 0 };
	allocinfo_heap_snapshot snap;
	memset(&snap, 0, sizeof(snap));
	snap.sample_rate = 524288;
	snap.time_nanos = 1000;
	snap.duration_nanos = 250;
	snap.nstacks = 2;
	snap.stacks = stacks;
	snap.nsites = 2;
	snap.sites = sites;
	loaded_segment seg;
	seg.start = 0x1000;
	seg.limit = 0x3000;
	seg.path = "/bin/demo";
	seg.build_id = "abcd";

	std::string gz, why;
	pprof_profile p;
	assert_true(render_heap_proto(gz, snap, { seg }, nullptr));
	assert_true(read_pprof(gz, p, why));
	static const char *const types[] = { "alloc_objects", "alloc_space", "inuse_objects",
					     "inuse_space", "exact_inuse_objects",
					     "exact_inuse_space" };
	assert_int_equal(p.sample_types.size(), 6);
	for (size_t i = 0; i < 6; i++)
		assert_string_equal(str(p, p.sample_types[i].first).c_str(), types[i]);
	assert_int_equal(p.samples.size(), 3);
	const int64_t first[6] = { 3, 1235, 2, 700, 0, 0 };
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(p.samples[0].values[i], first[i]);
	assert_int_equal(p.samples[0].location_ids.size(), 2);
	assert_int_equal(p.samples[0].location_ids[0], 1);
	assert_int_equal(p.samples[0].location_ids[1], 2);
	assert_true(has_label(p, p.samples[0], "site", "a.c:10"));
	/* The second stack reuses the location of 0x2020 and has no known site. */
	assert_int_equal(p.samples[1].location_ids.size(), 1);
	assert_int_equal(p.samples[1].location_ids[0], 2);
	assert_int_equal(p.samples[1].labels.size(), 0);
	/* The exact sample of a.c:10. */
	const int64_t exact[6] = { 0, 0, 0, 0, 2, 4096 };
	for (size_t i = 0; i < 6; i++)
		assert_int_equal(p.samples[2].values[i], exact[i]);
	assert_true(has_label(p, p.samples[2], "site", "a.c:10"));
	assert_true(has_label(p, p.samples[2], "module", "demo"));
	assert_int_equal(p.locations.size(), 3);
	assert_int_equal(p.locations[0].address, 0x1010);
	assert_int_equal(p.locations[0].mapping_id, 1);
	assert_int_equal(p.locations[0].lines.size(), 0);	/* no symbolizer */
	const pprof_location &site_loc = p.locations[2];
	assert_int_equal(site_loc.id, p.samples[2].location_ids[0]);
	assert_int_equal(site_loc.lines.size(), 1);
	assert_int_equal(site_loc.lines[0].line, 10);
	assert_int_equal(p.functions.size(), 1);
	assert_string_equal(str(p, p.functions[0].name).c_str(), "make_a");
	assert_string_equal(str(p, p.functions[0].filename).c_str(), "a.c");
	assert_int_equal(p.mappings.size(), 1);
	assert_int_equal(p.mappings[0].memory_start, 0x1000);
	assert_int_equal(p.mappings[0].memory_limit, 0x3000);
	assert_string_equal(str(p, p.mappings[0].filename).c_str(), "/bin/demo");
	assert_string_equal(str(p, p.mappings[0].build_id).c_str(), "abcd");
	assert_true(p.mappings[0].has_functions);
	assert_int_equal(p.period, 524288);
	assert_string_equal(str(p, p.period_type.first).c_str(), "space");
	assert_string_equal(str(p, p.default_sample_type).c_str(), "inuse_space");
	assert_int_equal(p.time_nanos, 1000);
	assert_int_equal(p.duration_nanos, 250);
}

} /* namespace */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_merged),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_ids_twice),
		cmocka_unit_test(test_merged_huge_ids),
		cmocka_unit_test(test_heap_proto),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
