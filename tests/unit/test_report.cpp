/* SPDX-License-Identifier: MIT */
/*
 * test_report.cpp - unit tests of lib/reader/report.cpp and lib/reader/pprof.cpp: exact output of
 * the text, JSON and Prometheus renderers, merging and sorting, and a pprof profile
 * taken apart again with zlib and a small protobuf decoder written here.
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

#include "report.h"

using allocinfo::site_row;

namespace {

site_row row(const char *module, const char *file, unsigned line, const char *func,
	     int64_t bytes, int64_t calls, int pid = 0)
{
	site_row r;

	r.module = module;
	r.file = file;
	r.line = line;
	r.func = func;
	r.bytes = bytes;
	r.calls = calls;
	r.pid = pid;
	return r;
}

const char HEADER[] = "allocinfo - version: 2.0\n"
		      "#     <size>  <calls> <tag info>\n";

/* ---- text ------------------------------------------------------------------- */

void test_text_rows(void **)
{
	std::vector<site_row> rows;
	std::string out;

	rows.push_back(row("demo", "tests/demo.c", 12, "main", 4096, 1));
	rows.push_back(row("libfoo.so", "foo.c", 7, "foo_init", 100, 3));
	rows.back().unloaded = true;
	rows.push_back(row("demo", "x.c", 1, "f", -5, -2));	/* transient: printed as 0 */
	rows.back().inaccurate = true;
	rows.push_back(row("", "??", 0, "g", 1, 1));		/* no module: no brackets */
	rows.push_back(row("demo", "big.c", 4294967295u, "h", INT64_MAX, 123456789));
	rows.back().unloaded = true;
	rows.back().inaccurate = true;

	allocinfo::render_text(out, rows);
	assert_string_equal(out.c_str(),
		"allocinfo - version: 2.0\n"
		"#     <size>  <calls> <tag info>\n"
		"        4096        1 tests/demo.c:12 [demo] func:main \n"
		"         100        3 foo.c:7 [libfoo.so] func:foo_init unloaded:yes \n"
		"           0        0 x.c:1 [demo] func:f accurate:no \n"
		"           1        1 ??:0 func:g \n"
		"9223372036854775807 123456789 big.c:4294967295 [demo] func:h unloaded:yes accurate:no \n");
}

void test_text_empty_and_append(void **)
{
	std::string out = "keep:";

	allocinfo::render_text(out, {});
	assert_string_equal(out.c_str(), (std::string("keep:") + HEADER).c_str());
}

void test_text_long_names(void **)
{
	std::string file(5000, 'f'), func(3000, 'u'), module(300, 'm');
	std::vector<site_row> rows;
	std::string out;

	file += ".c";
	rows.push_back(row(module.c_str(), file.c_str(), 99999, func.c_str(), 1234567, 7654));
	allocinfo::render_text(out, rows);
	std::string want = std::string(HEADER) + "     1234567     7654 " + file + ":99999 [" +
			   module + "] func:" + func + " \n";
	assert_int_equal(out.size(), want.size());
	assert_string_equal(out.c_str(), want.c_str());
}

void test_text_control_bytes(void **)
{
	std::vector<site_row> rows;
	std::string out;

	rows.push_back(row("m\n", "a\nb.c", 1, "f\r\tx\x7f", 1, 1));
	allocinfo::render_text(out, rows);
	assert_string_equal(out.c_str(),
		(std::string(HEADER) + "           1        1 a?b.c:1 [m?] func:f??x? \n").c_str());
}

