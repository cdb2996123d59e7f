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
	return NULL;
}

struct gs_times_ev *gs_times_add_tid(struct gs_times *t, const struct gs_endpoint *src,
				     const struct gs_endpoint *dst, bool send, uint32_t seq, uint32_t len, int64_t ts,
				     const struct gs_times_id *id, uint32_t tid, int64_t mono)
{
	struct gs_times_dir *d = find(t, src, dst);
	struct gs_times_ev *ev;
	if (!d) {
		/* a free slot of the window, else the one used longest ago */
		uint32_t h = hash(src, dst);
		struct gs_times_dir *old = NULL;
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
	}
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
	return ev;
}

int64_t gs_times_send(const struct gs_times_dir *d, uint32_t seq, int64_t not_after, uint8_t type,
		      uint32_t rid)
{
	uint32_t n = d->n_send < GS_TIMES_RING ? d->n_send : GS_TIMES_RING, best = UINT32_MAX;
	uint16_t idt = (uint16_t)(0x100 | type);
	int64_t ts = 0, ts_id = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct gs_times_key *ev = &d->send_key[i];
		uint32_t into = seq - ev->seq; /* sequence space: wraps */
		if (into >= UNKNOWN_SPAN || ev->ts > not_after)
			continue;
		/* a concurrent send entered before this one queued its bytes: its
		 * sequence number is too low, its buffer tells the truth */
		if (d->send_idt[i] == idt && d->send_rid[i] == rid && ev->ts > ts_id)
			ts_id = ev->ts;
		if (ev->len && into >= ev->len)
			continue;
		if (into < best || (into == best && ev->ts > ts)) {
			best = into;
			ts = ev->ts;
		}
	}
	return ts_id ? ts_id : ts;
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
	return ts;
}
