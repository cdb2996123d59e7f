/* SPDX-License-Identifier: BSD-2-Clause */
/* The pcap tap, live: libpcap on an interface (pcap_create/pcap_activate) in
 * immediate mode with nanosecond time stamps, a kernel BPF filter, and
 * optionally a copy of every captured packet in a file.  The handle is
 * non-blocking: the caller waits on gs_live_wait() with a timeout, so that it
 * can tick and notice a stop request when no packet comes. */
#ifndef GS_TAP_LIVE_H
#define GS_TAP_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "session.h"
#include "../analysis/out_file.h"

#define GS_LIVE_SNAPLEN_DEFAULT 262144        /* libpcap's maximum: never cuts a GSO/GRO packet */
#define GS_LIVE_BUFFER_DEFAULT (64 << 20)     /* kernel ring: 256 blocks of 256 KiB (TPACKET_V3) */
/* packets handed over in blocks, at most this many ms late (TPACKET_V3): with
 * 256 blocks the ring rides out 2.5 s or more without the CPU at any packet
 * rate below ~100k/s (docs/live.md); 0 is immediate mode */
#define GS_LIVE_BATCH_MS_DEFAULT 10

struct gs_live_opts {
	const char *iface;
	int snaplen;                /* bytes kept of each packet */
	int buffer_size;            /* the kernel ring, bytes */
	int tstamp_type;            /* PCAP_TSTAMP_*, -1: the interface's default */
	int batch_ms;               /* 0: immediate mode; else packets delivered in blocks, at most this late */
	bool promisc;
	const char *filter;         /* the BPF expression given on the command line, or NULL */
	const uint8_t *ports;       /* the --ports bitmap (8192 bytes), or NULL */
	const char *save_path;      /* -w FILE ("-": stdout), or NULL: opened by gs_live_save */
};

/* One captured packet: time stamp in nanoseconds since the epoch (in the
 * clock of the time stamp type), the bytes kept, the length on the wire. */
typedef void (*gs_live_fn)(void *arg, int64_t ts_ns, const uint8_t *data, uint32_t caplen,
			   uint32_t wirelen);

struct gs_live {
	struct pcap *p;
	bool dump;                 /* -w: writing pcapng to dump_fp */
	bool dump_failed;
	FILE *dump_fp;
	struct gs_out dump_out;    /* -w FILE: dump_fp is dump_out.f */
	const char *iface;
	int fd;                     /* pcap_get_selectable_fd */
	int dlt;
	int snaplen;                /* what the kernel was asked for, after activation */
	int batch_ms;               /* as asked: 0 immediate */
	bool nano;                  /* time stamps come in ns (else µs, converted) */
	char filter[4096];          /* the filter compiled into the kernel */
	gs_live_fn fn;              /* valid during gs_live_dispatch */
	void *arg;
	bool sock_error;            /* poll saw POLLERR/POLLHUP: check the interface */
	uint64_t packets;
	int64_t last_ts;            /* of the latest packet handed on, 0 before the first */
	struct gs_drops drops;      /* the latest pcap_stats */
};

/* Opens and activates the capture (the file of -w comes after, with
 * gs_live_save).  0, or 2 with a one-line reason in err. */
int gs_live_open(struct gs_live *l, const struct gs_live_opts *o, char *err, size_t errlen);
/* -w: from now on every captured packet is also written to `path` ("-":
 * stdout), pcapng, mode 0600, never through a symlink; under a temporary name
 * until gs_live_commit (analysis/out_file.h).  Separate from gs_live_open so
 * that it runs as the -Z user.  0, or 2 with a reason in err. */
int gs_live_save(struct gs_live *l, const char *path, char *err, size_t errlen);
/* The -w file under its name (the set-up is complete).  0, or 2 with a reason in err. */
int gs_live_commit(struct gs_live *l, char *err, size_t errlen);
/* Waits up to timeout_ms for packets (or an error on the socket).  Returns
 * 1 when there is something to dispatch, 0 on timeout or a signal. */
int gs_live_wait(struct gs_live *l, int timeout_ms);
/* Whether the interface is still there and up.  0, or 2 with a one-line
 * reason in err.  Clears sock_error. */
int gs_live_check_iface(struct gs_live *l, char *err, size_t errlen);
/* Hands at most `max` waiting packets to fn, without blocking.  Returns how
 * many, -2 when gs_live_break() stopped it, or -1 with a one-line reason in err. */
int gs_live_dispatch(struct gs_live *l, int max, gs_live_fn fn, void *arg, char *err, size_t errlen);
/* From inside fn: stop the current dispatch after this packet. */
void gs_live_break(struct gs_live *l);
/* Refreshes l->drops from pcap_stats (kept as they were if that fails). */
void gs_live_update_drops(struct gs_live *l);
/* Pushes the saved packets to the file.  0, or 2 with a reason in err. */
int gs_live_flush(struct gs_live *l, char *err, size_t errlen);
/* Flushes and closes the file and the capture (a -w file not committed yet is
 * removed: what was under its name stays).  0, or 2 with a reason in err. */
int gs_live_close(struct gs_live *l, char *err, size_t errlen);

/* Prints the time stamp types the interface offers.  0, or 2 with a reason in err. */
int gs_live_list_tstamp_types(const char *iface, FILE *out, char *err, size_t errlen);
/* The kernel filter for --ports and a user expression: "tcp", "tcp and (port 2809 or
 * portrange 10000-10010)", "... and (USER)".  false if it does not fit. */
bool gs_live_build_filter(const uint8_t *ports, const char *user, char *buf, size_t len);

#endif
