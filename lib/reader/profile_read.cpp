/* SPDX-License-Identifier: MIT */
/* profile_read.cpp - a bounded protobuf decoder for pprof profiles (profile_read.h). */
#include "profile_read.h"

#include <string.h>
#include <zlib.h>

#include <algorithm>

#include "proto_write.h"

namespace allocinfo {

namespace {

using namespace proto;

bool gunzip(const std::string &in, std::string &out, size_t max_bytes, std::string &why)
{
	z_stream zs;
	memset(&zs, 0, sizeof(zs));
	if (inflateInit2(&zs, 15 + 16) != Z_OK) {
		why = "cannot start zlib";
		return false;
	}
	zs.next_in = (Bytef *)in.data();
	zs.avail_in = (uInt)in.size();
	int rc;
	do {
		size_t at = out.size(), chunk = 1 << 20;
		if (at >= max_bytes) {
			inflateEnd(&zs);
			why = "it inflates to more than " + std::to_string(max_bytes >> 20) + " MiB";
			return false;
		}
		out.resize(at + chunk);
		zs.next_out = (Bytef *)&out[at];
		zs.avail_out = (uInt)chunk;
		rc = inflate(&zs, Z_NO_FLUSH);
		out.resize(at + chunk - zs.avail_out);
	} while (rc == Z_OK);
	inflateEnd(&zs);
	if (rc != Z_STREAM_END) {
		why = rc == Z_BUF_ERROR ? "the gzip stream is truncated" : "the gzip stream is corrupt";
		return false;
	}
	return true;
}

/* A cursor over one message's bytes. */
class reader {
public:
	reader(const char *p, size_t n) : p_(p), end_(p + n) {}

	bool done() const { return p_ == end_; }

	bool varint(uint64_t &v)
	{
		v = 0;
		for (unsigned shift = 0; shift < 64; shift += 7) {
			if (p_ == end_)
				return false;
			uint8_t b = (uint8_t)*p_++;
			v |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				return true;
		}
		return false;
	}

