/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_rap.c: RAP under the shared engine (fuzz_model.h), plus
 * keyed events of the input's choosing, queries with random capacities,
 * and RAP's bound (Mysore et al., Profiling over Adaptive Ranges, CGO
 * 2006, sec. 3.2) checked against an exact count: for a domain of at most
 * 2^12 keys the target counts every event itself, and after every step
 * every node's range [lo, hi] must have sum <= exact <= upper with
 * upper - sum <= hwp_rap_bound(), and so must a random range's query. */
#include "fuzz_model.h"

#define EXACT_BITS 12u

typedef struct rap_state {
    bool small;    /* the domain has at most 2^EXACT_BITS keys          */
    bool valid[2]; /* exact[i] is instance i's true count (no feeder)    */
    uint64_t base, mask, bound;
    uint64_t exact[2][1u << EXACT_BITS];
    uint64_t prefix[(1u << EXACT_BITS) + 1];
} rap_state;

static hwp_rap *rap_of(fz_ctx *c, int w) { return (hwp_rap *)c->in[w].x; }

static void rap_start(fz_ctx *c) {
    rap_state *s = (rap_state *)calloc(1, sizeof(rap_state));
    hwp_rap_desc d;
    FZ_CHECK(s);
    c->state = s;
    FZ_CHECK(hwp_rap_get_desc(rap_of(c, 0), &d) == HWP_OK);
    s->small = d.key_bits <= EXACT_BITS;
    s->base = d.key_base;
    s->mask = d.key_bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << d.key_bits) - 1u;
    s->valid[0] = s->valid[1] = s->small;
}

static void rap_count(rap_state *s, int w, uint64_t key, uint64_t weight) {
    if (s->valid[w] && key - s->base <= s->mask)
        s->exact[w][key - s->base] += weight;
}

/* Exact weight of [lo, hi] (absolute keys) from the prefix sums. */
static uint64_t rap_exact(const rap_state *s, uint64_t lo, uint64_t hi) {
    uint64_t a, b;
    if (hi < s->base || lo > s->base + s->mask) return 0;
    a = lo < s->base ? 0 : lo - s->base;
    b = hi - s->base > s->mask ? s->mask : hi - s->base;
    return s->prefix[b + 1] - s->prefix[a];
}

static void rap_visit(void *ctx, const hwp_rap_range *rg) {
    const rap_state *s = (const rap_state *)ctx;
    uint64_t ex = rap_exact(s, rg->lo, rg->hi);
    FZ_CHECK(rg->lo <= rg->hi);
    FZ_CHECK(rg->sum <= ex && ex <= rg->upper);
    FZ_CHECK(rg->upper - rg->sum <= s->bound);
}

static void rap_check_one(fz_ctx *c, int w) {
    rap_state *s = (rap_state *)c->state;
    hwp_rap *r = rap_of(c, w);
    uint64_t i;
    if (!s->valid[w]) return;
    s->prefix[0] = 0;
    for (i = 0; i <= s->mask; i++) s->prefix[i + 1] = s->prefix[i] + s->exact[w][i];
    s->bound = hwp_rap_bound(r);
    FZ_CHECK(hwp_rap_foreach(r, rap_visit, s) == HWP_OK);
}

static void rap_check(fz_ctx *c) {
    rap_check_one(c, 0);
    rap_check_one(c, 1);
}

/* A query answer has `avail` items; written into exactly `cap` slots. */
static void rap_queries(fz_ctx *c, int w, fz_in *f) {
    hwp_rap *r = rap_of(c, w);
    size_t cap = fz_u8(f) % 24u, n1, n2;
    hwp_rap_range *out = cap ? (hwp_rap_range *)malloc(cap * sizeof *out) : NULL;
    double phi = (double)(fz_u8(f) % 101u) / 100.0;
    unsigned bits = fz_u8(f) % 70u;
    FZ_CHECK(!cap || out);
    n1 = hwp_rap_hot(r, phi, out, cap);
    n2 = hwp_rap_hot(r, phi, NULL, 0);
    FZ_CHECK(n1 == n2);
    n1 = hwp_rap_top(r, bits, out, cap);
    n2 = hwp_rap_top(r, bits, NULL, 0);
    FZ_CHECK(n1 == n2);
    free(out);
}

