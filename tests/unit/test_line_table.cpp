/* SPDX-License-Identifier: MIT */
/*
 * Unit tests for line_table (a unit's .debug_line, read compactly): tables written
 * here byte by byte, with the rows, files and directories libdw gives for them;
 * every table of real objects against libdw's own reading; hostile tables.
 */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
extern "C" { /* cmocka 1.1 declares C functions without it */
#include <cmocka.h>
}

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "line_table.h"

using allocinfo::line_sections;
using allocinfo::line_table;

namespace {

/* A .debug_line unit under construction. */
struct unit_bytes {
	std::vector<unsigned char> b;

	void u8(unsigned v) { b.push_back((unsigned char)v); }
	void fixed(uint64_t v, unsigned n)
	{
		for (unsigned i = 0; i < n; i++)
			u8((unsigned)(v >> (8 * i)) & 0xff);
	}
	void uleb(uint64_t v)
	{
		do {
			unsigned char c = v & 0x7f;
			v >>= 7;
			u8(c | (v ? 0x80 : 0));
		} while (v);
	}
	void sleb(int64_t v)
	{
		for (;;) {
			unsigned char c = v & 0x7f;
			v >>= 7;
			bool done = (v == 0 && !(c & 0x40)) || (v == -1 && (c & 0x40));
			u8(c | (done ? 0 : 0x80));
			if (done)
				return;
		}
	}
	void str(const char *s) { b.insert(b.end(), s, s + strlen(s) + 1); }
	/* Extended opcodes. */
	void set_address(uint64_t a)
	{
		u8(0), u8(9), u8(DW_LNE_set_address), fixed(a, 8);
	}
	void end_sequence() { u8(0), u8(1), u8(DW_LNE_end_sequence); }
};

/* The header fields every table here shares (DWARF 4 or 5), before the
 * directories: standard lengths for opcode base 13. */
void common_header(unit_bytes &u, unsigned version)
{
	u.u8(1);			/* minimum instruction length */
	if (version >= 4)
		u.u8(1);		/* maximum operations per instruction */
	u.u8(1);			/* default is_stmt */
	u.u8((unsigned char)-5);	/* line base */
	u.u8(14);			/* line range */
	u.u8(13);			/* opcode base */
	const unsigned char lengths[12] = {0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1};
	for (unsigned char l : lengths)
		u.u8(l);
}

/* Wraps header (from after header_length) and program into a unit. */
std::vector<unsigned char> wrap(unsigned version, const unit_bytes &header,
				const unit_bytes &program)
{
	unit_bytes u;
	u.fixed(version, 2);
	if (version >= 5)
		u.u8(8), u.u8(0);	/* address size, segment selector size */
	u.fixed(header.b.size(), 4);
	u.b.insert(u.b.end(), header.b.begin(), header.b.end());
	u.b.insert(u.b.end(), program.b.begin(), program.b.end());
	unit_bytes out;
	out.fixed(u.b.size(), 4);
	out.b.insert(out.b.end(), u.b.begin(), u.b.end());
	return out.b;
}

/*
 * Three sequences, written out of address order: the rows at 0x1000-0x1010, then
 * two rows at one address (0x800), then a sequence starting where the first ends
 * (0x1010) with a file DW_LNE_define_file adds.
 */
void program_of_three(unit_bytes &p)
{
	p.set_address(0x1000);
	p.u8(DW_LNS_copy);			/* 0x1000 line 1, a.c */
	p.u8(DW_LNS_advance_line), p.sleb(9);
	p.u8(13 + (0 - -5) + 14 * 4);		/* special: line +0, address +4 */
	p.u8(DW_LNS_set_file), p.uleb(2);
	p.u8(DW_LNS_advance_pc), p.uleb(4);
	p.u8(DW_LNS_copy);			/* 0x1008 line 10, b.h */
	p.u8(DW_LNS_advance_pc), p.uleb(8);
	p.end_sequence();			/* 0x1010 */

	p.set_address(0x800);
	p.u8(DW_LNS_advance_line), p.sleb(99);
	p.u8(DW_LNS_copy);			/* 0x800 line 100 */
	p.u8(DW_LNS_advance_line), p.sleb(1);
	p.u8(DW_LNS_copy);			/* 0x800 line 101: the later one wins */
	p.u8(DW_LNS_advance_pc), p.uleb(0x10);
	p.end_sequence();			/* 0x810 */

	p.set_address(0x1010);
	p.u8(DW_LNS_set_file), p.uleb(3);
	p.u8(DW_LNS_advance_line), p.sleb(49);
	p.u8(DW_LNS_copy);			/* 0x1010 line 50, /abs/c.h */
	p.u8(0), p.uleb(10), p.u8(DW_LNE_define_file), p.str("gen.c"), p.uleb(1), p.uleb(0),
		p.uleb(0);
	p.u8(DW_LNS_set_file), p.uleb(4);
	p.u8(DW_LNS_advance_pc), p.uleb(4);
	p.u8(DW_LNS_copy);			/* 0x1014 line 50, inc/gen.c */
	p.u8(DW_LNS_advance_pc), p.uleb(4);
	p.end_sequence();			/* 0x1018 */
}

std::vector<unsigned char> table_v4()
{
	unit_bytes h, p;
	common_header(h, 4);
	h.str("inc");
	h.u8(0);				/* end of directories */
	h.str("a.c"), h.uleb(0), h.uleb(0), h.uleb(0);
	h.str("b.h"), h.uleb(1), h.uleb(0), h.uleb(0);
	h.str("/abs/c.h"), h.uleb(1), h.uleb(0), h.uleb(0);
	h.u8(0);				/* end of files */
	program_of_three(p);
	return wrap(4, h, p);
}

struct expected_row {
	uint64_t addr;
	bool found;
	int line;
	const char *file;
};

void expect_rows(const line_table &t, const expected_row *rows, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		uint32_t file = 0;
		int line = 0;
		bool found = t.find(rows[i].addr, &file, &line);
		if (found != rows[i].found)
			fail_msg("%#llx: found %d, expected %d", (unsigned long long)rows[i].addr,
				 found, rows[i].found);
		if (!found)
			continue;
		assert_int_equal(line, rows[i].line);
		assert_non_null(t.file_name(file));
		assert_string_equal(t.file_name(file), rows[i].file);
	}
}

