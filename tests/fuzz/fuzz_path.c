/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_path.c: the path stack (Vaswani, Jacob and Srikant,
 * Representing, Detecting and Profiling Paths in Hardware, sections 3,
 * 4 and 8.2) under the shared engine (fuzz_model.h), plus branches and
 * instruction records of the input's choosing, begin, unwind, path
 * decoding against a block map, and an HPT and phase detector attached
 * on the way. The input picks whether the path sink is set and, under
 * the SPILL policy, whether the spill and fill callbacks are (without
 * them init must refuse). Checked after every step:
 *  - the stack never held more entries than its depth;
 *  - every path handed to the sink is nonempty, at most max_len
 *    branches long and worth 1 (execution counts) or at most the event
 *    counter's ceiling; the sink is called once per completed path
 *    (stats.paths), and an attached HPT and phase detector see exactly
 *    the paths completed since they were attached;
 *  - fill is asked only for what was spilled (the host's LIFO store is
 *    never empty when asked, and fills never exceed spills);
 *  - an unwind deeper than what the stack holds is refused with the
 *    report unchanged; decode's count does not depend on its capacity
 *    and it writes only `cap` addresses. */
#include "fuzz_model.h"

#define PP_RECS 16u

/* The SPILL store holds this many entries; past it the instance's
 * spills are no longer all in the store (untracked). */
#define PP_STORE 1024u

typedef struct pp_inst {
    hwp_path_entry store[PP_STORE]; /* the SPILL policy's host memory */
    size_t nstore;
    bool tracked;          /* store and sink counts are this instance's */
    uint64_t sunk, base;   /* sink calls and stats.paths since base    */
    hwp_path_pd recs[PP_RECS];
    unsigned nrecs;
    /* an attached HPT and phase detector (on storage of any alignment),
     * and stats.paths less what each has seen */
    hwp_hpt hpt;
    hwp_phase ph;
    unsigned char hmem[HWP_HPT_BYTES(128) + 16], pmem[HWP_PHASE_BYTES(8, 32) + 16];
    bool attached, phased;
    uint64_t hbase, pbase;
} pp_inst;

typedef struct pp_state {
    pp_inst in[2];
    uint32_t max_len, depth, cnt_max;
    bool one;
} pp_state;

static hwp_path *pp_of(fz_ctx *c, int w) { return (hwp_path *)c->in[w].x; }

static hwp_path_stats pp_stats(const hwp_path *p) {
    hwp_path_stats st;
    FZ_CHECK(hwp_path_get_stats(p, &st) == HWP_OK);
    return st;
}

/* The sink and the SPILL store: the engine's ctx says which instance is
 * being driven. The engine's third instance (a report read back) only
 * reads and merges, which complete no path and spill nothing. */
static void pp_sink(void *ctx, const hwp_path_rec *r) {
    fz_ctx *c = (fz_ctx *)ctx;
    pp_state *s = (pp_state *)c->state;
    pp_inst *in;
    unsigned len = hwp_path_pd_len(&r->pd);
    FZ_CHECK(s);
    in = &s->in[c->cur];
    FZ_CHECK(r->pd.shape != 0);
    FZ_CHECK(len <= s->max_len);
    FZ_CHECK(s->one ? r->value == 1u : r->value <= s->cnt_max);
    in->sunk++;
    in->recs[in->nrecs++ % PP_RECS] = r->pd;
}

static void pp_spill(void *ctx, const hwp_path_entry *e) {
    fz_ctx *c = (fz_ctx *)ctx;
    pp_inst *in = &((pp_state *)c->state)->in[c->cur];
    if (in->nstore < PP_STORE)
        in->store[in->nstore++] = *e;
    else
        in->tracked = false;
}

static bool pp_fill(void *ctx, hwp_path_entry *e) {
    fz_ctx *c = (fz_ctx *)ctx;
    pp_inst *in = &((pp_state *)c->state)->in[c->cur];
    if (in->tracked) FZ_CHECK(in->nstore > 0);
    if (!in->nstore) return false;
    *e = in->store[--in->nstore];
    return true;
}

static void pp_host(fz_ctx *c, void *desc) {
    hwp_path_desc *d = (hwp_path_desc *)desc;
    const hwp_path_desc *o = (const hwp_path_desc *)c->desc;
    d->on_path = o->on_path;
    d->spill = o->spill;
    d->fill = o->fill;
    d->ctx = o->ctx;
}

static void pp_desc(fz_ctx *c, void *desc, const void *orig, fz_in *f) {
    hwp_path_desc *d = (hwp_path_desc *)desc;
    uint8_t b = fz_u8(f);
    (void)orig;
    d->on_path = (b & 1u) ? pp_sink : NULL;
    d->spill = (b & 2u) ? pp_spill : NULL;
    d->fill = (b & 2u) ? pp_fill : NULL;
    d->ctx = c;
}

static void pp_rebase(fz_ctx *c, int w) {
    pp_inst *in = &((pp_state *)c->state)->in[w];
    in->base = pp_stats(pp_of(c, w)).paths;
    in->sunk = 0;
}

