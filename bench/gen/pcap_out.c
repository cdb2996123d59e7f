/* SPDX-License-Identifier: BSD-2-Clause */
#include "pcap_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define OUT_CAP (4u << 20)

static void flush(struct pcap_out *o)
{
	if (o->len && fwrite(o->buf, 1, o->len, o->f) != o->len) {
		/* a reader that stopped early (giopscope exiting on bad input, head) */
		fprintf(stderr, "giopgen: write: %s\n", strerror(errno ? errno : EIO));
		exit(1);
	}
	o->len = 0;
}

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

/* one's complement sum, 32 bits at a time into a 64-bit accumulator */
static uint64_t sum_bytes(uint64_t s, const uint8_t *p, size_t n)
{
	while (n >= 4) {
		s += (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		p += 4;
		n -= 4;
	}
	if (n >= 2) {
		s += (uint32_t)p[0] << 8 | p[1];
		p += 2;
		n -= 2;
	}
	if (n)
		s += (uint32_t)p[0] << 8;
	return s;
}

static uint16_t fold(uint64_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

void pcap_out_open(struct pcap_out *o, FILE *f)
{
	memset(o, 0, sizeof *o);
	o->f = f;
	o->cap = OUT_CAP;
	o->buf = malloc(o->cap);
	if (!o->buf) {
		fputs("giopgen: out of memory\n", stderr);
		exit(2);
	}
	/* written in host order (little endian here): readers detect it by the magic */
	uint32_t gh[6] = {0xa1b23c4d, 2 | (4u << 16), 0, 0, 262144, 1 /* Ethernet */};
	memcpy(o->buf, gh, sizeof gh);
	o->len = sizeof gh;
}

void pcap_out_tcp(struct pcap_out *o, uint64_t ts_ns, const struct endpoint *src,
		  const struct endpoint *dst, uint32_t seq, uint32_t ack, uint8_t flags,
		  const uint8_t *payload, size_t len, uint16_t mss)
{
	size_t iphl = src->v6 ? 40 : 20, thl = mss ? 24 : 20;
	size_t frame = 14 + iphl + thl + len;
	if (o->cap - o->len < frame + 16)
		flush(o);
	/* strictly increasing time stamps, as one capture point gives them */
	if (ts_ns <= o->last_ts)
		ts_ns = o->last_ts + 1;
	o->last_ts = ts_ns;

	uint8_t *rec = o->buf + o->len;
	uint32_t rh[4] = {(uint32_t)(ts_ns / 1000000000u), (uint32_t)(ts_ns % 1000000000u),
			  (uint32_t)frame, (uint32_t)frame};
	memcpy(rec, rh, sizeof rh);
	uint8_t *eth = rec + 16, *ip = eth + 14, *th = ip + iphl;
	memcpy(eth, dst->mac, 6);
	memcpy(eth + 6, src->mac, 6);
	put16(eth + 12, src->v6 ? 0x86dd : 0x0800);

	uint64_t pseudo;
	if (src->v6) {
		put32(ip, 0x60000000u);
		put16(ip + 4, (uint16_t)(thl + len));
		ip[6] = 6;
		ip[7] = 64;
		memcpy(ip + 8, src->ip, 16);
		memcpy(ip + 24, dst->ip, 16);
		pseudo = sum_bytes(0, ip + 8, 32) + 6 + thl + len;
	} else {
		ip[0] = 0x45;
		ip[1] = 0;
		put16(ip + 2, (uint16_t)(20 + thl + len));
		put16(ip + 4, o->ipid++);
		put16(ip + 6, 0x4000);   /* DF */
		ip[8] = 64;
		ip[9] = 6;
		put16(ip + 10, 0);
		memcpy(ip + 12, src->ip, 4);
		memcpy(ip + 16, dst->ip, 4);
		put16(ip + 10, fold(sum_bytes(0, ip, 20)));
		pseudo = sum_bytes(0, ip + 12, 8) + 6 + thl + len;
	}
	put16(th, src->port);
	put16(th + 2, dst->port);
	put32(th + 4, seq);
	put32(th + 8, (flags & TH_ACK) ? ack : 0);
	th[12] = (uint8_t)((thl / 4) << 4);
	th[13] = flags;
	put16(th + 14, 65535);
	put16(th + 16, 0);
	put16(th + 18, 0);
	if (mss) {
		th[20] = 2;
		th[21] = 4;
		put16(th + 22, mss);
	}
	if (len)
		memcpy(th + thl, payload, len);
	put16(th + 16, fold(sum_bytes(pseudo, th, thl + len)));

	o->len += 16 + frame;
	o->packets++;
	o->bytes += 16 + frame;
}

void pcap_out_close(struct pcap_out *o)
{
	flush(o);
	if (fflush(o->f) != 0) {
		fprintf(stderr, "giopgen: write: %s\n", strerror(errno));
		exit(1);
	}
	free(o->buf);
	o->buf = NULL;
}
