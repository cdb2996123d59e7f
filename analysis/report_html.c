/* SPDX-License-Identifier: BSD-2-Clause */
/* Writing the report: the HTML document around the plots (report_plot.c).
 * One file, styles inline, no script and no reference to anything outside
 * it: it opens the same offline, from a mail attachment or a CI artefact. */
#include "report_impl.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "endpoint.h"
#include "out_file.h"

static void rp_fmt_utc(char *buf, size_t len, int64_t ns)
{
	time_t sec = (time_t)(ns / 1000000000);
	struct tm tm;
	char d[32];
	if (ns < 0 || !gmtime_r(&sec, &tm)) {
		snprintf(buf, len, "-");
		return;
	}
	strftime(d, sizeof d, "%Y-%m-%d %H:%M:%S", &tm);
	snprintf(buf, len, "%s.%09lld", d, (long long)(ns % 1000000000));
}

static const char css[] =
	"body{font-family:sans-serif;margin:1em 2em;color:#222;max-width:1140px}"
	"h1{font-size:1.5em}h2{font-size:1.2em;border-bottom:1px solid #ccc;margin-top:1.6em}"
	"h3{font-size:1em;margin:1em 0 .2em}"
	"table{border-collapse:collapse;font-size:12px}td,th{padding:2px 6px;border-bottom:1px solid #eee;text-align:right}"
	"td.l,th.l{text-align:left}th{background:#f4f4f4}"
	".note{color:#444;font-size:13px}.muted{color:#777;font-size:12px}"
	"svg.plot{display:block;margin:.3em 0;background:#fff}"
	"svg .frame{fill:none;stroke:#888}svg .grid{stroke:#e3e3e3}svg .mark{stroke-dasharray:3 3}"
	"svg text{font-size:11px;fill:#333}svg .ptitle{font-size:12px;font-weight:bold}"
	"svg .nodata{fill:#999;font-size:13px}svg .cdf,svg .line{fill:none;stroke-width:1.6}"
	"svg .line.max{stroke-dasharray:4 3;stroke-width:1}svg .pt{fill-opacity:.55}"
	".pair{display:flex;flex-wrap:wrap;gap:12px}.wide{overflow-x:auto}table.slow td{white-space:nowrap}";

static const struct rp_op **ops_by_calls(const struct gs_report *r, uint32_t *n)
{
	const struct rp_op **v = malloc(((size_t)r->nops + 1) * sizeof *v);
	uint32_t k = 0;
	if (!v)
		return NULL;
	for (uint32_t i = 0; i < r->nops; i++)
		v[k++] = &r->ops[i];
	/* most calls first, then by name: insertion sort, a few dozen entries */
	for (uint32_t i = 1; i < k; i++) {
		const struct rp_op *x = v[i];
		uint32_t j = i;
		while (j > 0 && (v[j - 1]->calls < x->calls ||
				 (v[j - 1]->calls == x->calls && strcmp(v[j - 1]->name, x->name) > 0))) {
			v[j] = v[j - 1];
			j--;
		}
		v[j] = x;
	}
	if (r->other_used)
		v[k++] = &r->ops[r->cfg.max_ops];
	*n = k;
	return v;
}

static void cell_q(FILE *f, const struct gs_hist *h, double q)
{
	char b[32];
	if (!h->total) {
		fputs("<td>-</td>", f);
		return;
	}
	rp_fmt_us(b, sizeof b, q >= 1 ? h->max : gs_hist_quantile(h, q));
	fprintf(f, "<td>%s</td>", b);
}

static void op_row(FILE *f, const struct rp_op *o, bool net)
{
	static const double qs[] = { 0.5, 0.9, 0.99, 0.999, 1 };
	fputs("<tr><td class=\"l\">", f);
	rp_html_text(f, o->name);
	fprintf(f, "</td><td>%llu</td><td>%llu</td><td>%llu</td>", (unsigned long long)o->calls,
		(unsigned long long)o->errors, (unsigned long long)o->answered);
	for (int q = 0; q < 5; q++)
		cell_q(f, &o->total, qs[q]);
	for (int q = 0; q < 5; q++)
		cell_q(f, &o->server, qs[q]);
	if (net)
		for (int q = 0; q < 5; q++)
			cell_q(f, &o->network, qs[q]);
	fputs("</tr>\n", f);
}

