/* SPDX-License-Identifier: BSD-2-Clause */
/* One host's addresses (a middle tier with an address on each network), for
 * the nesting stage: learned from the capture's packet direction, or named
 * with --host-addrs.  Bounded: an address past the bound is counted, not kept. */
#ifndef GS_HOST_ADDRS_H
#define GS_HOST_ADDRS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "call.h"

/* The addresses of one host (a middle tier with an address on each network):
 * learned from the capture's packet direction or named with --host-addrs. */
#define GS_HOST_ADDRS_MAX 64
struct gs_host_addrs {
	uint32_t n;
	struct gs_endpoint addr[GS_HOST_ADDRS_MAX]; /* port 0 */
	uint64_t full;   /* addresses not kept: the set was full */
};
/* Adds an address (family 4 or 6, addr as in gs_endpoint): true if new. */
bool gs_host_addrs_add(struct gs_host_addrs *h, uint8_t family, const uint8_t *addr);
bool gs_host_addrs_has(const struct gs_host_addrs *h, const struct gs_endpoint *ep);
/* --host-addrs LIST: comma-separated IPv4/IPv6 addresses.  0, or -1 with a
 * one-line reason in why. */
int gs_host_addrs_parse(struct gs_host_addrs *h, const char *list, char *why, size_t whylen);

#endif
