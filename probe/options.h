/* SPDX-License-Identifier: BSD-2-Clause */
/* Every command's options in one table (options.c): each option written once,
 * with its long name, short form, argument kind, the commands that take it and
 * its help text.  A command's getopt_long table and short-option string, and
 * the option lines of its --help, are built from it. */
#ifndef GS_OPTIONS_H
#define GS_OPTIONS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

/* The commands, one bit each: which commands take an option, whose --help shows a text. */
enum {
	GS_CMD_READ = 1u << 0,
	GS_CMD_LIVE = 1u << 1,
	GS_CMD_ATTACH = 1u << 2,
	GS_CMD_DPDK = 1u << 3,
	GS_CMD_MERGE = 1u << 4,
};
/* the continuous sources: their options shared through session.c */
#define GS_CMD_SESSION (GS_CMD_LIVE | GS_CMD_ATTACH | GS_CMD_DPDK)

/* What getopt_long returns for an option without a short form (one with a
 * short form returns its letter: 'o', 'q', 'i', ...). */
enum {
	/* the options of the engine and its output: session.c's gs_session_option */
	GS_O_PAIRS = 256, GS_O_FORMAT, GS_O_SUMMARY, GS_O_PORTS, GS_O_DURATION, GS_O_COUNT,
	GS_O_REPLY_TIMEOUT, GS_O_MAX_FLOWS, GS_O_MAX_CALLS, GS_O_MAX_MSG, GS_O_MAX_OOO, GS_O_TAIL,
	GS_O_BY, GS_O_INTERVAL, GS_O_REPORT, GS_O_TRACE, GS_O_METRICS, GS_O_MAX_MEMORY,
	GS_O_ORDER_WINDOW, GS_O_METRICS_WEB_CONFIG, GS_O_HOST_ADDRS,
	/* one command's own */
	GS_O_THREADS,                                                   /* read */
	GS_O_SNAPLEN, GS_O_BUFFER, GS_O_TSTAMP_TYPE, GS_O_LIST_TSTAMP,  /* live */
	GS_O_PROMISC, GS_O_BATCH,
	GS_O_PORT, GS_O_PACKETS_ONLY, GS_O_SYSCALL_HOOKS, GS_O_RING,    /* attach */
	GS_O_MAP_FLOWS, GS_O_MAP_FCACHE, GS_O_SCHED, GS_O_ORB, GS_O_IDLE_READER,
	GS_O_RX_STAMP, GS_O_HOOKS, GS_O_TC_ATTACH, GS_O_CHECK, GS_O_CHECK_ALL,
	GS_O_EAL, GS_O_RXQ, GS_O_RXD, GS_O_BURST, GS_O_MBUFS,           /* dpdk */
	GS_O_MBUF_SIZE,
	GS_O_TOLERANCE, GS_O_MERGE_CALLS,                               /* merge */
	GS_O_LAST
};

/* One help text of an option: the commands whose --help shows it (an option
 * whose wording differs between commands has one text for each). */
struct gs_option_help {
	unsigned cmds;
	const char *arg;   /* the value's name in the help ("FILE"); a positional's name */
	const char *text;  /* each '\n' starts a line at the text's column */
	int col;           /* the text's column (0: GS_HELP_COL) */
};
#define GS_HELP_COL 24
#define GS_OPTION_HELPS 3

/* An option.  A row without a name and a short form is a line of help only:
 * a positional argument (live's BPF-FILTER), or, without `arg` either, a line
 * written as it stands. */
struct gs_option {
	const char *name;  /* the long name, NULL: a short form only */
	int short_name;    /* its letter, 0: none */
	int has_arg;       /* no_argument or required_argument */
	int code;          /* what getopt_long returns when there is no short form */
	unsigned cmds;     /* the commands that take it */
	struct gs_option_help help[GS_OPTION_HELPS];
};

extern const struct gs_option gs_options[];
extern const unsigned gs_options_count;

/* getopt_long's arguments for one command. */
#define GS_GETOPT_MAX 96
struct gs_getopt {
	struct option longopts[GS_GETOPT_MAX + 1]; /* ends with a zeroed entry */
	char shortopts[64];
	unsigned n;                                  /* longopts before the end */
};
/* The options `cmd` takes, in the table's order.  `colon`: shortopts starts with
 * ':' (a missing value returns ':' rather than '?'). */
void gs_options_getopt(struct gs_getopt *g, unsigned cmd, bool colon);
/* `cmd`'s --help: `head`, a line for each of its options (the table's order), `tail`. */
void gs_options_usage(FILE *f, unsigned cmd, const char *head, const char *tail);

#endif
