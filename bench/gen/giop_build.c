/* SPDX-License-Identifier: BSD-2-Clause */
#include "giop_build.h"

#include <string.h>

enum { T_REQUEST, T_REPLY, T_CANCEL, T_LOCATE_REQUEST, T_LOCATE_REPLY, T_CLOSE, T_ERROR, T_FRAGMENT };

/* Payload bytes: printable text, so a string argument is a plausible string. Made
 * once; bodies copy from it instead of drawing random numbers per byte, which
 * keeps the generator faster than the reader it feeds. */
#define FILL_LEN 32768
static char fill[FILL_LEN];

void giop_build_init(void)
{
	static const char words[] = "the quick brown fox jumps over a lazy dog while an ORB "
				    "marshals the request ";
	for (size_t i = 0; i < FILL_LEN; i++)
		fill[i] = words[(i * 7 + i / 97) % (sizeof words - 1)];
}

static void fill_bytes(struct cdr *c, size_t n)
{
	while (n) {
		size_t k = n < FILL_LEN ? n : FILL_LEN;
		cdr_raw(c, fill, k);
		n -= k;
	}
}

/* starts a message: the 12-byte header with a size filled in by end_msg */
static size_t begin_msg(struct cdr *c, struct buf *b, unsigned char minor, bool le, unsigned type)
{
	unsigned char h[12] = {'G', 'I', 'O', 'P', 1, minor, le ? 1 : 0, (unsigned char)type, 0, 0, 0, 0};
	c->b = b;
	c->base = b->len;
	c->le = le;
	buf_put(b, h, sizeof h);
	return c->base;
}

static size_t end_msg(struct cdr *c)
{
	size_t len = cdr_pos(c);
	cdr_patch_u32(c, 8, (unsigned)(len - 12));
	return len;
}

/* an encapsulation (service context data, IOR profile): its own byte order octet
 * and alignment origin, written as a sequence<octet> */
static void encaps_codesets(struct cdr *c)
{
	struct buf e = {0};
	struct cdr ec = {&e, 0, c->le};
	cdr_u8(&ec, c->le);
	cdr_u32(&ec, 0x05010001);   /* char: UTF-8 */
	cdr_u32(&ec, 0x00010109);   /* wchar: UTF-16 */
	cdr_octets(c, e.p, e.len);
	buf_free(&e);
}

static void encaps_priority(struct cdr *c, unsigned short prio)
{
	unsigned char e[4] = {c->le, 0, 0, 0};
	e[c->le ? 2 : 3] = (unsigned char)prio;
	e[c->le ? 3 : 2] = (unsigned char)(prio >> 8);
	cdr_octets(c, e, 4);
}

static void contexts(struct cdr *c, unsigned which, unsigned short prio)
{
	cdr_u32(c, (unsigned)__builtin_popcount(which));
	if (which & CTX_CODESETS) {
		cdr_u32(c, 1);
		encaps_codesets(c);
	}
	if (which & CTX_RTPRIO) {
		cdr_u32(c, 10);
		encaps_priority(c, prio);
	}
}

static void ior(struct cdr *c, unsigned n)
{
	const unsigned char key[] = {0x14, 0x01, 0x0f, 0x00, 'N', 'U', 'P', 0, 0, 0, 0x17, 0,
			      0, 0, 0, 1, 0, 0, 0, 'R', 'o', 'o', 't', 'P', 'O', 'A',
			      0, 0, 0, 0, 0, (unsigned char)n};
	struct buf e = {0};
	struct cdr ec = {&e, 0, c->le};
	cdr_string(c, "IDL:omg.org/CosNaming/NamingContextExt:1.0");
	cdr_u32(c, 1);                  /* one profile */
	cdr_u32(c, 0);                  /* TAG_INTERNET_IOP */
	cdr_u8(&ec, c->le);
	cdr_u8(&ec, 1);
	cdr_u8(&ec, 2);                 /* IIOP 1.2 */
	cdr_string(&ec, "10.0.1.7");
	cdr_u16(&ec, 2809);
	cdr_octets(&ec, key, sizeof key);
	cdr_u32(&ec, 1);                /* components: ORB type */
	cdr_u32(&ec, 0);                /* TAG_ORB_TYPE */
	cdr_u32(&ec, 8);
	cdr_u8(&ec, c->le);
	cdr_raw(&ec, "\0\0\0", 3);
	cdr_u32(&ec, 0x54414f00);
	cdr_octets(c, e.p, e.len);
	buf_free(&e);
}

