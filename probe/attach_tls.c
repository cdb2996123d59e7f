/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_tls.h"
#include "err_buf.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decoders/giop/giop.h"
#include "attach_maps.h"

/* ---- the plaintext streams ----------------------------------------------- */

/* Our sequence numbers: each direction's plaintext starts at this one (the
 * synthetic SYN takes the one before). */
#define TLS_ISN 1000u
#define TCP_FIN 0x01
#define TCP_SYN 0x02
#define TCP_RST 0x04
#define TCP_PSH 0x08
#define TCP_ACK 0x10

int gs_tls_feed_init(struct gs_tls_feed *t, struct gs_feed *feed)
{
	memset(t, 0, offsetof(struct gs_tls_feed, rec));
	t->feed = feed;
	t->conns = calloc(GS_TLS_CONNS, sizeof *t->conns);
	t->pend = calloc(GS_TLS_PENDING, sizeof *t->pend);
	if (!t->conns || !t->pend) {
		gs_tls_feed_free(t);
		return ENOMEM;
	}
	return 0;
}

void gs_tls_feed_free(struct gs_tls_feed *t)
{
	free(t->conns);
	free(t->pend);
	t->conns = NULL;
	t->pend = NULL;
}

static void reverse(struct gs_tap_flow *r, const struct gs_tap_flow *f)
{
	memset(r, 0, sizeof *r);
	memcpy(r->saddr, f->daddr, sizeof r->saddr);
	memcpy(r->daddr, f->saddr, sizeof r->daddr);
	r->sport = f->dport;
	r->dport = f->sport;
	r->family = f->family;
}

static bool same_flow(const struct gs_tap_flow *a, const struct gs_tap_flow *b)
{
	return a->family == b->family && a->sport == b->sport && a->dport == b->dport &&
	       !memcmp(a->saddr, b->saddr, sizeof a->saddr) && !memcmp(a->daddr, b->daddr, sizeof a->daddr);
}

/* The same for both directions of a connection. */
static uint32_t conn_hash(const struct gs_tap_flow *f)
{
	uint32_t h = 2166136261u;
	uint32_t a = f->sport, b = f->dport;
	for (int i = 0; i < 16; i++)
		h = (h ^ (uint32_t)(f->saddr[i] ^ f->daddr[i])) * 16777619u;
	h = (h ^ (a ^ b)) * 16777619u;
	h = (h ^ (a * b)) * 16777619u;
	return h;
}

static bool pend_any(const struct gs_tls_feed *t, uint32_t ci, int d);

/* The table full: its entries again without the connections closed long
 * enough (only when no write waits: the waiting ones name entries by index). */
static void conns_rebuild(struct gs_tls_feed *t)
{
	struct gs_tls_conn *old = t->conns, *nc;
	if (t->pend_n || !(nc = calloc(GS_TLS_CONNS, sizeof *nc)))
		return;
	t->conns = nc;
	t->n_conns = 0;
	for (uint32_t i = 0; i < GS_TLS_CONNS; i++) {
		const struct gs_tls_conn *c = &old[i];
		uint32_t j;
		if (!c->used || (c->closed && t->now - c->closed_ts >= (uint64_t)GS_TLS_CLOSED_KEEP_NS))
			continue;
		for (j = conn_hash(&c->ab) % GS_TLS_CONNS; nc[j].used; j = (j + 1) % GS_TLS_CONNS)
			;
		nc[j] = *c;
		t->n_conns++;
	}
	free(old);
}

/* The connection of `f` and which of its directions `f` is (0: a -> b), or
 * NULL when it is not a TLS connection seen (create: make it one). */
