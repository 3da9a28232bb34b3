/* SPDX-License-Identifier: MIT */
/* tests/conformance/core.c: core.h's row of the model contract. */
#include "conformance.h"

#include <string.h>

/* Timing on, caches small enough to miss on the seeded stream. */
static void core_small(void *dv) {
    hwp_core_desc *d = (hwp_core_desc *)dv;
    d->l1i.sets = 64; d->l1i.ways = 2; d->l1i.line = 64;
    d->l1d.sets = 64; d->l1d.ways = 2; d->l1d.line = 64;
    d->l2.sets = 256; d->l2.ways = 4; d->l2.line = 64;
    d->itlb.sets = 1; d->itlb.ways = 8; d->itlb.line = 4096;
    d->dtlb.sets = 1; d->dtlb.ways = 8; d->dtlb.line = 4096;
    d->rob = 32;
    d->window = 16;
}

/* The defaults of core.h and docs/core.md, written out. */
static void core_documented(void *dv) {
    hwp_core_desc *d = (hwp_core_desc *)dv;
    d->mode = HWP_CORE_TIMING;
    d->order = HWP_CORE_OOO;
    d->flags = 0;
    d->l1i.sets = 512; d->l1i.ways = 2; d->l1i.line = 64; d->l1i.latency = 1;
    d->l1d.sets = 512; d->l1d.ways = 2; d->l1d.line = 64; d->l1d.latency = 3;
    d->l2.sets = 32768; d->l2.ways = 1; d->l2.line = 64; d->l2.latency = 12;
    d->itlb.sets = 1; d->itlb.ways = 128; d->itlb.line = 8192;
    d->dtlb.sets = 1; d->dtlb.ways = 128; d->dtlb.line = 8192;
    d->memory = 80;
    d->walk = 30;
    d->bp = HWP_CORE_TOURNAMENT;
    d->bp_global = 4096;
    d->bp_hist = 12;
    d->bp_local = 1024;
    d->bp_local_hist = 10;
    d->btb = 512;
    d->ras = 32;
    d->mispredict = 7;
    d->fetch_width = 4;
    d->issue_width = 4;
    d->retire_width = 8;
    d->rob = 80;
    d->window = 20;
    d->lat_int = 1;
    d->lat_mul = 7;
    d->lat_div = 20;
    d->lat_fp = 4;
    d->lat_fdiv = 15;
    d->horizon = 32768;
}

static const char *const core_bad_fields[] = {
    "l1d.sets", "l2.ways", "l1i.line", "window", "lat_mul", "horizon",
    "bp_global", "mode", "llc.ways", "dtlb.line", "ras", "memory"};

static void core_bad(void *dv, size_t i) {
    hwp_core_desc *d = (hwp_core_desc *)dv;
    switch (i) {
    case 0: d->l1d.sets = 96; break;          /* not a power of two */
    case 1: d->l2.ways = 0; break;            /* zero ways */
    case 2: d->l1i.line = 48; break;
    case 3: d->window = d->rob + 1; break;    /* window > ROB */
    case 4: d->lat_mul = 1u << 20; break;     /* overflows */
    case 5: d->horizon = 64; break;           /* too short for rob x latency */
    case 6: d->bp_global = 3000; break;
    case 7: d->mode = 7; break;
    case 8: d->llc.sets = 1024; d->llc.line = 64; break; /* ways 0 */
    case 9: d->dtlb.line = 5000; break;
    case 10: d->flags = HWP_CORE_NO_RAS; d->ras = 8; break;
    default: d->memory = 1u << 17; break;
    }
}

static size_t core_bytes(const void *d) { return hwp_core_bytes((const hwp_core_desc *)d); }
static hwp_status core_init(void *x, void *mem, size_t n, const void *d, hwp_cost *cost) {
    return hwp_core_init((hwp_core *)x, mem, n, (const hwp_core_desc *)d, cost);
}
static hwp_status core_reset(void *x) { return hwp_core_reset((hwp_core *)x); }
static hwp_status core_flush(void *x) { return hwp_core_flush((hwp_core *)x); }
static hwp_status core_merge(void *dst, const void *src) {
    return hwp_core_merge((hwp_core *)dst, (const hwp_core *)src);
}
static hwp_status core_stats(const void *x, hwp_conf_stats *out) {
    hwp_core_stats s;
    hwp_status st = hwp_core_get_stats((const hwp_core *)x, &s);
    out->events = s.events;
    out->dropped = s.dropped;
    out->evicted = s.evicted;
    out->cycles = s.cycles;
    return st;
}
static void core_write_json(const void *x, const hwp_writer *w) {
    hwp_core_write_json((const hwp_core *)x, w);
}
static hwp_status core_read_desc(void *d, const char *s, size_t n, hwp_json_err *err) {
    return hwp_core_read_desc((hwp_core_desc *)d, s, n, err);
}
static hwp_status core_read_json(void *x, const char *s, size_t n, hwp_json_err *err) {
    return hwp_core_read_json((hwp_core *)x, s, n, err);
}

