/* SPDX-License-Identifier: BSD-2-Clause */
/* Records reuse the pairs sink (sink_pairs.c) for the client side's columns
 * and append the merged ones; percentiles in the summary are exact (merge
 * holds every call anyway), so negative network times stay negative. */
#include "merge_out.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../analysis/endpoint.h"
#include "../analysis/nest.h"
#include "../analysis/sink_pairs.h"

#define ROW_MAX 16384

/* exact microseconds with 3 decimals, signed */
static void us3(char *buf, size_t len, int64_t ns)
{
	uint64_t u = ns < 0 ? (uint64_t)(-(ns + 1)) + 1 : (uint64_t)ns;
	snprintf(buf, len, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(u / 1000),
		 (unsigned long long)(u % 1000));
}

static void figures_of(const struct gs_merge *m, uint32_t i, struct gs_merge_figures *f)
{
	gs_merge_call_figures(m, i, f);
}

/* `merge --pairs --format text`: header and rows from this one table */
enum { MT_CLIENT, MT_SERVER, MT_REQUEST_ID, MT_OPERATION, MT_STATUS, MT_TOTAL, MT_SERVER_SERVER, MT_NETWORK, MT__N };
static const struct gs_text_col merge_text_cols[MT__N] = {
	[MT_CLIENT] = { "client", 22, true, false },
	[MT_SERVER] = { "server", 22, true, false },
	[MT_REQUEST_ID] = { "request_id", 10, false, false },
	[MT_OPERATION] = { "operation", 22, true, true },
	[MT_STATUS] = { "status", 16, true, false },
	[MT_TOTAL] = { "total_us", 12, false, false },
	[MT_SERVER_SERVER] = { "server_side_server_us", 12, false, false },
	[MT_NETWORK] = { "network_us", 12, false, false },
};

/* What writing one record needs (the nesting stage hands the calls back). */
struct pairs_w {
	FILE *out, *mf;
	char *row;
	enum gs_merge_fmt fmt;
	const struct gs_merge *m;
	const struct gs_intern *strings;
	struct gs_pairs_cache cache;
};

/* Client call i (c->serial: its index) with its parent and downstream time. */
static void write_one(void *arg, const struct gs_engine *e, const struct gs_call *cp, const struct gs_call_times *t)
{
	struct pairs_w *w = arg;
	FILE *out = w->out, *mf = w->mf;
	char *row = w->row;
	enum gs_merge_fmt fmt = w->fmt;
	const struct gs_merge *m = w->m;
	const struct gs_intern *strings = w->strings;
	uint32_t i = cp->serial;
	struct gs_call c = *cp;
	struct gs_merge_figures f;
	char a[32], b[32], o[32], s[32], lo[32], hi[32];
	long len;
	(void)e;
	(void)t;
	figures_of(m, i, &f);
	if (f.known) {
		us3(a, sizeof a, f.network_ns);
		us3(b, sizeof b, f.server_total_ns);
		us3(s, sizeof s, f.server_server_ns);
		us3(lo, sizeof lo, f.offset_lo_ns);
		us3(hi, sizeof hi, f.offset_hi_ns);
		if (f.offset_known)
			us3(o, sizeof o, f.offset_ns);
		else
			o[0] = '\0';
	}
	if (fmt == GS_MERGE_TEXT) {
		char cl[GS_ENDPOINT_STRLEN], sv[GS_ENDPOINT_STRLEN], id[16], op[24], total[32];
		const char *v[MT__N];
		size_t on;
		const char *name = gs_intern_get(strings, c.op, &on);
		gs_endpoint_str(&c.client, cl, sizeof cl);
		gs_endpoint_str(&c.server, sv, sizeof sv);
		snprintf(id, sizeof id, "%u", c.request_id);
		snprintf(op, sizeof op, "%.*s", (int)(on > 22 ? 22 : on), c.kind == GS_KIND_REQUEST ? name : "");
		if (c.flags & GS_CF_REP_SEEN)
			snprintf(total, sizeof total, "%.3f", (double)(c.t_reply_last - c.t_request_first) / 1e3);
		else
			snprintf(total, sizeof total, "-");
		v[MT_CLIENT] = cl;
		v[MT_SERVER] = sv;
		v[MT_REQUEST_ID] = id;
		v[MT_OPERATION] = op;
		v[MT_STATUS] = gs_call_status(&c);
		v[MT_TOTAL] = total;
		v[MT_SERVER_SERVER] = f.known ? s : "-";
		v[MT_NETWORK] = f.known ? a : "-";
		gs_text_row(out, merge_text_cols, MT__N, v);
		return;
	}
	rewind(mf);
	gs_pairs_write_cached(mf, fmt == GS_MERGE_CSV ? GS_PAIRS_CSV : GS_PAIRS_JSONL, strings, &c, &w->cache);
	fflush(mf);
	len = ftell(mf);
	if (fmt == GS_MERGE_CSV) {
		/* the row without its newline, then the merged columns */
		if (len > 0)
			fwrite(row, 1, (size_t)len - 1, out);
		if (f.known)
			fprintf(out, ",%s,%s,%s,%s,%s,%s\n", a, b, o, s, lo, hi);
		else
			fputs(",,,,,,\n", out);
	} else {
		/* the object without "}\n", then the merged keys */
		if (len > 1)
			fwrite(row, 1, (size_t)len - 2, out);
		if (f.known)
			fprintf(out, ",\"matched\":true,\"network_us\":%s,\"server_side_total_us\":%s,"
				"\"clock_offset_us\":%s,\"server_side_server_us\":%s,\"clock_offset_lo_us\":%s,"
				"\"clock_offset_hi_us\":%s", a, b, f.offset_known ? o : "null", s, lo, hi);
		else
			fprintf(out, ",\"matched\":%s,\"network_us\":null,\"server_side_total_us\":null,"
				"\"clock_offset_us\":null,\"server_side_server_us\":null,\"clock_offset_lo_us\":null,"
				"\"clock_offset_hi_us\":null",
				gs_merge_match(m, i) != GS_MERGE_NONE ? "true" : "false");
		if (gs_merge_match(m, i) != GS_MERGE_NONE) {
			/* the endpoints as the server's host saw them (NAT) */
			const struct gs_mcall *sc = gs_merge_get(m, GS_MERGE_SERVER, gs_merge_match(m, i));
			char e1[GS_ENDPOINT_STRLEN], e2[GS_ENDPOINT_STRLEN];
			gs_endpoint_str(&sc->client, e1, sizeof e1);
			gs_endpoint_str(&sc->server, e2, sizeof e2);
			fprintf(out, ",\"server_side_client\":\"%s\",\"server_side_server\":\"%s\"", e1, e2);
		}
		fputs("}\n", out);
	}
}

