/* SPDX-License-Identifier: BSD-2-Clause */
/* Rows are built with hand-rolled number formatting, without printf: printf
 * per field is most of the cost otherwise.  A row goes straight into the
 * stream's own buffer when that is fully buffered and has room for the longest
 * row (`read`: one room test per row, no copy, no fwrite; see stream_room);
 * otherwise it is built on the stack and written with one fwrite, which keeps
 * the stream's buffering the caller's choice: per line for live and attach (each
 * call is a line the moment it ends).  A connection's "client,server," and the
 * recent operation names are kept formatted in the caller's cache. */
#include "sink_pairs.h"

#include <stdint.h>
#include <string.h>

#include "../decoders/giop/giop.h"
#include "endpoint.h"
#include "fmt_num.h"

_Static_assert(2 * (GS_ENDPOINT_TEXT_MAX + 1) <= UINT8_MAX, "gs_pairs_ep_text.len is a uint8_t");
_Static_assert(2 * (GS_ENDPOINT_TEXT_MAX + 1) <= GS_PAIRS_PAIR_TEXT, "a pair's text fits its slot");

/* The longest strings a row carries, and the worst a JSON escape makes of a
 * byte (\u00XX): the buffer holds the longest row there can be, so a row is
 * never cut (a cut JSON row would lose its closing brace). */
#define ROW_OP_MAX 4096
#define ROW_EXC_MAX 1024
#define ROW_ESCAPE_MAX 6
#define ROW_REST_MAX 2048 /* keys, numbers, times, endpoints, flags */

#define LINE_CAP (ROW_ESCAPE_MAX * (ROW_OP_MAX + ROW_EXC_MAX) + ROW_REST_MAX)
struct line {
	char *buf;                     /* LINE_CAP bytes: the stream's own, or on the stack */
	size_t n;
	struct gs_pairs_sec *sec;      /* the cache's, or own_sec without a cache */
	struct gs_pairs_sec own_sec;
};

/* a field that does not fit: as much of it as does (the row is cut) */
static __attribute__((noinline)) void put_cut(struct line *l, const char *s, size_t n)
{
	if (n > LINE_CAP - l->n)
		n = LINE_CAP - l->n;
	memcpy(l->buf + l->n, s, n);
	l->n += n;
}

/* Always inlined, with the cut out of line: for literals n stays a constant,
 * strlen folds and the copy becomes a few moves instead of two calls. */
#define INLINE static inline __attribute__((always_inline))

INLINE void put(struct line *l, const char *s, size_t n)
{
	if (n > LINE_CAP - l->n) {
		put_cut(l, s, n);
		return;
	}
	memcpy(l->buf + l->n, s, n);
	l->n += n;
}

INLINE void puts_(struct line *l, const char *s) { put(l, s, strlen(s)); }
INLINE void putc_(struct line *l, char ch) { put(l, &ch, 1); }

/* Numbers go straight into the line when the longest form fits (always, but
 * for a JSON row already cut by an operation name of escapes); otherwise through
 * put(), which cuts the row at the buffer's end exactly as any other field. */
static void put_u64(struct line *l, uint64_t v)
{
	char tmp[GS_FMT_U64_MAX];
	if (LINE_CAP - l->n >= GS_FMT_U64_MAX) {
		l->n += gs_fmt_u64(l->buf + l->n, v);
		return;
	}
	put(l, tmp, gs_fmt_u64(tmp, v));
}

/* v with `dec` decimals: ns as seconds (9) or as microseconds (3). */
static void put_fixed(struct line *l, int64_t v, int dec)
{
	char tmp[GS_FMT_FIXED_MAX];
	if (LINE_CAP - l->n >= GS_FMT_FIXED_MAX) {
		l->n += gs_fmt_fixed(l->buf + l->n, v, dec);
		return;
	}
	put(l, tmp, gs_fmt_fixed(tmp, v, dec));
}

static void put_json_string(struct line *l, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	putc_(l, '"');
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			putc_(l, '\\');
			putc_(l, (char)ch);
		} else if (ch < 0x20 || ch >= 0x7f) {
			/* bytes from the wire are not known to be UTF-8: escape them */
			char u[6] = { '\\', 'u', '0', '0', hex[ch >> 4], hex[ch & 15] };
			put(l, u, 6);
		} else {
			putc_(l, (char)ch);
		}
	}
	putc_(l, '"');
}

void gs_pairs_header_times_cols(FILE *out, enum gs_pairs_format fmt, unsigned cols)
{
	if (fmt != GS_PAIRS_CSV)
		return;
	fputs(GS_PAIRS_HEADER GS_PAIRS_HEADER_TIMES, out);
	if (cols & GS_TIMES_COLS_SCHED)
		fputs(GS_PAIRS_HEADER_SCHED, out);
	if (cols & GS_TIMES_COLS_ORB)
		fputs(GS_PAIRS_HEADER_ORB, out);
	fputc('\n', out);
}

