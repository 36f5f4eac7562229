/* SPDX-License-Identifier: MIT */
/*
 * test_store_scan.cpp - unit tests of lib/reader/store_scan.cpp: which files of the store
 * directory are read, how a store is matched with its live process (pid, start
 * time, executable, state), what is stale and what is removed, the exact reason
 * given for each bad store, what a scan takes over from the one before, the
 * run-time switch, and the hook for other store kinds. The stores are synthetic, written by the test for itself or for children
 * it forks.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

extern "C" {
#include <cmocka.h>
}

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "store_format.h"
#include "store_reader.h"
#include "store_scan.h"

using namespace allocinfo;

namespace {

std::string g_dir;

/* Field 22 of /proc/<pid>/stat, parsed here independently of the library. */
uint64_t start_time_of(int pid)
{
	char path[64], buf[1024];
	snprintf(path, sizeof(path), "/proc/%d/stat", pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	char *p = strrchr(buf, ')');
	if (!p)
		return 0;
	unsigned long long v = 0;
	int field = 2;
	for (char *tok = strtok(p + 1, " "); tok; tok = strtok(nullptr, " "))
		if (++field == 22) {
			v = strtoull(tok, nullptr, 10);
			break;
		}
	return v;
}

std::string self_exe()
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	return n > 0 ? std::string(buf, (size_t)n) : std::string();
}

/* A small store: 2 CPUs, 8 tag slots, two used tags. */
constexpr uint32_t NR_CPUS = 2, TAG_CAP = 8;
constexpr uint64_t TAGS_OFF = 256, STRINGS_OFF = TAGS_OFF + TAG_CAP * 32, STRINGS_CAP = 512,
		   COUNTERS_OFF = STRINGS_OFF + STRINGS_CAP, STRIDE = TAG_CAP * 16,
		   TOTAL = COUNTERS_OFF + NR_CPUS * STRIDE;

struct store_image {
	std::vector<char> buf = std::vector<char>(TOTAL);
	uint32_t used = 1;

	allocinfo_store_header *h() { return reinterpret_cast<allocinfo_store_header *>(buf.data()); }
	allocinfo_store_tag *tag(uint32_t i)
	{
		return reinterpret_cast<allocinfo_store_tag *>(&buf[TAGS_OFF + i * 32]);
	}
	allocinfo_counter *counter(uint32_t cpu, uint32_t i)
	{
		return reinterpret_cast<allocinfo_counter *>(&buf[COUNTERS_OFF + cpu * STRIDE + i * 16]);
	}
	uint32_t intern(const std::string &s)
	{
		uint32_t off = used;
		memcpy(&buf[STRINGS_OFF + off], s.c_str(), s.size() + 1);
		used += (uint32_t)s.size() + 1;
		h()->strings_used = used;
		return off;
	}
};

store_image make_store(int pid, uint64_t start_time, const std::string &exe)
{
	store_image s;
	allocinfo_store_header *h = s.h();
	memcpy(h->magic, ALLOCINFO_STORE_MAGIC, sizeof(h->magic));
	h->version = ALLOCINFO_STORE_VERSION;
	h->header_size = sizeof(*h);
	h->total_size = TOTAL;
	h->pid = pid;
	h->nr_cpus = NR_CPUS;
	h->start_time = start_time;
	h->tag_capacity = TAG_CAP;
	h->tags_offset = TAGS_OFF;
	h->strings_offset = STRINGS_OFF;
	h->strings_capacity = STRINGS_CAP;
	h->counters_offset = COUNTERS_OFF;
	h->cpu_stride = STRIDE;
	h->enabled = 1;
	h->state = ALLOCINFO_STATE_LIVE;
	h->exe_off = exe.empty() ? 0 : s.intern(exe);
	allocinfo_store_tag *t = s.tag(2);
	t->flags = ALLOCINFO_TAGF_USED;
	t->file_off = s.intern("a.c");
	t->func_off = s.intern("fa");
	t->module_off = s.intern("/x/liba.so");
	t->line = 10;
	s.counter(0, 2)->bytes = 100;
	s.counter(0, 2)->calls = 1;
	s.counter(1, 2)->bytes = 50;
	s.counter(1, 2)->calls = 1;
	t = s.tag(3);
	t->flags = ALLOCINFO_TAGF_USED;
	t->file_off = s.intern("b.c");
	t->func_off = s.intern("fb");
	t->module_off = s.tag(2)->module_off;
	t->line = 20;
	s.counter(1, 3)->bytes = 7;
	s.counter(1, 3)->calls = 1;
	h->nr_tags = 4;
	return s;
}

