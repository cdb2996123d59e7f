/* SPDX-License-Identifier: BSD-2-Clause */
/* Hand-written number and endpoint formatting against printf and inet_ntop: the
 * rows must stay byte for byte what the printf-based writer produced. */
#include <inttypes.h>
#include <sys/stat.h>
#include "unit.h"
#include "../../analysis/fmt_num.h"
#include "../../analysis/endpoint.h"
#include "../../analysis/sink_pairs.h"

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* a value of random width, so that every digit count is drawn alike */
static uint64_t rnd_wide(void)
{
	unsigned bits = (unsigned)(rnd() % 64) + 1;
	return bits == 64 ? rnd() : rnd() & ((1ull << bits) - 1);
}

static void check_u64(uint64_t v)
{
	char want[32], got[GS_FMT_U64_MAX + 8];
	int n = snprintf(want, sizeof want, "%" PRIu64, v);
	memset(got, 'x', sizeof got);
	assert_int_equal(gs_fmt_u64(got, v), (size_t)n);
	assert_memory_equal(got, want, (size_t)n);
	/* nothing written past the length */
	assert_int_equal(got[n], 'x');
}

static void test_u64(void **state)
{
	uint64_t p = 1;
	for (uint64_t v = 0; v <= 100000; v++)
		check_u64(v);
	for (int i = 0; i < 20; i++) {
		check_u64(p - 1);
		check_u64(p);
		check_u64(p + 1);
		if (i < 19)
			p *= 10;
	}
	check_u64(UINT64_MAX);
	check_u64(UINT64_MAX - 1);
	check_u64(UINT32_MAX);
	for (int i = 0; i < 1000000; i++)
		check_u64(rnd_wide());
}

static void test_9digits(void **state)
{
	for (uint32_t v = 0; v < 1000000000u; v += 1 + (uint32_t)(rnd() % 5000)) {
		char want[16], got[10];
		snprintf(want, sizeof want, "%09u", v);
		got[9] = 'x';
		gs_fmt_9digits(got, v);
		assert_memory_equal(got, want, 9);
		assert_int_equal(got[9], 'x');
	}
}

static void test_u8(void **state)
{
	for (unsigned v = 0; v < 256; v++) {
		char want[8], got[GS_FMT_U8_MAX];
		int n = snprintf(want, sizeof want, "%u", v);
		assert_int_equal(gs_fmt_u8(got, (uint8_t)v), (size_t)n);
		assert_memory_equal(got, want, (size_t)n);
	}
}

/* what the writer printed before: sign, |v| / 10^dec, '.', dec digits */
static void check_fixed(int64_t v, int dec)
{
	char want[64], got[GS_FMT_FIXED_MAX + 8];
	uint64_t div = dec == 9 ? 1000000000u : 1000u;
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	int n = snprintf(want, sizeof want, "%s%" PRIu64 ".%0*" PRIu64, v < 0 ? "-" : "", u / div, dec, u % div);
	assert_true(n <= GS_FMT_FIXED_MAX);
	memset(got, 'x', sizeof got);
	assert_int_equal(gs_fmt_fixed(got, v, dec), (size_t)n);
	assert_memory_equal(got, want, (size_t)n);
	assert_int_equal(got[n], 'x');
}

static void test_fixed(void **state)
{
	static const int64_t edge[] = {
		0, 1, -1, 9, 10, 999, 1000, 1001, -999, -1000, -1001, 999999999, 1000000000,
		-999999999, -1000000000, 1700000000000000001LL, 1700000000999999999LL,
		INT64_MAX, INT64_MIN, INT64_MIN + 1, INT64_MAX - 1,
	};
	for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++) {
		check_fixed(edge[i], 9);
		check_fixed(edge[i], 3);
	}
	for (int64_t v = -20000; v <= 20000; v++) {
		check_fixed(v, 3);
		check_fixed(v, 9);
	}
	for (int i = 0; i < 500000; i++) {
		int64_t v = (int64_t)rnd_wide();
		if (rnd() & 1)
			v = -v;
		check_fixed(v, 9);
		check_fixed(v, 3);
	}
	/* the longest forms are the stated maximum */
	{
		char b[GS_FMT_FIXED_MAX];
		assert_int_equal(gs_fmt_fixed(b, INT64_MIN, 9), GS_FMT_FIXED_MAX);
		assert_int_equal(gs_fmt_fixed(b, INT64_MIN, 3), GS_FMT_FIXED_MAX);
	}
}

