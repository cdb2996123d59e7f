/* SPDX-License-Identifier: BSD-2-Clause */
/* The GIOP framer: cuts one direction's byte stream into GIOP messages.
 *
 * It sees in-order bytes as (offset, data, captured, length): bytes past
 * `captured` existed on the wire but are not in the capture (snaplen, or a gap
 * when data is NULL).  The 12-byte header gives each message's extent, so
 * framing survives missing bytes inside a message; only a header that was not
 * captured, or one that is not GIOP, loses it, and then the framer looks for
 * the next plausible GIOP header.
 *
 * A message head is decoded in place when one segment holds it; only a head
 * that spans segments is copied, into a slot of a fixed pool.
 */
#include "engine_impl.h"

#include <string.h>

/* Bytes searched for a first header before a connection is called not GIOP. */
#define GS_SCAN_BUDGET (64u * 1024u)

static uint8_t *head_buf(struct gs_engine *e, struct gs_dir *dr)
{
	return e->head_pool + (size_t)dr->head_slot * e->cfg.head_max;
}

void gs_framer_release(struct gs_engine *e, struct gs_dir *dr)
{
	if (dr->head_slot != GS_NONE) {
		e->head_free[e->head_free_n++] = dr->head_slot;
		dr->head_slot = GS_NONE;
	}
	dr->head_len = 0;
}

static void not_giop(struct gs_engine *e, struct gs_flow *f)
{
	f->flags |= GS_FLOW_IGNORED;
	f->dir[0].fstate = f->dir[1].fstate = GS_FR_NOT_GIOP;
	gs_framer_release(e, &f->dir[0]);
	gs_framer_release(e, &f->dir[1]);
	e->cnt.non_giop_flows++;
}

/* A TLS record header (RFC 8446 5.1) opening a handshake: content type 22,
 * legacy version 3.1 to 3.4; judged on the bytes there are (a first segment
 * may hold fewer than the three).  No GIOP stream starts so ('G' is 0x47). */
static bool tls_handshake_start(const uint8_t *p, size_t have)
{
	return have >= 1 && p[0] == 22 && (have < 2 || p[1] == 3) &&
	       (have < 3 || (p[2] >= 1 && p[2] <= 4));
}

/* The connection opened with a TLS handshake: encrypted IIOP (or another
 * protocol over TLS); nothing in it can be framed, so nothing is tried. */
static void tls_flow(struct gs_engine *e, struct gs_flow *f)
{
	f->flags |= GS_FLOW_IGNORED | GS_FLOW_TLS;
	f->dir[0].fstate = f->dir[1].fstate = GS_FR_NOT_GIOP;
	gs_framer_release(e, &f->dir[0]);
	gs_framer_release(e, &f->dir[1]);
	e->cnt.tls_flows++;
}

static bool header_is_error(enum giop_error err)
{
	return err == GIOP_ERR_MAGIC || err == GIOP_ERR_VERSION || err == GIOP_ERR_TYPE ||
	       err == GIOP_ERR_FLAGS || err == GIOP_ERR_SIZE;
}

/* Offset of the first plausible GIOP header in p[0..n), or n. */
static uint32_t find_header(const uint8_t *p, uint32_t n, uint32_t max_size)
{
	const uint8_t *q = p, *end = p + n;
	while (n - (uint32_t)(q - p) >= 4) {
		q = memchr(q, 'G', (size_t)(end - q) - 3);
		if (!q)
			break;
		if (giop_plausible_header(q, (size_t)(end - q), max_size))
			return (uint32_t)(q - p);
		q++;
	}
	return n;
}

static void lose_framing(struct gs_engine *e, struct gs_flow *f, int d)
{
	struct gs_dir *dr = &f->dir[d];
	gs_framer_release(e, dr);
	dr->fstate = GS_FR_LOST;
	dr->msg_call = GS_NONE;
	dr->scanned = 0;
}

/* A message header the capture does not hold: a gap (capture loss) or the
 * snapshot length (truncation, reported); framing is lost either way. */
static void header_lost(struct gs_engine *e, struct gs_flow *f, int d, bool gap)
{
	if (gap) {
		f->dir[d].missing = true;
	} else {
		e->cnt.giop_truncated++;
		gs_problem_note(&e->first_truncated, e->packet_no, &f->ep[d], &f->ep[!d],
				"GIOP header cut by the capture's snapshot length");
	}
	lose_framing(e, f, d);
}

/* The head is decoded, or as decoded as it will get. */
/* Why a head was decoded only in part. */
enum cut { CUT_SNAPLEN, CUT_GAP, CUT_LIMIT };