void test_human_size(void **)
{
	static const struct {
		int64_t in;
		const char *out;
	} cases[] = {
		{ -1, "0B" },
		{ 0, "0B" },
		{ 1, "1B" },
		{ 1023, "1023B" },
		{ 1024, "1.00KiB" },
		{ 1536, "1.50KiB" },
		{ 4096, "4.00KiB" },
		{ 1029, "1.00KiB" },		/* 1.0048 */
		{ 1030, "1.01KiB" },		/* 1.0058 */
		{ 1048575, "1.00MiB" },		/* 1023.999 KiB rounds up a unit */
		{ 1048576, "1.00MiB" },
		{ 5368709120LL, "5.00GiB" },
		{ 1099511627776LL, "1.00TiB" },
		{ 1125899906842624LL, "1.00PiB" },
		{ INT64_MAX, "8.00EiB" },
	};

	for (const auto &c : cases)
		assert_string_equal(allocinfo::human_size(c.in).c_str(), c.out);
}

void test_text_human(void **)
{
	std::vector<site_row> rows;
	std::string out;

	rows.push_back(row("demo", "tests/demo.c", 12, "main", 4096, 1));
	rows.push_back(row("demo", "tests/demo.c", 13, "main", 512, 2));
	rows.push_back(row("demo", "tests/demo.c", 14, "main", -4096, 0));
	rows.push_back(row("demo", "tests/demo.c", 15, "main", 3 * 1048576 / 2, 3));
	rows.back().unloaded = true;
	allocinfo::render_text(out, rows, true);
	assert_string_equal(out.c_str(),
		(std::string(HEADER) +
		 "     4.00KiB        1 tests/demo.c:12 [demo] func:main \n"
		 "        512B        2 tests/demo.c:13 [demo] func:main \n"
		 "          0B        0 tests/demo.c:14 [demo] func:main \n"
		 "     1.50MiB        3 tests/demo.c:15 [demo] func:main unloaded:yes \n").c_str());
}

/* ---- merge and sort ---------------------------------------------------------- */

void test_merge_sums(void **)
{
	std::vector<site_row> rows;

	rows.push_back(row("b", "b.c", 2, "f", 10, 1, 100));
	rows.push_back(row("a", "a.c", 9, "f", 5, 1, 100));
	rows.push_back(row("b", "b.c", 2, "f", 30, 2, 200));
	rows.push_back(row("a", "a.c", 9, "f", 7, 2, 100));
	rows.push_back(row("a", "a.c", 9, "f", 1, 1, 100));
	rows.back().unloaded = true;				/* stays apart */
	rows.push_back(row("b", "b.c", 2, "f", -50, -4, 100));	/* negative parts sum */
	rows.back().inaccurate = true;
	rows.push_back(row("a", "a.c", 10, "f", 1, 1, 100));
	rows.push_back(row("a", "a.c", 9, "e", 1, 1, 100));
	rows[0].comm = "prog";
	rows[2].comm = "other";

	std::vector<site_row> m = allocinfo::merge_rows(rows, false);
	assert_int_equal(m.size(), 5);
	/* (module, file, line, func), loaded before unloaded */
	assert_string_equal(m[0].func.c_str(), "e");
	assert_int_equal(m[0].line, 9);
	assert_string_equal(m[1].func.c_str(), "f");
	assert_int_equal(m[1].line, 9);
	assert_false(m[1].unloaded);
	assert_int_equal(m[1].bytes, 12);
	assert_int_equal(m[1].calls, 3);
	assert_true(m[2].unloaded);
	assert_int_equal(m[2].line, 9);
	assert_int_equal(m[2].bytes, 1);
	assert_int_equal(m[3].line, 10);
	assert_string_equal(m[4].module.c_str(), "b");
	assert_int_equal(m[4].bytes, -10);	/* raw sum kept; renderers clamp */
	assert_int_equal(m[4].calls, -1);
	assert_true(m[4].inaccurate);
	for (const site_row &r : m) {
		assert_int_equal(r.pid, 0);
		assert_true(r.comm.empty());
	}

	m = allocinfo::merge_rows(rows, true);
	assert_int_equal(m.size(), 6);
	assert_string_equal(m[4].module.c_str(), "b");
	assert_int_equal(m[4].pid, 100);
	assert_int_equal(m[4].bytes, -40);
	assert_int_equal(m[4].calls, -3);
	assert_true(m[4].inaccurate);
	assert_string_equal(m[4].comm.c_str(), "prog");
	assert_int_equal(m[5].pid, 200);
	assert_int_equal(m[5].bytes, 30);
	assert_int_equal(m[5].calls, 2);
	assert_false(m[5].inaccurate);
	assert_string_equal(m[5].comm.c_str(), "other");
	assert_int_equal(m[1].pid, 100);
	assert_int_equal(m[1].bytes, 12);

	std::string text;
	allocinfo::render_text(text, allocinfo::merge_rows(rows, false));
	assert_string_equal(text.c_str(),
		(std::string(HEADER) +
		 "           1        1 a.c:9 [a] func:e \n"
		 "          12        3 a.c:9 [a] func:f \n"
		 "           1        1 a.c:9 [a] func:f unloaded:yes \n"
		 "           1        1 a.c:10 [a] func:f \n"
		 "           0        0 b.c:2 [b] func:f accurate:no \n").c_str());
}