store_image self_store()
{
	return make_store(getpid(), start_time_of(getpid()), self_exe());
}

std::string path_of(int pid)
{
	return g_dir + "/allocinfo-" + std::to_string(pid);
}

void put_file(const std::string &path, const void *data, size_t len)
{
	int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	assert_int_equal(close(fd), 0);
}

void put_store(int pid, store_image &s, size_t len = TOTAL)
{
	put_file(path_of(pid), s.buf.data(), len);
}

bool exists(const std::string &path)
{
	struct stat st;
	return lstat(path.c_str(), &st) == 0;
}

/* A pid that belonged to a child which has exited and been reaped. */
int dead_pid()
{
	pid_t p = fork();
	if (p == 0)
		_exit(0);
	assert_true(p > 0);
	int status;
	assert_int_equal(waitpid(p, &status, 0), p);
	return (int)p;
}

/* The only problem line of a scan, or "" when there is not exactly one. */
std::string only_problem(const scan_result &r)
{
	return r.problems.size() == 1 ? r.problems[0] : std::string();
}

void expect_problem(int pid, const std::string &why)
{
	scan_result r;
	scan_stores(r, false);
	assert_int_equal(r.live.size(), 0);
	assert_int_equal(r.stale.size(), 0);
	assert_string_equal(only_problem(r).c_str(), (path_of(pid) + ": " + why).c_str());
	store_entry e;
	std::string reason;
	assert_false(read_pid_store(pid, e, reason));
	assert_string_equal(reason.c_str(), (path_of(pid) + ": " + why).c_str());
	/* --gc leaves a bad store of a live process where it is. */
	scan_stores(r, true);
	assert_int_equal(r.stale.size(), 0);
	assert_int_equal(r.problems.size(), 1);
	assert_true(exists(path_of(pid)));
}

int setup(void **)
{
	char tmpl[] = "/tmp/test_store_scan.XXXXXX";
	if (!mkdtemp(tmpl))
		return -1;
	g_dir = tmpl;
	setenv("ALLOCINFO_STORE_DIR", g_dir.c_str(), 1);
	return 0;
}

int teardown(void **)
{
	set_store_source_factory(nullptr);
	std::string cmd = "rm -rf '" + g_dir + "'";
	return system(cmd.c_str()) == 0 ? 0 : -1;
}

/* ---- the directory ------------------------------------------------------------- */

void test_store_dir(void **)
{
	assert_string_equal(scan_store_dir(), g_dir.c_str());
	setenv("ALLOCINFO_STORE_DIR", "relative/dir", 1);
	assert_string_equal(scan_store_dir(), "/dev/shm");
	unsetenv("ALLOCINFO_STORE_DIR");
	assert_string_equal(scan_store_dir(), "/dev/shm");
	setenv("ALLOCINFO_STORE_DIR", g_dir.c_str(), 1);
}

void test_missing_dir(void **)
{
	setenv("ALLOCINFO_STORE_DIR", (g_dir + "/nonexistent").c_str(), 1);
	scan_result r;
	scan_stores(r, true);
	assert_int_equal(r.live.size() + r.problems.size() + r.stale.size(), 0);
	setenv("ALLOCINFO_STORE_DIR", g_dir.c_str(), 1);
}

