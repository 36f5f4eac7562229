/* SPDX-License-Identifier: MIT */
/*
 * report.h - turning per-call-site rows into reports: the kernel's /proc/allocinfo
 * text (version 2.0), JSON, the Prometheus text exposition format and pprof.
 *
 * Used by the tools and inside the profiled process, so nothing here throws or uses
 * iostreams. Every renderer appends to `out`; none of them reads the store.
 *
 * Negative sums: a reader that adds up counter shards while they change can see,
 * for a moment, more frees than allocations. read_store() counts such a tag as 0,
 * so that no store lowers the rows it shares with others; rows made by hand may
 * still be negative: merge_rows() keeps the raw sums, every renderer prints a
 * negative value as 0 (see clamp0()), and sort_rows() orders by the value as
 * printed.
 *
 * Users: rows of different users (site_row::user, "" for root) are never merged;
 * every renderer shows the user of a row that has one (text " user:NAME", JSON
 * "user", a Prometheus and a pprof label "user").
 */
#ifndef ALLOCINFO_REPORT_H
#define ALLOCINFO_REPORT_H

#include <stdint.h>
#include <string>
#include <vector>

namespace allocinfo {

struct site_row {
	std::string module;	/* basename of the ELF object, e.g. "demo" or "libfoo.so" */
	std::string file;	/* source file as tagged, e.g. "tests/demo.c"; "??" unknown */
	unsigned line = 0;
	std::string func;	/* one word */
	std::string full_func;	/* C++ from debug info: the full name (cxxname.h) when
				 * it differs from func, else empty; JSON only */
	std::string via;	/* token " via:NAME": the declared wrapper passed through */
	std::string allocator;	/* token " allocator:NAME": the program's own allocator */
	int64_t bytes = 0;	/* live bytes (sum over CPUs), may be 0 or transiently < 0 */
	int64_t calls = 0;	/* live allocations */
	bool unloaded = false;	/* its object was dlclose'd: token " unloaded:yes" */
	bool inaccurate = false;/* token " accurate:no" */
	std::string user;	/* the user of its processes, "" for root: " user:NAME" */
	int pid = 0;		/* 0 when rows of several processes were summed */
	std::string comm;	/* process name (prometheus/json labels), may be empty */
};

/* A counter as every renderer prints it: negative sums become 0. */
inline int64_t clamp0(int64_t v) { return v < 0 ? 0 : v; }

/*
 * Sums rows whose (module, file, line, func, via, allocator, unloaded, user) are equal,
 * and with keep_pid whose pid is equal too. The result is sorted by (module, file, line,
 * func, via, allocator), then loaded before unloaded, then by user (root's first), then
 * by pid. Sums saturate instead of overflowing.
 * A merged row is inaccurate if any of its parts was. With keep_pid it keeps its pid
 * and the first non-empty comm; without, pid is 0 and comm is empty.
 */
std::vector<site_row> merge_rows(const std::vector<site_row> &rows, bool keep_pid);

enum class sort_key { site, bytes, calls };
/* site: as merge_rows(). bytes/calls: descending by the clamped value, ties by site.
 * Stable, so rows equal in every key keep their order. */
void sort_rows(std::vector<site_row> &rows, sort_key key);

/*
 * The kernel's /proc/allocinfo text, version 2.0 (indented by three here; the row's
 * trailing space not shown):
 *
 *   allocinfo - version: 2.0
 *   #     <size>  <calls> <tag info>
 *           4096        1 tests/demo.c:12 [demo] func:main
 *
 * Each row is "%12lli %8llu " (bytes, calls), then "file:line [module] func:NAME"
 * (" [module]" left out when module is empty, as the kernel does for built-in code),
 * then " via:NAME", " allocator:NAME", " unloaded:yes", " accurate:no" and
 * " user:NAME" when they apply, then " \n": like the kernel, every row ends with one
 * space before its newline. Control bytes in the strings are printed as '?' so that a
 * hostile name cannot forge a row.
 *
 * human=true prints the size as a single whitespace-free token "<number><unit>",
 * right-aligned in the same 12 columns: "512B" below 1 KiB, else the value with two
 * decimals in the largest binary unit that keeps it below 1024, rounded half up
 * ("4.00KiB", "1.50MiB", "8.00EiB"). Units: B KiB MiB GiB TiB PiB EiB. The number
 * never depends on the locale.
 */
void render_text(std::string &out, const std::vector<site_row> &rows, bool human = false);

/* Formats a byte count as render_text(human=true) does, without padding. */
std::string human_size(int64_t bytes);

/*
 * JSON, one site per line:
 *   {"version":"2.0","pid":42,"sites":[
 *   {"module":"demo","file":"tests/demo.c","line":12,"func":"main","bytes":4096,
 *    "calls":1,"unloaded":false,"accurate":true,"pid":42,"comm":"demo"}
 *   ]}
 * A site whose full_func is set has "full_func" right after "func"; "via" and
 * "allocator" are there only when the row has them. counting 0 or 1 (the report of
 * one process: whether it counts now, its run-time switch) adds "counting":false|true
 * after the top-level pid; -1 leaves it out.
 * The top-level "pid" is there only when every row has the same nonzero pid; a
 * site's "pid" only when nonzero, its "comm" only when non-empty. Strings: '"' and
 * '\\' escaped, bytes below 0x20 as \u00XX, valid UTF-8 passed through, each maximal
 * invalid subsequence replaced by \ufffd (Unicode's "best practice").
 */
void render_json(std::string &out, const std::vector<site_row> &rows, int counting = -1);

/*
 * Prometheus text exposition format 0.0.4: the gauges allocinfo_live_bytes and
 * allocinfo_live_allocations with labels module, file, line, func, then
 * unloaded="yes" for an unloaded row (so that it stays a distinct series), pid
 * when nonzero and comm when non-empty. Label values: '\\', '"' and newline
 * escaped, invalid UTF-8 replaced by U+FFFD.
 */
void render_prometheus(std::string &out, const std::vector<site_row> &rows);

/*
 * pprof: a gzip-compressed perftools.profiles.Profile. Sample types
 * inuse_objects/count and inuse_space/bytes (default inuse_space), period_type
 * space/bytes with period 1, time_nanos as given. One Function (name func,
 * system_name full_func when set, else func), Location and Sample
 * per row (the sample's values are {calls, bytes}, its labels "module", and "pid"
 * when nonzero, "via" and "allocator" when the row has them, and "unloaded"="yes"
 * when so), one Mapping per distinct module
 * (filename = module, marked as already symbolized; a row with an empty module has
 * none). Appends to `out` like the others; returns false when zlib fails, leaving
 * `out` as it was. Implemented in pprof.cpp.
 */
bool render_pprof(std::string &out, const std::vector<site_row> &rows, int64_t time_nanos);

struct pprof_profile;
/*
 * A sampled heap profile (the built-in profiler's, or any pprof profile read with
 * read_pprof()) and allocinfo's exact totals side by side: p's sample types (any
 * named exact_* left out, and p's samples that had only those), its samples,
 * mappings, locations and functions as they are, then exact_inuse_objects/count and
 * exact_inuse_space/bytes with one sample per row at a location of its own (function
 * func in file, line line), labelled site=FILE:LINE, module and pid as render_pprof.
 * Period, period type and default sample type are p's. Implemented in pprof.cpp.
 */
bool render_pprof_merged(std::string &out, const pprof_profile &p,
			 const std::vector<site_row> &rows, int64_t time_nanos);

} /* namespace allocinfo */

#endif /* ALLOCINFO_REPORT_H */