int gs_merge_write_pairs(FILE *out, enum gs_merge_fmt fmt, const struct gs_merge *m)
{
	struct pairs_w *w = calloc(1, sizeof *w);
	struct gs_nest nest;
	uint32_t n = gs_merge_count(m, GS_MERGE_CLIENT);
	int err = 0;

	if (!w)
		return ENOMEM;
	w->out = out;
	w->fmt = fmt;
	w->m = m;
	w->strings = gs_merge_strings(m);
	if (fmt != GS_MERGE_TEXT) {
		w->row = malloc(ROW_MAX);
		if (!w->row || !(w->mf = fmemopen(w->row, ROW_MAX, "w"))) {
			free(w->row);
			free(w);
			return ENOMEM;
		}
	}
	/* the client side's calls through the nesting stage, in its order (merge
	 * holds them all: the stage's bound is their number) */
	if ((err = gs_nest_init(&nest, true, n + 2, 0, write_one, w)) != 0)
		goto end;
	if (fmt == GS_MERGE_CSV)
		fputs(GS_PAIRS_HEADER GS_MERGE_EXTRA_HEADER "\n", out);
	else if (fmt == GS_MERGE_TEXT)
		gs_text_header(out, merge_text_cols, MT__N);
	for (uint32_t i = 0; i < n; i++) {
		struct gs_call c;
		gs_merge_to_call(gs_merge_get(m, GS_MERGE_CLIENT, i), &c);
		c.serial = i;
		gs_nest_add(&nest, NULL, &c, NULL);
	}
	gs_nest_flush(&nest);
	gs_nest_free(&nest);
end:
	if (w->mf)
		fclose(w->mf);
	free(w->row);
	free(w);
	return err ? err : ferror(out) ? EIO : 0;
}

/* ---- the summary ----------------------------------------------------------------- */

struct group {
	uint32_t key;            /* merge string id; UINT32_MAX: LocateRequests */
	uint32_t first, n;       /* members in the sorted index */
	uint64_t matched;
	int64_t *v[3];           /* total (client side), server_us (server side), network */
	uint64_t nv[3];
};

static uint32_t key_of(const struct gs_mcall *c)
{
	return c->kind == GS_KIND_LOCATE_REQUEST ? UINT32_MAX : c->op;
}

