/* SPDX-License-Identifier: MIT */
/*
 * allocinfod: serves /run/allocinfo, the report of every instrumented process on the
 * machine, generated on each read, from a FUSE filesystem (allocinfod_fs.h), and
 * optionally the same data to Prometheus (allocinfod_metrics.h). This file holds the
 * command line and the daemon's life: start-up, detaching, signals, shutdown.
 */
#define FUSE_USE_VERSION 31
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fuse.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>

#include "allocinfod_fs.h"
#include "allocinfod_log.h"
#include "allocinfod_metrics.h"
#include "allocinfod_report.h"
/* Stores kept in BPF maps: their reader is in libreader whenever its header is. */
#if __has_include("store_bpf_reader.h")
#include "store_bpf_reader.h"
#define HAVE_BPF_READER 1
#endif
#include "store_scan.h"

using namespace allocinfod;

namespace {

struct options {
	bool foreground = false;
	std::string mountpoint = "/run/allocinfo.d";
	std::string link = "/run/allocinfo";
	std::string pid_file;
	std::string metrics;
	bool metrics_remote = false;
	mode_t mode = 0400;
};

/* Paths given relative to where we were started, made absolute: the daemon moves to /. */
std::string absolute(const std::string &path)
{
	if (path.empty() || path[0] == '/')
		return path;
	char cwd[PATH_MAX];
	if (!getcwd(cwd, sizeof(cwd)))
		return path;
	return std::string(cwd) + "/" + path;
}

void usage(FILE *f)
{
	fprintf(f,
"Usage: allocinfod [OPTION]...\n"
"Serve /run/allocinfo: the allocation profile of every instrumented process,\n"
"in the format of the kernel's /proc/allocinfo, generated on each read.\n"
"\n"
"  -f, --foreground        do not detach; log to stderr instead of syslog\n"
"      --mountpoint DIR    where to mount the filesystem (default /run/allocinfo.d)\n"
"      --link PATH         symlink to DIR/allocinfo (default /run/allocinfo)\n"
"      --no-link           do not create the symlink\n"
"      --mode OCTAL        mode of the served files (default 0400)\n"
"      --store-dir DIR     where processes publish their stores\n"
"                          (default $ALLOCINFO_STORE_DIR, else /dev/shm)\n"
"      --metrics ADDR:PORT serve Prometheus metrics at http://ADDR:PORT/metrics\n"
"                          (a loopback address; port 0 picks a free one)\n"
"      --metrics-remote    allow --metrics on a non-loopback address\n"
"      --pid-file FILE     write the daemon's pid to FILE\n"
"  -h, --help              show this help and exit\n"
"  -V, --version           show the version and exit\n"
"\n"
"Files: DIR/allocinfo (all processes, equal lines summed), DIR/<pid> (one\n"
"process), DIR/problems (stores that could not be read). See allocinfod(8).\n");
}

[[noreturn]] __attribute__((format(printf, 1, 2))) void die_usage(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "allocinfod: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'allocinfod --help'.\n");
	exit(2);
}

