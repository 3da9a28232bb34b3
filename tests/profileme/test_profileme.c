/* Unit tests for hwprof/profileme.h: selection, tags and profile registers,
 * buffering and costs, paired sampling, the per-PC table, estimators and
 * path reconstruction. Expected values are worked out here from the paper's
 * definitions, never read back from the model. */
#define HWPROF_IMPL
#include "hwprof/profileme.h"

#include "harness.h"
#include "pm_storage.h"
STORAGE(mem, 1 << 16);
STORAGE(tmem, 1 << 20);
STORAGE(tmem2, 1 << 20);

/* Records captured by the deliver callback. */
static struct {
    hwp_pm_record r[4096];
    uint32_t n, calls, max_batch;
} cap;

static void capture(void *user, const hwp_pm_record *r, uint32_t n) {
    uint32_t i;
    (void)user;
    cap.calls++;
    if (n > cap.max_batch) cap.max_batch = n;
    for (i = 0; i < n && cap.n < 4096; i++) cap.r[cap.n++] = r[i];
}

static void cap_reset(void) { memset(&cap, 0, sizeof cap); }

static void test_desc_validation(void) {
    hwp_pm_desc d;
    hwp_pm p;
    memset(&d, 0, sizeof d);
    CHECK_EQ(hwp_pm_bytes(NULL), HWP_PM_BYTES(1, 1));
    CHECK_EQ(hwp_pm_bytes(&d), HWP_PM_BYTES(1, 1));
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), NULL, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_interval(&p), 10000);
    CHECK_EQ(hwp_pm_window(&p), 80);
    CHECK_STR(hwp_why(&p), "");
    d.paired = 1;
    CHECK_EQ(hwp_pm_bytes(&d), HWP_PM_BYTES(2, 2));
    d.dist = 7;
    CHECK_EQ(hwp_pm_bytes(&d), 0);
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "dist");
    d.dist = 0;
    d.interval = 50; /* below W + 1 = 81 */
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "interval");
    d.interval = 100;
    d.ways = 1;
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_EINVAL);
    d.ways = 0;
    d.history = 65;
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_EINVAL);
    d.history = 0;
    /* Storage of any alignment: hwp_pm_bytes includes the padding, so
     * that many bytes at any address are enough and one fewer is not at
     * the worst one (one byte past an aligned address). */
    CHECK_EQ(hwp_pm_init(&p, mem + 1, HWP_PM_BYTES(2, 2), &d, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_init(&p, mem + 1, HWP_PM_BYTES(2, 2) - 1, &d, NULL),
             HWP_ENOSPC);
    CHECK_EQ(hwp_pm_init(&p, mem + 8, HWP_PM_BYTES(2, 2), &d, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_init(&p, mem, HWP_PM_BYTES(2, 2), &d, NULL), HWP_OK);
    /* A handle that was never initialised is refused by cold calls. */
    memset(&p, 0, sizeof p);
    CHECK_EQ(hwp_pm_tag(&p, 1, 1), 0);
    CHECK_EQ(hwp_pm_flush(&p), HWP_EINVAL);
    CHECK_EQ(hwp_pm_retire(&p, 1, 1), HWP_EINVAL);
    CHECK_EQ(hwp_pm_fetched(&p), 0);
}

/* With a fixed interval the counter selects exactly every S-th fetch. */
static void test_fixed_interval(void) {
    hwp_pm_desc d;
    hwp_pm p;
    uint32_t i, hits = 0, wrong = 0;
    memset(&d, 0, sizeof d);
    d.interval = 100;
    d.dist = HWP_PM_DIST_FIXED;
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_OK);
    for (i = 1; i <= 1000; i++) {
        if (hwp_pm_fetch(&p)) {
            hits++;
            if (i % 100) wrong++;
            uint32_t tag = hwp_pm_tag(&p, i, i);
            CHECK(tag != 0);
            hwp_pm_retire(&p, tag, i);
        }
    }
    CHECK_EQ(hits, 10);
    CHECK_EQ(wrong, 0);
    CHECK_EQ(hwp_pm_fetched(&p), 1000);
    CHECK_EQ(p.st.selected, 10);
    /* Tagging with no selection pending is a state error. */
    CHECK_EQ(hwp_pm_tag(&p, 5, 5), 0);
    CHECK_EQ(p.head.status, HWP_ESTATE);
}

/* Intervals of each distribution: mean S and the documented range. */
static void check_dist(uint32_t dist, uint32_t S, uint32_t paired) {
    hwp_pm_desc d;
    hwp_pm p;
    uint64_t i, last = 0, n = 0, lo = ~(uint64_t)0, hi = 0;
    double sum = 0, sum2 = 0, mean, sd;
    uint64_t floor = 1 + (paired ? 80 : 0);
    memset(&d, 0, sizeof d);
    d.interval = S;
    d.dist = dist;
    d.paired = paired;
    d.seed = 99;
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_OK);
    for (i = 1; i <= 4000000; i++) {
        if (!hwp_pm_fetch(&p)) continue;
        uint32_t tag = hwp_pm_tag(&p, i, i);
        int first = tag && (p.slots[(tag & 31u) - 1].rec.flags &
                            HWP_PM_F_SECOND) == 0;
        if (tag) hwp_pm_retire(&p, tag, i);
        if (!first) continue; /* intervals run from first to first */
        if (last) {
            uint64_t gap = i - last;
            sum += (double)gap;
            sum2 += (double)gap * (double)gap;
            n++;
            if (gap < lo) lo = gap;
            if (gap > hi) hi = gap;
        }
        last = i;
    }
    CHECK(n > 1000);
    if (n < 2) return;
    /* The mean is S within 4 standard errors. */
    mean = sum / (double)n;
    sd = sqrt((sum2 - sum * mean) / (double)(n - 1));
    CHECK_NEAR(mean, S, 4.0 * sd / sqrt((double)n));
    CHECK(lo >= floor);
    if (dist == HWP_PM_DIST_UNIFORM) CHECK(hi <= 2 * S - floor);
    if (dist == HWP_PM_DIST_GEOMETRIC) CHECK(hi > 3 * S); /* long tail */
}

static void test_interval_distributions(void) {
    check_dist(HWP_PM_DIST_UNIFORM, 1000, 0);
    check_dist(HWP_PM_DIST_GEOMETRIC, 1000, 0);
    check_dist(HWP_PM_DIST_UNIFORM, 1000, 1);
    check_dist(HWP_PM_DIST_GEOMETRIC, 500, 1);
}

/* Same seed, same selections; another seed, other selections; the block
 * entry point selects exactly the instructions the per-fetch one does. */
static uint32_t run_select(uint64_t seed, uint32_t block, uint32_t *out,
                           uint32_t max) {
    STORAGE(m, 4096);
    hwp_pm_desc d;
    hwp_pm p;
    uint32_t i, n = 0, k;
    memset(&d, 0, sizeof d);
    d.interval = 50;
    d.seed = seed;
    if (hwp_pm_init(&p, m, (size_t)4096, &d, NULL) != HWP_OK) return 0;
    for (i = 0; i < 13u * 2000u; i += block) {
        uint32_t base = i, left = block;
        if (block == 1) {
            if (hwp_pm_fetch(&p) && n < max) {
                out[n++] = i + 1;
                hwp_pm_retire(&p, hwp_pm_tag(&p, i + 1, i + 1), i + 1);
            }
            continue;
        }
        while ((k = hwp_pm_fetch_block(&p, left)) != 0 && n < max) {
            out[n++] = base + k;
            hwp_pm_retire(&p, hwp_pm_tag(&p, base + k, base + k), base + k);
            base += k;
            left -= k;
        }
    }
    return hwp_pm_fetched(&p) == 13u * 2000u ? n : 0;
}

static void test_determinism_and_blocks(void) {
    static uint32_t a[2000], b[2000], c[2000], e[2000];
    uint32_t na = run_select(7, 1, a, 2000), nb = run_select(7, 1, b, 2000);
    uint32_t nc = run_select(7, 13, c, 2000), ne = run_select(8, 1, e, 2000);
    CHECK(na > 400);
    CHECK_EQ(na, nb);
    CHECK(memcmp(a, b, na * sizeof a[0]) == 0);
    CHECK_EQ(na, nc);
    CHECK(memcmp(a, c, na * sizeof a[0]) == 0);
    CHECK(ne > 400);
    CHECK(ne != na || memcmp(a, e, na * sizeof a[0]) != 0);
}

/* One selection with a known interval: S = 1 and FIXED selects every
 * fetch, which lets a test drive the tag protocol directly. */
static void init_every(hwp_pm *p, uint32_t ways, uint32_t buffer,
                       hwp_cost *cost) {
    hwp_pm_desc d;
    memset(&d, 0, sizeof d);
    d.interval = 1;
    d.dist = HWP_PM_DIST_FIXED;
    d.ways = ways;
    d.buffer = buffer;
    d.history = 8;
    d.deliver = capture;
    hwp_pm_init(p, mem, (size_t)(1 << 16), &d, cost);
}

