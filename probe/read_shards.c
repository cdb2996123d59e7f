/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads N: one reader, N engines, one merged output (read_shards.h): a file, the
 * set-up and the end; the other parts are named in read_shards_impl.h. */
#include "read_shards_impl.h"

/* ---- a file: walked by the engines, or through the reader ----------------- */

static bool walks_done(struct gs_shards *S)
{
	for (unsigned i = 0; i < S->n; i++)
		if (!atomic_load_explicit(&S->sh[i].walk_done, memory_order_acquire))
			return false;
	return true;
}

/* The progress line while the engines walk, as one thread draws it: the
 * packets (a multiple of PROGRESS) and the offset the slowest engine reached. */
static void walk_progress(struct gs_shards *S, struct gs_read_progress *prog, const char *path,
			  const struct gs_walk *w, uint64_t before)
{
	uint64_t no = UINT64_MAX, shown;
	size_t off = SIZE_MAX;
	for (unsigned i = 0; i < S->n; i++) {
		uint64_t k = atomic_load(&S->sh[i].walked);
		size_t o = atomic_load(&S->sh[i].walked_off);
		no = k < no ? k : no;
		off = o < off ? o : off;
	}
	if (no <= before)
		return;
	shown = (no - before) & ~(PROGRESS - 1);
	if (shown == 0)
		return;
	prog->packets += shown;
	gs_read_progress_line(prog, path, (off_t)off, (off_t)w->size, false);
	prog->packets -= shown;
}

static unsigned chunk_pick(const void *arg, int dlt, const uint8_t *d, uint32_t caplen, uint32_t len)
{
	return pick(arg, dlt, d, caplen, len);
}

enum gs_read_result gs_shards_read_file(struct gs_shards *S, const char *path, struct gs_read_progress *prog,
					int *snaplen, char *err, size_t errlen)
{
	struct gs_walk w;
	struct walk_res res;
	uint64_t before = S->packets;
	int fd = -1;
	if (S->n == 1 || !gs_walk_open_file_fd(path, &w, &fd))
		return gs_pcap_read_file_fn(path, gs_shards_frame, S, prog, snaplen, err, errlen);
	/* a classic file is read into buffers the engines share (read_chunks.h);
	 * pcapng (or no memory for them) is walked mapped */
	if (gs_chunks_new(&S->chunks, fd, &w, S->n, STEP, chunk_pick, S) != 0) {
		S->chunks = NULL;
		close(fd);
		fd = -1;
	}
	S->progress = prog->enabled;
	/* every engine walks the whole file, after the frames it was given
	 * (each engine's offset at 0 before any starts: drop_behind reads them) */
	atomic_store(&S->dropped, 0);
	for (unsigned i = 0; i < S->n; i++) {
		atomic_store(&S->sh[i].walked, S->packets);
		atomic_store(&S->sh[i].walked_off, 0);
	}
	for (unsigned i = 0; i < S->n; i++) {
		struct shard *sh = &S->sh[i];
		rs_in_send(sh);
		sh->cur_in = rs_in_get(S, sh);
		sh->cur_in->walk = &w;
		sh->cur_in->total = S->packets;
		sh->cur_in->now = S->now;
		sh->cur_in->first_ts = S->first_ts;
		rs_in_send(sh);
	}
	for (;;) {
		unsigned seen = gs_bell_seq(&S->bell);
		rs_merge(S);
		/* (also at the end: one thread draws the line at its 65536th
		 * packet, however soon after it the file ends) */
		if (prog->enabled)
			walk_progress(S, prog, path, &w, before);
		if (walks_done(S))
			break;
		gs_bell_wait(&S->bell, seen);
	}
	/* each engine counted the same (Ctrl-C aside: then the furthest; a file
	 * cut short under the walk: the furthest an engine got) */
	res = S->sh[0].res;
	for (unsigned i = 0; i < S->n; i++) {
		struct walk_res *r = &S->sh[i].res;
		bool cut = res.cut || r->cut;
		atomic_store(&S->sh[i].walk_done, 0);
		if (r->no > res.no)
			res = *r;
		res.cut = cut;
	}
	gs_walk_close(&w);
	if (S->chunks) {
		gs_chunks_free(S->chunks);
		S->chunks = NULL;
		close(fd);
	}
	S->packets = res.no;
	S->now = res.now;
	S->first_ts = res.first_ts;
	if (snaplen)
		*snaplen = (int)w.snapshot;
	if (res.cut) {
		prog->packets += res.no - before;
		if (prog->enabled && prog->last_print_ns)
			gs_read_progress_line(prog, path, -1, 0, true);
		gs_read_cut_short(err, errlen, path, res.no);
		return GS_READ_BAD_INPUT;
	}
	if (res.stopped && !gs_stop_requested && res.no == before)
		/* nothing walked (the first blocks are libpcap's own): all of it */
		return gs_pcap_read_file_fn(path, gs_shards_frame, S, prog, snaplen, err, errlen);
	if (res.stopped && !gs_stop_requested) {
		/* a record the walker does not vouch for: libpcap reads on from it,
		 * its errors as without threads (it counts the progress line's
		 * packets on from the walk's last multiple of PROGRESS) */
		prog->packets += (res.no - before) & ~(PROGRESS - 1);
		return gs_pcap_read_file_from(path, (off_t)res.off, res.no - before, gs_shards_frame, S, prog, snaplen,
					      err, errlen);
	}
	prog->packets += res.no - before;
	if (prog->enabled && prog->last_print_ns)
		gs_read_progress_line(prog, path, -1, 0, true);
	return GS_READ_OK;
}