void test_other_names_ignored(void **)
{
	store_image s = self_store();
	std::string pid = std::to_string(getpid());
	for (const char *name : {"allocinfo-0", "allocinfo-", "allocinfo-+1", "allocinfo--1",
				 "allocinfo-99999999999", "allocinfo-12x", "xallocinfo-1"})
		put_file(g_dir + "/" + name, s.buf.data(), s.buf.size());
	put_file(g_dir + "/allocinfo-0" + pid, s.buf.data(), s.buf.size());
	put_file(g_dir + "/allocinfo-" + pid + ".tmp", s.buf.data(), s.buf.size());
	scan_result r;
	scan_stores(r, true);
	assert_int_equal(r.live.size() + r.problems.size() + r.stale.size(), 0);
}

/* ---- live stores ----------------------------------------------------------------- */

void test_live(void **)
{
	store_image s = self_store();
	put_store(getpid(), s);
	scan_result r;
	scan_stores(r, false);
	assert_int_equal(r.problems.size(), 0);
	assert_int_equal(r.stale.size(), 0);
	assert_int_equal(r.live.size(), 1);
	const store_entry &e = r.live[0];
	assert_int_equal(e.pid, getpid());
	assert_string_equal(e.path.c_str(), path_of(getpid()).c_str());
	assert_string_equal(e.comm.c_str(), "test_store_scan");
	assert_int_equal(e.snap.pid, getpid());
	assert_string_equal(e.snap.exe.c_str(), self_exe().c_str());
	assert_int_equal(e.snap.tags.size(), 2);
	assert_true(e.snap.tags[0].file == "a.c");
	assert_int_equal(e.snap.tags[0].line, 10);
	assert_int_equal(e.snap.tags[0].bytes, 150);
	assert_int_equal(e.snap.tags[0].calls, 2);
	assert_true(e.snap.tags[1].func == "fb");
	assert_int_equal(e.snap.tags[1].bytes, 7);

	store_entry one;
	std::string why;
	assert_true(read_pid_store(getpid(), one, why));
	assert_int_equal(one.snap.tags.size(), 2);
	assert_string_equal(one.comm.c_str(), "test_store_scan");
}

/* Only shards [0, shards_used) are summed; a value past the shard count (or 0, from
 * a writer that does not set it) means all of them. */
void test_shards_used(void **)
{
	struct expect {
		uint32_t shards_used;
		int64_t a_bytes, b_bytes;
	} cases[] = {
		{ 1, 100, 0 },		/* shard 1 was never handed out: not read */
		{ 2, 150, 7 },
		{ 0, 150, 7 },
		{ NR_CPUS + 1, 150, 7 },
		{ 0xffffffffu, 150, 7 },
	};
	for (const expect &c : cases) {
		store_image s = self_store();
		s.h()->shards_used = c.shards_used;
		put_store(getpid(), s);
		store_entry e;
		std::string why;
		assert_true(read_pid_store(getpid(), e, why));
		assert_int_equal(e.snap.tags.size(), 2);
		assert_int_equal(e.snap.tags[0].bytes, c.a_bytes);
		assert_int_equal(e.snap.tags[1].bytes, c.b_bytes);
	}
}

/* Several live stores come sorted by pid; a child's store is its own. */
void test_live_sorted(void **)
{
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(fds[1]);
		(void)!read(fds[0], &c, 1);	/* until the parent closes the pipe */
		_exit(0);
	}
	close(fds[0]);
	store_image mine = self_store();
	store_image theirs = make_store(child, start_time_of(child), self_exe());
	put_store(getpid(), mine);
	put_store(child, theirs);
	scan_result r;
	scan_stores(r, false);
	close(fds[1]);
	waitpid(child, nullptr, 0);
	assert_int_equal(r.problems.size(), 0);
	assert_int_equal(r.live.size(), 2);
	assert_true(r.live[0].pid < r.live[1].pid);
	assert_true((r.live[0].pid == getpid() && r.live[1].pid == child) ||
		    (r.live[1].pid == getpid() && r.live[0].pid == child));
}

