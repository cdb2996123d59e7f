/* SPDX-License-Identifier: BSD-2-Clause */
/* Link, IP and TCP decoders: every link type, IPv4 options, IPv6 extension
 * headers, TCP options, every truncation point. */
#include "unit.h"

static uint8_t frame[70000];
static const uint8_t PAYLOAD[] = "GIOP\x01\x02\x00\x00\x00\x00\x00\x00payload!";
#define PLEN (sizeof PAYLOAD - 1)

/* Decodes frame[0..caplen) from an exact-size copy. */
static enum gs_dec decode(int dlt, size_t caplen, size_t wirelen, struct gs_packet *pk, enum gs_layer *layer)
{
	uint8_t *copy = exact_copy(frame, caplen);
	enum gs_dec r;
	memset(pk, 0xa5, sizeof *pk);
	r = gs_packet_decode(dlt, copy, (uint32_t)caplen, (uint32_t)wirelen, pk, layer);
	/* payload points into the copy: make it an offset */
	if (r == GS_DEC_OK)
		pk->payload = frame + (pk->payload - copy);
	free(copy);
	return r;
}

static void check_ok(struct pk *p, size_t len, int dlt)
{
	struct gs_packet pk;
	enum gs_layer layer;
	assert_int_equal(decode(dlt, len, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.ip.family, p->ipv);
	assert_int_equal(pk.ip.proto, 6);
	assert_false(pk.ip.fragment);
	assert_false(pk.ip.len_clamped);
	assert_memory_equal(pk.ip.src, p->src, p->ipv == 4 ? 4 : 16);
	assert_memory_equal(pk.ip.dst, p->dst, p->ipv == 4 ? 4 : 16);
	if (p->ipv == 4) {
		static const uint8_t zero[12];
		assert_memory_equal(pk.ip.src + 4, zero, 12);
		assert_memory_equal(pk.ip.dst + 4, zero, 12);
	}
	assert_int_equal(pk.ip.l4_off, p->ip_hdr_len);
	assert_int_equal(pk.ip.l4_len, p->tcp_hdr_len + p->len);
	assert_int_equal(pk.tcp.sport, p->sport);
	assert_int_equal(pk.tcp.dport, p->dport);
	assert_int_equal(pk.tcp.seq, p->seq);
	assert_int_equal(pk.tcp.ack, p->ack);
	assert_int_equal(pk.tcp.flags, p->flags);
	assert_int_equal(pk.tcp.window, p->window);
	assert_int_equal(pk.tcp.hdr_len, p->tcp_hdr_len);
	assert_ptr_equal(pk.payload, frame + pk_payload_off(p));
	assert_int_equal(pk.payload_len, p->len);
	assert_int_equal(pk.payload_cap, p->len);
	assert_memory_equal(pk.payload, p->payload, p->len);
}

static size_t build(struct pk *p)
{
	p->payload = PAYLOAD;
	p->len = PLEN;
	return pk_build(frame, p);
}

/* ---- link types ------------------------------------------------------------ */

static void test_ethernet_v4_v6(void **state)
{
	struct pk p;
	size_t len;
	pk_defaults4(&p);
	len = build(&p);
	assert_int_equal(len, 14 + 20 + 20 + PLEN);
	check_ok(&p, len, GS_DLT_EN10MB);
	pk_defaults6(&p);
	len = build(&p);
	assert_int_equal(len, 14 + 40 + 20 + PLEN);
	check_ok(&p, len, GS_DLT_EN10MB);
}

static void test_vlan_and_qinq(void **state)
{
	static const uint16_t tpids[] = { 0x8100, 0x88a8, 0x9100 };
	struct pk p;
	size_t len;
	for (int ipv = 4; ipv <= 6; ipv += 2)
		for (int n = 1; n <= GS_MAX_VLAN_TAGS; n++) {
			if (ipv == 4)
				pk_defaults4(&p);
			else
				pk_defaults6(&p);
			p.nvlan = n;
			for (int i = 0; i < n; i++)
				p.vlan_tpid[i] = tpids[(i + n) % 3];
			len = build(&p);
			assert_int_equal(p.link_len, 14 + 4 * (size_t)n);
			check_ok(&p, len, GS_DLT_EN10MB);
		}
	/* QinQ: 802.1ad outer, 802.1Q inner */
	pk_defaults4(&p);
	p.nvlan = 2;
	p.vlan_tpid[0] = 0x88a8;
	p.vlan_tpid[1] = 0x8100;
	len = build(&p);
	assert_int_equal(frame[12], 0x88);
	assert_int_equal(frame[13], 0xa8);
	assert_int_equal(frame[16], 0x81);
	check_ok(&p, len, GS_DLT_EN10MB);
}

static void test_vlan_too_deep(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults4(&p);
	p.nvlan = GS_MAX_VLAN_TAGS + 1;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_LINK);
}

