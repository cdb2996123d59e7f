/* SPDX-License-Identifier: BSD-2-Clause */
#include "attach_load.h"
#include "verifier_log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static void *notice_wait(void *arg)
{
	struct gs_load_notice *n = arg;
	struct timespec until;
	int r = 0;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 1;
	pthread_mutex_lock(&n->mu);
	while (!n->done && r != ETIMEDOUT)
		r = pthread_cond_timedwait(&n->cv, &n->mu, &until);
	if (!n->done)
		fputs(n->text, stderr);
	pthread_mutex_unlock(&n->mu);
	return NULL;
}

void gs_load_notice_start(struct gs_load_notice *n, const char *text)
{
	n->text = text;
	n->done = false;
	pthread_mutex_init(&n->mu, NULL);
	pthread_cond_init(&n->cv, NULL);
	/* no thread, no line: loading goes on the same */
	n->running = pthread_create(&n->th, NULL, notice_wait, n) == 0;
}

void gs_load_notice_stop(struct gs_load_notice *n)
{
	if (!n->running)
		return;
	pthread_mutex_lock(&n->mu);
	n->done = true;
	pthread_cond_signal(&n->cv);
	pthread_mutex_unlock(&n->mu);
	pthread_join(n->th, NULL);
	n->running = false;
	pthread_mutex_destroy(&n->mu);
	pthread_cond_destroy(&n->cv);
}

#ifdef GS_HAVE_EBPF

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/utsname.h>
#include <unistd.h>

/* per program, level 4: the statistics and the reason lines, a few KiB */
#define LOG_BYTES (256u << 10)
/* level 1 for the saved log: every instruction's state on the path that
 * failed; the kernel keeps the log's end when it is longer (6.4+) */
#define FULL_LOG_BYTES (64u << 20)
#define LOG_STATS 4

/* libbpf's warnings of the last load (its print hook has no argument of its
 * own: the one state this file keeps outside a context).  A load refused
 * before any program reached the verifier (a kfunc or a map the kernel lacks)
 * is explained there only. */
static char warn_buf[16384];
static size_t warn_len;

static int collect(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	int n;
	/* its warnings: what failed and why (its debug lines are every relocation) */
	if (level != LIBBPF_WARN || warn_len + 1 >= sizeof warn_buf)
		return 0;
	n = vsnprintf(warn_buf + warn_len, sizeof warn_buf - warn_len, fmt, ap);
	if (n > 0)
		warn_len += (size_t)n < sizeof warn_buf - warn_len ? (size_t)n : sizeof warn_buf - warn_len - 1;
	return 0;
}

libbpf_print_fn_t gs_load_warnings_begin(void)
{
	warn_len = 0;
	warn_buf[0] = '\0';
	return libbpf_set_print(collect);
}

const char *gs_load_warnings(void)
{
	return warn_buf;
}

/* The first of libbpf's warnings that says why (not the "load failed" ones
 * that follow it), without its prefix. */
void gs_load_first_warning(char *out, size_t len)
{
	static const char *const skip[] = { "BPF program load failed", "failed to load object", "permission error",
					    "failed to load: ", "-- BEGIN", "-- END" };
	const char *s = warn_buf;
	out[0] = '\0';
	while (*s) {
		const char *e = strchr(s, '\n');
		size_t n = e ? (size_t)(e - s) : strlen(s);
		bool skipped = n == 0;
		for (size_t i = 0; i < sizeof skip / sizeof *skip && !skipped; i++)
			skipped = memmem(s, n, skip[i], strlen(skip[i])) != NULL;
		if (!skipped) {
			snprintf(out, len, "%.*s", (int)n, s);
			return;
		}
		s += n + (e != NULL);
	}
}

void gs_load_verdict(struct gs_prog_verdict *v, const struct bpf_program *prog, int err, const char *log)
{
	char n1[32], why[300];
	v->err = err;
	v->loaded = err == 0;
	v->insns = -1;
	v->reason[0] = '\0';
	if (err == 0 && bpf_program__fd(prog) >= 0) {
		struct bpf_prog_info info;
		uint32_t ilen = sizeof info;
		memset(&info, 0, sizeof info);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &ilen) == 0 && info.verified_insns)
			v->insns = info.verified_insns;
	}
	if (v->insns < 0)
		v->insns = gs_vlog_insns(log);
	if (err == 0)
		return;
	if (gs_vlog_too_large(log) || err == -E2BIG) {
		snprintf(v->reason, sizeof v->reason, "the verifier gave up on %s after %s instructions; the limit is %s",
			 v->program, gs_vlog_count(v->insns, n1, sizeof n1), "1 000 000");
		return;
	}
	if (log && *log) {
		gs_vlog_reason(log, why, sizeof why);
		if (why[0]) {
			snprintf(v->reason, sizeof v->reason, "the verifier refused %s: %s", v->program, why);
			return;
		}
	}
	if (err == -EPERM && bpf_program__type(prog) == BPF_PROG_TYPE_TRACING)
		snprintf(v->reason, sizeof v->reason, "the kernel refused %s without a verifier log (EPERM): it does "
			 "not allow fentry/fexit programs here", v->program);
	else if (err == -ESRCH || err == -ENOENT)
		snprintf(v->reason, sizeof v->reason, "the kernel has no %s (not in its BTF)", v->hook);
	else {
		char w[200];
		gs_load_first_warning(w, sizeof w);
		snprintf(v->reason, sizeof v->reason, "the kernel refused %s: %.40s (no verifier log%s%s)", v->program,
			 strerror(-err), w[0] ? "; " : "", w);
	}
}

