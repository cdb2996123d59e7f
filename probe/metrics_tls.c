// SPDX-License-Identifier: BSD-2-Clause
#include "metrics_tls.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef GS_HAVE_OPENSSL
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

struct gs_mtls {
	SSL_CTX *ctx;
};

struct gs_mtls_conn {
	SSL *ssl;
};

/* OpenSSL's own reason for the last failure, for the one-line error */
static const char *ossl_why(void)
{
	static char buf[256];
	unsigned long e = ERR_peek_last_error();
	if (!e)
		return "unknown error";
	ERR_error_string_n(e, buf, sizeof buf);
	ERR_clear_error();
	return buf;
}

static int version(int v)
{
	return v == 10 ? TLS1_VERSION : v == 11 ? TLS1_1_VERSION : v == 12 ? TLS1_2_VERSION : TLS1_3_VERSION;
}

/* RequestClientCert and RequireAnyClientCert take any certificate, as Go's
 * tls.Config does for them: the chain is not checked. */
static int accept_any(int ok, X509_STORE_CTX *x)
{
	(void)ok;
	(void)x;
	return 1;
}

/* The file opened as OpenSSL will: a missing or unreadable one said in words
 * (OpenSSL's own reason is only "system lib"). */
static int unreadable(const char *file, unsigned line, const char *key, const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), e;
	if (fd >= 0) {
		close(fd);
		return 0;
	}
	e = errno;
	snprintf(err, errlen, "%s: line %u: %s %s: %s", file, line, key, path, strerror(e));
	return e;
}

int gs_mtls_new(struct gs_mtls **out, const struct gs_web_config *cfg, const char *file, char *err, size_t errlen)
{
	struct gs_mtls *t;
	SSL_CTX *ctx;
	int mode = SSL_VERIFY_NONE, e;

	*out = NULL;
	if ((e = unreadable(file, cfg->line_cert, "cert_file", cfg->cert_file, err, errlen)) ||
	    (e = unreadable(file, cfg->line_key, "key_file", cfg->key_file, err, errlen)) ||
	    (cfg->client_ca_file[0] &&
	     (e = unreadable(file, cfg->line_ca, "client_ca_file", cfg->client_ca_file, err, errlen))))
		return e;
	ctx = SSL_CTX_new(TLS_server_method());
	if (!ctx) {
		snprintf(err, errlen, "%s: cannot make a TLS context: %s", file, ossl_why());
		return ENOMEM;
	}
	if (!SSL_CTX_set_min_proto_version(ctx, version(cfg->min_version ? cfg->min_version : 12)) ||
	    (cfg->max_version && !SSL_CTX_set_max_proto_version(ctx, version(cfg->max_version)))) {
		snprintf(err, errlen, "%s: this OpenSSL refuses the TLS versions asked for: %s", file, ossl_why());
		SSL_CTX_free(ctx);
		return EINVAL;
	}
	/* a scrape is one request per connection: nothing to renegotiate */
	SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
	if (SSL_CTX_use_certificate_chain_file(ctx, cfg->cert_file) != 1) {
		snprintf(err, errlen, "%s: line %u: cert_file %s is not a PEM certificate (chain) OpenSSL takes: %s", file,
			 cfg->line_cert, cfg->cert_file, ossl_why());
		SSL_CTX_free(ctx);
		return EINVAL;
	}
	if (SSL_CTX_use_PrivateKey_file(ctx, cfg->key_file, SSL_FILETYPE_PEM) != 1) {
		snprintf(err, errlen, "%s: line %u: key_file %s is not a PEM private key OpenSSL takes (unencrypted): %s", file,
			 cfg->line_key, cfg->key_file, ossl_why());
		SSL_CTX_free(ctx);
		return EINVAL;
	}
	if (SSL_CTX_check_private_key(ctx) != 1) {
		snprintf(err, errlen, "%s: line %u: key_file %s is not the key of cert_file %s", file, cfg->line_key,
			 cfg->key_file, cfg->cert_file);
		SSL_CTX_free(ctx);
		return EINVAL;
	}
	if (cfg->client_ca_file[0]) {
		STACK_OF(X509_NAME) *names = SSL_load_client_CA_file(cfg->client_ca_file);
		if (SSL_CTX_load_verify_locations(ctx, cfg->client_ca_file, NULL) != 1 || !names) {
			snprintf(err, errlen, "%s: line %u: client_ca_file %s is not a PEM CA certificate file: %s", file,
				 cfg->line_ca, cfg->client_ca_file, ossl_why());
			sk_X509_NAME_pop_free(names, X509_NAME_free);
			SSL_CTX_free(ctx);
			return EINVAL;
		}
		SSL_CTX_set_client_CA_list(ctx, names);
	}
	switch (cfg->client_auth) {
	case GS_WEB_NO_CLIENT_CERT: break;
	case GS_WEB_REQUEST_CLIENT_CERT: mode = SSL_VERIFY_PEER; break;
	case GS_WEB_REQUIRE_ANY_CLIENT_CERT: mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT; break;
	case GS_WEB_VERIFY_CLIENT_CERT_IF_GIVEN: mode = SSL_VERIFY_PEER; break;
	case GS_WEB_REQUIRE_AND_VERIFY_CLIENT_CERT: mode = SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT; break;
	}
	SSL_CTX_set_verify(ctx, mode, cfg->client_auth == GS_WEB_REQUEST_CLIENT_CERT ||
					      cfg->client_auth == GS_WEB_REQUIRE_ANY_CLIENT_CERT ? accept_any : NULL);
	t = calloc(1, sizeof *t);
	if (!t) {
		SSL_CTX_free(ctx);
		snprintf(err, errlen, "%s: out of memory", file);
		return ENOMEM;
	}
	t->ctx = ctx;
	*out = t;
	return 0;
}

