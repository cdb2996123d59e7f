#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""bench/workloads/analyse.py WORKDIR [--doc docs/benchmarks.md]: the tables of bench/workloads.sh.

WORKDIR holds what bench/workloads.sh left there:
  runs.tsv     one line per run: name, kind (prims|recA|recU|any|deferred), way (two|one|
               deferred), target bytes (or N servers), arg_bytes (the client's cdrMemoryStream
               size, or the servant's usec), warm-up calls (or rounds), tcpdump drops
  NAME.lat.csv   the client's latency CSV (work_client -lat)
  NAME.pairs.csv `giopscope read --pairs --format csv` of the client-side capture
  meta.txt     key=value lines for the section header (command, date, machine, settings)

Matching (per connection and operation): the calls on one connection are sequential
(workloads: one thread; deferred: one call per server and round). When the connection carries as
many wire Requests of the operation as the client made calls, they pair in order; otherwise (a
capture that lost packets) by time containment: each client call takes the first unmatched wire
Request whose first byte lies inside the client's [t_start, t_end]. Then, for a two-way call, the wire call [t_request_first,
t_reply_last] must lie inside [t_start, t_end] (a "containment" mismatch otherwise); for a
oneway, [t_request_first, t_request_last] (a 24 kB request can leave the host after the stub
returned: the kernel sends what the window allows, the rest later). Client calls without a wire
call and wire Requests without a client call are counted too. Time stamps are compared as
integer nanoseconds (a float of 1.8e9 s resolves only 0.24 us).

