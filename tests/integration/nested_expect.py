#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""nested_expect.py: the expected nesting of a capture's calls, from the workload, never from
giopscope; and giopscope's pairs CSV checked against it (tests/integration/nested_calls.sh,
issue 32).

usage:
  nested_expect.py chain --cap CAP --oracle EXP.csv [--ours OURS.csv] --host ADDR,ADDR
                   --relay-log FILE --back-log FILE --lat FILE [--lat FILE]... [--basis time]
                   [--tail TAIL.jsonl --slow-min USEC]
  nested_expect.py callback --oracle EXP.csv [--ours OURS.csv] --host ADDR --lat FILE
  nested_expect.py chain ... --ours BASE.csv --write-reference OUT.csv
      OUT = BASE with the nesting columns as the rule below gives them (for the self-check: the
      check must pass on it)
  nested_expect.py wrong-parent OURS.csv OUT.csv --host ADDR,ADDR
      OUT = OURS with one named parent moved to another call (or, with none named, one call
      of the middle tier given a wrong parent): the check must fail on it (the self-check)

The truths:
  chain     bench_relay forwards each call with its argument, so the back-end call of a client
            call is the one with the same operation and argument (bench_client -distinct makes
            them unique). The argument is read from the Request's own bytes in the capture (via
            tshark's tcp.payload, decoded here: a small GIOP Request parser), and the same
            (operation, argument) sets must appear in the clients' latency CSVs, the relay's log
            and the back end's servant log: the rig is checked before giopscope is.
  callback  bench_server pings its client during callMeBack (and verifies the Callback object
            with a LocateRequest first); the client makes one call at a time, so the parent of
            a call from the server is the callMeBack that the client's own log shows open at
            that instant, and each callMeBack(cb, n) has exactly n pings.
  --host    the addresses of the middle tier (the host that serves the parents and makes the
            nested calls).
  --never-wrong  a capture that cannot tie the middle tier's addresses together (no packet
            direction, no --host-addrs): nothing need be named, but what is named must be right.

What a capture can decide (../shared/pairs-csv.md, parent_basis `time`): for a call C made by
the host, the calls the host served whose serving interval [t_request_last, t_reply_first]
overlaps C's [t_request_first, t_reply_last] (tshark's times, the oracle CSV). When exactly one
overlaps and it encloses C, C is DECIDED: giopscope must name it. When two or more enclose C,
C is AMBIGUOUS: giopscope must leave it empty. Either way a named parent must be the true one
(never wrong), with basis `time` (--basis), and no top-level call may have a parent.
downstream_us: 0.000 for a call without nested calls; for a relay call whose back-end call is
named, at least the back end's servant time (its log) and at most the relay's forward interval
(its log: the capture saw the back-end call inside it), never more than server_us.
--tail: every relay call with slow's argument >= --slow-min must read `downstream` naming its
back-end call, and that call its own reason (`server`) one level down (docs/output.md).

