/* SPDX-License-Identifier: MIT */
/* Who is at the other end of a metrics connection, and what they may read. */
#include "allocinfod_access.h"

#include <arpa/inet.h>
#include <grp.h>
#include <netinet/in.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>
#include <string>

namespace allocinfod {

namespace {

/* An address as /proc/net/tcp{,6} prints it: the words of the address as the
 * kernel holds them, in hex, then the port. */
std::string proc_net_address(const struct sockaddr_storage &ss)
{
	char buf[64];
	if (ss.ss_family == AF_INET) {
		const auto *a = (const struct sockaddr_in *)&ss;
		snprintf(buf, sizeof(buf), "%08X:%04X", a->sin_addr.s_addr, ntohs(a->sin_port));
	} else {
		const auto *a = (const struct sockaddr_in6 *)&ss;
		uint32_t w[4];
		memcpy(w, &a->sin6_addr, sizeof(w));
		snprintf(buf, sizeof(buf), "%08X%08X%08X%08X:%04X", w[0], w[1], w[2], w[3],
			 ntohs(a->sin6_port));
	}
	return buf;
}

/* The uid owning the socket whose local address is `local` and remote `remote`. */
bool socket_owner(const char *table, const std::string &local, const std::string &remote,
		  uid_t &uid)
{
	FILE *f = fopen(table, "re");
	if (!f)
		return false;
	char line[512];
	bool found = false;
	/* Bounded: the table of a busy machine is long, but this is a scrape. */
	for (int n = 0; !found && n < 1000000 && fgets(line, sizeof(line), f); n++) {
		char l[64], r[64];
		unsigned long u;
		if (sscanf(line, " %*s %63s %63s %*s %*s %*s %*s %lu", l, r, &u) == 3 &&
		    local == l && remote == r) {
			uid = (uid_t)u;
			found = true;
		}
	}
	fclose(f);
	return found;
}

} /* namespace */

bool viewer_may_read(const viewer &v, uid_t owner, gid_t group, mode_t mode)
{
	if (!v.known)
		return mode & S_IROTH;
	if (v.uid == 0)
		return true;
	if (v.uid == owner)
		return mode & S_IRUSR;
	if (std::find(v.gids.begin(), v.gids.end(), group) != v.gids.end())
		return mode & S_IRGRP;
	return mode & S_IROTH;
}

viewer peer_of(int fd)
{
	viewer v;
	struct sockaddr_storage self, peer;
	socklen_t ls = sizeof(self), lp = sizeof(peer);
	if (getsockname(fd, (struct sockaddr *)&self, &ls) != 0 ||
	    getpeername(fd, (struct sockaddr *)&peer, &lp) != 0 || self.ss_family != peer.ss_family)
		return v;
	/* The client's socket: its local address is our peer, its remote one us. */
	const char *table = peer.ss_family == AF_INET ? "/proc/net/tcp" :
			    peer.ss_family == AF_INET6 ? "/proc/net/tcp6" : nullptr;
	uid_t uid;
	if (!table || !socket_owner(table, proc_net_address(peer), proc_net_address(self), uid))
		return v;
	v.known = true;
	v.uid = uid;
	struct passwd pw, *res = nullptr;
	char buf[4096];
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res) {
		int n = 64;
		std::vector<gid_t> g((size_t)n);
		if (getgrouplist(pw.pw_name, pw.pw_gid, g.data(), &n) < 0 && n > 64) {
			g.resize((size_t)n);
			getgrouplist(pw.pw_name, pw.pw_gid, g.data(), &n);
		}
		g.resize(n > 0 ? (size_t)n : 0);
		v.gids = g;
	}
	return v;
}

} /* namespace allocinfod */
