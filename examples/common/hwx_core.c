/* examples/common/hwx_core.c: the processor core (hwprof/core.h) as a
 * session adapter. It is registered first, so every instruction is timed
 * before the profilers see it: it publishes the instruction's stage
 * cycles, miss and mispredict bits and the modelled clock in the
 * session's hwx_timing, which the session hands on as the later
 * adapters' cycle and ProfileMe reads for its selected instructions.
 *
 * Opt-in (core=on, or models=...+core; models=all leaves it off): full
 * timing costs the host hundreds of instructions per guest instruction.
 * The core's own cost goes to no hwp_cost: the session's cost clock stays
 * the instruction count, so the profilers' overhead percentages keep
 * their meaning (overhead per retired instruction). */
#include "hwx_int.h"

typedef struct hwx__cored {
    hwp_core_desc c;
} hwx__cored;

/* Data addresses a block run takes (hwx__core_block); a block with more
 * memory instructions goes one instruction at a time. */
#define HWX__CORE_ADDRS 512u

typedef struct hwx__core {
    hwp_core *core;
    hwx_timing *tm;
    uint32_t lead; /* sampled mode: instructions timed before a selection */
    uint32_t pad_;
    uint64_t addr[HWX__CORE_ADDRS]; /* a block run's data addresses      */
} hwx__core;

static void hwx__core_defaults(void *dv, const hwx_opts *o) {
    (void)dv;
    (void)o;
}

static hwp_status hwx__core_set(void *dv, const char *k, const char *opt,
                                const char *v, const char **why) {
    static const char *const modes[] = {"full", "caches", "sampled", NULL};
    static const uint32_t modev[] = {HWP_CORE_TIMING, HWP_CORE_CACHES, HWP_CORE_SAMPLED};
    hwp_core_desc *d = &((hwx__cored *)dv)->c;
    if (hwx_streq(k, "mode")) return hwx__enum(opt, v, modes, modev, &d->mode, why);
    if (hwx_streq(k, "l1d_sets")) return hwx__u32(opt, v, &d->l1d.sets, why);
    if (hwx_streq(k, "l1d_ways")) return hwx__u32(opt, v, &d->l1d.ways, why);
    if (hwx_streq(k, "l1d_line")) return hwx__u32(opt, v, &d->l1d.line, why);
    if (hwx_streq(k, "l2_sets")) return hwx__u32(opt, v, &d->l2.sets, why);
    if (hwx_streq(k, "l2_ways")) return hwx__u32(opt, v, &d->l2.ways, why);
    return hwx__unknown(why);
}

/* Loads and stores with their addresses: the D-cache and DTLB. */
static uint32_t hwx__core_wants(const hwx_opts *o) {
    (void)o;
    return HWX_WANT_MEMORY;
}

static size_t hwx__core_bytes(const void *dv, const hwx_opts *o, const char **why) {
    const hwx__cored *d = (const hwx__cored *)dv;
    size_t a = hwp_core_bytes(&d->c);
    (void)o;
    if (!a) {
        HWX__WHY(hwp_core, hwp_core_init(&x_, m_, 0, &d->c, NULL), why);
        return 0;
    }
    return hwp_align(sizeof(hwp_core)) + hwp_align(a);
}

static hwp_status hwx__core_init(void *sv, void *dv, unsigned char **cur,
                                 hwx_session *s) {
    hwx__core *m = (hwx__core *)sv;
    const hwx__cored *d = (const hwx__cored *)dv;
    size_t k = hwp_core_bytes(&d->c);
    m->core = (hwp_core *)hwp_carve(cur, sizeof(hwp_core));
    if (hwp_core_init(m->core, hwp_carve(cur, k), k, &d->c, NULL) != HWP_OK)
        return hwp_fail(&s->head, HWP_EINVAL, hwp_why(m->core));
    /* A window opens a ROB's worth of instructions before a selection,
     * enough to fill the pipeline (core.h, hwp_core_window). */
    m->lead = d->c.rob ? d->c.rob : 80u;
    m->tm = &s->timing;
    hwp_zero(m->tm, sizeof *m->tm);
    m->tm->on = 1;
    return HWP_OK;
}

