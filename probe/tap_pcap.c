/* SPDX-License-Identifier: BSD-2-Clause */
#include "tap_pcap.h"

#include <errno.h>
#include <fcntl.h>
#include <pcap/pcap.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../decoders/link.h"
#include "commands.h"
#include "decomp.h"
#include "pcap_walk.h"

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void gs_read_progress_line(struct gs_read_progress *p, const char *path, off_t pos, off_t size, bool last)
{
	int64_t now = mono_ns();
	if (!last && now - p->last_print_ns < 1000000000)
		return;
	p->last_print_ns = now;
	if (size > 0 && pos >= 0) {
		fprintf(stderr, "\rgiopscope: %s: %3.0f%%, %llu packets ", path,
			pos > 0 ? 100.0 * (double)pos / (double)size : 0.0,
			(unsigned long long)p->packets);
	} else {
		fprintf(stderr, "\rgiopscope: %s: %llu packets ", path, (unsigned long long)p->packets);
	}
	if (last)
		fputc('\n', stderr);
}

/* A packet's time in ns from the record's seconds and fraction as libpcap
 * hands them over (pcap_pkthdr.ts with nanosecond precision asked): false if
 * the seconds do not fit. */
static bool frame_ns(int64_t sec, int64_t frac, int64_t *ts)
{
	/* libpcap reads classic pcap seconds as a signed 32-bit number: past
	 * 2038 they come out negative; the file format means them unsigned */
	if (sec < 0 && sec >= INT32_MIN)
		sec = (int64_t)(uint32_t)sec;
	if (sec < 0 || sec > INT64_MAX / 1000000000 - 1)
		return false;
	/* a 64-bit division per packet costs more than the rest of this
	 * loop: only a broken file has a fraction of a second that big */
	uint64_t ns = (uint64_t)frac;
	if (ns >= 1000000000)
		ns %= 1000000000;
	*ts = sec * 1000000000 + (int64_t)ns;
	return true;
}

/* One frame to the engine; the progress line every 65536 frames (`n`: this
 * file's frames so far, this one included; `pos`: the offset reached, or -1:
 * ask `fp`, libpcap's FILE, when the line is printed; NULL: not known). */
struct sink {
	struct gs_engine *e;     /* the engine, or ... */
	gs_frame_fn fn;          /* ... a function given every frame (read --threads) */
	void *arg;
};

/* Inlined into each reading loop: called out of line, its twelve arguments,
 * its frame and the saved registers cost a packet more than a small fraction
 * of the bare libpcap loop's whole (figure: docs/benchmarks.md, "Figures
 * behind the code"). */
static inline __attribute__((always_inline)) void feed(const struct sink *k, struct gs_read_progress *prog,
							const char *path, int dlt, int64_t ts, const uint8_t *data,
							uint32_t caplen, uint32_t len, uint64_t n, off_t pos, FILE *fp,
							off_t size)
{
	if (k->fn)
		k->fn(k->arg, dlt, ts, data, caplen, len);
	else
		gs_engine_frame(k->e, dlt, ts, data, caplen, len);
	if (prog->enabled && (n & 0xffff) == 0) {
		prog->packets += 0x10000;
		gs_read_progress_line(prog, path, pos >= 0 || !fp ? pos : ftello(fp), size, false);
	}
}

/* Reading a classic pcap file without libpcap's per-packet stdio calls.
 *
 * libpcap reads each record with two fread()s from a FILE and copies the
 * packet into its own buffer: that is most of what the bare libpcap loop of
 * bench/ costs (docs/benchmarks.md).  For a regular file in the
 * classic format, the records are read here in large blocks (pread into one
 * buffer, parsed in place).  libpcap still opens the file (its header checks,
 * link type, snapshot length) and takes over at the first record this path
 * does not vouch for (a capture length above the snapshot length, a record cut
 * short by the end of the file, a read error), at that record's offset, so its
 * errors and its handling of odd records stay exactly what they were. */
enum { FAST_BUF = 1 << 19, FAST_CHUNK = 1 << 16, REC_HDR = 16 };

struct fast_reader {
	int fd;
	bool swapped;            /* the file's byte order is not ours */
	bool micro;              /* fractions in microseconds, not nanoseconds */
	uint32_t snapshot;       /* libpcap's (adjusted) snapshot length */
	off_t off;               /* file offset of buf[pos] */
	size_t pos, have;        /* parsed up to pos; valid bytes up to have */
	uint8_t *buf;
};

