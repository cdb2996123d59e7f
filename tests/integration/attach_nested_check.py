#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""attach_nested_check.py: giopscope attach's parents by thread (parent_basis `thread`) on a
three-tier chain, checked against the workload (tests/integration/attach_nested.sh, issue 32).

usage:
  attach_nested_check.py parents --cap CAP --ours ATTACH.csv --relay ADDR,ADDR --lat FILE...
                         [--min-nested N]
  attach_nested_check.py queued --ours ATTACH.csv --truth SERVER.truth --oracle TSHARK.csv
                         --tail ATTACH.stderr --server ADDR:PORT [--min-queued-ms MS] [--tol-us US]
                         [--want TEXT] [--need-named]

parents: the truth is bench_relay's forwarding: each back-end call carries the argument of the
  client call it was made for (bench_client -distinct: one call each), read from the Request's
  own bytes in a tcpdump capture taken at the relay (nested_expect.py's decoder), never from
  giopscope. Every back-end call (its client is one of the relay's addresses) must be in
  attach's CSV with the parent the workload says and basis `thread`, and at least --min-nested
  of them; no call into the relay (a top-level call) may have a parent.
queued: the truth is the server's own recv calls (tests/truth/recorder.c via truth.py: the
  window [before, after] of the recv that returned the request's last byte) less the instant
  tcpdump saw that byte (tshark's oracle, t_request_last). Every Request answered by the server
  must have server_queued_us inside that window, give or take --tol-us (tcpdump's and attach's
  stamps of one packet), and every call whose wait is at least --min-queued-ms ms and most of
  its server time, when it is among attach's --tail rows (stderr), must read `queued ... in
  the receive queue` (with --want's text in its parenthesis, when it has one: the reading
  thread's states over the wait are not always known), not `server` nor `on-cpu`;
  --need-named: at least one such call (and one with --want's text).
Prints what it checked and every failure; exit 0 when all holds, 1 when not, 2 on unusable input.
"""
import argparse
import csv
import json
import re
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, "..", "truth"))
import nested_expect  # noqa: E402  (its capture decoder: the Requests' arguments)


def host(ep):
    return ep.rsplit(":", 1)[0].strip("[]")


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def parents(a):
    relay = set(a.relay.split(","))
    args = nested_expect.request_args(a.cap)
    ours = read_csv(a.ours)
    bad, notes = [], []
    need = ("parent_client", "parent_server", "parent_request_id", "parent_basis")
    if ours and not all(c in ours[0] for c in need):
        print("FAIL: attach's CSV has no parent columns")
        return 1
    # the client calls into the relay by (operation, argument)
    top = {}
    for r in ours:
        if r["kind"] != "Request" or host(r["client"]) in relay:
            continue
        k3 = (r["client"], r["server"], r["request_id"])
        if k3 not in args:
            bad.append("rig: no argument decoded for client call %s %s %s" % k3)
            continue
        if args[k3] in top:
            bad.append("rig: %s(%s) twice among the client calls (bench_client -distinct)" % args[k3])
        top[args[k3]] = k3
        if any(r[c] for c in need):
            bad.append("top-level call %s %s %s given a parent %s %s %s (%s)"
                       % (k3 + tuple(r[c] for c in need)))
    nested = named = 0
    for r in ours:
        if r["kind"] != "Request" or host(r["client"]) not in relay:
            continue
        k3 = (r["client"], r["server"], r["request_id"])
        nested += 1
        if k3 not in args:
            bad.append("rig: no argument decoded for back-end call %s %s %s" % k3)
            continue
        want = top.get(args[k3])
        if want is None:
            bad.append("rig: back-end call %s %s %s (%s(%s)) has no client call with its argument"
                       % (k3 + args[k3]))
            continue
        got = tuple(r[c] for c in need[:3])
        if not any(got):
            bad.append("back-end call %s %s %s (%s(%s)): no parent named, the workload says %s %s %s"
                       % (k3 + args[k3] + want))
            continue
        named += 1
        if got != want:
            bad.append("WRONG parent of %s %s %s (%s(%s)): %s %s %s, the workload says %s %s %s"
                       % (k3 + args[k3] + got + want))
        elif r["parent_basis"] != "thread":
            bad.append("parent of %s %s %s: basis %r, want 'thread'" % (k3 + (r["parent_basis"],)))
    if nested < a.min_nested:
        bad.append("rig: only %d back-end calls in attach's CSV, want at least %d" % (nested, a.min_nested))
    notes.append("parents: %d client calls, %d back-end calls, %d named by thread" % (len(top), nested, named))
    return finish(notes, bad)


def tail_rows(path):
    """the text tail's rows of attach (stderr): {(client, request_id): reasons}"""
    rows = {}
    pat = re.compile(r"^\s*[\d.]+\s+[\d.]+\s+\S+\s+\S+\s+\S+\s+\S+\s+(\S+) -> (\S+)\s+(\d+)\s+(.*)$")
    for line in open(path, errors="replace"):
        m = pat.match(line.rstrip("\n"))
        if m:
            rows[(m.group(1), m.group(3))] = m.group(4)
    return rows


def queued(a):
    """server_queued_us against the server's own recvs (the LD_PRELOAD recorder: the recv
    that returned the request's last byte, its [before, after] window) less tcpdump's
    instant of the request's last byte (tshark's oracle: t_request_last)"""
    import truth  # tests/truth/truth.py
    calls, problems, _, _ = truth.build([truth.load(p) for p in a.truth])
    recv = {}
    for c in calls:
        w = c.get("t_server_recv")
        if w and c["kind"] == "Request":
            recv[(c["client"], str(c["rid"]))] = (w["t0"], w["t1"])
    t3 = {}
    for r in read_csv(a.oracle):
        if r["kind"] == "Request" and r["t_request_last"]:
            sec, frac = r["t_request_last"].split(".")
            t3[(r["client"], r["request_id"])] = int(sec) * 1000000000 + int(frac)
    ours = read_csv(a.ours)
    tails = tail_rows(a.tail)
    bad, notes = ["rig: " + p for p in problems[:5]], []
    checked = waited = named = wanted = 0
    worst = 0.0
    for r in ours:
        if r["server"] != a.server or r["kind"] != "Request" or r["status"] != "NO_EXCEPTION":
            continue
        k = (r["client"], r["request_id"])
        if k not in recv or k not in t3:
            bad.append("rig: %s %s not in the server's recorded recvs or in tcpdump's capture" % k)
            continue
        if not r.get("server_queued_us"):
            bad.append("%s %s: no server_queued_us" % k)
            continue
        lo, hi = ((x - t3[k]) / 1000.0 for x in recv[k])
        got = float(r["server_queued_us"])
        checked += 1
        off = max(lo - got, got - hi, 0.0)
        worst = max(worst, off)
        if off > a.tol_us:
            bad.append("%s %s: server_queued_us %.3f, the server's recv returned it %.3f..%.3f us after "
                       "tcpdump saw its last byte" % (k + (got, lo, hi)))
        srv = float(r["server_us"])
        if got >= a.min_queued_ms * 1000 and got * 2 >= srv:
            waited += 1
            reasons = tails.get(k)
            if reasons is None:
                continue  # not among the slowest kept
            named += 1
            if not reasons.startswith("queued") or "in the receive queue" not in reasons:
                bad.append("%s %s waited %.1f us of its %.1f in the receive queue: the tail says %r"
                           % (k + (got, srv, reasons)))
            elif "server " in reasons or "on-cpu" in reasons:
                bad.append("%s %s: the tail says %r: the wait dominates, not the server" % (k + (reasons,)))
            elif a.want and "(" in reasons.split(";")[0] and a.want not in reasons:
                # the reading thread's states over the wait are not always known (its
                # log starts after t3: a thread the ORB started meanwhile): then no
                # parenthesis, else the one the scenario makes
                bad.append("%s %s: the tail says %r, want %r in it" % (k + (reasons, a.want)))
            elif a.want and a.want in reasons:
                wanted += 1
    if checked == 0:
        bad.append("rig: no call of %s checked" % a.server)
    if a.want and a.need_named and wanted == 0:
        bad.append("no call's wait read %r (%d named)" % (a.want, named))
    if a.need_named and named == 0:
        bad.append("rig: no call waited %s ms or more in the receive queue among the tail's (%d waited)"
                   % (a.min_queued_ms, waited))
    notes.append("queued: %d calls against the server's recvs (worst %.1f us outside their window), %d "
                 "waited >= %s ms, %d of them in the tail, named%s"
                 % (checked, worst, waited, a.min_queued_ms, named,
                    " (%d %s)" % (wanted, a.want) if a.want else ""))
    return finish(notes, bad)


def finish(notes, bad):
    for n in notes:
        print(n)
    for b in bad[:40]:
        print("FAIL: " + b)
    if len(bad) > 40:
        print("FAIL: ... %d more" % (len(bad) - 40))
    return 1 if bad else 0


def main():
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("parents")
    s.add_argument("--cap", required=True)
    s.add_argument("--ours", required=True)
    s.add_argument("--relay", required=True)
    s.add_argument("--min-nested", type=int, default=1)
    q = sub.add_parser("queued")
    q.add_argument("--ours", required=True)
    q.add_argument("--truth", action="append", required=True)
    q.add_argument("--oracle", required=True)
    q.add_argument("--tail", required=True)
    q.add_argument("--server", required=True)
    q.add_argument("--min-queued-ms", type=float, default=1.0)
    q.add_argument("--tol-us", type=float, default=1000.0)
    q.add_argument("--want", default="")
    q.add_argument("--need-named", action="store_true")
    a = p.parse_args()
    try:
        return parents(a) if a.cmd == "parents" else queued(a)
    except (OSError, KeyError, ValueError, nested_expect.Unusable) as e:
        print("unusable input: %s" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
