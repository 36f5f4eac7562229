/* SPDX-License-Identifier: MIT */
/*
 * allocinfo - the report of /run/allocinfo without the daemon: reads the stores of
 * the machine's instrumented processes and prints their call sites, in the kernel's
 * /proc/allocinfo format or as JSON, Prometheus text, pprof, a snapshot or the
 * growth since one; and switches counting on and off in a running process.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <string>
#include <vector>

#include "allocinfo_snapshot.h"
#include "block_lookup.h"
#include "profile_read.h"
#include "report.h"
#include "safe_open.h"
#include "saturating.h"
#include "site_table.h"
#include "store_reader.h"
#include "store_scan.h"
#include "symbolize.h"

/* Stores kept in BPF maps: their reader is in libreader whenever its header is. */
#if __has_include("store_bpf_reader.h")
#include "bpf_tag_names.h"
#include "store_bpf_reader.h"
#define HAVE_BPF_READER 1
#endif

using namespace allocinfo;

namespace {

const char PROG[] = "allocinfo";

enum class output { text, json, prometheus, pprof, save, diff };

struct options {
	int pid = 0;
	sort_key sort = sort_key::site;
	bool sort_given = false;
	size_t top = 0;			/* 0: every row */
	bool human = false;
	output out = output::text;
	int outputs = 0;		/* output options given */
	std::string file;		/* of --pprof, --save or --diff */
	std::string profile;		/* --profile: a sampled heap profile to merge */
	double watch = 0;		/* seconds; 0 = print once */
	long count = 0;			/* --count: reports printed by --watch; 0 = until SIGINT */
	bool gc = false, enable = false, disable = false, status = false;
	bool addr_given = false;
	uint64_t addr = 0;		/* --addr: the block holding it */
	bool by_allocator = false;	/* --by allocator */
};

volatile sig_atomic_t g_stop;

void on_signal(int) { g_stop = 1; }

void usage_text(FILE *f)
{
	fprintf(f,
"Usage: allocinfo [-p PID] [--sort bytes|calls|site] [--top N] [--human]\n"
"                 [--json | --prometheus | --pprof FILE [--profile FILE] |\n"
"                  --save FILE | --diff FILE]\n"
"                 [--watch SECONDS [--count N]] [--by allocator]\n"
"       allocinfo -p PID --enable | --disable\n"
"       allocinfo [-p PID] --status\n"
"       allocinfo -p PID --addr ADDRESS\n"
"       allocinfo --gc\n"
"\n"
"Prints the live memory of every call site of the instrumented processes (the\n"
"format of /proc/allocinfo, lines of equal sites summed across processes).\n"
"\n"
"  -p, --pid PID        that process alone\n"
"      --sort KEY       bytes or calls (largest first), or site (the default)\n"
"      --top N          the first N lines only\n"
"      --human          sizes as 4.00KiB, 1.50MiB, ...\n"
"      --json           JSON\n"
"      --prometheus     Prometheus text format, one series per process and site\n"
"      --pprof FILE     a gzipped pprof profile (go tool pprof FILE); - for stdout\n"
"      --profile FILE   with --pprof: the sampled stacks of FILE (a heap profile of\n"
"                       ALLOCINFO_PROFILE) beside the exact per-site totals\n"
"      --save FILE      a snapshot of the current counters, for --diff\n"
"      --diff FILE      the growth of each site since the snapshot in FILE\n"
"      --watch SECONDS  print again every SECONDS (0.1 to 86400) until interrupted\n"
"      --count N        with --watch: stop after N reports\n"
"      --by allocator   one line per allocator (malloc, or a pool's name), summed\n"
"      --gc             remove the stores of processes that are gone\n"
"      --enable         with -p: switch counting on in that process\n"
"      --disable        with -p: switch it off (allocations are not counted)\n"
"      --status         whether each process counts now, and its store\n"
"      --addr ADDRESS   with -p: the live block holding ADDRESS (hex, 0x...) and\n"
"                       where it was allocated; exit 1 when none holds it\n"
"  -h, --help           this help\n"
"  -V, --version        the version\n"
"\n"
"Stores are read from $ALLOCINFO_STORE_DIR (default /dev/shm). Exit status: 0 ok,\n"
"1 error, 2 usage error.\n");
}

[[noreturn]] void usage_error(const std::string &msg)
{
	fprintf(stderr, "%s: %s\nTry 'allocinfo --help' for more information.\n", PROG,
		msg.c_str());
	exit(2);
}

bool parse_long(const char *s, long min, long max, long &v)
{
	if (!*s || *s == '+' || *s == '-' || *s == ' ')
		return false;
	char *end;
	errno = 0;
	long x = strtol(s, &end, 10);
	if (errno || *end || x < min || x > max)
		return false;
	v = x;
	return true;
}

options parse_options(int argc, char **argv)
{
	enum { OPT_SORT = 256, OPT_TOP, OPT_HUMAN, OPT_JSON, OPT_PROM, OPT_PPROF, OPT_SAVE,
	       OPT_DIFF, OPT_WATCH, OPT_COUNT, OPT_GC, OPT_ENABLE, OPT_DISABLE, OPT_STATUS,
	       OPT_ADDR, OPT_BY, OPT_PROFILE };
	static const struct option longopts[] = {
		{"pid", required_argument, nullptr, 'p'},
		{"sort", required_argument, nullptr, OPT_SORT},
		{"top", required_argument, nullptr, OPT_TOP},
		{"human", no_argument, nullptr, OPT_HUMAN},
		{"json", no_argument, nullptr, OPT_JSON},
		{"prometheus", no_argument, nullptr, OPT_PROM},
		{"pprof", required_argument, nullptr, OPT_PPROF},
		{"profile", required_argument, nullptr, OPT_PROFILE},
		{"save", required_argument, nullptr, OPT_SAVE},
		{"diff", required_argument, nullptr, OPT_DIFF},
		{"watch", required_argument, nullptr, OPT_WATCH},
		{"count", required_argument, nullptr, OPT_COUNT},
		{"gc", no_argument, nullptr, OPT_GC},
		{"enable", no_argument, nullptr, OPT_ENABLE},
		{"disable", no_argument, nullptr, OPT_DISABLE},
		{"status", no_argument, nullptr, OPT_STATUS},
		{"addr", required_argument, nullptr, OPT_ADDR},
		{"by", required_argument, nullptr, OPT_BY},
		{"help", no_argument, nullptr, 'h'},
		{"version", no_argument, nullptr, 'V'},
		{nullptr, 0, nullptr, 0},
	};
	options o;
	bool pid_given = false, top_given = false;
	long v;
	opterr = 0;
	for (;;) {
		int c = getopt_long(argc, argv, ":p:hV", longopts, nullptr);
		if (c == -1)
			break;
		switch (c) {
		case 'p':
			if (pid_given)
				usage_error("-p: give one process only");
			if (!parse_long(optarg, 1, INT_MAX, v))
				usage_error(std::string("-p: '") + optarg + "' is not a process id");
			o.pid = (int)v;
			pid_given = true;
			break;
		case OPT_SORT:
			if (!strcmp(optarg, "bytes"))
				o.sort = sort_key::bytes;
			else if (!strcmp(optarg, "calls"))
				o.sort = sort_key::calls;
			else if (!strcmp(optarg, "site"))
				o.sort = sort_key::site;
			else
				usage_error(std::string("--sort: '") + optarg +
					    "' is not one of bytes, calls, site");
			o.sort_given = true;
			break;
		case OPT_TOP:
			if (!parse_long(optarg, 1, LONG_MAX, v))
				usage_error(std::string("--top: '") + optarg +
					    "' is not a positive number");
			o.top = (size_t)v;
			top_given = true;
			break;
		case OPT_HUMAN:
			o.human = true;
			break;
		case OPT_JSON:
		case OPT_PROM:
		case OPT_PPROF:
		case OPT_SAVE:
		case OPT_DIFF:
			o.outputs++;
			o.out = c == OPT_JSON ? output::json : c == OPT_PROM ? output::prometheus :
				c == OPT_PPROF ? output::pprof : c == OPT_SAVE ? output::save :
				output::diff;
			if (optarg) {
				if (!*optarg)
					usage_error(std::string(c == OPT_PPROF ? "--pprof" :
								c == OPT_SAVE ? "--save" : "--diff") +
						    ": the file name is empty");
				o.file = optarg;
			}
			break;
		case OPT_PROFILE:
			if (!*optarg)
				usage_error("--profile: the file name is empty");
			o.profile = optarg;
			break;
		case OPT_WATCH: {
			char *end;
			errno = 0;
			double s = strtod(optarg, &end);
			if (errno || end == optarg || *end || !isfinite(s) || s < 0.1 || s > 86400)
				usage_error(std::string("--watch: '") + optarg +
					    "' is not a number of seconds from 0.1 to 86400");
			o.watch = s;
			break;
		}
		case OPT_COUNT:
			if (!parse_long(optarg, 1, LONG_MAX, v))
				usage_error(std::string("--count: '") + optarg +
					    "' is not a positive number");
			o.count = v;
			break;
		case OPT_GC:
			o.gc = true;
			break;
		case OPT_ENABLE:
			o.enable = true;
			break;
		case OPT_DISABLE:
			o.disable = true;
			break;
		case OPT_STATUS:
			o.status = true;
			break;
		case OPT_BY:
			if (strcmp(optarg, "allocator") != 0)
				usage_error(std::string("--by: '") + optarg +
					    "' is not a grouping (expected allocator)");
			o.by_allocator = true;
			break;
		case OPT_ADDR: {
			char *end;
			errno = 0;
			unsigned long long a = strtoull(optarg, &end, 16);
			if (strncmp(optarg, "0x", 2) != 0 || !optarg[2] || *end || errno)
				usage_error(std::string("--addr: '") + optarg +
					    "' is not a hexadecimal address (0x...)");
			o.addr = a;
			o.addr_given = true;
			break;
		}
		case 'h':
			usage_text(stdout);
			exit(0);
		case 'V':
			printf("allocinfo %s\n", PACKAGE_VERSION);
			exit(0);
		case ':':
			usage_error(std::string("option '") + argv[optind - 1] + "' needs a value");
		default: {
			std::string arg = argv[optind - 1];
			if (optopt >= 256) {	/* a long option without a value, given one */
				usage_error("option '" + arg.substr(0, arg.find('=')) +
					    "' takes no value");
			}
			if (optopt)
				usage_error(std::string("unknown option '-") + (char)optopt + "'");
			usage_error("unknown option '" + arg + "'");
		}
		}
	}
	if (optind < argc)
		usage_error(std::string("unexpected argument '") + argv[optind] + "'");

	/* Options that do not go together. */
	bool reporting = o.outputs || o.human || o.sort_given || top_given || o.watch > 0;
	if (o.outputs > 1)
		usage_error("choose one of --json, --prometheus, --pprof, --save, --diff");
	if (o.enable && o.disable)
		usage_error("--enable and --disable exclude each other");
	if (o.enable || o.disable) {
		if (!pid_given)
			usage_error(std::string(o.enable ? "--enable" : "--disable") +
				    " needs -p PID");
		if (reporting || o.gc)
			usage_error(std::string(o.enable ? "--enable" : "--disable") +
				    " takes no other option than -p");
	}
	if (o.by_allocator && (o.out != output::text || o.gc || o.enable || o.disable || o.status))
		usage_error("--by allocator applies to the text report only");
	if (o.addr_given && (!pid_given || reporting || o.by_allocator || o.gc || o.enable ||
			     o.disable || o.status))
		usage_error("--addr needs -p PID and no other option");
	if (o.gc && (reporting || pid_given || o.status))
		usage_error("--gc takes no other option");
	if (o.status && (reporting || o.enable || o.disable))
		usage_error("--status takes no other option than -p");
	if (o.human && o.out != output::text && o.out != output::diff)
		usage_error("--human applies to the text report and --diff only");
	if (o.out == output::save && (o.sort_given || top_given))
		usage_error("--save keeps every site: --sort and --top do not apply");
	if (o.watch > 0 && (o.out == output::pprof || o.out == output::save))
		usage_error("--watch does not repeat --pprof or --save");
	if (!o.profile.empty() && o.out != output::pprof)
		usage_error("--profile needs --pprof");
	if (o.count && o.watch <= 0)
		usage_error("--count needs --watch");
	if (o.out == output::diff && !o.sort_given)
		o.sort = sort_key::bytes;	/* the largest growth first */
	return o;
}

bool write_all(int fd, const std::string &s)
{
	size_t done = 0;
	while (done < s.size()) {
		ssize_t n = write(fd, s.data() + done, s.size() - done);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return false;
		}
		done += (size_t)n;
	}
	return true;
}

