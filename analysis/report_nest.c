/* SPDX-License-Identifier: BSD-2-Clause */
/* The nested calls of the report's slow calls, for their waterfalls: for each
 * kept slow call, copies of the calls made while serving it, and of the calls
 * made while serving those, RP_TREE_DEPTH levels down and RP_TREE_MAX calls in
 * all (more are counted, not drawn).
 *
 * The calls come one at a time: in start order (read) a slow call comes
 * before its nested calls, which join its tree when they come; in end order
 * (live, attach) they ended first, and the slow call finds them among the
 * recent nested calls (a ring of RP_RECENT). */
#include "report_impl.h"

#include <stdlib.h>
#include <string.h>

static bool same_ep(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	return a->family == b->family && a->port == b->port && memcmp(a->addr, b->addr, sizeof a->addr) == 0;
}

/* `c` was made while serving node `p` */
static bool child_of(const struct rp_node *c, const struct rp_node *p)
{
	return c->has_parent && c->prid == p->rid && same_ep(&c->pclient, &p->client) &&
	       same_ep(&c->pserver, &p->server);
}

static void node_of(struct rp_node *n, const struct gs_call *c, const char *op, size_t oplen)
{
	size_t i;
	memset(n, 0, sizeof *n);
	n->client = c->client;
	n->server = c->server;
	n->rid = c->request_id;
	n->pclient = c->parent_client;
	n->pserver = c->parent_server;
	n->prid = c->parent_request_id;
	n->has_parent = c->parent_basis != GS_PARENT_NONE;
	n->t0 = c->t_request_first;
	n->req_last = c->t_request_last;
	n->rep_first = (c->flags & GS_CF_REP_SEEN) ? c->t_reply_first : c->t_request_last;
	n->t1 = (c->flags & GS_CF_REP_SEEN) ? c->t_reply_last : c->t_request_last;
	n->downstream = c->downstream_ns;
	if (c->kind == GS_KIND_LOCATE_REQUEST) {
		op = "(LocateRequest)";
		oplen = strlen(op);
	}
	if (!op)
		oplen = 0;
	if (oplen >= sizeof n->op)
		oplen = sizeof n->op - 1;
	/* a name from the wire may hold anything: the drawing escapes it, this keeps it printable */
	for (i = 0; i < oplen; i++)
		n->op[i] = op[i] >= 0x20 && op[i] < 0x7f ? op[i] : '?';
	n->op[i] = '\0';
}

/* Adds `c` under node `p` of tree `t`; false when it was dropped (bounds). */
static bool tree_add(struct rp_tree *t, uint32_t p, const struct rp_node *c)
{
	struct rp_node *n;
	if (t->nn >= RP_TREE_MAX || t->n[p].depth >= RP_TREE_DEPTH) {
		t->dropped++;
		return false;
	}
	n = &t->n[t->nn];
	*n = *c;
	n->parent = (uint16_t)p;
	n->depth = (uint8_t)(t->n[p].depth + 1);
	t->nn++;
	return true;
}

/* Down the ring from node `from`, breadth first over the nodes added. */
static void tree_pull(struct gs_report *r, struct rp_tree *t, uint32_t from)
{
	if (!r->recent)
		return;
	for (uint32_t p = from; p < t->nn; p++) {
		if (!t->n[p].downstream)
			continue; /* no nested calls were open in it */
		for (uint32_t i = 0; i < RP_RECENT; i++)
			if (child_of(&r->recent[i], &t->n[p]))
				tree_add(t, p, &r->recent[i]);
	}
}

void rp_nest_collect(struct gs_report *r, struct rp_slow *s, const struct gs_call *c, const char *op,
		     size_t oplen)
{
	s->tree = NULL;
	if (c->downstream_ns <= 0)
		return;
	s->tree = malloc(sizeof *s->tree);
	if (!s->tree) {
		r->trees_no_memory++;
		return;
	}
	s->tree->nn = 1;
	s->tree->dropped = 0;
	node_of(&s->tree->n[0], c, op, oplen);
	s->tree->n[0].has_parent = false;
	tree_pull(r, s->tree, 0);
}

void rp_nest_offer(struct gs_report *r, const struct gs_call *c, const char *op, size_t oplen)
{
	struct rp_node n;
	node_of(&n, c, op, oplen);
	/* start order: the trees whose node it was made under */
	for (uint32_t k = 0; k < r->nslow; k++) {
		struct rp_tree *t = r->slow[k].tree;
		if (!t)
			continue;
		for (uint32_t p = 0; p < t->nn; p++)
			if (child_of(&n, &t->n[p])) {
				uint32_t at = t->nn;
				if (tree_add(t, p, &n))
					tree_pull(r, t, at);
				break;
			}
	}
	if (!r->recent && !(r->recent = calloc(RP_RECENT, sizeof *r->recent)))
		return; /* the trees then come from start order only */
	r->recent[r->recent_next] = n;
	r->recent_next = (r->recent_next + 1) % RP_RECENT;
}

void rp_nest_free(struct gs_report *r)
{
	for (uint32_t k = 0; r->slow && k < r->nslow; k++) {
		free(r->slow[k].tree);
		r->slow[k].tree = NULL;
	}
	free(r->recent);
	r->recent = NULL;
}
