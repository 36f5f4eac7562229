/* SPDX-License-Identifier: MIT */
/* proto_write.cpp - gzip for the pprof writers (proto_write.h). */
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

} /* namespace proto */
} /* namespace allocinfo */