void test_merge_saturates(void **)
{
	std::vector<site_row> rows;

	rows.push_back(row("m", "f.c", 1, "f", INT64_MAX, INT64_MAX));
	rows.push_back(row("m", "f.c", 1, "f", 5, 1));
	rows.push_back(row("m", "f.c", 2, "f", INT64_MIN, INT64_MIN));
	rows.push_back(row("m", "f.c", 2, "f", -5, -1));
	std::vector<site_row> m = allocinfo::merge_rows(rows, false);
	assert_int_equal(m.size(), 2);
	assert_true(m[0].bytes == INT64_MAX && m[0].calls == INT64_MAX);
	assert_true(m[1].bytes == INT64_MIN && m[1].calls == INT64_MIN);
	assert_true(allocinfo::merge_rows({}, true).empty());
}

std::string order(const std::vector<site_row> &rows)
{
	std::string s;

	for (const site_row &r : rows)
		s += r.func + ' ';
	return s;
}

void test_sort_orders(void **)
{
	std::vector<site_row> rows;

	rows.push_back(row("b", "x.c", 1, "A", 100, 1));
	rows.push_back(row("a", "x.c", 2, "B", 300, 5));
	rows.push_back(row("a", "x.c", 1, "C", 100, 5));
	rows.push_back(row("a", "w.c", 9, "D", -7, 9));		/* sorts as 0 bytes */
	rows.push_back(row("a", "w.c", 8, "E", 0, -3));		/* sorts as 0 calls */
	rows.push_back(row("a", "x.c", 1, "C", 50, 0));
	rows.back().unloaded = true;

	allocinfo::sort_rows(rows, allocinfo::sort_key::site);
	assert_string_equal(order(rows).c_str(), "E D C C B A ");
	assert_false(rows[2].unloaded);
	assert_true(rows[3].unloaded);

	allocinfo::sort_rows(rows, allocinfo::sort_key::bytes);
	assert_string_equal(order(rows).c_str(), "B C A C E D ");

	allocinfo::sort_rows(rows, allocinfo::sort_key::calls);
	assert_string_equal(order(rows).c_str(), "D C B A E C ");
	assert_false(rows[1].unloaded);
	assert_true(rows[5].unloaded);
}

/* ---- JSON -------------------------------------------------------------------- */

