/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads: a classic pcap file read once into a few shared buffers,
 * each walked once, by every engine thread in turn (probe/read_shards.c).
 *
 * Why: with the file mapped, each engine would walk every page of it, and the
 * kernel would map each page by a fault and give it back by madvise, flushing
 * the other CPU's TLB by an interrupt; and each engine would walk and pick
 * every record, its own and the others', taking a branch it cannot foretell
 * on each (what both cost: docs/benchmarks.md, "Figures behind the code").
 * Here the file is read by pread, in chunks of GS_CHUNK_BYTES into
 * GS_CHUNK_SLOTS fixed buffers: whichever engine first
 * needs chunk k reads it and walks it once, noting each engine's records (an
 * index: offset, place, the capture's clock before it) and the places of the
 * steps (every STEP records: read_shards.c); every engine then reads only its
 * own records, from the CPU's caches.  A buffer is reused once every engine
 * still walking is past its chunk.  The kernel's copy is paid once, as the
 * bare libpcap loop pays it; the memory is the buffers and their indexes
 * (bounded, whatever the file's size); no page is mapped or given back.  The
 * engine ahead reads and indexes, which slows it: the work goes by itself to
 * whichever has time for it.  An engine taking chunk k reads and indexes
 * k + 1 first when nobody has yet: the engines in step, the second to come
 * to a chunk finds it ready instead of waiting for the other's read of it.
 *
 * A chunk starts at a record: chunk 1 at the file's first, chunk k + 1 at the
 * first record of chunk k that did not fit whole in it.  A chunk holds at
 * least the snapshot length and a record header, so a record the walker
 * refuses at a chunk's start is one it does not vouch for (libpcap reads on
 * from it).  A read that comes back short of the size the file had when it
 * was opened means the file was cut short under the read (gs_chunks_cut).
 *
 * Classic pcap only (pcapng's blocks keep the mapped walk).  One mutex and a
 * condition variable, taken once a chunk by each engine (a few thousand times
 * over a 1.6 GB file), not by the record. */
#ifndef GS_READ_CHUNKS_H
#define GS_READ_CHUNKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "pcap_walk.h"

/* 8 chunks of 1 MiB: the engine ahead is held within DROP_LAG (4 MiB,
 * read_shards.c) of the one behind, so it seldom waits for a buffer */
#ifndef GS_CHUNK_BYTES  /* (bench builds try others) */
#define GS_CHUNK_BYTES ((size_t)1 << 20)
#define GS_CHUNK_SLOTS 8u
#endif
/* Records of a chunk at most: each has a 16-byte header */
#define GS_CHUNK_RECS ((uint32_t)(GS_CHUNK_BYTES / 16))

struct gs_chunks;

/* An engine's record in a chunk. */
struct gs_chunk_rec {
	uint32_t off;        /* its header's offset in the chunk */
	uint32_t i;          /* its place among the chunk's records (0-based) */
	int64_t before;      /* the capture's clock before it */
};

/* Every `step` records of the capture: after the chunk's record i, the
 * capture's clock and the offset in the chunk after it. */
struct gs_chunk_step {
	uint32_t i, off;
	int64_t now;
};

/* Where a walk is, between chunks: as at the end of the chunk before. */
struct gs_chunk_state {
	uint64_t no;         /* the capture's packets */
	int64_t now;         /* its clock (the latest time stamp) */
	int64_t first;       /* its first time stamp (0: none yet) */
};

/* A chunk read and indexed, as the engines read it (not changed while an
 * engine is on it). */
struct gs_chunk {
	uint64_t k;                       /* its number (1-based) */
	const uint8_t *buf;
	size_t start;                     /* its offset in the file */
	struct gs_chunk_state in, out;    /* before its first record, after its last */
	const struct gs_chunk_rec *rec;   /* each engine's records, in order: */
	const uint32_t *rec_from;         /* engine e's are rec[rec_from[e] .. rec_from[e + 1]) */
	const struct gs_chunk_step *step;
	uint32_t steps;
	int end;           /* 1: the next chunk starts at `next`; 0: the end of the file;
			    * -1: a record the walker does not vouch for, at `next` */
	size_t next;       /* in the file */
};

/* The engine of a record (read_shards.c's pick). */
typedef unsigned (*gs_chunk_pick_fn)(const void *arg, int dlt, const uint8_t *d, uint32_t caplen, uint32_t len);
/* Called with nothing locked before an engine waits for a buffer (another
 * engine still walks the chunk in it): the engine says how far it is, so
 * that the one behind does not wait for it in turn. */
typedef void (*gs_chunk_wait_fn)(void *arg, size_t off);

/* For the mapped classic file `w` (its header read: byte order, time stamps,
 * snapshot length), read through `fd` (kept open by the caller), walked by
 * `engines` threads, each record going to pick(pick_arg, ...), a step every
 * `step` records (a power of 2).  0 or errno; EINVAL: not a file for this
 * reader (pcapng, a snapshot length above a chunk). */
int gs_chunks_new(struct gs_chunks **out, int fd, const struct gs_walk *w, unsigned engines, uint64_t step,
		  gs_chunk_pick_fn pick, const void *pick_arg);
void gs_chunks_free(struct gs_chunks *c);
/* Engine `me`'s chunk after `prev` (NULL: the first, the walk's state before
 * it `st`; else prev's `out`), read and indexed by it or by another engine;
 * `prev` is then the others' (no longer read).  NULL: the file was cut short
 * there (gs_chunks_cut). */
const struct gs_chunk *gs_chunks_take(struct gs_chunks *c, unsigned me, const struct gs_chunk *prev,
				      const struct gs_chunk_state *st, gs_chunk_wait_fn wait_fn, void *arg);
/* Engine `me` walks no more: the buffers it was on are free for the others. */
void gs_chunks_done(struct gs_chunks *c, unsigned me);
/* True once a read came back short: the file was cut short under the read. */
bool gs_chunks_cut(struct gs_chunks *c);

/* Record `rc` of chunk `ch` as the walker read it (checked then). */
static inline void gs_chunk_rec_read(const struct gs_walk *w, const struct gs_chunk *ch, const struct gs_chunk_rec *rc,
				     struct gs_walk_rec *r)
{
	uint32_t h[4];
	int64_t frac;
	memcpy(h, ch->buf + rc->off, sizeof h);
	if (w->swapped) {
		h[0] = __builtin_bswap32(h[0]);
		h[1] = __builtin_bswap32(h[1]);
		h[2] = __builtin_bswap32(h[2]);
		h[3] = __builtin_bswap32(h[3]);
	}
	frac = (int32_t)h[1];
	if (w->micro)
		frac *= 1000;
	r->ts = (int64_t)((uint64_t)h[0] * 1000000000u + (uint64_t)frac);
	r->caplen = h[2];
	r->len = h[3];
	r->data = ch->buf + rc->off + 16;
}

#endif
