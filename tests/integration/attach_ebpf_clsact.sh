#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/attach_ebpf_clsact.sh -- attach_ebpf.sh's scenarios that depend on how the
# packet tap is attached, with `attach --tc-attach clsact` (tc clsact filters, the way for
# kernels before 6.6) instead of TCX links: netns (the same calls as `read` of tcpdump's
# capture), loopback (all four instants, in order), cleanup (no program, link, filter or
# qdisc left after SIGINT, SIGTERM, SIGHUP, SIGKILL), clsact_stale (a filter left by a killed
# attach and its guard is removed by the next start, none after its SIGINT).
#
# usage: tests/integration/attach_ebpf_clsact.sh [SCENARIO...]   (default: those four)
# environment: as attach_ebpf.sh. Exit status as attach_ebpf.sh (77: cannot run here).
cd "$(dirname "$0")/../.." || exit 2
[ $# -gt 0 ] || set -- netns loopback cleanup clsact_stale
TC_ATTACH=clsact exec tests/integration/attach_ebpf.sh "$@"
