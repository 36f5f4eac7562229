/* SPDX-License-Identifier: MIT */
/* The file behind a store and the descriptor kept for readers (see store_file.h). */
#include "store_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "nocancel.h"
#include "options.h"

namespace allocinfo {

namespace {

/* The kept descriptor and the file it held when kept: a number is only ever closed
 * or replaced while it still holds that file. */
int g_fd = -1;
dev_t g_dev;
ino_t g_ino;

void remember(int fd)
{
	struct stat st;
	if (fstat(fd, &st) != 0) {
		nocancel::close(fd);
		g_fd = -1;
		return;
	}
	g_fd = fd;
	g_dev = st.st_dev;
	g_ino = st.st_ino;
}

/* fd moved to STORE_FD_MIN or above when the descriptor limit allows. */
int place_high(int fd)
{
	int high = fcntl(fd, F_DUPFD_CLOEXEC, STORE_FD_MIN);
	if (high < 0)
		return fd;	/* a low limit: the number it has, close-on-exec already */
	nocancel::close(fd);
	return high;
}

/* True while g_fd still holds the file it held when kept. */
bool still_ours()
{
	struct stat st;
	return g_fd >= 0 && fstat(g_fd, &st) == 0 && st.st_dev == g_dev && st.st_ino == g_ino;
}

} /* namespace */

const char *store_dir()
{
	const char *d = find_env("ALLOCINFO_STORE_DIR");
	return d && d[0] == '/' ? d : nullptr;
}

int store_file_open(pid_t pid, size_t size, char *path, size_t path_len)
{
	const char *dir = store_dir();
	int fd;
	path[0] = '\0';
	if (!dir) {
		fd = memfd_create(ALLOCINFO_STORE_MEMFD_NAME, MFD_CLOEXEC);
		if (fd < 0)
			return -1;
	} else {
		int n = snprintf(path, path_len, "%s/allocinfo-%d", dir, (int)pid);
		if (n < 0 || (size_t)n >= path_len) {
			path[0] = '\0';
			errno = ENAMETOOLONG;
			return -1;
		}
		/* A store left by an earlier program image of this pid (exec) is replaced. */
		unlink(path);
		fd = nocancel::open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return -1;
	}
	if (ftruncate(fd, (off_t)size) != 0) {
		int e = errno;
		nocancel::close(fd);
		if (path[0])
			unlink(path);
		errno = e;
		return -1;
	}
	return fd;
}

void store_file_keep(int fd, const char *path)
{
	if (path[0]) {
		nocancel::close(fd);
		return;
	}
	remember(place_high(fd));
}

void store_file_keep_child(int fd, const char *path)
{
	bool inherited = still_ours();
	if (path[0]) {
		nocancel::close(fd);
		return;
	}
	if (inherited && dup3(fd, g_fd, O_CLOEXEC) == g_fd) {
		nocancel::close(fd);
		remember(g_fd);
		return;
	}
	/* The number is the program's now (or there was none): never touch it. */
	g_fd = -1;
	remember(place_high(fd));
}

void store_file_drop_inherited()
{
	if (still_ours())
		nocancel::close(g_fd);
	g_fd = -1;
}

int store_file_fd()
{
	return g_fd;
}

} /* namespace allocinfo */
