/* SPDX-License-Identifier: MIT */
/* examples/replay/cp_compare.c: the co-processor's load value profile
 * (Zilles and Sohi, "A Programmable Co-Processor for Profiling") against
 * the paper's baseline, the buffered value sampler, on a recorded trace,
 * at equal modelled overhead, with the error taken apart:
 *
 *   hwprof-cp-compare TRACE [key=value ...]
 *
 * The trace's loads are read once (pc, value and the instructions before
 * each); the co-processor runs over them, the sampler's period is then
 * searched so that its modelled overhead equals the co-processor's
 * (hwp_cp_simple_period_for) and SEEDS samplers run at that period. Both
 * are scored with hwp_cp_wrms against the exact profile, and the squared
 * error is split three ways: pairs whose load has no estimate at all,
 * pairs whose load has estimates but not for this value, and pairs with
 * an estimate, with the share of the load executions whose load has an
 * estimate. Keys: seed, seeds (default 4), missing (print the N heaviest
 * loads without an estimate), worst (print the N loads carrying the most
 * squared error, their exact values against the estimates), skip (leave out the first N loads, and the
 * instructions around them, from the run and from the exact profile: the
 * paper simulates a region of each program's dominant phase, not its
 * start-up), and any hwp_cp_lvp_desc field
 * (slots, visit_loads, copy_min, idle_limit, conf_samples, ...). Unlike
 * the hosts, which pick the nearest of a fixed ladder of periods while
 * the program runs, this has the whole load stream, so the baseline runs
 * at the equal-overhead period itself. Each vCPU stream (guest thread)
 * gets its own co-processor and its own samplers, merged at the end, as
 * in the hosts: concatenated, one thread's per-thread values (pigz's
 * per-worker buffers) met the other's slots and phases.
 *
 * checkpoints=N (default 0, off) adds the paper's convergence comparison
 * (sec. 5.2, "Convergence rate": error against overhead cycles): at N
 * evenly spaced points of the load stream, the profile each would report
 * if the run stopped there (a copy of every instance, flushed and merged
 * as at the end: hwp_cp_clone), scored against the exact profile of the
 * whole stream, the paper's "final" profile. One row per point gives the
 * loads so far, the co-processor's overhead cycles and error, and the
 * same for one sampler (seed + 1) at the equal-overhead period P and at
 * P / 4 and 4 P (the sampler's own error against overhead). A "reach"
 * line then gives the overhead at which each curve first reaches the
 * baseline's mean error at P (interpolated between points; the samplers'
 * best of the three) and whether the co-processor reaches it at less. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwx.h"
#include "hwprof/coproc.h"

typedef struct {
    uint64_t pc, value;
    uint32_t gap;    /* its stream's instructions since its last load */
    uint32_t stream; /* index into streams[] */
} lab_load;

static lab_load *L;
static size_t nl, capl;

/* one point of a convergence curve (checkpoints=N) */
typedef struct {
    uint64_t loads, cycles;
    double err;
} lab_point;
static unsigned ncheck;

/* The trace's vCPU streams (guest threads). The hosts give each its own
 * instance and merge them at exit, so a thread's values meet only its
 * own slots; so does this. */
#define LAB_STREAMS 64
static struct {
    uint32_t vcpu;
    uint64_t gap; /* instructions since its last load */
} streams[LAB_STREAMS];
static uint32_t nstreams;

static uint32_t stream_of(uint32_t vcpu) {
    uint32_t i;
    for (i = 0; i < nstreams; i++)
        if (streams[i].vcpu == vcpu) return i;
    if (nstreams == LAB_STREAMS) {
        fprintf(stderr, "hwprof-cp-compare: more than %u vCPU streams\n", LAB_STREAMS);
        exit(2);
    }
    streams[nstreams].vcpu = vcpu;
    streams[nstreams].gap = 0;
    return nstreams++;
}

static void push(uint64_t pc, uint64_t value, uint32_t gap, uint32_t stream) {
    if (nl == capl) {
        capl = capl ? 2 * capl : 1u << 20;
        L = realloc(L, capl * sizeof *L);
        if (!L) exit(2);
    }
    L[nl].pc = pc;
    L[nl].value = value;
    L[nl].gap = gap;
    L[nl].stream = stream;
    nl++;
}

