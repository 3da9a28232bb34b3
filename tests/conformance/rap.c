/* SPDX-License-Identifier: MIT */
/* tests/conformance/rap.c: the RAP tree's row of the conformance table. */
#include "conformance.h"

#include <string.h>

static void rap_small(void *desc) {
    hwp_rap_desc *d = (hwp_rap_desc *)desc;
    memset(d, 0, sizeof *d);
    d->key_bits = 32;
    d->nodes = 256;
    d->buffer = 64;
}

/* docs/rap.md, "Options": Mysore et al., Profiling over Adaptive Ranges,
 * CGO 2006 (b and q sec. 3.1, the 2^10 first merge and the 1k buffer
 * sec. 3.3, 128-bit nodes sec. 3.4, eps 10% with ~500 nodes and the 10%
 * hot line sec. 4); the 64-bit domain from 0 and no cache are ours. */
static void rap_documented(void *desc) {
    hwp_rap_desc *d = (hwp_rap_desc *)desc;
    memset(d, 0, sizeof *d);
    d->key_base = 0;
    d->key_bits = 64;
    d->branching = 4;
    d->eps = 0.10;
    d->nodes = 512;
    d->q = 2;
    d->first_merge = 1024;
    d->buffer = 1024;
    d->cache = 0;
    d->source = HWP_RAP_SRC_PC;
    d->hot = 0.10;
}

static const char *const rap_bad_fields[] = {
    "key_bits", "key_base", "branching", "eps", "nodes",
    "q",        "buffer",   "cache",     "source", "hot"};

static void rap_bad(void *desc, size_t i) {
    hwp_rap_desc *d = (hwp_rap_desc *)desc;
    switch (i) {
    case 0: d->key_bits = 65; break;
    case 1: d->key_bits = 16; d->key_base = ~(uint64_t)0 - 10; break;
    case 2: d->branching = 3; break;
    case 3: d->eps = 1.5; break;
    case 4: d->nodes = 2; break;
    case 5: d->q = 1; break;
    case 6: d->buffer = 3; break;
    case 7: d->cache = 5; break;
    case 8: d->source = 9; break;
    default: d->hot = 2.0; break;
    }
}

static size_t rap_bytes(const void *d) {
    return hwp_rap_bytes((const hwp_rap_desc *)d);
}
static hwp_status rap_init(void *x, void *mem, size_t n, const void *d,
                           hwp_cost *cost) {
    return hwp_rap_init((hwp_rap *)x, mem, n, (const hwp_rap_desc *)d, cost);
}
static hwp_status rap_reset(void *x) { return hwp_rap_reset((hwp_rap *)x); }
static hwp_status rap_flush(void *x) { return hwp_rap_flush((hwp_rap *)x); }
static hwp_status rap_merge(void *dst, const void *src) {
    return hwp_rap_merge((hwp_rap *)dst, (const hwp_rap *)src);
}
static hwp_status rap_stats(const void *x, hwp_conf_stats *out) {
    hwp_rap_stats st;
    hwp_status s = hwp_rap_get_stats((const hwp_rap *)x, &st);
    out->events = st.events;
    out->dropped = st.dropped;
    out->evicted = st.evicted;
    out->cycles = st.cycles;
    return s;
}
static void rap_write_json(const void *x, const hwp_writer *w) {
    hwp_rap_write_json((const hwp_rap *)x, w);
}
static hwp_status rap_read_desc(void *d, const char *s, size_t n,
                                hwp_json_err *err) {
    return hwp_rap_read_desc((hwp_rap_desc *)d, s, n, err);
}
static hwp_status rap_read_json(void *x, const char *s, size_t n,
                                hwp_json_err *err) {
    return hwp_rap_read_json((hwp_rap *)x, s, n, err);
}

/* A code-like stream: a hot loop, a warm region and scattered keys, so
 * the tree splits, merges and drops (keys past the 32-bit domain). */
