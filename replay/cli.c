/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * socktab replay: the command line. Reads and parses every script first, runs each case on the
 * chosen backends, folds the outcomes per script line (a repeat line passes only if every
 * iteration passed) and prints PASS|FAIL per line and the totals; or hands --random to the
 * differential fuzzer (fuzz.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <time.h>
#include <unistd.h>

#include <sys/stat.h>
#include <sys/utsname.h>

#include "opt.h"
#include "replay.h"
#include "script.h"

/*
 * Read and parse script @file. NULL on a file that cannot be read, a directory, a binary file, a
 * bad script or one without a single statement, with the message in @errbuf.
 */
static struct rp_script *parse_file(const char *file, char *errbuf, size_t errcap)
{
	FILE *f = fopen(file, "r");
	char *text = NULL;
	size_t n = 0, cap = 0;
	struct rp_script *s;
	struct stat st;

	if (!f) {
		snprintf(errbuf, errcap, "%s: %s", file, strerror(errno));
		return NULL;
	}
	if (!fstat(fileno(f), &st) && S_ISDIR(st.st_mode)) {
		snprintf(errbuf, errcap, "%s: %s", file, strerror(EISDIR));
		fclose(f);
		return NULL;
	}
	for (;;) {
		if (n + 4096 + 1 > cap) {
			cap = cap ? 2 * cap : 65536;
			text = rp_xrealloc(text, cap);
		}
		size_t r = fread(text + n, 1, cap - n - 1, f);

		if (!r)
			break;
		n += r;
	}
	if (ferror(f)) {
		snprintf(errbuf, errcap, "%s: %s", file, strerror(errno));
		fclose(f);
		free(text);
		return NULL;
	}
	fclose(f);
	text[n] = 0;
	if (strlen(text) != n) {
		snprintf(errbuf, errcap, "%s: binary file", file);
		free(text);
		return NULL;
	}
	s = rp_parse_text(file, text, errbuf, errcap);
	free(text);
	/* An empty script would pass with nothing checked: a wrong path or an emptied file must
	 * not look like success. */
	if (s && !s->nlines) {
		snprintf(errbuf, errcap, "%s: no statements", file);
		rp_free_script(s);
		return NULL;
	}
	return s;
}

/* ---------------------------------------------------------------- running and reporting */

/* First failure of script line @line in @C: "" if it passed everywhere. */
static void line_verdict(const struct rp_case *c, const struct rp_collect *C, int line, char *buf,
			 size_t cap)
{
	buf[0] = 0;
	for (int i = 0; i < c->nops; i++) {
		if (c->ops[i].line != line)
			continue;
		if (!C->got[i]) {
			snprintf(buf, cap, "not run: the backend stopped");
			return;
		}
		if (!C->o[i].pass) {
			if (c->ops[i].iter >= 0)
				snprintf(buf, cap, "i=%d: %s", c->ops[i].iter, C->o[i].reason);
			else
				snprintf(buf, cap, "%s", C->o[i].reason);
			return;
		}
	}
}

struct totals {
	int lines_pass, lines_fail, cases_pass, cases_fail, cases_skipped;
};

_Static_assert(SOCKTAB_KV_COUNT == 4, "one -1 for each kernel variant");
int rp_kvariant[SOCKTAB_KV_COUNT] = { -1, -1, -1, -1 };

/* The first kernel variant whose value @c requires and the live kernel does not have, or -1. */
static int case_mismatch(const struct rp_case *c)
{
	for (int kv = 0; kv < SOCKTAB_KV_COUNT; kv++)
		if (c->when[kv] >= 0 && c->when[kv] != rp_kvariant[kv])
			return kv;
	return -1;
}

static void run_script(const struct rp_script *s, int backends, const char *case_filter,
		       bool quiet, struct totals *T)
{
	for (int ci = 0; ci < s->ncases; ci++) {
		const struct rp_case *c = &s->cases[ci];
		struct rp_collect K = { 0 }, S = { 0 };
		bool case_ok = true;
		int kv;

		if (case_filter && !strstr(c->name, case_filter))
			continue;
		/* A case for one kind of kernel (a kernel variant) is not run on another. */
		if ((backends & RP_BE_KERNEL) && (kv = case_mismatch(c)) >= 0) {
			T->cases_skipped++;
			if (!quiet)
				printf("SKIP %s [%s]: for kernels %s %s; this one %s\n", s->file,
				       c->name, c->when[kv] ? "with" : "without",
				       socktab_kernel_variant_name(kv),
				       rp_kvariant[kv] == 1 ? "has it" : rp_kvariant[kv] == 0 ?
				       "has not" : "cannot be probed for it");
			continue;
		}
		if (backends & RP_BE_KERNEL)
			rp_run_backend(RP_BE_KERNEL, s, c, &K);
		if (backends & RP_BE_SOCKTAB)
			rp_run_backend(RP_BE_SOCKTAB, s, c, &S);
		for (int l = c->first_line; l < c->first_line + c->nlines; l++) {
			char rk[200] = "", rs[200] = "", reason[420];

			if (backends & RP_BE_KERNEL)
				line_verdict(c, &K, l, rk, sizeof(rk));
			if (backends & RP_BE_SOCKTAB)
				line_verdict(c, &S, l, rs, sizeof(rs));
			if (!rk[0] && !rs[0]) {
				T->lines_pass++;
				if (!quiet)
					printf("PASS %s:%d [%s] %s\n", s->file, s->lines[l].lineno,
					       c->name, s->lines[l].text);
				continue;
			}
			T->lines_fail++;
			case_ok = false;
			if (backends == RP_BE_BOTH)
				snprintf(reason, sizeof(reason), "%s%s%s%s%s", rk[0] ? "kernel: " : "",
					 rk, rk[0] && rs[0] ? "; " : "", rs[0] ? "socktab: " : "", rs);
			else
				snprintf(reason, sizeof(reason), "%s", rk[0] ? rk : rs);
			printf("FAIL %s:%d [%s] %s (%s)\n", s->file, s->lines[l].lineno, c->name,
			       s->lines[l].text, reason);
		}
		if (case_ok)
			T->cases_pass++;
		else
			T->cases_fail++;
		if (backends & RP_BE_KERNEL)
			rp_collect_free(&K);
		if (backends & RP_BE_SOCKTAB)
			rp_collect_free(&S);
		fflush(stdout);
	}
}

/* ---------------------------------------------------------------- progress */

/*
 * Progress of a long --random run (20,000 scripts take about 25 minutes) on one line of stderr,
 * rewritten in place ("\r") at most four times a second: scripts done of the total, scripts per
 * second and the time left at that rate. Only when stderr is a terminal and -v is off (its
 * per-script lines are a progress report already): in a pipe or a log file nothing is written,
 * and the output is what it was without it. The loop that runs the scripts (fuzz.c) calls
 * rp_progress() before each script and rp_progress_clear() before it prints anything, so the
 * line never shares the terminal with a result.
 */

static struct {
	bool on;     /* stderr is a terminal, not -v */
	bool drawn;  /* the line is on the screen now */
	double start, last;
} progress;

static double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void progress_start(bool verbose)
{
	progress.on = !verbose && isatty(STDERR_FILENO);
	progress.drawn = false;
	progress.start = mono_s();
	progress.last = 0;
}

void rp_progress(long done, long total)
{
	double t, el, rate;
	char eta[32] = "?";

	if (!progress.on)
		return;
	t = mono_s();
	if (t - progress.last < 0.25)
		return;
	el = t - progress.start;
	rate = done > 0 && el > 0 ? (double)done / el : 0;
	if (rate > 0) {
		long left = (long)((double)(total - done) / rate + 0.5);

		snprintf(eta, sizeof(eta), "%ld:%02ld:%02ld", left / 3600, left / 60 % 60, left % 60);
	}
	/* One write per update: the line, then erase what a longer earlier one left. */
	fprintf(stderr, "\rreplay --random: %ld/%ld scripts (%.0f %%), %.1f/s, ETA %s\033[K", done,
		total, total > 0 ? 100.0 * (double)done / (double)total : 100.0, rate, eta);
	progress.drawn = true;
	progress.last = t;
}

void rp_progress_clear(void)
{
	if (!progress.drawn)
		return;
	fputs("\r\033[K", stderr);
	progress.drawn = false;
	progress.last = 0; /* the next update draws at once */
}

/* ---------------------------------------------------------------- command line */

static void replay_usage(FILE *f)
{
	fprintf(f,
		"usage: socktab replay [--backend socktab|kernel|both] [-q] [--case SUBSTR] FILE...\n"
		"       socktab replay --random N [--seed S] [-v]\n"
		"Runs .sock scripts against socktab (loopback model) and/or the live kernel (a fresh\n"
		"network namespace per case; needs root). With the kernel backend the first line is\n"
		"'kernel: RELEASE (uname -r)'. Prints PASS|FAIL per script line, then\n"
		"'cases: X passed, Y failed' and 'N passed, M failed'. Exit 0 only if nothing "
		"failed;\n"
		"2 for a bad script or usage (a FILE with no statements, a --case that matches no\n"
		"case); 77 when the kernel backend cannot create namespaces.\n"
		"--random: N random scripts on both backends; prints the first disagreement, "
		"minimized.\n");
}

static void free_scripts(struct rp_script **scripts, int n)
{
	for (int k = 0; k < n; k++)
		rp_free_script(scripts[k]);
	free(scripts);
}

/* Does @filter (a substring) name a case of @scripts? */
static bool case_matches(struct rp_script *const *scripts, int n, const char *filter)
{
	for (int k = 0; k < n; k++)
		for (int c = 0; c < scripts[k]->ncases; c++)
			if (strstr(scripts[k]->cases[c].name, filter))
				return true;
	return false;
}

/* The header line naming the kernel the scripts ran on (uname -r): an outcome holds for that
 * release. */
static void print_kernel(void)
{
	struct utsname u;

	if (uname(&u) == 0)
		printf("kernel: %s (uname -r)\n", u.release);
}

int rp_main(int argc, char **argv)
{
	enum { O_BACKEND = 256, O_CASE, O_RANDOM, O_SEED };
	static const struct option longopts[] = {
		{ "backend", required_argument, NULL, O_BACKEND },
		{ "case", required_argument, NULL, O_CASE },
		{ "random", required_argument, NULL, O_RANDOM },
		{ "seed", required_argument, NULL, O_SEED },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	/* --backend: index + 1 is the set of backends (enum rp_backend_sel) */
	static const char *const backend_names[] = { "socktab", "kernel", "both", NULL };
	const struct opt_parser op = { "socktab replay", "hqv", longopts };
	int backends = RP_BE_BOTH, rc = 0, opt;
	bool quiet = false, verbose = false;
	const char *case_filter = NULL;
	uint64_t nrandom = 0, seed = 1;
	bool random = false;
	struct rp_script **scripts = NULL;
	int nscripts = 0;
	struct totals T = { 0 };
	char err[300];

	opt_start();
	while ((opt = opt_next(&op, argc, argv)) != -1) {
		int bad = 0;

		switch (opt) {
		case 'h':
			replay_usage(stdout);
			return 0;
		case 'q':
			quiet = true;
			break;
		case 'v':
			verbose = true;
			break;
		case O_BACKEND:
			bad = opt_choice(&op, "--backend", optarg, backend_names, &backends);
			backends++;
			break;
		case O_CASE:
			case_filter = optarg;
			break;
		case O_RANDOM:
			bad = opt_count(&op, "--random", optarg, 1, 1000000000, &nrandom);
			random = true;
			break;
		case O_SEED:
			bad = opt_seed(&op, "--seed", optarg, &seed);
			break;
		default:
			return 2;
		}
		if (bad)
			return 2;
	}
	if (random) {
		if (optind < argc) {
			opt_fail(&op, "--random runs generated scripts: no FILE ('%s')", argv[optind]);
			return 2;
		}
	} else if (optind == argc) {
		opt_fail(&op, "no FILE to run (socktab replay --help)");
		return 2;
	}
	/* Every script is parsed before anything runs: a bad one is never half-run. */
	for (int i = optind; i < argc; i++) {
		struct rp_script *s = parse_file(argv[i], err, sizeof(err));

		if (!s) {
			fprintf(stderr, "%s\n", err);
			free_scripts(scripts, nscripts);
			return 2;
		}
		scripts = rp_xrealloc(scripts, sizeof(*scripts) * (size_t)(nscripts + 1));
		scripts[nscripts++] = s;
	}
	if (case_filter && !case_matches(scripts, nscripts, case_filter)) {
		opt_fail(&op, "--case: '%s' matches no case", case_filter);
		free_scripts(scripts, nscripts);
		return 2;
	}
	if (random || (backends & RP_BE_KERNEL)) {
		int e = rp_kernel_probe();

		if (e) {
			fprintf(stderr,
				"socktab replay: the kernel backend cannot create a network namespace "
				"(unshare(CLONE_NEWNET): %s); it needs root or CAP_SYS_ADMIN. "
				"Skipped (exit 77); use --backend socktab to run socktab alone.\n",
				strerror(e));
			free_scripts(scripts, nscripts);
			return 77;
		}
	}
	if (random || (backends & RP_BE_KERNEL)) {
		print_kernel();
		printf("kernel variants:");
		for (int kv = 0; kv < SOCKTAB_KV_COUNT; kv++) {
			rp_kvariant[kv] = rp_kernel_variant(kv);
			printf(" %s%s", rp_kvariant[kv] == 1 ? "" : rp_kvariant[kv] == 0 ? "no " :
			       "unknown ", socktab_kernel_variant_name(kv));
			printf(kv + 1 < SOCKTAB_KV_COUNT ? "," : "\n");
		}
	}
	if (random) {
		fflush(stdout); /* the header lines above come before any progress line */
		progress_start(verbose);
		rc = rp_fuzz((long)nrandom, seed, verbose);
		rp_progress_clear();
		return rc;
	}
	for (int k = 0; k < nscripts; k++)
		run_script(scripts[k], backends, case_filter, quiet, &T);
	free_scripts(scripts, nscripts);
	if (T.cases_skipped)
		printf("cases: %d passed, %d failed, %d skipped (for other kernel variants)\n",
		       T.cases_pass, T.cases_fail, T.cases_skipped);
	else
		printf("cases: %d passed, %d failed\n", T.cases_pass, T.cases_fail);
	printf("%d passed, %d failed\n", T.lines_pass, T.lines_fail);
	rc = T.lines_fail ? 1 : 0;
	return rc;
}
