/* SPDX-License-Identifier: MIT */
/*
 * Once, without pthread_once(). The library's first walk and first stack trace set
 * themselves up inside malloc, and the sanitizers intercept pthread_once(): a thread's
 * first allocation may come inside ThreadSanitizer's own start-up of that thread
 * (its pthread_getattr_np() reallocates), before the thread's state exists, and its
 * interceptor then crashed the program.
 *
 * The word holds IDLE, DONE, or the running thread's id (times two, plus one once a
 * thread waits for it). A thread that finds the runner missing from its process (a
 * child forked while another thread ran it) runs it again; the runner itself, called
 * again from inside the function, returns at once without waiting for itself.
 */
#ifndef ALLOCINFO_ONCE_FLAG_H
#define ALLOCINFO_ONCE_FLAG_H

#include <stdint.h>

#include "internal.h"

namespace allocinfo {

class once_flag {
public:
	template <typename Fn> void call(Fn fn)
	{
		if (likely(done()))
			return;
		if (begin()) {
			fn();
			finish();
		}
	}
	bool done() const { return __atomic_load_n(&word_, __ATOMIC_ACQUIRE) == DONE; }

private:
	static constexpr uint32_t IDLE = 0, DONE = 1;
	bool begin() HIDDEN;	/* true: this thread runs it now */
	void finish() HIDDEN;
	uint32_t word_ = IDLE;
};

} /* namespace allocinfo */

#endif
