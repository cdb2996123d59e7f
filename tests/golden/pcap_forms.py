#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Rewrite a classic pcap (either byte order, us or ns) into another form of the
same packets, to check that giopscope's own reader of pcap files
(probe/tap_pcap.c) reads every form as libpcap does:

  pcap_forms.py FORM SRC DST

FORM:
  le-us, le-ns, be-us, be-ns   byte order and time stamp resolution (ns -> us
                               rounds down: the times then differ, the same way
                               for both readers)
  snap-low                     the header's snapshot length below the largest
                               record's capture length: from the first such record
                               on, libpcap reads the file (it cuts those records)
  cut-data                     the file ends inside the last record's data
  cut-header                   the file ends inside a record header
  zero-snap                    snapshot length 0 in the header (libpcap: the
                               link type's maximum)
  late-1ns                     le-ns, the second half of the packets 1 ns later
                               (the comparison's own check: it must see that)
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
        sys.exit("pcap_forms: %s: not a classic pcap" % path)
    nano = magic == 0xa1b23c4d
    vmaj, vmin, zone, sigfigs, snap, link = struct.unpack(order + "HHiIII", d[4:24])
    recs, o = [], 24
    while o + 16 <= len(d):
        s, f, cl, ol = struct.unpack(order + "IIII", d[o:o + 16])
        ns = f if nano else f * 1000
        recs.append((s, ns, ol, d[o + 16:o + 16 + cl]))
        o += 16 + cl
    return snap, link, recs


def write(path, order, nano, snap, link, recs):
    out = [struct.pack(order + "IHHiIII", 0xa1b23c4d if nano else 0xa1b2c3d4, 2, 4, 0, 0, snap, link)]
    for s, ns, ol, data in recs:
        out.append(struct.pack(order + "IIII", s, ns if nano else ns // 1000, len(data), ol))
        out.append(data)
    return b"".join(out)


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    form, src, dst = sys.argv[1:]
    snap, link, recs = read(src)
    if form in ("le-us", "le-ns", "be-us", "be-ns"):
        b = write(dst, "<" if form[:2] == "le" else ">", form[3:] == "ns", snap, link, recs)
    elif form == "snap-low":
        big = max(len(r[3]) for r in recs)
        b = write(dst, "<", True, max(big - 8, 64), link, recs)
    elif form == "late-1ns":
        h = len(recs) // 2
        recs = recs[:h] + [(s, ns + 1, ol, d) for s, ns, ol, d in recs[h:]]
        b = write(dst, "<", True, snap, link, recs)
    elif form == "zero-snap":
        b = write(dst, ">", False, 0, link, recs)
    elif form == "cut-data":
        b = write(dst, "<", True, snap, link, recs)
        b = b[:len(b) - max(1, len(recs[-1][3]) // 2)]
    elif form == "cut-header":
        b = write(dst, ">", True, snap, link, recs)
        b = b[:len(b) - len(recs[-1][3]) - 7]
    else:
        sys.exit("pcap_forms: unknown form %s" % form)
    open(dst, "wb").write(b)


main()
