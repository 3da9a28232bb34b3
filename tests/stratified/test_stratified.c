/* SPDX-License-Identifier: MIT */
/* Unit and property tests for hwprof/stratified.h. Expected
 * values come from the paper's rules worked by hand, or from the exact
 * reference count in ref.h, never from the model itself. */
#define HWPROF_IMPL
#include "hwprof/stratified.h"

#include "gen.h"
#include "harness.h"
#include "ref.h"

/* 16-byte aligned heap storage, freed with st_free. */
typedef struct st_mem {
    void *raw, *p;
} st_mem;

static void *st_alloc(st_mem *m, size_t n) {
    m->raw = malloc(n + 16);
    m->p = (void *)(((uintptr_t)m->raw + 15) & ~(uintptr_t)15);
    return m->p;
}

static void st_free(st_mem *m) { free(m->raw); }

typedef struct st_inst {
    hwp_strat s;
    st_mem mem;
    rec r;
} st_inst;

/* Build an instance from `d` recording every message into x->r. */
static int st_make(st_inst *x, hwp_strat_desc d, hwp_cost *cost) {
    size_t n;
    memset(&x->r, 0, sizeof x->r);
    d.on_interrupt = rec_handler;
    d.ctx = &x->r;
    n = hwp_strat_bytes(&d);
    if (!CHECK(n > 0)) return 0;
    st_alloc(&x->mem, n);
    return CHECK_EQ(hwp_strat_init(&x->s, x->mem.p, n, &d, cost), HWP_OK);
}

static void st_drop(st_inst *x) {
    st_free(&x->mem);
    free(x->r.m);
}

/* Messages delivered plus messages still queued. */
static uint64_t st_reported(const st_inst *x) {
    uint64_t sum = x->r.sum;
    uint32_t i;
    for (i = 0; i < x->s.qn; i++) sum += x->s.q[i].count;
    return sum;
}

static void test_defaults(void) {
    hwp_strat_desc z;
    st_inst x;
    char buf[1024];
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, buf, sizeof buf);
    memset(&z, 0, sizeof z);
    CHECK_EQ(hwp_strat_bytes(NULL), hwp_strat_bytes(&z));
    if (!st_make(&x, z, NULL)) return;
    CHECK_EQ(x.s.d.rate, 256);
    CHECK_EQ(x.s.d.entries, 2048);
    CHECK_EQ(x.s.d.queue, 100);
    CHECK_EQ(x.s.d.scheme, HWP_STRAT_SAMPLED);
    CHECK_EQ(x.s.d.sampler, HWP_STRAT_PERIODIC);
    CHECK(x.s.bh != NULL); /* the paper's hash is the default */
    CHECK_STR(hwp_why(&x.s), "");
    {   /* the default selector takes loads as <pc, value> only */
        hwp_insn in;
        memset(&in, 0, sizeof in);
        in.cls = HWP_CLS_LOAD;
        hwp_strat_insn(&x.s, &in);
        in.cls = HWP_CLS_BR_COND;
        hwp_strat_insn(&x.s, &in);
        in.cls = HWP_CLS_CALL;
        hwp_strat_insn(&x.s, &in);
        CHECK_EQ(x.s.st.events, 1);
    }
    hwp_strat_write_json(&x.s, &w);
    CHECK_HAS(buf, "\"composition\":\"H[P_256]_2048\"");
    CHECK_HAS(buf, "{\"model\":\"strat\",\"version\":1,\"desc\":{\"scheme\":0,"
                   "\"sampler\":0,\"counter\":0,\"rate\":256,\"entries\":2048,");
    CHECK_HAS(buf, "\"stats\":{\"events\":1,\"dropped\":0,\"evicted\":0,\"cycles\":0,");
    st_drop(&x);
}

static void test_invalid(void) {
    hwp_strat s;
    hwp_strat_desc d;
    static unsigned char big[1 << 16];
    unsigned char *mem = big + (16 - ((uintptr_t)big & 15)) % 16;
    memset(&d, 0, sizeof d);
    d.entries = 3;
    CHECK_EQ(hwp_strat_bytes(&d), 0);
    CHECK_EQ(hwp_strat_init(&s, mem, sizeof big - 16, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&s), "strat: entries");
    memset(&d, 0, sizeof d);
    d.scheme = 7;
    CHECK_EQ(hwp_strat_init(&s, mem, sizeof big - 16, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&s), "scheme");
    memset(&d, 0, sizeof d);
    d.scheme = HWP_STRAT_TAGGED;
    d.tag_bits = 17;
    CHECK_EQ(hwp_strat_bytes(&d), 0);
    d.tag_bits = 2;
    d.ways = 32;
    CHECK_EQ(hwp_strat_bytes(&d), 0);
    memset(&d, 0, sizeof d);
    d.rate = (1u << 30) + 1;
    CHECK_EQ(hwp_strat_bytes(&d), 0);
    memset(&d, 0, sizeof d);
    d.l2_entries = 12;
    CHECK_EQ(hwp_strat_bytes(&d), 0);
    memset(&d, 0, sizeof d);
    d.entries = 64;
    {   /* storage of any alignment: bytes() holds the padding */
        size_t off;
        for (off = 0; off < 16; off++)
            CHECK_EQ(hwp_strat_init(&s, mem + off, hwp_strat_bytes(&d), &d, NULL), HWP_OK);
        CHECK_EQ(hwp_strat_init(&s, mem + 1, hwp_strat_bytes(&d) - 1, &d, NULL), HWP_ENOSPC);
        CHECK_EQ(hwp_strat_init(&s, NULL, hwp_strat_bytes(&d), &d, NULL), HWP_EINVAL);
    }
    memset(&s, 0, sizeof s); /* not a handle any more */
    CHECK_EQ(hwp_strat_flush(&s), HWP_EINVAL);
    CHECK_EQ(hwp_strat_reset(&s), HWP_EINVAL);
    CHECK_EQ(hwp_strat_pending(&s), 0);
    CHECK_EQ(hwp_strat_flush(NULL), HWP_EINVAL);
}

/* P_r with no split: its counter starts at a phase p0 in [0, r) (the
 * pending count right after init), so exactly floor((N + p0)/r)
 * messages, each of count r, and (N + p0) mod r left in the counter. */
static void test_periodic_exact(void) {
    hwp_rng g;
    int trial;
    hwp_rng_seed(&g, 11);
    for (trial = 0; trial < 40; trial++) {
        hwp_strat_desc d;
        st_inst x;
        uint64_t n = hwp_rng_below(&g, 5000), r = 1 + hwp_rng_below(&g, 64), i, p0;
        size_t k;
        int bad = 0;
        memset(&d, 0, sizeof d);
        d.rate = (uint32_t)r;
        d.entries = 1;
        d.seed = trial;
        if (!st_make(&x, d, NULL)) return;
        p0 = hwp_strat_pending(&x.s);
        CHECK(p0 < r);
        for (i = 0; i < n; i++) hwp_strat_push(&x.s, 0, hwp_rng_next(&g), i);
        hwp_strat_flush(&x.s);
        CHECK_EQ(x.r.n, (n + p0) / r);
        for (k = 0; k < x.r.n; k++) bad += x.r.m[k].count != r;
        CHECK_EQ(bad, 0);
        CHECK_EQ(hwp_strat_pending(&x.s), (n + p0) % r);
        st_drop(&x);
    }
}

/* H[P_r]_n: each stratum is its own P_r. The stratum of every tuple is
 * recomputed here from base.h's hash parts, the counts per stratum kept
 * by the test: a stratum of n_i events sends floor(n_i / r) or one more
 * message (its phase), each of count r from that stratum, and message
 * counts plus pending exceed N by the phases (the pending at init). */
static void test_stratified_periodic(void) {
    enum { N = 60000, NSTRATA = 64, R = 7 };
    hwp_strat_desc d;
    st_inst x;
    hwp_bytehash bh;
    uint64_t per[NSTRATA] = {0}, got[NSTRATA] = {0}, i, p0;
    hwp_rng g;
    int bad = 0;
    memset(&d, 0, sizeof d);
    d.rate = R;
    d.entries = NSTRATA;
    d.seed = 99;
    if (!st_make(&x, d, NULL)) return;
    p0 = hwp_strat_pending(&x.s);
    CHECK(p0 > 0 && p0 <= (uint64_t)NSTRATA * (R - 1));
    hwp_bytehash_init(&bh, 99);
    hwp_rng_seed(&g, 5);
    for (i = 0; i < N; i++) {
        uint64_t pc = 0x400000 + 4 * hwp_rng_below(&g, 300);
        uint64_t w = hwp_rng_below(&g, 1000);
        per[hwp_xor_fold(hwp_flip64(hwp_bytehash_randomize(&bh, pc)) ^
                             hwp_bytehash_randomize(&bh, w), 6)]++;
        hwp_strat_push(&x.s, 0, pc, w);
    }
    hwp_strat_flush(&x.s);
    for (i = 0; i < x.r.n; i++) {
        bad += x.r.m[i].count != R || x.r.m[i].stratum >= NSTRATA;
        if (x.r.m[i].stratum < NSTRATA) got[x.r.m[i].stratum]++;
    }
    for (i = 0; i < NSTRATA; i++) bad += got[i] != per[i] / R && got[i] != per[i] / R + 1;
    CHECK_EQ(bad, 0);
    CHECK_EQ(x.s.st.samples, x.r.n);
    CHECK_EQ(x.r.sum + hwp_strat_pending(&x.s), N + p0);
    st_drop(&x);
}

/* The phase makes P_r unbiased however few events a stratum gets: one
 * load with half its executions on one value and half on values seen
 * once each, spread over the strata at about r events each. Started
 * from 0, most of those strata would end below r and send nothing, and
 * the one value would read as nearly the load's every execution. */