static struct gs_tls_conn *conn_of(struct gs_tls_feed *t, const struct gs_tap_flow *f, int *dir, bool create)
{
	uint32_t i = conn_hash(f) % GS_TLS_CONNS;
	struct gs_tap_flow r;
	if (!t->n_conns && !create)
		return NULL;
	if (create && t->n_conns >= GS_TLS_CONNS * 3 / 4) {
		conns_rebuild(t);
		i = conn_hash(f) % GS_TLS_CONNS;
	}
	reverse(&r, f);
	for (uint32_t k = 0; k < GS_TLS_CONNS; k++, i = (i + 1) % GS_TLS_CONNS) {
		struct gs_tls_conn *c = &t->conns[i];
		if (!c->used) {
			if (!create)
				return NULL;
			if (t->n_conns >= GS_TLS_CONNS * 3 / 4) {
				t->table_full++;
				return NULL;
			}
			memset(c, 0, sizeof *c);
			c->used = true;
			c->ab = *f;
			t->n_conns++;
			*dir = 0;
			return c;
		}
		if (same_flow(&c->ab, f)) {
			*dir = 0;
			return c;
		}
		if (same_flow(&c->ab, &r)) {
			*dir = 1;
			return c;
		}
	}
	return NULL;
}

static void flow_of_dir(const struct gs_tls_conn *c, int d, struct gs_tap_flow *out)
{
	if (d == 0)
		*out = c->ab;
	else
		reverse(out, &c->ab);
}

/* A segment record of the plaintext stream to the packet tap's feed. */
static void segment(struct gs_tls_feed *t, const struct gs_tls_conn *c, int d, uint64_t ts, uint8_t flags,
		    uint32_t seq, uint32_t len, const struct gs_tap_head *heads, uint32_t n_heads,
		    const uint8_t *data, uint32_t data_len)
{
	struct gs_tap_seg *r = (struct gs_tap_seg *)t->rec;
	memset(r, 0, sizeof *r);
	r->kind = GS_REC_SEG;
	r->ts_ns = ts;
	flow_of_dir(c, d, &r->flow);
	r->seq = seq;
	/* each segment acknowledges what the other side's stream has given */
	r->ack = TLS_ISN + (uint32_t)c->d[!d].fed;
	r->len = len;
	r->window = 65535;
	r->tcp_flags = flags;
	r->n_heads = (uint16_t)n_heads;
	r->data_len = (uint16_t)data_len;
	if (n_heads)
		memcpy(r + 1, heads, n_heads * sizeof *heads);
	if (data_len)
		memcpy((uint8_t *)(r + 1) + n_heads * sizeof *heads, data, data_len);
	gs_feed_record(t->feed, r, sizeof *r + n_heads * sizeof *heads + data_len);
}

/* A TLS connection seen for the first time: what the packet tap gave the
 * engine of it (the handshake: ciphertext, no GIOP) is ended by a reset, and
 * the plaintext streams begin with a handshake of their own. */
static void conn_start(struct gs_tls_feed *t, const struct gs_tls_conn *c, uint64_t ts)
{
	struct gs_tap_seg *r = (struct gs_tap_seg *)t->rec;
	t->conns_seen++;
	memset(r, 0, sizeof *r);
	r->kind = GS_REC_SEG;
	r->ts_ns = ts;
	r->flow = c->ab;
	r->tcp_flags = TCP_RST;
	gs_feed_record(t->feed, r, sizeof *r);
	segment(t, c, 0, ts, TCP_SYN, TLS_ISN - 1, 0, NULL, 0, NULL, 0);
	segment(t, c, 1, ts, TCP_SYN | TCP_ACK, TLS_ISN - 1, 0, NULL, 0, NULL, 0);
}

/* The GIOP message size of a 12-byte header, or -1 when it is not one. */
static int64_t giop_size(const uint8_t *h)
{
	uint32_t v;
	if (memcmp(h, "GIOP", 4) != 0 || h[4] != 1 || h[5] > 3)
		return -1;
	if (h[6] & 1)
		v = (uint32_t)h[8] | (uint32_t)h[9] << 8 | (uint32_t)h[10] << 16 | (uint32_t)h[11] << 24;
	else
		v = (uint32_t)h[11] | (uint32_t)h[10] << 8 | (uint32_t)h[9] << 16 | (uint32_t)h[8] << 24;
	return (int64_t)v;
}

/* `len` plaintext bytes of direction d at the stream's offset `off` (head:
 * the first of them): a segment with the GIOP heads that start in them. */
