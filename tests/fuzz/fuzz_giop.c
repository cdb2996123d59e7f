/* SPDX-License-Identifier: BSD-2-Clause */
/* libFuzzer harness: giop_decode on one GIOP message head.
 *
 * The input is decoded whole and with a few shorter heads (every prefix up to
 * 64 bytes, then a handful spread over the rest), each copied to the END of a
 * heap buffer so that any read past `avail` runs into ASan's red zone.  Checked:
 *  - every span the decoder returns lies inside the bytes it was given;
 *  - with the whole message available the answer is never NEED_MORE;
 *  - a head that is INVALID stays INVALID (same error) when more bytes come;
 *  - the header-only decoder and giop_plausible_header agree with giop_decode.
 * The name helpers are exercised on what was decoded.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../decoders/giop/giop.h"

static void check(int ok, const char *what)
{
	if (!ok) {
		fprintf(stderr, "fuzz_giop: invariant broken: %s\n", what);
		abort();
	}
}

static void span_in(struct gs_span s, const uint8_t *p, size_t avail, const char *what)
{
	if (s.p == NULL)
		return;
	check(s.p >= p && s.p <= p + avail && s.len <= (size_t)(p + avail - s.p), what);
}

static enum giop_res decode(const uint8_t *data, size_t avail, uint32_t max_size, uint8_t *buf,
			    size_t bufsize, struct giop_msg *m)
{
	uint8_t *p = buf + bufsize - avail;
	enum giop_res r;
	char tmp[64];
	volatile uint8_t sink = 0;

	memcpy(p, data, avail);
	r = giop_decode(p, avail, max_size, m);
	check(r == GIOP_OK || r == GIOP_NEED_MORE || r == GIOP_INVALID, "result");
	check(r != GIOP_INVALID || m->error != GIOP_ERR_NONE, "INVALID says why");
	(void)giop_error_name(m->error);
	(void)giop_type_name(m->type);
	if (r == GIOP_INVALID)
		return r;
	if (avail >= GIOP_HEADER_LEN) {
		check(m->msg_len == m->size + GIOP_HEADER_LEN, "msg_len");
		check(m->type < GIOP_TYPE_COUNT && m->major == 1 && m->minor <= 3, "header fields");
		/* a message with more fragments may continue its header in the next
		 * Fragment: only then may the whole message still need more */
		if (avail >= m->msg_len && !m->more_fragments)
			check(r == GIOP_OK, "the whole message never needs more");
	}
	if (r == GIOP_OK)
		check(m->body_offset <= m->msg_len, "body offset inside the message");
	span_in(m->operation, p, avail, "operation");
	span_in(m->object_key, p, avail, "object key");
	span_in(m->exception_id, p, avail, "exception id");
	check(m->n_kept <= GIOP_MAX_CONTEXTS && m->n_kept <= m->n_contexts, "contexts kept");
	for (unsigned i = 0; i < m->n_kept; i++) {
		span_in(m->ctx[i].data, p, avail, "service context");
		(void)giop_service_context_name(m->ctx[i].id);
	}
	if (m->operation.p)
		for (size_t i = 0; i < m->operation.len; i++)
			sink ^= m->operation.p[i];
	if (m->have & GIOP_HAVE_EXCEPTION)
		(void)giop_system_exception_short(m->exception_id, tmp, sizeof tmp);
	if (m->have & GIOP_HAVE_STATUS) {
		(void)giop_reply_status_name(m->status);
		(void)giop_locate_status_name(m->status);
	}
	(void)sink;
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct giop_msg full, part, hdr;
	uint32_t max_sizes[2] = { 0, 1u << 28 };
	uint8_t *buf;
	size_t cuts[80], ncut = 0;

	if (size > (1u << 20))
		return 0;
	buf = malloc(size ? size : 1);
	if (!buf)
		return 0;
	for (size_t a = 0; a <= size && a <= 64; a++)
		cuts[ncut++] = a;
	for (int k = 1; k <= 8 && size > 64; k++)
		cuts[ncut++] = 64 + (size - 64) * (size_t)k / 8;

	for (int ms = 0; ms < 2; ms++) {
		uint32_t max_size = max_sizes[ms];
		enum giop_res rf = decode(data, size, max_size, buf, size ? size : 1, &full);
		enum giop_res rh;
		bool plaus;

		/* the header decoder agrees with the full decoder on the header */
		memcpy(buf + (size ? size : 1) - size, data, size);
		rh = giop_decode_header(buf + (size ? size : 1) - size, size, max_size, &hdr);
		if (rh == GIOP_INVALID)
			check(rf == GIOP_INVALID && full.error == hdr.error, "header INVALID -> message INVALID");
		if (rh == GIOP_OK)
			check(rf != GIOP_INVALID || (full.error != GIOP_ERR_MAGIC && full.error != GIOP_ERR_VERSION &&
						     full.error != GIOP_ERR_TYPE && full.error != GIOP_ERR_FLAGS &&
						     full.error != GIOP_ERR_SIZE), "header OK -> no header error");
		/* a header good enough to decode is plausible for resynchronisation
		 * (tests/fuzz/crashes/fuzz_giop/plausible-vs-decode-reserved-flags) */
		plaus = giop_plausible_header(buf + (size ? size : 1) - size, size, max_size);
		if (rh == GIOP_OK && max_size)
			check(plaus, "a decodable header is plausible");

		for (size_t i = 0; i < ncut; i++) {
			enum giop_res rp;
			if (cuts[i] > size)
				continue;
			rp = decode(data, cuts[i], max_size, buf, size ? size : 1, &part);
			if (rp == GIOP_INVALID)
				check(rf == GIOP_INVALID && full.error == part.error,
				      "INVALID on a head stays INVALID on the whole");
			if (rp != GIOP_INVALID && rf != GIOP_INVALID && (part.have & GIOP_HAVE_REQUEST_ID) &&
			    (full.have & GIOP_HAVE_REQUEST_ID))
				check(part.request_id == full.request_id, "request id does not change with more bytes");
		}
	}
	free(buf);
	return 0;
}
