/* minivm/prof.c: the cold half of the embedding (see prof.h): set the
 * models up on malloc'd storage, flush them at the end, and turn what they
 * measured into the tiering policy's profile summary. */
#define HWPROF_IMPL
#define HWPROF_STDIO
#include <stdlib.h>
#include <string.h>

#include "layer.h" /* vm.h's implementation too */
#include "prof.h"

/* main.c hands --prof's MVP_* bits to the layer as its HWP_VM_* bits. */
HWP_STATIC_ASSERT(mvp_bits_are_vm_bits,
                  (unsigned)MVP_PROFILEME == (unsigned)HWP_VM_PM &&
                      (unsigned)MVP_STRAT == (unsigned)HWP_VM_STRAT &&
                      (unsigned)MVP_RAP == (unsigned)HWP_VM_RAP &&
                      (unsigned)MVP_PATH == (unsigned)HWP_VM_PATH &&
                      (unsigned)MVP_COPROC == (unsigned)HWP_VM_CP);

static int mvp__fail(char *err, size_t cap, const char *model, const char *why) {
    snprintf(err, cap, "%s: %s", model, why && *why ? why : "cannot initialise");
    return -1;
}

/* Model storage: as many bytes as *_bytes() says (any alignment will do,
 * the count includes the padding). */
static void *mvp__storage(mvp *p, size_t bytes) {
    void *m;
    if (!bytes || p->nmem == sizeof p->mem / sizeof p->mem[0]) return NULL;
    m = calloc(1, bytes);
    if (!m) return NULL;
    p->mem[p->nmem++] = m;
    return m;
}

/* Every model is set up the same way: ask how much storage its desc needs,
 * hand it that much, and report hwp_why() if it refuses:
 *     n = hwp_X_bytes(&d);
 *     if (hwp_X_init(&x, storage(n), n, &d, &cost) != HWP_OK) fail(hwp_why(&x));
 * (the software-side tables take no cost). */
#define MVP__INIT(name, init, bytes, obj, ...)                              \
    do {                                                                    \
        size_t n_ = (bytes);                                                \
        if (init(obj, mvp__storage(p, n_), n_, __VA_ARGS__) != HWP_OK)      \
            return mvp__fail(err, errcap, name, hwp_why(obj));              \
    } while (0)

/* The cold half of ProfileMe for an interpreter. The selected bytecode is
 * the event `in` (back == 0) or an arithmetic/stack bytecode `back` places
 * before it in straight-line code, rebuilt from its PC (class OTHER, no
 * address). The VM's cycle model stands in for a pipeline: the bytecode
 * issues when fetched, a load's data arrives after the load's cycles, and
 * it is ready to retire, and retires, when its cycles are over. */
static void mvp__pm_sample(mvp *p, const hwp_insn *in, uint32_t back) {
    hwp_insn r = *in;
    uint32_t tag, cyc;
    uint64_t fetch, done;
    if (back) {
        r.pc = in->pc - 8u * (uint64_t)back;
        r.next_pc = r.pc + 8u;
        r.addr = r.value = 0;
        r.cls = HWP_CLS_OTHER;
        r.events = 0;
    }
    cyc = mv_op_cycles(p->prog->code[MV_PC_INDEX(r.pc)].op);
    fetch = hwp_cost_clock(&p->cost);
    done = fetch + cyc;
    tag = hwp_pm_tag(&p->pm, r.pc, fetch);
    if (!tag) return;
    hwp_pm_stage(&p->pm, tag, HWP_PM_ST_ISSUE, fetch);
    if (r.cls == HWP_CLS_LOAD) {
        hwp_pm_stage(&p->pm, tag, HWP_PM_ST_LOAD_ISSUE, fetch);
        hwp_pm_stage(&p->pm, tag, HWP_PM_ST_LOAD_DONE, done);
    }
    hwp_pm_stage(&p->pm, tag, HWP_PM_ST_RETIRE_READY, done);
    hwp_pm_note(&p->pm, tag, r.cls, r.addr, r.events);
    hwp_pm_retire(&p->pm, tag, done);
}

