/* SPDX-License-Identifier: BSD-2-Clause */
/* Only the tracks are remembered: a connection table and a server table,
 * both fixed-size open addressing, and per connection the end time of the
 * last span of each lane (to keep the spans of a track nested, as the format
 * requires).  Events go straight to the stream. */
#include "sink_trace.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "endpoint.h"
#include "text_out.h"
#include "out_file.h"

struct tr_conn {
	struct gs_endpoint a, b;   /* canonical order: a <= b */
	uint32_t pid;
	uint32_t no;               /* 1-based connection number, 0: slot free */
};

struct tr_server {
	struct gs_endpoint ep;
	uint32_t pid;              /* 0: slot free */
};

/* A call drawn lately, for the flows between nested calls and their parents
 * (whichever of the two comes first). */
struct tr_recent {
	struct gs_endpoint client, server, pclient, pserver;
	uint32_t rid, prid;
	uint32_t pid, tid;
	int64_t start, end;
	bool used, has_parent, linked;
};

/* The ring slots (+ 1; 0: none) of the recent calls of one family, by the hash
 * of the parent's key: a parent is put under its own key, a nested call under its
 * parent's, so either finds the other in one bucket. */
#define TR_FAMILY_WAYS 16
struct tr_family {
	uint32_t slot[TR_FAMILY_WAYS];
	uint32_t next;             /* the way replaced next */
};

struct gs_trace {
	struct gs_trace_config cfg;
	FILE *f;
	bool own;                  /* f opened by us, as `out` */
	struct gs_out out;         /* gs_trace_open's file (under a temporary name until committed) */
	bool started;              /* origin known */
	int64_t origin;
	uint64_t calls;
	uint64_t written;          /* events of any kind, for the separators */
	struct gs_trace_info info;
	/* connections: conns[0 .. cmask] slots, lanes per connection number */
	struct tr_conn *conns;
	uint32_t cmask, nconns;
	uint32_t *lane_tid;        /* [(no) * max_lanes + lane], 0: not made yet */
	int64_t *lane_end;
	uint32_t next_tid;
	/* servers */
	struct tr_server *servers;
	uint32_t smask, nservers;
	bool other_pid_named;
	char *iobuf;
	/* nesting: the recent calls with nesting fields, a ring (made with the first),
	 * and where in it each family (a parent and its nested calls) is */
	struct tr_recent *recent;
	uint32_t recent_next;
	struct tr_family *family;
	uint64_t flows;            /* parent -> child links written */
	uint64_t flows_unlinked;   /* nested calls whose parent was not drawn near them */
};

void gs_trace_config_default(struct gs_trace_config *c)
{
	c->max_conns = 16384;
	c->max_servers = 1024;
	c->max_lanes = 32;
}

static uint32_t pow2_at_least(uint64_t n)
{
	uint32_t p = 16;
	while (p < n && p < (1u << 30))
		p <<= 1;
	return p;
}

static int ep_cmp(const struct gs_endpoint *x, const struct gs_endpoint *y)
{
	int r = memcmp(x->addr, y->addr, 16);
	if (r)
		return r;
	if (x->port != y->port)
		return x->port < y->port ? -1 : 1;
	return (int)x->family - (int)y->family;
}

static uint32_t ep_hash(uint32_t h, const struct gs_endpoint *ep)
{
	/* FNV-1a over the fields (struct padding is not known to be zero) */
	for (int i = 0; i < 16; i++)
		h = (h ^ ep->addr[i]) * 16777619u;
	h = (h ^ (uint32_t)(ep->port & 0xff)) * 16777619u;
	h = (h ^ (uint32_t)(ep->port >> 8)) * 16777619u;
	h = (h ^ ep->family) * 16777619u;
	return h;
}

