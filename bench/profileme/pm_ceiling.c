/* bench/profileme/pm_ceiling.c: what ProfileMe's latency scores can reach
 * on a recorded program, from the exact per-execution figures.
 *
 *   pm_ceiling TRACE [S] [SEEDS] [W]      (defaults 10000, 20, 80)
 *
 * The trace (docs/trace-format.md) goes through core.h with full timing,
 * the host's default core (the hosts' core=on): every finished record
 * gives one execution's fetch -> retire-ready latency l, its issue cycle
 * and its wasted issue slots. Per PC the tool keeps the exact N, sum l,
 * sum l^2 and wasted slots, and runs SEEDS ideal samplers over the
 * finished records: the hardware's selection (a countdown reloaded
 * uniformly with mean S, as profileme.h's default; paired: a second
 * selection 1..W records after the first, Dean et al. 4.2, 5.2.1) with
 * the record's own figures, so no host, tag, stage report or table
 * stands between the core's latencies and the estimate. What they score
 * is what sampling can give on this program; a host that scores worse
 * on the same trace has a defect, one that scores the same has none.
 *
 * Per sampling (single, paired) it prints, averaged over the seeds with
 * the range: the fraction of PCs with E[k] = N/S' >= 10 (S' the
 * interval a sample stands for: S, or S / 2 paired) whose count and
 * total-latency estimates lie inside Fig. 3's 1 +/- 1/sqrt(E[k]); the
 * same for latency inside 1 +/- cv, cv the estimate's own coefficient of
 * variation from the exact sum l^2 (sqrt(S' sum l^2) / sum l); sum est /
 * sum exact of total latency; the top-20 overlap by total latency (PCs
 * under 10 samples ranked after the others, as hwp_pm_table_rank does);
 * paired: the wasted-slot estimate (5.2.3) against the exact count as
 * the estimator defines it (core.h's plus I's own issue). Then the
 * program's side: how far each PC's latencies spread (the envelope's
 * expected fraction under a normal approximation) and the samples the
 * exact top-20 PCs expect. */
#define HWPROF_IMPL
#include "hwprof/core.h"
#include "hwx.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CAP (1u << 18) /* distinct PCs */
#define TOP 20u
#define MAX_SEEDS 64u
#define MIN_EK 10.0

typedef struct pcx { /* exact, per PC */
    uint64_t pc, n, lat, wasted;
    double lat2;
} pcx;

typedef struct est { /* one sampler's per-PC sums */
    uint32_t k, u;      /* samples; useful partners (paired) */
    uint64_t lat, lpair; /* sum l over samples; over pair samples */
} est;

typedef struct sampler {
    uint64_t rng, left; /* countdown to the next (first) selection */
    uint32_t pend;      /* records still to the pair's second, 0: none */
    uint32_t first;     /* ring index of the pair's first */
    est *e;
} sampler;

static pcx *X;
static uint32_t npc;

