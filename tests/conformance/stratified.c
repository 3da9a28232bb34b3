/* SPDX-License-Identifier: MIT */
/* tests/conformance/stratified.c: the contract rows of the stratified
 * model (Sastry, Bodik and Smith, "Rapid Profiling via Stratified
 * Sampling", ISCA 2001): the compressor (strat) and the host-side
 * profile it feeds (strat_acc). */
#include "conformance.h"

#include "hwprof/stratified.h"

/* The seeded stream: event i of seed s, a Zipf-like skew from squaring
 * a uniform draw, so some tuples repeat often and most rarely. */
static void strat_conf_tuple(uint64_t seed, uint64_t i, uint32_t *kind,
                             uint64_t *pc, uint64_t *w) {
    uint64_t r = hwp_mix64(seed * 0x9E3779B97F4A7C15ull + i);
    uint64_t u = (r >> 40) & 0xFFFF;
    u = (u * u) >> 22; /* 0..1023, skewed to small */
    *kind = (uint32_t)(r & 1);
    *pc = 0x400000 + 4 * (u % 61);
    *w = u;
}

/* ---- strat ---------------------------------------------------------- */

static void strat_small(void *p) {
    hwp_strat_desc *d = (hwp_strat_desc *)p;
    hwp_zero(d, sizeof *d);
    d->entries = 64;
    d->rate = 8;
    d->queue = 16;
}

static void strat_documented(void *p) {
    hwp_strat_desc *d = (hwp_strat_desc *)p;
    hwp_zero(d, sizeof *d);
    d->scheme = HWP_STRAT_SAMPLED;
    d->sampler = HWP_STRAT_PERIODIC;
    d->rate = 256;
    d->entries = 2048;
    d->hash = HWP_STRAT_HASH_PAPER;
    d->tag_bits = 2;
    d->count_bits = 8;
    d->miss_bits = 3;
    d->queue = 100;
    d->select = HWP_STRAT_SEL(HWP_STRAT_KIND_VALUE);
}

static const char *const strat_bad_fields[] = {
    "scheme", "sampler", "hash", "rate", "entries", "ways", "tag_bits",
    "count_bits", "miss_bits", "l2_entries", "l2_ways", "queue"};

static void strat_bad(void *p, size_t i) {
    hwp_strat_desc *d = (hwp_strat_desc *)p;
    switch (i) {
    case 0: d->scheme = 7; break;
    case 1: d->sampler = 5; break;
    case 2: d->hash = 2; break;
    case 3: d->rate = (1u << 30) + 1u; break;
    case 4: d->entries = 3; break;
    case 5: d->scheme = HWP_STRAT_TAGGED; d->ways = 32; break;
    case 6: d->scheme = HWP_STRAT_TAGGED; d->tag_bits = 17; break;
    case 7: d->count_bits = 33; break;
    case 8: d->scheme = HWP_STRAT_TAGGED; d->miss_bits = 9; break;
    case 9: d->l2_entries = 12; break;
    case 10: d->l2_entries = 0; d->l2_ways = 4; break;
    default: d->queue = (1u << 20) + 1u; break;
    }
}

static size_t strat_bytes(const void *d) { return hwp_strat_bytes((const hwp_strat_desc *)d); }
static hwp_status strat_init(void *x, void *mem, size_t n, const void *d, hwp_cost *c) {
    return hwp_strat_init((hwp_strat *)x, mem, n, (const hwp_strat_desc *)d, c);
}
static hwp_status strat_reset(void *x) { return hwp_strat_reset((hwp_strat *)x); }
static hwp_status strat_flush(void *x) { return hwp_strat_flush((hwp_strat *)x); }
static hwp_status strat_merge(void *d, const void *s) {
    return hwp_strat_merge((hwp_strat *)d, (const hwp_strat *)s);
}
static hwp_status strat_stats(const void *x, hwp_conf_stats *out) {
    hwp_strat_stats st;
    hwp_status r = hwp_strat_get_stats((const hwp_strat *)x, &st);
    out->events = st.events;
    out->dropped = st.dropped;
    out->evicted = st.evicted;
    out->cycles = st.cycles;
    return r;
}
static void strat_write_json(const void *x, const hwp_writer *w) {
    hwp_strat_write_json((const hwp_strat *)x, w);
}
static hwp_status strat_read_desc(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_strat_read_desc((hwp_strat_desc *)d, s, n, e);
}
static hwp_status strat_read_json(void *x, const char *s, size_t n, hwp_json_err *e) {
    return hwp_strat_read_json((hwp_strat *)x, s, n, e);
}
static void strat_feed(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    uint64_t i;
    for (i = first; i < first + n; i++) {
        uint32_t kind;
        uint64_t pc, w;
        strat_conf_tuple(seed, i, &kind, &pc, &w);
        hwp_strat_push((hwp_strat *)x, kind, pc, w);
    }
}

