/* SPDX-License-Identifier: BSD-2-Clause */
/* The getopt_long error tail every command shares (probe/opt_refuse.c). */
#include "unit.h"
#include "../../probe/opt_refuse.h"

static char *refused(const char *cmd, int opt, const char *word, const char *hint)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(gs_opt_refuse(f, cmd, opt, word, hint), 2);
	assert_int_equal(fclose(f), 0);
	ut_keep(buf, free);
	return buf;
}

static void test_refuse(void **state)
{
	assert_string_equal(refused("read", ':', "--tail", NULL),
			    "giopscope read: --tail needs a value (giopscope read --help)\n");
	assert_string_equal(refused("live", '?', "--nope", NULL),
			    "giopscope live: unknown option '--nope' (giopscope live --help)\n");
	assert_string_equal(refused("dpdk", '?', "-x", "; more"),
			    "giopscope dpdk: unknown option '-x' (giopscope dpdk --help; more)\n");
	/* any other code than ':' is an option the command does not take */
	assert_string_equal(refused("merge", 300, "--pairs", NULL),
			    "giopscope merge: unknown option '--pairs' (giopscope merge --help)\n");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_refuse),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