Prints what it checked and every failure; exit 0 when all holds, 1 when not, 2 on unusable input.
"""
import argparse
import csv
import json
import random
import struct
import subprocess
import sys

PARENT_COLS = ("parent_client", "parent_server", "parent_request_id", "parent_basis", "downstream_us")
# the relay's and the client's name of an operation -> the name on the wire
LAT_OPS = {"echoString", "echoOctets", "echoRecs", "slow", "spin", "callMeBack"}
TOL_US = 0.002   # the *_us columns have 3 decimals
# giopscope's times may differ from tshark's by 1000 ns each (compare_pairs.py's tolerance): a
# bound taken from the oracle's times allows twice that
TOL_ORACLE_US = 2.0 + TOL_US


class Unusable(Exception):
    pass


def host(ep):
    """'10.1.2.3:2809' / '[fd00::2]:2809' -> the address"""
    return ep.rsplit(":", 1)[0].strip("[]")


def key(r):
    return (r["client"], r["server"], r["request_id"], r["kind"])


def pkey(r):
    """the parent columns as the key of the call they name (kind: any)"""
    return (r.get("parent_client", ""), r.get("parent_server", ""), r.get("parent_request_id", ""))


def read_csv(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except OSError as e:
        raise Unusable("%s: %s" % (path, e.strerror))


def ns(text):
    """'1796665057.548033628' -> integer ns (a float loses a quarter of a microsecond here)"""
    sec, _, frac = text.partition(".")
    return int(sec) * 1000000000 + int((frac + "000000000")[:9])


def t(r, col):
    return ns(r[col]) if r.get(col) else None


# ------------------------------------------------------------------ the Request's own bytes
def _align(off, n):
    return (off + n - 1) // n * n


def giop_request_arg(msg):
    """(request_id, operation, first ulong of the body) of a whole-enough GIOP Request, or None.
    The body's first ulong is the argument of every Bench::Echo call the tests forward:
    slow/spin's usec, the length of echoOctets/echoRecs' sequence, echoString's length + 1."""
    if len(msg) < 12 or msg[:4] != b"GIOP" or msg[7] != 0:
        return None
    minor, flags = msg[5], msg[6]
    e = "<" if flags & 1 else ">"

    def u32(off):
        if off + 4 > len(msg):
            raise IndexError
        return struct.unpack_from(e + "I", msg, off)[0]

    def octets(off):      # a sequence<octet> / string at off (aligned 4): (bytes, next offset)
        off = _align(off, 4)
        n = u32(off)
        if off + 4 + n > len(msg):
            raise IndexError
        return msg[off + 4:off + 4 + n], off + 4 + n

    def contexts(off):
        off = _align(off, 4)
        n = u32(off)
        off += 4
        for _ in range(min(n, 64)):
            off = _align(off, 4) + 4          # context id
            _, off = octets(off)
        return off

    try:
        if minor >= 2:
            rid = u32(12)
            off = 20                          # response_flags, reserved[3]
            disc = struct.unpack_from(e + "H", msg, off)[0]
            if disc != 0:                     # only KeyAddr (omniORB, Combat)
                return None
            _, off = octets(off + 2)
            op, off = octets(off)
            off = contexts(off)
            off = _align(off, 8)              # GIOP 1.2: the body starts 8-aligned
        else:
            off = contexts(12)
            rid = u32(_align(off, 4))
            off = _align(off, 4) + 5 + (3 if minor == 1 else 0)
            _, off = octets(off)              # object key
            op, off = octets(off)
            _, off = octets(off)              # requesting_principal
        arg = u32(_align(off, 4))
    except (IndexError, struct.error):
        return None
    return rid, op.rstrip(b"\0").decode("latin-1"), arg


def request_args(cap):
    """{(client, server, request_id): (operation, argument)} of the Requests that start a TCP
    segment of CAP, from tshark's per-packet payload (no reassembly: a small Request is in
    its first segment; several messages in one segment are walked)."""
    cmd = ["tshark", "-r", cap, "-n", "-o", "tcp.desegment_tcp_streams:FALSE", "-Y", "tcp.len > 0",
           "-T", "fields", "-E", "separator=\t", "-e", "ip.src", "-e", "ipv6.src", "-e", "tcp.srcport",
           "-e", "ip.dst", "-e", "ipv6.dst", "-e", "tcp.dstport", "-e", "tcp.payload"]
    try:
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise Unusable("tshark on %s: %s" % (cap, e))
    args = {}
    for line in out.splitlines():
        f = line.split("\t")
        if len(f) < 7:
            continue
        s4, s6, sp, d4, d6, dp, hexpl = f[:7]
        src = s4 if s4 else "[%s]" % s6
        dst = d4 if d4 else "[%s]" % d6
        data = bytes.fromhex(hexpl.replace(":", ""))
        off = 0
        while off + 12 <= len(data) and data[off:off + 4] == b"GIOP":
            e = "<" if data[off + 6] & 1 else ">"
            size = struct.unpack_from(e + "I", data, off + 8)[0]
            got = giop_request_arg(data[off:off + 12 + size])
            if got:
                rid, op, arg = got
                args[("%s:%s" % (src, sp), "%s:%s" % (dst, dp), str(rid))] = (op, arg)
            off += 12 + size
    return args


def wire_arg(op, arg):
    """the argument as the logs give it: echoString's log says the string's length"""
    return arg - 1 if op == "echoString" else arg


# ------------------------------------------------------------------ what a capture decides
def serving(r):
    return t(r, "t_request_last"), t(r, "t_reply_first")


def decidability(c, served):
    """(overlapping, enclosing) calls among `served` (calls the host served) for C"""
    c0, c1 = t(c, "t_request_first"), t(c, "t_reply_last")
    over, encl = [], []
    for p in served:
        p0, p1 = serving(p)
        if p1 is None or c1 is None:
            continue
        if p0 < c1 and c0 < p1:
            over.append(p)
            if p0 <= c0 and c1 <= p1:
                encl.append(p)
    return over, encl


