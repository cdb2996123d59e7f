/* SPDX-License-Identifier: BSD-2-Clause */
#include "workload.h"

#include <stdio.h>
#include <string.h>

/* A mix seen in CORBA systems: small synchronous calls dominate, a few carry
 * bulk data (up to 24 KB), events go oneway, naming lookups and _is_a/_non_existent
 * come from ORB internals, and some calls fail. */
const struct op ops[] = {
	{"echoString", 25, BODY_STRING, SZ_SMALL_STR, BODY_STRING, true, 0, false, 0, NULL, 12},
	{"echoOctets", 10, BODY_OCTETS, SZ_MIXED, BODY_OCTETS, true, 0, false, 0, NULL, 15},
	{"echoRecs", 5, BODY_RECS, SZ_MIXED, BODY_RECS, true, 0, false, 0, NULL, 20},
	{"getQuote", 14, BODY_STRING, 6, BODY_QUOTE, false, 0, false, 0, NULL, 8},
	{"publish", 12, BODY_EVENT, SZ_MIXED, BODY_NONE, false, 0, true, 0, NULL, 0},
	{"logRecords", 1, BODY_OCTETS, SZ_LARGE, BODY_NONE, false, 0, true, 0, NULL, 0},
	{"fetchBlock", 3, BODY_LONG, 4096, BODY_OCTETS, false, SZ_LARGE, false, 0, NULL, 40},
	{"storeBlock", 1, BODY_OCTETS, SZ_LARGE, BODY_NONE, false, 0, false, 0.02,
	 "IDL:Bench/Busy:1.0", 60},
	{"fail", 3, BODY_LONG, 7, BODY_NONE, false, 0, false, 1.0, "IDL:Bench/Busy:1.0", 10},
	{"resolve", 5, BODY_NAME, SZ_NAME, BODY_IOR, false, 3, false, 0.1,
	 "IDL:omg.org/CosNaming/NamingContext/NotFound:1.0", 18},
	{"_non_existent", 4, BODY_NONE, 0, BODY_BOOL, false, 0, false, 0, NULL, 5},
	{"_is_a", 3, BODY_STRING, 24, BODY_BOOL, false, 0, false, 0, NULL, 5},
	{"slow", 2, BODY_LONG, 2000, BODY_NONE, false, 0, false, 0, NULL, 2000},
	{"get_state", 4, BODY_NONE, 0, BODY_RECS, false, 480, false, 0, NULL, 9},
};
const unsigned n_ops = sizeof ops / sizeof ops[0];

static unsigned draw_size(struct rng *r, unsigned cls)
{
	unsigned x = rng_below(r, 100);
	switch (cls) {
	case SZ_SMALL_STR:   /* the echo benchmarks' 32, 256 and 4096 */
		return x < 80 ? 32 : x < 95 ? 256 : 4096;
	case SZ_MIXED:
		return x < 60 ? rng_range(r, 8, 64) : x < 88 ? rng_range(r, 100, 1000)
			: x < 98 ? rng_range(r, 1024, 8192) : rng_range(r, 8193, 24576);
	case SZ_LARGE:
		return rng_range(r, 1024, 24576);
	case SZ_NAME:
		return rng_range(r, 1, 3);
	default:
		return cls;
	}
}

static unsigned pick_op(struct rng *r)
{
	static unsigned total;
	if (!total)
		for (unsigned i = 0; i < n_ops; i++)
			total += ops[i].weight;
	unsigned x = rng_below(r, total);
	for (unsigned i = 0; i < n_ops; i++) {
		if (x < ops[i].weight)
			return i;
		x -= ops[i].weight;
	}
	return 0;
}

bool mix_echo;

void plan_call(struct rng *r, struct call_plan *c, double cancel)
{
	memset(c, 0, sizeof *c);
	c->svc_us = rng_lognorm(r, 10, 0.6);
	if (mix_echo) {   /* echoString(32) and nothing else: the smallest calls */
		c->kind = K_REQUEST;
		c->n_req = c->n_rep = 32;
		return;
	}
	if (rng_chance(r, 0.02)) {
		c->kind = K_LOCATE;
		unsigned x = rng_below(r, 100);
		c->outcome = x < 90 ? O_LOC_HERE : x < 98 ? O_LOC_UNKNOWN : O_LOC_FORWARD;
		c->svc_us = rng_lognorm(r, 6, 0.4);
		return;
	}
	const struct op *o = &ops[c->op = pick_op(r)];
	c->kind = K_REQUEST;
	c->oneway = o->oneway;
	c->n_req = draw_size(r, o->req_size);
	c->n_rep = o->echo ? c->n_req : draw_size(r, o->rep_size);
	if (c->oneway)
		return;
	c->svc_us = rng_lognorm(r, o->svc_us, 0.6);
	if (rng_chance(r, 0.01))
		c->svc_us *= 30;   /* the tail: GC pause, lock, disk */
	if (rng_chance(r, o->user_ex))
		c->outcome = O_USER_EX;
	else if (rng_chance(r, 0.01)) {
		c->outcome = O_SYSTEM_EX;
		c->sysex = rng_below(r, 256);
	} else if (rng_chance(r, 0.002))
		c->outcome = O_FORWARD;
	c->cancel = cancel > 0 && rng_chance(r, cancel);
}

