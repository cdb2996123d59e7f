/* SPDX-License-Identifier: BSD-2-Clause */
/* giopgen: large, realistic GIOP/IIOP captures for benchmarks.
 *
 *   giopgen --calls N [--connections N] [--concurrent N] [--seed S] [--open-all]
 *           [--retransmit P] [--ipv6 P] [--cancel P] [--mix default|echo]
 *           [--no-close] [--no-replies] -o FILE|-
 *
 * Simulates client and server ORBs over many TCP connections (see conn.h,
 * workload.c) and writes what a tap on the servers' side would see, as a classic
 * pcap with nanosecond time stamps. The same options give the same bytes. N calls
 * means N Requests plus LocateRequests: `giopscope read --pairs` must give N rows.
 * --no-close and --no-replies make hostile captures (tests/integration/scale_hostile.sh): connections
 * that are never closed, requests that are never answered.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conn.h"

struct sched {
	struct conn **h;
	size_t n;
};

static bool before(const struct conn *a, const struct conn *b)
{
	return a->key < b->key || (a->key == b->key && a->id < b->id);
}

static void sift_down(struct sched *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < s->n && before(s->h[l], s->h[m]))
			m = l;
		if (r < s->n && before(s->h[r], s->h[m]))
			m = r;
		if (m == i)
			return;
		struct conn *t = s->h[i];
		s->h[i] = s->h[m];
		s->h[m] = t;
		i = m;
	}
}

static void sift_up(struct sched *s, size_t i)
{
	while (i && before(s->h[i], s->h[(i - 1) / 2])) {
		struct conn *t = s->h[i];
		s->h[i] = s->h[(i - 1) / 2];
		s->h[(i - 1) / 2] = t;
		i = (i - 1) / 2;
	}
}

static uint64_t key_of(struct gen *g, struct conn *c)
{
	uint64_t t = conn_next(g, c);
	return t < g->now ? g->now : t;
}

/* calls for the next connection: around the mean, every connection at least one */
static uint64_t take_calls(struct rng *r, uint64_t *calls_left, uint64_t *conns_left)
{
	uint64_t avg = *calls_left / *conns_left, n = *calls_left;
	if (*conns_left > 1) {
		n = avg / 2 + rng_u64(r) % (avg + 1);
		if (n < 1)
			n = 1;
		if (n > *calls_left - (*conns_left - 1))
			n = *calls_left - (*conns_left - 1);
	}
	*calls_left -= n;
	(*conns_left)--;
	return n;
}

static void usage(FILE *f)
{
	fputs("usage: giopgen --calls N [options] -o FILE   ('-o -' for stdout)\n"
	      "  --calls N          Requests + LocateRequests to generate (default 10000)\n"
	      "  --connections N    TCP connections over the whole capture (default calls/1000, >= 1)\n"
	      "  --concurrent N     connections open at once (default 64)\n"
	      "  --seed S           random seed (default 1): same options, same bytes\n"
	      "  --open-all         send every request before any reply (all calls open at once;\n"
	      "                     all connections open together)\n"
	      "  --retransmit P     probability that a data segment is lost after the tap and\n"
	      "                     retransmitted (default 0.0002)\n"
	      "  --ipv6 P           share of connections over IPv6 (default 0.1)\n"
	      "  --cancel P         probability that the client cancels a two-way call, which then\n"
	      "                     gets no reply (default 0.001; none with --open-all)\n"
	      "  --mix MIX          default: the operation mix of workload.c (small calls to 24 KB,\n"
	      "                     oneways, exceptions, fragments); echo: only echoString(32)\n"
	      "  --no-close         connections are never closed: after their last call both\n"
	      "                     ends go quiet (no FIN, no CloseConnection)\n"
	      "  --no-replies       servers never answer: every two-way Request and every\n"
	      "                     LocateRequest stays unanswered (the client goes on with its\n"
	      "                     next call); implies --cancel 0. With --open-all no\n"
	      "                     connection closes before every request went out\n"
	      "  -o, --output FILE  the pcap to write\n"
	      "  -q, --quiet        no summary on stderr\n", f);
}