static void pp_start(fz_ctx *c) {
    pp_state *s = (pp_state *)calloc(1, sizeof(pp_state));
    const hwp_path_desc *d = (const hwp_path_desc *)c->desc;
    int w;
    FZ_CHECK(s);
    c->state = s;
    s->max_len = d->max_len ? d->max_len : 32u;
    s->depth = d->depth ? d->depth : 32u;
    s->cnt_max = hwp_sat_max(d->counter_bits ? d->counter_bits : 8u);
    s->one = d->metric == HWP_PATH_M_PATHS;
    for (w = 0; w < 2; w++) {
        s->in[w].tracked = true;
        pp_rebase(c, w);
    }
}

/* A block map for decoding: the block at `start` ends in a branch whose
 * class and target follow from the address (some addresses have none). */
static bool pp_map(void *ctx, uint64_t start, hwp_path_block *b) {
    static const uint32_t cls[] = {HWP_CLS_BR_COND, HWP_CLS_JUMP, HWP_CLS_CALL,
                                   HWP_CLS_RET, HWP_CLS_INDIRECT, HWP_CLS_BR_COND};
    uint64_t h = hwp_mix64(start);
    (void)ctx;
    if ((h & 15u) == 0) return false;
    b->branch_pc = start + 4u * (1u + (h >> 4 & 7u));
    b->cls = cls[(h >> 8) % 6u];
    b->target = b->cls == HWP_CLS_RET || b->cls == HWP_CLS_INDIRECT
                    ? 0
                    : 0x1000u + 0x20u * (h >> 12 & 15u);
    b->fallthrough = b->branch_pc + 4u;
    b->pad = 0;
    return true;
}

static void pp_branches(hwp_path *p, fz_in *f, unsigned n) {
    unsigned k;
    for (k = 0; k < n; k++) {
        uint8_t how = fz_u8(f);
        uint64_t pc = 0x1000u + 4u * fz_u8(f);
        uint64_t next = (how & 1u) ? 0x1000u + 4u * fz_u8(f) : pc + 4u;
        uint32_t cls = fz_u8(f) % (HWP_CLS_COUNT + 1u);
        uint32_t insns = (how & 2u) ? fz_u32(f) : fz_u8(f) & 15u;
        uint32_t ev = (how & 4u) ? fz_u32(f) : fz_u8(f) & 3u;
        hwp_path_branch(p, pc, next, cls, (how & 8u) != 0, insns, ev);
    }
}

static void pp_insns(hwp_path *p, fz_in *f, unsigned n) {
    unsigned k;
    for (k = 0; k < n; k++) {
        hwp_insn in;
        uint8_t how = fz_u8(f);
        in.pc = 0x1000u + 4u * fz_u8(f);
        in.next_pc = (how & 1u) ? 0x1000u + 4u * fz_u8(f) : in.pc + 4u;
        in.addr = in.pc;
        in.value = 0;
        in.cls = fz_u8(f) % (HWP_CLS_COUNT + 1u);
        in.events = fz_u8(f);
        hwp_path_insn(p, &in);
    }
}

static void pp_decode(fz_ctx *c, int w, fz_in *f) {
    pp_inst *in = &((pp_state *)c->state)->in[w];
    hwp_path_pd pd;
    size_t cap = fz_u8(f) % 40u, n1, n2;
    uint64_t *out = cap ? (uint64_t *)malloc(cap * sizeof *out) : NULL;
    uint8_t how = fz_u8(f);
    FZ_CHECK(!cap || out);
    if ((how & 1u) && in->nrecs) {
        pd = in->recs[fz_u8(f) % (in->nrecs < PP_RECS ? in->nrecs : PP_RECS)];
    } else {
        pd.start = 0x1000u + 0x20u * (fz_u8(f) & 15u);
        pd.shape = (how & 2u) ? fz_u64(f) : 1u << (fz_u8(f) % 8u) | fz_u8(f);
    }
    n1 = hwp_path_decode(pp_of(c, w), &pd, pp_map, NULL, out, cap);
    n2 = hwp_path_decode(pp_of(c, w), &pd, pp_map, NULL, NULL, 0);
    FZ_CHECK(n1 == n2);
    free(out);
}

/* Attach a fresh HPT (and phase detector) of the input's shape, or
 * detach them. */
