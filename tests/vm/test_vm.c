/* tests/vm/test_vm.c: the VM-facing layer (include/hwprof/vm.h) on a
 * synthetic interpreter whose exact answer the test keeps beside it:
 * the clock, burst scaling, hot functions and loops, value and type
 * specialisations (both verdicts), hot paths, ProfileMe alone, the
 * local-countdown form, bad descs, ids past the declared range and the
 * hot path table's policy. */
#define HWPROF_IMPL
#include "hwprof/vm.h"

#include "harness.h"

#define NF 64u                      /* functions                          */
#define FN_BASE(f) (0x10000u + 0x100u * (uint64_t)(f))
#define SITE_CONST(f) (2u * (f))    /* always loads 42, type 1             */
#define SITE_VAR(f) (2u * (f) + 1u) /* loads the iteration number, type 2  */

typedef struct exact {
    uint64_t ops, calls[NF], back[NF], fops[NF]; /* fops: bytecodes in f */
} exact;

typedef struct decisions {
    hwp_vm_decision d[4096];
    size_t n;
} decisions;

static void record(void *user, const hwp_vm_decision *d) {
    decisions *ds = (decisions *)user;
    if (ds->n < sizeof ds->d / sizeof ds->d[0]) ds->d[ds->n++] = *d;
}

static const hwp_vm_decision *find(const decisions *ds, uint32_t kind, uint64_t id) {
    size_t i;
    for (i = 0; i < ds->n; i++)
        if (ds->d[i].kind == kind && ds->d[i].id == id) return &ds->d[i];
    return NULL;
}

/* Zipf-like call mix: function f is called with weight 1/(f+1). */
static uint32_t pick(hwp_rng *r) {
    static double cum[NF];
    static int ready;
    double u;
    uint32_t f;
    if (!ready) {
        double s = 0;
        for (f = 0; f < NF; f++) cum[f] = (s += 1.0 / (f + 1.0));
        for (f = 0; f < NF; f++) cum[f] /= s;
        ready = 1;
    }
    u = hwp_rng_unit(r);
    for (f = 0; f < NF - 1u && u > cum[f]; f++) {
    }
    return f;
}

/* One call of function f from the main loop: its loop runs 4 + f % 8
 * times; each iteration loads a constant and a varying value. */
static void run_call(hwp_vm *vm, exact *x, uint32_t f) {
    uint64_t b = FN_BASE(f);
    uint32_t trip = 4u + f % 8u, j;
    hwp_vm_op(vm, 0x100);
    hwp_vm_op(vm, 0x104);
    hwp_vm_call(vm, 0x104, f);
    x->calls[f]++;
    x->ops += 2;
    hwp_vm_op(vm, b);
    x->ops++;
    for (j = 0; j < trip; j++) {
        hwp_vm_op(vm, b + 4);
        hwp_vm_op(vm, b + 8);
        hwp_vm_load(vm, SITE_CONST(f), 42, 1);
        hwp_vm_op(vm, b + 12);
        hwp_vm_load(vm, SITE_VAR(f), j, 2);
        hwp_vm_op(vm, b + 16);
        hwp_vm_branch(vm, b + 16, j + 1 < trip);
        x->ops += 4;
        if (j + 1 < trip) x->back[f]++;
    }
    hwp_vm_ops(vm, b + 20, 3); /* a straight-line run of three */
    x->fops[f] += 1u + 4u * trip + 3u;
    hwp_vm_ret(vm, b + 28);
    hwp_vm_op(vm, 0x108);
    x->ops += 4;
}

static void desc_for(hwp_vm_desc *d, uint32_t models, decisions *ds) {
    memset(d, 0, sizeof *d);
    d->models = models;
    d->funcs = NF;
    d->sites = 2u * NF;
    d->period = 1024;
    d->burst = 64;
    d->hot_calls = 2000;
    d->hot_loops = 8000;
    d->seed = 7;
    d->on_decision = ds ? record : NULL;
    d->user = ds;
    d->rap.key_base = 0;
    d->rap.key_bits = 20;
    d->rap.eps = 0.01;
}

static void *make(hwp_vm *vm, const hwp_vm_desc *d) {
    size_t n = hwp_vm_bytes(d);
    void *mem = n ? malloc(n) : NULL;
    if (!mem || hwp_vm_init(vm, mem, n, d, NULL) != HWP_OK) {
        printf("    init: %s\n", hwp_why(vm));
        free(mem);
        return NULL;
    }
    return mem;
}

static void drive(hwp_vm *vm, exact *x, uint32_t calls, uint64_t seed) {
    hwp_rng r;
    uint32_t i;
    hwp_rng_seed(&r, seed);
    memset(x, 0, sizeof *x);
    for (i = 0; i < calls; i++) run_call(vm, x, pick(&r));
}

