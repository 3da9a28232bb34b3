/* Unit tests for hwprof/pathprof.h: path descriptor, path stack (BL, WPP,
 * extended paths, overflow policies, splitting, metrics, unwinding), the
 * Hot Path Table, the phase detectors, the branch-queue cost model, the
 * metrics and the reports. Expected values come from the paper's rules
 * worked by hand or from the independent reference in prog.h. */
#define HWPROF_IMPL
#include "hwprof/pathprof.h"

#include "harness.h"
#include "pathprof/prog.h"
#include "pathprof/queue_ref.h"

#define A16 __attribute__((aligned(16)))

static unsigned char st_path[1 << 16] A16, st_hpt[1 << 20] A16,
    st_phase[1 << 16] A16, st_bbv[1 << 16] A16;

/* ---- sinks ------------------------------------------------------------- */

static pp_key key_of(const hwp_path_pd *pd) {
    pp_key k;
    unsigned i;
    k.start = pd->start;
    k.len = hwp_path_pd_len(pd);
    k.bits = 0;
    for (i = 0; i < k.len; i++) k.bits = k.bits * 2 + hwp_path_pd_dir(pd, i);
    return k;
}

static uint32_t max_value_seen;

static void sink_map(void *ctx, const hwp_path_rec *r) {
    pp_slot *s = pp_map_get((pp_map *)ctx, key_of(&r->pd));
    if (r->value > max_value_seen) max_value_seen = r->value;
    s->count++;
    s->insns += r->insns;
    s->value += r->value;
}

typedef struct seq {
    pp_key k[64];
    uint32_t value[64];
    unsigned n;
} seq;

static void sink_seq(void *ctx, const hwp_path_rec *r) {
    seq *q = (seq *)ctx;
    if (q->n < 64) {
        q->value[q->n] = r->value;
        q->k[q->n++] = key_of(&r->pd);
    }
}

static void emit_model(void *ctx, uint64_t pc, uint64_t next, uint32_t cls,
                       int taken, uint32_t insns) {
    hwp_path_branch((hwp_path *)ctx, pc, next, cls, taken != 0, insns, 0);
}

/* A path stack whose completed paths go to q, from a desc the caller
 * filled (zero fields are defaults). */
static int open_seq(hwp_path *p, hwp_path_desc *d, seq *q) {
    memset(q, 0, sizeof *q);
    d->on_path = sink_seq;
    d->ctx = q;
    return CHECK_EQ(hwp_path_init(p, st_path, sizeof st_path, d, NULL), HWP_OK);
}

static int seq_is(const seq *q, unsigned i, uint64_t start, const char *dirs) {
    uint64_t bits = 0;
    uint32_t len = (uint32_t)strlen(dirs), j;
    for (j = 0; j < len; j++) bits = bits * 2 + (uint64_t)(dirs[j] == '1');
    return i < q->n && q->k[i].start == start && q->k[i].len == len &&
           q->k[i].bits == bits;
}

/* ---- descriptor -------------------------------------------------------- */

static void test_descriptor(void) {
    hwp_path p;
    hwp_path_desc d;
    seq q;
    CHECK_EQ(sizeof(hwp_path_pd), 16);
    memset(&d, 0, sizeof d);
    open_seq(&p, &d, &q);
    CHECK_EQ(hwp_path_begin(&p, 0x400), HWP_OK);
    /* taken, not taken, taken forward; then a taken back edge */
    hwp_path_branch(&p, 0x404, 0x410, HWP_CLS_BR_COND, true, 2, 0);
    hwp_path_branch(&p, 0x414, 0x418, HWP_CLS_BR_COND, false, 2, 0);
    hwp_path_branch(&p, 0x41c, 0x430, HWP_CLS_JUMP, true, 2, 0);
    hwp_path_branch(&p, 0x434, 0x400, HWP_CLS_BR_COND, true, 2, 0);
    CHECK_EQ(q.n, 1);
    CHECK(seq_is(&q, 0, 0x400, "1011"));
    {
        hwp_path_pd a, b;
        a.start = 0x400;
        a.shape = 0x1B; /* sentinel + 1011 */
        CHECK_EQ(hwp_path_pd_len(&a), 4);
        CHECK_EQ(hwp_path_pd_dir(&a, 0), 1);
        CHECK_EQ(hwp_path_pd_dir(&a, 1), 0);
        CHECK_EQ(hwp_path_pd_dirs(&a), 0xB);
        b = a;
        CHECK(hwp_path_pd_eq(&a, &b));
        CHECK_EQ(hwp_path_pd_hash(&a), hwp_path_pd_hash(&b));
        b.shape = 0x13; /* 0011: same length, other directions */
        CHECK(!hwp_path_pd_eq(&a, &b));
        CHECK(hwp_path_pd_hash(&a) != hwp_path_pd_hash(&b));
    }
}

/* ---- desc validation and handles --------------------------------------- */

static void test_desc_validation(void) {
    hwp_path p;
    hwp_hpt h;
    hwp_phase ph;
    hwp_path_desc d;
    hwp_hpt_desc hd;
    hwp_phase_desc pd;
    CHECK_EQ(hwp_path_bytes(NULL), HWP_PATH_BYTES(32, 4));
    CHECK_EQ(hwp_hpt_bytes(NULL), HWP_HPT_BYTES(512));
    CHECK_EQ(hwp_phase_bytes(NULL), HWP_PHASE_BYTES(32, 32));
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, NULL, NULL), HWP_OK);
    CHECK_EQ(p.desc.max_len, 32);
    CHECK_EQ(p.desc.depth, 32);
    CHECK_EQ(p.desc.counter_bits, 8);
    CHECK_EQ(p.desc.queue, 4);
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, NULL, NULL), HWP_OK);
    CHECK_EQ(h.desc.entries, 512);
    CHECK_EQ(h.desc.ways, 4);
    CHECK_EQ(h.desc.index, HWP_HPT_PLB);
    CHECK_EQ(h.desc.repl, HWP_HPT_LFU);
    CHECK_EQ(hwp_phase_init(&ph, st_phase, sizeof st_phase, NULL, NULL), HWP_OK);
    CHECK_EQ(ph.desc.interval, 10000000u);
    CHECK_EQ(ph.desc.threshold, 6000000u);
    CHECK_EQ(ph.shift, 18); /* 24-bit counters for 10M, top 6 bits */

    memset(&d, 0, sizeof d);
    d.max_len = 64;
    CHECK_EQ(hwp_path_bytes(&d), 0);
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "max_len");
    d.max_len = 63;
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_OK);
    memset(&d, 0, sizeof d);
    d.mode = HWP_PATH_CUSTOM;
    d.ops[HWP_PATH_BT_FORWARD] = HWP_PATH_OP_UPDATE | HWP_PATH_OP_UPDCOUNT;
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "update-count");
    memset(&d, 0, sizeof d);
    d.mode = HWP_PATH_CUSTOM;
    d.ops[HWP_PATH_BT_CALL] = HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_PUSH;
    d.ext_calls = 1;
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "Table 2");
    memset(&d, 0, sizeof d);
    d.overflow = HWP_PATH_SPILL;
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "spill");
    memset(&d, 0, sizeof d);
    d.counter_bits = 33;
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_EINVAL);
    d.counter_bits = 0;
    d.mode = 9;
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_EINVAL);
    d.mode = 0;
    /* storage of any alignment: bytes() covers the worst padding (15
     * bytes at an address 1 past a 16-byte boundary) */
    CHECK_EQ(hwp_path_init(&p, st_path + 8, sizeof st_path - 8, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_path_init(&p, st_path + 1, hwp_path_bytes(&d) - 1, &d, NULL), HWP_ENOSPC);
    CHECK_HAS(hwp_why(&p), "storage");
    CHECK_EQ(hwp_path_init(&p, st_path + 1, hwp_path_bytes(&d), &d, NULL), HWP_OK);
    CHECK_EQ(hwp_path_init(&p, NULL, hwp_path_bytes(&d), &d, NULL), HWP_EINVAL);
    d.queue = HWP_PATH_QUEUE_NONE;
    CHECK_EQ(hwp_path_bytes(&d), HWP_PATH_BYTES(32, 0));

    memset(&hd, 0, sizeof hd);
    hd.entries = 100;
    CHECK_EQ(hwp_hpt_bytes(&hd), 0);
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&h), "entries");
    hd.entries = 64;
    hd.ways = 128;
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_EINVAL);
    hd.ways = 4;
    hd.index = 7;
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_EINVAL);
    hd.index = 0;
    CHECK_EQ(hwp_hpt_init(&h, st_hpt + 1, HWP_HPT_BYTES(64) - 1, &hd, NULL), HWP_ENOSPC);
    CHECK_EQ(hwp_hpt_export(&h, NULL, 0), 0); /* a failed init is no handle */
    CHECK_EQ(hwp_hpt_lookup(&h, NULL), 0);

    memset(&pd, 0, sizeof pd);
    pd.counters = 30;
    CHECK_EQ(hwp_phase_init(&ph, st_phase, sizeof st_phase, &pd, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&ph), "counters");
    pd.counters = 32;
    pd.sig_bits = 9;
    CHECK_EQ(hwp_phase_init(&ph, st_phase, sizeof st_phase, &pd, NULL), HWP_EINVAL);

    /* cold calls reject a bad handle */
    memset(&p, 0, sizeof p);
    CHECK_EQ(hwp_path_begin(&p, 0), HWP_EINVAL);
    CHECK_EQ(hwp_path_flush(&p), HWP_EINVAL);
    CHECK_EQ(hwp_path_attach(&p, NULL, NULL), HWP_EINVAL);
    memset(&h, 0, sizeof h);
    CHECK_EQ(hwp_hpt_export(&h, NULL, 0), 0);
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, NULL, NULL), HWP_OK);
    CHECK_EQ(hwp_path_attach(&p, &h, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "hpt");
}

/* ---- BL paths on the synthetic program, exact -------------------------- */

static void run_prog_exact(unsigned cap, unsigned overflow, unsigned max_rec,
                           unsigned iters, uint64_t seed);

static void test_bl_exact(void) { run_prog_exact(0, HWP_PATH_DROP, 6, 300, 1); }

/* A host-memory spill area for the SPILL policy. */
static struct {
    hwp_path_entry e[1024];
    unsigned n;
} spill_area;

static void spill_cb(void *ctx, const hwp_path_entry *e) {
    (void)ctx;
    spill_area.e[spill_area.n++] = *e;
}

static bool fill_cb(void *ctx, hwp_path_entry *e) {
    (void)ctx;
    if (!spill_area.n) return false;
    *e = spill_area.e[--spill_area.n];
    return true;
}

/* Drives the synthetic program through a path stack of depth `cap` (0 =
 * deep enough for no overflow) with an HPT large enough to never evict,
 * and compares with the reference. */
