/* SPDX-License-Identifier: BSD-2-Clause */
/* Collecting for the HTML report: fixed-size tables filled call by call. */
#include "report_impl.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "text_out.h"
#include "stats.h"
#include "tail.h"

void gs_report_config_default(struct gs_report_config *c)
{
	c->max_ops = 32;
	c->slowest = 20;
	c->time_bins = 200;
	c->samples = 3000;
	c->first_bin_ns = 1000000;
}

void gs_report_split_unknown(struct gs_report_split *s)
{
	s->network_ns = s->server_host_ns = s->server_proc_ns = s->client_proc_ns = GS_REPORT_UNKNOWN;
	for (int i = 0; i < 3; i++)
		s->sched_ns[i] = s->orb_ns[i] = GS_REPORT_UNKNOWN;
}

static int op_init(struct rp_op *o)
{
	int err;
	if ((err = gs_hist_init(&o->total, GS_STATS_TOP_BITS)) != 0)
		return err;
	if ((err = gs_hist_init(&o->server, GS_STATS_TOP_BITS)) != 0)
		return err;
	return gs_hist_init(&o->network, GS_STATS_TOP_BITS);
}

static void op_free(struct rp_op *o)
{
	gs_hist_free(&o->total);
	gs_hist_free(&o->server);
	gs_hist_free(&o->network);
}

void gs_report_free(struct gs_report *r)
{
	if (!r)
		return;
	if (r->ops) {
		for (uint32_t i = 0; i < r->nops; i++)
			op_free(&r->ops[i]);
		if (r->other_used)
			op_free(&r->ops[r->cfg.max_ops]);
	}
	op_free(&r->all);
	free(r->ops);
	free(r->bins);
	free(r->smp);
	rp_nest_free(r);
	free(r->slow);
	free(r);
}

int gs_report_new(struct gs_report **out, const struct gs_report_config *cfg)
{
	struct gs_report *r;
	struct gs_report_config def;
	int err;
	*out = NULL;
	if (!cfg) {
		gs_report_config_default(&def);
		cfg = &def;
	}
	if (cfg->max_ops < 1 || cfg->max_ops > 4096 || cfg->slowest > 10000 || cfg->time_bins < 2 ||
	    cfg->time_bins > 100000 || cfg->samples > 1000000 || cfg->first_bin_ns < 1)
		return EINVAL;
	r = calloc(1, sizeof *r);
	if (!r)
		return ENOMEM;
	r->cfg = *cfg;
	/* an even number of bins: widening merges them in pairs */
	r->cfg.time_bins &= ~1u;
	r->ops = calloc((size_t)cfg->max_ops + 1, sizeof *r->ops);
	r->bins = calloc(r->cfg.time_bins, sizeof *r->bins);
	r->smp = calloc(cfg->samples ? cfg->samples : 1, sizeof *r->smp);
	r->slow = calloc(cfg->slowest ? cfg->slowest : 1, sizeof *r->slow);
	if (!r->ops || !r->bins || !r->smp || !r->slow) {
		gs_report_free(r);
		return ENOMEM;
	}
	if ((err = op_init(&r->all)) != 0) {
		gs_report_free(r);
		return err;
	}
	snprintf(r->all.name, sizeof r->all.name, "(all)");
	r->rng = 0x9e3779b97f4a7c15ull; /* fixed: the same input gives the same report */
	r->t_first = INT64_MAX;
	r->t_last = INT64_MIN;
	r->width = cfg->first_bin_ns;
	*out = r;
	return 0;
}

void gs_report_note(struct gs_report *r, const char *fmt, ...)
{
	va_list ap;
	if (r->nnotes >= RP_NOTES) {
		r->notes_dropped++;
		return;
	}
	va_start(ap, fmt);
	vsnprintf(r->notes[r->nnotes++], RP_NOTE_LEN, fmt, ap);
	va_end(ap);
}

/* ---- operations ---------------------------------------------------------- */

static uint32_t name_hash(const char *s, size_t n, uint8_t kind)
{
	uint32_t h = 2166136261u ^ kind;
	for (size_t i = 0; i < n; i++)
		h = (h ^ (uint8_t)s[i]) * 16777619u;
	return h;
}

static void set_name(struct rp_op *o, const char *s, size_t n, uint8_t kind)
{
	size_t i;
	if (kind == GS_KIND_LOCATE_REQUEST) {
		snprintf(o->name, sizeof o->name, "(LocateRequest)");
		return;
	}
	if (n == 0) {
		snprintf(o->name, sizeof o->name, "(unknown)");
		return;
	}
	if (n > sizeof o->name - 1)
		n = sizeof o->name - 1;
	/* a name from the wire may hold anything: keep it printable */
	for (i = 0; i < n; i++)
		o->name[i] = (s[i] >= 0x20 && s[i] < 0x7f) ? s[i] : '?';
	o->name[n] = '\0';
}

