#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# tests/integration/metrics_hostile.sh -- `giopscope live --metrics` against hostile clients:
# scrapes are answered while others hold connections open, and bad requests get their answer.
#
# One network namespace of its own (gsmh-PID), everything on its loopback; `giopscope live -i
# lo --ports 2809 -q --metrics 127.0.0.1:9464` (no traffic needed: the endpoint is the subject).
# Slowloris clients (tests/lib/slowloris.py) hold connections that never finish a request
# ("GET /met" and nothing more), opening a new one whenever the probe closes one; meanwhile
# curl scrapes /metrics 10 times, each with Prometheus's default scrape timeout (SCRAPE_TIMEOUT,
# default 10 s):
#   idle64       64 such connections from 127.0.0.1, the scraper's own address, held past the
#                request deadline (2 s) and re-opened: 10 of 10 scrapes answered 200 within the
#                timeout (0 of 10 before the slots gave way)
#   idle256      256 from 127.0.0.2: 10 of 10 answered
#   counted      the probe's own metrics count the connections it closed: timeout and evicted > 0
#   tls_idle64   (built with OpenSSL) a probe with --metrics-web-config (mutual TLS, basic auth;
#                a CA, server and client certificates made here, tests/lib/metrics_web.sh) and
#                64 connections that send nothing: 10 of 10 HTTPS scrapes answered 200; the
#                probe runs with -Z nobody, its key readable by root alone
#   privileges   the TLS probe's uid is nobody's, its key mode 0600 (owned by root)
#   mtls         without a client certificate no HTTP answer, with it 200
#   guess        a client trying one wrong password after another: 10 of 10 scrapes with the
#                right one answered 200 meanwhile
#   bad          a 1 MB header and 4 KiB of binary garbage 431, /../../etc/passwd 404, POST 405
#   many         200 scrapes in a row all 200; the probe's RSS after everything (VmRSS) under
#                256 MB
# Skipped (77) unless root with network namespaces. Prints PASS/FAIL per check, then
# "N passed, N failed".
set -u
export LC_ALL=C
cd "$(dirname "$0")/../.." || exit 2

BUILD=${BUILD:-build}
GIOPSCOPE=${GIOPSCOPE:-$BUILD/giopscope}
SCRAPE_TIMEOUT=${SCRAPE_TIMEOUT:-10}
MPORT=9464
TPORT=9465

. tests/lib/common.sh
. tests/lib/netns.sh
. tests/lib/metrics_web.sh

[ -x "$GIOPSCOPE" ] || ns_skip "$GIOPSCOPE not built"
for tool in curl python3 openssl timeout; do
    command -v "$tool" >/dev/null 2>&1 || ns_skip "$tool not installed (scripts/install-deps.sh check)"
done
ns_require

WORK=$(mktemp -d /tmp/gs-metrics-hostile.XXXXXX) || exit 2
# shellcheck disable=SC2034  # read by ns_cleanup
NS_CLEANUP_HOOK=work_cleanup
NS=gsmh-$$
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

TLS_RC=0
ns_start "$NS" "$WORK/live.log" "$GIOPSCOPE" live -q -i lo --ports 2809 --metrics "127.0.0.1:$MPORT"
LIVE=$NS_LAST_PID
ns_wait_port "$NS" "$MPORT" 15 || { fail setup "no metrics port: $(tail -2 "$WORK/live.log")"; finish; }

# scrapes N [CURL ARGS...]: N scrapes, one line each: "CODE SECONDS"
scrapes() {
    local n=$1
    shift
    for _ in $(seq 1 "$n"); do
        in_ns curl -s -o /dev/null -m "$SCRAPE_TIMEOUT" -w '%{http_code} %{time_total}\n' "$@" || true
    done
}
# verdict NAME FILE: pass when every line of FILE is a 200
verdict() {
    local ok n max
    ok=$(grep -c '^200 ' "$2")
    n=$(wc -l <"$2")
    max=$(awk '$1 == 200 && $2 > m { m = $2 } END { printf "%.3f", m }' "$2")
    if [ "$ok" = "$n" ] && [ "$n" -gt 0 ]; then
        pass "$1" "$ok of $n scrapes answered 200 within ${SCRAPE_TIMEOUT}s (slowest ${max}s)$3"
    else
        fail "$1" "$ok of $n answered 200: $(sort "$2" | uniq -c | tr '\n' ';')"
    fi
}
# hold NAME PORT N SRC PAYLOAD: start a slowloris client, wait until it holds its connections
hold() {
    ns_start "$NS" "$WORK/$1.log" python3 tests/lib/slowloris.py 127.0.0.1 "$2" "$3" "$4" "$5" "$WORK/$1.ready"
    HOLD=$NS_LAST_PID
    ns_wait_file "$WORK/$1.ready" 15 || { fail "$1" "the hostile client never held $3 connections"; finish; }
    sleep 0.3   # a poll of the probe or more: its slots are taken
}

