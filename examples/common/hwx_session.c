/* examples/common/hwx_session.c: one session per vCPU/thread. It owns an
 * instance of every enabled model (all in the session's memory), the
 * modelled-overhead accounting (one hwp_cost) and, with exact=on, the
 * exact ground truth; it feeds them every retired instruction, merges
 * per-vCPU sessions and writes the combined report.
 *
 * The session knows no model: every model is an adapter (hwx_<model>.c,
 * the interface in hwx_int.h), one for each model of the component list
 * (HWP_COMPONENTS in cost.h), and every
 * step below loops over that registry.
 */
#include "hwx_int.h"
#include "hwx_host.h" /* hwx_exact_count, hwx_exact_next, hwx_session_profiles_json */

#define HWX__MAGIC HWP_MAGIC('h', 'w', 'x', 's')

#define HWX__REF(c, header, envelope, kind, model) HWP_ONLY_##kind(&hwx__adapter_##c,)
const hwx_adapter *const hwx__registry[] = {HWP_COMPONENTS(HWX__REF) NULL};
#undef HWX__REF
const uint32_t hwx__nadapters =
    (uint32_t)(sizeof hwx__registry / sizeof hwx__registry[0] - 1);

typedef char hwx__registry_fits[sizeof hwx__registry / sizeof hwx__registry[0] - 1 <=
                                        HWX_MAX_MODELS
                                    ? 1
                                    : -1];

const hwx_adapter *hwx__adapter_of(uint32_t model) {
    uint32_t i;
    for (i = 0; i < hwx__nadapters; i++)
        if (hwx__registry[i]->model == model) return hwx__registry[i];
    return NULL;
}

/* A desc bundle, aligned for any member a desc has. */
typedef union hwx__descbuf {
    unsigned char b[HWX_DESC_MAX];
    uint64_t u;
    double d;
    void *p;
    void (*f)(void);
} hwx__descbuf;

/* ---- helpers shared by the adapters --------------------------------------- */

hwp_status hwx__bad(const char **why, const char *reason) {
    if (why) *why = reason;
    return HWP_EINVAL;
}

hwp_status hwx__unknown(const char **why) {
    if (why) *why = NULL;
    return HWP_EINVAL;
}

hwp_status hwx__u32(const char *opt, const char *v, uint32_t *out, const char **why) {
    return hwx_arg_u32(opt, v, 0, 0xFFFFFFFFu, out, why);
}

hwp_status hwx__u64(const char *opt, const char *v, uint64_t *out, const char **why) {
    return hwx_arg_u64(opt, v, 0, ~(uint64_t)0, out, why);
}

hwp_status hwx__enum(const char *opt, const char *v, const char *const *names,
                     const uint32_t *vals, uint32_t *out, const char **why) {
    uint32_t i;
    if (hwx_arg_enum(opt, v, names, &i, why) != HWP_OK) return HWP_EINVAL;
    *out = vals[i];
    return HWP_OK;
}

void hwx__pct(const hwp_writer *w, double num, double den) {
    hwp_put_f64(w, den > 0 ? 100.0 * num / den : 0.0, 2);
    hwp_put_str(w, "%");
}

void hwx__exact_inv(const hwp_writer *w, const hwx_exact *x, uint64_t pc, uint64_t value) {
    uint64_t pcn = hwx__xtab_get(&x->pc, pc, 0);
    hwp_put_str(w, "  (");
    hwp_put_f64(w, pcn ? (double)hwx__xtab_get(&x->val, pc, value) / (double)pcn : 0.0, 3);
    hwp_put_str(w, ")");
}

void hwx__metric_text(const hwp_writer *w, const char *name, const hwx_metric *m,
                      unsigned dec, const char *unit) {
    if (!m->valid) return;
    hwp_put_str(w, name);
    hwp_put_f64(w, m->value, dec);
    hwp_put_str(w, unit);
    hwp_put_str(w, "  (over ");
    hwp_put_u64(w, m->n);
    hwp_put_str(w, ")\n");
}

/* ---- descs from the options ------------------------------------------------- */

/* One parameter into adapter a's desc: a shorthand of the adapter's, or
 * a member of one of its model descs by name. The refusal names the
 * option as "<model>_<key>" and, for an unknown key, what it takes. */
static hwp_status hwx__set(const hwx_adapter *a, void *d, const char *key, const char *val,
                           const char **why) {
    char opt[48];
    size_t n = hwx_strlen(a->name), k = hwx_strlen(key), nf;
    const char *r = "";
    const hwx_desc_part *p;
    if (n + 1 + k >= sizeof opt) k = sizeof opt - n - 2;
    hwp_copy(opt, a->name, n);
    opt[n] = '_';
    hwp_copy(opt + n + 1, key, k);
    opt[n + 1 + k] = 0;
    if (a->set(d, key, opt, val, &r) == HWP_OK) return HWP_OK;
    for (p = a->parts; !r && p < a->parts + HWX_MAX_PARTS && p->fields; p++) {
        const hwp_field *f = p->fields(&nf);
        if (hwx_arg_field(opt, (unsigned char *)d + p->off, f, nf, key, val, &r) == HWP_OK)
            return HWP_OK;
    }
    if (!r)
        return hwx_arg_fail2(opt, "unknown parameter; the model takes ", a->params, why);
    if (why) *why = r;
    return HWP_EINVAL;
}