/* the printf/inet_ntop text the writer used to make */
static size_t ref_endpoint(const struct gs_endpoint *ep, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int n;
	assert_non_null(inet_ntop(ep->family == 6 ? AF_INET6 : AF_INET, ep->addr, a, sizeof a));
	n = ep->family == 6 ? snprintf(buf, len, "[%s]:%u", a, ep->port) : snprintf(buf, len, "%s:%u", a, ep->port);
	assert_true(n > 0 && (size_t)n < len);
	return (size_t)n;
}

static void check_endpoint(const struct gs_endpoint *ep)
{
	char want[128], got[GS_ENDPOINT_TEXT_MAX + 8], s[GS_ENDPOINT_STRLEN];
	size_t n = ref_endpoint(ep, want, sizeof want);
	assert_true(n <= GS_ENDPOINT_TEXT_MAX);
	memset(got, 'x', sizeof got);
	assert_int_equal(gs_endpoint_fmt(ep, got), n);
	assert_memory_equal(got, want, n);
	assert_int_equal(got[n], 'x');
	assert_int_equal(gs_endpoint_str(ep, s, sizeof s), n);
	assert_string_equal(s, want);
}

static void test_endpoint_ipv4(void **state)
{
	struct gs_endpoint ep;
	memset(&ep, 0, sizeof ep);
	ep.family = 4;
	/* every value in every octet, the others random; ports at their edges */
	for (int pos = 0; pos < 4; pos++)
		for (unsigned v = 0; v < 256; v++) {
			for (int i = 0; i < 4; i++)
				ep.addr[i] = (uint8_t)rnd();
			ep.addr[pos] = (uint8_t)v;
			ep.port = (uint16_t)(v & 1 ? 65535 : v & 2 ? 0 : rnd());
			check_endpoint(&ep);
		}
	for (int i = 0; i < 200000; i++) {
		uint64_t r = rnd();
		memcpy(ep.addr, &r, 4);
		ep.port = (uint16_t)(r >> 32);
		check_endpoint(&ep);
	}
	/* the longest */
	memset(ep.addr, 255, 4);
	ep.port = 65535;
	check_endpoint(&ep);
	assert_int_equal(gs_endpoint_fmt(&ep, (char[GS_ENDPOINT_TEXT_MAX]){ 0 }), strlen("255.255.255.255:65535"));
}

static void test_endpoint_ipv6(void **state)
{
	static const char *const fixed[] = {
		"::", "::1", "1::", "2001:db8::1:0:0:1", "2001:db8:0:0:1:0:0:1", "fe80::1:2:3:4",
		"::ffff:1.2.3.4", "::ffff:255.255.255.255", "::1.2.3.4", "fd00::a00:1",
		"ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", "1:0:1:0:1:0:1:0", "0:1:0:0:1:0:0:0",
	};
	struct gs_endpoint ep;
	memset(&ep, 0, sizeof ep);
	ep.family = 6;
	for (size_t i = 0; i < sizeof fixed / sizeof fixed[0]; i++) {
		assert_int_equal(inet_pton(AF_INET6, fixed[i], ep.addr), 1);
		ep.port = (uint16_t)(i & 1 ? 65535 : i);
		check_endpoint(&ep);
	}
	/* random groups, many of them zero: runs of zeros of every length and place */
	for (int i = 0; i < 100000; i++) {
		for (int g = 0; g < 8; g++) {
			uint64_t r = rnd();
			uint16_t w = (r & 3) ? 0 : (uint16_t)(r >> 16);
			ep.addr[2 * g] = (uint8_t)(w >> 8);
			ep.addr[2 * g + 1] = (uint8_t)w;
		}
		ep.port = (uint16_t)rnd();
		check_endpoint(&ep);
	}
}

