/* SPDX-License-Identifier: BSD-2-Clause */
/* GIOP decoder: hand-built messages of every version, byte order and type. */
#include "unit.h"

static const unsigned MINORS[] = { 0, 1, 2, 3 };

static enum giop_res dec(const struct ub *w, size_t start, size_t len, struct giop_msg *m)
{
	uint8_t *copy = exact_copy(w->b + start, len);
	enum giop_res r = giop_decode(copy, len, 0, m);
	/* spans point into the copy: re-point them into w so callers can read them */
	if (r != GIOP_INVALID) {
		struct gs_span *sp[] = { &m->object_key, &m->operation, &m->principal, &m->exception_id };
		for (size_t i = 0; i < sizeof sp / sizeof *sp; i++)
			if (sp[i]->p)
				sp[i]->p = w->b + start + (size_t)(sp[i]->p - copy);
		for (unsigned i = 0; i < m->n_kept; i++)
			if (m->ctx[i].data.p)
				m->ctx[i].data.p = w->b + start + (size_t)(m->ctx[i].data.p - copy);
	}
	free(copy);
	return r;
}

/* ---- header -------------------------------------------------------------- */

static void test_header_every_version_and_order(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++) {
			size_t len;
			ub_reset(&w);
			len = ub_close(&w, MINORS[v], le);
			assert_int_equal(len, 12);
			assert_memory_equal(w.b, "GIOP\x01", 5);
			assert_int_equal(w.b[5], MINORS[v]);
			assert_int_equal(w.b[6], le ? 1 : 0);
			assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
			assert_int_equal(m.major, 1);
			assert_int_equal(m.minor, MINORS[v]);
			assert_int_equal(m.flags, le ? 1 : 0);
			assert_int_equal(m.type, GIOP_CLOSE_CONNECTION);
			assert_int_equal(m.little_endian, le);
			assert_false(m.more_fragments);
			assert_int_equal(m.size, 0);
			assert_int_equal(m.msg_len, 12);
			assert_int_equal(m.have, 0);
			assert_int_equal(m.error, GIOP_ERR_NONE);
			assert_int_equal(m.body_offset, 12);
		}
	ub_free(&w);
}

static void test_header_size_byte_order(void **state)
{
	static const uint8_t be[] = { 'G', 'I', 'O', 'P', 1, 2, 0, 6, 0x00, 0x01, 0x02, 0x03 };
	static const uint8_t le[] = { 'G', 'I', 'O', 'P', 1, 2, 1, 6, 0x00, 0x01, 0x02, 0x03 };
	static const uint8_t le10[] = { 'G', 'I', 'O', 'P', 1, 0, 1, 6, 0x10, 0x00, 0x00, 0x00 };
	struct giop_msg m;
	assert_int_equal(giop_decode_header(be, 12, 0, &m), GIOP_OK);
	assert_int_equal(m.size, 0x00010203u);
	assert_int_equal(m.msg_len, 0x00010203u + 12);
	assert_false(m.little_endian);
	assert_int_equal(giop_decode_header(le, 12, 0, &m), GIOP_OK);
	assert_int_equal(m.size, 0x03020100u);
	assert_true(m.little_endian);
	assert_int_equal(giop_decode_header(le10, 12, 0, &m), GIOP_OK);
	assert_int_equal(m.size, 16);
	assert_true(m.little_endian);
	assert_false(m.more_fragments);
}

static void test_header_more_fragments_flag(void **state)
{
	struct giop_msg m;
	for (unsigned minor = 1; minor <= 3; minor++)
		for (uint8_t flags = 0; flags < 4; flags++) {
			uint8_t h[12] = { 'G', 'I', 'O', 'P', 1, (uint8_t)minor, flags, GIOP_FRAGMENT, 0, 0, 0, 0 };
			if (minor >= 2) {
				/* a 1.2 Fragment needs its request id: give it 4 bytes */
				uint8_t b[16] = { 'G', 'I', 'O', 'P', 1, (uint8_t)minor, flags, GIOP_FRAGMENT };
				if (flags & 1)
					b[8] = 4, b[12] = 7;
				else
					b[11] = 4, b[15] = 7;
				assert_int_equal(giop_decode(b, 16, 0, &m), GIOP_OK);
				assert_int_equal(m.request_id, 7);
				assert_int_equal(m.have, GIOP_HAVE_REQUEST_ID);
				assert_int_equal(m.body_offset, 16);
			} else {
				assert_int_equal(giop_decode(h, 12, 0, &m), GIOP_OK);
				assert_int_equal(m.have, 0);
				assert_int_equal(m.body_offset, 12);
			}
			assert_int_equal(m.little_endian, (flags & 1) != 0);
			assert_int_equal(m.more_fragments, (flags & 2) != 0);
		}
}

/* ---- Request ------------------------------------------------------------- */

/* 1.0 / 1.1 Request with four service contexts and a principal. */
static size_t req_10_11(struct ub *w, unsigned minor, bool le, bool resp, size_t *body_at)
{
	static const uint8_t bidir[] = { 0, 0, 0, 0, 0 }; /* BiDirIIOPServiceContext: no addresses */
	ub_giop_begin(w, minor, le, GIOP_REQUEST, false);
	ub_u32(w, 4);
	ub_ctx_codesets(w, !le, 0x05010001, 0x00010109);
	ub_ctx_priority(w, le, 1234);
	ub_ctx_raw(w, GIOP_SC_BI_DIR_IIOP, bidir, sizeof bidir);
	ub_ctx_raw(w, 0x4f4d4f00, "xyz", 3);
	ub_u32(w, 0x01020304);
	ub_u8(w, resp);
	if (minor == 1)
		ub_fill(w, 0, 3);
	ub_octets(w, "\x00\x01objkey", 8);
	ub_str(w, "get_value");
	ub_octets(w, "nobody", 6);
	*body_at = w->n - w->msg;
	ub_u32(w, 42); /* the body */
	return ub_giop_end(w);
}

static void test_request_10_11(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (unsigned minor = 0; minor <= 1; minor++)
		for (int le = 0; le < 2; le++)
			for (int resp = 0; resp < 2; resp++) {
				size_t body_at, len;
				ub_reset(&w);
				len = req_10_11(&w, minor, le, resp, &body_at);
				assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
				assert_int_equal(m.type, GIOP_REQUEST);
				assert_int_equal(m.little_endian, le);
				assert_int_equal(m.have, GIOP_HAVE_REQUEST_ID | GIOP_HAVE_RESPONSE | GIOP_HAVE_TARGET |
								 GIOP_HAVE_OPERATION | GIOP_HAVE_CONTEXTS |
								 GIOP_HAVE_PRINCIPAL);
				assert_int_equal(m.request_id, 0x01020304);
				assert_int_equal(m.response_expected, resp);
				assert_int_equal(m.response_flags, resp ? 3 : 0);
				assert_int_equal(m.disposition, 0);
				assert_int_equal(m.object_key.len, 8);
				assert_memory_equal(m.object_key.p, "\x00\x01objkey", 8);
				assert_span_str(m.operation, "get_value");
				assert_int_equal(m.principal.len, 6);
				assert_int_equal(m.n_contexts, 4);
				assert_int_equal(m.n_kept, 4);
				assert_true(m.has_codesets);
				assert_int_equal(m.char_codeset, 0x05010001);
				assert_int_equal(m.wchar_codeset, 0x00010109);
				assert_true(m.has_priority);
				assert_int_equal(m.priority, 1234);
				assert_true(m.has_bidir);
				assert_int_equal(m.ctx[0].id, GIOP_SC_CODESETS);
				assert_int_equal(m.ctx[0].data.len, 12);
				assert_int_equal(m.ctx[1].id, GIOP_SC_RT_CORBA_PRIORITY);
				assert_int_equal(m.ctx[1].data.len, 4);
				assert_int_equal(m.ctx[2].id, GIOP_SC_BI_DIR_IIOP);
				assert_int_equal(m.ctx[3].id, 0x4f4d4f00);
				assert_int_equal(m.ctx[3].data.len, 3);
				assert_memory_equal(m.ctx[3].data.p, "xyz", 3);
				assert_int_equal(m.body_offset, body_at);
				assert_false(m.string_unterminated);
			}
	ub_free(&w);
}

