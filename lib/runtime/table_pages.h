/* SPDX-License-Identifier: MIT */
/*
 * The pages of unwind tables a stack walk read, given back once it is done.
 *
 * A walk out of a wrapper reads .eh_frame_hdr and .eh_frame of every object it
 * passes, and each first read of a page maps the 64 KiB around it (the kernel's fault
 * around). A C++ program's walks through libstdc++ left 190 KiB of its tables
 * resident, where a run without the library has none: 3% of a 7 MiB program. The
 * walk's result is kept in the caller table, so that path needs the tables no more.
 *
 * The pages are clean pages of a read-only file mapping, so MADV_DONTNEED only unmaps
 * them: a later read (a C++ exception, the next walk) maps them again from the page
 * cache, with the same bytes. Only ranges that are certainly that are touched: in a
 * PT_LOAD segment that is readable and nothing else, outside RELRO, of an object
 * without text relocations, never this library's own (its read-only data is read by
 * every allocation); and each page is checked in /proc/self/pagemap to be the file's
 * or not there, never a private copy (written after an mprotect, or the mapping
 * replaced by anonymous memory), whose bytes MADV_DONTNEED would lose.
 *
 * Giving back costs 20-30 microseconds (the pagemap read, the unmapping and its TLB
 * flush). After one that took d, the next waits TABLES_SPACING * d; the ranges noted
 * meanwhile wait, and the next walk or refill of the small-block heap after that
 * gives them back. dlclose() holds the lock while objects leave (the outermost one,
 * when a destructor calls it again), and drops what waits: no range is given back
 * once its object may be gone.
 */
#ifndef ALLOCINFO_TABLE_PAGES_H
#define ALLOCINFO_TABLE_PAGES_H

#include "cfi_unwind.h"

namespace allocinfo {

/* Called right after a walk, while the objects it read are still on the stack. */
void tables_after_walk(const cfi::tables_read &read) HIDDEN;

extern bool g_tables_waiting HIDDEN;	/* ranges noted, not given back yet */
void give_back_waiting_tables() HIDDEN;

void tables_before_dlclose() HIDDEN;
void tables_after_dlclose() HIDDEN;
void tables_fork_child() HIDDEN;

/* The pages give_back would unmap for one object: false when none may be. */
bool table_range(const cfi::tables_read::object &o, uintptr_t *lo, uintptr_t *hi) HIDDEN;

} /* namespace allocinfo */

#endif
