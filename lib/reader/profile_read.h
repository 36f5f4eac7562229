/* SPDX-License-Identifier: MIT */
/*
 * profile_read.h - reads a gzipped pprof profile (perftools.profiles.Profile) back,
 * for `allocinfo --pprof OUT --profile FILE`. The file is hostile input: every
 * length and index is checked, the inflated size is bounded, and anything malformed
 * gives false and a reason, never a crash.
 */
#ifndef ALLOCINFO_PROFILE_READ_H
#define ALLOCINFO_PROFILE_READ_H

#include <stdint.h>

#include <string>
#include <vector>

namespace allocinfo {

struct pprof_label {
	int64_t key = 0, str = 0, num = 0, num_unit = 0;	/* string table indexes */
};

struct pprof_sample {
	std::vector<uint64_t> location_ids;
	std::vector<int64_t> values;
	std::vector<pprof_label> labels;
};

struct pprof_mapping {
	uint64_t id = 0, memory_start = 0, memory_limit = 0, file_offset = 0;
	int64_t filename = 0, build_id = 0;
	bool has_functions = false, has_filenames = false, has_line_numbers = false,
	     has_inline_frames = false;
};

struct pprof_line {
	uint64_t function_id = 0;
	int64_t line = 0;
};

struct pprof_location {
	uint64_t id = 0, mapping_id = 0, address = 0;
	std::vector<pprof_line> lines;
	bool is_folded = false;
};

struct pprof_function {
	uint64_t id = 0;
	int64_t name = 0, system_name = 0, filename = 0, start_line = 0;
};

struct pprof_profile {
	std::vector<std::pair<int64_t, int64_t>> sample_types;	/* (type, unit) */
	std::vector<pprof_sample> samples;
	std::vector<pprof_mapping> mappings;
	std::vector<pprof_location> locations;
	std::vector<pprof_function> functions;
	std::vector<std::string> strings;
	int64_t time_nanos = 0, duration_nanos = 0, period = 0;
	std::pair<int64_t, int64_t> period_type{ 0, 0 };
	int64_t default_sample_type = 0;
};

/* Inflates gz (gzip, or a bare protobuf when it does not start with gzip's magic)
 * and decodes it into p; false with *why set on malformed input or when it would
 * inflate to more than max_bytes. */
bool read_pprof(const std::string &gz, pprof_profile &p, std::string &why,
		size_t max_bytes = 512u << 20);

} /* namespace allocinfo */

#endif
