/* SPDX-License-Identifier: BSD-2-Clause */
/* A slow call's tree as a waterfall: the call and the calls made while serving
 * it (report_nest.c), one bar a call on the slow call's own time axis, each
 * bar split into its request's crossing, the far side's hold (server) and the
 * reply's crossing; inside a hold, the stretches with nested calls open are
 * shaded as downstream, so the eye follows the time down to the tier that
 * spent it. */
#include "report_impl.h"

#include <string.h>

#include "endpoint.h"

/* the colours of the slow-call bars (report_plot.c): crossing, far side; and downstream */
#define WF_NET "#6baed6"
#define WF_SRV "#ff7f0e"
#define WF_DOWN "#9e9ac8"

struct wf_axis {
	int64_t t0, t1;
	double x0, w;
};

static double wf_x(const struct wf_axis *a, int64_t t)
{
	if (t < a->t0)
		t = a->t0;
	if (t > a->t1)
		t = a->t1;
	return a->x0 + a->w * (double)(t - a->t0) / (double)(a->t1 - a->t0);
}

static void wf_rect(FILE *f, const struct wf_axis *a, const char *cls, const char *color, int64_t from,
		    int64_t to, double y, double h, const char *what)
{
	char d[32];
	double x = wf_x(a, from), w = wf_x(a, to) - x;
	if (to <= from)
		return;
	if (w < 0.5)
		w = 0.5; /* a sliver still shows */
	rp_fmt_us(d, sizeof d, to - from);
	fprintf(f, "<rect class=\"wf %s\" x=\"%.2f\" y=\"%.1f\" width=\"%.2f\" height=\"%.1f\" fill=\"%s\"><title>%s: "
		"%s us</title></rect>\n", cls, x, y, w, h, color, what, d);
}

/* The union of node p's children's spans within its hold, shaded. */
static void wf_downstream(FILE *f, const struct wf_axis *a, const struct rp_tree *t, uint32_t p, double y,
			  double h)
{
	const struct rp_node *pn = &t->n[p];
	int64_t cur_from = 0, cur_to = 0;
	bool open = false;
	/* children in start order: the tree adds them as they come, which is not
	 * always that order, so pick the earliest not yet covered each time */
	int64_t done = pn->req_last;
	for (;;) {
		const struct rp_node *next = NULL;
		for (uint32_t i = 1; i < t->nn; i++) {
			const struct rp_node *c = &t->n[i];
			if (c->parent != p || c->t1 <= done)
				continue;
			if (!next || c->t0 < next->t0)
				next = c;
		}
		if (!next)
			break;
		int64_t from = next->t0 > done ? next->t0 : done, to = next->t1;
		if (from < pn->req_last)
			from = pn->req_last;
		if (to > pn->rep_first)
			to = pn->rep_first;
		if (open && from <= cur_to) {
			if (to > cur_to)
				cur_to = to;
		} else {
			if (open)
				wf_rect(f, a, "wf-down", WF_DOWN, cur_from, cur_to, y, h, "downstream: nested calls open");
			cur_from = from;
			cur_to = to;
			open = true;
		}
		done = next->t1;
	}
	if (open)
		wf_rect(f, a, "wf-down", WF_DOWN, cur_from, cur_to, y, h, "downstream: nested calls open");
}

/* Rows in depth-first order: each call right under the one it was made for. */
static uint32_t wf_order(const struct rp_tree *t, uint32_t p, uint32_t *out, uint32_t n)
{
	out[n++] = p;
	for (uint32_t i = 1; i < t->nn; i++)
		if (t->n[i].parent == p && i != p)
			n = wf_order(t, i, out, n);
	return n;
}

