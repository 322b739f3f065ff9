/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Command-line options of socktab's programs (opt.h): the getopt_long() loop and the checked
 * value parsers. Numbers are parsed by hand for counts and seeds (strtoull accepts a sign and
 * leading blanks, and wraps "-1" to 2^64 - 1) and by strtod() for reals, with everything it
 * would let through (blanks, nan, inf, out-of-range) refused afterwards.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sys/stat.h>

#include "opt.h"

void opt_start(void)
{
	optind = 0; /* glibc: 0 also resets the state of a half-read option cluster */
	opterr = 0;
}

/* The long option whose getopt value is @val, or NULL. */
static const struct option *long_by_val(const struct opt_parser *p, int val)
{
	for (const struct option *o = p->longopts; o && o->name; o++)
		if (!o->flag && o->val == val)
			return o;
	return NULL;
}

int opt_next(const struct opt_parser *p, int argc, char **argv)
{
	char spec[128];
	int c;

	snprintf(spec, sizeof(spec), ":%s", p->shortopts ? p->shortopts : "");
	opterr = 0;
	c = getopt_long(argc, argv, spec, p->longopts, NULL);
	if (c == ':') {
		/* A missing value can only be missing at the end: argv[argc - 1] is the option
		 * as it was written. */
		fprintf(stderr, "%s: option '%s' needs a value\n", p->cmd, argv[argc - 1]);
		return OPT_BAD;
	}
	if (c != '?')
		return c;
	/* glibc leaves optopt 0 for an unknown long option and sets it to the option's value for
	 * a known one given a value it does not take ("--json=1"). */
	const char *tok = optind > 0 && optind <= argc ? argv[optind - 1] : "";
	const struct option *lo = optopt ? long_by_val(p, optopt) : NULL;

	if (optopt == 0)
		fprintf(stderr, "%s: unknown option '%s'\n", p->cmd, tok);
	else if (lo && !strncmp(tok, "--", 2) && strchr(tok, '='))
		fprintf(stderr, "%s: option '--%s' takes no value\n", p->cmd, lo->name);
	else if (optopt > 0 && optopt < 128 && isprint(optopt))
		fprintf(stderr, "%s: unknown option '-%c'\n", p->cmd, optopt);
	else
		fprintf(stderr, "%s: unknown option '%s'\n", p->cmd, tok);
	return OPT_BAD;
}

int opt_fail(const struct opt_parser *p, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", p->cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return -1;
}

int opt_no_operands(const struct opt_parser *p, int argc, char **argv)
{
	if (optind < argc)
		return opt_fail(p, "unexpected argument '%s'", argv[optind]);
	return 0;
}

/* Digits of @base only (at least one), no overflow of 64 bits. */
static bool parse_u64(const char *s, int base, uint64_t *out)
{
	uint64_t v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		int d;

		if (isdigit((unsigned char)*s))
			d = *s - '0';
		else if (base == 16 && isxdigit((unsigned char)*s))
			d = tolower((unsigned char)*s) - 'a' + 10;
		else
			return false;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
	}
	*out = v;
	return true;
}

static bool parse_real(const char *s, double *out)
{
	char *end;
	double v;

	/* strtod skips leading blanks and takes "nan", "inf" and hex floats' signs: only a
	 * number that starts at once and is finite counts. */
	if (!*s || isspace((unsigned char)*s))
		return false;
	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end || errno == ERANGE || !isfinite(v))
		return false;
	*out = v;
	return true;
}

int opt_count(const struct opt_parser *p, const char *opt, const char *val, uint64_t lo,
	      uint64_t hi, uint64_t *out)
{
	uint64_t v;

	if (!parse_u64(val, 10, &v) || v < lo || v > hi)
		return opt_fail(p, "%s: '%s' is not a count (%llu..%llu)", opt, val,
				(unsigned long long)lo, (unsigned long long)hi);
	*out = v;
	return 0;
}

int opt_count_int(const struct opt_parser *p, const char *opt, const char *val, int lo, int hi,
		  int *out)
{
	uint64_t v;

	if (opt_count(p, opt, val, (uint64_t)lo, (uint64_t)hi, &v))
		return -1;
	*out = (int)v;
	return 0;
}

int opt_real(const struct opt_parser *p, const char *opt, const char *val, double lo, double hi,
	     double *out)
{
	double v;

	if (!parse_real(val, &v) || v < lo || v > hi)
		return opt_fail(p, "%s: '%s' is not a number (%g..%g)", opt, val, lo, hi);
	*out = v;
	return 0;
}

int opt_seed(const struct opt_parser *p, const char *opt, const char *val, uint64_t *out)
{
	bool hex = val[0] == '0' && (val[1] == 'x' || val[1] == 'X');

	if (!parse_u64(hex ? val + 2 : val, hex ? 16 : 10, out))
		return opt_fail(p, "%s: '%s' is not a seed (0..%llu, or 0x and hex digits)", opt,
				val, (unsigned long long)UINT64_MAX);
	return 0;
}

