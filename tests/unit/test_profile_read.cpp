/* SPDX-License-Identifier: MIT */
/*
 * test_profile_read.cpp - unit tests of lib/reader/profile_read.cpp and
 * render_pprof_merged(): a profile written by render_pprof() reads back with every
 * field, the merged profile keeps the sampled types and replaces the exact ones, and
 * hostile input (every truncation, byte overwrites, huge lengths, a gzip bomb) is
 * refused with a reason, never a crash (run it under ASan).
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

#include "profile_read.h"
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
	bool site = false;
	for (const pprof_label &l : m.samples[2].labels)
		site |= str(m, l.key) == "site" && str(m, l.str) == "c.c:30";
	assert_true(site);

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
	std::string gz, why;
	std::vector<site_row> rows = two_rows();
	for (int i = 0; i < 40; i++)
		rows.push_back(row("many.c", 100 + i, "f", i, 1));
	assert_true(render_pprof(gz, rows, 1));
	const std::string raw = gunzipped(gz);
	pprof_profile p;
	/* Every truncation of the bare and of the gzipped bytes: no crash; the gzipped
	 * ones all fail (the stream is cut). */
	for (size_t n = 0; n < raw.size(); n++)
		read_pprof(raw.substr(0, n), p, why);
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
			read_pprof(bad, p, why);
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

} /* namespace */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_merged),
		cmocka_unit_test(test_hostile),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
