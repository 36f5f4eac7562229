/* SPDX-License-Identifier: MIT */
/*
 * Opening a file that a store (hostile input) names, or that a user points a reader
 * at: only a regular file is opened, and the open never blocks (a FIFO would wait
 * for a writer forever, a terminal could become the reader's controlling terminal,
 * and a device may act on open). The file is checked by stat() first, opened with
 * O_NONBLOCK | O_NOCTTY, and checked again on the descriptor, which must be the
 * file that was checked.
 */
#ifndef ALLOCINFO_SAFE_OPEN_H
#define ALLOCINFO_SAFE_OPEN_H

#include <stdint.h>
#include <sys/stat.h>

#include <string>

namespace allocinfo {

/*
 * A read-only, close-on-exec descriptor of the regular file at path, with its
 * status in *st; -1 otherwise, with errno set (EINVAL for a file that is not a
 * regular one, or was replaced while it was being opened). nofollow refuses a
 * symbolic link as the last component.
 */
int open_regular(const char *path, struct stat *st, bool nofollow = false);

/*
 * Reads all of fd into data, at most max bytes: a larger file is refused
 * (false, errno EFBIG) after reading max + 1 bytes. Works on pipes too.
 */
bool read_bounded(int fd, std::string &data, uint64_t max);

} /* namespace allocinfo */

#endif
