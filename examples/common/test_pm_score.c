/* Unit test of ProfileMe's scores against the core's exact timing
 * (hwx__pm_score, hwx_pm.c): Fig. 3's envelope for total latency, the
 * wasted-issue-slot error of 5.2.3 and the top-20 overlap, on hand-made
 * sample records and exact tables whose answers are worked out below
 * from the estimators' formulas in Dean et al. (kS per sample, and
 * L_I C S / 2 - U_I W S for wasted slots), not from the code under test. */
#include "hwx_int.h"

#include <stdlib.h>

#include "harness.h"

#define PC(i) (0x1000u + 16u * (uint64_t)(i))

typedef struct fixture {
    hwx_exact x;
    void *xmem;
    hwp_pm_table t;
    void *tmem;
} fixture;

static void fx_init(fixture *f, uint32_t paired, uint32_t window, uint32_t capacity) {
    hwx_opts o;
    hwp_pm_table_desc td;
    unsigned char *cur;
    size_t n;
    hwx_opts_default(&o);
    o.exact_bytes = 1u << 16;
    o.models |= HWX_M_CORE;
    n = hwx__exact_bytes(&o) + HWP_ALIGN;
    f->xmem = calloc(1, n);
    cur = (unsigned char *)f->xmem;
    cur += (HWP_ALIGN - ((uintptr_t)cur & (HWP_ALIGN - 1))) & (HWP_ALIGN - 1);
    hwx__exact_init(&f->x, &cur, &o);
    hwp_zero(&td, sizeof td);
    td.interval = 100;
    td.paired = paired;
    td.window = window;
    td.issue_width = 4;
    td.capacity = capacity;
    n = hwp_pm_table_bytes(&td);
    f->tmem = calloc(1, n);
    CHECK_EQ(hwp_pm_table_init(&f->t, f->tmem, n, &td, NULL), HWP_OK);
}

static void fx_free(fixture *f) {
    free(f->xmem);
    free(f->tmem);
}

/* n executions of pc taking lat cycles each (fetch -> retire-ready) and
 * wasting `wasted` issue slots in all. */
static void exact_pc(fixture *f, uint64_t pc, uint64_t n, uint64_t lat,
                     uint64_t wasted) {
    hwx__xtab_add(&f->x.pc, pc, 0, n, 0);
    hwx__xtab_add(&f->x.tm, pc, HWX_TM_LATENCY, n, n * lat);
    hwx__xtab_add(&f->x.tm, pc, HWX_TM_WASTED, n, wasted);
}

static hwp_pm_record rec(uint64_t pc, uint32_t lat, uint32_t flags) {
    hwp_pm_record r;
    hwp_zero(&r, sizeof r);
    r.pc = pc;
    r.lat[HWP_PM_LAT_ISSUE_RR] = lat; /* issue at offset 0, ready at lat */
    r.flags = flags;
    return r;
}

static void samples(fixture *f, uint64_t pc, uint32_t k, uint32_t lat) {
    hwp_pm_record r = rec(pc, lat, HWP_PM_F_RETIRED);
    while (k--) CHECK_EQ(hwp_pm_table_add(&f->t, &r, 1), HWP_OK);
}

/* Single sampling, S = 100. PCs 1..25 run 2000 times each (E[k] = 20, so
 * the envelope is 1 +/- 0.2236) taking 10 i cycles: exact total latency
 * 20000 i, exact top-20 = PCs 6..25. A sample of PC i stands for 100
 * fetches, so k samples estimate 1000 k i. Most PCs get k = 20 (ratio 1);
 * PC 1: k = 40 (ratio 2, out), PC 3: k = 50 (2.5, out), PC 4: k = 24
 * (1.2, in), PC 25: k = 10 (0.5, out): 22 of 25 inside. Estimated top-20:
 * 24..13 (480000..260000), 25 (250000), 12..8, 3 (150000), 7 (140000):
 * PC 6 (120000) falls out, overlap 19/20. PC 26 (900 runs, E[k] = 9) is
 * below the minimum and not scored; its latency is the smallest. */
static void test_single(void) {
    fixture f;
    hwx_metric m[4];
    uint32_t i;
    fx_init(&f, 0, 0, 0);
    for (i = 1; i <= 25; i++) {
        exact_pc(&f, PC(i), 2000, 10u * i, 7);
        samples(&f, PC(i), i == 1 ? 40 : i == 3 ? 50 : i == 4 ? 24 : i == 25 ? 10 : 20,
                10u * i);
    }
    exact_pc(&f, PC(26), 900, 1, 0);
    hwx__pm_score(&f.t, &f.x, 10.0, false, m);
    CHECK(m[0].valid);
    CHECK_EQ(m[0].n, 25);
    CHECK_NEAR(m[0].value, 22.0 / 25.0, 1e-12);
    CHECK(!m[1].valid && !m[2].valid); /* single sampling: no wasted slots */
    CHECK(m[3].valid);
    CHECK_EQ(m[3].n, 20);
    CHECK_NEAR(m[3].value, 19.0 / 20.0, 1e-12);
    /* An execution without a timing (sampled mode, or lost): no score. */
    hwx__xtab_add(&f.x.pc, PC(27), 0, 1, 0);
    hwx__pm_score(&f.t, &f.x, 10.0, false, m);
    CHECK(!m[0].valid && !m[1].valid && !m[2].valid && !m[3].valid);
    fx_free(&f);
}

