#include "endpoint.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

size_t gs_addr_str(const struct gs_endpoint *ep, char *buf, size_t len)
{
	/* inet_ntop follows RFC 5952 for IPv6 (lower case, longest zero run as ::) */
	if (!inet_ntop(ep->family == 6 ? AF_INET6 : AF_INET, ep->addr, buf, (socklen_t)len)) {
		if (len)
			buf[0] = '\0';
		return 0;
	}
	return strlen(buf);
}

size_t gs_endpoint_str(const struct gs_endpoint *ep, char *buf, size_t len)
{
	char a[INET6_ADDRSTRLEN];
	int n;
	gs_addr_str(ep, a, sizeof a);
	if (ep->family == 6)
		n = snprintf(buf, len, "[%s]:%u", a, ep->port);
	else
		n = snprintf(buf, len, "%s:%u", a, ep->port);
	if (n < 0)
		return 0;
	return (size_t)n < len ? (size_t)n : len - 1;
}
