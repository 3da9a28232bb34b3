/* minivm/prof.h: how a bytecode interpreter feeds hwprof.
 *
 * This is the file a VM author copies. The interpreter fills one hwp_insn
 * for every load, store, branch, call and return (mv_vm.c) and calls
 * mvp_event() with it; the bytecodes in between are counted from the PCs,
 * and their cycles come from the VM's own per-opcode cost model. The event
 * goes to each enabled model:
 *
 *   ProfileMe    every bytecode is a "fetch"; the countdown selects one now
 *                and then, and the cold path reports its pipeline stages
 *                from the cycle model (latency registers) and retires it
 *   path prof.   every branch, call and return (bytecode PCs as addresses)
 *   RAP          one tree over bytecode PCs, one over heap addresses
 *                (offsets into the code and heap segments)
 *   stratified   tuples <load pc, loaded value>, <call pc, callee> and
 *                <method-call pc, receiver type>, one compressor, three kinds
 *   co-processor load-value profiling on every load
 *
 * and what the modelled hardware costs reaches the VM's virtual cycle
 * counter through the cost shim (hwp_cost_take / hwp_cost_tick, batched:
 * mvp_sync).
 *
 * Adding a model is one struct member, a few lines in mvp_init and
 * mvp_block or mvp_access, and its summary in prof.c.
 */
#ifndef MINIVM_PROF_H
#define MINIVM_PROF_H

#include "hwprof/base.h"
#include "hwprof/cost.h"
#include "hwprof/profileme.h"
#include "hwprof/stratified.h"
#include "hwprof/rap.h"
#include "hwprof/pathprof.h"
#include "hwprof/coproc.h"

#include "exact.h"
#include "mv.h"
#include "tier.h"

enum {
    MVP_PROFILEME = 1u << 0,
    MVP_STRAT = 1u << 1,
    MVP_RAP = 1u << 2,
    MVP_PATH = 1u << 3,
    MVP_COPROC = 1u << 4,
    MVP_ALL = (1u << 5) - 1u
};

/* <method-call pc, receiver type>: a stratified profile kind of our own
 * next to the library's VALUE and CALL kinds. */
#define MVP_KIND_RECEIVER 3u

typedef struct mvp_opts {
    unsigned models;   /* MVP_* bits                                  */
    uint64_t seed;     /* every model's desc.seed                      */
    int exact;         /* also keep exact profiles                     */
    uint32_t pm_interval; /* ProfileMe S (mean bytecodes per sample)  */
    uint32_t heap_cells;  /* the VM's heap size, for RAP's domain      */
    uint64_t interval;    /* phase detection interval, bytecodes       */
    double phase_threshold; /* exact reference: Manhattan distance 0..2 */
} mvp_opts;

typedef struct mvp {
    unsigned on; /* models running: the ones asked for */
    int fanout;  /* a model other than ProfileMe, or --exact: mvp_event
                    calls mvp_block / mvp_access                          */
    int sampled; /* ProfileMe alone: the interpreter's sampling mode, with
                    the virtual clock estimated at each selection        */
    hwp_cost cost;
    hwp_pm pm;
    hwp_pm_table pm_tab; /* the DCPI-style software side: per-PC samples */
    hwp_strat strat;
    hwp_strat_acc strat_acc; /* folds the compressor's messages */
    hwp_rap rap_code; /* bytecode PCs                  */
    hwp_rap rap_heap; /* heap addresses of loads/stores */
    hwp_path path;    /* path stack: BL paths (Table 1) */
    hwp_hpt hpt;      /* hot path table                 */
    hwp_phase phase;  /* path-based phase detector      */
    uint64_t *phase_changes; /* intervals the detector flagged */
    size_t nphase_changes, capphase_changes;
    hwp_cp cp;        /* running the load-value profiling program */
    mvx *exact; /* NULL unless --exact */
    /* The VM's counters, kept here because they advance at events:     */
    uint64_t next_pc; /* first bytecode of the run now executing       */
    uint64_t steps;   /* bytecodes executed                            */
    uint64_t pm_steps; /* steps at ProfileMe's last selection (sampled)  */
    uint64_t vclock;  /* virtual cycles: cost model + modelled stalls,
                         the stalls added at each mvp_sync              */
    uint64_t ticked;  /* vclock at the last mvp_sync                   */
    uint64_t *cum;    /* cum[i]: cycles of bytecodes 0..i-1            */
    uint64_t block_pc;     /* first bytecode of the basic block running */
    uint64_t block_steps;  /* steps when it began                       */
    uint64_t cp_steps;     /* steps at the co-processor's last load      */
    const mv_prog *prog;
    void *mem[16]; /* model storage, freed by mvp_free */
    unsigned nmem;
} mvp;

