/* SPDX-License-Identifier: BSD-2-Clause */
/*
 * Helpers shared by the `socktab bench` subcommands: the connect() variants and their switches,
 * a clock, a log-bucket latency histogram (neper's latency_* keys), key=value / JSON output,
 * rate-limited progress on stderr and gnuplot plots.
 */
#ifndef SOCKTAB_BENCH_COMMON_H
#define SOCKTAB_BENCH_COMMON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "socktab/socktab.h"

/* A connect() variant as the CLI names it (--variant). */
struct bench_variant {
	const char *name;
	enum socktab_variant v;
};

extern const struct bench_variant bench_variants[3];

/* Index into bench_variants of @name, or -1. */
int bench_variant_find(const char *name);

uint64_t bench_now_ns(void);
/* qsort() comparator of doubles, ascending. */
int bench_cmp_double(const void *a, const void *b);

/*
 * Latency histogram: exact count, min, max, sum and sum of squares, and 64 x 32 log buckets for
 * percentiles (about 3 % wide). Values in nanoseconds. Not thread-safe: one per thread, merged.
 */
#define BENCH_HISTO_SUB 32
struct bench_histo {
	uint64_t count, min, max;
	double sum, sum2;
	uint64_t bucket[64 * BENCH_HISTO_SUB];
};

void bench_histo_init(struct bench_histo *h);
void bench_histo_add(struct bench_histo *h, uint64_t ns);
void bench_histo_merge(struct bench_histo *dst, const struct bench_histo *src);
/* The @p-th percentile (0..100) in nanoseconds: the middle of its bucket. */
double bench_histo_percentile(const struct bench_histo *h, double p);
double bench_histo_mean(const struct bench_histo *h);
double bench_histo_stddev(const struct bench_histo *h);

/*
 * Output of one benchmark: neper-style "key=value" lines, or one JSON object per record with
 * --json. bench_out_begin() opens a record (JSON: "{"), bench_out_end() closes it; in key=value
 * mode a record is separated from the previous one by a blank line.
 */
struct bench_out {
	bool json;
	int records; /* records begun so far */
	int fields;  /* fields in the open record */
};

void bench_out_begin(struct bench_out *o);
void bench_out_end(struct bench_out *o);
void bench_out_str(struct bench_out *o, const char *key, const char *val);
void bench_out_u64(struct bench_out *o, const char *key, uint64_t val);
/* @fmt is a printf format for one double, e.g. "%.9f". */
void bench_out_dbl(struct bench_out *o, const char *key, const char *fmt, double val);
/* Call once after the last record (closes the JSON array). */
void bench_out_finish(struct bench_out *o);

/*
 * Progress on stderr, at most one line per second, only once @min_ns have passed since
 * bench_progress_init (short runs print nothing). Never on stdout.
 */
struct bench_progress {
	uint64_t start, last, min_ns;
};

void bench_progress_init(struct bench_progress *p, uint64_t min_ns);
/* Prints "socktab bench: @what" when a line is due. */
void bench_progress(struct bench_progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * A line plot through gnuplot (Debian gnuplot-nox): one line per series, @x against @y, written
 * to @png. @logy: logarithmic y axis. Series s has @npoints[s] points at x[s][i], y[s][i].
 * Returns 0, or -1 with a message on stderr (gnuplot missing, or it failed).
 */
#define BENCH_PLOT_MAX_SERIES 8
#define BENCH_PLOT_MAX_POINTS 64
struct bench_plot {
	const char *title, *xlabel, *ylabel;
	bool logy, logx;
	int nseries;
	const char *name[BENCH_PLOT_MAX_SERIES];
	int npoints[BENCH_PLOT_MAX_SERIES];
	double x[BENCH_PLOT_MAX_SERIES][BENCH_PLOT_MAX_POINTS];
	double y[BENCH_PLOT_MAX_SERIES][BENCH_PLOT_MAX_POINTS];
};

int bench_plot_png(const struct bench_plot *pl, const char *png);

/* The process's user and system CPU time in seconds (neper's utime/stime). */
void bench_cpu_times(double *utime, double *stime);

/* The CPU model as /proc/cpuinfo's first "model name" line names it, into @buf ("unknown"
 * without one). */
void bench_cpu_model(char *buf, size_t len);
/*
 * What one cache line takes to go from one thread's core to another's and back, halved: two
 * threads hand a counter back and forth 20,000 times; the median of three such runs, in ns.
 * On a virtual machine it tells where the host has put the vCPUs at the moment (here about
 * 45-60 ns on cores that share a last-level cache, 170-240 ns on cores that do not), which
 * decides what every line that threads share costs. 0 on one CPU, or when a thread cannot be
 * made or a run stalls past 200 ms.
 */
double bench_line_transfer_ns(void);

/* Resident set size of the process in bytes (from /proc/self/statm), or 0. */
uint64_t bench_rss_bytes(void);

/* MemAvailable of /proc/meminfo in bytes (what the kernel can give without swapping), or 0. */
uint64_t bench_mem_available_bytes(void);

/* splitmix64: the benchmarks' seeded generator. */
static inline uint64_t bench_rand(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

#endif