static void run_prog_exact(unsigned cap, unsigned overflow, unsigned max_rec,
                           unsigned iters, uint64_t seed) {
    hwp_path p;
    hwp_hpt h;
    hwp_path_desc d;
    hwp_hpt_desc hd;
    pp_map ref, got;
    pp_prog g;
    pp_frame m;
    static hwp_path_row rows[8192];
    size_t nrows, i;
    int ok = 1;

    pp_map_init(&ref, 1 << 14);
    pp_map_init(&got, 1 << 14);
    memset(&d, 0, sizeof d);
    d.depth = cap ? cap : 64;
    d.overflow = overflow;
    d.metric = HWP_PATH_M_INSNS;
    d.counter_bits = 32;
    d.on_path = sink_map;
    d.ctx = &got;
    d.spill = spill_cb;
    d.fill = fill_cb;
    spill_area.n = 0;
    memset(&hd, 0, sizeof hd);
    hd.entries = 8192;
    hd.ways = 256; /* far more room than paths: nothing is evicted */
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_OK);
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_OK);
    CHECK_EQ(hwp_path_attach(&p, &h, NULL), HWP_OK);

    pp_init(&g, emit_model, &p, seed);
    g.ref = &ref;
    g.max_rec = max_rec;
    g.cap = overflow == HWP_PATH_DROP ? cap : 0;
    CHECK_EQ(hwp_path_begin(&p, 0x1000), HWP_OK);
    pp_main(&g, &m, iters);
    pp_finish(&g, &m);
    CHECK_EQ(hwp_path_flush(&p), HWP_OK);

    CHECK(ref.n > 20); /* the program really exercises many paths */
    CHECK(pp_map_same(&ref, &got, 1));
    CHECK_EQ(p.ignored, g.ignored);
    CHECK_EQ(p.branches, g.branches);
    if (cap && overflow == HWP_PATH_DROP) {
        CHECK(p.overflows > 0);
        CHECK(g.ignored > 0);
        /* every empty stack met was a dropped frame, none a cold start */
        CHECK(p.underflows > 0);
        CHECK_EQ(p.cold_starts, 0);
        CHECK_EQ(p.lost, 0);
    }
    if (cap && overflow == HWP_PATH_SPILL) {
        CHECK(p.spills > 0);
        CHECK_EQ(p.spills, p.fills);
        CHECK_EQ(p.ignored, 0);
    }
    /* metric = instructions: each record's value is its insns */
    for (i = 0; i < got.cap; i++)
        if (got.s[i].used && got.s[i].value != got.s[i].insns) ok = 0;
    CHECK(ok);
    /* the HPT holds exactly the reference profile (instructions) */
    CHECK_EQ(h.evictions, 0);
    nrows = hwp_hpt_export(&h, rows, 8192);
    CHECK_EQ(nrows, ref.n);
    ok = 1;
    for (i = 0; i < nrows; i++) {
        pp_slot *s = pp_map_get(&ref, key_of(&rows[i].pd));
        if (s->insns != rows[i].count) ok = 0;
        if (i && rows[i - 1].count < rows[i].count) ok = 0;
    }
    CHECK(ok);
    CHECK_EQ(ref.n, nrows); /* no lookup above inserted a new key */
    pp_map_free(&ref);
    pp_map_free(&got);
}

static void test_overflow_drop(void) {
    run_prog_exact(4, HWP_PATH_DROP, 8, 200, 2);
}

static void test_overflow_spill(void) {
    run_prog_exact(4, HWP_PATH_SPILL, 8, 200, 3);
}

/* ---- Figure 5 style sequences ------------------------------------------ */

/* main @0x1000 calls P @0x100 at 0x1004 (returns to 0x1008). P: 0x100
 * falls into the loop head H=0x110; cond at 0x114 taken -> ELSE 0x130,
 * else THEN 0x118, which ends with a jump at 0x11c to JOIN 0x140; ELSE
 * falls into JOIN; JOIN ends with the loop branch at 0x148 -> H; the
 * exit block returns at 0x150. Iterations: then, else, then. */
static void drive_fig5(hwp_path *p) {
    static const int use_else[3] = {0, 1, 0};
    int it;
    hwp_path_begin(p, 0x1000);
    hwp_path_branch(p, 0x1004, 0x100, HWP_CLS_CALL, true, 2, 0);
    for (it = 0; it < 3; it++) {
        hwp_path_branch(p, 0x114, use_else[it] ? 0x130 : 0x118,
                        HWP_CLS_BR_COND, use_else[it] != 0, 3, 0);
        if (!use_else[it]) hwp_path_branch(p, 0x11c, 0x140, HWP_CLS_JUMP, true, 2, 0);
        hwp_path_branch(p, 0x148, it < 2 ? 0x110 : 0x14c, HWP_CLS_BR_COND,
                        it < 2, 3, 0);
    }
    hwp_path_branch(p, 0x150, 0x1008, HWP_CLS_RET, true, 2, 0);
    hwp_path_branch(p, 0x100c, 0x1010, HWP_CLS_BR_COND, false, 2, 0);
    hwp_path_flush(p);
}

static void run_fig5(unsigned mode, seq *q) {
    hwp_path p;
    hwp_path_desc d;
    memset(&d, 0, sizeof d);
    d.mode = mode;
    d.metric = HWP_PATH_M_BRANCHES;
    open_seq(&p, &d, q);
    drive_fig5(&p);
}

static void test_fig5_bl(void) {
    seq q;
    run_fig5(HWP_PATH_BL, &q);
    /* Table 1: the entry path plus first iteration; each middle
     * iteration; the last iteration plus the exit; then main's path,
     * which spans the call (update-count only). */
    CHECK_EQ(q.n, 4);
    CHECK(seq_is(&q, 0, 0x100, "011"));
    CHECK(seq_is(&q, 1, 0x110, "11"));
    CHECK(seq_is(&q, 2, 0x110, "010"));
    CHECK(seq_is(&q, 3, 0x1000, "0"));
    /* branch counts: the callee path counts its return, main counts
     * its call, its return-landing cond */
    CHECK_EQ(q.value[2], 4);
    CHECK_EQ(q.value[3], 2);
}

static void test_fig5_wpp(void) {
    seq q;
    run_fig5(HWP_PATH_WPP, &q);
    /* Table 2: paths also end at calls and returns. */
    CHECK_EQ(q.n, 5);
    CHECK(seq_is(&q, 0, 0x1000, ""));
    CHECK(seq_is(&q, 1, 0x100, "011"));
    CHECK(seq_is(&q, 2, 0x110, "11"));
    CHECK(seq_is(&q, 3, 0x110, "010"));
    CHECK(seq_is(&q, 4, 0x1008, "0"));
}

static void test_fig5_extended(void) {
    seq q;
    run_fig5(HWP_PATH_EXT_LOOP, &q);
    /* One back-edge spanned: the first path runs through two iterations,
     * the next starts at the head for the last iteration. */
    CHECK_EQ(q.n, 3);
    CHECK(seq_is(&q, 0, 0x100, "01111"));
    CHECK(seq_is(&q, 1, 0x110, "010"));
    CHECK(seq_is(&q, 2, 0x1000, "0"));
}

static void test_extended_calls(void) {
    hwp_path p;
    hwp_path_desc d;
    seq q;
    memset(&d, 0, sizeof d);
    d.mode = HWP_PATH_EXT_CALL;
    open_seq(&p, &d, &q);
    /* main calls f, which returns: the path runs through the call and
     * the return (extension counter 1 then back to 0). main calls f
     * again: the path extends into f, whose call to g is one boundary
     * too many and ends it (Table 2); g's path ends at its return; the
     * path after it starts fresh (counter 0), so f's return ends it. */
    hwp_path_begin(&p, 0x1000);
    hwp_path_branch(&p, 0x1000, 0x1004, HWP_CLS_BR_COND, false, 1, 0);
    hwp_path_branch(&p, 0x1004, 0x2000, HWP_CLS_CALL, true, 1, 0);
    hwp_path_branch(&p, 0x2000, 0x2010, HWP_CLS_BR_COND, true, 1, 0);
    hwp_path_branch(&p, 0x2010, 0x1008, HWP_CLS_RET, true, 1, 0);
    hwp_path_branch(&p, 0x1008, 0x100c, HWP_CLS_BR_COND, false, 1, 0);
    hwp_path_branch(&p, 0x100c, 0x2000, HWP_CLS_CALL, true, 1, 0);
    hwp_path_branch(&p, 0x2014, 0x3000, HWP_CLS_CALL, true, 1, 0);
    hwp_path_branch(&p, 0x3000, 0x2018, HWP_CLS_RET, true, 1, 0);
    hwp_path_branch(&p, 0x2018, 0x1010, HWP_CLS_RET, true, 1, 0);
    hwp_path_flush(&p);
    CHECK_EQ(q.n, 4);
    /* cond, call, cond in f, return, cond, call */
    CHECK(seq_is(&q, 0, 0x1000, "011101"));
    CHECK(seq_is(&q, 1, 0x3000, ""));
    CHECK(seq_is(&q, 2, 0x2018, ""));
    CHECK(seq_is(&q, 3, 0x1010, ""));
}

/* ---- splitting at the maximum length ----------------------------------- */

static void test_max_len_split(void) {
    hwp_path p;
    hwp_path_desc d;
    seq q;
    unsigned i;
    memset(&d, 0, sizeof d);
    d.max_len = 8;
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x100);
    /* 20 forward branches at 0x100 + 16 i, alternating directions, each
     * to the next block at 0x110 + 16 i */
    for (i = 0; i < 20; i++)
        hwp_path_branch(&p, 0x10c + 16 * i, 0x110 + 16 * i, HWP_CLS_BR_COND,
                        i % 2 == 0, 4, 0);
    hwp_path_flush(&p);
    CHECK_EQ(q.n, 3);
    CHECK(seq_is(&q, 0, 0x100, "10101010"));
    /* the 8th branch (i = 7) went to 0x110 + 16 * 7 */
    CHECK(seq_is(&q, 1, 0x110 + 16 * 7, "10101010"));
    CHECK(seq_is(&q, 2, 0x110 + 16 * 15, "1010"));
    CHECK_EQ(p.splits, 2);
}

/* ---- metrics along paths (section 4) ----------------------------------- */

