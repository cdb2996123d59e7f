/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads N: one reader, N engines, one merged output (read_shards.h). */
#include "read_shards.h"

#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../analysis/call_merge.h"
#include "../analysis/engine_shard.h"
#include "../analysis/intern.h"
#include "../decoders/link.h"
#include "../decoders/packet.h"
#include "commands.h"
#include "../analysis/flow_hash.h"
#include "pcap_walk.h"
#include "read_chunks.h"
#include "spsc.h"
#include "tap_pcap.h"

/* Frames go over in batches of IN_BYTES (a larger frame gets a batch of its
 * own size), IN_BATCHES of them an engine; calls come back OUT_CALLS a batch
 * (their places in the pool). */
enum { IN_BYTES = 256 << 10, IN_BATCHES = 8, OUT_CALLS = 256 };
/* The calls that ended and wait for their turn are kept in one pool for all
 * the engines and the merge, in chunks of POOL_CHUNK taken as needed (at most
 * POOL_CHUNKS), so that the memory follows the most calls waiting at once,
 * wherever they wait (an engine's order or the merge).  Free places go from
 * the merge back to the engines FREE_RUN at a time. */
enum { POOL_SHIFT = 12, POOL_CHUNK = 1 << POOL_SHIFT, POOL_CHUNKS = 1 << 16, FREE_RUN = 256 };
#define NO_SLOT UINT32_MAX
/* The walk: every STEP records an engine ticks its clock, hands its calls
 * over and says how far it is; when the output is ordered it waits while it
 * is more than LAG records ahead of another (the calls the merge holds for
 * the one behind).  The summary alone needs no such wait: an engine that was
 * kept off its CPU holds the others up only past DROP_LAG bytes of the file
 * (the mapped pages behind it are kept for it). */
enum { STEP = 1024, LAG = 64 * 1024 };
/* The mapped pages more than GS_WALK_KEEP bytes behind the engine furthest
 * behind are given back (drop_behind), so that the mapping does not add the
 * file to the resident memory. */
#define TICK UINT32_MAX   /* an entry that only moves the clock */
/* The progress line moves every PROGRESS packets, as tap_pcap.c draws it */
#define PROGRESS ((uint64_t)1 << 16)

struct in_ent {
	uint64_t no;        /* packet number (1-based, across files); a tick: packets before it */
	int64_t ts;         /* the frame's time stamp; a tick: the capture's clock */
	int64_t now;        /* the capture's clock before this frame (the latest time stamp) */
	uint32_t caplen;    /* TICK: no frame */
	uint32_t len;
	int32_t dlt;
	uint32_t pad;
};

struct walk_res {
	uint64_t no;        /* the capture's packets after the walk */
	int64_t now, first_ts;
	bool stopped;       /* at a record the walker does not vouch for (or Ctrl-C) */
	bool cut;           /* the file was cut short under the walk (gs_walk_cut) */
	size_t off;         /* that record's offset */
};

struct in_batch {
	const struct gs_walk *walk;  /* not NULL: walk this file, no frames in the batch */
	uint32_t used, cap;
	bool finish;        /* the last one: finish the engine after it */
	uint64_t total;     /* with finish: the capture's packets; with walk: before the file */
	int64_t now;        /* with finish: the capture's clock; with walk: before the file */
	int64_t first_ts;   /* with walk: the capture's first time stamp so far (0: none) */
	uint8_t *buf;
};

struct out_batch {
	struct out_batch *next;
	uint32_t n;
	uint32_t k[OUT_CALLS];
};

/* An engine's call waiting in its heap: its start and serial kept with it
 * (most comparisons end there, without reading two calls). */
struct hent {
	int64_t t;
	uint32_t serial;
	uint32_t k;          /* its place in the pool */
};

/* A place in the pool: a call, or the next free place. */
struct held {
	struct gs_call c;
	uint32_t next_free;
	bool early;          /* handed over past the order window (write_early) */
};

