/* TCP header and the options the analysis uses. */
#ifndef GS_TCP_H
#define GS_TCP_H

#include <stdbool.h>
#include <stdint.h>
#include "bytes.h"
#include "decode.h"

#define GS_TCP_FIN 0x01
#define GS_TCP_SYN 0x02
#define GS_TCP_RST 0x04
#define GS_TCP_PSH 0x08
#define GS_TCP_ACK 0x10

struct gs_tcp {
	uint16_t sport, dport;
	uint32_t seq, ack;
	uint16_t window;
	uint8_t flags;
	uint8_t wscale;       /* window scale option, valid when has_wscale */
	bool has_wscale;
	bool bad_options;     /* an option ran past the header: ignored, counted */
	uint16_t mss;         /* 0 when absent */
	size_t hdr_len;
};

/* `s` holds the captured bytes of the TCP header onward. */
enum gs_dec gs_tcp_decode(struct gs_span s, struct gs_tcp *t);

#endif
