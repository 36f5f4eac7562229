/* SPDX-License-Identifier: MIT */
/* Runs this program again with a changed environment; see spawn_self.h. */
#define ALLOCINFO_NO_CALL_MACROS 1
#include <allocinfo.h>

#include <setjmp.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "spawn_self.h"

extern char **environ;

static int dropped(const char *var, const char *const *env_drop)
{
	for (; env_drop && *env_drop; env_drop++)
		if (!strncmp(var, *env_drop, strlen(*env_drop)))
			return 1;
	return 0;
}

int spawn_self_status(const char *mode, const char *const *env_drop,
		      const char *const *env_add, char *err, size_t errlen)
{
	char self[4096];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	assert_true(n > 0);
	self[n] = '\0';
	char *envp[256];
	int k = 0;
	for (char **e = environ; *e && k < 200; e++)
		if (!dropped(*e, env_drop))
			envp[k++] = *e;
	for (; env_add && *env_add && k < 255; env_add++)
		envp[k++] = (char *)*env_add;
	envp[k] = NULL;
	int pipefd[2];
	assert_int_equal(pipe(pipefd), 0);
	posix_spawn_file_actions_t fa;
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, pipefd[1], 2);
	posix_spawn_file_actions_addclose(&fa, pipefd[0]);
	char *argv[] = { self, (char *)mode, NULL };
	pid_t pid;
	assert_int_equal(posix_spawn(&pid, self, &fa, NULL, argv, envp), 0);
	close(pipefd[1]);
	size_t used = 0;
	for (;;) {
		ssize_t r = read(pipefd[0], err + used, errlen - 1 - used);
		if (r <= 0)
			break;
		used += (size_t)r;
	}
	err[used] = '\0';
	close(pipefd[0]);
	posix_spawn_file_actions_destroy(&fa);
	int status;
	assert_int_equal(waitpid(pid, &status, 0), pid);
	return status;
}

int spawn_self(const char *mode, const char *const *env_drop, const char *const *env_add,
	       char *err, size_t errlen)
{
	int status = spawn_self_status(mode, env_drop, env_add, err, errlen);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}