/* Adapter a's desc bundle from the options: the host's defaults, then
 * every stored parameter of its model in the order given. */
static hwp_status hwx__desc(const hwx_adapter *a, const hwx_opts *o, hwx__descbuf *d,
                            const char **why) {
    uint32_t i;
    hwp_zero(d, sizeof *d);
    if (a->desc_size > sizeof *d || a->state_size == 0)
        return hwx_arg_fail(a->name, "adapter desc larger than HWX_DESC_MAX", why);
    a->defaults(d, o);
    for (i = 0; i < o->nparam; i++)
        if (o->param[i].model == a->model &&
            hwx__set(a, d, o->param[i].key, o->param[i].val, why) != HWP_OK)
            return HWP_EINVAL;
    return HWP_OK;
}

hwp_status hwx__model_param(uint32_t model, const char *key, const char *val,
                            const char **why) {
    const hwx_adapter *a = hwx__adapter_of(model);
    hwx__descbuf d;
    hwx_opts o;
    if (!a) return hwx__bad(why, "hwx: unknown parameter for that model");
    hwx_opts_default(&o);
    hwp_zero(&d, sizeof d);
    a->defaults(&d, &o);
    if (hwx__set(a, &d, key, val, why) != HWP_OK) return HWP_EINVAL;
    if (!a->bytes(&d, &o, why)) return HWP_EINVAL;
    return HWP_OK;
}

/* Storage of every enabled model; 0 with *why if one is invalid. */
static size_t hwx__models_bytes(const hwx_opts *o, const char **why) {
    size_t n = 0, k;
    uint32_t i;
    for (i = 0; i < hwx__nadapters; i++) {
        const hwx_adapter *a = hwx__registry[i];
        hwx__descbuf d;
        if (!(o->models & (1u << a->model))) continue;
        if (hwx__desc(a, o, &d, why) != HWP_OK) return 0;
        if (!(k = a->bytes(&d, o, why))) return 0;
        n += hwp_align(a->state_size) + k;
    }
    return n;
}

/* ---- counters over time (timeline=N) ---------------------------------------- */

static uint32_t hwx__tl_ncounters(const hwx_adapter *a) {
    uint32_t n = 0;
    while (a->counter_names && a->counter_names[n]) n++;
    return n;
}

/* Values per point: the clock, the enabled adapters' counters, the
 * overhead. */
static uint32_t hwx__tl_cols(const hwx_opts *o) {
    uint32_t i, cols = 2;
    for (i = 0; i < hwx__nadapters; i++)
        if (o->models & (1u << hwx__registry[i]->model)) cols += hwx__tl_ncounters(hwx__registry[i]);
    return cols;
}

static size_t hwx__tl_bytes(const hwx_opts *o) {
    return o->timeline ? hwp_align(sizeof(hwx_tl)) +
                             hwp_align((size_t)HWX_TL_POINTS * hwx__tl_cols(o) * sizeof(uint64_t))
                       : 0;
}

/* A point now (the first clock at or past a multiple of `every`; `last`:
 * the run's end). A full timeline first keeps every other point (those at
 * the even multiples), then takes its points twice as far apart: a point
 * at an odd multiple of the old spacing is then off the grid and not
 * taken, unless it is the last. */
static void hwx__tl_point(hwx_session *s, bool last) {
    hwx_tl *t = s->tl;
    uint64_t *row, total = 0;
    uint32_t i, k = 1, m;
    if (t->n == HWX_TL_POINTS) {
        for (i = 0; i < t->n / 2; i++)
            hwp_copy(t->v + (size_t)i * t->cols, t->v + (size_t)(2 * i + 1) * t->cols,
                     t->cols * sizeof(uint64_t));
        t->n /= 2;
        t->every *= 2;
        if (!last && (s->insns / (t->every / 2)) % 2) {
            s->tl_next = (s->insns / t->every + 1) * t->every;
            return;
        }
    }
    row = t->v + (size_t)t->n++ * t->cols;
    row[0] = s->insns;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i] && hwx__registry[i]->counters) {
            hwx__registry[i]->counters(s->st[i], row + k);
            k += hwx__tl_ncounters(hwx__registry[i]);
        }
    for (m = 0; m < HWP_MODEL_COUNT; m++) total += hwp_cost_model_cycles(&s->cost, (hwp_model)m);
    row[k] = total;
    s->tl_next = (s->insns / t->every + 1) * t->every;
}

