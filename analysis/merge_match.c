/* SPDX-License-Identifier: BSD-2-Clause */
/* Matching two captures' calls: streams, signatures, a clock offset shared by
 * the right pairs, then calls by request id.  See merge_match.h. */
#include "merge_match.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define ANCHORS 8            /* calls of a client stream looked up to find candidates */
#define PHASE_A_STREAMS 64   /* client streams sampled to find the common offset */
#define PHASE_A_RUN 1024     /* server calls with one signature looked at per anchor */
#define PHASE_A_SAMPLE 8     /* calls compared per candidate pair in that sample */
#define NEAREST 8            /* candidates on each side of the expected time */
#define SAMPLE 64            /* calls compared per candidate pair */
#define STRICT_NS 20000      /* timestamp noise: what an exact offset may miss an interval by */
#define SLICES 8             /* time slices for the drift fit */

struct mstream {
	uint32_t first, n;       /* members: order[first .. first + n) */
	uint32_t match;          /* the other side's stream, GS_MERGE_NONE */
};

struct sigent {
	uint64_t h;
	int64_t t;
	uint32_t idx;
};

struct side {
	struct gs_mcall *v;
	uint32_t n, cap;
	uint64_t dropped;
	uint32_t *order;         /* stream members, each stream in capture order */
	struct mstream *st;
	uint32_t nst;
	uint32_t *byrid;         /* server: each stream's members by (request id, order) */
	struct sigent *sig;      /* server: every call by (signature, time) */
};

struct model {
	bool known;
	int64_t theta0, tref;
	double drift;            /* ns of offset per ns of time */
};

struct cand {
	uint32_t cs, ss, matched, sampled, nint;
	uint32_t strict;         /* answered calls whose interval holds the model's offset (+- 20 us) */
	uint32_t consistent;     /* ... within the tolerance */
	int64_t dev;             /* mean distance of the intervals' midpoints from the model */
	uint32_t inside;         /* sampled calls the model puts within the server stream's time */
	uint32_t inside_matched; /* ... that have a twin there */
};

/* An event of the sweep: a vote starting (+weight) or ending (-weight). */
struct ival {
	int64_t x;
	int64_t d;
};

struct gs_merge {
	struct gs_merge_config cfg;
	struct gs_intern strings;
	struct side s[2];
	uint32_t *match;         /* client call -> server call */
	uint8_t *used;           /* server calls taken */
	uint32_t *stamp;         /* server stream -> last client stream that listed it, + 1 */
	uint32_t stamp_no;
	int64_t strict;          /* min(tolerance, STRICT_NS) */
	bool est_known;          /* the offset estimate, once run: est_ns at client time est_tref, */
	int64_t est_ns, est_tref; /* changing by est_drift per ns */
	double est_drift;
};

void gs_merge_config_default(struct gs_merge_config *c)
{
	c->max_calls = 2u << 20;
	c->tolerance_ns = 1000000;
	c->max_strings = 65536;
}

int gs_merge_new(struct gs_merge **out, const struct gs_merge_config *cfg)
{
	struct gs_merge *m;
	struct gs_merge_config def;
	int err;
	*out = NULL;
	if (!cfg) {
		gs_merge_config_default(&def);
		cfg = &def;
	}
	if (cfg->max_calls < 1 || cfg->max_calls > (1u << 30) || cfg->tolerance_ns < 0 || cfg->max_strings < 16)
		return EINVAL;
	m = calloc(1, sizeof *m);
	if (!m)
		return ENOMEM;
	m->cfg = *cfg;
	m->strict = cfg->tolerance_ns < STRICT_NS ? cfg->tolerance_ns : STRICT_NS;
	if ((err = gs_intern_init(&m->strings, cfg->max_strings, (size_t)cfg->max_strings * 64)) != 0) {
		free(m);
		return err;
	}
	*out = m;
	return 0;
}

static void side_free(struct side *s)
{
	free(s->v);
	free(s->order);
	free(s->st);
	free(s->byrid);
	free(s->sig);
	memset(s, 0, sizeof *s);
}

void gs_merge_free(struct gs_merge *m)
{
	if (!m)
		return;
	side_free(&m->s[0]);
	side_free(&m->s[1]);
	gs_intern_free(&m->strings);
	free(m->match);
	free(m->used);
	free(m->stamp);
	free(m);
}

/* ---- collecting ------------------------------------------------------------- */

/* A new call of a side (zeroed), or NULL (counted as dropped). */
static struct gs_mcall *slot(struct gs_merge *m, int side)
{
	struct side *s = &m->s[side ? 1 : 0];
	struct gs_mcall *mc;
	if (s->n == s->cap) {
		uint32_t cap = s->cap ? s->cap * 2 : 1024;
		struct gs_mcall *nv;
		if (cap > m->cfg.max_calls)
			cap = m->cfg.max_calls;
		if (s->n >= cap || !(nv = realloc(s->v, (size_t)cap * sizeof *nv))) {
			s->dropped++;
			return NULL;
		}
		s->v = nv;
		s->cap = cap;
	}
	mc = &s->v[s->n++];
	memset(mc, 0, sizeof *mc);
	return mc;
}