/* The compressor's record is its counters; the halves' tables are
 * split at the cut, so only these are exact: every event is counted,
 * and the first level's samples differ by at most one per stratum
 * (each counter restarts at the cut). */
static const char *strat_merge_check(const void *whole, const void *merged) {
    hwp_strat_stats a, b;
    hwp_strat_get_stats((const hwp_strat *)whole, &a);
    hwp_strat_get_stats((const hwp_strat *)merged, &b);
    if (a.events != b.events) return "strat: merged events differ from the whole stream's";
    if (a.dropped != b.dropped) return "strat: merged drops differ from the whole stream's";
    if (b.samples > a.samples + 2048u || a.samples > b.samples + 2048u)
        return "strat: merged samples differ by more than one per stratum";
    return NULL;
}

/* ---- strat_acc -------------------------------------------------------- */

static void acc_small(void *p) {
    hwp_strat_acc_desc *d = (hwp_strat_acc_desc *)p;
    hwp_zero(d, sizeof *d);
    d->tuples = 4096;
    d->strata = 8;
}

static void acc_documented(void *p) {
    hwp_strat_acc_desc *d = (hwp_strat_acc_desc *)p;
    hwp_zero(d, sizeof *d);
    d->tuples = 65536;
    d->pcs = 16384;
    d->replace = HWP_STRAT_ACC_EVICT;
    d->min_samples = 30;
}

static const char *const acc_bad_fields[] = {"tuples", "pcs", "strata", "replace"};

static void acc_bad(void *p, size_t i) {
    hwp_strat_acc_desc *d = (hwp_strat_acc_desc *)p;
    switch (i) {
    case 0: d->tuples = (1u << 28) + 1u; break;
    case 1: d->pcs = (1u << 28) + 1u; break;
    case 2: d->strata = 3; break;
    default: d->replace = 2; break;
    }
}

static size_t acc_bytes(const void *d) {
    return hwp_strat_acc_bytes((const hwp_strat_acc_desc *)d);
}
static hwp_status acc_init(void *x, void *mem, size_t n, const void *d, hwp_cost *c) {
    return hwp_strat_acc_init((hwp_strat_acc *)x, mem, n, (const hwp_strat_acc_desc *)d, c);
}
static hwp_status acc_reset(void *x) { return hwp_strat_acc_reset((hwp_strat_acc *)x); }
static hwp_status acc_flush(void *x) { return hwp_strat_acc_flush((hwp_strat_acc *)x); }
static hwp_status acc_merge(void *d, const void *s) {
    return hwp_strat_acc_merge((hwp_strat_acc *)d, (const hwp_strat_acc *)s);
}
static hwp_status acc_stats(const void *x, hwp_conf_stats *out) {
    hwp_strat_acc_stats st;
    hwp_status r = hwp_strat_acc_get_stats((const hwp_strat_acc *)x, &st);
    out->events = st.events;
    out->dropped = st.dropped;
    out->evicted = st.evicted;
    out->cycles = st.cycles;
    return r;
}
static void acc_write_json(const void *x, const hwp_writer *w) {
    hwp_strat_acc_write_json((const hwp_strat_acc *)x, w);
}
static hwp_status acc_read_desc(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_strat_acc_read_desc((hwp_strat_acc_desc *)d, s, n, e);
}
static hwp_status acc_read_json(void *x, const char *s, size_t n, hwp_json_err *e) {
    return hwp_strat_acc_read_json((hwp_strat_acc *)x, s, n, e);
}
/* Messages as a compressor with 8 strata would deliver them. */
static void acc_feed(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    uint64_t i;
    for (i = first; i < first + n; i++) {
        hwp_strat_msg m;
        strat_conf_tuple(seed, i, &m.kind, &m.pc, &m.w);
        m.count = 1 + (hwp_mix64(seed ^ i) & 15);
        m.stratum = (uint32_t)(m.w & 7);
        m.samples = 1;
        m.reserved = 0;
        hwp_strat_acc_fold((hwp_strat_acc *)x, &m, 1);
    }
}

/* With room for every tuple the merged profile holds the same counts
 * and stats as the whole stream's; only the tables' slot order (and so
 * the report's order) may differ. */
