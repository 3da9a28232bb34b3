/* tests/gen.h: synthetic key streams shared by tests and benchmarks
 * (hosted: uses libm).
 *
 *   hwg_zipf z; hwg_zipf_init(&z, 1u << 20, 1.0);
 *   uint64_t rank = hwg_zipf_next(&z, &rng);   // 0 = hottest
 *   uint64_t key  = hwg_key(rank);             // spread over 64 bits
 *
 * Streams: uniform, Zipf(s) over n ranks, sequential scan, and a phased
 * stream that moves its hot set every `len` events. All draw from an
 * hwp_rng, so a seed fixes the stream.
 */
#ifndef HWPROF_TESTS_GEN_H
#define HWPROF_TESTS_GEN_H

#include <math.h>
#include <stdint.h>

#include "hwprof/base.h"

#if defined(__GNUC__) || defined(__clang__)
#define HWG__UNUSED __attribute__((unused))
#else
#define HWG__UNUSED
#endif

/* A rank mapped to a distinct 64-bit key (hwp_mix64 is a bijection). */
HWG__UNUSED static uint64_t hwg_key(uint64_t rank) {
    return hwp_mix64(rank + 0x5851F42D4C957F2Dull);
}

HWG__UNUSED static uint64_t hwg_uniform(hwp_rng *r, uint64_t n) {
    return n <= 0xFFFFFFFFull ? hwp_rng_below(r, n) : hwp_rng_next(r) % n;
}

/* Zipf over ranks 1..n with P(k) ~ k^-s, drawn in O(1) by rejection
 * inversion (Hoermann & Derflinger, "Rejection-inversion to generate
 * variates from monotone discrete distributions", 1996). Returns rank-1. */
typedef struct hwg_zipf {
    double n, s, h_x1, h_n, cut;
} hwg_zipf;

HWG__UNUSED static double hwg__zipf_h(const hwg_zipf *z, double x) { /* integral of x^-s */
    return z->s == 1.0 ? log(x) : (pow(x, 1.0 - z->s) - 1.0) / (1.0 - z->s);
}

HWG__UNUSED static double hwg__zipf_hinv(const hwg_zipf *z, double y) {
    return z->s == 1.0 ? exp(y) : pow(1.0 + y * (1.0 - z->s), 1.0 / (1.0 - z->s));
}

HWG__UNUSED static void hwg_zipf_init(hwg_zipf *z, uint64_t n, double s) {
    z->n = (double)n;
    z->s = s;
    z->h_x1 = hwg__zipf_h(z, 1.5) - 1.0;
    z->h_n = hwg__zipf_h(z, z->n + 0.5);
    z->cut = 2.0 - hwg__zipf_hinv(z, hwg__zipf_h(z, 2.5) - pow(2.0, -s));
}

HWG__UNUSED static uint64_t hwg_zipf_next(const hwg_zipf *z, hwp_rng *r) {
    for (;;) {
        double u = z->h_n + hwp_rng_unit(r) * (z->h_x1 - z->h_n);
        double x = hwg__zipf_hinv(z, u);
        double k = floor(x + 0.5);
        if (k < 1.0) k = 1.0;
        if (k > z->n) k = z->n;
        if (k - x <= z->cut || u >= hwg__zipf_h(z, k + 0.5) - pow(k, -z->s))
            return (uint64_t)k - 1u;
    }
}

/* Sequential scan over [0, n), wrapping. */
typedef struct hwg_seq {
    uint64_t i, n;
} hwg_seq;

HWG__UNUSED static uint64_t hwg_seq_next(hwg_seq *q) {
    uint64_t v = q->i;
    q->i = q->i + 1 == q->n ? 0 : q->i + 1;
    return v;
}

/* Phased: Zipf ranks whose hot set moves every `len` events: in phase p
 * rank k becomes k + p * shift (mod n). Tests of phase detection and of
 * adaptivity use it. */
typedef struct hwg_phased {
    hwg_zipf z;
    uint64_t len, shift, n, t;
} hwg_phased;

HWG__UNUSED static void hwg_phased_init(hwg_phased *p, uint64_t n, double s,
                                        uint64_t len, uint64_t shift) {
    hwg_zipf_init(&p->z, n, s);
    p->len = len;
    p->shift = shift;
    p->n = n;
    p->t = 0;
}

HWG__UNUSED static uint64_t hwg_phased_phase(const hwg_phased *p) {
    return p->t / p->len;
}

HWG__UNUSED static uint64_t hwg_phased_next(hwg_phased *p, hwp_rng *r) {
    uint64_t k = hwg_zipf_next(&p->z, r);
    uint64_t phase = p->t++ / p->len;
    return (k + phase * p->shift) % p->n;
}

#endif