static void test_periodic_thin_strata(void) {
    enum { N = 1000000 };
    hwp_strat_desc d;
    hwp_strat_acc a;
    hwp_strat_acc_desc ad;
    st_mem am;
    st_inst x;
    uint64_t i;
    double inv;
    memset(&d, 0, sizeof d); /* H[P_256]_2048, the paper's hash */
    memset(&ad, 0, sizeof ad);
    ad.tuples = 1u << 13;
    st_alloc(&am, hwp_strat_acc_bytes(&ad));
    if (!CHECK_EQ(hwp_strat_acc_init(&a, am.p, hwp_strat_acc_bytes(&ad), &ad, NULL), HWP_OK) ||
        !st_make(&x, d, NULL))
        return;
    for (i = 0; i < N; i++) hwp_strat_push(&x.s, 0, 0x4000, i & 1 ? 42 : 0x100000 + i);
    hwp_strat_flush(&x.s);
    hwp_strat_acc_fold(&a, x.r.m, (uint32_t)x.r.n);
    inv = hwp_strat_acc_invariance(&a, 0, 0x4000, 42);
    printf("  one value at half a load's executions, the rest spread thin: %.3f\n", inv);
    CHECK(inv > 0.47 && inv < 0.53);
    st_drop(&x);
    st_free(&am);
}

/* With the counter C, message counts plus what the counters hold equal
 * the stream length, for CR_r, H[CR_r]_n and the countdown variants. */
static void test_counter_sums(void) {
    static const uint32_t samplers[] = {HWP_STRAT_RANDOM, HWP_STRAT_COUNTDOWN};
    static const uint32_t strata[] = {1, 32, 2048};
    unsigned a, b, hash;
    hwp_rng g;
    hwp_rng_seed(&g, 3);
    for (a = 0; a < 2; a++)
        for (b = 0; b < 3; b++)
            for (hash = 0; hash < 2; hash++) {
                hwp_strat_desc d;
                st_inst x;
                uint64_t n = 20000 + hwp_rng_below(&g, 20000), i;
                memset(&d, 0, sizeof d);
                d.sampler = samplers[a];
                d.counter = 1;
                d.rate = 10;
                d.entries = strata[b];
                d.hash = hash;
                d.seed = 17 + a + b;
                if (!st_make(&x, d, NULL)) return;
                for (i = 0; i < n; i++)
                    hwp_strat_push(&x.s, 0, hwp_rng_below(&g, 50), hwp_rng_below(&g, 7));
                hwp_strat_flush(&x.s);
                CHECK_EQ(x.r.sum + hwp_strat_pending(&x.s), n);
                CHECK(x.r.n > n / 20); /* it did sample (~n / 10) */
                st_drop(&x);
            }
}

/* Stateless R_r takes each event with p = 1/r: the message count is
 * Binomial(N, 1/r); countdown intervals lie in [1, 2r-1] with mean r. */
static void test_random_rates(void) {
    enum { N = 200000, R = 16 };
    hwp_strat_desc d;
    st_inst x;
    uint64_t i, lo = 2 * R, hi = 0, sum = 0;
    double mean = (double)N / R, sd = sqrt(N * (1.0 / R) * (1 - 1.0 / R));
    size_t k;
    memset(&d, 0, sizeof d);
    d.sampler = HWP_STRAT_RANDOM;
    d.rate = R;
    d.seed = 8;
    if (!st_make(&x, d, NULL)) return;
    for (i = 0; i < N; i++) hwp_strat_push(&x.s, 0, i, 0);
    hwp_strat_flush(&x.s);
    CHECK(fabs((double)x.r.n - mean) < 5 * sd);
    CHECK_EQ(x.r.m[0].count, R); /* implied count r */
    st_drop(&x);

    d.sampler = HWP_STRAT_COUNTDOWN;
    d.counter = 1;
    d.entries = 1;
    if (!st_make(&x, d, NULL)) return;
    for (i = 0; i < N; i++) hwp_strat_push(&x.s, 0, i, 0);
    hwp_strat_flush(&x.s);
    for (k = 0; k < x.r.n; k++) {
        uint64_t c = x.r.m[k].count;
        lo = c < lo ? c : lo;
        hi = c > hi ? c : hi;
        sum += c;
    }
    CHECK_EQ(lo, 1);
    CHECK_EQ(hi, 2 * R - 1);
    /* intervals uniform on [1, 31]: sd 8.9, so the mean of ~12500 has
     * sd 0.08 */
    CHECK_NEAR((double)sum / (double)x.r.n, R, 0.5);
    st_drop(&x);
}

/* Fig. 6 by hand on a one-entry table (T = 256, 3-bit miss counter).
 * Tuples A, B, C have tags 1, 2, 3 (16-bit tags: xor_fold(pc ^ w, 16)). */
static void test_tagged_fig6(void) {
    hwp_strat_desc d;
    st_inst x;
    const hwp__strat_tent *e;
    int i;
    memset(&d, 0, sizeof d);
    d.scheme = HWP_STRAT_TAGGED;
    d.entries = 1;
    d.ways = 1;
    d.tag_bits = 16;
    if (!st_make(&x, d, NULL)) return;
    e = x.s.tab;
#define A 0, 1, 0
#define B 0, 2, 0
#define C 0, 3, 0
    hwp_strat_push(&x.s, A); /* E1 */
    CHECK(e->valid && e->hits == 1 && e->misses == 0 && e->tag == 1);
    hwp_strat_push(&x.s, A);
    hwp_strat_push(&x.s, A); /* E3 twice */
    CHECK_EQ(e->hits, 3);
    hwp_strat_push(&x.s, B); /* E4: Valid -> Evict */
    CHECK(e->hits == 3 && e->misses == 1 && e->tag == 1);
    hwp_strat_push(&x.s, B); /* h=3, m=1: 3 < 2 fails -> E5a */
    CHECK(e->hits == 3 && e->misses == 2 && e->tag == 1);
    hwp_strat_push(&x.s, B); /* h=3, m=2: 3 < 4 -> E5, hits = 3 + 3 */
    CHECK(e->hits == 6 && e->misses == 0 && e->tag == 2);
    for (i = 0; i < 63; i++) hwp_strat_push(&x.s, B); /* E3 */
    CHECK_EQ(e->hits, 69);
    hwp_strat_push(&x.s, A); /* E4 */
    hwp_strat_push(&x.s, A); /* h=69, m=1: no replace -> E5a, m=2 */
    CHECK(e->hits == 69 && e->misses == 2);
    hwp_strat_push(&x.s, B); /* Evict hit: 69 >= 64 but 3*69 <= 256: E6a */
    CHECK(e->hits == 70 && e->misses == 2 && e->valid);
    hwp_strat_push(&x.s, A); /* E5a, m=3 */
    CHECK_EQ(x.r.n + x.s.qn, 0);
    hwp_strat_push(&x.s, B); /* 4*70 > 256: E6, message (B, 71) */
    CHECK_EQ(x.s.qn, 1);
    CHECK(x.s.q[0].pc == 2 && x.s.q[0].count == 71);
    CHECK(!e->valid && e->hits == 3 && e->misses == 0); /* hands on 3 */
    hwp_strat_push(&x.s, C); /* E1 inherits: hits = 3 + 1 */
    CHECK(e->valid && e->hits == 4 && e->tag == 3);
    CHECK_EQ(x.s.st.events, 75);
    CHECK_EQ(71 + hwp_strat_pending(&x.s), 75); /* length kept */
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E1], 2);
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E3], 65);
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E4], 2);
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E5], 1);
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E5A], 3);
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E6A], 1);
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E6], 1);
    st_drop(&x);

    /* E2 with a 2-bit hit counter (T = 4); replacement on a saturated
     * 1-bit miss counter. */
    d.count_bits = 2;
    d.miss_bits = 1;
    if (!st_make(&x, d, NULL)) return;
    e = x.s.tab;
    for (i = 0; i < 4; i++) hwp_strat_push(&x.s, A);
    CHECK_EQ(x.s.qn, 1);
    CHECK(x.s.q[0].pc == 1 && x.s.q[0].count == 4);
    CHECK(!e->valid && e->hits == 0);
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E2], 1);
    hwp_strat_push(&x.s, A);
    hwp_strat_push(&x.s, A); /* h = 2 */
    hwp_strat_push(&x.s, B); /* E4, m = 1 = saturated */
    hwp_strat_push(&x.s, C); /* miss counter saturated -> E5: 2+1+1 = 4 = T */
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E5], 1);
    CHECK_EQ(x.s.qn, 2); /* the inherited count reached T: reported as C */
    CHECK(x.s.q[1].pc == 3 && x.s.q[1].count == 4);
    CHECK_EQ(hwp_strat_pending(&x.s), 0);
    CHECK_EQ(x.s.q[0].count + x.s.q[1].count, 8);
    CHECK_EQ(x.s.st.events, 8);
    st_drop(&x);
#undef A
#undef B
#undef C
}

/* The tagged compressor keeps the stream length through every
 * transition: after each event, reported counts + table counts = N. */
static void test_tagged_length(void) {
    static const uint32_t ways[] = {1, 2, 4};
    unsigned a, cb;
    uint64_t seen[HWP_STRAT_TRANSITIONS] = {0};
    hwp_rng g;
    hwp_rng_seed(&g, 21);
    for (a = 0; a < 3; a++)
        for (cb = 3; cb <= 8; cb += 5) {
            hwp_strat_desc d;
            st_inst x;
            hwp_cost cost;
            uint64_t i, bad = 0;
            unsigned t;
            hwg_zipf z;
            memset(&d, 0, sizeof d);
            d.scheme = HWP_STRAT_TAGGED;
            d.entries = 16;
            d.ways = ways[a];
            d.count_bits = cb;
            d.queue = 7;
            d.seed = a;
            hwp_cost_init(&cost, NULL);
            hwg_zipf_init(&z, 400, 1.1);
            if (!st_make(&x, d, &cost)) return;
            for (i = 1; i <= 30000; i++) {
                uint64_t k = hwg_zipf_next(&z, &g);
                hwp_strat_push(&x.s, 0, 0x1000 + (k & 31) * 4, k >> 5);
                bad += st_reported(&x) + hwp_strat_pending(&x.s) != i;
            }
            CHECK_EQ(bad, 0);
            hwp_strat_flush(&x.s);
            CHECK_EQ(x.r.sum + hwp_strat_pending(&x.s), 30000);
            CHECK_EQ(x.r.bad_batches, 0);
            for (t = 0; t < HWP_STRAT_TRANSITIONS; t++) seen[t] += x.s.st.trans[t];
            CHECK_EQ(cost.spent[HWP_COST_STRAT_MESSAGE], 30 * x.s.st.messages);
            st_drop(&x);
        }
    for (a = 0; a < HWP_STRAT_TRANSITIONS; a++) CHECK(seen[a] > 0);
}

