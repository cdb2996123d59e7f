/* SPDX-License-Identifier: BSD-2-Clause */
/* The tail's `downstream` reason and the chain behind it: for a kept call, copies
 * of the nested call that held it longest (its hold_*), of the one that held
 * that one, and so on down GS_TAIL_DEPTH tiers, so the tail names the tier
 * where the time was spent with that tier's own reasons.
 *
 * The records come one at a time and the tail keeps copies, so a hop is found
 * in one of two orders: in start order (read's rows) the parent comes first
 * and waits for its child, which joins the chain when it comes; in end order
 * (live, attach) the child ended first, and the parent finds it among the
 * recent nested calls (a ring of GS_TAIL_RECENT).  A child gone from the ring,
 * or never seen (the capture missed it), leaves the hop "not seen". */
#include "tail.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "text_out.h"

static bool same_ep(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	return a->family == b->family && a->port == b->port && memcmp(a->addr, b->addr, sizeof a->addr) == 0;
}

/* `c` is the call that held `p` (p's hold_*). */
static bool is_hold_of(const struct gs_call *p, const struct gs_call *c)
{
	return p->hold_ns && p->hold_request_id == c->request_id && same_ep(&p->hold_client, &c->client) &&
	       same_ep(&p->hold_server, &c->server);
}

/* The call whose hold the next hop of `en` must be: the last hop's, or its own. */
static const struct gs_call *chain_end(const struct gs_tail_entry *en)
{
	return en->depth ? &en->chain[en->depth - 1].call : &en->call;
}

/* A copy of `child` as the next hop of `en`; false when the chain has no room
 * (depth) or no memory (the bound on chains, counted). */
static bool chain_push(struct gs_tail *t, struct gs_tail_entry *en, const struct gs_tail_entry *child)
{
	struct gs_tail_entry *hop;
	if (en->depth >= GS_TAIL_DEPTH)
		return false;
	if (!en->chain) {
		if (t->chains >= GS_TAIL_CHAINS ||
		    !(en->chain = calloc(GS_TAIL_DEPTH, sizeof *en->chain))) {
			t->chains_refused++;
			return false;
		}
		t->chains++;
	}
	hop = &en->chain[en->depth++];
	*hop = *child;
	hop->chain = NULL;
	hop->depth = 0;
	return true;
}

/* The recent nested call that held `p`, or NULL. */
static const struct gs_tail_entry *recent_find(const struct gs_tail *t, const struct gs_call *p)
{
	if (!p->hold_ns)
		return NULL;
	for (uint32_t i = 0; i < t->recent_n; i++)
		if (is_hold_of(p, &t->recent[i].call))
			return &t->recent[i];
	return NULL;
}

/* Down the ring from the chain's end, as far as it has the hops. */
static void chain_pull(struct gs_tail *t, struct gs_tail_entry *en)
{
	const struct gs_tail_entry *r;
	while (en->depth < GS_TAIL_DEPTH && (r = recent_find(t, chain_end(en))) != NULL)
		if (!chain_push(t, en, r))
			return;
}

void gs_tail_chain_offer(struct gs_tail *t, const struct gs_tail_entry *en)
{
	/* start order: the kept calls waiting for this one as their next hop */
	for (uint32_t i = 0; i < t->n; i++) {
		struct gs_tail_entry *k = &t->v[i];
		if (k->depth < GS_TAIL_DEPTH && is_hold_of(chain_end(k), &en->call) && chain_push(t, k, en))
			chain_pull(t, k);
	}
	/* end order: a parent kept later looks here */
	if (!t->recent) {
		t->recent = calloc(GS_TAIL_RECENT, sizeof *t->recent);
		if (!t->recent)
			return; /* the chains then come from start order only */
	}
	t->recent[t->recent_next] = *en;
	t->recent[t->recent_next].chain = NULL;
	t->recent_next = (t->recent_next + 1) % GS_TAIL_RECENT;
	if (t->recent_n < GS_TAIL_RECENT)
		t->recent_n++;
}

void gs_tail_chain_start(struct gs_tail *t, struct gs_tail_entry *en)
{
	en->depth = 0;
	if (en->call.hold_ns && t->recent)
		chain_pull(t, en);
}

void gs_tail_chain_free(struct gs_tail *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		free(t->v[i].chain);
		t->v[i].chain = NULL;
	}
	free(t->recent);
	t->recent = NULL;
	t->recent_n = t->recent_next = 0;
	t->chains = 0;
}

