/* SPDX-License-Identifier: MIT */
/* Finding, checking and matching the stores of live processes (see store_scan.h). */
#include "store_scan.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>

#include "procfs.h"

namespace allocinfo {

namespace {

store_source_factory g_factory;

/* What one store file turned out to be. */
enum class verdict {
	live,		/* a valid store of the live process it names */
	stale,		/* its process is gone, or is no longer the one that wrote it */
	problem,	/* corrupt or hostile: named, skipped */
	pending,	/* being created by a starting or just-forked process */
	missing,	/* no such file (the process exited while we looked) */
	denied,		/* another user's store */
};

/* A source that never reports more than `cap` bytes: a file that grows after it
 * was checked cannot make a reader do more work than the check allowed. */
class capped_source final : public store_source {
public:
	capped_source(const store_source &inner, uint64_t cap) : inner_(inner), cap_(cap) {}
	uint64_t size() const override { return std::min(inner_.size(), cap_); }
	bool read(uint64_t off, void *buf, size_t len) const override
	{
		uint64_t size = this->size();
		if (off > size || len > size - off)
			return false;
		return inner_.read(off, buf, len);
	}
private:
	const store_source &inner_;
	uint64_t cap_;
};


/* True when pid names no running process (a zombie's memory is gone too). */
bool process_gone(int pid, proc_stat &ps)
{
	if (kill(pid, 0) != 0 && errno == ESRCH)
		return true;
	if (!read_proc_stat(pid, ps))
		return true;
	return ps.state == 'Z' || ps.state == 'X';
}

/*
 * The real, effective, saved and file-system uids of pid (the Uid: line of
 * /proc/<pid>/status), else the owner of /proc/<pid> four times. The owner alone is
 * not enough: /proc/<pid> of a process that made itself non-dumpable belongs to root.
 */
bool process_uids(int pid, uid_t uids[4])
{
	char path[64], buf[4096];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small_file(path, buf, sizeof(buf)) > 0) {
		const char *p = strstr(buf, "\nUid:");
		unsigned long v[4];
		if (p && sscanf(p + 5, "%lu %lu %lu %lu", &v[0], &v[1], &v[2], &v[3]) == 4) {
			for (int i = 0; i < 4; i++)
				uids[i] = (uid_t)v[i];
			return true;
		}
	}
	snprintf(path, sizeof(path), "/proc/%d", pid);
	struct stat st;
	if (stat(path, &st) != 0)
		return false;
	for (int i = 0; i < 4; i++)
		uids[i] = st.st_uid;
	return true;
}

std::string strip_deleted(const std::string &s)
{
	static const char suffix[] = " (deleted)";
	size_t n = sizeof(suffix) - 1;
	if (s.size() > n && s.compare(s.size() - n, n, suffix) == 0)
		return s.substr(0, s.size() - n);
	return s;
}

/*
 * Whether the process still runs the executable its store names. The store has the
 * path as the process saw it; a reader outside the process's mount namespace or
 * chroot sees a longer path ending with it. Unreadable (another user's process):
 * assumed to match.
 */
bool exe_matches(int pid, const std::string &exe)
{
	if (exe.empty())
		return true;
	char path[64], buf[PATH_MAX];
	snprintf(path, sizeof(path), "/proc/%d/exe", pid);
	ssize_t n = readlink(path, buf, sizeof(buf) - 1);
	if (n <= 0)
		return true;
	std::string now = strip_deleted(std::string(buf, (size_t)n));
	std::string then = strip_deleted(exe);
	if (now == then)
		return true;
	return then[0] == '/' && now.size() > then.size() &&
	       now.compare(now.size() - then.size(), then.size(), then) == 0;
}

std::string read_comm(int pid)
{
	char path[64], buf[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", pid);
	ssize_t n = read_small_file(path, buf, sizeof(buf));
	if (n <= 0)
		return std::string();
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	return std::string(buf, (size_t)n);
}

const char *file_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return "a directory, not a store";
	if (S_ISFIFO(mode))
		return "a FIFO, not a store";
	if (S_ISLNK(mode))
		return "a symbolic link, not a store";
	if (S_ISSOCK(mode))
		return "a socket, not a store";
	if (S_ISCHR(mode) || S_ISBLK(mode))
		return "a device, not a store";
	return "not a regular file";
}

/* ALLOCINFO_STORE_DIR when set: then stores are the files there, and only those. */
const char *explicit_store_dir()
{
	const char *d = getenv("ALLOCINFO_STORE_DIR");
	return d && d[0] == '/' ? d : nullptr;
}

/* What /proc/PID/fd/N reads as for a store's memfd (lib/store/store_file.h). */
const char MEMFD_LINK[] = "/memfd:allocinfo-store (deleted)";

bool is_proc_path(const std::string &path)
{
	return path.compare(0, 6, "/proc/") == 0;
}

/* The memfd store of pid as "/proc/PID/fd/N", or "" when it has none or its
 * descriptors cannot be listed (another user's process, for a non-root reader). */
std::string memfd_store_path(int pid)
{
	std::string dir = "/proc/" + std::to_string(pid) + "/fd";
	DIR *d = opendir(dir.c_str());
	if (!d)
		return "";
	std::string found;
	while (struct dirent *de = readdir(d)) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9')
			continue;
		std::string fd_path = dir + "/" + de->d_name;
		char target[sizeof(MEMFD_LINK) + 1];
		ssize_t n = readlink(fd_path.c_str(), target, sizeof(target));
		if (n == (ssize_t)sizeof(MEMFD_LINK) - 1 &&
		    memcmp(target, MEMFD_LINK, sizeof(MEMFD_LINK) - 1) == 0) {
			found = fd_path;
			break;
		}
	}
	closedir(d);
	return found;
}

