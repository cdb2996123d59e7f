/* SPDX-License-Identifier: BSD-2-Clause */
/* A minimal HTTP/1.x responder for Prometheus scrapes, polled from the
 * session's tick: no thread, no blocking call, fixed slots. */
#include "metrics.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../analysis/report_prom.h"

#define REQ_MAX 4096
#define RESP_MAX (16u << 20)
#define CONN_TIMEOUT_NS (5 * 1000000000LL)
#define ACCEPTS_PER_POLL 16

struct mclient {
	int fd;                    /* -1: slot free */
	int64_t t0;                /* accepted (monotonic) */
	char req[REQ_MAX];
	size_t rn;
	bool want_metrics, head_only;
	char *resp;                /* the whole response once known */
	size_t rlen, roff;
};

struct gs_metrics {
	int lfd;
	uint16_t port;
	struct mclient c[GS_METRICS_CLIENTS];
	struct gs_metrics_info info;
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* "A.B.C.D:PORT" or "[v6]:PORT" into host and port text. */
static bool split_spec(const char *spec, char *host, size_t hlen, char *port, size_t plen)
{
	const char *colon, *hs, *he;
	if (spec[0] == '[') {
		he = strchr(spec, ']');
		if (!he || he[1] != ':')
			return false;
		hs = spec + 1;
		colon = he + 1;
	} else {
		colon = strrchr(spec, ':');
		if (!colon || memchr(spec, ':', (size_t)(colon - spec)))
			return false; /* IPv6 needs brackets */
		hs = spec;
		he = colon;
	}
	if (he == hs || (size_t)(he - hs) >= hlen || !colon[1] || strlen(colon + 1) >= plen)
		return false;
	memcpy(host, hs, (size_t)(he - hs));
	host[he - hs] = '\0';
	strcpy(port, colon + 1);
	for (const char *p = port; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return atoi(port) <= 65535;
}

int gs_metrics_open(struct gs_metrics **out, const char *spec, char *err, size_t errlen)
{
	char host[128], port[8];
	struct addrinfo hints, *ai = NULL;
	struct gs_metrics *m;
	int fd, one = 1, rc, e;
	struct sockaddr_storage ss;
	socklen_t sl = sizeof ss;

	*out = NULL;
	if (!split_spec(spec, host, sizeof host, port, sizeof port)) {
		snprintf(err, errlen, "--metrics wants ADDR:PORT with a numeric address (e.g. 127.0.0.1:9464 "
			 "or [::1]:9464), not '%s'", spec);
		return EINVAL;
	}
	memset(&hints, 0, sizeof hints);
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* only what the user wrote: no name lookups, no default address */
	hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
	if ((rc = getaddrinfo(host, port, &hints, &ai)) != 0 || !ai) {
		snprintf(err, errlen, "--metrics: '%s' is not a numeric address and port (%s)", spec,
			 gai_strerror(rc));
		if (ai)
			freeaddrinfo(ai);
		return EINVAL;
	}
	fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		e = errno;
		snprintf(err, errlen, "--metrics %s: socket: %s", spec, strerror(e));
		freeaddrinfo(ai);
		return e;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
	if (ai->ai_family == AF_INET6) /* [::] means IPv6 only: bind what was given */
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
	if (bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || listen(fd, 16) != 0) {
		e = errno;
		snprintf(err, errlen, "--metrics %s: cannot listen: %s", spec, strerror(e));
		close(fd);
		freeaddrinfo(ai);
		return e;
	}
	freeaddrinfo(ai);
	m = calloc(1, sizeof *m);
	if (!m) {
		close(fd);
		snprintf(err, errlen, "--metrics: out of memory");
		return ENOMEM;
	}
	m->lfd = fd;
	for (int i = 0; i < GS_METRICS_CLIENTS; i++)
		m->c[i].fd = -1;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
		m->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
							 : ((struct sockaddr_in *)&ss)->sin_port);
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

static void drop(struct mclient *c)
{
	if (c->fd >= 0) {
		shutdown(c->fd, SHUT_WR);
		close(c->fd);
	}
	free(c->resp);
	memset(c, 0, sizeof *c);
	c->fd = -1;
}

static void accept_new(struct gs_metrics *m, int64_t now)
{
	for (int k = 0; k < ACCEPTS_PER_POLL; k++) {
		int fd = accept4(m->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		int i;
		if (fd < 0)
			return; /* EAGAIN, or an error the next poll retries */
		for (i = 0; i < GS_METRICS_CLIENTS && m->c[i].fd >= 0; i++)
			;
		if (i == GS_METRICS_CLIENTS) {
			m->info.refused++;
			close(fd);
			continue;
		}
		m->c[i].fd = fd;
		m->c[i].t0 = now;
		m->c[i].rn = 0;
	}
}

static void respond(struct mclient *c, const char *status, const char *ctype, const char *body,
		    size_t blen, bool head_only)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof hdr,
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n"
			 "Cache-Control: no-store\r\n\r\n",
			 status, ctype, blen);
	size_t total = (size_t)n + (head_only ? 0 : blen);
	c->resp = malloc(total);
	if (!c->resp) {
		c->rlen = 0;
		return;
	}
	memcpy(c->resp, hdr, (size_t)n);
	if (!head_only && blen)
		memcpy(c->resp + n, body, blen);
	c->rlen = total;
	c->roff = 0;
}

/* Reads what the client sent; true once the request head is complete (or
 * the connection must end). */
static bool read_request(struct gs_metrics *m, struct mclient *c)
{
	static const char txt[] = "text/plain; charset=utf-8";
	char *end, *sp1, *sp2;
	for (;;) {
		ssize_t r;
		if (c->rn == sizeof c->req - 1) {
			m->info.bad++;
			respond(c, "431 Request Header Fields Too Large", txt, "request too large\n", 18, false);
			return true;
		}
		r = recv(c->fd, c->req + c->rn, sizeof c->req - 1 - c->rn, MSG_DONTWAIT);
		if (r > 0) {
			c->rn += (size_t)r;
			c->req[c->rn] = '\0';
			if (strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n"))
				break;
			continue;
		}
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return false;
		/* closed or failed before a whole request */
		drop(c);
		return false;
	}
	/* request line: METHOD SP TARGET SP VERSION */
	end = strpbrk(c->req, "\r\n");
	*end = '\0';
	sp1 = strchr(c->req, ' ');
	sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
	if (!sp1 || !sp2 || strncmp(sp2 + 1, "HTTP/", 5) != 0) {
		m->info.bad++;
		respond(c, "400 Bad Request", txt, "bad request\n", 12, false);
		return true;
	}
	*sp1 = *sp2 = '\0';
	c->head_only = strcmp(c->req, "HEAD") == 0;
	if (strcmp(c->req, "GET") != 0 && !c->head_only) {
		m->info.bad++;
		respond(c, "405 Method Not Allowed", txt, "GET /metrics\n", 13, false);
		return true;
	}
	{
		char *q = strchr(sp1 + 1, '?');
		if (q)
			*q = '\0';
	}
	if (strcmp(sp1 + 1, "/metrics") == 0) {
		c->want_metrics = true; /* rendered once for every client that asks in this poll */
		return true;
	}
	if (strcmp(sp1 + 1, "/") == 0) {
		static const char b[] = "giopscope: Prometheus metrics at /metrics\n";
		respond(c, "200 OK", txt, b, sizeof b - 1, c->head_only);
		return true;
	}
	m->info.bad++;
	respond(c, "404 Not Found", txt, "not found; try /metrics\n", 24, c->head_only);
	return true;
}

static void write_response(struct mclient *c)
{
	while (c->roff < c->rlen) {
		ssize_t w = send(c->fd, c->resp + c->roff, c->rlen - c->roff, MSG_DONTWAIT | MSG_NOSIGNAL);
		if (w > 0) {
			c->roff += (size_t)w;
			continue;
		}
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		break; /* the client went away */
	}
	drop(c);
}

static char *render(const struct gs_engine *e, const struct gs_stats *stats, const struct gs_drops *drops,
		    size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	struct gs_prom_input in;
	if (!f)
		return NULL;
	memset(&in, 0, sizeof in);
	in.stats = stats;
	in.counters = e ? gs_engine_counters(e) : NULL;
	in.strings = e ? gs_engine_strings(e) : NULL;
	in.open_calls = e ? gs_engine_open_calls(e) : 0;
	in.active_flows = e ? gs_engine_active_flows(e) : 0;
	in.last_ts = e ? gs_engine_last_ts(e) : 0;
	if (drops) {
		in.kernel_drops = drops->kernel;
		in.iface_drops = drops->iface;
		in.other_drops = drops->other;
	}
	gs_prom_write(f, &in);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void gs_metrics_poll(struct gs_metrics *m, const struct gs_engine *e, const struct gs_stats *stats,
		     const struct gs_drops *drops)
{
	int64_t now = mono_ns();
	char *body = NULL;
	size_t blen = 0;
	bool rendered = false;

	if (!m)
		return;
	accept_new(m, now);
	for (int i = 0; i < GS_METRICS_CLIENTS; i++) {
		struct mclient *c = &m->c[i];
		if (c->fd < 0)
			continue;
		if (now - c->t0 > CONN_TIMEOUT_NS) {
			m->info.bad++;
			drop(c);
			continue;
		}
		if (!c->resp && !c->want_metrics && !read_request(m, c))
			continue;
		if (c->fd < 0)
			continue;
		if (c->want_metrics && !c->resp) {
			if (!rendered) {
				body = render(e, stats, drops, &blen);
				rendered = true;
			}
			if (body && blen <= RESP_MAX) {
				respond(c, "200 OK", "text/plain; version=0.0.4; charset=utf-8", body, blen, c->head_only);
				m->info.scrapes++;
			} else {
				respond(c, "500 Internal Server Error", "text/plain; charset=utf-8",
					"cannot render\n", 14, false);
			}
		}
		if (!c->resp) { /* out of memory: give up on this client */
			drop(c);
			continue;
		}
		write_response(c);
	}
	free(body);
}

void gs_metrics_close(struct gs_metrics *m)
{
	if (!m)
		return;
	for (int i = 0; i < GS_METRICS_CLIENTS; i++)
		drop(&m->c[i]);
	close(m->lfd);
	free(m);
}
