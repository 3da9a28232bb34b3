/* SPDX-License-Identifier: MIT */
/* tests/conformance/pathprof.c: the path profiler's rows (path stack,
 * Hot Path Table, phase detector) for the conformance driver. */
#include <string.h>

#include "conformance.h"

/* ---- seeded streams: event i depends on (seed, i) only, so two halves
 * fed separately are the whole stream ---------------------------------- */

static uint64_t pp_conf_bits(uint64_t seed, uint64_t i) {
    return hwp_mix64(seed * 0x9E3779B97F4A7C15ull ^ i);
}

/* A loop of four blocks at 0x1000 + 0x20 k, each ending in a branch at
 * +0xc: three forward conditionals (taken to the next block, else falling
 * through into it) and a back-edge; every 16th iteration calls a leaf at
 * 0x8000 (call, forward conditional, return) from block 1. Addresses
 * chain, so no branch is counted as unchained. */
static void pp_conf_feed_path(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    hwp_path *p = (hwp_path *)x;
    uint64_t i;
    for (i = first; i < first + n; i++) {
        uint64_t it = i / 4, k = i % 4, pc = 0x1000 + 0x20 * k + 0xc;
        bool t = pp_conf_bits(seed, i) & 1u;
        if (k == 3) {
            hwp_path_branch(p, pc, 0x1000, HWP_CLS_BR_COND, true, 4, 0);
        } else if (k == 1 && it % 16 == 0) {
            hwp_path_branch(p, pc - 8, 0x8000, HWP_CLS_CALL, true, 2, 0);
            hwp_path_branch(p, 0x8008, t ? 0x8010 : 0x800c, HWP_CLS_BR_COND, t, 3, 0);
            hwp_path_branch(p, 0x8014, pc - 4, HWP_CLS_RET, true, 2, 0);
            hwp_path_branch(p, pc, pc + 4, HWP_CLS_BR_COND, false, 1, 0);
        } else {
            hwp_path_branch(p, pc, t ? 0x1000 + 0x20 * (k + 1) : pc + 4,
                            HWP_CLS_BR_COND, t, 4, 0);
        }
    }
}

/* 40 paths (a fixed universe that no 4-way set of a 512-entry table
 * overflows), drawn with a skew so counts differ. */
static hwp_path_pd pp_conf_pd(uint64_t seed, uint64_t i) {
    uint64_t r = pp_conf_bits(seed, i), id = (r % 40) * (r >> 40 & 1) + (r >> 8) % 8;
    hwp_path_pd pd;
    pd.start = 0x400000 + 0x40 * (id % 40);
    pd.shape = 4u | (id & 3u);
    return pd;
}

static void pp_conf_feed_hpt(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    uint64_t i;
    for (i = first; i < first + n; i++) {
        hwp_path_pd pd = pp_conf_pd(seed, i);
        hwp_hpt_add((hwp_hpt *)x, &pd, 1);
    }
}

static void pp_conf_feed_phase(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    uint64_t i;
    for (i = first; i < first + n; i++) {
        /* two program phases, alternating every 4,000 events */
        hwp_path_pd pd = pp_conf_pd(seed, i);
        if ((i / 4000) & 1) pd.start += 0x100000;
        hwp_phase_add_path((hwp_phase *)x, &pd, 100);
    }
}

/* ---- path stack -------------------------------------------------------- */

/* Small descs differ from the defaults, so the driver's merge with a
 * documented instance must be refused. */
static void pp_conf_path_small(void *d) {
    memset(d, 0, sizeof(hwp_path_desc));
    ((hwp_path_desc *)d)->depth = 16;
}

static void pp_conf_path_documented(void *v) {
    hwp_path_desc *d = (hwp_path_desc *)v;
    memset(d, 0, sizeof *d);
    d->mode = HWP_PATH_BL;
    d->ops[HWP_PATH_BT_CALL] = HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_PUSH;
    d->ops[HWP_PATH_BT_RETURN] = HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_POP;
    d->ops[HWP_PATH_BT_FORWARD] = HWP_PATH_OP_UPDATE;
    d->ops[HWP_PATH_BT_BACKWARD] = HWP_PATH_OP_UPDATE | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH;
    d->ops[HWP_PATH_BT_INDIRECT] = HWP_PATH_OP_UPDATE | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH;
    d->max_len = 32;
    d->depth = 32;
    d->counter_bits = 8;
    d->metric = HWP_PATH_M_PATHS;
    d->event_mask = HWP_EV_DCMISS;
    d->overflow = HWP_PATH_DROP;
    d->queue = 4;
    d->cycles_per_insn_q8 = 256;
}

