/* SPDX-License-Identifier: MIT */
/* A compilation unit's line table, read compactly (line_table.h). */
#include "line_table.h"

#include <algorithm>
#include <climits>
#include <cstring>

#include <dwarf.h>
#include <gelf.h>

namespace allocinfo {

namespace {

/* Bounded little-endian reads over [p, end); any read past end, or a number this
 * reader does not take, makes ok false, and every later read returns 0. */
struct cursor {
	const unsigned char *p, *end;
	bool ok = true;

	size_t left() const { return ok ? (size_t)(end - p) : 0; }

	bool need(size_t n)
	{
		if (ok && (size_t)(end - p) >= n)
			return true;
		ok = false;
		return false;
	}

	uint64_t fixed(size_t n)
	{
		if (!need(n))
			return 0;
		uint64_t v = 0;
		for (size_t i = 0; i < n; i++)
			v |= (uint64_t)p[i] << (8 * i);
		p += n;
		return v;
	}

	uint8_t u8() { return (uint8_t)fixed(1); }

	/* Only numbers ended within ten bytes that fit 64 bits: libdw reads others
	 * as UINT64_MAX. */
	uint64_t uleb()
	{
		uint64_t v = 0;
		for (unsigned i = 0; i < 10; i++) {
			if (!need(1))
				return 0;
			unsigned char b = *p++;
			if (i == 9 && b > 1)
				break;
			v |= (uint64_t)(b & 0x7f) << (7 * i);
			if (!(b & 0x80))
				return v;
		}
		ok = false;
		return 0;
	}

	/* Within nine bytes, where libdw's reading and the value agree. */
	int64_t sleb()
	{
		uint64_t v = 0;
		for (unsigned i = 0; i < 9; i++) {
			if (!need(1))
				return 0;
			unsigned char b = *p++;
			v |= (uint64_t)(b & 0x7f) << (7 * i);
			if (!(b & 0x80)) {
				if (b & 0x40)
					v |= ~(uint64_t)0 << (7 * (i + 1));
				return (int64_t)v;
			}
		}
		ok = false;
		return 0;
	}

	/* A uleb that must fit 32 bits: libdw keeps these in unsigned int. */
	uint32_t uleb32()
	{
		uint64_t v = uleb();
		if (v > UINT32_MAX)
			ok = false;
		return ok ? (uint32_t)v : 0;
	}

