/* SPDX-License-Identifier: MIT */
/*
 * The subject of the tests of the library inside other people's processes (setuid
 * programs, store life, descriptors). Built with the header. By MODE:
 *   hold FIFO   allocate, print "PID\n" on stdout, then block opening FIFO for
 *               reading until a writer opens it; exit 0 (a setuid-root copy runs
 *               as another user: only the test, as root, releases it);
 *   fds         allocate, then print the lowest free descriptor and the open
 *               descriptors 0-31 as "lowest N open A B C...\n";
 *   dup5        dup2(1, 5), allocate, fork; the child writes "child\n" to fd 5 and
 *               exits 0; the parent waits and exits with the child's status;
 *   children N  fork N children, one after another, each of which allocates and
 *               then, in turn, calls _exit(0), is killed by SIGKILL, or execs
 *               /bin/true; prints each child's pid, one a line;
 *   lazy A B    allocate 100 bytes (LINE_PARENT), fork; the child prints its pid,
 *               blocks opening FIFO A without allocating, then allocates 77 bytes
 *               (LINE_CHILD), prints "allocated" and blocks opening FIFO B; the
 *               parent exits with the child's status.
 *   early MS    fork children for MS milliseconds from start-up, up to 64 at a
 *               time, while the library makes its store; each allocates and
 *               exits 0; prints how many there were.
 *   printing MS as early, while another thread prints the first report (which loads
 *               the reader module); each child prints one too.
 *   stack       a thread whose first allocations are the process's first walk out
 *               of a wrapper (strdup), a new tag's and a new call site's: prints
 *               how many bytes of its stack it used.
 *   daemon HOW FIFO  allocate 100,000 bytes (LINE_DAEMON), then become a daemon:
 *               HOW "setsid" forks, the parent exits 0 and the child calls setsid();
 *               HOW "daemon" calls daemon(3). The daemon prints its pid and blocks
 *               opening FIFO, allocating nothing after the fork; then exits 0.
 */
#include <allocinfo.h>

#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void *volatile keep;	/* out of the optimizer's reach */

static int hold(const char *fifo)
{
	keep = malloc(100);
	printf("%d\n", (int)getpid());
	fflush(stdout);
	int fd = open(fifo, O_RDONLY);
	if (fd < 0) {
		perror(fifo);
		return 1;
	}
	close(fd);
	free(keep);
	return 0;
}

static int fds(void)
{
	keep = malloc(100);
	int lowest = dup(0);
	if (lowest >= 0)
		close(lowest);
	printf("lowest %d open", lowest);
	for (int fd = 0; fd < 32; fd++)
		if (fcntl(fd, F_GETFD) >= 0)
			printf(" %d", fd);
	printf("\n");
	return 0;
}

static int dup5(void)
{
	if (dup2(1, 5) != 5) {
		perror("dup2");
		return 1;
	}
	keep = malloc(100);
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		keep = malloc(50);
		static const char msg[] = "child\n";
		_exit(write(5, msg, sizeof(msg) - 1) == (ssize_t)sizeof(msg) - 1 ? 0 : 3);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

static int children(int n)
{
	keep = malloc(100);
	for (int i = 0; i < n; i++) {
		/* Nothing buffered for a child to print again (ThreadSanitizer's _exit
		 * flushes stdio). */
		fflush(stdout);
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			keep = malloc(10 + i % 50);
			switch (i % 3) {
			case 0:
				_exit(0);
			case 1:
				raise(SIGKILL);
				_exit(1);
			default:
				execl("/bin/true", "true", (char *)NULL);
				_exit(127);
			}
		}
		int status;
		if (waitpid(pid, &status, 0) != pid)
			return 1;
		int ok = i % 3 == 1 ? WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL
				    : WIFEXITED(status) && WEXITSTATUS(status) == 0;
		if (!ok) {
			fprintf(stderr, "child %d (%d) ended with status %#x\n", i, (int)pid, status);
			return 1;
		}
		printf("%d\n", (int)pid);
	}
	return 0;
}

static long long now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1000LL + t.tv_nsec / 1000000;
}

/* A child that did not exit 0. */
static int reap(pid_t pid, int status)
{
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	fprintf(stderr, "child %d ended with status %#x\n", (int)pid, status);
	return 1;
}

static int g_devnull = -1;

/* A report written, to /dev/null. */
static int print_one(void)
{
	return allocinfo_print(g_devnull) > 0 ? 0 : 1;
}

static void *printer(void *arg)
{
	(void)arg;
	return (void *)(long)print_one();
}

/* As many forks as the machine makes, each child reaped when it ends: the more of
 * them fall inside the library's start-up, the surer a race there is seen. */
