/* SPDX-License-Identifier: BSD-2-Clause */
/* read --threads N: one reader, N engines (docs/output.md, "Threads").
 *
 * The reader (the caller's thread) hands every frame to gs_shards_frame: it
 * picks the engine of the frame's connection by a hash of its 4-tuple in
 * either direction (frames that are not TCP over IP, IP fragments included,
 * go to the first), copies it into that engine's batch and passes full
 * batches through bounded single-producer/single-consumer rings; a full ring
 * makes the reader wait (nothing is dropped).  Each engine thread feeds its
 * frames to an engine of its own, with the capture's packet numbers and
 * clock, and passes the calls it writes, in its order, back in batches.  The
 * reader merges those streams into the one-engine order (analysis/call_merge.h)
 * and hands each call to `fn` on its own thread, with an engine that holds
 * the names (gs_shards_engine), so the sinks run as with one engine.
 */
#ifndef GS_READ_SHARDS_H
#define GS_READ_SHARDS_H

#include <stdint.h>
#include "../analysis/engine.h"
#include "../analysis/stats.h"
#include "tap_pcap.h"

#define GS_MAX_THREADS 64

struct gs_shards;

/* The bounds of cfg are split over the n engines (connections, open calls,
 * held out-of-order bytes), the names table is one per engine.  0 or errno. */
int gs_shards_new(struct gs_shards **out, const struct gs_config *cfg, unsigned n, gs_call_fn fn, void *arg);
/* A gs_frame_fn (probe/tap_pcap.h): arg is the struct gs_shards. */
void gs_shards_frame(void *arg, int dlt, int64_t ts_ns, const uint8_t *data, uint32_t caplen, uint32_t wirelen);
/* Reads one capture file (as gs_pcap_read_file_fn, the same results and
 * messages): a classic file read into shared buffers, each walked once and
 * indexed by engine (probe/read_chunks.h), pcapng mapped, every engine
 * thread walking its records itself and taking its own connections'
 * (probe/pcap_walk.h); a file or the part of it the
 * walker does not vouch for goes through libpcap and gs_shards_frame. */
enum gs_read_result gs_shards_read_file(struct gs_shards *s, const char *path, struct gs_read_progress *prog,
					int *snaplen, char *err, size_t errlen);
/* The summary alone (no order, no other use of the calls): each engine adds
 * its calls to statistics of its own, grouped as `st` (by operation), which
 * are added into `st` at gs_shards_finish; `fn` is not called.  Before the
 * first file.  0 or errno. */
int gs_shards_summary_only(struct gs_shards *s, struct gs_stats *st);
/* Every engine finishes (gs_engine_finish), the last calls are merged and
 * handed over, the threads end; then gs_shards_engine holds the totals. */
void gs_shards_finish(struct gs_shards *s);
/* The engine the calls are handed with: the names of every shard; after
 * gs_shards_finish, the counters, time stamps and first problems of all. */
struct gs_engine *gs_shards_engine(struct gs_shards *s);
/* After gs_shards_finish: the names numbered as one engine numbers them (in
 * the order of the packets that brought them first), for gs_summary_write,
 * and the groups of `st` (by operation) renumbered to match. */
const struct gs_intern *gs_shards_summary_strings(struct gs_shards *s, struct gs_stats *st);
/* Whether a table bound was reached in an engine (each holds 1/n of it): the
 * output may then differ from one engine's. */
bool gs_shards_bound_hit(const struct gs_shards *s);
void gs_shards_free(struct gs_shards *s);

#endif
