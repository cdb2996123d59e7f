# SPDX-License-Identifier: BSD-2-Clause
# shellcheck shell=bash
# tests/lib/tls_rig.sh -- omniORB over TLS (SSLIOP) for the tests that need it
# (tls_capture.sh, attach_tls.sh). Source it from a bash script, after defining skip().
#
#     tls_transport              # SSLTP=path of libomnisslTP4.so.2 (LD_PRELOAD it into the
#                                # bench programs, which are not linked with it), or skip
#     tls_certs DIR              # a CA and a server certificate made with openssl in DIR;
#                                # SSLOPTS=(the -ORBssl* options for server and clients);
#                                # on failure a FAIL line and exit 1

tls_transport() {
    SSLTP=$(ldconfig -p | sed -n 's/.*libomnisslTP4\.so\.2 .*=> //p' | head -n 1)
    { [ -n "$SSLTP" ] && [ -r "$SSLTP" ]; } ||
        skip "omniORB's TLS transport libomnisslTP4.so.2 not installed (libomniorb4-2)"
}

tls_certs() {
    local d=$1
    # omniORB's key file holds both the certificate chain and the key
    openssl req -x509 -newkey rsa:2048 -nodes -keyout "$d/ca.key" -out "$d/ca.pem" -days 2 \
        -subj "/CN=giopscope test CA" >"$d/openssl.log" 2>&1 &&
    openssl req -newkey rsa:2048 -nodes -keyout "$d/server.key" -out "$d/server.csr" \
        -subj "/CN=giopscope test server" >>"$d/openssl.log" 2>&1 &&
    openssl x509 -req -in "$d/server.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" -CAcreateserial \
        -out "$d/server.crt" -days 2 >>"$d/openssl.log" 2>&1 &&
    cat "$d/server.crt" "$d/server.key" >"$d/server.pem"
    # shellcheck disable=SC2181  # the status of the chain above
    [ $? = 0 ] || { echo "FAIL certificates: $(tail -n 3 "$d/openssl.log")"; exit 1; }
    # omniORB 4.2.5's sslTP loads the key file only when a password is set (an unencrypted
    # key ignores it)
    SSLOPTS=(-ORBsslCAFile "$d/ca.pem" -ORBsslKeyFile "$d/server.pem" -ORBsslKeyPassword unused
             -ORBsslVerifyMode none)
}