static void add(struct gs_merge *m, int side, const char *op, size_t oplen, const char *exc, size_t exclen,
		const struct gs_call *c)
{
	struct gs_mcall *mc = slot(m, side);
	if (!mc)
		return;
	mc->client = c->client;
	mc->server = c->server;
	mc->t_request_first = c->t_request_first;
	mc->t_request_last = c->t_request_last;
	mc->t_reply_first = c->t_reply_first;
	mc->t_reply_last = c->t_reply_last;
	mc->request_bytes = c->request_bytes;
	mc->reply_bytes = c->reply_bytes;
	mc->request_id = c->request_id;
	mc->op = gs_intern(&m->strings, op, oplen);
	mc->exception = (c->flags & GS_CF_HAS_EXCEPTION) ? gs_intern(&m->strings, exc, exclen) : GS_INTERN_EMPTY;
	mc->minor_code = c->minor_code;
	mc->retransmits = c->retransmits;
	mc->gap_fills = c->gap_fills;
	mc->flags = c->flags;
	mc->status = c->status;
	mc->flow = c->conn_flow; /* c->flow is GS_NONE once its connection ended */
	mc->flow_gen = c->flow_gen;
	mc->priority = c->priority;
	mc->kind = c->kind;
	mc->outcome = c->outcome;
	mc->reply_type = c->reply_type;
	mc->minor = c->minor;
	mc->completion = c->completion;
	mc->dir = c->dir;
}

void gs_merge_add(struct gs_merge *m, int side, const struct gs_engine *e, const struct gs_call *c)
{
	size_t n = 0, xn = 0;
	const char *op = gs_intern_get(gs_engine_strings(e), c->op, &n);
	const char *exc = gs_intern_get(gs_engine_strings(e), c->exception, &xn);
	add(m, side, op, n, exc, xn, c);
}

void gs_merge_add_named(struct gs_merge *m, int side, const char *op, const struct gs_call *c)
{
	add(m, side, op ? op : "", op ? strlen(op) : 0, "", 0, c);
}

/* ---- helpers ------------------------------------------------------------------ */

static bool answered(const struct gs_mcall *c)
{
	return (c->flags & GS_CF_REP_SEEN) && c->outcome == GS_OUT_REPLY;
}

static bool sig_eq(const struct gs_mcall *a, const struct gs_mcall *b)
{
	return a->request_id == b->request_id && a->kind == b->kind && a->op == b->op &&
	       a->request_bytes == b->request_bytes && (a->flags & GS_CF_ONEWAY) == (b->flags & GS_CF_ONEWAY);
}

static uint64_t sig_hash(const struct gs_mcall *c)
{
	uint64_t h = 1469598103934665603ull;
	uint64_t parts[4] = { c->request_id, ((uint64_t)c->kind << 1) | ((c->flags & GS_CF_ONEWAY) ? 1 : 0),
			      c->op, c->request_bytes };
	for (int i = 0; i < 4; i++)
		for (int b = 0; b < 8; b++)
			h = (h ^ ((parts[i] >> (8 * b)) & 0xff)) * 1099511628211ull;
	return h;
}

/* The interval of offsets a pair allows by causality (no slack; lo > hi: the
 * pair contradicts it); false without both replies.  A byte reaches the far
 * tap after the near one saw it leave: the request's first byte (client to
 * server) bounds theta from above, the reply's first byte from below.  The
 * last bytes' instants are when each tap had seen the whole message: the far
 * tap cannot complete it before the near one did, provided both saw all of it
 * and neither capture missed a transmission (it would see a byte only when
 * resent, late); they then bound theta too, and tighter when a link stretches
 * a large message between the taps. */
static bool interval(const struct gs_mcall *c, const struct gs_mcall *s, int64_t *lo, int64_t *hi)
{
	bool clean;
	if (!answered(c) || !answered(s))
		return false;
	clean = !((c->flags | s->flags) & GS_CF_CAPTURE_LOSS);
	*hi = s->t_request_first - c->t_request_first;
	*lo = s->t_reply_first - c->t_reply_first;
	if (clean && (c->flags & s->flags & GS_CF_REQ_DONE) && s->t_request_last - c->t_request_last < *hi)
		*hi = s->t_request_last - c->t_request_last;
	if (clean && (c->flags & s->flags & GS_CF_REP_DONE) && s->t_reply_last - c->t_reply_last > *lo)
		*lo = s->t_reply_last - c->t_reply_last;
	return true;
}

static int64_t model_at(const struct model *md, int64_t t)
{
	return md->theta0 + (int64_t)(md->drift * (double)(t - md->tref));
}

static int64_t abs64(int64_t v)
{
	return v < 0 ? -v : v;
}

void gs_merge_figures(const struct gs_mcall *c, const struct gs_mcall *s, struct gs_merge_figures *f)
{
	int64_t lo, hi;
	memset(f, 0, sizeof *f);
	if (!c || !s || !interval(c, s, &lo, &hi))
		return;
	f->known = true;
	f->server_total_ns = s->t_reply_last - s->t_request_first;
	f->server_server_ns = s->t_reply_first - s->t_request_last;
	f->network_ns = (c->t_reply_last - c->t_request_first) - f->server_total_ns;
	f->offset_lo_ns = lo;
	f->offset_hi_ns = hi;
}

void gs_merge_call_figures(const struct gs_merge *m, uint32_t i, struct gs_merge_figures *f)
{
	uint32_t j = gs_merge_match(m, i);
	const struct gs_mcall *c = gs_merge_get(m, GS_MERGE_CLIENT, i);
	gs_merge_figures(c, j == GS_MERGE_NONE ? NULL : gs_merge_get(m, GS_MERGE_SERVER, j), f);
	if (!f->known || !m->est_known)
		return;
	/* the common estimate, at this call's time; where the call forbids it,
	 * the nearest value it allows (none when its own bounds cross) */
	f->offset_known = true;
	f->offset_ns = m->est_ns + (int64_t)(m->est_drift * (double)(c->t_request_first - m->est_tref));
	if (f->offset_lo_ns <= f->offset_hi_ns) {
		if (f->offset_ns < f->offset_lo_ns)
			f->offset_ns = f->offset_lo_ns;
		if (f->offset_ns > f->offset_hi_ns)
			f->offset_ns = f->offset_hi_ns;
	}
}

/* ---- streams and indexes ------------------------------------------------------ */