/* Where pid's store is: the file in ALLOCINFO_STORE_DIR when that is set; else its
 * memfd, or a file in /dev/shm (left by an older library, or to be collected). */
std::string store_path(int pid)
{
	if (!explicit_store_dir()) {
		std::string memfd = memfd_store_path(pid);
		if (!memfd.empty())
			return memfd;
	}
	return std::string(scan_store_dir()) + "/allocinfo-" + std::to_string(pid);
}

/* The one place where a store file becomes a store_source (see the HOOK in
 * store_scan.h). */
std::unique_ptr<store_source> open_store_source(int pid, const std::string &path, int fd,
						std::string &why)
{
	if (g_factory) {
		why.clear();
		std::unique_ptr<store_source> s = g_factory(pid, path, fd, why);
		if (s || !why.empty())
			return s;
	}
	return std::unique_ptr<store_source>(new file_source(fd));
}

struct examination {
	verdict v = verdict::problem;
	std::string why;	/* for everything but live */
	bool alive = false;	/* the process named by the file exists */
	dev_t dev = 0;
	ino_t ino = 0;
	int fd = -1;		/* with keep_fd and a live verdict: the open store */
};

/*
 * Checks the file at `path`, named for `pid`, and on a live verdict fills `out`.
 * The order matters: the file type first (never open a FIFO or a device for
 * reading), then whether the process lives (a store of a dead process is stale
 * whatever it holds), then the size and owner, and only then the contents.
 */
/* A store whose header names this pid is stale when the pid was reused (another start
 * time) or the process said it exited; sets ex and returns true then. */
bool stale_reason(int pid, uint64_t start_time, uint32_t state, const proc_stat &ps,
		  examination &ex)
{
	if (start_time != ps.start_time)
		ex.why = "pid " + std::to_string(pid) + " was reused by another process";
	else if (state == ALLOCINFO_STATE_EXITED)
		ex.why = "process " + std::to_string(pid) + " has exited";
	else
		return false;
	ex.v = verdict::stale;
	return true;
}