	/* A NUL-terminated string in place. */
	const char *cstring()
	{
		if (!need(1))
			return nullptr;
		const void *nul = memchr(p, 0, (size_t)(end - p));
		if (!nul) {
			ok = false;
			return nullptr;
		}
		const char *s = reinterpret_cast<const char *>(p);
		p = static_cast<const unsigned char *>(nul) + 1;
		return s;
	}
};

/* The string at off in a string section, NUL-terminated inside it, or null. */
const char *string_at(const unsigned char *sec, size_t size, uint64_t off)
{
	if (!sec || off >= size || !memchr(sec + off, 0, size - off))
		return nullptr;
	return reinterpret_cast<const char *>(sec + off);
}

/* One entry of a DWARF 5 directory or file list, by its formats: the path and the
 * directory index where the formats give them. False when a form is one this
 * reader does not take. */
bool read_entry(cursor &c, const line_sections &s, unsigned offset_size,
		const std::vector<std::pair<uint64_t, uint64_t>> &formats, const char **path,
		uint64_t *dir_index)
{
	for (const auto &f : formats) {
		uint64_t content = f.first, form = f.second;
		const char *str = nullptr;
		uint64_t num = 0;
		bool is_num = false;
		switch (form) {
		case DW_FORM_string:
			str = c.cstring();
			break;
		case DW_FORM_line_strp:
			str = string_at(s.line_str, s.line_str_size, c.fixed(offset_size));
			break;
		case DW_FORM_strp:
			str = string_at(s.str, s.str_size, c.fixed(offset_size));
			break;
		case DW_FORM_udata:
			num = c.uleb();
			is_num = true;
			break;
		case DW_FORM_data1:
		case DW_FORM_data2:
		case DW_FORM_data4:
		case DW_FORM_data8:
			num = c.fixed(form == DW_FORM_data1   ? 1
				      : form == DW_FORM_data2 ? 2
				      : form == DW_FORM_data4 ? 4
							      : 8);
			is_num = true;
			break;
		case DW_FORM_data16:
			c.fixed(8);
			c.fixed(8);
			break;
		case DW_FORM_block:
		case DW_FORM_block1:
		case DW_FORM_block2: {
			uint64_t n = form == DW_FORM_block ? c.uleb()
							   : c.fixed(form == DW_FORM_block1 ? 1 : 2);
			if (c.need(n))
				c.p += n;
			break;
		}
		default:
			return false; /* strx (needs the unit's offsets), strp_sup, ... */
		}
		if (!c.ok)
			return false;
		if (content == DW_LNCT_path) {
			if (!str)
				return false;
			*path = str;
		} else if (content == DW_LNCT_directory_index) {
			if (!is_num)
				return false;
			*dir_index = num;
		}
	}
	return true;
}

/* name as libdw gives it: an absolute name as it is, else joined to its directory
 * (left relative when that is unknown). */
std::string joined(const char *dir, const char *name)
{
	if (name[0] == '/' || !dir)
		return name;
	std::string s(dir);
	s += '/';
	s += name;
	return s;
}

/* The entry formats of a DWARF 5 list: (content type, form) pairs. libdw keeps the
 * content type in 16 bits; larger ones are refused rather than cut. */
bool read_formats(cursor &c, std::vector<std::pair<uint64_t, uint64_t>> &formats)
{
	unsigned n = c.u8();
	for (unsigned i = 0; i < n && c.ok; i++) {
		uint64_t content = c.uleb(), form = c.uleb();
		if (content > UINT16_MAX || form > UINT16_MAX)
			return false;
		formats.emplace_back(content, form);
	}
	return c.ok;
}

bool has_content(const std::vector<std::pair<uint64_t, uint64_t>> &formats, uint64_t content)
{
	for (const auto &f : formats)
		if (f.first == content)
			return true;
	return false;
}

} /* namespace */

/* The reading itself, with the table's insides. */
struct line_table::reader {
	line_table &t;
	cursor c;

	/* What the header says about the program. */
	struct header {
		const unsigned char *lengths; /* the standard opcodes' operand counts, from 1 */
		unsigned opcode_base, min_inst_length, max_ops, line_range,
			address_size;
		int line_base;
	};

