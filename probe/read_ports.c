// SPDX-License-Identifier: BSD-2-Clause
#include "read_ports.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../decoders/packet.h"
#include "tap_pcap.h"

enum { SHOWN = 5 };

struct scan {
	uint32_t *per_port; /* requests by destination port */
};

/* A segment whose data starts with a GIOP 1.0-1.3 Request or LocateRequest
 * header: its destination port serves GIOP.  (A header in the middle of a
 * segment is missed: a hint needs the common case, not every request.) */
static void frame(void *arg, int dlt, int64_t ts, const uint8_t *data, uint32_t caplen, uint32_t wirelen)
{
	struct scan *sc = arg;
	struct gs_packet pk;
	enum gs_layer layer;
	const uint8_t *p;
	(void)ts;
	if (gs_packet_decode(dlt, data, caplen, wirelen, &pk, &layer) != GS_DEC_OK || pk.payload_cap < 8)
		return;
	p = pk.payload;
	if (memcmp(p, "GIOP", 4) == 0 && p[4] == 1 && p[5] <= 3 && (p[7] == 0 || p[7] == 3) &&
	    sc->per_port[pk.tcp.dport] < UINT32_MAX)
		sc->per_port[pk.tcp.dport]++;
}

int gs_read_giop_ports(const struct gs_input *in, int n, char *msg, size_t msglen, char *list, size_t listlen)
{
	struct scan sc;
	struct gs_read_progress prog = { 0 };
	char err[512];
	size_t mo = 0, lo = 0;
	int shown = 0;
	if (!(sc.per_port = calloc(65536, sizeof *sc.per_port)))
		return ENOMEM;
	for (int i = 0; i < n; i++)
		if (in[i].same_as < 0)
			(void)gs_pcap_read_file_fn(in[i].path, frame, &sc, &prog, NULL, err, sizeof err);
	msg[0] = list[0] = '\0';
	/* the busiest ports first (a few passes over 64 Ki counters: once, at the end) */
	for (; shown < SHOWN; shown++) {
		uint32_t best = 0;
		int port = -1;
		for (int p = 0; p < 65536; p++)
			if (sc.per_port[p] > best) {
				best = sc.per_port[p];
				port = p;
			}
		if (port < 0)
			break;
		sc.per_port[port] = 0;
		if (mo < msglen)
			mo += (size_t)snprintf(msg + mo, msglen - mo, "%s%d (%u segment%s opening one)", shown ? ", " : "",
					       port, best, best == 1 ? "" : "s");
		if (lo < listlen)
			lo += (size_t)snprintf(list + lo, listlen - lo, "%s%d", shown ? "," : "", port);
	}
	free(sc.per_port);
	return shown ? 0 : ENOENT;
}