class Check:
    def __init__(self):
        self.bad = []
        self.notes = []

    def fail(self, msg):
        self.bad.append(msg)

    def finish(self):
        for n in self.notes:
            print(n)
        for b in self.bad[:40]:
            print("FAIL: " + b)
        if len(self.bad) > 40:
            print("FAIL: ... %d more" % (len(self.bad) - 40))
        return 1 if self.bad else 0


def match_ours(ck, oracle, ours):
    """ours' row of each oracle key (compare_pairs.py checks the 19 columns; here only that the
    rows are there and the nesting columns exist)"""
    if ours and not all(c in ours[0] for c in PARENT_COLS):
        ck.fail("giopscope's pairs CSV has no nesting columns (%s): the nesting stage is missing"
                % ",".join(c for c in PARENT_COLS if c not in ours[0]))
        return None
    by = {}
    for r in ours:
        by.setdefault(key(r), r)
    m = {}
    for r in oracle:
        o = by.get(key(r))
        if o is None:
            ck.fail("call %s %s %s %s: not in giopscope's CSV" % key(r))
        else:
            m[key(r)] = o
    return m


def check_parents(ck, oracle, ours_of, hosts, truth, basis, never_wrong=False):
    """truth: {key of a nested call: key3 of its true parent}. Every nested call of the host
    (a call whose client is one of hosts) checked; every other call must have no parent."""
    served = [r for r in oracle if host(r["server"]) in hosts]
    stats = {"nested": 0, "decided": 0, "ambiguous": 0, "free": 0, "named": 0}
    for r in oracle:
        o = ours_of.get(key(r))
        if o is None:
            continue
        named = any(o[c] for c in PARENT_COLS[:4])
        if host(r["client"]) not in hosts:
            if named:
                ck.fail("top-level call %s %s %s %s given a parent %s %s %s (%s)"
                        % (key(r) + pkey(o) + (o["parent_basis"],)))
            continue
        if key(r) not in truth:
            # a call of the host that serves nothing we know (none in these workloads)
            ck.fail("call %s %s %s %s of the middle tier has no known parent in the workload" % key(r))
            continue
        stats["nested"] += 1
        want = truth[key(r)]
        over, encl = decidability(r, served)
        if want not in [(p["client"], p["server"], p["request_id"]) for p in encl]:
            ck.fail("rig: the true parent %s %s %s does not enclose %s %s %s %s in the capture"
                    % (want + key(r)))
            continue
        decided = len(over) == 1 and len(encl) == 1
        ambiguous = len(encl) >= 2
        stats["decided" if decided else "ambiguous" if ambiguous else "free"] += 1
        if named:
            stats["named"] += 1
            if pkey(o) != want:
                ck.fail("WRONG parent of %s %s %s %s: %s %s %s, the workload says %s %s %s"
                        % (key(r) + pkey(o) + want))
            elif o["parent_basis"] != basis:
                ck.fail("parent of %s %s %s %s: basis %r, want %r" % (key(r) + (o["parent_basis"], basis)))
            elif ambiguous:
                ck.fail("parent of %s %s %s %s named though %d calls enclose it (a guess)"
                        % (key(r) + (len(encl),)))
        else:
            if o["parent_basis"]:
                ck.fail("%s %s %s %s: basis %r without a parent" % (key(r) + (o["parent_basis"],)))
            if decided and not never_wrong:
                ck.fail("parent of %s %s %s %s not named, though the capture decides it (%s %s %s)"
                        % (key(r) + want))
    ck.notes.append("nesting: %(nested)d nested calls, %(decided)d decided by the capture, "
                    "%(ambiguous)d ambiguous, %(free)d in between; %(named)d named" % stats)
    return stats


def check_leaves(ck, oracle, ours_of, parents):
    """downstream_us of the calls that are nobody's parent: 0.000 (empty without a reply)"""
    for r in oracle:
        o = ours_of.get(key(r))
        if o is None or (r["client"], r["server"], r["request_id"]) in parents:
            continue
        want = "0.000" if r["t_reply_first"] else ""
        if o["downstream_us"] != want:
            ck.fail("%s %s %s %s has no nested call: downstream_us %r, want %r"
                    % (key(r) + (o["downstream_us"], want)))