/* Index of the operation (max_ops: "(other)"), or UINT32_MAX without memory. */
static uint32_t op_index(struct gs_report *r, const char *s, size_t n, uint8_t kind)
{
	uint32_t h;
	char tmp[RP_NAME_MAX];
	struct rp_op probe;
	if (kind == GS_KIND_LOCATE_REQUEST)
		n = 0;
	if (n > RP_NAME_MAX - 1)
		n = RP_NAME_MAX - 1; /* names longer than this are one operation */
	h = name_hash(s, n, kind);
	set_name(&probe, s, n, kind);
	memcpy(tmp, probe.name, sizeof tmp);
	for (uint32_t i = 0; i < r->nops; i++)
		if (r->ops[i].hash == h && r->ops[i].kind == kind && strcmp(r->ops[i].name, tmp) == 0)
			return i;
	if (r->nops < r->cfg.max_ops) {
		struct rp_op *o = &r->ops[r->nops];
		if (op_init(o) != 0) {
			op_free(o);
			memset(o, 0, sizeof *o);
		} else {
			memcpy(o->name, tmp, sizeof o->name);
			o->hash = h;
			o->kind = kind;
			return r->nops++;
		}
	}
	r->other_calls++;
	if (!r->other_used) {
		struct rp_op *o = &r->ops[r->cfg.max_ops];
		if (op_init(o) != 0) {
			op_free(o);
			memset(o, 0, sizeof *o);
			return UINT32_MAX;
		}
		snprintf(o->name, sizeof o->name, "(other)");
		o->other = true;
		r->other_used = true;
	}
	return r->cfg.max_ops;
}

static void op_account(struct rp_op *o, const struct gs_call *c, bool answered, bool err,
		       const struct gs_report_split *sp)
{
	o->calls++;
	if (err)
		o->errors++;
	if (c->outcome == GS_OUT_ONEWAY)
		o->oneways++;
	if (c->outcome == GS_OUT_NO_REPLY)
		o->no_reply++;
	if (!answered)
		return;
	o->answered++;
	gs_hist_record(&o->total, c->t_reply_last - c->t_request_first);
	/* the server's own time when another vantage point knows it */
	if (sp && sp->server_host_ns != GS_REPORT_UNKNOWN)
		gs_hist_record(&o->server, sp->server_host_ns);
	else
		gs_hist_record(&o->server, c->t_reply_first - c->t_request_last);
	if (sp && sp->network_ns != GS_REPORT_UNKNOWN)
		gs_hist_record(&o->network, sp->network_ns);
	/* attach --sched / --orb: summed for the mean split per operation */
	if (sp && sp->sched_ns[0] != GS_REPORT_UNKNOWN) {
		o->n_sched++;
		for (int i = 0; i < 3; i++)
			o->sched[i] += sp->sched_ns[i];
	}
	if (sp && sp->orb_ns[0] != GS_REPORT_UNKNOWN) {
		o->n_orb++;
		for (int i = 0; i < 3; i++)
			o->orb[i] += sp->orb_ns[i];
	}
}

/* ---- time bins --------------------------------------------------------------- */

static unsigned bit_len(uint64_t v)
{
	return v ? 64u - (unsigned)__builtin_clzll(v) : 0;
}

static uint32_t rp_tb_index(int64_t ns)
{
	unsigned b;
	uint32_t sub;
	if (ns < 1)
		return 0;
	b = bit_len((uint64_t)ns);
	if (b > RP_TB_OCT)
		return RP_TB_N - 1;
	/* the two bits after the leading one */
	sub = b >= 3 ? (uint32_t)(((uint64_t)ns >> (b - 3)) & 3) : (uint32_t)(((uint64_t)ns << (3 - b)) & 3);
	return (b - 1) * RP_TB_PER_OCT + sub;
}

static int64_t rp_tb_value(uint32_t idx)
{
	uint32_t b = idx / RP_TB_PER_OCT + 1, sub = idx % RP_TB_PER_OCT;
	/* the middle of [ (4+sub) , (5+sub) ) << (b-3) */
	double lo = (double)(4 + sub) * (b >= 3 ? (double)(1ull << (b - 3)) : 1.0 / (double)(1u << (3 - b)));
	double w = b >= 3 ? (double)(1ull << (b - 3)) : 1.0 / (double)(1u << (3 - b));
	return (int64_t)(lo + w / 2);
}

int64_t rp_bin_quantile(const struct rp_bin *b, double q)
{
	uint64_t rank, seen = 0;
	if (!b->answered)
		return 0;
	rank = (uint64_t)(q * (double)b->answered);
	if ((double)rank < q * (double)b->answered)
		rank++;
	if (rank == 0)
		rank = 1;
	for (uint32_t i = 0; i < RP_TB_N; i++) {
		seen += b->h[i];
		if (seen >= rank) {
			int64_t v = rp_tb_value(i);
			return v > b->max ? b->max : v;
		}
	}
	return b->max;
}

