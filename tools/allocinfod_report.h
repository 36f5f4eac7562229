/* SPDX-License-Identifier: MIT */
/*
 * What allocinfod serves, generated from the stores on every call: the combined
 * report (all live processes, equal lines summed), one process's report, the
 * Prometheus exposition (one series per process and site), and the list of stores
 * that could not be read. Every call but those about one pid rescans the store
 * directory, removes the stores (and BPF pins) of dead processes, and logs each
 * bad store once. Thread-safe: the FUSE loop and the metrics server share one
 * instance.
 *
 * Every call reads every counter afresh; what is kept between calls is what the
 * tags of an unchanged store come to: the tags themselves (scan_stores() with the
 * last scan) and, for the combined report, the row each tag adds to.
 */
#ifndef ALLOCINFOD_REPORT_H
#define ALLOCINFOD_REPORT_H

#include <sys/types.h>
#include <time.h>

#include <map>
#include <mutex>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "allocinfod_access.h"
#include "site_table.h"
#include "store_scan.h"
#include "symbolize.h"

namespace allocinfod {

class reports {
public:
	/* The kernel's text format over every live process. */
	void combined(std::string &out);
	/* One process's report; false when it has no live, readable store. */
	bool process(int pid, std::string &out);
	/* Whether pid has a live store, and the uid owning it (its file's owner). */
	bool process_owner(int pid, uid_t &uid);
	/* Prometheus text exposition, rows kept apart per pid: every process's for a
	 * viewer who could read the combined file (the daemon's, with this mode), else
	 * those of the processes whose own file the viewer could read. */
	void metrics(std::string &out, const viewer &v, mode_t mode);
	/* One line per unreadable store: "<path>: <why>". */
	void problems(std::string &out);
	/* The pids with a live store, ascending. */
	void pids(std::vector<int> &out);

private:
	/* Rescans the store directory into current_ (with mu_ held). */
	void scan();
	/* Adds a store to a table within the naming budget; a store that spent it is
	 * named in naming_problems_ (with mu_ held). */
	void add_store(allocinfo::site_table &table, const allocinfo::store_entry &e,
		       const std::string &comm, std::vector<uint32_t> *rows = nullptr);

	std::mutex mu_;			/* protects everything below; serialises scans */
	allocinfo::symbolizer sym_;
	std::set<std::string> logged_;	/* problems already logged and still present */
	/* Stores whose caller tags the last reports could not all name in time, by
	 * path: listed in the problems file until a report names them all. */
	std::map<std::string, std::string> naming_problems_;
	time_t sym_age_ = 0;
	/* The last scan: the next one reuses the tags of its stores that did not change. */
	allocinfo::scan_result current_;
	/* The combined report's table, kept from one read to the next, and for each
	 * process the row of each of its tags, good while its tags_id stays. */
	struct memo {
		uint64_t tags_id = 0;
		std::vector<uint32_t> rows;
	};
	allocinfo::site_table combined_{&sym_, false};
	std::unordered_map<int, memo> memos_;
};

} /* namespace allocinfod */

#endif