/* Fixed offsets of a minimal 1.0 Request, as CDR lays them out (cross-checks the writer). */
static void test_request_10_layout(void **state)
{
	struct ub w;
	struct giop_msg m;
	size_t len;
	ub_init(&w, false);
	len = ub_request(&w, 0, false, 5, "echo", 0);
	/* 12 hdr, ctx count @12, rid @16, resp @20, key len @24, key @28, op len @32,
	 * op @36 (5 with NUL), principal len @44 */
	assert_int_equal(len, 48);
	assert_int_equal(w.b[19], 5);
	assert_int_equal(w.b[20], 1);
	assert_int_equal(w.b[27], 4);
	assert_memory_equal(w.b + 28, "key1", 4);
	assert_int_equal(w.b[35], 5);
	assert_memory_equal(w.b + 36, "echo", 5);
	assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
	assert_int_equal(m.size, 36);
	assert_int_equal(m.body_offset, 48);
	assert_int_equal(m.principal.len, 0);
	/* 1.1: 3 reserved octets after response_expected; the key length stays at 24 */
	ub_reset(&w);
	len = ub_request(&w, 1, true, 5, "echo", 0);
	assert_int_equal(len, 48);
	assert_int_equal(w.b[24], 4);
	ub_free(&w);
}

static void check_req12_common(const struct giop_msg *m, unsigned minor, bool le)
{
	assert_int_equal(m->minor, minor);
	assert_int_equal(m->little_endian, le);
	assert_int_equal(m->request_id, 0xdeadbeef);
	assert_int_equal(m->have, GIOP_HAVE_REQUEST_ID | GIOP_HAVE_RESPONSE | GIOP_HAVE_TARGET |
					  GIOP_HAVE_OPERATION | GIOP_HAVE_CONTEXTS);
	assert_span_str(m->operation, "_get_name");
	assert_int_equal(m->error, GIOP_ERR_NONE);
}

static void test_request_12_keyaddr_and_flags(void **state)
{
	static const uint8_t flags[] = { 0, 1, 3 };
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (unsigned minor = 2; minor <= 3; minor++)
		for (int le = 0; le < 2; le++)
			for (size_t f = 0; f < 3; f++) {
				size_t len, body_at;
				ub_reset(&w);
				ub_giop_begin(&w, minor, le, GIOP_REQUEST, false);
				ub_u32(&w, 0xdeadbeef);
				ub_u8(&w, flags[f]);
				ub_fill(&w, 0, 3);
				ub_u16(&w, 0);
				ub_octets(&w, "KEY", 3);
				ub_str(&w, "_get_name");
				ub_u32(&w, 2);
				ub_ctx_priority(&w, !le, -7);
				ub_ctx_codesets(&w, le, 0x00010001, 0x00010100);
				ub_align(&w, 8);
				body_at = w.n;
				ub_u32(&w, 1);
				len = ub_giop_end(&w);
				assert_int_equal(body_at % 8, 0);
				assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
				check_req12_common(&m, minor, le);
				assert_int_equal(m.response_flags, flags[f]);
				assert_int_equal(m.response_expected, flags[f] & 1);
				assert_int_equal(m.disposition, 0);
				assert_span_str(m.object_key, "KEY");
				assert_int_equal(m.n_contexts, 2);
				assert_true(m.has_priority);
				assert_int_equal(m.priority, -7);
				assert_true(m.has_codesets);
				assert_int_equal(m.char_codeset, 0x00010001);
				assert_int_equal(m.wchar_codeset, 0x00010100);
				assert_false(m.has_bidir);
				assert_int_equal(m.body_offset, body_at);
			}
	ub_free(&w);
}

static void test_request_12_profileaddr(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (unsigned minor = 2; minor <= 3; minor++)
		for (int le = 0; le < 2; le++)
			for (int ele = 0; ele < 2; ele++) {
				size_t len;
				ub_reset(&w);
				ub_giop_begin(&w, minor, le, GIOP_REQUEST, false);
				ub_u32(&w, 0xdeadbeef);
				ub_u8(&w, 3);
				ub_fill(&w, 0, 3);
				ub_u16(&w, 1);
				ub_iiop_profile(&w, ele, "server.example", 2809, "\xffPOA\x00obj", 8);
				ub_str(&w, "_get_name");
				ub_u32(&w, 0);
				len = ub_giop_end(&w);
				assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
				check_req12_common(&m, minor, le);
				assert_int_equal(m.disposition, 1);
				assert_int_equal(m.profile_tag, 0);
				assert_int_equal(m.object_key.len, 8);
				assert_memory_equal(m.object_key.p, "\xffPOA\x00obj", 8);
				/* the key points into the message itself */
				assert_true(m.object_key.p > w.b && m.object_key.p < w.b + len);
				assert_int_equal(m.n_contexts, 0);
				assert_int_equal(m.body_offset, len);
			}
	ub_free(&w);
}

static void test_request_12_profileaddr_not_iiop(void **state)
{
	struct ub w;
	struct giop_msg m;
	size_t len;
	ub_init(&w, false);
	ub_giop_begin(&w, 2, false, GIOP_REQUEST, false);
	ub_u32(&w, 0xdeadbeef);
	ub_u8(&w, 3);
	ub_fill(&w, 0, 3);
	ub_u16(&w, 1);
	ub_u32(&w, 1); /* TAG_MULTIPLE_COMPONENTS */
	ub_octets(&w, "\x00\x00\x00\x00\x00", 5);
	ub_str(&w, "_get_name");
	ub_u32(&w, 0);
	len = ub_giop_end(&w);
	assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
	check_req12_common(&m, 2, false);
	assert_int_equal(m.disposition, 1);
	assert_int_equal(m.profile_tag, 1);
	assert_null(m.object_key.p);
	assert_int_equal(m.object_key.len, 0);
	ub_free(&w);
}