static void bins_widen(struct gs_report *r)
{
	uint32_t n = r->cfg.time_bins;
	for (uint32_t i = 0; i < n / 2; i++) {
		struct rp_bin *d = &r->bins[i], *a = &r->bins[2 * i], *b = &r->bins[2 * i + 1];
		struct rp_bin m = *a;
		m.calls += b->calls;
		m.errors += b->errors;
		m.answered += b->answered;
		if (b->max > m.max)
			m.max = b->max;
		for (uint32_t k = 0; k < RP_TB_N; k++)
			m.h[k] += b->h[k];
		*d = m;
	}
	memset(&r->bins[n / 2], 0, (n - n / 2) * sizeof *r->bins);
	r->width *= 2;
	r->bins_used = (r->bins_used + 1) / 2;
}

/* A call that began before the first bin (captures given out of time order,
 * `read later.pcap earlier.pcap`, or calls ending out of order): the bins move
 * right by whole bins to make room, widening first if they would not fit, so
 * that the time axis starts at the earliest call whatever the order they come
 * in.  false only when no width would do (t absurdly far back). */
static bool bins_extend_left(struct gs_report *r, int64_t t)
{
	for (;;) {
		uint64_t k = ((uint64_t)(r->origin - t) + (uint64_t)r->width - 1) / (uint64_t)r->width;
		if (k <= r->cfg.time_bins - r->bins_used) {
			memmove(&r->bins[k], r->bins, (size_t)r->bins_used * sizeof *r->bins);
			memset(r->bins, 0, (size_t)k * sizeof *r->bins);
			r->origin -= (int64_t)k * r->width;
			r->bins_used += (uint32_t)k;
			return true;
		}
		if (r->width >= INT64_MAX / 4)
			return false;
		bins_widen(r);
	}
}

static void bin_account(struct gs_report *r, int64_t t, bool answered, bool err, int64_t total)
{
	uint64_t off;
	uint32_t i;
	struct rp_bin *b;
	if (t < r->origin && !bins_extend_left(r, t)) {
		r->before_origin++;
		t = r->origin;
	}
	off = (uint64_t)(t - r->origin);
	while (off / (uint64_t)r->width >= r->cfg.time_bins && r->width < INT64_MAX / 4)
		bins_widen(r);
	i = (uint32_t)(off / (uint64_t)r->width);
	if (i >= r->cfg.time_bins)
		i = r->cfg.time_bins - 1;
	b = &r->bins[i];
	b->calls++;
	if (err)
		b->errors++;
	if (answered) {
		b->answered++;
		b->h[rp_tb_index(total)]++;
		if (total > b->max)
			b->max = total;
	}
	if (i + 1 > r->bins_used)
		r->bins_used = i + 1;
}

/* ---- reservoir and slowest calls -------------------------------------------------- */

static uint64_t rnd(struct gs_report *r)
{
	/* xorshift64*: deterministic, so the same input gives the same file */
	r->rng ^= r->rng >> 12;
	r->rng ^= r->rng << 25;
	r->rng ^= r->rng >> 27;
	return r->rng * 0x2545f4914f6cdd1dull;
}

static void sample(struct gs_report *r, int64_t t, int64_t total, uint32_t op, bool err)
{
	struct rp_sample s = { t, total, op, err };
	if (!r->cfg.samples)
		return;
	r->seen++;
	if (r->nsmp < r->cfg.samples) {
		r->smp[r->nsmp++] = s;
		return;
	}
	{
		uint64_t j = rnd(r) % r->seen;
		if (j < r->cfg.samples)
			r->smp[j] = s;
	}
}

static bool slow_less(const struct rp_slow *a, const struct rp_slow *b)
{
	/* equal totals: the later call counts as smaller (the first one stays) */
	return a->total < b->total || (a->total == b->total && a->serial > b->serial);
}