const expected_row rows_of_three[] = {
	{0x7ff, false, 0, nullptr},
	{0x800, true, 101, "/comp/a.c"},
	{0x80f, true, 101, "/comp/a.c"},
	{0x810, false, 0, nullptr},	/* the end of its sequence */
	{0xfff, false, 0, nullptr},
	{0x1000, true, 1, "/comp/a.c"},
	{0x1003, true, 1, "/comp/a.c"},
	{0x1004, true, 10, "/comp/a.c"},
	{0x1008, true, 10, "inc/b.h"},	/* a relative directory stays relative */
	{0x100f, true, 10, "inc/b.h"},
	{0x1010, true, 50, "/abs/c.h"},	/* the end of one sequence, then the next */
	{0x1014, true, 50, "inc/gen.c"},
	{0x1017, true, 50, "inc/gen.c"},
	{0x1018, false, 0, nullptr},
	{0x100000, false, 0, nullptr},
};

void test_dwarf4(void **)
{
	std::vector<unsigned char> bytes = table_v4();
	line_sections s;
	s.line = bytes.data();
	s.line_size = bytes.size();
	line_table t;
	assert_true(t.read(s, 0, 8, "/comp"));
	expect_rows(t, rows_of_three, sizeof(rows_of_three) / sizeof(rows_of_three[0]));
	const char *files[] = {"???", "/comp/a.c", "inc/b.h", "/abs/c.h", "inc/gen.c"};
	assert_int_equal(t.files(), 5);
	for (size_t i = 0; i < 5; i++)
		assert_string_equal(t.file_name(i), files[i]);
	assert_null(t.file_name(5));
	assert_int_equal(t.dirs(), 2);
	assert_string_equal(t.dir(0), "/comp");
	assert_string_equal(t.dir(1), "inc");

	/* Without a compilation directory, names stay relative and directory 0 is
	 * null, as libdw has them. */
	assert_true(t.read(s, 0, 8, nullptr));
	assert_string_equal(t.file_name(1), "a.c");
	assert_null(t.dir(0));

	/* Nine rows of 16 bytes, and what the names take. */
	assert_true(t.memory() >= 9 * 16);
	assert_true(t.memory() < 9 * 16 + 1024);
}

