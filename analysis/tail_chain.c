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

#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "text_out.h"

/* A kept call's chain: its own allocation, which stays put while the kept
 * calls move in the tail's heap, so the table of the calls awaited can point
 * at it.  hop[0] held the kept call, hop[k + 1] held hop[k]. */
struct gs_tail_chain {
	struct gs_tail_entry hop[GS_TAIL_DEPTH];
	uint8_t depth;
	bool waiting;              /* `want` is in the table */
	struct gs_endpoint want_client, want_server;
	uint32_t want_rid;
};

/* The calls awaited (start order), each the next hop of one chain: an open
 * addressing table of twice GS_TAIL_CHAINS slots (at most half full: a chain
 * awaits one call at a time), so a nested call costs one probe, not a look at
 * every kept call. */
#define GS_TAIL_WANT (2 * GS_TAIL_CHAINS)
struct gs_tail_want {
	struct gs_tail_chain *ch;  /* NULL: free */
};

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

static uint32_t key_hash(const struct gs_endpoint *cl, const struct gs_endpoint *sv, uint32_t rid)
{
	/* FNV-1a over the fields that name a call (struct padding is not known to be zero) */
	uint32_t h = 2166136261u;
	const struct gs_endpoint *ep[2] = { cl, sv };
	for (int e = 0; e < 2; e++) {
		for (int i = 0; i < 16; i++)
			h = (h ^ ep[e]->addr[i]) * 16777619u;
		h = (h ^ ep[e]->port) * 16777619u;
	}
	h = (h ^ rid) * 16777619u;
	return h ^ (h >> 16);
}

static bool want_is(const struct gs_tail_chain *ch, const struct gs_call *c)
{
	return ch->want_rid == c->request_id && same_ep(&ch->want_client, &c->client) &&
	       same_ep(&ch->want_server, &c->server);
}

/* The chain awaiting `c`, or NULL; *at: its slot. */
static struct gs_tail_chain *want_find(const struct gs_tail *t, const struct gs_call *c, uint32_t *at)
{
	uint32_t i = key_hash(&c->client, &c->server, c->request_id) % GS_TAIL_WANT;
	if (!t->want)
		return NULL;
	for (uint32_t n = 0; n < GS_TAIL_WANT && t->want[i].ch; n++, i = (i + 1) % GS_TAIL_WANT)
		if (want_is(t->want[i].ch, c)) {
			*at = i;
			return t->want[i].ch;
		}
	return NULL;
}

/* Linear probing's delete: the slots after it that hash at or before it move up. */
static void want_del(struct gs_tail *t, struct gs_tail_chain *ch)
{
	uint32_t i, j;
	if (!ch->waiting)
		return;
	ch->waiting = false;
	i = key_hash(&ch->want_client, &ch->want_server, ch->want_rid) % GS_TAIL_WANT;
	while (t->want[i].ch && t->want[i].ch != ch)
		i = (i + 1) % GS_TAIL_WANT;
	if (!t->want[i].ch)
		return;
	t->want[i].ch = NULL;
	for (j = (i + 1) % GS_TAIL_WANT; t->want[j].ch; j = (j + 1) % GS_TAIL_WANT) {
		const struct gs_tail_chain *o = t->want[j].ch;
		uint32_t h = key_hash(&o->want_client, &o->want_server, o->want_rid) % GS_TAIL_WANT;
		/* o stays unless its home h is cyclically outside (i, j] */
		if (i <= j ? (h > i && h <= j) : (h > i || h <= j))
			continue;
		t->want[i] = t->want[j];
		t->want[j].ch = NULL;
		i = j;
	}
}

/* The chain awaits the call that held `end` (if it has room for it). */
static void want_put(struct gs_tail *t, struct gs_tail_chain *ch, const struct gs_call *end)
{
	uint32_t i;
	want_del(t, ch);
	if (!end->hold_ns || ch->depth >= GS_TAIL_DEPTH || !t->want)
		return;
	ch->want_client = end->hold_client;
	ch->want_server = end->hold_server;
	ch->want_rid = end->hold_request_id;
	i = key_hash(&ch->want_client, &ch->want_server, ch->want_rid) % GS_TAIL_WANT;
	while (t->want[i].ch)
		i = (i + 1) % GS_TAIL_WANT;
	t->want[i].ch = ch;
	ch->waiting = true;
}

/* The call whose hold the next hop must be: the last hop's, or the kept call's. */
static const struct gs_call *chain_end(const struct gs_tail_entry *en)
{
	const struct gs_tail_chain *ch = en->chain;
	return ch && ch->depth ? &ch->hop[ch->depth - 1].call : &en->call;
}

