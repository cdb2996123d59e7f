/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads: an engine thread (read_shards_impl.h): its frames, or its walk of the file
 * (pcapng mapped, classic from the shared chunks), and its calls kept in their order. */
#include "read_shards_impl.h"

/* ---- the engine threads ------------------------------------------------- */

/* Names interned since the last look get `key`: 2n for packet n, 2n - 1 for
 * the clock moving on just before it, 2n + 1 after it, UINT64_MAX while
 * finishing.  One engine numbers names in that order (the summary's ties). */
void rs_track(struct shard *sh, uint64_t key)
{
	uint32_t c = gs_engine_strings(sh->e)->count;
	while (sh->id_seen < c && sh->id_seen < sh->id_cap)
		sh->id_key[sh->id_seen++] = key;
}

static void out_push(struct shard *sh)
{
	if (!sh->cur_out || sh->cur_out->n == 0)
		return;
	/* the ring holds every batch there may be: never full.  The reader
	 * merges when it has room to (after a batch of frames, or waiting for
	 * one): no need to wake it for every batch of calls */
	gs_ring_push(&sh->out, sh->cur_out);
	sh->cur_out = NULL;
}

static struct out_batch *out_get(struct shard *sh)
{
	for (;;) {
		unsigned seen = gs_bell_seq(&sh->bell);
		struct out_batch *b = gs_ring_pop(&sh->out_back);
		if (!b && sh->out_alloc < sh->out_max && (b = malloc(sizeof *b)) != NULL)
			sh->out_alloc++;
		if (b) {
			atomic_store(&sh->starved, 0);
			b->n = 0;
			b->next = NULL;
			return b;
		}
		/* the merge gives batches back, writing calls early if it must
		 * (all of ours may be there waiting for another engine): it
		 * may be asleep */
		atomic_store(&sh->starved, 1);
		gs_bell_ring(&sh->S->bell);
		gs_bell_wait(&sh->bell, seen);
	}
}

/* The engine's order of its calls (calls.c: the output order, then its
 * serial): whether a comes before b. */
static bool held_before(const struct gs_shards *S, const struct hent *a, const struct hent *b)
{
	int c;
	if (a->t != b->t)
		return a->t < b->t;
	if ((c = gs_call_order_cmp(&slot(S, a->k)->c, &slot(S, b->k)->c)) != 0)
		return c < 0;
	return a->serial < b->serial;
}

static void heap_pop(struct shard *sh)
{
	const struct gs_shards *S = sh->S;
	struct hent k = sh->heap[--sh->heap_n];
	uint32_t i = 0, n = sh->heap_n;
	for (;;) {
		uint32_t c = 2 * i + 1;
		if (c >= n)
			break;
		if (c + 1 < n && held_before(S, &sh->heap[c + 1], &sh->heap[c]))
			c++;
		if (!held_before(S, &sh->heap[c], &k))
			break;
		sh->heap[i] = sh->heap[c];
		i = c;
	}
	if (n)
		sh->heap[i] = k;
}

/* The first waiting call: the run's first or the heap's, whichever comes
 * first (NULL: none); *in_run says which. */
static const struct hent *wait_top(const struct shard *sh, bool *in_run)
{
	const struct hent *r = sh->run_n ? &sh->run[sh->run_head] : NULL;
	const struct hent *h = sh->heap_n ? &sh->heap[0] : NULL;
	*in_run = r && (!h || held_before(sh->S, r, h));
	return *in_run ? r : h;
}

static void wait_pop(struct shard *sh, bool in_run)
{
	sh->top_ok = false;
	sh->n_wait--;
	if (in_run) {
		sh->run_head = (sh->run_head + 1) & (sh->run_cap - 1);
		sh->run_n--;
	} else {
		heap_pop(sh);
	}
}

/* An address the capture host sent from (engine.h, own_addr_fn), on this
 * engine's thread: published once for the merge's (rs_own_addrs). */
void rs_shard_own_addr(void *arg, uint8_t family, const uint8_t *addr)
{
	struct shard *sh = arg;
	uint32_t n = atomic_load_explicit(&sh->own_n, memory_order_relaxed);
	if (n >= GS_HOST_ADDRS_MAX || !gs_host_addrs_add(&sh->own_seen, family, addr))
		return; /* known, or more than the stage keeps (its set counts those) */
	memset(&sh->own[n], 0, sizeof sh->own[n]);
	sh->own[n].family = family;
	memcpy(sh->own[n].addr, addr, family == 4 ? 4 : 16);
	atomic_store_explicit(&sh->own_n, n + 1, memory_order_release);
}

