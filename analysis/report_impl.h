/* SPDX-License-Identifier: BSD-2-Clause */
/* Inside the HTML report: what report.c collects and report_html.c /
 * report_plot.c draw.  Not for other users. */
#ifndef GS_REPORT_IMPL_H
#define GS_REPORT_IMPL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "fmt_num.h"
#include "hist.h"
#include "report.h"

#define RP_NAME_MAX 128
#define RP_NOTES 16
#define RP_NOTE_LEN 512
/* time-bin histograms: 4 buckets per power of two (19% wide), up to 2^43 ns */
#define RP_TB_PER_OCT 4
#define RP_TB_OCT 43
#define RP_TB_N (RP_TB_PER_OCT * RP_TB_OCT)

struct rp_op {
	char name[RP_NAME_MAX];    /* printable ASCII (others shown as '?') */
	uint32_t hash;
	uint8_t kind;
	bool other;                /* the "(other)" group */
	uint64_t calls, errors, answered, oneways, no_reply;
	struct gs_hist total, server, network;  /* network: merge only */
	/* attach --sched: sums of on-CPU, run queue, blocked; --orb: of orb_in,
	 * servant, orb_out (ns), over n_sched / n_orb answered calls */
	uint64_t n_sched, n_orb;
	int64_t sched[3], orb[3];
};

struct rp_bin {
	uint32_t calls, errors, answered;
	int64_t max;
	uint32_t h[RP_TB_N];
};

struct rp_sample {
	int64_t t, total;
	uint32_t op;
	bool err;
};

/* A slow call's nested calls, for its waterfall (report_nest.c): the call
 * itself is node 0, each other node names its parent node; bounded. */
#define RP_TREE_MAX 32
#define RP_TREE_DEPTH 4
/* nested calls kept for the order in which children end before their parent */
#define RP_RECENT 512

struct rp_node {
	struct gs_endpoint client, server, pclient, pserver;
	uint32_t rid, prid;
	int64_t t0, req_last, rep_first, t1;  /* request first .. reply last */
	int64_t downstream;
	uint16_t parent;           /* node index (node 0: none) */
	uint8_t depth;             /* node 0: 0 */
	bool has_parent;           /* a recent call: its parent fields are set */
	char op[48];
};

struct rp_tree {
	struct rp_node n[RP_TREE_MAX];
	uint32_t nn;
	uint32_t dropped;          /* nested calls of the tree beyond RP_TREE_MAX or the depth */
};

struct rp_slow {
	int64_t total, req_xfer, hold, rep_xfer, t0;
	struct gs_report_split split;
	uint64_t serial;
	struct gs_endpoint client, server;
	uint32_t request_id, retransmits, gap_fills, flags, op;
	const char *status;        /* a static string of gs_call_status */
	char reasons[256];         /* the tail reasons (tail.c) */
	struct rp_tree *tree;      /* its nested calls (NULL: none came) */
};

struct gs_report {
	struct gs_report_config cfg;
	struct rp_op *ops;         /* max_ops + 1: the last is "(other)" when used */
	uint32_t nops;
	bool other_used;
	uint64_t other_calls;
	struct rp_op all;
	bool any_network;

	struct rp_bin *bins;
	bool started;
	int64_t origin, width;
	uint32_t bins_used;
	uint64_t before_origin;

	struct rp_sample *smp;
	uint32_t nsmp;
	uint64_t seen, rng;

	struct rp_slow *slow;      /* min-heap on (total, -serial) */
	uint32_t nslow;

	/* nesting (report_nest.c): recent nested calls, a ring made with the first */
	struct rp_node *recent;
	uint32_t recent_next;
	uint64_t trees_no_memory;  /* slow calls whose nested calls could not be kept */

	uint64_t calls, serial;
	int64_t t_first, t_last;   /* request first bytes */
	char notes[RP_NOTES][RP_NOTE_LEN];
	uint32_t nnotes, notes_dropped;
};

/* report_text.c: text and numbers in HTML, for report_html.c and report_plot.c */
void rp_html_text(FILE *f, const char *s);
void rp_fmt_us(char *buf, size_t len, int64_t ns);   /* "12.3" microseconds */
void rp_fmt_dur(char *buf, size_t len, double us);   /* "10 µs", "2.5 ms", "1 s" (HTML entity) */
/* report.c: a quantile of a time bin's histogram */
int64_t rp_bin_quantile(const struct rp_bin *b, double q);

/* The shared latency axis range (microseconds, whole decades). */
struct rp_range {
	double lo_us, hi_us;
};
void rp_latency_range(const struct gs_report *r, struct rp_range *rg);

void rp_plot_hist(FILE *f, const struct rp_op *op, const struct rp_range *rg);
void rp_plot_cdf(FILE *f, const struct rp_op *op, const struct rp_range *rg);
void rp_plot_time(FILE *f, const struct gs_report *r, const struct rp_range *rg);
void rp_plot_rate(FILE *f, const struct gs_report *r);
/* report_nest.c: a call with a parent joins the trees of the kept slow calls
 * it belongs to (start order: the parent came first) and the ring of recent
 * nested calls; a slow call being kept takes its nested calls from the ring
 * (end order: they ended first). */
void rp_nest_offer(struct gs_report *r, const struct gs_call *c, const char *op, size_t oplen);
void rp_nest_collect(struct gs_report *r, struct rp_slow *s, const struct gs_call *c, const char *op,
		     size_t oplen);
void rp_nest_free(struct gs_report *r);
/* report_waterfall.c: the slow calls with nested calls, each a waterfall on
 * its own time axis (nothing when none has any) */
void rp_plot_waterfalls(FILE *f, const struct gs_report *r, const struct rp_slow *const *order, uint32_t n);

/* the slow calls sorted slowest first */
void rp_plot_slow(FILE *f, const struct gs_report *r, const struct rp_slow *const *order, uint32_t n);
/* attach --sched / --orb: per operation, the mean server_process_us split into
 * on-CPU / run queue / blocked and orb_in / servant / orb_out (two stacked
 * bars); nothing when no operation has either. */
void rp_plot_where(FILE *f, const struct rp_op *const *ops, uint32_t n);

#endif
