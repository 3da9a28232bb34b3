/* SPDX-License-Identifier: MIT */
/* examples/common/hwx_cp.c: the profiling co-processor (Zilles and Sohi,
 * "A Programmable Co-Processor for Profiling", HPCA-7 2001) as a session
 * adapter. coproc_app= picks the program: lvp (the load value profile of
 * sec. 4, the default), edge, callstack, memdep or conflict (sec. 3.6).
 * The load value profile is scored by the weighted RMS invariance error
 * against the exact (pc, value) profile (sec. 5.2) and ranked against
 * the paper's baseline, the buffered value sampler, at the co-processor's
 * modelled overhead. The other programs are scored by their count error
 * against the exact profile of the same program run on every record
 * (hwx__cpx below). Public API only. */
#include "hwx_int.h"
#include "hwx_ctx.h"

/* The baseline is compared at equal overhead: buffered samplers run at
 * these periods (loads between samples) beside the co-processor,
 * charging nothing to the session; the evaluation picks the one whose
 * own modelled cycles (same cost model: an interrupt per full buffer, a
 * handler sample and two words per sample) are closest to what the
 * co-processor was charged, and reports both overheads and the period an
 * equal-overhead rerun needs (hwp_cp_simple_period_for):
 * coproc_simple_period=N runs N alone, so a second run at that period
 * compares at equal overhead within 2%. They run only beside the exact
 * profile (exact=on).
 * One sampler's error depends on where its few samples land (on bzip2
 * under the Valgrind tool 0.151-0.184 from one seed or input path to the
 * next, docs/valgrind.md), so each period runs HWX__NSEEDS samplers with
 * seeds seed+1 .. seed+HWX__NSEEDS and the report gives their mean error
 * and standard deviation: the co-processor is ranked against the mean,
 * with the spread beside it. */
#define HWX__NSIMPLE 7
#define HWX__NSEEDS 4
#define HWX__NCPS (HWX__NSIMPLE * HWX__NSEEDS)
static const uint32_t hwx__simple_periods[HWX__NSIMPLE] = {300,   1000,   3000,  10000,
                                                           30000, 100000, 300000};

typedef struct hwx__cpd {
    hwp_cp_desc c;
    hwp_cp_lvp_desc l;
    hwp_cp_simple_desc s;
    uint32_t app; /* HWP_CP_APP_* */
} hwx__cpd;

/* With exact=on, the exact profile of the program the co-processor runs
 * when it is not the load value profile: the same keys counted on every
 * record, with no sample buffer to drop them, no saturating counter, no
 * window bounded by the CAM, no call stack bounded by the data array:
 *   edge       conditional branches taken / not taken, indirect
 *              (pc, target) pairs
 *   callstack  taken-branch events per context (the innermost call
 *              sites, hashed as hwp_cp_callstack_key), on a deep stack
 *   memdep     (store pc, load pc): the last store to the load's granule,
 *              however long ago
 *   conflict   repeated refills per block: a miss to one of the last W
 *              blocks that missed (the co-processor's own definition, W
 *              its window), every miss seen
 * One open-addressing table of (kind, k1, k2) -> a, b; a full table drops
 * and counts, and the score is then withheld. */
#define HWX__CPX_ENTRIES (1u << 18)
#define HWX__CPX_DEPTH 4096u
enum { HWX__X_EDGE = 1, HWX__X_TARGET, HWX__X_CTX, HWX__X_DEP, HWX__X_LAST,
       HWX__X_BLOCK, HWX__X_WIN };

typedef struct hwx__xent {
    uint64_t k1, k2, a, b;
    uint32_t kind, pad_;
} hwx__xent;

typedef struct hwx__cpx {
    hwx__xent *e;       /* HWX__CPX_ENTRIES */
    uint64_t used, dropped;
    uint64_t *ring;     /* conflict: the last `win` blocks that missed */
    uint32_t win, next;
    uint32_t sp, pad_;  /* callstack: depth of stack[] (deeper: lost) */
    uint64_t lost;      /* calls past HWX__CPX_DEPTH */
    uint64_t stack[HWX__CPX_DEPTH];
} hwx__cpx;

typedef struct hwx__cp {
    hwp_cp *cp;
    hwx__cpx *x; /* exact=on and not the load value profile, else NULL */
    hwp_cp_simple *cps[HWX__NCPS]; /* period i, seed j at [i * HWX__NSEEDS + j];
                                      NULL after the last one initialised */
    uint64_t cps_batch; /* loads from the last sync to the next sample of any */
    uint64_t cps_left;  /* of them still to come                              */
    uint32_t app;
    uint32_t period[HWX__NSIMPLE]; /* of each group of seeds */
    uint32_t slots;                /* the load-value program's          */
    uint32_t cam;                  /* CAM entries: counting entries a flush
                                      can still add to the host's table */
    hwx_ctx *ctx; /* callstack: the host's context dictionary (hwx_ctx.h) */
    /* The session's timing: with the core on (registered first), the
     * events it found for the instruction being fed (D-cache misses for
     * the cache-conflict program); all zero otherwise. */
    const hwx_timing *tm;
} hwx__cp;

