/* Heavy tests for hwprof/rap.h (run once, natively):
 *   - the error bound and the pool limit on thousands of random and
 *     adversarial streams, each checked against an exact count;
 *   - planted hot ranges found at the finest precision, nothing below
 *     the threshold reported;
 *   - merging two trees against the tree of the concatenated stream;
 *   - the paper's accuracy experiment (sec. 4.3, Fig. 8) on synthetic
 *     code and load-value streams at 8 KB. */
#define HWPROF_IMPL
#include "hwprof/rap.h"

#include "harness.h"
#include "rap/rap_util.h"

#define MAX_EV 20000

static hwx_event ev[2 * MAX_EV], evcopy[2 * MAX_EV];

enum { S_UNIFORM, S_ZIPF, S_ONEHOT, S_SHIFTING, S_SCAN, S_EDGES, S_WEIGHTED,
       S_SPREAD, S_COUNT };
static const char *const stream_name[S_COUNT] = {
    "uniform", "zipf", "one-hot", "shifting", "scan", "edges", "weighted",
    "spread"};

/* Fills ev[0..n) with a stream of `kind` over [0, 2^w); returns the
 * largest weight used. */
static uint64_t make_stream(int kind, unsigned w, size_t n, hwp_rng *g,
                            hwx_event *out) {
    uint64_t mask = hwp_mask64(w), hot = hwp_rng_next(g) & mask, maxw = 1;
    uint64_t start = hwp_rng_next(g) & mask;
    hwg_zipf z;
    hwg_phased ph;
    size_t i;
    hwg_zipf_init(&z, 10000, 1.1);
    hwg_phased_init(&ph, 10000, 1.1, n / 5 + 1, 997);
    for (i = 0; i < n; i++) {
        uint64_t k, wt = 1;
        switch (kind) {
        case S_UNIFORM: k = hwp_rng_next(g); break;
        case S_ZIPF: k = hwg_key(hwg_zipf_next(&z, g)); break;
        case S_ONEHOT: k = hwp_rng_below(g, 10) ? hot : hwp_rng_next(g); break;
        case S_SHIFTING: k = hwg_key(hwg_phased_next(&ph, g)); break;
        case S_SCAN: k = start + i; break;
        case S_EDGES: {
            uint64_t off = hwp_rng_below(g, 4);
            k = hwp_rng_below(g, 2) ? off : mask - off;
            break;
        }
        case S_WEIGHTED:
            k = hwg_key(hwg_zipf_next(&z, g));
            wt = 1 + hwp_rng_below(g, 16);
            break;
        default: /* round-robin over many keys, each just worth a split */
            k = hwg_key(i % 700);
            break;
        }
        out[i].key = k & mask;
        out[i].weight = wt;
        if (wt > maxw) maxw = wt;
    }
    return maxw;
}

typedef struct check_ctx {
    hwx_exact *x;
    double slack;
    uint64_t nodes, sum, bad_lower, bad_upper, bad_eps;
} check_ctx;

static void check_visit(void *ctx, const hwp_rap_range *rg) {
    check_ctx *c = (check_ctx *)ctx;
    uint64_t t = hwx_exact_range(c->x, rg->lo, rg->hi);
    c->nodes++;
    c->sum += rg->count;
    if (t < rg->sum) c->bad_lower++;
    if (t > rg->upper) c->bad_upper++;
    if ((double)(t - rg->sum) > c->slack) c->bad_eps++;
}

/* Checks one finished tree against the exact profile of ev[0..n).
 * slack: the additive error the bound promises (eps n + levels * max
 * weight, doubled terms for a merged tree); strict = no deferral. */
static int check_tree(const hwp_rap *r, const hwx_event *src, size_t n,
                      double slack, int strict) {
    hwx_exact x;
    check_ctx c;
    int ok = 1;
    memcpy(evcopy, src, n * sizeof *src);
    hwx_exact_build(&x, evcopy, n);
    memset(&c, 0, sizeof c);
    c.x = &x;
    c.slack = slack;
    hwp_rap_foreach(r, check_visit, &c);
    ok &= c.bad_lower == 0 && c.bad_upper == 0;
    ok &= !strict || (c.bad_eps == 0 && hwp_rap_bound(r) <= (uint64_t)slack);
    ok &= c.sum == r->n && c.nodes == r->nodes;
    ok &= r->used <= r->cap && r->peak <= r->cap;
    hwx_exact_free(&x);
    return ok;
}