/* A_k alone is lossless: after a flush the folded profile equals the
 * exact count of every tuple. */
static void test_assoc_lossless(void) {
    static const uint32_t ks[] = {4, 64, 256};
    static const uint32_t ws[] = {4, 4, 8};
    unsigned a;
    hwp_rng g;
    hwp_rng_seed(&g, 4);
    for (a = 0; a < 3; a++) {
        hwp_strat_desc d;
        st_inst x;
        ref_map exact, got;
        hwg_zipf z;
        size_t k, i;
        uint64_t wrong = 0;
        memset(&d, 0, sizeof d);
        d.scheme = HWP_STRAT_ASSOC;
        d.entries = ks[a];
        d.ways = ws[a];
        d.seed = a;
        if (!st_make(&x, d, NULL)) return;
        ref_init(&exact, 1024);
        ref_init(&got, 1024);
        hwg_zipf_init(&z, 600, 1.0);
        for (i = 0; i < 50000; i++) {
            uint64_t r = hwg_zipf_next(&z, &g);
            uint32_t kind = (uint32_t)(r % 3);
            hwp_strat_push(&x.s, kind, r / 3, r % 5);
            ref_add(&exact, kind, r / 3, r % 5, 1);
        }
        CHECK_EQ(st_reported(&x) + hwp_strat_pending(&x.s), 50000);
        hwp_strat_flush(&x.s);
        CHECK_EQ(hwp_strat_pending(&x.s), 0);
        for (k = 0; k < x.r.n; k++)
            ref_add(&got, x.r.m[k].kind, x.r.m[k].pc, x.r.m[k].w, x.r.m[k].count);
        CHECK_EQ(got.n, exact.n);
        for (i = 0; i <= exact.mask; i++)
            if (exact.e[i].used)
                wrong += ref_get(&got, exact.e[i].kind, exact.e[i].pc, exact.e[i].w) !=
                         exact.e[i].count;
        CHECK_EQ(wrong, 0);
        CHECK(x.r.n < 50000); /* and it compressed */
        ref_free(&exact);
        ref_free(&got);
        st_drop(&x);
    }
}

/* H[P_r]_n + A_16 delivers the same profile as H[P_r]_n (A_k is
 * lossless) in fewer messages (section 3.4). */
static void test_two_level(void) {
    hwp_strat_desc d;
    st_inst one, two;
    ref_map p1, p2;
    hwg_zipf z;
    hwp_rng g;
    size_t i;
    uint64_t wrong = 0;
    memset(&d, 0, sizeof d);
    d.rate = 16;
    d.entries = 64;
    d.seed = 12;
    if (!st_make(&one, d, NULL)) return;
    d.l2_entries = 16;
    if (!st_make(&two, d, NULL)) return;
    hwg_zipf_init(&z, 2000, 1.2);
    hwp_rng_seed(&g, 9);
    for (i = 0; i < 200000; i++) {
        uint64_t r = hwg_zipf_next(&z, &g);
        hwp_strat_push(&one.s, 0, r, r & 3);
        hwp_strat_push(&two.s, 0, r, r & 3);
    }
    hwp_strat_flush(&one.s);
    hwp_strat_flush(&two.s);
    CHECK_EQ(one.s.st.samples, two.s.st.samples);
    CHECK(two.r.n < one.r.n);
    CHECK(two.r.n * 115 <= one.r.n * 100); /* paper: 1.15x to 2.5x */
    CHECK_EQ(one.r.sum, two.r.sum);
    ref_init(&p1, 4096);
    ref_init(&p2, 4096);
    for (i = 0; i < one.r.n; i++) ref_add(&p1, 0, one.r.m[i].pc, one.r.m[i].w, one.r.m[i].count);
    for (i = 0; i < two.r.n; i++) ref_add(&p2, 0, two.r.m[i].pc, two.r.m[i].w, two.r.m[i].count);
    CHECK_EQ(p1.n, p2.n);
    for (i = 0; i <= p1.mask; i++)
        if (p1.e[i].used) wrong += ref_get(&p2, 0, p1.e[i].pc, p1.e[i].w) != p1.e[i].count;
    CHECK_EQ(wrong, 0);
    ref_free(&p1);
    ref_free(&p2);
    st_drop(&one);
    st_drop(&two);
}

/* The queue interrupts once per `queue` messages; the cost shim is
 * charged 214 per interrupt and 30 per message. */
static void test_queue_cost(void) {
    hwp_strat_desc d;
    st_inst x;
    hwp_cost cost;
    uint64_t i, msgs;
    memset(&d, 0, sizeof d);
    d.rate = 4;
    d.entries = 1;
    hwp_cost_init(&cost, NULL);
    if (!st_make(&x, d, &cost)) return;
    x.r.batch_size = 100;
    for (i = 0; i < 4 * 1050; i++) hwp_strat_push(&x.s, 0, i, 0);
    CHECK_EQ(x.r.batches, 10);
    CHECK_EQ(x.r.bad_batches, 0);
    CHECK_EQ(x.s.qn, 50);
    hwp_strat_flush(&x.s);
    CHECK_EQ(x.r.batches, 11);
    CHECK_EQ(x.r.bad_batches, 1); /* the flush delivers the last 50 */
    msgs = x.s.st.messages;
    CHECK_EQ(msgs, 1050);
    CHECK_EQ(x.s.st.interrupts, 11);
    CHECK_EQ(cost.count[HWP_COST_STRAT_INTERRUPT], 11);
    CHECK_EQ(hwp_cost_model_cycles(&cost, HWP_MODEL_STRAT), 11 * 214 + 1050 * 30);
    hwp_strat_flush(&x.s); /* nothing queued: no interrupt */
    CHECK_EQ(x.s.st.interrupts, 11);
    st_drop(&x);

    /* no handler: the messages are counted as unhandled */
    {
        hwp_strat s;
        st_mem m;
        size_t n = hwp_strat_bytes(&d);
        CHECK_EQ(hwp_strat_init(&s, st_alloc(&m, n), n, &d, NULL), HWP_OK);
        for (i = 0; i < 400; i++) hwp_strat_push(&s, 0, i, 0);
        hwp_strat_flush(&s);
        CHECK_EQ(s.st.unhandled, 100);
        st_free(&m);
    }
}

/* Section 5.7: edge and call-target tuples from the hwp_insn selector
 * through one H[P_256]_2048 separate by kind, and each profile is close
 * to the exact one. */
static void test_simultaneous(void) {
    enum { NBR = 300, NCALL = 60, N = 4000000 };
    hwp_strat_desc d;
    hwp_strat s;
    hwp_strat_acc acc, ideal;
    st_mem m1, m2, m3;
    hwp_rng g;
    hwp_strat_metric met;
    uint64_t i, wrong_kind = 0;
    uint32_t cur = 0;
    hwp_strat_msg msg;
    size_t ab;
    memset(&d, 0, sizeof d);
    d.select = HWP_STRAT_SEL(HWP_STRAT_KIND_EDGE) | HWP_STRAT_SEL(HWP_STRAT_KIND_CALL);
    d.on_interrupt = hwp_strat_acc_handler;
    d.ctx = &acc;
    d.seed = 77;
    ab = hwp_strat_acc_bytes(NULL);
    if (!CHECK_EQ(hwp_strat_acc_init(&acc, st_alloc(&m1, ab), ab, NULL, NULL), HWP_OK)) return;
    if (!CHECK_EQ(hwp_strat_acc_init(&ideal, st_alloc(&m2, ab), ab, NULL, NULL), HWP_OK)) return;
    if (!CHECK_EQ(hwp_strat_init(&s, st_alloc(&m3, hwp_strat_bytes(&d)),
                                 hwp_strat_bytes(&d), &d, NULL), HWP_OK))
        return;
    hwp_rng_seed(&g, 1);
    for (i = 0; i < N; i++) {
        hwp_insn in;
        uint32_t u = hwp_rng_below(&g, 100), site;
        memset(&in, 0, sizeof in);
        if (u < 30) { /* loads: not selected */
            in.cls = HWP_CLS_LOAD;
            in.pc = 0x10000 + 4 * hwp_rng_below(&g, 100);
            in.value = hwp_rng_below(&g, 4);
        } else if (u < 85) { /* branches at 0x20000.., bias by site */
            site = hwp_rng_below(&g, NBR) * hwp_rng_below(&g, NBR) / NBR;
            in.cls = HWP_CLS_BR_COND;
            in.pc = 0x20000 + 8 * site;
            in.next_pc = hwp_rng_below(&g, 100) < 10 + site % 80 ? 0x90000 + site : in.pc + 4;
        } else { /* calls at 0x30000.., 1-3 targets */
            site = hwp_rng_below(&g, NCALL);
            in.cls = HWP_CLS_CALL;
            in.pc = 0x30000 + 8 * site;
            in.next_pc = 0xA0000 + 0x100 * hwp_rng_below(&g, 1 + site % 3);
        }
        hwp_strat_insn(&s, &in);
        if (in.cls == HWP_CLS_BR_COND)
            hwp_strat_acc_add(&ideal, HWP_STRAT_KIND_EDGE, in.pc, in.next_pc, 1);
        else if (in.cls == HWP_CLS_CALL)
            hwp_strat_acc_add(&ideal, HWP_STRAT_KIND_CALL, in.pc, in.next_pc, 1);
    }
    hwp_strat_flush(&s);
    while (hwp_strat_acc_next(&acc, &cur, &msg)) {
        uint64_t base = msg.pc & ~(uint64_t)0xFFFF;
        wrong_kind += !(msg.kind == HWP_STRAT_KIND_EDGE ? base == 0x20000
                                                        : msg.kind == HWP_STRAT_KIND_CALL &&
                                                              base == 0x30000);
    }
    CHECK_EQ(wrong_kind, 0);
    CHECK(hwp_strat_acc_pc_count(&acc, HWP_STRAT_KIND_CALL, 0x30000) > 0);
    CHECK(hwp_strat_acc_pc_count(&acc, HWP_STRAT_KIND_EDGE, 0x20000) > 0);
    CHECK_EQ(hwp_strat_invariance_error(&ideal, &acc, NULL, &met), HWP_OK);
    CHECK(met.loads > 50);
    CHECK(met.error_pct < 3.0); /* the paper: under 3% for all benchmarks */
    printf("    simultaneous edge+call: %llu sites selected, error %.2f%%\n",
           (unsigned long long)met.loads, met.error_pct);
    st_free(&m1);
    st_free(&m2);
    st_free(&m3);
}

