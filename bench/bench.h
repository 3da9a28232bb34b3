/* bench/bench.h: hwprof's benchmark harness (hosted; benches only).
 *
 *   static uint64_t run_rap(void *ctx, uint64_t iters) { ... return sum; }
 *   int main(int argc, char **argv) {
 *       hwb_begin(argc, argv);
 *       hwb_run("rap/zipf", run_rap, &ctx, EVENTS_PER_ITER);
 *       return hwb_end();
 *   }
 *
 * Timing mode (default): each benchmark scales its iteration count until
 * one run takes budget/reps seconds, then times `reps` runs and reports
 * the median and the best ns per event. The value each run returns is
 * folded into a volatile sink so the compiler cannot delete the work.
 *
 * Callgrind mode (`--callgrind N`): each benchmark runs once with N
 * iterations, with callgrind's collection switched on only around that
 * run, and prints the event count; bench/callgrind.sh divides callgrind's
 * instruction total by it. Instruction counts are deterministic, so they
 * are the figures to compare on a noisy machine.
 *
 * Options: --budget SECONDS (0.5), --reps N (7), --only SUBSTRING,
 *          --name EXACT (repeatable), --callgrind ITERS, --list, --help. A benchmark
 *          with options of its own takes them out of argv before
 *          hwb_begin and names them in --help through hwb_usage_add.
 * bench/harness (hwprof-bench) is the harness for any stream into any
 * model; these per-model binaries keep the fixed cases quoted in docs.
 */
#ifndef HWPROF_BENCH_H
#define HWPROF_BENCH_H

#define _POSIX_C_SOURCE 199309L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Callgrind counts only the measured run: collection is toggled around
 * it and the counts are dumped, named after the benchmark, after it
 * (several benchmarks in one process: one dump each). Under
 * --instr-atstart=no (bench/callgrind.sh) the setup before the first
 * (stream generation, warm-up) also runs without instrumentation, a
 * fifth faster. Starting instrumentation changes no count. */
#ifdef HWB_HAVE_CALLGRIND
#include <valgrind/callgrind.h>
#define HWB__CG_ON()                  \
    do {                              \
        CALLGRIND_START_INSTRUMENTATION; \
        CALLGRIND_TOGGLE_COLLECT;        \
    } while (0)
#define HWB__CG_OFF(name)          \
    do {                           \
        CALLGRIND_TOGGLE_COLLECT;     \
        CALLGRIND_DUMP_STATS_AT(name); \
    } while (0)
#else
#define HWB__CG_ON() ((void)0)
#define HWB__CG_OFF(name) ((void)(name))
#endif

typedef uint64_t (*hwb_fn)(void *ctx, uint64_t iters);

static struct {
    double budget;
    int reps;
    const char *only, *names[64];
    int nnames;
    uint64_t callgrind_iters;
    int list;
    const char *usage_extra;
    volatile uint64_t sink;
} hwb__s;

/* Lines --help adds after the common options (the benchmark's own). */
#define hwb_usage_add(text) ((void)(hwb__s.usage_extra = (text)))

static void hwb__usage(FILE *f, const char *argv0) {
    fprintf(f,
            "usage: %s [--budget S] [--reps N] [--only SUBSTR] [--name EXACT]\n"
            "       [--callgrind ITERS] [--list] [--help]%s\n"
            "  --budget S         seconds per benchmark, over all its runs (0.5)\n"
            "  --reps N           timed runs per benchmark (7); median and best printed\n"
            "  --only SUBSTR      only the benchmarks whose name contains SUBSTR\n"
            "  --name EXACT       only the benchmark of that name (repeatable)\n"
            "  --callgrind ITERS  one run of ITERS iterations with callgrind collecting\n"
            "                     (bench/callgrind.sh)\n"
            "  --list             the benchmarks' names\n"
            "%s",
            argv0, hwb__s.usage_extra ? " [own options]" : "",
            hwb__s.usage_extra ? hwb__s.usage_extra : "");
}