static int early(long ms, int printing)
{
	long long end = now_ms() + ms;
	keep = malloc(100);
	int n = 0, running = 0, bad = 0;
	pthread_t t;
	if (printing && ((g_devnull = open("/dev/null", O_WRONLY)) < 0 ||
			 pthread_create(&t, NULL, printer, NULL) != 0)) {
		perror("printer");
		return 1;
	}
	do {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid == 0) {
			keep = malloc(10 + n % 50);
			_exit(!keep || (printing && print_one()));
		}
		n++;
		running++;
		int status;
		while (running > 0 && (pid = waitpid(-1, &status, running >= 64 ? 0 : WNOHANG)) > 0) {
			running--;
			bad |= reap(pid, status);
		}
	} while (now_ms() < end);
	for (int status; running > 0; running--) {
		pid_t pid = wait(&status);
		if (pid < 0)
			return 1;
		bad |= reap(pid, status);
	}
	void *printed = NULL;
	if (printing && (pthread_join(t, &printed) != 0 || printed)) {
		fprintf(stderr, "the first report failed\n");
		bad = 1;
	}
	printf("%d\n", n);
	return bad;
}

#define PAINT 0xA5

static void *first_allocations(void *arg)
{
	(void)arg;
	/* The C library's own strdup, not the header's: its malloc is a walk. */
	char *copy = (strdup)("a first walk out of the C library");
	int ok = copy != NULL;
	keep = malloc(100);
	free(keep);
	free(copy);
	return ok ? NULL : (void *)1;
}

/* The thread runs on a stack painted with PAINT: the lowest byte that changed is
 * as deep as it went (the thread's TLS and descriptor are at the top of it). */
static int stack_depth(void)
{
	size_t size = 1 << 20;
	unsigned char *stack = mmap(NULL, size, PROT_READ | PROT_WRITE,
				    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (stack == MAP_FAILED)
		return 1;
	memset(stack, PAINT, size);
	pthread_attr_t attr;
	pthread_t t;
	void *failed = NULL;
	if (pthread_attr_init(&attr) || pthread_attr_setstack(&attr, stack, size) ||
	    pthread_create(&t, &attr, first_allocations, NULL) || pthread_join(t, &failed) ||
	    failed)
		return 1;
	size_t untouched = 0;
	while (untouched < size && stack[untouched] == PAINT)
		untouched++;
	printf("%zu\n", size - untouched);
	return 0;
}

/* Blocks until a writer opens fifo; no allocation. */
static int wait_fifo(const char *fifo)
{
	int fd = open(fifo, O_RDONLY);
	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

static int say(const char *s)
{
	return write(1, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
}

static int lazy(const char *a, const char *b)
{
	keep = malloc(100);	/* LINE_PARENT */
	pid_t pid = fork();
	if (pid < 0) {
		perror("fork");
		return 1;
	}
	if (pid == 0) {
		char line[32];
		snprintf(line, sizeof(line), "%d\n", (int)getpid());
		if (say(line) || wait_fifo(a))
			_exit(3);
		void *volatile mine = malloc(77);	/* LINE_CHILD */
		if (!mine || say("allocated\n") || wait_fifo(b))
			_exit(4);
		_exit(0);
	}
	int status;
	if (waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 2;
}

static int become_daemon(const char *how, const char *fifo)
{
	keep = malloc(100000);	/* LINE_DAEMON */
	if (strcmp(how, "daemon") == 0) {
		if (daemon(1, 1) != 0) {
			perror("daemon");
			return 1;
		}
	} else {
		pid_t pid = fork();
		if (pid < 0) {
			perror("fork");
			return 1;
		}
		if (pid > 0)
			_exit(0);
		if (setsid() < 0)
			_exit(3);
	}
	char line[32];
	snprintf(line, sizeof(line), "%d\n", (int)getpid());
	_exit(say(line) || wait_fifo(fifo) ? 4 : 0);
}

int main(int argc, char **argv)
{
	if (argc == 4 && strcmp(argv[1], "daemon") == 0)
		return become_daemon(argv[2], argv[3]);
	if (argc == 4 && strcmp(argv[1], "lazy") == 0)
		return lazy(argv[2], argv[3]);
	if (argc == 3 && strcmp(argv[1], "children") == 0)
		return children(atoi(argv[2]));
	if (argc == 3 && strcmp(argv[1], "hold") == 0)
		return hold(argv[2]);
	if (argc == 3 && strcmp(argv[1], "early") == 0)
		return early(atol(argv[2]), 0);
	if (argc == 3 && strcmp(argv[1], "printing") == 0)
		return early(atol(argv[2]), 1);
	if (argc == 2 && strcmp(argv[1], "stack") == 0)
		return stack_depth();
	if (argc == 2 && strcmp(argv[1], "fds") == 0)
		return fds();
	if (argc == 2 && strcmp(argv[1], "dup5") == 0)
		return dup5();
	fprintf(stderr, "usage: process_prog hold FIFO | fds | dup5 | children N | lazy A B | early MS | printing MS | stack | daemon setsid|daemon FIFO\n");
	return 2;
}