/* One random stream of `kind` into ev[] and the desc it is profiled with
 * (w, b, eps drawn from the combinations the issue names); returns its
 * length, with the largest weight and hwp_rap_nodes_for(). */
static size_t random_stream(hwp_rng *g, int kind, hwp_rap_desc *d,
                            uint64_t *maxw, uint64_t *need) {
    static const unsigned ws[] = {8, 32, 64}, bs[] = {2, 4, 16};
    static const double epss[] = {0.01, 0.05, 0.2};
    unsigned w = ws[hwp_rng_below(g, 3)], b = bs[hwp_rng_below(g, 3)];
    double eps = epss[hwp_rng_below(g, 3)];
    size_t n = 1000 + hwp_rng_below(g, MAX_EV - 1000);
    *maxw = make_stream(kind, w, n, g, ev);
    *need = hwp_rap_nodes_for(eps, w, b);
    memset(d, 0, sizeof *d);
    d->buffer = HWP_RAP_BUFFER_NONE;
    d->key_bits = w;
    d->branching = b;
    d->eps = eps;
    return n;
}

/* Thousands of streams over every combination the issue names. With a
 * pool of hwp_rap_nodes_for() no split may be deferred and the eps
 * bound must hold for every node; with a small pool the a-posteriori
 * bound must hold and the pool is never exceeded. */
static void test_property_streams(void) {
    hwp_rng g;
    unsigned s, failures = 0, deferred_small = 0, small_runs = 0;
    unsigned fail_kind[S_COUNT] = {0};
    uint64_t worst_peak_ratio_num = 0, worst_peak_ratio_den = 1;
    hwp_rng_seed(&g, 2024);
    for (s = 0; s < 2400; s++) {
        int kind = (int)(s % S_COUNT), small = (s / S_COUNT) % 3 == 2;
        hwp_rap_desc d;
        uint64_t maxw, need;
        size_t n = random_stream(&g, kind, &d, &maxw, &need), i;
        double eps = d.eps;
        hwp_rap *r;
        int ok = 1;
        d.first_merge = 64u << hwp_rng_below(&g, 6);
        d.cache = hwp_rng_below(&g, 2) ? 0 : 64u << hwp_rng_below(&g, 5);
        d.nodes = small ? 17 + hwp_rng_below(&g, 500)
                        : (uint32_t)(need < (1u << 21) ? need : (1u << 21));
        r = hwx_rap_new(&d, NULL);
        for (i = 0; i < n; i++) {
            hwp_rap_add(r, ev[i].key, ev[i].weight);
            if (r->used > r->cap) ok = 0;
        }
        if (!small && need <= (1u << 21) && r->deferred) ok = 0;
        if (!small && r->peak * worst_peak_ratio_den >
                          worst_peak_ratio_num * need) {
            worst_peak_ratio_num = r->peak;
            worst_peak_ratio_den = need;
        }
        small_runs += small;
        deferred_small += small && r->deferred;
        ok &= check_tree(r, ev, n, eps * (double)r->n + (double)r->levels * maxw,
                         !r->deferred);
        if (!ok) {
            failures++;
            fail_kind[kind]++;
            if (failures < 5)
                printf("    stream %u (%s w=%u b=%u eps=%g nodes=%u): "
                       "bound or pool violated (deferred %llu)\n",
                       s, stream_name[kind], d.key_bits, d.branching, eps,
                       d.nodes,
                       (unsigned long long)r->deferred);
        }
        free(r);
    }
    printf("    2400 streams, %u with small pools (%u deferred a split); "
           "worst peak / nodes_for = %llu / %llu\n",
           small_runs, deferred_small,
           (unsigned long long)worst_peak_ratio_num,
           (unsigned long long)worst_peak_ratio_den);
    CHECK_EQ(failures, 0);
    CHECK(deferred_small > 0); /* the small pools did hit the limit */
    for (s = 0; s < S_COUNT; s++) CHECK_EQ(fail_kind[s], 0);
}

/* The same streams through a stage-0 buffer of 16..256 entries: after
 * every event the buffer holds at most max(T, min(4 * entries, 4 * T)),
 * T = eps * n / levels (docs/rap.md, "The bound"); without deferral
 * hwp_rap_bound() stays within the stated eps n + levels (limit + w_max)
 * + limit at checkpoints before the flush; after it every node obeys
 * sum <= true <= upper, n is the stream's weight, and without deferral
 * every node's error is within that bound. */
