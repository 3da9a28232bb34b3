/* Heavy tests for the 2-D RAP tree (hwp_rap2): adversarial streams of
 * pairs, every node of every tree checked against a brute-force exact
 * count of its rectangle (rap2_util.h knows nothing of interleaving).
 *   - at 16 KB of nodes (1024): sum <= true <= upper and true - sum <=
 *     hwp_rap2_bound() for every node, the pool never exceeded, with and
 *     without stage 0;
 *   - with the pool hwp_rap_nodes_for() asks for: no deferred split, and
 *     every node within the a-priori bound eps n + levels w_max
 *     (docs/rap.md, "Two-dimensional ranges"). */
#define HWPROF_IMPL
#include "hwprof/rap.h"

#include "harness.h"
#include "rap/rap2_util.h"
#include "rap/rap_util.h"

#define MAX_EV 20000

static hwx_pair ev[MAX_EV];

enum { S_UNIFORM, S_ONEHOT, S_ROW, S_DIAG, S_CORNERS, S_SHIFTING, S_WEIGHTED,
       S_SPREAD, S_CODEDATA, S_COUNT };
static const char *const stream_name[S_COUNT] = {
    "uniform", "one-hot", "row", "diagonal", "corners", "shifting",
    "weighted", "spread", "code-data"};

/* Fills ev[0..n) with pairs of `kind` over [0, 2^wx) x [0, 2^wy) (plus
 * the bases); returns the largest weight. */
static uint64_t make_pairs(int kind, const hwp_rap2_desc *d, size_t n,
                           hwp_rng *g) {
    uint64_t mx = hwp_mask64(d->x_bits), my = hwp_mask64(d->y_bits), maxw = 1;
    uint64_t hx = hwp_rng_next(g), hy = hwp_rng_next(g), sx = hwp_rng_next(g);
    hwg_zipf z;
    size_t i;
    hwg_zipf_init(&z, 5000, 1.1);
    for (i = 0; i < n; i++) {
        uint64_t x, y, w = 1;
        switch (kind) {
        case S_UNIFORM: x = hwp_rng_next(g); y = hwp_rng_next(g); break;
        case S_ONEHOT: /* one pair carries a third */
            if (hwp_rng_below(g, 3) == 0) x = hx, y = hy;
            else x = hwp_rng_next(g), y = hwp_rng_next(g);
            break;
        case S_ROW: /* one PC sweeping memory: a line, no hot cell */
            x = hwp_rng_below(g, 2) ? hx : hwp_rng_next(g);
            y = hwp_rng_next(g);
            break;
        case S_DIAG: x = sx + i; y = sx + i; break;
        case S_CORNERS: {
            uint64_t o = hwp_rng_below(g, 4);
            x = hwp_rng_below(g, 2) ? o : mx - o;
            y = hwp_rng_below(g, 2) ? o : my - o;
            break;
        }
        case S_SHIFTING: { /* the hot pair moves every fifth of the run */
            uint64_t ph = hwp_mix64(i / (n / 5 + 1) + sx);
            if (hwp_rng_below(g, 2)) x = ph, y = hwp_mix64(ph);
            else x = hwp_rng_next(g), y = hwp_rng_next(g);
            break;
        }
        case S_WEIGHTED: {
            uint64_t k = hwg_zipf_next(&z, g);
            x = hwg_key(k);
            y = hwp_mix64(k);
            w = 1 + hwp_rng_below(g, 16);
            break;
        }
        case S_SPREAD: /* many pairs, each just worth a split */
            x = hwg_key(i % 700);
            y = hwp_mix64(i % 700);
            break;
        default: { /* code x data: a Zipf PC and its array, strided */
            uint64_t k = hwg_zipf_next(&z, g);
            x = hx + 4 * k;
            y = hy + (k << 12) + 8 * hwp_rng_below(g, 512);
            break;
        }
        }
        ev[i].x = d->x_base + (x & mx);
        ev[i].y = d->y_base + (y & my);
        ev[i].weight = w;
        if (w > maxw) maxw = w;
    }
    return maxw;
}

static void random_desc(hwp_rng *g, hwp_rap2_desc *d) {
    static const unsigned wx[] = {32, 20, 8, 40}, wy[] = {32, 44, 8, 12};
    static const unsigned bs[] = {2, 4, 16};
    static const double epss[] = {0.10, 0.05};
    unsigned k = hwp_rng_below(g, 4);
    memset(d, 0, sizeof *d);
    d->x_bits = wx[k];
    d->y_bits = wy[k];
    d->x_base = 0x400000;
    d->y_base = k == 2 ? 0x10000 : 0;
    d->tree.branching = bs[hwp_rng_below(g, 3)];
    d->tree.eps = epss[hwp_rng_below(g, 2)];
    d->tree.first_merge = 64u << hwp_rng_below(g, 5);
}

/* Stream s of a run: its kind (returned), its length n and a random tree
 * for it. */
