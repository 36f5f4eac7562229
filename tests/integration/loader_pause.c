/* SPDX-License-Identifier: MIT */
/*
 * An rtld-audit module (LD_AUDIT) that holds the dynamic loader still for
 * LOADER_PAUSE_MS milliseconds (default 40) during each dlopen() that maps an object
 * whose path contains LOADER_PAUSE_MATCH. LOADER_PAUSE_AT says where:
 *   objopen     (the default) as that object is mapped, before its dependencies;
 *   consistent  once all the new objects are mapped, the loader's lists still marked
 *               as changing (r_state RT_ADD) until the pause ends.
 * A race with another thread's dlopen() (a fork() in the middle of it) then happens
 * on most runs, where without the pause it happens now and then.
 */
#define _GNU_SOURCE
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static int g_matched;	/* the load under way maps a matching object */

static void pause_if(const char *where)
{
	const char *at = getenv("LOADER_PAUSE_AT");
	if (!g_matched || strcmp(at ? at : "objopen", where) != 0)
		return;
	const char *ms = getenv("LOADER_PAUSE_MS");
	long n = ms ? strtol(ms, NULL, 10) : 40;
	struct timespec d = { n / 1000, (n % 1000) * 1000000L };
	nanosleep(&d, NULL);
}

unsigned int la_version(unsigned int version)
{
	return version < LAV_CURRENT ? version : LAV_CURRENT;
}

unsigned int la_objopen(struct link_map *map, Lmid_t lmid, uintptr_t *cookie)
{
	(void)lmid;
	(void)cookie;
	const char *match = getenv("LOADER_PAUSE_MATCH");
	if (match && *match && map->l_name && strstr(map->l_name, match)) {
		g_matched = 1;
		pause_if("objopen");
	}
	return 0;	/* no symbol binding callbacks: calls stay as they are */
}

void la_activity(uintptr_t *cookie, unsigned int flag)
{
	(void)cookie;
	if (flag == LA_ACT_CONSISTENT) {
		pause_if("consistent");
		g_matched = 0;
	}
}