static int trace_init(struct gs_trace **out, FILE *f, bool own, const struct gs_trace_config *cfg)
{
	struct gs_trace *t = calloc(1, sizeof *t);
	struct gs_trace_config def;
	*out = NULL;
	if (!cfg) {
		gs_trace_config_default(&def);
		cfg = &def;
	}
	if (!t)
		return ENOMEM;
	if (cfg->max_conns < 1 || cfg->max_conns > (1u << 24) || cfg->max_servers < 1 ||
	    cfg->max_servers > (1u << 20) || cfg->max_lanes < 1 || cfg->max_lanes > 1024) {
		free(t);
		return EINVAL;
	}
	t->cfg = *cfg;
	t->f = f;
	t->own = own;
	t->cmask = pow2_at_least((uint64_t)cfg->max_conns * 2) - 1;
	t->smask = pow2_at_least((uint64_t)cfg->max_servers * 2) - 1;
	t->conns = calloc((size_t)t->cmask + 1, sizeof *t->conns);
	t->servers = calloc((size_t)t->smask + 1, sizeof *t->servers);
	/* connection numbers 1..max_conns, and max_conns + 1 for the shared track */
	t->lane_tid = calloc(((size_t)cfg->max_conns + 2) * cfg->max_lanes, sizeof *t->lane_tid);
	t->lane_end = calloc(((size_t)cfg->max_conns + 2) * cfg->max_lanes, sizeof *t->lane_end);
	if (own)
		t->iobuf = malloc(1 << 18);
	if (!t->conns || !t->servers || !t->lane_tid || !t->lane_end || (own && !t->iobuf)) {
		free(t->conns);
		free(t->servers);
		free(t->lane_tid);
		free(t->lane_end);
		free(t->iobuf);
		free(t);
		return ENOMEM;
	}
	if (own)
		setvbuf(f, t->iobuf, _IOFBF, 1 << 18);
	t->next_tid = 1;
	fputs("{\"traceEvents\":[\n", f);
	*out = t;
	return 0;
}

int gs_trace_open_stream(struct gs_trace **out, FILE *f, const struct gs_trace_config *cfg)
{
	return trace_init(out, f, false, cfg);
}

int gs_trace_open(struct gs_trace **out, const char *path, const struct gs_trace_config *cfg)
{
	struct gs_out o;
	int err;
	*out = NULL;
	if (strcmp(path, "-") == 0)
		return trace_init(out, stdout, false, cfg);
	if ((err = gs_out_create(&o, path, 0666)) != 0)
		return err;
	err = trace_init(out, o.f, true, cfg);
	if (err)
		gs_out_close(&o, false);
	else
		(*out)->out = o;
	return err;
}

int gs_trace_commit(struct gs_trace *t)
{
	return t && t->own ? gs_out_commit(&t->out) : 0;
}

/* ---- JSON pieces ----------------------------------------------------------- */

static void json_str(FILE *f, const char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	fputc('"', f);
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)s[i];
		if (ch == '"' || ch == '\\') {
			fputc('\\', f);
			fputc(ch, f);
		} else if (ch < 0x20 || ch >= 0x7f) {
			/* bytes from the wire are not known to be UTF-8 */
			fprintf(f, "\\u00%c%c", hex[ch >> 4], hex[ch & 15]);
		} else {
			fputc(ch, f);
		}
	}
	fputc('"', f);
}

/* ns as microseconds with 3 decimals: exact */
static void put_us(FILE *f, int64_t ns)
{
	uint64_t u;
	if (ns < 0) {
		fputc('-', f);
		u = (uint64_t)(-(ns + 1)) + 1;
	} else {
		u = (uint64_t)ns;
	}
	fprintf(f, "%llu.%03llu", (unsigned long long)(u / 1000), (unsigned long long)(u % 1000));
}

static void event_sep(struct gs_trace *t)
{
	if (t->written++)
		fputs(",\n", t->f);
}

static void meta(struct gs_trace *t, uint32_t pid, uint32_t tid, const char *what, const char *name,
		 size_t n)
{
	event_sep(t);
	fprintf(t->f, "{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"name\":", pid, tid, what);
	json_str(t->f, name, n);
	fputs("}}", t->f);
}

static void meta_sort(struct gs_trace *t, uint32_t pid, uint32_t tid, const char *what, uint64_t idx)
{
	event_sep(t);
	fprintf(t->f, "{\"ph\":\"M\",\"pid\":%u,\"tid\":%u,\"name\":\"%s\",\"args\":{\"sort_index\":%llu}}",
		pid, tid, what, (unsigned long long)idx);
}

