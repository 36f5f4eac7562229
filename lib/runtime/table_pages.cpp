/* SPDX-License-Identifier: MIT */
/* Unwind tables' pages given back after a walk (table_pages.h). */
#include "table_pages.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "futex_lock.h"
#include "nocancel.h"

namespace allocinfo {

namespace {

/* The kernel's fault-around window (fault_around_bytes, 64 KiB unless changed): a
 * read of the table maps this much around it, aligned. */
constexpr uintptr_t FAULT_AROUND = 64 << 10;
constexpr uintptr_t PAGE = 4096;
constexpr uint64_t TABLES_SPACING = 50;
constexpr int MAX_WAITING = 16;

uint64_t g_next_ns;	/* no give back before this (CLOCK_MONOTONIC), under the lock */

bool has_text_relocations(const ElfW(Dyn) *d)
{
	for (; d && d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_TEXTREL || (d->d_tag == DT_FLAGS && (d->d_un.d_val & DF_TEXTREL)))
			return true;
	return false;
}

} /* namespace */

bool table_range(const cfi::tables_read::object &o, uintptr_t *lo, uintptr_t *hi)
{
	/* The ELF header starts the first segment, which the object's range starts with. */
	uintptr_t len = o.map_end - o.map_start;
	const auto *eh = reinterpret_cast<const ElfW(Ehdr) *>(o.map_start);
	if (!o.map || o.map_end <= o.map_start || len < sizeof(*eh) ||
	    memcmp(eh->e_ident, ELFMAG, SELFMAG) != 0 || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_phentsize != sizeof(ElfW(Phdr)) || eh->e_phoff > len ||
	    eh->e_phnum > (len - eh->e_phoff) / sizeof(ElfW(Phdr)))
		return false;
	const auto *ph = reinterpret_cast<const ElfW(Phdr) *>(o.map_start + eh->e_phoff);
	uintptr_t base = o.map->l_addr, hdr = (uintptr_t)o.eh_frame_hdr;
	uintptr_t seg_lo = 0, seg_end = 0, relro_lo = 0, relro_end = 0;
	for (unsigned i = 0; i < eh->e_phnum; i++) {
		uintptr_t start = base + ph[i].p_vaddr;
		if (ph[i].p_type == PT_LOAD && hdr >= start && hdr - start < ph[i].p_filesz) {
			if (ph[i].p_flags != PF_R)
				return false;
			seg_lo = start;
			seg_end = start + ph[i].p_filesz;
			/* The last page holds the file's next bytes, untouched, unless the
			 * loader zeroed a tail the file does not have. */
			if (ph[i].p_memsz == ph[i].p_filesz)
				seg_end = (seg_end + PAGE - 1) & ~(PAGE - 1);
		} else if (ph[i].p_type == PT_GNU_RELRO) {
			relro_lo = start;
			relro_end = start + ph[i].p_memsz;
		}
	}
	if (!seg_end || has_text_relocations(o.map->l_ld))
		return false;
	/* Whole pages of the file, from the window the table's first read mapped. */
	uintptr_t from = (seg_lo + PAGE - 1) & ~(PAGE - 1);
	uintptr_t window = hdr & ~(FAULT_AROUND - 1);
	*lo = window > from ? window : from;
	*hi = seg_end & ~(PAGE - 1);
	if (*hi > o.map_end)
		*hi = o.map_end & ~(PAGE - 1);
	if (relro_lo < relro_end && relro_lo < *hi && *lo < relro_end)
		return false;
	return *lo < *hi;
}

namespace {

/* Ranges noted and not given back yet, merged where they overlap. */
struct waiting {
	uintptr_t lo[MAX_WAITING], hi[MAX_WAITING];
	int n;
};
waiting g_waiting;
/* Taken without waiting after a walk or at a refill, waiting in dlclose(). Not a
 * pthread mutex: pthread_mutex_trylock() reads a jump table on a page of libc's
 * read-only data that a program may otherwise never map (64 KiB of it, with the
 * kernel's fault around). */
futex_lock g_lock;
/* dlclose() calls this thread is inside: a destructor may dlclose another object, and
 * the outer call holds the lock already. */
thread_local unsigned t_dlclose_depth;

void note_range(uintptr_t lo, uintptr_t hi)
{
	for (int i = 0; i < g_waiting.n; i++)
		if (lo < g_waiting.hi[i] && g_waiting.lo[i] < hi) {
			g_waiting.lo[i] = lo < g_waiting.lo[i] ? lo : g_waiting.lo[i];
			g_waiting.hi[i] = hi > g_waiting.hi[i] ? hi : g_waiting.hi[i];
			return;
		}
	if (g_waiting.n < MAX_WAITING) {
		g_waiting.lo[g_waiting.n] = lo;
		g_waiting.hi[g_waiting.n++] = hi;
	}
}

/* Whether every page of [lo, hi) is either not there (and not swapped out) or the
 * file's own page, never a private copy: /proc/self/pagemap's flags, which need no
 * privilege. A private copy (a write after an mprotect, a mapping replaced by
 * anonymous memory) would be lost to MADV_DONTNEED; a file's page only comes back. */
bool only_file_pages(uintptr_t lo, uintptr_t hi)
{
	constexpr uint64_t PRESENT = 1ull << 63, SWAPPED = 1ull << 62, FILE_OR_SHARED = 1ull << 61;
	int fd = nocancel::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	bool ok = true;
	static uint64_t entries[512];	/* under g_lock; 4 KiB off a small thread's stack */
	for (uintptr_t page = lo / PAGE; ok && page < hi / PAGE;) {
		size_t n = hi / PAGE - page;
		n = n < 512 ? n : 512;
		size_t bytes = n * sizeof(entries[0]);
		if (nocancel::pread(fd, entries, bytes, (off_t)(page * sizeof(entries[0]))) != (ssize_t)bytes) {
			ok = false;
			break;
		}
		for (size_t i = 0; i < n && ok; i++)
			ok = !(entries[i] & SWAPPED) &&
			     (!(entries[i] & PRESENT) || (entries[i] & FILE_OR_SHARED));
		page += n;
	}
	nocancel::close(fd);
	return ok;
}

/* Under the lock (only_file_pages()'s buffer is its). */
void give_back_locked()
{
	uint64_t start = monotonic_ns();
	if (!g_waiting.n || start < g_next_ns)
		return;
	for (int i = 0; i < g_waiting.n; i++)
		if (only_file_pages(g_waiting.lo[i], g_waiting.hi[i]))
			madvise(reinterpret_cast<void *>(g_waiting.lo[i]),
				g_waiting.hi[i] - g_waiting.lo[i], MADV_DONTNEED);
	g_waiting.n = 0;
	__atomic_store_n(&g_tables_waiting, false, __ATOMIC_RELAXED);
	uint64_t end = monotonic_ns();
	g_next_ns = end + TABLES_SPACING * (end - start);
}

} /* namespace */

bool g_tables_waiting;

void tables_after_walk(const cfi::tables_read &read)
{
	const uintptr_t self = (uintptr_t)&tables_after_walk;
	if (!read.n || !g_lock.try_lock())
		return;	/* another thread's give back, or a dlclose */
	for (int i = 0; i < read.n; i++) {
		const cfi::tables_read::object &o = read.objects[i];
		uintptr_t lo, hi;
		if ((self < o.map_start || self >= o.map_end) && table_range(o, &lo, &hi))
			note_range(lo, hi);
	}
	__atomic_store_n(&g_tables_waiting, g_waiting.n != 0, __ATOMIC_RELAXED);
	give_back_locked();
	g_lock.unlock();
}

void give_back_waiting_tables()
{
	if (!g_lock.try_lock())
		return;
	give_back_locked();
	g_lock.unlock();
}

void tables_before_dlclose()
{
	if (t_dlclose_depth++ == 0)
		g_lock.lock();
	g_waiting.n = 0;
	__atomic_store_n(&g_tables_waiting, false, __ATOMIC_RELAXED);
}

void tables_after_dlclose()
{
	if (--t_dlclose_depth == 0)
		g_lock.unlock();
}

/* The child is single-threaded: a lock another thread held at fork is not held here;
 * this thread's own, inside a dlclose (a destructor that forks), still is. */
void tables_fork_child()
{
	g_lock.reset();
	if (t_dlclose_depth)	/* forked inside dlclose(): still this thread's */
		g_lock.try_lock();
}

} /* namespace allocinfo */
