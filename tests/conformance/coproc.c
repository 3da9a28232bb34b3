/* SPDX-License-Identifier: MIT */
/* tests/conformance/coproc.c: the co-processor (cp, running load-value
 * profiling) and its baseline, the buffered value sampler (cp_simple). */
#include "conformance.h"

#include <string.h>

/* Event i of a stream fixed by seed: a load among 96 PCs whose value is
 * invariant for some and spread over a few values for others, with a few
 * non-load instructions between loads. */
static void conf_cp_event(uint64_t seed, uint64_t i, uint64_t *pc,
                          uint64_t *value, uint32_t *gap) {
    uint64_t h = hwp_mix64(seed ^ hwp_mix64(i + 1));
    uint64_t k = h % 96u;
    *pc = 0x400000u + 4u * k;
    *value = (k % 3u == 0) ? k : (k % 3u == 1) ? (h >> 20) % 3u : (h >> 24) % 64u;
    *gap = (uint32_t)((h >> 40) % 4u);
}

static void cp_small(void *dv) {
    hwp_cp_desc *d = (hwp_cp_desc *)dv;
    d->lvp_loads = 256;
    d->table_entries = 64;
    d->bit_table_bits = 1024;
    d->seed = 7;
}

static void cp_documented(void *dv) {
    hwp_cp_desc *d = (hwp_cp_desc *)dv;
    d->buffer_bytes = 2048;
    d->fields = HWP_CP_F_ALL;
    d->cam_entries = 256;
    d->data_words = 1024;
    d->bit_table_bits = 8192;
    d->n_hashes = 2;
    d->clock_x16 = 16;
    d->table_entries = 4096;
    d->lvp_loads = 2048;
    d->lvp_values = 8;
}

static const char *const cp_bad_fields[] = {
    "buffer_bytes", "fields", "cam_entries", "data_words", "bit_table_bits",
    "n_hashes", "clock_x16", "table_entries", "lvp_loads", "lvp_values"};

static void cp_bad(void *dv, size_t i) {
    hwp_cp_desc *d = (hwp_cp_desc *)dv;
    switch (i) {
    case 0: d->buffer_bytes = 35; break; /* cannot hold one 36-byte sample */
    case 1: d->fields = 64; break;
    case 2: d->cam_entries = 100; break;
    case 3: d->data_words = 8; break;
    case 4: d->bit_table_bits = 32; break;
    case 5: d->n_hashes = 5; break;
    case 6: d->clock_x16 = 2000; break;
    case 7: d->table_entries = 3; break;
    case 8: d->lvp_loads = 1000; break;
    default: d->lvp_values = 65; break;
    }
}

static size_t cp_bytes(const void *d) { return hwp_cp_bytes((const hwp_cp_desc *)d); }
static hwp_status cp_init(void *x, void *mem, size_t n, const void *d, hwp_cost *c) {
    return hwp_cp_init((hwp_cp *)x, mem, n, (const hwp_cp_desc *)d, c);
}
static hwp_status cp_reset(void *x) { return hwp_cp_reset((hwp_cp *)x); }
static hwp_status cp_flush(void *x) { return hwp_cp_flush((hwp_cp *)x); }
static hwp_status cp_merge(void *d, const void *s) {
    return hwp_cp_merge((hwp_cp *)d, (const hwp_cp *)s);
}
static hwp_status cp_stats(const void *x, hwp_conf_stats *o) {
    hwp_cp_stats s;
    hwp_status st = hwp_cp_get_stats((const hwp_cp *)x, &s);
    o->events = s.events;
    o->dropped = s.dropped;
    o->evicted = s.evicted;
    o->cycles = s.cycles;
    return st;
}
static void cp_write(const void *x, const hwp_writer *w) {
    hwp_cp_write_json((const hwp_cp *)x, w);
}
static hwp_status cp_read_desc(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_cp_read_desc((hwp_cp_desc *)d, s, n, e);
}
static hwp_status cp_read_json(void *x, const char *s, size_t n, hwp_json_err *e) {
    return hwp_cp_read_json((hwp_cp *)x, s, n, e);
}

/* Load-value profiling with small slots so interrupts happen often. */
static void cp_feed(void *xv, uint64_t seed, uint64_t first, uint64_t n) {
    hwp_cp *x = (hwp_cp *)xv;
    uint64_t i;
    if (x->app == HWP_CP_APP_NONE) {
        hwp_cp_lvp_desc ld;
        memset(&ld, 0, sizeof ld);
        ld.slots = 16;
        ld.idle_limit = 4096;
        ld.visit_loads = 2048;
        hwp_cp_lvp_start(x, &ld);
    }
    for (i = first; i < first + n; i++) {
        uint64_t pc, v;
        uint32_t gap;
        conf_cp_event(seed, i, &pc, &v, &gap);
        hwp_cp_tick(x, gap);
        hwp_cp_load(x, pc, pc * 8u, v);
    }
}

