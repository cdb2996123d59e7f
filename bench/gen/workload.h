/* SPDX-License-Identifier: BSD-2-Clause */
/* What the simulated ORBs say: operations with their argument and result sizes,
 * outcomes (exceptions, forwards), service times, and per-connection ORB traits
 * (GIOP version, byte orders, multiplexing, fragment size). */
#ifndef GEN_WORKLOAD_H
#define GEN_WORKLOAD_H

#include "giop_build.h"
#include "pcap_out.h"
#include "rng.h"

enum kind { K_REQUEST, K_LOCATE };

enum outcome {
	O_NORMAL,        /* NO_EXCEPTION with the operation's result */
	O_USER_EX,
	O_SYSTEM_EX,
	O_FORWARD,       /* LOCATION_FORWARD with an IOR */
	O_LOC_HERE,
	O_LOC_UNKNOWN,
	O_LOC_FORWARD,
};

struct op {
	const char *name;
	unsigned weight;
	enum body req;
	unsigned req_size;   /* SZ_* below, or a fixed n */
	enum body rep;
	bool echo;           /* the reply carries the request's n */
	unsigned rep_size;
	bool oneway;
	double user_ex;      /* probability of the user exception */
	const char *ex_id;
	double svc_us;       /* median service time */
};

/* size classes, drawn per call */
enum { SZ_MIXED = 1u << 30, SZ_SMALL_STR, SZ_LARGE, SZ_NAME };

extern const struct op ops[];
extern const unsigned n_ops;

/* one call as the client decides it */
struct call_plan {
	enum kind kind;
	unsigned op;
	enum outcome outcome;
	bool oneway, cancel;
	unsigned n_req, n_rep;   /* body size parameters */
	unsigned sysex;          /* which system exception */
	double svc_us;
};

/* --mix echo: every call an echoString of 32 characters (the per-packet worst case) */
extern bool mix_echo;
/* cancel: probability that the client cancels a two-way call (never answered) */
void plan_call(struct rng *r, struct call_plan *c, double cancel);

/* ORB traits of one connection */
struct conn_params {
	unsigned char minor;
	bool cle, sle;          /* client and server byte orders */
	unsigned mux;           /* requests a client keeps outstanding */
	unsigned frag;          /* 0: never fragments, else max bytes per fragment */
	unsigned contexts;      /* on every request (codesets go on the first only) */
	unsigned short priority;
	bool server_closes;     /* CloseConnection + server FIN, else the client FINs */
	unsigned key;           /* which object key family */
	double think_us;        /* client pause between a reply and its next request */
	struct endpoint client, server;
};

void plan_conn(struct rng *r, struct conn_params *p, double v6_share);
/* an object key of the connection's family: a few objects per server */
const unsigned char *object_key(const struct conn_params *p, unsigned which, size_t *len);

#endif
