/* SPDX-License-Identifier: MIT */
/*
 * The BPF store's writer (see store_bpf.h and store_bpf_format.h).
 *
 * The maps are created at the first allocation, with plain bpf(2) calls and a BTF
 * blob built here, so nothing runs that could not run inside malloc. The report
 * iterator is loaded later, from the library's constructor, through libbpf and the
 * skeleton built from tools/bpf/allocinfo_iter.bpf.c.
 *
 * Tag names follow the readers' rules (name_tag() in store_reader.cpp), so the
 * iterator prints what `allocinfo -p PID` prints. Static tags are named from the
 * store's strings. Dynamic (caller) tags are written in the readers' unsymbolized
 * form, "??:0 [module] func:0xADDR": naming them means reading debug info, which
 * may take seconds and hundreds of MiB for a large program, and a profiler must not
 * spend that inside the program's malloc. allocinfo and allocinfod name them when
 * they render. Names longer than the fields of struct allocinfo_bpf_tag are cut.
 */
#include "store_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/btf.h>
#include <linux/magic.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <algorithm>
#include <string>

#include "allocinfo_iter.skel.h"
#include "procfs.h"
#include "report.h"
#include "store.h"
#include "store_bpf_format.h"
#include "store_bpf_sys.h"
#include "store_reader.h"
#include "thread_shard.h"

namespace allocinfo {

namespace {

static_assert(sizeof(allocinfo_bpf_tag) == 392, "the tags map's value layout");
static_assert(sizeof(allocinfo_bpf_meta) == 24 + ALLOCINFO_BPF_STORE_LEN, "the meta map's value layout");

/* The counters map is allocated in full when it is created: its tag capacity is
 * the largest power of two in [1024, 16384] that keeps it within this budget. */
constexpr uint64_t COUNTERS_BUDGET = 16ull << 20;
constexpr uint32_t MAX_CAPACITY = 16384, MIN_CAPACITY = 1024;

/* The BTF types of the maps' keys and values, built once, without allocating. */
class btf_builder {
public:
	uint32_t add_int(const char *name, uint32_t size, uint32_t encoding)
	{
		uint32_t id = begin(name, BTF_KIND_INT, 0, size);
		word(encoding << 24 | size * 8);
		return id;
	}
	uint32_t add_typedef(const char *name, uint32_t type)
	{
		return begin(name, BTF_KIND_TYPEDEF, 0, type);
	}
	uint32_t add_array(uint32_t elem, uint32_t index, uint32_t n)
	{
		uint32_t id = begin(nullptr, BTF_KIND_ARRAY, 0, 0);
		word(elem);
		word(index);
		word(n);
		return id;
	}
	uint32_t add_struct(const char *name, uint32_t size, uint32_t vlen)
	{
		return begin(name, BTF_KIND_STRUCT, vlen, size);
	}
	void add_member(const char *name, uint32_t type, uint32_t byte_offset)
	{
		word(str(name));
		word(type);
		word(byte_offset * 8);
	}
	/* The whole blob, header first; its size in *size. */
	const void *blob(uint32_t *size)
	{
		btf_header h;
		memset(&h, 0, sizeof(h));
		h.magic = BTF_MAGIC;
		h.version = BTF_VERSION;
		h.hdr_len = sizeof(h);
		h.type_off = 0;
		h.type_len = (uint32_t)(nwords_ * 4);
		h.str_off = h.type_len;
		h.str_len = (uint32_t)nstrs_;
		memcpy(out_, &h, sizeof(h));
		memcpy(out_ + sizeof(h), words_, nwords_ * 4);
		memcpy(out_ + sizeof(h) + nwords_ * 4, strs_, nstrs_);
		*size = (uint32_t)(sizeof(h) + nwords_ * 4 + nstrs_);
		return out_;
	}
	bool ok() const { return !overflow_; }

private:
	uint32_t begin(const char *name, uint32_t kind, uint32_t vlen, uint32_t size_or_type)
	{
		word(str(name));
		word(kind << 24 | vlen);
		word(size_or_type);
		return ++nr_;
	}
	void word(uint32_t w)
	{
		if (nwords_ < sizeof(words_) / 4)
			words_[nwords_++] = w;
		else
			overflow_ = true;
	}
	uint32_t str(const char *s)
	{
		if (!s)
			return 0;
		size_t n = strlen(s) + 1;
		if (nstrs_ + n > sizeof(strs_)) {
			overflow_ = true;
			return 0;
		}
		uint32_t off = (uint32_t)nstrs_;
		memcpy(strs_ + nstrs_, s, n);
		nstrs_ += n;
		return off;
	}

