/* SPDX-License-Identifier: MIT */
/* Opening files named by hostile input without blocking (see safe_open.h). */
#include "safe_open.h"

#include <errno.h>
#include <fcntl.h>
#include <unistd.h>

namespace allocinfo {

int open_regular(const char *path, struct stat *st, bool nofollow)
{
	struct stat before;
	if ((nofollow ? lstat(path, &before) : stat(path, &before)) != 0)
		return -1;
	if (!S_ISREG(before.st_mode)) {
		errno = EINVAL;
		return -1;
	}
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC |
			     (nofollow ? O_NOFOLLOW : 0));
	if (fd < 0)
		return -1;
	if (fstat(fd, st) != 0 || !S_ISREG(st->st_mode) || st->st_dev != before.st_dev ||
	    st->st_ino != before.st_ino) {
		close(fd);
		errno = EINVAL;
		return -1;
	}
	return fd;
}

bool read_bounded(int fd, std::string &data, uint64_t max)
{
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (n == 0)
			return true;
		if ((uint64_t)n > max - data.size()) {
			errno = EFBIG;
			return false;
		}
		data.append(buf, (size_t)n);
	}
}

} /* namespace allocinfo */