static const char *acc_merge_check(const void *whole, const void *merged) {
    const hwp_strat_acc *a = (const hwp_strat_acc *)whole;
    const hwp_strat_acc *b = (const hwp_strat_acc *)merged;
    hwp_strat_acc_stats sa, sb;
    hwp_strat_msg m;
    uint32_t cur = 0;
    hwp_strat_acc_get_stats(a, &sa);
    hwp_strat_acc_get_stats(b, &sb);
    if (sa.events != sb.events || sa.total != sb.total || sa.tuples != sb.tuples ||
        sa.pcs != sb.pcs || sa.dropped != sb.dropped)
        return "strat_acc: merged stats differ from the whole stream's";
    while (hwp_strat_acc_next(a, &cur, &m)) {
        if (hwp_strat_acc_count(b, m.kind, m.pc, m.w) != m.count)
            return "strat_acc: a merged tuple count differs";
        if (hwp_strat_acc_estimate(b, m.kind, m.pc, m.w) !=
            hwp_strat_acc_estimate(a, m.kind, m.pc, m.w))
            return "strat_acc: a merged estimate differs";
        if (hwp_strat_acc_pc_count(b, m.kind, m.pc) != hwp_strat_acc_pc_count(a, m.kind, m.pc))
            return "strat_acc: a merged pc count differs";
    }
    return NULL;
}

/* ---- calls on handles never initialised ------------------------------- */

static const char *strat_unset(void *x) {
    HWP_CONF_TOOK(hwp_strat_pending((const hwp_strat *)x) != 0);
    HWP_CONF_TOOK_TEXT(hwp_strat_write_text((const hwp_strat *)x, &w));
    return NULL;
}

/* The three writers (add, fold, the handler) return nothing: on a zeroed
 * accumulator they must neither crash nor count, so the queries after
 * them still find nothing. */
static const char *acc_unset(void *x) {
    hwp_strat_acc *a = (hwp_strat_acc *)x;
    hwp_strat_msg m;
    hwp_strat_value v[2];
    hwp_strat_pc pcs[2];
    hwp_strat_metric_desc md;
    hwp_strat_metric out;
    uint32_t cursor = 0;
    memset(&m, 0, sizeof m);
    memset(&md, 0, sizeof md);
    m.pc = 0x40;
    m.w = 7;
    m.count = m.samples = 1;
    hwp_strat_acc_add(a, HWP_STRAT_KIND_VALUE, 0x40, 7, 1);
    hwp_strat_acc_fold(a, &m, 1);
    hwp_strat_acc_handler(a, &m, 1);
    HWP_CONF_TOOK(hwp_strat_acc_count(a, HWP_STRAT_KIND_VALUE, 0x40, 7) != 0);
    HWP_CONF_TOOK(hwp_strat_acc_pc_count(a, HWP_STRAT_KIND_VALUE, 0x40) != 0);
    HWP_CONF_TOOK(hwp_strat_acc_invariance(a, HWP_STRAT_KIND_VALUE, 0x40, 7) != 0.0);
    HWP_CONF_TOOK(hwp_strat_acc_estimate(a, HWP_STRAT_KIND_VALUE, 0x40, 7) != 0.0);
    HWP_CONF_TOOK(hwp_strat_acc_top_values(a, HWP_STRAT_KIND_VALUE, 0x40, v, 2) != 0);
    HWP_CONF_TOOK(hwp_strat_acc_top_pcs(a, HWP_STRAT_KIND_VALUE, pcs, 2) != 0);
    HWP_CONF_TOOK(hwp_strat_acc_next(a, &cursor, &m));
    HWP_CONF_TOOK(hwp_strat_invariance_error(a, a, &md, &out) == HWP_OK);
    HWP_CONF_TOOK_TEXT(hwp_strat_acc_write_text(a, &w));
    return NULL;
}

const hwp_conf_row hwp_conf_stratified[] = {
    {"strat", sizeof(hwp_strat_desc), sizeof(hwp_strat), strat_small,
     strat_documented, strat_bad_fields,
     sizeof strat_bad_fields / sizeof strat_bad_fields[0], strat_bad, strat_bytes,
     strat_init, strat_reset, strat_flush, strat_merge, strat_stats,
     strat_write_json, strat_read_desc, strat_read_json, strat_feed,
     strat_merge_check, strat_unset, NULL},
    {"strat_acc", sizeof(hwp_strat_acc_desc), sizeof(hwp_strat_acc), acc_small,
     acc_documented, acc_bad_fields, sizeof acc_bad_fields / sizeof acc_bad_fields[0],
     acc_bad, acc_bytes, acc_init, acc_reset, acc_flush, acc_merge, acc_stats,
     acc_write_json, acc_read_desc, acc_read_json, acc_feed, acc_merge_check,
     acc_unset, NULL},
    {NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL},
};
