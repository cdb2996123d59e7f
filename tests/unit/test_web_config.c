// SPDX-License-Identifier: BSD-2-Clause
/* probe/web_config.c: the --metrics-web-config reader, on good files and on
 * malformed ones (each refused with the line at fault). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "../../probe/web_config.h"

#define HASH "$2b$10$abcdefghijklmnopqrstuuFmoaFl.vFyZr1SAM0QSc7nDdfr8GR4a"

static struct gs_web_config cfg;

static bool parse(const char *text, char *why, size_t whylen)
{
	why[0] = '\0';
	return gs_web_config_parse(&cfg, text, strlen(text), why, whylen);
}

static void test_web_config_full(void **state)
{
	char why[256];
	const char *text = "---\n"
			   "# comment\n"
			   "tls_server_config:   # trailing comment\n"
			   "  cert_file: /etc/gs/server.crt\n"
			   "  key_file: \"/etc/gs/server key.pem\"\n"
			   "  client_ca_file: 'it''s/ca.crt'\n"
			   "  client_auth_type: RequireAndVerifyClientCert\n"
			   "  min_version: TLS13\r\n"
			   "\n"
			   "basic_auth_users:\n"
			   "    prometheus: " HASH "\n"
			   "    'other user': '" HASH "'  # quoted\n";
	assert_true(parse(text, why, sizeof why));
	assert_true(cfg.tls);
	assert_string_equal(cfg.cert_file, "/etc/gs/server.crt");
	assert_string_equal(cfg.key_file, "/etc/gs/server key.pem");
	assert_string_equal(cfg.client_ca_file, "it's/ca.crt");
	assert_int_equal(cfg.client_auth, GS_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT);
	assert_int_equal(cfg.min_version, 13);
	assert_int_equal(cfg.max_version, 0);
	assert_int_equal(cfg.n_users, 2);
	assert_string_equal(cfg.users[0].name, "prometheus");
	assert_string_equal(cfg.users[0].hash, HASH);
	assert_string_equal(cfg.users[1].name, "other user");
	assert_int_equal(cfg.users[1].line, 12);
	assert_int_equal(cfg.line_cert, 4);
}

static void test_web_config_empty_and_auth_only(void **state)
{
	char why[256];
	assert_true(parse("", why, sizeof why));
	assert_false(cfg.tls);
	assert_int_equal(cfg.n_users, 0);
	assert_true(parse("# nothing\ntls_server_config:\n", why, sizeof why)); /* no TLS, as exporter-toolkit */
	assert_false(cfg.tls);
	assert_true(parse("basic_auth_users:\n  u: " HASH, why, sizeof why)); /* no final newline */
	assert_false(cfg.tls);
	assert_int_equal(cfg.n_users, 1);
}