static int cmp_key(const void *a, const void *b, void *arg)
{
	const struct gs_merge *m = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	uint32_t x = key_of(gs_merge_get(m, 0, i)), y = key_of(gs_merge_get(m, 0, j));
	if (x != y)
		return x < y ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Fills the values of a group from the client indices idx[0..n). */
static int fill(const struct gs_merge *m, const uint32_t *idx, uint32_t n, struct group *g)
{
	for (int k = 0; k < 3; k++) {
		g->v[k] = malloc(((size_t)n + 1) * sizeof *g->v[k]);
		g->nv[k] = 0;
		if (!g->v[k])
			return ENOMEM;
	}
	g->n = n;
	g->matched = 0;
	for (uint32_t k = 0; k < n; k++) {
		const struct gs_mcall *c = gs_merge_get(m, 0, idx[k]);
		struct gs_merge_figures f;
		if (gs_merge_match(m, idx[k]) != GS_MERGE_NONE)
			g->matched++;
		if ((c->flags & GS_CF_REP_SEEN) && c->outcome == GS_OUT_REPLY)
			g->v[0][g->nv[0]++] = c->t_reply_last - c->t_request_first;
		figures_of(m, idx[k], &f);
		if (f.known) {
			g->v[1][g->nv[1]++] = f.server_server_ns;
			g->v[2][g->nv[2]++] = f.network_ns;
		}
	}
	for (int k = 0; k < 3; k++)
		qsort(g->v[k], g->nv[k], sizeof *g->v[k], cmp_i64);
	return 0;
}

static int64_t pct(const int64_t *v, uint64_t n, double q)
{
	/* nearest rank: the smallest value with at least q of the values at or below it */
	uint64_t r = (uint64_t)(q * (double)n);
	if ((double)r < q * (double)n)
		r++;
	if (r == 0)
		r = 1;
	return v[(r > n ? n : r) - 1];
}

static void label(const struct gs_merge *m, const struct group *g, char *buf, size_t len)
{
	size_t n, i;
	const char *s;
	if (g->key == UINT32_MAX - 1) {
		snprintf(buf, len, "(all)");
		return;
	}
	if (g->key == UINT32_MAX) {
		snprintf(buf, len, "(LocateRequest)");
		return;
	}
	s = gs_intern_get(gs_merge_strings(m), g->key, &n);
	if (!n) {
		snprintf(buf, len, "(unknown)");
		return;
	}
	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++) /* a name from the wire may hold anything */
		buf[i] = s[i] >= 0x20 && s[i] < 0x7f ? s[i] : '?';
	buf[n] = '\0';
}

