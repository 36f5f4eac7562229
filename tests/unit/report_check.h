/* SPDX-License-Identifier: MIT */
/* Test helper: checks that a text report is well formed (the kernel's format). */
#ifndef ALLOCINFO_TEST_REPORT_CHECK_H
#define ALLOCINFO_TEST_REPORT_CHECK_H

#include <regex.h>
#include <string.h>

/* NULL when well formed, else what is wrong. */
static inline const char *report_check(const char *text)
{
	static const char header[] = "allocinfo - version: 2.0\n#     <size>  <calls> <tag info>\n";
	if (strncmp(text, header, sizeof(header) - 1) != 0)
		return "bad header";
	regex_t re;
	if (regcomp(&re, "^ *[0-9]+ +[0-9]+ [^ ]+:[0-9]+ \\[[^] ]+\\] func:[^ ]+( [a-z]+:[a-z]+)* $",
		    REG_EXTENDED | REG_NOSUB) != 0)
		return "regcomp";
	const char *why = NULL;
	char line[8192];
	for (const char *l = text + sizeof(header) - 1; *l && !why;) {
		const char *nl = strchr(l, '\n');
		if (!nl) {
			why = "unterminated last line";
			break;
		}
		size_t n = (size_t)(nl - l);
		if (n >= sizeof(line)) {
			why = "line too long";
			break;
		}
		memcpy(line, l, n);
		line[n] = '\0';
		/* the columns: %12lli %8llu */
		if (n < 22 || line[12] != ' ' || line[21] != ' ' || regexec(&re, line, 0, NULL, 0) != 0)
			why = "bad line";
		l = nl + 1;
	}
	regfree(&re);
	return why;
}

#endif
