/* SPDX-License-Identifier: BSD-2-Clause */
/* GIOP 1.0-1.2 messages as ORBs put them on the wire: the layouts of CORBA 3.x
 * chapter 15 (RequestHeader_1_0/1_1/1_2, ReplyHeader, LocateRequest/Reply,
 * CancelRequest, CloseConnection, Fragment), CDR aligned from the message start,
 * either byte order. */
#ifndef GEN_GIOP_BUILD_H
#define GEN_GIOP_BUILD_H

#include "buf.h"

/* what a message carries after its header: the argument or result types of the
 * operations in workload.c; n sizes it */
enum body {
	BODY_NONE,
	BODY_STRING,   /* string of n characters */
	BODY_OCTETS,   /* sequence<octet> of n */
	BODY_RECS,     /* sequence<struct {long; double; short}>, about n bytes */
	BODY_EVENT,    /* struct {long long; string; sequence<octet> n} */
	BODY_QUOTE,    /* struct {double; long long; string} */
	BODY_BOOL,
	BODY_LONG,
	BODY_NAME,     /* CosNaming::Name of n components */
	BODY_IOR,      /* an IIOP object reference */
	BODY_USER_EX,  /* a user exception: repository id + its members (Busy, NotFound) */
	BODY_SYS_EX,   /* a system exception: repository id, minor, completed; n picks which */
};

/* service contexts a Request may carry */
#define CTX_CODESETS 1u
#define CTX_RTPRIO 2u

struct msg_common {
	unsigned char minor;  /* GIOP 1.minor */
	bool le;              /* little endian (flags bit 0) */
	unsigned rid;
};

struct request_spec {
	struct msg_common m;
	bool response;        /* two-way */
	const unsigned char *key;
	size_t keylen;
	const char *op;
	unsigned contexts;
	unsigned short priority;
	enum body body;
	unsigned n;
	const char *ex_id;    /* BODY_USER_EX repository id */
};

/* Each appends one whole message to b and returns its size (header included). */
size_t giop_request(struct buf *b, const struct request_spec *r);
size_t giop_reply(struct buf *b, const struct msg_common *m, unsigned status, enum body body,
		  unsigned n, const char *ex_id);
size_t giop_locate_request(struct buf *b, const struct msg_common *m,
			   const unsigned char *key, size_t keylen);
size_t giop_locate_reply(struct buf *b, const struct msg_common *m, unsigned status);
size_t giop_cancel(struct buf *b, const struct msg_common *m);
size_t giop_close_connection(struct buf *b, unsigned char minor, bool le);

/* Cuts the whole message msg[0, len) into GIOP fragments of at most `frag` bytes
 * (a multiple of 8: every fragment but the last is a multiple of 8 long, as the
 * spec asks), one per call: appends the next one to b, advances *off (the body
 * offset, 12 before the first call) and returns whether more remain. 1.1 Fragments
 * carry no request id (they follow the previous message); 1.2 ones carry `rid`. */
bool giop_next_fragment(struct buf *b, const unsigned char *msg, size_t len, size_t *off,
			unsigned frag, unsigned rid);

void giop_build_init(void);

#endif
