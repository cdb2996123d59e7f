// SPDX-License-Identifier: (GPL-2.0-only OR BSD-2-Clause)
// test device: a TCP packet leaving the client's veth without the sender's delivery time,
// as a NIC's driver hands the stack a fresh skb (tstamp 0)
#include "vmlinux.h"
#define TC_ACT_OK 0
#include <bpf/bpf_helpers.h>
SEC("tc")
int clr(struct __sk_buff *skb)
{
	bpf_skb_set_tstamp(skb, 0, BPF_SKB_TSTAMP_UNSPEC);
	return TC_ACT_OK;
}
char LICENSE[] SEC("license") = "Dual BSD/GPL";
