/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads: the reader (read_shards_impl.h): each frame to its engine's batch, full
 * batches through the rings. */
#include "read_shards_impl.h"

/* ---- the reader ----------------------------------------------------------- */

void rs_in_send(struct shard *sh)
{
	if (!sh->cur_in)
		return;
	gs_ring_push(&sh->in, sh->cur_in);  /* holds every batch: never full */
	sh->cur_in = NULL;
	gs_bell_ring(&sh->bell);
}

static void put_tick(struct gs_shards *S, struct shard *sh)
{
	struct in_ent en = { .no = S->packets, .ts = S->now, .caplen = TICK };
	struct in_batch *b = sh->cur_in;
	if (b && b->cap - b->used >= sizeof en) {
		memcpy(b->buf + b->used, &en, sizeof en);
		b->used += (uint32_t)sizeof en;
	}
}

/* A batch was full: the others go too, with the clock, so that every
 * engine's floor keeps up with the capture (an engine whose connections are
 * quiet would hold every other's calls back). */
static void send_all(struct gs_shards *S)
{
	for (unsigned i = 0; i < S->n; i++) {
		struct shard *sh = &S->sh[i];
		if (!sh->cur_in) {
			sh->cur_in = gs_ring_pop(&sh->in_back);
			if (!sh->cur_in)
				continue; /* all its batches are on their way: it has work */
			sh->cur_in->used = 0;
			sh->cur_in->finish = false;
			sh->cur_in->walk = NULL;
		}
		put_tick(S, sh);
		rs_in_send(sh);
	}
}

struct in_batch *rs_in_get(struct gs_shards *S, struct shard *sh)
{
	for (;;) {
		unsigned seen = gs_bell_seq(&S->bell);
		struct in_batch *b = gs_ring_pop(&sh->in_back);
		if (b) {
			b->used = 0;
			b->finish = false;
			b->walk = NULL;
			return b;
		}
		/* that engine is behind: write what can be written meanwhile */
		rs_merge(S);
		if ((b = gs_ring_pop(&sh->in_back)) != NULL) {
			b->used = 0;
			b->finish = false;
			b->walk = NULL;
			return b;
		}
		gs_bell_wait(&S->bell, seen);
	}
}

void gs_shards_frame(void *arg, int dlt, int64_t ts, const uint8_t *data, uint32_t caplen, uint32_t len)
{
	struct gs_shards *S = arg;
	struct shard *sh = &S->sh[pick(S, dlt, data, caplen, len)];
	uint32_t need = (uint32_t)sizeof(struct in_ent) + ((caplen + 7u) & ~7u);
	struct in_ent en = { .now = S->now, .ts = ts, .caplen = caplen, .len = len, .dlt = dlt };
	struct in_batch *b;

	en.no = ++S->packets;
	if (S->first_ts == 0)
		S->first_ts = ts;
	if (ts > S->now)
		S->now = ts;
	if (sh->cur_in && sh->cur_in->cap - sh->cur_in->used < need) {
		rs_in_send(sh);
		send_all(S);
		rs_merge(S);
	}
	if (!sh->cur_in)
		sh->cur_in = rs_in_get(S, sh);
	b = sh->cur_in;
	if (b->cap - b->used < need) {
		/* a frame larger than a batch: this (empty) batch grows to it */
		uint8_t *nb = realloc(b->buf, need);
		if (!nb)
			abort(); /* no memory left for one frame */
		b->buf = nb;
		b->cap = need;
	}
	memcpy(b->buf + b->used, &en, sizeof en);
	memcpy(b->buf + b->used + sizeof en, data, caplen);
	b->used += need;
}