static void test_bad_descs(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    unsigned char mem[64];
    desc_for(&d, 0, NULL);
    CHECK(hwp_vm_bytes(&d) == 0);
    CHECK(hwp_vm_init(&vm, mem, sizeof mem, &d, NULL) == HWP_EINVAL);
    CHECK(strstr(hwp_why(&vm), "models") != NULL);
    desc_for(&d, 1u << 7, NULL);
    CHECK(hwp_vm_init(&vm, mem, sizeof mem, &d, NULL) == HWP_EINVAL);
    CHECK(strstr(hwp_why(&vm), "unknown") != NULL);
    desc_for(&d, HWP_VM_ALL, NULL);
    d.funcs = 0;
    CHECK(hwp_vm_init(&vm, mem, sizeof mem, &d, NULL) == HWP_EINVAL);
    CHECK(strstr(hwp_why(&vm), "funcs") != NULL);
    desc_for(&d, HWP_VM_ALL, NULL);
    d.burst = d.period + 1;
    CHECK(hwp_vm_init(&vm, mem, sizeof mem, &d, NULL) == HWP_EINVAL);
    CHECK(strstr(hwp_why(&vm), "burst") != NULL);
    desc_for(&d, HWP_VM_ALL, NULL);
    d.spec_inv = 1.5;
    CHECK(hwp_vm_init(&vm, mem, sizeof mem, &d, NULL) == HWP_EINVAL);
    CHECK(strstr(hwp_why(&vm), "spec_inv") != NULL);
    desc_for(&d, HWP_VM_ALL, NULL);
    d.phase.on_interval = (void (*)(void *, const hwp_phase_interval *))record;
    CHECK(hwp_vm_init(&vm, mem, sizeof mem, &d, NULL) == HWP_EINVAL);
    CHECK(strstr(hwp_why(&vm), "callbacks") != NULL);
    desc_for(&d, HWP_VM_ALL, NULL);
    d.rap.eps = 2.0; /* a model's own refusal comes through, naming it */
    CHECK(hwp_vm_bytes(&d) == 0);
    CHECK(hwp_vm_init(&vm, mem, sizeof mem, &d, NULL) == HWP_EINVAL);
    CHECK(strstr(hwp_why(&vm), "rap") != NULL && strstr(hwp_why(&vm), "eps") != NULL);
    CHECK(hwp_vm_init(&vm, NULL, 0, &d, NULL) == HWP_EINVAL); /* the reason without storage */
    CHECK(strstr(hwp_why(&vm), "eps") != NULL);
    desc_for(&d, HWP_VM_ALL, NULL);
    d.spec_inv = 1.0; /* Wilson's floor never reaches 1 */
    CHECK(hwp_vm_init(&vm, mem, sizeof mem, &d, NULL) == HWP_EINVAL);
    desc_for(&d, HWP_VM_ALL, NULL);
    CHECK(hwp_vm_init(&vm, mem, sizeof mem, &d, NULL) == HWP_ENOSPC);
}

/* A zeroed layer is off: events do nothing and queries say so. */
static void test_zeroed_is_off(void) {
    hwp_vm vm;
    hwp_vm_stats s = {0};
    hwp_vm_decision dec;
    int i;
    memset(&vm, 0, sizeof vm);
    for (i = 0; i < 1000; i++) {
        hwp_vm_op(&vm, (uint64_t)i);
        hwp_vm_branch(&vm, (uint64_t)i, true);
        hwp_vm_load(&vm, 3, 4, 5);
    }
    CHECK(vm.left > 1000000); /* armed once, never expires */
    CHECK(hwp_vm_get_stats(&vm, &s) == HWP_EINVAL);
    CHECK(hwp_vm_func(&vm, 0, &dec) == HWP_EINVAL);
    CHECK(hwp_vm_flush(&vm) == HWP_ESTATE);
    CHECK(hwp_vm_clock(&vm) == 0);
}

/* The clock counts every bytecode whatever the models; bursts cover
 * about burst/period of them and the scale is their measured inverse. */
static void test_clock_and_scale(void) {
    static const uint32_t sets[] = {HWP_VM_PM, HWP_VM_RAP, HWP_VM_PATH, HWP_VM_STRAT,
                                    HWP_VM_CP, HWP_VM_ALL};
    size_t i;
    for (i = 0; i < sizeof sets / sizeof sets[0]; i++) {
        hwp_vm_desc d;
        hwp_vm vm;
        exact x;
        hwp_vm_stats s = {0};
        void *mem;
        desc_for(&d, sets[i], NULL);
        if (!CHECK((mem = make(&vm, &d)) != NULL)) continue;
        drive(&vm, &x, 20000, 1);
        CHECK(hwp_vm_flush(&vm) == HWP_OK);
        CHECK(hwp_vm_get_stats(&vm, &s) == HWP_OK);
        CHECK_EQ(s.events, x.ops);
        if (sets[i] == HWP_VM_PM) {
            CHECK_EQ(s.burst_ops, 0); /* ProfileMe alone needs no bursts */
        } else {
            double share = (double)s.burst_ops / (double)s.events;
            CHECK(share > 0.045 && share < 0.08); /* 64 / 1024 = 0.0625 */
            CHECK(fabs(hwp_vm_scale(&vm) - 1.0 / share) < 1e-9);
        }
        free(mem);
    }
}

