/* Unit tests for hwprof/rap.h: desc handling, the update/split/merge state
 * machine of sec. 2.2 and 3.3 traced by hand, the pool limit, the stage-0
 * buffer, the insn entry point, the cost shim, queries and reports.
 * Fast and deterministic (also run under valgrind and the sanitizers). */
#define HWPROF_IMPL
#include "hwprof/rap.h"

#include "conformance/conformance.h"
#include "harness.h"
#include "rap/fuzz_drive.h"
#include "rap/rap_util.h"

/* 16-byte aligned views of static buffers (C99 has no _Alignas). */
#define ALIGN16(buf) ((unsigned char *)(((uintptr_t)(buf) + 15) & ~(uintptr_t)15))
static unsigned char mem_raw[(1u << 20) + 16];
#define mem ALIGN16(mem_raw)
#define MEMSZ (sizeof mem_raw - 16)

static hwp_rap_desc small_desc(unsigned w, unsigned b, double eps,
                               unsigned nodes) {
    hwp_rap_desc d;
    memset(&d, 0, sizeof d);
    d.key_bits = w;
    d.branching = b;
    d.eps = eps;
    d.nodes = nodes;
    d.buffer = HWP_RAP_BUFFER_NONE;
    return d;
}

/* The zero desc is the paper's design point, field by field (docs/rap.md
 * attributes each): ~500 nodes of 128 bits go with eps = 10% (sec. 4.3,
 * "500 nodes ... 98% accurate"), b = 4 and q = 2 (sec. 3.1), the first
 * merge after 2^10 events and a 1k stage-0 buffer (sec. 3.3). */
static void test_defaults_and_bytes(void) {
    hwp_rap r;
    hwp_rap_desc z, got;
    memset(&got, 0, sizeof got);
    memset(&z, 0, sizeof z);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, NULL, NULL), HWP_OK);
    CHECK_STR(hwp_why(&r), "");
    CHECK_EQ(hwp_rap_get_desc(&r, &got), HWP_OK);
    CHECK_EQ(got.key_bits, 64);
    CHECK_EQ(got.key_base, 0);
    CHECK_EQ(got.branching, 4);
    CHECK_NEAR(got.eps, 0.10, 0);
    CHECK_EQ(got.nodes, 512);
    CHECK_EQ(got.q, 2);
    CHECK_EQ(got.first_merge, 1024);
    CHECK_EQ(got.buffer, 1024);
    CHECK_EQ(got.cache, 0);
    CHECK_NEAR(got.hot, 0.10, 0);
    CHECK_EQ(hwp_rap_bytes(NULL), hwp_rap_bytes(&z));
    CHECK_EQ(sizeof(hwp_rap_node), 16);
}

/* bytes() is all the memory the model uses besides a handle of a few
 * hundred bytes of registers: at every alignment, init accepts exactly
 * bytes() and a 30K-event workload with splits, merges, compactions and
 * stage-0 traffic writes nothing past it (a guard pattern), nor before
 * the start. The macro equals the function for each desc. */
static void test_storage_is_all_memory(void) {
    static unsigned char raw[(1u << 17) + 64];
    static const struct { uint32_t nodes, buffer, cache; } cfg[] = {
        {512, 0, 0}, {200, 64, 0}, {300, 1024, 256}, {64, 8, 16}};
    unsigned c, off, i;
    CHECK(sizeof(hwp_rap) <= 1024);
    for (c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        hwp_rap_desc d = small_desc(64, 4, 0.02, cfg[c].nodes);
        size_t need;
        d.buffer = cfg[c].buffer ? cfg[c].buffer : HWP_RAP_BUFFER_NONE;
        d.cache = cfg[c].cache;
        need = hwp_rap_bytes(&d);
        CHECK_EQ(need, HWP_RAP_BYTES(cfg[c].nodes, cfg[c].buffer, cfg[c].cache));
        CHECK(need + 48 <= sizeof raw);
        for (off = 0; off < 16; off++) {
            hwp_rap r;
            hwp_rng g;
            int clean = 1;
            unsigned char *m = ALIGN16(raw) + 16 + off;
            memset(raw, 0xA5, sizeof raw);
            CHECK_EQ(hwp_rap_init(&r, m, need, &d, NULL), HWP_OK);
            hwp_rng_seed(&g, off);
            for (i = 0; i < 30000; i++)
                hwp_rap_add(&r, hwp_rng_below(&g, 3) ? 0x400000 + hwp_rng_below(&g, 4096)
                                                     : hwp_rng_next(&g), 1);
            CHECK_EQ(hwp_rap_flush(&r), HWP_OK);
            for (i = 0; i < 16 + off; i++) clean &= ALIGN16(raw)[i] == 0xA5;
            for (i = 0; i < 32; i++) clean &= m[need + i] == 0xA5;
            CHECK(clean);
            CHECK(r.merges > 0 && r.splits > 0);
            CHECK_EQ(hwp_rap_init(&r, m, need - 16, &d, NULL), HWP_ENOSPC);
        }
    }
}

static void test_levels_for_odd_widths(void) {
    hwp_rap r;
    hwp_rap_desc d = small_desc(5, 4, 0.1, 64);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(r.levels, 3); /* 2 + 2 + 1 bits */
    CHECK_EQ(r.shift[0], 5);
    CHECK_EQ(r.shift[1], 3);
    CHECK_EQ(r.shift[2], 1);
    CHECK_EQ(r.shift[3], 0);
    d = small_desc(64, 16, 0.1, 64);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(r.levels, 16);
    d = small_desc(64, 2, 0.1, 64);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(r.levels, 64);
}

static void test_invalid_desc(void) {
    hwp_rap r;
    hwp_rap_desc d;
    static const struct {
        int field;
        double v;
        const char *why;
    } bad[] = {
        {0, 65, "key_bits"}, {1, 3, "branching"}, {1, 32, "branching"},
        {2, 1.0, "eps"},     {2, -0.5, "eps"},   {3, 4, "nodes"},
        {4, 1, "q"},         {4, 65, "q"},       {5, 3, "buffer"},
        {6, 9, "source"},    {7, 1.5, "hot"},     {8, 6, "cache"},
    };
    unsigned i;
    for (i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        memset(&d, 0, sizeof d);
        switch (bad[i].field) {
        case 0: d.key_bits = (uint32_t)bad[i].v; break;
        case 1: d.branching = (uint32_t)bad[i].v; break;
        case 2: d.eps = bad[i].v; break;
        case 3: d.nodes = (uint32_t)bad[i].v; break;
        case 4: d.q = (uint32_t)bad[i].v; break;
        case 5: d.buffer = (uint32_t)bad[i].v; break;
        case 6: d.source = (uint32_t)bad[i].v; break;
        case 8: d.cache = (uint32_t)bad[i].v; break;
        default: d.hot = bad[i].v; break;
        }
        CHECK_EQ(hwp_rap_bytes(&d), 0);
        CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_EINVAL);
        CHECK_HAS(hwp_why(&r), bad[i].why);
    }
    CHECK_EQ(hwp_rap_init(&r, mem + 8, MEMSZ - 8, NULL, NULL), HWP_OK);
    d = small_desc(16, 4, 0.1, 64);
    d.key_base = UINT64_MAX - 0xFFFE; /* the domain would pass 2^64 */
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&r), "key_base");
    CHECK_EQ(hwp_rap_init(&r, NULL, MEMSZ, NULL, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_rap_init(&r, mem, hwp_rap_bytes(NULL) - 16, NULL, NULL),
             HWP_ENOSPC);
    CHECK_HAS(hwp_why(&r), "smaller");
    CHECK_EQ(hwp_rap_init(NULL, mem, MEMSZ, NULL, NULL), HWP_EINVAL);
    /* A handle that was never initialised is refused by every cold call. */
    memset(&r, 0, sizeof r);
    CHECK_EQ(hwp_rap_reset(&r), HWP_EINVAL);
    CHECK_EQ(hwp_rap_flush(&r), HWP_EINVAL);
    CHECK_EQ(hwp_rap_bound(&r), 0);
    CHECK_EQ(hwp_rap_hot(&r, 0.1, NULL, 0), 0);
}

static uint64_t est(const hwp_rap *r, uint64_t lo, uint64_t hi, uint64_t *up) {
    uint64_t l = 0, u = 0;
    hwp_rap_estimate(r, lo, hi, &l, &u);
    if (up) *up = u;
    return l;
}

/* The state machine traced by hand on a 4-bit domain with b = 4 (two
 * levels), eps = 0.5: the threshold is floor(n / 4), recomputed every
 * event while n < 64. Counts, splits, the bottom-up merge with partial
 * children and the re-split around a surviving child (sec. 3.3). */
