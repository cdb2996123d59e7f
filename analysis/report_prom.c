/* SPDX-License-Identifier: BSD-2-Clause */
/* Prometheus text: one pass over the groups, one line per sample. */
#include "report_prom.h"

#include "nest.h"

#include <string.h>
#include "summary.h"

/* 1-2.5-5 steps from 1 us to 60 s: GIOP calls on a LAN are tens of us, a
 * blocked servant seconds */
const int64_t gs_prom_bounds_ns[GS_PROM_NBUCKETS] = {
	1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, 25000000, 50000000, 100000000, 250000000, 500000000,
	1000000000, 2500000000, 5000000000, 10000000000, 30000000000, 60000000000,
};

/* the same bounds as Prometheus writes them (seconds, no exponent) */
static const char *const bound_text[GS_PROM_NBUCKETS] = {
	"0.000001", "0.0000025", "0.000005", "0.00001", "0.000025", "0.00005", "0.0001", "0.00025", "0.0005",
	"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5",
	"1", "2.5", "5", "10", "30", "60",
};

static const char *label_name(enum gs_group_by by)
{
	switch (by) {
	case GS_BY_CONN: return "connection";
	case GS_BY_OBJECT: return "object";
	case GS_BY_SERVER: return "server";
	case GS_BY_PRIORITY: return "priority";
	default: return "operation";
	}
}

/* a label value: backslash, quote and newline escaped (the format's rules) */
static void label_value(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fputc('\\', f);
		if (*s == '\n') {
			fputs("\\n", f);
			continue;
		}
		fputc(*s, f);
	}
	fputc('"', f);
}

static void labels(FILE *f, const char *lname, const char *value, const char *le)
{
	fprintf(f, "{%s=", lname);
	label_value(f, value);
	if (le)
		fprintf(f, ",le=\"%s\"", le);
	fputc('}', f);
}

static void histogram(FILE *f, const char *metric, const char *lname, const char *value,
		      const struct gs_hist *h)
{
	uint64_t cum = 0;
	uint32_t i = 0;
	for (int b = 0; b < GS_PROM_NBUCKETS; b++) {
		/* every histogram bucket whose highest value is within the bound */
		for (; i < h->n_buckets && (int64_t)gs_hist_bucket_high(h, i) <= gs_prom_bounds_ns[b]; i++)
			cum += h->counts[i];
		fprintf(f, "%s_bucket", metric);
		labels(f, lname, value, bound_text[b]);
		fprintf(f, " %llu\n", (unsigned long long)cum);
	}
	fprintf(f, "%s_bucket", metric);
	labels(f, lname, value, "+Inf");
	fprintf(f, " %llu\n%s_sum", (unsigned long long)h->total, metric);
	labels(f, lname, value, NULL);
	fprintf(f, " %.9f\n%s_count", (double)h->sum / 1e9, metric);
	labels(f, lname, value, NULL);
	fprintf(f, " %llu\n", (unsigned long long)h->total);
}

static void head(FILE *f, const char *metric, const char *type, const char *help)
{
	fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", metric, help, metric, type);
}

#define ENGINE_COUNTERS(X)                                                                           \
	X(packets, packets, "frames read")                                                            \
	X(bytes, bytes, "bytes of the frames read")                                                   \
	X(tcp_segments, segments, "TCP segments carrying data")                                       \
	X(connections, flows, "TCP connections seen")                                                 \
	X(connections_evicted, flows_evicted, "connections evicted from the full flow table")        \
	X(tls_connections, tls_flows, "TCP connections opened with a TLS handshake: encrypted, use attach") \
	X(giop_messages, giop_messages, "GIOP messages decoded")                                      \
	X(replies, replies_paired, "replies paired with their request")                              \
	X(no_reply, no_reply, "calls that ended without a reply")                                    \
	X(cancelled, cancelled, "calls cancelled (CancelRequest, no reply)")                          \
	X(unpaired_replies, orphan_replies, "replies whose request was not seen")                    \
	X(retransmissions, retransmits, "TCP segments carrying only bytes already seen")             \
	X(out_of_order, out_of_order, "TCP segments out of order")                                    \
	X(capture_gaps, gaps, "holes in the TCP byte streams the capture never had")                  \
	X(capture_gap_bytes, gap_bytes, "bytes in those holes")                                       \
	X(gap_fills, gap_fills, "TCP segments that filled a gap late (lost or reordered before the tap)") \
	X(calls_gap_filled, calls_gap_filled, "calls with a gap fill in their request or reply")     \
	X(gap_fill_wait_ns, gap_fill_wait_ns, "nanoseconds those calls' messages waited for the fills") \
	X(giop_malformed, giop_malformed, "malformed GIOP messages")                                  \
	X(giop_truncated, giop_truncated, "GIOP messages cut by the snapshot length")                 \
	X(open_calls_evicted, open_calls_evicted, "open calls dropped at --max-open-calls")          \
	X(calls_capture_loss, calls_capture_loss, "calls missing bytes in the capture")               \
	X(strings_refused, intern_refused, "operation names or keys refused by the full string table")

/* The label of a group; operation names need the engine's strings. */
static void group_label(const struct gs_prom_input *in, const struct gs_group *g, char *buf, size_t len)
{
	if (!in->strings && in->stats->by == GS_BY_OP && g->key != GS_NONE && g->kind != GS_KIND_LOCATE_REQUEST)
		snprintf(buf, len, "(unknown)");
	else
		gs_stats_label(in->stats, g, in->strings, buf, len);
}

