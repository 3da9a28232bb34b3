/* SPDX-License-Identifier: MIT */
/* tests/conformance/profileme.c: the contract rows of ProfileMe's two
 * components, the sampler `pm` and the per-PC table `pm_table` (Dean et
 * al., "ProfileMe: Hardware Support for Instruction-Level Profiling on
 * Out-of-Order Processors", MICRO-30 1997). */
#include "conformance.h"

/* ---- pm: the sampler --------------------------------------------------- */

static void pm_small(void *desc) {
    hwp_pm_desc *d = (hwp_pm_desc *)desc;
    d->interval = 50;
    d->seed = 1;
}

/* The defaults docs/profileme.md states. */
static void pm_documented(void *desc) {
    hwp_pm_desc *d = (hwp_pm_desc *)desc;
    d->seed = 0;
    d->interval = 10000;
    d->dist = HWP_PM_DIST_UNIFORM;
    d->unit = HWP_PM_UNIT_INSN;
    d->paired = 0;
    d->window = 80;
    d->ways = 1;
    d->buffer = 1;
    d->history = 12;
}

static const char *const pm_bad_fields[] = {
    "interval", "dist", "unit", "paired", "window", "ways", "buffer",
    "history"};

static void pm_bad(void *desc, size_t i) {
    hwp_pm_desc *d = (hwp_pm_desc *)desc;
    switch (i) {
    case 0: d->interval = 0x80000000u; break;
    case 1: d->dist = 3; break;
    case 2: d->unit = 2; break;
    case 3: d->paired = 2; break;
    case 4: d->window = HWP_PM_MAX_WINDOW + 1u; break;
    case 5: d->ways = HWP_PM_MAX_WAYS + 1u; break;
    case 6: d->buffer = 0x10000001u; break;
    default: d->history = 65; break;
    }
}

static size_t pm_bytes(const void *desc) {
    return hwp_pm_bytes((const hwp_pm_desc *)desc);
}
static hwp_status pm_init(void *x, void *mem, size_t n, const void *desc,
                          hwp_cost *cost) {
    return hwp_pm_init((hwp_pm *)x, mem, n, (const hwp_pm_desc *)desc, cost);
}
static hwp_status pm_reset(void *x) { return hwp_pm_reset((hwp_pm *)x); }
static hwp_status pm_flush(void *x) { return hwp_pm_flush((hwp_pm *)x); }
static hwp_status pm_merge(void *dst, const void *src) {
    return hwp_pm_merge((hwp_pm *)dst, (const hwp_pm *)src);
}
static hwp_status pm_stats(const void *x, hwp_conf_stats *out) {
    hwp_pm_stats st;
    hwp_status rc = hwp_pm_get_stats((const hwp_pm *)x, &st);
    out->events = st.events;
    out->dropped = st.dropped;
    out->evicted = st.evicted;
    out->cycles = st.cycles;
    return rc;
}
static void pm_write_json(const void *x, const hwp_writer *w) {
    hwp_pm_write_json((const hwp_pm *)x, w);
}
static hwp_status pm_read_desc(void *desc, const char *s, size_t n,
                               hwp_json_err *err) {
    return hwp_pm_read_desc((hwp_pm_desc *)desc, s, n, err);
}
static hwp_status pm_read_json(void *x, const char *s, size_t n,
                               hwp_json_err *err) {
    return hwp_pm_read_json((hwp_pm *)x, s, n, err);
}

/* Instruction `i` of the stream fixed by `seed`: 64 PCs, one in six a
 * conditional branch (taken half the time), one in three a load that
 * misses now and then. */