/* exact (pc, value) counts */
static hwp_cp_truth *T;
static size_t tmask, nt;
static void truth_add(uint64_t pc, uint64_t v) {
    size_t h = (size_t)hwp_mix64(pc * 31 + hwp_mix64(v)) & tmask;
    while (T[h].count && (T[h].pc != pc || T[h].value != v)) h = (h + 1) & tmask;
    if (!T[h].count) {
        T[h].pc = pc;
        T[h].value = v;
        nt++;
    }
    T[h].count++;
}

static const struct {
    const char *k;
    size_t off;
} lfields[] = {
#define F(f) {#f, offsetof(hwp_cp_lvp_desc, f)}
    F(slots), F(counter_bits), F(resel_min), F(resel_shift), F(keep_hits),
    F(failed_limit), F(done_limit), F(thrash_mult), F(conf_samples),
    F(conf_hi_pct), F(conf_lo_pct), F(min_visits), F(max_visits),
    F(idle_limit), F(max_part_log2), F(visit_loads), F(copy_min),
    F(min_samples), F(resample_insns),
#undef F
};

/* Split the weighted squared error (pairs with true invariance >= 0.1)
 * into: no estimate for the load, no estimate for the value, estimated. */
static double cover_w, cover_all;
static size_t cover_pcs;
/* characterised estimates of at least the confidence threshold (0.9)
 * whose exact invariance is below half of it: a load called invariant
 * that is not */
static size_t false_inv;
/* the loads without an estimate, heaviest first (missing=N prints N) */
typedef struct {
    uint64_t count, pc;
} lab_miss;
static lab_miss *miss;
static size_t nmiss;
static unsigned show_missing;
/* the loads carrying the most squared error (worst=N prints N): where a
 * profile goes wrong, load by load */
typedef struct {
    double err;
    uint64_t pc, count;
    size_t t0, tn; /* its pairs in the sorted truth */
} lab_worst;
static lab_worst *worst;
static size_t nworst;
static unsigned show_worst;
static int worst_cmp(const void *a, const void *b) {
    const lab_worst *x = (const lab_worst *)a, *y = (const lab_worst *)b;
    return x->err != y->err ? (x->err < y->err ? 1 : -1) : 0;
}
static int miss_cmp(const void *a, const void *b) {
    const lab_miss *x = (const lab_miss *)a, *y = (const lab_miss *)b;
    return x->count != y->count ? (x->count < y->count ? 1 : -1) : 0;
}
static void split(hwp_cp_truth *t, size_t n, hwp_cp_est *e, size_t m, double out[4]) {
    size_t i = 0, j = 0, g, k;
    out[0] = out[1] = out[2] = out[3] = 0;
    cover_w = cover_all = 0;
    cover_pcs = false_inv = 0;
    nworst = 0;
    while (i < n) {
        uint64_t total = 0;
        int have_pc = 0;
        double lerr = 0;
        size_t i0 = i;
        for (g = i; g < n && t[g].pc == t[i].pc; g++) total += t[g].count;
        while (j < m && e[j].pc < t[i].pc) j++;
        for (k = j; k < m && e[k].pc == t[i].pc; k++) have_pc = 1;
        cover_all += (double)total;
        if (have_pc) cover_w += (double)total, cover_pcs++;
        else if (miss) miss[nmiss].count = total, miss[nmiss++].pc = t[i].pc;
        for (; i < g; i++) {
            double tinv = (double)t[i].count / (double)total, est = 0, d;
            int have_v = 0;
            for (k = j; k < m && e[k].pc == t[i].pc; k++)
                if (e[k].value == t[i].value) {
                    est = e[k].inv, have_v = 1;
                    if (e[k].characterised && est >= 0.9 && tinv < 0.45) {
                        false_inv++;
                        printf("  called invariant: load 0x%llx value 0x%llx, estimate %.3f "
                               "from %llu samples, exactly %.3f of %llu executions\n",
                               (unsigned long long)t[i].pc, (unsigned long long)t[i].value,
                               est, (unsigned long long)e[k].samples, tinv,
                               (unsigned long long)total);
                    }
                }
            if (tinv < HWP_CP_MIN_INV) continue;
            d = (double)t[i].count * (est - tinv) * (est - tinv);
            out[!have_pc ? 0 : !have_v ? 1 : 2] += d;
            out[3] += (double)t[i].count;
            lerr += d;
        }
        if (worst) {
            worst[nworst].err = lerr, worst[nworst].pc = t[i0].pc;
            worst[nworst].count = total, worst[nworst].t0 = i0, worst[nworst++].tn = g - i0;
        }
    }
}