static void wf_one(FILE *f, uint32_t rank, const struct rp_tree *t)
{
	const int W = 1100, row = 20;
	const double bx = 360;
	uint32_t order[RP_TREE_MAX], n = wf_order(t, 0, order, 0);
	int H = 34 + (int)n * row + 40;
	struct wf_axis a = { t->n[0].t0, t->n[0].t1, bx, W - bx - 110 };
	char title[160], tot[32], sv[GS_ENDPOINT_STRLEN], cl[GS_ENDPOINT_STRLEN];
	if (a.t1 <= a.t0)
		a.t1 = a.t0 + 1;
	rp_fmt_us(tot, sizeof tot, a.t1 - a.t0);
	snprintf(title, sizeof title, "%u. %s #%u and its nested calls (%s us)", rank, t->n[0].op, t->n[0].rid, tot);
	fprintf(f, "<svg class=\"plot waterfall\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
		"aria-label=\"", W, H, W, H);
	rp_html_text(f, title);
	fputs("\">\n<text class=\"ptitle\" x=\"10\" y=\"18\">", f);
	rp_html_text(f, title);
	fputs("</text>\n", f);
	for (uint32_t k = 0; k < n; k++) {
		const struct rp_node *nd = &t->n[order[k]];
		double y = 30 + (double)k * row;
		char label[RP_NAME_MAX + GS_ENDPOINT_STRLEN + 32], d[32];
		gs_endpoint_str(&nd->server, sv, sizeof sv);
		snprintf(label, sizeof label, "%s at %s #%u", nd->op[0] ? nd->op : "(unknown)", sv, nd->rid);
		fprintf(f, "<text class=\"rowlabel\" x=\"%.1f\" y=\"%.1f\">", 10.0 + 14.0 * nd->depth, y + 13);
		rp_html_text(f, label);
		/* the label names the server; the whole call (which client) on hover */
		gs_endpoint_str(&nd->client, cl, sizeof cl);
		snprintf(label, sizeof label, "%s -> %s request %u", cl, sv, nd->rid);
		fputs("<title>", f);
		rp_html_text(f, label);
		fputs("</title></text>\n<g class=\"call\">\n", f);
		wf_rect(f, &a, "wf-net", WF_NET, nd->t0, nd->req_last, y + 2, row - 4, "request bytes in transit");
		wf_rect(f, &a, "wf-srv", WF_SRV, nd->req_last, nd->rep_first, y + 2, row - 4, "far side held it (server)");
		wf_downstream(f, &a, t, order[k], y + 2, row - 4);
		wf_rect(f, &a, "wf-net", WF_NET, nd->rep_first, nd->t1, y + 2, row - 4, "reply bytes in transit");
		fputs("</g>\n", f);
		rp_fmt_us(d, sizeof d, nd->t1 - nd->t0);
		fprintf(f, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\">%s us</text>\n", wf_x(&a, nd->t1) + 6, y + 13, d);
	}
	{
		double y = 30 + (double)n * row + 20;
		static const char *const color[3] = { WF_NET, WF_SRV, WF_DOWN };
		static const char *const what[3] = { "bytes in transit (network)", "far side held it (server)",
						     "downstream: nested calls open" };
		for (int k = 0; k < 3; k++) {
			fprintf(f, "<rect class=\"key\" x=\"%d\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
				"<text class=\"key\" x=\"%d\" y=\"%.1f\">%s</text>\n", 10 + 300 * k, y - 9, color[k],
				24 + 300 * k, y, what[k]);
		}
		if (t->dropped)
			fprintf(f, "<text class=\"key\" x=\"910\" y=\"%.1f\">%u more not drawn</text>\n", y, t->dropped);
	}
	fputs("</svg>\n", f);
}

void rp_plot_waterfalls(FILE *f, const struct gs_report *r, const struct rp_slow *const *order, uint32_t n)
{
	bool any = false;
	for (uint32_t i = 0; i < n; i++)
		any |= order[i]->tree && order[i]->tree->nn > 1;
	if (!any)
		return;
	fputs("<h2>Where the slowest calls waited: their nested calls</h2>\n", f);
	for (uint32_t i = 0; i < n; i++)
		if (order[i]->tree && order[i]->tree->nn > 1)
			wf_one(f, i + 1, order[i]->tree);
	fputs("<p class=\"muted\">Each slow call that made calls of its own while it was served, with those calls "
	      "(and theirs) on its time axis: the request's and the reply's crossing, the far side's hold, and "
	      "inside the hold the time with nested calls open (downstream).</p>\n", f);
	if (r->trees_no_memory)
		fprintf(f, "<p class=\"muted\">%llu slow %s without a waterfall: no memory for it.</p>\n",
			(unsigned long long)r->trees_no_memory, gs_plural(r->trees_no_memory, "call", "calls"));
}