static void pp_attach(fz_ctx *c, int w, fz_in *f) {
    pp_inst *in = &((pp_state *)c->state)->in[w];
    hwp_path_stats st = pp_stats(pp_of(c, w));
    hwp_hpt_desc hd;
    hwp_phase_desc pd;
    uint8_t how = fz_u8(f);
    if (in->attached) {
        FZ_CHECK(hwp_path_attach(pp_of(c, w), NULL, NULL) == HWP_OK);
        in->attached = in->phased = false;
        if (!(how & 1u)) return;
    }
    memset(&hd, 0, sizeof hd);
    memset(&pd, 0, sizeof pd);
    hd.entries = 16u << (how >> 1 & 3u);
    hd.ways = 1u << (how >> 3 & 3u);
    hd.index = fz_u8(f) % 3u;
    hd.policy = (how & 32u) ? HWP_HPT_AGING : HWP_HPT_PLAIN;
    hd.repl = (how & 64u) && !(how & 32u) ? HWP_HPT_LRU : HWP_HPT_LFU;
    pd.kind = HWP_PHASE_PATH;
    pd.counters = 8;
    pd.interval = 1u + fz_u8(f);
    FZ_CHECK(hwp_hpt_init(&in->hpt, in->hmem + 1, sizeof in->hmem - 1, &hd, NULL) == HWP_OK);
    FZ_CHECK(hwp_phase_init(&in->ph, in->pmem + 3, sizeof in->pmem - 3, &pd, NULL) == HWP_OK);
    in->phased = (how & 128u) != 0;
    FZ_CHECK(hwp_path_attach(pp_of(c, w), &in->hpt, in->phased ? &in->ph : NULL) == HWP_OK);
    in->attached = true;
    in->hbase = in->pbase = st.paths;
}

static void pp_op(fz_ctx *c, int w, fz_in *f) {
    hwp_path *p = pp_of(c, w);
    uint8_t sub = fz_u8(f);
    switch (sub % 6u) {
    case 0:
        pp_branches(p, f, 1u + fz_u8(f) % 64u);
        break;
    case 1:
        pp_insns(p, f, 1u + fz_u8(f) % 64u);
        break;
    case 2:
        FZ_CHECK(hwp_path_begin(p, 0x1000u + 4u * fz_u8(f)) == HWP_OK);
        break;
    case 3: { /* unwind: refused when deeper than the stack holds */
        size_t n1, n2;
        char *j1 = fz_json(&c->in[w], &n1), *j2;
        hwp_status st = hwp_path_unwind(p, fz_u8(f) % 40u, (sub & 8u) != 0);
        FZ_CHECK(st == HWP_OK || st == HWP_EINVAL);
        if (st != HWP_OK) {
            j2 = fz_json(&c->in[w], &n2);
            FZ_CHECK(n1 == n2 && !memcmp(j1, j2, n1));
            free(j2);
        }
        free(j1);
        break;
    }
    case 4:
        pp_decode(c, w, f);
        break;
    default:
        pp_attach(c, w, f);
        break;
    }
}

static void pp_check(fz_ctx *c) {
    pp_state *s = (pp_state *)c->state;
    int w;
    for (w = 0; w < 2; w++) {
        pp_inst *in = &s->in[w];
        hwp_path_stats st = pp_stats(pp_of(c, w));
        FZ_CHECK(st.max_depth_used <= s->depth);
        FZ_CHECK(st.fills <= st.spills);
        FZ_CHECK(st.splits <= st.paths + st.dropped);
        if (((const hwp_path_desc *)c->desc)->on_path)
            FZ_CHECK(st.paths - in->base == in->sunk);
        if (in->attached) {
            hwp_hpt_stats hs;
            hwp_phase_stats ps;
            FZ_CHECK(hwp_hpt_get_stats(&in->hpt, &hs) == HWP_OK);
            FZ_CHECK(hwp_phase_get_stats(&in->ph, &ps) == HWP_OK);
            FZ_CHECK(hs.events == st.paths - in->hbase);
            FZ_CHECK(ps.events == (in->phased ? st.paths - in->pbase : 0u));
        }
    }
}

/* A merge adds src's counters (paths and spills included) to dst's:
 * what dst's sink and store saw is no longer all of dst. */
static void pp_merged(fz_ctx *c, int dst) {
    pp_inst *in = &((pp_state *)c->state)->in[dst];
    hwp_path_stats st = pp_stats(pp_of(c, dst));
    in->tracked = false;
    pp_rebase(c, dst);
    if (in->attached) {
        hwp_hpt_stats hs;
        hwp_phase_stats ps;
        FZ_CHECK(hwp_hpt_get_stats(&in->hpt, &hs) == HWP_OK);
        FZ_CHECK(hwp_phase_get_stats(&in->ph, &ps) == HWP_OK);
        in->hbase = st.paths - hs.events;
        in->pbase = st.paths - ps.events;
    }
}

static void pp_reset(fz_ctx *c, int w) {
    pp_inst *in = &((pp_state *)c->state)->in[w];
    in->tracked = true;
    in->nstore = 0;
    in->nrecs = 0;
    pp_rebase(c, w);
    if (in->attached) {
        FZ_CHECK(hwp_hpt_reset(&in->hpt) == HWP_OK);
        FZ_CHECK(hwp_phase_reset(&in->ph) == HWP_OK);
        in->hbase = in->pbase = 0;
    }
}

static const fz_hooks pp_hooks = {pp_desc, pp_start, pp_op, pp_check, pp_host,
                                  NULL, pp_merged, pp_reset};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_pathprof, "path"), &pp_hooks, data, size);
}