static uint64_t rnd(uint64_t *s) { /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static uint32_t slot(uint64_t pc) {
    uint32_t i = (uint32_t)(hwp_mix64(pc) >> 40) & (CAP - 1u);
    for (;; i = (i + 1u) & (CAP - 1u)) {
        if (X[i].pc == pc && X[i].n) return i;
        if (!X[i].n) {
            if (++npc > CAP - CAP / 8u) {
                fprintf(stderr, "pm_ceiling: more than %u PCs\n", CAP - CAP / 8u);
                exit(1);
            }
            X[i].pc = pc;
            return i;
        }
    }
}

/* the last W + 1 finished records, for the pairs */
typedef struct rec {
    uint32_t pc; /* index into X */
    uint32_t pad_;
    uint64_t fetch, issue, ready;
} rec;

static rec *ring;
static uint32_t rmask;

/* The sampler's default: uniform on [lo, 2S - lo], mean S, lo = 1, or
 * W + 1 when paired so that no selection falls inside an open pair
 * (profileme.h's HWP_PM_DIST_UNIFORM). */
static uint64_t interval(sampler *s, uint64_t S, uint64_t lo) {
    if (2u * lo > S) lo = 1u;
    return lo + rnd(&s->rng) % (2u * S - 2u * lo + 1u);
}

/* Did b issue while a was in progress (5.2.3's U_I; every record retires) */
static uint32_t useful(const rec *a, const rec *b) {
    return b->issue >= a->fetch && b->issue < a->ready;
}

static void feed(sampler *sm, unsigned ns, uint64_t S, uint32_t W, bool paired,
                 uint64_t idx) {
    const rec *r = &ring[idx & rmask];
    unsigned i;
    for (i = 0; i < ns; i++) {
        sampler *s = &sm[i];
        if (s->pend && --s->pend == 0) {
            const rec *a = &ring[s->first];
            est *ea = &s->e[a->pc], *eb = &s->e[r->pc];
            eb->k++;
            eb->lat += r->ready - r->fetch;
            ea->lpair += a->ready - a->fetch;
            eb->lpair += r->ready - r->fetch;
            ea->u += useful(a, r);
            eb->u += useful(r, a);
        }
        if (--s->left) continue;
        s->left = interval(s, S, paired ? W + 1u : 1u);
        if (s->pend) continue; /* a pair still open: lost, as the hardware's */
        s->e[r->pc].k++;
        s->e[r->pc].lat += r->ready - r->fetch;
        if (paired) {
            s->first = (uint32_t)(idx & rmask);
            s->pend = 1u + (uint32_t)(rnd(&s->rng) % W);
        }
    }
}

typedef struct score {
    double cnt_in, lat_in, cv_in, ratio, top, werr, wratio;
} score;

static int by_lat_desc(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The indices of the TOP largest values of v[] (size CAP) into out. */
static uint32_t topn(const double *v, uint32_t *out) {
    double key[TOP];
    uint32_t have = 0, i, j;
    for (i = 0; i < CAP; i++) {
        if (!X[i].n || v[i] <= 0.0) continue;
        if (have == TOP && v[i] <= key[TOP - 1]) continue;
        j = have < TOP ? have++ : TOP - 1;
        for (; j > 0 && key[j - 1] < v[i]; j--) {
            key[j] = key[j - 1];
            out[j] = out[j - 1];
        }
        key[j] = v[i];
        out[j] = i;
    }
    return have;
}

static score score_one(const est *e, double S, double Sw, uint32_t W,
                       bool paired, const uint32_t *xtop, uint32_t nx,
                       double *rank) {
    score sc;
    double n = 0, ci = 0, li = 0, vi = 0, es = 0, xs = 0, we = 0, ws = 0, wx = 0;
    uint32_t i, a, b, etop[TOP], ne;
    memset(&sc, 0, sizeof sc);
    for (i = 0; i < CAP; i++) {
        double ek, env, lest, cv;
        if (!X[i].n) continue;
        lest = (double)e[i].lat * Sw;
        /* hwp_pm_table_rank: PCs under 10 samples after the others */
        rank[i] = lest + (e[i].k >= 10u ? 1e18 : 0.0);
        ek = (double)X[i].n / Sw; /* a pair is two samples per S */
        if (ek < MIN_EK || !X[i].lat) continue;
        env = 1.0 / sqrt(ek);
        cv = sqrt(Sw * X[i].lat2) / (double)X[i].lat;
        n++;
        ci += fabs((double)e[i].k * Sw / (double)X[i].n - 1.0) <= env;
        li += fabs(lest / (double)X[i].lat - 1.0) <= env;
        vi += fabs(lest / (double)X[i].lat - 1.0) <= cv;
        es += lest;
        xs += (double)X[i].lat;
        if (paired) {
            double w = (double)e[i].lpair * 4.0 * S / 2.0 - (double)e[i].u * W * S;
            double t = (double)X[i].wasted + (double)X[i].n;
            we += fabs(w - t);
            ws += w;
            wx += t;
        }
    }
    ne = topn(rank, etop);
    for (a = 0; a < nx; a++)
        for (b = 0; b < ne; b++) sc.top += etop[b] == xtop[a];
    sc.top /= nx ? nx : 1;
    sc.cnt_in = ci / n;
    sc.lat_in = li / n;
    sc.cv_in = vi / n;
    sc.ratio = es / xs;
    sc.werr = wx > 0 ? we / wx : 0;
    sc.wratio = wx > 0 ? ws / wx : 0;
    return sc;
}

/* The whole trace in memory (the reader wants one buffer). */
static void *read_all(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    long n;
    char *p;
    if (!f || fseek(f, 0, SEEK_END) != 0 || (n = ftell(f)) < 0) { perror(path); exit(1); }
    rewind(f);
    *len = (size_t)n;
    p = malloc(*len ? *len : 1u);
    if (!p || fread(p, 1, *len, f) != *len) { perror(path); exit(1); }
    fclose(f);
    return p;
}

#define RANGE(f)                                                               \
    do {                                                                       \
        double lo = 1e300, hi = -1e300, m = 0;                                 \
        for (j = 0; j < ns; j++) {                                             \
            m += sc[j].f;                                                      \
            if (sc[j].f < lo) lo = sc[j].f;                                    \
            if (sc[j].f > hi) hi = sc[j].f;                                    \
        }                                                                      \
        printf(" %s %.3f (%.3f..%.3f)", #f, m / ns, lo, hi);                   \
    } while (0)

int main(int argc, char **argv) {
    uint64_t S = argc > 2 ? strtoull(argv[2], NULL, 10) : 10000u;
    unsigned ns = argc > 3 ? (unsigned)strtoul(argv[3], NULL, 10) : 20u;
    uint32_t W = argc > 4 ? (uint32_t)strtoul(argv[4], NULL, 10) : 80u;
    static sampler sm[2][MAX_SEEDS];
    hwx_trace_reader rd;
    hwp_core_desc d;
    hwp_core core;
    hwp_core_rec done[512];
    hwp_insn in;
    size_t len, k, got;
    uint64_t idx = 0, pcs = 0, tight = 0;
    double *rank, expect = 0, excess[3] = {0, 0, 0};
    uint32_t xtop[TOP], nx, i, j, p;
    void *buf, *mem;
    int rc;
    if (argc < 2 || S < 2 || ns < 1 || ns > MAX_SEEDS || W < 1 || W > 4096) {
        fprintf(stderr, "usage: pm_ceiling TRACE [S >= 2] [SEEDS 1..%u] [W 1..4096]\n",
                MAX_SEEDS);
        return 2;
    }
    memset(&d, 0, sizeof d);
    mem = malloc(hwp_core_bytes(&d));
    X = calloc(CAP, sizeof *X);
    rank = calloc(CAP, sizeof *rank);
    for (rmask = 1; rmask <= W; rmask <<= 1) {}
    ring = calloc(rmask, sizeof *ring);
    rmask--;
    if (!mem || !X || !rank || !ring ||
        hwp_core_init(&core, mem, hwp_core_bytes(&d), &d, NULL) != HWP_OK) {
        fprintf(stderr, "pm_ceiling: no memory or bad core\n");
        return 1;
    }
    for (p = 0; p < 2; p++)
        for (j = 0; j < ns; j++) {
            sm[p][j].rng = 0x5EED0000u + 977u * j + p;
            sm[p][j].left = interval(&sm[p][j], S, p ? W + 1u : 1u);
            sm[p][j].e = calloc(CAP, sizeof(est));
            if (!sm[p][j].e) { fprintf(stderr, "pm_ceiling: no memory\n"); return 1; }
        }
    buf = read_all(argv[1], &len);
    if (hwx_trace_open(&rd, buf, len) != HWP_OK) {
        fprintf(stderr, "pm_ceiling: %s: offset %zu: %s\n", argv[1], rd.err_off, rd.why);
        return 1;
    }
    for (;;) {
        rc = hwx_trace_next(&rd, &in);
        if (rc == 1) hwp_core_insn(&core, &in, NULL);
        else hwp_core_flush(&core);
        while ((got = hwp_core_done(&core, done, 512)) != 0) {
            got = got < 512 ? got : 512;
            for (k = 0; k < got; k++) {
                const hwp_core_rec *c = &done[k];
                uint32_t s = slot(c->pc);
                uint64_t l = c->ready - c->fetch;
                rec *r = &ring[idx & rmask];
                X[s].n++;
                X[s].lat += l;
                X[s].lat2 += (double)l * (double)l;
                X[s].wasted += c->wasted;
                r->pc = s;
                r->fetch = c->fetch;
                r->issue = c->issue;
                r->ready = c->ready;
                feed(sm[0], ns, S, W, false, idx);
                feed(sm[1], ns, S, W, true, idx);
                idx++;
            }
        }
        if (rc != 1) break;
    }
    if (rc < 0) {
        fprintf(stderr, "pm_ceiling: %s: offset %zu: %s\n", argv[1], rd.err_off, rd.why);
        return 1;
    }
    printf("%s: %llu timed instructions, %u PCs; S = %llu, W = %u, %u seeds\n",
           argv[1], (unsigned long long)idx, npc, (unsigned long long)S, W, ns);
    {
        double *lat = calloc(CAP, sizeof *lat);
        for (i = 0; i < CAP; i++) lat[i] = X[i].n ? (double)X[i].lat : 0.0;
        nx = topn(lat, xtop);
        free(lat);
    }
    for (p = 0; p < 2; p++) {
        score sc[MAX_SEEDS];
        for (j = 0; j < ns; j++)
            sc[j] = score_one(sm[p][j].e, (double)S, p ? S / 2.0 : (double)S, W,
                              p != 0, xtop, nx, rank);
        printf("ideal %s:", p ? "paired" : "single");
        RANGE(cnt_in);
        RANGE(lat_in);
        RANGE(cv_in);
        RANGE(ratio);
        RANGE(top);
        if (p) {
            RANGE(werr);
            RANGE(wratio);
        }
        printf("\n");
    }
    /* The program's side: each scored PC's estimate has cv
     * sqrt(S sum l^2) / sum l = (1/sqrt(E[k])) sqrt(E[l^2]) / E[l]; the
     * factor sqrt(E[l^2]) / E[l] >= 1 is how far its latencies spread. A
     * normal estimate lands inside 1 +/- 1/sqrt(E[k]) with probability
     * erf(1 / (factor sqrt 2)). */
    for (i = 0; i < CAP; i++) {
        double ek, f, m;
        if (!X[i].n || !X[i].lat) continue;
        ek = (double)X[i].n / (double)S;
        if (ek < MIN_EK) continue;
        m = (double)X[i].lat / (double)X[i].n;
        f = sqrt(X[i].lat2 / (double)X[i].n) / m;
        pcs++;
        expect += erf(1.0 / (f * sqrt(2.0)));
        excess[0] += f > 1.5;
        excess[1] += f > 2.0;
        excess[2] += f;
        tight += f < 1.1;
    }
    printf("scored PCs (E[k] >= 10): %llu; latency spread sqrt(E[l^2])/E[l]: mean %.2f, "
           "< 1.1 in %.3f, > 1.5 in %.3f, > 2 in %.3f; expected fraction inside "
           "1 +/- 1/sqrt(E[k]) (normal) %.3f\n",
           (unsigned long long)pcs, excess[2] / (double)pcs,
           (double)tight / (double)pcs, excess[0] / (double)pcs,
           excess[1] / (double)pcs, expect / (double)pcs);
    {
        double ek[TOP];
        unsigned few = 0;
        for (i = 0; i < nx; i++) {
            ek[i] = (double)X[xtop[i]].n / (double)S;
            few += ek[i] < 10.0;
        }
        qsort(ek, nx, sizeof *ek, by_lat_desc);
        printf("exact top-%u by total latency: expected samples (single) max %.1f, "
               "median %.1f, min %.1f; under 10: %u\n",
               nx, ek[0], ek[nx / 2], ek[nx - 1], few);
    }
    return 0;
}
