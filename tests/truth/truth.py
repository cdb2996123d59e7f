#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""tests/truth/truth.py -- ground truth for giopscope attach's syscall instants.

Reads what the LD_PRELOAD recorder (tests/truth/recorder.c, libgs_truth.so) logged in the
client and server processes, frames the GIOP messages in each connection's byte stream, and
sets each call of giopscope's pairs CSV (read by column NAME) against it:

  t_client_send  inside [before, after] of the client's send that carried the request's first byte
  t_server_recv  inside the window of the server's recv that returned the request's last byte
  t_server_send  inside the window of the server's send that carried the reply's first byte
  t_client_recv  inside the window of the client's recv that returned the reply's last byte
  server_process_us >= the servant's own exit - entry (bench_server -servant-log)

A request's last byte is that of its last Fragment; byte offsets count from the connection's
first byte, the same in the sender (its sends) and the receiver (its recvs) since both
processes are recorded from their first I/O on the socket. A recv that starts where a message
starts must show that message's header: the offsets of both sides are checked against each
other that way.

    truth.py dump FILE.truth                       the records, one a line
    truth.py check --truth F... --servant SPANS --pairs A.csv@server [--pairs B.csv@client]
                   [--tol-ns N] [--label NAME] [--expect OP=N ...] [--json OUT] [--prove]