/* Each malformed file: refused, the reason starting with its line. */
static void test_web_config_malformed(void **state)
{
	static const struct { const char *text; const char *why; } bad[] = {
		{ "tls_server_config:\n  cert_file: a\n", "line 1: tls_server_config wants both" },
		{ "tls_server_config:\n\tcert_file: a\n", "line 2: a tab" },
		{ "tls_server_config:\n  cert_file: a\n   key_file: b\n", "line 3: indented by 3" },
		{ "tls_server_config:\n  cert_file: a\n  cert_file: b\n", "line 3: cert_file given twice (also on line 2)" },
		{ "tls_server_config:\n  cipher_suites:\n    - x\n", "line 2: tls_server_config: cipher_suites is not supported" },
		{ "tls_server_config:\n  certfile: a\n", "line 2: tls_server_config has no key 'certfile'" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS14\n", "line 4: min_version 'TLS14'" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  min_version: TLS13\n  max_version: TLS12\n",
		  "line 4: min_version is above" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_ca_file: c\n", "line 4: client_ca_file without" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: VerifyClientCertIfGiven\n",
		  "line 4: client_auth_type verifies" },
		{ "tls_server_config:\n  cert_file: a\n  key_file: b\n  client_auth_type: Maybe\n", "line 4: client_auth_type 'Maybe'" },
		{ "tls_server_config:\n  cert_file:\n  key_file: b\n", "line 2: cert_file wants a file name" },
		{ "tls_server_config:\n  cert_file: \"\"\n  key_file: b\n", "line 2: cert_file wants a file name" },
		{ "tls_server_config: {cert_file: a}\n", "line 1: '{' starts YAML" },
		{ "tls_server_config: yes\n", "line 1: tls_server_config wants its keys" },
		{ "http_server_config:\n  http2: true\n", "line 1: http_server_config is not supported" },
		{ "web:\n", "line 1: unknown key 'web'" },
		{ "  cert_file: a\n", "line 1: an indented line before" },
		{ "basic_auth_users:\n  u: secret\n", "line 2: the password of user 'u' is not a bcrypt hash" },
		{ "basic_auth_users:\n  u: $1$abc$defgh\n", "line 2: the password of user 'u'" },
		{ "basic_auth_users:\n  u: $2b$03$abcdefghijklmnopqrstuuFmoaFl.vFyZr1SAM0QSc7nDdfr8GR4a\n", "line 2: the password of user 'u'" },
		{ "basic_auth_users:\n  u: $2b$10$abcdefghijklmnopqrstuuFmoaFl!vFyZr1SAM0QSc7nDdfr8GR4a\n", "line 2: the password of user 'u'" },
		{ "basic_auth_users:\n  u: " HASH "\n  u: " HASH "\n", "line 3: user 'u' given twice (also on line 2)" },
		{ "basic_auth_users:\n  \"a:b\": " HASH "\n", "line 2: basic_auth_users: a user name" },
		{ "basic_auth_users:\n  u: \"" HASH "\n", "line 2: the quoted text has no closing \"" },
		{ "basic_auth_users:\n  u: \"\\n\"\n", "line 2: escape \\n is not supported" },
		{ "basic_auth_users:\n  u: 'x' y\n", "line 2: unexpected text after the value" },
		{ "basic_auth_users:\n  u: a: b\n", "line 2: a value with ': '" },
		{ "basic_auth_users:\n  - u\n", "line 2: lists and complex keys" },
		{ "basic_auth_users:\n  u &x: y\n", "line 2: the password of user 'u &x'" },
		{ "basic_auth_users:\n  *alias: y\n", "line 2: '*' starts YAML" },
		{ "basic_auth_users\n", "line 1: 'basic_auth_users' is not followed by ':'" },
		{ "basic_auth_users:\n  u: |\n", "line 2: '|' starts YAML" },
		{ "tls_server_config:\n---\n", "line 2: a second YAML document" },
		{ "...\n", "line 1: '...'" },
		{ "basic_auth_users:\n  u: a\x01\n", "line 2: control character 0x01" },
		{ "tls_server_config:\ntls_server_config:\n", "line 2: tls_server_config given twice (also on line 1)" },
	};
	char why[256];
	for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
		bool ok = parse(bad[i].text, why, sizeof why);
		if (ok || strncmp(why, bad[i].why, strlen(bad[i].why)) != 0)
			fail_msg("case %zu: %s: got %s '%s', want '%s...'", i, bad[i].text, ok ? "accepted" : "refused",
				 why, bad[i].why);
	}
}

/* A NUL inside the text and a value longer than its buffer: refused, nothing read past the end. */
static void test_web_config_bounds(void **state)
{
	char why[256], big[GS_WEB_PATH_MAX + 64];
	static const char nul[] = "basic_auth_users:\n  u: a\0b\n";
	assert_false(gs_web_config_parse(&cfg, nul, sizeof nul - 1, why, sizeof why));
	assert_non_null(strstr(why, "control character 0x00"));
	snprintf(big, sizeof big, "tls_server_config:\n  cert_file: %0*d\n", GS_WEB_PATH_MAX, 7);
	assert_false(parse(big, why, sizeof why));
	assert_non_null(strstr(why, "line 2: the value is longer"));
	/* the text cut anywhere: never read past the length given, accepted or refused */
	{
		const char *t = "tls_server_config:\n  cert_file: 'a'\n  key_file: \"b\\\\\"\n";
		size_t n = strlen(t);
		for (size_t cut = 0; cut <= n; cut++) {
			char *copy = malloc(cut ? cut : 1);
			assert_non_null(copy);
			memcpy(copy, t, cut);
			(void)gs_web_config_parse(&cfg, copy, cut, why, sizeof why);
			free(copy);
		}
	}
}

/* gs_web_config_load: relative names from the file's folder; a missing file named. */
static void test_web_config_load(void **state)
{
	char dir[] = "/tmp/gs-webcfg.XXXXXX", path[128], err[512];
	FILE *f;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof path, "%s/web.yml", dir);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs("tls_server_config:\n  cert_file: s.crt\n  key_file: /abs/s.key\n", f);
	fclose(f);
	assert_int_equal(gs_web_config_load(&cfg, path, err, sizeof err), 0);
	assert_true(strlen(cfg.cert_file) > 6 && !strcmp(cfg.cert_file + strlen(dir), "/s.crt") &&
		    !strncmp(cfg.cert_file, dir, strlen(dir)));
	assert_string_equal(cfg.key_file, "/abs/s.key");
	unlink(path);
	rmdir(dir);
	assert_int_equal(gs_web_config_load(&cfg, path, err, sizeof err), 2 /* ENOENT */);
	assert_non_null(strstr(err, "web.yml: No such file"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_web_config_full),
		cmocka_unit_test(test_web_config_empty_and_auth_only),
		cmocka_unit_test(test_web_config_malformed),
		cmocka_unit_test(test_web_config_bounds),
		cmocka_unit_test(test_web_config_load),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