static void test_record_contents(void) {
    static const uint32_t lat1[HWP_PM_LAT_COUNT] = {3, 7, 2, 8, 11, 38};
    static const uint32_t lat2[HWP_PM_LAT_COUNT] = {0, 0, 5, 0, 4, 0};
    hwp_pm p;
    uint32_t t, i;
    cap_reset();
    init_every(&p, 1, 1, NULL);
    CHECK_EQ(p.head.status, HWP_OK);
    /* 10 branches: directions 1,0,1,1,0,0,1,0,1,1 (newest last). */
    for (i = 0; i < 10; i++) hwp_pm_branch(&p, (0x2D3u >> (9 - i)) & 1u);
    hwp_pm_set_context(&p, 42);
    CHECK(hwp_pm_fetch(&p));
    t = hwp_pm_tag(&p, 0x1000, 100);
    CHECK(t != 0);
    CHECK_EQ(hwp_pm_stage(&p, t, HWP_PM_ST_MAP, 103), HWP_OK);
    CHECK_EQ(hwp_pm_stage(&p, t, HWP_PM_ST_DATA_READY, 110), HWP_OK);
    CHECK_EQ(hwp_pm_stage(&p, t, HWP_PM_ST_ISSUE, 112), HWP_OK);
    CHECK_EQ(hwp_pm_stage(&p, t, HWP_PM_ST_LOAD_ISSUE, 112), HWP_OK);
    CHECK_EQ(hwp_pm_stage(&p, t, HWP_PM_ST_LOAD_DONE, 150), HWP_OK);
    CHECK_EQ(hwp_pm_stage(&p, t, HWP_PM_ST_RETIRE_READY, 120), HWP_OK);
    CHECK_EQ(hwp_pm_stage(&p, t, HWP_PM_ST_FETCH, 1), HWP_EINVAL);
    CHECK_EQ(hwp_pm_note(&p, t, HWP_CLS_LOAD, 0xBEEF, HWP_EV_DCMISS), HWP_OK);
    CHECK_EQ(cap.n, 0);
    CHECK_EQ(hwp_pm_retire(&p, t, 131), HWP_OK);
    CHECK_EQ(cap.n, 1);
    if (cap.n != 1) return;
    CHECK_EQ(cap.r[0].pc, 0x1000);
    CHECK_EQ(cap.r[0].context, 42);
    CHECK_EQ(cap.r[0].addr, 0xBEEF);
    CHECK_EQ(cap.r[0].cls, HWP_CLS_LOAD);
    CHECK_EQ(cap.r[0].events, HWP_EV_DCMISS);
    CHECK_EQ(cap.r[0].flags, HWP_PM_F_RETIRED);
    CHECK_EQ(cap.r[0].history, 0x2D3u & 0xFFu); /* h = 8 bits kept */
    /* Table 1 in HWP_PM_LAT_* order: 103-100, 110-103, 112-110, 120-112,
     * 131-120 and the load's 150-112. */
    CHECK(memcmp(cap.r[0].lat, lat1, sizeof lat1) == 0);
    CHECK_EQ(hwp_pm_rec_in_progress(&cap.r[0]), 20);
    CHECK_EQ(hwp_pm_rec_offset(&cap.r[0], HWP_PM_ST_ISSUE), 12);
    /* The record has completed: retiring it twice fails the tag check. */
    CHECK_EQ(hwp_pm_retire(&p, t, 140), HWP_ESTATE);
    CHECK_HAS(hwp_why(&p), "late");
    CHECK_EQ(p.st.late, 1);

    /* A host that reports only issue: fetch->issue lands on READY_ISSUE
     * (the next reported stage), then issue->retire on RR_RETIRE. */
    CHECK(hwp_pm_fetch(&p));
    t = hwp_pm_tag(&p, 0x2000, 200);
    hwp_pm_stage(&p, t, HWP_PM_ST_ISSUE, 205);
    hwp_pm_retire(&p, t, 209);
    CHECK_EQ(cap.n, 2);
    CHECK(memcmp(cap.r[1].lat, lat2, sizeof lat2) == 0);

    /* An abort carries its reason and no RETIRED flag. */
    CHECK(hwp_pm_fetch(&p));
    t = hwp_pm_tag(&p, 0x3000, 300);
    hwp_pm_note(&p, t, 0, 0, HWP_EV_MISPRED | HWP_EV_ABORTED);
    CHECK_EQ(hwp_pm_abort(&p, t, 5), HWP_OK);
    CHECK_EQ(cap.n, 3);
    CHECK_EQ(cap.r[2].flags & HWP_PM_F_RETIRED, 0);
    CHECK_EQ(cap.r[2].events, HWP_EV_MISPRED | HWP_EV_ABORTED);
    CHECK_EQ(cap.r[2].trap, 5);
    CHECK_EQ(p.st.retired, 2);
    CHECK_EQ(p.st.aborted, 1);
}

/* hwp_pm_insn: the host without a pipeline. History is sampled before the
 * instruction's own branch outcome is shifted in. */
static void test_insn_entry(void) {
    hwp_pm p;
    hwp_insn in;
    cap_reset();
    init_every(&p, 1, 1, NULL);
    memset(&in, 0, sizeof in);
    in.pc = 0x40;
    in.cls = HWP_CLS_BR_COND;
    in.events = HWP_EV_TAKEN;
    in.addr = 0x80;
    hwp_pm_insn(&p, &in, 10);
    in.pc = 0x44;
    in.events = 0;
    hwp_pm_insn(&p, &in, 11);
    in.pc = 0x48;
    in.cls = HWP_CLS_LOAD;
    in.events = HWP_EV_ABORTED | HWP_EV_TRAP;
    hwp_pm_insn(&p, &in, 12);
    CHECK_EQ(cap.n, 3);
    CHECK_EQ(cap.r[0].history, 0);
    CHECK_EQ(cap.r[1].history, 1);
    CHECK_EQ(cap.r[2].history, 2);
    CHECK_EQ(cap.r[0].events, HWP_EV_TAKEN);
    CHECK_EQ(cap.r[0].addr, 0x80);
    CHECK_EQ(cap.r[2].flags & HWP_PM_F_RETIRED, 0);
    CHECK_EQ(cap.r[2].trap, 1);
    CHECK_EQ(p.history, 2); /* taken, not taken; the load is no branch */
}

/* K-record buffer: one interrupt per K records, costs charged per delivery
 * (214) and per record (20), flush delivers the remainder (4.3). */
static void test_buffer_and_cost(void) {
    hwp_pm p;
    hwp_cost c;
    uint32_t i;
    cap_reset();
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    init_every(&p, 1, 4, &c);
    for (i = 0; i < 10; i++) {
        CHECK(hwp_pm_fetch(&p));
        hwp_pm_retire(&p, hwp_pm_tag(&p, 0x100 + 4 * i, i), i);
    }
    CHECK_EQ(cap.calls, 2);
    CHECK_EQ(cap.n, 8);
    CHECK_EQ(cap.max_batch, 4);
    CHECK_EQ(c.count[HWP_COST_PM_INTERRUPT], 2);
    CHECK_EQ(c.total, 2 * 214 + 8 * 20);
    CHECK_EQ(hwp_pm_flush(&p), HWP_OK);
    CHECK_EQ(cap.calls, 3);
    CHECK_EQ(cap.n, 10);
    CHECK_EQ(c.total, 3 * 214 + 10 * 20);
    CHECK_EQ(hwp_cost_model_cycles(&c, HWP_MODEL_PROFILEME), c.total);
    CHECK_EQ(hwp_pm_flush(&p), HWP_OK); /* nothing buffered: no interrupt */
    CHECK_EQ(cap.calls, 3);
    for (i = 0; i < 10; i++) CHECK_EQ(cap.r[i].pc, 0x100 + 4 * i);
    CHECK_EQ(p.st.delivered, 10);
    CHECK_EQ(p.st.interrupts, 3);
}

/* All profile registers busy: the selection is lost and counted. */
static void test_busy_drop(void) {
    hwp_pm p;
    uint32_t t1, t2;
    cap_reset();
    init_every(&p, 1, 1, NULL);
    CHECK(hwp_pm_fetch(&p));
    t1 = hwp_pm_tag(&p, 0x10, 1);
    CHECK(t1 != 0);
    CHECK(hwp_pm_fetch(&p));
    t2 = hwp_pm_tag(&p, 0x14, 2);
    CHECK_EQ(t2, 0);
    CHECK_EQ(p.st.dropped, 1);
    CHECK_EQ(p.head.status, HWP_OK);
    hwp_pm_retire(&p, t1, 5);
    CHECK_EQ(cap.n, 1);
    /* Two ways hold two in-flight instructions. */
    init_every(&p, 2, 1, NULL);
    CHECK(hwp_pm_fetch(&p));
    t1 = hwp_pm_tag(&p, 0x10, 1);
    CHECK(hwp_pm_fetch(&p));
    t2 = hwp_pm_tag(&p, 0x14, 2);
    CHECK(t1 != 0 && t2 != 0 && t1 != t2);
    hwp_pm_retire(&p, t2, 3);
    hwp_pm_retire(&p, t1, 4);
    CHECK_EQ(cap.n, 3);
    CHECK_EQ(cap.r[1].pc, 0x14); /* completion order */
    CHECK_EQ(cap.r[2].pc, 0x10);
}