void rs_shard_on_call(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	struct shard *sh = arg;
	const struct gs_shards *S = sh->S;
	struct hent h;
	uint32_t i;
	if (sh->has_st) {
		/* the summary alone: no call leaves the thread */
		gs_stats_add_call(&sh->st, gs_engine_strings(e), c);
		return;
	}
	if (sh->free_n == 0 && !rs_pool_refill(sh))
		abort(); /* no memory left for one call */
	h = (struct hent){ .t = c->t_request_first, .serial = c->serial, .k = sh->free_head };
	sh->free_head = slot(S, h.k)->next_free;
	sh->free_n--;
	slot(S, h.k)->c = *c;
	sh->n_wait++;
	sh->top_ok = false;
	if (sh->run_n == 0 || !held_before(S, &h, &sh->run[(sh->run_head + sh->run_n - 1) & (sh->run_cap - 1)])) {
		/* after the run's last: at its end (O(1), and the heap stays small) */
		if (sh->run_n == sh->run_cap) {
			uint32_t cap = sh->run_cap ? sh->run_cap * 2 : 1024;
			struct hent *nr = malloc(cap * sizeof *nr);
			if (!nr)
				abort();
			for (i = 0; i < sh->run_n; i++)
				nr[i] = sh->run[(sh->run_head + i) & (sh->run_cap - 1)];
			free(sh->run);
			sh->run = nr;
			sh->run_cap = cap;
			sh->run_head = 0;
		}
		sh->run[(sh->run_head + sh->run_n++) & (sh->run_cap - 1)] = h;
		return;
	}
	if (sh->heap_n == sh->heap_cap) {
		uint32_t cap = sh->heap_cap ? sh->heap_cap * 2 : 1024;
		struct hent *nh = realloc(sh->heap, cap * sizeof *nh);
		if (!nh)
			abort();
		sh->heap = nh;
		sh->heap_cap = cap;
	}
	for (i = sh->heap_n++; i > 0; i = (i - 1) / 2) {
		uint32_t up = (i - 1) / 2;
		if (!held_before(S, &h, &sh->heap[up]))
			break;
		sh->heap[i] = sh->heap[up];
	}
	sh->heap[i] = h;
}

/* Says the earliest ended call this engine holds (after each frame, a store
 * when it changed: write_early reads the others'). */
static void say_ended(struct shard *sh)
{
	int64_t t = gs_engine_ended_min(sh->e);
	if (sh->n_wait > 0) {
		if (!sh->top_ok) {
			sh->top = *wait_top(sh, &sh->top_in_run);
			sh->top_ok = true;
		}
		if (sh->top.t < t)
			t = sh->top.t;
	}
	if (t != sh->ended_said) {
		sh->ended_said = t;
		atomic_store_explicit(&sh->ended, t, memory_order_relaxed);
	}
}

/* Past the order window one engine writes its earliest ended call early:
 * the earliest of all the engines', so an engine writes its own first early
 * only while no other said it holds an earlier one (that one writes it), or
 * once the calls waiting went a quarter of the window past the budget (the
 * bound holds whatever the others do). */
bool rs_write_early(const struct shard *sh, int64_t t)
{
	const struct gs_shards *S = sh->S;
	uint32_t q = sh->n_wait + gs_engine_queued(sh->e);
	if (q <= sh->win)
		return false;
	if (q - sh->win > S->window / 4)
		return true;
	for (unsigned i = 0; i < S->n; i++)
		if (&S->sh[i] != sh && atomic_load_explicit(&S->sh[i].ended, memory_order_relaxed) < t)
			return false;
	return true;
}

/* The calls the engine would write now if it wrote them in order (after each
 * frame and tick, where calls.c's drain runs): the first while nothing the
 * engine holds comes before it; past the window left to it, the first anyway;
 * all when finishing. */