static void chunk(struct gs_tls_feed *t, struct gs_tls_conn *c, int d, uint64_t off, uint32_t len,
		  const uint8_t *head, uint32_t head_len, uint64_t ts, uint64_t ts_last)
{
	struct gs_tls_dir *dr = &c->d[d];
	struct gs_tap_head heads[GS_TAP_HEADS];
	uint8_t data[GS_TLS_HEAD_MAX];
	uint32_t n = 0, used = 0;

	if (dr->lost && head_len >= 12 && giop_size(head) >= 0) {
		dr->next_hdr = off;
		dr->lost = false;
	}
	while (!dr->lost && dr->next_hdr < off + len) {
		uint32_t at = (uint32_t)(dr->next_hdr - off);
		int64_t size;
		uint32_t take;
		if (dr->next_hdr < off || at + 12 > head_len || (size = giop_size(head + at)) < 0 ||
		    n == GS_TAP_HEADS) {
			/* the header is past what was shipped (or cut): framing waits
			 * for a read or write that starts with one */
			t->heads_unframed++;
			dr->lost = true;
			break;
		}
		take = head_len - at;
		if (take > GS_TAP_HEAD_MAX)
			take = GS_TAP_HEAD_MAX;
		if (take > 12 + (uint64_t)size)
			take = (uint32_t)(12 + size);
		if (used + take > sizeof data)
			take = (uint32_t)sizeof data - used;
		heads[n].off = at;
		heads[n].len = take;
		memcpy(data + used, head + at, take);
		used += take;
		n++;
		dr->next_hdr += 12 + (uint64_t)size;
	}
	/* the last byte came in a later segment than the first: a segment each
	 * (when no head reaches into the last byte) */
	if (ts_last > ts && len >= 2 && (!n || heads[n - 1].off + heads[n - 1].len <= len - 1)) {
		segment(t, c, d, ts, TCP_ACK | TCP_PSH, TLS_ISN + (uint32_t)off, len - 1, heads, n, data, used);
		dr->fed = off + len - 1;
		segment(t, c, d, ts_last, TCP_ACK | TCP_PSH, TLS_ISN + (uint32_t)(off + len - 1), 1, NULL, 0,
			NULL, 0);
	} else {
		segment(t, c, d, ts, TCP_ACK | TCP_PSH, TLS_ISN + (uint32_t)off, len, heads, n, data, used);
	}
	dr->fed = off + len;
}

/* ---- the ciphertext's segments: the message instants ---------------------- */

static bool seq_in(uint32_t seq, uint32_t start, uint32_t len)
{
	return seq - start < len;
}

/* The time of the latest ciphertext segment of direction d that carried
 * byte `seq`, or 0. */
static uint64_t wire_ts(const struct gs_tls_dir *dr, uint32_t seq)
{
	for (uint32_t k = 1; k <= GS_TLS_SEGS; k++) {
		const struct gs_tls_wire *w = &dr->wire[(dr->wire_next + GS_TLS_SEGS - k) % GS_TLS_SEGS];
		if (w->len && seq_in(seq, w->seq, w->len))
			return w->ts;
	}
	return 0;
}

static uint64_t timed(struct gs_tls_feed *t, uint64_t wire, uint64_t fallback)
{
	if (wire) {
		t->wire_timed++;
		return wire;
	}
	t->tcp_timed++;
	return fallback;
}

/* A waiting write goes to the engine: timed by the segment that carried its
 * ciphertext's first byte, or (none seen) by its TCP send. */
static void pend_emit(struct gs_tls_feed *t, struct gs_tls_pend *p)
{
	struct gs_tls_conn *c = &t->conns[p->conn];
	uint64_t ts = timed(t, wire_ts(&c->d[p->dir], p->tcp_seq), p->ts_tcp);
	chunk(t, c, p->dir, p->off, p->len, p->head, p->head_len, ts, ts);
	p->len = 0;
	p->conn = UINT32_MAX;    /* done */
}

static void pend_pop_done(struct gs_tls_feed *t)
{
	while (t->pend_n && t->pend[t->pend_head].conn == UINT32_MAX) {
		t->pend_head = (t->pend_head + 1) % GS_TLS_PENDING;
		t->pend_n--;
	}
}

