/* SPDX-License-Identifier: MIT */
/*
 * allocinfo.h - per-call-site memory allocation profiling for C and C++.
 *
 * Include it (first, or through `allocinfo-cc -include`) and every call to the
 * malloc family below is charged to its own file:line, exactly, for as long as the
 * memory is live. See allocinfo(3) and Documentation/user-guide.md.
 *
 * Compiling with -DALLOCINFO_DISABLE turns every macro back into the plain call.
 */
#ifndef ALLOCINFO_H
#define ALLOCINFO_H

/* Its macros are the project's own code: no warning of the including file's choice
 * applies to their text (C89, -Wpedantic, -Wdeclaration-after-statement, ...). */
#if defined(__GNUC__)
#pragma GCC system_header
#endif

/* The compiler's own headers: they leave the C library's feature set alone. */
#include <stdarg.h>
#include <stddef.h>

/*
 * The C library's headers that declare the functions we wrap must be read before our
 * macros exist, so that their declarations are left alone when a file includes them
 * again. Under allocinfo-cc (ALLOCINFO__WRAPPED, set by allocinfo/cc.h) they are
 * not read here at all: its own copies of those headers set our macros aside around
 * the system's, so a C file still chooses its feature-test macros (_GNU_SOURCE,
 * _POSIX_C_SOURCE, ...) after this header. A C file that includes this header itself,
 * first, has its feature set fixed here: when it chose none, GNU's, the superset.
 * C++ compilers define _GNU_SOURCE themselves.
 */
#if !defined(__cplusplus) && !defined(ALLOCINFO__WRAPPED)
#if !defined(_GNU_SOURCE) && !defined(_POSIX_C_SOURCE) && \
	!defined(_XOPEN_SOURCE) && !defined(_DEFAULT_SOURCE) && !defined(_BSD_SOURCE) && \
	!defined(_SVID_SOURCE) && !defined(_ISOC11_SOURCE) && !defined(__STRICT_ANSI__)
#define _GNU_SOURCE	/* empty, as most files that define it write it */
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#endif
#ifdef __cplusplus
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <malloc.h>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#if defined(__GLIBCXX__) && defined(__has_include)
#if __has_include(<ext/malloc_allocator.h>)
#include <ext/malloc_allocator.h>	/* calls std::malloc() */
#endif
#endif
#endif

/* C89 has no inline; C++98 no noexcept. */
#define ALLOCINFO__INLINE_KW __inline__
#if defined(__cplusplus) && __cplusplus >= 201103L
#define ALLOCINFO__NOEXCEPT noexcept
#elif defined(__cplusplus)
#define ALLOCINFO__NOEXCEPT throw()
#else
#define ALLOCINFO__NOEXCEPT
#endif

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define ALLOCINFO_API __attribute__((visibility("default")))
#else
#define ALLOCINFO_API
#endif

/*
 * A call site. Static tags live in the section "allocinfo_tags" of the object that
 * holds the call; the library numbers them on first sight (index) and keeps its own
 * copy of the strings, so nothing here is needed after dlclose.
 */
struct alloc_tag {
	const char *file;
	const char *func;
	unsigned int line;
	unsigned int flags;	/* ALLOC_TAG_F_* */
	unsigned int index;	/* written by the library; 0 until registered */
	unsigned int counter;	/* written by the library: index * 16, where the tag's
				 * counters lie in a shard (the inline fast path's) */
};

#define ALLOC_TAG_F_CXX    0x1u	/* func is __PRETTY_FUNCTION__ */
#define ALLOC_TAG_F_SCOPE  0x2u	/* an ALLOC_TAG_SCOPE() */
/* Bits 8 and up: the size of a call site that asks for a constant one, for the
 * header's fast path (0: none); the library ignores them. */
#define ALLOC_TAG_F_SIZE_SHIFT 8
#define ALLOC_TAG_SIZE_MAX 0xffffffu

/* Per-thread state read by the allocation fast path. */
struct allocinfo_thread {
	const struct alloc_tag *current;	/* set by alloc_hooks() */
	const struct alloc_tag *override;	/* set by ALLOC_TAG_SCOPE(); wins over all */
	void *shard;				/* the library's: this thread's counters */
};

/* In front of each block allocated while counting (layout version 1): the library's,
 * and written by the inline fast path below. Shards hold one {bytes, calls} pair of
 * long longs per slot. */
struct allocinfo__record_v1 {
	unsigned long long size;	/* bytes asked for */
	unsigned int counter;		/* index * 16: the tag's counter pair in a shard */
	unsigned int meta;		/* ALLOCINFO__MAGIC_V1: a plain record */
};
#define ALLOCINFO__MAGIC_V1 0xa11c0000u

/* With ALLOCINFO_NO_CALL_MACROS the header leaves malloc() and friends alone (for a
 * file that declares them itself): tags, alloc_hooks() and scopes still work. */

/* ---- run-time control and the report ------------------------------------------ */

#ifndef ALLOCINFO_DISABLE
/* Writes this process's report (the /proc/allocinfo format) to fd. Returns the
 * number of bytes written, or -1 with errno set (the type is ssize_t's, spelled so
 * that no C library header is needed). */
ALLOCINFO_API __PTRDIFF_TYPE__ allocinfo_print(int fd);
/* Counting on (1) or off (0). Refused when started with ALLOCINFO=never. */
ALLOCINFO_API void allocinfo_set_enabled(int on);
ALLOCINFO_API int allocinfo_enabled(void);
#else
static ALLOCINFO__INLINE_KW __PTRDIFF_TYPE__ allocinfo_print(int fd) { (void)fd; return 0; }
static ALLOCINFO__INLINE_KW void allocinfo_set_enabled(int on) { (void)on; }
static ALLOCINFO__INLINE_KW int allocinfo_enabled(void) { return 0; }
#endif

/* ---- user callbacks around every allocation call (Documentation/callbacks.md) ---- */