/* The call-stack program's depth: call sites hashed per context. */
#define HWX__CP_CS_DEPTH 4u
/* memdep's granule (8 bytes) and conflict's line (64 bytes) and sets */
#define HWX__CP_MD_GRAN 3u
#define HWX__CP_CC_LINE 6u
#define HWX__CP_CC_SETS 64u

/* The host's load table holds a record per load PC the co-processor
 * copies: python3 has about 35,600 load PCs, so the host sizes it for
 * 2^16 (a full table drops and counts, and charges nothing for it). */
#define HWX__CP_LOADS (1u << 16)

static void hwx__cp_defaults(void *dv, const hwx_opts *o) {
    hwx__cpd *d = (hwx__cpd *)dv;
    d->c.seed = o->seed;
    d->c.lvp_loads = HWX__CP_LOADS;
    d->s.seed = o->seed + 1;
    d->s.entries = 1u << 16; /* pairs and pc totals: python3 has ~35,600 load PCs */
    d->app = HWP_CP_APP_LVP;
}

static const char *const hwx__cp_apps[] = {"lvp", "edge", "callstack", "memdep",
                                           "conflict", NULL};
static const uint32_t hwx__cp_app_ids[] = {HWP_CP_APP_LVP, HWP_CP_APP_EDGE,
                                           HWP_CP_APP_CALLSTACK, HWP_CP_APP_MEMDEP,
                                           HWP_CP_APP_CONFLICT};

static hwp_status hwx__cp_set(void *dv, const char *k, const char *opt,
                              const char *v, const char **why) {
    hwx__cpd *d = (hwx__cpd *)dv;
    if (hwx_streq(k, "buffer")) return hwx__u32(opt, v, &d->c.buffer_bytes, why);
    if (hwx_streq(k, "clock")) return hwx__u32(opt, v, &d->c.clock_x16, why);
    if (hwx_streq(k, "loads")) return hwx__u32(opt, v, &d->c.lvp_loads, why);
    if (hwx_streq(k, "values")) return hwx__u32(opt, v, &d->c.lvp_values, why);
    if (hwx_streq(k, "simple_period")) return hwx__u32(opt, v, &d->s.period, why);
    if (hwx_streq(k, "visit")) return hwx__u32(opt, v, &d->l.visit_loads, why);
    if (hwx_streq(k, "resample")) return hwx__u32(opt, v, &d->l.resample_insns, why);
    if (hwx_streq(k, "app"))
        return hwx__enum(opt, v, hwx__cp_apps, hwx__cp_app_ids, &d->app, why);
    return hwx__unknown(why);
}

static uint32_t hwx__cp_wants(const hwx_opts *o) {
    (void)o;
    /* load records carry values; memdep and conflict need the stores and
     * addresses too, which the memory records give */
    return HWX_WANT_VALUES | HWX_WANT_MEMORY;
}

/* Desc member `key` as the library runs it: v, or when v is 0 the
 * default in the library's own field table (fields), so the hosts keep
 * no copy of a default that could fall out of step with it. */
static uint32_t hwx__cp_def(const hwp_field *(*fields)(size_t *), const char *key,
                            uint32_t v) {
    size_t n = 0;
    const hwp_field *f;
    if (v) return v;
    f = fields(&n); /* before n is read: argument order is unspecified */
    f = hwp_field_find(f, n, key, NULL);
    return f ? (uint32_t)f->def : 0u;
}

/* The window programs' W: the CAM entries, at most half the data array. */
static uint32_t hwx__cp_window(const hwp_cp_desc *c) {
    uint32_t cam = hwx__cp_def(hwp_cp_desc_fields, "cam_entries", c->cam_entries);
    uint32_t half = hwx__cp_def(hwp_cp_desc_fields, "data_words", c->data_words) / 2u;
    return cam < half ? cam : half;
}

static size_t hwx__cpx_bytes(const hwx__cpd *d) {
    return hwp_align(sizeof(hwx__cpx)) + hwp_align(HWX__CPX_ENTRIES * sizeof(hwx__xent)) +
           hwp_align(hwx__cp_window(&d->c) * sizeof(uint64_t));
}

/* The entry for (kind, k1, k2), made if absent; NULL when the table is
 * full (counted) or, with `make` false, when absent. */
static hwx__xent *hwx__cpx_at(hwx__cpx *x, uint32_t kind, uint64_t k1, uint64_t k2, bool make) {
    uint64_t h = hwp_mix64(k1 ^ hwp_mix64(k2 + kind));
    uint32_t i = (uint32_t)h & (HWX__CPX_ENTRIES - 1u);
    for (;; i = (i + 1u) & (HWX__CPX_ENTRIES - 1u)) {
        hwx__xent *e = &x->e[i];
        if (e->kind == kind && e->k1 == k1 && e->k2 == k2) return e;
        if (e->kind) continue;
        if (!make) return NULL;
        if (4u * (x->used + 1u) > 3u * HWX__CPX_ENTRIES) {
            x->dropped++;
            return NULL;
        }
        x->used++;
        e->kind = kind;
        e->k1 = k1;
        e->k2 = k2;
        return e;
    }
}

