/* SPDX-License-Identifier: MIT */
/*
 * One table drives every environment option, so each is parsed, defaulted and
 * reported the same way.
 */
#include "options.h"

#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

extern char **environ;

namespace allocinfo {

bool secure_execution()
{
	/* The kernel's answer, in the auxiliary vector: no allocation, no system call. */
	return getauxval(AT_SECURE) != 0;
}

bool heap_variable_set()
{
	static int set = -1;
	int s = __atomic_load_n(&set, __ATOMIC_RELAXED);
	if (s < 0) {
		s = find_env("ALLOCINFO_HEAP") != nullptr;
		__atomic_store_n(&set, s, __ATOMIC_RELAXED);
	}
	return s;
}

const char *find_env(const char *name)
{
	size_t len = strlen(name);
	/* A setuid or setgid program (or one with file capabilities) runs with the
	 * environment of a less privileged caller: it must not choose where a
	 * privileged process writes, nor make it print heap addresses. */
	if (!environ || secure_execution())
		return nullptr;
	/* The first byte first: start-up looks up a dozen names in the whole environment. */
	for (char **e = environ; *e; e++)
		if (**e == *name && strncmp(*e, name, len) == 0 && (*e)[len] == '=')
			return *e + len + 1;
	return nullptr;
}

namespace {

struct choice {
	const char *word;
	int value;
};

struct option_spec {
	const char *name;
	const choice *choices;	/* terminated by {nullptr, 0} */
	const char *expected;	/* for the message */
	int fallback;
};

const choice mode_choices[] = {
	{ "1", (int)profiling_mode::on }, { "0", (int)profiling_mode::off },
	{ "never", (int)profiling_mode::never }, { nullptr, 0 },
};
const choice store_choices[] = {
	{ "auto", (int)store_kind::automatic }, { "bpf", (int)store_kind::bpf },
	{ "shm", (int)store_kind::shm }, { "none", (int)store_kind::none }, { nullptr, 0 },
};
const choice debug_choices[] = { { "0", 0 }, { "1", 1 }, { nullptr, 0 } };
const choice heap_choices[] = {
	{ "own", (int)heap_kind::own }, { "glibc", (int)heap_kind::glibc }, { nullptr, 0 },
};

const option_spec specs[] = {
	{ "ALLOCINFO", mode_choices, "1, 0 or never", (int)profiling_mode::on },
	{ "ALLOCINFO_STORE", store_choices, "auto, bpf, shm or none",
	  (int)store_kind::automatic },
	{ "ALLOCINFO_DEBUG", debug_choices, "0 or 1", 0 },
	{ "ALLOCINFO_HEAP", heap_choices, "own or glibc", (int)heap_kind::own },
};

int parse(const option_spec &spec)
{
	const char *v = find_env(spec.name);
	if (!v)
		return spec.fallback;
	for (const choice *c = spec.choices; c->word; c++)
		if (strcmp(v, c->word) == 0)
			return c->value;
	const char *dflt = "";
	for (const choice *c = spec.choices; c->word; c++)
		if (c->value == spec.fallback) {
			dflt = c->word;
			break;
		}
	log_message("%s='%.64s' is not valid (expected %s); using %s", spec.name, v,
		    spec.expected, dflt);
	return spec.fallback;
}

} /* namespace */

options read_options()
{
	options o;
	o.mode = (profiling_mode)parse(specs[0]);
	o.store = (store_kind)parse(specs[1]);
	o.debug = parse(specs[2]) != 0;
	o.heap = (heap_kind)parse(specs[3]);
	return o;
}

} /* namespace allocinfo */
