#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/prometheus.sh -- a real Prometheus server (Debian's `prometheus` package,
# run here as a plain process, never as its service) scraping two `giopscope live --metrics`
# probes, as it would scrape many hosts: what Prometheus stores and computes is compared with
# what giopscope itself wrote.
#
# One network namespace of its own (gsprm-PID; process helpers and cleanup of tests/lib/netns.sh);
# everything runs on its loopback:
#   hosta, hostb  two omniORB bench_servers (127.0.0.1:2809 and :2810), each watched by its own
#                 `giopscope live -i lo --ports P --pairs --summary --metrics 127.0.0.1:946x`;
#                 hostb's with --metrics-web-config: TLS (a CA and a certificate for 127.0.0.1
#                 made here, tests/lib/metrics_web.sh) and basic auth (a bcrypt hash)
#   prometheus    127.0.0.1:9090, a temporary --storage.tsdb.path, a generated prometheus.yml
#                 (scrape_interval and evaluation_interval 1s, the targets labelled
#                 instance="hosta"/"hostb"; hostb's job scrapes with scheme https, tls_config
#                 ca_file and basic_auth password_file, as docs/metrics.md shows) loading the
#                 rule file of docs/metrics.md
# Traffic (bench_client): first one echoString and one slow(0) per host, and a wait until
# Prometheus has scraped them; then 300 echoString and 100 slow calls on hosta, 200 and 80 on
# hostb (counts that tell the hosts apart), the slow calls sleeping 19 x 300 us then 12 ms on
# hosta, 4 x 1 ms then 30 ms on hostb, so that the p99 of slow is in another bucket on each
# host, and far from echoString's.
# Checks:
#   promtool     the rule file in docs/metrics.md passes `promtool check rules`, its scrape and
#                federation configurations and the generated one `promtool check config`, and
#                tests/lib/prom_rules_test.yml (the alert fires for an operation whose p99,
#                summed over two hosts, crosses its threshold, and not for another) passes
#                `promtool test rules`
#   targets      both targets are up in /api/v1/targets (hostb's over TLS with basic auth)
#   web          hostb's endpoint with curl: the password and the CA 200; a wrong password and
#                none 401 with WWW-Authenticate; plain HTTP refused (400, no metrics); the
#                docs/metrics.md TLS scrape configuration passes `promtool check config`
#   counts       after the traffic, Prometheus's giopscope_calls_total and
#                giopscope_call_duration_seconds_count per instance and operation (polled,
#                bounded, until they equal what giopscope's /metrics says at the end) equal
#                the last /metrics scrape by curl and the rows of each --pairs CSV (read by
#                column name); their sum over the instances equals the rows of both files
#   p99          histogram_quantile(0.99, sum by (le, operation) (increase(bucket[...]))) (both
#                hosts) and sum by (le, operation, instance) (each host), every series from its
#                first sample to its last (nothing for Prometheus to extrapolate: its
#                increase of _count must equal the replies after the first sample), against the
#                p99 of those pairs rows; the quantile of the counters since giopscope started
#                against the p99 of all pairs rows and of each probe's own summary. Agreeing
#                means: within the width of the bucket (lo, hi] holding giopscope's value and
#                in that bucket, unless the value is within 0.8% of a bound (the lines say which
#                bucket, and whether the estimate fell in the same one)
#                (tests/lib/prom_api_check.py; its header says how each figure is made)
#   rules        every documented rule evaluated without error in the live server, and the
#                recorded p99 is its expression's value at the rule's evaluation time
#   stop         giopscope exits 0 on SIGINT; prometheus is stopped by its pid
# Skipped (77) unless root with network namespaces and the prometheus package's binaries;
# GIOPSCOPE_STRICT=1 (make check) turns a skip into a failure. Prints PASS/FAIL per check, then
# "N passed, N failed".
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SERVER=$BUILD/orb/bench_server
CLIENT=$BUILD/orb/bench_client
PROMETHEUS=${PROMETHEUS:-prometheus}
PROMTOOL=${PROMTOOL:-promtool}
PROM=127.0.0.1:9090
CHECK=tests/lib/prom_api_check.py

. tests/lib/common.sh
. tests/lib/netns.sh
. tests/lib/metrics_web.sh

[ -x "$GIOPSCOPE" ] || ns_skip "$GIOPSCOPE not built"
for tool in "$PROMETHEUS" "$PROMTOOL" curl python3 timeout; do
    command -v "$tool" >/dev/null 2>&1 || ns_skip "$tool not installed (scripts/install-deps.sh check)"
done
if [ ! -x "$SERVER" ] || [ ! -x "$CLIENT" ]; then
    make -s orb-apps BUILD="$BUILD" >/dev/null 2>&1 || ns_skip "cannot build the ORB apps"
fi
ns_require