static uint32_t rd32(const uint8_t *p, bool swapped)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swapped ? __builtin_bswap32(v) : v;
}

/* Sets the fast path up if `p` reads a classic pcap regular file; false:
 * leave everything to libpcap. */
static bool fast_open(struct fast_reader *r, pcap_t *p, FILE *fp)
{
	uint8_t magic[4];
	uint32_t m;
	long at = ftell(fp);
	int snap = pcap_snapshot(p);

	r->fd = fileno(fp);
	/* the classic header is 24 bytes: anything else (pcapng) is libpcap's */
	if (at != 24 || snap <= 0 || (size_t)snap > FAST_BUF - REC_HDR ||
	    pread(r->fd, magic, sizeof magic, 0) != (ssize_t)sizeof magic)
		return false;
	memcpy(&m, magic, 4);
	r->swapped = pcap_is_swapped(p) == 1;
	if (r->swapped)
		m = __builtin_bswap32(m);
	/* 0xa1b2cd34 (Kuznetzov's, longer record headers) and others: libpcap */
	if (m == 0xa1b2c3d4)
		r->micro = true;
	else if (m == 0xa1b23c4d)
		r->micro = false;
	else
		return false;
	r->buf = malloc(FAST_BUF);
	if (!r->buf)
		return false;
	r->snapshot = (uint32_t)snap;
	r->off = 24;
	r->pos = r->have = 0;
	return true;
}

/* Makes `need` bytes from buf[pos] available: false at the end of the file
 * or on a read error (libpcap then reads that record and says which). */
static bool fast_fill(struct fast_reader *r, size_t need)
{
	if (r->pos) {
		memmove(r->buf, r->buf + r->pos, r->have - r->pos);
		r->off += (off_t)r->pos;
		r->have -= r->pos;
		r->pos = 0;
	}
	while (r->have < need) {
		/* in chunks that stay in the CPU's cache, however large the buffer */
		size_t want = need - r->have > FAST_CHUNK ? need - r->have : FAST_CHUNK;
		if (want > FAST_BUF - r->have)
			want = FAST_BUF - r->have;
		ssize_t got = pread(r->fd, r->buf + r->have, want, r->off + (off_t)r->have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got <= 0)
			return false;
		r->have += (size_t)got;
	}
	return true;
}

enum gs_read_result gs_pcap_check_file(const char *path, char *err, size_t errlen)
{
	struct stat st;
	int fd;
	if (strcmp(path, "-") == 0)
		return GS_READ_OK;
	/* as gs_pcap_read_file opens it (fopen "rb"), without reading */
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return GS_READ_CANNOT_OPEN;
	}
	if (fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(fd);
		snprintf(err, errlen, "%s: is a directory", path);
		return GS_READ_CANNOT_OPEN;
	}
	close(fd);
	return GS_READ_OK;
}

/* The regular file of `fp` is shorter now than the `size` it had when it was
 * opened: truncated under the read (tcpdump -W rotating over it). */
static bool cut_short(FILE *fp, off_t size)
{
	struct stat st;
	return fstat(fileno(fp), &st) == 0 && S_ISREG(st.st_mode) && st.st_size < size;
}

void gs_read_cut_short(char *err, size_t errlen, const char *path, uint64_t n)
{
	snprintf(err, errlen, "%s: the file was cut short while it was read (after %llu packets)", path,
		 (unsigned long long)n);
}

/* The file starts with a pcapng section header block (its type, read with
 * pread: libpcap's position is left alone). */
static bool is_pcapng(FILE *fp)
{
	uint8_t m[4];
	return pread(fileno(fp), m, sizeof m, 0) == (ssize_t)sizeof m && m[0] == 0x0a && m[1] == 0x0d &&
	       m[2] == 0x0d && m[3] == 0x0a;
}

/* `start` > 0: libpcap reads from that record on, the file's first `n0`
 * records having been read already (read --threads' walk, read_shards.c). */
