/* SPDX-License-Identifier: BSD-2-Clause */
#include "eal.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_log.h>

/* ------------------------------------------------------------------ arguments */

void gs_eal_args_init(struct gs_eal *eal)
{
	memset(eal, 0, sizeof *eal);
	eal->mute_fd = eal->saved_out = eal->saved_err = -1;
	gs_eal_add(eal, "giopscope");
}

static bool starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* "--opt" or "--opt=value" */
static bool is_opt(const char *a, const char *name)
{
	size_t n = strlen(name);
	return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

/* Notes which of the choices we would otherwise make the user has made. */
static void classify(struct gs_eal *eal, const char *a)
{
	if (is_opt(a, "--log-level"))
		eal->user_log_level = true;
	else if (is_opt(a, "--no-huge"))
		eal->user_no_huge = eal->user_mem = true;
	else if (is_opt(a, "--in-memory") || is_opt(a, "--huge-dir") || is_opt(a, "--socket-mem"))
		/* huge pages asked for (-m and --legacy-mem also go with --no-huge) */
		eal->user_mem = true;
	if (is_opt(a, "--in-memory") || is_opt(a, "--no-shconf") || is_opt(a, "--file-prefix") ||
	    is_opt(a, "--proc-type"))
		eal->user_shconf = true;
	if (is_opt(a, "--lcores") || starts(a, "-l") || starts(a, "-c") || is_opt(a, "--main-lcore"))
		eal->user_lcores = true;
	if (is_opt(a, "--vdev"))
		eal->user_vdev = eal->user_devices = true;
	if (is_opt(a, "--allow") || starts(a, "-a"))
		eal->user_devices = true;
	if (is_opt(a, "--allow") || is_opt(a, "--block") || starts(a, "-a") || starts(a, "-b") ||
	    is_opt(a, "--no-pci"))
		eal->user_pci_policy = true;
	if (is_opt(a, "--telemetry") || is_opt(a, "--no-telemetry"))
		eal->user_telemetry = true;
}

static bool add_arg(struct gs_eal *eal, const char *arg, bool user)
{
	char *s;
	if (eal->argc >= GS_EAL_MAX_ARGS || eal->nowned >= GS_EAL_MAX_ARGS)
		return false;
	if (!(s = strdup(arg)))
		return false;
	/* a value after an option ("--vdev X") is classified as an option too;
	 * harmless: values do not start with a dash */
	if (user && eal->argc > 0)
		classify(eal, s);
	eal->owned[eal->nowned++] = s;
	eal->argv[eal->argc++] = s;
	eal->argv[eal->argc] = NULL;
	return true;
}

bool gs_eal_add(struct gs_eal *eal, const char *arg)
{
	return add_arg(eal, arg, true);
}

/* One of our defaults: not the user's choice. */
static bool add_default(struct gs_eal *eal, const char *arg)
{
	return add_arg(eal, arg, false);
}

bool gs_eal_add_words(struct gs_eal *eal, const char *words)
{
	char buf[1024], *save = NULL, *w;
	if (strlen(words) >= sizeof buf)
		return false;
	strcpy(buf, words);
	for (w = strtok_r(buf, " \t\n", &save); w; w = strtok_r(NULL, " \t\n", &save))
		if (!gs_eal_add(eal, w))
			return false;
	return true;
}

/* ------------------------------------------------------------------ the log */

static ssize_t log_write(void *cookie, const char *buf, size_t size)
{
	struct gs_eal_log *l = cookie;
	/* the level of the message being written: DPDK's console writer asks
	 * the same question */
	int level = rte_log_cur_msg_loglevel();
	for (size_t i = 0; i < size; i++) {
		if (buf[i] != '\n') {
			if (l->len < sizeof l->line - 1)
				l->line[l->len++] = buf[i];
			continue;
		}
		l->line[l->len] = '\0';
		if (l->len > 0) {
			l->messages++;
			if (level > 0 && level <= (int)RTE_LOG_ERR) {
				if (!l->errors++)
					snprintf(l->first_err, sizeof l->first_err, "%.255s", l->line);
				snprintf(l->last_err, sizeof l->last_err, "%.255s", l->line);
			}
		}
		l->len = 0;
	}
	return (ssize_t)size;
}

static int log_close(void *cookie)
{
	(void)cookie;
	return 0;
}

void gs_eal_log_mark(struct gs_eal *eal)
{
	eal->log.errors = 0;
	eal->log.first_err[0] = eal->log.last_err[0] = '\0';
}

const char *gs_eal_log_reason(const struct gs_eal *eal)
{
	return eal->log.errors ? eal->log.first_err : NULL;
}

/* ------------------------------------------------------------------ defaults */

/* Huge pages the EAL could use: a hugetlbfs mount and free pages of some size.
 * Without them the EAL is given --no-huge (plain 4 KiB pages, enough for a
 * probe's few thousand buffers). */
static bool hugepages_usable(void)
{
	FILE *f = fopen("/proc/mounts", "r");
	char line[512];
	bool mounted = false;
	unsigned long free_pages = 0;
	DIR *d;
	struct dirent *de;
	if (f) {
		while (fgets(line, sizeof line, f))
			if (strstr(line, " hugetlbfs "))
				mounted = true;
		fclose(f);
	}
	if (!mounted || !(d = opendir("/sys/kernel/mm/hugepages")))
		return false;
	while ((de = readdir(d))) {
		char path[512];
		unsigned long n;
		if (!starts(de->d_name, "hugepages-"))
			continue;
		snprintf(path, sizeof path, "/sys/kernel/mm/hugepages/%s/free_hugepages", de->d_name);
		if ((f = fopen(path, "r"))) {
			if (fscanf(f, "%lu", &n) == 1)
				free_pages += n;
			fclose(f);
		}
	}
	closedir(d);
	return free_pages > 0;
}

/* Two lcores from the CPUs we may run on: the EAL's main lcore (which only
 * waits) on the first, the worker that polls on the last, away from CPU 0
 * where interrupts usually land.  One CPU: the main lcore polls. */
static bool lcores_arg(char *buf, size_t len)
{
	cpu_set_t set;
	int first = -1, last = -1;
	if (sched_getaffinity(0, sizeof set, &set) != 0)
		return false;
	for (int c = 0; c < CPU_SETSIZE; c++)
		if (CPU_ISSET(c, &set)) {
			if (first < 0)
				first = c;
			last = c;
		}
	if (first < 0)
		return false;
	if (first == last)
		snprintf(buf, len, "%d", first);
	else
		snprintf(buf, len, "%d,%d", first, last);
	return true;
}

static bool add_defaults(struct gs_eal *eal)
{
	char lc[64];
	bool nohuge = eal->user_no_huge || (!eal->user_mem && !hugepages_usable());
	bool ok = true;
	if (!eal->user_log_level)
		/* warnings and errors only, and they go to our log (see above) */
		ok &= add_default(eal, "--log-level=5");
	if (nohuge && !eal->user_no_huge)
		ok &= add_default(eal, "--no-huge");
	if (!eal->user_shconf) {
		/* no config file, no multi-process socket: several probes (and
		 * the user's own DPDK programs) never collide */
		if (nohuge)
			ok &= add_default(eal, "--no-shconf") && add_default(eal, "--file-prefix=giopscope");
		else
			ok &= add_default(eal, "--in-memory");
	}
	if (!eal->user_telemetry)
		ok &= add_default(eal, "--no-telemetry");
	if (eal->user_vdev && !eal->user_pci_policy)
		/* asked for virtual devices only: leave the PCI NICs alone */
		ok &= add_default(eal, "--no-pci");
	if (!eal->user_lcores && lcores_arg(lc, sizeof lc))
		ok &= add_default(eal, "-l") && add_default(eal, lc);
	return ok;
}

/* ------------------------------------------------------------------ init */

/* The first line of what was printed while muted, for a one-line reason. */
static void first_line(int fd, char *out, size_t len)
{
	char buf[1024];
	ssize_t n;
	out[0] = '\0';
	if (fd < 0 || lseek(fd, 0, SEEK_SET) != 0 || (n = read(fd, buf, sizeof buf - 1)) <= 0)
		return;
	buf[n] = '\0';
	for (char *p = buf; *p; ) {
		char *e = strchr(p, '\n');
		if (e)
			*e = '\0';
		if (*p) {
			snprintf(out, len, "%.255s", p);
			return;
		}
		if (!e)
			break;
		p = e + 1;
	}
}

void gs_eal_mute(struct gs_eal *eal)
{
	if (eal->user_log_level || eal->mute_fd >= 0)
		return;
	fflush(stdout);
	fflush(stderr);
	eal->mute_fd = memfd_create("giopscope-dpdk-output", MFD_CLOEXEC);
	if (eal->mute_fd < 0)
		return;
	eal->saved_out = dup(STDOUT_FILENO);
	eal->saved_err = dup(STDERR_FILENO);
	if (eal->saved_out < 0 || eal->saved_err < 0) {
		if (eal->saved_out >= 0)
			close(eal->saved_out);
		if (eal->saved_err >= 0)
			close(eal->saved_err);
		close(eal->mute_fd);
		eal->mute_fd = -1;
		return;
	}
	dup2(eal->mute_fd, STDOUT_FILENO);
	dup2(eal->mute_fd, STDERR_FILENO);
}

void gs_eal_unmute(struct gs_eal *eal, char *first, size_t len)
{
	if (first && len)
		first[0] = '\0';
	if (eal->mute_fd < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	dup2(eal->saved_out, STDOUT_FILENO);
	dup2(eal->saved_err, STDERR_FILENO);
	close(eal->saved_out);
	close(eal->saved_err);
	if (first && len)
		first_line(eal->mute_fd, first, len);
	close(eal->mute_fd);
	eal->mute_fd = -1;
}

int gs_eal_start(struct gs_eal *eal)
{
	static const cookie_io_functions_t fns = { .write = log_write, .close = log_close };
	cpu_set_t cpus;
	int rc, err;
	char printed[256] = "";
	bool quiet = !eal->user_log_level;

	if (!add_defaults(eal)) {
		fprintf(stderr, "giopscope dpdk: too many EAL arguments\n");
		return 2;
	}
	if (quiet) {
		eal->log.stream = fopencookie(&eal->log, "w", fns);
		if (eal->log.stream) {
			setvbuf(eal->log.stream, NULL, _IOLBF, 0);
			rte_openlog_stream(eal->log.stream);
		}
	}
	eal->restore_affinity = sched_getaffinity(0, sizeof cpus, &cpus) == 0;
	gs_eal_log_mark(eal);
	/* the EAL prints its whole usage text with printf on a bad option */
	gs_eal_mute(eal);
	/* the EAL keeps pointers into argv and reorders it; ours lives until
	 * gs_eal_stop */
	rc = rte_eal_init(eal->argc, eal->argv);
	err = rte_errno;
	gs_eal_unmute(eal, printed, sizeof printed);
	if (rc < 0) {
		const char *why = gs_eal_log_reason(eal);
		/* what it printed is its usage text, unless it logged nothing */
		if (!why && printed[0] && strncmp(printed, "Usage", 5) != 0)
			why = printed;
		fprintf(stderr, "giopscope dpdk: DPDK EAL initialisation failed: %s%s%s\n",
			rte_strerror(err), why ? ": " : "", why ? why : "");
		return 2;
	}
	eal->initialised = true;
	/* the EAL pinned this thread to the main lcore's CPU; it only waits for
	 * the worker, so let it run anywhere again (as DPDK's dumpcap does) */
	if (eal->restore_affinity)
		pthread_setaffinity_np(pthread_self(), sizeof cpus, &cpus);
	return 0;
}

void gs_eal_stop(struct gs_eal *eal)
{
	if (eal->initialised) {
		gs_eal_mute(eal);
		rte_eal_cleanup();
		gs_eal_unmute(eal, NULL, 0);
	}
	eal->initialised = false;
	if (eal->log.stream) {
		rte_openlog_stream(NULL);
		fclose(eal->log.stream);
		eal->log.stream = NULL;
	}
	for (int i = 0; i < eal->nowned; i++)
		free(eal->owned[i]);
	eal->nowned = eal->argc = 0;
}