static void test_acc(void) {
    hwp_strat_acc a, b;
    hwp_strat_acc_desc ad;
    static unsigned char m1[4096], m2[4096];
    unsigned char *p1 = m1 + (16 - ((uintptr_t)m1 & 15)) % 16;
    unsigned char *p2 = m2 + (16 - ((uintptr_t)m2 & 15)) % 16;
    uint32_t cur = 0, seen = 0;
    uint64_t i;
    hwp_strat_msg msg, batch[2];
    memset(&ad, 0, sizeof ad);
    ad.tuples = 4;
    ad.pcs = 2;
    ad.replace = HWP_STRAT_ACC_KEEP;
    CHECK(hwp_strat_acc_bytes(&ad) <= sizeof m1 - 16);
    CHECK_EQ(hwp_strat_acc_init(&a, p1, 100, &ad, NULL), HWP_ENOSPC);
    CHECK_EQ(hwp_strat_acc_init(&a, p1 + 4, hwp_strat_acc_bytes(&ad), &ad, NULL), HWP_OK);
    CHECK_EQ(hwp_strat_acc_init(&a, p1 + 1, hwp_strat_acc_bytes(&ad) - 1, &ad, NULL), HWP_ENOSPC);
    CHECK_EQ(hwp_strat_acc_init(&a, p1, sizeof m1 - 16, &ad, NULL), HWP_OK);
    CHECK_EQ(hwp_strat_acc_init(&b, p2, sizeof m2 - 16, &ad, NULL), HWP_OK);
    for (i = 0; i < 6; i++) hwp_strat_acc_add(&a, 0, 100 + (i & 1), i, 10 * (i + 1));
    /* tuples 0..3 held, 4 and 5 dropped; both pcs held */
    CHECK_EQ(a.st.dropped, 2);
    CHECK_EQ(a.st.dropped_count, 50 + 60);
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 100, 2), 30);
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 100, 4), 0);
    CHECK_EQ(hwp_strat_acc_pc_count(&a, 0, 100), 10 + 30 + 50);
    CHECK_NEAR(hwp_strat_acc_invariance(&a, 0, 100, 2), 30.0 / 90.0, 1e-12);
    hwp_strat_acc_add(&a, 0, 999, 0, 5); /* third pc: no room */
    CHECK_EQ(a.st.dropped_pc_count, 5);
    CHECK_EQ(a.st.total, 210 + 5);
    while (hwp_strat_acc_next(&a, &cur, &msg)) seen++;
    CHECK_EQ(seen, 4);
    batch[0].kind = 0; batch[0].pc = 100; batch[0].w = 2; batch[0].count = 7;
    batch[1].kind = 1; batch[1].pc = 100; batch[1].w = 2; batch[1].count = 1;
    batch[0].stratum = batch[1].stratum = 0;
    batch[0].samples = batch[1].samples = 1;
    batch[0].reserved = batch[1].reserved = 0;
    hwp_strat_acc_handler(&b, batch, 2);
    CHECK_EQ(hwp_strat_acc_merge(&a, &b), HWP_OK);
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 100, 2), 37);
    CHECK_EQ(hwp_strat_acc_count(&a, 1, 100, 2), 0); /* a is full */
    CHECK_EQ(hwp_strat_acc_pc_count(&a, 0, 100), 97);
    CHECK_EQ(hwp_strat_acc_merge(&a, &a), HWP_EINVAL);
    CHECK_EQ(hwp_strat_acc_reset(&a), HWP_OK);
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 100, 2), 0);
    CHECK_EQ(a.st.tuples, 0);

    /* EVICT: with 8 slots the window sees every tuple; 50 evicts 10,
     * 60 evicts 20, and pc 100's top follows */
    ad.replace = HWP_STRAT_ACC_EVICT;
    CHECK_EQ(hwp_strat_acc_init(&a, p1, sizeof m1 - 16, &ad, NULL), HWP_OK);
    for (i = 0; i < 6; i++) hwp_strat_acc_add(&a, 0, 100 + (i & 1), i, 10 * (i + 1));
    CHECK_EQ(a.st.evicted, 2);
    CHECK_EQ(a.st.dropped, 0);
    CHECK_EQ(a.st.dropped_count, 10 + 20);
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 100, 0), 0);
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 100, 4), 50);
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 101, 3), 40);
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 101, 5), 60);
    {
        hwp_strat_value v[4];
        CHECK_EQ(hwp_strat_acc_top_values(&a, 0, 100, NULL, 0), 2);
        CHECK_EQ(hwp_strat_acc_top_values(&a, 0, 100, v, 1), 2);
        CHECK_EQ(v[0].w, 4);
        CHECK_EQ(v[0].count, 50);
        CHECK_NEAR(v[0].invariance, 50.0 / 90.0, 1e-12);
        /* 3 samples < min_samples: nothing can be claimed */
        CHECK(v[0].lo == 0.0 && v[0].hi == 1.0);
        CHECK_EQ(hwp_strat_acc_top_pcs(&a, 0, NULL, 0), 0);
    }
    /* a smaller newcomer than everything held is dropped */
    hwp_strat_acc_add(&a, 0, 100, 77, 1);
    CHECK_EQ(a.st.dropped, 1);
    CHECK_EQ(a.st.evicted, 2);
}

/* A pc whose only value is evicted by a flood and then comes back holds
 * a restarted count: its share of the pc is a floor, and the interval's
 * upper end must still reach the true share (1), or a JIT would be told
 * "confidently variant" of a constant (Wilson's alone gives 0.997 here). */
static void test_acc_lost_widens(void) {
    hwp_strat_acc a;
    hwp_strat_acc_desc ad;
    static unsigned char m[8192];
    unsigned char *p = m + (16 - ((uintptr_t)m & 15)) % 16;
    hwp_strat_value v;
    hwp_strat_pc all[8];
    size_t n, k, found = 0;
    uint64_t i;
    memset(&ad, 0, sizeof ad);
    ad.tuples = 4;
    ad.pcs = 8;
    ad.min_samples = 1;
    CHECK(hwp_strat_acc_bytes(&ad) <= sizeof m - 16);
    CHECK_EQ(hwp_strat_acc_init(&a, p, sizeof m - 16, &ad, NULL), HWP_OK);
    for (i = 0; i < 40; i++) hwp_strat_acc_add(&a, 0, 100, 7, 1);
    for (i = 0; i < 4; i++) hwp_strat_acc_add(&a, 0, 200 + i, i, 1000); /* the 4th evicts it */
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 100, 7), 0);
    hwp_strat_acc_add(&a, 0, 100, 7, 2000); /* back, evicting a flood tuple */
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 100, 7), 2000);
    CHECK_EQ(hwp_strat_acc_pc_count(&a, 0, 100), 2040);
    CHECK_EQ(hwp_strat_acc_top_values(&a, 0, 100, &v, 1), 1);
    CHECK_NEAR(v.invariance, 2000.0 / 2040.0, 1e-12);
    CHECK_NEAR(v.hi, 1.0, 1e-12);
    CHECK(v.lo < v.invariance);
    n = hwp_strat_acc_top_pcs(&a, 0, all, 8);
    for (k = 0; k < n && k < 8; k++)
        if (all[k].pc == 100) {
            found++;
            CHECK_NEAR(all[k].hi, 1.0, 1e-12);
            CHECK_NEAR(all[k].lo, v.lo, 1e-12);
        }
    CHECK_EQ(found, 1);
}

/* The ratio estimate by hand: stratum 1 holds (A,10), (B,30), (A,20),
 * so 60 events in 3 messages; A has 2 of them: 2 * 60 / 3 = 40, B 20;
 * stratum 2 holds (C,5) alone: 5. Then on a real H[CR_10]_4 message
 * stream, against the per-stratum sums this test keeps itself, and
 * through a merge of two halves. */
static void test_acc_estimate(void) {
    hwp_strat_acc a, b;
    hwp_strat_acc_desc ad;
    st_mem m1, m2;
    hwp_strat_msg msg[4];
    size_t n, i;
    static const uint64_t pcs[4] = {1, 2, 1, 3}, counts[4] = {10, 30, 20, 5};
    static const uint32_t strata[4] = {1, 1, 1, 2};
    memset(&ad, 0, sizeof ad);
    ad.strata = 4;
    n = hwp_strat_acc_bytes(&ad);
    CHECK_EQ(hwp_strat_acc_init(&a, st_alloc(&m1, n), n, &ad, NULL), HWP_OK);
    for (i = 0; i < 4; i++) {
        msg[i].pc = pcs[i];
        msg[i].w = 0;
        msg[i].count = counts[i];
        msg[i].kind = 0;
        msg[i].stratum = strata[i];
        msg[i].samples = 1;
        msg[i].reserved = 0;
    }
    hwp_strat_acc_fold(&a, msg, 4);
    CHECK_NEAR(hwp_strat_acc_estimate(&a, 0, 1, 0), 40.0, 1e-9);
    CHECK_NEAR(hwp_strat_acc_estimate(&a, 0, 2, 0), 20.0, 1e-9);
    CHECK_NEAR(hwp_strat_acc_estimate(&a, 0, 3, 0), 5.0, 1e-9);
    CHECK_EQ(hwp_strat_acc_count(&a, 0, 1, 0), 30); /* the plain sum */
    CHECK_NEAR(hwp_strat_acc_estimate(&a, 0, 9, 0), 0.0, 0);
    ad.strata = 3;
    CHECK_EQ(hwp_strat_acc_bytes(&ad), 0);
    st_free(&m1);

    {
        hwp_strat_desc d;
        st_inst x;
        uint64_t len[4] = {0}, k[4] = {0}, ip[4] = {0}, j;
        uint32_t sp = 0;
        int bad = 0;
        hwp_rng g;
        memset(&d, 0, sizeof d);
        d.sampler = HWP_STRAT_RANDOM;
        d.counter = 1;
        d.rate = 10;
        d.entries = 4;
        d.seed = 3;
        if (!st_make(&x, d, NULL)) return;
        hwp_rng_seed(&g, 2);
        for (j = 0; j < 30000; j++)
            hwp_strat_push(&x.s, 0, hwp_rng_below(&g, 10) < 3 ? 7 : 100 + j, 0);
        hwp_strat_flush(&x.s);
        ad.strata = 4;
        n = hwp_strat_acc_bytes(&ad);
        hwp_strat_acc_init(&a, st_alloc(&m1, n), n, &ad, NULL);
        hwp_strat_acc_init(&b, st_alloc(&m2, n), n, &ad, NULL);
        for (i = 0; i < x.r.n; i++) {
            const hwp_strat_msg *m = x.r.m + i;
            bad += m->stratum >= 4;
            if (m->stratum >= 4) continue;
            len[m->stratum] += m->count;
            k[m->stratum]++;
            if (m->pc == 7) {
                ip[m->stratum]++;
                sp = m->stratum;
            }
        }
        CHECK_EQ(bad, 0);
        hwp_strat_acc_fold(&a, x.r.m, (uint32_t)(x.r.n / 2));
        hwp_strat_acc_fold(&b, x.r.m + x.r.n / 2, (uint32_t)(x.r.n - x.r.n / 2));
        CHECK_EQ(hwp_strat_acc_merge(&a, &b), HWP_OK);
        CHECK(ip[sp] > 500);
        CHECK_NEAR(hwp_strat_acc_estimate(&a, 0, 7, 0),
                   (double)ip[sp] * (double)len[sp] / (double)k[sp], 1e-6);
        st_drop(&x);
        st_free(&m2);
        ad.strata = 8;
        n = hwp_strat_acc_bytes(&ad);
        hwp_strat_acc_init(&b, st_alloc(&m2, n), n, &ad, NULL);
        CHECK_EQ(hwp_strat_acc_merge(&a, &b), HWP_EMISMATCH);
        st_free(&m1);
        st_free(&m2);
    }
}