static void hwx__cpx_count(hwx__cpx *x, uint32_t kind, uint64_t k1, uint64_t k2, bool b) {
    hwx__xent *e = hwx__cpx_at(x, kind, k1, k2, true);
    if (e) *(b ? &e->b : &e->a) += 1;
}

/* One record, exactly, for the program `app` (the routines of
 * hwprof/coproc.h sec. 3.6, without their hardware bounds). */
static void hwx__cpx_feed(hwx__cpx *x, uint32_t app, const hwp_insn *in) {
    hwx__xent *e;
    switch (app) {
    case HWP_CP_APP_EDGE:
        if (in->cls == HWP_CLS_BR_COND)
            hwx__cpx_count(x, HWX__X_EDGE, in->pc, 0, !(in->events & HWP_EV_TAKEN));
        else if (in->cls == HWP_CLS_INDIRECT ||
                 (in->cls == HWP_CLS_CALL && (in->events & HWP_EV_INDIRECT)))
            hwx__cpx_count(x, HWX__X_TARGET, in->pc, in->next_pc, false);
        break;
    case HWP_CP_APP_CALLSTACK:
        if (in->events & HWP_EV_TAKEN &&
            (in->cls == HWP_CLS_BR_COND || in->cls == HWP_CLS_INDIRECT ||
             in->cls == HWP_CLS_CALL || in->cls == HWP_CLS_RET)) {
            uint64_t sites[HWX__CP_CS_DEPTH];
            uint32_t n = x->sp < HWX__CP_CS_DEPTH ? x->sp : HWX__CP_CS_DEPTH, j;
            for (j = 0; j < n; j++) sites[j] = x->stack[x->sp - 1u - j];
            hwx__cpx_count(x, HWX__X_CTX, hwp_cp_callstack_key(sites, n), 0, false);
        }
        if (in->cls == HWP_CLS_CALL) {
            if (x->sp < HWX__CPX_DEPTH) x->stack[x->sp++] = in->pc;
            else x->lost++;
        } else if (in->cls == HWP_CLS_RET && x->sp) {
            x->sp--;
        }
        break;
    case HWP_CP_APP_MEMDEP:
        if (in->cls == HWP_CLS_STORE) {
            e = hwx__cpx_at(x, HWX__X_LAST, in->addr >> HWX__CP_MD_GRAN, 0, true);
            if (e) e->a = in->pc;
        } else if (in->cls == HWP_CLS_LOAD &&
                   (e = hwx__cpx_at(x, HWX__X_LAST, in->addr >> HWX__CP_MD_GRAN, 0, false))) {
            hwx__cpx_count(x, HWX__X_DEP, e->a, in->pc, false);
        }
        break;
    case HWP_CP_APP_CONFLICT:
        if ((in->cls == HWP_CLS_LOAD || in->cls == HWP_CLS_STORE) &&
            (in->events & HWP_EV_DCMISS)) {
            uint64_t block = in->addr >> HWX__CP_CC_LINE;
            e = hwx__cpx_at(x, HWX__X_WIN, block, 0, true);
            if (!e) break;
            if (e->a) {
                hwx__cpx_count(x, HWX__X_BLOCK, block, 0, false);
                break;
            }
            /* a new block takes the oldest's place in the window */
            if (x->ring[x->next] != ~(uint64_t)0) {
                hwx__xent *old = hwx__cpx_at(x, HWX__X_WIN, x->ring[x->next], 0, false);
                if (old) old->a = 0;
            }
            e->a = 1;
            x->ring[x->next] = block;
            x->next = x->next + 1u == x->win ? 0 : x->next + 1u;
        }
        break;
    default: break;
    }
}

static size_t hwx__cp_bytes(const void *dv, const hwx_opts *o, const char **why) {
    const hwx__cpd *d = (const hwx__cpd *)dv;
    size_t a = hwp_cp_bytes(&d->c), b = hwp_cp_simple_bytes(&d->s);
    if (!a) HWX__WHY(hwp_cp, hwp_cp_init(&x_, m_, 0, &d->c, NULL), why);
    else if (!b) HWX__WHY(hwp_cp_simple, hwp_cp_simple_init(&x_, m_, 0, &d->s, NULL), why);
    if (!a || !b) return 0;
    return hwp_align(sizeof(hwp_cp)) + hwp_align(a) +
           (d->app == HWP_CP_APP_CALLSTACK
                ? hwp_align(sizeof(hwx_ctx)) + hwp_align(hwx_ctx_bytes())
                : 0) +
           (d->app == HWP_CP_APP_LVP
                ? HWX__NCPS * (hwp_align(sizeof(hwp_cp_simple)) + hwp_align(b))
                : 0) +
           (d->app != HWP_CP_APP_LVP && o->exact ? hwx__cpx_bytes(d) : 0);
}