check prints the distances (instant - window start, window end - instant) as p50/p99/max per
instant, the ORB's part (server_process_us - servant time) per operation, and every violation;
exit 0 when none, 1 otherwise, 2 on bad input.
"""
import argparse
import csv
import ipaddress
import json
import struct
import sys

HDR = struct.Struct("<8sIIQQQ24s")
REC = struct.Struct("<BBBBiIi48s")
IO = struct.Struct("<qqq24s")
CONN = struct.Struct("<HH16sH16s2sq")
REC_CONN, REC_SEND, REC_RECV, REC_CLOCK = 1, 2, 3, 4
FN = {1: "send", 2: "sendto", 3: "sendmsg", 4: "write", 5: "writev",
      6: "recv", 7: "recvfrom", 8: "recvmsg", 9: "read", 10: "readv"}
MSG = {0: "Request", 1: "Reply", 2: "CancelRequest", 3: "LocateRequest", 4: "LocateReply",
       5: "CloseConnection", 6: "MessageError", 7: "Fragment"}
INSTANTS = ("t_client_send", "t_server_recv", "t_server_send", "t_client_recv")
# the instants a pairs CSV must have where the recorder saw their syscall: FILE@client is an
# attach that followed the client, @server the server, @both both
WANT = {"client": ("t_client_send", "t_client_recv"), "server": ("t_server_recv", "t_server_send"),
        "both": INSTANTS}


class BadInput(Exception):
    pass


def ep_str(family, port, addr):
    if family == 4:
        return "%s:%d" % (ipaddress.IPv4Address(addr[:4]), port)
    return "[%s]:%d" % (ipaddress.IPv6Address(addr), port)


def load(path):
    """-> dict(pid, conns {id: (local, peer)}, io [dict], dropped)"""
    with open(path, "rb") as f:
        head = f.read(HDR.size)
        if len(head) < HDR.size:
            raise BadInput("%s: too short for a truth file" % path)
        magic, rsize, pid, nxt, cap, dropped, _ = HDR.unpack(head)
        if magic != b"GSTRUTH1" or rsize != 64:
            raise BadInput("%s: not a libgs_truth file" % path)
        n = min(nxt, cap)
        data = f.read(n * 64)
    conns, io, clock = {}, [], []
    for i in range(len(data) // 64):
        typ, fn, nhead, flags, tid, conn, fd, rest = REC.unpack_from(data, i * 64)
        if typ == REC_CONN:
            fam, lport, laddr, pport, paddr, _, t = CONN.unpack(rest)
            conns[conn] = (ep_str(fam, lport, laddr), ep_str(fam, pport, paddr), t)
        elif typ in (REC_SEND, REC_RECV):
            t0, t1, ret, h = IO.unpack(rest)
            io.append({"send": typ == REC_SEND, "fn": FN.get(fn, "?"), "peek": bool(flags & 1),
                       "tid": tid, "conn": conn, "fd": fd, "t0": t0, "t1": t1, "ret": ret,
                       "head": h[:nhead], "pid": pid})
        elif typ == REC_CLOCK:
            ma, mb, w, _ = IO.unpack(rest)
            # realtime - monotonic, and how far that estimate can be off (half the bracket)
            clock.append((w - (ma + (mb - ma) // 2), (mb - ma + 1) // 2))
        # type 0: a slot taken but never filled (the process was killed meanwhile)
    return {"path": path, "pid": pid, "conns": conns, "io": io, "dropped": dropped, "taken": nxt,
            "capacity": cap, "clock": clock}


def giop_head(h):
    """(type, flags, size, le, request_id or None, version) of a 12+ byte GIOP header"""
    if len(h) < 12 or h[:4] != b"GIOP":
        return None
    le = h[6] & 1
    size = struct.unpack("<I" if le else ">I", h[8:12])[0]
    rid = None
    ver = (h[4], h[5])
    if ver >= (1, 2) and h[7] in (0, 1, 2, 3, 4, 7) and len(h) >= 16:
        rid = struct.unpack("<I" if le else ">I", h[12:16])[0]
    elif ver < (1, 2) and h[7] in (0, 1) and len(h) >= 20:
        # 1.0/1.1 Request and Reply: the service context list comes first; when empty, the id
        if struct.unpack("<I" if le else ">I", h[12:16])[0] == 0:
            rid = struct.unpack("<I" if le else ">I", h[16:20])[0]
    elif ver < (1, 2) and h[7] in (2, 3, 4) and len(h) >= 16:
        rid = struct.unpack("<I" if le else ">I", h[12:16])[0]
    return {"type": h[7], "flags": h[6], "size": size, "rid": rid, "ver": ver}


class Stream:
    """One direction of one connection: the sender's sends and the receiver's recvs, with
    their byte offsets from the connection's first byte."""

    def __init__(self, src, dst):
        self.src, self.dst = src, dst
        self.sends, self.recvs = [], []
        self.problems = []

    @staticmethod
    def place(ops, what, problems):
        ops.sort(key=lambda r: (r["t0"], r["t1"]))
        off = 0
        out = []
        prev = None
        for r in ops:
            if r["ret"] <= 0 or r["peek"]:
                continue
            # two calls of one kind whose windows overlap: which bytes came first is unknown
            if prev is not None and r["t0"] < prev["t1"]:
                problems.append("%s windows overlap (tids %d and %d): byte order unknown"
                                % (what, prev["tid"], r["tid"]))
            r["off"] = off
            r["end"] = off + r["ret"]
            off += r["ret"]
            out.append(r)
            prev = r
        return out

    def finish(self):
        self.sends = self.place(self.sends, "send", self.problems)
        self.recvs = self.place(self.recvs, "recv", self.problems)
        self.sent = self.sends[-1]["end"] if self.sends else 0
        self.received = self.recvs[-1]["end"] if self.recvs else 0

    @staticmethod
    def covering(ops, off):
        lo, hi = 0, len(ops)
        while lo < hi:
            mid = (lo + hi) // 2
            if ops[mid]["end"] <= off:
                lo = mid + 1
            else:
                hi = mid
        if lo < len(ops) and ops[lo]["off"] <= off < ops[lo]["end"]:
            return ops[lo]
        return None

    def frame(self):
        """the GIOP messages of the stream, from the heads the sends (or recvs) began with"""
        heads = {}
        for r in self.recvs + self.sends:  # a send's head wins
            if r["head"]:
                heads[r["off"]] = r["head"]
        msgs = []
        off = 0
        total = max(self.sent, self.received)
        while off < total:
            h = heads.get(off)
            g = giop_head(h) if h else None
            if g is None:
                self.problems.append("no GIOP header seen at offset %d of %s -> %s (%d bytes framed of %d)"
                                     % (off, self.src, self.dst, off, total))
                break
            g["off"] = off
            g["end"] = off + 12 + g["size"]
            msgs.append(g)
            off = g["end"]
        # both sides agree: a recv that starts a message shows its header
        starts = {m["off"]: m for m in msgs}
        self.recv_heads_checked = 0
        for r in self.recvs:
            m = starts.get(r["off"])
            if m is None or not r["head"]:
                continue
            g = giop_head(r["head"])
            if g is None or g["type"] != m["type"] or g["size"] != m["size"] or g["rid"] != m["rid"]:
                self.problems.append("recv at offset %d of %s -> %s shows another header than the send"
                                     % (r["off"], self.src, self.dst))
            self.recv_heads_checked += 1
        return msgs