/* Section 5.3.1 worked by hand. Load 1 runs 2000 times: values 1200,
 * 600, 200 (10%: kept). Load 2 runs 500 times (< 1000: dropped). Load 3
 * runs 1000 times over 20 values of 5% (no covered tuple: dropped).
 * Profiled invariances 0.55, 0.35, 0.10 against ideal 0.6, 0.3, 0.1:
 * e = (1200 * 0.05 + 600 * 0.05 + 200 * 0) / 2000 = 4.5%. */
static void test_metric(void) {
    hwp_strat_acc ideal, prof;
    st_mem m1, m2;
    hwp_strat_metric met;
    hwp_strat_metric_desc md;
    size_t n = hwp_strat_acc_bytes(NULL);
    int v;
    hwp_strat_acc_init(&ideal, st_alloc(&m1, n), n, NULL, NULL);
    hwp_strat_acc_init(&prof, st_alloc(&m2, n), n, NULL, NULL);
    hwp_strat_acc_add(&ideal, 0, 1, 10, 1200);
    hwp_strat_acc_add(&ideal, 0, 1, 11, 600);
    hwp_strat_acc_add(&ideal, 0, 1, 12, 200);
    hwp_strat_acc_add(&ideal, 0, 2, 10, 500);
    for (v = 0; v < 20; v++) hwp_strat_acc_add(&ideal, 0, 3, v, 50);
    hwp_strat_acc_add(&prof, 0, 1, 10, 1100);
    hwp_strat_acc_add(&prof, 0, 1, 11, 700);
    hwp_strat_acc_add(&prof, 0, 1, 12, 200);
    hwp_strat_acc_add(&prof, 0, 2, 10, 256);
    CHECK_EQ(hwp_strat_invariance_error(&ideal, &prof, NULL, &met), HWP_OK);
    CHECK_NEAR(met.error_pct, 4.5, 1e-9);
    CHECK_EQ(met.loads, 1);
    CHECK_EQ(met.tuples, 3);
    CHECK_EQ(met.weight, 2000);
    /* lowering min_exec admits load 2 (exact: error 0 for it) */
    memset(&md, 0, sizeof md);
    md.min_exec = 500;
    CHECK_EQ(hwp_strat_invariance_error(&ideal, &prof, &md, &met), HWP_OK);
    CHECK_EQ(met.loads, 2);
    CHECK_NEAR(met.error_pct, 100.0 * (1200 * 0.05 + 600 * 0.05) / 2500, 1e-9);
    md.min_inv = 1.5;
    CHECK_EQ(hwp_strat_invariance_error(&ideal, &prof, &md, &met), HWP_EINVAL);
    CHECK_HAS(hwp_why(&ideal), "min_inv");
    st_free(&m1);
    st_free(&m2);
}

/* Counts near 2^64 are legal (hwp_strat_acc_add takes any count and the
 * profile saturates): the metric's coverage and weight sums must not
 * wrap either. One load of two values, 2^63 events each (the load's
 * count saturates at 2^64 - 1), against an empty profile: each value's
 * ideal invariance is 1/2 and the profile's 0, so the error is 50%. */
static void test_metric_huge_counts(void) {
    hwp_strat_acc ideal, prof;
    st_mem m1, m2;
    hwp_strat_metric met;
    size_t n = hwp_strat_acc_bytes(NULL);
    const uint64_t half = (uint64_t)1 << 63;
    hwp_strat_acc_init(&ideal, st_alloc(&m1, n), n, NULL, NULL);
    hwp_strat_acc_init(&prof, st_alloc(&m2, n), n, NULL, NULL);
    hwp_strat_acc_add(&ideal, 0, 1, 10, half);
    hwp_strat_acc_add(&ideal, 0, 1, 11, half);
    CHECK_EQ(hwp_strat_acc_pc_count(&ideal, 0, 1), UINT64_MAX);
    CHECK_EQ(hwp_strat_invariance_error(&ideal, &prof, NULL, &met), HWP_OK);
    CHECK_EQ(met.loads, 1);
    CHECK_EQ(met.tuples, 2);
    CHECK_EQ(met.weight, UINT64_MAX);
    CHECK_NEAR(met.error_pct, 50.0, 1e-9);
    st_free(&m1);
    st_free(&m2);
}

static void test_reports(void) {
    hwp_strat_desc d;
    st_inst x;
    char buf[4096];
    hwp_bufwriter b;
    hwp_writer w;
    hwp_strat_acc a;
    st_mem m;
    size_t n = hwp_strat_acc_bytes(NULL);
    int i;
    memset(&d, 0, sizeof d);
    d.scheme = HWP_STRAT_TAGGED;
    d.hash = HWP_STRAT_HASH_CHEAP;
    if (!st_make(&x, d, NULL)) return;
    for (i = 0; i < 1000; i++) hwp_strat_push(&x.s, 0, 0x40, 7);
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_strat_write_json(&x.s, &w);
    CHECK_HAS(buf, "\"composition\":\"tag2-256-2048x2\"");
    CHECK_HAS(buf, "\"hash\":1");
    CHECK_HAS(buf, "\"events\":1000");
    /* 3 x 256 reported (E2); E1 opens the entry 4 times, E3 the rest */
    CHECK_HAS(buf, "\"E1\":4,\"E2\":3,\"E3\":993,");
    CHECK_EQ(hwp_strat_pending(&x.s), 232);
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_strat_write_text(&x.s, &w);
    CHECK_HAS(buf, "stratified tag2-256-2048x2 (cheap hash): 1000 events");
    CHECK_HAS(buf, "E6a=0");
    st_drop(&x);
    /* A stream with nothing to profile says so: the default H[P]'s
     * counters start part-way, which must not read as events pending. */
    memset(&d, 0, sizeof d);
    if (CHECK(st_make(&x, d, NULL))) {
        CHECK(hwp_strat_pending(&x.s) > 0);
        w = hwp_writer_buf(&b, buf, sizeof buf);
        hwp_strat_write_text(&x.s, &w);
        CHECK_HAS(buf, ": no events: the stream held no tuple");
        CHECK(strstr(buf, "pending") == NULL);
        st_drop(&x);
    }
    hwp_strat_acc_init(&a, st_alloc(&m, n), n, NULL, NULL);
    hwp_strat_acc_add(&a, 2, 0x40, 0x7, 256);
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_strat_acc_write_json(&a, &w);
    CHECK_HAS(buf, "\"profile\":[{\"kind\":2,\"pc\":\"0x40\",\"w\":\"0x7\",\"count\":256,"
                   "\"samples\":1,\"stratum\":0}]");
    w = hwp_writer_buf(&b, buf, sizeof buf);
    hwp_strat_acc_write_text(&a, &w);
    CHECK_HAS(buf, "kind 2 pc 0x40 w 0x7 count 256 invariance 1.0000");
    st_free(&m);
}

/* Same seed, same messages; reset behaves like a fresh instance for the
 * deterministic samplers. */
static void test_determinism(void) {
    hwp_strat_desc d;
    st_inst x, y;
    size_t i, same = 0;
    uint64_t p0;
    memset(&d, 0, sizeof d);
    d.rate = 8;
    d.entries = 256;
    d.seed = 42;
    if (!st_make(&x, d, NULL) || !st_make(&y, d, NULL)) return;
    p0 = hwp_strat_pending(&y.s);
    for (i = 0; i < 50000; i++) {
        hwp_strat_push(&x.s, 0, i % 977, i % 13);
        hwp_strat_push(&y.s, 0, i % 977, i % 13);
    }
    hwp_strat_flush(&x.s);
    hwp_strat_flush(&y.s);
    CHECK(x.r.n > 0);
    CHECK_EQ(x.r.n, y.r.n);
    CHECK(memcmp(x.r.m, y.r.m, x.r.n * sizeof *x.r.m) == 0);
    /* reset, replay: the same messages again */
    CHECK_EQ(hwp_strat_reset(&y.s), HWP_OK);
    CHECK_EQ(hwp_strat_pending(&y.s), p0); /* the phases drawn again */
    CHECK_EQ(y.s.st.events, 0);
    y.r.n = 0;
    for (i = 0; i < 50000; i++) hwp_strat_push(&y.s, 0, i % 977, i % 13);
    hwp_strat_flush(&y.s);
    CHECK_EQ(x.r.n, y.r.n);
    CHECK(memcmp(x.r.m, y.r.m, x.r.n * sizeof *x.r.m) == 0);
    st_drop(&y);
    /* another seed draws other byte tables: other strata */
    d.seed = 43;
    if (!st_make(&y, d, NULL)) return;
    for (i = 0; i < 50000; i++) hwp_strat_push(&y.s, 0, i % 977, i % 13);
    hwp_strat_flush(&y.s);
    for (i = 0; i < x.r.n && i < y.r.n; i++)
        same += x.r.m[i].pc == y.r.m[i].pc && x.r.m[i].w == y.r.m[i].w;
    CHECK(same < x.r.n / 2);
    st_drop(&x);
    st_drop(&y);
}

