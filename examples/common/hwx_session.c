/* examples/common/hwx_session.c: one session per vCPU/thread. It owns an
 * instance of every enabled model (all in the session's memory), the
 * modelled-overhead accounting (one hwp_cost) and, with exact=on, the
 * exact ground truth; it feeds them every retired instruction, merges
 * per-vCPU sessions and writes the combined report.
 *
 * Adding a model is local to this file: its desc parsing in
 * hwx__model_param, its bytes/init/insn/merge/report calls in the
 * hwx__glue_* functions.
 */
#include "hwx_int.h"

#define HWX__MAGIC HWP__MAGIC('h', 'w', 'x', 's')

/* The co-processor's baseline (seed 000 sec. 5) is compared at equal
 * overhead: simple samplers run at these periods (loads between samples)
 * beside it, charging nothing; the evaluation picks the one whose modelled
 * cost (samples x (interrupt + sample cycles)) is closest to what the
 * co-processor was charged. coproc_simple_period=N runs N alone. They run
 * only beside the exact profile (exact=on).
 * One sampler's error depends on where its few samples land (on bzip2 under
 * the Valgrind tool 0.151-0.184 from one seed or input path to the next,
 * docs/valgrind.md), so each period runs HWX__NSEEDS samplers with seeds
 * seed+1 .. seed+HWX__NSEEDS and the report gives their mean error and
 * standard deviation: the co-processor is ranked against the mean, with
 * the spread beside it. */
#define HWX__NSIMPLE 7
#define HWX__NSEEDS 4
#define HWX__NCPS (HWX__NSIMPLE * HWX__NSEEDS)
static const uint32_t hwx__simple_periods[HWX__NSIMPLE] = {300, 1000, 3000, 10000,
                                                           30000, 100000, 300000};

struct hwx_models {
    uint32_t on; /* HWX_M_* that were initialised */
    uint32_t pad_;
    hwp_pm *pm;
    hwp_pm_table *pm_tab;
    hwp_rap *rap;
    hwp_path *path;
    hwp_hpt *hpt;
    hwp_phase *phase;
    uint32_t *phase_ids;  /* detector's phase id per interval (bounded) */
    uint64_t phase_n;     /* intervals seen                              */
    hwp_phase *bbv;       /* reference: the BBV detector (Sherwood et al.) */
    uint32_t *bbv_ids;
    uint64_t bbv_n;
    uint32_t bbv_insns;   /* instructions since the last branch          */
    uint32_t path_pend;   /* block mode: instructions since the last branch */
    int path_started;
    hwp_strat *strat;
    hwp_strat_acc *strat_acc;
    hwp_cp *cp;
    hwp_cp_simple *cps[HWX__NCPS]; /* period i, seed j at [i * HWX__NSEEDS + j];
                                      NULL after the last one initialised */
    uint64_t cps_batch; /* loads from the last sync to the next sample of any */
    uint64_t cps_left;  /* of them still to come                              */
};

/* Intervals whose phase ids are kept for the report and the score. */
#define HWX__PHASE_LOG 4096u

/* ---- parameter parsing helpers -------------------------------------------- */

static hwp_status hwx__bad(const char **why, const char *reason) {
    if (why) *why = reason;
    return HWP_EINVAL;
}

static hwp_status hwx__u32(const char *v, uint32_t *out, const char **why) {
    uint64_t x;
    if (!hwx_parse_u64(v, &x) || x > 0xFFFFFFFFu)
        return hwx__bad(why, "hwx: expected an integer below 2^32");
    *out = (uint32_t)x;
    return HWP_OK;
}

static hwp_status hwx__f64(const char *v, double *out, const char **why) {
    if (!hwx_parse_f64(v, out)) return hwx__bad(why, "hwx: expected a number");
    return HWP_OK;
}

/* "512x4" -> 512, 4 */
static hwp_status hwx__pair(const char *v, uint32_t *a, uint32_t *b,
                            const char **why) {
    char first[24];
    size_t n = 0;
    while (v[n] && v[n] != 'x') n++;
    if (!v[n] || n == 0 || n >= sizeof first)
        return hwx__bad(why, "hwx: expected ENTRIESxWAYS, e.g. 512x4");
    hwp__copy(first, v, n);
    first[n] = 0;
    if (hwx__u32(first, a, why) != HWP_OK) return HWP_EINVAL;
    return hwx__u32(v + n + 1, b, why);
}

/* ---- per-model descs from the options ------------------------------------- */

typedef struct hwx__pmd {
    hwp_pm_desc p;
    hwp_pm_table_desc t;
} hwx__pmd;

static hwp_status hwx__pm_set(hwx__pmd *d, const char *k, const char *v,
                              const char **why) {
    if (hwx_streq(k, "interval")) return hwx__u32(v, &d->p.interval, why);
    if (hwx_streq(k, "paired")) return hwx__u32(v, &d->p.paired, why);
    if (hwx_streq(k, "window")) return hwx__u32(v, &d->p.window, why);
    if (hwx_streq(k, "buffer")) return hwx__u32(v, &d->p.buffer, why);
    if (hwx_streq(k, "dist")) {
        if (hwx_streq(v, "uniform")) d->p.dist = HWP_PM_DIST_UNIFORM;
        else if (hwx_streq(v, "geometric")) d->p.dist = HWP_PM_DIST_GEOMETRIC;
        else if (hwx_streq(v, "fixed")) d->p.dist = HWP_PM_DIST_FIXED;
        else return hwx__bad(why, "pm_dist: uniform, geometric or fixed");
        return HWP_OK;
    }
    if (hwx_streq(k, "table")) return hwx__u32(v, &d->t.capacity, why);
    return hwx__bad(why, "pm: parameters are interval, paired, window, buffer, dist, table");
}

static hwp_status hwx__rap_set(hwp_rap_desc *d, const char *k, const char *v,
                               const char **why) {
    if (hwx_streq(k, "kb")) {
        uint32_t kb;
        if (hwx__u32(v, &kb, why) != HWP_OK) return HWP_EINVAL;
        if (kb == 0 || kb > (1u << 20)) return hwx__bad(why, "rap_kb: 1..2^20");
        d->nodes = kb * 1024u / (uint32_t)sizeof(hwp_rap_node); /* sec. 3.4 */
        return HWP_OK;
    }
    if (hwx_streq(k, "eps")) return hwx__f64(v, &d->eps, why);
    if (hwx_streq(k, "b")) return hwx__u32(v, &d->branching, why);
    if (hwx_streq(k, "q")) return hwx__u32(v, &d->q, why);
    if (hwx_streq(k, "buffer")) return hwx__u32(v, &d->buffer, why);
    if (hwx_streq(k, "bits")) return hwx__u32(v, &d->key_bits, why);
    if (hwx_streq(k, "hot")) return hwx__f64(v, &d->hot, why);
    if (hwx_streq(k, "first_merge")) return hwx_parse_u64(v, &d->first_merge) ? HWP_OK : hwx__bad(why, "rap_first_merge: integer");
    return hwx__bad(why, "rap: parameters are kb, eps, b, q, buffer, bits, hot, first_merge");
}

typedef struct hwx__pathd {
    hwp_path_desc p;
    hwp_hpt_desc h;
    hwp_phase_desc ph;
    hwp_phase_desc bbv; /* the reference detector: same interval, 1024 counters */
} hwx__pathd;

static hwp_status hwx__path_set(hwx__pathd *d, const char *k, const char *v,
                                const char **why) {
    if (hwx_streq(k, "hpt")) return hwx__pair(v, &d->h.entries, &d->h.ways, why);
    if (hwx_streq(k, "index")) {
        if (hwx_streq(v, "plb")) d->h.index = HWP_HPT_PLB;
        else if (hwx_streq(v, "pb")) d->h.index = HWP_HPT_PB;
        else if (hwx_streq(v, "p")) d->h.index = HWP_HPT_P;
        else return hwx__bad(why, "path_index: plb, pb or p");
        return HWP_OK;
    }
    if (hwx_streq(k, "repl")) {
        if (hwx_streq(v, "lfu")) d->h.repl = HWP_HPT_LFU;
        else if (hwx_streq(v, "lru")) d->h.repl = HWP_HPT_LRU;
        else return hwx__bad(why, "path_repl: lfu or lru");
        return HWP_OK;
    }
    if (hwx_streq(k, "mode")) {
        if (hwx_streq(v, "bl")) d->p.mode = HWP_PATH_BL;
        else if (hwx_streq(v, "wpp")) d->p.mode = HWP_PATH_WPP;
        else return hwx__bad(why, "path_mode: bl or wpp");
        return HWP_OK;
    }
    if (hwx_streq(k, "depth")) return hwx__u32(v, &d->p.depth, why);
    if (hwx_streq(k, "maxlen")) return hwx__u32(v, &d->p.max_len, why);
    if (hwx_streq(k, "queue")) return hwx__u32(v, &d->p.queue, why);
    if (hwx_streq(k, "interval")) return hwx_parse_u64(v, &d->ph.interval) ? HWP_OK : hwx__bad(why, "path_interval: integer");
    if (hwx_streq(k, "threshold")) return hwx_parse_u64(v, &d->ph.threshold) ? HWP_OK : hwx__bad(why, "path_threshold: integer");
    if (hwx_streq(k, "counters")) return hwx__u32(v, &d->ph.counters, why);
    return hwx__bad(why, "path: parameters are hpt, index, repl, mode, depth, maxlen, queue, interval, threshold, counters");
}