static const char *const pp_conf_path_bad_f[] = {
    "mode", "ops", "ext_max", "max_len", "depth", "counter_bits", "metric",
    "overflow", "spill", "queue", "cycles_per_insn_q8"};

static void pp_conf_path_bad(void *v, size_t i) {
    hwp_path_desc *d = (hwp_path_desc *)v;
    switch (i) {
    case 0: d->mode = 9; break;
    case 1: d->mode = HWP_PATH_CUSTOM; d->ops[HWP_PATH_BT_FORWARD] = 0x30; break;
    case 2: d->mode = HWP_PATH_EXT_LOOP; d->ext_max = 8; break;
    case 3: d->max_len = 64; break;
    case 4: d->depth = 65537; break;
    case 5: d->counter_bits = 33; break;
    case 6: d->metric = 9; break;
    case 7: d->overflow = 5; break;
    case 8: d->overflow = HWP_PATH_SPILL; break; /* no callbacks */
    case 9: d->queue = 2000; break;
    default: d->cycles_per_insn_q8 = 1u << 21; break;
    }
}

static size_t pp_conf_path_bytes(const void *d) { return hwp_path_bytes((const hwp_path_desc *)d); }
static hwp_status pp_conf_path_init(void *x, void *m, size_t n, const void *d, hwp_cost *c) {
    return hwp_path_init((hwp_path *)x, m, n, (const hwp_path_desc *)d, c);
}
static hwp_status pp_conf_path_reset(void *x) { return hwp_path_reset((hwp_path *)x); }
static hwp_status pp_conf_path_flush(void *x) { return hwp_path_flush((hwp_path *)x); }
static hwp_status pp_conf_path_merge(void *d, const void *s) {
    return hwp_path_merge((hwp_path *)d, (const hwp_path *)s);
}
static hwp_status pp_conf_path_stats(const void *x, hwp_conf_stats *o) {
    hwp_path_stats st;
    hwp_status s = hwp_path_get_stats((const hwp_path *)x, &st);
    memcpy(o, &st, sizeof *o);
    return s;
}
static void pp_conf_path_json(const void *x, const hwp_writer *w) {
    hwp_path_write_json((const hwp_path *)x, w);
}
static hwp_status pp_conf_path_read_desc(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_path_read_desc((hwp_path_desc *)d, s, n, e);
}
static hwp_status pp_conf_path_read_json(void *x, const char *s, size_t n, hwp_json_err *e) {
    return hwp_path_read_json((hwp_path *)x, s, n, e);
}

/* Cut in two, the stream's open paths at the cut end in the first
 * stack's flush and the second half starts on an empty stack (a cold
 * start, whose path is ignored): the branches are the same, the
 * completed plus ignored paths differ by at most the stack depth + 1. */
static const char *pp_conf_path_check(const void *whole, const void *merged) {
    hwp_path_stats a, b;
    uint64_t ta, tb;
    hwp_path_get_stats((const hwp_path *)whole, &a);
    hwp_path_get_stats((const hwp_path *)merged, &b);
    if (a.events != b.events) return "path: merged branches differ from the whole stream's";
    ta = a.paths + a.dropped;
    tb = b.paths + b.dropped;
    if ((ta > tb ? ta - tb : tb - ta) > a.max_depth_used + 1)
        return "path: merged paths differ by more than the stack's depth + 1";
    return NULL;
}

/* ---- Hot Path Table ---------------------------------------------------- */

static void pp_conf_hpt_small(void *d) {
    memset(d, 0, sizeof(hwp_hpt_desc));
    ((hwp_hpt_desc *)d)->entries = 1024;
}

static void pp_conf_hpt_documented(void *v) {
    hwp_hpt_desc *d = (hwp_hpt_desc *)v;
    memset(d, 0, sizeof *d);
    d->entries = 512;
    d->ways = 4;
    d->index = HWP_HPT_PLB;
    d->repl = HWP_HPT_LFU;
    d->policy = HWP_HPT_PLAIN;
}

static const char *const pp_conf_hpt_bad_f[] = {"entries", "ways", "index", "repl",
                                                "policy", "policy"};

static void pp_conf_hpt_bad(void *v, size_t i) {
    hwp_hpt_desc *d = (hwp_hpt_desc *)v;
    switch (i) {
    case 0: d->entries = 100; break;
    case 1: d->ways = 3; break;
    case 2: d->index = 7; break;
    case 3: d->repl = 5; break;
    case 4: d->policy = 7; break;
    default: d->policy = HWP_HPT_AGING; d->repl = HWP_HPT_LRU; break;
    }
}