int mvp_init(mvp *p, const mvp_opts *o, const mv_prog *prog, char *err,
             size_t errcap);
void mvp_free(mvp *p);
/* Flush buffered samples and messages at the end of the run. */
void mvp_finish(mvp *p);
/* What the models measured, in the policy's terms. */
void mvp_summary(const mvp *p, mvt_profile *out);
void mvp_report(const mvp *p, FILE *f, int json);
/* RAP's hot code (as functions) and heap ranges, one line each. */
void mvp_print_regions(const mvp *p, FILE *f);

/* The out-of-line halves of mvp_event (prof.c): every model but
 * ProfileMe's countdown, at the end of a basic block (mvp_block) or at a
 * load or store (mvp_access); ProfileMe's selections in the run of n that
 * ends at `in`, the first its k-th bytecode. What the models charge
 * reaches the VM's clock at the next mvp_sync. */
void mvp_block(mvp *p, const hwp_insn *in, uint32_t n);
void mvp_access(mvp *p, const hwp_insn *in, uint32_t n);
void mvp_pm_select(mvp *p, const hwp_insn *in, uint32_t n, uint32_t k);
/* ProfileMe alone (p->sampled; the interpreter's sampling mode, mv_vm.c):
 * the VM keeps ProfileMe's countdown itself (from hwp_pm_countdown, one
 * down per bytecode) and the branch history register (from
 * hwp_pm_history), and looks at the countdown only at events.
 * When the selected bytecode is the event `r` (at bytecode index pc, run
 * continuing at next) or `back` bytecodes before it in the same run, the
 * VM calls mvp_pm_run with the event's record (class, address, value and
 * event bits; the PCs are filled in from pc and next) and its history,
 * and gets the bytecodes to count to the next selection after `r`.
 * mvp_pm_end settles the count left (`budget`: bytecodes still to go). */
uint64_t mvp_pm_run(mvp *p, hwp_insn *r, uint32_t pc, uint32_t next,
                    uint64_t history, uint32_t back);
void mvp_pm_end(mvp *p, uint64_t history, uint64_t budget);
/* Move the cost shim's clock by the VM's cycles since the last call and
 * add the stalls charged since to the VM's clock (vclock); the interpreter
 * calls it before reading vclock. */
void mvp_sync(mvp *p);

/* ---- the hot path: once per load, store, branch, call and return ------
 * `in` is the event bytecode's record. The bytecodes since the previous
 * event are straight-line code from that event's next_pc to in->pc (every
 * control transfer is an event), so their number and their cycles (a
 * prefix sum of the VM's per-opcode cost model) follow from the two PCs,
 * and models that want every bytecode get them as a count: ProfileMe's
 * countdown moves by the count and a sample that lands on an earlier
 * bytecode is rebuilt from its PC; RAP's code tree takes each basic block
 * as one weighted event keyed by its first PC; the path profiler takes a
 * block's length and the co-processor what retired since its last load
 * as instructions retired. The stall cycles the modelled hardware charges
 * through the cost shim are added to the VM's virtual clock at each
 * mvp_sync (ProfileMe's selections and the end of the run). */
static inline void mvp_event(mvp *p, const hwp_insn *in) {
    uint32_t e = MV_PC_INDEX(in->pc), s = MV_PC_INDEX(p->next_pc);
    uint32_t n = e - s + 1; /* the run s..e, this bytecode included */
    p->next_pc = in->next_pc;
    p->steps += n;
    p->vclock += p->cum[e + 1] - p->cum[s]; /* the run's cycles */
    if (p->on & MVP_PROFILEME) { /* inline: a subtract and a compare */
        uint32_t k = hwp_pm_fetch_block(&p->pm, n);
        if (HWP_UNLIKELY(k != 0)) mvp_pm_select(p, in, n, k);
        if (in->cls == HWP_CLS_BR_COND)
            hwp_pm_branch(&p->pm, (in->events & HWP_EV_TAKEN) != 0);
    }
    if (p->fanout) { /* in->cls is a constant where the VM inlines this */
        if (in->cls == HWP_CLS_LOAD || in->cls == HWP_CLS_STORE) mvp_access(p, in, n);
        else mvp_block(p, in, n);
    }
}

#endif
