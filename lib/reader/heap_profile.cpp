/* SPDX-License-Identifier: MIT */
/*
 * heap_profile.cpp - renders and writes the built-in heap profiler's snapshots
 * (heap_profile.h).
 */
#include "heap_profile.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <unordered_map>

#include "proto_write.h"
#include "symbolize.h"

namespace allocinfo {

namespace {

using namespace proto;

std::string hex(const unsigned char *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	std::string s;
	for (size_t i = 0; i < n; i++) {
		s += digits[p[i] >> 4];
		s += digits[p[i] & 15];
	}
	return s;
}

/* The NT_GNU_BUILD_ID note among the object's PT_NOTE segments, as hex. */
std::string build_id_of(const dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) &ph = info->dlpi_phdr[i];
		if (ph.p_type != PT_NOTE)
			continue;
		const char *p = reinterpret_cast<const char *>(info->dlpi_addr + ph.p_vaddr);
		size_t left = ph.p_memsz;
		while (left >= sizeof(ElfW(Nhdr))) {
			const auto *nh = reinterpret_cast<const ElfW(Nhdr) *>(p);
			size_t name_sz = (nh->n_namesz + 3) & ~3u, desc_sz = (nh->n_descsz + 3) & ~3u;
			size_t whole = sizeof(*nh) + name_sz + desc_sz;
			if (whole > left)
				break;
			const char *name = p + sizeof(*nh);
			if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
			    memcmp(name, "GNU", 4) == 0)
				return hex(reinterpret_cast<const unsigned char *>(name + name_sz),
					   nh->n_descsz);
			p += whole;
			left -= whole;
		}
	}
	return std::string();
}

std::string self_exe()
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	return n > 0 ? std::string(buf, (size_t)n) : std::string();
}

int add_segments(dl_phdr_info *info, size_t, void *data)
{
	auto *out = static_cast<std::vector<loaded_segment> *>(data);
	std::string path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : "";
	if (path.empty() && out->empty())
		path = self_exe();	/* the first object is the executable */
	if (path.empty() || path[0] != '/')
		return 0;	/* the vDSO: nothing on disk to name it */
	std::string id = build_id_of(info);
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) &ph = info->dlpi_phdr[i];
		if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		loaded_segment s;
		s.start = info->dlpi_addr + ph.p_vaddr;
		s.limit = s.start + ph.p_memsz;
		s.file_offset = ph.p_offset;
		s.bias = info->dlpi_addr;
		s.path = path;
		s.build_id = id;
		out->push_back(s);
	}
	return 0;
}

const loaded_segment *segment_of(const std::vector<loaded_segment> &segs, uint64_t pc)
{
	auto it = std::upper_bound(segs.begin(), segs.end(), pc,
				   [](uint64_t a, const loaded_segment &s) { return a < s.start; });
	if (it == segs.begin())
		return nullptr;
	--it;
	return pc < it->limit ? &*it : nullptr;
}

int64_t rounded(double v)
{
	if (!(v > 0))
		return 0;
	if (v >= 9.2e18)
		return INT64_MAX;
	return (int64_t)llround(v);
}

std::string site_name(const allocinfo_heap_site &s)
{
	return std::string(s.file, strnlen(s.file, sizeof(s.file))) + ":" + std::to_string(s.line);
}

std::string field(const char *p, size_t n)
{
	return std::string(p, strnlen(p, n));
}

/* Each distinct function written once, under the id it got first. */
class function_table {
public:
	explicit function_table(profile_parts &pp) : pp_(pp) {}

	uint64_t id(const std::string &name, const std::string &system_name,
		    const std::string &file)
	{
		std::string key = name + '\0' + system_name + '\0' + file;
		auto it = ids_.find(key);
		if (it != ids_.end())
			return it->second;
		uint64_t id = ids_.size() + 1;
		ids_.emplace(key, id);
		put_function(pp_.functions, pp_.st, id, name, system_name, file);
		return id;
	}

private:
	profile_parts &pp_;
	std::unordered_map<std::string, uint64_t> ids_;
};

} /* namespace */

std::vector<loaded_segment> loaded_segments()
{
	std::vector<loaded_segment> segs;
	dl_iterate_phdr(add_segments, &segs);
	std::sort(segs.begin(), segs.end(),
		  [](const loaded_segment &a, const loaded_segment &b) { return a.start < b.start; });
	return segs;
}

