/* SPDX-License-Identifier: MIT */
/* The snapshot file of allocinfo --save, and the growth report of --diff. */
#include "allocinfo_snapshot.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "saturating.h"

namespace allocinfo {

namespace {

const char MAGIC[] = "allocinfo-snapshot";

void append_escaped(std::string &out, const std::string &s)
{
	static const char hex[] = "0123456789abcdef";
	for (char ch : s) {
		unsigned char c = (unsigned char)ch;
		if (c == '\\') {
			out += "\\\\";
		} else if (c == '\t') {
			out += "\\t";
		} else if (c == '\n') {
			out += "\\n";
		} else if (c < 0x20 || c == 0x7f) {
			out += "\\x";
			out += hex[c >> 4];
			out += hex[c & 15];
		} else {
			out += ch;
		}
	}
}

int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool unescape(const std::string &in, std::string &out)
{
	out.clear();
	for (size_t i = 0; i < in.size(); i++) {
		if (in[i] != '\\') {
			out += in[i];
			continue;
		}
		if (++i >= in.size())
			return false;
		switch (in[i]) {
		case '\\': out += '\\'; break;
		case 't': out += '\t'; break;
		case 'n': out += '\n'; break;
		case 'x': {
			int hi = i + 1 < in.size() ? hex_value(in[i + 1]) : -1;
			int lo = i + 2 < in.size() ? hex_value(in[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return false;
			out += (char)(hi << 4 | lo);
			i += 2;
			break;
		}
		default:
			return false;
		}
	}
	return true;
}

std::vector<std::string> split_tabs(const std::string &line)
{
	std::vector<std::string> f;
	size_t start = 0;
	for (;;) {
		size_t tab = line.find('\t', start);
		f.push_back(line.substr(start, tab == std::string::npos ? std::string::npos
								       : tab - start));
		if (tab == std::string::npos)
			return f;
		start = tab + 1;
	}
}

bool parse_i64(const std::string &s, int64_t &v)
{
	if (s.empty() || s.size() > 20)
		return false;
	char *end;
	errno = 0;
	long long x = strtoll(s.c_str(), &end, 10);
	if (errno || *end || !(isdigit((unsigned char)s[0]) || s[0] == '-'))
		return false;
	v = x;
	return true;
}

using site_key = std::tuple<std::string, std::string, unsigned, std::string, bool, std::string>;

site_key key_of(const site_row &r)
{
	return site_key(r.module, r.file, r.line, r.func, r.unloaded, r.user);
}

/* As report.cpp orders sites: module, file, line, func, loaded first, user. */
bool site_less(const site_row &a, const site_row &b)
{
	return key_of(a) < key_of(b);
}

/* Text for the report: control bytes as '?', as render_text() prints them. */
void append_text(std::string &out, const std::string &s)
{
	for (char ch : s) {
		unsigned char c = (unsigned char)ch;
		out += (c < 0x20 || c == 0x7f) ? '?' : ch;
	}
}

} /* namespace */

std::string format_snapshot(const snapshot_file &s)
{
	std::string out;
	char buf[96];
	snprintf(buf, sizeof(buf), "%s\t%u\n", MAGIC, SNAPSHOT_VERSION);
	out += buf;
	out += "# written by allocinfo --save; read by allocinfo --diff\n";
	snprintf(buf, sizeof(buf), "pid\t%d\ntime\t%" PRId64 "\n", s.pid, s.time);
	out += buf;
	for (const site_row &r : s.rows) {
		snprintf(buf, sizeof(buf), "site\t%" PRId64 "\t%" PRId64 "\t", r.bytes, r.calls);
		out += buf;
		append_escaped(out, r.module);
		out += '\t';
		append_escaped(out, r.file);
		snprintf(buf, sizeof(buf), "\t%u\t", r.line);
		out += buf;
		append_escaped(out, r.func);
		out += r.unloaded ? "\t1" : "\t0";
		if (!r.user.empty()) {
			out += '\t';
			append_escaped(out, r.user);
		}
		out += '\n';
	}
	snprintf(buf, sizeof(buf), "end\t%zu\n", s.rows.size());
	out += buf;
	return out;
}

bool parse_snapshot(const std::string &text, snapshot_file &out, std::string &why)
{
	out = snapshot_file();
	size_t pos = 0, lineno = 0;
	bool have_magic = false, have_end = false;
	while (pos < text.size()) {
		size_t nl = text.find('\n', pos);
		if (nl == std::string::npos) {
			why = "line " + std::to_string(lineno + 1) + ": no newline at the end";
			return false;
		}
		std::string line = text.substr(pos, nl - pos);
		pos = nl + 1;
		lineno++;
		std::string at = "line " + std::to_string(lineno) + ": ";
		if (have_end) {
			why = at + "data after the end line";
			return false;
		}
		std::vector<std::string> f = split_tabs(line);
		if (!have_magic) {
			if (f.size() != 2 || f[0] != MAGIC) {
				why = "not an allocinfo snapshot (made by allocinfo --save)";
				return false;
			}
			if (f[1] != std::to_string(SNAPSHOT_VERSION)) {
				why = "unsupported snapshot version '" + f[1] + "'";
				return false;
			}
			have_magic = true;
			continue;
		}
		if (!line.empty() && line[0] == '#')
			continue;
		int64_t v = 0, v2 = 0, line_no = 0;
		if (f[0] == "pid" && f.size() == 2 && parse_i64(f[1], v) && v >= 0 && v <= INT32_MAX) {
			out.pid = (int)v;
		} else if (f[0] == "time" && f.size() == 2 && parse_i64(f[1], v)) {
			out.time = v;
		} else if (f[0] == "site" && (f.size() == 8 || f.size() == 9)) {
			site_row r;
			if (!parse_i64(f[1], v) || !parse_i64(f[2], v2) || !parse_i64(f[5], line_no) ||
			    line_no < 0 || line_no > UINT32_MAX || (f[7] != "0" && f[7] != "1") ||
			    !unescape(f[3], r.module) || !unescape(f[4], r.file) ||
			    !unescape(f[6], r.func) || (f.size() == 9 && (!unescape(f[8], r.user) ||
									 r.user.empty()))) {
				why = at + "bad site record";
				return false;
			}
			r.bytes = v;
			r.calls = v2;
			r.line = (unsigned)line_no;
			r.unloaded = f[7] == "1";
			out.rows.push_back(std::move(r));
		} else if (f[0] == "end" && f.size() == 2 && parse_i64(f[1], v)) {
			if (v < 0 || (uint64_t)v != out.rows.size()) {
				why = at + "the end line counts " + f[1] + " sites, the file has " +
				      std::to_string(out.rows.size());
				return false;
			}
			have_end = true;
		} else {
			why = at + "unknown or malformed record";
			return false;
		}
	}
	if (!have_magic) {
		why = "empty file";
		return false;
	}
	if (!have_end) {
		why = "truncated (no end line)";
		return false;
	}
	return true;
}

std::vector<site_row> diff_rows(const std::vector<site_row> &then,
				const std::vector<site_row> &now, sort_key key)
{
	std::map<site_key, site_row> sites;
	auto add = [&sites](const site_row &r, int sign) {
		auto it = sites.find(key_of(r));
		if (it == sites.end()) {
			site_row d = r;
			d.bytes = d.calls = 0;
			d.pid = 0;
			d.comm.clear();
			d.inaccurate = false;
			it = sites.emplace(key_of(r), std::move(d)).first;
		}
		site_row &d = it->second;
		d.bytes = sign > 0 ? saturating_add(d.bytes, r.bytes) : saturating_sub(d.bytes, r.bytes);
		d.calls = sign > 0 ? saturating_add(d.calls, r.calls) : saturating_sub(d.calls, r.calls);
	};
	for (const site_row &r : now)
		add(r, 1);
	for (const site_row &r : then)
		add(r, -1);
	std::vector<site_row> out;
	for (auto &kv : sites)
		if (kv.second.bytes != 0 || kv.second.calls != 0)
			out.push_back(kv.second);
	switch (key) {
	case sort_key::site:
		std::stable_sort(out.begin(), out.end(), site_less);
		break;
	case sort_key::bytes:
		std::stable_sort(out.begin(), out.end(), [](const site_row &a, const site_row &b) {
			return a.bytes != b.bytes ? a.bytes > b.bytes : site_less(a, b);
		});
		break;
	case sort_key::calls:
		std::stable_sort(out.begin(), out.end(), [](const site_row &a, const site_row &b) {
			return a.calls != b.calls ? a.calls > b.calls : site_less(a, b);
		});
		break;
	}
	return out;
}

void render_diff(std::string &out, const std::vector<site_row> &rows, bool human)
{
	char buf[96];
	out += "allocinfo - version: 2.0\n";
	out += "#     <size>  <calls> <tag info>\n";
	for (const site_row &r : rows) {
		int n;
		if (human) {
			std::string size;
			if (r.bytes < 0)
				size = "-" + human_size(r.bytes == INT64_MIN ? INT64_MAX : -r.bytes);
			else
				size = human_size(r.bytes);
			n = snprintf(buf, sizeof(buf), "%12s %8lli ", size.c_str(), (long long)r.calls);
		} else {
			n = snprintf(buf, sizeof(buf), "%12lli %8lli ", (long long)r.bytes,
				     (long long)r.calls);
		}
		out.append(buf, (size_t)n);
		append_text(out, r.file);
		snprintf(buf, sizeof(buf), ":%u", r.line);
		out += buf;
		if (!r.module.empty()) {
			out += " [";
			append_text(out, r.module);
			out += ']';
		}
		out += " func:";
		append_text(out, r.func);
		if (r.unloaded)
			out += " unloaded:yes";
		if (!r.user.empty()) {
			out += " user:";
			append_text(out, r.user);
		}
		out += " \n";
	}
}

} /* namespace allocinfo */
