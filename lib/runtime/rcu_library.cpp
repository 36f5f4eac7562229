/* SPDX-License-Identifier: MIT */
/* liburcu-bp, loaded on first need (rcu_library.h). */
#include "rcu_library.h"

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "library_dlopen.h"
#include "route.h"

namespace allocinfo {
namespace rcu {

const api *g_loaded;

namespace {

api g_api;
pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;

using fn = void (*)();

/* Fills g_api from the functions find() gives, and publishes it; g_lock held. */
template <typename Find>
bool fill(Find find)
{
	static const char *const names[] = {
		"urcu_bp_read_lock", "urcu_bp_read_unlock", "urcu_bp_synchronize_rcu",
		"urcu_bp_before_fork", "urcu_bp_after_fork_parent", "urcu_bp_after_fork_child",
	};
	fn *slots[] = {
		&g_api.read_lock, &g_api.read_unlock, &g_api.synchronize,
		&g_api.before_fork, &g_api.after_fork_parent, &g_api.after_fork_child,
	};
	constexpr unsigned n = sizeof(names) / sizeof(names[0]);
	static_assert(n == sizeof(slots) / sizeof(slots[0]), "a slot for each name");
	fn got[n];
	for (unsigned i = 0; i < n; i++)
		if (!(got[i] = reinterpret_cast<fn>(find(names[i]))))
			return false;
	for (unsigned i = 0; i < n; i++)
		*slots[i] = got[i];
	__atomic_store_n(&g_loaded, &g_api, __ATOMIC_RELEASE);
	return true;
}

/* The base name of an object's path is the library's soname, or the soname and a
 * version after a dot (liburcu-bp.so.8.0.0). */
bool is_liburcu_bp(const char *path)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return strcmp(base, ALLOCINFO_URCU_BP_SONAME) == 0 ||
	       strncmp(base, ALLOCINFO_URCU_BP_SONAME ".", sizeof(ALLOCINFO_URCU_BP_SONAME)) == 0;
}

} /* namespace */

bool load()
{
	if (loaded())
		return true;
	busy_guard guard;	/* what dlopen allocates is not the program's */
	pthread_mutex_lock(&g_lock);
	bool ok = loaded() != nullptr;
	if (!ok) {
		void *h = library_dlopen(ALLOCINFO_URCU_BP_SONAME, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
		ok = h && fill([h](const char *name) { return dlsym(h, name); });
		if (!ok)
			log_message("cannot load %s (%s): no callback or profiler can be registered",
				    ALLOCINFO_URCU_BP_SONAME, h ? "a function is missing" : library_dlerror());
	}
	pthread_mutex_unlock(&g_lock);
	return ok;
}

void adopt_loaded()
{
	/* The loader's own list, without a lookup by name that may search the disk. */
	for (struct link_map *map = _r_debug.r_map; map; map = map->l_next) {
		if (!map->l_name || !is_liburcu_bp(map->l_name))
			continue;
		busy_guard guard;
		/* Kept loaded from now on: the fork handlers will call it. (Not under a
		 * sanitizer, whose leak checker reports what dlopen allocates; there the
		 * test programs link it.) */
		if (!RECORD_ALWAYS && !library_dlopen(map->l_name, RTLD_NOW | RTLD_NOLOAD | RTLD_NODELETE))
			return;
		pthread_mutex_lock(&g_lock);
		if (!loaded())
			fill([map](const char *name) { return defined_symbol(map, name); });
		pthread_mutex_unlock(&g_lock);
		return;
	}
}

} /* namespace rcu */
} /* namespace allocinfo */