static void test_hand_traced_tree(void) {
    hwp_rap r;
    hwp_rap_desc d = small_desc(4, 4, 0.5, 64);
    uint64_t up;
    int i;
    d.first_merge = 8;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    /* n=1: root count 1 > 0 splits into [0,3] [4,7] [8,11] [12,15]. */
    hwp_rap_add(&r, 5, 1);
    CHECK_EQ(r.nodes, 5);
    CHECK_EQ(r.pool[0].count, 1);
    /* n=2: [4,7] takes it (1 > floor(2/4) = 0) and splits. */
    hwp_rap_add(&r, 5, 1);
    CHECK_EQ(r.nodes, 9);
    /* n=3: the single key 5 counts it; single keys never split. */
    hwp_rap_add(&r, 5, 1);
    CHECK_EQ(r.nodes, 9);
    CHECK_EQ(est(&r, 5, 5, &up), 1);
    CHECK_EQ(up, 3); /* + root 1 + [4,7] 1 */
    /* n=4: [12,15] gets its first event and splits. */
    hwp_rap_add(&r, 12, 1);
    CHECK_EQ(r.nodes, 13);
    CHECK_EQ(r.splits, 3);
    /* n=5..8: key 5 four more times; the merge batch runs at n = 8 with
     * threshold 2. Bottom-up: [4,7] (count 1) folds 4, 6, 7 (zero) and
     * keeps 5 (1 + 5 > 2): partial children. [12,15] (count 1) folds its
     * four zero children. The root (1) folds [0,3], [8,11] and then
     * [12,15] (1 + 1 <= 2), keeping only [4,7]. */
    for (i = 0; i < 4; i++) hwp_rap_add(&r, 5, 1);
    CHECK_EQ(r.merges, 1);
    CHECK_EQ(r.nodes, 3);
    CHECK_EQ(r.used, 3);
    CHECK_EQ(r.folded, 10);
    CHECK_EQ(r.pool[0].count, 2);
    CHECK_EQ(est(&r, 4, 7, NULL), 6);
    CHECK_EQ(est(&r, 5, 5, NULL), 5);
    CHECK_EQ(est(&r, 12, 15, &up), 0); /* folded into the root */
    CHECK_EQ(up, 2);
    CHECK_EQ(est(&r, 0, 15, NULL), 8);
    CHECK_EQ(r.next_merge, 16);
    /* n=9: key 6 has no child under [4,7]: counted at [4,7] (2, not > 2). */
    hwp_rap_add(&r, 6, 1);
    CHECK_EQ(r.nodes, 3);
    CHECK_EQ(est(&r, 4, 7, NULL), 7);
    /* n=10: [4,7] reaches 3 > 2 and re-grows 4, 6, 7 around 5. */
    hwp_rap_add(&r, 6, 1);
    CHECK_EQ(r.nodes, 6);
    CHECK_EQ(est(&r, 5, 5, NULL), 5);
    CHECK_EQ(est(&r, 6, 6, &up), 0);
    CHECK_EQ(up, 2 + 3);
    hwp_rap_add(&r, 6, 1);
    CHECK_EQ(est(&r, 6, 6, NULL), 1);
    CHECK_EQ(est(&r, 0, 15, NULL), 11);
    CHECK_EQ(r.n, 11);
}

typedef struct visit_sum {
    uint64_t sum, nodes, root_sum, max_depth;
} visit_sum;

static void sum_visit(void *ctx, const hwp_rap_range *rg) {
    visit_sum *v = (visit_sum *)ctx;
    v->sum += rg->count;
    v->nodes++;
    if (rg->depth == 0) v->root_sum = rg->sum;
    if (rg->depth > v->max_depth) v->max_depth = rg->depth;
}

typedef struct check_ctx {
    hwx_exact *x;
    uint64_t bad_lower, bad_upper, bad_eps, nodes;
    double slack; /* allowed true - sum */
} check_ctx;

static void check_visit(void *ctx, const hwp_rap_range *rg) {
    check_ctx *c = (check_ctx *)ctx;
    uint64_t t = hwx_exact_range(c->x, rg->lo, rg->hi);
    c->nodes++;
    if (t < rg->sum) c->bad_lower++;
    if (t > rg->upper) c->bad_upper++;
    if ((double)(t - rg->sum) > c->slack) c->bad_eps++;
}

/* Every node: sum <= true <= upper, and true <= sum + eps n + levels. */
static void check_tree(const hwp_rap *r, hwx_event *ev, size_t n,
                       int strict) {
    hwx_exact x;
    check_ctx c;
    visit_sum v;
    memset(&c, 0, sizeof c);
    memset(&v, 0, sizeof v);
    hwx_exact_build(&x, ev, n);
    c.x = &x;
    c.slack = r->desc.eps * (double)r->n + r->levels;
    CHECK_EQ(hwp_rap_foreach(r, check_visit, &c), HWP_OK);
    CHECK_EQ(c.bad_lower, 0);
    CHECK_EQ(c.bad_upper, 0);
    if (strict) CHECK_EQ(c.bad_eps, 0);
    CHECK_EQ(hwp_rap_foreach(r, sum_visit, &v), HWP_OK);
    CHECK_EQ(v.sum, r->n);
    CHECK_EQ(v.root_sum, r->n);
    CHECK_EQ(v.nodes, r->nodes);
    CHECK(r->used <= r->cap && r->peak <= r->cap && r->nodes <= r->peak);
    if (strict) CHECK(hwp_rap_bound(r) <= (uint64_t)c.slack);
    hwx_exact_free(&x);
}

static void test_bound_small_streams(void) {
    static hwx_event ev[20000];
    static const unsigned ws[] = {8, 32, 64}, bs[] = {2, 4, 16};
    hwp_rap r;
    hwp_rng g;
    hwg_zipf z;
    unsigned wi, bi, i;
    hwp_rng_seed(&g, 7);
    hwg_zipf_init(&z, 5000, 1.1);
    for (wi = 0; wi < 3; wi++)
        for (bi = 0; bi < 3; bi++) {
            hwp_rap_desc d = small_desc(ws[wi], bs[bi], 0.05, 60000);
            CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
            for (i = 0; i < 20000; i++) {
                uint64_t k = hwg_key(hwg_zipf_next(&z, &g)) & hwp_mask64(ws[wi]);
                ev[i].key = k;
                ev[i].weight = 1;
                hwp_rap_add(&r, k, 1);
            }
            CHECK_EQ(r.deferred, 0);
            check_tree(&r, ev, 20000, 1);
        }
}

/* A pool of b + 1 nodes cannot hold the tree: merge batches run early,
 * splits are deferred and counted, the pool is never exceeded, and the
 * a-posteriori bound still holds for every node. */
static void test_tiny_pool_defers(void) {
    static hwx_event ev[5000];
    hwp_rap r;
    hwp_rng g;
    unsigned i;
    hwp_rap_desc d = small_desc(16, 4, 0.01, 5);
    hwp_rng_seed(&g, 3);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    for (i = 0; i < 5000; i++) {
        uint64_t k = hwp_rng_below(&g, 1u << 16);
        ev[i].key = k;
        ev[i].weight = 1;
        hwp_rap_add(&r, k, 1);
        if (r.used > r.cap) break;
    }
    CHECK(r.deferred > 0);
    CHECK(r.early_merges > 0);
    CHECK(r.peak <= 5);
    check_tree(&r, ev, i, 0);
}

static void test_estimate_intervals(void) {
    static hwx_event ev[8000];
    hwx_exact x;
    hwp_rap r;
    hwp_rng g;
    unsigned i, bad = 0;
    hwp_rap_desc d = small_desc(12, 4, 0.02, 4096);
    hwp_rng_seed(&g, 11);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    for (i = 0; i < 8000; i++) {
        uint64_t k = hwp_rng_below(&g, 4) ? 0x700 + hwp_rng_below(&g, 40)
                                          : hwp_rng_below(&g, 4096);
        uint64_t w = 1 + hwp_rng_below(&g, 3);
        ev[i].key = k;
        ev[i].weight = w;
        hwp_rap_add(&r, k, w);
    }
    hwx_exact_build(&x, ev, 8000);
    for (i = 0; i < 2000; i++) {
        uint64_t a = hwp_rng_below(&g, 4096), b = hwp_rng_below(&g, 4096), l = 0, u = 0, t;
        if (a > b) { uint64_t s = a; a = b; b = s; }
        CHECK_EQ(hwp_rap_estimate(&r, a, b, &l, &u), HWP_OK);
        t = hwx_exact_range(&x, a, b);
        if (t < l || t > u) bad++;
    }
    CHECK_EQ(bad, 0);
    {
        uint64_t l, u;
        CHECK_EQ(hwp_rap_estimate(&r, 5, 4, &l, &u), HWP_EINVAL);
    }
    hwx_exact_free(&x);
}

/* Keys outside [key_base, key_base + 2^w) are counted and dropped, not
 * folded into the domain (which would credit another region with them);
 * ranges are reported in absolute keys. */
static void test_key_domain(void) {
    hwp_rap r;
    hwp_rap_stats st;
    hwp_rap_range hot[4];
    hwp_rap_desc d = small_desc(8, 4, 0.1, 256);
    d.key_base = 0x7f0000;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    hwp_rap_add(&r, 0x7f00ff, 1);
    hwp_rap_add(&r, 0x7f00ff, 1);
    hwp_rap_add(&r, 0x7f01ff, 2); /* one past the domain */
    hwp_rap_add(&r, 0xff, 3);     /* the same low bits, far away */
    hwp_rap_add(&r, 0x7effff, 1); /* just below */
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK_EQ(st.events, 8);
    CHECK_EQ(st.dropped, 6);
    CHECK_EQ(st.n, 2);
    CHECK_EQ(est(&r, 0, UINT64_MAX, NULL), 2);
    CHECK_EQ(est(&r, 0x7f00c0, 0x7f00ff, NULL) + r.pool[0].count, 2);
    CHECK_EQ(hwp_rap_hot(&r, 0.5, hot, 4) >= 1, 1);
    CHECK_EQ(hot[0].lo >= 0x7f0000 && hot[0].hi <= 0x7f00ff, 1);
}

static void test_stage0_buffer(void) {
    hwp_rap plain, buffered;
    hwx_code code;
    hwp_rap_desc d;
    static unsigned char mem2[1u << 17];  /* aligned view below */
    unsigned i;
    memset(&d, 0, sizeof d);
    d.eps = 0.01;
    d.nodes = 2048;
    d.buffer = HWP_RAP_BUFFER_NONE;
    CHECK_EQ(hwp_rap_init(&plain, mem, MEMSZ, &d, NULL), HWP_OK);
    d.buffer = 1024;
    CHECK(hwp_rap_bytes(&d) <= sizeof mem2);
    CHECK_EQ(hwp_rap_init(&buffered, ALIGN16(mem2), sizeof mem2 - 16, &d, NULL),
             HWP_OK);
    hwx_code_init(&code, 500, 0x400000, 5);
    for (i = 0; i < 50000; i++) {
        uint64_t pc = hwx_code_next(&code);
        hwp_rap_add(&plain, pc, 1);
        hwp_rap_add(&buffered, pc, 1);
    }
    CHECK_EQ(plain.updates, 50000);
    CHECK(buffered.buffered > 0);
    CHECK_EQ(buffered.n + buffered.buffered, 50000);
    /* Loops combine, though at 50K events and eps = 1% stage 0 may hold
     * only four thresholds (62 events), not 4 * entries. */
    CHECK(buffered.updates * 2 < plain.updates);
    CHECK_EQ(hwp_rap_flush(&buffered), HWP_OK);
    CHECK_EQ(buffered.buffered, 0);
    CHECK_EQ(buffered.n, 50000);
    CHECK_EQ(est(&buffered, 0, UINT64_MAX, NULL), 50000);
    hwx_code_free(&code);
}

