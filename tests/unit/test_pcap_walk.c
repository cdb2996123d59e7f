/* SPDX-License-Identifier: BSD-2-Clause */
/* The capture walker of read --threads (probe/pcap_walk.h): classic pcap in
 * both byte orders and resolutions, pcapng (SHB, IDB with if_tsresol, EPB,
 * SPB, skipped blocks), and every malformed or unknown thing it must leave to
 * libpcap, at the right record (the hand-over offset). */
#include "unit.h"
#include "../../probe/pcap_walk.h"

struct fb {
	uint8_t d[4096];
	size_t n;
	bool be;
};

static void put32(struct fb *b, uint32_t v)
{
	if (b->be)
		v = __builtin_bswap32(v);
	memcpy(b->d + b->n, &v, 4);
	b->n += 4;
}

static void put16(struct fb *b, uint16_t v)
{
	if (b->be)
		v = __builtin_bswap16(v);
	memcpy(b->d + b->n, &v, 2);
	b->n += 2;
}

static void put_bytes(struct fb *b, const void *p, size_t n)
{
	memcpy(b->d + b->n, p, n);
	b->n += n;
	while (b->n % 4)
		b->d[b->n++] = 0;
}

/* longer than any packet written below */
static const uint8_t PKT[] = "0123456789abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
			     "abcdefghijklmnopqrstuvwxyz0123456789";

/* ---- classic ------------------------------------------------------------ */

static void classic_hdr(struct fb *b, bool nano, uint32_t snap, uint32_t link)
{
	put32(b, nano ? 0xa1b23c4d : 0xa1b2c3d4);
	put16(b, 2);
	put16(b, 4);
	put32(b, 0);
	put32(b, 0);
	put32(b, snap);
	put32(b, link);
}

static void classic_rec(struct fb *b, uint32_t sec, uint32_t frac, uint32_t caplen, uint32_t len)
{
	put32(b, sec);
	put32(b, frac);
	put32(b, caplen);
	put32(b, len);
	memcpy(b->d + b->n, PKT, caplen);
	b->n += caplen;
}

static void test_classic_forms(void **state)
{
	(void)state;
	for (int form = 0; form < 4; form++) {
		struct fb b = { .be = form & 1 };
		bool nano = form & 2;
		struct gs_walk w;
		struct gs_walk_it it;
		struct gs_walk_rec r;
		classic_hdr(&b, nano, 65535, 1);
		classic_rec(&b, 1700000000, nano ? 123456789 : 123456, 60, 60);
		classic_rec(&b, 0xf0000000u, nano ? 999999999 : 999999, 0, 1514); /* past 2038 */
		classic_rec(&b, 5, 0, 17, 40);
		assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 65535), 0);
		assert_false(w.ng);
		assert_int_equal(w.swapped, form & 1);
		gs_walk_start(&w, &it);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.ts, 1700000000LL * 1000000000 + 123456789 - (nano ? 0 : 789));
		assert_int_equal(r.caplen, 60);
		assert_int_equal(r.len, 60);
		assert_memory_equal(r.data, PKT, 60);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.ts, (int64_t)0xf0000000u * 1000000000 + 999999999 - (nano ? 0 : 999));
		assert_int_equal(r.caplen, 0);
		assert_int_equal(r.len, 1514);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.ts, 5000000000LL);
		assert_memory_equal(r.data, PKT, 17);
		assert_int_equal(gs_walk_next(&w, &it, &r), 0);
		assert_true(gs_walk_check(&w));
		assert_int_equal(w.packets, 3);
	}
}

/* A file that goes wrong at its third record: the walk hands over there. */
static void expect_handover(const struct fb *b, int dlt, uint32_t snap, size_t bad_off)
{
	struct gs_walk w;
	struct gs_walk_it it;
	struct gs_walk_rec r;
	int n = 0, rc;
	assert_int_equal(gs_walk_init(&w, b->d, b->n, dlt, snap), 0);
	gs_walk_start(&w, &it);
	for (;;) {
		size_t at = it.off;
		rc = gs_walk_next(&w, &it, &r);
		if (rc != 1) {
			assert_int_equal(at, bad_off);
			break;
		}
		n++;
	}
	assert_int_equal(rc, -1);
	assert_int_equal(n, 2);
	assert_false(gs_walk_check(&w));
}

