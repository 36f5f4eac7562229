/* SPDX-License-Identifier: MIT */
/* Building allocinfod's files from the stores (see allocinfod_report.h). */
#include "allocinfod_report.h"

#include <malloc.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

#include "allocinfod_log.h"
/* Stores kept in BPF maps: their reader is in libreader whenever its header is. */
#if __has_include("store_bpf_reader.h")
#include "bpf_tag_names.h"
#include "store_bpf_reader.h"
#define HAVE_BPF_READER 1
#endif

using allocinfo::scan_result;
using allocinfo::site_row;
using allocinfo::store_entry;

namespace allocinfod {

namespace {

/* The symbolizer's cache holds objects of processes long gone: start afresh now and then. */
constexpr time_t SYMBOLIZER_LIFETIME = 600;

const char DEFAULT_STORE_DIR[] = "/dev/shm";

size_t live_tags(const scan_result &r)
{
	size_t n = 0;
	for (const store_entry &e : r.live)
		n += e.snap.tags.size();
	return n;
}

} /* namespace */

void reports::scan()
{
	time_t now = time(nullptr);
	if (now - sym_age_ > SYMBOLIZER_LIFETIME || now < sym_age_) {
		sym_.clear();
		sym_age_ = now;
	}

	size_t tags_before = live_tags(current_);
	scan_result next;
	allocinfo::scan_stores(next, true, &current_);
	current_ = std::move(next);
	scan_result &res = current_;
	/* Stores gone: their copies go back to the system (the heap keeps freed
	 * memory otherwise, see main()). */
	if (tags_before > 2 * live_tags(res) + 65536)
		malloc_trim(0);
	for (auto it = naming_problems_.begin(); it != naming_problems_.end();) {
		bool live = std::any_of(res.live.begin(), res.live.end(),
					[&](const store_entry &e) { return e.path == it->first; });
		it = live ? std::next(it) : naming_problems_.erase(it);
	}
	for (const store_entry &e : res.live)
		if (e.snap.negative_tags)
			res.problems.push_back(e.path + ": " +
					       allocinfo::negative_tags_reason(e.snap.negative_tags));
	/* BPF stores leave pinned maps behind too (contract 1.5). The pins are the
	 * machine's, not the store directory's: only the daemon of the default
	 * directory collects them, not one serving a private directory (a test's). */
	std::vector<std::string> pins;
#ifdef HAVE_BPF_READER
	if (strcmp(allocinfo::scan_store_dir(), DEFAULT_STORE_DIR) == 0)
		allocinfo::remove_stale_bpf_pins(pins, res.problems);
#endif

	/* A bad store is logged once, not on every read, until it goes away. */
	std::set<std::string> now_bad(res.problems.begin(), res.problems.end());
	for (const std::string &p : now_bad)
		if (!logged_.count(p))
			log_msg(LOG_WARNING, "skipping store %s", p.c_str());
	logged_.swap(now_bad);
	for (const std::string &s : res.stale)
		log_msg(LOG_INFO, "removed store of a dead process: %s", s.c_str());
	for (const std::string &s : pins)
		log_msg(LOG_INFO, "removed BPF pins of a dead process: %s", s.c_str());
}

void reports::add_store(allocinfo::site_table &table, const store_entry &e,
			const std::string &comm, std::vector<uint32_t> *rows)
{
	table.set_naming_budget(allocinfo::naming_budget_ms());
	table.add(e.snap, comm, rows);
	if (table.unnamed_for_time())
		naming_problems_[e.path] = allocinfo::naming_budget_reason(table.unnamed_for_time());
	else
		naming_problems_.erase(e.path);
}

void reports::combined(std::string &out)
{
	std::lock_guard<std::mutex> lock(mu_);

	scan();
	combined_.clear_sums();
	for (const store_entry &e : current_.live) {
		memo &m = memos_[e.pid];
		bool new_tags = m.tags_id != e.snap.tags_id || !m.tags_id;
		if (new_tags) {
			m.tags_id = e.snap.tags_id;
			m.rows.clear();
		}
		add_store(combined_, e, std::string(), &m.rows);
#ifdef HAVE_BPF_READER
		/* The names just found, for the process's report iterator too. */
		if (new_tags)
			allocinfo::write_bpf_tag_names(e.snap, sym_);
#endif
	}
	/* Forget the processes gone (current_.live is sorted by pid). */
	for (auto it = memos_.begin(); it != memos_.end();) {
		auto e = std::lower_bound(current_.live.begin(), current_.live.end(), it->first,
					  [](const store_entry &x, int pid) { return x.pid < pid; });
		bool live = e != current_.live.end() && e->pid == it->first;
		it = live ? std::next(it) : memos_.erase(it);
	}
	allocinfo::render_text(out, combined_.rows());
	/* Processes come and go: a table that knows many more rows than it reported
	 * starts afresh, and what it held goes back to the system. */
	if (combined_.rows_known() > 4 * combined_.rows_reported() + 4096) {
		combined_ = allocinfo::site_table(&sym_, false);
		memos_.clear();
		malloc_trim(0);
	}
}

bool reports::process(int pid, std::string &out)
{
	std::lock_guard<std::mutex> lock(mu_);
	store_entry e;
	std::string why;

	if (!allocinfo::read_pid_store(pid, e, why))
		return false;
	allocinfo::site_table table(&sym_, false);
	add_store(table, e, std::string());
	allocinfo::render_text(out, table.rows());
	return true;
}

bool reports::process_owner(int pid, uid_t &uid)
{
	std::lock_guard<std::mutex> lock(mu_);
	store_entry e;
	std::string why;
	struct stat st;

	if (!allocinfo::read_pid_store(pid, e, why) || stat(e.path.c_str(), &st) != 0)
		return false;
	uid = st.st_uid;
	return true;
}

void reports::metrics(std::string &out, const viewer &v, mode_t mode)
{
	std::lock_guard<std::mutex> lock(mu_);

	scan();
	bool all = viewer_may_read(v, geteuid(), getegid(), mode);
	allocinfo::site_table table(&sym_, true);
	for (const store_entry &e : current_.live) {
		struct stat st;
		if (!all && (stat(e.path.c_str(), &st) != 0 ||
			     !viewer_may_read(v, st.st_uid, getegid(), mode)))
			continue;	/* its file, MNT/<pid>, is closed to the viewer */
		std::string comm = e.comm;
		if (comm.empty()) {
			const char *slash = strrchr(e.snap.exe.c_str(), '/');
			comm = slash ? slash + 1 : e.snap.exe;
		}
		add_store(table, e, comm);
	}
	allocinfo::render_prometheus(out, table.rows());
}

void reports::problems(std::string &out)
{
	std::lock_guard<std::mutex> lock(mu_);

	scan();
	for (const std::string &p : current_.problems) {
		out += p;
		out += '\n';
	}
	/* Stores named by an earlier report, while they live (scan() forgets the others). */
	for (const auto &p : naming_problems_)
		out += p.first + ": " + p.second + "\n";
}

void reports::pids(std::vector<int> &out)
{
	std::lock_guard<std::mutex> lock(mu_);

	scan();
	for (const store_entry &e : current_.live)
		out.push_back(e.pid);
}

} /* namespace allocinfod */