/* The process may see its executable under a shorter path (chroot, container) or
 * as deleted after an upgrade. */
void test_exe_forms(void **)
{
	std::string exe = self_exe();
	size_t second = exe.find('/', 1);
	assert_true(second != std::string::npos);
	const std::string forms[] = {exe.substr(second), exe + " (deleted)"};
	for (const std::string &form : forms) {
		store_image s = make_store(getpid(), start_time_of(getpid()), form);
		put_store(getpid(), s);
		scan_result r;
		scan_stores(r, false);
		assert_int_equal(r.live.size(), 1);
	}
	/* A store that does not say (yet) is taken as it is. */
	store_image s = make_store(getpid(), start_time_of(getpid()), "");
	put_store(getpid(), s);
	scan_result r;
	scan_stores(r, false);
	assert_int_equal(r.live.size(), 1);
}

/* ---- not yet published ---------------------------------------------------------- */

void test_pending(void **)
{
	std::vector<char> zeros(TOTAL);
	std::string why;
	store_entry e;
	scan_result r;

	put_file(path_of(getpid()), zeros.data(), 0);		/* just created */
	scan_stores(r, true);
	assert_int_equal(r.live.size() + r.problems.size() + r.stale.size(), 0);
	put_file(path_of(getpid()), zeros.data(), zeros.size());	/* sized, not written */
	scan_stores(r, true);
	assert_int_equal(r.live.size() + r.problems.size() + r.stale.size(), 0);
	assert_false(read_pid_store(getpid(), e, why));
	assert_string_equal(why.c_str(), (path_of(getpid()) + ": not yet published").c_str());

	store_image s = self_store();	/* header written, state last */
	s.h()->state = 0;
	s.h()->pid = 0;
	s.h()->start_time = 0;
	put_store(getpid(), s);
	scan_stores(r, true);
	assert_int_equal(r.live.size() + r.problems.size() + r.stale.size(), 0);

	/* A child just forked: its store still holds the parent's header. */
	s = make_store(getppid(), start_time_of(getppid()), self_exe());
	put_store(getpid(), s);
	scan_stores(r, true);
	assert_int_equal(r.live.size() + r.problems.size() + r.stale.size(), 0);
	assert_true(exists(path_of(getpid())));
}

/* ---- stale stores ---------------------------------------------------------------- */

void test_stale_dead(void **)
{
	int pid = dead_pid();
	store_image s = make_store(pid, 12345, self_exe());
	put_store(pid, s);
	scan_result r;
	scan_stores(r, false);
	assert_int_equal(r.live.size() + r.problems.size(), 0);
	assert_int_equal(r.stale.size(), 1);
	assert_string_equal(r.stale[0].c_str(), path_of(pid).c_str());
	assert_true(exists(path_of(pid)));

	store_entry e;
	std::string why;
	assert_false(read_pid_store(pid, e, why));
	assert_string_equal(why.c_str(),
			    (path_of(pid) + ": process " + std::to_string(pid) + " is gone").c_str());

	scan_stores(r, true);
	assert_int_equal(r.stale.size(), 1);
	assert_false(exists(path_of(pid)));
	/* Neither a store nor a process: said so, not "not instrumented". */
	assert_false(read_pid_store(pid, e, why));
	assert_string_equal(why.c_str(),
			    ("process " + std::to_string(pid) + ": no such process").c_str());
	assert_false(set_store_enabled(pid, true, why));
	assert_string_equal(why.c_str(),
			    ("process " + std::to_string(pid) + ": no such process").c_str());
	scan_stores(r, true);
	assert_int_equal(r.stale.size(), 0);
}