/* The halves' program state differs at the cut (partition, masks, slots),
 * so the bound is on accounting: every instruction counted once, and the
 * merged profile holds samples from both halves. */
static const char *cp_merge_check(const void *wv, const void *mv) {
    hwp_cp_stats ws, ms;
    hwp_cp_get_stats((const hwp_cp *)wv, &ws);
    hwp_cp_get_stats((const hwp_cp *)mv, &ms);
    if (ws.events != ms.events) return "events differ";
    if (ms.class_passed != ws.class_passed) return "class-passing loads differ";
    if (hwp_cp_lvp_estimates((const hwp_cp *)mv, NULL, 0) == 0) return "merged profile empty";
    return NULL;
}

/* ---- the buffered sampler ---------------------------------------------- */

static void cs_small(void *dv) {
    hwp_cp_simple_desc *d = (hwp_cp_simple_desc *)dv;
    d->period = 50;
    d->buffer = 16;
    d->entries = 1024;
    d->seed = 3;
}

static void cs_documented(void *dv) {
    hwp_cp_simple_desc *d = (hwp_cp_simple_desc *)dv;
    d->period = 10000;
    d->buffer = 128;
    d->entries = 16384;
    d->min_samples = 64;
}

static const char *const cs_bad_fields[] = {"period", "buffer", "entries",
                                            "min_samples"};

static void cs_bad(void *dv, size_t i) {
    hwp_cp_simple_desc *d = (hwp_cp_simple_desc *)dv;
    switch (i) {
    case 0: d->period = 1; break;
    case 1: d->buffer = (1u << 20) + 1u; break;
    case 2: d->entries = 100; break;
    default: d->min_samples = 0x80000000u; break;
    }
}

static size_t cs_bytes(const void *d) {
    return hwp_cp_simple_bytes((const hwp_cp_simple_desc *)d);
}
static hwp_status cs_init(void *x, void *mem, size_t n, const void *d, hwp_cost *c) {
    return hwp_cp_simple_init((hwp_cp_simple *)x, mem, n,
                              (const hwp_cp_simple_desc *)d, c);
}
static hwp_status cs_reset(void *x) { return hwp_cp_simple_reset((hwp_cp_simple *)x); }
static hwp_status cs_flush(void *x) { return hwp_cp_simple_flush((hwp_cp_simple *)x); }
static hwp_status cs_merge(void *d, const void *s) {
    return hwp_cp_simple_merge((hwp_cp_simple *)d, (const hwp_cp_simple *)s);
}
static hwp_status cs_stats(const void *x, hwp_conf_stats *o) {
    hwp_cp_simple_stats s;
    hwp_status st = hwp_cp_simple_get_stats((const hwp_cp_simple *)x, &s);
    o->events = s.events;
    o->dropped = s.dropped;
    o->evicted = s.evicted;
    o->cycles = s.cycles;
    return st;
}
static void cs_write(const void *x, const hwp_writer *w) {
    hwp_cp_simple_write_json((const hwp_cp_simple *)x, w);
}
static hwp_status cs_read_desc(void *d, const char *s, size_t n, hwp_json_err *e) {
    return hwp_cp_simple_read_desc((hwp_cp_simple_desc *)d, s, n, e);
}
static hwp_status cs_read_json(void *x, const char *s, size_t n, hwp_json_err *e) {
    return hwp_cp_simple_read_json((hwp_cp_simple *)x, s, n, e);
}

static void cs_feed(void *xv, uint64_t seed, uint64_t first, uint64_t n) {
    uint64_t i;
    for (i = first; i < first + n; i++) {
        uint64_t pc, v;
        uint32_t gap;
        conf_cp_event(seed, i, &pc, &v, &gap);
        hwp_cp_simple_load((hwp_cp_simple *)xv, pc, v);
    }
}

/* The halves' countdowns differ at the cut (each starts from its seed), so
 * which loads are sampled differs: loads add exactly and the sample count
 * stays within a few of the whole stream's. */