int opt_port_range(const struct opt_parser *p, const char *opt, const char *val, int *lo,
		   int *hi)
{
	const char *dash = strchr(val, '-');
	char first[16];
	uint64_t a, b;

	if (!dash || (size_t)(dash - val) >= sizeof(first))
		goto bad;
	memcpy(first, val, (size_t)(dash - val));
	first[dash - val] = 0;
	if (!parse_u64(first, 10, &a) || !parse_u64(dash + 1, 10, &b) || a < 1024 || b > 65535 ||
	    a > b)
		goto bad;
	*lo = (int)a;
	*hi = (int)b;
	return 0;
bad:
	return opt_fail(p, "%s: '%s' is not a port range (LO-HI, 1024 <= LO <= HI <= 65535)", opt,
			val);
}

int opt_choice(const struct opt_parser *p, const char *opt, const char *val,
	       const char *const *names, int *out)
{
	char list[256];
	size_t n = 0;

	for (int i = 0; names[i]; i++) {
		if (!strcmp(val, names[i])) {
			*out = i;
			return 0;
		}
	}
	list[0] = 0;
	for (int i = 0; names[i] && n < sizeof(list); i++)
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%s", i ? "|" : "", names[i]);
	return opt_fail(p, "%s: '%s' is not one of %s", opt, val, list);
}

/* Split @val at commas into at most @max items, each handed to @item (false: not valid). */
static bool each_item(const char *val, int max, int *n,
		      bool (*item)(const char *s, int i, void *arg), void *arg)
{
	char buf[512], *save = NULL, *tok;
	size_t len = strlen(val);

	/* strtok would skip empty items ("1,,2", a leading or trailing comma): refuse them. */
	if (!len || len >= sizeof(buf) || val[0] == ',' || val[len - 1] == ',' || strstr(val, ",,"))
		return false;
	memcpy(buf, val, len + 1);
	*n = 0;
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n == max || !item(tok, *n, arg))
			return false;
		(*n)++;
	}
	return *n > 0;
}

struct count_item {
	int lo, hi, *out;
};

static bool count_item(const char *s, int i, void *arg)
{
	struct count_item *c = arg;
	uint64_t v;

	if (!parse_u64(s, 10, &v) || v < (uint64_t)c->lo || v > (uint64_t)c->hi)
		return false;
	c->out[i] = (int)v;
	return true;
}

int opt_count_list(const struct opt_parser *p, const char *opt, const char *val, int lo, int hi,
		   int *out, int max, int *n)
{
	int tmp[256], cnt;
	struct count_item c = { lo, hi, tmp };

	if (max > 256)
		max = 256;
	if (!each_item(val, max, &cnt, count_item, &c))
		return opt_fail(p, "%s: '%s' is not a list of counts (%d..%d, comma-separated, at "
				"most %d)", opt, val, lo, hi, max);
	memcpy(out, tmp, sizeof(*out) * (size_t)cnt);
	*n = cnt;
	return 0;
}

struct real_item {
	double lo, hi, *out;
};

static bool real_item(const char *s, int i, void *arg)
{
	struct real_item *r = arg;
	double v;

	if (!parse_real(s, &v) || v < r->lo || v > r->hi)
		return false;
	r->out[i] = v;
	return true;
}

int opt_real_list(const struct opt_parser *p, const char *opt, const char *val, double lo,
		  double hi, double *out, int max, int *n)
{
	double tmp[256];
	int cnt;
	struct real_item r = { lo, hi, tmp };

	if (max > 256)
		max = 256;
	if (!each_item(val, max, &cnt, real_item, &r))
		return opt_fail(p, "%s: '%s' is not a list of numbers (%g..%g, comma-separated, at "
				"most %d)", opt, val, lo, hi, max);
	memcpy(out, tmp, sizeof(*out) * (size_t)cnt);
	*n = cnt;
	return 0;
}

int opt_output_file(const struct opt_parser *p, const char *opt, const char *path)
{
	char dir[4096];
	const char *slash = strrchr(path, '/');
	struct stat st;

	if (!*path)
		return opt_fail(p, "%s: '' is not a file name", opt);
	if (!stat(path, &st)) {
		if (S_ISDIR(st.st_mode))
			return opt_fail(p, "%s: '%s': %s", opt, path, strerror(EISDIR));
		if (access(path, W_OK))
			return opt_fail(p, "%s: '%s': %s", opt, path, strerror(errno));
		return 0;
	}
	if (errno != ENOENT)
		return opt_fail(p, "%s: '%s': %s", opt, path, strerror(errno));
	/* A new file: its folder must exist and take new entries. */
	if (!slash)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		snprintf(dir, sizeof(dir), "/");
	else
		snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (stat(dir, &st))
		return opt_fail(p, "%s: '%s': %s", opt, path, strerror(errno));
	if (!S_ISDIR(st.st_mode))
		return opt_fail(p, "%s: '%s': %s", opt, path, strerror(ENOTDIR));
	if (access(dir, W_OK | X_OK))
		return opt_fail(p, "%s: '%s': %s", opt, path, strerror(errno));
	return 0;
}
