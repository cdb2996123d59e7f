// SPDX-License-Identifier: BSD-2-Clause
/* probe/read_inputs.c: inputs put in the order of their first packets (empty
 * ones first, ties in the command line's order), a repeat (the same file, or
 * the same first packet) marked against the first of its kind; a capture
 * looked at (plain and gzip-compressed alike), a text file refused. */
#include <errno.h>
#include <unistd.h>

#include "unit.h"
#include "../../probe/read_inputs.h"

static struct gs_input in_at(const char *path, bool has, int64_t ts, uint64_t hash, ino_t ino)
{
	struct gs_input i;
	memset(&i, 0, sizeof i);
	i.path = path;
	i.has_first = has;
	i.first_ts = ts;
	i.first_caplen = 60;
	i.first_hash = hash;
	i.dev = 1;
	i.ino = ino;
	i.same_as = -1;
	return i;
}

static void test_order_by_first_packet(void **state)
{
	/* parts 10, 2, 1 of a rotated capture, an empty one, and a tie */
	struct gs_input in[] = {
		in_at("part10", true, 3000, 30, 10), in_at("part2", true, 2000, 20, 11),
		in_at("part1", true, 1000, 10, 12), in_at("empty", false, 0, 0, 13),
		in_at("tie", true, 2000, 21, 14),
	};
	(void)state;
	gs_inputs_order(in, 5);
	assert_string_equal(in[0].path, "empty");
	assert_string_equal(in[1].path, "part1");
	assert_string_equal(in[2].path, "part2");
	assert_string_equal(in[3].path, "tie");
	assert_string_equal(in[4].path, "part10");
	for (int i = 0; i < 5; i++)
		assert_int_equal(in[i].same_as, -1);
}

static void test_repeats(void **state)
{
	struct gs_input in[] = {
		in_at("b", true, 2000, 20, 2), in_at("a", true, 1000, 10, 1),
		in_at("a-again", true, 1000, 10, 1),   /* the same file */
		in_at("a-copy", true, 1000, 10, 3),    /* the same first packet */
		in_at("a-other", true, 1000, 11, 4),   /* the same time, other bytes */
	};
	(void)state;
	gs_inputs_order(in, 5);
	assert_string_equal(in[0].path, "a");
	assert_int_equal(in[0].same_as, -1);
	assert_string_equal(in[1].path, "a-again");
	assert_int_equal(in[1].same_as, 0);
	assert_string_equal(in[2].path, "a-copy");
	assert_int_equal(in[2].same_as, 0);
	assert_string_equal(in[3].path, "a-other");
	assert_int_equal(in[3].same_as, -1);
	assert_string_equal(in[4].path, "b");
	assert_int_equal(in[4].same_as, -1);
}

/* A one-record classic pcap (nanoseconds) at `path`. */
static void write_pcap(const char *path)
{
	static const uint8_t hdr[24] = { 0x4d, 0x3c, 0xb2, 0xa1, 2, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0,
					 0xff, 0xff, 0, 0, 1, 0, 0, 0 };
	uint8_t rec[16 + 60] = { 0 };
	FILE *f = fopen(path, "wb");
	assert_non_null(f);
	rec[0] = 100;  /* 100 s */
	rec[4] = 7;    /* 7 ns */
	rec[8] = 60;
	rec[12] = 60;
	rec[16 + 12] = 0x08; /* IPv4, the rest zeros */
	assert_int_equal(fwrite(hdr, 1, sizeof hdr, f), sizeof hdr);
	assert_int_equal(fwrite(rec, 1, sizeof rec, f), sizeof rec);
	assert_int_equal(fclose(f), 0);
}

static void test_peek(void **state)
{
	char dir[] = "/tmp/gs-ut-inputs.XXXXXX", a[64], gz[64], txt[64], cmd[200], err[512];
	struct gs_input x, y;
	FILE *f;
	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(a, sizeof a, "%s/a.pcap", dir);
	snprintf(gz, sizeof gz, "%s/b", dir);
	snprintf(txt, sizeof txt, "%s/t.txt", dir);
	write_pcap(a);
	snprintf(cmd, sizeof cmd, "gzip -c %s > %s", a, gz);
	assert_int_equal(system(cmd), 0);
	f = fopen(txt, "w");
	assert_non_null(f);
	fputs("GET / HTTP/1.1\r\n\r\n", f);
	fclose(f);
	assert_int_equal(gs_input_peek(a, &x, err, sizeof err), GS_READ_OK);
	assert_true(x.has_first);
	assert_int_equal(x.first_ts, 100000000007LL);
	assert_int_equal(gs_input_peek(gz, &y, err, sizeof err), GS_READ_OK);
	assert_true(y.has_first);
	assert_int_equal(y.first_ts, x.first_ts);
	assert_int_equal(y.first_hash, x.first_hash);
	assert_int_equal(gs_input_peek(txt, &y, err, sizeof err), GS_READ_BAD_INPUT);
	assert_non_null(strstr(err, "t.txt: not a pcap or pcapng capture"));
	assert_int_equal(gs_input_peek(dir, &y, err, sizeof err), GS_READ_CANNOT_OPEN);
	assert_non_null(strstr(err, "is a directory"));
	assert_int_equal(gs_input_peek("-", &y, err, sizeof err), GS_READ_OK);
	assert_false(y.has_first);
	unlink(a);
	unlink(gz);
	unlink(txt);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_order_by_first_packet),
		UT(test_repeats),
		UT(test_peek),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