# ------------------------------------------------------------------ chain (client -> relay -> back end)
def read_log(path, ncols):
    rows = []
    for line in open(path):
        f = line.strip().split(",")
        if len(f) < ncols:
            continue
        rows.append(f)
    return rows


def chain(a):
    ck = Check()
    hosts = set(a.host.split(","))
    oracle = read_csv(a.oracle)
    args = request_args(a.cap)
    relay = read_log(a.relay_log, 7)    # tid,op,arg,t_in,t_fwd_start,t_fwd_end,t_out
    back = read_log(a.back_log, 5)      # tid,op,arg,t_entry,t_exit,...
    lat = []
    for p in a.lat:
        lat += [r for r in read_csv(p) if r["op"] in LAT_OPS]

    # the rig: the same (operation, argument) everywhere, each once
    def multiset(pairs, what):
        seen = {}
        for k in pairs:
            if k in seen:
                ck.fail("rig: %s has %s(%s) twice: sizes must be distinct (bench_client -distinct)"
                        % ((what,) + k))
            seen[k] = seen.get(k, 0) + 1
        return set(seen)

    top, nested = {}, {}
    for r in oracle:
        if r["kind"] != "Request":
            continue
        k3 = (r["client"], r["server"], r["request_id"])
        if k3 not in args:
            ck.fail("rig: no argument decoded for %s %s %s (%s)" % (k3 + (r["operation"],)))
            continue
        op, arg = args[k3]
        if op != r["operation"]:
            ck.fail("rig: %s %s %s is %s in the bytes, %s for the oracle" % (k3 + (op, r["operation"])))
        (nested if host(r["client"]) in hosts else top)[(op, wire_arg(op, arg))] = r
    s_lat = multiset([(r["op"], int(r["size"])) for r in lat], "the clients' logs")
    s_relay = multiset([(f[1], int(f[2])) for f in relay], "the relay's log")
    s_back = multiset([(f[1], int(f[2])) for f in back], "the back end's log")
    for name, s in (("client calls in the capture", set(top)), ("back-end calls in the capture", set(nested)),
                    ("the relay's log", s_relay), ("the back end's log", s_back)):
        if s != s_lat:
            ck.fail("rig: %s differ from the clients' logs: %d only there %s, %d missing %s"
                    % (name, len(s - s_lat), sorted(s - s_lat)[:4], len(s_lat - s), sorted(s_lat - s)[:4]))
    # the relay's own instants against the capture's (one clock, CLOCK_REALTIME): the upcall
    # runs after the request reached the capture and before the reply left; the forwarded
    # call's packets lie inside its forward interval
    for f in relay:
        ti, f0, f1, to = (int(x) for x in f[3:7])
        oa = (f[1], int(f[2]))
        if not ti <= f0 <= f1 <= to:
            ck.fail("rig: relay log %s(%s): instants out of order" % oa)
        p, c = top.get(oa), nested.get(oa)
        if p is not None and p["t_reply_first"] and not t(p, "t_request_last") <= ti <= to <= t(p, "t_reply_first"):
            ck.fail("rig: relay upcall %s(%s) not inside its call's serving interval in the capture" % oa)
        if c is not None and c["t_reply_last"] and not f0 <= t(c, "t_request_first") <= t(c, "t_reply_last") <= f1:
            ck.fail("rig: back-end call %s(%s) not inside the relay's forward interval" % oa)
    ck.notes.append("rig: %d client calls, %d back-end calls, %d relay upcalls, %d back-end upcalls"
                    % (len(top), len(nested), len(relay), len(back)))
    if ck.bad or not a.ours:
        return ck.finish()

    truth = {}
    for oa, r in nested.items():
        p = top.get(oa)
        if p is not None:
            truth[key(r)] = (p["client"], p["server"], p["request_id"])
    if a.write_reference:
        write_reference(a.ours, a.write_reference, oracle, hosts, truth)
        return ck.finish()
    ours = read_csv(a.ours)
    ours_of = match_ours(ck, oracle, ours)
    if ours_of is None:
        return ck.finish()
    stats = check_parents(ck, oracle, ours_of, hosts, truth, a.basis, a.never_wrong)
    if a.min_decided is not None and stats["decided"] < a.min_decided:
        ck.fail("rig: only %d nested calls decided by the capture, want at least %d"
                % (stats["decided"], a.min_decided))
    if a.min_ambiguous is not None and stats["ambiguous"] < a.min_ambiguous:
        ck.fail("rig: only %d ambiguous nested calls, want at least %d (concurrency?)"
                % (stats["ambiguous"], a.min_ambiguous))

    # downstream_us of the relay's calls whose back-end call is named
    relay_by = {(f[1], int(f[2])): f for f in relay}
    back_by = {(f[1], int(f[2])): f for f in back}
    named_parents = {}
    for oa, c in nested.items():
        o = ours_of.get(key(c))
        if o and o["parent_request_id"]:
            named_parents[pkey(o)] = oa
    checked = 0
    for oa, p in top.items():
        o = ours_of.get(key(p))
        if o is None or not p["t_reply_first"]:
            continue
        if not o["downstream_us"]:
            ck.fail("%s %s %s %s: no downstream_us though it has a reply" % key(p))
            continue
        d = float(o["downstream_us"])
        if d > float(p["server_us"]) + TOL_ORACLE_US:
            ck.fail("%s %s %s %s: downstream_us %.3f > server_us %s" % (key(p) + (d, p["server_us"])))
        k3 = (p["client"], p["server"], p["request_id"])
        if k3 not in named_parents:
            continue
        rf, bf = relay_by.get(oa), back_by.get(oa)
        if rf is None or bf is None:
            continue
        # at least the back end's servant time (its log) and the back-end call's server time (the
        # oracle); at most the relay's forward interval (its log)
        lo = (int(bf[4]) - int(bf[3])) / 1000.0
        lo_o = float(nested[oa]["server_us"] or 0)
        hi = (int(rf[5]) - int(rf[4])) / 1000.0
        checked += 1
        if not (lo - TOL_US <= d <= hi + TOL_US and lo_o - TOL_ORACLE_US <= d):
            lo = max(lo, lo_o)
            ck.fail("%s(%s) at the relay: downstream_us %.3f outside [%.3f, %.3f] (the back-end call's "
                    "servant and server time; the relay's forward interval)" % (oa + (d, lo, hi)))
    if not a.never_wrong:
        check_leaves(ck, oracle, ours_of, set(named_parents))
    ck.notes.append("downstream_us: %d relay calls within their logs' bounds" % checked)
    if a.tail:
        check_tail(ck, a, top, nested, ours_of)
    return ck.finish()