/* The phase detector closes an interval: keep the ones it calls changes. */
static void mvp__on_interval(void *ctx, const hwp_phase_interval *r) {
    mvp *p = (mvp *)ctx;
    if (!r->changed) return;
    if (p->nphase_changes == p->capphase_changes) {
        size_t cap = p->capphase_changes * 2 + 16;
        uint64_t *q = realloc(p->phase_changes, cap * sizeof *q);
        if (!q) return;
        p->phase_changes = q;
        p->capphase_changes = cap;
    }
    p->phase_changes[p->nphase_changes++] = r->index;
}

/* The VM's clock and the cost shim's meet: the shim's clock (the host's
 * own cycles) moves by the VM's cycles since the last meeting, and the
 * stalls the models charged since then are added to the VM's clock.
 * Charges only add up, so meeting where a clock is read (a ProfileMe
 * selection's timestamps, the end of the run) gives the totals that
 * meeting at every event would, without the per-event work. */
/* Key bits for a RAP domain holding offsets up to x, rounded up to even:
 * with b = 4 every level then takes 2 key bits, the shape of RAP's inline
 * walk (docs/rap.md, "Speed"), and the tree has as many levels as with
 * the odd width. */
static unsigned mvp__key_bits(uint64_t x) {
    return (hwp_log2(x) + 2u) & ~1u;
}

void mvp_sync(mvp *p) {
    hwp_cost_tick(&p->cost, p->vclock - p->ticked);
    p->vclock += hwp_cost_take(&p->cost);
    p->ticked = p->vclock;
}

void mvp_pm_select(mvp *p, const hwp_insn *in, uint32_t n, uint32_t k) {
    uint32_t left = n;
    do {
        left -= k; /* the k-th of what is left: `left` bytecodes before `in` */
        if (p->sampled) {
            /* No cycle model runs per bytecode in this mode (that cost
             * more than the sampling): the bytecodes since the previous
             * selection are charged the selected one's cycles each. The
             * selection is uniform over them, so this is ProfileMe's own
             * kS estimator applied to the cycle model: unbiased, and
             * within 4 % of the exact clock on every program here
             * (--stats with --exact runs the exact clock). */
            uint64_t at = p->steps - left;
            p->vclock += (at - p->pm_steps) *
                         mv_op_cycles(p->prog->code[MV_PC_INDEX(in->pc) - left].op);
            p->pm_steps = at;
        }
        mvp_sync(p);
        mvp__pm_sample(p, in, left);
    } while ((k = hwp_pm_fetch_block(&p->pm, left)) != 0);
}

/* ProfileMe alone (see prof.h): the bytecode `back` places before the
 * event `r` is the countdown-th since the previous selection (the model's
 * countdown last moved then), so the bytecodes since then, through `r`,
 * are countdown + back; select in them as mvp_event would. The loop's
 * count and history registers are the model's from here on. */
uint64_t mvp_pm_run(mvp *p, hwp_insn *r, uint32_t pc, uint32_t next,
                    uint64_t history, uint32_t back) {
    uint32_t n = (uint32_t)hwp_pm_countdown(&p->pm) + back;
    r->pc = MV_PC(pc);
    r->next_pc = MV_PC(next);
    p->steps += n;
    hwp_pm_set_history(&p->pm, history);
    mvp_pm_select(p, r, n, hwp_pm_fetch_block(&p->pm, n));
    return hwp_pm_countdown(&p->pm);
}

void mvp_pm_end(mvp *p, uint64_t history, uint64_t budget) {
    uint32_t n = (uint32_t)(hwp_pm_countdown(&p->pm) - budget);
    /* The bytecodes after the last selection, at the mean cycles per
     * bytecode so far (the code's static mean if nothing was selected). */
    double per = p->pm_steps ? (double)hwp_cost_clock(&p->cost) / (double)p->pm_steps
                             : (double)p->cum[p->prog->ncode] / (double)p->prog->ncode;
    p->steps += n;
    hwp_pm_set_history(&p->pm, history);
    p->vclock += (uint64_t)(per * (double)(p->steps - p->pm_steps) + 0.5);
    hwp_pm_fetch_block(&p->pm, n); /* fewer than the countdown: no selection */
}