/* A ciphertext segment of connection ci, direction d: the writes waiting for
 * it go (and those of that direction before them, in order). */
static void pend_release(struct gs_tls_feed *t, uint32_t ci, int d, uint32_t seq, uint32_t len)
{
	uint32_t last = UINT32_MAX;
	for (uint32_t k = 0; k < t->pend_n; k++) {
		const struct gs_tls_pend *p = &t->pend[(t->pend_head + k) % GS_TLS_PENDING];
		if (p->conn == ci && p->dir == d && seq_in(p->tcp_seq, seq, len))
			last = k;
	}
	if (last == UINT32_MAX)
		return;
	for (uint32_t k = 0; k <= last; k++) {
		struct gs_tls_pend *p = &t->pend[(t->pend_head + k) % GS_TLS_PENDING];
		if (p->conn == ci && p->dir == d)
			pend_emit(t, p);
	}
	pend_pop_done(t);
}

static bool pend_any(const struct gs_tls_feed *t, uint32_t ci, int d)
{
	for (uint32_t k = 0; k < t->pend_n; k++) {
		const struct gs_tls_pend *p = &t->pend[(t->pend_head + k) % GS_TLS_PENDING];
		if (p->conn == ci && p->dir == d)
			return true;
	}
	return false;
}

static void pend_add(struct gs_tls_feed *t, uint32_t ci, int d, const struct gs_tls_rec *r, uint64_t off)
{
	struct gs_tls_pend *p;
	if (t->pend_n == GS_TLS_PENDING) {
		pend_emit(t, &t->pend[t->pend_head]);
		pend_pop_done(t);
	}
	p = &t->pend[(t->pend_head + t->pend_n) % GS_TLS_PENDING];
	t->pend_n++;
	p->conn = ci;
	p->dir = (uint8_t)d;
	p->gen = t->gen;
	p->tcp_seq = r->tcp_seq;
	p->off = off;
	p->len = r->plain_len;
	p->ts_tcp = r->ts_tcp ? r->ts_tcp : r->ts_call;
	p->head_len = r->head_len;
	memcpy(p->head, r->head, r->head_len);
}

void gs_tls_feed_flush(struct gs_tls_feed *t)
{
	for (uint32_t k = 0; k < t->pend_n; k++) {
		struct gs_tls_pend *p = &t->pend[(t->pend_head + k) % GS_TLS_PENDING];
		if (p->conn != UINT32_MAX && p->gen != t->gen)
			pend_emit(t, p);
	}
	pend_pop_done(t);
	t->gen++;
}

/* The send or recv event of the TLS call: the instants (attach_times), by
 * our sequence numbers. */
static void event(struct gs_tls_feed *t, const struct gs_tls_conn *c, int d, bool send,
		  const struct gs_tls_rec *r, uint64_t off)
{
	struct gs_tap_sys s;
	memset(&s, 0, sizeof s);
	s.kind = send ? GS_REC_SEND : GS_REC_RECV;
	s.tgid = r->tgid;
	s.tid = r->tid;
	s.seq = TLS_ISN + (uint32_t)off;
	s.ts_ns = r->ts_call;
	flow_of_dir(c, d, &s.flow);
	s.len = r->plain_len;
	s.call = send ? GS_CALL_WRITE : GS_CALL_READ;
	if (send && r->head_len) {
		s.head_len = (uint8_t)(r->head_len < GS_TAP_USER_HEAD ? r->head_len : GS_TAP_USER_HEAD);
		memcpy(s.head, r->head, s.head_len);
		gs_feed_record(t->feed, &s, sizeof s);
	} else {
		gs_feed_record(t->feed, &s, GS_TAP_SYS_SHORT);
	}
}