static int cmp_stream_key(const void *a, const void *b, void *arg)
{
	const struct gs_mcall *v = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	const struct gs_mcall *x = &v[i], *y = &v[j];
	if (x->flow != y->flow)
		return x->flow < y->flow ? -1 : 1;
	if (x->flow_gen != y->flow_gen)
		return x->flow_gen < y->flow_gen ? -1 : 1;
	if (x->dir != y->dir)
		return x->dir < y->dir ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int cmp_rid(const void *a, const void *b, void *arg)
{
	const struct gs_mcall *v = arg;
	uint32_t i = *(const uint32_t *)a, j = *(const uint32_t *)b;
	if (v[i].request_id != v[j].request_id)
		return v[i].request_id < v[j].request_id ? -1 : 1;
	return i < j ? -1 : i > j;
}

static int cmp_sig(const void *a, const void *b)
{
	const struct sigent *x = a, *y = b;
	if (x->h != y->h)
		return x->h < y->h ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static int build_streams(struct side *s)
{
	uint32_t k;
	s->order = malloc(((size_t)s->n + 1) * sizeof *s->order);
	s->st = malloc(((size_t)s->n + 1) * sizeof *s->st);
	if (!s->order || !s->st)
		return ENOMEM;
	for (uint32_t i = 0; i < s->n; i++)
		s->order[i] = i;
	qsort_r(s->order, s->n, sizeof *s->order, cmp_stream_key, s->v);
	s->nst = 0;
	for (k = 0; k < s->n; k++) {
		const struct gs_mcall *c = &s->v[s->order[k]];
		const struct gs_mcall *p = k ? &s->v[s->order[k - 1]] : NULL;
		if (!p || p->flow != c->flow || p->flow_gen != c->flow_gen || p->dir != c->dir) {
			s->st[s->nst].first = k;
			s->st[s->nst].n = 0;
			s->st[s->nst].match = GS_MERGE_NONE;
			s->nst++;
		}
		s->st[s->nst - 1].n++;
		s->v[s->order[k]].stream = s->nst - 1;
	}
	return 0;
}

static int build_server_index(struct side *s)
{
	s->byrid = malloc(((size_t)s->n + 1) * sizeof *s->byrid);
	s->sig = malloc(((size_t)s->n + 1) * sizeof *s->sig);
	if (!s->byrid || !s->sig)
		return ENOMEM;
	memcpy(s->byrid, s->order, (size_t)s->n * sizeof *s->byrid);
	for (uint32_t i = 0; i < s->nst; i++)
		qsort_r(s->byrid + s->st[i].first, s->st[i].n, sizeof *s->byrid, cmp_rid, s->v);
	for (uint32_t i = 0; i < s->n; i++) {
		s->sig[i].h = sig_hash(&s->v[i]);
		s->sig[i].t = s->v[i].t_request_first;
		s->sig[i].idx = i;
	}
	qsort(s->sig, s->n, sizeof *s->sig, cmp_sig);
	return 0;
}

/* The server calls with signature hash h: sig[*a .. *b). */
static void sig_run(const struct side *s, uint64_t h, uint32_t *a, uint32_t *b)
{
	uint32_t lo = 0, hi = s->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->sig[mid].h < h)
			lo = mid + 1;
		else
			hi = mid;
	}
	*a = lo;
	hi = s->n;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->sig[mid].h <= h)
			lo = mid + 1;
		else
			hi = mid;
	}
	*b = lo;
}

/* The server call of stream ss twin to client call c: same signature; the
 * one nearest the model when several; unused ones only if asked. */
static uint32_t twin(const struct gs_merge *m, const struct gs_mcall *c, uint32_t ss, const struct model *md,
		     bool unused_only)
{
	const struct side *s = &m->s[1];
	const struct mstream *st = &s->st[ss];
	uint32_t lo = st->first, hi = st->first + st->n, best = GS_MERGE_NONE;
	int64_t best_d = INT64_MAX;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (s->v[s->byrid[mid]].request_id < c->request_id)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (uint32_t k = lo; k < st->first + st->n && s->v[s->byrid[k]].request_id == c->request_id; k++) {
		uint32_t j = s->byrid[k];
		int64_t l, h, d = 0;
		if (!sig_eq(c, &s->v[j]) || (unused_only && m->used[j]))
			continue;
		if (md && md->known && interval(c, &s->v[j], &l, &h))
			d = abs64(l + (h - l) / 2 - model_at(md, c->t_request_first));
		if (best == GS_MERGE_NONE || d < best_d) {
			best = j;
			best_d = d;
		}
		if (!md || !md->known)
			break; /* request ids reused in one stream are rare: the first will do */
	}
	return best;
}

/* The k-th of cnt calls sampled from n: one from each of cnt equal slots, at
 * a place within the slot that varies with k, so that a periodic workload
 * (every fifth call a big one) does not alias with the sampling. */
static uint32_t sample_at(uint32_t k, uint32_t cnt, uint32_t n)
{
	uint64_t a = (uint64_t)k * n / cnt, b = (uint64_t)(k + 1) * n / cnt;
	uint32_t h = (k + 1) * 2654435761u;
	h ^= h >> 15;
	return (uint32_t)(b > a ? a + h % (b - a) : a);
}

/* The votes of one call for the offset: its interval, where the offset must
 * be, and its midpoint (+- the slack), where it is when both directions take
 * as long (NTP's estimate).  Right pairs pile their midpoints up at one
 * point, while the intervals of wrong pairs overlapping the right ones' would
 * pull the deepest point off centre.  Each vote weighs the inverse of the
 * interval's width: a narrow interval (small messages, a quick path) pins the
 * offset down, a wide one (a reply slowed on its way) hardly does, and its
 * midpoint is off by half the difference between the two directions. */