	uint32_t words_[160];
	size_t nwords_ = 0;
	char strs_[512] = "";
	size_t nstrs_ = 1;	/* offset 0 is the empty name */
	uint32_t nr_ = 0;
	bool overflow_ = false;
	char out_[sizeof(btf_header) + sizeof(words_) + sizeof(strs_)];
};

struct bpf_maps {
	int counters = -1, tags = -1, meta = -1;
	void close_all()
	{
		for (int *fd : { &counters, &tags, &meta })
			if (*fd >= 0) {
				close(*fd);
				*fd = -1;
			}
	}
};

struct bpf_state {
	bool active = false;	/* this process has a BPF store */
	bool loud = false;	/* ALLOCINFO_STORE=bpf: say why something fails */
	bool ready = false;	/* the constructor has run: the iterator is loaded */
	bpf_maps maps;
	uint32_t nr_cpus = 0, capacity = 0;
	size_t file_size = 0, map_bytes = 0;
	char dir[64] = "";	/* the pin directory */
};
/* Constant-initialized (every member has a constant initializer): the store may be
 * created by a malloc that runs before this library's constructors. */
bpf_state g_bpf;

/* libbpf's messages stay quiet inside someone else's program. */
int quiet_print(enum libbpf_print_level, const char *, va_list)
{
	return 0;
}

uint32_t capacity_for(uint32_t nr_cpus)
{
	uint32_t c = MAX_CAPACITY;
	while (c > MIN_CAPACITY && (uint64_t)c * sizeof(allocinfo_counter) * nr_cpus > COUNTERS_BUDGET)
		c >>= 1;
	return c;
}

/* Creates the three maps; 0 or an errno value. */
int create_maps(uint32_t nr_cpus, uint32_t capacity, bpf_maps &m)
{
	btf_builder b;
	uint32_t t_int = b.add_int("int", 4, BTF_INT_SIGNED);
	uint32_t t_uint = b.add_int("unsigned int", 4, 0);
	uint32_t t_ll = b.add_int("long long", 8, BTF_INT_SIGNED);
	uint32_t t_ull = b.add_int("unsigned long long", 8, 0);
	uint32_t t_char = b.add_int("char", 1, BTF_INT_SIGNED);
	uint32_t s32 = b.add_typedef("__s32", t_int);
	uint32_t u32 = b.add_typedef("__u32", t_uint);
	uint32_t s64 = b.add_typedef("__s64", t_ll);
	uint32_t u64 = b.add_typedef("__u64", t_ull);

	uint32_t counter = b.add_struct("allocinfo_counter", sizeof(allocinfo_counter), 2);
	b.add_member("bytes", s64, offsetof(allocinfo_counter, bytes));
	b.add_member("calls", s64, offsetof(allocinfo_counter, calls));

	uint32_t file = b.add_array(t_char, t_uint, ALLOCINFO_BPF_FILE_LEN);
	uint32_t func = b.add_array(t_char, t_uint, ALLOCINFO_BPF_FUNC_LEN);
	uint32_t module = b.add_array(t_char, t_uint, ALLOCINFO_BPF_MODULE_LEN);
	uint32_t store = b.add_array(t_char, t_uint, ALLOCINFO_BPF_STORE_LEN);
	uint32_t tag = b.add_struct("allocinfo_bpf_tag", sizeof(allocinfo_bpf_tag), 5);
	b.add_member("file", file, offsetof(allocinfo_bpf_tag, file));
	b.add_member("line", u32, offsetof(allocinfo_bpf_tag, line));
	b.add_member("func", func, offsetof(allocinfo_bpf_tag, func));
	b.add_member("module", module, offsetof(allocinfo_bpf_tag, module));
	b.add_member("flags", u32, offsetof(allocinfo_bpf_tag, flags));

	uint32_t meta = b.add_struct("allocinfo_bpf_meta", sizeof(allocinfo_bpf_meta), 6);
	b.add_member("pid", s32, offsetof(allocinfo_bpf_meta, pid));
	b.add_member("nr_cpus", u32, offsetof(allocinfo_bpf_meta, nr_cpus));
	b.add_member("tag_capacity", u32, offsetof(allocinfo_bpf_meta, tag_capacity));
	b.add_member("version", u32, offsetof(allocinfo_bpf_meta, version));
	b.add_member("start_time", u64, offsetof(allocinfo_bpf_meta, start_time));
	b.add_member("store", store, offsetof(allocinfo_bpf_meta, store));
	if (!b.ok())
		return ENOMEM;

	uint32_t size;
	const void *blob = b.blob(&size);
	int btf = bpfsys::btf_load(blob, size);
	if (btf < 0)
		return errno;
	m.counters = bpfsys::map_create(BPF_MAP_TYPE_ARRAY, "allocinfo_cntr", 4,
					sizeof(allocinfo_counter), nr_cpus * capacity,
					BPF_F_MMAPABLE, btf, u32, counter);
	int err = m.counters < 0 ? errno : 0;
	if (!err) {
		m.tags = bpfsys::map_create(BPF_MAP_TYPE_HASH, "allocinfo_tags", 4,
					    sizeof(allocinfo_bpf_tag), capacity, BPF_F_NO_PREALLOC,
					    btf, u32, tag);
		err = m.tags < 0 ? errno : 0;
	}
	if (!err) {
		m.meta = bpfsys::map_create(BPF_MAP_TYPE_ARRAY, "allocinfo_meta", 4,
					    sizeof(allocinfo_bpf_meta), 1, 0, btf, u32, meta);
		err = m.meta < 0 ? errno : 0;
	}
	close(btf);	/* the maps keep their BTF */
	if (err)
		m.close_all();
	return err;
}

/* An entry as getdents64(2) returns it: directories are read with plain system calls
 * (no opendir), because the first ones are read during start-up, inside malloc. */
struct dirent64_raw {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[1];
};

/* Removes a pin directory and what it holds, following no link. Plain system calls:
 * this runs during start-up, when the process may not free memory yet. */
void remove_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			unlink(dir);
		return;
	}
	alignas(8) char buf[1024];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			auto *de = reinterpret_cast<dirent64_raw *>(buf + off);
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
				unlinkat(fd, de->d_name, 0);
			off += de->d_reclen;
		}
	close(fd);
	rmdir(dir);
}