bool write_file(const std::string &path, const std::string &data)
{
	if (path == "-") {
		if (write_all(STDOUT_FILENO, data))
			return true;
		fprintf(stderr, "%s: standard output: %s\n", PROG, strerror(errno));
		return false;
	}
	int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path.c_str(), strerror(errno));
		return false;
	}
	bool ok = write_all(fd, data);
	int e = errno;
	if (close(fd) != 0 && ok) {
		ok = false;
		e = errno;
	}
	if (!ok)
		fprintf(stderr, "%s: %s: %s\n", PROG, path.c_str(), strerror(e));
	return ok;
}

/*
 * The snapshot file of --diff, bounded: a file (or pipe, or device) that does not
 * start as a snapshot is refused after its first bytes, and one larger than
 * SNAPSHOT_MAX_BYTES is refused too, so that --diff /dev/zero cannot grow forever.
 */
constexpr size_t SNAPSHOT_MAX_BYTES = 64u << 20;

bool read_snapshot_file(const std::string &path, std::string &data)
{
	static const char magic[] = "allocinfo-snapshot\t";
	int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path.c_str(), strerror(errno));
		return false;
	}
	struct stat st;
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path.c_str(), strerror(EISDIR));
		close(fd);
		return false;
	}
	char buf[65536];
	const char *why = nullptr;
	for (;;) {
		ssize_t n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			why = strerror(errno);
			break;
		}
		if (n == 0)
			break;
		if ((size_t)n > SNAPSHOT_MAX_BYTES - data.size()) {
			why = "larger than 64 MiB: not a snapshot made by allocinfo --save";
			break;
		}
		data.append(buf, (size_t)n);
		size_t head = std::min(data.size(), sizeof(magic) - 1);
		if (data.compare(0, head, magic, head) != 0) {
			why = "not an allocinfo snapshot (made by allocinfo --save)";
			break;
		}
	}
	close(fd);
	if (why) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path.c_str(), why);
		return false;
	}
	return true;
}