/* Hot functions and loops against the exact counts: every estimate's
 * 95% interval holds the truth for nearly all functions, every function
 * called at least twice the threshold is decided hot, none called below
 * half of it is. */
static void test_hot_units(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    exact x;
    static decisions ds;
    void *mem;
    uint32_t f, inside = 0, seen = 0;
    ds.n = 0;
    desc_for(&d, HWP_VM_RAP, &ds);
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    drive(&vm, &x, 200000, 2);
    hwp_vm_flush(&vm);
    for (f = 0; f < NF; f++) {
        hwp_vm_decision q;
        const hwp_vm_decision *got = find(&ds, HWP_VM_FUNC, f);
        CHECK(hwp_vm_func(&vm, f, &q) == HWP_OK);
        if (q.samples) {
            seen++;
            inside += q.lo <= (double)x.calls[f] && (double)x.calls[f] <= q.hi;
        }
        if (x.calls[f] >= 2u * d.hot_calls) CHECK(got && got->verdict == HWP_VM_YES);
        if (x.calls[f] < d.hot_calls / 2u) CHECK(got == NULL);
        {
            uint64_t hdr = FN_BASE(f) + 4u;
            const hwp_vm_decision *lg = find(&ds, HWP_VM_LOOP, hdr);
            if (x.back[f] >= 2u * d.hot_loops) CHECK(lg && lg->verdict == HWP_VM_YES);
            if (x.back[f] < d.hot_loops / 2u) CHECK(lg == NULL);
        }
    }
    CHECK(seen > NF / 2u);
    CHECK((double)inside >= 0.85 * seen); /* nominal 95% */
    /* RAP's tree over the bursts' basic blocks, scaled: each function
     * with at least 2% of the bytecodes within 10% of its exact count
     * (RAP's own bound is eps = 1% of the burst stream; the rest is the
     * bursts' sampling error). */
    for (f = 0; f < NF; f++) {
        hwp_rap_est e;
        if (x.fops[f] < x.ops / 50u) continue;
        CHECK(hwp_rap_query(hwp_vm_rap(&vm), FN_BASE(f), FN_BASE(f) + 0xFFu, &e) == HWP_OK);
        CHECK(fabs(e.estimate * hwp_vm_scale(&vm) - (double)x.fops[f]) <= 0.1 * (double)x.fops[f]);
    }
    free(mem);
}

/* A constant site is specialised on its value and type; a site whose
 * value changes every iteration is confidently variant (NO), from the
 * stratified profile and from the co-processor's alone. */
static void test_sites(void) {
    static const uint32_t sets[] = {HWP_VM_STRAT, HWP_VM_CP};
    size_t i;
    for (i = 0; i < 2; i++) {
        hwp_vm_desc d;
        hwp_vm vm;
        exact x;
        static decisions ds;
        void *mem;
        const hwp_vm_decision *c, *v;
        hwp_vm_decision q;
        ds.n = 0;
        desc_for(&d, sets[i], &ds);
        if (!CHECK((mem = make(&vm, &d)) != NULL)) continue;
        drive(&vm, &x, 200000, 3);
        hwp_vm_flush(&vm);
        hwp_vm_get_desc(&vm, &d); /* the thresholds as filled in */
        c = find(&ds, HWP_VM_VALUE, SITE_CONST(0));
        v = find(&ds, HWP_VM_VALUE, SITE_VAR(0));
        CHECK(c && c->verdict == HWP_VM_YES && c->what == 42 && c->lo >= d.spec_inv);
        CHECK(v && v->verdict == HWP_VM_NO && v->hi < d.spec_inv);
        if (sets[i] == HWP_VM_STRAT) {
            const hwp_vm_decision *t = find(&ds, HWP_VM_TYPE, SITE_VAR(0));
            CHECK(t && t->verdict == HWP_VM_YES && t->what == 2);
        }
        /* a rarely called function's sites: not enough evidence yet */
        CHECK(hwp_vm_site(&vm, SITE_VAR(NF - 1u), HWP_VM_VALUE, &q) == HWP_OK);
        CHECK(d.min_samples == 30 && (q.verdict == HWP_VM_UNSURE || q.samples >= d.min_samples));
        CHECK(hwp_vm_site(&vm, 2u * NF, HWP_VM_VALUE, &q) == HWP_EINVAL);
        free(mem);
    }
}

/* The hottest function's loop has one dominant path (the back edge
 * taken); once the loop is hot the layer hands it out as a hot path. */
