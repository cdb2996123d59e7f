// SPDX-License-Identifier: BSD-2-Clause
#include "decomp.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#ifdef GS_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef GS_HAVE_ZSTD
#include <zstd.h>
#endif

/* Large reads: the libraries' per-call costs vanish, and the input of one
 * read fits the L2 cache beside what it inflates to. */
enum { IN_BUF = 1 << 18, OUT_VBUF = 1 << 20, MAGIC = 6 };

/* A compressed stream is inflated by a thread of its own, a few blocks ahead
 * of the reader: with a second core, the decompression's time hides behind
 * the decoding's instead of adding to it (docs/benchmarks.md, "Compressed
 * captures").  Bounded: NBLK blocks of BLK bytes. */
enum { BLK = 1 << 20, NBLK = 4 };

struct gs_decomp {
	FILE *in;
	enum gs_decomp_kind kind;
	uint8_t *buf;              /* compressed bytes read from `in` */
	size_t pos, have;
	bool eof;                  /* `in` said end of file */
	bool ended;                /* the last frame or member ended exactly at pos */
	char why[160];
	/* the inflating thread: it fills blk[head % NBLK] while head - tail <
	 * NBLK; the reader takes blk[tail % NBLK] from `at` on.  A block is
	 * touched by one side at a time (the counters, under mu, hand it over). */
	bool threaded;
	pthread_t th;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	uint8_t *blk[NBLK];
	size_t blk_n[NBLK];
	unsigned head, tail;       /* blocks filled, blocks taken */
	size_t at;
	bool done, failed, stop;   /* no block will follow (failed: an error); the reader closes */
	bool corrupt;              /* the stream is corrupt or could not be read (not: cut short) */
#ifdef GS_HAVE_ZLIB
	z_stream z;
#endif
#ifdef GS_HAVE_ZSTD
	ZSTD_DStream *zs;
#endif
};

const char *gs_decomp_name(enum gs_decomp_kind k)
{
	return k == GS_DECOMP_GZIP ? "gzip" : k == GS_DECOMP_ZSTD ? "zstd" : "";
}

enum gs_decomp_kind gs_decomp_kind(const struct gs_decomp *d)
{
	return d ? d->kind : GS_DECOMP_NONE;
}

const char *gs_decomp_why(struct gs_decomp *d)
{
	bool known = true;
	if (d && d->threaded) {
		/* the thread writes it before it says it is done */
		pthread_mutex_lock(&d->mu);
		known = d->done;
		pthread_mutex_unlock(&d->mu);
	}
	return d && known && d->why[0] ? d->why : NULL;
}

/* More compressed bytes when none are left: false at the end of `in` or an error.
 * (unused in a build with neither library) */
static __attribute__((unused)) bool refill(struct gs_decomp *d)
{
	size_t got;
	if (d->pos < d->have)
		return true;
	if (d->eof)
		return false;
	got = fread(d->buf, 1, IN_BUF, d->in);
	d->pos = 0;
	d->have = got;
	if (got == 0) {
		d->eof = true;
		if (ferror(d->in)) {
			snprintf(d->why, sizeof d->why, "reading the %s stream failed: %s", gs_decomp_name(d->kind),
				 strerror(errno ? errno : EIO));
			d->corrupt = true;
		}
		return false;
	}
	return true;
}

/* The input ended: clean at the end of a member or frame, else cut short. */
static __attribute__((unused)) ssize_t at_end(struct gs_decomp *d, size_t done)
{
	if (!d->ended && !d->why[0])
		snprintf(d->why, sizeof d->why, "the %s stream ends inside a %s (the file is cut short)",
			 gs_decomp_name(d->kind), d->kind == GS_DECOMP_GZIP ? "member" : "frame");
	return (ssize_t)done;
}

#ifdef GS_HAVE_ZLIB
static ssize_t read_gzip(struct gs_decomp *d, char *out, size_t size)
{
	z_stream *z = &d->z;
	size_t done = 0;
	while (done < size) {
		int rc;
		if (!refill(d))
			return at_end(d, done);
		if (d->ended) {
			/* another member after the one that ended (gzip concatenates them) */
			inflateReset(z);
			d->ended = false;
		}
		z->next_in = d->buf + d->pos;
		z->avail_in = (uInt)(d->have - d->pos);
		z->next_out = (Bytef *)out + done;
		z->avail_out = (uInt)(size - done > UINT32_MAX ? UINT32_MAX : size - done);
		rc = inflate(z, Z_NO_FLUSH);
		done = (size_t)((char *)z->next_out - out);
		d->pos = d->have - z->avail_in;
		if (rc == Z_STREAM_END) {
			d->ended = true;
		} else if (rc != Z_OK && !(rc == Z_BUF_ERROR && done < size)) {
			snprintf(d->why, sizeof d->why, "the gzip stream is corrupt (%s)", z->msg ? z->msg : "zlib error");
			d->corrupt = true;
			errno = EIO;
			return done ? (ssize_t)done : -1;
		}
	}
	return (ssize_t)done;
}
#endif

