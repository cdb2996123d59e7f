/* SPDX-License-Identifier: BSD-2-Clause */
/* A bounded single-producer/single-consumer ring of pointers and a doorbell,
 * for read --threads (probe/read_shards.c).  pthreads and C11 atomics only.
 *
 * The ring never blocks: push says false when full, pop NULL when empty.  A
 * thread that must wait sleeps on its own bell, which the other threads ring
 * after every change it may wait for (a batch pushed, a batch given back):
 *
 *     unsigned seen = gs_bell_seq(b);
 *     if (!the_condition())
 *             gs_bell_wait(b, seen);  // back as soon as b rang after `seen`
 */
#ifndef GS_SPSC_H
#define GS_SPSC_H

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

struct gs_ring {
	void **slot;
	uint32_t mask;
	_Atomic uint32_t head;   /* next to pop (the consumer's) */
	_Atomic uint32_t tail;   /* next to push (the producer's) */
};

/* capacity: a power of two, 2 at least.  0 or ENOMEM. */
static inline int gs_ring_init(struct gs_ring *r, uint32_t capacity)
{
	if (capacity < 2 || (capacity & (capacity - 1)))
		return EINVAL;
	r->slot = calloc(capacity, sizeof *r->slot);
	if (!r->slot)
		return ENOMEM;
	r->mask = capacity - 1;
	atomic_init(&r->head, 0);
	atomic_init(&r->tail, 0);
	return 0;
}

static inline void gs_ring_free(struct gs_ring *r)
{
	free(r->slot);
	r->slot = NULL;
}

static inline bool gs_ring_push(struct gs_ring *r, void *p)
{
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_relaxed);
	uint32_t h = atomic_load_explicit(&r->head, memory_order_acquire);
	if (t - h > r->mask)
		return false;
	r->slot[t & r->mask] = p;
	atomic_store_explicit(&r->tail, t + 1, memory_order_release);
	return true;
}

static inline void *gs_ring_pop(struct gs_ring *r)
{
	uint32_t h = atomic_load_explicit(&r->head, memory_order_relaxed);
	uint32_t t = atomic_load_explicit(&r->tail, memory_order_acquire);
	void *p;
	if (h == t)
		return NULL;
	p = r->slot[h & r->mask];
	atomic_store_explicit(&r->head, h + 1, memory_order_release);
	return p;
}

struct gs_bell {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	_Atomic unsigned seq;
	_Atomic int sleeping;
};

static inline int gs_bell_init(struct gs_bell *b)
{
	pthread_condattr_t ca;
	int err;
	atomic_init(&b->seq, 0);
	atomic_init(&b->sleeping, 0);
	if ((err = pthread_mutex_init(&b->mu, NULL)) != 0)
		return err;
	if ((err = pthread_condattr_init(&ca)) != 0)
		return err;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	err = pthread_cond_init(&b->cv, &ca);
	pthread_condattr_destroy(&ca);
	return err;
}

static inline void gs_bell_destroy(struct gs_bell *b)
{
	pthread_cond_destroy(&b->cv);
	pthread_mutex_destroy(&b->mu);
}

static inline unsigned gs_bell_seq(struct gs_bell *b)
{
	return atomic_load(&b->seq);
}

static inline void gs_bell_ring(struct gs_bell *b)
{
	atomic_fetch_add(&b->seq, 1);
	/* sequentially consistent with the waiter's store of `sleeping` and its
	 * reading of `seq`: either it sees the new seq, or we see it asleep */
	if (atomic_load(&b->sleeping)) {
		pthread_mutex_lock(&b->mu);
		pthread_cond_broadcast(&b->cv);
		pthread_mutex_unlock(&b->mu);
	}
}

/* Sleeps until the bell rang after `seen` was read (one waiter a bell). */
static inline void gs_bell_wait(struct gs_bell *b, unsigned seen)
{
	pthread_mutex_lock(&b->mu);
	atomic_store(&b->sleeping, 1);
	while (atomic_load(&b->seq) == seen) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		/* a second at most: the wake-up does not depend on it */
		ts.tv_sec += 1;
		pthread_cond_timedwait(&b->cv, &b->mu, &ts);
	}
	atomic_store(&b->sleeping, 0);
	pthread_mutex_unlock(&b->mu);
}

#endif