/* Stage 0 must not hide weight (sec. 3.3: entries are drained into the
 * engine, they do not wait for the end of the run). A code stream whose
 * working set fits the 1K-entry buffer, with per-block weights as a VM
 * host sends them: at every event the buffer holds at most the limit of
 * docs/rap.md, max(T, min(4 * entries, 4 * T)), T = eps n / levels; at
 * n = 100K (before any flush) and at the end the bound is within the
 * stated eps n + levels (limit + w_max) + limit and within eps n of an
 * unbuffered tree's, and at the end the hot ranges are those of the
 * unbuffered tree within the tolerances below, while the buffer still
 * combines. */
#define DRAIN_N (1u << 18)
static void test_stage0_drains(void) {
    static hwx_event ev[DRAIN_N];
    hwp_rap *plain, *buffered;
    hwp_rap_range hp[32], hb[32];
    hwp_rap_acc ap, ab;
    hwx_code code;
    hwx_exact x;
    hwp_rap_desc d;
    size_t np, nb, i, j;
    uint64_t over = 0, peak = 0;
    int early = 0;
    memset(&d, 0, sizeof d);
    d.eps = 0.01;
    d.nodes = 4096; /* 64 KB: no deferral, so the stated bound applies */
    d.buffer = HWP_RAP_BUFFER_NONE;
    plain = hwx_rap_new(&d, NULL);
    d.buffer = 1024;
    buffered = hwx_rap_new(&d, NULL);
    hwx_code_init(&code, 12, 0x400000, 9);
    for (i = 0; i < DRAIN_N; i++) {
        uint64_t pc = hwx_code_next(&code), wt = 1u + ((pc >> 3) & 7u);
        hwp_rap_add(plain, pc, wt);
        hwp_rap_add(buffered, pc, wt);
        ev[i].key = pc;
        ev[i].weight = wt;
        /* The promises of docs/rap.md, computed here from the desc
         * (eps = 1%, 32 levels, 1024 entries, weights <= 8). */
        if ((double)buffered->buffered >
            hwx_rap_buf_limit(0.01, 32, (double)buffered->n, 1024))
            over++;
        if (buffered->buffered > peak) peak = buffered->buffered;
        if (!early && plain->n >= 100000u) {
            early = 1;
            CHECK_EQ(buffered->deferred + plain->deferred, 0);
            CHECK((double)hwp_rap_bound(buffered) <=
                  hwx_rap_buf_bound(0.01, 32, (double)plain->n, 1024, 8.0));
            CHECK(hwp_rap_bound(buffered) <=
                  hwp_rap_bound(plain) + plain->n / 100u);
        }
    }
    CHECK(early);
    hwx_code_free(&code);
    hwx_exact_build(&x, ev, DRAIN_N);
    CHECK(x.n < 1024); /* the working set fits the buffer */
    CHECK_EQ(over, 0);
    CHECK(peak > 0);
    /* Still combines, at least 4-fold (the limit ends at 4 T, 1.5K
     * events). */
    CHECK(buffered->updates * 4 < plain->updates);
    CHECK_EQ(hwp_rap_flush(buffered), HWP_OK);
    CHECK_EQ(buffered->n, plain->n);
    /* The bound: within eps of the unbuffered tree's, and the stated
     * one. */
    CHECK(hwp_rap_bound(buffered) <= hwp_rap_bound(plain) + plain->n / 100u);
    CHECK((double)hwp_rap_bound(buffered) <=
          hwx_rap_buf_bound(0.01, 32, (double)plain->n, 1024, 8.0));
    /* The same hot ranges (sec. 4.1), each within 1% of n, apart from
     * ranges within 1% of n of the 10% line in the other tree. */
    np = hwp_rap_hot(plain, 0.10, hp, 32);
    nb = hwp_rap_hot(buffered, 0.10, hb, 32);
    CHECK(np >= 3 && np <= 32 && nb <= 32);
    for (i = 0; i < np; i++) {
        int found = 0;
        for (j = 0; j < nb; j++)
            if (hb[j].lo == hp[i].lo && hb[j].hi == hp[i].hi) {
                found = 1;
                CHECK_NEAR((double)hb[j].excl, (double)hp[i].excl,
                           0.01 * (double)plain->n);
            }
        CHECK(found || hp[i].excl < plain->n / 100u * 11u);
    }
    for (j = 0; j < nb; j++) {
        int found = 0;
        for (i = 0; i < np; i++)
            found |= hb[j].lo == hp[i].lo && hb[j].hi == hp[i].hi;
        CHECK(found || hb[j].excl < buffered->n / 100u * 11u);
    }
    /* The paper's percent error on hot ranges (sec. 4.3) against the
     * exact profile: within one point of the unbuffered tree's. */
    CHECK_EQ(hwp_rap_accuracy(plain, 0.10, hwx_exact_range, &x, &ap), HWP_OK);
    CHECK_EQ(hwp_rap_accuracy(buffered, 0.10, hwx_exact_range, &x, &ab),
             HWP_OK);
    CHECK_EQ(ab.violations, 0);
    CHECK(ab.mean_pct <= ap.mean_pct + 1.0);
    hwx_exact_free(&x);
    free(plain);
    free(buffered);
}

/* The lookup cache only skips the walk: with it the tree must be the same,
 * node for node, as without it, through splits, merges, deferrals and
 * compactions (a small pool forces all of them). */
static void test_cache_is_transparent(void) {
    static unsigned char m2[(1u << 16) + 16];
    hwp_rap a, c;
    hwp_rng g;
    hwg_zipf z;
    unsigned i, same = 1;
    hwp_rap_desc d = small_desc(64, 4, 0.02, 200);
    hwp_rng_seed(&g, 8);
    hwg_zipf_init(&z, 3000, 1.0);
    CHECK_EQ(hwp_rap_init(&a, mem, MEMSZ, &d, NULL), HWP_OK);
    d.cache = 64;
    CHECK_EQ(hwp_rap_init(&c, ALIGN16(m2), 1u << 16, &d, NULL), HWP_OK);
    CHECK(c.cache != NULL && a.cache == NULL);
    for (i = 0; i < 60000; i++) {
        uint64_t k = hwg_key(hwg_zipf_next(&z, &g) % (i < 30000 ? 3000 : 50));
        hwp_rap_add(&a, k, 1);
        hwp_rap_add(&c, k, 1);
    }
    CHECK(a.deferred > 0 && a.merges > 0 && a.splits > 0);
    CHECK_EQ(a.used, c.used);
    for (i = 0; i < a.used && i < c.used; i++)
        same &= a.pool[i].count == c.pool[i].count &&
                a.pool[i].child == c.pool[i].child &&
                a.pool[i].mask == c.pool[i].mask;
    CHECK(same);
    CHECK_EQ(a.splits, c.splits);
    CHECK_EQ(a.deferred, c.deferred);
}

/* Retiring a range (code that is gone): the ranges inside it fold their
 * subtrees into themselves, counts kept (every bound still holds against
 * the exact profile), nodes freed; ranges that straddle its ends keep
 * their children; the tree then grows again on new keys there, and the
 * lookup cache does not remember the old shape. */
typedef struct retire_ctx {
    uint64_t lo, hi, inside_below; /* nodes inside [lo, hi] under another */
    uint64_t top_lo, top_hi;       /* the range the fold kept             */
} retire_ctx;

static void retire_visit(void *ctx, const hwp_rap_range *rg) {
    retire_ctx *c = (retire_ctx *)ctx;
    uint64_t span = rg->hi - rg->lo;
    if (rg->lo < c->lo || rg->hi > c->hi) return;
    /* its parent spans span * 4 + 3 keys from lo rounded down: inside? */
    if (rg->depth > 0) {
        uint64_t plo = rg->lo & ~(span * 4u + 3u), phi = plo + span * 4u + 3u;
        if (plo >= c->lo && phi <= c->hi) c->inside_below++;
    }
}