def chains(msgs):
    """GIOP messages joined with their Fragments: [(first message, end of the last fragment)]"""
    out = []
    open_by_rid = {}
    last_open = None
    for m in msgs:
        if m["type"] == 7:
            key = m["rid"] if m["ver"] >= (1, 2) else None
            c = open_by_rid.get(key) if key is not None else last_open
            if c is None:
                continue
            c["end"] = m["end"]
            if not m["flags"] & 2:
                open_by_rid.pop(c["rid"], None)
                if c is last_open:
                    last_open = None
            continue
        c = dict(m)
        out.append(c)
        if m["flags"] & 2:
            open_by_rid[m["rid"]] = c
            last_open = c
    return out


def build(truths):
    """the calls of the recorded processes: [{client, server, rid, kind, windows...}]"""
    streams = {}
    conns_seen = 0
    for t in truths:
        for io in t["io"]:
            local, peer, _ = t["conns"][io["conn"]]
            key = (local, peer) if io["send"] else (peer, local)
            s = streams.get(key)
            if s is None:
                s = streams[key] = Stream(*key)
            (s.sends if io["send"] else s.recvs).append(io)
        conns_seen += len(t["conns"])
    problems = []
    msgs = {}
    checked = 0
    for key, s in streams.items():
        s.finish()
        msgs[key] = chains(s.frame())
        checked += s.recv_heads_checked
        problems += s.problems
    calls = []
    for (src, dst), ms in msgs.items():
        req_s = streams[(src, dst)]
        rep_s = streams.get((dst, src))
        replies = {}
        for m in msgs.get((dst, src), []):
            if m["type"] in (1, 4):
                replies.setdefault(m["rid"], []).append(m)
        for m in ms:
            if m["type"] not in (0, 3):
                continue
            c = {"client": src, "server": dst, "rid": m["rid"],
                 "kind": "Request" if m["type"] == 0 else "LocateRequest",
                 "t_client_send": Stream.covering(req_s.sends, m["off"]),
                 "t_server_recv": Stream.covering(req_s.recvs, m["end"] - 1)}
            rl = replies.get(m["rid"])
            if rl and rep_s:
                r = rl.pop(0)
                c["t_server_send"] = Stream.covering(rep_s.sends, r["off"])
                c["t_client_recv"] = Stream.covering(rep_s.recvs, r["end"] - 1)
                c["replied"] = True
            else:
                c["replied"] = False
            c["t_first"] = c["t_client_send"]["t0"] if c["t_client_send"] else 0
            calls.append(c)
    calls.sort(key=lambda c: c["t_first"])
    return calls, problems, checked, conns_seen


def ns_of(s):
    """a 9-decimal seconds string -> integer ns, exactly"""
    if s is None or s == "" or s == "-":
        return None
    whole, _, frac = s.partition(".")
    return int(whole) * 1000000000 + int((frac + "000000000")[:9])


def us3_ns(s):
    """a 3-decimal microseconds string -> integer ns, exactly"""
    if s is None or s == "" or s == "-":
        return None
    neg = s.startswith("-")
    whole, _, frac = s.lstrip("-").partition(".")
    v = int(whole) * 1000 + int((frac + "000")[:3])
    return -v if neg else v