/* A basic block ends at `in` (a branch, call or return; or halt): its
 * bytecodes run from block_pc to this one, the last n of them since the
 * previous event. The path profiler takes the block's length as the
 * instructions retired since the last branch; RAP's code tree counts the
 * block as one event keyed by its first PC, weighted by its length (loads
 * and stores inside do not split it); calls give the stratified
 * compressor their <pc, callee> and <pc, receiver type> tuples. */
void mvp_block(mvp *p, const hwp_insn *in, uint32_t n) {
    uint32_t len = (uint32_t)(p->steps - p->block_steps);
    if (p->on & MVP_PATH && in->cls != HWP_CLS_OTHER)
        hwp_path_branch(&p->path, in->pc, in->next_pc, in->cls,
                        (in->events & HWP_EV_TAKEN) != 0, len, 0);
    if (p->on & MVP_RAP) hwp_rap_add(&p->rap_code, p->block_pc, len);
    if (p->on & MVP_STRAT && in->cls == HWP_CLS_CALL) {
        hwp_strat_push(&p->strat, HWP_STRAT_KIND_CALL, in->pc, in->addr);
        if (in->value) /* a method call: value is the receiver type */
            hwp_strat_push(&p->strat, MVP_KIND_RECEIVER, in->pc, in->value);
    }
    p->block_pc = in->next_pc;
    p->block_steps = p->steps;
    if (p->exact) mvx_event(p->exact, in, n);
}

/* A load or store at `in`: RAP's heap tree takes its address (globals
 * live below the heap); a load goes to the co-processor, whose load-value
 * program's filter passes loads only, so everything retired since the
 * previous load is one tick, and to the stratified compressor as
 * <pc, loaded value>. */
void mvp_access(mvp *p, const hwp_insn *in, uint32_t n) {
    if (p->on & MVP_RAP && in->addr >= MV_HEAP_BASE)
        hwp_rap_add(&p->rap_heap, in->addr, 1);
    if (in->cls == HWP_CLS_LOAD) {
        if (p->on & MVP_COPROC) {
            hwp_cp_tick(&p->cp, p->steps - p->cp_steps - 1u);
            hwp_cp_insn(&p->cp, in);
            p->cp_steps = p->steps;
        }
        if (p->on & MVP_STRAT)
            hwp_strat_push(&p->strat, HWP_STRAT_KIND_VALUE, in->pc, in->value);
    }
    if (p->exact) mvx_event(p->exact, in, n);
}