/* ,"timeline":{"every":N,"insns":[...],"counters":{"rap.splits":[...],...}} */
static void hwx__tl_json(const hwx_session *s, const hwp_writer *w) {
    const hwx_tl *t = s->tl;
    uint32_t i, j, c, k = 1;
    hwx__kv(w, ",\"timeline\":{\"every\":", t->every);
    hwp_put_str(w, ",\"insns\":[");
    for (j = 0; j < t->n; j++) hwx__kv(w, j ? "," : "", t->v[(size_t)j * t->cols]);
    hwp_put_str(w, "],\"counters\":{");
    for (i = 0; i <= hwx__nadapters; i++) {
        const hwx_adapter *a = i < hwx__nadapters ? hwx__registry[i] : NULL;
        static const char *const overhead[] = {"cycles", NULL};
        const char *const *names = a ? a->counter_names : overhead;
        if (a && (!s->st[i] || !a->counters)) continue;
        for (c = 0; names[c]; c++, k++) {
            hwp_put_str(w, k > 1 ? ",\"" : "\"");
            hwp_put_str(w, a ? a->name : "overhead");
            hwp_put_str(w, ".");
            hwp_put_str(w, names[c]);
            hwp_put_str(w, "\":[");
            for (j = 0; j < t->n; j++) hwx__kv(w, j ? "," : "", t->v[(size_t)j * t->cols + k]);
            hwp_put_str(w, "]");
        }
    }
    hwp_put_str(w, "}}");
}

/* ---- session ---------------------------------------------------------------- */

size_t hwx_session_bytes(const hwx_opts *o) {
    size_t n;
    const char *why;
    if (!o) return 0;
    n = hwx__models_bytes(o, &why);
    if (!n && (o->models & HWX_M_ALL)) return 0;
    n += HWP_ALIGN; /* a session with no model still has a size */
    if (o->exact) n += hwp_align(sizeof(hwx_exact)) + hwx__exact_bytes(o);
    if (o->bbv[0]) n += hwp_align(sizeof(hwx_bbv)) + hwp_align(hwx_bbv_bytes(o->bbv_blocks));
    return n + hwx__tl_bytes(o) + HWP_ALIGN; /* room to align an unaligned block */
}

/* burst_len= without a period, or longer than it: NULL when neither. */
/* Adapter i takes blocks' counts as tallies (RAP on code). */
static bool hwx__tallied(const hwx_session *s, uint32_t i) {
    return hwx__registry[i]->tally && s->opts.rap_key == HWX_KEY_PC;
}

/* Adapter i, fed every instruction, needs only some of them whole and
 * takes the rest as a count (ProfileMe: its selections). */
static bool hwx__counted(uint32_t i) {
    const hwx_adapter *a = hwx__registry[i];
    return !a->in_bursts && a->skip && a->until;
}

static const char *hwx__burst_why(const hwx_opts *o) {
    if (o->burst_len && !o->burst_period)
        return "burst_len: needs burst_period (bursts are off without it)";
    if (o->burst_len > o->burst_period)
        return "burst_len: at most burst_period (a burst within each period)";
    return NULL;
}

