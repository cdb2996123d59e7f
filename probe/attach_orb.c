/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_orb.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "attach_maps.h"
#include "orb_profiles.h" /* generated: gs_orb_builtins[] */

/* ---- profiles ------------------------------------------------------------ */

const char *gs_orb_profile_names(char *buf, size_t len)
{
	size_t at = 0;
	buf[0] = '\0';
	for (size_t i = 0; i < sizeof gs_orb_builtins / sizeof *gs_orb_builtins && at < len; i++)
		at += (size_t)snprintf(buf + at, len - at, "%s%s", i ? ", " : "", gs_orb_builtins[i].name);
	return buf;
}

int gs_orb_profile_load(struct gs_orb_profile *p, const char *name, char *err, size_t errlen)
{
	char names[256];
	if (strchr(name, '/')) {
		char text[16384];
		size_t n;
		FILE *f = fopen(name, "r");
		if (!f) {
			snprintf(err, errlen, "--orb %s: %s", name, strerror(errno));
			return 1;
		}
		n = fread(text, 1, sizeof text - 1, f);
		if (!feof(f)) {
			fclose(f);
			snprintf(err, errlen, "--orb %s: larger than %zu bytes", name, sizeof text - 1);
			return 1;
		}
		fclose(f);
		text[n] = '\0';
		return gs_orb_profile_parse(p, text, name, err, errlen) ? 0 : 1;
	}
	for (size_t i = 0; i < sizeof gs_orb_builtins / sizeof *gs_orb_builtins; i++)
		if (strcmp(gs_orb_builtins[i].name, name) == 0)
			return gs_orb_profile_parse(p, gs_orb_builtins[i].text, name, err, errlen) ? 0 : 1;
	snprintf(err, errlen, "--orb: no ORB profile %s (built in: %s; or a profile file's path)", name,
		 gs_orb_profile_names(names, sizeof names));
	return 1;
}

int gs_orb_check_pids(const struct gs_orb_profile *prof, const uint32_t *tgids, uint32_t n, char *err,
		      size_t errlen)
{
	char path[128];
	for (uint32_t i = 0; i < n; i++)
		if (!gs_maps_find_lib(tgids[i], prof->library, path, sizeof path, NULL, 0)) {
			snprintf(err, errlen, "--orb %s: pid %u does not map %s: the %s profile does not apply to it", prof->name, tgids[i],
				 prof->library, prof->name);
			return 2;
		}
	return 0;
}

#ifndef GS_HAVE_EBPF

int gs_orb_probe_open(struct gs_orb_probe **out, const struct gs_orb_profile *prof, const uint32_t *tgids,
		      uint32_t n, struct gs_tlog *log, char *err, size_t errlen)
{
	(void)prof;
	(void)tgids;
	(void)n;
	(void)log;
	*out = NULL;
	snprintf(err, errlen, "this build has no eBPF support");
	return 2;
}

void gs_orb_probe_drain(struct gs_orb_probe *p)
{
	(void)p;
}

int64_t gs_orb_probe_complete(const struct gs_orb_probe *p, uint64_t *stalls)
{
	(void)p;
	*stalls = 0;
	return 0;
}

void gs_orb_probe_counts(const struct gs_orb_probe *p, uint64_t *records, uint64_t *lost, int64_t *last_lost)
{
	(void)p;
	*records = *lost = 0;
	*last_lost = 0;
}

void gs_orb_probe_close(struct gs_orb_probe *p)
{
	(void)p;
}

int gs_orb_probe_check(const uint32_t *tgids, uint32_t n, gs_verdict_fn fn, void *arg)
{
	(void)tgids;
	(void)n;
	(void)fn;
	(void)arg;
	return 1;
}

#else

#include <bpf/libbpf.h>

#include "../ebpf/orb_upcall.h"
#include "ring_mark.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wcast-qual"
#include "orb_upcall.skel.h"
#pragma GCC diagnostic pop

#define MAX_LINKS (GS_ORB_PROBES * GS_ORB_TGIDS)

struct gs_orb_probe {
	struct orb_upcall_bpf *skel;
	struct ring_buffer *rb;
	struct gs_tlog *log;
	struct bpf_link *links[MAX_LINKS];
	uint32_t n_links;
	struct gs_ring_mark mark;
	uint32_t ncpus;               /* rows of the loss counters to add */
	uint64_t records, bad;
};

static uint64_t lost_total(const void *arg)
{
	const struct gs_orb_probe *p = arg;
	uint64_t n = 0;
	for (uint32_t c = 0; c < p->ncpus; c++)
		n += p->skel->bss->counters[c][GS_ORB_CNT_LOST];
	return n;
}

static int on_record(void *ctx, void *data, size_t len)
{
	struct gs_orb_probe *p = ctx;
	const struct gs_orb_ev *e = data;
	if (len < sizeof *e || (e->edge != GS_TEDGE_START && e->edge != GS_TEDGE_END)) {
		p->bad++;
		return 0;
	}
	p->records++;
	gs_tlog_push_upcall(p->log, (int64_t)e->ts_ns, e->tid, (enum gs_tedge)e->edge);
	return 0;
}

struct check_arg {
	const uint32_t *tgids;
	uint32_t n;
};

static struct bpf_object *open_object(const void *arg);

static int load_skel(void *skel)
{
	return orb_upcall_bpf__load(skel);
}

