/* SPDX-License-Identifier: MIT */
/*
 * The cost of reading this process's report as the number of tags grows. The call
 * sites come from a generated file (gen-sites.sh): one line, one tag, one live
 * allocation each. Usage: report READS  (prints the time per allocinfo_print to
 * /dev/null), report hold (prints its pid, then waits to be read from outside), or
 * report start (exits at once: what registering the tags costs a process's start).
 */
#include "bench.h"

#include <fcntl.h>
#include <string.h>
#include <unistd.h>

void sites_touch(void);

int main(int argc, char **argv)
{
	if (argc > 1 && strcmp(argv[1], "start") == 0)
		return 0;	/* start-up alone: every tag registered, none used */
	sites_touch();
	if (argc > 1 && strcmp(argv[1], "hold") == 0) {
		printf("%d\n", (int)getpid());
		fflush(stdout);
		for (;;)
			pause();
	}
	unsigned long reads = bench_arg(argc, argv, 1, 10);
	int fd = open("/dev/null", O_WRONLY);
	if (fd < 0 || allocinfo_print(fd) < 0)	/* warm: debug info, symbolizer */
		return 1;
	struct bench_mark m = bench_now();
	for (unsigned long i = 0; i < reads; i++)
		if (allocinfo_print(fd) < 0)
			return 1;
	bench_report(m, reads);
	return 0;
}