typedef struct hwx__stratd {
    hwp_strat_desc s;
    hwp_strat_acc_desc a;
} hwx__stratd;

static hwp_status hwx__strat_set(hwx__stratd *d, const char *k, const char *v,
                                 const char **why) {
    if (hwx_streq(k, "scheme")) {
        if (hwx_streq(v, "sampled")) d->s.scheme = HWP_STRAT_SAMPLED;
        else if (hwx_streq(v, "tagged")) d->s.scheme = HWP_STRAT_TAGGED;
        else if (hwx_streq(v, "assoc")) d->s.scheme = HWP_STRAT_ASSOC;
        else return hwx__bad(why, "strat_scheme: sampled, tagged or assoc");
        return HWP_OK;
    }
    if (hwx_streq(k, "sampler")) {
        if (hwx_streq(v, "periodic")) d->s.sampler = HWP_STRAT_PERIODIC;
        else if (hwx_streq(v, "random")) d->s.sampler = HWP_STRAT_RANDOM;
        else if (hwx_streq(v, "countdown")) d->s.sampler = HWP_STRAT_COUNTDOWN;
        else return hwx__bad(why, "strat_sampler: periodic, random or countdown");
        return HWP_OK;
    }
    if (hwx_streq(k, "hash")) { /* sec. 3.5 (paper) or two multiplies */
        if (hwx_streq(v, "paper")) d->s.hash = HWP_STRAT_HASH_PAPER;
        else if (hwx_streq(v, "cheap")) d->s.hash = HWP_STRAT_HASH_CHEAP;
        else return hwx__bad(why, "strat_hash: paper or cheap");
        return HWP_OK;
    }
    if (hwx_streq(k, "rate")) return hwx__u32(v, &d->s.rate, why);
    if (hwx_streq(k, "entries")) return hwx__u32(v, &d->s.entries, why);
    if (hwx_streq(k, "ways")) return hwx__u32(v, &d->s.ways, why);
    if (hwx_streq(k, "counter")) return hwx__u32(v, &d->s.counter, why);
    if (hwx_streq(k, "l2")) return hwx__u32(v, &d->s.l2_entries, why);
    if (hwx_streq(k, "queue")) return hwx__u32(v, &d->s.queue, why);
    if (hwx_streq(k, "tuples")) return hwx__u32(v, &d->a.tuples, why);
    return hwx__bad(why, "strat: parameters are scheme, hash, sampler, rate, entries, ways, counter, l2, queue, tuples");
}

typedef struct hwx__cpd {
    hwp_cp_desc c;
    hwp_cp_lvp_desc l;
    hwp_cp_simple_desc s;
} hwx__cpd;

static hwp_status hwx__cp_set(hwx__cpd *d, const char *k, const char *v,
                              const char **why) {
    if (hwx_streq(k, "buffer")) return hwx__u32(v, &d->c.buffer_bytes, why);
    if (hwx_streq(k, "clock")) return hwx__u32(v, &d->c.clock_x16, why);
    if (hwx_streq(k, "slots")) return hwx__u32(v, &d->l.slots, why);
    if (hwx_streq(k, "loads")) return hwx__u32(v, &d->c.lvp_loads, why);
    if (hwx_streq(k, "values")) return hwx__u32(v, &d->c.lvp_values, why);
    if (hwx_streq(k, "simple_period")) return hwx__u32(v, &d->s.period, why);
    return hwx__bad(why, "coproc: parameters are buffer, clock, slots, loads, values, simple_period");
}

/* Apply every stored parameter of `model` through `set`. */
#define HWX__APPLY(o, mdl, set, d, why)                                     \
    do {                                                                    \
        uint32_t i_;                                                        \
        for (i_ = 0; i_ < (o)->nparam; i_++)                                \
            if ((o)->param[i_].model == (uint32_t)(mdl) &&                  \
                set((d), (o)->param[i_].key, (o)->param[i_].val, (why)) !=  \
                    HWP_OK)                                                 \
                return HWP_EINVAL;                                          \
    } while (0)

/* Descs of every model from the options; zero fields keep the paper's
 * defaults. */
typedef struct hwx__descs {
    hwx__pmd pm;
    hwp_rap_desc rap;
    hwx__pathd path;
    hwx__stratd strat;
    hwx__cpd cp;
    int unused_;
} hwx__descs;

static hwp_status hwx__descs_from(const hwx_opts *o, hwx__descs *d,
                                  const char **why) {
    hwp__zero(d, sizeof *d);
    d->pm.p.seed = o->seed;
    d->pm.p.deliver = hwp_pm_table_deliver;
    HWX__APPLY(o, HWP_MODEL_PROFILEME, hwx__pm_set, &d->pm, why);
    /* The table's estimators need the sampler's S and W. */
    d->pm.t.interval = d->pm.p.interval;
    d->pm.t.window = d->pm.p.window;
    d->rap.source = o->rap_key == HWX_KEY_VALUE ? HWP_RAP_SRC_VALUE
                    : o->rap_key == HWX_KEY_ADDR ? HWP_RAP_SRC_ADDR
                                                 : HWP_RAP_SRC_PC;
    d->rap.buffer = 1024; /* the stage-0 combining buffer, 1K as in sec. 3.3 */
    d->rap.cls_mask = o->rap_key == HWX_KEY_VALUE ? HWP_CLS_BIT(HWP_CLS_LOAD)
                      : o->rap_key == HWX_KEY_ADDR
                          ? HWP_CLS_BIT(HWP_CLS_LOAD) | HWP_CLS_BIT(HWP_CLS_STORE)
                          : 0;
    HWX__APPLY(o, HWP_MODEL_RAP, hwx__rap_set, &d->rap, why);
    HWX__APPLY(o, HWP_MODEL_PATH, hwx__path_set, &d->path, why);
    d->path.bbv = d->path.ph;
    d->path.bbv.counters = 1024;
    d->strat.s.seed = o->seed;
    d->strat.s.on_interrupt = hwp_strat_acc_handler;
    HWX__APPLY(o, HWP_MODEL_STRAT, hwx__strat_set, &d->strat, why);
    d->cp.c.seed = o->seed;
    d->cp.s.seed = o->seed + 1;
    HWX__APPLY(o, HWP_MODEL_COPROC, hwx__cp_set, &d->cp, why);
    return HWP_OK;
}

