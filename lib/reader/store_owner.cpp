/* SPDX-License-Identifier: MIT */
/* The user a store speaks for, and what that user may read (see store_owner.h). */
#include "store_owner.h"

#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <algorithm>

#include "procfs.h"

namespace allocinfo {

namespace {

/* The name of uid as one word, else its number. */
std::string user_name(uid_t uid)
{
	struct passwd pw, *res = nullptr;
	char buf[4096];
	if (getpwuid_r(uid, &pw, buf, sizeof(buf), &res) == 0 && res && pw.pw_name[0]) {
		std::string name = pw.pw_name;
		bool plain = name.size() <= 64 &&
			     std::all_of(name.begin(), name.end(), [](char c) {
				     return (unsigned char)c > ' ' && c != 0x7f && c != ':';
			     });
		if (plain)
			return name;
	}
	return std::to_string(uid);
}

/* The first unsigned numbers after "\nTag:" in a /proc status text. */
std::vector<unsigned long> numbers_of(const char *text, const char *tag, size_t max)
{
	std::vector<unsigned long> v;
	const char *p = strstr(text, tag);
	if (!p)
		return v;
	p += strlen(tag);
	while (v.size() < max) {
		while (*p == ' ' || *p == '\t')
			p++;
		if (*p < '0' || *p > '9')
			break;
		char *end;
		v.push_back(strtoul(p, &end, 10));
		p = end;
	}
	return v;
}

bool allowed(const store_owner &who, const struct stat &st, unsigned bit)
{
	if (st.st_uid == who.uid)
		return st.st_mode & (bit << 6);
	if (std::find(who.gids.begin(), who.gids.end(), st.st_gid) != who.gids.end())
		return st.st_mode & (bit << 3);
	return st.st_mode & bit;
}

} /* namespace */

store_owner make_store_owner(uid_t uid, const std::vector<gid_t> &gids)
{
	store_owner o;
	o.known = true;
	o.uid = uid;
	o.gids = gids;
	o.user = uid == 0 ? std::string() : user_name(uid);
	o.key = std::to_string(uid);
	for (gid_t g : gids)
		o.key += "," + std::to_string(g);
	return o;
}

bool read_store_owner(int pid, store_owner &out)
{
	char path[64], buf[8192];
	snprintf(path, sizeof(path), "/proc/%d/status", pid);
	if (read_small_file(path, buf, sizeof(buf)) <= 0)
		return false;
	std::vector<unsigned long> uids = numbers_of(buf, "\nUid:", 4);
	std::vector<unsigned long> gid = numbers_of(buf, "\nGid:", 4);
	std::vector<unsigned long> groups = numbers_of(buf, "\nGroups:", 65536);
	if (uids.empty() || gid.empty())
		return false;
	std::vector<gid_t> gids(1, (gid_t)gid[0]);
	for (unsigned long g : groups)
		gids.push_back((gid_t)g);
	out = make_store_owner((uid_t)uids[0], gids);
	return true;
}

bool owner_may_read(const store_owner &who, const std::string &path, const struct stat &st)
{
	if (who.is_root())
		return true;
	char *real = realpath(path.c_str(), nullptr);
	if (!real)
		return false;
	std::string canon = real;
	free(real);
	struct stat now;
	if (stat(canon.c_str(), &now) != 0 || now.st_dev != st.st_dev || now.st_ino != st.st_ino ||
	    !allowed(who, st, S_IROTH))
		return false;
	/* Every directory above it: "/", "/a", "/a/b", ... */
	for (size_t slash = 0; slash != std::string::npos; slash = canon.find('/', slash + 1)) {
		std::string dir = slash == 0 ? "/" : canon.substr(0, slash);
		struct stat d;
		if (stat(dir.c_str(), &d) != 0 || !S_ISDIR(d.st_mode) || !allowed(who, d, S_IXOTH))
			return false;
	}
	return true;
}

} /* namespace allocinfo */
