/* SPDX-License-Identifier: BSD-2-Clause */
/* GIOP message headers, as laid out by CORBA 3.x chapter 15 (GIOP 1.0 - 1.3). */
#include "giop.h"

#define TRY(x)                                   \
	do {                                     \
		enum giop_res r_ = (x);          \
		if (r_ != GIOP_OK)               \
			return fail(m, r_);      \
	} while (0)

/* An INVALID from the CDR reader always means "ran past the message size". */
static enum giop_res fail(struct giop_msg *m, enum giop_res r)
{
	if (r == GIOP_INVALID && m->error == GIOP_ERR_NONE)
		m->error = GIOP_ERR_OVERRUN;
	return r;
}

bool giop_plausible_header(const uint8_t *p, size_t avail, uint32_t max_size)
{
	uint32_t size;
	if (avail < 4 || memcmp(p, "GIOP", 4) != 0)
		return false;
	if (avail >= 6 && (p[4] != 1 || p[5] > 3))
		return false;
	if (avail >= 7 && (p[6] & 0xf0) != 0)
		return false;
	if (avail >= 8 && p[7] >= GIOP_TYPE_COUNT)
		return false;
	if (avail >= 12 && max_size) {
		size = gs_ord32(p + 8, (p[6] & 1) != 0);
		if (size > max_size)
			return false;
	}
	return true;
}

/* The header, inline in giop_decode: a call a message less (the framer
 * decodes every message whole there). */
static inline __attribute__((always_inline)) enum giop_res header(const uint8_t *p, size_t avail,
								 uint32_t max_size, struct giop_msg *m)
{
	gs_zero(m, offsetof(struct giop_msg, ctx));
	if (avail < 4) {
		/* judge the magic on what we have, so garbage is not "need more" */
		if (memcmp(p, "GIOP", avail) != 0) {
			m->error = GIOP_ERR_MAGIC;
			return GIOP_INVALID;
		}
		return GIOP_NEED_MORE;
	}
	if (memcmp(p, "GIOP", 4) != 0) {
		m->error = GIOP_ERR_MAGIC;
		return GIOP_INVALID;
	}
	if (avail < GIOP_HEADER_LEN)
		return GIOP_NEED_MORE;
	m->major = p[4];
	m->minor = p[5];
	m->flags = p[6];
	m->type = p[7];
	if (m->major != 1 || m->minor > 3) {
		m->error = GIOP_ERR_VERSION;
		return GIOP_INVALID;
	}
	if (m->minor == 0) {
		/* 1.0: the flags byte is a boolean byte_order */
		if (m->flags > 1) {
			m->error = GIOP_ERR_FLAGS;
			return GIOP_INVALID;
		}
		m->little_endian = m->flags == 1;
	} else {
		/* bits 2-3 are ZIOP's; 4-7 are reserved and never set by an ORB */
		if (m->flags & 0xf0) {
			m->error = GIOP_ERR_FLAGS;
			return GIOP_INVALID;
		}
		m->little_endian = (m->flags & 1) != 0;
		m->more_fragments = (m->flags & 2) != 0;
	}
	if (m->type >= GIOP_TYPE_COUNT || (m->type == GIOP_FRAGMENT && m->minor == 0)) {
		m->error = GIOP_ERR_TYPE;
		return GIOP_INVALID;
	}
	m->size = gs_ord32(p + 8, m->little_endian);
	if ((max_size && m->size > max_size) || m->size > UINT32_MAX - GIOP_HEADER_LEN) {
		m->error = GIOP_ERR_SIZE;
		return GIOP_INVALID;
	}
	m->msg_len = m->size + GIOP_HEADER_LEN;
	return GIOP_OK;
}

enum giop_res giop_decode_header(const uint8_t *p, size_t avail, uint32_t max_size,
				 struct giop_msg *m)
{
	return header(p, avail, max_size, m);
}

static inline __attribute__((always_inline)) enum giop_res string(struct giop_msg *m, struct cdr *c, struct gs_span *out)
{
	uint32_t n;
	TRY(cdr_ulong(c, &n));
	if (n == 0) {
		/* Not legal CDR (a string carries its NUL), but some ORBs send it for "". */
		m->string_unterminated = true;
		out->p = c->p + c->off;
		out->len = 0;
		return GIOP_OK;
	}
	TRY(cdr_need(c, n));
	out->p = c->p + c->off;
	out->len = n - 1;
	if (c->p[c->off + n - 1] != '\0') {
		m->string_unterminated = true;
		out->len = n;
	}
	c->off += n;
	return GIOP_OK;
}

/* An encapsulation: its first octet is its byte order; offsets restart at 0. */
static bool encap_open(struct gs_span data, struct cdr *e)
{
	uint8_t bo;
	e->p = data.p;
	e->avail = e->msg_len = data.len;
	e->off = 0;
	e->le = false;
	if (data.p == NULL || cdr_octet(e, &bo) != GIOP_OK)
		return false;
	e->le = (bo & 1) != 0;
	return true;
}