static void test_metric_counters(void) {
    hwp_path p;
    hwp_path_desc d;
    seq q;
    unsigned i;
    memset(&d, 0, sizeof d);
    d.metric = HWP_PATH_M_BRANCHES;
    d.counter_bits = 4; /* saturates at 15 */
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x100);
    for (i = 0; i < 20; i++)
        hwp_path_branch(&p, 0x200 + 8 * i, 0x204 + 8 * i, HWP_CLS_BR_COND, false, 1, 0);
    hwp_path_branch(&p, 0x300, 0x100, HWP_CLS_BR_COND, true, 1, 0);
    for (i = 0; i < 5; i++)
        hwp_path_branch(&p, 0x200 + 8 * i, 0x204 + 8 * i, HWP_CLS_BR_COND, false, 1, 0);
    hwp_path_branch(&p, 0x300, 0x100, HWP_CLS_BR_COND, true, 1, 0);
    CHECK_EQ(q.n, 2);
    CHECK_EQ(q.value[0], 15); /* 21 branches, 4-bit counter */
    CHECK_EQ(q.value[1], 6);

    /* events: a relative cost per block (e.g. energy) */
    d.metric = HWP_PATH_M_EVENTS;
    d.counter_bits = 8;
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x100);
    hwp_path_branch(&p, 0x200, 0x204, HWP_CLS_BR_COND, false, 5, 7);
    hwp_path_branch(&p, 0x208, 0x20c, HWP_CLS_BR_COND, false, 5, 100);
    hwp_path_branch(&p, 0x210, 0x300, HWP_CLS_CALL, true, 5, 200);
    hwp_path_branch(&p, 0x300, 0x214, HWP_CLS_RET, true, 5, 3);
    hwp_path_branch(&p, 0x218, 0x100, HWP_CLS_BR_COND, true, 5, 1);
    CHECK_EQ(q.n, 2);
    CHECK_EQ(q.value[0], 3);   /* callee: its return block */
    CHECK_EQ(q.value[1], 255); /* 7 + 100 + 200 + 1 saturates at 8 bits */

    /* the shared record: taken from HWP_EV_TAKEN, events by mask */
    d.event_mask = HWP_EV_DCMISS | HWP_EV_MISPRED;
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x100);
    {
        hwp_insn in;
        memset(&in, 0, sizeof in);
        for (i = 0; i < 6; i++) {
            in.pc = 0x100 + 4 * i;
            in.next_pc = in.pc + 4;
            in.cls = i == 2 ? HWP_CLS_LOAD : HWP_CLS_OTHER;
            in.events = i == 2 ? HWP_EV_DCMISS : i == 3 ? HWP_EV_ICMISS : 0;
            hwp_path_insn(&p, &in);
        }
        in.pc = 0x118;
        in.next_pc = 0x100;
        in.cls = HWP_CLS_BR_COND;
        in.events = HWP_EV_TAKEN | HWP_EV_MISPRED;
        hwp_path_insn(&p, &in);
    }
    CHECK_EQ(q.n, 1);
    CHECK_EQ(q.value[0], 2); /* the D$ miss and the mispredict */
    CHECK(seq_is(&q, 0, 0x100, "1"));
}

/* ---- unwinding ---------------------------------------------------------- */

static void test_unwind(void) {
    hwp_path p;
    hwp_path_desc d;
    seq q;
    memset(&d, 0, sizeof d);
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x1000);
    hwp_path_branch(&p, 0x1004, 0x2000, HWP_CLS_CALL, true, 1, 0);
    hwp_path_branch(&p, 0x2004, 0x3000, HWP_CLS_CALL, true, 1, 0);
    hwp_path_branch(&p, 0x3004, 0x3010, HWP_CLS_BR_COND, true, 1, 0);
    CHECK_EQ(p.n, 3);
    CHECK_EQ(hwp_path_depth(&p), 3);
    CHECK_EQ(hwp_path_depth(NULL), 0);
    /* longjmp from 0x3000's frame back to main: pop two entries */
    CHECK_EQ(hwp_path_unwind(&p, 5, true), HWP_EINVAL);
    CHECK_EQ(hwp_path_unwind(&p, 2, false), HWP_OK);
    CHECK_EQ(p.n, 1);
    CHECK_EQ(hwp_path_depth(&p), 1);
    CHECK_EQ(q.n, 0);
    hwp_path_branch(&p, 0x1008, 0x100c, HWP_CLS_BR_COND, false, 1, 0);
    CHECK_EQ(hwp_path_unwind(&p, 1, true), HWP_OK);
    CHECK_EQ(q.n, 1);
    CHECK(seq_is(&q, 0, 0x1000, "0"));
    /* a branch on an empty stack starts an incomplete, ignored path */
    hwp_path_branch(&p, 0x5000, 0x4000, HWP_CLS_BR_COND, true, 1, 0);
    CHECK_EQ(p.cold_starts, 1);
    CHECK_EQ(p.ignored, 1);
    CHECK_EQ(q.n, 1);

    /* a longjmp deeper than the on-chip stack: with DROP, the dropped
     * frames count too */
    d.depth = 2;
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x1000);
    hwp_path_branch(&p, 0x1004, 0x2000, HWP_CLS_CALL, true, 1, 0);
    hwp_path_branch(&p, 0x2004, 0x3000, HWP_CLS_CALL, true, 1, 0);
    CHECK_EQ(p.n, 2);
    CHECK_EQ(p.lost, 1);
    CHECK_EQ(hwp_path_unwind(&p, 4, false), HWP_EINVAL);
    CHECK_EQ(hwp_path_unwind(&p, 3, false), HWP_OK);
    CHECK_EQ(p.n, 0);
    CHECK_EQ(p.lost, 0);
    /* with SPILL, the spilled frames are filled back and emitted */
    d.overflow = HWP_PATH_SPILL;
    d.spill = spill_cb;
    d.fill = fill_cb;
    spill_area.n = 0;
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x1000);
    hwp_path_branch(&p, 0x1004, 0x2000, HWP_CLS_CALL, true, 1, 0);
    hwp_path_branch(&p, 0x2004, 0x3000, HWP_CLS_CALL, true, 1, 0);
    CHECK_EQ(p.spills, 1);
    CHECK_EQ(hwp_path_unwind(&p, 3, true), HWP_OK);
    CHECK_EQ(q.n, 3);
    CHECK(seq_is(&q, 2, 0x1000, ""));
    CHECK_EQ(spill_area.n, 0);
}

/* ---- Hot Path Table ----------------------------------------------------- */

static hwp_path_pd mkpd(uint64_t start, uint64_t shape) {
    hwp_path_pd pd;
    pd.start = start;
    pd.shape = shape;
    return pd;
}

static void test_hpt_replacement(void) {
    hwp_hpt h;
    hwp_hpt_desc hd;
    hwp_path_pd a = mkpd(0x100, 2), b = mkpd(0x200, 3), c = mkpd(0x300, 5);
    memset(&hd, 0, sizeof hd);
    hd.entries = 2;
    hd.ways = 2; /* one set */
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_OK);
    CHECK_EQ(hwp_hpt_add(&h, &a, 10), 0);
    CHECK_EQ(hwp_hpt_add(&h, &b, 1), 0);
    CHECK_EQ(hwp_hpt_add(&h, &b, 1), 1);
    CHECK_EQ(hwp_hpt_add(&h, &a, 1), 1); /* a: 11, most recent */
    /* LFU evicts b (2) though a is more recent */
    CHECK_EQ(hwp_hpt_add(&h, &c, 1), 0);
    CHECK_EQ(hwp_hpt_lookup(&h, &a), 11);
    CHECK_EQ(hwp_hpt_lookup(&h, &b), 0);
    CHECK_EQ(hwp_hpt_lookup(&h, &c), 1);
    CHECK_EQ(h.evictions, 1);
    CHECK_EQ(h.evicted_value, 2);
    CHECK_EQ(h.total, 14);

    hd.repl = HWP_HPT_LRU;
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_OK);
    hwp_hpt_add(&h, &a, 10);
    hwp_hpt_add(&h, &b, 1);
    hwp_hpt_add(&h, &a, 1);
    /* LRU evicts b (least recent) ... */
    CHECK_EQ(hwp_hpt_add(&h, &c, 1), 0);
    CHECK_EQ(hwp_hpt_lookup(&h, &b), 0);
    /* ... and then a, though it is the heavy one */
    hwp_hpt_add(&h, &b, 1);
    CHECK_EQ(hwp_hpt_lookup(&h, &a), 0);
    CHECK_EQ(hwp_hpt_lookup(&h, &c), 1);

    /* the accumulator saturates at 2^32 - 1 */
    hd.repl = HWP_HPT_LFU;
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_OK);
    hwp_hpt_add(&h, &a, 0xFFFFFFF0u);
    hwp_hpt_add(&h, &a, 0x100);
    CHECK_EQ(hwp_hpt_lookup(&h, &a), 0xFFFFFFFFu);
    CHECK_EQ(h.saturations, 1);
}

static void test_hpt_index_functions(void) {
    hwp_hpt h;
    hwp_hpt_desc hd;
    /* two paths from one start that differ only in length: "1" and "01"
     * have the same direction bits */
    hwp_path_pd a = mkpd(0x4000, 3), b = mkpd(0x4000, 5);
    unsigned idx;
    memset(&hd, 0, sizeof hd);
    hd.entries = 64;
    hd.ways = 1; /* direct mapped: one entry per set */
    for (idx = HWP_HPT_PLB; idx <= HWP_HPT_P; idx++) {
        hd.index = idx;
        CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_OK);
        hwp_hpt_add(&h, &a, 5);
        hwp_hpt_add(&h, &b, 1);
        /* p and pb put both in one set (the second evicts the first);
         * only plb, which also hashes the length, keeps both */
        if (idx == HWP_HPT_PLB) {
            CHECK_EQ(hwp_hpt_lookup(&h, &a), 5);
        } else {
            CHECK_EQ(hwp_hpt_lookup(&h, &a), 0);
        }
        CHECK_EQ(hwp_hpt_lookup(&h, &b), 1);
    }
}

static void test_hpt_export_merge(void) {
    hwp_hpt h, h2;
    hwp_hpt_desc hd;
    hwp_path_row rows[8];
    static unsigned char st2[HWP_HPT_BYTES(64)] A16;
    unsigned i;
    memset(&hd, 0, sizeof hd);
    hd.entries = 64;
    hd.ways = 4;
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_OK);
    CHECK_EQ(hwp_hpt_init(&h2, st2, sizeof st2, &hd, NULL), HWP_OK);
    for (i = 1; i <= 10; i++) {
        hwp_path_pd pd = mkpd(0x1000 * i, 2 + i % 2);
        hwp_hpt_add(&h, &pd, i * 3);
        hwp_hpt_add(&h2, &pd, i);
    }
    /* (out, cap): the number available, the hottest cap written */
    CHECK_EQ(hwp_hpt_export(&h, NULL, 0), 10);
    CHECK_EQ(hwp_hpt_export(&h, rows, 3), 10);
    CHECK_EQ(rows[0].count, 30);
    CHECK_EQ(rows[1].count, 27);
    CHECK_EQ(rows[2].count, 24);
    CHECK_EQ(rows[0].pd.start, 0xA000);
    CHECK_EQ(hwp_hpt_merge(&h, &h2), HWP_OK);
    CHECK_EQ(hwp_hpt_export(&h, rows, 8), 10);
    CHECK_EQ(rows[0].count, 40);
    CHECK_EQ(rows[7].count, 12); /* i = 3: 9 + 3 */
    hd.ways = 2;
    CHECK_EQ(hwp_hpt_init(&h2, st2, sizeof st2, &hd, NULL), HWP_OK);
    CHECK_EQ(hwp_hpt_merge(&h, &h2), HWP_EMISMATCH);
    CHECK_HAS(hwp_why(&h), "ways");
}

