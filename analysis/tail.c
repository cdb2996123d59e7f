/* SPDX-License-Identifier: BSD-2-Clause */
#include "tail.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "endpoint.h"
#include "sink_pairs.h"

int gs_tail_init(struct gs_tail *t, uint32_t max)
{
	memset(t, 0, sizeof *t);
	if (max == 0)
		return 0;
	t->v = calloc(max, sizeof *t->v);
	if (!t->v)
		return ENOMEM;
	t->max = max;
	return 0;
}

void gs_tail_free(struct gs_tail *t)
{
	gs_tail_chain_free(t);
	free(t->v);
	memset(t, 0, sizeof *t);
}

static int64_t total(const struct gs_call *c)
{
	return c->t_reply_last - c->t_request_first;
}

static void swap(struct gs_tail_entry *a, struct gs_tail_entry *b)
{
	struct gs_tail_entry t = *a;
	*a = *b;
	*b = t;
}

static void sift_down(struct gs_tail *t, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < t->n && total(&t->v[l].call) < total(&t->v[m].call))
			m = l;
		if (r < t->n && total(&t->v[r].call) < total(&t->v[m].call))
			m = r;
		if (m == i)
			return;
		swap(&t->v[i], &t->v[m]);
		i = m;
	}
}

static void printable(char *dst, size_t len, const char *s, size_t n)
{
	size_t i;
	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++)
		dst[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	dst[n] = '\0';
}

void gs_tail_add(struct gs_tail *t, const struct gs_engine *e, const struct gs_call *c)
{
	gs_tail_add_strings(t, gs_engine_strings(e), c, NULL);
}

void gs_tail_add_times(struct gs_tail *t, const struct gs_engine *e, const struct gs_call *c,
		       const struct gs_call_times *times)
{
	gs_tail_add_strings(t, gs_engine_strings(e), c, times);
}

static void name_of(char *dst, size_t len, const struct gs_intern *strings, uint32_t id)
{
	size_t n;
	const char *s = gs_intern_get(strings, id, &n);
	printable(dst, len, s, n);
}

/* The copy of a call the tail keeps (its chain left as it is). */
static void fill_entry(struct gs_tail_entry *en, const struct gs_intern *strings, const struct gs_call *c,
		       const struct gs_call_times *times)
{
	en->call = *c;
	en->has_times = times != NULL;
	if (times)
		en->times = *times;
	else
		memset(&en->times, 0, sizeof en->times);
	name_of(en->op, sizeof en->op, strings, c->op);
	en->queued_op[0] = '\0';
	if (c->queued_ns && c->queued_op == GS_QUEUED_LOCATE)
		snprintf(en->queued_op, sizeof en->queued_op, "LocateRequest");
	else if (c->queued_ns)
		name_of(en->queued_op, sizeof en->queued_op, strings, c->queued_op);
	en->hold_op[0] = '\0';
	if (c->hold_ns)
		name_of(en->hold_op, sizeof en->hold_op, strings, c->hold_op);
	en->depth = 0;
}