void rs_release(struct shard *sh, bool all)
{
	const struct gs_shards *S = sh->S;
	while (sh->n_wait > 0) {
		uint32_t k;
		bool early;
		/* (looked for again only when a call came or went: this runs
		 * after every frame while calls wait) */
		if (!sh->top_ok) {
			sh->top = *wait_top(sh, &sh->top_in_run);
			sh->top_ok = true;
		}
		k = sh->top.k;
		early = !all && S->ordered && gs_engine_holds_back(sh->e, &slot(S, k)->c);
		if (early && !rs_write_early(sh, sh->top.t))
			break;
		slot(S, k)->early = early;
		wait_pop(sh, sh->top_in_run);
		if (!sh->cur_out)
			sh->cur_out = out_get(sh);
		sh->cur_out->k[sh->cur_out->n++] = k;
		if (sh->cur_out->n == OUT_CALLS)
			out_push(sh);
	}
}

/* No call this engine hands over from now on starts before it (gs_engine_order_floor). */
static int64_t shard_floor(struct shard *sh)
{
	int64_t f = gs_engine_order_floor(sh->e);
	bool in_run;
	if (sh->n_wait > 0 && wait_top(sh, &in_run)->t < f)
		f = wait_top(sh, &in_run)->t;
	return f;
}

/* The ended calls waiting for their turn in this engine. */
static uint32_t shard_queued(struct shard *sh)
{
	return sh->n_wait + gs_engine_queued(sh->e);
}

/* The ended calls waiting for an earlier one, in the engines and in the
 * rs_merge, are bounded together as one engine's are (the order window, and the
 * memory it takes): an engine may queue what the others and the merge leave
 * of the window (looked at now and then: near the window the output may
 * differ, and says so). */
static void budget(struct shard *sh)
{
	struct gs_shards *S = sh->S;
	uint64_t used = atomic_load_explicit(&S->held, memory_order_relaxed);
	if (!S->ordered)
		return;
	for (unsigned i = 0; i < S->n; i++)
		if (&S->sh[i] != sh)
			used += atomic_load_explicit(&S->sh[i].queued, memory_order_relaxed);
	sh->win = used + 1 >= S->window ? 1 : (uint32_t)(S->window - used);
}

static void clock_to(struct shard *sh, int64_t t, uint64_t key)
{
	if (t > gs_engine_last_ts(sh->e)) {
		/* the other engines' frames moved the capture's clock: what one
		 * engine does then (holes given up, calls settled) happens here */
		gs_engine_tick(sh->e, t);
		rs_track(sh, key);
		rs_release(sh, false);
	}
}

/* One of this engine's records, `no` of the capture, the capture's clock
 * `before` it: the same calls in the same order whichever walk found it
 * (walk_file, walk_chunks). */
static inline void feed_own(struct shard *sh, int64_t before, uint64_t no, int dlt, int64_t ts, const uint8_t *data,
			    uint32_t caplen, uint32_t len, uint8_t dir)
{
	clock_to(sh, before, 2 * no - 1);
	gs_engine_set_packet_no(sh->e, no);
	if (dir == 2) /* pcapng's outbound flag: the capture host sent it (rs_shard_own_addr) */
		gs_engine_outgoing(sh->e, dlt, data, caplen, len);
	gs_engine_frame_dir(sh->e, dlt, ts, data, caplen, len);
	rs_track(sh, 2 * no);
	if (sh->n_wait)
		rs_release(sh, false);
	if (sh->S->ordered)
		say_ended(sh);
}

static uint32_t ring_count(struct gs_ring *r)
{
	return atomic_load(&r->tail) - atomic_load(&r->head);
}

/* ---- the walk: every engine reads the file itself (pcapng mapped, classic from the shared chunks) --- */


/* An engine whose walk ended holds no other back: where it stopped early (a
 * file cut short under the walks, a record the walker does not vouch for)
 * the others stop too, at their own next record, and must get there (an
 * engine waiting for it would wait for ever). */
static bool walked_all(const struct shard *o)
{
	return atomic_load_explicit(&o->walk_done, memory_order_acquire) != 0;
}

/* How far the engine furthest behind but this one is, among those still
 * walking, at its last step: its records and its offset (the MAX of each with
 * none). */
static void others_min(const struct shard *sh, uint64_t *no, size_t *off)
{
	*no = UINT64_MAX;
	*off = SIZE_MAX;
	for (unsigned i = 0; i < sh->S->n; i++) {
		const struct shard *o = &sh->S->sh[i];
		uint64_t w;
		size_t f;
		if (o == sh || walked_all(o))
			continue;
		w = atomic_load(&o->walked);
		f = atomic_load(&o->walked_off);
		if (w < *no)
			*no = w;
		if (f < *off)
			*off = f;
	}
}