void test_json_exact(void **)
{
	std::vector<site_row> rows;
	std::string out;

	rows.push_back(row("demo", "tests/demo.c", 12, "main", 4096, 1, 42));
	rows.back().comm = "demo";
	rows.push_back(row("libfoo.so", "foo.c", 7, "foo_init", -1, -1, 42));
	rows.back().unloaded = true;
	rows.back().inaccurate = true;
	allocinfo::render_json(out, rows);
	assert_string_equal(out.c_str(),
		"{\"version\":\"2.0\",\"pid\":42,\"sites\":[\n"
		"{\"module\":\"demo\",\"file\":\"tests/demo.c\",\"line\":12,\"func\":\"main\","
		"\"bytes\":4096,\"calls\":1,\"unloaded\":false,\"accurate\":true,\"pid\":42,"
		"\"comm\":\"demo\"},\n"
		"{\"module\":\"libfoo.so\",\"file\":\"foo.c\",\"line\":7,\"func\":\"foo_init\","
		"\"bytes\":0,\"calls\":0,\"unloaded\":true,\"accurate\":false,\"pid\":42}\n"
		"]}\n");

	out.clear();
	allocinfo::render_json(out, {});
	assert_string_equal(out.c_str(), "{\"version\":\"2.0\",\"sites\":[]}\n");

	/* one process's report says whether it counts */
	out.clear();
	allocinfo::render_json(out, {}, 0);
	assert_string_equal(out.c_str(), "{\"version\":\"2.0\",\"counting\":false,\"sites\":[]}\n");
	out.clear();
	allocinfo::render_json(out, { row("demo", "d.c", 1, "main", 1, 1, 42) }, 1);
	assert_string_equal(out.c_str(),
		"{\"version\":\"2.0\",\"pid\":42,\"counting\":true,\"sites\":[\n"
		"{\"module\":\"demo\",\"file\":\"d.c\",\"line\":1,\"func\":\"main\","
		"\"bytes\":1,\"calls\":1,\"unloaded\":false,\"accurate\":true,\"pid\":42}\n"
		"]}\n");

	/* a C++ name from debug info: its full name after func, blanks kept */
	std::vector<site_row> cxx = { row("demo", "demo.cpp", 3, "S::conv", 8, 1, 0) };
	cxx[0].full_func = "S<long int>::conv";
	out.clear();
	allocinfo::render_json(out, cxx);
	assert_string_equal(out.c_str(),
		"{\"version\":\"2.0\",\"sites\":[\n"
		"{\"module\":\"demo\",\"file\":\"demo.cpp\",\"line\":3,\"func\":\"S::conv\","
		"\"full_func\":\"S<long int>::conv\",\"bytes\":8,\"calls\":1,\"unloaded\":false,"
		"\"accurate\":true}\n"
		"]}\n");

	/* different pids, or a summed row: no top-level pid */
	rows[1].pid = 43;
	rows.push_back(row("m", "f", 1, "g", 1, 1, 0));
	out.clear();
	allocinfo::render_json(out, rows);
	assert_true(out.compare(0, 32, "{\"version\":\"2.0\",\"sites\":[\n{\"mod") == 0);
	assert_non_null(strstr(out.c_str(), "\"accurate\":false,\"pid\":43}"));
	assert_non_null(strstr(out.c_str(),
		"{\"module\":\"m\",\"file\":\"f\",\"line\":1,\"func\":\"g\",\"bytes\":1,"
		"\"calls\":1,\"unloaded\":false,\"accurate\":true}\n]}\n"));
}

void test_json_hostile_strings(void **)
{
	std::vector<site_row> rows;
	std::string out;

	site_row r;
	r.module = "q\"b\\s/";
	r.file = std::string("nl\n tab\t nul", 12) + std::string("\0", 1) + "\x01\x1f\x7f";
	/* valid: e-acute, euro, an emoji */
	r.func = "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80";
	/*
	 * invalid, one U+FFFD per maximal subpart: a lone 0xff; 0xe2 0x82 cut short by
	 * 'A'; overlong 0xc0 0xaf (two); a surrogate 0xed 0xa0 0x80 (three); above
	 * U+10FFFF 0xf4 0x90 0x80 0x80 (four); a lone continuation; 0xc3 cut by the end.
	 */
	r.comm = "\xff|\xe2\x82" "A|\xc0\xaf|\xed\xa0\x80|\xf4\x90\x80\x80|\x80|\xc3";
	r.pid = 7;
	rows.push_back(r);
	allocinfo::render_json(out, rows);
	assert_string_equal(out.c_str(),
		"{\"version\":\"2.0\",\"pid\":7,\"sites\":[\n"
		"{\"module\":\"q\\\"b\\\\s/\","
		"\"file\":\"nl\\u000a tab\\u0009 nul\\u0000\\u0001\\u001f\x7f\","
		"\"line\":0,"
		"\"func\":\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\","
		"\"bytes\":0,\"calls\":0,\"unloaded\":false,\"accurate\":true,\"pid\":7,"
		"\"comm\":\"\\ufffd|\\ufffdA|\\ufffd\\ufffd|\\ufffd\\ufffd\\ufffd|"
		"\\ufffd\\ufffd\\ufffd\\ufffd|\\ufffd|\\ufffd\"}\n"
		"]}\n");
}

