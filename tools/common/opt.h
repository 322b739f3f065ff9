/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Command-line options of socktab's programs (the CLI's subcommands and the torture test): one
 * getopt_long() loop that reports mistakes the same way everywhere, and checked parsers for the
 * values options take.
 *
 * Every mistake is reported as one line on stderr that names the command, the option and the
 * value, e.g. "socktab bench crr: -N: '-1' is not a count (1..1000000000)", and the caller exits
 * with status 2. A value is accepted only if all of it parses and it lies in the stated range:
 * empty strings, trailing characters ("1x"), signs on counts, nan, inf and overflow are refused,
 * never truncated or wrapped.
 *
 * Functions returning int return 0 on success and -1 after printing the message; they store into
 * *out only on success.
 */
#ifndef SOCKTAB_OPT_H
#define SOCKTAB_OPT_H

#include <getopt.h>
#include <stdint.h>

/* One command's options, as getopt_long() takes them. */
struct opt_parser {
	const char *cmd;                /* prefix of every message, e.g. "socktab bench crr" */
	const char *shortopts;          /* getopt's short options, without a leading ':' or '+' */
	const struct option *longopts;  /* terminated by a zeroed entry */
};

/* opt_next()'s answer for a mistake it has already reported. */
#define OPT_BAD (-2)

/*
 * The next option of argv, as getopt_long() returns it (the option's value is in optarg), or -1
 * after the last one; operands are moved after the options, so argv[optind..argc-1] are the
 * operands once it returns -1. An unknown option, or one missing its value, is reported and
 * answered with OPT_BAD. The first call for an argv must follow opt_start().
 */
int opt_next(const struct opt_parser *p, int argc, char **argv);

/* Reset getopt's state: the next opt_next() starts at argv[1]. */
void opt_start(void);

/* After the options: 0 when no operand is left, else "CMD: unexpected argument 'X'" and -1. */
int opt_no_operands(const struct opt_parser *p, int argc, char **argv);

/* Report a mistake not tied to one value: "CMD: message". Returns -1. */
int opt_fail(const struct opt_parser *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* A decimal count in lo..hi. */
int opt_count(const struct opt_parser *p, const char *opt, const char *val, uint64_t lo,
	      uint64_t hi, uint64_t *out);
/* The same, into an int (lo and hi must be >= 0). */
int opt_count_int(const struct opt_parser *p, const char *opt, const char *val, int lo, int hi,
		  int *out);
/* A finite decimal number in lo..hi. */
int opt_real(const struct opt_parser *p, const char *opt, const char *val, double lo, double hi,
	     double *out);
/* A 64-bit seed: decimal, or hexadecimal with 0x. */
int opt_seed(const struct opt_parser *p, const char *opt, const char *val, uint64_t *out);
/* An ephemeral port range LO-HI with 1024 <= LO <= HI <= 65535 (what socktab_net_new takes). */
int opt_port_range(const struct opt_parser *p, const char *opt, const char *val, int *lo,
		   int *hi);
/* One of @names (NULL-terminated): *out is its index. */
int opt_choice(const struct opt_parser *p, const char *opt, const char *val,
	       const char *const *names, int *out);
/* A comma-separated list of 1..@max counts in lo..hi; *n is how many. */
int opt_count_list(const struct opt_parser *p, const char *opt, const char *val, int lo, int hi,
		   int *out, int max, int *n);
/* A comma-separated list of 1..@max numbers in lo..hi; *n is how many. */
int opt_real_list(const struct opt_parser *p, const char *opt, const char *val, double lo,
		  double hi, double *out, int max, int *n);
/*
 * An output file the command writes at the end (--plot): check now, before any work, that it can
 * be created or overwritten, so a long run does not end in "cannot write".
 */
int opt_output_file(const struct opt_parser *p, const char *opt, const char *path);

#endif