static void test_hot_path(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    exact x;
    static decisions ds;
    void *mem;
    size_t i, paths = 0;
    ds.n = 0;
    desc_for(&d, HWP_VM_PATH, &ds);
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    drive(&vm, &x, 200000, 4);
    hwp_vm_flush(&vm);
    for (i = 0; i < ds.n; i++) {
        if (ds.d[i].kind != HWP_VM_HOTPATH) continue;
        paths++;
        /* a path starts at a hot unit: a function entry or loop header */
        CHECK((ds.d[i].id & 0xFFu) == 0 || (ds.d[i].id & 0xFFu) == 4u);
        CHECK(ds.d[i].what > 1u); /* a sentinel and at least one branch */
    }
    CHECK(paths > 0);
    /* the hottest loop's hottest path: one branch, the back edge taken
     * (sentinel 1, direction 1), the exact answer of every iteration but
     * the last */
    {
        const hwp_vm_decision *p = find(&ds, HWP_VM_HOTPATH, FN_BASE(0) + 4u);
        CHECK(p != NULL && p->what == 3u);
    }
    free(mem);
}

/* The local-countdown form gives the same run as hwp_vm_op. */
static void test_local_countdown(void) {
    hwp_vm_desc d;
    hwp_vm a, b;
    void *ma, *mb;
    hwp_vm_stats sa = {0}, sb = {0};
    uint64_t i;
    int64_t left;
    desc_for(&d, HWP_VM_ALL, NULL);
    if (!CHECK((ma = make(&a, &d)) != NULL)) return;
    if (!CHECK((mb = make(&b, &d)) != NULL)) return;
    left = hwp_vm_left(&b);
    for (i = 0; i < 300000; i++) {
        uint64_t pc = 0x40 + 4u * (i % 37u);
        hwp_vm_op(&a, pc);
        if (--left <= 0) left = hwp_vm_expire(&b, pc, left);
        if (i % 37u == 36u) {
            hwp_vm_branch(&a, pc, true);
            hwp_vm_set_left(&b, left);
            hwp_vm_branch(&b, pc, true);
            left = hwp_vm_left(&b);
        }
    }
    hwp_vm_set_left(&b, left);
    hwp_vm_flush(&a);
    hwp_vm_flush(&b);
    hwp_vm_get_stats(&a, &sa);
    hwp_vm_get_stats(&b, &sb);
    CHECK_EQ(sa.events, 300000);
    CHECK(memcmp(&sa, &sb, sizeof sa) == 0);
    free(ma);
    free(mb);
}

/* ProfileMe through the layer: the per-PC estimate of the hottest
 * bytecode within its envelope, the clock exact, no bursts. */
static void test_profileme(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    exact x;
    void *mem;
    hwp_pm_est e;
    const hwp_pm_entry *en;
    uint64_t truth = 0;
    uint32_t f;
    desc_for(&d, HWP_VM_PM, NULL);
    d.pm.interval = 64;
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    drive(&vm, &x, 100000, 5);
    hwp_vm_flush(&vm);
    for (f = 0; f < NF; f++) truth += x.calls[f]; /* pc 0x100 runs once a call */
    en = hwp_pm_table_find(hwp_vm_pm_table(&vm), 0x100);
    if (CHECK(en != NULL)) {
        e = hwp_pm_table_estimate(hwp_vm_pm_table(&vm), en, HWP_PM_PROP_SAMPLES, 1.96);
        CHECK(e.lo <= (double)truth && (double)truth <= e.hi);
    }
    CHECK(hwp_vm_rap(&vm) == NULL);
    free(mem);
}

static void test_ids_past_range(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    void *mem;
    hwp_vm_stats s = {0};
    uint64_t i;
    desc_for(&d, HWP_VM_STRAT, NULL);
    d.period = d.burst = 2; /* every bytecode in a burst: full profiling */
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    for (i = 0; i < 100; i++) {
        hwp_vm_op(&vm, i);
        hwp_vm_call(&vm, i, NF + 5u);
        hwp_vm_op(&vm, i + 1000);
        hwp_vm_load(&vm, 2u * NF, 1, 1);
    }
    hwp_vm_get_stats(&vm, &s);
    CHECK_EQ(s.rejected, 200);
    CHECK_EQ(s.burst_ops, 200);
    CHECK(strstr(hwp_why(&vm), "past") != NULL);
    CHECK(hwp_strat_acc_pc_count(hwp_vm_strat_acc(&vm), HWP_STRAT_KIND_VALUE, 2u * NF) == 0);
    free(mem);
}

/* Two threads' layers (other seeds, other halves of the calls) merged:
 * the clock is the sum, the function intervals hold the exact counts of
 * the whole as the single run's do, a differently configured layer is
 * refused with its reason. */