/* ---- Prometheus -------------------------------------------------------------- */

void test_prometheus_exact(void **)
{
	std::vector<site_row> rows;
	std::string out;

	rows.push_back(row("demo", "tests/demo.c", 12, "main", 4096, 1));
	rows.push_back(row("lib\"x\\y.so", "a\nb.c", 7, "f", -3, -1, 42));
	rows.back().comm = "my \"prog\"\n\xff";
	rows.back().unloaded = true;
	allocinfo::render_prometheus(out, rows);
	assert_string_equal(out.c_str(),
		"# HELP allocinfo_live_bytes Bytes currently allocated from a call site and not yet freed.\n"
		"# TYPE allocinfo_live_bytes gauge\n"
		"allocinfo_live_bytes{module=\"demo\",file=\"tests/demo.c\",line=\"12\",func=\"main\"} 4096\n"
		"allocinfo_live_bytes{module=\"lib\\\"x\\\\y.so\",file=\"a\\nb.c\",line=\"7\",func=\"f\","
		"unloaded=\"yes\",pid=\"42\",comm=\"my \\\"prog\\\"\\n\xef\xbf\xbd\"} 0\n"
		"# HELP allocinfo_live_allocations Allocations made at a call site and not yet freed.\n"
		"# TYPE allocinfo_live_allocations gauge\n"
		"allocinfo_live_allocations{module=\"demo\",file=\"tests/demo.c\",line=\"12\",func=\"main\"} 1\n"
		"allocinfo_live_allocations{module=\"lib\\\"x\\\\y.so\",file=\"a\\nb.c\",line=\"7\",func=\"f\","
		"unloaded=\"yes\",pid=\"42\",comm=\"my \\\"prog\\\"\\n\xef\xbf\xbd\"} 0\n");

	out.clear();
	allocinfo::render_prometheus(out, {});
	assert_string_equal(out.c_str(),
		"# HELP allocinfo_live_bytes Bytes currently allocated from a call site and not yet freed.\n"
		"# TYPE allocinfo_live_bytes gauge\n"
		"# HELP allocinfo_live_allocations Allocations made at a call site and not yet freed.\n"
		"# TYPE allocinfo_live_allocations gauge\n");
}

/* ---- pprof ------------------------------------------------------------------- */

std::string gunzip(const std::string &in)
{
	z_stream zs;
	std::string out;
	char buf[4096];
	int rc;

	memset(&zs, 0, sizeof(zs));
	assert_int_equal(inflateInit2(&zs, 15 + 16), Z_OK);
	zs.next_in = (Bytef *)in.data();
	zs.avail_in = (uInt)in.size();
	do {
		zs.next_out = (Bytef *)buf;
		zs.avail_out = sizeof(buf);
		rc = inflate(&zs, Z_NO_FLUSH);
		assert_true(rc == Z_OK || rc == Z_STREAM_END);
		out.append(buf, sizeof(buf) - zs.avail_out);
	} while (rc != Z_STREAM_END);
	assert_int_equal(zs.avail_in, 0);	/* nothing after the gzip member */
	inflateEnd(&zs);
	return out;
}