/* ---- tracks ----------------------------------------------------------------- */

static uint32_t other_pid(struct gs_trace *t)
{
	uint32_t pid = t->cfg.max_servers + 1;
	if (!t->other_pid_named) {
		static const char name[] = "(other servers and connections)";
		t->other_pid_named = true;
		meta(t, pid, 0, "process_name", name, sizeof name - 1);
		meta_sort(t, pid, 0, "process_sort_index", pid);
	}
	return pid;
}

static uint32_t server_pid(struct gs_trace *t, const struct gs_endpoint *ep)
{
	uint32_t i = ep_hash(2166136261u, ep) & t->smask;
	for (; t->servers[i].pid; i = (i + 1) & t->smask)
		if (ep_cmp(&t->servers[i].ep, ep) == 0)
			return t->servers[i].pid;
	if (t->nservers >= t->cfg.max_servers) {
		t->info.servers_over_limit++;
		return other_pid(t);
	}
	{
		char text[GS_ENDPOINT_STRLEN + 8] = "server ";
		size_t n = 7 + gs_endpoint_str(ep, text + 7, sizeof text - 7);
		t->servers[i].ep = *ep;
		t->servers[i].pid = ++t->nservers;
		t->info.servers = t->nservers;
		meta(t, t->servers[i].pid, 0, "process_name", text, n);
		meta_sort(t, t->servers[i].pid, 0, "process_sort_index", t->servers[i].pid);
	}
	return t->servers[i].pid;
}

/* The connection of a call: its number (1-based; max_conns + 1 is the shared
 * track) and pid. */
static uint32_t conn_of(struct gs_trace *t, const struct gs_call *c, uint32_t *pid)
{
	const struct gs_endpoint *a = &c->client, *b = &c->server;
	uint32_t i;
	if (ep_cmp(a, b) > 0) {
		a = &c->server;
		b = &c->client;
	}
	i = ep_hash(ep_hash(2166136261u, a), b) & t->cmask;
	for (; t->conns[i].no; i = (i + 1) & t->cmask)
		if (ep_cmp(&t->conns[i].a, a) == 0 && ep_cmp(&t->conns[i].b, b) == 0) {
			*pid = t->conns[i].pid;
			return t->conns[i].no;
		}
	if (t->nconns >= t->cfg.max_conns) {
		t->info.conns_over_limit++;
		*pid = other_pid(t);
		return t->cfg.max_conns + 1;
	}
	t->conns[i].a = *a;
	t->conns[i].b = *b;
	/* the server of the connection's first call: bidirectional GIOP keeps it */
	t->conns[i].pid = server_pid(t, &c->server);
	t->conns[i].no = ++t->nconns;
	t->info.conns = t->nconns;
	*pid = t->conns[i].pid;
	return t->conns[i].no;
}

static void name_lane(struct gs_trace *t, uint32_t no, uint32_t lane, uint32_t pid, uint32_t tid,
		      const struct gs_call *c)
{
	char text[2 * GS_ENDPOINT_STRLEN + 32];
	size_t n;
	if (no > t->cfg.max_conns) {
		n = (size_t)snprintf(text, sizeof text, "(other connections)");
	} else {
		char cl[GS_ENDPOINT_STRLEN], sv[GS_ENDPOINT_STRLEN];
		gs_endpoint_str(&c->client, cl, sizeof cl);
		gs_endpoint_str(&c->server, sv, sizeof sv);
		n = (size_t)snprintf(text, sizeof text, "%s -> %s", cl, sv);
	}
	if (lane && n < sizeof text)
		n += (size_t)snprintf(text + n, sizeof text - n, " #%u", lane + 1);
	if (n >= sizeof text)
		n = sizeof text - 1;
	meta(t, pid, tid, "thread_name", text, n);
	/* lanes sort right below their connection */
	meta_sort(t, pid, tid, "thread_sort_index", (uint64_t)no * t->cfg.max_lanes + lane);
}