static size_t app(char *buf, size_t len, size_t at, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static size_t app(char *buf, size_t len, size_t at, const char *fmt, ...)
{
	va_list ap;
	int n;
	if (at >= len)
		return at;
	va_start(ap, fmt);
	n = vsnprintf(buf + at, len - at, fmt, ap);
	va_end(ap);
	return n < 0 ? at : at + (size_t)n;
}

static double us(int64_t ns) { return (double)ns / 1e3; }

unsigned gs_downstream_reason(const struct gs_call *c, const char *hold_op, const char *child, char *buf,
			      size_t len, size_t at)
{
	int64_t srv = c->t_reply_first - c->t_request_last;
	char sv[GS_ENDPOINT_STRLEN];
	if (srv <= 0 || c->downstream_ns <= 0 || c->downstream_ns * 2 < srv)
		return 0;
	at = app(buf, len, at, "%sdownstream %.1f us (%.0f%% of server) in nested calls", at ? "; " : "",
		 us(c->downstream_ns), 100.0 * (double)c->downstream_ns / (double)srv);
	if (!c->hold_ns)
		return GS_TAG_DOWNSTREAM;
	gs_endpoint_str(&c->hold_server, sv, sizeof sv);
	at = app(buf, len, at, ", longest %s at %s request %u, %.1f us", hold_op && *hold_op ? hold_op : "?", sv,
		 c->hold_request_id, us(c->hold_ns));
	if (child)
		at = app(buf, len, at, " -> [%s]", child);
	else
		at = app(buf, len, at, " (not seen)");
	(void)at;
	return GS_TAG_DOWNSTREAM;
}

/* One hop's own reasons (wire, attach, downstream naming `child`). */
static unsigned hop_reasons(const struct gs_tail_entry *en, const char *child, char *buf, size_t len)
{
	unsigned tags = gs_call_reasons(&en->call, en->queued_op, buf, len);
	if (en->has_times)
		tags |= gs_times_reasons(&en->times, buf, len, strlen(buf));
	tags |= gs_downstream_reason(&en->call, en->hold_op, child, buf, len, strlen(buf));
	return tags;
}

/* The reasons of hop k of `top`'s chain (k = -1: top itself), the hops below in
 * brackets: built from the deepest up, each level in a buffer of its own. */
static unsigned chain_reasons(const struct gs_tail_entry *top, int k, char *buf, size_t len)
{
	char below[4096];
	const struct gs_tail_entry *en = k < 0 ? top : &top->chain[k];
	bool has_child = k + 1 < (int)top->depth;
	if (has_child)
		chain_reasons(top, k + 1, below, sizeof below);
	return hop_reasons(en, has_child ? below : NULL, buf, len);
}

unsigned gs_tail_entry_reasons(const struct gs_tail_entry *en, char *buf, size_t len)
{
	return chain_reasons(en, -1, buf, len);
}

void gs_tail_chain_json(FILE *out, const struct gs_tail_entry *en)
{
	char cl[GS_ENDPOINT_STRLEN], sv[GS_ENDPOINT_STRLEN];
	char reasons[4096];
	const struct gs_call *up = &en->call;
	if (!en->call.hold_ns)
		return;
	fputs(",\"chain\":[", out);
	for (int k = 0;; k++) {
		/* the hop `up` was held by: kept (k < depth) or only named */
		fputs(k ? ",{" : "{", out);
		gs_endpoint_str(&up->hold_client, cl, sizeof cl);
		gs_endpoint_str(&up->hold_server, sv, sizeof sv);
		fputs("\"client\":", out);
		gs_json_str(out, cl);
		fputs(",\"server\":", out);
		gs_json_str(out, sv);
		fprintf(out, ",\"request_id\":%u,\"operation\":", up->hold_request_id);
		gs_json_str(out, k ? en->chain[k - 1].hold_op : en->hold_op);
		fprintf(out, ",\"held_us\":%.3f", us(up->hold_ns));
		if (k >= (int)en->depth) {
			/* a tier deeper than GS_TAIL_DEPTH, or a record not seen */
			fprintf(out, ",\"seen\":false,\"why\":\"%s\"}", k >= GS_TAIL_DEPTH ? "depth" : "not seen");
			break;
		}
		const struct gs_tail_entry *h = &en->chain[k];
		const struct gs_call *c = &h->call;
		int64_t net;
		fprintf(out, ",\"seen\":true,\"total_us\":%.3f,\"server_us\":%.3f",
			us(c->t_reply_last - c->t_request_first), us(c->t_reply_first - c->t_request_last));
		if (gs_tail_network_ns(c, &net))
			fprintf(out, ",\"network_us\":%.3f", us(net));
		else
			fputs(",\"network_us\":null", out);
		fprintf(out, ",\"downstream_us\":%.3f,\"tags\":", us(c->downstream_ns));
		gs_tail_tags_json(out, chain_reasons(en, k, reasons, sizeof reasons));
		fputs(",\"reasons\":", out);
		gs_json_str(out, reasons);
		fputc('}', out);
		if (!c->hold_ns)
			break;
		up = c;
	}
	fputc(']', out);
}