static void test_buffered_streams(void) {
    hwp_rng g;
    unsigned s, failures = 0, over = 0;
    uint64_t drained = 0;
    hwp_rng_seed(&g, 4242);
    for (s = 0; s < 600; s++) {
        int kind = (int)(s % S_COUNT);
        hwp_rap_desc d;
        uint64_t maxw, need, total = 0;
        size_t n = random_stream(&g, kind, &d, &maxw, &need), i;
        double eps = d.eps;
        hwp_rap *r;
        int ok = 1;
        d.buffer = 16u << hwp_rng_below(&g, 5);
        d.nodes = (uint32_t)(need < (1u << 21) ? need : (1u << 21));
        r = hwx_rap_new(&d, NULL);
        for (i = 0; i < n; i++) {
            hwp_rap_add(r, ev[i].key, ev[i].weight);
            total += ev[i].weight;
            if ((double)r->buffered >
                hwx_rap_buf_limit(eps, r->levels, (double)r->n, d.buffer))
                over++;
            /* Before a flush too, at i + 1 = 1, 2, 4, ... (a walk each). */
            if (!(i & (i + 1)) && !r->deferred &&
                (double)hwp_rap_bound(r) >
                    hwx_rap_buf_bound(eps, r->levels, (double)total, d.buffer,
                                      (double)maxw))
                ok = 0;
            if (r->n + r->buffered != total) ok = 0;
        }
        drained += r->updates;
        if (hwp_rap_flush(r) != HWP_OK || r->n != total || r->buffered) ok = 0;
        ok &= check_tree(r, ev, n,
                         hwx_rap_buf_bound(eps, r->levels, (double)r->n,
                                           d.buffer, (double)maxw),
                         !r->deferred);
        if (!ok) {
            failures++;
            if (failures < 5)
                printf("    buffered stream %u (%s w=%u b=%u eps=%g "
                       "buffer=%u): bound violated\n",
                       s, stream_name[kind], d.key_bits, d.branching, eps,
                       d.buffer);
        }
        free(r);
    }
    printf("    600 buffered streams, %llu tree updates before the flushes\n",
           (unsigned long long)drained);
    CHECK_EQ(failures, 0);
    CHECK_EQ(over, 0);
    CHECK(drained > 0);
}

/* Planted, aligned hot ranges on a uniform background. Each is worth
 * 13%..(b * 10% * 0.9) of the stream, so it is hot (phi = 10%) but none
 * of its b sub-ranges is: the finest precision is the planted range
 * itself, and it must be reported exactly. Nothing reported may be
 * below the threshold in truth. */
static void test_planted_hot_ranges(void) {
    static const unsigned bs[] = {2, 4, 16};
    hwp_rng g;
    unsigned s, missed = 0, below = 0, total = 0;
    hwp_rng_seed(&g, 77);
    for (s = 0; s < 150; s++) {
        unsigned b = bs[s % 3], np = 2 + hwp_rng_below(&g, 2), p, i;
        uint64_t plo[3], phi_[3];
        double share[3], hi_share = b * 0.1 * 0.9 < 0.25 ? b * 0.09 : 0.25;
        hwp_rap_desc d;
        hwp_rap *r;
        hwp_rap_range hot[64];
        hwx_exact x;
        size_t nh, n = MAX_EV;
        memset(&d, 0, sizeof d);
    d.buffer = HWP_RAP_BUFFER_NONE;
        d.key_bits = 32;
        d.branching = b;
        d.eps = 0.01;
        d.nodes = 16384;
        r = hwx_rap_new(&d, NULL);
        for (p = 0; p < np; p++) {
            unsigned depth = r->levels / 2 + hwp_rng_below(&g, r->levels / 2 + 1);
            unsigned sh = r->shift[depth];
            int clash;
            do { /* distinct ranges at depth levels / 2 keep them disjoint */
                unsigned top = r->shift[r->levels / 2];
                plo[p] = (hwp_rng_next(&g) & hwp_mask64(32)) & ~hwp_mask64(sh);
                clash = 0;
                for (i = 0; i < p; i++)
                    clash |= (plo[i] >> top) == (plo[p] >> top);
            } while (clash);
            phi_[p] = plo[p] | hwp_mask64(sh);
            share[p] = 0.13 + hwp_rng_unit(&g) * (hi_share - 0.13);
        }
        for (i = 0; i < n; i++) {
            double u = hwp_rng_unit(&g), acc = 0;
            uint64_t k = hwp_rng_next(&g) & hwp_mask64(32);
            for (p = 0; p < np; p++) {
                acc += share[p];
                if (u < acc) {
                    k = plo[p] + (hwp_rng_next(&g) & (phi_[p] - plo[p]));
                    break;
                }
            }
            ev[i].key = k;
            ev[i].weight = 1;
            hwp_rap_add(r, k, 1);
        }
        memcpy(evcopy, ev, n * sizeof *ev);
        hwx_exact_build(&x, evcopy, n);
        nh = hwp_rap_hot(r, 0.10, hot, 64);
        CHECK(nh <= 64);
        for (p = 0; p < np; p++) {
            int found = 0;
            for (i = 0; i < nh; i++)
                found |= hot[i].lo == plo[p] && hot[i].hi == phi_[p];
            missed += !found;
            total++;
        }
        for (i = 0; i < nh; i++)
            below += hwx_exact_range(&x, hot[i].lo, hot[i].hi) < n / 10;
        hwx_exact_free(&x);
        free(r);
    }
    printf("    %u planted ranges, %u missed, %u reported below threshold\n",
           total, missed, below);
    CHECK_EQ(missed, 0);
    CHECK_EQ(below, 0);
}

