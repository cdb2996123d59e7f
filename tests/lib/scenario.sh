# shellcheck shell=bash
# tests/lib/scenario.sh -- the scenario bookkeeping of the integration scripts that run named
# scenarios (attach_ebpf.sh, attach_sched.sh, attach_truth.sh). Source it, then per scenario:
#
#     sc_begin NAME            # SC_DIR=$WORK/NAME, made fresh
#     err "what failed" "detail line" ...   # the first err of a scenario is its reason
#     SC_NOTE="figures"        # shown after PASS
#     sc_end                   # PASS/FAIL line; on FAIL the details and the scenario's files
#                              # copied to $FAIL_DIR/$SC_FAIL_PREFIX$NAME
#
# The script sets WORK, FAIL_DIR, KEEP_DIR (optional: every scenario's files copied there),
# SC_FAIL_PREFIX (default "") and SC_CP_OPTS (extra cp options, e.g. --sparse=always).
PASSED=0
FAILED=0
SC="" SC_DIR="" SC_ERR="" SC_DETAIL="" SC_NOTE=""
: "${SC_FAIL_PREFIX:=}"
: "${SC_CP_OPTS:=}"

err() {
    [ -n "$SC_ERR" ] || SC_ERR=$1
    shift
    local d
    for d in "$@"; do SC_DETAIL="$SC_DETAIL$d"$'\n'; done
}

sc_begin() {
    SC=$1 SC_ERR="" SC_DETAIL="" SC_NOTE=""
    SC_DIR=$WORK/$SC
    mkdir -p "$SC_DIR"
}

sc_end() {
    # shellcheck disable=SC2086
    if [ -n "$KEEP_DIR" ]; then
        rm -rf "${KEEP_DIR:?}/$SC"
        cp -r $SC_CP_OPTS "$SC_DIR" "$KEEP_DIR/$SC"
    fi
    if [ -z "$SC_ERR" ]; then
        echo "PASS $SC${SC_NOTE:+ ($SC_NOTE)}"
        PASSED=$((PASSED + 1))
    else
        echo "FAIL $SC: $SC_ERR"
        [ -n "$SC_DETAIL" ] && printf '%s' "$SC_DETAIL" | sed 's/^/    /' | head -50
        mkdir -p "$FAIL_DIR"
        rm -rf "${FAIL_DIR:?}/$SC_FAIL_PREFIX$SC"
        # shellcheck disable=SC2086
        cp -r $SC_CP_OPTS "$SC_DIR" "$FAIL_DIR/$SC_FAIL_PREFIX$SC"
        echo "    files: $FAIL_DIR/$SC_FAIL_PREFIX$SC"
        FAILED=$((FAILED + 1))
    fi
    SC_NOTE=""
}
