/* SPDX-License-Identifier: MIT */
/* Reading BPF stores through their pinned maps, and removing stale pins. */
#include "store_bpf_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"
#include "store_bpf_format.h"
#include "store_bpf_sys.h"

namespace allocinfo {

namespace {

/* [0, file_part) from the store file, then the counters region: each read maps the
 * pages it needs of the counters map where the kernel allows it, else copies the
 * values out with batch lookups, which costs many times as much. (Mapping the whole
 * map once would make the kernel insert every one of its pages.) */
class bpf_store_source final : public store_source {
public:
	/* map_fd: owned; -1 for a counters region of zeros. mmap_fd: owned, the same map
	 * opened so that it can be mapped, or -1. */
	bpf_store_source(int fd, uint64_t file_part, int map_fd, uint64_t map_bytes,
			 int mmap_fd = -1)
		: file_(fd), file_part_(file_part), map_fd_(map_fd), map_bytes_(map_bytes),
		  mmap_fd_(mmap_fd)
	{
	}
	~bpf_store_source() override
	{
		if (mmap_fd_ >= 0 && mmap_fd_ != map_fd_)
			close(mmap_fd_);
		if (map_fd_ >= 0)
			close(map_fd_);
	}
	bpf_store_source(const bpf_store_source &) = delete;
	bpf_store_source &operator=(const bpf_store_source &) = delete;

	uint64_t size() const override { return file_part_ + map_bytes_; }

	bool read(uint64_t off, void *buf, size_t len) const override
	{
		if (off > size() || len > size() - off)
			return false;
		char *out = static_cast<char *>(buf);
		if (off < file_part_) {
			size_t n = (size_t)(file_part_ - off < len ? file_part_ - off : len);
			if (!file_.read(off, out, n))
				return false;
			out += n;
			off += n;
			len -= n;
		}
		if (!len)
			return true;
		off -= file_part_;
		if (map_fd_ < 0) {
			memset(out, 0, len);
			return true;
		}
		if (mmap_fd_ >= 0 && read_mapped(off, out, len))
			return true;
		return read_counters(off, out, len);
	}

private:
	/* Bytes [off, off + len) of the map's values through a mapping of their pages:
	 * the writer's live values, as in an shm store. */
	bool read_mapped(uint64_t off, char *out, size_t len) const
	{
		const uint64_t page = (uint64_t)sysconf(_SC_PAGESIZE);
		uint64_t start = off & ~(page - 1);
		uint64_t end = (off + len + page - 1) & ~(page - 1);
		void *m = mmap(nullptr, end - start, PROT_READ, MAP_SHARED, mmap_fd_, (off_t)start);
		if (m == MAP_FAILED)
			return false;
		memcpy(out, static_cast<const char *>(m) + (off - start), len);
		munmap(m, end - start);
		return true;
	}

	/* Bytes [off, off + len) of the map's values, as its mmap would show them. */
	bool read_counters(uint64_t off, char *out, size_t len) const
	{
		const uint64_t vsize = sizeof(allocinfo_counter);
		uint64_t first = off / vsize, end = (off + len + vsize - 1) / vsize;
		std::vector<allocinfo_counter> values(end - first);
		std::vector<uint32_t> keys(end - first);
		uint64_t done = 0;
		while (done < end - first) {
			uint32_t count = (uint32_t)(end - first - done);
			int rc = bpfsys::map_lookup_batch(map_fd_, (uint32_t)(first + done),
							  &keys[done], &values[done], &count);
			if ((rc != 0 && errno != ENOENT) || count == 0)
				return false;
			for (uint32_t i = 0; i < count; i++)
				if (keys[done + i] != first + done + i)
					return false;
			done += count;
		}
		memcpy(out, reinterpret_cast<const char *>(values.data()) + (off - first * vsize), len);
		return true;
	}

