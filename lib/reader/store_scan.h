/* SPDX-License-Identifier: MIT */
/*
 * Finding the stores of the machine's instrumented processes: the files
 * allocinfo-<pid> in the store directory, each checked before it is read (a regular
 * file of bounded size, owned by the owner of the process it names) and matched
 * against the live process (pid, start time, executable), so that stores of dead
 * processes and of reused pids are dropped. Shared by allocinfo and allocinfod.
 *
 * Every store is hostile input: a bad one is named in one line and skipped; nothing
 * here crashes, blocks or maps on its account.
 */
#ifndef ALLOCINFO_STORE_SCAN_H
#define ALLOCINFO_STORE_SCAN_H

#include <stdint.h>
#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "store_reader.h"

namespace allocinfo {

struct store_entry {
	int pid = 0;
	std::string path;
	store_snapshot snap;
	std::string comm;	/* /proc/<pid>/comm without its newline; may be empty */
	dev_t dev = 0;		/* the store file read */
	ino_t ino = 0;
};

struct scan_result {
	std::vector<store_entry> live;      /* valid stores of live processes, sorted by pid */
	std::vector<std::string> problems;  /* one line each: "<path>: <why>" */
	std::vector<std::string> stale;     /* stores whose process is gone (or pid reused);
					     * with remove_stale, those that were removed */
};

/* Stores larger than this are refused: reading one must stay cheap. */
constexpr uint64_t SCAN_MAX_STORE_SIZE = 2ull << 30;

/* $ALLOCINFO_STORE_DIR when it is an absolute path, else "/dev/shm". */
const char *scan_store_dir();

/*
 * Reads every allocinfo-<pid> file of the store directory (other names are
 * ignored). A store is stale when its process is gone or a zombie, when the pid now
 * belongs to another process (start time differs), when its process has exec'd
 * another image (executable differs), or when it says it has exited. Stores that
 * are not yet published (a process starting, or a child just forked) are skipped
 * without a word. Unreadable stores of other users are skipped too.
 *
 * With remove_stale (the --gc behaviour), stale stores are unlinked; one that
 * cannot be is listed in problems instead of stale.
 *
 * previous, when given, is the result of an earlier scan (not out): the snapshot
 * of a store file that is still there (same path, device and inode) is handed to
 * read_store() to be reused, so that a reader scanning again and again reads only
 * the counters of stores whose tags did not change. Its snapshots are left empty.
 */
void scan_stores(scan_result &out, bool remove_stale, scan_result *previous = nullptr);

/* One process's store. On failure returns false with a one-line reason that
 * starts with the store's path, or is "process PID: no such process" when there
 * is neither a store nor a process. */
bool read_pid_store(int pid, store_entry &out, std::string &why);

/* Writes the store's run-time switch (the `enabled` word of its header) with
 * pwrite, after checking the store as read_pid_store() does. */
bool set_store_enabled(int pid, bool on, std::string &why);

/*
 * ---- HOOK: other store kinds -------------------------------------------------
 * Every store file is turned into a store_source in exactly one place
 * (open_store_source() in store_scan.cpp). A store kind whose data lives partly
 * elsewhere (the BPF store keeps its counters in BPF maps) installs a factory
 * here: it is given the store file (already checked, open read-only) and may
 * return a composite source for it, or nullptr to read the file as it is. On an
 * error it returns nullptr and sets why; the store is then reported as a problem.
 */
using store_source_factory = std::unique_ptr<store_source> (*)(int pid, const std::string &path,
							       int fd, std::string &why);
void set_store_source_factory(store_source_factory f);

} /* namespace allocinfo */

#endif /* ALLOCINFO_STORE_SCAN_H */
