/* SPDX-License-Identifier: MIT */
/*
 * allocinfo --save / --diff: a snapshot of report rows in a small versioned text
 * file, and the growth of each call site since a snapshot.
 *
 * The file (version 1), one record per line, fields separated by one tab:
 *
 *   allocinfo-snapshot	1
 *   # any line starting with '#' is a comment
 *   pid	<the -p PID it was saved for, 0 for all processes>
 *   time	<seconds since the epoch>
 *   site	<bytes>	<calls>	<module>	<file>	<line>	<func>	<unloaded: 0 or 1>[	<user>]
 *   ...
 *   end	<number of site lines>
 *
 * In the string fields a backslash, tab, newline and other control bytes are
 * written as \\, \t, \n and \xHH. The user field is there only for the sites of
 * processes of users other than root (the report's " user:NAME"). The end line
 * guards against truncation. Readers refuse other versions and unknown record
 * types.
 */
#ifndef ALLOCINFO_TOOLS_SNAPSHOT_H
#define ALLOCINFO_TOOLS_SNAPSHOT_H

#include <stdint.h>

#include <string>
#include <vector>

#include "report.h"

namespace allocinfo {

struct snapshot_file {
	int pid = 0;			/* scope it was saved for; 0 = all processes */
	int64_t time = 0;
	std::vector<site_row> rows;	/* pid 0, comm empty */
};

constexpr unsigned SNAPSHOT_VERSION = 1;

/* The file's text for rows (already merged). */
std::string format_snapshot(const snapshot_file &s);

/* Parses a snapshot file's text; on failure returns false with a reason (which
 * names the line). */
bool parse_snapshot(const std::string &text, snapshot_file &out, std::string &why);

/*
 * Sites whose bytes or calls changed between `then` and `now` (both merged the same
 * way), with deltas. Sorted by `key`: bytes or calls growth descending (signed: the
 * largest growth first, shrinking sites last), ties and `site` by site order.
 */
std::vector<site_row> diff_rows(const std::vector<site_row> &then,
				const std::vector<site_row> &now, sort_key key);

/* The report format with signed values: "%12lli %8lli " then the tag info, as
 * render_text() does; human prints the size as render_text(human) does, with a
 * '-' in front of a shrink. */
void render_diff(std::string &out, const std::vector<site_row> &rows, bool human);

} /* namespace allocinfo */

#endif
