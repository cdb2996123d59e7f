/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_sched.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef GS_HAVE_EBPF

int gs_sched_probe_open(struct gs_sched_probe **out, const uint32_t *tgids, uint32_t n, struct gs_tlog *log,
			char *err, size_t errlen)
{
	(void)tgids;
	(void)n;
	(void)log;
	*out = NULL;
	snprintf(err, errlen, "this build has no eBPF support");
	return 2;
}

void gs_sched_probe_drain(struct gs_sched_probe *p)
{
	(void)p;
}

int64_t gs_sched_probe_complete(const struct gs_sched_probe *p, uint64_t *stalls)
{
	(void)p;
	*stalls = 0;
	return 0;
}

uint64_t gs_sched_probe_written(const struct gs_sched_probe *p)
{
	(void)p;
	return 0;
}

void gs_sched_probe_counts(const struct gs_sched_probe *p, uint64_t *records, uint64_t *lost, int64_t *last_lost)
{
	(void)p;
	*records = *lost = 0;
	*last_lost = 0;
}

void gs_sched_probe_close(struct gs_sched_probe *p)
{
	(void)p;
}

int gs_sched_probe_check(const uint32_t *tgids, uint32_t n, gs_verdict_fn fn, void *arg)
{
	(void)tgids;
	(void)n;
	(void)fn;
	(void)arg;
	return 1;
}

#else

#include <bpf/libbpf.h>

#include "../ebpf/sched.h"
#include "ring_mark.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "sched.skel.h"
#pragma GCC diagnostic pop

struct gs_sched_probe {
	struct sched_bpf *skel;
	struct ring_buffer *rb;
	struct gs_tlog *log;
	struct gs_ring_mark mark;
	uint32_t ncpus;               /* rows of the loss counters to add */
	uint64_t records, bad;
	/* GIOPSCOPE_SCHED_RECORDS=FILE (a debugging aid, off by default): every
	 * record as it is read, one text line, to look at a split by hand */
	FILE *dump;
};

static uint64_t lost_total(const void *arg)
{
	const struct gs_sched_probe *p = arg;
	uint64_t n = 0;
	for (uint32_t c = 0; c < p->ncpus; c++)
		n += p->skel->bss->counters[c][GS_SCHED_CNT_LOST];
	return n;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct gs_sched_probe *p = ctx;
	const struct gs_sched_ev *e = data;
	if (len < sizeof *e) {
		p->bad++;
		return 0;
	}
	p->records++;
	if (p->dump)
		fprintf(p->dump, "%llu %u %u %u %u %u %u %u %llu %llu %u\n", (unsigned long long)e->ts_ns, e->kind,
			e->cpu, e->tid, e->other, e->prev_state, e->pcount, e->prev_pcount,
			(unsigned long long)e->prev_rt, (unsigned long long)e->next_rt, e->flags);
	bool pc = (e->flags & GS_SCHED_F_PCOUNT) != 0;
	if (e->kind == GS_SCHED_SWITCH)
		gs_tlog_push_switch_idle(p->log, (int64_t)e->ts_ns, e->tid, e->other,
					 e->prev_state == GS_SCHED_PREV_RUNNABLE, pc && e->other ? (int64_t)e->pcount : -1,
					 pc && e->tid ? (int64_t)e->prev_pcount : -1,
					 e->other ? (int64_t)e->next_rt : GS_TLOG_NO_KCPU,
					 e->tid ? (int64_t)e->prev_rt : GS_TLOG_NO_KCPU, (e->flags & GS_SCHED_F_FROM_IDLE) != 0);
	else if (e->kind == GS_SCHED_WAKEUP)
		gs_tlog_push_wakeup(p->log, (int64_t)e->ts_ns, e->tid, e->other);
	else
		p->bad++;
	return 0;
}

struct check_arg {
	const uint32_t *tgids;
	uint32_t n;
};

static struct bpf_object *open_object(const void *arg);

static int load_skel(void *skel)
{
	return sched_bpf__load(skel);
}

/* The skeleton's load: a refusal is said in words (gs_load_said).  0 or 2. */
static int load(struct sched_bpf *skel, const uint32_t *tgids, uint32_t n, char *err, size_t errlen)
{
	struct check_arg c = { tgids, n };
	return gs_load_said(skel->obj, load_skel, skel, open_object, &c, "--sched: ", "attach without --sched works",
			    err, errlen);
}

