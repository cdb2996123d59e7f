// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
/* A tc packet as the tap needs it: the interface's link-layer length, then
 * IPv4/IPv6 and TCP.  Included by giop_tap.bpf.c only. */
#ifndef GS_TAP_PACKET_BPF_H
#define GS_TAP_PACKET_BPF_H

#define IP_PROTO_TCP 6

struct pkt {
	struct gs_tap_flow flow;
	__u32 seq, ack, poff, plen;
	__u16 window;
	__u8 flags;
};

/* IPv4/IPv6 + TCP from offset `off` (the link layer's length). */
/* The TCP header's fields, from its 20 fixed bytes at t (a copy on the stack
 * or the packet itself, checked by the caller); l4: its offset in the skb,
 * ip_payload: TCP header and data as the IP header says. Both parsers end here. */
static __always_inline bool tcp_fields(struct pkt *p, const __u8 *t, __u32 l4, __u32 ip_payload,
				       __u32 skb_len)
{
	__u32 doff = (t[12] >> 4) * 4;
	if (doff < 20 || ip_payload < doff)
		return false;
	p->poff = l4 + doff;
	p->plen = ip_payload - doff;
	/* never past what the skb holds (a lying IP length) */
	if (p->poff > skb_len)
		return false;
	if (p->plen > skb_len - p->poff)
		p->plen = skb_len - p->poff;
	p->flow.sport = (__u16)t[0] << 8 | t[1];
	p->flow.dport = (__u16)t[2] << 8 | t[3];
	p->seq = (__u32)t[4] << 24 | (__u32)t[5] << 16 | (__u32)t[6] << 8 | t[7];
	p->ack = (__u32)t[8] << 24 | (__u32)t[9] << 16 | (__u32)t[10] << 8 | t[11];
	p->flags = t[13];
	p->window = (__u16)t[14] << 8 | t[15];
	return true;
}

static __always_inline bool parse(struct __sk_buff *skb, __u32 off, struct pkt *p)
{
	__u16 proto = bpf_ntohs((__u16)skb->protocol);
	__u32 ip_payload, l4;
	__u8 t[20];

	for (int i = 0; i < 2 && off && (proto == ETH_P_8021Q || proto == ETH_P_8021AD); i++) {
		__be16 inner;
		if (bpf_skb_load_bytes(skb, off + 2, &inner, 2))
			return false;
		proto = bpf_ntohs(inner);
		off += 4;
	}
	if (proto == ETH_P_IP) {
		struct iphdr ip;
		__u32 ihl, tot;
		if (bpf_skb_load_bytes(skb, off, &ip, sizeof ip) || ip.version != 4 ||
		    ip.protocol != IP_PROTO_TCP || (ip.frag_off & bpf_htons(0x3fff)))
			return false;
		ihl = ip.ihl * 4;
		if (ihl < 20)
			return false;
		tot = bpf_ntohs(ip.tot_len);
		l4 = off + ihl;
		/* 0 in a GSO super-packet larger than 64 KiB (BIG TCP): the skb says */
		ip_payload = tot ? (tot > ihl ? tot - ihl : 0) : skb->len - l4;
		p->flow.family = 4;
		__builtin_memcpy(p->flow.saddr, &ip.saddr, 4);
		__builtin_memcpy(p->flow.daddr, &ip.daddr, 4);
	} else if (proto == ETH_P_IPV6) {
		struct ipv6hdr ip6;
		__u32 pl;
		if (bpf_skb_load_bytes(skb, off, &ip6, sizeof ip6) || ip6.nexthdr != IP_PROTO_TCP)
			return false;
		pl = bpf_ntohs(ip6.payload_len);
		l4 = off + 40;
		ip_payload = pl ? pl : skb->len - l4;
		p->flow.family = 6;
		__builtin_memcpy(p->flow.saddr, &ip6.saddr, 16);
		__builtin_memcpy(p->flow.daddr, &ip6.daddr, 16);
	} else {
		return false;
	}
	if (bpf_skb_load_bytes(skb, l4, t, sizeof t))
		return false;
	return tcp_fields(p, t, l4, ip_payload, skb->len);
}

/* The common case read in place (no helper call): IPv4 without options or
 * IPv6 without extension headers, then TCP, all in the skb's linear part.
 * 1: parsed, 0: not for us, -1: let parse() decide. */
static __always_inline int parse_direct(struct __sk_buff *skb, __u32 off, struct pkt *p)
{
	__u8 *data = (__u8 *)(long)skb->data, *end = (__u8 *)(long)skb->data_end;
	__u16 proto = bpf_ntohs((__u16)skb->protocol);
	__u8 *t;
	__u32 ip_payload;

	/* constant offsets: the verifier follows those (Ethernet-like or none) */
	if (off == 14)
		data += 14;
	else if (off != 0)
		return -1;
	if (proto == ETH_P_IP) {
		struct iphdr *ip = (struct iphdr *)data;
		if ((__u8 *)(ip + 1) > end)
			return -1;
		if (ip->version != 4 || ip->ihl != 5)
			return -1;
		if (ip->protocol != IP_PROTO_TCP || (ip->frag_off & bpf_htons(0x3fff)))
			return 0;
		t = (__u8 *)(ip + 1);
		ip_payload = bpf_ntohs(ip->tot_len);
		if (ip_payload < 20)
			return -1; /* 0: a GSO super-packet beyond 64 KiB */
		ip_payload -= 20;
		p->flow.family = 4;
		__builtin_memcpy(p->flow.saddr, &ip->saddr, 4);
		__builtin_memcpy(p->flow.daddr, &ip->daddr, 4);
	} else if (proto == ETH_P_IPV6) {
		struct ipv6hdr *ip6 = (struct ipv6hdr *)data;
		if ((__u8 *)(ip6 + 1) > end)
			return -1;
		if (ip6->nexthdr != IP_PROTO_TCP || !ip6->payload_len)
			return -1;
		t = (__u8 *)(ip6 + 1);
		ip_payload = bpf_ntohs(ip6->payload_len);
		p->flow.family = 6;
		__builtin_memcpy(p->flow.saddr, &ip6->saddr, 16);
		__builtin_memcpy(p->flow.daddr, &ip6->daddr, 16);
	} else {
		return -1;
	}
	if (t + 20 > end)
		return -1;
	return tcp_fields(p, t, (__u32)(t - (__u8 *)(long)skb->data), ip_payload, skb->len) ? 1 : -1;
}

/* 1 + the link-layer length of a tapped interface, 0 for the others. */
static __always_inline __u32 iface_l2(__u32 ifindex)
{
	struct gs_tap_iface *ifc;
	for (int i = 0; i < GS_TAP_RODATA_IFACES; i++)
		if (ro_ifindex[i] && ro_ifindex[i] == ifindex)
			return ro_l2[i];
	if (!ifaces_in_map)
		return 0;
	ifc = bpf_map_lookup_elem(&ifaces, &ifindex);
	return ifc ? ifc->l2_len : 0;
}

#endif
