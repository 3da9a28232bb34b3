/* examples/common/hwx_pm.c: ProfileMe (Dean et al., ProfileMe: Hardware
 * Support for Instruction-Level Profiling on Out-of-Order Processors,
 * MICRO 1997) as a session adapter: the sampler delivers into a profile
 * table, scored by the fraction of instructions whose estimate lies
 * inside the paper's 1/sqrt(E[k]) envelope (instructions with at least the
 * advised minimum of expected samples, HWP_PM_MIN_SAMPLES). */
#include "hwx_int.h"

typedef struct hwx__pmd {
    hwp_pm_desc p;
    hwp_pm_table_desc t;
} hwx__pmd;

typedef struct hwx__pm {
    hwp_pm *pm;
    hwp_pm_table *tab;
    hwx_timing *tm; /* the session's: on when the core times the stream */
    uint32_t paired;
    uint32_t pad_;
} hwx__pm;

static void hwx__pm_defaults(void *dv, const hwx_opts *o) {
    hwx__pmd *d = (hwx__pmd *)dv;
    d->p.seed = o->seed;
    d->p.deliver = hwp_pm_table_deliver;
    /* The table is the profiling software's per-PC database (host memory,
     * not hardware): sized for a real program's sampled PCs. The header's
     * 4096 fills on a python3.11 run and then drops PCs, which would leave
     * the run without accuracy scores (pm_table= sets it). */
    d->t.capacity = 1u << 16;
}

static hwp_status hwx__pm_set(void *dv, const char *k, const char *opt,
                              const char *v, const char **why) {
    hwx__pmd *d = (hwx__pmd *)dv;
    if (hwx_streq(k, "table")) return hwx__u32(opt, v, &d->t.capacity, why);
    return hwx__unknown(why);
}

/* The table's estimators need the sampler's S, W and pairing (a pair is
 * two samples per S); hwp_pm_table_desc_for gives the same once the
 * sampler exists, but the storage is sized before it does. */
static void hwx__pm_derive(hwx__pmd *d) {
    d->t.interval = d->p.interval;
    d->t.window = d->p.window;
    d->t.paired = d->p.paired;
}

static uint32_t hwx__pm_wants(const hwx_opts *o) {
    (void)o;
    return 0;
}

static size_t hwx__pm_bytes(const void *dv, const hwx_opts *o, const char **why) {
    hwx__pmd d = *(const hwx__pmd *)dv;
    size_t a, b;
    (void)o;
    hwx__pm_derive(&d);
    a = hwp_pm_bytes(&d.p);
    b = hwp_pm_table_bytes(&d.t);
    if (!a) HWX__WHY(hwp_pm, hwp_pm_init(&x_, m_, 0, &d.p, NULL), why);
    else if (!b) HWX__WHY(hwp_pm_table, hwp_pm_table_init(&x_, m_, 0, &d.t, NULL), why);
    if (!a || !b) return 0;
    return hwp_align(sizeof(hwp_pm)) + hwp_align(a) + hwp_align(sizeof(hwp_pm_table)) +
           hwp_align(b);
}

static hwp_status hwx__pm_init(void *sv, void *dv, unsigned char **cur, hwx_session *s) {
    hwx__pm *m = (hwx__pm *)sv;
    hwx__pmd *d = (hwx__pmd *)dv;
    size_t k;
    hwx__pm_derive(d);
    k = hwp_pm_table_bytes(&d->t);
    m->tab = (hwp_pm_table *)hwp_carve(cur, sizeof(hwp_pm_table));
    if (hwp_pm_table_init(m->tab, hwp_carve(cur, k), k, &d->t, NULL) != HWP_OK)
        return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->tab));
    d->p.user = m->tab;
    k = hwp_pm_bytes(&d->p);
    m->pm = (hwp_pm *)hwp_carve(cur, sizeof(hwp_pm));
    if (hwp_pm_init(m->pm, hwp_carve(cur, k), k, &d->p, &s->cost) != HWP_OK)
        return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->pm));
    m->tm = &s->timing;
    m->paired = d->p.paired;
    /* The core (registered first, so on already) opens its window for
     * the first selection as for the others. */
    if (m->tm->on) m->tm->want = hwp_pm_countdown(m->pm);
    return HWP_OK;
}

/* A selected instruction the core has timed: the hardware's protocol
 * with the core's stage cycles (ProfileMe fig. 1: fetch, map, data
 * ready, issue, retire-ready, retire) and its miss and mispredict bits. Outside a
 * timed window (sampled mode) only the bits and the clock are known. */
