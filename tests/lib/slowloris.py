#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# tests/lib/slowloris.py -- a hostile client of an HTTP endpoint, for tests/integration/metrics_hostile.sh:
# holds N connections open without ever finishing a request, and opens a new one whenever the
# server closes one (slowloris).
#
#   slowloris.py HOST PORT N SRC PAYLOAD READYFILE
#
# SRC: the local address to connect from (127.0.0.2: another peer than the scraper's 127.0.0.1).
# PAYLOAD: what each connection sends once, as a Python bytes literal body ('GET /met', '' for
# nothing, '\x16\x03\x01' for the start of a TLS record). READYFILE is written once N connections
# are established. Runs until SIGTERM, then prints "opened O closed-by-server C" and exits 0.
import ast
import selectors
import signal
import socket
import sys
import time

host, port, n, src, payload, ready = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4], sys.argv[5], sys.argv[6]
payload = ast.literal_eval("b'" + payload + "'")
sel = selectors.DefaultSelector()
opened = closed = 0
stop = False


def on_term(*_):
    global stop
    stop = True


signal.signal(signal.SIGTERM, on_term)


def open_one():
    global opened
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    s.bind((src, 0))
    s.setblocking(False)
    try:
        s.connect((host, port))
    except BlockingIOError:
        pass
    sel.register(s, selectors.EVENT_WRITE, "connecting")
    opened += 1


for _ in range(n):
    open_one()
established = 0
wrote_ready = False
while not stop:
    for key, _ in sel.select(timeout=0.05):
        s = key.fileobj
        if key.data == "connecting":
            if s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) != 0:
                sel.unregister(s)
                s.close()
                open_one()
                continue
            try:
                if payload:
                    s.send(payload)
            except OSError:
                pass
            sel.modify(s, selectors.EVENT_READ, "held")
            established += 1
            continue
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:  # the server gave up on it: a new one takes its place
            sel.unregister(s)
            s.close()
            closed += 1
            open_one()
    if not wrote_ready and established >= n:
        with open(ready, "w") as f:
            f.write("%d\n" % established)
        wrote_ready = True
print("opened %d closed-by-server %d" % (opened, closed))