int gs_shards_summary_only(struct gs_shards *S, struct gs_stats *st)
{
	int err;
	for (unsigned i = 0; i < S->n; i++) {
		struct shard *sh = &S->sh[i];
		if ((err = gs_stats_init(&sh->st, st->max, st->max_keys)) != 0)
			return err;
		sh->has_st = true;
	}
	S->dst_stats = st;
	return 0;
}

static uint32_t stats_key(void *arg, uint32_t key)
{
	struct gs_shards *S = arg;
	return rs_map_id(S, &S->sh[S->merge_shard], key);
}

/* ---- set-up and the end ----------------------------------------------- */

int gs_shards_new(struct gs_shards **out, const struct gs_config *cfg, unsigned n, gs_call_fn fn, void *arg)
{
	struct gs_shards *S;
	struct gs_config sc = *cfg, mc = *cfg;
	uint64_t out_max;
	uint32_t ring_cap = 16;
	int err;

	*out = NULL;
	if (n < 1 || n > GS_MAX_THREADS)
		return EINVAL;
	S = calloc(1, sizeof *S);
	if (!S)
		return ENOMEM;
	S->sh = calloc(n, sizeof *S->sh);
	if (!S->sh) {
		free(S);
		return ENOMEM;
	}
	S->n = n;
	S->fn = fn;
	S->arg = arg;
	S->window = cfg->order_window;
	S->ordered = cfg->ordered;
	S->last_t = INT64_MIN;
	S->mfree_head = NO_SLOT;
	if ((err = gs_bell_init(&S->bell)) != 0) {
		free(S->sh);
		free(S);
		return err;
	}
	if ((err = pthread_mutex_init(&S->pool_mu, NULL)) != 0)
		goto fail;
	S->pool_mu_ok = true;
	/* (the chunks' pointers: 512 KiB of address space, touched as taken) */
	if (!(S->pool = calloc(POOL_CHUNKS, sizeof *S->pool))) {
		err = ENOMEM;
		goto fail;
	}
	/* the engine the sinks are given: names and totals only */
	mc.max_flows = 2;
	mc.max_open_calls = 2;
	mc.order_window = 1;
	if ((err = gs_engine_new(&S->merged, &mc, NULL, NULL)) != 0)
		goto fail;
	/* Each engine hands its calls over in order when the output is
	 * ordered: the merge needs each stream in order.  The bounds are split;
	 * each engine sees every name, so each has the whole names table. */
	sc.max_flows = cfg->max_flows / n < 2 ? 2 : cfg->max_flows / n;
	/* One engine keeps the ended calls waiting for their turn (the order
	 * window at most) in its call table; here they wait in the pool
	 * (rs_release()), so the tables leave that room to the pool: the calls
	 * held at once, open or waiting, stay about one engine's
	 * --max-open-calls (what gs_config_memory_bound counts), give or take
	 * the batches on their way to the merge */
	uint64_t room = cfg->ordered ? (cfg->order_window < cfg->max_open_calls / 2 ? cfg->order_window :
					cfg->max_open_calls / 2) : 0;
	sc.max_open_calls = (uint32_t)((cfg->max_open_calls - room) / n < 2 ? 2 : (cfg->max_open_calls - room) / n);
	sc.max_ooo_total = cfg->max_ooo_total / n;
	/* the engines run on threads of their own: each notes the host's addresses
	 * its frames name, the merge's thread tells the nesting stage (rs_own_addrs) */
	S->own_addr_fn = cfg->own_addr_fn;
	S->own_addr_arg = cfg->own_addr_arg;
	sc.own_addr_fn = cfg->own_addr_fn ? rs_shard_own_addr : NULL;
	mc.own_addr_fn = NULL;
	/* An engine may have out_max batches of calls out; when they are all in
	 * the rs_merge, waiting for another engine, the merge holds more than its
	 * window and writes the earliest: an engine never waits for ever */
	out_max = ((uint64_t)cfg->order_window + OUT_CALLS - 1) / OUT_CALLS + 2;
	if (out_max < 16)
		out_max = 16;
	if (out_max > (1u << 16))
		out_max = 1u << 16;
	if (S->window > (out_max - 2) * OUT_CALLS)
		S->window = (out_max - 2) * OUT_CALLS;
	while (ring_cap < out_max)
		ring_cap <<= 1;
	for (unsigned i = 0; i < n; i++) {
		struct shard *sh = &S->sh[i];
		sh->S = S;
		sh->out_max = (uint32_t)out_max;
		atomic_init(&sh->floor, INT64_MIN);
		atomic_init(&sh->ended, INT64_MAX);
		sh->ended_said = INT64_MAX;
		atomic_init(&sh->queued, 0);
		atomic_init(&sh->starved, 0);
		sc.own_addr_arg = sh;
		if ((err = gs_engine_new(&sh->e, &sc, rs_shard_on_call, sh)) != 0 ||
		    (err = gs_ring_init(&sh->in, IN_BATCHES)) != 0 ||
		    (err = gs_ring_init(&sh->in_back, IN_BATCHES)) != 0 ||
		    (err = gs_ring_init(&sh->out, ring_cap)) != 0 ||
		    (err = gs_ring_init(&sh->out_back, ring_cap)) != 0)
			goto fail;
		/* The engine writes each call once settled (a window of 0:
		 * calls.c's drain does not wait for the order) and rs_release()
		 * hands it over when the engine would have written it in order:
		 * its table holds no ended call waiting for its turn, those wait
		 * in the pool, whose memory follows the calls waiting at once in
		 * all engines and the merge together (the high-water marks of
		 * each engine's table do not add up) */
		if (cfg->ordered)
			gs_engine_set_order_window(sh->e, 0);
		sh->win = (uint32_t)S->window;
		sh->free_head = NO_SLOT;
		sh->id_cap = sc.max_strings + 1;
		sh->id_key = calloc(sh->id_cap, sizeof *sh->id_key);
		sh->idmap = calloc(sh->id_cap, sizeof *sh->idmap);
		if (!sh->id_key || !sh->idmap) {
			err = ENOMEM;
			goto fail;
		}
		rs_track(sh, 0); /* the empty name */
		for (unsigned k = 0; k < IN_BATCHES; k++) {
			sh->batches[k].cap = IN_BYTES;
			if (!(sh->batches[k].buf = malloc(IN_BYTES))) {
				err = ENOMEM;
				goto fail;
			}
			gs_ring_push(&sh->in_back, &sh->batches[k]);
		}
		if ((err = gs_bell_init(&sh->bell)) != 0)
			goto fail;
		sh->bell_ok = true;
	}
	for (unsigned i = 0; i < n; i++) {
		if ((err = pthread_create(&S->sh[i].th, NULL, rs_shard_main, &S->sh[i])) != 0)
			goto fail;
		S->sh[i].started = true;
	}
	*out = S;
	return 0;
fail:
	S->fn = NULL;
	gs_shards_free(S);
	return err;
}