/* a file name as a JSON string (control bytes and non-ASCII escaped) */
static void json_name(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < 0x20 || ch >= 0x7f)
			fprintf(out, "\\u%04x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

static const double qs[] = { 0.5, 0.9, 0.99, 1.0 };
static const char *const qn[] = { "p50", "p90", "p99", "max" };
static const char *const series[] = { "total_us", "server_us", "network_us" };

static void row(FILE *out, enum gs_merge_fmt fmt, const struct gs_merge *m, const struct group *g)
{
	char lab[72], v[32];
	label(m, g, lab, sizeof lab);
	if (fmt == GS_MERGE_TEXT)
		fprintf(out, "%-24.24s %8u %8llu", lab, g->n, (unsigned long long)g->matched);
	else if (fmt == GS_MERGE_CSV) {
		if (strpbrk(lab, ",\"")) { /* printable already; quote the rare comma or quote */
			fputc('"', out);
			for (const char *p = lab; *p; p++) {
				if (*p == '"')
					fputc('"', out);
				fputc(*p, out);
			}
			fputc('"', out);
		} else {
			fputs(lab, out);
		}
		fprintf(out, ",%u,%llu,%llu", g->n, (unsigned long long)g->matched, (unsigned long long)g->nv[0]);
	} else {
		fputs("{\"type\":\"group\",\"operation\":\"", out);
		for (const char *p = lab; *p; p++) {
			if (*p == '"' || *p == '\\')
				fputc('\\', out);
			fputc(*p, out);
		}
		fprintf(out, "\",\"calls\":%u,\"matched\":%llu,\"answered\":%llu", g->n,
			(unsigned long long)g->matched, (unsigned long long)g->nv[0]);
	}
	for (int k = 0; k < 3; k++) {
		if (fmt == GS_MERGE_TEXT)
			fputs(" |", out);
		if (fmt == GS_MERGE_JSONL) {
			if (!g->nv[k]) {
				fprintf(out, ",\"%s\":null", series[k]);
				continue;
			}
			fprintf(out, ",\"%s\":{", series[k]);
		}
		for (int q = 0; q < 4; q++) {
			if (g->nv[k])
				us3(v, sizeof v, pct(g->v[k], g->nv[k], qs[q]));
			if (fmt == GS_MERGE_TEXT)
				fprintf(out, " %9.9s", g->nv[k] ? v : "-");
			else if (fmt == GS_MERGE_CSV)
				fprintf(out, ",%s", g->nv[k] ? v : "");
			else
				fprintf(out, "%s\"%s\":%s", q ? "," : "", qn[q], v);
		}
		if (fmt == GS_MERGE_JSONL)
			fputc('}', out);
	}
	fputs(fmt == GS_MERGE_JSONL ? "}\n" : "\n", out);
}

void gs_merge_write_offset(FILE *out, const struct gs_merge_result *r)
{
	char a[32], b[32], c[32];
	if (!r->offset_known) {
		if (r->offset_n)
			fprintf(out, "clock offset: unknown: none of the %llu answered matched calls allows any (each one's "
				"request bound lies below its reply bound: captures given the wrong way round?)\n",
				(unsigned long long)r->offset_n);
		else
			fputs("clock offset: unknown (no answered call matched)\n", out);
		return;
	}
	us3(a, sizeof a, r->offset_ns);
	us3(b, sizeof b, r->offset_lo_ns);
	us3(c, sizeof c, r->offset_hi_ns);
	fprintf(out, "clock offset (server capture clock - client capture clock): %s us, the middle of %s..%s us", a, b,
		c);
	if (r->offset_all)
		fprintf(out, ", the range every one of the %llu answered matched calls allows (nothing assumed but "
			"causality: a request reaches the server after the client sent it, a reply the client after "
			"the server sent it)", (unsigned long long)r->offset_n);
	else
		fprintf(out, ", the range most calls allow: %llu of %llu (causality assumed for those; the bounds of "
			"the other %llu exclude it: drift, time stamps moved by a capture, or mismatched calls)%s",
			(unsigned long long)r->offset_agree, (unsigned long long)r->offset_n,
			(unsigned long long)r->offset_violating,
			2 * r->offset_agree > r->offset_n ? "" : "; fewer than half agree: not a reliable estimate");
	if (r->drift_corrected)
		fprintf(out, "; calls compared along a drift of %.3f ppm, the offset given at client capture time "
			"%lld.%09lld s", r->drift_ppm, (long long)(r->offset_tref / 1000000000),
			(long long)((r->offset_tref % 1000000000 + 1000000000) % 1000000000));
	else if (r->drift_known)
		fprintf(out, "; drift %.3f ppm", r->drift_ppm);
	else
		fputs("; no drift measurable", out);
	fputc('\n', out);
}

int gs_merge_write_summary(FILE *out, enum gs_merge_fmt fmt, const struct gs_merge *m,
			   const struct gs_merge_result *r, const char *client, const char *server)
{
	uint32_t n = gs_merge_count(m, GS_MERGE_CLIENT), ng = 0;
	uint32_t *idx = malloc(((size_t)n + 1) * sizeof *idx);
	struct group *g = calloc((size_t)n + 2, sizeof *g), all;
	int err = 0;

	memset(&all, 0, sizeof all);
	if (!idx || !g) {
		free(idx);
		free(g);
		return ENOMEM;
	}
	for (uint32_t i = 0; i < n; i++)
		idx[i] = i;
	qsort_r(idx, n, sizeof *idx, cmp_key, (void *)(uintptr_t)m);
	for (uint32_t i = 0; i < n; i++) {
		uint32_t k = key_of(gs_merge_get(m, 0, idx[i]));
		if (!ng || g[ng - 1].key != k) {
			g[ng].key = k;
			g[ng].first = i;
			ng++;
		}
		g[ng - 1].n++;
	}
	for (uint32_t i = 0; i < ng && !err; i++)
		err = fill(m, idx + g[i].first, g[i].n, &g[i]);
	if (!err) {
		/* (all): every client call */
		for (uint32_t i = 0; i < n; i++)
			idx[i] = i;
		err = fill(m, idx, n, &all);
		all.key = UINT32_MAX - 1;
	}
	if (!err) {
		qsort(g, ng, sizeof *g, cmp_group);
		if (fmt == GS_MERGE_TEXT) {
			fprintf(out, "giopscope merge: client side %s (%llu %s), server side %s (%llu %s)\n", client,
				(unsigned long long)r->calls[0], gs_plural(r->calls[0], "call", "calls"), server,
				(unsigned long long)r->calls[1], gs_plural(r->calls[1], "call", "calls"));
			fprintf(out, "request streams (connection and direction): client side %u, server side %u, matched %u\n",
				r->streams[0], r->streams[1], r->streams_matched);
			fprintf(out, "calls: %llu of the client side's matched, %llu not; %llu of the server side's not matched\n",
				(unsigned long long)r->matched, (unsigned long long)r->unmatched[0],
				(unsigned long long)r->unmatched[1]);
			if (r->dropped[0] || r->dropped[1])
				fprintf(out, "dropped beyond --max-calls: client side %llu, server side %llu\n",
					(unsigned long long)r->dropped[0], (unsigned long long)r->dropped[1]);
			gs_merge_write_offset(out, r);
			fprintf(out, "\n%-24s %8s %8s | %-39s | %-39s | %s\n", "", "", "", "total_us (client side)",
				"server_us (server side)", "network_us (client total - server total)");
			fprintf(out, "%-24s %8s %8s", "operation", "calls", "matched");
			for (int k = 0; k < 3; k++) {
				fputs(" |", out);
				for (int q = 0; q < 4; q++)
					fprintf(out, " %9s", qn[q]);
			}
			fputc('\n', out);
		} else if (fmt == GS_MERGE_CSV) {
			fputs("operation,calls,matched,answered", out);
			for (int k = 0; k < 3; k++)
				for (int q = 0; q < 4; q++)
					fprintf(out, ",%.*s_%s_us", (int)(strlen(series[k]) - 3), series[k], qn[q]);
			fputc('\n', out);
		}
		for (uint32_t i = 0; i < ng; i++)
			row(out, fmt, m, &g[i]);
		if (ng != 1 || fmt != GS_MERGE_TEXT)
			row(out, fmt, m, &all);
		if (fmt == GS_MERGE_JSONL) {
			fputs("{\"type\":\"merge\",\"client\":", out);
			json_name(out, client);
			fputs(",\"server\":", out);
			json_name(out, server);
			fputc(',', out);
			fprintf(out, "\"calls_client\":%llu,\"calls_server\":%llu,\"streams_client\":%u,"
				"\"streams_server\":%u,\"streams_matched\":%u,\"matched\":%llu,\"unmatched_client\":%llu,"
				"\"unmatched_server\":%llu,\"dropped_client\":%llu,\"dropped_server\":%llu,\"offset_calls\":%llu",
				(unsigned long long)r->calls[0], (unsigned long long)r->calls[1], r->streams[0],
				r->streams[1], r->streams_matched, (unsigned long long)r->matched,
				(unsigned long long)r->unmatched[0], (unsigned long long)r->unmatched[1],
				(unsigned long long)r->dropped[0], (unsigned long long)r->dropped[1],
				(unsigned long long)r->offset_n);
			if (r->offset_known) {
				char v[3][32];
				us3(v[0], 32, r->offset_ns);
				us3(v[1], 32, r->offset_lo_ns);
				us3(v[2], 32, r->offset_hi_ns);
				fprintf(out, ",\"clock_offset_us\":%s,\"clock_offset_lo_us\":%s,\"clock_offset_hi_us\":%s,"
					"\"clock_offset_method\":\"%s\",\"clock_offset_agree\":%llu,\"clock_offset_violating\":%llu",
					v[0], v[1], v[2], r->offset_all ? "intersection" : "most_calls",
					(unsigned long long)r->offset_agree, (unsigned long long)r->offset_violating);
				if (r->drift_known)
					fprintf(out, ",\"drift_ppm\":%.6f,\"drift_corrected\":%s", r->drift_ppm,
						r->drift_corrected ? "true" : "false");
				else
					fputs(",\"drift_ppm\":null,\"drift_corrected\":false", out);
			} else {
				fprintf(out, ",\"clock_offset_us\":null,\"clock_offset_violating\":%llu",
					(unsigned long long)r->offset_violating);
			}
			fprintf(out, ",\"looks_swapped\":%s,\"same_capture\":%s", r->looks_swapped ? "true" : "false",
				r->same_capture ? "true" : "false");
			fputs("}\n", out);
		}
	}
	for (uint32_t i = 0; i < ng; i++)
		for (int k = 0; k < 3; k++)
			free(g[i].v[k]);
	for (int k = 0; k < 3; k++)
		free(all.v[k]);
	free(g);
	free(idx);
	if (!err && ferror(out))
		err = EIO;
	return err;
}