static void on_tls(struct gs_tls_feed *t, const struct gs_tls_rec *r, size_t len)
{
	struct gs_tap_flow data_flow;
	struct gs_tls_conn *c;
	struct gs_tls_dir *dr;
	bool send = r->kind == GS_REC_TLS_SEND;
	int d;
	uint64_t off;

	if (len < GS_TLS_REC_SHORT || r->head_len > GS_TLS_HEAD_MAX ||
	    (r->head_len && len < sizeof *r) || (r->flow.family != 4 && r->flow.family != 6)) {
		t->bad_records++;
		return;
	}
	/* the data's direction: a send's is the socket's local -> remote */
	if (send || r->kind == GS_REC_TLS_CONN)
		data_flow = r->flow;
	else
		reverse(&data_flow, &r->flow);
	c = conn_of(t, &data_flow, &d, false);
	if (c && c->closed && !pend_any(t, (uint32_t)(c - t->conns), 0) &&
	    !pend_any(t, (uint32_t)(c - t->conns), 1)) {
		/* the same 4-tuple again: a new connection */
		struct gs_tap_flow ab = data_flow;
		memset(c, 0, sizeof *c);
		c->used = true;
		c->ab = ab;
		d = 0;
		conn_start(t, c, r->ts_tcp ? r->ts_tcp : r->ts_call);
	} else if (!c) {
		c = conn_of(t, &data_flow, &d, true);
		if (!c)
			return;
		conn_start(t, c, r->ts_tcp ? r->ts_tcp : r->ts_call);
	}
	if (r->kind == GS_REC_TLS_CONN)
		return;
	dr = &c->d[d];
	if (send) {
		t->sends++;
		off = dr->sent;
		dr->sent += r->plain_len;
		if (!dr->from_sender && dr->fed == 0 && dr->got == 0)
			dr->from_sender = true;
		event(t, c, d, true, r, off);
		if (dr->from_sender) {
			uint32_t ci = (uint32_t)(c - t->conns);
			uint64_t w = r->ts_tcp ? wire_ts(dr, r->tcp_seq) : 0;
			if (!r->ts_tcp || (w && !pend_any(t, ci, d))) {
				uint64_t ts = timed(t, w, r->ts_tcp ? r->ts_tcp : r->ts_call);
				chunk(t, c, d, off, r->plain_len, r->head, r->head_len, ts, ts);
			} else {
				/* its segments come after this record */
				pend_add(t, ci, d, r, off);
			}
		}
	} else {
		t->recvs++;
		off = dr->got;
		dr->got += r->plain_len;
		event(t, c, d, false, r, off);
		if (!dr->from_sender) {
			/* the ciphertext came before the read: its first and last byte's segments */
			uint64_t fb = r->ts_tcp ? r->ts_tcp : r->ts_call;
			uint64_t t0 = timed(t, r->ts_tcp ? wire_ts(dr, r->tcp_seq_first) : 0, fb);
			uint64_t t1 = r->ts_tcp ? wire_ts(dr, r->tcp_seq - 1) : 0;
			chunk(t, c, d, off, r->plain_len, r->head, r->head_len, t0, t1 ? t1 : fb);
		} else if (dr->got <= dr->fed) {
			/* the receiver has the bytes: its side acknowledges them */
			struct gs_tls_dir *back = &c->d[!d];
			struct gs_tap_seg *s = (struct gs_tap_seg *)t->rec;
			memset(s, 0, sizeof *s);
			s->kind = GS_REC_SEG;
			s->ts_ns = r->ts_tcp ? r->ts_tcp : r->ts_call;
			flow_of_dir(c, !d, &s->flow);
			s->seq = TLS_ISN + (uint32_t)back->fed;
			s->ack = TLS_ISN + (uint32_t)dr->got;
			s->window = 65535;
			s->tcp_flags = TCP_ACK;
			gs_feed_record(t->feed, s, sizeof *s);
		}
	}
}

/* The flow a packet tap or syscall record is about, or NULL. */
static const struct gs_tap_flow *record_flow(const void *rec, size_t len)
{
	const uint32_t *kind = rec;
	switch (*kind) {
	case GS_REC_SEG:
		return len >= sizeof(struct gs_tap_seg) ? &((const struct gs_tap_seg *)rec)->flow : NULL;
	case GS_REC_SEND:
	case GS_REC_RECV:
		return len >= GS_TAP_SYS_SHORT ? &((const struct gs_tap_sys *)rec)->flow : NULL;
	case GS_REC_FOLD:
		return len >= sizeof(struct gs_tap_fold_rec) ? &((const struct gs_tap_fold_rec *)rec)->flow : NULL;
	default:
		return NULL;
	}
}