void test_dwarf5(void **)
{
	/* .debug_line_str: the directories. */
	const char line_str[] = "/build\0include";
	unit_bytes h, p;
	common_header(h, 5);
	h.u8(1), h.uleb(DW_LNCT_path), h.uleb(DW_FORM_line_strp);
	h.uleb(2), h.fixed(0, 4), h.fixed(7, 4);
	h.u8(3), h.uleb(DW_LNCT_path), h.uleb(DW_FORM_string);
	h.uleb(DW_LNCT_directory_index), h.uleb(DW_FORM_udata);
	h.uleb(DW_LNCT_MD5), h.uleb(DW_FORM_data16);
	h.uleb(2);
	h.str("main.c"), h.uleb(0), h.fixed(0, 8), h.fixed(0, 8);
	h.str("x.h"), h.uleb(1), h.fixed(0, 8), h.fixed(0, 8);
	p.set_address(0x401000);
	p.u8(DW_LNS_copy);			/* file 1 by default: x.h */
	p.u8(DW_LNS_set_file), p.uleb(0);
	p.u8(DW_LNS_advance_line), p.sleb(6);
	p.u8(DW_LNS_advance_pc), p.uleb(2);
	p.u8(DW_LNS_copy);			/* 0x401002 line 7, main.c */
	p.u8(DW_LNS_advance_pc), p.uleb(2);
	p.end_sequence();
	std::vector<unsigned char> bytes = wrap(5, h, p);
	line_sections s;
	s.line = bytes.data();
	s.line_size = bytes.size();
	s.line_str = reinterpret_cast<const unsigned char *>(line_str);
	s.line_str_size = sizeof(line_str);
	line_table t;
	assert_true(t.read(s, 0, 8, "/elsewhere"));
	const expected_row rows[] = {
		{0x400fff, false, 0, nullptr},
		{0x401000, true, 1, "include/x.h"},
		{0x401002, true, 7, "/build/main.c"},
		{0x401003, true, 7, "/build/main.c"},
		{0x401004, false, 0, nullptr},
	};
	expect_rows(t, rows, 5);
	assert_int_equal(t.files(), 2);
	assert_int_equal(t.dirs(), 2);
	assert_string_equal(t.dir(0), "/build");	/* DWARF 5 lists its own */

	/* The same with the address size of the unit wrong: refused. */
	assert_false(t.read(s, 0, 4, "/elsewhere"));
	assert_int_equal(t.files(), 0);
	/* A directory string past its section: refused. */
	s.line_str_size = 7;
	assert_false(t.read(s, 0, 8, "/elsewhere"));
}

/* Tables this reader leaves to libdw. */
void test_refused(void **)
{
	line_table t;
	line_sections s;
	std::vector<unsigned char> good = table_v4();
	s.line = good.data();
	s.line_size = good.size();
	assert_true(t.read(s, 0, 8, "/comp"));
	assert_false(t.read(s, good.size(), 8, "/comp"));	/* offset past the end */
	assert_false(t.read(s, 0, 2, "/comp"));		/* address size */

	std::vector<unsigned char> bad = good;
	bad[4] = 6;					/* version 6 */
	s.line = bad.data();
	assert_false(t.read(s, 0, 8, "/comp"));
	bad = good;
	bad[4 + 2 + 4 + 5] = 0;				/* opcode base 0 */
	assert_false(t.read(s, 0, 8, "/comp"));

	/* An NVIDIA opcode, and a LEB128 number of eleven bytes. */
	unit_bytes h, p;
	common_header(h, 4);
	h.u8(0), h.str("a.c"), h.uleb(0), h.uleb(0), h.uleb(0), h.u8(0);
	p.set_address(0x1000);
	p.u8(0), p.u8(2), p.u8(DW_LNE_NVIDIA_set_function_name), p.uleb(1);
	p.end_sequence();
	std::vector<unsigned char> nv = wrap(4, h, p);
	s.line = nv.data();
	s.line_size = nv.size();
	assert_false(t.read(s, 0, 8, "/comp"));
	unit_bytes q;
	q.set_address(0x1000);
	q.u8(DW_LNS_advance_pc);
	for (int i = 0; i < 10; i++)
		q.u8(0x80);
	q.u8(0);
	q.end_sequence();
	std::vector<unsigned char> leb = wrap(4, h, q);
	s.line = leb.data();
	s.line_size = leb.size();
	assert_false(t.read(s, 0, 8, "/comp"));
}

/* Cut at every length and with every byte overwritten: refused or read, within
 * the bytes given (the sanitizer builds check the reads). */
void test_hostile(void **)
{
	std::vector<unsigned char> good = table_v4();
	line_table t;
	for (size_t cut = 0; cut < good.size(); cut++) {
		std::vector<unsigned char> part(good.begin(), good.begin() + cut);
		line_sections s;
		s.line = part.data();
		s.line_size = part.size();
		assert_false(t.read(s, 0, 8, "/comp"));	/* the unit's length says more */
	}
	const unsigned char values[] = {0, 1, 0x7f, 0x80, 0xff};
	size_t read = 0;
	for (size_t i = 0; i < good.size(); i++) {
		for (unsigned char v : values) {
			std::vector<unsigned char> bad = good;
			bad[i] = v;
			line_sections s;
			s.line = bad.data();
			s.line_size = bad.size();
			if (!t.read(s, 0, 8, "/comp"))
				continue;
			read++;
			for (uint64_t a = 0x7f0; a < 0x1020; a += 4) {
				uint32_t file;
				int line;
				if (t.find(a, &file, &line))
					(void)t.file_name(file);	/* null if out of range */
			}
		}
	}
	assert_true(read > 0);
}

