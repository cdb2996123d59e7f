/* SPDX-License-Identifier: BSD-2-Clause */
/* probe/attach_times.c: attach's send/recv instants per connection direction.
 * The lookups scan dense copies of the events' keys (gs_times_key); checked
 * here against the events themselves: a reference written over the rings of
 * struct gs_times_ev (the lookups as they were before the dense keys), on
 * pseudo-random streams of sends and recvs (known seed, several directions,
 * rings wrapped many times, threads entering sends out of order, sends of
 * unknown length, GIOP ids repeated), and on hand-made cases. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "../../probe/attach_times.h"

#define UNKNOWN_SPAN (16u << 20)

static int64_t ref_send(const struct gs_times_dir *d, uint32_t seq, int64_t not_after, uint8_t type, uint32_t rid)
{
	uint32_t n = d->n_send < GS_TIMES_RING ? d->n_send : GS_TIMES_RING, best = UINT32_MAX;
	int64_t ts = 0, ts_id = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct gs_times_ev *ev = &d->send[i];
		uint32_t into = seq - ev->seq;
		if (into >= UNKNOWN_SPAN || ev->ts > not_after)
			continue;
		if (ev->has_id && ev->type == type && ev->rid == rid && ev->ts > ts_id)
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

static int64_t ref_recv(const struct gs_times_dir *d, uint32_t seq)
{
	uint32_t n = d->n_recv < GS_TIMES_RING ? d->n_recv : GS_TIMES_RING;
	int64_t ts = 0;
	for (uint32_t i = 0; i < n; i++) {
		const struct gs_times_ev *ev = &d->recv[i];
		if (seq - ev->seq < ev->len && (!ts || ev->ts < ts))
			ts = ev->ts;
	}
	return ts;
}

static uint64_t rng_next(uint64_t *s)
{
	/* xorshift64* */
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545F4914F6CDD1DULL;
}

static void ep(struct gs_endpoint *e, uint8_t family, uint32_t a, uint16_t port)
{
	memset(e, 0, sizeof *e);
	e->family = family;
	e->port = port;
	memcpy(e->addr, &a, 4);
	if (family == 6)
		memcpy(e->addr + 12, &a, 4);
}

static void matches_reference(void **state)
{
	struct gs_times t;
	struct gs_endpoint src[6], dst[6];
	uint32_t next_seq[6], sseq[6];
	uint64_t rng = 0x6b38u;
	int64_t now = 1000000;
	uint32_t checked = 0, found = 0;
	(void)state;
	assert_int_equal(gs_times_init(&t, 64), 0);
	for (int k = 0; k < 6; k++) {
		/* IPv4 and IPv6; two directions differ only in the port */
		ep(&src[k], k % 2 ? 6 : 4, 0x0a000001u + (uint32_t)(k / 2), (uint16_t)(40000 + k));
		ep(&dst[k], k % 2 ? 6 : 4, 0x0a000002u, 2809);
		/* near the wrap of sequence space for some */
		next_seq[k] = sseq[k] = k < 3 ? 0xffff0000u + (uint32_t)k * 1000 : (uint32_t)rng_next(&rng);
	}
	for (int step = 0; step < 20000; step++) {
		int k = (int)(rng_next(&rng) % 6);
		uint64_t r = rng_next(&rng);
		struct gs_times_id id = { (r & 3) != 0, (uint8_t)((r >> 2) % 3), (uint32_t)((r >> 8) % 40) };
		uint32_t len = 12 + (uint32_t)((r >> 16) % 300);
		now += 1 + (int64_t)((r >> 32) % 5000);
		if (r & 0x10000000u) {
			/* a send: now and then of unknown length, or entered early
			 * (a lower sequence number than its bytes get) */
			uint32_t at = next_seq[k] - ((r >> 40) % 8 == 0 ? len : 0);
			gs_times_add(&t, &src[k], &dst[k], true, at, (r >> 44) % 10 == 0 ? 0 : len, now, &id);
			next_seq[k] += len;
		} else {
			gs_times_add(&t, &dst[k], &src[k], false, sseq[k], len, now, NULL);
			sseq[k] += len;
		}
		/* look up bytes around what was sent and received */
		for (int q = 0; q < 4; q++) {
			int j = (int)(rng_next(&rng) % 6);
			const struct gs_times_dir *ds = gs_times_dir(&t, &src[j], &dst[j]);
			const struct gs_times_dir *dr = gs_times_dir(&t, &dst[j], &src[j]);
			uint64_t u = rng_next(&rng);
			uint32_t seq = next_seq[j] - (uint32_t)(u % 20000);
			int64_t na = now - (int64_t)((u >> 20) % 100000);
			uint8_t type = (uint8_t)((u >> 40) % 3);
			uint32_t rid = (uint32_t)((u >> 44) % 40);
			if (ds) {
				int64_t a = gs_times_send(ds, seq, na, type, rid);
				assert_int_equal(a, ref_send(ds, seq, na, type, rid));
				found += a != 0;
				checked++;
			}
			if (dr) {
				uint32_t rs = sseq[j] - (uint32_t)(u % 20000);
				int64_t b = gs_times_recv(dr, rs);
				assert_int_equal(b, ref_recv(dr, rs));
				found += b != 0;
				checked++;
			}
		}
	}
	/* the lookups did find instants, not only agree on none */
	assert_true(checked > 50000);
	assert_true(found > checked / 4);
	gs_times_free(&t);
}