/* One protobuf field: a varint, or the bytes of a length-delimited one. */
struct pb_field {
	unsigned num;
	unsigned wire;
	uint64_t v;
	std::string bytes;
};

uint64_t pb_varint(const std::string &b, size_t *at)
{
	uint64_t v = 0;

	for (unsigned shift = 0;; shift += 7) {
		assert_true(*at < b.size());
		assert_true(shift < 64);
		unsigned char c = (unsigned char)b[(*at)++];
		v |= (uint64_t)(c & 0x7f) << shift;
		if (!(c & 0x80))
			return v;
	}
}

std::vector<pb_field> pb_decode(const std::string &b)
{
	std::vector<pb_field> f;
	size_t at = 0;

	while (at < b.size()) {
		pb_field x;
		uint64_t key = pb_varint(b, &at);

		x.num = (unsigned)(key >> 3);
		x.wire = (unsigned)(key & 7);
		x.v = 0;
		if (x.wire == 0) {
			x.v = pb_varint(b, &at);
		} else {
			assert_int_equal(x.wire, 2);	/* the encoder writes nothing else */
			uint64_t n = pb_varint(b, &at);
			assert_true(n <= b.size() - at);
			x.bytes = b.substr(at, (size_t)n);
			at += (size_t)n;
		}
		f.push_back(x);
	}
	return f;
}

/* The varint field num of a message (0 when absent, as proto3 defaults). */
uint64_t pb_get(const std::vector<pb_field> &m, unsigned num)
{
	uint64_t v = 0;

	for (const pb_field &x : m)
		if (x.num == num && x.wire == 0)
			v = x.v;
	return v;
}

std::vector<std::string> pb_msgs(const std::vector<pb_field> &m, unsigned num)
{
	std::vector<std::string> v;

	for (const pb_field &x : m)
		if (x.num == num && x.wire == 2)
			v.push_back(x.bytes);
	return v;
}

/* A repeated varint field, packed or not. */
std::vector<uint64_t> pb_repeated(const std::vector<pb_field> &m, unsigned num)
{
	std::vector<uint64_t> v;

	for (const pb_field &x : m) {
		if (x.num != num)
			continue;
		if (x.wire == 0) {
			v.push_back(x.v);
			continue;
		}
		size_t at = 0;
		while (at < x.bytes.size())
			v.push_back(pb_varint(x.bytes, &at));
	}
	return v;
}

