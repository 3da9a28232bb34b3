/* SPDX-License-Identifier: MIT */
/* Heavy: the compressors of section 5.4 on a synthetic load-value stream,
 * scored with the section 5.3.1 metric against the exact profile, and
 * the paper's hash against the cheap hash (section 3.5).
 *
 * The workload (a stand-in until a real host supplies traces): 2000
 * static loads drawn Zipf(1.0); 40% of loads are invariant-ish (a top
 * value with probability 0.5..0.99, the rest over 2..20 values), 30%
 * have 2..5 values with weights 1/2, 1/4, ..., 30% spread uniformly over
 * 20..60 values (none reaches 10%). Each event is drawn independently,
 * so this stream is closer to the Monte Carlo of section 3.3 than to a
 * real program (where the paper finds P_256 no better than R_256).
 *
 * Compressors: R_256, P_256, H[P_256]_2048 (paper hash and cheap hash),
 * H[P_512]_2048, tag2-256-2048x2, and H[P_256]_2048 + A_16. Errors are
 * printed at 250K, 1M and 4M events with the messages and the modelled
 * overhead cycles per event (214 per interrupt + 30 per message). */
#define HWPROF_IMPL
#include "hwprof/stratified.h"

#include "gen.h"
#include "harness.h"

enum { NLOADS = 2000, NC = 7, NCHECK = 3 };
static const uint64_t checks[NCHECK] = {250000, 1000000, 4000000};

typedef struct load {
    uint32_t type, nvals;
    double top;
} load;

static load loads[NLOADS];

static const char *const names[NC] = {
    "R_256", "P_256", "H[P_256]_2048", "H[P_256]_2048 cheap hash",
    "H[P_512]_2048", "tag2-256-2048x2", "H[P_256]_2048 + A_16"};
enum { C_R, C_P, C_HP, C_HPCHEAP, C_HP512, C_TAG, C_HPA };

typedef struct comp {
    hwp_strat s;
    hwp_strat_acc acc;
    hwp_cost cost;
    void *m1, *m2;
    double err[NCHECK];
} comp;

/* Storage kept in *raw for free(); the models align it themselves. */
static void *aligned(void **raw, size_t n) {
    *raw = malloc(n);
    return *raw;
}

static uint64_t value_of(uint32_t l, hwp_rng *g) {
    const load *L = &loads[l];
    uint32_t idx;
    if (L->type == 0) {
        idx = hwp_rng_unit(g) < L->top ? 0 : 1 + hwp_rng_below(g, L->nvals);
    } else if (L->type == 1) {
        uint64_t bits = hwp_rng_next(g) | ((uint64_t)1 << (L->nvals - 1));
        idx = 0;
        while (!(bits & 1)) {
            bits >>= 1;
            idx++;
        }
    } else {
        idx = hwp_rng_below(g, L->nvals);
    }
    return hwg_key(((uint64_t)l << 16) + idx);
}

static comp c[NC];
static hwp_strat_acc ideal;