static void rap_feed(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    uint64_t i;
    for (i = first; i < first + n; i++) {
        uint64_t h = hwp_mix64(seed ^ (i * 0x9E3779B97F4A7C15ull));
        uint64_t k = (h & 3u) == 0   ? 0x400000 + ((h >> 8) & 63u)
                     : (h & 3u) == 1 ? 0x800000 + ((h >> 8) & 4095u)
                                     : (h >> 20);
        hwp_rap_add((hwp_rap *)x, k, 1);
    }
}

/* RAP's split/merge history depends on the order of events, so two
 * halves merged need not give the whole stream's tree. What must hold:
 * the same weight, and for every range of the whole tree the two
 * instances' bounds overlap (both contain the true count). */
static const char *rap_merge_check(const void *whole, const void *merged) {
    const hwp_rap *a = (const hwp_rap *)whole, *b = (const hwp_rap *)merged;
    hwp_rap_stats sa, sb;
    hwp_rap_range top[64];
    size_t n, i;
    if (hwp_rap_get_stats(a, &sa) != HWP_OK ||
        hwp_rap_get_stats(b, &sb) != HWP_OK)
        return "rap: stats refused";
    if (sa.events != sb.events || sa.dropped != sb.dropped ||
        sa.n + sa.buffered != sb.n + sb.buffered)
        return "rap: merged weight differs from the whole stream's";
    n = hwp_rap_top(a, 6, top, 64);
    for (i = 0; i < n && i < 64; i++) {
        hwp_rap_est ea, eb;
        if (hwp_rap_query(a, top[i].lo, top[i].hi, &ea) != HWP_OK ||
            hwp_rap_query(b, top[i].lo, top[i].hi, &eb) != HWP_OK)
            return "rap: query refused";
        if (ea.lower > eb.upper || eb.lower > ea.upper)
            return "rap: merged bounds exclude the whole stream's";
    }
    return NULL;
}

/* ---- the two-dimensional tree ------------------------------------------- */

static void rap2_small(void *desc) {
    hwp_rap2_desc *d = (hwp_rap2_desc *)desc;
    memset(d, 0, sizeof *d);
    d->x_bits = 24;
    d->y_bits = 20;
    d->x_base = 0x400000;
    d->tree.nodes = 256;
    d->tree.buffer = 64;
}

/* docs/rap.md, "Two-dimensional ranges": 32 bits a side from 0, (PC,
 * data address), and the tree's own defaults (above) over the 64-bit
 * interleaved key. */
static void rap2_documented(void *desc) {
    hwp_rap2_desc *d = (hwp_rap2_desc *)desc;
    memset(d, 0, sizeof *d);
    d->x_base = 0;
    d->y_base = 0;
    d->x_bits = 32;
    d->y_bits = 32;
    d->x_source = HWP_RAP_SRC_PC;
    d->y_source = HWP_RAP_SRC_ADDR;
    rap_documented(&d->tree);
}

static const char *const rap2_bad_fields[] = {
    "x_bits", "y_bits", "x_base", "y_base", "x_source", "y_source",
    "key_base", "source", "key_bits", "eps", "nodes"};

static void rap2_bad(void *desc, size_t i) {
    hwp_rap2_desc *d = (hwp_rap2_desc *)desc;
    switch (i) {
    case 0: d->x_bits = 64; break;
    case 1: d->y_bits = 41; break; /* 24 + 41 > 64 */
    case 2: d->x_base = ~(uint64_t)0 - 5; break;
    case 3: d->y_base = ~(uint64_t)0 - 5; break;
    case 4: d->x_source = 4; break;
    case 5: d->y_source = 4; break;
    case 6: d->tree.key_base = 8; break;
    case 7: d->tree.source = 1; break;
    case 8: d->tree.key_bits = 12; break;
    case 9: d->tree.eps = 0.0 - 1.0; break;
    default: d->tree.nodes = 3; break;
    }
}

