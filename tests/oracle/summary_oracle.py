#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""summary_oracle.py: what giopscope's summary (`read --format csv`, with `--by` and
`--interval`) must say, computed from a pairs file, and a check of a summary against it.

    summary_oracle.py check PAIRS SUMMARY.csv [--by op|conn|object|server|priority]
                      [--interval SECONDS] [--object-keys KEYS.csv]
    summary_oracle.py golden CAPTURE OPTIONS EXPECTED.csv OUTPUT.csv [--cases cases.txt]

PAIRS is a pairs file (CSV with the header of docs/output.md, or JSON lines): the
expected calls of a capture derived by tests/oracle/tshark_pairs.py, or giopscope's own
`--pairs` output of the same capture (then the check is "the summary agrees with the
calls it was made of").  From it, without any giopscope code:

  * the groups: operation (LocateRequests are one group, "(LocateRequest)"), connection
    ("client -> server"), server endpoint, RTCorbaPriority (the `priority` key of JSON
    lines; a pairs CSV has no such column: every call is "(none)" -- true of the shipped
    omniORB captures, whose only service context is CodeSets), object key (from
    --object-keys, a CSV of client,request_id,kind,object_key_hex derived with tshark by
    tests/oracle/tshark_object_keys.py; printable bytes as is, others as \\xNN);
  * per group and for "(all)": calls (rows), errors (USER_EXCEPTION, SYSTEM_EXCEPTION,
    UNKNOWN_OBJECT, LOC_SYSTEM_EXCEPTION, NO_REPLY), answered (rows with a reply);
  * exact percentiles (nearest rank: the smallest value with at least ceil(q*n) values at
    or below it) and the max of total = t_reply_last - t_request_first and server =
    t_reply_first - t_request_last (negative counted as 0) over the answered calls;
  * per window of --interval (window start = t_request_first rounded down to a multiple of
    the width since the epoch; only windows with calls): calls, errors, answered, total
    p50/p90/p99/max.

A summary agrees when it has exactly the same groups and windows with exactly these
counts, its max equal to the exact max, and each percentile P reported for an exact
percentile X within the histogram's documented error (analysis/hist.h, docs/output.md:
a recorded value is known to within 1/2^(GS_HIST_SUB_BITS-1) = 1/128 of itself, and a
quantile is the top of its bucket, never above the max):  X <= P <= min(max, X + X/128).
Groups come most calls first, "(all)" last; windows in time order.

`golden` is what tests/golden/run.sh runs for a case whose options are not --pairs: the
output must equal the expected file (same header, same rows; rows of equal `calls` may
come in any order), and the expected file must agree (as above) with the pairs oracle of
the same capture: the expected CSV of its `--pairs --format csv` case in cases.txt
(object keys: tests/golden/<capture name>.object_keys.csv).