/* The simple samplers (up to HWX__NCPS) are fed in batches: a load none
 * of them samples only moves each one's `loads` and `countdown`, so the
 * adapter counts such loads once and applies them to all at the load
 * that some sampler does sample (or at flush). Their state is then
 * exactly what per-load hwp_cp_simple_load calls give
 * (hwp_cp_simple_skip), at one decrement per load instead of 28 calls.
 * `done` loads since the last sync were not sampled by any. */
static void hwx__simple_sync(hwx__cp *m, uint64_t done) {
    uint64_t next = ~(uint64_t)0;
    uint32_t i;
    for (i = 0; i < HWX__NCPS && m->cps[i]; i++) {
        hwp_cp_simple_skip(m->cps[i], done);
        if (hwp_cp_simple_due(m->cps[i]) < next) next = hwp_cp_simple_due(m->cps[i]);
    }
    m->cps_batch = m->cps_left = next;
}

/* The load at which m->cps_left reached 0: some sampler's countdown ends
 * here. */
static void hwx__simple_due(hwx__cp *m, const hwp_insn *in) {
    uint32_t i;
    hwx__simple_sync(m, m->cps_batch - 1);
    for (i = 0; i < HWX__NCPS && m->cps[i]; i++) hwp_cp_simple_load(m->cps[i], in->pc, in->value);
    hwx__simple_sync(m, 0);
}

static hwp_status hwx__cp_init(void *sv, void *dv, unsigned char **cur, hwx_session *s) {
    hwx__cp *m = (hwx__cp *)sv;
    hwx__cpd *d = (hwx__cpd *)dv;
    uint32_t i, fixed = d->s.period;
    uint64_t seed = d->s.seed;
    size_t k = hwp_cp_bytes(&d->c);
    hwp_status st;
    m->cp = (hwp_cp *)hwp_carve(cur, sizeof(hwp_cp));
    m->app = d->app;
    m->tm = &s->timing;
    m->slots = hwx__cp_def(hwp_cp_lvp_desc_fields, "slots", d->l.slots);
    m->cam = hwx__cp_def(hwp_cp_desc_fields, "cam_entries", d->c.cam_entries);
    if (hwp_cp_init(m->cp, hwp_carve(cur, k), k, &d->c, &s->cost) != HWP_OK)
        return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->cp));
    k = hwp_cp_simple_bytes(&d->s);
    /* Only the load value profile's accuracy evaluation needs the
     * baseline. */
    for (i = 0; s->opts.exact && d->app == HWP_CP_APP_LVP &&
                i < (fixed ? 1u : HWX__NSIMPLE) * HWX__NSEEDS;
         i++) {
        d->s.period = fixed ? fixed : hwx__simple_periods[i / HWX__NSEEDS];
        m->period[i / HWX__NSEEDS] = d->s.period;
        d->s.seed = seed + i % HWX__NSEEDS;
        m->cps[i] = (hwp_cp_simple *)hwp_carve(cur, sizeof(hwp_cp_simple));
        /* The baseline's cycles are its own (its stats), not the
         * session's: the session's overhead is the co-processor's. */
        if (hwp_cp_simple_init(m->cps[i], hwp_carve(cur, k), k, &d->s, NULL) != HWP_OK)
            return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->cps[i]));
    }
    if (m->cps[0]) hwx__simple_sync(m, 0);
    if (s->opts.exact && d->app != HWP_CP_APP_LVP) {
        m->x = (hwx__cpx *)hwp_carve(cur, sizeof(hwx__cpx));
        hwp_zero(m->x, sizeof *m->x);
        m->x->e = (hwx__xent *)hwp_carve(cur, HWX__CPX_ENTRIES * sizeof(hwx__xent));
        hwp_zero(m->x->e, HWX__CPX_ENTRIES * sizeof(hwx__xent));
        m->x->win = hwx__cp_window(&d->c);
        m->x->ring = (uint64_t *)hwp_carve(cur, m->x->win * sizeof(uint64_t));
        for (i = 0; i < m->x->win; i++) m->x->ring[i] = ~(uint64_t)0;
    }
    switch (d->app) {
    case HWP_CP_APP_EDGE: st = hwp_cp_edge_start(m->cp); break;
    case HWP_CP_APP_CALLSTACK: /* taken branches by calling context */
        st = hwp_cp_callstack_start(m->cp, HWP_EV_TAKEN,
                                    HWP_CLS_BIT(HWP_CLS_BR_COND) |
                                        HWP_CLS_BIT(HWP_CLS_INDIRECT),
                                    HWX__CP_CS_DEPTH);
        m->ctx = (hwx_ctx *)hwp_carve(cur, sizeof(hwx_ctx));
        hwx_ctx_init(m->ctx, hwp_carve(cur, hwx_ctx_bytes()), HWX__CP_CS_DEPTH);
        break;
    case HWP_CP_APP_MEMDEP: st = hwp_cp_memdep_start(m->cp, HWX__CP_MD_GRAN); break;
    case HWP_CP_APP_CONFLICT:
        st = hwp_cp_conflict_start(m->cp, HWX__CP_CC_LINE, HWX__CP_CC_SETS);
        break;
    default: st = hwp_cp_lvp_start(m->cp, &d->l); break;
    }
    if (st != HWP_OK) return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->cp));
    return HWP_OK;
}