/* The sampled profile of --profile: a gzipped (or bare) pprof profile of at most
 * PROFILE_MAX_BYTES, decoded with every length and index checked. */
constexpr size_t PROFILE_MAX_BYTES = 64u << 20;

bool read_profile_file(const std::string &path, pprof_profile &p)
{
	struct stat st;
	int fd = open_regular(path.c_str(), &st);	/* no FIFO or device: it could block */
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path.c_str(),
			errno == EINVAL ? "not a regular file" : strerror(errno));
		return false;
	}
	std::string data, why;
	if (!read_bounded(fd, data, PROFILE_MAX_BYTES))
		why = errno == EFBIG ? "larger than 64 MiB: not a heap profile" : strerror(errno);
	close(fd);
	/* inflated, at most 4 times the limit: a heap profile compresses less than that */
	if (why.empty() && !read_pprof(data, p, why, 4 * PROFILE_MAX_BYTES))
		why = "not a pprof profile: " + why;
	if (!why.empty()) {
		fprintf(stderr, "%s: %s: %s\n", PROG, path.c_str(), why.c_str());
		return false;
	}
	return true;
}

/* The stores of the processes in scope. False when -p names a process without a
 * readable store. */
bool collect(const options &o, std::vector<store_entry> &entries)
{
	if (o.pid) {
		store_entry e;
		std::string why;
		if (!read_pid_store(o.pid, e, why)) {
			fprintf(stderr, "%s: %s\n", PROG, why.c_str());
			return false;
		}
		entries.push_back(std::move(e));
	} else {
		scan_result res;
		scan_stores(res, false);
		for (const std::string &p : res.problems)
			fprintf(stderr, "%s: %s\n", PROG, p.c_str());
		entries = std::move(res.live);
	}
	for (const store_entry &e : entries)
		if (e.snap.negative_tags)
			fprintf(stderr, "%s: %s: %s\n", PROG, e.path.c_str(),
				negative_tags_reason(e.snap.negative_tags).c_str());
	return true;
}