examination examine(const std::string &path, int pid, bool writable, bool keep_fd,
		    store_entry &out, store_entry *earlier = nullptr)
{
	examination ex;
	struct stat st;
	/* /proc/PID/fd/N is a link to the memfd itself, named as a store's (checked by
	 * memfd_store_path()): the one link followed. */
	bool via_proc = is_proc_path(path);
	if ((via_proc ? stat(path.c_str(), &st) : lstat(path.c_str(), &st)) != 0) {
		ex.v = errno == ENOENT ? verdict::missing : verdict::problem;
		ex.why = errno == ENOENT ? "no such store" : strerror(errno);
		return ex;
	}
	if (!S_ISREG(st.st_mode)) {
		ex.why = file_kind(st.st_mode);
		return ex;
	}
	int fd = open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | (via_proc ? 0 : O_NOFOLLOW) |
			     O_CLOEXEC | O_NONBLOCK);
	if (fd < 0) {
		int e = errno;
		if (e == ENOENT) {
			ex.v = verdict::missing;
			ex.why = "no such store";
		} else if (e == EACCES || e == EPERM) {
			ex.v = verdict::denied;
			ex.why = strerror(e);
		} else {
			ex.why = e == ELOOP ? file_kind(S_IFLNK) : strerror(e);
		}
		return ex;
	}
	struct close_fd {
		int *fd;
		~close_fd() { if (*fd >= 0) close(*fd); }
	} closer{&fd};

	if (fstat(fd, &st) != 0) {
		ex.why = strerror(errno);
		return ex;
	}
	if (!S_ISREG(st.st_mode)) {	/* replaced since lstat */
		ex.why = file_kind(st.st_mode);
		return ex;
	}
	ex.dev = st.st_dev;
	ex.ino = st.st_ino;

	proc_stat ps;
	if (process_gone(pid, ps)) {
		ex.v = verdict::stale;
		ex.why = "process " + std::to_string(pid) + " is gone";
		return ex;
	}
	ex.alive = true;
	if ((uint64_t)st.st_size > SCAN_MAX_STORE_SIZE) {
		ex.why = "too large (" + std::to_string((uint64_t)st.st_size) + " bytes)";
		return ex;
	}
	/* Only the process's owner (or root) may publish for it. */
	uid_t uids[4];
	if (!process_uids(pid, uids)) {
		ex.v = verdict::stale;
		ex.why = "process " + std::to_string(pid) + " is gone";
		return ex;
	}
	if (st.st_uid != 0 && st.st_uid != uids[0] && st.st_uid != uids[1] &&
	    st.st_uid != uids[2] && st.st_uid != uids[3]) {
		ex.why = "owned by uid " + std::to_string(st.st_uid) + ", but process " +
			 std::to_string(pid) + " runs as uid " + std::to_string(uids[0]);
		return ex;
	}

	/* A store being created is not published yet. */
	file_source raw(fd);
	capped_source capped_raw(raw, (uint64_t)st.st_size);
	allocinfo_store_header h;
	memset(&h, 0, sizeof(h));
	size_t head = (size_t)std::min<uint64_t>(capped_raw.size(), sizeof(h));
	if (head && !capped_raw.read(0, &h, head)) {
		ex.why = "cannot read the header";
		return ex;
	}
	/* A store is created zeroed and its header written last, state last of all. */
	bool all_zero = true;
	for (size_t i = 0; i < head && all_zero; i++)
		all_zero = reinterpret_cast<const unsigned char *>(&h)[i] == 0;
	bool has_state = head >= offsetof(allocinfo_store_header, state) + sizeof(h.state);
	if (all_zero || (has_state && h.state == 0)) {
		ex.v = verdict::pending;
		ex.why = "not yet published";
		return ex;
	}

	/* Whose store this is does not depend on the rest being readable: a store left
	 * by an earlier process of this pid is stale even if its layout is foreign. */
	if (head == sizeof(h) && memcmp(h.magic, ALLOCINFO_STORE_MAGIC, sizeof(h.magic)) == 0 &&
	    h.pid == pid) {
		if (stale_reason(pid, h.start_time, h.state, ps, ex))
			return ex;
	}

	std::string why;
	std::unique_ptr<store_source> src = open_store_source(pid, path, fd, why);
	if (!src) {
		ex.why = why.empty() ? "cannot read" : why;
		return ex;
	}
	capped_source capped(*src, SCAN_MAX_STORE_SIZE);
	store_snapshot snap;
	bool same_file = earlier && earlier->path == path && earlier->dev == ex.dev &&
			 earlier->ino == ex.ino;
	if (!read_store(capped, snap, why, same_file ? &earlier->snap : nullptr)) {
		ex.why = why;
		return ex;
	}
	if (snap.state == 0) {
		ex.v = verdict::pending;
		ex.why = "not yet published";
		return ex;
	}
	if (snap.pid != pid) {
		if (snap.pid == ps.ppid && snap.pid > 0) {
			/* A child just forked still holds its parent's header. */
			ex.v = verdict::pending;
			ex.why = "not yet published";
		} else {
			ex.why = "claims pid " + std::to_string(snap.pid);
		}
		return ex;
	}
	if (stale_reason(pid, snap.start_time, snap.state, ps, ex))
		return ex;
	if (snap.state != ALLOCINFO_STATE_LIVE) {
		ex.why = "unknown state " + std::to_string(snap.state);
		return ex;
	}
	if (!exe_matches(pid, snap.exe)) {
		ex.v = verdict::stale;
		ex.why = "process " + std::to_string(pid) + " now runs another program";
		return ex;
	}

	ex.v = verdict::live;
	out.pid = pid;
	out.path = path;
	out.snap = std::move(snap);
	/* Whose lines these are: the process's real user, never what the store says. */
	if (!read_store_owner(pid, out.snap.owner))
		out.snap.owner = make_store_owner(uids[0], std::vector<gid_t>());
	out.comm = read_comm(pid);
	out.dev = ex.dev;
	out.ino = ex.ino;
	if (keep_fd) {
		ex.fd = fd;
		fd = -1;
	}
	return ex;
}