static inline __attribute__((always_inline)) void head_done(struct gs_engine *e, struct gs_flow *f, int d, const struct giop_msg *m,
		      enum giop_res r, enum cut why)
{
	struct gs_dir *dr = &f->dir[d];
	dr->decoded = true;
	if (r == GIOP_INVALID) {
		e->cnt.giop_malformed++;
		gs_problem_note(&e->first_malformed, e->packet_no, &f->ep[d], &f->ep[!d], "malformed GIOP at stream offset %llu: %s",
				(unsigned long long)dr->msg_start, giop_error_name(m->error));
		/* a body error keeps the extent from a good header: skip the message */
		dr->msg_call = GS_NONE;
		dr->more_frags = false;
		dr->mtype = 0xff;
		return;
	}
	f->flags |= GS_FLOW_GIOP;
	dr->mtype = m->type;
	dr->mminor = m->minor;
	dr->more_frags = m->minor >= 1 && m->more_fragments;
	e->cnt.giop_messages++;
	e->cnt.giop_by_type[m->type]++;
	if (r == GIOP_NEED_MORE && why != CUT_LIMIT) {
		if (why == CUT_GAP) {
			dr->missing = true;
		} else {
			e->cnt.giop_truncated++;
			gs_problem_note(&e->first_truncated, e->packet_no, &f->ep[d], &f->ep[!d],
					"GIOP %s cut by the capture's snapshot length",
					giop_type_name(m->type));
		}
	}
	gs_pair_message(e, f, d, m, r);
}

/* Gathers and decodes the head of the current message from one chunk.
 * Returns false when framing was lost (the caller re-examines `pos`). */
static bool head(struct gs_engine *e, struct gs_flow *f, int d, uint64_t off, const uint8_t *data,
		 uint32_t cap, uint32_t len, uint32_t *pos)
{
	struct gs_dir *dr = &f->dir[d];
	uint32_t avail = *pos < cap ? cap - *pos : 0;
	bool rest_captured = avail == len - *pos;
	/* heads_only: the tap left the rest out on purpose, as a limit does */
	enum cut why = data == NULL ? CUT_GAP : e->cfg.heads_only ? CUT_LIMIT : CUT_SNAPLEN;
	const uint8_t *p;
	size_t have;
	struct giop_msg m;
	enum giop_res r;

	if (dr->head_len == 0) {
		p = data + *pos;
		have = avail;
	} else {
		uint32_t room = e->cfg.head_max - dr->head_len;
		uint32_t take = avail < room ? avail : room;
		if (dr->msg_end && dr->msg_end - dr->msg_start - dr->head_len < take)
			take = (uint32_t)(dr->msg_end - dr->msg_start - dr->head_len);
		if (take)
			memcpy(head_buf(e, dr) + dr->head_len, data + *pos, take);
		dr->head_len += take;
		p = head_buf(e, dr);
		have = dr->head_len;
	}
	(void)off;
	r = giop_decode(p, have, e->cfg.max_message_size, &m);
	if (r == GIOP_INVALID && header_is_error(m.error)) {
		if (!(f->flags & GS_FLOW_GIOP) && dr->syn_seen && dr->msg_start == 0 &&
		    tls_handshake_start(p, have)) {
			/* even on a --ports port: a TLS stream holds no GIOP header to frame */
			tls_flow(e, f);
			return false;
		}
		e->cnt.giop_malformed++;
		if (!(f->flags & (GS_FLOW_GIOP | GS_FLOW_FORCED)) && dr->syn_seen && dr->msg_start == 0) {
			/* the stream did not start with GIOP: not an IIOP connection */
			e->cnt.giop_malformed--;
			not_giop(e, f);
			return false;
		}
		gs_problem_note(&e->first_malformed, e->packet_no, &f->ep[d], &f->ep[!d], "malformed GIOP header at stream offset %llu: %s",
				(unsigned long long)dr->msg_start, giop_error_name(m.error));
		lose_framing(e, f, d);
		if (dr->msg_start == off + *pos) /* step over the bad magic */
			*pos += 1;
		return false;
	}
	if (r != GIOP_NEED_MORE) {
		if (!dr->msg_end)
			dr->msg_end = dr->msg_start + m.msg_len;
		head_done(e, f, d, &m, r, CUT_SNAPLEN);
		return true;
	}
	/* NEED_MORE */
	if (have >= GIOP_HEADER_LEN && !dr->msg_end)
		dr->msg_end = dr->msg_start + m.msg_len;
	if (have >= GIOP_HEADER_LEN && m.more_fragments && have >= m.msg_len) {
		/* the header goes on in the next Fragment: take what this one has */
		e->cnt.giop_header_in_fragment++;
		head_done(e, f, d, &m, GIOP_OK, CUT_SNAPLEN);
		return true;
	}
	if (rest_captured && have < e->cfg.head_max &&
	    (!dr->msg_end || dr->msg_end > off + len)) {
		/* more of the head comes in later segments: keep what we have */
		if (dr->head_len == 0) {
			if (e->head_free_n == 0) {
				e->cnt.giop_head_pool_full++;
				why = CUT_LIMIT; /* not the capture's fault: not truncated */
				goto partial;
			}
			dr->head_slot = e->head_free[--e->head_free_n];
			memcpy(head_buf(e, dr), p, have < e->cfg.head_max ? have : e->cfg.head_max);
			dr->head_len = (uint32_t)(have < e->cfg.head_max ? have : e->cfg.head_max);
		}
		return true;
	}
	if (have >= e->cfg.head_max && rest_captured) {
		e->cnt.giop_head_too_large++;
		why = CUT_LIMIT;
	}
partial:
	if (have < GIOP_HEADER_LEN) {
		/* not even the 12-byte header: the extent is unknown */
		header_lost(e, f, d, why == CUT_GAP);
		/* nothing more of this chunk can be framed: its bytes stop here */
		e->cnt.giop_resync_bytes += len - *pos;
		*pos = len;
		return false;
	}
	head_done(e, f, d, &m, GIOP_NEED_MORE, why);
	return true;
}