static size_t rap2_bytes(const void *d) {
    return hwp_rap2_bytes((const hwp_rap2_desc *)d);
}
static hwp_status rap2_init(void *x, void *mem, size_t n, const void *d,
                            hwp_cost *cost) {
    return hwp_rap2_init((hwp_rap2 *)x, mem, n, (const hwp_rap2_desc *)d, cost);
}
static hwp_status rap2_reset(void *x) { return hwp_rap2_reset((hwp_rap2 *)x); }
static hwp_status rap2_flush(void *x) { return hwp_rap2_flush((hwp_rap2 *)x); }
static hwp_status rap2_merge(void *dst, const void *src) {
    return hwp_rap2_merge((hwp_rap2 *)dst, (const hwp_rap2 *)src);
}
static hwp_status rap2_stats(const void *x, hwp_conf_stats *out) {
    hwp_rap2_stats st;
    hwp_status s = hwp_rap2_get_stats((const hwp_rap2 *)x, &st);
    out->events = st.events;
    out->dropped = st.dropped;
    out->evicted = st.evicted;
    out->cycles = st.cycles;
    return s;
}
static void rap2_write_json(const void *x, const hwp_writer *w) {
    hwp_rap2_write_json((const hwp_rap2 *)x, w);
}
static hwp_status rap2_read_desc(void *d, const char *s, size_t n,
                                 hwp_json_err *err) {
    return hwp_rap2_read_desc((hwp_rap2_desc *)d, s, n, err);
}
static hwp_status rap2_read_json(void *x, const char *s, size_t n,
                                 hwp_json_err *err) {
    return hwp_rap2_read_json((hwp_rap2 *)x, s, n, err);
}

/* Code x data: a hot loop over an array, a warm region, scattered pairs,
 * and pairs outside the domain (dropped). */
static void rap2_feed(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    uint64_t i;
    for (i = first; i < first + n; i++) {
        uint64_t h = hwp_mix64(seed ^ (i * 0x9E3779B97F4A7C15ull));
        uint64_t pc = (h & 3u) == 0   ? 0x400100 + 4 * ((h >> 8) & 15u)
                      : (h & 3u) == 1 ? 0x408000 + ((h >> 8) & 4095u)
                                      : (h >> 20);
        uint64_t a = (h & 3u) == 0 ? 0x8000 + 8 * ((h >> 16) & 63u) : (h >> 40);
        hwp_rap2_add((hwp_rap2 *)x, pc, a, 1);
    }
}

/* As for the 1-D tree: the same weight, and for every hot rectangle of
 * the whole stream's tree the two instances' bounds overlap. */
static const char *rap2_merge_check(const void *whole, const void *merged) {
    const hwp_rap2 *a = (const hwp_rap2 *)whole, *b = (const hwp_rap2 *)merged;
    hwp_rap_stats sa, sb;
    hwp_rap2_rect hot[64];
    size_t n, i;
    if (hwp_rap2_get_stats(a, &sa) != HWP_OK ||
        hwp_rap2_get_stats(b, &sb) != HWP_OK)
        return "rap2: stats refused";
    if (sa.events != sb.events || sa.dropped != sb.dropped ||
        sa.n + sa.buffered != sb.n + sb.buffered)
        return "rap2: merged weight differs from the whole stream's";
    n = hwp_rap2_hot(a, 0.01, hot, 64);
    if (!n) return "rap2: the whole stream has no hot rectangle";
    for (i = 0; i < n && i < 64; i++) {
        hwp_rap_est ea, eb;
        if (hwp_rap2_query(a, &hot[i].box, &ea) != HWP_OK ||
            hwp_rap2_query(b, &hot[i].box, &eb) != HWP_OK)
            return "rap2: query refused";
        if (ea.lower > eb.upper || eb.lower > ea.upper)
            return "rap2: merged bounds exclude the whole stream's";
    }
    return NULL;
}

/* ---- calls on a handle never initialised -------------------------------- */

static void unset_visit(void *ctx, const hwp_rap_range *range) {
    (void)ctx;
    (void)range;
}
static uint64_t unset_exact(void *ctx, uint64_t lo, uint64_t hi) {
    (void)ctx;
    return hi - lo;
}

