/* SPDX-License-Identifier: MIT */
/* futex_lock's waits (futex_lock.h). */
#include "futex_lock.h"

#include <errno.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace allocinfo {

void futex(uint32_t *word, int op, uint32_t value)
{
	int saved = errno;
	syscall(SYS_futex, word, op, value, nullptr, nullptr, 0);
	errno = saved;
}

void futex_lock::lock_contended()
{
	/* A holder usually leaves within a few hundred instructions: spin a little
	 * before sleeping. */
	for (int i = 0; i < 64; i++) {
		uint32_t free = FREE;
		if (__atomic_load_n(&word_, __ATOMIC_RELAXED) == FREE &&
		    __atomic_compare_exchange_n(&word_, &free, HELD, false, __ATOMIC_ACQUIRE,
						__ATOMIC_RELAXED))
			return;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	/* From here the word says WAITED whenever this thread may sleep on it, so that
	 * the holder's unlock wakes one. */
	while (__atomic_exchange_n(&word_, WAITED, __ATOMIC_ACQUIRE) != FREE)
		futex(&word_, FUTEX_WAIT_PRIVATE, WAITED);
}

void futex_lock::wake_one()
{
	futex(&word_, FUTEX_WAKE_PRIVATE, 1);
}

} /* namespace allocinfo */