static void test_accuracy(void) {
    hwp_rng g;
    hwg_zipf z;
    uint64_t i;
    unsigned k, cp = 0, l;
    void *mideal;
    hwp_strat_acc_desc ad;
    size_t ab;
    hwp_rng_seed(&g, 5001);
    for (l = 0; l < NLOADS; l++) {
        uint32_t u = hwp_rng_below(&g, 10);
        loads[l].type = u < 4 ? 0 : u < 7 ? 1 : 2;
        loads[l].nvals = loads[l].type == 0   ? 2 + hwp_rng_below(&g, 19)
                         : loads[l].type == 1 ? 2 + hwp_rng_below(&g, 4)
                                              : 20 + hwp_rng_below(&g, 41);
        loads[l].top = 0.5 + 0.49 * hwp_rng_unit(&g);
    }
    memset(&ad, 0, sizeof ad);
    ad.tuples = 1u << 17;
    ad.pcs = 4096;
    ab = hwp_strat_acc_bytes(&ad);
    CHECK_EQ(hwp_strat_acc_init(&ideal, aligned(&mideal, ab), ab, &ad, NULL), HWP_OK);
    for (k = 0; k < NC; k++) {
        hwp_strat_desc d;
        size_t n;
        memset(&d, 0, sizeof d);
        d.seed = 31; /* one seed: C_HP and C_HPA share their hash tables */
        if (k == C_R) d.sampler = HWP_STRAT_RANDOM;
        if (k == C_R || k == C_P) d.entries = 1;
        if (k == C_HPCHEAP) d.hash = HWP_STRAT_HASH_CHEAP;
        if (k == C_HP512) d.rate = 512;
        if (k == C_TAG) d.scheme = HWP_STRAT_TAGGED;
        if (k == C_HPA) d.l2_entries = 16;
        d.on_interrupt = hwp_strat_acc_handler;
        d.ctx = &c[k].acc;
        n = hwp_strat_bytes(&d);
        hwp_cost_init(&c[k].cost, NULL);
        CHECK_EQ(hwp_strat_acc_init(&c[k].acc, aligned(&c[k].m1, ab), ab, &ad, NULL), HWP_OK);
        CHECK_EQ(hwp_strat_init(&c[k].s, aligned(&c[k].m2, n), n, &d, &c[k].cost), HWP_OK);
    }
    hwg_zipf_init(&z, NLOADS, 1.0);
    for (i = 1; i <= checks[NCHECK - 1]; i++) {
        uint32_t ld = (uint32_t)hwg_zipf_next(&z, &g);
        uint64_t pc = 0x400000 + 4 * (uint64_t)ld, v = value_of(ld, &g);
        hwp_strat_acc_add(&ideal, 0, pc, v, 1);
        for (k = 0; k < NC; k++) hwp_strat_push(&c[k].s, 0, pc, v);
        if (i == checks[cp]) {
            for (k = 0; k < NC; k++) {
                hwp_strat_metric met;
                /* deliver what is queued (A_16 keeps its entries) */
                if (c[k].s.qn) {
                    hwp_strat_acc_fold(&c[k].acc, c[k].s.q, c[k].s.qn);
                    c[k].s.qn = 0;
                }
                CHECK_EQ(hwp_strat_invariance_error(&ideal, &c[k].acc, NULL, &met), HWP_OK);
                c[k].err[cp] = met.error_pct;
                if (k == 0 && cp == NCHECK - 1)
                    printf("    selected: %llu loads, %llu tuples, weight %llu of %llu events\n",
                           (unsigned long long)met.loads, (unsigned long long)met.tuples,
                           (unsigned long long)met.weight, (unsigned long long)i);
            }
            cp++;
        }
    }
    printf("    %-26s %8s %8s %8s %9s %10s\n", "compressor", "err@250K", "err@1M",
           "err@4M", "messages", "cyc/event");
    for (k = 0; k < NC; k++)
        printf("    %-26s %7.2f%% %7.2f%% %7.2f%% %9llu %10.3f\n", names[k], c[k].err[0],
               c[k].err[1], c[k].err[2], (unsigned long long)c[k].s.st.messages,
               (double)hwp_cost_model_cycles(&c[k].cost, HWP_MODEL_STRAT) /
                   (double)checks[NCHECK - 1]);
    /* Section 5.4 on this stream: stratification beats random sampling
     * at every checkpoint, and R needs more events than H[P] to reach
     * H[P]'s 1M error. */
    for (cp = 0; cp < NCHECK; cp++) {
        CHECK(c[C_HP].err[cp] < c[C_R].err[cp]);
        CHECK(c[C_HPCHEAP].err[cp] < c[C_R].err[cp]);
    }
    printf("    R_256 at 4M events vs H[P_256]_2048 at 1M: %.2f%% vs %.2f%%\n",
           c[C_R].err[2], c[C_HP].err[1]);
    /* the tagged compressor is the most accurate and sends more messages
     * than the stratified sampler of the same rate */
    CHECK(c[C_TAG].err[2] < c[C_HP].err[2]);
    CHECK(c[C_TAG].s.st.messages > c[C_HP].s.st.messages);
    /* half the rate, half the messages */
    CHECK(c[C_HP512].s.st.messages * 2 <= c[C_HP].s.st.messages + 2048);
    /* A_16 is lossless (same first-level samples) and cuts messages */
    CHECK_EQ(c[C_HPA].s.st.samples, c[C_HP].s.st.samples);
    CHECK(c[C_HPA].s.st.messages < c[C_HP].s.st.messages);
    printf("    A_16 second level: %.3fx fewer messages\n",
           (double)c[C_HP].s.st.messages / (double)c[C_HPA].s.st.messages);
    {   /* flushed, the two deliver the same profile: the same error */
        hwp_strat_metric m1, m2;
        hwp_strat_flush(&c[C_HP].s);
        hwp_strat_flush(&c[C_HPA].s);
        CHECK_EQ(hwp_strat_invariance_error(&ideal, &c[C_HP].acc, NULL, &m1), HWP_OK);
        CHECK_EQ(hwp_strat_invariance_error(&ideal, &c[C_HPA].acc, NULL, &m2), HWP_OK);
        CHECK_EQ(c[C_HP].acc.st.total, c[C_HPA].acc.st.total);
        CHECK_NEAR(m1.error_pct, m2.error_pct, 1e-9);
    }
    for (k = 0; k < NC; k++) {
        free(c[k].m1);
        free(c[k].m2);
    }
    free(mideal);
}