static void pm_insn(uint64_t seed, uint64_t i, hwp_insn *in) {
    uint64_t h = hwp_mix64(seed * 0x9E3779B97F4A7C15ull ^ i);
    unsigned kind = (unsigned)(h >> 40) % 6u;
    in->pc = 0x400000u + 4u * (h % 64u);
    in->next_pc = in->pc + 4u;
    in->addr = (h >> 16) & 0xFFF8u;
    in->value = 0;
    in->cls = kind == 0 ? HWP_CLS_BR_COND : kind < 3 ? HWP_CLS_LOAD
                                                     : HWP_CLS_OTHER;
    in->events = (kind == 0 && (h >> 50) & 1u ? HWP_EV_TAKEN : 0u) |
                 (kind == 1 && (h >> 51) % 8u == 0 ? HWP_EV_DCMISS : 0u);
}

static void pm_feed(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    hwp_insn in;
    uint64_t i;
    for (i = first; i < first + n; i++) {
        pm_insn(seed, i, &in);
        hwp_pm_insn((hwp_pm *)x, &in, i);
    }
}

/* Two samplers over the two halves are two random draws at the same
 * rate: the fetches add up exactly, the selections within the sampling
 * noise (three standard deviations of a Poisson count, plus one for the
 * restart). */
static const char *pm_merge_check(const void *whole, const void *merged) {
    hwp_pm_stats a, b;
    double d, k;
    hwp_pm_get_stats((const hwp_pm *)whole, &a);
    hwp_pm_get_stats((const hwp_pm *)merged, &b);
    if (a.events != b.events) return "pm: merged fetches differ from the whole";
    k = (double)a.selected;
    d = (double)b.selected - k;
    if (d * d > 9.0 * k + 1.0 && (d > 1.0 || d < -1.0))
        return "pm: merged selections outside the sampling noise";
    return 0;
}

/* ---- pm_table: the per-PC profile -------------------------------------- */

static void pmt_small(void *desc) {
    hwp_pm_table_desc *d = (hwp_pm_table_desc *)desc;
    d->capacity = 64;
    d->interval = 10;
}

static void pmt_documented(void *desc) {
    hwp_pm_table_desc *d = (hwp_pm_table_desc *)desc;
    d->capacity = 4096;
    d->interval = 10000;
    d->window = 80;
    d->issue_width = 4;
    d->near_cycles = 15;
    d->paired = 0;
    d->min_samples = 10;
}

static const char *const pmt_bad_fields[] = {
    "capacity", "interval", "window", "issue_width", "near_cycles", "paired"};

static void pmt_bad(void *desc, size_t i) {
    hwp_pm_table_desc *d = (hwp_pm_table_desc *)desc;
    switch (i) {
    case 0: d->capacity = 100; break;
    case 1: d->interval = 0x80000000u; break;
    case 2: d->window = HWP_PM_MAX_WINDOW + 1u; break;
    case 3: d->issue_width = 65; break;
    case 4: d->near_cycles = 0x10001u; break;
    default: d->paired = 2; break;
    }
}

static size_t pmt_bytes(const void *desc) {
    return hwp_pm_table_bytes((const hwp_pm_table_desc *)desc);
}
static hwp_status pmt_init(void *x, void *mem, size_t n, const void *desc,
                           hwp_cost *cost) {
    return hwp_pm_table_init((hwp_pm_table *)x, mem, n,
                             (const hwp_pm_table_desc *)desc, cost);
}
static hwp_status pmt_reset(void *x) {
    return hwp_pm_table_reset((hwp_pm_table *)x);
}
static hwp_status pmt_flush(void *x) {
    return hwp_pm_table_flush((hwp_pm_table *)x);
}
static hwp_status pmt_merge(void *dst, const void *src) {
    return hwp_pm_table_merge((hwp_pm_table *)dst, (const hwp_pm_table *)src);
}
static hwp_status pmt_stats(const void *x, hwp_conf_stats *out) {
    hwp_pm_table_stats st;
    hwp_status rc = hwp_pm_table_get_stats((const hwp_pm_table *)x, &st);
    out->events = st.events;
    out->dropped = st.dropped;
    out->evicted = st.evicted;
    out->cycles = st.cycles;
    return rc;
}
static void pmt_write_json(const void *x, const hwp_writer *w) {
    hwp_pm_table_write_json((const hwp_pm_table *)x, w);
}
static hwp_status pmt_read_desc(void *desc, const char *s, size_t n,
                                hwp_json_err *err) {
    return hwp_pm_table_read_desc((hwp_pm_table_desc *)desc, s, n, err);
}
static hwp_status pmt_read_json(void *x, const char *s, size_t n,
                                hwp_json_err *err) {
    return hwp_pm_table_read_json((hwp_pm_table *)x, s, n, err);
}