WORK=$(mktemp -d /tmp/gs-prm.XXXXXX) || exit 2
# shellcheck disable=SC2317,SC2034  # called by ns_cleanup through NS_CLEANUP_HOOK
# shellcheck disable=SC2034
NS_CLEANUP_HOOK=work_cleanup
# one namespace (no veth: its loopback carries everything), cleaned up by ns_cleanup as
# ns_setup's would be: what ns_start started killed by pid, the namespace deleted
NS=gsprm-$$
trap 'ns_cleanup' EXIT
trap 'ns_cleanup; trap - EXIT; exit 130' INT
trap 'ns_cleanup; trap - EXIT; exit 143' TERM
ip netns add "$NS" || { echo "FAIL setup: cannot create the network namespace $NS"; exit 1; }
# shellcheck disable=SC2034  # read by ns_cleanup
NS_LIST=$NS
ip -n "$NS" link set lo up || { echo "FAIL setup: lo down in $NS"; exit 1; }

PASSED=0
FAILED=0
pass() { echo "PASS $1${2:+: $2}"; PASSED=$((PASSED + 1)); }
fail() { echo "FAIL $1: $2"; FAILED=$((FAILED + 1)); }
finish() {
    echo "$PASSED passed, $FAILED failed"
    [ "$FAILED" -eq 0 ]
    exit $?
}
in_ns() { ip netns exec "$NS" "$@"; }

