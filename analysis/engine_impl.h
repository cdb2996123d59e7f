/* SPDX-License-Identifier: BSD-2-Clause */
/* The engine's composition: the stages' states it holds and wires together
 * (engine.c), and what the merge of several engines reads (engine_shard.c).
 * Included by those two alone: a stage sees only its own header and those
 * of the stages after it. */
#ifndef GS_ENGINE_IMPL_H
#define GS_ENGINE_IMPL_H

#include "engine.h"
#include "calls.h"
#include "evidence.h"
#include "flows.h"
#include "framer.h"
#include "pairing.h"
#include "pending.h"
#include "reasm.h"

struct gs_engine {
	struct gs_config cfg;
	struct gs_counters cnt;
	struct gs_intern strings;
	int64_t now, first_ts;
	uint64_t packet_no;
	struct gs_problem first_malformed, first_truncated;

	struct gs_flows fl;         /* flows.h */
	struct gs_reasm rs;         /* reasm.h */
	struct gs_framer fm;        /* framer.h */
	struct gs_pairing pr;       /* pairing.h */
	struct gs_evidence ev;      /* evidence.h */
	/* Directions whose bytes may still yield calls that started earlier than
	 * what is queued: held out-of-order data, a head not yet decoded, bytes the
	 * peer acknowledged but we lack.  They hold back ordered output. */
	struct gs_pending pend;
	int64_t last_expire_scan;

	struct gs_calls cs;         /* calls.h */
};

/* gs_calls_held (calls.h) with the connection read from the flow table at
 * constant offsets: every packet with calls queued asks it. */
static inline bool gs_engine_calls_held(const struct gs_engine *e)
{
	const struct gs_drain_hold *h = &e->cs.hold;
	const struct gs_flow *f;
	if (!gs_calls_hold_stands(&e->cs))
		return false;
	f = &e->fl.flows[h->flow];
	return f->c.in_use && f->c.gen == h->gen && f->dir[h->dir].r.ack_max < h->need;
}

#endif