static void test_endpoint_str_short(void **state)
{
	struct gs_endpoint ep;
	char buf[GS_ENDPOINT_STRLEN];
	memset(&ep, 0, sizeof ep);
	ep.family = 4;
	ep.addr[0] = 192, ep.addr[1] = 168, ep.addr[2] = 100, ep.addr[3] = 200;
	ep.port = 12345;
	/* cut to the buffer, terminated, the length written returned */
	assert_int_equal(gs_endpoint_str(&ep, buf, 8), 7);
	assert_string_equal(buf, "192.168");
	assert_int_equal(gs_endpoint_str(&ep, buf, 1), 0);
	assert_string_equal(buf, "");
	assert_int_equal(gs_endpoint_str(&ep, buf, 0), 0);
	/* the address alone: as inet_ntop, which fails on a short buffer */
	assert_int_equal(gs_addr_str(&ep, buf, sizeof buf), strlen("192.168.100.200"));
	assert_string_equal(buf, "192.168.100.200");
	assert_int_equal(gs_addr_str(&ep, buf, 15), 0);
	assert_string_equal(buf, "");
}

/* ---- rows through the endpoint cache ----------------------------------------------- */

static char *rowbuf(void)
{
	char *b = malloc(65536);
	assert_non_null(b);
	ut_keep(b, free);
	return b;
}

static size_t write_row(char *buf, enum gs_pairs_format fmt, const struct gs_intern *t, const struct gs_call *c,
			struct gs_pairs_cache *cache, const struct gs_call_times *times)
{
	FILE *f = fmemopen(buf, 65536, "w");
	long n;
	assert_non_null(f);
	if (times)
		gs_pairs_write_times(f, fmt, t, c, cache, times);
	else if (cache)
		gs_pairs_write_cached(f, fmt, t, c, cache);
	else
		gs_pairs_write(f, fmt, t, c);
	fflush(f);
	n = ftell(f);
	fclose(f);
	return (size_t)n;
}

static void rnd_endpoint(struct gs_endpoint *ep, unsigned pool)
{
	/* pool distinct endpoints, one in eight IPv6: more than the cache holds */
	unsigned k = (unsigned)(rnd() % pool);
	memset(ep, 0, sizeof *ep);
	ep->port = (uint16_t)(1024 + k);
	if (k % 8 == 0) {
		ep->family = 6;
		ep->addr[0] = 0xfd;
		ep->addr[15] = (uint8_t)k;
		ep->addr[14] = (uint8_t)(k >> 8);
	} else {
		ep->family = 4;
		ep->addr[0] = 10;
		ep->addr[2] = (uint8_t)(k >> 8);
		ep->addr[3] = (uint8_t)k;
	}
}

static void test_rows_cached(void **state)
{
	struct gs_intern t;
	struct gs_pairs_cache *cache = calloc(1, sizeof *cache);
	char *a = rowbuf(), *b = rowbuf();
	struct gs_call c;
	assert_non_null(cache);
	ut_keep(cache, free);
	assert_int_equal(gs_intern_init(&t, 16, 1024), 0);
	memset(&c, 0, sizeof c);
	c.op = gs_intern(&t, "echoString", 10);
	c.kind = GS_KIND_REQUEST;
	c.major = 1, c.minor = 2;
	c.outcome = GS_OUT_REPLY;
	c.flags = GS_CF_REP_SEEN | GS_CF_STATUS_KNOWN;
	for (int i = 0; i < 20000; i++) {
		enum gs_pairs_format fmt = (i & 1) ? GS_PAIRS_JSONL : GS_PAIRS_CSV;
		char want[128];
		size_t na, nb, ne;
		/* a small pool first (all hits after the first rows), then a large one */
		rnd_endpoint(&c.client, i < 10000 ? 40 : 5000);
		rnd_endpoint(&c.server, i < 10000 ? 3 : 700);
		struct gs_call_times tm = { 0 }, *tp = NULL;
		c.request_id = (uint32_t)rnd();
		/* stamps anywhere, or within a few seconds (the seconds memo hits and
		 * misses across rows), or before 1970 */
		c.t_request_first = (i % 3 == 0) ? (int64_t)(rnd() >> 2)
				  : 1700000000000000000LL + (int64_t)(rnd() % 3000000000u);
		if (i % 97 == 0)
			c.t_request_first = -(int64_t)(rnd() % 5000000000u);
		c.t_request_last = c.t_request_first + (int64_t)(rnd() % 1000000);
		c.t_reply_first = c.t_request_last + (int64_t)(rnd() % 1000000000);
		c.t_reply_last = c.t_reply_first + (int64_t)(rnd() % 1000);
		if (i % 4 == 1) {
			/* attach's columns: instants (some unknown, 0) and spans */
			tm.client_send = (i & 8) ? 0 : c.t_request_first - 1000;
			tm.server_recv = c.t_request_last + 5;
			tm.server_send = c.t_reply_first - 5;
			tm.client_recv = c.t_reply_last + 1000;
			tp = &tm;
		}
		na = write_row(a, fmt, &t, &c, cache, tp);
		nb = write_row(b, fmt, &t, &c, NULL, tp);
		assert_int_equal(na, nb);
		assert_memory_equal(a, b, na);
		if (fmt == GS_PAIRS_CSV) {
			/* t_request_first (the 11th column) as printf wrote it */
			char ts[64];
			const char *p = a;
			uint64_t u = c.t_request_first < 0 ? (uint64_t)0 - (uint64_t)c.t_request_first
							   : (uint64_t)c.t_request_first;
			int tn = snprintf(ts, sizeof ts, "%s%" PRIu64 ".%09" PRIu64 ",", c.t_request_first < 0 ? "-" : "",
					  u / 1000000000u, u % 1000000000u);
			for (int col = 0; col < 10; col++)
				p = strchr(p, ',') + 1;
			assert_memory_equal(p, ts, (size_t)tn);
		}
		/* and the row starts with the printf text of the client */
		ne = ref_endpoint(&c.client, want, sizeof want);
		assert_memory_equal(a + (fmt == GS_PAIRS_CSV ? 0 : strlen("{\"client\":\"")), want, ne);
	}
	gs_intern_free(&t);
}