#define VOTE_MASS 1000000000000LL
static uint32_t push_votes(struct ival *iv, uint32_t n, int64_t lo, int64_t hi, int64_t slack)
{
	int64_t mid = lo + (hi - lo) / 2, width = hi - lo, w;
	if (width < 2 * slack)
		width = 2 * slack;
	if (width < 1000)
		width = 1000;
	w = VOTE_MASS / width;
	iv[n++] = (struct ival){ lo - slack, w };
	iv[n++] = (struct ival){ hi + slack, -w };
	iv[n++] = (struct ival){ mid - slack, w };
	iv[n++] = (struct ival){ mid + slack, -w };
	return n;
}

/* Compares up to `want` calls of client stream cs with server stream ss; the
 * intervals (widened by the strict slack) go to iv when given. */
static void eval(const struct gs_merge *m, uint32_t cs, uint32_t ss, uint32_t want, const struct model *md,
		 struct ival *iv, uint32_t *niv, const struct model *skew, struct cand *out)
{
	const struct side *c = &m->s[0];
	const struct mstream *st = &c->st[cs];
	uint32_t cnt = st->n < want ? st->n : want;
	int64_t tol = m->cfg.tolerance_ns, strict = m->strict;
	__int128 dev = 0;
	memset(out, 0, sizeof *out);
	out->cs = cs;
	out->ss = ss;
	const struct side *sv = &m->s[1];
	int64_t s0 = sv->v[sv->order[sv->st[ss].first]].t_request_first;
	int64_t s1 = sv->v[sv->order[sv->st[ss].first + sv->st[ss].n - 1]].t_request_first;
	for (uint32_t k = 0; k < cnt; k++) {
		const struct gs_mcall *cc = &c->v[c->order[st->first + sample_at(k, cnt, st->n)]];
		uint32_t j = twin(m, cc, ss, md, false);
		int64_t lo, hi;
		bool in = false;
		out->sampled++;
		if (md && md->known) {
			/* where the server's clock puts this call: within the stream's time? */
			int64_t t = cc->t_request_first + model_at(md, cc->t_request_first);
			in = t >= s0 - tol && t <= s1 + tol;
			out->inside += in;
		}
		if (j == GS_MERGE_NONE)
			continue;
		out->matched++;
		out->inside_matched += in;
		if (!interval(cc, &m->s[1].v[j], &lo, &hi))
			continue;
		out->nint++;
		if (iv && lo - strict <= hi + strict) {
			/* with a drift known, votes for the offset at tref */
			int64_t d = skew ? model_at(skew, cc->t_request_first) - skew->theta0 : 0;
			*niv = push_votes(iv, *niv, lo - d, hi - d, strict);
		}
		if (md && md->known) {
			int64_t th = model_at(md, cc->t_request_first);
			if (lo - strict <= th && th <= hi + strict)
				out->strict++;
			if (lo - tol <= th && th <= hi + tol)
				out->consistent++;
			dev += abs64(lo + (hi - lo) / 2 - th);
		}
	}
	out->dev = out->nint ? (int64_t)(dev / out->nint) : INT64_MAX / 4;
}

static int cmp_ival(const void *a, const void *b)
{
	const struct ival *x = a, *y = b;
	if (x->x != y->x)
		return x->x < y->x ? -1 : 1;
	/* starts before ends: touching intervals overlap */
	return x->d > y->d ? -1 : x->d < y->d;
}

/* The point most votes hold: the middle of the first deepest stretch; the
 * depth there in *depth_out (may be NULL). */
static bool sweep(struct ival *iv, uint32_t n, int64_t *theta, int64_t *depth_out)
{
	int64_t depth = 0, best = 0;
	qsort(iv, n, sizeof *iv, cmp_ival);
	for (uint32_t i = 0; i + 1 < n; i++) {
		depth += iv[i].d;
		if (iv[i].d > 0 && depth > best) {
			best = depth;
			*theta = iv[i].x + (iv[i + 1].x - iv[i].x) / 2;
		}
	}
	if (depth_out)
		*depth_out = best;
	return best > 0;
}

/* Candidate server streams of client stream cs: server calls with the
 * signature of some of its calls, near the time the model expects (or the
 * first ones of the run without a model). */
static uint32_t candidates(struct gs_merge *m, uint32_t cs, const struct model *md, uint32_t per_anchor,
			   uint32_t *out, uint32_t max)
{
	const struct side *c = &m->s[0], *s = &m->s[1];
	const struct mstream *st = &c->st[cs];
	uint32_t na = st->n < ANCHORS ? st->n : ANCHORS, n = 0;
	m->stamp_no++;
	for (uint32_t k = 0; k < na; k++) {
		const struct gs_mcall *a = &c->v[c->order[st->first + sample_at(k, na, st->n)]];
		uint32_t r0, r1, from, to;
		sig_run(s, sig_hash(a), &r0, &r1);
		from = r0;
		to = r1 - r0 > per_anchor ? r0 + per_anchor : r1;
		if (md && md->known && r1 - r0 > per_anchor) {
			/* the run is sorted by time: start near where the model puts the call */
			int64_t want = a->t_request_first + model_at(md, a->t_request_first);
			uint32_t lo = r0, hi = r1;
			while (lo < hi) {
				uint32_t mid = lo + (hi - lo) / 2;
				if (s->sig[mid].t < want)
					lo = mid + 1;
				else
					hi = mid;
			}
			from = lo > r0 + per_anchor / 2 ? lo - per_anchor / 2 : r0;
			to = from + per_anchor < r1 ? from + per_anchor : r1;
		}
		for (uint32_t i = from; i < to && n < max; i++) {
			const struct gs_mcall *sc = &s->v[s->sig[i].idx];
			if (!sig_eq(a, sc) || m->stamp[sc->stream] == m->stamp_no)
				continue;
			m->stamp[sc->stream] = m->stamp_no;
			out[n++] = sc->stream;
		}
	}
	return n;
}