struct shard {
	struct gs_shards *S;
	pthread_t th;
	bool started;
	struct gs_engine *e;
	struct gs_ring in, in_back;     /* frames to the engine, empty batches back */
	struct gs_ring out, out_back;   /* calls from the engine, empty batches back */
	struct gs_bell bell;            /* the engine thread sleeps on it */
	bool bell_ok;
	_Atomic int64_t floor;          /* shard_floor after the last batch */
	_Atomic int64_t ended;          /* the earliest ended call it holds (say_ended) */
	_Atomic uint32_t queued;        /* shard_queued then */
	_Atomic int starved;            /* waiting for a batch of calls back */
	_Atomic uint64_t walked;        /* the walk: packets of the capture walked */
	_Atomic size_t walked_off;      /* the walk: the file offset reached */
	_Atomic int lagging;            /* waiting for another engine's walk */
	_Atomic int walk_done;          /* the walk's result is in `res` */
	struct walk_res res;
	struct gs_stats st;             /* summary only: this engine's statistics */
	bool has_st;
	/* the engine thread's */
	struct out_batch *cur_out;
	uint32_t out_alloc, out_max;
	/* the engine writes each call once settled (an order window of 0); the
	 * calls it wrote wait here (their places in a heap, by the output
	 * order) for the moment it would write them in order (release) */
	struct hent *heap;
	uint32_t heap_n, heap_cap;
	/* most calls come in their order: those after the last one in a run (a
	 * ring, in order), only the others in the heap */
	struct hent *run;
	uint32_t run_head, run_n, run_cap;
	uint32_t n_wait;                /* heap_n + run_n */
	struct hent top;                /* the first of them, when top_ok (release) */
	bool top_in_run, top_ok;
	uint32_t win;                   /* the order window left to this engine (budget) */
	uint32_t free_head, free_n;     /* free places taken from the pool */
	int64_t ended_said;             /* the last `ended` stored */
	uint64_t *id_key;               /* name id -> when it was first interned (see track) */
	uint32_t id_seen, id_cap;
	/* the reader's */
	struct in_batch *cur_in;
	struct in_batch batches[IN_BATCHES];
	struct out_batch *q_head, *q_tail;  /* calls received, in the engine's order */
	uint32_t q_pos;
	bool relieved;                  /* the merge gave a batch back since it looked */
	uint32_t *idmap;                /* the engine's name id -> merged id + 1, 0: not yet */
};

struct gs_shards {
	unsigned n;
	struct shard *sh;
	gs_call_fn fn;
	void *arg;
	struct gs_engine *merged;       /* the names, then the totals */
	struct gs_bell bell;            /* the reader sleeps on it */
	uint64_t packets;
	int64_t now, first_ts;
	uint64_t buffered, window;      /* calls received not written yet; the order window */
	/* the pool (see POOL_CHUNK): chunks and runs of free places under pool_mu */
	pthread_mutex_t pool_mu;
	bool pool_mu_ok;
	struct held **pool;
	uint32_t pool_hwm;
	uint32_t *runs, n_runs, cap_runs;    /* free runs: their first places */
	uint32_t mfree_head, mfree_tail, mfree_n;  /* the merge's places freed, not yet a run */
	_Atomic uint64_t held;          /* `buffered` after the last merge, for the engines */
	int64_t last_t;
	uint64_t ooo;
	bool ordered, finished;
	bool window_full;               /* the calls waiting came near the order window */
	bool progress;                  /* a progress line is drawn: engines ring every PROGRESS records */
	_Atomic size_t dropped;         /* the walk: the mapped pages before it were given back (drop_behind) */
	struct gs_chunks *chunks;       /* the walk of a classic file: read into shared buffers, not mapped */
	struct gs_intern final;
	bool has_final;
	struct gs_stats *dst_stats;     /* summary only: the engines' statistics go there at the end */
	uint32_t merge_shard;           /* gs_stats_merge's key map: from this shard */
};

/* ---- the pool of waiting calls (every thread) ------------------------------ */

static struct held *slot(const struct gs_shards *S, uint32_t k)
{
	return &S->pool[k >> POOL_SHIFT][k & (POOL_CHUNK - 1)];
}

/* A run of free places for an engine: one the merge gave back, else new ones
 * (a chunk taken when the pool grows).  False: no memory. */
static bool pool_refill(struct shard *sh)
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
static void pool_put(struct gs_shards *S, uint32_t k)
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

/* ---- the engine threads ------------------------------------------------- */

/* Names interned since the last look get `key`: 2n for packet n, 2n - 1 for
 * the clock moving on just before it, 2n + 1 after it, UINT64_MAX while
 * finishing.  One engine numbers names in that order (the summary's ties). */
static void track(struct shard *sh, uint64_t key)
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

static void shard_on_call(void *arg, const struct gs_engine *e, const struct gs_call *c)
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
	if (sh->free_n == 0 && !pool_refill(sh))
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
static bool write_early(const struct shard *sh, int64_t t)
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
static void release(struct shard *sh, bool all)
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
		if (early && !write_early(sh, sh->top.t))
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
 * merge, are bounded together as one engine's are (the order window, and the
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
		track(sh, key);
		release(sh, false);
	}
}

