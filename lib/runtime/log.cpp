/* SPDX-License-Identifier: MIT */
/*
 * Messages to stderr. Formats into a stack buffer and write(2)s it, so it can be
 * used from inside malloc and from signal-unsafe places without allocating.
 */
#include "internal.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <unistd.h>

#include "nocancel.h"

namespace allocinfo {

void log_message(const char *fmt, ...)
{
	char buf[512];
	int saved = errno;
	int n = snprintf(buf, sizeof(buf), "allocinfo: ");
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	size_t len = (size_t)n + ((size_t)m < sizeof(buf) - n - 1 ? (size_t)m : sizeof(buf) - n - 2);
	buf[len++] = '\n';
	ssize_t w = nocancel::write(STDERR_FILENO, buf, len);
	(void)w;
	errno = saved;
}

} /* namespace allocinfo */