hwp_status hwx_session_init(hwx_session *s, void *mem, size_t bytes,
                            const hwx_opts *o) {
    unsigned char *cur;
    uint32_t i;
    if (!s) return HWP_EINVAL;
    hwp_zero(s, sizeof *s);
    if (!o || !mem) return hwp_fail(&s->head, HWP_EINVAL, "hwx: NULL opts or memory");
    if (!hwx_session_bytes(o)) { /* the model that refused says why */
        const char *why = "hwx: invalid model parameters";
        (void)hwx__models_bytes(o, &why);
        return hwp_fail(&s->head, HWP_EINVAL, why);
    }
    if (bytes < hwx_session_bytes(o))
        return hwp_fail(&s->head, HWP_ENOSPC, "hwx: session memory too small");
    s->opts = *o;
    cur = (unsigned char *)mem;
    cur += (HWP_ALIGN - ((uintptr_t)cur & (HWP_ALIGN - 1))) & (HWP_ALIGN - 1);
    if (hwp_cost_init(&s->cost, NULL) != HWP_OK)
        return hwp_fail(&s->head, HWP_EINVAL, "hwx: cost init failed");
    for (i = 0; i < hwx__nadapters; i++) {
        const hwx_adapter *a = hwx__registry[i];
        const char *why = "";
        hwx__descbuf d;
        hwp_status st;
        if (!(o->models & (1u << a->model))) continue;
        if (hwx__desc(a, o, &d, &why) != HWP_OK || !a->bytes(&d, o, &why))
            return hwp_fail(&s->head, HWP_EINVAL, why);
        s->st[i] = hwp_carve(&cur, a->state_size);
        hwp_zero(s->st[i], a->state_size);
        st = a->init(s->st[i], &d, &cur, s);
        if (st != HWP_OK) {
            s->st[i] = NULL;
            return st;
        }
    }
    if (o->exact) {
        s->exact = (hwx_exact *)hwp_carve(&cur, sizeof(hwx_exact));
        hwx__exact_init(s->exact, &cur, o);
    }
    if (o->bbv[0]) { /* off until the host gives it a file */
        size_t k = hwx_bbv_bytes(o->bbv_blocks);
        hwp_status st;
        /* hwx_opts_set refuses both fields by name; a host that fills
         * hwx_opts itself gets the same reasons here, and what is left
         * for hwx_bbv_init to refuse is the sizing. */
        if (!o->bbv_interval)
            return hwp_fail(&s->head, HWP_EINVAL, "bbv_interval: expected at least 1");
        if (!k)
            return hwp_fail(&s->head, HWP_EINVAL, "bbv_blocks: expected 1..HWX_BBV_MAX_BLOCKS");
        s->bbv = (hwx_bbv *)hwp_carve(&cur, sizeof(hwx_bbv));
        st = hwx_bbv_init(s->bbv, hwp_carve(&cur, k), k, o->bbv_blocks, o->bbv_interval, NULL);
        if (st != HWP_OK)
            return hwp_fail(&s->head, st, "hwx: session memory too small for the vectors");
    }
    if (o->burst_period) {
        uint32_t len = hwx_opts_burst_len(o);
        if (hwx__burst_why(o))
            return hwp_fail(&s->head, HWP_EINVAL, hwx__burst_why(o));
        s->opts.burst_len = len;
        hwp_burst_init(&s->gate, o->burst_period, len, hwp_mix64(o->seed ^ 0x6275727374ull));
        s->quiet = !s->exact && !s->bbv;
        for (i = 0; i < hwx__nadapters; i++)
            if (s->st[i] && !hwx__registry[i]->in_bursts && !hwx__tallied(s, i) &&
                !hwx__counted(i))
                s->quiet = 0;
    }
    s->tl_next = UINT64_MAX;
    if (o->timeline) {
        s->tl = (hwx_tl *)hwp_carve(&cur, sizeof(hwx_tl));
        hwp_zero(s->tl, sizeof *s->tl);
        s->tl->every = o->timeline;
        s->tl->cols = hwx__tl_cols(o);
        s->tl->v = (uint64_t *)hwp_carve(&cur, (size_t)HWX_TL_POINTS * s->tl->cols *
                                                   sizeof(uint64_t));
        s->tl_next = o->timeline;
    }
    s->head.magic = HWX__MAGIC;
    return hwp_fail(&s->head, HWP_OK, "");
}

size_t hwx_opts_scratch_bytes(const hwx_opts *o) {
    hwx_opts m;
    size_t n;
    if (!o) return 0;
    m = *o;
    m.exact = 0; /* the exact tables and the vectors hold no model check */
    m.bbv[0] = 0;
    n = hwx_session_bytes(&m);
    return n ? hwp_align(sizeof(hwx_session)) + n + HWP_ALIGN : 0;
}

hwp_status hwx_opts_validate(const hwx_opts *o, void *scratch, size_t bytes,
                             const char **why) {
    uint32_t i;
    const char *r = "";
    if (why) *why = "";
    if (!o) return hwx__bad(why, "hwx: NULL options");
    if (hwx__burst_why(o)) return hwx__bad(why, hwx__burst_why(o));
    /* Every enabled model's desc from the options, checked by the model
     * (its *_bytes, and its init's reason when that refuses it). */
    for (i = 0; i < hwx__nadapters; i++) {
        const hwx_adapter *a = hwx__registry[i];
        hwx__descbuf d;
        if (!(o->models & (1u << a->model))) continue;
        r = "";
        if (hwx__desc(a, o, &d, &r) != HWP_OK || !a->bytes(&d, o, &r))
            return hwx_arg_fail2(a->name, "", r && r[0] ? r : "invalid parameters", why);
    }
    if (!scratch) return HWP_OK;
    /* Then the models themselves, in scratch: their inits and what runs
     * after them (co-processor programs, path profiler wiring). */
    if (bytes < hwx_opts_scratch_bytes(o))
        return hwx__bad(why, "hwx: validation scratch smaller than hwx_opts_scratch_bytes()");
    {
        hwx_opts m = *o;
        unsigned char *cur = (unsigned char *)scratch;
        hwx_session *s;
        cur += (HWP_ALIGN - ((uintptr_t)cur & (HWP_ALIGN - 1))) & (HWP_ALIGN - 1);
        s = (hwx_session *)(void *)cur;
        cur += hwp_align(sizeof *s);
        m.exact = 0;
        m.bbv[0] = 0;
        if (hwx_session_init(s, cur, bytes - (size_t)(cur - (unsigned char *)scratch), &m) !=
            HWP_OK)
            return hwx__bad(why, hwp_why(s));
    }
    return HWP_OK;
}

