/* SPDX-License-Identifier: MIT */
/*
 * The subject of the BPF store tests: allocations at known lines (one untagged: a
 * caller tag), then its own report (allocinfo_print) written to REPORT, then, by MODE:
 *   once   exit at once;
 *   wait   wait for SIGUSR1, then return from main (a normal exit);
 *   fork   fork; the child allocates at LINE_CHILD, writes REPORT.child and waits
 *          for SIGUSR1 too; the parent waits for the child, then exits (tokens: below).
 * A report appears under its name only when complete (written aside, renamed), so
 * a test may wait for it. Nothing allocates after the report: the counters stay
 * as reported while the test reads them. Lines the tests expect are pinned here.
 */
#include <allocinfo.h>

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static volatile sig_atomic_t go;
void *keep[8];	/* live allocations, out of the optimizer's reach */

static void on_usr1(int sig)
{
	(void)sig;
	go = 1;
}

static int write_report(const char *path)
{
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || allocinfo_print(fd) < 0 || close(fd) != 0 || rename(tmp, path) != 0) {
		perror(path);
		return 1;
	}
	return 0;
}

static void wait_for_usr1(void)
{
	sigset_t none;
	sigemptyset(&none);
	while (!go)
		sigsuspend(&none);
}

int main(int argc, char **argv)
{
	struct sigaction sa;
	sigset_t usr1;

	if (argc != 3 || (strcmp(argv[1], "once") && strcmp(argv[1], "wait") &&
			  strcmp(argv[1], "fork") && strcmp(argv[1], "tokens"))) {
		fprintf(stderr, "usage: bpf_prog once|wait|fork|tokens REPORT\n");
		return 2;
	}
	/* SIGUSR1 is blocked but while waiting for it: none is lost. */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;
	sigaction(SIGUSR1, &sa, NULL);
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	sigprocmask(SIG_BLOCK, &usr1, NULL);

	keep[0] = malloc(100); _Static_assert(__LINE__ == 69, "LINE_MALLOC");
	for (int i = 0; i < 3; i++) {
		keep[1 + i] = calloc(4, 10); _Static_assert(__LINE__ == 71, "LINE_CALLOC");
	}
	keep[4] = strdup("bpf store"); _Static_assert(__LINE__ == 73, "LINE_STRDUP");
	free(malloc(64)); _Static_assert(__LINE__ == 74, "LINE_FREED");
	{ void *(*volatile untagged)(size_t) = malloc; keep[6] = untagged(48); } /* LINE_UNTAGGED 75 */
	{ void tokens(void); if (!strcmp(argv[1], "tokens")) tokens(); }
	if (write_report(argv[2]))
		return 1;
	if (!strcmp(argv[1], "once"))
		return 0;
	if (!strcmp(argv[1], "wait") || !strcmp(argv[1], "tokens")) {
		wait_for_usr1();
		return 0;
	}

	pid_t child = fork();
	if (child < 0) {
		perror("fork");
		return 1;
	}
	if (child == 0) {
		char path[4096];
		keep[5] = malloc(2000); _Static_assert(__LINE__ == 93, "LINE_CHILD");
		snprintf(path, sizeof(path), "%s.child", argv[2]);
		if (write_report(path))
			return 1;
		wait_for_usr1();
		return 0;
	}
	int status;
	while (waitpid(child, &status, 0) < 0)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

/* Mode tokens: as wait, after rows with " via:" and " allocator:" tokens: 300 bytes
 * through bpf_xmalloc (run with ALLOCINFO_WRAPPERS=bpf_xmalloc) at LINE_VIA, and 200
 * bytes of an arena charged at LINE_ARENA. */
__attribute__((noinline)) void *bpf_xmalloc(size_t n)
{
	void *p = malloc(n);
	__asm__ volatile("" ::: "memory");	/* a frame of its own */
	return p;
}

__attribute__((noinline)) void tokens(void)
{
	static char arena[256];
	struct allocinfo_allocator *a = allocinfo_allocator_create("arena");
	keep[7] = bpf_xmalloc(300); _Static_assert(__LINE__ == 120, "LINE_VIA");
	allocinfo_charge(a, arena, 200); _Static_assert(__LINE__ == 121, "LINE_ARENA");
	__asm__ volatile("" ::: "memory");	/* no tail call: tokens is the caller */
}
