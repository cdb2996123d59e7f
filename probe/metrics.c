/* SPDX-License-Identifier: BSD-2-Clause */
/* A minimal HTTP/1.x responder for Prometheus scrapes, polled from the
 * session's tick: no thread, no blocking call, fixed slots.  Why no thread per
 * client: a scrape is a few kilobytes rendered from the engine's tables, which
 * the capture's thread owns; the slots, deadlines and the eviction rule below
 * keep scrapes answered while other clients hold connections open. */
#include "metrics.h"

#include <errno.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/report_prom.h"
#include "metrics_http.h"
#include "metrics_listen.h"
#include "metrics_web.h"

#define REQ_MAX 4096
#define RESP_MAX (16u << 20)
#define HELD_MAX (64u << 20)       /* responses held for slow readers, all slots together */
#define REQUEST_NS ((int64_t)GS_METRICS_REQUEST_MS * 1000000)
#define CONN_NS ((int64_t)GS_METRICS_CONN_MS * 1000000)
#define ACCEPTS_PER_POLL 256       /* the backlog drained, the tick still bounded */

enum cstate { C_FREE, C_TLS_START, C_HANDSHAKE, C_READ, C_AUTH, C_WRITE };

struct mclient {
	int fd;                    /* -1: slot free */
	enum cstate st;
	int64_t t0;                /* accepted (monotonic) */
	uint64_t poll_seq;         /* the poll that accepted it */
	unsigned char peer[16];    /* its address (IPv4 as ::ffff:a.b.c.d) */
	struct gs_mtls_conn *tls;  /* NULL: plain */
	char req[REQ_MAX];
	size_t rn, head;
	char *resp;                /* the whole response once known */
	size_t rlen, roff;
};

struct gs_metrics {
	int lfd;
	uint16_t port;
	uint64_t poll_seq;
	size_t held;               /* bytes of resp over the slots */
	struct gs_metrics_web *web;
	struct mclient c[GS_METRICS_CLIENTS];
	struct gs_metrics_info info;
	const struct gs_nest_counts *nest; /* the session's nesting counts (NULL: no stage) */
};

