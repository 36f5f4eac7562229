/* SPDX-License-Identifier: MIT */
/*
 * Creating and maintaining this process's store. A shm store is a file in /dev/shm
 * named allocinfo-<pid>, mode 0600; an anonymous store is the same layout that no
 * other process can see (ALLOCINFO_STORE=none, or when /dev/shm is unusable).
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

#include <string>
#include <unordered_map>

#include "procfs.h"
#include "store_bpf.h"

namespace allocinfo {

store g_store;

namespace {

/* Strings already in the store: written under the registry lock only. */
std::unordered_map<std::string, uint32_t> *g_interned;

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

/* Opens a fresh shm file for `pid`, sized; returns the fd or -1. */
int open_shm(pid_t pid, size_t size, char *path, size_t path_len)
{
	int n = snprintf(path, path_len, "%s/allocinfo-%d", store_dir(), (int)pid);
	if (n < 0 || (size_t)n >= path_len) {
		errno = ENAMETOOLONG;
		return -1;
	}
	/* A store left by an earlier program image of this pid (exec) is replaced. */
	unlink(path);
	int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		return -1;
	if (ftruncate(fd, (off_t)size) != 0) {
		close(fd);
		unlink(path);
		return -1;
	}
	return fd;
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

int store_open_shm(pid_t pid, size_t size, char *path, size_t path_len)
{
	return open_shm(pid, size, path, path_len);
}

const char *store_dir()
{
	const char *d = find_env("ALLOCINFO_STORE_DIR");
	return d && d[0] == '/' ? d : "/dev/shm";
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

	if (requested == store_kind::automatic || requested == store_kind::bpf) {
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
		int fd = open_shm(pid, size, g_store.path, sizeof(g_store.path));
		if (fd >= 0) {
			void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			close(fd);
			if (m != MAP_FAILED) {
				base = static_cast<char *>(m);
				g_store.kind = store_kind::shm;
			} else {
				unlink(g_store.path);
			}
		}
		if (!base) {
			if (requested == store_kind::shm)
				log_message("ALLOCINFO_STORE=shm: cannot create %s (%s); counters "
					    "stay private to the process", g_store.path,
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

uint32_t store_intern(const char *s)
{
	if (!s)
		return 0;
	if (!g_interned)
		g_interned = new std::unordered_map<std::string, uint32_t>();
	auto it = g_interned->find(s);
	if (it != g_interned->end())
		return it->second;
	allocinfo_store_header *h = g_store.hdr;
	size_t len = strlen(s) + 1;
	if (h->strings_used + len > h->strings_capacity)
		return 0;
	uint32_t off = (uint32_t)h->strings_used;
	memcpy(g_store.strings + off, s, len);
	__atomic_store_n(&h->strings_used, h->strings_used + len, __ATOMIC_RELEASE);
	g_interned->emplace(s, off);
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
	int fd = open_shm(pid, g_store.size, path, sizeof(path));
	void *m = MAP_FAILED;
	if (fd >= 0)
		m = mmap(nullptr, g_store.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED) {
		/* Keep counting alone in private memory rather than into the parent's. */
		m = mmap(nullptr, g_store.size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (fd >= 0)
			unlink(path);
		path[0] = '\0';
		if (m == MAP_FAILED) {
			/* Nothing else to map: leave the parent's store, which we must not
			 * write; the counts of this child are lost. */
			if (fd >= 0)
				close(fd);
			log_message("fork: cannot map a store for the child (%s)", strerror(errno));
			return;
		}
	}
	if (fd >= 0)
		close(fd);
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
		if (path[0])
			unlink(path);
		return;
	}
	memcpy(g_store.path, path, sizeof(path));
	if (!path[0])
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