bool render_heap_proto(std::string &out, const allocinfo_heap_snapshot &s,
		       const std::vector<loaded_segment> &segs, symbolizer *sym)
{
	profile_parts pp;
	string_table &st = pp.st;
	function_table functions(pp);
	uint64_t locations = 0;

	static const char *const types[][2] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
		{ "exact_inuse_objects", "count" }, { "exact_inuse_space", "bytes" },
	};
	const size_t ntypes = sizeof(types) / sizeof(types[0]);
	for (auto &t : types)
		put_msg(pp.prof, PROFILE_SAMPLE_TYPE, value_type(st, t[0], t[1]));

	for (size_t i = 0; i < segs.size(); i++) {
		mapping_fields m;
		m.id = i + 1;
		m.start = segs[i].start;
		m.limit = segs[i].limit;
		m.file_offset = segs[i].file_offset;
		m.file = (uint64_t)st.id(segs[i].path);
		m.build_id = (uint64_t)st.id(segs[i].build_id);
		/* Already symbolized: pprof must not look for the binaries. */
		m.has_functions = m.has_filenames = m.has_line_numbers = true;
		put_mapping(pp.mappings, m);
	}

	std::unordered_map<uint32_t, std::string> site_of;
	for (size_t i = 0; i < s.nsites; i++)
		site_of.emplace(s.sites[i].tag, site_name(s.sites[i]));

	/* One location per distinct return address. */
	std::unordered_map<uint64_t, uint64_t> location_of;
	auto location = [&](uint64_t pc) {
		auto it = location_of.find(pc);
		if (it != location_of.end())
			return it->second;
		const loaded_segment *seg = segment_of(segs, pc);
		uint64_t fn = 0;
		unsigned line = 0;
		if (seg && sym) {
			source_location loc;
			sym->lookup(seg->path, pc - seg->bias, true, loc);
			line = loc.line;
			fn = functions.id(loc.func, loc.full_func.empty() ? loc.func : loc.full_func,
					  loc.file == "??" ? std::string() : loc.file);
		}
		uint64_t id = ++locations;
		pp.location(id, seg ? (uint64_t)(seg - segs.data()) + 1 : 0, pc, fn, line);
		location_of.emplace(pc, id);
		return id;
	};

	for (size_t i = 0; i < s.nstacks; i++) {
		const allocinfo_heap_stack &k = s.stacks[i];
		std::vector<uint64_t> ids;
		for (uint32_t f = 0; f < k.nframes; f++)
			ids.push_back(location(k.frames[f]));
		const uint64_t v[ntypes] = {
			(uint64_t)rounded(k.alloc_objects), (uint64_t)rounded(k.alloc_space),
			(uint64_t)rounded(k.inuse_objects), (uint64_t)rounded(k.inuse_space), 0, 0,
		};
		std::string smp;
		put_packed(smp, SAMPLE_LOCATION_ID, ids.data(), ids.size());
		put_packed(smp, SAMPLE_VALUE, v, ntypes);
		auto it = site_of.find(k.tag);
		if (it != site_of.end())
			put_label(smp, st, "site", &it->second);
		put_msg(pp.samples, PROFILE_SAMPLE, smp);
	}

	/* The exact totals: one sample per call site, at a location of its own named
	 * as the report names the site. */
	for (size_t i = 0; i < s.nsites; i++) {
		const allocinfo_heap_site &site = s.sites[i];
		if (site.bytes <= 0 && site.count <= 0)
			continue;
		std::string func = field(site.func, sizeof(site.func));
		std::string file = field(site.file, sizeof(site.file));
		pp.exact_site(++locations, functions.id(func, func, file), ntypes, file, site.line,
			      field(site.module, sizeof(site.module)), site.count, site.bytes);
	}

	const std::string period_type = value_type(st, "space", "bytes");
	const int64_t default_type = st.id("inuse_space");
	return pp.finish(out, period_type, s.sample_rate ? s.sample_rate : 1,
			 (uint64_t)default_type, s.time_nanos, s.duration_nanos);
}

void render_heap_text(std::string &out, const allocinfo_heap_snapshot &s, const std::string &maps)
{
	uint64_t in_n = 0, in_b = 0, al_n = 0, al_b = 0;
	for (size_t i = 0; i < s.nstacks; i++) {
		in_n += s.stacks[i].raw_inuse_count;
		in_b += s.stacks[i].raw_inuse_bytes;
		al_n += s.stacks[i].raw_alloc_count;
		al_b += s.stacks[i].raw_alloc_bytes;
	}
	char line[160];
	snprintf(line, sizeof(line), "heap profile: %llu: %llu [%llu: %llu] @ heap_v2/%llu\n",
		 (unsigned long long)in_n, (unsigned long long)in_b, (unsigned long long)al_n,
		 (unsigned long long)al_b, (unsigned long long)(s.sample_rate ? s.sample_rate : 1));
	out += line;
	for (size_t i = 0; i < s.nstacks; i++) {
		const allocinfo_heap_stack &k = s.stacks[i];
		snprintf(line, sizeof(line), "%llu: %llu [%llu: %llu] @",
			 (unsigned long long)k.raw_inuse_count, (unsigned long long)k.raw_inuse_bytes,
			 (unsigned long long)k.raw_alloc_count, (unsigned long long)k.raw_alloc_bytes);
		out += line;
		for (uint32_t f = 0; f < k.nframes; f++) {
			snprintf(line, sizeof(line), " 0x%llx", (unsigned long long)k.frames[f]);
			out += line;
		}
		out += '\n';
	}
	out += "\nMAPPED_LIBRARIES:\n";
	out += maps;
}

namespace {

std::string read_self_maps()
{
	std::string s;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return s;
	char buf[65536];
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		s.append(buf, (size_t)n);
	}
	close(fd);
	return s;
}

int write_whole(int fd, const std::string &s)
{
	size_t done = 0;
	while (done < s.size()) {
		ssize_t n = write(fd, s.data() + done, s.size() - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return errno;
		done += (size_t)n;
	}
	return 0;
}

} /* namespace */

int write_heap_profile(const allocinfo_heap_snapshot &s, symbolizer *sym)
{
	if (!s.path || !s.path[0])
		return EINVAL;
	std::string body;
	if (s.text_format)
		render_heap_text(body, s, read_self_maps());
	else if (!render_heap_proto(body, s, loaded_segments(), sym))
		return ENOMEM;

	/* A name of our own next to the target, then a hard link: link() neither
	 * follows nor replaces whatever is at the target already. */
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	char suffix[64];
	snprintf(suffix, sizeof(suffix), ".tmp%ld.%lx", (long)getpid(),
		 (unsigned long)(ts.tv_nsec ^ ts.tv_sec));
	std::string tmp = std::string(s.path) + suffix;
	int fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		return errno;
	int err = write_whole(fd, body);
	if (close(fd) < 0 && !err)
		err = errno;
	if (!err && link(tmp.c_str(), s.path) < 0)
		err = errno;
	unlink(tmp.c_str());
	return err;
}

} /* namespace allocinfo */
