/* SPDX-License-Identifier: BSD-2-Clause */
/* bare_loop: the floor for any libpcap reader.
 *
 *   bare_loop FILE...   ('-' for stdin)
 *
 * Opens each capture as giopscope's pcap tap does (pcap_fopen_offline with
 * nanosecond precision, over a stdio FILE), calls pcap_next_ex for every packet and
 * touches it: its time stamp, its lengths and its first and last captured bytes,
 * so that the packet's memory is really read. Nothing else: whatever giopscope
 * spends above this is decoding, reassembly, pairing and output.
 * Prints the packet count and a sum of what it touched (so the compiler cannot drop
 * the loop); exits 1 on a file libpcap cannot read.
 */
#include <pcap/pcap.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	uint64_t packets = 0, bytes = 0, sum = 0;
	if (argc < 2) {
		fputs("usage: bare_loop FILE...   ('-' for stdin) | --version\n", stderr);
		return 2;
	}
	if (!strcmp(argv[1], "--version")) {
		puts(pcap_lib_version());
		return 0;
	}
	for (int i = 1; i < argc; i++) {
		char err[PCAP_ERRBUF_SIZE] = "";
		FILE *f = strcmp(argv[i], "-") ? fopen(argv[i], "rb") : stdin;
		pcap_t *p = f ? pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, err)
			      : NULL;
		struct pcap_pkthdr *h;
		const u_char *d;
		int rc;
		if (!p) {
			fprintf(stderr, "bare_loop: %s: %s\n", argv[i], f ? err : "cannot open");
			if (f && f != stdin)
				fclose(f);
			return 1;
		}
		while ((rc = pcap_next_ex(p, &h, &d)) == 1) {
			packets++;
			bytes += h->caplen;
			sum += (uint64_t)h->ts.tv_sec + (uint64_t)h->ts.tv_usec + h->len;
			if (h->caplen)
				sum += d[0] + d[h->caplen - 1];
		}
		if (rc == PCAP_ERROR) {
			fprintf(stderr, "bare_loop: %s: %s\n", argv[i], pcap_geterr(p));
			pcap_close(p);
			return 1;
		}
		pcap_close(p);   /* closes f */
	}
	printf("%llu packets %llu bytes (sum %llx)\n", (unsigned long long)packets,
	       (unsigned long long)bytes, (unsigned long long)sum);
	return 0;
}