static void test_classic_malformed(void **state)
{
	(void)state;
	for (int k = 0; k < 6; k++) {
		struct fb b = { .be = k & 1 };
		size_t bad;
		classic_hdr(&b, false, 64, 1);
		classic_rec(&b, 1, 1, 60, 60);
		classic_rec(&b, 2, 2, 60, 60);
		bad = b.n;
		switch (k) {
		case 0: /* a capture length above the snapshot length: libpcap's */
			classic_rec(&b, 3, 3, 65, 65);
			break;
		case 1: /* cut inside the record header */
			put32(&b, 3);
			put32(&b, 3);
			break;
		case 2: /* cut inside the data */
			classic_rec(&b, 3, 3, 60, 60);
			b.n -= 10;
			break;
		case 3: /* a negative fraction (libpcap's conversion, not a plain sum) */
			classic_rec(&b, 3, 0xffffffffu, 10, 10);
			break;
		case 4: /* a fraction of a second of a second or more */
			classic_rec(&b, 3, 1000000, 10, 10);
			break;
		case 5: /* three bytes of a header */
			b.d[b.n++] = 1;
			b.d[b.n++] = 2;
			b.d[b.n++] = 3;
			break;
		}
		expect_handover(&b, 1, 64, bad);
	}
}

static void test_classic_headers(void **state)
{
	struct fb b = { 0 };
	struct gs_walk w;
	(void)state;
	classic_hdr(&b, true, 65535, 1);
	/* the link type must be libpcap's; the snapshot length known */
	assert_int_equal(gs_walk_init(&w, b.d, b.n, 113, 65535), -1);
	assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 0), -1);
	assert_int_equal(gs_walk_init(&w, b.d, 23, 1, 65535), -1);
	/* Kuznetzov's magic, and not a capture at all */
	b.d[0] = 0x34;
	b.d[1] = 0xcd;
	b.d[2] = 0xb2;
	b.d[3] = 0xa1;
	assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 65535), -1);
	memcpy(b.d, "GIOP", 4);
	assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 65535), -1);
	/* version 2 only */
	b.n = 0;
	classic_hdr(&b, true, 65535, 1);
	b.d[4] = 3;
	assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 65535), -1);
	/* an empty capture: no record */
	b.d[4] = 2;
	assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 65535), 0);
	assert_true(gs_walk_check(&w));
	assert_int_equal(w.packets, 0);
}

/* ---- pcapng --------------------------------------------------------------- */

static size_t blk_start(struct fb *b, uint32_t type)
{
	size_t at = b->n;
	put32(b, type);
	put32(b, 0); /* the length, set by blk_end */
	return at;
}

static void blk_end(struct fb *b, size_t at)
{
	uint32_t len = (uint32_t)(b->n - at + 4), v = b->be ? __builtin_bswap32(len) : len;
	memcpy(b->d + at + 4, &v, 4);
	put32(b, len);
}

static void shb(struct fb *b)
{
	size_t at = blk_start(b, 0x0A0D0D0A);
	put32(b, 0x1A2B3C4D);
	put16(b, 1);
	put16(b, 0);
	put32(b, 0xffffffff);
	put32(b, 0xffffffff);
	blk_end(b, at);
}

/* res < 0: no if_tsresol option; tsoff: an if_tsoffset option */
static void idb(struct fb *b, uint16_t link, uint32_t snap, int res, bool tsoff)
{
	size_t at = blk_start(b, 1);
	put16(b, link);
	put16(b, 0);
	put32(b, snap);
	if (res >= 0) {
		uint8_t v = (uint8_t)res;
		put16(b, 9);
		put16(b, 1);
		put_bytes(b, &v, 1);
	}
	if (tsoff) {
		uint8_t z[8] = { 0 };
		put16(b, 14);
		put16(b, 8);
		put_bytes(b, z, 8);
	}
	put16(b, 0);
	put16(b, 0);
	blk_end(b, at);
}