void parse(int argc, char **argv, options &o)
{
	enum { O_MOUNTPOINT = 256, O_LINK, O_NO_LINK, O_MODE, O_STORE_DIR, O_METRICS,
	       O_METRICS_REMOTE, O_PID_FILE };
	static const struct option longopts[] = {
		{"foreground", no_argument, nullptr, 'f'},
		{"mountpoint", required_argument, nullptr, O_MOUNTPOINT},
		{"link", required_argument, nullptr, O_LINK},
		{"no-link", no_argument, nullptr, O_NO_LINK},
		{"mode", required_argument, nullptr, O_MODE},
		{"store-dir", required_argument, nullptr, O_STORE_DIR},
		{"metrics", required_argument, nullptr, O_METRICS},
		{"metrics-remote", no_argument, nullptr, O_METRICS_REMOTE},
		{"pid-file", required_argument, nullptr, O_PID_FILE},
		{"help", no_argument, nullptr, 'h'},
		{"version", no_argument, nullptr, 'V'},
		{nullptr, 0, nullptr, 0},
	};
	int c;
	while ((c = getopt_long(argc, argv, "fhV", longopts, nullptr)) != -1) {
		switch (c) {
		case 'f':
			o.foreground = true;
			break;
		case O_MOUNTPOINT:
			if (!optarg[0])
				die_usage("--mountpoint wants a directory");
			o.mountpoint = optarg;
			break;
		case O_LINK:
			o.link = optarg;
			break;
		case O_NO_LINK:
			o.link.clear();
			break;
		case O_MODE: {
			char *end;
			errno = 0;
			unsigned long m = strtoul(optarg, &end, 8);
			if (!optarg[0] || *end || errno || m > 0777 || optarg[0] == '-' ||
			    optarg[0] == '+')
				die_usage("--mode: '%s' is not an octal mode up to 0777", optarg);
			o.mode = (mode_t)m;
			break;
		}
		case O_STORE_DIR:
			if (optarg[0] != '/')
				die_usage("--store-dir: '%s' is not an absolute path", optarg);
			setenv("ALLOCINFO_STORE_DIR", optarg, 1);
			break;
		case O_METRICS:
			o.metrics = optarg;
			break;
		case O_METRICS_REMOTE:
			o.metrics_remote = true;
			break;
		case O_PID_FILE:
			o.pid_file = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("allocinfod (%s) %s\n", PACKAGE_NAME, PACKAGE_VERSION);
			exit(0);
		default:
			fprintf(stderr, "Try 'allocinfod --help'.\n");
			exit(2);
		}
	}
	if (optind < argc)
		die_usage("unexpected argument '%s'", argv[optind]);
	o.link = absolute(o.link);
	o.pid_file = absolute(o.pid_file);
}

/* A daemon keeps no descriptor it did not open itself. */
void close_inherited_fds()
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	while (struct dirent *de = readdir(d)) {
		int fd = atoi(de->d_name);
		if (fd > 2 && fd != self)
			close(fd);
	}
	closedir(d);
}

/*
 * Detaches: the parent waits on a pipe until the child reports that it serves (so
 * that `allocinfod && cat /run/allocinfo` works and a service manager sees start-up
 * errors in the exit status), then exits. The child leads a new session, in /.
 */
int detach()
{
	int p[2];
	if (pipe2(p, O_CLOEXEC) != 0) {
		perror("allocinfod: pipe");
		exit(1);
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("allocinfod: fork");
		exit(1);
	}
	if (pid > 0) {
		close(p[1]);
		char status = 1;
		ssize_t n;
		while ((n = read(p[0], &status, 1)) < 0 && errno == EINTR) {
		}
		_exit(n == 1 ? status : 1);	/* the mount now belongs to the child */
	}
	close(p[0]);
	setsid();
	if (chdir("/") != 0) {
		/* / always exists */
	}
	umask(022);
	return p[1];
}

/* Called once serving: stdio to /dev/null, the log to syslog, the parent released. */
void detached(int status_fd)
{
	log_to_syslog();
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (null >= 0) {
		dup2(null, 0);
		dup2(null, 1);
		dup2(null, 2);
		if (null > 2)
			close(null);
	}
	char ok = 0;
	while (write(status_fd, &ok, 1) < 0 && errno == EINTR) {
	}
	close(status_fd);
}

bool write_pid_file(const std::string &path)
{
	FILE *f = fopen(path.c_str(), "we");
	if (!f)
		return false;
	fprintf(f, "%d\n", (int)getpid());
	return fclose(f) == 0;
}

/* Starts a thread with the termination signals blocked, so that they reach the
 * FUSE loop in the main thread. */
bool start_metrics(metrics_server &m, reports &src, mode_t mode, std::string &why)
{
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	bool ok = m.start(&src, mode, why);
	pthread_sigmask(SIG_SETMASK, &old, nullptr);
	return ok;
}

/*
 * libfuse installs its handlers only for signals whose disposition is the default.
 * A shell starts a background job with SIGINT and SIGQUIT ignored (when job
 * control is off, as in scripts), and the daemon would then ignore Ctrl-C and
 * `kill -INT` for good: take the default back, so that libfuse installs them.
 */
