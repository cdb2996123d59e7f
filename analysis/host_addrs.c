/* SPDX-License-Identifier: BSD-2-Clause */
#include "host_addrs.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>

static bool addr_same(const struct gs_endpoint *a, uint8_t family, const uint8_t *addr)
{
	return a->family == family && memcmp(a->addr, addr, family == 4 ? 4 : 16) == 0;
}

bool gs_host_addrs_add(struct gs_host_addrs *h, uint8_t family, const uint8_t *addr)
{
	struct gs_endpoint *ep;
	if (family != 4 && family != 6)
		return false;
	for (uint32_t i = 0; i < h->n; i++)
		if (addr_same(&h->addr[i], family, addr))
			return false;
	if (h->n == GS_HOST_ADDRS_MAX) {
		h->full++;
		return false;
	}
	ep = &h->addr[h->n++];
	memset(ep, 0, sizeof *ep);
	ep->family = family;
	memcpy(ep->addr, addr, family == 4 ? 4 : 16);
	return true;
}

bool gs_host_addrs_has(const struct gs_host_addrs *h, const struct gs_endpoint *ep)
{
	for (uint32_t i = 0; i < h->n; i++)
		if (addr_same(&h->addr[i], ep->family, ep->addr))
			return true;
	return false;
}

int gs_host_addrs_parse(struct gs_host_addrs *h, const char *list, char *why, size_t whylen)
{
	const char *p = list;
	memset(h, 0, sizeof *h);
	if (!*p) {
		snprintf(why, whylen, "wants addresses separated by commas (e.g. 10.0.1.5,10.0.2.5)");
		return -1;
	}
	for (;;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char one[INET6_ADDRSTRLEN + 1];
		uint8_t a[16];
		memset(a, 0, sizeof a);
		/* the longest form an address has, and no empty item (",," or a trailing comma) */
		if (len == 0 || len >= sizeof one) {
			snprintf(why, whylen, "'%.*s' is not an IPv4 or IPv6 address (comma-separated list)",
				 (int)(len > 60 ? 60 : len), p);
			return -1;
		}
		memcpy(one, p, len);
		one[len] = '\0';
		if (inet_pton(AF_INET, one, a) == 1) {
			if (h->n == GS_HOST_ADDRS_MAX)
				goto too_many;
			gs_host_addrs_add(h, 4, a);
		} else if (inet_pton(AF_INET6, one, a) == 1) {
			if (h->n == GS_HOST_ADDRS_MAX)
				goto too_many;
			gs_host_addrs_add(h, 6, a);
		} else {
			snprintf(why, whylen, "'%s' is not an IPv4 or IPv6 address (comma-separated list)", one);
			return -1;
		}
		if (!end)
			return 0;
		p = end + 1;
	}
too_many:
	snprintf(why, whylen, "more than %d addresses", GS_HOST_ADDRS_MAX);
	return -1;
}