static void epb(struct fb *b, uint32_t ifid, uint64_t t, uint32_t caplen, uint32_t len)
{
	size_t at = blk_start(b, 6);
	put32(b, ifid);
	put32(b, (uint32_t)(t >> 32));
	put32(b, (uint32_t)t);
	put32(b, caplen);
	put32(b, len);
	put_bytes(b, PKT, caplen);
	blk_end(b, at);
}

/* An EPB with options after its (padded) packet: `opts` of them, each code, length
 * and a 32-bit value (len 4) or nothing; then opt_endofopt unless `noend`. */
static void epb_opts(struct fb *b, uint32_t caplen, const uint16_t (*opts)[2], const uint32_t *vals, int nopts,
		     bool noend)
{
	size_t at = blk_start(b, 6);
	put32(b, 0);
	put32(b, 0);
	put32(b, 1);
	put32(b, caplen);
	put32(b, caplen);
	put_bytes(b, PKT, caplen); /* (padded to 4 bytes) */
	for (int i = 0; i < nopts; i++) {
		put16(b, opts[i][0]);
		put16(b, opts[i][1]);
		if (opts[i][1] == 4)
			put32(b, vals[i]);
	}
	if (!noend) {
		put16(b, 0);
		put16(b, 0);
	}
	blk_end(b, at);
}

/* The EPB flags' direction (the capture host's own packets: the nesting stage's
 * host addresses); no flags, other options first, a flags option of another
 * length: not known.  Never a reason to hand the file to libpcap. */
static void test_pcapng_epb_flags(void **state)
{
	static const uint16_t flags_only[1][2] = { { 2, 4 } };
	static const uint16_t after_comment[2][2] = { { 1, 0 }, { 2, 4 } };
	static const uint16_t bad_len[1][2] = { { 2, 0 } };
	static const uint32_t out[2] = { 2, 2 }, in[1] = { 1 }, odd[1] = { 0xfffffffe };
	(void)state;
	for (int be = 0; be < 2; be++) {
		struct fb b = { .be = be };
		struct gs_walk w;
		struct gs_walk_it it;
		struct gs_walk_rec r;
		shb(&b);
		idb(&b, 1, 128, 9, false);
		epb_opts(&b, 61, flags_only, out, 1, false);     /* outbound */
		epb_opts(&b, 60, flags_only, in, 1, true);       /* inbound, no end option */
		epb_opts(&b, 62, after_comment, out, 2, false);  /* after an empty comment */
		epb_opts(&b, 60, bad_len, odd, 1, false);        /* a flags option of length 0 */
		epb_opts(&b, 60, flags_only, odd, 1, false);     /* bits 0-1 only: 2 */
		epb(&b, 0, 1, 60, 60);                           /* no options */
		assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 128), 0);
		gs_walk_start(&w, &it);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.dir, 2);
		assert_int_equal(r.caplen, 61);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.dir, 1);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.dir, 2);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.dir, 0);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.dir, 2);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.dir, 0);
		assert_int_equal(gs_walk_next(&w, &it, &r), 0);
	}
}

static void spb(struct fb *b, uint32_t len, uint32_t stored)
{
	size_t at = blk_start(b, 3);
	put32(b, len);
	put_bytes(b, PKT, stored);
	blk_end(b, at);
}

static void other_block(struct fb *b, uint32_t type)
{
	size_t at = blk_start(b, type);
	put32(b, 0);
	blk_end(b, at);
}

