/* SPDX-License-Identifier: BSD-2-Clause */
/* The engine: one context holding every table, fed one frame at a time. */
#include "engine_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "table_mem.h"

void gs_config_default(struct gs_config *c)
{
	memset(c, 0, sizeof *c);
	c->max_flows = 65536;
	c->max_open_calls = 1u << 20;
	c->max_message_size = 256u << 20;
	c->max_ooo_bytes = 1u << 20;
	c->max_ooo_total = 64ull << 20;
	c->head_max = 4096;
	c->max_strings = 65536;
	c->linger_ns = 3000 * 1000 * 1000LL;
	c->reply_timeout_ns = 0;
	c->ordered = true;
	c->order_window = 131072;
	c->port_bitmap = NULL;
}

/* How many directions may hold a side table at once (a message log, a list of
 * retransmitted ranges, a head gathered across segments): an eighth of the
 * flow table, at least 256. Past it a direction goes without, and what that
 * costs is counted. */
static uint32_t side_tables_max(uint32_t max_flows)
{
	return max_flows / 8 < 256 ? 256 : max_flows / 8;
}

/* The bytes of each part (the arithmetic of gs_engine_new and of the side
 * tables' bound, side_tables_max). */
static uint64_t flows_bytes(const struct gs_config *c)
{
	uint64_t f = c->max_flows, slots = side_tables_max(c->max_flows);
	return f * (sizeof(struct gs_flow) + sizeof(struct gs_lru)) + (uint64_t)gs_table_pow2(f * 2) * sizeof(uint32_t) +
	       slots * (c->head_max + sizeof(uint32_t)) + slots * sizeof(struct gs_msglog) +
	       slots * GS_RTX_PENDING * sizeof(struct gs_range);
}

static uint64_t calls_bytes(const struct gs_config *c)
{
	uint64_t n = c->max_open_calls;
	return n * (sizeof(struct gs_ocall) + sizeof(struct gs_cext) + sizeof(struct gs_heap_ent)) +
	       (uint64_t)gs_table_pow2(n * 2) * sizeof(uint32_t);
}

static uint64_t strings_bytes(uint32_t max_strings)
{
	/* slots (a power of two >= 2n), offset, length, hash; 64 bytes of text a string */
	return (uint64_t)gs_table_pow2((uint64_t)max_strings * 2) * sizeof(uint32_t) + (uint64_t)max_strings * (3 * 4 + 64);
}

static uint64_t ooo_bytes(const struct gs_config *c)
{
	return c->max_ooo_total + c->max_ooo_total / 64 * sizeof(struct gs_ooo);
}

uint64_t gs_config_memory_bound(const struct gs_config *c)
{
	return flows_bytes(c) + calls_bytes(c) + strings_bytes(c->max_strings) + ooo_bytes(c);
}

/* The budget: a sixteenth to the strings, an eighth to held out-of-order
 * bytes, an eighth to connections (whose head pool, logs and range lists take
 * 256 slots at least: about 4 MiB), what is left to calls, lowered until the
 * whole fits (the index sizes jump by powers of two). */
int gs_config_for_memory(struct gs_config *c, uint64_t bytes)
{
	return gs_config_for_memory_beside(c, bytes, 0, 0);
}

/* The order window --max-memory gives max_open_calls calls (at most the default's). */
static uint32_t window_for(uint32_t max_open_calls, uint32_t dflt)
{
	uint32_t w = max_open_calls / 8 < 1 ? 1 : max_open_calls / 8;
	return w > dflt ? dflt : w;
}