static const char *rap_unset(void *x) {
    const hwp_rap *r = (const hwp_rap *)x;
    hwp_rap_desc d;
    hwp_rap_est e;
    hwp_rap_range out[4];
    hwp_rap_acc acc;
    uint64_t lo, hi;
    char buf[256];
    hwp_bufwriter b;
    hwp_writer svg = hwp_writer_buf(&b, buf, sizeof buf);
    HWP_CONF_TOOK(hwp_rap_get_desc(r, &d) == HWP_OK);
    HWP_CONF_TOOK(hwp_rap_foreach(r, unset_visit, NULL) == HWP_OK);
    HWP_CONF_TOOK(hwp_rap_query(r, 0, 100, &e) == HWP_OK);
    HWP_CONF_TOOK(hwp_rap_estimate(r, 0, 100, &lo, &hi) == HWP_OK);
    HWP_CONF_TOOK(hwp_rap_bound(r) != 0);
    HWP_CONF_TOOK(hwp_rap_hot(r, 0.1, out, 4) != 0);
    HWP_CONF_TOOK(hwp_rap_top(r, 8, out, 4) != 0);
    HWP_CONF_TOOK(hwp_rap_accuracy(r, 0.1, unset_exact, NULL, &acc) == HWP_OK);
    HWP_CONF_TOOK(hwp_rap_write_svg_range(r, &svg, 0, 100) == HWP_OK);
    HWP_CONF_TOOK_TEXT(hwp_rap_write_text(r, &w));
    HWP_CONF_TOOK_TEXT(hwp_rap_write_svg(r, &w));
    return NULL;
}

static void unset_visit2(void *ctx, const hwp_rap2_rect *rect) {
    (void)ctx;
    (void)rect;
}
static uint64_t unset_exact2(void *ctx, const hwp_rap2_box *box) {
    (void)ctx;
    (void)box;
    return 0;
}

static const char *rap2_unset(void *x) {
    const hwp_rap2 *r = (const hwp_rap2 *)x;
    hwp_rap2_desc d;
    hwp_rap2_box box;
    hwp_rap2_rect out[4];
    hwp_rap_est e;
    hwp_rap_acc acc;
    memset(&box, 0, sizeof box);
    box.x_hi = box.y_hi = 100;
    HWP_CONF_TOOK(hwp_rap2_get_desc(r, &d) == HWP_OK);
    HWP_CONF_TOOK(hwp_rap2_foreach(r, unset_visit2, NULL) == HWP_OK);
    HWP_CONF_TOOK(hwp_rap2_query(r, &box, &e) == HWP_OK);
    HWP_CONF_TOOK(hwp_rap2_bound(r) != 0);
    HWP_CONF_TOOK(hwp_rap2_hot(r, 0.1, out, 4) != 0);
    HWP_CONF_TOOK(hwp_rap2_accuracy(r, 0.1, unset_exact2, NULL, &acc) == HWP_OK);
    HWP_CONF_TOOK_TEXT(hwp_rap2_write_text(r, &w));
    return NULL;
}

const hwp_conf_row hwp_conf_rap[] = {
    {"rap", sizeof(hwp_rap_desc), sizeof(hwp_rap), rap_small, rap_documented,
     rap_bad_fields, sizeof rap_bad_fields / sizeof rap_bad_fields[0],
     rap_bad, rap_bytes, rap_init, rap_reset, rap_flush, rap_merge,
     rap_stats, rap_write_json, rap_read_desc, rap_read_json, rap_feed,
     rap_merge_check, rap_unset, NULL},
    {"rap2", sizeof(hwp_rap2_desc), sizeof(hwp_rap2), rap2_small,
     rap2_documented, rap2_bad_fields,
     sizeof rap2_bad_fields / sizeof rap2_bad_fields[0], rap2_bad, rap2_bytes,
     rap2_init, rap2_reset, rap2_flush, rap2_merge, rap2_stats,
     rap2_write_json, rap2_read_desc, rap2_read_json, rap2_feed,
     rap2_merge_check, rap2_unset, NULL},
    {NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL}};
