/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads: the engines' calls merged into the one-engine order, on the reader's
 * thread (read_shards_impl.h). */
#include "read_shards_impl.h"

/* ---- the merge (on the reader's thread) ---------------------------------- */

void rs_pull(struct shard *sh)
{
	struct out_batch *b;
	while ((b = gs_ring_pop(&sh->out)) != NULL) {
		b->next = NULL;
		if (sh->q_tail)
			sh->q_tail->next = b;
		else
			sh->q_head = b;
		sh->q_tail = b;
		sh->S->buffered += b->n;
	}
}

static const struct gs_call *head(const struct shard *sh)
{
	return sh->q_head ? &slot(sh->S, sh->q_head->k[sh->q_pos])->c : NULL;
}

uint32_t rs_map_id(struct gs_shards *S, struct shard *sh, uint32_t id)
{
	const struct gs_intern *t = gs_engine_strings(sh->e);
	uint32_t m;
	if (id == GS_INTERN_FULL || id == GS_INTERN_EMPTY || id >= sh->id_cap)
		return id == GS_INTERN_EMPTY ? id : GS_INTERN_FULL;
	if (sh->idmap[id])
		return sh->idmap[id] - 1;
	/* the engine thread wrote this name before the call naming it: read it
	 * without its `count`, which that thread may be moving on */
	m = gs_intern(gs_engine_strings_rw(S->merged), t->chars + t->offset[id], t->length[id]);
	if (m != GS_INTERN_FULL)
		sh->idmap[id] = m + 1;
	return m;
}

static void emit(struct gs_shards *S, struct shard *sh)
{
	uint32_t k = sh->q_head->k[sh->q_pos];
	struct gs_call c = slot(S, k)->c;
	c.op = rs_map_id(S, sh, c.op);
	c.object_key = rs_map_id(S, sh, c.object_key);
	c.exception = rs_map_id(S, sh, c.exception);
	if (c.queued_op != GS_QUEUED_LOCATE) /* not a string of the engine's */
		c.queued_op = rs_map_id(S, sh, c.queued_op);
	if (c.t_request_first < S->last_t)
		S->ooo++;
	else
		S->last_t = c.t_request_first;
	if (S->fn)
		S->fn(S->arg, S->merged, &c);
	S->buffered--;
	rs_pool_put(S, k);
	if (++sh->q_pos == sh->q_head->n) {
		struct out_batch *b = sh->q_head;
		sh->q_head = b->next;
		if (!sh->q_head)
			sh->q_tail = NULL;
		sh->q_pos = 0;
		gs_ring_push(&sh->out_back, b);
		sh->relieved = true;
		gs_bell_ring(&sh->bell);
	}
}

/* Writes every call that can be written now: the first of all heads, while
 * no engine can still bring an earlier one.  Past the order window, the
 * first is written anyway (as one engine does, counted out of order). */
static void merge_now(struct gs_shards *S);

/* The addresses the engines noted since the last time, to the nesting stage
 * (the merge's thread is the stage's): before the calls merged now. */
void rs_own_addrs(struct gs_shards *S)
{
	if (!S->own_addr_fn)
		return;
	for (unsigned i = 0; i < S->n; i++) {
		struct shard *sh = &S->sh[i];
		uint32_t n = atomic_load_explicit(&sh->own_n, memory_order_acquire);
		for (; sh->own_told < n; sh->own_told++)
			S->own_addr_fn(S->own_addr_arg, sh->own[sh->own_told].family, sh->own[sh->own_told].addr);
	}
}

void rs_merge(struct gs_shards *S)
{
	rs_own_addrs(S);
	merge_now(S);
	atomic_store_explicit(&S->held, S->buffered, memory_order_relaxed);
}

/* Whether an engine handed a call over early (past the order window,
 * rs_write_early): one engine writes its earliest ended call then, the merge's
 * first (that one, or an earlier one handed over in order). */
static bool early_head(const struct gs_shards *S, const struct gs_call *const *heads)
{
	for (unsigned k = 0; k < S->n; k++)
		if (heads[k] && slot(S, S->sh[k].q_head->k[S->sh[k].q_pos])->early)
			return true;
	return false;
}

static void merge_now(struct gs_shards *S)
{
	const struct gs_call *heads[GS_MAX_THREADS];
	int64_t floors[GS_MAX_THREADS];
	uint64_t waiting = 0;
	for (unsigned i = 0; i < S->n; i++) {
		/* the floor first: the calls before it are in the ring then */
		floors[i] = atomic_load_explicit(&S->sh[i].floor, memory_order_acquire);
		waiting += atomic_load_explicit(&S->sh[i].queued, memory_order_relaxed);
		rs_pull(&S->sh[i]);
		heads[i] = head(&S->sh[i]);
		S->sh[i].relieved = false;
	}
	/* One engine writes the earliest call early once more than the window
	 * wait, at a moment the merge cannot tell exactly: near it, say so */
	if (S->ordered && waiting + S->buffered > S->window - S->window / 8)
		S->window_full = true;
	if (!S->ordered) {
		/* the summary alone: nothing depends on the order (cmd_read.c) */
		for (unsigned i = 0; i < S->n; i++)
			while (head(&S->sh[i]))
				emit(S, &S->sh[i]);
		return;
	}
	for (;;) {
		bool ready;
		int i = gs_call_merge_pick(heads, floors, S->n, &ready);
		bool starved = false;
		/* the calls waiting, in the merge and in the engines' queues, are
		 * bounded as one engine's are: past the window the earliest goes
		 * (an engine handed it over early: rs_write_early), and past it by a
		 * quarter the merge's first anyway */
		bool full = i >= 0 && (early_head(S, heads) || S->buffered + waiting > S->window + S->window / 4);
		if (i >= 0 && !ready && !full) {
			/* an engine whose batches of calls are all here waits for
			 * one back: the earliest goes (out of order, said) */
			for (unsigned k = 0; k < S->n; k++)
				starved |= atomic_load(&S->sh[k].starved) && !S->sh[k].relieved;
			if (starved)
				S->window_full = true;
		}
		if (i < 0 || (!ready && !full && !starved))
			break;
		emit(S, &S->sh[i]);
		heads[i] = head(&S->sh[i]);
	}
}