void gs_mtls_free(struct gs_mtls *t)
{
	if (!t)
		return;
	SSL_CTX_free(t->ctx);
	free(t);
}

struct gs_mtls_conn *gs_mtls_conn_new(struct gs_mtls *t, int fd)
{
	struct gs_mtls_conn *c = calloc(1, sizeof *c);
	if (!c)
		return NULL;
	c->ssl = SSL_new(t->ctx);
	if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1) {
		SSL_free(c->ssl);
		free(c);
		ERR_clear_error();
		return NULL;
	}
	SSL_set_accept_state(c->ssl);
	return c;
}

void gs_mtls_conn_free(struct gs_mtls_conn *c)
{
	if (!c)
		return;
	SSL_free(c->ssl);
	free(c);
}

/* What an SSL_* call's result means for a non-blocking socket */
static ssize_t outcome(struct gs_mtls_conn *c, int r)
{
	int e = SSL_get_error(c->ssl, r);
	ERR_clear_error(); /* the queue is per thread: nothing left for the next connection */
	if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
		return -EAGAIN;
	if (e == SSL_ERROR_ZERO_RETURN)
		return 0;
	return -EIO;
}

int gs_mtls_handshake(struct gs_mtls_conn *c)
{
	int r = SSL_do_handshake(c->ssl);
	if (r == 1)
		return 1;
	return outcome(c, r) == -EAGAIN ? 0 : -1;
}

ssize_t gs_mtls_read(struct gs_mtls_conn *c, void *buf, size_t n)
{
	size_t got = 0;
	int r = SSL_read_ex(c->ssl, buf, n, &got);
	return r == 1 ? (ssize_t)got : outcome(c, r);
}

ssize_t gs_mtls_write(struct gs_mtls_conn *c, const void *buf, size_t n)
{
	size_t put = 0;
	int r = SSL_write_ex(c->ssl, buf, n, &put);
	return r == 1 ? (ssize_t)put : outcome(c, r);
}

#else /* built without OpenSSL: the configuration is refused, so no connection is ever made */

int gs_mtls_new(struct gs_mtls **out, const struct gs_web_config *cfg, const char *file, char *err, size_t errlen)
{
	(void)cfg;
	*out = NULL;
	snprintf(err, errlen, "%s: tls_server_config: this giopscope is built without OpenSSL "
		 "(install libssl-dev and libcrypt-dev, and rebuild)", file);
	return ENOTSUP;
}

void gs_mtls_free(struct gs_mtls *t) { (void)t; }
struct gs_mtls_conn *gs_mtls_conn_new(struct gs_mtls *t, int fd) { (void)t; (void)fd; return NULL; }
void gs_mtls_conn_free(struct gs_mtls_conn *c) { (void)c; }
int gs_mtls_handshake(struct gs_mtls_conn *c) { (void)c; return -1; }
ssize_t gs_mtls_read(struct gs_mtls_conn *c, void *buf, size_t n) { (void)c; (void)buf; (void)n; return -EIO; }
ssize_t gs_mtls_write(struct gs_mtls_conn *c, const void *buf, size_t n) { (void)c; (void)buf; (void)n; return -EIO; }

#endif