void gs_prom_write(FILE *f, const struct gs_prom_input *in)
{
	const struct gs_stats *st = in->stats;
	const char *ln = label_name(st->by);
	uint32_t n = st->n + (st->other != GS_NONE ? 1 : 0);
	char label[192];
	static const struct {
		const char *metric, *help;
		int which;
	} hists[2] = {
		{ "giopscope_call_duration_seconds",
		  "GIOP call latency as the capture point saw it: request first byte to reply last byte (total_us)", 0 },
		{ "giopscope_server_duration_seconds",
		  "time the far side of the capture point held the call: request last byte to reply first byte (server_us)", 1 },
	};
	static const struct {
		const char *metric, *help;
		int which;
	} group_counters[3] = {
		{ "giopscope_calls_total", "GIOP Requests and LocateRequests seen", 0 },
		{ "giopscope_call_errors_total", "calls ended by an exception, UNKNOWN_OBJECT or no reply", 1 },
		{ "giopscope_calls_oneway_total", "oneway calls (no reply expected)", 2 },
	};

	for (int k = 0; k < 2; k++) {
		head(f, hists[k].metric, "histogram", hists[k].help);
		for (uint32_t i = 0; i < n; i++) {
			const struct gs_group *g = i < st->n ? &st->groups[i] : &st->groups[st->other];
			group_label(in, g, label, sizeof label);
			histogram(f, hists[k].metric, ln, label, hists[k].which ? &g->server : &g->total);
		}
	}
	for (int k = 0; k < 3; k++) {
		head(f, group_counters[k].metric, "counter", group_counters[k].help);
		for (uint32_t i = 0; i < n; i++) {
			const struct gs_group *g = i < st->n ? &st->groups[i] : &st->groups[st->other];
			uint64_t v = k == 0 ? g->calls : k == 1 ? g->errors : g->oneways;
			group_label(in, g, label, sizeof label);
			fputs(group_counters[k].metric, f);
			labels(f, ln, label, NULL);
			fprintf(f, " %llu\n", (unsigned long long)v);
		}
	}
	head(f, "giopscope_groups_overflow_calls_total", "counter",
	     "calls counted in the (other) group because the group table was full");
	fprintf(f, "giopscope_groups_overflow_calls_total %llu\n", (unsigned long long)st->other_calls);
	if (in->counters) {
#define X(name, field, help)                                                                   \
	head(f, "giopscope_" #name "_total", "counter", help);                                  \
	fprintf(f, "giopscope_" #name "_total %llu\n", (unsigned long long)in->counters->field);
		ENGINE_COUNTERS(X)
#undef X
		/* the table bounds (--max-memory sizes them all), by the counter that
		 * says each was reached */
		head(f, "giopscope_bound_hits_total", "counter",
		     "times a table bound was reached (--max-memory sizes them), by bound");
		for (size_t i = 0; i < GS_NBOUNDS; i++)
			fprintf(f, "giopscope_bound_hits_total{bound=\"%s\"} %llu\n", gs_bounds[i].key,
				(unsigned long long)gs_bound_hits(in->counters, &gs_bounds[i]));
	}
	head(f, "giopscope_dropped_packets_total", "counter", "packets lost before the decoder, by where");
	fprintf(f, "giopscope_dropped_packets_total{where=\"kernel\"} %llu\n"
		   "giopscope_dropped_packets_total{where=\"interface\"} %llu\n"
		   "giopscope_dropped_packets_total{where=\"other\"} %llu\n",
		(unsigned long long)in->kernel_drops, (unsigned long long)in->iface_drops,
		(unsigned long long)in->other_drops);
	if (in->nest) {
		head(f, "giopscope_nested_calls_total", "counter", "calls given a parent, by how it was decided");
		fprintf(f, "giopscope_nested_calls_total{basis=\"time\"} %llu\n"
			   "giopscope_nested_calls_total{basis=\"thread\"} %llu\n",
			(unsigned long long)in->nest->parent_time, (unsigned long long)in->nest->parent_thread);
		head(f, "giopscope_nesting_undecided_total", "counter",
		     "calls two or more calls enclosed at their host: no parent named");
		fprintf(f, "giopscope_nesting_undecided_total %llu\n", (unsigned long long)in->nest->undecided);
		head(f, "giopscope_nesting_early_total", "counter",
		     "calls written before their nesting was decided (the stage's bound)");
		fprintf(f, "giopscope_nesting_early_total %llu\n", (unsigned long long)in->nest->early);
		head(f, "giopscope_nesting_late_total", "counter",
		     "calls named a parent before another call that enclosed them ended (live)");
		fprintf(f, "giopscope_nesting_late_total %llu\n", (unsigned long long)in->nest->late);
	}
	head(f, "giopscope_open_calls", "gauge", "calls waiting for a reply or for output");
	fprintf(f, "giopscope_open_calls %u\n", in->open_calls);
	head(f, "giopscope_active_connections", "gauge", "TCP connections tracked now");
	fprintf(f, "giopscope_active_connections %u\n", in->active_flows);
	if (in->last_ts > 0) {
		head(f, "giopscope_last_packet_timestamp_seconds", "gauge",
		     "capture time stamp of the last packet (seconds since the epoch)");
		fprintf(f, "giopscope_last_packet_timestamp_seconds %lld.%09lld\n", (long long)(in->last_ts / 1000000000),
			(long long)(in->last_ts % 1000000000));
	}
}
