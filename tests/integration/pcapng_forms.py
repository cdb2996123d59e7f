#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Rewrite a classic pcap into a pcapng form of the same packets, to check that
read --threads' own walker of capture files (probe/pcap_walk.c) reads every
form as libpcap does (read_threads.sh compares --threads 1, libpcap's reading,
with --threads 2 and 3):

  pcapng_forms.py FORM SRC DST

FORM:
  le-ns, be-ns   EPBs, if_tsresol 9, either byte order
  be-us          EPBs, no if_tsresol (microseconds: the times rounded down)
  le-100ns       if_tsresol 7 (100 ns: the times rounded down)
  le-ms          if_tsresol 3 (milliseconds: many calls start in the same millisecond, and
                 the merge of read --threads orders such ties by client and request id
                 where one engine writes a settled call before a tie that starts later)
  spb            Simple Packet Blocks (no time stamps; the IDB's snapshot length 0)
  skip           name resolution, interface statistics and custom blocks between packets
  two-if         a second interface halfway, the rest of the packets on it (the walker
                 stops at its IDB, libpcap reads on from there)
  tsoffset       an if_tsoffset option (libpcap reads the whole file)
  cut            the file ends inside the last block (libpcap's error)
"""
import struct
import sys


def read(path):
    d = open(path, "rb").read()
    for order in ("<", ">"):
        magic = struct.unpack(order + "I", d[:4])[0]
        if magic in (0xa1b2c3d4, 0xa1b23c4d):
            break
    else:
        sys.exit("pcapng_forms: %s: not a classic pcap" % path)
    nano = magic == 0xa1b23c4d
    snap, link = struct.unpack(order + "II", d[16:24])
    recs, o = [], 24
    while o + 16 <= len(d):
        s, f, cl, ol = struct.unpack(order + "IIII", d[o:o + 16])
        recs.append((s * 10**9 + (f if nano else f * 1000), ol, d[o + 16:o + 16 + cl]))
        o += 16 + cl
    return snap, link, recs


def pad(b):
    return b + b"\0" * (-len(b) % 4)


def block(e, btype, body):
    n = 12 + len(body)
    return struct.pack(e + "II", btype, n) + body + struct.pack(e + "I", n)


def opt(e, code, val):
    return struct.pack(e + "HH", code, len(val)) + pad(val)


def idb(e, link, snap, opts=b""):
    return block(e, 1, struct.pack(e + "HHI", link, 0, snap) + opts + (opt(e, 0, b"") if opts else b""))


def epb(e, ifid, t, ol, data):
    return block(e, 6, struct.pack(e + "IIIII", ifid, t >> 32, t & 0xffffffff, len(data), ol) + pad(data))


def main():
    form, src, dst = sys.argv[1:4]
    snap, link, recs = read(src)
    e = ">" if form.startswith("be") else "<"
    out = [block(e, 0x0A0D0D0A, struct.pack(e + "IHHq", 0x1A2B3C4D, 1, 0, -1))]
    res = {"le-ns": 9, "be-ns": 9, "le-ms": 3, "le-100ns": 7, "skip": 9, "two-if": 9, "cut": 9, "tsoffset": 9}.get(form)
    opts = opt(e, 9, bytes([res])) if res is not None else b""
    if form == "tsoffset":
        opts += opt(e, 14, struct.pack(e + "q", 0))
    out.append(idb(e, link, 0 if form == "spb" else snap, opts))
    scale = 10 ** (9 - (res if res is not None else 6))
    ifid = 0
    for i, (t, ol, data) in enumerate(recs):
        if form == "spb":
            out.append(block(e, 3, struct.pack(e + "I", ol) + pad(data)))
            continue
        if form == "two-if" and i == len(recs) // 2:
            out.append(idb(e, link, snap, opts))
            ifid = 1
        if form == "skip" and i % 7 == 3:
            out.append(block(e, 4, struct.pack(e + "HH", 0, 0)))         # NRB: end of records
            out.append(block(e, 5, struct.pack(e + "III", 0, 0, 0)))     # ISB
            out.append(block(e, 0x40000BAD, struct.pack(e + "I", 32473)))
        out.append(epb(e, ifid, t // scale, ol, data))
    d = b"".join(out)
    if form == "cut":
        d = d[:-7]
    open(dst, "wb").write(d)


main()
