/* SPDX-License-Identifier: MIT */
/*
 * report.cpp - merging and sorting per-call-site rows, and rendering them as the
 * kernel's /proc/allocinfo text, JSON and Prometheus text exposition (pprof is in
 * pprof.cpp). No exceptions, no iostreams: this also runs inside the profiled process.
 */
#include "report.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <algorithm>

#include "saturating.h"

namespace allocinfo {

namespace {

/* Orders by (module, file, line, func, via, allocator), then loaded before unloaded, then user (root's
 * first), then pid. */
int site_cmp(const site_row &a, const site_row &b)
{
	int c = a.module.compare(b.module);

	if (c)
		return c;
	c = a.file.compare(b.file);
	if (c)
		return c;
	if (a.line != b.line)
		return a.line < b.line ? -1 : 1;
	c = a.func.compare(b.func);
	if (c)
		return c;
	c = a.via.compare(b.via);
	if (c)
		return c;
	c = a.allocator.compare(b.allocator);
	if (c)
		return c;
	if (a.unloaded != b.unloaded)
		return a.unloaded ? 1 : -1;
	c = a.user.compare(b.user);
	if (c)
		return c;
	if (a.pid != b.pid)
		return a.pid < b.pid ? -1 : 1;
	return 0;
}

bool site_less(const site_row &a, const site_row &b)
{
	return site_cmp(a, b) < 0;
}

/* v in decimal, right-aligned in `width` columns as printf's "%*llu" prints it
 * (every number of every report, without a printf call each). */
void append_padded(std::string &out, unsigned long long v, size_t width)
{
	char buf[24];
	char *end = buf + sizeof(buf), *p = end;

	do {
		*--p = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	size_t n = (size_t)(end - p);
	if (n < width)
		out.append(width - n, ' ');
	out.append(p, n);
}

void append_u64(std::string &out, unsigned long long v)
{
	append_padded(out, v, 0);
}

void append_i64(std::string &out, long long v)
{
	if (v < 0) {
		out += '-';
		append_padded(out, 0ull - (unsigned long long)v, 0);
	} else {
		append_padded(out, (unsigned long long)v, 0);
	}
}

/*
 * Length of the well-formed UTF-8 sequence at s[0, n), or 0 when there is none; then
 * *bad is the length of its maximal subpart (at least 1), which is replaced by one
 * U+FFFD (Unicode's recommended practice, as browsers do).
 */
size_t utf8_seq(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char c = s[0];
	size_t len;
	unsigned char lo = 0x80, hi = 0xbf;	/* range of the second byte */

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		len = 2;
	} else if (c >= 0xe0 && c <= 0xef) {
		len = 3;
		if (c == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (c == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		len = 4;
		if (c == 0xf0)
			lo = 0x90;	/* overlong */
		else if (c == 0xf4)
			hi = 0x8f;	/* above U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	for (size_t i = 1; i < len; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return len;
}

bool is_control(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* A string for the text report: control bytes become '?' so that nothing can end
 * a row early or forge one. Appended in runs between them. */
void append_text(std::string &out, const std::string &s)
{
	const char *p = s.data(), *end = p + s.size();

	while (p < end) {
		const char *q = p;

		while (q < end && !is_control((unsigned char)*q))
			q++;
		out.append(p, (size_t)(q - p));
		if (q < end) {
			out += '?';
			q++;
		}
		p = q;
	}
}

void append_json_string(std::string &out, const std::string &s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)s.data();
	size_t n = s.size(), i = 0;

	out += '"';
	while (i < n) {
		unsigned char c = p[i];

		if (c == '"' || c == '\\') {
			out += '\\';
			out += (char)c;
			i++;
		} else if (c < 0x20) {
			out += "\\u00";
			out += hex[c >> 4];
			out += hex[c & 15];
			i++;
		} else {
			size_t bad = 0, len = utf8_seq(p + i, n - i, &bad);

			if (len) {
				out.append((const char *)p + i, len);
				i += len;
			} else {
				out += "\\ufffd";
				i += bad;
			}
		}
	}
	out += '"';
}

void append_label_value(std::string &out, const std::string &s)
{
	const unsigned char *p = (const unsigned char *)s.data();
	size_t n = s.size(), i = 0;

	out += '"';
	while (i < n) {
		unsigned char c = p[i];

		if (c == '"' || c == '\\') {
			out += '\\';
			out += (char)c;
			i++;
		} else if (c == '\n') {
			out += "\\n";
			i++;
		} else {
			size_t bad = 0, len = utf8_seq(p + i, n - i, &bad);

			if (len) {
				out.append((const char *)p + i, len);
				i += len;
			} else {
				out += "\xef\xbf\xbd";	/* U+FFFD */
				i += bad;
			}
		}
	}
	out += '"';
}

void append_label(std::string &out, const char *name, const std::string &value)
{
	if (out.size() > 1)
		out += ',';
	out += name;
	out += '=';
	append_label_value(out, value);
}

} /* namespace */

std::vector<site_row> merge_rows(const std::vector<site_row> &rows, bool keep_pid)
{
	std::vector<site_row> in(rows);
	std::vector<site_row> out;

	if (!keep_pid) {
		for (site_row &r : in) {
			r.pid = 0;
			r.comm.clear();
		}
	}
	std::stable_sort(in.begin(), in.end(), site_less);
	out.reserve(in.size());
	for (site_row &r : in) {
		if (!out.empty() && site_cmp(out.back(), r) == 0) {
			site_row &m = out.back();

			m.bytes = saturating_add(m.bytes, r.bytes);
			m.calls = saturating_add(m.calls, r.calls);
			m.inaccurate = m.inaccurate || r.inaccurate;
			if (m.comm.empty())
				m.comm = r.comm;
		} else {
			out.push_back(std::move(r));
		}
	}
	return out;
}

void sort_rows(std::vector<site_row> &rows, sort_key key)
{
	switch (key) {
	case sort_key::site:
		std::stable_sort(rows.begin(), rows.end(), site_less);
		break;
	case sort_key::bytes:
		std::stable_sort(rows.begin(), rows.end(), [](const site_row &a, const site_row &b) {
			int64_t x = clamp0(a.bytes), y = clamp0(b.bytes);

			return x != y ? x > y : site_less(a, b);
		});
		break;
	case sort_key::calls:
		std::stable_sort(rows.begin(), rows.end(), [](const site_row &a, const site_row &b) {
			int64_t x = clamp0(a.calls), y = clamp0(b.calls);

			return x != y ? x > y : site_less(a, b);
		});
		break;
	}
}

std::string human_size(int64_t bytes)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB" };
	unsigned long long v = (unsigned long long)clamp0(bytes);
	char buf[32];
	int n;

	if (v < 1024) {
		n = snprintf(buf, sizeof(buf), "%lluB", v);
		return std::string(buf, (size_t)n);
	}

	unsigned k = 1;

	while (k < 6 && v >> (10 * (k + 1)))
		k++;

	__extension__ typedef unsigned __int128 u128;	/* v * 100 needs 70 bits */
	u128 div, hundredths;

	for (;;) {
		div = (u128)1 << (10 * k);
		hundredths = ((u128)v * 100 + div / 2) / div;
		if (hundredths < 102400 || k == 6)
			break;
		k++;	/* 1023.995 and up rounds to 1024.00: use the next unit */
	}
	n = snprintf(buf, sizeof(buf), "%llu.%02llu%s",
		     (unsigned long long)(hundredths / 100),
		     (unsigned long long)(hundredths % 100), units[k]);
	return std::string(buf, (size_t)n);
}

void render_text(std::string &out, const std::vector<site_row> &rows, bool human)
{
	out += "allocinfo - version: 2.0\n";
	out += "#     <size>  <calls> <tag info>\n";
	out.reserve(out.size() + rows.size() * 96);
	for (const site_row &r : rows) {
		/* "%12lli %8llu " of the clamped (never negative) values */
		if (human) {
			std::string size = human_size(r.bytes);

			if (size.size() < 12)
				out.append(12 - size.size(), ' ');
			out += size;
		} else {
			append_padded(out, (unsigned long long)clamp0(r.bytes), 12);
		}
		out += ' ';
		append_padded(out, (unsigned long long)clamp0(r.calls), 8);
		out += ' ';
		append_text(out, r.file);
		out += ':';
		append_u64(out, r.line);
		if (!r.module.empty()) {
			out += " [";
			append_text(out, r.module);
			out += ']';
		}
		out += " func:";
		append_text(out, r.func);
		if (!r.via.empty()) {
			out += " via:";
			append_text(out, r.via);
		}
		if (!r.allocator.empty()) {
			out += " allocator:";
			append_text(out, r.allocator);
		}
		if (r.unloaded)
			out += " unloaded:yes";
		if (r.inaccurate)
			out += " accurate:no";
		if (!r.user.empty()) {
			out += " user:";
			append_text(out, r.user);
		}
		out += " \n";	/* the kernel ends every row with a space, too */
	}
}

void render_json(std::string &out, const std::vector<site_row> &rows, int counting)
{
	int pid = rows.empty() ? 0 : rows[0].pid;

	for (const site_row &r : rows) {
		if (r.pid != pid) {
			pid = 0;
			break;
		}
	}
	out += "{\"version\":\"2.0\"";
	if (pid) {
		out += ",\"pid\":";
		append_i64(out, pid);
	}
	if (counting >= 0)
		out += counting ? ",\"counting\":true" : ",\"counting\":false";
	out += ",\"sites\":[";
	for (size_t i = 0; i < rows.size(); i++) {
		const site_row &r = rows[i];

		out += i ? ",\n" : "\n";
		out += "{\"module\":";
		append_json_string(out, r.module);
		out += ",\"file\":";
		append_json_string(out, r.file);
		out += ",\"line\":";
		append_u64(out, r.line);
		out += ",\"func\":";
		append_json_string(out, r.func);
		if (!r.full_func.empty()) {
			out += ",\"full_func\":";
			append_json_string(out, r.full_func);
		}
		if (!r.via.empty()) {
			out += ",\"via\":";
			append_json_string(out, r.via);
		}
		if (!r.allocator.empty()) {
			out += ",\"allocator\":";
			append_json_string(out, r.allocator);
		}
		out += ",\"bytes\":";
		append_i64(out, clamp0(r.bytes));
		out += ",\"calls\":";
		append_i64(out, clamp0(r.calls));
		out += r.unloaded ? ",\"unloaded\":true" : ",\"unloaded\":false";
		out += r.inaccurate ? ",\"accurate\":false" : ",\"accurate\":true";
		if (!r.user.empty()) {
			out += ",\"user\":";
			append_json_string(out, r.user);
		}
		if (r.pid) {
			out += ",\"pid\":";
			append_i64(out, r.pid);
		}
		if (!r.comm.empty()) {
			out += ",\"comm\":";
			append_json_string(out, r.comm);
		}
		out += '}';
	}
	if (!rows.empty())
		out += '\n';
	out += "]}\n";
}

void render_prometheus(std::string &out, const std::vector<site_row> &rows)
{
	std::vector<std::string> labels;

	labels.reserve(rows.size());
	for (const site_row &r : rows) {
		std::string l = "{";
		char num[16];

		snprintf(num, sizeof(num), "%u", r.line);
		append_label(l, "module", r.module);
		append_label(l, "file", r.file);
		append_label(l, "line", num);
		append_label(l, "func", r.func);
		if (!r.via.empty())
			append_label(l, "via", r.via);
		if (!r.allocator.empty())
			append_label(l, "allocator", r.allocator);
		if (r.unloaded)
			append_label(l, "unloaded", "yes");
		if (!r.user.empty())
			append_label(l, "user", r.user);
		if (r.pid) {
			snprintf(num, sizeof(num), "%d", r.pid);
			append_label(l, "pid", num);
		}
		if (!r.comm.empty())
			append_label(l, "comm", r.comm);
		l += "} ";
		labels.push_back(std::move(l));
	}

	out += "# HELP allocinfo_live_bytes Bytes currently allocated from a call site and not yet freed.\n";
	out += "# TYPE allocinfo_live_bytes gauge\n";
	for (size_t i = 0; i < rows.size(); i++) {
		out += "allocinfo_live_bytes";
		out += labels[i];
		append_i64(out, clamp0(rows[i].bytes));
		out += '\n';
	}
	out += "# HELP allocinfo_live_allocations Allocations made at a call site and not yet freed.\n";
	out += "# TYPE allocinfo_live_allocations gauge\n";
	for (size_t i = 0; i < rows.size(); i++) {
		out += "allocinfo_live_allocations";
		out += labels[i];
		append_i64(out, clamp0(rows[i].calls));
		out += '\n';
	}
}

} /* namespace allocinfo */