/* ---- whole CSV rows against printf ---------------------------------------------------- */

/* ns as printf writes "%s%llu.%0*llu" (dec 9 or 3), the sign apart */
static int ref_fixed(char *b, size_t len, int64_t v, int dec)
{
	uint64_t u = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v, div = dec == 9 ? 1000000000u : 1000u;
	return snprintf(b, len, "%s%" PRIu64 ".%0*" PRIu64, v < 0 ? "-" : "", u / div, dec, u % div);
}

/* the row as docs/output.md describes it, field by field with printf */
/* The nesting columns: no parent (most calls), or one by time or by thread,
 * IPv4 or IPv6, with a downstream time of any size. */
static void rnd_parent(struct gs_call *c)
{
	unsigned r = (unsigned)(rnd() % 4);
	c->downstream_ns = rnd() % 3 ? 0 : (int64_t)(rnd() >> (rnd() % 40));
	if (r < 2)
		return;
	rnd_endpoint(&c->parent_client, 5000);
	rnd_endpoint(&c->parent_server, 700);
	c->parent_request_id = (uint32_t)rnd_wide();
	c->parent_basis = r == 2 ? GS_PARENT_TIME : GS_PARENT_THREAD;
}

static size_t ref_row(char *b, size_t len, const struct gs_intern *t, const struct gs_call *c,
		      const struct gs_call_times *tm)
{
	char cl[128], sv[128], v[8][64];
	size_t n = 0, oplen;
	const char *op = gs_intern_get(t, c->op, &oplen);
	bool rep = (c->flags & GS_CF_REP_SEEN) != 0;
	char opf[2 * 64 + 3];
	size_t k = 0;
	bool quote = false;
	for (size_t i = 0; i < oplen; i++)
		quote |= op[i] == ',' || op[i] == '"' || op[i] == '\n' || op[i] == '\r';
	if (quote)
		opf[k++] = '"';
	for (size_t i = 0; i < oplen; i++) {
		if (quote && op[i] == '"')
			opf[k++] = '"';
		opf[k++] = op[i];
	}
	if (quote)
		opf[k++] = '"';
	opf[k] = '\0';
	ref_endpoint(&c->client, cl, sizeof cl);
	ref_endpoint(&c->server, sv, sizeof sv);
	ref_fixed(v[0], sizeof v[0], c->t_request_first, 9);
	ref_fixed(v[1], sizeof v[1], c->t_request_last, 9);
	ref_fixed(v[2], sizeof v[2], c->t_reply_first, 9);
	ref_fixed(v[3], sizeof v[3], c->t_reply_last, 9);
	ref_fixed(v[4], sizeof v[4], c->t_reply_last - c->t_request_first, 3);
	ref_fixed(v[5], sizeof v[5], c->t_reply_first - c->t_request_last, 3);
	n += (size_t)snprintf(b + n, len - n, "%s,%s,%u,1.%u,%s,%s,%s,%s,%" PRIu64 ",", cl, sv, c->request_id,
			      c->minor, c->kind == GS_KIND_REQUEST ? "Request" : "LocateRequest",
			      c->kind == GS_KIND_REQUEST ? opf : "", (c->flags & GS_CF_ONEWAY) ? "1" : "0",
			      gs_call_status(c), c->request_bytes);
	if (rep)
		n += (size_t)snprintf(b + n, len - n, "%" PRIu64 ",%s,%s,%s,%s,%s,%s,", c->reply_bytes, v[0], v[1],
				      v[2], v[3], v[4], v[5]);
	else
		n += (size_t)snprintf(b + n, len - n, ",%s,%s,,,,,", v[0], v[1]);
	if (c->flags & GS_CF_CAPTURE_LOSS)
		n += (size_t)snprintf(b + n, len - n, "%u,,1", c->retransmits);
	else
		n += (size_t)snprintf(b + n, len - n, "%u,%u,0", c->retransmits, c->gap_fills);
	if (c->parent_basis != GS_PARENT_NONE) {
		char pc[128], ps[128];
		ref_endpoint(&c->parent_client, pc, sizeof pc);
		ref_endpoint(&c->parent_server, ps, sizeof ps);
		n += (size_t)snprintf(b + n, len - n, ",%s,%s,%u,%s", pc, ps, c->parent_request_id,
				      c->parent_basis == GS_PARENT_TIME ? "time" : "thread");
	} else {
		n += (size_t)snprintf(b + n, len - n, ",,,,");
	}
	n += (size_t)snprintf(b + n, len - n, ",");
	if (rep)
		n += (size_t)ref_fixed(b + n, len - n, c->downstream_ns, 3);
	if (tm) {
		const int64_t inst[4] = { tm->client_send, tm->server_recv, tm->server_send, tm->client_recv };
		for (int i = 0; i < 4; i++) {
			n += (size_t)snprintf(b + n, len - n, ",");
			if (inst[i])
				n += (size_t)ref_fixed(b + n, len - n, inst[i], 9);
		}
		n += (size_t)snprintf(b + n, len - n, ",");
		if (tm->server_recv && tm->server_send)
			n += (size_t)ref_fixed(b + n, len - n, tm->server_send - tm->server_recv, 3);
		n += (size_t)snprintf(b + n, len - n, ",");
		if (tm->client_send && tm->client_recv)
			n += (size_t)ref_fixed(b + n, len - n, tm->client_recv - tm->client_send, 3);
		/* server_queued_us: the server's recv after the request was whole at
		 * the tap, never negative; empty without the recv or the request */
		n += (size_t)snprintf(b + n, len - n, ",");
		if (tm->server_recv && (c->flags & GS_CF_REQ_DONE) && c->t_request_last)
			n += (size_t)ref_fixed(b + n, len - n,
					       tm->server_recv > c->t_request_last ? tm->server_recv - c->t_request_last : 0, 3);
		if (tm->cols & GS_TIMES_COLS_SCHED) {
			const int64_t ns[6] = { tm->server_oncpu, tm->server_runq, tm->server_blocked,
						tm->client_oncpu, tm->client_runq, tm->client_blocked };
			for (int i = 0; i < 6; i++) {
				n += (size_t)snprintf(b + n, len - n, ",");
				if (i < 3 ? tm->server_sched : tm->client_sched)
					n += (size_t)ref_fixed(b + n, len - n, ns[i], 3);
			}
			n += (size_t)snprintf(b + n, len - n, ",");
			if (tm->recvq_sched)
				n += (size_t)ref_fixed(b + n, len - n, tm->recvq_runq, 3);
		}
		if (tm->cols & GS_TIMES_COLS_ORB) {
			bool up = tm->upcall_start && tm->upcall_end;
			const int64_t from[3] = { up ? tm->server_recv : 0, up ? tm->upcall_start : 0, up ? tm->upcall_end : 0 };
			const int64_t to[3] = { tm->upcall_start, tm->upcall_end, tm->server_send };
			for (int i = 0; i < 2; i++) {
				n += (size_t)snprintf(b + n, len - n, ",");
				if (i ? tm->upcall_end : tm->upcall_start)
					n += (size_t)ref_fixed(b + n, len - n, i ? tm->upcall_end : tm->upcall_start, 9);
			}
			for (int i = 0; i < 3; i++) {
				n += (size_t)snprintf(b + n, len - n, ",");
				if (from[i] && to[i])
					n += (size_t)ref_fixed(b + n, len - n, to[i] - from[i], 3);
			}
		}
	}
	n += (size_t)snprintf(b + n, len - n, "\n");
	assert_true(n < len);
	return n;
}

