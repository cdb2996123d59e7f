/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_tc.h"
#include "err_buf.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const mode_names[] = {
	[GS_TC_AUTO] = "auto",
	[GS_TC_TCX] = "tcx",
	[GS_TC_CLSACT] = "clsact",
};

int gs_tc_mode_parse(const char *s, enum gs_tc_mode *m)
{
	for (unsigned i = 0; i < sizeof mode_names / sizeof *mode_names; i++)
		if (strcmp(s, mode_names[i]) == 0) {
			*m = (enum gs_tc_mode)i;
			return 0;
		}
	return -1;
}

const char *gs_tc_mode_name(enum gs_tc_mode m)
{
	return mode_names[m];
}

void gs_tc_init(struct gs_tc *t)
{
	memset(t, 0, sizeof *t);
	t->guard_fd = -1;
}

#ifndef GS_HAVE_EBPF

bool gs_tc_have_tcx(void)
{
	return false;
}

int gs_tc_attach(struct gs_tc *t, enum gs_tc_mode mode, const struct gs_tc_iface *ifs, uint32_t n, int in, int eg,
		 char *err, size_t errlen)
{
	(void)t, (void)mode, (void)ifs, (void)n, (void)in, (void)eg;
	snprintf(err, errlen, "this build has no eBPF support");
	return 2;
}

void gs_tc_detach(struct gs_tc *t)
{
	(void)t;
}

#else

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdlib.h>
#include <unistd.h>

/* enum bpf_attach_type values of kernel 6.6 (UAPI, fixed); the distribution's
 * headers may be older than the kernel */
#define GS_BPF_TCX_INGRESS 46
#define GS_BPF_TCX_EGRESS 47

bool gs_tc_have_tcx(void)
{
	struct btf *vm = btf__load_vmlinux_btf();
	const struct btf_type *t;
	bool ok = false;
	int id;
	if (!vm)
		return false;
	id = btf__find_by_name_kind(vm, "bpf_attach_type", BTF_KIND_ENUM);
	if (id > 0 && (t = btf__type_by_id(vm, id)) != NULL) {
		const struct btf_enum *e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t) && !ok; i++)
			ok = strcmp(btf__name_by_offset(vm, e[i].name_off), "BPF_TCX_INGRESS") == 0;
	}
	btf__free(vm);
	return ok;
}

/* TCX: a link per hook, in front of whatever else is attached there.
 * libbpf 1.1 predates bpf_program__attach_tcx; the link is created directly. */
static int attach_tcx(struct gs_tc *t, const struct gs_tc_iface *f, bool egress, int fd, char *err, size_t errlen)
{
	int l;
	if (t->n_links >= GS_TC_MAX)
		return gs_errf(err, errlen, "too many interfaces (at most %d hooks)", GS_TC_MAX);
	l = bpf_link_create(fd, f->ifindex, (enum bpf_attach_type)(egress ? GS_BPF_TCX_EGRESS : GS_BPF_TCX_INGRESS),
			    NULL);
	if (l < 0)
		return -l;
	t->links[t->n_links++] = l;
	return 0;
}

/* A process other than this one holding program `id` (its fd's fdinfo says
 * prog_id), or 0. */
static long prog_holder(uint32_t id)
{
	DIR *proc = opendir("/proc");
	struct dirent *pe;
	long found = 0, self = (long)getpid();
	char want[32];
	snprintf(want, sizeof want, "prog_id:\t%u\n", id);
	while (proc && !found && (pe = readdir(proc)) != NULL) {
		char *end, path[300], link[64];
		long pid = strtol(pe->d_name, &end, 10);
		DIR *fds;
		struct dirent *fe;
		if (*end || pid <= 0 || pid == self)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/fd", pid);
		if (!(fds = opendir(path)))
			continue;
		while (!found && (fe = readdir(fds)) != NULL) {
			char info[512];
			ssize_t n;
			FILE *f;
			size_t got;
			snprintf(path, sizeof path, "/proc/%ld/fd/%s", pid, fe->d_name);
			n = readlink(path, link, sizeof link - 1);
			if (n <= 0)
				continue;
			link[n] = '\0';
			if (strcmp(link, "anon_inode:bpf-prog") != 0)
				continue;
			snprintf(path, sizeof path, "/proc/%ld/fdinfo/%s", pid, fe->d_name);
			if (!(f = fopen(path, "r")))
				continue;
			got = fread(info, 1, sizeof info - 1, f);
			info[got] = '\0';
			fclose(f);
			if (strstr(info, want))
				found = pid;
		}
		closedir(fds);
	}
	if (proc)
		closedir(proc);
	return found;
}

/* The program a filter at giopscope's priority and `handle` runs (its id and
 * name); false: no such filter. */