static uint64_t num(const char *opt, const char *s)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 10);
	if (errno || end == s || *end || *s == '-') {
		fprintf(stderr, "giopgen: %s wants a number, not '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

static double prob(const char *opt, const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !(v >= 0 && v <= 1)) {
		fprintf(stderr, "giopgen: %s wants a probability in [0, 1], not '%s'\n", opt, s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"calls", 1, 0, 'n'}, {"connections", 1, 0, 'c'}, {"concurrent", 1, 0, 'C'},
		{"seed", 1, 0, 's'}, {"open-all", 0, 0, 'A'}, {"retransmit", 1, 0, 'r'},
		{"ipv6", 1, 0, '6'}, {"mix", 1, 0, 'm'}, {"cancel", 1, 0, 'x'}, {"output", 1, 0, 'o'}, {"quiet", 0, 0, 'q'},
		{"no-close", 0, 0, 'N'}, {"no-replies", 0, 0, 'R'},
		{"help", 0, 0, 'h'}, {0, 0, 0, 0}};
	uint64_t calls = 10000, conns = 0, concurrent = 64, seed = 1;
	const char *out = NULL;
	bool quiet = false;
	static struct gen g;
	int o;

	g.retransmit = 0.0002;
	g.v6_share = 0.1;
	g.cancel = 0.001;
	while ((o = getopt_long(argc, argv, "o:qh", lo, NULL)) != -1) {
		switch (o) {
		case 'n': calls = num("--calls", optarg); break;
		case 'c': conns = num("--connections", optarg); break;
		case 'C': concurrent = num("--concurrent", optarg); break;
		case 's': seed = num("--seed", optarg); break;
		case 'A': g.open_all = true; break;
		case 'r': g.retransmit = prob("--retransmit", optarg); break;
		case '6': g.v6_share = prob("--ipv6", optarg); break;
		case 'x': g.cancel = prob("--cancel", optarg); break;
		case 'm':
			if (strcmp(optarg, "echo") && strcmp(optarg, "default")) {
				fprintf(stderr, "giopgen: --mix is default or echo, not '%s'\n", optarg);
				return 2;
			}
			mix_echo = !strcmp(optarg, "echo");
			break;
		case 'N': g.no_close = true; break;
		case 'R': g.no_replies = true; break;
		case 'o': out = optarg; break;
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc || !out || !calls) {
		usage(stderr);
		return 2;
	}
	if (g.no_replies)
		g.cancel = 0;   /* a cancelled call would be answered by the CancelRequest */
	if (!conns)
		conns = calls / 1000 ? calls / 1000 : 1;
	if (conns > calls)
		conns = calls;
	if (g.open_all || concurrent > conns)
		concurrent = conns;
	if (!concurrent)
		concurrent = 1;
	if (concurrent > 1000000) {
		fputs("giopgen: at most 1000000 connections open at once\n", stderr);
		return 2;
	}

	FILE *f = strcmp(out, "-") ? fopen(out, "wb") : stdout;
	if (!f) {
		fprintf(stderr, "giopgen: %s: %s\n", out, strerror(errno));
		return 2;
	}
	rng_seed(&g.rng, seed);
	giop_build_init();
	pcap_out_open(&g.out, f);
	g.total_calls = calls;
	/* 2025-01-01T00:00:00Z plus a seed-dependent minute: files of different seeds
	 * do not share time stamps */
	g.now = 1735689600ull * 1000000000ull + (seed % 60) * 1000000000ull;

	struct sched s = {calloc(concurrent, sizeof(struct conn *)), 0};
	uint64_t calls_left = calls, conns_left = conns;
	if (!s.h) {
		fputs("giopgen: out of memory\n", stderr);
		return 2;
	}
	uint64_t t = g.now;
	for (uint64_t i = 0; i < concurrent; i++) {
		struct conn *c = malloc(sizeof *c);
		if (!c) {
			fputs("giopgen: out of memory\n", stderr);
			return 2;
		}
		/* open-all: everything at once; else staggered, a connection per ~20 us */
		t += g.open_all ? 1000 : (uint64_t)rng_exp(&g.rng, 20000);
		conn_init(&g, c, i, take_calls(&g.rng, &calls_left, &conns_left), t);
		c->key = key_of(&g, c);
		s.h[s.n++] = c;
		sift_up(&s, s.n - 1);
	}
	uint64_t next_id = concurrent;
	while (s.n) {
		struct conn *c = s.h[0];
		if (c->key > g.now)
			g.now = c->key;
		conn_step(&g, c);
		if (g.flip) {
			/* the last request went out: every server may answer now */
			g.flip = false;
			for (size_t i = 0; i < s.n; i++)
				s.h[i]->key = key_of(&g, s.h[i]);
			for (size_t i = s.n / 2 + 1; i-- > 0;)
				sift_down(&s, i);
			continue;
		}
		if (c->state == ST_DONE) {
			conn_free(c);
			if (conns_left) {
				conn_init(&g, c, next_id++, take_calls(&g.rng, &calls_left, &conns_left),
					  g.now + (uint64_t)rng_exp(&g.rng, 20000));
				c->key = key_of(&g, c);
			} else {
				free(c);
				s.h[0] = s.h[--s.n];
			}
		} else {
			c->key = key_of(&g, c);
		}
		if (s.n)
			sift_down(&s, 0);
	}
	free(s.h);
	pcap_out_close(&g.out);
	if (f != stdout && fclose(f) != 0) {
		fprintf(stderr, "giopgen: %s: %s\n", out, strerror(errno));
		return 1;
	}
	buf_free(&g.scratch);
	if (!quiet)
		fprintf(stderr,
			"giopgen: %" PRIu64 " calls (%" PRIu64 " Request, %" PRIu64 " LocateRequest; "
			"%" PRIu64 " oneway, %" PRIu64 " cancelled, %" PRIu64 " user exceptions, %" PRIu64
			" system exceptions, %" PRIu64 " forwards; GIOP 1.0/1.1/1.2: %" PRIu64 "/%" PRIu64
			"/%" PRIu64 "; %" PRIu64 " fragmented messages in %" PRIu64 " fragments), "
			"%" PRIu64 " connections (%" PRIu64 " CloseConnection, %" PRIu64 " never closed), %"
			PRIu64 " unanswered calls, %" PRIu64 " packets, %"
			PRIu64 " retransmitted, %" PRIu64 " bytes, %.3f s of traffic\n",
			g.n_requests + g.n_locates, g.n_requests, g.n_locates, g.n_oneway, g.n_cancel,
			g.n_user_ex, g.n_sys_ex, g.n_forward, g.by_minor[0], g.by_minor[1],
			g.by_minor[2], g.n_fragmented, g.n_fragments, g.n_conns, g.n_close_msgs,
			g.n_left_open, g.n_unanswered, g.out.packets, g.n_rtx, g.out.bytes + 24,
			(double)(g.out.last_ts - (1735689600ull + seed % 60) * 1000000000ull) / 1e9);
	return 0;
}
