/* TCP reassembly, one direction at a time.
 *
 * Sequence numbers become 64-bit stream offsets (offset 0 = first byte after
 * the SYN, or the first byte seen when the capture began mid-connection), so
 * wrap-around is handled in one place.  In-order bytes go straight to the
 * framer without a copy; out-of-order segments are copied and held, up to a
 * bound per direction and in all, with the time they arrived (a byte's time is
 * the first time the capture saw it).  Bytes already seen are a retransmission
 * (counted, attributed to the calls they belong to).  Bytes the capture never
 * had are declared a gap when the receiver acknowledges past them, when the
 * hold bound is reached, or when the connection or the input ends.
 */
#include "engine_impl.h"

#include <stdlib.h>
#include <string.h>

static int64_t stream_off(const struct gs_dir *dr, uint32_t seq)
{
	uint32_t expect = dr->base_seq + (uint32_t)dr->next;
	return (int64_t)dr->next + (int32_t)(seq - expect);
}

static void check_fin(struct gs_engine *e, struct gs_flow *f, int d)
{
	struct gs_dir *dr = &f->dir[d];
	if (dr->fin_seen && !dr->fin_done && dr->next >= dr->fin_off) {
		dr->fin_done = true;
		gs_pair_direction_closed(e, f, d);
	}
}

static void deliver(struct gs_engine *e, struct gs_flow *f, int d, const uint8_t *data,
		    uint32_t cap, uint32_t len, int64_t ts)
{
	struct gs_dir *dr = &f->dir[d];
	uint64_t off = dr->next;
	dr->next += len;
	gs_framer_bytes(e, f, d, off, data, cap, len, ts);
}

static void free_ooo(struct gs_engine *e, struct gs_dir *dr, struct gs_ooo *o)
{
	dr->ooo_bytes -= o->cap;
	e->ooo_total -= o->cap;
	free(o);
}

/* Delivers held segments that are now in order. */
static void drain(struct gs_engine *e, struct gs_flow *f, int d)
{
	struct gs_dir *dr = &f->dir[d];
	while (dr->ooo && dr->ooo->off <= dr->next) {
		struct gs_ooo *o = dr->ooo;
		uint64_t end = o->off + o->len;
		dr->ooo = o->next;
		if (end > dr->next) {
			uint64_t trim = dr->next - o->off;
			uint32_t cap = o->cap > trim ? o->cap - (uint32_t)trim : 0;
			deliver(e, f, d, o->data + (cap ? trim : 0), cap, (uint32_t)(end - dr->next), o->ts);
		}
		free_ooo(e, dr, o);
		if (!f->in_use)
			return;
	}
}

/* The capture never had [next, upto): tell the framer, then go on. */
static void gap(struct gs_engine *e, struct gs_flow *f, int d, uint64_t upto, int64_t ts)
{
	struct gs_dir *dr = &f->dir[d];
	while (upto > dr->next) {
		uint64_t n = upto - dr->next;
		uint32_t chunk = n > 0x7fffffff ? 0x7fffffff : (uint32_t)n;
		e->cnt.gaps++;
		e->cnt.gap_bytes += chunk;
		deliver(e, f, d, NULL, 0, chunk, ts);
		if (!f->in_use)
			return;
	}
	drain(e, f, d);
}

/* True when every byte of [off, end) is in held segments already. */
static bool held(const struct gs_dir *dr, uint64_t off, uint64_t end)
{
	for (const struct gs_ooo *o = dr->ooo; o && o->off <= off; o = o->next) {
		if (o->off + o->len > off)
			off = o->off + o->len;
		if (off >= end)
			return true;
	}
	return false;
}

static bool hold(struct gs_engine *e, struct gs_dir *dr, uint64_t off, const struct gs_packet *pk)
{
	struct gs_ooo *o, **pp;
	uint32_t cap = pk->payload_cap;
	if ((uint64_t)dr->ooo_bytes + cap > e->cfg.max_ooo_bytes ||
	    e->ooo_total + cap > e->cfg.max_ooo_total)
		return false;
	o = malloc(sizeof *o + cap);
	if (!o)
		return false;
	o->off = off;
	o->len = pk->payload_len;
	o->cap = cap;
	o->ts = pk->ts_ns;
	o->packet = e->packet_no;
	memcpy(o->data, pk->payload, cap);
	for (pp = &dr->ooo; *pp && (*pp)->off <= off; pp = &(*pp)->next)
		;
	o->next = *pp;
	*pp = o;
	dr->ooo_bytes += cap;
	e->ooo_total += cap;
	return true;
}

