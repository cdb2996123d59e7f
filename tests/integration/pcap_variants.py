#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Derive variants of a real capture (classic pcap, Ethernet, IPv4) to exercise the
decoders and the TCP reassembly on real traffic:

  pcap_variants.py KIND SRC DST [SEED]

KIND:
  drop      drop ~3% of the frames (capture loss: holes, replies without requests)
  reorder   move frames a few places later within their TCP direction
  dup       repeat ~3% of the frames (retransmissions of bytes already seen)
  dupdata N repeat every Nth frame that carries TCP payload (N default 4): a retransmission
            of GIOP bytes for sure, however few frames the capture has
  mix       drop + reorder + dup
  snap N    cut every frame to N bytes (like editcap -s N)
  vlan      insert an 802.1Q tag;  qinq: two tags (802.1ad + 802.1Q)
  sll       Linux cooked (SLL, linktype 113);  sll2 (linktype 276)
  raw       raw IP (linktype 101);  null: BSD loopback (linktype 0);  loop (108)
  ipv6      rewrite IPv4 as IPv6 (addresses mapped into fd00::/64)

Time stamps stay in increasing order (frames that move take the slot's time).
Deterministic for a given SEED."""
import random
import struct
import sys


def read_pcap(path):
    d = open(path, "rb").read()
    magic = struct.unpack("<I", d[:4])[0]
    if magic not in (0xa1b23c4d, 0xa1b2c3d4):
        sys.exit("pcap_variants: %s: want a little-endian classic pcap" % path)
    gh = bytearray(d[:24])
    recs, o = [], 24
    while o + 16 <= len(d):
        ts, tu, cl, ol = struct.unpack("<IIII", d[o:o + 16])
        recs.append([ts, tu, ol, bytes(d[o + 16:o + 16 + cl])])
        o += 16 + cl
    return gh, recs


def write_pcap(path, gh, recs, linktype=None, snaplen=None):
    gh = bytearray(gh)
    if linktype is not None:
        gh[20:24] = struct.pack("<I", linktype)
    if snaplen is not None:
        gh[16:20] = struct.pack("<I", snaplen)
    with open(path, "wb") as f:
        f.write(gh)
        for ts, tu, ol, b in recs:
            f.write(struct.pack("<IIII", ts, tu, len(b), ol) + b)


def direction(frame):
    # Ethernet + IPv4: addresses and ports identify the direction
    ihl = (frame[14] & 15) * 4
    return frame[26:34] + frame[14 + ihl:14 + ihl + 4]


def keep_times(recs, out):
    times = sorted((r[0], r[1]) for r in out)
    for r, t in zip(out, times):
        r[0], r[1] = t
    return out


def drop(recs, rnd, p=0.03):
    return [r for r in recs if rnd.random() >= p]


def dup(recs, rnd, p=0.03):
    out = []
    for r in recs:
        out.append(list(r))
        if rnd.random() < p and len(r[3]) > 60:
            out.append(list(r))
    return out


def tcp_payload_len(frame):
    # Ethernet + IPv4 + TCP: IP total length - IP header - TCP header
    if len(frame) < 34 or frame[12:14] != b"\x08\x00" or frame[23] != 6:
        return 0
    ihl = (frame[14] & 15) * 4
    total = struct.unpack(">H", frame[16:18])[0]
    if len(frame) < 14 + ihl + 13:
        return 0
    doff = (frame[14 + ihl + 12] >> 4) * 4
    return max(0, total - ihl - doff)


def dupdata(recs, n):
    out, seen = [], 0
    for r in recs:
        out.append(list(r))
        if tcp_payload_len(r[3]) > 0:
            seen += 1
            if seen % n == 0:
                out.append(list(r))
    return out


def reorder(recs, rnd):
    out = [list(r) for r in recs]
    for _ in range(len(out) // 30):
        i = rnd.randrange(0, max(1, len(out) - 4))
        j = min(len(out) - 1, i + rnd.randint(1, 3))
        if all(direction(out[k][3]) == direction(out[i][3]) for k in range(i, j + 1)):
            out.insert(j, out.pop(i))
    return out


def relink(recs, kind):
    out = []
    for ts, tu, ol, b in recs:
        eth, payload = b[:14], b[14:]
        etype = eth[12:14]
        if kind == "vlan":
            nb = eth[:12] + b"\x81\x00\x00\x07" + etype + payload
        elif kind == "qinq":
            nb = eth[:12] + b"\x88\xa8\x00\x64\x81\x00\x00\x07" + etype + payload
        elif kind == "sll":
            nb = struct.pack(">HHH", 0, 1, 6) + eth[6:12] + b"\0\0" + etype + payload
        elif kind == "sll2":
            nb = etype + b"\0\0" + struct.pack(">I", 3) + struct.pack(">H", 1) + b"\0\x06" + eth[6:12] + b"\0\0" + payload
        elif kind == "raw":
            nb = payload
        elif kind == "null":
            nb = struct.pack("<I", 2) + payload
        elif kind == "loop":
            nb = struct.pack(">I", 2) + payload
        else:
            raise ValueError(kind)
        out.append([ts, tu, ol - len(b) + len(nb), nb])
    return out


def ipv6(recs):
    out = []
    for ts, tu, ol, b in recs:
        eth, ip = b[:14], b[14:]
        if eth[12:14] != b"\x08\x00":
            out.append([ts, tu, ol, b])
            continue
        ihl = (ip[0] & 15) * 4
        total = struct.unpack(">H", ip[2:4])[0]
        l4 = ip[ihl:total] if total else ip[ihl:]
        src = b"\xfd\0" + b"\0" * 10 + ip[12:16]
        dst = b"\xfd\0" + b"\0" * 10 + ip[16:20]
        h6 = struct.pack(">IHBB", 0x60000000, len(l4), ip[9], ip[8]) + src + dst
        nb = eth[:12] + b"\x86\xdd" + h6 + l4
        out.append([ts, tu, ol - len(b) + len(nb), nb])
    return out


def main():
    kind, src, dst = sys.argv[1], sys.argv[2], sys.argv[3]
    arg = sys.argv[4] if len(sys.argv) > 4 else "1"
    gh, recs = read_pcap(src)
    rnd = random.Random(int(arg) if kind != "snap" else 1)
    linktype = None
    snaplen = None
    if kind == "drop":
        recs = keep_times(recs, drop(recs, rnd))
    elif kind == "dup":
        recs = keep_times(recs, dup(recs, rnd))
    elif kind == "dupdata":
        n = int(arg) if len(sys.argv) > 4 else 4
        if n < 1:
            sys.exit("pcap_variants: dupdata N: N must be at least 1")
        recs = keep_times(recs, dupdata(recs, n))
    elif kind == "reorder":
        recs = keep_times(recs, reorder(recs, rnd))
    elif kind == "mix":
        recs = keep_times(recs, reorder(dup(drop(recs, rnd), rnd), rnd))
    elif kind == "snap":
        snaplen = int(arg)
        recs = [[ts, tu, ol, b[:snaplen]] for ts, tu, ol, b in recs]
    elif kind in ("vlan", "qinq"):
        recs = relink(recs, kind)
    elif kind in ("sll", "sll2", "raw", "null", "loop"):
        recs = relink(recs, kind)
        linktype = {"sll": 113, "sll2": 276, "raw": 101, "null": 0, "loop": 108}[kind]
    elif kind == "ipv6":
        recs = ipv6(recs)
    else:
        sys.exit(__doc__)
    write_pcap(dst, gh, recs, linktype, snaplen)


if __name__ == "__main__":
    main()
