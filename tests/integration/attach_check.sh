#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_check.sh -- `giopscope attach --check`: will attach load here, with a
# margin? For every mode of attach (default, --packets-only, each --hooks value, --syscall-hooks,
# --map-fcache 0 and 1, --sched, --orb omniorb, --tc-attach clsact and tcx), on a running
# omniORB server (bench_server on 127.0.0.1), and on a process that maps libssl (python3 with
# its ssl module: attach would load the TLS probes, whose rows must then be there):
#
#   check      `attach --pid SERVER --check --format jsonl MODE`: every line is an object with
#              program, hook, loaded, verified_insns, limit (1000000), used; the exit status is 0
#              exactly when every program attach would use ("used") loaded; each of those, in
#              every mode attach takes by itself (--hooks auto), must load and stay within
#              MARGIN (250000: a quarter of the verifier's budget) verified instructions. A
#              --hooks value whose path this host refuses (fentry, kprobe here) must be
#              reported refused (exit 1, a used row refused, with a reason); the auto choice
#              must then be a path that loads (the default mode's used rows).
#   error      a real `attach --hooks KIND` with a KIND --check found refused: exit 2, one line
#              naming the refused program, a reason, the kernel version (uname -r), and, when
#              the kernel refused a program (not a path the kernel lacks), a saved log file
#              that exists and is not empty.
#
# usage: tests/integration/attach_check.sh [SCENARIO...]     (default: all; --list)
# environment: GIOPSCOPE, BUILD, PORT (2819), MARGIN (250000)
# Exit 0 pass, 1 fail, 77 cannot run here (not root, no eBPF in the build, no BTF).

set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
PORT=${PORT:-2819}
MARGIN=${MARGIN:-250000}
SERVER=$BUILD/orb/bench_server
FAIL_DIR=${FAIL_DIR:-/tmp/gs-failing}
KEEP_DIR=${KEEP_DIR:-}
ALL="check error"

. tests/lib/scenario.sh
sc_want attach_check "$ALL" "$@"

. tests/lib/common.sh
attach_require python3
if [ ! -x "$SERVER" ]; then
    make -s -f tests/orb/orb.mk orb-apps BUILD="$BUILD" >&2 || skip "cannot build the ORB apps"
fi

WORK=$(mktemp -d /tmp/gs-check.XXXXXX) || exit 2
SRV_PID="" TLS_PID=""
# shellcheck disable=SC2034  # read by work_cleanup (tests/lib/common.sh)
WORK_PID_VARS="SRV_PID TLS_PID" WORK_KILL_SIG=TERM
trap work_cleanup EXIT

# the omniORB server --orb needs (a process mapping libomniORB4)
"$SERVER" -ORBendPoint "giop:tcp:127.0.0.1:$PORT" -o "$WORK/echo.ior" -d "$WORK/dead.ior" \
    >"$WORK/server.log" 2>&1 &
SRV_PID=$!
for _ in $(seq 1 100); do
    [ -s "$WORK/echo.ior" ] && break
    sleep 0.1
done
[ -s "$WORK/echo.ior" ] || { echo "FAIL setup: bench_server did not start: $(tail -3 "$WORK/server.log")"; exit 1; }
# a process mapping libssl.so.3 (attach's TLS probes load for it)
python3 -c 'import ssl, time; time.sleep(600)' &
TLS_PID=$!

SC_NOTE=""