/* A store of a dead process is stale whatever it holds; a FIFO is not removed. */
void test_stale_dead_corrupt(void **)
{
	int pid = dead_pid();
	put_file(path_of(pid), "garbage", 7);
	int pid2 = dead_pid();
	assert_int_equal(mkfifo(path_of(pid2).c_str(), 0600), 0);
	scan_result r;
	scan_stores(r, true);
	assert_int_equal(r.stale.size(), 1);
	assert_string_equal(r.stale[0].c_str(), path_of(pid).c_str());
	assert_false(exists(path_of(pid)));
	assert_string_equal(only_problem(r).c_str(),
			    (path_of(pid2) + ": a FIFO, not a store").c_str());
	assert_true(exists(path_of(pid2)));
}

void test_stale_zombie(void **)
{
	pid_t child = fork();
	if (child == 0)
		_exit(0);
	assert_true(child > 0);
	/* Wait until it is a zombie, without reaping it. */
	siginfo_t si;
	memset(&si, 0, sizeof(si));
	assert_int_equal(waitid(P_PID, child, &si, WEXITED | WNOWAIT), 0);
	store_image s = make_store(child, start_time_of(child), "");
	put_store(child, s);
	scan_result r;
	scan_stores(r, true);
	assert_int_equal(r.live.size() + r.problems.size(), 0);
	assert_int_equal(r.stale.size(), 1);
	assert_false(exists(path_of(child)));
	waitpid(child, nullptr, 0);
}

void test_stale_live_process(void **)
{
	const struct {
		const char *what;
		std::string why;
	} cases[] = {
		{"reused", "pid " + std::to_string(getpid()) + " was reused by another process"},
		{"exited", "process " + std::to_string(getpid()) + " has exited"},
		{"exe", "process " + std::to_string(getpid()) + " now runs another program"},
		/* Stale whatever the rest holds: a foreign layout left by an earlier process. */
		{"reused_bad", "pid " + std::to_string(getpid()) + " was reused by another process"},
		{"exited_bad", "process " + std::to_string(getpid()) + " has exited"},
	};
	for (const auto &c : cases) {
		store_image s = self_store();
		if (!strcmp(c.what, "reused"))
			s.h()->start_time += 1;
		else if (!strcmp(c.what, "exited"))
			s.h()->state = ALLOCINFO_STATE_EXITED;
		else if (!strcmp(c.what, "exe"))
			s.h()->exe_off = s.intern("/nonexistent/other-program");
		else if (!strcmp(c.what, "reused_bad"))
			s.h()->start_time += 1, s.h()->counters_offset = TOTAL;
		else
			s.h()->state = ALLOCINFO_STATE_EXITED, s.h()->nr_cpus = 0;
		put_store(getpid(), s);
		scan_result r;
		scan_stores(r, false);
		assert_int_equal(r.live.size() + r.problems.size(), 0);
		assert_int_equal(r.stale.size(), 1);
		store_entry e;
		std::string why;
		assert_false(read_pid_store(getpid(), e, why));
		assert_string_equal(why.c_str(), (path_of(getpid()) + ": " + c.why).c_str());
		scan_stores(r, true);
		assert_int_equal(r.stale.size(), 1);
		assert_false(exists(path_of(getpid())));
	}
}

/* ---- bad stores ------------------------------------------------------------------ */