def check_tail(ck, a, top, nested, ours_of):
    """--tail N --format jsonl (docs/output.md: {"type":"tail","client":...,"server":...,
    "request_id":...,"operation":...,"tags":[...],"reasons":"..."} on stderr): each call slowed on
    purpose (slow(u), u >= --slow-min) reads `downstream` at the relay, its reasons naming the
    back-end call (the back end's endpoint and the operation), and that back-end call's own row
    reads `server` (where the time was spent), not `downstream`."""
    by = {}
    for line in open(a.tail):
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            j = json.loads(line)
        except ValueError:
            ck.fail("tail: not JSON: %s" % line[:80])
            continue
        if j.get("type") == "tail":
            by[(str(j.get("client")), str(j.get("server")), str(j.get("request_id")))] = j
    n = 0
    for (op, arg), p in sorted(top.items()):
        if op != "slow" or arg < a.slow_min:
            continue
        n += 1
        c = nested.get((op, arg))
        j = by.get(key(p)[:3])
        if j is None:
            ck.fail("tail: slow(%d) at the relay (%s %s %s) is not in the tail" % ((arg,) + key(p)[:3]))
            continue
        tags, reasons = j.get("tags") or [], str(j.get("reasons", ""))
        if "downstream" not in tags:
            ck.fail("tail: slow(%d) at the relay: tags %s, want downstream (%s)" % (arg, tags, reasons))
        elif c is not None and (c["server"] not in reasons or "slow" not in reasons.split(c["server"])[0] +
                                reasons.split(c["server"])[-1]):
            ck.fail("tail: slow(%d) at the relay: reasons %r do not name its back-end call slow at %s"
                    % (arg, reasons, c["server"]))
        if c is None:
            continue
        jc = by.get(key(c)[:3])
        if jc is None:
            ck.fail("tail: the back-end slow(%d) (%s %s %s) is not in the tail" % ((arg,) + key(c)[:3]))
            continue
        ctags = jc.get("tags") or []
        if "server" not in ctags or "downstream" in ctags:
            ck.fail("tail: the back-end slow(%d): tags %s, want server (its own reason) and no downstream"
                    % (arg, ctags))
    if n == 0:
        ck.fail("tail: no call slowed on purpose (slow >= %d us) in the workload" % a.slow_min)
    ck.notes.append("tail: %d calls slowed on purpose checked" % n)


