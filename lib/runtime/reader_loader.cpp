/* SPDX-License-Identifier: MIT */
/* Loading the library's modules (see reader_loader.h). */
#include "reader_loader.h"

#include <dlfcn.h>
#include <string.h>

#include "library_dlopen.h"
#include "options.h"

namespace allocinfo {

namespace {

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

/* One module: where it is, the table it exports, and the size that table must have
 * at least (the two are built together; take none short). */
struct module_slot {
	const char *installed, *built, *symbol;
	size_t size;
	const void *table;	/* atomic; set once */
	bool said;		/* atomic: the failure was reported */
};

const void *open_module(const char *path, const module_slot &m)
{
	void *h = library_dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
	if (!h)
		return nullptr;
	const void *t = dlsym(h, m.symbol);
	/* Its first word is its size, which says which entries it has. */
	if (!t || *static_cast<const uint32_t *>(t) < m.size)
		return nullptr;
	return t;
}

const void *load(module_slot &m)
{
	const void *t = __atomic_load_n(&m.table, __ATOMIC_ACQUIRE);
	if (t)
		return t;
	busy_guard guard;
	const char *installed = m.installed, *built = m.built;
	if (secure_execution())
		built = nullptr;
	else if (running_from_build_tree())
		installed = nullptr;
	const char *tried = installed;
	if (installed)
		t = open_module(installed, m);
	if (!t && built)
		t = open_module(tried = built, m);
	if (!t) {
		const char *why = library_dlerror();	/* the last attempt's; reading it clears it */
		if (!__atomic_exchange_n(&m.said, true, __ATOMIC_ACQ_REL))
			log_message("cannot load %s: %s", tried, why ? why : "no entry points");
		return nullptr;
	}
	__atomic_store_n(&m.table, t, __ATOMIC_RELEASE);
	return t;
}

module_slot g_reader = { ALLOCINFO_READER_PATH, ALLOCINFO_BUILD_READER_PATH,
			 ALLOCINFO_READER_SYMBOL, sizeof(allocinfo_reader_v1), nullptr, false };
module_slot g_bpf_module = { ALLOCINFO_BPF_MODULE_PATH, ALLOCINFO_BUILD_BPF_MODULE_PATH,
			     ALLOCINFO_BPF_MODULE_SYMBOL, sizeof(allocinfo_bpf_module_v1),
			     nullptr, false };

} /* namespace */

const allocinfo_reader_v1 *reader_module()
{
	return static_cast<const allocinfo_reader_v1 *>(load(g_reader));
}

unsigned g_reader_users;

void reader_fork_child()
{
	const auto *t = static_cast<const allocinfo_reader_v1 *>(
		__atomic_load_n(&g_reader.table, __ATOMIC_ACQUIRE));
	if (t && __atomic_load_n(&g_reader_users, __ATOMIC_ACQUIRE))
		t->forked_while_in_use();
	__atomic_store_n(&g_reader_users, 0, __ATOMIC_RELAXED);
}

const allocinfo_bpf_module_v1 *bpf_module()
{
	return static_cast<const allocinfo_bpf_module_v1 *>(load(g_bpf_module));
}

} /* namespace allocinfo */