/* Paths of one set of a 64 x 4 table (plb index), found by search. */
static unsigned same_set(const hwp_hpt *h, hwp_path_pd *out, unsigned n) {
    hwp_path_pd first = mkpd(0x40000, 3);
    const hwp_hpt_entry *set = hwp__hpt_set(h, &first);
    unsigned k = 0, i;
    for (i = 0; k < n && i < 100000; i++) {
        hwp_path_pd pd = mkpd(0x40000 + 4 * i, 3);
        if (hwp__hpt_set(h, &pd) == set) out[k++] = pd;
    }
    return k;
}

/* Merging must not let a cold newcomer displace a hot entry: dst's set
 * holds four hot paths (100 each), src brings a fifth, cold one (1)
 * for the same set. The old merge re-added src's entries with
 * hwp_hpt_add, whose LFU miss evicted one of the hot paths (checked: it
 * fails on that code). Then the other way round: src's hot paths must
 * displace dst's cold ones, and of src's own entries none may evict
 * another. */
static void test_hpt_merge_keeps_hot(void) {
    hwp_hpt a, b;
    hwp_hpt_desc hd;
    hwp_path_pd pd[8];
    static unsigned char sa[HWP_HPT_BYTES(64)], sb[HWP_HPT_BYTES(64)];
    hwp_hpt_stats st;
    unsigned i;
    memset(&hd, 0, sizeof hd);
    memset(&st, 0, sizeof st);
    hd.entries = 64;
    CHECK_EQ(hwp_hpt_init(&a, sa, sizeof sa, &hd, NULL), HWP_OK);
    CHECK_EQ(hwp_hpt_init(&b, sb, sizeof sb, &hd, NULL), HWP_OK);
    if (!CHECK_EQ(same_set(&a, pd, 8), 8)) return;
    for (i = 0; i < 4; i++) hwp_hpt_add(&a, &pd[i], 100);
    hwp_hpt_add(&b, &pd[4], 1);
    CHECK_EQ(hwp_hpt_merge(&a, &b), HWP_OK);
    for (i = 0; i < 4; i++) CHECK_EQ(hwp_hpt_lookup(&a, &pd[i]), 100);
    CHECK_EQ(hwp_hpt_lookup(&a, &pd[4]), 0);
    CHECK_EQ(hwp_hpt_get_stats(&a, &st), HWP_OK);
    CHECK_EQ(st.evicted, 1); /* the cold path is the one left out */
    CHECK_EQ(st.events, 5);
    CHECK_EQ(st.cycles, 0);  /* merging charges nothing */

    /* dst cold (1, 2, 3, 4), src hot (50..53 on four new paths) */
    CHECK_EQ(hwp_hpt_reset(&a), HWP_OK);
    CHECK_EQ(hwp_hpt_reset(&b), HWP_OK);
    for (i = 0; i < 4; i++) hwp_hpt_add(&a, &pd[i], i + 1);
    for (i = 0; i < 4; i++) hwp_hpt_add(&b, &pd[4 + i], 53 - i);
    CHECK_EQ(hwp_hpt_merge(&a, &b), HWP_OK);
    for (i = 0; i < 4; i++) CHECK_EQ(hwp_hpt_lookup(&a, &pd[4 + i]), 53 - i);
    CHECK_EQ(hwp_hpt_export(&a, NULL, 0), 4);

    /* a path in both adds up */
    CHECK_EQ(hwp_hpt_reset(&a), HWP_OK);
    CHECK_EQ(hwp_hpt_reset(&b), HWP_OK);
    hwp_hpt_add(&a, &pd[0], 7);
    hwp_hpt_add(&b, &pd[0], 5);
    CHECK_EQ(hwp_hpt_merge(&a, &b), HWP_OK);
    CHECK_EQ(hwp_hpt_lookup(&a, &pd[0]), 12);
}

/* ---- bad input ------------------------------------------------------------ */

/* One branch record through hwp_path_insn (the record path checks
 * that blocks chain). */
static void insn_br(hwp_path *p, uint64_t pc, uint64_t next, int taken) {
    hwp_insn in;
    memset(&in, 0, sizeof in);
    in.pc = pc;
    in.next_pc = next;
    in.cls = HWP_CLS_BR_COND;
    in.events = taken ? HWP_EV_TAKEN : 0;
    hwp_path_insn(p, &in);
}

/* A lost record: the branch at 0x2004 lies below the previous branch's
 * next_pc (0x3000), so the blocks do not chain and the open path holds
 * a wrong sequence. It must be counted and the path dropped, never
 * emitted (checked: the code before the chain check emitted it as a
 * path "11" from 0x1000). */
static void test_unchained_blocks(void) {
    hwp_path p;
    hwp_path_desc d;
    hwp_path_stats st;
    seq q;
    memset(&d, 0, sizeof d);
    memset(&st, 0, sizeof st);
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x1000);
    insn_br(&p, 0x1004, 0x3000, 1);
    insn_br(&p, 0x2004, 0x1000, 1);
    CHECK_EQ(q.n, 0);
    CHECK_EQ(hwp_path_get_stats(&p, &st), HWP_OK);
    CHECK_EQ(st.unchained, 1);
    CHECK_EQ(st.dropped, 1);
    /* the next path chains again and is kept */
    insn_br(&p, 0x1008, 0x1000, 1);
    CHECK_EQ(q.n, 1);
    CHECK(seq_is(&q, 0, 0x1000, "1"));
    CHECK_EQ(hwp_path_get_stats(&p, &st), HWP_OK);
    CHECK_EQ(st.unchained, 1);
}

/* A call chain deeper than the stack: the overflowing frames are
 * counted (evicted), and the returns into frames whose entry was lost
 * give ignored paths (dropped), both in the stats and the report. A
 * queue of zero entries or a BBV interval of zero is the default (the
 * contract's zero-is-default); out-of-range values name their field. */
static void test_bad_input(void) {
    hwp_path p;
    hwp_path_desc d;
    hwp_path_stats st;
    hwp_phase ph;
    hwp_phase_desc pd;
    hwp_bufwriter bw;
    static char buf[4096];
    hwp_writer w;
    seq q;
    unsigned i;
    memset(&d, 0, sizeof d);
    memset(&st, 0, sizeof st);
    d.depth = 4;
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x1000);
    for (i = 0; i < 10; i++) /* ten nested calls */
        hwp_path_branch(&p, 0x1000 + 0x100 * i + 4, 0x1000 + 0x100 * (i + 1),
                        HWP_CLS_CALL, true, 1, 0);
    for (i = 10; i-- > 0;) /* and their returns */
        hwp_path_branch(&p, 0x1000 + 0x100 * (i + 1) + 0x80, 0x1000 + 0x100 * i + 8,
                        HWP_CLS_RET, true, 1, 0);
    CHECK_EQ(hwp_path_get_stats(&p, &st), HWP_OK);
    CHECK_EQ(st.evicted, 7);  /* 11 frames in 4 entries */
    CHECK_EQ(st.paths, 4);    /* the 4 innermost returns complete paths */
    CHECK_EQ(st.dropped, 6);  /* 6 returns land in a lost frame */
    CHECK_EQ(st.max_depth_used, 4);
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_path_write_json(&p, &w);
    CHECK_HAS(buf, "\"dropped\":6,\"evicted\":7");
    CHECK_EQ(hwp_path_unwind(&p, 100, false), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "unwind n");

    memset(&d, 0, sizeof d);
    d.queue = 0;
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_OK);
    CHECK_EQ(p.desc.queue, 4);
    d.queue = 1025;
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&p), "queue");

    memset(&pd, 0, sizeof pd);
    CHECK_EQ(hwp_phase_init(&ph, st_phase, sizeof st_phase, &pd, NULL), HWP_OK);
    CHECK_EQ(ph.desc.interval, 10000000u);
    pd.interval = 1000;
    pd.threshold = 2001; /* beyond any Manhattan distance of 1000 insns */
    CHECK_EQ(hwp_phase_init(&ph, st_phase, sizeof st_phase, &pd, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&ph), "threshold");
    pd.threshold = 0;
    pd.interval = (uint64_t)1 << 32;
    CHECK_EQ(hwp_phase_init(&ph, st_phase, sizeof st_phase, &pd, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&ph), "interval");
}

/* ---- decoding a path back to its blocks --------------------------------- */

/* A block map of a small function: B0 0x100..0x10c (cond: taken 0x200,
 * else 0x110), B1 0x110..0x11c (call 0x800, returns to 0x120), B2
 * 0x120..0x12c (jump 0x200), B3 0x200..0x20c (cond back-edge to 0x100,
 * else 0x210), B4 0x210..0x214 (ret); the callee 0x800..0x804 (ret); and
 * a program's end: E0 0x500..0x50c (cond: taken 0x600, else 0x510), E1
 * 0x600..0x608, which ends in an exit system call, not a branch. */
static bool block_map(void *ctx, uint64_t start, hwp_path_block *b) {
    static const hwp_path_block map[] = {
        {0x10c, 0x200, 0x110, HWP_CLS_BR_COND, 0}, {0x11c, 0x800, 0x120, HWP_CLS_CALL, 0},
        {0x12c, 0x200, 0x130, HWP_CLS_JUMP, 0},    {0x20c, 0x100, 0x210, HWP_CLS_BR_COND, 0},
        {0x214, 0, 0x218, HWP_CLS_RET, 0},         {0x804, 0, 0x808, HWP_CLS_RET, 0},
        {0x50c, 0x600, 0x510, HWP_CLS_BR_COND, 0}, {0x608, 0, 0x60c, HWP_CLS_OTHER, 0}};
    static const uint64_t starts[] = {0x100, 0x110, 0x120, 0x200, 0x210, 0x800, 0x500, 0x600};
    unsigned i;
    (void)ctx;
    for (i = 0; i < 8; i++)
        if (starts[i] == start) {
            *b = map[i];
            return true;
        }
    return false;
}

/* The paths the stack records on this function decode back to the
 * blocks the branches ran through. */