int gs_config_for_memory_beside(struct gs_config *c, uint64_t bytes, uint64_t per_window, uint64_t fixed_beside)
{
	struct gs_config d;
	uint64_t per_flow, per_call, fixed, v;
	if (bytes < GS_MIN_MEMORY || bytes > (1ull << 50))
		return EINVAL;
	gs_config_default(&d);
	v = bytes / 16 / (76 + 16);
	c->max_strings = (uint32_t)(v < 256 ? 256 : v > d.max_strings ? d.max_strings : v);
	c->max_ooo_total = bytes / 8 * 64 / (64 + sizeof(struct gs_ooo));
	c->max_ooo_bytes = c->max_ooo_total < d.max_ooo_bytes ? (uint32_t)c->max_ooo_total : d.max_ooo_bytes;
	per_flow = sizeof(struct gs_flow) + sizeof(struct gs_lru) + 16 +
		   (c->head_max + sizeof(uint32_t) + sizeof(struct gs_msglog) + GS_RTX_PENDING * sizeof(struct gs_range)) / 8;
	v = bytes / 8 / per_flow;
	c->max_flows = (uint32_t)(v < 2 ? 2 : v > GS_MAX_FLOWS_LIMIT ? GS_MAX_FLOWS_LIMIT : v);
	fixed = flows_bytes(c) + strings_bytes(c->max_strings) + ooo_bytes(c) + fixed_beside;
	if (fixed >= bytes)
		return EINVAL;
	/* a call of the order window (one in eight open calls) held beside too */
	per_call = sizeof(struct gs_ocall) + sizeof(struct gs_cext) + sizeof(struct gs_heap_ent) + 16 + per_window / 8;
	v = (bytes - fixed) / per_call;
	for (;;) {
		if (v < 2)
			return EINVAL;
		c->max_open_calls = (uint32_t)(v > GS_MAX_OPEN_CALLS_LIMIT ? GS_MAX_OPEN_CALLS_LIMIT : v);
		c->order_window = window_for(c->max_open_calls, d.order_window);
		if (gs_config_memory_bound(c) + fixed_beside + (uint64_t)c->order_window * per_window <= bytes)
			break;
		v -= v / 16 + 1;
	}
	return 0;
}

/* For the pending list (pending.h): the earliest capture time of what
 * direction id holds back: bytes held out of order, a head still being
 * gathered, a hole the peer acknowledged. */
static int64_t dir_earliest(const void *arg, uint32_t id)
{
	const struct gs_engine *e = arg;
	const struct gs_reasm_dir *dr = &e->fl.flows[id >> 1].dir[id & 1].r;
	int64_t t = INT64_MAX;
	for (const struct gs_ooo *o = dr->ooo; o; o = o->next)
		if (o->ts < t)
			t = o->ts;
	if (dr->fs.fstate == GS_FR_MSG && !dr->fs.decoded && dr->fr.pr.msg.t_first < t)
		t = dr->fr.pr.msg.t_first;
	if (dr->acked_ts && dr->acked_ts < t)
		t = dr->acked_ts;
	return t;
}

/* For pairing (pairing.h): whether the direction whose pairing part is pd
 * holds bytes captured at or before t that it has not delivered yet (held
 * out of order, or a head still being gathered). */
static bool dir_holds_before(const void *arg, const struct gs_pair_dir *pd, int64_t t)
{
	const struct gs_reasm_dir *dr =
		(const struct gs_reasm_dir *)((const char *)pd - offsetof(struct gs_reasm_dir, fr.pr));
	(void)arg;
	if (dr->fs.fstate == GS_FR_MSG && !dr->fs.decoded && pd->msg.t_first <= t)
		return true;
	for (const struct gs_ooo *o = dr->ooo; o; o = o->next)
		if (o->ts <= t)
			return true;
	return false;
}

