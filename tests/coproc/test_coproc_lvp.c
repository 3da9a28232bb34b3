/* SPDX-License-Identifier: MIT */
/* Heavy statistical reproduction of the comparison in Zilles and Sohi, "A
 * Programmable Co-Processor for Profiling", HPCA-7 2001, sec. 5.2-5.3:
 * load-value profiling by the co-processor algorithm against the buffered
 * value sampler configured for the same modelled overhead (within 2%), on
 * synthetic load streams with planted invariance. The metric is the
 * paper's: root mean square error of the invariance estimates weighted by
 * value frequency, over (load, value) pairs that account for >= 10% of
 * their load's instances, against the exact profile counted beside the
 * model.
 *
 * Asserted for every scenario and seed: equal overhead; the
 * co-processor's error is below the sampler's (except the flat
 * 2000-load stream, where it loses, as docs/coproc.md says); its error
 * does not grow as the run goes on (checked at 1/64 of the run and at the
 * end). Prints the figures docs/coproc.md quotes. */
#define _POSIX_C_SOURCE 200112L
#define HWPROF_IMPL
#include "hwprof/coproc.h"

#include "harness.h"
#include "coproc/lvp_stream.h"

#define MAXL 2000u

typedef struct scenario {
    const char *name;
    uint32_t loads, slots; /* 0: hwp_cp_lvp_desc's default */
    int kind; /* -1: the five kinds mixed */
    double zipf;
    uint64_t run, n;
    double max_err; /* bound on the co-processor's final error */
} scenario;

typedef struct result {
    double cp_err, cp_early, simple_err, overhead_pct;
    uint64_t cp_irq, simple_irq, cp_ovh, simple_ovh, dropped, tagged;
} result;

static lvs_load L[MAXL];
static hwp_cp_truth truth[MAXL * LVS_MAXV], truth2[MAXL * LVS_MAXV];
static hwp_cp_est est[MAXL * 64];

static double error_now(const lvs *s, const hwp_cp *x) {
    size_t nt = lvs_truth(s, truth);
    size_t ne = hwp_cp_lvp_estimates(x, est, MAXL * 64);
    return hwp_cp_wrms(truth, nt, est, ne < MAXL * 64 ? ne : MAXL * 64, 0.1);
}

static void run(const scenario *sc, uint64_t seed, result *r) {
    hwp_cp x;
    hwp_cp_simple sm;
    hwp_cp_desc d;
    hwp_cp_lvp_desc ld;
    hwp_cp_simple_desc sd;
    hwp_cost c1, c2;
    lvs s;
    uint32_t kind = (uint32_t)sc->kind;
    uint64_t i, pc, v;
    void *mem, *mem2;
    size_t b, nt, ne;
    const uint32_t gap = 4; /* one load in five instructions */

    memset(&d, 0, sizeof d);
    d.seed = seed;
    memset(&ld, 0, sizeof ld);
    ld.slots = sc->slots;
    hwp_cost_init(&c1, NULL);
    hwp_cost_init(&c2, NULL);
    b = hwp_cp_bytes(&d);
    if (posix_memalign(&mem, 16, b)) abort();
    if (hwp_cp_init(&x, mem, b, &d, &c1) || hwp_cp_lvp_start(&x, &ld)) abort();
    lvs_init(&s, L, sc->loads, sc->zipf, sc->kind < 0 ? NULL : &kind, sc->run,
             seed);
    for (i = 0; i < sc->n; i++) {
        lvs_next(&s, &pc, &v);
        hwp_cp_tick(&x, gap);
        hwp_cost_tick(&c1, gap + 1);
        hwp_cp_load(&x, pc, pc * 8, v);
        if (i == sc->n / 64) r->cp_early = error_now(&s, &x);
    }
    hwp_cp_flush(&x);
    r->cp_err = error_now(&s, &x);
    r->cp_irq = x.interrupts;
    r->cp_ovh = c1.total;
    r->overhead_pct = hwp_cost_overhead_pct(&c1);
    r->dropped = x.dropped;
    r->tagged = x.tagged;

    /* the same stream again for the simple sampler, at equal overhead */
    memset(&sd, 0, sizeof sd);
    sd.entries = 1u << 16;
    sd.period = hwp_cp_simple_period_for(sc->n, c1.total, &sd, &c1);
    sd.seed = seed + 1;
    b = hwp_cp_simple_bytes(&sd);
    if (posix_memalign(&mem2, 16, b)) abort();
    if (hwp_cp_simple_init(&sm, mem2, b, &sd, &c2)) abort();
    lvs_init(&s, L, sc->loads, sc->zipf, sc->kind < 0 ? NULL : &kind, sc->run,
             seed);
    for (i = 0; i < sc->n; i++) {
        lvs_next(&s, &pc, &v);
        hwp_cp_simple_load(&sm, pc, v);
    }
    hwp_cp_simple_flush(&sm);
    nt = lvs_truth(&s, truth2);
    ne = hwp_cp_simple_estimates(&sm, est, MAXL * 64);
    r->simple_err = hwp_cp_wrms(truth2, nt, est, ne, 0.1);
    r->simple_irq = sm.interrupts;
    r->simple_ovh = c2.total;
    free(mem);
    free(mem2);
}

