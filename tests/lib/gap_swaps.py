#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause
"""gap_swaps.py READ_CSV ATTACH_CSV PCAP SWAP_US MAX_SWAPS

gap_fills of attach's pairs CSV against those of `giopscope read` of a tcpdump capture taken
on the same interface at the same time, call by call (matched by client, server, request_id;
columns by name). They must be equal, except for a call where the capture holds two data
segments of the call's request (reply) direction, next to each other in the capture and less
than SWAP_US apart: two segments of one connection can reach the interface on two CPUs'
backlogs at once (the sending CPU differs: the application's thread, a softirq, a timer), and
then AF_PACKET (tcpdump) and tc (attach) may each see them in another order, which is one gap
fill more or fewer. Such a call may differ by at most the number of those pairs in its message;
at most MAX_SWAPS calls may need it; every one is listed. Exit 0 when that holds, 1 otherwise.
"""
import csv
import subprocess
import sys
from decimal import Decimal

sys.path.insert(0, __file__.rsplit("/", 2)[0] + "/oracle")
from compare_pairs import canonical_endpoint, stamp_ns  # noqa: E402


def rows(path):
    out = {}
    for r in csv.DictReader(open(path, newline="")):
        out.setdefault((r["client"], r["server"], r["request_id"]), []).append(r)
    return out


def segments(pcap):
    """[(t_ns, src, dst, payload bytes)] in capture order."""
    fields = ["frame.time_epoch", "ip.src", "ipv6.src", "tcp.srcport", "ip.dst", "ipv6.dst",
              "tcp.dstport", "tcp.len"]
    cmd = ["tshark", "-n", "-r", pcap, "-Y", "tcp", "-T", "fields", "-E", "separator=,", "-E", "occurrence=f"]
    for f in fields:
        cmd += ["-e", f]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    segs = []
    for line in out.splitlines():
        t, s4, s6, sp, d4, d6, dp, ln = line.split(",")
        src = canonical_endpoint("%s:%s" % (s4, sp) if s4 else "[%s]:%s" % (s6, sp))
        dst = canonical_endpoint("%s:%s" % (d4, dp) if d4 else "[%s]:%s" % (d6, dp))
        segs.append((int(Decimal(t) * 1000000000), src, dst, int(ln or 0)))
    return segs


def close_pairs(segs, src, dst, t0, t1, swap_ns):
    """Pairs of data segments src -> dst, next to each other in the capture (that direction),
    between t0 and t1, less than swap_ns apart."""
    prev, n = None, 0
    for t, s, d, ln in segs:
        if s != src or d != dst or not ln or t < t0 or t > t1:
            continue
        if prev is not None and t - prev < swap_ns:
            n += 1
        prev = t
    return n


def main():
    read_csv, attach_csv, pcap, swap_us, max_swaps = sys.argv[1:6]
    swap_ns, max_swaps = int(float(swap_us) * 1000), int(max_swaps)
    want, got = rows(read_csv), rows(attach_csv)
    segs = None
    bad, swapped, equal = [], [], 0
    for key, es in sorted(want.items()):
        os_ = got.get(key, [])
        for e, o in zip(es, os_):
            if e["gap_fills"] == "" or e["gap_fills"] == o["gap_fills"]:
                equal += 1
                continue
            if o["gap_fills"] == "":
                bad.append("%s %s %s: gap_fills %s in read, empty in attach" % (key + (e["gap_fills"],)))
                continue
            if segs is None:
                segs = segments(pcap)
            n = 0
            for src, dst, a, b in ((e["client"], e["server"], "t_request_first", "t_request_last"),
                                   (e["server"], e["client"], "t_reply_first", "t_reply_last")):
                if e[a] and e[b]:
                    n += close_pairs(segs, src, dst, stamp_ns(e[a]), stamp_ns(e[b]), swap_ns)
            what = "%s %s %s (%s): gap_fills %s in read, %s in attach; %d pair(s) of its segments under %s us apart in the capture" % (
                key + (e["operation"], e["gap_fills"], o["gap_fills"], n, swap_us))
            if abs(int(o["gap_fills"]) - int(e["gap_fills"])) <= n:
                swapped.append(what)
            else:
                bad.append(what)
    for w in swapped:
        print("SWAP " + w)
    if len(swapped) > max_swaps:
        bad.append("%d calls differ in gap_fills where two taps may see segments in other orders: more than %d"
                   % (len(swapped), max_swaps))
    for b in bad:
        print("BAD " + b)
    print("gap_fills: %d calls equal, %d explained by segments taken at once on two CPUs (at most %d), %d not"
          % (equal, len(swapped), max_swaps, len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
