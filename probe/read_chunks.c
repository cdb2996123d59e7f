/* A classic pcap file read once into shared buffers for read --threads'
 * engines (read_chunks.h). */
#include "read_chunks.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct slot {
	uint8_t *buf;
	uint64_t k;          /* the chunk in it, 0: none yet */
	size_t start, n;     /* its offset in the file, the bytes read */
	bool ready;          /* read (else being read, by the engine that took it) */
	bool cut;            /* the read came back short */
};

struct gs_chunks {
	int fd;
	size_t size;         /* the file's when it was opened */
	unsigned engines;
	struct gs_walk proto;
	bool locks;          /* mu and cv made */
	pthread_mutex_t mu;  /* everything below */
	pthread_cond_t cv;
	unsigned waiting;
	bool cut;
	uint64_t *cur;       /* each engine's chunk; UINT64_MAX: done */
	struct slot slot[GS_CHUNK_SLOTS];
};

int gs_chunks_new(struct gs_chunks **out, int fd, const struct gs_walk *w, unsigned engines)
{
	struct gs_chunks *c;
	int err;
	*out = NULL;
	/* a record with the snapshot's length must fit whole in a chunk */
	if (w->ng || (size_t)w->snapshot + 16 > GS_CHUNK_BYTES || engines == 0)
		return EINVAL;
	if (!(c = calloc(1, sizeof *c)))
		return ENOMEM;
	c->fd = fd;
	c->size = w->size;
	c->engines = engines;
	c->proto = *w;
	if (!(c->cur = calloc(engines, sizeof *c->cur))) {
		free(c);
		return ENOMEM;
	}
	for (unsigned i = 0; i < GS_CHUNK_SLOTS; i++)
		if (!(c->slot[i].buf = malloc(GS_CHUNK_BYTES))) {
			gs_chunks_free(c);
			return ENOMEM;
		}
	if ((err = pthread_mutex_init(&c->mu, NULL)) != 0) {
		gs_chunks_free(c);
		return err;
	}
	if ((err = pthread_cond_init(&c->cv, NULL)) != 0) {
		pthread_mutex_destroy(&c->mu);
		gs_chunks_free(c);
		return err;
	}
	c->locks = true;
	*out = c;
	return 0;
}

void gs_chunks_free(struct gs_chunks *c)
{
	if (!c)
		return;
	if (c->locks) {
		pthread_cond_destroy(&c->cv);
		pthread_mutex_destroy(&c->mu);
	}
	for (unsigned i = 0; i < GS_CHUNK_SLOTS; i++)
		free(c->slot[i].buf);
	free(c->cur);
	free(c);
}

void gs_chunks_start(const struct gs_chunks *c, struct gs_chunk_it *ci)
{
	memset(ci, 0, sizeof *ci);
	ci->start = c->proto.first;
}

bool gs_chunks_cut(struct gs_chunks *c)
{
	bool cut;
	pthread_mutex_lock(&c->mu);
	cut = c->cut;
	pthread_mutex_unlock(&c->mu);
	return cut;
}

/* Under the lock: engine `me` is on chunk k (the ones before it free for it). */
static void set_cur(struct gs_chunks *c, unsigned me, uint64_t k)
{
	c->cur[me] = k;
	if (c->waiting)
		pthread_cond_broadcast(&c->cv);
}

/* Under the lock: no engine is on the chunk in `s` or before it. */
static bool slot_free(const struct gs_chunks *c, const struct slot *s)
{
	if (s->k == 0)
		return true;
	for (unsigned i = 0; i < c->engines; i++)
		if (c->cur[i] <= s->k)
			return false;
	return true;
}

static size_t chunk_want(const struct gs_chunks *c, size_t start)
{
	size_t left = c->size - start;
	return left < GS_CHUNK_BYTES ? left : GS_CHUNK_BYTES;
}

/* The chunk's bytes, fewer when the file is shorter now (or unreadable). */
static size_t read_chunk(const struct gs_chunks *c, uint8_t *buf, size_t start, size_t want)
{
	size_t have = 0;
	while (have < want) {
		ssize_t got = pread(c->fd, buf + have, want - have, (off_t)(start + have));
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			break;
		have += (size_t)got;
	}
	return have;
}

/* Engine `me` on chunk k, starting at `start`: read by it, or by another.
 * False: the file was cut short there. */
static bool take(struct gs_chunks *c, unsigned me, struct gs_chunk_it *ci, uint64_t k, size_t start,
		 gs_chunk_wait_fn wait_fn, void *arg)
{
	struct slot *s = &c->slot[k % GS_CHUNK_SLOTS];
	bool said = false, cut;
	pthread_mutex_lock(&c->mu);
	for (;;) {
		if (s->k == k) {
			if (s->ready)
				break;
		} else if (c->cut) {
			/* (past a chunk that came back short: nothing more to read) */
			set_cur(c, me, k);
			pthread_mutex_unlock(&c->mu);
			return false;
		} else if (slot_free(c, s)) {
			size_t want = chunk_want(c, start), n;
			s->k = k;
			s->start = start;
			s->ready = false;
			set_cur(c, me, k);
			pthread_mutex_unlock(&c->mu);
			n = read_chunk(c, s->buf, start, want);
			pthread_mutex_lock(&c->mu);
			s->n = n;
			s->cut = n < want;
			s->ready = true;
			c->cut |= s->cut;
			if (c->waiting)
				pthread_cond_broadcast(&c->cv);
			break;
		}
		if (!said && wait_fn) {
			/* (once a wait: it may hand calls over and ring other threads) */
			pthread_mutex_unlock(&c->mu);
			wait_fn(arg, start);
			said = true;
			pthread_mutex_lock(&c->mu);
			continue;
		}
		c->waiting++;
		pthread_cond_wait(&c->cv, &c->mu);
		c->waiting--;
	}
	set_cur(c, me, k);
	cut = s->cut;
	ci->k = k;
	ci->start = start;
	ci->w = c->proto;
	ci->w.base = s->buf;
	ci->w.size = s->n;
	ci->w.first = 0;
	pthread_mutex_unlock(&c->mu);
	if (cut) {
		ci->have = false;
		return false;
	}
	gs_walk_start(&ci->w, &ci->it);
	ci->have = true;
	return true;
}

int gs_chunks_next_chunk(struct gs_chunks *c, unsigned me, struct gs_chunk_it *ci, struct gs_walk_rec *r,
			 size_t *at, gs_chunk_wait_fn wait_fn, void *arg)
{
	for (;;) {
		size_t next;
		if (ci->have) {
			/* the chunk's walk stopped at it.off (which it did not move) */
			size_t o = ci->it.off;
			bool last = ci->start + ci->w.size >= c->size;
			if (last || o == 0) {
				/* the end of the file; or a record the walker
				 * refused where it had the whole snapshot length
				 * to fit in: not vouched for */
				*at = ci->start + o;
				return last && o == ci->w.size ? 0 : -1;
			}
			next = ci->start + o;
		} else if (ci->k == 0) {
			next = ci->start;
		} else {
			*at = ci->start;  /* cut there (before) */
			return -1;
		}
		if (!take(c, me, ci, ci->k + 1, next, wait_fn, arg)) {
			*at = next;
			return -1;
		}
		if (gs_walk_next_classic_(&ci->w, &ci->it, r) == 1)
			return 1;
	}
}

void gs_chunks_done(struct gs_chunks *c, unsigned me)
{
	pthread_mutex_lock(&c->mu);
	set_cur(c, me, UINT64_MAX);
	pthread_mutex_unlock(&c->mu);
}
