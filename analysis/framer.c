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
#include "framer.h"

#include <errno.h>
#include <stdlib.h>

#include "table_mem.h"

#include <string.h>

/* Bytes searched for a first header before a connection is called not GIOP. */
#define GS_SCAN_BUDGET (64u * 1024u)

int gs_framer_init(struct gs_framer *fm, uint32_t slots, uint32_t head_max)
{
	fm->head_slots = slots;
	fm->head_max = head_max;
	fm->head_pool = gs_table_new((size_t)slots * head_max);
	fm->head_free = malloc((size_t)slots * sizeof *fm->head_free);
	if (!fm->head_pool || !fm->head_free)
		return ENOMEM;
	for (uint32_t i = 0; i < slots; i++)
		fm->head_free[i] = slots - 1 - i;
	fm->head_free_n = slots;
	return 0;
}

void gs_framer_free(struct gs_framer *fm)
{
	gs_table_free(fm->head_pool);
	free(fm->head_free);
	fm->head_pool = NULL;
	fm->head_free = NULL;
}

static uint8_t *head_buf(struct gs_framer *fm, const struct gs_pair_dir *dr)
{
	return fm->head_pool + (size_t)dr->msg.head_slot * fm->head_max;
}

void gs_framer_release(struct gs_framer *fm, struct gs_framer_dir *fd)
{
	struct gs_pair_dir *dr = &fd->pr;
	if (dr->msg.head_slot != GS_NONE) {
		fm->head_free[fm->head_free_n++] = dr->msg.head_slot;
		dr->msg.head_slot = GS_NONE;
	}
	dr->msg.head_len = 0;
}

/* Both directions of the connection stop framing. */
static void stop_framing(struct gs_framer *fm, struct gs_frame_flags *fs, struct gs_framer_dir *fd, int d)
{
	ptrdiff_t to_peer = d ? -fm->dir_stride : fm->dir_stride;
	struct gs_frame_flags *pfs = (struct gs_frame_flags *)((char *)fs + to_peer);
	fs->fstate = pfs->fstate = GS_FR_NOT_GIOP;
	gs_framer_release(fm, fd);
	gs_framer_release(fm, (struct gs_framer_dir *)((char *)fd + to_peer));
}

