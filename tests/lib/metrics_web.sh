# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/lib/metrics_web.sh -- what a test of `--metrics-web-config` needs (prometheus.sh,
# metrics_hostile.sh). Source it after tests/lib/common.sh.
#
#     metrics_web_have            # true when $GIOPSCOPE serves TLS and basic auth (OpenSSL build)
#     metrics_web_certs DIR       # DIR/ca.crt, a server certificate for 127.0.0.1 signed by it
#                                 # (server.crt, server.key) and a client one (client.crt,
#                                 # client.key); 1 with the reason on stdout if openssl failed
#     metrics_web_hash PASSWORD   # a bcrypt hash of PASSWORD ($2b$, cost 10) on stdout, made by
#                                 # libcrypt through python3's crypt module

metrics_web_have() {
    "$GIOPSCOPE" live --help 2>&1 | grep -q -- --metrics-web-config &&
        ! grep -q "this giopscope is built without OpenSSL" "$GIOPSCOPE"
}

metrics_web_certs() {
    local d=$1
    {
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
            -subj "/CN=giopscope test CA" -keyout "$d/ca.key" -out "$d/ca.crt" &&
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -subj "/CN=giopscope probe" -keyout "$d/server.key" -out "$d/server.csr" &&
        printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\n' >"$d/server.ext" &&
        openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
            -days 2 -extfile "$d/server.ext" -out "$d/server.crt" &&
        openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes \
            -subj "/CN=prometheus" -keyout "$d/client.key" -out "$d/client.csr" &&
        openssl x509 -req -in "$d/client.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
            -days 2 -out "$d/client.crt"
    } >"$d/openssl.log" 2>&1 || { tail -n 3 "$d/openssl.log"; return 1; }
    chmod 600 "$d"/*.key
}

metrics_web_hash() {
    python3 -W ignore -c 'import crypt, sys
print(crypt.crypt(sys.argv[1], crypt.mksalt(crypt.METHOD_BLOWFISH, rounds=1 << 10)))' "$1"
}
