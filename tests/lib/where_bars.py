#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""The report's "Where the server's time went" bars against the pairs CSV.

usage: where_bars.py REPORT_OR_DOM.html PAIRS.csv

REPORT_OR_DOM.html: the --report file, or what `chromium --dump-dom` made of it (the same
markup once a browser has parsed it). For every operation whose Requests have a split in the
CSV (read by column name), the report must have its two stacked bars, "OP (sched, N)" and
"OP (orb, N)", N the number of those Requests; each segment's value (its <title>) the CSV's
mean of that column (to the 0.1 us the report prints); the segments of a bar contiguous, in
the order on-CPU / run queue / blocked and ORB in / servant / ORB out; every segment's width
in proportion to its value (one scale for the whole plot) and the longest bar the plot's full
width (660 px). Prints one line of figures; exit 0, 1 with the reasons on a mismatch.
"""
import csv
import html
import re
import statistics
import sys

BAR_W = 660.0  # report_plot.c rp_plot_where: W - bx - 110 = 1100 - 330 - 110
PARTS = {
    "sched": [("oncpu", "server_oncpu_us"), ("runq", "server_runq_us"), ("blocked", "server_blocked_us")],
    "orb": [("orbin", "orb_in_us"), ("servant", "servant_us"), ("orbout", "orb_out_us")],
}


def main():
    page, pairs = sys.argv[1:3]
    text = open(page, encoding="utf-8").read()
    m = re.search(r'<svg class="plot where".*?</svg>', text, re.S)
    if not m:
        print("no 'where' plot in the report")
        return 1
    svg = m.group(0)
    bars = {}
    for lab, body in re.findall(r'<text class="rowlabel"[^>]*>([^<]*)</text>\s*<g class="op">(.*?)</g>', svg, re.S):
        lm = re.fullmatch(r"(.*) \((sched|orb), (\d+)\)", html.unescape(lab))
        if not lm:
            continue
        segs = []
        for cls, x, w, title in re.findall(
                r'<rect class="seg seg-(\w+)" x="([\d.]+)" y="[\d.]+" width="([\d.]+)"[^>]*><title>([^<]*)</title>',
                body):
            v = re.search(r": ([\d.]+) us$", html.unescape(title))
            segs.append((cls, float(x), float(w), float(v.group(1)) if v else None))
        bars[(lm.group(1), lm.group(2))] = (int(lm.group(3)), segs)
    rows = list(csv.DictReader(open(pairs, newline="")))
    bad = []
    scales = []
    longest = 0.0
    max_sum = 0.0
    checked = 0
    for op in sorted({r["operation"] for r in rows if r["kind"] == "Request"}):
        for kind, parts in PARTS.items():
            mine = [r for r in rows if r["kind"] == "Request" and r["operation"] == op and r[parts[0][1]]]
            if not mine:
                continue
            if (op, kind) not in bars:
                bad.append(f"{op}: no {kind} bar")
                continue
            n, segs = bars[(op, kind)]
            if n != len(mine):
                bad.append(f"{op} ({kind}): the bar averages {n} calls, the CSV has {len(mine)}")
            want = [(cls, statistics.mean(float(r[col]) for r in mine)) for cls, col in parts]
            drawn = {cls: (x, w, v) for cls, x, w, v in segs}
            order = [cls for cls, _, _, _ in segs]
            expect_order = [cls for cls, mean in want if cls in drawn]
            if order != expect_order:
                bad.append(f"{op} ({kind}): segments in the order {order}")
            x_next = None
            total = 0.0
            for cls, mean in want:
                if cls not in drawn:
                    if mean >= 0.001:  # the report leaves out a part whose integer-ns mean is 0
                        bad.append(f"{op} ({kind}): no {cls} segment for a mean of {mean:.3f} us")
                    continue
                x, w, v = drawn[cls]
                checked += 1
                if v is None or abs(v - mean) > 0.051:
                    bad.append(f"{op} ({kind}) {cls}: the report says {v} us, the CSV's mean is {mean:.3f} us")
                if x_next is not None and abs(x - x_next) > 0.011:
                    bad.append(f"{op} ({kind}) {cls}: starts at x={x}, the segment before ends at {x_next:.2f}")
                x_next = x + w
                total += w
                if mean >= 1.0:
                    scales.append((w / mean, mean, f"{op} ({kind}) {cls}"))
            longest = max(longest, total)
            max_sum = max(max_sum, sum(mean for _, mean in want))
    if scales:
        # one scale: the plot's width over the largest bar's sum of means
        scale = BAR_W / max_sum
        for w_over_mean, mean, what in scales:
            if abs(w_over_mean * mean - scale * mean) > 0.011 + 0.001 * scale * mean:
                bad.append(f"{what}: {w_over_mean * mean:.2f} px for {mean:.3f} us, the plot's scale gives "
                           f"{scale * mean:.2f}")
    if abs(longest - BAR_W) > 0.05:
        bad.append(f"the longest bar is {longest:.2f} px, not the plot's width {BAR_W}")
    if not checked:
        bad.append("no split in the CSV to check the bars against")
    for b in bad[:20]:
        print(b)
    print(f"{len(bars)} bars, {checked} segments = the CSV's means; longest {longest:.2f} px")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