static void not_giop(struct gs_framer *fm, struct gs_conn *f, struct gs_frame_flags *fs, struct gs_framer_dir *fd, int d)
{
	f->flags |= GS_FLOW_IGNORED;
	stop_framing(fm, fs, fd, d);
	fm->cnt->non_giop_flows++;
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
static void tls_flow(struct gs_framer *fm, struct gs_conn *f, struct gs_frame_flags *fs, struct gs_framer_dir *fd, int d)
{
	f->flags |= GS_FLOW_IGNORED | GS_FLOW_TLS;
	stop_framing(fm, fs, fd, d);
	fm->cnt->tls_flows++;
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

static void lose_framing(struct gs_framer *fm, struct gs_frame_flags *fs, struct gs_framer_dir *fd)
{
	struct gs_pair_dir *dr = &fd->pr;
	gs_framer_release(fm, fd);
	fs->fstate = GS_FR_LOST;
	dr->msg_call = GS_NONE;
	fd->scanned = 0;
}

/* A message header the capture does not hold: a gap (capture loss) or the
 * snapshot length (truncation, reported); framing is lost either way. */
static void header_lost(struct gs_framer *fm, struct gs_conn *f, struct gs_frame_flags *fs, struct gs_framer_dir *fd, int d, bool gap)
{
	if (gap) {
		fd->pr.msg.missing = true;
	} else {
		fm->cnt->giop_truncated++;
		gs_problem_note(fm->first_truncated, *fm->packet_no, &f->ep[d], &f->ep[!d],
				"GIOP header cut by the capture's snapshot length");
	}
	lose_framing(fm, fs, fd);
}

/* The head is decoded, or as decoded as it will get. */
/* Why a head was decoded only in part. */
enum cut { CUT_SNAPLEN, CUT_GAP, CUT_LIMIT };

static inline __attribute__((always_inline)) void head_done(struct gs_framer *fm, struct gs_conn *f, struct gs_frame_flags *fs, struct gs_framer_dir *fd, int d, const struct giop_msg *m,
		      enum giop_res r, enum cut why, uint32_t seq_base)
{
	struct gs_pair_dir *dr = &fd->pr;
	fs->decoded = true;
	if (r == GIOP_INVALID) {
		fm->cnt->giop_malformed++;
		gs_problem_note(fm->first_malformed, *fm->packet_no, &f->ep[d], &f->ep[!d], "malformed GIOP at stream offset %llu: %s",
				(unsigned long long)dr->msg.start, giop_error_name(m->error));
		/* a body error keeps the extent from a good header: skip the message */
		dr->msg_call = GS_NONE;
		dr->msg.more_frags = false;
		return;
	}
	f->flags |= GS_FLOW_GIOP;
	dr->msg.more_frags = m->minor >= 1 && m->more_fragments;
	fm->cnt->giop_messages++;
	fm->cnt->giop_by_type[m->type]++;
	if (r == GIOP_NEED_MORE && why != CUT_LIMIT) {
		if (why == CUT_GAP) {
			dr->msg.missing = true;
		} else {
			fm->cnt->giop_truncated++;
			gs_problem_note(fm->first_truncated, *fm->packet_no, &f->ep[d], &f->ep[!d],
					"GIOP %s cut by the capture's snapshot length",
					giop_type_name(m->type));
		}
	}
	gs_pair_message(fm->pr, f, dr, d, m, seq_base);
}

/* Gathers and decodes the head of the current message from one chunk.
 * Returns false when framing was lost (the caller re-examines `pos`). */
static bool head(struct gs_framer *fm, struct gs_conn *f, struct gs_frame_flags *fs, struct gs_framer_dir *fd, int d, uint64_t off, const uint8_t *data,
		 uint32_t cap, uint32_t len, uint32_t *pos, const struct gs_src *src)
{
	struct gs_pair_dir *dr = &fd->pr;
	uint32_t avail = *pos < cap ? cap - *pos : 0;
	bool rest_captured = avail == len - *pos;
	/* heads_only: the tap left the rest out on purpose, as a limit does */
	enum cut why = data == NULL ? CUT_GAP : fm->heads_only ? CUT_LIMIT : CUT_SNAPLEN;
	const uint8_t *p;
	size_t have;
	struct giop_msg m;
	enum giop_res r;

	if (dr->msg.head_len == 0) {
		p = data + *pos;
		have = avail;
	} else {
		uint32_t room = fm->head_max - dr->msg.head_len;
		uint32_t take = avail < room ? avail : room;
		if (dr->msg.end && dr->msg.end - dr->msg.start - dr->msg.head_len < take)
			take = (uint32_t)(dr->msg.end - dr->msg.start - dr->msg.head_len);
		if (take)
			memcpy(head_buf(fm, dr) + dr->msg.head_len, data + *pos, take);
		dr->msg.head_len += take;
		p = head_buf(fm, dr);
		have = dr->msg.head_len;
	}
	(void)off;
	r = giop_decode(p, have, fm->max_message_size, &m);
	if (r == GIOP_INVALID && header_is_error(m.error)) {
		if (!(f->flags & GS_FLOW_GIOP) && src->syn_seen && dr->msg.start == 0 &&
		    tls_handshake_start(p, have)) {
			/* even on a --ports port: a TLS stream holds no GIOP header to frame */
			tls_flow(fm, f, fs, fd, d);
			return false;
		}
		fm->cnt->giop_malformed++;
		if (!(f->flags & (GS_FLOW_GIOP | GS_FLOW_FORCED)) && src->syn_seen && dr->msg.start == 0) {
			/* the stream did not start with GIOP: not an IIOP connection */
			fm->cnt->giop_malformed--;
			not_giop(fm, f, fs, fd, d);
			return false;
		}
		gs_problem_note(fm->first_malformed, *fm->packet_no, &f->ep[d], &f->ep[!d], "malformed GIOP header at stream offset %llu: %s",
				(unsigned long long)dr->msg.start, giop_error_name(m.error));
		lose_framing(fm, fs, fd);
		if (dr->msg.start == off + *pos) /* step over the bad magic */
			*pos += 1;
		return false;
	}
	if (r != GIOP_NEED_MORE) {
		if (!dr->msg.end)
			dr->msg.end = dr->msg.start + m.msg_len;
		head_done(fm, f, fs, fd, d, &m, r, CUT_SNAPLEN, src->seq_base);
		return true;
	}
	/* NEED_MORE */
	if (have >= GIOP_HEADER_LEN && !dr->msg.end)
		dr->msg.end = dr->msg.start + m.msg_len;
	if (have >= GIOP_HEADER_LEN && m.more_fragments && have >= m.msg_len) {
		/* the header goes on in the next Fragment: take what this one has */
		fm->cnt->giop_header_in_fragment++;
		head_done(fm, f, fs, fd, d, &m, GIOP_OK, CUT_SNAPLEN, src->seq_base);
		return true;
	}
	if (rest_captured && have < fm->head_max &&
	    (!dr->msg.end || dr->msg.end > off + len)) {
		/* more of the head comes in later segments: keep what we have */
		if (dr->msg.head_len == 0) {
			if (fm->head_free_n == 0) {
				fm->cnt->giop_head_pool_full++;
				why = CUT_LIMIT; /* not the capture's fault: not truncated */
				goto partial;
			}
			dr->msg.head_slot = fm->head_free[--fm->head_free_n];
			memcpy(head_buf(fm, dr), p, have < fm->head_max ? have : fm->head_max);
			dr->msg.head_len = (uint32_t)(have < fm->head_max ? have : fm->head_max);
		}
		return true;
	}
	if (have >= fm->head_max && rest_captured) {
		fm->cnt->giop_head_too_large++;
		why = CUT_LIMIT;
	}
partial:
	if (have < GIOP_HEADER_LEN) {
		/* not even the 12-byte header: the extent is unknown */
		header_lost(fm, f, fs, fd, d, why == CUT_GAP);
		/* nothing more of this chunk can be framed: its bytes stop here */
		fm->cnt->giop_resync_bytes += len - *pos;
		*pos = len;
		return false;
	}
	head_done(fm, f, fs, fd, d, &m, GIOP_NEED_MORE, why, src->seq_base);
	return true;
}

/* A packet brought bytes of the current message: its own instants (a gap,
 * data NULL, brings none: no packet carried those bytes). */
/* A message starts at stream offset `start` at time ts: its end (0 while its
 * header is still to come), the bounds of its segments' times so far. */
static inline __attribute__((always_inline)) void msg_begin(struct gs_frame_flags *fs, struct gs_pair_dir *dr, uint64_t start, uint64_t end, int64_t ts,
							       int64_t t_min, int64_t t_max)
{
	fs->fstate = GS_FR_MSG;
	dr->msg.start = start;
	dr->msg.end = end;
	dr->msg.t_first = ts;
	dr->msg.t_min = t_min;
	dr->msg.t_max = t_max;
	dr->msg.fills = 0;      /* msg_fill_first, msg_fill_last: valid once it is not */
	dr->msg.fill_wait = 0;
	dr->msg.prev_seg_ts = 0;
	dr->msg.last_seg_ts = ts;
	fs->decoded = false;
	dr->msg.missing = false;
	dr->msg.head_len = 0;
	dr->msg_call = GS_NONE;
}

static void message_packet(struct gs_pair_dir *dr, const struct gs_src *src)
{
	if (src->ts < dr->msg.t_min)
		dr->msg.t_min = src->ts;
	if (src->ts > dr->msg.t_max)
		dr->msg.t_max = src->ts;
	if (src->fill_wait >= 0 && (!dr->msg.fills || src->packet != dr->msg_fill_last)) {
		if (!dr->msg.fills)
			dr->msg_fill_first = src->packet;
		dr->msg.fills++;
		dr->msg_fill_last = src->packet;
		if (src->fill_wait > dr->msg.fill_wait)
			dr->msg.fill_wait = src->fill_wait;
	}
}

/* The common chunk in one pass: every byte captured, brought by a packet that
 * fills no gap, on a connection known to carry GIOP, at a message boundary or
 * inside a message whose head is decoded.  Each message whose head decodes
 * whole goes through the same steps as in the state machine below (the SYNC
 * set-up, message_packet, head's GIOP_OK branch, the end), without the tests
 * for the rare cases those steps cannot meet here.  Returns how far it got:
 * the state machine takes the rest (it decodes again a head this left). */
static inline __attribute__((always_inline)) uint32_t whole_messages(struct gs_framer *fm, struct gs_conn *f, struct gs_frame_flags *fs, struct gs_framer_dir *fd, int d, uint64_t off,
			       const uint8_t *data, uint32_t len, const struct gs_src *src)
{
	int64_t ts = src->ts;
	struct gs_pair_dir *dr = &fd->pr;
	uint32_t pos = 0;

	if (fs->fstate == GS_FR_MSG) {
		uint64_t n;
		if (!fs->decoded || !dr->msg.end)
			return 0;
		if (ts < dr->msg.t_min)
			dr->msg.t_min = ts;
		if (ts > dr->msg.t_max)
			dr->msg.t_max = ts;
		n = dr->msg.end - off < len ? dr->msg.end - off : len;
		if (n && ts != dr->msg.last_seg_ts) {
			dr->msg.prev_seg_ts = dr->msg.last_seg_ts;
			dr->msg.last_seg_ts = ts;
		}
		pos = (uint32_t)n;
		if (off + pos != dr->msg.end)
			return pos;
		gs_framer_release(fm, fd);
		gs_pair_message_end(fm->pr, dr, d, ts, src->peer_ack_ts);
		fs->fstate = GS_FR_SYNC;
		dr->msg_call = GS_NONE;
	}
	while (pos < len && f->in_use && fs->fstate == GS_FR_SYNC && len - pos >= GIOP_HEADER_LEN) {
		struct giop_msg m;
		uint32_t n;
		if (giop_decode(data + pos, len - pos, fm->max_message_size, &m) != GIOP_OK)
			break;
		msg_begin(fs, dr, off + pos, off + pos + m.msg_len, ts, ts, ts);
		head_done(fm, f, fs, fd, d, &m, GIOP_OK, CUT_SNAPLEN, src->seq_base);
		n = m.msg_len < len - pos ? m.msg_len : len - pos;
		pos += n;
		if (off + pos == dr->msg.end) {
			gs_framer_release(fm, fd);
			gs_pair_message_end(fm->pr, dr, d, ts, src->peer_ack_ts);
			fs->fstate = GS_FR_SYNC;
			dr->msg_call = GS_NONE;
		}
	}
	return pos;
}

void gs_framer_bytes(struct gs_framer *fm, struct gs_conn *f, struct gs_frame_flags *fs, struct gs_framer_dir *fd, int d, uint64_t off,
		     const uint8_t *data, uint32_t cap, uint32_t len, const struct gs_src *src)
{
	struct gs_pair_dir *dr = &fd->pr;
	uint32_t pos = 0;
	int64_t ts = src->ts;

	if (data == NULL)
		cap = 0;
	else if (cap == len && src->fill_wait < 0 && (f->flags & GS_FLOW_GIOP) && f->in_use)
		pos = whole_messages(fm, f, fs, fd, d, off, data, len, src);
	while (pos < len && f->in_use) {
		switch (fs->fstate) {
		case GS_FR_NOT_GIOP:
			return;
		case GS_FR_LOST: {
			uint32_t k;
			if (pos >= cap) {
				fm->cnt->giop_resync_bytes += len - pos;
				return;
			}
			k = find_header(data + pos, cap - pos, fm->max_message_size);
			fm->cnt->giop_resync_bytes += k;
			fd->scanned += k;
			pos += k;
			if (pos >= cap) {
				fm->cnt->giop_resync_bytes += len - cap;
				if (!(f->flags & (GS_FLOW_GIOP | GS_FLOW_FORCED)) && fd->scanned > GS_SCAN_BUDGET)
					not_giop(fm, f, fs, fd, d);
				return;
			}
			fs->fstate = GS_FR_SYNC;
			break;
		}
		case GS_FR_SYNC:
			if (pos >= cap) {
				if (data && fm->heads_only && src->syn_seen && off + pos == 0 &&
				    !(f->flags & (GS_FLOW_GIOP | GS_FLOW_FORCED))) {
					/* the tap ships a head wherever a GIOP message starts: none
					 * at the start of a stream it saw open is no IIOP (TLS, say) */
					not_giop(fm, f, fs, fd, d);
					return;
				}
				/* the next header was not captured */
				header_lost(fm, f, fs, fd, d, data == NULL);
				break;
			}
			if (!(f->flags & (GS_FLOW_GIOP | GS_FLOW_FORCED)) && !src->syn_seen &&
			    !giop_plausible_header(data + pos, cap - pos, fm->max_message_size)) {
				/* joined mid-connection, mid-message: look for a header */
				lose_framing(fm, fs, fd);
				break;
			}
			msg_begin(fs, dr, off + pos, 0, ts, INT64_MAX, INT64_MIN);
			/* pos < cap <= len and the flow is in use: straight into the message */
			/* fall through */
		case GS_FR_MSG: {
			uint64_t cur = off + pos;
			uint32_t n;
			/* pos < len: the byte at pos is this message's */
			if (data)
				message_packet(dr, src);
			if (!fs->decoded) {
				if (!head(fm, f, fs, fd, d, off, data, cap, len, &pos, src))
					break;
				if (!fs->decoded && !dr->msg.end) {
					/* fewer than 12 bytes so far, all kept in the head */
					pos = len;
					break;
				}
			}
			n = (uint32_t)((dr->msg.end - cur) < (uint64_t)(len - pos) ? dr->msg.end - cur : len - pos);
			/* bytes no packet brought (a gap the capture never filled): the
			 * message's times are bounds.  Bytes a packet carried but the
			 * snapshot length cut were seen: their times stand. */
			if (n && !data && !src->packet)
				dr->msg.missing = true;
			if (n) {
				if (ts != dr->msg.last_seg_ts) {
					dr->msg.prev_seg_ts = dr->msg.last_seg_ts;
					dr->msg.last_seg_ts = ts;
				}
			}
			pos += n;
			if (off + pos == dr->msg.end) {
				if (!fs->decoded) {
					/* the whole message fitted in the gathered head yet did not decode:
					 * cannot happen (decode sees the full message); be safe */
					fs->decoded = true;
				}
				gs_framer_release(fm, fd);
				gs_pair_message_end(fm->pr, dr, d, ts, src->peer_ack_ts);
				fs->fstate = GS_FR_SYNC;
				dr->msg_call = GS_NONE;
			}
			break;
		}
		}
	}
}