static const char *cs_merge_check(const void *wv, const void *mv) {
    hwp_cp_simple_stats ws, ms;
    hwp_cp_simple_get_stats((const hwp_cp_simple *)wv, &ws);
    hwp_cp_simple_get_stats((const hwp_cp_simple *)mv, &ms);
    if (ws.events != ms.events) return "loads differ";
    if (ms.samples + 3u < ws.samples || ms.samples > ws.samples + 3u)
        return "sample counts differ by more than the cut's 3";
    return NULL;
}

/* ---- calls on handles never initialised ------------------------------- */

static void unset_characterised(void *ctx, const hwp_cp_vprof *p) {
    (void)ctx;
    (void)p;
}

/* Every host call; the routines' resources (hwp_cp_cam_*, dread, ireg,
 * ...) run inside a loaded program, on a live instance, like hot paths. */
static const char *cp_unset(void *xv) {
    hwp_cp *x = (hwp_cp *)xv;
    hwp_cp_program prog;
    hwp_cp_lvp_desc ld;
    hwp_cp_est est[2];
    hwp_cp_vprof vp;
    hwp_cp_ctx ctx[2];
    uint64_t t, nt, sites[2] = {0x10, 0x20};
    memset(&prog, 0, sizeof prog);
    memset(&ld, 0, sizeof ld);
    HWP_CONF_TOOK(hwp_cp_program_load(x, &prog) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_sync(x) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_filter_classes(x, HWP_CLS_ALL) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_filter_region(x, 0, 0) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_filter_mask_pc(x, 0x40) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_filter_clear(x) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_filter_idle(x, 100) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_host_data(x, 0) != 0);
    HWP_CONF_TOOK(hwp_cp_host_cam(x, 0) != 0);
    hwp_cp_host_reset(x);
    HWP_CONF_TOOK(hwp_cp_lvp_start(x, &ld) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_lvp_estimates(x, est, 2) != 0);
    HWP_CONF_TOOK(hwp_cp_lvp_value(x, 0x40, &vp));
    HWP_CONF_TOOK(hwp_cp_lvp_on_characterised(x, unset_characterised, NULL) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_lvp_invalidate(x, 0x40) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_edge_start(x) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_edge(x, 0x40, &t, &nt));
    HWP_CONF_TOOK(hwp_cp_edge_target(x, 0x40, 0x80) != 0);
    HWP_CONF_TOOK(hwp_cp_callstack_start(x, 0, HWP_CLS_ALL, 4) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_callstack_count(x, sites, 2) != 0);
    HWP_CONF_TOOK(hwp_cp_callstack_contexts(x, ctx, 2) != 0);
    HWP_CONF_TOOK(hwp_cp_memdep_start(x, 3) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_memdep_count(x, 0x40, 0x80) != 0);
    HWP_CONF_TOOK(hwp_cp_conflict_start(x, 6, 64) == HWP_OK);
    HWP_CONF_TOOK(hwp_cp_conflict_set(x, 1) != 0);
    HWP_CONF_TOOK(hwp_cp_conflict_block(x, 0x1000) != 0);
    HWP_CONF_TOOK(hwp_cp_conflict_pc(x, 0x40) != 0);
    HWP_CONF_TOOK_TEXT(hwp_cp_write_text(x, &w));
    return NULL;
}

static const char *cs_unset(void *xv) {
    hwp_cp_est est[2];
    HWP_CONF_TOOK(hwp_cp_simple_estimates((const hwp_cp_simple *)xv, est, 2) != 0);
    HWP_CONF_TOOK_TEXT(hwp_cp_simple_write_text((const hwp_cp_simple *)xv, &w));
    return NULL;
}

const hwp_conf_row hwp_conf_coproc[] = {
    {"cp", sizeof(hwp_cp_desc), sizeof(hwp_cp), cp_small, cp_documented,
     cp_bad_fields, sizeof cp_bad_fields / sizeof cp_bad_fields[0], cp_bad,
     cp_bytes, cp_init, cp_reset, cp_flush, cp_merge, cp_stats, cp_write,
     cp_read_desc, cp_read_json, cp_feed, cp_merge_check, cp_unset, NULL},
    {"cp_simple", sizeof(hwp_cp_simple_desc), sizeof(hwp_cp_simple), cs_small,
     cs_documented, cs_bad_fields, sizeof cs_bad_fields / sizeof cs_bad_fields[0],
     cs_bad, cs_bytes, cs_init, cs_reset, cs_flush, cs_merge, cs_stats, cs_write,
     cs_read_desc, cs_read_json, cs_feed, cs_merge_check, cs_unset, NULL},
    {NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL}};
