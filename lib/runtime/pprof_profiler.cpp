/* SPDX-License-Identifier: MIT */
/*
 * The built-in pprof heap profiler (pprof_profiler.h): the stack table its
 * callbacks fill, its triggers and thread, and its snapshots.
 */
#include "pprof_profiler.h"

#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bound_at_load.h"
#include "frames.h"
#include "options.h"
#include "plain_vector.h"
#include "procfs.h"
#include "reader_loader.h"

extern char **environ;

namespace allocinfo {
namespace pprof_profiler {

namespace {

/* One distinct (stack, call site) of the table. */
struct stack_entry {
	uint64_t hash;
	uint32_t next;		/* the next entry of its hash chain, 0: none */
	uint32_t tag;
	uint32_t nframes;
	double alloc_objects, alloc_space, inuse_objects, inuse_space;
	uint64_t raw_alloc_count, raw_alloc_bytes, raw_inuse_count, raw_inuse_bytes;
	uintptr_t frames[ALLOCINFO_PROFILE_FRAMES_MAX];
};

/* What each sampled block keeps (the profiler's sample_data). */
struct sample_note {
	uint32_t stack;		/* entry index; 0: not in the table */
	uint32_t unused;
	double weight;		/* objects this sample stands for */
};

constexpr uint32_t MAX_STACKS = 1u << 15;	/* entry 0 is never used */
constexpr uint32_t BUCKETS = 1u << 16;
constexpr unsigned PENDING_MAX = 64;		/* requested snapshots not yet written */

struct table {
	stack_entry *entries;		/* MAX_STACKS, reserved */
	uint32_t *buckets;		/* BUCKETS heads */
	uint32_t used;			/* entries 1 .. used - 1 taken */
	uint64_t dropped;		/* samples that found the table full */
	double alloc_space, inuse_space;	/* estimates over all stacks */
};

/* The profiler's settings, fixed once started. */
struct settings {
	size_t rate;
	size_t alloc_interval, inuse_interval;
	double time_interval;
	char base[4096];
	bool text;
};

pthread_mutex_t g_start_lock = PTHREAD_MUTEX_INITIALIZER;	/* starting it, once */
bool g_running;
settings g_set;
const allocinfo_reader_v1 *g_module;

pthread_mutex_t g_table_lock = PTHREAD_MUTEX_INITIALIZER;	/* g_tab */
table g_tab;
stack_entry *g_copy;		/* the writer's copy of the entries, reserved */
double g_alloc_since;		/* estimated bytes allocated since the last trigger */
double g_inuse_mark;		/* in-use estimate at the last in-use trigger: the
				 * next one is an interval above it (other snapshots
				 * leave it, so the count of files is predictable) */

pthread_mutex_t g_write_lock = PTHREAD_MUTEX_INITIALIZER;	/* one snapshot at a time */
bool g_ever_started;		/* the profiler was started once: fork takes g_write_lock */
bool g_fork_locked;		/* g_write_lock: the forking thread holds it */
unsigned g_seq;			/* the next file's sequence number */
pid_t g_pid;			/* the process the sequence is for */
struct timespec g_started;
/* The previous snapshot's time (under g_write_lock): snapshots closer than this keep
 * the debug information they read for the next one. Reading it again costs a large
 * C++ program seconds of CPU when new call sites keep coming (performance.md). */
struct timespec g_previous;
bool g_have_previous;
constexpr double KEEP_DEBUG_INFO_S = 10;

/* The profiler's thread: woken through g_wake (a futex word). */
uint32_t g_wake;
unsigned g_pending;		/* snapshots requested from inside allocations */
bool g_stopping;
bool g_have_thread;
pthread_t g_thread;

/* This thread is writing a snapshot: its own allocations are not the program's. */
__thread bool t_writing __attribute__((tls_model("initial-exec")));

/* ---- numbers -------------------------------------------------------------------- */

/* -expm1(-x) = 1 - exp(-x) for x >= 0, to a relative 1e-12 or so: the series for
 * small x, else exp(-x) from exp(-x / 2^k)'s series squared k times. */
double one_minus_exp_neg(double x)
{
	if (x > 60)
		return 1;
	if (x < 0.5) {
		double term = x, sum = 0;
		for (int i = 1; i < 30 && term != 0; i++) {
			sum += (i & 1) ? term : -term;
			term = term * x / (i + 1);
		}
		return sum;
	}
	int k = 0;
	double y = x;
	while (y > 0.5) {
		y /= 2;
		k++;
	}
	double term = 1, e = 1;
	for (int i = 1; i < 30; i++) {
		term = term * -y / i;
		e += term;
	}
	while (k--)
		e *= e;
	return 1 - e;
}

uint64_t hash_stack(const allocinfo_sample *s)
{
	uint64_t h = 0xcbf29ce484222325ull ^ s->tag;
	for (int i = 0; i < s->nframes; i++) {
		h ^= (uint64_t)(uintptr_t)s->frames[i];
		h *= 0x100000001b3ull;
		h ^= h >> 29;
	}
	return h;
}

struct timespec now(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return ts;
}

double seconds_between(const struct timespec &a, const struct timespec &b)
{
	return (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
}

/* ---- waking the thread (from inside allocations: a futex, nothing more) ---------- */

void wake_thread()
{
	__atomic_add_fetch(&g_wake, 1, __ATOMIC_RELEASE);
	syscall(SYS_futex, &g_wake, FUTEX_WAKE_PRIVATE, 1, nullptr, nullptr, 0);
}

/* Called with the table lock held. */
void request_snapshot()
{
	if (!__atomic_load_n(&g_have_thread, __ATOMIC_ACQUIRE))
		return;
	if (__atomic_load_n(&g_pending, __ATOMIC_RELAXED) < PENDING_MAX)
		__atomic_add_fetch(&g_pending, 1, __ATOMIC_RELEASE);
	wake_thread();
}

/* ---- the callbacks --------------------------------------------------------------- */

stack_entry *find_or_add(const allocinfo_sample *s, uint64_t h, uint32_t *index)
{
	uint32_t *head = &g_tab.buckets[h & (BUCKETS - 1)];
	int n = s->nframes < 0 ? 0 : s->nframes > ALLOCINFO_PROFILE_FRAMES_MAX
		? ALLOCINFO_PROFILE_FRAMES_MAX : s->nframes;
	for (uint32_t i = *head; i; i = g_tab.entries[i].next) {
		stack_entry &e = g_tab.entries[i];
		if (e.hash == h && e.tag == s->tag && e.nframes == (uint32_t)n &&
		    memcmp(e.frames, s->frames, n * sizeof(uintptr_t)) == 0) {
			*index = i;
			return &e;
		}
	}
	if (g_tab.used >= MAX_STACKS)
		return nullptr;
	uint32_t i = g_tab.used++;
	stack_entry &e = g_tab.entries[i];
	e.hash = h;
	e.tag = s->tag;
	e.nframes = (uint32_t)n;
	memcpy(e.frames, s->frames, n * sizeof(uintptr_t));
	e.next = *head;
	*head = i;
	*index = i;
	return &e;
}

size_t on_alloc(void *, const allocinfo_sample *s)
{
	if (t_writing)
		return 0;	/* the profile's own memory: left out */
	auto *note = static_cast<sample_note *>(s->sample_data);
	double w = sample_weight(s->size, s->sample_rate);
	double bytes = w * (double)s->size;
	uint64_t h = hash_stack(s);
	bool trigger = false;
	pthread_mutex_lock(&g_table_lock);
	uint32_t index = 0;
	stack_entry *e = find_or_add(s, h, &index);
	if (!e) {
		g_tab.dropped++;
	} else {
		e->alloc_objects += w;
		e->alloc_space += bytes;
		e->inuse_objects += w;
		e->inuse_space += bytes;
		e->raw_alloc_count++;
		e->raw_alloc_bytes += s->size;
		e->raw_inuse_count++;
		e->raw_inuse_bytes += s->size;
		g_tab.alloc_space += bytes;
		g_tab.inuse_space += bytes;
		if (g_set.alloc_interval) {
			g_alloc_since += bytes;
			if (g_alloc_since >= (double)g_set.alloc_interval) {
				g_alloc_since -= (double)g_set.alloc_interval;
				trigger = true;
			}
		}
		if (g_set.inuse_interval &&
		    g_tab.inuse_space - g_inuse_mark >= (double)g_set.inuse_interval) {
			g_inuse_mark = g_tab.inuse_space;
			trigger = true;
		}
		if (trigger)
			request_snapshot();
	}
	pthread_mutex_unlock(&g_table_lock);
	if (note) {
		note->stack = e ? index : 0;
		note->weight = w;
	}
	return 0;
}

void on_free(void *, void *, size_t size, void *sample_data)
{
	const auto *note = static_cast<const sample_note *>(sample_data);
	if (!note || !note->stack)
		return;
	double bytes = note->weight * (double)size;
	pthread_mutex_lock(&g_table_lock);
	stack_entry &e = g_tab.entries[note->stack];
	e.inuse_objects -= note->weight;
	e.inuse_space -= bytes;
	e.raw_inuse_count--;
	e.raw_inuse_bytes -= size;
	g_tab.inuse_space -= bytes;
	pthread_mutex_unlock(&g_table_lock);
}

void on_realloc_inplace(void *, void *, size_t old_size, size_t new_size, void *sample_data)
{
	const auto *note = static_cast<const sample_note *>(sample_data);
	if (!note || !note->stack)
		return;
	double delta = note->weight * ((double)new_size - (double)old_size);
	pthread_mutex_lock(&g_table_lock);
	stack_entry &e = g_tab.entries[note->stack];
	e.inuse_space += delta;
	e.raw_inuse_bytes += new_size - old_size;
	g_tab.inuse_space += delta;
	pthread_mutex_unlock(&g_table_lock);
}

void write_snapshot(const char *why);

void on_snapshot(void *)
{
	write_snapshot("snapshot");
}

/* ---- snapshots ------------------------------------------------------------------- */

void file_name(char *out, size_t size, unsigned seq)
{
	if (!g_set.text) {
		snprintf(out, size, "%s.%ld.%u.pb.gz", g_set.base, (long)g_pid, seq);
		return;
	}
	size_t n = strlen(g_set.base) - 5;	/* without ".heap" or ".text" */
	snprintf(out, size, "%.*s.%ld.%u.heap", (int)n, g_set.base, (long)g_pid, seq);
}

/* The exact live totals of every call site with live blocks, and the names of the
 * sites the stacks name. */
void collect_sites(plain_vector<allocinfo_heap_site> &sites, const stack_entry *stacks,
		   uint32_t nstacks)
{
	plain_vector<uint8_t> in_stacks;	/* by tag: a stack's leaf is there */
	for (uint32_t i = 1; i < nstacks; i++) {
		while (in_stacks.size() <= stacks[i].tag)
			in_stacks.push_back(0);
		in_stacks[stacks[i].tag] = 1;
	}
	allocinfo_ptr_info info;
	long long bytes, count;
	for (unsigned tag = ALLOCINFO_TAG_FIRST;
	     allocinfo_tag_info(tag, nullptr, &bytes, &count) == 0; tag++) {
		bool named = bytes > 0 || count > 0 || (tag < in_stacks.size() && in_stacks[tag]);
		if (!named || allocinfo_tag_info(tag, &info, &bytes, &count) != 0)
			continue;
		allocinfo_heap_site s;
		memset(&s, 0, sizeof(s));
		s.tag = tag;
		s.line = info.line;
		s.bytes = bytes;
		s.count = count;
		static_assert(sizeof(s.file) == sizeof(info.file) && sizeof(s.func) == sizeof(info.func) &&
			      sizeof(s.module) == sizeof(info.module), "the names' sizes agree");
		memcpy(s.file, info.file, sizeof(s.file));
		memcpy(s.func, info.func, sizeof(s.func));
		memcpy(s.module, info.module, sizeof(s.module));
		sites.push_back(s);
	}
}

void write_snapshot(const char *why)
{
	if (!__atomic_load_n(&g_running, __ATOMIC_ACQUIRE))
		return;
	bool was_writing = t_writing;
	t_writing = true;
	busy_guard guard;
	pthread_mutex_lock(&g_write_lock);

	pthread_mutex_lock(&g_table_lock);
	uint32_t n = g_tab.used;
	memcpy(g_copy, g_tab.entries, n * sizeof(stack_entry));
	uint64_t dropped = g_tab.dropped;
	pthread_mutex_unlock(&g_table_lock);

	plain_vector<allocinfo_heap_stack> stacks;
	for (uint32_t i = 1; i < n; i++) {
		const stack_entry &e = g_copy[i];
		allocinfo_heap_stack k;
		k.nframes = e.nframes;
		k.tag = e.tag;
		k.frames = e.frames;
		k.alloc_objects = e.alloc_objects;
		k.alloc_space = e.alloc_space;
		k.inuse_objects = e.inuse_objects;
		k.inuse_space = e.inuse_space;
		k.raw_alloc_count = e.raw_alloc_count;
		k.raw_alloc_bytes = e.raw_alloc_bytes;
		k.raw_inuse_count = e.raw_inuse_count;
		k.raw_inuse_bytes = e.raw_inuse_bytes;
		stacks.push_back(k);
	}
	/* The text format has no place for the sites: naming them would read the
	 * objects' debug information for nothing. */
	plain_vector<allocinfo_heap_site> sites;
	if (!g_set.text)
		collect_sites(sites, g_copy, n);

	char path[sizeof(g_set.base) + 64];
	file_name(path, sizeof(path), g_seq++);
	struct timespec t = now(CLOCK_REALTIME), m = now(CLOCK_MONOTONIC);
	allocinfo_heap_snapshot snap;
	snap.path = path;
	snap.text_format = g_set.text;
	snap.sample_rate = g_set.rate;
	snap.time_nanos = (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
	snap.duration_nanos = (int64_t)(seconds_between(g_started, m) * 1e9);
	snap.keep_debug_info = g_have_previous && seconds_between(g_previous, m) < KEEP_DEBUG_INFO_S;
	g_previous = m;
	g_have_previous = true;
	snap.nstacks = stacks.size();
	snap.stacks = stacks.begin();
	snap.nsites = sites.size();
	snap.sites = sites.begin();
	int err;
	{
		reader_in_use using_reader;
		err = g_module->write_heap_profile(&snap);
	}
	if (err)
		log_message("cannot write the heap profile %.300s (%s): %s", path, why,
			    strerror(err));
	static bool said_dropped;
	if (dropped && !said_dropped) {
		said_dropped = true;
		log_message("the heap profiler's table of %u stacks is full; %llu samples "
			    "are left out", MAX_STACKS - 1, (unsigned long long)dropped);
	}
	pthread_mutex_unlock(&g_write_lock);
	t_writing = was_writing;
}

/* ---- the thread ------------------------------------------------------------------ */

void add_seconds(struct timespec &t, double s)
{
	time_t whole = (time_t)s;
	t.tv_sec += whole;
	t.tv_nsec += (long)((s - (double)whole) * 1e9);
	if (t.tv_nsec >= 1000000000) {
		t.tv_sec++;
		t.tv_nsec -= 1000000000;
	}
}

void *thread_main(void *)
{
	t_writing = true;
	const double step = g_set.time_interval;
	struct timespec next = now(CLOCK_MONOTONIC);
	add_seconds(next, step);	/* the first one an interval after the start */
	for (;;) {
		uint32_t seen = __atomic_load_n(&g_wake, __ATOMIC_ACQUIRE);
		if (__atomic_load_n(&g_pending, __ATOMIC_ACQUIRE)) {
			__atomic_sub_fetch(&g_pending, 1, __ATOMIC_ACQ_REL);
			write_snapshot("interval");
			continue;
		}
		if (__atomic_load_n(&g_stopping, __ATOMIC_ACQUIRE))
			break;
		struct timespec *timeout = nullptr, left;
		if (step > 0) {
			double due = seconds_between(now(CLOCK_MONOTONIC), next);
			if (due <= 0) {
				write_snapshot("time interval");
				add_seconds(next, step);
				/* Late by more than an interval: none are made up. */
				struct timespec t = now(CLOCK_MONOTONIC);
				if (seconds_between(next, t) > 0) {
					next = t;
					add_seconds(next, step);
				}
				continue;
			}
			left.tv_sec = (time_t)due;
			left.tv_nsec = (long)((due - (double)left.tv_sec) * 1e9);
			timeout = &left;
		}
		syscall(SYS_futex, &g_wake, FUTEX_WAIT_PRIVATE, seen, timeout, nullptr, 0);
	}
	return nullptr;
}

bool start_thread()
{
	/* The new thread's first allocations may be a caller's to name (a sanitizer's
	 * thread start-up allocates): the unwinder must be ready before. */
	prepare_unwinder();
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);	/* signals are the program's */
	__atomic_store_n(&g_stopping, false, __ATOMIC_RELEASE);
	int rc = pthread_create(&g_thread, nullptr, thread_main, nullptr);
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
	if (rc) {
		log_message("cannot start the heap profiler's thread: %s; interval snapshots "
			    "are off", strerror(rc));
		return false;
	}
	return true;
}

void stop_thread()
{
	if (!__atomic_load_n(&g_have_thread, __ATOMIC_ACQUIRE))
		return;
	__atomic_store_n(&g_have_thread, false, __ATOMIC_RELEASE);
	__atomic_store_n(&g_stopping, true, __ATOMIC_RELEASE);
	wake_thread();
	pthread_join(g_thread, nullptr);
}

/* ---- exit and fork --------------------------------------------------------------- */

void at_exit()
{
	if (!__atomic_load_n(&g_running, __ATOMIC_ACQUIRE) || getpid() != g_pid)
		return;
	stop_thread();
	write_snapshot("exit");
	allocinfo_profiler_stop();
	__atomic_store_n(&g_running, false, __ATOMIC_RELEASE);
}

void *reserve(size_t bytes)
{
	void *p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? nullptr : p;
}

bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);
	return n >= m && strcmp(s + n - m, suffix) == 0;
}

int start(size_t rate, const char *base, size_t alloc_interval, size_t inuse_interval,
	  double time_interval)
{
	if (secure_execution()) {
		log_message("the heap profiler does not run in a setuid or setgid program");
		return -EPERM;
	}
	if (!base || !*base || strlen(base) >= sizeof(g_set.base) || !(time_interval >= 0))
		return -EINVAL;
	if (g_running)
		return -EBUSY;
	/* Loaded now, not from inside an allocation. */
	g_module = reader_module();
	if (!g_module)
		return -ENOENT;
	if (!g_tab.entries) {	/* all three, or none: a later start tries again */
		void *entries = reserve(MAX_STACKS * sizeof(stack_entry));
		void *copy = reserve(MAX_STACKS * sizeof(stack_entry));
		void *buckets = reserve(BUCKETS * sizeof(uint32_t));
		if (!entries || !copy || !buckets) {
			if (entries)
				munmap(entries, MAX_STACKS * sizeof(stack_entry));
			if (copy)
				munmap(copy, MAX_STACKS * sizeof(stack_entry));
			if (buckets)
				munmap(buckets, BUCKETS * sizeof(uint32_t));
			return -ENOMEM;
		}
		g_copy = static_cast<stack_entry *>(copy);
		g_tab.buckets = static_cast<uint32_t *>(buckets);
		g_tab.used = 1;
		g_tab.entries = static_cast<stack_entry *>(entries);
	}
	g_set.rate = rate ? rate : ALLOCINFO_PROFILE_DEFAULT_RATE;
	g_set.alloc_interval = alloc_interval;
	g_set.inuse_interval = inuse_interval;
	g_set.time_interval = time_interval;
	strcpy(g_set.base, base);
	g_set.text = ends_with(base, ".heap") || ends_with(base, ".text");
	g_pid = getpid();
	g_started = now(CLOCK_MONOTONIC);

	allocinfo_profiler p;
	memset(&p, 0, sizeof(p));
	p.sample_data_size = sizeof(sample_note);
	p.initial_sample_rate = g_set.rate;
	p.on_alloc = on_alloc;
	p.on_free = on_free;
	p.on_realloc_inplace = on_realloc_inplace;
	p.on_snapshot = on_snapshot;
	int rc = allocinfo_profiler_attach(&p, nullptr);
	if (rc)
		return rc;
	if (!__atomic_load_n(&g_ever_started, __ATOMIC_ACQUIRE)) {
		__atomic_store_n(&g_ever_started, true, __ATOMIC_RELEASE);
		atexit(at_exit);
	}
	__atomic_store_n(&g_running, true, __ATOMIC_RELEASE);
	if (alloc_interval || inuse_interval || time_interval > 0)
		__atomic_store_n(&g_have_thread, start_thread(), __ATOMIC_RELEASE);
	rc = allocinfo_profiler_start();
	if (rc) {
		stop_thread();
		__atomic_store_n(&g_running, false, __ATOMIC_RELEASE);
		allocinfo_profiler_detach();
	}
	return rc;
}

/* ---- the environment ----------------------------------------------------------- */

bool env_present(const char *name)
{
	size_t len = strlen(name);
	for (char **e = environ; e && *e; e++)
		if (strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return true;
	return false;
}

size_t env_size(const char *name, size_t fallback)
{
	const char *v = find_env(name);
	size_t n;
	if (!v)
		return fallback;
	if (parse_size(v, &n))
		return n;
	log_message("%s='%.64s' is not a size (bytes, or a number with KiB, MiB or GiB); "
		    "using %zu", name, v, fallback);
	return fallback;
}

} /* namespace */

bool parse_size(const char *s, size_t *out)
{
	uint64_t v;
	const char *p = s ? parse_decimal(s, &v) : nullptr;
	if (!p || v == UINT64_MAX)	/* no digits, or too many */
		return false;
	unsigned shift = 0;
	if (strcmp(p, "KiB") == 0)
		shift = 10;
	else if (strcmp(p, "MiB") == 0)
		shift = 20;
	else if (strcmp(p, "GiB") == 0)
		shift = 30;
	else if (*p)
		return false;
	if (shift && v > (~0ull >> shift))
		return false;
	*out = (size_t)(v << shift);
	return true;
}

bool parse_seconds(const char *s, double *out)
{
	if (!s || !*s)
		return false;
	double v = 0, scale = 0;
	const char *p = s;
	bool digits = false;
	for (; *p; p++) {
		if (*p >= '0' && *p <= '9') {
			digits = true;
			if (scale) {
				v += (*p - '0') * scale;
				scale /= 10;
			} else {
				v = v * 10 + (*p - '0');
			}
		} else if (*p == '.' && !scale) {
			scale = 0.1;
		} else {
			return false;
		}
	}
	if (!digits || v > 1e9)
		return false;
	*out = v;
	return true;
}

double sample_weight(size_t size, size_t rate)
{
	if (rate <= 1 || size == 0)
		return 1;
	return 1 / one_minus_exp_neg((double)size / (double)rate);
}

void start_from_environment()
{
	if (secure_execution()) {
		if (env_present("ALLOCINFO_PROFILE"))
			log_message("ALLOCINFO_PROFILE is ignored in a setuid or setgid program");
		return;
	}
	const char *base = find_env("ALLOCINFO_PROFILE");
	if (!base)
		return;
	if (!*base) {
		log_message("ALLOCINFO_PROFILE='' names no file; no heap profile");
		return;
	}
	size_t rate = env_size("ALLOCINFO_PROFILE_SAMPLE_RATE", ALLOCINFO_PROFILE_DEFAULT_RATE);
	if (rate == 0) {
		log_message("ALLOCINFO_PROFILE_SAMPLE_RATE='0' is not a rate; using %u",
			    ALLOCINFO_PROFILE_DEFAULT_RATE);
		rate = ALLOCINFO_PROFILE_DEFAULT_RATE;
	}
	size_t alloc_interval = env_size("ALLOCINFO_PROFILE_ALLOC_INTERVAL", 0);
	size_t inuse_interval = env_size("ALLOCINFO_PROFILE_INUSE_INTERVAL", 0);
	double time_interval = 0;
	const char *t = find_env("ALLOCINFO_PROFILE_TIME_INTERVAL");
	if (t && !parse_seconds(t, &time_interval)) {
		log_message("ALLOCINFO_PROFILE_TIME_INTERVAL='%.64s' is not a number of seconds; "
			    "using 0 (none)", t);
		time_interval = 0;
	}
	pthread_mutex_lock(&g_start_lock);
	int rc = start(rate, base, alloc_interval, inuse_interval, time_interval);
	pthread_mutex_unlock(&g_start_lock);
	if (rc == -ENOTSUP)
		log_message("ALLOCINFO_PROFILE='%.200s' is ignored: profiling was started with "
			    "ALLOCINFO=never", base);
	else if (rc)
		log_message("ALLOCINFO_PROFILE='%.200s': cannot start the heap profiler: %s",
			    base, strerror(-rc));
}

/* No snapshot is half written across fork. The table's lock is not held across it:
 * the child may allocate (and sample) before its handlers run (a sanitizer's fork
 * does); it is made anew in the child, where a sample being recorded by another
 * thread at that instant may be lost. */
void fork_prepare()
{
	if (__atomic_load_n(&g_ever_started, __ATOMIC_ACQUIRE)) {
		pthread_mutex_lock(&g_write_lock);
		g_fork_locked = true;
	}
}

void fork_parent()
{
	if (g_fork_locked) {
		g_fork_locked = false;
		pthread_mutex_unlock(&g_write_lock);
	}
}

/* The child profiles on, under its own pid, with a thread of its own. */
void fork_child()
{
	pthread_mutex_init(&g_table_lock, nullptr);
	if (g_fork_locked) {	/* the forking thread's: unlocked, as in the parent */
		g_fork_locked = false;
		pthread_mutex_unlock(&g_write_lock);
	}
	if (!__atomic_load_n(&g_running, __ATOMIC_ACQUIRE))
		return;
	g_pid = getpid();
	g_seq = 0;
	g_pending = 0;
	__atomic_store_n(&g_have_thread, false, __ATOMIC_RELEASE);
	if (g_set.alloc_interval || g_set.inuse_interval || g_set.time_interval > 0)
		__atomic_store_n(&g_have_thread, start_thread(), __ATOMIC_RELEASE);
}

} /* namespace pprof_profiler */
} /* namespace allocinfo */

using namespace allocinfo;

extern "C" EXPORT int allocinfo_pprof_profiler_start(size_t sample_rate, const char *base,
						     size_t alloc_interval, size_t inuse_interval,
						     double time_interval)
{
	pthread_mutex_lock(&pprof_profiler::g_start_lock);
	int rc = pprof_profiler::start(sample_rate, base, alloc_interval, inuse_interval,
				       time_interval);
	pthread_mutex_unlock(&pprof_profiler::g_start_lock);
	return rc;
}
