/* examples/common/hwx_strat.c: stratified sampling (Sastry, Bodik &
 * Smith, Rapid Profiling via Stratified Sampling, ISCA 2001) as a session
 * adapter: the hardware compressor's messages go to a host-side
 * accumulator of (load pc, value) tuples; scored by the weighted
 * invariance error against an accumulator filled from the exact profile
 * (sec. 5.3.1). */
#include "hwx_int.h"

typedef struct hwx__stratd {
    hwp_strat_desc s;
    hwp_strat_acc_desc a;
} hwx__stratd;

typedef struct hwx__strat {
    hwp_strat *strat;
    hwp_strat_acc *acc;
} hwx__strat;

static void hwx__strat_defaults(void *dv, const hwx_opts *o) {
    hwx__stratd *d = (hwx__stratd *)dv;
    d->s.seed = o->seed;
    d->s.on_interrupt = hwp_strat_acc_handler;
    /* In bursts (burst_period=) the compressor sees len / period of the
     * loads: its sampling rate rises by as much (r = 256 len / period, at
     * least 1), so a run gives it as many samples as without bursts, as
     * the VM layer's does. strat_rate= still sets r. */
    if (o->burst_period) {
        uint64_t r = (256u * (uint64_t)hwx_opts_burst_len(o) + o->burst_period / 2u) /
                     o->burst_period;
        d->s.rate = r ? (uint32_t)r : 1u;
    }
}

static hwp_status hwx__strat_set(void *dv, const char *k, const char *opt,
                              const char *v, const char **why) {
    hwx__stratd *d = (hwx__stratd *)dv;
    if (hwx_streq(k, "l2")) return hwx__u32(opt, v, &d->s.l2_entries, why);
    return hwx__unknown(why);
}

static uint32_t hwx__strat_wants(const hwx_opts *o) {
    (void)o;
    return HWX_WANT_VALUES; /* load records carry them */
}

/* The profile keeps the sampler's stratum sizes, so that its estimates
 * are the library's C estimator (section 3.1); the other schemes' counts
 * need none. It names as many loads as it holds tuples: a load that
 * finds no entry loses its whole count (its invariance reads 0), while a
 * tuple without one still counts for its load, and a program's loads are
 * bounded by its code, not its data (with a quarter, the library's
 * default, a C compiler's run lost 57% of its counts that way). */
static hwp_strat_acc_desc hwx__strat_accd(const hwx__stratd *d) {
    hwp_strat_acc_desc a = d->a;
    if (!a.pcs) a.pcs = a.tuples ? a.tuples : 65536u;
    if (d->s.scheme == HWP_STRAT_SAMPLED) a.strata = d->s.entries ? d->s.entries : 2048u;
    return a;
}

static size_t hwx__strat_bytes(const void *dv, const hwx_opts *o, const char **why) {
    const hwx__stratd *d = (const hwx__stratd *)dv;
    hwp_strat_acc_desc ad = hwx__strat_accd(d);
    size_t a = hwp_strat_bytes(&d->s), b = hwp_strat_acc_bytes(&ad);
    (void)o;
    if (!a) HWX__WHY(hwp_strat, hwp_strat_init(&x_, m_, 0, &d->s, NULL), why);
    else if (!b) HWX__WHY(hwp_strat_acc, hwp_strat_acc_init(&x_, m_, 0, &d->a, NULL), why);
    if (!a || !b) return 0;
    return hwp_align(sizeof(hwp_strat)) + hwp_align(a) + hwp_align(sizeof(hwp_strat_acc)) +
           hwp_align(b);
}

static hwp_status hwx__strat_init(void *sv, void *dv, unsigned char **cur, hwx_session *s) {
    hwx__strat *m = (hwx__strat *)sv;
    hwx__stratd *d = (hwx__stratd *)dv;
    hwp_strat_acc_desc ad = hwx__strat_accd(d);
    size_t k = hwp_strat_acc_bytes(&ad);
    m->acc = (hwp_strat_acc *)hwp_carve(cur, sizeof(hwp_strat_acc));
    if (hwp_strat_acc_init(m->acc, hwp_carve(cur, k), k, &ad, NULL) != HWP_OK)
        return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->acc));
    d->s.ctx = m->acc;
    k = hwp_strat_bytes(&d->s);
    m->strat = (hwp_strat *)hwp_carve(cur, sizeof(hwp_strat));
    if (hwp_strat_init(m->strat, hwp_carve(cur, k), k, &d->s, &s->cost) != HWP_OK)
        return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->strat));
    return HWP_OK;
}

static void hwx__strat_insn(void *sv, const hwp_insn *in, uint64_t cycle) {
    (void)cycle;
    hwp_strat_insn(((hwx__strat *)sv)->strat, in);
}

