/* SPDX-License-Identifier: MIT */
/*
 * The BPF store's writer (see store_bpf.h and store_bpf_format.h).
 *
 * The maps are created with plain bpf(2) calls and a BTF blob built here, so nothing
 * runs that could not run inside malloc. Once they are made, the BPF module
 * (liballocinfo-bpf.so, bpf_module.h) names the tags in the `tags` map by the
 * readers' rules and loads the report iterator with libbpf: liballocinfo itself
 * needs neither the readers nor libbpf.
 *
 * Dynamic (caller) tags are published in the readers' unsymbolized form, "??:0
 * [module] func:0xADDR": naming them means reading debug info, which may take
 * seconds and hundreds of MiB for a large program, and a profiler must not spend
 * that inside the program's malloc. allocinfo and allocinfod name them when they
 * render, and write the names into this map (lib/reader/bpf_tag_names.cpp); the
 * entry of a caller tag is written here only once, when it is published, so that the
 * name stays. Names longer than the fields of struct allocinfo_bpf_tag are cut.
 */
#include "store_bpf.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/btf.h>
#include <linux/magic.h>

#include <linux/bpf.h>

#include "nocancel.h"
#include "procfs.h"
#include "reader_loader.h"
#include "store.h"
#include "registry.h"
#include "store_bpf_format.h"
#include "store_bpf_sys.h"
#include "store_file.h"
#include "thread_shard.h"