#ifdef GS_HAVE_ZSTD
static ssize_t read_zstd(struct gs_decomp *d, char *out, size_t size)
{
	ZSTD_outBuffer o = { out, size, 0 };
	while (o.pos < o.size) {
		ZSTD_inBuffer i;
		size_t rc;
		if (!refill(d))
			return at_end(d, o.pos);
		i.src = d->buf;
		i.size = d->have;
		i.pos = d->pos;
		rc = ZSTD_decompressStream(d->zs, &o, &i);
		d->pos = i.pos;
		if (ZSTD_isError(rc)) {
			snprintf(d->why, sizeof d->why, "the zstd stream is corrupt (%s)", ZSTD_getErrorName(rc));
			d->corrupt = true;
			errno = EIO;
			return o.pos ? (ssize_t)o.pos : -1;
		}
		/* 0: a frame ended here; another may follow (zstd concatenates them) */
		d->ended = rc == 0;
	}
	return (ssize_t)o.pos;
}
#endif

/* Not compressed, not seekable (stdin): the bytes looked at, then the rest. */
static ssize_t read_plain(struct gs_decomp *d, char *out, size_t size)
{
	if (d->pos < d->have) {
		size_t n = d->have - d->pos < size ? d->have - d->pos : size;
		memcpy(out, d->buf + d->pos, n);
		d->pos += n;
		return (ssize_t)n;
	}
	size_t got = fread(out, 1, size, d->in);
	if (got == 0 && ferror(d->in))
		return -1;
	return (ssize_t)got;
}

static ssize_t inflate_into(struct gs_decomp *d, char *out, size_t size)
{
	switch (d->kind) {
#ifdef GS_HAVE_ZLIB
	case GS_DECOMP_GZIP: return read_gzip(d, out, size);
#endif
#ifdef GS_HAVE_ZSTD
	case GS_DECOMP_ZSTD: return read_zstd(d, out, size);
#endif
	default: return read_plain(d, out, size);
	}
}

static void *inflater(void *arg)
{
	struct gs_decomp *d = arg;
	for (;;) {
		ssize_t n;
		unsigned b;
		bool stop;
		pthread_mutex_lock(&d->mu);
		while (d->head - d->tail == NBLK && !d->stop)
			pthread_cond_wait(&d->cv, &d->mu);
		b = d->head % NBLK;
		stop = d->stop;
		pthread_mutex_unlock(&d->mu);
		if (stop)
			break;
		n = inflate_into(d, (char *)d->blk[b], BLK);
		pthread_mutex_lock(&d->mu);
		d->blk_n[b] = n > 0 ? (size_t)n : 0;
		if (n > 0)
			d->head++;
		/* short: the end, or an error (its reason written before, under mu now) */
		if (n < (ssize_t)BLK) {
			d->done = true;
			d->failed = d->corrupt;
		}
		pthread_cond_broadcast(&d->cv);
		if (d->done || d->stop) {
			pthread_mutex_unlock(&d->mu);
			break;
		}
		pthread_mutex_unlock(&d->mu);
	}
	return NULL;
}

static ssize_t cookie_read(void *arg, char *out, size_t size)
{
	struct gs_decomp *d = arg;
	unsigned b;
	size_t n;
	if (!d->threaded)
		return inflate_into(d, out, size);
	pthread_mutex_lock(&d->mu);
	while (d->head == d->tail && !d->done)
		pthread_cond_wait(&d->cv, &d->mu);
	if (d->head == d->tail) {
		bool failed = d->failed;
		pthread_mutex_unlock(&d->mu);
		if (failed)
			errno = EIO;
		return failed ? -1 : 0;
	}
	b = d->tail % NBLK;
	pthread_mutex_unlock(&d->mu);
	/* the block is the reader's until tail moves past it */
	n = d->blk_n[b] - d->at < size ? d->blk_n[b] - d->at : size;
	memcpy(out, d->blk[b] + d->at, n);
	d->at += n;
	if (d->at == d->blk_n[b]) {
		d->at = 0;
		pthread_mutex_lock(&d->mu);
		d->tail++;
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->mu);
	}
	return (ssize_t)n;
}

static void decomp_free(struct gs_decomp *d)
{
	if (d->threaded) {
		pthread_mutex_lock(&d->mu);
		d->stop = true;
		pthread_cond_broadcast(&d->cv);
		pthread_mutex_unlock(&d->mu);
		pthread_join(d->th, NULL);
		pthread_mutex_destroy(&d->mu);
		pthread_cond_destroy(&d->cv);
	}
	for (int i = 0; i < NBLK; i++)
		free(d->blk[i]);
#ifdef GS_HAVE_ZLIB
	if (d->kind == GS_DECOMP_GZIP)
		inflateEnd(&d->z);
#endif
#ifdef GS_HAVE_ZSTD
	ZSTD_freeDStream(d->zs);
#endif
	free(d->buf);
	free(d);
}

static int cookie_close(void *arg)
{
	struct gs_decomp *d = arg;
	int rc = d->in == stdin ? 0 : fclose(d->in);
	decomp_free(d);
	return rc;
}