/* The mapped pages stay given back behind the engine furthest behind
 * (rs_drop_behind): an engine more than DROP_LAG bytes ahead of another waits
 * for it, even for the summary alone (else a loaded machine keeping one
 * engine off its CPU would let the other map the file as it goes).  (The
 * shared chunks of a classic file hold the engine ahead within their 8 MiB
 * themselves; this keeps it within 4, where a buffer is seldom waited for.) */
#define DROP_LAG ((size_t)4 << 20)

static bool ahead(const struct shard *sh, uint64_t no, size_t off, uint64_t lag)
{
	uint64_t w;
	size_t o;
	if (gs_stop_requested || gs_walk_cut() || (sh->S->chunks && gs_chunks_cut(sh->S->chunks)))
		return false;
	others_min(sh, &w, &o);
	/* (the MAX with no other engine still walking: compared, never added to) */
	if (!sh->has_st && w != UINT64_MAX && no > w + lag)
		return true;
	return off > DROP_LAG && off - DROP_LAG > o;
}

/* The engines waiting for this one (walk_step) look again. */
static void wake_lagging(const struct shard *sh)
{
	for (unsigned i = 0; i < sh->S->n; i++)
		if (&sh->S->sh[i] != sh && atomic_load(&sh->S->sh[i].lagging))
			gs_bell_ring(&sh->S->sh[i].bell);
}

static void say_walked(struct shard *sh, uint64_t no, size_t off)
{
	atomic_store(&sh->walked_off, off);
	atomic_store(&sh->walked, no);
	/* the reader draws the progress line (it sleeps while the engines walk) */
	if (sh->S->progress && (no & (PROGRESS - 1)) == 0)
		gs_bell_ring(&sh->S->bell);
	wake_lagging(sh);
}

/* The calls so far to the rs_merge, with the floor behind them. */
static void hand_over(struct shard *sh)
{
	bool any = sh->cur_out && sh->cur_out->n > 0;
	if (sh->has_st)
		return;
	out_push(sh);
	atomic_store_explicit(&sh->queued, shard_queued(sh), memory_order_relaxed);
	say_ended(sh);
	atomic_store_explicit(&sh->floor, shard_floor(sh), memory_order_release);
	if (any)
		gs_bell_ring(&sh->S->bell);
}

static void walk_step(struct shard *sh, uint64_t no, int64_t now, size_t off)
{
	const struct gs_shards *S = sh->S;
	uint64_t lag;
	budget(sh);
	clock_to(sh, now, 2 * no + 1);
	hand_over(sh);
	say_walked(sh, no, off);
	/* Near the order window, the engines walk in step: one engine writes
	 * the earliest call early when the calls waiting at one packet exceed
	 * the window, and the calls waiting here are counted against the
	 * others' as they were at their last step (an engine ahead by LAG
	 * records adds calls the capture had not brought yet at theirs, and
	 * writes calls early that one engine kept in order) */
	lag = S->window > 0 && shard_queued(sh) + S->window / 4 > sh->win ? STEP : LAG;
	/* ahead of another engine: wait for it (it never waits for us then:
	 * each says how far it is before it waits) */
	while (ahead(sh, no, off, lag)) {
		unsigned seen = gs_bell_seq(&sh->bell);
		atomic_store(&sh->lagging, 1);
		if (ahead(sh, no, off, lag))
			gs_bell_wait(&sh->bell, seen);
		atomic_store(&sh->lagging, 0);
	}
}

/* Gives back the mapped pages behind the engine furthest behind (each at
 * its last step, this one at `off`), once, by whichever engine gets there
 * first.  (Each giving back the pages behind itself, a page the other had
 * still to walk would be mapped again, by a fault, and given back twice,
 * each time with the other CPU's TLB flushed by an interrupt.)  So that the pages mapped stay few, an engine waits while it
 * is more than DROP_LAG bytes ahead of another (walk_step).  The pages go
 * back DROP_STEP bytes at a time: each madvise interrupts the other CPUs
 * the engines run on to flush their TLBs, a cost by the call, not by the
 * page, so the steps are large. */
