/* SPDX-License-Identifier: MIT */
/*
 * Producer/consumer: one thread allocates messages of mixed sizes and fills them,
 * the other reads and frees them, through a single-producer single-consumer ring.
 * Every free happens on another thread than its malloc (another CPU's counter, and
 * glibc's remote-free path). Usage: prodcons MESSAGES.
 */
#include "bench.h"

#include <pthread.h>
#include <sched.h>
#include <string.h>

enum { RING = 4096 };

static void *ring[RING];
static unsigned long head, tail;	/* written by producer, consumer */
static unsigned long messages;
static unsigned long checksum;

static void wait_a_little(unsigned *spins)
{
	if (++*spins < 64) {
		__builtin_ia32_pause();
	} else {
		*spins = 0;
		sched_yield();
	}
}

static void *producer(void *arg)
{
	(void)arg;
	uint32_t rng = 2463534242u;
	for (unsigned long i = 0; i < messages; i++) {
		rng ^= rng << 13;
		rng ^= rng >> 17;
		rng ^= rng << 5;
		size_t len = 16 + rng % 496;
		unsigned char *msg = malloc(len);
		msg[0] = (unsigned char)len;
		memset(msg + 1, (int)i, len - 1);
		unsigned spins = 0;
		while (head - __atomic_load_n(&tail, __ATOMIC_ACQUIRE) == RING)
			wait_a_little(&spins);
		ring[head % RING] = msg;
		__atomic_store_n(&head, head + 1, __ATOMIC_RELEASE);
	}
	return NULL;
}

static void *consumer(void *arg)
{
	(void)arg;
	unsigned long sum = 0;
	for (unsigned long i = 0; i < messages; i++) {
		unsigned spins = 0;
		while (__atomic_load_n(&head, __ATOMIC_ACQUIRE) == tail)
			wait_a_little(&spins);
		unsigned char *msg = ring[tail % RING];
		sum += msg[0] + msg[msg[0] > 1 ? 1 : 0];
		free(msg);
		__atomic_store_n(&tail, tail + 1, __ATOMIC_RELEASE);
	}
	checksum = sum;
	return NULL;
}

int main(int argc, char **argv)
{
	messages = bench_arg(argc, argv, 1, 2000000);
	struct bench_mark m = bench_now();
	pthread_t p, c;
	pthread_create(&c, NULL, consumer, NULL);
	pthread_create(&p, NULL, producer, NULL);
	pthread_join(p, NULL);
	pthread_join(c, NULL);
	bench_report(m, messages);
	return checksum == 42 ? 1 : 0;
}