int mvp_init(mvp *p, const mvp_opts *o, const mv_prog *prog, char *err,
             size_t errcap) {
    uint32_t i;
    memset(p, 0, sizeof *p);
    p->prog = prog;
    p->on = o->models & MVP_ALL;
    p->fanout = (p->on & ~(unsigned)MVP_PROFILEME) || o->exact;
    p->sampled = p->on == MVP_PROFILEME && !o->exact;
    p->next_pc = p->block_pc = MV_PC(prog->funcs[prog->main_fn].entry);
    p->cum = malloc(sizeof *p->cum * (prog->ncode + 1u));
    if (!p->cum) return mvp__fail(err, errcap, "minivm", "out of memory");
    p->cum[0] = 0;
    for (i = 0; i < prog->ncode; i++)
        p->cum[i + 1] = p->cum[i] + mv_op_cycles(prog->code[i].op);
    if (hwp_cost_init(&p->cost, NULL) != HWP_OK)
        return mvp__fail(err, errcap, "cost", hwp_why(&p->cost));
    if (p->on & MVP_PROFILEME) {
        hwp_pm_desc d;
        hwp_pm_table_desc td;
        memset(&d, 0, sizeof d);
        memset(&td, 0, sizeof td);
        d.seed = o->seed;
        d.interval = o->pm_interval;
        d.buffer = 32; /* amortise the interrupt over 32 samples (4.3) */
        d.deliver = hwp_pm_table_deliver;
        d.user = &p->pm_tab;
        MVP__INIT("profileme", hwp_pm_init,
                  hwp_pm_bytes(&d), &p->pm, &d, &p->cost);
        hwp_pm_table_desc_for(&p->pm, &td); /* the sampler's S, W, pairing */
        MVP__INIT("profileme table", hwp_pm_table_init,
                  hwp_pm_table_bytes(&td), &p->pm_tab, &td, &p->cost);
    }
    if (p->on & MVP_STRAT) {
        hwp_strat_desc d;
        hwp_strat_acc_desc ad;
        memset(&d, 0, sizeof d);
        memset(&ad, 0, sizeof ad);
        d.seed = o->seed;
        /* H[P_32]_256 rather than the paper's H[P_256]_2048. Each periodic
         * counter starts at a random phase, so every event is sampled
         * with probability 1/rate and the counts are unbiased whatever
         * the sizes; what the sizes set is the noise. Our workloads run
         * 10^4..10^6 loads per site: at one in 256 a site of 10^4 loads
         * has about 40 samples, at one in 32 about 300; and strata x rate
         * events (512K at the paper's design point, sized for runs of
         * billions of loads) pass before every stratum has reported. */
        d.rate = 32;
        d.entries = 256;
        d.hash = HWP_STRAT_HASH_CHEAP; /* two multiplies, not 16 lookups */
        d.on_interrupt = hwp_strat_acc_handler;
        d.ctx = &p->strat_acc;
        ad.strata = d.entries; /* the library's estimator: stratum sizes */
        MVP__INIT("stratified accumulator", hwp_strat_acc_init,
                  hwp_strat_acc_bytes(&ad), &p->strat_acc, &ad, &p->cost);
        MVP__INIT("stratified", hwp_strat_init,
                  hwp_strat_bytes(&d), &p->strat, &d, &p->cost);
    }
    if (p->on & MVP_RAP) {
        /* b = 4, 512 nodes (8 KB) as in the paper, eps = 1% for the VM's
         * small programs. Each tree's domain is its segment, just wide
         * enough (the paper's R), so the tree is a few levels deep instead
         * of 32 for a 64-bit domain. The code tree keeps the paper's
         * 1K-entry stage 0: loops repeat the same runs; heap addresses
         * rarely repeat back to back, so that tree has none. */
        hwp_rap_desc d;
        memset(&d, 0, sizeof d);
        d.eps = 0.01;
        d.key_base = MV_CODE_BASE;
        d.key_bits = mvp__key_bits(8u * (uint64_t)prog->ncode);
        MVP__INIT("rap (code)", hwp_rap_init,
                  hwp_rap_bytes(&d), &p->rap_code, &d, &p->cost);
        d.key_base = MV_HEAP_BASE;
        d.key_bits = mvp__key_bits(16u * (uint64_t)o->heap_cells);
        d.buffer = HWP_RAP_BUFFER_NONE;
        MVP__INIT("rap (heap)", hwp_rap_init,
                  hwp_rap_bytes(&d), &p->rap_heap, &d, &p->cost);
    }
    if (p->on & MVP_PATH) {
        hwp_path_desc d;   /* zero: BL paths, 32 deep, 4-entry branch queue */
        hwp_hpt_desc hd;   /* zero: 512 entries, 4-way, LFU, plb index */
        hwp_phase_desc pd; /* zero: 32 accumulators, threshold 6/10 */
        memset(&d, 0, sizeof d);
        memset(&hd, 0, sizeof hd);
        memset(&pd, 0, sizeof pd);
        pd.interval = o->interval; /* bytecodes, not the paper's 10M insns */
        pd.on_interval = mvp__on_interval;
        pd.ctx = p;
        MVP__INIT("pathprof", hwp_path_init,
                  hwp_path_bytes(&d), &p->path, &d, &p->cost);
        MVP__INIT("pathprof hpt", hwp_hpt_init,
                  hwp_hpt_bytes(&hd), &p->hpt, &hd, &p->cost);
        MVP__INIT("pathprof phase", hwp_phase_init,
                  hwp_phase_bytes(&pd), &p->phase, &pd, &p->cost);
        hwp_path_attach(&p->path, &p->hpt, &p->phase);
        hwp_path_begin(&p->path, MV_PC(prog->funcs[prog->main_fn].entry));
    }
    if (p->on & MVP_COPROC) {
        hwp_cp_desc d; /* zero: 2 KB sample buffer, 256-entry CAM, ... */
        memset(&d, 0, sizeof d);
        d.seed = o->seed;
        MVP__INIT("coproc", hwp_cp_init,
                  hwp_cp_bytes(&d), &p->cp, &d, &p->cost);
        if (hwp_cp_lvp_start(&p->cp, NULL) != HWP_OK)
            return mvp__fail(err, errcap, "coproc lvp", hwp_why(&p->cp));
    }
    if (o->exact) {
        p->exact = malloc(sizeof *p->exact);
        if (!p->exact || mvx_init(p->exact, prog->ncode, o->interval,
                                      o->phase_threshold))
            return mvp__fail(err, errcap, "exact", "out of memory");
    }
    return 0;
}