static void hwx__pm_timed(hwp_pm *pm, const hwx_timing *t, const hwp_insn *in,
                          uint64_t cycle) {
    uint32_t tag = hwp_pm_tag(pm, in->pc, t->timed ? t->fetch : cycle);
    if (!tag) return;
    hwp_pm_note(pm, tag, in->cls, in->addr, in->events | t->events);
    if (in->events & HWP_EV_ABORTED) {
        hwp_pm_abort(pm, tag, (in->events & HWP_EV_TRAP) ? 1u : 0u);
        return;
    }
    if (t->timed) {
        hwp_pm_stage(pm, tag, HWP_PM_ST_MAP, t->map);
        hwp_pm_stage(pm, tag, HWP_PM_ST_DATA_READY, t->data_ready);
        hwp_pm_stage(pm, tag, HWP_PM_ST_ISSUE, t->issue);
        hwp_pm_stage(pm, tag, HWP_PM_ST_RETIRE_READY, t->ready);
        if (in->cls == HWP_CLS_LOAD) {
            hwp_pm_stage(pm, tag, HWP_PM_ST_LOAD_ISSUE, t->issue);
            hwp_pm_stage(pm, tag, HWP_PM_ST_LOAD_DONE, t->ready);
        }
    }
    hwp_pm_retire(pm, tag, t->timed ? t->retire : cycle);
}

static void hwx__pm_insn(void *sv, const hwp_insn *in, uint64_t cycle) {
    hwx__pm *m = (hwx__pm *)sv;
    if (!m->tm->on) {
        hwp_pm_insn(m->pm, in, cycle);
        return;
    }
    if (hwp_pm_fetch(m->pm)) hwx__pm_timed(m->pm, m->tm, in, cycle);
    if (in->cls == HWP_CLS_BR_COND)
        hwp_pm_branch(m->pm, (in->events & HWP_EV_TAKEN) != 0);
    /* The core (sampled mode) opens its timing window this many
     * instructions ahead of the next selection. */
    m->tm->want = hwp_pm_countdown(m->pm);
}

/* The fetch counter passes the block at once (sec. 4.1.1); a selected
 * instruction gets its own record, as hwp_pm_insn would give it. With the
 * core on, a block reaches here only without a selection in it
 * (hwx__core_block), and the core learns the new countdown. */
static void hwx__pm_block(void *sv, const hwx_block *b) {
    hwx__pm *m = (hwx__pm *)sv;
    hwp_pm *pm = m->pm;
    uint32_t rem = b->n, k, j;
    while (rem && (k = hwp_pm_fetch_block(pm, rem)) != 0) {
        uint32_t idx = b->n - rem + k - 1;
        hwp_insn in;
        if (idx + 1 == b->n) {
            in = *b->last;
        } else {
            hwp_zero(&in, sizeof in);
            in.pc = b->pcs[idx];
            in.next_pc = b->pcs[idx + 1];
            for (j = 0; j < b->nmem; j++)
                if (b->mem[j].pc == in.pc) in = b->mem[j];
        }
        hwp_pm_sample_insn(pm, &in, b->cycle + idx);
        rem -= k;
    }
    if (b->last->cls == HWP_CLS_BR_COND)
        hwp_pm_branch(pm, (b->last->events & HWP_EV_TAKEN) != 0);
    if (m->tm->on) m->tm->want = hwp_pm_countdown(pm);
}

static void hwx__pm_flush(void *sv) { hwp_pm_flush(((hwx__pm *)sv)->pm); }

static void hwx__pm_merge(void *dv, const void *sv) {
    hwp_pm_merge(((hwx__pm *)dv)->pm, ((const hwx__pm *)sv)->pm);
    hwp_pm_table_merge(((hwx__pm *)dv)->tab, ((const hwx__pm *)sv)->tab);
}

/* Records the table dropped for want of room (pm_table= raises it). */
static uint64_t hwx__pm_full(const hwp_pm_table *t) {
    hwp_pm_table_stats st;
    return hwp_pm_table_get_stats(t, &st) == HWP_OK ? st.full : 0;
}

/* The table's own report ranks by estimated total cost (latency, or
 * wasted issue slots when paired) and prints every estimate with its
 * sample count, "-" below the advised minimum. */
static void hwx__pm_text(const void *sv, const hwx_session *s, const hwp_writer *w) {
    const hwp_pm_table *t = ((const hwx__pm *)sv)->tab;
    uint64_t full = hwx__pm_full(t);
    hwp_put_str(w, "\n-- costliest instructions: ProfileMe samples (Dean et al., "
                   "MICRO-30 1997) --\n");
    hwp_pm_table_write_top(t, w, s->opts.top);
    if (full) {
        hwp_put_str(w, "  table full: ");
        hwp_put_u64(w, full);
        hwp_put_str(w, " records of PCs it could not hold were dropped");
        if (s->opts.exact) hwp_put_str(w, ", so the accuracy scores are left out");
        hwp_put_str(w, " (pm_table=N raises its capacity)\n");
    }
}