namespace allocinfo {

namespace {

static_assert(sizeof(allocinfo_bpf_tag) == 392 + 2 * ALLOCINFO_BPF_TOKEN_LEN, "the tags map's value layout");
static_assert(sizeof(allocinfo_bpf_meta) == 24 + ALLOCINFO_BPF_STORE_LEN, "the meta map's value layout");

/* The counters map is allocated in full when it is created: its tag capacity is
 * the largest power of two in [1024, 16384] that keeps it within this budget. */
constexpr uint64_t COUNTERS_BUDGET = 16ull << 20;
constexpr uint32_t MAX_CAPACITY = 16384, MIN_CAPACITY = 1024;

/* How many entries of the pin directory one start-up looks at for dead pins. */
constexpr unsigned SWEEP_MAX_ENTRIES = 1024;

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

/* True while fd still holds the map with this id: a number the program may have
 * closed and reused since is never closed on its behalf. */
bool holds_map(int fd, uint32_t id)
{
	struct bpf_map_info info;
	return fd >= 0 && id && bpfsys::map_info(fd, &info) == 0 && info.id == id;
}

/*
 * The maps' descriptors. The counters map is mapped and the meta map written once,
 * so their descriptors are closed as soon as the report iterator is loaded; only the
 * tags map's stays open (it is updated as tags appear), moved to STORE_FD_MIN or
 * above and close-on-exec. Each descriptor is closed only while it still holds its
 * map (the map ids are kept to tell).
 */
struct bpf_maps {
	int counters = -1, tags = -1, meta = -1;
	uint32_t counters_id = 0, tags_id = 0, meta_id = 0;
	void note_ids()
	{
		struct bpf_map_info info;
		counters_id = bpfsys::map_info(counters, &info) == 0 ? info.id : 0;
		tags_id = bpfsys::map_info(tags, &info) == 0 ? info.id : 0;
		meta_id = bpfsys::map_info(meta, &info) == 0 ? info.id : 0;
	}
	static void close_one(int &fd, uint32_t id)
	{
		if (holds_map(fd, id))
			nocancel::close(fd);
		fd = -1;
	}
	/* Once the iterator is loaded: only the tags map's descriptor is needed. */
	void close_unneeded()
	{
		close_one(counters, counters_id);
		close_one(meta, meta_id);
	}
	void close_all()
	{
		close_unneeded();
		close_one(tags, tags_id);
	}
	/* The tags map's descriptor out of the way of the program's small numbers. */
	void place_tags_high()
	{
		int high = fcntl(tags, F_DUPFD_CLOEXEC, STORE_FD_MIN);
		if (high >= 0) {
			nocancel::close(tags);
			tags = high;
		}
	}
};

struct bpf_state {
	bool active = false;	/* this process has a BPF store */
	bool loud = false;	/* ALLOCINFO_STORE=bpf: say why something fails */
	bool ready = false;	/* the constructor has run: the iterator is loaded */
	bool inherited = false;	/* a fork child's: the maps and pins are the parent's */
	bool fresh = false;	/* new maps: the tags map is still empty */
	bool left_out = false;	/* the counters map is not mapped in fork children */
	bpf_maps prepared;	/* made and pinned, not yet holding the counters */
	const allocinfo_bpf_module_v1 *module = nullptr;	/* names tags, loads the iterator */
	bpf_maps maps;
	uint32_t nr_cpus = 0, capacity = 0;
	size_t file_size = 0, map_bytes = 0;
	char dir[64] = "";	/* the pin directory */
};
/* Constant-initialized (every member has a constant initializer): the store may be
 * created by a malloc that runs before this library's constructors. */
bpf_state g_bpf;

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
	uint32_t token = b.add_array(t_char, t_uint, ALLOCINFO_BPF_TOKEN_LEN);
	uint32_t tag = b.add_struct("allocinfo_bpf_tag", sizeof(allocinfo_bpf_tag), 7);
	b.add_member("file", file, offsetof(allocinfo_bpf_tag, file));
	b.add_member("line", u32, offsetof(allocinfo_bpf_tag, line));
	b.add_member("func", func, offsetof(allocinfo_bpf_tag, func));
	b.add_member("module", module, offsetof(allocinfo_bpf_tag, module));
	b.add_member("flags", u32, offsetof(allocinfo_bpf_tag, flags));
	b.add_member("via", token, offsetof(allocinfo_bpf_tag, via));
	b.add_member("allocator", token, offsetof(allocinfo_bpf_tag, allocator));

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
	nocancel::close(btf);	/* the maps keep their BTF */
	if (!err)
		m.note_ids();
	if (err) {
		int *fds[] = { &m.counters, &m.tags, &m.meta };
		for (int *fd : fds)
			if (*fd >= 0)
				nocancel::close(*fd);
		m = bpf_maps();
	}
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

/* Removes a pin directory and what it holds, following no link, down to `depth`
 * levels (a pin directory holds files; anything deeper was made by someone else).
 * Plain system calls: this runs during start-up, when the process may not free
 * memory yet. */
void remove_tree_at(int parent, const char *name, int depth)
{
	int fd = nocancel::openat(parent, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0) {
		if (errno == ENOTDIR || errno == ELOOP)
			unlinkat(parent, name, 0);
		return;
	}
	alignas(8) char buf[1024];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n;) {
			auto *de = reinterpret_cast<dirent64_raw *>(buf + off);
			off += de->d_reclen;
			if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
				continue;
			if (unlinkat(fd, de->d_name, 0) != 0 && errno == EISDIR && depth > 0)
				remove_tree_at(fd, de->d_name, depth - 1);
		}
	nocancel::close(fd);
	unlinkat(parent, name, AT_REMOVEDIR);
}

void remove_dir(const char *dir)
{
	remove_tree_at(AT_FDCWD, dir, 2);
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
	int fd = nocancel::open(ALLOCINFO_BPF_DIR, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return;
	alignas(8) char buf[2048];
	long n;
	/* Bounded: a start-up never pays for more than this many entries (the rest
	 * are the collectors', or a later start's). */
	unsigned budget = SWEEP_MAX_ENTRIES;
	while (budget && (n = syscall(SYS_getdents64, fd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n && budget; budget--) {
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
	nocancel::close(fd);
}

/*
 * The pin directory, made and checked: 0755, owned by root or by this process's
 * user (the first process that could create BPF maps), so that only processes that
 * may pin write there. One made writable by others (as older versions made it,
 * 1777) is made 0755 by its owner, silently: older versions may still make it so
 * while they run. One owned by another user, or writable by others and not ours to
 * fix, is refused, with one line.
 * 0 or an errno value.
 */
int check_pin_root(const char **why)
{
	/* Looked at first: mkdir of a directory that exists waits for bpffs's lock. */
	struct stat st;
	if (lstat(ALLOCINFO_BPF_DIR, &st) != 0) {
		if (errno != ENOENT)
			return errno;
		if (mkdir(ALLOCINFO_BPF_DIR, 0755) == 0)
			chmod(ALLOCINFO_BPF_DIR, 0755);	/* whatever the umask */
		if (lstat(ALLOCINFO_BPF_DIR, &st) != 0)
			return errno;
	}
	static bool said;
	if (!S_ISDIR(st.st_mode) || (st.st_uid != 0 && st.st_uid != geteuid())) {
		*why = ALLOCINFO_BPF_DIR " is not a directory of root's or this user's";
		if (!said)
			log_message("%s (owner uid %u); no BPF store", *why, (unsigned)st.st_uid);
		said = true;
		return EPERM;
	}
	if (st.st_mode & (S_IWGRP | S_IWOTH)) {
		if (st.st_uid != geteuid() || chmod(ALLOCINFO_BPF_DIR, 0755) != 0) {
			*why = ALLOCINFO_BPF_DIR " is writable by other users";
			if (!said)
				log_message("%s (mode %04o); no BPF store", *why,
					    (unsigned)(st.st_mode & 07777));
			said = true;
			return EPERM;
		}
	}
	return 0;
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
	if (int err = check_pin_root(why))
		return err;
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

/* Writes slot's entry of the tags map, named by the BPF module; before the
 * module is loaded (start-up), store_bpf_ready() writes every slot. */
void put_tag(uint32_t slot)
{
	if (!g_bpf.module)
		return;
	allocinfo_bpf_tag v;
	g_bpf.module->name_tag(g_store.base, g_bpf.file_size, slot, &v);
	bpfsys::map_update(g_bpf.maps.tags, &slot, &v);
}

/* Loads the report iterator of the current maps through the BPF module. */
int load_iterator()
{
	if (!g_bpf.module)
		return ENOENT;
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", g_bpf.dir, ALLOCINFO_BPF_ITER);
	allocinfo_bpf_iter_args a = { g_bpf.nr_cpus, g_bpf.capacity, g_bpf.maps.counters,
				      g_bpf.maps.tags, path };
	return g_bpf.module->load_iterator(&a);
}

/* What the meta map names as the store's file: its path, or the memfd's name. */
const char *meta_store_name(const char *path)
{
	return path[0] ? path : "memfd:" ALLOCINFO_STORE_MEMFD_NAME;
}

/* ALLOCINFO_STORE=bpf and no BPF store: one line saying why. */
void say(const char *what, int err)
{
	if (g_bpf.loud)
		log_message("ALLOCINFO_STORE=bpf: %s (%s); using shm", what, strerror(err));
}

} /* namespace */

uint32_t store_bpf_probe(bool loud, uint32_t nr_cpus)
{
	g_bpf.loud = loud;
	/* One map of one entry says whether this process may make maps, at the cost
	 * of two system calls; the real ones are made later, off the start path. */
	int fd = bpfsys::map_create(BPF_MAP_TYPE_ARRAY, "allocinfo_try", 4, 4, 1, 0, -1, 0, 0);
	if (fd < 0) {
		say("cannot create BPF maps", errno);
		return 0;
	}
	nocancel::close(fd);
	const char *why = "";
	struct statfs sf;
	if (statfs("/sys/fs/bpf", &sf) != 0 || sf.f_type != BPF_FS_MAGIC) {
		say("no BPF file system is mounted at /sys/fs/bpf", ENOENT);
		return 0;
	}
	if (int err = check_pin_root(&why)) {
		say(why, err);
		return 0;
	}
	/* Here, not only when the maps are made: a process that ends before then must
	 * still collect the pins of those that ended without exit handlers. */
	sweep_dead();
	uint32_t cap = capacity_for(nr_cpus);
	allocinfo_store_header h;
	memset(&h, 0, sizeof(h));
	store_layout(&h, nr_cpus, cap);
	g_bpf.nr_cpus = nr_cpus;
	g_bpf.capacity = cap;
	g_bpf.file_size = h.counters_offset;
	g_bpf.map_bytes = h.total_size - h.counters_offset;
	return cap;
}

bool store_bpf_prepare(pid_t pid)
{
	busy_guard guard;
	bpf_maps m;
	int err = create_maps(g_bpf.nr_cpus, g_bpf.capacity, m);
	if (err) {
		say("cannot create BPF maps", err);
		return false;
	}
	const char *why = "";
	err = pin_maps(pid, m, g_bpf.dir, sizeof(g_bpf.dir), &why);
	if (err) {
		say(why, err);
		if (g_bpf.dir[0])
			remove_dir(g_bpf.dir);
		g_bpf.dir[0] = '\0';
		m.close_all();
		return false;
	}
	g_bpf.prepared = m;
	return true;
}

bool store_bpf_attach()
{
	bpf_maps &m = g_bpf.prepared;
	pid_t pid = getpid();
	void *b = mmap(nullptr, g_bpf.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m.counters, 0);
	if (b == MAP_FAILED || write_meta(m, pid, g_store.hdr->start_time,
					  meta_store_name(g_store.path)) != 0) {
		say("cannot map the BPF store", errno);
		if (b != MAP_FAILED)
			munmap(b, g_bpf.map_bytes);
		return false;
	}
	/* The counters that may hold counts, then the map onto their address. */
	uint32_t nr = g_store.hdr->nr_tags;
	size_t stride = (size_t)g_bpf.capacity * sizeof(allocinfo_counter);
	for (uint32_t shard = 0, n = shards_in_use(); shard < n; shard++)
		memcpy(static_cast<char *>(b) + shard * stride, g_store.counters + shard * stride,
		       (size_t)nr * sizeof(allocinfo_counter));
	if (mremap(b, g_bpf.map_bytes, g_bpf.map_bytes, MREMAP_MAYMOVE | MREMAP_FIXED,
		   g_store.counters) == MAP_FAILED) {
		say("cannot map the BPF store", errno);
		munmap(b, g_bpf.map_bytes);
		return false;
	}
	/* Readers find the counters in the pins now. The file keeps its size: a child
	 * forked just before may still be copying its counters from it. */
	__atomic_store_n(&g_store.hdr->backend, 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&g_store.hdr->generation, 1, __ATOMIC_RELEASE);
	m.place_tags_high();
	g_bpf.maps = m;
	g_bpf.left_out = false;	/* a new mapping: copied into children */
	g_bpf.prepared = bpf_maps();
	g_bpf.active = true;
	g_bpf.fresh = true;
	return true;
}

void store_bpf_abandon()
{
	g_bpf.prepared.close_all();
	if (g_bpf.dir[0])
		remove_dir(g_bpf.dir);
	g_bpf.dir[0] = '\0';
}

namespace {

/* Put off so that a process that ends within it pays nothing for its maps. */
constexpr long PUBLISH_DELAY_NS = 10 * 1000 * 1000;

void *publisher(void *)
{
	struct timespec d = { 0, PUBLISH_DELAY_NS };
	while (nocancel::nanosleep(&d, &d) != 0 && errno == EINTR) {
	}
	store_publish_bpf();
	return nullptr;
}

/* The thread that makes the maps, with every signal blocked (the program's threads
 * take them) and a small stack; made there and then when no thread can be made. */
void start_publisher()
{
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	sigfillset(&all);
	bool made = false;
	if (pthread_attr_init(&attr) == 0) {
		pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
		pthread_attr_setstacksize(&attr, 256 * 1024);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		made = pthread_create(&t, &attr, publisher, nullptr) == 0;
		pthread_sigmask(SIG_SETMASK, &old, nullptr);
		pthread_attr_destroy(&attr);
	}
	if (!made)
		store_publish_bpf();
}

/* Registry lock held: every published tag into the tags map. */
void put_all_tags()
{
	for (uint32_t slot = 0, n = g_store.hdr->nr_tags; slot < n; slot++)
		if (g_store.tags[slot].flags & ALLOCINFO_TAGF_USED)
			put_tag(slot);
}

} /* namespace */

void store_bpf_ready()
{
	g_bpf.ready = true;
	if (__atomic_load_n(&g_store_pending, __ATOMIC_ACQUIRE) == STORE_PENDING_BPF)
		start_publisher();
	else
		store_bpf_published();
}

void store_bpf_tag_published(uint32_t slot)
{
	if (!g_bpf.active || g_bpf.inherited)
		return;
	busy_guard guard;
	put_tag(slot);
}

void store_bpf_tag_flags(uint32_t slot)
{
	if (!g_bpf.active || g_bpf.inherited)
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
	if (!g_bpf.active || g_bpf.inherited)
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
	int fd = store_file_open(pid, g_bpf.file_size, path, sizeof(path));
	void *a = MAP_FAILED, *b = MAP_FAILED;
	if (fd >= 0) {
		a = mmap(nullptr, g_bpf.file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		b = mmap(nullptr, g_bpf.map_bytes, PROT_READ | PROT_WRITE, MAP_SHARED, m.counters, 0);
	}
	if (a == MAP_FAILED || b == MAP_FAILED ||
	    write_meta(m, pid, start_time, meta_store_name(path)) != 0) {
		if (a != MAP_FAILED)
			munmap(a, g_bpf.file_size);
		if (b != MAP_FAILED)
			munmap(b, g_bpf.map_bytes);
		if (fd >= 0) {
			nocancel::close(fd);
			if (path[0])
				unlink(path);
		}
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
		nocancel::close(fd);
		if (path[0])
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
		nocancel::close(fd);
		fd = -1;
		if (path[0])
			unlink(path);
		path[0] = '\0';
		store_file_drop_inherited();
	}
	if (fd >= 0)
		store_file_keep_child(fd, path);

	/* The tags map: the parent's entries, already named. */
	bool have_tags = holds_map(g_bpf.maps.tags, g_bpf.maps.tags_id);
	g_bpf.inherited = false;
	for (uint32_t slot = 0; slot < nr; slot++) {
		allocinfo_bpf_tag v;
		if (!(g_store.tags[slot].flags & ALLOCINFO_TAGF_USED))
			continue;
		if (have_tags && bpfsys::map_lookup(g_bpf.maps.tags, &slot, &v) == 0)
			bpfsys::map_update(m.tags, &slot, &v);
		else if (g_bpf.module) {	/* published in the child before now */
			g_bpf.module->name_tag(g_store.base, g_bpf.file_size, slot, &v);
			bpfsys::map_update(m.tags, &slot, &v);
		}
	}
	/* The parent's descriptors, where the child still holds them. */
	g_bpf.maps.close_all();
	m.place_tags_high();
	g_bpf.maps = m;
	g_bpf.left_out = false;	/* a new mapping: copied into children */
	memcpy(g_bpf.dir, dir, sizeof(dir));
	memcpy(g_store.path, path, sizeof(path));
	return true;
}

void store_bpf_published()
{
	/* Before the constructor has run, it will do this. */
	if (!g_bpf.active || !g_bpf.ready)
		return;
	busy_guard guard;
	/* The BPF module names the tags and loads the iterator; loading it takes
	 * the loader's locks, so never with the registry lock held. */
	if (!g_bpf.module)
		g_bpf.module = bpf_module();
	if (g_bpf.module && g_bpf.fresh) {
		registry_lock();
		put_all_tags();
		registry_unlock();
	}
	g_bpf.fresh = false;
	int err = load_iterator();
	g_bpf.maps.close_unneeded();
	if (err && g_bpf.loud)
		log_message("ALLOCINFO_STORE=bpf: cannot load the report iterator (%s)", strerror(err));
}

void store_bpf_fork_counters(bool leave_out)
{
	if (!g_bpf.active || g_bpf.inherited || g_bpf.left_out == leave_out)
		return;
	if (madvise(g_store.counters, g_bpf.map_bytes, leave_out ? MADV_DONTFORK : MADV_DOFORK) == 0)
		g_bpf.left_out = leave_out;
}

void store_bpf_fork_pending()
{
	if (g_bpf.active)
		g_bpf.inherited = true;
}

void store_bpf_forget()
{
	g_bpf.inherited = false;
	g_bpf.maps.close_all();
	g_bpf.active = false;
	g_bpf.dir[0] = '\0';
}

void store_bpf_retire()
{
	if (!g_bpf.active || g_bpf.inherited || !g_store.hdr ||
	    g_store.hdr->pid != (int32_t)getpid())
		return;
	remove_dir(g_bpf.dir);
}

} /* namespace allocinfo */
