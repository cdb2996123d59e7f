/* SPDX-License-Identifier: BSD-2-Clause */
#include "summary.h"

#include <stddef.h>
#include <stdlib.h>

#include "fmt_num.h"
#include "text_out.h"
#include <string.h>

static const double quantiles[] = { 0.50, 0.90, 0.99, 0.999 };
static const char *const qnames[] = { "p50", "p90", "p99", "p99.9" };
#define NQ 4

static void group_label(const struct gs_stats *st, const struct gs_group *g, const struct gs_intern *strings,
			char *buf, size_t len)
{
	gs_stats_label(st, g, strings, buf, len);
}

static void us(char *buf, size_t len, int64_t ns)
{
	snprintf(buf, len, "%.1f", (double)ns / 1000.0);
}

static int cmp_groups(const void *a, const void *b)
{
	const struct gs_group *x = *(const struct gs_group *const *)a;
	const struct gs_group *y = *(const struct gs_group *const *)b;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

static void text_row(FILE *out, const char *label, const struct gs_group *g)
{
	char v[16];
	/* a long label (a connection) gets its own line */
	if (strlen(label) > 24) {
		fprintf(out, "%s\n", label);
		label = "";
	}
	fprintf(out, "%-24.24s %8llu %6llu", label, (unsigned long long)g->calls,
		(unsigned long long)g->errors);
	for (int h = 0; h < 2; h++) {
		const struct gs_hist *hi = h ? &g->server : &g->total;
		fputs(" |", out);
		for (int q = 0; q < NQ; q++) {
			if (hi->total) {
				us(v, sizeof v, gs_hist_quantile(hi, quantiles[q]));
				fprintf(out, " %8s", v);
			} else {
				fprintf(out, " %8s", "-");
			}
		}
		if (hi->total) {
			us(v, sizeof v, hi->max);
			fprintf(out, " %8s", v);
		} else {
			fprintf(out, " %8s", "-");
		}
	}
	fputc('\n', out);
}

static void csv_parts(FILE *out, const struct gs_stats *st, const struct gs_group *g);
static void json_parts(FILE *out, const struct gs_stats *st, const struct gs_group *g);
static void csv_nest(FILE *out, const struct gs_group *g);
static void json_nest(FILE *out, const struct gs_group *g);

static void csv_row(FILE *out, const struct gs_stats *st, const char *label, const struct gs_group *g)
{
	fprintf(out, "%s,%llu,%llu,%llu", label, (unsigned long long)g->calls,
		(unsigned long long)g->errors, (unsigned long long)g->answered);
	for (int h = 0; h < 2; h++) {
		const struct gs_hist *hi = h ? &g->server : &g->total;
		for (int q = 0; q < NQ; q++) {
			if (hi->total)
				fprintf(out, ",%.3f", (double)gs_hist_quantile(hi, quantiles[q]) / 1000.0);
			else
				fputs(",", out);
		}
		if (hi->total)
			fprintf(out, ",%.3f", (double)hi->max / 1000.0);
		else
			fputs(",", out);
	}
	fprintf(out, ",%llu,%llu", (unsigned long long)g->gap_filled, (unsigned long long)g->capture_loss);
	if (st->parts)
		csv_parts(out, st, g);
	if (st->nesting)
		csv_nest(out, g);
	fputc('\n', out);
}


static void json_row(FILE *out, const struct gs_stats *st, const char *label, const struct gs_group *g)
{
	fputs("{\"type\":\"group\",\"operation\":", out);
	gs_json_str(out, label);
	fprintf(out, ",\"calls\":%llu,\"errors\":%llu,\"answered\":%llu",
		(unsigned long long)g->calls, (unsigned long long)g->errors,
		(unsigned long long)g->answered);
	for (int h = 0; h < 2; h++) {
		const struct gs_hist *hi = h ? &g->server : &g->total;
		const char *name = h ? "server_us" : "total_us";
		if (!hi->total) {
			fprintf(out, ",\"%s\":null", name);
			continue;
		}
		fprintf(out, ",\"%s\":{", name);
		for (int q = 0; q < NQ; q++)
			fprintf(out, "%s\"%s\":%.3f", q ? "," : "", qnames[q],
				(double)gs_hist_quantile(hi, quantiles[q]) / 1000.0);
		fprintf(out, ",\"max\":%.3f}", (double)hi->max / 1000.0);
	}
	fprintf(out, ",\"gap_filled\":%llu,\"capture_loss\":%llu", (unsigned long long)g->gap_filled,
		(unsigned long long)g->capture_loss);
	if (st->parts)
		json_parts(out, st, g);
	if (st->nesting)
		json_nest(out, g);
	fputs("}\n", out);
}

/* ---- attach --sched / --orb: the parts of server_process_us per group ---- */

static const char *const part_key[GS_PART__N] = { "server_oncpu", "server_runq", "server_blocked",
						   "orb_in", "servant", "orb_out" };
static const char *const part_title[GS_PART__N] = { "on-cpu", "run-queue", "blocked",
						     "orb-in", "servant", "orb-out" };

static const struct gs_hist *part_hist(const struct gs_group *g, int k)
{
	return g->parts && g->parts->h[k].total ? &g->parts->h[k] : NULL;
}

static uint64_t part_calls(const struct gs_group *g, int first)
{
	const struct gs_hist *h = part_hist(g, first);
	return h ? h->total : 0;
}

/* the kinds shown: [lo, hi) of the parts */
static void part_range(const struct gs_stats *st, int kind, int *lo, int *hi)
{
	*lo = kind == GS_PARTS_SCHED ? GS_PART_ONCPU : GS_PART_ORB_IN;
	*hi = kind == GS_PARTS_SCHED ? GS_PART_ORB_IN : GS_PART__N;
	if (!(st->parts & kind))
		*lo = *hi;
}

static void text_parts_header(FILE *out, const struct gs_stats *st, int kind)
{
	int lo, hi;
	part_range(st, kind, &lo, &hi);
	fprintf(out, "\n%-24s %8s", kind == GS_PARTS_SCHED ? "server_process_us split" : "server_process_us: ORB",
		"");
	for (int k = lo; k < hi; k++)
		fprintf(out, " | %-26s", part_title[k]);
	fprintf(out, "\n%-24s %8s", gs_group_by_title(st->by), kind == GS_PARTS_SCHED ? "split" : "upcalls");
	for (int k = lo; k < hi; k++)
		fprintf(out, " | %8s %8s %8s", "p50", "p99", "max");
	fputc('\n', out);
}

static void text_parts_row(FILE *out, const struct gs_stats *st, int kind, const char *label, const struct gs_group *g)
{
	char v[16];
	int lo, hi;
	part_range(st, kind, &lo, &hi);
	if (strlen(label) > 24) {
		fprintf(out, "%s\n", label);
		label = "";
	}
	fprintf(out, "%-24.24s %8llu", label, (unsigned long long)part_calls(g, lo));
	for (int k = lo; k < hi; k++) {
		const struct gs_hist *h = part_hist(g, k);
		fputs(" |", out);
		for (int q = 0; q < 3; q++) {
			if (!h) {
				fprintf(out, " %8s", "-");
				continue;
			}
			us(v, sizeof v, q == 2 ? h->max : gs_hist_quantile(h, q ? 0.99 : 0.50));
			fprintf(out, " %8s", v);
		}
	}
	fputc('\n', out);
}

static void csv_parts_header(FILE *out, const struct gs_stats *st)
{
	static const int kinds[2] = { GS_PARTS_SCHED, GS_PARTS_ORB };
	for (int i = 0; i < 2; i++) {
		int lo, hi;
		part_range(st, kinds[i], &lo, &hi);
		if (lo == hi)
			continue;
		fputs(kinds[i] == GS_PARTS_SCHED ? ",sched_calls" : ",orb_calls", out);
		for (int k = lo; k < hi; k++)
			fprintf(out, ",%s_p50_us,%s_p99_us,%s_max_us,%s_mean_us", part_key[k], part_key[k], part_key[k],
				part_key[k]);
	}
}

static double part_mean(const struct gs_hist *h)
{
	return (double)h->sum / (double)h->total / 1000.0;
}

static void csv_parts(FILE *out, const struct gs_stats *st, const struct gs_group *g)
{
	static const int kinds[2] = { GS_PARTS_SCHED, GS_PARTS_ORB };
	for (int i = 0; i < 2; i++) {
		int lo, hi;
		part_range(st, kinds[i], &lo, &hi);
		if (lo == hi)
			continue;
		fprintf(out, ",%llu", (unsigned long long)part_calls(g, lo));
		for (int k = lo; k < hi; k++) {
			const struct gs_hist *h = part_hist(g, k);
			if (!h)
				fputs(",,,,", out);
			else
				fprintf(out, ",%.3f,%.3f,%.3f,%.3f", (double)gs_hist_quantile(h, 0.50) / 1000.0,
					(double)gs_hist_quantile(h, 0.99) / 1000.0, (double)h->max / 1000.0,
					part_mean(h));
		}
	}
}

static void json_parts(FILE *out, const struct gs_stats *st, const struct gs_group *g)
{
	static const int kinds[2] = { GS_PARTS_SCHED, GS_PARTS_ORB };
	for (int i = 0; i < 2; i++) {
		int lo, hi;
		part_range(st, kinds[i], &lo, &hi);
		if (lo == hi)
			continue;
		fprintf(out, ",\"%s\":%llu", kinds[i] == GS_PARTS_SCHED ? "sched_calls" : "orb_calls",
			(unsigned long long)part_calls(g, lo));
		for (int k = lo; k < hi; k++) {
			const struct gs_hist *h = part_hist(g, k);
			if (!h)
				fprintf(out, ",\"%s_us\":null", part_key[k]);
			else
				fprintf(out, ",\"%s_us\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f,\"mean\":%.3f}",
					part_key[k], (double)gs_hist_quantile(h, 0.50) / 1000.0,
					(double)gs_hist_quantile(h, 0.99) / 1000.0, (double)h->max / 1000.0, part_mean(h));
		}
	}
}

/* ---- the nesting stage: server time split into own and downstream per group ---- */

static const char *const nest_key[2] = { "server_own", "downstream" };

static const struct gs_hist *nest_hist(const struct gs_group *g, int k)
{
	const struct gs_hist *h = g->nest ? (k ? &g->nest->down : &g->nest->own) : NULL;
	return h && h->total ? h : NULL;
}

static void text_nest_header(FILE *out, const struct gs_stats *st)
{
	fprintf(out, "\n%-24s %8s %8s | %-35s | %-35s\n", "server_us split", "", "",
		"server's own (server - downstream)", "downstream (nested calls open)");
	fprintf(out, "%-24s %8s %8s |", gs_group_by_title(st->by), "nested", "w/nested");
	for (int k = 0; k < 2; k++)
		fprintf(out, " %8s %8s %8s %8s%s", "p50", "p99", "max", "mean", k ? "" : " |");
	fputc('\n', out);
}

static void text_nest_row(FILE *out, const char *label, const struct gs_group *g)
{
	char v[16];
	if (strlen(label) > 24) {
		fprintf(out, "%s\n", label);
		label = "";
	}
	fprintf(out, "%-24.24s %8llu %8llu", label, (unsigned long long)(g->nest ? g->nest->nested : 0),
		(unsigned long long)(g->nest ? g->nest->with_down : 0));
	for (int k = 0; k < 2; k++) {
		const struct gs_hist *h = nest_hist(g, k);
		fputs(" |", out);
		for (int q = 0; q < 4; q++) {
			if (!h) {
				fprintf(out, " %8s", "-");
				continue;
			}
			if (q == 3)
				snprintf(v, sizeof v, "%.1f", part_mean(h));
			else
				us(v, sizeof v, q == 2 ? h->max : gs_hist_quantile(h, q ? 0.99 : 0.50));
			fprintf(out, " %8s", v);
		}
	}
	fputc('\n', out);
}

static void csv_nest_header(FILE *out)
{
	fputs(",nested_calls,calls_with_downstream", out);
	for (int k = 0; k < 2; k++)
		fprintf(out, ",%s_p50_us,%s_p99_us,%s_max_us,%s_mean_us", nest_key[k], nest_key[k], nest_key[k],
			nest_key[k]);
}

static void csv_nest(FILE *out, const struct gs_group *g)
{
	fprintf(out, ",%llu,%llu", (unsigned long long)(g->nest ? g->nest->nested : 0),
		(unsigned long long)(g->nest ? g->nest->with_down : 0));
	for (int k = 0; k < 2; k++) {
		const struct gs_hist *h = nest_hist(g, k);
		if (!h)
			fputs(",,,,", out);
		else
			fprintf(out, ",%.3f,%.3f,%.3f,%.3f", (double)gs_hist_quantile(h, 0.50) / 1000.0,
				(double)gs_hist_quantile(h, 0.99) / 1000.0, (double)h->max / 1000.0, part_mean(h));
	}
}

static void json_nest(FILE *out, const struct gs_group *g)
{
	fprintf(out, ",\"nested_calls\":%llu,\"calls_with_downstream\":%llu",
		(unsigned long long)(g->nest ? g->nest->nested : 0),
		(unsigned long long)(g->nest ? g->nest->with_down : 0));
	for (int k = 0; k < 2; k++) {
		const struct gs_hist *h = nest_hist(g, k);
		if (!h)
			fprintf(out, ",\"%s_us\":null", nest_key[k]);
		else
			fprintf(out, ",\"%s_us\":{\"p50\":%.3f,\"p99\":%.3f,\"max\":%.3f,\"mean\":%.3f}", nest_key[k],
				(double)gs_hist_quantile(h, 0.50) / 1000.0, (double)gs_hist_quantile(h, 0.99) / 1000.0,
				(double)h->max / 1000.0, part_mean(h));
	}
}

/* Every counter, in the order shown.  `main` marks those the text summary
 * already spells out on its own lines; the others appear under "also:" when
 * they are not zero.  JSON gets all of them. */
struct counter {
	const char *name;
	size_t off;
	bool main;
};
#define C(name, field, main) { #name, offsetof(struct gs_counters, field), main }
static const struct counter counters[] = {
	C(packets, packets, 1), C(bytes, bytes, 1), C(tcp_segments, segments, 1),
	C(connections, flows, 1), C(connections_evicted, flows_evicted, 0),
	C(connections_reused, flows_reused, 0), C(non_giop_connections, non_giop_flows, 1),
	C(tls_connections, tls_flows, 1),
	C(giop_messages, giop_messages, 1), C(calls, calls, 1), C(requests, requests, 0),
	C(locate_requests, locate_requests, 0), C(oneways, oneways, 1), C(replies, replies_paired, 1),
	C(no_reply, no_reply, 1), C(cancelled, cancelled, 1), C(orphan_replies, orphan_replies, 1),
	C(duplicate_replies, duplicate_replies, 0), C(request_id_reused, request_id_reused, 0),
	C(unknown_request_id, unknown_request_id, 0), C(orphan_fragments, orphan_fragments, 0),
	C(retransmissions, retransmits, 1), C(overlaps, overlaps, 1), C(out_of_order, out_of_order, 1),
	C(capture_gaps, gaps, 1), C(gap_bytes, gap_bytes, 1), C(gap_fills, gap_fills, 1),
	C(calls_with_gap_fills, calls_gap_filled, 1), C(gap_fill_wait_ns, gap_fill_wait_ns, 1), C(ooo_dropped_bytes, ooo_dropped_bytes, 0),
	C(malformed, giop_malformed, 1), C(truncated, giop_truncated, 1),
	C(resync_bytes, giop_resync_bytes, 1), C(head_too_large, giop_head_too_large, 0),
	C(header_in_fragment, giop_header_in_fragment, 0), C(head_pool_full, giop_head_pool_full, 0),
	C(calls_with_capture_loss, calls_capture_loss, 1), C(open_calls_evicted, open_calls_evicted, 0),
	C(rows_out_of_order, rows_out_of_order, 0),
	C(retransmissions_not_charged, rtx_not_charged, 0), C(retransmissions_charged_by_span, rtx_charged_by_span, 0), C(strings_refused, intern_refused, 0),
	C(non_ip, non_ip, 0), C(non_tcp, non_tcp, 0), C(ip_fragments, ip_fragments, 0),
	C(headers_truncated_link, link_truncated, 0), C(headers_truncated_ip, ip_truncated, 0),
	C(headers_truncated_tcp, tcp_truncated, 0), C(headers_invalid_link, link_invalid, 0),
	C(headers_invalid_ip, ip_invalid, 0), C(headers_invalid_tcp, tcp_invalid, 0),
	C(ip_length_clamped, ip_len_clamped, 0), C(payload_truncated, payload_truncated, 0),
	C(ignored_segments, ignored_segments, 0),
};
#undef C

static uint64_t counter_value(const struct gs_counters *c, const struct counter *k)
{
	uint64_t v;
	memcpy(&v, (const char *)c + k->off, sizeof v);
	return v;
}

#define B(name, key, field) { name, key, offsetof(struct gs_counters, field) }
const struct gs_bound gs_bounds[GS_NBOUNDS] = {
	B("connections", "connections", flows_evicted),
	B("open calls", "open_calls", open_calls_evicted),
	B("order window", "order_window", rows_out_of_order),
	B("out-of-order bytes", "ooo_bytes", ooo_dropped_bytes),
	B("retransmitted-range lists", "retransmitted_ranges", rtx_not_charged),
	B("message logs", "message_logs", rtx_charged_by_span),
	B("head pool", "head_pool", giop_head_pool_full),
	B("strings", "strings", intern_refused),
};
#undef B

uint64_t gs_bound_hits(const struct gs_counters *c, const struct gs_bound *b)
{
	uint64_t v;
	memcpy(&v, (const char *)c + b->off, sizeof v);
	return v;
}

static void text_counters(FILE *out, const struct gs_counters *c, const struct gs_summary_info *info)
{
	static const char *const tn[] = { "Request", "Reply", "CancelRequest", "LocateRequest",
					  "LocateReply", "CloseConnection", "MessageError", "Fragment" };
	bool any = false;
	/* every segment with data, as tshark counts them (tcp.len > 0): those
	 * reassembled, and those of connections left out (not GIOP, TLS, not in
	 * --ports) after their first, which `segments` counts */
	uint64_t seg = c->segments + c->ignored_segments;
	uint64_t left_out = c->ignored_segments + c->non_giop_flows + c->tls_flows;
	fprintf(out, "\npackets %llu (%llu TCP %s with data", (unsigned long long)c->packets, (unsigned long long)seg,
		gs_plural(seg, "segment", "segments"));
	if (left_out)
		fprintf(out, ", %llu not GIOP or left out", (unsigned long long)left_out);
	fprintf(out, ") in %llu %s", (unsigned long long)c->flows, gs_plural(c->flows, "connection", "connections"));
	if (c->non_giop_flows)
		fprintf(out, " (%llu not GIOP)", (unsigned long long)c->non_giop_flows);
	fputc('\n', out);
	if (c->tls_flows)
		fprintf(out, "%llu TLS %s: encrypted, use attach\n", (unsigned long long)c->tls_flows,
			gs_plural(c->tls_flows, "connection", "connections"));
	fprintf(out, "GIOP messages %llu:", (unsigned long long)c->giop_messages);
	for (int t = 0; t < 8; t++)
		if (c->giop_by_type[t]) {
			fprintf(out, "%s %s %llu", any ? "," : "", tn[t], (unsigned long long)c->giop_by_type[t]);
			any = true;
		}
	fputc('\n', out);
	fprintf(out, "calls %llu: %llu answered, %llu oneway, %llu no reply, %llu cancelled; "
		"unpaired replies %llu\n",
		(unsigned long long)c->calls, (unsigned long long)c->replies_paired,
		(unsigned long long)c->oneways, (unsigned long long)c->no_reply,
		(unsigned long long)c->cancelled, (unsigned long long)c->orphan_replies);
	fprintf(out, "TCP: retransmissions %llu, out of order %llu, overlaps %llu, capture gaps %llu (%llu %s)\n",
		(unsigned long long)c->retransmits, (unsigned long long)c->out_of_order,
		(unsigned long long)c->overlaps, (unsigned long long)c->gaps,
		(unsigned long long)c->gap_bytes, gs_plural(c->gap_bytes, "byte", "bytes"));
	if (c->gap_fills)
		fprintf(out, "loss before the tap: %llu gap fills (segments lost or reordered before the tap, "
			"filled late) in %llu %s, %.3f ms waited for them (network time)\n",
			(unsigned long long)c->gap_fills, (unsigned long long)c->calls_gap_filled,
			gs_plural(c->calls_gap_filled, "call", "calls"),
			(double)c->gap_fill_wait_ns / 1e6);
	if (c->calls_capture_loss)
		fprintf(out, "capture loss: %llu %s bytes the capture never had: their times are "
			"bounds (in the percentiles; capture_loss 1 in --pairs)\n",
			(unsigned long long)c->calls_capture_loss,
			gs_plural(c->calls_capture_loss, "call lacks", "calls lack"));
	fprintf(out, "problems: malformed %llu, truncated %llu, resync bytes %llu",
		(unsigned long long)c->giop_malformed, (unsigned long long)c->giop_truncated,
		(unsigned long long)c->giop_resync_bytes);
	if (info->kernel_drops)
		fprintf(out, ", kernel drops %llu", (unsigned long long)info->kernel_drops);
	fputc('\n', out);
	if (info->max_memory) {
		/* --max-memory: what it set, and which bound the input reached */
		fprintf(out, "--max-memory %llu MiB: %u connections, %u open calls, order window %u, "
			"%llu KiB held out of order; bounds hit:",
			(unsigned long long)(info->max_memory >> 20), info->max_flows, info->max_open_calls,
			info->order_window, (unsigned long long)(info->max_ooo_total >> 10));
		any = false;
		for (size_t i = 0; i < GS_NBOUNDS; i++) {
			uint64_t v = gs_bound_hits(c, &gs_bounds[i]);
			if (!v)
				continue;
			fprintf(out, "%s %s (%llu)", any ? "," : "", gs_bounds[i].name, (unsigned long long)v);
			any = true;
		}
		fputs(any ? "\n" : " none\n", out);
	}
	/* the rarely non-zero ones, only when they are */
	any = false;
	for (size_t i = 0; i < sizeof counters / sizeof *counters; i++) {
		uint64_t v = counter_value(c, &counters[i]);
		if (counters[i].main || !v)
			continue;
		fprintf(out, "%s %s %llu", any ? "," : "also:", counters[i].name, (unsigned long long)v);
		any = true;
	}
	if (any)
		fputc('\n', out);
}

void gs_summary_write(FILE *out, enum gs_summary_format fmt, const struct gs_stats *st,
		      const struct gs_counters *c, const struct gs_intern *strings,
		      const struct gs_summary_info *info)
{
	const struct gs_group **order = malloc((st->n + 1) * sizeof *order);
	uint32_t n = 0;
	char label[160];

	if (!order)
		return;
	for (uint32_t i = 0; i < st->n; i++)
		order[n++] = &st->groups[i];
	qsort(order, n, sizeof *order, cmp_groups);
	if (st->other != GS_NONE)
		order[n++] = &st->groups[st->other];

	if (fmt == GS_SUM_TEXT) {
		/* no packet: no span (a live source's clock runs without packets) */
		double span = info->first_ts && info->last_ts > info->first_ts
				      ? (double)(info->last_ts - info->first_ts) / 1e9 : 0;
		fprintf(out, "%s: %.3f s of capture\n\n", info->source, span);
		fprintf(out, "%-24s %8s %6s | %-44s | %-44s\n", "", "", "",
			"total_us (request first -> reply last)", "server_us (request last -> reply first)");
		fprintf(out, "%-24s %8s %6s |", gs_group_by_title(st->by), "calls", "errors");
		for (int h = 0; h < 2; h++) {
			for (int q = 0; q < NQ; q++)
				fprintf(out, " %8s", qnames[q]);
			fprintf(out, " %8s%s", "max", h ? "" : " |");
		}
		fputc('\n', out);
		for (uint32_t i = 0; i < n; i++) {
			group_label(st, order[i], strings, label, sizeof label);
			text_row(out, label, order[i]);
		}
		if (n > 1)
			text_row(out, "(all)", &st->all);
		for (int kind = GS_PARTS_SCHED; kind <= GS_PARTS_ORB; kind++) {
			if (!(st->parts & kind))
				continue;
			text_parts_header(out, st, kind);
			for (uint32_t i = 0; i < n; i++) {
				group_label(st, order[i], strings, label, sizeof label);
				text_parts_row(out, st, kind, label, order[i]);
			}
			if (n > 1)
				text_parts_row(out, st, kind, "(all)", &st->all);
		}
		if (st->nesting) {
			text_nest_header(out, st);
			for (uint32_t i = 0; i < n; i++) {
				group_label(st, order[i], strings, label, sizeof label);
				text_nest_row(out, label, order[i]);
			}
			if (n > 1)
				text_nest_row(out, "(all)", &st->all);
		}
		text_counters(out, c, info);
		if (info->nesting)
			fprintf(out, "nesting: %llu %s with a parent (%llu by time, %llu by thread), %llu undecided "
				"(two or more calls enclosed it at its host)\n",
				(unsigned long long)(info->parent_time + info->parent_thread),
				gs_plural(info->parent_time + info->parent_thread, "call", "calls"),
				(unsigned long long)info->parent_time, (unsigned long long)info->parent_thread,
				(unsigned long long)info->undecided);
	} else if (fmt == GS_SUM_CSV) {
		fputs("operation,calls,errors,answered,total_p50_us,total_p90_us,total_p99_us,"
		      "total_p999_us,total_max_us,server_p50_us,server_p90_us,server_p99_us,"
		      "server_p999_us,server_max_us,gap_filled,capture_loss", out);
		if (st->parts)
			csv_parts_header(out, st);
		if (st->nesting)
			csv_nest_header(out);
		fputc('\n', out);
		for (uint32_t i = 0; i < n; i++) {
			group_label(st, order[i], strings, label, sizeof label);
			/* labels are printable ASCII; quote the rare comma or quote */
			if (strpbrk(label, ",\"")) {
				char q[140];
				size_t k = 0;
				q[k++] = '"';
				for (const char *s = label; *s && k < sizeof q - 3; s++) {
					if (*s == '"')
						q[k++] = '"';
					q[k++] = *s;
				}
				q[k++] = '"';
				q[k] = '\0';
				csv_row(out, st, q, order[i]);
			} else {
				csv_row(out, st, label, order[i]);
			}
		}
		csv_row(out, st, "(all)", &st->all);
	} else {
		for (uint32_t i = 0; i < n; i++) {
			group_label(st, order[i], strings, label, sizeof label);
			json_row(out, st, label, order[i]);
		}
		json_row(out, st, "(all)", &st->all);
		fputs("{\"type\":\"counters\"", out);
		for (size_t i = 0; i < sizeof counters / sizeof *counters; i++)
			fprintf(out, ",\"%s\":%llu", counters[i].name,
				(unsigned long long)counter_value(c, &counters[i]));
		fprintf(out, ",\"kernel_drops\":%llu,\"first_ts\":\"%lld.%09lld\",\"last_ts\":\"%lld.%09lld\"}\n",
			(unsigned long long)info->kernel_drops,
			(long long)(info->first_ts / 1000000000), (long long)(info->first_ts % 1000000000),
			(long long)(info->last_ts / 1000000000), (long long)(info->last_ts % 1000000000));
		if (info->nesting)
			fprintf(out, "{\"type\":\"nesting\",\"parent_time\":%llu,\"parent_thread\":%llu,"
				"\"undecided\":%llu}\n", (unsigned long long)info->parent_time,
				(unsigned long long)info->parent_thread, (unsigned long long)info->undecided);
		if (info->max_memory) {
			/* --max-memory: the bounds it set, and those hit with their counters
			 * ({} when none was) */
			bool any = false;
			fprintf(out, "{\"type\":\"max_memory\",\"max_memory\":%llu,\"connections\":%u,"
				"\"open_calls\":%u,\"order_window\":%u,\"ooo_bytes\":%llu,\"bounds_hit\":{",
				(unsigned long long)info->max_memory, info->max_flows, info->max_open_calls,
				info->order_window, (unsigned long long)info->max_ooo_total);
			for (size_t i = 0; i < GS_NBOUNDS; i++) {
				uint64_t v = gs_bound_hits(c, &gs_bounds[i]);
				if (!v)
					continue;
				fprintf(out, "%s\"%s\":%llu", any ? "," : "", gs_bounds[i].key, (unsigned long long)v);
				any = true;
			}
			fputs("}}\n", out);
		}
	}
	free(order);
}