Exit status: 0 agrees, 1 differs, 2 unusable input.
"""

import argparse
import csv
import io
import json
import os
import re
import sys
from fractions import Fraction

ERRORS = {"USER_EXCEPTION", "SYSTEM_EXCEPTION", "UNKNOWN_OBJECT", "LOC_SYSTEM_EXCEPTION", "NO_REPLY"}
QUANTILES = [("p50", Fraction(50, 100)), ("p90", Fraction(90, 100)), ("p99", Fraction(99, 100)),
             ("p999", Fraction(999, 1000))]
REL_ERR = Fraction(1, 128)   # 1 / 2^(GS_HIST_SUB_BITS - 1)



class Unusable(Exception):
    pass


def stamp_ns(text):
    """'1795998968.998511240' -> integer ns (exact)."""
    text = str(text).strip()
    m = re.fullmatch(r"(\d+)(?:\.(\d{1,9}))?", text)
    if not m:
        raise Unusable("bad time stamp %r" % text)
    return int(m.group(1)) * 1000000000 + int((m.group(2) or "").ljust(9, "0"))


def us_ns(text):
    """'24.319' (microseconds, 3 decimals) -> integer ns."""
    return int(round(Fraction(str(text).strip()) * 1000))


def read_pairs(path):
    with open(path, newline="") as f:
        data = f.read()
    rows = []
    if data.lstrip().startswith("{"):
        for line in data.splitlines():
            if not line.strip():
                continue
            o = json.loads(line)
            if o.get("type") not in (None, "call"):
                continue
            rows.append({k: ("" if v is None else v) for k, v in o.items()})
    else:
        rows = list(csv.DictReader(io.StringIO(data)))
        if rows and "t_reply_last" not in rows[0]:
            raise Unusable("%s: not a pairs file" % path)
    return rows


def key_text(raw):
    out = []
    for ch in raw:
        if 0x20 <= ch < 0x7f and ch != 0x5c:
            out.append(chr(ch))
        else:
            out.append("\\x%02x" % ch)
    return "".join(out)


def read_object_keys(path):
    keys = {}
    with open(path, newline="") as f:
        for r in csv.DictReader(f):
            keys[(r["client"], int(r["request_id"]), r["kind"])] = key_text(bytes.fromhex(r["object_key_hex"]))
    return keys


def group_of(row, by, keys):
    if by == "op":
        return "(LocateRequest)" if row["kind"] == "LocateRequest" else row["operation"]
    if by == "conn":
        return "%s -> %s" % (row["client"], row["server"])
    if by == "server":
        return row["server"]
    if by == "priority":
        p = row.get("priority", "")
        return "(none)" if p == "" else str(int(p))
    if by == "object":
        if keys is None:
            raise Unusable("--by object needs --object-keys")
        k = (row["client"], int(row["request_id"]), row["kind"])
        if k not in keys:
            raise Unusable("no object key for %s request %s (%s)" % k)
        return keys[k] or "(none)"
    raise Unusable("unknown --by %r" % by)


class Acc:
    def __init__(self):
        self.calls = self.errors = self.answered = 0
        self.gap_filled = self.capture_loss = 0
        self.unknown_loss = False   # a row whose gap_fills/capture_loss the oracle left empty
        self.total = []
        self.server = []

    def add(self, row):
        self.calls += 1
        if row["status"] in ERRORS:
            self.errors += 1
        if row.get("capture_loss", "") == "1":
            self.capture_loss += 1
        elif row.get("capture_loss", "") == "0" and row.get("gap_fills", "") not in ("", "0"):
            self.gap_filled += 1
        elif row.get("capture_loss", "") == "":
            self.unknown_loss = True
        if str(row["t_reply_last"]) != "":
            self.answered += 1
            self.total.append(max(0, stamp_ns(row["t_reply_last"]) - stamp_ns(row["t_request_first"])))
            self.server.append(max(0, stamp_ns(row["t_reply_first"]) - stamp_ns(row["t_request_last"])))


def exact_quantile(sorted_values, q):
    n = len(sorted_values)
    rank = max(1, -((-q.numerator * n) // q.denominator))   # ceil(q * n)
    return sorted_values[rank - 1]


def oracle(rows, by, interval_ns, keys):
    groups, allacc = {}, Acc()
    for r in rows:
        groups.setdefault(group_of(r, by, keys), Acc()).add(r)
        allacc.add(r)
    windows = {}
    if interval_ns:
        for r in rows:
            t = stamp_ns(r["t_request_first"])
            windows.setdefault(t - t % interval_ns, Acc()).add(r)
    return groups, allacc, windows


def parse_summary(path):
    """-> (group header, [group rows], interval header or None, [interval rows])"""
    with open(path, newline="") as f:
        text = f.read()
    sections = [s for s in re.split(r"\n\s*\n", text.strip("\n")) if s.strip()]
    if not sections:
        raise Unusable("%s: empty summary" % path)
    parsed = [list(csv.reader(io.StringIO(s))) for s in sections]
    head = parsed[0][0]
    if head[:4] != ["operation", "calls", "errors", "answered"]:
        raise Unusable("%s: not a summary CSV (header %r)" % (path, head))
    groups = [dict(zip(head, r)) for r in parsed[0][1:]]
    ihead, irows = None, []
    for p in parsed[1:]:
        if p[0][:1] == ["window_start"]:
            ihead = p[0]
            irows = [dict(zip(ihead, r)) for r in p[1:]]
        else:
            raise Unusable("%s: unexpected section %r" % (path, p[0]))
    return head, groups, ihead, irows


class Checker:
    def __init__(self, what):
        self.what = what
        self.problems = []
        self.checked_pct = 0
        self.worst = Fraction(0)

    def bad(self, msg):
        self.problems.append("%s: %s" % (self.what, msg))

    def counts(self, label, got, acc):
        cols = ("calls", "errors", "answered")
        # groups (not time windows) also count the calls with gap fills and with capture
        # loss, where the pairs know them
        if "gap_filled" in got and not acc.unknown_loss:
            cols += ("gap_filled", "capture_loss")
        for col in cols:
            want = getattr(acc, col)
            if got.get(col) != str(want):
                self.bad("%s: %s %s, the pairs give %d" % (label, col, got.get(col), want))

    def hist(self, label, got, values, prefix, names):
        values = sorted(values)
        if not values:
            for n in names + ["max"]:
                if got.get("%s_%s_us" % (prefix, n), "") != "":
                    self.bad("%s: %s_%s_us %r with no answered call" % (label, prefix, n,
                             got.get("%s_%s_us" % (prefix, n))))
            return
        vmax = values[-1]
        col = "%s_max_us" % prefix
        if col not in got or got[col] == "" or us_ns(got[col]) != vmax:
            self.bad("%s: %s %s, the exact max is %.3f" % (label, col, got.get(col), vmax / 1000))
        for n, q in QUANTILES:
            if n not in names:
                continue
            col = "%s_%s_us" % (prefix, n)
            x = exact_quantile(values, q)
            if col not in got or got[col] == "":
                self.bad("%s: %s missing" % (label, col))
                continue
            p = us_ns(got[col])
            hi = min(vmax, x + x * REL_ERR)
            self.checked_pct += 1
            if x <= p <= hi and x:
                self.worst = max(self.worst, Fraction(p - x, x))
            if not (x <= p <= hi):
                self.bad("%s: %s %.3f, exact %.3f: outside [%.3f, %.3f] (histogram error 1/128)"
                         % (label, col, p / 1000, x / 1000, x / 1000, float(hi) / 1000))


def check(pairs_rows, summary_path, by, interval_ns, keys, what):
    ck = Checker(what)
    head, got_groups, ihead, irows = parse_summary(summary_path)
    groups, allacc, windows = oracle(pairs_rows, by, interval_ns, keys)
    seen = {}
    for g in got_groups:
        label = g["operation"]
        if label in seen:
            ck.bad("group %r twice" % label)
        seen[label] = g
    if not got_groups or got_groups[-1]["operation"] != "(all)":
        ck.bad("the last row is not (all)")
    calls_order = [int(g["calls"]) for g in got_groups if g["operation"] != "(all)"]
    if calls_order != sorted(calls_order, reverse=True):
        ck.bad("groups not in decreasing order of calls: %r" % calls_order)
    for label in sorted(set(groups) - set(seen)):
        ck.bad("group %r (%d calls in the pairs) missing" % (label, groups[label].calls))
    for label in sorted(set(seen) - set(groups) - {"(all)"}):
        ck.bad("group %r not in the pairs" % label)
    names = [n for n, _ in QUANTILES]
    for label, acc in list(groups.items()) + [("(all)", allacc)]:
        g = seen.get(label)
        if g is None:
            continue
        ck.counts(label, g, acc)
        ck.hist(label, g, acc.total, "total", names)
        ck.hist(label, g, acc.server, "server", names)
    if interval_ns:
        if ihead is None:
            ck.bad("--interval given but no window section")
        got_w = []
        for r in irows:
            got_w.append(stamp_ns(r["window_start"]))
        if got_w != sorted(got_w):
            ck.bad("windows not in time order")
        if sorted(got_w) != sorted(windows):
            ck.bad("windows %d, the pairs give %d (first difference: %r)" % (
                len(got_w), len(windows), sorted(set(got_w) ^ set(windows))[:3]))
        for r in irows:
            t = stamp_ns(r["window_start"])
            if t in windows:
                label = "window %s" % r["window_start"]
                ck.counts(label, r, windows[t])
                ck.hist(label, r, windows[t].total, "total", ["p50", "p90", "p99"])
    elif ihead is not None:
        ck.bad("a window section without --interval")
    ck.n_groups = len(got_groups)
    ck.n_windows = len(irows)
    return ck


def parse_opts(opts):
    words = opts.split()
    by, interval = "op", None
    for i, w in enumerate(words):
        if w == "--by" and i + 1 < len(words):
            by = words[i + 1]
        if w == "--interval" and i + 1 < len(words):
            interval = words[i + 1]
    if "--pairs" in words:
        raise Unusable("options %r are a pairs case" % opts)
    if "--format" not in words or words[words.index("--format") + 1] != "csv":
        raise Unusable("summary golden cases need --format csv (got %r)" % opts)
    return by, interval


def interval_ns_of(text):
    if text is None:
        return 0
    return int(Fraction(text) * 1000000000)


def same_output(exp_path, out_path):
    """The output equals the expected file; rows of equal calls in any order."""
    problems = []
    eh, eg, eih, eir = parse_summary(exp_path)
    oh, og, oih, oir = parse_summary(out_path)
    if eh != oh:
        problems.append("header %r, expected %r" % (oh, eh))
    if eih != oih:
        problems.append("window header %r, expected %r" % (oih, eih))

    def rows(rs):
        return sorted(tuple(sorted(r.items())) for r in rs)
    if rows(eg) != rows(og):
        e, o = set(rows(eg)), set(rows(og))
        for r in sorted(e - o)[:5]:
            problems.append("expected row missing: %s" % dict(r))
        for r in sorted(o - e)[:5]:
            problems.append("unexpected row: %s" % dict(r))
    if [r["operation"] for r in eg][-1:] != [r["operation"] for r in og][-1:]:
        problems.append("last row differs")
    if [int(r["calls"]) for r in og] != [int(r["calls"]) for r in eg]:
        problems.append("rows not in the expected order of calls")
    if eir != oir:
        problems.append("window rows differ (%d expected, %d written)" % (len(eir), len(oir)))
    return problems


def pairs_case_of(cases, capture):
    cap = capture.lstrip("-")
    with open(cases) as f:
        for line in f:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in line.split("|")]
            if len(parts) != 4:
                continue
            if parts[0].lstrip("-") == cap and parts[1].split() == ["--pairs", "--format", "csv"] \
                    and parts[3] == "0":
                return parts[2]
    raise Unusable("no '%s | --pairs --format csv | EXPECTED | 0' case in %s to check against"
                   % (cap, cases))


def report(ck, ok_extra=""):
    for p in ck.problems[:40]:
        print(p)
    if len(ck.problems) > 40:
        print("... %d more" % (len(ck.problems) - 40))
    print("summary: %d groups, %d windows, %d percentiles checked (worst in bounds +%.3f%%)%s%s" % (
        ck.n_groups, ck.n_windows, ck.checked_pct, float(ck.worst) * 100, ok_extra,
        "" if not ck.problems else ", %d problems" % len(ck.problems)))
    return 0 if not ck.problems else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("pairs")
    c.add_argument("summary")
    c.add_argument("--by", default="op")
    c.add_argument("--interval")
    c.add_argument("--object-keys")
    g = sub.add_parser("golden")
    g.add_argument("capture")
    g.add_argument("options")
    g.add_argument("expected")
    g.add_argument("output")
    g.add_argument("--cases", default="tests/golden/cases.txt")
    a = ap.parse_args()
    try:
        if a.cmd == "check":
            keys = read_object_keys(a.object_keys) if a.object_keys else None
            ck = check(read_pairs(a.pairs), a.summary, a.by, interval_ns_of(a.interval), keys,
                       os.path.basename(a.summary))
            return report(ck)
        by, interval = parse_opts(a.options)
        problems = same_output(a.expected, a.output)
        for p in problems:
            print("output vs %s: %s" % (a.expected, p))
        pairs = pairs_case_of(a.cases, a.capture)
        keys = None
        if by == "object":
            name = os.path.basename(a.capture.lstrip("-"))
            name = name[:name.rindex(".")] if "." in name else name
            keys = read_object_keys(os.path.join(os.path.dirname(a.cases), name + ".object_keys.csv"))
        ck = check(read_pairs(pairs), a.expected, by, interval_ns_of(interval), keys,
                   "%s vs %s" % (os.path.basename(a.expected), os.path.basename(pairs)))
        ck.problems[:0] = ["output: " + p for p in problems]
        return report(ck, ", output = expected" if not problems else "")
    except (Unusable, OSError, KeyError, ValueError) as e:
        print("summary_oracle: %s" % e, file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