static void test_request_12_referenceaddr(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (int le = 0; le < 2; le++)
		for (uint32_t index = 0; index < 3; index++) {
			size_t len;
			ub_reset(&w);
			ub_giop_begin(&w, 2, le, GIOP_REQUEST, false);
			ub_u32(&w, 0xdeadbeef);
			ub_u8(&w, 3);
			ub_fill(&w, 0, 3);
			ub_u16(&w, 2);
			ub_u32(&w, index);
			ub_str(&w, "IDL:Bench/Echo:1.0");
			ub_u32(&w, 3);
			ub_u32(&w, 1); /* TAG_MULTIPLE_COMPONENTS */
			ub_octets(&w, "\x00\x00\x00\x00\x00", 5);
			ub_iiop_profile(&w, !le, "h1", 1000, "first", 5);
			ub_iiop_profile(&w, le, "host-two", 2000, "second-key", 10);
			ub_str(&w, "_get_name");
			ub_u32(&w, 0);
			len = ub_giop_end(&w);
			assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
			check_req12_common(&m, 2, le);
			assert_int_equal(m.disposition, 2);
			if (index == 0) {
				assert_int_equal(m.profile_tag, 1);
				assert_null(m.object_key.p);
			} else {
				assert_int_equal(m.profile_tag, 0);
				assert_span_str(m.object_key, index == 1 ? "first" : "second-key");
			}
		}
	ub_free(&w);
}

static void test_request_1x_object_key_and_principal_12_absent(void **state)
{
	/* 1.2 has no principal: have never includes it */
	struct ub w;
	struct giop_msg m;
	size_t len;
	ub_init(&w, false);
	len = ub_request(&w, 2, true, 9, "op", 16);
	assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
	assert_false(m.have & GIOP_HAVE_PRINCIPAL);
	assert_span_str(m.object_key, UB_KEY);
	/* 12 + rid + flags/reserved + disp(2) pad(2) + keylen + key4 + oplen + "op\0"(3) -> 39,
	 * ctx count @40 -> 44, body aligned to 48 */
	assert_int_equal(m.body_offset, 48);
	assert_int_equal(len, 48 + 16);
	ub_free(&w);
}

static void test_contexts_kept_bound(void **state)
{
	struct ub w;
	struct giop_msg m;
	size_t len;
	ub_init(&w, false);
	ub_giop_begin(&w, 2, false, GIOP_REPLY, false);
	ub_u32(&w, 1);
	ub_u32(&w, GIOP_NO_EXCEPTION);
	ub_u32(&w, 20);
	for (uint32_t i = 0; i < 19; i++)
		ub_ctx_raw(&w, 100 + i, "ab", 2);
	ub_ctx_priority(&w, false, 77); /* the 20th: not kept, still decoded */
	len = ub_giop_end(&w);
	assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
	assert_int_equal(m.n_contexts, 20);
	assert_int_equal(m.n_kept, GIOP_MAX_CONTEXTS);
	for (uint32_t i = 0; i < GIOP_MAX_CONTEXTS; i++) {
		assert_int_equal(m.ctx[i].id, 100 + i);
		assert_int_equal(m.ctx[i].data.len, 2);
	}
	assert_true(m.has_priority);
	assert_int_equal(m.priority, 77);
	ub_free(&w);
}

static void test_strings_empty_and_unterminated(void **state)
{
	struct ub w;
	struct giop_msg m;
	size_t len;
	ub_init(&w, false);
	/* operation of length 0 (no NUL): accepted as "", flagged */
	ub_giop_begin(&w, 2, false, GIOP_REQUEST, false);
	ub_u32(&w, 1);
	ub_u8(&w, 3);
	ub_fill(&w, 0, 3);
	ub_u16(&w, 0);
	ub_octets(&w, "k", 1);
	ub_u32(&w, 0);
	ub_u32(&w, 0);
	len = ub_giop_end(&w);
	assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
	assert_int_equal(m.operation.len, 0);
	assert_true(m.string_unterminated);
	assert_true(m.have & GIOP_HAVE_OPERATION);
	assert_int_equal(m.n_contexts, 0);
	/* operation without its NUL: used as is */
	ub_reset(&w);
	ub_giop_begin(&w, 2, false, GIOP_REQUEST, false);
	ub_u32(&w, 1);
	ub_u8(&w, 3);
	ub_fill(&w, 0, 3);
	ub_u16(&w, 0);
	ub_octets(&w, "k", 1);
	ub_octets(&w, "abcd", 4);
	ub_u32(&w, 0);
	len = ub_giop_end(&w);
	assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
	assert_span_str(m.operation, "abcd");
	assert_true(m.string_unterminated);
	ub_free(&w);
}

/* ---- Reply --------------------------------------------------------------- */

static void test_reply_every_status(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++)
			for (uint32_t st = 0; st <= 5; st++) {
				size_t len, body_at;
				if (st == GIOP_USER_EXCEPTION || st == GIOP_SYSTEM_EXCEPTION)
					continue;
				ub_reset(&w);
				ub_giop_begin(&w, MINORS[v], le, GIOP_REPLY, false);
				if (MINORS[v] <= 1) {
					ub_u32(&w, 1);
					ub_ctx_codesets(&w, le, 0x05010001, 0x00010109);
					ub_u32(&w, 77);
					ub_u32(&w, st);
				} else {
					ub_u32(&w, 77);
					ub_u32(&w, st);
					ub_u32(&w, 1);
					ub_ctx_codesets(&w, le, 0x05010001, 0x00010109);
					ub_align(&w, 8);
				}
				body_at = w.n;
				ub_u32(&w, 0x11223344);
				len = ub_giop_end(&w);
				assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
				assert_int_equal(m.type, GIOP_REPLY);
				assert_int_equal(m.request_id, 77);
				assert_int_equal(m.status, st);
				assert_int_equal(m.have, GIOP_HAVE_REQUEST_ID | GIOP_HAVE_STATUS | GIOP_HAVE_CONTEXTS);
				assert_true(m.has_codesets);
				assert_int_equal(m.body_offset, body_at);
				if (MINORS[v] >= 2) {
					/* 12 + 4 + 4 + count 4 + id 4 + len 4 + encap 12 = 44 -> 48 */
					assert_int_equal(body_at, 48);
				} else {
					/* 12 + count + id + len + encap 12 + rid + status = 44 */
					assert_int_equal(body_at, 44);
				}
			}
	ub_free(&w);
}

static void test_reply_user_exception(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++) {
			size_t len, body_at;
			ub_reset(&w);
			ub_giop_begin(&w, MINORS[v], le, GIOP_REPLY, false);
			if (MINORS[v] <= 1) {
				ub_u32(&w, 0);
				ub_u32(&w, 3);
				ub_u32(&w, GIOP_USER_EXCEPTION);
			} else {
				ub_u32(&w, 3);
				ub_u32(&w, GIOP_USER_EXCEPTION);
				ub_u32(&w, 0);
				ub_align(&w, 8);
			}
			body_at = w.n;
			ub_str(&w, "IDL:Bench/Busy:1.0");
			ub_u32(&w, 5); /* a member */
			len = ub_giop_end(&w);
			assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
			assert_int_equal(m.status, GIOP_USER_EXCEPTION);
			assert_int_equal(m.have, GIOP_HAVE_REQUEST_ID | GIOP_HAVE_STATUS | GIOP_HAVE_CONTEXTS |
							 GIOP_HAVE_EXCEPTION);
			assert_span_str(m.exception_id, "IDL:Bench/Busy:1.0");
			assert_int_equal(m.minor_code, 0);
			assert_int_equal(m.completed, 0);
			assert_int_equal(m.body_offset, body_at);
			assert_int_equal(body_at, MINORS[v] >= 2 ? 24 : 24);
		}
	ub_free(&w);
}