static void test_retire(void) {
    static hwx_event ev[30000];
    static unsigned char m2[(1u << 16) + 16];
    hwp_rap r, c;
    hwp_rng g;
    hwp_rap_stats before, after;
    retire_ctx rc;
    visit_sum v;
    uint64_t low = 0, up = 0, low2 = 1, up2 = 1;
    unsigned i, n = 0, same = 1;
    hwp_rap_desc d = small_desc(16, 4, 0.05, 200);
    hwp_rng_seed(&g, 11);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    d.cache = 64;
    CHECK_EQ(hwp_rap_init(&c, ALIGN16(m2), 1u << 16, &d, NULL), HWP_OK);
    /* a JIT's code at [0x1000, 0x1fff], hot and spread, beside steady
     * code at [0x8000, 0x80ff] */
    for (i = 0; i < 20000; i++, n++) {
        uint64_t k = i % 3 ? 0x1000u + hwp_rng_below(&g, 0x1000u)
                           : 0x8000u + hwp_rng_below(&g, 0x100u);
        ev[n].key = k;
        ev[n].weight = 1;
        hwp_rap_add(&r, k, 1);
        hwp_rap_add(&c, k, 1);
    }
    CHECK_EQ(hwp_rap_get_stats(&r, &before), HWP_OK);
    CHECK_EQ(hwp_rap_estimate(&r, 0x1000u, 0x1fffu, &low, &up), HWP_OK);
    CHECK_EQ(hwp_rap_retire(&r, 0x1000u, 0x1fffu), HWP_OK);
    CHECK_EQ(hwp_rap_retire(&c, 0x1000u, 0x1fffu), HWP_OK);
    CHECK_EQ(hwp_rap_get_stats(&r, &after), HWP_OK);
    CHECK(after.nodes + 8u < before.nodes); /* the code's subtree went */
    CHECK_EQ(after.evicted - before.evicted, before.nodes - after.nodes);
    CHECK(after.scanned > before.scanned);
    CHECK_EQ(after.n, before.n);
    CHECK_EQ(hwp_rap_estimate(&r, 0x1000u, 0x1fffu, &low2, &up2), HWP_OK);
    CHECK_EQ(low2, low); /* its weight stays, in the range that held it */
    CHECK_EQ(up2, up);
    memset(&rc, 0, sizeof rc);
    rc.lo = 0x1000u;
    rc.hi = 0x1fffu;
    CHECK_EQ(hwp_rap_foreach(&r, retire_visit, &rc), HWP_OK);
    CHECK_EQ(rc.inside_below, 0);
    check_tree(&r, ev, n, 1);
    /* the steady code kept its ranges */
    CHECK_EQ(hwp_rap_estimate(&r, 0x8000u, 0x80ffu, &low, &up), HWP_OK);
    CHECK(low > 0 && low + hwp_rap_bound(&r) >= 20000u / 3u);
    /* unaligned ends: [0x8040, 0x80bf] straddles [0x8000, 0x803f]'s
     * siblings' parent, which keeps its children */
    CHECK_EQ(hwp_rap_get_stats(&r, &before), HWP_OK);
    CHECK_EQ(hwp_rap_retire(&r, 0x8041u, 0x80bfu), HWP_OK);
    CHECK_EQ(hwp_rap_retire(&c, 0x8041u, 0x80bfu), HWP_OK);
    CHECK_EQ(hwp_rap_estimate(&r, 0x8000u, 0x80ffu, &low2, &up2), HWP_OK);
    CHECK_EQ(low2, low);
    check_tree(&r, ev, n, 1);
    /* new code where the old was: the tree grows there again, and the
     * cached tree counts exactly as the uncached one */
    for (i = 0; i < 10000; i++, n++) {
        uint64_t k = 0x1800u + hwp_rng_below(&g, 0x40u);
        ev[n].key = k;
        ev[n].weight = 1;
        hwp_rap_add(&r, k, 1);
        hwp_rap_add(&c, k, 1);
    }
    memset(&v, 0, sizeof v);
    CHECK_EQ(hwp_rap_foreach(&r, sum_visit, &v), HWP_OK);
    CHECK(v.max_depth >= 5); /* [0x1800, 0x183f] is depth 5 */
    check_tree(&r, ev, n, 0);
    CHECK_EQ(r.used, c.used);
    for (i = 0; i < r.used && i < c.used; i++)
        same &= r.pool[i].count == c.pool[i].count && r.pool[i].mask == c.pool[i].mask;
    CHECK(same);
    /* a range outside the domain changes nothing; lo > hi is refused */
    CHECK_EQ(hwp_rap_get_stats(&r, &before), HWP_OK);
    CHECK_EQ(hwp_rap_retire(&r, 0x10000u, 0x1ffffu), HWP_OK);
    CHECK_EQ(hwp_rap_get_stats(&r, &after), HWP_OK);
    CHECK_EQ(after.nodes, before.nodes);
    CHECK_EQ(hwp_rap_retire(&r, 2, 1), HWP_EINVAL);
    CHECK_HAS(hwp_why(&r), "retire: lo must be <= hi");
    CHECK_EQ(hwp_rap_retire(NULL, 1, 2), HWP_EINVAL);
    /* the whole domain folds into the root */
    CHECK_EQ(hwp_rap_retire(&r, 0, ~(uint64_t)0), HWP_OK);
    CHECK_EQ(r.nodes, 1);
    CHECK_EQ(r.pool[0].count, r.n);
}

/* The lookup (spine, jump[] table, strided walk for b <= 4, popcount walk
 * otherwise) against the tree's own ranges: for probe keys, the node the
 * hot path counts in must be the deepest range hwp_rap_foreach reports
 * that contains the key. Checked as the tree grows, merges and defers, on
 * widths where log2 b does and does not divide w. */
static hwp_rap_range seen[600]; /* the tree's ranges; ctx counts them */

static void ranges_visit(void *ctx, const hwp_rap_range *rg) {
    size_t *n = (size_t *)ctx;
    if (*n < sizeof seen / sizeof seen[0]) seen[(*n)++] = *rg;
}

static void test_lookup_matches_ranges(void) {
    static const unsigned cfg[][2] = {{64, 4}, {64, 2}, {64, 16}, {32, 4},
                                      {8, 2},  {7, 4},  {63, 2},  {12, 8},
                                      {20, 4}, {9, 16}};
    size_t nseen;
    unsigned c, i, j, wrong = 0, probes = 0, deep = 0, skipped = 0, fast = 0;
    for (c = 0; c < sizeof cfg / sizeof cfg[0]; c++) {
        hwp_rap r;
        hwp_rng g;
        hwg_zipf z;
        hwp_rap_desc d = small_desc(cfg[c][0], cfg[c][1], 0.02, 300);
        uint64_t mask = hwp_mask64(cfg[c][0]), base = 0x7000400000ull & mask;
        hwp_rng_seed(&g, 40 + c);
        hwg_zipf_init(&z, 5000, 1.1);
        CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
        for (i = 0; i < 40000; i++) {
            /* Code-like clusters (a deep spine) mixed with spread keys. */
            uint64_t k = i & 3 ? base + hwg_zipf_next(&z, &g) * 4
                               : hwg_key(hwg_zipf_next(&z, &g));
            hwp_rap_add(&r, k, 1);
            if (i % 4000 != 3999) continue;
            nseen = 0;
            CHECK_EQ(hwp_rap_foreach(&r, ranges_visit, &nseen), HWP_OK);
            CHECK(nseen == r.nodes);
            for (j = 0; j < 300; j++) {
                uint64_t p = (j % 3 == 0   ? hwp_rng_next(&g)
                              : j % 3 == 1 ? base + hwg_zipf_next(&z, &g) * 4 +
                                                 hwp_rng_below(&g, 8)
                                           : hwg_key(hwg_zipf_next(&z, &g))) &
                             mask;
                size_t best = nseen, t;
                for (t = 0; t < nseen; t++)
                    if (seen[t].lo <= p && p <= seen[t].hi &&
                        (best == nseen || seen[t].depth > seen[best].depth))
                        best = t;
                if (best == nseen) { /* the root holds every key */
                    wrong++;
                    continue;
                }
                /* The generic lookup, and the b = 4 copy where it runs. */
                wrong += seen[best].node !=
                         (uint32_t)(hwp__rap_descend(&r, p, false) - r.pool);
                if (r.cfg & HWP__RAP_FAST) {
                    wrong += seen[best].node !=
                             (uint32_t)(hwp__rap_descend(&r, p, true) - r.pool);
                    fast++;
                }
                deep += seen[best].depth > r.jump_depth;
                if (!((p ^ r.spine_lo) & r.spine_mask)) {
                    unsigned e = (unsigned)(p >> r.jump_shift) & r.jump_mask;
                    skipped += r.ix->skip[e] != r.ix->jump[e] &&
                               !((p ^ r.ix->skip_lo[e]) >> r.ix->skip_sh[e]);
                }
                probes++;
            }
        }
    }
    CHECK(probes == 10u * 10u * 300u);
    CHECK(deep > probes / 20); /* walks went past the jump table */
    CHECK(skipped > probes / 50); /* ... and started below a chain */
    CHECK(fast == 3u * 10u * 300u); /* the three b = 4, even-w shapes */
    CHECK_EQ(wrong, 0);
}

static void test_insn_entry(void) {
    hwp_rap r;
    hwp_insn in;
    unsigned i;
    hwp_rap_desc d = small_desc(64, 4, 0.1, 512);
    d.source = HWP_RAP_SRC_VALUE;
    d.cls_mask = HWP_CLS_BIT(HWP_CLS_LOAD);
    d.ev_mask = HWP_EV_DCMISS;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    memset(&in, 0, sizeof in);
    in.pc = 0x1000;
    in.value = 42;
    in.cls = HWP_CLS_LOAD;
    hwp_rap_insn(&r, &in); /* no miss: filtered out */
    in.events = HWP_EV_DCMISS;
    hwp_rap_insn(&r, &in); /* counted: value 42 */
    in.cls = HWP_CLS_STORE;
    hwp_rap_insn(&r, &in); /* wrong class */
    CHECK_EQ(r.n, 1);
    in.cls = HWP_CLS_LOAD;
    for (i = 0; i < 99; i++) hwp_rap_insn(&r, &in);
    CHECK_EQ(r.n, 100);
    CHECK(est(&r, 42, 42, NULL) > 50); /* keyed by the value ...  */
    CHECK_EQ(est(&r, 0x1000, 0x1000, NULL), 0); /* ... not the PC */
    d.source = HWP_RAP_SRC_PC;
    d.cls_mask = 0;
    d.ev_mask = 0;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    hwp_rap_insn(&r, &in);
    CHECK_EQ(r.n, 1);
    CHECK_EQ(est(&r, 0, 0x0FFF, NULL), 0);
}

/* The engine runs beside the core (sec. 3.3): a host that spends more
 * than the engine's 2 cycles an update between events never stalls, and
 * one that spends nothing stalls for the engine's time less what stage 0
 * absorbs. Figures by hand: with no stage 0 and split/merge latencies
 * set to 0, update k (k >= 2) of a host whose clock stands still waits
 * for update k-1 to leave stage 1: 2 (N - 1) cycles. */