static size_t pp_conf_hpt_bytes(const void *d) { return hwp_hpt_bytes((const hwp_hpt_desc *)d); }
static hwp_status pp_conf_hpt_init(void *x, void *m, size_t n, const void *d, hwp_cost *c) {
    return hwp_hpt_init((hwp_hpt *)x, m, n, (const hwp_hpt_desc *)d, c);
}
static hwp_status pp_conf_hpt_reset(void *x) { return hwp_hpt_reset((hwp_hpt *)x); }
static hwp_status pp_conf_hpt_flush(void *x) { return hwp_hpt_flush((hwp_hpt *)x); }
static hwp_status pp_conf_hpt_merge(void *d, const void *s) {
    return hwp_hpt_merge((hwp_hpt *)d, (const hwp_hpt *)s);
}
static hwp_status pp_conf_hpt_stats(const void *x, hwp_conf_stats *o) {
    hwp_hpt_stats st;
    hwp_status s = hwp_hpt_get_stats((const hwp_hpt *)x, &st);
    memcpy(o, &st, sizeof *o);
    return s;
}
static void pp_conf_hpt_json(const void *x, const hwp_writer *w) {
    hwp_hpt_write_json((const hwp_hpt *)x, w);
}
static hwp_status pp_conf_hpt_read_desc(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_hpt_read_desc((hwp_hpt_desc *)d, s, n, e);
}
static hwp_status pp_conf_hpt_read_json(void *x, const char *s, size_t n, hwp_json_err *e) {
    return hwp_hpt_read_json((hwp_hpt *)x, s, n, e);
}

/* No set overflows on this stream, so the merged table holds exactly
 * the whole stream's paths and counts; the hit/miss split differs (a
 * path first seen in each half misses twice), the adds do not. */
static const char *pp_conf_hpt_check(const void *whole, const void *merged) {
    static hwp_path_row a[1024], b[1024];
    const hwp_hpt *w = (const hwp_hpt *)whole, *m = (const hwp_hpt *)merged;
    hwp_hpt_stats sa, sb;
    size_t na = hwp_hpt_export(w, a, 1024), nb = hwp_hpt_export(m, b, 1024), i;
    hwp_hpt_get_stats(w, &sa);
    hwp_hpt_get_stats(m, &sb);
    if (sa.events != sb.events || sa.total != sb.total)
        return "hpt: merged adds or total differ from the whole stream's";
    if (na != nb) return "hpt: merged table holds another number of paths";
    for (i = 0; i < na; i++)
        if (!hwp_path_pd_eq(&a[i].pd, &b[i].pd) || a[i].count != b[i].count)
            return "hpt: merged table differs from the whole stream's";
    return NULL;
}

/* ---- phase detector ---------------------------------------------------- */

static void pp_conf_phase_small(void *v) {
    hwp_phase_desc *d = (hwp_phase_desc *)v;
    memset(d, 0, sizeof *d);
    d->interval = 100000; /* 1,000 events of 100 instructions */
}

static void pp_conf_phase_documented(void *v) {
    hwp_phase_desc *d = (hwp_phase_desc *)v;
    memset(d, 0, sizeof *d);
    d->kind = HWP_PHASE_PATH;
    d->counters = 32;
    d->sig_bits = 6;
    d->table = 32;
    d->interval = 10000000;
    d->threshold = 6000000;
}

static const char *const pp_conf_phase_bad_f[] = {"kind", "counters", "sig_bits",
                                                  "table", "interval", "threshold"};

static void pp_conf_phase_bad(void *v, size_t i) {
    hwp_phase_desc *d = (hwp_phase_desc *)v;
    switch (i) {
    case 0: d->kind = 5; break;
    case 1: d->counters = 30; break;
    case 2: d->sig_bits = 9; break;
    case 3: d->table = 2000; break;
    case 4: d->interval = (uint64_t)1 << 32; break;
    default: d->interval = 1000; d->threshold = 5000; break;
    }
}

