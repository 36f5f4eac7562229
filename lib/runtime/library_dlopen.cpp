/* SPDX-License-Identifier: MIT */
/* dlopen() for the library's own loads (see library_dlopen.h). */
#include "library_dlopen.h"

#include <dlfcn.h>
#include <time.h>
#include <unistd.h>

#include "futex_lock.h"
#include "nocancel.h"

namespace allocinfo {

namespace {

/* Long enough for any load seen (a few ms; 100 ms on a loaded machine), short enough
 * that a fork() which cannot get it is only delayed. */
constexpr long FORK_WAIT_NS = 2L * 1000 * 1000 * 1000;
constexpr long FORK_POLL_NS = 1000 * 1000;

futex_lock g_loading;
pid_t g_loader;		/* atomic: the thread holding g_loading, or 0 */
bool g_loader_unusable;	/* a forked child whose loader state is half-made */
/* This thread's fork_prepare() took g_loading. Per thread: forks from several threads
 * run their prepare handlers at once (glibc releases its own fork-handler lock around
 * each call), so what one thread's fork took is that thread's to give back. */
__thread bool t_held_for_fork;

const char UNUSABLE[] = "the process was forked while another thread was loading a "
			"library; the loader's state is not safe to use in it";

__thread bool t_refused;

} /* namespace */

void *library_dlopen(const char *path, int flags)
{
	if (__atomic_load_n(&g_loader_unusable, __ATOMIC_RELAXED)) {
		t_refused = true;
		return nullptr;
	}
	t_refused = false;
	pid_t self = gettid();
	/* A load from inside one of this thread's loads (a constructor it runs). */
	if (__atomic_load_n(&g_loader, __ATOMIC_RELAXED) == self)
		return dlopen(path, flags);
	g_loading.lock();
	__atomic_store_n(&g_loader, self, __ATOMIC_RELAXED);
	void *h = dlopen(path, flags);
	__atomic_store_n(&g_loader, 0, __ATOMIC_RELAXED);
	g_loading.unlock();
	return h;
}

const char *library_dlerror()
{
	return t_refused ? UNUSABLE : dlerror();
}

void library_dlopen_fork_prepare()
{
	t_held_for_fork = false;
	/* Forking from inside this thread's own load: there is nothing to wait for. */
	if (__atomic_load_n(&g_loader, __ATOMIC_RELAXED) == gettid())
		return;
	for (long waited = 0;; waited += FORK_POLL_NS) {
		if (g_loading.try_lock()) {
			t_held_for_fork = true;
			return;
		}
		if (waited >= FORK_WAIT_NS)
			return;
		struct timespec d = { 0, FORK_POLL_NS };
		nocancel::nanosleep(&d, nullptr);
	}
}

void library_dlopen_fork_parent()
{
	if (t_held_for_fork)
		g_loading.unlock();
}

void library_dlopen_fork_child()
{
	if (!t_held_for_fork && g_loading.held())
		__atomic_store_n(&g_loader_unusable, true, __ATOMIC_RELAXED);
	__atomic_store_n(&g_loader, 0, __ATOMIC_RELAXED);
	g_loading.reset();
}

} /* namespace allocinfo */