/* Print the loads carrying the most squared error: their exact top values
 * against the estimates. */
static void show_worst_loads(const hwp_cp_truth *t, const hwp_cp_est *e, size_t m, double tot) {
    size_t w, i, k;
    qsort(worst, nworst, sizeof *worst, worst_cmp);
    for (w = 0; w < nworst && w < show_worst; w++) {
        const lab_worst *l = &worst[w];
        printf("  worst: load 0x%llx, %llu executions, %.1f%% of the squared error:",
               (unsigned long long)l->pc, (unsigned long long)l->count,
               tot > 0 ? 100.0 * l->err / tot : 0.0);
        for (i = l->t0; i < l->t0 + l->tn; i++) {
            double tinv = (double)t[i].count / (double)l->count, est = -1;
            uint64_t smp = 0;
            if (tinv < HWP_CP_MIN_INV) continue;
            for (k = 0; k < m; k++)
                if (e[k].pc == t[i].pc && e[k].value == t[i].value) est = e[k].inv, smp = e[k].samples;
            printf(" [0x%llx exact %.3f est %s%.3f n=%llu]", (unsigned long long)t[i].value, tinv,
                   est < 0 ? "none " : "", est < 0 ? 0 : est, (unsigned long long)smp);
        }
        printf("\n");
    }
}

/* Executions of the heaviest k loads (heavy[k - 1]): the coverage a
 * profile of k loads would have if it held the k most executed ones. */
static uint64_t *heavy;
static size_t nheavy;
static int u64_desc(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x != y ? (x < y ? 1 : -1) : 0;
}

static int truth_cmp(const void *a, const void *b) {
    const hwp_cp_truth *x = (const hwp_cp_truth *)a, *y = (const hwp_cp_truth *)b;
    if (x->pc != y->pc) return x->pc < y->pc ? -1 : 1;
    return x->value != y->value ? (x->value < y->value ? -1 : 1) : 0;
}

static void show(const char *who, double e, const double s[4]) {
    double tot = s[0] + s[1] + s[2];
    size_t i;
    qsort(miss, nmiss, sizeof *miss, miss_cmp);
    for (i = 0; i < nmiss && i < show_missing; i++)
        printf("  no estimate: load 0x%llx, %llu executions\n", (unsigned long long)miss[i].pc,
               (unsigned long long)miss[i].count);
    nmiss = 0;
    printf("%-10s wrms %.4f  loads %zu covering %.3f of executions (the heaviest %zu: %.3f); share of squared "
           "error: no load %.2f, no value %.2f, estimated %.2f; invariant (>= 0.9, characterised) but "
           "exactly < 0.45: %zu\n",
           who, e, cover_pcs, cover_w / cover_all, cover_pcs,
           cover_pcs ? (double)heavy[(cover_pcs < nheavy ? cover_pcs : nheavy) - 1] / cover_all : 0,
           tot > 0 ? s[0] / tot : 0, tot > 0 ? s[1] / tot : 0, tot > 0 ? s[2] / tot : 0, false_inv);
}

static hwp_cp_est *est;
static size_t cap;
static void need(int ok, const char *what) {
    if (ok) return;
    fprintf(stderr, "hwprof-cp-compare: %s failed\n", what);
    exit(2);
}

/* Storage for the copies at the checkpoints, reused at every point. */
static void *room(unsigned k, size_t bytes) {
    static void *mem[2];
    static size_t n[2];
    if (n[k] < bytes) {
        free(mem[k]);
        need((mem[k] = malloc(bytes)) != NULL, "malloc");
        n[k] = bytes;
    }
    return mem[k];
}

/* The co-processors' profile if the run stopped after `loads` loads:
 * each stream's instance copied, flushed and merged into the first
 * copy, as the run's end does with the instances themselves. */
