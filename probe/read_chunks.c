/* SPDX-License-Identifier: BSD-2-Clause */
/* A classic pcap file read once into shared buffers, each walked once, for
 * read --threads' engines (read_chunks.h). */
#include "read_chunks.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct slot {
	struct gs_chunk ch;  /* what the engines read */
	uint64_t k;          /* the chunk in it, 0: none yet */
	bool ready;          /* read and indexed (else being so, by the engine that took it) */
	bool cut;            /* the read came back short */
	uint8_t *buf;
	uint8_t *owner;      /* each record's engine, while indexing */
	struct gs_chunk_rec *tmp;   /* the records in order, while indexing */
	struct gs_chunk_rec *rec;
	uint32_t *rec_from;
	struct gs_chunk_step *step;
};

struct gs_chunks {
	int fd;
	size_t size;         /* the file's when it was opened */
	unsigned engines;
	uint64_t step_mask;
	struct gs_walk proto;
	gs_chunk_pick_fn pick;
	const void *pick_arg;
	bool locks;          /* mu and cv made */
	pthread_mutex_t mu;  /* everything below */
	pthread_cond_t cv;
	unsigned waiting;
	bool cut;
	uint64_t *cur;       /* each engine's chunk; UINT64_MAX: done */
	struct slot slot[GS_CHUNK_SLOTS];
};

/* steps in a chunk at most: one every `step` records, from any first */
static uint32_t max_steps(uint64_t step)
{
	return (uint32_t)(GS_CHUNK_RECS / step + 2);
}