static void hwx__strat_block(void *sv, const hwx_block *b) {
    hwp_strat *st = ((hwx__strat *)sv)->strat;
    uint32_t j;
    for (j = 0; j < b->nmem; j++) hwp_strat_insn(st, &b->mem[j]);
    hwp_strat_insn(st, b->last);
}

static void hwx__strat_flush(void *sv) { hwp_strat_flush(((hwx__strat *)sv)->strat); }

static void hwx__strat_merge(void *dv, const void *sv) {
    hwp_strat_acc_merge(((hwx__strat *)dv)->acc, ((const hwx__strat *)sv)->acc);
}

/* A full profile loses counts (a tuple with no room loses its count, a
 * load with no entry its whole total): say how much, as the exact
 * profile says INCOMPLETE, so no one reads its invariances as whole. */
static void hwx__strat_full(const hwp_strat_acc *acc, const hwp_writer *w) {
    hwp_strat_acc_stats st;
    if (hwp_strat_acc_get_stats(acc, &st) != HWP_OK || !st.total ||
        (!st.dropped_count && !st.dropped_pc_count))
        return;
    hwp_put_str(w, "  profile full (");
    hwp_put_u64(w, st.tuples);
    hwp_put_str(w, " tuples): ");
    hwp_put_f64(w, 100.0 * (double)st.dropped_count / (double)st.total, 2);
    hwp_put_str(w, "% of the counts lost with their tuple, ");
    hwp_put_f64(w, 100.0 * (double)st.dropped_pc_count / (double)st.total, 2);
    hwp_put_str(w, "% with no load entry; raise strat_tuples\n");
}

/* The loads a JIT would specialise first: the most invariant ones with
 * enough samples to say so, each with its top value, the library's
 * estimate of that value's count and the 95% interval of the
 * invariance. */
static void hwx__strat_text(const void *sv, const hwx_session *s, const hwp_writer *w) {
    const hwx__strat *m = (const hwx__strat *)sv;
    hwp_strat_pc rows[32];
    uint32_t top = s->opts.top, cap = top < 32 ? top : 32;
    size_t n = hwp_strat_acc_top_pcs(m->acc, HWP_STRAT_KIND_VALUE, rows, cap), i;
    hwp_put_str(w, "\n-- value invariance of the most invariant loads: stratified sampling "
                   "(Sastry et al., ISCA 2001) --\n");
    hwp_put_str(w, "  load pc          value               est. count  samples  invariance [95%]");
    hwp_put_str(w, s->exact ? "  (exact)\n" : "\n");
    for (i = 0; i < n && i < cap; i++) {
        hwp_strat_value v;
        if (!hwp_strat_acc_top_values(m->acc, HWP_STRAT_KIND_VALUE, rows[i].pc, &v, 1)) continue;
        hwp_put_str(w, "  ");
        hwp_put_hex(w, rows[i].pc);
        hwp_put_str(w, "  ");
        hwp_put_hex(w, v.w);
        hwp_put_str(w, "  ");
        hwp_put_f64(w, v.estimate, 0);
        hwp_put_str(w, "  ");
        hwp_put_u64(w, rows[i].samples);
        hwp_put_str(w, "  ");
        hwp_put_f64(w, rows[i].invariance, 3);
        hwp_put_str(w, " [");
        hwp_put_f64(w, rows[i].lo, 3);
        hwp_put_str(w, ", ");
        hwp_put_f64(w, rows[i].hi, 3);
        hwp_put_str(w, "]");
        if (s->exact) hwx__exact_inv(w, s->exact, rows[i].pc, v.w);
        hwp_put_str(w, "\n");
    }
    hwx__strat_full(m->acc, w);
}

static void hwx__strat_json(const void *sv, const hwp_writer *w) {
    const hwx__strat *m = (const hwx__strat *)sv;
    hwp_put_str(w, ",\"stratified\":{\"compressor\":");
    hwp_strat_write_json(m->strat, w);
    hwp_put_str(w, ",\"profile\":");
    hwp_strat_acc_write_json(m->acc, w);
    hwp_put_str(w, "}");
}

/* The ideal profile for section 5.3.1, from the exact (load pc, value)
 * counts. The metric selects only tuples with at least min_inv of a load
 * executed at least min_exec times (the paper's 10% and 1000, the
 * defaults hwp_strat_invariance_error takes), so at least 100 events; a
 * large program's exact table holds tens of millions of tuples, nearly
 * all below that, and copying them all would need a profile as large.
 * The ideal's tuple table holds the tuples of 100 events or more and is
 * filled with them first; the others come after, into a full table that
 * keeps what it holds (KEEP), so they reach only their load's total,
 * which the selection needs whole. */
