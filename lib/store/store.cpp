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
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bound_at_load.h"
#include "nocancel.h"
#include "procfs.h"
#include "registry.h"
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
	pid_t pid = getpid();
	char *base = nullptr;

	/* BPF maps only when asked for, and never here: making them and loading the
	 * iterator costs milliseconds, which a process that ends within them never
	 * pays. The store starts as shm, in the BPF store's layout, and gets its maps
	 * from the library's thread (store_bpf_ready()). */
	bool bpf_later = false;
	if (requested == store_kind::bpf) {
		nr_shards = plan_shards(true);
		uint32_t cap = store_bpf_probe(true, nr_shards);
		if (cap) {
			capacity = cap;
			bpf_later = true;
		}
	}
	if (!bpf_later)
		nr_shards = plan_shards(false);
	size_t size = total_size(nr_shards, capacity);

	if (requested != store_kind::none) {
		int fd = store_file_open(pid, size, g_store.path, sizeof(g_store.path));
		if (fd >= 0) {
			void *m = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
			if (m != MAP_FAILED) {
				store_file_keep(fd, g_store.path);
				base = static_cast<char *>(m);
				g_store.kind = store_kind::shm;
			} else {
				nocancel::close(fd);
				if (g_store.path[0])
					unlink(g_store.path);
			}
		}
		if (!base) {
			if (requested != store_kind::automatic)
				log_message("ALLOCINFO_STORE=%s: cannot create %s (%s); counters "
					    "stay private to the process",
					    requested == store_kind::bpf ? "bpf" : "shm",
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
	h->backend = 0;
	h->pid = (int32_t)pid;
	h->start_time = process_start_time(pid);
	h->state = ALLOCINFO_STATE_LIVE;
	attach(base, size);
	if (bpf_later && g_store.kind == store_kind::shm)
		g_store_pending = STORE_PENDING_BPF;
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

/* Writes [off, off + len) of the store as mapped here into the same place of fd. */
static bool copy_region(int fd, size_t off, size_t len)
{
	return write_at(fd, g_store.base + off, len, (off_t)off);
}

/* A forked child's new store file, written from the private copy it counted in: the
 * used tag slots, their tokens, strings and counters, then the header with the
 * child's pid, its magic last, so a reader never finds the parent's pid in the
 * child's file. */
static bool fill_child_file(int fd, pid_t pid)
{
	allocinfo_store_header *h = g_store.hdr;
	uint32_t nr = h->nr_tags;
	if (!copy_region(fd, h->tags_offset, (size_t)nr * sizeof(allocinfo_store_tag)) ||
	    !copy_region(fd, h->strings_offset, h->strings_used) ||
	    !copy_region(fd, h->ext_offset, (size_t)nr * sizeof(allocinfo_store_tag_ext)))
		return false;
	for (uint32_t shard = 0, n = shards_in_use(); shard < n; shard++) {
		size_t off = h->counters_offset + ((size_t)shard << g_store.shard_shift);
		if (!copy_region(fd, off, (size_t)nr * sizeof(allocinfo_counter)))
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

/*
 * The private copy a forked child counts in until it publishes its store: made by
 * the parent just before fork (store_fork_prepare()), in private anonymous memory of
 * the store's layout, and moved onto the store's address by the child, which then
 * copies nothing: fork gave it the pages. Copied before fork, the child's counts are
 * exactly the parent's at the fork for the forking thread, whatever the parent does
 * next. Kept by the parent for its next fork (a few used pages).
 */
char *g_shadow;

/* The used part of the store into dst (same layout): the header, the used tag slots,
 * their tokens and strings, and the used part of each shard that may hold counts. */
static void copy_used(char *dst)
{
	allocinfo_store_header *h = g_store.hdr;
	uint32_t nr = h->nr_tags;
	memcpy(dst, g_store.base, sizeof(*h));
	memcpy(dst + h->tags_offset, g_store.tags, (size_t)nr * sizeof(allocinfo_store_tag));
	memcpy(dst + h->strings_offset, g_store.strings, h->strings_used);
	memcpy(dst + h->ext_offset, g_store.ext, (size_t)nr * sizeof(allocinfo_store_tag_ext));
	for (uint32_t shard = 0, n = shards_in_use(); shard < n; shard++) {
		size_t off = h->counters_offset + ((size_t)shard << g_store.shard_shift);
		memcpy(dst + off, g_store.base + off, (size_t)nr * sizeof(allocinfo_counter));
	}
}

uint32_t g_store_pending;

namespace {

/* What the child's store is to be once published, and who is publishing it. */
store_kind g_pending_kind = store_kind::none;
/* A child of a process still waiting for its BPF maps makes maps of its own. */
bool g_bpf_wanted_fresh;
pthread_mutex_t g_pending_lock = PTHREAD_MUTEX_INITIALIZER;
__thread bool t_publishing __attribute__((tls_model("initial-exec")));

/* Registry lock and g_pending_lock held, the store a private copy: the child's shm
 * (or BPF) store, written from it and mapped over it. Allocates nothing before the
 * new store is in place, so no update of this thread falls between copy and map. */
void publish_child_store()
{
	store_kind kind = g_pending_kind;
	if (kind == store_kind::bpf && g_bpf_wanted_fresh) {
		/* The parent had no maps yet: an shm store first, then maps of our own. */
		kind = store_kind::shm;
	} else if (kind == store_kind::bpf) {
		if (store_bpf_fork_child()) {
			g_store.kind = store_kind::bpf;
			return;
		}
		/* No BPF store for the child: an shm store of the same layout. */
		store_bpf_forget();
		kind = store_kind::shm;
	}
	pid_t pid = getpid();
	char path[sizeof(g_store.path)];
	int fd = store_file_open(pid, g_store.size, path, sizeof(path));
	if (fd >= 0 && fill_child_file(fd, pid) &&
	    mmap(g_store.base, g_store.size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd,
		 0) != MAP_FAILED) {
		store_file_keep_child(fd, path);
		memcpy(g_store.path, path, sizeof(path));
		g_store.kind = kind;
		if (g_bpf_wanted_fresh) {
			if (store_bpf_prepare(pid) && store_bpf_attach())
				g_store.kind = store_kind::bpf;
			else
				store_bpf_abandon();
		}
		return;
	}
	/* Keep counting alone in the private copy, which no reader sees. */
	log_message("fork: cannot make a store for the child (%s); its counters stay private",
		    strerror(errno));
	if (fd >= 0) {
		nocancel::close(fd);
		if (path[0])
			unlink(path);
	}
	store_file_drop_inherited();
	g_store.path[0] = '\0';
}

} /* namespace */

void store_fork_prepare()
{
	bool publishes = !(g_store_pending == STORE_PENDING_FORK || g_store.kind == store_kind::none);
	if (publishes && !g_shadow) {
		void *m = mmap(nullptr, g_store.size, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (m != MAP_FAILED)
			g_shadow = static_cast<char *>(m);
	}
	/* Without one, the child must find the counters mapped (store_bpf.h). */
	store_bpf_fork_counters(publishes && g_shadow);
	if (publishes && g_shadow)
		copy_used(g_shadow);
}

void store_fork_child()
{
	/* A child of a child that had not published yet: fork itself copied the private
	 * store, and this child publishes its own in turn. An anonymous store was copied
	 * by fork too. */
	uint32_t pending = g_store_pending;
	if (pending == STORE_PENDING_FORK || g_store.kind == store_kind::none)
		return;
	if (!g_shadow || mremap(g_shadow, g_store.size, g_store.size, MREMAP_MAYMOVE | MREMAP_FIXED,
				g_store.base) == MAP_FAILED) {
		/* Written into by no one from here: counting goes on, lost to readers. */
		log_message("fork: cannot copy the store for the child (%s); its counts are lost",
			    strerror(errno));
		return;
	}
	g_shadow = nullptr;	/* moved: the child makes its own if it forks */
	g_store.hdr->pid = (int32_t)getpid();
	g_bpf_wanted_fresh = pending == STORE_PENDING_BPF;
	g_pending_kind = g_bpf_wanted_fresh ? store_kind::bpf : g_store.kind;
	if (g_store.kind == store_kind::bpf)
		store_bpf_fork_pending();
	g_store.kind = store_kind::none;
	g_store.path[0] = '\0';
	pthread_mutex_init(&g_pending_lock, nullptr);
	__atomic_store_n(&g_store_pending, STORE_PENDING_FORK, __ATOMIC_RELEASE);
}

/* Publishes a forked child's store if it is still pending, while every update waits. */
static void publish_forked()
{
	registry_lock();
	pthread_mutex_lock(&g_pending_lock);
	bool published = false;
	if (__atomic_load_n(&g_store_pending, __ATOMIC_ACQUIRE) == STORE_PENDING_FORK) {
		t_publishing = true;
		publish_child_store();
		__atomic_store_n(&g_store_pending, 0, __ATOMIC_RELEASE);
		t_publishing = false;
		published = true;
	}
	pthread_mutex_unlock(&g_pending_lock);
	registry_unlock();
	if (published)
		store_bpf_published();	/* may allocate: counted in the new store */
}

bool store_pending_update(uint32_t slot, int64_t bytes, int64_t calls)
{
	/* Inside the library (it may hold the registry lock), while fork holds it, from
	 * the publishing itself, or while the BPF maps are not made yet: counted in the
	 * shared shard, atomically, under the lock the publisher holds while it copies. */
	bool busy = allocinfo__thread.override == &g_discard_tag || in_fork_window() ||
		    __atomic_load_n(&g_store_pending, __ATOMIC_ACQUIRE) == STORE_PENDING_BPF;
	if (t_publishing || busy) {
		if (!t_publishing)
			pthread_mutex_lock(&g_pending_lock);
		bool counted = t_publishing || store_pending();
		if (counted) {
			auto *c = reinterpret_cast<allocinfo_counter *>(g_store.counters + slot * 16ull);
			__atomic_fetch_add(&c->bytes, bytes, __ATOMIC_RELAXED);
			__atomic_fetch_add(&c->calls, calls, __ATOMIC_RELAXED);
		}
		if (!t_publishing)
			pthread_mutex_unlock(&g_pending_lock);
		return counted;
	}
	/* A forked child's first update: every other update waits here until the store
	 * is published, so none is written into the private copy while it is copied. */
	publish_forked();
	return false;
}

void store_publish_forked()
{
	/* Not in a vfork() child of an unpublished child: it shares that child's memory,
	 * store included, and ran no fork handler (the store names the other pid). Not
	 * from inside the library, which may hold the registry lock, nor while a fork
	 * holds it. */
	if (__atomic_load_n(&g_store_pending, __ATOMIC_ACQUIRE) == STORE_PENDING_FORK &&
	    g_store.hdr->pid == (int32_t)getpid() && allocinfo__thread.override != &g_discard_tag &&
	    !in_fork_window())
		publish_forked();
}

bool store_publish_bpf()
{
	if (__atomic_load_n(&g_store_pending, __ATOMIC_ACQUIRE) != STORE_PENDING_BPF)
		return false;
	/* The maps first, while the program runs on. */
	bool ok = store_bpf_prepare(getpid());
	registry_lock();
	pthread_mutex_lock(&g_pending_lock);
	if (__atomic_load_n(&g_store_pending, __ATOMIC_ACQUIRE) != STORE_PENDING_BPF) {
		ok = false;	/* published meanwhile */
	} else if (ok) {
		t_publishing = true;
		ok = store_bpf_attach();
		t_publishing = false;
		if (ok)
			g_store.kind = store_kind::bpf;
	}
	if (!ok)
		store_bpf_abandon();
	__atomic_store_n(&g_store_pending, 0, __ATOMIC_RELEASE);
	pthread_mutex_unlock(&g_pending_lock);
	registry_unlock();
	if (ok)
		store_bpf_published();
	return ok;
}

void store_retire()
{
	/* Only the store's own process: a child made without the fork handlers (a raw
	 * clone()) still maps its parent's, which lives on. */
	if (!g_store.hdr || g_store.hdr->pid != (int32_t)getpid())
		return;
	__atomic_store_n(&g_store.hdr->state, ALLOCINFO_STATE_EXITED, __ATOMIC_RELEASE);
	if (g_store.path[0])
		unlink(g_store.path);
	store_bpf_retire();
}

} /* namespace allocinfo */