static void test_pcapng_forms(void **state)
{
	static const int res[] = { -1, 9, 3, 0 };
	static const int64_t ts[] = { 1700000000123456000LL, 1700000000123456789LL, 1700000000123000000LL,
				      1700000000000000000LL };
	static const uint64_t raw[] = { 1700000000123456ull, 1700000000123456789ull, 1700000000123ull,
					1700000000ull };
	(void)state;
	for (int form = 0; form < 8; form++) {
		struct fb b = { .be = form & 1 };
		int k = form >> 1;
		struct gs_walk w;
		struct gs_walk_it it;
		struct gs_walk_rec r;
		size_t second;
		shb(&b);
		other_block(&b, 4);                   /* a name resolution block: skipped */
		idb(&b, 1, 128, res[k], false);       /* no if_tsresol: microseconds */
		epb(&b, 0, raw[k], 60, 60);
		epb(&b, 0, raw[k] + 1, 61, 1514);
		other_block(&b, 5);                   /* interface statistics: skipped */
		other_block(&b, 0x40000BAD);          /* a custom block: skipped */
		spb(&b, 70, 72);                      /* cut to the snapshot length (64) */
		spb(&b, 20, 20);
		second = b.n;
		idb(&b, 1, 128, 9, false);            /* a second interface: libpcap's */
		epb(&b, 1, raw[k], 60, 60);
		assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 64), 0);
		assert_true(w.ng);
		assert_int_equal(w.swapped, form & 1);
		gs_walk_start(&w, &it);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.ts, ts[k]);
		assert_int_equal(r.caplen, 60);
		assert_int_equal(r.len, 60);
		assert_memory_equal(r.data, PKT, 60);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.ts, ts[k] + (k == 0 ? 1000 : k == 1 ? 1 : k == 2 ? 1000000 : 1000000000));
		assert_int_equal(r.caplen, 61);
		assert_int_equal(r.len, 1514);
		assert_memory_equal(r.data, PKT, 61);
		/* an SPB: no time stamp, the captured length the packet's, at most
		 * the snapshot length */
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.ts, 0);
		assert_int_equal(r.caplen, 64);
		assert_int_equal(r.len, 70);
		assert_memory_equal(r.data, PKT, 64);
		assert_int_equal(gs_walk_next(&w, &it, &r), 1);
		assert_int_equal(r.caplen, 20);
		assert_int_equal(r.len, 20);
		{
			size_t at = it.off;
			assert_int_equal(gs_walk_next(&w, &it, &r), -1);
			assert_int_equal(at, second); /* libpcap reads on from the second IDB */
		}
		assert_false(gs_walk_check(&w));
		assert_int_equal(w.packets, 4);
		/* without the second interface: the whole file */
		assert_int_equal(gs_walk_init(&w, b.d, second, 1, 64), 0);
		assert_true(gs_walk_check(&w));
		assert_int_equal(w.packets, 4);
	}
}

static void test_pcapng_malformed(void **state)
{
	(void)state;
	for (int k = 0; k < 15; k++) {
		struct fb b = { .be = k & 1 };
		size_t bad, at;
		shb(&b);
		idb(&b, 1, 64, 9, false);
		epb(&b, 0, 1, 10, 10);
		spb(&b, 10, 12);
		bad = b.n;
		switch (k) {
		case 0: /* an interface never described */
			epb(&b, 1, 1, 10, 10);
			break;
		case 1: /* a capture length above the snapshot length */
			epb(&b, 0, 1, 65, 65);
			break;
		case 2: /* a second section */
			shb(&b);
			break;
		case 3: /* if_tsoffset */
			idb(&b, 1, 64, 9, true);
			break;
		case 4: /* another link type */
			idb(&b, 113, 64, 9, false);
			break;
		case 5: /* another snapshot length */
			idb(&b, 1, 65, 9, false);
			break;
		case 6: /* a binary resolution */
			idb(&b, 1, 64, 0x80 | 20, false);
			break;
		case 7: /* finer than nanoseconds */
			idb(&b, 1, 64, 12, false);
			break;
		case 8: /* the trailer's length not the header's */
			epb(&b, 0, 1, 10, 10);
			b.d[b.n - 4] ^= b.be ? 0 : 4;
			b.d[b.n - 1] ^= b.be ? 4 : 0;
			break;
		case 9: /* a length not a multiple of 4 */
			at = blk_start(&b, 6);
			put32(&b, 0);
			blk_end(&b, at);
			b.d[at + (b.be ? 7 : 4)] += 1;
			break;
		case 10: /* cut inside a block */
			epb(&b, 0, 1, 40, 40);
			b.n -= 8;
			break;
		case 11: /* data longer than the block */
			epb(&b, 0, 1, 10, 10);
			b.d[bad + 20 + (b.be ? 3 : 0)] = 40;
			break;
		case 12: /* an obsolete packet block */
			other_block(&b, 2);
			break;
		case 13: /* a time stamp out of range */
			epb(&b, 0, UINT64_MAX, 10, 10);
			break;
		case 14: /* eight bytes of a block header */
			put32(&b, 6);
			put32(&b, 32);
			break;
		}
		expect_handover(&b, 1, 64, bad);
	}
}