#define DROP_STEP ((size_t)2 << 20)
void rs_drop_behind(struct shard *sh, const struct gs_walk *w, size_t off)
{
	struct gs_shards *S = sh->S;
	size_t low, d, to;
	uint64_t no;
	others_min(sh, &no, &low);
	if (off < low)
		low = off;
	d = atomic_load(&S->dropped);
	if (low < d + GS_WALK_KEEP + DROP_STEP)
		return;
	to = (low - GS_WALK_KEEP) & ~(DROP_STEP - 1);
	/* the range is this engine's once it moved `dropped` on */
	if (atomic_compare_exchange_strong(&S->dropped, &d, to))
		gs_walk_give_back(w, d, to);
}

/* Before an engine waits for a buffer of the file (read_chunks.c): its
 * calls handed over and how far it is said, as at a step, so that neither
 * the merge nor an engine behind it waits for it in turn (ahead()). */
struct chunk_wait {
	struct shard *sh;
	uint64_t no;
};

static void chunk_wait(void *arg, size_t off)
{
	struct chunk_wait *cw = arg;
	hand_over(cw->sh);
	say_walked(cw->sh, cw->no, off);
}

/* walk_file for a classic file read into shared buffers (read_chunks.h):
 * the chunks' indexes give this engine its records, the capture's clock
 * before each, and the steps; the same calls into the engine, in the same
 * order, as walk_file's. */
static void walk_chunks(struct shard *sh, const struct in_batch *b)
{
	struct gs_shards *S = sh->S;
	const struct gs_walk *w = b->walk;
	unsigned me = (unsigned)(sh - S->sh);
	struct chunk_wait cw = { .sh = sh };
	struct gs_chunk_state st = { .no = b->total, .now = b->now, .first = b->first_ts };
	const struct gs_chunk *ch = NULL;
	size_t at = 0, off = w->first;
	int rc;
	bool cut;

	for (;;) {
		const struct gs_chunk_rec *rr, *re;
		const struct gs_chunk_step *sp, *se;
		cw.no = st.no;
		if (!(ch = gs_chunks_take(S->chunks, me, ch, &st, chunk_wait, &cw))) {
			rc = -1;  /* cut short */
			at = off;
			break;
		}
		rr = ch->rec + ch->rec_from[me];
		re = ch->rec + ch->rec_from[me + 1];
		sp = ch->step;
		se = sp + ch->steps;
		while (rr < re || sp < se) {
			if (rr < re && (sp == se || rr->i <= sp->i)) {
				struct gs_walk_rec r;
				uint64_t no = ch->in.no + rr->i + 1;
				/* (a few records ahead: not in order in the buffer) */
				if (re - rr > 4) {
					__builtin_prefetch(ch->buf + rr[4].off);
					__builtin_prefetch(ch->buf + rr[4].off + 64);
				}
				gs_chunk_rec_read(w, ch, rr, &r);
				feed_own(sh, rr->before, no, w->dlt, r.ts, r.data, r.caplen, r.len, 0);
				rr++;
			} else {
				uint64_t no = ch->in.no + sp->i + 1;
				off = ch->start + sp->off;
				walk_step(sh, no, sp->now, off);
				if (gs_stop_requested) {
					/* (the walk's state there: the step's) */
					st.no = no;
					st.now = sp->now;
					st.first = ch->in.first ? ch->in.first : ch->out.first;
					rc = -1;
					at = off;
					goto out;
				}
				sp++;
			}
		}
		st = ch->out;
		off = ch->next;
		if (ch->end != 1) {
			rc = ch->end;
			at = ch->next;
			break;
		}
	}
out:
	/* the buffers it was on are the others' */
	gs_chunks_done(S->chunks, me);
	cut = gs_chunks_cut(S->chunks);
	/* the capture's clock at the end of the walk, as a reader's tick after
	 * its last frame: an engine with few records of the file keeps up */
	if (!gs_stop_requested)
		clock_to(sh, st.now, 2 * st.no + 1);
	sh->res = (struct walk_res){ .no = st.no, .now = st.now, .first_ts = st.first, .stopped = rc != 0, .cut = cut,
				     .off = at };
	say_walked(sh, st.no, off);
	atomic_store_explicit(&sh->walk_done, 1, memory_order_release);
	/* done, it holds none back (walked_all): one waiting for it goes on */
	wake_lagging(sh);
}

/* Every record of the file: this engine's own (by the connection, as pick
 * says for the reader) into its engine, with the capture's packet numbers
 * and clock, counted as the reader counts them. */
