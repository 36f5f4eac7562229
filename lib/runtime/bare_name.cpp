/* SPDX-License-Identifier: MIT */
/* A C++ function's bare qualified name, for matching wrappers (see bare_name.h). */
#include "bare_name.h"

#include <string.h>

namespace allocinfo {

namespace {

constexpr char ANON[] = "(anonymous namespace)";

/* The parameter list's '(': the first at template depth 0 that does not open
 * "(anonymous namespace)"; null when there is none. */
const char *parameters_of(const char *s)
{
	int depth = 0;
	for (const char *c = s; *c; c++) {
		if (depth == 0 && strncmp(c, "operator", 8) == 0) {
			c += 8;	/* "operator<", "operator()": not brackets */
			if (c[0] == '(' && c[1] == ')')
				c += 2;
			while (*c && *c != '(')
				c++;
			return *c ? c : nullptr;
		}
		if (*c == '<')
			depth++;
		else if (*c == '>' && depth > 0)
			depth--;
		else if (*c == '(' && depth == 0) {
			if (strncmp(c, ANON, sizeof(ANON) - 1) == 0) {
				c += sizeof(ANON) - 2;
				continue;
			}
			return c;
		}
	}
	return nullptr;
}

} /* namespace */

void cxx_bare_name(const char *pretty, char *out, size_t len)
{
	if (!len)
		return;
	const char *end = parameters_of(pretty);
	if (!end) {	/* a plain C name */
		strncpy(out, pretty, len - 1);
		out[len - 1] = '\0';
		return;
	}
	/* The name starts after the last blank at template depth 0 before it (the
	 * return type's end), "(anonymous namespace)" aside. */
	const char *start = pretty;
	int depth = 0;
	for (const char *c = end; c > pretty; c--) {
		char b = c[-1];
		if (b == '>')
			depth++;
		else if (b == '<' && depth > 0)
			depth--;
		else if (b == ' ' && depth == 0) {
			if (c - pretty >= 11 && strncmp(c - 11, "(anonymous ", 11) == 0)
				continue;
			if (c - pretty >= 9 && strncmp(c - 9, "operator ", 9) == 0)
				continue;	/* "operator new" */
			start = c;
			break;
		}
	}
	/* Copied without template arguments. */
	size_t n = 0;
	depth = 0;
	for (const char *c = start; c < end && n + 1 < len; c++) {
		if (depth == 0 && strncmp(c, "operator", 8) == 0) {
			while (c < end && n + 1 < len)	/* the operator's own brackets */
				out[n++] = *c++;
			break;
		}
		if (*c == '<') {
			depth++;
			continue;
		}
		if (*c == '>' && depth > 0) {
			depth--;
			continue;
		}
		if (depth == 0)
			out[n++] = *c;
	}
	out[n] = '\0';
}

namespace {

/* A <source-name> (length, then identifier) at *s into out at *n: false when *s is
 * not one or it does not fit. */
bool source_name(const char *&s, char *out, size_t len, size_t &n)
{
	if (*s < '1' || *s > '9')
		return false;
	size_t id = 0;
	while (*s >= '0' && *s <= '9') {
		id = id * 10 + (size_t)(*s++ - '0');
		if (id > 255)
			return false;
	}
	if (strnlen(s, id) != id)
		return false;
	const char *text = s;
	size_t text_len = id;
	if (id > 10 && strncmp(s, "_GLOBAL__N", 10) == 0) {
		text = ANON;
		text_len = sizeof(ANON) - 1;
	}
	if (n + text_len + 1 > len)
		return false;
	memcpy(out + n, text, text_len);
	n += text_len;
	out[n] = '\0';
	s += id;
	return true;
}

} /* namespace */

const char *mangled_bare_name(const char *symbol, char *out, size_t len)
{
	if (!len || symbol[0] != '_' || symbol[1] != 'Z')
		return nullptr;
	const char *s = symbol + 2;
	if (*s == 'L')	/* internal linkage */
		s++;
	size_t n = 0;
	if (*s != 'N')
		return source_name(s, out, len, n) ? s : nullptr;
	s++;
	while (*s == 'r' || *s == 'V' || *s == 'K' || *s == 'R' || *s == 'O')
		s++;	/* a member function's qualifiers */
	for (bool first = true; *s != 'E'; first = false) {
		if (!first) {
			if (n + 3 > len)
				return nullptr;
			memcpy(out + n, "::", 3);
			n += 2;
		}
		if (!source_name(s, out, len, n))
			return nullptr;
	}
	return n ? s + 1 : nullptr;
}

} /* namespace allocinfo */
