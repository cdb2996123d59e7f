/* SPDX-License-Identifier: BSD-2-Clause */
#include "endpoint.h"

#include <arpa/inet.h>
#include <string.h>

#include "fmt_num.h"

_Static_assert(GS_ENDPOINT_TEXT_MAX == 1 + (INET6_ADDRSTRLEN - 1) + 2 + 5,
	       "GS_ENDPOINT_TEXT_MAX: brackets, the longest inet_ntop text, ':' and a port");
_Static_assert(GS_ENDPOINT_STRLEN > GS_ENDPOINT_TEXT_MAX, "room for the NUL");

/* dotted quad, as inet_ntop writes it (no leading zeros); at most 15 bytes */
static size_t ipv4_fmt(const uint8_t *a, char *dst)
{
	size_t n = gs_fmt_u8(dst, a[0]);
	for (int i = 1; i < 4; i++) {
		dst[n++] = '.';
		n += gs_fmt_u8(dst + n, a[i]);
	}
	return n;
}

size_t gs_addr_str(const struct gs_endpoint *ep, char *buf, size_t len)
{
	if (ep->family != 6 && len >= INET_ADDRSTRLEN) {
		size_t n = ipv4_fmt(ep->addr, buf);
		buf[n] = '\0';
		return n;
	}
	/* inet_ntop follows RFC 5952 for IPv6 (lower case, longest zero run as ::);
	 * it also keeps its own failure on a short buffer for IPv4 */
	if (!inet_ntop(ep->family == 6 ? AF_INET6 : AF_INET, ep->addr, buf, (socklen_t)len)) {
		if (len)
			buf[0] = '\0';
		return 0;
	}
	return strlen(buf);
}

size_t gs_endpoint_fmt(const struct gs_endpoint *ep, char *dst)
{
	size_t n;
	if (ep->family != 6) {
		n = ipv4_fmt(ep->addr, dst);
	} else {
		char a[INET6_ADDRSTRLEN];
		size_t an = gs_addr_str(ep, a, sizeof a);  /* < INET6_ADDRSTRLEN: NUL included */
		dst[0] = '[';
		memcpy(dst + 1, a, an);
		n = 1 + an;
		dst[n++] = ']';
	}
	dst[n++] = ':';
	return n + gs_fmt_u64(dst + n, ep->port);
}

size_t gs_endpoint_str(const struct gs_endpoint *ep, char *buf, size_t len)
{
	char t[GS_ENDPOINT_TEXT_MAX];
	size_t n = gs_endpoint_fmt(ep, t);
	if (!len)
		return 0;
	if (n >= len)
		n = len - 1;
	memcpy(buf, t, n);
	buf[n] = '\0';
	return n;
}

int gs_endpoint_text_cmp(const struct gs_endpoint *a, const struct gs_endpoint *b)
{
	char sa[GS_ENDPOINT_STRLEN], sb[GS_ENDPOINT_STRLEN];
	/* ties on the time are mostly requests of one connection (one segment):
	 * the same client, no text needed */
	if (a->port == b->port && a->family == b->family && memcmp(a->addr, b->addr, 16) == 0)
		return 0;
	gs_endpoint_str(a, sa, sizeof sa);
	gs_endpoint_str(b, sb, sizeof sb);
	return strcmp(sa, sb);
}