/* The skeleton's load: a refusal is said in words (gs_load_said).  0 or 2. */
static int load(struct orb_upcall_bpf *skel, const uint32_t *tgids, uint32_t n, char *err, size_t errlen)
{
	struct check_arg c = { tgids, n };
	return gs_load_said(skel->obj, load_skel, skel, open_object, &c, "--orb: ", "attach without --orb works",
			    err, errlen);
}

int gs_orb_probe_open(struct gs_orb_probe **out, const struct gs_orb_profile *prof, const uint32_t *tgids,
		      uint32_t n, struct gs_tlog *log, char *err, size_t errlen)
{
	struct gs_orb_probe *p;
	char path[128], shown[4096];
	int r;
	*out = NULL;
	if (!n || n > GS_ORB_TGIDS) {
		snprintf(err, errlen, "--orb follows 1 to %d processes given by --pid or --comm (%u here)", GS_ORB_TGIDS,
			 n);
		return 2;
	}
	if (gs_orb_check_pids(prof, tgids, n, err, errlen))
		return 2;
	p = calloc(1, sizeof *p);
	if (!p) {
		snprintf(err, errlen, "out of memory");
		return 2;
	}
	p->log = log;
	p->skel = orb_upcall_bpf__open();
	if (!p->skel) {
		snprintf(err, errlen, "--orb: cannot open the upcall probes: %s", strerror(errno));
		goto fail;
	}
	p->skel->rodata->n_tgids = n;
	for (uint32_t i = 0; i < n; i++)
		p->skel->rodata->tgids[i] = tgids[i];
	p->skel->rodata->wake_bytes = bpf_map__max_entries(p->skel->maps.orb_events) / 4;
	if ((r = load(p->skel, tgids, n, err, errlen)) != 0)
		goto fail;
	for (uint32_t i = 0; i < n; i++) {
		/* the file the process maps, wherever it lives (its mount
		 * namespace, its root): map_files resolves from ours */
		if (!gs_maps_find_lib(tgids[i], prof->library, path, sizeof path, shown, sizeof shown)) {
			snprintf(err, errlen, "--orb %s: pid %u no longer maps %s", prof->name, tgids[i], prof->library);
			goto fail;
		}
		for (uint32_t k = 0; k < prof->n; k++) {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = prof->probe[k].sym, .retprobe = prof->probe[k].ret,
				    .bpf_cookie = GS_ORB_COOKIE(prof->probe[k].edge, k));
			struct bpf_link *l = bpf_program__attach_uprobe_opts(
				prof->probe[k].ret ? p->skel->progs.gs_orb_return : p->skel->progs.gs_orb_entry,
				(pid_t)tgids[i], path, 0, &uo);
			if (!l) {
				snprintf(err, errlen, "--orb %s: cannot attach to %s in %s (pid %u, opened as %s): %s",
					 prof->name, prof->probe[k].sym, shown, tgids[i], path, strerror(errno));
				goto fail;
			}
			p->links[p->n_links++] = l;
		}
	}
	if (gs_ring_reader_open(&p->rb, &p->mark, &p->ncpus, GS_ORB_MAX_CPUS, bpf_map__fd(p->skel->maps.orb_events),
				on_record, p, "--orb", err, errlen) != 0)
		goto fail;
	*out = p;
	return 0;
fail:
	gs_orb_probe_close(p);
	return 2;
}

void gs_orb_probe_drain(struct gs_orb_probe *p)
{
	if (p)
		gs_ring_mark_drain(&p->mark, p->rb, lost_total, p, p->log);
}

int64_t gs_orb_probe_complete(const struct gs_orb_probe *p, uint64_t *stalls)
{
	*stalls = p ? p->mark.stalls : 0;
	return p ? p->mark.complete : 0;
}

void gs_orb_probe_counts(const struct gs_orb_probe *p, uint64_t *records, uint64_t *lost, int64_t *last_lost)
{
	*records = *lost = 0;
	*last_lost = 0;
	if (!p)
		return;
	*records = p->records;
	for (int c = 0; c < GS_ORB_MAX_CPUS; c++)
		*lost += p->skel->bss->counters[c][GS_ORB_CNT_LOST];
	*last_lost = (int64_t)p->skel->bss->lost_last_ns;
}

void gs_orb_probe_close(struct gs_orb_probe *p)
{
	if (!p)
		return;
	for (uint32_t i = 0; i < p->n_links; i++)
		bpf_link__destroy(p->links[i]);
	gs_ring_mark_close(&p->mark);
	ring_buffer__free(p->rb);
	orb_upcall_bpf__destroy(p->skel);
	free(p);
}


/* the object as gs_orb_probe_open configures it, from the skeleton's bytes */
static struct bpf_object *open_object(const void *arg)
{
	const struct check_arg *c = arg;
	struct orb_upcall_bpf__rodata rod;
	size_t sz, ro_sz;
	const void *bytes = orb_upcall_bpf__elf_bytes(&sz);
	struct bpf_object *o = gs_load_open_mem(bytes, sz, "orb_upcall_bpf", &rod, sizeof rod, &ro_sz);
	struct bpf_map *ev = o ? bpf_object__find_map_by_name(o, "orb_events") : NULL;
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

int gs_orb_probe_check(const uint32_t *tgids, uint32_t n, gs_verdict_fn fn, void *arg)
{
	struct check_arg c = { tgids, n < GS_ORB_TGIDS ? n : GS_ORB_TGIDS };
	return gs_load_check_all(open_object, &c, fn, arg);
}

#endif