static void rap_op(fz_ctx *c, int w, fz_in *f) {
    rap_state *s = (rap_state *)c->state;
    hwp_rap *r = rap_of(c, w);
    uint8_t sub = fz_u8(f);
    switch (sub & 3u) {
    case 0: { /* a burst of keyed events, mostly inside the domain */
        unsigned k, n = 1u + fz_u8(f) % 32u;
        for (k = 0; k < n; k++) {
            uint8_t how = fz_u8(f);
            uint64_t key = (how & 1u) ? fz_u64(f)
                                      : s->base + ((uint64_t)(fz_u8(f) | fz_u8(f) << 8) & s->mask);
            uint64_t weight = 1u + (how >> 5);
            hwp_rap_add(r, key, weight);
            rap_count(s, w, key, weight);
        }
        break;
    }
    case 1: { /* a full record: the desc's source, class and event filter */
        hwp_insn in;
        hwp_rap_stats a, b;
        hwp_rap_desc d;
        uint64_t key;
        in.pc = s->base + (fz_u8(f) & s->mask);
        in.next_pc = s->base + (fz_u8(f) & s->mask);
        in.addr = s->base + (fz_u8(f) & s->mask);
        in.value = fz_u64(f);
        in.cls = fz_u8(f) % (HWP_CLS_COUNT + 2u);
        in.events = fz_u8(f);
        FZ_CHECK(hwp_rap_get_desc(r, &d) == HWP_OK);
        FZ_CHECK(hwp_rap_get_stats(r, &a) == HWP_OK);
        hwp_rap_insn(r, &in);
        FZ_CHECK(hwp_rap_get_stats(r, &b) == HWP_OK);
        FZ_CHECK(b.events - a.events <= 1u);
        key = d.source == HWP_RAP_SRC_NEXT_PC ? in.next_pc
              : d.source == HWP_RAP_SRC_ADDR  ? in.addr
              : d.source == HWP_RAP_SRC_VALUE ? in.value
                                              : in.pc;
        if (b.events != a.events) rap_count(s, w, key, 1);
        break;
    }
    case 2: { /* a range query against the exact count */
        uint64_t lo = s->base + (fz_u8(f) & s->mask), hi = lo + fz_u8(f);
        hwp_rap_est e;
        if (sub & 4u) lo = fz_u64(f), hi = lo + (fz_u64(f) >> (fz_u8(f) % 64u));
        if (hi < lo) hi = lo;
        FZ_CHECK(hwp_rap_query(r, lo, hi, &e) == HWP_OK);
        FZ_CHECK(e.lower <= e.upper);
        FZ_CHECK(e.estimate >= (double)e.lower && e.estimate <= (double)e.upper);
        if (s->valid[w]) {
            uint64_t ex;
            rap_check_one(c, w); /* fills the prefix sums for w */
            ex = rap_exact(s, lo, hi);
            FZ_CHECK(e.lower <= ex && ex <= e.upper);
        }
        FZ_CHECK(hwp_rap_query(r, hi, lo, &e) == (lo == hi ? HWP_OK : HWP_EINVAL));
        break;
    }
    default:
        rap_queries(c, w, f);
        break;
    }
}

static void rap_fed(fz_ctx *c, int w) { ((rap_state *)c->state)->valid[w] = false; }

static void rap_merged(fz_ctx *c, int dst) {
    rap_state *s = (rap_state *)c->state;
    uint64_t i;
    s->valid[dst] = s->valid[dst] && s->valid[!dst];
    if (s->valid[dst])
        for (i = 0; i <= s->mask; i++) s->exact[dst][i] += s->exact[!dst][i];
}

static void rap_reset(fz_ctx *c, int w) {
    rap_state *s = (rap_state *)c->state;
    s->valid[w] = s->small;
    memset(s->exact[w], 0, sizeof s->exact[w]);
}

static const fz_hooks rap_hooks = {NULL, rap_start, rap_op, rap_check, NULL,
                                   rap_fed, rap_merged, rap_reset};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_rap, "rap"), &rap_hooks, data, size);
}