static bool filter_at(int ifindex, bool egress, uint32_t handle, uint32_t *id, char *name, size_t len)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = ifindex, .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, q, .handle = handle, .priority = GS_TC_PRIORITY);
	struct bpf_prog_info info;
	uint32_t ilen = sizeof info;
	libbpf_print_fn_t was;
	int fd, r;
	/* nothing there is the common case: not a warning */
	was = libbpf_set_print(NULL);
	r = bpf_tc_query(&hook, &q);
	libbpf_set_print(was);
	if (r != 0)
		return false;
	*id = q.prog_id;
	memset(&info, 0, sizeof info);
	fd = bpf_prog_get_fd_by_id(q.prog_id);
	snprintf(name, len, "?");
	if (fd >= 0 && bpf_obj_get_info_by_fd(fd, &info, &ilen) == 0)
		snprintf(name, len, "%s", info.name);
	if (fd >= 0)
		close(fd);
	return true;
}

/* A free place among giopscope's on this hook (one per attach running
 * there), the filters a killed giopscope left removed on the way (a
 * giop_tap_* program no process holds), said on stderr. */
static int find_place(const struct gs_tc_iface *f, bool egress, uint32_t *handle, char *err, size_t errlen)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
			    .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	const char *dir = egress ? "egress" : "ingress";
	*handle = 0;
	for (uint32_t h = GS_TC_HANDLE; h < GS_TC_HANDLE + GS_TC_PLACES; h++) {
		DECLARE_LIBBPF_OPTS(bpf_tc_opts, d, .handle = h, .priority = GS_TC_PRIORITY);
		char name[32];
		uint32_t id;
		int r;
		if (!filter_at(f->ifindex, egress, h, &id, name, sizeof name)) {
			if (!*handle)
				*handle = h;
			continue;
		}
		/* another tool's filter, or a running giopscope's: not ours to touch */
		if (strncmp(name, "giop_tap_", 9) != 0 || prog_holder(id) != 0)
			continue;
		r = bpf_tc_detach(&hook, &d);
		if (r)
			return gs_errf(err, errlen, "%s %s: cannot remove the tc filter a killed giopscope left (handle 0x%x, "
				    "pref %u): %s", f->name, dir, h, GS_TC_PRIORITY, strerror(-r));
		fprintf(stderr, "giopscope attach: removed the tc filter a killed giopscope left on %s %s (program "
			"%u)\n", f->name, dir, id);
		if (!*handle)
			*handle = h;
	}
	if (!*handle)
		return gs_errf(err, errlen, "%s %s: giopscope's %d tc clsact places (pref %u) are all taken by running "
			    "attaches: stop one, or use --tc-attach tcx (6.6+)", f->name, dir, GS_TC_PLACES,
			    GS_TC_PRIORITY);
	return 0;
}