/* One of this engine's records, `no` of the capture, the capture's clock
 * `before` it: the same calls in the same order whichever walk found it
 * (walk_file, walk_chunks). */
static inline void feed_own(struct shard *sh, int64_t before, uint64_t no, int dlt, int64_t ts, const uint8_t *data,
			    uint32_t caplen, uint32_t len)
{
	clock_to(sh, before, 2 * no - 1);
	gs_engine_set_packet_no(sh->e, no);
	gs_engine_frame(sh->e, dlt, ts, data, caplen, len);
	track(sh, 2 * no);
	if (sh->n_wait)
		release(sh, false);
	if (sh->S->ordered)
		say_ended(sh);
}

static uint32_t ring_count(struct gs_ring *r)
{
	return atomic_load(&r->tail) - atomic_load(&r->head);
}

/* ---- the walk: every engine reads the file itself (pcapng mapped, classic from the shared chunks) --- */

static unsigned pick(const struct gs_shards *S, int dlt, const uint8_t *d, uint32_t caplen, uint32_t len);

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
 * (drop_behind): an engine more than DROP_LAG bytes ahead of another waits
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

/* The calls so far to the merge, with the floor behind them. */
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
static void drop_behind(struct shard *sh, const struct gs_walk *w, size_t off)
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
				feed_own(sh, rr->before, no, w->dlt, r.ts, r.data, r.caplen, r.len);
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
			feed_own(sh, before, no, w->dlt, r.ts, r.data, r.caplen, r.len);
		if ((no & (STEP - 1)) == 0) {
			drop_behind(sh, w, it.off);
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

static void *shard_main(void *arg)
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
			gs_engine_frame(e, en->dlt, en->ts, b->buf + off, en->caplen, en->len);
			track(sh, 2 * en->no);
			if (sh->n_wait)
				release(sh, false);
			if (sh->S->ordered)
				say_ended(sh);
			off += (en->caplen + 7u) & ~7u;
		}
		finish = b->finish;
		if (finish) {
			clock_to(sh, b->now, 2 * b->total + 1);
			gs_engine_set_packet_no(e, b->total + 1);
			gs_engine_finish(e);
			track(sh, UINT64_MAX);
			release(sh, true);
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

/* ---- the merge (on the reader's thread) ---------------------------------- */

static void pull(struct shard *sh)
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

static uint32_t map_id(struct gs_shards *S, struct shard *sh, uint32_t id)
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
	c.op = map_id(S, sh, c.op);
	c.object_key = map_id(S, sh, c.object_key);
	c.exception = map_id(S, sh, c.exception);
	c.queued_op = map_id(S, sh, c.queued_op);
	if (c.t_request_first < S->last_t)
		S->ooo++;
	else
		S->last_t = c.t_request_first;
	if (S->fn)
		S->fn(S->arg, S->merged, &c);
	S->buffered--;
	pool_put(S, k);
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

static void merge(struct gs_shards *S)
{
	merge_now(S);
	atomic_store_explicit(&S->held, S->buffered, memory_order_relaxed);
}

/* Whether an engine handed a call over early (past the order window,
 * write_early): one engine writes its earliest ended call then, the merge's
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
		pull(&S->sh[i]);
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
		 * (an engine handed it over early: write_early), and past it by a
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

/* ---- the reader ----------------------------------------------------------- */

static void in_send(struct shard *sh)
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
		in_send(sh);
	}
}

static struct in_batch *in_get(struct gs_shards *S, struct shard *sh)
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
		merge(S);
		if ((b = gs_ring_pop(&sh->in_back)) != NULL) {
			b->used = 0;
			b->finish = false;
			b->walk = NULL;
			return b;
		}
		gs_bell_wait(&S->bell, seen);
	}
}

/* The engine of a frame's connection: from the flow table's own hash of the
 * connection (analysis/flow_hash.h: both directions alike).  Every engine
 * computes it for every record of a walk.  Addresses are 16 bytes, an IPv4
 * one in the first 4 (struct gs_ip). */
static unsigned shard_of_hash(const struct gs_shards *S, uint32_t h)
{
	return (unsigned)(((uint64_t)h * S->n) >> 32);
}
static unsigned shard_of(const struct gs_shards *S, const uint8_t *src, const uint8_t *dst, uint16_t sp, uint16_t dp,
			 uint8_t family)
{
	return shard_of_hash(S, gs_flow_hash(src, sp, dst, dp, family));
}

