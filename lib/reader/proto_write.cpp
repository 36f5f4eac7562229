/* SPDX-License-Identifier: MIT */
/* proto_write.cpp - gzip and the messages every pprof writer shares (proto_write.h). */
#include "proto_write.h"

#include <string.h>
#include <zlib.h>

namespace allocinfo {
namespace proto {

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

void put_function(std::string &functions, string_table &st, uint64_t id,
		  const std::string &name, const std::string &system_name,
		  const std::string &file, int64_t start_line)
{
	std::string fn;

	put_int(fn, FUNCTION_ID, id);
	put_int(fn, FUNCTION_NAME, (uint64_t)st.id(name));
	put_int(fn, FUNCTION_SYSTEM_NAME, (uint64_t)st.id(system_name));
	put_int(fn, FUNCTION_FILENAME, (uint64_t)st.id(file));
	put_int(fn, FUNCTION_START_LINE, (uint64_t)start_line);
	put_msg(functions, PROFILE_FUNCTION, fn);
}

void put_line(std::string &location, uint64_t function_id, int64_t line)
{
	std::string l;

	put_int(l, LINE_FUNCTION_ID, function_id);
	put_int(l, LINE_LINE, (uint64_t)line);
	put_msg(location, LOCATION_LINE, l);
}

void put_mapping(std::string &mappings, const mapping_fields &f)
{
	std::string m;

	put_int(m, MAPPING_ID, f.id);
	put_int(m, MAPPING_MEMORY_START, f.start);
	put_int(m, MAPPING_MEMORY_LIMIT, f.limit);
	put_int(m, MAPPING_FILE_OFFSET, f.file_offset);
	put_int(m, MAPPING_FILENAME, f.file);
	put_int(m, MAPPING_BUILD_ID, f.build_id);
	put_int(m, MAPPING_HAS_FUNCTIONS, f.has_functions);
	put_int(m, MAPPING_HAS_FILENAMES, f.has_filenames);
	put_int(m, MAPPING_HAS_LINE_NUMBERS, f.has_line_numbers);
	put_int(m, MAPPING_HAS_INLINE_FRAMES, f.has_inline_frames);
	put_msg(mappings, PROFILE_MAPPING, m);
}

void profile_parts::location(uint64_t id, uint64_t mapping_id, uint64_t address,
			     uint64_t function_id, int64_t line)
{
	std::string loc;

	put_int(loc, LOCATION_ID, id);
	put_int(loc, LOCATION_MAPPING_ID, mapping_id);
	put_int(loc, LOCATION_ADDRESS, address);
	if (function_id)
		put_line(loc, function_id, line);
	put_msg(locations, PROFILE_LOCATION, loc);
}

void profile_parts::exact_site(uint64_t location_id, uint64_t function_id, size_t nvalues,
			       const std::string &file, int64_t line, const std::string &module,
			       int64_t count, int64_t bytes, int pid)
{
	std::vector<uint64_t> v(nvalues, 0);
	std::string smp;
	const std::string site = file + ":" + std::to_string(line);

	location(location_id, 0, 0, function_id, line);
	v[nvalues - 2] = (uint64_t)(count > 0 ? count : 0);
	v[nvalues - 1] = (uint64_t)(bytes > 0 ? bytes : 0);
	put_packed(smp, SAMPLE_LOCATION_ID, &location_id, 1);
	put_packed(smp, SAMPLE_VALUE, v.data(), v.size());
	put_label(smp, st, "site", &site);
	if (!module.empty())
		put_label(smp, st, "module", &module);
	if (pid)
		put_label(smp, st, "pid", nullptr, pid);
	put_msg(samples, PROFILE_SAMPLE, smp);
}

bool profile_parts::finish(std::string &out, const std::string &period_type, uint64_t period,
			   uint64_t default_sample_type, int64_t time_nanos,
			   int64_t duration_nanos)
{
	std::string p = std::move(prof);

	p += samples;
	p += mappings;
	p += locations;
	p += functions;
	st.write(p);
	put_int(p, PROFILE_TIME_NANOS, (uint64_t)time_nanos);
	put_int(p, PROFILE_DURATION_NANOS, (uint64_t)duration_nanos);
	put_msg(p, PROFILE_PERIOD_TYPE, period_type);
	put_int(p, PROFILE_PERIOD, period);
	put_int(p, PROFILE_DEFAULT_SAMPLE_TYPE, default_sample_type);
	return gzip(out, p);
}

} /* namespace proto */
} /* namespace allocinfo */
