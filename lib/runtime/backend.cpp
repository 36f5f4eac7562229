/* SPDX-License-Identifier: MIT */
/*
 * Finding the allocator underneath at start-up, its functions when it is not glibc's,
 * glibc's malloc_usable_size, and the sanitizer builds' RTLD_NEXT table.
 */
#include "backend.h"

#include <dlfcn.h>
#include <errno.h>
#include <gnu/libc-version.h>
#include <link.h>
#include <string.h>

#include "route.h"
#include "sanitizer_double_free.h"
#include "sanitizer_frames.h"

namespace allocinfo {
namespace backend {

table foreign;
void (*foreign_delete)(void *) noexcept;
void (*foreign_delete_array)(void *) noexcept;
void *(*foreign_new)(size_t, const std::nothrow_t &) noexcept;
void *(*foreign_new_array)(size_t, const std::nothrow_t &) noexcept;
bool g_new_kinds;
uint32_t g_foreign_flag;
bool g_fast_path = true;
underneath g_underneath = underneath::glibc;
bool g_no_records;
bool g_program_allocator;
bool g_sanitizer;
bool g_heap_tool;
bool g_passing_on;
/* Filled at start-up, not initialised: the relocations of an initialiser naming
 * __libc_malloc would be rewritten with the library's GOT (redirect_backend()). */
table below;

namespace {
size_t (*next_usable_size)(void *);

/* The six functions of a table, each as look(name) finds it (null where it does not). */
template <class Look> table table_of(Look look)
{
	table t;
	t.malloc = reinterpret_cast<decltype(t.malloc)>(look("malloc"));
	t.calloc = reinterpret_cast<decltype(t.calloc)>(look("calloc"));
	t.realloc = reinterpret_cast<decltype(t.realloc)>(look("realloc"));
	t.free = reinterpret_cast<decltype(t.free)>(look("free"));
	t.memalign = reinterpret_cast<decltype(t.memalign)>(look("memalign"));
	t.usable_size = reinterpret_cast<decltype(t.usable_size)>(look("malloc_usable_size"));
	return t;
}
}

void free_plain(void *p)
{
	if (g_foreign_flag)
		foreign.free(p);
	else
		free(p);
}

void *realloc_plain(void *p, size_t n)
{
	return g_foreign_flag ? foreign.realloc(p, n) : realloc(p, n);
}

size_t usable_size_plain(void *p)
{
	return g_foreign_flag ? foreign.usable_size(p) : usable_size(p);
}

#ifndef ALLOCINFO_BACKEND_NEXT

namespace {

/* The object that defines fn, or null. _dl_find_object() where glibc has it: dladdr1()
 * also looks for the nearest symbol, through all of the object's symbols, which for the
 * C library was a fifth of a short program's start-up (84k instructions). */
struct link_map *object_of(const void *fn)
{
	if (!fn)
		return nullptr;
#ifdef ALLOCINFO_HAVE_DL_FIND_OBJECT
	struct dl_find_object obj;
	if (_dl_find_object(const_cast<void *>(fn), &obj) == 0 && obj.dlfo_link_map)
		return obj.dlfo_link_map;
#endif
	Dl_info info;
	struct link_map *map = nullptr;
	if (!dladdr1(fn, &info, reinterpret_cast<void **>(&map), RTLD_DL_LINKMAP))
		return nullptr;
	return map;
}

/* name, if the object `map` defines it itself (not one of its dependencies). */
void *own_symbol(struct link_map *map, const char *name)
{
	return defined_symbol(map, name);
}

/* What the allocator may lack, made from what it has. */
void *calloc_by_malloc(size_t n, size_t s) noexcept
{
	size_t total;
	if (__builtin_mul_overflow(n, s, &total)) {
		errno = ENOMEM;
		return nullptr;
	}
	void *p = foreign.malloc(total);
	return p ? memset(p, 0, total) : nullptr;
}

int (*foreign_posix_memalign)(void **, size_t, size_t);
void *(*foreign_aligned_alloc)(size_t, size_t);

void *memalign_by_posix(size_t align, size_t n) noexcept
{
	void *p;
	int err = foreign_posix_memalign(&p, align < sizeof(void *) ? sizeof(void *) : align, n);
	if (err) {
		errno = err;
		return nullptr;
	}
	return p;
}

void *memalign_by_aligned_alloc(size_t align, size_t n) noexcept
{
	/* C11 wants the size a multiple of the alignment. */
	size_t rounded = (n + align - 1) & ~(align - 1);
	if (rounded < n) {
		errno = ENOMEM;
		return nullptr;
	}
	return foreign_aligned_alloc(align, rounded);
}

/* What the program's aligned calls would reach without the library. */
void *memalign_missing(size_t align, size_t n) noexcept
{
	return below.memalign(align, n);
}

size_t usable_size_missing(void *) noexcept
{
	return 0;
}

/* The functions an object defines itself, null where it has none. */
table own_table(struct link_map *map)
{
	return table_of([map](const char *name) { return own_symbol(map, name); });
}

/* Fills `foreign` from the allocator's object; false when it lacks what a
 * replacement malloc must have (free and realloc). */
bool fill_foreign(struct link_map *map)
{
	table t = own_table(map);
	if (!t.free || !t.realloc)
		return false;
	if (!t.calloc)
		t.calloc = calloc_by_malloc;
	foreign_posix_memalign = reinterpret_cast<int (*)(void **, size_t, size_t)>(
		own_symbol(map, "posix_memalign"));
	foreign_aligned_alloc = reinterpret_cast<void *(*)(size_t, size_t)>(
		own_symbol(map, "aligned_alloc"));
	if (!t.memalign)
		t.memalign = foreign_posix_memalign ? memalign_by_posix
			   : foreign_aligned_alloc ? memalign_by_aligned_alloc : memalign_missing;
	if (!t.usable_size)
		t.usable_size = usable_size_missing;
	foreign = t;
	foreign_delete = reinterpret_cast<void (*)(void *) noexcept>(own_symbol(map, "_ZdlPv"));
	foreign_delete_array =
		reinterpret_cast<void (*)(void *) noexcept>(own_symbol(map, "_ZdaPv"));
	using new_fn = void *(*)(size_t, const std::nothrow_t &) noexcept;
	foreign_new = reinterpret_cast<new_fn>(own_symbol(map, "_ZnwmRKSt9nothrow_t"));
	foreign_new_array = reinterpret_cast<new_fn>(own_symbol(map, "_ZnamRKSt9nothrow_t"));
	g_new_kinds = foreign_new && foreign_new_array && foreign_delete && foreign_delete_array;
	if (!foreign_delete)
		foreign_delete = t.free;
	if (!foreign_delete_array)
		foreign_delete_array = t.free;
	return true;
}

/* Valgrind's tools load their replacements of malloc as vgpreload_TOOL-ARCH.so; the
 * core's (vgpreload_core) replaces none, so callgrind and cachegrind count on. */
bool heap_tool_loaded()
{
	for (struct link_map *map = _r_debug.r_map; map; map = map->l_next) {
		const char *name = map->l_name ? strrchr(map->l_name, '/') : nullptr;
		name = name ? name + 1 : map->l_name;
		if (name && !strncmp(name, "vgpreload_", 10) && strncmp(name, "vgpreload_core-", 15))
			return true;
	}
	return false;
}

/* Defined by the allocator of every sanitizer that has one. */
constexpr const char *SANITIZER_SYMBOL = "__sanitizer_get_allocated_size";

/* `below`: the allocator after the library when it has malloc, calloc, realloc, free
 * and memalign of its own; else glibc's. Before redirect_backend(). */
void below_from(struct link_map *after, struct link_map *libc)
{
	below = { __libc_malloc, __libc_calloc, __libc_realloc, __libc_free, __libc_memalign,
		  nullptr };
	if (!after || after == libc)
		return;
	table t = own_table(after);
	if (t.malloc && t.calloc && t.realloc && t.free && t.memalign)
		below = t;
}

} /* namespace */

/*
 * The objects are looked at in the loader's order, which is the order in which it
 * binds the program's references, reading each one's own symbol table: dlsym would
 * miss a definition with a non-default version (libc_malloc_debug.so's
 * malloc@GLIBC_2.2.5, which the versioned references of programs built against glibc
 * bind to), and glibc's own malloc must be told apart from the __libc_malloc that
 * some allocators (tcmalloc, mimalloc) define again. Nothing here allocates.
 */
void init(bool never)
{
	struct link_map *libc = object_of(reinterpret_cast<const void *>(&gnu_get_libc_version));
	struct link_map *self = object_of(reinterpret_cast<const void *>(&init));
	if (!libc || !self)
		return;
	/* malloc or free built into the executable (an allocator linked statically, a
	 * wrapper of its own): the program's calls of them are bound inside it, where
	 * no routing reaches, so a block with a record in front that got there (a
	 * strdup() through libc's routed malloc) would be freed 16 bytes into the
	 * allocator's block. Then no block gets a record: the library keeps out of the
	 * way, as with ALLOCINFO=never (start-up says so). */
	struct link_map *program = _r_debug.r_map;
	if (program && program != self &&
	    (defined_symbol(program, "malloc") || defined_symbol(program, "free"))) {
		g_program_allocator = true;
		/* clang links its sanitizers' runtimes into the executable */
		g_sanitizer = defined_symbol(program, SANITIZER_SYMBOL);
		never = true;
	}
	/* A Valgrind tool that replaces malloc (memcheck, helgrind, drd, massif, dhat) by
	 * redirection, not by a symbol of that name: its checks and figures are for the
	 * program's own blocks, so they must all be the tool's, plain. */
	if (heap_tool_loaded()) {
		g_heap_tool = true;
		never = true;
	}
	struct link_map *before = nullptr, *after = nullptr;
	bool self_seen = false;
	for (struct link_map *map = _r_debug.r_map; map; map = map->l_next) {
		if (map == self)
			self_seen = true;
		else if (!defined_symbol(map, "malloc"))
			continue;
		else if (!self_seen && !before)
			before = map;
		else if (self_seen && !after)
			after = map;
	}
	struct link_map *chosen = nullptr;
	underneath kind = underneath::glibc;
	if (before && before != libc) {
		chosen = before;
		kind = underneath::first;
	} else if (!before && after && after != libc) {
		chosen = after;
		kind = underneath::next;
	}
	if (!chosen || !fill_foreign(chosen))
		return;
	g_sanitizer = defined_symbol(chosen, SANITIZER_SYMBOL);
	g_new_kinds = g_new_kinds && g_sanitizer;
	/* ThreadSanitizer records where blocks were made from its own shadow stack,
	 * not by frame pointers */
	if (g_sanitizer && !defined_symbol(chosen, "__tsan_init"))
		sanitizer_frames::wrap(foreign);
	if (g_sanitizer)
		sanitizer_double_free::init(chosen);
	g_passing_on = kind == underneath::first;
	below_from(kind == underneath::first ? after : nullptr, libc);
	g_fast_path = false;
	g_underneath = kind;
	g_foreign_flag = RECORD_F_FOREIGN;
	next_usable_size = foreign.usable_size;
	/* When the allocator comes first, its calls are routed to us, and objects
	 * loaded later must be routed too: the out-of-line paths check for them, so
	 * the fast path is not used. With ALLOCINFO=never nothing is routed: the
	 * program calls the allocator itself, and what reaches the library (the
	 * header's calls) gets its blocks, without a record, through the library's
	 * own GOT entries, redirected below whichever comes first. */
	g_no_records = never;
	/* Without records the library's own blocks, the allocator's malloc()'s, reach
	 * the library's delete as they are, and cannot be told from those its operator
	 * new made: all go to free(), which the library's own need. */
	if (never) {
		foreign_delete = foreign_delete_array = foreign.free;
		g_new_kinds = false;
	}
	if (kind == underneath::next)
		route_allocator_makes(chosen, self);
	if (kind == underneath::first && !never) {
		route_calls(chosen, self, true);
		return;
	}
	/* Blocks of ours reach the allocator's own functions that take one
	 * (allocator_api.h) only through calls that are routed to us. */
	if (!never)
		route_calls(chosen, self, false);
	void *fns[NR_BACKEND] = {
		reinterpret_cast<void *>(foreign.malloc), reinterpret_cast<void *>(foreign.calloc),
		reinterpret_cast<void *>(foreign.realloc), reinterpret_cast<void *>(foreign.free),
		reinterpret_cast<void *>(foreign.memalign),
	};
	void *saved[NR_BACKEND];
	for (unsigned i = 0; i < NR_BACKEND; i++)
		saved[i] = got_entry(i);
	if (redirect_backend(self, fns))
		g_fast_path = true;
	else	/* all or nothing: the slow paths call `foreign` themselves */
		redirect_backend(self, saved);
}

void *got_entry(unsigned i)
{
	switch (i) {
	case 0: return reinterpret_cast<void *>(&__libc_malloc);
	case 1: return reinterpret_cast<void *>(&__libc_calloc);
	case 2: return reinterpret_cast<void *>(&__libc_realloc);
	case 3: return reinterpret_cast<void *>(&__libc_free);
	default: return reinterpret_cast<void *>(&__libc_memalign);
	}
}

/* Resolved on first use, when the process is up: dlsym may allocate. */
size_t usable_size(void *p)
{
	auto fn = __atomic_load_n(&next_usable_size, __ATOMIC_ACQUIRE);
	if (!fn) {
		fn = (size_t (*)(void *))dlsym(RTLD_NEXT, "malloc_usable_size");
		__atomic_store_n(&next_usable_size, fn, __ATOMIC_RELEASE);
	}
	return fn ? fn(p) : 0;
}

#else

table g_next;

namespace {
alignas(64) char arena[1 << 20];	/* untouched pages cost nothing */
size_t arena_used;
}

void *bootstrap_alloc(size_t n, size_t align)
{
	if (align < 16)
		align = 16;
	size_t start = (__atomic_load_n(&arena_used, __ATOMIC_RELAXED) + align - 1) & ~(align - 1);
	if (start + n > sizeof(arena) || start + n < start)
		return nullptr;
	arena_used = start + n;
	return memset(arena + start, 0, n);
}

bool owns_bootstrap(const void *p)
{
	return (const char *)p >= arena && (const char *)p < arena + sizeof(arena);
}

void *got_entry(unsigned)
{
	return nullptr;
}

/* The sanitizer's allocator is the one underneath: no other is looked for. */
void init(bool)
{
	table t = table_of([](const char *name) { return dlsym(RTLD_NEXT, name); });
	g_next = t;
	next_usable_size = t.usable_size;
}

size_t usable_size(void *p)
{
	if (owns_bootstrap(p))
		return 0;
	return next_usable_size ? next_usable_size(p) : 0;
}

#endif

} /* namespace backend */
} /* namespace allocinfo */