void test_pprof_decode(void **)
{
	std::vector<site_row> rows;
	std::string gz = "prefix";

	rows.push_back(row("demo", "tests/demo.c", 12, "main", 4096, 1));
	rows.push_back(row("libfoo.so", "foo.c", 77, "foo_init", 300, 3, 42));
	rows.back().unloaded = true;
	rows.push_back(row("demo", "tests/demo.c", 40, "helper", -8, -1));	/* clamped */
	rows.push_back(row("demo", "x.c", 5, "main", 1LL << 40, 1000000));
	rows.back().full_func = "ns::main<int>";	/* the Function's system_name */

	assert_true(allocinfo::render_pprof(gz, rows, 1700000000123456789LL));
	assert_true(gz.compare(0, 6, "prefix") == 0);	/* appended */
	assert_true((unsigned char)gz[6] == 0x1f && (unsigned char)gz[7] == 0x8b);

	std::vector<pb_field> prof = pb_decode(gunzip(gz.substr(6)));

	/* string table: index 0 is "", no duplicates, in order of first use */
	std::vector<std::string> st = pb_msgs(prof, 6);
	const char *want_st[] = {
		"", "inuse_objects", "count", "inuse_space", "bytes", "module", "demo",
		"main", "tests/demo.c", "libfoo.so", "foo_init", "foo.c", "pid", "unloaded",
		"yes", "helper", "ns::main<int>", "x.c", "space",
	};
	assert_int_equal(st.size(), sizeof(want_st) / sizeof(want_st[0]));
	for (size_t i = 0; i < st.size(); i++)
		assert_string_equal(st[i].c_str(), want_st[i]);
	auto str = [&](uint64_t i) {
		assert_true(i < st.size());
		return st[(size_t)i];
	};

	std::vector<std::string> types = pb_msgs(prof, 1);
	assert_int_equal(types.size(), 2);
	assert_string_equal(str(pb_get(pb_decode(types[0]), 1)).c_str(), "inuse_objects");
	assert_string_equal(str(pb_get(pb_decode(types[0]), 2)).c_str(), "count");
	assert_string_equal(str(pb_get(pb_decode(types[1]), 1)).c_str(), "inuse_space");
	assert_string_equal(str(pb_get(pb_decode(types[1]), 2)).c_str(), "bytes");
	assert_string_equal(str(pb_get(prof, 14)).c_str(), "inuse_space");
	assert_true(pb_get(prof, 9) == 1700000000123456789ULL);
	assert_int_equal(pb_get(prof, 12), 1);
	std::vector<std::string> period = pb_msgs(prof, 11);
	assert_int_equal(period.size(), 1);
	assert_string_equal(str(pb_get(pb_decode(period[0]), 1)).c_str(), "space");
	assert_string_equal(str(pb_get(pb_decode(period[0]), 2)).c_str(), "bytes");

	/* one Mapping per module */
	std::vector<std::string> maps = pb_msgs(prof, 3);
	assert_int_equal(maps.size(), 2);
	std::vector<pb_field> m1 = pb_decode(maps[0]), m2 = pb_decode(maps[1]);
	assert_int_equal(pb_get(m1, 1), 1);
	assert_string_equal(str(pb_get(m1, 5)).c_str(), "demo");
	assert_int_equal(pb_get(m2, 1), 2);
	assert_string_equal(str(pb_get(m2, 5)).c_str(), "libfoo.so");
	assert_int_equal(pb_get(m1, 7), 1);	/* has_functions */

	/* Functions, Locations, Samples: one per row, in row order */
	std::vector<std::string> fns = pb_msgs(prof, 5), locs = pb_msgs(prof, 4),
		samples = pb_msgs(prof, 2);
	assert_int_equal(fns.size(), rows.size());
	assert_int_equal(locs.size(), rows.size());
	assert_int_equal(samples.size(), rows.size());

	const uint64_t want_map[] = { 1, 2, 1, 1 };
	const int64_t want_values[][2] = { { 1, 4096 }, { 3, 300 }, { 0, 0 },
					   { 1000000, 1LL << 40 } };
	std::vector<uint64_t> addrs;

	for (size_t i = 0; i < rows.size(); i++) {
		std::vector<pb_field> fn = pb_decode(fns[i]);
		std::vector<pb_field> loc = pb_decode(locs[i]);
		std::vector<pb_field> s = pb_decode(samples[i]);

		assert_int_equal(pb_get(fn, 1), i + 1);
		assert_string_equal(str(pb_get(fn, 2)).c_str(), rows[i].func.c_str());
		assert_string_equal(str(pb_get(fn, 3)).c_str(),
				    (rows[i].full_func.empty() ? rows[i].func : rows[i].full_func).c_str());
		assert_string_equal(str(pb_get(fn, 4)).c_str(), rows[i].file.c_str());

		assert_int_equal(pb_get(loc, 1), i + 1);
		assert_int_equal(pb_get(loc, 2), want_map[i]);
		addrs.push_back(pb_get(loc, 3));
		std::vector<std::string> lines = pb_msgs(loc, 4);
		assert_int_equal(lines.size(), 1);
		assert_int_equal(pb_get(pb_decode(lines[0]), 1), i + 1);
		assert_int_equal(pb_get(pb_decode(lines[0]), 2), rows[i].line);

		std::vector<uint64_t> ids = pb_repeated(s, 1), values = pb_repeated(s, 2);
		assert_int_equal(ids.size(), 1);
		assert_int_equal(ids[0], i + 1);
		assert_int_equal(values.size(), 2);
		assert_int_equal(values[0], want_values[i][0]);
		assert_int_equal(values[1], want_values[i][1]);

		std::vector<std::string> labels = pb_msgs(s, 3);
		assert_true(labels.size() >= 1);
		std::vector<pb_field> l0 = pb_decode(labels[0]);
		assert_string_equal(str(pb_get(l0, 1)).c_str(), "module");
		assert_string_equal(str(pb_get(l0, 2)).c_str(), rows[i].module.c_str());
		if (i == 1) {
			assert_int_equal(labels.size(), 3);
			std::vector<pb_field> l1 = pb_decode(labels[1]), l2 = pb_decode(labels[2]);
			assert_string_equal(str(pb_get(l1, 1)).c_str(), "pid");
			assert_int_equal(pb_get(l1, 3), 42);
			assert_string_equal(str(pb_get(l2, 1)).c_str(), "unloaded");
			assert_string_equal(str(pb_get(l2, 2)).c_str(), "yes");
		} else {
			assert_int_equal(labels.size(), 1);
		}
	}
	for (size_t i = 0; i < addrs.size(); i++)
		for (size_t j = i + 1; j < addrs.size(); j++)
			assert_true(addrs[i] != addrs[j]);
}

