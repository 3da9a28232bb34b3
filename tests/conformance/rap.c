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

const hwp_conf_row hwp_conf_rap[] = {
    {"rap", sizeof(hwp_rap_desc), sizeof(hwp_rap), rap_small, rap_documented,
     rap_bad_fields, sizeof rap_bad_fields / sizeof rap_bad_fields[0],
     rap_bad, rap_bytes, rap_init, rap_reset, rap_flush, rap_merge,
     rap_stats, rap_write_json, rap_read_desc, rap_read_json, rap_feed,
     rap_merge_check},
    {NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL}};
