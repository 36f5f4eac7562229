/* SPDX-License-Identifier: MIT */
/* once_flag's waits (once_flag.h). */
#include "once_flag.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "futex_lock.h"

namespace allocinfo {

namespace {

constexpr uint32_t WAITED = 1;	/* the low bit of a running word */

uint32_t running_word(pid_t tid)
{
	return (uint32_t)tid << 1;
}

/* The thread is not in this process: a forked child's copy of a runner that stayed
 * in the parent. */
bool gone(uint32_t word)
{
	pid_t tid = (pid_t)(word >> 1);
	return syscall(SYS_tgkill, getpid(), tid, 0) != 0 && errno == ESRCH;
}

} /* namespace */

bool once_flag::begin()
{
	int saved = errno;	/* inside malloc, which leaves errno alone on success */
	pid_t self = (pid_t)syscall(SYS_gettid);
	bool run = false;
	for (;;) {
		uint32_t word = __atomic_load_n(&word_, __ATOMIC_ACQUIRE);
		if (word == DONE)
			break;
		if (word == IDLE || gone(word)) {
			if (__atomic_compare_exchange_n(&word_, &word, running_word(self), false,
							__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
				run = true;
				break;
			}
			continue;
		}
		if ((word >> 1) == (uint32_t)self)
			break;	/* called again from inside: go on without it */
		if (!(word & WAITED) &&
		    !__atomic_compare_exchange_n(&word_, &word, word | WAITED, false,
						 __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			continue;
		futex(&word_, FUTEX_WAIT_PRIVATE, word | WAITED);
	}
	errno = saved;
	return run;
}

void once_flag::finish()
{
	if (__atomic_exchange_n(&word_, DONE, __ATOMIC_RELEASE) & WAITED)
		futex(&word_, FUTEX_WAKE_PRIVATE, INT32_MAX);
}

} /* namespace allocinfo */