/*
 * Removes the pins of processes that no longer exist. Pins outlive processes that
 * end without exit handlers (_exit, a signal, exec of another program), and each
 * holds its counters map in kernel memory; allocinfod and `allocinfo --gc` collect
 * them, and so does every new BPF store, so that a program forking short-lived
 * children does not pile them up where neither runs. A pid that exists is left
 * alone, whoever it is now: telling reuse apart is the collectors' work.
 */
void sweep_dead()
{
	int fd = open(ALLOCINFO_BPF_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	alignas(8) char buf[2048];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			auto *de = reinterpret_cast<dirent64_raw *>(buf + off);
			off += de->d_reclen;
			char *end;
			long pid = strtol(de->d_name, &end, 10);
			if (pid <= 0 || *end || de->d_name[0] == '0' || pid > INT32_MAX ||
			    kill((pid_t)pid, 0) == 0 || errno != ESRCH)
				continue;
			char dir[64];
			snprintf(dir, sizeof(dir), "%s/%ld", ALLOCINFO_BPF_DIR, pid);
			remove_dir(dir);
		}
	close(fd);
}

/* Pins the maps under /sys/fs/bpf/allocinfo/<pid>/, replacing what an earlier
 * process of that pid left; 0 or an errno value, and *why a short reason. */