	/* The next field: its number, wire type, and a varint's value or a length-
	 * delimited field's bytes. */
	bool field(unsigned &number, unsigned &wire, uint64_t &v, reader &sub)
	{
		uint64_t key;
		if (!varint(key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff)
			return false;
		number = (unsigned)(key >> 3);
		wire = (unsigned)(key & 7);
		switch (wire) {
		case WIRE_VARINT:
			return varint(v);
		case WIRE_I64:
			if (end_ - p_ < 8)
				return false;
			p_ += 8;
			return true;
		case WIRE_I32:
			if (end_ - p_ < 4)
				return false;
			p_ += 4;
			return true;
		case WIRE_LEN:
			if (!varint(v) || v > (uint64_t)(end_ - p_))
				return false;
			sub = reader(p_, (size_t)v);
			p_ += v;
			return true;
		default:
			return false;
		}
	}

	std::string bytes() const { return std::string(p_, end_); }

private:
	const char *p_, *end_;
};

/* A repeated uint64/int64: packed (a length-delimited run) or one varint. */
template <typename T>
bool repeated(unsigned wire, uint64_t v, reader &sub, std::vector<T> &out)
{
	if (wire == WIRE_VARINT) {
		out.push_back((T)v);
		return true;
	}
	if (wire != WIRE_LEN)
		return false;
	while (!sub.done()) {
		uint64_t x;
		if (!sub.varint(x))
			return false;
		out.push_back((T)x);
	}
	return true;
}

#define NEXT_FIELD(r)                                                                    \
	unsigned number, wire;                                                           \
	uint64_t v = 0;                                                                  \
	reader sub(nullptr, 0);                                                          \
	if (!(r).field(number, wire, v, sub))                                            \
		return false;

bool value_type(reader r, std::pair<int64_t, int64_t> &out)
{
	while (!r.done()) {
		NEXT_FIELD(r);
		if (number == VALUETYPE_TYPE && wire == WIRE_VARINT)
			out.first = (int64_t)v;
		else if (number == VALUETYPE_UNIT && wire == WIRE_VARINT)
			out.second = (int64_t)v;
	}
	return true;
}

bool label(reader r, pprof_label &out)
{
	while (!r.done()) {
		NEXT_FIELD(r);
		if (wire != WIRE_VARINT)
			continue;
		if (number == LABEL_KEY)
			out.key = (int64_t)v;
		else if (number == LABEL_STR)
			out.str = (int64_t)v;
		else if (number == LABEL_NUM)
			out.num = (int64_t)v;
		else if (number == LABEL_NUM_UNIT)
			out.num_unit = (int64_t)v;
	}
	return true;
}

bool sample(reader r, pprof_sample &out)
{
	while (!r.done()) {
		NEXT_FIELD(r);
		if (number == SAMPLE_LOCATION_ID) {
			if (!repeated(wire, v, sub, out.location_ids))
				return false;
		} else if (number == SAMPLE_VALUE) {
			if (!repeated(wire, v, sub, out.values))
				return false;
		} else if (number == SAMPLE_LABEL && wire == WIRE_LEN) {
			pprof_label l;
			if (!label(sub, l))
				return false;
			out.labels.push_back(l);
		}
	}
	return true;
}

bool mapping(reader r, pprof_mapping &m)
{
	while (!r.done()) {
		NEXT_FIELD(r);
		if (wire != WIRE_VARINT)
			continue;
		switch (number) {
		case MAPPING_ID: m.id = v; break;
		case MAPPING_MEMORY_START: m.memory_start = v; break;
		case MAPPING_MEMORY_LIMIT: m.memory_limit = v; break;
		case MAPPING_FILE_OFFSET: m.file_offset = v; break;
		case MAPPING_FILENAME: m.filename = (int64_t)v; break;
		case MAPPING_BUILD_ID: m.build_id = (int64_t)v; break;
		case MAPPING_HAS_FUNCTIONS: m.has_functions = v; break;
		case MAPPING_HAS_FILENAMES: m.has_filenames = v; break;
		case MAPPING_HAS_LINE_NUMBERS: m.has_line_numbers = v; break;
		case MAPPING_HAS_INLINE_FRAMES: m.has_inline_frames = v; break;
		}
	}
	return true;
}

bool line(reader r, pprof_line &l)
{
	while (!r.done()) {
		NEXT_FIELD(r);
		if (number == LINE_FUNCTION_ID && wire == WIRE_VARINT)
			l.function_id = v;
		else if (number == LINE_LINE && wire == WIRE_VARINT)
			l.line = (int64_t)v;
	}
	return true;
}

bool location(reader r, pprof_location &l)
{
	while (!r.done()) {
		NEXT_FIELD(r);
		if (number == LOCATION_LINE && wire == WIRE_LEN) {
			pprof_line ln;
			if (!line(sub, ln))
				return false;
			l.lines.push_back(ln);
		} else if (wire == WIRE_VARINT) {
			if (number == LOCATION_ID)
				l.id = v;
			else if (number == LOCATION_MAPPING_ID)
				l.mapping_id = v;
			else if (number == LOCATION_ADDRESS)
				l.address = v;
			else if (number == 5)	/* is_folded */
				l.is_folded = v;
		}
	}
	return true;
}

bool function(reader r, pprof_function &f)
{
	while (!r.done()) {
		NEXT_FIELD(r);
		if (wire != WIRE_VARINT)
			continue;
		switch (number) {
		case FUNCTION_ID: f.id = v; break;
		case FUNCTION_NAME: f.name = (int64_t)v; break;
		case FUNCTION_SYSTEM_NAME: f.system_name = (int64_t)v; break;
		case FUNCTION_FILENAME: f.filename = (int64_t)v; break;
		case FUNCTION_START_LINE: f.start_line = (int64_t)v; break;
		}
	}
	return true;
}

bool decode(reader r, pprof_profile &p, std::string &why)
{
	while (!r.done()) {
		unsigned number, wire;
		uint64_t v = 0;
		reader sub(nullptr, 0);
		if (!r.field(number, wire, v, sub)) {
			why = "a malformed protobuf field";
			return false;
		}
		bool ok = true;
		if (wire == WIRE_LEN) {
			switch (number) {
			case PROFILE_SAMPLE_TYPE:
				p.sample_types.emplace_back(0, 0);
				ok = value_type(sub, p.sample_types.back());
				break;
			case PROFILE_SAMPLE:
				p.samples.emplace_back();
				ok = sample(sub, p.samples.back());
				break;
			case PROFILE_MAPPING:
				p.mappings.emplace_back();
				ok = mapping(sub, p.mappings.back());
				break;
			case PROFILE_LOCATION:
				p.locations.emplace_back();
				ok = location(sub, p.locations.back());
				break;
			case PROFILE_FUNCTION:
				p.functions.emplace_back();
				ok = function(sub, p.functions.back());
				break;
			case PROFILE_STRING_TABLE:
				p.strings.push_back(sub.bytes());
				break;
			case PROFILE_PERIOD_TYPE:
				ok = value_type(sub, p.period_type);
				break;
			}
		} else if (wire == WIRE_VARINT) {
			switch (number) {
			case PROFILE_TIME_NANOS: p.time_nanos = (int64_t)v; break;
			case PROFILE_DURATION_NANOS: p.duration_nanos = (int64_t)v; break;
			case PROFILE_PERIOD: p.period = (int64_t)v; break;
			case PROFILE_DEFAULT_SAMPLE_TYPE: p.default_sample_type = (int64_t)v; break;
			}
		}
		if (!ok) {
			why = "a malformed protobuf message";
			return false;
		}
	}
	return true;
}

/* Every string index in range, every sample as long as the sample types, every id
 * a sample or location names defined, and defined once. */
bool check(const pprof_profile &p, std::string &why)
{
	const uint64_t n = p.strings.size();
	auto str_ok = [n](int64_t i) { return i >= 0 && (uint64_t)i < n; };
	if (n == 0 || !p.strings[0].empty()) {
		why = "its string table does not start with the empty string";
		return false;
	}
	if (p.sample_types.empty()) {
		why = "it has no sample types";
		return false;
	}
	for (auto &t : p.sample_types)
		if (!str_ok(t.first) || !str_ok(t.second))
			goto bad_string;
	if (!str_ok(p.period_type.first) || !str_ok(p.period_type.second) ||
	    !str_ok(p.default_sample_type))
		goto bad_string;
	for (auto &m : p.mappings)
		if (!str_ok(m.filename) || !str_ok(m.build_id) || m.id == 0)
			goto bad_id;
	for (auto &f : p.functions)
		if (!str_ok(f.name) || !str_ok(f.system_name) || !str_ok(f.filename) || f.id == 0)
			goto bad_id;
	{
		std::vector<uint64_t> fids, mids, lids;
		for (auto &f : p.functions)
			fids.push_back(f.id);
		for (auto &m : p.mappings)
			mids.push_back(m.id);
		std::sort(fids.begin(), fids.end());
		std::sort(mids.begin(), mids.end());
		if (std::adjacent_find(fids.begin(), fids.end()) != fids.end() ||
		    std::adjacent_find(mids.begin(), mids.end()) != mids.end())
			goto twice;
		auto has = [](const std::vector<uint64_t> &ids, uint64_t id) {
			return std::binary_search(ids.begin(), ids.end(), id);
		};
		for (auto &l : p.locations) {
			if (l.id == 0 || (l.mapping_id && !has(mids, l.mapping_id)))
				goto bad_id;
			for (auto &ln : l.lines)
				if (!has(fids, ln.function_id))
					goto bad_id;
			lids.push_back(l.id);
		}
		std::sort(lids.begin(), lids.end());
		if (std::adjacent_find(lids.begin(), lids.end()) != lids.end())
			goto twice;
		for (auto &s : p.samples) {
			if (s.values.size() != p.sample_types.size()) {
				why = "a sample has " + std::to_string(s.values.size()) +
				      " values for " + std::to_string(p.sample_types.size()) +
				      " sample types";
				return false;
			}
			for (uint64_t id : s.location_ids)
				if (!has(lids, id))
					goto bad_id;
			for (auto &l : s.labels)
				if (!str_ok(l.key) || !str_ok(l.str) || !str_ok(l.num_unit))
					goto bad_string;
		}
	}
	return true;
bad_string:
	why = "a string index is out of its string table";
	return false;
bad_id:
	why = "it names a mapping, location or function it does not define";
	return false;
twice:
	why = "it defines a mapping, location or function id twice";
	return false;
}

} /* namespace */

bool read_pprof(const std::string &gz, pprof_profile &p, std::string &why, size_t max_bytes)
{
	std::string raw;
	const std::string *bytes = &gz;
	if (gz.size() >= 2 && (uint8_t)gz[0] == 0x1f && (uint8_t)gz[1] == 0x8b) {
		if (!gunzip(gz, raw, max_bytes, why))
			return false;
		bytes = &raw;
	}
	p = pprof_profile();
	if (!decode(reader(bytes->data(), bytes->size()), p, why))
		return false;
	return check(p, why);
}

} /* namespace allocinfo */
