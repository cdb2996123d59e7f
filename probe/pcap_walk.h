/* SPDX-License-Identifier: BSD-2-Clause */
/* A capture file's records read in place (read, probe/tap_pcap.c; read
 * --threads, probe/read_shards.c).
 *
 * The file is mapped once and walked with no copy: by the one-thread read of
 * pcapng, and with --threads by every engine thread, each all of its records,
 * with no reader thread (pcapng; a classic file is read into shared buffers
 * then, probe/read_chunks.h, each walked by this walker once).  The walker
 * reads the classic
 * pcap format (either byte order, micro- or nanosecond time stamps) and pcapng
 * (one section: SHB, one IDB with if_tsresol of 10^-0..10^-9, EPBs and SPBs;
 * NRB, ISB and other blocks skipped) and hands every record over as libpcap
 * does with nanosecond time stamps: the same time stamp, lengths and bytes.
 * It vouches only for what it knows libpcap reads the same way: at anything
 * else (a record cut short, a capture length above the snapshot length, a
 * time stamp out of range, a second section or interface, if_tsoffset, ...)
 * it stops, and libpcap reads the file from that record or block on
 * (tap_pcap.c, read_shards.c; from the start when no record was walked), its
 * errors included.  Everything here is bounds-checked against the mapping.
 */
#ifndef GS_PCAP_WALK_H
#define GS_PCAP_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

struct gs_walk {
	const uint8_t *base;
	size_t size;
	bool ng;              /* pcapng, else classic */
	bool swapped;         /* the file's byte order is not ours */
	bool micro;           /* classic: microsecond fractions */
	int dlt;              /* the link type (the header's, equal to libpcap's) */
	uint32_t snapshot;    /* libpcap's snapshot length (pcap_snapshot) */
	size_t first;         /* offset of the first record (classic) or block after the SHB */
	uint64_t packets;     /* after gs_walk_check: how many records */
};

/* Where a walk is: its offset and (pcapng) the interface seen. */
struct gs_walk_it {
	size_t off;
	size_t pf;                     /* the bytes before it were prefetched (gs_walk_ahead_) */
	uint32_t nif;                  /* 0 or 1 */
	uint8_t res;                   /* its if_tsresol: 10^-res seconds */
};

struct gs_walk_rec {
	int64_t ts;           /* ns */
	const uint8_t *data;
	uint32_t caplen, len;
	uint8_t dir;          /* pcapng epb_flags' direction: 0 not known, 1 inbound, 2 outbound */
};

/* Sets `w` up over a mapped file whose libpcap handle said link type `dlt` and
 * snapshot length `snapshot`: 0, or -1 when the header is not one the walker
 * knows (the file is then libpcap's). */
int gs_walk_init(struct gs_walk *w, const uint8_t *base, size_t size, int dlt, uint32_t snapshot);
void gs_walk_start(const struct gs_walk *w, struct gs_walk_it *it);
/* The next record: 1, 0 at the end of the file, -1 at something the walker
 * does not vouch for (never after gs_walk_check said yes).  Inline: the
 * classic format's record is a few loads and checks, fewer than a call's
 * cost (read's per-packet path); pcapng's blocks in pcap_walk.c. */
static inline int gs_walk_next(const struct gs_walk *w, struct gs_walk_it *it, struct gs_walk_rec *r);
int gs_walk_next_ng(const struct gs_walk *w, struct gs_walk_it *it, struct gs_walk_rec *r);
/* Walks the whole file: true when every record and block is vouched for
 * (w->packets counted), false: the file is libpcap's. */
bool gs_walk_check(struct gs_walk *w);

/* Mapping a file (pcap_walk_file.c, with libpcap). */
/* Maps the regular file `fd` read-only and sets `w` up over it, `dlt` and
 * `snap` being what libpcap's handle of it said (pcap_datalink,
 * pcap_snapshot); false (nothing mapped): the file is libpcap's (a link type
 * giopscope does not read, not a regular file, a header the walker does not
 * know, no mapping).  `fd` may be closed afterwards. */
bool gs_walk_map_fd(struct gs_walk *w, int fd, int dlt, int snap);
/* The same for `path` ("-" never), libpcap opening it first for its checks
 * of the header, link type and snapshot length. */
bool gs_walk_open_file(const char *path, struct gs_walk *w);
/* The same, the file left open in *keep (when true) for the caller to read
 * and close (read --threads' pread of a classic file: read_chunks.h). */
