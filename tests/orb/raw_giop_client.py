#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A bare GIOP 1.2 client that writes each request in two send() calls, the
12-byte GIOP header and then the body, on a socket WITHOUT TCP_NODELAY — the
way some ORBs and hand-written IIOP stacks do it.  With Nagle's algorithm on,
the body waits in the kernel until the server acknowledges the header, and a
receiver that delays its ACK (40 ms on Linux) stalls every call: the classic
IIOP Nagle/delayed-ACK stall that giopscope --tail must recognise.

  raw_giop_client.py IORFILE N [SIZE]   calls echoString(SIZE chars) N times

Prints 'raw: calls=N stalls>=30ms=M' and exits 0 when every reply was NO_EXCEPTION."""
import socket
import struct
import sys
import time


def ior_profile(path):
    text = open(path).read().strip()
    if not text.startswith("IOR:"):
        sys.exit("raw_giop_client: %s is not an IOR" % path)
    b = bytes.fromhex(text[4:])
    le = b[0] == 1
    end = "<" if le else ">"
    o = 4

    def align(n):
        nonlocal o
        o = (o + n - 1) & ~(n - 1)

    def ulong(buf=None):
        nonlocal o
        align(4)
        v = struct.unpack_from(end + "I", b, o)[0]
        o += 4
        return v
    n = ulong()
    o += n                                  # type id
    for _ in range(ulong()):
        tag = ulong()
        ln = ulong()
        body = b[o:o + ln]
        o += ln
        if tag != 0:
            continue
        # IIOP ProfileBody, an encapsulation with its own byte order
        e = "<" if body[0] == 1 else ">"
        p = 1 + 2                           # byte order, version
        p = (p + 3) & ~3
        hl = struct.unpack_from(e + "I", body, p)[0]
        host = body[p + 4:p + 4 + hl - 1].decode()
        p = (p + 4 + hl + 1) & ~1
        port = struct.unpack_from(e + "H", body, p)[0]
        p = (p + 2 + 3) & ~3
        kl = struct.unpack_from(e + "I", body, p)[0]
        key = body[p + 4:p + 4 + kl]
        return host, port, key
    sys.exit("raw_giop_client: no IIOP profile in %s" % path)


def request(rid, key, op, arg):
    body = bytearray()

    def pad(n):
        while (len(body) + 12) % n:
            body.append(0)
    body += struct.pack("<I", rid)
    body += bytes([3, 0, 0, 0])             # response_flags: SYNC_WITH_TARGET
    body += struct.pack("<H", 0)            # TargetAddress: KeyAddr
    pad(4)
    body += struct.pack("<I", len(key)) + key
    pad(4)
    body += struct.pack("<I", len(op) + 1) + op + b"\0"
    pad(4)
    body += struct.pack("<I", 0)            # no service contexts
    pad(8)
    body += struct.pack("<I", len(arg) + 1) + arg + b"\0"
    hdr = b"GIOP" + bytes([1, 2, 1, 0]) + struct.pack("<I", len(body))
    return hdr, bytes(body)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            sys.exit("raw_giop_client: connection closed")
        buf += chunk
    return buf


def main():
    host, port, key = ior_profile(sys.argv[1])
    n = int(sys.argv[2])
    size = int(sys.argv[3]) if len(sys.argv) > 3 else 64
    s = socket.create_connection((host, port), timeout=10)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 0)
    stalls = 0
    bad = 0
    for i in range(n):
        hdr, body = request(2 * i + 1, key, b"echoString", b"x" * size)
        t0 = time.monotonic()
        s.send(hdr)
        s.send(body)
        h = recv_exact(s, 12)
        le = h[6] & 1
        ln = struct.unpack(("<" if le else ">") + "I", h[8:12])[0]
        rep = recv_exact(s, ln)
        status = struct.unpack_from(("<" if le else ">") + "I", rep, 4)[0]
        if h[7] != 1 or status != 0:
            bad += 1
        if time.monotonic() - t0 >= 0.030:
            stalls += 1
    s.close()
    print("raw: calls=%d stalls>=30ms=%d bad=%d" % (n, stalls, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
