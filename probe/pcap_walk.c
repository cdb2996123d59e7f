/* SPDX-License-Identifier: BSD-2-Clause */
/* A capture file's records read in place (pcap_walk.h). */
#include "pcap_walk.h"

#include <string.h>

enum {
	CL_HDR = 24,
	BT_SHB = 0x0A0D0D0A, BT_IDB = 1, BT_SPB = 3, BT_EPB = 6, BT_PB = 2,
	NG_MAGIC = 0x1A2B3C4D,
	OPT_END = 0, OPT_EPB_FLAGS = 2, OPT_TSRESOL = 9, OPT_TSOFFSET = 14,
};
#define NS 1000000000ull

static uint32_t rd32(const struct gs_walk *w, const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return w->swapped ? __builtin_bswap32(v) : v;
}

static uint16_t rd16(const struct gs_walk *w, const uint8_t *p)
{
	uint16_t v;
	memcpy(&v, p, 2);
	return w->swapped ? __builtin_bswap16(v) : v;
}

int gs_walk_init(struct gs_walk *w, const uint8_t *base, size_t size, int dlt, uint32_t snapshot)
{
	uint32_t m;
	memset(w, 0, sizeof *w);
	w->base = base;
	w->size = size;
	w->dlt = dlt;
	w->snapshot = snapshot;
	if (size < CL_HDR || snapshot == 0)
		return -1;
	memcpy(&m, base, 4);
	if (m == 0xa1b2c3d4 || m == 0xa1b23c4d) {
		w->micro = m == 0xa1b2c3d4;
	} else if (m == 0xd4c3b2a1 || m == 0x4d3cb2a1) {
		w->swapped = true;
		w->micro = m == 0xd4c3b2a1;
	} else if (m == BT_SHB) {
		/* the SHB: type, length, byte-order magic, version 1.x, section length, options */
		uint32_t bom, len;
		memcpy(&bom, base + 8, 4);
		if (bom == NG_MAGIC)
			w->swapped = false;
		else if (bom == __builtin_bswap32(NG_MAGIC))
			w->swapped = true;
		else
			return -1;
		len = rd32(w, base + 4);
		if (len < 28 || len % 4 || len > size || rd32(w, base + len - 4) != len || rd16(w, base + 12) != 1)
			return -1;
		w->ng = true;
		w->first = len;
		return 0;
	} else {
		return -1;
	}
	/* classic: version 2.x, the header's link type libpcap's */
	if (rd16(w, base + 4) != 2 || rd32(w, base + 20) != (uint32_t)dlt)
		return -1;
	w->first = CL_HDR;
	return 0;
}

void gs_walk_start(const struct gs_walk *w, struct gs_walk_it *it)
{
	memset(it, 0, sizeof *it);
	it->off = w->first;
}

/* An IDB's options: if_tsresol of 10^-0..10^-9 kept, if_tsoffset and
 * anything malformed refused. */
static bool idb_options(const struct gs_walk *w, const uint8_t *p, size_t n, uint8_t *res)
{
	bool seen = false;
	*res = 6;
	while (n >= 4) {
		uint16_t code = rd16(w, p), len = rd16(w, p + 2);
		size_t padded = ((size_t)len + 3) & ~(size_t)3;
		if (code == OPT_END)
			return true;
		if (padded > n - 4)
			return false;
		if (code == OPT_TSOFFSET)
			return false;
		if (code == OPT_TSRESOL) {
			if (seen || len != 1 || p[4] > 9)
				return false; /* twice, a binary resolution, or finer than ns */
			*res = p[4];
			seen = true;
		}
		p += 4 + padded;
		n -= 4 + padded;
	}
	return n == 0;
}

/* An EPB's epb_flags direction (bits 0-1: 1 inbound, 2 outbound; 0 not known).
 * Only read, never refused: libpcap reads the packet whatever its options. */