static bool all_done(struct gs_shards *S)
{
	for (unsigned i = 0; i < S->n; i++) {
		struct shard *sh = &S->sh[i];
		if (sh->started && atomic_load_explicit(&sh->floor, memory_order_acquire) != INT64_MAX)
			return false;
		rs_pull(sh);
		if (sh->q_head)
			return false;
	}
	return true;
}

void gs_shards_finish(struct gs_shards *S)
{
	if (S->finished)
		return;
	for (unsigned i = 0; i < S->n; i++) {
		struct shard *sh = &S->sh[i];
		if (!sh->started)
			continue;
		if (!sh->cur_in)
			sh->cur_in = rs_in_get(S, sh);
		sh->cur_in->finish = true;
		sh->cur_in->total = S->packets;
		sh->cur_in->now = S->now;
		rs_in_send(sh);
	}
	for (;;) {
		unsigned seen = gs_bell_seq(&S->bell);
		rs_merge(S);
		if (all_done(S))
			break;
		gs_bell_wait(&S->bell, seen);
	}
	for (unsigned i = 0; i < S->n; i++) {
		if (S->sh[i].started)
			pthread_join(S->sh[i].th, NULL);
		S->sh[i].started = false;
		gs_engine_absorb(S->merged, S->sh[i].e);
		if (S->dst_stats && S->sh[i].has_st) {
			S->merge_shard = i;
			gs_stats_merge(S->dst_stats, &S->sh[i].st, stats_key, S);
		}
	}
	gs_engine_set_times(S->merged, S->first_ts, S->now);
	/* only an ordered output can be out of order (calls.c) */
	gs_engine_set_rows_ooo(S->merged, S->ordered ? S->ooo : 0);
	S->finished = true;
}