/* Storage of every enabled model with these descs; 0 if one is invalid. */
static size_t hwx__descs_bytes(const hwx_opts *o, const hwx__descs *d,
                               const char **why) {
    size_t n = hwp__align(sizeof(hwx_models)), k;
    if (o->models & HWX_M_PM) {
        size_t a = hwp_pm_bytes(&d->pm.p), b = hwp_pm_table_bytes(&d->pm.t);
        if (!a || !b) return hwx__bad(why, "pm: invalid parameters"), 0;
        n += hwp__align(sizeof(hwp_pm)) + hwp__align(a) +
             hwp__align(sizeof(hwp_pm_table)) + hwp__align(b);
    }
    if (o->models & HWX_M_RAP) {
        if (!(k = hwp_rap_bytes(&d->rap))) return hwx__bad(why, "rap: invalid parameters"), 0;
        n += hwp__align(sizeof(hwp_rap)) + hwp__align(k);
    }
    if (o->models & HWX_M_PATH) {
        size_t a = hwp_path_bytes(&d->path.p), b = hwp_hpt_bytes(&d->path.h),
               c = hwp_phase_bytes(&d->path.ph);
        if (!a || !b || !c) return hwx__bad(why, "path: invalid parameters"), 0;
        n += hwp__align(sizeof(hwp_path)) + hwp__align(a) +
             hwp__align(sizeof(hwp_hpt)) + hwp__align(b) +
             hwp__align(sizeof(hwp_phase)) + hwp__align(c) +
             hwp__align(HWX__PHASE_LOG * sizeof(uint32_t));
        n += (hwp__align(sizeof(hwp_phase)) + hwp__align(hwp_phase_bytes(&d->path.bbv)) +
              hwp__align(HWX__PHASE_LOG * sizeof(uint32_t)));
    }
    if (o->models & HWX_M_STRAT) {
        size_t a = hwp_strat_bytes(&d->strat.s), b = hwp_strat_acc_bytes(&d->strat.a);
        if (!a || !b) return hwx__bad(why, "strat: invalid parameters"), 0;
        n += hwp__align(sizeof(hwp_strat)) + hwp__align(a) +
             hwp__align(sizeof(hwp_strat_acc)) + hwp__align(b);
    }
    if (o->models & HWX_M_COPROC) {
        size_t a = hwp_cp_bytes(&d->cp.c), b = hwp_cp_simple_bytes(&d->cp.s);
        if (!a || !b) return hwx__bad(why, "coproc: invalid parameters"), 0;
        n += hwp__align(sizeof(hwp_cp)) + hwp__align(a) +
             HWX__NCPS * (hwp__align(sizeof(hwp_cp_simple)) + hwp__align(b));
    }
    return n;
}

hwp_status hwx__model_param(uint32_t model, const char *key, const char *val,
                            const char **why) {
    hwx__descs d;
    hwp__zero(&d, sizeof d);
    switch (model) {
    case HWP_MODEL_PROFILEME:
        if (hwx__pm_set(&d.pm, key, val, why) != HWP_OK) return HWP_EINVAL;
        d.pm.t.interval = d.pm.p.interval;
        d.pm.t.window = d.pm.p.window;
        if (!hwp_pm_bytes(&d.pm.p) || !hwp_pm_table_bytes(&d.pm.t))
            return hwx__bad(why, "pm: value out of range");
        return HWP_OK;
    case HWP_MODEL_RAP:
        if (hwx__rap_set(&d.rap, key, val, why) != HWP_OK) return HWP_EINVAL;
        if (!hwp_rap_bytes(&d.rap)) return hwx__bad(why, "rap: value out of range");
        return HWP_OK;
    case HWP_MODEL_PATH:
        if (hwx__path_set(&d.path, key, val, why) != HWP_OK) return HWP_EINVAL;
        if (!hwp_path_bytes(&d.path.p) || !hwp_hpt_bytes(&d.path.h) ||
            !hwp_phase_bytes(&d.path.ph))
            return hwx__bad(why, "path: value out of range");
        return HWP_OK;
    case HWP_MODEL_STRAT:
        if (hwx__strat_set(&d.strat, key, val, why) != HWP_OK) return HWP_EINVAL;
        if (!hwp_strat_bytes(&d.strat.s) || !hwp_strat_acc_bytes(&d.strat.a))
            return hwx__bad(why, "strat: value out of range");
        return HWP_OK;
    case HWP_MODEL_COPROC:
        if (hwx__cp_set(&d.cp, key, val, why) != HWP_OK) return HWP_EINVAL;
        if (!hwp_cp_bytes(&d.cp.c) || !hwp_cp_simple_bytes(&d.cp.s))
            return hwx__bad(why, "coproc: value out of range");
        return HWP_OK;
    default:
        break;
    }
    return hwx__bad(why, "hwx: unknown parameter for that model");
}

static size_t hwx__models_bytes(const hwx_opts *o) {
    hwx__descs d;
    const char *why;
    if (hwx__descs_from(o, &d, &why) != HWP_OK) return 0;
    return hwx__descs_bytes(o, &d, &why);
}

static void hwx__on_interval(void *ctx, const hwp_phase_interval *r) {
    hwx_models *m = (hwx_models *)ctx;
    if (m->phase_n < HWX__PHASE_LOG) m->phase_ids[m->phase_n] = r->phase;
    m->phase_n++;
}

static void hwx__on_bbv_interval(void *ctx, const hwp_phase_interval *r) {
    hwx_models *m = (hwx_models *)ctx;
    if (m->bbv_n < HWX__PHASE_LOG) m->bbv_ids[m->bbv_n] = r->phase;
    m->bbv_n++;
}

/* The simple samplers (up to HWX__NCPS) are fed in batches: a load none
 * of them samples only moves each one's `loads` and `countdown`, so hwx
 * counts such loads once and applies them to all at the load that some
 * sampler does sample (or at finish). Their state is then exactly what
 * per-load hwp_cp_simple_load calls give (hwp_cp_simple_skip), at one
 * decrement per load instead of 28 calls. `done` loads since the last
 * sync were not sampled by any. */