int gs_sched_probe_open(struct gs_sched_probe **out, const uint32_t *tgids, uint32_t n, struct gs_tlog *log,
			char *err, size_t errlen)
{
	struct gs_sched_probe *p;
	int r;
	*out = NULL;
	if (!n || n > GS_SCHED_TGIDS) {
		snprintf(err, errlen, "--sched follows 1 to %d processes (%u given)", GS_SCHED_TGIDS, n);
		return 2;
	}
	p = calloc(1, sizeof *p);
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return 2;
	}
	p->log = log;
	{
		const char *dump = getenv("GIOPSCOPE_SCHED_RECORDS");
		if (dump && *dump && !(p->dump = fopen(dump, "w"))) {
			snprintf(err, errlen, "--sched: GIOPSCOPE_SCHED_RECORDS: cannot open %s: %s", dump, strerror(errno));
			goto fail;
		}
	}
	p->skel = sched_bpf__open();
	if (!p->skel) {
		snprintf(err, errlen, "--sched: cannot open the scheduler probes: %s", strerror(errno));
		goto fail;
	}
	p->skel->rodata->n_tgids = n;
	for (uint32_t i = 0; i < n; i++)
		p->skel->rodata->tgids[i] = tgids[i];
	/* wake the reader when a quarter of the ring waits */
	p->skel->rodata->wake_bytes = bpf_map__max_entries(p->skel->maps.sched_events) / 4;
	if ((r = load(p->skel, tgids, n, err, errlen)) != 0)
		goto fail;
	if ((r = sched_bpf__attach(p->skel)) != 0) {
		snprintf(err, errlen, "--sched: cannot attach to sched_switch/sched_wakeup (tp_btf): %s", strerror(-r));
		goto fail;
	}
	if (gs_ring_reader_open(&p->rb, &p->mark, &p->ncpus, GS_SCHED_MAX_CPUS,
				bpf_map__fd(p->skel->maps.sched_events), on_record, p, "--sched", err, errlen) != 0)
		goto fail;
	*out = p;
	return 0;
fail:
	gs_sched_probe_close(p);
	return 2;
}

void gs_sched_probe_drain(struct gs_sched_probe *p)
{
	if (p)
		gs_ring_mark_drain(&p->mark, p->rb, lost_total, p, p->log);
}

int64_t gs_sched_probe_complete(const struct gs_sched_probe *p, uint64_t *stalls)
{
	*stalls = p ? p->mark.stalls : 0;
	return p ? p->mark.complete : 0;
}

uint64_t gs_sched_probe_written(const struct gs_sched_probe *p)
{
	uint64_t n = 0;
	for (uint32_t c = 0; p && c < p->ncpus; c++)
		n += p->skel->bss->counters[c][GS_SCHED_CNT_WRITTEN];
	return n;
}

void gs_sched_probe_counts(const struct gs_sched_probe *p, uint64_t *records, uint64_t *lost, int64_t *last_lost)
{
	*records = *lost = 0;
	*last_lost = 0;
	if (!p)
		return;
	*records = p->records;
	for (int c = 0; c < GS_SCHED_MAX_CPUS; c++)
		*lost += p->skel->bss->counters[c][GS_SCHED_CNT_LOST];
	*last_lost = (int64_t)p->skel->bss->lost_last_ns;
}

void gs_sched_probe_close(struct gs_sched_probe *p)
{
	if (!p)
		return;
	gs_ring_mark_close(&p->mark);
	ring_buffer__free(p->rb);
	sched_bpf__destroy(p->skel);
	if (p->dump)
		fclose(p->dump);
	free(p);
}


/* the object as gs_sched_probe_open configures it, from the skeleton's bytes */
static struct bpf_object *open_object(const void *arg)
{
	const struct check_arg *c = arg;
	struct sched_bpf__rodata rod;
	size_t sz, ro_sz;
	const void *bytes = sched_bpf__elf_bytes(&sz);
	struct bpf_object *o = gs_load_open_mem(bytes, sz, "sched_bpf", &rod, sizeof rod, &ro_sz);
	struct bpf_map *ev = o ? bpf_object__find_map_by_name(o, "sched_events") : NULL;
	if (!ev) {
		bpf_object__close(o);
		errno = ENOENT;
		return NULL;
	}
	rod.n_tgids = c->n;
	for (uint32_t i = 0; i < c->n; i++)
		rod.tgids[i] = c->tgids[i];
	rod.wake_bytes = bpf_map__max_entries(ev) / 4;
	gs_load_set_rodata(o, &rod, ro_sz);
	return o;
}

int gs_sched_probe_check(const uint32_t *tgids, uint32_t n, gs_verdict_fn fn, void *arg)
{
	struct check_arg c = { tgids, n < GS_SCHED_TGIDS ? n : GS_SCHED_TGIDS };
	return gs_load_check_all(open_object, &c, fn, arg);
}

#endif