static void test_non_ip_ethertype(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults4(&p);
	p.ethertype = 0x0806; /* ARP */
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_SKIP);
	assert_int_equal(layer, GS_LAYER_LINK);
	/* an IPv4 ethertype over an IPv6 header: the version contradicts it */
	pk_defaults6(&p);
	p.ethertype = 0x0800;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_IP);
	pk_defaults4(&p);
	p.ethertype = 0x86dd;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_IP);
}

static void test_sll_sll2(void **state)
{
	struct pk p;
	size_t len;
	for (int ipv = 4; ipv <= 6; ipv += 2) {
		if (ipv == 4)
			pk_defaults4(&p);
		else
			pk_defaults6(&p);
		p.dlt = GS_DLT_LINUX_SLL;
		len = build(&p);
		assert_int_equal(p.link_len, 16);
		check_ok(&p, len, GS_DLT_LINUX_SLL);
		p.dlt = GS_DLT_LINUX_SLL2;
		len = build(&p);
		assert_int_equal(p.link_len, 20);
		check_ok(&p, len, GS_DLT_LINUX_SLL2);
	}
}

/* The capture host's own frames (the nesting stage's host addresses): SLL's
 * packet type and SLL2's byte 10, PACKET_OUTGOING (4); other types and link
 * layers, and a header cut short, say nothing. */
static void test_link_outgoing(void **state)
{
	struct pk p;
	size_t len;
	(void)state;
	pk_defaults4(&p);
	p.dlt = GS_DLT_LINUX_SLL;
	len = build(&p);
	assert_false(gs_link_outgoing(GS_DLT_LINUX_SLL, frame, (uint32_t)len)); /* to us */
	frame[1] = 4;
	assert_true(gs_link_outgoing(GS_DLT_LINUX_SLL, frame, (uint32_t)len));
	assert_false(gs_link_outgoing(GS_DLT_LINUX_SLL, frame, 15));
	frame[0] = 1; /* 0x0104: not a packet type */
	assert_false(gs_link_outgoing(GS_DLT_LINUX_SLL, frame, (uint32_t)len));
	p.dlt = GS_DLT_LINUX_SLL2;
	len = build(&p);
	assert_false(gs_link_outgoing(GS_DLT_LINUX_SLL2, frame, (uint32_t)len));
	frame[10] = 4;
	assert_true(gs_link_outgoing(GS_DLT_LINUX_SLL2, frame, (uint32_t)len));
	assert_false(gs_link_outgoing(GS_DLT_LINUX_SLL2, frame, 19));
	frame[10] = 3; /* PACKET_OTHERHOST */
	assert_false(gs_link_outgoing(GS_DLT_LINUX_SLL2, frame, (uint32_t)len));
	pk_defaults4(&p);
	len = build(&p);
	assert_false(gs_link_outgoing(GS_DLT_EN10MB, frame, (uint32_t)len));
}