void test_pprof_empty(void **)
{
	std::string gz;

	assert_true(allocinfo::render_pprof(gz, {}, 0));
	std::vector<pb_field> prof = pb_decode(gunzip(gz));
	assert_int_equal(pb_msgs(prof, 1).size(), 2);
	assert_int_equal(pb_msgs(prof, 2).size(), 0);
	assert_int_equal(pb_msgs(prof, 3).size(), 0);
	std::vector<std::string> st = pb_msgs(prof, 6);
	assert_true(st.size() >= 1);
	assert_string_equal(st[0].c_str(), "");
	assert_int_equal(pb_get(prof, 9), 0);
}

/* Big enough that deflate needs more than one output chunk. */
void test_pprof_large(void **)
{
	std::vector<site_row> rows;
	std::string gz;
	char name[32];

	for (unsigned i = 0; i < 20000; i++) {
		snprintf(name, sizeof(name), "fn_%u_%08x", i, i * 2654435761u);
		rows.push_back(row(i % 3 ? "demo" : "libbar.so", name, i, name, i * 8, i));
	}
	assert_true(allocinfo::render_pprof(gz, rows, 1));
	assert_true(gz.size() > 64 * 1024);
	std::vector<pb_field> prof = pb_decode(gunzip(gz));
	std::vector<std::string> samples = pb_msgs(prof, 2);
	assert_int_equal(samples.size(), rows.size());
	std::vector<uint64_t> v = pb_repeated(pb_decode(samples[19999]), 2);
	assert_int_equal(v[0], 19999);
	assert_int_equal(v[1], 19999 * 8);
	assert_int_equal(pb_msgs(prof, 3).size(), 2);
}

} /* namespace */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_text_rows),
		cmocka_unit_test(test_text_empty_and_append),
		cmocka_unit_test(test_text_long_names),
		cmocka_unit_test(test_text_control_bytes),
		cmocka_unit_test(test_human_size),
		cmocka_unit_test(test_text_human),
		cmocka_unit_test(test_merge_sums),
		cmocka_unit_test(test_merge_saturates),
		cmocka_unit_test(test_sort_orders),
		cmocka_unit_test(test_json_exact),
		cmocka_unit_test(test_json_hostile_strings),
		cmocka_unit_test(test_prometheus_exact),
		cmocka_unit_test(test_pprof_decode),
		cmocka_unit_test(test_pprof_empty),
		cmocka_unit_test(test_pprof_large),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