static void test_decode(void) {
    hwp_path p;
    hwp_path_desc d;
    hwp_path_pd pd;
    uint64_t out[8];
    seq q;
    memset(&d, 0, sizeof d);
    open_seq(&p, &d, &q);
    hwp_path_begin(&p, 0x100);
    /* B0 not taken, B1 calls (callee returns), B2 jumps, B3 back-edge */
    hwp_path_branch(&p, 0x10c, 0x110, HWP_CLS_BR_COND, false, 4, 0);
    hwp_path_branch(&p, 0x11c, 0x800, HWP_CLS_CALL, true, 4, 0);
    hwp_path_branch(&p, 0x804, 0x120, HWP_CLS_RET, true, 2, 0);
    hwp_path_branch(&p, 0x12c, 0x200, HWP_CLS_JUMP, true, 4, 0);
    hwp_path_branch(&p, 0x20c, 0x100, HWP_CLS_BR_COND, true, 4, 0);
    /* B0 taken, B3 falls out, B4 returns */
    hwp_path_branch(&p, 0x10c, 0x200, HWP_CLS_BR_COND, true, 4, 0);
    hwp_path_branch(&p, 0x20c, 0x210, HWP_CLS_BR_COND, false, 4, 0);
    hwp_path_branch(&p, 0x214, 0x999, HWP_CLS_RET, true, 2, 0);
    if (!CHECK_EQ(q.n, 3)) return;
    /* q: the callee's path, then the two of the function */
    CHECK(seq_is(&q, 0, 0x800, ""));
    CHECK(seq_is(&q, 1, 0x100, "011"));
    CHECK(seq_is(&q, 2, 0x100, "10"));
    pd.start = 0x100;
    pd.shape = 0xB; /* sentinel + 011 */
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, NULL, 0), 4);
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, out, 8), 4);
    CHECK_EQ(out[0], 0x100);
    CHECK_EQ(out[1], 0x110);
    CHECK_EQ(out[2], 0x120);
    CHECK_EQ(out[3], 0x200);
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, out, 2), 4);
    pd.shape = 0x6; /* sentinel + 10 */
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, out, 8), 3);
    CHECK_EQ(out[1], 0x200);
    CHECK_EQ(out[2], 0x210);
    pd.start = 0x800;
    pd.shape = 1;
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, out, 8), 1);
    /* disagreements give 0: an unknown start, a jump recorded not taken,
     * bits left over after the path's pop */
    pd.start = 0x104;
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, out, 8), 0);
    pd.start = 0x100;
    pd.shape = 0x4; /* 00: B2's jump not taken */
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, out, 8), 0);
    pd.shape = 0x2D; /* 01101: a bit after B3's back-edge */
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, out, 8), 0);
    /* The program ends in E1, which no branch ends: the path flushed
     * there ends with E0's branch, its last recorded one. */
    hwp_path_begin(&p, 0x500);
    hwp_path_branch(&p, 0x50c, 0x600, HWP_CLS_BR_COND, true, 4, 0);
    hwp_path_flush(&p);
    if (!CHECK_EQ(q.n, 4) || !CHECK(seq_is(&q, 3, 0x500, "1"))) return;
    pd.start = 0x500;
    pd.shape = 0x3; /* sentinel + 1 */
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, out, 8), 1);
    CHECK_EQ(out[0], 0x500);
    pd.shape = 0x5; /* 01: a bit E1 has no branch for */
    CHECK_EQ(hwp_path_decode(&p, &pd, block_map, NULL, out, 8), 0);
}

/* ---- phase detectors at one hardware budget ---------------------------- */

static void test_phase_budget(void) {
    hwp_phase_desc path, bbv;
    memset(&path, 0, sizeof path);
    /* the defaults: 32 accumulators of 24 bits (10M-instruction
     * intervals), a 6-bit previous signature each, 32 past signatures
     * of 32 x 6 bits plus a 6-bit phase id: 96 + 24 + 32 * 198 / 8 */
    CHECK_EQ(hwp_phase_hw_bytes(&path), 96 + 24 + 792);
    CHECK_EQ(hwp_phase_bbv_desc(&path, &bbv), HWP_OK);
    CHECK_EQ(bbv.kind, HWP_PHASE_BBV);
    CHECK_EQ(hwp_phase_hw_bytes(&bbv), hwp_phase_hw_bytes(&path));
    CHECK_EQ(bbv.counters, 32);
    CHECK_EQ(bbv.sig_bits, 6);
    CHECK_EQ(bbv.threshold, 6000000u);
    path.counters = 30;
    CHECK_EQ(hwp_phase_bbv_desc(&path, &bbv), HWP_EINVAL);
    CHECK_EQ(hwp_phase_hw_bytes(&path), 0);
}

/* ---- HPT aging ------------------------------------------------------------- */

/* A path hot early (1000 adds) then gone: under plain LFU it keeps its
 * way forever, so four later paths compete for three ways (each
 * newcomer evicts the last one); under aging (LFUDA) each newcomer
 * starts at the last victim's priority, the floor rises past the old
 * path's 1000 and all four later paths stay. The accumulators stay
 * exact either way. Then the aging pass: a floor past 2^31 halves every
 * priority, one cycle per set charged to the cost. */
static void test_hpt_aging(void) {
    hwp_hpt h;
    hwp_hpt_desc hd;
    hwp_hpt_stats st;
    hwp_path_pd pd[8];
    hwp_cost c;
    unsigned i, k, pol;
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    for (pol = 0; pol < 2; pol++) {
        memset(&hd, 0, sizeof hd);
        memset(&st, 0, sizeof st);
        hd.entries = 64;
        hd.policy = pol ? HWP_HPT_AGING : HWP_HPT_PLAIN;
        if (!CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, &c), HWP_OK)) return;
        if (!CHECK_EQ(same_set(&h, pd, 6), 6)) return;
        for (i = 0; i < 1000; i++) hwp_hpt_add(&h, &pd[0], 1);
        for (i = 0; i < 1000; i++)
            for (k = 1; k < 5; k++) hwp_hpt_add(&h, &pd[k], 1);
        CHECK_EQ(hwp_hpt_get_stats(&h, &st), HWP_OK);
        if (pol) {
            CHECK_EQ(hwp_hpt_lookup(&h, &pd[0]), 0);
            for (k = 1; k < 5; k++) CHECK(hwp_hpt_lookup(&h, &pd[k]) >= 100);
            CHECK_EQ(st.agings, 0);
            CHECK_EQ(st.cycles, 0);
        } else {
            unsigned kept = 0;
            CHECK_EQ(hwp_hpt_lookup(&h, &pd[0]), 1000);
            for (k = 1; k < 5; k++) kept += hwp_hpt_lookup(&h, &pd[k]) >= 100;
            CHECK(kept < 4); /* three ways for four paths */
        }
    }
    /* the pass: four priorities near the top, then a miss */
    CHECK_EQ(hwp_hpt_reset(&h), HWP_OK);
    for (k = 0; k < 4; k++) hwp_hpt_add(&h, &pd[k], 0x90000000u + k);
    hwp_hpt_add(&h, &pd[5], 1);
    CHECK_EQ(hwp_hpt_get_stats(&h, &st), HWP_OK);
    CHECK_EQ(st.agings, 1);
    CHECK_EQ(st.cycles, 16); /* 64 entries / 4 ways */
    CHECK_EQ(c.spent[HWP_COST_PATH_HPT_AGE], 16);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[5]), 1);       /* exact accumulator */
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[1]), 0x90000001u);
    hd.repl = HWP_HPT_LRU;
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&h), "policy");
}

/* The floor survives an aging pass halved, like the priorities. A table
 * restored with its floor at 2^31 (the report's `floor` member) and no
 * paths: the first newcomer, X, runs the pass; Y, Z and W then enter the
 * same set's empty ways, where a newcomer starts at the floor, and are
 * hit 10 times. The next newcomer must evict X, the path seen once, not
 * one of the three seen 11 times. The pass that zeroed the floor let Y,
 * Z and W start below X, and Y was evicted (checked: fails on that
 * code). */
/* A 64-entry table under `policy` (no cost) and n paths of one set. */
static bool hpt_one_set(hwp_hpt *h, hwp_hpt_desc *hd, uint32_t policy, hwp_path_pd *pd,
                        unsigned n) {
    memset(hd, 0, sizeof *hd);
    hd->entries = 64;
    hd->policy = policy;
    return CHECK_EQ(hwp_hpt_init(h, st_hpt, sizeof st_hpt, hd, NULL), HWP_OK) &&
           CHECK_EQ(same_set(h, pd, n), n);
}

static void test_hpt_aging_floor(void) {
    hwp_hpt h;
    hwp_hpt_desc hd;
    hwp_hpt_stats st;
    hwp_path_pd pd[5];
    hwp_bufwriter bw;
    hwp_writer w;
    static char buf[4096];
    char *f;
    unsigned i, k;
    memset(&st, 0, sizeof st);
    if (!hpt_one_set(&h, &hd, HWP_HPT_AGING, pd, 5)) return;
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_hpt_write_json(&h, &w);
    f = strstr(buf, "\"floor\":0,");
    if (!CHECK(f != NULL)) return;
    memmove(f + 18, f + 9, strlen(f + 9) + 1);
    memcpy(f, "\"floor\":2147483648", 18);
    CHECK_EQ(hwp_hpt_read_json(&h, buf, strlen(buf), NULL), HWP_OK);
    hwp_hpt_add(&h, &pd[0], 1);
    CHECK_EQ(hwp_hpt_get_stats(&h, &st), HWP_OK);
    CHECK_EQ(st.agings, 1);
    for (k = 1; k < 4; k++)
        for (i = 0; i < 11; i++) hwp_hpt_add(&h, &pd[k], 1);
    hwp_hpt_add(&h, &pd[4], 1);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[0]), 0);
    for (k = 1; k < 4; k++) CHECK_EQ(hwp_hpt_lookup(&h, &pd[k]), 11);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[4]), 1);
}

/* Policy decay (Misra and Gries per set). Four paths hit 100 times fill
 * a set; a path seen again and again but never resident wears every
 * way's priority down by one per miss and is left out (counted as an
 * eviction of its value) until a priority reaches zero: the 100th miss
 * takes the lowest such way. Under aging (LFUDA) the first miss evicts a
 * 100-count path, which is what the first check refuses. A path hit as
 * often as the newcomer misses keeps its priority and its way; a
 * newcomer worth more than the priorities (a metric) enters at once. */