/* a time stamp: mostly near one second (the seconds memo), some anywhere, a
 * few before 1970 or 0 (an instant not seen, for attach's columns) */
static int64_t rnd_stamp(int64_t near)
{
	switch (rnd() % 8) {
	case 0: return (int64_t)(rnd() >> 1);
	case 1: return -(int64_t)(rnd() % 5000000000u);
	case 2: return 0;
	default: return near + (int64_t)(rnd() % 2000000000u);
	}
}

static void test_csv_rows_reference(void **state)
{
	struct gs_intern t;
	struct gs_pairs_cache *cache = calloc(1, sizeof *cache);
	char *got = rowbuf(), want[4096];
	/* names a CSV field quotes or not */
	static const char *const ops[] = { "echoString", "a,b", "say \"hi\"", "x\ny", "r\rs", "", "\"", "_get_attr" };
	uint32_t ids[8];
	assert_non_null(cache);
	ut_keep(cache, free);
	assert_int_equal(gs_intern_init(&t, 16, 1024), 0);
	for (int i = 0; i < 8; i++)
		ids[i] = gs_intern(&t, ops[i], strlen(ops[i]));
	for (int i = 0; i < 50000; i++) {
		struct gs_call c;
		struct gs_call_times tm, *tp = NULL;
		int64_t base = 1700000000000000000LL + (int64_t)(rnd() % 100) * 1000000000LL;
		size_t nw, ng;
		memset(&c, 0, sizeof c);
		memset(&tm, 0, sizeof tm);
		rnd_endpoint(&c.client, 5000);
		rnd_endpoint(&c.server, 700);
		c.request_id = (uint32_t)rnd_wide();
		c.minor = (uint8_t)(rnd() % 4);
		c.kind = rnd() % 5 ? GS_KIND_REQUEST : GS_KIND_LOCATE_REQUEST;
		c.op = ids[rnd() % 8];
		c.outcome = (uint8_t)(rnd() % 5);
		c.flags = (uint32_t)rnd() & (GS_CF_ONEWAY | GS_CF_REP_SEEN | GS_CF_CAPTURE_LOSS | GS_CF_STATUS_KNOWN);
		c.reply_type = rnd() % 2 ? GIOP_REPLY : GIOP_LOCATE_REPLY;
		c.status = (uint32_t)(rnd() % 7);
		c.request_bytes = rnd_wide();
		c.reply_bytes = rnd_wide();
		c.retransmits = (uint32_t)rnd_wide();
		c.gap_fills = (uint32_t)rnd_wide();
		c.t_request_first = rnd_stamp(base);
		c.t_request_last = rnd_stamp(base);
		c.t_reply_first = rnd_stamp(base);
		c.t_reply_last = rnd_stamp(base);
		rnd_parent(&c);
		if (i % 3 == 1) {
			tm.client_send = rnd_stamp(base);
			tm.server_recv = rnd_stamp(base);
			tm.server_send = rnd_stamp(base);
			tm.client_recv = rnd_stamp(base);
			tm.cols = (uint8_t)(rnd() % 4);
			tm.server_sched = rnd() % 2;
			tm.client_sched = rnd() % 2;
			tm.server_oncpu = (int64_t)(rnd() >> 20) - (1LL << 40);
			tm.server_runq = (int64_t)(rnd() >> 30);
			tm.server_blocked = (int64_t)(rnd() >> 10);
			tm.client_oncpu = (int64_t)(rnd() % 1000);
			tm.client_runq = -(int64_t)(rnd() % 1000);
			tm.client_blocked = 0;
			tm.upcall_start = rnd_stamp(base);
			tm.upcall_end = rnd_stamp(base);
			tp = &tm;
		}
		nw = ref_row(want, sizeof want, &t, &c, tp);
		ng = write_row(got, GS_PAIRS_CSV, &t, &c, (i & 1) ? cache : NULL, tp);
		if (ng != nw || memcmp(got, want, nw) != 0)
			fail_msg("row %d:\n got  %.*s want %.*s", i, (int)ng, got, (int)nw, want);
	}
	gs_intern_free(&t);
}

