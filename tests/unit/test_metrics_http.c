// SPDX-License-Identifier: BSD-2-Clause
/* probe/metrics_http.c: the request head of a scrape, read within its bytes. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../probe/metrics_http.h"

static void test_http_head_len(void **state)
{
	assert_int_equal(gs_http_head_len("GET / HTTP/1.1\r\nHost: x\r\n\r\nrest", 32), 27);
	assert_int_equal(gs_http_head_len("GET / HTTP/1.0\n\n", 16), 16);
	assert_int_equal(gs_http_head_len("GET /met", 8), 0);
	assert_int_equal(gs_http_head_len("GET / HTTP/1.1\r\n\r", 17), 0);
	assert_int_equal(gs_http_head_len("\n", 1), 0);
	assert_int_equal(gs_http_head_len("", 0), 0);
}

static void test_http_parse(void **state)
{
	static const char req[] = "GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\nauthorization:  Basic cHJvbTpzM2NyZXQ= \r\n"
				  "Authorization: Basic other\r\n\r\n";
	struct gs_http_req r;
	assert_true(gs_http_parse(req, sizeof req - 1, &r));
	assert_int_equal(r.method, GS_HTTP_GET);
	assert_true(gs_http_path_is(&r, "/metrics"));
	assert_false(gs_http_path_is(&r, "/metric"));
	assert_non_null(r.authz);
	assert_int_equal(r.authz_len, strlen("Basic cHJvbTpzM2NyZXQ="));
	assert_memory_equal(r.authz, "Basic cHJvbTpzM2NyZXQ=", r.authz_len);

	assert_true(gs_http_parse("HEAD / HTTP/1.0\n\n", 17, &r));
	assert_int_equal(r.method, GS_HTTP_HEAD);
	assert_true(gs_http_path_is(&r, "/"));
	assert_null(r.authz);
	assert_true(gs_http_parse("POST /metrics HTTP/1.1\r\n\r\n", 26, &r));
	assert_int_equal(r.method, GS_HTTP_OTHER);
}

static void test_http_malformed(void **state)
{
	static const char *const bad[] = { "garbage\r\n\r\n", "GET /metrics\r\n\r\n", "GET  HTTP/1.1\r\n\r\n",
					   " / HTTP/1.1\r\n\r\n", "GET / HTTX/1.1\r\n\r\n", "GET / HTTP\r\n\r\n",
					   "no newline at all" };
	struct gs_http_req r;
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_false(gs_http_parse(bad[i], strlen(bad[i]), &r));
	/* every cut of a good head, in a buffer of exactly that size: never read past it */
	{
		static const char good[] = "GET /metrics HTTP/1.1\r\nAuthorization: Basic eDp5\r\n\r\n";
		for (size_t cut = 0; cut <= sizeof good - 1; cut++) {
			char *copy = malloc(cut ? cut : 1);
			assert_non_null(copy);
			memcpy(copy, good, cut);
			(void)gs_http_head_len(copy, cut);
			(void)gs_http_parse(copy, cut, &r);
			free(copy);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_http_head_len),
		cmocka_unit_test(test_http_parse),
		cmocka_unit_test(test_http_malformed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
