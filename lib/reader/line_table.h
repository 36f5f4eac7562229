/* SPDX-License-Identifier: MIT */
/*
 * A compilation unit's line table (.debug_line), read by a reader of our own and kept
 * at 16 bytes a row.
 *
 * libdw's dwarf_getsrclines() keeps 48 bytes a row for as long as the Dwarf is open,
 * and builds them from nodes of 64 bytes allocated one at a time: the line tables of
 * a 73 MB C++ test program (yaml-cpp's, 49 units) took 59 MB, 37 MB of them one unit's
 * 458,000 rows. The symbolizer runs inside profiled programs (the heap profiler's
 * snapshots) and in a long-lived daemon, where that is memory taken from the program.
 * libdw reads the units themselves; only the line tables are read here.
 *
 * What a table holds is libdw's (0.188), so that answers do not change:
 *  - the rows in libdw's order: by address, an end of sequence before other rows at
 *    its address, else in program order; the last row marked as an end of sequence;
 *  - find(): the last row at or below the address, unless that is an end of sequence
 *    (dwfl_module_getsrc() and dwarf_getsrc_die());
 *  - file names joined to their directory as libdw joins them, index 0 "???" before
 *    DWARF 5; directories as libdw lists them, 0 the compilation directory before
 *    DWARF 5 (null when the unit names none).
 * A table that holds anything libdw would handle otherwise, or reject, or that this
 * reader does not know (a form it does not read, strx, a supplementary file, vendor
 * opcodes, a big-endian file, LEB128 numbers out of range), is refused: read() returns
 * false and the caller asks libdw, which then answers as before.
 *
 * Every read is bounded by the section's end: the sections come from files that
 * stores name, which anyone may have written.
 */
#ifndef ALLOCINFO_LINE_TABLE_H
#define ALLOCINFO_LINE_TABLE_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include <elfutils/libdw.h>

namespace allocinfo {

/* The sections a line table refers to, as the ELF file's data (null when absent). */
struct line_sections {
	const unsigned char *line = nullptr;
	size_t line_size = 0;
	const unsigned char *str = nullptr;	/* .debug_str: DW_FORM_strp */
	size_t str_size = 0;
	const unsigned char *line_str = nullptr; /* .debug_line_str: DW_FORM_line_strp */
	size_t line_str_size = 0;
};

/* .debug_line and the string sections of dw's ELF file: null where absent, still
 * compressed (libdw decompresses them in place when it opens them) or in a
 * big-endian file. */
line_sections line_sections_of(Dwarf *dw);

class line_table {
public:
	/* The table at offset in s.line, for a unit of address_size (4 or 8) whose
	 * DW_AT_comp_dir is comp_dir (may be null). False: refused (above); the table is
	 * then empty. The directories may point into the sections and comp_dir, which
	 * must outlive the table. */
	bool read(const line_sections &s, uint64_t offset, unsigned address_size,
		  const char *comp_dir);

	/* The row for addr (a DWARF address): its file index and line. */
	bool find(uint64_t addr, uint32_t *file, int *line) const;

	size_t files() const { return files_.size(); }
	/* Null when i is out of range. */
	const char *file_name(size_t i) const { return i < files_.size() ? files_[i].c_str() : nullptr; }
	size_t dirs() const { return dirs_.size(); }
	const char *dir(size_t i) const { return i < dirs_.size() ? dirs_[i] : nullptr; }

	/* The bytes the table holds, for its owner's budget. */
	size_t memory() const;

private:
	struct reader;
	static constexpr uint32_t END = 1u << 31; /* in row::file: an end of sequence */
	struct row {
		uint64_t addr;
		int32_t line;
		uint32_t file; /* with END */
	};
	std::vector<row> rows_;
	std::vector<std::string> files_;
	std::vector<const char *> dirs_;
};

} /* namespace allocinfo */

#endif /* ALLOCINFO_LINE_TABLE_H */