static void test_reply_system_exception(void **state)
{
	struct ub w;
	struct giop_msg m;
	char buf[64];
	ub_init(&w, false);
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++)
			for (uint32_t comp = 0; comp < 3; comp++) {
				size_t len;
				ub_reset(&w);
				len = ub_reply_sysex(&w, MINORS[v], le, 0x80000001u,
						     "IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0", 0x4f4d0001u, comp);
				assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
				assert_int_equal(m.request_id, 0x80000001u);
				assert_int_equal(m.status, GIOP_SYSTEM_EXCEPTION);
				assert_true(m.have & GIOP_HAVE_EXCEPTION);
				assert_span_str(m.exception_id, "IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0");
				assert_int_equal(m.minor_code, 0x4f4d0001u);
				assert_int_equal(m.completed, comp);
				assert_string_equal(giop_system_exception_short(m.exception_id, buf, sizeof buf),
						    "OBJECT_NOT_EXIST");
				assert_int_equal(m.body_offset, 24);
			}
	ub_free(&w);
}

/* A 1.2 reply whose contexts end off an 8-byte boundary: the body (and so the
 * exception) starts at the next multiple of 8 from the message start. */
static void test_reply_12_body_alignment(void **state)
{
	struct ub w;
	struct giop_msg m;
	size_t len;
	ub_init(&w, true);
	for (int le = 0; le < 2; le++) {
		ub_reset(&w);
		ub_giop_begin(&w, 2, le, GIOP_REPLY, false);
		ub_u32(&w, 9);
		ub_u32(&w, GIOP_SYSTEM_EXCEPTION);
		ub_u32(&w, 1);
		ub_ctx_raw(&w, 99, "z", 1); /* ends at 12+12+8+1 = 33 */
		assert_int_equal(w.n, 33);
		ub_align(&w, 8);
		assert_int_equal(w.n, 40);
		ub_str(&w, "IDL:omg.org/CORBA/TRANSIENT:1.0");
		ub_u32(&w, 2);
		ub_u32(&w, 1);
		len = ub_giop_end(&w);
		assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
		assert_int_equal(m.body_offset, 40);
		assert_span_str(m.exception_id, "IDL:omg.org/CORBA/TRANSIENT:1.0");
		assert_int_equal(m.minor_code, 2);
		assert_int_equal(m.completed, 1);
	}
	ub_free(&w);
}

/* ---- CancelRequest, LocateRequest, LocateReply, others ------------------- */

static void test_cancel_request(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++) {
			size_t len;
			ub_reset(&w);
			len = ub_cancel(&w, MINORS[v], le, 0x0a0b0c0d);
			assert_int_equal(len, 16);
			assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
			assert_int_equal(m.type, GIOP_CANCEL_REQUEST);
			assert_int_equal(m.request_id, 0x0a0b0c0d);
			assert_int_equal(m.have, GIOP_HAVE_REQUEST_ID);
		}
	ub_free(&w);
}

static void test_locate_request(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++) {
			size_t len;
			ub_reset(&w);
			len = ub_locate_request(&w, MINORS[v], le, 31);
			assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
			assert_int_equal(m.type, GIOP_LOCATE_REQUEST);
			assert_int_equal(m.request_id, 31);
			assert_int_equal(m.have, GIOP_HAVE_REQUEST_ID | GIOP_HAVE_TARGET);
			assert_int_equal(m.disposition, 0);
			assert_span_str(m.object_key, UB_KEY);
			assert_int_equal(m.body_offset, len);
			/* 1.0/1.1: rid, key: 12+4+4+4 = 24; 1.2: rid, disp, pad, len, key = 28 */
			assert_int_equal(len, MINORS[v] >= 2 ? 28 : 24);
		}
	/* 1.2 LocateRequest with a ProfileAddr */
	ub_reset(&w);
	ub_giop_begin(&w, 2, true, GIOP_LOCATE_REQUEST, false);
	ub_u32(&w, 32);
	ub_u16(&w, 1);
	ub_iiop_profile(&w, false, "h", 1, "pkey", 4);
	assert_int_equal(dec(&w, 0, ub_giop_end(&w), &m), GIOP_OK);
	assert_int_equal(m.disposition, 1);
	assert_span_str(m.object_key, "pkey");
	ub_free(&w);
}

static void test_locate_reply_every_status(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++)
			for (uint32_t st = 0; st <= 5; st++) {
				size_t len;
				if (st == GIOP_LOC_SYSTEM_EXCEPTION)
					continue;
				ub_reset(&w);
				len = ub_locate_reply(&w, MINORS[v], le, 8, st);
				assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
				assert_int_equal(m.type, GIOP_LOCATE_REPLY);
				assert_int_equal(m.request_id, 8);
				assert_int_equal(m.status, st);
				assert_int_equal(m.have, GIOP_HAVE_REQUEST_ID | GIOP_HAVE_STATUS);
				assert_int_equal(m.body_offset, 20);
			}
	ub_free(&w);
}

static void test_locate_reply_system_exception_12(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (unsigned minor = 2; minor <= 3; minor++)
		for (int le = 0; le < 2; le++) {
			size_t len;
			ub_reset(&w);
			ub_giop_begin(&w, minor, le, GIOP_LOCATE_REPLY, false);
			ub_u32(&w, 8);
			ub_u32(&w, GIOP_LOC_SYSTEM_EXCEPTION);
			ub_align(&w, 8);
			assert_int_equal(w.n, 24);
			ub_str(&w, "IDL:omg.org/CORBA/COMM_FAILURE:1.0");
			ub_u32(&w, 0x4f4d0002);
			ub_u32(&w, 2);
			len = ub_giop_end(&w);
			assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
			assert_int_equal(m.status, GIOP_LOC_SYSTEM_EXCEPTION);
			assert_int_equal(m.have, GIOP_HAVE_REQUEST_ID | GIOP_HAVE_STATUS | GIOP_HAVE_EXCEPTION);
			assert_span_str(m.exception_id, "IDL:omg.org/CORBA/COMM_FAILURE:1.0");
			assert_int_equal(m.minor_code, 0x4f4d0002);
			assert_int_equal(m.completed, 2);
			assert_int_equal(m.body_offset, 24);
		}
	ub_free(&w);
}

static void test_close_and_message_error(void **state)
{
	struct ub w;
	struct giop_msg m;
	ub_init(&w, false);
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++) {
			ub_reset(&w);
			ub_giop_begin(&w, MINORS[v], le, GIOP_MESSAGE_ERROR, false);
			assert_int_equal(dec(&w, 0, ub_giop_end(&w), &m), GIOP_OK);
			assert_int_equal(m.type, GIOP_MESSAGE_ERROR);
			assert_int_equal(m.have, 0);
			assert_int_equal(m.body_offset, 12);
		}
	ub_free(&w);
}