/* A packet brought bytes of the current message: its own instants (a gap,
 * data NULL, brings none: no packet carried those bytes). */
/* A message starts at stream offset `start` at time ts: its end (0 while its
 * header is still to come), the bounds of its segments' times so far. */
static inline __attribute__((always_inline)) void msg_begin(struct gs_dir *dr, uint64_t start, uint64_t end, int64_t ts,
							       int64_t t_min, int64_t t_max)
{
	dr->fstate = GS_FR_MSG;
	dr->msg_start = start;
	dr->msg_end = end;
	dr->msg_t_first = ts;
	dr->msg_t_min = t_min;
	dr->msg_t_max = t_max;
	dr->msg_fills = 0;      /* msg_fill_first, msg_fill_last: valid once it is not */
	dr->msg_fill_wait = 0;
	dr->msg_prev_seg_ts = 0;
	dr->msg_last_seg_ts = ts;
	dr->decoded = false;
	dr->missing = false;
	dr->head_len = 0;
	dr->msg_call = GS_NONE;
}

static void message_packet(struct gs_dir *dr, const struct gs_src *src)
{
	if (src->ts < dr->msg_t_min)
		dr->msg_t_min = src->ts;
	if (src->ts > dr->msg_t_max)
		dr->msg_t_max = src->ts;
	if (src->fill_wait >= 0 && (!dr->msg_fills || src->packet != dr->msg_fill_last)) {
		if (!dr->msg_fills)
			dr->msg_fill_first = src->packet;
		dr->msg_fills++;
		dr->msg_fill_last = src->packet;
		if (src->fill_wait > dr->msg_fill_wait)
			dr->msg_fill_wait = src->fill_wait;
	}
}

/* The common chunk in one pass: every byte captured, brought by a packet that
 * fills no gap, on a connection known to carry GIOP, at a message boundary or
 * inside a message whose head is decoded.  Each message whose head decodes
 * whole goes through the same steps as in the state machine below (the SYNC
 * set-up, message_packet, head's GIOP_OK branch, the end), without the tests
 * for the rare cases those steps cannot meet here.  Returns how far it got:
 * the state machine takes the rest (it decodes again a head this left). */
static inline __attribute__((always_inline)) uint32_t whole_messages(struct gs_engine *e, struct gs_flow *f, int d, uint64_t off,
			       const uint8_t *data, uint32_t len, int64_t ts)
{
	struct gs_dir *dr = &f->dir[d];
	uint32_t pos = 0;

	if (dr->fstate == GS_FR_MSG) {
		uint64_t n;
		if (!dr->decoded || !dr->msg_end)
			return 0;
		if (ts < dr->msg_t_min)
			dr->msg_t_min = ts;
		if (ts > dr->msg_t_max)
			dr->msg_t_max = ts;
		n = dr->msg_end - off < len ? dr->msg_end - off : len;
		if (n && ts != dr->msg_last_seg_ts) {
			dr->msg_prev_seg_ts = dr->msg_last_seg_ts;
			dr->msg_last_seg_ts = ts;
		}
		pos = (uint32_t)n;
		if (off + pos != dr->msg_end)
			return pos;
		gs_framer_release(e, dr);
		gs_pair_message_end(e, f, d, ts);
		dr->fstate = GS_FR_SYNC;
		dr->msg_call = GS_NONE;
	}
	while (pos < len && f->in_use && dr->fstate == GS_FR_SYNC && len - pos >= GIOP_HEADER_LEN) {
		struct giop_msg m;
		uint32_t n;
		if (giop_decode(data + pos, len - pos, e->cfg.max_message_size, &m) != GIOP_OK)
			break;
		msg_begin(dr, off + pos, off + pos + m.msg_len, ts, ts, ts);
		head_done(e, f, d, &m, GIOP_OK, CUT_SNAPLEN);
		n = m.msg_len < len - pos ? m.msg_len : len - pos;
		pos += n;
		if (off + pos == dr->msg_end) {
			gs_framer_release(e, dr);
			gs_pair_message_end(e, f, d, ts);
			dr->fstate = GS_FR_SYNC;
			dr->msg_call = GS_NONE;
		}
	}
	return pos;
}