/* Only with exact=on (m->cps[0] set): callers test that first, so a run
 * without the comparison pays nothing per load for the baseline. */
/* A call or a return under the call-stack program: the host's context
 * dictionary follows the co-processor's stack, which a dropped sample
 * never reaches. */
static void hwx__cp_ctx_feed(hwx__cp *m, const hwp_insn *in) {
    hwp_cp_stats a, b;
    hwp_cp_get_stats(m->cp, &a);
    hwp_cp_insn(m->cp, in);
    hwp_cp_get_stats(m->cp, &b);
    hwx_ctx_step(m->ctx, in, b.buffer_dropped != a.buffer_dropped);
}

static void hwx__cp_feed(hwx__cp *m, const hwp_insn *in) {
    if (HWP_UNLIKELY(m->x != NULL)) hwx__cpx_feed(m->x, m->app, in);
    if (HWP_UNLIKELY(m->ctx != NULL) && (in->cls == HWP_CLS_CALL || in->cls == HWP_CLS_RET))
        hwx__cp_ctx_feed(m, in);
    else
        hwp_cp_insn(m->cp, in);
    if (m->cps[0] && in->cls == HWP_CLS_LOAD && HWP_UNLIKELY(--m->cps_left == 0))
        hwx__simple_due(m, in);
}

/* The core (core=on) runs before this adapter and says which events the
 * instruction met in its caches and predictors; hosts do not model caches,
 * so without it a load carries no D-cache miss and the cache-conflict
 * program sees nothing. The co-processor's clock stays the instruction
 * count either way (its overhead is a share of instructions). */
static void hwx__cp_insn(void *sv, const hwp_insn *in, uint64_t cycle) {
    hwx__cp *m = (hwx__cp *)sv;
    (void)cycle;
    if (HWP_UNLIKELY(m->tm->events != 0)) {
        hwp_insn c = *in;
        c.events |= m->tm->events;
        hwx__cp_feed(m, &c);
        return;
    }
    hwx__cp_feed(m, in);
}

/* The co-processor's clock sees every instruction; only the memory ones
 * can pass its load filter. Each memory record (in program order) meets
 * the clock at its own place in the block, found by its PC: the simple
 * samplers' periods, the buffer's drain and the watchdog read that clock,
 * so ticking the block's other instructions first would move them. */
static void hwx__cp_block(void *sv, const hwx_block *b) {
    hwx__cp *m = (hwx__cp *)sv;
    uint32_t i, j = 0, run = 0;
    for (i = 0; i + 1 < b->n && j < b->nmem; i++) {
        if (b->pcs[i] != b->mem[j].pc) {
            run++;
            continue;
        }
        hwp_cp_tick(m->cp, run);
        run = 0;
        hwx__cp_feed(m, &b->mem[j++]);
    }
    hwp_cp_tick(m->cp, run + (b->n - 1 - i));
    for (; j < b->nmem; j++) hwx__cp_feed(m, &b->mem[j]); /* a PC not in pcs */
    hwx__cp_feed(m, b->last);
}

static void hwx__cp_flush(void *sv) {
    hwx__cp *m = (hwx__cp *)sv;
    uint32_t i;
    hwp_cp_flush(m->cp);
    if (!m->cps[0]) return;
    hwx__simple_sync(m, m->cps_batch - m->cps_left);
    for (i = 0; i < HWX__NCPS && m->cps[i]; i++) hwp_cp_simple_flush(m->cps[i]);
}

static void hwx__cp_merge(void *dv, const void *sv) {
    hwx__cp *dst = (hwx__cp *)dv;
    const hwx__cp *src = (const hwx__cp *)sv;
    uint32_t i;
    hwp_cp_merge(dst->cp, src->cp);
    if (dst->ctx && src->ctx) hwx_ctx_merge(dst->ctx, src->ctx);
    for (i = 0; i < HWX__NCPS && dst->cps[i] && src->cps[i]; i++)
        hwp_cp_simple_merge(dst->cps[i], src->cps[i]);
    if (dst->x && src->x) { /* the counts add; a thread's window and stack are its own */
        uint32_t k;
        dst->x->dropped += src->x->dropped;
        dst->x->lost += src->x->lost;
        for (k = 0; k < HWX__CPX_ENTRIES; k++) {
            const hwx__xent *e = &src->x->e[k];
            hwx__xent *t;
            if (!e->kind || e->kind == HWX__X_LAST || e->kind == HWX__X_WIN) continue;
            if ((t = hwx__cpx_at(dst->x, e->kind, e->k1, e->k2, true)) != NULL) {
                t->a += e->a;
                t->b += e->b;
            }
        }
    }
}

