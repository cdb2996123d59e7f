#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""prom_check.py SCRAPE.txt PAIRS.csv -- a scrape of giopscope's /metrics against the pairs
CSV written by the same run up to the moment of the scrape.

Shared by tests/integration/report_metrics.sh (live) and dpdk_counters.sh (dpdk). Prints three
lines, each "NAME ok DETAIL" or "NAME bad DETAIL":
  FORMAT   every line is a "# HELP", a "# TYPE NAME counter|gauge|histogram" or a sample of the
           Prometheus text format 0.0.4 (name, optional {label="value",...}, a float value)
  BUCKETS  per histogram and operation, the buckets never decrease and +Inf equals _count
  COUNTS   per operation: giopscope_calls_total = rows of the pairs CSV,
           giopscope_call_duration_seconds_count = rows with a reply (total_us set),
           giopscope_call_errors_total = rows whose status is an exception, UNKNOWN_OBJECT,
           LOC_SYSTEM_EXCEPTION or NO_REPLY; the operation label of a LocateRequest row is
           "(LocateRequest)", of a row without an operation "(unknown)"
Exit status 0 when all three are ok, 1 otherwise (the lines say which).
"""
import csv
import re
import sys
from collections import Counter, defaultdict

ERROR_STATUSES = ("USER_EXCEPTION", "SYSTEM_EXCEPTION", "UNKNOWN_OBJECT", "LOC_SYSTEM_EXCEPTION", "NO_REPLY")


def check(text, rows):
    out = []
    name = r"[a-zA-Z_:][a-zA-Z0-9_:]*"
    sample = re.compile(r'^(%s)(\{(%s="(\\[\\"n]|[^"\\])*")(,%s="(\\[\\"n]|[^"\\])*")*\})? (\S+)$' % (name, name, name))
    bad, vals = [], {}
    for line in text.splitlines():
        if line.startswith("# HELP ") or re.match(r"^# TYPE %s (counter|gauge|histogram)$" % name, line):
            continue
        m = sample.match(line)
        if not m:
            bad.append(line)
            continue
        try:
            float(line.rsplit(" ", 1)[1].replace("+Inf", "inf"))
        except ValueError:
            bad.append(line)
            continue
        vals[line.rsplit(" ", 1)[0]] = float(line.rsplit(" ", 1)[1].replace("+Inf", "inf"))
    out.append("FORMAT %s %d lines, %d bad%s" % ("ok" if text and not bad else "bad", len(text.splitlines()), len(bad),
                                                 (": " + bad[0]) if bad else ""))
    # buckets cumulative, +Inf = _count
    cum_bad = []
    series = defaultdict(list)
    for k, v in vals.items():
        m = re.match(r'^(giopscope_\w+_seconds)_bucket\{operation="(.*)",le="([^"]+)"\}$', k)
        if m:
            series[(m.group(1), m.group(2))].append((float(m.group(3).replace("+Inf", "inf")), v))
    for (metric, op), b in series.items():
        b.sort()
        if any(b[i][1] > b[i + 1][1] for i in range(len(b) - 1)) or \
                b[-1][1] != vals.get('%s_count{operation="%s"}' % (metric, op)):
            cum_bad.append((metric, op))
    out.append("BUCKETS %s %d histograms%s" % ("ok" if series and not cum_bad else "bad", len(series), cum_bad[:2]))
    # counts against the pairs rows

    def label(r):
        return "(LocateRequest)" if r["kind"] == "LocateRequest" else (r["operation"] or "(unknown)")

    calls = Counter(label(r) for r in rows)
    answered = Counter(label(r) for r in rows if r["total_us"] != "")
    errs = Counter(label(r) for r in rows if r["status"] in ERROR_STATUSES)
    diff = []
    ops = set(calls) | {re.search(r'operation="(.*)"', k).group(1) for k in vals if k.startswith("giopscope_calls_total{")}
    for op in sorted(ops):
        got = (vals.get('giopscope_calls_total{operation="%s"}' % op, 0),
               vals.get('giopscope_call_duration_seconds_count{operation="%s"}' % op, 0),
               vals.get('giopscope_call_errors_total{operation="%s"}' % op, 0))
        want = (calls[op], answered[op], errs[op])
        if got != want:
            diff.append("%s: scrape %s, pairs %s" % (op, got, want))
    out.append("COUNTS %s %d rows, %d operations%s" % ("ok" if rows and not diff else "bad", len(rows), len(calls),
                                                       ("; " + "; ".join(diff[:3])) if diff else ""))
    return out


def main(argv):
    if len(argv) != 3:
        sys.stderr.write("usage: prom_check.py SCRAPE.txt PAIRS.csv\n")
        return 2
    with open(argv[1]) as f:
        text = f.read()
    with open(argv[2], newline="") as f:
        rows = list(csv.DictReader(f))
    lines = check(text, rows)
    print("\n".join(lines))
    return 0 if all(" ok " in l for l in lines) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
