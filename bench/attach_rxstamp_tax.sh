#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/attach_rxstamp_tax.sh -- what holding the host's receive timestamps on costs the
# host (attach does it by default, session 11: one socket with SO_TIMESTAMPNS open while it
# runs, so that its ingress instants are the kernel's receive stamp; --no-rx-stamp leaves it
# off). While any socket of the host has SO_TIMESTAMP* set, the kernel takes a
# ktime_get_real() for every packet it receives (netif_receive_skb / netif_rx, or
# ip_local_deliver for a packet carrying its sender's delivery time: loopback, veth).
#
# Two arms, interleaved (the order alternating per round): `none` (nothing holds rx
# timestamps on: checked, see below) and `held` (a process holds one SO_TIMESTAMPNS socket,
# as attach does; 35: SO_TIMESTAMPNS on x86-64, which python's socket module does not
# name). In each window bench/floor/tcp_pingpong.c (a TCP loopback ping-pong on
# one CPU, N round trips: two segments received per round trip) runs REPS times; the
# window's figure is the lowest mean (the least disturbed). Per round the difference held -
# none; the median of those differences and its 95% confidence interval (order statistics,
# as bench/attach_toggle.sh).
# `none` is only "nothing of ours": another process of the host holding rx timestamps on
# (tcpdump, chrony with hardware stamping, ptp4l) makes both arms `held`; the script says
# which processes had SO_TIMESTAMP-like sockets it could see (ss -e does not show the option,
# so it lists tcpdump/chronyd/ptp4l/giopscope by name, before and after).
#
# usage: bench/attach_rxstamp_tax.sh     (root not needed)
# environment: ROUNDS (12), N (20000), REPS (3), CPU (0), RT (1: under chrt -f 10 if allowed)
set -u
export LC_ALL=C
cd "$(dirname "$0")/.." || exit 2
ROUNDS=${ROUNDS:-12} N=${N:-20000} REPS=${REPS:-3} CPU=${CPU:-0} RT=${RT:-1}
T=$(mktemp -d /tmp/gs-rxtax.XXXXXX)
HOLD=""
cleanup() { [ -n "$HOLD" ] && kill "$HOLD" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
cc -O2 -Wall -Wextra -Werror -pthread -o "$T/pp" bench/floor/tcp_pingpong.c || exit 2
RT_CMD=()
[ "$RT" = 1 ] && chrt -f 10 true 2>/dev/null && RT_CMD=(chrt -f 10)
others=$(ps -eo pid=,comm= | grep -E ' (tcpdump|chronyd|ptp4l|phc2sys|giopscope)$' | tr '\n' ';')
echo "rx timestamp holders seen before: ${others:-none}; load: $(uptime | sed 's/.*load/load/')"
window() {  # lowest of REPS means
    local best=""
    for _ in $(seq "$REPS"); do
        v=$("${RT_CMD[@]}" "$T/pp" "$N" "$CPU") || exit 1
        best=$(python3 -c "import sys; a=sys.argv[1]; b=float(sys.argv[2]); print(b if a=='' else min(float(a), b))" "$best" "$v")
    done
    echo "$best"
}
for r in $(seq "$ROUNDS"); do
    for arm in $( [ $((r % 2)) = 1 ] && echo "none held" || echo "held none"); do
        if [ "$arm" = held ]; then
            python3 -c 'import socket, time; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setsockopt(socket.SOL_SOCKET, 35, 1); print("ok", flush=True); time.sleep(3600)' >"$T/hold" &
            HOLD=$!
            while ! grep -q ok "$T/hold" 2>/dev/null; do sleep 0.05; done
            sleep 0.2   # net_enable_timestamp may defer the static key to a work item
        fi
        echo "$r $arm $(window)" >>"$T/runs"
        if [ "$arm" = held ]; then kill "$HOLD"; wait "$HOLD" 2>/dev/null; HOLD=""; sleep 0.2; fi
    done
done
others2=$(ps -eo pid=,comm= | grep -E ' (tcpdump|chronyd|ptp4l|phc2sys|giopscope)$' | tr '\n' ';')
echo "rx timestamp holders seen after: ${others2:-none}; load: $(uptime | sed 's/.*load/load/')"
python3 - "$T/runs" <<'PY'
import sys, math
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for r, arm, v in rows:
    by.setdefault(int(r), {})[arm] = float(v)
d = sorted(x["held"] - x["none"] for x in by.values())
none = sorted(x["none"] for x in by.values()); held = sorted(x["held"] for x in by.values())
n = len(d)
# 95% CI of the median by order statistics (binomial, n rounds)
from math import comb
best = (0, n - 1)
for k in range(n // 2):
    cover = sum(comb(n, i) for i in range(k, n - k)) / 2 ** n
    if cover >= 0.95:
        best = (k, n - 1 - k)
med = d[n // 2] if n % 2 else (d[n // 2 - 1] + d[n // 2]) / 2
print("round trip ns, median of window minima: none %.1f, held %.1f" % (none[n // 2], held[n // 2]))
print("held - none per round (ns): %s" % " ".join("%.0f" % x for x in d))
print("median %.1f ns (%.2f%%), 95%% CI [%.1f, %.1f] ns (order statistics %d..%d of %d)" %
      (med, 100 * med / none[n // 2], d[best[0]], d[best[1]], best[0] + 1, best[1] + 1, n))
PY