void mvp_finish(mvp *p) {
    mvp_sync(p);
    if (p->on & MVP_PROFILEME) hwp_pm_flush(&p->pm);
    if (p->on & MVP_STRAT) hwp_strat_flush(&p->strat);
    if (p->on & MVP_RAP) {
        hwp_rap_flush(&p->rap_code);
        hwp_rap_flush(&p->rap_heap);
    }
    if (p->on & MVP_COPROC) {
        hwp_cp_tick(&p->cp, p->steps - p->cp_steps); /* since the last load */
        hwp_cp_flush(&p->cp);
    }
    /* Paths still on the stack at exit are not complete: not counted. The
     * final flushes' stalls come after the program: the clock is done. */
}

void mvp_free(mvp *p) {
    unsigned i;
    for (i = 0; i < p->nmem; i++) free(p->mem[i]);
    free(p->cum);
    free(p->phase_changes);
    if (p->exact) {
        mvx_free(p->exact);
        free(p->exact);
    }
    memset(p, 0, sizeof *p);
}

void mvp_summary(const mvp *p, mvt_profile *out) {
    memset(out, 0, sizeof *out);
    if (p->on & MVP_STRAT) {
        mvx_tally t;
        hwp_strat_msg m;
        uint32_t cur = 0;
        mvx_tally_init(&t, p->prog);
        while (hwp_strat_acc_next(&p->strat_acc, &cur, &m)) {
            /* the library's estimate of the tuple's events (section 3.1) */
            uint64_t c = (uint64_t)(hwp_strat_acc_estimate(&p->strat_acc, m.kind, m.pc, m.w) + 0.5);
            if (m.kind == HWP_STRAT_KIND_VALUE) mvx_tally_load(&t, m.pc, m.w, c);
            else if (m.kind == HWP_STRAT_KIND_CALL) mvx_tally_target(&t, m.pc, m.w, c);
            else if (m.kind == MVP_KIND_RECEIVER) mvx_tally_type(&t, m.pc, m.w, c);
        }
        mvx_tally_finish(&t, out);
        out->have |= 1u << MVT_LOAD | 1u << MVT_INLINE;
    }
    if (p->on & MVP_PATH) {
        size_t n = 0, i, avail = hwp_hpt_export(&p->hpt, NULL, 0);
        hwp_hpt_stats hs;
        hwp_hpt_get_stats(&p->hpt, &hs);
        out->paths = calloc(avail + 1, sizeof *out->paths);
        out->phases = calloc(p->nphase_changes + 1, sizeof *out->phases);
        if (out->paths && out->phases) {
            hwp_path_row *rows = calloc(avail + 1, sizeof *rows);
            if (rows) n = hwp_hpt_export(&p->hpt, rows, avail);
            if (n > avail) n = avail;
            for (i = 0; i < n; i++) {
                out->paths[i].start = rows[i].pd.start;
                out->paths[i].id = rows[i].pd.shape;
                out->paths[i].count = rows[i].count;
            }
            free(rows);
            out->npaths = n;
            /* the share's denominator: every path the HPT was offered */
            out->path_total = hs.total;
            for (i = 0; i < p->nphase_changes; i++)
                out->phases[out->nphases++] = p->phase_changes[i];
            out->have |= 1u << MVT_TRACE | 1u << MVT_PHASE;
        }
    }
}

