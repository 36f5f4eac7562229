/* SPDX-License-Identifier: MIT */
/*
 * How a tag is named in every report, short of reading debug info: module, file,
 * function and tokens as single words, file paths under ALLOCINFO_PREFIX_MAP, C++
 * functions tidied. The readers and the BPF module (which names the tags map inside
 * the program) share it, so that bpftool, the iterator and `allocinfo -p` agree.
 */
#include "store_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "cxxname.h"

namespace allocinfo {

/* The report is one line per tag, space-separated: a name from a store must not be
 * able to add a token or a line. */
std::string one_token(std::string_view s, const char *fallback)
{
	if (s.empty())
		return fallback;
	std::string r(s);
	for (char &c : r)
		if ((unsigned char)c <= ' ' || c == 0x7f)
			c = '_';
	return r;
}

std::string printed_module(std::string_view path)
{
	size_t slash = path.rfind('/');
	return one_token(slash == std::string_view::npos ? path : path.substr(slash + 1), "??");
}

std::string printed_word(std::string_view s)
{
	return one_token(s, "??");
}

namespace {

struct prefix_map_entry {
	std::string from, to;
};

/* ALLOCINFO_PREFIX_MAP, read once: OLD=NEW entries separated by ':', the last
 * given first (the compiler's -ffile-prefix-map order). */
const std::vector<prefix_map_entry> &prefix_map()
{
	static const std::vector<prefix_map_entry> map = [] {
		std::vector<prefix_map_entry> m;
		const char *env = secure_getenv("ALLOCINFO_PREFIX_MAP");
		if (!env)
			return m;
		std::string_view v(env);
		while (!v.empty()) {
			size_t colon = v.find(':');
			std::string_view item = v.substr(0, colon);
			size_t eq = item.find('=');
			if (eq == std::string_view::npos || eq == 0)
				fprintf(stderr, "allocinfo: ALLOCINFO_PREFIX_MAP: '%.*s' is not OLD=NEW; "
					"ignored\n", (int)item.size(), item.data());
			else
				m.insert(m.begin(), {std::string(item.substr(0, eq)),
						     std::string(item.substr(eq + 1))});
			if (colon == std::string_view::npos)
				break;
			v.remove_prefix(colon + 1);
		}
		return m;
	}();
	return map;
}

} /* namespace */

std::string report_path(std::string_view file)
{
	std::string out(file);
	for (const prefix_map_entry &e : prefix_map())
		if (out.compare(0, e.from.size(), e.from) == 0) {
			out.replace(0, e.from.size(), e.to);
			break;
		}
	size_t skip = 0;
	while (out.size() > skip + 2 && out.compare(skip, 2, "./") == 0)
		skip += 2;
	return out.substr(skip);
}

std::string printed_file(std::string_view file)
{
	return printed_word(report_path(file));
}


/* The tokens, the same whichever way the tag was named. */
void name_tokens(const tag_snapshot &t, site_row &r)
{
	r.via = t.via.empty() ? std::string() : printed_word(t.via);
	r.allocator = t.allocator.empty() ? std::string() : printed_word(t.allocator);
}

void name_tag_unsymbolized(const tag_snapshot &t, site_row &r)
{
	r.module = printed_module(t.module_path);
	if (t.flags & ALLOCINFO_TAGF_DYNAMIC) {
		char hex[32];
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)t.addr);
		r.file = "??";
		r.line = 0;
		r.func = hex;
	} else {
		r.file = printed_file(t.file);
		r.line = t.line;
		/* A C++ tag holds __PRETTY_FUNCTION__, tidied here rather than inside the
		 * program. */
		r.func = printed_word(t.flags & ALLOCINFO_TAGF_CXX
					      ? cxx_function_name(std::string(t.func).c_str())
					      : std::string(t.func));
	}
	name_tokens(t, r);
}

tag_snapshot live_tag_snapshot(uint32_t slot, const allocinfo_store_tag &t,
			       const allocinfo_store_tag_ext &e, const char *strings,
			       uint64_t used)
{
	auto str = [strings, used](uint32_t off) {
		if (!off || off >= used)
			return std::string_view();
		const char *p = strings + off;
		const void *nul = memchr(p, 0, used - off);
		return nul ? std::string_view(p, static_cast<const char *>(nul) - p)
			   : std::string_view();
	};
	tag_snapshot ts;
	ts.slot = slot;
	ts.flags = t.flags;
	ts.line = t.line;
	ts.addr = t.addr;
	ts.file = str(t.file_off);
	ts.func = str(t.func_off);
	ts.module_path = str(t.module_off);
	ts.via = str(e.via_off);
	ts.allocator = str(e.allocator_off);
	return ts;
}

void copy_fixed_field(char *dst, size_t size, const std::string &s)
{
	size_t n = std::min(s.size(), size - 1);
	memcpy(dst, s.data(), n);
	memset(dst + n, 0, size - n);
}

} /* namespace allocinfo */