static void heap_down(struct rp_slow *h, uint32_t n, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i;
		if (l < n && slow_less(&h[l], &h[m]))
			m = l;
		if (l + 1 < n && slow_less(&h[l + 1], &h[m]))
			m = l + 1;
		if (m == i)
			return;
		struct rp_slow t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void heap_up(struct rp_slow *h, uint32_t i)
{
	while (i > 0) {
		uint32_t p = (i - 1) / 2;
		if (!slow_less(&h[i], &h[p]))
			return;
		struct rp_slow t = h[i];
		h[i] = h[p];
		h[p] = t;
		i = p;
	}
}

static void keep_slow(struct gs_report *r, const struct gs_call *c, uint32_t op,
		      const struct gs_report_split *sp, const char *queued_op, const char *name, size_t namelen)
{
	struct rp_slow s;
	if (!r->cfg.slowest)
		return;
	memset(&s, 0, sizeof s);
	s.total = c->t_reply_last - c->t_request_first;
	s.serial = r->serial;
	if (r->nslow == r->cfg.slowest && !slow_less(&r->slow[0], &s))
		return;
	s.req_xfer = c->t_request_last - c->t_request_first;
	s.hold = c->t_reply_first - c->t_request_last;
	s.rep_xfer = c->t_reply_last - c->t_reply_first;
	s.t0 = c->t_request_first;
	if (sp)
		s.split = *sp;
	else
		gs_report_split_unknown(&s.split);
	s.client = c->client;
	s.server = c->server;
	s.request_id = c->request_id;
	s.retransmits = c->retransmits;
	s.gap_fills = c->gap_fills;
	s.flags = c->flags;
	s.op = op;
	s.status = gs_call_status(c);
	gs_call_reasons(c, queued_op, s.reasons, sizeof s.reasons);
	/* its nested calls that ended before it (report_nest.c) */
	rp_nest_collect(r, &s, c, name, namelen);
	if (r->nslow < r->cfg.slowest) {
		r->slow[r->nslow] = s;
		heap_up(r->slow, r->nslow++);
	} else {
		free(r->slow[0].tree);
		r->slow[0] = s;
		heap_down(r->slow, r->nslow, 0);
	}
}

/* ---- adding calls --------------------------------------------------------------- */

static void add(struct gs_report *r, const char *op, size_t oplen, const struct gs_call *c,
		const struct gs_report_split *sp, const char *queued_op)
{
	bool answered = (c->flags & GS_CF_REP_SEEN) && c->outcome == GS_OUT_REPLY;
	bool err = gs_call_is_error(c);
	int64_t total = answered ? c->t_reply_last - c->t_request_first : 0;
	uint32_t oi = op_index(r, op ? op : "", op ? oplen : 0, c->kind);

	r->serial++;
	r->calls++;
	if (!r->started) {
		r->started = true;
		r->origin = c->t_request_first - c->t_request_first % r->width;
	}
	if (c->t_request_first < r->t_first)
		r->t_first = c->t_request_first;
	if (c->t_request_first > r->t_last)
		r->t_last = c->t_request_first;
	if (oi != UINT32_MAX)
		op_account(&r->ops[oi], c, answered, err, sp);
	op_account(&r->all, c, answered, err, sp);
	if (sp && sp->network_ns != GS_REPORT_UNKNOWN && answered)
		r->any_network = true;
	bin_account(r, c->t_request_first, answered, err, total);
	if (c->parent_basis != GS_PARENT_NONE)
		rp_nest_offer(r, c, op, op ? oplen : 0);
	if (!answered)
		return;
	sample(r, c->t_request_first, total, oi, err);
	keep_slow(r, c, oi, sp, queued_op, op, op ? oplen : 0);
}

void gs_report_add_named(struct gs_report *r, const char *op, size_t oplen, const struct gs_call *c,
			 const struct gs_report_split *sp)
{
	add(r, op, oplen, c, sp, NULL);
}

void gs_report_add_split(struct gs_report *r, const struct gs_engine *e, const struct gs_call *c,
			 const struct gs_report_split *split)
{
	size_t n = 0, qn = 0;
	const char *op = e ? gs_intern_get(gs_engine_strings(e), c->op, &n) : "";
	char queued[64] = "";
	if (e && c->queued_ns) {
		const char *q = c->queued_op == GS_QUEUED_LOCATE ? "LocateRequest" :
				gs_intern_get(gs_engine_strings(e), c->queued_op, &qn);
		if (c->queued_op == GS_QUEUED_LOCATE)
			qn = strlen(q);
		if (qn > sizeof queued - 1)
			qn = sizeof queued - 1;
		for (size_t i = 0; i < qn; i++)
			queued[i] = q[i] >= 0x20 && q[i] < 0x7f ? q[i] : '?';
		queued[qn] = '\0';
	}
	add(r, op, n, c, split, queued);
}

void gs_report_add(struct gs_report *r, const struct gs_engine *e, const struct gs_call *c)
{
	gs_report_add_split(r, e, c, NULL);
}

void gs_report_get_info(const struct gs_report *r, struct gs_report_info *info)
{
	memset(info, 0, sizeof *info);
	info->calls = r->calls;
	info->answered = r->all.answered;
	info->ops = r->nops;
	info->other_calls = r->other_calls;
	info->slow_kept = r->nslow;
	info->samples_kept = r->nsmp;
	info->bin_width_ns = r->width;
	info->origin_ns = r->origin;
	info->t_first_ns = r->t_first;
	info->t_last_ns = r->t_last;
	info->bins_used = r->bins_used;
	info->before_origin = r->before_origin;
	info->notes_dropped = r->notes_dropped;
}
