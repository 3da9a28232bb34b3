/* tests/rap/rap_util.h: helpers shared by the RAP tests and benchmarks
 * (hosted): an exact offline profile of a stream (sorted keys with running
 * weights, so the true count of any [lo, hi] is two binary searches), and
 * a synthetic basic-block trace with the locality of code (sec. 4.2). */
#ifndef HWPROF_TESTS_RAP_UTIL_H
#define HWPROF_TESTS_RAP_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "gen.h"
#include "hwprof/rap.h"

#if defined(__GNUC__) || defined(__clang__)
#define HWX__UNUSED __attribute__((unused))
#else
#define HWX__UNUSED
#endif

/* ---- exact profile ------------------------------------------------------- */

typedef struct hwx_event {
    uint64_t key, weight;
} hwx_event;

typedef struct hwx_exact {
    uint64_t *key; /* distinct keys, ascending                        */
    uint64_t *cum; /* cum[i] = total weight of key[0..i]               */
    size_t n;
} hwx_exact;

static int hwx__cmp(const void *a, const void *b) {
    uint64_t x = ((const hwx_event *)a)->key, y = ((const hwx_event *)b)->key;
    return x < y ? -1 : x > y;
}

/* Builds the profile of ev[0..n); sorts ev in place. */
HWX__UNUSED static void hwx_exact_build(hwx_exact *x, hwx_event *ev, size_t n) {
    size_t i, k = 0;
    uint64_t run = 0;
    qsort(ev, n, sizeof *ev, hwx__cmp);
    x->key = (uint64_t *)malloc((n ? n : 1) * sizeof *x->key);
    x->cum = (uint64_t *)malloc((n ? n : 1) * sizeof *x->cum);
    for (i = 0; i < n; i++) {
        run += ev[i].weight;
        if (k && x->key[k - 1] == ev[i].key) {
            x->cum[k - 1] = run;
        } else {
            x->key[k] = ev[i].key;
            x->cum[k++] = run;
        }
    }
    x->n = k;
}

HWX__UNUSED static void hwx_exact_free(hwx_exact *x) {
    free(x->key);
    free(x->cum);
}