static void hwx__cp_text(const void *sv, const hwx_session *s, const hwp_writer *w) {
    const hwx__cp *m = (const hwx__cp *)sv;
    hwp_cp_est est[256], best[32];
    hwp_cp_stats st;
    size_t n = hwp_cp_lvp_estimates(m->cp, est, 256), i, nb = 0, j;
    size_t cap = s->opts.top < 32 ? s->opts.top : 32;
    hwp_cp_get_stats(m->cp, &st);
    if (m->app != HWP_CP_APP_LVP) {
        hwp_cp_write_text(m->cp, w);
        return;
    }
    if (n > 256) n = 256; /* it returns how many there are */
    for (i = 0; i < n; i++) {
        /* nothing below the minimum sample count is called invariant */
        if (!est[i].characterised) continue;
        if (nb == cap && est[i].inv <= best[nb - 1].inv) continue;
        j = nb < cap ? nb++ : nb - 1;
        while (j > 0 && best[j - 1].inv < est[i].inv) {
            best[j] = best[j - 1];
            j--;
        }
        best[j] = est[i];
    }
    hwx__kv(w, "\n-- invariant loads: profiling co-processor (Zilles & Sohi, HPCA 2001) --\n  samples ", st.tagged);
    hwx__kv(w, ", dropped (buffer full) ", st.buffer_dropped);
    hwx__kv(w, ", interrupts ", st.interrupts);
    hwx__kv(w, ", load records lost ", st.loads_lost);
    hwp_put_str(w, "\n  load pc          value               invariance [95% interval] samples");
    hwp_put_str(w, s->exact ? "  (exact)\n" : "\n");
    for (i = 0; i < nb; i++) {
        hwp_put_str(w, "  ");
        hwp_put_hex(w, best[i].pc);
        hwp_put_str(w, "  ");
        hwp_put_hex(w, best[i].value);
        hwp_put_str(w, "  ");
        hwp_put_f64(w, best[i].inv, 3);
        hwp_put_str(w, " [");
        hwp_put_f64(w, best[i].lo, 3);
        hwp_put_str(w, ", ");
        hwp_put_f64(w, best[i].hi, 3);
        hwx__kv(w, "] ", best[i].samples);
        if (s->exact) hwx__exact_inv(w, s->exact, best[i].pc, best[i].value);
        hwp_put_str(w, "\n");
    }
}

static void hwx__cp_json(const void *sv, const hwp_writer *w) {
    hwp_put_str(w, ",\"coproc\":");
    hwp_cp_write_json(((const hwx__cp *)sv)->cp, w);
    if (((const hwx__cp *)sv)->ctx) hwx_ctx_json(((const hwx__cp *)sv)->ctx, w);
}

/* Estimates the scoring reads at once: the co-processor's or the
 * largest of the samplers'. */
static size_t hwx__cp_est_cap(const hwx__cp *m) {
    /* before the session's flush, the final interrupt may copy every
     * slot: one more pair each */
    size_t cap = hwp_cp_lvp_estimates(m->cp, NULL, 0) + m->slots, k;
    uint32_t i;
    hwp_cp_simple_stats st;
    /* before the session's flush, each buffered sample may add a pair */
    for (i = 0; i < HWX__NCPS && m->cps[i]; i++) {
        hwp_cp_simple_get_stats(m->cps[i], &st);
        k = hwp_cp_simple_estimates(m->cps[i], NULL, 0) + (size_t)st.pending;
        if (k > cap) cap = k;
    }
    return cap ? cap : 1;
}

static size_t hwx__cp_eval_bytes(const void *sv, const hwx_session *s) {
    const hwx__cp *m = (const hwx__cp *)sv;
    if (m->app != HWP_CP_APP_LVP) /* the call-stack program's contexts, and
                                     those a flush may still add */
        return hwp_align((hwp_cp_callstack_contexts(m->cp, NULL, 0) + m->cam + 1u) *
                          sizeof(hwp_cp_ctx));
    return hwp_align((size_t)s->exact->val.used * sizeof(hwp_cp_truth)) +
           hwp_align(hwx__cp_est_cap(m) * sizeof(hwp_cp_est));
}

/* The exact (pc, value) table as hwp_cp_wrms's truth (sec. 5.2); returns
 * how many. Filled once per evaluation: the first hwp_cp_wrms sorts it in
 * place and every later score against it skips the sort. */
static size_t hwx__cp_truth(const hwx_exact *x, hwp_cp_truth *truth) {
    size_t n = 0;
    uint64_t i;
    for (i = 0; i <= x->val.mask; i++) {
        const hwx_xent *e = &x->val.e[i];
        if (!e->count) continue;
        truth[n].pc = e->k1;
        truth[n].value = e->k2;
        truth[n].count = e->count;
        n++;
    }
    return n;
}

/* Weighted RMS error of one simple sampler against truth[0..n); est[] is
 * scratch of cap entries. */
static double hwx__cp_simple_err(const hwp_cp_simple *c, hwp_cp_truth *truth, size_t n,
                                 hwp_cp_est *est, size_t cap) {
    size_t m = hwp_cp_simple_estimates(c, est, cap);
    return hwp_cp_wrms(truth, n, est, m > cap ? cap : m, HWP_CP_MIN_INV);
}