/* The operations a callback sees: the bit (1u << ALLOCINFO_OP_x) selects one. */
enum {
	ALLOCINFO_OP_MALLOC = 0,	/* malloc, strdup, asprintf, ... */
	ALLOCINFO_OP_CALLOC = 1,
	ALLOCINFO_OP_REALLOC = 2,	/* realloc, reallocarray */
	ALLOCINFO_OP_ALIGNED = 3,	/* aligned_alloc, posix_memalign, memalign, valloc,
					 * pvalloc */
	ALLOCINFO_OP_FREE = 4,
	ALLOCINFO_OP_USABLE_SIZE = 5,	/* malloc_usable_size */
	ALLOCINFO_OP_NEW = 6,		/* C++ operator new, every form */
	ALLOCINFO_OP_DELETE = 7,	/* C++ operator delete, every form */
	ALLOCINFO_OP_COUNT = 8
};
#define ALLOCINFO_OPS_ALL ((1u << ALLOCINFO_OP_COUNT) - 1)

/* One call, as a callback sees it. */
struct allocinfo_event {
	int op;			/* ALLOCINFO_OP_* */
	size_t size;		/* bytes asked for (calloc: count * size); pre may rewrite.
				 * usable_size's post: the answer, which post may rewrite */
	size_t alignment;	/* aligned family and aligned new (0: the default);
				 * pre may rewrite, for any allocation */
	void *ptr;		/* free, realloc, usable_size, delete: the block (pre may
				 * rewrite); after an allocation: the result, which post
				 * may replace */
	const char *file, *func, *module;	/* the call site: the tag the call is
				 * charged to (free, usable_size, delete: the block's);
				 * NULL when unknown, file and func NULL for a caller
				 * tag not yet named */
	unsigned int line;
	const void *caller;	/* an allocation without a tag of its own: its return
				 * address (the caller tag's); else NULL */
	size_t moved;		/* free, realloc, usable_size, delete: how far a post
				 * callback moved ptr past the block it was given (0: not
				 * moved); kept up to date as pre callbacks rewrite ptr */
};

struct allocinfo_callbacks {
	size_t size;		/* sizeof(struct allocinfo_callbacks), for growth */
	unsigned int ops;	/* bit (1u << ALLOCINFO_OP_x) for each op wanted; 0 = all */
	void (*pre)(void *user_data, struct allocinfo_event *e);	/* or NULL */
	void (*post)(void *user_data, struct allocinfo_event *e);	/* or NULL */
	void *user_data;
};

#ifndef ALLOCINFO_DISABLE
/* Registers a callback pair (copied); returns its handle (>= 0), or -errno (ELIBACC:
 * liburcu-bp, loaded by the first registration, cannot be). pre callbacks run in
 * registration order, post callbacks in reverse. */
ALLOCINFO_API int allocinfo_callbacks_add(const struct allocinfo_callbacks *cb);
/* Unregisters; returns 0 or -errno. Once it returns, no thread is inside or will enter
 * the pair, so its user data may be freed. Not from inside a callback (-EDEADLK). */
ALLOCINFO_API int allocinfo_callbacks_remove(int handle);
#else
static ALLOCINFO__INLINE_KW int allocinfo_callbacks_add(const struct allocinfo_callbacks *cb)
{ (void)cb; return -38; /* -ENOSYS */ }
static ALLOCINFO__INLINE_KW int allocinfo_callbacks_remove(int handle) { (void)handle; return -38; }
#endif

/* ---- allocation identity: who owns this pointer? ---------------------------------- */

/* What allocinfo_pointer_info() says of a live counted block. Names are copied in,
 * cut to fit, NUL-terminated. */
struct allocinfo_ptr_info {
	const void *start;	/* the block's first byte */
	size_t size;		/* the bytes its caller asked for */
	unsigned int line;	/* the call site, as the report names it; 0 unknown */
	char file[256];
	char func[256];
	char module[128];	/* basename of the ELF object holding the call */
	char via[128];		/* the declared wrapper it came through, or "" */
	char allocator[64];	/* "malloc" (the malloc family and new) */
};

#ifndef ALLOCINFO_DISABLE
/* For p anywhere inside a live block allocinfo counts ([start, start + size), or
 * start itself for a 0-byte block): fills *out and returns 0. For anything else
 * (stack, static data, a freed block, one past the end, a block of another
 * allocator or made while counting was off) returns -1 with errno ENOENT; EINVAL
 * when out is null. Never faults on any p. Callable from a debugger:
 * `call allocinfo_pointer_info(p, &info)`. */
ALLOCINFO_API int allocinfo_pointer_info(const void *p, struct allocinfo_ptr_info *out);
#else
static ALLOCINFO__INLINE_KW int allocinfo_pointer_info(const void *p, struct allocinfo_ptr_info *out)
{
	(void)p;
	(void)out;
	return -1;
}
#endif

/* ---- sampling heap profiler (Documentation/sampling.md, profiling.md) -------------
 * A profiler in the shape of mimalloc's (mimalloc-profile.h): the library samples
 * allocations by bytes (a Poisson process per thread: the gaps between samples are
 * exponential with mean `sample rate` bytes), captures the stack of each sampled one,
 * and calls the attached profiler. Each sampled block carries sample_data_size bytes
 * of the profiler's own data, handed to on_free; unsampled blocks carry nothing more.
 * One profiler is attached at a time. While none is started the allocation paths
 * are exactly as without it. */

#define ALLOCINFO_PROFILE_SAMPLE_DATA_MAX 1024	/* sample_data_size at most */
#define ALLOCINFO_PROFILE_FRAMES_MAX 64		/* frames a sample carries at most */
#define ALLOCINFO_PROFILE_DEFAULT_RATE (512u * 1024u)	/* bytes */

/* One sampled allocation, as on_alloc sees it. */
struct allocinfo_sample {
	void *block;			/* the pointer the caller gets */
	size_t size;			/* bytes asked for */
	size_t sample_rate;		/* the mean gap this sample was drawn with (bytes) */
	size_t bytes_since_last;	/* bytes this thread allocated since its previous
					 * sample, this block's included */
	unsigned int tag;		/* the call site's tag (allocinfo_tag_info()) */
	int nframes;			/* frames[0 .. nframes): return addresses, the
					 * program's allocation call first */
	void *const *frames;
	void *sample_data;		/* sample_data_size bytes kept with the block,
					 * zeroed; NULL when sample_data_size is 0 */
};

