/* SPDX-License-Identifier: BSD-2-Clause */
/* bare_walk: the floor for giopscope's own reading of a capture file.
 *
 *   bare_walk FILE...
 *
 * Maps each capture and walks it in place as `giopscope read` does
 * (probe/pcap_walk.h: gs_walk_open_file, gs_walk_next, the pages behind the
 * walk given back), touching each packet as bench/bare_loop.c does: its time
 * stamp, its lengths and its first and last captured bytes.  Nothing else:
 * no engine, no libpcap for the records.  Where the walker stops (a record it
 * does not vouch for, a file it does not map) bare_walk says so and exits 1:
 * it measures the walk only, never libpcap's reading on.
 * Prints the packet count and a sum of what it touched (the same line as
 * bare_loop's for a file both read whole).
 */
#include <stdint.h>
#include <stdio.h>

#include "../probe/pcap_walk.h"

int main(int argc, char **argv)
{
	uint64_t packets = 0, bytes = 0, sum = 0;
	if (argc < 2) {
		fputs("usage: bare_walk FILE...\n", stderr);
		return 2;
	}
	for (int i = 1; i < argc; i++) {
		struct gs_walk w;
		struct gs_walk_it it;
		struct gs_walk_rec r;
		size_t dropped = 0, drop_at = GS_WALK_KEEP + GS_WALK_DROP;
		int rc;
		if (!gs_walk_open_file(argv[i], &w)) {
			fprintf(stderr, "bare_walk: %s: not a file the walker maps\n", argv[i]);
			return 1;
		}
		gs_walk_start(&w, &it);
		while ((rc = gs_walk_next(&w, &it, &r)) == 1) {
			packets++;
			bytes += r.caplen;
			/* bare_loop's sum: seconds + nanoseconds + the length */
			sum += (uint64_t)r.ts / 1000000000u + (uint64_t)r.ts % 1000000000u + r.len;
			if (r.caplen)
				sum += r.data[0] + r.data[r.caplen - 1];
			if (it.off >= drop_at) {
				gs_walk_drop_behind(&w, it.off, &dropped);
				drop_at = dropped + GS_WALK_KEEP + GS_WALK_DROP;
			}
		}
		gs_walk_close(&w);
		if (rc != 0) {
			fprintf(stderr, "bare_walk: %s: the walker stops at offset %zu (libpcap's to read)\n", argv[i],
				it.off);
			return 1;
		}
	}
	printf("%llu packets %llu bytes (sum %llx)\n", (unsigned long long)packets,
	       (unsigned long long)bytes, (unsigned long long)sum);
	return 0;
}