struct bpf_object *gs_load_open_mem(const void *bytes, size_t sz, const char *name, void *ro, size_t ro_len,
				    size_t *ro_sz)
{
	LIBBPF_OPTS(bpf_object_open_opts, oo, .object_name = name);
	struct bpf_object *o = bpf_object__open_mem(bytes, sz, &oo);
	struct bpf_map *m;
	const void *init;
	if (!o)
		return NULL;
	m = bpf_object__find_map_by_name(o, ".rodata");
	init = m ? bpf_map__initial_value(m, ro_sz) : NULL;
	if (!init || *ro_sz > ro_len) {
		bpf_object__close(o);
		errno = ENOENT;
		return NULL;
	}
	memset(ro, 0, ro_len);
	memcpy(ro, init, *ro_sz);
	return o;
}

int gs_load_set_rodata(struct bpf_object *o, const void *ro, size_t ro_sz)
{
	struct bpf_map *m = bpf_object__find_map_by_name(o, ".rodata");
	return m ? bpf_map__set_initial_value(m, ro, ro_sz) : -ENOENT;
}

bool gs_load_alone(gs_load_open_fn open, const void *arg, const char *name, struct gs_prog_verdict *v)
{
	struct bpf_object *o = open(arg);
	struct bpf_program *p, *me = NULL;
	libbpf_print_fn_t was;
	char *log;
	int r;
	if (!o) {
		v->loaded = false;
		v->err = -errno;
		v->insns = -1;
		snprintf(v->reason, sizeof v->reason, "cannot open the object: %s", strerror(errno));
		return true;
	}
	bpf_object__for_each_program(p, o) {
		bool on = strcmp(bpf_program__name(p), name) == 0;
		bpf_program__set_autoload(p, on);
		if (on)
			me = p;
	}
	if (!me) {
		bpf_object__close(o);
		return false;
	}
	log = calloc(1, LOG_BYTES);
	if (log) {
		bpf_program__set_log_buf(me, log, LOG_BYTES);
		bpf_program__set_log_level(me, LOG_STATS);
	}
	was = gs_load_warnings_begin();
	r = bpf_object__load(o);
	libbpf_set_print(was);
	gs_load_verdict(v, me, r, log);
	free(log);
	bpf_object__close(o);
	return true;
}

int gs_load_check_all(gs_load_open_fn open, const void *arg, gs_verdict_fn fn, void *fnarg)
{
	struct bpf_object *o = open(arg);
	struct bpf_program *p;
	int bad = 0;
	if (!o) {
		struct gs_prog_verdict v;
		memset(&v, 0, sizeof v);
		snprintf(v.program, sizeof v.program, "(object)");
		snprintf(v.reason, sizeof v.reason, "cannot open the object: %s", strerror(errno));
		v.used = true;
		v.insns = -1;
		fn(fnarg, &v);
		return 1;
	}
	bpf_object__for_each_program(p, o) {
		struct gs_prog_verdict v;
		memset(&v, 0, sizeof v);
		snprintf(v.program, sizeof v.program, "%s", bpf_program__name(p));
		snprintf(v.hook, sizeof v.hook, "%s", bpf_program__section_name(p));
		/* the opener left autoload on what attach loads (another candidate: off) */
		v.used = bpf_program__autoload(p);
		gs_load_alone(open, arg, v.program, &v);
		bad += v.used && !v.loaded;
		fn(fnarg, &v);
	}
	bpf_object__close(o);
	return bad;
}

int gs_load_logs_set(struct gs_load_logs *l, struct bpf_object *o)
{
	struct bpf_program *p;
	memset(l, 0, sizeof *l);
	bpf_object__for_each_program(p, o) {
		if (!bpf_program__autoload(p) || l->n == GS_LOAD_MAX_PROGS)
			continue;
		if (!(l->p[l->n].buf = calloc(1, LOG_BYTES)))
			return -ENOMEM;
		l->p[l->n].prog = p;
		bpf_program__set_log_buf(p, l->p[l->n].buf, LOG_BYTES);
		bpf_program__set_log_level(p, LOG_STATS);
		l->n++;
	}
	return 0;
}

struct bpf_program *gs_load_logs_refused(const struct gs_load_logs *l, int err, struct gs_prog_verdict *v)
{
	unsigned i = l->n, bad;
	while (i > 0 && !l->p[i - 1].buf[0])
		i--;
	if (i > 0 && gs_vlog_has_reason(l->p[i - 1].buf))
		bad = i - 1;    /* the verifier said why */
	else if (i < l->n && (i > 0 || err == -EPERM || err == -ESRCH || err == -ENOENT || err == -EOPNOTSUPP))
		bad = i;        /* the one after the last loaded: refused before the verifier ran */
	else
		return NULL;    /* not a program's failure (a map?) */
	snprintf(v->program, sizeof v->program, "%s", bpf_program__name(l->p[bad].prog));
	gs_load_verdict(v, l->p[bad].prog, err, bad + 1 == i ? l->p[bad].buf : "");
	return l->p[bad].prog;
}

