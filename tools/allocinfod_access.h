/* SPDX-License-Identifier: MIT */
/*
 * Who may see what allocinfod serves, outside the FUSE mount (where the kernel
 * checks the files' modes): the Prometheus endpoint applies the same rule as the
 * files. A client that could read the combined file (owner: the daemon's user,
 * group: its group, mode --mode) gets every process's series; any other gets the
 * series of the processes whose own file it could read (owner: the store's owner).
 * The client of a loopback connection is the owner of its socket, found in
 * /proc/net/tcp{,6}; a client that cannot be identified (another machine) has the
 * rights of "others" in the mode.
 */
#ifndef ALLOCINFOD_ACCESS_H
#define ALLOCINFOD_ACCESS_H

#include <sys/types.h>

#include <vector>

namespace allocinfod {

struct viewer {
	bool known = false;		/* false: has the rights of others */
	uid_t uid = 0;
	std::vector<gid_t> gids;	/* the user's primary and supplementary groups */
};

/* Whether v could read a file of this owner, group and mode, as the kernel decides
 * for a process with v's ids and no capabilities (root reads everything). */
bool viewer_may_read(const viewer &v, uid_t owner, gid_t group, mode_t mode);

/* The user at the other end of the connected TCP socket fd, when it is a socket of
 * this machine; unknown otherwise. */
viewer peer_of(int fd);

} /* namespace allocinfod */

#endif
