#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tshark_object_keys.py: the object key of every Request and LocateRequest of a capture,
according to Wireshark's GIOP dissector (for summary_oracle.py's --by object check).

usage: tshark_object_keys.py CAPTURE [-o OUT.csv] [--tshark PATH]

Writes client,request_id,kind,object_key_hex, one row per request message.  Uses
`-T fields`, which aggregates a field over a frame: a frame carrying several requests
(or a GIOP 1.2 TargetAddress, whose key tshark 4.0 does not put in giop.objektkey) makes
the script fail rather than guess; the GIOP 1.0/1.1 captures of tests/data have one
message per frame.  Fragments are not supported (the key is in the first fragment; the
shipped captures used for --by object have none).
"""
import argparse
import csv
import os
import subprocess
import sys


def endpoint(addr, port):
    return "[%s]:%s" % (addr, port) if ":" in addr else "%s:%s" % (addr, port)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("capture")
    ap.add_argument("-o", "--output")
    ap.add_argument("--tshark", default=os.environ.get("TSHARK", "tshark"))
    a = ap.parse_args()
    cmd = [a.tshark, "-r", a.capture, "-n",
           "-o", "tcp.desegment_tcp_streams:TRUE", "-o", "giop.desegment_giop_messages:TRUE",
           "-o", "giop.reassemble:FALSE", "-o", "tcp.try_heuristic_first:TRUE",
           "-Y", "giop.type == 0 || giop.type == 3", "-T", "fields", "-E", "separator=\t",
           "-e", "ip.src", "-e", "ipv6.src", "-e", "tcp.srcport", "-e", "giop.type",
           "-e", "giop.request_id", "-e", "giop.objektkey"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit("tshark failed: %s" % p.stderr.strip()[:300])
    rows = []
    for line in p.stdout.splitlines():
        src4, src6, port, typ, rid, key = (line.split("\t") + [""] * 6)[:6]
        if any("," in v for v in (typ, rid, key)) or key == "":
            sys.exit("frame with several requests or no object key field: %r" % line)
        kind = {"0": "Request", "3": "LocateRequest"}[typ]
        rows.append((endpoint(src4 or src6, port), int(rid), kind, key.replace(":", "")))
    out = open(a.output, "w", newline="") if a.output else sys.stdout
    w = csv.writer(out, lineterminator="\n")
    w.writerow(["client", "request_id", "kind", "object_key_hex"])
    w.writerows(rows)
    if a.output:
        out.close()


if __name__ == "__main__":
    main()