int gs_engine_new(struct gs_engine **out, const struct gs_config *cfg, gs_call_fn fn, void *arg)
{
	struct gs_engine *e;
	const ptrdiff_t stride = sizeof(struct gs_dir);
	int err;
	*out = NULL;
	if (cfg->max_flows < 2 || cfg->max_flows > GS_MAX_FLOWS_LIMIT || cfg->max_open_calls < 2 ||
	    cfg->max_open_calls > GS_MAX_OPEN_CALLS_LIMIT || cfg->head_max < 64 || cfg->head_max > (1u << 20))
		return EINVAL;
	e = calloc(1, sizeof *e);
	if (!e)
		return ENOMEM;
	e->cfg = *cfg;
	e->cs.emit = fn;
	e->cs.emit_arg = arg;
	e->cs.engine = e;
	e->cs.now = &e->now;
	e->cs.cnt = &e->cnt;
	e->cs.pend = &e->pend;
	e->cs.ordered = cfg->ordered;
	e->cs.order_window = cfg->order_window;
	e->cs.linger_ns = cfg->linger_ns;
	e->cs.last_emitted_t = INT64_MIN;
	e->ev.calls = &e->cs;
	e->ev.cnt = &e->cnt;
	/* each stage its state and where its output goes */
	e->pr = (struct gs_pairing){ .cs = &e->cs, .ev = &e->ev, .cnt = &e->cnt, .strings = &e->strings,
				     .dir_stride = stride, .side_max = side_tables_max(cfg->max_flows),
				     .holds_before = dir_holds_before, .arg = e };
	e->fm = (struct gs_framer){ .pr = &e->pr, .cnt = &e->cnt, .packet_no = &e->packet_no,
				    .first_malformed = &e->first_malformed, .first_truncated = &e->first_truncated,
				    .max_message_size = cfg->max_message_size, .heads_only = cfg->heads_only,
				    .dir_stride = stride };
	e->rs = (struct gs_reasm){ .fm = &e->fm, .pr = &e->pr, .ev = &e->ev, .cnt = &e->cnt, .now = &e->now,
				   .packet_no = &e->packet_no, .max_ooo_total = cfg->max_ooo_total,
				   .max_ooo_bytes = cfg->max_ooo_bytes, .dir_stride = stride };
	e->fl.pr = &e->pr;
	e->fl.rs = &e->rs;
	e->fl.fm = &e->fm;
	e->fl.pend = &e->pend;
	e->fl.cnt = &e->cnt;
	err = gs_intern_init(&e->strings, cfg->max_strings, (size_t)cfg->max_strings * 64);
	if (err) {
		free(e);
		return err;
	}
	err = gs_flows_init(&e->fl, cfg->max_flows);
	if (!err)
		err = gs_framer_init(&e->fm, side_tables_max(cfg->max_flows), cfg->head_max);
	if (!err)
		err = gs_calls_init(&e->cs, cfg->max_open_calls, cfg->ordered || cfg->reply_timeout_ns > 0);
	if (err) {
		gs_engine_free(e);
		return ENOMEM;
	}
	e->pend.head = GS_NONE;
	e->cs.fl = (struct gs_calls_flows){
		.base = (char *)e->fl.flows,
		.stride = sizeof(struct gs_flow),
		.in_use = offsetof(struct gs_flow, c.in_use),
		.gen = offsetof(struct gs_flow, c.gen),
		.list = offsetof(struct gs_flow, c.calls),
		.ep = { offsetof(struct gs_flow, c.ep[0]), offsetof(struct gs_flow, c.ep[1]) },
		.ack_max = { offsetof(struct gs_flow, dir[0].r.ack_max), offsetof(struct gs_flow, dir[1].r.ack_max) },
		.oc = { offsetof(struct gs_flow, dir[0].r.fr.pr.oc), offsetof(struct gs_flow, dir[1].r.fr.pr.oc) },
	};
	e->pend.links = (char *)e->fl.flows + offsetof(struct gs_flow, dir) + offsetof(struct gs_dir, pend);
	e->pend.flow_stride = sizeof(struct gs_flow);
	e->pend.dir_stride = sizeof(struct gs_dir);
	e->pend.earliest = dir_earliest;
	e->pend.arg = e;
	*out = e;
	return 0;
}

void gs_engine_free(struct gs_engine *e)
{
	if (!e)
		return;
	gs_flows_free(&e->fl);
	gs_framer_free(&e->fm);
	gs_calls_free(&e->cs);
	gs_intern_free(&e->strings);
	free(e);
}

/* A direction joins or leaves the pending list as it starts or stops holding
 * back output; replies parked for its requests are looked at again when it
 * stops (they will not find those requests now). */
static void pending_update(struct gs_engine *e, struct gs_flow *f, int d)
{
	struct gs_dir *dr = &f->dir[d];
	bool want = f->c.in_use && gs_dir_pending(dr);
	e->pend.dirty = true;
	if (want == dr->r.pending)
		return;
	if (want) {
		gs_dir_pend_insert(&e->fl, f, d);
		return;
	}
	gs_dir_pend_remove(&e->fl, f, d);
	gs_pair_unpark(&e->pr, &f->c, d);
}

