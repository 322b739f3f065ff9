/* SPDX-License-Identifier: BSD-2-Clause */
/* Helpers shared by the `socktab bench` subcommands (common.h). */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>
#include <sys/wait.h>

#include "common.h"

const struct bench_variant bench_variants[3] = {
	{ "socktab", SOCKTAB_VARIANT_SOCKTAB },
	{ "linux", SOCKTAB_VARIANT_LINUX },
	{ "linux-6.1", SOCKTAB_VARIANT_LINUX_6_1 },
};

int bench_variant_find(const char *name)
{
	for (int i = 0; i < 3; i++)
		if (!strcmp(name, bench_variants[i].name))
			return i;
	return -1;
}

uint64_t bench_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- histogram ---- */

void bench_histo_init(struct bench_histo *h)
{
	memset(h, 0, sizeof(*h));
	h->min = UINT64_MAX;
}

/* Bucket of @v: the position of its top bit, then the next 5 bits (32 sub-buckets). */
static unsigned bucket_of(uint64_t v)
{
	if (v < BENCH_HISTO_SUB)
		return (unsigned)v;
	unsigned top = 63u - (unsigned)__builtin_clzll(v); /* >= 5 */

	return (top - 4) * BENCH_HISTO_SUB + (unsigned)((v >> (top - 5)) & (BENCH_HISTO_SUB - 1));
}

/* Lowest value of bucket @b, and its width. */
static void bucket_range(unsigned b, double *lo, double *width)
{
	if (b < BENCH_HISTO_SUB) {
		*lo = b;
		*width = 1;
		return;
	}
	unsigned top = b / BENCH_HISTO_SUB + 4, sub = b % BENCH_HISTO_SUB;

	*width = ldexp(1.0, (int)top - 5);
	*lo = ldexp(1.0, (int)top) + sub * *width;
}

void bench_histo_add(struct bench_histo *h, uint64_t ns)
{
	h->count++;
	if (ns < h->min)
		h->min = ns;
	if (ns > h->max)
		h->max = ns;
	h->sum += (double)ns;
	h->sum2 += (double)ns * (double)ns;
	h->bucket[bucket_of(ns)]++;
}

void bench_histo_merge(struct bench_histo *dst, const struct bench_histo *src)
{
	dst->count += src->count;
	if (src->min < dst->min)
		dst->min = src->min;
	if (src->max > dst->max)
		dst->max = src->max;
	dst->sum += src->sum;
	dst->sum2 += src->sum2;
	for (size_t i = 0; i < sizeof(dst->bucket) / sizeof(dst->bucket[0]); i++)
		dst->bucket[i] += src->bucket[i];
}

double bench_histo_percentile(const struct bench_histo *h, double p)
{
	uint64_t want, seen = 0;

	if (!h->count)
		return 0;
	want = (uint64_t)ceil(p / 100.0 * (double)h->count);
	if (want < 1)
		want = 1;
	for (unsigned b = 0; b < sizeof(h->bucket) / sizeof(h->bucket[0]); b++) {
		seen += h->bucket[b];
		if (seen >= want) {
			double lo, w, mid;

			bucket_range(b, &lo, &w);
			mid = lo + w / 2;
			if (mid < (double)h->min)
				mid = (double)h->min;
			if (mid > (double)h->max)
				mid = (double)h->max;
			return mid;
		}
	}
	return (double)h->max;
}

double bench_histo_mean(const struct bench_histo *h)
{
	return h->count ? h->sum / (double)h->count : 0;
}

double bench_histo_stddev(const struct bench_histo *h)
{
	if (h->count < 2)
		return 0;
	double n = (double)h->count, var = (h->sum2 - h->sum * h->sum / n) / n;

	return var > 0 ? sqrt(var) : 0;
}

/* ---- key=value / JSON output ---- */

void bench_out_begin(struct bench_out *o)
{
	if (o->json)
		printf("%s{", o->records ? ",\n" : "[\n");
	else if (o->records)
		printf("\n");
	o->records++;
	o->fields = 0;
}

void bench_out_end(struct bench_out *o)
{
	if (o->json)
		printf("}");
	fflush(stdout);
}

void bench_out_finish(struct bench_out *o)
{
	if (o->json)
		printf(o->records ? "\n]\n" : "[]\n");
	fflush(stdout);
}

