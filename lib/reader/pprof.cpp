/* SPDX-License-Identifier: MIT */
/*
 * pprof.cpp - renders per-call-site rows as a gzip-compressed pprof profile
 * (perftools.profiles.Profile, see google/pprof proto/profile.proto), encoded by
 * hand: every message is built in its own buffer and written length-delimited.
 * Readable by `go tool pprof` and `pprof`.
 */
#include "report.h"
#include "proto_write.h"

#include <stdint.h>
#include <string.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace allocinfo {

namespace {

using namespace proto;

/* Mapping k (1-based) owns the synthetic range [k << 40, (k + 1) << 40); location i
 * sits at 16 * i inside its mapping's range, so addresses are distinct. */
const unsigned MAPPING_SHIFT = 40;

} /* namespace */

bool render_pprof(std::string &out, const std::vector<site_row> &rows, int64_t time_nanos)
{
	string_table st;
	std::string prof, samples, mappings, locations, functions;
	std::unordered_map<std::string, uint64_t> mapping_of;

	put_msg(prof, PROFILE_SAMPLE_TYPE, value_type(st, "inuse_objects", "count"));
	put_msg(prof, PROFILE_SAMPLE_TYPE, value_type(st, "inuse_space", "bytes"));

	const int64_t k_module = st.id("module");

	for (size_t i = 0; i < rows.size(); i++) {
		const site_row &r = rows[i];
		const uint64_t id = i + 1;	/* of this row's Function, Location */
		uint64_t map_id = 0;

		if (!r.module.empty()) {
			auto it = mapping_of.find(r.module);

			if (it != mapping_of.end()) {
				map_id = it->second;
			} else {
				std::string m;

				map_id = mapping_of.size() + 1;
				mapping_of.emplace(r.module, map_id);
				put_int(m, MAPPING_ID, map_id);
				put_int(m, MAPPING_MEMORY_START, map_id << MAPPING_SHIFT);
				put_int(m, MAPPING_MEMORY_LIMIT, (map_id + 1) << MAPPING_SHIFT);
				put_int(m, MAPPING_FILENAME, (uint64_t)st.id(r.module));
				/* Already symbolized: pprof must not look for the binary. */
				put_int(m, MAPPING_HAS_FUNCTIONS, 1);
				put_int(m, MAPPING_HAS_FILENAMES, 1);
				put_int(m, MAPPING_HAS_LINE_NUMBERS, 1);
				put_msg(mappings, PROFILE_MAPPING, m);
			}
		}

		std::string fn;

		put_int(fn, FUNCTION_ID, id);
		put_int(fn, FUNCTION_NAME, (uint64_t)st.id(r.func));
		put_int(fn, FUNCTION_SYSTEM_NAME,
			(uint64_t)st.id(r.full_func.empty() ? r.func : r.full_func));
		put_int(fn, FUNCTION_FILENAME, (uint64_t)st.id(r.file));
		put_msg(functions, PROFILE_FUNCTION, fn);

		std::string line, loc;

		put_int(line, LINE_FUNCTION_ID, id);
		put_int(line, LINE_LINE, r.line);
		put_int(loc, LOCATION_ID, id);
		put_int(loc, LOCATION_MAPPING_ID, map_id);
		put_int(loc, LOCATION_ADDRESS, (map_id << MAPPING_SHIFT) + 16 * id);
		put_msg(loc, LOCATION_LINE, line);
		put_msg(locations, PROFILE_LOCATION, loc);

		std::string s, label;
		const uint64_t values[2] = { (uint64_t)clamp0(r.calls), (uint64_t)clamp0(r.bytes) };

		put_packed(s, SAMPLE_LOCATION_ID, &id, 1);
		put_packed(s, SAMPLE_VALUE, values, 2);
		put_int(label, LABEL_KEY, (uint64_t)k_module);
		put_int(label, LABEL_STR, (uint64_t)st.id(r.module));
		put_msg(s, SAMPLE_LABEL, label);
		if (r.pid) {
			label.clear();
			put_int(label, LABEL_KEY, (uint64_t)st.id("pid"));
			put_int(label, LABEL_NUM, (uint64_t)(int64_t)r.pid);
			put_msg(s, SAMPLE_LABEL, label);
		}
		if (!r.via.empty()) {
			label.clear();
			put_int(label, LABEL_KEY, (uint64_t)st.id("via"));
			put_int(label, LABEL_STR, (uint64_t)st.id(r.via));
			put_msg(s, SAMPLE_LABEL, label);
		}
		if (!r.allocator.empty()) {
			label.clear();
			put_int(label, LABEL_KEY, (uint64_t)st.id("allocator"));
			put_int(label, LABEL_STR, (uint64_t)st.id(r.allocator));
			put_msg(s, SAMPLE_LABEL, label);
		}
		if (r.unloaded) {
			label.clear();
			put_int(label, LABEL_KEY, (uint64_t)st.id("unloaded"));
			put_int(label, LABEL_STR, (uint64_t)st.id("yes"));
			put_msg(s, SAMPLE_LABEL, label);
		}
		if (!r.user.empty()) {
			label.clear();
			put_int(label, LABEL_KEY, (uint64_t)st.id("user"));
			put_int(label, LABEL_STR, (uint64_t)st.id(r.user));
			put_msg(s, SAMPLE_LABEL, label);
		}
		put_msg(samples, PROFILE_SAMPLE, s);
	}

	prof += samples;
	prof += mappings;
	prof += locations;
	prof += functions;
	const std::string period_type = value_type(st, "space", "bytes");
	const int64_t default_type = st.id("inuse_space");

	st.write(prof);
	put_int(prof, PROFILE_TIME_NANOS, (uint64_t)time_nanos);
	put_msg(prof, PROFILE_PERIOD_TYPE, period_type);
	put_int(prof, PROFILE_PERIOD, 1);
	put_int(prof, PROFILE_DEFAULT_SAMPLE_TYPE, (uint64_t)default_type);

	return gzip(out, prof);
}

} /* namespace allocinfo */