/* ---- the phases ------------------------------------------------------------------ */

/* A: the offset most candidate pairs of a sample of client streams agree on
 * (at skew->tref, along skew's drift, when given). */
static int common_offset(struct gs_merge *m, const struct model *skew, struct model *md)
{
	const struct side *c = &m->s[0];
	uint32_t ns = c->nst < PHASE_A_STREAMS ? c->nst : PHASE_A_STREAMS;
	/* grown as needed, up to 4M interval ends (64 MiB) */
	size_t cap = 4096, max = 4u << 20;
	struct ival *iv = malloc(cap * sizeof *iv);
	uint32_t *list = malloc((size_t)ANCHORS * PHASE_A_RUN * sizeof *list), niv = 0;
	int64_t theta = 0;
	memset(md, 0, sizeof *md);
	if (!iv || !list) {
		free(iv);
		free(list);
		return ENOMEM;
	}
	for (uint32_t k = 0; k < ns; k++) {
		uint32_t cs = (uint32_t)((uint64_t)k * c->nst / ns);
		uint32_t n = candidates(m, cs, NULL, PHASE_A_RUN, list, ANCHORS * PHASE_A_RUN);
		for (uint32_t i = 0; i < n; i++) {
			struct cand cd;
			if (niv + 4 * PHASE_A_SAMPLE > cap) {
				struct ival *nv;
				if (cap * 2 > max)
					break;
				if (!(nv = realloc(iv, cap * 2 * sizeof *iv)))
					break;
				iv = nv;
				cap *= 2;
			}
			eval(m, cs, list[i], PHASE_A_SAMPLE, NULL, iv, &niv, skew, &cd);
		}
	}
	if (sweep(iv, niv, &theta, NULL)) {
		md->known = true;
		md->theta0 = theta;
		if (skew) {
			md->drift = skew->drift;
			md->tref = skew->tref;
		}
	}
	free(iv);
	free(list);
	return 0;
}

static int cmp_cand(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;
	/* calls that fit the offset exactly, then within the tolerance, then
	 * calls found at all, then the closest midpoints */
	if (x->strict != y->strict)
		return x->strict > y->strict ? -1 : 1;
	if (x->consistent != y->consistent)
		return x->consistent > y->consistent ? -1 : 1;
	if (x->matched != y->matched)
		return x->matched > y->matched ? -1 : 1;
	if (x->dev != y->dev)
		return x->dev < y->dev ? -1 : 1;
	if (x->cs != y->cs)
		return x->cs < y->cs ? -1 : 1;
	return x->ss < y->ss ? -1 : x->ss > y->ss;
}

/* B: every client stream's best candidate, each server stream used once. */
static int match_streams(struct gs_merge *m, const struct model *md, bool final)
{
	struct side *c = &m->s[0], *s = &m->s[1];
	size_t ncand = 0, cap = 1024;
	struct cand *cv = malloc(cap * sizeof *cv);
	uint32_t list[ANCHORS * 2 * NEAREST];
	if (!cv)
		return ENOMEM;
	for (uint32_t i = 0; i < c->nst; i++)
		c->st[i].match = GS_MERGE_NONE;
	for (uint32_t i = 0; i < s->nst; i++)
		s->st[i].match = GS_MERGE_NONE;
	for (uint32_t cs = 0; cs < c->nst; cs++) {
		uint32_t n = candidates(m, cs, md, 2 * NEAREST, list, ANCHORS * 2 * NEAREST);
		for (uint32_t i = 0; i < n; i++) {
			struct cand cd;
			eval(m, cs, list[i], SAMPLE, md, NULL, NULL, NULL, &cd);
			if (!cd.matched)
				continue;
			if (ncand == cap) {
				struct cand *nv = realloc(cv, cap * 2 * sizeof *cv);
				if (!nv) {
					free(cv);
					return ENOMEM;
				}
				cv = nv;
				cap *= 2;
			}
			cv[ncand++] = cd;
		}
	}
	qsort(cv, ncand, sizeof *cv, cmp_cand);
	for (size_t i = 0; i < ncand; i++) {
		const struct cand *cd = &cv[i];
		if (c->st[cd->cs].match != GS_MERGE_NONE || s->st[cd->ss].match != GS_MERGE_NONE)
			continue;
		/* with replies to judge by, a good part of them must fit the offset:
		 * a quarter at first (before the drift is known, the far ends of a
		 * capture miss), most in the last pass (two unrelated captures of one
		 * program share sequences and an offset fits a few of their calls) */
		if (md->known && cd->nint && (final ? 2 * cd->consistent <= cd->nint : 4 * cd->consistent < cd->nint))
			continue;
		/* no offset fits any pair, yet this one has replies: it does not fit */
		if (!md->known && cd->nint)
			continue;
		/* no replies at all (oneways): only the signatures, most must agree */
		if (!cd->nint && 2 * cd->matched < cd->sampled)
			continue;
		/* and while both streams run, the calls of one are in the other (three
		 * in four at the end, for capture loss): the same program's calls in
		 * an unrelated capture coincide only now and then */
		if (md->known && (final ? 4 * cd->inside_matched < 3 * cd->inside : 2 * cd->inside_matched < cd->inside))
			continue;
		c->st[cd->cs].match = cd->ss;
		s->st[cd->ss].match = cd->cs;
	}
	free(cv);
	return 0;
}

