#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/kernels/guest.sh OUT TOP -- the runner inside a check-kernels guest (tests/kernels/init
# starts it; it is not meant to run on a host). It runs the tests of OUT/plan.tsv (written by
# check-kernels.sh from tests/kernels/tests.list: name, timeout in seconds, optional flag,
# command) one after another from TOP, the worktree, each under its timeout, and writes
#   OUT/NAME.log       the test's output
#   OUT/results.tsv    one line per test as it ends: name, result, seconds, reason
#                      (pass; FAIL: non-zero exit, a timeout, or a skip -- exit 77 or a SKIP
#                      line: the host installed everything, a test that did not run proves
#                      nothing; absent: an optional test whose script is not in the tree)
#   OUT/failed/NAME/   the failing scenarios' files (the scripts' FAIL_DIR)
# and on the console: each test's start, its PASS/FAIL/SKIP lines as they come, a line a
# minute while it runs, its result. Exit 0 when every test passed (or was absent), else 1.
set -u
OUT=${1:?results folder}
TOP=${2:?worktree}
BUILD=${GS_BUILD:-$TOP/build}
cd "$TOP" || exit 2
say() { echo "guest: $*"; }

plan=$OUT/plan.tsv
[ -r "$plan" ] || { say "no $plan"; exit 2; }
# the build folder is the host's (read-only under the overlay): nothing is built here
[ -x "$BUILD/giopscope" ] || { say "$BUILD/giopscope is not built"; exit 2; }
: >"$OUT/results.tsv"
{
    echo "kernel $(uname -r)"
    echo "uname $(uname -a)"
    echo "vcpus $(nproc)"
    echo "mem $(sed -n 's/^MemTotal: *//p' /proc/meminfo)"
    echo "boot_s $(cut -d' ' -f1 /proc/uptime)"
} >"$OUT/guest.txt"

total=$(grep -c . "$plan")
n=0 failed=0
set -f   # commands are split into words, never globbed
while IFS=$'\t' read -r name tmo flag cmd; do
    n=$((n + 1))
    # shellcheck disable=SC2206  # the command's words
    all=($cmd)
    # leading NAME=VALUE words are the test's environment, the rest its command
    assigns=() words=()
    for w in "${all[@]}"; do
        if [ ${#words[@]} -eq 0 ] && [[ "$w" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]]; then
            assigns+=("$w")
        else
            words+=("$w")
        fi
    done
    log=$OUT/$name.log
    if [ ! -e "${words[0]}" ]; then
        if [ "$flag" = optional ]; then
            say "[$n/$total] $name: absent (${words[0]} is not in this tree)"
            printf '%s\tabsent\t0\t%s not in the tree\n' "$name" "${words[0]}" >>"$OUT/results.tsv"
            continue
        fi
        say "[$n/$total] $name: FAIL: ${words[0]} missing"
        printf '%s\tFAIL\t0\t%s missing\n' "$name" "${words[0]}" >>"$OUT/results.tsv"
        failed=$((failed + 1))
        continue
    fi
    say "[$n/$total] $name: $cmd (timeout ${tmo} s)"
    mkdir -p "$OUT/failed/$name"
    start=$(date +%s)
    # a generous bound per script (TCG runs the verifier and everything else several times
    # slower than the host); attach's own wait for its programs raised to match
    timeout -k 30 "$tmo" env BUILD="$BUILD" GIOPSCOPE="$BUILD/giopscope" \
        FAIL_DIR="$OUT/failed/$name" ATTACH_START_S=600 GIOPSCOPE_STRICT=1 \
        "${assigns[@]}" "${words[@]}" >"$log" 2>&1 </dev/null &
    pid=$!
    shown=0 ticks=0
    # progress until it ends: bounded by the timeout above (plus its kill grace), checked
    # every 2 s
    for _ in $(seq 1 $(((tmo + 60) / 2))); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 2
        ticks=$((ticks + 1))
        lines=$(wc -l <"$log")
        if [ "$lines" -gt "$shown" ]; then
            sed -n "$((shown + 1)),${lines}p" "$log" | grep -E '^(PASS|FAIL|SKIP)' | sed "s/^/guest:     $name: /"
            shown=$lines
        fi
        [ $((ticks % 30)) -eq 0 ] && say "    $name: running, $((ticks * 2)) s"
    done
    wait "$pid"
    rc=$?
    secs=$(($(date +%s) - start))
    sed -n "$((shown + 1)),\$p" "$log" | grep -E '^(PASS|FAIL|SKIP)' | sed "s/^/guest:     $name: /"
    reason=""
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        reason="timed out after $tmo s"
    elif [ "$rc" -eq 77 ]; then
        reason="skipped: $(grep -m1 'SKIP' "$log")"
    elif grep -q '^SKIP\|: SKIP' "$log"; then
        reason="a scenario skipped: $(grep -m1 '^SKIP\|: SKIP' "$log")"
    elif [ "$rc" -ne 0 ]; then
        # the first failure and its first detail (the scripts indent them; not the files line)
        reason=$(awk '/^FAIL/ && !f { f = 1; r = $0; next }
                      f == 1 && /^ / && !/^ *files:/ { sub(/^ */, ""); r = r " " $0; f = 2 }
                      f == 1 && !/^ / { f = 2 }
                      END { print r }' "$log")
        [ -n "$reason" ] || reason="exit $rc: $(grep -v '^ *$' "$log" | tail -1)"
        # a load the kernel refused says why in attach's stderr, kept with the scenario
        case "$reason" in
            *libbpf:*|*"giopscope attach:"*) ;;
            *) why=$(grep -rhs -m1 -E '^giopscope attach: cannot|^libbpf: .*(not found|failed to find|failed to load)' \
                         "$OUT/failed/$name" | head -1)
               [ -n "$why" ] && reason="$reason: $why" ;;
        esac
    fi
    if [ -z "$reason" ]; then
        result=pass
        rmdir "$OUT/failed/$name" 2>/dev/null
    else
        result=FAIL
        failed=$((failed + 1))
    fi
    reason=$(printf '%s' "$reason" | tr '\t\n' '  ' | cut -c1-300)
    printf '%s\t%s\t%s\t%s\n' "$name" "$result" "$secs" "$reason" >>"$OUT/results.tsv"
    sync
    say "[$n/$total] $name: $result in $secs s${reason:+: $reason}"
done <"$plan"
set +f
rmdir "$OUT/failed" 2>/dev/null
[ "$failed" -eq 0 ]
