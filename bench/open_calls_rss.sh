#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# bench/open_calls_rss.sh: peak RSS per open call (issue 19: at most 128 bytes; one
# million unanswered requests under 160 MiB), and what --max-memory does to it.
#
# Captures from giopgen --mix echo --open-all --no-replies (every request sent before
# any reply, none answered: all calls open at once until the end) at two sizes; bytes
# per open call = (RSS of the larger - RSS of the smaller) / (calls of the larger -
# calls of the smaller): the fixed part (tables' first pages, libraries, buffers)
# cancels out. Writes its section of docs/benchmarks.md (between its markers).
#
# Environment (from bench/run.sh): BENCH_MODE quick|full, BENCH_BIN, BENCH_DOC.
set -euo pipefail
MODE=${BENCH_MODE:-quick}
BIN=${BENCH_BIN:-build/bench}
DOC=${BENCH_DOC:-docs/benchmarks.md}
GS=$BIN/giopscope
[ -x "$GS" ] || GS=build/giopscope
GEN=$BIN/giopgen
DATA=$BIN/data
mkdir -p "$DATA"
if [ "$MODE" = full ]; then small=100000 big=1000000; else small=20000 big=200000; fi

cap() { # calls -> path (made once)
	local f="$DATA/noreply-openall-echo-$1-s1.pcap"
	[ -s "$f" ] || "$GEN" --calls "$1" --seed 1 --mix echo --open-all --no-replies -q -o "$f"
	cat "$f" >/dev/null
	echo "$f"
}
rss() { # command... -> "KB wall_s"
	local t0 t1 kb tf
	tf=$(mktemp)
	t0=$(date +%s.%N)
	/usr/bin/time -o "$tf" -f '%M' "$@" >/dev/null 2>&1
	t1=$(date +%s.%N)
	kb=$(tail -1 "$tf")
	rm -f "$tf"
	echo "$kb $(echo "$t1 - $t0" | bc)"
}
fs=$(cap $small)
fb=$(cap $big)
rows=()
for arm in summary pairs mem64; do
	case $arm in
	summary) extra=() ;;
	pairs) extra=(--pairs --format csv -o /dev/null) ;;
	mem64) extra=(--max-memory 64m) ;;
	esac
	read -r ks ws < <(rss "$GS" read "$fs" "${extra[@]}")
	read -r kb wb < <(rss "$GS" read "$fb" "${extra[@]}")
	rows+=("$arm|$ks|$ws|$kb|$wb")
done
hit=$("$GS" read "$fb" --max-memory 64m | grep -- '^--max-memory' || true)

python3 - "$DOC" "$small" "$big" "$fs" "$fb" "$GS" "$hit" "${rows[@]}" <<'EOF'
import sys, datetime, platform, subprocess
sys.path.insert(0, "bench")
from doc_section import write_section
doc, small, big, fs, fb, gs, hit = sys.argv[1:8]
small, big = int(small), int(big)
def machine():
    model = "?"
    for l in open("/proc/cpuinfo"):
        if l.startswith("model name"):
            model = l.split(":", 1)[1].strip()
            break
    import os
    return "%s (nproc %d), Linux %s, load average %s" % (model, os.cpu_count(), platform.release(),
                                                     " ".join(open("/proc/loadavg").read().split()[:3]))
rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
cmd = {"summary": "", "pairs": " --pairs --format csv -o /dev/null", "mem64": " --max-memory 64m"}
what = {"summary": "summary", "pairs": "--pairs csv", "mem64": "summary, --max-memory 64m"}
out = ["## Memory per open call (`bench/open_calls_rss.sh`)", "",
       "Measured %s UTC, giopscope `%s`, %s. Captures: `giopgen --calls N --seed 1 --mix echo --open-all --no-replies` "
       "(every request before any reply, none answered: all N calls open until the end of the input). "
       "Peak RSS from `/usr/bin/time -f %%M`; bytes per open call = (RSS at %s calls − RSS at %s calls) ÷ %s. "
       "Target (issue 19): at most 128 bytes an open call, 1M unanswered requests under 160 MiB."
       % (datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M"), rev, machine(),
          f"{big:,}", f"{small:,}", f"{big - small:,}"), "",
       "| run | command | RSS at %s calls, MiB | RSS at %s calls, MiB | wall s (larger) | bytes per open call |" % (f"{small:,}", f"{big:,}"),
       "|---|---|---:|---:|---:|---:|"]
for r in sys.argv[8:]:
    arm, ks, ws, kb, wb = r.split("|")
    per = (int(kb) - int(ks)) * 1024 / (big - small)
    out.append("| %s | `%s read %s%s` | %.1f | %.1f | %.2f | %.0f |" % (
        what[arm], gs, fb, cmd[arm], int(ks) / 1024, int(kb) / 1024, float(wb), per))
out += ["", "The open-call index (8 MiB at the default 1,048,576 open calls) becomes resident as calls spread over it: "
        "between small sizes (bench-quick: 20,000 and 200,000) its pages add to the slope; the target is read on the full sizes."]
out += ["", "With `--max-memory 64m` the open calls are bounded (the oldest give way, counted), so the "
        "slope is not a per-call cost; its summary line: `%s`" % hit.strip()]
write_section(doc, "open-calls-rss", "\n".join(out))
print("\n".join(out))
EOF