# verdict FILE RC MODE: checks one --check run's rows; prints a summary, returns 1 on a failure
verdict() {
    python3 - "$1" "$2" "$3" "$MARGIN" <<'PY'
import json, sys
path, rc, mode, margin = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rows, bad = [], []
for n, line in enumerate(open(path), 1):
    try:
        o = json.loads(line)
    except ValueError:
        bad.append("line %d is not JSON: %r" % (n, line[:80]))
        continue
    for k in ("program", "hook", "loaded", "verified_insns", "limit", "used"):
        if k not in o:
            bad.append("line %d has no %s" % (n, k))
    if o.get("limit") != 1000000:
        bad.append("%s: limit %r" % (o.get("program"), o.get("limit")))
    rows.append(o)
used = [o for o in rows if o.get("used")]
refused = [o for o in used if not o.get("loaded")]
if not used:
    bad.append("no program attach would use")
if (rc == 0) != (not refused):
    bad.append("exit %d but %d used programs refused" % (rc, len(refused)))
for o in refused:
    if not o.get("reason"):
        bad.append("%s refused without a reason" % o.get("program"))
for o in used:
    if o.get("loaded") and (o.get("verified_insns") is None or o["verified_insns"] > margin):
        bad.append("%s (%s): %s verified instructions, over %d" % (o["program"], o["hook"], o.get("verified_insns"), margin))
names = {o["program"] for o in rows}
if mode not in ("--packets-only",) and not ({"giop_tap_ingress", "giop_tap_egress"} <= names):
    bad.append("the tap's programs are missing")
summary = ", ".join("%s %s" % (o["program"], o["verified_insns"] if o.get("loaded") else "REFUSED") for o in used)
print(("REFUSED " if refused else "OK ") + summary)
for b in bad:
    print("BAD " + b)
sys.exit(1 if bad else 0)
PY
}

scenario_check() {
    sc_begin check
    local -a modes=("" "--packets-only" "--hooks auto" "--hooks tracepoint" "--hooks fentry" "--hooks kprobe"
                    "--hooks syscalls" "--syscall-hooks" "--map-fcache 0" "--map-fcache 1" "--sched"
                    "--orb omniorb" "--tc-attach clsact" "--tc-attach tcx" "tls")
    local mode rc out notes="" pid
    for mode in "${modes[@]}"; do
        pid=$SRV_PID
        [ "$mode" = tls ] && pid=$TLS_PID
        # shellcheck disable=SC2086  # a mode is an option and its value
        timeout 120 "$GIOPSCOPE" attach --pid "$pid" --check --format jsonl ${mode#tls} \
            >"$SC_DIR/rows.jsonl" 2>"$SC_DIR/err.log"
        rc=$?
        cp "$SC_DIR/rows.jsonl" "$SC_DIR/rows_${mode// /_}.jsonl"
        out=$(verdict "$SC_DIR/rows.jsonl" "$rc" "$mode")
        if [ $? -ne 0 ] || { [ "$rc" != 0 ] && [ "$rc" != 1 ]; }; then
            err "--check ${mode:-(default)}: exit $rc" "$out" "$(tail -2 "$SC_DIR/err.log")"
            continue
        fi
        case "$mode:$out" in
            "--hooks fentry:REFUSED"*|"--hooks kprobe:REFUSED"*|"--hooks tracepoint:REFUSED"*)
                # a path this host does not offer: fine, if the auto choice loads (the
                # default mode, which must not be refused)
                notes="$notes ${mode#--hooks } refused;" ;;
            *:REFUSED*) err "--check ${mode:-(default)}: a program attach would use is refused" "$out" ;;
        esac
        if [ "$mode" = tls ] && ! grep -q '"program":"gs_ssl_write"' "$SC_DIR/rows.jsonl"; then
            err "--check on a process mapping libssl: no row of the TLS probes" "$out"
        fi
        echo "# --check ${mode:-(default)}: exit $rc: $out" >>"$SC_DIR/commands.log"
    done
    # attach's own choice (--hooks auto, the default) loads: checked above as a mode that must
    # not be refused; say which paths it took
    out=$(python3 -c '
import json, sys
print(" ".join(o["program"] for o in map(json.loads, open(sys.argv[1])) if o.get("used")))' \
        "$SC_DIR/rows_.jsonl" 2>/dev/null)
    # --check shows what attach would use, --check-all every candidate too: the same used rows
    timeout 120 "$GIOPSCOPE" attach --pid "$SRV_PID" --check-all --format jsonl >"$SC_DIR/rows_all.jsonl" 2>/dev/null
    if ! python3 -c '
import json, sys
used = [json.loads(l) for l in open(sys.argv[1])]
every = [json.loads(l) for l in open(sys.argv[2])]
ok = all(o["used"] for o in used)
ok = ok and [o["program"] for o in every if o["used"]] == [o["program"] for o in used]
ok = ok and len(every) > len(used)
sys.exit(0 if ok else 1)' "$SC_DIR/rows_.jsonl" "$SC_DIR/rows_all.jsonl"; then
        err "--check shows a row attach would not use, or --check-all not every candidate" \
            "$(cat "$SC_DIR/rows_.jsonl")" "$(cat "$SC_DIR/rows_all.jsonl")"
    fi
    SC_NOTE="auto: $out; margin $MARGIN;$notes"
    sc_end
}

