/* SPDX-License-Identifier: MIT */
/*
 * test_site_table.cpp - unit tests of lib/reader/site_table.cpp: for snapshots made by hand,
 * the rows are exactly those of merge_rows() over snapshot_rows() (sums, order, pid,
 * comm, which tags are listed, names that print alike, saturation), and a table kept
 * from one report to the next gives each report the same rows a new table would.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include <cmocka.h>
}

#include <string>
#include <vector>

#include "report.h"
#include "site_table.h"
#include "store_reader.h"

using allocinfo::site_row;
using allocinfo::site_table;
using allocinfo::store_snapshot;
using allocinfo::tag_snapshot;

namespace {

tag_snapshot tag(const char *module, const char *file, uint32_t line, const char *func,
		 int64_t bytes, int64_t calls, uint32_t flags = 0, uint64_t addr = 0)
{
	tag_snapshot t;
	t.flags = flags | ALLOCINFO_TAGF_USED;
	t.module_path = module;
	t.file = file;
	t.line = line;
	t.func = func;
	t.bytes = bytes;
	t.calls = calls;
	t.addr = addr;
	return t;
}

store_snapshot snapshot(int pid, std::vector<tag_snapshot> tags)
{
	store_snapshot s;
	s.pid = pid;
	s.tags = std::move(tags);
	return s;
}

void assert_rows_equal(const std::vector<site_row> &got, const std::vector<site_row> &want)
{
	assert_int_equal(got.size(), want.size());
	for (size_t i = 0; i < got.size(); i++) {
		assert_string_equal(got[i].module.c_str(), want[i].module.c_str());
		assert_string_equal(got[i].file.c_str(), want[i].file.c_str());
		assert_int_equal(got[i].line, want[i].line);
		assert_string_equal(got[i].func.c_str(), want[i].func.c_str());
		assert_true(got[i].bytes == want[i].bytes);
		assert_true(got[i].calls == want[i].calls);
		assert_int_equal(got[i].unloaded, want[i].unloaded);
		assert_int_equal(got[i].inaccurate, want[i].inaccurate);
		assert_int_equal(got[i].pid, want[i].pid);
		assert_string_equal(got[i].comm.c_str(), want[i].comm.c_str());
	}
}

/* What the table must give: merge_rows() of every snapshot's rows, with comm. */
std::vector<site_row> reference(const std::vector<const store_snapshot *> &snaps,
				const std::vector<std::string> &comms, bool keep_pid)
{
	std::vector<site_row> rows;
	for (size_t i = 0; i < snaps.size(); i++) {
		size_t first = rows.size();
		allocinfo::snapshot_rows(*snaps[i], nullptr, rows);
		for (size_t j = first; j < rows.size(); j++)
			rows[j].comm = comms[i];
	}
	return allocinfo::merge_rows(rows, keep_pid);
}

void check_both_ways(const std::vector<const store_snapshot *> &snaps,
		     const std::vector<std::string> &comms)
{
	for (bool keep_pid : {false, true}) {
		site_table table(nullptr, keep_pid);
		for (size_t i = 0; i < snaps.size(); i++)
			table.add(*snaps[i], comms[i]);
		assert_rows_equal(table.rows(), reference(snaps, comms, keep_pid));
	}
}

/* Two processes of one program and one of another. */
void test_processes_summed(void **)
{
	store_snapshot a = snapshot(20, {
		tag("/bin/demo", "demo.c", 10, "main", 100, 1),
		tag("/bin/demo", "demo.c", 12, "main", 0, 0),		/* idle: listed */
		tag("/bin/demo", "util.c", 3, "helper", 7, 2),
		tag("/lib/libx.so", "x.c", 1, "x_init", 5, 1),
	});
	store_snapshot b = snapshot(10, {
		tag("/lib/libx.so", "x.c", 1, "x_init", 6, 1),
		tag("/bin/demo", "demo.c", 10, "main", 50, 2),
		tag("/bin/demo", "demo.c", 12, "main", 1, 1),
	});
	store_snapshot c = snapshot(30, {
		tag("/bin/other", "demo.c", 10, "main", 9, 9),		/* another module */
	});
	check_both_ways({&a, &b, &c}, {"demo", "demo", "other"});

	site_table table(nullptr, false);
	table.add(a);
	table.add(b);
	std::vector<site_row> rows = table.rows();
	assert_int_equal(rows.size(), 4);
	assert_string_equal(rows[0].module.c_str(), "demo");
	assert_int_equal(rows[0].line, 10);
	assert_int_equal(rows[0].bytes, 150);
	assert_int_equal(rows[0].calls, 3);
	assert_int_equal(rows[0].pid, 0);
	assert_string_equal(rows[3].module.c_str(), "libx.so");
	assert_int_equal(rows[3].bytes, 11);
}

/* Which tags have a row: caller and overflow tags only while they hold something,
 * unloaded ones until freed; caller tags are named from module and address. */
