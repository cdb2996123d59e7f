/* SPDX-License-Identifier: BSD-2-Clause */
/* DPDK's Environment Abstraction Layer, kept behind giopscope's own command
 * line: the EAL arguments a probe needs are added here (no huge pages when
 * none are set up, no shared files, no telemetry socket, two lcores, PCI left
 * alone when only virtual devices are asked for), and what the EAL logs is
 * caught instead of flooding the terminal, so that a failure is one line. */
#ifndef GS_DPDK_EAL_H
#define GS_DPDK_EAL_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define GS_EAL_MAX_ARGS 96

/* What DPDK logged (at warning level and worse, unless the user chose the log
 * level): kept, not shown, so that our one-liners can quote it. */
struct gs_eal_log {
	FILE *stream;             /* handed to rte_openlog_stream */
	char line[512];           /* the message being written */
	size_t len;
	char first_err[256];      /* first error since gs_eal_log_mark */
	char last_err[256];
	uint64_t errors;          /* error messages since the mark */
	uint64_t messages;
};

struct gs_eal {
	char *argv[GS_EAL_MAX_ARGS + 1];
	int argc;
	char *owned[GS_EAL_MAX_ARGS];   /* strings we built (freed at the end) */
	int nowned;
	/* what the user gave, to decide what to add */
	bool user_log_level, user_mem, user_no_huge, user_shconf, user_lcores,
	     user_devices,             /* asked for ports: --vdev, -a */
	     user_vdev, user_pci_policy, user_telemetry;
	bool initialised;
	bool restore_affinity;
	int mute_fd, saved_out, saved_err;   /* gs_eal_mute */
	struct gs_eal_log log;
};

void gs_eal_args_init(struct gs_eal *eal);
/* Adds one EAL argument (copied); false when there are too many. */
bool gs_eal_add(struct gs_eal *eal, const char *arg);
/* Adds the words of a string ("--vdev net_pcap0,rx_pcap=x.pcap -l 0,1"). */
bool gs_eal_add_words(struct gs_eal *eal, const char *words);

/* Adds our defaults and initialises the EAL.  0, or 2 with a one-line reason
 * printed ("giopscope dpdk: ..."). */
int gs_eal_start(struct gs_eal *eal);
/* rte_eal_cleanup, DPDK's log back to stderr, our strings freed. */
void gs_eal_stop(struct gs_eal *eal);

/* What the EAL and the drivers (and the libraries under them: libbpf, libxdp)
 * print on stdout and stderr between these two goes to a memory file; the
 * first line is handed back for a one-line reason.  Nothing of ours may be
 * printed in between.  No-ops when the user chose DPDK's log level. */
void gs_eal_mute(struct gs_eal *eal);
void gs_eal_unmute(struct gs_eal *eal, char *first, size_t len);

/* Forget the errors logged so far (before a step whose failure we report). */
void gs_eal_log_mark(struct gs_eal *eal);
/* The first error DPDK logged since the mark, or NULL. */
const char *gs_eal_log_reason(const struct gs_eal *eal);

#endif