static const char *const sys_ex[] = {
	"IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0", "IDL:omg.org/CORBA/TRANSIENT:1.0",
	"IDL:omg.org/CORBA/BAD_PARAM:1.0", "IDL:omg.org/CORBA/NO_PERMISSION:1.0",
	"IDL:omg.org/CORBA/TIMEOUT:1.0", "IDL:omg.org/CORBA/UNKNOWN:1.0",
};

static void body(struct cdr *c, enum body kind, unsigned n, const char *ex_id)
{
	switch (kind) {
	case BODY_NONE:
		break;
	case BODY_STRING:
		cdr_u32(c, n + 1);
		fill_bytes(c, n);
		cdr_u8(c, 0);
		break;
	case BODY_OCTETS:
		cdr_u32(c, n);
		fill_bytes(c, n);
		break;
	case BODY_RECS: {
		unsigned k = n / 24 ? n / 24 : 1;
		cdr_u32(c, k);
		for (unsigned i = 0; i < k; i++) {
			cdr_u32(c, i);
			cdr_u64(c, 0x400921fb54442d18ull + i);
			cdr_u16(c, (unsigned short)i);
		}
		break;
	}
	case BODY_EVENT:
		cdr_u64(c, 1735689600000000000ull + n);
		cdr_string(c, "sensor-7/feed");
		cdr_u32(c, n);
		fill_bytes(c, n);
		break;
	case BODY_QUOTE:
		cdr_u64(c, 0x405ec00000000000ull);
		cdr_u64(c, 1000000u + n);
		cdr_string(c, "ACME");
		break;
	case BODY_BOOL:
		cdr_u8(c, 1);
		break;
	case BODY_LONG:
		cdr_u32(c, n);
		break;
	case BODY_NAME:
		cdr_u32(c, n);
		for (unsigned i = 0; i < n; i++) {
			cdr_string(c, i + 1 < n ? "bench" : "Echo");
			cdr_string(c, i + 1 < n ? "context" : "");
		}
		break;
	case BODY_IOR:
		ior(c, n);
		break;
	case BODY_USER_EX:
		/* the members of the two exceptions workload.c raises */
		cdr_string(c, ex_id);
		if (strstr(ex_id, "NotFound")) {
			cdr_u32(c, 0);   /* why: missing_node */
			body(c, BODY_NAME, 1, NULL);   /* rest_of_name */
		} else {
			cdr_u32(c, n);   /* Busy::code */
		}
		break;
	case BODY_SYS_EX:
		cdr_string(c, sys_ex[n % (sizeof sys_ex / sizeof sys_ex[0])]);
		cdr_u32(c, 0x4f4d0000u | (n & 0xff));   /* an OMG minor code */
		cdr_u32(c, n % 3);                      /* COMPLETED_YES/NO/MAYBE */
		break;
	}
}

