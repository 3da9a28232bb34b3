/* SPDX-License-Identifier: MIT */
/* tests/coproc/lvp_stream.h: synthetic load-value streams with planted
 * invariance, and their exact profile (hosted; tests and benches only).
 *
 * Each static load has a kind that fixes how its values are drawn:
 *   LVS_DOMINANT  one value 95% of the time, four others share the rest
 *   LVS_SEVERAL   three values at 50% / 30% / 20%
 *   LVS_PHASED    three values, each held for runs of `run` instances
 *                 (the "phase-like value changes" of sec. 4.3)
 *   LVS_VARIANT   sixteen values, uniform
 *   LVS_INVARIANT a single value
 * Loads are chosen by Zipf(s) over ranks (rank 0 hottest), values by the
 * load's distribution; exact (pc, value) counts are kept beside, so the
 * truth never comes from the model under test.
 */
#ifndef HWPROF_TESTS_LVP_STREAM_H
#define HWPROF_TESTS_LVP_STREAM_H

#include <string.h>

#include "gen.h"
#include "hwprof/coproc.h"

enum { LVS_DOMINANT, LVS_SEVERAL, LVS_PHASED, LVS_VARIANT, LVS_INVARIANT,
       LVS_KINDS };
#define LVS_MAXV 16

typedef struct lvs_load {
    uint64_t pc;
    uint32_t kind, nv, cur;
    uint64_t run_left;
    uint64_t vals[LVS_MAXV];
    double cdf[LVS_MAXV];
    uint64_t count[LVS_MAXV];
} lvs_load;

typedef struct lvs {
    lvs_load *loads;
    uint32_t n;
    uint64_t run;
    hwg_zipf z;
    hwp_rng rng;
} lvs;

static void lvs__dist(lvs_load *l, const double *p, uint32_t nv) {
    double c = 0;
    uint32_t k;
    l->nv = nv;
    for (k = 0; k < nv; k++) {
        c += p[k];
        l->cdf[k] = c;
        l->vals[k] = hwg_key(l->pc * 64u + k) & 0xFFFFFFFFull;
    }
    l->cdf[nv - 1] = 1.0;
}

/* kinds: NULL mixes the five kinds round-robin; else one kind for all. */
HWG__UNUSED static void lvs_init(lvs *s, lvs_load *arr, uint32_t n, double zipf_s,
                                 const uint32_t *kind, uint64_t run,
                                 uint64_t seed) {
    static const double dom[] = {0.95, 0.0125, 0.0125, 0.0125, 0.0125};
    static const double sev[] = {0.5, 0.3, 0.2};
    static const double one[] = {1.0};
    double uni[LVS_MAXV];
    uint32_t i, k;
    for (k = 0; k < LVS_MAXV; k++) uni[k] = 1.0 / LVS_MAXV;
    memset(arr, 0, sizeof *arr * n);
    s->loads = arr;
    s->n = n;
    s->run = run;
    hwg_zipf_init(&s->z, n, zipf_s);
    hwp_rng_seed(&s->rng, seed);
    for (i = 0; i < n; i++) {
        lvs_load *l = &arr[i];
        l->pc = 0x400000u + 4u * (uint64_t)i * 7u;
        l->kind = kind ? *kind : i % LVS_KINDS;
        switch (l->kind) {
        case LVS_DOMINANT: lvs__dist(l, dom, 5); break;
        case LVS_SEVERAL: lvs__dist(l, sev, 3); break;
        case LVS_PHASED: lvs__dist(l, sev, 3); break;
        case LVS_VARIANT: lvs__dist(l, uni, LVS_MAXV); break;
        default: lvs__dist(l, one, 1); break;
        }
        l->run_left = run;
    }
}

/* Next load: returns its index, sets pc and value. */
HWG__UNUSED static uint32_t lvs_next(lvs *s, uint64_t *pc, uint64_t *value) {
    uint32_t i = (uint32_t)hwg_zipf_next(&s->z, &s->rng), k = 0;
    lvs_load *l = &s->loads[i];
    if (l->kind == LVS_PHASED) {
        if (l->run_left-- == 0) {
            l->cur = (l->cur + 1) % l->nv;
            l->run_left = s->run - 1;
        }
        k = l->cur;
    } else {
        double u = hwp_rng_unit(&s->rng);
        while (u >= l->cdf[k]) k++;
    }
    l->count[k]++;
    *pc = l->pc;
    *value = l->vals[k];
    return i;
}

/* The exact profile: every (pc, value) seen, with its count. */
HWG__UNUSED static size_t lvs_truth(const lvs *s, hwp_cp_truth *out) {
    size_t n = 0;
    uint32_t i, k;
    for (i = 0; i < s->n; i++)
        for (k = 0; k < s->loads[i].nv; k++)
            if (s->loads[i].count[k]) {
                out[n].pc = s->loads[i].pc;
                out[n].value = s->loads[i].vals[k];
                out[n].count = s->loads[i].count[k];
                n++;
            }
    return n;
}

#endif
