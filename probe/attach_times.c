/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_times.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* probe window of the open-addressing table */
#define PROBE 16
/* a send of unknown length covers at most this much after its first byte */
#define UNKNOWN_SPAN (16u << 20)

int gs_times_init(struct gs_times *t, uint32_t slots)
{
	memset(t, 0, sizeof *t);
	if (slots < PROBE || (slots & (slots - 1)))
		return EINVAL;
	t->dirs = calloc(slots, sizeof *t->dirs);
	if (!t->dirs)
		return ENOMEM;
	t->mask = slots - 1;
	return 0;
}

void gs_times_free(struct gs_times *t)
{
	free(t->dirs);
	t->dirs = NULL;
}

static bool same_ep(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	uint64_t x[2], y[2];
	if (a->family != b->family || a->port != b->port)
		return false;
	/* the family's bytes, compared as words (no call to memcmp) */
	if (a->family != 6) {
		uint32_t u, v;
		memcpy(&u, a->addr, 4);
		memcpy(&v, b->addr, 4);
		return u == v;
	}
	memcpy(x, a->addr, 16);
	memcpy(y, b->addr, 16);
	return ((x[0] ^ y[0]) | (x[1] ^ y[1])) == 0;
}

static uint32_t hash(const struct gs_endpoint *s, const struct gs_endpoint *d)
{
	/* the addresses four bytes at a time, the ports, mixed by multiplying */
	uint64_t h = ((uint64_t)s->port << 16 | d->port) * 0x9e3779b97f4a7c15ULL;
	const struct gs_endpoint *e[2] = { s, d };
	for (int k = 0; k < 2; k++)
		for (int i = 0; i < (e[k]->family == 6 ? 16 : 4); i += 4) {
			uint32_t w;
			memcpy(&w, e[k]->addr + i, sizeof w);
			h = (h ^ w) * 0xff51afd7ed558ccdULL;
		}
	h ^= h >> 33;
	return (uint32_t)(h ^ (h >> 29));
}

static struct gs_times_dir *find(const struct gs_times *t, const struct gs_endpoint *src,
				 const struct gs_endpoint *dst)
{
	uint32_t h = hash(src, dst);
	for (uint32_t i = 0; i < PROBE; i++) {
		struct gs_times_dir *d = &t->dirs[(h + i) & t->mask];
		if (d->used && same_ep(&d->src, src) && same_ep(&d->dst, dst))
			return d;
	}
	return NULL;
}

/* The direction src -> dst, taken now if new: a free slot of the window,
 * else the one used longest ago (counted). */
static struct gs_times_dir *get(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst)
{
	struct gs_times_dir *d = find(t, src, dst), *old = NULL;
	uint32_t h;
	if (d)
		return d;
	h = hash(src, dst);
	for (uint32_t i = 0; i < PROBE; i++) {
		struct gs_times_dir *c = &t->dirs[(h + i) & t->mask];
		if (!c->used) {
			old = c;
			break;
		}
		if (!old || c->last_use < old->last_use)
			old = c;
	}
	if (old->used)
		t->replaced++;
	d = old;
	memset(d, 0, sizeof *d);
	d->used = true;
	d->src = *src;
	d->dst = *dst;
	return d;
}

const struct gs_times_dir *gs_times_dir(const struct gs_times *t, const struct gs_endpoint *src,
					const struct gs_endpoint *dst)
{
	return find(t, src, dst);
}

