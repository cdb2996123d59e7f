// SPDX-License-Identifier: BSD-2-Clause
#include "metrics_web.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "web_config.h"

int gs_metrics_web_load(struct gs_metrics_web **out, const char *path, char *err, size_t errlen)
{
	struct gs_web_config *cfg = calloc(1, sizeof *cfg);
	struct gs_metrics_web *w = calloc(1, sizeof *w);
	int e = 0;

	*out = NULL;
	if (!cfg || !w) {
		snprintf(err, errlen, "%s: out of memory", path);
		e = ENOMEM;
	}
	if (!e)
		e = gs_web_config_load(cfg, path, err, errlen);
	if (!e && cfg->tls)
		e = gs_mtls_new(&w->tls, cfg, path, err, errlen);
	if (!e && cfg->n_users)
		e = gs_mauth_new(&w->auth, cfg, path, err, errlen);
	free(cfg); /* the paths and hashes are copied where they are used */
	if (e) {
		gs_metrics_web_free(w);
		return e;
	}
	*out = w;
	return 0;
}

void gs_metrics_web_free(struct gs_metrics_web *w)
{
	if (!w)
		return;
	gs_mtls_free(w->tls);
	gs_mauth_free(w->auth);
	free(w);
}
