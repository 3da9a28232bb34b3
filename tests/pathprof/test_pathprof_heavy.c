/* Heavy tests for hwprof/pathprof.h: synthetic reproductions of the
 * paper's experiments with fixed seeds.
 *   hpt_zipf      section 8.1: HPT overlap percentage against the exact
 *                 profile on Zipf path streams grows with size and
 *                 associativity; LFU beats LRU; plb beats pb beats p
 *   phase         section 8.3: path-based and BBV phase detection on a
 *                 program with known phases, one pair of which differs
 *                 only in branch correlation (same basic-block counts)
 *   queue         section 8.2: modelled overhead with no branch queue,
 *                 2 and 4 entries
 * Figures are printed for docs/pathprof.md. */
#define HWPROF_IMPL
#include "hwprof/pathprof.h"

#include "gen.h"
#include "harness.h"
#include "pathprof/prog.h"

#define A16 __attribute__((aligned(16)))

static unsigned char st_path[1 << 16] A16, st_hpt[HWP_HPT_BYTES(4096)] A16,
    st_phase[1 << 16] A16, st_bbv[1 << 16] A16;

/* ---- section 8.1: HPT vs exact on Zipf path streams --------------------- */

#define NPATHS 40000u
#define NEVENTS 2000000u

static hwp_path_pd universe[NPATHS];
static uint32_t *stream;
static uint64_t exact[NPATHS];

/* Paths as programs have them: 4000 start addresses with 10 paths each,
 * mostly short (lengths 1..12, shorter more likely), random directions;
 * the hotness rank is a random permutation of the universe. */
static void build_universe(void) {
    hwp_rng r;
    hwg_zipf z;
    unsigned i;
    hwp_rng_seed(&r, 2004);
    for (i = 0; i < NPATHS; i++) {
        unsigned len = 1 + hwp_rng_below(&r, 1 + hwp_rng_below(&r, 12));
        uint64_t dirs = hwp_rng_next(&r) & hwp_mask64(len);
        unsigned j;
        universe[i].start = 0x400000 + 0x100 * (uint64_t)(i / 10) +
                            4 * (uint64_t)((i / 10) * 7 % 16);
        universe[i].shape = ((uint64_t)1 << len) | dirs;
        for (j = 0; j < i % 10; j++) /* keep the 10 per start distinct */
            if (universe[i - j - 1].shape == universe[i].shape)
                universe[i].shape ^= 1;
    }
    for (i = NPATHS - 1; i > 0; i--) { /* rank -> path: a shuffle */
        unsigned j = hwp_rng_below(&r, i + 1);
        hwp_path_pd t = universe[i];
        universe[i] = universe[j];
        universe[j] = t;
    }
    stream = (uint32_t *)malloc(NEVENTS * sizeof *stream);
    hwg_zipf_init(&z, NPATHS, 1.0);
    memset(exact, 0, sizeof exact);
    for (i = 0; i < NEVENTS; i++) {
        stream[i] = (uint32_t)hwg_zipf_next(&z, &r);
        exact[stream[i]]++;
    }
}

static hwp_path_row exact_rows[NPATHS], hpt_rows[4096];

static double hpt_overlap(uint32_t entries, uint32_t ways, uint32_t repl,
                          uint32_t index) {
    hwp_hpt h;
    hwp_hpt_desc d;
    size_t i, n, ne = 0;
    memset(&d, 0, sizeof d);
    d.entries = entries;
    d.ways = ways;
    d.repl = repl;
    d.index = index;
    if (hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &d, NULL) != HWP_OK) return -1;
    for (i = 0; i < NEVENTS; i++) hwp_hpt_add(&h, &universe[stream[i]], 1);
    n = hwp_hpt_export(&h, hpt_rows, 4096);
    for (i = 0; i < NPATHS; i++) {
        if (!exact[i]) continue;
        exact_rows[ne].pd = universe[i];
        exact_rows[ne++].count = exact[i];
    }
    return hwp_path_overlap(hpt_rows, n, exact_rows, ne);
}

