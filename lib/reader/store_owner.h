/* SPDX-License-Identifier: MIT */
/*
 * Whose a store is: the real user of the process it speaks for, with that user's
 * groups, read from /proc (never from the store, which its writer controls). Readers
 * use it twice: a user's caller tags are named only from files that user could read
 * (symbolize.h), and lines of different users are never summed into one (the
 * report's " user:NAME" token, report.h).
 */
#ifndef ALLOCINFO_STORE_OWNER_H
#define ALLOCINFO_STORE_OWNER_H

#include <sys/stat.h>
#include <sys/types.h>

#include <string>
#include <vector>

namespace allocinfo {

struct store_owner {
	/* false: not known, trusted as root (a process reading its own store). */
	bool known = false;
	uid_t uid = 0;			/* the real uid */
	std::vector<gid_t> gids;	/* the real gid, then the supplementary groups */
	std::string user;		/* the name of uid ("" for root): one word */
	std::string key;		/* uid and gids as text: equal keys, equal rights */

	bool is_root() const { return !known || uid == 0; }
};

/* The real uid, real gid and groups of process pid (/proc/<pid>/status); false
 * when they cannot be read. */
bool read_store_owner(int pid, store_owner &out);

/* An owner for uid and gids, with its name looked up (tests, and callers that know
 * the credentials). */
store_owner make_store_owner(uid_t uid, const std::vector<gid_t> &gids);

/* Whether the owner could read the file at path, whose status (as opened) is st:
 * read permission on it and search permission on every directory of its canonical
 * path, by its mode bits (ACLs are not consulted: a file that an ACL alone opens is
 * treated as closed). Root may read anything. */
bool owner_may_read(const store_owner &who, const std::string &path, const struct stat &st);

} /* namespace allocinfo */

#endif