/* Event i of the stream depends on (seed, i) only: loops of 16
 * instructions over 1024 code lines, loads and stores over 1 MB, a
 * conditional branch ending each block, a call/return pair now and then,
 * and one record in 4096 of an unknown class (dropped). */
static void core_feed(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    uint64_t i;
    for (i = first; i < first + n; i++) {
        uint64_t h = hwp_mix64(seed ^ (i * 0x9E3779B97F4A7C15ull));
        uint64_t block = (i / 16) % 1024, k = i % 16;
        hwp_insn in;
        memset(&in, 0, sizeof in);
        in.pc = 0x400000 + block * 64 + k * 4;
        in.next_pc = in.pc + 4;
        if (k == 15) {
            in.cls = HWP_CLS_BR_COND;
            if (h & 3) {
                in.events = HWP_EV_TAKEN;
                in.next_pc = in.addr = 0x400000 + ((block + 1) % 1024) * 64;
            }
        } else if (k == 7 && (h >> 8) % 8 == 0) {
            in.cls = HWP_CLS_CALL;
            in.events = HWP_EV_TAKEN;
            in.next_pc = in.addr = 0x500000;
        } else if (k == 8 && (h >> 8) % 8 == 0) {
            in.cls = HWP_CLS_RET;
            in.events = HWP_EV_TAKEN;
            in.next_pc = in.addr = 0x400000 + block * 64 + 7 * 4 + 1;
        } else if (k % 3 == 1) {
            in.cls = (h >> 4) & 1 ? HWP_CLS_LOAD : HWP_CLS_STORE;
            in.addr = 0x10000000 + ((h >> 16) % (1u << 17)) * 8;
        }
        if ((h >> 40) % 4096 == 0) in.cls = 99;
        hwp_core_insn((hwp_core *)x, &in, NULL);
    }
}

/* Two halves run on two cores, and the second starts cold, so their sum
 * is not the whole stream's. What holds: every stream count (events,
 * drops, references, branches) is equal, and for the L1s (true LRU, a
 * stack algorithm, fed the same references) the split run misses at
 * least as often as the whole and at most once more per line of the
 * cache (the second half's first reference to each resident line). */
static const char *core_merge_check(const void *whole, const void *merged) {
    hwp_core_stats w, m;
    const hwp_core *c = (const hwp_core *)whole;
    hwp_core_desc d;
    uint64_t lines_i, lines_d;
    hwp_core_get_stats(c, &w);
    hwp_core_get_stats((const hwp_core *)merged, &m);
    memset(&d, 0, sizeof d);
    core_small(&d);
    lines_i = (uint64_t)d.l1i.sets * d.l1i.ways;
    lines_d = (uint64_t)d.l1d.sets * d.l1d.ways;
    if (w.events != m.events || w.dropped != m.dropped) return "events or drops differ";
    if (w.l1i_refs != m.l1i_refs || w.l1d_reads != m.l1d_reads ||
        w.l1d_writes != m.l1d_writes)
        return "reference counts differ";
    if (w.cond != m.cond || w.indirect != m.indirect || w.returns != m.returns)
        return "branch counts differ";
    if (m.l1i_misses < w.l1i_misses || m.l1i_misses > w.l1i_misses + lines_i)
        return "L1I misses outside [whole, whole + lines]";
    if (m.l1d_read_misses + m.l1d_write_misses < w.l1d_read_misses + w.l1d_write_misses ||
        m.l1d_read_misses + m.l1d_write_misses >
            w.l1d_read_misses + w.l1d_write_misses + lines_d)
        return "L1D misses outside [whole, whole + lines]";
    return NULL;
}

static const char *core_unset(void *x) {
    hwp_core *c = (hwp_core *)x;
    hwp_core_rec rec[4];
    HWP_CONF_TOOK(hwp_core_done(c, rec, 4) != 0);
    HWP_CONF_TOOK(hwp_core_done(c, NULL, 0) != 0);
    HWP_CONF_TOOK(hwp_core_cycle(c) != 0);
    HWP_CONF_TOOK_TEXT(hwp_core_write_text(c, &w));
    return NULL;
}

const hwp_conf_row hwp_conf_core[] = {
    {"core", sizeof(hwp_core_desc), sizeof(hwp_core), core_small, core_documented,
     core_bad_fields, sizeof core_bad_fields / sizeof *core_bad_fields, core_bad,
     core_bytes, core_init, core_reset, core_flush, core_merge, core_stats,
     core_write_json, core_read_desc, core_read_json, core_feed, core_merge_check,
     core_unset, NULL},
    {NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL, NULL}};