static void hop_push(struct gs_tail_chain *ch, const struct gs_tail_entry *child)
{
	struct gs_tail_entry *hop = &ch->hop[ch->depth++];
	*hop = *child;
	hop->chain = NULL;
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

/* Down the ring from the chain's end, as far as it has the hops; then the
 * chain awaits the next one. */
static void chain_pull(struct gs_tail *t, struct gs_tail_entry *en)
{
	const struct gs_tail_entry *r;
	struct gs_tail_chain *ch = en->chain;
	while (ch->depth < GS_TAIL_DEPTH && t->recent && (r = recent_find(t, chain_end(en))) != NULL)
		hop_push(ch, r);
	want_put(t, ch, chain_end(en));
}

void gs_tail_chain_offer(struct gs_tail *t, const struct gs_tail_entry *en)
{
	uint32_t at;
	struct gs_tail_chain *ch;
	/* start order: the chain awaiting this one (its kept call came first) */
	if ((ch = want_find(t, &en->call, &at)) != NULL) {
		want_del(t, ch);
		hop_push(ch, en);
		want_put(t, ch, &ch->hop[ch->depth - 1].call);
	}
	/* end order: a call kept later looks here */
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
	struct gs_tail_chain *ch = en->chain;
	if (ch) {
		/* the slot's previous call's chain: emptied for this one, or given back */
		want_del(t, ch);
		ch->depth = 0;
		if (!en->call.hold_ns) {
			free(ch);
			en->chain = NULL;
			t->chains--;
			return;
		}
	} else if (!en->call.hold_ns) {
		return;
	}
	if (!t->want && !(t->want = calloc(GS_TAIL_WANT, sizeof *t->want))) {
		t->chains_refused++;
		return;
	}
	if (!ch) {
		if (t->chains >= GS_TAIL_CHAINS || !(ch = calloc(1, sizeof *ch))) {
			t->chains_refused++;
			return;
		}
		t->chains++;
		en->chain = ch;
	}
	chain_pull(t, en);
}

void gs_tail_chain_free(struct gs_tail *t)
{
	for (uint32_t i = 0; i < t->n; i++) {
		free(t->v[i].chain);
		t->v[i].chain = NULL;
	}
	free(t->recent);
	free(t->want);
	t->recent = NULL;
	t->want = NULL;
	t->recent_n = t->recent_next = 0;
	t->chains = 0;
}

static double us(int64_t ns) { return (double)ns / 1e3; }

unsigned gs_downstream_reason(const struct gs_call *c, const char *hold_op, const char *child, char *buf,
			      size_t len, size_t at)
{
	int64_t srv = c->t_reply_first - c->t_request_last;
	char sv[GS_ENDPOINT_STRLEN];
	if (srv <= 0 || c->downstream_ns <= 0 || c->downstream_ns * 2 < srv)
		return 0;
	at = gs_appendf(buf, len, at, "%sdownstream %.1f us (%.0f%% of server) in nested calls", at ? "; " : "",
		 us(c->downstream_ns), 100.0 * (double)c->downstream_ns / (double)srv);
	if (!c->hold_ns)
		return GS_TAG_DOWNSTREAM;
	gs_endpoint_str(&c->hold_server, sv, sizeof sv);
	at = gs_appendf(buf, len, at, ", longest %s at %s request %u, %.1f us", hold_op && *hold_op ? hold_op : "?", sv,
		 c->hold_request_id, us(c->hold_ns));
	if (child)
		at = gs_appendf(buf, len, at, " -> [%s]", child);
	else
		at = gs_appendf(buf, len, at, " (not seen)");
	(void)at;
	return GS_TAG_DOWNSTREAM;
}

/* One hop's own reasons (wire, attach, downstream naming `child`). */
static unsigned hop_reasons(const struct gs_tail_entry *en, const char *child, char *buf, size_t len)
{
	unsigned tags = gs_call_reasons_times(&en->call, en->has_times ? &en->times : NULL, en->queued_op, buf, len);
	/* the process's own split describes the part of the server's time after
	 * the wait in the receive queue: not the reason when the wait dominates */
	if (en->has_times && !gs_recvq_dominates(&en->call))
		tags |= gs_times_reasons(&en->times, buf, len, strlen(buf));
	tags |= gs_downstream_reason(&en->call, en->hold_op, child, buf, len, strlen(buf));
	return tags;
}

/* The reasons of hop k of `top`'s chain (k = -1: top itself), the hops below in
 * brackets: built from the deepest up, each level in a buffer of its own. */
static unsigned chain_reasons(const struct gs_tail_entry *top, int k, char *buf, size_t len)
{
	char below[4096];
	const struct gs_tail_entry *en = k < 0 ? top : &top->chain->hop[k];
	bool has_child = top->chain && k + 1 < (int)top->chain->depth;
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
	int depth = en->chain ? en->chain->depth : 0;
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
		gs_json_str(out, k ? en->chain->hop[k - 1].hold_op : en->hold_op);
		fprintf(out, ",\"held_us\":%.3f", us(up->hold_ns));
		if (k >= depth) {
			/* a tier deeper than GS_TAIL_DEPTH, a record not seen, or no chain kept */
			fprintf(out, ",\"seen\":false,\"why\":\"%s\"}", k >= GS_TAIL_DEPTH ? "depth" :
				en->chain ? "not seen" : "not kept");
			break;
		}
		const struct gs_tail_entry *h = &en->chain->hop[k];
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