bool gs_walk_open_file_fd(const char *path, struct gs_walk *w, int *keep);
/* Unmaps the file. */
void gs_walk_close(struct gs_walk *w);
/* True once the mapped file was cut short under the walk (a SIGBUS on it,
 * turned into zero pages: pcap_walk_file.c): a walk tests it before it hands
 * each record over, and stops and says so.  The record being decoded when the
 * fault came may hold zeros past it (touching each record's pages first would
 * cost a miss per record on the bytes nobody reads: read --threads 5% slower).
 * Reset by the next mapping. */
bool gs_walk_cut(void);
/* Gives back the mapped pages more than GS_WALK_KEEP bytes behind offset
 * `off` of a walk, in steps of GS_WALK_DROP bytes (`*dropped`: how far they
 * were given back, 0 at the start), so that a walk's resident memory does not
 * grow with the file (a page given back is read in again if touched). */
#define GS_WALK_DROP ((size_t)256 << 10)
#define GS_WALK_KEEP ((size_t)256 << 10)
void gs_walk_drop_behind(const struct gs_walk *w, size_t off, size_t *dropped);
/* Gives back the mapped pages of [from, to), offsets that are multiples of
 * the page size. */
void gs_walk_give_back(const struct gs_walk *w, size_t from, size_t to);

/* ---- the classic format's record, inline ---------------------------------- */

/* How far ahead of a walk every cache line of the file is prefetched.  The
 * walk is a chain of dependent loads (each record's length says where the
 * next starts), one miss to memory a record when nothing is ahead of it, and
 * touching the lines in order costs a fraction of that (docs/benchmarks.md,
 * "the walk prefetches the file's lines ahead").  Prefetching each line a few
 * KiB ahead, in order, turns the chain's misses into hits; the engine's reads
 * of the packet then hit too.  (A
 * prefetch of a page not mapped yet is dropped, not a fault: past the
 * mapped pages the walk's own fault maps the next ones.) */
#define GS_WALK_AHEAD ((size_t)3 << 10)

static inline void gs_walk_ahead_(const uint8_t *base, size_t size, struct gs_walk_it *it, size_t off)
{
	size_t pf = it->pf, lim = off + GS_WALK_AHEAD;
	if (lim > size)
		lim = size;
	if (pf < off)
		pf = off & ~(size_t)63;  /* a record longer than the distance: on from its end */
	for (; pf < lim; pf += 64)
		__builtin_prefetch(base + pf);
	it->pf = pf;
}

/* A time stamp as the tap makes it of libpcap's (seconds, nanoseconds):
 * false where that would not be this plain sum (the file is libpcap's). */
static inline bool gs_walk_ts_(uint64_t sec, uint64_t frac, int64_t *ts)
{
	if (frac >= 1000000000u || sec > (uint64_t)(INT64_MAX / 1000000000 - 1))
		return false;
	*ts = (int64_t)(sec * 1000000000u + frac);
	return true;
}

static inline int gs_walk_next_classic_(const struct gs_walk *w, struct gs_walk_it *it, struct gs_walk_rec *r)
{
	/* (the walk's fields read once, before anything is stored through
	 * `it` or `r`, which the compiler must otherwise assume alias them) */
	const uint8_t *base = w->base;
	size_t off = it->off, size = w->size, left = size - off;
	uint32_t h[4], caplen;
	int64_t frac;
	if (left < 16)
		return left == 0 ? 0 : -1;
	/* seconds, fraction, captured length, length */
	memcpy(h, base + off, sizeof h);
	if (w->swapped) {
		h[0] = __builtin_bswap32(h[0]);
		h[1] = __builtin_bswap32(h[1]);
		h[2] = __builtin_bswap32(h[2]);
		h[3] = __builtin_bswap32(h[3]);
	}
	caplen = h[2];
	if (caplen > w->snapshot || caplen > left - 16)
		return -1;
	/* libpcap: the seconds a signed 32-bit number (the tap reads them back
	 * unsigned: always in range), the fraction a signed one, microseconds
	 * times 1000 */
	frac = (int32_t)h[1];
	if (w->micro)
		frac *= 1000;
	if (!gs_walk_ts_(h[0], (uint64_t)frac, &r->ts))  /* (a negative one: above 10^9 unsigned) */
		return -1;
	r->caplen = caplen;
	r->len = h[3];
	r->dir = 0;
	r->data = base + off + 16;
	off += 16 + (size_t)caplen;
	it->off = off;
	gs_walk_ahead_(base, size, it, off);
	return 1;
}

static inline int gs_walk_next(const struct gs_walk *w, struct gs_walk_it *it, struct gs_walk_rec *r)
{
	return w->ng ? gs_walk_next_ng(w, it, r) : gs_walk_next_classic_(w, it, r);
}

#endif