/* Rows written one after another into one stream, as `read` writes them (CSV,
 * and JSON lines against a row written alone): with a
 * large, fully buffered stream most rows go straight into its buffer (the room
 * test per row), those near its end through fwrite; a line-buffered stream (live,
 * attach) takes fwrite for every row.  The whole file must be the printf rows.
 * Stamps often repeat within a row (a message in one segment: the copy of the
 * one before), negative ones are the longest; operation names repeat (the
 * cached ",Request,<name>") and are short, exactly as long as the cached copy
 * takes (55 bytes), one longer, or quoted. */
static void rows_into_stream(int mode, bool cached, enum gs_pairs_format fmt)
{
	static const char *const ops[] = {
		"echoString", "a,b", "_get_attr", "",
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabc",  /* 55 */
		"abcdefghijklmnopqrstuvwxyzabcdefghijklmnopqrstuvwxyzabcd", /* 56 */
		"say \"hi\"", "op_long_long_long_long_long_long_long_long_long_long_long_long_long_long",
	};
	struct gs_intern t;
	struct gs_pairs_cache *cache = calloc(1, sizeof *cache);
	size_t cap = 32u << 20, nw = 0, bufsz = 64u << 10;
	char *want = malloc(cap), *got = malloc(cap), *sbuf = malloc(bufsz);
	uint32_t ids[8], op = 0;
	FILE *f = tmpfile();
	assert_non_null(cache);
	assert_non_null(want);
	assert_non_null(got);
	assert_non_null(sbuf);
	assert_non_null(f);
	assert_int_equal(strlen(ops[4]), 55);
	assert_int_equal(strlen(ops[5]), 56);
	assert_int_equal(setvbuf(f, mode == _IOLBF ? NULL : sbuf, mode, mode == _IOLBF ? 0 : bufsz), 0);
	assert_int_equal(gs_intern_init(&t, 16, 1024), 0);
	for (int i = 0; i < 8; i++)
		ids[i] = gs_intern(&t, ops[i], strlen(ops[i]));
	for (int i = 0; i < 30000; i++) {
		struct gs_call c;
		struct gs_call_times tm, *tp = NULL;
		int64_t base = 1700000000000000000LL + (int64_t)(rnd() % 100) * 1000000000LL;
		memset(&c, 0, sizeof c);
		memset(&tm, 0, sizeof tm);
		rnd_endpoint(&c.client, i < 15000 ? 30 : 5000);
		rnd_endpoint(&c.server, i < 15000 ? 3 : 700);
		c.request_id = (uint32_t)rnd_wide();
		c.minor = (uint8_t)(rnd() % 4);
		c.kind = rnd() % 9 ? GS_KIND_REQUEST : GS_KIND_LOCATE_REQUEST;
		if (rnd() % 4 == 0)
			op = (uint32_t)(rnd() % 8);
		c.op = ids[op];
		c.outcome = rnd() % 3 ? GS_OUT_REPLY : (uint8_t)(rnd() % 5);
		c.flags = (uint32_t)rnd() & (GS_CF_ONEWAY | GS_CF_REP_SEEN | GS_CF_CAPTURE_LOSS | GS_CF_STATUS_KNOWN);
		if (rnd() % 2)
			c.flags |= GS_CF_REP_SEEN | GS_CF_STATUS_KNOWN;
		c.reply_type = rnd() % 4 ? GIOP_REPLY : GIOP_LOCATE_REPLY;
		c.status = rnd() % 2 ? GIOP_NO_EXCEPTION : (uint32_t)(rnd() % 7);
		c.request_bytes = rnd_wide();
		c.reply_bytes = rnd_wide();
		c.retransmits = (uint32_t)rnd_wide();
		c.gap_fills = (uint32_t)rnd_wide();
		c.t_request_first = rnd_stamp(base);
		c.t_request_last = rnd() % 2 ? c.t_request_first : rnd_stamp(base);
		c.t_reply_first = rnd_stamp(base);
		c.t_reply_last = rnd() % 2 ? c.t_reply_first : rnd_stamp(base);
		rnd_parent(&c);
		if (i % 5 == 1) {
			tm.client_send = rnd_stamp(base);
			tm.server_recv = rnd_stamp(base);
			tm.server_send = rnd_stamp(base);
			tm.client_recv = rnd_stamp(base);
			tm.cols = (uint8_t)(rnd() % 4);
			tm.upcall_start = rnd_stamp(base);
			tm.upcall_end = rnd_stamp(base);
			tp = &tm;
		}
		assert_true(nw + 4096 < cap);
		if (fmt == GS_PAIRS_CSV) {
			nw += ref_row(want + nw, cap - nw, &t, &c, tp);
		} else {
			/* JSON: as a row alone writes it (fwrite from its own line, no cache) */
			FILE *one = fmemopen(want + nw, cap - nw, "w");
			assert_non_null(one);
			gs_pairs_write_times(one, fmt, &t, &c, NULL, tp);
			assert_int_equal(fflush(one), 0);
			nw += (size_t)ftell(one);
			fclose(one);
		}
		gs_pairs_write_times(f, fmt, &t, &c, cached ? cache : NULL, tp);
		if (mode == _IOLBF) {
			/* each row in the file the moment it is written (live, attach) */
			struct stat st;
			assert_int_equal(fstat(fileno(f), &st), 0);
			assert_int_equal((size_t)st.st_size, nw);
		}
	}
	assert_int_equal(fflush(f), 0);
	assert_int_equal((long)nw, ftell(f));
	rewind(f);
	assert_int_equal(fread(got, 1, cap, f), nw);
	for (size_t k = 0; k < nw; k++) {
		if (got[k] != want[k]) {
			size_t b = k > 200 ? k - 200 : 0;
			fail_msg("byte %zu:\n got  %.300s\n want %.300s", k, got + b, want + b);
		}
	}
	fclose(f);
	gs_intern_free(&t);
	free(cache);
	free(want);
	free(got);
	free(sbuf);
}