static void test_merge(void) {
    hwp_vm_desc d;
    hwp_vm a, b;
    exact xa, xb;
    void *ma, *mb;
    hwp_vm_stats s = {0};
    uint32_t f, inside = 0, seen = 0;
    desc_for(&d, HWP_VM_ALL, NULL);
    if (!CHECK((ma = make(&a, &d)) != NULL)) return;
    d.seed = 8;
    if (!CHECK((mb = make(&b, &d)) != NULL)) return;
    drive(&a, &xa, 100000, 6);
    drive(&b, &xb, 100000, 7);
    hwp_vm_flush(&a);
    hwp_vm_flush(&b);
    if (!CHECK(hwp_vm_merge(&a, &b) == HWP_OK)) printf("      merge: %s\n", hwp_why(&a));
    CHECK(hwp_vm_get_stats(&a, &s) == HWP_OK);
    CHECK_EQ(s.events, xa.ops + xb.ops);
    for (f = 0; f < NF; f++) {
        hwp_vm_decision q;
        uint64_t truth = xa.calls[f] + xb.calls[f];
        CHECK(hwp_vm_func(&a, f, &q) == HWP_OK);
        if (!q.samples) continue;
        seen++;
        inside += q.lo <= (double)truth && (double)truth <= q.hi;
    }
    CHECK(seen > NF / 2u);
    CHECK((double)inside >= 0.85 * seen);
    {
        hwp_vm c;
        void *mc;
        d.burst = 256;
        if (CHECK((mc = make(&c, &d)) != NULL)) {
            CHECK(hwp_vm_merge(&c, &a) == HWP_EMISMATCH);
            CHECK(strstr(hwp_why(&c), "burst") != NULL);
            free(mc);
        }
    }
    free(ma);
    free(mb);
}

/* Short bursts (1 and 4 bytecodes in 64): every bytecode of a burst
 * keeps its annotation, the last one's included, so the call estimates
 * stay unbiased and the intervals hold the exact counts. */
static void test_short_bursts(void) {
    static const uint32_t bursts[] = {1, 4};
    size_t b;
    for (b = 0; b < 2; b++) {
        hwp_vm_desc d;
        hwp_vm vm;
        exact x;
        void *mem;
        uint32_t f, inside = 0, seen = 0;
        double est = 0, truth = 0;
        desc_for(&d, HWP_VM_RAP, NULL);
        d.period = 64;
        d.burst = bursts[b];
        if (!CHECK((mem = make(&vm, &d)) != NULL)) continue;
        drive(&vm, &x, 100000, 9);
        hwp_vm_flush(&vm);
        for (f = 0; f < NF; f++) {
            hwp_vm_decision q;
            hwp_vm_func(&vm, f, &q);
            est += q.est;
            truth += (double)x.calls[f];
            if (!q.samples) continue;
            seen++;
            inside += q.lo <= (double)x.calls[f] && (double)x.calls[f] <= q.hi;
        }
        /* about 1600 calls sampled: one standard error is 2.5% */
        if (!CHECK(fabs(est - truth) < 0.06 * truth))
            printf("      burst %u: est %.0f truth %.0f\n", bursts[b], est, truth);
        CHECK(seen > 8u && (double)inside >= 0.85 * seen);
        free(mem);
    }
}

/* A run that ends right after a call inside a burst: the transfer never
 * landed, so nothing is counted for it (no call, no loop at a made-up
 * header), and the cost shim's clock reaches the run's end. */
static void test_finish_mid_transfer(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    hwp_cost cost;
    void *mem;
    size_t n;
    hwp_vm_decision q;
    uint64_t i;
    desc_for(&d, HWP_VM_RAP, NULL);
    d.period = d.burst = 16; /* every bytecode in a burst */
    hwp_cost_init(&cost, NULL);
    n = hwp_vm_bytes(&d);
    mem = malloc(n);
    if (!CHECK(mem && hwp_vm_init(&vm, mem, n, &d, &cost) == HWP_OK)) {
        free(mem);
        return;
    }
    for (i = 0; i < 999; i++) hwp_vm_op(&vm, 0x10 + (i % 8u));
    hwp_vm_op(&vm, 0x40);
    hwp_vm_call(&vm, 0x40, 3); /* the last event of the run */
    hwp_vm_flush(&vm);
    CHECK(hwp_vm_func(&vm, 3, &q) == HWP_OK && q.samples == 0);
    CHECK(hwp_vm_loop(&vm, 0, &q) == HWP_OK && q.samples == 0);
    CHECK_EQ(hwp_cost_clock(&cost), 1000);
    free(mem);
}

/* The layer's hot path table: decay unless asked for the paper's plain
 * LFU table (hpt_plain) or another policy; both reports name it. */
