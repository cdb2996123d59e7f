// SPDX-License-Identifier: BSD-2-Clause
/* probe/metrics_auth.c: basic auth against bcrypt hashes (libcrypt), the
 * remembered credential, the one-check-per-poll bound, malformed headers. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <crypt.h>
#include <cmocka.h>

#include "../../probe/metrics_auth.h"

/* "Basic " + base64(text) */
static const char *basic(const char *text)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	static char out[256];
	size_t n = strlen(text), o = 6;
	memcpy(out, "Basic ", 6);
	for (size_t i = 0; i < n; i += 3) {
		unsigned v = (unsigned char)text[i] << 16 | (i + 1 < n ? (unsigned char)text[i + 1] << 8 : 0) |
			     (i + 2 < n ? (unsigned char)text[i + 2] : 0);
		out[o++] = b64[v >> 18 & 63];
		out[o++] = b64[v >> 12 & 63];
		out[o++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		out[o++] = i + 2 < n ? b64[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

static enum gs_auth_result check(struct gs_mauth *a, const char *hdr, int64_t poll)
{
	return gs_mauth_check(a, hdr, hdr ? strlen(hdr) : 0, poll);
}

static struct gs_web_config cfg;

/* A configuration with prom:s3cret and other:pw, hashed here at the lowest cost */
static struct gs_mauth *make(void)
{
	static struct crypt_data cd;
	char err[256];
	struct gs_mauth *a = NULL;
	const char *setting;
	memset(&cfg, 0, sizeof cfg);
	cfg.n_users = 2;
	strcpy(cfg.users[0].name, "prom");
	strcpy(cfg.users[1].name, "other");
	for (int i = 0; i < 2; i++) {
		setting = crypt_gensalt_rn("$2b$", 4, NULL, 0, cd.setting, sizeof cd.setting);
		assert_non_null(setting);
		strcpy(cfg.users[i].hash, crypt_r(i ? "pw" : "s3cret", setting, &cd));
		assert_int_equal(strlen(cfg.users[i].hash), 60);
		cfg.users[i].line = 3 + (unsigned)i;
	}
	if (gs_mauth_new(&a, &cfg, "web.yml", err, sizeof err) == ENOTSUP)
		skip(); /* built without OpenSSL */
	assert_non_null(a);
	return a;
}

static void test_auth_passwords(void **state)
{
	struct gs_mauth *a = make();
	assert_int_equal(check(a, basic("prom:s3cret"), 1), GS_AUTH_OK);
	/* remembered: no bcrypt, so not bound to one per poll */
	assert_int_equal(check(a, basic("prom:s3cret"), 1), GS_AUTH_OK);
	assert_int_equal(check(a, basic("prom:wrong"), 2), GS_AUTH_DENIED);
	/* one bcrypt check per poll: the next one waits */
	assert_int_equal(check(a, basic("prom:wrong2"), 2), GS_AUTH_LATER);
	assert_int_equal(check(a, basic("prom:wrong2"), 3), GS_AUTH_DENIED);
	assert_int_equal(check(a, basic("nobody:s3cret"), 4), GS_AUTH_DENIED);
	assert_int_equal(check(a, basic("other:s3cret"), 5), GS_AUTH_DENIED);
	assert_int_equal(check(a, basic("other:pw"), 6), GS_AUTH_OK);
	assert_int_equal(check(a, basic("prom:s3cret"), 6), GS_AUTH_OK); /* still remembered */
	assert_int_equal(check(a, basic("prom:s3cre"), 7), GS_AUTH_DENIED);
	assert_int_equal(check(a, basic("prom:s3cret\x01"), 8), GS_AUTH_DENIED);
	gs_mauth_free(a);
}

/* Malformed headers are denied without a bcrypt check (the poll's check is still free). */
static void test_auth_malformed(void **state)
{
	static const char *const bad[] = { "Bearer abc", "Basic", "Basic !!!!", "Basic cHJvbQ", "Basic cHJvbQ==",
					   "Basic =AAA", "Basic AA=A", "basic" };
	struct gs_mauth *a = make();
	assert_int_equal(check(a, NULL, 1), GS_AUTH_DENIED);
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
		assert_int_equal(check(a, bad[i], 1), GS_AUTH_DENIED);
	assert_int_equal(check(a, basic("prom"), 1), GS_AUTH_DENIED); /* no colon */
	assert_int_equal(check(a, "basic  cHJvbTpzM2NyZXQ=", 1), GS_AUTH_OK); /* scheme in any case */
	gs_mauth_free(a);
}

/* A hash libcrypt does not take is refused at start, with its line. */
static void test_auth_bad_hash(void **state)
{
	struct gs_mauth *a = make(), *b = NULL;
	char err[256];
	gs_mauth_free(a);
	memcpy(cfg.users[1].hash, "$2b$99$", 7); /* a cost bcrypt does not have */
	assert_int_equal(gs_mauth_new(&b, &cfg, "web.yml", err, sizeof err), EINVAL);
	assert_null(b);
	assert_non_null(strstr(err, "web.yml: line 4: libcrypt does not take the hash of user 'other'"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_passwords),
		cmocka_unit_test(test_auth_malformed),
		cmocka_unit_test(test_auth_bad_hash),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
