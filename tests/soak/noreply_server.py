#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""A GIOP server that never replies, for tests/soak/soak.sh.

  noreply_server.py HOST PORT IORFILE

Listens on HOST:PORT (SO_REUSEADDR, so that a new one can take the port at once
after the previous one was killed), writes an IOR for IDL:Bench/Echo:1.0 at
HOST:PORT (IIOP 1.2 profile, object key "noreply") into IORFILE atomically once
it listens, then accepts every connection and reads and discards what comes:
every Request stays unanswered until the client gives up or the server dies.
bench_client -i IORFILE -op echoString ... calls it like the omniORB server.
Runs until killed; the soak kills it with SIGKILL and starts a new one."""
import os
import selectors
import socket
import struct
import sys


def cdr_string(buf, s):
    while len(buf) % 4:
        buf.append(0)
    b = s.encode() + b"\0"
    buf += struct.pack("<I", len(b)) + b


def ior(host, port, key):
    prof = bytearray([1, 1, 2])              # little endian; IIOP 1.2
    cdr_string(prof, host)
    while len(prof) % 2:
        prof.append(0)
    prof += struct.pack("<H", port)
    while len(prof) % 4:
        prof.append(0)
    prof += struct.pack("<I", len(key)) + key
    while len(prof) % 4:
        prof.append(0)
    prof += struct.pack("<I", 0)              # no tagged components
    out = bytearray([1, 0, 0, 0])             # little endian
    b = b"IDL:Bench/Echo:1.0\0"
    out += struct.pack("<I", len(b)) + b
    while len(out) % 4:
        out.append(0)
    out += struct.pack("<I", 1)               # one profile
    out += struct.pack("<I", 0)               # TAG_INTERNET_IOP
    out += struct.pack("<I", len(prof)) + prof
    return "IOR:" + out.hex()


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    host, port, iorfile = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    fam = socket.AF_INET6 if ":" in host else socket.AF_INET
    ls = socket.socket(fam, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((host, port))
    ls.listen(128)
    ls.setblocking(False)
    tmp = iorfile + ".tmp"
    with open(tmp, "w") as f:
        f.write(ior(host, port, b"noreply") + "\n")
    os.rename(tmp, iorfile)
    sel = selectors.DefaultSelector()
    sel.register(ls, selectors.EVENT_READ)
    while True:
        for k, _ in sel.select():
            if k.fileobj is ls:
                try:
                    c, _ = ls.accept()
                except OSError:
                    continue
                c.setblocking(False)
                sel.register(c, selectors.EVENT_READ)
                continue
            try:
                data = k.fileobj.recv(65536)
            except OSError:
                data = b""
            if not data:
                sel.unregister(k.fileobj)
                k.fileobj.close()


if __name__ == "__main__":
    main()
