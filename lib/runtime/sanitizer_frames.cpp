/* SPDX-License-Identifier: MIT */
/* Calls into a sanitizer's allocator whose frame chain ends at the program's line. */
#include "sanitizer_frames.h"

#include <dlfcn.h>
#include <sys/auxv.h>

#include "frames.h"

namespace allocinfo {
namespace sanitizer_frames {

namespace {

backend::table g_real;
void *(*g_real_new)(size_t, const std::nothrow_t &) noexcept;
void *(*g_real_new_array)(size_t, const std::nothrow_t &) noexcept;
void (*g_real_delete)(void *) noexcept;
void (*g_real_delete_array)(void *) noexcept;
uintptr_t g_self_lo, g_self_hi;	/* the library's mapping */

/* Records of the library's own walked before giving up: its deepest path from an
 * entry point to the allocator underneath is a handful. */
constexpr int MAX_OWN_FRAMES = 16;

bool loaded_code(uintptr_t a)
{
#ifdef ALLOCINFO_HAVE_DL_FIND_OBJECT
	struct dl_find_object r;
	return _dl_find_object(reinterpret_cast<void *>(a), &r) == 0;
#else
	(void)a;
	return false;
#endif
}

/* Whether rbp, met as the program's saved frame pointer above the library's frame
 * record at `above`, leads to a frame record: inside this thread's stack (whose last
 * word is `last`), above, aligned as the ABI aligns frames (x86-64 and AArch64: 16
 * bytes), and with a return address into loaded code. */
bool frame_record(uintptr_t rbp, uintptr_t above, uintptr_t last)
{
	return (rbp & 15) == 0 && rbp > above && rbp <= last - sizeof(uintptr_t) &&
	       loaded_code(reinterpret_cast<const uintptr_t *>(rbp)[1]);
}

/*
 * Ends the chain at the library's outermost frame record, the first whose return
 * address leaves the library, while it lives, when the record it leads to is not a
 * frame. The slot is in a frame of this thread's, below the caller's: no one else
 * reads it, and it holds its value again before any of the library's frames returns.
 */
class chain_end {
public:
	explicit chain_end(uintptr_t *record)
	{
		uintptr_t last = stack_last_word(reinterpret_cast<uintptr_t>(record));
		for (int i = 0; last && i < MAX_OWN_FRAMES; i++) {
			uintptr_t next = record[0], ra = record[1];
			if (ra - g_self_lo >= g_self_hi - g_self_lo) {
				if (!frame_record(next, reinterpret_cast<uintptr_t>(record), last)) {
					slot_ = record;
					saved_ = next;
					*slot_ = 0;
				}
				return;
			}
			/* A chain broken inside the library (a frame without a record):
			 * what follows is not ours to judge. */
			if ((next & (sizeof(uintptr_t) - 1)) ||
			    next <= reinterpret_cast<uintptr_t>(record) ||
			    next > last - sizeof(uintptr_t))
				return;
			record = reinterpret_cast<uintptr_t *>(next);
		}
	}
	~chain_end()
	{
		if (slot_)
			*slot_ = saved_;
	}
	chain_end(const chain_end &) = delete;
	chain_end &operator=(const chain_end &) = delete;

private:
	volatile uintptr_t *slot_ = nullptr;
	uintptr_t saved_ = 0;
};

#define OWN_RECORD() static_cast<uintptr_t *>(__builtin_frame_address(0))

KEEPS_FRAME [[gnu::noinline]] void *sanitized_malloc(size_t n) noexcept
{
	chain_end end(OWN_RECORD());
	return g_real.malloc(n);
}

KEEPS_FRAME [[gnu::noinline]] void *sanitized_calloc(size_t n, size_t s) noexcept
{
	chain_end end(OWN_RECORD());
	return g_real.calloc(n, s);
}

KEEPS_FRAME [[gnu::noinline]] void *sanitized_realloc(void *p, size_t n) noexcept
{
	chain_end end(OWN_RECORD());
	return g_real.realloc(p, n);
}

KEEPS_FRAME [[gnu::noinline]] void sanitized_free(void *p) noexcept
{
	chain_end end(OWN_RECORD());
	g_real.free(p);
}

KEEPS_FRAME [[gnu::noinline]] void *sanitized_memalign(size_t align, size_t n) noexcept
{
	chain_end end(OWN_RECORD());
	return g_real.memalign(align, n);
}

KEEPS_FRAME [[gnu::noinline]] void *sanitized_new(size_t n, const std::nothrow_t &tag) noexcept
{
	chain_end end(OWN_RECORD());
	return g_real_new(n, tag);
}

KEEPS_FRAME [[gnu::noinline]] void *sanitized_new_array(size_t n,
							const std::nothrow_t &tag) noexcept
{
	chain_end end(OWN_RECORD());
	return g_real_new_array(n, tag);
}

KEEPS_FRAME [[gnu::noinline]] void sanitized_delete(void *p) noexcept
{
	chain_end end(OWN_RECORD());
	g_real_delete(p);
}

KEEPS_FRAME [[gnu::noinline]] void sanitized_delete_array(void *p) noexcept
{
	chain_end end(OWN_RECORD());
	g_real_delete_array(p);
}

/* *fn, when there is one, through wrapper, which calls it as *real. */
template <typename Fn> void wrap_one(Fn &fn, Fn &real, Fn wrapper)
{
	if (fn) {
		real = fn;
		fn = wrapper;
	}
}

} /* namespace */

void wrap(backend::table &t)
{
#ifdef ALLOCINFO_HAVE_DL_FIND_OBJECT
	struct dl_find_object self, exe;
	if (_dl_find_object(reinterpret_cast<void *>(&wrap), &self) != 0)
		return;
	if (_dl_find_object(reinterpret_cast<void *>(getauxval(AT_ENTRY)), &exe) == 0 &&
	    exe.dlfo_map_start == self.dlfo_map_start)
		return;
	g_self_lo = reinterpret_cast<uintptr_t>(self.dlfo_map_start);
	g_self_hi = reinterpret_cast<uintptr_t>(self.dlfo_map_end);
	g_real = t;
	t.malloc = sanitized_malloc;
	t.calloc = sanitized_calloc;
	t.realloc = sanitized_realloc;
	t.free = sanitized_free;
	t.memalign = sanitized_memalign;
	wrap_one(backend::foreign_new, g_real_new, sanitized_new);
	wrap_one(backend::foreign_new_array, g_real_new_array, sanitized_new_array);
	wrap_one(backend::foreign_delete, g_real_delete, sanitized_delete);
	wrap_one(backend::foreign_delete_array, g_real_delete_array, sanitized_delete_array);
#else
	(void)t;
#endif
}

} /* namespace sanitizer_frames */
} /* namespace allocinfo */
