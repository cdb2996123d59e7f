// SPDX-License-Identifier: BSD-2-Clause
/* --metrics-web-config FILE: the file read (web_config.h) and made into what
 * the /metrics responder uses: a TLS context (metrics_tls.h) and the users of
 * basic authentication (metrics_auth.h).  Loaded while the options are read,
 * so before -Z drops privileges: a key only root may read is read as root. */
#ifndef GS_METRICS_WEB_H
#define GS_METRICS_WEB_H

#include <stddef.h>

#include "metrics_auth.h"
#include "metrics_tls.h"

struct gs_metrics_web {
	struct gs_mtls *tls;    /* NULL: plain HTTP */
	struct gs_mauth *auth;  /* NULL: no authentication */
};

/* 0, or an errno value with a one-line reason in err ("FILE: line N: ..."). */
int gs_metrics_web_load(struct gs_metrics_web **out, const char *path, char *err, size_t errlen);
void gs_metrics_web_free(struct gs_metrics_web *w);

#endif
