/* SPDX-License-Identifier: BSD-2-Clause */
/* The option table (probe/options.c): every command's getopt_long table and
 * short-option string come out whole and without clashes, and every option a
 * command takes is named in its --help. */
#include "unit.h"
#include "../../probe/options.h"

#include <string.h>

static const unsigned cmds[] = { GS_CMD_READ, GS_CMD_LIVE, GS_CMD_ATTACH, GS_CMD_DPDK, GS_CMD_MERGE };

static void test_getopt_tables(void **state)
{
	for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++) {
		struct gs_getopt g;
		gs_options_getopt(&g, cmds[k], true);
		assert_int_equal(g.shortopts[0], ':');
		assert_null(g.longopts[g.n].name);
		for (unsigned i = 0; i < g.n; i++) {
			assert_non_null(g.longopts[i].name);
			/* a name and a code once in a table */
			for (unsigned j = i + 1; j < g.n; j++) {
				assert_string_not_equal(g.longopts[i].name, g.longopts[j].name);
				assert_int_not_equal(g.longopts[i].val, g.longopts[j].val);
			}
			/* a code below 256 is the option's letter, in the short-option string */
			if (g.longopts[i].val < 256)
				assert_non_null(strchr(g.shortopts + 1, g.longopts[i].val));
		}
		/* a letter once, and followed by ':' exactly when it takes a value */
		for (const char *p = g.shortopts + 1; *p; p++) {
			if (*p == ':')
				continue;
			assert_null(strchr(p + 1, *p));
			for (unsigned i = 0; i < gs_options_count; i++)
				if (gs_options[i].short_name == *p && gs_options[i].cmds & cmds[k])
					assert_int_equal(p[1] == ':', gs_options[i].has_arg == required_argument);
		}
		gs_options_getopt(&g, cmds[k], false);
		assert_int_not_equal(g.shortopts[0], ':');
	}
	/* what the commands took before the table, unchanged */
	{
		struct gs_getopt g;
		gs_options_getopt(&g, GS_CMD_READ, true);
		assert_string_equal(g.shortopts, ":o:qh");
		gs_options_getopt(&g, GS_CMD_LIVE, true);
		assert_string_equal(g.shortopts, ":i:w:Z:o:qh");
		gs_options_getopt(&g, GS_CMD_DPDK, true);
		assert_string_equal(g.shortopts, ":i:o:qh");
		gs_options_getopt(&g, GS_CMD_ATTACH, false);
		assert_string_equal(g.shortopts, "p:c:i:Z:o:qh");
	}
}

/* every long option a command takes is in its --help (the session commands name
 * the table bounds in one line), and each help text is of an option the command takes */
static void test_usage_names_every_option(void **state)
{
	for (size_t k = 0; k < sizeof cmds / sizeof *cmds; k++) {
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		struct gs_getopt g;
		assert_non_null(f);
		gs_options_usage(f, cmds[k], "head\n", "tail\n");
		fclose(f);
		assert_true(strncmp(text, "head\n", 5) == 0);
		assert_string_equal(text + len - 5, "tail\n");
		gs_options_getopt(&g, cmds[k], true);
		for (unsigned i = 0; i < g.n; i++) {
			char name[64];
			if (strcmp(g.longopts[i].name, "help") == 0)
				continue;
			snprintf(name, sizeof name, "--%s", g.longopts[i].name);
			if (!strstr(text, name))
				fail_msg("command %#x: %s not in its --help", cmds[k], name);
		}
		free(text);
	}
	for (unsigned i = 0; i < gs_options_count; i++) {
		const struct gs_option *o = &gs_options[i];
		if (!o->name && !o->short_name)
			continue; /* a line of help only */
		for (unsigned h = 0; h < GS_OPTION_HELPS; h++)
			assert_int_equal(o->help[h].cmds & ~o->cmds, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_getopt_tables),
		UT(test_usage_names_every_option),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
