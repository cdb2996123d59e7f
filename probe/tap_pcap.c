#include "tap_pcap.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "../decoders/link.h"
#include "commands.h"

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static void progress(struct gs_read_progress *p, const char *path, FILE *fp, off_t size, bool last)
{
	int64_t now = mono_ns();
	if (!last && now - p->last_print_ns < 1000000000)
		return;
	p->last_print_ns = now;
	if (size > 0 && fp) {
		long pos = ftell(fp);
		fprintf(stderr, "\rgiopscope: %s: %3.0f%%, %llu packets ", path,
			pos > 0 ? 100.0 * (double)pos / (double)size : 0.0,
			(unsigned long long)p->packets);
	} else {
		fprintf(stderr, "\rgiopscope: %s: %llu packets ", path, (unsigned long long)p->packets);
	}
	if (last)
		fputc('\n', stderr);
}

enum gs_read_result gs_pcap_read_file(const char *path, struct gs_engine *e,
				      struct gs_read_progress *prog, int *snaplen,
				      char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	FILE *fp;
	pcap_t *p;
	int dlt, rc = 0;
	struct pcap_pkthdr *h;
	const u_char *data;
	off_t size = 0;
	bool is_stdin = strcmp(path, "-") == 0;
	uint64_t n = 0;

	if (is_stdin) {
		fp = stdin;
	} else {
		struct stat st;
		fp = fopen(path, "rb");
		if (!fp) {
			snprintf(err, errlen, "%s: %s", path, strerror(errno));
			return GS_READ_CANNOT_OPEN;
		}
		if (fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode))
			size = st.st_size;
		if (fstat(fileno(fp), &st) == 0 && S_ISDIR(st.st_mode)) {
			fclose(fp);
			snprintf(err, errlen, "%s: is a directory", path);
			return GS_READ_CANNOT_OPEN;
		}
	}
	ebuf[0] = '\0';
	/* pcap_fopen takes the FILE over and closes it in pcap_close */
	p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (!p) {
		if (!is_stdin)
			fclose(fp);
		snprintf(err, errlen, "%s: not a pcap or pcapng capture (%s)", path,
			 ebuf[0] ? ebuf : "unknown format");
		return GS_READ_BAD_INPUT;
	}
	dlt = pcap_datalink(p);
	if (!gs_link_supported(dlt)) {
		const char *name = pcap_datalink_val_to_name(dlt);
		snprintf(err, errlen, "%s: unsupported link type %d (%s); giopscope reads Ethernet, "
			 "802.1Q, Linux SLL/SLL2, BSD loopback and raw IP", path, dlt, name ? name : "unknown");
		pcap_close(p);
		return GS_READ_BAD_INPUT;
	}
	if (snaplen)
		*snaplen = pcap_snapshot(p);
	/* Ctrl-C stops reading; what was read is still analysed and written */
	while (!gs_stop_requested && (rc = pcap_next_ex(p, &h, &data)) == 1) {
		/* libpcap reads classic pcap seconds as a signed 32-bit number: past
		 * 2038 they come out negative; the file format means them unsigned */
		int64_t sec = (int64_t)h->ts.tv_sec;
		int64_t ts;
		if (sec < 0 && sec >= INT32_MIN)
			sec = (int64_t)(uint32_t)sec;
		if (sec < 0 || sec > INT64_MAX / 1000000000 - 1) {
			snprintf(err, errlen, "%s: time stamp of packet %llu out of range (%lld s)", path,
				 (unsigned long long)n + 1, (long long)sec);
			pcap_close(p);
			prog->packets += n & 0xffff;
			return GS_READ_BAD_INPUT;
		}
		{
			/* a 64-bit division per packet costs more than the rest of this
			 * loop: only a broken file has a fraction of a second that big */
			uint64_t ns = (uint64_t)h->ts.tv_usec;
			if (ns >= 1000000000)
				ns %= 1000000000;
			ts = sec * 1000000000 + (int64_t)ns;
		}
		gs_engine_frame(e, dlt, ts, data, h->caplen, h->len);
		n++;
		if (prog->enabled && (n & 0xffff) == 0) {
			prog->packets += 0x10000;
			progress(prog, path, is_stdin ? NULL : fp, size, false);
		}
	}
	prog->packets += n & 0xffff;
	if (prog->enabled && prog->last_print_ns)
		progress(prog, path, NULL, 0, true);
	if (rc == PCAP_ERROR) {
		/* libpcap says e.g. "truncated dump file; tried to read 98 captured bytes, only got 40" */
		snprintf(err, errlen, "%s: %s (after %llu packets)", path, pcap_geterr(p),
			 (unsigned long long)n);
		pcap_close(p);
		return GS_READ_BAD_INPUT;
	}
	pcap_close(p);
	return GS_READ_OK;
}
