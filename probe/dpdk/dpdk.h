/* SPDX-License-Identifier: BSD-2-Clause */
/* The DPDK tap's state, one context passed to every part of it:
 *   dpdk_main.c  the command line and the order of things
 *   eal.c        EAL arguments, initialisation, DPDK's log
 *   port.c       ports and RX queues: choice, set-up, time stamp source, counters
 *   rx.c         the receive loop on the worker lcore, feeding the session
 *   clockmap.c   counter (TSC, NIC clock) to wall-clock nanoseconds */
#ifndef GS_DPDK_H
#define GS_DPDK_H

#include <stdbool.h>
#include <stdint.h>

#include <rte_ethdev.h>
#include <rte_mempool.h>

#include "../session.h"
#include "clockmap.h"
#include "eal.h"

#define GS_DPDK_MAX_PORTS 32
#define GS_DPDK_MAX_QUEUES 16      /* per port (net_pcap has at most 16) */
#define GS_DPDK_MAX_BURST 512
/* a frame in several mbufs is copied here for the decoder; pcap's largest
 * snapshot length */
#define GS_DPDK_SCRATCH (256 * 1024)

struct gs_dpdk_opts {
	struct gs_session_opts session;
	const char *ifaces[GS_DPDK_MAX_PORTS];  /* -i: port names or numbers; none: every port */
	int nifaces;
	uint16_t rxq;                 /* RX queues per port; 0: 1, or every file of a net_pcap port */
	uint16_t burst;
	uint16_t rxd;                 /* RX descriptors per queue: how long the poller may be away */
	uint32_t mbufs;               /* 0: sized from the ports and queues */
	uint32_t mbuf_size;           /* data room of an mbuf, headroom included */
};

/* Where a packet's time stamp comes from. */
enum gs_ts_source {
	GS_TS_TSC,    /* the CPU's TSC when the burst was received, calibrated against CLOCK_REALTIME */
	GS_TS_PCAP,   /* net_pcap: libpcap's stamp, in microseconds: a replayed file's own, or the
	               * kernel's for a live interface (rx_iface=) */
	GS_TS_NIC,    /* the NIC's receive time stamp (mbuf dynamic field), its clock mapped to CLOCK_REALTIME */
};

struct gs_dpdk_port {
	uint16_t id;
	char name[RTE_ETH_NAME_MAX_LEN];
	char driver[64];
	uint16_t nrxq;
	int dlt[GS_DPDK_MAX_QUEUES];  /* link type of each queue (a net_pcap file's own) */
	char *files[GS_DPDK_MAX_QUEUES];      /* net_pcap rx_pcap files (in the devargs) */
	int nfiles;
	uint64_t file_packets;        /* packets in those files: infinite_rx holds them all in mbufs */
	bool finite;                  /* a file replay: it ends, its clock is the file's */
	bool infinite_rx;
	enum gs_ts_source ts;
	struct gs_clockmap nic;       /* GS_TS_NIC: device clock -> wall clock */
	bool configured, started;
	struct rte_eth_stats base;    /* counters when we started */
	struct rte_eth_stats last;    /* and now (less base) */
	uint64_t last_rx_tsc;         /* when a burst last brought something */
	bool exhausted;               /* a finite replay that has ended */
};

struct gs_dpdk_rxq {
	uint16_t port;                /* index into gs_dpdk.port */
	uint16_t port_id, queue;
	int dlt;
	uint32_t empty;               /* polls in a row that brought nothing */
};

struct gs_dpdk {
	struct gs_dpdk_opts opt;
	struct gs_eal eal;
	struct rte_mempool *pool;
	struct gs_dpdk_port port[GS_DPDK_MAX_PORTS];
	unsigned nports;
	struct gs_dpdk_rxq rxq[GS_DPDK_MAX_PORTS * GS_DPDK_MAX_QUEUES];
	unsigned nrxq;
	int ts_offset;                /* mbuf timestamp dynamic field, -1: none */
	uint64_t ts_flag;             /* and its "valid" flag */
	struct gs_clockmap tsc;       /* TSC -> wall clock */
	uint64_t tsc_hz;
	struct gs_session session;
	struct gs_drops drops;
	uint8_t *scratch;
	unsigned worker;              /* the lcore that polls */
	/* what the loop saw */
	uint64_t packets, bursts, multiseg;
	uint64_t first_tsc, last_tsc; /* first and last burst that brought packets */
	uint64_t max_gap_tsc;         /* longest time between two polls of the queues */
	uint64_t ts_used[3];          /* packets stamped from each gs_ts_source */
	int64_t last_pcap_ts;         /* GS_TS_PCAP: the latest stamp (a replay's "now") */
	int64_t last_tsc_ns;          /* GS_TS_TSC: never handed out backwards */
	bool stopped_by_signal;
	bool replay_held;             /* a replay ended, /metrics served until --duration */
	const char *end_reason;
};

/* port.c */
int gs_dpdk_ports_find(struct gs_dpdk *d);
int gs_dpdk_ports_setup(struct gs_dpdk *d);
int gs_dpdk_ports_start(struct gs_dpdk *d);
/* Reads the counters of every port into port[].last and d->drops. */
void gs_dpdk_ports_stats(struct gs_dpdk *d);
void gs_dpdk_ports_close(struct gs_dpdk *d);
/* The time stamp source of a port, in words. */
const char *gs_dpdk_ts_name(const struct gs_dpdk_port *p);

/* rx.c: the lcore function (arg: struct gs_dpdk *); returns 0. */
int gs_dpdk_rx_loop(void *arg);

#endif
