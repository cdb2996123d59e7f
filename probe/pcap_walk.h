/* A capture file's records read in place (read --threads, probe/read_shards.c).
 *
 * The file is mapped once and every engine thread walks all of its records
 * itself, with no reader thread and no copy.  The walker reads the classic
 * pcap format (either byte order, micro- or nanosecond time stamps) and pcapng
 * (one section: SHB, one IDB with if_tsresol of 10^-0..10^-9, EPBs and SPBs;
 * NRB, ISB and other blocks skipped) and hands every record over as libpcap
 * does with nanosecond time stamps: the same time stamp, lengths and bytes.
 * It vouches only for what it knows libpcap reads the same way: at anything
 * else (a record cut short, a capture length above the snapshot length, a
 * time stamp out of range, a second section or interface, if_tsoffset, ...)
 * it stops, and libpcap reads the file from that record or block on
 * (read_shards.c; from the start when no record was walked), its errors
 * included.  Everything here is bounds-checked against the mapping.
 */
#ifndef GS_PCAP_WALK_H
#define GS_PCAP_WALK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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
	uint32_t nif;                  /* 0 or 1 */
	uint8_t res;                   /* its if_tsresol: 10^-res seconds */
};

struct gs_walk_rec {
	int64_t ts;           /* ns */
	const uint8_t *data;
	uint32_t caplen, len;
};

/* Sets `w` up over a mapped file whose libpcap handle said link type `dlt` and
 * snapshot length `snapshot`: 0, or -1 when the header is not one the walker
 * knows (the file is then libpcap's). */
int gs_walk_init(struct gs_walk *w, const uint8_t *base, size_t size, int dlt, uint32_t snapshot);
void gs_walk_start(const struct gs_walk *w, struct gs_walk_it *it);
/* The next record: 1, 0 at the end of the file, -1 at something the walker
 * does not vouch for (never after gs_walk_check said yes). */
int gs_walk_next(const struct gs_walk *w, struct gs_walk_it *it, struct gs_walk_rec *r);
/* Walks the whole file: true when every record and block is vouched for
 * (w->packets counted), false: the file is libpcap's. */
bool gs_walk_check(struct gs_walk *w);

#endif
