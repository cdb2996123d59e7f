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
/* Unmaps the file. */
void gs_walk_close(struct gs_walk *w);

#endif