static void test_null_loop(void **state)
{
	static const uint32_t v6fams[] = { 10, 24, 28, 30 };
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	for (int be = 0; be < 2; be++) {
		pk_defaults4(&p);
		p.dlt = GS_DLT_NULL;
		p.null_be = be;
		len = build(&p);
		assert_int_equal(frame[be ? 3 : 0], 2);
		check_ok(&p, len, GS_DLT_NULL);
		for (size_t i = 0; i < 4; i++) {
			pk_defaults6(&p);
			p.dlt = GS_DLT_NULL;
			p.null_be = be;
			p.null_family = v6fams[i];
			len = build(&p);
			check_ok(&p, len, GS_DLT_NULL);
		}
		pk_defaults4(&p);
		p.dlt = GS_DLT_NULL;
		p.null_be = be;
		p.null_family = 7; /* neither */
		len = build(&p);
		assert_int_equal(decode(GS_DLT_NULL, len, len, &pk, &layer), GS_DEC_SKIP);
		assert_int_equal(layer, GS_LAYER_LINK);
	}
	pk_defaults4(&p);
	p.dlt = GS_DLT_LOOP;
	len = build(&p);
	assert_int_equal(frame[3], 2);
	check_ok(&p, len, GS_DLT_LOOP);
	pk_defaults6(&p);
	p.dlt = GS_DLT_LOOP;
	p.null_family = 30;
	len = build(&p);
	check_ok(&p, len, GS_DLT_LOOP);
}

static void test_raw(void **state)
{
	static const int raws[] = { GS_DLT_RAW, GS_DLT_RAW_OPENBSD, GS_DLT_LINKTYPE_RAW };
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	for (size_t i = 0; i < 3; i++) {
		pk_defaults4(&p);
		p.dlt = raws[i];
		len = build(&p);
		assert_int_equal(p.link_len, 0);
		check_ok(&p, len, raws[i]);
		pk_defaults6(&p);
		p.dlt = raws[i];
		len = build(&p);
		check_ok(&p, len, raws[i]);
		frame[0] = 0x50; /* version 5 */
		assert_int_equal(decode(raws[i], len, len, &pk, &layer), GS_DEC_SKIP);
		assert_int_equal(layer, GS_LAYER_LINK);
	}
	pk_defaults4(&p);
	p.dlt = GS_DLT_IPV4;
	len = build(&p);
	check_ok(&p, len, GS_DLT_IPV4);
	pk_defaults6(&p);
	p.dlt = GS_DLT_IPV6;
	len = build(&p);
	check_ok(&p, len, GS_DLT_IPV6);
	/* DLT_IPV4 with an IPv6 packet: INVALID at the IP layer */
	assert_int_equal(decode(GS_DLT_IPV4, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_IP);
}

static void test_link_names_and_unsupported(void **state)
{
	struct gs_packet pk;
	enum gs_layer layer;
	assert_true(gs_link_supported(GS_DLT_EN10MB));
	assert_true(gs_link_supported(GS_DLT_LINUX_SLL2));
	assert_true(gs_link_supported(GS_DLT_LOOP));
	assert_false(gs_link_supported(105));
	assert_string_equal(gs_link_name(GS_DLT_LINUX_SLL), "LINUX_SLL");
	assert_string_equal(gs_link_name(GS_DLT_RAW_OPENBSD), "RAW");
	assert_string_equal(gs_link_name(105), "unsupported");
	assert_string_equal(gs_dec_name(GS_DEC_TRUNCATED), "truncated");
	memset(frame, 0, 64);
	assert_int_equal(decode(105, 64, 64, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_LINK);
}

/* ---- IPv4 ---------------------------------------------------------------- */

static void test_ipv4_options(void **state)
{
	struct pk p;
	size_t len;
	for (uint8_t opt = 0; opt <= 40; opt += 4) {
		pk_defaults4(&p);
		p.ip4_optlen = opt;
		len = build(&p);
		assert_int_equal(p.ip_hdr_len, 20u + opt);
		check_ok(&p, len, GS_DLT_EN10MB);
	}
}

static void test_ipv4_bad_headers(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;

	pk_defaults4(&p);
	len = build(&p);
	frame[14] = 0x44; /* IHL 4: less than 20 bytes */
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_IP);

	pk_defaults4(&p);
	p.ip_len_delta = -(int32_t)(20 + 20 + PLEN) + 19; /* total length 19 < IHL */
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_IP);

	/* total length shorter than IP + TCP headers: the TCP header does not fit */
	pk_defaults4(&p);
	p.ip_len_delta = -(int32_t)PLEN - 1;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_TCP);
}

