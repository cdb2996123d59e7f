#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
# bench/sched_leadin.py -- how much of a woken thread's wait the kernel charged it (the lead-in),
# from a GIOPSCOPE_SCHED_RECORDS file and bench_server's -servant-log of the same run
# (tests/integration/attach_sched.sh with KEEP_DIR and GIOPSCOPE_SCHED_RECORDS set).
#
# For every servant call whose exit (t1) lies in a run that a wake-up started: the thread's CPU
# clock at t1 (servant.csv) less the run's switch-in count and the time since the switch-in is
# the lead-in; the wait is switch-in - wake-up. Split by the switch's GS_SCHED_F_FROM_IDLE.
#
# usage: bench/sched_leadin.py KEEP_DIR/quiet RECORDS OFFSET_NS
#   OFFSET_NS: CLOCK_REALTIME - CLOCK_MONOTONIC during the run (the servant log is in the first,
#   the records in the second), e.g. python3 -c 'import time; print(time.clock_gettime_ns(
#   time.CLOCK_REALTIME) - time.clock_gettime_ns(time.CLOCK_MONOTONIC))' right after it
import bisect
import statistics
import sys

d, recs, off = sys.argv[1], sys.argv[2], int(sys.argv[3])
ev = {}
for line in open(recs):
    x = list(map(int, line.split()))
    ts, kind, _cpu, tid, other, _pst, _pc, _ppc, prt, nrt = x[:10]
    fl = x[10] if len(x) > 10 else 0
    if kind == 1:
        if tid:
            ev.setdefault(tid, []).append((ts, 'out', prt, 0))
        if other:
            ev.setdefault(other, []).append((ts, 'in', nrt, fl))
    else:
        ev.setdefault(tid, []).append((ts, 'wake', 0, 0))
for t in ev:
    ev[t].sort()
res = {True: [], False: []}
for line in open(d + "/servant.csv"):
    tid, op, arg, t0, t1, c0, c1 = line.strip().split(",")
    tid, t1, c1 = int(tid), int(t1) - off, int(c1)
    e = ev.get(tid, [])
    i = bisect.bisect_right(e, (t1, 'zzz'))
    if i < 2:
        continue
    s, before = e[i - 1], e[i - 2]
    if s[1] != 'in' or before[1] != 'wake':
        continue
    lead = (c1 - s[2] - (t1 - s[0])) / 1000
    wait = (s[0] - before[0]) / 1000
    res[(s[3] & 2) != 0].append((lead - wait, wait))
for k in (True, False):
    r = res[k]
    if not r:
        continue
    dv = sorted(x[0] for x in r)
    print(("from idle  " if k else "from a task"),
          f"{len(r)} runs: lead-in - wait min {dv[0]:.1f} p5 {dv[len(dv) // 20]:.1f} "
          f"p50 {statistics.median(dv):.1f} p95 {dv[len(dv) * 19 // 20]:.1f} max {dv[-1]:.1f} us; "
          f"wait p50 {statistics.median(x[1] for x in r):.1f} max {max(x[1] for x in r):.1f} us")
