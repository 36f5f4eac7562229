/* SPDX-License-Identifier: MIT */
/*
 * Read latency of the report (a benchmark, not a test): starts N processes holding
 * 1,000 live tags each (tests/benchmark/report_1000 hold), then times reads of the
 * combined file and of one per-process file served by a private allocinfod mount,
 * and runs of `allocinfo` and `allocinfo -p PID` (fork, exec, read all of its
 * output). Prints the median and the 99th percentile of each, and the CPU time a
 * read costs the daemon (or the tool); the target is 10 ms a read (the kernel reads
 * a 300 KB /proc/allocinfo in 4-7 ms).
 *
 *   read_latency --holder PROG [--allocinfod PATH] [--allocinfo PATH]
 *                [--procs N] [--reads N]
 *
 * The daemon part needs root and /dev/fuse, and is skipped without them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_PROCS 64
#define TARGET_MS 10.0

static pid_t holders[MAX_PROCS];
static int nholders;
static pid_t daemon_pid;
static char store_dir[] = "/tmp/read-latency-stores.XXXXXX";
static char mount_dir[] = "/tmp/read-latency-mnt.XXXXXX";
static int have_mount_dir;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* CPU time (user + system) of a process so far, in ms; -1 when unknown. */
static double proc_cpu_ms(pid_t pid)
{
	char path[64], buf[1024];
	unsigned long long ut, st;
	long tck = sysconf(_SC_CLK_TCK);
	FILE *f;
	char *p;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return -1;
	p = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!p || !(p = strrchr(buf, ')')) ||
	    sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) != 2)
		return -1;
	return (double)(ut + st) * 1000.0 / (double)tck;
}

static double child_cpu_ms;	/* CPU time of the tools run, summed */

static void cleanup(void)
{
	int i;

	if (daemon_pid > 0) {
		kill(daemon_pid, SIGTERM);
		waitpid(daemon_pid, NULL, 0);
	}
	for (i = 0; i < nholders; i++) {
		kill(holders[i], SIGKILL);
		waitpid(holders[i], NULL, 0);
	}
	if (have_mount_dir)
		rmdir(mount_dir);
	/* The holders were killed: their stores stay behind. */
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", store_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "read_latency: cannot remove %s\n", store_dir);
}

static void die(const char *what)
{
	fprintf(stderr, "read_latency: %s: %s\n", what, strerror(errno));
	cleanup();
	exit(1);
}

