/* SPDX-License-Identifier: MIT */
/* allocinfod's FUSE filesystem and the mountpoint helpers (see allocinfod_fs.h). */
#define FUSE_USE_VERSION 31
#include "allocinfod_fs.h"

#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <memory>
#include <new>
#include <vector>

#include "allocinfod_log.h"
#include "allocinfod_report.h"

namespace allocinfod {

namespace {

const char COMBINED[] = "allocinfo";
const char PROBLEMS[] = "problems";

fs_options g_opt;

/* "/1234" -> 1234; 0 for anything that is not a canonical positive pid. */
int pid_of(const char *path)
{
	const char *s = path + 1;
	if (path[0] != '/' || s[0] < '1' || s[0] > '9')
		return 0;
	long v = 0;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return 0;
		v = v * 10 + (*s - '0');
		if (v > INT_MAX)
			return 0;
	}
	return (int)v;
}

void file_attr(struct stat *st, uid_t uid)
{
	st->st_mode = S_IFREG | g_opt.mode;
	st->st_nlink = 1;
	st->st_uid = uid;
	st->st_gid = getegid();
	st->st_size = 0;	/* generated on open, like a /proc file */
	st->st_atime = st->st_mtime = st->st_ctime = time(nullptr);
}

void *fs_init(struct fuse_conn_info *conn, struct fuse_config *cfg)
{
	/* Processes come and go: nothing may be cached by the kernel. */
	cfg->entry_timeout = 0;
	cfg->negative_timeout = 0;
	cfg->attr_timeout = 0;
	cfg->direct_io = 1;
	cfg->kernel_cache = 0;
	return nullptr;
}

int fs_getattr(const char *path, struct stat *st, struct fuse_file_info *fi)
{
	memset(st, 0, sizeof(*st));
	if (strcmp(path, "/") == 0) {
		st->st_mode = S_IFDIR | 0555;
		st->st_nlink = 2;
		st->st_uid = geteuid();
		st->st_gid = getegid();
		st->st_atime = st->st_mtime = st->st_ctime = time(nullptr);
		return 0;
	}
	if (strcmp(path + 1, COMBINED) == 0 || strcmp(path + 1, PROBLEMS) == 0) {
		file_attr(st, geteuid());
		return 0;
	}
	int pid = pid_of(path);
	uid_t uid;
	try {
		if (pid && g_opt.src->process_owner(pid, uid)) {
			file_attr(st, uid);
			return 0;
		}
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
	return -ENOENT;
}

int fs_readdir(const char *path, void *buf, fuse_fill_dir_t fill, off_t off,
	       struct fuse_file_info *fi, enum fuse_readdir_flags flags)
{
	if (strcmp(path, "/") != 0)
		return -ENOTDIR;
	std::vector<int> pids;
	try {
		g_opt.src->pids(pids);
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
	fill(buf, ".", nullptr, 0, (enum fuse_fill_dir_flags)0);
	fill(buf, "..", nullptr, 0, (enum fuse_fill_dir_flags)0);
	fill(buf, COMBINED, nullptr, 0, (enum fuse_fill_dir_flags)0);
	fill(buf, PROBLEMS, nullptr, 0, (enum fuse_fill_dir_flags)0);
	for (int pid : pids) {
		char name[16];
		snprintf(name, sizeof(name), "%d", pid);
		if (fill(buf, name, nullptr, 0, (enum fuse_fill_dir_flags)0))
			break;
	}
	return 0;
}

/* Each problem names a path and a reason: control bytes in them would forge lines. */
void printable(std::string &s)
{
	for (size_t i = 0; i < s.size(); i++)
		if ((unsigned char)s[i] < ' ' && s[i] != '\n')
			s[i] = '?';
}

int fs_open(const char *path, struct fuse_file_info *fi)
{
	if ((fi->flags & O_ACCMODE) != O_RDONLY)
		return -EACCES;
	try {
		std::unique_ptr<std::string> text(new std::string());
		if (strcmp(path + 1, COMBINED) == 0) {
			g_opt.src->combined(*text);
		} else if (strcmp(path + 1, PROBLEMS) == 0) {
			g_opt.src->problems(*text);
			printable(*text);
		} else {
			int pid = pid_of(path);
			if (!pid || !g_opt.src->process(pid, *text))
				return -ENOENT;
		}
		fi->fh = (uint64_t)(uintptr_t)text.release();	/* freed by fs_release() */
	} catch (const std::bad_alloc &) {
		return -ENOMEM;
	}
	fi->direct_io = 1;	/* the size is known only now: reads go past st_size */
	fi->keep_cache = 0;
	return 0;
}

int fs_read(const char *path, char *buf, size_t size, off_t off, struct fuse_file_info *fi)
{
	const std::string *text = (const std::string *)(uintptr_t)fi->fh;
	if (off < 0)
		return -EINVAL;
	if ((uint64_t)off >= text->size())
		return 0;
	size_t n = text->size() - (size_t)off;
	if (n > size)
		n = size;
	memcpy(buf, text->data() + off, n);
	return (int)n;
}

int fs_release(const char *path, struct fuse_file_info *fi)
{
	delete (std::string *)(uintptr_t)fi->fh;
	return 0;
}

/* Undoes the escapes of /proc/self/mountinfo (\040 for a space, ...). */
std::string unescape(const char *s)
{
	std::string r;
	for (; *s; s++) {
		if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' &&
		    s[3] >= '0' && s[3] <= '7') {
			r += (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
			s += 3;
		} else {
			r += *s;
		}
	}
	return r;
}

/* Whether dir is the mountpoint of an allocinfod filesystem. */
bool served_by_allocinfod(const std::string &dir)
{
	FILE *f = fopen("/proc/self/mountinfo", "re");
	if (!f)
		return false;
	char *line = nullptr;
	size_t cap = 0;
	bool found = false;
	while (!found && getline(&line, &cap, f) > 0) {
		/* id parent major:minor root mountpoint options [optional...] - fstype source */
		char mnt[PATH_MAX * 4 + 1], fstype[256];
		if (sscanf(line, "%*s %*s %*s %*s %16384s", mnt) != 1)
			continue;
		const char *dash = strstr(line, " - ");
		if (!dash || sscanf(dash + 3, "%255s", fstype) != 1)
			continue;
		found = unescape(mnt) == dir && strcmp(fstype, "fuse.allocinfod") == 0;
	}
	free(line);
	fclose(f);
	return found;
}

/* fusermount3 -u -z dir, for when umount2() is not allowed (not root). */
bool fusermount_lazy(const std::string &dir)
{
	pid_t pid = fork();
	if (pid < 0)
		return false;
	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);
		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
		}
		execlp("fusermount3", "fusermount3", "-u", "-z", "--", dir.c_str(), (char *)nullptr);
		_exit(127);
	}
	int status;
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return false;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

} /* namespace */