Prints the tables (markdown) on stdout; with --doc, replaces the section between
<!-- workloads:begin --> and <!-- workloads:end --> of that file (appends it when absent) and
leaves the rest of the file alone.
"""
import argparse
import csv
import os
import sys
import tempfile

BEGIN, END = "<!-- workloads:begin -->", "<!-- workloads:end -->"
OPS = {("prims", "two"): "echoPrims", ("recA", "two"): "echoRecA", ("recU", "two"): "echoRecU",
       ("any", "two"): "echoAny", ("prims", "one"): "sendPrims", ("recA", "one"): "sendRecA",
       ("recU", "one"): "sendRecU", ("any", "one"): "sendAny", ("deferred", "deferred"): "work"}
KIND_TEXT = {"prims": "struct of primitives", "recA": "records, aligned",
             "recU": "records, unaligned", "any": "Any (sequence<double>)"}


def ns(stamp):
    """'1796011169.359365891' -> integer ns (exact); '' -> None."""
    if not stamp:
        return None
    s, _, frac = stamp.partition(".")
    return int(s) * 1000000000 + int((frac + "000000000")[:9])


def pct(v, p):
    if not v:
        return float("nan")
    v = sorted(v)
    return v[min(len(v) - 1, int(p * len(v)))]


def load_client(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            rows.append({"thread": int(r["thread"]), "seq": int(r["seq"]), "op": r["op"],
                         "t0": int(r["t_start_ns"]), "t1": int(r["t_end_ns"]),
                         "outcome": r["outcome"]})
    return rows


def load_wire(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["kind"] != "Request":
                continue
            rows.append({"client": r["client"], "server": r["server"], "op": r["operation"],
                         "oneway": r["oneway"] == "1", "status": r["status"],
                         "req_bytes": int(r["request_bytes"]) if r["request_bytes"] else 0,
                         "rq0": ns(r["t_request_first"]), "rq1": ns(r["t_request_last"]),
                         "rp0": ns(r["t_reply_first"]), "rp1": ns(r["t_reply_last"]),
                         "retx": int(r["retransmits"] or 0)})
    return rows


def match(client, wire, conn_of):
    """[(client row, wire row or None)], unmatched wire count. conn_of(client row) -> the
    server endpoint ('A.B.C.D:port') its calls go to, or None for 'any connection'."""
    by_conn = {}
    for w in sorted(wire, key=lambda w: w["rq0"]):
        by_conn.setdefault((w["server"], w["op"]), []).append(w)
    # per (server endpoint, op), client calls in time order against wire calls in time order
    groups = {}
    for c in client:
        key = (conn_of(c), c["op"])
        groups.setdefault(key, []).append(c)
    out, used = [], 0
    for (srv, op), calls in groups.items():
        cands = []
        if srv is None:
            for (s, o), ws in by_conn.items():
                if o == op:
                    cands.extend(ws)
            cands.sort(key=lambda w: w["rq0"])
        else:
            cands = by_conn.get((srv, op), [])
        calls = sorted(calls, key=lambda c: c["t0"])
        if len(cands) == len(calls):
            # as many wire calls as client calls on the connection: they pair in order (a
            # oneway's bytes may leave after its stub returned, so time alone could mis-pair)
            out.extend(zip(calls, cands))
            used += len(calls)
            continue
        j = 0
        for c in calls:
            # skip wire calls that began before this client call (no client call of theirs)
            while j < len(cands) and cands[j]["rq0"] < c["t0"]:
                j += 1
            if j < len(cands) and cands[j]["rq0"] <= c["t1"]:
                out.append((c, cands[j]))
                used += 1
                j += 1
            else:
                out.append((c, None))
    return out, len(wire) - used


def summarize(pairs, unmatched_wire, warm, deferred=False):
    """figures over the matched calls after the warm-up (seq < warm dropped)."""
    ok = [(c, w) for c, w in pairs if c["seq"] >= warm]
    res = {"client_only": sum(1 for c, w in ok if w is None), "wire_only": unmatched_wire}
    m = [(c, w) for c, w in ok if w is not None]
    res["calls"] = len(m)
    lat = [(c["t1"] - c["t0"]) / 1000.0 for c, w in m]
    res["client_p50"], res["client_p99"] = pct(lat, 0.5), pct(lat, 0.99)
    res["req_bytes"] = sorted(set(w["req_bytes"] for c, w in m))
    res["retx"] = sum(w["retx"] for c, w in m)
    first_lag = [(w["rq0"] - c["t0"]) / 1000.0 for c, w in m]
    res["first_lag_p50"] = pct(first_lag, 0.5)
    two = [(c, w) for c, w in m if w["rp1"] is not None]
    if two:
        tot = [(w["rp1"] - w["rq0"]) / 1000.0 for c, w in two]
        srv = [(w["rp0"] - w["rq1"]) / 1000.0 for c, w in two]
        diff = [((c["t1"] - c["t0"]) - (w["rp1"] - w["rq0"])) / 1000.0 for c, w in two]
        share = [100.0 * ((c["t1"] - c["t0"]) - (w["rp1"] - w["rq0"])) / (c["t1"] - c["t0"])
                 for c, w in two if c["t1"] > c["t0"]]
        tail = [(c["t1"] - w["rp1"]) / 1000.0 for c, w in two]
        res.update(total_p50=pct(tot, 0.5), total_p99=pct(tot, 0.99), server_p50=pct(srv, 0.5),
                   diff_p50=pct(diff, 0.5), share_p50=pct(share, 0.5), tail_p50=pct(tail, 0.5),
                   outside=sum(1 for c, w in two if not (c["t0"] <= w["rq0"] and w["rp1"] <= c["t1"])))
    else:
        dur = [(w["rq1"] - w["rq0"]) / 1000.0 for c, w in m]
        res.update(wire_p50=pct(dur, 0.5), wire_p99=pct(dur, 0.99),
                   outside=sum(1 for c, w in m if not (c["t0"] <= w["rq0"] and w["rq1"] <= c["t1"])),
                   after=sum(1 for c, w in m if w["rq1"] > c["t1"]))
    if deferred and m:
        res["rounds"] = len(set(c["seq"] for c, w in m))
        span = (max(c["t1"] for c, w in m) - min(c["t0"] for c, w in m)) / 1e9
        res["rate"] = len(m) / span if span > 0 else float("nan")
    return res


def f1(x):
    return "n/a" if x != x else ("%.1f" % x)


def mism(r):
    parts = []
    if r["client_only"]:
        parts.append("%d client-only" % r["client_only"])
    if r["wire_only"]:
        parts.append("%d wire-only" % r["wire_only"])
    if r.get("outside"):
        parts.append("%d outside" % r["outside"])
    return ", ".join(parts) if parts else "0"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("work")
    ap.add_argument("--doc")
    a = ap.parse_args()
    meta = {}
    with open(os.path.join(a.work, "meta.txt")) as f:
        for line in f:
            k, _, v = line.rstrip("\n").partition("=")
            meta[k] = v
    runs = []
    with open(os.path.join(a.work, "runs.tsv")) as f:
        for line in f:
            name, kind, way, target, argb, warm, drops = line.rstrip("\n").split("\t")
            runs.append(dict(name=name, kind=kind, way=way, target=int(target), argb=argb,
                             warm=int(warm), drops=drops))

    two_rows, one_rows, def_rows = [], [], []
    for r in runs:
        lat = os.path.join(a.work, r["name"] + ".lat.csv")
        pcsv = os.path.join(a.work, r["name"] + ".pairs.csv")
        if not (os.path.exists(lat) and os.path.exists(pcsv)):
            sys.stderr.write("analyse: %s: missing files, skipped\n" % r["name"])
            continue
        client = load_client(lat)
        op = OPS[(r["kind"], r["way"])]
        wire = [w for w in load_wire(pcsv) if w["op"] == op]
        if r["way"] == "deferred":
            base = int(meta["deferred_port_base"])
            srv_ip = meta["server_ip"]
            pairs, wo = match(client, wire, lambda c: "%s:%d" % (srv_ip, base + c["thread"]))
            s = summarize(pairs, wo, r["warm"], deferred=True)
            def_rows.append((r, s))
        else:
            pairs, wo = match(client, wire, lambda c: None)
            s = summarize(pairs, wo, r["warm"])
            (two_rows if r["way"] == "two" else one_rows).append((r, s))

    L = []
    L.append("## Workloads on omniORB: the client's own figures next to the wire's (`make bench-workloads`)")
    L.append("")
    L.append("Command: `%s` (as root; part of `make bench`, `BENCH_ONLY=workloads make bench` alone). "
             "Measured %s on %s (nproc %s), %s, load average %s at the start and %s at the end. **The machine was shared "
             "with other engineers' tests during this run**: absolute figures are noisy, and the lead may "
             "rerun it on a quieter machine; the split of each call below is measured call by call within "
             "one run." % (meta.get("command", "bench/workloads.sh"), meta.get("date", "?"),
                           meta.get("cpu", "?"), meta.get("nproc", "?"), meta.get("kernel", "?"),
                           meta.get("load", "?"), meta.get("load_end", "?")))
    L.append("")
    L.append("Set-up (`bench/workloads.sh`, programs in `bench/workloads/`): omniORB %s `work_server` and "
             "`work_client` in two network namespaces joined by a veth; `tcpdump` on the client's end of "
             "the veth, one capture per run, read by `giopscope read --pairs --format csv`; each client "
             "call (CLOCK_REALTIME around the stub call, same host clock as the capture) is paired with its "
             "wire call in order on its connection (by time containment if the counts differ), then "
             "checked to lie around it (see `bench/workloads/analyse.py`). "
             "Workloads: %s calls per run after %s warm-up calls, one thread, one connection, back to "
             "back. Arguments: an 8-byte stamp, a 4-byte id and the payload; the client picks the element "
             "count whose CDR size is closest to the target (a struct of primitives has a 48-byte stride, "
             "so 144 bytes is not reachable: 160)."
             % (meta.get("omniorb", "?"), meta.get("calls", "?"), meta.get("warmup", "?")))
    L.append("")
    L.append("Columns: *client* = the client's own latency; *wire* = `total_us` (request first byte to "
             "reply last byte at the client's veth); *server* = `server_us` p50 (request last byte to "
             "reply first byte: the server's kernel, ORB and servant, plus the veth); *client ORB* = "
             "client latency − total_us per call, p50 (the client's marshalling, its ORB, the syscalls "
             "and the scheduling on both sides of the wire), and its share of the client's latency (p50 "
             "of the per-call share). *mismatches*: client calls with no wire call (client-only), wire "
             "Requests with no client call (wire-only), wire calls not inside their client call (outside).")
    L.append("")
    L.append("### Two-way calls")
    L.append("")
    L.append("| payload | target B | arg bytes | request_bytes | calls | client p50 | client p99 | wire p50 | wire p99 | server p50 | client ORB p50 | share | mismatches | drops |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r, s in two_rows:
        L.append("| %s | %d | %s | %s | %d | %s | %s | %s | %s | %s | %s | %s%% | %s | %s |" % (
            KIND_TEXT[r["kind"]], r["target"], r["argb"], "/".join(map(str, s["req_bytes"])),
            s["calls"], f1(s["client_p50"]), f1(s["client_p99"]), f1(s.get("total_p50", float("nan"))),
            f1(s.get("total_p99", float("nan"))), f1(s.get("server_p50", float("nan"))),
            f1(s.get("diff_p50", float("nan"))), f1(s.get("share_p50", float("nan"))), mism(s), r["drops"]))
    L.append("")
    L.append("All times in µs. request_bytes = the whole GIOP Request as giopscope saw it (header, "
             "request header with the object key and operation, padding, arguments; several values when "
             "the first call of a connection carried service contexts).")
    L.append("")
    L.append("### Oneway calls")
    L.append("")
    L.append("| payload | target B | arg bytes | request_bytes | calls | client send p50 | client send p99 | first byte after p50 | request on wire p50 | request on wire p99 | left after return | mismatches | drops |")
    L.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r, s in one_rows:
        L.append("| %s | %d | %s | %s | %d | %s | %s | %s | %s | %s | %d | %s | %s |" % (
            KIND_TEXT[r["kind"]], r["target"], r["argb"], "/".join(map(str, s["req_bytes"])),
            s["calls"], f1(s["client_p50"]), f1(s["client_p99"]), f1(s["first_lag_p50"]),
            f1(s["wire_p50"]), f1(s["wire_p99"]), s["after"], mism({**s, "outside": s["outside"] - s["after"]}),
            r["drops"]))
    L.append("")
    L.append("*client send* = the stub call's own time (a oneway returns once the request is handed to "
             "the kernel); *first byte after* = request first byte − the client's t_start (the client "
             "ORB's marshalling and the send syscall up to the veth); *request on wire* = request last "
             "byte − first byte; *left after return*: requests whose last byte crossed the veth after "
             "the stub had returned (the kernel took the bytes and sent them later: a 24 kB request as "
             "the TCP window allows, a small one when a write is held back while an earlier one is "
             "still queued); those are not counted as mismatches.")
    L.append("")
    L.append("### N servers answering deferred requests (DII, `send_multiple_requests_deferred` + `get_next_response`)")
    L.append("")
    L.append("| N servers | rounds | calls | calls/s | client p50 | client p99 | wire p50 | wire p99 | server p50 | send lag p50 | collect lag p50 | client ORB p50 | share | mismatches | drops |")
    L.append("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|")
    for r, s in def_rows:
        L.append("| %d | %d | %d | %.0f | %s | %s | %s | %s | %s | %s | %s | %s | %s%% | %s | %s |" % (
            r["target"], s.get("rounds", 0), s["calls"], s.get("rate", float("nan")),
            f1(s["client_p50"]), f1(s["client_p99"]), f1(s.get("total_p50", float("nan"))),
            f1(s.get("total_p99", float("nan"))), f1(s.get("server_p50", float("nan"))),
            f1(s["first_lag_p50"]), f1(s.get("tail_p50", float("nan"))), f1(s.get("diff_p50", float("nan"))),
            f1(s.get("share_p50", float("nan"))), mism(s), r["drops"]))
    L.append("")
    L.append("Each server is its own `work_server` process on its own port; the servant sleeps %s µs. Per "
             "round the client builds one `work` Request per server, sends each (t_start right before "
             "its send), then collects all N with `get_next_response` (t_end as each returns); the first "
             "%s rounds are warm-up. *send lag* = wire request first byte − t_start (omniORB hands each "
             "deferred request to a thread of its async invoker, which marshals and sends it); *collect "
             "lag* = t_end − wire reply last byte (the reply waits for the thread, then in "
             "`get_next_response`'s queue: with no finished request it blocks on the oldest one still "
             "out); calls/s = calls / (last t_end − first t_start) over the measured rounds."
             % (meta.get("usec", "?"), meta.get("def_warmup", "?")))
    L.append("")
    L.append("### What it says")
    L.append("")
    L.extend(what_it_says(two_rows, one_rows, def_rows, meta.get("usec", "?")))
    L.append("")
    body = "\n".join(L) + "\n"
    sys.stdout.write(body)
    if a.doc:
        write_doc(a.doc, body)


def what_it_says(two_rows, one_rows, def_rows, usec):
    """The paragraph, from the numbers (so that a rerun keeps it true)."""
    out = []
    ok = lambda x: x == x
    if two_rows:
        small = [(r, s) for r, s in two_rows if r["target"] < 1000 and ok(s.get("share_p50", float("nan")))]
        big = [(r, s) for r, s in two_rows if r["target"] >= 1000 and ok(s.get("share_p50", float("nan")))]
        txt = []
        if small:
            lo = min(s["share_p50"] for r, s in small)
            hi = max(s["share_p50"] for r, s in small)
            srv = [s["server_p50"] for r, s in small]
            txt.append("At about 144 bytes a two-way call's median spends %.0f–%.0f%% of its client-side "
                       "latency outside the wire interval (client ORB, syscalls, scheduling), while the "
                       "server holds it %.0f–%.0f µs (server_us p50; request and reply are one segment "
                       "each, so total_us = server_us): on one host both ends do the same work (a "
                       "wake-up, an unmarshal, a marshal, a send), and each takes about half."
                       % (lo, hi, min(srv), max(srv)))
        if big:
            lo = min(s["share_p50"] for r, s in big)
            hi = max(s["share_p50"] for r, s in big)
            worst = max(big, key=lambda rs: rs[1]["server_p50"])
            best = min(big, key=lambda rs: rs[1]["server_p50"])
            txt.append("At 24 016 bytes the client's own share is %.0f–%.0f%%, and server_us p50 (the far "
                       "ORB unmarshalling the payload and marshalling the echo) ranges from %.0f µs (%s) "
                       "to %.0f µs (%s)."
                       % (lo, hi, best[1]["server_p50"], KIND_TEXT[best[0]["kind"]],
                          worst[1]["server_p50"], KIND_TEXT[worst[0]["kind"]]))
        bad = sum(s["client_only"] + s["wire_only"] + s.get("outside", 0) for r, s in two_rows)
        calls = sum(s["calls"] for r, s in two_rows)
        txt.append("Of %d matched two-way calls, %d did not match or did not lie inside their client "
                   "call." % (calls, bad))
        out.append(" ".join(txt))
        out.append("")
    if one_rows:
        txt = []
        for tgt in sorted(set(r["target"] for r, s in one_rows)):
            rs = [(r, s) for r, s in one_rows if r["target"] == tgt]
            cp = [s["client_p50"] for r, s in rs]
            wp = [s["wire_p50"] for r, s in rs]
            fl = [s["first_lag_p50"] for r, s in rs]
            after = sum(s["after"] for r, s in rs)
            calls = sum(s["calls"] for r, s in rs)
            on_wire = ("each request is one segment on the wire" if max(wp) == 0 else
                       "a request takes %.0f–%.0f µs from its first to its last byte on the wire"
                       % (min(wp), max(wp)))
            txt.append("Oneways of ~%d bytes: the stub returns after %.0f–%.0f µs (p50) and %s; %d of %d "
                       "requests left (in part or whole) after the stub had returned."
                       % (tgt, min(cp), max(cp), on_wire, after, calls))
            behind = [(r, s) for r, s in rs if s["first_lag_p50"] > s["client_p50"]]
            if behind:
                txt.append("For %s the first byte reached the veth %.0f–%.0f µs (p50) after the call "
                           "began, longer than the stub took: sent back to back, these oneways outran "
                           "the receiver and queued in the client's socket, so their wire stamps measure "
                           "that backlog, not the call."
                           % ("; ".join(KIND_TEXT[r["kind"]] for r, s in behind),
                              min(s["first_lag_p50"] for r, s in behind),
                              max(s["first_lag_p50"] for r, s in behind)))
        out.append(" ".join(txt))
        out.append("")
    if def_rows:
        txt = []
        first, last = def_rows[0][1], def_rows[-1][1]
        txt.append("Deferred requests: with %d server%s the client sees %.0f µs per call (p50) for %.0f µs "
                   "on the wire (the servant's %s µs sleep included), the client ORB's part %.0f%%; with "
                   "%d servers %.0f µs for %.0f µs on the wire, the client ORB's part (send lag %.0f µs + "
                   "collect lag %.0f µs: its invoker threads and `get_next_response`'s queue) being "
                   "%.0f%% of the client's time at the median."
                   % (def_rows[0][0]["target"], "" if def_rows[0][0]["target"] == 1 else "s", first["client_p50"], first.get("total_p50", float("nan")),
                      usec, first.get("share_p50", float("nan")),
                      def_rows[-1][0]["target"], last["client_p50"], last.get("total_p50", float("nan")),
                      last["first_lag_p50"], last.get("tail_p50", float("nan")),
                      last.get("share_p50", float("nan"))))
        rates = ", ".join("%.0f (N=%d)" % (s.get("rate", float("nan")), r["target"]) for r, s in def_rows)
        txt.append("Calls per second: %s." % rates)
        out.append(" ".join(txt))
    return out


def write_doc(path, body):
    try:
        with open(path) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = ""
    block = BEGIN + "\n" + body + END
    if BEGIN in doc and END in doc:
        i, j = doc.index(BEGIN), doc.index(END) + len(END)
        new = doc[:i] + block + doc[j:]
    else:
        new = doc.rstrip("\n") + ("\n\n" if doc.strip() else "") + block + "\n"
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(path)), prefix=".benchmarks.")
    with os.fdopen(fd, "w") as f:
        f.write(new)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)
    sys.stderr.write("analyse: wrote the workloads section of %s\n" % path)


if __name__ == "__main__":
    main()
