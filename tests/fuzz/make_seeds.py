#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""make_seeds.py: seed corpora for the libFuzzer harnesses, from real captures.

usage: make_seeds.py OUTDIR CAPTURE.pcap...

Writes (python3 stdlib only, deterministic):
  OUTDIR/packet/  single frames, prefixed with fuzz_packet's link-type byte: the
                  Ethernet frames as captured, and the same frames re-framed as
                  802.1Q, Linux SLL, SLL2, BSD NULL/LOOP, raw IP, and as IPv6
                  (with a hop-by-hop and a destination-options header)
  OUTDIR/giop/    individual GIOP messages (one per distinct type/version/size shape)
  OUTDIR/engine/  the TCP connections of each capture as fuzz_engine segment lists
                  (see the layout in fuzz_engine.c), the first segments of each
  OUTDIR/pcap/    whole small captures: the first packets of each as classic pcap
                  (nanosecond and microsecond), as pcapng, and with Linux SLL framing
  OUTDIR/giop.dict  a libFuzzer dictionary (GIOP magic, versions, type bytes, ...)
Only classic pcap Ethernet captures are read.
"""

import hashlib
import os
import struct
import sys

# fuzz_packet.c: dlts[] order
PK_EN10MB, PK_SLL, PK_SLL2, PK_NULL, PK_LOOP, PK_RAW, PK_RAW14, PK_LRAW, PK_IPV4, PK_IPV6 = range(10)


def read_pcap(path):
    with open(path, "rb") as f:
        raw = f.read()
    if len(raw) < 24:
        return None
    m = struct.unpack_from("<I", raw)[0]
    if m in (0xA1B2C3D4, 0xA1B23C4D):
        e = "<"
    else:
        m = struct.unpack_from(">I", raw)[0]
        if m not in (0xA1B2C3D4, 0xA1B23C4D):
            return None
        e = ">"
    nsec = m == 0xA1B23C4D
    linktype = struct.unpack_from(e + "I", raw, 20)[0] & 0xFFFF
    recs = []
    off = 24
    while off + 16 <= len(raw):
        s, fr, cap, wire = struct.unpack_from(e + "IIII", raw, off)
        off += 16
        recs.append((s * 10 ** 9 + (fr if nsec else fr * 1000), wire, raw[off:off + cap]))
        off += cap
    return linktype, recs


class Seeds:
    def __init__(self, out):
        self.out = out
        self.seen = set()
        self.count = {}

    def add(self, kind, data, limit):
        d = os.path.join(self.out, kind)
        os.makedirs(d, exist_ok=True)
        h = hashlib.sha1(data).hexdigest()
        if (kind, h) in self.seen or self.count.get(kind, 0) >= limit:
            return
        self.seen.add((kind, h))
        self.count[kind] = self.count.get(kind, 0) + 1
        with open(os.path.join(d, h[:16]), "wb") as f:
            f.write(data)


def tcp_of(frame):
    """(ip header bytes, tcp header+payload, ip version) of an Ethernet/IPv4 frame, or None."""
    if len(frame) < 34 or frame[12:14] != b"\x08\x00":
        return None
    ip = frame[14:]
    ihl = (ip[0] & 15) * 4
    tot = struct.unpack_from("!H", ip, 2)[0] or len(ip)
    if ip[9] != 6 or len(ip) < ihl + 20:
        return None
    return ip[:ihl], ip[ihl:tot]


def to_ipv6(iphdr, l4):
    src = b"\xfd\x00" + b"\0" * 10 + iphdr[12:16]
    dst = b"\xfd\x00" + b"\0" * 10 + iphdr[16:20]
    hbh = bytes([60, 0, 1, 4, 0, 0, 0, 0])  # next: destination options; PadN
    dsto = bytes([6, 0, 1, 4, 0, 0, 0, 0])  # next: TCP
    body = hbh + dsto + l4
    return struct.pack("!IHBB16s16s", 0x60000000, len(body), 0, 64, src, dst) + body


def packet_seeds(S, frames):
    for fr in frames:
        S.add("packet", bytes([PK_EN10MB]) + fr, 4000)
        t = tcp_of(fr)
        if not t:
            continue
        iphdr, l4 = t
        ip = fr[14:]
        S.add("packet", bytes([PK_EN10MB]) + fr[:12] + b"\x81\x00\x00\x07\x88\xa8\x00\x08" + fr[12:], 4000)
        S.add("packet", bytes([PK_SLL]) + b"\0\0\0\x01\0\x06" + fr[6:12] + b"\0\0\x08\x00" + ip, 4000)
        S.add("packet", bytes([PK_SLL2]) + b"\x08\x00\0\0\0\0\0\x02\0\x01\x04\x06" + fr[6:12] + b"\0\0" + ip, 4000)
        S.add("packet", bytes([PK_NULL]) + struct.pack("<I", 2) + ip, 4000)
        S.add("packet", bytes([PK_LOOP]) + struct.pack(">I", 2) + ip, 4000)
        S.add("packet", bytes([PK_RAW]) + ip, 4000)
        S.add("packet", bytes([PK_IPV4]) + ip, 4000)
        v6 = to_ipv6(iphdr, l4)
        S.add("packet", bytes([PK_EN10MB]) + fr[:12] + b"\x86\xdd" + v6, 4000)
        S.add("packet", bytes([PK_IPV6]) + v6, 4000)
        S.add("packet", bytes([PK_LRAW]) + v6, 4000)
        S.add("packet", bytes([PK_NULL]) + struct.pack("<I", 28) + v6, 4000)
        # cut by a snapshot length: high nibble makes the wire length larger
        S.add("packet", bytes([0x30 | PK_EN10MB]) + fr[:60], 4000)


def segments(recs):
    """Per connection, the (ts, src, dst, sport, dport, seq, ack, flags, payload) of each segment."""
    out = []
    for ts, wire, fr in recs:
        t = tcp_of(fr)
        if not t:
            continue
        iphdr, l4 = t
        if len(l4) < 20:
            continue
        sport, dport, seq, ack = struct.unpack_from("!HHII", l4)
        doff = (l4[12] >> 4) * 4
        out.append((ts, iphdr[12:16], iphdr[16:20], sport, dport, seq, ack, l4[13], l4[doff:]))
    return out


def giop_seeds(S, segs):
    shapes = set()
    for seg in segs:
        pl = seg[8]
        off = 0
        while off + 12 <= len(pl) and pl[off:off + 4] == b"GIOP":
            le = pl[off + 6] & 1
            size = struct.unpack_from("<I" if le else ">I", pl, off + 8)[0]
            msg = pl[off:off + 12 + size]
            shape = (msg[4:8], len(msg) // 64, msg[12:40] if msg[7] in (0, 3) else b"")
            if shape not in shapes:
                shapes.add(shape)
                S.add("giop", msg, 300)
            off += 12 + size


def engine_seeds(S, segs, name):
    """fuzz_engine layout: config byte, then 8-byte segment headers + payloads."""
    conns = {}
    order = []
    for seg in segs:
        ts, src, dst, sp, dp, seq, ack, flags, pl = seg
        key = tuple(sorted([(src, sp), (dst, dp)]))
        if key not in conns:
            if len(conns) == 3:  # connections 0..2 (3 is the IPv6 one: used below)
                continue
            cli = (src, sp) if (flags & 0x12) != 0x12 else (dst, dp)
            conns[key] = {"idx": len(conns), "cli": cli, "next": [None, None]}
        order.append((conns[key], seg))
    base = {0: (1000, 5000), 1: (0xFFFFFF00, 0xFFFFFFF0), 2: (2000, 10000), 3: (4000, 20000)}

    def encode(items, cfg, remap=None, limit=16000):
        out = bytearray([cfg])
        nxt = {}
        last_ts = None
        for c, seg in items:
            ts, src, dst, sp, dp, seq, ack, flags, pl = seg
            idx = c["idx"] if remap is None else remap
            d = 0 if (src, sp) == c["cli"] else 1
            st = nxt.setdefault(idx, [list(base[idx]), [None, None]])
            # first sight of a direction: anchor its real ISN to the harness's
            if st[1][d] is None:
                st[1][d] = seq - st[0][d]
            if st[1][1 - d] is None and flags & 0x10:
                st[1][1 - d] = ack - st[0][1 - d]
            rel = (seq - st[1][d]) & 0xFFFFFFFF
            dseq = ((rel - st[0][d] + 0x8000) & 0xFFFFFFFF) - 0x8000
            dseq = max(-32768, min(32767, dseq))
            other = st[0][1 - d]
            dack = 0
            if st[1][1 - d] is not None:
                dack = ((((ack - st[1][1 - d]) & 0xFFFFFFFF) - other + 0x80) & 0xFFFFFFFF) - 0x80
                dack = max(-128, min(127, dack))
            n = min(len(pl), 1023)
            dts = 0 if last_ts is None else max(0, min(255, (ts - last_ts) // 1000))
            last_ts = ts
            h = idx | (d << 2) | ((n >> 8) << 6)
            rec = struct.pack("<BBhBBbB", h, flags, dseq, n & 0xFF, dts, dack, 0) + pl[:n]
            if len(out) + len(rec) > limit:
                break
            out += rec
            st[0][d] = ((st[0][d] + dseq) + n + (1 if flags & 2 else 0) + (1 if flags & 1 else 0)) & 0xFFFFFFFF
        return bytes(out)

    # the whole start of the capture, several configurations
    for cfg in (0x00, 0x01, 0x02, 0x96, 0xC0, 0x2A):
        S.add("engine", encode(order, cfg), 200)
    # short pieces: each connection alone, from its start
    for c in conns.values():
        mine = [x for x in order if x[0] is c]
        S.add("engine", encode(mine[:40], 0x00, limit=4000), 200)
        S.add("engine", encode(mine[:40], 0x00, remap=3, limit=4000), 200)  # as IPv6
        S.add("engine", encode(mine[:40], 0x00, remap=1, limit=4000), 200)  # wrapping seq
        S.add("engine", encode(mine[3:40], 0x00, limit=4000), 200)  # joined mid-connection


def pcap_bytes(recs, linktype=1, nsec=True):
    out = bytearray(struct.pack("<IHHiIII", 0xA1B23C4D if nsec else 0xA1B2C3D4, 2, 4, 0, 0, 262144, linktype))
    for ts, wire, data in recs:
        frac = ts % 10 ** 9 if nsec else (ts % 10 ** 9) // 1000
        out += struct.pack("<IIII", ts // 10 ** 9, frac, len(data), wire) + data
    return bytes(out)


def pcapng_bytes(recs, linktype=1):
    def block(t, body):
        body += b"\0" * (-len(body) % 4)
        return struct.pack("<II", t, len(body) + 12) + body + struct.pack("<I", len(body) + 12)

    out = block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1))
    out += block(1, struct.pack("<HHI", linktype, 0, 262144) + struct.pack("<HHB3x", 9, 1, 9) + b"\0\0\0\0")
    for ts, wire, data in recs:
        out += block(6, struct.pack("<IIIII", 0, ts >> 32, ts & 0xFFFFFFFF, len(data), wire) + data)
    return out


def pcap_seeds(S, recs):
    for n in (12, 40):
        part = recs[:n]
        S.add("pcap", pcap_bytes(part), 100)
        S.add("pcap", pcapng_bytes(part), 100)
    S.add("pcap", pcap_bytes(recs[:20], nsec=False), 100)
    sll = []
    for ts, wire, fr in recs[:20]:
        sll.append((ts, wire + 2, b"\0\0\0\x01\0\x06" + fr[6:12] + b"\0\0" + fr[12:14] + fr[14:]))
    S.add("pcap", pcap_bytes(sll, linktype=113), 100)
    # cut by a snapshot length of 96
    S.add("pcap", pcap_bytes([(ts, wire, fr[:96]) for ts, wire, fr in recs[:30]]), 100)


DICT = [
    b"GIOP", b"GIOP\x01\x02\x01\x00", b"GIOP\x01\x02\x01\x01", b"GIOP\x01\x02\x03\x07", b"GIOP\x01\x00\x00\x00",
    b"GIOP\x01\x01\x01\x07", b"GIOP\x01\x02\x01\x03", b"GIOP\x01\x02\x01\x04", b"GIOP\x01\x02\x01\x02",
    b"\x01\x00\x00\x00", b"\x00\x00\x00\x01", b"\xff\xff\xff\xff", b"\x00\x00\x00\x00",
    b"\x03\x00\x00\x00", b"\x00\x00", b"\x01\x00", b"\x02\x00",
    b"IDL:omg.org/CORBA/OBJECT_NOT_EXIST:1.0\x00", b"echoString\x00", b"\x08\x00", b"\x86\xdd", b"\x81\x00",
    b"\x0b\x09", b"\x0a\xb9",  # port 2809
]


HASH = b"$2b$10$GQs5zQSqtInA.cW2R0yBhOgt8arBGsRkA.bP3ZIrUW1OV8DhRFttS"


def web_seeds(S):
    """fuzz_web: web configuration files (first byte even) and request heads (odd)"""
    files = [
        b"tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n",
        b"---\n# c\ntls_server_config:\n  cert_file: \"/a b/c.crt\"\n  key_file: 'k''s.key'  # k\n"
        b"  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\n  min_version: TLS12\n"
        b"  max_version: TLS13\r\nbasic_auth_users:\n    prometheus: " + HASH + b"\n    'u 2': \"" + HASH + b"\"\n",
        b"basic_auth_users:\n  u: " + HASH,
        b"tls_server_config:\n  cipher_suites:\n    - TLS_AES_128_GCM_SHA256\nhttp_server_config:\n  http2: true\n",
    ]
    heads = [
        b"GET /metrics HTTP/1.1\r\nHost: a\r\nAuthorization: Basic cHJvbTpzM2NyZXQ=\r\n\r\n",
        b"HEAD /?x HTTP/1.0\n\n",
        b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n",
    ]
    for f in files:
        S.add("web", b"\x00" + f, 1 << 20)
    for h in heads:
        S.add("web", b"\x01" + h, 1 << 20)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: make_seeds.py OUTDIR CAPTURE.pcap...\n")
        return 2
    out = argv[1]
    S = Seeds(out)
    for kind in ("packet", "giop", "engine", "pcap", "web"):
        os.makedirs(os.path.join(out, kind), exist_ok=True)
    web_seeds(S)
    for path in sorted(argv[2:]):
        got = read_pcap(path)
        if not got or got[0] != 1:
            sys.stderr.write("make_seeds.py: %s: not a classic Ethernet pcap, skipped\n" % path)
            continue
        _, recs = got
        frames = [fr for _, _, fr in recs]
        # a sample of frames: the first 24 and every 401st
        packet_seeds(S, frames[:24] + frames[24::401])
        segs = segments(recs)
        giop_seeds(S, segs)
        engine_seeds(S, segs, os.path.basename(path))
        pcap_seeds(S, recs)
    with open(os.path.join(out, "giop.dict"), "w") as f:
        for i, tok in enumerate(DICT):
            f.write('t%d="%s"\n' % (i, "".join("\\x%02x" % b for b in tok)))
    for kind in sorted(S.count):
        print("make_seeds.py: %-7s %4d seeds" % (kind, S.count[kind]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