/* A track of the connection free at `start`, or 0 when all are busy. */
static uint32_t lane_for(struct gs_trace *t, uint32_t no, uint32_t pid, int64_t start, int64_t end,
			 bool instant, const struct gs_call *c)
{
	size_t base = (size_t)no * t->cfg.max_lanes;
	for (uint32_t l = 0; l < t->cfg.max_lanes; l++) {
		uint32_t *tid = &t->lane_tid[base + l];
		int64_t *lend = &t->lane_end[base + l];
		if (!*tid) {
			*tid = t->next_tid++;
			name_lane(t, no, l, pid, *tid, c);
			*lend = end;
			return *tid;
		}
		/* an instant may sit inside a span: the viewers nest it */
		if (instant || start >= *lend) {
			if (end > *lend)
				*lend = end;
			return *tid;
		}
	}
	return 0;
}

/* ---- nesting: flow arrows from a parent to each of its nested calls ---------- */

/* The calls remembered for the flows: a parent and its nested calls end close
 * together (the child inside the parent's server time), so a ring of the last
 * ones drawn holds both; one that is gone, or pushed out of its family's bucket
 * (more than TR_FAMILY_WAYS calls of a family, or of families hashed alike,
 * coming before the one that links them), leaves its child unlinked (counted). */
#define TR_RECENT 1024
#define TR_FAMILIES 1024

static bool same_ep(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	return ep_cmp(a, b) == 0;
}

static struct tr_family *family_of(struct gs_trace *t, const struct gs_endpoint *cl, const struct gs_endpoint *sv,
				   uint32_t rid)
{
	uint32_t h = ep_hash(ep_hash(2166136261u, cl), sv);
	h = (h ^ rid) * 16777619u;
	return &t->family[(h ^ (h >> 15)) % TR_FAMILIES];
}

static void family_put(struct tr_family *f, uint32_t slot)
{
	f->slot[f->next] = slot + 1;
	f->next = (f->next + 1) % TR_FAMILY_WAYS;
}

/* Chrome's flow events v1 (what Perfetto and chrome://tracing read alike, and
 * several from one slice, which the one bind_id of v2 cannot): "s" on the
 * parent's track at the child's start (inside the parent's span, so bound to
 * it), "f" with "bp":"e" inside the child's span (bound to the child). */
static void flow(struct gs_trace *t, const struct tr_recent *p, const struct tr_recent *c)
{
	int64_t s_ts = c->start, f_ts = c->start + (c->end - c->start) / 2;
	if (s_ts < p->start)
		s_ts = p->start;
	if (s_ts >= p->end && p->end > p->start)
		s_ts = p->end - 1;
	t->flows++;
	event_sep(t);
	fprintf(t->f, "{\"ph\":\"s\",\"cat\":\"nest\",\"name\":\"nested call\",\"id\":%llu,\"pid\":%u,\"tid\":%u,\"ts\":",
		(unsigned long long)t->flows, p->pid, p->tid);
	put_us(t->f, s_ts - t->origin);
	fputs("}", t->f);
	event_sep(t);
	fprintf(t->f, "{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"nest\",\"name\":\"nested call\",\"id\":%llu,\"pid\":%u,"
		"\"tid\":%u,\"ts\":", (unsigned long long)t->flows, c->pid, c->tid);
	put_us(t->f, f_ts - t->origin);
	fputs("}", t->f);
}

