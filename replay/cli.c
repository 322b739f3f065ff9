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

#include "replay.h"
#include "script.h"

static struct rp_script *parse_file(const char *file, char *errbuf, size_t errcap)
{
	FILE *f = fopen(file, "r");
	char *text = NULL;
	size_t n = 0, cap = 0;
	struct rp_script *s;

	if (!f) {
		snprintf(errbuf, errcap, "%s: %s", file, strerror(errno));
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
	fclose(f);
	text[n] = 0;
	if (strlen(text) != n) {
		snprintf(errbuf, errcap, "%s: binary file", file);
		free(text);
		return NULL;
	}
	s = rp_parse_text(file, text, errbuf, errcap);
	free(text);
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
	int lines_pass, lines_fail, cases_pass, cases_fail;
};

static void run_script(const struct rp_script *s, int backends, const char *case_filter,
		       bool quiet, struct totals *T)
{
	for (int ci = 0; ci < s->ncases; ci++) {
		const struct rp_case *c = &s->cases[ci];
		struct rp_collect K = { 0 }, S = { 0 };
		bool case_ok = true;

		if (case_filter && !strstr(c->name, case_filter))
			continue;
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

/* ---------------------------------------------------------------- command line */

static void replay_usage(FILE *f)
{
	fprintf(f,
		"usage: socktab replay [--backend socktab|kernel|both] [-q] [--case SUBSTR] FILE...\n"
		"       socktab replay --random N [--seed S] [-v]\n"
		"Runs .sock scripts against socktab (loopback model) and/or the live kernel (a fresh\n"
		"network namespace per case; needs root). Prints PASS|FAIL per script line, then\n"
		"'cases: X passed, Y failed' and 'N passed, M failed'. Exit 0 only if nothing "
		"failed;\n"
		"2 for a bad script or usage; 77 when the kernel backend cannot create namespaces.\n"
		"--random: N random scripts on both backends; prints the first disagreement, "
		"minimized.\n");
}

int rp_main(int argc, char **argv)
{
	int backends = RP_BE_BOTH, rc = 0;
	bool quiet = false, verbose = false;
	const char *case_filter = NULL;
	long nrandom = -1;
	unsigned long long seed = 1;
	struct rp_script **scripts = NULL;
	int nscripts = 0;
	struct totals T = { 0 };
	char err[300];

	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];

		if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
			replay_usage(stdout);
			return 0;
		} else if (!strcmp(a, "-q")) {
			quiet = true;
		} else if (!strcmp(a, "-v")) {
			verbose = true;
		} else if (!strcmp(a, "--backend") && i + 1 < argc) {
			a = argv[++i];
			backends = !strcmp(a, "socktab") ? RP_BE_SOCKTAB
				   : !strcmp(a, "kernel") ? RP_BE_KERNEL
				   : !strcmp(a, "both")	  ? RP_BE_BOTH
							  : 0;
			if (!backends) {
				fprintf(stderr, "socktab replay: unknown backend '%s'\n", a);
				return 2;
			}
		} else if (!strcmp(a, "--case") && i + 1 < argc) {
			case_filter = argv[++i];
		} else if ((!strcmp(a, "--random") || !strcmp(a, "--seed")) && i + 1 < argc) {
			char *end;
			unsigned long long v = strtoull(argv[i + 1], &end, 10);

			if (*end || !argv[i + 1][0] || argv[i + 1][0] == '-') {
				fprintf(stderr, "socktab replay: bad number '%s'\n", argv[i + 1]);
				return 2;
			}
			if (a[2] == 'r')
				nrandom = (long)v;
			else
				seed = v;
			i++;
		} else if (a[0] == '-') {
			fprintf(stderr, "socktab replay: unknown option '%s'\n", a);
			replay_usage(stderr);
			return 2;
		} else {
			struct rp_script *s = parse_file(a, err, sizeof(err));

			if (!s) {
				fprintf(stderr, "%s\n", err);
				for (int k = 0; k < nscripts; k++)
					rp_free_script(scripts[k]);
				free(scripts);
				return 2;
			}
			scripts = rp_xrealloc(scripts, sizeof(*scripts) * (size_t)(nscripts + 1));
			scripts[nscripts++] = s;
		}
	}
	if (nrandom < 0 && !nscripts) {
		replay_usage(stderr);
		return 2;
	}
	if (nrandom >= 0 || (backends & RP_BE_KERNEL)) {
		int e = rp_kernel_probe();

		if (e) {
			fprintf(stderr,
				"socktab replay: the kernel backend cannot create a network namespace "
				"(unshare(CLONE_NEWNET): %s); it needs root or CAP_SYS_ADMIN. "
				"Skipped (exit 77); use --backend socktab to run socktab alone.\n",
				strerror(e));
			for (int k = 0; k < nscripts; k++)
				rp_free_script(scripts[k]);
			free(scripts);
			return 77;
		}
	}
	if (nrandom >= 0) {
		for (int k = 0; k < nscripts; k++)
			rp_free_script(scripts[k]);
		free(scripts);
		return rp_fuzz(nrandom, seed, verbose);
	}
	for (int k = 0; k < nscripts; k++) {
		run_script(scripts[k], backends, case_filter, quiet, &T);
		rp_free_script(scripts[k]);
	}
	free(scripts);
	printf("cases: %d passed, %d failed\n", T.cases_pass, T.cases_fail);
	printf("%d passed, %d failed\n", T.lines_pass, T.lines_fail);
	rc = T.lines_fail ? 1 : 0;
	return rc;
}