/* Count error of the program's profile against the exact one: sum over
 * keys of |counted - exact| / sum of exact counts, 0 when every event was
 * counted where it belongs. Keys the co-processor holds and the exact
 * profile does not count in full: only the call-stack program can make
 * them (a context read off a stack that wrapped or lost a call to a full
 * buffer); the others key what the record carried. Withheld when the
 * exact table was full or its stack overflowed. */
static double hwx__absdiff(uint64_t a, uint64_t b) { return a > b ? (double)(a - b) : (double)(b - a); }

static void hwx__cp_count_eval(const hwx__cp *m, hwp_cp_ctx *ctx, hwx_metric *out) {
    hwx__cpx *x = m->x;
    double err = 0, tot = 0;
    uint64_t keys = 0, t, nt;
    uint32_t k;
    size_t i, n;
    if (!x || x->dropped || x->lost) return;
    if (m->app == HWP_CP_APP_CALLSTACK) {
        n = hwp_cp_callstack_contexts(m->cp, ctx, hwp_cp_callstack_contexts(m->cp, NULL, 0));
        for (i = 0; i < n; i++) {
            hwx__xent *e = hwx__cpx_at(x, HWX__X_CTX, ctx[i].key, 0, false);
            uint64_t want = e ? e->a : 0;
            if (e) e->b = 1; /* scored */
            err += hwx__absdiff(ctx[i].events, want);
        }
    }
    for (k = 0; k < HWX__CPX_ENTRIES; k++) {
        hwx__xent *e = &x->e[k];
        switch (e->kind) {
        case HWX__X_EDGE:
            hwp_cp_edge(m->cp, e->k1, &t, &nt);
            err += hwx__absdiff(t, e->a) + hwx__absdiff(nt, e->b);
            tot += (double)(e->a + e->b);
            break;
        case HWX__X_TARGET:
            err += hwx__absdiff(hwp_cp_edge_target(m->cp, e->k1, e->k2), e->a);
            tot += (double)e->a;
            break;
        case HWX__X_DEP:
            err += hwx__absdiff(hwp_cp_memdep_count(m->cp, e->k1, e->k2), e->a);
            tot += (double)e->a;
            break;
        case HWX__X_BLOCK:
            err += hwx__absdiff(hwp_cp_conflict_block(m->cp, e->k1 << HWX__CP_CC_LINE), e->a);
            tot += (double)e->a;
            break;
        case HWX__X_CTX:
            if (!e->b) err += (double)e->a; /* a context the co-processor never counted */
            e->b = 0;
            tot += (double)e->a;
            break;
        default: continue;
        }
        keys++;
    }
    if (tot <= 0) return;
    out[5].valid = 1;
    out[5].n = (uint32_t)(keys < 0xFFFFFFFFu ? keys : 0xFFFFFFFFu);
    out[5].value = err / tot;
}

static void hwx__cp_eval(void *sv, const hwx_session *s, unsigned char *cur, hwx_metric *out) {
    const hwx__cp *m = (const hwx__cp *)sv;
    hwp_cp_truth *truth = (hwp_cp_truth *)(void *)cur;
    hwp_cp_est *est = (hwp_cp_est *)(void *)(cur + hwp_align((size_t)s->exact->val.used *
                                                                sizeof(hwp_cp_truth)));
    size_t cap = hwx__cp_est_cap(m);
    size_t n, k;
    /* The baseline at (nearly) the co-processor's overhead: the period
     * whose seeds took, on average, the modelled cycles closest to the
     * co-processor's; then every seed's error at that period, their mean
     * and sample standard deviation. */
    hwp_cp_stats cs;
    hwp_cp_simple_stats ss;
    double want, best = -1, pick_cycles = 0;
    double sum = 0, sq = 0, mean, e;
    uint32_t i, j, pick = 0;
    if (m->app != HWP_CP_APP_LVP) {
        hwx__cp_count_eval(m, (hwp_cp_ctx *)(void *)cur, out);
        return;
    }
    n = hwx__cp_truth(s->exact, truth);
    k = hwp_cp_lvp_estimates(m->cp, est, cap);
    hwp_cp_get_stats(m->cp, &cs);
    want = (double)cs.cycles;
    if (k > cap) k = cap; /* the count is returned even when larger */
    e = hwp_cp_wrms(truth, n, est, k, HWP_CP_MIN_INV);
    if (e >= 0) {
        out[0].valid = 1;
        out[0].n = (uint32_t)k;
        out[0].value = e;
    }
    if (!m->cps[0]) return;
    for (i = 0; i < HWX__NCPS && m->cps[i]; i += HWX__NSEEDS) {
        double have = 0, gap;
        for (j = 0; j < HWX__NSEEDS; j++) {
            hwp_cp_simple_get_stats(m->cps[i + j], &ss);
            have += (double)ss.cycles;
        }
        have /= HWX__NSEEDS;
        gap = have > want ? have - want : want - have;
        if (best < 0 || gap < best) best = gap, pick = i, pick_cycles = have;
    }
    for (j = 0; j < HWX__NSEEDS; j++) {
        e = hwx__cp_simple_err(m->cps[pick + j], truth, n, est, cap);
        if (e < 0) break;
        sum += e;
        sq += e * e;
    }
    if (j == HWX__NSEEDS) {
        mean = sum / HWX__NSEEDS;
        out[1].valid = 1;
        hwp_cp_simple_get_stats(m->cps[pick], &ss);
        out[1].n = m->period[pick / HWX__NSEEDS];
        out[1].value = mean;
        /* (sum of squares - K mean^2) / (K - 1), clamped at 0 against
         * rounding when every seed gives the same error */
        e = (sq - sum * mean) / (HWX__NSEEDS - 1);
        out[2].valid = 1;
        out[2].n = HWX__NSEEDS;
        out[2].value = hwp_sqrt(e > 0 ? e : 0);
        /* both overheads, and the period for an equal-overhead rerun */
        out[3].valid = 1;
        out[3].n = (uint32_t)(want < 4e9 ? want : 4e9);
        out[3].value = want > 0 ? pick_cycles / want : 0;
        out[4].valid = 1;
        out[4].n = hwp_cp_simple_period_for(ss.events, cs.cycles, NULL, NULL);
        out[4].value = (double)out[4].n;
    }
}