/* The same <pc, w> under two kinds stays apart (section 2.1 tags). */
static void test_kinds_apart(void) {
    hwp_strat_desc d;
    st_inst x;
    int i;
    memset(&d, 0, sizeof d);
    d.scheme = HWP_STRAT_TAGGED;
    d.entries = 2048;
    if (!st_make(&x, d, NULL)) return;
    for (i = 0; i < 256 * 3; i++) hwp_strat_push(&x.s, 0, 0x500, 9);
    for (i = 0; i < 256; i++) hwp_strat_push(&x.s, 5, 0x500, 9);
    hwp_strat_flush(&x.s);
    CHECK_EQ(x.r.n, 4);
    CHECK(x.r.n == 4 && x.r.m[0].kind == 0 && x.r.m[1].kind == 0 &&
          x.r.m[2].kind == 0 && x.r.m[3].kind == 5);
    CHECK_EQ(x.s.st.trans[HWP_STRAT_E4], 0); /* no conflict between them */
    st_drop(&x);
}

/* A handler that pushes into the compressor it serves: the queue is
 * being drained, so what it emits meanwhile is a counted drop, never a
 * write past the queue (ASan caught the old write). */
typedef struct st_reentry {
    hwp_strat *s;
    uint64_t delivered;
    unsigned depth;
} st_reentry;

static void st_reenter(void *ctx, const hwp_strat_msg *msgs, uint32_t n) {
    st_reentry *r = (st_reentry *)ctx;
    uint32_t i;
    (void)msgs;
    r->delivered += n;
    for (i = 0; i < 3 * n; i++) hwp_strat_push(r->s, 0, 0x99, i);
    hwp_strat_flush(r->s); /* reentrant flush: no nested interrupt */
}

static void test_push_in_handler(void) {
    hwp_strat_desc d;
    hwp_strat s;
    st_reentry r;
    st_mem m;
    size_t n;
    uint64_t i;
    memset(&d, 0, sizeof d);
    d.rate = 1; /* every push is a message */
    d.entries = 1;
    d.queue = 4;
    d.on_interrupt = st_reenter;
    d.ctx = &r;
    memset(&r, 0, sizeof r);
    r.s = &s;
    n = hwp_strat_bytes(&d);
    CHECK_EQ(hwp_strat_init(&s, st_alloc(&m, n), n, &d, NULL), HWP_OK);
    for (i = 0; i < 10; i++) hwp_strat_push(&s, 0, 0x10, i);
    hwp_strat_flush(&s);
    CHECK_EQ(r.delivered, 10);        /* 4 + 4 + the 2 the flush hands on */
    CHECK_EQ(s.st.dropped, 3 * 10);   /* every push from the handler    */
    CHECK_EQ(s.st.events, 10 + 3 * 10);
    CHECK_EQ(s.st.messages, 10);
    st_free(&m);
}

/* Exact counts of one hot tuple (30% of the stream, as in section 3.3's
 * experiment) and the C estimator, for every composition of Fig. 3 with
 * and without the "+ A_16" second level of section 3.4. A_k is lossless
 * and draws no random numbers, so the estimate behind it must equal the
 * estimate without it; both must be near the exact count. A_k alone
 * counts exactly. */
static void test_estimate_compositions(void) {
    static const struct {
        uint32_t sampler, counter, entries;
        const char *name;
    } comp[] = {
        {HWP_STRAT_PERIODIC, 0, 1, "P"},   {HWP_STRAT_RANDOM, 0, 1, "R"},
        {HWP_STRAT_RANDOM, 1, 1, "CR"},    {HWP_STRAT_PERIODIC, 0, 64, "H[P]"},
        {HWP_STRAT_RANDOM, 0, 64, "H[R]"}, {HWP_STRAT_RANDOM, 1, 64, "H[CR]"},
        {HWP_STRAT_PERIODIC, 1, 64, "H[CP]"},
        {HWP_STRAT_COUNTDOWN, 1, 64, "H[CRcd]"},
    };
    enum { N = 200000 };
    size_t c, i;
    for (c = 0; c < sizeof comp / sizeof comp[0]; c++) {
        double est[2];
        uint64_t exact = 0;
        int l2;
        for (l2 = 0; l2 < 2; l2++) {
            hwp_strat_desc d;
            hwp_strat_acc a;
            hwp_strat_acc_desc ad;
            st_inst x;
            st_mem m;
            hwp_rng g;
            size_t n;
            memset(&d, 0, sizeof d);
            d.sampler = comp[c].sampler;
            d.counter = comp[c].counter;
            d.entries = comp[c].entries;
            d.rate = 10;
            d.seed = 5;
            d.l2_entries = l2 ? 16 : 0;
            if (!st_make(&x, d, NULL)) return;
            memset(&ad, 0, sizeof ad);
            ad.strata = comp[c].entries;
            n = hwp_strat_acc_bytes(&ad);
            hwp_strat_acc_init(&a, st_alloc(&m, n), n, &ad, NULL);
            hwp_rng_seed(&g, 77);
            exact = 0;
            for (i = 0; i < N; i++) {
                bool hot = hwp_rng_below(&g, 10) < 3;
                exact += hot;
                hwp_strat_push(&x.s, 0, hot ? 7 : 100 + hwp_rng_below(&g, 40), 1);
            }
            hwp_strat_flush(&x.s);
            hwp_strat_acc_fold(&a, x.r.m, (uint32_t)x.r.n);
            est[l2] = hwp_strat_acc_estimate(&a, 0, 7, 1);
            st_drop(&x);
            st_free(&m);
        }
        if (!CHECK_NEAR(est[1], est[0], 1e-6 * est[0]) ||
            !CHECK(fabs(est[0] - (double)exact) < 0.05 * (double)exact))
            printf("    %s: exact %" PRIu64 ", estimate %.1f, + A_16 %.1f\n",
                   comp[c].name, exact, est[0], est[1]);
    }
    {   /* A_16 alone: lossless, so the estimate is the exact count */
        hwp_strat_desc d;
        hwp_strat_acc a;
        hwp_strat_acc_desc ad;
        st_inst x;
        st_mem m;
        size_t n;
        memset(&d, 0, sizeof d);
        d.scheme = HWP_STRAT_ASSOC;
        d.entries = 16;
        d.count_bits = 4;
        if (!st_make(&x, d, NULL)) return;
        memset(&ad, 0, sizeof ad);
        ad.strata = 1;
        n = hwp_strat_acc_bytes(&ad);
        hwp_strat_acc_init(&a, st_alloc(&m, n), n, &ad, NULL);
        for (i = 0; i < 5000; i++) hwp_strat_push(&x.s, 0, i % 3 ? 7 : 100 + i % 50, 1);
        hwp_strat_flush(&x.s);
        hwp_strat_acc_fold(&a, x.r.m, (uint32_t)x.r.n);
        CHECK_NEAR(hwp_strat_acc_estimate(&a, 0, 7, 1), 3333.0, 1e-9);
        st_drop(&x);
        st_free(&m);
    }
}

/* A 32-bit fold counter: 2^32 - 1 folds before a message, no shift by
 * 32 anywhere (UBSan with halt_on_error caught the old one at init). */
static void test_count_bits_32(void) {
    hwp_strat_desc d;
    st_inst x;
    int i;
    memset(&d, 0, sizeof d);
    d.scheme = HWP_STRAT_ASSOC;
    d.entries = 16;
    d.count_bits = 32;
    if (!st_make(&x, d, NULL)) return;
    for (i = 0; i < 1000; i++) hwp_strat_push(&x.s, 0, 1, 2);
    CHECK_EQ(x.r.n, 0);
    CHECK_EQ(hwp_strat_pending(&x.s), 1000);
    hwp_strat_flush(&x.s);
    CHECK_EQ(x.r.n, 1);
    CHECK_EQ(x.r.sum, 1000);
    st_drop(&x);
}

/* Descs that do not compose: each refused with a reason naming the
 * component and the field. */
static void test_bad_compositions(void) {
    static const struct {
        uint32_t scheme, entries, ways, count_bits, l2_entries, l2_ways, queue;
        const char *why;
    } bad[] = {
        /* the tagged compressor is its own second stage (section 4) */
        {HWP_STRAT_TAGGED, 0, 0, 0, 16, 0, 0, "strat: l2_entries"},
        /* an A_k with no entries behind a sampler */
        {HWP_STRAT_SAMPLED, 0, 0, 0, 0, 4, 0, "strat: l2_ways"},
        {HWP_STRAT_SAMPLED, 0, 0, 33, 0, 0, 0, "strat: count_bits"},
        {HWP_STRAT_TAGGED, 0, 0, 17, 0, 0, 0, "strat: count_bits"},
        {HWP_STRAT_ASSOC, 8, 16, 0, 0, 0, 0, "strat: ways"},
        {HWP_STRAT_SAMPLED, 0, 0, 0, 12, 0, 0, "strat: l2_entries"},
        {HWP_STRAT_SAMPLED, 0, 0, 0, 0, 0, (1u << 20) + 1, "strat: queue"},
        {HWP_STRAT_SAMPLED, 6, 0, 0, 0, 0, 0, "strat: entries"},
    };
    static unsigned char big[1 << 16];
    size_t i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        hwp_strat_desc d;
        hwp_strat s;
        memset(&d, 0, sizeof d);
        d.scheme = bad[i].scheme;
        d.entries = bad[i].entries;
        d.ways = bad[i].ways;
        d.count_bits = bad[i].count_bits;
        d.l2_entries = bad[i].l2_entries;
        d.l2_ways = bad[i].l2_ways;
        d.queue = bad[i].queue;
        CHECK_EQ(hwp_strat_bytes(&d), 0);
        CHECK_EQ(hwp_strat_init(&s, big, sizeof big, &d, NULL), HWP_EINVAL);
        if (!CHECK_HAS(hwp_why(&s), bad[i].why)) printf("    case %zu\n", i);
    }
}