struct fuse *fs_new(const fs_options &opt, bool allow_other)
{
	static struct fuse_operations ops;
	ops.init = fs_init;
	ops.getattr = fs_getattr;
	ops.readdir = fs_readdir;
	ops.open = fs_open;
	ops.read = fs_read;
	ops.release = fs_release;
	g_opt = opt;

	/* default_permissions: the kernel checks the files' modes and owners, so the
	 * mode given is what is enforced; allow_other lets other users try at all. */
	std::string mopts = "fsname=allocinfod,subtype=allocinfod,ro,default_permissions";
	if (allow_other)
		mopts += ",allow_other";
	char prog[] = "allocinfod", o[] = "-o";
	std::vector<char> mo(mopts.begin(), mopts.end());
	mo.push_back('\0');
	char *argv[] = {prog, o, mo.data(), nullptr};
	struct fuse_args args = FUSE_ARGS_INIT(3, argv);
	struct fuse *f = fuse_new(&args, &ops, sizeof(ops), nullptr);
	fuse_opt_free_args(&args);
	return f;
}

bool fs_prepare_mountpoint(const std::string &dir, std::string &why)
{
	struct stat st;
	if (stat(dir.c_str(), &st) != 0) {
		if (errno == ENOTCONN) {
			/* The server of a mount here died (kill -9): detach its corpse. */
			if (umount2(dir.c_str(), MNT_DETACH) != 0) {
				int err = errno;
				if (!fusermount_lazy(dir)) {
					why = dir + ": cannot unmount a stale mount: " + strerror(err);
					return false;
				}
			}
			log_msg(LOG_NOTICE, "%s: unmounted the stale mount of a dead allocinfod",
				dir.c_str());
		} else if (errno == ENOENT) {
			if (mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
				why = dir + ": " + strerror(errno);
				return false;
			}
		} else {
			why = dir + ": " + strerror(errno);
			return false;
		}
		if (stat(dir.c_str(), &st) != 0) {
			why = dir + ": " + strerror(errno);
			return false;
		}
	}
	if (!S_ISDIR(st.st_mode)) {
		why = dir + ": not a directory";
		return false;
	}
	char real[PATH_MAX];
	if (!realpath(dir.c_str(), real)) {
		why = dir + ": " + strerror(errno);
		return false;
	}
	if (served_by_allocinfod(real)) {
		why = dir + ": already served by a running allocinfod";
		return false;
	}
	return true;
}

bool fs_make_link(const std::string &link, const std::string &target, std::string &why)
{
	struct stat st;
	if (lstat(link.c_str(), &st) == 0) {
		if (!S_ISLNK(st.st_mode)) {
			why = link + ": exists and is not a symbolic link";
			return false;
		}
		/* A link left by a killed daemon: replace it atomically. */
		std::string tmp = link + ".allocinfod-" + std::to_string(getpid());
		unlink(tmp.c_str());
		if (symlink(target.c_str(), tmp.c_str()) != 0 ||
		    rename(tmp.c_str(), link.c_str()) != 0) {
			why = link + ": " + strerror(errno);
			unlink(tmp.c_str());
			return false;
		}
		return true;
	}
	if (symlink(target.c_str(), link.c_str()) != 0) {
		why = link + ": " + strerror(errno);
		return false;
	}
	return true;
}

void fs_remove_link(const std::string &link, const std::string &target)
{
	char buf[PATH_MAX];
	ssize_t n = readlink(link.c_str(), buf, sizeof(buf) - 1);
	if (n < 0)
		return;
	buf[n] = '\0';
	if (target == buf)
		unlink(link.c_str());
}

} /* namespace allocinfod */