void default_stop_signals()
{
	for (int sig : { SIGINT, SIGTERM, SIGHUP })
		signal(sig, SIG_DFL);
}

} /* namespace */

int main(int argc, char **argv)
{
	options o;
	parse(argc, argv, o);
	/* Each read builds and drops a few MB: keep them in the heap rather than mapping
	 * and faulting them in again on every read. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 20);
	if (!o.foreground)
		close_inherited_fds();

	std::string why;
	if (!fs_prepare_mountpoint(o.mountpoint, why)) {
		log_msg(LOG_ERR, "%s", why.c_str());
		return 1;
	}
	char real[PATH_MAX];
	if (!realpath(o.mountpoint.c_str(), real)) {
		log_msg(LOG_ERR, "%s: %s", o.mountpoint.c_str(), strerror(errno));
		return 1;
	}
	std::string mountpoint = real, target = mountpoint + "/allocinfo";

	/* Bound before detaching, so that a taken port is an error the caller sees. */
	metrics_server metrics;
	if (!o.metrics.empty() && !metrics.bind_to(o.metrics, o.metrics_remote, why)) {
		log_msg(LOG_ERR, "%s", why.c_str());
		return 1;
	}

#ifdef HAVE_BPF_READER
	/* Stores whose counters live in BPF maps are read through their pins. */
	allocinfo::set_store_source_factory(allocinfo::open_bpf_store_source);
#endif
	reports src;
	fs_options fo;
	fo.mode = o.mode;
	fo.src = &src;
	struct fuse *f = fs_new(fo, geteuid() == 0);
	if (!f) {
		log_msg(LOG_ERR, "cannot set up FUSE");
		return 1;
	}
	if (fuse_mount(f, mountpoint.c_str()) != 0) {
		log_msg(LOG_ERR, "%s: cannot mount (is /dev/fuse there, and are we root?)",
			mountpoint.c_str());
		fuse_destroy(f);
		return 1;
	}

	int status_fd = o.foreground ? -1 : detach();
	int rc = 1;
	bool linked = false;
	struct fuse_session *se = fuse_get_session(f);
	default_stop_signals();
	if (fuse_set_signal_handlers(se) != 0) {
		log_msg(LOG_ERR, "cannot install signal handlers");
		goto out;
	}
	if (!o.metrics.empty() && !start_metrics(metrics, src, o.mode, why)) {
		log_msg(LOG_ERR, "%s", why.c_str());
		goto out_signals;
	}
	if (!o.link.empty()) {
		if (!fs_make_link(o.link, target, why)) {
			log_msg(LOG_ERR, "%s", why.c_str());
			goto out_metrics;
		}
		linked = true;
	}
	if (!o.pid_file.empty() && !write_pid_file(o.pid_file)) {
		log_msg(LOG_ERR, "%s: %s", o.pid_file.c_str(), strerror(errno));
		goto out_metrics;
	}

	if (status_fd >= 0) {
		detached(status_fd);
		status_fd = -1;
	}
	log_msg(LOG_INFO, "serving %s%s%s from %s%s%s", target.c_str(),
		linked ? " as " : "", linked ? o.link.c_str() : "", allocinfo::scan_store_dir(),
		o.metrics.empty() ? "" : ", metrics on ", metrics.address().c_str());
	rc = fuse_loop(f) < 0 ? 1 : 0;	/* > 0: the signal that stopped it */
	log_msg(LOG_INFO, "stopping");

	if (!o.pid_file.empty())
		unlink(o.pid_file.c_str());
out_metrics:
	metrics.stop();
	if (linked)
		fs_remove_link(o.link, target);
out_signals:
	fuse_remove_signal_handlers(se);
out:
	fuse_unmount(f);
	fuse_destroy(f);
	if (status_fd >= 0) {
		char fail = 1;
		if (write(status_fd, &fail, 1) < 0) {
			/* the parent is gone: nothing to tell */
		}
	}
	return rc;
}