/* Paired sampling, S = 100 (S / 2 = 50 per sample), W = 8, C = 4. PCs A,
 * B, C run 1000 times (E[k] = 20) taking 5, 3 and 5 cycles. Each gets 20
 * pairs as the first; A's and B's partners aborted (never useful), C's
 * retired and issued one cycle into C's 5 in-progress cycles (useful).
 * Latency estimates 50 x 20 x lat equal the truth (all inside).
 * Wasted slots, L C S / 2 - U W S: A 100 x 4 x 50 = 20000 (exact 16000),
 * B 60 x 200 = 12000 (exact 12000), C 100 x 200 - 20 x 8 x 100 = 4000
 * (exact 5000): error (4000 + 0 + 1000) / 33000, ratio 36000 / 33000.
 * The partners' PCs are
 * not in the exact profile, so the exact top-20 is A, B, C, all among
 * the estimated top-20. */
static void test_paired(void) {
    fixture f;
    hwx_metric m[4];
    const uint64_t pcs[3] = {0x2000, 0x2010, 0x2020};
    const uint32_t lat[3] = {5, 3, 5};
    /* the core's figures: it counts I's own issue (1000 executions) as
     * used, the paper's estimator does not, so the truths the score takes
     * are 16000, 12000, 5000 */
    const uint64_t wasted[3] = {15000, 11000, 4000};
    uint32_t i, k;
    fx_init(&f, 1, 8, 0);
    for (i = 0; i < 3; i++) {
        exact_pc(&f, pcs[i], 1000, lat[i], wasted[i]);
        for (k = 0; k < 20; k++) {
            hwp_pm_record r[2];
            r[0] = rec(pcs[i], lat[i], HWP_PM_F_RETIRED | HWP_PM_F_FIRST);
            r[1] = i < 2 ? rec(0x9000, 0, HWP_PM_F_SECOND)
                         : rec(0x9100, 0, HWP_PM_F_RETIRED | HWP_PM_F_SECOND);
            r[0].pair_latency = r[1].pair_latency = 1;
            r[0].pair_distance = r[1].pair_distance = 1;
            CHECK_EQ(hwp_pm_table_add(&f.t, r, 2), HWP_OK);
        }
    }
    hwx__pm_score(&f.t, &f.x, 10.0, true, m);
    CHECK(m[0].valid);
    CHECK_EQ(m[0].n, 3);
    CHECK_NEAR(m[0].value, 1.0, 1e-12);
    CHECK(m[1].valid);
    CHECK_NEAR(m[1].value, 5000.0 / 33000.0, 1e-12);
    CHECK(m[2].valid);
    CHECK_NEAR(m[2].value, 36000.0 / 33000.0, 1e-12);
    CHECK(m[3].valid);
    CHECK_EQ(m[3].n, 3);
    CHECK_NEAR(m[3].value, 1.0, 1e-12);
    fx_free(&f);
}

/* A table of 8 entries holds 7 PCs. Seven PCs sampled as their exact
 * runs expect score (every estimate exact); an eighth PC's samples find
 * the table full and are dropped: scored, its estimate would read 0 and
 * fall outside, though the sampler saw it as often as the others. No
 * score rather than that one. */
static void test_full_table(void) {
    fixture f;
    hwx_metric m[4];
    uint32_t i;
    fx_init(&f, 0, 0, 8);
    for (i = 1; i <= 7; i++) {
        exact_pc(&f, PC(i), 2000, 10, 0);
        samples(&f, PC(i), 20, 10);
    }
    hwx__pm_score(&f.t, &f.x, 10.0, false, m);
    CHECK(m[0].valid && m[3].valid);
    CHECK_NEAR(m[0].value, 1.0, 1e-12);
    exact_pc(&f, PC(8), 2000, 10, 0);
    samples(&f, PC(8), 20, 10);
    hwx__pm_score(&f.t, &f.x, 10.0, false, m);
    CHECK(!m[0].valid && !m[1].valid && !m[2].valid && !m[3].valid);
    fx_free(&f);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_single);
    HWT_RUN(test_paired);
    HWT_RUN(test_full_table);
    return hwt_end();
}