void gs_load_logs_free(struct gs_load_logs *l)
{
	for (unsigned i = 0; i < l->n; i++) {
		bpf_program__set_log_buf(l->p[i].prog, NULL, 0);
		free(l->p[i].buf);
	}
	l->n = 0;
}

int gs_load_said(struct bpf_object *obj, int (*load)(void *skel), void *skel, gs_load_open_fn open,
		 const void *arg, const char *what, const char *works, char *err, size_t errlen)
{
	struct gs_load_logs logs;
	struct gs_prog_verdict v;
	libbpf_print_fn_t was;
	bool prog;
	int r;
	if (gs_load_logs_set(&logs, obj) != 0) {
		gs_load_logs_free(&logs);
		snprintf(err, errlen, "%sout of memory", what);
		return 2;
	}
	was = gs_load_warnings_begin();
	r = load(skel);
	libbpf_set_print(was);
	memset(&v, 0, sizeof v);
	prog = r && gs_load_logs_refused(&logs, r, &v) != NULL;
	gs_load_logs_free(&logs);
	if (!r)
		return 0;
	return gs_load_refusal(prog ? &v : NULL, r, open, arg, what, works, err, errlen);
}

int gs_load_refusal(const struct gs_prog_verdict *v, int r, gs_load_open_fn open, const void *arg, const char *what,
		    const char *works, char *err, size_t errlen)
{
	struct gs_load_notice note;
	struct utsname u;
	char path[512], logs[600] = "", why[420];
	if (uname(&u) != 0)
		snprintf(u.release, sizeof u.release, "?");
	if (v) {
		/* as long again as the refused load, the log being written this time */
		if (v->program[0]) {
			gs_load_notice_start(&note, "giopscope attach: loading the refused program again for its "
					     "whole verifier log...\n");
			if (gs_load_save_log(open, arg, v->program, path, sizeof path))
				snprintf(logs, sizeof logs, "; the whole verifier log: %s", path);
			gs_load_notice_stop(&note);
		}
		snprintf(why, sizeof why, "%s", v->reason);
	} else {
		char w[300];
		gs_load_first_warning(w, sizeof w);
		snprintf(why, sizeof why, "cannot load the eBPF programs: %.60s%s%s", strerror(r < 0 ? -r : r),
			 w[0] ? ": " : "", w);
	}
	snprintf(err, errlen, "%s%s (kernel %s)%s; %s", what, why, u.release, logs, works);
	return 2;
}

bool gs_load_save_log(gs_load_open_fn open, const void *arg, const char *name, char *path, size_t len)
{
	const char *dir = getenv("TMPDIR");
	struct bpf_object *o;
	struct bpf_program *p, *me = NULL;
	libbpf_print_fn_t was;
	char *log, head[sizeof warn_buf + 512];
	size_t n;
	bool ok;
	int fd, r;
	if (!dir || !*dir)
		dir = "/tmp";
	if (!(o = open(arg)))
		return false;
	bpf_object__for_each_program(p, o) {
		bool on = strcmp(bpf_program__name(p), name) == 0;
		bpf_program__set_autoload(p, on);
		if (on)
			me = p;
	}
	if (!me || !(log = calloc(1, FULL_LOG_BYTES))) {
		bpf_object__close(o);
		return false;
	}
	bpf_program__set_log_buf(me, log, FULL_LOG_BYTES);
	bpf_program__set_log_level(me, 1);
	/* libbpf's account of the load first: with no verifier log (a program
	 * refused before the verifier ran) it is all there is */
	{
		struct utsname u;
		was = gs_load_warnings_begin();
		r = bpf_object__load(o);
		libbpf_set_print(was);
		if (uname(&u) != 0)
			snprintf(u.release, sizeof u.release, "?");
		snprintf(head, sizeof head, "giopscope: %s loaded alone at verifier log level 1 on kernel %s: %s\n"
			 "--- libbpf ---\n%s--- the kernel's verifier log%s ---\n", name, u.release,
			 r ? strerror(-r) : "loaded", warn_buf, log[0] ? "" : " (empty: the kernel wrote none)");
	}
	bpf_object__close(o);
	n = strlen(log);
	/* a file of our own (root in a shared /tmp: not a name someone else chose) */
	snprintf(path, len, "%s/giopscope-verifier-%s-XXXXXX.log", dir, name);
	fd = mkstemps(path, 4);
	ok = fd >= 0 && write(fd, head, strlen(head)) == (ssize_t)strlen(head) && write(fd, log, n) == (ssize_t)n;
	if (fd >= 0)
		close(fd);
	if (fd >= 0 && !ok)
		unlink(path);
	free(log);
	return ok;
}

#endif