static double hwb_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static void hwb_begin(int argc, char **argv) {
    int i;
    hwb__s.budget = 0.5;
    hwb__s.reps = 7;
    for (i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--budget") && i + 1 < argc)
            hwb__s.budget = atof(argv[++i]);
        else if (!strcmp(argv[i], "--reps") && i + 1 < argc)
            hwb__s.reps = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--only") && i + 1 < argc)
            hwb__s.only = argv[++i];
        else if (!strcmp(argv[i], "--name") && i + 1 < argc)
            hwb__s.names[hwb__s.nnames < 64 ? hwb__s.nnames++ : 63] = argv[++i];
        else if (!strcmp(argv[i], "--callgrind") && i + 1 < argc)
            hwb__s.callgrind_iters = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "--list"))
            hwb__s.list = 1;
        else if (!strcmp(argv[i], "--help")) {
            hwb__usage(stdout, argv[0]);
            exit(0);
        } else {
            fprintf(stderr, "%s: unknown option \"%s\"\n", argv[0], argv[i]);
            hwb__usage(stderr, argv[0]);
            exit(2);
        }
    }
    if (hwb__s.reps < 1) hwb__s.reps = 1;
    if (hwb__s.budget <= 0) hwb__s.budget = 0.5;
}

static int hwb__cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* 1 when benchmark `name` is to be run; 0 when --only or --name leaves
 * it out, or with --list (which prints the name). A benchmark whose setup
 * is costly (a warm-up pass) asks first, so that a filtered run, e.g.
 * each of bench/callgrind.sh's runs under callgrind, pays only for its
 * own. */
static int hwb_want(const char *name) {
    if (hwb__s.only && !strstr(name, hwb__s.only)) return 0;
    if (hwb__s.nnames) {
        int k = 0;
        while (k < hwb__s.nnames && strcmp(name, hwb__s.names[k])) k++;
        if (k == hwb__s.nnames) return 0;
    }
    if (hwb__s.list) {
        printf("%s\n", name);
        return 0;
    }
    return 1;
}

/* Runs one benchmark; returns its median ns per event (0 if skipped). */
static double hwb_run(const char *name, hwb_fn fn, void *ctx,
                      uint64_t events_per_iter) {
    double ns[64], per_rep, t0, t;
    uint64_t iters = 1;
    int r, reps = hwb__s.reps > 64 ? 64 : hwb__s.reps;

    if (!hwb_want(name)) return 0;
    if (hwb__s.callgrind_iters) {
        HWB__CG_ON();
        hwb__s.sink += fn(ctx, hwb__s.callgrind_iters);
        HWB__CG_OFF(name);
        printf("%-40s events %llu\n", name,
               (unsigned long long)(hwb__s.callgrind_iters * events_per_iter));
        return 0;
    }
    /* Scale: double the iterations until one run fills its share. */
    per_rep = hwb__s.budget / reps;
    for (;;) {
        t0 = hwb_now();
        hwb__s.sink += fn(ctx, iters);
        t = hwb_now() - t0;
        if (t >= per_rep || iters >= (1ull << 40)) break;
        iters = t < per_rep / 16 ? iters * 8 : iters * 2;
    }
    for (r = 0; r < reps; r++) {
        t0 = hwb_now();
        hwb__s.sink += fn(ctx, iters);
        ns[r] = (hwb_now() - t0) * 1e9 / (double)(iters * events_per_iter);
    }
    qsort(ns, (size_t)reps, sizeof ns[0], hwb__cmp);
    printf("%-40s %9.3f ns/event median  %9.3f best  (%d runs x %llu events)\n",
           name, ns[reps / 2], ns[0], reps,
           (unsigned long long)(iters * events_per_iter));
    fflush(stdout);
    return ns[reps / 2];
}

static int hwb_end(void) {
    /* The sink is printed only to keep it alive; its value means nothing. */
    if (hwb__s.sink == 42) printf("sink\n");
    return 0;
}

#endif
