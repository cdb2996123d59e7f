#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""`giopscope read` against the bare libpcap loop, two builds side by side.

    bench/read_ratio.py --old OLD_GIOPSCOPE --new NEW_GIOPSCOPE --bare BARE_LOOP \
        [--bare-walk BARE_WALK] --rounds 7 [--callgrind FILE ...] NAME=FILE ...

Per round and capture the arms run in one fixed order (bare loop; with
--bare-walk, bench/bare_walk, the mapped walk giopscope reads files with, alone;
read, old then new; read --pairs --format csv -o /dev/null, old then new), so a load
spike falls on neighbouring arms alike; with --rotate the order turns by one
arm each round (A B C D E, B C D E A, ...), as bench/offline_bench.py does.
Besides wall time, each arm's CPU time (user + system, from wait4) and its
ratio to the bare loop's CPU time in the same round: CPU time does not count
the time a loaded machine keeps a runnable process waiting.  Each arm's ratio to the bare loop is
taken within its round; the table gives the median wall time, the minimum and
the median of the per-round ratios.  Each capture is read once by `cat` first
(page cache).  With --callgrind FILE, instructions per packet of every arm on
FILE (valgrind --tool=callgrind, whole runs, start-up included): exact, immune
to the machine's load.  Prints Markdown tables and the load averages.
"""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time


def arms(a):
    # with --bare-walk, giopscope's own floor beside libpcap's: the mapped walk alone
    walk = [("bare walk", [a.bare_walk, "{f}"])] if a.bare_walk else []
    return [
        ("bare libpcap loop", [a.bare, "{f}"]),
    ] + walk + [
        ("read, old", [a.old, "read", "{f}"]),
        ("read, new", [a.new, "read", "{f}"]),
        ("read --pairs --format csv, old", [a.old, "read", "{f}", "--pairs", "--format", "csv", "-o", "/dev/null"]),
        ("read --pairs --format csv, new", [a.new, "read", "{f}", "--pairs", "--format", "csv", "-o", "/dev/null"]),
    ]


def run(cmd):
    """Wall time and CPU time (user + system) of one run."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise subprocess.CalledProcessError(p.returncode, cmd)
    return wall, ru.ru_utime + ru.ru_stime


def packets(bare, f):
    """The bare loop prints its packet count on stdout."""
    out = subprocess.run([bare, f], capture_output=True, text=True, check=True).stdout
    m = re.search(r"(\d+)", out)
    return int(m.group(1)) if m else 0


def loadavg():
    with open("/proc/loadavg") as fh:
        return " ".join(fh.read().split()[:3])


def callgrind_ir(cmd):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "cg.out")
        subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + cmd,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
        with open(out) as fh:
            for line in fh:
                if line.startswith("summary:") or line.startswith("totals:"):
                    return int(line.split()[1])
    raise RuntimeError("no totals in callgrind output")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--old", required=True)
    ap.add_argument("--new", required=True)
    ap.add_argument("--bare", required=True)
    ap.add_argument("--bare-walk", metavar="BARE_WALK",
                    help="also time bench/bare_walk (the mapped walk alone, read's own floor)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--rotate", action="store_true", help="turn the arms' order by one each round")
    ap.add_argument("--callgrind", action="append", default=[], metavar="NAME=FILE")
    ap.add_argument("captures", nargs="*", metavar="NAME=FILE")
    a = ap.parse_args()
    if a.rounds < 1 or a.rounds > 100:
        sys.exit("read_ratio: --rounds must be 1..100")
    caps = [c.split("=", 1) for c in a.captures]
    if any(len(c) != 2 for c in caps + [c.split("=", 1) for c in a.callgrind]):
        sys.exit("read_ratio: captures are NAME=FILE")
    print("load average before: " + loadavg())
    if caps:
        print()
        print("| capture | arm | wall s (median of %d) | min | × bare loop (median of per-round ratios) "
              "| CPU s (median) | × bare loop, CPU (median of per-round ratios) |" % a.rounds)
        print("|---|---|---:|---:|---:|---:|---:|")
    for name, f in caps:
        subprocess.run(["cat", f], stdout=subprocess.DEVNULL, check=True)
        n = packets(a.bare, f)
        label = "%s (%s packets)" % (name, format(n, ","))
        times = {k: [] for k, _ in arms(a)}
        cpu = {k: [] for k, _ in arms(a)}
        order = arms(a)
        for r in range(a.rounds):
            turn = order[r % len(order):] + order[:r % len(order)] if a.rotate else order
            for k, cmd in turn:
                w, c = run([x.format(f=f) for x in cmd])
                times[k].append(w)
                cpu[k].append(c)
        bare = times["bare libpcap loop"]
        bare_cpu = cpu["bare libpcap loop"]
        for k, _ in arms(a):
            ratios = [t / b for t, b in zip(times[k], bare)]
            cratios = [t / b if b > 0 else float("nan") for t, b in zip(cpu[k], bare_cpu)]
            print("| %s | %s | %.3f | %.3f | %.2f | %.3f | %.2f |" %
                  (label, k, statistics.median(times[k]), min(times[k]), statistics.median(ratios),
                   statistics.median(cpu[k]), statistics.median(cratios)))
        sys.stdout.flush()
    if a.callgrind:
        print()
        print("| capture | packets | bare loop Ir/packet | read Ir/packet, old | read Ir/packet, new "
              "| × bare, old → new | --pairs csv Ir/packet, old | --pairs csv Ir/packet, new | × bare, old → new |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
        for name, f in (c.split("=", 1) for c in a.callgrind):
            n = packets(a.bare, f)
            ir = {k: callgrind_ir([x.format(f=f) for x in cmd]) / n for k, cmd in arms(a)}
            b = ir["bare libpcap loop"]
            r_o, r_n = ir["read, old"], ir["read, new"]
            p_o, p_n = ir["read --pairs --format csv, old"], ir["read --pairs --format csv, new"]
            print("| %s | %s | %.0f | %.0f | %.0f | %.2f → %.2f | %.0f | %.0f | %.2f → %.2f |" %
                  (name, format(n, ","), b, r_o, r_n, r_o / b, r_n / b, p_o, p_n, p_o / b, p_n / b))
            sys.stdout.flush()
    print()
    print("load average after: " + loadavg())


if __name__ == "__main__":
    main()
