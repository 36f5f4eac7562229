/* SPDX-License-Identifier: MIT */
/*
 * Creating and maintaining this process's store. A shm store is a memfd that readers
 * find through /proc/PID/fd (or a file allocinfo-<pid>, mode 0600, in
 * $ALLOCINFO_STORE_DIR: store_file.h); an anonymous store is the same layout that no
 * other process can see (ALLOCINFO_STORE=none, or when no file can be made).
 */
#include "store.h"
#include "thread_shard.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "procfs.h"
#include "store_bpf.h"
#include "store_file.h"

namespace allocinfo {

store g_store;

namespace {

/*
 * Strings already in the store, as their offsets in an open-addressing table keyed
 * by the strings themselves (in the store's own strings area): written under the
 * registry lock only. It starts at one page and doubles when three quarters full,
 * so that a program with few strings touches few pages (hashing spreads entries over
 * every page of a table); a table that cannot grow only means that new strings are
 * stored again rather than shared.
 */
constexpr uint32_t INTERN_FIRST_SLOTS = 1u << 10;
constexpr uint32_t INTERN_MAX_SLOTS = 1u << 18;
uint32_t *g_interned;
uint32_t g_intern_slots;
uint32_t g_nr_interned;

uint32_t string_hash(const char *s)
{
	uint32_t h = 2166136261u;	/* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

size_t page_round(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

void layout(allocinfo_store_header *h, uint32_t nr_shards, uint32_t capacity)
{
	memcpy(h->magic, ALLOCINFO_STORE_MAGIC, sizeof(h->magic));
	h->version = ALLOCINFO_STORE_VERSION;
	h->header_size = sizeof(*h);
	h->nr_cpus = nr_shards;
	h->shards_used = 1;
	h->tag_capacity = capacity;
	h->tags_offset = 4096;
	h->strings_offset = h->tags_offset +
			    page_round((size_t)capacity * sizeof(allocinfo_store_tag));
	h->strings_capacity = STORE_STRINGS_CAPACITY;
	h->strings_used = 1;	/* offset 0 means "no string" */
	h->ext_offset = h->strings_offset + STORE_STRINGS_CAPACITY;
	h->counters_offset = h->ext_offset +
			     page_round((size_t)capacity * sizeof(allocinfo_store_tag_ext));
	h->cpu_stride = (uint64_t)capacity * sizeof(allocinfo_counter);
	h->total_size = h->counters_offset + (uint64_t)nr_shards * h->cpu_stride;
	h->nr_tags = ALLOCINFO_TAG_FIRST;
}

size_t total_size(uint32_t nr_shards, uint32_t capacity)
{
	allocinfo_store_header h{};
	layout(&h, nr_shards, capacity);
	return h.total_size;
}

void attach(char *base, size_t size)
{
	g_store.base = base;
	g_store.size = size;
	g_store.hdr = reinterpret_cast<allocinfo_store_header *>(base);
	g_store.tags = reinterpret_cast<allocinfo_store_tag *>(base + g_store.hdr->tags_offset);
	g_store.strings = base + g_store.hdr->strings_offset;
	g_store.ext = reinterpret_cast<allocinfo_store_tag_ext *>(base + g_store.hdr->ext_offset);
	g_store.counters = base + g_store.hdr->counters_offset;
	g_store.shard_shift = (uint32_t)__builtin_ctzll(g_store.hdr->cpu_stride);
}

} /* namespace */

void store_layout(allocinfo_store_header *h, uint32_t nr_shards, uint32_t tag_capacity)
{
	layout(h, nr_shards, tag_capacity);
}

/* Sets how the counters are split (store.h) and returns the number of shards. */
static uint32_t plan_shards(bool bpf)
{
	uint32_t cpus = possible_cpus();
	if (cpus == 0 || cpus > STORE_MAX_CPU_SHARDS)
		cpus = cpus ? STORE_MAX_CPU_SHARDS : 64;
	uint32_t nr_shards;
	if (bpf) {
		uint32_t threads = cpus * 2;
		if (threads < STORE_BPF_MIN_THREAD_SHARDS)
			threads = STORE_BPF_MIN_THREAD_SHARDS;
		if (threads > STORE_BPF_MAX_THREAD_SHARDS)
			threads = STORE_BPF_MAX_THREAD_SHARDS;
		nr_shards = 1 + threads + cpus;
	} else {
		nr_shards = cpus * 4 > STORE_MIN_SHARDS ? cpus * 4 : STORE_MIN_SHARDS;
	}
	g_store.nr_cpu_shards = cpus;
	g_store.cpu_shard_first = nr_shards - cpus;
	return nr_shards;
}

bool store_create(store_kind requested)
{
	uint32_t nr_shards = 0;
	uint32_t capacity = STORE_TAG_CAPACITY;
	size_t size = 0;
	pid_t pid = getpid();
	char *base = nullptr;

	/* BPF maps only when asked for: creating them costs milliseconds at every
	 * start, and their pins outlive a process that ends without exit handlers. */
	if (requested == store_kind::bpf) {
		nr_shards = plan_shards(true);
		base = store_bpf_create(pid, nr_shards, requested == store_kind::bpf, &capacity, &size);
	}
	if (base) {
		g_store.kind = store_kind::bpf;
	} else {
		nr_shards = plan_shards(false);
		size = total_size(nr_shards, capacity);
	}

	if (!base && requested != store_kind::none) {
		int fd = store_file_open(pid, size, g_store.path, sizeof(g_store.path));
		if (fd >= 0) {
			void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m != MAP_FAILED) {
				store_file_keep(fd, g_store.path);
				base = static_cast<char *>(m);
				g_store.kind = store_kind::shm;
			} else {
				close(fd);
				if (g_store.path[0])
					unlink(g_store.path);
			}
		}
		if (!base) {
			if (requested == store_kind::shm)
				log_message("ALLOCINFO_STORE=shm: cannot create %s (%s); counters "
					    "stay private to the process",
					    g_store.path[0] ? g_store.path : "a memfd",
					    strerror(errno));
			g_store.path[0] = '\0';
		}
	}
	if (!base) {
		void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m == MAP_FAILED)
			return false;
		base = static_cast<char *>(m);
		g_store.kind = store_kind::none;
	}

	auto *h = reinterpret_cast<allocinfo_store_header *>(base);
	layout(h, nr_shards, capacity);
	h->backend = g_store.kind == store_kind::bpf ? 1 : 0;
	h->pid = (int32_t)pid;
	h->start_time = process_start_time(pid);
	h->state = ALLOCINFO_STATE_LIVE;
	attach(base, size);
	return true;
}