/* The rows of the stores, one per site (with keep_pid, per process and site). */
std::vector<site_row> merged_rows(const std::vector<store_entry> &entries, symbolizer &sym,
				  bool keep_pid)
{
	site_table table(&sym, keep_pid);
	table.set_naming_budget(naming_budget_ms());
	for (const store_entry &e : entries) {
		table.add(e.snap, e.comm);
		if (table.unnamed_for_time())
			fprintf(stderr, "%s: %s: %s\n", PROG, e.path.c_str(),
				naming_budget_reason(table.unnamed_for_time()).c_str());
#ifdef HAVE_BPF_READER
		/* What the table named, the process's report iterator prints too. */
		write_bpf_tag_names(e.snap, sym);
#endif
	}
	return table.rows();
}

/* The table gives its rows in site order: only the other orders need sorting. */
void sort_merged(std::vector<site_row> &rows, sort_key key)
{
	if (key != sort_key::site)
		sort_rows(rows, key);
}

void keep_top(std::vector<site_row> &rows, size_t top)
{
	if (top && rows.size() > top)
		rows.resize(top);
}

int64_t now_nanos()
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* --by allocator: the rows summed per allocator ("malloc" for the malloc family and
 * new), in the report's two-line header and columns, largest first unless sorted
 * by site (then by name); names are one word (the readers made them so):
 *         4096        1 allocator:malloc
 */