/* Empty fetch opportunities only in UNIT_SLOT mode. */
static void test_empty_slots(void) {
    hwp_pm_desc d;
    hwp_pm p;
    cap_reset();
    memset(&d, 0, sizeof d);
    d.interval = 1;
    d.dist = HWP_PM_DIST_FIXED;
    d.deliver = capture;
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_OK);
    CHECK(hwp_pm_fetch(&p));
    CHECK_EQ(hwp_pm_tag_empty(&p, 3), HWP_ESTATE);
    d.unit = HWP_PM_UNIT_SLOT;
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_OK);
    CHECK(hwp_pm_fetch(&p));
    CHECK_EQ(hwp_pm_tag_empty(&p, 3), HWP_OK);
    CHECK_EQ(cap.n, 1);
    CHECK(cap.r[0].flags & HWP_PM_F_EMPTY);
    CHECK_EQ(p.st.empty, 1);
}

/* ---- paired sampling --------------------------------------------------- */

enum { PW = 16 };
static struct {
    uint64_t hist[PW + 1];
    uint64_t pairs, apart, bad_distance, bad_latency, records;
} pc_;

/* Each record's pc is the host's own fetch index, so the distance is
 * measured by the host, independently of the model's pair_distance. */
static void pair_check(void *user, const hwp_pm_record *r, uint32_t n) {
    uint32_t i;
    (void)user;
    pc_.records += n;
    for (i = 0; i < n; i++) {
        uint64_t dist;
        if (!(r[i].flags & HWP_PM_F_FIRST) || i + 1 >= n ||
            !(r[i + 1].flags & HWP_PM_F_SECOND)) {
            pc_.apart++;
            continue;
        }
        dist = r[i + 1].pc - r[i].pc;
        if (dist >= 1 && dist <= PW) pc_.hist[dist]++;
        else pc_.bad_distance++;
        if (r[i].pair_distance != dist || r[i + 1].pair_distance != dist)
            pc_.bad_distance++;
        /* The host's clock: fetch cycle = index / 4 (4-wide fetch). */
        if (r[i].pair_latency != r[i + 1].pc / 4 - r[i].pc / 4 ||
            r[i + 1].pair_latency != r[i].pair_latency)
            pc_.bad_latency++;
        pc_.pairs++;
        i++;
    }
}

static void test_paired_sampling(void) {
    hwp_pm_desc d;
    hwp_pm p;
    hwp_rng host;
    struct { uint32_t tag; uint64_t due; } fl[8];
    uint32_t nfl = 0, j, k;
    uint64_t i;
    double chi2 = 0, e;
    memset(&pc_, 0, sizeof pc_);
    memset(&d, 0, sizeof d);
    d.paired = 1;
    d.window = PW;
    d.interval = 200;
    d.buffer = 8;
    d.ways = 4; /* two pairs may overlap: T can be as short as W + 1 */
    d.seed = 2024;
    d.deliver = pair_check;
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_OK);
    hwp_rng_seed(&host, 5);
    /* A toy pipeline: each tagged instruction completes 0..40 fetches
     * later, retiring or (1 in 8) aborting, in any order. */
    for (i = 1; i <= 4000000; i++) {
        if (hwp_pm_fetch(&p)) {
            uint32_t t = hwp_pm_tag(&p, i, i / 4);
            if (t && nfl < 8) {
                fl[nfl].tag = t;
                fl[nfl++].due = i + hwp_rng_below(&host, 41);
            }
        }
        for (j = 0; j < nfl;) {
            if (fl[j].due > i) { j++; continue; }
            if (hwp_rng_below(&host, 8) == 0) hwp_pm_abort(&p, fl[j].tag, 2);
            else hwp_pm_retire(&p, fl[j].tag, i / 4 + 3);
            fl[j] = fl[--nfl];
        }
    }
    hwp_pm_flush(&p);
    CHECK_EQ(p.st.dropped, 0);
    CHECK(pc_.pairs > 15000);
    CHECK_EQ(pc_.apart, 0);
    CHECK_EQ(pc_.bad_distance, 0);
    CHECK_EQ(pc_.bad_latency, 0);
    CHECK_EQ(pc_.records, 2 * pc_.pairs);
    /* Uniform on 1..W: chi-square with W - 1 = 15 degrees of freedom,
     * critical value 37.70 at p = 0.001. */
    e = (double)pc_.pairs / PW;
    for (k = 1; k <= PW; k++)
        chi2 += ((double)pc_.hist[k] - e) * ((double)pc_.hist[k] - e) / e;
    printf("    paired: %llu pairs, chi2 = %.2f (15 dof)\n",
           (unsigned long long)pc_.pairs, chi2);
    CHECK(chi2 < 37.70);
    /* Pairs arrive every S fetches on average (first to first). */
    CHECK_NEAR((double)hwp_pm_fetched(&p) / (double)p.st.pairs, 200, 4);
}

/* A pair whose first completes before the second is even selected, and
 * one whose second completes first: both are delivered together. */
static void test_pair_completion_orders(void) {
    hwp_pm_desc d;
    hwp_pm p;
    uint32_t t1, t2, i;
    cap_reset();
    memset(&d, 0, sizeof d);
    d.paired = 1;
    d.window = 4;
    d.interval = 10;
    d.deliver = capture;
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_OK);
    for (i = 1; !hwp_pm_fetch(&p); i++) {}
    t1 = hwp_pm_tag(&p, 0xA0, i);
    hwp_pm_retire(&p, t1, i + 1);
    CHECK_EQ(cap.n, 0); /* waits for its mate */
    for (i++; !hwp_pm_fetch(&p); i++) {}
    t2 = hwp_pm_tag(&p, 0xB0, i);
    CHECK(t2 != 0 && t2 != t1);
    hwp_pm_retire(&p, t2, i + 2);
    CHECK_EQ(cap.n, 2);
    CHECK_EQ(cap.r[0].pc, 0xA0);
    CHECK(cap.r[0].flags & HWP_PM_F_FIRST);
    CHECK_EQ(cap.r[1].pc, 0xB0);
    CHECK(cap.r[1].flags & HWP_PM_F_SECOND);
    for (i++; !hwp_pm_fetch(&p); i++) {}
    t1 = hwp_pm_tag(&p, 0xC0, i);
    for (i++; !hwp_pm_fetch(&p); i++) {}
    t2 = hwp_pm_tag(&p, 0xD0, i);
    hwp_pm_abort(&p, t2, 9);
    CHECK_EQ(cap.n, 2);
    hwp_pm_retire(&p, t1, i + 5);
    CHECK_EQ(cap.n, 4);
    CHECK_EQ(cap.r[2].pc, 0xC0); /* first still first */
    CHECK_EQ(cap.r[3].pc, 0xD0);
    CHECK_EQ(cap.r[3].trap, 9);
    CHECK_EQ(cap.r[2].pair_distance, cap.r[3].pair_distance);
    CHECK(cap.r[2].pair_distance >= 1 && cap.r[2].pair_distance <= 4);
}

/* ---- the per-PC table --------------------------------------------------- */

static hwp_pm_record mkrec(uint64_t pc, uint32_t flags, uint32_t events) {
    hwp_pm_record r;
    memset(&r, 0, sizeof r);
    r.pc = pc;
    r.flags = flags;
    r.events = events;
    return r;
}