/* Two trees (one per vCPU) merged, against the exact count of the
 * concatenated stream and against the tree built from it. */
static void test_merge_streams(void) {
    hwp_rng g;
    unsigned s, bad = 0, far = 0;
    hwp_rng_seed(&g, 31337);
    for (s = 0; s < 300; s++) {
        unsigned w = s % 3 == 0 ? 8 : s % 3 == 1 ? 32 : 64;
        unsigned b = s % 2 ? 4 : 2 << (2 * (s % 3 == 0));
        size_t na = 500 + hwp_rng_below(&g, MAX_EV - 500);
        size_t nb = 500 + hwp_rng_below(&g, MAX_EV - 500), i;
        uint64_t mw = make_stream((int)(s % S_COUNT), w, na, &g, ev);
        uint64_t mw2 = make_stream((int)((s / 3) % S_COUNT), w, nb, &g, ev + na);
        hwp_rap_desc d;
        hwp_rap *a, *bt, *ab;
        double slack;
        memset(&d, 0, sizeof d);
    d.buffer = HWP_RAP_BUFFER_NONE;
        d.key_bits = w;
        d.branching = b;
        d.eps = 0.05;
        d.nodes = 1u << 16;
        a = hwx_rap_new(&d, NULL);
        bt = hwx_rap_new(&d, NULL);
        ab = hwx_rap_new(&d, NULL);
        for (i = 0; i < na + nb; i++) {
            hwp_rap_add(i < na ? a : bt, ev[i].key, ev[i].weight);
            hwp_rap_add(ab, ev[i].key, ev[i].weight);
        }
        if (mw2 > mw) mw = mw2;
        CHECK_EQ(hwp_rap_merge(a, bt), HWP_OK);
        slack = 0.05 * (double)a->n + 2.0 * a->levels * (double)mw;
        if (!check_tree(a, ev, na + nb, slack, !a->deferred)) bad++;
        /* Every range of the concatenated tree: the merged tree's lower
         * bound is within the same slack of the concatenated one's. */
        {
            hwp_rap_range rg[512];
            size_t nh = hwp_rap_hot(ab, 0.01, rg, 512), k;
            for (k = 0; k < nh && k < 512; k++) {
                uint64_t l1 = 0, u1 = 0, l2 = 0, u2 = 0;
                hwp_rap_estimate(a, rg[k].lo, rg[k].hi, &l1, &u1);
                hwp_rap_estimate(ab, rg[k].lo, rg[k].hi, &l2, &u2);
                if ((double)(l1 > l2 ? l1 - l2 : l2 - l1) > slack) far++;
            }
        }
        free(a);
        free(bt);
        free(ab);
    }
    CHECK_EQ(bad, 0);
    CHECK_EQ(far, 0);
}

/* ---- the paper's accuracy experiment (sec. 4.3, Fig. 8) ------------------ */

/* Heavy-tailed load values: zero, small integers, heap pointers, and a
 * long tail of arbitrary words (sec. 4.1: "a large tail"). */
