// SPDX-License-Identifier: MIT
/*
 * Fuzz target for the store parser and the renderers: bytes -> read_store ->
 * snapshot_rows -> merge_rows -> every text renderer. Besides not crashing, the
 * output must keep its shape whatever the store holds: the text report has its two
 * header lines and one line per row, the Prometheus text two lines per row plus its
 * four comments (a hostile name must never add a line or a token). The site table,
 * which the tools use instead of merge_rows(), must give exactly its rows. No tag
 * may be below zero once read, and naming the store's caller tags as another
 * user's, through a real symbolizer, must keep every line's shape (the objects
 * named are opened only when regular files, without blocking).
 *
 * Built with libFuzzer by `make fuzz`; replayed over the corpus without libFuzzer by
 * fuzz_replay in `make check`.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <algorithm>
#include <string>
#include <vector>

#include "report.h"
#include "site_table.h"
#include "store_owner.h"
#include "store_reader.h"
#include "symbolize.h"

using namespace allocinfo;

namespace {

size_t lines(const std::string &s)
{
	return (size_t)std::count(s.begin(), s.end(), '\n');
}

void check(bool ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_store: %s\n", what);
		abort();
	}
}

/* Every row of the text report: "%12lli %8llu " then tokens without spaces inside. */
void check_text(const std::string &text, size_t rows)
{
	check(lines(text) == rows + 2, "text report: not one line per row");
	check(text.compare(0, 25, "allocinfo - version: 2.0\n") == 0, "text report: header");
	size_t pos = text.find('\n', 25) + 1;
	while (pos < text.size()) {
		size_t end = text.find('\n', pos);
		check(end != std::string::npos && end > pos, "text report: empty row");
		std::string row = text.substr(pos, end - pos);
		check(row.find('-') > 21 || row.size() < 22, "text report: negative count");
		check(row.back() == ' ', "text report: row without its trailing space");
		for (char c : row)
			check((unsigned char)c >= ' ' && c != 0x7f, "text report: control byte");
		pos = end + 1;
	}
}

bool same_rows(const std::vector<site_row> &a, const std::vector<site_row> &b)
{
	if (a.size() != b.size())
		return false;
	for (size_t i = 0; i < a.size(); i++)
		if (a[i].module != b[i].module || a[i].file != b[i].file || a[i].line != b[i].line ||
		    a[i].func != b[i].func || a[i].bytes != b[i].bytes || a[i].calls != b[i].calls ||
		    a[i].unloaded != b[i].unloaded || a[i].inaccurate != b[i].inaccurate ||
		    a[i].pid != b[i].pid || a[i].comm != b[i].comm)
			return false;
	return true;
}

} /* namespace */

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	memory_source src(data, size);
	store_snapshot snap;
	std::string why;
	if (!read_store(src, snap, why)) {
		check(!why.empty() && why.find('\n') == std::string::npos, "reason not one line");
		return 0;
	}

	/* No tag is below zero once read: a store cannot lower other stores' lines. */
	for (const tag_snapshot &t : snap.tags)
		check(t.bytes >= 0 && t.calls >= 0, "negative tag after read_store");

	std::vector<site_row> rows;
	snapshot_rows(snap, nullptr, rows);
	std::vector<site_row> merged = merge_rows(rows, false);
	std::vector<site_row> per_pid = merge_rows(rows, true);
	check(merged.size() <= rows.size() && per_pid.size() <= rows.size(), "merge grew");
	site_table table(nullptr, false), table_pid(nullptr, true);
	table.add(snap);
	table_pid.add(snap);
	check(same_rows(table.rows(), merged), "site table: not the rows of merge_rows");
	check(same_rows(table_pid.rows(), per_pid), "site table: not the rows of merge_rows (pid)");

	std::string text, human, json, prom;
	render_text(text, merged);
	check_text(text, merged.size());
	render_text(human, merged, true);
	check(lines(human) == merged.size() + 2, "human report: not one line per row");
	render_json(json, per_pid);
	check(!json.empty() && json.back() == '\n', "json: unterminated");
	render_prometheus(prom, per_pid);
	check(lines(prom) == 4 + 2 * per_pid.size(), "prometheus: not two lines per row");

	/* Named through a symbolizer, as another user's store, within a budget: the
	 * objects the store names are opened (never a FIFO or a device), each line
	 * keeps its shape and carries the user. */
	static symbolizer sym;
	snap.owner = make_store_owner(65534, std::vector<gid_t>(1, 65534));
	site_table named(&sym, false);
	named.set_naming_budget(NAMING_BUDGET_MS);
	named.add(snap);
	std::vector<site_row> named_rows = named.rows();
	std::string named_text;
	render_text(named_text, named_rows);
	check_text(named_text, named_rows.size());
	for (const site_row &r : named_rows)
		check(r.user == snap.owner.user && !r.user.empty(), "another user's row without its user");

	sort_rows(per_pid, sort_key::bytes);
	sort_rows(per_pid, sort_key::calls);
	sort_rows(per_pid, sort_key::site);
	return 0;
}
