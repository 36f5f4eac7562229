/* SPDX-License-Identifier: MIT */
/*
 * The allocator underneath. Over glibc's (the common case), the fast path calls its
 * __libc_* entry points directly, so the call never comes back into our own exported
 * malloc.
 *
 * When the process has another malloc (jemalloc, tcmalloc, mimalloc, glibc's
 * libc_malloc_debug.so, ..., linked or preloaded, before or after us in symbol lookup
 * order), start-up finds it (init()) and `foreign` holds its functions: every block is
 * then that allocator's, with a record marked RECORD_F_FOREIGN in front, and the fast
 * path is never taken (the out-of-line paths call `foreign`). See "The allocator
 * underneath" in Documentation/theory-of-operation.md.
 *
 * Builds for AddressSanitizer or ThreadSanitizer (ALLOCINFO_BACKEND_NEXT) use the
 * next definition in symbol lookup order instead (the sanitizer's allocator), found
 * with dlsym(RTLD_NEXT). dlsym itself may allocate before that is known; those few
 * requests are served from a static arena (bootstrap_*), recognised again at free.
 */
#ifndef ALLOCINFO_BACKEND_H
#define ALLOCINFO_BACKEND_H

#include <new>

#include "internal.h"

extern "C" {
void *__libc_malloc(size_t) noexcept;
void *__libc_calloc(size_t, size_t) noexcept;
void *__libc_realloc(void *, size_t) noexcept;
void __libc_free(void *) noexcept;
void *__libc_memalign(size_t, size_t) noexcept;
}

