/* SPDX-License-Identifier: BSD-2-Clause */
/* analysis/orb_profile.c: the ORB profiles of attach --orb -- the shipped
 * omniORB one, and one-line errors for bad ones. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "../../analysis/orb_profile.h"
#include "../../analysis/thread_log.h"

static void shipped_omniorb(void **state)
{
	struct gs_orb_profile p;
	char text[8192], err[256];
	size_t n;
	FILE *f = fopen("probe/orb_profiles/omniorb.txt", "r");
	(void)state;
	assert_non_null(f);
	n = fread(text, 1, sizeof text - 1, f);
	fclose(f);
	text[n] = '\0';
	assert_true(gs_orb_profile_parse(&p, text, "omniorb", err, sizeof err));
	assert_string_equal(p.name, "omniorb");
	assert_string_equal(p.library, "libomniORB4.so");
	assert_int_equal(p.n, 3);
	assert_string_equal(p.probe[0].sym, "_ZN4omni6GIOP_S14ReceiveRequestER18omniCallDescriptor");
	assert_int_equal(p.probe[0].edge, GS_TEDGE_START);
	assert_true(p.probe[0].ret);
	assert_string_equal(p.probe[1].sym, "_ZN4omni6GIOP_S9SendReplyEv");
	assert_int_equal(p.probe[1].edge, GS_TEDGE_END);
	assert_false(p.probe[1].ret);
	assert_string_equal(p.probe[2].sym, "_ZN4omni6GIOP_S13SendExceptionEPN5CORBA9ExceptionE");
	assert_int_equal(p.probe[2].edge, GS_TEDGE_END);
}

static void bad(const char *text, const char *want)
{
	struct gs_orb_profile p;
	char err[256];
	assert_false(gs_orb_profile_parse(&p, text, "t.txt", err, sizeof err));
	if (!strstr(err, want))
		fail_msg("error '%s' lacks '%s'", err, want);
	assert_null(strchr(err, '\n'));
}

static void bad_profiles(void **state)
{
	char big[700];
	(void)state;
	bad("library l.so\nprobe start return a\nprobe end entry b\n", "no orb or library line");
	bad("orb x\nlibrary l.so\nprobe middle return a\n", "line 3: the edge is start or end");
	bad("orb x\nlibrary l.so\nprobe start exit a\n", "line 3: where is entry or return");
	bad("orb x\nlibrary l.so\nprobe start return\n", "line 3: want: orb NAME");
	bad("orb x\nlibrary l.so\nprobe start return a b\n", "line 3: want: orb NAME");
	bad("orb x\nlibrary l.so\nprobe start return a\n", "wants at least one start and one end probe");
	bad("orb x\nlibrary l.so\nwhatever\n", "line 3");
	memset(big, 'a', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	bad(big, "line 1: line too long");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(shipped_omniorb),
		cmocka_unit_test(bad_profiles),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