static enum gs_read_result read_file(const char *path, const struct sink *k, off_t start, uint64_t n0,
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
	uint64_t n = n0;
	struct fast_reader fr = { .fd = -1 };
	bool fast = false;
	struct gs_walk w;
	bool walk;
	int64_t ts;
	FILE *zfp;
	struct gs_decomp *zd;

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
	/* gzip or zstd, by the first bytes: libpcap reads what they inflate to
	 * (no mapping, no pread: size 0 keeps the fast paths away) */
	/* inflated ahead on a thread for a regular file only: a thread blocked in
	 * a pipe's read could not be joined when the reading stops early */
	if ((rc = gs_decomp_open(fp, size > 0, size > 0, path, &zfp, &zd, err, errlen)) != 0) {
		if (rc != EINVAL)
			snprintf(err, errlen, "%s: %s", path, strerror(rc));
		if (!is_stdin)
			fclose(fp);
		return GS_READ_BAD_INPUT;
	}
	fp = zfp;
	if (zd && gs_decomp_kind(zd) != GS_DECOMP_NONE) {
		size = 0;
		is_stdin = true; /* no file offset to show or test */
	}
	ebuf[0] = '\0';
	/* pcap_fopen takes the FILE over and closes it in pcap_close */
	p = pcap_fopen_offline_with_tstamp_precision(fp, PCAP_TSTAMP_PRECISION_NANO, ebuf);
	if (!p) {
		if (gs_decomp_why(zd))
			snprintf(err, errlen, "%s: %s", path, gs_decomp_why(zd));
		else
			snprintf(err, errlen, "%s: not a pcap or pcapng capture%s (%s)", path,
				 gs_decomp_kind(zd) ? " inside its compression" : "",
				 ebuf[0] ? ebuf : "unknown format");
		if (fp != stdin)
			fclose(fp);
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
	/* a pipe cannot be handed back to libpcap at a record: stdin is libpcap's;
	 * read --threads' reader (k->fn) gets only what its engines did not walk.
	 * Walked: pcapng only; a classic file goes faster through the pread
	 * reader below (its kernel copy streams the file into a buffer that stays
	 * in the cache, where the walk meets each page cold; docs/benchmarks.md
	 * "one-thread read walks the mapped file") */
	walk = size > 0 && start == 0 && !k->fn && is_pcapng(fp) &&
	       gs_walk_map_fd(&w, fileno(fp), dlt, pcap_snapshot(p));
	if (walk) {
		/* the file walked in place (pcap_walk.h), as read --threads does;
		 * at a record the walker does not vouch for libpcap reads on from
		 * it (where it is after its opening, when that is the first) */
		struct gs_walk_it it;
		struct gs_walk_rec r;
		size_t at = w.first, dropped = 0, drop_at = GS_WALK_KEEP + GS_WALK_DROP;
		int wr = 0;
		gs_walk_start(&w, &it);
		while (!gs_stop_requested) {
			at = it.off;
			/* (a record read from the zero pages of a file cut short is
			 * not handed over) */
			if ((wr = gs_walk_next(&w, &it, &r)) != 1 || gs_walk_cut())
				break;
			if (r.dir == 2) /* pcapng's outbound flag: the capture host sent it */
				gs_engine_outgoing(k->e, dlt, r.data, r.caplen, r.len);
			feed(k, prog, path, dlt, r.ts, r.data, r.caplen, r.len, ++n, (off_t)it.off, NULL, size);
			if (it.off >= drop_at) {
				gs_walk_drop_behind(&w, it.off, &dropped);
				drop_at = dropped + GS_WALK_KEEP + GS_WALK_DROP;
			}
		}
		gs_walk_close(&w);
		if (gs_walk_cut()) {
			gs_read_cut_short(err, errlen, path, n);
			goto bad;
		}
		if (gs_stop_requested)
			goto done;
		if (wr == 0) {
			/* the end of the mapping; a file that grew since (a capture
			 * still written) is read on by libpcap, as a read to its end */
			struct stat st;
			if (fstat(fileno(fp), &st) != 0 || st.st_size <= size)
				goto done;
		}
		if (n > n0 && fseeko(fp, (off_t)at, SEEK_SET) != 0) {
			snprintf(err, errlen, "%s: %s (after %llu packets)", path, strerror(errno),
				 (unsigned long long)n);
			goto bad;
		}
	} else {
		fast = size > 0 && start == 0 && fast_open(&fr, p, fp);
	}
	if (start > 0 && fseeko(fp, start, SEEK_SET) != 0) {
		snprintf(err, errlen, "%s: %s (after %llu packets)", path, strerror(errno), (unsigned long long)n);
		goto bad;
	}
	/* Ctrl-C stops reading; what was read is still analysed and written */
	while (fast && !gs_stop_requested) {
		const uint8_t *rec;
		uint32_t caplen, len;
		int64_t frac;

		if ((fr.have - fr.pos) < REC_HDR && !fast_fill(&fr, REC_HDR))
			break;
		rec = fr.buf + fr.pos;
		caplen = rd32(rec + 8, fr.swapped);
		if (caplen > fr.snapshot)
			break;
		if ((fr.have - fr.pos) < REC_HDR + (size_t)caplen) {
			if (!fast_fill(&fr, REC_HDR + (size_t)caplen))
				break;
			rec = fr.buf;
		}
		len = rd32(rec + 12, fr.swapped);
		/* as libpcap hands it over: a signed 32-bit fraction, microseconds
		 * scaled up to nanoseconds */
		frac = (int32_t)rd32(rec + 4, fr.swapped);
		if (fr.micro)
			frac *= 1000;
		if (!frame_ns((int32_t)rd32(rec, fr.swapped), frac, &ts)) {
			snprintf(err, errlen, "%s: time stamp of packet %llu out of range", path,
				 (unsigned long long)n + 1);
			goto bad;
		}
		fr.pos += REC_HDR + (size_t)caplen;
		feed(k, prog, path, dlt, ts, rec + REC_HDR, caplen, len, ++n, fr.off + (off_t)fr.pos, NULL, size);
	}
	if (fast) {
		/* the end of the file, or a record libpcap is to judge: it reads on
		 * from that record */
		off_t at = fr.off + (off_t)fr.pos;
		free(fr.buf);
		fr.buf = NULL;
		if (gs_stop_requested || at == size)
			goto done;
		if (cut_short(fp, size)) {
			gs_read_cut_short(err, errlen, path, n);
			goto bad;
		}
		if (fseeko(fp, at, SEEK_SET) != 0) {
			snprintf(err, errlen, "%s: %s (after %llu packets)", path, strerror(errno),
				 (unsigned long long)n);
			goto bad;
		}
	}
	while (!gs_stop_requested && (rc = pcap_next_ex(p, &h, &data)) == 1) {
		if (!frame_ns((int64_t)h->ts.tv_sec, (int64_t)h->ts.tv_usec, &ts)) {
			snprintf(err, errlen, "%s: time stamp of packet %llu out of range (%lld s)", path,
				 (unsigned long long)n + 1, (long long)h->ts.tv_sec);
			goto bad;
		}
		feed(k, prog, path, dlt, ts, data, h->caplen, h->len, ++n, -1, is_stdin ? NULL : fp, size);
	}
	if (gs_decomp_why(zd)) {
		/* the compressed stream's own fault, before libpcap's view of it */
		snprintf(err, errlen, "%s: %s (after %llu packets)", path, gs_decomp_why(zd), (unsigned long long)n);
		goto bad;
	}
	if (rc == PCAP_ERROR) {
		/* libpcap says e.g. "truncated dump file; tried to read 98 captured bytes, only got 40" */
		snprintf(err, errlen, "%s: %s (after %llu packets)", path, pcap_geterr(p),
			 (unsigned long long)n);
		goto bad;
	}
done:
	prog->packets += n & 0xffff;
	if (prog->enabled && prog->last_print_ns)
		gs_read_progress_line(prog, path, -1, 0, true);
	pcap_close(p);
	return GS_READ_OK;
bad:
	free(fr.buf);
	prog->packets += n & 0xffff;
	if (prog->enabled && prog->last_print_ns)
		gs_read_progress_line(prog, path, -1, 0, true);
	pcap_close(p);
	return GS_READ_BAD_INPUT;
}

enum gs_read_result gs_pcap_read_file(const char *path, struct gs_engine *e,
				      struct gs_read_progress *prog, int *snaplen,
				      char *err, size_t errlen)
{
	const struct sink k = { .e = e };
	return read_file(path, &k, 0, 0, prog, snaplen, err, errlen);
}

enum gs_read_result gs_pcap_read_file_fn(const char *path, gs_frame_fn fn, void *arg,
					 struct gs_read_progress *prog, int *snaplen,
					 char *err, size_t errlen)
{
	const struct sink k = { .fn = fn, .arg = arg };
	return read_file(path, &k, 0, 0, prog, snaplen, err, errlen);
}

enum gs_read_result gs_pcap_read_file_from(const char *path, off_t start, uint64_t n0, gs_frame_fn fn, void *arg,
					   struct gs_read_progress *prog, int *snaplen, char *err, size_t errlen)
{
	const struct sink k = { .fn = fn, .arg = arg };
	return read_file(path, &k, start, n0, prog, snaplen, err, errlen);
}