static int hpt_run(hwp_vm_desc *d, uint32_t *policy, char *text, size_t cap) {
    hwp_vm vm;
    hwp_vm_desc got;
    hwp_bufwriter b;
    hwp_writer w = hwp_writer_buf(&b, text, cap);
    void *mem = make(&vm, d);
    if (!mem) return 0;
    *policy = hwp_vm_hpt(&vm)->desc.policy;
    hwp_vm_get_desc(&vm, &got);
    CHECK_EQ(got.hpt.policy, *policy); /* the filled desc says what ran */
    hwp_vm_write_text(&vm, &w);
    hwp_vm_write_json(&vm, &w); /* after the text line */
    CHECK_EQ(b.dropped, 0u);
    free(mem);
    return 1;
}

static void test_hpt_policy(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    uint32_t policy = 99;
    static char text[1 << 14];
    desc_for(&d, HWP_VM_PATH, NULL);
    if (CHECK(hpt_run(&d, &policy, text, sizeof text))) {
        CHECK_EQ(policy, HWP_HPT_DECAY);
        CHECK_HAS(text, "hot path table 512x4 LFU decay");
        CHECK_HAS(text, "\"policy\":\"decay\"");
        CHECK_HAS(text, "\"hpt_plain\":0");
    }
    d.hpt_plain = 1; /* the paper's table */
    if (CHECK(hpt_run(&d, &policy, text, sizeof text))) {
        CHECK_EQ(policy, HWP_HPT_PLAIN);
        CHECK_HAS(text, "hot path table 512x4 LFU plain");
    }
    d.hpt.policy = HWP_HPT_AGING; /* a policy named is the one that runs */
    if (CHECK(hpt_run(&d, &policy, text, sizeof text))) CHECK_EQ(policy, HWP_HPT_AGING);
    d.hpt_plain = 0;
    if (CHECK(hpt_run(&d, &policy, text, sizeof text))) CHECK_EQ(policy, HWP_HPT_AGING);
    d.hpt.policy = HWP_HPT_PLAIN;
    d.hpt.repl = HWP_HPT_LRU; /* no policy: LRU stays LRU */
    if (CHECK(hpt_run(&d, &policy, text, sizeof text))) {
        CHECK_EQ(policy, HWP_HPT_PLAIN);
        CHECK_HAS(text, "hot path table 512x4 LRU\n");
    }
    d.hpt.repl = HWP_HPT_LFU;
    d.hpt_plain = 2;
    CHECK_EQ(hwp_vm_bytes(&d), 0u);
    CHECK_EQ(hwp_vm_init(&vm, NULL, 0, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&vm), "hpt_plain");
}

/* The names of kinds and verdicts, the local countdown's watch test, and
 * the model accessors: NULL for a model the layer does not hold. */
static void test_names_and_accessors(void) {
    static const char *const kinds[] = {"?", "func", "loop", "path", "value", "type", "phase", "?"};
    static const char *const verdicts[] = {"unsure", "yes", "no", "?"};
    hwp_vm_desc d;
    hwp_vm vm;
    void *mem;
    uint32_t k;
    for (k = 0; k < 8; k++) CHECK_HAS(hwp_vm_kind_str(k), kinds[k]);
    for (k = 0; k < 4; k++) CHECK_HAS(hwp_vm_verdict_str(k), verdicts[k]);
    CHECK(hwp_vm_watching(1) && !hwp_vm_watching(0) && !hwp_vm_watching(2));
    desc_for(&d, HWP_VM_PM, NULL);
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    CHECK(hwp_vm_pm(&vm) && hwp_vm_pm_table(&vm));
    CHECK(!hwp_vm_strat(&vm) && !hwp_vm_strat_acc(&vm) && !hwp_vm_rap(&vm) && !hwp_vm_path(&vm) &&
          !hwp_vm_hpt(&vm) && !hwp_vm_phase(&vm) && !hwp_vm_cp(&vm));
    free(mem);
    desc_for(&d, HWP_VM_ALL, NULL);
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    CHECK(hwp_vm_strat(&vm) && hwp_vm_strat_acc(&vm) && hwp_vm_rap(&vm) && hwp_vm_path(&vm) &&
          hwp_vm_hpt(&vm) && hwp_vm_phase(&vm) && hwp_vm_cp(&vm));
    free(mem);
    CHECK(hwp_vm_pm(NULL) == NULL);
}

static void pm_stub(void *ctx, const hwp_pm_record *r, unsigned n) {
    (void)ctx;
    (void)r;
    (void)n;
}

static void path_stub(void *ctx, const hwp_path_rec *r) {
    (void)ctx;
    (void)r;
}

/* NULL where a pointer is needed, a query of a kind no site has, and the
 * callbacks the layer owns: refused, never a crash. */