static void hwx__pm_json(const void *sv, const hwp_writer *w) {
    const hwx__pm *m = (const hwx__pm *)sv;
    hwp_put_str(w, ",\"profileme\":{\"sampler\":");
    hwp_pm_write_json(m->pm, w);
    hwp_put_str(w, ",\"table\":");
    hwp_pm_table_write_json(m->tab, w);
    hwp_put_str(w, "}");
}

static uint64_t hwx__pm_truth(void *ctx, uint64_t pc) {
    return hwx__xtab_get(&((const hwx_session *)ctx)->exact->pc, pc, 0);
}

#define HWX__PM_TOP 20u

static double hwx__absd(double v) { return v < 0.0 ? -v : v; }

/* The exact top HWX__PM_TOP PCs by total latency (descending) into
 * pcs[]; returns how many, and in *timed the executions with a timing. */
static uint32_t hwx__pm_exact_top(const hwx_xtab *tm, uint64_t *pcs,
                                  uint64_t *timed) {
    uint64_t lat[HWX__PM_TOP], i;
    uint32_t have = 0, j;
    *timed = 0;
    for (i = 0; i <= tm->mask; i++) {
        const hwx_xent *e = &tm->e[i];
        if (!e->count || e->k2 != HWX_TM_LATENCY) continue;
        *timed += e->count;
        if (have == HWX__PM_TOP && e->aux <= lat[HWX__PM_TOP - 1]) continue;
        j = have < HWX__PM_TOP ? have++ : HWX__PM_TOP - 1;
        for (; j > 0 && lat[j - 1] < e->aux; j--) {
            lat[j] = lat[j - 1];
            pcs[j] = pcs[j - 1];
        }
        lat[j] = e->aux;
        pcs[j] = e->k1;
    }
    return have;
}

/* The estimator's total latency is the fetch -> retire-ready span the
 * exact table sums (hwp_pm_latency_total, core.h's ready - fetch), so
 * both sides measure the same cycles; the envelope is Fig. 3's on
 * E[k] = N / S, as hwp_pm_accuracy puts it. */
void hwx__pm_score(const hwp_pm_table *t, const hwx_exact *x, double min_ek,
                   bool paired, hwx_metric out[4]) {
    const double S = hwp_pm_table_interval(t);
    uint64_t top[HWX__PM_TOP], timed, i, pcs = 0, inside = 0;
    hwp_pm_row rows[HWX__PM_TOP];
    double err = 0.0, esum = 0.0, wsum = 0.0;
    uint32_t ntop, nest, a, b, hits = 0;
    hwp_zero(out, 4 * sizeof *out);
    ntop = hwx__pm_exact_top(&x->tm, top, &timed);
    /* Scores need every execution timed (full timing) and nothing lost on
     * either side: a PC whose samples a full table dropped would score
     * as an estimate of 0. */
    if (!ntop || x->tm.dropped || x->pc.dropped || timed != x->pc.total || S <= 0.0 ||
        hwx__pm_full(t))
        return;
    for (i = 0; i <= x->pc.mask; i++) {
        const hwx_xent *p = &x->pc.e[i], *l, *w;
        const hwp_pm_entry *e;
        double ek = (double)p->count / S, est;
        if (!p->count || ek < min_ek) continue;
        l = hwx__xtab_find(&x->tm, p->k1, HWX_TM_LATENCY);
        w = hwx__xtab_find(&x->tm, p->k1, HWX_TM_WASTED);
        if (!l || !l->aux) continue;
        e = hwp_pm_table_find(t, p->k1); /* NULL: never sampled, estimate 0 */
        est = hwp_pm_latency_total(t, e, 0.0).value;
        pcs++;
        inside += hwx__absd(est / (double)l->aux - 1.0) <= 1.0 / hwp_sqrt(ek);
        if (w) {
            /* The paper's U_I counts partners, never I itself; core.h
             * counts I's own issue as a used slot of its interval (it
             * always issues inside it), one per execution: add it back
             * so both sides define wasted slots alike. */
            double truth = (double)w->aux + (double)w->count;
            est = hwp_pm_wasted_slots(t, e);
            err += hwx__absd(est - truth);
            esum += est;
            wsum += truth;
        }
    }
    if (pcs) {
        out[0].valid = 1;
        out[0].n = (uint32_t)pcs;
        out[0].value = (double)inside / (double)pcs;
    }
    if (paired && pcs && wsum > 0.0) {
        out[1].valid = 1;
        out[1].n = (uint32_t)pcs;
        out[1].value = err / wsum;
        /* the bias apart from the noise: sum est / sum exact */
        out[2] = out[1];
        out[2].value = esum / wsum;
    }
    nest = (uint32_t)hwp_pm_table_rank(t, HWP_PM_RANK_LATENCY, 1.96, rows, HWX__PM_TOP);
    if (nest > HWX__PM_TOP) nest = HWX__PM_TOP;
    for (a = 0; a < ntop; a++)
        for (b = 0; b < nest; b++)
            hits += rows[b].pc == top[a];
    out[3].valid = 1;
    out[3].n = ntop;
    out[3].value = (double)hits / (double)ntop;
}