static void context_decode(struct giop_msg *m, uint32_t id, struct gs_span data)
{
	struct cdr e;
	if (id == GIOP_SC_BI_DIR_IIOP) {
		m->has_bidir = true;
		return;
	}
	if (!encap_open(data, &e))
		return;
	if (id == GIOP_SC_CODESETS) {
		uint32_t a, b;
		if (cdr_ulong(&e, &a) == GIOP_OK && cdr_ulong(&e, &b) == GIOP_OK) {
			m->has_codesets = true;
			m->char_codeset = a;
			m->wchar_codeset = b;
		}
	} else if (id == GIOP_SC_RT_CORBA_PRIORITY) {
		uint16_t pr;
		if (cdr_ushort(&e, &pr) == GIOP_OK) {
			m->has_priority = true;
			m->priority = (int16_t)pr;
		}
	}
}

static inline __attribute__((always_inline)) enum giop_res contexts(struct giop_msg *m, struct cdr *c)
{
	uint32_t n;
	TRY(cdr_ulong(c, &n));
	m->n_contexts = n;
	/* Each context takes at least 8 bytes, so a hostile count ends at the
	 * message size after at most size/8 rounds. */
	for (uint32_t i = 0; i < n; i++) {
		uint32_t id;
		struct gs_span data;
		TRY(cdr_ulong(c, &id));
		TRY(cdr_octets(c, &data, true));
		if (m->n_kept < GIOP_MAX_CONTEXTS) {
			m->ctx[m->n_kept].id = id;
			m->ctx[m->n_kept].data = data;
			m->n_kept++;
		}
		context_decode(m, id, data);
	}
	m->have |= GIOP_HAVE_CONTEXTS;
	return GIOP_OK;
}

/* The object key inside an IIOP profile body (TAG_INTERNET_IOP = 0). */
static void iiop_profile_key(struct giop_msg *m, struct gs_span body)
{
	struct cdr e;
	uint8_t vmaj, vmin;
	uint32_t hostlen;
	uint16_t port;
	struct gs_span key;
	if (!encap_open(body, &e))
		return;
	if (cdr_octet(&e, &vmaj) != GIOP_OK || cdr_octet(&e, &vmin) != GIOP_OK)
		return;
	if (cdr_ulong(&e, &hostlen) != GIOP_OK || cdr_skip(&e, hostlen) != GIOP_OK)
		return;
	if (cdr_ushort(&e, &port) != GIOP_OK)
		return;
	if (cdr_octets(&e, &key, true) != GIOP_OK)
		return;
	m->object_key = key;
}

static enum giop_res tagged_profile(struct giop_msg *m, struct cdr *c, bool keep)
{
	uint32_t tag;
	struct gs_span data;
	TRY(cdr_ulong(c, &tag));
	TRY(cdr_octets(c, &data, true));
	if (keep) {
		m->profile_tag = tag;
		if (tag == 0)
			iiop_profile_key(m, data);
	}
	return GIOP_OK;
}

static inline __attribute__((always_inline)) enum giop_res target_address(struct giop_msg *m, struct cdr *c)
{
	uint16_t disp;
	TRY(cdr_ushort(c, &disp));
	m->disposition = disp;
	switch (disp) {
	case 0: /* KeyAddr */
		TRY(cdr_octets(c, &m->object_key, true));
		break;
	case 1: /* ProfileAddr */
		TRY(tagged_profile(m, c, true));
		break;
	case 2: { /* ReferenceAddr: IORAddressingInfo */
		uint32_t index, n;
		struct gs_span type_id;
		TRY(cdr_ulong(c, &index));
		TRY(string(m, c, &type_id));
		TRY(cdr_ulong(c, &n));
		for (uint32_t i = 0; i < n; i++) /* each at least 8 bytes: bounded */
			TRY(tagged_profile(m, c, i == index));
		break;
	}
	default:
		m->error = GIOP_ERR_DISPOSITION;
		return GIOP_INVALID;
	}
	m->have |= GIOP_HAVE_TARGET;
	return GIOP_OK;
}

/* Exception bodies are a convenience: if the head stops before them we still
 * have the status; only an overrun of the message is an error. */
static enum giop_res exception_body(struct giop_msg *m, struct cdr *c, bool system)
{
	enum giop_res r;
	r = string(m, c, &m->exception_id);
	if (r == GIOP_OK && system) {
		r = cdr_ulong(c, &m->minor_code);
		if (r == GIOP_OK)
			r = cdr_ulong(c, &m->completed);
	}
	if (r == GIOP_OK)
		m->have |= GIOP_HAVE_EXCEPTION;
	/* NEED_MORE too: the same bytes must decode alike however TCP cut them */
	return fail(m, r);
}