/* hwx_session_quiet: up to the gap's end or the next selection of an
 * adapter that counts the instructions between (ProfileMe). */
uint64_t hwx__session_quiet(const hwx_session *s) {
    uint64_t q = s->gate.left, u;
    uint32_t i;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i] && hwx__counted(i) && (u = hwx__registry[i]->until(s->st[i])) < q) q = u;
    return q;
}

/* The next n instructions, taken or left whole by the burst gate: true
 * when the gated models see them (always with bursts off). A new burst
 * first ends what the last one left open in them. */
static bool hwx__gate(hwx_session *s, uint64_t n) {
    uint64_t at = s->gate.bursts;
    uint32_t i;
    if (!s->opts.burst_period) return true;
    if (!hwp_burst_step(&s->gate, n)) return false;
    if (at != s->gate_at) {
        for (i = 0; s->gate_at && i < hwx__nadapters; i++)
            if (s->st[i] && hwx__registry[i]->burst_end) hwx__registry[i]->burst_end(s->st[i]);
        s->gate_at = at;
    }
    s->fed += n;
    return true;
}

/* Does adapter i see this instruction (fed: the gate's verdict)? */
#define HWX__SEES(s, i, fed) ((s)->st[i] && ((fed) || !hwx__registry[i]->in_bursts))

void hwx_session_insn(hwx_session *s, const hwp_insn *in) {
    uint32_t cls = in->cls < HWP_CLS_COUNT ? in->cls : HWP_CLS_OTHER, i;
    bool fed = hwx__gate(s, 1);
    s->insns++;
    s->cls[cls]++;
    s->loads += cls == HWP_CLS_LOAD;
    s->stores += cls == HWP_CLS_STORE;
    if (hwp_cls_is_branch(cls)) {
        s->branches++;
        s->taken += (in->events & HWP_EV_TAKEN) != 0;
    }
    hwp_cost_tick(&s->cost, 1);
    /* A timing model (registered first) sets s->timing as it goes: the
     * adapters after it take its modelled cycle as their clock. */
    for (i = 0; i < hwx__nadapters; i++)
        if (HWX__SEES(s, i, fed))
            hwx__registry[i]->insn(s->st[i], in,
                                   s->timing.on ? s->timing.cycle : s->insns);
    if (s->exact) {
        hwx__exact_insn(s->exact, in, s->timing.events);
        if (s->timing.on) hwx__exact_timed(s->exact, s);
    }
    if (s->bbv) hwx_bbv_run(s->bbv, in->pc, 1, hwp_cls_is_branch(cls));
    if (s->insns >= s->tl_next) hwx__tl_point(s, false);
}

void hwx_session_bbv_out(hwx_session *s, const hwp_writer *w) {
    if (s && s->bbv && w) s->bbv->out = *w;
}

uint64_t hwx_session_until(const hwx_session *s) {
    uint64_t u = UINT64_MAX, v;
    uint32_t i;
    if (s->exact) return 1;
    /* A block's first instruction comes whole: its pc names the block. */
    if (s->bbv && s->bbv->out.write && !s->bbv->in_block) return 1;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i] && hwx__registry[i]->until &&
            (v = hwx__registry[i]->until(s->st[i])) < u)
            u = v;
    return u;
}

void hwx_session_skip(hwx_session *s, uint64_t n) {
    uint32_t i;
    bool fed = hwx__gate(s, n);
    s->insns += n;
    s->unseen += n;
    s->cls[HWP_CLS_OTHER] += n;
    hwp_cost_tick(&s->cost, n);
    if (s->bbv) hwx_bbv_run(s->bbv, 0, n, false); /* within the open block (until) */
    for (i = 0; i < hwx__nadapters; i++)
        if (HWX__SEES(s, i, fed) && hwx__registry[i]->skip) hwx__registry[i]->skip(s->st[i], n);
    if (s->insns >= s->tl_next) hwx__tl_point(s, false);
}

bool hwx_session_block_ok(const hwx_session *s) {
    uint32_t i;
    if (!s || s->head.magic != HWX__MAGIC || s->exact) return false;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i] && !hwx__registry[i]->block) return false;
    return true;
}

/* The core takes the block through hwx__core_block; ProfileMe's block
 * reads no figure of the core's but its clock (a selection inside a
 * block sends the block one instruction at a time). */
bool hwx_opts_core_blocks(const hwx_opts *o) {
    return o && (o->models & HWX_M_CORE) && !(o->models & ~(HWX_M_CORE | HWX_M_PM)) && !o->exact;
}

bool hwx_session_core_blocks_ok(const hwx_session *s) {
    return s && s->head.magic == HWX__MAGIC && hwx_opts_core_blocks(&s->opts);
}

bool hwx_session_tally_ok(const hwx_session *s) {
    uint32_t i;
    /* nothing may need each instruction */
    if (!s || s->head.magic != HWX__MAGIC || s->exact || s->bbv) return false;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i] && !hwx__tallied(s, i)) return false;
    return true;
}