void render_by_allocator(std::string &out, const std::vector<site_row> &rows, sort_key key,
			 size_t top, bool human)
{
	std::vector<site_row> sums;
	for (const site_row &r : rows) {
		std::string name = r.allocator.empty() ? "malloc" : r.allocator;
		auto it = std::find_if(sums.begin(), sums.end(),
				       [&name](const site_row &s) { return s.func == name; });
		if (it == sums.end()) {
			site_row s;
			s.func = name;
			sums.push_back(s);
			it = sums.end() - 1;
		}
		it->bytes = saturating_add(it->bytes, clamp0(r.bytes));
		it->calls = saturating_add(it->calls, clamp0(r.calls));
	}
	std::stable_sort(sums.begin(), sums.end(), [key](const site_row &a, const site_row &b) {
		if (key == sort_key::site)
			return a.func < b.func;
		int64_t x = key == sort_key::calls ? a.calls : a.bytes;
		int64_t y = key == sort_key::calls ? b.calls : b.bytes;
		return x != y ? x > y : a.func < b.func;
	});
	keep_top(sums, top);
	out += "allocinfo - version: 2.0\n#     <size>  <calls> <allocator>\n";
	for (const site_row &r : sums) {
		char line[256];
		if (human)
			snprintf(line, sizeof(line), "%12s %8lld allocator:%s \n",
				 human_size(r.bytes).c_str(), (long long)r.calls, r.func.c_str());
		else
			snprintf(line, sizeof(line), "%12lld %8lld allocator:%s \n",
				 (long long)r.bytes, (long long)r.calls, r.func.c_str());
		out += line;
	}
}

/* One report of the requested kind into `out` (or into its file). Returns the
 * exit status. */
int report_once(const options &o, symbolizer &sym, const snapshot_file *base, std::string &out,
		const pprof_profile *sampled = nullptr)
{
	std::vector<store_entry> entries;
	if (!collect(o, entries))
		return 1;
	/* Rows of several processes are summed except in Prometheus series, which keep
	 * their process (pid and comm labels); snapshots keep sites only. */
	bool keep_pid = (o.out == output::prometheus || o.pid != 0) &&
			o.out != output::save && o.out != output::diff;
	std::vector<site_row> merged = merged_rows(entries, sym, keep_pid);

	if (o.by_allocator) {
		render_by_allocator(out, merged, o.sort, o.top, o.human);
		return 0;
	}
	switch (o.out) {
	case output::text:
		sort_merged(merged, o.sort);
		keep_top(merged, o.top);
		render_text(out, merged, o.human);
		return 0;
	case output::json:
		sort_merged(merged, o.sort);
		keep_top(merged, o.top);
		/* One process: whether it counts, which the rows cannot tell. */
		render_json(out, merged, o.pid ? (entries[0].snap.enabled == 1) : -1);
		return 0;
	case output::prometheus:
		sort_merged(merged, o.sort);
		keep_top(merged, o.top);
		render_prometheus(out, merged);
		return 0;
	case output::pprof: {
		sort_merged(merged, o.sort);
		keep_top(merged, o.top);
		std::string pb;
		if (sampled ? !render_pprof_merged(pb, *sampled, merged, now_nanos())
			    : !render_pprof(pb, merged, now_nanos())) {
			fprintf(stderr, "%s: cannot compress the profile\n", PROG);
			return 1;
		}
		return write_file(o.file, pb) ? 0 : 1;
	}
	case output::save: {
		snapshot_file s;
		s.pid = o.pid;
		s.time = (int64_t)time(nullptr);
		s.rows = std::move(merged);
		return write_file(o.file, format_snapshot(s)) ? 0 : 1;
	}
	case output::diff: {
		std::vector<site_row> d = diff_rows(base->rows, merged, o.sort);
		keep_top(d, o.top);
		render_diff(out, d, o.human);
		return 0;
	}
	}
	return 1;
}