void gs_reasm_segment(struct gs_engine *e, struct gs_flow *f, int d, const struct gs_packet *pk)
{
	struct gs_dir *dr = &f->dir[d];
	uint8_t flags = pk->tcp.flags;
	int64_t off;
	uint64_t end;

	if (flags & GS_TCP_SYN) {
		dr->base_seq = pk->tcp.seq + 1;
		dr->started = true;
		dr->syn_seen = true;
		dr->next = 0;
	}
	if (pk->payload_len == 0)
		goto fin;
	e->cnt.segments++;
	if (!dr->started) {
		/* The capture began mid-connection: start where we are. */
		dr->base_seq = pk->tcp.seq;
		dr->started = true;
		dr->next = 0;
	}
	off = stream_off(dr, pk->tcp.seq);
	if (flags & GS_TCP_SYN)
		off = 0;
	end = (uint64_t)(off + (int64_t)pk->payload_len);
	if (off < 0 && (int64_t)end <= 0) {
		/* entirely before the first byte we track: old data again */
		e->cnt.retransmits++;
		goto fin;
	}
	if (end <= dr->next) {
		e->cnt.retransmits++;
		gs_pair_retransmit(e, f, d, off < 0 ? 0 : (uint64_t)off, end);
		goto fin;
	}
	if (off > (int64_t)dr->next) {
		if (held(dr, (uint64_t)off, end)) {
			e->cnt.retransmits++;
			gs_pair_retransmit(e, f, d, (uint64_t)off, end);
			goto fin;
		}
		e->cnt.out_of_order++;
		if (!hold(e, dr, (uint64_t)off, pk)) {
			/* The bound is reached: stop waiting for the hole. */
			uint64_t upto = (uint64_t)off;
			if (dr->ooo && dr->ooo->off < upto)
				upto = dr->ooo->off;
			e->cnt.ooo_dropped_bytes += upto - dr->next;
			gap(e, f, d, upto, pk->ts_ns);
			if (!f->in_use)
				return;
			if ((uint64_t)off <= dr->next) /* now in order */
				goto in_order;
			/* still beyond held data: hold it or give it up as a gap too */
			if (!hold(e, dr, (uint64_t)off, pk)) {
				gap(e, f, d, (uint64_t)off, pk->ts_ns);
				if (!f->in_use)
					return;
				goto in_order;
			}
		}
		goto fin;
	}
in_order:
	{
		const uint8_t *data = pk->payload;
		uint32_t cap = pk->payload_cap;
		uint64_t trim = (uint64_t)((int64_t)dr->next - off);
		if (trim) {
			e->cnt.overlaps++;
			cap = cap > trim ? cap - (uint32_t)trim : 0;
			data = cap ? data + trim : NULL;
		}
		deliver(e, f, d, data, cap, (uint32_t)(end - dr->next), pk->ts_ns);
		if (!f->in_use)
			return;
		drain(e, f, d);
		if (!f->in_use)
			return;
	}
fin:
	if ((flags & GS_TCP_FIN) && dr->started && !dr->fin_seen) {
		int64_t fo = stream_off(dr, pk->tcp.seq) + pk->payload_len;
		dr->fin_seen = true;
		dr->fin_off = fo < 0 ? 0 : (uint64_t)fo;
	}
	check_fin(e, f, d);
}

/* An ACK from direction d acknowledges the bytes of the other direction. */
void gs_reasm_ack(struct gs_engine *e, struct gs_flow *f, int d, uint32_t ack)
{
	struct gs_dir *rd = &f->dir[!d];
	int64_t acked;
	uint64_t upto;
	if (!rd->started)
		return;
	acked = stream_off(rd, ack);
	if (acked <= (int64_t)rd->next)
		return;
	upto = (uint64_t)acked;
	if (rd->fin_seen && upto > rd->fin_off)
		upto = rd->fin_off;
	/* The receiver has bytes the capture never saw: they will not come again. */
	while (f->in_use && upto > rd->next) {
		uint64_t stop = upto;
		if (rd->ooo && rd->ooo->off < stop)
			stop = rd->ooo->off;
		if (stop > rd->next)
			gap(e, f, !d, stop, e->now);
		else
			drain(e, f, !d);
	}
	if (f->in_use)
		check_fin(e, f, !d);
}

/* End of input or of the connection: deliver what is held, across the holes. */
void gs_reasm_flush(struct gs_engine *e, struct gs_flow *f, int d)
{
	struct gs_dir *dr = &f->dir[d];
	while (f->in_use && dr->ooo) {
		if (dr->ooo->off > dr->next)
			gap(e, f, d, dr->ooo->off, dr->ooo->ts);
		else
			drain(e, f, d);
	}
}

void gs_reasm_free(struct gs_engine *e, struct gs_dir *dr)
{
	while (dr->ooo) {
		struct gs_ooo *o = dr->ooo;
		dr->ooo = o->next;
		free_ooo(e, dr, o);
	}
}
