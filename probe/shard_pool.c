/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads: the pool of ended calls waiting for their turn (read_shards_impl.h). */
#include "read_shards_impl.h"

/* ---- the pool of waiting calls (every thread) ------------------------------ */


/* A run of free places for an engine: one the merge gave back, else new ones
 * (a chunk taken when the pool grows).  False: no memory. */
bool rs_pool_refill(struct shard *sh)
{
	struct gs_shards *S = sh->S;
	bool ok = true;
	pthread_mutex_lock(&S->pool_mu);
	if (S->n_runs > 0) {
		uint32_t k = S->runs[--S->n_runs];
		sh->free_head = k;
		sh->free_n = FREE_RUN;
	} else {
		uint32_t c = S->pool_hwm >> POOL_SHIFT;
		if (c >= POOL_CHUNKS || (!S->pool[c] && !(S->pool[c] = malloc(POOL_CHUNK * sizeof **S->pool)))) {
			ok = false;
		} else {
			/* the rest of the chunk (the hwm is a multiple of FREE_RUN) */
			uint32_t first = S->pool_hwm, n = FREE_RUN;
			for (uint32_t i = 0; i < n; i++)
				slot(S, first + i)->next_free = i + 1 < n ? first + i + 1 : NO_SLOT;
			S->pool_hwm += n;
			sh->free_head = first;
			sh->free_n = n;
		}
	}
	pthread_mutex_unlock(&S->pool_mu);
	return ok;
}

/* The merge's: a place written, free again (a run back to the pool when full). */
void rs_pool_put(struct gs_shards *S, uint32_t k)
{
	slot(S, k)->next_free = S->mfree_head;
	if (S->mfree_n == 0)
		S->mfree_tail = k;
	S->mfree_head = k;
	if (++S->mfree_n < FREE_RUN)
		return;
	pthread_mutex_lock(&S->pool_mu);
	if (S->n_runs == S->cap_runs) {
		uint32_t cap = S->cap_runs ? S->cap_runs * 2 : 64;
		uint32_t *nr = realloc(S->runs, cap * sizeof *nr);
		if (nr) {
			S->runs = nr;
			S->cap_runs = cap;
		}
	}
	if (S->n_runs < S->cap_runs) {
		S->runs[S->n_runs++] = S->mfree_head;
		S->mfree_head = NO_SLOT;
		S->mfree_n = 0;
	}
	pthread_mutex_unlock(&S->pool_mu);
	/* (no memory for the list of runs: the merge keeps its places) */
}