/* Compressions giopscope does not read, named so the user knows what to run. */
static const char *other_compression(const uint8_t *m, size_t n)
{
	if (n >= 6 && memcmp(m, "\xfd" "7zXZ\0", 6) == 0)
		return "xz";
	if (n >= 3 && memcmp(m, "BZh", 3) == 0)
		return "bzip2";
	if (n >= 4 && memcmp(m, "\x04\x22\x4d\x18", 4) == 0)
		return "lz4";
	return NULL;
}

int gs_decomp_open(FILE *in, bool seekable, bool ahead, const char *name, FILE **out, struct gs_decomp **dp,
		   char *err, size_t errlen)
{
	static const cookie_io_functions_t io = { .read = cookie_read, .close = cookie_close };
	uint8_t m[MAGIC];
	/* a regular file is looked at where it lies (pread: its position, and
	 * libpcap's or the walk's reading of it, left alone; no seek); a pipe
	 * gives its first bytes once, replayed below */
	ssize_t got = seekable && fileno(in) >= 0 ? pread(fileno(in), m, sizeof m, 0) : -1;
	bool peeked = got < 0; /* read from the stream: its first bytes are taken */
	if (peeked)
		got = (ssize_t)fread(m, 1, sizeof m, in);
	size_t n = got > 0 ? (size_t)got : 0;
	const char *other = other_compression(m, n);
	enum gs_decomp_kind kind = GS_DECOMP_NONE;
	struct gs_decomp *d;
	*out = NULL;
	*dp = NULL;
	if (n >= 2 && m[0] == 0x1f && m[1] == 0x8b)
		kind = GS_DECOMP_GZIP;
	else if (n >= 4 && memcmp(m, "\x28\xb5\x2f\xfd", 4) == 0)
		kind = GS_DECOMP_ZSTD;
	if (other) {
		snprintf(err, errlen, "%s: compressed with %s, which giopscope does not read (gzip and zstd it does): "
			 "%s -dc %s | giopscope read -", name, other, other, strcmp(name, "-") ? name : "");
		return EINVAL;
	}
#ifndef GS_HAVE_ZLIB
	if (kind == GS_DECOMP_GZIP) {
		snprintf(err, errlen, "%s: compressed with gzip, and this giopscope was built without zlib: "
			 "gzip -dc %s | giopscope read -", name, strcmp(name, "-") ? name : "");
		return EINVAL;
	}
#endif
#ifndef GS_HAVE_ZSTD
	if (kind == GS_DECOMP_ZSTD) {
		snprintf(err, errlen, "%s: compressed with zstd, and this giopscope was built without libzstd: "
			 "zstd -dc %s | giopscope read -", name, strcmp(name, "-") ? name : "");
		return EINVAL;
	}
#endif
	if (kind == GS_DECOMP_NONE && seekable) {
		/* (a stream without a descriptor, fmemopen's, is put back) */
		if (peeked && fseeko(in, 0, SEEK_SET) != 0)
			return errno ? errno : EIO;
		*out = in;
		return 0;
	}
	if (!(d = calloc(1, sizeof *d)) || !(d->buf = malloc(IN_BUF))) {
		free(d);
		return ENOMEM;
	}
	d->in = in;
	d->kind = kind;
	if (peeked) {
		/* (one looked at with pread is read from its start, untouched) */
		memcpy(d->buf, m, n);
		d->have = n;
		d->eof = n < sizeof m;
	}
#ifdef GS_HAVE_ZLIB
	/* 15 + 16: a gzip member, its header and trailer checked (CRC, length) */
	if (kind == GS_DECOMP_GZIP && inflateInit2(&d->z, 15 + 16) != Z_OK) {
		free(d->buf);
		free(d);
		return ENOMEM;
	}
#endif
#ifdef GS_HAVE_ZSTD
	if (kind == GS_DECOMP_ZSTD && (!(d->zs = ZSTD_createDStream()) ||
				       ZSTD_isError(ZSTD_DCtx_setParameter(d->zs, ZSTD_d_windowLogMax, 27)))) {
		decomp_free(d);
		return ENOMEM;
	}
#endif
	if (kind != GS_DECOMP_NONE && ahead) {
		for (int i = 0; i < NBLK; i++)
			if (!(d->blk[i] = malloc(BLK))) {
				decomp_free(d);
				return ENOMEM;
			}
		pthread_mutex_init(&d->mu, NULL);
		pthread_cond_init(&d->cv, NULL);
		/* no thread, no harm: the reader inflates on its own */
		d->threaded = pthread_create(&d->th, NULL, inflater, d) == 0;
		if (!d->threaded) {
			pthread_mutex_destroy(&d->mu);
			pthread_cond_destroy(&d->cv);
		}
	}
	if (!(*out = fopencookie(d, "rb", io))) {
		int e = errno ? errno : ENOMEM;
		decomp_free(d);
		return e;
	}
	/* libpcap reads a record's header and its bytes with an fread each */
	setvbuf(*out, NULL, _IOFBF, OUT_VBUF);
	*dp = d;
	return 0;
}