void gs_framer_bytes(struct gs_engine *e, struct gs_flow *f, int d, uint64_t off,
		     const uint8_t *data, uint32_t cap, uint32_t len, const struct gs_src *src)
{
	struct gs_dir *dr = &f->dir[d];
	uint32_t pos = 0;
	int64_t ts = src->ts;

	if (data == NULL)
		cap = 0;
	else if (cap == len && src->fill_wait < 0 && (f->flags & GS_FLOW_GIOP) && f->in_use)
		pos = whole_messages(e, f, d, off, data, len, ts);
	while (pos < len && f->in_use) {
		switch (dr->fstate) {
		case GS_FR_NOT_GIOP:
			return;
		case GS_FR_LOST: {
			uint32_t k;
			if (pos >= cap) {
				e->cnt.giop_resync_bytes += len - pos;
				return;
			}
			k = find_header(data + pos, cap - pos, e->cfg.max_message_size);
			e->cnt.giop_resync_bytes += k;
			dr->scanned += k;
			pos += k;
			if (pos >= cap) {
				e->cnt.giop_resync_bytes += len - cap;
				if (!(f->flags & (GS_FLOW_GIOP | GS_FLOW_FORCED)) && dr->scanned > GS_SCAN_BUDGET)
					not_giop(e, f);
				return;
			}
			dr->fstate = GS_FR_SYNC;
			break;
		}
		case GS_FR_SYNC:
			if (pos >= cap) {
				if (data && e->cfg.heads_only && dr->syn_seen && off + pos == 0 &&
				    !(f->flags & (GS_FLOW_GIOP | GS_FLOW_FORCED))) {
					/* the tap ships a head wherever a GIOP message starts: none
					 * at the start of a stream it saw open is no IIOP (TLS, say) */
					not_giop(e, f);
					return;
				}
				/* the next header was not captured */
				header_lost(e, f, d, data == NULL);
				break;
			}
			if (!(f->flags & (GS_FLOW_GIOP | GS_FLOW_FORCED)) && !dr->syn_seen &&
			    !giop_plausible_header(data + pos, cap - pos, e->cfg.max_message_size)) {
				/* joined mid-connection, mid-message: look for a header */
				lose_framing(e, f, d);
				break;
			}
			msg_begin(dr, off + pos, 0, ts, INT64_MAX, INT64_MIN);
			/* pos < cap <= len and the flow is in use: straight into the message */
			/* fall through */
		case GS_FR_MSG: {
			uint64_t cur = off + pos;
			uint32_t n;
			/* pos < len: the byte at pos is this message's */
			if (data)
				message_packet(dr, src);
			if (!dr->decoded) {
				if (!head(e, f, d, off, data, cap, len, &pos))
					break;
				if (!dr->decoded && !dr->msg_end) {
					/* fewer than 12 bytes so far, all kept in the head */
					pos = len;
					break;
				}
			}
			n = (uint32_t)((dr->msg_end - cur) < (uint64_t)(len - pos) ? dr->msg_end - cur : len - pos);
			/* bytes no packet brought (a gap the capture never filled): the
			 * message's times are bounds.  Bytes a packet carried but the
			 * snapshot length cut were seen: their times stand. */
			if (n && !data && !src->packet)
				dr->missing = true;
			if (n) {
				if (ts != dr->msg_last_seg_ts) {
					dr->msg_prev_seg_ts = dr->msg_last_seg_ts;
					dr->msg_last_seg_ts = ts;
				}
			}
			pos += n;
			if (off + pos == dr->msg_end) {
				if (!dr->decoded) {
					/* the whole message fitted in the gathered head yet did not decode:
					 * cannot happen (decode sees the full message); be safe */
					dr->decoded = true;
				}
				gs_framer_release(e, dr);
				gs_pair_message_end(e, f, d, ts);
				dr->fstate = GS_FR_SYNC;
				dr->msg_call = GS_NONE;
			}
			break;
		}
		}
	}
}