void gs_tls_feed_record(void *arg, const void *rec, size_t len)
{
	struct gs_tls_feed *t = arg;
	const uint32_t *kind = rec;
	const struct gs_tap_flow *fl;
	struct gs_tls_conn *c;
	int d;
	if (len < sizeof *kind) {
		gs_feed_record(t->feed, rec, len);
		return;
	}
	if (*kind == GS_REC_TLS_SEND || *kind == GS_REC_TLS_RECV || *kind == GS_REC_TLS_CONN) {
		on_tls(t, rec, len);
		return;
	}
	/* the ciphertext of a TLS connection: its plaintext stands in for it; its
	 * segments time the plaintext */
	if (t->n_conns && (fl = record_flow(rec, len)) != NULL && (c = conn_of(t, fl, &d, false)) != NULL) {
		const struct gs_tap_seg *s = rec;
		t->tap_dropped++;
		if (*kind == GS_REC_SEG && s->ts_ns > t->now)
			t->now = s->ts_ns;
		if (*kind == GS_REC_SEG && !c->closed && (s->tcp_flags & (TCP_FIN | TCP_RST))) {
			c->fin |= (uint8_t)(s->tcp_flags & TCP_RST ? 3 : 1u << d);
			if (c->fin == 3) {
				c->closed = true;
				c->closed_ts = s->ts_ns;
				t->conns_closed++;
			}
		}
		if (*kind == GS_REC_SEG && s->len) {
			struct gs_tls_dir *dr = &c->d[d];
			struct gs_tls_wire *w = &dr->wire[dr->wire_next];
			dr->wire_next = (dr->wire_next + 1) % GS_TLS_SEGS;
			w->seq = s->seq;
			w->len = s->len;
			w->ts = s->ts_ns;
			if (t->pend_n)
				pend_release(t, (uint32_t)(c - t->conns), d, s->seq, s->len);
		}
		return;
	}
	gs_feed_record(t->feed, rec, len);
}

/* ---- finding libssl -------------------------------------------------------- */

bool gs_tls_find_libssl(uint32_t pid, struct gs_tls_lib *lib)
{
	/* OpenSSL 3: libssl.so.3 (the uprobes are on its exported functions),
	 * opened through map_files: the process may live in another mount
	 * namespace or root, where its path is not ours */
	lib->pid = pid;
	return gs_maps_find_lib(pid, "libssl.so.3", lib->path, sizeof lib->path, lib->file, sizeof lib->file);
}

/* ---- the uprobes ----------------------------------------------------------- */

#ifndef GS_HAVE_EBPF

int gs_tls_probes_open(struct gs_tls_probes **out, const uint32_t *pids, uint32_t n_pids, int ring_fd,
		       struct gs_tls_lib *libs, uint32_t *n_libs, char *err, size_t errlen)
{
	(void)pids, (void)n_pids, (void)ring_fd, (void)libs;
	*out = NULL;
	*n_libs = 0;
	snprintf(err, errlen, "this build has no eBPF support");
	return 2;
}

void gs_tls_probes_close(struct gs_tls_probes *p)
{
	(void)p;
}

int gs_tls_probes_check(const uint32_t *pids, uint32_t n_pids, gs_verdict_fn fn, void *arg)
{
	(void)pids, (void)n_pids, (void)fn, (void)arg;
	return -1;
}

#else

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

/* the generated skeleton casts const away */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "tls.skel.h"
#pragma GCC diagnostic pop

/* The kernel has this tracepoint (its BTF typedef: what tp_btf attaches by). */
static bool has_tracepoint(const char *name)
{
	char t[128];
	struct btf *vm = btf__load_vmlinux_btf();
	bool ok;
	if (!vm)
		return false;
	snprintf(t, sizeof t, "btf_trace_%s", name);
	ok = btf__find_by_name_kind(vm, t, BTF_KIND_TYPEDEF) > 0;
	btf__free(vm);
	return ok;
}