static void test_fragment_11_and_12(void **state)
{
	struct ub w;
	struct giop_msg m;
	size_t len;
	ub_init(&w, false);
	for (int le = 0; le < 2; le++)
		for (int more = 0; more < 2; more++) {
			ub_reset(&w);
			len = ub_fragment(&w, 1, le, 0, 10, more);
			assert_int_equal(len, 22);
			assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
			assert_int_equal(m.type, GIOP_FRAGMENT);
			assert_int_equal(m.more_fragments, more);
			assert_int_equal(m.have, 0);
			assert_int_equal(m.body_offset, 12);
			for (unsigned minor = 2; minor <= 3; minor++) {
				ub_reset(&w);
				len = ub_fragment(&w, minor, le, 4242, 10, more);
				assert_int_equal(len, 26);
				assert_int_equal(dec(&w, 0, len, &m), GIOP_OK);
				assert_int_equal(m.more_fragments, more);
				assert_int_equal(m.have, GIOP_HAVE_REQUEST_ID);
				assert_int_equal(m.request_id, 4242);
				assert_int_equal(m.body_offset, 16);
			}
		}
	ub_free(&w);
}

/* ---- every truncation point ---------------------------------------------- */

#define N_CASES 15

/* Valid messages whose every byte belongs to a field the decoder needs. */
static size_t build_case(struct ub *w, int i, unsigned minor, bool le)
{
	switch (i) {
	case 0: return ub_request(w, minor, le, 1, "echoString", 0);
	case 1: return ub_request_ex(w, minor, le, 2, 0, "\x01\x02\x03", "op", 0, false);
	case 2: { /* contexts of every kind we decode */
		ub_giop_begin(w, minor, le, GIOP_REQUEST, false);
		if (minor <= 1) {
			ub_u32(w, 3);
			ub_ctx_codesets(w, !le, 1, 2);
			ub_ctx_priority(w, le, 5);
			ub_ctx_raw(w, GIOP_SC_BI_DIR_IIOP, "\0\0\0\0\0", 5);
			ub_u32(w, 3);
			ub_u8(w, 1);
			if (minor == 1)
				ub_fill(w, 0, 3);
			ub_octets(w, "k", 1);
			ub_str(w, "o");
			ub_u32(w, 0);
		} else {
			ub_u32(w, 3);
			ub_u8(w, 3);
			ub_fill(w, 0, 3);
			ub_u16(w, 0);
			ub_octets(w, "k", 1);
			ub_str(w, "o");
			ub_u32(w, 3);
			ub_ctx_codesets(w, !le, 1, 2);
			ub_ctx_priority(w, le, 5);
			ub_ctx_raw(w, GIOP_SC_BI_DIR_IIOP, "\0\0\0\0\0", 5);
		}
		return ub_giop_end(w);
	}
	case 3: /* ProfileAddr (1.2+) or a plain request */
		if (minor < 2)
			return ub_request(w, minor, le, 4, "x", 0);
		ub_giop_begin(w, minor, le, GIOP_REQUEST, false);
		ub_u32(w, 4);
		ub_u8(w, 3);
		ub_fill(w, 0, 3);
		ub_u16(w, 1);
		ub_iiop_profile(w, !le, "host", 9, "kk", 2);
		ub_str(w, "op");
		ub_u32(w, 0);
		return ub_giop_end(w);
	case 4: /* ReferenceAddr */
		if (minor < 2)
			return ub_request(w, minor, le, 5, "get_value", 0);
		ub_giop_begin(w, minor, le, GIOP_REQUEST, false);
		ub_u32(w, 5);
		ub_u8(w, 3);
		ub_fill(w, 0, 3);
		ub_u16(w, 2);
		ub_u32(w, 1);
		ub_str(w, "IDL:X:1.0");
		ub_u32(w, 2);
		ub_iiop_profile(w, le, "a", 1, "k1", 2);
		ub_iiop_profile(w, !le, "b", 2, "k2", 2);
		ub_str(w, "op");
		ub_u32(w, 0);
		return ub_giop_end(w);
	case 5: return ub_reply(w, minor, le, 6, 0);
	case 6: return ub_reply_ex(w, minor, le, 7, GIOP_LOCATION_FORWARD, 0, false);
	case 7: return ub_cancel(w, minor, le, 8);
	case 8: return ub_locate_request(w, minor, le, 9);
	case 9: return ub_locate_reply(w, minor, le, 10, GIOP_OBJECT_HERE);
	case 10: return ub_close(w, minor, le);
	case 11:
		ub_giop_begin(w, minor, le, GIOP_MESSAGE_ERROR, false);
		return ub_giop_end(w);
	case 12:
		if (minor == 0)
			return ub_cancel(w, minor, le, 12);
		return ub_fragment(w, minor, le, 12, 0, true);
	case 13: /* a 1.0/1.1 reply with contexts */
		ub_giop_begin(w, minor, le, GIOP_REPLY, false);
		if (minor <= 1) {
			ub_u32(w, 1);
			ub_ctx_codesets(w, le, 3, 4);
			ub_u32(w, 13);
			ub_u32(w, 0);
		} else {
			ub_u32(w, 13);
			ub_u32(w, 0);
			ub_u32(w, 1);
			ub_ctx_codesets(w, le, 3, 4);
		}
		return ub_giop_end(w);
	case 14: return ub_request_ex(w, minor, le, 14, 0, "", "a_longer_operation_name", 0, false);
	}
	return 0;
}

static void truncation_sweep(const struct ub *w, size_t len, size_t need, const char *what)
{
	struct giop_msg full, m;
	uint32_t prev_have = 0;
	assert_int_equal(dec(w, 0, len, &full), GIOP_OK);
	for (size_t avail = 0; avail <= len; avail++) {
		uint8_t *copy = exact_copy(w->b, avail);
		enum giop_res r = giop_decode(copy, avail, 0, &m);
		free(copy);
		if (avail < need) {
			if (r != GIOP_NEED_MORE)
				fail_msg("%s: avail %zu of %zu: result %d, want NEED_MORE (error %s)", what, avail,
					 len, (int)r, giop_error_name(m.error));
		} else if (r != GIOP_OK) {
			fail_msg("%s: avail %zu of %zu: result %d, want OK", what, avail, len, (int)r);
		}
		assert_int_equal(m.error, GIOP_ERR_NONE);
		if ((m.have & prev_have) != prev_have)
			fail_msg("%s: avail %zu: have 0x%x lost bits of 0x%x", what, avail, m.have, prev_have);
		assert_int_equal(m.have & ~full.have, 0);
		prev_have = m.have;
		if (avail >= GIOP_HEADER_LEN) {
			assert_int_equal(m.type, full.type);
			assert_int_equal(m.msg_len, len);
		}
		if (m.have & GIOP_HAVE_REQUEST_ID)
			assert_int_equal(m.request_id, full.request_id);
		if (m.have & GIOP_HAVE_STATUS)
			assert_int_equal(m.status, full.status);
		if (m.have & GIOP_HAVE_OPERATION)
			assert_int_equal(m.operation.len, full.operation.len);
	}
	assert_int_equal(prev_have, full.have);
}