static void ops_table(FILE *f, const struct gs_report *r, const struct rp_op *const *v, uint32_t n)
{
	static const char *const qn[] = { "p50", "p90", "p99", "p99.9", "max" };
	bool net = r->any_network;
	fputs("<table class=\"ops\"><tr><th class=\"l\" rowspan=\"2\">operation</th><th rowspan=\"2\">calls</th>"
	      "<th rowspan=\"2\">errors</th><th rowspan=\"2\">answered</th>"
	      "<th colspan=\"5\">total_us</th><th colspan=\"5\">server_us</th>", f);
	if (net)
		fputs("<th colspan=\"5\">network_us</th>", f);
	fputs("</tr>\n<tr>", f);
	for (int k = 0; k < (net ? 3 : 2); k++)
		for (int q = 0; q < 5; q++)
			fprintf(f, "<th>%s</th>", qn[q]);
	fputs("</tr>\n", f);
	for (uint32_t i = 0; i < n; i++)
		op_row(f, v[i], net);
	if (n > 1)
		op_row(f, &r->all, net);
	fputs("</table>\n", f);
}

static void op_plots(FILE *f, const struct rp_op *o, const struct rp_range *rg)
{
	fputs("<section class=\"op\"><h3>", f);
	rp_html_text(f, o->name);
	fprintf(f, "</h3><div class=\"muted\">%llu %s, %llu answered, %llu %s", (unsigned long long)o->calls,
		gs_plural(o->calls, "call", "calls"), (unsigned long long)o->answered, (unsigned long long)o->errors,
		gs_plural(o->errors, "error", "errors"));
	if (o->oneways)
		fprintf(f, ", %llu oneway", (unsigned long long)o->oneways);
	if (o->no_reply)
		fprintf(f, ", %llu without a reply", (unsigned long long)o->no_reply);
	fputs("</div>\n<div class=\"pair\">\n", f);
	rp_plot_hist(f, o, rg);
	rp_plot_cdf(f, o, rg);
	fputs("</div></section>\n", f);
}

static int cmp_slow(const void *a, const void *b)
{
	const struct rp_slow *x = *(const struct rp_slow *const *)a, *y = *(const struct rp_slow *const *)b;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->serial < y->serial ? -1 : x->serial > y->serial;
}

static void cell_ns(FILE *f, int64_t ns)
{
	char b[32];
	if (ns == GS_REPORT_UNKNOWN) {
		fputs("<td>-</td>", f);
		return;
	}
	rp_fmt_us(b, sizeof b, ns);
	fprintf(f, "<td>%s</td>", b);
}