void gs_tail_add_strings(struct gs_tail *t, const struct gs_intern *strings, const struct gs_call *c,
			 const struct gs_call_times *times)
{
	struct gs_tail_entry *slot;
	if (t->max == 0)
		return;
	if (c->parent_basis != GS_PARENT_NONE) {
		/* a nested call: a kept call (or a later one) may have been held by it */
		struct gs_tail_entry en;
		en.chain = NULL;
		fill_entry(&en, strings, c, times);
		gs_tail_chain_offer(t, &en);
	}
	if (c->outcome != GS_OUT_REPLY || !(c->flags & GS_CF_REP_SEEN))
		return;
	if (t->n == t->max) {
		if (total(c) <= total(&t->v[0].call))
			return;
		slot = &t->v[0];
	} else {
		slot = &t->v[t->n++];
	}
	fill_entry(slot, strings, c, times);
	gs_tail_chain_start(t, slot);
	if (slot == &t->v[0] && t->n == t->max) {
		sift_down(t, 0);
	} else {
		/* sift up the new last entry */
		uint32_t i = t->n - 1;
		while (i > 0 && total(&t->v[i].call) < total(&t->v[(i - 1) / 2].call)) {
			swap(&t->v[i], &t->v[(i - 1) / 2]);
			i = (i - 1) / 2;
		}
	}
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

static double ms(int64_t ns) { return (double)ns / 1e6; }
static double us(int64_t ns) { return (double)ns / 1e3; }

unsigned gs_call_reasons(const struct gs_call *c, const char *queued_op, char *buf, size_t len)
{
	unsigned tags = 0;
	size_t at = 0;
	int64_t tot = total(c), srv = c->t_reply_first - c->t_request_last;
	const char *sep = "";
	if (len)
		buf[0] = '\0';
	if (tot > 0 && srv * 2 >= tot) {
		tags |= GS_TAG_SERVER;
		at = app(buf, len, at, "%sserver %.1f us (%.0f%%)", sep, us(srv), 100.0 * (double)srv / (double)tot);
		sep = "; ";
	} else if (tot > 0 && (tot - srv) * 2 > tot) {
		tags |= GS_TAG_NETWORK;
		at = app(buf, len, at, "%snetwork %.1f us crossing (request %.1f us, reply %.1f us)", sep,
			 us(tot - srv), us(c->t_request_last - c->t_request_first),
			 us(c->t_reply_last - c->t_reply_first));
		sep = "; ";
	}
	if (c->retransmits) {
		tags |= GS_TAG_RETRANSMISSION;
		at = app(buf, len, at, "%sretransmission %u segment%s, %.3f ms after the message began", sep,
			 c->retransmits, c->retransmits > 1 ? "s" : "", ms(c->rtx_cost_ns));
		sep = "; ";
	}
	if (gs_call_gap_filled(c)) {
		/* network time: the far side could not read the message before */
		tags |= GS_TAG_LOSS;
		at = app(buf, len, at, "%sloss: %u segment%s lost or reordered before the tap: the gap closed "
			 "%.1f us after the bytes above it had arrived", sep, c->gap_fills,
			 c->gap_fills > 1 ? "s" : "", us(c->fill_wait_ns));
		sep = "; ";
	}
	if (c->queued_ns) {
		tags |= GS_TAG_QUEUED;
		at = app(buf, len, at, "%squeued %.1f us behind request %u (%s)", sep, us(c->queued_ns),
			 c->queued_rid, queued_op && *queued_op ? queued_op : "?");
		sep = "; ";
	}
	if (c->nagle_ns) {
		tags |= GS_TAG_NAGLE;
		at = app(buf, len, at, "%snagle %.3f ms before the last %s segment, released by an ACK", sep,
			 ms(c->nagle_ns), c->nagle_half ? "reply" : "request");
		sep = "; ";
	}
	if (c->zero_window_ns) {
		tags |= GS_TAG_ZERO_WINDOW;
		at = app(buf, len, at, "%szero-window %.3f ms", sep, ms(c->zero_window_ns));
		sep = "; ";
	}
	if (c->flags & GS_CF_CAPTURE_LOSS) {
		tags |= GS_TAG_CAPTURE_LOSS;
		at = app(buf, len, at, "%scapture-loss: bytes missing, figures are bounds", sep);
	}
	(void)at;
	return tags;
}

unsigned gs_times_reasons(const struct gs_call_times *t, char *buf, size_t len, size_t at)
{
	unsigned tags = 0;
	const char *sep = at ? "; " : "";
	int64_t proc = t->server_send - t->server_recv;
	if (!t->server_recv || !t->server_send || proc <= 0)
		return 0;
	if ((t->cols & GS_TIMES_COLS_SCHED) && t->server_sched) {
		if (t->server_runq * 3 >= proc) {
			tags |= GS_TAG_CPU_STARVED;
			at = app(buf, len, at, "%scpu-starved: %.1f us runnable in the run queue (%.0f%% of the server's "
				 "%.1f us)", sep, us(t->server_runq), 100.0 * (double)t->server_runq / (double)proc,
				 us(proc));
			sep = "; ";
		}
		if (t->server_blocked * 3 >= proc) {
			tags |= GS_TAG_BLOCKED;
			at = app(buf, len, at, "%sblocked: %.1f us off CPU (%.0f%%)", sep, us(t->server_blocked),
				 100.0 * (double)t->server_blocked / (double)proc);
			sep = "; ";
		}
		if (t->server_oncpu * 3 >= proc) {
			tags |= GS_TAG_ON_CPU;
			at = app(buf, len, at, "%son-cpu: %.1f us (%.0f%%)", sep, us(t->server_oncpu),
				 100.0 * (double)t->server_oncpu / (double)proc);
			sep = "; ";
		}
	}
	if ((t->cols & GS_TIMES_COLS_ORB) && t->upcall_start && t->upcall_end) {
		int64_t in = t->upcall_start - t->server_recv, out = t->server_send - t->upcall_end;
		if ((in + out) * 3 >= proc) {
			tags |= GS_TAG_ORB;
			at = app(buf, len, at, "%sorb: %.1f us in the ORB (in %.1f, out %.1f; servant %.1f us)", sep,
				 us(in + out), us(in), us(out), us(t->upcall_end - t->upcall_start));
		}
	}
	(void)at;
	return tags;
}

bool gs_tail_network_ns(const struct gs_call *c, int64_t *ns)
{
	/* a message cut short (connection or capture ended in it) has no last
	 * byte: its crossing, and so the network share, is unknown */
	if ((c->flags & (GS_CF_REQ_DONE | GS_CF_REP_DONE)) != (GS_CF_REQ_DONE | GS_CF_REP_DONE))
		return false;
	*ns = total(c) - (c->t_reply_first - c->t_request_last);
	return true;
}

bool gs_tail_server_process_ns(const struct gs_tail_entry *en, int64_t *ns)
{
	if (!en->has_times || !en->times.server_recv || !en->times.server_send)
		return false;
	*ns = en->times.server_send - en->times.server_recv;
	return true;
}

bool gs_tail_client_syscall_ns(const struct gs_tail_entry *en, int64_t *ns)
{
	if (!en->has_times || !en->times.client_send || !en->times.client_recv)
		return false;
	*ns = en->times.client_recv - en->times.client_send;
	return true;
}

/* A figure of the split: microseconds, or "-" (text) / null (JSON) when not known. */
static void split_text(FILE *out, bool known, int64_t ns)
{
	if (known)
		fprintf(out, " %12.3f", us(ns));
	else
		fprintf(out, " %12s", "-");
}

static void split_json(FILE *out, const char *key, bool known, int64_t ns)
{
	if (known)
		fprintf(out, ",\"%s\":%.3f", key, us(ns));
	else
		fprintf(out, ",\"%s\":null", key);
}

static int by_total_desc(const void *a, const void *b)
{
	int64_t x = total(&((const struct gs_tail_entry *)a)->call);
	int64_t y = total(&((const struct gs_tail_entry *)b)->call);
	return x < y ? 1 : x > y ? -1 : 0;
}


void gs_tail_tags_json(FILE *out, unsigned tags)
{
	static const char *const names[] = { "server", "network", "retransmission", "queued",
					     "nagle", "zero-window", "capture-loss", "loss",
					     "cpu-starved", "blocked", "on-cpu", "orb", "downstream" };
	fputc('[', out);
	for (unsigned k = 0, first = 1; k < sizeof names / sizeof *names; k++)
		if (tags & (1u << k)) {
			fprintf(out, "%s\"%s\"", first ? "" : ",", names[k]);
			first = 0;
		}
	fputc(']', out);
}

void gs_tail_write(FILE *out, bool jsonl, struct gs_tail *t)
{
	/* a chain of GS_TAIL_DEPTH hops, each with its reasons */
	char reasons[4096], cl[GS_ENDPOINT_STRLEN], sv[GS_ENDPOINT_STRLEN];
	bool attach = false;
	qsort(t->v, t->n, sizeof *t->v, by_total_desc);
	/* the process columns only when the calls came from attach: elsewhere
	 * they would be "-" on every line */
	for (uint32_t i = 0; i < t->n; i++)
		attach |= t->v[i].has_times;
	if (!jsonl) {
		fprintf(out, "\nslowest %u %s\n%12s %12s %12s", t->n, gs_plural(t->n, "call", "calls"), "total_us",
			"server_us", "network_us");
		if (attach)
			fprintf(out, " %17s %17s", "server_process_us", "client_syscall_us");
		fprintf(out, "  %-20s %-44s %10s  %s\n", "operation", "client -> server", "request", "reasons");
	}
	for (uint32_t i = 0; i < t->n; i++) {
		const struct gs_tail_entry *en = &t->v[i];
		const struct gs_call *c = &en->call;
		unsigned tags = gs_tail_entry_reasons(en, reasons, sizeof reasons);
		char conn[2 * GS_ENDPOINT_STRLEN + 8];
		int64_t net = 0, proc = 0, sys = 0;
		bool net_k = gs_tail_network_ns(c, &net);
		bool proc_k = gs_tail_server_process_ns(en, &proc);
		bool sys_k = gs_tail_client_syscall_ns(en, &sys);
		gs_endpoint_str(&c->client, cl, sizeof cl);
		gs_endpoint_str(&c->server, sv, sizeof sv);
		snprintf(conn, sizeof conn, "%s -> %s", cl, sv);
		if (!jsonl) {
			fprintf(out, "%12.3f %12.3f", us(total(c)), us(c->t_reply_first - c->t_request_last));
			split_text(out, net_k, net);
			if (attach) {
				fputs("     ", out); /* the 17-wide headers */
				split_text(out, proc_k, proc);
				fputs("     ", out);
				split_text(out, sys_k, sys);
			}
			fprintf(out, "  %-20.20s %-44s %10u  %s\n",
				c->kind == GS_KIND_REQUEST ? en->op : "(LocateRequest)", conn, c->request_id, reasons);
			continue;
		}
		fputs("{\"type\":\"tail\",\"rank\":", out);
		fprintf(out, "%u,\"client\":", i + 1);
		gs_json_str(out, cl);
		fputs(",\"server\":", out);
		gs_json_str(out, sv);
		fprintf(out, ",\"request_id\":%u,\"operation\":", c->request_id);
		gs_json_str(out, en->op);
		fprintf(out, ",\"total_us\":%.3f,\"server_us\":%.3f", us(total(c)),
			us(c->t_reply_first - c->t_request_last));
		split_json(out, "network_us", net_k, net);
		if (en->has_times) {
			const struct gs_call_times *tm = &en->times;
			split_json(out, "server_process_us", proc_k, proc);
			split_json(out, "client_syscall_us", sys_k, sys);
			if (tm->cols & GS_TIMES_COLS_SCHED) {
				split_json(out, "server_oncpu_us", tm->server_sched, tm->server_oncpu);
				split_json(out, "server_runq_us", tm->server_sched, tm->server_runq);
				split_json(out, "server_blocked_us", tm->server_sched, tm->server_blocked);
			}
			if (tm->cols & GS_TIMES_COLS_ORB) {
				bool up = proc_k && tm->upcall_start && tm->upcall_end;
				split_json(out, "orb_in_us", up, tm->upcall_start - tm->server_recv);
				split_json(out, "servant_us", up, tm->upcall_end - tm->upcall_start);
				split_json(out, "orb_out_us", up, tm->server_send - tm->upcall_end);
			}
		}
		if (c->downstream_ns)
			fprintf(out, ",\"downstream_us\":%.3f", us(c->downstream_ns));
		fputs(",\"tags\":", out);
		gs_tail_tags_json(out, tags);
		fputs(",\"reasons\":", out);
		gs_json_str(out, reasons);
		gs_tail_chain_json(out, en);
		fputs("}\n", out);
	}
	if (t->chains_refused && jsonl)
		fprintf(out, "{\"type\":\"tail_bounds\",\"chains_refused\":%llu,\"max_chains\":%u}\n",
			(unsigned long long)t->chains_refused, GS_TAIL_CHAINS);
	else if (t->chains_refused)
		fprintf(out, "%llu nested %s not kept for the chains (at most %u kept calls hold a chain)\n",
			(unsigned long long)t->chains_refused, gs_plural(t->chains_refused, "call", "calls"),
			GS_TAIL_CHAINS);
}
