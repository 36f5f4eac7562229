/* SPDX-License-Identifier: MIT */
/*
 * Summing the tags of store snapshots into report rows: the rows that merge_rows() of
 * their snapshot_rows() would give, at a fraction of the cost. Processes of one
 * program repeat the same thousands of tags, and a process repeats a few file and
 * function names over many tags, so a tag is reduced to integers: its names are
 * interned by content and each is made printable once, caller tags are named once
 * per distinct address (name_tag(), through the symbolizer), and only the merged
 * rows are sorted and turned into site_rows.
 *
 * Exactly as merge_rows(rows, keep_pid) of the rows snapshot_rows() gives for each
 * snapshot added, in order: the same rows, sums, order and comm; sums are added in
 * the same order, so they saturate alike. A table serves one report, or one report
 * after another (clear_sums()). Not thread-safe.
 */
#ifndef ALLOCINFO_SITE_TABLE_H
#define ALLOCINFO_SITE_TABLE_H

#include <stdint.h>

#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "report.h"
#include "store_reader.h"

namespace allocinfo {

class symbolizer;

/* What naming one store's caller tags may cost a reader (site_table's budget): CPU
 * time of the reading thread, or ten times as much wall time. The default; a reader
 * takes naming_budget_ms(). */
constexpr uint64_t NAMING_BUDGET_MS = 2000;

/* The budget in force: ALLOCINFO_NAMING_BUDGET_MS (1 to 3,600,000), else the
 * default; a malformed value gets one "allocinfo:" line, once. */
uint64_t naming_budget_ms();

/* The problem line's reason for a store whose naming ran out of time. */
std::string naming_budget_reason(size_t unnamed);

class site_table {
public:
	/* sym names caller tags (may be null: "??:0 ... func:0xADDR"). keep_pid: rows
	 * of different processes stay apart, with their pid and comm. */
	site_table(symbolizer *sym, bool keep_pid);
	/* Movable, not copyable: the name index points into the names. */
	site_table(site_table &&) = default;
	site_table &operator=(site_table &&) = default;
	site_table(const site_table &) = delete;
	site_table &operator=(const site_table &) = delete;

	/*
	 * Adds the rows of one snapshot; comm is the comm of its rows (keep_pid).
	 *
	 * memo, when given, remembers the row of each tag, so that a later snapshot with
	 * the same tags (the same store, read again with its tags taken over: see
	 * read_store()) is added without naming anything. It belongs to this table and
	 * to those tags: pass an empty one for other tags.
	 */
	void add(const store_snapshot &s, const std::string &comm = std::string(),
		 std::vector<uint32_t> *memo = nullptr);

	/*
	 * A time budget for naming the caller tags of one snapshot (one store), in CPU
	 * time of the calling thread (or ten times as much wall time, for time spent
	 * waiting): once add() has spent it, the snapshot's remaining caller tags get
	 * the unnamed form
	 * ("??:0 ... func:0xADDR") and are not remembered, so that a later add() names
	 * them (the symbolizer keeps what it found). 0, the default, is no budget.
	 */
	void set_naming_budget(uint64_t ms) { budget_ns_ = ms * 1000000; }
	/* The caller tags that the last add() left unnamed for want of time. */
	size_t unnamed_for_time() const { return unnamed_; }

	/* The rows added since the table was made or clear_sums() called, merged and
	 * sorted as merge_rows() returns them. */
	std::vector<site_row> rows() const;

	/*
	 * Starts the next report with the same table: rows lose their sums but keep
	 * their names, so that the memos stay good. Names are not shared between
	 * reports otherwise: a store without a memo is named afresh (through the
	 * symbolizer, which notices a rebuilt object).
	 */
	void clear_sums();

	/* Rows known (named) and rows in the current report: a table kept across
	 * reports grows with every site it has seen, and is best replaced when the
	 * first outgrows the second. */
	size_t rows_known() const { return rows_.size(); }
	size_t rows_reported() const { return reported_.size(); }

private:
	/* A caller tag as integers: what decides its printed name (name_tag()). */
	struct raw_key {
		uint32_t unloaded;
		uint32_t module;	/* interned path */
		uint32_t via, allocator;	/* interned tokens */
		uint64_t addr;
		uint32_t owner;		/* interned store_owner::key: who may read what */
		int pid;		/* keep_pid, else 0 */
		bool operator==(const raw_key &o) const;
	};
	/* A row: its printed names interned. */
	struct row_key {
		uint32_t module, file, func, line;
		uint32_t via, allocator;	/* printed tokens, 0 for none */
		bool unloaded;
		uint32_t user;		/* interned user name, 0 for root */
		int pid;
		bool operator==(const row_key &o) const;
	};
	struct key_hash {
		size_t operator()(const raw_key &k) const;
		size_t operator()(const row_key &k) const;
	};
	struct row {
		row_key key;
		uint32_t full;		/* interned full_func of the first tag named so */
		uint64_t report;	/* the report its sums belong to */
		int64_t bytes, calls;
		std::string comm;
	};
	static constexpr uint32_t NONE = UINT32_MAX;	/* no row, or no name, yet */

	uint32_t intern(std::string_view s);
	uint32_t name_at(std::string_view s, unsigned field);
	enum class as { module, file, word };
	uint32_t printed(uint32_t name, as what);
	/* The interned cxx_function_name() of an interned __PRETTY_FUNCTION__. */
	uint32_t cxx_named(uint32_t name);
	uint32_t row_for(const row_key &k);
	uint32_t row_of(const tag_snapshot &t, int pid, bool *keep);
	bool out_of_time();

	symbolizer *sym_;
	bool keep_pid_;
	std::deque<std::string> names_;	/* interned names; never move */
	std::unordered_map<std::string_view, uint32_t> name_ids_;
	/* The names of the snapshot being added by their address in its strings: few,
	 * and repeated; each of a tag's five names also remembers the last one. */
	std::unordered_map<const char *, uint32_t> by_address_;
	struct last_name {
		const char *p = nullptr;
		uint32_t id = 0;
	} last_[5];
	/* A name as printed for a module, a file, and a function; a C++ function's
	 * tidied name. */
	std::vector<uint32_t> as_module_, as_file_, as_word_, as_cxx_;
	/* Caller tags, named through the symbolizer: their rows by raw key. */
	std::unordered_map<raw_key, uint32_t, key_hash> raw_rows_;
	std::unordered_map<row_key, uint32_t, key_hash> row_ids_;
	std::vector<row> rows_;
	uint64_t report_ = 1;
	/* The snapshot being added: its owner, and the interned user and key. */
	const store_owner *owner_ = nullptr;
	uint32_t user_ = 0, owner_key_ = 0;
	uint64_t budget_ns_ = 0;
	uint64_t deadline_ns_ = 0;	/* of the add() under way, in thread CPU time; 0: none */
	uint64_t wall_deadline_ns_ = 0;
	size_t unnamed_ = 0;
	std::vector<uint32_t> reported_;	/* rows of the current report */
};

} /* namespace allocinfo */

#endif /* ALLOCINFO_SITE_TABLE_H */