void hwx_session_tally(hwx_session *s, uint64_t pc, uint64_t n) {
    uint32_t i;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i] && hwx__tallied(s, i)) hwx__registry[i]->tally(s->st[i], pc, n);
}

void hwx_session_retire(hwx_session *s, uint64_t lo, uint64_t hi) {
    uint32_t i;
    if (!s || s->head.magic != HWX__MAGIC || lo > hi || !s->opts.retire) return;
    s->retired++;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i] && hwx__registry[i]->retire) hwx__registry[i]->retire(s->st[i], lo, hi);
}

/* A block the core could not take whole: its instructions' records, as
 * a host feeding one at a time makes them, each with its ops. */
static void hwx__block_each(hwx_session *s, const hwx_block *b) {
    const hwp_core_ops *ops = s->timing.blk_ops;
    uint32_t i, j = 0;
    for (i = 0; i < b->n; i++) {
        hwp_insn in;
        const hwp_insn *r = &in;
        if (i + 1 == b->n) {
            r = b->last;
        } else if (j < b->nmem && b->mem[j].pc == b->pcs[i]) {
            r = &b->mem[j++];
        } else {
            hwp_zero(&in, sizeof in);
            in.pc = b->pcs[i];
            in.next_pc = b->pcs[i + 1];
        }
        if (ops) s->timing.ops = &ops[i];
        hwx_session_insn(s, r);
    }
}

void hwx_session_block(hwx_session *s, const uint64_t *pcs, uint32_t n,
                       const hwp_insn *last, const hwp_insn *mem,
                       uint32_t nmem) {
    uint32_t cls = last->cls < HWP_CLS_COUNT ? last->cls : HWP_CLS_OTHER, j;
    uint64_t clock = s->timing.cycle; /* the core's, before the block */
    bool fed;
    hwx_block b;
    b.pcs = pcs;
    b.n = n;
    b.last = last;
    b.mem = mem;
    b.nmem = nmem;
    /* With the core on it runs the block first; where it cannot, every
     * model gets the block one instruction at a time. */
    if (s->timing.on && !hwx__core_block(s, &b)) {
        hwx__block_each(s, &b);
        return;
    }
    fed = hwx__gate(s, n);
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
    b.cycle = s->timing.on ? clock : s->insns - n;
    for (j = 0; j < hwx__nadapters; j++)
        if (HWX__SEES(s, j, fed) && hwx__registry[j]->block)
            hwx__registry[j]->block(s->st[j], &b);
    if (s->bbv) hwx_bbv_run(s->bbv, pcs[0], n, hwp_cls_is_branch(cls));
    if (s->insns >= s->tl_next) hwx__tl_point(s, false);
}

void hwx_session_finish(hwx_session *s) {
    uint32_t i;
    if (!s || s->head.magic != HWX__MAGIC || s->finished) return;
    s->finished = 1;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i]) hwx__registry[i]->flush(s->st[i]);
    if (s->exact) {
        hwx__exact_timed(s->exact, s); /* what the core's flush finished */
        hwx__exact_finish(s->exact);
    }
    if (s->bbv) hwx_bbv_finish(s->bbv);
    /* the last point holds the run's totals */
    if (s->tl && (!s->tl->n || s->tl->v[(size_t)(s->tl->n - 1) * s->tl->cols] < s->insns))
        hwx__tl_point(s, true);
}

hwp_status hwx_session_merge(hwx_session *dst, const hwx_session *src) {
    unsigned i;
    if (!dst || !src || dst->head.magic != HWX__MAGIC ||
        src->head.magic != HWX__MAGIC)
        return HWP_EINVAL;
    if (dst->opts.models != src->opts.models ||
        (dst->exact == NULL) != (src->exact == NULL))
        return hwp_fail(&dst->head, HWP_EMISMATCH, "hwx: sessions built from different options");
    dst->insns += src->insns;
    dst->fed += src->fed;
    dst->unseen += src->unseen;
    dst->retired += src->retired;
    dst->gate.bursts += src->gate.bursts;
    dst->loads += src->loads;
    dst->stores += src->stores;
    dst->branches += src->branches;
    dst->taken += src->taken;
    for (i = 0; i < HWP_CLS_COUNT; i++) dst->cls[i] += src->cls[i];
    hwp_cost_merge(&dst->cost, &src->cost);
    for (i = 0; i < hwx__nadapters; i++)
        if (dst->st[i] && src->st[i]) hwx__registry[i]->merge(dst->st[i], src->st[i]);
    if (dst->exact) hwx__exact_merge(dst->exact, src->exact);
    if (dst->bbv && src->bbv) { /* the vectors stay per stream; the counts add */
        dst->bbv->insns += src->bbv->insns;
        dst->bbv->lines += src->bbv->lines;
        dst->bbv->dropped += src->bbv->dropped;
    }
    return hwp_fail(&dst->head, HWP_OK, "");
}