scenario_error() {
    sc_begin error
    local kind="" line rc log prog k
    # a --hooks kind this host refuses (as --check says)
    for k in fentry kprobe tracepoint; do
        timeout 120 "$GIOPSCOPE" attach --pid "$SRV_PID" --check --format jsonl --hooks "$k" \
            >"$SC_DIR/rows_$k.jsonl" 2>/dev/null
        [ $? = 1 ] && { kind=$k; break; }
    done
    if [ -z "$kind" ]; then
        echo "SKIP error: every --hooks path loads on this kernel ($(uname -r)): no refusal to look at"
        sc_end
        return
    fi
    timeout 120 "$GIOPSCOPE" attach --pid "$SRV_PID" --hooks "$kind" -q >"$SC_DIR/out.txt" 2>"$SC_DIR/err.log"
    rc=$?
    line=$(grep -v "has no TCP socket yet\|loading the eBPF programs" "$SC_DIR/err.log")
    [ "$rc" = 2 ] || err "attach --hooks $kind: exit $rc (want 2)" "$line"
    [ "$(grep -c . <<<"$line")" = 1 ] || err "attach --hooks $kind: not one line" "$line"
    [ -s "$SC_DIR/out.txt" ] && err "attach --hooks $kind wrote to stdout" "$(head -2 "$SC_DIR/out.txt")"
    grep -q "kernel $(uname -r)" <<<"$line" || err "the error does not name the kernel $(uname -r)" "$line"
    grep -q "Argument list too long" <<<"$line" && err "the error says 'Argument list too long'" "$line"
    # the first program of that kind the kernel refused, as --check named it (a program whose
    # hook the kernel lacks -- a kprobe without kprobes, a tracepoint 6.1 does not have -- is no
    # refusal of the verifier's: no log then)
    prog=$(python3 -c '
import json, sys
r = [o for o in map(json.loads, open(sys.argv[1])) if not o.get("loaded") and not o["program"].startswith("(")]
print(r[0]["program"] + " " + ("nolog" if "has no" in r[0].get("reason", "") else "log" if r[0].get("verified_insns") is None or "verifier" in r[0].get("reason", "") or "EPERM" in r[0].get("reason", "") else "nolog") if r else "")' \
        "$SC_DIR/rows_$kind.jsonl" 2>/dev/null)
    if [ -n "$prog" ]; then
        grep -q "${prog% *}" <<<"$line" || grep -q "has no" <<<"$line" || err "the error does not name ${prog% *}" "$line"
        grep -q "refused\|gave up\|has no" <<<"$line" || err "the error gives no reason" "$line"
        if [ "${prog#* }" = log ]; then
            log=$(sed -n 's/.*verifier log: \([^;]*\);.*/\1/p' <<<"$line")
            if [ -z "$log" ]; then
                err "the error names no saved log" "$line"
            elif [ ! -s "$log" ]; then
                err "the saved log $log is missing or empty" "$line"
            else
                grep -q "${prog% *}" "$log" || err "the saved log $log does not mention ${prog% *}"
                cp "$log" "$SC_DIR/" && rm -f "$log"
            fi
        fi
        SC_NOTE="--hooks $kind: exit 2, ${prog% *} refused, kernel named${log:+, log saved}"
    else
        # the object has no program of that kind: the path is missing, nothing was loaded
        grep -q "no $kind program\|has no" <<<"$line" || err "the error gives no reason" "$line"
        SC_NOTE="--hooks $kind: exit 2; this build's object has no $kind program"
    fi
    sc_end
}

SC_FAIL_PREFIX=attach_check_ SC_CP_OPTS=""
sc_run_all "$ALL"