/* C: calls by request id within the matched streams. */
static void match_calls(struct gs_merge *m, const struct model *md)
{
	struct side *c = &m->s[0], *s = &m->s[1];
	for (uint32_t i = 0; i < c->n; i++)
		m->match[i] = GS_MERGE_NONE;
	memset(m->used, 0, s->n ? s->n : 1);
	for (uint32_t cs = 0; cs < c->nst; cs++) {
		const struct mstream *st = &c->st[cs];
		if (st->match == GS_MERGE_NONE)
			continue;
		for (uint32_t k = 0; k < st->n; k++) {
			uint32_t ci = c->order[st->first + k];
			uint32_t j = twin(m, &c->v[ci], st->match, md, true);
			if (j == GS_MERGE_NONE)
				continue;
			m->match[ci] = j;
			m->used[j] = 1;
		}
	}
}

/* Whether one constant offset lies in every matched call's interval: then a
 * slope the slices' votes suggest (calls slowed more at one end of the capture
 * than at the other widen one bound) is not a drift the calls need. */
static bool one_offset_fits(const struct gs_merge *m)
{
	const struct side *c = &m->s[0], *s = &m->s[1];
	int64_t lo_max = INT64_MIN, hi_min = INT64_MAX;
	bool any = false;
	for (uint32_t i = 0; i < c->n; i++) {
		int64_t lo, hi;
		if (m->match[i] == GS_MERGE_NONE || !interval(&c->v[i], &s->v[m->match[i]], &lo, &hi))
			continue;
		any = true;
		if (lo > lo_max)
			lo_max = lo;
		if (hi < hi_min)
			hi_min = hi;
	}
	return any && lo_max <= hi_min;
}

/* The offset's drift.  Midpoints are biased when the two directions differ
 * (a slow reply pulls them down), so each time slice of the matched calls
 * gives the offset its votes agree on (a sweep, as above), and a line weighted
 * by the slices' support goes through those. */
static bool fit_drift(const struct gs_merge *m, struct model *out, int64_t *span, int64_t *noise)
{
	const struct side *c = &m->s[0], *s = &m->s[1];
	uint32_t n = 0, per, k, ns = 0;
	uint32_t *idx = malloc(((size_t)c->n + 1) * sizeof *idx);
	struct ival *iv = NULL;
	double tx[SLICES], ty[SLICES], tw[SLICES], sw = 0, mt = 0, my = 0, cov = 0, var = 0, wmax = 0;
	int64_t t0 = 0;
	bool ok = false;
	if (!idx)
		return false;
	for (uint32_t i = 0; i < c->n; i++) {
		int64_t lo, hi;
		if (m->match[i] != GS_MERGE_NONE && interval(&c->v[i], &s->v[m->match[i]], &lo, &hi))
			idx[n++] = i; /* client calls are in capture order */
	}
	if (n < 2 * SLICES || !(iv = malloc((size_t)n * 4 * sizeof *iv)))
		goto out;
	t0 = c->v[idx[0]].t_request_first;
	*span = c->v[idx[n - 1]].t_request_first - t0;
	per = n / SLICES;
	for (k = 0; k < SLICES; k++) {
		uint32_t a = k * per, b = k == SLICES - 1 ? n : a + per, niv = 0;
		int64_t theta, depth;
		for (uint32_t i = a; i < b; i++) {
			int64_t lo, hi;
			interval(&c->v[idx[i]], &s->v[m->match[idx[i]]], &lo, &hi);
			if (lo - m->strict > hi + m->strict)
				continue;
			niv = push_votes(iv, niv, lo, hi, m->strict);
		}
		if (!sweep(iv, niv, &theta, &depth))
			continue;
		/* a slice of wide intervals says little: it weighs what its votes weigh */
		tx[ns] = (double)(c->v[idx[a + (b - a) / 2]].t_request_first - t0);
		ty[ns] = (double)theta;
		tw[ns] = (double)depth;
		if (tw[ns] > wmax)
			wmax = tw[ns];
		ns++;
	}
	/* slices of wide intervals only (a slowed reply) say little and would
	 * pull the line towards their biased midpoints: left out */
	{
		uint32_t kept = 0;
		for (k = 0; k < ns; k++)
			if (tw[k] >= wmax / 10) {
				tx[kept] = tx[k];
				ty[kept] = ty[k];
				tw[kept] = tw[k];
				kept++;
			}
		ns = kept;
	}
	if (ns < 2)
		goto out;
	for (k = 0; k < ns; k++) {
		sw += tw[k];
		mt += tw[k] * tx[k];
		my += tw[k] * ty[k];
	}
	mt /= sw;
	my /= sw;
	for (k = 0; k < ns; k++) {
		cov += tw[k] * (tx[k] - mt) * (ty[k] - my);
		var += tw[k] * (tx[k] - mt) * (tx[k] - mt);
	}
	if (var <= 0)
		goto out;
	out->known = true;
	out->drift = cov / var;
	out->tref = t0 + (int64_t)mt;
	out->theta0 = (int64_t)my;
	/* how far the slices stray from the line */
	*noise = 0;
	for (k = 0; k < ns; k++) {
		int64_t r = abs64((int64_t)(ty[k] - my - out->drift * (tx[k] - mt)));
		if (r > *noise)
			*noise = r;
	}
	ok = true;
out:
	free(iv);
	free(idx);
	return ok;
}

/* The stretch held by the most closed intervals (unit votes; touching ones
 * overlap): the first such when several; its depth in *depth. */
static bool deepest(struct ival *iv, uint32_t n, int64_t *lo, int64_t *hi, uint64_t *depth)
{
	int64_t d = 0, best = 0;
	qsort(iv, n, sizeof *iv, cmp_ival);
	for (uint32_t i = 0; i + 1 < n; i++) {
		d += iv[i].d;
		if (iv[i].d > 0 && d > best) {
			best = d;
			*lo = iv[i].x;
			*hi = iv[i + 1].x;
		}
	}
	*depth = (uint64_t)best;
	return best > 0;
}

/* The offset from the calls' bounds (see merge_match.h): the intersection of
 * every call's interval, else the stretch most of them hold; along md's drift
 * when the matching was redone along it. */
