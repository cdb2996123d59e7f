#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""compare_pairs.py: compare a pairs CSV (OURS) with the expected one.

usage: compare_pairs.py EXPECTED.csv OURS.csv [--tolerance-ns N] [--ignore COL,...]
                        [--no-order] [--max-report N]

Both files are pairs CSVs (docs/output.md, "The per-call record").  Rows are matched on
(client, server, request_id, kind); when a key occurs several times (request
ids reused), its rows are matched in t_request_first order.  For each matched
row every column that is not empty in EXPECTED (empty = unknown, not
compared) and not --ignore'd must agree:

  giop operation oneway status request_bytes reply_bytes retransmits   same text
  t_request_first t_request_last t_reply_first t_reply_last            within N ns (default 1000)
  total_us server_us                                                   within 2 N ns

OURS must also be well-formed: the exact header (extra columns only after the
17 of docs/output.md), RFC 4180 minimal quoting, canonical endpoints, 9 decimals
in t_*, 3 in *_us, known kinds and statuses, reply columns all empty or all
set, total_us/server_us consistent with its own timestamps, and (unless
--no-order) rows ordered by (t_request_first, client, request_id).

Prints each difference (at most --max-report of each sort), then one line

  compare: M matched, X missing, Y extra, Z mismatched

(Z = matched rows with at least one differing column).  Exit status: 0 when
there is no difference at all, 1 when there is any (including format or order
problems in OURS), 2 when an input cannot be used (unreadable, no pairs CSV
header, malformed EXPECTED).
"""
import argparse
import csv
import io
import ipaddress
import re
import sys

COLUMNS = ("client,server,request_id,giop,kind,operation,oneway,status,"
           "request_bytes,reply_bytes,t_request_first,t_request_last,"
           "t_reply_first,t_reply_last,total_us,server_us,retransmits,gap_fills,capture_loss").split(",")
KEY = ("client", "server", "request_id", "kind")
EXACT = ("giop", "operation", "oneway", "status", "request_bytes", "reply_bytes", "retransmits",
         "gap_fills", "capture_loss")
STAMPS = ("t_request_first", "t_request_last", "t_reply_first", "t_reply_last")
DURATIONS = ("total_us", "server_us")
REPLY_COLS = ("reply_bytes", "t_reply_first", "t_reply_last", "total_us", "server_us")
REPLY_STATUSES = {"NO_EXCEPTION", "USER_EXCEPTION", "SYSTEM_EXCEPTION", "LOCATION_FORWARD",
                  "LOCATION_FORWARD_PERM", "NEEDS_ADDRESSING_MODE"}
LOCATE_STATUSES = {"UNKNOWN_OBJECT", "OBJECT_HERE", "OBJECT_FORWARD", "OBJECT_FORWARD_PERM",
                   "LOC_SYSTEM_EXCEPTION", "LOC_NEEDS_ADDRESSING_MODE"}
NO_REPLY_STATUSES = {"ONEWAY", "CANCELLED", "NO_REPLY"}

STAMP_RE = re.compile(r"\d+\.\d{9}\Z")
DURATION_RE = re.compile(r"-?\d+\.\d{3}\Z")
UINT_RE = re.compile(r"(0|[1-9]\d*)\Z")


class Unusable(Exception):
    pass


# ------------------------------------------------------------------ values
def stamp_ns(text):
    """'1795997789.512594877' -> int ns; ValueError unless 9 decimals."""
    if not STAMP_RE.match(text):
        raise ValueError(text)
    whole, frac = text.split(".")
    return int(whole) * 1000000000 + int(frac)


def duration_ns(text):
    """'-12.345' (microseconds) -> int ns; ValueError unless 3 decimals."""
    if not DURATION_RE.match(text):
        raise ValueError(text)
    neg = text.startswith("-")
    whole, frac = text.lstrip("-").split(".")
    v = int(whole) * 1000 + int(frac)
    return -v if neg else v


def canonical_endpoint(text):
    """The pairs CSV spelling (docs/output.md) of an endpoint, or None if text is not one."""
    host, sep, port = text.rpartition(":")
    if not sep or not UINT_RE.match(port) or int(port) > 65535:
        return None
    try:
        if host.startswith("[") and host.endswith("]"):
            ip = ipaddress.IPv6Address(host[1:-1])
            # RFC 5952 as glibc's inet_ntop writes it (dotted quad kept for
            # ::ffff:a.b.c.d and ::a.b.c.d)
            w = [int.from_bytes(ip.packed[i:i + 2], "big") for i in range(0, 16, 2)]
            lead = next((i for i, x in enumerate(w) if x), 8)
            if lead == 6 or (lead == 5 and w[5] == 0xFFFF):
                addr = "::%s%s" % ("ffff:" if lead == 5 else "", ipaddress.IPv4Address(ip.packed[12:]))
            else:
                addr = ip.compressed
            return "[%s]:%d" % (addr, int(port))
        return "%s:%d" % (ipaddress.IPv4Address(host), int(port))
    except ValueError:
        return None


# ------------------------------------------------------------------ loading
class Table:
    def __init__(self, path, what):
        self.path = path
        try:
            with open(path, newline="", encoding="utf-8") as f:
                self.text = f.read()
        except (OSError, UnicodeDecodeError) as e:
            raise Unusable("cannot read %s %s: %s" % (what, path, e))
        try:
            records = list(csv.reader(io.StringIO(self.text, newline="")))
        except csv.Error as e:
            raise Unusable("%s %s is not CSV: %s" % (what, path, e))
        if not records:
            raise Unusable("%s %s is empty (no header)" % (what, path))
        self.header = records[0]
        missing = [c for c in COLUMNS if c not in self.header]
        if missing:
            raise Unusable("%s %s has no pairs CSV header (missing %s)"
                           % (what, path, ",".join(missing)))
        self.rows = []
        self.ragged = []
        for n, rec in enumerate(records[1:], 2):
            if not rec:
                continue
            if len(rec) != len(self.header):
                self.ragged.append((n, len(rec)))
                rec = (rec + [""] * len(self.header))[:len(self.header)]
            row = dict(zip(self.header, rec))
            row["_line"] = n
            self.rows.append(row)


def check_expected(table):
    """EXPECTED must itself be sound, or the comparison means nothing."""
    if table.ragged:
        n, k = table.ragged[0]
        raise Unusable("expected %s line %d has %d fields, not %d"
                       % (table.path, n, k, len(table.header)))
    for r in table.rows:
        try:
            stamp_ns(r["t_request_first"])
            for c in STAMPS:
                if r[c]:
                    stamp_ns(r[c])
            for c in DURATIONS:
                if r[c]:
                    duration_ns(r[c])
        except ValueError as e:
            raise Unusable("expected %s line %d: bad time %s" % (table.path, r["_line"], e))
        if not r["client"] or not r["server"] or not UINT_RE.match(r["request_id"]):
            raise Unusable("expected %s line %d: no usable key" % (table.path, r["_line"]))


NEST_PARENT = ("parent_client", "parent_server", "parent_request_id", "parent_basis")


def nest_problems(r, reply_present, durs, flag, bad):
    """The nesting columns (pairs-csv.md): a parent all set or all empty, its basis
    time or thread, downstream_us empty exactly without a reply, within server_us."""
    set_ = [c for c in NEST_PARENT if r.get(c)]
    if set_ and len(set_) != len(NEST_PARENT):
        bad.append("parent columns partly empty (%s set)" % ",".join(set_))
    if r.get("parent_basis") and r["parent_basis"] not in ("time", "thread"):
        flag("parent_basis", "not time or thread")
    for c in ("parent_client", "parent_server"):
        if r.get(c) and canonical_endpoint(r[c]) != r[c]:
            flag(c, "not a canonical endpoint")
    if r.get("parent_request_id") and (not UINT_RE.match(r["parent_request_id"])
                                       or int(r["parent_request_id"]) > 0xFFFFFFFF):
        flag("parent_request_id", "not an unsigned 32-bit decimal")
    ds = r.get("downstream_us", "")
    if bool(ds) != bool(reply_present):
        flag("downstream_us", "set exactly when the reply columns are")
    elif ds:
        try:
            v = duration_ns(ds)
        except ValueError:
            flag("downstream_us", "not microseconds with 3 decimals")
        else:
            if v < 0 or ("server_us" in durs and v > durs["server_us"]):
                flag("downstream_us", "not within 0..server_us")


def format_problems(table):
    """Everything wrong with the shape of OURS, as (line, text)."""
    out = []
    if table.header[:len(COLUMNS)] != COLUMNS:
        out.append((1, "header is not the pairs CSV header: %s" % ",".join(table.header)))
    for n, k in table.ragged:
        out.append((n, "%d fields, header has %d" % (k, len(table.header))))
    # RFC 4180 quoting only where needed: writing the records back out with
    # minimal quoting must give the file again (line ends aside).
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerows(csv.reader(io.StringIO(table.text, newline="")))
    mine = table.text.replace("\r\n", "\n").split("\n")
    want = buf.getvalue().split("\n")
    for n, (a, b) in enumerate(zip(mine, want), 1):
        if a != b:
            out.append((n, "quoting is not RFC 4180 minimal quoting: %r" % a[:120]))
            break
    for r in table.rows:
        bad = []

        def flag(col, why):
            bad.append("%s=%r (%s)" % (col, r[col], why))

        for c in ("client", "server"):
            canon = canonical_endpoint(r[c])
            if canon is None:
                flag(c, "not ADDR:PORT or [V6ADDR]:PORT")
            elif canon != r[c]:
                flag(c, "canonical form is %s" % canon)
        if not UINT_RE.match(r["request_id"]) or int(r["request_id"]) > 0xFFFFFFFF:
            flag("request_id", "not an unsigned 32-bit decimal")
        if r["giop"] not in ("1.0", "1.1", "1.2", "1.3"):
            flag("giop", "not 1.0-1.3")
        if r["kind"] not in ("Request", "LocateRequest"):
            flag("kind", "not Request or LocateRequest")
        if r["kind"] == "LocateRequest" and r["operation"]:
            flag("operation", "a LocateRequest has none")
        if r["oneway"] not in ("0", "1"):
            flag("oneway", "not 0 or 1")
        for c in ("request_bytes", "retransmits"):
            if not UINT_RE.match(r[c]):
                flag(c, "not an unsigned decimal")
        if r["gap_fills"] and not UINT_RE.match(r["gap_fills"]):
            flag("gap_fills", "not an unsigned decimal")
        if r["capture_loss"] not in ("0", "1"):
            flag("capture_loss", "not 0 or 1")
        if r["capture_loss"] == "0" and not r["gap_fills"]:
            flag("gap_fills", "empty although the capture lost nothing of the call")
        if r["reply_bytes"] and not UINT_RE.match(r["reply_bytes"]):
            flag("reply_bytes", "not an unsigned decimal")
        stamps = {}
        for c in STAMPS:
            if r[c] or c in ("t_request_first", "t_request_last"):
                try:
                    stamps[c] = stamp_ns(r[c])
                except ValueError:
                    flag(c, "not seconds with 9 decimals")
        durs = {}
        for c in DURATIONS:
            if r[c]:
                try:
                    durs[c] = duration_ns(r[c])
                except ValueError:
                    flag(c, "not microseconds with 3 decimals")
                else:
                    if durs[c] < 0:
                        flag(c, "negative (pairs CSV: never)")
        present = [c for c in REPLY_COLS if r[c]]
        status = r["status"]
        if present and len(present) != len(REPLY_COLS):
            bad.append("reply columns partly empty (%s set)" % ",".join(present))
        if status in NO_REPLY_STATUSES:
            if present:
                bad.append("status %s but reply columns set" % status)
        elif status in REPLY_STATUSES or status in LOCATE_STATUSES:
            if not present:
                bad.append("status %s but no reply columns" % status)
            want = LOCATE_STATUSES if r["kind"] == "LocateRequest" else REPLY_STATUSES
            if status not in want:
                flag("status", "not a status for a %s" % r["kind"])
        else:
            flag("status", "unknown status")
        if status == "ONEWAY" and r["oneway"] != "1":
            bad.append("status ONEWAY but oneway=%r" % r["oneway"])
        if "parent_basis" in r:
            nest_problems(r, present, durs, flag, bad)
        if len(stamps) == 4 and "total_us" in durs and \
                abs(durs["total_us"] - (stamps["t_reply_last"] - stamps["t_request_first"])) > 1:
            flag("total_us", "is not t_reply_last - t_request_first")
        if len(stamps) == 4 and "server_us" in durs and \
                abs(durs["server_us"] - (stamps["t_reply_first"] - stamps["t_request_last"])) > 1:
            flag("server_us", "is not t_reply_first - t_request_last")
        if bad:
            out.append((r["_line"], "; ".join(bad)))
    return out


def order_problems(table):
    out = []
    prev = None
    for r in table.rows:
        try:
            k = (stamp_ns(r["t_request_first"]), r["client"], int(r["request_id"]))
        except ValueError:
            continue   # a format problem, reported as such
        if prev is not None and k < prev[0]:
            out.append((r["_line"], "comes before line %d in (t_request_first, client, "
                        "request_id) order" % prev[1]))
        prev = (k, r["_line"])
    return out


# ------------------------------------------------------------------ comparing
def describe(r):
    return "%s -> %s id %s %s%s" % (r["client"], r["server"], r["request_id"], r["kind"],
                                    " " + r["operation"] if r["operation"] else "")


def first_ns(r):
    try:
        return stamp_ns(r["t_request_first"])
    except ValueError:
        return -1


def compare_row(e, o, tol, ignore, worst):
    diffs = []
    for c in EXACT:
        if c in ignore or e[c] == "":
            continue
        if o[c] != e[c]:
            diffs.append("%s: expected %r, got %r" % (c, e[c], o[c]))
    for cols, parse, limit in ((STAMPS, stamp_ns, tol), (DURATIONS, duration_ns, 2 * tol)):
        for c in cols:
            if c in ignore or e[c] == "":
                continue
            want = parse(e[c])
            try:
                got = parse(o[c])
            except ValueError:
                diffs.append("%s: expected %s, got %r" % (c, e[c], o[c]))
                continue
            d = got - want
            if cols is STAMPS and abs(d) > worst[0]:
                worst[:] = [abs(d), c, describe(e)]
            if abs(d) > limit:
                diffs.append("%s: expected %s, got %s (%+d ns)" % (c, e[c], o[c], d))
    return diffs


def main():
    ap = argparse.ArgumentParser(description="Compare a pairs CSV with the expected one.")
    ap.add_argument("expected")
    ap.add_argument("ours")
    ap.add_argument("--tolerance-ns", type=int, default=1000, metavar="N",
                    help="allowed |difference| of t_* in ns (total_us/server_us: 2N); default 1000")
    ap.add_argument("--ignore", default="", metavar="COLS",
                    help="comma-separated columns not to compare")
    ap.add_argument("--no-order", action="store_true", help="do not check the row order of OURS")
    ap.add_argument("--max-report", type=int, default=20, metavar="N",
                    help="print at most N differences of each sort (default 20)")
    a = ap.parse_args()
    ignore = set(c.strip() for c in a.ignore.split(",") if c.strip())
    unknown = ignore - set(EXACT + STAMPS + DURATIONS)
    if unknown:
        ap.error("--ignore: not a compared column: %s" % ",".join(sorted(unknown)))
    if a.tolerance_ns < 0:
        ap.error("--tolerance-ns must not be negative")

    try:
        exp = Table(a.expected, "expected")
        check_expected(exp)
        ours = Table(a.ours, "ours")
    except Unusable as e:
        print("compare_pairs: %s" % e, file=sys.stderr)
        print("compare: 0 matched, 0 missing, 0 extra, 0 mismatched (unusable input)")
        return 2

    reports = {k: [] for k in ("format", "order", "missing", "extra", "mismatch")}
    reports["format"] = ["line %d: %s" % p for p in format_problems(ours)]
    if not a.no_order:
        reports["order"] = ["line %d %s" % p for p in order_problems(ours)]

    groups = {}
    for side, table in ((0, exp), (1, ours)):
        for r in table.rows:
            groups.setdefault(tuple(r[k] for k in KEY), ([], []))[side].append(r)
    matched = mismatched = 0
    worst = [0, None, None]
    for key in sorted(groups):
        el, ol = groups[key]
        el.sort(key=first_ns)
        ol.sort(key=first_ns)
        for e, o in zip(el, ol):
            matched += 1
            diffs = compare_row(e, o, a.tolerance_ns, ignore, worst)
            if diffs:
                mismatched += 1
                reports["mismatch"].append((o["_line"], "%s (line %d): %s" % (
                    describe(e), o["_line"], "; ".join(diffs))))
        for e in el[len(ol):]:
            reports["missing"].append((e["_line"], "%s at %s (expected line %d)"
                                       % (describe(e), e["t_request_first"], e["_line"])))
        for o in ol[len(el):]:
            reports["extra"].append((o["_line"], "%s at %s (line %d)"
                                     % (describe(o), o["t_request_first"], o["_line"])))
    for kind in ("mismatch", "missing", "extra"):
        reports[kind] = [text for _, text in sorted(reports[kind])]

    for kind, lines in reports.items():
        for text in lines[:a.max_report]:
            print("%s: %s" % (kind, text))
        if len(lines) > a.max_report:
            print("%s: ... and %d more" % (kind, len(lines) - a.max_report))
    if worst[1]:
        print("largest timestamp difference: %d ns (%s, %s)" % tuple(worst))
    if reports["format"] or reports["order"]:
        print("format: %d problems in %s; order: %d rows out of order"
              % (len(reports["format"]), a.ours, len(reports["order"])))
    print("compare: %d matched, %d missing, %d extra, %d mismatched"
          % (matched, len(reports["missing"]), len(reports["extra"]), mismatched))
    return 1 if any(reports.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
