/* SPDX-License-Identifier: MIT */
/*
 * One object published under RCU (liburcu-bp, loaded by the first publication:
 * rcu_library.h) for the allocation path to call into: the callbacks chain and the
 * attached profiler. Readers enter a read-side section
 * with the thread's callbacks guard set (so that what they run allocates without
 * calling back); the writer replaces the object under its own lock and waits for a
 * grace period before freeing the old one.
 *
 * ThreadSanitizer sees neither the order a grace period gives (liburcu is not
 * instrumented) nor the allocation path's atomics: readers acquire `published` after
 * loading the pointer, which the writer released before publishing it, and release
 * `grace` as they leave, which the writer acquires after the grace period. The
 * annotations are weak: absent outside ThreadSanitizer builds.
 */
#ifndef ALLOCINFO_RCU_PUBLISHED_H
#define ALLOCINFO_RCU_PUBLISHED_H

#include <pthread.h>

#include "callbacks.h"
#include "rcu_library.h"

extern "C" void __tsan_acquire(void *addr) __attribute__((weak));
extern "C" void __tsan_release(void *addr) __attribute__((weak));

namespace allocinfo {

template <typename T>
struct rcu_published {
	T *ptr;		/* null: nothing published */
	char tsan_published, tsan_grace;

	/* The writer, under its lock: publishes p (liburcu-bp loaded before, when p is
	 * not null); returns what it replaces, which no reader may still use once
	 * wait_for_readers() returns. */
	T *publish(T *p)
	{
		T *old = ptr;
		if (__tsan_release)
			__tsan_release(&tsan_published);
		__atomic_store_n(&ptr, p, __ATOMIC_RELEASE);
		return old;
	}

	/* Not a cancellation point: liburcu waits for a grace period with poll() while
	 * it holds its own lock and the caller holds the writer's (nocancel.h). */
	void wait_for_readers()
	{
		if (const rcu::api *a = rcu::loaded()) {	/* else nothing was ever published */
			int was;
			pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, &was);
			a->synchronize();
			pthread_setcancelstate(was, &was);
		}
		if (__tsan_acquire)
			__tsan_acquire(&tsan_grace);
	}
};

/* A reader's section: the object published when it began, valid until it ends.
 * Before liburcu-bp is loaded there is none: what a reader could find published
 * without a read-side lock, no grace period would wait for. */
template <typename T>
class rcu_section {
public:
	explicit rcu_section(rcu_published<T> &pub) noexcept
		: pub_(pub), rcu_(rcu::loaded()), saved_(callbacks::t_inside), ptr_(nullptr)
	{
		callbacks::t_inside = true;
		if (!rcu_)
			return;
		rcu_->read_lock();
		ptr_ = __atomic_load_n(&pub.ptr, __ATOMIC_ACQUIRE);
		if (__tsan_acquire)
			__tsan_acquire(&pub.tsan_published);
	}
	~rcu_section()
	{
		if (rcu_) {
			if (__tsan_release)
				__tsan_release(&pub_.tsan_grace);
			rcu_->read_unlock();
		}
		callbacks::t_inside = saved_;
	}
	rcu_section(const rcu_section &) = delete;
	rcu_section &operator=(const rcu_section &) = delete;
	const T *get() const { return ptr_; }
private:
	rcu_published<T> &pub_;
	const rcu::api *rcu_;
	bool saved_;
	const T *ptr_;
};

} /* namespace allocinfo */

#endif
