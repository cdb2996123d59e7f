// SPDX-License-Identifier: BSD-2-Clause
#include "read_inputs.h"

#include <errno.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "decomp.h"

/* FNV-1a: enough to tell two first packets apart (their time stamps and
 * lengths are compared too) */
static uint64_t hash_bytes(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 1099511628211ull;
	return h;
}

enum gs_read_result gs_input_peek(const char *path, struct gs_input *in, char *err, size_t errlen)
{
	char ebuf[PCAP_ERRBUF_SIZE];
	struct stat st;
	struct gs_decomp *zd;
	struct pcap_pkthdr *h;
	const u_char *data;
	FILE *fp, *zfp;
	pcap_t *p;
	int rc;
	memset(in, 0, sizeof *in);
	in->path = path;
	in->same_as = -1;
	if (strcmp(path, "-") == 0) {
		in->stream = true;
		return GS_READ_OK;
	}
	if (!(fp = fopen(path, "rb"))) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return GS_READ_CANNOT_OPEN;
	}
	if (fstat(fileno(fp), &st) != 0 || S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "%s: %s", path, S_ISDIR(st.st_mode) ? "is a directory" : strerror(errno));
		fclose(fp);
		return GS_READ_CANNOT_OPEN;
	}
	in->dev = st.st_dev;
	in->ino = st.st_ino;
	if (!S_ISREG(st.st_mode)) {
		/* a pipe (read <(zcat ...)), a device: what is read here would be lost */
		in->stream = true;
		fclose(fp);
		return GS_READ_OK;
	}
	if ((rc = gs_decomp_open(fp, true, false, path, &zfp, &zd, err, errlen)) != 0) {
		if (rc != EINVAL)
			snprintf(err, errlen, "%s: %s", path, strerror(rc));
		fclose(fp);
		return GS_READ_BAD_INPUT;
	}
	ebuf[0] = '\0';
	if (!(p = pcap_fopen_offline_with_tstamp_precision(zfp, PCAP_TSTAMP_PRECISION_NANO, ebuf))) {
		if (gs_decomp_why(zd))
			snprintf(err, errlen, "%s: %s", path, gs_decomp_why(zd));
		else
			snprintf(err, errlen, "%s: not a pcap or pcapng capture%s (%s)", path,
				 gs_decomp_kind(zd) ? " inside its compression" : "", ebuf[0] ? ebuf : "unknown format");
		fclose(zfp);
		return GS_READ_BAD_INPUT;
	}
	/* (a first packet libpcap refuses is the reading's to report, in its words) */
	if (pcap_next_ex(p, &h, &data) == 1) {
		/* as the tap reads it (tap_pcap.c): classic pcap's seconds past 2038
		 * come out of libpcap negative; a time beyond int64 nanoseconds is the
		 * reading's to refuse, and orders nothing here */
		int64_t sec = (int64_t)h->ts.tv_sec;
		if (sec < 0 && sec >= INT32_MIN)
			sec = (int64_t)(uint32_t)sec;
		in->has_first = sec >= 0 && sec <= INT64_MAX / 1000000000 - 1;
		in->first_ts = in->has_first ? sec * 1000000000 + (int64_t)h->ts.tv_usec % 1000000000 : 0;
		in->first_caplen = h->caplen;
		in->first_hash = hash_bytes(data, h->caplen);
	}
	pcap_close(p);
	return GS_READ_OK;
}

static int by_first(const void *a, const void *b)
{
	const struct gs_input *x = a, *y = b;
	/* the empty ones first, then by time; qsort is not stable: the index breaks ties */
	if (x->has_first != y->has_first)
		return x->has_first ? 1 : -1;
	if (x->has_first && x->first_ts != y->first_ts)
		return x->first_ts < y->first_ts ? -1 : 1;
	return x->same_as < y->same_as ? -1 : x->same_as > y->same_as;
}

static bool same_input(const struct gs_input *a, const struct gs_input *b)
{
	if (a->dev == b->dev && a->ino == b->ino && (a->dev || a->ino))
		return true;
	return a->has_first && b->has_first && a->first_ts == b->first_ts && a->first_caplen == b->first_caplen &&
	       a->first_hash == b->first_hash;
}

void gs_inputs_order(struct gs_input *in, int n)
{
	/* same_as holds the command line's index while sorting */
	for (int i = 0; i < n; i++)
		in[i].same_as = i;
	qsort(in, (size_t)n, sizeof *in, by_first);
	for (int i = 0; i < n; i++) {
		in[i].same_as = -1;
		for (int j = 0; j < i; j++) {
			if (in[j].same_as < 0 && same_input(&in[i], &in[j])) {
				in[i].same_as = j;
				break;
			}
		}
	}
}
