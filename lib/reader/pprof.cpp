/* SPDX-License-Identifier: MIT */
/*
 * pprof.cpp - renders per-call-site rows as a gzip-compressed pprof profile
 * (perftools.profiles.Profile, see google/pprof proto/profile.proto), encoded by
 * hand: every message is built in its own buffer and written length-delimited.
 * Readable by `go tool pprof` and `pprof`.
 */
#include "report.h"

#include <stdint.h>
#include <string.h>
#include <zlib.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace allocinfo {

namespace {

/* Field numbers of profile.proto. */
enum : unsigned {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9, PROFILE_PERIOD_TYPE = 11, PROFILE_PERIOD = 12,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,

	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3,

	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILENAME = 5, MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,

	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,

	LINE_FUNCTION_ID = 1, LINE_LINE = 2,

	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
};

enum : unsigned { WIRE_VARINT = 0, WIRE_LEN = 2 };

void put_varint(std::string &b, uint64_t v)
{
	while (v >= 0x80) {
		b += (char)(v | 0x80);
		v >>= 7;
	}
	b += (char)v;
}

void put_key(std::string &b, unsigned field, unsigned wire)
{
	put_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field; zero is the default and left out, as proto3 does. Negative
 * int64 values are written as 10-byte two's complement varints. */
void put_int(std::string &b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_key(b, field, WIRE_VARINT);
	put_varint(b, v);
}

void put_bytes(std::string &b, unsigned field, const char *p, size_t n)
{
	put_key(b, field, WIRE_LEN);
	put_varint(b, n);
	b.append(p, n);
}

void put_msg(std::string &b, unsigned field, const std::string &msg)
{
	put_bytes(b, field, msg.data(), msg.size());
}

void put_packed(std::string &b, unsigned field, const uint64_t *v, size_t n)
{
	std::string tmp;

	for (size_t i = 0; i < n; i++)
		put_varint(tmp, v[i]);
	put_msg(b, field, tmp);
}

class string_table {
public:
	string_table() { id(""); }

	int64_t id(const std::string &s)
	{
		auto it = index_.find(s);

		if (it != index_.end())
			return it->second;
		int64_t n = (int64_t)strings_.size();

		index_.emplace(s, n);
		strings_.push_back(s);
		return n;
	}

	void write(std::string &b) const
	{
		for (const std::string &s : strings_)
			put_bytes(b, PROFILE_STRING_TABLE, s.data(), s.size());
	}

private:
	std::unordered_map<std::string, int64_t> index_;
	std::vector<std::string> strings_;
};

std::string value_type(string_table &st, const char *type, const char *unit)
{
	std::string m;

	put_int(m, VALUETYPE_TYPE, (uint64_t)st.id(type));
	put_int(m, VALUETYPE_UNIT, (uint64_t)st.id(unit));
	return m;
}

/* Mapping k (1-based) owns the synthetic range [k << 40, (k + 1) << 40); location i
 * sits at 16 * i inside its mapping's range, so addresses are distinct. */
const unsigned MAPPING_SHIFT = 40;

bool gzip(std::string &out, const std::string &in)
{
	const size_t chunk = 64 * 1024, start = out.size();
	size_t done = 0;
	z_stream zs;
	int rc, flush;

	memset(&zs, 0, sizeof(zs));
	if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16 /* gzip */, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return false;
	do {
		/* avail_in is 32 bits wide: feed at most 1 GiB at a time */
		size_t left = in.size() - done, n = left < (1u << 30) ? left : (1u << 30);

		zs.next_in = (Bytef *)(in.data() + done);
		zs.avail_in = (uInt)n;
		flush = n == left ? Z_FINISH : Z_NO_FLUSH;
		do {
			size_t at = out.size();

			out.resize(at + chunk);
			zs.next_out = (Bytef *)&out[at];
			zs.avail_out = (uInt)chunk;
			rc = deflate(&zs, flush);
			out.resize(at + chunk - zs.avail_out);
		} while (rc != Z_STREAM_ERROR && zs.avail_out == 0);
		/* room left over: all input taken, and with Z_FINISH the stream ended */
		done += n;
	} while (rc != Z_STREAM_ERROR && flush != Z_FINISH);
	if (deflateEnd(&zs) != Z_OK || rc != Z_STREAM_END) {
		out.resize(start);
		return false;
	}
	return true;
}

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