void gs_pairs_header(FILE *out, enum gs_pairs_format fmt)
{
	if (fmt == GS_PAIRS_CSV)
		fputs(GS_PAIRS_HEADER "\n", out);
}

static bool ep_same(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	/* field by field: the struct's padding byte is not part of the key */
	return a->port == b->port && a->family == b->family && memcmp(a->addr, b->addr, 16) == 0;
}

static unsigned pair_set(const struct gs_endpoint *cl, const struct gs_endpoint *sv)
{
	uint64_t c0, c1, s0, s1, h;
	memcpy(&c0, cl->addr, 8);
	memcpy(&c1, cl->addr + 8, 8);
	memcpy(&s0, sv->addr, 8);
	memcpy(&s1, sv->addr + 8, 8);
	h = (c0 ^ (c1 * 0x9e3779b97f4a7c15ULL) ^ ((s0 ^ (s1 * 0xc2b2ae3d27d4eb4fULL)) * 0x94d049bb133111ebULL) ^
	     ((uint64_t)cl->port << 40) ^ ((uint64_t)sv->port << 20) ^ ((uint64_t)cl->family << 4) ^ sv->family) *
	    0xbf58476d1ce4e5b9ULL;
	/* the top bits: a multiply mixes every input bit into them */
	return (unsigned)(h >> 56) % GS_PAIRS_CACHE_SETS;
}

static void pair_fmt(struct gs_pairs_ep_text *w, const struct gs_endpoint *cl, const struct gs_endpoint *sv)
{
	size_t n = gs_endpoint_fmt(cl, w->text);
	w->client_len = (uint8_t)n;
	w->text[n++] = ',';
	n += gs_endpoint_fmt(sv, w->text + n);
	w->text[n++] = ',';
	w->len = (uint8_t)n;
}

/* A connection not in the cache: its text replaces the way not used last. */
static __attribute__((noinline)) const struct gs_pairs_ep_text *pair_miss(const struct gs_call *c,
									  struct gs_pairs_cache *cache,
									  unsigned set)
{
	struct gs_pairs_ep_text *w;
	unsigned k = !cache->recent[set];
	w = &cache->slot[set][k];
	cache->recent[set] = (uint8_t)k;
	w->client = c->client;
	w->server = c->server;
	pair_fmt(w, &c->client, &c->server);
	return w;
}

/* The call's "client,server," from the cache, or formatted into own (no cache). */
static inline const struct gs_pairs_ep_text *pair_text(const struct gs_call *c, struct gs_pairs_cache *cache,
						       struct gs_pairs_ep_text *own)
{
	struct gs_pairs_ep_text *w;
	unsigned set, k;
	if (!cache) {
		pair_fmt(own, &c->client, &c->server);
		return own;
	}
	set = pair_set(&c->client, &c->server);
	for (k = 0; k < 2; k++) {
		w = &cache->slot[set][k];
		if (w->len && ep_same(&w->client, &c->client) && ep_same(&w->server, &c->server)) {
			cache->recent[set] = (uint8_t)k;
			return w;
		}
	}
	return pair_miss(c, cache, set);
}

/* "client":"..","server":"..": the endpoints' texts are digits, hex letters,
 * '.', ':', '[' and ']', nothing JSON escapes. */
static void put_json_endpoints(struct line *l, const struct gs_call *c, struct gs_pairs_cache *cache)
{
	struct gs_pairs_ep_text own;
	const struct gs_pairs_ep_text *w = pair_text(c, cache, &own);
	puts_(l, "\"client\":\"");
	put(l, w->text, w->client_len);
	puts_(l, "\",\"server\":\"");
	put(l, w->text + w->client_len + 1, (size_t)(w->len - w->client_len - 2));
	putc_(l, '"');
}

/* A time stamp as seconds.nanoseconds: the seconds from the memo when they are
 * the last ones written, the nanoseconds in 32-bit arithmetic. */
static void put_time(struct line *l, int64_t t)
{
	struct gs_pairs_sec *m = l->sec;
	char *p;
	/* before 1970, or near the buffer's end: the general form */
	if (t < 0 || LINE_CAP - l->n < GS_FMT_FIXED_MAX) {
		put_fixed(l, t, 9);
		return;
	}
	if (!m->len || m->sec != t / 1000000000) {
		m->sec = t / 1000000000;
		m->len = (uint8_t)gs_fmt_u64(m->text, (uint64_t)m->sec);
	}
	p = l->buf + l->n;
	/* the whole text buffer: a fixed-size copy; m->len + 10 <= GS_FMT_FIXED_MAX
	 * bytes count, the rest is overwritten or past the row's end */
	memcpy(p, m->text, sizeof m->text);
	p += m->len;
	*p++ = '.';
	gs_fmt_9digits(p, (uint32_t)(t % 1000000000));
	l->n += m->len + 10u;
}