static void test_null_args(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    hwp_vm_decision q;
    void *mem;
    unsigned char small[64];
    CHECK_EQ(hwp_vm_bytes(NULL), 0u);
    CHECK_EQ(hwp_vm_init(NULL, small, sizeof small, NULL, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_vm_init(&vm, small, sizeof small, NULL, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&vm), "desc must be non-NULL");
    CHECK_EQ(hwp_vm_read_desc(NULL, "{}", 2, NULL), HWP_EINVAL);
    desc_for(&d, HWP_VM_ALL, NULL);
    d.pm.deliver = pm_stub;
    CHECK_EQ(hwp_vm_bytes(&d), 0u);
    desc_for(&d, HWP_VM_ALL, NULL);
    d.path.on_path = path_stub;
    CHECK_EQ(hwp_vm_init(&vm, small, sizeof small, &d, NULL), HWP_EINVAL);
    CHECK_HAS(hwp_why(&vm), "callbacks");
    desc_for(&d, HWP_VM_STRAT, NULL);
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    CHECK_EQ(hwp_vm_get_stats(&vm, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_vm_func(&vm, 0, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_vm_loop(&vm, 0x100, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_vm_site(&vm, 0, HWP_VM_VALUE, NULL), HWP_EINVAL);
    CHECK_EQ(hwp_vm_site(&vm, 0, HWP_VM_LOOP, &q), HWP_EINVAL); /* not a site's kind */
    free(mem);
}

/* More loop headers than the loop table's probe runs hold: the ones that
 * find no slot are dropped and counted, the others still decided. */
static void test_loops_full(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    exact x;
    hwp_vm_stats s = {0};
    hwp_vm_decision q;
    void *mem;
    uint32_t f, held = 0;
    desc_for(&d, HWP_VM_RAP, NULL);
    d.loops = 16; /* 64 functions, a loop each */
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    drive(&vm, &x, 100000, 4);
    hwp_vm_flush(&vm);
    CHECK(hwp_vm_get_stats(&vm, &s) == HWP_OK);
    CHECK(s.dropped > 0 && s.rejected == 0);
    for (f = 0; f < NF; f++)
        if (hwp_vm_loop(&vm, FN_BASE(f) + 4u, &q) == HWP_OK) held += q.samples > 0;
    CHECK(held > 0 && held <= 16);
    free(mem);
}

/* Two phases of the program (four short functions, then eight others of
 * other loop lengths): the path-based detector, fed the bursts' paths,
 * streams a phase change once the second begins, and none before. */
static void test_phase_change(void) {
    hwp_vm_desc d;
    hwp_vm vm;
    exact x;
    static decisions ds;
    const hwp_vm_decision *p;
    void *mem;
    uint32_t i;
    size_t k, before;
    ds.n = 0;
    desc_for(&d, HWP_VM_PATH, &ds);
    d.phase.interval = 4096; /* bytecodes seen in bursts */
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    memset(&x, 0, sizeof x);
    for (i = 0; i < 20000; i++) run_call(&vm, &x, i % 4u);
    for (k = 0, before = 0; k < ds.n; k++) before += ds.d[k].kind == HWP_VM_PHASE;
    for (i = 0; i < 20000; i++) run_call(&vm, &x, 40u + i % 8u);
    hwp_vm_flush(&vm);
    for (k = 0, p = NULL; k < ds.n && !p; k++)
        if (ds.d[k].kind == HWP_VM_PHASE && ds.d[k].clock > x.ops / 2u) p = &ds.d[k];
    CHECK(p != NULL && p->verdict == HWP_VM_YES && p->samples == 1 && p->est > 0);
    CHECK(before <= 1); /* at most the first interval's own change */
    free(mem);
}

/* A report the layer cannot take: a model it does not hold (in the desc
 * and in the state), a unit of the wrong length, and a model's own
 * refusal, whose offset is moved to the whole report's. */
static void test_read_refusals(void) {
    static char text[1 << 20], bad[1 << 20];
    hwp_vm_desc d, rd;
    hwp_vm vm, pm;
    hwp_bufwriter b;
    hwp_writer w;
    hwp_json_err err;
    exact x;
    void *mem, *pmem;
    char *at;
    size_t n;
    desc_for(&d, HWP_VM_ALL, NULL);
    if (!CHECK((mem = make(&vm, &d)) != NULL)) return;
    drive(&vm, &x, 20000, 5);
    hwp_vm_flush(&vm);
    w = hwp_writer_buf(&b, text, sizeof text);
    hwp_vm_write_json(&vm, &w);
    if (!CHECK_EQ(b.dropped, 0)) return;
    n = b.len;
    CHECK_EQ(hwp_vm_read_desc(&rd, text, n, &err), HWP_OK);
    /* a layer holding ProfileMe alone, its report naming another model */
    desc_for(&d, HWP_VM_PM, NULL);
    if ((pmem = make(&pm, &d)) != NULL) {
        hwp_bufwriter pb;
        hwp_writer pw = hwp_writer_buf(&pb, bad, sizeof bad);
        hwp_vm_write_json(&pm, &pw);
        CHECK_EQ(hwp_vm_read_json(&pm, bad, pb.len, &err), HWP_OK);
        at = strstr(bad, "\"pm_table\":{\"model\"");
        if (CHECK(at != NULL)) {
            memcpy(at, "\"pm_tablx\"", 10);
            CHECK(hwp_vm_read_json(&pm, bad, pb.len, &err) != HWP_OK);
            CHECK(err.why && strstr(err.why, "a model the layer does not hold"));
            CHECK_EQ(err.offset, (size_t)(at - bad) + 11); /* at its value */
        }
        free(pmem);
    }
    /* a model name no layer holds, in the desc */
    memcpy(bad, text, n);
    at = strstr(bad, "\"rap\":{\"model\"");
    if (CHECK(at != NULL)) {
        memcpy(at, "\"rqp\"", 5);
        CHECK(hwp_vm_read_desc(&rd, bad, n, &err) != HWP_OK);
        CHECK(err.why && strstr(err.why, "a model the layer does not hold"));
        CHECK_EQ(err.offset, (size_t)(at - bad) + 6); /* at its value */
    }
    /* damage inside RAP's own report: its reader's reason, at the byte
     * of the whole report */
    memcpy(bad, text, n);
    at = strstr(bad, "\"rap\":{\"model\"");
    if (CHECK(at != NULL) && CHECK((at = strstr(at, "\"eps\":")) != NULL)) {
        at += 6;
        *at = 'x';
        CHECK(hwp_vm_read_json(&vm, bad, n, &err) != HWP_OK);
        CHECK(err.why != NULL);
        CHECK_EQ(err.offset, (size_t)(at - bad));
    }
    /* damage seen with no err to fill: the status alone */
    memcpy(bad, text, n);
    at = strstr(bad, "\"rap\":{\"model\"");
    if (CHECK(at != NULL) && CHECK((at = strstr(at, "\"eps\":")) != NULL)) {
        at[6] = 'x';
        CHECK(hwp_vm_read_json(&vm, bad, n, NULL) != HWP_OK);
    }
    /* a function unit past desc.funcs, then the same unit twice */
    memcpy(bad, text, n);
    at = strstr(bad, "\"funcs\":[[");
    if (CHECK(at != NULL)) {
        char *id = at + 10, *end = strchr(id, ',');
        size_t off = (size_t)(id - bad), len = end ? (size_t)(end - id) : 0;
        char *unit_end = strchr(id, ']');
        if (CHECK(end != NULL && unit_end != NULL && len <= 2)) {
            memmove(bad + off + 3, bad + off + len, n - off - len);
            memcpy(bad + off, "999", 3);
            CHECK(hwp_vm_read_json(&vm, bad, n + 3 - len, &err) != HWP_OK);
            CHECK(err.why && strstr(err.why, "past desc.funcs"));
        }
        if (CHECK(unit_end != NULL)) { /* the first unit, then a copy of it */
            size_t ustart = (size_t)(at - bad) + 9u, ulen = (size_t)(unit_end - at) - 9u + 1u;
            memcpy(bad, text, n);
            memmove(bad + ustart + 2u * ulen + 1u, bad + ustart + ulen, n - ustart - ulen);
            bad[ustart + ulen] = ',';
            memcpy(bad + ustart + ulen + 1u, text + ustart, ulen);
            CHECK(hwp_vm_read_json(&vm, bad, n + ulen + 1u, &err) != HWP_OK);
            CHECK(err.why && strstr(err.why, "a unit repeated"));
        }
    }
    /* a function unit with an eighth member */
    memcpy(bad, text, n);
    at = strstr(bad, "\"funcs\":[[");
    if (CHECK(at != NULL) && CHECK((at = strchr(at + 9, ']')) != NULL)) {
        size_t off = (size_t)(at - bad);
        memmove(bad + off + 2, bad + off, n - off);
        memcpy(bad + off, ",0", 2);
        CHECK(hwp_vm_read_json(&vm, bad, n + 2, &err) != HWP_OK);
        CHECK(err.why && strstr(err.why, "a unit is [id, pc"));
    }
    free(mem);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_bad_descs);
    HWT_RUN(test_zeroed_is_off);
    HWT_RUN(test_clock_and_scale);
    HWT_RUN(test_hot_units);
    HWT_RUN(test_sites);
    HWT_RUN(test_hot_path);
    HWT_RUN(test_local_countdown);
    HWT_RUN(test_profileme);
    HWT_RUN(test_ids_past_range);
    HWT_RUN(test_merge);
    HWT_RUN(test_short_bursts);
    HWT_RUN(test_finish_mid_transfer);
    HWT_RUN(test_hpt_policy);
    HWT_RUN(test_names_and_accessors);
    HWT_RUN(test_loops_full);
    HWT_RUN(test_null_args);
    HWT_RUN(test_phase_change);
    HWT_RUN(test_read_refusals);
    return hwt_end();
}
