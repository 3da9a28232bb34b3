/* tests/rap/rap2_util.h: helpers shared by the 2-D RAP tests (hosted): an
 * exact offline profile of a stream of pairs that answers "weight inside
 * a box" by brute force over the distinct pairs (sorted by x, so a box's
 * x side is two binary searches). It knows nothing of interleaved keys:
 * the tree's rectangles are checked against plain geometry. */
#ifndef HWPROF_TESTS_RAP2_UTIL_H
#define HWPROF_TESTS_RAP2_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hwprof/rap.h"
#include "rap_util.h" /* hwx_model_alloc, hwx_init_or_exit */

#if defined(__GNUC__) || defined(__clang__)
#define HWX__UNUSED2 __attribute__((unused))
#else
#define HWX__UNUSED2
#endif

typedef struct hwx_pair {
    uint64_t x, y, weight;
} hwx_pair;

typedef struct hwx_exact2 {
    hwx_pair *p; /* distinct pairs by (x, y), weights summed */
    size_t n;
} hwx_exact2;

static int hwx__pair_cmp(const void *a, const void *b) {
    const hwx_pair *p = (const hwx_pair *)a, *q = (const hwx_pair *)b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return p->y < q->y ? -1 : p->y > q->y;
}

/* The profile of ev[0..n) (copied; ev is left as it is). */
HWX__UNUSED2 static void hwx_exact2_build(hwx_exact2 *x, const hwx_pair *ev, size_t n) {
    size_t i, k = 0;
    x->p = (hwx_pair *)malloc((n ? n : 1) * sizeof *x->p);
    for (i = 0; i < n; i++) x->p[i] = ev[i];
    qsort(x->p, n, sizeof *x->p, hwx__pair_cmp);
    for (i = 0; i < n; i++) {
        if (k && x->p[k - 1].x == x->p[i].x && x->p[k - 1].y == x->p[i].y)
            x->p[k - 1].weight += x->p[i].weight;
        else
            x->p[k++] = x->p[i];
    }
    x->n = k;
}

HWX__UNUSED2 static void hwx_exact2_free(hwx_exact2 *x) { free(x->p); }

/* True weight inside the box; an hwp_rap2_exact_fn. */
HWX__UNUSED2 static uint64_t hwx_exact2_box(void *ctx, const hwp_rap2_box *b) {
    const hwx_exact2 *x = (const hwx_exact2 *)ctx;
    size_t lo = 0, hi = x->n, i;
    uint64_t s = 0;
    while (lo < hi) { /* first pair with x >= b->x_lo */
        size_t mid = lo + (hi - lo) / 2;
        if (x->p[mid].x < b->x_lo) lo = mid + 1;
        else hi = mid;
    }
    for (i = lo; i < x->n && x->p[i].x <= b->x_hi; i++)
        if (x->p[i].y >= b->y_lo && x->p[i].y <= b->y_hi) s += x->p[i].weight;
    return s;
}

/* A 2-D tree and its storage in one heap block (free() releases both);
 * exits on a desc the model refuses. */
HWX__UNUSED2 static hwp_rap2 *hwx_rap2_new(const hwp_rap2_desc *d, hwp_cost *cost) {
    size_t bytes = hwp_rap2_bytes(d);
    void *mem;
    hwp_rap2 *r = (hwp_rap2 *)hwx_model_alloc("hwx_rap2_new", sizeof *r, bytes, &mem);
    hwx_init_or_exit("hwx_rap2_new", hwp_rap2_init(r, mem, bytes, d, cost), &r->head);
    return r;
}

/* Every node of a tree against the exact profile. */
typedef struct hwx_check2 {
    hwx_exact2 *x;
    uint64_t nodes, sum, below, above, over_bound, over_slack, misshapen;
    uint64_t bound;  /* hwp_rap2_bound(): the a-posteriori error       */
    double slack;    /* the a-priori error, checked when nonzero       */
    double worst;    /* largest true - sum                             */
    const hwp_rap2_desc *d;
} hwx_check2;

/* A node's box is an aligned rectangle inside the domain whose sides are
 * powers of two (a cell of the interleaved tree). */
static int hwx__cell_ok(uint64_t lo, uint64_t hi, uint64_t base,
                        unsigned bits) {
    uint64_t a = lo - base, b = hi - base, span = b - a;
    if (lo < base || b < a || (bits < 64 && b >> bits)) return 0;
    return (span & (span + 1)) == 0 && (a & span) == 0;
}

static void hwx_check2_visit(void *ctx, const hwp_rap2_rect *rc) {
    hwx_check2 *c = (hwx_check2 *)ctx;
    uint64_t t = hwx_exact2_box(c->x, &rc->box);
    c->nodes++;
    c->sum += rc->count;
    if (t < rc->sum) c->below++;
    if (t > rc->upper) c->above++;
    if (t > rc->sum) {
        if (t - rc->sum > c->bound) c->over_bound++;
        if (c->slack > 0.0 && (double)(t - rc->sum) > c->slack) c->over_slack++;
        if ((double)(t - rc->sum) > c->worst) c->worst = (double)(t - rc->sum);
    }
    if (!hwx__cell_ok(rc->box.x_lo, rc->box.x_hi, c->d->x_base, c->d->x_bits) ||
        !hwx__cell_ok(rc->box.y_lo, rc->box.y_hi, c->d->y_base, c->d->y_bits))
        c->misshapen++;
}

/* 1 when every node holds: sum <= true <= upper, true - sum within the
 * a-posteriori bound (and within slack when slack > 0), node counts add
 * up to the tree's n, every box is a cell. */
HWX__UNUSED2 static int hwx_check2_tree(const hwp_rap2 *r, const hwx_pair *ev, size_t n,
                           double slack, hwx_check2 *out) {
    hwx_exact2 x;
    hwx_check2 c;
    hwp_rap_stats st;
    hwp_rap2_desc d;
    hwx_exact2_build(&x, ev, n);
    hwp_rap2_get_desc(r, &d);
    hwp_rap2_get_stats(r, &st);
    memset(&c, 0, sizeof c);
    c.x = &x;
    c.d = &d;
    c.slack = slack;
    c.bound = hwp_rap2_bound(r);
    hwp_rap2_foreach(r, hwx_check2_visit, &c);
    hwx_exact2_free(&x);
    if (out) *out = c;
    return c.below == 0 && c.above == 0 && c.over_bound == 0 &&
           c.over_slack == 0 && c.misshapen == 0 && c.sum == st.n &&
           c.nodes == st.nodes;
}

#endif