namespace allocinfo {
namespace backend {

/* An allocator's entry points. calloc, realloc, memalign and usable_size are never
 * null once filled: what the allocator lacks is built from the others. A C
 * allocator never throws: noexcept lets a noexcept caller end in a tail call. */
struct table {
	void *(*malloc)(size_t) noexcept;
	void *(*calloc)(size_t, size_t) noexcept;
	void *(*realloc)(void *, size_t) noexcept;
	void (*free)(void *) noexcept;
	void *(*memalign)(size_t, size_t) noexcept;
	size_t (*usable_size)(void *) noexcept;
};

/* Who serves the process's blocks, as init() found it. */
enum class underneath : uint32_t {
	glibc,		/* glibc's malloc (or a sanitizer's, in those builds) */
	next,		/* another allocator, after liballocinfo in lookup order */
	first,		/* another allocator, before liballocinfo: calls routed (route.h) */
};

/* The other allocator's functions (underneath::next or first). */
extern table foreign HIDDEN;
/* Its own operator delete and delete[] (its free() where it has none, and with
 * ALLOCINFO=never): a block without a record that reaches the library's delete is
 * the allocator's own, made by its operator new, and goes back the way it came
 * (free_foreign_as()). */
extern void (*foreign_delete)(void *) noexcept HIDDEN;
extern void (*foreign_delete_array)(void *) noexcept HIDDEN;
/* Its own operator new and new[] (their nothrow forms), null where it has none. */
extern void *(*foreign_new)(size_t, const std::nothrow_t &) noexcept HIDDEN;
extern void *(*foreign_new_array)(size_t, const std::nothrow_t &) noexcept HIDDEN;
/* Over a sanitizer that has them all: the program's new and new[] make their blocks
 * (with the record in front) by the sanitizer's own (RECORD_F_CXX), its malloc and
 * calloc mark theirs (RECORD_F_MALLOC), and a delete, delete[] or free gives such a
 * block back by the sanitizer's function of that kind, so that AddressSanitizer's
 * alloc-dealloc-mismatch check sees the program's calls. */
extern bool g_new_kinds HIDDEN;
/* RECORD_F_FOREIGN with another allocator underneath, else 0: the out-of-line paths
 * add it to every record they write. */
extern uint32_t g_foreign_flag HIDDEN;
/* Detection's result, for the tests and the report's status. */
extern underneath g_underneath HIDDEN;
/* ALLOCINFO=never over another allocator: no block carries a record, as none was
 * made before never was known (start-up reads it before anything is allocated). Then
 * nothing below a pointer is read, and every block goes back to the allocator as it
 * is: its free is the allocator's whatever the program wrote below it. */
extern bool g_no_records HIDDEN;
/* The executable defines malloc or free itself: nothing is counted, as with
 * ALLOCINFO=never (init()). */
extern bool g_program_allocator HIDDEN;
/* The allocator underneath, or the executable's own, is a sanitizer's (AddressSanitizer,
 * ThreadSanitizer, LeakSanitizer, MemorySanitizer: each defines
 * __sanitizer_get_allocated_size). Over it the lean path stays closed: the paths that
 * keep frame pointers allocate, so that its fast unwinder, which records where each
 * block was made, gets through the library to the program's frames. */
extern bool g_sanitizer HIDDEN;
/* Under a Valgrind tool that replaces malloc (memcheck, massif, ...): nothing is
 * counted, as with ALLOCINFO=never, so that every block is the tool's as the program
 * made it. A record in front would make each block that the program still holds at
 * exit "possibly lost" to memcheck (its pointer is 16 bytes in), and the small-block
 * heap's would not be seen at all. */
extern bool g_heap_tool HIDDEN;
/*
 * `below`: what comes after the allocator underneath when it is not glibc's: after the
 * library when that allocator comes first (glibc's functions, or those of another
 * allocator there), glibc's when it comes next. An allocator without memalign,
 * posix_memalign or aligned_alloc of its own (libmemusage.so has none) gets its
 * aligned blocks there, as the program would without the library.
 *
 * When an object with a malloc comes before the library (underneath::first, then
 * g_passing_on), the program's calls of malloc, calloc, realloc and free are routed
 * to entry points of their own (or, with ALLOCINFO=never, stay that object's), so a
 * call of the library's exported ones is that object passing its own call on to the
 * next malloc, which dlsym(RTLD_NEXT) found to be the library's: a wrapper, as glibc's
 * libmemusage.so is. It is served by `below`, without a record. Handed back to the
 * object that comes first, as before, it recursed until the stack ran out.
 */
extern bool g_passing_on HIDDEN;
extern table below HIDDEN;
/* The library's calls to glibc's __libc_* functions (the fast path's, and
 * malloc()'s with counting off) allocate from the allocator underneath: glibc's, or
 * another that the library's own GOT entries for them now lead to (route.h's
 * redirect_backend()): when it comes after us in lookup order, or with
 * ALLOCINFO=never. Then the fast path may be taken. */
extern bool g_fast_path HIDDEN;

/* Where the library's GOT entry for glibc's __libc_malloc, __libc_calloc,
 * __libc_realloc, __libc_free or __libc_memalign (i = 0 to 4) leads now. */
void *got_entry(unsigned i) HIDDEN;

/* Finds the allocator underneath (and routes the process's calls to us when it comes
 * first, unless `never`, or the allocator is the executable's own: then they stay the
 * allocator's, and so do its blocks); called once, at the start of start-up, before
 * anything is allocated. */
void init(bool never) HIDDEN;

/* A record-less block (made while counting was off, or by the allocator directly)
 * goes back to whoever serves the process. */
void free_plain(void *p) HIDDEN;
void *realloc_plain(void *p, size_t n) HIDDEN;

#ifndef ALLOCINFO_BACKEND_NEXT

static inline void *malloc(size_t n) { return __libc_malloc(n); }
static inline void *calloc(size_t n, size_t s) { return __libc_calloc(n, s); }
static inline void *realloc(void *p, size_t n) { return __libc_realloc(p, n); }
static inline void free(void *p) { __libc_free(p); }
static inline void *memalign(size_t a, size_t n) { return __libc_memalign(a, n); }
static inline bool owns_bootstrap(const void *) { return false; }
size_t usable_size(void *p) HIDDEN;	/* glibc's malloc_usable_size */

#else

extern table g_next HIDDEN;
void *bootstrap_alloc(size_t n, size_t align) HIDDEN;
bool owns_bootstrap(const void *p) HIDDEN;

static inline void *malloc(size_t n)
{ return g_next.malloc ? g_next.malloc(n) : bootstrap_alloc(n, 16); }
static inline void *calloc(size_t n, size_t s)
{
	if (g_next.calloc)
		return g_next.calloc(n, s);
	size_t t;
	return __builtin_mul_overflow(n, s, &t) ? nullptr : bootstrap_alloc(t, 16);
}
static inline void *realloc(void *p, size_t n) { return g_next.realloc(p, n); }
static inline void free(void *p) { if (!owns_bootstrap(p)) g_next.free(p); }
static inline void *memalign(size_t a, size_t n)
{ return g_next.memalign ? g_next.memalign(a, n) : bootstrap_alloc(n, a); }
size_t usable_size(void *p) HIDDEN;

#endif

/* A block of the allocator underneath without a record, reaching the library's free()
 * (op ALLOCINFO_OP_FREE), operator delete (ALLOCINFO_OP_DELETE) or operator delete[]
 * (OP_DELETE_ARRAY, internal.h): given back to the allocator's own function of that
 * kind, so that an allocator that tells operator new's blocks from malloc's (the
 * debugging tcmalloc) sees each go back as it came. */
static inline void free_foreign_as(void *p, int op)
{
	if (op == ALLOCINFO_OP_FREE)
		foreign.free(p);
	else if (op == OP_DELETE_ARRAY)
		foreign_delete_array(p);
	else
		foreign_delete(p);
}

/* The usable size of a block without a record, whoever made it. */
size_t usable_size_plain(void *p) HIDDEN;

/* A block without a record, from whoever serves the process's blocks. */
static inline void *malloc_plain(size_t n)
{
	return g_foreign_flag ? foreign.malloc(n) : malloc(n);
}
static inline void *calloc_plain(size_t n, size_t s)
{
	return g_foreign_flag ? foreign.calloc(n, s) : calloc(n, s);
}
static inline void *memalign_plain(size_t a, size_t n)
{
	return g_foreign_flag ? foreign.memalign(a, n) : memalign(a, n);
}

} /* namespace backend */
} /* namespace allocinfo */

#endif
