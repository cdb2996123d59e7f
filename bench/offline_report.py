#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""offline_report.py: offline_bench.py's results as sections of docs/benchmarks.md,
plus SVG plots beside it.

usage: offline_report.py RESULTS.json [--doc docs/benchmarks.md] [--svg-dir docs]

docs/benchmarks.md is shared: the header (between the bench-header markers) and
the offline sections (offline-quick, offline-full markers) are ours; every other
line belongs to the parts that wrote it and is kept as it is. The file is read
again right before it is written, and replaced in one rename.
"""
import argparse
import json
import os
import re
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import offline_svg  # noqa: E402

ARM_NAMES = {
    "cat": "cat",
    "bare_loop": "bare libpcap loop",
    "read": "giopscope read (summary)",
    "read_pairs_csv": "giopscope read --pairs --format csv",
    "tshark": "tshark GIOP fields",
}
ORDER = ["cat", "bare_loop", "read", "read_pairs_csv", "tshark"]
TARGETS = {"read": 2.0, "read_pairs_csv": 4.0}
RSS_LIMIT_MIB = 64

HEADER_BEGIN = "<!-- bench-header:begin -->"
HEADER_END = "<!-- bench-header:end -->"


def mib(kb):
    return kb / 1024.0


def fmt_s(x):
    if x is None:
        return "-"
    return "%.3f" % x if x < 10 else "%.1f" % x


def fmt_rate(x):
    if x >= 1e6:
        return "%.2f M" % (x / 1e6)
    if x >= 1e3:
        return "%.0f k" % (x / 1e3)
    return "%.0f" % x


def fmt_n(n):
    for div, suf in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if n >= div and n % div == 0:
            return "%d%s" % (n // div, suf)
    return "{:,}".format(n)


def code(s):
    return "`%s`" % s.replace("`", "'")


# ------------------------------------------------------------------ section
def machine_line(r):
    m = r["machine"]
    return ("Measured %s on %d × %s (nproc %d, `/proc/cpuinfo` model name), %.1f GiB RAM, Linux %s; "
            "load average %s at the start, %s at the end (other work shares these vCPUs: "
            "hence medians, interleaving and ratios within a round). giopscope %s (binary "
            "sha256 %s…), %s, %s. The run took %.0f s." % (
                m["date"], m["nproc"], m["cpu_model"], m["nproc"], m["mem_total_kb"] / 1048576.0,
                m["kernel"], "/".join(m["loadavg"]), "/".join(m.get("loadavg_end", ["?"])),
                code(m["commit"]), m["giopscope_sha"], (m["tshark"] or "tshark ?").rstrip("."),
                m["libpcap"] or "libpcap ?", r["seconds"]))


def captures_table(r):
    out = ["| capture | calls | packets | bytes | bytes/packet | made by |",
           "|---|---:|---:|---:|---:|---|"]
    for c in r["captures"]:
        out.append("| %s | %s | %s | %s | %.0f | %s |" % (
            c["name"], "{:,}".format(c["calls"]), "{:,}".format(c["packets"]),
            "{:,}".format(c["bytes"]), c["bytes"] / c["packets"],
            code(c["command"].replace(os.environ.get("PWD", "") + "/", ""))))
    return out


def throughput_table(t, rounds):
    out = ["| arm | command | wall s (median) | wall min–max | CPU s (user+sys) | packets/s | "
           "calls/s | × bare loop, wall | × bare loop, CPU | peak RSS MiB |",
           "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name in ORDER:
        a = t["arms"].get(name)
        if not a:
            continue
        out.append("| %s | %s | %s | %s–%s | %s | %s | %s | %.2f | %s | %.1f |" % (
            ARM_NAMES[name], code(a["command"]), fmt_s(a["wall_med"]), fmt_s(min(a["wall"])),
            fmt_s(max(a["wall"])), fmt_s(a["cpu_med"]), fmt_rate(a["packets_per_s"]),
            fmt_rate(a["calls_per_s"]), a["ratio_wall"],
            "%.2f" % a["ratio_cpu"] if a["ratio_cpu"] else "-", mib(a["rss_med_kb"])))
    return out


def scaling(r):
    rows = [t for t in r["throughput"] if t["mix"] == "default"]
    rows.sort(key=lambda t: t["calls"])
    out = ["| calls | packets | cat s | bare loop s | read s | read µs/call | read --pairs s | "
           "tshark s | tshark CPU s | tshark CPU µs/call | tshark ÷ read |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for t in rows:
        a = t["arms"]
        ts = a.get("tshark")
        out.append("| %s | %s | %s | %s | %s | %.2f | %s | %s | %s | %s | %s |" % (
            "{:,}".format(t["calls"]), "{:,}".format(t["packets"]), fmt_s(a["cat"]["wall_med"]),
            fmt_s(a["bare_loop"]["wall_med"]), fmt_s(a["read"]["wall_med"]),
            a["read"]["wall_med"] / t["calls"] * 1e6, fmt_s(a["read_pairs_csv"]["wall_med"]),
            fmt_s(ts["wall_med"]) if ts else "-", fmt_s(ts["cpu_med"]) if ts else "-",
            "%.0f" % (ts["cpu_med"] / t["calls"] * 1e6) if ts else "-",
            "%.0f" % (ts["wall_med"] / a["read"]["wall_med"]) if ts else "-"))
    return out, rows


def plots(r, rows, svg_dir, suffix):
    def series(arm):
        return [(t["calls"], t["arms"][arm]["wall_med"]) for t in rows if arm in t["arms"]]
    ser = [("tshark (GIOP fields)", series("tshark"), False),
           ("tshark, CPU time (user+sys)", [(t["calls"], t["arms"]["tshark"]["cpu_med"]) for t in rows
                                            if "tshark" in t["arms"]], True),
           ("giopscope read --pairs --format csv", series("read_pairs_csv"), False),
           ("giopscope read (summary)", series("read"), False),
           ("bare libpcap loop", series("bare_loop"), True),
           ("cat", series("cat"), True)]
    files = []
    svg = offline_svg.loglog(ser, "Time to read a capture against its number of calls (%s)" %
                             r["mode"], "calls in the capture (default mix, about %.1f packets per call)" %
                             (rows[-1]["packets"] / rows[-1]["calls"]), "time, median of the rounds",
                             guides=[("∝ calls", 1), ("∝ calls²", 2)], legend="br")
    name = "bench-offline-time%s.svg" % suffix
    with open(os.path.join(svg_dir, name), "w") as f:
        f.write(svg)
    files.append(name)
    per = [(lbl, [(x, y / x * 1e6) for x, y in s], d) for lbl, s, d in ser]
    svg = offline_svg.loglog(per, "Time per call (%s)" % r["mode"], "calls in the capture",
                             "time per call (median of the rounds)", yunit="µs", legend="tr")
    name = "bench-offline-percall%s.svg" % suffix
    with open(os.path.join(svg_dir, name), "w") as f:
        f.write(svg)
    files.append(name)
    return files


def callgrind_tables(r):
    cg = r["callgrind"]
    by = {}
    for x in cg:
        by.setdefault(x["arm"], []).append(x)
    sizes = sorted({(x["calls"], x["packets"]) for x in cg})
    (ca, pa), (cb, pb) = sizes[0], sizes[-1]
    out = ["| program | command (on the %s-call capture) | Ir, %s calls (%s packets) | Ir, %s calls "
           "(%s packets) | Ir per packet (whole run, larger file) | Ir per extra packet | "
           "× bare loop, per extra packet |" % (fmt_n(cb), fmt_n(ca), "{:,}".format(pa), fmt_n(cb),
                                                 "{:,}".format(pb)),
           "|---|---|---:|---:|---:|---:|---:|"]
    marg = {}
    for arm in ("bare_loop", "read", "read_pairs_csv"):
        xs = sorted(by.get(arm, []), key=lambda x: x["packets"])
        if len(xs) < 2:
            continue
        a, b = xs[0], xs[-1]
        marg[arm] = (b["ir"] - a["ir"]) / (b["packets"] - a["packets"])
    for arm in ("bare_loop", "read", "read_pairs_csv"):
        xs = sorted(by.get(arm, []), key=lambda x: x["packets"])
        if len(xs) < 2:
            continue
        a, b = xs[0], xs[-1]
        out.append("| %s | %s | %s | %s | %.0f | %.0f | %s |" % (
            ARM_NAMES[arm], code(b["command"]), "{:,}".format(a["ir"]), "{:,}".format(b["ir"]),
            b["ir"] / b["packets"], marg[arm],
            "%.1f" % (marg[arm] / marg["bare_loop"]) if "bare_loop" in marg else "-"))
    out.append("")
    out.append("Ir: instructions executed, counted by `valgrind --tool=callgrind` (the same on a "
               "busy or an idle machine). \"Per extra packet\" is (Ir on the larger capture − Ir on "
               "the smaller) ÷ (the difference in packets): start-up (dynamic linking, tables) "
               "cancels out. Where they go, in the larger capture (`callgrind_annotate`, exclusive "
               "cost, the functions above 1%):")
    out.append("")
    for arm in ("read", "read_pairs_csv"):
        xs = sorted(by.get(arm, []), key=lambda x: x["packets"])
        if not xs:
            continue
        b = xs[-1]
        out.append("%s:" % ARM_NAMES[arm])
        out.append("")
        out.append("| function | file | % of Ir | Ir per packet |")
        out.append("|---|---|---:|---:|")
        for f in b["top"]:
            if f["pct"] < 1.0:
                continue
            fn = f["fn"] if not f["fn"].startswith("0x") or "(" in f["fn"] else f["fn"] + " (no symbols)"
            out.append("| %s | %s | %.1f | %.0f |" % (code(fn), f["file"].replace(os.getcwd() + "/", ""),
                                                      f["pct"], f["ir"] / b["packets"]))
        out.append("")
    return out, marg


def memory_tables(r):
    m = r["memory"]
    out = ["| what | command | calls | calls giopscope reports | peak RSS MiB | wall s | "
           "giopscope CPU s | giopscope CPU ns per call |",
           "|---|---|---:|---:|---:|---:|---:|---:|"]
    rss = []

    def row(what, x):
        rss.append(x["rss_kb"])
        out.append("| %s | %s | %s | %s | %.1f | %s | %s | %.0f |" % (
            what, code(x["command"]), "{:,}".format(x["calls_expected"]),
            "{:,}".format(x["calls"]) if "calls" in x else "?", mib(x["rss_kb"]), fmt_s(x["wall"]),
            fmt_s(x["cpu"]), x["cpu"] / x["calls_expected"] * 1e9))
        for b in x.get("bounds", []):
            out.append("| | ↳ bound hit: %s | | | | | | |" % code(b))
    for x in m["file"]:
        row("%s calls, from the file (%s)" % (fmt_n(m["base"]), "pairs" if "--pairs" in x["command"]
                                              else "summary"), x)
    for x in m["streamed"]:
        row("%d× more: %s calls, streamed (%s)" % (x["factor"], fmt_n(x["calls_expected"]),
                                                   "pairs" if "--pairs" in x["command"] else "summary"), x)
    for x in m["open_all"]:
        row("%s calls open at once (every request before any reply; %s)" % (
            fmt_n(x["calls_expected"]), "pairs" if "--pairs" in x["command"] else "summary"), x)
    return out, rss


def targets(r, big, marg, rss, scale_rows):
    out = ["| target (issue 7) | measured in this run | met |", "|---|---|---|"]
    for arm, lim in TARGETS.items():
        a = big["arms"][arm]
        ok = a["ratio_wall"] <= lim
        out.append("| %s no slower than %g× the bare loop | %.2f× wall (median of per-round ratios, "
                   "%s calls), %s× CPU; %s× in instructions per extra packet | %s |" % (
                       ARM_NAMES[arm], lim, a["ratio_wall"], fmt_n(big["calls"]),
                       "%.2f" % a["ratio_cpu"] if a["ratio_cpu"] else "-",
                       "%.1f" % (marg[arm] / marg["bare_loop"]) if arm in marg and "bare_loop" in marg else "?",
                       "yes" if ok else "**no**"))
    # linear: the cost per call must not grow with the input; compared like for like
    # (the same command, CPU seconds, large enough that start-up does not count)
    st = dict((x["factor"], x["cpu"] / x["calls_expected"] * 1e9) for x in r["memory"]["streamed"]
              if "--pairs" in x["command"])
    fl = [(t["calls"], t["arms"]["read_pairs_csv"]["cpu_med"] / t["calls"] * 1e9) for t in scale_rows
          if t["calls"] >= 40000 and t["arms"]["read_pairs_csv"]["cpu_med"]]
    ts = [(t["calls"], t["arms"]["tshark"]["cpu_med"] / t["calls"] * 1e6) for t in scale_rows
          if "tshark" in t["arms"]]
    parts = []
    if fl:
        parts.append("from files: " + ", ".join("%s calls %.0f" % (fmt_n(c), v) for c, v in fl))
    if st:
        parts.append("streamed: " + ", ".join("%s %.0f" % ("%d× (%s calls)" % (k, fmt_n(r["memory"]["base"] * k)), v)
                                            for k, v in sorted(st.items())))
    if 10 in st and 100 in st:
        growth = st[100] / st[10]
        verdict = "yes" if growth <= 1.25 else "**no**"
        how = "100× vs 10×: %.2f" % growth
    elif len(fl) >= 2:
        growth = fl[-1][1] / fl[0][1]
        verdict = "yes" if growth <= 1.25 else "**no**"
        how = "largest vs smallest file: %.2f" % growth
    else:
        verdict, how = "?", "not enough sizes"
    out.append("| linear in the file size | giopscope read --pairs CPU ns per call, %s (%s); tshark for "
               "comparison: %s CPU µs per call | %s |" % (
                   "; ".join(parts), how,
                   ", ".join("%.0f at %s calls" % (v, fmt_n(c)) for c, v in ts) or "-", verdict))
    # The target is about the file size: a stream of any length must not grow the process.
    # How many calls are open at one time is another axis, bounded by --max-open-calls
    # (default 1,048,576) and measured separately below, with its cost per open call.
    m = r["memory"]
    flat = [x for x in m["file"] if "--pairs" in x["command"]] + \
        [x for x in m["streamed"] if "--pairs" in x["command"]]
    worst = max([x["rss_kb"] for x in flat] or rss)
    desc = "read --pairs: %s" % ", ".join("%.1f MiB at %s calls" % (mib(x["rss_kb"]), fmt_n(x["calls_expected"]))
                                          for x in flat)
    out.append("| RSS flat, under %d MiB, whatever the file size | %s (table above) | %s |"
               % (RSS_LIMIT_MIB, desc, "yes" if mib(worst) < RSS_LIMIT_MIB else "**no**"))
    if m.get("open_all"):
        oa = m["open_all"][-1]
        base = min(x["rss_kb"] for x in flat) if flat else 0
        per_call = (oa["rss_kb"] - base) * 1024.0 / oa["calls_expected"] if oa["calls_expected"] else 0
        out.append("| (measured, no target) calls open at the same time | %s calls open at once: %.1f MiB, "
                   "about %.0f bytes per open call above the smallest run; bounded by `--max-open-calls` "
                   "(1,048,576 by default; lower it to bound the memory) | - |"
                   % (fmt_n(oa["calls_expected"]), mib(oa["rss_kb"]), per_call))
    return out


def perf_tables(r):
    p = r.get("perf")
    if not p:
        return []
    out = ["### Where the time goes (perf, %s)" % fmt_n(r["plan"]["big"]), ""]
    for arm in ("read", "read_pairs_csv"):
        x = p.get(arm)
        if not x:
            continue
        out.append("%s — %s, self time per symbol (above 0.8%%):" % (ARM_NAMES[arm], code(x["command"])))
        out.append("")
        out.append("| % of samples | where | symbol |")
        out.append("|---:|---|---|")
        for row in x["top"]:
            out.append("| %.1f | %s | %s |" % (row["pct"], row["dso"], code(row["sym"])))
        out.append("")
    return out


def section(r, svg_dir):
    mode = r["mode"]
    suffix = "" if mode == "full" else "-" + mode
    target = "make bench" if mode == "full" else "make bench-quick"
    big = [t for t in r["throughput"] if t["mix"] == "default" and t["calls"] == r["plan"]["big"]][0]
    echo = [t for t in r["throughput"] if t["mix"] == "echo"]
    L = []
    L.append("## Offline: `giopscope read` against tshark, a bare libpcap loop and `cat` (`%s`)" % target)
    L.append("")
    L.append(machine_line(r))
    L.append("")
    L.append("How: every capture is made by `bench/gen` (`giopgen`, deterministic by seed) and read "
             "once by `cat` before timing, so every arm reads from the page cache. On each capture "
             "the arms run in rounds, one run of each per round, the order rotating from round to "
             "round; %d rounds (tshark %d). Each command runs under `/usr/bin/time -f '%%e %%U %%S %%M'` "
             "(peak RSS is `%%M`), wall time is taken around it. The figures are medians over the rounds; "
             "\"× bare loop\" is the ratio to the bare loop of the same round, median over rounds. "
             "`bench/bare_loop.c` opens the file as giopscope does and only touches each packet "
             "(`pcap_next_ex`, time stamp, lengths, first and last byte): the floor for any libpcap "
             "reader. tshark runs with the GIOP dissector and TCP/GIOP desegmentation on (the "
             "settings of `tests/oracle/tshark_pairs.py`) and only prints the fields giopscope pairs "
             "on, without pairing them. Everything here: `bench/run.sh %s` (`%s`)." % (
                 r["plan"]["rounds"], r["plan"]["tshark_rounds"], mode, target))
    L.append("")
    L.append("### Captures")
    L.append("")
    L += captures_table(r)
    L.append("")
    L.append("The default mix (`bench/gen/workload.c`): GIOP 1.0, 1.1 and 1.2 connections, both byte "
             "orders, 1 to 8 requests outstanding per connection with replies out of order, arguments "
             "from 8 bytes to 24 KB, GIOP 1.1 and 1.2 fragments, oneways, user and system exceptions, "
             "LOCATION_FORWARD, LocateRequests, CancelRequests (never answered: the call stays open "
             "until its connection closes), CloseConnection, 10% IPv6, a few "
             "retransmissions; about 1000 calls per connection, 64 connections open at a time. The echo "
             "mix: echoString(32) only, the smallest packets, where a reader's per-packet cost weighs "
             "most.")
    L.append("")
    L.append("### Throughput on %s calls" % fmt_n(big["calls"]))
    L.append("")
    L.append("Default mix, %s packets, %.0f MB:" % ("{:,}".format(big["packets"]), big["bytes"] / 1e6))
    L.append("")
    L += throughput_table(big, r["plan"]["rounds"])
    L.append("")
    for e in echo:
        L.append("Echo mix (echoString(32) only), %s calls, %s packets, %.0f MB:" % (
            fmt_n(e["calls"]), "{:,}".format(e["packets"]), e["bytes"] / 1e6))
        L.append("")
        L += throughput_table(e, r["plan"]["rounds"])
        L.append("")
    L.append("### Time against the number of calls")
    L.append("")
    tab, rows = scaling(r)
    files = plots(r, rows, svg_dir, suffix)
    L.append("Median wall times (and tshark's CPU time: its long runs are the ones other work on the "
             "machine stretches most); tshark only up to %s calls: its GIOP dissector slows down "
             "quadratically with the number of calls, so it cannot read the large captures in useful "
             "time." % fmt_n(max(r["plan"]["tshark_sizes"])))
    L.append("")
    L += tab
    L.append("")
    L.append("![time against calls, log-log](%s)" % files[0])
    L.append("")
    L.append("![time per call](%s)" % files[1])
    L.append("")
    L.append("### Instructions per packet (callgrind)")
    L.append("")
    cg, marg = callgrind_tables(r)
    L += cg
    L.append("### Memory")
    L.append("")
    L.append("Peak RSS (`/usr/bin/time -f %%M` around giopscope only). The larger inputs are not written "
             "to disk: `giopgen ... -o -` is piped into `giopscope read -`, so wall time there is that of "
             "the pair (generator and reader share the two vCPUs) and giopscope's own CPU time is the "
             "figure to compare. \"calls open at once\": a capture (`giopgen --open-all`) in which every "
             "request is sent before the first reply, %s connections open together." % "all")
    L.append("")
    mt, rss = memory_tables(r)
    L += mt
    L.append("")
    L.append("### Against the targets")
    L.append("")
    L += targets(r, big, marg, rss, rows)
    L.append("")
    L += perf_tables(r)
    return "\n".join(L).rstrip() + "\n"


# ------------------------------------------------------------------ the shared file
def header(r):
    m = r["machine"]
    return "\n".join([
        HEADER_BEGIN,
        "# Benchmarks",
        "",
        "What was measured, how, and on what machine. Each section names the exact command; the "
        "scripts are in `bench/` and are not part of `make check`.",
        "",
        "`make bench` runs them all through `bench/run.sh` (long; the taps' parts need root), "
        "`make bench-quick` only the quick ones at small sizes (under two minutes, a first look). "
        "Each part writes its own sections below, each with its commands, its date and the machine "
        "it was measured on; no figure is copied from an earlier run, and ratios are measured "
        "within one run. Offline reading: `bench/offline_*` and the capture generator `bench/gen/` "
        "(the offline sections, between their markers, are rewritten by each run); the live, "
        "attach and DPDK taps: `bench/live_*`, `bench/attach_*`, `bench/dpdk_*`.",
        "",
        "Machine at the last write of this header (%s): %d × %s (nproc %d; model name from "
        "`/proc/cpuinfo`), %.1f GiB RAM, Linux %s. These are noisy 2-vCPU virtual machines "
        "shared with other work: trust ratios measured in one run and instruction counts more "
        "than single wall times (below)." % (
            time.strftime("%Y-%m-%d"), m["nproc"], m["cpu_model"], m["nproc"],
            m["mem_total_kb"] / 1048576.0, m["kernel"]),
        "",
        "### Measuring on these machines",
        "",
        "- Wall times drift from run to run with the other work on the host: every part runs its "
        "arms interleaved (A B C, then B C A, ...), takes medians over rounds, and states ratios "
        "measured within one round. `valgrind --tool=callgrind` instruction counts repeat whatever "
        "the machine does: they are the figure for per-packet cost.",
        "- Idle states: a process woken for every packet keeps the vCPUs out of their idle "
        "states, and the wake-up latency of an idle vCPU is a large part of a sub-100 µs round "
        "trip (an omniORB echo across a veth: p50 about 55 µs with idle vCPUs, about 17 µs while "
        "`tcpdump --immediate-mode` runs on the same veth). A benchmark of a probe's overhead "
        "must hold the idle state equal in every arm (the same SCHED_IDLE spinner per vCPU in "
        "every arm, or report both ways), or it measures the CPUs, not the probe.",
        HEADER_END,
        ""])


def norm(text):
    return " ".join(text.split())


def merge(doc, head, name, body):
    """doc text with our header and our section `name` replaced (or added)."""
    begin, end = "<!-- %s:begin -->" % name, "<!-- %s:end -->" % name
    block = "%s\n%s%s\n" % (begin, body, end)
    if HEADER_BEGIN in doc and HEADER_END in doc:
        i, j = doc.index(HEADER_BEGIN), doc.index(HEADER_END) + len(HEADER_END)
        doc = doc[:i] + head.rstrip("\n") + doc[j:]
    else:
        # a file begun by another part: its title and introduction (up to the first
        # section) become our header; whatever of them ours does not already say is kept
        # in it, word for word
        k = doc.find("\n## ")
        pre, rest = (doc[:k], doc[k + 1:]) if k >= 0 else (doc, "")
        if pre.lstrip().startswith("# "):
            intro = pre.strip().split("\n", 1)[1].strip() if "\n" in pre.strip() else ""
            if intro and norm(intro) not in norm(head):
                head = head.replace(HEADER_END, intro + "\n" + HEADER_END)
            doc = head + ("\n" + rest if rest.strip() else "")
        else:
            doc = head + ("\n" + doc if doc.strip() else "")
    if begin in doc and end in doc:
        i, j = doc.index(begin), doc.index(end) + len(end)
        return doc[:i] + block.rstrip("\n") + doc[j:]
    # a new section: the offline ones right after the header (full before quick), the
    # other parts' sections stay where they are
    anchor = doc.index(HEADER_END) + len(HEADER_END)
    if name == "offline-quick" and "<!-- offline-full:end -->" in doc:
        anchor = doc.index("<!-- offline-full:end -->") + len("<!-- offline-full:end -->")
    rest = doc[anchor:].lstrip("\n")
    return doc[:anchor] + "\n\n" + block + ("\n" + rest if rest else "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("results")
    ap.add_argument("--doc", default="docs/benchmarks.md")
    ap.add_argument("--svg-dir", default="docs")
    a = ap.parse_args()
    with open(a.results) as f:
        r = json.load(f)
    body = section(r, a.svg_dir)
    head = header(r)
    # read the shared file only now, and replace it in one step
    try:
        with open(a.doc) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = ""
    new = merge(doc, head, "offline-" + r["mode"], body)
    fd, tmp = tempfile.mkstemp(dir=os.path.dirname(os.path.abspath(a.doc)), prefix=".benchmarks.")
    with os.fdopen(fd, "w") as f:
        f.write(new)
    os.chmod(tmp, 0o644)
    os.replace(tmp, a.doc)
    sys.stderr.write("offline_report: wrote the offline-%s section of %s\n" % (r["mode"], a.doc))


if __name__ == "__main__":
    main()