struct allocinfo_profiler {
	size_t reserved;		/* 0 */
	size_t sample_data_size;	/* bytes kept with each sampled block (<= 1 KiB) */
	size_t initial_sample_rate;	/* bytes; 0: ALLOCINFO_PROFILE_DEFAULT_RATE; 1:
					 * every allocation */
	/* A block was sampled. Returns the sample rate from now on for this thread (0:
	 * unchanged). Allocations made inside any callback are never sampled. */
	size_t (*on_alloc)(void *arg, const struct allocinfo_sample *s);
	/* A sampled block is freed (also once the profiler is stopped, while it is
	 * attached): its size and sample data. */
	void (*on_free)(void *arg, void *block, size_t size, void *sample_data);
	/* realloc kept a sampled block in place with a new size. */
	void (*on_realloc_inplace)(void *arg, void *block, size_t old_size, size_t new_size,
				   void *sample_data);
	/* allocinfo_profiler_snapshot() was called. */
	void (*on_snapshot)(void *arg);
};

#ifndef ALLOCINFO_DISABLE
/* Attaches profiler p (copied) with arg for its callbacks, stopped. 0, or -errno:
 * EINVAL (a bad field), EBUSY (one is attached), ENOTSUP (ALLOCINFO=never), ELIBACC
 * (liburcu-bp cannot be loaded), EDEADLK (from inside a callback). */
ALLOCINFO_API int allocinfo_profiler_attach(const struct allocinfo_profiler *p, void *arg);
/* Stops and detaches the profiler; once it returns, no thread is in or will enter
 * one of its callbacks (sampled blocks freed later call nothing). 0 or -ENOENT;
 * -EDEADLK from inside a callback. */
ALLOCINFO_API int allocinfo_profiler_detach(void);
/* Sampling on and off; sampled blocks still live keep calling on_free. 0 or -ENOENT. */
ALLOCINFO_API int allocinfo_profiler_start(void);
ALLOCINFO_API int allocinfo_profiler_stop(void);
/* Calls the profiler's on_snapshot, one call at a time. 0 or -ENOENT; -EDEADLK from
 * inside on_snapshot. */
ALLOCINFO_API int allocinfo_profiler_snapshot(void);
/* The names of tag `tag` as a report line names it (start and size are 0), and
 * its exact live bytes and count in *bytes and *count (either may be NULL). 0, or -1
 * for a tag that does not exist. */
ALLOCINFO_API int allocinfo_tag_info(unsigned int tag, struct allocinfo_ptr_info *out,
				     long long *bytes, long long *count);
/* Attaches and starts the built-in pprof profiler: samples at sample_rate bytes (0:
 * the default), writes BASE.PID.N.pb.gz (gzipped profile.proto; or the gperftools
 * text heap format when base ends in ".heap" or ".text") at every alloc_interval
 * bytes allocated, inuse_interval bytes of in-use growth and time_interval seconds
 * (each 0: never), on allocinfo_profiler_snapshot(), and at normal exit. 0 or -errno.
 * ALLOCINFO_PROFILE=BASE and its companions start it from the environment. */
ALLOCINFO_API int allocinfo_pprof_profiler_start(size_t sample_rate, const char *base,
						 size_t alloc_interval, size_t inuse_interval,
						 double time_interval);
#else
static ALLOCINFO__INLINE_KW int allocinfo_profiler_attach(const struct allocinfo_profiler *p, void *arg)
{ (void)p; (void)arg; return -38; /* -ENOSYS */ }
static ALLOCINFO__INLINE_KW int allocinfo_profiler_detach(void) { return -38; }
static ALLOCINFO__INLINE_KW int allocinfo_profiler_start(void) { return -38; }
static ALLOCINFO__INLINE_KW int allocinfo_profiler_stop(void) { return -38; }
static ALLOCINFO__INLINE_KW int allocinfo_profiler_snapshot(void) { return -38; }
static ALLOCINFO__INLINE_KW int allocinfo_tag_info(unsigned int tag, struct allocinfo_ptr_info *out,
				     long long *bytes, long long *count)
{ (void)tag; (void)out; (void)bytes; (void)count; return -1; }
static ALLOCINFO__INLINE_KW int allocinfo_pprof_profiler_start(size_t sample_rate, const char *base,
						 size_t alloc_interval, size_t inuse_interval,
						 double time_interval)
{
	(void)sample_rate; (void)base; (void)alloc_interval; (void)inuse_interval;
	(void)time_interval;
	return -38;
}
#endif

/* ---- allocators of the program's own: pools, arenas --------------------------------
 * A pool that does not sit on malloc is counted per call site, in the kernel's shape:
 *
 *     static struct allocinfo_allocator *pool_id;   // allocinfo_allocator_create("pool")
 *     void *pool_alloc_noprof(struct pool *pl, size_t n)
 *     {
 *             void *p = ...carve n bytes...;
 *             allocinfo_charge(pool_id, p, n);
 *             return p;
 *     }
 *     #define pool_alloc(...) alloc_hooks(pool_alloc_noprof(__VA_ARGS__))
 *
 * and allocinfo_uncharge(pool_id, p) where the pool takes a block back. Each
 * pool_alloc() line then has its own report line with " allocator:pool". Nothing is
 * written into the blocks (the library keeps a side index). */
struct allocinfo_allocator;

#ifndef ALLOCINFO_DISABLE
/* The allocator named name (one word, at most 63 bytes), made on first use: the same
 * object for the same name. NULL with errno EINVAL (a bad name), ENOTSUP (counting
 * off for good) or ENOSPC (256 allocators). */
ALLOCINFO_API struct allocinfo_allocator *allocinfo_allocator_create(const char *name);
/* Counts the block [p, p + size) of allocator a against the current tag (a scope,
 * then alloc_hooks(), else the caller of allocinfo_charge()). 0, or -1 with errno
 * EINVAL (null a or p), EEXIST (p is charged already) or ENOMEM. While counting is off,
 * does nothing. */
ALLOCINFO_API int allocinfo_charge(struct allocinfo_allocator *a, const void *p, size_t size);
/* allocinfo_charge() on behalf of a call made from the return address caller (what
 * __builtin_return_address(0) gives a wrapper of the pool's function): without a
 * scope or alloc_hooks(), the block is charged to that caller's line. */
