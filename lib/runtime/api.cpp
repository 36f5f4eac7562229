/* SPDX-License-Identifier: MIT */
/* The C API: this process's report, and the run-time switch. */
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "internal.h"
#include "registry.h"
#include "report.h"
#include "site_table.h"
#include "store.h"
#include "store_reader.h"
#include "symbolize.h"

using namespace allocinfo;

namespace allocinfo {
symbolizer *own_symbolizer() HIDDEN;
}

namespace {

/* Kept for the life of the process: opening debug info is the slow part of a report. */
symbolizer *g_symbolizer;

/* The symbolizer's lock is held across fork, so that a child never inherits it held
 * by a thread that does not exist there. */
void symbolizer_fork_prepare()
{
	if (g_symbolizer)
		g_symbolizer->fork_prepare();
}

void symbolizer_fork_done()
{
	if (g_symbolizer)
		g_symbolizer->fork_done();
}

ssize_t write_all(int fd, const std::string &s)
{
	size_t done = 0;
	while (done < s.size()) {
		ssize_t n = write(fd, s.data() + done, s.size() - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		done += (size_t)n;
	}
	return (ssize_t)done;
}

} /* namespace */

/* The process's symbolizer, made on first use (busy_guard held). */
symbolizer *allocinfo::own_symbolizer()
{
	registry_lock();
	if (!g_symbolizer) {
		static bool atfork_done;
		if (!atfork_done)
			atfork_done = pthread_atfork(symbolizer_fork_prepare, symbolizer_fork_done,
						     symbolizer_fork_done) == 0;
		g_symbolizer = new symbolizer();
	}
	registry_unlock();
	return g_symbolizer;
}

extern "C" EXPORT ssize_t allocinfo_print(int fd)
{
	ensure_init();
	busy_guard guard;
	std::vector<site_row> rows;
	if (__atomic_load_n(&g_fast.state, __ATOMIC_ACQUIRE) == STATE_RUNNING) {
		reclaim_unloaded();
		store_snapshot snap;
		std::string why;
		memory_source src(g_store.base, g_store.size);
		if (!read_store(src, snap, why)) {
			log_message("cannot read this process's own store: %s", why.c_str());
			errno = EIO;
			return -1;
		}
		site_table table(own_symbolizer(), false);
		table.add(snap);
		rows = table.rows();
	}
	std::string out;
	render_text(out, rows);
	return write_all(fd, out);
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