# ------------------------------------------------------------------ callbacks
def callback(a):
    ck = Check()
    hosts = set(a.host.split(","))
    oracle = read_csv(a.oracle)
    lat = []
    for p in a.lat:
        lat += [r for r in read_csv(p) if r["op"] == "callMeBack"]

    def log_call(at):
        """the client's callMeBack open at capture time `at` (ns; its own log; one call at a time)"""
        hit = [r for r in lat if int(r["t_start_ns"]) <= at <= int(r["t_end_ns"])]
        return hit[0] if len(hit) == 1 else None

    cmb = {}     # client log row (thread, seq) -> the callMeBack's oracle row
    for r in oracle:
        if r["operation"] == "callMeBack":
            lc = log_call(t(r, "t_request_first"))
            if lc is None:
                ck.fail("rig: callMeBack %s %s %s matches no single call of the client's log" % key(r)[:3])
                continue
            cmb[(lc["thread"], lc["seq"])] = r
    if len(cmb) != len(lat):
        ck.fail("rig: %d callMeBack calls in the capture, %d in the client's log" % (len(cmb), len(lat)))
    truth, pings = {}, {}
    for r in oracle:
        if host(r["client"]) not in hosts:
            continue
        lc = log_call(t(r, "t_request_first"))
        p = cmb.get((lc["thread"], lc["seq"])) if lc else None
        if p is None:
            ck.fail("rig: %s %s %s %s from the server outside every callMeBack" % key(r))
            continue
        truth[key(r)] = (p["client"], p["server"], p["request_id"])
        if r["operation"] == "ping":
            pings[truth[key(r)]] = pings.get(truth[key(r)], 0) + 1
    for lk, p in cmb.items():
        lc = [r for r in lat if (r["thread"], r["seq"]) == lk][0]
        got = pings.get((p["client"], p["server"], p["request_id"]), 0)
        if got != int(lc["size"]):
            ck.fail("rig: callMeBack(cb, %s) %s %s %s: %d pings in the capture"
                    % ((lc["size"],) + key(p)[:3] + (got,)))
    ck.notes.append("rig: %d callMeBack calls, %d calls from the server inside them" % (len(cmb), len(truth)))
    if ck.bad or not a.ours:
        return ck.finish()
    if a.write_reference:
        write_reference(a.ours, a.write_reference, oracle, hosts, truth)
        return ck.finish()
    ours_of = match_ours(ck, oracle, read_csv(a.ours))
    if ours_of is None:
        return ck.finish()
    check_parents(ck, oracle, ours_of, hosts, truth, a.basis, a.never_wrong)
    parents = set(truth.values())
    for r in oracle:     # a callMeBack's downstream: its pings and LocateRequest are inside it
        o = ours_of.get(key(r))
        k3 = (r["client"], r["server"], r["request_id"])
        if o is None or k3 not in parents or not o["downstream_us"]:
            continue
        kids = [c for c in oracle if truth.get(key(c)) == k3]
        lo = max(float(c["server_us"]) for c in kids if c["server_us"])
        if not lo - TOL_ORACLE_US <= float(o["downstream_us"]) <= float(r["server_us"]) + TOL_ORACLE_US:
            ck.fail("callMeBack %s %s %s: downstream_us %s outside [%.3f (its longest ping's server "
                    "time), %s (its server_us)]" % (k3 + (o["downstream_us"], lo, r["server_us"])))
    check_leaves(ck, oracle, ours_of, parents)
    return ck.finish()


