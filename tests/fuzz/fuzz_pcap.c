/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer harness: a whole capture file (pcap or pcapng) through the real
 * offline tap, probe/tap_pcap.c (libpcap pcap_fopen_offline with nanosecond
 * time stamps, link type check, time stamp conversion), into the engine and
 * the sinks, as `giopscope read FILE --pairs` does.
 *
 * The input is written to a memfd and read back through /proc/self/fd/N.
 * libpcap itself is not instrumented: only giopscope's code is checked.
 * The engine is given small tables so that eviction paths run as well.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../../analysis/engine.h"
#include "../../analysis/sink_pairs.h"
#include "../../analysis/stats.h"
#include "../../analysis/summary.h"
#include "../../probe/tap_pcap.h"

/* probe/main.c defines it for the program (SIGINT); tap_pcap.c polls it.  Weak, so
 * that this harness still links if it moves into a file linked here. */
__attribute__((weak)) volatile sig_atomic_t gs_stop_requested;

static FILE *devnull;
static int memfd = -1;
static char path[64];
static uint64_t emitted;
static struct gs_stats stats;

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_pcap: invariant broken: %s\n", what);
		abort();
	}
}

static void on_call(void *arg, const struct gs_engine *e, const struct gs_call *c)
{
	(void)arg;
	emitted++;
	gs_pairs_write(devnull, GS_PAIRS_CSV, gs_engine_strings(e), c);
	gs_stats_add(&stats, c);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct gs_config cfg;
	struct gs_engine *e;
	struct gs_read_progress prog = { 0 };
	char reason[512];
	int snaplen = 0;
	enum gs_read_result r;

	if (memfd < 0) {
		devnull = fopen("/dev/null", "w");
		memfd = memfd_create("fuzz_pcap", 0);
		if (memfd < 0 || !devnull)
			abort();
		snprintf(path, sizeof path, "/proc/self/fd/%d", memfd);
	}
	if (ftruncate(memfd, 0) != 0 || pwrite(memfd, data, size, 0) != (ssize_t)size)
		abort();

	gs_config_default(&cfg);
	cfg.max_flows = 8;
	cfg.max_open_calls = 64;
	cfg.max_ooo_bytes = 4096;
	cfg.max_ooo_total = 16384;
	cfg.max_strings = 64;
	if (gs_engine_new(&e, &cfg, on_call, NULL) != 0)
		return 0;
	if (gs_stats_init(&stats, 16, cfg.max_strings + 1) != 0) {
		gs_engine_free(e);
		return 0;
	}
	emitted = 0;
	reason[0] = '\0';
	r = gs_pcap_read_file(path, e, &prog, &snaplen, reason, sizeof reason);
	check(r == GS_READ_OK || r == GS_READ_BAD_INPUT, "a file that opens is OK or bad input");
	if (r != GS_READ_OK)
		check(reason[0] != '\0' && strchr(reason, '\n') == NULL, "a one-line reason");
	gs_engine_finish(e);
	{
		const struct gs_counters *cn = gs_engine_counters(e);
		struct gs_summary_info info = { .source = "fuzz", .first_ts = gs_engine_first_ts(e),
						.last_ts = gs_engine_last_ts(e) };
		if (getenv("FUZZ_VERBOSE"))
			fprintf(stderr, "fuzz_pcap: %s; %llu packets, %llu calls\n", r == GS_READ_OK ? "ok" : reason,
				(unsigned long long)cn->packets, (unsigned long long)cn->calls);
		check(emitted == cn->calls, "every call emitted exactly once");
		gs_summary_write(devnull, GS_SUM_TEXT, &stats, cn, gs_engine_strings(e), &info);
	}
	gs_stats_free(&stats);
	gs_engine_free(e);
	return 0;
}