void test_bad_contents(void **)
{
	const char *kinds[] = {"truncated", "magic", "version", "header_size", "nr_tags",
			       "nr_cpus", "strings", "regions", "short", "string_off",
			       "no_nul", "claims", "state", "exe_off"};
	const char *whys[] = {"truncated header", "bad magic", "unsupported version 2",
			      "bad header size", "implausible sizes", "implausible sizes",
			      "implausible sizes", "regions out of bounds", "regions out of bounds",
			      "string offsets out of bounds", "string offsets out of bounds",
			      "claims pid 1", "unknown state 9", "string offsets out of bounds"};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		store_image s = self_store();
		allocinfo_store_header *h = s.h();
		size_t len = TOTAL;
		std::string k = kinds[i];
		if (k == "truncated")
			len = sizeof(*h) - 1;
		else if (k == "magic")
			h->magic[0] = 'X';
		else if (k == "version")
			h->version = 2;
		else if (k == "header_size")
			h->header_size = 8;
		else if (k == "nr_tags")
			h->nr_tags = TAG_CAP + 1;
		else if (k == "nr_cpus")
			h->nr_cpus = 0;
		else if (k == "strings")
			h->strings_used = STRINGS_CAP + 1;
		else if (k == "regions")
			h->tags_offset = TOTAL - 8;
		else if (k == "short")
			len = COUNTERS_OFF + STRIDE;	/* the second CPU's counters are missing */
		else if (k == "string_off")
			s.tag(3)->func_off = 0xffffff;
		else if (k == "no_nul")
			h->strings_used = s.tag(3)->func_off + 1;
		else if (k == "claims")
			h->pid = getpid() == 1 ? 2 : 1;
		else if (k == "state")
			h->state = 9;
		else if (k == "exe_off")
			h->exe_off = STRINGS_CAP - 1;
		put_store(getpid(), s, len);
		print_message("%s\n", kinds[i]);
		expect_problem(getpid(), whys[i]);
	}
}

void test_bad_files(void **)
{
	std::string p = path_of(getpid());
	assert_int_equal(mkfifo(p.c_str(), 0600), 0);
	expect_problem(getpid(), "a FIFO, not a store");
	unlink(p.c_str());

	assert_int_equal(mkdir(p.c_str(), 0700), 0);
	expect_problem(getpid(), "a directory, not a store");
	rmdir(p.c_str());

	store_image s = self_store();
	put_file(g_dir + "/target", s.buf.data(), s.buf.size());
	assert_int_equal(symlink("target", p.c_str()), 0);
	expect_problem(getpid(), "a symbolic link, not a store");
	unlink(p.c_str());
	assert_int_equal(symlink("/nonexistent", p.c_str()), 0);
	expect_problem(getpid(), "a symbolic link, not a store");
	unlink(p.c_str());

	/* Huge and sparse: refused before a byte is read. */
	put_store(getpid(), s);
	assert_int_equal(truncate(p.c_str(), (off_t)SCAN_MAX_STORE_SIZE + 1), 0);
	expect_problem(getpid(), "too large (" + std::to_string(SCAN_MAX_STORE_SIZE + 1) +
					 " bytes)");
	/* Exactly at the bound it is read (and found valid: the rest is zeros). */
	assert_int_equal(truncate(p.c_str(), (off_t)SCAN_MAX_STORE_SIZE), 0);
	scan_result r;
	scan_stores(r, false);
	assert_int_equal(r.live.size(), 1);
	unlink(p.c_str());

	if (geteuid() == 0) {
		put_store(getpid(), s);
		assert_int_equal(chown(p.c_str(), 65534, (gid_t)-1), 0);
		expect_problem(getpid(), "owned by uid 65534, but process " +
						 std::to_string(getpid()) + " runs as uid 0");
		/* Root may publish for anyone. */
		assert_int_equal(chown(p.c_str(), 0, (gid_t)-1), 0);
		scan_stores(r, false);
		assert_int_equal(r.live.size(), 1);
	}
}

/* Problems are named and the good store is still read. */
void test_bad_and_good(void **)
{
	store_image s = self_store();
	put_store(getpid(), s);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t child = fork();
	if (child == 0) {
		char c;
		close(fds[1]);
		(void)!read(fds[0], &c, 1);
		_exit(0);
	}
	close(fds[0]);
	put_file(path_of(child), "\x01\x02garbage", 9);
	scan_result r;
	scan_stores(r, false);
	close(fds[1]);
	waitpid(child, nullptr, 0);
	assert_int_equal(r.live.size(), 1);
	assert_int_equal(r.live[0].pid, getpid());
	assert_string_equal(only_problem(r).c_str(), (path_of(child) + ": truncated header").c_str());
}