	file_source file_;
	uint64_t file_part_;
	int map_fd_;
	uint64_t map_bytes_;
	int mmap_fd_;
};

struct fd_closer {
	int fd;
	~fd_closer()
	{
		if (fd >= 0)
			close(fd);
	}
};

std::string pin_dir(int pid)
{
	return std::string(ALLOCINFO_BPF_DIR) + "/" + std::to_string(pid);
}

/* Opens pin `name` of pid read-only and checks it is the map it should be. */
int open_map(int pid, const char *name, uint32_t type, uint32_t value_size,
	     uint32_t max_entries, uint32_t flags, std::string &why)
{
	std::string path = pin_dir(pid) + "/" + name;
	int fd = bpfsys::obj_get(path.c_str(), BPF_F_RDONLY);
	if (fd < 0) {
		why = "BPF store: cannot open " + path + ": " + strerror(errno);
		return -1;
	}
	struct bpf_map_info info;
	if (bpfsys::map_info(fd, &info) != 0) {
		why = "BPF store: " + path + ": " + strerror(errno);
		close(fd);
		return -1;
	}
	if (info.type != type || info.key_size != 4 || info.value_size != value_size ||
	    info.max_entries != max_entries || (info.map_flags & flags) != flags) {
		why = "BPF store: " + path + " is not the map its store describes";
		close(fd);
		return -1;
	}
	return fd;
}

/* A descriptor of the counters map behind fd (already checked to be the store's)
 * that can be mapped: fd itself, or -1. The kernel maps a BPF map only through a
 * shared mapping, which it refuses on a read-only descriptor: the pin is then opened
 * again read-write, if this reader may, and must be the same map. */
int mappable_counters(int fd, int pid)
{
	void *m = mmap(nullptr, 1, PROT_READ, MAP_SHARED, fd, 0);
	if (m != MAP_FAILED) {
		munmap(m, 1);
		return fd;
	}
	std::string path = pin_dir(pid) + "/" ALLOCINFO_BPF_COUNTERS;
	int rw = bpfsys::obj_get(path.c_str(), 0);
	if (rw < 0)
		return -1;
	struct bpf_map_info a, b;
	if (bpfsys::map_info(fd, &a) != 0 || bpfsys::map_info(rw, &b) != 0 || a.id != b.id) {
		close(rw);
		return -1;
	}
	return rw;
}

/* Reads the meta map of pid; false (with why) when it cannot. */
bool read_meta(int pid, allocinfo_bpf_meta &meta, std::string &why)
{
	int fd = open_map(pid, ALLOCINFO_BPF_META, BPF_MAP_TYPE_ARRAY, sizeof(meta), 1, 0, why);
	if (fd < 0)
		return false;
	fd_closer closer{fd};
	uint32_t key = 0;
	if (bpfsys::map_lookup(fd, &key, &meta) != 0) {
		why = "BPF store: cannot read " + pin_dir(pid) + "/" ALLOCINFO_BPF_META ": " +
		      strerror(errno);
		return false;
	}
	return true;
}


/* A positive decimal pid without sign or leading zero; 0 for any other name. */
int pid_of(const char *name)
{
	if (*name < '1' || *name > '9')
		return 0;
	long v = 0;
	for (const char *p = name; *p; p++) {
		if (*p < '0' || *p > '9' || v > 100000000)
			return 0;
		v = v * 10 + (*p - '0');
	}
	return (int)v;
}

/* Removes entry `name` of directory `parent`: a directory with what it holds (never
 * following a link), or anything else by unlinking it. */
bool remove_entry(int parent, const char *name, std::string &why)
{
	int fd = openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP) {
			if (unlinkat(parent, name, 0) == 0 || errno == ENOENT)
				return true;
		} else if (errno == ENOENT) {
			return true;
		}
		why = strerror(errno);
		return false;
	}
	DIR *d = fdopendir(fd);
	if (!d) {
		why = strerror(errno);
		close(fd);
		return false;
	}
	bool ok = true;
	while (struct dirent *de = readdir(d)) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		if (unlinkat(dirfd(d), de->d_name, 0) != 0 && errno != ENOENT) {
			why = std::string(de->d_name) + ": " + strerror(errno);
			ok = false;
		}
	}
	closedir(d);
	if (ok && unlinkat(parent, name, AT_REMOVEDIR) != 0 && errno != ENOENT) {
		why = strerror(errno);
		ok = false;
	}
	return ok;
}

} /* namespace */