ALLOCINFO_API int allocinfo_charge_from(struct allocinfo_allocator *a, const void *p,
					size_t size, const void *caller);
/* Uncounts block p of allocator a. 0, or -1 with errno ENOENT (not charged). */
ALLOCINFO_API int allocinfo_uncharge(struct allocinfo_allocator *a, const void *p);
#else
static ALLOCINFO__INLINE_KW struct allocinfo_allocator *allocinfo_allocator_create(const char *name)
{
	(void)name;
	return (struct allocinfo_allocator *)0;
}
static ALLOCINFO__INLINE_KW int allocinfo_charge(struct allocinfo_allocator *a, const void *p, size_t size)
{
	(void)a;
	(void)p;
	(void)size;
	return 0;
}
static ALLOCINFO__INLINE_KW int allocinfo_charge_from(struct allocinfo_allocator *a, const void *p,
							size_t size, const void *caller)
{
	(void)a;
	(void)p;
	(void)size;
	(void)caller;
	return 0;
}
static ALLOCINFO__INLINE_KW int allocinfo_uncharge(struct allocinfo_allocator *a, const void *p)
{
	(void)a;
	(void)p;
	return 0;
}
#endif

#ifndef ALLOCINFO_DISABLE

extern __thread struct allocinfo_thread allocinfo__thread
	__attribute__((tls_model("initial-exec")));

/* Registers the tags between start and stop (one object's section). Called by the
 * constructor below, once per translation unit; repeated calls are cheap. */
ALLOCINFO_API void allocinfo_register_tags(struct alloc_tag *start, struct alloc_tag *stop);

/* Allocation entry points that take the call site explicitly. */
ALLOCINFO_API void *allocinfo_malloc(const struct alloc_tag *t, size_t size)
	__attribute__((malloc, alloc_size(2)));
ALLOCINFO_API void *allocinfo_calloc(const struct alloc_tag *t, size_t n, size_t size)
	__attribute__((malloc, alloc_size(2, 3)));
ALLOCINFO_API void *allocinfo_realloc(const struct alloc_tag *t, void *ptr, size_t size)
	__attribute__((alloc_size(3)));
ALLOCINFO_API void *allocinfo_reallocarray(const struct alloc_tag *t, void *ptr, size_t n,
					   size_t size) __attribute__((alloc_size(3, 4)));
ALLOCINFO_API void *allocinfo_aligned_alloc(const struct alloc_tag *t, size_t align,
					    size_t size) __attribute__((malloc, alloc_size(3)));
ALLOCINFO_API int allocinfo_posix_memalign(const struct alloc_tag *t, void **ptr,
					   size_t align, size_t size);
ALLOCINFO_API void *allocinfo_memalign(const struct alloc_tag *t, size_t align, size_t size)
	__attribute__((malloc, alloc_size(3)));
ALLOCINFO_API void *allocinfo_valloc(const struct alloc_tag *t, size_t size)
	__attribute__((malloc, alloc_size(2)));
ALLOCINFO_API void *allocinfo_pvalloc(const struct alloc_tag *t, size_t size)
	__attribute__((malloc));
ALLOCINFO_API char *allocinfo_strdup(const struct alloc_tag *t, const char *s)
	__attribute__((malloc));
ALLOCINFO_API char *allocinfo_strndup(const struct alloc_tag *t, const char *s, size_t n)
	__attribute__((malloc));
ALLOCINFO_API int allocinfo_asprintf(const struct alloc_tag *t, char **strp,
				     const char *fmt, ...) __attribute__((format(printf, 3, 4)));
ALLOCINFO_API int allocinfo_vasprintf(const struct alloc_tag *t, char **strp,
				      const char *fmt, va_list ap)
	__attribute__((format(printf, 3, 0)));

/* The _noprof variants: allocate without setting a tag, so the allocation is charged
 * to the tag that is current (set by alloc_hooks() around a wrapper's call). */
ALLOCINFO_API void *malloc_noprof(size_t size) __attribute__((malloc, alloc_size(1)));
ALLOCINFO_API void *calloc_noprof(size_t n, size_t size)
	__attribute__((malloc, alloc_size(1, 2)));
ALLOCINFO_API void *realloc_noprof(void *ptr, size_t size) __attribute__((alloc_size(2)));
ALLOCINFO_API void *reallocarray_noprof(void *ptr, size_t n, size_t size)
	__attribute__((alloc_size(2, 3)));
ALLOCINFO_API void *aligned_alloc_noprof(size_t align, size_t size)
	__attribute__((malloc, alloc_size(2)));
ALLOCINFO_API int posix_memalign_noprof(void **ptr, size_t align, size_t size);
ALLOCINFO_API void *memalign_noprof(size_t align, size_t size)
	__attribute__((malloc, alloc_size(2)));