# ------------------------------------------------------------------ promtool, offline
# doc_block FIRSTLINE: the ```yaml block of docs/metrics.md whose first line starts so
doc_block() {
    awk -v want="$1" '/^```yaml$/ { inb = 1; first = 1; next }
        inb && /^```$/ { inb = 0; if (took) exit; next }
        inb && first { first = 0; if (index($0, want) == 1) took = 1 }
        took && inb { print }' docs/metrics.md
}
doc_block "# giopscope.rules.yml" >"$WORK/giopscope.rules.yml"
doc_block "# prometheus.yml" >"$WORK/doc_scrape.yml"
doc_block "# the global prometheus.yml" >"$WORK/doc_federate.yml"
doc_block "# prometheus.yml: TLS and basic auth" >"$WORK/doc_scrape_tls.yml"
# hostb over TLS with basic auth (skipped, and said, in a build without OpenSSL)
WEB_B=0
HOSTB_JOB="
      - targets: ['127.0.0.1:9465']
        labels: {instance: hostb}"
if metrics_web_have; then
    why=$(metrics_web_certs "$WORK") || { echo "FAIL setup: certificates: $why"; exit 1; }
    printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\nbasic_auth_users:\n  prometheus: %s\n' \
        "$(metrics_web_hash 'scrape me')" >"$WORK/web_b.yml"
    printf 'scrape me\n' >"$WORK/password_b"
    WEB_B=1
    HOSTB_JOB="
  - job_name: giopscope-tls
    scheme: https
    tls_config:
      ca_file: $WORK/ca.crt
    basic_auth:
      username: prometheus
      password_file: $WORK/password_b
    static_configs:
      - targets: ['127.0.0.1:9465']
        labels: {instance: hostb}"
else
    echo "SKIP web: $GIOPSCOPE has no TLS for --metrics (built without OpenSSL): hostb is scraped over plain HTTP"
fi
cp tests/lib/prom_rules_test.yml "$WORK/"
cat >"$WORK/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files: [giopscope.rules.yml]
scrape_configs:
  - job_name: giopscope
    static_configs:
      - targets: ['127.0.0.1:9464']
        labels: {instance: hosta}$HOSTB_JOB
EOF
why=""
for f in giopscope.rules.yml doc_scrape.yml doc_federate.yml doc_scrape_tls.yml; do
    [ -s "$WORK/$f" ] || why="$why a yaml block of docs/metrics.md is missing ($f)"
done
for f in doc_scrape.yml doc_federate.yml doc_scrape_tls.yml; do
    [ -z "$why" ] && ! "$PROMTOOL" check config "$WORK/$f" >"$WORK/promtool.txt" 2>&1 && why="docs/metrics.md $f: $(tr '\n' ' ' <"$WORK/promtool.txt")"
done
[ -z "$why" ] && ! "$PROMTOOL" check rules "$WORK/giopscope.rules.yml" >"$WORK/promtool.txt" 2>&1 && why="check rules: $(tr '\n' ' ' <"$WORK/promtool.txt")"
[ -z "$why" ] && ! "$PROMTOOL" check config "$WORK/prometheus.yml" >"$WORK/promtool.txt" 2>&1 && why="check config: $(tr '\n' ' ' <"$WORK/promtool.txt")"
[ -z "$why" ] && ! (cd "$WORK" && "$PROMTOOL" test rules prom_rules_test.yml) >"$WORK/promtool.txt" 2>&1 && why="test rules: $(tr '\n' ' ' <"$WORK/promtool.txt")"
if [ -z "$why" ]; then
    pass promtool "$(grep -c 'record:\|alert:' "$WORK/giopscope.rules.yml") rules and the scrape (plain, TLS with basic auth) and federation configurations of docs/metrics.md checked; prom_rules_test.yml: the alert fires for slowop only"
else
    fail promtool "$why"
fi

# ------------------------------------------------------------------ servers, probes, prometheus
port_of() { case $1 in a) echo 2809 ;; b) echo 2810 ;; esac; }    # the ORB's
mport_of() { case $1 in a) echo 9464 ;; b) echo 9465 ;; esac; }   # giopscope's /metrics
for h in a b; do
    port=$(port_of "$h")
    ns_start "$NS" "$WORK/server_$h.log" "$SERVER" -ORBendPoint "giop:tcp:127.0.0.1:$port" -o "$WORK/echo_$h.ior"
done
for h in a b; do
    ns_wait_file "$WORK/echo_$h.ior" 15 || { fail setup "server $h did not start: $(tail -2 "$WORK/server_$h.log")"; finish; }
done
LIVE_a="" LIVE_b=""
for h in a b; do
    port=$(port_of "$h")
    mport=$(mport_of "$h")
    web=()
    [ "$h" = b ] && [ "$WEB_B" = 1 ] && web=(--metrics-web-config "$WORK/web_b.yml")
    ns_start "$NS" "$WORK/live_$h.log" "$GIOPSCOPE" live -q -i lo --ports "$port" --pairs -o "$WORK/pairs_$h.csv" \
        --summary --metrics "127.0.0.1:$mport" "${web[@]}"
    case $h in a) LIVE_a=$NS_LAST_PID ;; b) LIVE_b=$NS_LAST_PID ;; esac
    ns_wait_port "$NS" "$mport" 15 || { fail setup "no metrics port for $h: $(tail -2 "$WORK/live_$h.log")"; finish; }
done
sleep 0.5   # the capture is open once the port is (session before tap is not guaranteed)

# never the packaged service: this process, its own storage, its own config, killed by pid
ns_start "$NS" "$WORK/prometheus.log" "$PROMETHEUS" --config.file="$WORK/prometheus.yml" \
    --storage.tsdb.path="$WORK/tsdb" --web.listen-address="$PROM" --log.level=warn
PROM_PID=$NS_LAST_PID
T_START=$(date +%s)
if out=$(in_ns python3 "$CHECK" wait-up "http://$PROM" 2 60); then
    pass targets "$out"
else
    fail targets "$out; $(tail -3 "$WORK/prometheus.log")"
    finish
fi

# ------------------------------------------------------------------ traffic
client() { # HOST LOG ARGS...: one bench_client run against HOST's server
    local h=$1 log=$2
    shift 2
    ns_run "$NS" 120 "$CLIENT" -i "$WORK/echo_$h.ior" -q "$@" >>"$WORK/$log" 2>&1
}
for h in a b; do
    if ! client "$h" warm.log -op echoString -size 16 -n 1 || ! client "$h" warm.log -op slow -size 0 -n 1; then
        fail setup "warm-up client: $(tail -1 "$WORK/warm.log")"
        finish
    fi
done
spec="giopscope_call_duration_seconds_count:hosta:echoString=1,giopscope_call_duration_seconds_count:hosta:slow=1"
spec="$spec,giopscope_call_duration_seconds_count:hostb:echoString=1,giopscope_call_duration_seconds_count:hostb:slow=1"
in_ns python3 "$CHECK" wait-count "http://$PROM" "$spec" 30 >"$WORK/wait.txt" ||
    { fail setup "warm-up calls not scraped: $(cat "$WORK/wait.txt")"; finish; }

traffic() { # HOST ECHO_CALLS SLOW_CALLS SLOW_USECS
    client "$1" main.log -op echoString -size 64 -n "$2" || return 1
    client "$1" main.log -op slow -usecs "$4" -n "$3"
}
if ! traffic a 300 100 "$(printf '300,%.0s' $(seq 1 19))12000" || ! traffic b 200 80 1000,1000,1000,1000,30000; then
    fail setup "client: $(tail -1 "$WORK/main.log")"
    finish
fi
# every call has ended once both CSVs stop growing (bounded)
prev=""
for _ in $(seq 1 50); do
    n="$(wc -l <"$WORK/pairs_a.csv") $(wc -l <"$WORK/pairs_b.csv")"
    [ "$n" = "$prev" ] && break
    prev=$n
    sleep 0.2
done

# ------------------------------------------------------------------ what giopscope says at the end
# the last scrape by curl, and the values Prometheus must reach (polled, bounded)
spec=""
for h in a b; do
    mport=$(mport_of "$h")
    if [ "$h" = b ] && [ "$WEB_B" = 1 ]; then
        in_ns curl -s -m 5 --cacert "$WORK/ca.crt" -u 'prometheus:scrape me' "https://127.0.0.1:$mport/metrics" >"$WORK/scrape_$h.txt"
    else
        in_ns curl -s -m 5 "http://127.0.0.1:$mport/metrics" >"$WORK/scrape_$h.txt"
    fi
    spec="$spec$(sed -n 's/^\(giopscope_calls_total\|giopscope_call_duration_seconds_count\){operation="\([^"]*\)"} \([0-9]*\)$/\1:host'"$h"':\2=\3,/p' "$WORK/scrape_$h.txt")"
done
if [ -z "$spec" ]; then
    fail counts "the last scrape has no giopscope_calls_total"
    finish
fi
if ! T_MATCH=$(in_ns python3 "$CHECK" wait-count "http://$PROM" "${spec%,}" 30); then
    fail counts "Prometheus never reached giopscope's final counts: $T_MATCH"
    finish
fi
# the recording rules evaluated after that (same group: the p99 rule after the bucket rule)
if ! T_Q=$(in_ns python3 "$CHECK" wait-rule "http://$PROM" operation:giopscope_call_duration_seconds:p99_rate5m "$T_MATCH" 30); then
    fail rules "the recording rule was not evaluated on the final data: $T_Q"
    finish
fi

# hostb's endpoint as anyone else would try it
if [ "$WEB_B" = 1 ]; then
    url=https://127.0.0.1:9465/metrics
    code() { in_ns curl -s -m 5 -o "$WORK/web_body.txt" -D "$WORK/web_head.txt" -w '%{http_code}' "$@"; }
    good=$(code --cacert "$WORK/ca.crt" -u 'prometheus:scrape me' "$url")
    good_body=$(grep -c '^giopscope_calls_total{' "$WORK/web_body.txt")
    wrong=$(code --cacert "$WORK/ca.crt" -u 'prometheus:scrape you' "$url")
    wrong_hdr=$(grep -ci '^WWW-Authenticate: Basic' "$WORK/web_head.txt")
    none=$(code --cacert "$WORK/ca.crt" "$url")
    plain=$(code "http://127.0.0.1:9465/metrics")
    plain_body=$(grep -c '^giopscope_' "$WORK/web_body.txt")
    if [ "$good" = 200 ] && [ "$good_body" -gt 0 ] && [ "$wrong" = 401 ] && [ "$wrong_hdr" = 1 ] &&
       [ "$none" = 401 ] && [ "$plain" != 200 ] && [ "$plain_body" = 0 ]; then
        pass web "over TLS: the password 200 ($good_body giopscope_calls_total series), a wrong one $wrong with WWW-Authenticate, none $none; plain HTTP $plain ($(head -c 60 "$WORK/web_body.txt"))"
    else
        fail web "password $good ($good_body series), wrong $wrong (WWW-Authenticate: $wrong_hdr), none $none, plain HTTP $plain ($plain_body metric lines)"
    fi
fi

# the summaries come at SIGINT; Prometheus keeps what it has, queried at T_Q
rc_a=0 rc_b=0
ns_stop "$LIVE_a" INT 20 || rc_a=$?
ns_stop "$LIVE_b" INT 20 || rc_b=$?
RANGE=$(( $(date +%s) - T_START + 60 ))
in_ns python3 "$CHECK" check "http://$PROM" "$T_Q" "$RANGE" \
    "hosta=$WORK/pairs_a.csv,$WORK/scrape_a.txt,$WORK/live_a.log" \
    "hostb=$WORK/pairs_b.csv,$WORK/scrape_b.txt,$WORK/live_b.log" >"$WORK/check.txt" 2>&1
for k in counts counts-sum p99-increase p99-lifetime rules; do
    block=$(awk -v k="$k" '$1 == k { on = 1; print; next } on && /^  / { print; next } { on = 0 }' "$WORK/check.txt")
    case "$block" in
        "$k ok "*) pass "$k" "${block#"$k ok "}" ;;
        *) fail "$k" "${block:-$(cat "$WORK/check.txt")}" ;;
    esac
done

ns_stop "$PROM_PID" TERM 20
prc=$?
if [ "$rc_a" = 0 ] && [ "$rc_b" = 0 ] && [ "$prc" = 0 ] && ! kill -0 "$PROM_PID" 2>/dev/null; then
    pass stop "giopscope exit 0 and 0 on SIGINT, prometheus (pid $PROM_PID) stopped, exit 0"
else
    fail stop "giopscope exit $rc_a and $rc_b, prometheus exit $prc: $(tail -2 "$WORK/prometheus.log")"
fi
finish
