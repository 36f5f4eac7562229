/* SPDX-License-Identifier: MIT */
/*
 * A lock of one word, for the small-block heap's classes and pool, and for the
 * give-back of unwind tables' pages (table_pages.cpp).
 *
 * Taken and released by one atomic instruction each when nobody waits, inline;
 * glibc's pthread_mutex_lock() and unlock() took about 55 instructions a pair
 * (callgrind: a call each way, and the dispatch on the mutex's type). A waiter spins
 * briefly, then sleeps in the kernel (futex).
 *
 * Its state can be read without writing it. A forked child looks at every class's
 * lock, and only the ones that were held cost it a write. With pthread_mutex_trylock
 * each of the 64 was written, a copy-on-write fault for every page of them in every
 * child.
 */
#ifndef ALLOCINFO_FUTEX_LOCK_H
#define ALLOCINFO_FUTEX_LOCK_H

#include <stdint.h>

#include "internal.h"

namespace allocinfo {

/* The futex call (FUTEX_WAIT_PRIVATE, FUTEX_WAKE_PRIVATE), errno kept: it runs inside
 * malloc and free, which leave errno as they found it on success. */
void futex(uint32_t *word, int op, uint32_t value) HIDDEN;

class futex_lock {
public:
	void lock()
	{
		uint32_t free = FREE;
		if (unlikely(!__atomic_compare_exchange_n(&word_, &free, HELD, false,
							  __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)))
			lock_contended();
	}
	bool try_lock()
	{
		uint32_t free = FREE;
		return __atomic_compare_exchange_n(&word_, &free, HELD, false, __ATOMIC_ACQUIRE,
						   __ATOMIC_RELAXED);
	}
	void unlock()
	{
		if (unlikely(__atomic_exchange_n(&word_, FREE, __ATOMIC_RELEASE) == WAITED))
			wake_one();
	}
	/* Held by some thread (or by a thread that did not survive fork). */
	bool held() const { return __atomic_load_n(&word_, __ATOMIC_RELAXED) != FREE; }
	/* In a forked child, whose other threads are gone: free again. */
	void reset() { __atomic_store_n(&word_, FREE, __ATOMIC_RELAXED); }

private:
	static constexpr uint32_t FREE = 0, HELD = 1, WAITED = 2;	/* WAITED: held, and
									 * a thread may sleep */
	void lock_contended() HIDDEN;
	void wake_one() HIDDEN;
	uint32_t word_ = FREE;
};

} /* namespace allocinfo */

#endif