static void test_hpt_decay(void) {
    hwp_hpt h;
    hwp_hpt_desc hd, back;
    hwp_hpt_stats st;
    hwp_path_pd pd[6];
    hwp_bufwriter bw;
    hwp_writer w;
    static char buf[8192];
    unsigned i, k;
    memset(&st, 0, sizeof st);
    if (!hpt_one_set(&h, &hd, HWP_HPT_DECAY, pd, 6)) return;
    for (k = 1; k < 5; k++)
        for (i = 0; i < 100; i++) hwp_hpt_add(&h, &pd[k], 1);
    hwp_hpt_add(&h, &pd[5], 1);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[5]), 0);
    for (i = 1; i < 99; i++) hwp_hpt_add(&h, &pd[5], 1);
    CHECK_EQ(hwp_hpt_get_stats(&h, &st), HWP_OK);
    CHECK_EQ(st.evicted, 99);
    CHECK_EQ(st.evicted_value, 99);
    CHECK_EQ(st.misses, 103); /* the four paths' first adds, then 99 */
    for (k = 1; k < 5; k++) CHECK_EQ(hwp_hpt_lookup(&h, &pd[k]), 100);
    hwp_hpt_add(&h, &pd[5], 1); /* the 100th: every priority is 0 */
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[5]), 1);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[1]), 0); /* the lowest way */
    for (k = 2; k < 5; k++) CHECK_EQ(hwp_hpt_lookup(&h, &pd[k]), 100);
    /* a path hit once per miss keeps its way */
    CHECK_EQ(hwp_hpt_reset(&h), HWP_OK);
    for (k = 1; k < 5; k++)
        for (i = 0; i < 100; i++) hwp_hpt_add(&h, &pd[k], 1);
    for (i = 0; i < 200; i++) {
        hwp_hpt_add(&h, &pd[1], 1);
        hwp_hpt_add(&h, &pd[5], 1);
    }
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[1]), 300);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[2]), 0);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[5]), 101);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[3]), 100);
    /* a newcomer worth 150 against priorities of 100 */
    CHECK_EQ(hwp_hpt_reset(&h), HWP_OK);
    for (k = 1; k < 5; k++) hwp_hpt_add(&h, &pd[k], 100);
    hwp_hpt_add(&h, &pd[5], 150);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[5]), 150);
    CHECK_EQ(hwp_hpt_lookup(&h, &pd[1]), 0);
    /* the policy's name in the report reads back */
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_hpt_write_json(&h, &w);
    CHECK(strstr(buf, "\"policy\":\"decay\"") != NULL);
    CHECK_EQ(hwp_hpt_read_desc(&back, buf, strlen(buf), NULL), HWP_OK);
    CHECK_EQ(back.policy, HWP_HPT_DECAY);
    hd.repl = HWP_HPT_LRU;
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&h), "policy aging or decay");
}

/* ---- the branch queue cost model (section 8.2) ------------------------- */

static void run_queue(uint32_t queue, hwp_cost *c, hwp_path *p) {
    hwp_hpt h;
    hwp_path_desc d;
    memset(&d, 0, sizeof d);
    d.queue = queue;
    CHECK_EQ(hwp_cost_init(c, NULL), HWP_OK);
    CHECK_EQ(hwp_path_init(p, st_path, sizeof st_path, &d, c), HWP_OK);
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, NULL, c), HWP_OK);
    CHECK_EQ(hwp_path_attach(p, &h, NULL), HWP_OK);
    hwp_path_begin(p, 0x80);
    /* three back edges one instruction apart: the first two paths
     * (0x80 "1", 0x100 "1") miss the HPT (5 cycles each), the third
     * hits (4 cycles) */
    hwp_path_branch(p, 0x104, 0x100, HWP_CLS_BR_COND, true, 1, 0);
    hwp_path_branch(p, 0x104, 0x100, HWP_CLS_BR_COND, true, 1, 0);
    hwp_path_branch(p, 0x104, 0x100, HWP_CLS_BR_COND, true, 1, 0);
}

static void test_queue_cost(void) {
    hwp_cost c;
    hwp_path p;
    /* the op latencies add up to the paper's per-branch figures */
    CHECK_EQ(hwp_cost_cycles(NULL, HWP_COST_PATH_UPDATE) +
                 hwp_cost_cycles(NULL, HWP_COST_PATH_POP) +
                 2 * hwp_cost_cycles(NULL, HWP_COST_PATH_HPT_MISS) +
                 hwp_cost_cycles(NULL, HWP_COST_PATH_PUSH),
             hwp_cost_cycles(NULL, HWP_COST_PATH_BR_BACKWARD));
    CHECK_EQ(hwp_cost_cycles(NULL, HWP_COST_PATH_UPDATE_COUNT) +
                 hwp_cost_cycles(NULL, HWP_COST_PATH_PUSH),
             hwp_cost_cycles(NULL, HWP_COST_PATH_BR_CALL));
    /* No queue: branch 1 commits at 1, served 1..6; branch 2 commits at 2
     * but waits for 6 (stall 4), served 6..11; branch 3 commits at 7,
     * waits for 11 (stall 4), served 11..15. */
    run_queue(HWP_PATH_QUEUE_NONE, &c, &p);
    CHECK_EQ(p.stall_q8 >> 8, 8);
    CHECK_EQ((p.clk - p.stall_q8) >> 8, 3); /* the host's own time */
    CHECK_EQ(hwp_cost_model_cycles(&c, HWP_MODEL_PATH), 8);
    CHECK_NEAR(hwp_path_overhead_pct(&p), 800.0 / 3.0, 1e-9);
    CHECK_EQ(p.busy >> 8, 15);
    /* A 4-entry queue absorbs the burst: no stall, same finish time. */
    run_queue(0, &c, &p);
    CHECK_EQ(p.stall_q8, 0);
    CHECK_EQ(hwp_cost_model_cycles(&c, HWP_MODEL_PATH), 0);
    CHECK_EQ(p.busy >> 8, 1 + 5 + 5 + 4);
    /* A 1-entry queue: branch 3 (commit 3) waits until branch 1 has left
     * the profiler at 6: stall 3. */
    run_queue(1, &c, &p);
    CHECK_EQ(p.stall_q8 >> 8, 3);
}

/* The PPCR rows of the paper's Table 1 (BL) and Table 2 (WPP), by branch
 * type, as the reference below needs them: call, return, forward,
 * backward, indirect. */
static uint32_t ref_ops(uint32_t mode, uint32_t cls, int taken,
                        uint64_t pc, uint64_t next) {
    const uint32_t U = HWP_PATH_OP_UPDATE, C = HWP_PATH_OP_UPDCOUNT,
                   O = HWP_PATH_OP_POP, P = HWP_PATH_OP_PUSH;
    int wpp = mode == HWP_PATH_WPP;
    switch (cls) {
    case HWP_CLS_CALL: return wpp ? C | O | P : C | P;
    case HWP_CLS_RET: return wpp ? C | O | P : C | O;
    case HWP_CLS_INDIRECT: return U | O | P;
    case HWP_CLS_BR_COND:
    case HWP_CLS_JUMP: return taken && next <= pc ? U | O | P : U;
    default: return 0; /* not a branch: the profiler never sees it */
    }
}

/* What the profiler spends on one branch (section 8.2): the latencies of
 * the operations performed, plus the HPT update of a completed path (a
 * hit, or a miss at log2(ways) x HPT_MISS), plus a pop and a push when
 * the path was split at its maximum length. */
static uint64_t ref_service(const hwp_cost *c, uint32_t ops, uint64_t hits,
                            uint64_t misses, uint64_t splits, uint32_t ways) {
    uint64_t s = 0, lg = 0;
    while ((1u << lg) < ways) lg++;
    if (ops & HWP_PATH_OP_UPDATE) s += hwp_cost_cycles(c, HWP_COST_PATH_UPDATE);
    if (ops & HWP_PATH_OP_UPDCOUNT) s += hwp_cost_cycles(c, HWP_COST_PATH_UPDATE_COUNT);
    if (ops & HWP_PATH_OP_POP) s += hwp_cost_cycles(c, HWP_COST_PATH_POP);
    if (ops & HWP_PATH_OP_PUSH) s += hwp_cost_cycles(c, HWP_COST_PATH_PUSH);
    s += splits * (hwp_cost_cycles(c, HWP_COST_PATH_POP) +
                   hwp_cost_cycles(c, HWP_COST_PATH_PUSH));
    s += hits * hwp_cost_cycles(c, HWP_COST_PATH_HPT_UPDATE);
    s += misses * lg * hwp_cost_cycles(c, HWP_COST_PATH_HPT_MISS);
    return s;
}

/* The queue model against the FIFO reference (queue_ref.h) on seeded
 * random streams, in three instances fed the same stream: A counts
 * executions with a cost attached (the short paths time the queue
 * themselves), B counts branches with the same cost (every branch goes
 * through the general sequence and its queue call), C counts executions
 * with no cost. A and B must match the reference branch by branch (stall,
 * commit time, profiler finish time) and in what the cost shim was
 * charged; C's profile must equal A's (the cost model changes no count). */