/* Holes the peer acknowledged long enough ago are given up (reasm.c). */
static void pending_expire_all(struct gs_engine *e)
{
	uint32_t id = e->pend.head;
	while (id != GS_NONE) {
		struct gs_flow *f = &e->fl.flows[id >> 1];
		int d = (int)(id & 1);
		uint32_t next = f->dir[d].pend.next;
		gs_reasm_expire(&e->rs, &f->c, &f->dir[d].r, d);
		if (f->c.in_use)
			pending_update(e, f, d);
		id = next;
	}
}

static void count_decode_failure(struct gs_engine *e, enum gs_dec r, enum gs_layer layer)
{
	struct gs_counters *c = &e->cnt;
	if (r == GS_DEC_SKIP) {
		if (layer == GS_LAYER_LINK)
			c->non_ip++;
		else
			c->non_tcp++;
		return;
	}
	if (r == GS_DEC_TRUNCATED) {
		if (layer == GS_LAYER_LINK) c->link_truncated++;
		else if (layer == GS_LAYER_IP) c->ip_truncated++;
		else c->tcp_truncated++;
		return;
	}
	if (layer == GS_LAYER_LINK) c->link_invalid++;
	else if (layer == GS_LAYER_IP) c->ip_invalid++;
	else c->tcp_invalid++;
}

static bool port_wanted(const struct gs_engine *e, uint16_t port)
{
	return (e->cfg.port_bitmap[port >> 3] >> (port & 7)) & 1;
}

/* Every grace period of capture time, the holes of every pending direction
 * are looked at (per packet, and from the live tick when packets stop). */
static inline void expire_due(struct gs_engine *e)
{
	if (e->pend.count && e->now - e->last_expire_scan >= GS_ACK_GAP_GRACE_NS) {
		e->last_expire_scan = e->now;
		pending_expire_all(e);
	}
}

/* Nothing for the per-packet loop of packet() to do on this direction: no
 * hole acknowledged, nothing held, not pending and not about to be. */
static inline bool dir_quiet(const struct gs_dir *x)
{
	return !x->r.acked_ts && !x->r.ooo && !x->r.pending && !(x->r.fs.fstate == GS_FR_MSG && !x->r.fs.decoded);
}

/* Inlined into both callers: one call less per packet, and the decoded
 * packet stays on gs_engine_frame's stack without being passed by pointer. */
static inline __attribute__((always_inline)) void packet(struct gs_engine *e, const struct gs_packet *pk,
							  const struct gs_piece *pc, uint32_t npc, bool sparse);

void gs_engine_frame(struct gs_engine *e, int dlt, int64_t ts, const uint8_t *data,
		     uint32_t caplen, uint32_t wirelen)
{
	struct gs_packet pk;
	enum gs_layer layer;
	enum gs_dec r;

	e->packet_no++;
	e->cnt.packets++;
	e->cnt.bytes += wirelen;
	if (e->first_ts == 0)
		e->first_ts = ts;
	if (ts > e->now)
		e->now = ts;
	r = gs_packet_decode(dlt, data, caplen, wirelen, &pk, &layer);
	if (r != GS_DEC_OK) {
		if (r == GS_DEC_SKIP && layer == GS_LAYER_IP && pk.ip.fragment)
			e->cnt.ip_fragments++;
		else
			count_decode_failure(e, r, layer);
		return;
	}
	pk.ts_ns = ts;
	if (pk.ip.len_clamped)
		e->cnt.ip_len_clamped++;
	if (pk.payload_cap < pk.payload_len)
		e->cnt.payload_truncated++;
	packet(e, &pk, NULL, 0, false);
}

void gs_engine_outgoing(struct gs_engine *e, int dlt, const uint8_t *data, uint32_t caplen, uint32_t wirelen)
{
	struct gs_packet pk;
	enum gs_layer layer;
	/* the general decoder: a second caller of the inline one changes how gcc
	 * inlines gs_engine_frame (docs/benchmarks.md, issue 32) */
	if (e->cfg.own_addr_fn && gs_packet_decode_general(dlt, data, caplen, wirelen, &pk, &layer) == GS_DEC_OK)
		e->cfg.own_addr_fn(e->cfg.own_addr_arg, pk.ip.family, pk.ip.src);
}

/* A decoded segment; when `sparse` (gs_engine_segment), `pc` lists the payload
 * bytes there are. */
