/* SPDX-License-Identifier: MIT */
/* allocinfo.h first, then the C library's headers: all of them must still compile. */
#include <allocinfo.h>

#include <aio.h>
#include <arpa/inet.h>
#include <assert.h>
#include <complex.h>
#include <ctype.h>
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <fenv.h>
#include <float.h>
#include <glob.h>
#include <inttypes.h>
#include <iso646.h>
#include <limits.h>
#include <locale.h>
#include <malloc.h>
#include <math.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <regex.h>
#include <search.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdalign.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <tgmath.h>
#include <threads.h>
#include <time.h>
#include <uchar.h>
#include <unistd.h>
#include <wchar.h>
#include <wctype.h>

void *(*take_address)(size_t) = &malloc;
void (*take_free)(void *) = free;

int use(void)
{
	char *s = strdup("x");
	void *p = malloc(3);
	free(p);
	free(s);
	return 0;
}
