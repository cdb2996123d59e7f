/* SPDX-License-Identifier: BSD-2-Clause */
/* GIOP 1.0 - 1.3 message decoder.
 *
 * Pure and allocation-free: it reads the captured head of one message and fills a
 * struct whose spans point into that head.  It never reads past `avail` bytes.
 *
 *   GIOP_OK         every header field was decoded
 *   GIOP_NEED_MORE  the head stops before a needed field; what was decoded so far
 *                   is valid (see `have`): give more bytes, or accept a partial result
 *   GIOP_INVALID    the message contradicts itself (see `error`)
 */
#ifndef GS_GIOP_H
#define GS_GIOP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "../bytes.h"
#include "cdr.h"

#define GIOP_HEADER_LEN 12

enum giop_type {
	GIOP_REQUEST = 0,
	GIOP_REPLY = 1,
	GIOP_CANCEL_REQUEST = 2,
	GIOP_LOCATE_REQUEST = 3,
	GIOP_LOCATE_REPLY = 4,
	GIOP_CLOSE_CONNECTION = 5,
	GIOP_MESSAGE_ERROR = 6,
	GIOP_FRAGMENT = 7,
	GIOP_TYPE_COUNT
};

/* ReplyStatusType and LocateStatusType values. */
enum { GIOP_NO_EXCEPTION, GIOP_USER_EXCEPTION, GIOP_SYSTEM_EXCEPTION, GIOP_LOCATION_FORWARD,
       GIOP_LOCATION_FORWARD_PERM, GIOP_NEEDS_ADDRESSING_MODE };
enum { GIOP_UNKNOWN_OBJECT, GIOP_OBJECT_HERE, GIOP_OBJECT_FORWARD, GIOP_OBJECT_FORWARD_PERM,
       GIOP_LOC_SYSTEM_EXCEPTION, GIOP_LOC_NEEDS_ADDRESSING_MODE };

/* Service context ids we decode (IOP::ServiceId). */
#define GIOP_SC_CODESETS 1
#define GIOP_SC_BI_DIR_IIOP 5
#define GIOP_SC_RT_CORBA_PRIORITY 10

/* Service contexts kept per message; more are counted in n_contexts, not kept. */
#define GIOP_MAX_CONTEXTS 16

/* Which fields of struct giop_msg hold a value. */
enum {
	GIOP_HAVE_REQUEST_ID = 1u << 0,
	GIOP_HAVE_RESPONSE = 1u << 1,    /* response_expected / response_flags */
	GIOP_HAVE_TARGET = 1u << 2,      /* object key or target address */
	GIOP_HAVE_OPERATION = 1u << 3,
	GIOP_HAVE_CONTEXTS = 1u << 4,
	GIOP_HAVE_STATUS = 1u << 5,      /* reply_status / locate_status */
	GIOP_HAVE_EXCEPTION = 1u << 6,   /* exception_id (+ minor/completed for system) */
	GIOP_HAVE_PRINCIPAL = 1u << 7,
};

enum giop_error {
	GIOP_ERR_NONE = 0,
	GIOP_ERR_MAGIC,          /* not "GIOP" */
	GIOP_ERR_VERSION,        /* not 1.0 - 1.3 */
	GIOP_ERR_TYPE,           /* message type > 7, or not valid for the version */
	GIOP_ERR_FLAGS,          /* reserved flag bits set */
	GIOP_ERR_SIZE,           /* message size beyond the configured maximum */
	GIOP_ERR_OVERRUN,        /* a field runs past the message size */
	GIOP_ERR_DISPOSITION,    /* unknown TargetAddress discriminant */
	GIOP_ERR_STRING,         /* zero-length or unterminated string */
	GIOP_ERR_COUNT
};

struct giop_ctx {
	uint32_t id;
	struct gs_span data; /* data.p is NULL when the bytes were not available */
};

struct giop_msg {
	/* the 12-byte header */
	uint8_t major, minor, flags, type;
	bool little_endian;
	bool more_fragments;   /* 1.1+ flag bit 1 */
	uint32_t size;         /* body size from the header */
	uint32_t msg_len;      /* size + 12, saturated */

	uint32_t have;         /* GIOP_HAVE_* */
	enum giop_error error;
	bool string_unterminated; /* a string lacked its NUL: used as is, counted */

	uint32_t request_id;
	/* Request */
	bool response_expected;   /* 1.0/1.1 boolean; for 1.2+ (response_flags & 1) */
	uint8_t response_flags;   /* 1.2+ as on the wire; 1.0/1.1: 3 or 0 */
	uint16_t disposition;     /* TargetAddress discriminant (0 KeyAddr for < 1.2) */
	struct gs_span object_key;/* KeyAddr, or the object key inside a profile if found */
	uint32_t profile_tag;     /* ProfileAddr / ReferenceAddr: tag of the profile */
	struct gs_span operation; /* without the NUL */
	struct gs_span principal;
	/* Reply / LocateReply */
	uint32_t status;
	struct gs_span exception_id; /* USER/SYSTEM_EXCEPTION repository id */
	uint32_t minor_code;
	uint32_t completed;          /* CompletionStatus */
	/* service contexts */
	uint32_t n_contexts;         /* as on the wire */
	uint16_t n_kept;
	bool has_codesets;
	uint32_t char_codeset, wchar_codeset;
	bool has_priority;
	int16_t priority;
	bool has_bidir;
	uint32_t body_offset;        /* where the body starts (after alignment) */
	struct giop_ctx ctx[GIOP_MAX_CONTEXTS]; /* last: not cleared per message */
};

/* Reads the 12-byte header: OK, NEED_MORE (fewer than 12 bytes) or INVALID.
 * `max_size` bounds the size field (0: no bound). */
enum giop_res giop_decode_header(const uint8_t *p, size_t avail, uint32_t max_size,
				 struct giop_msg *m);

/* Decodes header and message header (not the body beyond what is listed above).
 * `avail` is how many bytes of the message we have (may exceed the message). */
enum giop_res giop_decode(const uint8_t *p, size_t avail, uint32_t max_size, struct giop_msg *m);

/* True when the 4..12 bytes at p plausibly start a GIOP message (for resync). */
bool giop_plausible_header(const uint8_t *p, size_t avail, uint32_t max_size);

const char *giop_type_name(unsigned type);
/* Status names of the pairs CSV (docs/output.md); NULL for values out of range. */
const char *giop_reply_status_name(uint32_t status);
const char *giop_locate_status_name(uint32_t status);
const char *giop_error_name(enum giop_error e);
const char *giop_service_context_name(uint32_t id);
/* Short name of a CORBA system exception repository id ("OBJECT_NOT_EXIST"), or NULL. */
const char *giop_system_exception_short(struct gs_span repo_id, char *buf, size_t buflen);

#endif
