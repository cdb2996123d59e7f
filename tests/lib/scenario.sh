# SPDX-License-Identifier: BSD-2-Clause
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
# SC_FAIL_PREFIX (default "") and SC_CP_OPTS (extra cp options, e.g. --sparse=always);
# SC_ANNOUNCE=1 prints "--- NAME" at sc_begin, SC_RM_DIR=1 removes SC_DIR at sc_end.
# A script with per-scenario state of its own defines any of these, which are then called:
#     sc_reset                 # by sc_begin, after SC_DIR is made: the script's own variables
#     sc_stop                  # first in sc_end: stop what the scenario left running
#     sc_retry                 # in sc_end on a failure: status 0 when the scenario should run
#                              # once more (then SC_RETRY=1 and nothing is counted)
PASSED=0
FAILED=0
SC="" SC_DIR="" SC_ERR="" SC_DETAIL="" SC_NOTE="" SC_RETRY=0
: "${SC_FAIL_PREFIX:=}"
: "${SC_CP_OPTS:=}"
: "${SC_ANNOUNCE:=0}"
: "${SC_RM_DIR:=0}"
: "${KEEP_DIR:=}"

# err REASON [DETAIL...]: the first reason is the scenario's; later ones join the details
err() {
    if [ -z "$SC_ERR" ]; then SC_ERR=$1; else SC_DETAIL="$SC_DETAIL$1"$'\n'; fi
    shift
    local d
    for d in "$@"; do SC_DETAIL="$SC_DETAIL$d"$'\n'; done
}

sc_begin() {
    SC=$1 SC_ERR="" SC_DETAIL="" SC_NOTE=""
    SC_DIR=$WORK/$SC
    mkdir -p "$SC_DIR"
    if declare -F sc_reset >/dev/null; then sc_reset; fi
    if [ "$SC_ANNOUNCE" = 1 ]; then echo "--- $SC"; fi
}

sc_end() {
    if declare -F sc_stop >/dev/null; then sc_stop; fi
    # shellcheck disable=SC2086
    if [ -n "$KEEP_DIR" ]; then
        rm -rf "${KEEP_DIR:?}/$SC"
        mkdir -p "$KEEP_DIR"
        cp -r $SC_CP_OPTS "$SC_DIR" "$KEEP_DIR/$SC"
    fi
    SC_RETRY=0
    if [ -n "$SC_ERR" ] && declare -F sc_retry >/dev/null && sc_retry; then
        echo "RETRY $SC: $SC_ERR"
        # shellcheck disable=SC2034  # read by the script (its retry loop)
        SC_RETRY=1 SC_NOTE=""
        [ "$SC_RM_DIR" = 1 ] && rm -rf "$SC_DIR"
        return 0
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
    [ "$SC_RM_DIR" = 1 ] && rm -rf "$SC_DIR"
    return 0
}

# sc_want SCRIPT "ALL" "$@": the scenarios asked for on the command line into WANT (all of ALL
# when none); --list prints ALL, -h the script's header, an unknown name exits 2.
sc_want() {
    local name=$1 all=$2 a
    shift 2
    WANT=""
    for a in "$@"; do
        case "$a" in
            --list) echo "$all" | tr ' ' '\n'; exit 0 ;;
            -h|--help) sed -n '3,/^$/p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
            -*) echo "$name: unknown option $a" >&2; exit 2 ;;
            *) case " $all " in
                   *" $a "*) WANT="$WANT $a" ;;
                   *) echo "$name: unknown scenario $a (--list)" >&2; exit 2 ;;
               esac ;;
        esac
    done
    [ -n "$WANT" ] || WANT=$all
}

# sc_run_all: every scenario of WANT (scenario_NAME), then the count line; the script's status
sc_run_all() {
    local s
    for s in $WANT; do
        "scenario_$s"
    done
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" = 0 ]
}