/* The TCP send and recv hooks of the TLS probes: the socket layer's
 * tracepoints where the kernel has them, else fentry/fexit on
 * tcp_sendmsg_locked and tcp_recvmsg (Debian 12's 6.1 has neither
 * tracepoint, 6.12 no tcp_sendmsg_locked); only the chosen ones are loaded. */
static void pick_tcp_hooks(struct bpf_object *o)
{
	bool send_tp = has_tracepoint("tcp_sendmsg_locked"), recv_tp = has_tracepoint("sock_recv_length");
	bpf_program__set_autoload(bpf_object__find_program_by_name(o, "tls_tcp_send"), send_tp);
	bpf_program__set_autoload(bpf_object__find_program_by_name(o, "tls_tcp_send_fentry"), !send_tp);
	bpf_program__set_autoload(bpf_object__find_program_by_name(o, "tls_tcp_recv"), recv_tp);
	bpf_program__set_autoload(bpf_object__find_program_by_name(o, "tls_tcp_recv_fexit"), !recv_tp);
}

static struct bpf_program *tcp_hook(struct tls_bpf *skel, bool send)
{
	if (send)
		return bpf_program__autoload(skel->progs.tls_tcp_send) ? skel->progs.tls_tcp_send
								       : skel->progs.tls_tcp_send_fentry;
	return bpf_program__autoload(skel->progs.tls_tcp_recv) ? skel->progs.tls_tcp_recv : skel->progs.tls_tcp_recv_fexit;
}

#define MAX_LINKS (GS_TLS_MAX_LIBS * 10 + 2)

struct gs_tls_probes {
	struct tls_bpf *skel;
	struct bpf_link *links[MAX_LINKS];
	uint32_t n_links;
};

static int uprobe(struct gs_tls_probes *p, struct bpf_program *prog, uint32_t pid, const struct gs_tls_lib *lib,
		  const char *func, bool ret, bool optional, char *err, size_t errlen)
{
	LIBBPF_OPTS(bpf_uprobe_opts, o, .func_name = func, .retprobe = ret);
	struct bpf_link *l;
	if (p->n_links >= MAX_LINKS)
		return gs_errf(err, errlen, "too many TLS probes");
	l = bpf_program__attach_uprobe_opts(prog, (pid_t)pid, lib->path, 0, &o);
	if (!l) {
		if (optional)
			return 0;
		return gs_errf(err, errlen, "cannot attach a uprobe to %s in %s (pid %u, opened as %s): %s", func,
			    lib->file, pid, lib->path, strerror(errno));
	}
	p->links[p->n_links++] = l;
	return 0;
}

static struct bpf_object *open_object(const void *arg);

static int load_skel(void *skel)
{
	return tls_bpf__load(skel);
}

/* The skeleton's load: a refusal is said in words (gs_load_said).  0 or 2. */
static int load(struct tls_bpf *skel, char *err, size_t errlen)
{
	return gs_load_said(skel->obj, load_skel, skel, open_object, NULL, "the TLS probes: ",
			    "attach of processes that do not map libssl, `live` and `read` work", err, errlen);
}

int gs_tls_probes_open(struct gs_tls_probes **out, const uint32_t *pids, uint32_t n_pids, int ring_fd,
		       struct gs_tls_lib *libs, uint32_t *n_libs, char *err, size_t errlen)
{
	struct gs_tls_probes *p;
	struct bpf_link *l;
	int r;

