/* SPDX-License-Identifier: MIT */
/* The C API: this process's report, and the run-time switch. */
#include <errno.h>
#include <unistd.h>

#include "internal.h"
#include "reader_loader.h"
#include "registry.h"
#include "store.h"

using namespace allocinfo;

/* Rendering is the reader module's (liballocinfo-reader.so), loaded on the first
 * report: a program that never asks for one never loads libstdc++, libdw or zlib. */
extern "C" EXPORT ssize_t allocinfo_print(int fd)
{
	ensure_init();
	busy_guard guard;
	reader_in_use using_reader;
	const allocinfo_reader_v1 *reader = reader_module();
	if (!reader) {
		errno = ENOENT;
		return -1;
	}
	const void *store = nullptr;
	size_t size = 0;
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) == STATE_RUNNING) {
		reclaim_unloaded();
		store = g_store.base;
		size = g_store.size;
	}
	return reader->print_self(fd, store, size);
}

extern "C" EXPORT void allocinfo_set_enabled(int on)
{
	ensure_init();
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) != STATE_RUNNING) {
		log_message("allocinfo_set_enabled(%d) refused: profiling was started with "
			    "ALLOCINFO=never", on);
		return;
	}
	__atomic_store_n(&g_store.hdr->enabled, on ? 1u : 0u, __ATOMIC_RELEASE);
}

extern "C" EXPORT int allocinfo_enabled(void)
{
	ensure_init();
	return __atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) == STATE_RUNNING &&
	       __atomic_load_n(&g_store.hdr->enabled, __ATOMIC_ACQUIRE) != 0;
}
