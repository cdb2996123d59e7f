/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer harness: the analysis engine (flows, reassembly, framer, pairing,
 * call table, sinks) fed synthetic TCP segments.
 *
 * Input layout (tests/fuzz/make_seeds.py writes seeds in it from real captures):
 *
 *   byte 0   configuration
 *            bit 0     unordered output (live-style) instead of ordered
 *            bit 1     --ports 2809 (a port bitmap) instead of GIOP by its magic
 *            bit 2     max message size 4096 instead of 256M
 *            bit 3     a 1 ms reply timeout and gs_engine_tick after every segment
 *            bits 4-5  head_max 64, 256, 4096, 64
 *            bits 6-7  max_flows 2, 3, 16, 64 (small tables: eviction is exercised)
 *   then segments, each an 8-byte header and its payload:
 *     u8  h      bits 0-1 connection (0..3; 3 is IPv6; 2 has server port 683),
 *                bit 2 direction (0 client->server), bit 3 snapped (only half the
 *                payload captured), bit 4 time goes back, bit 5 VLAN tag,
 *                bits 6-7 payload length high bits (x256)
 *     u8  flags  TCP flags as on the wire (FIN 1, SYN 2, RST 4, PSH 8, ACK 16)
 *     i16 dseq   little endian: sequence number relative to the next expected one
 *     u8  len    payload length low bits (length = (h>>6)*256 + len)
 *     u8  dts    microseconds since the previous segment
 *     i8  dack   acknowledgement number relative to the other side's next byte
 *     u8  x      bits 0-3: IPv4 total length 0 (TSO) when 1; others spare
 *   the payload bytes follow (fewer when the input ends).
 *
 * Each call the engine emits is written through the CSV and JSONL sinks (to
 * /dev/null) and added to the statistics; the summary is written at the end in
 * all three formats.  Checked: every call is emitted exactly once, none is left
 * open after gs_engine_finish, held out-of-order bytes are all released.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../analysis/engine.h"
#include "../../analysis/reasm.h"
#include "../../analysis/sink_pairs.h"
#include "../../analysis/stats.h"
#include "../../analysis/summary.h"

static FILE *devnull;
static uint8_t ports[8192];
static uint64_t emitted;
static int verbose = -1;
static uint8_t seen[1 << 16]; /* call serials emitted (a serial numbers one call) */
static struct gs_stats stats;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_engine: invariant broken: %s\n", what);
		abort();
	}
}

static void on_call(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	(void)arg;
	emitted++;
	check(c->outcome != GS_OUT_OPEN, "emitted calls have ended");
	if (c->serial < sizeof seen * 8) {
		check(!(seen[c->serial >> 3] & (1u << (c->serial & 7))), "a call is emitted once, not twice");
		seen[c->serial >> 3] |= (uint8_t)(1u << (c->serial & 7));
	}
	if (c->outcome == GS_OUT_REPLY)
		check((c->flags & GS_CF_REP_SEEN) != 0, "a REPLY outcome has seen its reply");
	gs_pairs_write(verbose ? stderr : devnull, GS_PAIRS_CSV, gs_engine_strings(e), c);
	gs_pairs_write(devnull, GS_PAIRS_JSONL, gs_engine_strings(e), c);
	(void)gs_call_status(c);
	gs_stats_add(&stats, c);
}

struct conn {
	uint8_t cli[16], srv[16];
	uint16_t cport, sport;
	bool v6;
	uint32_t next[2];
};

