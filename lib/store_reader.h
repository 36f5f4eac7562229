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
#include <vector>

#include "report.h"
#include "store_format.h"

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

struct tag_snapshot {
	uint32_t slot = 0;
	uint32_t flags = 0;
	uint32_t line = 0;
	uint64_t addr = 0;
	std::string file, func, module_path;
	int64_t bytes = 0, calls = 0;
};

struct store_snapshot {
	int pid = 0;
	uint64_t start_time = 0;
	uint32_t nr_cpus = 0;
	uint32_t state = 0;
	uint32_t enabled = 0;
	uint32_t backend = 0;
	std::string exe;
	std::vector<tag_snapshot> tags;
};

/* Limits past which a store is refused as implausible. */
constexpr uint32_t READER_MAX_CPUS = 4097;	/* counter shards */
constexpr uint32_t READER_MAX_TAGS = 1u << 20;
constexpr uint64_t READER_MAX_STRINGS = 64ull << 20;
constexpr size_t READER_MAX_STRING = 4096;

/* Reads and validates a store. On failure returns false and says why in one line. */
bool read_store(const store_source &src, store_snapshot &out, std::string &why);

/* The name of one tag as every report shows it (module, file, line, func; one
 * word each): what snapshot_rows() puts in a row, and the BPF store in its tags map. */
void name_tag(const tag_snapshot &t, symbolizer *sym, site_row &r);

/* Report rows for a snapshot. Caller tags are named through sym (file:line from
 * debug info) when it is given, else shown as "??:0 ... func:0xADDR". */
void snapshot_rows(const store_snapshot &s, symbolizer *sym, std::vector<site_row> &rows);

} /* namespace allocinfo */

#endif