/* Every unit of the file at path against libdw: the rows found at every row's
 * address and around it, the files and the directories. Returns the units. */
size_t compare_with_libdw(const char *path)
{
	int fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	Dwarf *dw = dwarf_begin(fd, DWARF_C_READ);
	if (!dw) {
		close(fd);
		return 0;
	}
	line_sections s = allocinfo::line_sections_of(dw);
	size_t units = 0;
	Dwarf_CU *cu = nullptr;
	Dwarf_Die cudie;
	uint8_t unit_type;
	while (dwarf_get_units(dw, cu, &cu, nullptr, &unit_type, &cudie, nullptr) == 0) {
		/* A type unit shares its compilation unit's table, which libdw keeps
		 * with the directory of whichever unit read it first; the symbolizer
		 * reads tables for units with code only. */
		if (unit_type == DW_UT_type || unit_type == DW_UT_split_type)
			continue;
		Dwarf_Attribute attr;
		Dwarf_Word offset;
		if (dwarf_formudata(dwarf_attr(&cudie, DW_AT_stmt_list, &attr), &offset) != 0)
			continue;
		Dwarf_Die unit;
		uint8_t address_size = 0, offset_size = 0;
		dwarf_diecu(&cudie, &unit, &address_size, &offset_size);
		line_table t;
		bool ours = t.read(s, offset, address_size,
				   dwarf_formstring(dwarf_attr(&cudie, DW_AT_comp_dir, &attr)));
		Dwarf_Lines *lines;
		size_t n;
		bool theirs = dwarf_getsrclines(&cudie, &lines, &n) == 0;
		if (!ours)
			fail_msg("%s: a unit's table refused (libdw %d)", path, theirs);
		assert_true(theirs);
		units++;

		Dwarf_Files *files;
		size_t nfiles;
		assert_int_equal(dwarf_getsrcfiles(&cudie, &files, &nfiles), 0);
		assert_int_equal(nfiles, t.files());
		for (size_t i = 0; i < nfiles; i++)
			assert_string_equal(dwarf_filesrc(files, i, nullptr, nullptr), t.file_name(i));
		const char *const *dirs;
		size_t ndirs;
		assert_int_equal(dwarf_getsrcdirs(files, &dirs, &ndirs), 0);
		assert_int_equal(ndirs, t.dirs());
		for (size_t i = 0; i < ndirs; i++) {
			if (!dirs[i] || !t.dir(i))
				assert_ptr_equal(dirs[i], t.dir(i));
			else
				assert_string_equal(dirs[i], t.dir(i));
		}
		for (size_t i = 0; i < n; i++) {
			Dwarf_Addr at;
			dwarf_lineaddr(dwarf_onesrcline(lines, i), &at);
			for (Dwarf_Addr a = at - 1; a != at + 2; a++) {
				Dwarf_Line *l = dwarf_getsrc_die(&cudie, a);
				uint32_t file;
				int line;
				bool found = t.find(a, &file, &line);
				if (found != (l != nullptr))
					fail_msg("%s: %#llx found by one reader only", path,
						 (unsigned long long)a);
				if (!l)
					continue;
				int want;
				dwarf_lineno(l, &want);
				assert_int_equal(line, want);
				assert_string_equal(t.file_name(file), dwarf_linesrc(l, nullptr, nullptr));
			}
		}
	}
	dwarf_end(dw);
	close(fd);
	return units;
}

void test_matches_libdw(void **)
{
	/* This program (C++, with the standard library's inline code) and the
	 * symbolizer's C fixture, which is built with -g. */
	size_t units = compare_with_libdw("/proc/self/exe");
	const char *fixture = getenv("SYMFIXTURE");
	if (fixture && *fixture && access(fixture, R_OK) == 0)
		units += compare_with_libdw(fixture);
	if (units == 0) {
		print_message("no debug information in this build: skipping\n");
		skip();
	}
}

} /* namespace */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_dwarf4),
		cmocka_unit_test(test_dwarf5),
		cmocka_unit_test(test_refused),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_matches_libdw),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