static uint32_t u32_at(const uint8_t *p, bool le)
{
	return le ? (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24
		  : (uint32_t)p[3] | (uint32_t)p[2] << 8 | (uint32_t)p[1] << 16 | (uint32_t)p[0] << 24;
}

struct gs_times_id gs_times_id_of(const uint8_t *h, uint32_t len)
{
	struct gs_times_id id = { false, 0, 0 };
	uint32_t at;
	bool le;
	if (len < 16 || memcmp(h, "GIOP", 4) != 0 || h[4] != 1 || h[5] > 3 || h[7] > 7)
		return id;
	le = h[6] & 1;
	/* 1.2+: the request id follows the header in every message that has
	 * one; 1.0/1.1 Request and Reply start with the service contexts, found
	 * here only when there are none */
	at = 12;
	if (h[5] < 2 && (h[7] == 0 || h[7] == 1)) {
		if (u32_at(h + 12, le) != 0)
			return id;
		at = 16;
	}
	if (h[7] == 5 || h[7] == 6 || (h[7] == 7 && h[5] < 2) || len < at + 4)
		return id; /* CloseConnection, MessageError, 1.1 Fragment: no id */
	id.has_id = true;
	id.type = h[7];
	id.rid = u32_at(h + at, le);
	return id;
}

void gs_times_add(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
		  bool send, uint32_t seq, uint32_t len, int64_t ts, const struct gs_times_id *id)
{
	gs_times_add_tid(t, src, dst, send, seq, len, ts, id, 0, 0);
}

const struct gs_times_ev *gs_times_ev_at(const struct gs_times_dir *d, bool send, int64_t ts)
{
	const struct gs_times_ev *ev = send ? d->send : d->recv;
	uint32_t n = send ? d->n_send : d->n_recv;
	if (n > GS_TIMES_RING)
		n = GS_TIMES_RING;
	for (uint32_t i = 0; i < n; i++)
		if (ev[i].ts == ts)
			return &ev[i];
	/* one pushed out of the ring may still be pinned */
	ev = send ? d->pin : d->rpin;
	n = send ? d->n_pin : d->n_rpin;
	if (n > GS_TIMES_PINS)
		n = GS_TIMES_PINS;
	for (uint32_t i = 0; i < n; i++)
		if (ev[i].ts == ts)
			return &ev[i];
	return NULL;
}

/* Ring slot `at` of the sends kept apart, once (a send of several messages
 * holds several starts; one pinned when it came is pinned again when the tap
 * sees its header). */
static void pin_send_at(struct gs_times *t, struct gs_times_dir *d, uint32_t at)
{
	uint32_t n = d->n_pin < GS_TIMES_PINS ? d->n_pin : GS_TIMES_PINS, k;
	for (uint32_t i = 0; i < n; i++)
		if (d->pin_key[i].ts == d->send_key[at].ts && d->pin_key[i].seq == d->send_key[at].seq)
			return;
	k = d->n_pin++ % GS_TIMES_PINS;
	d->pin_key[k] = d->send_key[at];
	d->pin_rid[k] = d->send_rid[at];
	d->pin_idt[k] = d->send_idt[at];
	d->pin[k] = d->send[at];
	t->pinned_from = &d->send[at];
	t->pinned_to = &d->pin[k];
}

/* A recv that returns the last byte of a whole message the tap saw: kept
 * apart (a copy: the caller may still complete the ring's event, then
 * gs_times_repin).  The ends expected are few: a scan. */
static void pin_recv(struct gs_times *t, struct gs_times_dir *d, struct gs_times_ev *ev)
{
	uint32_t n = d->n_end < GS_TIMES_PINS ? d->n_end : GS_TIMES_PINS;
	for (uint32_t i = 0; i < n; i++) {
		if (!d->end_set[i] || d->end_seq[i] - ev->seq >= ev->len)
			continue;
		/* every end this recv returns is taken; one copy of it; a
		 * Request's read by this thread is told */
		for (uint32_t j = i; j < n; j++)
			if (d->end_set[j] && d->end_seq[j] - ev->seq < ev->len) {
				d->end_set[j] = false;
				if (d->end_req[j] && t->on_read)
					t->on_read(t->read_arg, d, d->end_rid[j], d->end_req[j], ev);
			}
		uint32_t k = d->n_rpin++ % GS_TIMES_PINS;
		d->rpin_key[k] = (struct gs_times_key){ ev->seq, ev->len, ev->ts };
		d->rpin[k] = *ev;
		t->pinned_from = ev;
		t->pinned_to = &d->rpin[k];
		return;
	}
}

struct gs_times_ev *gs_times_add_tid(struct gs_times *t, const struct gs_endpoint *src,
				     const struct gs_endpoint *dst, bool send, uint32_t seq, uint32_t len, int64_t ts,
				     const struct gs_times_id *id, uint32_t tid, int64_t mono)
{
	struct gs_times_dir *d = get(t, src, dst);
	struct gs_times_ev *ev;
	d->last_use = ts;
	if (send) {
		uint32_t i = d->n_send++ % GS_TIMES_RING;
		ev = &d->send[i];
		d->send_key[i] = (struct gs_times_key){ seq, len, ts };
		d->send_rid[i] = id ? id->rid : 0;
		d->send_idt[i] = id && id->has_id ? (uint16_t)(0x100 | id->type) : 0;
	} else {
		uint32_t i = d->n_recv++ % GS_TIMES_RING;
		ev = &d->recv[i];
		d->recv_key[i] = (struct gs_times_key){ seq, len, ts };
	}
	ev->seq = seq;
	ev->len = len;
	ev->ts = ts;
	ev->has_id = id && id->has_id;
	ev->type = id ? id->type : 0;
	ev->rid = id ? id->rid : 0;
	ev->tid = tid;
	ev->mono = mono;
	ev->has_cum = false;
	t->pinned_from = t->pinned_to = NULL;
	if (!send && d->n_end)
		pin_recv(t, d, ev);
	/* a send whose buffer starts a message (its head was shipped: a thread
	 * switch on the socket) is kept apart at once: the tap sees its header
	 * only once the bytes queued before it have left, which may be more
	 * sends than the ring holds (threads' replies queued on one socket) */
	if (send && ev->has_id && (ev->type == 0 || ev->type == 1 || ev->type == 3 || ev->type == 4))
		pin_send_at(t, d, (d->n_send - 1) % GS_TIMES_RING);
	return ev;
}

/* The sends among `n` keys for gs_times_send: the best by sequence so far in
 * `best`, `ts`; the latest that starts with the very message in `ts_id`. */
static void scan_sends(const struct gs_times_key *key, const uint32_t *rids, const uint16_t *idts, uint32_t n,
		       uint32_t seq, int64_t not_after, uint16_t idt, uint32_t rid, uint32_t *best, int64_t *ts,
		       int64_t *ts_id)
{
	for (uint32_t i = 0; i < n; i++) {
		const struct gs_times_key *ev = &key[i];
		uint32_t into = seq - ev->seq; /* sequence space: wraps */
		if (into >= UNKNOWN_SPAN || ev->ts > not_after)
			continue;
		/* a concurrent send entered before this one queued its bytes: its
		 * sequence number is too low, its buffer tells the truth */
		if (idts[i] == idt && rids[i] == rid && ev->ts > *ts_id)
			*ts_id = ev->ts;
		if (ev->len && into >= ev->len)
			continue;
		if (into < *best || (into == *best && ev->ts > *ts)) {
			*best = into;
			*ts = ev->ts;
		}
	}
}

int64_t gs_times_send(const struct gs_times_dir *d, uint32_t seq, int64_t not_after, uint8_t type,
		      uint32_t rid)
{
	uint32_t n = d->n_send < GS_TIMES_RING ? d->n_send : GS_TIMES_RING, best = UINT32_MAX;
	uint32_t np = d->n_pin < GS_TIMES_PINS ? d->n_pin : GS_TIMES_PINS;
	uint16_t idt = (uint16_t)(0x100 | type);
	int64_t ts = 0, ts_id = 0;
	scan_sends(d->send_key, d->send_rid, d->send_idt, n, seq, not_after, idt, rid, &best, &ts, &ts_id);
	/* a copy of a send still in the ring changes nothing */
	scan_sends(d->pin_key, d->pin_rid, d->pin_idt, np, seq, not_after, idt, rid, &best, &ts, &ts_id);
	return ts_id ? ts_id : ts;
}

void gs_times_pin_send(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
		       uint32_t seq)
{
	struct gs_times_dir *d = find(t, src, dst);
	uint32_t n, at = UINT32_MAX, best = UINT32_MAX, k;
	if (!d || !d->n_send)
		return;
	n = d->n_send < GS_TIMES_RING ? d->n_send : GS_TIMES_RING;
	/* mostly the send just added (its segment carries the header): no scan */
	k = (d->n_send - 1) % GS_TIMES_RING;
	if (d->send_key[k].seq == seq) {
		at = k;
	} else {
		for (uint32_t i = 0; i < n; i++) {
			const struct gs_times_key *ev = &d->send_key[i];
			uint32_t into = seq - ev->seq;
			if (into >= UNKNOWN_SPAN || (ev->len && into >= ev->len))
				continue;
			if (into < best || (into == best && ev->ts > d->send_key[at].ts)) {
				best = into;
				at = i;
			}
		}
		if (at == UINT32_MAX)
			return;
	}
	pin_send_at(t, d, at);
}

void gs_times_repin(struct gs_times *t)
{
	if (t->pinned_from)
		*t->pinned_to = *t->pinned_from;
	t->pinned_from = t->pinned_to = NULL;
}

void gs_times_expect_end(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
			 uint32_t last)
{
	struct gs_times_dir *d = find(t, src, dst);
	uint32_t k;
	if (!d)
		return; /* no followed process has received on it yet */
	k = d->n_end++ % GS_TIMES_PINS;
	d->end_seq[k] = last;
	d->end_set[k] = true;
	d->end_req[k] = 0;
}

/* The recv that returned expected end k may have come before the tap's record
 * that expects it (the two reach the ring from different hooks, and a slow
 * machine delivers them in either order): the earliest recv still in the ring
 * that covers it takes the end, as pin_recv would have, and is kept apart. */
static void read_before(struct gs_times *t, struct gs_times_dir *d, uint32_t k)
{
	uint32_t n = d->n_recv < GS_TIMES_RING ? d->n_recv : GS_TIMES_RING, at = GS_TIMES_RING;
	for (uint32_t i = 0; i < n; i++)
		if (d->end_seq[k] - d->recv_key[i].seq < d->recv_key[i].len &&
		    (at == GS_TIMES_RING || d->recv_key[i].ts < d->recv_key[at].ts))
			at = i;
	if (at == GS_TIMES_RING)
		return;
	d->end_set[k] = false;
	if (d->end_req[k] && t->on_read)
		t->on_read(t->read_arg, d, d->end_rid[k], d->end_req[k], &d->recv[at]);
	uint32_t p = d->n_rpin++ % GS_TIMES_PINS;
	d->rpin_key[p] = d->recv_key[at];
	d->rpin[p] = d->recv[at];
}

void gs_times_expect_request(struct gs_times *t, const struct gs_endpoint *src, const struct gs_endpoint *dst,
			     uint32_t last, uint32_t rid, enum gs_times_req kind)
{
	struct gs_times_dir *d = find(t, src, dst);
	uint32_t k;
	if (!d) {
		/* its last use: now, by the clock of what it holds (none yet):
		 * the newest of the window, so that it is not the next to go */
		d = get(t, src, dst);
		for (uint32_t i = 0; i < PROBE; i++) {
			const struct gs_times_dir *c = &t->dirs[(hash(src, dst) + i) & t->mask];
			if (c->used && c->last_use > d->last_use)
				d->last_use = c->last_use;
		}
	}
	k = d->n_end++ % GS_TIMES_PINS;
	d->end_seq[k] = last;
	d->end_set[k] = true;
	d->end_rid[k] = rid;
	d->end_req[k] = (uint8_t)kind;
	read_before(t, d, k);
}

int64_t gs_times_recv(const struct gs_times_dir *d, uint32_t seq)
{
	uint32_t n = d->n_recv < GS_TIMES_RING ? d->n_recv : GS_TIMES_RING;
	int64_t ts = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct gs_times_key *ev = &d->recv_key[i];
		if (seq - ev->seq < ev->len && (!ts || ev->ts < ts))
			ts = ev->ts;
	}
	/* a recv pushed out of the ring may still be pinned */
	n = d->n_rpin < GS_TIMES_PINS ? d->n_rpin : GS_TIMES_PINS;
	for (uint32_t i = 0; i < n; i++) {
		const struct gs_times_key *ev = &d->rpin_key[i];
		if (seq - ev->seq < ev->len && (!ts || ev->ts < ts))
			ts = ev->ts;
	}
	return ts;
}