static void test_ipv4_tso_total_length_zero(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults4(&p);
	p.ip4_totlen_zero = true;
	len = build(&p);
	assert_int_equal(frame[16], 0);
	assert_int_equal(frame[17], 0);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.ip.l4_len, 20 + PLEN);
	assert_int_equal(pk.payload_len, PLEN);
	assert_int_equal(pk.payload_cap, PLEN);
	assert_false(pk.ip.len_clamped);
	/* TSO super-frame cut by the snaplen: the wire length gives the payload */
	assert_int_equal(decode(GS_DLT_EN10MB, len - 5, len + 3000, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.payload_len, PLEN + 3000);
	assert_int_equal(pk.payload_cap, PLEN - 5);
}

static void test_ipv4_length_beyond_frame_clamped(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults4(&p);
	p.ip_len_delta = 100;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_true(pk.ip.len_clamped);
	assert_int_equal(pk.payload_len, PLEN);
	assert_int_equal(pk.payload_cap, PLEN);
}

static void test_ipv4_fragment_and_udp_skipped(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults4(&p);
	p.ip4_frag = 0x2000; /* MF */
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_SKIP);
	assert_int_equal(layer, GS_LAYER_IP);
	assert_true(pk.ip.fragment);
	pk_defaults4(&p);
	p.ip4_frag = 0x0010; /* offset 16 */
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_SKIP);
	assert_true(pk.ip.fragment);
	pk_defaults4(&p);
	p.ip4_frag = 0x4000; /* DF only: not a fragment */
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_false(pk.ip.fragment);
	pk_defaults4(&p);
	p.proto = 17;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_SKIP);
	assert_int_equal(layer, GS_LAYER_IP);
	assert_int_equal(pk.ip.proto, 17);
}

/* ---- IPv6 ---------------------------------------------------------------- */

static void test_ipv6_extension_chain(void **state)
{
	struct pk p;
	size_t len;
	pk_defaults6(&p);
	p.ext[0] = 0;  /* hop-by-hop */
	p.ext[1] = 43; /* routing */
	p.ext[2] = 60; /* destination options */
	p.ext[3] = 44; /* fragment (atomic) */
	p.ext[4] = 51; /* AH */
	p.ext[5] = 60;
	p.next_ext = 6;
	len = build(&p);
	assert_int_equal(p.ip_hdr_len, 40 + 8 * 5 + 24);
	check_ok(&p, len, GS_DLT_EN10MB);
}

static void test_ipv6_fragment_skipped(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults6(&p);
	p.ext[0] = 44;
	p.next_ext = 1;
	p.frag6 = 1; /* M */
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_SKIP);
	assert_true(pk.ip.fragment);
	p.frag6 = 8 << 3; /* offset 8 */
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_SKIP);
	assert_true(pk.ip.fragment);
	p.frag6 = 6; /* reserved bits only: atomic */
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_false(pk.ip.fragment);
}