static void key(struct bench_out *o, const char *k)
{
	if (o->json)
		printf("%s\"%s\": ", o->fields ? ", " : "", k);
	else
		printf("%s=", k);
	o->fields++;
}

void bench_out_str(struct bench_out *o, const char *k, const char *val)
{
	key(o, k);
	printf(o->json ? "\"%s\"" : "%s\n", val);
}

void bench_out_u64(struct bench_out *o, const char *k, uint64_t val)
{
	key(o, k);
	printf(o->json ? "%llu" : "%llu\n", (unsigned long long)val);
}

void bench_out_dbl(struct bench_out *o, const char *k, const char *fmt, double val)
{
	key(o, k);
	if (!isfinite(val)) {
		printf(o->json ? "null" : "nan\n");
		return;
	}
	printf(fmt, val);
	if (!o->json)
		printf("\n");
}

/* ---- progress ---- */

void bench_progress_init(struct bench_progress *p, uint64_t min_ns)
{
	p->start = p->last = bench_now_ns();
	p->min_ns = min_ns;
}

void bench_progress(struct bench_progress *p, const char *fmt, ...)
{
	uint64_t now = bench_now_ns();
	va_list ap;

	if (now - p->start < p->min_ns || now - p->last < 1000000000ull)
		return;
	p->last = now;
	fprintf(stderr, "socktab bench: [%.0f s] ", (double)(now - p->start) / 1e9);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* ---- gnuplot ---- */

int bench_plot_png(const struct bench_plot *pl, const char *png)
{
	char dir[] = "/tmp/socktab-plot-XXXXXX", path[256], script[256];
	FILE *f;
	int rc;

	if (!mkdtemp(dir)) {
		fprintf(stderr, "plot: mkdtemp: %s\n", strerror(errno));
		return -1;
	}
	snprintf(path, sizeof(path), "%s/data", dir);
	snprintf(script, sizeof(script), "%s/plot.gp", dir);
	f = fopen(path, "w");
	if (!f)
		return -1;
	for (int s = 0; s < pl->nseries; s++) {
		for (int i = 0; i < pl->npoints[s]; i++)
			fprintf(f, "%.9g %.9g\n", pl->x[s][i], pl->y[s][i]);
		fprintf(f, "\n\n"); /* next gnuplot index */
	}
	fclose(f);
	f = fopen(script, "w");
	if (!f)
		return -1;
	fprintf(f,
		"set terminal pngcairo noenhanced size 800,500 font ',10'\n"
		"set output '%s'\n"
		"set title '%s'\nset xlabel '%s'\nset ylabel '%s'\n"
		"set grid\nset key top left\n%s%s"
		"plot ",
		png, pl->title, pl->xlabel, pl->ylabel, pl->logy ? "set logscale y\n" : "",
		pl->logx ? "set logscale x\n" : "");
	for (int s = 0; s < pl->nseries; s++)
		fprintf(f, "%s'%s' index %d with linespoints lw 2 title '%s'",
			s ? ", " : "", path, s, pl->name[s]);
	fprintf(f, "\n");
	fclose(f);
	pid_t pid = fork();

	if (pid == 0) {
		execlp("gnuplot", "gnuplot", script, (char *)NULL);
		_exit(127);
	}
	rc = -1;
	if (pid > 0 && waitpid(pid, &rc, 0) == pid && WIFEXITED(rc))
		rc = WEXITSTATUS(rc);
	unlink(path);
	unlink(script);
	rmdir(dir);
	if (rc == 127) {
		fprintf(stderr, "plot: gnuplot not found (Debian: apt-get install gnuplot-nox; "
				"scripts/deps.sh installs it as root)\n");
		return -1;
	}
	if (rc) {
		fprintf(stderr, "plot: gnuplot failed (%d)\n", rc);
		return -1;
	}
	fprintf(stderr, "plot: wrote %s\n", png);
	return 0;
}

/* ---- process figures ---- */

void bench_cpu_times(double *utime, double *stime)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	*utime = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6;
	*stime = (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

void bench_cpu_model(char *buf, size_t len)
{
	char line[256];
	FILE *f = fopen("/proc/cpuinfo", "r");

	snprintf(buf, len, "unknown");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (strncmp(line, "model name", 10) || !c)
			continue;
		c += 1 + (c[1] == ' ');
		c[strcspn(c, "\n")] = 0;
		snprintf(buf, len, "%s", c);
		break;
	}
	fclose(f);
}

uint64_t bench_rss_bytes(void)
{
	FILE *f = fopen("/proc/self/statm", "r");
	unsigned long size, rss;
	int ok;

	if (!f)
		return 0;
	ok = fscanf(f, "%lu %lu", &size, &rss) == 2;
	fclose(f);
	return ok ? (uint64_t)rss * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

uint64_t bench_mem_available_bytes(void)
{
	FILE *f = fopen("/proc/meminfo", "r");
	char line[128];
	unsigned long long kb = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "MemAvailable: %llu kB", &kb) == 1)
			break;
	fclose(f);
	return (uint64_t)kb * 1024;
}