/* A line-buffered stream holding part of a line (its write pointer past its
 * write end): a row after it still goes out with the line, at once. */
static void row_after_partial_line(enum gs_pairs_format fmt)
{
	struct gs_intern t;
	struct gs_pairs_cache *cache = calloc(1, sizeof *cache);
	struct gs_call c;
	struct stat st;
	char want[4096];
	FILE *f = tmpfile(), *one;
	size_t nw;
	assert_non_null(cache);
	assert_non_null(f);
	assert_int_equal(setvbuf(f, NULL, _IOLBF, 0), 0);
	assert_int_equal(gs_intern_init(&t, 16, 1024), 0);
	memset(&c, 0, sizeof c);
	c.op = gs_intern(&t, "echoString", 10);
	c.outcome = GS_OUT_REPLY;
	c.flags = GS_CF_REP_SEEN | GS_CF_STATUS_KNOWN;
	c.t_request_first = c.t_request_last = 1700000000123456789LL;
	c.t_reply_first = c.t_reply_last = 1700000000123466789LL;
	rnd_endpoint(&c.client, 10);
	rnd_endpoint(&c.server, 10);
	memcpy(want, "partial,", 8);
	one = fmemopen(want + 8, sizeof want - 8, "w");
	assert_non_null(one);
	gs_pairs_write_times(one, fmt, &t, &c, NULL, NULL);
	assert_int_equal(fflush(one), 0);
	nw = 8 + (size_t)ftell(one);
	fclose(one);
	fputs("partial,", f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	assert_int_equal(st.st_size, 0);
	gs_pairs_write_times(f, fmt, &t, &c, cache, NULL);
	assert_int_equal(fstat(fileno(f), &st), 0);
	assert_int_equal((size_t)st.st_size, nw);
	fclose(f);
	gs_intern_free(&t);
	free(cache);
}

static void test_csv_rows_stream(void **state)
{
	row_after_partial_line(GS_PAIRS_CSV);
	row_after_partial_line(GS_PAIRS_JSONL);
	(void)state;
	rows_into_stream(_IOFBF, true, GS_PAIRS_CSV);
	rows_into_stream(_IOFBF, false, GS_PAIRS_CSV);
	rows_into_stream(_IOLBF, true, GS_PAIRS_CSV);
	/* JSON lines: into the buffer when it has room for the longest (32 KB) */
	rows_into_stream(_IOFBF, true, GS_PAIRS_JSONL);
	rows_into_stream(_IOLBF, true, GS_PAIRS_JSONL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_u64),
		UT(test_9digits),
		UT(test_u8),
		UT(test_fixed),
		UT(test_endpoint_ipv4),
		UT(test_endpoint_ipv6),
		UT(test_endpoint_str_short),
		UT(test_rows_cached),
		UT(test_csv_rows_reference),
		UT(test_csv_rows_stream),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
