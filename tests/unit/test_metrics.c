/* SPDX-License-Identifier: BSD-2-Clause */
/* The /metrics responder (probe/metrics.c, from libgiopscope-probe.a): its socket handling. */
#include <errno.h>
#include <poll.h>
#include <unistd.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include "call_fixtures.h"
#include "text_check.h"
#include "../../analysis/report_prom.h"
#include "../../probe/metrics.h"

/* ======================================================================== */
/* The /metrics responder                                                      */
/* ======================================================================== */

static void test_metrics_refuses(void **state)
{
	static const char *const bad[] = { "localhost:9464", "127.0.0.1", "::1:9464", "[::1]", "127.0.0.1:99999",
					   "127.0.0.1:http", ":9464", "[::1]:", "1.2.3.4.5:80", "" };
	char err[256];
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		struct gs_metrics *mt = NULL;
		err[0] = '\0';
		assert_int_equal(gs_metrics_open(&mt, bad[i], NULL, err, sizeof err), EINVAL);
		assert_null(mt);
		assert_true(strlen(err) > 10);
	}
}

static void ut_metrics_close(void *p) { gs_metrics_close(p); }

/* Sends a request and polls the responder until the reply is complete. */
static char *scrape(struct gs_metrics *mt, const struct gs_engine *e, const struct gs_stats *st, const char *req)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	static char buf[1 << 20];
	size_t n = 0;
	assert_true(fd >= 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_port = htons(gs_metrics_port(mt));
	a.sin_addr.s_addr = htonl(0x7f000001);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	for (int i = 0; i < 2000; i++) { /* bounded: 2 s */
		struct pollfd p = { fd, POLLIN, 0 };
		gs_metrics_poll(mt, e, st, NULL);
		if (poll(&p, 1, 1) == 1) {
			ssize_t r = recv(fd, buf + n, sizeof buf - 1 - n, 0);
			if (r <= 0)
				break;
			n += (size_t)r;
		}
	}
	close(fd);
	buf[n] = '\0';
	return buf;
}

static void test_metrics_serves(void **state)
{
	struct gs_metrics *mt = NULL;
	struct gs_metrics_info info;
	struct gs_stats *st = calloc(1, sizeof *st);
	char err[256];
	char *resp, *body;

	assert_non_null(st);
	assert_int_equal(gs_stats_init(st, 16, 1024), 0);
	ut_keep(st, ut_stats_free);
	struct sink sk;
	struct gs_engine *e = engine_new(NULL, &sk);
	for (uint32_t i = 0; i < 10; i++) {
		struct gs_call c = answered(40000, i, T0, US, 5 * US, US);
		gs_stats_add(st, &c);
	}
	assert_int_equal(gs_metrics_open(&mt, "127.0.0.1:0", NULL, err, sizeof err), 0);
	ut_keep(mt, ut_metrics_close);
	assert_true(gs_metrics_port(mt) > 0);

	resp = scrape(mt, e, st, "GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
	assert_non_null(strstr(resp, "Content-Type: text/plain; version=0.0.4"));
	body = strstr(resp, "\r\n\r\n");
	assert_non_null(body);
	body += 4;
	assert_int_equal((size_t)atoi(strstr(resp, "Content-Length: ") + 16), strlen(body));
	assert_int_equal(sample_value(body, "giopscope_call_duration_seconds_count{operation=\"(unknown)\"}"), 10);

	resp = scrape(mt, e, st, "GET /nothing HTTP/1.0\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 404", 12) == 0);
	resp = scrape(mt, e, st, "POST /metrics HTTP/1.0\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 405", 12) == 0);
	resp = scrape(mt, e, st, "garbage\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 400", 12) == 0);
	resp = scrape(mt, e, st, "HEAD /metrics HTTP/1.0\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 200", 12) == 0);
	assert_non_null(strstr(resp, "\r\n\r\n"));
	assert_int_equal(strlen(strstr(resp, "\r\n\r\n")), 4); /* no body */

	gs_metrics_get_info(mt, &info);
	assert_int_equal(info.scrapes, 2);
	assert_int_equal(info.bad, 3);
	ut_forget(mt);
	gs_metrics_close(mt);
	engine_free(e);
}

/* A connection from `src` (127.x.y.z) that sends `req` and is left open. */
static int hold(struct gs_metrics *mt, uint32_t src, const char *req)
{
	struct sockaddr_in a;
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(src);
	assert_int_equal(bind(fd, (struct sockaddr *)&a, sizeof a), 0);
	a.sin_port = htons(gs_metrics_port(mt));
	a.sin_addr.s_addr = htonl(0x7f000001);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof a), 0);
	if (*req)
		assert_int_equal(send(fd, req, strlen(req), 0), (ssize_t)strlen(req));
	return fd;
}

/* true when the server closed fd (what it sent before, if anything, is read and dropped) */
static bool closed_by_server(int fd)
{
	char b[4096];
	for (;;) {
		ssize_t r = recv(fd, b, sizeof b, MSG_DONTWAIT);
		if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
			return true;
		if (r < 0)
			return false;
	}
}

