/* SPDX-License-Identifier: MIT */
/*
 * The reader's side of a store: one parser for every reader (the process itself,
 * allocinfo, allocinfod). A store is written by another process, so it is hostile
 * input: every offset and size is checked against the source before use, no pointer
 * found in it is followed, and it is read by copying (never mapped), so a store that
 * shrinks underneath a reader cannot fault it.
 */
#ifndef ALLOCINFO_STORE_READER_H
#define ALLOCINFO_STORE_READER_H

#include <stdint.h>

#include <string>
#include <string_view>
#include <vector>

#include "report.h"
#include "store_format.h"
#include "store_owner.h"

namespace allocinfo {

class symbolizer;

/* Where a store's bytes come from. */
class store_source {
public:
	virtual ~store_source() = default;
	virtual uint64_t size() const = 0;
	/* Copies len bytes at off; false if they are not all there. */
	virtual bool read(uint64_t off, void *buf, size_t len) const = 0;
};

class memory_source final : public store_source {
public:
	memory_source(const void *base, uint64_t size) : base_(base), size_(size) {}
	uint64_t size() const override { return size_; }
	bool read(uint64_t off, void *buf, size_t len) const override;
private:
	const void *base_;
	uint64_t size_;
};

class file_source final : public store_source {
public:
	explicit file_source(int fd);	/* does not take ownership */
	uint64_t size() const override { return size_; }
	bool read(uint64_t off, void *buf, size_t len) const override;
private:
	int fd_;
	uint64_t size_ = 0;
};

/* One tag. Its names are views: into the strings of the store_snapshot that holds
 * it, or, for a tag filled by hand, into strings that outlive it. Names never
 * contain a NUL. */
struct tag_snapshot {
	uint32_t slot = 0;
	uint32_t flags = 0;
	uint32_t line = 0;
	uint64_t addr = 0;
	std::string_view file, func, module_path;
	std::string_view via, allocator;	/* tokens, empty when none */
	int64_t bytes = 0, calls = 0;
};

/*
 * A store as read. The tags' names point into `strings`, a copy of the store's
 * strings area: a vector's buffer goes with it when it is moved, so a snapshot can be
 * moved but not copied (a copy's tags would point into the original).
 */
struct store_snapshot {
	int pid = 0;
	uint64_t start_time = 0;
	uint32_t nr_cpus = 0;
	uint32_t state = 0;
	uint32_t enabled = 0;
	uint32_t backend = 0;
	std::string exe;
	std::vector<tag_snapshot> tags;
	std::vector<char> strings;
	/* Which reading of the store's tags these are: equal (and nonzero) in two
	 * snapshots only when the later took the earlier's tags over (read_store()). */
	uint64_t tags_id = 0;
	allocinfo_store_header header = {};	/* as read, before the tags */
	/* Tags whose bytes or calls summed below zero over the shards: counted as 0
	 * (a store may not lower another's figures; a reader racing the writer may
	 * also see a free before its allocation). */
	uint32_t negative_tags = 0;
	/* Who the store speaks for: not read from the store, set by whoever found it
	 * (store_scan.h); unknown (trusted as root) otherwise. */
	store_owner owner;

	store_snapshot() = default;
	store_snapshot(store_snapshot &&) = default;
	store_snapshot &operator=(store_snapshot &&) = default;
	store_snapshot(const store_snapshot &) = delete;
	store_snapshot &operator=(const store_snapshot &) = delete;
};

/*
 * What one store may cost a reader (Documentation/security.md): past these limits
 * a store is refused and named among the problems. The writers stay well inside
 * them (store.h: 65,536 tags, 16 MiB of strings, at most 4,096 shards). Reading a
 * store then copies at most 2 MiB of tags, 16 MiB of strings and 256 MiB of
 * counters, and keeps one tag_snapshot per tag; naming its caller tags costs at
 * most NAMING_BUDGET_MS (site_table.h).
 */
constexpr uint32_t READER_MAX_CPUS = 4097;	/* counter shards */
constexpr uint32_t READER_MAX_TAGS = 1u << 16;
constexpr uint64_t READER_MAX_STRINGS = 16ull << 20;
constexpr size_t READER_MAX_STRING = 4096;
/* The counters read: shards in use times tags, 16 bytes each. */
constexpr uint64_t READER_MAX_COUNTER_BYTES = 256ull << 20;

/* The problem line's reason for a store with negative_tags. */
std::string negative_tags_reason(uint32_t n);

/*
 * Reads and validates a store. On failure returns false and says why in one line.
 *
 * reuse, when given, is an earlier snapshot of the same store file (the caller
 * knows it is: same path, device and inode). When the store's header is as it was
 * then, but for the run-time switch, its tags and strings are taken over and only
 * the counters are read again: the writer bumps the header's generation whenever it
 * writes a tag slot, and appends strings and tags with the sizes in the header.
 * reuse is left empty either way. A store that rewrites its tags without saying
 * so is shown with its earlier names, which were checked when they were read.
 */
bool read_store(const store_source &src, store_snapshot &out, std::string &why,
		store_snapshot *reuse = nullptr);

/* The name of one tag as every report shows it (module, file, line, func; one
 * word each): what snapshot_rows() puts in a row, and the BPF store in its tags map.
 * A caller tag is named only from files that owner (when given) could read. */
void name_tag(const tag_snapshot &t, symbolizer *sym, site_row &r,
	      const store_owner *owner = nullptr);

/* Its parts: a module as its path's basename, and a file or function name, each
 * as one word (blanks and control bytes as '_'; "??" for none). */
std::string printed_module(std::string_view path);
std::string one_token(std::string_view s, const char *fallback);
std::string printed_word(std::string_view s);

/*
 * One path style for every file name of a report, static tags' (__FILE__) and
 * caller tags' (debug info, already made relative to the compilation directory by
 * the symbolizer) alike: ALLOCINFO_PREFIX_MAP's OLD=NEW entries (separated by
 * ':'; the last that matches, as with -ffile-prefix-map) replace a leading OLD,
 * then leading "./" go. printed_file() is that as one word.
 */
std::string report_path(std::string_view file);
std::string printed_file(std::string_view file);

/* name_tag() without debug info (tag_naming.cpp): caller tags as "??:0 func:0xADDR";
 * and the via and allocator tokens alone. */
void name_tag_unsymbolized(const tag_snapshot &t, site_row &r);
void name_tokens(const tag_snapshot &t, site_row &r);
/* Tag t of this process's own store (slot, its tokens e) as a snapshot, for the
 * modules that name it in-process: its names looked up in the strings area
 * [strings, strings + used), each ended by a NUL inside it (none, or an offset
 * outside, is an empty name). */
tag_snapshot live_tag_snapshot(uint32_t slot, const allocinfo_store_tag &t,
			       const allocinfo_store_tag_ext &e, const char *strings,
			       uint64_t used);
/* A name into a fixed field of the modules' tables (size > 0), cut to fit, the rest
 * zeroed. */
void copy_fixed_field(char *dst, size_t size, const std::string &s);

/* Whether a tag has a row in the report: static tags always, caller and overflow
 * tags while they hold something, tags of unloaded objects until freed. */
bool tag_listed(const tag_snapshot &t);

/* Report rows for a snapshot. Caller tags are named through sym (file:line from
 * debug info) when it is given, else shown as "??:0 ... func:0xADDR". Rows carry
 * the user of the snapshot's owner. */
void snapshot_rows(const store_snapshot &s, symbolizer *sym, std::vector<site_row> &rows);

} /* namespace allocinfo */

#endif