/* An interface the walker does not take: nothing walked, the file is libpcap's. */
static void test_pcapng_idb_refused(void **state)
{
	(void)state;
	for (int k = 0; k < 10; k++) {
		struct fb b = { .be = k & 1 };
		struct gs_walk w;
		struct gs_walk_it it;
		struct gs_walk_rec r;
		shb(&b);
		switch (k >> 1) {
		case 0: idb(&b, 1, 64, 9, true); break;          /* if_tsoffset */
		case 1: idb(&b, 1, 64, 0x80 | 20, false); break; /* a binary resolution */
		case 2: idb(&b, 1, 64, 12, false); break;        /* finer than ns */
		case 3: idb(&b, 113, 64, 9, false); break;       /* not libpcap's link type */
		case 4: /* two if_tsresol options */
			{
				size_t a = blk_start(&b, 1);
				uint8_t v = 9;
				put16(&b, 1);
				put16(&b, 0);
				put32(&b, 64);
				for (int i = 0; i < 2; i++) {
					put16(&b, 9);
					put16(&b, 1);
					put_bytes(&b, &v, 1);
				}
				put16(&b, 0);
				put16(&b, 0);
				blk_end(&b, a);
			}
			break;
		}
		epb(&b, 0, 1, 10, 10);
		assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 64), 0);
		gs_walk_start(&w, &it);
		assert_int_equal(gs_walk_next(&w, &it, &r), -1);
		assert_false(gs_walk_check(&w));
		assert_int_equal(w.packets, 0);
	}
}

static void test_pcapng_headers(void **state)
{
	struct fb b = { 0 };
	struct gs_walk w;
	struct gs_walk_it it;
	struct gs_walk_rec r;
	(void)state;
	shb(&b);
	/* a packet before any interface: libpcap's */
	spb(&b, 10, 12);
	assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 64), 0);
	gs_walk_start(&w, &it);
	assert_int_equal(gs_walk_next(&w, &it, &r), -1);
	/* a byte-order magic that is none */
	b.n = 0;
	shb(&b);
	b.d[8] = 0x55;
	assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 64), -1);
	/* a section header longer than the file, a version 2 */
	b.n = 0;
	shb(&b);
	assert_int_equal(gs_walk_init(&w, b.d, b.n - 4, 1, 64), -1);
	b.d[12] = 2;
	assert_int_equal(gs_walk_init(&w, b.d, b.n, 1, 64), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_classic_forms),
		cmocka_unit_test(test_classic_malformed),
		cmocka_unit_test(test_classic_headers),
		cmocka_unit_test(test_pcapng_forms),
		cmocka_unit_test(test_pcapng_malformed),
		cmocka_unit_test(test_pcapng_epb_flags),
		cmocka_unit_test(test_pcapng_idb_refused),
		cmocka_unit_test(test_pcapng_headers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
