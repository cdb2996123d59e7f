/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_parent.h"

#include <string.h>

/* requests and threads remembered: a relay's open calls and its ORB's
 * threads, with room for the answered ones a thread read before */
#define REQUESTS 8192
#define THREADS 1024

int gs_aparent_init(struct gs_aparent *a)
{
	memset(a, 0, sizeof *a);
	return gs_tparent_init(&a->tp, REQUESTS, THREADS);
}

void gs_aparent_free(struct gs_aparent *a)
{
	gs_tparent_free(&a->tp);
}

void gs_aparent_on_read(void *arg, const struct gs_times_dir *d, uint32_t rid, uint8_t kind,
			const struct gs_times_ev *ev)
{
	struct gs_aparent *a = arg;
	enum gs_tpar_kind k = kind == GS_TREQ_ONEWAY ? GS_TPAR_READ_ONEWAY :
			      kind == GS_TREQ_LOCATE ? GS_TPAR_READ_LOCATE : GS_TPAR_READ_TWOWAY;
	/* the request went src -> dst: its client and server; the instants are
	 * the wall clock's the calls carry (t4, t5, t1), no event looked up
	 * again per call */
	gs_tparent_read(&a->tp, &d->src, &d->dst, rid, k, ev->tid, ev->ts);
}

/* The event of the call's send (t1), if kept. */
static const struct gs_times_ev *send_ev(const struct gs_times *times, const struct gs_call *c,
					 const struct gs_call_times *t)
{
	const struct gs_times_dir *req;
	if (!t->client_send)
		return NULL;
	req = gs_times_dir(times, &c->client, &c->server);
	return req ? gs_times_ev_at(req, true, t->client_send) : NULL;
}

bool gs_aparent_wait(const struct gs_aparent *a, const struct gs_times *times, const struct gs_call *c,
		     const struct gs_call_times *t, uint64_t queued_poll, uint64_t polls)
{
	const struct gs_times_ev *c1;
	/* the poll the call came in ends with the sweep of the watch table; a
	 * recv folded into a segment record not yet submitted then comes with
	 * the next one */
	if (polls >= queued_poll + 2 || c->parent_basis != GS_PARENT_NONE)
		return false;
	c1 = send_ev(times, c, t);
	return c1 && gs_tparent_knows(&a->tp, c1->tid);
}

const struct gs_call *gs_aparent_call(struct gs_aparent *a, const struct gs_times *times, const struct gs_call *c,
				      const struct gs_call_times *t, struct gs_call *own)
{
	const struct gs_call *out = c;
	int64_t q;
	/* the server's reply ends its serving of the request */
	if (t->server_send)
		gs_tparent_replied(&a->tp, &c->client, &c->server, c->request_id, t->server_send);
	if (gs_times_recvq(c, t, &q)) {
		*own = *c;
		own->recvq_ns = q;
		out = own;
	}
	if (t->client_send && c->parent_basis == GS_PARENT_NONE) {
		const struct gs_times_ev *c1 = send_ev(times, c, t);
		const struct gs_tpar_req *p;
		int64_t us = 0;
		int up = GS_TPAR_UPCALL_UNKNOWN;
		if (!c1 || !c1->tid)
			return out;
		a->asked++;
		/* the upcall's edges are in the records' clock: its start in the
		 * wall clock by the offset t1 was converted with */
		if (a->upcalls && (up = gs_tlog_upcall_at(a->upcalls, c1->tid, c1->mono, &us)) == GS_TPAR_UPCALL_RUNNING)
			us += c1->ts - c1->mono;
		if (gs_tparent_decide(&a->tp, c1->tid, c1->ts, (enum gs_tpar_upcall)up, us, &p) != GS_TPAR_PARENT)
			return out;
		if (out != own) {
			*own = *c;
			out = own;
		}
		own->parent_client = p->client;
		own->parent_server = p->server;
		own->parent_request_id = p->rid;
		own->parent_basis = GS_PARENT_THREAD;
	}
	return out;
}

void gs_aparent_report(const struct gs_aparent *a, FILE *out)
{
	const struct gs_tparent *p = &a->tp;
	if (!a->asked)
		return;
	fprintf(out, "giopscope attach: parents by thread: %llu calls of a followed sending thread: %llu named",
		(unsigned long long)a->asked, (unsigned long long)p->verdicts[GS_TPAR_PARENT]);
	for (int v = GS_TPAR_TOP; v < GS_TPAR_VERDICTS; v++)
		if (p->verdicts[v])
			fprintf(out, ", %llu %s", (unsigned long long)p->verdicts[v],
				gs_tparent_verdict_name((enum gs_tpar_verdict)v));
	fprintf(out, "; %llu requests read by followed threads (%llu forgotten before their reply, %llu threads "
		"forgotten: table full)\n", (unsigned long long)p->reads, (unsigned long long)p->replaced_open,
		(unsigned long long)p->threads_replaced);
}