/* Every case, every version and byte order, except 1.0/1.1 Requests (below). */
static void test_truncation_every_point(void **state)
{
	struct ub w;
	int n = 0;
	ub_init(&w, false);
	for (int i = 0; i < N_CASES; i++)
		for (size_t v = 0; v < 4; v++)
			for (int le = 0; le < 2; le++) {
				char what[64];
				size_t len;
				ub_reset(&w);
				len = build_case(&w, i, MINORS[v], le);
				if (MINORS[v] <= 1 && w.b[7] == GIOP_REQUEST)
					continue;
				snprintf(what, sizeof what, "case %d GIOP 1.%u %s", i, MINORS[v], le ? "LE" : "BE");
				truncation_sweep(&w, len, len, what);
				n++;
			}
	assert_int_equal(n, 96);
	ub_free(&w);
}

/* 1.0/1.1 Requests end their header with the principal: until its length is
 * there the header is not complete (GIOP_HAVE_PRINCIPAL, body_offset), so the
 * answer is NEED_MORE.  Its bytes are skipped, not needed. */
static void test_truncation_request_10_11_principal_needs_more(void **state)
{
	struct ub w;
	ub_init(&w, false);
	for (int i = 0; i < N_CASES; i++)
		for (unsigned minor = 0; minor <= 1; minor++)
			for (int le = 0; le < 2; le++) {
				char what[64];
				size_t len;
				ub_reset(&w);
				len = build_case(&w, i, minor, le);
				if (w.b[7] != GIOP_REQUEST)
					continue;
				snprintf(what, sizeof what, "case %d GIOP 1.%u %s", i, minor, le ? "LE" : "BE");
				truncation_sweep(&w, len, len, what);
			}
	for (unsigned minor = 0; minor <= 1; minor++)
		for (int le = 0; le < 2; le++) {
			size_t body_at, len;
			ub_reset(&w);
			len = req_10_11(&w, minor, le, true, &body_at);
			/* principal "nobody" (6 bytes) ends at body_at, its length just before */
			truncation_sweep(&w, len, body_at - 6, "1.0/1.1 request with a principal");
		}
	ub_free(&w);
}

/* The body is not needed: the header is complete at the end of the contexts. */
static void test_truncation_body_not_needed(void **state)
{
	struct ub w;
	ub_init(&w, false);
	for (unsigned minor = 2; minor <= 3; minor++)
		for (int le = 0; le < 2; le++) {
			size_t len;
			ub_reset(&w);
			len = ub_request(&w, minor, le, 1, "op", 40);
			/* the context count ends at 44; the body starts at 48 */
			assert_int_equal(len, 88);
			truncation_sweep(&w, len, 44, "1.2 request body");
			ub_reset(&w);
			len = ub_reply(&w, minor, le, 1, 40);
			truncation_sweep(&w, len, len - 40, "1.2 reply body");
			ub_reset(&w);
			len = ub_fragment(&w, minor, le, 1, 40, false);
			truncation_sweep(&w, len, len - 40, "1.2 fragment body");
		}
	for (size_t v = 0; v < 2; v++)
		for (int le = 0; le < 2; le++) {
			size_t len;
			ub_reset(&w);
			len = ub_reply(&w, MINORS[v], le, 1, 40);
			truncation_sweep(&w, len, len - 40, "1.0/1.1 reply body");
		}
	ub_free(&w);
}

/* An exception reply cut inside its exception id or minor code is not a
 * complete header: the decoder must ask for more (it has a field to give:
 * exception_id / minor_code / completed, GIOP_HAVE_EXCEPTION). */
static void test_truncation_exception_body_needs_more(void **state)
{
	struct ub w;
	ub_init(&w, false);
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++) {
			size_t len;
			ub_reset(&w);
			len = ub_reply_sysex(&w, MINORS[v], le, 3, "IDL:omg.org/CORBA/NO_PERMISSION:1.0", 1, 1);
			truncation_sweep(&w, len, len, "system exception reply");
		}
	for (unsigned minor = 2; minor <= 3; minor++) {
		size_t len;
		ub_reset(&w);
		ub_giop_begin(&w, minor, false, GIOP_LOCATE_REPLY, false);
		ub_u32(&w, 8);
		ub_u32(&w, GIOP_LOC_SYSTEM_EXCEPTION);
		ub_align(&w, 8);
		ub_str(&w, "IDL:omg.org/CORBA/COMM_FAILURE:1.0");
		ub_u32(&w, 1);
		ub_u32(&w, 2);
		len = ub_giop_end(&w);
		truncation_sweep(&w, len, len, "LOC_SYSTEM_EXCEPTION");
	}
	ub_free(&w);
}

/* What an exception reply cut short gives today, whatever the answer above:
 * never INVALID, status always known once present, and never a half exception. */
static void test_truncation_exception_body_partial_is_consistent(void **state)
{
	struct ub w;
	struct giop_msg m;
	size_t len, status_end = 24; /* 1.2: rid, status, ctx count end at 24 */
	ub_init(&w, false);
	len = ub_reply_sysex(&w, 2, false, 3, "IDL:omg.org/CORBA/NO_PERMISSION:1.0", 1, 1);
	for (size_t avail = status_end; avail < len; avail++) {
		uint8_t *copy = exact_copy(w.b, avail);
		enum giop_res r = giop_decode(copy, avail, 0, &m);
		free(copy);
		assert_int_not_equal(r, GIOP_INVALID);
		assert_true(m.have & GIOP_HAVE_STATUS);
		assert_int_equal(m.status, GIOP_SYSTEM_EXCEPTION);
		assert_false(m.have & GIOP_HAVE_EXCEPTION);
	}
	ub_free(&w);
}

/* A message with more fragments may continue its header in the next Fragment:
 * running past its end is NEED_MORE, never INVALID. */
static void test_header_continues_in_fragment(void **state)
{
	struct ub w;
	struct giop_msg m;
	size_t len;
	ub_init(&w, false);
	for (unsigned minor = 1; minor <= 3; minor++)
		for (int le = 0; le < 2; le++) {
			ub_reset(&w);
			ub_giop_begin(&w, minor, le, GIOP_REQUEST, true);
			if (minor == 1) {
				ub_u32(&w, 0);
				ub_u32(&w, 12);
				ub_u8(&w, 1);
				ub_fill(&w, 0, 3);
				ub_octets(&w, "key1", 4);
			} else {
				ub_u32(&w, 12);
				ub_u8(&w, 3);
				ub_fill(&w, 0, 3);
				ub_u16(&w, 0);
				ub_octets(&w, "key1", 4);
			}
			ub_u32(&w, 1000); /* the operation's length; its bytes come later */
			len = ub_giop_end(&w);
			assert_int_equal(dec(&w, 0, len, &m), GIOP_NEED_MORE);
			assert_true(m.more_fragments);
			assert_int_equal(m.error, GIOP_ERR_NONE);
			assert_int_equal(m.request_id, 12);
			assert_true(m.have & GIOP_HAVE_TARGET);
			assert_false(m.have & GIOP_HAVE_OPERATION);
			assert_span_str(m.object_key, "key1");
			/* without the flag the same bytes overrun the message */
			w.b[6] &= (uint8_t)~GIOP_FLAG_MORE;
			assert_int_equal(dec(&w, 0, len, &m), GIOP_INVALID);
			assert_int_equal(m.error, GIOP_ERR_OVERRUN);
		}
	ub_free(&w);
}