static void hwx__pm_eval(void *sv, const hwx_session *s, unsigned char *scratch,
                         hwx_metric *out) {
    hwp_pm_acc pa;
    const hwx__pm *m = (const hwx__pm *)sv;
    const hwp_pm_table *t = m->tab;
    const double min_ek = (double)hwp_pm_table_min_samples(t);
    (void)scratch;
    /* Over the PCs the table holds, a full table's count score would
     * leave out the PCs it dropped; no score rather than a biased one
     * (the report says why). */
    if (hwx__pm_full(t)) return;
    if (hwp_pm_accuracy(t, HWP_PM_PROP_RETIRED, hwx__pm_truth, (void *)(uintptr_t)s,
                        min_ek, &pa) == HWP_OK &&
        pa.pcs) {
        out[0].valid = 1;
        out[0].n = (uint32_t)pa.pcs;
        out[0].value = pa.in_envelope;
    }
    hwx__pm_score(t, s->exact, min_ek, m->paired != 0, out + 1);
}

/* Event-free instructions pass the fetch counter in bulk; the host stops
 * before the one the countdown selects (hwx__pm_until), so no selection
 * falls inside. */
static void hwx__pm_skip(void *sv, uint64_t n) {
    hwp_pm *pm = ((hwx__pm *)sv)->pm;
    for (; n > UINT32_MAX; n -= UINT32_MAX) hwp_pm_fetch_block(pm, UINT32_MAX);
    hwp_pm_fetch_block(pm, (uint32_t)n);
}

static uint64_t hwx__pm_until(const void *sv) {
    return hwp_pm_countdown(((const hwx__pm *)sv)->pm);
}

static const hwx_metric_def hwx__pm_metrics[] = {
    {"pm_envelope_frac", "  ProfileMe retire-count estimates inside 1 +/- 1/sqrt(E[k]) "
                         "(Dean et al. 5.1, E[k] >= 10): ", 3, ""},
    {"pm_latency_envelope_frac", "  ProfileMe total-latency (fetch -> retire-ready) "
                                 "estimates inside 1 +/- 1/sqrt(E[k]) (core=on): ", 3, ""},
    {"pm_wasted_err", "  ProfileMe wasted issue slots, weighted error against the core "
                      "(5.2.3, paired, E[k] >= 10): ", 3, ""},
    {"pm_wasted_ratio", "  ProfileMe wasted issue slots, sum of estimates / exact sum "
                        "(same PCs): ", 3, ""},
    {"pm_top20_latency_overlap", "  ProfileMe top-20 PCs by total latency, overlap "
                                 "with the exact top-20 (core=on): ", 3, ""},
};

/* Counters over time (timeline=N), cumulative. */
static const char *const hwx__pm_counter_names[] = {"selected", "interrupts", "delivered", NULL};
static void hwx__pm_counters(const void *sv, uint64_t *out) {
    const hwx__pm *m = (const hwx__pm *)sv;
    hwp_pm_stats st;
    hwp_zero(&st, sizeof st);
    hwp_pm_get_stats(m->pm, &st);
    out[0] = st.selected;
    out[1] = st.interrupts;
    out[2] = st.delivered;
}

const hwx_adapter hwx__adapter_pm = {
    .name = "pm",
    .alias = "profileme",
    .model = HWP_MODEL_PROFILEME,
    .params = "table (capacity), "
              "or any member of its desc by the name the report gives it (docs/profileme.md)",
    .parts = {{hwp_pm_desc_fields, offsetof(hwx__pmd, p)},
              {hwp_pm_table_desc_fields, offsetof(hwx__pmd, t)}},
    .desc_size = sizeof(hwx__pmd),
    .state_size = sizeof(hwx__pm),
    .metrics = hwx__pm_metrics,
    .nmetrics = HWX_COUNT(hwx__pm_metrics),
    .defaults = hwx__pm_defaults,
    .set = hwx__pm_set,
    .wants = hwx__pm_wants,
    .bytes = hwx__pm_bytes,
    .init = hwx__pm_init,
    .insn = hwx__pm_insn,
    .block = hwx__pm_block,
    .flush = hwx__pm_flush,
    .merge = hwx__pm_merge,
    .report_text = hwx__pm_text,
    .report_json = hwx__pm_json,
    .evaluate = hwx__pm_eval,
    .skip = hwx__pm_skip,
    .until = hwx__pm_until,
    .counter_names = hwx__pm_counter_names,
    .counters = hwx__pm_counters,
};