void test_listed_tags(void **)
{
	const uint32_t DYN = ALLOCINFO_TAGF_DYNAMIC, UNL = ALLOCINFO_TAGF_UNLOADED,
		       OVF = ALLOCINFO_TAGF_OVERFLOW;
	store_snapshot a = snapshot(1, {
		tag("/bin/p", "", 0, "", 0, 0, DYN, 0x1234),		/* idle caller: gone */
		tag("/bin/p", "", 0, "", 64, 1, DYN, 0x1234),
		tag("/bin/p", "ignored.c", 5, "ignored", 32, 1, DYN, 0x1234), /* same name */
		tag("/bin/p", "", 0, "", 8, 1, DYN, 0x99),
		tag("/lib/l.so", "l.c", 4, "f", 0, 0, UNL),		/* freed: gone */
		tag("/lib/l.so", "l.c", 4, "f", 16, 1, UNL),
		tag("/lib/l.so", "l.c", 4, "f", 3, 1),			/* loaded: apart */
		tag("/bin/p", "p.c", 1, "g", 0, 0, OVF),		/* idle overflow: gone */
		tag("/bin/p", "p.c", 2, "g", 1, 1, OVF),
		tag("", "", 0, "", 0, 0),				/* no names at all */
	});
	check_both_ways({&a}, {"p"});

	site_table table(nullptr, false);
	table.add(a);
	std::vector<site_row> rows = table.rows();
	std::string text;
	allocinfo::render_text(text, rows);
	assert_string_equal(text.c_str(),
		"allocinfo - version: 2.0\n"
		"#     <size>  <calls> <tag info>\n"
		"           0        0 ??:0 [??] func:?? \n"
		"           3        1 l.c:4 [l.so] func:f \n"
		"          16        1 l.c:4 [l.so] func:f unloaded:yes \n"
		"          96        2 ??:0 [p] func:0x1234 \n"
		"           8        1 ??:0 [p] func:0x99 \n"
		"           1        1 p.c:2 [p] func:g \n");
}

/* Names that differ in the store but print alike are one row; so are modules of one
 * basename in different directories. */
void test_printed_alike(void **)
{
	store_snapshot a = snapshot(1, {
		tag("/a/demo", "a b.c", 1, "f\tx", 1, 1),
		tag("/b/demo", "a_b.c", 1, "f_x", 2, 1),
		tag("/a/demo", "a\nb.c", 1, "f x", 4, 1),
	});
	store_snapshot b = snapshot(2, {
		tag("/c/demo", "a_b.c", 1, "f_x", 8, 1),
	});
	check_both_ways({&a, &b}, {"", "b"});

	site_table table(nullptr, false);
	table.add(a);
	table.add(b);
	std::vector<site_row> rows = table.rows();
	assert_int_equal(rows.size(), 1);
	assert_int_equal(rows[0].bytes, 15);
	assert_string_equal(rows[0].file.c_str(), "a_b.c");
}

/* Sums saturate, and are added in the order merge_rows() adds them, so that they
 * saturate alike even when two raw names of one row interleave. */
void test_saturation_order(void **)
{
	store_snapshot a = snapshot(1, {
		tag("/x/m", "f.c", 1, "g", INT64_MAX, INT64_MAX),
		tag("/y/m", "f.c", 1, "g", 5, 5),
		tag("/x/m", "f.c", 1, "g", -10, INT64_MIN),
		tag("/y/m", "f.c", 1, "g", INT64_MIN, -1),
		tag("/x/m", "f.c", 2, "g", INT64_MIN, INT64_MIN),
		tag("/x/m", "f.c", 2, "g", -1, -1),
	});
	check_both_ways({&a}, {""});
}

/* A table kept from one report to the next (clear_sums(), and a memo of each
 * snapshot's rows): every report is what a new table gives. */
void test_kept_table(void **)
{
	store_snapshot a = snapshot(1, {
		tag("/bin/demo", "demo.c", 10, "main", 100, 1),
		tag("/bin/demo", "", 0, "", 64, 1, ALLOCINFO_TAGF_DYNAMIC, 0x10),
	});
	store_snapshot b = snapshot(2, {
		tag("/bin/demo", "demo.c", 10, "main", 1, 1),
		tag("/bin/demo", "demo.c", 11, "main", 2, 1),
	});
	site_table kept(nullptr, false);
	std::vector<uint32_t> memo_a, memo_b;
	for (int round = 0; round < 3; round++) {
		kept.clear_sums();
		kept.add(a, std::string(), &memo_a);
		if (round != 1)
			kept.add(b, std::string(), &memo_b);	/* b is gone in round 1 */
		std::vector<const store_snapshot *> snaps = {&a};
		std::vector<std::string> comms = {""};
		if (round != 1) {
			snaps.push_back(&b);
			comms.push_back("");
		}
		assert_rows_equal(kept.rows(), reference(snaps, comms, false));
		/* The counters change from one report to the next; the tags do not. */
		a.tags[1].bytes = round == 0 ? 0 : 32;		/* the caller tag: idle, then not */
		a.tags[1].calls = round == 0 ? 0 : 1;
		b.tags[0].bytes += 7;
	}
	assert_int_equal(memo_a.size(), a.tags.size());
}

void test_empty(void **)
{
	site_table table(nullptr, true);
	assert_true(table.rows().empty());
	store_snapshot none = snapshot(5, {});
	table.add(none, "x");
	assert_true(table.rows().empty());
}

} /* namespace */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_processes_summed),
		cmocka_unit_test(test_listed_tags),
		cmocka_unit_test(test_printed_alike),
		cmocka_unit_test(test_saturation_order),
		cmocka_unit_test(test_kept_table),
		cmocka_unit_test(test_empty),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
