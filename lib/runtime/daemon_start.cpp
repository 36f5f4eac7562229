/* SPDX-License-Identifier: MIT */
/*
 * setsid() and daemon(), interposed, so that a daemon can be read from its start.
 *
 * A forked child publishes a store of its own at its first counter update (store.h):
 * until then readers find only its parent's ("claims pid ..."). A daemon is such a
 * child: its parent exits at once, and the child (nginx's master, say) may allocate
 * nothing until it is told to do something, so the memory it holds stayed out of
 * sight. Every daemon starts its own session, once, right after the fork: its store
 * is published there. A child that execs, or exits, without becoming a daemon still
 * pays for no store of its own.
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "next_definition.h"
#include "store.h"

using namespace allocinfo;

extern "C" {

/* glibc's setsid() is the system call alone. */
EXPORT pid_t setsid(void)
{
	store_publish_forked();
	return (pid_t)syscall(SYS_setsid);
}

/* glibc's daemon() forks (the library's fork handlers run) and calls its own setsid()
 * in the child, which is not interposed: the store is published once it returns
 * there (the parent has exited inside it). */
EXPORT int daemon(int nochdir, int noclose)
{
	static int (*next)(int, int);
	auto fn = next_definition(&next, "daemon");
	if (!fn) {
		errno = ENOSYS;
		return -1;
	}
	int r = fn(nochdir, noclose);
	if (r == 0)
		store_publish_forked();
	return r;
}

} /* extern "C" */