/* ---- CSV rows without a bounds test per field ------------------------------------
 *
 * A CSV row is bounded: its strings are cut (the operation at ROW_OP_MAX bytes,
 * at most doubled by quoting; the status, a fixed name, at CSV_STATUS_MAX),
 * everything else has a longest form.  So a whole row always fits an empty line
 * (the assertion) and every field is written straight through a pointer. */

/* The nesting columns at their longest: the parent's endpoints, its request id,
 * the basis, downstream_us, each with its comma. */
#define NEST_COLS_MAX (GS_PAIRS_PAIR_TEXT + (10 + 1) + (6 + 1) + (GS_FMT_FIXED_MAX + 1))

/* Longest forms of the fields besides the operation and the status: both
 * endpoints, the request id, giop, kind, the flags, two byte counts, four
 * stamps, two spans, two counters and the capture-loss flag, each with its
 * comma; then attach's seventeen columns at most (stamps and spans). */
#define CSV_FIXED_MAX                                                                              \
	(GS_PAIRS_PAIR_TEXT + (10 + 1) + (2 + GS_FMT_U8_MAX + 1) + 14 + 1 + 2 +                    \
	 2 * (GS_FMT_U64_MAX + 1) + 6 * (GS_FMT_FIXED_MAX + 1) + 2 * (10 + 1) + 2 +                   \
	 NEST_COLS_MAX + 17 * (GS_FMT_FIXED_MAX + 1) + 1)
#define CSV_STATUS_MAX 64
_Static_assert(CSV_FIXED_MAX + 2 * ROW_OP_MAX + 2 + CSV_STATUS_MAX <= LINE_CAP,
	       "a CSV row always fits the line");

/* "client,server," copied as a fixed-size block: only its length counts. */
INLINE char *w_endpoints(char *p, const struct gs_call *c, struct gs_pairs_cache *cache)
{
	struct gs_pairs_ep_text own;
	const struct gs_pairs_ep_text *w = pair_text(c, cache, &own);
	memcpy(p, w->text, GS_PAIRS_PAIR_TEXT);
	return p + w->len;
}

INLINE char *w_u64(char *p, uint64_t v)
{
	return p + gs_fmt_u64_inline(p, v);
}

/* put_time through a pointer: the stamps of a row share their seconds. */
INLINE char *w_time(char *p, struct gs_pairs_sec *m, int64_t t)
{
	uint64_t u = (uint64_t)t, sec;
	if (t < 0)
		return p + gs_fmt_fixed(p, t, 9);
	sec = u / 1000000000u;
	if (!m->len || m->sec != (int64_t)sec) {
		m->sec = (int64_t)sec;
		m->len = (uint8_t)gs_fmt_u64_inline(m->text, sec);
	}
	memcpy(p, m->text, sizeof m->text);
	p += m->len;
	*p++ = '.';
	gs_fmt_9digits_inline(p, (uint32_t)(u - sec * 1000000000u));
	return p + 9;
}

/* ns as microseconds with three decimals (gs_fmt_fixed(.., 3)) */
INLINE char *w_us(char *p, int64_t v)
{
	uint64_t u;
	uint32_t f;
	if (v < 0)
		return p + gs_fmt_fixed(p, v, 3);
	u = (uint64_t)v;
	p += gs_fmt_u64_inline(p, u / 1000);
	f = (uint32_t)(u % 1000);
	p[0] = '.';
	p[1] = (char)('0' + f / 100);
	memcpy(p + 2, gs_fmt_pairs + 2 * (f % 100), 2);
	return p + 4;
}

INLINE char *w_str(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return p + n;
}