/* Record `i` of the stream: 40 PCs, small latencies, an event now and
 * then, a D-cache miss with a long load. */
static void pmt_feed(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    hwp_pm_record r;
    uint64_t i;
    for (i = first; i < first + n; i++) {
        uint64_t h = hwp_mix64(seed * 0xD1B54A32D192ED03ull ^ i);
        hwp_zero(&r, sizeof r);
        r.pc = 0x2000u + 4u * (h % 40u);
        r.flags = (h >> 20) % 16u ? HWP_PM_F_RETIRED : 0u;
        r.events = (h >> 24) % 8u == 0 ? HWP_EV_DCMISS : 0u;
        r.lat[HWP_PM_LAT_FETCH_MAP] = (uint32_t)(h >> 28) % 4u;
        r.lat[HWP_PM_LAT_ISSUE_RR] = 1u + (uint32_t)(h >> 32) % 6u;
        r.lat[HWP_PM_LAT_LOAD] = r.events ? 40u : 0u;
        hwp_pm_table_add((hwp_pm_table *)x, &r, 1);
    }
}

/* Merge adds every count, but may place PCs in other slots than the
 * whole stream did: every entry and counter must be equal. */
static const char *pmt_merge_check(const void *whole, const void *merged) {
    const hwp_pm_table *a = (const hwp_pm_table *)whole;
    const hwp_pm_table *b = (const hwp_pm_table *)merged;
    hwp_pm_table_stats sa, sb;
    uint32_t i;
    hwp_pm_table_get_stats(a, &sa);
    hwp_pm_table_get_stats(b, &sb);
    if (sa.used != sb.used || sa.samples != sb.samples ||
        sa.dropped != sb.dropped || sa.events != sb.events)
        return "pm_table: merged counters differ from the whole";
    for (i = 0; i < a->d.capacity; i++) { /* tests may read the handle */
        const hwp_pm_entry *e = hwp_pm_table_at(a, i), *f;
        unsigned k;
        if (!e) continue;
        f = hwp_pm_table_find(b, e->pc);
        if (!f) return "pm_table: a PC of the whole is missing after merge";
        for (k = 0; k < HWP_PM_PROP_COUNT; k++)
            if (hwp_pm_count(e, k) != hwp_pm_count(f, k))
                return "pm_table: a merged count differs from the whole";
        if (f->lat_sq != e->lat_sq || f->in_progress != e->in_progress ||
            f->lat_sum[HWP_PM_LAT_LOAD] != e->lat_sum[HWP_PM_LAT_LOAD] ||
            f->lat_sum[HWP_PM_LAT_ISSUE_RR] != e->lat_sum[HWP_PM_LAT_ISSUE_RR])
            return "pm_table: a merged latency differs from the whole";
    }
    return 0;
}

/* ---- calls on handles never initialised ------------------------------- */