static void test_ipv6_chain_bounds(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	/* GS_IPV6_MAX_EXT headers: fine */
	pk_defaults6(&p);
	for (int i = 0; i < GS_IPV6_MAX_EXT; i++)
		p.ext[i] = 60;
	p.next_ext = GS_IPV6_MAX_EXT;
	len = build(&p);
	check_ok(&p, len, GS_DLT_EN10MB);
	/* one more: hostile */
	p.ext[GS_IPV6_MAX_EXT] = 60;
	p.next_ext = GS_IPV6_MAX_EXT + 1;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_IP);
	/* an extension header longer than the payload length */
	pk_defaults6(&p);
	p.ext[0] = 0;
	p.next_ext = 1;
	len = build(&p);
	frame[14 + 40 + 1] = 200;
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_IP);
	/* ESP and No Next Header: nothing to decode */
	pk_defaults6(&p);
	p.proto = 50;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_SKIP);
	assert_int_equal(layer, GS_LAYER_IP);
	p.proto = 59;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_SKIP);
}

static void test_ipv6_jumbo_and_clamp(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults6(&p);
	p.ip_len_delta = -(int32_t)(20 + PLEN); /* payload length 0 */
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.payload_len, PLEN);
	pk_defaults6(&p);
	p.ip_len_delta = 1000;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_true(pk.ip.len_clamped);
	assert_int_equal(pk.payload_len, PLEN);
}

/* ---- TCP ------------------------------------------------------------------- */

static void test_tcp_options(void **state)
{
	static const uint8_t opts[] = {
		2, 4, 0x05, 0xb4,       /* MSS 1460 */
		1,                      /* NOP */
		3, 3, 7,                /* window scale 7 */
		4, 2,                   /* SACK permitted */
		8, 10, 1, 2, 3, 4, 5, 6, 7, 8, /* timestamps */
		0,                      /* end */
	};
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults4(&p);
	p.flags = GS_TCP_SYN;
	p.tcp_opts = opts;
	p.tcp_optlen = sizeof opts;
	len = build(&p);
	assert_int_equal(p.tcp_hdr_len, 44);
	check_ok(&p, len, GS_DLT_EN10MB);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.tcp.mss, 1460);
	assert_true(pk.tcp.has_wscale);
	assert_int_equal(pk.tcp.wscale, 7);
	assert_false(pk.tcp.bad_options);
}

/* NOP NOP TS, what segments after the handshake carry: nothing to record, and
 * an option block of the same size that is not that layout is still read */
static void test_tcp_timestamps_only(void **state)
{
	static const uint8_t ts[] = { 1, 1, 8, 10, 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t ts_bad[] = { 1, 1, 8, 11, 1, 2, 3, 4, 5, 6, 7, 8 };
	static const uint8_t mss_sack[] = { 2, 4, 0x05, 0xb4, 1, 1, 4, 2, 1, 1, 1, 0 };
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	(void)state;

	pk_defaults4(&p);
	p.tcp_opts = ts;
	p.tcp_optlen = sizeof ts;
	len = build(&p);
	assert_int_equal(p.tcp_hdr_len, 32);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.tcp.hdr_len, 32);
	assert_int_equal(pk.payload_len, PLEN);
	assert_int_equal(pk.tcp.mss, 0);
	assert_false(pk.tcp.has_wscale);
	assert_false(pk.tcp.bad_options);

	p.tcp_opts = ts_bad;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_true(pk.tcp.bad_options);

	p.tcp_opts = mss_sack;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.tcp.mss, 1460);
	assert_false(pk.tcp.bad_options);
}

static void test_tcp_bad_options(void **state)
{
	static const uint8_t ws15[] = { 3, 3, 15, 0 };
	static const uint8_t overrun[] = { 1, 1, 2, 9 };
	static const uint8_t zero_len[] = { 5, 0, 0, 0 };
	static const uint8_t lone_kind[] = { 1, 1, 1, 8 };
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;

	pk_defaults4(&p);
	p.tcp_opts = ws15;
	p.tcp_optlen = 4;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.tcp.wscale, 14); /* clamped, RFC 7323 */
	assert_false(pk.tcp.bad_options);

	p.tcp_opts = overrun;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_true(pk.tcp.bad_options);
	assert_int_equal(pk.payload_len, PLEN);

	p.tcp_opts = zero_len;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_true(pk.tcp.bad_options);

	p.tcp_opts = lone_kind;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_true(pk.tcp.bad_options);
	assert_int_equal(pk.tcp.mss, 0);
	assert_false(pk.tcp.has_wscale);

	/* data offset below 5 */
	pk_defaults4(&p);
	p.tcp_doff_override = 4;
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_INVALID);
	assert_int_equal(layer, GS_LAYER_TCP);
}

