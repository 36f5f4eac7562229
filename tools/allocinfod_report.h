/* SPDX-License-Identifier: MIT */
/*
 * What allocinfod serves, generated from the stores on every call: the combined
 * report (all live processes, equal lines summed), one process's report, the
 * Prometheus exposition (one series per process and site), and the list of stores
 * that could not be read. Every call but those about one pid rescans the store
 * directory, removes the stores (and BPF pins) of dead processes, and logs each
 * bad store once. Thread-safe: the FUSE loop and the metrics server share one
 * instance.
 */
#ifndef ALLOCINFOD_REPORT_H
#define ALLOCINFOD_REPORT_H

#include <sys/types.h>
#include <time.h>

#include <mutex>
#include <set>
#include <string>
#include <vector>

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
	/* Prometheus text exposition, rows kept apart per pid. */
	void metrics(std::string &out);
	/* One line per unreadable store: "<path>: <why>". */
	void problems(std::string &out);
	/* The pids with a live store, ascending. */
	void pids(std::vector<int> &out);

private:
	void scan(allocinfo::scan_result &res);	/* with mu_ held */

	std::mutex mu_;			/* protects logged_, sym_age_; serialises scans */
	allocinfo::symbolizer sym_;
	std::set<std::string> logged_;	/* problems already logged and still present */
	time_t sym_age_ = 0;
};

} /* namespace allocinfod */

#endif