static void test_cost_queue(void) {
    hwp_rap r;
    hwp_cost c;
    hwp_rap_stats st;
    hwp_rng g;
    unsigned i, first_stall = 0;
    hwp_rap_desc d = small_desc(32, 4, 0.05, 1024);
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    d.buffer = 1024;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, &c), HWP_OK);
    hwp_rng_seed(&g, 1);
    for (i = 0; i < 30000; i++) {
        hwp_rap_add(&r, hwp_rng_below(&g, 8) ? 0x1234 : hwp_rng_u32(&g), 1);
        hwp_cost_tick(&c, 6); /* more than 2 cycles an update */
    }
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK(st.splits > 0 && st.merges > 0);
    /* Splits and merge batches keep the engine busy (a batch scans up to
     * 1024 nodes, 2048 cycles); stage 0 holds the updates meanwhile and
     * 4 cycles of slack an event catch up, so the host never waits. */
    CHECK_EQ(st.cycles, 0);
    CHECK_EQ(c.total, 0);
    CHECK_EQ(st.engine_cycles, 2 * st.updates + 5 * st.splits + 2 * st.scanned);
    /* A host whose clock stands still, no stage 0, only update latency. */
    d.buffer = HWP_RAP_BUFFER_NONE;
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_RAP_SPLIT, 0), HWP_OK);
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_RAP_MERGE_NODE, 0), HWP_OK);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, &c), HWP_OK);
    for (i = 0; i < 1000; i++) hwp_rap_add(&r, hwp_rng_u32(&g), 1);
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK_EQ(st.cycles, 2 * 999);
    CHECK_EQ(c.total, 2 * 999);
    CHECK_EQ(c.spent[HWP_COST_RAP_STALL], 2 * 999);
    /* With 64 stage-0 entries and a host at 1 cycle an event on distinct
     * keys, the host waits only once 64 updates wait for stage 1. */
    d.buffer = 64;
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, &c), HWP_OK);
    for (i = 0; i < 2000; i++) {
        hwp_rap_add(&r, (uint64_t)i * 4096u, 1);
        hwp_cost_tick(&c, 1);
        if (!first_stall && c.total) first_stall = (unsigned)r.updates;
    }
    /* Updates start when stage 0 is full (64 keys) and arrive one a
     * cycle; update k waits only if update k - 64 has not entered stage 1,
     * so never before k = 66 (k = 2 with no stage 0). Updates alone, one
     * every 2 cycles, fall a cycle behind each: k waits once 2 (k - 65) >
     * k - 1, from k = 130; split flushes bring it earlier. */
    CHECK(first_stall > 65 && first_stall < 130);
    CHECK(c.total > 0);
}

/* The engine is a pipeline (sec. 3.3): an update takes 4 cycles from
 * stage 1 to the split comparator, 2 each for the TCAM and the SRAM
 * (sec. 3.4), and the next one enters stage 1 2 cycles after it, not 4.
 * Figures by hand for a host whose clock stands still:
 *  - N distinct keys reach a stage 0 that holds them all at once (they
 *    leave it as its weight limit and the flush send them, all at host
 *    time 0): stage 1 takes the last at 2 (N - 1) and is free again at
 *    2 N, with no stall (an engine that is not pipelined: 4 N);
 *  - no stage 0: update k (k >= 2) waits for k - 1 to leave stage 1,
 *    2 (N - 1) stall cycles; 4 (N - 1) with the issue interval set to 4;
 *  - a split is seen at stage 4, so its 5-cycle flush starts 4 cycles
 *    after the splitting update entered stage 1, and the update after it
 *    waits 4 + 5 cycles instead of 2: 2 (N - 1) + 7 s, s the splits of the
 *    first N - 1 updates. */
static void test_cost_pipeline(void) {
    hwp_rap r;
    hwp_cost c;
    hwp_rap_stats st;
    hwp_rng g;
    uint64_t s;
    unsigned i, n = 1000;
    hwp_rap_desc d = small_desc(32, 4, 0.05, 1024);
    CHECK_EQ(hwp_cost_cycles(NULL, HWP_COST_RAP_ISSUE), 2);
    CHECK_EQ(hwp_cost_cycles(NULL, HWP_COST_RAP_EVENT), 4);
    /* A burst into an empty stage 0, drained by the flush. */
    d.buffer = 1024;
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_RAP_SPLIT, 0), HWP_OK);
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_RAP_MERGE_NODE, 0), HWP_OK);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, &c), HWP_OK);
    for (i = 0; i < n; i++) hwp_rap_add(&r, (uint64_t)i * 4096u, 1);
    hwp_rap_flush(&r);
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK_EQ(st.updates, n);
    CHECK_EQ(r.busy, 2 * n);
    CHECK_EQ(st.engine_cycles, 2 * n);
    CHECK_EQ(st.cycles, 0);
    /* No stage 0: every update waits for stage 1. */
    d.buffer = HWP_RAP_BUFFER_NONE;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, &c), HWP_OK);
    hwp_rng_seed(&g, 7);
    for (i = 0; i < n; i++) hwp_rap_add(&r, hwp_rng_u32(&g), 1);
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK(st.splits > 0);
    CHECK_EQ(st.cycles, 2 * (n - 1));
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_RAP_ISSUE, 4), HWP_OK);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, &c), HWP_OK);
    for (i = 0; i < n; i++) hwp_rap_add(&r, hwp_rng_u32(&g), 1);
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK_EQ(st.cycles, 4 * (n - 1));
    /* Splits charged: each delays the next update by latency + flush. */
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    CHECK_EQ(hwp_cost_set(&c, HWP_COST_RAP_MERGE_NODE, 0), HWP_OK);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, &c), HWP_OK);
    for (i = 0; i + 1 < n; i++) hwp_rap_add(&r, hwp_rng_u32(&g), 1);
    s = r.splits;
    CHECK(s > 0);
    hwp_rap_add(&r, hwp_rng_u32(&g), 1);
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK_EQ(st.cycles, 2 * (n - 1) + 7 * s);
}