/* Starts PROG hold with its stdout on a pipe; waits for the pid line. */
static pid_t start_holder(const char *prog)
{
	int p[2];
	char line[64];
	ssize_t n = 0, r;
	pid_t pid;

	if (pipe(p) != 0)
		die("pipe");
	pid = fork();
	if (pid < 0)
		die("fork");
	if (pid == 0) {
		dup2(p[1], 1);
		close(p[0]);
		close(p[1]);
		execl(prog, prog, "hold", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	for (;;) {
		struct pollfd pfd = {p[0], POLLIN, 0};
		if (poll(&pfd, 1, 20000) <= 0)
			break;
		r = read(p[0], line + n, sizeof(line) - 1 - (size_t)n);
		if (r <= 0)
			break;
		n += r;
		if (memchr(line, '\n', (size_t)n))
			break;
	}
	close(p[0]);
	if (n <= 0 || !memchr(line, '\n', (size_t)n)) {
		fprintf(stderr, "read_latency: %s did not start\n", prog);
		kill(pid, SIGKILL);
		cleanup();
		exit(1);
	}
	return pid;
}

/* Reads a whole file; returns its size, or -1. */
static long read_file(const char *path)
{
	static char buf[1 << 16];
	long total = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	while ((n = read(fd, buf, sizeof(buf))) > 0)
		total += n;
	close(fd);
	return n < 0 ? -1 : total;
}

/* Runs argv with stdout on a pipe, reads all of it; returns its size, or -1. */
static long run_tool(char *const argv[])
{
	static char buf[1 << 16];
	long total = 0;
	ssize_t n;
	int p[2], status;
	pid_t pid;

	if (pipe2(p, O_CLOEXEC) != 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(p[1], 1);
		if (null >= 0)
			dup2(null, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], buf, sizeof(buf))) > 0)
		total += n;
	close(p[0]);
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		return -1;
	child_cpu_ms += (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
			(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
	return total;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

struct result {
	const char *what;
	int reads;
	long bytes;
	double median_ms, p99_ms, max_ms;
	double cpu_ms;		/* CPU time of the server or the tool per read; < 0 unknown */
};

static void summarize(struct result *r, uint64_t *ns, int n)
{
	int i99 = (int)((n * 99 + 99) / 100) - 1;

	qsort(ns, (size_t)n, sizeof(*ns), cmp_u64);
	r->reads = n;
	r->median_ms = (n % 2 ? ns[n / 2] : (ns[n / 2 - 1] + ns[n / 2]) / 2) / 1e6;
	r->p99_ms = ns[i99 < 0 ? 0 : i99] / 1e6;
	r->max_ms = ns[n - 1] / 1e6;
}

static int time_file(struct result *r, const char *what, const char *path, int reads)
{
	uint64_t *ns = calloc((size_t)reads, sizeof(*ns));
	int i;

	if (!ns)
		return -1;
	for (i = 0; i < 3; i++)		/* warm: page cache, the daemon's symbolizer */
		read_file(path);
	r->what = what;
	double cpu = proc_cpu_ms(daemon_pid);
	for (i = 0; i < reads; i++) {
		uint64_t t = now_ns();
		r->bytes = read_file(path);
		ns[i] = now_ns() - t;
		if (r->bytes < 0) {
			free(ns);
			return -1;
		}
	}
	summarize(r, ns, reads);
	r->cpu_ms = cpu < 0 ? -1 : (proc_cpu_ms(daemon_pid) - cpu) / reads;
	free(ns);
	return 0;
}

static int time_tool(struct result *r, const char *what, char *const argv[], int reads)
{
	uint64_t *ns = calloc((size_t)reads, sizeof(*ns));
	int i;

	if (!ns)
		return -1;
	for (i = 0; i < 3; i++)
		run_tool(argv);
	r->what = what;
	child_cpu_ms = 0;
	for (i = 0; i < reads; i++) {
		uint64_t t = now_ns();
		r->bytes = run_tool(argv);
		ns[i] = now_ns() - t;
		if (r->bytes < 0) {
			free(ns);
			return -1;
		}
	}
	summarize(r, ns, reads);
	r->cpu_ms = child_cpu_ms / reads;
	free(ns);
	return 0;
}

static int start_daemon(const char *allocinfod)
{
	char path[256];
	int i;

	if (geteuid() != 0 || access("/dev/fuse", R_OK | W_OK) != 0) {
		fprintf(stderr, "read_latency: no root or no /dev/fuse: allocinfod skipped\n");
		return -1;
	}
	if (!mkdtemp(mount_dir))
		die("mkdtemp");
	have_mount_dir = 1;
	daemon_pid = fork();
	if (daemon_pid < 0)
		die("fork");
	if (daemon_pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, 2);
		execl(allocinfod, allocinfod, "-f", "--mountpoint", mount_dir, "--no-link",
		      "--store-dir", store_dir, (char *)NULL);
		_exit(127);
	}
	snprintf(path, sizeof(path), "%s/allocinfo", mount_dir);
	for (i = 0; i < 400; i++) {	/* 20 s */
		struct stat st;
		if (stat(path, &st) == 0)
			return 0;
		if (waitpid(daemon_pid, NULL, WNOHANG) == daemon_pid) {
			daemon_pid = 0;
			break;
		}
		usleep(50000);
	}
	fprintf(stderr, "read_latency: allocinfod did not start: skipped\n");
	return -1;
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"holder", required_argument, NULL, 'H'},
		{"allocinfod", required_argument, NULL, 'd'},
		{"allocinfo", required_argument, NULL, 'c'},
		{"procs", required_argument, NULL, 'n'},
		{"reads", required_argument, NULL, 'r'},
		{NULL, 0, NULL, 0},
	};
	const char *holder = NULL, *allocinfod = NULL, *allocinfo = NULL;
	int procs = 10, reads = 200, c, i, nres = 0, over = 0;
	struct result res[4];
	char path[256], pidstr[16];

	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'H': holder = optarg; break;
		case 'd': allocinfod = optarg; break;
		case 'c': allocinfo = optarg; break;
		case 'n': procs = atoi(optarg); break;
		case 'r': reads = atoi(optarg); break;
		default: return 2;
		}
	}
	if (!holder || procs < 1 || procs > MAX_PROCS || reads < 1) {
		fprintf(stderr, "usage: read_latency --holder PROG [--allocinfod PATH] "
				"[--allocinfo PATH] [--procs 1..%d] [--reads N]\n", MAX_PROCS);
		return 2;
	}
	if (!mkdtemp(store_dir))
		die("mkdtemp");
	setenv("ALLOCINFO_STORE_DIR", store_dir, 1);
	for (i = 0; i < procs; i++)
		holders[nholders++] = start_holder(holder);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)holders[0]);

	if (allocinfod && access(allocinfod, X_OK) == 0 && start_daemon(allocinfod) == 0) {
		snprintf(path, sizeof(path), "%s/allocinfo", mount_dir);
		if (time_file(&res[nres], "allocinfod: all processes", path, reads) == 0)
			nres++;
		snprintf(path, sizeof(path), "%s/%s", mount_dir, pidstr);
		if (time_file(&res[nres], "allocinfod: one process", path, reads) == 0)
			nres++;
	}
	if (allocinfo && access(allocinfo, X_OK) == 0) {
		char *all[] = {(char *)allocinfo, NULL};
		char *one[] = {(char *)allocinfo, (char *)"-p", pidstr, NULL};
		if (time_tool(&res[nres], "allocinfo: all processes", all, reads) == 0)
			nres++;
		if (time_tool(&res[nres], "allocinfo -p: one process", one, reads) == 0)
			nres++;
	} else if (allocinfo) {
		fprintf(stderr, "read_latency: %s not found: skipped\n", allocinfo);
	}

	printf("read latency: %d processes x %s, %d reads each (target <= %.0f ms)\n",
	       procs, holder, reads, TARGET_MS);
	printf("%-26s %7s %10s %8s %8s %8s\n", "reader", "bytes", "median ms", "p99 ms",
	       "max ms", "cpu ms");
	for (i = 0; i < nres; i++) {
		printf("%-26s %7ld %10.2f %8.2f %8.2f %8.2f%s\n", res[i].what, res[i].bytes,
		       res[i].median_ms, res[i].p99_ms, res[i].max_ms, res[i].cpu_ms,
		       res[i].median_ms > TARGET_MS ? "  over target" : "");
		over |= res[i].median_ms > TARGET_MS;
	}
	cleanup();
	return nres == 0 ? 1 : over ? 3 : 0;
}