/* Every frame the decoder takes for a TCP segment goes to its connection's
 * engine; any other (not IP, not TCP, an IP fragment, broken) only counts,
 * wherever it goes: to the first.  Ethernet with IPv4 or IPv6 (no extension
 * header) and TCP is read here; anything else through the decoder. */
static unsigned pick(const struct gs_shards *S, int dlt, const uint8_t *d, uint32_t caplen, uint32_t len)
{
	struct gs_packet pk;
	enum gs_layer layer;
	if (S->n == 1)
		return 0;
	if (dlt == GS_DLT_EN10MB && caplen >= 14 + 20 + 4) {
		unsigned type = (unsigned)d[12] << 8 | d[13];
		if (type == 0x0800 && (d[14] >> 4) == 4 && (d[14] & 15) >= 5) {
			unsigned ihl = (d[14] & 15u) * 4;
			if (((d[20] & 0x3f) | d[21]) != 0 || d[23] != 6)
				return 0; /* a fragment, or not TCP */
			/* the addresses hashed in place (gs_flow_hash_v4 = gs_flow_hash
			 * of the zero-padded copies: test_flow_hash_v4) */
			if (14 + ihl + 4 <= caplen)
				return shard_of_hash(S, gs_flow_hash_v4(d + 26, (uint16_t)(d[14 + ihl] << 8 | d[15 + ihl]),
									d + 30, (uint16_t)(d[16 + ihl] << 8 | d[17 + ihl])));
		} else if (type == 0x86dd && caplen >= 14 + 40 + 4 && (d[14] >> 4) == 6 && d[20] == 6) {
			return shard_of(S, d + 22, d + 38, (uint16_t)(d[54] << 8 | d[55]), (uint16_t)(d[56] << 8 | d[57]), 6);
		}
	}
	if (gs_packet_decode(dlt, d, caplen, len, &pk, &layer) != GS_DEC_OK)
		return 0;
	return shard_of(S, pk.ip.src, pk.ip.dst, pk.tcp.sport, pk.tcp.dport, pk.ip.family);
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
		in_send(sh);
		send_all(S);
		merge(S);
	}
	if (!sh->cur_in)
		sh->cur_in = in_get(S, sh);
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
		in_send(sh);
		sh->cur_in = in_get(S, sh);
		sh->cur_in->walk = &w;
		sh->cur_in->total = S->packets;
		sh->cur_in->now = S->now;
		sh->cur_in->first_ts = S->first_ts;
		in_send(sh);
	}
	for (;;) {
		unsigned seen = gs_bell_seq(&S->bell);
		merge(S);
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
	return map_id(S, &S->sh[S->merge_shard], key);
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
	 * (release()), so the tables leave that room to the pool: the calls
	 * held at once, open or waiting, stay about one engine's
	 * --max-open-calls (what gs_config_memory_bound counts), give or take
	 * the batches on their way to the merge */
	uint64_t room = cfg->ordered ? (cfg->order_window < cfg->max_open_calls / 2 ? cfg->order_window :
					cfg->max_open_calls / 2) : 0;
	sc.max_open_calls = (uint32_t)((cfg->max_open_calls - room) / n < 2 ? 2 : (cfg->max_open_calls - room) / n);
	sc.max_ooo_total = cfg->max_ooo_total / n;
	/* An engine may have out_max batches of calls out; when they are all in
	 * the merge, waiting for another engine, the merge holds more than its
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
		if ((err = gs_engine_new(&sh->e, &sc, shard_on_call, sh)) != 0 ||
		    (err = gs_ring_init(&sh->in, IN_BATCHES)) != 0 ||
		    (err = gs_ring_init(&sh->in_back, IN_BATCHES)) != 0 ||
		    (err = gs_ring_init(&sh->out, ring_cap)) != 0 ||
		    (err = gs_ring_init(&sh->out_back, ring_cap)) != 0)
			goto fail;
		/* The engine writes each call once settled (a window of 0:
		 * calls.c's drain does not wait for the order) and release()
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
		track(sh, 0); /* the empty name */
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
		if ((err = pthread_create(&S->sh[i].th, NULL, shard_main, &S->sh[i])) != 0)
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
		pull(sh);
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
			sh->cur_in = in_get(S, sh);
		sh->cur_in->finish = true;
		sh->cur_in->total = S->packets;
		sh->cur_in->now = S->now;
		in_send(sh);
	}
	for (;;) {
		unsigned seen = gs_bell_seq(&S->bell);
		merge(S);
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