static size_t put_frame(uint8_t *f, const struct conn *c, int d, uint8_t flags, uint32_t seq,
			uint32_t ack, const uint8_t *pl, uint32_t len, bool vlan, bool tso)
{
	size_t o = 0, ipo;
	const uint8_t *src = d ? c->srv : c->cli, *dst = d ? c->cli : c->srv;
	uint16_t sp = d ? c->sport : c->cport, dp = d ? c->cport : c->sport;
	uint32_t tcplen = 20 + len;

	memcpy(f, "\x02\0\0\0\0\x02\x02\0\0\0\0\x01", 12);
	o = 12;
	if (vlan) {
		memcpy(f + o, "\x81\x00\x00\x07", 4);
		o += 4;
	}
	f[o++] = c->v6 ? 0x86 : 0x08;
	f[o++] = c->v6 ? 0xdd : 0x00;
	ipo = o;
	if (c->v6) {
		memset(f + o, 0, 40);
		f[o] = 0x60;
		f[o + 4] = (uint8_t)(tcplen >> 8);
		f[o + 5] = (uint8_t)tcplen;
		f[o + 6] = 6;
		f[o + 7] = 64;
		memcpy(f + o + 8, src, 16);
		memcpy(f + o + 24, dst, 16);
		o += 40;
	} else {
		uint32_t tot = tso ? 0 : 20 + tcplen;
		memset(f + o, 0, 20);
		f[o] = 0x45;
		f[o + 2] = (uint8_t)(tot >> 8);
		f[o + 3] = (uint8_t)tot;
		f[o + 6] = 0x40;
		f[o + 8] = 64;
		f[o + 9] = 6;
		memcpy(f + o + 12, src, 4);
		memcpy(f + o + 16, dst, 4);
		o += 20;
	}
	(void)ipo;
	f[o + 0] = (uint8_t)(sp >> 8);
	f[o + 1] = (uint8_t)sp;
	f[o + 2] = (uint8_t)(dp >> 8);
	f[o + 3] = (uint8_t)dp;
	f[o + 4] = (uint8_t)(seq >> 24);
	f[o + 5] = (uint8_t)(seq >> 16);
	f[o + 6] = (uint8_t)(seq >> 8);
	f[o + 7] = (uint8_t)seq;
	f[o + 8] = (uint8_t)(ack >> 24);
	f[o + 9] = (uint8_t)(ack >> 16);
	f[o + 10] = (uint8_t)(ack >> 8);
	f[o + 11] = (uint8_t)ack;
	f[o + 12] = 0x50;
	f[o + 13] = flags;
	f[o + 14] = 0xff;
	f[o + 15] = 0xff;
	memset(f + o + 16, 0, 4);
	o += 20;
	memcpy(f + o, pl, len);
	return o + len;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint32_t head_maxes[4] = { 64, 256, 4096, 64 };
	static const uint32_t max_flows[4] = { 2, 3, 16, 64 };
	struct gs_config cfg;
	struct gs_engine *e;
	struct conn conns[4];
	size_t pos = 1;
	int64_t ts = 1700000000LL * 1000000000LL;
	uint8_t cfgb;
	static uint8_t frame[18 + 40 + 20 + 1024 + 1];

	if (size < 1)
		return 0;
	if (!devnull) {
		verbose = getenv("FUZZ_VERBOSE") != NULL;
		devnull = fopen("/dev/null", "w");
		ports[2809 >> 3] |= 1u << (2809 & 7);
	}
	cfgb = data[0];
	gs_config_default(&cfg);
	cfg.ordered = !(cfgb & 1);
	cfg.port_bitmap = (cfgb & 2) ? ports : NULL;
	if (cfgb & 4)
		cfg.max_message_size = 4096;
	if (cfgb & 8)
		cfg.reply_timeout_ns = 1000000;
	cfg.head_max = head_maxes[(cfgb >> 4) & 3];
	cfg.max_flows = max_flows[(cfgb >> 6) & 3];
	cfg.max_open_calls = 16;
	cfg.max_ooo_bytes = 2048;
	cfg.max_ooo_total = 4096;
	cfg.max_strings = 32;
	cfg.linger_ns = 50000;
	if (gs_engine_new(&e, &cfg, on_call, NULL) != 0)
		return 0;
	if (gs_stats_init(&stats, 8, cfg.max_strings + 1) != 0) {
		gs_engine_free(e);
		return 0;
	}
	emitted = 0;
	memset(seen, 0, sizeof seen);

	for (int i = 0; i < 4; i++) {
		struct conn *c = &conns[i];
		memset(c, 0, sizeof *c);
		c->v6 = i == 3;
		if (c->v6) {
			c->cli[0] = c->srv[0] = 0xfd;
			c->cli[15] = 1;
			c->srv[15] = 2;
		} else {
			memcpy(c->cli, "\x0a\x00\x00\x01", 4);
			memcpy(c->srv, "\x0a\x00\x00\x02", 4);
		}
		c->cport = (uint16_t)(40000 + i);
		c->sport = i == 2 ? 683 : 2809;
		/* connection 1 wraps its sequence numbers almost at once */
		c->next[0] = i == 1 ? 0xffffff00u : 1000u * (uint32_t)(i + 1);
		c->next[1] = i == 1 ? 0xfffffff0u : 5000u * (uint32_t)(i + 1);
	}

	while (pos + 8 <= size) {
		const uint8_t *r = data + pos;
		uint8_t h = r[0], flags = r[1];
		int16_t dseq = (int16_t)(uint16_t)(r[2] | r[3] << 8);
		uint32_t len = (uint32_t)(h >> 6) * 256u + r[4];
		int8_t dack = (int8_t)r[6];
		struct conn *c = &conns[h & 3];
		int d = (h >> 2) & 1;
		uint32_t seq, ack, caplen;
		size_t flen;

		pos += 8;
		if (len > size - pos)
			len = (uint32_t)(size - pos);
		if (h & 0x10)
			ts -= (int64_t)r[5] * 1000;
		else
			ts += (int64_t)r[5] * 1000;
		seq = c->next[d] + (uint32_t)(int32_t)dseq;
		ack = c->next[!d] + (uint32_t)(int32_t)dack;
		flen = put_frame(frame, c, d, flags, seq, ack, data + pos, len, (h & 0x20) != 0,
				 (r[7] & 0x0f) == 1 && !c->v6);
		pos += len;
		c->next[d] = seq + len + ((flags & GS_TCP_SYN) ? 1 : 0) + ((flags & GS_TCP_FIN) ? 1 : 0);
		caplen = (uint32_t)flen;
		if (h & 0x08)
			caplen -= len - len / 2;
		{
			/* exactly the captured bytes on the heap: reads past them are caught */
			uint8_t *cp = malloc(caplen ? caplen : 1);
			if (!cp)
				break;
			memcpy(cp, frame, caplen);
			gs_engine_frame(e, GS_DLT_EN10MB, ts, cp, caplen, (uint32_t)flen);
			free(cp);
		}
		if (cfg.reply_timeout_ns)
			gs_engine_tick(e, ts);
	}
	gs_engine_finish(e);
	{
		const struct gs_counters *cn = gs_engine_counters(e);
		struct gs_summary_info info = { .source = "fuzz", .first_ts = gs_engine_first_ts(e),
						.last_ts = gs_engine_last_ts(e) };
		if (verbose)
			fprintf(stderr, "fuzz_engine: %llu packets, %llu segments, %llu GIOP messages, %llu calls "
				"(%llu emitted), %llu replies paired, %llu malformed, %llu flows evicted, "
				"%llu open calls evicted, %llu request ids reused\n", (unsigned long long)cn->packets,
				(unsigned long long)cn->segments, (unsigned long long)cn->giop_messages,
				(unsigned long long)cn->calls, (unsigned long long)emitted,
				(unsigned long long)cn->replies_paired, (unsigned long long)cn->giop_malformed,
				(unsigned long long)cn->flows_evicted, (unsigned long long)cn->open_calls_evicted,
				(unsigned long long)cn->request_id_reused);
		check(gs_engine_open_calls(e) == 0, "no call open after finish");
		check(emitted == cn->calls, "every call emitted exactly once");
		check(gs_engine_reasm(e)->ooo_total == 0, "held out-of-order bytes released");
		gs_summary_write(devnull, GS_SUM_TEXT, &stats, cn, gs_engine_strings(e), &info);
		gs_summary_write(devnull, GS_SUM_CSV, &stats, cn, gs_engine_strings(e), &info);
		gs_summary_write(devnull, GS_SUM_JSONL, &stats, cn, gs_engine_strings(e), &info);
	}
	gs_stats_free(&stats);
	gs_engine_free(e);
	return 0;
}