/* Object keys of three ORB families: omniORB's short binary keys, TAO's
 * POA-path keys, JacORB's readable ones. */
static const unsigned char key_omni[] = {0xff, 'b', 'e', 'n', 'c', 'h', 0xfe, 0x62, 0x1d, 0x9b,
					 0x67, 0x01, 0x00, 0x00, 0x2c, 0x00, 0x00, 0x00, 0x00};
static const unsigned char key_tao[] = {0x14, 0x01, 0x0f, 0x00, 'R', 'S', 'T', 0x67, 0x9b, 0x1d,
					0x62, 0x00, 0x0e, 0x23, 0x01, 0x00, 0x00, 0x00, 0x01,
					0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 'B',
					'e', 'n', 'c', 'h', 'P', 'O', 'A', 0x00};
static const char key_jac[] = "StandardImplName/BenchPOA/Echo-object-0";
static const char key_ns[] = "NameService";

const unsigned char *object_key(const struct conn_params *p, unsigned which, size_t *len)
{
	/* a few objects per server: the last byte says which */
	static unsigned char k[64];
	const unsigned char *src;
	size_t n;
	switch ((p->key + which) % 4) {
	case 0:
		src = key_omni, n = sizeof key_omni;
		break;
	case 1:
		src = key_tao, n = sizeof key_tao;
		break;
	case 2:
		src = (const unsigned char *)key_jac, n = sizeof key_jac - 1;
		break;
	default:
		*len = sizeof key_ns - 1;
		return (const unsigned char *)key_ns;
	}
	memcpy(k, src, n);
	k[n - 1] = (unsigned char)('0' + which % 8);
	*len = n;
	return k;
}

static const uint16_t server_ports[] = {2809, 683, 5001, 12345, 40001, 40002, 2810, 9999};

static void set_mac(struct endpoint *e)
{
	e->mac[0] = 0x02;   /* locally administered */
	memcpy(e->mac + 1, e->ip + (e->v6 ? 11 : 0), 4);
	e->mac[5] = 0x01;
}

void plan_conn(struct rng *r, struct conn_params *p, double v6_share)
{
	static uint16_t next_port[1024];
	unsigned x = rng_below(r, 100), host = rng_below(r, 1024), srv = rng_below(r, 8);

	memset(p, 0, sizeof *p);
	p->minor = x < 25 ? 0 : x < 45 ? 1 : 2;
	p->cle = rng_chance(r, 0.7);
	p->sle = rng_chance(r, 0.6);
	x = rng_below(r, 100);
	p->mux = x < 60 ? 1 : x < 90 ? rng_range(r, 2, 4) : 8;
	if (p->minor >= 1 && rng_chance(r, 0.5))
		p->frag = 1024u << rng_below(r, 4);   /* 1, 2, 4 or 8 KiB, as ORBs' buffers */
	if (p->minor == 2 && rng_chance(r, 0.2)) {
		p->contexts = CTX_RTPRIO;
		p->priority = (unsigned short)rng_range(r, 1, 32767);
	}
	p->server_closes = rng_chance(r, 0.15);
	p->key = rng_below(r, 4);
	p->think_us = rng_lognorm(r, 40, 0.5);

	p->client.v6 = p->server.v6 = rng_chance(r, v6_share);
	if (p->client.v6) {
		static const uint8_t pre[8] = {0xfd, 0x00, 0x0b, 0xe0, 0, 0, 0, 0};
		memcpy(p->client.ip, pre, 8);
		memcpy(p->server.ip, pre, 8);
		p->client.ip[13] = 1;
		p->client.ip[14] = (uint8_t)(host >> 8);
		p->client.ip[15] = (uint8_t)(host + 1);
		p->server.ip[15] = (uint8_t)(srv + 1);
	} else {
		p->client.ip[0] = 10, p->client.ip[1] = 1;
		p->client.ip[2] = (uint8_t)(host / 250), p->client.ip[3] = (uint8_t)(host % 250 + 1);
		p->server.ip[0] = 10, p->server.ip[1] = 0, p->server.ip[2] = 1;
		p->server.ip[3] = (uint8_t)(srv + 1);
	}
	/* ephemeral ports go up per client host, from a random start, and wrap in
	 * Linux's 32768-60999: long captures reuse 4-tuples with new SYNs */
	if (!next_port[host])
		next_port[host] = (uint16_t)rng_range(r, 32768, 60999);
	p->client.port = next_port[host];
	next_port[host] = next_port[host] >= 60999 ? 32768 : next_port[host] + 1;
	p->server.port = server_ports[srv];
	set_mac(&p->client);
	set_mac(&p->server);
}
