/* SPDX-License-Identifier: MIT */
/*
 * The filesystem allocinfod mounts (FUSE, read-only, every file generated at open):
 *
 *   MOUNTPOINT/allocinfo   all live processes, equal lines summed
 *   MOUNTPOINT/<pid>       one process (owned by the owner of its store)
 *   MOUNTPOINT/problems    stores that could not be read, one per line
 *
 * and the helpers around mounting it: recovering a stale mount left by a killed
 * daemon, and the symlink (/run/allocinfo) that points at MOUNTPOINT/allocinfo.
 */
#ifndef ALLOCINFOD_FS_H
#define ALLOCINFOD_FS_H

#include <sys/types.h>

#include <string>

struct fuse;

namespace allocinfod {

class reports;

struct fs_options {
	mode_t mode = 0400;		/* of every served file */
	reports *src = nullptr;
};

/* A FUSE handle for the filesystem above, not yet mounted; nullptr on error. */
struct fuse *fs_new(const fs_options &opt, bool allow_other);

/*
 * Makes dir usable as a mountpoint: creates it when missing, lazily unmounts a stale
 * FUSE mount (ENOTCONN: its server died), and refuses a directory on which a live
 * allocinfod is mounted. On error returns false with the reason in why.
 */
bool fs_prepare_mountpoint(const std::string &dir, std::string &why);

/* Points link at target, replacing an existing symlink but nothing else. */
bool fs_make_link(const std::string &link, const std::string &target, std::string &why);
/* Removes link if it still points at target. */
void fs_remove_link(const std::string &link, const std::string &target);

} /* namespace allocinfod */

#endif