/* The level-1 index from the folded byte tables equals the paper's hash
 * computed the reference way (byte permutations, flip, 64-bit fold) on
 * random tuples and on tuples shaped like real ones (small pcs, small
 * and pointer-like values), at every index width the compressors use. */
static void test_fast_hash_exact(void) {
    static const uint32_t entries[] = {2, 8, 64, 2048, 4096, 1u << 16, 1u << 24};
    size_t e;
    for (e = 0; e < sizeof entries / sizeof entries[0]; e++) {
        hwp_strat_desc d;
        hwp_strat s;
        st_mem m;
        size_t n, i, wrong = 0;
        hwp_rng g;
        memset(&d, 0, sizeof d);
        d.entries = entries[e];
        d.seed = 1000 + e;
        n = hwp_strat_bytes(&d);
        if (!CHECK_EQ(hwp_strat_init(&s, st_alloc(&m, n), n, &d, NULL), HWP_OK)) return;
        CHECK(s.fh != NULL);
        hwp_rng_seed(&g, e);
        for (i = 0; i < 20000; i++) {
            uint64_t pc = hwp_rng_next(&g), w = hwp_rng_next(&g);
            uint32_t kind = (uint32_t)(i & 3);
            if (i & 1) {
                pc = 0x400000 + 4 * (pc & 0xFFFF);
                w = i & 2 ? w & 0xFF : 0x7ffd00000000ull + (w & 0xFFFFF8);
            }
            {
                uint64_t kpc = hwp__strat_kpc(kind, pc);
                uint32_t ref = (uint32_t)hwp_xor_fold(hwp_bytehash_sig(s.bh, kpc, w),
                                                      s.index_bits);
                uint32_t key = hwp_strat_pc_key(&s, kind, pc);
                wrong += hwp__strat_index1(&s, kpc, w) != ref;
                wrong += hwp__strat_index1k(&s, kpc, w, &key) != ref;
            }
        }
        if (!CHECK_EQ(wrong, 0)) printf("    entries %u\n", entries[e]);
        st_free(&m);
    }
}

/* A writer into a growing heap buffer, for reports of any size. */
typedef struct st_buf {
    char *p;
    size_t n, cap;
} st_buf;

static void st_buf_write(void *ctx, const char *s, size_t n) {
    st_buf *b = (st_buf *)ctx;
    if (b->n + n + 1 > b->cap) {
        b->cap = 2 * (b->n + n) + 256;
        b->p = (char *)realloc(b->p, b->cap);
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = 0;
}

static void st_json_strat(const hwp_strat *s, st_buf *b) {
    hwp_writer w;
    w.write = st_buf_write;
    w.ctx = b;
    b->n = 0;
    hwp_strat_write_json(s, &w);
}

static void st_json_acc(const hwp_strat_acc *a, st_buf *b) {
    hwp_writer w;
    w.write = st_buf_write;
    w.ctx = b;
    b->n = 0;
    hwp_strat_acc_write_json(a, &w);
}

/* Reports read back: the desc, then the profile, write out byte for
 * byte the same; queries answer the same; a report of another desc is
 * a mismatch naming the field; damage is a format error at an offset. */
static void test_json_roundtrip(void) {
    hwp_strat_desc d, d2;
    hwp_strat_acc_desc ad, ad2;
    hwp_strat_acc a, b;
    st_inst x;
    hwp_strat y;
    st_mem m1, m2, m3;
    st_buf j1 = {0, 0, 0}, j2 = {0, 0, 0};
    hwp_json_err err;
    hwp_rng g;
    size_t n, i;
    memset(&d, 0, sizeof d);
    d.entries = 64;
    d.rate = 4;
    d.l2_entries = 16;
    d.seed = 0x123456789abcdefull;
    if (!st_make(&x, d, NULL)) return;
    memset(&ad, 0, sizeof ad);
    ad.tuples = 300;
    ad.strata = 64;
    n = hwp_strat_acc_bytes(&ad);
    hwp_strat_acc_init(&a, st_alloc(&m1, n), n, &ad, NULL);
    hwp_rng_seed(&g, 4);
    for (i = 0; i < 50000; i++) {
        uint64_t r = hwp_rng_below(&g, 500);
        hwp_strat_push(&x.s, (uint32_t)(r & 1), 0x1000 + 4 * (r % 37), r);
    }
    hwp_strat_flush(&x.s);
    hwp_strat_acc_fold(&a, x.r.m, (uint32_t)x.r.n);
    CHECK(a.st.evicted > 0); /* 500 tuples into 300 */

    st_json_strat(&x.s, &j1);
    CHECK_EQ(hwp_strat_read_desc(&d2, j1.p, j1.n, &err), HWP_OK);
    CHECK_EQ(d2.seed, d.seed);
    CHECK_EQ(d2.l2_ways, 16);
    n = hwp_strat_bytes(&d2);
    CHECK_EQ(hwp_strat_init(&y, st_alloc(&m2, n), n, &d2, NULL), HWP_OK);
    CHECK_EQ(hwp_strat_read_json(&y, j1.p, j1.n, &err), HWP_OK);
    st_json_strat(&y, &j2);
    CHECK(j1.n == j2.n && memcmp(j1.p, j2.p, j1.n) == 0);

    st_json_acc(&a, &j1);
    CHECK_EQ(hwp_strat_acc_read_desc(&ad2, j1.p, j1.n, &err), HWP_OK);
    n = hwp_strat_acc_bytes(&ad2);
    CHECK_EQ(hwp_strat_acc_init(&b, st_alloc(&m3, n), n, &ad2, NULL), HWP_OK);
    CHECK_EQ(hwp_strat_acc_read_json(&b, j1.p, j1.n, &err), HWP_OK);
    st_json_acc(&b, &j2);
    CHECK(j1.n == j2.n && memcmp(j1.p, j2.p, j1.n) == 0);
    {
        uint32_t cur = 0, wrong = 0;
        hwp_strat_msg msg;
        hwp_strat_pc p1[8], p2[8];
        while (hwp_strat_acc_next(&a, &cur, &msg)) {
            wrong += hwp_strat_acc_estimate(&a, msg.kind, msg.pc, msg.w) !=
                     hwp_strat_acc_estimate(&b, msg.kind, msg.pc, msg.w);
            wrong += hwp_strat_acc_invariance(&a, msg.kind, msg.pc, msg.w) !=
                     hwp_strat_acc_invariance(&b, msg.kind, msg.pc, msg.w);
        }
        CHECK_EQ(wrong, 0);
        CHECK_EQ(hwp_strat_acc_top_pcs(&a, 0, p1, 8), hwp_strat_acc_top_pcs(&b, 0, p2, 8));
        CHECK(memcmp(p1, p2, sizeof p1) == 0);
    }
    /* damage: cut short, and a bad number */
    CHECK_EQ(hwp_strat_acc_read_json(&b, j1.p, j1.n / 2, &err), HWP_EFORMAT);
    CHECK(err.offset > 0 && err.offset <= j1.n / 2 && err.why != NULL);
    CHECK_EQ(hwp_strat_read_json(&y, "{\"model\":\"strat\",\"version\":1,\"desc\":{\"scheme\":x}}",
                                 48, &err), HWP_EFORMAT);
    CHECK_EQ(err.offset, 46); /* the x */
    CHECK_EQ(hwp_strat_read_json(&y, "{\"model\":\"rap\",\"version\":1}", 27, &err), HWP_EFORMAT);
    /* another desc: a mismatch naming the field */
    st_free(&m3);
    ad2.tuples = 301;
    n = hwp_strat_acc_bytes(&ad2);
    hwp_strat_acc_init(&b, st_alloc(&m3, n), n, &ad2, NULL);
    CHECK_EQ(hwp_strat_acc_read_json(&b, j1.p, j1.n, &err), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&b), "strat_acc: tuples");
    CHECK_EQ(hwp_strat_merge(&y, &x.s), HWP_OK);
    st_free(&m2);
    d2.rate = 5;
    n = hwp_strat_bytes(&d2);
    hwp_strat_init(&y, st_alloc(&m2, n), n, &d2, NULL);
    st_json_strat(&x.s, &j1);
    CHECK_EQ(hwp_strat_read_json(&y, j1.p, j1.n, &err), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&y), "strat: rate");
    CHECK_EQ(hwp_strat_merge(&y, &x.s), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&y), "strat: rate");
    free(j1.p);
    free(j2.p);
    st_free(&m1);
    st_free(&m2);
    st_free(&m3);
    st_drop(&x);
}

/* Reset is a fresh init (byte-identical report after the same stream,
 * random samplers included); merge of two halves of a message stream
 * equals the whole when everything fits; the compressor's merge adds
 * counters and charges nothing. */
/* A tuple counted while its accumulator's pc table was full has its
 * events in dropped_pc_count, not in a pc entry. Merged into a profile
 * that holds the pc, the pc takes them: otherwise the tuple counts more
 * events than its pc, an invariance above 1 (found by fuzz_strat_acc:
 * section 5.3.1's error came out at 204%). */
static void test_merge_tuple_without_pc(void) {
    hwp_strat_acc src, dst;
    hwp_strat_acc_desc ad;
    hwp_strat_acc_stats st;
    hwp_strat_value v[2];
    st_mem ms, md;
    memset(&ad, 0, sizeof ad);
    memset(&st, 0, sizeof st);
    ad.tuples = 64;
    ad.pcs = 1;
    st_alloc(&ms, hwp_strat_acc_bytes(&ad));
    st_alloc(&md, hwp_strat_acc_bytes(&ad));
    if (!CHECK_EQ(hwp_strat_acc_init(&src, ms.p, hwp_strat_acc_bytes(&ad), &ad, NULL), HWP_OK) ||
        !CHECK_EQ(hwp_strat_acc_init(&dst, md.p, hwp_strat_acc_bytes(&ad), &ad, NULL), HWP_OK))
        return;
    hwp_strat_acc_add(&src, 0, 0xA000, 1, 10); /* takes src's one pc entry */
    hwp_strat_acc_add(&src, 0, 0xB000, 1, 5);  /* no pc entry left */
    hwp_strat_acc_add(&dst, 0, 0xB000, 2, 3);
    CHECK_EQ(hwp_strat_acc_merge(&dst, &src), HWP_OK);
    CHECK_EQ(hwp_strat_acc_pc_count(&dst, 0, 0xB000), 8);
    CHECK_EQ(hwp_strat_acc_top_values(&dst, 0, 0xB000, v, 2), 2);
    CHECK(v[0].invariance <= 1.0 && v[1].invariance <= 1.0);
    CHECK_NEAR(v[0].invariance, 5.0 / 8.0, 1e-12);
    /* A's 10 events found no pc entry in dst; B's 5 are no longer lost */
    CHECK_EQ(hwp_strat_acc_get_stats(&dst, &st), HWP_OK);
    CHECK_EQ(st.dropped_pc_count, 10);
    st_free(&ms);
    st_free(&md);
}