static int cmp_desc(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

/* The overlap of an ideal table of k entries: it holds the k hottest
 * paths with exact counts, so (own shares being larger) the overlap is
 * the exact share of those k. No real table of k entries can beat it. */
static double topk_overlap(size_t k) {
    static uint64_t c[NPATHS];
    double shared = 0, total = 0;
    size_t i;
    memcpy(c, exact, sizeof c);
    qsort(c, NPATHS, sizeof c[0], cmp_desc);
    for (i = 0; i < NPATHS; i++) {
        total += (double)c[i];
        if (i < k) shared += (double)c[i];
    }
    return 100.0 * shared / total;
}

static void test_hpt_zipf(void) {
    static const uint32_t sizes[3] = {128, 512, 2048};
    static const uint32_t waysv[5] = {1, 2, 4, 8, 16};
    double lfu[3][5], lru[3][5];
    unsigned s, w;
    int ok_size = 1, ok_assoc = 1, ok_lfu = 1;
    double plb, pb, p;
    build_universe();
    printf("    HPT overlap %% vs exact, Zipf(1.0) over %u paths, %u paths:\n",
           NPATHS, NEVENTS);
    printf("    %-8s", "entries");
    for (w = 0; w < 5; w++) printf("  LFU/%-2u LRU/%-2u", waysv[w], waysv[w]);
    printf("  top-k\n");
    for (s = 0; s < 3; s++) {
        printf("    %-8u", sizes[s]);
        for (w = 0; w < 5; w++) {
            lfu[s][w] = hpt_overlap(sizes[s], waysv[w], HWP_HPT_LFU, HWP_HPT_PLB);
            lru[s][w] = hpt_overlap(sizes[s], waysv[w], HWP_HPT_LRU, HWP_HPT_PLB);
            printf("  %6.2f %6.2f", lfu[s][w], lru[s][w]);
            /* with one way there is no choice to make: LFU == LRU */
            if (w ? lfu[s][w] <= lru[s][w] : lfu[s][w] != lru[s][w]) ok_lfu = 0;
            if (w && lfu[s][w] + 0.25 < lfu[s][w - 1]) ok_assoc = 0;
        }
        printf("  %6.2f\n", topk_overlap(sizes[s]));
        if (lfu[s][0] + 2.0 > lfu[s][2]) ok_assoc = 0; /* 1 -> 4 ways helps */
        if (s && lfu[s][2] <= lfu[s - 1][2] + 2.0) ok_size = 0;
    }
    CHECK(ok_size);
    CHECK(ok_assoc);
    CHECK(ok_lfu);
    /* the table can never beat an ideal top-k table by much */
    CHECK(lfu[1][2] <= topk_overlap(512) + 1e-9);
    plb = lfu[1][2];
    pb = hpt_overlap(512, 4, HWP_HPT_LFU, HWP_HPT_PB);
    p = hpt_overlap(512, 4, HWP_HPT_LFU, HWP_HPT_P);
    printf("    512x4 LFU index: plb %.2f  pb %.2f  p %.2f\n", plb, pb, p);
    CHECK(plb > pb);
    CHECK(pb > p);
    free(stream);
}

/* ---- section 8.3: phase detection ---------------------------------------- */

#define IVL 100000u

typedef struct phase_host {
    hwp_path *p;
    hwp_phase *bbv;
    hwp_rng rng;
    uint64_t insns;
} phase_host;

static void ph_branch(phase_host *h, uint64_t pc, uint64_t next, uint32_t cls,
                      int taken, uint32_t insns) {
    hwp_path_branch(h->p, pc, next, cls, taken != 0, insns, 0);
    hwp_phase_add_branch(h->bbv, pc, insns);
    h->insns += insns;
}

/* Kernel k at 0x10000 * (k + 1): a loop whose body has two if/else
 * diamonds. corr: 0 independent, 1 second follows first, 2 opposite.
 * Taken and not-taken sides have the same sizes, so the correlation
 * changes the paths but not the basic-block counts. */
static void kernel(phase_host *h, unsigned k, unsigned corr, unsigned iters) {
    uint64_t b = 0x10000 * (uint64_t)(k + 1);
    unsigned it;
    ph_branch(h, 0x1000 + 8 * k, b, HWP_CLS_CALL, 1, 3);
    for (it = 0; it < iters; it++) {
        int d1 = hwp_rng_below(&h->rng, 100) < 50 + 5 * k;
        int d2 = corr == 1 ? d1 : corr == 2 ? !d1 : hwp_rng_below(&h->rng, 100) < 50;
        ph_branch(h, b + 0x10, d1 ? b + 0x40 : b + 0x20, HWP_CLS_BR_COND, d1, 4 + k);
        ph_branch(h, d1 ? b + 0x4c : b + 0x2c, b + 0x60, HWP_CLS_JUMP, 1, 3 + k % 3);
        ph_branch(h, b + 0x70, d2 ? b + 0xa0 : b + 0x80, HWP_CLS_BR_COND, d2, 2);
        ph_branch(h, d2 ? b + 0xac : b + 0x8c, b + 0xc0, HWP_CLS_JUMP, 1, 3 + k % 2);
        ph_branch(h, b + 0xd0, it + 1 < iters ? b : b + 0xd4, HWP_CLS_BR_COND,
                  it + 1 < iters, 2);
    }
    ph_branch(h, b + 0xe0, 0x1004 + 8 * k, HWP_CLS_RET, 1, 2);
}

typedef struct phase_def {
    unsigned k[2], pct0, corr;
} phase_def;

/* A, B, C, D (A's kernels, opposite correlation: the same basic-block
 * vector), E */
static const phase_def phases[5] = {
    {{0, 1}, 50, 1}, {{2, 3}, 60, 0}, {{4, 4}, 100, 0}, {{0, 1}, 50, 2},
    {{1, 5}, 30, 0}};
static const unsigned sched_phase[10] = {0, 1, 0, 3, 2, 1, 3, 0, 4, 2};
static const unsigned sched_len[10] = {6, 5, 4, 6, 5, 4, 5, 6, 5, 4};

typedef struct ids {
    uint32_t id[128];
    unsigned n;
} ids;

static void on_iv(void *ctx, const hwp_phase_interval *r) {
    ids *l = (ids *)ctx;
    if (l->n < 128) l->id[l->n++] = r->phase;
}

static void test_phase(void) {
    hwp_path p;
    hwp_phase ph, bbv;
    hwp_path_desc pd;
    hwp_phase_desc dd;
    phase_host h;
    ids got_path, got_bbv;
    uint32_t ref[128];
    unsigned s, n = 0, i;
    hwp_phase_scores sp, sb;
    memset(&pd, 0, sizeof pd);
    memset(&dd, 0, sizeof dd);
    memset(&got_path, 0, sizeof got_path);
    memset(&got_bbv, 0, sizeof got_bbv);
    pd.metric = HWP_PATH_M_INSNS;
    pd.counter_bits = 32;
    dd.interval = IVL;
    dd.on_interval = on_iv;
    dd.ctx = &got_path;
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &pd, NULL), HWP_OK);
    CHECK_EQ(hwp_phase_init(&ph, st_phase, sizeof st_phase, &dd, NULL), HWP_OK);
    dd.ctx = &got_bbv;
    CHECK_EQ(hwp_phase_init(&bbv, st_bbv, sizeof st_bbv, &dd, NULL), HWP_OK);
    CHECK_EQ(hwp_path_attach(&p, NULL, &ph), HWP_OK);
    memset(&h, 0, sizeof h);
    h.p = &p;
    h.bbv = &bbv;
    hwp_rng_seed(&h.rng, 7);
    hwp_path_begin(&p, 0x1000);
    for (s = 0; s < 10; s++) {
        const phase_def *f = &phases[sched_phase[s]];
        uint64_t end = (uint64_t)(n + sched_len[s]) * IVL;
        for (i = 0; i < sched_len[s]; i++) ref[n + i] = sched_phase[s];
        n += sched_len[s];
        while (h.insns < end) {
            unsigned k = hwp_rng_below(&h.rng, 100) < f->pct0 ? f->k[0] : f->k[1];
            kernel(&h, k, f->corr, 10 + hwp_rng_below(&h.rng, 20));
            ph_branch(&h, 0x1100, 0x1000, HWP_CLS_BR_COND, 1, 2); /* main loop */
        }
    }
    CHECK(got_path.n >= n - 1 && got_path.n <= n);
    CHECK(got_bbv.n >= n - 1 && got_bbv.n <= n);
    n = got_path.n < got_bbv.n ? got_path.n : got_bbv.n;
    CHECK_EQ(hwp_phase_score(ref, got_path.id, n, 0, &sp), HWP_OK);
    CHECK_EQ(hwp_phase_score(ref, got_bbv.id, n, 0, &sb), HWP_OK);
    printf("    %u intervals of %u insns, %u reference changes (threshold %.0f%% of the interval)\n",
           n, IVL, (unsigned)sp.ref_changes, 60.0);
    printf("    path-based: sensitivity %.1f%%  false positives %.1f%%  same-phase %.1f%%  stability %.1f%%  avg phase %.2f\n",
           sp.sensitivity, sp.false_pos, sp.same_phase, sp.stability, sp.avg_phase_len);
    printf("    BBV:        sensitivity %.1f%%  false positives %.1f%%  same-phase %.1f%%  stability %.1f%%  avg phase %.2f\n",
           sb.sensitivity, sb.false_pos, sb.same_phase, sb.stability, sb.avg_phase_len);
    printf("    phases found: path %u, BBV %u (reference 5)\n", ph.next_id, bbv.next_id);
    /* the path detector finds every change and is quiet within phases */
    CHECK(sp.sensitivity >= 99.9);
    CHECK(sp.false_pos <= 5.0);
    CHECK(sp.same_phase >= 95.0);
    CHECK_EQ(ph.next_id, 5); /* A and D are told apart; recurrences reuse ids */
    /* the BBV detector cannot see A <-> D (same block counts) */
    CHECK(sb.sensitivity < sp.sensitivity);
    CHECK(bbv.next_id < 5);
}