static void slow_table(FILE *f, const struct gs_report *r, const struct rp_slow *const *v, uint32_t n)
{
	fputs("<div class=\"wide\"><table class=\"slow\"><tr><th>#</th><th class=\"l\">operation</th><th>request id</th>"
	      "<th class=\"l\">client</th><th class=\"l\">server</th><th class=\"l\">request first byte (UTC)</th>"
	      "<th>total_us</th><th>request transit</th><th>server_us</th><th>reply transit</th>"
	      "<th>network_us</th><th>server host</th><th>server process</th><th>retransmits</th><th>gap fills</th>"
	      "<th class=\"l\">status</th><th class=\"l\">reasons</th></tr>\n", f);
	for (uint32_t i = 0; i < n; i++) {
		const struct rp_slow *s = v[i];
		char cl[GS_ENDPOINT_STRLEN], sv[GS_ENDPOINT_STRLEN], t0[64];
		const char *name = s->op < r->cfg.max_ops ? r->ops[s->op].name : "(other)";
		gs_endpoint_str(&s->client, cl, sizeof cl);
		gs_endpoint_str(&s->server, sv, sizeof sv);
		rp_fmt_utc(t0, sizeof t0, s->t0);
		fprintf(f, "<tr><td>%u</td><td class=\"l\">", i + 1);
		rp_html_text(f, name);
		fprintf(f, "</td><td>%u</td><td class=\"l\">%s</td><td class=\"l\">%s</td><td class=\"l\">%s</td>",
			s->request_id, cl, sv, t0);
		cell_ns(f, s->total);
		cell_ns(f, s->req_xfer);
		cell_ns(f, s->hold);
		cell_ns(f, s->rep_xfer);
		cell_ns(f, s->split.network_ns);
		cell_ns(f, s->split.server_host_ns);
		cell_ns(f, s->split.server_proc_ns);
		fprintf(f, "<td>%u</td>", s->retransmits);
		if (s->flags & GS_CF_CAPTURE_LOSS)
			fputs("<td>capture loss</td><td class=\"l\">", f);
		else
			fprintf(f, "<td>%u</td><td class=\"l\">", s->gap_fills);
		rp_html_text(f, s->status);
		fputs("</td><td class=\"l\">", f);
		rp_html_text(f, s->reasons);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></div>\n", f);
}

#define COUNTER_LIST(X)                                                                            \
	X(packets) X(bytes) X(segments) X(flows) X(flows_evicted) X(flows_reused) X(non_giop_flows)  \
	X(tls_flows)                                                                                 \
	X(giop_messages) X(calls) X(requests) X(locate_requests) X(oneways) X(replies_paired)       \
	X(no_reply) X(cancelled) X(orphan_replies) X(duplicate_replies) X(request_id_reused)        \
	X(unknown_request_id) X(orphan_fragments) X(cancel_unknown) X(retransmits) X(overlaps)       \
	X(out_of_order) X(gaps) X(gap_bytes) X(gap_fills) X(calls_gap_filled) X(gap_fill_wait_ns) X(ooo_dropped_bytes) X(rtx_not_charged) X(rtx_charged_by_span) X(giop_malformed) X(giop_truncated) \
	X(giop_resync_bytes) X(giop_head_too_large) X(giop_head_pool_full) X(giop_header_in_fragment) \
	X(calls_capture_loss) X(open_calls_evicted) X(rows_out_of_order) X(intern_refused) X(non_ip) \
	X(non_tcp) X(ip_fragments) X(link_truncated) X(ip_truncated) X(tcp_truncated) X(link_invalid) \
	X(ip_invalid) X(tcp_invalid) X(ip_len_clamped) X(payload_truncated) X(ignored_segments)

static void counters_table(FILE *f, const struct gs_counters *c)
{
	fputs("<table class=\"counters\"><tr><th class=\"l\">counter</th><th>value</th></tr>\n", f);
#define X(name)                                                                                        \
	if (c->name || !strcmp(#name, "packets") || !strcmp(#name, "calls"))                              \
		fprintf(f, "<tr><td class=\"l\">" #name "</td><td>%llu</td></tr>\n", (unsigned long long)c->name);
	COUNTER_LIST(X)
#undef X
	fputs("</table>\n<p class=\"muted\">Counters that are 0 are not listed; docs/output.md explains each.</p>\n", f);
}

int gs_report_write_stream(const struct gs_report *r, FILE *f, const char *title,
			   const struct gs_counters *counters)
{
	const struct rp_op **ops;
	const struct rp_slow **slow;
	uint32_t nops = 0;
	struct rp_range rg;
	char a[64], b[64];

	ops = ops_by_calls(r, &nops);
	slow = malloc(((size_t)r->nslow + 1) * sizeof *slow);
	if (!ops || !slow) {
		free(ops);
		free(slow);
		return ENOMEM;
	}
	for (uint32_t i = 0; i < r->nslow; i++)
		slow[i] = &r->slow[i];
	qsort(slow, r->nslow, sizeof *slow, cmp_slow);
	rp_latency_range(r, &rg);

	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>", f);
	rp_html_text(f, title ? title : "giopscope report");
	fprintf(f, "</title>\n<meta name=\"generator\" content=\"giopscope\">\n<style>%s</style>\n</head><body>\n<h1>", css);
	rp_html_text(f, title ? title : "giopscope report");
	fputs("</h1>\n", f);
	if (r->calls) {
		rp_fmt_utc(a, sizeof a, r->t_first);
		rp_fmt_utc(b, sizeof b, r->t_last);
		fprintf(f, "<p class=\"note\">%llu %s (%llu answered, %llu %s) starting between %s and %s UTC "
			"(%.3f s).</p>\n",
			(unsigned long long)r->calls, gs_plural(r->calls, "call", "calls"),
			(unsigned long long)r->all.answered, (unsigned long long)r->all.errors,
			gs_plural(r->all.errors, "error", "errors"), a, b, (double)(r->t_last - r->t_first) / 1e9);
	} else {
		fputs("<p class=\"note\">No calls.</p>\n", f);
	}
	for (uint32_t i = 0; i < r->nnotes; i++) {
		fputs("<p class=\"note\">", f);
		rp_html_text(f, r->notes[i]);
		fputs("</p>\n", f);
	}
	fputs("<p class=\"muted\">total_us: request first byte to reply last byte as the capture point saw them; "
	      "server_us: request last byte to reply first byte, what the far side of the capture point held the "
	      "call (on the client's host this includes the network); network_us (giopscope merge): client total "
	      "minus server total. Percentiles come from log-linear histograms (within 0.8%); max is exact.</p>\n",
	      f);

	fputs("<h2>Operations</h2>\n", f);
	ops_table(f, r, ops, nops);
	if (r->other_calls)
		fprintf(f, "<p class=\"muted\">%llu %s of operations beyond the first %u %s grouped as (other).</p>\n",
			(unsigned long long)r->other_calls, gs_plural(r->other_calls, "call", "calls"), r->cfg.max_ops,
			gs_plural(r->other_calls, "is", "are"));

	fputs("<h2>Latency over time</h2>\n", f);
	rp_plot_time(f, r, &rg);
	rp_plot_rate(f, r);
	fprintf(f, "<p class=\"muted\">%u of %llu answered %s drawn (a uniform sample); time bins of %.6g s.",
		r->nsmp, (unsigned long long)r->all.answered, gs_plural(r->all.answered, "call", "calls"),
		(double)r->width / 1e9);
	if (r->before_origin)
		fprintf(f, " %llu %s before the first bin and %s drawn in it.", (unsigned long long)r->before_origin,
			gs_plural(r->before_origin, "call began", "calls began"), gs_plural(r->before_origin, "is", "are"));
	fputs("</p>\n", f);

	fputs("<h2>Latency per operation</h2>\n", f);
	if (nops > 1)
		op_plots(f, &r->all, &rg);
	for (uint32_t i = 0; i < nops; i++)
		op_plots(f, ops[i], &rg);

	{
		bool where = false;
		for (uint32_t i = 0; i < nops; i++)
			where |= ops[i]->n_sched || ops[i]->n_orb;
		if (where) {
			fputs("<h2>Where the server&#39;s time went</h2>\n", f);
			rp_plot_where(f, (const struct rp_op *const *)ops, nops);
			fputs("<p class=\"muted\">attach --sched: the server threads' t4..t5 on CPU, runnable in the run "
			      "queue, blocked; attach --orb: the ORB before the servant, the servant, the ORB after it "
			      "(means over the calls split).</p>\n", f);
		}
	}
	if (r->nslow == 1)
		fputs("<h2>The slowest call</h2>\n", f);
	else
		fprintf(f, "<h2>The %u slowest calls</h2>\n", r->nslow);
	rp_plot_slow(f, r, slow, r->nslow);
	slow_table(f, r, slow, r->nslow);
	rp_plot_waterfalls(f, r, slow, r->nslow);

	if (counters) {
		fputs("<h2>Counters</h2>\n", f);
		counters_table(f, counters);
	}
	if (r->notes_dropped)
		fprintf(f, "<p class=\"muted\">%u %s dropped.</p>\n", r->notes_dropped,
			gs_plural(r->notes_dropped, "note", "notes"));
	fputs("<p class=\"muted\">Made by giopscope; self-contained: no scripts, nothing loaded from elsewhere.</p>\n"
	      "</body></html>\n", f);
	free(ops);
	free(slow);
	return ferror(f) ? EIO : 0;
}

int gs_report_write(const struct gs_report *r, const char *path, const char *title,
		    const struct gs_counters *counters)
{
	struct gs_out o;
	int err, e;
	if (strcmp(path, "-") == 0) {
		err = gs_report_write_stream(r, stdout, title, counters);
		if (fflush(stdout) != 0 && !err)
			err = errno ? errno : EIO;
		return err;
	}
	if ((err = gs_out_create(&o, path, 0666)) != 0)
		return err;
	err = gs_report_write_stream(r, o.f, title, counters);
	/* replaces what was at `path` only once complete */
	e = gs_out_close(&o, err == 0);
	return err ? err : e;
}