static void test_queue_reference(void) {
    static const uint32_t queues[] = {HWP_PATH_QUEUE_NONE, 1, 2, 3, 4, 7, 16};
    static const uint32_t cpis[] = {0, 64, 100, 128, 200, 256, 300, 512};
    static unsigned char sb[1 << 12] A16, sc[1 << 12] A16,
        hb[HWP_HPT_BYTES(256)] A16, hc[HWP_HPT_BYTES(256)] A16;
    hwp_rng r;
    unsigned cfg, i, bad_branch = 0, bad_end = 0, bad_profile = 0, stalled = 0;
    uint64_t checked = 0;
    hwp_rng_seed(&r, 2026);
    for (cfg = 0; cfg < 150; cfg++) {
        hwp_path a, b, c;
        hwp_hpt ha, hb_, hc_;
        hwp_cost ca, cb;
        hwp_path_desc d;
        hwp_hpt_desc hd;
        qref q, qb;
        unsigned op;
        memset(&d, 0, sizeof d);
        memset(&hd, 0, sizeof hd);
        d.mode = hwp_rng_below(&r, 2) ? HWP_PATH_WPP : HWP_PATH_BL;
        if (cfg % 3) d.mode = HWP_PATH_BL; /* mostly the short paths' table */
        d.depth = 1 + hwp_rng_below(&r, 8);
        d.max_len = 1 + hwp_rng_below(&r, cfg % 2 ? 63 : 6);
        d.queue = queues[hwp_rng_below(&r, 7)];
        d.cycles_per_insn_q8 = cpis[hwp_rng_below(&r, 8)];
        hd.entries = 16u << hwp_rng_below(&r, 5);
        hd.ways = 1u << hwp_rng_below(&r, 4);
        hd.repl = hwp_rng_below(&r, 2);
        hd.index = hwp_rng_below(&r, 3);
        if (cfg % 4 == 0) hd.ways = 4, hd.repl = HWP_HPT_LFU, hd.index = HWP_HPT_PLB;
        hwp_cost_init(&ca, NULL);
        for (op = HWP_COST_PATH_PUSH; op <= HWP_COST_PATH_HPT_MISS; op++)
            if (cfg % 2) hwp_cost_set(&ca, (hwp_cost_op)op, hwp_rng_below(&r, 7));
        cb = ca;
        if (!CHECK_EQ(hwp_path_init(&a, st_path, sizeof st_path, &d, &ca), HWP_OK)) return;
        d.metric = HWP_PATH_M_BRANCHES;
        CHECK_EQ(hwp_path_init(&b, sb, sizeof sb, &d, &cb), HWP_OK);
        d.metric = HWP_PATH_M_PATHS;
        CHECK_EQ(hwp_path_init(&c, sc, sizeof sc, &d, NULL), HWP_OK);
        CHECK_EQ(hwp_hpt_init(&ha, st_hpt, sizeof st_hpt, &hd, NULL), HWP_OK);
        CHECK_EQ(hwp_hpt_init(&hb_, hb, sizeof hb, &hd, NULL), HWP_OK);
        CHECK_EQ(hwp_hpt_init(&hc_, hc, sizeof hc, &hd, NULL), HWP_OK);
        hwp_path_attach(&a, &ha, NULL);
        hwp_path_attach(&b, &hb_, NULL);
        hwp_path_attach(&c, &hc_, NULL);
        qref_init(&q, d.queue == HWP_PATH_QUEUE_NONE ? 0 : d.queue,
                  d.cycles_per_insn_q8 ? d.cycles_per_insn_q8 : 256);
        qb = q;
        if (cfg % 5) { /* else: attached mid-run, cold starts */
            hwp_path_begin(&a, 0x1000);
            hwp_path_begin(&b, 0x1000);
            hwp_path_begin(&c, 0x1000);
        }
        for (i = 0; i < 3000; i++) {
            uint32_t cls = HWP_CLS_BR_COND + hwp_rng_below(&r, 5);
            uint64_t pc = 0x1000 + 4 * hwp_rng_below(&r, 48);
            uint64_t next = 0x1000 + 4 * hwp_rng_below(&r, 48);
            uint32_t n = 1 + hwp_rng_below(&r, 6);
            int taken = hwp_rng_below(&r, 3) != 0;
            uint64_t h0 = ha.hits, m0 = ha.misses, s0 = a.splits;
            uint64_t hb0 = hb_.hits, mb0 = hb_.misses, sb0 = b.splits;
            uint32_t ops;
            if (hwp_rng_below(&r, 16) == 0) cls = HWP_CLS_OTHER;
            if (hwp_rng_below(&r, 4) == 0) cls = HWP_CLS_BR_COND; /* more forward */
            if (!taken) next = pc + 4; /* a branch not taken falls through */
            ops = ref_ops(d.mode, cls, taken, pc, next);
            hwp_path_branch(&a, pc, next, cls, taken, n, 0);
            hwp_path_branch(&b, pc, next, cls, taken, n, 0);
            hwp_path_branch(&c, pc, next, cls, taken, n, 0);
            /* B's HPT holds other values (branches, not executions), so
             * LFU may pick other victims: B has its own hits and misses */
            if (ops) {
                qref_branch(&q, n, ref_service(&ca, ops, ha.hits - h0, ha.misses - m0,
                                               a.splits - s0, hd.ways));
                qref_branch(&qb, n, ref_service(&cb, ops, hb_.hits - hb0,
                                                hb_.misses - mb0, b.splits - sb0, hd.ways));
            }
            if (a.stall_q8 != q.stall || a.clk != q.now || a.busy != q.last_finish ||
                b.stall_q8 != qb.stall || b.clk != qb.now || b.busy != qb.last_finish) {
                if (!bad_branch++)
                    printf("    cfg %u branch %u: stall %llu/%llu (ref %llu), clk %llu/%llu "
                           "(ref %llu)\n", cfg, i, (unsigned long long)a.stall_q8,
                           (unsigned long long)b.stall_q8, (unsigned long long)q.stall,
                           (unsigned long long)a.clk, (unsigned long long)b.clk,
                           (unsigned long long)q.now);
            }
            checked++;
        }
        stalled += q.stall != 0;
        /* what the cost shim saw: one PATH_STALL charge per growth of the
         * whole-cycle total, nothing else from the path profiler */
        if (ca.count[HWP_COST_PATH_STALL] != q.charges ||
            ca.spent[HWP_COST_PATH_STALL] != q.charged || ca.total != q.charged ||
            hwp_cost_model_cycles(&ca, HWP_MODEL_PATH) != q.charged ||
            cb.count[HWP_COST_PATH_STALL] != qb.charges || cb.total != qb.charged ||
            (a.clk - a.stall_q8) != q.host || (b.clk - b.stall_q8) != qb.host) {
            if (!bad_end++)
                printf("    cfg %u: charges %llu (ref %llu), cycles %llu (ref %llu)\n", cfg,
                       (unsigned long long)ca.count[HWP_COST_PATH_STALL],
                       (unsigned long long)q.charges, (unsigned long long)ca.total,
                       (unsigned long long)q.charged);
        }
        /* the cost model changes no count of the profile */
        if (a.branches != c.branches || a.paths != c.paths || a.ignored != c.ignored ||
            a.splits != c.splits || a.overflows != c.overflows ||
            a.underflows != c.underflows || a.cold_starts != c.cold_starts ||
            a.max_n != c.max_n || a.n != c.n || ha.hits != hc_.hits ||
            ha.misses != hc_.misses || ha.evictions != hc_.evictions ||
            ha.evicted_value != hc_.evicted_value || ha.total != hc_.total ||
            b.branches != a.branches || b.paths != a.paths ||
            hb_.hits + hb_.misses != ha.hits + ha.misses || memcmp(ha.e, hc_.e, HWP_HPT_BYTES(hd.entries)) != 0) {
            if (!bad_profile++) printf("    cfg %u: profile differs with the cost\n", cfg);
        }
    }
    CHECK_EQ(bad_branch, 0);
    CHECK_EQ(bad_end, 0);
    CHECK_EQ(bad_profile, 0);
    CHECK_EQ(checked, 150u * 3000u);
    /* the streams exercise both regimes: some configurations stall, some
     * never do */
    CHECK(stalled > 10 && stalled < 140);
}

/* ---- phase detection ----------------------------------------------------- */

typedef struct ivlog {
    hwp_phase_interval r[64];
    unsigned n;
} ivlog;

static void on_iv(void *ctx, const hwp_phase_interval *r) {
    ivlog *l = (ivlog *)ctx;
    if (l->n < 64) l->r[l->n++] = *r;
}

static void test_phase_bbv_unit(void) {
    hwp_phase ph;
    hwp_phase_desc d;
    ivlog log;
    static const int plan[6] = {0, 0, 1, 1, 0, 2};
    uint64_t pcs[3] = {0x1000, 0x2000, 0x3000};
    unsigned i, k;
    memset(&d, 0, sizeof d);
    memset(&log, 0, sizeof log);
    d.interval = 1024;
    d.counters = 32;
    d.on_interval = on_iv;
    d.ctx = &log;
    CHECK_EQ(hwp_phase_init(&ph, st_bbv, sizeof st_bbv, &d, NULL), HWP_OK);
    CHECK_EQ(ph.desc.threshold, 614); /* 6/10 of the interval */
    /* the three phases' branches must land in different accumulators */
    CHECK(hwp_path_index(pcs[0], 31) != hwp_path_index(pcs[1], 31));
    CHECK(hwp_path_index(pcs[0], 31) != hwp_path_index(pcs[2], 31));
    CHECK(hwp_path_index(pcs[1], 31) != hwp_path_index(pcs[2], 31));
    for (i = 0; i < 6; i++)
        for (k = 0; k < 128; k++) hwp_phase_add_branch(&ph, pcs[plan[i]], 8);
    CHECK_EQ(log.n, 6);
    CHECK_EQ(log.r[0].phase, 0);
    CHECK_EQ(log.r[1].phase, 0);
    CHECK_EQ(log.r[2].phase, 1);
    CHECK_EQ(log.r[3].phase, 1);
    CHECK_EQ(log.r[4].phase, 0); /* found again in the past-phase table */
    CHECK_EQ(log.r[5].phase, 2);
    CHECK_EQ(log.r[1].changed, 0);
    CHECK_EQ(log.r[2].changed, 1);
    CHECK_EQ(log.r[4].changed, 1);
    CHECK_EQ(log.r[1].distance, 0);
    /* all of the interval moved from one counter to another: 1024
     * instructions leave one, 1024 arrive in another; signatures keep the
     * top 6 of 10 bits (63 saturates the 64 units of 16) */
    CHECK_EQ(log.r[2].distance, 2 * 63 * 16);
    CHECK_EQ(ph.changes, 3);
    CHECK_EQ(ph.next_id, 3);
}

static void test_phase_table_lru(void) {
    hwp_phase ph;
    hwp_phase_desc d;
    ivlog log;
    static const int plan[5] = {0, 1, 2, 0, 1};
    uint64_t pcs[3] = {0x1000, 0x2000, 0x3000};
    unsigned i, k;
    memset(&d, 0, sizeof d);
    memset(&log, 0, sizeof log);
    d.interval = 1024;
    d.table = 2; /* remembers only two phases */
    d.on_interval = on_iv;
    d.ctx = &log;
    CHECK_EQ(hwp_phase_init(&ph, st_bbv, sizeof st_bbv, &d, NULL), HWP_OK);
    for (i = 0; i < 5; i++)
        for (k = 0; k < 128; k++) hwp_phase_add_branch(&ph, pcs[plan[i]], 8);
    CHECK_EQ(log.n, 5);
    /* phase 0 was pushed out by phase 2, so it comes back as new id 3;
     * phase 1 was too (LRU after 0 came back) */
    CHECK_EQ(log.r[2].phase, 2);
    CHECK_EQ(log.r[3].phase, 3);
    CHECK_EQ(log.r[4].phase, 4);
}

/* One add of more instructions than two intervals closes one interval
 * and leaves the rest open (the next add closes the next): a state the
 * report must carry and read back, the open instructions past an
 * interval included. */
static void test_phase_report_long_add(void) {
    static unsigned char m2[1 << 16] A16;
    static char a[1 << 12], b[1 << 12];
    hwp_phase ph, back;
    hwp_phase_desc d, rd;
    hwp_bufwriter bw;
    hwp_writer w;
    hwp_json_err err;
    size_t n;
    memset(&d, 0, sizeof d);
    d.interval = 1024;
    CHECK_EQ(hwp_phase_init(&ph, st_bbv, sizeof st_bbv, &d, NULL), HWP_OK);
    hwp_phase_add_branch(&ph, 0x1000, 5000);
    w = hwp_writer_buf(&bw, a, sizeof a);
    hwp_phase_write_json(&ph, &w);
    n = bw.len;
    CHECK_HAS(a, "\"intervals\":1,");
    CHECK_HAS(a, "\"open_insns\":3976");
    CHECK_EQ(hwp_phase_read_desc(&rd, a, n, &err), HWP_OK);
    CHECK_EQ(hwp_phase_init(&back, m2, sizeof m2, &rd, NULL), HWP_OK);
    CHECK_EQ(hwp_phase_read_json(&back, a, n, &err), HWP_OK);
    w = hwp_writer_buf(&bw, b, sizeof b);
    hwp_phase_write_json(&back, &w);
    CHECK_STR(b, a);
    /* the next add closes the next interval in both (the report has no
     * signatures, so only the counts are compared) */
    hwp_phase_add_branch(&ph, 0x2000, 1);
    hwp_phase_add_branch(&back, 0x2000, 1);
    w = hwp_writer_buf(&bw, a, sizeof a);
    hwp_phase_write_json(&ph, &w);
    CHECK_HAS(a, "\"intervals\":2,");
    CHECK_HAS(a, "\"open_insns\":2953}");
    w = hwp_writer_buf(&bw, b, sizeof b);
    hwp_phase_write_json(&back, &w);
    CHECK_HAS(b, "\"intervals\":2,");
    CHECK_HAS(b, "\"open_insns\":2953}");
}