/* Index of the first key >= v. */
static size_t hwx__lower(const hwx_exact *x, uint64_t v) {
    size_t lo = 0, hi = x->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (x->key[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* True weight of keys in [lo, hi]; an hwp_rap_exact_fn. */
HWX__UNUSED static uint64_t hwx_exact_range(void *ctx, uint64_t lo,
                                            uint64_t hi) {
    const hwx_exact *x = (const hwx_exact *)ctx;
    size_t a = hwx__lower(x, lo), b;
    uint64_t below;
    if (a == x->n) return 0;
    b = hi == UINT64_MAX ? x->n : hwx__lower(x, hi + 1);
    below = a ? x->cum[a - 1] : 0;
    return b ? x->cum[b - 1] - below : 0;
}

/* A model's handle (head bytes) and its storage (bytes at *mem,
 * 16-aligned) in one heap block, so free() releases both; exits without
 * memory. */
HWX__UNUSED static void *hwx_model_alloc(const char *who, size_t head,
                                         size_t bytes, void **mem) {
    unsigned char *b = (unsigned char *)malloc(head + bytes + 16);
    if (!b) {
        fprintf(stderr, "%s: no memory\n", who);
        exit(1);
    }
    *mem = b + head + (16 - (uintptr_t)(b + head) % 16) % 16;
    return b;
}

/* Exits with the model's reason (h: its head) when its init refused. */
HWX__UNUSED static void hwx_init_or_exit(const char *who, hwp_status st,
                                         const hwp_head *h) {
    if (st == HWP_OK) return;
    fprintf(stderr, "%s: %s\n", who, h->why);
    exit(1);
}

/* A tree and its storage in one heap block (free() releases both);
 * exits on a desc the model refuses. */
HWX__UNUSED static hwp_rap *hwx_rap_new(const hwp_rap_desc *d,
                                        hwp_cost *cost) {
    size_t bytes = hwp_rap_bytes(d);
    void *mem;
    hwp_rap *r =
        (hwp_rap *)hwx_model_alloc("hwx_rap_new", sizeof *r, bytes, &mem);
    hwx_init_or_exit("hwx_rap_new", hwp_rap_init(r, mem, bytes, d, cost),
                     &r->head);
    return r;
}

/* The stage-0 limit docs/rap.md promises at weight n, from the desc:
 * max(T, min(4 * entries, 4 * T)) with T = eps * n / levels. */
HWX__UNUSED static double hwx_rap_buf_limit(double eps, unsigned levels,
                                            double n, unsigned entries) {
    double t = eps * n / (double)levels, l = 4.0 * (double)entries;
    if (l > 4.0 * t) l = 4.0 * t;
    return l > t ? l : t;
}

/* The bound docs/rap.md states for a buffered tree without deferrals,
 * weight in stage 0 included: eps n + levels (limit + w_max) + limit. */
HWX__UNUSED static double hwx_rap_buf_bound(double eps, unsigned levels,
                                            double n, unsigned entries,
                                            double w_max) {
    double l = hwx_rap_buf_limit(eps, levels, n, entries);
    return eps * n + (double)levels * (l + w_max) + l;
}

/* ---- synthetic code trace ---------------------------------------------------
 * A program of `nfunc` functions laid out one after another from `base`
 * (sizes 64..4096 bytes, basic blocks of 8..64 bytes). A call picks a
 * function by Zipf(1) popularity and runs a loop over a few of its
 * blocks a geometric number of times; the trace is the start PC of every
 * basic block executed, as in the paper's gcc basic-block trace. */
typedef struct hwx_code {
    uint32_t nfunc;
    uint64_t *start; /* function start PCs                            */
    uint32_t *size;  /* bytes                                         */
    hwg_zipf pop;
    hwp_rng rng;
    uint64_t pc[16]; /* the current loop body                          */
    uint32_t body, at, trips;
} hwx_code;

HWX__UNUSED static void hwx_code_init(hwx_code *c, uint32_t nfunc,
                                      uint64_t base, uint64_t seed) {
    uint32_t f;
    uint64_t pc = base;
    c->nfunc = nfunc;
    c->start = (uint64_t *)malloc(nfunc * sizeof *c->start);
    c->size = (uint32_t *)malloc(nfunc * sizeof *c->size);
    hwp_rng_seed(&c->rng, seed);
    for (f = 0; f < nfunc; f++) {
        c->start[f] = pc;
        c->size[f] = 64u << hwp_rng_below(&c->rng, 7); /* 64 .. 4096 */
        pc += c->size[f];
    }
    /* Popularity is not address order: shuffle which function is hot. */
    for (f = nfunc - 1; f > 0; f--) {
        uint32_t j = hwp_rng_below(&c->rng, f + 1);
        uint64_t s = c->start[f];
        uint32_t z = c->size[f];
        c->start[f] = c->start[j];
        c->size[f] = c->size[j];
        c->start[j] = s;
        c->size[j] = z;
    }
    hwg_zipf_init(&c->pop, nfunc, 1.0);
    c->body = c->at = c->trips = 0;
}

HWX__UNUSED static void hwx_code_free(hwx_code *c) {
    free(c->start);
    free(c->size);
}

HWX__UNUSED static uint64_t hwx_code_next(hwx_code *c) {
    if (c->at == c->body) {
        c->at = 0;
        if (c->trips) {
            c->trips--;
        } else { /* a new call: choose the function and its loop body */
            uint32_t f = (uint32_t)hwg_zipf_next(&c->pop, &c->rng), i;
            uint64_t off = 0;
            c->body = 2 + hwp_rng_below(&c->rng, 10);
            for (i = 0; i < c->body; i++) {
                off += 8u * (1u + hwp_rng_below(&c->rng, 8));
                c->pc[i] = c->start[f] + off % c->size[f];
            }
            c->trips = 0;
            while (c->trips < 64 && hwp_rng_below(&c->rng, 8) != 0) c->trips++;
        }
    }
    return c->pc[c->at++];
}

#endif