/* ---- scanning again --------------------------------------------------------------- */

/* A scan given the one before takes the tags over from the stores whose header is
 * unchanged but for the switch, and reads their counters again; a store whose
 * header changed, or whose file is another, is read afresh. */
void test_rescan_reuses_tags(void **)
{
	store_image s = self_store();
	put_store(getpid(), s);
	scan_result first;
	scan_stores(first, false);
	assert_int_equal(first.live.size(), 1);
	uint64_t id = first.live[0].snap.tags_id;
	assert_true(id != 0);

	/* New counts and switch: the same tags, the new counts. */
	s.counter(0, 2)->bytes = 1100;
	s.h()->enabled = 0;
	put_store(getpid(), s);
	scan_result second;
	scan_stores(second, false, &first);
	assert_int_equal(second.live.size(), 1);
	const store_snapshot &snap = second.live[0].snap;
	assert_true(snap.tags_id == id);
	assert_true(first.live[0].snap.tags.empty());	/* taken over */
	assert_int_equal(snap.tags.size(), 2);
	assert_true(snap.tags[0].file == "a.c");
	assert_int_equal(snap.tags[0].bytes, 1150);
	assert_int_equal(snap.tags[1].bytes, 7);
	assert_int_equal(snap.enabled, 0);
	assert_string_equal(snap.exe.c_str(), self_exe().c_str());

	/* A tag rewritten, as the writer does it: the generation moves. */
	s.tag(3)->line = 21;
	s.h()->generation++;
	put_store(getpid(), s);
	scan_result third;
	scan_stores(third, false, &second);
	assert_int_equal(third.live.size(), 1);
	assert_true(third.live[0].snap.tags_id != id);
	assert_int_equal(third.live[0].snap.tags[1].line, 21);

	/* Another file in its place, header unchanged: read afresh all the same. */
	s.tag(3)->line = 22;
	std::string tmp = path_of(getpid()) + ".new";
	put_file(tmp, s.buf.data(), TOTAL);
	assert_int_equal(rename(tmp.c_str(), path_of(getpid()).c_str()), 0);
	scan_result fourth;
	scan_stores(fourth, false, &third);
	assert_int_equal(fourth.live.size(), 1);
	assert_int_equal(fourth.live[0].snap.tags[1].line, 22);

	/* A store that went bad is refused, whatever was read of it before. */
	s.h()->strings_used = STRINGS_CAP + 1;
	put_store(getpid(), s);
	scan_result fifth;
	scan_stores(fifth, false, &fourth);
	assert_int_equal(fifth.live.size(), 0);
	assert_string_equal(only_problem(fifth).c_str(),
			    (path_of(getpid()) + ": implausible sizes").c_str());
}

/* ---- the run-time switch ---------------------------------------------------------- */