/* ---- malformed ------------------------------------------------------------ */

static void expect_invalid(const uint8_t *p, size_t n, uint32_t max, enum giop_error err)
{
	struct giop_msg m;
	uint8_t *copy = exact_copy(p, n);
	enum giop_res r = giop_decode(copy, n, max, &m);
	free(copy);
	assert_int_equal(r, GIOP_INVALID);
	assert_int_equal(m.error, err);
}

static void test_malformed_header(void **state)
{
	static const uint8_t ok[12] = { 'G', 'I', 'O', 'P', 1, 2, 0, 5, 0, 0, 0, 0 };
	uint8_t h[12];

	memcpy(h, ok, 12);
	h[3] = 'X';
	expect_invalid(h, 12, 0, GIOP_ERR_MAGIC);
	expect_invalid(h, 4, 0, GIOP_ERR_MAGIC);
	expect_invalid((const uint8_t *)"GX", 2, 0, GIOP_ERR_MAGIC);
	expect_invalid((const uint8_t *)"POGI", 4, 0, GIOP_ERR_MAGIC);
	expect_invalid((const uint8_t *)"giop\x01\x02\x00\x05\0\0\0\0", 12, 0, GIOP_ERR_MAGIC);

	memcpy(h, ok, 12);
	h[4] = 2, h[5] = 0;
	expect_invalid(h, 12, 0, GIOP_ERR_VERSION);
	h[4] = 1, h[5] = 4;
	expect_invalid(h, 12, 0, GIOP_ERR_VERSION);
	h[4] = 0, h[5] = 9;
	expect_invalid(h, 12, 0, GIOP_ERR_VERSION);

	memcpy(h, ok, 12);
	h[7] = 8;
	expect_invalid(h, 12, 0, GIOP_ERR_TYPE);
	h[7] = 0xff;
	expect_invalid(h, 12, 0, GIOP_ERR_TYPE);
	h[5] = 0, h[7] = GIOP_FRAGMENT;
	expect_invalid(h, 12, 0, GIOP_ERR_TYPE);

	memcpy(h, ok, 12);
	h[5] = 0, h[6] = 2; /* 1.0: the byte_order boolean is 0 or 1 */
	expect_invalid(h, 12, 0, GIOP_ERR_FLAGS);

	/* 1.1+: bits 4-7 of the flags are reserved; 2-3 are ZIOP's and allowed */
	for (uint8_t minor = 1; minor <= 3; minor++)
		for (unsigned bit = 2; bit < 8; bit++) {
			struct giop_msg m;
			memcpy(h, ok, 12);
			h[5] = minor;
			h[6] = (uint8_t)(1u << bit);
			if (bit >= 4) {
				expect_invalid(h, 12, 0, GIOP_ERR_FLAGS);
			} else {
				assert_int_equal(giop_decode(h, 12, 0, &m), GIOP_OK);
				assert_int_equal(m.flags, 1u << bit);
				assert_false(m.little_endian);
				assert_false(m.more_fragments);
			}
		}

	memcpy(h, ok, 12);
	h[8] = 0, h[9] = 0x10, h[10] = 0, h[11] = 1; /* 0x00100001 */
	expect_invalid(h, 12, 0x00100000, GIOP_ERR_SIZE);
	{
		struct giop_msg m;
		uint8_t b[12];
		memcpy(b, h, 12);
		assert_int_equal(giop_decode_header(b, 12, 0x00100001, &m), GIOP_OK);
		assert_int_equal(m.size, 0x00100001);
		/* sizes that would overflow msg_len */
		b[8] = b[9] = b[10] = 0xff, b[11] = 0xf4;
		assert_int_equal(giop_decode_header(b, 12, 0, &m), GIOP_INVALID);
		assert_int_equal(m.error, GIOP_ERR_SIZE);
		b[11] = 0xf3;
		assert_int_equal(giop_decode_header(b, 12, 0, &m), GIOP_OK);
		assert_int_equal(m.msg_len, 0xffffffffu);
	}
}

static void test_malformed_body(void **state)
{
	struct ub w;
	size_t len;
	ub_init(&w, false);

	/* operation string longer than the message */
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++) {
			ub_reset(&w);
			len = ub_request(&w, MINORS[v], le, 1, "op", 0);
			{
				size_t at;
				struct giop_msg m;
				/* the operation's length: 3, followed by "op" */
				for (at = 12; at + 4 <= len; at++)
					if ((le ? gs_le32(w.b + at) : gs_be32(w.b + at)) == 3 && w.b[at + 4] == 'o')
						break;
				assert_true(at + 4 <= len);
				ub_put32_at(&w, at, 1000, le);
				assert_int_equal(dec(&w, 0, len, &m), GIOP_INVALID);
				assert_int_equal(m.error, GIOP_ERR_OVERRUN);
				/* the message size is known from the header: the overrun is seen
				 * as soon as the length is, whatever follows */
				assert_int_equal(dec(&w, 0, at + 4, &m), GIOP_INVALID);
				assert_int_equal(m.error, GIOP_ERR_OVERRUN);
			}
		}

	/* service context count 0xffffffff */
	for (size_t v = 0; v < 4; v++)
		for (int le = 0; le < 2; le++) {
			struct giop_msg m;
			ub_reset(&w);
			ub_giop_begin(&w, MINORS[v], le, GIOP_REPLY, false);
			if (MINORS[v] <= 1) {
				ub_u32(&w, 0xffffffffu);
				ub_u32(&w, 1);
				ub_u32(&w, 0);
			} else {
				ub_u32(&w, 1);
				ub_u32(&w, 0);
				ub_u32(&w, 0xffffffffu);
			}
			ub_fill(&w, 0, 64);
			len = ub_giop_end(&w);
			assert_int_equal(dec(&w, 0, len, &m), GIOP_INVALID);
			assert_int_equal(m.error, GIOP_ERR_OVERRUN);
			assert_int_equal(m.n_contexts, 0xffffffffu);
			/* whole (id, empty data) pairs before the end: 1.0/1.1 (1,0) + 64/8; 1.2 64/8 */
			assert_int_equal(m.n_kept, MINORS[v] <= 1 ? 9 : 8);
		}

	/* unknown TargetAddress disposition */
	for (unsigned minor = 2; minor <= 3; minor++)
		for (int le = 0; le < 2; le++)
			for (uint16_t disp = 3; disp != 0; disp = disp == 3 ? 0xffff : 0) {
				struct giop_msg m;
				ub_reset(&w);
				ub_giop_begin(&w, minor, le, GIOP_REQUEST, false);
				ub_u32(&w, 1);
				ub_u8(&w, 3);
				ub_fill(&w, 0, 3);
				ub_u16(&w, disp);
				ub_fill(&w, 0, 32);
				len = ub_giop_end(&w);
				assert_int_equal(dec(&w, 0, len, &m), GIOP_INVALID);
				assert_int_equal(m.error, GIOP_ERR_DISPOSITION);
				assert_int_equal(m.request_id, 1);
			}

	/* object key longer than the message (1.0) */
	{
		struct giop_msg m;
		ub_reset(&w);
		ub_giop_begin(&w, 0, false, GIOP_LOCATE_REQUEST, false);
		ub_u32(&w, 1);
		ub_u32(&w, 5);
		ub_raw(&w, "abcd", 4);
		len = ub_giop_end(&w);
		assert_int_equal(dec(&w, 0, len, &m), GIOP_INVALID);
		assert_int_equal(m.error, GIOP_ERR_OVERRUN);
	}
	/* a CancelRequest whose size leaves no room for the request id */
	{
		struct giop_msg m;
		ub_reset(&w);
		ub_giop_begin(&w, 1, true, GIOP_CANCEL_REQUEST, false);
		ub_u16(&w, 1);
		len = ub_giop_end(&w);
		assert_int_equal(dec(&w, 0, len, &m), GIOP_INVALID);
		assert_int_equal(m.error, GIOP_ERR_OVERRUN);
	}
	/* an exception id longer than the message */
	{
		struct giop_msg m;
		ub_reset(&w);
		ub_giop_begin(&w, 2, false, GIOP_REPLY, false);
		ub_u32(&w, 1);
		ub_u32(&w, GIOP_USER_EXCEPTION);
		ub_u32(&w, 0);
		ub_u32(&w, 100);
		ub_raw(&w, "IDL:", 4);
		len = ub_giop_end(&w);
		assert_int_equal(dec(&w, 0, len, &m), GIOP_INVALID);
		assert_int_equal(m.error, GIOP_ERR_OVERRUN);
	}
	ub_free(&w);
}

