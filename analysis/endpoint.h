/* Text form of an endpoint: A.B.C.D:port or [v6]:port (RFC 5952). */
#ifndef GS_ENDPOINT_H
#define GS_ENDPOINT_H

#include <stddef.h>
#include "call.h"

#define GS_ENDPOINT_STRLEN 56

/* Returns the length written (buf always NUL-terminated). */
size_t gs_endpoint_str(const struct gs_endpoint *ep, char *buf, size_t len);
/* Address only, without port or brackets. */
size_t gs_addr_str(const struct gs_endpoint *ep, char *buf, size_t len);

#endif