/* The baseline's mean and spread on one line. */
static void hwx__cp_eval_text(const hwx_metric *m, const hwp_writer *w) {
    if (!m[1].valid) return;
    hwp_put_str(w, "  buffered value sampler at the nearest overhead: mean ");
    hwp_put_f64(w, m[1].value, 4);
    hwp_put_str(w, ", sd ");
    hwp_put_f64(w, m[2].value, 4);
    hwx__kv(w, " over ", m[2].n);
    hwx__kv(w, " seeds  (period ", m[1].n);
    hwp_put_str(w, " loads)\n");
    if (!m[3].valid) return;
    hwx__kv(w, "  co-processor overhead ", m[3].n);
    hwp_put_str(w, " cycles, sampler/co-processor overhead ");
    hwp_put_f64(w, m[3].value, 3);
    hwx__kv(w, "; equal overhead at coproc_simple_period=", m[4].n);
    hwp_put_str(w, "\n");
}

/* The co-processor's clock sees every instruction. */
static void hwx__cp_skip(void *sv, uint64_t n) { hwp_cp_tick(((hwx__cp *)sv)->cp, n); }

static const hwx_metric_def hwx__cp_metrics[] = {
    {"coproc_inv_err", "  co-processor weighted RMS invariance error (Zilles & Sohi 5.2): ", 4, ""},
    {"coproc_simple_err", NULL, 4, ""},
    {"coproc_simple_sd", NULL, 4, ""},
    {"coproc_simple_overhead_ratio", NULL, 4, ""},
    {"coproc_simple_equal_period", NULL, 0, ""},
    {"coproc_count_err", "  co-processor count error against the exact profile of its program "
                         "(sum |counted - exact| / sum exact): ", 4, ""},
};

/* Counters over time (timeline=N), cumulative. */
static const char *const hwx__cp_counter_names[] = {"interrupts", "processed", "visits", NULL};
static void hwx__cp_counters(const void *sv, uint64_t *out) {
    const hwx__cp *m = (const hwx__cp *)sv;
    hwp_cp_stats st;
    hwp_zero(&st, sizeof st);
    hwp_cp_get_stats(m->cp, &st);
    out[0] = st.interrupts;
    out[1] = st.processed;
    out[2] = st.visits;
}

const hwx_adapter hwx__adapter_cp = {
    .name = "coproc",
    .model = HWP_MODEL_COPROC,
    .params = "app, buffer (buffer_bytes), clock (clock_x16), loads (lvp_loads), values (lvp_values), simple_period, visit (visit_loads), resample (resample_insns), "
              "or any member of its desc by the name the report gives it (docs/coproc.md)",
    .parts = {{hwp_cp_desc_fields, offsetof(hwx__cpd, c)},
              {hwp_cp_lvp_desc_fields, offsetof(hwx__cpd, l)},
              {hwp_cp_simple_desc_fields, offsetof(hwx__cpd, s)}},
    .desc_size = sizeof(hwx__cpd),
    .state_size = sizeof(hwx__cp),
    .metrics = hwx__cp_metrics,
    .nmetrics = HWX_COUNT(hwx__cp_metrics),
    .defaults = hwx__cp_defaults,
    .set = hwx__cp_set,
    .wants = hwx__cp_wants,
    .bytes = hwx__cp_bytes,
    .init = hwx__cp_init,
    .insn = hwx__cp_insn,
    .block = hwx__cp_block,
    .flush = hwx__cp_flush,
    .in_bursts = 1,
    .merge = hwx__cp_merge,
    .report_text = hwx__cp_text,
    .report_json = hwx__cp_json,
    .eval_bytes = hwx__cp_eval_bytes,
    .evaluate = hwx__cp_eval,
    .eval_text = hwx__cp_eval_text,
    .skip = hwx__cp_skip,
    .counter_names = hwx__cp_counter_names,
    .counters = hwx__cp_counters,
};