static void test_max_size_bound(void **state)
{
	struct ub w;
	struct giop_msg m;
	size_t len;
	ub_init(&w, false);
	len = ub_request(&w, 2, false, 1, "op", 100);
	assert_int_equal(giop_decode(w.b, len, (uint32_t)(len - 12), &m), GIOP_OK);
	assert_int_equal(giop_decode(w.b, len, (uint32_t)(len - 13), &m), GIOP_INVALID);
	assert_int_equal(m.error, GIOP_ERR_SIZE);
	ub_free(&w);
}

/* ---- plausible header (resync) --------------------------------------------- */

static void test_plausible_header(void **state)
{
	uint8_t h[12] = { 'G', 'I', 'O', 'P', 1, 2, 1, 0, 0x10, 0, 0, 0 };
	assert_true(giop_plausible_header(h, 12, 0));
	assert_true(giop_plausible_header(h, 12, 16));
	assert_false(giop_plausible_header(h, 12, 15));
	assert_true(giop_plausible_header(h, 11, 15)); /* the size is not there yet */
	assert_true(giop_plausible_header(h, 4, 0));
	assert_false(giop_plausible_header(h, 3, 0));
	h[5] = 4;
	assert_false(giop_plausible_header(h, 12, 0));
	assert_true(giop_plausible_header(h, 5, 0));
	h[5] = 3;
	h[6] = 0x10;
	assert_false(giop_plausible_header(h, 12, 0));
	h[6] = 0;
	h[7] = 8;
	assert_false(giop_plausible_header(h, 12, 0));
	assert_true(giop_plausible_header(h, 7, 0));
	h[7] = 7;
	h[4] = 2;
	assert_false(giop_plausible_header(h, 12, 0));
	assert_false(giop_plausible_header((const uint8_t *)"GIOQ", 4, 0));
}

/* ---- names ---------------------------------------------------------------- */

static void test_names(void **state)
{
	char buf[32];
	struct gs_span s;
	assert_string_equal(giop_type_name(GIOP_REQUEST), "Request");
	assert_string_equal(giop_type_name(GIOP_LOCATE_REPLY), "LocateReply");
	assert_string_equal(giop_type_name(GIOP_FRAGMENT), "Fragment");
	assert_string_equal(giop_type_name(8), "Unknown");
	assert_string_equal(giop_reply_status_name(0), "NO_EXCEPTION");
	assert_string_equal(giop_reply_status_name(4), "LOCATION_FORWARD_PERM");
	assert_string_equal(giop_reply_status_name(5), "NEEDS_ADDRESSING_MODE");
	assert_null(giop_reply_status_name(6));
	assert_string_equal(giop_locate_status_name(0), "UNKNOWN_OBJECT");
	assert_string_equal(giop_locate_status_name(4), "LOC_SYSTEM_EXCEPTION");
	assert_string_equal(giop_locate_status_name(5), "LOC_NEEDS_ADDRESSING_MODE");
	assert_null(giop_locate_status_name(6));
	assert_null(giop_locate_status_name(0xffffffffu));
	assert_string_equal(giop_error_name(GIOP_ERR_NONE), "none");
	assert_string_equal(giop_error_name(GIOP_ERR_DISPOSITION), "unknown TargetAddress disposition");
	assert_string_equal(giop_error_name(GIOP_ERR_COUNT), "?");
	assert_string_equal(giop_service_context_name(1), "CodeSets");
	assert_string_equal(giop_service_context_name(10), "RTCorbaPriority");
	assert_null(giop_service_context_name(22));

	s.p = (const uint8_t *)"IDL:omg.org/CORBA/TRANSIENT:1.0";
	s.len = strlen((const char *)s.p);
	assert_string_equal(giop_system_exception_short(s, buf, sizeof buf), "TRANSIENT");
	assert_string_equal(giop_system_exception_short(s, buf, 5), "TRAN");
	s.p = (const uint8_t *)"IDL:omg.org/CORBA/BAD\x01OP:1.0";
	s.len = strlen((const char *)s.p);
	assert_string_equal(giop_system_exception_short(s, buf, sizeof buf), "BAD?OP");
	s.p = (const uint8_t *)"IDL:omg.org/CORBA/:1.0";
	s.len = strlen((const char *)s.p);
	assert_null(giop_system_exception_short(s, buf, sizeof buf));
	s.p = NULL;
	s.len = 4;
	assert_null(giop_system_exception_short(s, buf, sizeof buf));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_header_every_version_and_order),
		UT(test_header_size_byte_order),
		UT(test_header_more_fragments_flag),
		UT(test_request_10_11),
		UT(test_request_10_layout),
		UT(test_request_12_keyaddr_and_flags),
		UT(test_request_12_profileaddr),
		UT(test_request_12_profileaddr_not_iiop),
		UT(test_request_12_referenceaddr),
		UT(test_request_1x_object_key_and_principal_12_absent),
		UT(test_contexts_kept_bound),
		UT(test_strings_empty_and_unterminated),
		UT(test_reply_every_status),
		UT(test_reply_user_exception),
		UT(test_reply_system_exception),
		UT(test_reply_12_body_alignment),
		UT(test_cancel_request),
		UT(test_locate_request),
		UT(test_locate_reply_every_status),
		UT(test_locate_reply_system_exception_12),
		UT(test_close_and_message_error),
		UT(test_fragment_11_and_12),
		UT(test_truncation_every_point),
		UT(test_truncation_request_10_11_principal_needs_more),
		UT(test_truncation_body_not_needed),
		UT(test_truncation_exception_body_needs_more),
		UT(test_truncation_exception_body_partial_is_consistent),
		UT(test_header_continues_in_fragment),
		UT(test_malformed_header),
		UT(test_malformed_body),
		UT(test_max_size_bound),
		UT(test_plausible_header),
		UT(test_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