static int next_stream(hwp_rng *g, unsigned s, hwp_rap2_desc *d, size_t *n) {
    *n = 2000 + hwp_rng_below(g, MAX_EV - 2000);
    random_desc(g, d);
    return (int)(s % S_COUNT);
}

/* 16 KB of nodes, stage 0 on or off: only the a-posteriori bound is
 * promised (splits may be deferred), and it must hold for every node. */
static void test_16kb(void) {
    hwp_rng g;
    unsigned s, failures = 0, deferred = 0, runs = 0;
    double worst = 0.0;
    hwp_rng_seed(&g, 2026);
    for (s = 0; s < 270; s++) {
        hwp_rap2_desc d;
        size_t n, i;
        int kind = next_stream(&g, s, &d, &n), ok = 1;
        hwp_rap2 *r;
        hwp_rap_stats st;
        hwx_check2 c;
        d.tree.nodes = 1024; /* 16 KB at 16 bytes a node */
        d.tree.buffer = hwp_rng_below(&g, 2) ? HWP_RAP_BUFFER_NONE
                                              : 16u << hwp_rng_below(&g, 5);
        (void)make_pairs(kind, &d, n, &g);
        r = hwx_rap2_new(&d, NULL);
        for (i = 0; i < n; i++) {
            hwp_rap2_add(r, ev[i].x, ev[i].y, ev[i].weight);
            if ((i & 1023) == 0) {
                hwp_rap2_get_stats(r, &st);
                if (st.peak > st.pool) ok = 0;
            }
        }
        /* Before the flush (stage 0 may hold weight) and after it. */
        ok &= hwx_check2_tree(r, ev, n, 0.0, &c);
        hwp_rap2_flush(r);
        ok &= hwx_check2_tree(r, ev, n, 0.0, &c);
        hwp_rap2_get_stats(r, &st);
        ok &= st.peak <= 1024 && st.n + st.dropped == st.events;
        if (c.worst / (double)st.n > worst) worst = c.worst / (double)st.n;
        deferred += st.deferred > 0;
        runs++;
        if (!ok) {
            failures++;
            if (failures < 5)
                printf("    stream %u (%s %u+%u bits b=%u eps=%g buffer=%u): "
                       "%llu below, %llu above, %llu over the bound, %llu "
                       "misshapen\n",
                       s, stream_name[kind], d.x_bits, d.y_bits,
                       d.tree.branching, d.tree.eps, d.tree.buffer,
                       (unsigned long long)c.below, (unsigned long long)c.above,
                       (unsigned long long)c.over_bound,
                       (unsigned long long)c.misshapen);
        }
        free(r);
    }
    printf("    %u streams at 16 KB, %u deferred a split; worst node error "
           "%.4f n\n", runs, deferred, worst);
    CHECK_EQ(failures, 0);
}

/* The pool hwp_rap_nodes_for() asks for (capped at 2^21): no split is
 * deferred and every node is within eps n + levels w_max. */
static void test_sized(void) {
    hwp_rng g;
    unsigned s, failures = 0, runs = 0;
    double worst = 0.0;
    hwp_rng_seed(&g, 99);
    for (s = 0; s < 90; s++) {
        hwp_rap2_desc d;
        size_t n, i;
        int kind = next_stream(&g, s, &d, &n), ok;
        hwp_rap2 *r;
        hwp_rap_stats st;
        hwx_check2 c;
        uint64_t maxw, need;
        d.tree.buffer = HWP_RAP_BUFFER_NONE;
        need = hwp_rap_nodes_for(d.tree.eps, d.x_bits + d.y_bits,
                                 d.tree.branching);
        if (need > (1u << 21)) continue;
        d.tree.nodes = (uint32_t)need;
        maxw = make_pairs(kind, &d, n, &g);
        r = hwx_rap2_new(&d, NULL);
        for (i = 0; i < n; i++) hwp_rap2_add(r, ev[i].x, ev[i].y, ev[i].weight);
        hwp_rap2_get_stats(r, &st);
        ok = hwx_check2_tree(r, ev, n,
                             d.tree.eps * (double)st.n +
                                 (double)st.levels * (double)maxw,
                             &c);
        ok &= st.deferred == 0;
        if (c.worst / (double)st.n > worst) worst = c.worst / (double)st.n;
        runs++;
        if (!ok) {
            failures++;
            if (failures < 5)
                printf("    stream %u (%s %u+%u bits b=%u eps=%g): %llu over "
                       "the a-priori bound, deferred %llu\n",
                       s, stream_name[kind], d.x_bits, d.y_bits,
                       d.tree.branching, d.tree.eps,
                       (unsigned long long)c.over_slack,
                       (unsigned long long)st.deferred);
        }
        free(r);
    }
    printf("    %u streams with the pool nodes_for asks; worst node error "
           "%.4f n\n", runs, worst);
    CHECK(runs > 30);
    CHECK_EQ(failures, 0);
}

int main(int argc, char **argv) {
    hwt_begin(argc, argv);
    HWT_RUN(test_16kb);
    HWT_RUN(test_sized);
    return hwt_end();
}
