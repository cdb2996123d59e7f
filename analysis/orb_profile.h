/* SPDX-License-Identifier: BSD-2-Clause */
/* ORB profiles of `giopscope attach --orb` (docs/attach.md, "ORB profiles"):
 * the ORB's shared library and, per probe, a mangled symbol, the edge of the
 * upcall it marks (start: the servant is next; end: the servant is done) and
 * where (the function's entry or its return).  Text, one directive a line:
 *
 *     orb NAME
 *     library FILE-NAME-PREFIX
 *     probe start|end entry|return SYMBOL
 */
#ifndef GS_ORB_PROFILE_H
#define GS_ORB_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define GS_ORB_PROBES 16
#define GS_ORB_SYM_MAX 256

struct gs_orb_profile {
	char name[32];
	char library[64];         /* a mapped file whose name starts with this */
	uint32_t n;
	struct {
		char sym[GS_ORB_SYM_MAX];
		uint8_t edge;          /* enum gs_tedge */
		bool ret;              /* at the function's return (else its entry) */
	} probe[GS_ORB_PROBES];
};

/* Parses a profile's text: true, or false with the reason in err (`where`
 * names the text there). */
bool gs_orb_profile_parse(struct gs_orb_profile *p, const char *text, const char *where, char *err, size_t errlen);

#endif