#define HWX__STRAT_SEL_MIN 100u

static uint64_t hwx__strat_selectable(const hwx_xtab *t) {
    uint64_t i, n = 0;
    for (i = 0; i <= t->mask; i++) n += t->e[i].count >= HWX__STRAT_SEL_MIN;
    return n;
}

static void hwx__strat_ideal_desc(const hwx_session *s, hwp_strat_acc_desc *d) {
    hwp_zero(d, sizeof *d);
    d->tuples = (uint32_t)(hwx__strat_selectable(&s->exact->val) + 1u);
    d->pcs = (uint32_t)(s->exact->pc.used + 16);
    d->replace = HWP_STRAT_ACC_KEEP;
}

static size_t hwx__strat_eval_bytes(const void *sv, const hwx_session *s) {
    hwp_strat_acc_desc d;
    (void)sv;
    hwx__strat_ideal_desc(s, &d);
    return hwp_align(sizeof(hwp_strat_acc)) + hwp_align(hwp_strat_acc_bytes(&d));
}

/* No score against exact tables that dropped keys: the loads' totals
 * and invariances would be wrong, and the error with them (the pc
 * table holds every load pc when it dropped nothing: the ideal's size). */
static void hwx__strat_eval(void *sv, const hwx_session *s, unsigned char *cur,
                            hwx_metric *out) {
    hwp_strat_acc_desc d;
    hwp_strat_acc *ideal = (hwp_strat_acc *)(void *)cur;
    unsigned char *mem = cur + hwp_align(sizeof(hwp_strat_acc));
    const hwx_xtab *x = &s->exact->val;
    hwp_strat_metric met;
    uint64_t i;
    unsigned pass;
    if (x->dropped || s->exact->pc.dropped) return;
    hwx__strat_ideal_desc(s, &d);
    if (hwp_strat_acc_init(ideal, mem, hwp_strat_acc_bytes(&d), &d, NULL) != HWP_OK) return;
    for (pass = 0; pass < 2; pass++)
        for (i = 0; i <= x->mask; i++) {
            const hwx_xent *e = &x->e[i];
            if (e->count && (e->count >= HWX__STRAT_SEL_MIN) == !pass)
                hwp_strat_acc_add(ideal, HWP_STRAT_KIND_VALUE, e->k1, e->k2, e->count);
        }
    if (hwp_strat_invariance_error(ideal, ((hwx__strat *)sv)->acc, NULL, &met) == HWP_OK &&
        met.tuples) {
        out[0].valid = 1;
        out[0].n = (uint32_t)met.tuples;
        out[0].value = met.error_pct;
    }
}

static const hwx_metric_def hwx__strat_metrics[] = {
    {"strat_inv_err_pct", "  stratified weighted invariance error (Sastry et al. 5.3.1): ", 3, "%"},
};

/* Counters over time (timeline=N), cumulative. */
static const char *const hwx__strat_counter_names[] = {"samples", "messages", "interrupts", NULL};
static void hwx__strat_counters(const void *sv, uint64_t *out) {
    const hwx__strat *m = (const hwx__strat *)sv;
    hwp_strat_stats st;
    hwp_zero(&st, sizeof st);
    hwp_strat_get_stats(m->strat, &st);
    out[0] = st.samples;
    out[1] = st.messages;
    out[2] = st.interrupts;
}

const hwx_adapter hwx__adapter_strat = {
    .name = "strat",
    .alias = "stratified",
    .model = HWP_MODEL_STRAT,
    .params = "l2 (l2_entries), "
              "or any member of its desc by the name the report gives it (docs/stratified.md)",
    .parts = {{hwp_strat_desc_fields, offsetof(hwx__stratd, s)},
              {hwp_strat_acc_desc_fields, offsetof(hwx__stratd, a)}},
    .desc_size = sizeof(hwx__stratd),
    .state_size = sizeof(hwx__strat),
    .metrics = hwx__strat_metrics,
    .nmetrics = HWX_COUNT(hwx__strat_metrics),
    .defaults = hwx__strat_defaults,
    .set = hwx__strat_set,
    .wants = hwx__strat_wants,
    .bytes = hwx__strat_bytes,
    .init = hwx__strat_init,
    .insn = hwx__strat_insn,
    .block = hwx__strat_block,
    .flush = hwx__strat_flush,
    .in_bursts = 1,
    .merge = hwx__strat_merge,
    .report_text = hwx__strat_text,
    .report_json = hwx__strat_json,
    .eval_bytes = hwx__strat_eval_bytes,
    .evaluate = hwx__strat_eval,
    .counter_names = hwx__strat_counter_names,
    .counters = hwx__strat_counters,
};