# ------------------------------------------------------------------ the self-check's input
def write_reference(src, dst, oracle, hosts, truth):
    """src (a pairs CSV of the 19 base columns) with the nesting columns a correct reader
    writes (the rule of the module docstring, strictest reading): the true parent where the
    capture decides it, basis time; downstream_us the union of the named children's
    [t_request_first, t_reply_last] inside the parent's [t_request_last, t_reply_first]."""
    rows = read_csv(src)
    with open(src, newline="") as f:
        header = [c for c in next(csv.reader(f)) if c not in PARENT_COLS] + list(PARENT_COLS)
    served = [r for r in oracle if host(r["server"]) in hosts]
    by3 = {(r["client"], r["server"], r["request_id"]): r for r in oracle}
    parent_of = {}
    for r in oracle:
        want = truth.get(key(r))
        if want is None:
            continue
        over, encl = decidability(r, served)
        if len(over) == 1 and len(encl) == 1 and (encl[0]["client"], encl[0]["server"], encl[0]["request_id"]) == want:
            parent_of[key(r)] = want
    kids = {}
    for k, p in parent_of.items():
        kids.setdefault(p, []).append(by3[k[:3]])
    for r in rows:
        p = parent_of.get(key(r))
        r["parent_client"], r["parent_server"], r["parent_request_id"] = p if p else ("", "", "")
        r["parent_basis"] = "time" if p else ""
        if not r["t_reply_first"]:
            r["downstream_us"] = ""
            continue
        lo, hi = t(r, "t_request_last"), t(r, "t_reply_first")
        iv = sorted((max(lo, t(c, "t_request_first")), min(hi, t(c, "t_reply_last")))
                    for c in kids.get((r["client"], r["server"], r["request_id"]), []))
        tot, end = 0, lo
        for a0, a1 in iv:
            a0 = max(a0, end)
            if a1 > a0:
                tot += a1 - a0
                end = a1
        r["downstream_us"] = "%d.%03d" % (tot // 1000, tot % 1000)
    with open(dst, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, lineterminator="\n", extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    print("reference: %d rows, %d parents named" % (len(rows), len(parent_of)))


def wrong_parent(src, dst, hosts):
    rows = read_csv(src)
    with open(src, newline="") as f:
        header = next(csv.reader(f))
    for c in PARENT_COLS:
        if c not in header:
            header.append(c)
            for r in rows:
                r[c] = ""
    named = [r for r in rows if r.get("parent_request_id")]
    calls = [r for r in rows if r["kind"] == "Request"]
    if named:
        victim = named[len(named) // 2]
        others = [r for r in calls if (r["client"], r["server"], r["request_id"]) != pkey(victim)
                  and host(r["server"]) == host(victim["parent_server"])]
    else:   # nothing named: give a call of the middle tier a parent it served whose operation
        # differs (a relay's call and its parent have the same one)
        victim, others = None, []
        for r in calls:
            if host(r["client"]) not in hosts:
                continue
            others = [p for p in calls if host(p["server"]) in hosts and p["operation"] != r["operation"]]
            if others:
                victim = r
                break
    if victim is None or not others:
        raise Unusable("%s: no call to give a wrong parent" % src)
    p = random.Random(32).choice(others)
    victim["parent_client"], victim["parent_server"] = p["client"], p["server"]
    victim["parent_request_id"], victim["parent_basis"] = p["request_id"], "time"
    with open(dst, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    print("wrong-parent: %s %s %s %s now names %s %s %s" % (key(victim) + pkey(victim)))
    return 0


def main():
    ap = argparse.ArgumentParser(description="expected nesting of a capture's calls (issue 32)")
    sub = ap.add_subparsers(dest="cmd", required=True)
    for name in ("chain", "callback"):
        s = sub.add_parser(name)
        s.add_argument("--oracle", required=True)
        s.add_argument("--ours")
        s.add_argument("--host", required=True)
        s.add_argument("--lat", action="append", required=True)
        s.add_argument("--basis", default="time")
        s.add_argument("--never-wrong", action="store_true")
        s.add_argument("--write-reference", metavar="OUT",
                       help="write --ours with the nesting columns a correct reader writes")
        if name == "chain":
            s.add_argument("--cap", required=True)
            s.add_argument("--relay-log", required=True)
            s.add_argument("--back-log", required=True)
            s.add_argument("--tail")
            s.add_argument("--slow-min", type=int, default=20000)
            s.add_argument("--min-decided", type=int)
            s.add_argument("--min-ambiguous", type=int)
    w = sub.add_parser("wrong-parent")
    w.add_argument("src")
    w.add_argument("dst")
    w.add_argument("--host", required=True)
    a = ap.parse_args()
    try:
        if a.cmd == "chain":
            return chain(a)
        if a.cmd == "callback":
            return callback(a)
        return wrong_parent(a.src, a.dst, set(a.host.split(",")))
    except Unusable as e:
        print("nested_expect: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