static lab_point cp_point(hwp_cp *xs, uint64_t loads) {
    hwp_cp a, b;
    hwp_cp_desc d;
    hwp_cp_stats cs;
    size_t bytes, m;
    lab_point p;
    uint32_t k;
    need(hwp_cp_get_desc(&xs[0], &d) == HWP_OK, "co-processor desc");
    bytes = hwp_cp_bytes(&d);
    /* NULL: the default cost figures, the instances' own */
    need(hwp_cp_clone(&a, room(0, bytes), bytes, &xs[0], NULL) == HWP_OK && hwp_cp_flush(&a) == HWP_OK,
         "co-processor copy");
    for (k = 1; k < nstreams; k++)
        need(hwp_cp_clone(&b, room(1, bytes), bytes, &xs[k], NULL) == HWP_OK &&
                 hwp_cp_flush(&b) == HWP_OK && hwp_cp_merge(&a, &b) == HWP_OK,
             "co-processor copy");
    hwp_cp_get_stats(&a, &cs);
    m = hwp_cp_lvp_estimates(&a, est, cap);
    p.loads = loads, p.cycles = cs.cycles, p.err = hwp_cp_wrms(T, nt, est, m, HWP_CP_MIN_INV);
    return p;
}

/* The same for the samplers. */
static lab_point simple_point(hwp_cp_simple *ys, uint64_t loads) {
    hwp_cp_simple a, b;
    hwp_cp_simple_desc d;
    hwp_cp_simple_stats ss;
    size_t bytes, m;
    lab_point p;
    uint32_t k;
    need(hwp_cp_simple_get_desc(&ys[0], &d) == HWP_OK, "sampler desc");
    bytes = hwp_cp_simple_bytes(&d);
    need(hwp_cp_simple_clone(&a, room(0, bytes), bytes, &ys[0], NULL) == HWP_OK &&
             hwp_cp_simple_flush(&a) == HWP_OK, "sampler copy");
    for (k = 1; k < nstreams; k++)
        need(hwp_cp_simple_clone(&b, room(1, bytes), bytes, &ys[k], NULL) == HWP_OK &&
                 hwp_cp_simple_flush(&b) == HWP_OK && hwp_cp_simple_merge(&a, &b) == HWP_OK,
             "sampler copy");
    hwp_cp_simple_get_stats(&a, &ss);
    m = hwp_cp_simple_estimates(&a, est, cap);
    p.loads = loads, p.cycles = ss.cycles, p.err = hwp_cp_wrms(T, nt, est, m, HWP_CP_MIN_INV);
    return p;
}

/* The checkpoints passed once load i (0-based) has run: point c of
 * ncheck follows load nl * c / ncheck, the last one the end of the run. */
static int due(size_t i, unsigned c) {
    return c < ncheck && i + 1 >= (uint64_t)nl * c / ncheck;
}

/* One sampler per stream at `period`, fed the loads in trace order and
 * merged into ys[0] at the end, as the hosts' per-thread ones; with a
 * curve, its points on the way. The sampler is per-thread hardware too. */
static void simple_run(hwp_cp_simple *ys, void **mem, uint32_t period, uint64_t seed,
                       lab_point *curve) {
    hwp_cp_simple_desc sd;
    size_t i, bytes;
    unsigned c = 1;
    uint32_t t;
    memset(&sd, 0, sizeof sd);
    sd.period = period;
    sd.seed = seed;
    sd.entries = 1u << 20;
    bytes = hwp_cp_simple_bytes(&sd);
    for (t = 0; t < nstreams; t++) {
        if (!mem[t]) need((mem[t] = malloc(bytes)) != NULL, "malloc");
        need(hwp_cp_simple_init(&ys[t], mem[t], bytes, &sd, NULL) == HWP_OK, "sampler init");
    }
    for (i = 0; i < nl; i++) {
        hwp_cp_simple_load(&ys[L[i].stream], L[i].pc, L[i].value);
        for (; curve && due(i, c); c++) curve[c - 1] = simple_point(ys, (uint64_t)nl * c / ncheck);
    }
    if (curve) curve[ncheck - 1] = simple_point(ys, nl);
    for (t = 0; t < nstreams; t++) {
        hwp_cp_simple_flush(&ys[t]);
        if (t && hwp_cp_simple_merge(&ys[0], &ys[t]) != HWP_OK) {
            fprintf(stderr, "hwprof-cp-compare: baseline merge failed\n");
            exit(2);
        }
    }
}