/* What one poll renders at most once, for every client that asks in it. */
struct render {
	const struct gs_engine *e;
	const struct gs_stats *stats;
	const struct gs_drops *drops;
	int64_t now;
	bool done;
	char *body;
	size_t blen;
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int gs_metrics_open(struct gs_metrics **out, const char *spec, struct gs_metrics_web *web, char *err, size_t errlen)
{
	struct gs_metrics *m;
	uint16_t port = 0;
	int fd = gs_metrics_listen(spec, &port, err, errlen);

	*out = NULL;
	if (fd < 0) {
		gs_metrics_web_free(web);
		return -fd;
	}
	m = calloc(1, sizeof *m);
	if (!m) {
		close(fd);
		snprintf(err, errlen, "--metrics: out of memory");
		gs_metrics_web_free(web);
		return ENOMEM;
	}
	m->lfd = fd;
	m->port = port;
	m->web = web;
	for (int i = 0; i < GS_METRICS_CLIENTS; i++)
		m->c[i].fd = -1;
	*out = m;
	return 0;
}

uint16_t gs_metrics_port(const struct gs_metrics *m)
{
	return m->port;
}

void gs_metrics_get_info(const struct gs_metrics *m, struct gs_metrics_info *info)
{
	*info = m->info;
}

static void drop(struct gs_metrics *m, struct mclient *c)
{
	gs_mtls_conn_free(c->tls);
	if (c->fd >= 0)
		close(c->fd);
	m->held -= c->rlen;
	free(c->resp);
	memset(c, 0, sizeof *c);
	c->fd = -1;
}

static bool unfinished(const struct mclient *c)
{
	return c->st == C_TLS_START || c->st == C_HANDSHAKE || c->st == C_READ;
}

static int peer_count(const struct gs_metrics *m, const unsigned char *peer)
{
	int n = 0;
	for (int i = 0; i < GS_METRICS_CLIENTS; i++)
		n += m->c[i].fd >= 0 && !memcmp(m->c[i].peer, peer, 16);
	return n;
}

/* The oldest connection of `peer`: unfinished only, or any when none is;
 * accepted before this poll only, if `earlier`.  -1: none. */
static int oldest_of(const struct gs_metrics *m, const unsigned char *peer, bool any, bool earlier)
{
	int best = -1;
	for (int pass = 0; pass < (any ? 2 : 1) && best < 0; pass++)
		for (int i = 0; i < GS_METRICS_CLIENTS; i++) {
			const struct mclient *c = &m->c[i];
			if (c->fd < 0 || memcmp(c->peer, peer, 16) || (pass == 0 && !unfinished(c)) ||
			    (earlier && c->poll_seq == m->poll_seq))
				continue;
			if (best < 0 || c->t0 < m->c[best].t0)
				best = i;
		}
	return best;
}

/* A slot for a new connection from `peer`, or -1 (refused).  A client cannot
 * keep another address's scrapes out by holding connections: the address
 * holding the most slots gives way first; and one holding as many as
 * anyone only takes its own oldest unfinished slot from an earlier poll, so
 * its own flood cannot churn out a scrape it started a poll ago. */
static int place(struct gs_metrics *m, const unsigned char *peer)
{
	int heavy = -1, heavy_n = 0, mine, victim;
	for (int i = 0; i < GS_METRICS_CLIENTS; i++) {
		int n;
		if (m->c[i].fd < 0)
			return i;
		if ((n = peer_count(m, m->c[i].peer)) > heavy_n) {
			heavy_n = n;
			heavy = i;
		}
	}
	mine = peer_count(m, peer);
	if (heavy_n > mine)
		victim = oldest_of(m, m->c[heavy].peer, true, false);
	else
		victim = oldest_of(m, peer, false, true);
	if (victim < 0)
		return -1;
	m->info.evicted++;
	drop(m, &m->c[victim]);
	return victim;
}

static void respond(struct gs_metrics *m, struct mclient *c, const char *status, const char *extra,
		    const char *ctype, const char *body, size_t blen, bool head_only)
{
	char hdr[384];
	int n = snprintf(hdr, sizeof hdr,
			 "HTTP/1.1 %s\r\n%sContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n"
			 "Cache-Control: no-store\r\n\r\n",
			 status, extra, ctype, blen);
	size_t total = (size_t)n + (head_only ? 0 : blen);
	c->st = C_WRITE;
	c->resp = malloc(total);
	if (!c->resp)
		return;
	memcpy(c->resp, hdr, (size_t)n);
	if (!head_only && blen)
		memcpy(c->resp + n, body, blen);
	c->rlen = total;
	c->roff = 0;
	m->held += total;
}

static void text(struct gs_metrics *m, struct mclient *c, const char *status, const char *extra, const char *body,
		 bool head_only)
{
	respond(m, c, status, extra, "text/plain; charset=utf-8", body, strlen(body), head_only);
}

static char *render_body(struct gs_metrics *m, struct render *rd, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct gs_prom_input in;
	const struct gs_metrics_info *i = &m->info;
	if (!f)
		return NULL;
	memset(&in, 0, sizeof in);
	in.stats = rd->stats;
	in.counters = rd->e ? gs_engine_counters(rd->e) : NULL;
	in.strings = rd->e ? gs_engine_strings(rd->e) : NULL;
	in.open_calls = rd->e ? gs_engine_open_calls(rd->e) : 0;
	in.active_flows = rd->e ? gs_engine_active_flows(rd->e) : 0;
	in.last_ts = rd->e ? gs_engine_last_ts(rd->e) : 0;
	in.nest = m->nest;
	if (rd->drops) {
		in.kernel_drops = rd->drops->kernel;
		in.iface_drops = rd->drops->iface;
		in.other_drops = rd->drops->other;
	}
	gs_prom_write(f, &in);
	/* the endpoint's own health: what hostile or broken clients cost */
	fprintf(f, "# HELP giopscope_metrics_scrapes_total Scrapes of /metrics answered, before this one.\n"
		   "# TYPE giopscope_metrics_scrapes_total counter\n"
		   "giopscope_metrics_scrapes_total %llu\n"
		   "# HELP giopscope_metrics_connections_closed_total Connections to the metrics endpoint closed "
		   "unanswered: refused (no slot), evicted (for a newer one), timeout (request or response too slow), "
		   "tls_failed (handshake).\n"
		   "# TYPE giopscope_metrics_connections_closed_total counter\n"
		   "giopscope_metrics_connections_closed_total{reason=\"refused\"} %llu\n"
		   "giopscope_metrics_connections_closed_total{reason=\"evicted\"} %llu\n"
		   "giopscope_metrics_connections_closed_total{reason=\"timeout\"} %llu\n"
		   "giopscope_metrics_connections_closed_total{reason=\"tls_failed\"} %llu\n"
		   "# HELP giopscope_metrics_requests_refused_total Requests to the metrics endpoint answered with "
		   "an error: unauthorized (401), bad (400, 404, 405, 431).\n"
		   "# TYPE giopscope_metrics_requests_refused_total counter\n"
		   "giopscope_metrics_requests_refused_total{reason=\"unauthorized\"} %llu\n"
		   "giopscope_metrics_requests_refused_total{reason=\"bad\"} %llu\n",
		(unsigned long long)i->scrapes, (unsigned long long)i->refused, (unsigned long long)i->evicted,
		(unsigned long long)i->timed_out, (unsigned long long)i->tls_failed,
		(unsigned long long)i->unauthorized, (unsigned long long)i->bad);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* A whole request, authorized: the answer. */
static void route(struct gs_metrics *m, struct mclient *c, struct render *rd, const struct gs_http_req *r)
{
	bool head = r->method == GS_HTTP_HEAD;
	if (gs_http_path_is(r, "/metrics")) {
		if (!rd->done) {
			rd->body = render_body(m, rd, &rd->blen);
			rd->done = true;
		}
		if (!rd->body || rd->blen > RESP_MAX) {
			text(m, c, "500 Internal Server Error", "", "cannot render\n", false);
		} else if (m->held + rd->blen > HELD_MAX) {
			/* slow readers hold this much already: this one waits for the next scrape */
			text(m, c, "503 Service Unavailable", "Retry-After: 1\r\n", "busy\n", false);
		} else {
			respond(m, c, "200 OK", "", "text/plain; version=0.0.4; charset=utf-8", rd->body, rd->blen, head);
			m->info.scrapes++;
		}
		return;
	}
	if (r->path_len == 1 && r->path[0] == '/') {
		text(m, c, "200 OK", "", "giopscope: Prometheus metrics at /metrics\n", head);
		return;
	}
	m->info.bad++;
	text(m, c, "404 Not Found", "", "not found; try /metrics\n", head);
}

static void answer(struct gs_metrics *m, struct mclient *c, struct render *rd)
{
	struct gs_http_req r;
	if (!gs_http_parse(c->req, c->head, &r)) {
		m->info.bad++;
		text(m, c, "400 Bad Request", "", "bad request\n", false);
		return;
	}
	if (r.method == GS_HTTP_OTHER) {
		m->info.bad++;
		text(m, c, "405 Method Not Allowed", "Allow: GET, HEAD\r\n", "GET /metrics\n", false);
		return;
	}
	if (m->web && m->web->auth) {
		enum gs_auth_result a = gs_mauth_check(m->web->auth, r.authz, r.authz_len, rd->now);
		if (a == GS_AUTH_LATER) {
			c->st = C_AUTH; /* the next poll asks again */
			return;
		}
		if (a == GS_AUTH_DENIED) {
			m->info.unauthorized++;
			text(m, c, "401 Unauthorized", "WWW-Authenticate: Basic realm=\"giopscope\", charset=\"UTF-8\"\r\n",
			     "unauthorized\n", false);
			return;
		}
	}
	route(m, c, rd, &r);
}

static ssize_t io_read(struct mclient *c, void *buf, size_t n)
{
	ssize_t r;
	if (c->tls)
		return gs_mtls_read(c->tls, buf, n);
	r = recv(c->fd, buf, n, MSG_DONTWAIT);
	return r >= 0 ? r : errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -EIO;
}

static ssize_t io_write(struct mclient *c, const void *buf, size_t n)
{
	ssize_t w;
	if (c->tls)
		return gs_mtls_write(c->tls, buf, n);
	w = send(c->fd, buf, n, MSG_DONTWAIT | MSG_NOSIGNAL);
	return w >= 0 ? w : errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR ? -EAGAIN : -EIO;
}

/* A TLS port's first byte is a handshake record (0x16).  A client speaking
 * plain HTTP gets a plain 400 that says so, as Go's servers answer, and
 * anything else is closed; both count as failed handshakes. */
static bool tls_start(struct gs_metrics *m, struct mclient *c)
{
	unsigned char b;
	ssize_t r = recv(c->fd, &b, 1, MSG_PEEK | MSG_DONTWAIT);
	if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return false;
	if (r == 1 && b == 0x16) {
		if (!(c->tls = gs_mtls_conn_new(m->web->tls, c->fd))) {
			drop(m, c);
			return false;
		}
		c->st = C_HANDSHAKE;
		return true;
	}
	m->info.tls_failed++;
	if (r == 1 && b >= 'A' && b <= 'Z') {
		text(m, c, "400 Bad Request", "", "this endpoint speaks HTTPS: scrape it with scheme https\n", false);
		return true;
	}
	drop(m, c);
	return false;
}

/* Moves one connection on as far as its socket allows. */
static void step(struct gs_metrics *m, struct mclient *c, struct render *rd)
{
	if (rd->now - c->t0 > (unfinished(c) ? REQUEST_NS : CONN_NS)) {
		m->info.timed_out++;
		drop(m, c);
		return;
	}
	if (c->st == C_TLS_START && !tls_start(m, c))
		return;
	if (c->st == C_HANDSHAKE) {
		int h = gs_mtls_handshake(c->tls);
		if (h < 0) {
			m->info.tls_failed++;
			drop(m, c);
			return;
		}
		if (h == 0)
			return;
		c->st = C_READ;
	}
	while (c->st == C_READ) {
		ssize_t r;
		if (c->rn == sizeof c->req) {
			m->info.bad++;
			text(m, c, "431 Request Header Fields Too Large", "", "request too large\n", false);
			break;
		}
		r = io_read(c, c->req + c->rn, sizeof c->req - c->rn);
		if (r == -EAGAIN)
			return;
		if (r <= 0) { /* closed or failed before a whole request */
			drop(m, c);
			return;
		}
		c->rn += (size_t)r;
		if ((c->head = gs_http_head_len(c->req, c->rn)) != 0)
			answer(m, c, rd);
	}
	if (c->st == C_AUTH)
		answer(m, c, rd);
	if (c->st != C_WRITE)
		return;
	if (!c->resp) { /* out of memory: give up on this client */
		drop(m, c);
		return;
	}
	while (c->roff < c->rlen) {
		ssize_t w = io_write(c, c->resp + c->roff, c->rlen - c->roff);
		if (w == -EAGAIN)
			return;
		if (w <= 0)
			break; /* the client went away */
		c->roff += (size_t)w;
	}
	if (c->fd >= 0 && !c->tls)
		shutdown(c->fd, SHUT_WR);
	drop(m, c);
}

static void peer_key(const struct sockaddr_storage *ss, unsigned char key[16])
{
	memset(key, 0, 16);
	if (ss->ss_family == AF_INET6) {
		memcpy(key, &((const struct sockaddr_in6 *)ss)->sin6_addr, 16);
	} else if (ss->ss_family == AF_INET) {
		key[10] = key[11] = 0xff;
		memcpy(key + 12, &((const struct sockaddr_in *)ss)->sin_addr, 4);
	}
}

static void accept_new(struct gs_metrics *m, struct render *rd)
{
	for (int k = 0; k < ACCEPTS_PER_POLL; k++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof ss;
		unsigned char peer[16];
		int fd = accept4(m->lfd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC), i;
		struct mclient *c;
		if (fd < 0)
			return; /* EAGAIN, or an error the next poll retries */
		peer_key(&ss, peer);
		if ((i = place(m, peer)) < 0) {
			m->info.refused++;
			close(fd);
			continue;
		}
		c = &m->c[i];
		c->fd = fd;
		c->t0 = rd->now;
		c->poll_seq = m->poll_seq;
		memcpy(c->peer, peer, 16);
		c->st = m->web && m->web->tls ? C_TLS_START : C_READ;
		step(m, c, rd); /* a request already there is whole before the next newcomer is placed */
	}
}

void gs_metrics_poll(struct gs_metrics *m, const struct gs_engine *e, const struct gs_stats *stats,
		     const struct gs_drops *drops)
{
	struct render rd = { e, stats, drops, mono_ns(), false, NULL, 0 };
	if (!m)
		return;
	m->poll_seq++;
	/* this poll's bcrypt check (metrics_auth.h) to the request that has waited
	 * longest for one: first come, first checked */
	{
		int first = -1;
		for (int i = 0; i < GS_METRICS_CLIENTS; i++)
			if (m->c[i].fd >= 0 && m->c[i].st == C_AUTH && (first < 0 || m->c[i].t0 < m->c[first].t0))
				first = i;
		if (first >= 0)
			step(m, &m->c[first], &rd);
	}
	/* the connections held first: a request that arrived since the last poll
	 * is whole, and out of the newcomers' reach, before they are placed */
	for (int i = 0; i < GS_METRICS_CLIENTS; i++)
		if (m->c[i].fd >= 0)
			step(m, &m->c[i], &rd);
	accept_new(m, &rd);
	free(rd.body);
}

void gs_metrics_nest(struct gs_metrics *m, const struct gs_nest_counts *nest)
{
	if (m)
		m->nest = nest;
}

void gs_metrics_close(struct gs_metrics *m)
{
	if (!m)
		return;
	for (int i = 0; i < GS_METRICS_CLIENTS; i++)
		if (m->c[i].fd >= 0)
			drop(m, &m->c[i]);
	close(m->lfd);
	gs_metrics_web_free(m->web);
	free(m);
}
