/* SPDX-License-Identifier: BSD-2-Clause */
/* Text form of an endpoint: A.B.C.D:port or [v6]:port (RFC 5952). */
#ifndef GS_ENDPOINT_H
#define GS_ENDPOINT_H

#include <stddef.h>
#include "call.h"

/* The longest text: '[' + an IPv6 address as long as inet_ntop may write one
 * (INET6_ADDRSTRLEN - 1 = 45, "ffff:...:255.255.255.255") + "]:" + "65535". */
#define GS_ENDPOINT_TEXT_MAX 53
/* A buffer for gs_endpoint_str: the text and its NUL, with room to spare. */
#define GS_ENDPOINT_STRLEN 56

/* The text into dst, which must hold GS_ENDPOINT_TEXT_MAX bytes; not
 * NUL-terminated.  Returns its length.  IPv4 is formatted by hand (this runs
 * for the rows of every call); IPv6 goes through inet_ntop, which is RFC 5952. */
size_t gs_endpoint_fmt(const struct gs_endpoint *ep, char *dst);
/* Returns the length written (buf always NUL-terminated; cut to len - 1). */
size_t gs_endpoint_str(const struct gs_endpoint *ep, char *buf, size_t len);
/* Address only, without port or brackets. */
size_t gs_addr_str(const struct gs_endpoint *ep, char *buf, size_t len);
/* The order of the endpoints' texts (strcmp of gs_endpoint_str): how calls
 * starting at the same instant are ordered in the output. */
int gs_endpoint_text_cmp(const struct gs_endpoint *a, const struct gs_endpoint *b);

#endif
