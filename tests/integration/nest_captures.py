#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""Captures taken at a middle tier (client -> relay -> back end) with known nesting,
and the check of giopscope's parent columns against the plan that made them.

  nest_captures.py write DIR     DIR/{eth.pcap,sll.pcap,sll2.pcap,epb.pcapng,truth.csv}
  nest_captures.py check TRUTH ROWS.csv MODE
      MODE host: the relay's two addresses are known to be one host (SLL/SLL2
      packet type, pcapng EPB flags, or --host-addrs); MODE addr: one address,
      one host (a plain Ethernet capture without --host-addrs)

The relay has an address on the clients' network (10.1.0.10, port 2809) and one on
the back end's (10.2.0.10); it forwards, calls back over a connection of its own and
over the client's connection (bidirectional GIOP), and serves two calls at once
once (the back-end call made then is undecided: no parent).  truth.csv is the plan:
each call, the parent it was made for (empty: top level or undecided), whether
naming it needs the relay's two addresses known as one host, and the downstream
time the plan gives the parent.  Nothing in it comes from giopscope."""
import csv
import struct
import sys

C1, C2 = "10.1.0.1", "10.1.0.2"
R1, R2 = "10.1.0.10", "10.2.0.10"
B = "10.2.0.20"
RELAY = {R1, R2}
T0 = 1700000000 * 10**9
MS = 10**6


def ip4(a):
    return bytes(int(x) for x in a.split("."))


def giop(msg_type, body):
    return b"GIOP" + bytes([1, 2, 0, msg_type]) + struct.pack(">I", len(body)) + body


def request(rid, op):
    key = b"relay-key"
    opb = op.encode() + b"\0"
    body = struct.pack(">IB3x", rid, 3) + struct.pack(">H2x", 0) + struct.pack(">I", len(key)) + key
    body += b"\0" * (-len(body) % 4) + struct.pack(">I", len(opb)) + opb
    body += b"\0" * (-len(body) % 4) + struct.pack(">I", 0)
    return giop(0, body)


def reply(rid):
    return giop(1, struct.pack(">III", rid, 0, 0))


class Plan:
    def __init__(self):
        self.events = []   # (t, conn, dir, payload, flags)
        self.conns = {}
        self.truth = []

    def conn(self, cl, cport, sv, sport, t):
        key = (cl, cport, sv, sport)
        if key not in self.conns:
            self.conns[key] = True
            self.events.append((t - MS // 10, key, 0, b"", 0x02))        # SYN
            self.events.append((t - MS // 20, key, 1, b"", 0x12))        # SYN-ACK
            self.events.append((t - MS // 40, key, 0, b"", 0x10))        # ACK
        return key

    def call(self, cl, cport, sv, sport, rid, op, q, r, parent=None, needs_host=False, rev=False):
        """A call from cl:cport to sv:sport: request at q ms, reply at r ms.  rev: the
        request goes from the server end of an existing connection (bidirectional)."""
        if rev:
            key = (sv, sport, cl, cport)
            d = 1
        else:
            key = self.conn(cl, cport, sv, sport, T0 + q * MS)
            d = 0
        self.events.append((T0 + q * MS, key, d, request(rid, op), 0x18))
        self.events.append((T0 + r * MS, key, 1 - d, reply(rid), 0x18))
        row = {"client": "%s:%d" % (cl, cport), "server": "%s:%d" % (sv, sport), "request_id": str(rid),
               "parent_client": "", "parent_server": "", "parent_request_id": "",
               "needs_host": "1" if needs_host else "0", "downstream_us": ""}
        if parent:
            row["parent_client"], row["parent_server"], row["parent_request_id"] = parent
        self.truth.append(row)
        return ("%s:%d" % (cl, cport), "%s:%d" % (sv, sport), str(rid))

    def packets(self):
        """(t, src, sport, dst, dport, seq, ack, flags, payload) in time order."""
        nxt = {}
        out = []
        for t, key, d, payload, flags in sorted(self.events, key=lambda e: e[0]):
            cl, cport, sv, sport = key
            src, sp, dst, dp = (cl, cport, sv, sport) if d == 0 else (sv, sport, cl, cport)
            me, peer = (key, d), (key, 1 - d)
            nxt.setdefault(me, 1000 if d == 0 else 5000)
            nxt.setdefault(peer, 1000 if d == 1 else 5000)
            seq = nxt[me]
            out.append((t, src, sp, dst, dp, seq, nxt[peer], flags, payload))
            nxt[me] = seq + len(payload) + (1 if flags & 0x02 else 0)
        return out


def build():
    p = Plan()
    be = 50001  # the relay's connection to the back end
    # 1: a forward and its back-end call (from the relay's other address)
    f1 = p.call(C1, 40001, R1, 2809, 1, "forward", 0, 100)
    p.call(R2, be, B, 2810, 1, "work", 10, 60, parent=f1, needs_host=True)
    # 2: two back-end calls in one forward (downstream 40 + 35 ms)
    f2 = p.call(C2, 40002, R1, 2809, 1, "forward", 200, 300)
    p.call(R2, be, B, 2810, 2, "work", 210, 250, parent=f2, needs_host=True)
    p.call(R2, be, B, 2810, 3, "work", 255, 290, parent=f2, needs_host=True)
    p.truth[-3]["downstream_us"] = "75000.000"
    # 3: the relay serves two calls at once, both enclose the back-end call: undecided
    p.call(C1, 40001, R1, 2809, 2, "forward", 400, 500)
    p.call(C2, 40002, R1, 2809, 2, "forward", 405, 505)
    p.call(R2, be, B, 2810, 4, "work", 420, 480)
    # 4: a callback over a connection of its own (the relay's first address: no host set needed)
    cb = p.call(C1, 40001, R1, 2809, 3, "callMeBack", 600, 700)
    p.call(R1, 50002, C1, 3000, 1, "ping", 620, 650, parent=cb)
    p.truth[-2]["downstream_us"] = "30000.000"
    # 5: a callback over the client's own connection (bidirectional GIOP)
    cb2 = p.call(C1, 40001, R1, 2809, 4, "callMeBack", 800, 900)
    p.call(R1, 2809, C1, 40001, 101, "ping", 820, 850, parent=cb2, rev=True)
    # 6: a back-end call outside any served call: top level
    p.call(R2, be, B, 2810, 5, "work", 950, 960)
    # 7: a back-end call still open when the relay's reply began: not nested
    p.call(C2, 40002, R1, 2809, 3, "forward", 1000, 1100)
    p.call(R2, be, B, 2810, 6, "work", 1010, 1120)
    p.truth[-2]["downstream_us"] = "0.000"
    return p


def frame_ip(src, sp, dst, dp, seq, ack, flags, payload):
    tcp = struct.pack(">HHIIBBHHH", sp, dp, seq, ack, 5 << 4, flags, 65535, 0, 0) + payload
    iph = struct.pack(">BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp), 1, 0x4000, 64, 6, 0, ip4(src), ip4(dst))
    return iph + tcp


def eth(ipb):
    return b"\x02\0\0\0\0\x02" + b"\x02\0\0\0\0\x01" + b"\x08\x00" + ipb


def sll(ipb, out):
    return struct.pack(">HHH8sH", 4 if out else 0, 1, 6, b"\x02\0\0\0\0\x01\0\0", 0x0800) + ipb


def sll2(ipb, out):
    return struct.pack(">HHIHBB8s", 0x0800, 0, 2, 1, 4 if out else 0, 6, b"\x02\0\0\0\0\x01\0\0") + ipb


def write_pcap(path, linktype, frames):
    with open(path, "wb") as f:
        f.write(struct.pack("<IHHiIII", 0xa1b23c4d, 2, 4, 0, 0, 262144, linktype))
        for t, b in frames:
            f.write(struct.pack("<IIII", t // 10**9, t % 10**9, len(b), len(b)) + b)


def block(btype, body):
    body += b"\0" * (-len(body) % 4)
    n = 12 + len(body)
    return struct.pack("<II", btype, n) + body + struct.pack("<I", n)


def write_pcapng(path, frames):
    with open(path, "wb") as f:
        f.write(block(0x0A0D0D0A, struct.pack("<IHHq", 0x1A2B3C4D, 1, 0, -1)))
        # IDB: Ethernet, if_tsresol 9 (ns)
        f.write(block(1, struct.pack("<HHI", 1, 0, 262144) + struct.pack("<HHB3x", 9, 1, 9) + b"\0\0\0\0"))
        for t, b, out in frames:
            pad = b + b"\0" * (-len(b) % 4)
            # epb_flags: direction 2 outbound, 1 inbound
            opts = struct.pack("<HHI", 2, 4, 2 if out else 1) + b"\0\0\0\0"
            f.write(block(6, struct.pack("<IIIII", 0, t >> 32, t & 0xffffffff, len(b), len(b)) + pad + opts))


def write(d):
    p = build()
    pk = p.packets()
    ips = [(t, frame_ip(s, sp, ds, dp, seq, ack, fl, pl), s in RELAY) for t, s, sp, ds, dp, seq, ack, fl, pl in pk]
    write_pcap(d + "/eth.pcap", 1, [(t, eth(b)) for t, b, _ in ips])
    write_pcap(d + "/sll.pcap", 113, [(t, sll(b, o)) for t, b, o in ips])
    write_pcap(d + "/sll2.pcap", 276, [(t, sll2(b, o)) for t, b, o in ips])
    write_pcapng(d + "/epb.pcapng", [(t, eth(b), o) for t, b, o in ips])
    with open(d + "/truth.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(p.truth[0].keys()))
        w.writeheader()
        w.writerows(p.truth)


def check(truth_path, rows_path, mode):
    truth = list(csv.DictReader(open(truth_path)))
    rows = {(r["client"], r["server"], r["request_id"]): r for r in csv.DictReader(open(rows_path))}
    bad = 0
    for t in truth:
        k = (t["client"], t["server"], t["request_id"])
        r = rows.get(k)
        if r is None:
            print("missing call %s" % (k,))
            bad += 1
            continue
        want = (t["parent_client"], t["parent_server"], t["parent_request_id"])
        if mode == "addr" and t["needs_host"] == "1":
            want = ("", "", "")
        got = (r["parent_client"], r["parent_server"], r["parent_request_id"])
        basis = r["parent_basis"]
        if got != want or basis != ("time" if want[0] else ""):
            print("call %s: parent %s (%s), want %s" % (",".join(k), ",".join(got), basis, ",".join(want)))
            bad += 1
        if t["downstream_us"] and (mode == "host" or t["downstream_us"] != "75000.000") \
                and r["downstream_us"] != t["downstream_us"]:
            print("call %s: downstream_us %s, want %s" % (",".join(k), r["downstream_us"], t["downstream_us"]))
            bad += 1
    if len(rows) != len(truth):
        print("%d rows, the plan has %d calls" % (len(rows), len(truth)))
        bad += 1
    named = sum(1 for t in truth if t["parent_client"] and (mode == "host" or t["needs_host"] == "0"))
    print("%s: %d calls, %d parents named as planned, %d wrong" % (mode, len(truth), named, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "write":
        write(sys.argv[2])
    elif len(sys.argv) == 5 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4]))
    else:
        sys.exit(__doc__)