static size_t pp_conf_phase_bytes(const void *d) {
    return hwp_phase_bytes((const hwp_phase_desc *)d);
}
static hwp_status pp_conf_phase_init(void *x, void *m, size_t n, const void *d, hwp_cost *c) {
    return hwp_phase_init((hwp_phase *)x, m, n, (const hwp_phase_desc *)d, c);
}
static hwp_status pp_conf_phase_reset(void *x) { return hwp_phase_reset((hwp_phase *)x); }
static hwp_status pp_conf_phase_flush(void *x) { return hwp_phase_flush((hwp_phase *)x); }
static hwp_status pp_conf_phase_merge(void *d, const void *s) {
    return hwp_phase_merge((hwp_phase *)d, (const hwp_phase *)s);
}
static hwp_status pp_conf_phase_stats(const void *x, hwp_conf_stats *o) {
    hwp_phase_stats st;
    hwp_status s = hwp_phase_get_stats((const hwp_phase *)x, &st);
    memcpy(o, &st, sizeof *o);
    return s;
}
static void pp_conf_phase_json(const void *x, const hwp_writer *w) {
    hwp_phase_write_json((const hwp_phase *)x, w);
}
static hwp_status pp_conf_phase_read_desc(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_phase_read_desc((hwp_phase_desc *)d, s, n, e);
}
static hwp_status pp_conf_phase_read_json(void *x, const char *s, size_t n, hwp_json_err *e) {
    return hwp_phase_read_json((hwp_phase *)x, s, n, e);
}

/* A detector is a per-stream tracker: events and instructions add up
 * exactly, the intervals to within the one the cut splits; phase ids
 * are each detector's own, so only the sum bound holds. */
static const char *pp_conf_phase_check(const void *whole, const void *merged) {
    hwp_phase_stats a, b;
    hwp_phase_get_stats((const hwp_phase *)whole, &a);
    hwp_phase_get_stats((const hwp_phase *)merged, &b);
    if (a.events != b.events || a.insns != b.insns)
        return "phase: merged events or instructions differ from the whole stream's";
    if (b.intervals > a.intervals || b.intervals + 1 < a.intervals)
        return "phase: merged intervals differ by more than the cut one";
    return NULL;
}

/* ---- calls on handles never initialised ------------------------------- */

static bool pp_conf_block(void *ctx, uint64_t start, hwp_path_block *b) {
    (void)ctx;
    (void)start;
    (void)b;
    return false;
}

static const char *pp_conf_path_unset(void *x) {
    hwp_path *p = (hwp_path *)x;
    hwp_path_pd pd = {0x1000, 5};
    uint64_t blocks[4];
    HWP_CONF_TOOK(hwp_path_attach(p, NULL, NULL) == HWP_OK);
    HWP_CONF_TOOK(hwp_path_begin(p, 0x1000) == HWP_OK);
    HWP_CONF_TOOK(hwp_path_unwind(p, 1, true) == HWP_OK);
    HWP_CONF_TOOK(hwp_path_overhead_pct(p) != 0.0);
    HWP_CONF_TOOK(hwp_path_decode(p, &pd, pp_conf_block, NULL, blocks, 4) != 0);
    HWP_CONF_TOOK_TEXT(hwp_path_write_text(p, &w));
    return NULL;
}

static const char *pp_conf_hpt_unset(void *x) {
    hwp_hpt *h = (hwp_hpt *)x;
    hwp_path_pd pd = {0x1000, 5};
    hwp_path_row rows[4];
    HWP_CONF_TOOK(hwp_hpt_lookup(h, &pd) != 0);
    HWP_CONF_TOOK(hwp_hpt_export(h, rows, 4) != 0);
    HWP_CONF_TOOK_TEXT(hwp_hpt_write_text(h, &w));
    return NULL;
}

static const char *pp_conf_phase_unset(void *x) {
    HWP_CONF_TOOK_TEXT(hwp_phase_write_text((const hwp_phase *)x, &w));
    return NULL;
}

#define PP_CONF_ROW(name, T, D, p)                                                   \
    {#name, sizeof(D), sizeof(T), p##_small, p##_documented, p##_bad_f,               \
     sizeof p##_bad_f / sizeof *p##_bad_f, p##_bad, p##_bytes, p##_init, p##_reset, \
     p##_flush, p##_merge, p##_stats, p##_json, p##_read_desc, p##_read_json,        \
     pp_conf_feed_##name, p##_check, p##_unset, NULL}

const hwp_conf_row hwp_conf_pathprof[] = {
    PP_CONF_ROW(path, hwp_path, hwp_path_desc, pp_conf_path),
    PP_CONF_ROW(hpt, hwp_hpt, hwp_hpt_desc, pp_conf_hpt),
    PP_CONF_ROW(phase, hwp_phase, hwp_phase_desc, pp_conf_phase),
    {NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL}};