/* Merging is a host operation: no modelled cycles on either cost. */
static void test_merge_is_free(void) {
    static unsigned char m2[(1u << 17) + 16];
    hwp_rap a, b;
    hwp_cost ca, cb;
    hwp_rap_stats before, after;
    hwp_rng g;
    unsigned i;
    uint64_t ta, tb;
    hwp_rap_desc d = small_desc(32, 4, 0.05, 1024);
    CHECK_EQ(hwp_cost_init(&ca, NULL), HWP_OK);
    CHECK_EQ(hwp_cost_init(&cb, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_init(&a, mem, MEMSZ, &d, &ca), HWP_OK);
    CHECK_EQ(hwp_rap_init(&b, ALIGN16(m2), 1u << 17, &d, &cb), HWP_OK);
    hwp_rng_seed(&g, 3);
    for (i = 0; i < 20000; i++) {
        hwp_rap_add(&a, hwp_rng_below(&g, 4) ? 0x1234 : hwp_rng_u32(&g), 1);
        hwp_rap_add(&b, hwp_rng_below(&g, 4) ? 0x9999 : hwp_rng_u32(&g), 1);
    }
    ta = ca.total;
    tb = cb.total;
    CHECK(ta > 0);
    CHECK_EQ(hwp_rap_get_stats(&a, &before), HWP_OK);
    CHECK_EQ(hwp_rap_merge(&a, &b), HWP_OK);
    CHECK_EQ(hwp_rap_get_stats(&a, &after), HWP_OK);
    CHECK_EQ(ca.total, ta);
    CHECK_EQ(cb.total, tb);
    CHECK_EQ(ca.count[HWP_COST_RAP_STALL] + ca.count[HWP_COST_RAP_SPLIT] +
                 ca.count[HWP_COST_RAP_MERGE_NODE],
             ca.count[HWP_COST_RAP_STALL]);
    CHECK_EQ(after.n, 40000);
    CHECK(after.merges > before.merges);
}

static void test_hot_ranges_planted(void) {
    static hwx_event ev[40000];
    hwp_rap_range hot[32];
    hwx_exact x;
    hwp_rap r;
    hwp_rng g;
    size_t nh, i, found_key = 0, found_range = 0;
    hwp_rap_desc d = small_desc(16, 4, 0.01, 8192);
    hwp_rng_seed(&g, 99);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    for (i = 0; i < 40000; i++) {
        unsigned u = hwp_rng_below(&g, 100);
        uint64_t k = u < 30   ? 0x1234                          /* 30% key */
                     : u < 50 ? 0x8000 + hwp_rng_below(&g, 256) /* 20% range */
                              : hwp_rng_below(&g, 1u << 16);    /* background */
        ev[i].key = k;
        ev[i].weight = 1;
        hwp_rap_add(&r, k, 1);
    }
    hwx_exact_build(&x, ev, 40000);
    nh = hwp_rap_hot(&r, 0.10, hot, 32);
    CHECK(nh >= 2 && nh <= 32);
    for (i = 0; i < nh && i < 32; i++) {
        CHECK(hwx_exact_range(&x, hot[i].lo, hot[i].hi) >= 4000);
        CHECK(hot[i].excl >= 4000 && hot[i].hot);
        if (hot[i].lo == 0x1234 && hot[i].hi == 0x1234) found_key++;
        if (hot[i].lo == 0x8000 && hot[i].hi == 0x80FF) found_range++;
    }
    CHECK_EQ(found_key, 1);
    CHECK_EQ(found_range, 1);
    hwx_exact_free(&x);
}

static void test_merge_two_trees(void) {
    static unsigned char m2[(1u << 18) + 16], m3[(1u << 18) + 16];
    static hwx_event ev[20000];
    hwp_rap a, b, ab;
    hwp_rng g;
    unsigned i;
    hwp_rap_desc d = small_desc(32, 4, 0.02, 8000), other = d;
    hwp_rng_seed(&g, 5);
    CHECK_EQ(hwp_rap_init(&a, mem, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_init(&b, ALIGN16(m2), 1u << 18, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_init(&ab, ALIGN16(m3), 1u << 18, &d, NULL), HWP_OK);
    for (i = 0; i < 20000; i++) {
        uint64_t k = i < 10000 ? 0x10000 + hwp_rng_below(&g, 64)
                               : 0x7000000 + hwp_rng_below(&g, 1024);
        if (hwp_rng_below(&g, 4) == 0) k = hwp_rng_u32(&g);
        ev[i].key = k;
        ev[i].weight = 1;
        hwp_rap_add(i < 10000 ? &a : &b, k, 1);
        hwp_rap_add(&ab, k, 1);
    }
    other.eps = 0.03;
    {
        hwp_rap c;
        static unsigned char m4[(1u << 18) + 16];
        CHECK_EQ(hwp_rap_init(&c, ALIGN16(m4), 1u << 18, &other, NULL), HWP_OK);
        CHECK_EQ(hwp_rap_merge(&a, &c), HWP_EMISMATCH);
        CHECK_EQ(hwp_rap_merge(&a, &a), HWP_EINVAL);
    }
    CHECK_EQ(hwp_rap_merge(&a, &b), HWP_OK);
    CHECK_EQ(a.n, 20000);
    check_tree(&a, ev, 20000, 0);
    /* Within the bound of the concatenated stream's tree: both are
     * lower bounds within eps n (+ levels) of the truth. */
    {
        uint64_t lo[3] = {0x10000, 0x7000000, 0}, hi[3] = {0x1003F, 0x70003FF,
                                                           0xFFFFFFFF};
        double tol = 2 * (0.02 * 20000 + a.levels);
        for (i = 0; i < 3; i++)
            CHECK_NEAR((double)est(&a, lo[i], hi[i], NULL),
                       (double)est(&ab, lo[i], hi[i], NULL), tol);
    }
}

/* A tree merged into one whose pool is full of its own cold ranges (a
 * thread that did little, merged first): the events of src's hot range
 * must keep src's resolution. Before the fix, absorbing into a full pool
 * counted src's deep ranges at dst's coarse ones, and the hot 64-key
 * loop below lost most of its weight to a 2^20-key ancestor (pigz's
 * worker threads merged into its main thread: 7% mean error). */
static void test_merge_into_full_pool(void) {
    static unsigned char m2[(1u << 16) + 16];
    static hwx_event ev[60000];
    hwp_rap a, b;
    hwp_rap_est e, eb;
    hwp_rng g;
    hwx_exact x;
    unsigned i, n = 0;
    hwp_rap_desc d = small_desc(32, 4, 0.10, 96);
    hwp_rng_seed(&g, 21);
    CHECK_EQ(hwp_rap_init(&a, mem, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_init(&b, ALIGN16(m2), 1u << 16, &d, NULL), HWP_OK);
    for (i = 0; i < 4000; i++) { /* dst: cold keys everywhere */
        uint64_t k = hwp_rng_u32(&g) & ~(uint64_t)0xFFFF;
        ev[n].key = k;
        ev[n++].weight = 1;
        hwp_rap_add(&a, k, 1);
    }
    for (i = 0; i < 56000; i++) { /* src: a hot loop and a warm region */
        uint64_t k = i % 3 ? 0x5000000 + 4 * (i % 16)
                           : 0x9000000 + 16 * hwp_rng_below(&g, 1u << 16);
        ev[n].key = k;
        ev[n++].weight = 1;
        hwp_rap_add(&b, k, 1);
    }
    CHECK(a.deferred > 0 && a.used == a.cap); /* dst's pool is full */
    CHECK_EQ(hwp_rap_query(&b, 0x5000000, 0x500003F, &eb), HWP_OK);
    CHECK_EQ(hwp_rap_merge(&a, &b), HWP_OK);
    hwx_exact_build(&x, ev, n);
    CHECK_EQ(hwp_rap_query(&a, 0x5000000, 0x500003F, &e), HWP_OK);
    CHECK_EQ(hwx_exact_range(&x, 0x5000000, 0x500003F), 37333); /* i % 3 != 0 */
    /* src alone resolved the loop; the merged tree keeps it. */
    CHECK(eb.lower >= 37333 * 98 / 100);
    if (!CHECK(e.lower >= eb.lower))
        printf("    merged lower %llu, src alone %llu\n",
               (unsigned long long)e.lower, (unsigned long long)eb.lower);
    check_tree(&a, ev, n, 0);
    hwx_exact_free(&x);
}

typedef struct text_buf {
    char s[1 << 16];
    hwp_bufwriter b;
    hwp_writer w;
} text_buf;

/* Merge conserves every event: the ranges' counts plus stage 0 are the
 * weight offered less the dropped. The calls are the fuzz target's
 * (tests/fuzz/fuzz_rap.c, through the conformance row's code-like
 * stream), reduced: a source whose tree fills the paper's 512-node pool,
 * merged into a fresh tree. Rebuilding it fills the destination's pool
 * too; a grow that then failed folded nothing, but the fold's compaction
 * reclaimed the slots an earlier re-grow had left and so moved the
 * destination's nodes, and the walk counted the source range at the
 * index its node had before the move (here a slot past the live ones; it
 * could as well have been another range). Events vanished, and the
 * tree's own report was refused by its reader. */
static void test_merge_conserves_counts(void) {
    static unsigned char m2[(1u << 17) + 16];
    static text_buf t;
    const hwp_conf_row *row = &hwp_conf_rap[0];
    hwp_rap a, b, back;
    hwp_rap_desc d, rd;
    hwp_rap_stats st;
    hwp_json_err err;
    visit_sum v;
    memset(&d, 0, sizeof d); /* the paper's design point */
    CHECK(strcmp(row->name, "rap") == 0);
    CHECK_EQ(hwp_rap_init(&a, mem, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_init(&b, ALIGN16(m2), 1u << 17, &d, NULL), HWP_OK);
    row->feed(&b, 22, 0, 480);
    CHECK_EQ(hwp_rap_get_stats(&b, &st), HWP_OK);
    CHECK(st.nodes + 4u > st.pool); /* no room for another split of b = 4 */
    CHECK_EQ(hwp_rap_merge(&a, &b), HWP_OK);
    CHECK_EQ(hwp_rap_get_stats(&a, &st), HWP_OK);
    CHECK_EQ(st.events, 480);
    memset(&v, 0, sizeof v);
    CHECK_EQ(hwp_rap_foreach(&a, sum_visit, &v), HWP_OK);
    if (!CHECK_EQ(v.sum + st.buffered, st.events - st.dropped))
        printf("    ranges %llu + stage 0 %llu, events %llu - dropped %llu\n",
               (unsigned long long)v.sum, (unsigned long long)st.buffered,
               (unsigned long long)st.events, (unsigned long long)st.dropped);
    t.w = hwp_writer_buf(&t.b, t.s, sizeof t.s);
    hwp_rap_write_json(&a, &t.w);
    CHECK_EQ(t.b.dropped, 0);
    CHECK_EQ(hwp_rap_read_desc(&rd, t.s, t.b.len, &err), HWP_OK);
    CHECK_EQ(hwp_rap_init(&back, ALIGN16(m2), 1u << 17, &rd, NULL), HWP_OK);
    if (!CHECK_EQ(hwp_rap_read_json(&back, t.s, t.b.len, &err), HWP_OK))
        printf("    read_json: %s\n", err.why ? err.why : "?");
}

static size_t count_sub(const char *s, const char *sub) {
    size_t n = 0, l = strlen(sub);
    for (s = strstr(s, sub); s; s = strstr(s + l, sub)) n++;
    return n;
}

static void test_reports(void) {
    static text_buf t;
    hwp_rap r;
    hwp_rng g;
    unsigned i;
    hwp_rap_desc d = small_desc(16, 4, 0.05, 256);
    hwp_rng_seed(&g, 2);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    for (i = 0; i < 5000; i++)
        hwp_rap_add(&r, hwp_rng_below(&g, 2) ? 0xBEEF : hwp_rng_below(&g, 65536), 1);
    t.w = hwp_writer_buf(&t.b, t.s, sizeof t.s);
    hwp_rap_write_text(&r, &t.w);
    CHECK_HAS(t.s, "rap: domain [0x0, 0xffff] b=4 eps=0.0500 events=5000 dropped=0");
    CHECK_HAS(t.s, " n=5000 buffered=0 updates=5000 ");
    CHECK_HAS(t.s, "[0xbeef, 0xbeef] depth 8:");
    CHECK_HAS(t.s, "rap: tree");
    CHECK_EQ(t.b.dropped, 0);
    t.w = hwp_writer_buf(&t.b, t.s, sizeof t.s);
    hwp_rap_write_json(&r, &t.w);
    CHECK(t.s[0] == '{');
    CHECK_HAS(t.s, "{\"model\":\"rap\",\"version\":1,\"desc\":{\"key_base\":\"0x0\",\"key_bits\":16,");
    CHECK_HAS(t.s, "\"stats\":{\"events\":5000,\"dropped\":0,\"evicted\":");
    CHECK_EQ(count_sub(t.s, ",\"kids\":"), r.nodes);
    CHECK_EQ(count_sub(t.s, "{"), count_sub(t.s, "}"));
    CHECK_HAS(t.s, "{\"lo\":\"0xbeef\",\"hi\":\"0xbeef\",\"depth\":8");
    CHECK_EQ(t.b.dropped, 0);
    t.w = hwp_writer_buf(&t.b, t.s, sizeof t.s);
    hwp_rap_write_svg(&r, &t.w);
    CHECK(strncmp(t.s, "<svg", 4) == 0);
    CHECK_HAS(t.s, "</svg>\n");
    CHECK_HAS(t.s, "#d62728"); /* the hot key is drawn hot */
    CHECK_EQ(count_sub(t.s, "<rect"), count_sub(t.s, "</rect>"));
    /* Zoomed: [0xbec1, 0xbee2] lies in the 64-key range 0xbec0-0xbeff
     * on the hot key's chain, and its halves differ one level below; a
     * range across the root's children draws the whole domain. */
    t.w = hwp_writer_buf(&t.b, t.s, sizeof t.s);
    CHECK_EQ(hwp_rap_write_svg_range(&r, &t.w, 0xbec1, 0xbee2), HWP_OK);
    CHECK_HAS(t.s, "RAP tree over [0xbec0, 0xbeff]");
    CHECK_HAS(t.s, "</svg>\n");
    t.w = hwp_writer_buf(&t.b, t.s, sizeof t.s);
    CHECK_EQ(hwp_rap_write_svg_range(&r, &t.w, 0x10, 0xbeef), HWP_OK);
    CHECK_HAS(t.s, "RAP tree over [0x0, 0xffff]");
    /* Invalid intervals draw nothing and say why: lo > hi, and a hi past
     * 2^16 (0x1bec1 taken mod 2^16 would fall below lo = 0xbee2). The
     * largest valid hi still draws. */
    t.w = hwp_writer_buf(&t.b, t.s, sizeof t.s);
    CHECK_EQ(hwp_rap_write_svg_range(&r, &t.w, 0xbee2, 0xbec1), HWP_EINVAL);
    CHECK_HAS(hwp_why(&r), "lo must be <= hi");
    CHECK_EQ(hwp_rap_write_svg_range(&r, &t.w, 0xbee2, 0x1bec1), HWP_EINVAL);
    CHECK_HAS(hwp_why(&r), "inside the domain");
    CHECK_EQ(t.b.len, 0);
    CHECK_EQ(hwp_rap_write_svg_range(&r, NULL, 0, 1), HWP_EINVAL);
    CHECK_HAS(hwp_why(&r), "writer");
    {   /* the range queries say why too */
        hwp_rap_est e;
        uint64_t lower;
        CHECK_EQ(hwp_rap_query(&r, 0x20, 0x10, &e), HWP_EINVAL);
        CHECK_STR(hwp_why(&r), "rap: query: lo must be <= hi");
        CHECK_EQ(hwp_rap_query(&r, 0x10, 0x20, NULL), HWP_EINVAL);
        CHECK_HAS(hwp_why(&r), "out must be non-NULL");
        CHECK_EQ(hwp_rap_estimate(&r, 0x10, 0x20, &lower, NULL), HWP_EINVAL);
        CHECK_HAS(hwp_why(&r), "lower and upper");
    }
    CHECK_EQ(hwp_rap_write_svg_range(&r, &t.w, 0xbee2, 0xffff), HWP_OK);
    CHECK_HAS(t.s, "RAP tree over [0x0, 0xffff]");
}

/* A cost shim attached takes the fast copy of the update (r.cfg), and a
 * stage-0 buffer's misses take it too; the charge stays per tree update, so
 * whatever a host reads from its hwp_cost after any event (counts, cycles,
 * total, hwp_cost_take, the overhead, the JSON report) must equal what the
 * generic copy gives. The reference is a twin with a lookup cache, which
 * runs the generic copy with the same tree (test_cache_is_transparent),
 * fed the same stream under its own cost. The figure in force changes
 * mid-stream (hwp_cost_set, 0 included), as a host may change it; without
 * a buffer the event count is also the test's own count of events. */
static void test_reset_and_nodes_for(void) {
    hwp_rap r;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, NULL, NULL), HWP_OK);
    hwp_rap_add(&r, 1, 1);
    hwp_rap_add(&r, 2, 1);
    CHECK(r.nodes > 1);
    CHECK_EQ(hwp_rap_reset(&r), HWP_OK);
    CHECK_EQ(r.nodes, 1);
    CHECK_EQ(r.n, 0);
    CHECK_EQ(r.pool[0].count, 0);
    /* 1 + b * levels * (3 levels / eps + 1) */
    CHECK_EQ(hwp_rap_nodes_for(0.01, 64, 4), 1 + 4ull * 32 * 9601);
    CHECK_EQ(hwp_rap_nodes_for(0.1, 8, 2), 512); /* capped at 2 * 2^w */
    CHECK_EQ(hwp_rap_nodes_for(0, 64, 4), 0);
    CHECK_EQ(hwp_rap_nodes_for(0.1, 64, 3), 0);
}

/* Stage 0 is a queue (sec. 3.3's buffer): entries leave for the tree in
 * the order their keys arrived, whatever their weights or hash slots;
 * the report lists them in that order. */
static void test_stage0_arrival_order(void) {
    static text_buf t;
    hwp_rap r;
    hwp_rap_stats st, s0;
    hwp_rap_desc d = small_desc(32, 4, 0.5, 64);
    d.buffer = 4;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    /* Stage 0 holds at most max(T, min(4 entries, 4 T)) weight: 4000
     * events first make T = 0.5 * 4000 / 16 = 125. */
    hwp_rap_add(&r, 0x1000, 4000);
    CHECK_EQ(hwp_rap_flush(&r), HWP_OK);
    CHECK_EQ(hwp_rap_get_stats(&r, &s0), HWP_OK);
    hwp_rap_add(&r, 0xA, 1);
    hwp_rap_add(&r, 0xB, 9);
    hwp_rap_add(&r, 0xC, 1);
    hwp_rap_add(&r, 0xD, 5);
    hwp_rap_add(&r, 0xA, 1); /* combines: A stays the oldest */
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK_EQ(st.updates, s0.updates);
    hwp_rap_add(&r, 0xE, 1); /* full: the oldest, A (weight 2), leaves */
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK_EQ(st.updates, s0.updates + 1);
    CHECK_EQ(st.n, s0.n + 2);
    hwp_rap_add(&r, 0xF, 1); /* then B, the heaviest, not the lightest */
    CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
    CHECK_EQ(st.n, s0.n + 11);
    t.w = hwp_writer_buf(&t.b, t.s, sizeof t.s);
    hwp_rap_write_json(&r, &t.w);
    CHECK_HAS(t.s, "\"stage0\":[[\"0xc\",1],[\"0xd\",5],[\"0xe\",1],[\"0xf\",1]]");
}

typedef struct bound_ctx {
    hwx_exact *x;
    unsigned bad, seen;
} bound_ctx;

static void upper_visit(void *ctx, const hwp_rap_range *rg) {
    bound_ctx *c = (bound_ctx *)ctx;
    uint64_t t = hwx_exact_range(c->x, rg->lo, rg->hi);
    c->seen++;
    c->bad += t > rg->upper;
}

/* Before stage 0 is flushed, each range's upper bound and each query's
 * bounds still hold: the weight waiting in stage 0 may belong to any
 * range, and a query counts the waiting keys it covers exactly. */
static void test_upper_before_flush(void) {
    static hwx_event ev[20000];
    hwx_exact x;
    hwp_rap *r;
    hwp_rng g;
    bound_ctx c;
    unsigned i, badq = 0;
    hwp_rap_desc d = small_desc(32, 4, 0.05, 2048);
    d.buffer = 256;
    r = hwx_rap_new(&d, NULL);
    hwp_rng_seed(&g, 8);
    for (i = 0; i < 20000; i++) {
        uint64_t k = hwp_rng_below(&g, 2) ? 0x4000 + hwp_rng_below(&g, 300)
                                          : hwp_rng_u32(&g);
        ev[i].key = k;
        ev[i].weight = 1;
        hwp_rap_add(r, k, 1);
    }
    CHECK(r->buffered > 0);
    hwx_exact_build(&x, ev, 20000);
    c.x = &x;
    c.bad = c.seen = 0;
    CHECK_EQ(hwp_rap_foreach(r, upper_visit, &c), HWP_OK);
    CHECK(c.seen > 10);
    CHECK_EQ(c.bad, 0);
    for (i = 0; i < 500; i++) {
        uint64_t a = 0x4000 + hwp_rng_below(&g, 400), b = a + hwp_rng_below(&g, 64);
        hwp_rap_est e;
        uint64_t t = hwx_exact_range(&x, a, b);
        CHECK_EQ(hwp_rap_query(r, a, b, &e), HWP_OK);
        badq += t < e.lower || t > e.upper || e.estimate < (double)e.lower ||
                e.estimate > (double)e.upper;
    }
    CHECK_EQ(badq, 0);
    hwx_exact_free(&x);
    free(r);
}

/* Point and top-k queries: a planted hot key and a planted hot block of
 * 256 keys come out first at granularities 1 and 2^8; (out, cap) returns
 * the number available and writes at most cap. */
static void test_queries(void) {
    static hwx_event ev[40000];
    hwx_exact x;
    hwp_rap r;
    hwp_rng g;
    hwp_rap_range top[4];
    hwp_rap_est e;
    size_t n1, n8, n0;
    unsigned i;
    hwp_rap_desc d = small_desc(16, 4, 0.01, 8192);
    hwp_rng_seed(&g, 99);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    for (i = 0; i < 40000; i++) {
        unsigned u = hwp_rng_below(&g, 100);
        uint64_t k = u < 30   ? 0x1234
                     : u < 50 ? 0x8000 + hwp_rng_below(&g, 256)
                              : hwp_rng_below(&g, 1u << 16);
        ev[i].key = k;
        ev[i].weight = 1;
        hwp_rap_add(&r, k, 1);
    }
    hwx_exact_build(&x, ev, 40000);
    CHECK_EQ(hwp_rap_query(&r, 0x1234, 0x1234, &e), HWP_OK);
    CHECK(e.lower <= hwx_exact_range(&x, 0x1234, 0x1234) &&
          hwx_exact_range(&x, 0x1234, 0x1234) <= e.upper);
    CHECK(e.upper - e.lower <= hwp_rap_bound(&r));
    CHECK(e.lower > 11000);
    n0 = hwp_rap_top(&r, 0, NULL, 0);
    n1 = hwp_rap_top(&r, 0, top, 4);
    CHECK_EQ(n0, n1);
    CHECK(n1 >= 1);
    CHECK_EQ(top[0].lo, 0x1234);
    CHECK_EQ(top[0].hi, 0x1234);
    CHECK_EQ(top[0].sum, e.lower);
    for (i = 1; i < 4 && i < n1; i++) CHECK(top[i - 1].sum >= top[i].sum);
    n8 = hwp_rap_top(&r, 8, top, 4);
    CHECK(n8 >= 2);
    CHECK_EQ(top[0].lo, 0x1200);
    CHECK_EQ(top[1].lo, 0x8000);
    CHECK_EQ(top[1].hi, 0x80FF);
    CHECK(top[1].sum <= hwx_exact_range(&x, 0x8000, 0x80FF));
    CHECK(hwx_exact_range(&x, 0x8000, 0x80FF) <= top[1].upper);
    CHECK(top[1].sum > 7000);
    /* The whole domain at granularity >= w: one block with all of n. */
    CHECK_EQ(hwp_rap_top(&r, 64, top, 4), 1);
    CHECK_EQ(top[0].sum, 40000);
    hwx_exact_free(&x);
}

/* The JSON report is a profile: read back into a fresh instance it gives
 * the same report byte for byte, the same answers, and merges the same;
 * every truncation and a set of damaged reports are refused with an
 * offset, leaving the instance as it was. */
static void test_json_round_trip(void) {
    static text_buf a, b, c0;
    static char bad[1 << 16];
    static unsigned char m2[(1u << 18) + 16], m3[(1u << 18) + 16];
    hwp_rap r, back, other;
    hwp_rap_desc d = small_desc(32, 4, 0.05, 1024), rd;
    hwp_json_err err;
    hwp_rng g;
    size_t len, cut;
    unsigned i, refused = 0, same = 1;
    d.buffer = 64;
    d.key_base = 0x10000000;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    hwp_rng_seed(&g, 4);
    for (i = 0; i < 30000; i++)
        hwp_rap_add(&r, 0x10000000 + (hwp_rng_below(&g, 3) ? 0x4000 + hwp_rng_below(&g, 700)
                                                            : hwp_rng_u32(&g)), 1);
    a.w = hwp_writer_buf(&a.b, a.s, sizeof a.s);
    hwp_rap_write_json(&r, &a.w);
    CHECK_EQ(a.b.dropped, 0);
    len = a.b.len;
    CHECK_EQ(hwp_rap_read_desc(&rd, a.s, len, &err), HWP_OK);
    CHECK_EQ(rd.key_base, 0x10000000);
    CHECK_EQ(rd.buffer, 64);
    CHECK_EQ(hwp_rap_init(&back, ALIGN16(m2), 1u << 18, &rd, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_read_json(&back, a.s, len, &err), HWP_OK);
    b.w = hwp_writer_buf(&b.b, b.s, sizeof b.s);
    hwp_rap_write_json(&back, &b.w);
    CHECK_STR(b.s, a.s);
    for (i = 0; i < 200; i++) {
        uint64_t lo = 0x10000000 + hwp_rng_below(&g, 0x10000), hi = lo + hwp_rng_below(&g, 4096);
        hwp_rap_est e1, e2;
        CHECK_EQ(hwp_rap_query(&r, lo, hi, &e1), HWP_OK);
        CHECK_EQ(hwp_rap_query(&back, lo, hi, &e2), HWP_OK);
        same &= e1.lower == e2.lower && e1.upper == e2.upper;
    }
    CHECK(same);
    /* Merging the read profile equals merging the original. */
    CHECK_EQ(hwp_rap_init(&other, ALIGN16(m3), 1u << 18, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_merge(&other, &r), HWP_OK);
    c0.w = hwp_writer_buf(&c0.b, c0.s, sizeof c0.s);
    hwp_rap_write_json(&other, &c0.w);
    CHECK_EQ(hwp_rap_reset(&other), HWP_OK);
    CHECK_EQ(hwp_rap_merge(&other, &back), HWP_OK);
    b.w = hwp_writer_buf(&b.b, b.s, sizeof b.s);
    hwp_rap_write_json(&other, &b.w);
    CHECK_STR(b.s, c0.s);
    /* Every truncation is refused at or before its end, and leaves
     * `back` as it was. */
    for (cut = 0; cut < len - 1; cut += 1 + cut / 64) {
        hwp_status st = hwp_rap_read_json(&back, a.s, cut, &err);
        refused += st == HWP_EFORMAT && err.offset <= cut && err.why;
    }
    {
        unsigned tries = 0;
        for (cut = 0; cut < len - 1; cut += 1 + cut / 64) tries++;
        CHECK_EQ(refused, tries);
    }
    b.w = hwp_writer_buf(&b.b, b.s, sizeof b.s);
    hwp_rap_write_json(&back, &b.w);
    CHECK_STR(b.s, a.s);
    /* Damage: a count changed (stats disagree), a range out of order, a
     * key outside the domain, another desc. */
    {
        static const char *const from[] = {"\"count\":", "\"depth\":1", "\"lo\":\"0x1", "\"eps\":0.05"};
        static const char *const to[] = {"\"count\":9", "\"depth\":2", "\"lo\":\"0x2", "\"eps\":0.06"};
        for (i = 0; i < 4; i++) {
            char *at;
            hwp_status st;
            memcpy(bad, a.s, len + 1);
            at = strstr(bad + 1, from[i]);
            if (i == 2) at = strstr(strstr(bad, "\"ranges\""), from[i]);
            CHECK(at != NULL);
            if (!at) continue;
            memcpy(at, to[i], strlen(to[i]));
            st = hwp_rap_read_json(&back, bad, len, &err);
            CHECK_EQ(st, i == 3 ? HWP_EMISMATCH : HWP_EFORMAT);
            CHECK(err.why != NULL && err.offset > 0 && err.offset < len);
            if (i == 3) CHECK_HAS(hwp_why(&back), "eps");
        }
    }
    b.w = hwp_writer_buf(&b.b, b.s, sizeof b.s);
    hwp_rap_write_json(&back, &b.w);
    CHECK_STR(b.s, a.s);
}

/* Stats never decrease between calls, and the first four are the
 * contract's: events = tree + stage 0 + dropped. */
/* Reports carry eps and hot with 9 decimals, so the desc keeps them on
 * that grid (what the report states is what the instance runs with) and
 * refuses a value below its first step, which a report would print as 0
 * and a reader take for the default: a report then reads back to the
 * same desc, and the read instance merges with the one that wrote it. */
static void test_desc_doubles_on_report_grid(void) {
    static text_buf a;
    static unsigned char m2[(1u << 16) + 16];
    hwp_rap r, back;
    hwp_rap_desc d = small_desc(16, 4, 1e-10, 64), got = d, rd = d;
    hwp_json_err err;
    unsigned i;
    CHECK_EQ(hwp_rap_bytes(&d), 0);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&r), "eps");
    d.eps = 0.1;
    d.hot = 4e-10;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&r), "hot");
    d.eps = 0.1234567891;
    d.hot = 0.2500000004;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_get_desc(&r, &got), HWP_OK);
    CHECK(got.eps == 0.123456789);
    CHECK(got.hot == 0.25);
    for (i = 0; i < 5000; i++) hwp_rap_add(&r, (i * 7919u) & 0xFFFFu, 1);
    a.w = hwp_writer_buf(&a.b, a.s, sizeof a.s);
    hwp_rap_write_json(&r, &a.w);
    CHECK_EQ(a.b.dropped, 0);
    CHECK_EQ(hwp_rap_read_desc(&rd, a.s, a.b.len, &err), HWP_OK);
    CHECK(rd.eps == got.eps && rd.hot == got.hot);
    CHECK_EQ(hwp_rap_init(&back, ALIGN16(m2), 1u << 16, &rd, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_read_json(&back, a.s, a.b.len, &err), HWP_OK);
    CHECK_EQ(hwp_rap_merge(&back, &r), HWP_OK);
    /* 1 - 1e-10 would print as 1.000000000: outside (0, 1) */
    d.eps = 1.0 - 1e-10;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&r), "eps");
}