static void walk_file(struct shard *sh, const struct in_batch *b)
{
	struct gs_shards *S = sh->S;
	const struct gs_walk *w = b->walk;
	unsigned me = (unsigned)(sh - S->sh);
	struct gs_walk_it it;
	struct gs_walk_rec r;
	uint64_t no = b->total;
	int64_t now = b->now, first = b->first_ts;
	size_t at;
	int rc;

	if (S->chunks) {
		walk_chunks(sh, b);
		return;
	}
	gs_walk_start(w, &it);
	for (;;) {
		int64_t before = now;
		at = it.off;
		/* (a record read from the zero pages of a file cut short is not
		 * handed over) */
		if ((rc = gs_walk_next(w, &it, &r)) != 1 || gs_walk_cut())
			break;
		no++;
		if (first == 0)
			first = r.ts;
		if (r.ts > now)
			now = r.ts;
		if (pick(S, w->dlt, r.data, r.caplen, r.len) == me)
			feed_own(sh, before, no, w->dlt, r.ts, r.data, r.caplen, r.len, r.dir);
		if ((no & (STEP - 1)) == 0) {
			rs_drop_behind(sh, w, it.off);
			walk_step(sh, no, now, it.off);
			if (gs_stop_requested) {
				rc = -1;
				at = it.off;
				break;
			}
		}
	}
	/* the capture's clock at the end of the walk, as a reader's tick after
	 * its last frame: an engine with few records of the file keeps up */
	if (!gs_stop_requested)
		clock_to(sh, now, 2 * no + 1);
	sh->res = (struct walk_res){ .no = no, .now = now, .first_ts = first, .stopped = rc != 0, .cut = gs_walk_cut(),
				     .off = at };
	say_walked(sh, no, it.off);
	atomic_store_explicit(&sh->walk_done, 1, memory_order_release);
	/* done, it holds none back (walked_all): one waiting for it goes on */
	wake_lagging(sh);
}

void *rs_shard_main(void *arg)
{
	struct shard *sh = arg;
	struct gs_engine *e = sh->e;
	for (;;) {
		unsigned seen = gs_bell_seq(&sh->bell);
		struct in_batch *b = gs_ring_pop(&sh->in);
		bool finish;
		if (!b) {
			gs_bell_wait(&sh->bell, seen);
			continue;
		}
		if (b->walk) {
			walk_file(sh, b);
			hand_over(sh);
			gs_ring_push(&sh->in_back, b);
			gs_bell_ring(&sh->S->bell);
			continue;
		}
		budget(sh);
		for (uint32_t off = 0; off < b->used;) {
			const struct in_ent *en = (const struct in_ent *)(const void *)(b->buf + off);
			off += (uint32_t)sizeof *en;
			if (en->caplen == TICK) {
				clock_to(sh, en->ts, 2 * en->no + 1);
				continue;
			}
			clock_to(sh, en->now, 2 * en->no - 1);
			gs_engine_set_packet_no(e, en->no);
			gs_engine_frame_dir(e, en->dlt, en->ts, b->buf + off, en->caplen, en->len);
			rs_track(sh, 2 * en->no);
			if (sh->n_wait)
				rs_release(sh, false);
			if (sh->S->ordered)
				say_ended(sh);
			off += (en->caplen + 7u) & ~7u;
		}
		finish = b->finish;
		if (finish) {
			clock_to(sh, b->now, 2 * b->total + 1);
			gs_engine_set_packet_no(e, b->total + 1);
			gs_engine_finish(e);
			rs_track(sh, UINT64_MAX);
			rs_release(sh, true);
		}
		out_push(sh);
		atomic_store_explicit(&sh->queued, finish ? 0 : shard_queued(sh), memory_order_relaxed);
		/* after the calls: whoever reads this floor finds them */
		if (finish)
			atomic_store_explicit(&sh->ended, INT64_MAX, memory_order_relaxed);
		else
			say_ended(sh);
		atomic_store_explicit(&sh->floor, finish ? INT64_MAX : shard_floor(sh), memory_order_release);
		gs_ring_push(&sh->in_back, b);
		/* a reader waiting for room is woken when half the batches are
		 * free (fewer sleeps and wake-ups than one a batch) */
		if (finish || ring_count(&sh->in_back) >= IN_BATCHES / 2)
			gs_bell_ring(&sh->S->bell);
		if (finish)
			return NULL;
	}
}