void mvp_print_regions(const mvp *p, FILE *f) {
    if (p->on & MVP_RAP) {
        hwp_rap_range r[16];
        hwp_rap_stats sc, sh;
        size_t n, i;
        hwp_rap_get_stats(&p->rap_code, &sc);
        hwp_rap_get_stats(&p->rap_heap, &sh);
        /* Hot ranges (Mysore et al., sec. 4.1) at 10% of the events: the
         * code a JIT should look at first, the heap a GC or prefetcher
         * should. */
        n = hwp_rap_hot(&p->rap_code, 0.10, r, 16);
        for (i = 0; i < n && i < 16; i++) {
            uint32_t lo = (uint32_t)((r[i].lo - MV_CODE_BASE) / 8u),
                     hi = (uint32_t)((r[i].hi - MV_CODE_BASE) / 8u);
            const mv_func *a, *b;
            if (hi >= p->prog->ncode) hi = p->prog->ncode - 1u;
            a = mv_func_at(p->prog, lo);
            b = mv_func_at(p->prog, hi);
            fprintf(f, "hwprof region code %s+%u .. %s+%u share %.3f\n",
                    a ? a->name : "?", a ? lo - a->entry : lo, b ? b->name : "?",
                    b ? hi - b->entry : hi, (double)r[i].excl / (double)sc.n);
        }
        n = hwp_rap_hot(&p->rap_heap, 0.10, r, 16);
        for (i = 0; i < n && i < 16 && sh.n; i++)
            fprintf(f, "hwprof region heap 0x%llx .. 0x%llx share %.3f\n",
                    (unsigned long long)r[i].lo, (unsigned long long)r[i].hi,
                    (double)r[i].excl / (double)sh.n);
    }
}

void mvp_report(const mvp *p, FILE *f, int json) {
    hwp_writer w = hwp_writer_stdio(f);
    const char *sep = "";
    hwp_put_str(&w, json ? "{" : "");
#define MVP__SECTION(name)                                          \
    do {                                                            \
        hwp_put_str(&w, json ? sep : "== " name " ==\n");           \
        if (json) {                                                 \
            hwp_put_json_str(&w, name);                             \
            hwp_put_str(&w, ":");                                   \
        }                                                           \
        sep = ",";                                                  \
    } while (0)
/* A section whose model has write_json / write_text(obj, w). */
#define MVP__PUT(name, model, obj)                                  \
    do {                                                            \
        MVP__SECTION(name);                                         \
        if (json) model##_write_json(obj, &w);                      \
        else model##_write_text(obj, &w);                           \
    } while (0)
    MVP__PUT("cost", hwp_cost, &p->cost);
    if (p->on & MVP_PROFILEME) {
        MVP__PUT("profileme", hwp_pm, &p->pm);
        MVP__SECTION("profileme_table");
        if (json) hwp_pm_table_write_json(&p->pm_tab, &w);
        else hwp_pm_table_write_top(&p->pm_tab, &w, 10); /* by total latency */
    }
    if (p->on & MVP_STRAT) {
        MVP__PUT("stratified", hwp_strat, &p->strat);
    }
    if (p->on & MVP_RAP) {
        MVP__PUT("rap_code", hwp_rap, &p->rap_code);
        MVP__PUT("rap_heap", hwp_rap, &p->rap_heap);
    }
    if (p->on & MVP_PATH) {
        MVP__PUT("pathprof", hwp_path, &p->path);
        MVP__PUT("hpt", hwp_hpt, &p->hpt);
        MVP__PUT("phase", hwp_phase, &p->phase);
    }
    if (p->on & MVP_COPROC) {
        MVP__PUT("coproc", hwp_cp, &p->cp);
    }
#undef MVP__PUT
#undef MVP__SECTION
    hwp_put_str(&w, json ? "}\n" : "");
}
