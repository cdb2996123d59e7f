#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Sends the packets of a Linux cooked capture (v1 or v2, pcap) out of an interface as Ethernet
frames, keeping their spacing in time, so that a live capture on the other end of a veth sees
that traffic as it happened (no tcpreplay needed; cooked captures have no MAC header to
replay as is).

usage: replay_sll2.py CAPTURE.pcap IFACE     (root: an AF_PACKET socket)
Prints how many frames it sent; exit 1 on a capture it cannot read."""
import socket
import struct
import sys
import time

DLT_LINUX_SLL, DLT_LINUX_SLL2 = 113, 276


def frames(path):
    with open(path, "rb") as f:
        head = f.read(24)
        magic = struct.unpack("<I", head[:4])[0]
        if magic in (0xA1B2C3D4, 0xA1B23C4D):
            endian = "<"
        elif struct.unpack(">I", head[:4])[0] in (0xA1B2C3D4, 0xA1B23C4D):
            endian = ">"
            magic = struct.unpack(">I", head[:4])[0]
        else:
            raise ValueError("%s: not a pcap file" % path)
        scale = 1e-9 if magic == 0xA1B23C4D else 1e-6
        link = struct.unpack(endian + "I", head[20:24])[0] & 0x0FFFFFFF
        if link not in (DLT_LINUX_SLL, DLT_LINUX_SLL2):
            raise ValueError("%s: link type %d, not a Linux cooked capture" % (path, link))
        while True:
            rec = f.read(16)
            if len(rec) < 16:
                return
            sec, frac, caplen, _ = struct.unpack(endian + "IIII", rec)
            data = f.read(caplen)
            if link == DLT_LINUX_SLL2:
                proto, body = struct.unpack(">H", data[0:2])[0], data[20:]
            else:
                proto, body = struct.unpack(">H", data[14:16])[0], data[16:]
            yield sec + frac * scale, proto, body


def main():
    if len(sys.argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    try:
        pkts = list(frames(sys.argv[1]))
    except (OSError, ValueError) as e:
        print("replay_sll2: %s" % e, file=sys.stderr)
        return 1
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((sys.argv[2], 0))
    src, dst = b"\x02\x00\x00\x00\x00\x01", b"\x02\x00\x00\x00\x00\x02"
    t0, w0 = pkts[0][0] if pkts else 0, time.monotonic()
    for t, proto, body in pkts:
        wait = (t - t0) - (time.monotonic() - w0)
        if wait > 0:
            time.sleep(wait)
        s.send(dst + src + struct.pack(">H", proto) + body)
    print("replay_sll2: %d frames sent on %s" % (len(pkts), sys.argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