int pin_maps(pid_t pid, const bpf_maps &m, char *dir, size_t len, const char **why)
{
	*why = "cannot pin BPF maps under " ALLOCINFO_BPF_DIR;
	struct statfs sf;
	if (statfs("/sys/fs/bpf", &sf) != 0 || sf.f_type != BPF_FS_MAGIC) {
		*why = "no BPF file system is mounted at /sys/fs/bpf";
		return ENOENT;
	}
	/* Shared by every user's processes, like /dev/shm. */
	if (mkdir(ALLOCINFO_BPF_DIR, 01777) == 0)
		chmod(ALLOCINFO_BPF_DIR, 01777);
	struct stat st;
	if (lstat(ALLOCINFO_BPF_DIR, &st) != 0)
		return errno;
	if (!S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid()))
		return EPERM;	/* a directory we cannot trust with our pins */
	sweep_dead();
	snprintf(dir, len, "%s/%d", ALLOCINFO_BPF_DIR, (int)pid);
	remove_dir(dir);
	if (mkdir(dir, 0700) != 0)
		return errno;
	const struct {
		int fd;
		const char *name;
	} pins[] = {
		{ m.counters, ALLOCINFO_BPF_COUNTERS },
		{ m.tags, ALLOCINFO_BPF_TAGS },
		{ m.meta, ALLOCINFO_BPF_META },
	};
	for (const auto &p : pins) {
		char path[128];
		snprintf(path, sizeof(path), "%s/%s", dir, p.name);
		if (bpfsys::obj_pin(p.fd, path) != 0) {
			int err = errno;
			remove_dir(dir);
			return err;
		}
	}
	return 0;
}

int write_meta(const bpf_maps &m, pid_t pid, uint64_t start_time, const char *store)
{
	allocinfo_bpf_meta v;
	memset(&v, 0, sizeof(v));
	v.pid = (int32_t)pid;
	v.nr_cpus = g_bpf.nr_cpus;
	v.tag_capacity = g_bpf.capacity;
	v.version = ALLOCINFO_BPF_META_VERSION;
	v.start_time = start_time;
	strncpy(v.store, store, sizeof(v.store) - 1);
	uint32_t key = 0;
	return bpfsys::map_update(m.meta, &key, &v);
}

void copy_field(char *dst, size_t size, const std::string &s)
{
	size_t n = std::min(s.size(), size - 1);
	memcpy(dst, s.data(), n);
	memset(dst + n, 0, size - n);
}

const char *store_string(uint32_t off)
{
	if (off == 0 || off >= g_store.hdr->strings_used)
		return "";
	return g_store.strings + off;
}

/* Writes slot's entry of the tags map, named as the readers name it (dynamic tags
 * unsymbolized). */
void put_tag(uint32_t slot)
{
	const allocinfo_store_tag &t = g_store.tags[slot];
	tag_snapshot ts;
	ts.slot = slot;
	ts.flags = t.flags;
	ts.line = t.line;
	ts.addr = t.addr;
	ts.file = store_string(t.file_off);
	ts.func = store_string(t.func_off);
	ts.module_path = store_string(t.module_off);
	site_row r;
	name_tag(ts, nullptr, r);
	allocinfo_bpf_tag v;
	copy_field(v.file, sizeof(v.file), r.file);
	v.line = r.line;
	copy_field(v.func, sizeof(v.func), r.func);
	copy_field(v.module, sizeof(v.module), r.module);
	v.flags = t.flags;
	bpfsys::map_update(g_bpf.maps.tags, &slot, &v);
}

