# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/lib/attach_run.sh -- `giopscope attach` in the background for one scenario, and its
# stop, for the scripts that follow an ORB with it (attach_container.sh, attach_sched.sh).
# Needs GIOPSCOPE, SC_DIR and err (tests/lib/scenario.sh), ns_wait_attached and ns_wait_exit
# (tests/lib/netns.sh). The command line goes to $SC_DIR/commands.log, attach's stderr to
# $SC_DIR/attach.log.

# start_attach ARGS...: attach in the background (ATT_PID); a bounded wait until it says what
# it follows (loading the taps takes seconds on a busy machine: ns_wait_attached). 1 (and an
# err) when it did not get there.
start_attach() {
    echo "# attach:$(printf ' %q' "$GIOPSCOPE" attach "$@")" >>"$SC_DIR/commands.log"
    "$GIOPSCOPE" attach "$@" 2>"$SC_DIR/attach.log" &
    ATT_PID=$!
    ns_wait_attached "$SC_DIR/attach.log" "$ATT_PID" && return 0
    err "attach did not start" "$(tail -5 "$SC_DIR/attach.log")"
    return 1
}

# stop_attach: SIGINT to ATT_PID, then a bounded wait for its exit, which must be 0.
stop_attach() {
    kill -INT "$ATT_PID" 2>/dev/null
    ns_wait_exit "$ATT_PID" 20 || err "attach did not exit within 20 s of SIGINT"
    [ "$WAIT_RC" = 0 ] || err "attach: exit status $WAIT_RC after SIGINT" "$(tail -3 "$SC_DIR/attach.log")"
    ATT_PID=""
}