static void nest_flows(struct gs_trace *t, const struct gs_call *c, uint32_t pid, uint32_t tid, int64_t start,
		       int64_t end)
{
	struct tr_recent me, *slot;
	struct tr_family *pf = NULL, *own = NULL;
	if (!t->recent) {
		t->recent = calloc(TR_RECENT, sizeof *t->recent);
		t->family = calloc(TR_FAMILIES, sizeof *t->family);
		if (!t->recent || !t->family) {
			free(t->recent);
			free(t->family);
			t->recent = NULL;
			t->family = NULL;
			return;
		}
	}
	memset(&me, 0, sizeof me);
	me.client = c->client;
	me.server = c->server;
	me.rid = c->request_id;
	me.pclient = c->parent_client;
	me.pserver = c->parent_server;
	me.prid = c->parent_request_id;
	me.pid = pid;
	me.tid = tid;
	me.start = start;
	me.end = end;
	me.used = true;
	me.has_parent = c->parent_basis != GS_PARENT_NONE;
	if (me.has_parent) {
		/* its parent, drawn before it (start order) */
		pf = family_of(t, &me.pclient, &me.pserver, me.prid);
		for (uint32_t w = 0; w < TR_FAMILY_WAYS && !me.linked; w++) {
			const struct tr_recent *r = pf->slot[w] ? &t->recent[pf->slot[w] - 1] : NULL;
			if (r && r->used && r->rid == me.prid && same_ep(&r->client, &me.pclient) &&
			    same_ep(&r->server, &me.pserver)) {
				flow(t, r, &me);
				me.linked = true;
			}
		}
	}
	if (c->downstream_ns > 0) {
		/* its nested calls, drawn before it (end order: they ended first) */
		own = family_of(t, &me.client, &me.server, me.rid);
		for (uint32_t w = 0; w < TR_FAMILY_WAYS; w++) {
			struct tr_recent *r = own->slot[w] ? &t->recent[own->slot[w] - 1] : NULL;
			if (r && r->used && r->has_parent && !r->linked && r->prid == me.rid &&
			    same_ep(&r->pclient, &me.client) && same_ep(&r->pserver, &me.server)) {
				flow(t, &me, r);
				r->linked = true;
			}
		}
	}
	slot = &t->recent[t->recent_next];
	if (slot->used && slot->has_parent && !slot->linked)
		t->flows_unlinked++;
	*slot = me;
	if (pf)
		family_put(pf, t->recent_next);
	if (own && own != pf)
		family_put(own, t->recent_next);
	t->recent_next = (t->recent_next + 1) % TR_RECENT;
}

/* ---- events ------------------------------------------------------------------ */

static void add(struct gs_trace *t, const char *op, size_t oplen, int64_t first_ts, const struct gs_call *c)
{
	bool reply = (c->flags & GS_CF_REP_SEEN) && c->t_reply_last >= c->t_request_first;
	int64_t start = c->t_request_first;
	int64_t end = reply ? c->t_reply_last : c->t_request_last;
	bool instant;
	uint32_t pid, no, tid;

	if (end < start)
		end = start;
	instant = end == start;
	if (!t->started) {
		int64_t o = start;
		if (first_ts > 0 && first_ts < o)
			o = first_ts;
		/* a whole second: ts then reads as the time within that second */
		t->origin = o - o % 1000000000;
		t->info.origin_ns = t->origin;
		t->started = true;
	}
	t->calls++;
	if (start < t->origin)
		t->info.before_origin++;
	no = conn_of(t, c, &pid);
	tid = lane_for(t, no, pid, start, end, instant, c);
	if (!tid) {
		t->info.lanes_over_limit++;
		return;
	}
	if (c->kind == GS_KIND_LOCATE_REQUEST) {
		op = "(LocateRequest)";
		oplen = strlen(op);
	} else if (oplen > 256) {
		oplen = 256;
	}
	if (!op || oplen == 0) {
		op = "(unknown)";
		oplen = strlen(op);
	}
	event_sep(t);
	t->info.events++;
	fprintf(t->f, "{\"ph\":\"%s\",\"cat\":\"giop\",\"name\":", instant ? "i" : "X");
	json_str(t->f, op, oplen);
	fprintf(t->f, ",\"pid\":%u,\"tid\":%u,\"ts\":", pid, tid);
	put_us(t->f, start - t->origin);
	if (instant)
		fputs(",\"s\":\"t\"", t->f);
	else {
		fputs(",\"dur\":", t->f);
		put_us(t->f, end - start);
	}
	fprintf(t->f, ",\"args\":{\"request_id\":%u,\"status\":", c->request_id);
	/* the status names of the pairs CSV */
	json_str(t->f, gs_call_status(c), strlen(gs_call_status(c)));
	if (reply) {
		fputs(",\"total_us\":", t->f);
		put_us(t->f, c->t_reply_last - c->t_request_first);
		fputs(",\"server_us\":", t->f);
		put_us(t->f, c->t_reply_first - c->t_request_last);
	}
	fprintf(t->f, ",\"request_bytes\":%llu", (unsigned long long)c->request_bytes);
	if (c->flags & GS_CF_REP_SEEN)
		fprintf(t->f, ",\"reply_bytes\":%llu", (unsigned long long)c->reply_bytes);
	fprintf(t->f, ",\"retransmits\":%u,\"giop\":\"1.%u\"", c->retransmits, c->minor);
	if (gs_call_gap_filled(c))
		fprintf(t->f, ",\"gap_fills\":%u,\"gap_fill_wait_us\":%.3f", c->gap_fills,
			(double)c->fill_wait_ns / 1e3);
	if (c->flags & GS_CF_CAPTURE_LOSS)
		fputs(",\"capture_loss\":true", t->f);
	if (c->downstream_ns > 0) {
		fputs(",\"downstream_us\":", t->f);
		put_us(t->f, c->downstream_ns);
	}
	fputs("}}", t->f);
	if (c->parent_basis != GS_PARENT_NONE || c->downstream_ns > 0)
		nest_flows(t, c, pid, tid, start, end);
}