static void by_id_and_span(void **state)
{
	struct gs_times t;
	struct gs_endpoint a, b, a6;
	struct gs_times_id req7 = { true, 0, 7 }, req8 = { true, 0, 8 };
	const struct gs_times_dir *d;
	(void)state;
	assert_int_equal(gs_times_init(&t, 16), 0);
	ep(&a, 4, 0x0a000001u, 1234);
	ep(&b, 4, 0x0a000002u, 2809);
	ep(&a6, 6, 0x0a000001u, 1234);
	/* two threads: request 8 enters first with seq 100, request 7 second
	 * with seq 100 too (both read write_seq before either queued) */
	gs_times_add(&t, &a, &b, true, 100, 50, 1000, &req8);
	gs_times_add(&t, &a, &b, true, 100, 50, 1100, &req7);
	d = gs_times_dir(&t, &a, &b);
	assert_non_null(d);
	/* the buffer names the message: each gets its own entry time */
	assert_int_equal(gs_times_send(d, 150, 5000, 0, 8), 1000);
	assert_int_equal(gs_times_send(d, 100, 5000, 0, 7), 1100);
	/* by sequence alone (a reply type): the latest of equals */
	assert_int_equal(gs_times_send(d, 120, 5000, 1, 7), 1100);
	/* not after not_after */
	assert_int_equal(gs_times_send(d, 120, 1050, 1, 7), 1000);
	/* the IPv6 direction with the same bytes in its address is another one */
	assert_null(gs_times_dir(&t, &a6, &b));
	/* recv: the earliest that returned the byte */
	gs_times_add(&t, &b, &a, false, 500, 10, 2000, NULL);
	gs_times_add(&t, &b, &a, false, 505, 10, 1900, NULL);
	d = gs_times_dir(&t, &b, &a);
	assert_int_equal(gs_times_recv(d, 507), 1900);
	assert_int_equal(gs_times_recv(d, 502), 2000);
	assert_int_equal(gs_times_recv(d, 515), 0);
	gs_times_free(&t);
}

/* A message written in more sends than the ring holds (omniORB: a 1.28 MB
 * reply, 157 Fragments of 8 KiB, a send each): its first send, pinned when
 * the tap saw its header (or when it came, its head showing the message),
 * is found when its call ends; so is the recv of a whole message's last
 * byte. */