static void test_table_basics(void) {
    hwp_pm_table_desc d;
    hwp_pm_table t, u;
    hwp_pm_record r[4];
    const hwp_pm_entry *e;
    uint32_t i, seen = 0;
    memset(&d, 0, sizeof d);
    CHECK_EQ(hwp_pm_table_bytes(NULL), 4096 * sizeof(hwp_pm_entry) + 15);
    CHECK_EQ(hwp_pm_table_bytes(NULL), HWP_PM_TABLE_BYTES(4096));
    d.capacity = 100;
    CHECK_EQ(hwp_pm_table_bytes(&d), 0);
    CHECK_EQ(hwp_pm_table_init(&t, tmem, (size_t)(1 << 20), &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&t), "power of two");
    d.capacity = 64;
    CHECK_EQ(hwp_pm_table_init(&t, tmem, 10, &d, NULL), HWP_ENOSPC);
    CHECK_EQ(hwp_pm_table_init(&t, tmem, (size_t)(1 << 20), &d, NULL), HWP_OK);
    r[0] = mkrec(0x10, HWP_PM_F_RETIRED, HWP_EV_DCMISS);
    r[1] = mkrec(0x10, HWP_PM_F_RETIRED, 0);
    r[1].lat[HWP_PM_LAT_LOAD] = 30;
    r[2] = mkrec(0x20, 0, HWP_EV_ABORTED | HWP_EV_MISPRED);
    r[3] = mkrec(0, HWP_PM_F_EMPTY, HWP_EV_ABORTED);
    CHECK_EQ(hwp_pm_table_add(&t, r, 4), HWP_OK);
    e = hwp_pm_table_find(&t, 0x10);
    CHECK(e != NULL);
    if (!e) return;
    CHECK_EQ(hwp_pm_count(e, HWP_PM_PROP_SAMPLES), 2);
    CHECK_EQ(hwp_pm_count(e, HWP_PM_PROP_RETIRED), 2);
    CHECK_EQ(hwp_pm_count(e, HWP_PM_PROP_EVENT(HWP_EV_DCMISS)), 1);
    CHECK_EQ(e->lat_sum[HWP_PM_LAT_LOAD], 30);
    e = hwp_pm_table_find(&t, 0x20);
    CHECK(e && e->samples == 1 && e->retired == 0);
    CHECK_EQ(hwp_pm_count(e, HWP_PM_PROP_EVENT(HWP_EV_MISPRED)), 1);
    CHECK_EQ(hwp_pm_count(e, HWP_PM_PROP_EVENT(HWP_EV_ABORTED)), 1);
    CHECK(hwp_pm_table_find(&t, 0x30) == NULL);
    CHECK_EQ(t.samples, 3);
    CHECK_EQ(t.empty, 1);
    for (i = 0; i < 64; i++) seen += hwp_pm_table_at(&t, i) != NULL;
    CHECK_EQ(seen, 2);
    /* Merge: the sums of both. */
    CHECK_EQ(hwp_pm_table_init(&u, tmem2, (size_t)(1 << 20), &d, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_table_add(&u, r, 2), HWP_OK);
    CHECK_EQ(hwp_pm_table_merge(&u, &t), HWP_OK);
    e = hwp_pm_table_find(&u, 0x10);
    CHECK(e && e->samples == 4 && e->events[3] == 2);
    CHECK_EQ(u.samples, 5);
    d.window = 9;
    CHECK_EQ(hwp_pm_table_init(&u, tmem2, (size_t)(1 << 20), &d, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_table_merge(&u, &t), HWP_EMISMATCH);
}

/* Fixed capacity: 7/8 of the slots hold PCs; the rest is counted. */
static void test_table_capacity(void) {
    hwp_pm_table_desc d;
    hwp_pm_table t;
    hwp_pm_record r;
    uint32_t i;
    memset(&d, 0, sizeof d);
    d.capacity = 8;
    CHECK_EQ(hwp_pm_table_init(&t, tmem, (size_t)(1 << 20), &d, NULL), HWP_OK);
    for (i = 1; i <= 10; i++) {
        r = mkrec(i * 64, HWP_PM_F_RETIRED, 0);
        hwp_pm_table_add(&t, &r, 1);
        hwp_pm_table_add(&t, &r, 1);
    }
    CHECK_EQ(t.used, 7);
    CHECK_EQ(t.samples, 14);
    CHECK_EQ(t.dropped, 6);
    for (i = 1; i <= 7; i++) CHECK(hwp_pm_table_find(&t, i * 64) != NULL);
    CHECK(hwp_pm_table_find(&t, 8 * 64) == NULL);
}

/* 5.1: kS with cv sqrt(1/k); the Poisson score interval. */
static void test_estimator(void) {
    hwp_pm_est e = hwp_pm_estimate(100, 50, 1.96);
    double z = 1.96, mid = 100 + z * z / 2, half = z * sqrt(100 + z * z / 4);
    CHECK_NEAR(e.value, 5000, 1e-9);
    CHECK_NEAR(e.cv, 0.1, 1e-12);
    CHECK_NEAR(e.lo, (mid - half) * 50, 1e-6);
    CHECK_NEAR(e.hi, (mid + half) * 50, 1e-6);
    CHECK(e.lo < e.value && e.value < e.hi);
    e = hwp_pm_estimate(0, 50, 1.96);
    CHECK_NEAR(e.value, 0, 0);
    CHECK_NEAR(e.cv, 0, 0);
    CHECK_NEAR(e.lo, 0, 1e-9);
    CHECK_NEAR(e.hi, z * z * 50, 1e-6);
}

/* 5.2.3 and 5.2.4 on a hand-built pair. A: fetched at 0, issue at 6,
 * retire-ready at 10, retires at 12. B: fetched 3 cycles later, issues at
 * 3 + 2 = 5 (inside A's [0, 10)), retire-ready at 3 + 8 = 11, retires at
 * 3 + 10 = 13. A's issue is 6 - 3 = 3 cycles after B's fetch, inside B's
 * [0, 8). Both retired, retire gap 1 cycle. */
static void test_wasted_slots_formula(void) {
    hwp_pm_table_desc d;
    hwp_pm_table t;
    hwp_pm_record r[2];
    const hwp_pm_entry *a, *b;
    memset(&d, 0, sizeof d);
    d.capacity = 16;
    d.interval = 100;
    d.window = 16;
    d.issue_width = 4;
    d.near_cycles = 2;
    d.paired = 1;
    CHECK_EQ(hwp_pm_table_init(&t, tmem, (size_t)(1 << 20), &d, NULL), HWP_OK);
    r[0] = mkrec(0xA, HWP_PM_F_RETIRED | HWP_PM_F_FIRST, 0);
    r[0].lat[0] = 2; r[0].lat[1] = 3; r[0].lat[2] = 1; r[0].lat[3] = 4;
    r[0].lat[4] = 2;
    r[1] = mkrec(0xB, HWP_PM_F_RETIRED | HWP_PM_F_SECOND, 0);
    r[1].lat[2] = 2; r[1].lat[3] = 6; r[1].lat[4] = 2;
    r[0].pair_latency = r[1].pair_latency = 3;
    CHECK_EQ(hwp_pm_table_add(&t, r, 2), HWP_OK);
    a = hwp_pm_table_find(&t, 0xA);
    b = hwp_pm_table_find(&t, 0xB);
    CHECK(a && b);
    if (!a || !b) return;
    CHECK_EQ(a->in_progress, 10);
    CHECK_EQ(b->in_progress, 8);
    CHECK_EQ(a->useful_fwd, 1);
    CHECK_EQ(a->useful_bwd, 0);
    CHECK_EQ(b->useful_bwd, 1);
    CHECK_EQ(a->near, 1);
    /* (L C S / 2) - (U W S) */
    CHECK_NEAR(hwp_pm_wasted_slots(&t, a), 10 * 4 * 100 / 2.0 - 16 * 100, 1e-9);
    CHECK_NEAR(hwp_pm_wasted_slots(&t, b), 8 * 4 * 100 / 2.0 - 16 * 100, 1e-9);
    /* Total latency from the one sample of A: 10 cycles, each sample of a
     * paired table standing for S / 2 = 50 fetches. */
    CHECK_NEAR(hwp_pm_latency_total(&t, a, 1.0).value, 10 * 50.0, 1e-9);
    /* IPC near A: (1 + 2 W near / k) / (2X + 1) = (1 + 32) / 5. */
    CHECK_NEAR(hwp_pm_ipc_near(&t, a), 33.0 / 5.0, 1e-12);
    /* If A aborted, B had no useful overlap from it; B issuing while A
     * was in progress still counts for A (B retired). */
    r[0].flags &= ~(uint32_t)HWP_PM_F_RETIRED;
    r[0].pc = 0xC;
    r[1].pc = 0xD;
    hwp_pm_table_add(&t, r, 2);
    a = hwp_pm_table_find(&t, 0xC);
    b = hwp_pm_table_find(&t, 0xD);
    CHECK(a && b && a->useful_fwd == 1 && b->useful_bwd == 0);
    CHECK(a && a->near == 0);
}

/* ---- path reconstruction (5.3) ------------------------------------------ */

/* Block 0 (entry) branches to 1 (taken) or 2 (fall); blocks 1 and 2 both
 * branch taken to 3 and fall to 4. Block 3 holds the sample. The history
 * has only directions, so "taken into 3" fits both 1 and 2: a merge. */
static const hwp_pm_block cfg5[5] = {
    {0x00, 0x10, 1, 2, 1, 4},
    {0x10, 0x20, 3, 4, 1, 4},
    {0x20, 0x30, 3, 4, 1, 4},
    {0x30, 0x40, HWP_PM_NONE, HWP_PM_NONE, 0, 4},
    {0x40, 0x50, HWP_PM_NONE, HWP_PM_NONE, 0, 4},
};

static uint32_t out[64], np, nw;

/* Run a query on cfg5; the paths land in out, np and nw. */
static hwp_status paths5(const hwp_pm_path_query *q, uint32_t cap) {
    np = nw = 0;
    return hwp_pm_paths(cfg5, 5, q, out, cap, &np, &nw);
}

static void test_paths(void) {
    hwp_pm_path_query q;
    memset(&q, 0, sizeof q);
    q.pc = 0x34;
    q.bits = 2;
    q.history = 0x3; /* newest: taken into 3; before it: 0 taken to 1 */
    CHECK_EQ(paths5(&q, 64), HWP_OK);
    CHECK(np == 1 && nw == 4);
    CHECK(out[0] == 3 && out[1] == 0 && out[2] == 1 && out[3] == 3);
    q.history = 0x1; /* 0 fell through to 2, then 2 taken into 3 */
    CHECK(paths5(&q, 64) == HWP_OK && np == 1);
    CHECK(out[0] == 3 && out[1] == 0 && out[2] == 2 && out[3] == 3);
    /* One bit: ambiguous, both 1->3 and 2->3 fit. */
    q.bits = 1;
    CHECK(paths5(&q, 64) == HWP_OK && np == 2 && nw == 6);
    /* Paired sampling narrows it: the pair's other PC lies in block 2. */
    q.use_other = 1;
    q.other_pc = 0x24;
    CHECK(paths5(&q, 64) == HWP_OK && np == 1);
    CHECK(out[0] == 2 && out[1] == 2 && out[2] == 3);
    /* With the pair's distance: 3 instructions back fits in the 4 of
     * block 1, so 1->3 could have shown it and is dropped; 10 back lies
     * beyond both segments, so neither can be judged and both stay. */
    q.other_distance = 3;
    CHECK(paths5(&q, 64) == HWP_OK && np == 1 && out[1] == 2);
    q.other_distance = 10;
    CHECK(paths5(&q, 64) == HWP_OK && np == 2);
    q.other_distance = 0;
    q.use_other = 0;
    /* Not taken into 3 is impossible: no consistent path. */
    q.history = 0;
    CHECK(paths5(&q, 64) == HWP_OK && np == 0);
    /* More bits than the routine has branches: stops at the entry. */
    q.bits = 5;
    q.history = 0x3;
    CHECK(paths5(&q, 64) == HWP_OK && np == 1 && out[0] == 3);
    /* Too small an output buffer still counts every path. */
    q.bits = 1;
    CHECK(paths5(&q, 4) == HWP_OK && np == 2 && nw == 3);
    q.pc = 0x99;
    CHECK_EQ(paths5(&q, 64), HWP_EINVAL);
}

/* The paired-distance search past a short segment: cfg5 with block 4
 * jumping back to 0, so the routine has no entry to stop at. */
static void test_paths_pair_reach(void) {
    hwp_pm_block cfg[5];
    hwp_pm_path_query q;
    memcpy(cfg, cfg5, sizeof cfg);
    cfg[4].taken = 0;
    memset(&q, 0, sizeof q);
    q.pc = 0x34;
    q.bits = 1;
    q.history = 1;
    q.use_other = 1;
    q.other_pc = 0x24; /* in block 2 */
    /* 1->3 holds 4 instructions before 3; 6 back can only be in block 0
     * (any way into 1 comes from 0): not block 2, so 1->3 goes. */
    q.other_distance = 6;
    np = nw = 0;
    CHECK_EQ(hwp_pm_paths(cfg, 5, &q, out, 64, &np, &nw), HWP_OK);
    CHECK(np == 1 && out[1] == 2);
    /* 20 back reaches 2 -> 4 -> 0 -> 1 -> 3: both stay. */
    q.other_distance = 20;
    CHECK_EQ(hwp_pm_paths(cfg, 5, &q, out, 64, &np, &nw), HWP_OK);
    CHECK_EQ(np, 2);
}

/* An unconditional cycle consumes no history: max_blocks bounds it. */
static void test_paths_loop_bound(void) {
    static const hwp_pm_block loop[2] = {
        {0x00, 0x10, 1, HWP_PM_NONE, 0, 0},
        {0x10, 0x20, 0, HWP_PM_NONE, 0, 0},
    };
    static const hwp_pm_block bad[1] = {{0, 4, 7, HWP_PM_NONE, 0, 0}};
    hwp_pm_path_query q;
    memset(&q, 0, sizeof q);
    q.pc = 0x14;
    q.bits = 3;
    q.max_blocks = 5;
    CHECK_EQ(hwp_pm_paths(loop, 2, &q, out, 64, &np, &nw), HWP_OK);
    CHECK_EQ(np, 1);
    CHECK_EQ(out[0], 5);
    q.max_blocks = 1000;
    CHECK_EQ(hwp_pm_paths(loop, 2, &q, out, 64, &np, &nw), HWP_EINVAL);
    q.pc = 0;
    q.max_blocks = 0;
    CHECK_EQ(hwp_pm_paths(bad, 1, &q, out, 64, &np, &nw), HWP_EFORMAT);
}

/* ---- reports ------------------------------------------------------------- */

static void test_reports(void) {
    static char buf[1 << 15];
    hwp_bufwriter bw;
    hwp_writer w;
    hwp_pm p;
    hwp_pm_table_desc td;
    hwp_pm_table t;
    hwp_pm_record r = mkrec(0x1234, HWP_PM_F_RETIRED, HWP_EV_DCMISS);
    cap_reset();
    init_every(&p, 1, 1, NULL);
    CHECK(hwp_pm_fetch(&p));
    hwp_pm_retire(&p, hwp_pm_tag(&p, 0x1234, 1), 2);
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_pm_write_json(&p, &w);
    CHECK_HAS(buf, "{\"model\":\"profileme\",\"version\":1,\"desc\":"
                   "{\"seed\":\"0x0\",\"interval\":1,\"dist\":2,");
    CHECK_HAS(buf, "\"stats\":{\"events\":1,\"dropped\":0,\"evicted\":0,"
                   "\"cycles\":0,\"selected\":1,");
    CHECK(buf[bw.len - 1] == '}');
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_pm_write_text(&p, &w);
    CHECK_HAS(buf, "delivered=1");
    CHECK_HAS(buf, "dist=2 unit=0");
    memset(&td, 0, sizeof td);
    td.capacity = 16;
    td.interval = 10;
    CHECK_EQ(hwp_pm_table_init(&t, tmem, (size_t)(1 << 20), &td, NULL), HWP_OK);
    hwp_pm_table_add(&t, &r, 1);
    hwp_pm_table_add(&t, &r, 1);
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_pm_table_write_json(&t, &w);
    CHECK_HAS(buf, "{\"model\":\"pm_table\",\"version\":1,"
                   "\"desc\":{\"capacity\":16,\"interval\":10,");
    CHECK_HAS(buf, "\"pcs\":[{\"pc\":\"0x1234\",\"samples\":2,\"retired\":2,");
    CHECK_HAS(buf, "\"dcmiss\":2,");
    CHECK_HAS(buf, "\"est\":20.0,");
    CHECK_EQ(bw.dropped, 0);
    /* No record carries a stage latency (a host that times nothing):
     * the unmeasured columns are left out, not printed as zeros; two
     * samples are below the advised minimum, so no estimate shown. */
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_pm_table_write_top(&t, &w, 5);
    CHECK_HAS(buf, "columns left out\n  pc  samples  est_fetches\n  0x1234  2  -\n");
    CHECK(!strstr(buf, "est_latency_cycles"));
    /* One record with a latency brings every column back. */
    r.lat[0] = 7;
    hwp_pm_table_add(&t, &r, 1);
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_pm_table_write_top(&t, &w, 5);
    CHECK_HAS(buf, "  pc  samples  est_fetches  est_latency_cycles");
    CHECK_HAS(buf, "0x1234  3  -  -  -  3  -");
    CHECK(!strstr(buf, "left out"));
}

/* ---- estimates: pairs and singles, latency, generations, ranking ------- */

/* The toy program of the estimate tests: 32 PCs, PC j executed with
 * weight j + 1 in a fixed cycle (sum 528 per cycle), each with a fixed
 * fetch -> retire-ready latency of (j % 5) + 1 cycles. */
enum { TP_PCS = 32, TP_CYCLE = 528 };
static uint32_t tp_pc_at(uint64_t i) {
    uint32_t k = (uint32_t)(i % TP_CYCLE), j = 0;
    while (k >= j + 1) k -= ++j; /* j runs 1 + 2 + ... */
    return j;
}
static uint32_t tp_lat(uint32_t j) { return j % 5 + 1; }

static uint64_t tp_n;
static uint64_t tp_truth(void *ctx, uint64_t pc) {
    (void)ctx;
    return tp_n / TP_CYCLE * ((pc - 0x1000) / 4 + 1);
}

/* n fetches of the toy program through sampler p: every selected
 * instruction reports its latency and retires at once. */
static void tp_run(hwp_pm *p, uint64_t n) {
    uint64_t i;
    for (i = 0; i < n; i++) {
        uint32_t j, tag;
        if (!hwp_pm_fetch(p)) continue;
        j = tp_pc_at(i);
        tag = hwp_pm_tag(p, 0x1000 + 4u * j, 10 * i);
        if (!tag) continue;
        hwp_pm_stage(p, tag, HWP_PM_ST_RETIRE_READY, 10 * i + tp_lat(j));
        hwp_pm_retire(p, tag, 10 * i + tp_lat(j) + 1);
    }
    hwp_pm_flush(p);
}

/* Sums over the table of the estimated fetches and total latency. */
static void tp_totals(const hwp_pm_table *t, double *fetches, double *lat) {
    uint32_t i;
    *fetches = *lat = 0;
    for (i = 0; i < 64; i++) {
        const hwp_pm_entry *e = hwp_pm_table_at(t, i);
        if (!e) continue;
        *fetches += hwp_pm_table_estimate(t, e, HWP_PM_PROP_SAMPLES, 1.96).value;
        *lat += hwp_pm_latency_total(t, e, 1.96).value;
    }
}

/* A sampler of desc d delivering into t, a 64-entry table of the
 * sampler's own settings (hwp_pm_table_desc_for). */
static void open_fed_table(hwp_pm *p, unsigned char *pm, size_t pn, hwp_pm_desc *d,
                           hwp_pm_table *t, unsigned char *tm, size_t tn) {
    hwp_pm_table_desc td;
    d->deliver = hwp_pm_table_deliver;
    d->user = t;
    CHECK_EQ(hwp_pm_init(p, pm, pn, d, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_table_desc_for(p, &td), HWP_OK);
    td.capacity = 64;
    CHECK_EQ(hwp_pm_table_init(t, tm, tn, &td, NULL), HWP_OK);
}

/* One stream, sampled singly and in pairs at the same S: both estimate
 * the same totals (a pair is two samples per S, each standing for S / 2
 * fetches), and the per-PC mean ratio est / truth is near 1 for both. */
static void test_pairs_and_singles_agree(void) {
    static unsigned char m1[8192], m2[8192], tm1[64 * 192 + 16],
        tm2[64 * 192 + 16];
    hwp_pm_desc d;
    hwp_pm_table_desc td;
    hwp_pm s, q;
    hwp_pm_table ts, tq;
    hwp_pm_acc acc;
    double fs, ls, fq, lq, exact_lat = 0;
    uint32_t j;
    tp_n = 1056000; /* 2000 cycles of the program */
    for (j = 0; j < TP_PCS; j++)
        exact_lat += (double)(tp_n / TP_CYCLE) * (j + 1) * tp_lat(j);
    memset(&d, 0, sizeof d);
    d.interval = 500;
    d.seed = 3;
    open_fed_table(&s, m1, sizeof m1, &d, &ts, tm1, sizeof tm1);
    d.paired = 1;
    d.window = 16;
    open_fed_table(&q, m2, sizeof m2, &d, &tq, tm2, sizeof tm2);
    CHECK(hwp_pm_table_interval(&tq) == 250.0); /* paired: S / 2 a sample */
    tp_run(&s, tp_n);
    tp_run(&q, tp_n);
    CHECK_EQ(ts.mismatched + tq.mismatched, 0);
    tp_totals(&ts, &fs, &ls);
    tp_totals(&tq, &fq, &lq);
    printf("    fetches %llu: single est %.0f, paired est %.0f; latency %.0f:"
           " single %.0f, paired %.0f\n", (unsigned long long)tp_n, fs, fq,
           exact_lat, ls, lq);
    /* About 2100 samples (single) and 4200 (paired): the totals are
     * within a few percent; doubled estimates would be 2.0. */
    CHECK_NEAR(fs / (double)tp_n, 1.0, 0.03);
    CHECK_NEAR(fq / (double)tp_n, 1.0, 0.03);
    CHECK_NEAR(ls / exact_lat, 1.0, 0.05);
    CHECK_NEAR(lq / exact_lat, 1.0, 0.05);
    CHECK_EQ(hwp_pm_accuracy(&ts, HWP_PM_PROP_SAMPLES, tp_truth, NULL, 10,
                             &acc), HWP_OK);
    CHECK_NEAR(acc.mean_ratio, 1.0, 0.06);
    CHECK_EQ(hwp_pm_accuracy(&tq, HWP_PM_PROP_SAMPLES, tp_truth, NULL, 10,
                             &acc), HWP_OK);
    CHECK_NEAR(acc.mean_ratio, 1.0, 0.06);
    /* A table built for singles refuses pairs (and counts them). */
    CHECK_EQ(hwp_pm_table_desc_for(&s, &td), HWP_OK);
    td.capacity = 64;
    CHECK_EQ(hwp_pm_table_init(&ts, tm1, sizeof tm1, &td, NULL), HWP_OK);
    {
        hwp_pm_record r[2];
        r[0] = mkrec(0x10, HWP_PM_F_RETIRED | HWP_PM_F_FIRST, 0);
        r[1] = mkrec(0x14, HWP_PM_F_RETIRED | HWP_PM_F_SECOND, 0);
        hwp_pm_table_add(&ts, r, 2);
        CHECK_EQ(ts.samples, 0);
        CHECK_EQ(ts.mismatched, 2);
    }
}

/* The total latency's envelope: with equal latencies its cv is the
 * paper's 1/sqrt(k); with unequal ones sqrt(sum l^2) / sum l. */
static void test_latency_envelope(void) {
    hwp_pm_table_desc d;
    hwp_pm_table t;
    hwp_pm_record r[4];
    hwp_pm_est e;
    uint32_t i;
    memset(&d, 0, sizeof d);
    d.capacity = 16;
    d.interval = 100;
    CHECK_EQ(hwp_pm_table_init(&t, tmem, (size_t)(1 << 20), &d, NULL), HWP_OK);
    for (i = 0; i < 4; i++) {
        r[i] = mkrec(0x40, HWP_PM_F_RETIRED, 0);
        r[i].lat[HWP_PM_LAT_ISSUE_RR] = 2;
        r[i].lat[HWP_PM_LAT_RR_RETIRE] = 50; /* after retire-ready: out */
    }
    hwp_pm_table_add(&t, r, 4);
    e = hwp_pm_latency_total(&t, hwp_pm_table_find(&t, 0x40), 1.0);
    CHECK_NEAR(e.value, 8 * 100.0, 1e-9);
    CHECK_NEAR(e.cv, 0.5, 1e-12); /* 1/sqrt(4) */
    CHECK_NEAR(e.lo, (8 - 4) * 100.0, 1e-9);
    CHECK_NEAR(e.hi, (8 + 4) * 100.0, 1e-9);
    CHECK_EQ(e.samples, 4);
    CHECK_NEAR(e.interval, 100.0, 0);
    CHECK(!e.enough);
    r[0].lat[HWP_PM_LAT_ISSUE_RR] = 6; /* 6, 2 */
    r[0].pc = r[1].pc = 0x80;
    hwp_pm_table_add(&t, r, 2);
    e = hwp_pm_latency_total(&t, hwp_pm_table_find(&t, 0x80), 1.0);
    CHECK_NEAR(e.value, 800.0, 1e-9);
    CHECK_NEAR(e.cv, sqrt(36.0 + 4.0) / 8.0, 1e-12);
}

/* A report arriving after its record completed and a new record took the
 * profile registers fails the tag check: dropped, counted, and the new
 * record is untouched. */
static void test_late_report(void) {
    hwp_pm p;
    uint32_t t1, t2;
    static const uint32_t want[HWP_PM_LAT_COUNT] = {0, 0, 0, 0, 10, 0};
    cap_reset();
    init_every(&p, 1, 1, NULL);
    CHECK(hwp_pm_fetch(&p));
    t1 = hwp_pm_tag(&p, 0x10, 0);
    CHECK_EQ(hwp_pm_retire(&p, t1, 4), HWP_OK);
    CHECK(hwp_pm_fetch(&p));
    t2 = hwp_pm_tag(&p, 0x20, 100);
    CHECK(t2 != 0 && t2 != t1);
    /* The first instruction's issue and miss, reported late. */
    CHECK_EQ(hwp_pm_stage(&p, t1, HWP_PM_ST_ISSUE, 105), HWP_ESTATE);
    CHECK_EQ(hwp_pm_note(&p, t1, HWP_CLS_LOAD, 0x99, HWP_EV_DCMISS),
             HWP_ESTATE);
    CHECK_EQ(hwp_pm_abort(&p, t1, 3), HWP_ESTATE);
    CHECK_EQ(p.st.late, 3);
    CHECK_EQ(hwp_pm_retire(&p, t2, 110), HWP_OK);
    CHECK_EQ(cap.n, 2);
    if (cap.n != 2) return;
    CHECK_EQ(cap.r[1].pc, 0x20);
    CHECK_EQ(cap.r[1].events, 0);
    CHECK_EQ(cap.r[1].addr, 0);
    CHECK(cap.r[1].flags & HWP_PM_F_RETIRED);
    CHECK(memcmp(cap.r[1].lat, want, sizeof want) == 0);
    /* A tag that hwp_pm_tag never returned is invalid, not late. */
    CHECK_EQ(hwp_pm_stage(&p, 31, HWP_PM_ST_ISSUE, 1), HWP_EINVAL);
    CHECK_EQ(p.st.late, 3);
}

/* The advised minimum: a constant, a per-table query (desc.min_samples),
 * and each estimate's flag. */
static void test_min_samples(void) {
    hwp_pm_table_desc d;
    hwp_pm_table t;
    hwp_pm_record r = mkrec(0x40, HWP_PM_F_RETIRED, 0);
    const hwp_pm_entry *e;
    uint32_t i;
    CHECK_EQ(HWP_PM_MIN_SAMPLES, 10);
    CHECK(!hwp_pm_estimate(9, 10, 1.96).enough);
    CHECK(hwp_pm_estimate(10, 10, 1.96).enough);
    memset(&d, 0, sizeof d);
    d.capacity = 16;
    CHECK_EQ(hwp_pm_table_init(&t, tmem, (size_t)(1 << 20), &d, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_table_min_samples(&t), 10);
    for (i = 0; i < 9; i++) hwp_pm_table_add(&t, &r, 1);
    e = hwp_pm_table_find(&t, 0x40);
    CHECK(!hwp_pm_table_estimate(&t, e, HWP_PM_PROP_SAMPLES, 1.96).enough);
    hwp_pm_table_add(&t, &r, 1);
    CHECK(hwp_pm_table_estimate(&t, e, HWP_PM_PROP_SAMPLES, 1.96).enough);
    CHECK(!hwp_pm_table_estimate(&t, e, HWP_PM_PROP_EVENT(HWP_EV_DCMISS),
                                 1.96).enough);
    d.min_samples = 30;
    CHECK_EQ(hwp_pm_table_init(&t, tmem, (size_t)(1 << 20), &d, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_table_min_samples(&t), 30);
}

/* Ranked by estimated total cost: a PC sampled often with short
 * latencies ranks below one sampled less with long ones by latency, above
 * it by samples; the query returns how many PCs there are. */
static void test_rank(void) {
    hwp_pm_table_desc d;
    hwp_pm_table t;
    hwp_pm_record r;
    hwp_pm_row rows[3];
    uint32_t i;
    memset(rows, 0, sizeof rows);
    memset(&d, 0, sizeof d);
    d.capacity = 16;
    d.interval = 10;
    CHECK_EQ(hwp_pm_table_init(&t, tmem, (size_t)(1 << 20), &d, NULL), HWP_OK);
    for (i = 0; i < 30; i++) { /* 0xA: 30 samples of 1 cycle */
        r = mkrec(0xA, HWP_PM_F_RETIRED, 0);
        r.lat[HWP_PM_LAT_ISSUE_RR] = 1;
        hwp_pm_table_add(&t, &r, 1);
    }
    for (i = 0; i < 12; i++) { /* 0xB: 12 samples of 20 cycles */
        r = mkrec(0xB, HWP_PM_F_RETIRED, HWP_EV_DCMISS);
        r.lat[HWP_PM_LAT_ISSUE_RR] = 20;
        hwp_pm_table_add(&t, &r, 1);
    }
    r = mkrec(0xC, HWP_PM_F_RETIRED, 0); /* 0xC: 1 sample of 5 cycles */
    r.lat[HWP_PM_LAT_ISSUE_RR] = 5;
    hwp_pm_table_add(&t, &r, 1);
    CHECK_EQ(hwp_pm_table_rank(&t, HWP_PM_RANK_LATENCY, 1.96, NULL, 0), 3);
    CHECK_EQ(hwp_pm_table_rank(&t, HWP_PM_RANK_LATENCY, 1.96, rows, 2), 3);
    CHECK_EQ(rows[0].pc, 0xB);
    CHECK_NEAR(rows[0].latency.value, 12 * 20 * 10.0, 1e-9);
    CHECK_EQ(rows[0].latency.samples, 12);
    CHECK_NEAR(rows[0].latency.interval, 10.0, 0);
    CHECK_EQ(rows[0].dcmiss.samples, 12);
    CHECK_EQ(rows[1].pc, 0xA);
    CHECK_NEAR(rows[1].cost, 30 * 10.0, 1e-9);
    CHECK_EQ(hwp_pm_table_rank(&t, HWP_PM_RANK_SAMPLES, 1.96, rows, 3), 3);
    CHECK(rows[0].pc == 0xA && rows[1].pc == 0xB && rows[2].pc == 0xC);
    /* Below the advised minimum, a costlier estimate still ranks after
     * every PC that has one: 0xD, 2 samples of 1000 cycles. */
    r = mkrec(0xD, HWP_PM_F_RETIRED, 0);
    r.lat[HWP_PM_LAT_ISSUE_RR] = 1000;
    hwp_pm_table_add(&t, &r, 1);
    hwp_pm_table_add(&t, &r, 1);
    CHECK_EQ(hwp_pm_table_rank(&t, HWP_PM_RANK_LATENCY, 1.96, rows, 3), 4);
    CHECK(rows[0].pc == 0xB && rows[1].pc == 0xA && rows[2].pc == 0xD);
    CHECK_EQ(hwp_pm_table_rank(&t, 7, 1.96, rows, 3), 0);
}

/* The contract on both components: reset equals a fresh init, the JSON
 * reports read back to the same bytes, merge folds two halves. */
static void test_contract(void) {
    static char a[1 << 15], b[1 << 15];
    static unsigned char m1[8192], m2[8192], tm1[64 * 192 + 16],
        tm2[64 * 192 + 16];
    hwp_bufwriter ba, bb;
    hwp_writer wa, wb;
    hwp_pm_desc d, d2;
    hwp_pm_table_desc td, td2;
    hwp_pm p, q;
    hwp_pm_table t, u;
    hwp_pm_stats st;
    hwp_pm_table_stats ts;
    hwp_json_err err;
    hwp_cost c;
    CHECK_EQ(HWP_PM_BYTES(1 + 1, 2), hwp_pm_bytes(&(hwp_pm_desc){.paired = 1}));
    CHECK_EQ(HWP_PM_TABLE_BYTES(32 + 32),
             hwp_pm_table_bytes(&(hwp_pm_table_desc){.capacity = 64}));
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    memset(&d, 0, sizeof d);
    d.interval = 100;
    d.window = 8;
    d.paired = 1;
    d.seed = 0xFEEDFACECAFEBEEFull; /* above 2^53: written in hex */
    d.deliver = hwp_pm_table_deliver;
    d.user = &t;
    CHECK_EQ(hwp_pm_init(&p, m1 + 3, sizeof m1 - 3, &d, &c), HWP_OK);
    hwp_pm_table_desc_for(&p, &td);
    td.capacity = 64;
    CHECK_EQ(hwp_pm_table_init(&t, tm1 + 5, sizeof tm1 - 5, &td, NULL), HWP_OK);
    tp_run(&p, 100000);
    CHECK_EQ(hwp_pm_get_stats(&p, &st), HWP_OK);
    CHECK_EQ(st.events, 100000);
    CHECK(st.cycles > 0 && st.cycles == hwp_cost_model_cycles(&c, HWP_MODEL_PROFILEME));
    CHECK_EQ(hwp_pm_table_get_stats(&t, &ts), HWP_OK);
    CHECK_EQ(ts.events, 2 * st.pairs);
    /* Sampler: write, read into a fresh instance, write again. */
    wa = hwp_writer_buf(&ba, a, sizeof a);
    hwp_pm_write_json(&p, &wa);
    CHECK_HAS(a, "\"seed\":\"0xfeedfacecafebeef\"");
    CHECK_EQ(hwp_pm_read_desc(&d2, a, ba.len, &err), HWP_OK);
    CHECK_EQ(d2.seed, d.seed);
    CHECK_EQ(d2.window, 8);
    CHECK_EQ(hwp_pm_init(&q, m2, sizeof m2, &d2, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_read_json(&q, a, ba.len, &err), HWP_OK);
    wb = hwp_writer_buf(&bb, b, sizeof b);
    hwp_pm_write_json(&q, &wb);
    CHECK_STR(b, a);
    /* Merge charges no modelled cycles and adds the counters. */
    CHECK_EQ(hwp_pm_merge(&q, &p), HWP_OK);
    CHECK_EQ(hwp_pm_get_stats(&q, &st), HWP_OK);
    CHECK_EQ(st.events, 200000);
    CHECK_EQ(hwp_cost_model_cycles(&c, HWP_MODEL_PROFILEME), st.cycles / 2);
    d2.window = 9;
    CHECK_EQ(hwp_pm_init(&q, m2, sizeof m2, &d2, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_merge(&q, &p), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&q), "window");
    CHECK_EQ(hwp_pm_read_json(&q, a, ba.len, &err), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&q), "window");
    /* Reset: the same bytes as a fresh init. */
    CHECK_EQ(hwp_pm_reset(&p), HWP_OK);
    wa = hwp_writer_buf(&ba, a, sizeof a);
    hwp_pm_write_json(&p, &wa);
    CHECK_EQ(hwp_pm_init(&q, m2, sizeof m2, &d, &c), HWP_OK);
    wb = hwp_writer_buf(&bb, b, sizeof b);
    hwp_pm_write_json(&q, &wb);
    CHECK_STR(a, b);

    /* Table: round trip, merge, reset, malformed input. */
    wa = hwp_writer_buf(&ba, a, sizeof a);
    hwp_pm_table_write_json(&t, &wa);
    CHECK_EQ(ba.dropped, 0);
    CHECK_EQ(hwp_pm_table_read_desc(&td2, a, ba.len, &err), HWP_OK);
    CHECK_EQ(td2.paired, 1);
    CHECK_EQ(td2.min_samples, 10);
    CHECK_EQ(hwp_pm_table_init(&u, tm2, sizeof tm2, &td2, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_table_read_json(&u, a, ba.len, &err), HWP_OK);
    wb = hwp_writer_buf(&bb, b, sizeof b);
    hwp_pm_table_write_json(&u, &wb);
    CHECK_STR(b, a);
    CHECK_EQ(hwp_pm_table_merge(&u, &t), HWP_OK);
    CHECK_EQ(hwp_pm_table_find(&u, 0x1000)->samples,
             2 * hwp_pm_table_find(&t, 0x1000)->samples);
    CHECK_EQ(hwp_pm_table_reset(&u), HWP_OK);
    CHECK_EQ(hwp_pm_table_init(&t, tm1, sizeof tm1, &td2, NULL), HWP_OK);
    wa = hwp_writer_buf(&ba, a, sizeof a);
    hwp_pm_table_write_json(&t, &wa);
    wb = hwp_writer_buf(&bb, b, sizeof b);
    hwp_pm_table_write_json(&u, &wb);
    CHECK_STR(b, a);
    CHECK_EQ(hwp_pm_table_read_json(&u, a, 40, &err), HWP_EFORMAT);
    CHECK(err.offset <= 40 && err.why != NULL);
    td2.issue_width = 8;
    CHECK_EQ(hwp_pm_table_init(&u, tm2, sizeof tm2, &td2, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_table_read_json(&u, a, ba.len, &err), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&u), "issue_width");
}

/* What an interpreter that counts down itself uses: the counter, the
 * history register, and a change of where records go. */
static void test_host_accessors(void) {
    hwp_pm_desc d;
    hwp_pm p;
    uint32_t i;
    cap_reset();
    memset(&d, 0, sizeof d);
    d.interval = 100;
    d.dist = HWP_PM_DIST_FIXED;
    CHECK_EQ(hwp_pm_init(&p, mem, (size_t)(1 << 16), &d, NULL), HWP_OK);
    CHECK_EQ(hwp_pm_countdown(&p), 100);
    for (i = 0; i < 10; i++) CHECK(!hwp_pm_fetch(&p));
    CHECK_EQ(hwp_pm_countdown(&p), 90);
    CHECK_EQ(hwp_pm_fetch_block(&p, 90), 90);
    hwp_pm_set_history(&p, 0x5);
    hwp_pm_branch(&p, true);
    CHECK_EQ(hwp_pm_history(&p), 0xB);
    CHECK_EQ(hwp_pm_set_deliver(&p, capture, NULL), HWP_OK);
    hwp_pm_retire(&p, hwp_pm_tag(&p, 0x40, 1), 2);
    CHECK_EQ(cap.n, 1);
    CHECK_EQ(cap.r[0].history, 0xB);
    CHECK_EQ(hwp_pm_get_desc(&p, &d), HWP_OK);
    CHECK(d.deliver == capture);
}

/* Ten PCs, each fetched 100,000 times, through a sampler of S = 100 into
 * a table left at its default S = 10000: every sample would stand for
 * 100 times the fetches it does (a PC estimated at about 10,000,000).
 * The table refuses the sampler's records instead, naming the field and
 * both values, takes none of them, and says so again at flush and in its
 * report; a pairing or window that differs is refused the same way, and
 * the table hwp_pm_table_desc_for describes takes the same stream. */
static void run_ten_pcs(hwp_pm *p) {
    hwp_insn in;
    uint64_t i;
    memset(&in, 0, sizeof in);
    for (i = 0; i < 1000000; i++) {
        in.pc = 0x1000 + 4u * (i % 10u);
        hwp_pm_insn(p, &in, i);
    }
    hwp_pm_flush(p);
}

static void test_table_refuses_other_sampler(void) {
    static unsigned char pm_mem[1 << 14], tm[1 << 16];
    static const struct {
        uint32_t paired, window, t_paired, t_window, t_interval;
        const char *why;
    } cases[] = {
        {0, 0, 0, 0, 0, "sampler with interval 100, the table's is 10000"},
        {1, 16, 0, 0, 100, "sampler with paired 1, the table's is 0"},
        {0, 0, 1, 16, 100, "sampler with paired 0, the table's is 1"},
        {1, 16, 1, 32, 100, "sampler with window 16, the table's is 32"},
    };
    hwp_pm p;
    hwp_pm_desc d;
    hwp_pm_table t;
    hwp_pm_table_desc td;
    hwp_pm_table_stats ts;
    char buf[512];
    hwp_bufwriter b;
    hwp_writer w;
    const hwp_pm_entry *e;
    size_t k;
    for (k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memset(&d, 0, sizeof d);
        d.interval = 100;
        d.seed = 5;
        d.paired = cases[k].paired;
        d.window = cases[k].window;
        d.deliver = hwp_pm_table_deliver;
        d.user = &t;
        memset(&td, 0, sizeof td);
        td.capacity = 64;
        td.interval = cases[k].t_interval;
        td.paired = cases[k].t_paired;
        td.window = cases[k].t_window;
        CHECK_EQ(hwp_pm_table_init(&t, tm, sizeof tm, &td, NULL), HWP_OK);
        CHECK_EQ(hwp_pm_init(&p, pm_mem, sizeof pm_mem, &d, NULL), HWP_OK);
        run_ten_pcs(&p);
        CHECK_EQ(hwp_pm_table_get_stats(&t, &ts), HWP_OK);
        CHECK_EQ(ts.samples, 0);
        CHECK_EQ(hwp_pm_table_flush(&t), HWP_EINVAL);
        CHECK_HAS(hwp_why(&t), cases[k].why);
        w = hwp_writer_buf(&b, buf, sizeof buf);
        hwp_pm_table_write_top(&t, &w, 3);
        CHECK_HAS(buf, "records refused: pm_table: a record from a sampler with");
    }
    /* A host's own records (interval 0) are taken as they are. */
    {
        hwp_pm_record r = mkrec(0x40, HWP_PM_F_RETIRED, 0);
        CHECK_EQ(hwp_pm_table_init(&t, tm, sizeof tm, &td, NULL), HWP_OK);
        CHECK_EQ(hwp_pm_table_add(&t, &r, 1), HWP_OK);
        CHECK_EQ(hwp_pm_table_flush(&t), HWP_OK);
    }
    /* The table of the sampler's own settings: each PC near 100,000. */
    memset(&d, 0, sizeof d);
    d.interval = 100;
    d.seed = 5;
    open_fed_table(&p, pm_mem, sizeof pm_mem, &d, &t, tm, sizeof tm);
    run_ten_pcs(&p);
    CHECK_EQ(hwp_pm_table_flush(&t), HWP_OK);
    e = hwp_pm_table_find(&t, 0x1000);
    if (CHECK(e != NULL)) {
        hwp_pm_est est = hwp_pm_table_estimate(&t, e, HWP_PM_PROP_SAMPLES, 1.96);
        CHECK(est.lo <= 100000.0 && est.hi >= 100000.0);
    }
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_desc_validation);
    HWT_RUN(test_fixed_interval);
    HWT_RUN(test_interval_distributions);
    HWT_RUN(test_determinism_and_blocks);
    HWT_RUN(test_record_contents);
    HWT_RUN(test_insn_entry);
    HWT_RUN(test_buffer_and_cost);
    HWT_RUN(test_busy_drop);
    HWT_RUN(test_empty_slots);
    HWT_RUN(test_paired_sampling);
    HWT_RUN(test_pair_completion_orders);
    HWT_RUN(test_table_basics);
    HWT_RUN(test_table_capacity);
    HWT_RUN(test_estimator);
    HWT_RUN(test_wasted_slots_formula);
    HWT_RUN(test_paths);
    HWT_RUN(test_paths_pair_reach);
    HWT_RUN(test_paths_loop_bound);
    HWT_RUN(test_reports);
    HWT_RUN(test_pairs_and_singles_agree);
    HWT_RUN(test_table_refuses_other_sampler);
    HWT_RUN(test_latency_envelope);
    HWT_RUN(test_late_report);
    HWT_RUN(test_min_samples);
    HWT_RUN(test_rank);
    HWT_RUN(test_contract);
    HWT_RUN(test_host_accessors);
    return hwt_end();
}