def load_spans(path):
    spans = {}
    with open(path) as f:
        for line in f:
            p = line.rstrip("\n").split(",")
            if len(p) not in (5, 7):  # 7: the thread's CPU clock at entry and exit follows
                raise BadInput("%s: bad line %r" % (path, line))
            spans.setdefault(int(p[0]), []).append(
                {"op": p[1], "arg": int(p[2]), "entry": int(p[3]), "exit": int(p[4])})
    for v in spans.values():
        v.sort(key=lambda s: s["entry"])
    return spans


def quant(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * len(v)))] if v else None


def fmt_s(ns):
    return "%d.%09d" % (ns // 1000000000, ns % 1000000000)


def evaluate(a, truths, override=None):
    """Every check; the violations, the figures, and `probes`: for --prove, planted errors
    (path, row, column, value just outside what the truth allows; column None: the row
    dropped). override = one such probe, applied to the CSV as it is read."""
    bad = []
    probes = []
    probed = set()
    for t in truths:
        if t["dropped"]:
            bad.append("%s: %d records dropped (capacity %d)" % (t["path"], t["dropped"], t["capacity"]))
    calls, problems, checked, nconns = build(truths)
    bad += problems
    spans = load_spans(a.servant) if a.servant else None
    by_key = {}
    for c in calls:
        by_key.setdefault((c["client"], c["server"], c["rid"]), []).append(c)
    dist = {k: [] for k in INSTANTS}  # (after instant: instant - t0, t1 - instant)
    orb = {}
    servant_checked = 0
    rows_total = 0
    pairs = []
    for spec in a.pairs:
        path, _, who = spec.rpartition("@")
        if not path or who not in WANT:
            raise BadInput("--pairs %s: want FILE@client, FILE@server or FILE@both" % spec)
        pairs.append((path, WANT[who]))
    for path, want in pairs:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
        need = set(INSTANTS) | {"client", "server", "request_id", "operation", "kind",
                               "t_request_first", "server_process_us", "status"}
        if rows and not need <= set(rows[0]):
            raise BadInput("%s: columns missing: %s" % (path, ", ".join(sorted(need - set(rows[0])))))
        rows.sort(key=lambda r: ns_of(r["t_request_first"]))
        if override and override[0] == path:
            _, idx, ocol, oval = override
            if ocol is None:
                del rows[idx]
            else:
                rows[idx] = dict(rows[idx], **{ocol: oval})
        rows_total += len(rows)
        seen = {}
        for i, r in enumerate(rows):
            key = (r["client"], r["server"], int(r["request_id"]))
            k = seen.get(key, 0)
            seen[key] = k + 1
            name = "%s: %s -> %s id %s %s" % (path.split("/")[-1], r["client"], r["server"],
                                               r["request_id"], r["operation"] or r["kind"])
            cl = by_key.get(key, [])
            if k >= len(cl):
                bad.append("%s: no such call in the recorded syscalls" % name)
                continue
            c = cl[k]
            c.setdefault("rows", 0)
            c["rows"] += 1
            if "drop" not in probed:
                probed.add("drop")
                probes.append((path, i, None, None))
            for col in INSTANTS:
                t = ns_of(r[col])
                w = c.get(col)
                if t is None:
                    continue
                if w is None:
                    bad.append("%s: %s given, but no recorded syscall carried that byte" % (name, col))
                    continue
                d0, d1 = t - w["t0"], w["t1"] - t
                dist[col].append((d0, d1))
                if col not in probed:
                    probed.add(col)
                    # a send's instant 1 ns before its window, a recv's 1 ns after
                    out = w["t0"] - a.tol_ns - 1 if col in ("t_client_send", "t_server_send") \
                        else w["t1"] + a.tol_ns + 1
                    probes.append((path, i, col, fmt_s(out)))
                if d0 < -a.tol_ns or d1 < -a.tol_ns:
                    bad.append("%s: %s %d outside the %s window [%d, %d] by %d ns"
                               % (name, col, t, w["fn"], w["t0"], w["t1"], -min(d0, d1)))
            # every instant of a followed process is there
            for col in want:
                if c.get(col) is not None and ns_of(r[col]) is None:
                    bad.append("%s: %s missing" % (name, col))
            sp = us3_ns(r["server_process_us"])
            if spans is not None and sp is not None and c["kind"] == "Request" and c["replied"]:
                rv, sd = c["t_server_recv"], c["t_server_send"]
                cand = [s for s in spans.get(sd["tid"], [])
                        if s["entry"] >= rv["t1"] and s["exit"] <= sd["t0"]]
                if len(cand) != 1 or cand[0]["op"] != r["operation"]:
                    bad.append("%s: %d servant spans on thread %d between the request's recv and the reply's send%s"
                               % (name, len(cand), sd["tid"],
                                  "" if len(cand) != 1 else " (op %s)" % cand[0]["op"]))
                    continue
                s = cand[0]
                own = s["exit"] - s["entry"]
                servant_checked += 1
                if "server_process_us" not in probed:
                    probed.add("server_process_us")
                    probes.append((path, i, "server_process_us",
                                   "%d.%03d" % ((own - 1) // 1000, (own - 1) % 1000)))
                if sp < own:
                    bad.append("%s: server_process_us %.3f < the servant's own %.3f us"
                               % (name, sp / 1000, own / 1000))
                orb.setdefault(r["operation"], []).append((sp - own, own))
    # no call lost: every recorded call is in every CSV
    for c in calls:
        if c.get("rows", 0) != len(pairs):
            bad.append("recorded call %s -> %s id %s (%s) in %d of %d pairs CSVs"
                       % (c["client"], c["server"], c["rid"], c["kind"], c.get("rows", 0), len(pairs)))
    # CLOCK_REALTIME - CLOCK_MONOTONIC at each process's start and exit: eBPF stamps in
    # monotonic time, giopscope adds that offset; if it moved, the conversion is off by as much
    offs = [o for t in truths for o in t["clock"]]
    clock = None
    if len(offs) >= 2:
        vals = [o[0] for o in offs]
        clock = {"samples": len(offs), "spread_ns": max(vals) - min(vals),
                 "bracket_half_ns": max(o[1] for o in offs)}
    counts = {}
    for c in calls:
        counts[c["kind"]] = counts.get(c["kind"], 0) + 1
    for e in a.expect:
        op, _, n = e.partition("=")
        got = sum(1 for v in (spans or {}).values() for s in v if s["op"] == op)
        if got != int(n):
            bad.append("servant ran %s %d times, expected %s" % (op, got, n))
    return {"bad": bad, "probes": probes, "calls": calls, "counts": counts, "nconns": nconns,
            "rows_total": rows_total, "checked": checked, "servant_checked": servant_checked,
            "clock": clock, "dist": dist, "orb": orb}


def check(a):
    truths = [load(p) for p in a.truth]
    st = evaluate(a, truths)
    bad, calls, counts, nconns = st["bad"], st["calls"], st["counts"], st["nconns"]
    rows_total, checked, clock, dist, orb = st["rows_total"], st["checked"], st["clock"], st["dist"], st["orb"]
    res = {"label": a.label, "calls": len(calls), "rows": rows_total, "connections": nconns,
           "recv_heads_checked": checked, "servant_checked": st["servant_checked"],
           "violations": len(bad), "tol_ns": a.tol_ns, "instants": {}, "orb_part": {},
           "clock": clock}
    lab = "[%s] " % a.label if a.label else ""
    print("%srecorded: %d calls (%s) on %d sockets; %d pairs rows; %d recv heads matched their sends"
          % (lab, len(calls), ", ".join("%s %d" % kv for kv in sorted(counts.items())), nconns,
             rows_total, checked))
    if clock:
        print("%sCLOCK_REALTIME - CLOCK_MONOTONIC: %d samples (each process's start and exit) within %d ns "
              "of each other (each read to +-%d ns)" % (lab, clock["samples"], clock["spread_ns"],
                                                         clock["bracket_half_ns"]))
    for col in INSTANTS:
        v = dist[col]
        if not v:
            continue
        a0 = [x[0] for x in v]
        a1 = [x[1] for x in v]
        res["instants"][col] = {"n": len(v),
                                "after_start_ns": [quant(a0, .5), quant(a0, .99), max(a0), min(a0)],
                                "before_end_ns": [quant(a1, .5), quant(a1, .99), max(a1), min(a1)]}
        print("%s%-14s n=%-5d instant - start: p50 %s p99 %s max %s min %s ns | end - instant: p50 %s p99 %s max %s min %s ns"
              % (lab, col, len(v), quant(a0, .5), quant(a0, .99), max(a0), min(a0),
                 quant(a1, .5), quant(a1, .99), max(a1), min(a1)))
    for op, v in sorted(orb.items()):
        o = [x[0] for x in v]
        s = [x[1] for x in v]
        res["orb_part"][op] = {"n": len(v), "orb_ns": [quant(o, .5), quant(o, .99), max(o), min(o)],
                               "servant_ns": [quant(s, .5), quant(s, .99)]}
        print("%sserver_process_us - servant (%s, n=%d): p50 %.1f p99 %.1f max %.1f min %.1f us; servant p50 %.1f us"
              % (lab, op, len(v), quant(o, .5) / 1000, quant(o, .99) / 1000, max(o) / 1000,
                 min(o) / 1000, quant(s, .5) / 1000))
    if a.prove and not bad:
        # the checks can fail: each planted error must be the one violation found
        names = []
        for path, idx, col, val in st["probes"]:
            got = evaluate(a, truths, (path, idx, col, val))["bad"]
            what = "dropped row" if col is None else col
            want = "pairs CSVs" if col is None else col
            names.append(what)
            if len(got) != 1 or want not in got[0]:
                bad.append("planted error (%s, row %d of %s) not caught alone: %s"
                           % (what, idx, path.split("/")[-1], "; ".join(got[:3]) or "no violation"))
        res["planted_errors_caught"] = len(names)
        print("%splanted errors, each caught as the one violation: %s" % (lab, ", ".join(names)))
    for b in bad[:40]:
        print("%sBAD %s" % (lab, b))
    if len(bad) > 40:
        print("%sBAD ... %d more" % (lab, len(bad) - 40))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)
    return 1 if bad else 0


def dump(a):
    t = load(a.file)
    print("pid %d, %d slots taken, %d dropped" % (t["pid"], t["taken"], t["dropped"]))
    for k, (l, p, ts) in sorted(t["conns"].items()):
        print("conn %d %s -> %s at %d" % (k, l, p, ts))
    for r in sorted(t["io"], key=lambda r: r["t0"]):
        g = giop_head(r["head"])
        print("%d %d tid %d conn %d fd %d %s %d%s%s" % (
            r["t0"], r["t1"], r["tid"], r["conn"], r["fd"], r["fn"], r["ret"],
            " peek" if r["peek"] else "",
            " %s size %d id %s flags %d" % (MSG.get(g["type"], g["type"]), g["size"], g["rid"], g["flags"]) if g else ""))
    return 0


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    d = sub.add_parser("dump")
    d.add_argument("file")
    c = sub.add_parser("check")
    c.add_argument("--truth", nargs="+", required=True)
    c.add_argument("--servant")
    c.add_argument("--pairs", action="append", required=True, metavar="FILE@client|server|both")
    c.add_argument("--tol-ns", type=int, default=0)
    c.add_argument("--label", default="")
    c.add_argument("--expect", nargs="*", default=[], help="OP=N: the servant ran OP N times")
    c.add_argument("--json")
    c.add_argument("--prove", action="store_true",
                   help="then plant one error at a time (an instant 1 ns outside its window, "
                        "server_process_us 1 ns under the servant's time, a row dropped) and "
                        "require each to be caught")
    a = p.parse_args()
    try:
        return dump(a) if a.cmd == "dump" else check(a)
    except (BadInput, OSError, ValueError, KeyError) as e:
        print("truth.py: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