static uint8_t epb_direction(const struct gs_walk *w, const uint8_t *p, size_t n)
{
	while (n >= 4) {
		uint16_t code = rd16(w, p), len = rd16(w, p + 2);
		size_t padded = ((size_t)len + 3) & ~(size_t)3;
		if (code == OPT_END || padded > n - 4)
			return 0;
		if (code == OPT_EPB_FLAGS && len == 4)
			return (uint8_t)(rd32(w, p + 4) & 3);
		p += 4 + padded;
		n -= 4 + padded;
	}
	return 0;
}

static const uint64_t dec_pow[10] = { 1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000, NS };

int gs_walk_next_ng(const struct gs_walk *w, struct gs_walk_it *it, struct gs_walk_rec *r)
{
	for (;;) {
		const uint8_t *p = w->base + it->off;
		size_t left = w->size - it->off;
		uint32_t type, blen, caplen, len, ifid;
		uint64_t t;
		if (left == 0)
			return 0;
		if (left < 12)
			return -1;
		type = rd32(w, p);
		blen = rd32(w, p + 4);
		if (blen < 12 || blen % 4 || blen > left || rd32(w, p + blen - 4) != blen)
			return -1;
		it->off += blen;
		switch (type) {
		case BT_EPB:
			if (blen < 32)
				return -1;
			ifid = rd32(w, p + 8);
			t = (uint64_t)rd32(w, p + 12) << 32 | rd32(w, p + 16);
			caplen = rd32(w, p + 20);
			len = rd32(w, p + 24);
			if (ifid >= it->nif || caplen > w->snapshot || ((caplen + 3ull) & ~3ull) > blen - 32ull)
				return -1;
			if (!gs_walk_ts_(t / dec_pow[it->res], t % dec_pow[it->res] * dec_pow[9 - it->res], &r->ts))
				return -1;
			r->data = p + 28;
			r->caplen = caplen;
			r->len = len;
			{
				/* the options after the padded packet data, before the trailing length */
				size_t used = 28 + (((size_t)caplen + 3) & ~(size_t)3);
				r->dir = blen - 4 > used ? epb_direction(w, p + used, blen - 4 - used) : 0;
			}
			gs_walk_ahead_(w->base, w->size, it, it->off);
			return 1;
		case BT_SPB:
			/* no time stamp; the captured length: the packet's, at most the snapshot's */
			if (blen < 16 || it->nif == 0)
				return -1;
			len = rd32(w, p + 8);
			caplen = len < w->snapshot ? len : w->snapshot;
			if (((caplen + 3ull) & ~3ull) > blen - 16ull)
				return -1;
			r->ts = 0;
			r->data = p + 12;
			r->caplen = caplen;
			r->len = len;
			r->dir = 0;
			gs_walk_ahead_(w->base, w->size, it, it->off);
			return 1;
		case BT_IDB:
			/* link type (16 bits), reserved, snapshot length, options */
			/* One interface: libpcap, given the file from a second IDB
			 * on, knows the first from its own opening and reads the
			 * second itself; an interface it did not see would be
			 * unknown to it.  The link type libpcap's. */
			if (blen < 20 || it->nif == 1 || rd16(w, p + 8) != (uint32_t)w->dlt)
				return -1;
			if (!idb_options(w, p + 16, blen - 20, &it->res))
				return -1;
			it->nif = 1;
			break;
		case BT_SHB:
		case BT_PB:
			return -1; /* a second section; the obsolete packet block */
		default:
			break; /* name resolution, statistics, ...: libpcap skips them too */
		}
	}
}

bool gs_walk_check(struct gs_walk *w)
{
	struct gs_walk_it it;
	struct gs_walk_rec r;
	uint64_t n = 0;
	int rc;
	gs_walk_start(w, &it);
	while ((rc = gs_walk_next(w, &it, &r)) == 1)
		n++;
	w->packets = n;
	return rc == 0;
}