static void hwx__core_insn(void *sv, const hwp_insn *in, uint64_t cycle) {
    hwx__core *m = (hwx__core *)sv;
    hwx_timing *t = m->tm;
    hwp_core_out o;
    (void)cycle;
    if (t->want && t->want <= m->lead) hwp_core_window(m->core, t->want);
    hwp_core_insn_ex(m->core, in, t->ops, &o);
    t->cycle = o.cycle;
    t->events = o.events;
    t->timed = o.timed;
    if (o.timed) {
        t->fetch = o.fetch;
        t->map = o.map;
        t->data_ready = o.data_ready;
        t->issue = o.issue;
        t->ready = o.ready;
        t->retire = o.retire;
    }
}

bool hwx_core_last(const hwx_session *s, uint64_t *cycle, uint32_t *events) {
    bool on = s->timing.on != 0;
    *cycle = on ? s->timing.cycle : 0;
    *events = on ? s->timing.events : 0;
    return on;
}

void hwx_core_regs(hwx_session *s, const hwp_core_ops *ops, const char *from) {
    s->timing.ops = ops;
    s->timing.regs_from = from;
}

/* The session's core adapter, NULL when the core is off. */
static hwx__core *hwx__core_of(const hwx_session *s) {
    uint32_t i;
    for (i = 0; i < hwx__nadapters; i++)
        if (hwx__registry[i] == &hwx__adapter_core) return (hwx__core *)s->st[i];
    return NULL;
}

size_t hwx__core_done(hwx_session *s, hwp_core_rec *out, size_t cap) {
    hwx__core *m = hwx__core_of(s);
    size_t n;
    if (!m) return 0;
    /* hwp_core_done returns how many were waiting, not copied */
    n = hwp_core_done(m->core, out, cap);
    return n < cap ? n : cap;
}

hwp_core_block *hwx_core_block_init(const hwx_session *s, void *mem, size_t bytes,
                                    uint64_t pc, const uint8_t *cls,
                                    const hwp_core_ops *ops, uint32_t n) {
    const hwx__core *m = s ? hwx__core_of(s) : NULL;
    return m ? hwp_core_block_init(m->core, mem, bytes, pc, cls, ops, n) : NULL;
}

void hwx_core_block(hwx_session *s, const hwp_core_block *blk, const hwp_core_ops *ops) {
    s->timing.blk = blk;
    s->timing.blk_ops = ops;
}

/* The session's block through the core in one hwp_core_run (its data
 * addresses in order: the other memory records', then the last one's if
 * it is a load or store). false, with nothing run, when the block must
 * go one instruction at a time: no translation named, or a ProfileMe
 * window that would open inside the block (hwx__core_insn opens it lead
 * instructions before the selection; the pipeline then times
 * instructions whose stage cycles ProfileMe reads one by one). */
bool hwx__core_block(hwx_session *s, const hwx_block *b) {
    hwx__core *m = hwx__core_of(s);
    hwx_timing *t = &s->timing;
    const hwp_core_block *blk = t->blk;
    hwp_core_exec x;
    uint32_t j, k = b->nmem;
    t->blk = NULL; /* one block each naming */
    if (!blk || (t->want && t->want < (uint64_t)m->lead + b->n) ||
        k >= HWX__CORE_ADDRS)
        return false;
    for (j = 0; j < k; j++) m->addr[j] = b->mem[j].addr;
    if (b->last->cls == HWP_CLS_LOAD || b->last->cls == HWP_CLS_STORE)
        m->addr[k] = b->last->addr;
    x.addr = m->addr;
    x.next_pc = b->last->next_pc;
    x.events = b->last->events & (HWP_EV_TAKEN | HWP_EV_TRAP | HWP_EV_INDIRECT);
    x.win_at = 0;
    x.win_n = 0;
    t->events = hwp_core_run(m->core, blk, &x, NULL);
    t->cycle = hwp_core_cycle(m->core);
    t->timed = 0;
    return true;
}

/* Every instruction must come whole (the caches see each one): a VM host
 * may never pass instructions in bulk. */
static uint64_t hwx__core_until(const void *sv) {
    (void)sv;
    return 1;
}

