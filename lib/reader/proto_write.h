/* SPDX-License-Identifier: MIT */
/*
 * proto_write.h - the pieces every pprof writer shares: the field numbers of
 * perftools.profiles.Profile (google/pprof proto/profile.proto), a hand-written
 * protobuf encoder (each message built in its own buffer, written length-delimited),
 * the profile's string table, and gzip.
 */
#ifndef ALLOCINFO_PROTO_WRITE_H
#define ALLOCINFO_PROTO_WRITE_H

#include <stdint.h>
#include <stddef.h>

#include <string>
#include <unordered_map>
#include <vector>

namespace allocinfo {
namespace proto {

/* Field numbers of profile.proto. */
enum : unsigned {
	PROFILE_SAMPLE_TYPE = 1, PROFILE_SAMPLE = 2, PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4, PROFILE_FUNCTION = 5, PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9, PROFILE_DURATION_NANOS = 10, PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12, PROFILE_COMMENT = 13, PROFILE_DEFAULT_SAMPLE_TYPE = 14,

	VALUETYPE_TYPE = 1, VALUETYPE_UNIT = 2,

	SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3,

	LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4,

	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9, MAPPING_HAS_INLINE_FRAMES = 10,

	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LOCATION_IS_FOLDED = 5,

	LINE_FUNCTION_ID = 1, LINE_LINE = 2,

	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

enum : unsigned { WIRE_VARINT = 0, WIRE_I64 = 1, WIRE_LEN = 2, WIRE_I32 = 5 };

inline void put_varint(std::string &b, uint64_t v)
{
	while (v >= 0x80) {
		b += (char)(v | 0x80);
		v >>= 7;
	}
	b += (char)v;
}

inline void put_key(std::string &b, unsigned field, unsigned wire)
{
	put_varint(b, (uint64_t)field << 3 | wire);
}

/* A varint field; zero is the default and left out, as proto3 does. Negative
 * int64 values are written as 10-byte two's complement varints. */
inline void put_int(std::string &b, unsigned field, uint64_t v)
{
	if (!v)
		return;
	put_key(b, field, WIRE_VARINT);
	put_varint(b, v);
}

inline void put_bytes(std::string &b, unsigned field, const char *p, size_t n)
{
	put_key(b, field, WIRE_LEN);
	put_varint(b, n);
	b.append(p, n);
}

inline void put_msg(std::string &b, unsigned field, const std::string &msg)
{
	put_bytes(b, field, msg.data(), msg.size());
}

inline void put_packed(std::string &b, unsigned field, const uint64_t *v, size_t n)
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

inline std::string value_type(string_table &st, const char *type, const char *unit)
{
	std::string m;

	put_int(m, VALUETYPE_TYPE, (uint64_t)st.id(type));
	put_int(m, VALUETYPE_UNIT, (uint64_t)st.id(unit));
	return m;
}

/* A label key = str (or key = num when str is null) on a sample being built. */
inline void put_label(std::string &sample, string_table &st, const char *key,
		      const std::string *str, int64_t num = 0)
{
	std::string label;

	put_int(label, LABEL_KEY, (uint64_t)st.id(key));
	if (str)
		put_int(label, LABEL_STR, (uint64_t)st.id(*str));
	else
		put_int(label, LABEL_NUM, (uint64_t)num);
	put_msg(sample, SAMPLE_LABEL, label);
}

/* Appends in, gzip-compressed, to out; false (out as it was) when zlib fails. */
bool gzip(std::string &out, const std::string &in);

/* Appends a Function message; names are interned in st. */
void put_function(std::string &functions, string_table &st, uint64_t id,
		  const std::string &name, const std::string &system_name,
		  const std::string &file, int64_t start_line = 0);

/* Appends a Line (function id, line number) to a Location being built. */
void put_line(std::string &location, uint64_t function_id, int64_t line);

/* A Mapping's fields; file and build_id are string table indexes. */
struct mapping_fields {
	uint64_t id = 0, start = 0, limit = 0, file_offset = 0, file = 0, build_id = 0;
	bool has_functions = false, has_filenames = false, has_line_numbers = false,
	     has_inline_frames = false;
};

void put_mapping(std::string &mappings, const mapping_fields &m);

/* A profile being written: its messages collected by kind, then laid out in the
 * order every writer here uses (sample types, samples, mappings, locations,
 * functions, the string table, then the scalars) and gzipped. */
struct profile_parts {
	string_table st;
	std::string prof, samples, mappings, locations, functions;

	/* Appends a Location with one Line (none when function_id is 0). */
	void location(uint64_t id, uint64_t mapping_id, uint64_t address, uint64_t function_id,
		      int64_t line);

	/* allocinfo's exact total of one call site: a Location of its own at
	 * location_id, naming function_id at line, and a sample whose last two of
	 * nvalues values are count and bytes (the others zero), labelled
	 * site=FILE:LINE, module=MODULE when known and pid=PID when not 0. */
	void exact_site(uint64_t location_id, uint64_t function_id, size_t nvalues,
			const std::string &file, int64_t line, const std::string &module,
			int64_t count, int64_t bytes, int pid = 0);

	/* Lays the profile out into out, gzipped; false (out as it was) when zlib
	 * fails. period_type is a ValueType message built with st. */
	bool finish(std::string &out, const std::string &period_type, uint64_t period,
		    uint64_t default_sample_type, int64_t time_nanos, int64_t duration_nanos);
};

} /* namespace proto */
} /* namespace allocinfo */

#endif
