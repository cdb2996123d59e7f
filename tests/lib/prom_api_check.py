#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""prom_api_check.py -- what a Prometheus server scraped from giopscope, against giopscope's
own outputs (tests/integration/prometheus.sh runs it inside the test's network namespace).

usage:
  prom_api_check.py wait-up URL N TIMEOUT
      poll /api/v1/targets until N active targets are up (exit 0) or TIMEOUT s pass (exit 1)
  prom_api_check.py wait-count URL SPEC TIMEOUT
      SPEC: METRIC:INSTANCE:OPERATION=VALUE[,...]; poll instant queries until every one of those
      series has exactly that value (exit 0; prints the evaluation time) or TIMEOUT s pass
  prom_api_check.py wait-rule URL RECORD AFTER TIMEOUT
      poll until every series of the recorded metric RECORD has a sample later than AFTER
      (unix seconds): the rule was evaluated on data ingested by then
  prom_api_check.py check URL TIME RANGE_S [INSTANCE=PAIRS.csv,SCRAPE.txt,SUMMARY.log]...
      the checks below, every query evaluated at TIME (before the targets went away); prints
      "NAME ok DETAIL" or "NAME bad DETAIL" lines, exit 0 when all are ok

The checks:
  counts            per instance and operation: giopscope_calls_total in Prometheus = in the
                    last scrape giopscope served (SCRAPE.txt, fetched with curl) = rows of the
                    pairs CSV; giopscope_call_duration_seconds_count = rows with a reply
  counts-sum        sum by (operation) over the instances = rows of all the pairs files
  p99-increase      histogram_quantile(0.99, sum by (le, operation) (increase(bucket[...])))
                    over all instances, and per instance (sum by (le, operation, instance)),
                    against the nearest-rank p99 of the pairs rows increase() covers: each
                    (instance, operation) series from its first sample to its last (a range
                    and an @ time that leave Prometheus nothing to extrapolate: see the
                    comment in cmd_check); Prometheus sees only increases after a series' first
                    sample, so the first K replies of an operation (K = that first sample of its
                    _count series, read back from Prometheus) are left out
  p99-lifetime      histogram_quantile(0.99, sum by (le, operation) (bucket)) -- the counters
                    since giopscope started -- against the p99 of every pairs row of all
                    instances, and per instance against the p99 giopscope printed in its
                    summary (SUMMARY.log, the text summary of --pairs --summary)
  rules             every rule loaded from the documented rule file evaluated without error,
                    and its recorded p99 per operation is what the expression gives at the
                    rule's evaluation time (within 1%: a scrape appended just after the rule
                    ran); compared with giopscope's p99 for information only, since rate()
                    extrapolates (see p99-increase)