static inline __attribute__((always_inline)) void packet(struct gs_engine *e, const struct gs_packet *pk,
							  const struct gs_piece *pc, uint32_t npc, bool sparse)
{
	struct gs_flow *f;
	int d;
	bool created;
	uint32_t h, fno;
	int64_t ts = pk->ts_ns;

	if (e->cfg.port_bitmap && !port_wanted(e, pk->tcp.sport) && !port_wanted(e, pk->tcp.dport)) {
		if (pk->payload_len)
			e->cnt.ignored_segments++;
		return;
	}
	h = gs_flow_hash(pk->ip.src, pk->tcp.sport, pk->ip.dst, pk->tcp.dport, pk->ip.family);
	fno = gs_flow_front(&e->fl, pk, h, &d);
	created = false;
	if (fno) {
		f = &e->fl.flows[--fno];
	} else {
		f = gs_flow_lookup(&e->fl, pk, h, &d, pk->payload_len > 0 || (pk->tcp.flags & GS_TCP_SYN), &created);
		if (!f)
			return;
		fno = f->c.no;
	}
	if (created && e->cfg.port_bitmap)
		f->c.flags |= GS_FLOW_FORCED;
	/* A new SYN on a known 4-tuple with another sequence number: a new connection. */
	if (!created && (pk->tcp.flags & GS_TCP_SYN) && f->dir[d].r.started &&
	    pk->tcp.seq + 1 != f->dir[d].r.base_seq) {
		e->cnt.flows_reused++;
		gs_flow_end(&e->fl, f, false);
		f = gs_flow_lookup(&e->fl, pk, h, &d, true, &created);
		fno = f->c.no;
		if (e->cfg.port_bitmap)
			f->c.flags |= GS_FLOW_FORCED;
	}
	gs_flow_touch(&e->fl, fno);
	e->fl.lru[fno].t_last = ts;
	if (f->c.flags & GS_FLOW_IGNORED) {
		if (pk->payload_len)
			e->cnt.ignored_segments++;
		if (pk->tcp.flags & GS_TCP_RST)
			gs_flow_end(&e->fl, f, false);
		return;
	}
	if (pk->tcp.flags & GS_TCP_RST) {
		/* the connection is gone: what was not answered will not be */
		gs_flow_end(&e->fl, f, false);
		gs_calls_drain(&e->cs, false);
		return;
	}
	/* the ACK first: it tells whether the other side is missing bytes, which
	 * decides whether a reply in this segment may wait for its request */
	if (pk->tcp.flags & GS_TCP_ACK)
		gs_reasm_ack(&e->rs, &f->dir[!d].r, pk->tcp.ack);
	if (sparse)
		gs_reasm_pieces(&e->rs, &f->c, &f->dir[d].r, d, pk, pc, npc);
	else
		gs_reasm_segment(&e->rs, &f->c, &f->dir[d].r, d, pk);
	/* the common case, nothing held or awaited in either direction, costs one
	 * test of each direction's fields (what the loop below would look at) */
	if (f->c.in_use && dir_quiet(&f->dir[0]) && dir_quiet(&f->dir[1]))
		goto settled;
	for (int k = 0; k < 2 && f->c.in_use; k++) {
		struct gs_dir *x = &f->dir[k];
		if (x->r.acked_ts || x->r.ooo)
			gs_reasm_expire(&e->rs, &f->c, &x->r, k);
		if (f->c.in_use && (x->r.pending || gs_dir_pending(x)))
			pending_update(e, f, k);
	}
settled:
	if (f->c.in_use && f->dir[0].r.fin_done && f->dir[1].r.fin_done)
		gs_flow_end(&e->fl, f, false);
	expire_due(e);
	/* a call per packet at most: skip the call when none waits, or when the
	 * first waits for what it waited for at the last packet */
	if (e->cs.out_n && !gs_engine_calls_held(e))
		gs_calls_drain_unheld(&e->cs);
}