static void hwx__core_flush(void *sv) { hwp_core_flush(((hwx__core *)sv)->core); }

static void hwx__core_merge(void *dv, const void *sv) {
    hwp_core_merge(((hwx__core *)dv)->core, ((const hwx__core *)sv)->core);
}

static void hwx__core_line(const hwp_writer *w, const char *label, uint64_t n,
                           uint64_t of) {
    hwx__kv(w, label, n);
    if (of) {
        hwp_put_str(w, " / ");
        hwp_put_u64(w, of);
        hwp_put_str(w, "  (");
        hwx__pct(w, (double)n, (double)of);
        hwp_put_str(w, ")");
    }
    hwp_put_str(w, "\n");
}

static void hwx__core_text(const void *sv, const hwx_session *s, const hwp_writer *w) {
    hwp_core_stats st;
    if (hwp_core_get_stats(((const hwx__core *)sv)->core, &st) != HWP_OK) return;
    hwp_put_str(w, "\n-- modelled core (hwprof/core.h; Alpha 21264 defaults) --\n");
    hwx__core_line(w, "  cycles              ", st.cycles, 0);
    hwx__core_line(w, "  timed instructions  ", st.timed, st.events);
    hwx__core_line(w, "  L1I misses          ", st.l1i_misses, st.l1i_refs);
    hwx__core_line(w, "  L1D read misses     ", st.l1d_read_misses, st.l1d_reads);
    hwx__core_line(w, "  L1D write misses    ", st.l1d_write_misses, st.l1d_writes);
    hwx__core_line(w, "  L2 misses           ",
                   st.l2_imisses + st.l2_rmisses + st.l2_wmisses,
                   st.l2_irefs + st.l2_rrefs + st.l2_wrefs);
    hwx__core_line(w, "  cond. mispredicts   ", st.cond_mispredicts, st.cond);
    /* Not a share of issue_slots: the in-progress intervals of different
     * instructions overlap, so their wasted slots may sum beyond it. */
    hwx__core_line(w, "  wasted issue slots  ", st.wasted_slots, 0);
    if (st.no_regs) {
        hwp_put_str(w, "  (no registers from this host: timing without dependences)\n");
    } else if (st.timed) {
        hwp_put_str(w, "  (registers from ");
        hwp_put_str(w, s->timing.regs_from ? s->timing.regs_from : "the host");
        hwp_put_str(w, ": timing with dependences)\n");
    }
}

static void hwx__core_json(const void *sv, const hwp_writer *w) {
    hwp_put_str(w, ",\"core\":");
    hwp_core_write_json(((const hwx__core *)sv)->core, w);
}

/* Counters over time (timeline=N), cumulative. */
static const char *const hwx__core_counter_names[] = {"cycles", "cond_mispredicts", "llc_misses", NULL};
static void hwx__core_counters(const void *sv, uint64_t *out) {
    const hwx__core *m = (const hwx__core *)sv;
    hwp_core_stats st;
    hwp_zero(&st, sizeof st);
    hwp_core_get_stats(m->core, &st);
    out[0] = st.cycles;
    out[1] = st.cond_mispredicts;
    out[2] = st.llc_misses;
}

const hwx_adapter hwx__adapter_core = {
    .name = "core",
    .model = HWP_MODEL_CORE,
    .params = "mode (full, caches, sampled), l1d_sets, l1d_ways, l1d_line, l2_sets, l2_ways, "
              "or any member of its desc by the name the report gives it (docs/core.md)",
    .parts = {{hwp_core_desc_fields, offsetof(hwx__cored, c)}},
    .desc_size = sizeof(hwx__cored),
    .state_size = sizeof(hwx__core),
    .defaults = hwx__core_defaults,
    .set = hwx__core_set,
    .wants = hwx__core_wants,
    .bytes = hwx__core_bytes,
    .init = hwx__core_init,
    .insn = hwx__core_insn,
    .flush = hwx__core_flush,
    .merge = hwx__core_merge,
    .report_text = hwx__core_text,
    .report_json = hwx__core_json,
    .until = hwx__core_until,
    .counter_names = hwx__core_counter_names,
    .counters = hwx__core_counters,
};