/* "allocinfo-<pid>" with a canonical positive decimal pid; 0 for any other name. */
int pid_from_name(const char *name)
{
	static const char prefix[] = "allocinfo-";
	size_t n = sizeof(prefix) - 1;
	if (strncmp(name, prefix, n) != 0)
		return 0;
	const char *p = name + n;
	if (*p < '1' || *p > '9')
		return 0;
	long long v = 0;
	for (; *p; p++) {
		if (*p < '0' || *p > '9')
			return 0;
		v = v * 10 + (*p - '0');
		if (v > INT_MAX)
			return 0;
	}
	return (int)v;
}

/* Unlinks path if it is still the file that was examined. */
bool remove_if_same(const std::string &path, const examination &ex, std::string &why)
{
	struct stat st;
	if (lstat(path.c_str(), &st) != 0) {
		if (errno == ENOENT)
			return true;	/* someone else removed it */
		why = strerror(errno);
		return false;
	}
	if (st.st_dev != ex.dev || st.st_ino != ex.ino) {
		why = "replaced while it was being checked";
		return false;
	}
	if (unlink(path.c_str()) != 0 && errno != ENOENT) {
		why = std::string("cannot remove: ") + strerror(errno);
		return false;
	}
	return true;
}

} /* namespace */

const char *scan_store_dir()
{
	const char *d = getenv("ALLOCINFO_STORE_DIR");
	return d && d[0] == '/' ? d : "/dev/shm";
}

void set_store_source_factory(store_source_factory f)
{
	g_factory = f;
}

