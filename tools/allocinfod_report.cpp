/* SPDX-License-Identifier: MIT */
/* Building allocinfod's files from the stores (see allocinfod_report.h). */
#include "allocinfod_report.h"

#include <string.h>
#include <sys/stat.h>

#include <string_view>
#include <unordered_map>

#include "allocinfod_log.h"
/* Stores kept in BPF maps: their reader is in libreader whenever its header is. */
#if __has_include("store_bpf_reader.h")
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

int64_t sat_add(int64_t a, int64_t b)
{
	int64_t r;
	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

/*
 * The report rows of several stores with equal sites summed, as merge_rows() of
 * all their rows gives them, but cheaper: processes of one program repeat the same
 * thousands of tags, so tags are first grouped by what names them (module, and
 * file, line and function, or the address of a caller tag) through a hash table,
 * and only one row per group is named and sorted. Naming and sorting every row
 * were most of the cost of a read (CPU time for 10 processes of 1,000 tags: 16 ms
 * that way, 6 ms this way).
 */
struct group {
	const allocinfo::tag_snapshot *first;
	int64_t bytes, calls;
};

/* What names a tag, pointing into its snapshot (no copy). */
struct site_key {
	uint32_t kind;			/* ALLOCINFO_TAGF_DYNAMIC | _UNLOADED */
	uint32_t line;
	uint64_t addr;			/* caller tags */
	std::string_view module, file, func;

	bool operator==(const site_key &o) const
	{
		return kind == o.kind && line == o.line && addr == o.addr &&
		       module == o.module && file == o.file && func == o.func;
	}
};

struct site_key_hash {
	size_t operator()(const site_key &k) const
	{
		std::hash<std::string_view> h;
		size_t v = h(k.module) * 31 + h(k.file);
		v = v * 31 + h(k.func);
		return v ^ (((size_t)k.kind << 32) + k.line) ^ (size_t)(k.addr * 0x9e3779b97f4a7c15ull);
	}
};

void summed_rows(const std::vector<const store_entry *> &stores, allocinfo::symbolizer *sym,
		 std::vector<site_row> &out)
{
	std::unordered_map<site_key, size_t, site_key_hash> index;
	std::vector<group> groups;

	for (const store_entry *e : stores) {
		for (const allocinfo::tag_snapshot &t : e->snap.tags) {
			site_key k{t.flags & (ALLOCINFO_TAGF_DYNAMIC | ALLOCINFO_TAGF_UNLOADED), 0, 0,
				   t.module_path, {}, {}};
			if (t.flags & ALLOCINFO_TAGF_DYNAMIC) {
				k.addr = t.addr;
			} else {
				k.line = t.line;
				k.file = t.file;
				k.func = t.func;
			}
			auto found = index.try_emplace(k, groups.size());
			if (found.second) {
				groups.push_back({&t, t.bytes, t.calls});
			} else {
				group &g = groups[found.first->second];
				g.bytes = sat_add(g.bytes, t.bytes);
				g.calls = sat_add(g.calls, t.calls);
			}
		}
	}

	std::vector<site_row> rows;
	allocinfo::store_snapshot one;
	one.tags.resize(1);
	rows.reserve(groups.size());
	for (const group &g : groups) {
		/* The group as one tag: snapshot_rows() names it, and leaves it out as
		 * it would each of its tags (an idle caller tag, an unloaded one). */
		one.tags[0] = *g.first;
		one.tags[0].bytes = g.bytes;
		one.tags[0].calls = g.calls;
		allocinfo::snapshot_rows(one, sym, rows);
	}
	/* Different raw names may still print alike: merge_rows() sums those and sorts. */
	out = allocinfo::merge_rows(rows, false);
}

} /* namespace */

void reports::scan(scan_result &res)
{
	time_t now = time(nullptr);
	if (now - sym_age_ > SYMBOLIZER_LIFETIME || now < sym_age_) {
		sym_.clear();
		sym_age_ = now;
	}

	allocinfo::scan_stores(res, true);
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

void reports::rows_of(const store_entry &e, std::vector<site_row> &rows)
{
	size_t first = rows.size();
	allocinfo::snapshot_rows(e.snap, &sym_, rows);

	std::string comm = e.comm;
	if (comm.empty()) {
		const char *slash = strrchr(e.snap.exe.c_str(), '/');
		comm = slash ? slash + 1 : e.snap.exe;
	}
	for (size_t i = first; i < rows.size(); i++)
		rows[i].comm = comm;
}

void reports::combined(std::string &out)
{
	std::lock_guard<std::mutex> lock(mu_);
	scan_result res;
	std::vector<site_row> rows;

	scan(res);
	std::vector<const store_entry *> stores;
	for (const store_entry &e : res.live)
		stores.push_back(&e);
	summed_rows(stores, &sym_, rows);
	allocinfo::render_text(out, rows);
}

bool reports::process(int pid, std::string &out)
{
	std::lock_guard<std::mutex> lock(mu_);
	store_entry e;
	std::string why;
	std::vector<site_row> rows;

	if (!allocinfo::read_pid_store(pid, e, why))
		return false;
	summed_rows({&e}, &sym_, rows);
	allocinfo::render_text(out, rows);
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

void reports::metrics(std::string &out)
{
	std::lock_guard<std::mutex> lock(mu_);
	scan_result res;
	std::vector<site_row> rows;

	scan(res);
	for (const store_entry &e : res.live)
		rows_of(e, rows);
	allocinfo::render_prometheus(out, allocinfo::merge_rows(rows, true));
}

void reports::problems(std::string &out)
{
	std::lock_guard<std::mutex> lock(mu_);
	scan_result res;

	scan(res);
	for (const std::string &p : res.problems) {
		out += p;
		out += '\n';
	}
}

void reports::pids(std::vector<int> &out)
{
	std::lock_guard<std::mutex> lock(mu_);
	scan_result res;

	scan(res);
	for (const store_entry &e : res.live)
		out.push_back(e.pid);
}

} /* namespace allocinfod */