static enum giop_res request(struct giop_msg *m, struct cdr *c)
{
	uint8_t b;
	if (m->minor <= 1) {
		TRY(contexts(m, c));
		TRY(cdr_ulong(c, &m->request_id));
		m->have |= GIOP_HAVE_REQUEST_ID;
		TRY(cdr_octet(c, &b));
		m->response_expected = b != 0;
		m->response_flags = b ? 3 : 0;
		m->have |= GIOP_HAVE_RESPONSE;
		if (m->minor == 1)
			TRY(cdr_skip(c, 3));
		TRY(cdr_octets(c, &m->object_key, true));
		m->have |= GIOP_HAVE_TARGET;
		TRY(string(m, c, &m->operation));
		m->have |= GIOP_HAVE_OPERATION;
		/* the principal ends the 1.0/1.1 header (its bytes are not needed) */
		TRY(cdr_octets(c, &m->principal, false));
		m->have |= GIOP_HAVE_PRINCIPAL;
		m->body_offset = (uint32_t)(c->off < m->msg_len ? c->off : m->msg_len);
		return GIOP_OK;
	}
	TRY(cdr_ulong(c, &m->request_id));
	m->have |= GIOP_HAVE_REQUEST_ID;
	TRY(cdr_octet(c, &m->response_flags));
	m->response_expected = (m->response_flags & 1) != 0;
	m->have |= GIOP_HAVE_RESPONSE;
	TRY(cdr_skip(c, 3));
	TRY(target_address(m, c));
	TRY(string(m, c, &m->operation));
	m->have |= GIOP_HAVE_OPERATION;
	TRY(contexts(m, c));
	cdr_align(c, 8);
	m->body_offset = (uint32_t)(c->off < m->msg_len ? c->off : m->msg_len);
	return GIOP_OK;
}

static enum giop_res reply(struct giop_msg *m, struct cdr *c)
{
	if (m->minor <= 1) {
		TRY(contexts(m, c));
		TRY(cdr_ulong(c, &m->request_id));
		m->have |= GIOP_HAVE_REQUEST_ID;
		TRY(cdr_ulong(c, &m->status));
		m->have |= GIOP_HAVE_STATUS;
	} else {
		TRY(cdr_ulong(c, &m->request_id));
		m->have |= GIOP_HAVE_REQUEST_ID;
		TRY(cdr_ulong(c, &m->status));
		m->have |= GIOP_HAVE_STATUS;
		TRY(contexts(m, c));
		cdr_align(c, 8);
	}
	m->body_offset = (uint32_t)(c->off < m->msg_len ? c->off : m->msg_len);
	if (m->status == GIOP_USER_EXCEPTION || m->status == GIOP_SYSTEM_EXCEPTION)
		return exception_body(m, c, m->status == GIOP_SYSTEM_EXCEPTION);
	return GIOP_OK;
}

static enum giop_res locate_request(struct giop_msg *m, struct cdr *c)
{
	TRY(cdr_ulong(c, &m->request_id));
	m->have |= GIOP_HAVE_REQUEST_ID;
	if (m->minor <= 1) {
		TRY(cdr_octets(c, &m->object_key, true));
		m->have |= GIOP_HAVE_TARGET;
	} else {
		TRY(target_address(m, c));
	}
	m->body_offset = (uint32_t)(c->off < m->msg_len ? c->off : m->msg_len);
	return GIOP_OK;
}

static enum giop_res locate_reply(struct giop_msg *m, struct cdr *c)
{
	TRY(cdr_ulong(c, &m->request_id));
	m->have |= GIOP_HAVE_REQUEST_ID;
	TRY(cdr_ulong(c, &m->status));
	m->have |= GIOP_HAVE_STATUS;
	if (m->minor >= 2)
		cdr_align(c, 8);
	m->body_offset = (uint32_t)(c->off < m->msg_len ? c->off : m->msg_len);
	if (m->status == GIOP_LOC_SYSTEM_EXCEPTION)
		return exception_body(m, c, true);
	return GIOP_OK;
}

enum giop_res giop_decode(const uint8_t *p, size_t avail, uint32_t max_size, struct giop_msg *m)
{
	struct cdr cc, *c = &cc;
	enum giop_res r = header(p, avail, max_size, m);
	if (r != GIOP_OK)
		return r;
	c->p = p;
	c->avail = avail < m->msg_len ? avail : m->msg_len;
	/* A message with more fragments may continue its header in the next Fragment
	 * (GIOP 1.1 splits anywhere): running past its end is then "need more". */
	c->msg_len = m->more_fragments ? SIZE_MAX : m->msg_len;
	c->off = GIOP_HEADER_LEN;
	c->le = m->little_endian;
	switch (m->type) {
	case GIOP_REQUEST:
		return request(m, c);
	case GIOP_REPLY:
		return reply(m, c);
	case GIOP_CANCEL_REQUEST:
		TRY(cdr_ulong(c, &m->request_id));
		m->have |= GIOP_HAVE_REQUEST_ID;
		return GIOP_OK;
	case GIOP_LOCATE_REQUEST:
		return locate_request(m, c);
	case GIOP_LOCATE_REPLY:
		return locate_reply(m, c);
	case GIOP_FRAGMENT:
		if (m->minor >= 2) { /* FragmentHeader_1_2 */
			TRY(cdr_ulong(c, &m->request_id));
			m->have |= GIOP_HAVE_REQUEST_ID;
		}
		m->body_offset = (uint32_t)c->off;
		return GIOP_OK;
	default: /* CloseConnection, MessageError: header only */
		m->body_offset = GIOP_HEADER_LEN;
		return GIOP_OK;
	}
}