void scan_stores(scan_result &out, bool remove_stale, scan_result *previous)
{
	out = scan_result();
	const char *dir = scan_store_dir();
	DIR *d = opendir(dir);
	if (!d) {
		if (errno != ENOENT)
			out.problems.push_back(std::string(dir) + ": " + strerror(errno));
		return;
	}
	std::vector<int> pids;
	while (struct dirent *de = readdir(d)) {
		int pid = pid_from_name(de->d_name);
		if (pid > 0)
			pids.push_back(pid);
	}
	closedir(d);
	/* Without a private directory, the memfd stores of live processes too. */
	if (!explicit_store_dir()) {
		if (DIR *proc = opendir("/proc")) {
			while (struct dirent *de = readdir(proc)) {
				char *end;
				long pid = strtol(de->d_name, &end, 10);
				if (pid > 0 && pid <= INT_MAX && !*end &&
				    !memfd_store_path((int)pid).empty())
					pids.push_back((int)pid);
			}
			closedir(proc);
		}
	}
	std::sort(pids.begin(), pids.end());
	pids.erase(std::unique(pids.begin(), pids.end()), pids.end());

	/* previous->live is sorted by pid too. */
	store_entry *earlier = previous ? previous->live.data() : nullptr;
	store_entry *earlier_end = previous ? earlier + previous->live.size() : nullptr;
	for (int pid : pids) {
		std::string path = store_path(pid);
		store_entry e;
		while (earlier != earlier_end && earlier->pid < pid)
			earlier++;
		store_entry *same = earlier != earlier_end && earlier->pid == pid ? earlier : nullptr;
		examination ex = examine(path, pid, false, false, e, same);
		switch (ex.v) {
		case verdict::live:
			out.live.push_back(std::move(e));
			break;
		case verdict::problem:
			out.problems.push_back(path + ": " + ex.why);
			break;
		case verdict::stale: {
			if (is_proc_path(path))
				break;	/* a memfd goes with its last process */
			if (!remove_stale) {
				out.stale.push_back(path);
				break;
			}
			if (ex.alive) {
				/* The process lives: its header may be caught half-written
				 * (a fork). Look again before removing what it may still use. */
				struct timespec ts = {0, 50 * 1000 * 1000};
				nanosleep(&ts, nullptr);
				store_entry again;
				examination ex2 = examine(path, pid, false, false, again);
				if (ex2.v != verdict::stale || ex2.dev != ex.dev || ex2.ino != ex.ino)
					break;
			}
			std::string why;
			if (remove_if_same(path, ex, why))
				out.stale.push_back(path);
			else
				out.problems.push_back(path + ": stale, " + why);
			break;
		}
		case verdict::pending:
		case verdict::missing:
		case verdict::denied:
			break;
		}
	}
}

namespace {

/* Why pid has no store file: it does not exist (or has exited, a zombie), or it
 * publishes none. */
std::string no_store_why(const std::string &path, int pid)
{
	proc_stat ps;
	if (process_gone(pid, ps))
		return "process " + std::to_string(pid) + ": no such process";
	return path + ": no store (process " + std::to_string(pid) +
	       " is not instrumented, or publishes no store)";
}

} /* namespace */

bool read_pid_store(int pid, store_entry &out, std::string &why)
{
	if (pid <= 0) {
		why = "invalid pid " + std::to_string(pid);
		return false;
	}
	std::string path = store_path(pid);
	examination ex = examine(path, pid, false, false, out);
	if (ex.v == verdict::live)
		return true;
	why = ex.v == verdict::missing ? no_store_why(path, pid) : path + ": " + ex.why;
	return false;
}

bool set_store_enabled(int pid, bool on, std::string &why)
{
	if (pid <= 0) {
		why = "invalid pid " + std::to_string(pid);
		return false;
	}
	std::string path = store_path(pid);
	store_entry e;
	examination ex = examine(path, pid, true, true, e);
	if (ex.v != verdict::live) {
		why = ex.v == verdict::missing ? no_store_why(path, pid) : path + ": " + ex.why;
		return false;
	}
	uint32_t v = on ? 1u : 0u;
	ssize_t n = pwrite(ex.fd, &v, sizeof(v), (off_t)offsetof(allocinfo_store_header, enabled));
	int e_errno = errno;
	close(ex.fd);
	if (n != (ssize_t)sizeof(v)) {
		why = path + ": cannot write the switch: " +
		      (n < 0 ? strerror(e_errno) : "short write");
		return false;
	}
	return true;
}

} /* namespace allocinfo */