	*out = NULL;
	*n_libs = 0;
	for (uint32_t i = 0; i < n_pids && *n_libs < GS_TLS_MAX_LIBS; i++)
		if (gs_tls_find_libssl(pids[i], &libs[*n_libs]))
			(*n_libs)++;
	if (!*n_libs)
		return 1;
	p = calloc(1, sizeof *p);
	if (!p)
		return gs_errf(err, errlen, "out of memory");
	p->skel = tls_bpf__open();
	if (!p->skel) {
		free(p);
		return gs_errf(err, errlen, "cannot open the TLS eBPF object: %s", strerror(errno));
	}
	/* one ring for both objects: the records keep the order they happened in */
	if ((r = bpf_map__reuse_fd(p->skel->maps.events, ring_fd)) != 0) {
		gs_errf(err, errlen, "cannot share the ring buffer with the TLS probes: %s", strerror(-r));
		goto bad;
	}
	pick_tcp_hooks(p->skel->obj);
	if ((r = load(p->skel, err, errlen)) != 0)
		goto bad;
	l = bpf_program__attach(tcp_hook(p->skel, true));
	if (!l) {
		gs_errf(err, errlen, "cannot attach the TLS probes to %s: %s", bpf_program__section_name(tcp_hook(p->skel, true)),
		     strerror(errno));
		goto bad;
	}
	p->links[p->n_links++] = l;
	l = bpf_program__attach(tcp_hook(p->skel, false));
	if (!l) {
		gs_errf(err, errlen, "cannot attach the TLS probes to %s: %s", bpf_program__section_name(tcp_hook(p->skel, false)),
		     strerror(errno));
		goto bad;
	}
	p->links[p->n_links++] = l;
	for (uint32_t i = 0; i < *n_libs; i++) {
		uint32_t pid = libs[i].pid;
		const struct gs_tls_lib *lib = &libs[i];
		/* SSL_write and SSL_read are in every OpenSSL; the _ex forms since 1.1.1 */
		if (uprobe(p, p->skel->progs.gs_ssl_write, pid, lib, "SSL_write", false, false, err, errlen) ||
		    uprobe(p, p->skel->progs.gs_ssl_call_ret, pid, lib, "SSL_write", true, false, err, errlen) ||
		    uprobe(p, p->skel->progs.gs_ssl_read, pid, lib, "SSL_read", false, false, err, errlen) ||
		    uprobe(p, p->skel->progs.gs_ssl_read_ret, pid, lib, "SSL_read", true, false, err, errlen) ||
		    uprobe(p, p->skel->progs.gs_ssl_write_ex, pid, lib, "SSL_write_ex", false, true, err, errlen) ||
		    uprobe(p, p->skel->progs.gs_ssl_call_ret, pid, lib, "SSL_write_ex", true, true, err, errlen) ||
		    uprobe(p, p->skel->progs.gs_ssl_read_ex, pid, lib, "SSL_read_ex", false, true, err, errlen) ||
		    uprobe(p, p->skel->progs.gs_ssl_read_ex_ret, pid, lib, "SSL_read_ex", true, true, err, errlen) ||
		    uprobe(p, p->skel->progs.gs_ssl_handshake, pid, lib, "SSL_do_handshake", false, true, err, errlen))
			goto bad;
		/* the handshake's end: the call's entry goes (only a handshake's) */
		if (uprobe(p, p->skel->progs.gs_ssl_handshake_ret, pid, lib, "SSL_do_handshake", true, true, err,
			   errlen))
			goto bad;
	}
	*out = p;
	return 0;
bad:
	gs_tls_probes_close(p);
	return 2;
}

void gs_tls_probes_close(struct gs_tls_probes *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n_links; i++)
		bpf_link__destroy(p->links[i]);
	tls_bpf__destroy(p->skel);
	free(p);
}

/* the object as gs_tls_probes_open loads it (its ring its own here: the
 * verifier sees the same map type), from the skeleton's bytes, the TCP
 * hooks it would take picked (autoload on) */
static struct bpf_object *open_object(const void *arg)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = "tls_bpf");
	size_t sz;
	const void *bytes = tls_bpf__elf_bytes(&sz);
	struct bpf_object *o = bpf_object__open_mem(bytes, sz, &oo);
	(void)arg;
	if (o)
		pick_tcp_hooks(o);
	return o;
}

int gs_tls_probes_check(const uint32_t *pids, uint32_t n_pids, gs_verdict_fn fn, void *arg)
{
	struct gs_tls_lib lib;
	bool any = false;
	for (uint32_t i = 0; i < n_pids && !any; i++)
		any = gs_tls_find_libssl(pids[i], &lib);
	if (!any)
		return -1;
	return gs_load_check_all(open_object, NULL, fn, arg);
}

#endif