ALLOCINFO_API void *valloc_noprof(size_t size) __attribute__((malloc, alloc_size(1)));
ALLOCINFO_API void *pvalloc_noprof(size_t size) __attribute__((malloc));
ALLOCINFO_API char *strdup_noprof(const char *s) __attribute__((malloc));
ALLOCINFO_API char *strndup_noprof(const char *s, size_t n) __attribute__((malloc));
ALLOCINFO_API int asprintf_noprof(char **strp, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
ALLOCINFO_API int vasprintf_noprof(char **strp, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/* What the inline fast path (layout version 1, allocinfo__malloc_v1 below) may do;
 * the library's to set. */
struct allocinfo__inline_state_v1 {
	const unsigned int *go;	/* at a nonzero word: count in the caller */
	unsigned int plain;	/* with go's word at 0: a plain block, from glibc */
	unsigned int small_max;	/* with go's word nonzero: requests up to this size
				 * are the library's (its small-block heap) */
};
ALLOCINFO_API extern struct allocinfo__inline_state_v1 allocinfo__inline_v1;

#endif /* !ALLOCINFO_DISABLE */

#ifdef __cplusplus
} /* extern "C" */
#endif

/* ---- tags and macros ------------------------------------------------------------ */

#ifndef ALLOCINFO_DISABLE

#define ALLOCINFO__SECTION "allocinfo_tags"
#define ALLOCINFO__CAT2(a, b) a##b
#define ALLOCINFO__CAT(a, b) ALLOCINFO__CAT2(a, b)
#define ALLOCINFO__UNIQUE(p) ALLOCINFO__CAT(p, __COUNTER__)

#ifdef __cplusplus
#define ALLOCINFO__FUNC  __PRETTY_FUNCTION__
#define ALLOCINFO__FLAGS ALLOC_TAG_F_CXX
#else
#define ALLOCINFO__FUNC  __FUNCTION__	/* __func__ is C99's */
#define ALLOCINFO__FLAGS 0u
#endif

/*
 * Tags go to the section the library registers at start-up, where they are listed
 * even before their first use. Not with g++: a tag in an inline function or template
 * (a COMDAT group) cannot share a section with one in an ordinary function there
 * ("section type conflict"), so each registers on its first use instead.
 */
#if defined(__cplusplus) && !defined(__clang__)
#define ALLOCINFO__TAG_ATTRS __attribute__((used, aligned(8)))
#else
#define ALLOCINFO__TAG_ATTRS \
	__attribute__((section(ALLOCINFO__SECTION), used, aligned(8)))
#endif

/* DEFINE_ALLOC_TAG(name): a tag for this line, inside a function (as in the kernel). */
#define DEFINE_ALLOC_TAG(_name) \
	static struct alloc_tag _name ALLOCINFO__TAG_ATTRS = \
		{ __FILE__, ALLOCINFO__FUNC, __LINE__, ALLOCINFO__FLAGS, 0u, 0u }

/* The tag of the line where this expands (an expression). */
#define ALLOCINFO__SITE() __extension__ ({ DEFINE_ALLOC_TAG(__allocinfo_site); \
					  &__allocinfo_site; })

/* Evaluates expr with _tag as the current tag: allocations made by expr that carry no
 * tag of their own (_noprof calls, libraries, new) are charged to _tag. Declarations
 * first: the including file may build with -Wdeclaration-after-statement. */
#define alloc_hooks_tag(_tag, _expr) __extension__ ({ \
	const struct alloc_tag *__allocinfo_saved = allocinfo__thread.current; \
	__typeof__(_expr) __allocinfo_res; \
	allocinfo__thread.current = (_tag); \
	__allocinfo_res = (_expr); \
	allocinfo__thread.current = __allocinfo_saved; \
	__allocinfo_res; })

/* alloc_hooks(expr): expr is charged to this line (the kernel's macro). */
#define alloc_hooks(_expr) alloc_hooks_tag(ALLOCINFO__SITE(), _expr)

/* ALLOC_TAG_SCOPE(): until the end of the enclosing block, every allocation made by
 * this thread, by any code, is charged to this line. Scopes nest; the inner wins. */
#ifdef __cplusplus
namespace allocinfo {
class scope_guard {
public:
	explicit scope_guard(const struct alloc_tag *t) ALLOCINFO__NOEXCEPT
		: saved_(allocinfo__thread.override) { allocinfo__thread.override = t; }
	~scope_guard() { allocinfo__thread.override = saved_; }
private:
	scope_guard(const scope_guard &);		/* not copyable */
	scope_guard &operator=(const scope_guard &);
	const struct alloc_tag *saved_;
};
} /* namespace allocinfo */
#define ALLOC_TAG_SCOPE() \
	::allocinfo::scope_guard ALLOCINFO__UNIQUE(__allocinfo_scope_)(__extension__ ({ \
		static struct alloc_tag __allocinfo_site ALLOCINFO__TAG_ATTRS = \
			{ __FILE__, ALLOCINFO__FUNC, __LINE__, \
			  ALLOCINFO__FLAGS | ALLOC_TAG_F_SCOPE, 0u, 0u }; \
		&__allocinfo_site; }))
#else
static ALLOCINFO__INLINE_KW const struct alloc_tag *
allocinfo__scope_enter(const struct alloc_tag *t)
{
	const struct alloc_tag *saved = allocinfo__thread.override;
	allocinfo__thread.override = t;
	return saved;
}
static ALLOCINFO__INLINE_KW void allocinfo__scope_exit(const struct alloc_tag *const *saved)
{
	allocinfo__thread.override = *saved;
}
#define ALLOC_TAG_SCOPE() \
	const struct alloc_tag *ALLOCINFO__UNIQUE(__allocinfo_scope_) \
	__attribute__((cleanup(allocinfo__scope_exit), unused)) = \
	allocinfo__scope_enter(__extension__ ({ \
		static struct alloc_tag __allocinfo_site ALLOCINFO__TAG_ATTRS = \
			{ __FILE__, ALLOCINFO__FUNC, __LINE__, \
			  ALLOCINFO__FLAGS | ALLOC_TAG_F_SCOPE, 0u, 0u }; \
		&__allocinfo_site; }))
#endif

#ifndef ALLOCINFO_LIBRARY
/*
 * Registration: each translation unit carries a constructor that hands its object's
 * tag section to the library before the object's own constructors run. The section
 * bounds are the linker's per-object __start_/__stop_ symbols.
 */
#ifdef __cplusplus
extern "C" {
#endif
extern struct alloc_tag __start_allocinfo_tags[] __attribute__((weak, visibility("hidden")));
extern struct alloc_tag __stop_allocinfo_tags[] __attribute__((weak, visibility("hidden")));
#ifdef __cplusplus
}
#endif
__attribute__((constructor(101), used)) static void allocinfo__register_this_object(void)
{
	/* Both are null in an object without tags; the library checks. */
	allocinfo_register_tags(__start_allocinfo_tags, __stop_allocinfo_tags);
}
#endif /* !ALLOCINFO_LIBRARY */

#if !defined(ALLOCINFO_NO_CALL_MACROS) && !defined(ALLOCINFO_LIBRARY)

