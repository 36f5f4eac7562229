/* SPDX-License-Identifier: MIT */
/*
 * pprof.cpp - renders per-call-site rows as a gzip-compressed pprof profile
 * (perftools.profiles.Profile, see google/pprof proto/profile.proto), encoded by
 * hand: every message is built in its own buffer and written length-delimited.
 * Readable by `go tool pprof` and `pprof`.
 */
#include "report.h"
#include "profile_read.h"
#include "proto_write.h"

#include <stdint.h>
#include <string.h>

#include <algorithm>
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

namespace allocinfo {

bool render_pprof_merged(std::string &out, const pprof_profile &p,
			 const std::vector<site_row> &rows, int64_t time_nanos)
{
	using namespace proto;
	string_table st;
	std::string prof, samples, mappings, locations, functions;
	auto s = [&](int64_t i) { return (uint64_t)st.id(p.strings[(size_t)i]); };

	/* The sampled profile's own types, its exact ones left out: they are replaced. */
	std::vector<size_t> kept;
	for (size_t i = 0; i < p.sample_types.size(); i++) {
		const std::string &name = p.strings[(size_t)p.sample_types[i].first];
		if (name.compare(0, 6, "exact_") == 0)
			continue;
		kept.push_back(i);
		std::string vt;
		put_int(vt, VALUETYPE_TYPE, s(p.sample_types[i].first));
		put_int(vt, VALUETYPE_UNIT, s(p.sample_types[i].second));
		put_msg(prof, PROFILE_SAMPLE_TYPE, vt);
	}
	put_msg(prof, PROFILE_SAMPLE_TYPE, value_type(st, "exact_inuse_objects", "count"));
	put_msg(prof, PROFILE_SAMPLE_TYPE, value_type(st, "exact_inuse_space", "bytes"));

	for (const pprof_sample &smp : p.samples) {
		std::vector<uint64_t> v;
		bool any = false, any_at_all = false;
		for (size_t i = 0; i < smp.values.size(); i++)
			any_at_all |= smp.values[i] != 0;
		for (size_t i : kept) {
			v.push_back((uint64_t)smp.values[i]);
			any |= smp.values[i] != 0;
		}
		if (!any && any_at_all)
			continue;	/* one of the profile's own exact samples */
		v.push_back(0);
		v.push_back(0);
		std::string m;
		put_packed(m, SAMPLE_LOCATION_ID, smp.location_ids.data(), smp.location_ids.size());
		put_packed(m, SAMPLE_VALUE, v.data(), v.size());
		for (const pprof_label &l : smp.labels) {
			std::string lm;
			put_int(lm, LABEL_KEY, s(l.key));
			put_int(lm, LABEL_STR, s(l.str));
			put_int(lm, LABEL_NUM, (uint64_t)l.num);
			put_int(lm, 4 /* num_unit */, s(l.num_unit));
			put_msg(m, SAMPLE_LABEL, lm);
		}
		put_msg(samples, PROFILE_SAMPLE, m);
	}

	for (const pprof_mapping &mp : p.mappings) {
		std::string m;
		put_int(m, MAPPING_ID, mp.id);
		put_int(m, MAPPING_MEMORY_START, mp.memory_start);
		put_int(m, MAPPING_MEMORY_LIMIT, mp.memory_limit);
		put_int(m, MAPPING_FILE_OFFSET, mp.file_offset);
		put_int(m, MAPPING_FILENAME, s(mp.filename));
		put_int(m, MAPPING_BUILD_ID, s(mp.build_id));
		put_int(m, MAPPING_HAS_FUNCTIONS, mp.has_functions);
		put_int(m, MAPPING_HAS_FILENAMES, mp.has_filenames);
		put_int(m, MAPPING_HAS_LINE_NUMBERS, mp.has_line_numbers);
		put_int(m, MAPPING_HAS_INLINE_FRAMES, mp.has_inline_frames);
		put_msg(mappings, PROFILE_MAPPING, m);
	}
	uint64_t max_location = 0, max_function = 0;
	for (const pprof_location &l : p.locations) {
		std::string m;
		put_int(m, LOCATION_ID, l.id);
		put_int(m, LOCATION_MAPPING_ID, l.mapping_id);
		put_int(m, LOCATION_ADDRESS, l.address);
		for (const pprof_line &ln : l.lines) {
			std::string lm;
			put_int(lm, LINE_FUNCTION_ID, ln.function_id);
			put_int(lm, LINE_LINE, (uint64_t)ln.line);
			put_msg(m, LOCATION_LINE, lm);
		}
		put_int(m, 5 /* is_folded */, l.is_folded);
		put_msg(locations, PROFILE_LOCATION, m);
		max_location = std::max(max_location, l.id);
	}
	for (const pprof_function &f : p.functions) {
		std::string m;
		put_int(m, FUNCTION_ID, f.id);
		put_int(m, FUNCTION_NAME, s(f.name));
		put_int(m, FUNCTION_SYSTEM_NAME, s(f.system_name));
		put_int(m, FUNCTION_FILENAME, s(f.filename));
		put_int(m, FUNCTION_START_LINE, (uint64_t)f.start_line);
		put_msg(functions, PROFILE_FUNCTION, m);
		max_function = std::max(max_function, f.id);
	}

	/* allocinfo's exact totals: a sample per site, at a location of its own. */
	for (const site_row &r : rows) {
		const uint64_t id = ++max_location, fid = ++max_function;
		std::string fn, line, loc, m;
		put_int(fn, FUNCTION_ID, fid);
		put_int(fn, FUNCTION_NAME, (uint64_t)st.id(r.func));
		put_int(fn, FUNCTION_SYSTEM_NAME,
			(uint64_t)st.id(r.full_func.empty() ? r.func : r.full_func));
		put_int(fn, FUNCTION_FILENAME, (uint64_t)st.id(r.file));
		put_msg(functions, PROFILE_FUNCTION, fn);
		put_int(line, LINE_FUNCTION_ID, fid);
		put_int(line, LINE_LINE, r.line);
		put_int(loc, LOCATION_ID, id);
		put_msg(loc, LOCATION_LINE, line);
		put_msg(locations, PROFILE_LOCATION, loc);
		std::vector<uint64_t> v(kept.size(), 0);
		v.push_back((uint64_t)clamp0(r.calls));
		v.push_back((uint64_t)clamp0(r.bytes));
		put_packed(m, SAMPLE_LOCATION_ID, &id, 1);
		put_packed(m, SAMPLE_VALUE, v.data(), v.size());
		const std::string site = r.file + ":" + std::to_string(r.line);
		put_label(m, st, "site", &site);
		if (!r.module.empty())
			put_label(m, st, "module", &r.module);
		if (r.pid)
			put_label(m, st, "pid", nullptr, r.pid);
		put_msg(samples, PROFILE_SAMPLE, m);
	}

	prof += samples;
	prof += mappings;
	prof += locations;
	prof += functions;
	std::string period_type;
	put_int(period_type, VALUETYPE_TYPE, s(p.period_type.first));
	put_int(period_type, VALUETYPE_UNIT, s(p.period_type.second));
	const uint64_t default_type = s(p.default_sample_type);
	st.write(prof);
	put_int(prof, PROFILE_TIME_NANOS, (uint64_t)(p.time_nanos ? p.time_nanos : time_nanos));
	put_int(prof, PROFILE_DURATION_NANOS, (uint64_t)p.duration_nanos);
	put_msg(prof, PROFILE_PERIOD_TYPE, period_type);
	put_int(prof, PROFILE_PERIOD, (uint64_t)p.period);
	put_int(prof, PROFILE_DEFAULT_SAMPLE_TYPE, default_type);
	return gzip(out, prof);
}

} /* namespace allocinfo */
