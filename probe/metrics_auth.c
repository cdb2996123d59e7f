// SPDX-License-Identifier: BSD-2-Clause
#include "metrics_auth.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#ifdef GS_HAVE_OPENSSL
#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#define CRED_MAX 512                       /* decoded user:password */
#define BUDGET_WINDOW_NS 1000000000LL
#define BUDGET_NS (100 * 1000000LL)        /* bcrypt time per window */

struct user {
	char name[GS_WEB_NAME_MAX];
	char hash[GS_WEB_HASH_MAX];
	unsigned char ok_mac[32];          /* the credential that passed last */
	bool ok;
};

struct gs_mauth {
	unsigned n;
	struct user *u;
	unsigned char key[32];
	struct crypt_data cd;
	int64_t window_start, spent_ns, last_poll_ns;
};

static int64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int gs_mauth_new(struct gs_mauth **out, const struct gs_web_config *cfg, const char *file, char *err, size_t errlen)
{
	struct gs_mauth *a;
	*out = NULL;
	for (unsigned i = 0; i < cfg->n_users; i++)
		if (!gs_web_bcrypt_ok(cfg->users[i].hash) || crypt_checksalt(cfg->users[i].hash) != CRYPT_SALT_OK) {
			snprintf(err, errlen, "%s: line %u: libcrypt does not take the hash of user '%s' (a bcrypt "
				 "hash: htpasswd -nbBC 10 USER PASSWORD)", file, cfg->users[i].line, cfg->users[i].name);
			return EINVAL;
		}
	a = calloc(1, sizeof *a);
	if (a)
		a->u = calloc(cfg->n_users, sizeof *a->u);
	if (!a || !a->u) {
		free(a);
		snprintf(err, errlen, "%s: out of memory", file);
		return ENOMEM;
	}
	if (RAND_bytes(a->key, sizeof a->key) != 1) {
		free(a->u);
		free(a);
		snprintf(err, errlen, "%s: no random bytes for the credential cache", file);
		return EIO;
	}
	a->n = cfg->n_users;
	for (unsigned i = 0; i < a->n; i++) {
		memcpy(a->u[i].name, cfg->users[i].name, sizeof a->u[i].name);
		memcpy(a->u[i].hash, cfg->users[i].hash, sizeof a->u[i].hash);
	}
	*out = a;
	return 0;
}

void gs_mauth_free(struct gs_mauth *a)
{
	if (!a)
		return;
	OPENSSL_cleanse(a->u, a->n * sizeof *a->u);
	OPENSSL_cleanse(&a->cd, sizeof a->cd);
	free(a->u);
	free(a);
}

static int b64val(unsigned char ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	return ch == '+' ? 62 : ch == '/' ? 63 : -1;
}

/* Standard base64 with its padding; false on anything else or when it does not fit. */
static bool b64dec(const char *s, size_t n, char *out, size_t outlen, size_t *got)
{
	size_t o = 0;
	if (n % 4)
		return false;
	for (size_t i = 0; i < n; i += 4) {
		int v[4];
		unsigned pad = 0;
		for (int k = 0; k < 4; k++) {
			unsigned char ch = (unsigned char)s[i + (size_t)k];
			if (ch == '=' && i + 4 == n && k >= 2) {
				v[k] = 0;
				pad++;
			} else if (pad || (v[k] = b64val(ch)) < 0) {
				return false;
			}
		}
		if (o + 3 - pad > outlen)
			return false;
		out[o++] = (char)(v[0] << 2 | v[1] >> 4);
		if (pad < 2)
			out[o++] = (char)((v[1] & 15) << 4 | v[2] >> 2);
		if (pad < 1)
			out[o++] = (char)((v[2] & 3) << 6 | v[3]);
	}
	*got = o;
	return true;
}

/* the decoded password is not left on the stack */
static enum gs_auth_result deny(char *cred)
{
	OPENSSL_cleanse(cred, CRED_MAX + 1);
	return GS_AUTH_DENIED;
}

enum gs_auth_result gs_mauth_check(struct gs_mauth *a, const char *authz, size_t len, int64_t poll_ns)
{
	char cred[CRED_MAX + 1], *colon, name[GS_WEB_NAME_MAX] = { 0 };
	unsigned char mac[32];
	unsigned maclen = sizeof mac;
	size_t n = 0, nl;
	struct user *u = NULL;
	const char *hash, *out;
	bool match;
	int64_t t0;

	if (!authz || len < 6 || strncasecmp(authz, "Basic ", 6) != 0)
		return GS_AUTH_DENIED;
	for (authz += 6, len -= 6; len && *authz == ' '; authz++, len--)
		;
	if (!b64dec(authz, len, cred, CRED_MAX, &n) || memchr(cred, '\0', n))
		return deny(cred);
	cred[n] = '\0';
	colon = strchr(cred, ':');
	if (!colon || (nl = (size_t)(colon - cred)) >= sizeof name)
		return deny(cred);
	memcpy(name, cred, nl);
	/* every user compared, whole buffers: the time does not tell which names exist */
	for (unsigned i = 0; i < a->n; i++)
		if (CRYPTO_memcmp(a->u[i].name, name, sizeof name) == 0)
			u = &a->u[i];
	if (!HMAC(EVP_sha256(), a->key, sizeof a->key, (const unsigned char *)cred, n, mac, &maclen))
		return deny(cred);
	if (u && u->ok && CRYPTO_memcmp(u->ok_mac, mac, sizeof mac) == 0) {
		OPENSSL_cleanse(cred, sizeof cred);
		return GS_AUTH_OK;
	}
	/* a bcrypt check: within the budget, or at a later poll */
	if (poll_ns - a->window_start >= BUDGET_WINDOW_NS) {
		a->window_start = poll_ns;
		a->spent_ns = 0;
	}
	if (poll_ns == a->last_poll_ns || a->spent_ns >= BUDGET_NS) {
		OPENSSL_cleanse(cred, sizeof cred);
		return GS_AUTH_LATER;
	}
	a->last_poll_ns = poll_ns;
	/* an unknown user is checked against a real hash too: the same time as a wrong password */
	hash = u ? u->hash : a->u[0].hash;
	t0 = mono_ns();
	out = crypt_r(colon + 1, hash, &a->cd);
	a->spent_ns += mono_ns() - t0;
	match = out && strlen(out) == strlen(hash) && CRYPTO_memcmp(out, hash, strlen(hash)) == 0;
	OPENSSL_cleanse(cred, sizeof cred);
	if (!u || !match)
		return GS_AUTH_DENIED;
	memcpy(u->ok_mac, mac, sizeof mac);
	u->ok = true;
	return GS_AUTH_OK;
}

#else /* built without OpenSSL */

int gs_mauth_new(struct gs_mauth **out, const struct gs_web_config *cfg, const char *file, char *err, size_t errlen)
{
	(void)cfg;
	*out = NULL;
	snprintf(err, errlen, "%s: basic_auth_users: this giopscope is built without OpenSSL "
		 "(install libssl-dev and libcrypt-dev, and rebuild)", file);
	return ENOTSUP;
}

void gs_mauth_free(struct gs_mauth *a) { (void)a; }
enum gs_auth_result gs_mauth_check(struct gs_mauth *a, const char *authz, size_t len, int64_t poll_ns)
{
	(void)a; (void)authz; (void)len; (void)poll_ns;
	return GS_AUTH_DENIED;
}

#endif