/*
 * The fast path. A tagged malloc(), calloc() or strdup() too large for the library's
 * small-block heap, that finds counting on, no scope, its tag numbered and the thread
 * holding a counter shard of its own makes the allocation in the calling object,
 * with glibc's allocator: the same steps as the library's fast path, without the call
 * into the library. Counting off, it is a plain call to glibc, as in the library.
 * Everything else (a thread's first allocation, a tag not yet numbered, scopes,
 * ALLOCINFO_DEBUG, sanitizers, start-up) calls the library, which decides.
 *
 * The path is compiled once per object, in a function of its own that each call site
 * calls with its tag (a handful of instructions at the site, rather than the whole
 * path at every one). A call site whose size is a constant leaves even the size out:
 * the size rides in its tag's flags (ALLOC_TAG_F_SIZE_SHIFT), so its code is one
 * instruction longer than the plain call's.
 *
 * This code knows layouts frozen as version 1: the 16-byte record in front of the
 * block, a counter's place in a shard, and the tag's counter field. A library with
 * other layouts exports no allocinfo__inline_v1, so a program built against this
 * header then fails to start instead of miscounting. -DALLOCINFO_NO_INLINE always
 * calls the library.
 */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define ALLOCINFO__SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
	__has_feature(memory_sanitizer)
#define ALLOCINFO__SANITIZED 1
#endif
#endif

/* glibc: __GLIBC__ when a C library header was read; under allocinfo-cc, none may be
 * yet (<features.h> would fix the feature set), so one only glibc has is looked for. */
#if defined(__GLIBC__)
#define ALLOCINFO__GLIBC 1
#elif defined(__has_include) && defined(__linux__)
#if __has_include(<gnu/libc-version.h>)
#define ALLOCINFO__GLIBC 1
#endif
#endif

#if defined(__x86_64__) && defined(ALLOCINFO__GLIBC) && defined(__GNUC__) && \
	!defined(ALLOCINFO__SANITIZED) && !defined(ALLOCINFO_NO_INLINE)
#define ALLOCINFO__INLINE 1
#ifdef __cplusplus
extern "C" {
#endif
/* glibc's allocator itself, under the library's malloc; through the GOT, no PLT. */
#ifdef __clang__
extern void *__libc_malloc(size_t) ALLOCINFO__NOEXCEPT;
extern void *__libc_calloc(size_t, size_t) ALLOCINFO__NOEXCEPT;
#else
extern void *__libc_malloc(size_t) ALLOCINFO__NOEXCEPT __attribute__((noplt));
extern void *__libc_calloc(size_t, size_t) ALLOCINFO__NOEXCEPT __attribute__((noplt));
#endif
#ifdef __cplusplus
}
#endif

/* *p += v in one instruction: neither a signal handler nor a reader splits it. */
static ALLOCINFO__INLINE_KW __attribute__((always_inline)) void
allocinfo__add_v1(long long *p, long long v)
{
	__asm__("addq %1, %0" : "+m"(*p) : "er"(v));
}

/* *go != 0, compared in memory (a load into a register and a test is one more
 * instruction); another process may write the word at any time. */
static ALLOCINFO__INLINE_KW __attribute__((always_inline)) int
allocinfo__switch_on_v1(const unsigned int *go)
{
	__asm__ goto("cmpl $0, %0\n\tje %l[off]" : : "m"(*go) : "cc" : off);
	return 1;
off:
	return 0;
}

/* Casts that strict C++ warning sets accept. */
#ifdef __cplusplus
#define ALLOCINFO__CAST(type, v) static_cast<type>(v)
#else
#define ALLOCINFO__CAST(type, v) ((type)(v))
#endif

/* The allocation from glibc, counted, with its record in front: the part of the path
 * that calls out, in a function of its own, so that the tests before it need no
 * stack frame (the library's small-block sizes pass them on to the library). */
static ALLOCINFO__INLINE_KW __attribute__((noinline, malloc)) void *
allocinfo__glibc_v1(void *shard, size_t n, unsigned int counter, int zero)
{
	struct allocinfo__record_v1 *r = ALLOCINFO__CAST(struct allocinfo__record_v1 *,
		zero ? __libc_calloc(1, n + sizeof(*r)) : __libc_malloc(n + sizeof(*r)));
	long long *c;
	if (__builtin_expect(!r, 0))
		return r;	/* null, errno ENOMEM, as from the library */
	/* The counter pair {bytes, calls} of this tag in the thread's shard. */
	c = ALLOCINFO__CAST(long long *,
			    ALLOCINFO__CAST(void *, ALLOCINFO__CAST(char *, shard) + counter));
	allocinfo__add_v1(&c[0], ALLOCINFO__CAST(long long, n));
	allocinfo__add_v1(&c[1], 1);
	r->size = n;
	r->counter = counter;
	r->meta = ALLOCINFO__MAGIC_V1;
	return r + 1;
}

static ALLOCINFO__INLINE_KW __attribute__((always_inline, malloc)) void *
allocinfo__malloc_v1(const struct alloc_tag *t, size_t n, int zero)
{
	struct allocinfo_thread *th = &allocinfo__thread;
	const unsigned int *go = __atomic_load_n(&allocinfo__inline_v1.go, __ATOMIC_RELAXED);
	unsigned int counter = __atomic_load_n(&t->counter, __ATOMIC_RELAXED);
	/* The switch first: counting off, this and a plain call to glibc are all. */
	if (__builtin_expect(!allocinfo__switch_on_v1(go), 0)) {
		if (__atomic_load_n(&allocinfo__inline_v1.plain, __ATOMIC_RELAXED))
			return zero ? __libc_calloc(1, n) : __libc_malloc(n);
	} else if (__builtin_expect(n > allocinfo__inline_v1.small_max && th->shard &&
				    !th->override && counter &&
				    n <= ALLOCINFO__CAST(size_t, -1) - sizeof(struct allocinfo__record_v1),
				    1)) {
		return allocinfo__glibc_v1(th->shard, n, counter, zero);
	}
	return zero ? allocinfo_calloc(t, 1, n) : allocinfo_malloc(t, n);
}

/* The object's own out-of-line functions (static: each object that uses one has a
 * copy; noinline: one copy, called from every site). */
#define ALLOCINFO__LOCAL static ALLOCINFO__INLINE_KW __attribute__((noinline, malloc))

ALLOCINFO__LOCAL void *allocinfo__malloc_n(const struct alloc_tag *t, size_t n)
{
	return allocinfo__malloc_v1(t, n, 0);
}