/* ---- a line between two cores ---- */

#define PINGPONG_ROUNDS 20000
#define PINGPONG_MAX_NS 200000000ull /* a run that takes longer gives up (one CPU, or a stall) */

static _Alignas(64) _Atomic uint64_t pingpong_line;
static _Alignas(64) atomic_bool pingpong_stop;

/* Wait until the line holds @v; false when told to stop, or (@deadline not 0) once the clock
 * passes @deadline, which is read every 4096 spins: the prober gives up on a peer that stalls. */
static bool pingpong_wait(uint64_t v, uint64_t deadline)
{
	for (unsigned int spins = 0;
	     atomic_load_explicit(&pingpong_line, memory_order_acquire) != v; spins++) {
		if (atomic_load_explicit(&pingpong_stop, memory_order_relaxed))
			return false;
		if (deadline && spins % 4096 == 4095 && bench_now_ns() > deadline)
			return false;
	}
	return true;
}

/* The other side: answer each odd value with the next even one. */
static void *pingpong_peer(void *arg)
{
	(void)arg;
	for (uint64_t v = 1; v < 2 * PINGPONG_ROUNDS && pingpong_wait(v, 0); v += 2)
		atomic_store_explicit(&pingpong_line, v + 1, memory_order_release);
	return NULL;
}

int bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double bench_line_transfer_ns(void)
{
	cpu_set_t allowed, one;
	pthread_attr_t a;
	double ns[3];
	int cpu[2], n = 0;

	/* The two threads on the first two CPUs the process may use, the calling thread for the
	 * probe only: left to the scheduler, both could start on one CPU and measure switches. */
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		return 0;
	for (int c = 0; c < CPU_SETSIZE && n < 2; c++)
		if (CPU_ISSET(c, &allowed))
			cpu[n++] = c;
	if (n < 2 || pthread_attr_init(&a))
		return 0;
	CPU_ZERO(&one);
	CPU_SET(cpu[1], &one);
	pthread_attr_setaffinity_np(&a, sizeof(one), &one);
	CPU_ZERO(&one);
	CPU_SET(cpu[0], &one);
	if (sched_setaffinity(0, sizeof(one), &one)) {
		pthread_attr_destroy(&a);
		return 0;
	}
	for (int r = 0; r < 3; r++) {
		pthread_t t;
		uint64_t t0, t1, v;

		atomic_store(&pingpong_line, 0);
		atomic_store(&pingpong_stop, false);
		if (pthread_create(&t, &a, pingpong_peer, NULL)) {
			ns[1] = 0;
			break;
		}
		t0 = bench_now_ns();
		for (v = 0; v < 2 * PINGPONG_ROUNDS; v += 2) {
			if (!pingpong_wait(v, t0 + PINGPONG_MAX_NS))
				break;
			atomic_store_explicit(&pingpong_line, v + 1, memory_order_release);
			if (v % 1024 == 0 && bench_now_ns() - t0 > PINGPONG_MAX_NS)
				break;
		}
		t1 = bench_now_ns();
		atomic_store(&pingpong_stop, true);
		pthread_join(t, NULL);
		if (v < 2 * PINGPONG_ROUNDS) {
			ns[1] = 0;
			break;
		}
		ns[r] = (double)(t1 - t0) / (2.0 * PINGPONG_ROUNDS);
		if (r == 2)
			qsort(ns, 3, sizeof(ns[0]), bench_cmp_double);
	}
	pthread_attr_destroy(&a);
	sched_setaffinity(0, sizeof(allowed), &allowed);
	return ns[1];
}