static uint64_t load_value(hwp_rng *g, const hwg_zipf *z) {
    unsigned u = hwp_rng_below(g, 100);
    if (u < 20) return 0;
    if (u < 50) return hwg_zipf_next(z, g);                    /* small ints */
    if (u < 80) return 0x7f0000000000ull + 16 * hwg_zipf_next(z, g); /* heap */
    return hwp_rng_next(g) >> hwp_rng_below(g, 64);            /* tail */
}

typedef struct acc_run {
    double mean_pct, max_pct, worst_eps;
    uint32_t hot, peak;
    uint64_t deferred, violations;
} acc_run;

static acc_run run_accuracy(int values, double eps, uint32_t nodes, size_t n,
                            uint64_t seed) {
    static hwx_event big[2000000];
    hwp_rap *r;
    hwp_rap_desc d;
    hwp_rap_acc acc;
    hwx_exact x;
    hwx_code code;
    hwg_zipf z;
    hwp_rng g;
    acc_run out;
    size_t i;
    memset(&d, 0, sizeof d);
    d.buffer = HWP_RAP_BUFFER_NONE;
    d.eps = eps; /* b = 4, w = 64: the paper's configuration */
    d.nodes = nodes;
    r = hwx_rap_new(&d, NULL);
    hwp_rng_seed(&g, seed);
    hwg_zipf_init(&z, 1u << 16, 1.2);
    hwx_code_init(&code, 3000, 0x400000, seed);
    for (i = 0; i < n; i++) {
        uint64_t k = values ? load_value(&g, &z) : hwx_code_next(&code);
        big[i].key = k;
        big[i].weight = 1;
        hwp_rap_add(r, k, 1);
    }
    hwx_exact_build(&x, big, n);
    hwp_rap_accuracy(r, 0.10, hwx_exact_range, &x, &acc);
    out.mean_pct = acc.mean_pct;
    out.max_pct = acc.max_pct;
    out.worst_eps = acc.worst_eps;
    out.hot = acc.hot;
    out.peak = r->peak;
    out.deferred = r->deferred;
    out.violations = acc.violations;
    hwx_exact_free(&x);
    hwx_code_free(&code);
    free(r);
    return out;
}

/* 8 KB (512 nodes) and 64 KB (4096 nodes), the paper's two sizes. At
 * 8 KB these streams need more nodes than the pool holds, splits are
 * deferred, and only the a-posteriori bound is guaranteed: that is
 * asserted always, the eps bound only for runs that deferred nothing. */
static void test_paper_accuracy(void) {
    static const double epss[] = {0.10, 0.01, 0.10, 0.01};
    static const uint32_t pools[] = {512, 512, 4096, 4096};
    unsigned e, v, s;
    for (v = 0; v < 2; v++)
        for (e = 0; e < 4; e++) {
            double mean = 0, maxp = 0, weps = 0;
            unsigned hot = 0, peak = 0;
            uint64_t deferred = 0, viol = 0;
            for (s = 0; s < 3; s++) {
                acc_run a =
                    run_accuracy((int)v, epss[e], pools[e], 2000000, 100 + s);
                mean += a.mean_pct / 3;
                if (a.max_pct > maxp) maxp = a.max_pct;
                if (a.worst_eps > weps) weps = a.worst_eps;
                hot += a.hot;
                if (a.peak > peak) peak = a.peak;
                deferred += a.deferred;
                viol += a.violations;
            }
            printf("    %-6s eps=%4.2f %2uKB: hot ranges %u, mean error "
                   "%.3f%%, max %.3f%%, worst additive %.4f n, peak %u nodes, "
                   "deferred %llu\n",
                   v ? "values" : "code", epss[e], pools[e] / 64, hot, mean,
                   maxp, weps, peak, (unsigned long long)deferred);
            CHECK_EQ(viol, 0);
            CHECK(hot > 0);
            if (!deferred) CHECK(weps <= epss[e]);
            /* Paper: 98% accuracy on code at eps = 10% (mean error <= 2%). */
            if (!v && e == 0) CHECK(mean <= 2.0);
        }
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_property_streams);
    HWT_RUN(test_buffered_streams);
    HWT_RUN(test_planted_hot_ranges);
    HWT_RUN(test_merge_streams);
    HWT_RUN(test_paper_accuracy);
    return hwt_end();
}