/* ---- padding, snaplen and every truncation point ---------------------------- */

static void test_ethernet_padding(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults4(&p);
	p.payload = (const uint8_t *)"ab";
	p.len = 2;
	p.pad = 60 - (14 + 20 + 20 + 2);
	len = pk_build(frame, &p);
	assert_int_equal(len, 60);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.payload_len, 2);
	assert_int_equal(pk.payload_cap, 2);
	assert_false(pk.ip.len_clamped);
	/* a pure ACK padded to 60 bytes carries nothing */
	p.len = 0;
	p.pad = 6;
	len = pk_build(frame, &p);
	assert_int_equal(len, 60);
	assert_int_equal(decode(GS_DLT_EN10MB, len, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.payload_len, 0);
	assert_int_equal(pk.payload_cap, 0);
}

static void sweep(struct pk *p, int dlt)
{
	size_t len = build(p), hdr = pk_payload_off(p);
	size_t link_need = p->link_len ? p->link_len : 1; /* raw: the version nibble */
	for (size_t cap = 0; cap <= len; cap++) {
		struct gs_packet pk;
		enum gs_layer layer;
		enum gs_dec r = decode(dlt, cap, len, &pk, &layer);
		if (cap < hdr) {
			if (r != GS_DEC_TRUNCATED)
				fail_msg("dlt %d ipv%d: caplen %zu of %zu: %s, want truncated", dlt, p->ipv, cap,
					 len, gs_dec_name(r));
			if (cap < link_need)
				assert_int_equal(layer, GS_LAYER_LINK);
			else if (cap < p->link_len + p->ip_hdr_len)
				assert_int_equal(layer, GS_LAYER_IP);
			else
				assert_int_equal(layer, GS_LAYER_TCP);
		} else {
			if (r != GS_DEC_OK)
				fail_msg("dlt %d: caplen %zu of %zu: %s, want ok", dlt, cap, len, gs_dec_name(r));
			assert_int_equal(pk.payload_len, p->len);
			assert_int_equal(pk.payload_cap, cap - hdr);
			assert_ptr_equal(pk.payload, frame + hdr);
			assert_true(pk.payload_cap <= pk.payload_len);
		}
	}
}

static void test_every_truncation_point(void **state)
{
	static const uint8_t opts[] = { 2, 4, 0x05, 0xb4, 1, 3, 3, 7 };
	static const int dlts[] = { GS_DLT_EN10MB, GS_DLT_LINUX_SLL, GS_DLT_LINUX_SLL2, GS_DLT_NULL,
				    GS_DLT_LOOP, GS_DLT_RAW };
	struct pk p;
	for (size_t i = 0; i < sizeof dlts / sizeof *dlts; i++)
		for (int ipv = 4; ipv <= 6; ipv += 2) {
			if (ipv == 4) {
				pk_defaults4(&p);
				p.ip4_optlen = 12;
			} else {
				pk_defaults6(&p);
				p.ext[0] = 0;
				p.ext[1] = 43;
				p.ext[2] = 44;
				p.ext[3] = 51;
				p.ext[4] = 60;
				p.next_ext = 5;
			}
			p.dlt = dlts[i];
			if (p.dlt == GS_DLT_EN10MB)
				p.nvlan = 2;
			p.tcp_opts = opts;
			p.tcp_optlen = sizeof opts;
			sweep(&p, dlts[i]);
		}
}