static int attach_clsact(struct gs_tc *t, const struct gs_tc_iface *f, bool egress, int fd, char *err,
			 size_t errlen)
{
	DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = f->ifindex,
			    .attach_point = egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
	DECLARE_LIBBPF_OPTS(bpf_tc_opts, o, .prog_fd = fd, .priority = GS_TC_PRIORITY);
	uint32_t handle;
	int r;
	if (t->n_filters >= GS_TC_MAX)
		return gs_errf(err, errlen, "too many interfaces (at most %d hooks)", GS_TC_MAX);
	if (!egress) {
		/* the qdisc for both directions, once per interface */
		DECLARE_LIBBPF_OPTS(bpf_tc_hook, q, .ifindex = f->ifindex, .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
		libbpf_print_fn_t was = libbpf_set_print(NULL);
		/* there already (EEXIST) is no warning: it stays, not ours */
		r = bpf_tc_hook_create(&q);
		libbpf_set_print(was);
		if (r == 0)
			t->qdiscs[t->n_qdiscs++] = f->ifindex;
		else if (r != -EEXIST)
			return gs_errf(err, errlen, "cannot add a clsact qdisc to %s: %s", f->name, strerror(-r));
	}
	if ((r = find_place(f, egress, &handle, err, errlen)) != 0)
		return r;
	o.handle = handle;
	r = bpf_tc_attach(&hook, &o);
	if (r)
		return gs_errf(err, errlen, "cannot attach to %s %s (tc clsact): %s", f->name, egress ? "egress" : "ingress",
			    strerror(-r));
	t->filters[t->n_filters++] = (struct gs_tc_where){ f->ifindex, egress, handle };
	return 0;
}

static int start_guard(struct gs_tc *t, char *err, size_t errlen);

int gs_tc_attach(struct gs_tc *t, enum gs_tc_mode mode, const struct gs_tc_iface *ifs, uint32_t n, int in, int eg,
		 char *err, size_t errlen)
{
	t->used = mode != GS_TC_AUTO ? mode : gs_tc_have_tcx() ? GS_TC_TCX : GS_TC_CLSACT;
	for (uint32_t i = 0; i < n; i++) {
		for (int k = 0; k < 2; k++) {
			bool egress = k == 1;
			int r;
			if (egress && ifs[i].ingress_only)
				break;
			if (t->used == GS_TC_CLSACT) {
				if ((r = attach_clsact(t, &ifs[i], egress, egress ? eg : in, err, errlen)) != 0)
					return r;
				continue;
			}
			r = attach_tcx(t, &ifs[i], egress, egress ? eg : in, err, errlen);
			if (r == 2)
				return r;
			/* auto, the first hook: a kernel whose BTF named TCX and still refuses it */
			if (r && mode == GS_TC_AUTO && t->n_links == 0 && (r == EINVAL || r == EOPNOTSUPP)) {
				t->used = GS_TC_CLSACT;
				k--;
				continue;
			}
			if (r)
				return gs_errf(err, errlen, "cannot attach to %s %s (TCX, kernel 6.6 or later; --tc-attach "
					    "clsact before): %s", ifs[i].name, egress ? "egress" : "ingress", strerror(r));
		}
	}
	if (t->n_filters || t->n_qdiscs)
		return start_guard(t, err, errlen);
	return 0;
}

/* No filter at any of giopscope's places on the interface, either way. */
static bool our_places_empty(int ifindex)
{
	for (uint32_t h = GS_TC_HANDLE; h < GS_TC_HANDLE + GS_TC_PLACES; h++)
		for (int k = 0; k < 2; k++) {
			char name[32];
			uint32_t id;
			if (filter_at(ifindex, k == 1, h, &id, name, sizeof name))
				return false;
		}
	return true;
}

/* The filters and the qdiscs attach made, deleted (CAP_NET_ADMIN). */
static void remove_filters(struct gs_tc *t)
{
	for (uint32_t i = 0; i < t->n_filters; i++) {
		DECLARE_LIBBPF_OPTS(bpf_tc_hook, hook, .ifindex = t->filters[i].ifindex,
				    .attach_point = t->filters[i].egress ? BPF_TC_EGRESS : BPF_TC_INGRESS);
		DECLARE_LIBBPF_OPTS(bpf_tc_opts, d, .handle = t->filters[i].handle, .priority = GS_TC_PRIORITY);
		bpf_tc_detach(&hook, &d);
	}
	t->n_filters = 0;
	for (uint32_t i = 0; i < t->n_qdiscs; i++) {
		DECLARE_LIBBPF_OPTS(bpf_tc_hook, q, .ifindex = t->qdiscs[i], .attach_point = BPF_TC_INGRESS | BPF_TC_EGRESS);
		if (!our_places_empty(t->qdiscs[i]))
			continue; /* another attach came after and uses it */
		bpf_tc_hook_destroy(&q);
	}
	t->n_qdiscs = 0;
}

/* The guard: a child holding the capability to delete the filters, waiting
 * for this process to close the pipe or die.  It ignores the signals a
 * terminal sends the whole group, so that it outlives attach. */
static int start_guard(struct gs_tc *t, char *err, size_t errlen)
{
	int p[2];
	pid_t pid;
	if (pipe2(p, O_CLOEXEC) != 0)
		return gs_errf(err, errlen, "cannot make the clsact guard's pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return gs_errf(err, errlen, "cannot start the clsact guard: %s", strerror(errno));
	}
	if (pid == 0) {
		char c;
		signal(SIGINT, SIG_IGN);
		signal(SIGTERM, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		/* no stdin/stdout of attach's held open (a pipe's reader waits for them) */
		for (int fd = 0; fd < 1024; fd++)
			if (fd != p[0] && fd != 2)
				close(fd);
		while (read(p[0], &c, 1) < 0 && errno == EINTR)
			;
		remove_filters(t);
		_exit(0);
	}
	close(p[0]);
	t->guard_fd = p[1];
	t->guard_pid = (int)pid;
	return 0;
}

void gs_tc_detach(struct gs_tc *t)
{
	for (uint32_t i = 0; i < t->n_links; i++)
		close(t->links[i]);
	t->n_links = 0;
	if (t->guard_fd >= 0) {
		/* the guard deletes them (this process may have no capability left) */
		close(t->guard_fd);
		t->guard_fd = -1;
		while (waitpid(t->guard_pid, NULL, 0) < 0 && errno == EINTR)
			;
		t->n_filters = t->n_qdiscs = 0;
		return;
	}
	remove_filters(t);
}

#endif