static const scenario scenarios[] = {
    {"dominant", 60, 0, LVS_DOMINANT, 1.0, 100, 2000000, 0.05},
    {"several", 60, 0, LVS_SEVERAL, 1.0, 100, 2000000, 0.15},
    {"phased", 60, 0, LVS_PHASED, 1.0, 100, 2000000, 0.20},
    {"mixed", 100, 0, -1, 1.0, 100, 2000000, 0.15},
    {"more_loads_than_slots", 500, 64, -1, 1.0, 100, 4000000, 0.25},
    {"many_flat_loads", 2000, 64, -1, 0.5, 100, 4000000, 0.6}, /* loses */
};

static const scenario *current;

static void test_scenario(void) {
    uint64_t seed;
    for (seed = 1; seed <= 3; seed++) {
        result r;
        memset(&r, 0, sizeof r);
        run(current, seed, &r);
        printf("  %-22s seed %llu: coproc wrms %.4f (at 1/64: %.4f) irq %llu "
               "overhead %llu cyc (%.4f%%) drop %.1f%% | simple wrms %.4f "
               "irq %llu overhead %llu cyc\n",
               current->name, (unsigned long long)seed, r.cp_err, r.cp_early,
               (unsigned long long)r.cp_irq, (unsigned long long)r.cp_ovh,
               r.overhead_pct, 100.0 * (double)r.dropped / (double)r.tagged,
               r.simple_err, (unsigned long long)r.simple_irq,
               (unsigned long long)r.simple_ovh);
        CHECK(r.cp_err >= 0 && r.simple_err >= 0);
        /* the buffered baseline at equal overhead: the co-processor wins
         * except with far more flat loads than slots (docs/coproc.md) */
        if (current->max_err < 0.5) CHECK(r.cp_err < r.simple_err);
        /* equal overhead: within 2% plus one buffer's interrupt */
        CHECK(r.simple_ovh <= r.cp_ovh + r.cp_ovh / 50 + 214 &&
              r.simple_ovh + r.cp_ovh / 50 + 214 >= r.cp_ovh);
        /* converged: no worse at the end than after 1/64 of the run (a
         * completed profile stops changing while the truth drifts a
         * little, hence the half-point slack) */
        CHECK(r.cp_err <= r.cp_early + 0.005);
        CHECK(r.cp_err < current->max_err);
    }
}

int main(int argc, char **argv) {
    size_t k;
    hwt_begin(argc, argv);
    for (k = 0; k < sizeof scenarios / sizeof scenarios[0]; k++) {
        current = &scenarios[k];
        hwt__run(current->name, test_scenario);
    }
    return hwt_end();
}