/* Section 3.5's hash against the cheap one: H[P_256]_2048 over 8 seeds
 * (hash tables and stream), 1M events each, with R_256 beside them. */
static void test_hash_compare(void) {
    enum { SEEDS = 8, EVENTS = 1000000 };
    double e[3][SEEDS], mean[3] = {0, 0, 0}, sd[2] = {0, 0};
    unsigned seed, h, wins = 0;
    hwp_strat_acc_desc ad;
    size_t ab;
    void *mi, *ma[3], *ms[3];
    hwp_strat_acc acc[3];
    hwp_strat s[3];
    memset(&ad, 0, sizeof ad);
    ad.tuples = 1u << 17;
    ad.pcs = 4096;
    ab = hwp_strat_acc_bytes(&ad);
    hwp_strat_acc_init(&ideal, aligned(&mi, ab), ab, &ad, NULL);
    for (h = 0; h < 3; h++) hwp_strat_acc_init(&acc[h], aligned(&ma[h], ab), ab, &ad, NULL);
    for (seed = 0; seed < SEEDS; seed++) {
        hwp_rng g;
        hwg_zipf z;
        uint64_t i;
        hwp_strat_acc_reset(&ideal);
        for (h = 0; h < 3; h++) {
            hwp_strat_desc d;
            size_t n;
            memset(&d, 0, sizeof d);
            d.hash = h == 1 ? HWP_STRAT_HASH_CHEAP : HWP_STRAT_HASH_PAPER;
            if (h == 2) { /* R_256 */
                d.sampler = HWP_STRAT_RANDOM;
                d.entries = 1;
            }
            d.seed = 100 + seed;
            d.on_interrupt = hwp_strat_acc_handler;
            d.ctx = &acc[h];
            n = hwp_strat_bytes(&d);
            hwp_strat_acc_reset(&acc[h]);
            CHECK_EQ(hwp_strat_init(&s[h], aligned(&ms[h], n), n, &d, NULL), HWP_OK);
        }
        hwp_rng_seed(&g, 7000 + seed);
        hwg_zipf_init(&z, NLOADS, 1.0);
        for (i = 0; i < EVENTS; i++) {
            uint32_t ld = (uint32_t)hwg_zipf_next(&z, &g);
            uint64_t pc = 0x400000 + 4 * (uint64_t)ld, v = value_of(ld, &g);
            hwp_strat_acc_add(&ideal, 0, pc, v, 1);
            hwp_strat_push(&s[0], 0, pc, v);
            hwp_strat_push(&s[1], 0, pc, v);
            hwp_strat_push(&s[2], 0, pc, v);
        }
        for (h = 0; h < 3; h++) {
            hwp_strat_metric met;
            hwp_strat_flush(&s[h]);
            CHECK_EQ(hwp_strat_invariance_error(&ideal, &acc[h], NULL, &met), HWP_OK);
            e[h][seed] = met.error_pct;
            mean[h] += met.error_pct / SEEDS;
            free(ms[h]);
        }
        wins += e[0][seed] < e[1][seed];
    }
    for (h = 0; h < 2; h++) {
        for (seed = 0; seed < SEEDS; seed++)
            sd[h] += (e[h][seed] - mean[h]) * (e[h][seed] - mean[h]) / (SEEDS - 1);
        sd[h] = sqrt(sd[h]);
    }
    printf("    H[P_256]_2048 at 1M events, %d seeds: paper hash %.2f%% (sd %.2f), "
           "cheap hash %.2f%% (sd %.2f); paper hash better in %u of %d; "
           "R_256 %.2f%%\n",
           SEEDS, mean[0], sd[0], mean[1], sd[1], wins, SEEDS, mean[2]);
    /* both hashes stratify: each beats R_256 on the same streams */
    CHECK(mean[0] < mean[2]);
    CHECK(mean[1] < mean[2]);
    for (h = 0; h < 3; h++) free(ma[h]);
    free(mi);
}

