/* SPDX-License-Identifier: MIT */
/*
 * allocinfod's log: stderr while in the foreground, syslog (daemon facility) once
 * detached. Safe to call from any thread.
 */
#ifndef ALLOCINFOD_LOG_H
#define ALLOCINFOD_LOG_H

#include <syslog.h>

namespace allocinfod {

/* Switches the log to syslog (after detaching). */
void log_to_syslog();

/* One line; level is a syslog priority (LOG_ERR, LOG_WARNING, LOG_INFO). */
void log_msg(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

} /* namespace allocinfod */

#endif
