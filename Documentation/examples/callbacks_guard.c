/* SPDX-License-Identifier: MIT */
/*
 * Example callback library: guard bytes after every block, checked when it is freed
 * or reallocated.
 *
 *   ALLOCINFO_CALLBACKS=./libcallbacks_guard.so ./program
 *
 * Each malloc, calloc, realloc and new (of the default alignment) asks for 48 bytes
 * more: a 32-byte header in front of the caller's bytes and 16 guard bytes after
 * them. The header's first 16 bytes hold a magic word and the size asked for; its
 * last 16 belong to the library, which marks there that the pointer handed out is
 * not the block's start. A block whose guard bytes were overwritten is reported
 * with the call site that allocated it:
 *
 *   guard: 100-byte block from overflow.c:12 func:main [overflow] was written past its end
 *
 * Blocks made before the library was loaded, or with a larger alignment, are left
 * alone: free's pre callback knows them by e->moved, which is 0 for them.
 *
 * Build: cc -shared -fPIC -o libcallbacks_guard.so callbacks_guard.c
 */
#include <allocinfo.h>

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define HEADER 32	/* ours (16), then the library's mark (16) */
#define GUARD 16
#define MAGIC 0x4755415244000000ull	/* "GUARD" */
#define PATTERN 0xa5

struct header {
	uint64_t magic;
	uint64_t size;	/* bytes the caller asked for */
};

/* Set by a pre callback for the post callback of the same call: this call's block
 * gets a header and guard bytes. Initial-exec: in a library loaded with dlopen, the
 * default model would allocate each thread's copy on first use. */
static __thread int guarding __attribute__((tls_model("initial-exec")));

static void report(const struct allocinfo_event *e, const struct header *h)
{
	char line[1024];
	int n = snprintf(line, sizeof(line),
			 "guard: %llu-byte block from %s:%u func:%s [%s] was written past "
			 "its end\n", (unsigned long long)h->size, e->file ? e->file : "??",
			 e->line, e->func ? e->func : "??", e->module ? e->module : "??");
	if (n > 0 && (size_t)n >= sizeof(line))
		n = sizeof(line) - 1;
	if (n > 0)
		(void)!write(STDERR_FILENO, line, (size_t)n);
}

/* ptr is one of ours: checks it and points the event at the block. */
static void unwrap(struct allocinfo_event *e)
{
	if (!e->ptr || e->moved < HEADER)
		return;	/* not ours */
	char *block = (char *)e->ptr - HEADER;
	const struct header *h = (const struct header *)block;
	if (h->magic != MAGIC)
		return;
	const unsigned char *g = (const unsigned char *)e->ptr + h->size;
	for (int i = 0; i < GUARD; i++)
		if (g[i] != PATTERN) {
			report(e, h);
			break;
		}
	e->ptr = block;
}

static void guard_pre(void *user_data, struct allocinfo_event *e)
{
	(void)user_data;
	switch (e->op) {
	case ALLOCINFO_OP_FREE:
	case ALLOCINFO_OP_DELETE:
		unwrap(e);
		return;
	case ALLOCINFO_OP_USABLE_SIZE:
		guarding = e->moved >= HEADER;
		if (guarding)
			e->ptr = (char *)e->ptr - HEADER;
		return;
	case ALLOCINFO_OP_REALLOC:
		if ((e->ptr && e->moved < HEADER) || e->size == 0) {
			/* a block not ours stays so; realloc(p, 0) frees */
			guarding = 0;
			if (e->size == 0)
				unwrap(e);
			return;
		}
		unwrap(e);
		break;
	default:
		if (e->alignment > 16) {
			guarding = 0;
			return;
		}
	}
	guarding = e->size <= SIZE_MAX - HEADER - GUARD;
	if (guarding)
		e->size += HEADER + GUARD;
}

static void guard_post(void *user_data, struct allocinfo_event *e)
{
	(void)user_data;
	if (!guarding || e->op == ALLOCINFO_OP_FREE || e->op == ALLOCINFO_OP_DELETE)
		return;
	if (e->op == ALLOCINFO_OP_USABLE_SIZE) {
		e->size = ((const struct header *)e->ptr)->size;
		return;
	}
	if (!e->ptr)
		return;
	struct header *h = e->ptr;
	h->magic = MAGIC;
	h->size = e->size - HEADER - GUARD;
	char *user = (char *)e->ptr + HEADER;
	memset(user + h->size, PATTERN, GUARD);
	e->ptr = user;
}

int allocinfo_callbacks_init(void);
int allocinfo_callbacks_init(void)
{
	struct allocinfo_callbacks cb = {
		.size = sizeof(cb),
		.ops = 1u << ALLOCINFO_OP_MALLOC | 1u << ALLOCINFO_OP_CALLOC |
		       1u << ALLOCINFO_OP_REALLOC | 1u << ALLOCINFO_OP_FREE |
		       1u << ALLOCINFO_OP_USABLE_SIZE | 1u << ALLOCINFO_OP_NEW |
		       1u << ALLOCINFO_OP_DELETE,
		.pre = guard_pre,
		.post = guard_post,
	};
	int h = allocinfo_callbacks_add(&cb);
	return h < 0 ? h : 0;
}