/* The accumulator's policy when its tuple table is full (desc.replace),
 * measured: the same H[P_256]_2048 messages go to an exact-size profile
 * and to two profiles of 1500 tuples, one keeping what it holds, one
 * evicting the smallest nearby entry. Halfway through the stream every
 * load's values change (a program's next phase), so a profile that
 * keeps its first tuples misses the second phase. */
static void test_replace_policy(void) {
    enum { N = 2000000, CAP = 800 };
    hwp_strat_acc ideal, acc[2];
    hwp_strat_acc_desc ad;
    hwp_strat s;
    hwp_strat_desc d;
    hwp_rng g;
    hwg_zipf z;
    void *mi, *ma[2], *ms;
    size_t n, ab;
    uint64_t i;
    unsigned k;
    hwp_strat_metric m[2];
    memset(&ad, 0, sizeof ad);
    ad.tuples = 1u << 17;
    ad.pcs = 4096;
    ab = hwp_strat_acc_bytes(&ad);
    hwp_strat_acc_init(&ideal, aligned(&mi, ab), ab, &ad, NULL);
    ad.tuples = CAP;
    for (k = 0; k < 2; k++) {
        ad.replace = k ? HWP_STRAT_ACC_KEEP : HWP_STRAT_ACC_EVICT;
        ab = hwp_strat_acc_bytes(&ad);
        hwp_strat_acc_init(&acc[k], aligned(&ma[k], ab), ab, &ad, NULL);
    }
    memset(&d, 0, sizeof d);
    d.seed = 77;
    d.on_interrupt = hwp_strat_acc_handler;
    /* the same stream twice (same seeds), once per policy */
    for (k = 0; k < 2; k++) {
        d.ctx = &acc[k];
        n = hwp_strat_bytes(&d);
        CHECK_EQ(hwp_strat_init(&s, aligned(&ms, n), n, &d, NULL), HWP_OK);
        hwp_rng_seed(&g, 99);
        hwg_zipf_init(&z, NLOADS, 1.0);
        for (i = 0; i < N; i++) {
            uint32_t ld = (uint32_t)hwg_zipf_next(&z, &g);
            uint64_t v = value_of(ld, &g) + (i < N / 2 ? 0 : 1000);
            if (k == 0) hwp_strat_acc_add(&ideal, 0, ld, v, 1);
            hwp_strat_push(&s, 0, ld, v);
        }
        hwp_strat_flush(&s);
        free(ms);
    }
    for (k = 0; k < 2; k++)
        CHECK_EQ(hwp_strat_invariance_error(&ideal, &acc[k], NULL, &m[k]), HWP_OK);
    printf("    tuple table of %d for %" PRIu64 " distinct tuples: evict %.2f%% (%" PRIu64
           " evicted, %" PRIu64 " dropped), keep %.2f%% (%" PRIu64 " dropped)\n",
           CAP, ideal.st.tuples, m[0].error_pct, acc[0].st.evicted, acc[0].st.dropped,
           m[1].error_pct, acc[1].st.dropped);
    CHECK(acc[0].st.evicted > 0);
    CHECK(acc[1].st.dropped > 0);
    CHECK(m[0].error_pct < m[1].error_pct);
    free(mi);
    free(ma[0]);
    free(ma[1]);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_accuracy);
    HWT_RUN(test_hash_compare);
    HWT_RUN(test_replace_policy);
    return hwt_end();
}
