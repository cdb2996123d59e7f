#!/usr/bin/env python3
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
  p99-increase      histogram_quantile(0.99, sum by (le, operation) (increase(bucket[RANGE])))
                    over all instances, and per instance (sum by (le, operation, instance)),
                    against the p99 of the pairs rows that increase() covers: Prometheus sees
                    only increases after a series' first sample, so the first K replies of an
                    operation (K = the first sample of its _count series, read back from
                    Prometheus) are left out; nearest-rank p99 of total_us
  p99-lifetime      histogram_quantile(0.99, sum by (le, operation, instance) (bucket)) -- the
                    counters since giopscope started -- against the p99 that giopscope printed
                    in its summary (SUMMARY.log, the text summary of --pairs --summary)
  rules             every rule loaded from the documented rule file evaluated without error,
                    and its recorded p99 per operation agrees (as p99-increase does) with the
                    pairs of all instances
A p99 agrees when the estimate lies within the width of the bucket (lo, hi] that holds
giopscope's value (|estimate - value| <= hi - lo), and in that same bucket unless calls ranked
near the p99 (within 2% of the calls, or 0.8% of their value) are in the estimate's bucket
(near_buckets); each line says which bucket and whether the estimate fell in the same one.
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
            out[(s["metric"].get("instance", ""), s["metric"].get("operation", ""))] = [float(v) for _, v in s["values"]]
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


def near_buckets(values):
    """the buckets a p99 estimate may honestly land in: those of the values ranked within 2% of
    the calls around the p99 rank (increase() extrapolates each bucket series a little
    differently, which moves the rank Prometheus looks for by up to a few percent), each value
    also taken 0.8% higher and lower (the probe's histogram puts a value that close under a
    bound into the next bucket)"""
    v = sorted(values)
    n = len(v)
    k = max(1, math.ceil(0.99 * n))
    d = math.ceil(0.02 * n)
    out = set()
    for x in v[max(0, k - 1 - d):min(n, k + d)]:
        for y in (x / 1.008, x, x * 1.008):
            out.add(bracket(y))
    return out


def agree(name, want, got, values):
    """(ok, text) for an estimate `got` of giopscope's p99 `want` (seconds) of `values`: within
    the width of want's bucket, and in a bucket near_buckets allows"""
    if want is None:
        return False, "%s: no answered call" % name
    lo, hi = bracket(want)
    if got is None or math.isnan(got):
        return False, "%s: giopscope %s in (%s, %s], Prometheus has no estimate" % (name, fmt(want), fmt(lo), fmt(hi))
    same = lo < got <= hi
    within = abs(got - want) <= hi - lo
    near = same or bracket(got) in near_buckets(values)
    if same:
        how = "same bucket"
    elif within and near:
        how = "off by %s, within the width; the calls around the p99 rank reach that bucket" % fmt(abs(got - want))
    elif not within:
        how = "off by %s, more than the width %s" % (fmt(abs(got - want)), fmt(hi - lo))
    else:
        how = "off by %s, within the width, but no call ranked near the p99 is in its bucket" % fmt(abs(got - want))
    return within and near, "%s: giopscope %s in (%s, %s], Prometheus %s (%s)" % (
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

    # the rows increase() covers: after the first sample of each series
    first = query(url, "giopscope_call_duration_seconds_count[%ds]" % rng, t)
    covered = {}  # (instance, op) -> total_us seconds after the first K replies
    skipped = []
    for name, d in inst.items():
        by_op = {}
        for r in d["rows"]:
            if r["total_us"] != "":
                by_op.setdefault(label(r), []).append(r)
        for op, rows in by_op.items():
            rows.sort(key=lambda r: float(r["t_reply_last"]))
            k = int(first.get((name, op), [0])[0])
            skipped.append("%s %s %d" % (name, op, k))
            covered[(name, op)] = [float(r["total_us"]) / 1e6 for r in rows[k:]]
    ok_all, txt = True, []
    est = query(url, "histogram_quantile(0.99, sum by (le, operation) (increase(giopscope_call_duration_seconds_bucket[%ds])))" % rng, t)
    ops = sorted({op for (_, op) in covered})
    for op in ops:
        vals = [v for (i, o), vs in covered.items() if o == op for v in vs]
        ok, s = agree("all " + op, p99(vals), est.get(("", op)), vals)
        ok_all &= ok
        txt.append(s)
    est_i = query(url, "histogram_quantile(0.99, sum by (le, operation, instance) (increase(giopscope_call_duration_seconds_bucket[%ds])))" % rng, t)
    for (name, op) in sorted(covered):
        ok, s = agree("%s %s" % (name, op), p99(covered[(name, op)]), est_i.get((name, op)), covered[(name, op)])
        ok_all &= ok
        txt.append(s)
    lines.append("p99-increase %s [%ds] (first replies left out: %s)\n  %s" % (
        "ok" if ops and ok_all else "bad", rng, ", ".join(skipped), "\n  ".join(txt)))

    # lifetime counters against the summary's own p99
    ok_all, txt = True, []
    life = query(url, "histogram_quantile(0.99, sum by (le, operation, instance) (giopscope_call_duration_seconds_bucket))", t)
    for name, d in inst.items():
        for op, v in sorted(d["summary"].items()):
            if op == "(all)":
                continue
            vals = [float(r["total_us"]) / 1e6 for r in d["rows"] if label(r) == op and r["total_us"] != ""]
            ok, s = agree("%s %s" % (name, op), v, life.get((name, op)), vals)
            ok_all &= ok
            txt.append(s)
    lines.append("p99-lifetime %s summary p99 against the counters since the start\n  %s" % (
        "ok" if txt and ok_all else "bad", "\n  ".join(txt)))

    # the documented rules
    groups = api(url, "/api/v1/rules")["groups"]
    rules = [r for g in groups for r in g["rules"]]
    unhealthy = ["%s: %s %s" % (r["name"], r.get("health"), r.get("lastError", "")) for r in rules if r.get("health") != "ok"]
    rec = query(url, RECORD_P99, t)
    ok_all, txt = not unhealthy and bool(rules), []
    for op in ops:
        vals = [v for (i, o), vs in covered.items() if o == op for v in vs]
        ok, s = agree(op, p99(vals), rec.get(("", op)), vals)
        ok_all &= ok
        txt.append(s)
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