/* SIGINT and SIGTERM, blocked while --watch runs and taken by pause_for(): a signal
 * that arrives while a report is rendered waits for the pause instead of racing it. */
sigset_t g_stop_signals;

/* Sleeps `seconds` unless a stop signal comes; false when one did. */
bool pause_for(double seconds)
{
	struct timespec ts;
	ts.tv_sec = (time_t)seconds;
	ts.tv_nsec = (long)((seconds - (double)ts.tv_sec) * 1e9);
	for (;;) {
		int sig = sigtimedwait(&g_stop_signals, nullptr, &ts);
		if (sig == SIGINT || sig == SIGTERM)
			g_stop = 1;
		if (sig >= 0 || errno != EINTR)
			break;
	}
	return !g_stop;
}

/* Where the tool keeps symbolized names between runs: $XDG_CACHE_HOME/allocinfo or
 * ~/.cache/allocinfo; none when ALLOCINFO_SYMBOL_CACHE=0 or no home is known. */
std::string symbol_cache_path()
{
	const char *off = getenv("ALLOCINFO_SYMBOL_CACHE");
	if (off && strcmp(off, "0") == 0)
		return std::string();
	std::string dir;
	const char *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	if (xdg && xdg[0] == '/')
		dir = xdg;
	else if (home && home[0] == '/')
		dir = std::string(home) + "/.cache";
	else
		return std::string();
	mkdir(dir.c_str(), 0700);
	dir += "/allocinfo";
	if (mkdir(dir.c_str(), 0700) != 0 && errno != EEXIST)
		return std::string();
	/* Ours alone (root run with another user's HOME must not write there). */
	struct stat st;
	if (lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 022))
		return std::string();
	return dir + "/symbols";
}

/* Loads the symbol cache for the life of a report, and saves what was added. */
class symbol_cache {
public:
	explicit symbol_cache(symbolizer &sym) : sym_(sym), path_(symbol_cache_path())
	{
		if (!path_.empty())
			sym_.load_cache(path_);
	}
	~symbol_cache()
	{
		if (!path_.empty())
			sym_.save_cache(path_);
	}
	symbol_cache(const symbol_cache &) = delete;
	symbol_cache &operator=(const symbol_cache &) = delete;
private:
	symbolizer &sym_;
	std::string path_;
};

