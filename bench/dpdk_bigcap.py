#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""dpdk_bigcap.py: a large capture for bench/dpdk_replay.sh, made from a real one.

  dpdk_bigcap.py SRC.pcap DST.pcap COPIES

SRC is a classic little-endian pcap (Ethernet, IPv4, TCP), e.g. the omniORB capture
tests/data/corpus/v01_giop12_echo2000.pcap (4011 packets, 2001 calls). DST holds COPIES
copies of it one after the other, each copy's connections moved to client ports of their own
(the port of the side that is not the server's, rewritten in both directions) and its time
stamps shifted to start 1 ms after the previous copy ended, so that every call of every
copy is a distinct call for giopscope (100 copies: 401 100 packets, 200 100 calls, 65 MB).
Checksums are left as they were (giopscope does not verify them). Deterministic."""
import struct
import sys


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    src, dst, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
    d = open(src, "rb").read()
    magic = struct.unpack("<I", d[:4])[0]
    if magic not in (0xa1b2c3d4, 0xa1b23c4d) or struct.unpack("<I", d[20:24])[0] != 1:
        sys.exit("dpdk_bigcap: %s: want a little-endian classic pcap of Ethernet" % src)
    per_sec = 10 ** 9 if magic == 0xa1b23c4d else 10 ** 6
    recs, o = [], 24
    while o + 16 <= len(d):
        ts, tf, cl, ol = struct.unpack("<IIII", d[o:o + 16])
        recs.append((ts * per_sec + tf, ol, bytearray(d[o + 16:o + 16 + cl])))
        o += 16 + cl
    # the server's port: the destination port of the first SYN (or of the first frame)
    server = None
    for _, _, f in recs:
        if len(f) >= 34 + 14 and f[12:14] == b"\x08\x00" and f[23] == 6:
            ihl = (f[14] & 15) * 4
            flags = f[14 + ihl + 13]
            if flags & 0x02 and not flags & 0x10:
                server = struct.unpack(">H", f[14 + ihl + 2:14 + ihl + 4])[0]
                break
    if server is None:
        sys.exit("dpdk_bigcap: no SYN in %s" % src)
    span = recs[-1][0] - recs[0][0] + per_sec // 1000
    with open(dst, "wb") as out:
        out.write(d[:24])
        for k in range(copies):
            shift = k * span
            for t, ol, f in recs:
                g = bytearray(f)
                if len(g) >= 14 + 20 and g[12:14] == b"\x08\x00" and g[23] == 6:
                    ihl = (g[14] & 15) * 4
                    tcp = 14 + ihl
                    if len(g) >= tcp + 4:
                        sp, dp = struct.unpack(">HH", g[tcp:tcp + 4])
                        # move the client's port, keep the server's
                        if sp == server:
                            dp = 1024 + (dp - 1024 + k * 211) % 60000
                        else:
                            sp = 1024 + (sp - 1024 + k * 211) % 60000
                        g[tcp:tcp + 4] = struct.pack(">HH", sp, dp)
                t2 = t + shift
                out.write(struct.pack("<IIII", t2 // per_sec, t2 % per_sec, len(g), ol) + g)


if __name__ == "__main__":
    main()
