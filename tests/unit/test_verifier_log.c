/* SPDX-License-Identifier: BSD-2-Clause */
/* probe/verifier_log.c: what attach reads in the kernel's verifier log (log
 * level 4: the statistics, and the reason when it refuses) -- logs of the
 * shape 6.18 writes: the tap loaded, the tap refused at the limit (session 12,
 * before the lead's restructuring), a tp_btf program reading past its
 * arguments (its reason as attach --check showed it). */
#include "unit.h"
#include "../../probe/verifier_log.h"

#include <string.h>

static const char loaded[] =
	"verification time 15212 usec\n"
	"stack depth 64+96+0\n"
	"processed 26629 insns (limit 1000000) max_states_per_insn 4 total_states 1520 peak_states 802 mark_read 0\n";

static const char too_large[] =
	"BPF program is too large. Processed 1000001 insn\n"
	"verification time 9804322 usec\n"
	"stack depth 96+120\n"
	"processed 1000001 insns (limit 1000000) max_states_per_insn 72 total_states 31605 peak_states 108374 mark_read 0\n";

static const char refused[] =
	"func#0 @0\n"
	"invalid bpf_context access off=72 size=8\n"
	"; return on_tcp_send((struct sock *)ctx[0], (const struct msghdr *)ctx[9]); @ giop_tap.bpf.c:98\n"
	"verification time 21 usec\n"
	"stack depth 0\n"
	"processed 1 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 mark_read 0\n";

static void test_insns(void **state)
{
	assert_int_equal(gs_vlog_insns(loaded), 26629);
	/* the statistics line, not the capitalised "Processed" of the too-large line */
	assert_int_equal(gs_vlog_insns(too_large), 1000001);
	assert_int_equal(gs_vlog_insns(refused), 1);
	assert_int_equal(gs_vlog_insns(""), -1);
	assert_int_equal(gs_vlog_insns(NULL), -1);
}

static void test_too_large(void **state)
{
	assert_true(gs_vlog_too_large(too_large));
	assert_false(gs_vlog_too_large(loaded));
	assert_false(gs_vlog_too_large(refused));
	assert_false(gs_vlog_too_large(NULL));
}

static void test_reason(void **state)
{
	char why[256];
	gs_vlog_reason(refused, why, sizeof why);
	assert_string_equal(why, "invalid bpf_context access off=72 size=8; ; return on_tcp_send((struct sock *)ctx[0], "
				 "(const struct msghdr *)ctx[9]); @ giop_tap.bpf.c:98");
	assert_true(gs_vlog_has_reason(refused));
	/* a program that loaded: statistics only, no reason */
	gs_vlog_reason(loaded, why, sizeof why);
	assert_string_equal(why, "");
	assert_false(gs_vlog_has_reason(loaded));
	assert_false(gs_vlog_has_reason(""));
	/* cut to the buffer, still a string */
	gs_vlog_reason(refused, why, 10);
	assert_int_equal(strlen(why), 9);
}

static void test_count(void **state)
{
	char b[32];
	assert_string_equal(gs_vlog_count(1000001, b, sizeof b), "1 000 001");
	assert_string_equal(gs_vlog_count(26629, b, sizeof b), "26 629");
	assert_string_equal(gs_vlog_count(999, b, sizeof b), "999");
	assert_string_equal(gs_vlog_count(0, b, sizeof b), "0");
	assert_string_equal(gs_vlog_count(-1, b, sizeof b), "0");
	assert_string_equal(gs_vlog_count(1000000, b, 6), "1 00");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_insns),
		cmocka_unit_test(test_too_large),
		cmocka_unit_test(test_reason),
		cmocka_unit_test(test_count),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