/*
 * The BTF id of function `name` in the kernel's BTF, 0 if not found. libbpf would
 * parse the whole of /sys/kernel/btf/vmlinux into its own tables (several MiB, tens
 * of milliseconds) to find it; one pass over a mapping of the file is enough.
 */
uint32_t kernel_func_id(const char *name)
{
	int fd = open("/sys/kernel/btf/vmlinux", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	struct stat st;
	size_t size = fstat(fd, &st) == 0 && st.st_size > 0 ? (size_t)st.st_size : 0;
	char *data = nullptr;
	bool mapped = false;
	if (size) {
		void *m = mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m != MAP_FAILED) {
			data = static_cast<char *>(m);
			mapped = true;
		} else if ((data = static_cast<char *>(malloc(size)))) {
			/* Older kernels cannot map it: read it. */
			size_t done = 0;
			ssize_t n;
			while (done < size && (n = read(fd, data + done, size - done)) > 0)
				done += (size_t)n;
			size = done;
		}
	}
	close(fd);
	if (!data)
		return 0;

	uint32_t id = 0;
	btf_header h;
	if (size >= sizeof(h)) {
		memcpy(&h, data, sizeof(h));
		uint64_t types = (uint64_t)h.hdr_len + h.type_off, strs = (uint64_t)h.hdr_len + h.str_off;
		if (h.magic == BTF_MAGIC && h.hdr_len >= sizeof(h) && types + h.type_len <= size &&
		    strs + h.str_len <= size && h.str_len > 0 && data[strs + h.str_len - 1] == '\0') {
			/* The name's offset among the (deduplicated) strings... */
			uint32_t want = 0;
			for (uint32_t off = 1; off < h.str_len && !want;) {
				const char *str = data + strs + off;
				if (strcmp(str, name) == 0)
					want = off;
				off += (uint32_t)strlen(str) + 1;
			}
			/* ...then the FUNC type with that name; ids count from 1. */
			uint64_t p = types, end = types + h.type_len;
			for (uint32_t n = 1; want && p + sizeof(btf_type) <= end; n++) {
				btf_type t;
				memcpy(&t, data + p, sizeof(t));
				uint32_t kind = BTF_INFO_KIND(t.info), vlen = BTF_INFO_VLEN(t.info);
				if (kind == BTF_KIND_FUNC && t.name_off == want) {
					id = n;
					break;
				}
				uint64_t extra;
				switch (kind) {
				case BTF_KIND_INT: case BTF_KIND_VAR: case BTF_KIND_DECL_TAG:
					extra = 4;
					break;
				case BTF_KIND_ARRAY:
					extra = 12;
					break;
				case BTF_KIND_STRUCT: case BTF_KIND_UNION: case BTF_KIND_DATASEC:
				case BTF_KIND_ENUM64:
					extra = 12ull * vlen;
					break;
				case BTF_KIND_ENUM: case BTF_KIND_FUNC_PROTO:
					extra = 8ull * vlen;
					break;
				case BTF_KIND_PTR: case BTF_KIND_FWD: case BTF_KIND_TYPEDEF:
				case BTF_KIND_VOLATILE: case BTF_KIND_CONST: case BTF_KIND_RESTRICT:
				case BTF_KIND_FUNC: case BTF_KIND_FLOAT: case BTF_KIND_TYPE_TAG:
					extra = 0;
					break;
				default:
					want = 0;	/* a kind we cannot step over */
					extra = 0;
					break;
				}
				p += sizeof(btf_type) + extra;
			}
		}
	}
	if (mapped)
		munmap(data, size);
	else
		free(data);
	return id;
}

uint32_t g_iter_btf_id;
int g_iter_handler;	/* libbpf's id for our section handler; 0 before registering */