static void test_stats_monotone(void) {
    hwp_rap r;
    hwp_cost c;
    hwp_rap_stats prev, st;
    hwp_rng g;
    unsigned i, ok = 1;
    hwp_rap_desc d = small_desc(24, 4, 0.05, 300);
    d.buffer = 32;
    d.key_base = 0x100000;
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, &c), HWP_OK);
    memset(&prev, 0, sizeof prev);
    hwp_rng_seed(&g, 6);
    for (i = 0; i < 20000; i++) {
        hwp_rap_add(&r, hwp_rng_below(&g, 1u << 25), 1 + hwp_rng_below(&g, 3));
        CHECK_EQ(hwp_rap_get_stats(&r, &st), HWP_OK);
        ok &= st.events >= prev.events && st.dropped >= prev.dropped &&
              st.evicted >= prev.evicted && st.cycles >= prev.cycles &&
              st.updates >= prev.updates && st.splits >= prev.splits &&
              st.merges >= prev.merges && st.peak >= prev.peak &&
              st.events == st.n + st.buffered + st.dropped;
        prev = st;
    }
    CHECK(ok);
    CHECK(st.dropped > 0 && st.cycles > 0 && st.evicted > 0);
}


/* The reader's fuzz entry (fuzz_rap_json.c) on a valid report, every
 * truncation and 3000 seeded mutations (bit flips, digit and byte
 * overwrites, deletions): the entry traps on any contract violation. */