/* The table at `slots` entries, refilled from the old one; false if it cannot be
 * mapped (the old one stays). */
static bool intern_resize(uint32_t slots)
{
	void *m = mmap(nullptr, slots * sizeof(uint32_t), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (m == MAP_FAILED)
		return false;
	auto *table = static_cast<uint32_t *>(m);
	for (uint32_t j = 0; g_interned && j < g_intern_slots; j++) {
		uint32_t off = g_interned[j];
		if (!off)
			continue;
		uint32_t i = string_hash(g_store.strings + off);
		while (table[i & (slots - 1)])
			i++;
		table[i & (slots - 1)] = off;
	}
	if (g_interned)
		munmap(g_interned, g_intern_slots * sizeof(uint32_t));
	g_interned = table;
	g_intern_slots = slots;
	return true;
}

uint32_t store_intern(const char *s)
{
	if (!s)
		return 0;
	/* Three quarters full at most, so that every probe ends at an empty entry. */
	if (!g_interned)
		intern_resize(INTERN_FIRST_SLOTS);
	else if (g_nr_interned >= g_intern_slots / 4 * 3 && g_intern_slots < INTERN_MAX_SLOTS)
		intern_resize(g_intern_slots * 2);
	uint32_t *free_slot = nullptr;
	if (g_interned)
		for (uint32_t i = string_hash(s);; i++) {
			uint32_t *e = &g_interned[i & (g_intern_slots - 1)];
			if (*e == 0) {
				free_slot = e;
				break;
			}
			if (strcmp(g_store.strings + *e, s) == 0)
				return *e;
		}
	allocinfo_store_header *h = g_store.hdr;
	size_t len = strlen(s) + 1;
	if (h->strings_used + len > h->strings_capacity)
		return 0;
	uint32_t off = (uint32_t)h->strings_used;
	memcpy(g_store.strings + off, s, len);
	__atomic_store_n(&h->strings_used, h->strings_used + len, __ATOMIC_RELEASE);
	if (free_slot && g_nr_interned < g_intern_slots / 4 * 3) {
		*free_slot = off;
		g_nr_interned++;
	}
	return off;
}

void store_publish_tag(uint32_t slot, uint32_t flags, uint32_t file_off, uint32_t func_off,
		       uint32_t module_off, uint32_t line, uint64_t addr, uint32_t via_off,
		       uint32_t allocator_off)
{
	allocinfo_store_tag *t = &g_store.tags[slot];
	uint32_t seq = t->seq;
	__atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	t->file_off = file_off;
	t->func_off = func_off;
	t->module_off = module_off;
	t->line = line;
	t->addr = addr;
	g_store.ext[slot].via_off = via_off;
	g_store.ext[slot].allocator_off = allocator_off;
	t->flags = flags | ALLOCINFO_TAGF_USED;
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
	allocinfo_store_header *h = g_store.hdr;
	if (slot >= h->nr_tags)
		__atomic_store_n(&h->nr_tags, slot + 1, __ATOMIC_RELEASE);
	__atomic_fetch_add(&h->generation, 1, __ATOMIC_RELEASE);
	store_bpf_tag_published(slot);
}

void store_set_tag_flags(uint32_t slot, uint32_t set, uint32_t clear)
{
	allocinfo_store_tag *t = &g_store.tags[slot];
	uint32_t seq = t->seq;
	__atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	t->flags = (t->flags | set) & ~clear;
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
	__atomic_fetch_add(&g_store.hdr->generation, 1, __ATOMIC_RELEASE);
	store_bpf_tag_flags(slot);
}

void store_clear_tag(uint32_t slot)
{
	allocinfo_store_tag *t = &g_store.tags[slot];
	uint32_t seq = t->seq;
	__atomic_store_n(&t->seq, seq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);
	for (uint32_t shard = 0, n = shards_in_use(); shard < n; shard++) {
		auto *c = reinterpret_cast<allocinfo_counter *>(
			g_store.counters + ((uint64_t)shard << g_store.shard_shift) + slot * 16ull);
		__atomic_store_n(&c->bytes, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&c->calls, 0, __ATOMIC_RELAXED);
	}
	t->flags = 0;
	t->file_off = t->func_off = t->module_off = t->line = 0;
	t->addr = 0;
	g_store.ext[slot] = allocinfo_store_tag_ext{};
	__atomic_store_n(&t->seq, seq + 2, __ATOMIC_RELEASE);
	__atomic_fetch_add(&g_store.hdr->generation, 1, __ATOMIC_RELEASE);
	store_bpf_tag_cleared(slot);
}

void store_sum(uint32_t slot, int64_t *bytes, int64_t *calls)
{
	int64_t b = 0, calls_sum = 0;
	for (uint32_t shard = 0, n = shards_in_use(); shard < n; shard++) {
		auto *c = reinterpret_cast<allocinfo_counter *>(
			g_store.counters + ((uint64_t)shard << g_store.shard_shift) + slot * 16ull);
		b += __atomic_load_n(&c->bytes, __ATOMIC_RELAXED);
		calls_sum += __atomic_load_n(&c->calls, __ATOMIC_RELAXED);
	}
	*bytes = b;
	*calls = calls_sum;
}

/* Writes len bytes at off; false on any failure. */
static bool write_at(int fd, const void *buf, size_t len, off_t off)
{
	const char *p = static_cast<const char *>(buf);
	while (len) {
		ssize_t n = pwrite(fd, p, len, off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return false;
		p += n;
		len -= (size_t)n;
		off += n;
	}
	return true;
}

/* Copies [off, off + len) of the parent's store into the same place of fd: file to
 * file when the parent's memfd is at hand (no page of it faulted into the child),
 * else from the mapping. */
static bool copy_region(int src, int fd, size_t off, size_t len)
{
	loff_t in = (loff_t)off, out = (loff_t)off;
	size_t left = len;
	while (src >= 0 && left) {
		ssize_t n = copy_file_range(src, &in, fd, &out, left, 0);
		if (n <= 0)
			break;
		left -= (size_t)n;
	}
	return !left || write_at(fd, g_store.base + (off + len - left), left,
				 (off_t)(off + len - left));
}

/* A forked child's new store file, written from the parent's store: the used tag
 * slots, strings and counters, then the header with the child's pid, its magic
 * last, so a reader never finds the parent's pid in the child's file. */
static bool fill_child_file(int fd, pid_t pid)
{
	allocinfo_store_header *h = g_store.hdr;
	uint32_t nr = h->nr_tags;
	int src = store_file_inherited_fd();
	if (!copy_region(src, fd, h->tags_offset, (size_t)nr * sizeof(allocinfo_store_tag)) ||
	    !copy_region(src, fd, h->strings_offset, h->strings_used))
		return false;
	for (uint32_t shard = 0, n = shards_in_use(); shard < n; shard++) {
		size_t off = h->counters_offset + ((size_t)shard << g_store.shard_shift);
		if (!copy_region(src, fd, off, (size_t)nr * sizeof(allocinfo_counter)))
			return false;
	}
	allocinfo_store_header nh;
	memcpy(&nh, g_store.base, sizeof(nh));
	nh.pid = (int32_t)pid;
	nh.start_time = process_start_time(pid);
	nh.state = ALLOCINFO_STATE_LIVE;
	nh.backend = 0;
	return write_at(fd, reinterpret_cast<char *>(&nh) + sizeof(nh.magic),
			sizeof(nh) - sizeof(nh.magic), (off_t)sizeof(nh.magic)) &&
	       write_at(fd, nh.magic, sizeof(nh.magic), 0);
}

void store_fork_child()
{
	if (g_store.kind == store_kind::bpf) {
		if (store_bpf_fork_child())
			return;
		/* No BPF store for the child: an shm store of the same layout. */
		store_bpf_forget();
		g_store.kind = store_kind::shm;
	}
	if (g_store.kind != store_kind::shm)
		return;	/* a private anonymous store was copied by fork itself */
	pid_t pid = getpid();
	char path[sizeof(g_store.path)];
	int fd = store_file_open(pid, g_store.size, path, sizeof(path));
	/* The usual way: the used part written into the new file, which is then mapped
	 * over the parent's at the same address, in one call. */
	if (fd >= 0 && fill_child_file(fd, pid) &&
	    mmap(g_store.base, g_store.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 0) != MAP_FAILED) {
		store_file_keep_child(fd, path);
		memcpy(g_store.path, path, sizeof(path));
		return;
	}
	void *m = MAP_FAILED;
	if (fd >= 0)
		m = mmap(nullptr, g_store.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		/* Keep counting alone in private memory rather than into the parent's. */
		m = mmap(nullptr, g_store.size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (fd >= 0) {
			close(fd);
			if (path[0])
				unlink(path);
		}
		fd = -1;
		path[0] = '\0';
		store_file_drop_inherited();
		if (m == MAP_FAILED) {
			/* Nothing else to map: leave the parent's store, which we must not
			 * write; the counts of this child are lost. */
			log_message("fork: cannot map a store for the child (%s)", strerror(errno));
			return;
		}
	}
	/* Copy only what is in use: the header, the used tag slots and strings, and the
	 * used part of each shard that may hold counts. */
	char *dst = static_cast<char *>(m);
	allocinfo_store_header *h = g_store.hdr;
	uint32_t nr = h->nr_tags;
	memcpy(dst + h->tags_offset, g_store.tags, (size_t)nr * sizeof(allocinfo_store_tag));
	memcpy(dst + h->strings_offset, g_store.strings, h->strings_used);
	memcpy(dst + h->ext_offset, g_store.ext, (size_t)nr * sizeof(allocinfo_store_tag_ext));
	for (uint32_t shard = 0, n = shards_in_use(); shard < n; shard++) {
		size_t off = h->counters_offset + ((size_t)shard << g_store.shard_shift);
		memcpy(dst + off, g_store.base + off, (size_t)nr * sizeof(allocinfo_counter));
	}
	/* The header last, and its magic after the rest of it: until then a reader that
	 * finds the new file sees no store, never the parent's pid in the child's file. */
	allocinfo_store_header nh;
	memcpy(&nh, g_store.base, sizeof(nh));
	nh.pid = (int32_t)pid;
	nh.start_time = process_start_time(pid);
	nh.state = ALLOCINFO_STATE_LIVE;
	nh.backend = 0;
	memcpy(dst + sizeof(nh.magic), reinterpret_cast<char *>(&nh) + sizeof(nh.magic),
	       sizeof(nh) - sizeof(nh.magic));
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(dst, nh.magic, sizeof(nh.magic));
	/* Move the copy onto the old address: the fast path keeps its pointers. */
	void *moved = mremap(m, g_store.size, g_store.size, MREMAP_MAYMOVE | MREMAP_FIXED,
			     g_store.base);
	if (moved == MAP_FAILED) {
		log_message("fork: cannot move the child's store into place (%s)", strerror(errno));
		munmap(m, g_store.size);
		if (fd >= 0)
			close(fd);
		if (path[0])
			unlink(path);
		return;
	}
	if (fd >= 0)
		store_file_keep_child(fd, path);
	memcpy(g_store.path, path, sizeof(path));
	if (fd < 0)
		g_store.kind = store_kind::none;
}

void store_retire()
{
	if (!g_store.hdr)
		return;
	__atomic_store_n(&g_store.hdr->state, ALLOCINFO_STATE_EXITED, __ATOMIC_RELEASE);
	if (g_store.path[0] && g_store.hdr->pid == (int32_t)getpid())
		unlink(g_store.path);
	store_bpf_retire();
}

} /* namespace allocinfo */
