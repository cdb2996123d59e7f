/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads: what the parts of probe/read_shards.c share, private to them.  The parts,
 * one concern each:
 *   read_shards.c   a file (walked by the engines, or through the reader), set-up, the end
 *   shard_pool.c    the pool of ended calls waiting for their turn, shared by every thread
 *   shard_walk.c    an engine thread: its frames or its walk of the file, its calls in order
 *   shard_merge.c   the merge of the engines' calls into one order (the reader's thread)
 *   shard_reader.c  the reader: frames to their engine's batches, batches through the rings
 */
#ifndef GS_READ_SHARDS_IMPL_H
#define GS_READ_SHARDS_IMPL_H

#include "read_shards.h"
#include "../analysis/host_addrs.h"

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
	/* the capture host's addresses this engine's frames named (the capture's
	 * direction): noted on its thread, told to the nesting stage by the merge's
	 * (rs_own_addrs); appended only, published by own_n */
	struct gs_host_addrs own_seen;  /* the engine thread's: each address once */
	struct gs_endpoint own[GS_HOST_ADDRS_MAX];
	_Atomic uint32_t own_n;
	uint32_t own_told;              /* the merge's */
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
	void (*own_addr_fn)(void *arg, uint8_t family, const uint8_t *addr); /* the nesting stage's */
	void *own_addr_arg;
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

static inline struct held *slot(const struct gs_shards *S, uint32_t k)
{
	return &S->pool[k >> POOL_SHIFT][k & (POOL_CHUNK - 1)];
}

/* The engine of a frame's connection: from the flow table's own hash of the
 * connection (analysis/flow_hash.h: both directions alike).  Every engine
 * computes it for every record of a walk.  Addresses are 16 bytes, an IPv4
 * one in the first 4 (struct gs_ip). */
static inline unsigned shard_of_hash(const struct gs_shards *S, uint32_t h)
{
	return (unsigned)(((uint64_t)h * S->n) >> 32);
}
static inline unsigned shard_of(const struct gs_shards *S, const uint8_t *src, const uint8_t *dst, uint16_t sp, uint16_t dp,
			 uint8_t family)
{
	return shard_of_hash(S, gs_flow_hash(src, sp, dst, dp, family));
}

/* Every frame the decoder takes for a TCP segment goes to its connection's
 * engine; any other (not IP, not TCP, an IP fragment, broken) only counts,
 * wherever it goes: to the first.  Ethernet with IPv4 or IPv6 (no extension
 * header) and TCP is read here; anything else through the decoder. */
static inline unsigned pick(const struct gs_shards *S, int dlt, const uint8_t *d, uint32_t caplen, uint32_t len)
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

/* shard_pool.c: the pool of waiting calls */
bool rs_pool_refill(struct shard *sh);
void rs_pool_put(struct gs_shards *S, uint32_t k);
/* shard_walk.c: the engine threads and their walk */
void rs_track(struct shard *sh, uint64_t key);
void rs_shard_on_call(void *arg, const struct gs_engine *e, const struct gs_call *c);
void rs_shard_own_addr(void *arg, uint8_t family, const uint8_t *addr);
bool rs_write_early(const struct shard *sh, int64_t t);
void rs_release(struct shard *sh, bool all);
void rs_drop_behind(struct shard *sh, const struct gs_walk *w, size_t off);
void *rs_shard_main(void *arg);
/* shard_merge.c: the merge */
void rs_pull(struct shard *sh);
uint32_t rs_map_id(struct gs_shards *S, struct shard *sh, uint32_t id);
void rs_merge(struct gs_shards *S);
void rs_own_addrs(struct gs_shards *S);
/* shard_reader.c: the reader */
void rs_in_send(struct shard *sh);
struct in_batch *rs_in_get(struct gs_shards *S, struct shard *sh);

#endif