static void hwx__simple_sync(hwx_models *m, uint64_t done) {
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
static void hwx__simple_due(hwx_models *m, const hwp_insn *in) {
    uint32_t i;
    hwx__simple_sync(m, m->cps_batch - 1);
    for (i = 0; i < HWX__NCPS && m->cps[i]; i++)
        hwp_cp_simple_load(m->cps[i], in->pc, in->value);
    hwx__simple_sync(m, 0);
}

/* Carve an instance and its storage, init it, fail with its reason. */
#define HWX__INIT(s, cur, type, ptr, bytesfn, initfn, desc)                 \
    do {                                                                    \
        size_t k_ = bytesfn(desc);                                          \
        ptr = (type *)hwp__carve(cur, sizeof(type));                        \
        if (initfn(ptr, hwp__carve(cur, k_), k_, desc, &(s)->cost) != HWP_OK) \
            return hwp__fail(&(s)->head, HWP_EINVAL, hwp_why(ptr));         \
    } while (0)

static hwp_status hwx__models_init(hwx_session *s, unsigned char **cursor) {
    hwx_models *m = (hwx_models *)hwp__carve(cursor, sizeof(hwx_models));
    const hwx_opts *o = &s->opts;
    hwx__descs d;
    const char *why = "";
    hwp__zero(m, sizeof *m);
    s->m = m;
    if (hwx__descs_from(o, &d, &why) != HWP_OK || !hwx__descs_bytes(o, &d, &why))
        return hwp__fail(&s->head, HWP_EINVAL, why);
    if (o->models & HWX_M_PM) {
        size_t k = hwp_pm_table_bytes(&d.pm.t);
        m->pm_tab = (hwp_pm_table *)hwp__carve(cursor, sizeof(hwp_pm_table));
        if (hwp_pm_table_init(m->pm_tab, hwp__carve(cursor, k), k, &d.pm.t) != HWP_OK)
            return hwp__fail(&s->head, HWP_EINVAL, hwp_why(m->pm_tab));
        d.pm.p.user = m->pm_tab;
        HWX__INIT(s, cursor, hwp_pm, m->pm, hwp_pm_bytes, hwp_pm_init, &d.pm.p);
    }
    if (o->models & HWX_M_RAP)
        HWX__INIT(s, cursor, hwp_rap, m->rap, hwp_rap_bytes, hwp_rap_init, &d.rap);
    if (o->models & HWX_M_PATH) {
        d.path.ph.on_interval = hwx__on_interval;
        d.path.ph.ctx = m;
        HWX__INIT(s, cursor, hwp_hpt, m->hpt, hwp_hpt_bytes, hwp_hpt_init, &d.path.h);
        HWX__INIT(s, cursor, hwp_phase, m->phase, hwp_phase_bytes, hwp_phase_init, &d.path.ph);
        HWX__INIT(s, cursor, hwp_path, m->path, hwp_path_bytes, hwp_path_init, &d.path.p);
        m->phase_ids = (uint32_t *)hwp__carve(cursor, HWX__PHASE_LOG * sizeof(uint32_t));
        d.path.bbv.on_interval = hwx__on_bbv_interval;
        d.path.bbv.ctx = m;
        /* The reference detector is not hardware being modelled: no cost;
         * it only runs beside the exact profile (accuracy). */
        if (o->exact) {
            size_t k = hwp_phase_bytes(&d.path.bbv);
            m->bbv = (hwp_phase *)hwp__carve(cursor, sizeof(hwp_phase));
            if (hwp_phase_init(m->bbv, hwp__carve(cursor, k), k, &d.path.bbv, NULL) != HWP_OK)
                return hwp__fail(&s->head, HWP_EINVAL, hwp_why(m->bbv));
        }
        m->bbv_ids = (uint32_t *)hwp__carve(cursor, HWX__PHASE_LOG * sizeof(uint32_t));
        if (hwp_path_attach(m->path, m->hpt, m->phase) != HWP_OK)
            return hwp__fail(&s->head, HWP_EINVAL, hwp_why(m->path));
    }
    if (o->models & HWX_M_STRAT) {
        size_t k = hwp_strat_acc_bytes(&d.strat.a);
        m->strat_acc = (hwp_strat_acc *)hwp__carve(cursor, sizeof(hwp_strat_acc));
        if (hwp_strat_acc_init(m->strat_acc, hwp__carve(cursor, k), k, &d.strat.a) != HWP_OK)
            return hwp__fail(&s->head, HWP_EINVAL, hwp_why(m->strat_acc));
        d.strat.s.ctx = m->strat_acc;
        HWX__INIT(s, cursor, hwp_strat, m->strat, hwp_strat_bytes, hwp_strat_init, &d.strat.s);
    }
    if (o->models & HWX_M_COPROC) {
        HWX__INIT(s, cursor, hwp_cp, m->cp, hwp_cp_bytes, hwp_cp_init, &d.cp.c);
        {
            uint32_t i, fixed = d.cp.s.period;
            uint64_t seed = d.cp.s.seed;
            size_t k = hwp_cp_simple_bytes(&d.cp.s);
            /* Only the accuracy evaluation needs the baseline. */
            for (i = 0; o->exact && i < (fixed ? 1u : HWX__NSIMPLE) * HWX__NSEEDS; i++) {
                d.cp.s.period = fixed ? fixed : hwx__simple_periods[i / HWX__NSEEDS];
                d.cp.s.seed = seed + i % HWX__NSEEDS;
                m->cps[i] = (hwp_cp_simple *)hwp__carve(cursor, sizeof(hwp_cp_simple));
                /* The baseline is not hardware being modelled: no cost. */
                if (hwp_cp_simple_init(m->cps[i], hwp__carve(cursor, k), k, &d.cp.s, NULL) != HWP_OK)
                    return hwp__fail(&s->head, HWP_EINVAL, hwp_why(m->cps[i]));
            }
            if (m->cps[0]) hwx__simple_sync(m, 0);
        }
        if (hwp_cp_lvp_start(m->cp, &d.cp.l) != HWP_OK)
            return hwp__fail(&s->head, HWP_EINVAL, hwp_why(m->cp));
    }
    m->on = o->models;
    return HWP_OK;
}

/* Only with exact=on (m->cps[0] set): callers test that first, so a run
 * without the comparison pays nothing per load for the baseline. */
static void hwx__simple_load(hwx_models *m, const hwp_insn *in) {
    if (HWP_UNLIKELY(--m->cps_left == 0)) hwx__simple_due(m, in);
}

/* Feed one instruction to every enabled model. */
static void hwx__models_insn(hwx_models *m, const hwp_insn *in,
                             uint64_t cycle) {
    if (m->pm) hwp_pm_insn(m->pm, in, cycle);
    if (m->rap) hwp_rap_insn(m->rap, in);
    if (m->path) {
        if (HWP_UNLIKELY(!m->path_started)) {
            hwp_path_begin(m->path, in->pc); /* program entry, sec. 3 */
            m->path_started = 1;
        }
        hwp_path_insn(m->path, in);
        m->bbv_insns++;
        if (m->bbv && hwp_cls_is_branch(in->cls)) {
            hwp_phase_add_branch(m->bbv, in->pc, m->bbv_insns);
            m->bbv_insns = 0;
        }
    }
    if (m->strat) hwp_strat_insn(m->strat, in);
    if (m->cp) {
        hwp_cp_retire(m->cp, in);
        if (m->cps[0] && in->cls == HWP_CLS_LOAD) hwx__simple_load(m, in);
    }
}

/* Block mode: the n instructions of one basic block at once, the last one
 * described by `last`, the other memory instructions by mem[0..nmem) (in
 * order). */
static void hwx__models_block(hwx_models *m, const uint64_t *pcs, uint32_t n,
                              const hwp_insn *last, const hwp_insn *mem,
                              uint32_t nmem, uint64_t cycle) {
    bool br = hwp_cls_is_branch(last->cls);
    bool taken = (last->events & HWP_EV_TAKEN) != 0;
    uint32_t j;
    if (m->pm) {
        uint32_t rem = n, k;
        /* The fetch counter passes the block at once (4.1.1); a selected
         * instruction gets its own record, as hwp_pm_insn would give it. */
        while (rem && (k = hwp_pm_fetch_block(m->pm, rem)) != 0) {
            uint32_t idx = n - rem + k - 1;
            hwp_insn in;
            if (idx + 1 == n) {
                in = *last;
            } else {
                hwp__zero(&in, sizeof in);
                in.pc = pcs[idx];
                in.next_pc = pcs[idx + 1];
                for (j = 0; j < nmem; j++)
                    if (mem[j].pc == in.pc) in = mem[j];
            }
            hwp_pm_sample_insn(m->pm, &in, cycle + idx);
            rem -= k;
        }
        if (last->cls == HWP_CLS_BR_COND) hwp_pm_branch(m->pm, taken);
    }
    if (m->rap) {
        /* Code profile at block granularity: the block's instructions count
         * at its first pc (one combined event instead of n). Value and
         * address keys come from the memory records. */
        if (m->rap->desc.source == HWP_RAP_SRC_PC) {
            hwp_rap_add(m->rap, pcs[0], n);
        } else {
            for (j = 0; j < nmem; j++) hwp_rap_insn(m->rap, &mem[j]);
            hwp_rap_insn(m->rap, last);
        }
    }
    if (m->path) {
        if (HWP_UNLIKELY(!m->path_started)) {
            hwp_path_begin(m->path, pcs[0]);
            m->path_started = 1;
        }
        m->path_pend += n;
        m->bbv_insns += n;
        if (br) {
            hwp_path_branch(m->path, last->pc, last->next_pc, last->cls, taken,
                            m->path_pend, 0);
            if (m->bbv) hwp_phase_add_branch(m->bbv, last->pc, m->bbv_insns);
            m->path_pend = 0;
            m->bbv_insns = 0;
        }
    }
    if (m->strat) {
        for (j = 0; j < nmem; j++) hwp_strat_insn(m->strat, &mem[j]);
        hwp_strat_insn(m->strat, last);
    }
    if (m->cp) {
        /* The co-processor's clock sees every instruction; only the
         * memory ones can pass its load filter. */
        hwp_cp_tick(m->cp, n - nmem - 1);
        for (j = 0; j <= nmem; j++) {
            const hwp_insn *in = j < nmem ? &mem[j] : last;
            hwp_cp_retire(m->cp, in);
            if (m->cps[0] && in->cls == HWP_CLS_LOAD) hwx__simple_load(m, in);
        }
    }
}

static void hwx__models_finish(hwx_models *m) {
    if (m->pm) hwp_pm_flush(m->pm);
    if (m->rap) hwp_rap_flush(m->rap);
    if (m->path) hwp_path_flush(m->path);
    if (m->strat) hwp_strat_flush(m->strat);
    if (m->cp) hwp_cp_finish(m->cp);
    if (m->cps[0]) hwx__simple_sync(m, m->cps_batch - m->cps_left);
}

/* Merge what the models can merge; the rest stays with dst (the report
 * says so). */
static void hwx__models_merge(hwx_models *dst, const hwx_models *src) {
    if (dst->pm_tab) hwp_pm_table_merge(dst->pm_tab, src->pm_tab);
    if (dst->rap) hwp_rap_merge(dst->rap, src->rap);
    if (dst->hpt) hwp_hpt_merge(dst->hpt, src->hpt);
    if (dst->strat_acc) hwp_strat_acc_merge(dst->strat_acc, src->strat_acc);
    if (dst->cp) {
        hwp_cp_merge(dst->cp, src->cp);
        uint32_t i;
        for (i = 0; i < HWX__NCPS && dst->cps[i] && src->cps[i]; i++)
            hwp_cp_simple_merge(dst->cps[i], src->cps[i]);
    }
}

static void hwx__pct(const hwp_writer *w, double num, double den) {
    hwp_put_f64(w, den > 0 ? 100.0 * num / den : 0.0, 2);
    hwp_put_str(w, "%");
}

static uint64_t hwx__rap_exact(void *ctx, uint64_t lo, uint64_t hi) {
    const hwx_session *s = (const hwx_session *)ctx;
    return hwx__xtab_range(s->opts.rap_key == HWX_KEY_PC ? &s->exact->pc
                                                         : &s->exact->key,
                           lo, hi);
}

static uint64_t hwx__pm_truth(void *ctx, uint64_t pc) {
    return hwx__xtab_get(&((const hwx_session *)ctx)->exact->pc, pc, 0);
}

static void hwx__models_report_text(const hwx_session *s, const hwp_writer *w) {
    const hwx_models *m = s->m;
    uint32_t top = s->opts.top;
    if (m->path) {
        hwp_path_row rows[32];
        size_t n = hwp_hpt_export(m->hpt, rows, top < 32 ? top : 32), i;
        hwp_put_str(w, "\n-- hot paths: path stack + Hot Path Table (seed 003) --\n");
        hwx__kv(w, "  HPT ", m->hpt->desc.entries);
        hwx__kv(w, "x", m->hpt->desc.ways);
        hwx__kv(w, ": paths ", m->path->paths);
        hwx__kv(w, ", hits ", m->hpt->hits);
        hwx__kv(w, ", misses ", m->hpt->misses);
        hwp_put_str(w, "\n  start               len  directions         count   (exact)\n");
        for (i = 0; i < n; i++) {
            hwp_put_str(w, "  ");
            hwp_put_hex(w, rows[i].pd.start);
            hwp_put_str(w, "  ");
            hwp_put_u64(w, hwp_path_pd_len(&rows[i].pd));
            hwp_put_str(w, "  ");
            hwp_put_hex(w, hwp_path_pd_dirs(&rows[i].pd));
            hwp_put_str(w, "  ");
            hwp_put_u64(w, rows[i].count);
            if (s->exact) {
                hwp_put_str(w, "  (");
                hwp_put_u64(w, hwx__xtab_get(&s->exact->path, rows[i].pd.start,
                                             rows[i].pd.shape));
                hwp_put_str(w, ")");
            }
            hwp_put_str(w, "\n");
        }
        hwx__kv(w, "\n-- phases: path-based detector (seed 003 sec. 6) --\n  intervals ",
                m->phase->intervals);
        hwx__kv(w, " of ", m->phase->desc.interval);
        hwx__kv(w, " instructions, phase changes ", m->phase->changes);
        hwx__kv(w, ", phases ", m->phase->next_id);
        hwp_put_str(w, "\n  timeline (phase id per interval): ");
        for (i = 0; i < m->phase_n && i < HWX__PHASE_LOG && i < 120; i++) {
            uint32_t id = m->phase_ids[i];
            char c = (char)(id < 10 ? '0' + id : id < 36 ? 'a' + (id - 10) : '+');
            hwp_put(w, &c, 1);
        }
        hwp_put_str(w, m->phase_n > 120 ? "...\n" : "\n");
    }
    if (m->rap) {
        hwp_rap_range r[24];
        size_t n = hwp_rap_hot(m->rap, m->rap->desc.hot, r, 24), i;
        hwp_put_str(w, "\n-- hot ");
        hwp_put_str(w, s->opts.rap_key == HWX_KEY_PC ? "code" : s->opts.rap_key == HWX_KEY_VALUE ? "value" : "address");
        hwx__kv(w, " ranges: RAP (seed 002) --\n  ", m->rap->nodes);
        hwx__kv(w, " of ", m->rap->cap);
        hwp_put_str(w, " nodes, eps ");
        hwp_put_f64(w, m->rap->desc.eps, 3);
        hwp_put_str(w, ", hot = at least ");
        hwx__pct(w, m->rap->desc.hot, 1.0);
        hwp_put_str(w, " of ");
        hwp_put_u64(w, m->rap->n);
        hwp_put_str(w, " events\n");
        for (i = 0; i < n; i++) {
            hwp_put_str(w, "  [");
            hwp_put_hex(w, r[i].lo);
            hwp_put_str(w, ", ");
            hwp_put_hex(w, r[i].hi);
            hwp_put_str(w, "]  ");
            hwx__pct(w, (double)r[i].sum, (double)m->rap->n);
            if (s->exact) {
                hwp_put_str(w, "  (exact ");
                hwx__pct(w, (double)hwx__rap_exact((void *)(uintptr_t)s, r[i].lo, r[i].hi),
                         (double)m->rap->n);
                hwp_put_str(w, ")");
            }
            hwp_put_str(w, "\n");
        }
    }
    if (m->strat) {
        hwp_strat_msg best[32], t;
        uint32_t cur = 0, n = 0, i, j, cap = top < 32 ? top : 32;
        while (hwp_strat_acc_next(m->strat_acc, &cur, &t)) {
            if (t.kind != HWP_STRAT_KIND_VALUE) continue;
            if (n == cap && t.count <= best[n - 1].count) continue;
            j = n < cap ? n++ : n - 1; /* keep best[] sorted, descending */
            while (j > 0 && best[j - 1].count < t.count) {
                best[j] = best[j - 1];
                j--;
            }
            best[j] = t;
        }
        hwp_put_str(w, "\n-- value invariance of the top loads: stratified sampling (seed 001) --\n");
        hwp_put_str(w, "  load pc          value               est. count  invariance");
        hwp_put_str(w, s->exact ? "  (exact)\n" : "\n");
        for (i = 0; i < n; i++) {
            hwp_put_str(w, "  ");
            hwp_put_hex(w, best[i].pc);
            hwp_put_str(w, "  ");
            hwp_put_hex(w, best[i].w);
            hwp_put_str(w, "  ");
            hwp_put_u64(w, best[i].count);
            hwp_put_str(w, "  ");
            hwp_put_f64(w, hwp_strat_acc_invariance(m->strat_acc, HWP_STRAT_KIND_VALUE,
                                                    best[i].pc, best[i].w), 3);
            if (s->exact) {
                uint64_t pcn = hwx__xtab_get(&s->exact->pc, best[i].pc, 0);
                hwp_put_str(w, "  (");
                hwp_put_f64(w, pcn ? (double)hwx__xtab_get(&s->exact->val, best[i].pc, best[i].w) /
                                         (double)pcn : 0.0, 3);
                hwp_put_str(w, ")");
            }
            hwp_put_str(w, "\n");
        }
    }
    if (m->cp) {
        hwp_cp_est est[256], best[32];
        hwp_cp_stats st;
        size_t n = hwp_cp_lvp_estimates(m->cp, est, 256), i, nb = 0, j;
        size_t cap = top < 32 ? top : 32;
        hwp_cp_get_stats(m->cp, &st);
        if (n > 256) n = 256; /* it returns how many there are */
        for (i = 0; i < n; i++) {
            if (nb == cap && est[i].inv <= best[nb - 1].inv) continue;
            j = nb < cap ? nb++ : nb - 1;
            while (j > 0 && best[j - 1].inv < est[i].inv) {
                best[j] = best[j - 1];
                j--;
            }
            best[j] = est[i];
        }
        hwx__kv(w, "\n-- invariant loads: profiling co-processor (seed 000) --\n  samples ",
                st.tagged);
        hwx__kv(w, ", dropped (buffer full) ", st.dropped);
        hwx__kv(w, ", interrupts ", st.interrupts);
        hwp_put_str(w, "\n  load pc          value               invariance");
        hwp_put_str(w, s->exact ? "  (exact)\n" : "\n");
        for (i = 0; i < nb; i++) {
            hwp_put_str(w, "  ");
            hwp_put_hex(w, best[i].pc);
            hwp_put_str(w, "  ");
            hwp_put_hex(w, best[i].value);
            hwp_put_str(w, "  ");
            hwp_put_f64(w, best[i].inv, 3);
            if (s->exact) {
                uint64_t pcn = hwx__xtab_get(&s->exact->pc, best[i].pc, 0);
                hwp_put_str(w, "  (");
                hwp_put_f64(w, pcn ? (double)hwx__xtab_get(&s->exact->val, best[i].pc, best[i].value) /
                                         (double)pcn : 0.0, 3);
                hwp_put_str(w, ")");
            }
            hwp_put_str(w, "\n");
        }
    }
    if (m->pm) {
        hwp_put_str(w, "\n-- costliest instructions: ProfileMe samples (seed 004) --\n");
        hwp_pm_table_write_text(m->pm_tab, w, top);
    }
}

/* Phase id per interval, as far as the log reaches. */
static void hwx__ids_json(const hwp_writer *w, const uint32_t *ids, uint64_t n) {
    uint64_t i;
    hwp_put_str(w, "[");
    for (i = 0; i < n && i < HWX__PHASE_LOG; i++) {
        if (i) hwp_put_str(w, ",");
        hwp_put_u64(w, ids[i]);
    }
    hwp_put_str(w, "]");
}

static void hwx__models_report_json(const hwx_models *m, const hwp_writer *w) {
    hwp_put_str(w, "{\"models\":");
    hwp_put_u64(w, m->on);
    if (m->pm) {
        hwp_put_str(w, ",\"profileme\":{\"sampler\":");
        hwp_pm_write_json(m->pm, w);
        hwp_put_str(w, ",\"table\":");
        hwp_pm_table_write_json(m->pm_tab, w);
        hwp_put_str(w, "}");
    }
    if (m->rap) {
        hwp_put_str(w, ",\"rap\":");
        hwp_rap_write_json(m->rap, w);
    }
    if (m->path) {
        hwp_put_str(w, ",\"pathprof\":{\"path\":");
        hwp_path_write_json(m->path, w);
        hwp_put_str(w, ",\"hpt\":");
        hwp_hpt_write_json(m->hpt, w);
        hwp_put_str(w, ",\"phase\":");
        hwp_phase_write_json(m->phase, w);
        hwp_put_str(w, ",\"phase_ids\":");
        hwx__ids_json(w, m->phase_ids, m->phase_n);
        hwp_put_str(w, ",\"bbv_ids\":");
        hwx__ids_json(w, m->bbv_ids, m->bbv_n);
        hwp_put_str(w, "}");
    }
    if (m->strat) {
        hwp_put_str(w, ",\"stratified\":{\"compressor\":");
        hwp_strat_write_json(m->strat, w);
        hwp_put_str(w, ",\"profile\":");
        hwp_strat_acc_write_json(m->strat_acc, w);
        hwp_put_str(w, "}");
    }
    if (m->cp) {
        hwp_put_str(w, ",\"coproc\":");
        hwp_cp_write_json(m->cp, w);
    }
    hwp_put_str(w, "}");
}

size_t hwx_session_bytes(const hwx_opts *o) {
    size_t n;
    if (!o) return 0;
    n = hwx__models_bytes(o);
    if (!n) return 0;
    if (o->exact) n += hwp__align(sizeof(hwx_exact)) + hwx__exact_bytes(o);
    return n + HWP__ALIGN; /* room to align an unaligned block */
}

hwp_status hwx_session_init(hwx_session *s, void *mem, size_t bytes,
                            const hwx_opts *o) {
    unsigned char *cur;
    hwp_status st;
    if (!s) return HWP_EINVAL;
    hwp__zero(s, sizeof *s);
    if (!o || !mem) return hwp__fail(&s->head, HWP_EINVAL, "hwx: NULL opts or memory");
    if (!hwx_session_bytes(o))
        return hwp__fail(&s->head, HWP_EINVAL, "hwx: invalid model parameters");
    if (bytes < hwx_session_bytes(o))
        return hwp__fail(&s->head, HWP_ENOSPC, "hwx: session memory too small");
    s->opts = *o;
    cur = (unsigned char *)mem;
    cur += (HWP__ALIGN - ((uintptr_t)cur & (HWP__ALIGN - 1))) & (HWP__ALIGN - 1);
    if (hwp_cost_init(&s->cost, NULL) != HWP_OK)
        return hwp__fail(&s->head, HWP_EINVAL, "hwx: cost init failed");
    st = hwx__models_init(s, &cur);
    if (st != HWP_OK) return st;
    if (o->exact) {
        s->exact = (hwx_exact *)hwp__carve(&cur, sizeof(hwx_exact));
        hwx__exact_init(s->exact, &cur, o);
    }
    s->head.magic = HWX__MAGIC;
    return hwp__fail(&s->head, HWP_OK, "");
}

void hwx_session_insn(hwx_session *s, const hwp_insn *in) {
    uint32_t cls = in->cls < HWP_CLS_COUNT ? in->cls : HWP_CLS_OTHER;
    s->insns++;
    s->cls[cls]++;
    s->loads += cls == HWP_CLS_LOAD;
    s->stores += cls == HWP_CLS_STORE;
    if (hwp_cls_is_branch(cls)) {
        s->branches++;
        s->taken += (in->events & HWP_EV_TAKEN) != 0;
    }
    hwp_cost_tick(&s->cost, 1);
    hwx__models_insn(s->m, in, s->insns);
    if (s->exact) hwx__exact_insn(s->exact, in);
}

bool hwx_session_block_ok(const hwx_session *s) {
    return s && s->head.magic == HWX__MAGIC && !s->exact;
}

void hwx_session_block(hwx_session *s, const uint64_t *pcs, uint32_t n,
                       const hwp_insn *last, const hwp_insn *mem,
                       uint32_t nmem) {
    uint32_t cls = last->cls < HWP_CLS_COUNT ? last->cls : HWP_CLS_OTHER, j;
    s->insns += n;
    s->cls[HWP_CLS_OTHER] += n - 1 - nmem;
    s->cls[cls]++;
    for (j = 0; j < nmem; j++)
        s->cls[mem[j].cls < HWP_CLS_COUNT ? mem[j].cls : HWP_CLS_OTHER]++;
    s->loads = s->cls[HWP_CLS_LOAD];
    s->stores = s->cls[HWP_CLS_STORE];
    if (hwp_cls_is_branch(cls)) {
        s->branches++;
        s->taken += (last->events & HWP_EV_TAKEN) != 0;
    }
    hwp_cost_tick(&s->cost, n);
    hwx__models_block(s->m, pcs, n, last, mem, nmem, s->insns - n);
}

void hwx_session_finish(hwx_session *s) {
    if (!s || s->head.magic != HWX__MAGIC || s->finished) return;
    s->finished = 1;
    hwx__models_finish(s->m);
    if (s->exact) hwx__exact_finish(s->exact);
}

hwp_status hwx_session_merge(hwx_session *dst, const hwx_session *src) {
    unsigned i;
    if (!dst || !src || dst->head.magic != HWX__MAGIC ||
        src->head.magic != HWX__MAGIC)
        return HWP_EINVAL;
    if (dst->opts.models != src->opts.models ||
        (dst->exact == NULL) != (src->exact == NULL))
        return hwp__fail(&dst->head, HWP_EMISMATCH, "hwx: sessions built from different options");
    dst->insns += src->insns;
    dst->loads += src->loads;
    dst->stores += src->stores;
    dst->branches += src->branches;
    dst->taken += src->taken;
    for (i = 0; i < HWP_CLS_COUNT; i++) dst->cls[i] += src->cls[i];
    hwp_cost_merge(&dst->cost, &src->cost);
    hwx__models_merge(dst->m, src->m);
    if (dst->exact) hwx__exact_merge(dst->exact, src->exact);
    return hwp__fail(&dst->head, HWP_OK, "");
}

/* Scratch for hwx_session_evaluate: the ideal profiles the metrics compare
 * against are built from the exact tables there. */
size_t hwx_session_eval_bytes(const hwx_session *s) {
    size_t n = HWP__ALIGN;
    if (!s || s->head.magic != HWX__MAGIC || !s->exact) return n;
    if (s->m->hpt) {
        /* The HPT's rows, then a heap of as many exact path counts. */
        size_t k = hwp__align((size_t)s->m->hpt->desc.entries * sizeof(hwp_path_row)) +
                   hwp__align((size_t)s->m->hpt->desc.entries * sizeof(uint64_t));
        if (k > n) n = k;
    }
    if (s->m->strat) {
        hwp_strat_acc_desc d;
        size_t k;
        hwp__zero(&d, sizeof d);
        d.tuples = (uint32_t)(s->exact->val.used + 16);
        d.pcs = (uint32_t)(s->exact->pc.used + 16);
        k = hwp__align(sizeof(hwp_strat_acc)) + hwp__align(hwp_strat_acc_bytes(&d));
        if (k > n) n = k;
    }
    if (s->m->cp) {
        size_t k = hwp__align((size_t)s->exact->val.used * sizeof(hwp_cp_truth)) +
                   hwp__align(((size_t)s->m->cp->d.lvp_loads * s->m->cp->d.lvp_values +
                               (size_t)(s->m->cps[0]->mask + 1)) * sizeof(hwp_cp_est));
        if (k > n) n = k;
    }
    return n + HWP__ALIGN;
}

/* The sum of the k largest counts in t, selected with a min-heap of k
 * counts in heap[] (scratch): O(n log k), no sort of the whole table. */
static uint64_t hwx__top_sum(const hwx_xtab *t, uint64_t *heap, uint32_t k) {
    uint32_t have = 0, j, c;
    uint64_t i, sum = 0;
    for (i = 0; i <= t->mask && k; i++) {
        uint64_t v = t->e[i].count;
        if (!v) continue;
        if (have < k) { /* sift up */
            for (j = have++; j > 0 && heap[(j - 1) / 2] > v; j = (j - 1) / 2)
                heap[j] = heap[(j - 1) / 2];
            heap[j] = v;
            continue;
        }
        if (v <= heap[0]) continue;
        for (j = 0; (c = 2 * j + 1) < have; j = c) { /* sift the root down */
            if (c + 1 < have && heap[c + 1] < heap[c]) c++;
            if (heap[c] >= v) break;
            heap[j] = heap[c];
        }
        heap[j] = v;
    }
    for (j = 0; j < have; j++) sum += heap[j];
    return sum;
}

/* The exact (pc, value) table as hwp_cp_wrms's truth (seed 000 sec. 5.2);
 * returns how many. Filled once per evaluation: the first hwp_cp_wrms
 * sorts it in place and every later score against it skips the sort. */
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
static double hwx__cp_simple_err(const hwp_cp_simple *c, hwp_cp_truth *truth,
                                 size_t n, hwp_cp_est *est, size_t cap) {
    size_t m = hwp_cp_simple_estimates(c, est, cap);
    return hwp_cp_wrms(truth, n, est, m > cap ? cap : m, 0.0);
}

hwp_status hwx_session_evaluate(hwx_session *s, void *scratch, size_t bytes) {
    hwx_accuracy *a;
    unsigned char *cur;
    if (!s || s->head.magic != HWX__MAGIC) return HWP_EINVAL;
    a = &s->acc;
    hwp__zero(a, sizeof *a);
    if (!s->exact) return hwp__fail(&s->head, HWP_ESTATE, "hwx: accuracy needs exact=on");
    if (!scratch || bytes < hwx_session_eval_bytes(s))
        return hwp__fail(&s->head, HWP_ENOSPC, "hwx: evaluation scratch too small");
    hwx_session_finish(s);
    cur = (unsigned char *)scratch;
    cur += (HWP__ALIGN - ((uintptr_t)cur & (HWP__ALIGN - 1))) & (HWP__ALIGN - 1);
    if (s->m->rap) {
        hwp_rap_acc ra;
        if (hwp_rap_accuracy(s->m->rap, s->m->rap->desc.hot, hwx__rap_exact, s, &ra) == HWP_OK &&
            ra.hot) {
            a->rap_hot_err_pct.valid = 1;
            a->rap_hot_err_pct.n = ra.hot;
            a->rap_hot_err_pct.value = ra.mean_pct;
        }
    }
    if (s->m->hpt) {
        /* Overlap percentage (Arnold & Ryder; seed 003 sec. 8.1): the sum
         * over paths of the smaller of the path's shares in the two
         * profiles. Exact shares come from our own path stack. */
        hwp_path_row *rows = (hwp_path_row *)(void *)cur;
        size_t n = hwp_hpt_export(s->m->hpt, rows, s->m->hpt->desc.entries), i;
        double hsum = 0, xsum = (double)s->exact->path.total, ov = 0;
        for (i = 0; i < n; i++) hsum += (double)rows[i].count;
        for (i = 0; i < n && hsum > 0 && xsum > 0; i++) {
            double hf = (double)rows[i].count / hsum;
            double xf = (double)hwx__xtab_get(&s->exact->path, rows[i].pd.start,
                                              rows[i].pd.shape) / xsum;
            ov += hf < xf ? hf : xf;
        }
        a->hpt_overlap_pct.valid = n > 0 && xsum > 0;
        a->hpt_overlap_pct.n = (uint32_t)n;
        a->hpt_overlap_pct.value = 100.0 * ov;
        {
            /* The reference: a perfect table of as many entries holds the
             * exact top paths, so its overlap is their share of the flow,
             * an upper bound on any table of that size (each path adds at
             * most its exact share). Programs with a wide path working set
             * (an interpreter) leave even this below 80%. */
            uint32_t k = s->m->hpt->desc.entries;
            uint64_t *heap = (uint64_t *)(void *)(cur + hwp__align((size_t)k *
                                                                   sizeof(hwp_path_row)));
            a->hpt_ideal_pct.valid = xsum > 0;
            a->hpt_ideal_pct.n = k;
            a->hpt_ideal_pct.value =
                xsum > 0 ? 100.0 * (double)hwx__top_sum(&s->exact->path, heap, k) / xsum : 0.0;
        }
        if (s->m->phase_n > 1 && s->m->bbv_n > 1) {
            uint64_t k, nn = s->m->phase_n < s->m->bbv_n ? s->m->phase_n : s->m->bbv_n,
                        agree = 0;
            if (nn > HWX__PHASE_LOG) nn = HWX__PHASE_LOG;
            for (k = 1; k < nn; k++)
                agree += (s->m->phase_ids[k] != s->m->phase_ids[k - 1]) ==
                         (s->m->bbv_ids[k] != s->m->bbv_ids[k - 1]);
            a->phase_agree_pct.valid = 1;
            a->phase_agree_pct.n = (uint32_t)(nn - 1);
            a->phase_agree_pct.value = 100.0 * (double)agree / (double)(nn - 1);
        }
    }
    if (s->m->strat) {
        hwp_strat_acc_desc d;
        hwp_strat_acc *ideal = (hwp_strat_acc *)(void *)cur;
        unsigned char *mem = cur + hwp__align(sizeof(hwp_strat_acc));
        hwp_strat_metric met;
        uint64_t i;
        hwp__zero(&d, sizeof d);
        d.tuples = (uint32_t)(s->exact->val.used + 16);
        d.pcs = (uint32_t)(s->exact->pc.used + 16);
        if (hwp_strat_acc_init(ideal, mem, hwp_strat_acc_bytes(&d), &d) == HWP_OK) {
            for (i = 0; i <= s->exact->val.mask; i++) {
                const hwx_xent *e = &s->exact->val.e[i];
                if (e->count)
                    hwp_strat_acc_add(ideal, HWP_STRAT_KIND_VALUE, e->k1, e->k2, e->count);
            }
            if (hwp_strat_invariance_error(ideal, s->m->strat_acc, NULL, &met) == HWP_OK &&
                met.tuples) {
                a->strat_inv_err_pct.valid = 1;
                a->strat_inv_err_pct.n = (uint32_t)met.tuples;
                a->strat_inv_err_pct.value = met.error_pct;
            }
        }
    }
    if (s->m->cp) {
        hwp_cp_truth *truth = (hwp_cp_truth *)(void *)cur;
        hwp_cp_est *est = (hwp_cp_est *)(void *)(cur + hwp__align((size_t)s->exact->val.used *
                                                                    sizeof(hwp_cp_truth)));
        size_t cap = (size_t)s->m->cp->d.lvp_loads * s->m->cp->d.lvp_values +
                     (size_t)(s->m->cps[0]->mask + 1);
        size_t n = hwx__cp_truth(s->exact, truth);
        size_t m = hwp_cp_lvp_estimates(s->m->cp, est, cap);
        double e;
        if (m > cap) m = cap; /* the count is returned even when larger */
        e = hwp_cp_wrms(truth, n, est, m, 0.0);
        if (e >= 0) {
            a->coproc_inv_err.valid = 1;
            a->coproc_inv_err.n = (uint32_t)m;
            a->coproc_inv_err.value = e;
        }
        {
            /* The baseline at (nearly) the co-processor's overhead: the
             * period whose seeds took, on average, the modelled cycles
             * closest to the co-processor's; then every seed's error at
             * that period, their mean and sample standard deviation. */
            double want = (double)hwp_cost_model_cycles(&s->cost, HWP_MODEL_COPROC), best = -1;
            double per = (double)hwp_cost_cycles(&s->cost, HWP_COST_COPROC_INTERRUPT) +
                         (double)hwp_cost_cycles(&s->cost, HWP_COST_COPROC_SAMPLE);
            double sum = 0, sq = 0, mean;
            uint32_t i, j, pick = 0;
            for (i = 0; i < HWX__NCPS && s->m->cps[i]; i += HWX__NSEEDS) {
                double have = 0, gap;
                for (j = 0; j < HWX__NSEEDS; j++) have += (double)s->m->cps[i + j]->samples;
                have = have * per / HWX__NSEEDS;
                gap = have > want ? have - want : want - have;
                if (best < 0 || gap < best) best = gap, pick = i;
            }
            for (j = 0; j < HWX__NSEEDS; j++) {
                e = hwx__cp_simple_err(s->m->cps[pick + j], truth, n, est, cap);
                if (e < 0) break;
                sum += e;
                sq += e * e;
            }
            if (j == HWX__NSEEDS) {
                mean = sum / HWX__NSEEDS;
                a->coproc_simple_err.valid = 1;
                a->coproc_simple_err.n = s->m->cps[pick]->period;
                a->coproc_simple_err.value = mean;
                /* (sum of squares - K mean^2) / (K - 1), clamped at 0
                 * against rounding when every seed gives the same error */
                e = (sq - sum * mean) / (HWX__NSEEDS - 1);
                a->coproc_simple_sd.valid = 1;
                a->coproc_simple_sd.n = HWX__NSEEDS;
                a->coproc_simple_sd.value = hwp_sqrt(e > 0 ? e : 0);
            }
        }
    }
    if (s->m->pm) {
        hwp_pm_acc pa;
        if (hwp_pm_accuracy(s->m->pm_tab, HWP_PM_PROP_RETIRED, hwx__pm_truth, s, 1, &pa) ==
                HWP_OK && pa.pcs) {
            a->pm_envelope_frac.valid = 1;
            a->pm_envelope_frac.n = (uint32_t)pa.pcs;
            a->pm_envelope_frac.value = pa.in_envelope;
        }
    }
    s->evaluated = 1;
    return hwp__fail(&s->head, HWP_OK, "");
}

static void hwx__metric_text(const hwp_writer *w, const char *name,
                             const hwx_metric *m, unsigned dec,
                             const char *unit) {
    if (!m->valid) return;
    hwp_put_str(w, name);
    hwp_put_f64(w, m->value, dec);
    hwp_put_str(w, unit);
    hwp_put_str(w, "  (over ");
    hwp_put_u64(w, m->n);
    hwp_put_str(w, ")\n");
}

static void hwx__metric_json(const hwp_writer *w, const char *name,
                             const hwx_metric *m, int *first) {
    if (!m->valid) return;
    hwp_put_str(w, *first ? "" : ",");
    *first = 0;
    hwp_put_json_str(w, name);
    hwp_put_str(w, ":{\"value\":");
    hwp_put_f64(w, m->value, 6);
    hwp_put_str(w, ",\"n\":");
    hwp_put_u64(w, m->n);
    hwp_put_str(w, "}");
}

static void hwx__line(const hwp_writer *w, const char *label, uint64_t v,
                      uint64_t of) {
    hwp_put_str(w, label);
    hwp_put_u64(w, v);
    if (of) {
        hwp_put_str(w, " (");
        hwp_put_f64(w, 100.0 * (double)v / (double)of, 1);
        hwp_put_str(w, "%)");
    }
    hwp_put_str(w, "\n");
}

void hwx_session_report_text(const hwx_session *s, const hwp_writer *w) {
    unsigned i;
    if (!s || s->head.magic != HWX__MAGIC) {
        hwp_put_str(w, "hwprof: no session\n");
        return;
    }
    hwp_put_str(w, "== hwprof report ==\n");
    hwx__line(w, "instructions   ", s->insns, 0);
    hwx__line(w, "loads          ", s->loads, s->insns);
    hwx__line(w, "stores         ", s->stores, s->insns);
    hwx__line(w, "branches       ", s->branches, s->insns);
    hwx__line(w, "  taken        ", s->taken, s->branches);
    for (i = HWP_CLS_BR_COND; i < HWP_CLS_COUNT; i++) {
        hwp_put_str(w, "  ");
        hwp_put_str(w, hwp_cls_str(i));
        hwp_put_str(w, ": ");
        hwp_put_u64(w, s->cls[i]);
        hwp_put_str(w, "\n");
    }
    hwx__models_report_text(s, w);
    hwp_put_str(w, "\n-- modelled hardware overhead --\n");
    hwp_cost_write_text(&s->cost, w);
    if (s->exact) {
        hwp_put_str(w, "\n-- exact ground truth --\n");
        hwx__exact_report_text(s->exact, w, s->opts.top);
    }
    if (s->evaluated) {
        const hwx_accuracy *a = &s->acc;
        hwp_put_str(w, "\n-- accuracy against exact (each paper's metric) --\n");
        hwx__metric_text(w, "  RAP avg error on hot ranges (seed 002 4.3): ", &a->rap_hot_err_pct, 3, "%");
        hwx__metric_text(w, "  HPT overlap percentage (seed 003 8.1):      ", &a->hpt_overlap_pct, 2, "%");
        hwx__metric_text(w, "  perfect table of as many entries (ideal):   ", &a->hpt_ideal_pct, 2, "%");
        hwx__metric_text(w, "  phase changes agreeing with BBV reference:  ", &a->phase_agree_pct, 2, "%");
        hwx__metric_text(w, "  stratified weighted invariance error (001 5.3.1): ", &a->strat_inv_err_pct, 3, "%");
        hwx__metric_text(w, "  ProfileMe fraction inside 1/sqrt(k) envelope (004 5.1): ", &a->pm_envelope_frac, 3, "");
        hwx__metric_text(w, "  co-processor weighted RMS invariance error (000 5.2): ", &a->coproc_inv_err, 4, "");
        if (a->coproc_simple_err.valid) {
            hwp_put_str(w, "  simple interrupt sampler at the same overhead: mean ");
            hwp_put_f64(w, a->coproc_simple_err.value, 4);
            hwp_put_str(w, ", sd ");
            hwp_put_f64(w, a->coproc_simple_sd.value, 4);
            hwx__kv(w, " over ", a->coproc_simple_sd.n);
            hwx__kv(w, " seeds  (period ", a->coproc_simple_err.n);
            hwp_put_str(w, " loads)\n");
        }
    }
}

void hwx_session_report_json(const hwx_session *s, const hwp_writer *w) {
    unsigned i;
    if (!s || s->head.magic != HWX__MAGIC) {
        hwp_put_str(w, "null\n");
        return;
    }
    hwx__kv(w, "{\"schema\":\"hwprof-session-1\",\"instructions\":", s->insns);
    hwx__kv(w, ",\"loads\":", s->loads);
    hwx__kv(w, ",\"stores\":", s->stores);
    hwx__kv(w, ",\"branches\":", s->branches);
    hwx__kv(w, ",\"taken\":", s->taken);
    hwp_put_str(w, ",\"classes\":{");
    for (i = 0; i < HWP_CLS_COUNT; i++) {
        if (i) hwp_put_str(w, ",");
        hwp_put_json_str(w, hwp_cls_str(i));
        hwp_put_str(w, ":");
        hwp_put_u64(w, s->cls[i]);
    }
    hwp_put_str(w, "},\"models\":");
    hwx__models_report_json(s->m, w);
    hwp_put_str(w, ",\"overhead\":");
    hwp_cost_write_json(&s->cost, w);
    if (s->exact) {
        hwp_put_str(w, ",\"exact\":");
        hwx__exact_report_json(s->exact, w, s->opts.top);
    }
    if (s->evaluated) {
        const hwx_accuracy *a = &s->acc;
        int first = 1;
        hwp_put_str(w, ",\"accuracy\":{");
        hwx__metric_json(w, "rap_hot_err_pct", &a->rap_hot_err_pct, &first);
        hwx__metric_json(w, "hpt_overlap_pct", &a->hpt_overlap_pct, &first);
        hwx__metric_json(w, "hpt_ideal_pct", &a->hpt_ideal_pct, &first);
        hwx__metric_json(w, "phase_agree_pct", &a->phase_agree_pct, &first);
        hwx__metric_json(w, "strat_inv_err_pct", &a->strat_inv_err_pct, &first);
        hwx__metric_json(w, "pm_envelope_frac", &a->pm_envelope_frac, &first);
        hwx__metric_json(w, "coproc_inv_err", &a->coproc_inv_err, &first);
        hwx__metric_json(w, "coproc_simple_err", &a->coproc_simple_err, &first);
        hwx__metric_json(w, "coproc_simple_sd", &a->coproc_simple_sd, &first);
        hwp_put_str(w, "}");
    }
    hwp_put_str(w, "}\n");
}