	bool unit(const line_sections &s, unsigned address_size, const char *comp_dir);
	/* Runs the program from c: counts its rows, or stores them (store). */
	bool program(const header &h, bool store, size_t *count);
};

bool line_table::reader::unit(const line_sections &s, unsigned address_size, const char *comp_dir)
{
	std::vector<std::string> &files = t.files_;
	std::vector<const char *> &dirs = t.dirs_;

	/* The header (DWARF 5, 6.2.4). */
	uint64_t unit_length = c.fixed(4);
	unsigned offset_size = 4;
	if (unit_length == 0xffffffff) {
		unit_length = c.fixed(8);
		offset_size = 8;
	} else if (unit_length >= 0xfffffff0) {
		return false;
	}
	if (!c.need(unit_length))
		return false;
	c.end = c.p + unit_length;
	unsigned version = (unsigned)c.fixed(2);
	if (version < 2 || version > 5)
		return false;
	if (version >= 5 && (c.u8() != address_size || c.u8() != 0))
		return false;
	uint64_t header_length = c.fixed(offset_size);
	if (!c.need(header_length))
		return false;
	const unsigned char *program_start = c.p + header_length;
	unsigned min_inst_length = c.u8();
	unsigned max_ops = version >= 4 ? c.u8() : 1;
	unsigned default_is_stmt = c.u8();
	int line_base = (int8_t)c.u8();
	unsigned line_range = c.u8();
	unsigned opcode_base = c.u8();
	/* Every standard opcode of DWARF 2 has its length given; odd values of the rest
	 * are read by libdw in ways of its own. */
	if (!c.ok || max_ops == 0 || default_is_stmt > 1 || line_range == 0 || opcode_base < 10)
		return false;
	const unsigned char *lengths = c.p - 1; /* lengths[op], op from 1 */
	if (!c.need(opcode_base - 1))
		return false;
	c.p += opcode_base - 1;

	/* Directories: before DWARF 5, 0 is the compilation directory and the rest are
	 * strings up to an empty one. */
	if (version < 5) {
		dirs.push_back(comp_dir);
		for (;;) {
			const char *d = c.cstring();
			if (!d)
				return false;
			if (!*d)
				break;
			dirs.push_back(d);
		}
		files.emplace_back("???");
		for (;;) {
			const char *name = c.cstring();
			if (!name)
				return false;
			if (!*name)
				break;
			uint64_t dir = c.uleb();
			c.uleb(); /* modification time */
			c.uleb(); /* length */
			if (!c.ok || dir >= dirs.size())
				return false;
			files.push_back(joined(dirs[dir], name));
		}
	} else {
		std::vector<std::pair<uint64_t, uint64_t>> formats;
		if (!read_formats(c, formats))
			return false;
		uint64_t n = c.uleb();
		if (!c.ok || (formats.empty() && n) || (!formats.empty() && !has_content(formats, DW_LNCT_path)) ||
		    (!formats.empty() && n > c.left() / formats.size()))
			return false;
		for (uint64_t i = 0; i < n; i++) {
			const char *path = nullptr;
			uint64_t unused = 0;
			if (!read_entry(c, s, offset_size, formats, &path, &unused))
				return false;
			dirs.push_back(path);
		}
		formats.clear();
		if (!read_formats(c, formats))
			return false;
		n = c.uleb();
		if (!c.ok || (formats.empty() && n) ||
		    (!formats.empty() && (!has_content(formats, DW_LNCT_path) ||
					  !has_content(formats, DW_LNCT_directory_index) ||
					  n > c.left() / formats.size())))
			return false;
		/* Index 0 is the unit's primary file; libdw puts "???" there only when
		 * the list is empty. */
		for (uint64_t i = 0; i < n; i++) {
			const char *path = nullptr;
			uint64_t dir = UINT64_MAX;
			if (!read_entry(c, s, offset_size, formats, &path, &dir) ||
			    dir >= dirs.size())
				return false;
			files.push_back(joined(dirs[dir], path));
		}
		if (files.empty())
			files.emplace_back("???");
	}
	/* libdw takes a 4-byte offset that CUBINs leave here; refused with the other
	 * vendor forms. */
	if (c.p != program_start || !c.ok)
		return false;

	/* Counted first, so that the rows take no room beyond their own. */
	header h = {lengths, opcode_base, min_inst_length, max_ops, line_range, address_size,
		    line_base};
	const unsigned char *start = c.p;
	size_t declared = files.size(), n = 0;
	if (!program(h, false, &n))
		return false;
	files.resize(declared);	/* DW_LNE_define_file's, made again below */
	c.p = start;
	t.rows_.reserve(n);
	if (!program(h, true, &n))
		return false;

	/* libdw's order: by address, an end of sequence first, else as written. The
	 * merge takes half the rows' room again, for the time of the sort. */
	std::vector<line_table::row> &rows = t.rows_;
	std::stable_sort(rows.begin(), rows.end(),
			 [](const line_table::row &a, const line_table::row &b) {
				 if (a.addr != b.addr)
					 return a.addr < b.addr;
				 return (a.file & line_table::END) > (b.file & line_table::END);
			 });
	if (!rows.empty())
		rows.back().file |= line_table::END;	/* as libdw does */
	return true;
}

bool line_table::reader::program(const header &h, bool store, size_t *count)
{
	const unsigned char *lengths = h.lengths;
	const unsigned opcode_base = h.opcode_base, min_inst_length = h.min_inst_length,
		       max_ops = h.max_ops, line_range = h.line_range,
		       address_size = h.address_size;
	const int line_base = h.line_base;
	std::vector<line_table::row> &rows = t.rows_;
	*count = 0;
	/* The state machine's registers that a row keeps or libdw checks. */
	uint64_t addr = 0;
	uint32_t op_index = 0, file = 1, column = 0, isa = 0, discriminator = 0;
	int64_t line = 1;
	auto reset = [&] {
		addr = 0;
		op_index = 0;
		file = 1;
		line = 1;
		column = 0;
		isa = 0;
		discriminator = 0;
	};
	/* libdw computes the advance in unsigned int; one that would wrap is refused. */
	auto advance = [&](uint64_t operations) {
		uint64_t ops = op_index + operations;
		uint64_t step = (uint64_t)min_inst_length * (ops / max_ops);
		if (ops > UINT32_MAX || step > UINT32_MAX)
			return false;
		addr += step;
		op_index = (uint32_t)(ops % max_ops);
		return true;
	};
	/* libdw rejects the whole table when a row's values do not fit its fields. */
	auto add = [&](bool end) {
		if (line < INT_MIN || line > INT_MAX || column > 0xffff || isa > 0xff ||
		    discriminator >= (1u << 24) || file >= line_table::END)
			return false;
		if (store)
			rows.push_back({addr, (int32_t)line, file | (end ? line_table::END : 0)});
		++*count;
		return true;
	};
	/* The standard opcodes' operand counts must be the standard ones. */
	auto operands = [&](unsigned op, unsigned n) { return lengths[op] == n; };

	while (c.ok && c.p < c.end) {
		unsigned op = *c.p++;
		if (op >= opcode_base) {	/* special */
			unsigned adjusted = op - opcode_base;
			line += line_base + (int)(adjusted % line_range);
			if (!advance(adjusted / line_range) || !add(false))
				return false;
			discriminator = 0;
			continue;
		}
		if (op == 0) {			/* extended */
			if (!c.need(2))
				return false;
			unsigned len = *c.p++;
			if (!c.need(len))
				return false;
			unsigned sub = *c.p++;
			switch (sub) {
			case DW_LNE_end_sequence:
				if (!add(true))
					return false;
				reset();
				break;
			case DW_LNE_set_address:
				op_index = 0;
				addr = c.fixed(address_size);
				break;
			case DW_LNE_define_file: {
				const char *name = c.cstring();
				uint32_t dir = c.uleb32();
				c.uleb();	/* modification time */
				c.uleb();	/* length */
				if (!c.ok || dir >= t.dirs_.size())
					return false;
				t.files_.push_back(joined(t.dirs_[dir], name));
				break;
			}
			case DW_LNE_set_discriminator:
				if (!operands(DW_LNE_set_discriminator, 1))
					return false;	/* libdw checks this, oddly */
				discriminator = c.uleb32();
				break;
			case DW_LNE_NVIDIA_inlined_call:	/* read otherwise by libdw */
			case DW_LNE_NVIDIA_set_function_name:
				return false;
			default:	/* unknown: skipped by its length */
				if (len == 0)
					return false;
				c.p += len - 1;
				break;
			}
			continue;
		}
		switch (op) {
		case DW_LNS_copy:
			if (!operands(op, 0) || !add(false))
				return false;
			discriminator = 0;
			break;
		case DW_LNS_advance_pc:
			if (!operands(op, 1) || !advance(c.uleb32()))
				return false;
			break;
		case DW_LNS_advance_line: {
			int64_t d = c.sleb();
			if (!operands(op, 1) || d < INT_MIN || d > INT_MAX)
				return false;
			line += d;
			break;
		}
		case DW_LNS_set_file:
			if (!operands(op, 1))
				return false;
			file = c.uleb32();
			break;
		case DW_LNS_set_column:
			if (!operands(op, 1))
				return false;
			column = c.uleb32();
			break;
		case DW_LNS_negate_stmt:
			if (!operands(op, 0))
				return false;
			/* no row keeps is_stmt; libdw's check of it cannot fail, as
			 * default_is_stmt is 0 or 1 (unit()) */
			break;
		case DW_LNS_set_basic_block:
		case DW_LNS_set_prologue_end:
		case DW_LNS_set_epilogue_begin:
			if (!operands(op, 0))
				return false;
			break;
		case DW_LNS_const_add_pc:
			if (!operands(op, 0) || !advance((255 - opcode_base) / line_range))
				return false;
			break;
		case DW_LNS_fixed_advance_pc:
			if (!operands(op, 1))
				return false;
			addr += c.fixed(2);
			op_index = 0;
			break;
		case DW_LNS_set_isa:
			if (!operands(op, 1))
				return false;
			isa = c.uleb32();
			break;
		default:	/* a standard opcode of a later version: its operands skipped */
			for (unsigned n = lengths[op]; n > 0 && c.ok; n--)
				c.uleb();
			break;
		}
	}
	return c.ok;
}

bool line_table::read(const line_sections &s, uint64_t offset, unsigned address_size,
		      const char *comp_dir)
{
	rows_.clear();
	files_.clear();
	dirs_.clear();
	bool ok = false;
	if (s.line && offset < s.line_size && (address_size == 4 || address_size == 8)) {
		reader r{*this, cursor{s.line + offset, s.line + s.line_size}};
		ok = r.unit(s, address_size, comp_dir);
	}
	if (!ok) {
		rows_ = {};
		files_ = {};
		dirs_ = {};
	}
	return ok;
}

bool line_table::find(uint64_t addr, uint32_t *file, int *line) const
{
	if (rows_.empty())
		return false;
	size_t l = 0, u = rows_.size() - 1;
	while (l < u) {
		size_t mid = u - (u - l) / 2;
		if (addr < rows_[mid].addr)
			u = mid - 1;
		else
			l = mid;
	}
	const row &r = rows_[l];
	if ((r.file & END) || r.addr > addr)
		return false;
	*file = r.file;
	*line = r.line;
	return true;
}

size_t line_table::memory() const
{
	size_t n = sizeof(*this) + rows_.capacity() * sizeof(row) +
		   files_.capacity() * sizeof(std::string) + dirs_.capacity() * sizeof(char *);
	for (const std::string &f : files_)
		n += f.capacity() + 1;
	return n;
}

line_sections line_sections_of(Dwarf *dw)
{
	line_sections s;
	Elf *elf = dw ? dwarf_getelf(dw) : nullptr;
	size_t shstrndx = 0;
	const char *ident = elf ? elf_getident(elf, nullptr) : nullptr;
	if (!ident || ident[EI_DATA] != ELFDATA2LSB || elf_getshdrstrndx(elf, &shstrndx) != 0)
		return s;
	for (Elf_Scn *scn = elf_nextscn(elf, nullptr); scn; scn = elf_nextscn(elf, scn)) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type == SHT_NOBITS ||
		    (shdr.sh_flags & SHF_COMPRESSED))
			continue;
		const char *name = elf_strptr(elf, shstrndx, shdr.sh_name);
		Elf_Data *d = name ? elf_getdata(scn, nullptr) : nullptr;
		if (!d || !d->d_buf)
			continue;
		const auto *data = static_cast<const unsigned char *>(d->d_buf);
		if (strcmp(name, ".debug_line") == 0)
			s.line = data, s.line_size = d->d_size;
		else if (strcmp(name, ".debug_str") == 0)
			s.str = data, s.str_size = d->d_size;
		else if (strcmp(name, ".debug_line_str") == 0)
			s.line_str = data, s.line_str_size = d->d_size;
	}
	return s;
}

} /* namespace allocinfo */
