/* SPDX-License-Identifier: MIT */
/* Writing the names of a BPF store's caller tags into its tags map (bpf_tag_names.h). */
#include "bpf_tag_names.h"

#include <errno.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "store_bpf_format.h"
#include "store_bpf_sys.h"
#include "symbolize.h"

namespace allocinfo {

namespace {

/* A tag's row as the map holds it: the fields cut to their sizes, as the writer
 * cuts them (store_bpf.cpp). */
void fill(allocinfo_bpf_tag &v, const site_row &r, uint32_t flags)
{
	auto copy = [](char *dst, size_t size, const std::string &s) {
		size_t n = s.size() < size - 1 ? s.size() : size - 1;
		memset(dst, 0, size);
		memcpy(dst, s.data(), n);
	};
	copy(v.file, sizeof(v.file), r.file);
	v.line = r.line;
	copy(v.func, sizeof(v.func), r.func);
	copy(v.module, sizeof(v.module), r.module);
	v.flags = flags;
	copy(v.via, sizeof(v.via), r.via);
	copy(v.allocator, sizeof(v.allocator), r.allocator);
}

bool same_names(const allocinfo_bpf_tag &a, const allocinfo_bpf_tag &b)
{
	return a.line == b.line && !memcmp(a.file, b.file, sizeof(a.file)) &&
	       !memcmp(a.func, b.func, sizeof(a.func)) && !memcmp(a.module, b.module, sizeof(a.module)) &&
	       !memcmp(a.via, b.via, sizeof(a.via)) &&
	       !memcmp(a.allocator, b.allocator, sizeof(a.allocator));
}

/* The process's tags map, opened read-write as its own user would: -1 unless the
 * pin directory is a real directory of the reader's effective uid and the pin is a
 * tags map of the store's capacity. */
int open_own_tags_map(int pid, uint32_t capacity)
{
	std::string dir = std::string(ALLOCINFO_BPF_DIR) + "/" + std::to_string(pid);
	struct stat st;
	if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return -1;
	std::string path = dir + "/" ALLOCINFO_BPF_TAGS;
	if (lstat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid())
		return -1;
	int fd = bpfsys::obj_get(path.c_str(), 0);
	if (fd < 0)
		return -1;
	struct bpf_map_info info;
	if (bpfsys::map_info(fd, &info) != 0 || info.type != BPF_MAP_TYPE_HASH ||
	    info.key_size != 4 || info.value_size != sizeof(allocinfo_bpf_tag) ||
	    info.max_entries != capacity) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Replaces the entry of an existing key only: a slot cleared meanwhile stays so. */
int replace_entry(int fd, uint32_t slot, const allocinfo_bpf_tag &v)
{
	union bpf_attr a;
	memset(&a, 0, sizeof(a));
	a.map_fd = (uint32_t)fd;
	a.key = (uint64_t)(uintptr_t)&slot;
	a.value = (uint64_t)(uintptr_t)&v;
	a.flags = BPF_EXIST;
	return (int)bpfsys::call(BPF_MAP_UPDATE_ELEM, &a);
}

} /* namespace */

int write_bpf_tag_names(const store_snapshot &s, symbolizer &sym)
{
	if (s.backend != 1 || s.pid <= 0)
		return 0;
	int fd = -1, written = 0;
	for (const tag_snapshot &t : s.tags) {
		if (!(t.flags & ALLOCINFO_TAGF_DYNAMIC) || !tag_listed(t))
			continue;
		site_row named, unnamed;
		name_tag(t, &sym, named);
		name_tag(t, nullptr, unnamed);
		if (named.file == unnamed.file && named.func == unnamed.func)
			continue;	/* nothing known about it */
		if (fd < 0 && (fd = open_own_tags_map(s.pid, s.header.tag_capacity)) < 0)
			return 0;
		allocinfo_bpf_tag now, was, want;
		uint32_t slot = t.slot;
		if (bpfsys::map_lookup(fd, &slot, &now) != 0)
			continue;
		fill(was, unnamed, now.flags);
		fill(want, named, now.flags);
		if (!(now.flags & ALLOCINFO_TAGF_DYNAMIC) || !same_names(now, was))
			continue;	/* named already, or another tag now */
		if (replace_entry(fd, slot, want) == 0)
			written++;
	}
	if (fd >= 0)
		close(fd);
	return written;
}

} /* namespace allocinfo */
