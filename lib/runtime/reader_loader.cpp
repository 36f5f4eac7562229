/* SPDX-License-Identifier: MIT */
/* Loading liballocinfo-reader.so (see reader_loader.h). */
#include "reader_loader.h"

#include <dlfcn.h>
#include <string.h>

#include "options.h"

namespace allocinfo {

namespace {

const allocinfo_reader_v1 *g_module;	/* atomic; set once */
bool g_said;				/* atomic: the failure was reported */

/* True when this library was loaded from the build tree's lib/.libs. */
bool running_from_build_tree()
{
	Dl_info di;
	if (!dladdr(reinterpret_cast<void *>(&reader_module), &di) || !di.dli_fname)
		return false;
	const char *slash = strrchr(di.dli_fname, '/');
	size_t n = sizeof(ALLOCINFO_BUILD_LIB_DIR) - 1;
	return slash && (size_t)(slash - di.dli_fname) == n &&
	       memcmp(di.dli_fname, ALLOCINFO_BUILD_LIB_DIR, n) == 0;
}

const allocinfo_reader_v1 *load(const char *path)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h)
		return nullptr;
	auto *m = static_cast<const allocinfo_reader_v1 *>(dlsym(h, ALLOCINFO_READER_SYMBOL));
	/* Its size says which entries it has: a module of an older build lacks the
	 * last ones (write_heap_profile). The two are built together; take none short. */
	if (!m || m->size < sizeof(allocinfo_reader_v1))
		return nullptr;
	return m;
}

} /* namespace */

const allocinfo_reader_v1 *reader_module()
{
	const allocinfo_reader_v1 *m = __atomic_load_n(&g_module, __ATOMIC_ACQUIRE);
	if (m)
		return m;
	busy_guard guard;
	const char *installed = ALLOCINFO_READER_PATH, *built = ALLOCINFO_BUILD_READER_PATH;
	if (secure_execution())
		built = nullptr;
	else if (running_from_build_tree())
		installed = nullptr;
	const char *tried = installed;
	if (installed)
		m = load(installed);
	if (!m && built)
		m = load(tried = built);
	if (!m) {
		const char *why = dlerror();	/* the last attempt's; reading it clears it */
		if (!__atomic_exchange_n(&g_said, true, __ATOMIC_ACQ_REL))
			log_message("cannot load %s: %s", tried, why ? why : "no entry points");
		return nullptr;
	}
	__atomic_store_n(&g_module, m, __ATOMIC_RELEASE);
	return m;
}

} /* namespace allocinfo */