struct gs_engine *gs_shards_engine(struct gs_shards *S)
{
	return S->merged;
}

struct name_ref {
	uint64_t key;
	uint32_t shard, id;
};

static int name_ref_cmp(const void *a, const void *b)
{
	const struct name_ref *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->shard != y->shard)
		return x->shard < y->shard ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

const struct gs_intern *gs_shards_summary_strings(struct gs_shards *S, struct gs_stats *st)
{
	const struct gs_intern *m = gs_engine_strings(S->merged);
	struct name_ref *v;
	size_t n = 0, bytes = 1;
	if (S->has_final)
		return &S->final;
	for (unsigned i = 0; i < S->n; i++) {
		n += S->sh[i].id_seen;
		bytes += gs_engine_strings(S->sh[i].e)->used;
	}
	v = malloc((n ? n : 1) * sizeof *v);
	if (!v || gs_intern_init(&S->final, (uint32_t)n + 1, bytes) != 0) {
		free(v);
		return m; /* the merge's own numbering: only ties may come out otherwise */
	}
	S->has_final = true;
	n = 0;
	for (unsigned i = 0; i < S->n; i++)
		for (uint32_t id = 0; id < S->sh[i].id_seen; id++)
			v[n++] = (struct name_ref){ S->sh[i].id_key[id], i, id };
	qsort(v, n, sizeof *v, name_ref_cmp);
	for (size_t k = 0; k < n; k++) {
		size_t len;
		const char *p = gs_intern_get(gs_engine_strings(S->sh[v[k].shard].e), v[k].id, &len);
		gs_intern(&S->final, p, len);
	}
	free(v);
	if (st->by == GS_BY_OP) {
		for (uint32_t g = 0; g < st->n; g++) {
			size_t len;
			const char *p;
			if (st->groups[g].key == GS_NONE || st->groups[g].key == GS_INTERN_FULL)
				continue;
			p = gs_intern_get(m, st->groups[g].key, &len);
			st->groups[g].key = gs_intern(&S->final, p, len);
		}
	}
	return &S->final;
}

int64_t gs_shards_now(const struct gs_shards *S)
{
	return S->now;
}

uint64_t gs_shards_packets(const struct gs_shards *S)
{
	return S->packets;
}

bool gs_shards_bound_hit(const struct gs_shards *S)
{
	const struct gs_counters *c = gs_engine_counters(S->merged);
	return c->flows_evicted || c->open_calls_evicted || c->ooo_dropped_bytes || c->intern_refused ||
	       c->giop_head_pool_full || c->rows_out_of_order || S->window_full ||
	       (S->dst_stats && S->dst_stats->other != GS_NONE);
}

void gs_shards_free(struct gs_shards *S)
{
	if (!S)
		return;
	if (!S->finished) {
		bool any = false;
		for (unsigned i = 0; i < S->n; i++)
			any |= S->sh[i].started;
		S->fn = NULL; /* the calls are not wanted any more */
		if (any)
			gs_shards_finish(S);
	}
	for (unsigned i = 0; i < S->n; i++) {
		struct shard *sh = &S->sh[i];
		struct out_batch *b;
		while ((b = sh->q_head) != NULL) {
			sh->q_head = b->next;
			free(b);
		}
		while (sh->out.slot && (b = gs_ring_pop(&sh->out)) != NULL)
			free(b);
		while (sh->out_back.slot && (b = gs_ring_pop(&sh->out_back)) != NULL)
			free(b);
		free(sh->cur_out);
		for (unsigned k = 0; k < IN_BATCHES; k++)
			free(sh->batches[k].buf);
		gs_ring_free(&sh->in);
		gs_ring_free(&sh->in_back);
		gs_ring_free(&sh->out);
		gs_ring_free(&sh->out_back);
		if (sh->bell_ok)
			gs_bell_destroy(&sh->bell);
		gs_engine_free(sh->e);
		if (sh->has_st)
			gs_stats_free(&sh->st);
		free(sh->id_key);
		free(sh->idmap);
	}
	for (unsigned i = 0; i < S->n; i++) {
		free(S->sh[i].heap);
		free(S->sh[i].run);
	}
	if (S->pool)
		for (uint32_t c = 0; c < POOL_CHUNKS && S->pool[c]; c++)
			free(S->pool[c]);
	free(S->pool);
	free(S->runs);
	if (S->pool_mu_ok)
		pthread_mutex_destroy(&S->pool_mu);
	gs_engine_free(S->merged);
	if (S->has_final)
		gs_intern_free(&S->final);
	gs_bell_destroy(&S->bell);
	free(S->sh);
	free(S);
}
