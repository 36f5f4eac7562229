/* SPDX-License-Identifier: MIT */
/* allocinfod's log (see allocinfod_log.h). */
#include "allocinfod_log.h"

#include <stdarg.h>
#include <stdio.h>

#include <atomic>

namespace allocinfod {

namespace {
std::atomic<bool> use_syslog{false};
}

void log_to_syslog()
{
	openlog("allocinfod", LOG_PID | LOG_NDELAY, LOG_DAEMON);
	use_syslog = true;
}

void log_msg(int level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	if (use_syslog)
		syslog(level, "%s", line);
	else
		fprintf(stderr, "allocinfod: %s\n", line);	/* one write: lines never mix */
}

} /* namespace allocinfod */
