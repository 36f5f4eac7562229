// SPDX-License-Identifier: MIT
// The set of page starts that the library handed out over another allocator
// (page_starts.h), compiled into the test alone: what it holds, and each thread's
// memory of the last page start it found absent, which a pointer noted since (by any
// thread), or the set running out of memory, must make it forget.
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern "C" {
#include <cmocka.h>
}

#include "page_starts.h"

namespace ps = allocinfo::page_starts;

static int g_messages;

// The library's log, here counted.
void allocinfo::log_message(const char *, ...)
{
	g_messages++;
}

// page_starts.cpp maps its larger tables with mmap: this one fails while asked to, so
// that the set cannot grow. The real one is reached through the system call. Not
// under ThreadSanitizer, whose start-up needs its own.
static bool g_fail_mmap;
#ifndef __SANITIZE_THREAD__
#define FAILING_MMAP 1
extern "C" void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (g_fail_mmap) {
		errno = ENOMEM;
		return MAP_FAILED;
	}
	return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
}
#endif

// Page-aligned addresses that are mapped and readable (the test's own pages), so that
// reading below each is safe whatever the set says.
static char *g_pages;
enum { PAGES = 1024 };

static const void *page(unsigned i)
{
	return g_pages + (size_t)(i + 1) * 4096;
}

static int setup(void **)
{
	ps::g_guarded = true;
	g_pages = (char *)syscall(SYS_mmap, nullptr, (size_t)(PAGES + 2) * 4096,
				  PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return g_pages == MAP_FAILED;
}

static void t_noted_after_absent(void **)
{
	const void *p = page(0);
	assert_false(ps::contains(p));
	assert_true(ps::known_absent(p));	// remembered
	assert_false(ps::contains(p));
	ps::noted(const_cast<void *>(p));
	assert_false(ps::known_absent(p));	// forgotten: one was noted since
	assert_true(ps::contains(p));
	assert_true(ps::take(p));
	assert_false(ps::contains(p));
	assert_false(ps::take(p));
}

// Another thread notes the pointer this one remembers as absent.
static void *note_page(void *p)
{
	ps::noted(p);
	return nullptr;
}

static void t_noted_by_another_thread(void **)
{
	const void *p = page(1);
	assert_false(ps::contains(p));
	assert_true(ps::known_absent(p));
	pthread_t t;
	assert_int_equal(pthread_create(&t, nullptr, note_page, const_cast<void *>(p)), 0);
	pthread_join(t, nullptr);
	assert_true(ps::contains(p));
	assert_true(ps::take(p));
}

// Each thread remembers its own: another's absence says nothing here.
static void *ask_page(void *p)
{
	bool absent_before = ps::known_absent(p);
	bool found = ps::contains(p);
	return (void *)(uintptr_t)(absent_before ? 2 : found ? 1 : 0);
}

static void t_per_thread(void **)
{
	const void *p = page(2);
	assert_false(ps::contains(p));
	assert_true(ps::known_absent(p));
	pthread_t t;
	void *r;
	assert_int_equal(pthread_create(&t, nullptr, ask_page, const_cast<void *>(p)), 0);
	pthread_join(t, &r);
	assert_int_equal((uintptr_t)r, 0);	// not known there, asked, absent
}

// Notes page(10), page(11), ... until the set says it is out of memory, or n of them;
// returns how many it noted.
static unsigned fill(unsigned n)
{
	int before = g_messages;
	unsigned i = 0;
	while (g_messages == before && i < n && 10 + i < PAGES)
		ps::noted(const_cast<void *>(page(10 + i++)));
	return i;
}

// Once a pointer could not be noted, a page start the set does not hold may be one of
// the library's: the thread's memory of an absent one no longer answers, and the
// kernel says the bytes below can be read. The pointer is remembered as absent while
// the set is full, just before the one that cannot be noted: no pointer is noted in
// between, so only the set's running out can make the thread forget it.
static void t_out_of_memory(void **)
{
#ifndef FAILING_MMAP
	skip();
#endif
	g_fail_mmap = true;	// the set cannot grow from here
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t child = fork();
	if (child == 0) {	// how many notes the set takes, the last one failing
		unsigned n = fill(PAGES);
		_exit(write(fds[1], &n, sizeof(n)) == (ssize_t)sizeof(n) ? 0 : 1);
	}
	unsigned n = 0;
	assert_int_equal(read(fds[0], &n, sizeof(n)), (ssize_t)sizeof(n));
	waitpid(child, nullptr, 0);
	close(fds[0]);
	close(fds[1]);
	assert_true(n > 1 && n < PAGES);
	int before = g_messages;
	assert_int_equal(fill(n - 1), n - 1);	// full now, nothing said yet
	assert_int_equal(g_messages, before);
	const void *absent = page(3);
	assert_false(ps::contains(absent));
	assert_true(ps::known_absent(absent));
	ps::noted(const_cast<void *>(page(10 + n - 1)));	// the one that does not fit
	g_fail_mmap = false;
	assert_int_equal(g_messages, before + 1);
	assert_false(ps::known_absent(absent));
	assert_true(ps::contains(absent));	// readable below: taken for one of ours
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(t_noted_after_absent),
		cmocka_unit_test(t_noted_by_another_thread),
		cmocka_unit_test(t_per_thread),
		cmocka_unit_test(t_out_of_memory),
	};
	return cmocka_run_group_tests(tests, setup, nullptr);
}