/* ---- accuracy against exact ------------------------------------------------- */

/* Scratch for hwx_session_evaluate: the largest any adapter asks for (they
 * score one after the other). */
size_t hwx_session_eval_bytes(const hwx_session *s) {
    size_t n = HWP_ALIGN, k;
    uint32_t i;
    if (!s || s->head.magic != HWX__MAGIC || !s->exact) return n;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i] && hwx__registry[i]->eval_bytes &&
            (k = hwx__registry[i]->eval_bytes(s->st[i], s)) > n)
            n = k;
    return n + HWP_ALIGN;
}

hwp_status hwx_session_evaluate(hwx_session *s, void *scratch, size_t bytes) {
    unsigned char *cur;
    uint32_t i, base = 0;
    if (!s || s->head.magic != HWX__MAGIC) return HWP_EINVAL;
    hwp_zero(s->acc, sizeof s->acc);
    if (!s->exact) return hwp_fail(&s->head, HWP_ESTATE, "hwx: accuracy needs exact=on");
    if (!scratch || bytes < hwx_session_eval_bytes(s))
        return hwp_fail(&s->head, HWP_ENOSPC, "hwx: evaluation scratch too small");
    hwx_session_finish(s);
    cur = (unsigned char *)scratch;
    cur += (HWP_ALIGN - ((uintptr_t)cur & (HWP_ALIGN - 1))) & (HWP_ALIGN - 1);
    for (i = 0; i < hwx__nadapters; i++) {
        const hwx_adapter *a = hwx__registry[i];
        if (s->st[i] && a->evaluate && base + a->nmetrics <= HWX_MAX_METRICS)
            a->evaluate(s->st[i], s, cur, s->acc + base);
        base += a->nmetrics;
    }
    s->evaluated = 1;
    return hwp_fail(&s->head, HWP_OK, "");
}

bool hwx_session_metric(const hwx_session *s, const char *key, hwx_metric *m) {
    uint32_t i, j, base = 0;
    if (m) hwp_zero(m, sizeof *m);
    if (!s || s->head.magic != HWX__MAGIC || !key) return false;
    for (i = 0; i < hwx__nadapters; i++) {
        const hwx_adapter *a = hwx__registry[i];
        for (j = 0; j < a->nmetrics && base + j < HWX_MAX_METRICS; j++)
            if (s->st[i] && hwx_streq(a->metrics[j].key, key)) {
                if (m) *m = s->acc[base + j];
                return true;
            }
        base += a->nmetrics;
    }
    return false;
}

/* ---- reports ---------------------------------------------------------------- */

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
    unsigned i, j, base = 0;
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
    if (s->unseen) /* the lines above count only what came with a record */
        hwx__line(w, "  without a record (classes not known, counted as other): ", s->unseen,
                  s->insns);
    if (s->retired) /* code the host saw unmapped (retire=off: none) */
        hwx__line(w, "code ranges retired (unmapped) ", s->retired, 0);
    if (s->opts.burst_period) {
        hwp_put_str(w, "bursts        ");
        for (i = 0; i < hwx__nadapters; i++)
            if (s->st[i] && hwx__registry[i]->in_bursts) {
                hwp_put_str(w, " ");
                hwp_put_str(w, hwx__registry[i]->name);
            }
        hwx__kv(w, " saw ", s->fed);
        hwx__kv(w, " of ", s->insns);
        hwx__kv(w, " instructions, in ", s->gate.bursts);
        hwx__kv(w, " bursts of ", s->opts.burst_len);
        hwx__kv(w, " every ", s->opts.burst_period);
        hwp_put_str(w, " on average\n");
    }
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i]) hwx__registry[i]->report_text(s->st[i], s, w);
    if (s->bbv) {
        hwx__kv(w, "\n-- basic-block vectors (bbv=) --\n  intervals ", s->bbv->lines);
        hwx__kv(w, " of ", s->bbv->interval);
        hwx__kv(w, " instructions, blocks ", s->bbv->used);
        hwx__kv(w, "\n  instructions in blocks beyond bbv_blocks (not in the vectors) ",
                s->bbv->dropped);
        hwp_put_str(w, "\n");
    }
    hwp_put_str(w, "\n-- modelled hardware overhead --\n");
    hwp_cost_write_text(&s->cost, w);
    if (s->exact) {
        hwp_put_str(w, "\n-- exact ground truth --\n");
        hwx__exact_report_text(s->exact, w, s->opts.top);
    }
    if (!s->evaluated) return;
    hwp_put_str(w, "\n-- accuracy against exact (each paper's metric) --\n");
    for (i = 0; i < hwx__nadapters; base += hwx__registry[i++]->nmetrics) {
        const hwx_adapter *a = hwx__registry[i];
        if (!s->st[i] || base + a->nmetrics > HWX_MAX_METRICS) continue;
        for (j = 0; j < a->nmetrics; j++)
            if (a->metrics[j].label)
                hwx__metric_text(w, a->metrics[j].label, &s->acc[base + j],
                                 a->metrics[j].dec, a->metrics[j].unit);
        if (a->eval_text) a->eval_text(s->acc + base, w);
    }
}