/*
 * libbpf's hook for section "allocinfo_iter", called just before the program is
 * loaded: it becomes an iterator attached to bpf_iter_ksym. libbpf (1.1) reads and
 * indexes the whole kernel BTF at load time for any program whose type is TRACING
 * when loading starts, even one whose attach id is known; so the program is
 * registered under another type and turned into TRACING here.
 */
int prepare_iter_load(struct bpf_program *prog, struct bpf_prog_load_opts *opts, long)
{
	if (g_iter_btf_id)
		opts->attach_btf_id = g_iter_btf_id;
	opts->expected_attach_type = BPF_TRACE_ITER;
	return bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING);
}

/*
 * Loads the iterator bound to the current maps and pins it; 0 or an errno value.
 * `cheap`: as prepare_iter_load() explains; else the program is TRACING from the
 * start and libbpf finds its attach point itself (slower, the way that must work
 * with any libbpf).
 */
int load_iterator(bool cheap = true)
{
	if (!g_iter_btf_id)
		g_iter_btf_id = kernel_func_id("bpf_iter_ksym");
	libbpf_print_fn_t saved = libbpf_set_print(quiet_print);
	if (!g_iter_handler) {
		/* Registered once for good: libbpf 1.1 keeps a dangling pointer when its
		 * last handler is unregistered. */
		LIBBPF_OPTS(libbpf_prog_handler_opts, handler,
			    .prog_prepare_load_fn = prepare_iter_load);
		g_iter_handler = libbpf_register_prog_handler("allocinfo_iter",
							      BPF_PROG_TYPE_SOCKET_FILTER,
							      BPF_TRACE_ITER, &handler);
	}
	if (g_iter_handler < 0 || !g_iter_btf_id)
		cheap = false;
	int err = 0;
	struct allocinfo_iter *skel = allocinfo_iter__open();
	struct bpf_link *link = nullptr;
	struct bpf_program *prog = skel ? skel->progs.allocinfo_report : nullptr;
	char path[128];
	if (!skel) {
		err = errno ? errno : ENOMEM;
		goto out;
	}
	if (!cheap && (bpf_program__set_type(prog, BPF_PROG_TYPE_TRACING) != 0 ||
		       bpf_program__set_expected_attach_type(prog, BPF_TRACE_ITER) != 0 ||
		       bpf_program__set_attach_target(prog, 0, "ksym") != 0)) {
		err = errno ? errno : ENOENT;
		goto out;
	}
	skel->rodata->nr_cpus = g_bpf.nr_cpus;
	skel->rodata->tag_capacity = g_bpf.capacity;
	if (bpf_map__reuse_fd(skel->maps.counters, g_bpf.maps.counters) != 0 ||
	    bpf_map__reuse_fd(skel->maps.tags, g_bpf.maps.tags) != 0 ||
	    allocinfo_iter__load(skel) != 0) {
		err = errno ? errno : EINVAL;
		goto out;
	}
	link = bpf_program__attach_iter(prog, nullptr);
	if (!link) {
		err = errno ? errno : EINVAL;
		goto out;
	}
	snprintf(path, sizeof(path), "%s/%s", g_bpf.dir, ALLOCINFO_BPF_ITER);
	if (bpf_link__pin(link, path) != 0)
		err = errno ? errno : EINVAL;
	/* The pin holds the link, the link the program: nothing more to keep. */
	bpf_link__destroy(link);
out:
	allocinfo_iter__destroy(skel);
	libbpf_set_print(saved);
	if (err && cheap)
		return load_iterator(false);
	return err;
}

/* ALLOCINFO_STORE=bpf and no BPF store: one line saying why. */
void say(const char *what, int err)
{
	if (g_bpf.loud)
		log_message("ALLOCINFO_STORE=bpf: %s (%s); using shm", what, strerror(err));
}

} /* namespace */