size_t giop_request(struct buf *b, const struct request_spec *r)
{
	struct cdr c;
	begin_msg(&c, b, r->m.minor, r->m.le, T_REQUEST);
	if (r->m.minor < 2) {
		contexts(&c, r->contexts, r->priority);
		cdr_u32(&c, r->m.rid);
		cdr_u8(&c, r->response);
		if (r->m.minor == 1)
			cdr_raw(&c, "\0\0\0", 3);
		cdr_octets(&c, r->key, r->keylen);
		cdr_string(&c, r->op);
		cdr_octets(&c, "", 0);          /* requesting_principal, empty */
	} else {
		cdr_u32(&c, r->m.rid);
		cdr_u8(&c, r->response ? 3 : 0);  /* SYNC_WITH_TARGET / oneway */
		cdr_raw(&c, "\0\0\0", 3);
		cdr_u16(&c, 0);                   /* TargetAddress: KeyAddr */
		cdr_octets(&c, r->key, r->keylen);
		cdr_string(&c, r->op);
		contexts(&c, r->contexts, r->priority);
		if (r->body != BODY_NONE)
			cdr_align(&c, 8);   /* a 1.2 body starts 8-aligned */
	}
	body(&c, r->body, r->n, r->ex_id);
	return end_msg(&c);
}

size_t giop_reply(struct buf *b, const struct msg_common *m, unsigned status, enum body kind,
		  unsigned n, const char *ex_id)
{
	struct cdr c;
	begin_msg(&c, b, m->minor, m->le, T_REPLY);
	if (m->minor < 2) {
		cdr_u32(&c, 0);   /* no service contexts */
		cdr_u32(&c, m->rid);
		cdr_u32(&c, status);
	} else {
		cdr_u32(&c, m->rid);
		cdr_u32(&c, status);
		cdr_u32(&c, 0);
		if (kind != BODY_NONE)
			cdr_align(&c, 8);
	}
	body(&c, kind, n, ex_id);
	return end_msg(&c);
}

size_t giop_locate_request(struct buf *b, const struct msg_common *m,
			   const unsigned char *key, size_t keylen)
{
	struct cdr c;
	begin_msg(&c, b, m->minor, m->le, T_LOCATE_REQUEST);
	cdr_u32(&c, m->rid);
	if (m->minor >= 2)
		cdr_u16(&c, 0);
	cdr_octets(&c, key, keylen);
	return end_msg(&c);
}

size_t giop_locate_reply(struct buf *b, const struct msg_common *m, unsigned status)
{
	struct cdr c;
	begin_msg(&c, b, m->minor, m->le, T_LOCATE_REPLY);
	cdr_u32(&c, m->rid);
	cdr_u32(&c, status);
	if (status == 2) {   /* OBJECT_FORWARD: the new reference follows */
		if (m->minor >= 2)
			cdr_align(&c, 8);
		ior(&c, m->rid & 0xff);
	}
	return end_msg(&c);
}

size_t giop_cancel(struct buf *b, const struct msg_common *m)
{
	struct cdr c;
	begin_msg(&c, b, m->minor, m->le, T_CANCEL);
	cdr_u32(&c, m->rid);
	return end_msg(&c);
}

size_t giop_close_connection(struct buf *b, unsigned char minor, bool le)
{
	struct cdr c;
	begin_msg(&c, b, minor, le, T_CLOSE);
	return end_msg(&c);
}

bool giop_next_fragment(struct buf *b, const unsigned char *msg, size_t len, size_t *off,
			unsigned frag, unsigned rid)
{
	bool le = msg[6] & 1;
	unsigned char minor = msg[5];
	size_t start = b->len, hdr, chunk, room;
	struct cdr c = {b, start, le};

	if (*off == 12) {
		/* the first fragment is the message itself, cut short, "more" flagged */
		buf_put(b, msg, 12);
		hdr = 12;
	} else {
		unsigned char h[12] = {'G', 'I', 'O', 'P', 1, minor, le ? 1 : 0, T_FRAGMENT, 0, 0, 0, 0};
		buf_put(b, h, 12);
		if (minor >= 2)
			cdr_u32(&c, rid);   /* FragmentHeader_1_2 */
		hdr = b->len - start;
	}
	room = frag - hdr;
	chunk = len - *off <= room ? len - *off : room;
	buf_put(b, msg + *off, chunk);
	*off += chunk;
	bool more = *off < len;
	b->p[start + 6] = (unsigned char)((le ? 1 : 0) | (more ? 2 : 0));
	cdr_patch_u32(&c, 8, (unsigned)(hdr - 12 + chunk));
	return more;
}