static void pinned_start(void **state)
{
	struct gs_times t;
	struct gs_endpoint a, b;
	struct gs_times_id rep = { true, 1, 6 }, frag = { true, 7, 6 };
	const struct gs_times_dir *d;
	const uint32_t base = 0xfffff000u; /* across the wrap of sequence space */
	(void)state;
	assert_int_equal(gs_times_init(&t, 16), 0);
	ep(&a, 4, 0x0a000002u, 2809);
	ep(&b, 4, 0x0a000001u, 40000);
	gs_times_add(&t, &a, &b, true, base, 8192, 1000, &rep);
	/* the header's segment: pinned once, however often it is said */
	gs_times_pin_send(&t, &a, &b, base);
	gs_times_pin_send(&t, &a, &b, base);
	for (uint32_t i = 1; i < 157; i++)
		gs_times_add(&t, &a, &b, true, base + i * 8192, 8192, 1000 + (int64_t)i, &frag);
	d = gs_times_dir(&t, &a, &b);
	assert_non_null(d);
	assert_int_equal(d->n_pin, 1);
	assert_int_equal(gs_times_send(d, base, 5000, 1, 6), 1000);
	assert_non_null(gs_times_ev_at(d, true, 1000));
	assert_int_equal(gs_times_ev_at(d, true, 1000)->seq, base);
	/* a later byte of the message: its own send, still in the ring */
	assert_int_equal(gs_times_send(d, base + 156 * 8192 + 5, 5000, 1, 99), 1156);
	/* a start the ring no longer holds cannot be pinned any more */
	gs_times_pin_send(&t, &a, &b, base + 8192);
	assert_int_equal(d->n_pin, 1);
	/* without the pin (and without a head: the common send), the first
	 * send is gone */
	gs_times_free(&t);
	assert_int_equal(gs_times_init(&t, 16), 0);
	gs_times_add(&t, &a, &b, true, base, 8192, 1000, NULL);
	for (uint32_t i = 1; i < 157; i++)
		gs_times_add(&t, &a, &b, true, base + i * 8192, 8192, 1000 + (int64_t)i, NULL);
	assert_int_equal(gs_times_send(gs_times_dir(&t, &a, &b), base, 5000, 1, 6), 0);
	/* a send whose head shows a Reply is kept when it comes, before the tap
	 * sees its header (the bytes queued before it may be many sends) */
	gs_times_add(&t, &a, &b, true, base + 2000000, 8192, 4000, &rep);
	for (uint32_t i = 1; i < 157; i++)
		gs_times_add(&t, &a, &b, true, base + 2000000 + i * 8192, 8192, 4000 + (int64_t)i, &frag);
	assert_int_equal(gs_times_send(gs_times_dir(&t, &a, &b), base + 2000000, 5000, 1, 6), 4000);
	/* so is the recv that returns the last byte of a whole message the tap
	 * announced, however many recvs follow */
	gs_times_add(&t, &b, &a, false, 7000, 100, 4500, NULL);
	gs_times_expect_end(&t, &b, &a, 7000 + 8191);
	gs_times_add(&t, &b, &a, false, 7100, 8092, 4600, NULL);
	gs_times_add(&t, &b, &a, false, 15192, 100, 4700, NULL);
	for (uint32_t i = 0; i < 100; i++)
		gs_times_add(&t, &b, &a, false, 15292 + i * 10, 10, 4800 + (int64_t)i, NULL);
	assert_int_equal(gs_times_recv(gs_times_dir(&t, &b, &a), 7000 + 8191), 4600);
	assert_int_equal(gs_times_recv(gs_times_dir(&t, &b, &a), 7000 + 50), 0);
	assert_non_null(gs_times_ev_at(gs_times_dir(&t, &b, &a), false, 4600));
	/* a send of unknown length (sendmsg) holding the start mid-buffer */
	gs_times_add(&t, &b, &a, true, 500, 0, 3000, NULL);
	gs_times_pin_send(&t, &b, &a, 600);
	for (uint32_t i = 0; i < 100; i++)
		gs_times_add(&t, &b, &a, true, 10000 + i * 10, 10, 3001 + (int64_t)i, NULL);
	assert_int_equal(gs_times_send(gs_times_dir(&t, &b, &a), 600, 5000, 0, 2), 3000);
	gs_times_free(&t);
}