A p99 agrees when the estimate lies within the width of the bucket (lo, hi] that holds
giopscope's value (|estimate - value| <= hi - lo), and in that same bucket unless giopscope's
value or the nearest-rank one lies within 0.8% of a bound (the probe's histogram counts such a
value in the next bucket); Prometheus's rank 0.99 x count always falls in the bucket of the
nearest-rank value. Each line says which bucket and whether the estimate fell in the same one.
"""
import csv
import json
import math
import sys
import time
import urllib.parse
import urllib.request

# analysis/report_prom.c gs_prom_bounds_ns, in seconds
BOUNDS = [1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 2.5e-2, 5e-2,
          0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
ERROR_STATUSES = ("USER_EXCEPTION", "SYSTEM_EXCEPTION", "UNKNOWN_OBJECT", "LOC_SYSTEM_EXCEPTION", "NO_REPLY")
RECORD_P99 = "operation:giopscope_call_duration_seconds:p99_rate5m"


def api(url, path, **params):
    q = urllib.parse.urlencode(params)
    with urllib.request.urlopen("%s%s?%s" % (url, path, q), timeout=10) as r:
        d = json.load(r)
    if d.get("status") != "success":
        raise RuntimeError("%s: %s" % (path, d))
    return d["data"]


def query(url, expr, t=None):
    """instant query: {labels-tuple: float} with labels (instance, operation) as present"""
    params = {"query": expr}
    if t is not None:
        params["time"] = "%.3f" % t
    d = api(url, "/api/v1/query", **params)
    out = {}
    if d["resultType"] == "vector":
        for s in d["result"]:
            out[(s["metric"].get("instance", ""), s["metric"].get("operation", ""))] = float(s["value"][1])
    elif d["resultType"] == "matrix":
        for s in d["result"]:
            out[(s["metric"].get("instance", ""), s["metric"].get("operation", ""))] = [
                (float(ts), float(v)) for ts, v in s["values"]]
    return out


def label(r):
    return "(LocateRequest)" if r["kind"] == "LocateRequest" else (r["operation"] or "(unknown)")


def p99(values):
    v = sorted(values)
    if not v:
        return None
    return v[max(1, math.ceil(0.99 * len(v))) - 1]


def bracket(x):
    lo = 0.0
    for b in BOUNDS:
        if x <= b:
            return lo, b
        lo = b
    return BOUNDS[-1], math.inf


def fmt(s):
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return "none"
    if s >= 1:
        return "%.3g s" % s
    if s >= 1e-3:
        return "%.4g ms" % (s * 1e3)
    return "%.4g us" % (s * 1e6)


def agree(name, want, got, exact):
    """(ok, text) for Prometheus's estimate `got` of giopscope's p99 `want` (seconds), where
    `exact` is the nearest-rank p99 of the calls the estimate is made of: within the width of
    want's bucket, and in want's bucket or in that of `exact` or of either taken 0.8% up or
    down (the probe's histogram counts a value that close under a bound in the next bucket;
    Prometheus's rank, 0.99 x count, always lands in the bucket of the nearest-rank value)"""
    if want is None:
        return False, "%s: no answered call" % name
    lo, hi = bracket(want)
    if got is None or math.isnan(got):
        return False, "%s: giopscope %s in (%s, %s], Prometheus has no estimate" % (name, fmt(want), fmt(lo), fmt(hi))
    same = lo < got <= hi
    within = abs(got - want) <= hi - lo
    near = {bracket(y) for x in (want, exact) if x is not None for y in (x / 1.008, x, x * 1.008)}
    ok = within and (same or bracket(got) in near)
    if same:
        how = "same bucket"
    elif ok:
        how = "off by %s, within the width; a value within 0.8%% of the bound" % fmt(abs(got - want))
    elif not within:
        how = "off by %s, more than the width %s" % (fmt(abs(got - want)), fmt(hi - lo))
    else:
        how = "off by %s, within the width, but in another bucket" % fmt(abs(got - want))
    return ok, "%s: giopscope %s in (%s, %s], Prometheus %s (%s)" % (
        name, fmt(want), fmt(lo) if lo else "0", fmt(hi), fmt(got), how)


def scrape_values(path):
    vals = {}
    with open(path) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            k, v = line.rsplit(" ", 1)
            vals[k] = float(v.replace("+Inf", "inf"))
    return vals


def summary_p99(path):
    """operation -> p99 of total_us (seconds) from the text summary"""
    out = {}
    with open(path) as f:
        for line in f:
            t = line.split()
            if len(t) >= 8 and t[3] == "|" and t[1].isdigit():
                out[t[0]] = None if t[6] == "-" else float(t[6]) / 1e6
    return out


def cmd_wait_up(url, n, timeout):
    end = time.time() + timeout
    last = ""
    while time.time() < end:
        try:
            d = api(url, "/api/v1/targets")
            up = [t for t in d["activeTargets"] if t["health"] == "up"]
            last = "; ".join("%s %s %s" % (t["scrapeUrl"], t["health"], t.get("lastError", ""))
                             for t in d["activeTargets"])
            if len(up) >= n:
                print(last)
                return 0
        except (OSError, RuntimeError, ValueError) as e:
            last = str(e)
        time.sleep(0.2)
    print("not up after %ss: %s" % (timeout, last))
    return 1


def cmd_wait_count(url, spec, timeout):
    want = {}
    for item in spec.split(","):
        k, v = item.rsplit("=", 1)
        metric, inst, op = k.split(":", 2)
        want[(metric, inst, op)] = float(v)
    end = time.time() + timeout
    got = {}
    while time.time() < end:
        t = time.time()
        got = {}
        try:
            for metric in sorted({m for m, _, _ in want}):
                for (inst, op), v in query(url, metric, t).items():
                    got[(metric, inst, op)] = v
        except (OSError, RuntimeError, ValueError):
            pass
        if all(got.get(k) == v for k, v in want.items()):
            print("%.3f" % t)
            return 0
        time.sleep(0.2)
    diff = ["%s{%s,%s} %s want %s" % (k[0], k[1], k[2], got.get(k), v) for k, v in want.items() if got.get(k) != v]
    print("after %ss: %s" % (timeout, "; ".join(diff[:4])))
    return 1


def cmd_wait_rule(url, record, after, timeout):
    end = time.time() + timeout
    ts = {}
    while time.time() < end:
        try:
            ts = query(url, "timestamp(%s)" % record)
        except (OSError, RuntimeError, ValueError):
            ts = {}
        if ts and all(v > after for v in ts.values()):
            print("%.3f" % time.time())
            return 0
        time.sleep(0.2)
    print("after %ss: %s" % (timeout, ts))
    return 1


def cmd_check(url, t, rng, specs):
    lines = []
    inst = {}
    for s in specs:
        name, files = s.split("=", 1)
        pairs, scrape, summary = files.split(",")
        with open(pairs, newline="") as f:
            rows = list(csv.DictReader(f))
        inst[name] = {"rows": rows, "scrape": scrape_values(scrape), "summary": summary_p99(summary)}

    # counts
    calls = query(url, "giopscope_calls_total", t)
    answered = query(url, "giopscope_call_duration_seconds_count", t)
    diff, n = [], 0
    total_rows = {}
    for name, d in inst.items():
        ops = {label(r) for r in d["rows"]} | {op for (i, op) in calls if i == name}
        for op in sorted(ops):
            rows = [r for r in d["rows"] if label(r) == op]
            total_rows[op] = total_rows.get(op, 0) + len(rows)
            want = (len(rows), len([r for r in rows if r["total_us"] != ""]))
            prom = (calls.get((name, op)), answered.get((name, op)))
            scr = (d["scrape"].get('giopscope_calls_total{operation="%s"}' % op),
                   d["scrape"].get('giopscope_call_duration_seconds_count{operation="%s"}' % op))
            n += 1
            if not (prom == scr == want):
                diff.append("%s %s: Prometheus %s, scrape %s, pairs %s" % (name, op, prom, scr, want))
    detail = "; ".join("%s=%d" % (op, c) for op, c in sorted(total_rows.items()))
    lines.append("counts %s %d series (calls, answered) equal in Prometheus, the last scrape and the pairs (%s)%s" % (
        "ok" if n and not diff else "bad", n, detail, ("; " + "; ".join(diff[:4])) if diff else ""))
    sums = query(url, "sum by (operation) (giopscope_calls_total)", t)
    sdiff = ["%s: %s want %d" % (op, sums.get(("", op)), c) for op, c in total_rows.items() if sums.get(("", op)) != c]
    lines.append("counts-sum %s sum by (operation) over %d instances = rows of all pairs files%s" % (
        "ok" if total_rows and not sdiff else "bad", len(inst), ("; " + "; ".join(sdiff)) if sdiff else ""))

    # increase() over the whole run, per host and operation from its series' first sample to its
    # last: Prometheus extrapolates an increase() to the ends of its range, by up to half a
    # scrape interval and differently for a bucket whose first sample is 0 than for one whose
    # is not, which reweights the buckets by a few percent over a short run and moves a p99
    # that sits at a gap between calls into another bucket. A range that starts at the first
    # sample and an evaluation time at the last (the @ modifier; ranges include both ends in
    # Prometheus 2) leave nothing to extrapolate: the increase is last - first. The calls in
    # the first sample (K of them, read back from Prometheus) are not in it.
    samples = query(url, "giopscope_call_duration_seconds_count[%ds]" % rng, t)
    covered = {}  # (instance, op) -> total_us seconds of the replies after the first K
    skipped, terms = [], []
    for name, d in inst.items():
        by_op = {}
        for r in d["rows"]:
            if r["total_us"] != "":
                by_op.setdefault(label(r), []).append(r)
        for op, rows in sorted(by_op.items()):
            rows.sort(key=lambda r: float(r["t_reply_last"]))
            sm = samples.get((name, op), [(0, 0)])
            k = int(sm[0][1])
            skipped.append("%s %s %d of %d samples" % (name, op, k, len(sm)))
            covered[(name, op)] = [float(r["total_us"]) / 1e6 for r in rows[k:]]
            t0, t1 = int(round(sm[0][0] * 1000)), int(round(sm[-1][0] * 1000))
            terms.append('increase(giopscope_call_duration_seconds_%%s{instance="%s",operation="%s"}[%dms] @ %d.%03d)'
                         % (name, op.replace("\\", "\\\\").replace('"', '\\"'), max(1, t1 - t0), t1 // 1000, t1 % 1000))
    inc = "(%s)" % " or ".join(x % "bucket" for x in terms)
    ok_all, txt = bool(terms), []
    # nothing extrapolated: the increase of _count is the number of replies after the first sample
    cnt = query(url, "(%s)" % " or ".join(x % "count" for x in terms), t)
    for key, vals in sorted(covered.items()):
        if cnt.get(key) != len(vals):
            ok_all = False
            txt.append("%s %s: increase of _count %s, but %d replies after the first sample" % (key + (cnt.get(key), len(vals))))
    est = query(url, "histogram_quantile(0.99, sum by (le, operation) %s)" % inc, t)
    ops = sorted({op for (_, op) in covered})
    for op in ops:
        vals = [v for (i, o), vs in covered.items() if o == op for v in vs]
        ok, s_ = agree("all " + op, p99(vals), est.get(("", op)), p99(vals))
        ok_all &= ok
        txt.append(s_)
    est_i = query(url, "histogram_quantile(0.99, sum by (le, operation, instance) %s)" % inc, t)
    for (name, op) in sorted(covered):
        ok, s_ = agree("%s %s" % (name, op), p99(covered[(name, op)]), est_i.get((name, op)), p99(covered[(name, op)]))
        ok_all &= ok
        txt.append(s_)
    lines.append("p99-increase %s histogram_quantile(0.99, sum by (le, operation[, instance]) (increase(bucket[first..last sample]))) "
                 "against the pairs after the first sample; increase(_count) = those replies, exactly (%s)\n  %s" % (
                     "ok" if ok_all else "bad", ", ".join(skipped), "\n  ".join(txt)))

    # the counters since giopscope started: over both hosts against all the pairs rows, per
    # host against the p99 of giopscope's own summary
    ok_all, txt = True, []
    life = query(url, "histogram_quantile(0.99, sum by (le, operation) (giopscope_call_duration_seconds_bucket))", t)
    for op in ops:
        vals = [float(r["total_us"]) / 1e6 for d in inst.values() for r in d["rows"]
                if label(r) == op and r["total_us"] != ""]
        ok, s_ = agree("all " + op, p99(vals), life.get(("", op)), p99(vals))
        ok_all &= ok
        txt.append(s_)
    life = query(url, "histogram_quantile(0.99, sum by (le, operation, instance) (giopscope_call_duration_seconds_bucket))", t)
    n = 0
    for name, d in inst.items():
        for op, v in sorted(d["summary"].items()):
            if op == "(all)":
                continue
            vals = [float(r["total_us"]) / 1e6 for r in d["rows"] if label(r) == op and r["total_us"] != ""]
            ok, s_ = agree("%s %s (summary)" % (name, op), v, life.get((name, op)), p99(vals))
            ok_all &= ok
            n += 1
            txt.append(s_)
    lines.append("p99-lifetime %s histogram_quantile over the counters since the start, against all pairs rows "
                 "and each probe's summary\n  %s" % ("ok" if n and ok_all else "bad", "\n  ".join(txt)))

    # the documented rules: healthy, and the recorded p99 is what its expression gives at the
    # rule's own evaluation time (rate() there extrapolates as above: compared with giopscope's
    # p99 for information only)
    groups = api(url, "/api/v1/rules")["groups"]
    rules = [r for g in groups for r in g["rules"]]
    unhealthy = ["%s: %s %s" % (r["name"], r.get("health"), r.get("lastError", "")) for r in rules if r.get("health") != "ok"]
    ok_all, txt = not unhealthy and bool(rules), []
    for op in ops:
        ts = query(url, 'timestamp(%s{operation="%s"})' % (RECORD_P99, op), t).get(("", op))
        rec = query(url, '%s{operation="%s"}' % (RECORD_P99, op), t).get(("", op))
        adhoc = None
        if ts is not None:
            adhoc = query(url, 'histogram_quantile(0.99, sum by (le, operation) (rate(giopscope_call_duration_seconds_bucket{operation="%s"}[5m])))' % op, ts).get(("", op))
        same = rec is not None and adhoc is not None and abs(rec - adhoc) <= 0.01 * adhoc
        ok_all &= same
        vals = [v for (i, o), vs in covered.items() if o == op for v in vs]
        _, info = agree(op, p99(vals), rec, p99(vals))
        txt.append("%s: recorded %s, the expression at the rule's time %s%s; for information, %s" % (
            op, fmt(rec), fmt(adhoc), "" if same else " (they differ)", info.split(": ", 1)[1]))
    lines.append("rules %s %d rules healthy (%s)%s; %s\n  %s" % (
        "ok" if ok_all else "bad", len(rules) - len(unhealthy), ", ".join(r["name"] for r in rules),
        ("; unhealthy: " + "; ".join(unhealthy)) if unhealthy else "", RECORD_P99, "\n  ".join(txt)))
    print("\n".join(lines))
    return 0 if all(l.split(" ", 2)[1] == "ok" for l in lines) else 1


def main(argv):
    try:
        if len(argv) == 5 and argv[1] == "wait-up":
            return cmd_wait_up(argv[2], int(argv[3]), float(argv[4]))
        if len(argv) == 5 and argv[1] == "wait-count":
            return cmd_wait_count(argv[2], argv[3], float(argv[4]))
        if len(argv) == 6 and argv[1] == "wait-rule":
            return cmd_wait_rule(argv[2], argv[3], float(argv[4]), float(argv[5]))
        if len(argv) >= 6 and argv[1] == "check":
            return cmd_check(argv[2], float(argv[3]), int(argv[4]), argv[5:])
    except (OSError, RuntimeError, ValueError, KeyError) as e:
        print("error: %s" % e)
        return 1
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