hold idle64 "$MPORT" 64 127.0.0.1 'GET /met'
sleep 2.5   # past the request deadline (2 s): every held connection timed out once, and was re-opened
scrapes 10 "http://127.0.0.1:$MPORT/metrics" >"$WORK/idle64.txt"
ns_stop "$HOLD" TERM 10
verdict idle64 "$WORK/idle64.txt" "; the hostile client: $(cat "$WORK/idle64.log")"

hold idle256 "$MPORT" 256 127.0.0.2 'GET /met'
scrapes 10 "http://127.0.0.1:$MPORT/metrics" >"$WORK/idle256.txt"
ns_stop "$HOLD" TERM 10
verdict idle256 "$WORK/idle256.txt" "; the hostile client: $(cat "$WORK/idle256.log")"

in_ns curl -s -m 10 "http://127.0.0.1:$MPORT/metrics" >"$WORK/self.txt"
closed() { sed -n "s/^giopscope_metrics_connections_closed_total{reason=\"$1\"} \([0-9]*\)$/\1/p" "$WORK/self.txt"; }
t=$(closed timeout) e=$(closed evicted) r=$(closed refused)
if [ "${t:-0}" -gt 0 ] && [ "${e:-0}" -gt 0 ]; then
    pass counted "giopscope_metrics_connections_closed_total: timeout $t, evicted $e, refused $r"
else
    fail counted "timeout '${t}', evicted '${e}' (want both > 0)"
fi

# --------------------------------------------------------------- TLS and basic auth
if metrics_web_have; then
    why=$(metrics_web_certs "$WORK") || { fail tls_idle64 "certificates: $why"; finish; }
    printf 'tls_server_config:\n  cert_file: server.crt\n  key_file: server.key\n  client_ca_file: ca.crt\n  client_auth_type: RequireAndVerifyClientCert\nbasic_auth_users:\n  prom: %s\n' \
        "$(metrics_web_hash s3cret)" >"$WORK/web.yml"
    # -Z nobody: the key (0600, in root's 0700 folder) is read before root is given up
    ns_start "$NS" "$WORK/live_tls.log" "$GIOPSCOPE" live -q -i lo --ports 2809 --metrics "127.0.0.1:$TPORT" \
        --metrics-web-config "$WORK/web.yml" -Z nobody
    LIVE_TLS=$NS_LAST_PID
    TLS_ARGS=(--cacert "$WORK/ca.crt" --cert "$WORK/client.crt" --key "$WORK/client.key")
    TURL=https://127.0.0.1:$TPORT/metrics
    if ns_wait_port "$NS" "$TPORT" 15; then
        uid=$(awk '/^Uid:/ { print $2 }' "/proc/$LIVE_TLS/status")
        if [ "$uid" = "$(id -u nobody)" ] && [ "$(stat -c %a "$WORK/server.key")" = 600 ]; then
            pass privileges "the TLS probe runs as nobody (uid $uid); its key is 0600 root's"
        else
            fail privileges "the TLS probe's uid $uid, the key's mode $(stat -c %a "$WORK/server.key")"
        fi
        hold tls_idle64 "$TPORT" 64 127.0.0.1 ''
        scrapes 10 "${TLS_ARGS[@]}" -u prom:s3cret "$TURL" >"$WORK/tls.txt"
        ns_stop "$HOLD" TERM 10
        verdict tls_idle64 "$WORK/tls.txt" "; the hostile client: $(cat "$WORK/tls_idle64.log")"

        # mutual TLS: no client certificate, no answer (the handshake fails)
        nocert=$(in_ns curl -s -o /dev/null -m 10 -w '%{http_code}' --cacert "$WORK/ca.crt" -u prom:s3cret "$TURL")
        withcert=$(in_ns curl -s -o /dev/null -m 10 -w '%{http_code}' "${TLS_ARGS[@]}" -u prom:s3cret "$TURL")
        if [ "$nocert" = 000 ] && [ "$withcert" = 200 ]; then
            pass mtls "RequireAndVerifyClientCert: with the client certificate 200, without one no HTTP answer (000)"
        else
            fail mtls "with the client certificate $withcert, without $nocert (want 200 and 000)"
        fi

        # a password guesser (one wrong password after another) while Prometheus scrapes with the
        # right one: each guess costs a bcrypt check, bounded per tick and second; the remembered
        # password costs none
        # shellcheck disable=SC2016  # $@ and $RANDOM are the inner shell's
        ns_start "$NS" "$WORK/guess.log" bash -c 'while :; do curl -s -o /dev/null -w "%{http_code}\n" -m 10 "$@" \
            -u "prom:guess$RANDOM" '"$TURL"'; done' guess "${TLS_ARGS[@]}"
        GUESS=$NS_LAST_PID
        sleep 1
        scrapes 10 "${TLS_ARGS[@]}" -u prom:s3cret "$TURL" >"$WORK/guess_scrapes.txt"
        ns_stop "$GUESS" TERM 10
        guesses=$(grep -c '^401$' "$WORK/guess.log")
        verdict guess "$WORK/guess_scrapes.txt" "; meanwhile $guesses wrong passwords answered 401"
    else
        fail tls_idle64 "no TLS metrics port: $(tail -2 "$WORK/live_tls.log")"
    fi
    ns_stop "$LIVE_TLS" INT 20 || TLS_RC=$?