std::unique_ptr<store_source> open_bpf_store_source(int pid, const std::string &path, int fd,
						    std::string &why)
{
	(void)path;
	why.clear();
	file_source raw(fd);
	allocinfo_store_header h;
	if (!raw.read(0, &h, sizeof(h)) ||
	    memcmp(h.magic, ALLOCINFO_STORE_MAGIC, sizeof(h.magic)) != 0 || h.backend != 1)
		return nullptr;	/* not a BPF store: the file alone is the store */

	if (h.nr_cpus == 0 || h.nr_cpus > READER_MAX_CPUS || h.tag_capacity == 0 ||
	    h.tag_capacity > READER_MAX_TAGS ||
	    h.cpu_stride != (uint64_t)h.tag_capacity * sizeof(allocinfo_counter) ||
	    h.counters_offset > raw.size()) {
		why = "BPF store with an implausible layout";
		return nullptr;
	}
	uint64_t entries = (uint64_t)h.nr_cpus * h.tag_capacity;
	uint64_t map_bytes = entries * sizeof(allocinfo_counter);
	if (entries > UINT32_MAX) {
		why = "BPF store with an implausible layout";
		return nullptr;
	}
	if (h.pid != pid) {
		/* Not yet this process's store; let the caller look at the header. */
		return std::unique_ptr<store_source>(
			new bpf_store_source(fd, h.counters_offset, -1, map_bytes));
	}

	allocinfo_bpf_meta meta;
	if (!read_meta(pid, meta, why))
		return nullptr;
	if (meta.pid != h.pid || meta.start_time != h.start_time || meta.nr_cpus != h.nr_cpus ||
	    meta.tag_capacity != h.tag_capacity || meta.version == 0 ||
	    meta.version > ALLOCINFO_BPF_META_VERSION) {
		why = "BPF store: the maps in " + pin_dir(pid) + " belong to another store";
		return nullptr;
	}
	int mfd = open_map(pid, ALLOCINFO_BPF_COUNTERS, BPF_MAP_TYPE_ARRAY,
			   sizeof(allocinfo_counter), (uint32_t)entries, BPF_F_MMAPABLE, why);
	if (mfd < 0)
		return nullptr;
	return std::unique_ptr<store_source>(new bpf_store_source(
		fd, h.counters_offset, mfd, map_bytes, mappable_counters(mfd, pid)));
}

void remove_stale_bpf_pins(std::vector<std::string> &removed, std::vector<std::string> &problems)
{
	int dfd = open(ALLOCINFO_BPF_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0) {
		if (errno != ENOENT)
			problems.push_back(std::string(ALLOCINFO_BPF_DIR) + ": " + strerror(errno));
		return;
	}
	DIR *d = fdopendir(dfd);
	if (!d) {
		problems.push_back(std::string(ALLOCINFO_BPF_DIR) + ": " + strerror(errno));
		close(dfd);
		return;
	}
	std::vector<int> pids;
	while (struct dirent *de = readdir(d)) {
		int pid = pid_of(de->d_name);
		if (pid > 0)
			pids.push_back(pid);
	}
	for (int pid : pids) {
		proc_stat ps;
		if (read_proc_stat(pid, ps) && ps.state != 'Z' && ps.state != 'X') {
			allocinfo_bpf_meta meta;
			std::string why;
			/* Without a readable meta the process may be creating its pins. */
			if (!read_meta(pid, meta, why) ||
			    (meta.pid == pid && meta.start_time == ps.start_time))
				continue;
		}
		std::string dir = pin_dir(pid), why;
		if (remove_entry(dirfd(d), std::to_string(pid).c_str(), why))
			removed.push_back(dir);
		else
			problems.push_back(dir + ": stale, cannot remove: " + why);
	}
	closedir(d);
}

} /* namespace allocinfo */