/* A frame cut by the snaplen: the payload is partly there. */
static void test_snaplen_cut_payload(void **state)
{
	struct pk p;
	struct gs_packet pk;
	enum gs_layer layer;
	size_t len;
	pk_defaults4(&p);
	len = build(&p);
	assert_int_equal(decode(GS_DLT_EN10MB, len - 10, len, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.payload_len, PLEN);
	assert_int_equal(pk.payload_cap, PLEN - 10);
	assert_false(pk.ip.len_clamped);
	/* a file whose wire length is below the captured length: the capture wins */
	assert_int_equal(decode(GS_DLT_EN10MB, len, 20, &pk, &layer), GS_DEC_OK);
	assert_int_equal(pk.payload_len, PLEN);
	assert_int_equal(pk.payload_cap, PLEN);
}

/* Random bytes and random mutations of good frames: never a crash, never a read
 * past caplen (ASan), and OK only with payload_cap <= payload_len inside the frame. */
static void test_random_frames(void **state)
{
	static const int dlts[] = { GS_DLT_EN10MB, GS_DLT_LINUX_SLL, GS_DLT_LINUX_SLL2, GS_DLT_NULL,
				    GS_DLT_LOOP, GS_DLT_RAW, GS_DLT_IPV4, GS_DLT_IPV6 };
	uint32_t x = 12345;
	struct pk p;
	for (int iter = 0; iter < 40000; iter++) {
		struct gs_packet pk;
		enum gs_layer layer;
		size_t len, cap;
		int dlt = dlts[iter % 8];
		enum gs_dec r;
		if (iter & 1)
			pk_defaults6(&p);
		else
			pk_defaults4(&p);
		p.dlt = dlt == GS_DLT_IPV4 || dlt == GS_DLT_IPV6 ? GS_DLT_RAW : dlt;
		if (dlt == GS_DLT_IPV4)
			pk_defaults4(&p), p.dlt = GS_DLT_RAW;
		if (dlt == GS_DLT_IPV6)
			pk_defaults6(&p), p.dlt = GS_DLT_RAW;
		if (p.ipv == 6 && (iter & 2)) {
			p.ext[0] = 0, p.ext[1] = 44, p.ext[2] = 60;
			p.next_ext = 3;
		}
		len = build(&p);
		for (int k = 0; k < 4; k++) {
			x = x * 1103515245u + 12345u;
			frame[(x >> 8) % len] = (uint8_t)(x >> 20);
		}
		x = x * 1103515245u + 12345u;
		cap = (x >> 8) % (len + 1);
		r = decode(dlt, cap, len + ((x >> 4) & 7), &pk, &layer);
		if (r == GS_DEC_OK) {
			assert_true(pk.payload_cap <= pk.payload_len);
			assert_true(pk.payload >= frame && pk.payload + pk.payload_cap <= frame + cap);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		UT(test_ethernet_v4_v6),
		UT(test_vlan_and_qinq),
		UT(test_vlan_too_deep),
		UT(test_non_ip_ethertype),
		UT(test_sll_sll2),
		UT(test_link_outgoing),
		UT(test_null_loop),
		UT(test_raw),
		UT(test_link_names_and_unsupported),
		UT(test_ipv4_options),
		UT(test_ipv4_bad_headers),
		UT(test_ipv4_tso_total_length_zero),
		UT(test_ipv4_length_beyond_frame_clamped),
		UT(test_ipv4_fragment_and_udp_skipped),
		UT(test_ipv6_extension_chain),
		UT(test_ipv6_fragment_skipped),
		UT(test_ipv6_chain_bounds),
		UT(test_ipv6_jumbo_and_clamp),
		UT(test_tcp_options),
		UT(test_tcp_bad_options),
		UT(test_tcp_timestamps_only),
		UT(test_ethernet_padding),
		UT(test_every_truncation_point),
		UT(test_snaplen_cut_payload),
		UT(test_random_frames),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