/* Slowloris: every slot held by connections that never finish their request.
 * A scrape from the same address takes the oldest one's slot; one from another
 * address too, however many the first holds; the newest connections of the
 * flood itself are refused rather than evicting each other within one poll. */
static void test_metrics_held_slots(void **state)
{
	struct gs_metrics *mt = NULL;
	struct gs_metrics_info info;
	struct gs_stats *st = calloc(1, sizeof *st);
	int fds[GS_METRICS_CLIENTS + 8];
	char err[256], *resp;

	assert_non_null(st);
	assert_int_equal(gs_stats_init(st, 16, 1024), 0);
	ut_keep(st, ut_stats_free);
	assert_int_equal(gs_metrics_open(&mt, "127.0.0.1:0", NULL, err, sizeof err), 0);
	ut_keep(mt, ut_metrics_close);
	for (int i = 0; i < GS_METRICS_CLIENTS; i++)
		fds[i] = hold(mt, 0x7f000001, "GET /met");
	gs_metrics_poll(mt, NULL, st, NULL);
	/* the same address: the oldest unfinished gives way */
	resp = scrape(mt, NULL, st, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
	assert_non_null(strstr(resp, "giopscope_metrics_connections_closed_total{reason=\"evicted\"} 1\n"));
	gs_metrics_get_info(mt, &info);
	assert_int_equal(info.evicted, 1);
	assert_true(closed_by_server(fds[0]));
	assert_false(closed_by_server(fds[1]));
	/* 8 more from another address, in one poll: the first takes the slot the scrape left, the
	 * others an old slot of 127.0.0.1's each (it holds more), none another's of this poll */
	for (int i = GS_METRICS_CLIENTS; i < GS_METRICS_CLIENTS + 8; i++)
		fds[i] = hold(mt, 0x7f000002, "GET /met");
	gs_metrics_poll(mt, NULL, st, NULL);
	gs_metrics_get_info(mt, &info);
	assert_int_equal(info.evicted, 1 + 7);
	assert_int_equal(info.refused, 0);
	for (int i = GS_METRICS_CLIENTS; i < GS_METRICS_CLIENTS + 8; i++)
		assert_false(closed_by_server(fds[i]));
	/* a new one from 127.0.0.1 now takes its own oldest, accepted at an earlier poll */
	resp = scrape(mt, NULL, st, "GET /metrics HTTP/1.1\r\n\r\n");
	assert_true(strncmp(resp, "HTTP/1.1 200 OK\r\n", 17) == 0);
	gs_metrics_get_info(mt, &info);
	assert_int_equal(info.scrapes, 2);
	for (int i = 0; i < GS_METRICS_CLIENTS + 8; i++)
		close(fds[i]);
	ut_forget(mt);
	gs_metrics_close(mt);
}

/* More connections from one address in one poll than there are slots: the
 * ones past the slots are refused, they do not evict each other. */
static void test_metrics_flood_refused(void **state)
{
	struct gs_metrics *mt = NULL;
	struct gs_metrics_info info;
	int fds[GS_METRICS_CLIENTS + 6], closed = 0;
	char err[256];

	assert_int_equal(gs_metrics_open(&mt, "127.0.0.1:0", NULL, err, sizeof err), 0);
	ut_keep(mt, ut_metrics_close);
	for (int i = 0; i < GS_METRICS_CLIENTS + 6; i++)
		fds[i] = hold(mt, 0x7f000001, "");
	gs_metrics_poll(mt, NULL, NULL, NULL);
	gs_metrics_get_info(mt, &info);
	assert_int_equal(info.refused, 6);
	assert_int_equal(info.evicted, 0);
	for (int i = 0; i < GS_METRICS_CLIENTS + 6; i++) {
		closed += closed_by_server(fds[i]);
		close(fds[i]);
	}
	assert_int_equal(closed, 6);
	ut_forget(mt);
	gs_metrics_close(mt);
}

/* A request not whole within GS_METRICS_REQUEST_MS is closed and counted. */
static void test_metrics_request_deadline(void **state)
{
	struct gs_metrics *mt = NULL;
	struct gs_metrics_info info;
	char err[256];
	int fd;

	assert_int_equal(gs_metrics_open(&mt, "127.0.0.1:0", NULL, err, sizeof err), 0);
	ut_keep(mt, ut_metrics_close);
	fd = hold(mt, 0x7f000001, "GET /met");
	gs_metrics_poll(mt, NULL, NULL, NULL);
	assert_false(closed_by_server(fd));
	usleep((GS_METRICS_REQUEST_MS + 100) * 1000);
	gs_metrics_poll(mt, NULL, NULL, NULL);
	assert_true(closed_by_server(fd));
	gs_metrics_get_info(mt, &info);
	assert_int_equal(info.timed_out, 1);
	close(fd);
	ut_forget(mt);
	gs_metrics_close(mt);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_metrics_refuses),
		UT(test_metrics_serves),
		UT(test_metrics_held_slots),
		UT(test_metrics_flood_refused),
		UT(test_metrics_request_deadline),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