static void test_reset_merge(void) {
    hwp_strat_desc d;
    hwp_strat_acc_desc ad;
    st_inst x, y;
    hwp_strat_acc w1, h1, h2;
    st_mem m1, m2, m3;
    st_buf b1 = {0, 0, 0}, b2 = {0, 0, 0};
    hwp_cost cost;
    size_t n, i;
    uint64_t before;
    memset(&d, 0, sizeof d);
    d.sampler = HWP_STRAT_COUNTDOWN;
    d.counter = 1;
    d.rate = 8;
    d.entries = 32;
    d.seed = 9;
    hwp_cost_init(&cost, NULL);
    if (!st_make(&x, d, &cost) || !st_make(&y, d, NULL)) return;
    for (i = 0; i < 20000; i++) hwp_strat_push(&x.s, 0, i % 101, i % 7);
    hwp_strat_flush(&x.s);
    st_json_strat(&x.s, &b1);
    CHECK_EQ(hwp_strat_reset(&x.s), HWP_OK);
    before = hwp_cost_model_cycles(&cost, HWP_MODEL_STRAT);
    st_json_strat(&x.s, &b2);
    st_json_strat(&y.s, &b1); /* a fresh instance */
    CHECK(b1.n == b2.n && memcmp(b1.p, b2.p, b1.n) == 0);
    x.r.n = 0;
    for (i = 0; i < 20000; i++) {
        hwp_strat_push(&x.s, 0, i % 101, i % 7);
        hwp_strat_push(&y.s, 0, i % 101, i % 7);
    }
    hwp_strat_flush(&x.s);
    hwp_strat_flush(&y.s);
    st_json_strat(&x.s, &b1);
    st_json_strat(&y.s, &b2);
    CHECK(b1.n == b2.n && memcmp(b1.p, b2.p, b1.n) == 0);
    CHECK(x.s.st.cycles > 0);
    CHECK_EQ(x.s.st.cycles, hwp_cost_model_cycles(&cost, HWP_MODEL_STRAT) - before);
    before = hwp_cost_model_cycles(&cost, HWP_MODEL_STRAT);
    CHECK_EQ(hwp_strat_merge(&x.s, &y.s), HWP_OK);
    CHECK_EQ(hwp_cost_model_cycles(&cost, HWP_MODEL_STRAT), before);
    CHECK_EQ(x.s.st.events, 40000);

    memset(&ad, 0, sizeof ad);
    ad.strata = 32;
    n = hwp_strat_acc_bytes(&ad);
    hwp_strat_acc_init(&w1, st_alloc(&m1, n), n, &ad, NULL);
    hwp_strat_acc_init(&h1, st_alloc(&m2, n), n, &ad, NULL);
    hwp_strat_acc_init(&h2, st_alloc(&m3, n), n, &ad, NULL);
    hwp_strat_acc_fold(&w1, y.r.m, (uint32_t)y.r.n);
    hwp_strat_acc_fold(&h1, y.r.m, (uint32_t)(y.r.n / 2));
    hwp_strat_acc_fold(&h2, y.r.m + y.r.n / 2, (uint32_t)(y.r.n - y.r.n / 2));
    CHECK_EQ(hwp_strat_acc_merge(&h1, &h2), HWP_OK);
    {   /* same content; the tables' order may differ, so compare queries */
        uint32_t cur = 0, wrong = 0;
        hwp_strat_msg msg;
        hwp_strat_acc_stats s1, s2;
        while (hwp_strat_acc_next(&w1, &cur, &msg))
            wrong += hwp_strat_acc_count(&h1, msg.kind, msg.pc, msg.w) != msg.count ||
                     hwp_strat_acc_estimate(&h1, msg.kind, msg.pc, msg.w) !=
                         hwp_strat_acc_estimate(&w1, msg.kind, msg.pc, msg.w);
        CHECK_EQ(wrong, 0);
        hwp_strat_acc_get_stats(&w1, &s1);
        hwp_strat_acc_get_stats(&h1, &s2);
        CHECK(memcmp(&s1, &s2, sizeof s1) == 0);
    }
    CHECK_EQ(hwp_strat_acc_reset(&h1), HWP_OK);
    hwp_strat_acc_init(&h2, m3.p, n, &ad, NULL);
    st_json_acc(&h1, &b1);
    st_json_acc(&h2, &b2);
    CHECK(b1.n == b2.n && memcmp(b1.p, b2.p, b1.n) == 0);
    free(b1.p);
    free(b2.p);
    st_free(&m1);
    st_free(&m2);
    st_free(&m3);
    st_drop(&x);
    st_drop(&y);
}

/* HWP_STRAT_BYTES equals hwp_strat_bytes for every scheme, sampler and
 * hash, zero (default) and explicit sizes; usable in a constant
 * expression for static storage. */
static unsigned char st_static_mem[HWP_STRAT_BYTES(HWP_STRAT_SAMPLED, HWP_STRAT_PERIODIC,
                                                   HWP_STRAT_HASH_PAPER, 0, 16, 0)];
static void test_bytes_macro(void) {
    uint32_t scheme, sampler, hash, e, l2, q;
    static const uint32_t es[] = {0, 1, 64, 4096}, l2s[] = {0, 16, 256}, qs[] = {0, 1, 333};
    hwp_strat s;
    hwp_strat_desc d;
    for (scheme = 0; scheme < 3; scheme++)
        for (sampler = 0; sampler < 3; sampler++)
            for (hash = 0; hash < 2; hash++)
                for (e = 0; e < 4; e++)
                    for (l2 = 0; l2 < 3; l2++)
                        for (q = 0; q < 3; q++) {
                            size_t want;
                            memset(&d, 0, sizeof d);
                            d.scheme = scheme;
                            d.sampler = sampler;
                            d.hash = hash;
                            d.entries = es[e];
                            d.l2_entries = scheme ? 0 : l2s[l2];
                            d.queue = qs[q];
                            if (scheme == HWP_STRAT_ASSOC && d.entries == 0) d.ways = 8;
                            want = hwp_strat_bytes(&d);
                            if (!want) continue; /* e.g. tagged with 1 entry, 2 ways */
                            if (!CHECK_EQ(HWP_STRAT_BYTES(d.scheme, d.sampler, d.hash,
                                                          d.entries, d.l2_entries, d.queue),
                                          want))
                                printf("    %u %u %u %u %u %u\n", scheme, sampler, hash,
                                       es[e], d.l2_entries, qs[q]);
                        }
    memset(&d, 0, sizeof d);
    d.l2_entries = 16;
    CHECK_EQ(sizeof st_static_mem, hwp_strat_bytes(&d));
    CHECK_EQ(hwp_strat_init(&s, st_static_mem + 1, sizeof st_static_mem - 1, &d, NULL),
             HWP_ENOSPC);
    CHECK_EQ(hwp_strat_init(&s, st_static_mem, sizeof st_static_mem, &d, NULL), HWP_OK);
}

/* HWP_STRAT_ACC_BYTES equals hwp_strat_acc_bytes for default and
 * power-of-two sizes, and gives static storage an accumulator takes. */
static unsigned char acc_static_mem[HWP_STRAT_ACC_BYTES(64, 0, 8)];
static void test_acc_bytes_macro(void) {
    static const uint32_t ts[] = {0, 1, 2, 64, 4096}, ps[] = {0, 1, 16, 1024},
                          ss[] = {0, 1, 256};
    hwp_strat_acc_desc d;
    hwp_strat_acc a;
    size_t t, p, k;
    for (t = 0; t < 5; t++)
        for (p = 0; p < 4; p++)
            for (k = 0; k < 3; k++) {
                memset(&d, 0, sizeof d);
                d.tuples = ts[t];
                d.pcs = ps[p];
                d.strata = ss[k];
                if (!CHECK_EQ(HWP_STRAT_ACC_BYTES(ts[t], ps[p], ss[k]), hwp_strat_acc_bytes(&d)))
                    printf("    tuples %u pcs %u strata %u\n", ts[t], ps[p], ss[k]);
            }
    memset(&d, 0, sizeof d);
    d.tuples = 64;
    d.strata = 8;
    CHECK_EQ(sizeof acc_static_mem, hwp_strat_acc_bytes(&d));
    CHECK_EQ(hwp_strat_acc_init(&a, acc_static_mem, sizeof acc_static_mem, &d, NULL), HWP_OK);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_defaults);
    HWT_RUN(test_invalid);
    HWT_RUN(test_periodic_exact);
    HWT_RUN(test_stratified_periodic);
    HWT_RUN(test_periodic_thin_strata);
    HWT_RUN(test_counter_sums);
    HWT_RUN(test_random_rates);
    HWT_RUN(test_tagged_fig6);
    HWT_RUN(test_tagged_length);
    HWT_RUN(test_assoc_lossless);
    HWT_RUN(test_two_level);
    HWT_RUN(test_queue_cost);
    HWT_RUN(test_simultaneous);
    HWT_RUN(test_acc);
    HWT_RUN(test_acc_lost_widens);
    HWT_RUN(test_acc_estimate);
    HWT_RUN(test_metric);
    HWT_RUN(test_metric_huge_counts);
    HWT_RUN(test_reports);
    HWT_RUN(test_determinism);
    HWT_RUN(test_kinds_apart);
    HWT_RUN(test_push_in_handler);
    HWT_RUN(test_estimate_compositions);
    HWT_RUN(test_count_bits_32);
    HWT_RUN(test_bad_compositions);
    HWT_RUN(test_fast_hash_exact);
    HWT_RUN(test_json_roundtrip);
    HWT_RUN(test_reset_merge);
    HWT_RUN(test_merge_tuple_without_pc);
    HWT_RUN(test_bytes_macro);
    HWT_RUN(test_acc_bytes_macro);
    return hwt_end();
}
