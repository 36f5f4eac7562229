/* SPDX-License-Identifier: MIT */
/*
 * A small program that allocates in a few places and prints its own report: what
 * `cat /run/allocinfo` would show for it. Build it unchanged with allocinfo-cc.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <allocinfo.h>

struct node {
	struct node *next;
	char name[24];
};

static struct node *make_list(int n)
{
	struct node *head = NULL;
	for (int i = 0; i < n; i++) {
		struct node *x = malloc(sizeof(*x));
		snprintf(x->name, sizeof(x->name), "node %d", i);
		x->next = head;
		head = x;
	}
	return head;
}

static char *greeting(const char *who)
{
	char *s;
	if (asprintf(&s, "hello, %s", who) < 0)
		return NULL;
	return s;
}

int main(void)
{
	struct node *list = make_list(4);
	char *hello = greeting("world");
	char *copy = strdup(hello);
	void *page = aligned_alloc(4096, 4096);

	printf("%s: four nodes, two strings and a page are live\n\n", copy);
	fflush(stdout);
	allocinfo_print(1);

	free(page);
	free(copy);
	free(hello);
	while (list) {
		struct node *next = list->next;
		free(list);
		list = next;
	}
	printf("\nafter freeing everything:\n\n");
	fflush(stdout);
	allocinfo_print(1);
	return 0;
}