static const char *pm_unset(void *x) {
    hwp_pm *p = (hwp_pm *)x;
    hwp_pm_desc d;
    hwp_pm_table_desc td;
    hwp_insn in;
    hwp_zero(&in, sizeof in);
    in.pc = 0x40;
    HWP_CONF_TOOK(hwp_pm_get_desc(p, &d) == HWP_OK);
    HWP_CONF_TOOK(hwp_pm_set_deliver(p, hwp_pm_table_deliver, NULL) == HWP_OK);
    HWP_CONF_TOOK(hwp_pm_table_desc_for(p, &td) == HWP_OK);
    HWP_CONF_TOOK(hwp_pm_tag(p, 0x40, 1) != 0);
    HWP_CONF_TOOK(hwp_pm_tag_empty(p, 1) == HWP_OK);
    HWP_CONF_TOOK(hwp_pm_stage(p, 1, HWP_PM_ST_MAP, 2) == HWP_OK);
    HWP_CONF_TOOK(hwp_pm_note(p, 1, HWP_CLS_LOAD, 0x80, 0) == HWP_OK);
    HWP_CONF_TOOK(hwp_pm_retire(p, 1, 3) == HWP_OK);
    HWP_CONF_TOOK(hwp_pm_abort(p, 1, 0) == HWP_OK);
    hwp_pm_sample_insn(p, &in, 1);
    HWP_CONF_TOOK(hwp_pm_fetched(p) != 0);
    HWP_CONF_TOOK(hwp_pm_interval(p) != 0);
    HWP_CONF_TOOK(hwp_pm_window(p) != 0);
    HWP_CONF_TOOK(hwp_pm_paired(p));
    HWP_CONF_TOOK_TEXT(hwp_pm_write_text(p, &w));
    return NULL;
}

static uint64_t unset_truth(void *ctx, uint64_t pc) {
    (void)ctx;
    return pc;
}

/* The estimators take the table and one of its entries; a zeroed table
 * has none, so they get NULL and must answer 0. */
static const char *pmt_unset(void *x) {
    hwp_pm_table *t = (hwp_pm_table *)x;
    hwp_pm_record r;
    hwp_pm_row row;
    hwp_pm_acc acc;
    hwp_zero(&r, sizeof r);
    r.pc = 0x40;
    r.flags = HWP_PM_F_RETIRED;
    HWP_CONF_TOOK(hwp_pm_table_add(t, &r, 1) == HWP_OK);
    hwp_pm_table_deliver(t, &r, 1);
    HWP_CONF_TOOK(hwp_pm_table_find(t, 0x40) != NULL);
    HWP_CONF_TOOK(hwp_pm_table_at(t, 0) != NULL);
    HWP_CONF_TOOK(hwp_pm_table_rank(t, HWP_PM_RANK_SAMPLES, 1.96, &row, 1) != 0);
    HWP_CONF_TOOK(hwp_pm_table_interval(t) != 0.0);
    HWP_CONF_TOOK(hwp_pm_table_estimate(t, NULL, HWP_PM_PROP_SAMPLES, 1.96).value != 0.0);
    HWP_CONF_TOOK(hwp_pm_latency_total(t, NULL, 1.96).value != 0.0);
    HWP_CONF_TOOK(hwp_pm_wasted_slots(t, NULL) != 0.0);
    HWP_CONF_TOOK(hwp_pm_ipc_near(t, NULL) != 0.0);
    HWP_CONF_TOOK(hwp_pm_accuracy(t, HWP_PM_PROP_SAMPLES, unset_truth, NULL, 10.0, &acc) ==
                  HWP_OK);
    HWP_CONF_TOOK_TEXT(hwp_pm_table_write_text(t, &w));
    return NULL;
}

const hwp_conf_row hwp_conf_profileme[] = {
    {"pm", sizeof(hwp_pm_desc), sizeof(hwp_pm), pm_small, pm_documented,
     pm_bad_fields, sizeof pm_bad_fields / sizeof pm_bad_fields[0], pm_bad,
     pm_bytes, pm_init, pm_reset, pm_flush, pm_merge, pm_stats,
     pm_write_json, pm_read_desc, pm_read_json, pm_feed, pm_merge_check, pm_unset, NULL},
    {"pm_table", sizeof(hwp_pm_table_desc), sizeof(hwp_pm_table), pmt_small,
     pmt_documented, pmt_bad_fields,
     sizeof pmt_bad_fields / sizeof pmt_bad_fields[0], pmt_bad, pmt_bytes,
     pmt_init, pmt_reset, pmt_flush, pmt_merge, pmt_stats, pmt_write_json,
     pmt_read_desc, pmt_read_json, pmt_feed, pmt_merge_check, pmt_unset, NULL},
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}};
