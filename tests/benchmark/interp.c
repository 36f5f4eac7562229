/* SPDX-License-Identifier: MIT */
/*
 * An interpreter's heap: objects of mixed small sizes (numbers, strings, cons cells,
 * tables whose arrays grow with realloc), all on one list, and a collector that
 * frees most of them in phases and keeps the survivors for a while. The shape of
 * the heap that exposed the small-block heap's memory use. Usage: interp ROUNDS.
 */
#include "bench.h"

#include <string.h>

enum { PER_ROUND = 100000 };

enum kind { NUMBER, STRING, CONS, TABLE };

struct obj {
	struct obj *next;	/* every live object, for the collector */
	enum kind kind;
	unsigned age;		/* collections survived */
	size_t len, cap;
	void **items;		/* a table's array, grown by realloc */
	char text[];		/* a string's characters */
};

static uint32_t rng = 2463534242u;

static uint32_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static struct obj *all;

static struct obj *new_object(enum kind kind, size_t extra)
{
	struct obj *o = malloc(sizeof(*o) + extra);
	if (!o)
		abort();
	o->kind = kind;
	o->age = 0;
	o->len = o->cap = 0;
	o->items = NULL;
	o->next = all;
	all = o;
	return o;
}

static void append(struct obj *table, void *item)
{
	if (table->len == table->cap) {
		table->cap = table->cap ? table->cap * 2 : 4;
		table->items = realloc(table->items, table->cap * sizeof(void *));
		if (!table->items)
			abort();
	}
	table->items[table->len++] = item;
}

/* One phase of the program: objects of every kind, tables filled with the others. */
static void run_phase(void)
{
	struct obj *table = NULL;
	for (int i = 0; i < PER_ROUND; i++) {
		uint32_t r = next_random();
		switch (r % 10) {
		case 0: case 1: case 2:
			new_object(NUMBER, 8);
			break;
		case 3: case 4: case 5: {
			size_t n = 8 + (r >> 8) % 120;
			struct obj *s = new_object(STRING, n + 1);
			memset(s->text, 'a' + (int)(r % 26), n);
			s->text[n] = '\0';
			s->len = n;
			break;
		}
		case 6: case 7: case 8:
			new_object(CONS, 16);
			break;
		default:
			table = new_object(TABLE, 0);
			break;
		}
		if (table && (r >> 4) % 2)
			append(table, all);
	}
}

/* Frees every object that does not survive: new objects mostly die young, and
 * survivors die after a few collections. */
static size_t collect(void)
{
	size_t live = 0;
	struct obj **link = &all;
	while (*link) {
		struct obj *o = *link;
		uint32_t r = next_random();
		if (r % 100 < (o->age ? 60u : 10u) && o->age < 4) {
			o->age++;
			live++;
			link = &o->next;
			continue;
		}
		*link = o->next;
		free(o->items);
		free(o);
	}
	return live;
}

int main(int argc, char **argv)
{
	unsigned long rounds = bench_arg(argc, argv, 1, 30);
	struct bench_mark start = bench_now();
	size_t live = 0;
	for (unsigned long r = 0; r < rounds; r++) {
		run_phase();
		live = collect();
	}
	while (all) {
		struct obj *o = all;
		all = o->next;
		free(o->items);
		free(o);
	}
	bench_escape(&live);
	bench_report(start, rounds * PER_ROUND);
	return 0;
}