static int estimate(struct gs_merge *m, const struct model *md, bool along, struct gs_merge_result *r)
{
	const struct side *c = &m->s[0], *s = &m->s[1];
	struct ival *iv = malloc(((size_t)r->offset_n + 1) * 2 * sizeof *iv);
	uint32_t niv = 0;
	int64_t tref = 0;
	double drift = along ? md->drift : 0;
	bool first = true;
	if (!iv)
		return ENOMEM;
	for (uint32_t i = 0; i < c->n; i++) {
		int64_t lo, hi, d;
		if (m->match[i] == GS_MERGE_NONE || !interval(&c->v[i], &s->v[m->match[i]], &lo, &hi))
			continue;
		if (first) {
			tref = along ? md->tref : c->v[i].t_request_first;
			first = false;
		}
		if (lo > hi)
			continue; /* no offset satisfies this call: it violates any estimate */
		d = (int64_t)(drift * (double)(c->v[i].t_request_first - tref));
		iv[niv++] = (struct ival){ lo - d, 1 };
		iv[niv++] = (struct ival){ hi - d, -1 };
	}
	if (deepest(iv, niv, &r->offset_lo_ns, &r->offset_hi_ns, &r->offset_agree)) {
		r->offset_known = true;
		r->offset_ns = r->offset_lo_ns + (r->offset_hi_ns - r->offset_lo_ns) / 2;
		r->offset_all = r->offset_agree == r->offset_n;
		r->offset_tref = tref;
		r->offset_drift = drift;
		m->est_known = true;
		m->est_ns = r->offset_ns;
		m->est_tref = tref;
		m->est_drift = drift;
	}
	r->offset_violating = r->offset_n - r->offset_agree;
	free(iv);
	return 0;
}

static int summarise(struct gs_merge *m, const struct model *md, struct gs_merge_result *r)
{
	const struct side *c = &m->s[0], *s = &m->s[1];
	uint64_t n = 0, same = 0;
	struct gs_merge_figures f;
	int err;
	for (uint32_t i = 0; i < c->n; i++) {
		const struct gs_mcall *sc;
		if (m->match[i] == GS_MERGE_NONE) {
			r->unmatched[0]++;
			continue;
		}
		r->matched++;
		sc = &s->v[m->match[i]];
		if (c->v[i].t_request_first == sc->t_request_first && c->v[i].t_request_last == sc->t_request_last &&
		    c->v[i].t_reply_first == sc->t_reply_first && c->v[i].t_reply_last == sc->t_reply_last)
			same++;
		gs_merge_figures(&c->v[i], sc, &f);
		if (!f.known)
			continue;
		n++;
		if (f.network_ns < 0)
			r->negative_network++;
	}
	r->unmatched[1] = s->n - r->matched;
	r->offset_n = n;
	/* the same capture twice: every call of each side has a twin at the very
	 * same instants */
	r->same_capture = c->n && c->n == s->n && same == c->n && c->dropped == s->dropped;
	r->looks_swapped = n && r->negative_network * 2 > n;
	for (uint32_t i = 0; i < c->nst; i++)
		if (c->st[i].match != GS_MERGE_NONE)
			r->streams_matched++;
	if ((err = estimate(m, md, r->drift_corrected, r)) != 0)
		return err;
	/* one constant offset fits every call: a slope the slices' votes
	 * suggest (biased by calls slowed one way) is not measured */
	if (r->offset_all && r->drift_known && !r->drift_corrected) {
		r->drift_known = false;
		r->drift_ppm = 0;
	}
	return 0;
}

/* The offset the matched pairs agree on (along `md`'s drift): once most
 * pairs are right, their votes pin the offset down better than those of
 * every candidate. */
static int refine(const struct gs_merge *m, const struct model *md, struct model *out)
{
	const struct side *c = &m->s[0], *s = &m->s[1];
	uint32_t n = 0, niv = 0, step;
	struct ival *iv;
	int64_t theta;
	*out = *md;
	for (uint32_t i = 0; i < c->n; i++)
		if (m->match[i] != GS_MERGE_NONE)
			n++;
	if (!n)
		return 0;
	/* at most 1M calls vote */
	step = n > (1u << 20) ? n / (1u << 20) + 1 : 1;
	iv = malloc(((size_t)n / step + 1) * 4 * sizeof *iv);
	if (!iv)
		return ENOMEM;
	for (uint32_t i = 0, k = 0; i < c->n; i++) {
		int64_t lo, hi, d;
		if (m->match[i] == GS_MERGE_NONE || k++ % step)
			continue;
		if (!interval(&c->v[i], &s->v[m->match[i]], &lo, &hi) || lo - m->strict > hi + m->strict)
			continue;
		d = md->known ? model_at(md, c->v[i].t_request_first) - md->theta0 : 0;
		niv = push_votes(iv, niv, lo - d, hi - d, m->strict);
	}
	if (sweep(iv, niv, &theta, NULL)) {
		out->known = true;
		out->theta0 = theta;
	}
	free(iv);
	return 0;
}

