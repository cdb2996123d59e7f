/* read --threads: a classic pcap file read once into a few shared buffers,
 * walked by every engine thread (probe/read_shards.c).
 *
 * Why: with the file mapped, each engine walked every page of it, and the
 * kernel mapped each page by a fault and gave it back by madvise, flushing
 * the other CPU's TLB by an interrupt (session 10: ~16% of read --threads 2's
 * CPU time on def1m).  Here the file is read by pread, in chunks of
 * GS_CHUNK_BYTES into GS_CHUNK_SLOTS fixed buffers: whichever engine first
 * needs chunk k reads it, the others walk the same buffer from the CPU's
 * caches, and a buffer is reused once every engine still walking is past its
 * chunk.  The kernel's copy is paid once, as the bare libpcap loop pays it,
 * the memory is the buffers (bounded, whatever the file's size), and no page
 * is mapped or given back.
 *
 * A chunk starts at a record: chunk 1 at the file's first, chunk k + 1 at the
 * first record of chunk k that did not fit whole in it (each engine finds the
 * same one: the walk is the same bytes).  A chunk holds at least the
 * snapshot length and a record header, so a record the walker refuses at a
 * chunk's start is one it does not vouch for (libpcap reads on from it).
 * A read that comes back short of the size the file had when it was opened
 * means the file was cut short under the read (gs_chunks_cut).
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
#define GS_CHUNK_BYTES ((size_t)1 << 20)
#define GS_CHUNK_SLOTS 8u

struct gs_chunks;

/* One engine's place: its chunk and its walk of it. */
struct gs_chunk_it {
	uint64_t k;            /* the chunk (1-based), 0 before the first */
	size_t start;          /* its offset in the file */
	struct gs_walk w;      /* the chunk's bytes as a walk of their own */
	struct gs_walk_it it;
	bool have;
};

/* Called with nothing locked before an engine waits for a buffer (another
 * engine still walks the chunk in it): the engine says how far it is, so
 * that the one behind does not wait for it in turn. */
typedef void (*gs_chunk_wait_fn)(void *arg, size_t off);

/* For the mapped classic file `w` (its header read: byte order, time stamps,
 * snapshot length), read through `fd` (kept open by the caller), walked by
 * `engines` threads.  0 or errno; EINVAL: not a file for this reader (pcapng,
 * a snapshot length above a chunk). */
int gs_chunks_new(struct gs_chunks **out, int fd, const struct gs_walk *w, unsigned engines);
void gs_chunks_free(struct gs_chunks *c);
void gs_chunks_start(const struct gs_chunks *c, struct gs_chunk_it *ci);
/* Engine `me`'s next record, as gs_walk_next: 1, 0 at the end of the file,
 * -1 at a record the walker does not vouch for or at a cut (gs_chunks_cut),
 * *at then that record's offset in the file.  Inline within a chunk (read
 * --threads' per-record path), the next chunk in read_chunks.c. */
int gs_chunks_next_chunk(struct gs_chunks *c, unsigned me, struct gs_chunk_it *ci, struct gs_walk_rec *r,
			 size_t *at, gs_chunk_wait_fn wait_fn, void *arg);
static inline int gs_chunks_next(struct gs_chunks *c, unsigned me, struct gs_chunk_it *ci, struct gs_walk_rec *r,
				 size_t *at, gs_chunk_wait_fn wait_fn, void *arg)
{
	if (ci->have && gs_walk_next_classic_(&ci->w, &ci->it, r) == 1)
		return 1;
	return gs_chunks_next_chunk(c, me, ci, r, at, wait_fn, arg);
}
/* Engine `me` walks no more: the buffers it was on are free for the others. */
void gs_chunks_done(struct gs_chunks *c, unsigned me);
/* True once a read came back short: the file was cut short under the read. */
bool gs_chunks_cut(struct gs_chunks *c);
/* The offset in the file an engine reached. */
static inline size_t gs_chunk_off(const struct gs_chunk_it *ci)
{
	return ci->have ? ci->start + ci->it.off : ci->start;
}

#endif