void hwx_modules_json(const hwp_writer *w, const hwx_module *mods, size_t n) {
    size_t i;
    if (!n) return;
    hwp_put_str(w, ",\"modules\":[");
    for (i = 0; i < n; i++) {
        hwp_put_str(w, i ? ",{\"path\":" : "{\"path\":");
        hwp_put_json_str(w, mods[i].path ? mods[i].path : "");
        hwp_put_json_hex(w, "lo", mods[i].lo);
        hwp_put_json_hex(w, "hi", mods[i].hi);
        if (mods[i].have_bias) hwp_put_json_hex(w, "bias", mods[i].bias);
        hwp_put_str(w, "}");
    }
    hwp_put_str(w, "]");
}

/* "models":{...}: each enabled model's profile (the report's member) */
static void hwx__models_json(const hwx_session *s, const hwp_writer *w) {
    uint32_t on = 0, i;
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i]) on |= 1u << hwx__registry[i]->model;
    hwp_put_str(w, "\"models\":{\"models\":");
    hwp_put_u64(w, on);
    for (i = 0; i < hwx__nadapters; i++)
        if (s->st[i]) hwx__registry[i]->report_json(s->st[i], w);
    hwp_put_str(w, "}");
}

void hwx_session_profiles_json(const hwx_session *s, const hwp_writer *w) {
    if (!s || s->head.magic != HWX__MAGIC) {
        hwp_put_str(w, "null\n");
        return;
    }
    hwp_put_str(w, "{");
    hwx__models_json(s, w);
    hwp_put_str(w, "}\n");
}

void hwx_session_report_json(const hwx_session *s, const hwp_writer *w) {
    hwx_session_report_json_mods(s, w, NULL, 0);
}

void hwx_session_report_json_mods(const hwx_session *s, const hwp_writer *w,
                                  const hwx_module *mods, size_t n) {
    unsigned i, j, base = 0;
    int first = 1;
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
    hwp_put_str(w, "},");
    if (s->opts.burst_period) {
        hwx__kv(w, "\"bursts\":{\"period\":", s->opts.burst_period);
        hwx__kv(w, ",\"len\":", s->opts.burst_len);
        hwx__kv(w, ",\"bursts\":", s->gate.bursts);
        hwx__kv(w, ",\"fed\":", s->fed);
        hwp_put_str(w, "},");
    }
    hwx__models_json(s, w);
    hwp_put_str(w, ",\"overhead\":");
    hwp_cost_write_json(&s->cost, w);
    if (s->tl) hwx__tl_json(s, w);
    if (s->exact) {
        hwp_put_str(w, ",\"exact\":");
        hwx__exact_report_json(s->exact, w, s->opts.top);
    }
    if (s->evaluated) {
        hwp_put_str(w, ",\"accuracy\":{");
        for (i = 0; i < hwx__nadapters; base += hwx__registry[i++]->nmetrics) {
            const hwx_adapter *a = hwx__registry[i];
            if (!s->st[i] || base + a->nmetrics > HWX_MAX_METRICS) continue;
            for (j = 0; j < a->nmetrics; j++)
                hwx__metric_json(w, a->metrics[j].key, &s->acc[base + j], &first);
        }
        hwp_put_str(w, "}");
    }
    hwx_modules_json(w, mods, n);
    hwp_put_str(w, "}\n");
}

/* ---- the exact tables for hosts (hwx_host.h) ---------------------------- */

static const hwx_xtab *hwx__exact_tab(const hwx_session *s, uint32_t table) {
    if (!s || s->head.magic != HWX__MAGIC || !s->exact) return NULL;
    switch (table) {
    case HWX_EXACT_PC: return &s->exact->pc;
    case HWX_EXACT_VALUE: return &s->exact->val;
    case HWX_EXACT_PATH: return &s->exact->path;
    default: return NULL;
    }
}

uint64_t hwx_exact_count(const hwx_session *s, uint32_t table, uint64_t k1, uint64_t k2) {
    const hwx_xtab *t = hwx__exact_tab(s, table);
    return t ? hwx__xtab_get(t, k1, k2) : 0;
}

bool hwx_exact_next(const hwx_session *s, uint32_t table, uint64_t *it, hwx_exact_row *row) {
    const hwx_xtab *t = hwx__exact_tab(s, table);
    if (!t) return false;
    for (; *it <= t->mask; ++*it) {
        const hwx_xent *e = &t->e[*it];
        if (!e->count) continue;
        row->k1 = e->k1;
        row->k2 = e->k2;
        row->count = e->count;
        row->aux = e->aux;
        ++*it;
        return true;
    }
    return false;
}