ALLOCINFO__LOCAL void *allocinfo__malloc_c(const struct alloc_tag *t)
{
	return allocinfo__malloc_v1(t, t->flags >> ALLOC_TAG_F_SIZE_SHIFT, 0);
}

ALLOCINFO__LOCAL void *allocinfo__calloc_n(const struct alloc_tag *t, size_t n, size_t size)
{
	size_t total;
	if (__builtin_mul_overflow(n, size, &total))
		return allocinfo_calloc(t, n, size);	/* sets errno */
	return allocinfo__malloc_v1(t, total, 1);
}

ALLOCINFO__LOCAL void *allocinfo__calloc_c(const struct alloc_tag *t)
{
	return allocinfo__malloc_v1(t, t->flags >> ALLOC_TAG_F_SIZE_SHIFT, 1);
}

/* strdup is a malloc and a copy: the malloc takes the fast path too. */
ALLOCINFO__LOCAL char *allocinfo__strdup_n(const struct alloc_tag *t, const char *s)
{
	size_t n = __builtin_strlen(s) + 1;
	char *p = ALLOCINFO__CAST(char *, allocinfo__malloc_v1(t, n, 0));
	if (p)
		__builtin_memcpy(p, s, n);
	return p;
}

/*
 * A size that is a constant the tag can carry, else 0. The same expression in the
 * tag's initializer and in the choice of the call, both read while parsing: they
 * agree, whatever the optimiser later learns about the size.
 */
#define ALLOCINFO__CSIZE(n) (__builtin_constant_p(n) ? \
	(ALLOCINFO__CAST(size_t, (n)) - 1u < ALLOC_TAG_SIZE_MAX ? \
	 ALLOCINFO__CAST(unsigned int, (n)) : 0u) : 0u)
#define ALLOCINFO__CSIZE2(n, s) (__builtin_constant_p((n) * (s)) ? \
	(ALLOCINFO__CAST(size_t, (n)) - 1u < ALLOC_TAG_SIZE_MAX && \
	 ALLOCINFO__CAST(size_t, (s)) - 1u < ALLOC_TAG_SIZE_MAX && \
	 ALLOCINFO__CAST(size_t, (n)) * ALLOCINFO__CAST(size_t, (s)) <= ALLOC_TAG_SIZE_MAX ? \
	 ALLOCINFO__CAST(unsigned int, (n) * (s)) : 0u) : 0u)

/* A tag for this line that carries the constant size z (0: none). */
#define ALLOCINFO__SIZED_TAG(z) \
	static struct alloc_tag __allocinfo_site ALLOCINFO__TAG_ATTRS = \
		{ __FILE__, ALLOCINFO__FUNC, __LINE__, \
		  ALLOCINFO__FLAGS | ((z) << ALLOC_TAG_F_SIZE_SHIFT), 0u, 0u }