uint32_t enabled_word(int pid)
{
	uint32_t v = 0xdead;
	int fd = open(path_of(pid).c_str(), O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(pread(fd, &v, sizeof(v), offsetof(allocinfo_store_header, enabled)),
			 sizeof(v));
	close(fd);
	return v;
}

void test_set_enabled(void **)
{
	store_image s = self_store();
	put_store(getpid(), s);
	std::string why;
	assert_true(set_store_enabled(getpid(), false, why));
	assert_int_equal(enabled_word(getpid()), 0);
	store_entry e;
	assert_true(read_pid_store(getpid(), e, why));
	assert_int_equal(e.snap.enabled, 0);
	assert_true(set_store_enabled(getpid(), true, why));
	assert_int_equal(enabled_word(getpid()), 1);

	/* Nothing else in the file changed. */
	std::vector<char> after(TOTAL);
	int fd = open(path_of(getpid()).c_str(), O_RDONLY);
	assert_int_equal(read(fd, after.data(), after.size()), (ssize_t)after.size());
	close(fd);
	assert_memory_equal(after.data(), s.buf.data(), TOTAL);

	/* Refused: a bad store, a stale one, none at all. */
	s.h()->magic[0] = 'X';
	put_store(getpid(), s);
	assert_false(set_store_enabled(getpid(), false, why));
	assert_string_equal(why.c_str(), (path_of(getpid()) + ": bad magic").c_str());
	assert_int_equal(enabled_word(getpid()), 1);
	unlink(path_of(getpid()).c_str());
	assert_int_equal(mkfifo(path_of(getpid()).c_str(), 0600), 0);
	assert_false(set_store_enabled(getpid(), false, why));
	assert_string_equal(why.c_str(), (path_of(getpid()) + ": a FIFO, not a store").c_str());
	unlink(path_of(getpid()).c_str());
	assert_false(set_store_enabled(getpid(), false, why));
	assert_string_equal(why.c_str(),
			    (path_of(getpid()) + ": no store (process " + std::to_string(getpid()) +
			     " is not instrumented, or publishes no store)").c_str());
	int dead = dead_pid();
	s = make_store(dead, 1, "");
	put_store(dead, s);
	assert_false(set_store_enabled(dead, false, why));
	assert_int_equal(enabled_word(dead), 1);
	assert_false(set_store_enabled(0, true, why));
	assert_false(set_store_enabled(-1, true, why));
}

/* ---- the hook for other store kinds ---------------------------------------------- */

std::vector<char> *g_other;

std::unique_ptr<store_source> composite(int pid, const std::string &path, int fd,
					std::string &why)
{
	(void)fd;
	assert_int_equal(pid, getpid());
	assert_string_equal(path.c_str(), path_of(getpid()).c_str());
	if (!g_other) {
		why = "cannot attach the counters";
		return nullptr;
	}
	return std::unique_ptr<store_source>(new memory_source(g_other->data(), g_other->size()));
}

std::unique_ptr<store_source> decline(int, const std::string &, int, std::string &)
{
	return nullptr;
}

void test_source_factory(void **)
{
	store_image file = self_store();
	put_store(getpid(), file);
	store_image other = self_store();
	other.counter(0, 2)->bytes = 1000;	/* where the counters really are */
	g_other = &other.buf;
	set_store_source_factory(composite);
	store_entry e;
	std::string why;
	assert_true(read_pid_store(getpid(), e, why));
	assert_int_equal(e.snap.tags[0].bytes, 1050);

	g_other = nullptr;
	expect_problem(getpid(), "cannot attach the counters");

	set_store_source_factory(decline);	/* nullptr without a reason: the file */
	assert_true(read_pid_store(getpid(), e, why));
	assert_int_equal(e.snap.tags[0].bytes, 150);
	set_store_source_factory(nullptr);
}

} /* namespace */

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_store_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_missing_dir, setup, teardown),
		cmocka_unit_test_setup_teardown(test_other_names_ignored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live, setup, teardown),
		cmocka_unit_test_setup_teardown(test_live_sorted, setup, teardown),
		cmocka_unit_test_setup_teardown(test_shards_used, setup, teardown),
		cmocka_unit_test_setup_teardown(test_rescan_reuses_tags, setup, teardown),
		cmocka_unit_test_setup_teardown(test_exe_forms, setup, teardown),
		cmocka_unit_test_setup_teardown(test_pending, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_dead, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_dead_corrupt, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_zombie, setup, teardown),
		cmocka_unit_test_setup_teardown(test_stale_live_process, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_contents, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_files, setup, teardown),
		cmocka_unit_test_setup_teardown(test_bad_and_good, setup, teardown),
		cmocka_unit_test_setup_teardown(test_set_enabled, setup, teardown),
		cmocka_unit_test_setup_teardown(test_source_factory, setup, teardown),
	};
	return cmocka_run_group_tests(tests, nullptr, nullptr);
}
