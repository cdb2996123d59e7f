// SPDX-License-Identifier: BSD-2-Clause
/* probe/decomp.c: a stream is given back as it is (seekable) or replayed
 * (stdin); gzip and zstd, one member or frame and several, give back the bytes
 * compressed; a stream cut short and a corrupt one leave a reason; xz is
 * refused with the command that reads it. */
#include <errno.h>

#include "unit.h"
#include "../../probe/decomp.h"

#ifdef GS_HAVE_ZLIB
#include <zlib.h>
#endif
#ifdef GS_HAVE_ZSTD
#include <zstd.h>
#endif

enum { N = 300000 };

/* Bytes that compress, but not to nothing. */
static uint8_t *plain(void)
{
	uint8_t *p = malloc(N);
	uint32_t x = 12345;
	assert_non_null(p);
	ut_keep(p, free);
	for (size_t i = 0; i < N; i++) {
		x = x * 1103515245 + 12345;
		p[i] = (uint8_t)((x >> 16) % 7 + 'a');
	}
	return p;
}

/* Reads all of `f` through gs_decomp_open: the bytes (kept), their count, the
 * reason left (or NULL). */
static bool ahead; /* each test runs with and without the inflating thread */

static uint8_t *read_all(FILE *f, bool seekable, size_t *n, enum gs_decomp_kind *kind, char *why, size_t whylen)
{
	uint8_t *out = malloc(2 * N);
	struct gs_decomp *d;
	FILE *z;
	char err[256];
	size_t got;
	assert_non_null(out);
	ut_keep(out, free);
	assert_int_equal(gs_decomp_open(f, seekable, ahead, "t", &z, &d, err, sizeof err), 0);
	*n = 0;
	/* reads of a prime size: none lines up with a block */
	while ((got = fread(out + *n, 1, 4099 < 2 * N - *n ? 4099 : 2 * N - *n, z)) > 0)
		*n += got;
	*kind = gs_decomp_kind(d);
	why[0] = '\0';
	if (gs_decomp_why(d))
		snprintf(why, whylen, "%s", gs_decomp_why(d));
	fclose(z);
	return out;
}

static FILE *mem(const void *p, size_t n)
{
	/* a copy the stream reads: the test's buffers are freed at its end */
	void *c = malloc(n);
	FILE *f;
	assert_non_null(c);
	ut_keep(c, free);
	memcpy(c, p, n);
	f = fmemopen(c, n, "rb");
	assert_non_null(f);
	return f;
}

static void test_plain_seekable_and_not(void **state)
{
	const uint8_t *p = plain();
	enum gs_decomp_kind k;
	char why[256];
	size_t n;
	uint8_t *o;
	(void)state;
	for (int seekable = 0; seekable < 2; seekable++) {
		o = read_all(mem(p, N), seekable, &n, &k, why, sizeof why);
		assert_int_equal(k, GS_DECOMP_NONE);
		assert_int_equal(n, N);
		assert_memory_equal(o, p, N);
		assert_string_equal(why, "");
	}
}

#ifdef GS_HAVE_ZLIB
/* gzip members (deflate with a gzip wrapper) of p[0..cut) and p[cut..N) */
static uint8_t *gzip_of(const uint8_t *p, size_t cut, size_t *len)
{
	uint8_t *out = malloc(2 * N + 1024);
	size_t at = 0;
	assert_non_null(out);
	ut_keep(out, free);
	for (int part = 0; part < 2; part++) {
		z_stream z;
		memset(&z, 0, sizeof z);
		assert_int_equal(deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
		z.next_in = (Bytef *)(uintptr_t)(part ? p + cut : p);
		z.avail_in = (uInt)(part ? N - cut : cut);
		z.next_out = out + at;
		z.avail_out = (uInt)(2 * N + 1024 - at);
		assert_int_equal(deflate(&z, Z_FINISH), Z_STREAM_END);
		at = (size_t)(z.next_out - out);
		deflateEnd(&z);
		if (cut == N)
			break;
	}
	*len = at;
	return out;
}

static void test_gzip(void **state)
{
	const uint8_t *p = plain();
	enum gs_decomp_kind k;
	char why[256];
	size_t n, len;
	uint8_t *g, *o;
	(void)state;
	/* one member, then two: gzip's concatenation is one stream */
	static const size_t cuts[] = { N, N / 3 };
	for (size_t i = 0; i < 2; i++) {
		g = gzip_of(p, cuts[i], &len);
		o = read_all(mem(g, len), false, &n, &k, why, sizeof why);
		assert_int_equal(k, GS_DECOMP_GZIP);
		assert_int_equal(n, N);
		assert_memory_equal(o, p, N);
		assert_string_equal(why, "");
	}
	/* cut short: what came is right, and the reason says it */
	g = gzip_of(p, N, &len);
	o = read_all(mem(g, len / 2), true, &n, &k, why, sizeof why);
	assert_true(n < N);
	assert_memory_equal(o, p, n);
	assert_non_null(strstr(why, "gzip stream ends inside a member (the file is cut short)"));
	/* the first block's type made invalid (past the 10-byte header) */
	g[10] = 0x07;
	read_all(mem(g, len), true, &n, &k, why, sizeof why);
	assert_non_null(strstr(why, "the gzip stream is corrupt (invalid block type)"));
}
#endif

#ifdef GS_HAVE_ZSTD
static void test_zstd(void **state)
{
	const uint8_t *p = plain();
	size_t cap = ZSTD_compressBound(N), len, len2, n;
	uint8_t *z = malloc(2 * cap), *o;
	enum gs_decomp_kind k;
	char why[256];
	(void)state;
	assert_non_null(z);
	ut_keep(z, free);
	len = ZSTD_compress(z, cap, p, N / 2, 3);
	assert_false(ZSTD_isError(len));
	len2 = ZSTD_compress(z + len, cap, p + N / 2, N - N / 2, 3);
	assert_false(ZSTD_isError(len2));
	/* two frames: one stream */
	o = read_all(mem(z, len + len2), false, &n, &k, why, sizeof why);
	assert_int_equal(k, GS_DECOMP_ZSTD);
	assert_int_equal(n, N);
	assert_memory_equal(o, p, N);
	assert_string_equal(why, "");
	/* the second frame cut short */
	o = read_all(mem(z, len + len2 / 2), true, &n, &k, why, sizeof why);
	assert_true(n < N);
	assert_memory_equal(o, p, n);
	assert_non_null(strstr(why, "zstd stream ends inside a frame (the file is cut short)"));
}
#endif

static void test_xz_refused(void **state)
{
	static const uint8_t xz[] = { 0xfd, '7', 'z', 'X', 'Z', 0, 0, 4 };
	FILE *f = mem(xz, sizeof xz), *z;
	struct gs_decomp *d;
	char err[256];
	(void)state;
	assert_int_equal(gs_decomp_open(f, true, false, "cap.xz", &z, &d, err, sizeof err), EINVAL);
	assert_non_null(strstr(err, "cap.xz: compressed with xz, which giopscope does not read"));
	assert_non_null(strstr(err, "xz -dc cap.xz | giopscope read -"));
	fclose(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_plain_seekable_and_not),
#ifdef GS_HAVE_ZLIB
		UT(test_gzip),
#endif
#ifdef GS_HAVE_ZSTD
		UT(test_zstd),
#endif
		UT(test_xz_refused),
	};
	int failed = cmocka_run_group_tests(tests, NULL, NULL);
	ahead = true;
	return failed + cmocka_run_group_tests(tests, NULL, NULL);
}
