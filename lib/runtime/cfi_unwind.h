/* SPDX-License-Identifier: MIT */
/*
 * A stack walk from the unwind tables alone (x86-64): what the wrapper walk needs of
 * libgcc_s's _Unwind_Backtrace, each frame's return address and CFA, without loading
 * libgcc_s into a C program (120 KiB resident, and a dlopen on the first walk out of
 * the C library that cost a short program a sixth of its instructions).
 *
 * Each frame's row is found by _dl_find_object() and the object's .eh_frame_hdr
 * table, then computed by running its CIE's and FDE's call frame instructions up to
 * the frame's address. What compilers emit for ordinary functions is understood: the
 * CFA as rsp or rbp plus an offset, rbp and the return address saved at offsets from
 * it, remembered and restored states. Anything else (a signal frame, a CFA or
 * register given by a DWARF expression, an object without a searchable table) ends
 * the walk as unknown, and the caller falls back to libgcc's unwinder. Every read of
 * the stack is checked to lie above the previous frame and within WALK_MAX_STACK of
 * the first, 8-byte aligned.
 */
#ifndef ALLOCINFO_CFI_UNWIND_H
#define ALLOCINFO_CFI_UNWIND_H

#include <link.h>

#include "internal.h"

namespace allocinfo {
namespace cfi {

enum class walk_end {
	done,		/* the visitor stopped, or the stack ended */
	unknown,	/* a frame that could not be unwound here */
};

/* Called for each frame as _Unwind_Backtrace's trace function sees it: ip the
 * return address into the frame (0 for the end of the stack, as the last), cfa the
 * CFA of the frame it called (so the slot holding ip is cfa - 8). Returns false to
 * stop. */
using visitor = bool (*)(void *arg, uintptr_t ip, uintptr_t cfa);

/* The objects whose unwind tables a walk read, as _dl_find_object() gave them (the
 * first MAX; table_pages.h gives their pages back). */
struct tables_read {
	static constexpr int MAX = 8;
	struct object {
		uintptr_t map_start, map_end;
		const void *eh_frame_hdr;
		const ::link_map *map;
	};
	object objects[MAX];
	int n = 0;
};

/* Visits the frame of walk()'s caller, then its callers'; read, when given, collects
 * the objects whose tables were read. */
walk_end walk(visitor visit, void *arg, tables_read *read = nullptr) HIDDEN;

/* The row of the frame at pc, for tests: the CFA as register (6 rbp, 7 rsp) plus
 * offset, and where rbp and the return address are saved (offsets from the CFA; 0 for
 * rbp: not saved). False when pc's frame is not understood. */
struct row {
	unsigned cfa_reg;
	int64_t cfa_offset;
	int64_t rbp_offset;
	int64_t ra_offset;
	bool ra_undefined;	/* the outermost frame */
};
bool row_at(uintptr_t pc, row &out) HIDDEN;

} /* namespace cfi */
} /* namespace allocinfo */

#endif