else
    echo "SKIP tls_idle64: $GIOPSCOPE has no TLS for --metrics (built without OpenSSL)"
fi

# --------------------------------------------------------------- bad requests
in_ns python3 - "$MPORT" >"$WORK/bad.txt" 2>&1 <<'PY'
import socket, sys
port = int(sys.argv[1])
def ask(data):
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    try:
        s.sendall(data)
    except OSError:
        pass  # the probe answered and closed before taking all of it
    out = b""
    try:
        while True:
            b = s.recv(65536)
            if not b:
                break
            out += b
    except OSError:
        pass
    s.close()
    return out.split(b"\r\n", 1)[0].decode("latin-1") or "(nothing)"
big = b"GET /metrics HTTP/1.1\r\nX-Big: " + b"a" * (1 << 20) + b"\r\n\r\n"
garbage = bytes((i * 7919 + 13) % 256 for i in range(4096))
for name, data in (("big", big), ("garbage", garbage), ("path", b"GET /../../etc/passwd HTTP/1.1\r\n\r\n"),
                   ("post", b"POST /metrics HTTP/1.1\r\nContent-Length: 0\r\n\r\n")):
    print(name, ask(data))
PY
want="big HTTP/1.1 431 Request Header Fields Too Large
garbage HTTP/1.1 431 Request Header Fields Too Large
path HTTP/1.1 404 Not Found
post HTTP/1.1 405 Method Not Allowed"
if [ "$(cat "$WORK/bad.txt")" = "$want" ]; then
    pass bad "$(tr '\n' ';' <"$WORK/bad.txt")"
else
    fail bad "$(tr '\n' ';' <"$WORK/bad.txt")"
fi

scrapes 200 "http://127.0.0.1:$MPORT/metrics" >"$WORK/many.txt"
rss=$(awk '/^VmRSS:/ { print int($2 / 1024) }' "/proc/$LIVE/status" 2>/dev/null)
ok=$(grep -c '^200 ' "$WORK/many.txt")
if [ "$ok" = 200 ] && [ -n "$rss" ] && [ "$rss" -lt 256 ]; then
    pass many "200 of 200 scrapes answered; the probe's RSS after all of it: ${rss} MB"
else
    fail many "$ok of 200 answered; RSS '${rss}' MB"
fi

ns_stop "$LIVE" INT 20
rc=$?
if [ "$rc" = 0 ] && [ "$TLS_RC" = 0 ]; then pass stop "giopscope exit 0 on SIGINT (both probes)"; else
    fail stop "giopscope exit $rc, the TLS probe's $TLS_RC: $(tail -2 "$WORK/live.log") $(tail -2 "$WORK/live_tls.log" 2>/dev/null)"; fi
finish