char *store_bpf_create(pid_t pid, uint32_t nr_cpus, bool loud, uint32_t *capacity, size_t *size)
{
	g_bpf.loud = loud;
	uint32_t cap = capacity_for(nr_cpus);
	allocinfo_store_header h;
	memset(&h, 0, sizeof(h));
	store_layout(&h, nr_cpus, cap);
	size_t file_size = h.counters_offset, total = h.total_size;
	size_t map_bytes = total - file_size;
	g_bpf.nr_cpus = nr_cpus;
	g_bpf.capacity = cap;
	g_bpf.file_size = file_size;
	g_bpf.map_bytes = map_bytes;

	bpf_maps m;
	int err = create_maps(nr_cpus, cap, m);
	if (err) {
		say("cannot create BPF maps", err);
		return nullptr;
	}
	const char *why = "";
	err = pin_maps(pid, m, g_bpf.dir, sizeof(g_bpf.dir), &why);
	if (err) {
		say(why, err);
		if (g_bpf.dir[0])
			remove_dir(g_bpf.dir);
		m.close_all();
		return nullptr;
	}

	/* One reservation: the file at its start, the counters map where a shm store
	 * has its counters region. */
	char *base = nullptr;
	int fd = -1;
	void *r = mmap(nullptr, total, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (r != MAP_FAILED) {
		base = static_cast<char *>(r);
		fd = store_open_shm(pid, file_size, g_store.path, sizeof(g_store.path));
	}
	if (fd < 0 ||
	    mmap(base, file_size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
	    mmap(base + file_size, map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 m.counters, 0) == MAP_FAILED ||
	    write_meta(m, pid, process_start_time(pid), g_store.path) != 0) {
		err = errno;
		say("cannot map the BPF store", err);
		if (fd >= 0) {
			close(fd);
			unlink(g_store.path);
		}
		g_store.path[0] = '\0';
		if (base)
			munmap(base, total);
		remove_dir(g_bpf.dir);
		m.close_all();
		return nullptr;
	}
	close(fd);
	g_bpf.maps = m;
	g_bpf.active = true;
	*capacity = cap;
	*size = total;
	return base;
}

void store_bpf_ready()
{
	if (!g_bpf.active)
		return;
	busy_guard guard;
	g_bpf.ready = true;
	int err = load_iterator();
	if (err && g_bpf.loud)
		log_message("ALLOCINFO_STORE=bpf: cannot load the report iterator (%s)", strerror(err));
}

void store_bpf_tag_published(uint32_t slot)
{
	if (!g_bpf.active)
		return;
	busy_guard guard;
	put_tag(slot);
}

void store_bpf_tag_flags(uint32_t slot)
{
	if (!g_bpf.active)
		return;
	allocinfo_bpf_tag v;
	if (bpfsys::map_lookup(g_bpf.maps.tags, &slot, &v) != 0) {
		store_bpf_tag_published(slot);
		return;
	}
	v.flags = g_store.tags[slot].flags;
	bpfsys::map_update(g_bpf.maps.tags, &slot, &v);
}

void store_bpf_tag_cleared(uint32_t slot)
{
	if (!g_bpf.active)
		return;
	bpfsys::map_delete(g_bpf.maps.tags, &slot);
}

bool store_bpf_fork_child()
{
	if (!g_bpf.active)
		return false;
	busy_guard guard;
	pid_t pid = getpid();
	bpf_maps m;
	char dir[sizeof(g_bpf.dir)] = "";
	const char *why = "";
	if (create_maps(g_bpf.nr_cpus, g_bpf.capacity, m) != 0)
		return false;
	uint64_t start_time = process_start_time(pid);
	if (pin_maps(pid, m, dir, sizeof(dir), &why) != 0) {
		if (dir[0])
			remove_dir(dir);
		m.close_all();
		return false;
	}
	char path[sizeof(g_store.path)];
	int fd = store_open_shm(pid, g_bpf.file_size, path, sizeof(path));
	void *a = MAP_FAILED, *b = MAP_FAILED;
	if (fd >= 0) {
		a = mmap(nullptr, g_bpf.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		b = mmap(nullptr, g_bpf.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m.counters, 0);
	}
	if (a == MAP_FAILED || b == MAP_FAILED || write_meta(m, pid, start_time, path) != 0) {
		if (a != MAP_FAILED)
			munmap(a, g_bpf.file_size);
		if (b != MAP_FAILED)
			munmap(b, g_bpf.map_bytes);
		if (fd >= 0)
			unlink(path);
		remove_dir(dir);
		m.close_all();
		return false;
	}

	/* Copy what is in use, as the shm store's fork does. */
	allocinfo_store_header *h = g_store.hdr;
	uint32_t nr = h->nr_tags;
	char *dst = static_cast<char *>(a);
	memcpy(dst, g_store.base, 4096);
	memcpy(dst + h->tags_offset, g_store.tags, (size_t)nr * sizeof(allocinfo_store_tag));
	memcpy(dst + h->strings_offset, g_store.strings, h->strings_used);
	memcpy(dst + h->ext_offset, g_store.ext, (size_t)nr * sizeof(allocinfo_store_tag_ext));
	size_t stride = (size_t)g_bpf.capacity * sizeof(allocinfo_counter);
	for (uint32_t shard = 0, n = shards_in_use(); shard < n; shard++)
		memcpy(static_cast<char *>(b) + shard * stride, g_store.counters + shard * stride,
		       (size_t)nr * sizeof(allocinfo_counter));
	auto *nh = reinterpret_cast<allocinfo_store_header *>(dst);
	nh->pid = (int32_t)pid;
	nh->start_time = start_time;
	nh->state = ALLOCINFO_STATE_LIVE;
	nh->backend = 1;

	/* Into place: the counters first, so that a failure leaves the parent's view
	 * whole and the caller can fall back. */
	if (mremap(b, g_bpf.map_bytes, g_bpf.map_bytes, MREMAP_MAYMOVE | MREMAP_FIXED,
		   g_store.counters) == MAP_FAILED) {
		munmap(a, g_bpf.file_size);
		munmap(b, g_bpf.map_bytes);
		unlink(path);
		remove_dir(dir);
		m.close_all();
		return false;
	}
	if (mremap(a, g_bpf.file_size, g_bpf.file_size, MREMAP_MAYMOVE | MREMAP_FIXED,
		   g_store.base) == MAP_FAILED) {
		/* The header part is still the parent's file: keep counting in private
		 * memory rather than write into it. */
		log_message("fork: cannot move the child's store into place (%s)", strerror(errno));
		void *p = mmap(g_store.base, g_bpf.file_size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
		if (p != MAP_FAILED)
			memcpy(p, a, g_bpf.file_size);
		munmap(a, g_bpf.file_size);
		unlink(path);
		path[0] = '\0';
	}

	/* The tags map: the parent's entries, already named. */
	for (uint32_t slot = 0; slot < nr; slot++) {
		allocinfo_bpf_tag v;
		if (bpfsys::map_lookup(g_bpf.maps.tags, &slot, &v) == 0)
			bpfsys::map_update(m.tags, &slot, &v);
	}
	g_bpf.maps.close_all();
	g_bpf.maps = m;
	memcpy(g_bpf.dir, dir, sizeof(dir));
	memcpy(g_store.path, path, sizeof(path));
	/* Before the constructor has run, it will load the child's own. */
	int err = g_bpf.ready ? load_iterator() : 0;
	if (err && g_bpf.loud)
		log_message("ALLOCINFO_STORE=bpf: cannot load the report iterator (%s)", strerror(err));
	return true;
}

void store_bpf_forget()
{
	g_bpf.maps.close_all();
	g_bpf.active = false;
	g_bpf.dir[0] = '\0';
}

void store_bpf_retire()
{
	if (!g_bpf.active || !g_store.hdr || g_store.hdr->pid != (int32_t)getpid())
		return;
	remove_dir(g_bpf.dir);
}

} /* namespace allocinfo */