void gs_engine_segment(struct gs_engine *e, int64_t ts, const struct gs_segment *s)
{
	/* `none` stands for "payload there, not captured" (NULL would mean a gap) */
	static const uint8_t none[1];
	struct gs_packet pk;
	uint32_t hdr = s->src.family == 6 ? 60 : 40;

	e->packet_no++;
	e->cnt.packets++;
	e->cnt.bytes += hdr + s->len;
	if (e->first_ts == 0)
		e->first_ts = ts;
	if (ts > e->now)
		e->now = ts;
	memset(&pk, 0, sizeof pk);
	pk.ts_ns = ts;
	pk.ip.family = s->src.family;
	pk.ip.proto = 6;
	memcpy(pk.ip.src, s->src.addr, sizeof pk.ip.src);
	memcpy(pk.ip.dst, s->dst.addr, sizeof pk.ip.dst);
	pk.ip.l4_len = 20 + s->len;
	pk.tcp.sport = s->src.port;
	pk.tcp.dport = s->dst.port;
	pk.tcp.seq = s->seq;
	pk.tcp.ack = s->ack;
	pk.tcp.window = s->window;
	pk.tcp.flags = s->tcp_flags;
	pk.tcp.hdr_len = 20;
	pk.payload = none;
	pk.payload_cap = 0;
	pk.payload_len = s->len;
	packet(e, &pk, s->pieces, s->pieces ? s->n_pieces : 0, true);
}

void gs_engine_tick(struct gs_engine *e, int64_t now)
{
	if (now > e->now)
		e->now = now;
	/* holes the peer acknowledged are given up on time even when no packet
	 * comes: a live call waiting for its request's last bytes ends then */
	expire_due(e);
	if (e->cfg.reply_timeout_ns > 0) {
		while (e->cs.wm_n > 0) {
			uint32_t idx = e->cs.wm_heap[0].idx;
			struct gs_ocall *c = &e->cs.calls[idx];
			if (e->now - c->t_request_first < e->cfg.reply_timeout_ns)
				break;
			if (c->flags & GS_CF_PARKED) {
				/* a reply whose request never came: nothing to write */
				e->cnt.orphan_replies++;
				gs_call_discard(&e->cs, idx);
				continue;
			}
			if (c->flags & GS_CF_REP_DONE) {
				/* answered, its request's tail never came */
				c->flags |= GS_CF_CAPTURE_LOSS;
				gs_call_end(&e->cs, idx, GS_OUT_REPLY);
				continue;
			}
			gs_call_end(&e->cs, idx, (c->flags & GS_CF_CANCELLED) ? GS_OUT_CANCELLED : GS_OUT_NO_REPLY);
		}
	}
	gs_calls_drain(&e->cs, false);
}

void gs_engine_finish(struct gs_engine *e)
{
	e->cs.finishing = true;
	for (uint32_t n = 0; n < e->fl.flow_hwm; n++) {
		struct gs_flow *f = &e->fl.flows[n];
		for (int d = 0; d < 2 && f->c.in_use; d++)
			gs_reasm_flush(&e->rs, &f->c, &f->dir[d].r, d);
		if (f->c.in_use)
			gs_flow_end(&e->fl, f, false);
	}
	gs_calls_drain(&e->cs, true);
}

void gs_engine_summary_records(struct gs_engine *e)
{
	e->cs.lean = true;
}

const struct gs_counters *gs_engine_counters(const struct gs_engine *e) { return &e->cnt; }
const struct gs_intern *gs_engine_strings(const struct gs_engine *e) { return &e->strings; }
uint32_t gs_engine_open_calls(const struct gs_engine *e) { return e->cs.open_count; }
uint32_t gs_engine_active_flows(const struct gs_engine *e) { return e->fl.active_flows; }
int64_t gs_engine_first_ts(const struct gs_engine *e) { return e->first_ts; }
int64_t gs_engine_last_ts(const struct gs_engine *e) { return e->now; }
const struct gs_pairing *gs_engine_pairing(const struct gs_engine *e) { return &e->pr; }
const struct gs_reasm *gs_engine_reasm(const struct gs_engine *e) { return &e->rs; }
const struct gs_problem *gs_engine_first_malformed(const struct gs_engine *e)
{
	return e->first_malformed.packet ? &e->first_malformed : NULL;
}
const struct gs_problem *gs_engine_first_truncated(const struct gs_engine *e)
{
	return e->first_truncated.packet ? &e->first_truncated : NULL;
}
