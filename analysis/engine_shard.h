/* SPDX-License-Identifier: BSD-2-Clause */
/* Several engines over one capture (read --threads, probe/read_shards.c).
 *
 * Connections are sharded over engines by their 4-tuple; each shard engine
 * sees its connections' packets in capture order, with the capture-wide
 * packet numbers and clock.  These helpers read what the merge of their
 * outputs needs and fold the shards' totals into one engine (the one the
 * sinks and the summary are given), so that the rest of `read` is the same
 * with one thread or several.
 */
#ifndef GS_ENGINE_SHARD_H
#define GS_ENGINE_SHARD_H

#include <stdint.h>
#include "engine.h"

/* The frame fed next is packet `no` (1-based, across files) of the capture. */
void gs_engine_set_packet_no(struct gs_engine *e, uint64_t no);

/* No call this engine writes from now on starts before the returned time
 * (t_request_first), as far as its order goes: the earliest of its open calls,
 * its ended calls waiting for their turn, the directions holding output back
 * and its clock (a call not begun yet begins with a later packet).
 * INT64_MAX when the engine has finished. */
int64_t gs_engine_order_floor(struct gs_engine *e);

/* Whether an engine writing its calls in order (calls.c's drain) would still
 * hold `c` back, a settled call it wrote with an order window of 0: an open
 * call or a message waiting for its start at or before c's start, or an
 * ended call of its queue before it in the output order. */
bool gs_engine_holds_back(struct gs_engine *e, const struct gs_call *c);

/* The earliest start of the ended calls the engine still holds (its queue),
 * INT64_MAX when none. */
int64_t gs_engine_ended_min(const struct gs_engine *e);

/* Sets the order window (from the engine's own thread, between frames). */
void gs_engine_set_order_window(struct gs_engine *e, uint32_t n);

/* Ended calls waiting for their turn in the output (the order window's count). */
uint32_t gs_engine_queued(const struct gs_engine *e);

/* Adds the counters of `src` to `dst` (every field is a count). */
void gs_counters_add(struct gs_counters *dst, const struct gs_counters *src);

/* Folds a finished shard into `dst` (an engine that saw no packet): counters
 * added, the first problems by packet number kept, the first and last time
 * stamps.  rows_out_of_order is the merge's to set (gs_engine_set_rows_ooo). */
void gs_engine_absorb(struct gs_engine *dst, const struct gs_engine *src);
void gs_engine_set_times(struct gs_engine *dst, int64_t first_ts, int64_t last_ts);
void gs_engine_set_rows_ooo(struct gs_engine *dst, uint64_t n);

/* The merged engine's strings, for the merge to intern the shards' names into. */
struct gs_intern *gs_engine_strings_rw(struct gs_engine *e);

#endif
