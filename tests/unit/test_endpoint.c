/* SPDX-License-Identifier: BSD-2-Clause */
/* Endpoints as text (analysis/endpoint.c): IPv4, IPv6 shortened, short buffers. */
#include "unit.h"
#include "../../analysis/endpoint.h"

/* ---- endpoints ----------------------------------------------------------------- */

static void test_endpoint_str(void **state)
{
	struct gs_endpoint ep;
	char buf[GS_ENDPOINT_STRLEN];
	memset(&ep, 0, sizeof ep);
	ep.family = 4;
	ep.addr[0] = 192, ep.addr[1] = 168, ep.addr[2] = 0, ep.addr[3] = 10;
	ep.port = 2809;
	assert_int_equal(gs_endpoint_str(&ep, buf, sizeof buf), strlen("192.168.0.10:2809"));
	assert_string_equal(buf, "192.168.0.10:2809");
	ep.family = 6;
	assert_int_equal(inet_pton(AF_INET6, "2001:db8:0:0:1:0:0:1", ep.addr), 1);
	ep.port = 65535;
	gs_endpoint_str(&ep, buf, sizeof buf);
	assert_string_equal(buf, "[2001:db8::1:0:0:1]:65535");
	assert_int_equal(inet_pton(AF_INET6, "::1", ep.addr), 1);
	ep.port = 0;
	gs_endpoint_str(&ep, buf, sizeof buf);
	assert_string_equal(buf, "[::1]:0");
	assert_int_equal(inet_pton(AF_INET6, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ep.addr), 1);
	ep.port = 65535;
	assert_int_equal(gs_endpoint_str(&ep, buf, sizeof buf), 47);
	/* a short buffer: cut, terminated, the length written returned */
	assert_int_equal(gs_endpoint_str(&ep, buf, 8), 7);
	assert_string_equal(buf, "[ffff:f");
	gs_addr_str(&ep, buf, sizeof buf);
	assert_string_equal(buf, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_endpoint_str),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