int run_report(const options &o)
{
	symbolizer sym;
	symbol_cache cache(sym);
	snapshot_file base;
	if (o.out == output::diff) {
		std::string text, why;
		if (!read_snapshot_file(o.file, text))
			return 1;
		if (!parse_snapshot(text, base, why)) {
			fprintf(stderr, "%s: %s: %s\n", PROG, o.file.c_str(), why.c_str());
			return 1;
		}
		if (base.pid != o.pid)
			fprintf(stderr, "%s: note: %s was saved for %s, compared with %s\n", PROG,
				o.file.c_str(),
				base.pid ? ("process " + std::to_string(base.pid)).c_str() :
					   "all processes",
				o.pid ? ("process " + std::to_string(o.pid)).c_str() :
					"all processes");
	}
	pprof_profile sampled;
	if (!o.profile.empty() && !read_profile_file(o.profile, sampled))
		return 1;
	if (o.watch <= 0) {
		std::string out;
		int rc = report_once(o, sym, &base, out, o.profile.empty() ? nullptr : &sampled);
		if (rc == 0 && !out.empty() && !write_all(STDOUT_FILENO, out)) {
			fprintf(stderr, "%s: standard output: %s\n", PROG, strerror(errno));
			return 1;
		}
		return rc;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;	/* a disposition other than "ignore" */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, nullptr);
	sigaction(SIGTERM, &sa, nullptr);
	sigemptyset(&g_stop_signals);
	sigaddset(&g_stop_signals, SIGINT);
	sigaddset(&g_stop_signals, SIGTERM);
	sigprocmask(SIG_BLOCK, &g_stop_signals, nullptr);
	bool tty = isatty(STDOUT_FILENO);
	for (long n = 1; !g_stop; n++) {
		std::string out;
		if (tty)
			out = "\033[H\033[2J";	/* home, clear screen */
		int rc = report_once(o, sym, &base, out);
		if (rc != 0)
			return rc;
		if (!write_all(STDOUT_FILENO, out)) {
			fprintf(stderr, "%s: standard output: %s\n", PROG, strerror(errno));
			return 1;
		}
		if (o.count && n >= o.count)
			break;
		if (!pause_for(o.watch))
			break;
	}
	return 0;
}

/* One line per process, as key:value tokens: pid, comm, counting on or off (its
 * run-time switch), and the kind of its store. */
int run_status(const options &o)
{
	std::vector<store_entry> entries;
	if (!collect(o, entries))
		return 1;
	std::string out;
	for (const store_entry &e : entries) {
		out += "pid:" + std::to_string(e.pid);
		out += " comm:" + printed_word(e.comm);
		out += e.snap.enabled == 1 ? " counting:on" : " counting:off";
		out += e.snap.backend == 1 ? " store:bpf\n" : " store:shm\n";
	}
	if (!write_all(STDOUT_FILENO, out)) {
		fprintf(stderr, "%s: standard output: %s\n", PROG, strerror(errno));
		return 1;
	}
	return 0;
}

int run_gc()
{
	scan_result res;
	scan_stores(res, true);
#ifdef HAVE_BPF_READER
	remove_stale_bpf_pins(res.stale, res.problems);	/* and the pins of those processes */
#endif
	for (const std::string &p : res.problems)
		fprintf(stderr, "%s: %s\n", PROG, p.c_str());
	std::string out;
	for (const std::string &p : res.stale)
		out += "removed " + p + "\n";
	if (!write_all(STDOUT_FILENO, out)) {
		fprintf(stderr, "%s: standard output: %s\n", PROG, strerror(errno));
		return 1;
	}
	return 0;
}

/* --addr: the block of process o.pid that holds o.addr. */
int run_addr(const options &o)
{
	store_entry e;
	std::string why;
	if (!read_pid_store(o.pid, e, why)) {
		fprintf(stderr, "%s: %s\n", PROG, why.c_str());
		return 1;
	}
	symbolizer sym;
	block_owner b;
	if (!find_block_owner(o.pid, e.snap, o.addr, &sym, b, why)) {
		if (why.empty())
			fprintf(stderr, "%s: 0x%llx is not inside a live counted block of process %d\n",
				PROG, (unsigned long long)o.addr, o.pid);
		else
			fprintf(stderr, "%s: %s\n", PROG, why.c_str());
		return 1;
	}
	printf("%s\n", describe_block_owner(o.addr, b).c_str());
	return 0;
}

int run_switch(const options &o)
{
	std::string why;
	if (!set_store_enabled(o.pid, o.enable, why)) {
		fprintf(stderr, "%s: %s\n", PROG, why.c_str());
		return 1;
	}
	return 0;
}

} /* namespace */

int main(int argc, char **argv)
{
	options o = parse_options(argc, argv);
#ifdef HAVE_BPF_READER
	set_store_source_factory(open_bpf_store_source);
#endif
	if (o.gc)
		return run_gc();
	if (o.enable || o.disable)
		return run_switch(o);
	if (o.status)
		return run_status(o);
	if (o.addr_given)
		return run_addr(o);
	return run_report(o);
}