static char *w_csv_field(char *p, const char *s, size_t n)
{
	size_t i;
	for (i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			break;
	if (i == n)
		return w_str(p, s, n);
	*p++ = '"';
	for (i = 0; i < n; i++) {
		if (s[i] == '"')
			*p++ = '"';
		*p++ = s[i];
	}
	*p++ = '"';
	return p;
}

/* ",Request," and the operation's field (w_csv_field).  A name written lately
 * without quotes is found in the cache by its address and copied, ",Request,"
 * with it, as one fixed-size block: neither scanned nor copied by its length. */
#define REQUEST_FIELD ",Request,"
#define REQUEST_FIELD_LEN (sizeof REQUEST_FIELD - 1)
_Static_assert(REQUEST_FIELD_LEN <= sizeof(((struct gs_pairs_op *)0)->row), "the field fits");

static unsigned op_slot(const char *s)
{
	/* the top bits of the address times an odd constant */
	return (unsigned)(((uintptr_t)s * 0x9e3779b97f4a7c15ULL) >> 58) & (GS_PAIRS_OP_SLOTS - 1);
}

static __attribute__((noinline)) char *w_csv_request_op_new(char *p, const char *s, size_t n,
							     struct gs_pairs_op *o)
{
	size_t i;
	p = w_str(p, REQUEST_FIELD, REQUEST_FIELD_LEN);
	for (i = 0; i < n; i++)
		if (s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r')
			break;
	if (i < n)
		return w_csv_field(p, s, n);
	if (o && REQUEST_FIELD_LEN + n <= sizeof o->row) {
		o->name = s;
		o->len = n;
		memcpy(o->row, REQUEST_FIELD, REQUEST_FIELD_LEN);
		memcpy(o->row + REQUEST_FIELD_LEN, s, n);
		o->row_len = (uint8_t)(REQUEST_FIELD_LEN + n);
	}
	return w_str(p, s, n);
}

INLINE char *w_csv_request_op(char *p, const char *s, size_t n, struct gs_pairs_cache *cache)
{
	struct gs_pairs_op *o = NULL;
	if (cache) {
		o = &cache->op[op_slot(s)];
		if (o->name == s && o->len == n) {
			memcpy(p, o->row, sizeof o->row);
			return p + o->row_len;
		}
	}
	return w_csv_request_op_new(p, s, n, o);
}

/* The stamp just written at prev (n bytes, at most GS_FMT_FIXED_MAX) again at
 * p, after it: a message in one segment has its first and last stamp equal. */
INLINE char *w_again(char *p, const char *prev, size_t n)
{
	char tmp[24];
	_Static_assert(GS_FMT_FIXED_MAX <= sizeof tmp, "a stamp fits the copy");
	memcpy(tmp, prev, sizeof tmp);
	memcpy(p, tmp, sizeof tmp);
	return p + n;
}

INLINE char *w_csv_instant(char *p, struct gs_pairs_sec *m, int64_t t)
{
	*p++ = ',';
	return t ? w_time(p, m, t) : p;
}

INLINE char *w_csv_span(char *p, int64_t from, int64_t to)
{
	*p++ = ',';
	return (from && to) ? p + gs_fmt_fixed(p, to - from, 3) : p;
}

INLINE char *w_csv_ns(char *p, bool known, int64_t ns)
{
	*p++ = ',';
	return known ? p + gs_fmt_fixed(p, ns, 3) : p;
}

static __attribute__((noinline)) char *w_csv_times(char *p, struct gs_pairs_sec *m, const struct gs_call_times *t)
{
	p = w_csv_instant(p, m, t->client_send);
	p = w_csv_instant(p, m, t->server_recv);
	p = w_csv_instant(p, m, t->server_send);
	p = w_csv_instant(p, m, t->client_recv);
	p = w_csv_span(p, t->server_recv, t->server_send);
	p = w_csv_span(p, t->client_send, t->client_recv);
	if (t->cols & GS_TIMES_COLS_SCHED) {
		p = w_csv_ns(p, t->server_sched, t->server_oncpu);
		p = w_csv_ns(p, t->server_sched, t->server_runq);
		p = w_csv_ns(p, t->server_sched, t->server_blocked);
		p = w_csv_ns(p, t->client_sched, t->client_oncpu);
		p = w_csv_ns(p, t->client_sched, t->client_runq);
		p = w_csv_ns(p, t->client_sched, t->client_blocked);
	}
	if (t->cols & GS_TIMES_COLS_ORB) {
		bool up = t->upcall_start && t->upcall_end;
		p = w_csv_instant(p, m, t->upcall_start);
		p = w_csv_instant(p, m, t->upcall_end);
		p = w_csv_span(p, up ? t->server_recv : 0, t->upcall_start);
		p = w_csv_span(p, up ? t->upcall_start : 0, t->upcall_end);
		p = w_csv_span(p, up ? t->upcall_end : 0, t->server_send);
	}
	return p;
}

static const char *parent_basis_name(uint8_t basis)
{
	return basis == GS_PARENT_THREAD ? "thread" : basis == GS_PARENT_TIME ? "time" : "";
}

/* ",parent_client,parent_server,parent_request_id,parent_basis" of a nested call */
static __attribute__((noinline)) char *w_csv_parent(char *p, const struct gs_call *c)
{
	const char *b = parent_basis_name(c->parent_basis);
	*p++ = ',';
	p += gs_endpoint_fmt(&c->parent_client, p);
	*p++ = ',';
	p += gs_endpoint_fmt(&c->parent_server, p);
	*p++ = ',';
	p = w_u64(p, c->parent_request_id);
	*p++ = ',';
	return w_str(p, b, strlen(b));
}

/* The room a CSV row may take, whatever its fields (its longest form). */
#define CSV_ROW_MAX (CSV_FIXED_MAX + 2 * ROW_OP_MAX + 2 + CSV_STATUS_MAX)

/* A CSV row at p, which has CSV_ROW_MAX bytes of room; returns its end.  st:
 * the status's name (stlen bytes), or NULL for a two-way call answered with
 * NO_EXCEPTION. */
INLINE char *csv_row(char *p, struct gs_pairs_sec *m, const char *op, size_t oplen, const char *st,
		   size_t stlen, const struct gs_call *c, struct gs_pairs_cache *cache,
		   const struct gs_call_times *t)
{

	p = w_endpoints(p, c, cache);
	p = w_u64(p, c->request_id);
	memcpy(p, ",1.", 3);
	p = w_u64(p + 3, c->minor);
	if (c->kind == GS_KIND_REQUEST)
		p = w_csv_request_op(p, op, oplen > ROW_OP_MAX ? ROW_OP_MAX : oplen, cache);
	else
		p = w_str(p, ",LocateRequest,", 15);
	if (!st) {
		/* most rows: two-way, answered with NO_EXCEPTION */
		p = w_str(p, ",0,NO_EXCEPTION,", 16);
	} else {
		p = w_str(p, (c->flags & GS_CF_ONEWAY) ? ",1," : ",0,", 3);
		p = w_str(p, st, stlen);
		*p++ = ',';
	}
	p = w_u64(p, c->request_bytes);
	*p++ = ',';
	if (c->flags & GS_CF_REP_SEEN) {
		char *s;
		p = w_u64(p, c->reply_bytes);
		*p++ = ',';
		s = p;
		p = w_time(p, m, c->t_request_first);
		*p++ = ',';
		if (c->t_request_last == c->t_request_first)
			p = w_again(p, s, (size_t)(p - 1 - s));
		else
			p = w_time(p, m, c->t_request_last);
		*p++ = ',';
		s = p;
		p = w_time(p, m, c->t_reply_first);
		*p++ = ',';
		if (c->t_reply_last == c->t_reply_first)
			p = w_again(p, s, (size_t)(p - 1 - s));
		else
			p = w_time(p, m, c->t_reply_last);
		*p++ = ',';
		p = w_us(p, c->t_reply_last - c->t_request_first);
		*p++ = ',';
		p = w_us(p, c->t_reply_first - c->t_request_last);
		*p++ = ',';
	} else {
		*p++ = ',';
		p = w_time(p, m, c->t_request_first);
		*p++ = ',';
		p = w_time(p, m, c->t_request_last);
		p = w_str(p, ",,,,,", 5);
	}
	p = w_u64(p, c->retransmits);
	*p++ = ',';
	if (c->flags & GS_CF_CAPTURE_LOSS) {
		p = w_str(p, ",1", 2);
	} else {
		p = w_u64(p, c->gap_fills);
		p = w_str(p, ",0", 2);
	}
	if (c->parent_basis != GS_PARENT_NONE)
		p = w_csv_parent(p, c);
	else
		p = w_str(p, ",,,,", 4);
	*p++ = ',';
	if (c->flags & GS_CF_REP_SEEN)
		p = w_us(p, c->downstream_ns);
	if (t)
		p = w_csv_times(p, m, t);
	*p++ = '\n';
	return p;
}

INLINE void json_key(struct line *l, const char *k, bool first)
{
	if (!first)
		putc_(l, ',');
	putc_(l, '"');
	puts_(l, k);
	puts_(l, "\":");
}

static void json_time(struct line *l, const char *k, int64_t t)
{
	json_key(l, k, false);
	if (!t) {
		puts_(l, "null");
		return;
	}
	putc_(l, '"');
	put_time(l, t);
	putc_(l, '"');
}

static void json_span(struct line *l, const char *k, int64_t from, int64_t to)
{
	json_key(l, k, false);
	if (from && to)
		put_fixed(l, to - from, 3);
	else
		puts_(l, "null");
}

static void json_ns(struct line *l, const char *k, bool known, int64_t ns)
{
	json_key(l, k, false);
	if (known)
		put_fixed(l, ns, 3);
	else
		puts_(l, "null");
}

static void json_row(struct line *l, const struct gs_intern *strings, const struct gs_call *c,
		     struct gs_pairs_cache *cache, const struct gs_call_times *t)
{
	bool rep = (c->flags & GS_CF_REP_SEEN) != 0;
	size_t n;
	const char *s;

	putc_(l, '{');
	put_json_endpoints(l, c, cache);
	json_key(l, "request_id", false);
	put_u64(l, c->request_id);
	json_key(l, "giop", false);
	puts_(l, "\"1.");
	put_u64(l, c->minor);
	putc_(l, '"');
	json_key(l, "kind", false);
	puts_(l, c->kind == GS_KIND_REQUEST ? "\"Request\"" : "\"LocateRequest\"");
	json_key(l, "operation", false);
	s = gs_intern_get(strings, c->op, &n);
	put_json_string(l, s, c->kind == GS_KIND_REQUEST ? (n > ROW_OP_MAX ? ROW_OP_MAX : n) : 0);
	json_key(l, "oneway", false);
	puts_(l, (c->flags & GS_CF_ONEWAY) ? "1" : "0");
	json_key(l, "status", false);
	put_json_string(l, gs_call_status(c), strlen(gs_call_status(c)));
	json_key(l, "request_bytes", false);
	put_u64(l, c->request_bytes);
	json_key(l, "reply_bytes", false);
	if (rep)
		put_u64(l, c->reply_bytes);
	else
		puts_(l, "null");
	/* times as strings: exact nanoseconds survive JSON parsers that use doubles */
	json_key(l, "t_request_first", false);
	putc_(l, '"');
	put_time(l, c->t_request_first);
	putc_(l, '"');
	json_key(l, "t_request_last", false);
	putc_(l, '"');
	put_time(l, c->t_request_last);
	putc_(l, '"');
	if (rep) {
		json_key(l, "t_reply_first", false);
		putc_(l, '"');
		put_time(l, c->t_reply_first);
		putc_(l, '"');
		json_key(l, "t_reply_last", false);
		putc_(l, '"');
		put_time(l, c->t_reply_last);
		putc_(l, '"');
		json_key(l, "total_us", false);
		put_fixed(l, c->t_reply_last - c->t_request_first, 3);
		json_key(l, "server_us", false);
		put_fixed(l, c->t_reply_first - c->t_request_last, 3);
	} else {
		puts_(l, ",\"t_reply_first\":null,\"t_reply_last\":null,\"total_us\":null,\"server_us\":null");
	}
	json_key(l, "retransmits", false);
	put_u64(l, c->retransmits);
	json_key(l, "gap_fills", false);
	if (c->flags & GS_CF_CAPTURE_LOSS)
		puts_(l, "null");
	else
		put_u64(l, c->gap_fills);
	json_key(l, "capture_loss", false);
	puts_(l, (c->flags & GS_CF_CAPTURE_LOSS) ? "1" : "0");
	if (c->parent_basis != GS_PARENT_NONE) {
		char ep[GS_ENDPOINT_TEXT_MAX];
		json_key(l, "parent_client", false);
		putc_(l, '"');
		put(l, ep, gs_endpoint_fmt(&c->parent_client, ep));
		putc_(l, '"');
		json_key(l, "parent_server", false);
		putc_(l, '"');
		put(l, ep, gs_endpoint_fmt(&c->parent_server, ep));
		putc_(l, '"');
		json_key(l, "parent_request_id", false);
		put_u64(l, c->parent_request_id);
		json_key(l, "parent_basis", false);
		putc_(l, '"');
		puts_(l, parent_basis_name(c->parent_basis));
		putc_(l, '"');
	} else {
		puts_(l, ",\"parent_client\":null,\"parent_server\":null,\"parent_request_id\":null,\"parent_basis\":null");
	}
	json_key(l, "downstream_us", false);
	if (rep)
		put_fixed(l, c->downstream_ns, 3);
	else
		puts_(l, "null");
	if (c->flags & GS_CF_HAS_EXCEPTION) {
		json_key(l, "exception", false);
		s = gs_intern_get(strings, c->exception, &n);
		put_json_string(l, s, n > ROW_EXC_MAX ? ROW_EXC_MAX : n);
		if (c->reply_type == GIOP_LOCATE_REPLY || c->status == GIOP_SYSTEM_EXCEPTION) {
			json_key(l, "minor_code", false);
			put_u64(l, c->minor_code);
			json_key(l, "completed", false);
			put_u64(l, c->completion);
		}
	}
	if (c->flags & GS_CF_HAS_PRIORITY) {
		json_key(l, "priority", false);
		if (c->priority < 0) {
			putc_(l, '-');
			put_u64(l, (uint64_t)(-(int32_t)c->priority));
		} else {
			put_u64(l, (uint64_t)c->priority);
		}
	}
	if (t) {
		json_time(l, "t_client_send", t->client_send);
		json_time(l, "t_server_recv", t->server_recv);
		json_time(l, "t_server_send", t->server_send);
		json_time(l, "t_client_recv", t->client_recv);
		json_span(l, "server_process_us", t->server_recv, t->server_send);
		json_span(l, "client_syscall_us", t->client_send, t->client_recv);
		if (t->cols & GS_TIMES_COLS_SCHED) {
			json_ns(l, "server_oncpu_us", t->server_sched, t->server_oncpu);
			json_ns(l, "server_runq_us", t->server_sched, t->server_runq);
			json_ns(l, "server_blocked_us", t->server_sched, t->server_blocked);
			json_ns(l, "client_oncpu_us", t->client_sched, t->client_oncpu);
			json_ns(l, "client_runq_us", t->client_sched, t->client_runq);
			json_ns(l, "client_blocked_us", t->client_sched, t->client_blocked);
		}
		if (t->cols & GS_TIMES_COLS_ORB) {
			bool up = t->upcall_start && t->upcall_end;
			json_time(l, "t_upcall_start", t->upcall_start);
			json_time(l, "t_upcall_end", t->upcall_end);
			json_span(l, "orb_in_us", up ? t->server_recv : 0, t->upcall_start);
			json_span(l, "servant_us", up ? t->upcall_start : 0, t->upcall_end);
			json_span(l, "orb_out_us", up ? t->upcall_end : 0, t->server_send);
		}
	}
	puts_(l, "}\n");
}

/* Where a row of at most `need` bytes can go straight into the stream's own
 * buffer, as putc_unlocked writes a byte (glibc's FILE keeps its buffer's free
 * part in _IO_write_ptr.._IO_write_end); NULL: through fwrite.  Only a fully
 * buffered stream already writing has room there: a line-buffered or unbuffered
 * one keeps _IO_write_end at its buffer's start, at or before _IO_write_ptr, so
 * every row of live and attach still goes out with its own fwrite, a line the
 * moment it ends.  The stream is written by one thread (the rows are written in
 * order by the one that calls the writer), so its lock is not needed. */
static inline char *stream_room(FILE *out, size_t need)
{
#if defined(__GLIBC__)
	/* a line-buffered stream holding part of a line has _IO_write_ptr past
	 * _IO_write_end: compare the pointers before taking their difference */
	if (out->_IO_write_ptr && out->_IO_write_end > out->_IO_write_ptr &&
	    (size_t)(out->_IO_write_end - out->_IO_write_ptr) >= need)
		return out->_IO_write_ptr;
#else
	(void)out;
	(void)need;
#endif
	return NULL;
}

/* A CSV row through a line on the stack and one fwrite (out of line: the line
 * is large). */
static __attribute__((noinline)) void csv_write_line(FILE *out, struct gs_pairs_sec *m, const char *op,
						     size_t oplen, const char *st, size_t stlen,
						     const struct gs_call *c, struct gs_pairs_cache *cache,
						     const struct gs_call_times *t)
{
	char buf[CSV_ROW_MAX];
	fwrite(buf, 1, (size_t)(csv_row(buf, m, op, oplen, st, stlen, c, cache, t) - buf), out);
}

/* The row written at stream_room's place ends at end. */
static inline void stream_wrote(FILE *out, char *end)
{
#if defined(__GLIBC__)
	out->_IO_write_ptr = end;
#else
	(void)out;
	(void)end;
#endif
}

/* A CSV row: straight into the stream's buffer when it has room for the
 * longest row, else built on the stack and written with one fwrite. */
static void csv_write(FILE *out, const struct gs_intern *strings, const struct gs_call *c,
		      struct gs_pairs_cache *cache, const struct gs_call_times *t)
{
	size_t oplen = 0, stlen = 0;
	const char *op = c->kind == GS_KIND_REQUEST ? gs_intern_get(strings, c->op, &oplen) : "";
	const char *st = NULL;
	struct gs_pairs_sec own_sec, *m = &own_sec;
	char *p;
	if (cache)
		m = &cache->sec;
	else
		own_sec.len = 0;
	if (!(c->outcome == GS_OUT_REPLY && (c->flags & GS_CF_STATUS_KNOWN) && c->reply_type == GIOP_REPLY &&
	      c->status == GIOP_NO_EXCEPTION && !(c->flags & GS_CF_ONEWAY))) {
		/* not the common row (two-way, NO_EXCEPTION): gs_call_status's name */
		st = gs_call_status(c);
		stlen = strlen(st);
		/* the GIOP status names are far shorter: the bound only keeps the row's room true */
		if (stlen > CSV_STATUS_MAX)
			stlen = CSV_STATUS_MAX;
	}
	p = stream_room(out, CSV_ROW_MAX);
	if (p) {
		/* no copy, no fwrite */
		stream_wrote(out, csv_row(p, m, op, oplen, st, stlen, c, cache, t));
		return;
	}
	csv_write_line(out, m, op, oplen, st, stlen, c, cache, t);
}

/* A JSON row through a line on the stack and one fwrite (out of line: the line
 * is large). */
static __attribute__((noinline)) void json_write_line(FILE *out, struct line *l, const struct gs_intern *strings,
						      const struct gs_call *c, struct gs_pairs_cache *cache,
						      const struct gs_call_times *t)
{
	char buf[LINE_CAP];
	l->buf = buf;
	json_row(l, strings, c, cache, t);
	fwrite(buf, 1, l->n, out);
}

void gs_pairs_write_times(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
			  const struct gs_call *c, struct gs_pairs_cache *cache, const struct gs_call_times *t)
{
	struct line l;
	if (fmt == GS_PAIRS_CSV) {
		csv_write(out, strings, c, cache, t);
		return;
	}
	l.n = 0;
	if (cache) {
		l.sec = &cache->sec;
	} else {
		l.own_sec.len = 0;
		l.sec = &l.own_sec;
	}
	/* the same LINE_CAP bytes of room either way: a row is the same (and cut at
	 * the same place, were it ever) */
	l.buf = stream_room(out, LINE_CAP);
	if (l.buf) {
		json_row(&l, strings, c, cache, t);
		stream_wrote(out, l.buf + l.n);
		return;
	}
	json_write_line(out, &l, strings, c, cache, t);
}

void gs_pairs_write_cached(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
			   const struct gs_call *c, struct gs_pairs_cache *cache)
{
	gs_pairs_write_times(out, fmt, strings, c, cache, NULL);
}

void gs_pairs_write(FILE *out, enum gs_pairs_format fmt, const struct gs_intern *strings,
		    const struct gs_call *c)
{
	/* a single row: no cache to fill (and none to clear) */
	gs_pairs_write_times(out, fmt, strings, c, NULL, NULL);
}

/* `--pairs --format text`: the columns, the header's names and the rows' widths */
enum { TX_CLIENT, TX_SERVER, TX_REQUEST_ID, TX_KIND, TX_OPERATION, TX_STATUS, TX_TOTAL, TX_SERVER_US, TX__N };
static const struct gs_text_col text_cols[TX__N] = {
	[TX_CLIENT] = { "client", 22, true, false },
	[TX_SERVER] = { "server", 22, true, false },
	[TX_REQUEST_ID] = { "request_id", 10, false, false },
	[TX_KIND] = { "kind", 3, true, false },
	[TX_OPERATION] = { "operation", 22, true, true },
	[TX_STATUS] = { "status", 22, true, false },
	[TX_TOTAL] = { "total_us", 12, false, false },
	[TX_SERVER_US] = { "server_us", 12, false, false },
};
_Static_assert(TX__N <= GS_TEXT_COLS_MAX, "GS_TEXT_COLS_MAX");

void gs_pairs_header_text(FILE *out)
{
	gs_text_header(out, text_cols, TX__N);
}

void gs_pairs_write_text(FILE *out, const struct gs_intern *strings, const struct gs_call *c)
{
	char cl[GS_ENDPOINT_STRLEN], sv[GS_ENDPOINT_STRLEN], id[16], op[24], total[32], server[32];
	const char *v[TX__N];
	size_t n;
	const char *name = gs_intern_get(strings, c->op, &n);
	gs_endpoint_str(&c->client, cl, sizeof cl);
	gs_endpoint_str(&c->server, sv, sizeof sv);
	snprintf(id, sizeof id, "%u", c->request_id);
	/* the name may hold NULs or be long: what fits, as before */
	snprintf(op, sizeof op, "%.*s", (int)(n > 22 ? 22 : n), name);
	if (c->flags & GS_CF_REP_SEEN) {
		snprintf(total, sizeof total, "%.3f", (double)(c->t_reply_last - c->t_request_first) / 1e3);
		snprintf(server, sizeof server, "%.3f", (double)(c->t_reply_first - c->t_request_last) / 1e3);
	} else {
		snprintf(total, sizeof total, "-");
		snprintf(server, sizeof server, "-");
	}
	v[TX_CLIENT] = cl;
	v[TX_SERVER] = sv;
	v[TX_REQUEST_ID] = id;
	v[TX_KIND] = c->kind == GS_KIND_REQUEST ? "req" : "loc";
	v[TX_OPERATION] = op;
	v[TX_STATUS] = gs_call_status(c);
	v[TX_TOTAL] = total;
	v[TX_SERVER_US] = server;
	gs_text_row(out, text_cols, TX__N, v);
}