void gs_trace_add(struct gs_trace *t, const struct gs_engine *e, const struct gs_call *c)
{
	size_t n = 0;
	const char *op = e ? gs_intern_get(gs_engine_strings(e), c->op, &n) : NULL;
	add(t, op, n, e ? gs_engine_first_ts(e) : 0, c);
}

void gs_trace_add_named(struct gs_trace *t, const char *op, size_t oplen, const struct gs_call *c)
{
	add(t, op, oplen, 0, c);
}

void gs_trace_get_info(const struct gs_trace *t, struct gs_trace_info *info)
{
	*info = t->info;
}

static void trace_free(struct gs_trace *t)
{
	free(t->conns);
	free(t->servers);
	free(t->lane_tid);
	free(t->lane_end);
	free(t->iobuf);
	free(t->recent);
	free(t->family);
	free(t);
}

void gs_trace_discard(struct gs_trace *t)
{
	if (!t)
		return;
	if (t->own)
		gs_out_close(&t->out, false);
	trace_free(t);
}

int gs_trace_close(struct gs_trace *t)
{
	int err = 0;
	char utc[40] = "";
	if (!t)
		return 0;
	for (uint32_t i = 0; t->recent && i < TR_RECENT; i++)
		if (t->recent[i].used && t->recent[i].has_parent && !t->recent[i].linked)
			t->flows_unlinked++;
	if (t->started) {
		time_t sec = (time_t)(t->origin / 1000000000);
		struct tm tm;
		if (gmtime_r(&sec, &tm))
			strftime(utc, sizeof utc, "%Y-%m-%dT%H:%M:%SZ", &tm);
	}
	fprintf(t->f,
		"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"tool\":\"giopscope\","
		"\"origin_ns\":\"%lld\",\"origin_utc\":\"%s\",\"calls\":%llu,\"events\":%llu,"
		"\"connections\":%u,\"servers\":%u,\"connections_over_limit\":%llu,"
		"\"servers_over_limit\":%llu,\"calls_not_drawn_lanes_full\":%llu,"
		"\"calls_before_origin\":%llu,\"nested_links\":%llu,\"nested_unlinked\":%llu}}\n",
		(long long)t->origin, utc, (unsigned long long)t->calls,
		(unsigned long long)t->info.events, t->info.conns, t->info.servers,
		(unsigned long long)t->info.conns_over_limit,
		(unsigned long long)t->info.servers_over_limit,
		(unsigned long long)t->info.lanes_over_limit,
		(unsigned long long)t->info.before_origin, (unsigned long long)t->flows,
		(unsigned long long)t->flows_unlinked);
	errno = 0;
	if (fflush(t->f) != 0 || ferror(t->f))
		err = errno ? errno : EIO;
	if (t->own) {
		/* under its final name unless writing it failed */
		int e = gs_out_close(&t->out, !err);
		if (!err)
			err = e;
	}
	trace_free(t);
	return err;
}
