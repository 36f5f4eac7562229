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

/* Ids of the sampled profile's objects, renumbered 1..N in their order, so the exact
 * sites' ids that follow cannot collide or wrap whatever the file used. */
class renumbered {
public:
	uint64_t add(uint64_t old_id)
	{
		return ids_.emplace(old_id, ids_.size() + 1).first->second;
	}
	uint64_t operator()(uint64_t old_id) const
	{
		auto it = ids_.find(old_id);
		return it == ids_.end() ? 0 : it->second;
	}
	uint64_t next() const { return ids_.size() + 1; }

private:
	std::unordered_map<uint64_t, uint64_t> ids_;
};

} /* namespace */

bool render_pprof(std::string &out, const std::vector<site_row> &rows, int64_t time_nanos)
{
	profile_parts pp;
	string_table &st = pp.st;
	std::unordered_map<std::string, uint64_t> mapping_of;

	put_msg(pp.prof, PROFILE_SAMPLE_TYPE, value_type(st, "inuse_objects", "count"));
	put_msg(pp.prof, PROFILE_SAMPLE_TYPE, value_type(st, "inuse_space", "bytes"));
	st.id("module");	/* every sample's first label key: keep it early in the table */

	for (size_t i = 0; i < rows.size(); i++) {
		const site_row &r = rows[i];
		const uint64_t id = i + 1;	/* of this row's Function, Location */
		uint64_t map_id = 0;

		if (!r.module.empty()) {
			auto it = mapping_of.find(r.module);

			if (it != mapping_of.end()) {
				map_id = it->second;
			} else {
				mapping_fields m;

				map_id = mapping_of.size() + 1;
				mapping_of.emplace(r.module, map_id);
				m.id = map_id;
				m.start = map_id << MAPPING_SHIFT;
				m.limit = (map_id + 1) << MAPPING_SHIFT;
				m.file = (uint64_t)st.id(r.module);
				/* Already symbolized: pprof must not look for the binary. */
				m.has_functions = m.has_filenames = m.has_line_numbers = true;
				put_mapping(pp.mappings, m);
			}
		}
		put_function(pp.functions, st, id, r.func,
			     r.full_func.empty() ? r.func : r.full_func, r.file);
		pp.location(id, map_id, (map_id << MAPPING_SHIFT) + 16 * id, id, r.line);

		std::string s;
		const uint64_t values[2] = { (uint64_t)clamp0(r.calls), (uint64_t)clamp0(r.bytes) };

		put_packed(s, SAMPLE_LOCATION_ID, &id, 1);
		put_packed(s, SAMPLE_VALUE, values, 2);
		put_label(s, st, "module", &r.module);
		if (r.pid)
			put_label(s, st, "pid", nullptr, r.pid);
		if (!r.via.empty())
			put_label(s, st, "via", &r.via);
		if (!r.allocator.empty())
			put_label(s, st, "allocator", &r.allocator);
		if (r.unloaded) {
			static const std::string yes = "yes";
			put_label(s, st, "unloaded", &yes);
		}
		if (!r.user.empty())
			put_label(s, st, "user", &r.user);
		put_msg(pp.samples, PROFILE_SAMPLE, s);
	}

	const std::string period_type = value_type(st, "space", "bytes");
	const int64_t default_type = st.id("inuse_space");
	return pp.finish(out, period_type, 1, (uint64_t)default_type, time_nanos, 0);
}

bool render_pprof_merged(std::string &out, const pprof_profile &p,
			 const std::vector<site_row> &rows, int64_t time_nanos)
{
	profile_parts pp;
	string_table &st = pp.st;
	auto s = [&](int64_t i) { return (uint64_t)st.id(p.strings[(size_t)i]); };
	renumbered mapping_id, location_id, function_id;

	for (const pprof_mapping &mp : p.mappings)
		mapping_id.add(mp.id);
	for (const pprof_location &l : p.locations)
		location_id.add(l.id);
	for (const pprof_function &f : p.functions)
		function_id.add(f.id);

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
		put_msg(pp.prof, PROFILE_SAMPLE_TYPE, vt);
	}
	put_msg(pp.prof, PROFILE_SAMPLE_TYPE, value_type(st, "exact_inuse_objects", "count"));
	put_msg(pp.prof, PROFILE_SAMPLE_TYPE, value_type(st, "exact_inuse_space", "bytes"));

	for (const pprof_sample &smp : p.samples) {
		std::vector<uint64_t> v, locs;
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
		for (uint64_t id : smp.location_ids)
			locs.push_back(location_id(id));
		std::string m;
		put_packed(m, SAMPLE_LOCATION_ID, locs.data(), locs.size());
		put_packed(m, SAMPLE_VALUE, v.data(), v.size());
		for (const pprof_label &l : smp.labels) {
			std::string lm;
			put_int(lm, LABEL_KEY, s(l.key));
			put_int(lm, LABEL_STR, s(l.str));
			put_int(lm, LABEL_NUM, (uint64_t)l.num);
			put_int(lm, LABEL_NUM_UNIT, s(l.num_unit));
			put_msg(m, SAMPLE_LABEL, lm);
		}
		put_msg(pp.samples, PROFILE_SAMPLE, m);
	}

	for (const pprof_mapping &mp : p.mappings) {
		mapping_fields m;
		m.id = mapping_id(mp.id);
		m.start = mp.memory_start;
		m.limit = mp.memory_limit;
		m.file_offset = mp.file_offset;
		m.file = s(mp.filename);
		m.build_id = s(mp.build_id);
		m.has_functions = mp.has_functions;
		m.has_filenames = mp.has_filenames;
		m.has_line_numbers = mp.has_line_numbers;
		m.has_inline_frames = mp.has_inline_frames;
		put_mapping(pp.mappings, m);
	}
	for (const pprof_location &l : p.locations) {
		std::string m;
		put_int(m, LOCATION_ID, location_id(l.id));
		put_int(m, LOCATION_MAPPING_ID, mapping_id(l.mapping_id));
		put_int(m, LOCATION_ADDRESS, l.address);
		for (const pprof_line &ln : l.lines)
			put_line(m, function_id(ln.function_id), ln.line);
		put_int(m, LOCATION_IS_FOLDED, l.is_folded);
		put_msg(pp.locations, PROFILE_LOCATION, m);
	}
	for (const pprof_function &f : p.functions)
		put_function(pp.functions, st, function_id(f.id), p.strings[(size_t)f.name],
			     p.strings[(size_t)f.system_name], p.strings[(size_t)f.filename],
			     f.start_line);

	/* allocinfo's exact totals: a sample per site, at a location of its own. */
	uint64_t next_location = location_id.next(), next_function = function_id.next();
	for (const site_row &r : rows) {
		const uint64_t fid = next_function++;
		put_function(pp.functions, st, fid, r.func,
			     r.full_func.empty() ? r.func : r.full_func, r.file);
		pp.exact_site(next_location++, fid, kept.size() + 2, r.file, r.line, r.module,
			      r.calls, r.bytes, r.pid);
	}

	std::string period_type;
	put_int(period_type, VALUETYPE_TYPE, s(p.period_type.first));
	put_int(period_type, VALUETYPE_UNIT, s(p.period_type.second));
	const uint64_t default_type = s(p.default_sample_type);
	return pp.finish(out, period_type, (uint64_t)p.period, default_type,
			 p.time_nanos ? p.time_nanos : time_nanos, p.duration_nanos);
}

} /* namespace allocinfo */
