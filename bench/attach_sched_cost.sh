#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/attach_sched_cost.sh -- what `attach --sched` (and `--sched --orb omniorb`) add over plain
# attach (issue 17): the echo round trip, and the kernel time of their programs.
#
# 1. bench/attach_toggle.sh with the arms none, attach, attach_sched, attach_orb: one omniORB
#    client making echoString(32) calls back to back the whole time, the taps switched on and off
#    around it in rotating order; per on-window the round trip's p50 minus its two neighbouring
#    off-windows' (Δp50). Round k is the k-th on-window of every arm (the arms of one round run
#    one after the other, a few seconds apart). Printed: per pair of arms the median over rounds
#    of the per-round difference of Δp50 (attach_sched - attach: what --sched adds; attach_orb -
#    attach_sched: what --orb adds on top), with a confidence interval of that median from order
#    statistics (the widest pair of ranks whose binomial coverage is at least 95%: with 8 rounds,
#    the smallest and largest, 99.2%).
# 2. bench/attach_bpfcost.sh with ATTACH_OPTS="--sched" (and "--sched --orb omniorb", IDLE=0):
#    kernel.bpf_stats_enabled=1, run_time_ns / run_cnt per program over CALLS echo calls: ns per
#    run and runs per call of gs_sched_switch, gs_sched_wakeup (every context switch and wake-up
#    of the machine, other processes' rejected by the thread-group compare) and of the uprobes.
#
# usage: bench/attach_sched_cost.sh      (as root; not part of make check; ~15 min with the defaults)
# environment: PAIRS (8: rounds), CALLS (20000), TOGGLE_MD (an attach_toggle.sh output of these four
#   arms to analyse instead of running it), SKIP_BPFSTATS (1: no step 2), NS_TAG (sc), and what
#   attach_toggle.sh and attach_bpfcost.sh take (GIOPSCOPE, BUILD, LOCK, ...)
# Prints a markdown section on stdout (docs/benchmarks.md keeps the results with their command).
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
export NS_TAG=${NS_TAG:-sc}
PAIRS=${PAIRS:-8}
CALLS=${CALLS:-20000}
WORK=$(mktemp -d /tmp/gs-sched-cost.XXXXXX) || exit 2
trap 'rm -rf "$WORK"' EXIT

md=${TOGGLE_MD:-}
if [ -z "$md" ]; then
    md=$WORK/toggle.md
    SIZES=32 ARMS="none attach attach_sched attach_orb" PAIRS=$PAIRS OUT=$md bench/attach_toggle.sh >&2 ||
        { echo "attach_sched_cost: attach_toggle.sh failed" >&2; exit 1; }
fi
[ -r "$md" ] || { echo "attach_sched_cost: cannot read $md" >&2; exit 2; }

echo "### attach --sched / --orb: added round trip and kernel time ($(date -u '+%Y-%m-%d %H:%M UTC'))"
echo
echo "- command: \`$0${*:+ $*}\` (PAIRS=$PAIRS CALLS=$CALLS${TOGGLE_MD:+ TOGGLE_MD=$TOGGLE_MD}); load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
grep -E '^- (command|machine):' "$md" | sed 's/^- /- toggle run: /'
echo
python3 - "$md" <<'PY'
import math, re, statistics, sys
text = open(sys.argv[1]).read()
m = re.search(r"Δp50 per on-window, in time order \(µs\): (.*)", text)
if not m:
    sys.exit("no per-window line in " + sys.argv[1])
arms = {}
for part in m.group(1).split(";"):
    w = part.split()
    # "attach_sched 32 bytes +8.4 +9.0 ..."
    arms[w[0]] = [float(v) for v in w[3:]]
def ci(v):
    n = len(v)
    v = sorted(v)
    best = (0, n - 1, 1 - 2 / 2 ** n)
    for k in range(n // 2):
        cov = 1 - 2 * sum(math.comb(n, i) for i in range(k + 1)) / 2 ** n
        if cov >= 0.95:
            best = (k, n - 1 - k, cov)
    lo, hi, cov = best
    return v[lo], v[hi], cov
print("| difference of Δp50 per round | rounds | median (µs) | interval of the median (coverage) | per round, in order |")
print("|---|---|---|---|---|")
for a, b in (("attach_sched", "attach"), ("attach_orb", "attach"), ("attach_orb", "attach_sched"), ("attach", "none")):
    if a not in arms or b not in arms:
        continue
    d = [x - y for x, y in zip(arms[a], arms[b])]
    lo, hi, cov = ci(d)
    print(f"| {a} - {b} | {len(d)} | {statistics.median(d):+.1f} | {lo:+.1f} .. {hi:+.1f} ({cov:.1%}) | "
          + " ".join(f"{x:+.1f}" for x in d) + " |")
PY
echo
if [ "${SKIP_BPFSTATS:-0}" != 1 ]; then
    for opts in "--sched" "--sched --orb omniorb"; do
        idle=1
        [ "$opts" != "--sched" ] && idle=0
        echo "bench/attach_bpfcost.sh, ATTACH_OPTS=\"$opts\" IDLE=$idle CALLS=$CALLS:"
        echo
        echo '```'
        ATTACH_OPTS="$opts" IDLE=$idle CALLS=$CALLS bench/attach_bpfcost.sh 2>&1 | grep -v '^#' | tail -25
        echo '```'
        echo
    done
fi