/* A Request's end expected before any recv on its direction (the first
 * request of a connection): the recv that returns it tells the thread that
 * read it; a recv of two requests tells both; other messages' ends nothing. */
struct reads_seen {
	uint32_t n, rid[4], tid[4];
	bool oneway[4];
};

static void on_read(void *arg, const struct gs_times_dir *d, uint32_t rid, uint8_t kind, const struct gs_times_ev *ev)
{
	struct reads_seen *r = arg;
	(void)d;
	if (r->n < 4) {
		r->rid[r->n] = rid;
		r->tid[r->n] = ev->tid;
		r->oneway[r->n] = kind == GS_TREQ_ONEWAY;
	}
	r->n++;
}

static void request_read_by(void **state)
{
	struct gs_times t;
	struct gs_endpoint a, b;
	struct reads_seen seen;
	(void)state;
	memset(&a, 0, sizeof a);
	memset(&b, 0, sizeof b);
	a.family = b.family = 4;
	a.port = 40000;
	b.port = 5000;
	memset(&seen, 0, sizeof seen);
	assert_int_equal(gs_times_init(&t, 64), 0);
	t.on_read = on_read;
	t.read_arg = &seen;
	/* nothing of a -> b yet: the request's end is kept all the same */
	gs_times_expect_request(&t, &a, &b, 1000 + 99, 7, GS_TREQ_TWOWAY);
	assert_non_null(gs_times_dir(&t, &a, &b));
	gs_times_add_tid(&t, &a, &b, false, 1000, 50, 10, NULL, 501, 10);
	assert_int_equal(seen.n, 0);
	gs_times_add_tid(&t, &a, &b, false, 1050, 50, 20, NULL, 501, 20);
	assert_int_equal(seen.n, 1);
	assert_int_equal(seen.rid[0], 7);
	assert_int_equal(seen.tid[0], 501);
	assert_false(seen.oneway[0]);
	/* two requests (the second a oneway) and a reply's end in one recv */
	gs_times_expect_request(&t, &a, &b, 1100 + 19, 8, GS_TREQ_TWOWAY);
	gs_times_expect_end(&t, &a, &b, 1100 + 29);
	gs_times_expect_request(&t, &a, &b, 1100 + 59, 9, GS_TREQ_ONEWAY);
	gs_times_add_tid(&t, &a, &b, false, 1100, 60, 30, NULL, 502, 30);
	assert_int_equal(seen.n, 3);
	assert_int_equal(seen.rid[1], 8);
	assert_int_equal(seen.rid[2], 9);
	assert_true(seen.oneway[2]);
	assert_int_equal(seen.tid[2], 502);
	/* the recv first, the tap's record that expects the request's end after it
	 * (the two hooks' records in the other order): the read is told all the same,
	 * once, with the recv's thread; a later recv does not tell it again */
	gs_times_add_tid(&t, &a, &b, false, 1200, 40, 40, NULL, 503, 40);
	assert_int_equal(seen.n, 3);
	gs_times_expect_request(&t, &a, &b, 1200 + 39, 10, GS_TREQ_TWOWAY);
	assert_int_equal(seen.n, 4);
	assert_int_equal(seen.rid[3], 10);
	assert_int_equal(seen.tid[3], 503);
	gs_times_add_tid(&t, &a, &b, false, 1200, 40, 50, NULL, 504, 50);
	assert_int_equal(seen.n, 4);
	/* an end no recv has returned yet waits for its recv */
	gs_times_expect_request(&t, &a, &b, 1240 + 9, 12, GS_TREQ_TWOWAY);
	assert_int_equal(seen.n, 4);
	gs_times_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(request_read_by),
		cmocka_unit_test(matches_reference),
		cmocka_unit_test(by_id_and_span),
		cmocka_unit_test(pinned_start),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
