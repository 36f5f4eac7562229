/* SPDX-License-Identifier: MIT */
/* A double free of a counted block, reported as one by AddressSanitizer. */
#include "sanitizer_double_free.h"

#include <string.h>

#include "route.h"

namespace allocinfo {
namespace sanitizer_double_free {

namespace {

/* AddressSanitizer's interface (sanitizer/asan_interface.h, common_interface_defs.h). */
using locate_fn = const char *(*)(void *addr, char *name, size_t name_size,
				  void **region_address, size_t *region_size);
using ownership_fn = int (*)(const volatile void *p);

locate_fn g_locate;
ownership_fn g_live_start;	/* p starts a block not freed */

} /* namespace */

void init(struct link_map *sanitizer)
{
	auto locate = reinterpret_cast<locate_fn>(defined_symbol(sanitizer, "__asan_locate_address"));
	auto live = reinterpret_cast<ownership_fn>(
		defined_symbol(sanitizer, "__sanitizer_get_ownership"));
	if (locate && live) {
		g_locate = locate;
		g_live_start = live;
	}
}

void *block_for(void *p) noexcept
{
	if (!g_locate || !p || g_live_start(p))
		return p;
	void *start = static_cast<char *>(p) - sizeof(alloc_record), *region = nullptr;
	size_t size = 0;
	char name[1];
	const char *kind = g_locate(p, name, sizeof(name), &region, &size);
	if (kind && !strcmp(kind, "heap") && region == start && !g_live_start(start))
		return start;
	return p;
}

} /* namespace sanitizer_double_free */
} /* namespace allocinfo */
