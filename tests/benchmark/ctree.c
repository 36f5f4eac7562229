/* SPDX-License-Identifier: MIT */
/*
 * A C workload: each round builds a binary search tree of string keys, a linked list
 * of records of mixed sizes and a few growing strings, uses them, and tears them all
 * down. The allocation calls are the ones a C program makes: malloc, calloc,
 * strdup, asprintf, realloc. Usage: ctree ROUNDS.
 */
#include "bench.h"

#include <string.h>

enum { KEYS = 20000, ITEMS = 20000, STRINGS = 200 };

struct node {
	struct node *left, *right;
	char *key;
	unsigned long value;
};

struct item {
	struct item *next;
	size_t len;
	unsigned char payload[];
};

static uint32_t rng = 2463534242u;

static uint32_t next_random(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 17;
	rng ^= rng << 5;
	return rng;
}

static struct node *insert(struct node *root, const char *key, unsigned long value)
{
	struct node **link = &root;
	while (*link) {
		int c = strcmp(key, (*link)->key);
		if (c == 0) {
			(*link)->value += value;
			return root;
		}
		link = c < 0 ? &(*link)->left : &(*link)->right;
	}
	struct node *n = calloc(1, sizeof(*n));
	n->key = strdup(key);
	n->value = value;
	*link = n;
	return root;
}

static unsigned long sum_tree(const struct node *n)
{
	unsigned long s = 0;
	while (n) {
		s += n->value + sum_tree(n->left);
		n = n->right;
	}
	return s;
}

static void free_tree(struct node *n)
{
	while (n) {
		struct node *right = n->right;
		free_tree(n->left);
		free(n->key);
		free(n);
		n = right;
	}
}

static unsigned long round_trip(void)
{
	unsigned long check = 0;

	struct node *root = NULL;
	for (int i = 0; i < KEYS; i++) {
		char *key;
		if (asprintf(&key, "user-%08x-account", next_random() % (KEYS * 4)) < 0)
			abort();
		root = insert(root, key, (unsigned long)i);
		free(key);
	}
	check += sum_tree(root);

	struct item *head = NULL;
	for (int i = 0; i < ITEMS; i++) {
		size_t len = 8 + next_random() % 248;
		struct item *it = malloc(sizeof(*it) + len);
		it->len = len;
		memset(it->payload, i, len);
		it->next = head;
		head = it;
	}
	for (struct item *it = head; it; it = it->next)
		check += it->payload[it->len - 1];

	for (int s = 0; s < STRINGS; s++) {
		size_t cap = 16, len = 0;
		char *buf = malloc(cap);
		for (int w = 0; w < 64; w++) {
			char word[24];
			int n = snprintf(word, sizeof(word), "%u ", next_random() % 100000);
			if (len + (size_t)n + 1 > cap) {
				cap *= 2;
				buf = realloc(buf, cap);
			}
			memcpy(buf + len, word, (size_t)n + 1);
			len += (size_t)n;
		}
		check += strlen(buf);
		free(buf);
	}

	while (head) {
		struct item *next = head->next;
		free(head);
		head = next;
	}
	free_tree(root);
	return check;
}

int main(int argc, char **argv)
{
	unsigned long rounds = bench_arg(argc, argv, 1, 20);
	unsigned long check = round_trip();	/* warm */
	struct bench_mark m = bench_now();
	for (unsigned long r = 0; r < rounds; r++)
		check += round_trip();
	bench_report(m, rounds);
	return check == 42 ? 1 : 0;
}
