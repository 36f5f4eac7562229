/* SPDX-License-Identifier: MIT */
/* Stack walks from .eh_frame (cfi_unwind.h). DWARF 5, section 6.4; the .eh_frame
 * and .eh_frame_hdr formats of the Linux Standard Base. */
#include "cfi_unwind.h"

#include <dlfcn.h>
#include <string.h>

#include "frames.h"

namespace allocinfo {
namespace cfi {

#if defined(__x86_64__) && defined(ALLOCINFO_HAVE_DL_FIND_OBJECT)

namespace {

/* DWARF register numbers (x86-64 psABI). */
constexpr unsigned REG_RBP = 6, REG_RSP = 7, REG_RA = 16;

/* Pointer encodings (DW_EH_PE_*). */
constexpr uint8_t PE_OMIT = 0xff, PE_ABSPTR = 0x00, PE_UDATA2 = 0x02, PE_UDATA4 = 0x03,
		  PE_UDATA8 = 0x04, PE_SDATA2 = 0x0a, PE_SDATA4 = 0x0b, PE_SDATA8 = 0x0c,
		  PE_PCREL = 0x10, PE_DATAREL = 0x30, PE_INDIRECT = 0x80;

/* A reader over [p, end) that fails for good on the first byte out of bounds. */
struct reader {
	const uint8_t *p, *end;
	bool bad = false;