#define ALLOCINFO__SIZED_CALL(z, fn, ...) __extension__ ({ \
	ALLOCINFO__SIZED_TAG(z); \
	__builtin_choose_expr((z) != 0, allocinfo__##fn##_c(&__allocinfo_site), \
			      allocinfo__##fn##_n(&__allocinfo_site, __VA_ARGS__)); })
#define ALLOCINFO__MALLOC(n) ALLOCINFO__SIZED_CALL(ALLOCINFO__CSIZE(n), malloc, n)
#define ALLOCINFO__CALLOC(n, s) ALLOCINFO__SIZED_CALL(ALLOCINFO__CSIZE2(n, s), calloc, n, s)
#define ALLOCINFO__MALLOC_N allocinfo__malloc_n
#define ALLOCINFO__CALLOC_N allocinfo__calloc_n
#define ALLOCINFO__STRDUP_N allocinfo__strdup_n
#else
#define ALLOCINFO__MALLOC(n) allocinfo_malloc(ALLOCINFO__SITE(), n)
#define ALLOCINFO__CALLOC(n, s) allocinfo_calloc(ALLOCINFO__SITE(), n, s)
#define ALLOCINFO__MALLOC_N allocinfo_malloc
#define ALLOCINFO__CALLOC_N allocinfo_calloc
#define ALLOCINFO__STRDUP_N allocinfo_strdup
#endif /* ALLOCINFO__INLINE */

/*
 * The call-site macros. In C they call the allocinfo_ entry points. In C++ they keep
 * the function's own name and add the tag as a first argument (overloads below), so
 * that std::malloc(n) and ::malloc(n) still mean what they say.
 */
#ifdef __cplusplus
inline void *malloc(const struct alloc_tag *t, size_t n) ALLOCINFO__NOEXCEPT
{ return ALLOCINFO__MALLOC_N(t, n); }
inline void *calloc(const struct alloc_tag *t, size_t n, size_t s) ALLOCINFO__NOEXCEPT
{ return ALLOCINFO__CALLOC_N(t, n, s); }
inline char *strdup(const struct alloc_tag *t, const char *s) ALLOCINFO__NOEXCEPT
{ return ALLOCINFO__STRDUP_N(t, s); }
inline void *realloc(const struct alloc_tag *t, void *p, size_t n) ALLOCINFO__NOEXCEPT
{ return allocinfo_realloc(t, p, n); }
inline void *reallocarray(const struct alloc_tag *t, void *p, size_t n, size_t s) ALLOCINFO__NOEXCEPT
{ return allocinfo_reallocarray(t, p, n, s); }
inline void *aligned_alloc(const struct alloc_tag *t, size_t a, size_t n) ALLOCINFO__NOEXCEPT
{ return allocinfo_aligned_alloc(t, a, n); }
inline int posix_memalign(const struct alloc_tag *t, void **p, size_t a, size_t n) ALLOCINFO__NOEXCEPT
{ return allocinfo_posix_memalign(t, p, a, n); }
inline void *memalign(const struct alloc_tag *t, size_t a, size_t n) ALLOCINFO__NOEXCEPT
{ return allocinfo_memalign(t, a, n); }
inline void *valloc(const struct alloc_tag *t, size_t n) ALLOCINFO__NOEXCEPT
{ return allocinfo_valloc(t, n); }
inline void *pvalloc(const struct alloc_tag *t, size_t n) ALLOCINFO__NOEXCEPT
{ return allocinfo_pvalloc(t, n); }
inline char *strndup(const struct alloc_tag *t, const char *s, size_t n) ALLOCINFO__NOEXCEPT
{ return allocinfo_strndup(t, s, n); }
inline int vasprintf(const struct alloc_tag *t, char **p, const char *f, va_list ap) ALLOCINFO__NOEXCEPT
{ return allocinfo_vasprintf(t, p, f, ap); }
__attribute__((format(printf, 3, 4)))
inline int asprintf(const struct alloc_tag *t, char **p, const char *f, ...) ALLOCINFO__NOEXCEPT
{
	va_list ap;
	int r;
	va_start(ap, f);
	r = allocinfo_vasprintf(t, p, f, ap);
	va_end(ap);
	return r;
}
namespace std {
using ::malloc;
using ::calloc;
using ::realloc;
using ::aligned_alloc;
}
/* C++ passes sizes as arguments: it has no __builtin_choose_expr. */
#define ALLOCINFO__CALL(fn, ...) fn(ALLOCINFO__SITE(), __VA_ARGS__)
#define ALLOCINFO__CALL_MALLOC(...) ALLOCINFO__CALL(malloc, __VA_ARGS__)
#define ALLOCINFO__CALL_CALLOC(...) ALLOCINFO__CALL(calloc, __VA_ARGS__)
#define ALLOCINFO__CALL_STRDUP(...) ALLOCINFO__CALL(strdup, __VA_ARGS__)
#else
#define ALLOCINFO__CALL(fn, ...) allocinfo_##fn(ALLOCINFO__SITE(), __VA_ARGS__)
#define ALLOCINFO__CALL_MALLOC ALLOCINFO__MALLOC
#define ALLOCINFO__CALL_CALLOC ALLOCINFO__CALLOC
#define ALLOCINFO__CALL_STRDUP(...) ALLOCINFO__STRDUP_N(ALLOCINFO__SITE(), __VA_ARGS__)
#endif

/*
 * malloc, calloc, realloc and strdup are tagged when called with their own number of
 * arguments. Another number is a structure's member of the same name (PCRE2's
 * memctl->malloc(size, data), yyjson's alc->realloc(ctx, p, old, size)), left as
 * written: the tag would not compile there. Its own name inside its own expansion is
 * not expanded again.
 */
#define ALLOCINFO__ARITY(...) ALLOCINFO__ARITY_(__VA_ARGS__, n, n, n, n, n, n, 2, 1, n)
#define ALLOCINFO__ARITY_(_1, _2, _3, _4, _5, _6, _7, _8, a, ...) a
#define ALLOCINFO__IF_ARITY(k, tagged, fn, ...) \
	ALLOCINFO__CAT(ALLOCINFO__ARITY_IS_, ALLOCINFO__CAT(k, ALLOCINFO__ARITY(__VA_ARGS__))) \
	(tagged, fn, __VA_ARGS__)
#define ALLOCINFO__ARITY_IS_11(tagged, fn, ...) tagged(__VA_ARGS__)
#define ALLOCINFO__ARITY_IS_22(tagged, fn, ...) tagged(__VA_ARGS__)
#define ALLOCINFO__ARITY_IS_12(tagged, fn, ...) fn(__VA_ARGS__)
#define ALLOCINFO__ARITY_IS_1n(tagged, fn, ...) fn(__VA_ARGS__)
#define ALLOCINFO__ARITY_IS_21(tagged, fn, ...) fn(__VA_ARGS__)
#define ALLOCINFO__ARITY_IS_2n(tagged, fn, ...) fn(__VA_ARGS__)
#define ALLOCINFO__CALL_REALLOC(...) ALLOCINFO__CALL(realloc, __VA_ARGS__)

#define malloc(...)         ALLOCINFO__IF_ARITY(1, ALLOCINFO__CALL_MALLOC, malloc, __VA_ARGS__)
#define calloc(...)         ALLOCINFO__IF_ARITY(2, ALLOCINFO__CALL_CALLOC, calloc, __VA_ARGS__)
#define realloc(...)        ALLOCINFO__IF_ARITY(2, ALLOCINFO__CALL_REALLOC, realloc, __VA_ARGS__)
#define reallocarray(...)   ALLOCINFO__CALL(reallocarray, __VA_ARGS__)
#define aligned_alloc(...)  ALLOCINFO__CALL(aligned_alloc, __VA_ARGS__)
#define posix_memalign(...) ALLOCINFO__CALL(posix_memalign, __VA_ARGS__)
#define memalign(...)       ALLOCINFO__CALL(memalign, __VA_ARGS__)
#define valloc(...)         ALLOCINFO__CALL(valloc, __VA_ARGS__)
#define pvalloc(...)        ALLOCINFO__CALL(pvalloc, __VA_ARGS__)
#define strdup(...)         ALLOCINFO__IF_ARITY(1, ALLOCINFO__CALL_STRDUP, strdup, __VA_ARGS__)
#define strndup(...)        ALLOCINFO__CALL(strndup, __VA_ARGS__)
#define asprintf(...)       ALLOCINFO__CALL(asprintf, __VA_ARGS__)
#define vasprintf(...)      ALLOCINFO__CALL(vasprintf, __VA_ARGS__)
#endif /* !ALLOCINFO_NO_CALL_MACROS */

#else /* ALLOCINFO_DISABLE: the plain calls, at no cost */

#define DEFINE_ALLOC_TAG(_name) static const int _name __attribute__((unused)) = 0
#define alloc_hooks_tag(_tag, _expr) (_expr)
#define alloc_hooks(_expr) (_expr)
#define ALLOC_TAG_SCOPE() do { } while (0)
#define malloc_noprof malloc
#define calloc_noprof calloc
#define realloc_noprof realloc
#define reallocarray_noprof reallocarray
#define aligned_alloc_noprof aligned_alloc
#define posix_memalign_noprof posix_memalign
#define memalign_noprof memalign
#define valloc_noprof valloc
#define pvalloc_noprof pvalloc
#define strdup_noprof strdup
#define strndup_noprof strndup
#define asprintf_noprof asprintf
#define vasprintf_noprof vasprintf

#endif /* ALLOCINFO_DISABLE */

#endif /* ALLOCINFO_H */