/* ---- metrics ------------------------------------------------------------- */

static void test_overlap(void) {
    hwp_path_row a[3], b[3];
    a[0].pd = mkpd(1, 2); a[0].count = 50;
    a[1].pd = mkpd(2, 2); a[1].count = 30;
    a[2].pd = mkpd(3, 2); a[2].count = 20;
    b[0].pd = mkpd(3, 2); b[0].count = 10;
    b[1].pd = mkpd(1, 2); b[1].count = 80;
    b[2].pd = mkpd(4, 2); b[2].count = 10;
    /* min(50,80)% + min(30,0)% + min(20,10)% + min(0,10)% = 60 */
    CHECK_NEAR(hwp_path_overlap(a, 3, b, 3), 60.0, 1e-9);
    CHECK_NEAR(hwp_path_overlap(a, 3, a, 3), 100.0, 1e-9);
    /* a duplicate row is summed: {1:50, 1:50} vs {1:100} */
    b[0].pd = mkpd(1, 2); b[0].count = 50;
    b[1].pd = mkpd(1, 2); b[1].count = 50;
    a[0].pd = mkpd(1, 2); a[0].count = 7;
    CHECK_NEAR(hwp_path_overlap(a, 1, b, 2), 100.0, 1e-9);
    CHECK_NEAR(hwp_path_overlap(a, 0, b, 2), 0.0, 1e-9);
}

static void test_phase_score(void) {
    static const uint32_t ref[10] = {0, 0, 0, 1, 1, 1, 0, 0, 2, 2};
    static const uint32_t det[10] = {5, 5, 6, 6, 6, 6, 5, 5, 5, 7};
    hwp_phase_scores s;
    CHECK_EQ(hwp_phase_score(ref, det, 10, 0, &s), HWP_OK);
    /* ref changes at 3, 6, 8; det changes at 2, 6, 9 -> one hit (6) */
    CHECK_EQ(s.ref_changes, 3);
    CHECK_EQ(s.det_changes, 3);
    CHECK_EQ(s.hits, 1);
    CHECK_NEAR(s.sensitivity, 100.0 / 3.0, 1e-9);
    CHECK_NEAR(s.false_pos, 200.0 / 3.0, 1e-9);
    /* non-changes at 1, 2, 4, 5, 7, 9: unflagged at 1, 4, 5, 7 */
    CHECK_NEAR(s.same_phase, 400.0 / 6.0, 1e-9);
    /* runs 2, 4, 3, 1: runs of >= 2 cover 9 of 10 */
    CHECK_NEAR(s.stability, 90.0, 1e-9);
    CHECK_NEAR(s.avg_phase_len, 2.5, 1e-9);
    CHECK_EQ(hwp_phase_score(ref, det, 0, 0, &s), HWP_EINVAL);
}

/* ---- property: random configurations and streams ------------------------ */

static void test_property_random(void) {
    hwp_rng r;
    unsigned cfg;
    int ok_len = 1, ok_depth = 1, ok_cnt = 1, ok_insns = 1;
    hwp_rng_seed(&r, 99);
    for (cfg = 0; cfg < 40; cfg++) {
        hwp_path p;
        hwp_hpt h;
        hwp_path_desc d;
        hwp_hpt_desc hd;
        pp_map got;
        unsigned i, b;
        uint64_t insns = 0, seen = 0;
        memset(&d, 0, sizeof d);
        memset(&hd, 0, sizeof hd);
        d.mode = hwp_rng_below(&r, 4);
        d.depth = 1 + hwp_rng_below(&r, 8);
        d.max_len = 1 + hwp_rng_below(&r, 63);
        d.counter_bits = 1 + hwp_rng_below(&r, 32);
        d.metric = hwp_rng_below(&r, 4);
        d.ext_max = d.mode >= HWP_PATH_EXT_LOOP ? 1 + hwp_rng_below(&r, 7) : 0;
        d.on_path = sink_map;
        pp_map_init(&got, 1 << 14);
        d.ctx = &got;
        max_value_seen = 0;
        hd.entries = 16u << hwp_rng_below(&r, 4);
        hd.ways = 1u << hwp_rng_below(&r, 3);
        hd.repl = hwp_rng_below(&r, 2);
        hd.index = hwp_rng_below(&r, 3);
        if (!CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, &d, NULL), HWP_OK)) break;
        CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, &hd, NULL), HWP_OK);
        hwp_path_attach(&p, &h, NULL);
        for (i = 0; i < 3000; i++) {
            uint32_t cls = HWP_CLS_BR_COND + hwp_rng_below(&r, 5);
            uint64_t pc = 0x1000 + 4 * hwp_rng_below(&r, 64);
            uint64_t next = 0x1000 + 4 * hwp_rng_below(&r, 64);
            uint32_t n = 1 + hwp_rng_below(&r, 9);
            hwp_path_branch(&p, pc, next, cls, hwp_rng_below(&r, 2) != 0, n,
                            hwp_rng_below(&r, 300));
            insns += n;
            if (p.n > d.depth) ok_depth = 0;
            for (b = 0; b < p.n; b++) {
                const hwp_path_entry *e = p.stack + b;
                if (hwp_path_pd_len(&e->pd) >= d.max_len) ok_len = 0;
            }
        }
        CHECK_EQ(hwp_path_flush(&p), HWP_OK);
        /* the event counter never exceeds its width */
        if (max_value_seen > hwp_sat_max(d.counter_bits) + (d.metric == HWP_PATH_M_PATHS))
            ok_cnt = 0;
        /* every instruction lands in exactly one path, emitted or ignored
         * (BL and WPP tables update or update-count on every branch) */
        for (i = 0; i < got.cap; i++) {
            if (!got.s[i].used) continue;
            seen += got.s[i].insns;
            if (got.s[i].k.len > d.max_len) ok_len = 0;
        }
        if (p.ignored == 0 && p.overflows == 0 && seen != insns) ok_insns = 0;
        if (seen > insns) ok_insns = 0;
        CHECK_EQ(h.hits + h.misses, p.paths);
        pp_map_free(&got);
    }
    CHECK(ok_len);
    CHECK(ok_depth);
    CHECK(ok_cnt);
    CHECK(ok_insns);
}

/* ---- reports ------------------------------------------------------------- */

static void test_reports(void) {
    hwp_path p;
    hwp_hpt h;
    hwp_phase ph;
    hwp_cost c;
    hwp_bufwriter bw;
    static char buf[1 << 16];
    hwp_writer w;
    unsigned i;
    CHECK_EQ(hwp_cost_init(&c, NULL), HWP_OK);
    CHECK_EQ(hwp_path_init(&p, st_path, sizeof st_path, NULL, &c), HWP_OK);
    CHECK_EQ(hwp_hpt_init(&h, st_hpt, sizeof st_hpt, NULL, &c), HWP_OK);
    CHECK_EQ(hwp_phase_init(&ph, st_phase, sizeof st_phase, NULL, &c), HWP_OK);
    CHECK_EQ(hwp_path_attach(&p, &h, &ph), HWP_OK);
    hwp_path_begin(&p, 0x100);
    for (i = 0; i < 50; i++) {
        hwp_path_branch(&p, 0x104, 0x110, HWP_CLS_BR_COND, i % 3 == 0, 3, 0);
        hwp_path_branch(&p, 0x114, 0x100, HWP_CLS_BR_COND, true, 3, 0);
    }
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_path_write_json(&p, &w);
    CHECK_HAS(buf, "{\"model\":\"path\",\"version\":1,\"desc\":{\"mode\":\"bl\"");
    CHECK_HAS(buf, "\"paths\":50");
    CHECK_HAS(buf, "\"overhead_pct\":");
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_hpt_write_json(&h, &w);
    CHECK_HAS(buf, "\"repl\":\"lfu\"");
    /* 17 of the 50 iterations took the first branch ("11", dirs 3),
     * 33 did not ("01", dirs 1); table order, dirs as hex strings */
    CHECK_HAS(buf, "\"start\":\"0x100\",\"len\":2,\"dirs\":\"0x1\",\"count\":33");
    CHECK_HAS(buf, "\"start\":\"0x100\",\"len\":2,\"dirs\":\"0x3\",\"count\":17");
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_phase_write_json(&ph, &w);
    CHECK_HAS(buf, "\"interval\":10000000");
    w = hwp_writer_buf(&bw, buf, sizeof buf);
    hwp_path_write_text(&p, &w);
    hwp_hpt_write_text(&h, &w);
    hwp_phase_write_text(&ph, &w);
    CHECK_HAS(buf, "path stack: bl paths");
    CHECK_HAS(buf, "  33  0x100 len 2 01");
    CHECK_HAS(buf, "phase detector: 32 counters");
    CHECK_EQ(bw.dropped, 0);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_descriptor);
    HWT_RUN(test_desc_validation);
    HWT_RUN(test_bl_exact);
    HWT_RUN(test_overflow_drop);
    HWT_RUN(test_overflow_spill);
    HWT_RUN(test_fig5_bl);
    HWT_RUN(test_fig5_wpp);
    HWT_RUN(test_fig5_extended);
    HWT_RUN(test_extended_calls);
    HWT_RUN(test_max_len_split);
    HWT_RUN(test_metric_counters);
    HWT_RUN(test_unwind);
    HWT_RUN(test_hpt_replacement);
    HWT_RUN(test_hpt_index_functions);
    HWT_RUN(test_hpt_export_merge);
    HWT_RUN(test_hpt_merge_keeps_hot);
    HWT_RUN(test_queue_cost);
    HWT_RUN(test_queue_reference);
    HWT_RUN(test_phase_bbv_unit);
    HWT_RUN(test_phase_table_lru);
    HWT_RUN(test_phase_report_long_add);
    HWT_RUN(test_overlap);
    HWT_RUN(test_phase_score);
    HWT_RUN(test_property_random);
    HWT_RUN(test_reports);
    HWT_RUN(test_unchained_blocks);
    HWT_RUN(test_bad_input);
    HWT_RUN(test_decode);
    HWT_RUN(test_phase_budget);
    HWT_RUN(test_hpt_aging);
    HWT_RUN(test_hpt_aging_floor);
    HWT_RUN(test_hpt_decay);
    return hwt_end();
}
