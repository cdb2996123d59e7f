/* SPDX-License-Identifier: BSD-2-Clause */
/* The packet tap's place on the interfaces: TCX links (kernel 6.6+), owned
 * by their file descriptors, or else tc clsact filters (older kernels),
 * which outlive the process unless taken away: a guard process removes them
 * however attach ends, and a start removes those a killed giopscope and its
 * guard left (recognised by giopscope's priority and handles, a program
 * named giop_tap_*, and no process holding that program any more). */
#ifndef GS_ATTACH_TC_H
#define GS_ATTACH_TC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* --tc-attach */
enum gs_tc_mode { GS_TC_AUTO, GS_TC_TCX, GS_TC_CLSACT };

/* the filters' places in clsact, kept for giopscope: preference 0xc1a5,
 * handles from "gs" (0x6773) on, one per attach running on the interface */
#define GS_TC_HANDLE 0x6773u
#define GS_TC_PLACES 16
#define GS_TC_PRIORITY 0xc1a5u
#define GS_TC_MAX 512

struct gs_tc_where {
	int ifindex;
	bool egress;
	uint32_t handle;
};

struct gs_tc {
	enum gs_tc_mode used;     /* TCX or clsact once attached */
	int links[GS_TC_MAX];     /* TCX link fds */
	uint32_t n_links;
	struct gs_tc_where filters[GS_TC_MAX]; /* clsact filters made */
	uint32_t n_filters;
	int qdiscs[GS_TC_MAX];    /* ifindexes whose clsact qdisc attach made */
	uint32_t n_qdiscs;
	/* clsact: a child that keeps CAP_NET_ADMIN (attach drops its own) and
	 * takes the filters away when this process ends, whichever way, SIGKILL
	 * included: it waits for the end of this pipe */
	int guard_fd;             /* -1: none */
	int guard_pid;
};

/* One interface to hook: ingress always, egress unless `ingress_only`. */
struct gs_tc_iface {
	const char *name;
	int ifindex;
	bool ingress_only;
};

int gs_tc_mode_parse(const char *s, enum gs_tc_mode *m);
const char *gs_tc_mode_name(enum gs_tc_mode m);
/* The kernel has TCX (its BTF knows BPF_TCX_INGRESS). */
bool gs_tc_have_tcx(void);
/* Attaches `in`/`eg` (program fds) to the interfaces by `mode` (auto: TCX
 * where the kernel has it, else clsact).  0, or 2 with the reason in err;
 * what was attached stays in t for gs_tc_detach either way. */
int gs_tc_attach(struct gs_tc *t, enum gs_tc_mode mode, const struct gs_tc_iface *ifs, uint32_t n, int in, int eg,
		 char *err, size_t errlen);
/* Everything starts empty: no link, filter or guard. */
void gs_tc_init(struct gs_tc *t);
/* Takes away everything gs_tc_attach made (TCX links closed; clsact filters
 * deleted, the clsact qdisc where attach made it). */
void gs_tc_detach(struct gs_tc *t);

#endif