static void test_json_fuzz_driver(void) {
    static text_buf a;
    static char m[1 << 16];
    hwp_rap r;
    hwp_rng g;
    size_t i;
    hwp_rap_desc d = small_desc(24, 4, 0.1, 128);
    d.buffer = 16;
    CHECK_EQ(hwp_rap_init(&r, mem, MEMSZ, &d, NULL), HWP_OK);
    hwp_rng_seed(&g, 12);
    for (i = 0; i < 5000; i++)
        hwp_rap_add(&r, hwp_rng_below(&g, 2) ? 0x1000 + hwp_rng_below(&g, 64)
                                             : hwp_rng_below(&g, 1u << 25), 1);
    a.w = hwp_writer_buf(&a.b, a.s, sizeof a.s);
    hwp_rap_write_json(&r, &a.w);
    CHECK(a.b.len < sizeof m);
    CHECK_EQ(hwx_fuzz_drive(a.s, a.b.len, m, 13, 3000), 0);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_defaults_and_bytes);
    HWT_RUN(test_storage_is_all_memory);
    HWT_RUN(test_levels_for_odd_widths);
    HWT_RUN(test_invalid_desc);
    HWT_RUN(test_hand_traced_tree);
    HWT_RUN(test_bound_small_streams);
    HWT_RUN(test_tiny_pool_defers);
    HWT_RUN(test_estimate_intervals);
    HWT_RUN(test_key_domain);
    HWT_RUN(test_stage0_buffer);
    HWT_RUN(test_stage0_drains);
    HWT_RUN(test_cache_is_transparent);
    HWT_RUN(test_lookup_matches_ranges);
    HWT_RUN(test_retire);
    HWT_RUN(test_insn_entry);
    HWT_RUN(test_cost_queue);
    HWT_RUN(test_cost_pipeline);
    HWT_RUN(test_merge_is_free);
    HWT_RUN(test_hot_ranges_planted);
    HWT_RUN(test_merge_two_trees);
    HWT_RUN(test_merge_into_full_pool);
    HWT_RUN(test_merge_conserves_counts);
    HWT_RUN(test_reports);
    HWT_RUN(test_reset_and_nodes_for);
    HWT_RUN(test_stage0_arrival_order);
    HWT_RUN(test_upper_before_flush);
    HWT_RUN(test_queries);
    HWT_RUN(test_json_round_trip);
    HWT_RUN(test_desc_doubles_on_report_grid);
    HWT_RUN(test_stats_monotone);
    HWT_RUN(test_json_fuzz_driver);
    return hwt_end();
}