	bool have(size_t n)
	{
		if (bad || (size_t)(end - p) < n)
			bad = true;
		return !bad;
	}
	uint8_t u8() { return have(1) ? *p++ : 0; }
	template <typename T> T fixed()
	{
		T v = 0;
		if (have(sizeof(T))) {
			memcpy(&v, p, sizeof(T));
			p += sizeof(T);
		}
		return v;
	}
	uint64_t uleb()
	{
		uint64_t v = 0;
		for (unsigned shift = 0; have(1); shift += 7) {
			uint8_t b = *p++;
			if (shift < 64)
				v |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				return v;
		}
		return 0;
	}
	int64_t sleb()
	{
		uint64_t v = 0;
		unsigned shift = 0;
		uint8_t b = 0;
		while (have(1)) {
			b = *p++;
			if (shift < 64)
				v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
			if (!(b & 0x80))
				break;
		}
		if (shift < 64 && (b & 0x40))
			v |= ~(uint64_t)0 << shift;
		return (int64_t)v;
	}
	/* An encoded pointer; datarel is relative to dbase. Indirect ones are only
	 * skipped over (the personality routine), returning 0. */
	uintptr_t pointer(uint8_t enc, uintptr_t dbase = 0)
	{
		if (enc == PE_OMIT)
			return 0;
		uintptr_t at = (uintptr_t)p, v;
		switch (enc & 0x0f) {
		case PE_ABSPTR: v = fixed<uint64_t>(); break;
		case PE_UDATA2: v = fixed<uint16_t>(); break;
		case PE_UDATA4: v = fixed<uint32_t>(); break;
		case PE_UDATA8: v = fixed<uint64_t>(); break;
		case PE_SDATA2: v = (uintptr_t)(int64_t)fixed<int16_t>(); break;
		case PE_SDATA4: v = (uintptr_t)(int64_t)fixed<int32_t>(); break;
		case PE_SDATA8: v = (uintptr_t)fixed<int64_t>(); break;
		default: bad = true; return 0;
		}
		switch (enc & 0x70) {
		case 0: break;
		case PE_PCREL: v += at; break;
		case PE_DATAREL: v += dbase; break;
		default: bad = true; return 0;
		}
		return (enc & PE_INDIRECT) ? 0 : v;
	}
};

/* How a register is recovered in a row: left as it is, or saved at CFA + offset. */
struct rule {
	bool saved = false;
	bool undefined = false;
	int64_t offset = 0;
};

struct state {
	unsigned cfa_reg = REG_RSP;
	int64_t cfa_offset = 0;
	rule rbp, ra;
};

/* What is read of a CIE. */
struct cie_info {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_encoding;
	bool augmented;		/* 'z': FDEs have augmentation data */
	const uint8_t *insns, *insns_end;
};

/* The length field of an entry at p; false for the 64-bit format and the terminator. */
bool entry_bounds(const uint8_t *p, const uint8_t **body, const uint8_t **end)
{
	uint32_t len;
	memcpy(&len, p, sizeof(len));
	if (len == 0 || len == 0xffffffffu)
		return false;
	*body = p + 4;
	*end = p + 4 + len;
	return true;
}

bool read_cie(const uint8_t *p, cie_info &c)
{
	const uint8_t *body, *end;
	if (!entry_bounds(p, &body, &end))
		return false;
	reader r{ body, end };
	if (r.fixed<uint32_t>() != 0)	/* a CIE's id */
		return false;
	uint8_t version = r.u8();
	if (version != 1 && version != 3)
		return false;
	const char *aug = reinterpret_cast<const char *>(r.p);
	size_t aug_len = strnlen(aug, (size_t)(end - r.p));
	if (!r.have(aug_len + 1))
		return false;
	r.p += aug_len + 1;
	c.code_align = r.uleb();
	c.data_align = r.sleb();
	uint64_t ra_reg = version == 1 ? r.u8() : r.uleb();
	if (ra_reg != REG_RA)
		return false;
	c.fde_encoding = PE_ABSPTR;
	c.augmented = aug_len && aug[0] == 'z';
	if (c.augmented) {
		uint64_t len = r.uleb();
		if (!r.have(len))
			return false;
		const uint8_t *data_end = r.p + len;
		for (size_t i = 1; i < aug_len && !r.bad; i++) {
			switch (aug[i]) {
			case 'R': c.fde_encoding = r.u8(); break;
			case 'L': r.u8(); break;
			case 'P': r.pointer(r.u8()); break;
			default: return false;	/* 'S' (a signal frame) and the unknown */
			}
		}
		r.p = data_end;
	} else if (aug_len) {
		return false;
	}
	c.insns = r.p;
	c.insns_end = end;
	return !r.bad && c.code_align != 0;
}

/* Runs call frame instructions from loc while loc <= pc; `initial` is the CIE's row
 * that DW_CFA_restore goes back to. */
bool run(const uint8_t *p, const uint8_t *end, const cie_info &c, uintptr_t loc, uintptr_t pc,
	 state &s, const state &initial)
{
	constexpr int MAX_REMEMBERED = 8;
	state remembered[MAX_REMEMBERED];
	int depth = 0;
	reader r{ p, end };
	auto set_offset = [&](uint64_t reg, int64_t off) {
		if (reg == REG_RBP)
			s.rbp = { true, false, off };
		else if (reg == REG_RA)
			s.ra = { true, false, off };
	};
	auto restore = [&](uint64_t reg) {
		if (reg == REG_RBP)
			s.rbp = initial.rbp;
		else if (reg == REG_RA)
			s.ra = initial.ra;
	};
	auto unusable = [](uint64_t reg) { return reg == REG_RBP || reg == REG_RA; };
	while (r.p < r.end && !r.bad) {
		uint8_t op = r.u8();
		uint64_t reg, delta = 0;
		switch (op >> 6) {
		case 1:	/* DW_CFA_advance_loc */
			delta = (op & 0x3f) * c.code_align;
			break;
		case 2:	/* DW_CFA_offset */
			set_offset(op & 0x3f, (int64_t)r.uleb() * c.data_align);
			continue;
		case 3:	/* DW_CFA_restore */
			restore(op & 0x3f);
			continue;
		default:
			switch (op) {
			case 0x00:	/* nop */
				continue;
			case 0x02: delta = r.u8() * c.code_align; break;
			case 0x03: delta = r.fixed<uint16_t>() * c.code_align; break;
			case 0x04: delta = r.fixed<uint32_t>() * c.code_align; break;
			case 0x05:	/* offset_extended */
				reg = r.uleb();
				set_offset(reg, (int64_t)r.uleb() * c.data_align);
				continue;
			case 0x06:	/* restore_extended */
				restore(r.uleb());
				continue;
			case 0x07:	/* undefined */
				reg = r.uleb();
				if (reg == REG_RBP)
					s.rbp = {};
				else if (reg == REG_RA)
					s.ra = { false, true, 0 };
				continue;
			case 0x08:	/* same_value */
				reg = r.uleb();
				if (reg == REG_RBP)
					s.rbp = {};
				else if (reg == REG_RA)
					return false;
				continue;
			case 0x09:	/* register: kept in another register */
				reg = r.uleb();
				r.uleb();
				if (unusable(reg))
					return false;
				continue;
			case 0x0a:	/* remember_state */
				if (depth == MAX_REMEMBERED)
					return false;
				remembered[depth++] = s;
				continue;
			case 0x0b:	/* restore_state */
				if (depth == 0)
					return false;
				s = remembered[--depth];	/* the whole row, CFA too */
				continue;
			case 0x0c:	/* def_cfa */
				s.cfa_reg = (unsigned)r.uleb();
				s.cfa_offset = (int64_t)r.uleb();
				continue;
			case 0x0d:	/* def_cfa_register */
				s.cfa_reg = (unsigned)r.uleb();
				continue;
			case 0x0e:	/* def_cfa_offset */
				s.cfa_offset = (int64_t)r.uleb();
				continue;
			case 0x10:	/* expression */
			case 0x16:	/* val_expression */
				reg = r.uleb();
				{
					uint64_t len = r.uleb();
					if (unusable(reg) || !r.have(len))
						return false;
					r.p += len;
				}
				continue;
			case 0x11:	/* offset_extended_sf */
				reg = r.uleb();
				set_offset(reg, r.sleb() * c.data_align);
				continue;
			case 0x12:	/* def_cfa_sf */
				s.cfa_reg = (unsigned)r.uleb();
				s.cfa_offset = r.sleb() * c.data_align;
				continue;
			case 0x13:	/* def_cfa_offset_sf */
				s.cfa_offset = r.sleb() * c.data_align;
				continue;
			case 0x14:	/* val_offset */
			case 0x15:	/* val_offset_sf */
				reg = r.uleb();
				if (unusable(reg))
					return false;
				if (op == 0x14)
					r.uleb();
				else
					r.sleb();
				continue;
			case 0x2e:	/* GNU_args_size */
				r.uleb();
				continue;
			case 0x2f:	/* GNU_negative_offset_extended */
				reg = r.uleb();
				set_offset(reg, -(int64_t)r.uleb() * c.data_align);
				continue;
			default:	/* set_loc, def_cfa_expression, vendor opcodes */
				return false;
			}
		}
		/* An advance: the row so far is pc's once the next would pass it. */
		if (loc + delta > pc)
			return !r.bad;
		loc += delta;
	}
	return !r.bad;
}

/* The FDE for pc in the object whose .eh_frame_hdr is hdr, by its sorted table. */
const uint8_t *find_fde(const uint8_t *hdr, uintptr_t pc)
{
	/* version, eh_frame_ptr_enc, fde_count_enc, table_enc */
	if (hdr[0] != 1 || hdr[3] != (PE_DATAREL | PE_SDATA4))
		return nullptr;
	reader r{ hdr + 4, hdr + 4 + 16 };
	r.pointer(hdr[1], (uintptr_t)hdr);
	uint64_t count = r.pointer(hdr[2], (uintptr_t)hdr);
	if (r.bad || count == 0 || (hdr[2] & 0x70))
		return nullptr;
	struct entry {
		int32_t loc, fde;
	};
	const auto *table = reinterpret_cast<const entry *>(r.p);
	uintptr_t base = (uintptr_t)hdr;
	size_t lo = 0, hi = count;	/* the last entry whose loc <= pc */
	if ((uintptr_t)(base + table[0].loc) > pc)
		return nullptr;
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if ((uintptr_t)(base + table[mid].loc) <= pc)
			lo = mid;
		else
			hi = mid;
	}
	return reinterpret_cast<const uint8_t *>(base + table[lo].fde);
}

void note_object(tables_read *read, const struct dl_find_object &obj)
{
	if (!read)
		return;
	for (int i = 0; i < read->n; i++)
		if (read->objects[i].eh_frame_hdr == obj.dlfo_eh_frame)
			return;
	if (read->n < tables_read::MAX)
		read->objects[read->n++] = { (uintptr_t)obj.dlfo_map_start,
					     (uintptr_t)obj.dlfo_map_end, obj.dlfo_eh_frame,
					     obj.dlfo_link_map };
}

bool row_in(uintptr_t pc, row &out, tables_read *read)
{
	struct dl_find_object obj;
	if (_dl_find_object(reinterpret_cast<void *>(pc), &obj) != 0 || !obj.dlfo_eh_frame)
		return false;
	note_object(read, obj);
	const uint8_t *fde = find_fde(static_cast<const uint8_t *>(obj.dlfo_eh_frame), pc);
	const uint8_t *body, *end;
	if (!fde || !entry_bounds(fde, &body, &end))
		return false;
	reader r{ body, end };
	uint32_t cie_delta = r.fixed<uint32_t>();
	if (cie_delta == 0)	/* a CIE, not an FDE */
		return false;
	cie_info c;
	if (!read_cie(body - cie_delta, c))
		return false;
	uintptr_t begin = r.pointer(c.fde_encoding);
	uintptr_t range = r.pointer(c.fde_encoding & 0x0f);
	if (r.bad || pc < begin || pc - begin >= range)
		return false;
	if (c.augmented) {	/* the LSDA pointer, not needed here */
		uint64_t len = r.uleb();
		if (!r.have(len))
			return false;
		r.p += len;
	}
	state initial;
	if (!run(c.insns, c.insns_end, c, begin, ~(uintptr_t)0, initial, initial))
		return false;
	state s = initial;
	if (!run(r.p, end, c, begin, pc, s, initial))
		return false;
	if ((s.cfa_reg != REG_RSP && s.cfa_reg != REG_RBP) || (!s.ra.saved && !s.ra.undefined))
		return false;
	out.cfa_reg = s.cfa_reg;
	out.cfa_offset = s.cfa_offset;
	out.rbp_offset = s.rbp.saved ? s.rbp.offset : 0;
	out.ra_offset = s.ra.offset;
	out.ra_undefined = s.ra.undefined;
	return true;
}

} /* namespace */

bool row_at(uintptr_t pc, row &out)
{
	return row_in(pc, out, nullptr);
}

/* Uninstrumented, as libgcc's unwinder is: it reads other frames' saved registers. */
[[gnu::noinline, gnu::no_sanitize_address]] walk_end walk(visitor visit, void *arg,
							   tables_read *read)
{
	uintptr_t ip, sp, bp;
	asm volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
		     : "=r"(ip), "=r"(sp), "=r"(bp));
	const uintptr_t lowest = sp;
	bool exact = true;	/* ip is where this frame is, not a return address */
	for (int depth = 0; depth < 256; depth++) {
		row rw;
		if (!row_in(exact ? ip : ip - 1, rw, read))
			return walk_end::unknown;
		uintptr_t cfa = (rw.cfa_reg == REG_RSP ? sp : bp) + (uintptr_t)rw.cfa_offset;
		uintptr_t ra_slot = cfa + (uintptr_t)rw.ra_offset;
		/* Up the stack, within reach, aligned: anything else is not a frame. */
		if (cfa <= sp || cfa - lowest > WALK_MAX_STACK || (cfa & 7))
			return walk_end::unknown;
		if (rw.ra_undefined) {	/* the outermost frame: its caller is 0 */
			visit(arg, 0, cfa);
			return walk_end::done;
		}
		if (ra_slot < sp || ra_slot >= cfa)
			return walk_end::unknown;
		uintptr_t ra = *reinterpret_cast<const uintptr_t *>(ra_slot);
		if (rw.rbp_offset) {
			uintptr_t slot = cfa + (uintptr_t)rw.rbp_offset;
			if (slot < sp || slot >= cfa || (slot & 7))
				return walk_end::unknown;
			bp = *reinterpret_cast<const uintptr_t *>(slot);
		}
		sp = cfa;
		ip = ra;
		exact = false;
		/* A return address of 0 ends the stack; libgcc's walk shows it too. */
		if (!visit(arg, ip, cfa) || !ip)
			return walk_end::done;
	}
	return walk_end::unknown;
}

#else	/* no _dl_find_object, or not x86-64: libgcc's unwinder alone */

bool row_at(uintptr_t, row &)
{
	return false;
}

walk_end walk(visitor, void *, tables_read *)
{
	return walk_end::unknown;
}

#endif

} /* namespace cfi */
} /* namespace allocinfo */