int gs_merge_run(struct gs_merge *m, struct gs_merge_result *r)
{
	struct side *c = &m->s[0], *s = &m->s[1];
	struct model md, fit;
	int64_t span = 0, noise = 0;
	int err;

	memset(r, 0, sizeof *r);
	if (m->match)
		return EALREADY; /* once per merge */
	if ((err = build_streams(c)) != 0 || (err = build_streams(s)) != 0 || (err = build_server_index(s)) != 0)
		return err;
	m->match = malloc(((size_t)c->n + 1) * sizeof *m->match);
	m->used = malloc((size_t)s->n + 1);
	m->stamp = calloc((size_t)s->nst + 1, sizeof *m->stamp);
	if (!m->match || !m->used || !m->stamp)
		return ENOMEM;
	r->streams[0] = c->nst;
	r->streams[1] = s->nst;
	r->calls[0] = c->n;
	r->calls[1] = s->n;
	r->dropped[0] = c->dropped;
	r->dropped[1] = s->dropped;

	if ((err = common_offset(m, NULL, &md)) != 0 || (err = match_streams(m, &md, false)) != 0)
		return err;
	match_calls(m, &md);
	/* clocks that drift apart over the capture: the slope from these matches
	 * (right even if some pairs are wrong: a wrong pair is off by a constant),
	 * then the common offset again along it.  Only when the drift over the
	 * capture clearly exceeds the fit's own noise. */
	memset(&fit, 0, sizeof fit);
	if (fit_drift(m, &fit, &span, &noise)) {
		double change = fit.drift * (double)span;
		if (change < 0)
			change = -change;
		/* real clocks drift by ppm; NTP slews at most 500 ppm */
		if (change > 4.0 * (double)noise && fit.drift < 1e-3 && fit.drift > -1e-3) {
			r->drift_known = true;
			r->drift_ppm = fit.drift * 1e6;
		}
		if (r->drift_known && change > 2.0 * (double)m->strict && !one_offset_fits(m)) {
			struct model md2;
			if ((err = common_offset(m, &fit, &md2)) != 0)
				return err;
			if (md2.known) {
				md = md2;
				if ((err = match_streams(m, &md, false)) != 0)
					return err;
				match_calls(m, &md);
				r->drift_corrected = true;
			}
		}
	}
	/* and once more with the offset the matched pairs give */
	{
		struct model md3;
		if ((err = refine(m, &md, &md3)) != 0)
			return err;
		if (!md3.known)
			md3 = md;
		if ((err = match_streams(m, &md3, true)) != 0)
			return err;
		match_calls(m, &md3);
		return summarise(m, &md3, r);
	}
}

/* ---- the order of the captures --------------------------------------------------- */

int gs_merge_check_order(const struct gs_merge *m, struct gs_merge_result *r)
{
	struct gs_merge *o;
	struct gs_merge_result other;
	int err;
	r->other_agree = 0;
	if (!m->match)
		return EINVAL; /* gs_merge_run first */
	if (r->same_capture) {
		r->looks_swapped = false;
		return 0;
	}
	/* most calls agree on one offset and take longer on the client side:
	 * this order is the right one (the other makes every call's interval
	 * empty: its request bound falls below its reply bound) */
	if (r->offset_n && 2 * r->offset_agree > r->offset_n && !r->looks_swapped)
		return 0;
	if ((err = gs_merge_new(&o, &m->cfg)) != 0)
		return err;
	for (int side = 0; side < 2; side++) {
		const struct side *sd = &m->s[side];
		for (uint32_t i = 0; i < sd->n; i++) {
			struct gs_mcall *mc = slot(o, !side);
			size_t n = 0, xn = 0;
			const char *op, *exc;
			if (!mc)
				continue;
			op = gs_intern_get(&m->strings, sd->v[i].op, &n);
			exc = gs_intern_get(&m->strings, sd->v[i].exception, &xn);
			*mc = sd->v[i];
			mc->op = gs_intern(&o->strings, op, n);
			mc->exception = mc->exception == GS_INTERN_EMPTY ? GS_INTERN_EMPTY : gs_intern(&o->strings, exc, xn);
		}
	}
	if ((err = gs_merge_run(o, &other)) == 0) {
		r->other_agree = other.offset_agree;
		/* that order fits clearly more calls (and most of its own) to one
		 * offset; or most of this order's network times are negative and
		 * none of that order's are */
		r->looks_swapped = (other.offset_agree > 2 * r->offset_agree && 2 * other.offset_agree > other.offset_n) ||
				   (r->looks_swapped && !other.looks_swapped);
	}
	gs_merge_free(o);
	return err;
}

/* ---- access ------------------------------------------------------------------------ */

uint32_t gs_merge_count(const struct gs_merge *m, int side)
{
	return m->s[side ? 1 : 0].n;
}

const struct gs_mcall *gs_merge_get(const struct gs_merge *m, int side, uint32_t i)
{
	const struct side *s = &m->s[side ? 1 : 0];
	return i < s->n ? &s->v[i] : NULL;
}

uint32_t gs_merge_match(const struct gs_merge *m, uint32_t i)
{
	return m->match && i < m->s[0].n ? m->match[i] : GS_MERGE_NONE;
}

const struct gs_intern *gs_merge_strings(const struct gs_merge *m)
{
	return &m->strings;
}

void gs_merge_to_call(const struct gs_mcall *mc, struct gs_call *c)
{
	memset(c, 0, sizeof *c);
	c->client = mc->client;
	c->server = mc->server;
	c->request_id = mc->request_id;
	c->major = 1;
	c->minor = mc->minor;
	c->kind = mc->kind;
	c->outcome = mc->outcome;
	c->reply_type = mc->reply_type;
	c->dir = mc->dir;
	c->completion = mc->completion;
	c->priority = mc->priority;
	c->flags = mc->flags;
	c->status = mc->status;
	c->op = mc->op;
	c->object_key = GS_INTERN_EMPTY;
	c->exception = mc->exception;
	c->minor_code = mc->minor_code;
	c->retransmits = mc->retransmits;
	c->gap_fills = mc->gap_fills;
	c->request_bytes = mc->request_bytes;
	c->reply_bytes = mc->reply_bytes;
	c->t_request_first = mc->t_request_first;
	c->t_request_last = mc->t_request_last;
	c->t_reply_first = mc->t_reply_first;
	c->t_reply_last = mc->t_reply_last;
	c->flow = mc->flow;
	c->conn_flow = mc->flow;
	c->flow_gen = mc->flow_gen;
}