/* ---- section 8.2: branch-queue overhead ---------------------------------- */

static void emit_model(void *ctx, uint64_t pc, uint64_t next, uint32_t cls,
                       int taken, uint32_t insns) {
    hwp_path_branch((hwp_path *)ctx, pc, next, cls, taken != 0, insns, 0);
}

static double queue_overhead(uint32_t queue, uint32_t cpi_q8) {
    hwp_path p;
    hwp_hpt h;
    hwp_cost c;
    hwp_path_desc d;
    pp_prog g;
    pp_frame m;
    memset(&d, 0, sizeof d);
    d.queue = queue;
    d.cycles_per_insn_q8 = cpi_q8;
    hwp_cost_init(&c, NULL);
    if (hwp_path_init(&p, st_path, sizeof st_path, &d, &c) != HWP_OK) return -1;
    hwp_hpt_init(&h, st_hpt, sizeof st_hpt, NULL, &c);
    hwp_path_attach(&p, &h, NULL);
    pp_init(&g, emit_model, &p, 11);
    hwp_path_begin(&p, 0x1000);
    pp_main(&g, &m, 20000);
    return hwp_path_overhead_pct(&p);
}

static void test_queue(void) {
    /* The synthetic program retires a branch every 2.8 instructions,
     * denser than SPEC. Host speeds: IPC 1, 1.33 and 2 (cycles per
     * instruction 256, 192 and 128 in 1/256). */
    static const uint32_t cpi[3] = {256, 192, 128};
    static const uint32_t queues[4] = {HWP_PATH_QUEUE_NONE, 1, 2, 4};
    double o[3][4];
    unsigned i, j;
    int mono = 1;
    for (i = 0; i < 3; i++) {
        for (j = 0; j < 4; j++) {
            o[i][j] = queue_overhead(queues[j], cpi[i]);
            if (j && o[i][j] > o[i][j - 1]) mono = 0;
        }
        printf("    modelled overhead, IPC %.2f: no queue %.2f%%, 1 entry %.2f%%, "
               "2 entries %.2f%%, 4 entries %.3f%%\n",
               256.0 / cpi[i], o[i][0], o[i][1], o[i][2], o[i][3]);
    }
    CHECK(mono); /* a deeper queue never costs more */
    CHECK(o[0][0] > 1.0 && o[0][3] == 0.0);
    CHECK(o[1][0] > 10.0 && o[1][1] > o[1][2] && o[1][3] < 0.5);
    /* saturated: the profiler is slower than the branch rate, so stalls
     * remain whatever the queue depth */
    CHECK(o[2][3] > 20.0);
    CHECK(o[2][0] > o[1][0] && o[1][0] > o[0][0]);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_hpt_zipf);
    HWT_RUN(test_phase);
    HWT_RUN(test_queue);
    return hwt_end();
}