/* The overhead at which a curve first reaches error `level`,
 * interpolated linearly between its points; -1 if it never does. */
static double reach(const lab_point *p, double level) {
    unsigned c;
    for (c = 0; c < ncheck; c++) {
        if (p[c].err > level) continue;
        if (!c || p[c - 1].err == p[c].err) return (double)p[c].cycles;
        return (double)p[c - 1].cycles + ((double)p[c].cycles - (double)p[c - 1].cycles) *
                                             (p[c - 1].err - level) / (p[c - 1].err - p[c].err);
    }
    return -1;
}

int main(int argc, char **argv) {
    struct stat st;
    hwx_trace_reader r;
    hwp_insn in;
    hwp_cp_desc cd;
    hwp_cp_lvp_desc ld;
    hwp_cp *xs;
    void **xm;
    hwp_cp_simple *ys;
    void **ym;
    hwp_cp_stats cs;
    hwp_cost cost;
    size_t m, i;
    uint64_t seed = 1, skip = 0;
    unsigned seeds = 4, k, c = 1;
    uint32_t period;
    lab_point *curve[4]; /* co-processor; sampler at P / 4, P, 4 P */
    double sp[4], e, sum = 0, sq = 0;
    const uint8_t *buf;
    int fd, a, rc;
    if (argc < 2) {
        fprintf(stderr, "usage: hwprof-cp-compare TRACE [key=value ...]\n");
        return 2;
    }
    memset(&cd, 0, sizeof cd);
    memset(&ld, 0, sizeof ld);
    for (a = 2; a < argc; a++) {
        char *eq = strchr(argv[a], '=');
        size_t f;
        if (!eq) {
            fprintf(stderr, "hwprof-cp-compare: %s: expected key=value\n", argv[a]);
            return 2;
        }
        *eq = 0;
        if (!strcmp(argv[a], "seed")) { seed = strtoull(eq + 1, 0, 0); continue; }
        if (!strcmp(argv[a], "seeds")) { seeds = (unsigned)strtoul(eq + 1, 0, 0); continue; }
        if (!strcmp(argv[a], "worst")) { show_worst = (unsigned)strtoul(eq + 1, 0, 0); continue; }
        if (!strcmp(argv[a], "missing")) { show_missing = (unsigned)strtoul(eq + 1, 0, 0); continue; }
        if (!strcmp(argv[a], "skip")) { skip = strtoull(eq + 1, 0, 0); continue; }
        if (!strcmp(argv[a], "checkpoints")) { ncheck = (unsigned)strtoul(eq + 1, 0, 0); continue; }
        for (f = 0; f < sizeof lfields / sizeof lfields[0]; f++)
            if (!strcmp(argv[a], lfields[f].k)) break;
        if (f == sizeof lfields / sizeof lfields[0]) {
            fprintf(stderr, "hwprof-cp-compare: unknown key %s\n", argv[a]);
            return 2;
        }
        {
            char *end;
            unsigned long v = strtoul(eq + 1, &end, 0);
            if (!*(eq + 1) || *end || v > 0xFFFFFFFFul) {
                fprintf(stderr, "hwprof-cp-compare: %s=%s: not a 32-bit number\n", argv[a],
                        eq + 1);
                return 2;
            }
            *(uint32_t *)(void *)((char *)&ld + lfields[f].off) = (uint32_t)v;
        }
    }
    fd = open(argv[1], O_RDONLY);
    if (fd < 0 || fstat(fd, &st) || !st.st_size) {
        fprintf(stderr, "hwprof-cp-compare: %s: cannot read or empty\n", argv[1]);
        return 2;
    }
    buf = mmap(0, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (buf == MAP_FAILED) {
        fprintf(stderr, "hwprof-cp-compare: %s: cannot map\n", argv[1]);
        return 2;
    }
    if (hwx_trace_open(&r, buf, (size_t)st.st_size) != HWP_OK) {
        fprintf(stderr, "hwprof-cp-compare: %s: offset %zu: %s\n", argv[1], r.err_off, r.why);
        return 2;
    }
    while ((rc = hwx_trace_next(&r, &in)) == 1) {
        uint32_t sid = stream_of(r.vcpu);
        if (in.cls == HWP_CLS_LOAD && skip) {
            skip--;
            streams[sid].gap = 0;
        } else if (in.cls == HWP_CLS_LOAD) {
            push(in.pc, in.value, (uint32_t)streams[sid].gap, sid);
            streams[sid].gap = 0;
        } else {
            streams[sid].gap++;
        }
    }
    if (!nl) {
        fprintf(stderr, "hwprof-cp-compare: %s: no loads%s\n", argv[1], skip ? " after skip" : "");
        return 1;
    }
    if (rc < 0) {
        fprintf(stderr, "hwprof-cp-compare: offset %zu: %s\n", r.err_off, r.why);
        return 2;
    }
    for (tmask = 1; tmask < 2 * nl; tmask <<= 1) {}
    tmask--;
    T = calloc(tmask + 1, sizeof *T);
    if (!T) return 2;
    for (i = 0; i < nl; i++) truth_add(L[i].pc, L[i].value);
    for (i = 0, m = 0; i <= tmask; i++)
        if (T[i].count) T[m++] = T[i];
    miss = malloc(nt * sizeof *miss);
    worst = malloc(nt * sizeof *worst);
    heavy = malloc(nt * sizeof *heavy);
    if (!miss || !heavy || !worst) return 2;
    /* per-load executions, heaviest first, then running sums */
    qsort(T, nt, sizeof *T, truth_cmp); /* by (pc, value), as hwp_cp_wrms does */
    for (i = 0; i < nt; i++) {
        if (!i || T[i].pc != T[i - 1].pc) heavy[nheavy++] = 0;
        heavy[nheavy - 1] += T[i].count;
    }
    qsort(heavy, nheavy, sizeof *heavy, u64_desc);
    for (i = 1; i < nheavy; i++) heavy[i] += heavy[i - 1];
    printf("%zu loads, %zu load PCs, %zu (pc, value) pairs, %u streams\n", nl, nheavy, nt,
           nstreams);

    cd.seed = seed;
    cd.lvp_loads = 1u << 16;
    hwp_cost_init(&cost, NULL);
    /* more than the co-processor's 2^16 load records of 8 values and the
     * sampler's 2^20-entry table can give */
    cap = 1u << 20;
    est = malloc(cap * sizeof *est);
    xs = calloc(nstreams, sizeof *xs);
    xm = calloc(nstreams, sizeof *xm);
    ys = calloc(nstreams, sizeof *ys);
    ym = calloc(nstreams, sizeof *ym);
    for (k = 0; k < 4; k++) curve[k] = ncheck ? calloc(ncheck, sizeof *curve[k]) : NULL;
    if (!est || !xs || !xm || !ys || !ym || (ncheck && !curve[3])) return 2;
    /* one instance per stream, fed its loads in trace order, merged into
     * the first at the end: what the hosts do with their per-thread ones */
    for (k = 0; k < nstreams; k++) {
        xm[k] = malloc(hwp_cp_bytes(&cd));
        if (!xm[k]) return 2;
        if (hwp_cp_init(&xs[k], xm[k], hwp_cp_bytes(&cd), &cd, &cost) != HWP_OK ||
            hwp_cp_lvp_start(&xs[k], &ld) != HWP_OK) {
            fprintf(stderr, "hwprof-cp-compare: %s\n", hwp_why(&xs[k]));
            return 2;
        }
    }
    for (i = 0; i < nl; i++) {
        hwp_cp *x = &xs[L[i].stream];
        hwp_cp_tick(x, L[i].gap);
        hwp_cp_load(x, L[i].pc, 0, L[i].value);
        for (; due(i, c); c++) curve[0][c - 1] = cp_point(xs, (uint64_t)nl * c / ncheck);
    }
    for (k = 0; k < nstreams; k++) hwp_cp_tick(&xs[k], streams[k].gap);
    /* the last point is the end of the run, copied: the same figures as
     * the instances' own flush below (the tests check it) */
    if (ncheck) curve[0][ncheck - 1] = cp_point(xs, nl);
    for (k = 0; k < nstreams; k++) {
        hwp_cp_flush(&xs[k]);
        if (k && hwp_cp_merge(&xs[0], &xs[k]) != HWP_OK) {
            fprintf(stderr, "hwprof-cp-compare: merge: %s\n", hwp_why(&xs[0]));
            return 2;
        }
    }
    hwp_cp_get_stats(&xs[0], &cs);
    m = hwp_cp_lvp_estimates(&xs[0], est, cap);
    e = hwp_cp_wrms(T, nt, est, m, HWP_CP_MIN_INV);
    split(T, nt, est, m, sp);
    {
        size_t loads_est = 0;
        for (i = 0; i < m; i++) loads_est += !i || est[i].pc != est[i - 1].pc;
        printf("co-processor: %llu cycles (%.3f%% of %llu insns), %llu interrupts, "
               "%llu idle events, %llu slots copied, %zu loads estimated, %llu visits, "
               "%llu buffer drops, %llu low-information slots\n",
               (unsigned long long)cs.cycles, 100.0 * (double)cs.cycles / (double)cs.events,
               (unsigned long long)cs.events, (unsigned long long)cs.interrupts,
               (unsigned long long)cs.idle_events, (unsigned long long)cs.irq_samples,
               loads_est, (unsigned long long)cs.visits,
               (unsigned long long)cs.buffer_dropped, (unsigned long long)cs.lowinfo_slots);
    }
    show("coproc", e, sp);
    show_worst_loads(T, est, m, sp[0] + sp[1] + sp[2]);
    period = hwp_cp_simple_period_for(nl, cs.cycles, NULL, NULL);
    for (k = 0; k < seeds; k++) {
        hwp_cp_simple_stats ss;
        simple_run(ys, ym, period, seed + 1 + k, k ? NULL : curve[2]);
        hwp_cp_simple_get_stats(&ys[0], &ss);
        m = hwp_cp_simple_estimates(&ys[0], est, cap);
        e = hwp_cp_wrms(T, nt, est, m, HWP_CP_MIN_INV);
        split(T, nt, est, m, sp);
        sum += e;
        sq += e * e;
        if (k == 0) {
            printf("baseline: period %u, %llu cycles (ratio %.3f), %llu samples\n", period,
                   (unsigned long long)ss.cycles, (double)ss.cycles / (double)cs.cycles,
                   (unsigned long long)ss.samples);
        }
        show("baseline", e, sp);
    }
    if (seeds > 1)
        printf("baseline mean %.4f sd %.4f\n", sum / seeds,
               hwp_sqrt((sq - sum * sum / seeds) / (seeds - 1)));
    if (ncheck) {
        uint32_t lo = period / 4 < 2 ? 2 : period / 4, hi = period > 0x3FFFFFFFu ? 0xFFFFFFFFu : 4 * period;
        double level = sum / seeds, rc, rs = -1;
        simple_run(ys, ym, lo, seed + 1, curve[1]);
        simple_run(ys, ym, hi, seed + 1, curve[3]);
        printf("checkpoint: loads, then overhead cycles and wrms of the co-processor and of the "
               "sampler (seed %llu) at periods %u, %u, %u\n", (unsigned long long)seed + 1, lo,
               period, hi);
        for (c = 0; c < ncheck; c++) {
            printf("checkpoint %llu", (unsigned long long)curve[0][c].loads);
            for (k = 0; k < 4; k++)
                printf(" %llu %.4f", (unsigned long long)curve[k][c].cycles, curve[k][c].err);
            printf("\n");
        }
        /* the sampler's best: whichever period gets there at less */
        for (k = 1; k < 4; k++) {
            double r = reach(curve[k], level);
            if (r >= 0 && (rs < 0 || r < rs)) rs = r;
        }
        rc = reach(curve[0], level);
        printf("reach %.4f (the baseline mean): co-processor at %.0f cycles, sampler at %.0f "
               "cycles (-1: never); co-processor first: %s\n", level, rc, rs,
               rc >= 0 && (rs < 0 || rc < rs) ? "yes" : "no");
    }
    /* everything handed back, so the sanitizers' leak check stays meaningful */
    for (k = 0; k < nstreams; k++) {
        free(xm[k]);
        free(ym[k]);
    }
    for (k = 0; k < 4; k++) free(curve[k]);
    free(est);
    free(xs);
    free(xm);
    free(ys);
    free(ym);
    munmap((void *)buf, (size_t)st.st_size);
    close(fd);
    return 0;
}