int gs_chunks_new(struct gs_chunks **out, int fd, const struct gs_walk *w, unsigned engines, uint64_t step,
		  gs_chunk_pick_fn pick, const void *pick_arg)
{
	struct gs_chunks *c;
	int err;
	*out = NULL;
	/* a record with the snapshot's length must fit whole in a chunk */
	if (w->ng || (size_t)w->snapshot + 16 > GS_CHUNK_BYTES || engines == 0 || engines > 256 || step == 0 || (step & (step - 1)))
		return EINVAL;
	if (!(c = calloc(1, sizeof *c)))
		return ENOMEM;
	c->fd = fd;
	c->size = w->size;
	c->engines = engines;
	c->step_mask = step - 1;
	c->proto = *w;
	c->pick = pick;
	c->pick_arg = pick_arg;
	if (!(c->cur = calloc(engines, sizeof *c->cur))) {
		free(c);
		return ENOMEM;
	}
	/* (the indexes are touched only as far as records fill them) */
	for (unsigned i = 0; i < GS_CHUNK_SLOTS; i++) {
		struct slot *s = &c->slot[i];
		s->buf = malloc(GS_CHUNK_BYTES);
		s->owner = malloc(GS_CHUNK_RECS);
		s->rec = malloc(GS_CHUNK_RECS * sizeof *s->rec);
		s->tmp = malloc(GS_CHUNK_RECS * sizeof *s->tmp);
		s->rec_from = calloc(engines + 1, sizeof *s->rec_from);
		s->step = malloc(max_steps(step) * sizeof *s->step);
		if (!s->buf || !s->owner || !s->rec || !s->tmp || !s->rec_from || !s->step) {
			gs_chunks_free(c);
			return ENOMEM;
		}
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
	for (unsigned i = 0; i < GS_CHUNK_SLOTS; i++) {
		struct slot *s = &c->slot[i];
		free(s->buf);
		free(s->owner);
		free(s->rec);
		free(s->tmp);
		free(s->rec_from);
		free(s->step);
	}
	free(c->cur);
	free(c);
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

/* Walks the chunk just read (n bytes) once: each record's engine, the
 * engines' records grouped, the steps, where it ends. */
static void index_chunk(const struct gs_chunks *c, struct slot *s, size_t n)
{
	struct gs_chunk *ch = &s->ch;
	struct gs_walk w = c->proto;
	struct gs_walk_it it;
	struct gs_walk_rec r;
	struct gs_chunk_state st = ch->in;
	uint32_t nrec = 0, steps = 0;
	size_t at;

	w.base = s->buf;
	w.size = n;
	w.first = 0;
	gs_walk_start(&w, &it);
	for (;;) {
		at = it.off;
		if (gs_walk_next_classic_(&w, &it, &r) != 1)
			break;
		/* (no branch on the engine here: noted, grouped after) */
		s->owner[nrec] = (uint8_t)c->pick(c->pick_arg, w.dlt, r.data, r.caplen, r.len);
		s->tmp[nrec] = (struct gs_chunk_rec){ .off = (uint32_t)at, .i = nrec, .before = st.now };
		st.no++;
		if (st.first == 0)
			st.first = r.ts;
		if (r.ts > st.now)
			st.now = r.ts;
		if ((st.no & c->step_mask) == 0)
			s->step[steps++] = (struct gs_chunk_step){ .i = nrec, .off = (uint32_t)it.off, .now = st.now };
		nrec++;
	}
	/* the walk stopped at `at` (it did not move past it) */
	if (ch->start + n >= c->size || at == 0) {
		/* the end of the file; or a record the walker refused where it
		 * had the whole snapshot length to fit in: not vouched for */
		ch->end = ch->start + n >= c->size && at == n ? 0 : -1;
	} else {
		ch->end = 1;
	}
	ch->next = ch->start + at;
	ch->out = st;
	ch->steps = steps;
	/* each engine's records together, in order (a counting sort: no
	 * branch on the engine) */
	memset(s->rec_from, 0, (c->engines + 1) * sizeof *s->rec_from);
	for (uint32_t i = 0; i < nrec; i++)
		s->rec_from[s->owner[i] + 1]++;
	for (unsigned e = 0; e < c->engines; e++)
		s->rec_from[e + 1] += s->rec_from[e];
	/* (rec_from[e] the next place of engine e's: once filled, e + 1's start) */
	for (uint32_t i = 0; i < nrec; i++)
		s->rec[s->rec_from[s->owner[i]]++] = s->tmp[i];
	for (unsigned e = c->engines; e > 0; e--)
		s->rec_from[e] = s->rec_from[e - 1];
	s->rec_from[0] = 0;
	ch->rec = s->rec;
	ch->rec_from = s->rec_from;
	ch->step = s->step;
	ch->buf = s->buf;
}

/* Under the lock, which it lets go of meanwhile: chunk k, starting at
 * `start` with the walk's state `st`, read and indexed into `s` (free). */
static void load(struct gs_chunks *c, struct slot *s, uint64_t k, size_t start, const struct gs_chunk_state *st)
{
	size_t left = c->size - start, want = left < GS_CHUNK_BYTES ? left : GS_CHUNK_BYTES, n;
	s->k = k;
	s->ch.k = k;
	s->ready = false;
	s->ch.start = start;
	s->ch.in = *st;
	pthread_mutex_unlock(&c->mu);
	n = read_chunk(c, s->buf, start, want);
	s->cut = n < want;
	if (!s->cut)
		index_chunk(c, s, n);
	pthread_mutex_lock(&c->mu);
	s->ready = true;
	c->cut |= s->cut;
	if (c->waiting)
		pthread_cond_broadcast(&c->cv);
}

/* Engine `me` on chunk k, starting at `start` with the walk's state `st`:
 * read and indexed by it, or by another.  NULL: the file was cut short. */
static const struct gs_chunk *take(struct gs_chunks *c, unsigned me, uint64_t k, size_t start,
				   const struct gs_chunk_state *st, gs_chunk_wait_fn wait_fn, void *arg)
{
	struct slot *s = &c->slot[k % GS_CHUNK_SLOTS], *nx = &c->slot[(k + 1) % GS_CHUNK_SLOTS];
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
			return NULL;
		} else if (slot_free(c, s)) {
			set_cur(c, me, k);
			load(c, s, k, start, st);
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
	/* The next chunk read now, before this one's records, when nobody has
	 * yet: an engine that comes to it later finds it ready (else, the
	 * engines in step, the one that came second waited for the other's
	 * read and walk of each chunk, its CPU idle) */
	if (!cut && s->ch.end == 1 && nx->k != k + 1 && !c->cut && slot_free(c, nx))
		load(c, nx, k + 1, s->ch.next, &s->ch.out);
	pthread_mutex_unlock(&c->mu);
	return cut ? NULL : &s->ch;
}

const struct gs_chunk *gs_chunks_take(struct gs_chunks *c, unsigned me, const struct gs_chunk *prev,
				      const struct gs_chunk_state *st, gs_chunk_wait_fn wait_fn, void *arg)
{
	if (!prev)
		return take(c, me, 1, c->proto.first, st, wait_fn, arg);
	return take(c, me, prev->k + 1, prev->next, &prev->out, wait_fn, arg);
}

void gs_chunks_done(struct gs_chunks *c, unsigned me)
{
	pthread_mutex_lock(&c->mu);
	set_cur(c, me, UINT64_MAX);
	pthread_mutex_unlock(&c->mu);
}
