/* SPDX-License-Identifier: MIT */
/* hwprof/vm.h: the five models behind one VM-facing layer, sampled in
 * bursts, with decisions a JIT can act on.
 *
 * A language VM or JIT embeds every hwprof model through this one
 * component: one desc naming the models wanted, one storage block, one
 * clock (bytecodes retired), one callback for every decision and one
 * confidence convention (a 95% interval beside every estimate). The
 * interpreter calls a handful of tiny inline events; everything else is
 * out of line, so the dispatch loop keeps its registers.
 *
 * BURSTS (Arnold & Ryder, "A Framework for Reducing the Cost of
 * Instrumented Code", PLDI 2001; Hirzel & Chilimbi, "Bursty Tracing",
 * FDDO 2001). One countdown runs over the bytecodes. In the checking
 * phase it counts down a random gap of mean period - burst bytecodes; it
 * then opens a burst of `burst` bytecodes in which every event reaches
 * the models that need a contiguous stream: RAP's tree, the path stack
 * and hot path table, the stratified compressors and the co-processor's
 * filter. Counts are scaled by the measured ratio of all bytecodes to
 * bytecodes in bursts (a Horvitz-Thompson estimate, bursts being the
 * sampling unit); ratios (invariance, shares) need no scaling. ProfileMe
 * keeps its own countdown over every bytecode, as the paper's hardware
 * does, and folds into the same countdown: the inline event cannot tell
 * which of the two expired, only the cold path does.
 *
 * EVENTS (the VM calls hwp_vm_op once per bytecode it dispatches, then at
 * most one of the others for that bytecode once its outcome is known)
 *   hwp_vm_op(vm, pc)                 a bytecode dispatched: the clock
 *   hwp_vm_ops(vm, pc, n)             n straight-line bytecodes from pc
 *   hwp_vm_branch(vm, pc, taken)      a conditional branch
 *   hwp_vm_jump(vm, pc)               an unconditional jump (back edges)
 *   hwp_vm_call(vm, pc, fn)           a call of function id fn < funcs
 *   hwp_vm_ret(vm, pc)                a return
 *   hwp_vm_load(vm, site, value, type) a load or operand at site < sites
 * The op events cost a decrement and a predictable branch; the others a
 * load and a predictable branch (a flag set only inside bursts). Where a
 * transfer went is the pc of the next op, so no event carries a target.
 * An interpreter that keeps the countdown in a local (a register):
 *   int64_t left = hwp_vm_left(vm);
 *   ... per bytecode:  if (HWP_UNLIKELY(--left <= 0)) left = hwp_vm_expire(vm, pc, left);
 *   ... a run of n:    if (HWP_UNLIKELY((left -= n) <= 0)) left = hwp_vm_expire_n(vm, pc, left, n);
 *   ... before anything that may run another hwp_vm call (a call out, a
 *       nested interpreter, an annotation event):  hwp_vm_set_left(vm, left);
 *   ... and after it:  left = hwp_vm_left(vm);
 *   ... and, to skip the annotation events' flag load:
 *       if (HWP_UNLIKELY(hwp_vm_watching(left))) hwp_vm_branch(...);
 *   ... or, for a host that keeps its own event flags: hwp_vm_watched(vm)
 * A zeroed hwp_vm is "off": its events do nothing after the first op
 * (which arms a countdown that never expires), so a VM may compile the
 * layer in and initialise it only when asked to profile.
 *
 * DECISIONS (hwp_vm_decision, streamed to desc.on_decision as they are
 * taken, at the end of bursts; also pulled with hwp_vm_func, hwp_vm_loop
 * and hwp_vm_site)
 *   HWP_VM_FUNC   compile function `id`: its calls reach desc.hot_calls
 *   HWP_VM_LOOP   compile the loop headed at pc `id`: back edges reach
 *                 desc.hot_loops
 *   HWP_VM_HOTPATH lay out path `what` (a hwp_path_pd shape) from `id`, the
 *                 hottest path the hot path table holds at a hot unit
 *   HWP_VM_VALUE  site `id`: specialise on value `what`, or not
 *   HWP_VM_TYPE   site `id`: specialise on type tag `what`, or not
 *   HWP_VM_PHASE  the path-based phase detector saw a phase change
 * Every decision has a verdict: HWP_VM_YES (act), HWP_VM_NO (confidently
 * not: a site whose top value's interval lies below desc.spec_inv) or
 * HWP_VM_UNSURE (not enough evidence yet; pulled queries only), with the
 * estimate, its 95% interval and the samples behind it. A streamed
 * decision is taken once and never taken back, as compiled code is not.
 * Counts (FUNC, LOOP, HOTPATH) are estimates of the whole run so far; their
 * interval is the burst-cluster variance (docs/vm.md, "Bursts"). Invariance
 * (VALUE, TYPE) is a share in [0, 1] with Wilson's interval over the
 * model's samples (the stratified accumulator if on, else the
 * co-processor's load-value profile; TYPE needs the stratified model).
 *
 * API (hot paths static inline; the rest needs HWPROF_IMPL)
 *   hwp_vm_bytes(d)  hwp_vm_init(vm, storage, bytes, d, cost)
 *   hwp_vm_flush(vm)         end of run: close the burst, flush the models,
 *                            take the last decisions
 *   hwp_vm_reset(vm)  hwp_vm_get_stats(vm, out)  hwp_vm_get_desc(vm, out)
 *   hwp_vm_merge(dst, src)   fold another thread's layer in (same desc but
 *                            the seed; call hwp_vm_flush on both first)
 *   hwp_vm_func(vm, fn, out)  hwp_vm_loop(vm, pc, out)
 *   hwp_vm_site(vm, site, kind, out)   pull a decision
 *   hwp_vm_clock(vm)         bytecodes retired
 *   hwp_vm_scale(vm)         bytecodes per bytecode seen in a burst
 *   hwp_vm_write_json(vm, w)  hwp_vm_write_text(vm, w)
 *   hwp_vm_read_desc(d, json, n, err)  hwp_vm_read_json(vm, json, n, err)
 *   hwp_vm_pm / _pm_table / _strat / _strat_acc / _rap / _path / _hpt /
 *   _phase / _cp (vm)        the models themselves, for their own queries
 *                            and reports (NULL when not enabled)
 *
 * BAD INPUT
 *   hwp_vm_init refuses (HWP_EINVAL with a reason naming the field and
 *   its range) a desc with no model or an unknown bit, funcs or sites of
 *   0 or above 2^24, a burst of 0 or above its period, thresholds out of
 *   range, and whatever a model's own init refuses ("vm: rap: ...").
 *   An event naming a function or site past the declared range, seen in
 *   a burst or by a sample, is dropped whole, counted in stats.rejected,
 *   and hwp_why says which. hwp_vm_bytes answers 0 for a bad desc;
 *   hwp_vm_init(vm, NULL, 0, d, NULL) then gives the reason.
 *
 * THE CALLBACK runs inside an event (the op that closed a burst): queue
 * what it decides, and make no hwp_vm call on the same layer from it.
 *
 * COST
 *   The layer ticks the cost shim's clock with desc.op_cycles per
 *   bytecode in its cold path and hands the cost to every model, which
 *   charges what its hardware would have cost; the host reads the stalls
 *   with hwp_cost_take. docs/vm.md is the guide.
 */
#ifndef HWPROF_VM_H
#define HWPROF_VM_H

#include "base.h"
#include "cost.h"
#include "profileme.h"
#include "stratified.h"
#include "rap.h"
#include "pathprof.h"
#include "coproc.h"

#ifdef __cplusplus
extern "C" {
#endif

/* desc.models bits. */
enum {
    HWP_VM_PM = 1u << 0,    /* ProfileMe + its per-PC table              */
    HWP_VM_STRAT = 1u << 1, /* stratified compressor + accumulator        */
    HWP_VM_RAP = 1u << 2,   /* RAP over bytecode PCs (basic blocks)       */
    HWP_VM_PATH = 1u << 3,  /* path stack + hot path table + phases       */
    HWP_VM_CP = 1u << 4,    /* co-processor running load-value profiling  */
    HWP_VM_ALL = (1u << 5) - 1u
};

/* The stratified kinds the layer pushes: loaded values, type tags. */
#define HWP_VM_STRAT_KIND_TYPE 3u

typedef enum hwp_vm_kind {
    HWP_VM_FUNC = 1,
    HWP_VM_LOOP = 2,
    HWP_VM_HOTPATH = 3,
    HWP_VM_VALUE = 4,
    HWP_VM_TYPE = 5,
    HWP_VM_PHASE = 6
} hwp_vm_kind;

typedef enum hwp_vm_verdict {
    HWP_VM_UNSURE = 0,
    HWP_VM_YES = 1,
    HWP_VM_NO = 2
} hwp_vm_verdict;

typedef struct hwp_vm_decision {
    uint32_t kind;      /* hwp_vm_kind                                    */
    uint32_t verdict;   /* hwp_vm_verdict                                 */
    uint64_t id;        /* function id, loop header pc, path start pc,
                           site id, or phase interval index               */
    uint64_t what;      /* value or type tag; path shape; phase id        */
    double est, lo, hi; /* estimate and its 95% interval                  */
    uint64_t samples;   /* observations behind the estimate               */
    uint64_t clock;     /* bytecodes retired when it was taken            */
} hwp_vm_decision;

typedef void (*hwp_vm_decide_fn)(void *user, const hwp_vm_decision *d);

typedef struct hwp_vm_desc {
    uint32_t models;   /* HWP_VM_* bits, at least one                     */
    uint32_t funcs;    /* function ids 0..funcs-1, 1..2^24                */
    uint32_t sites;    /* load/operand site ids 0..sites-1, 1..2^24       */
    uint32_t loops;    /* loop-header slots, power of two 16..2^20; 0->256 */
    uint32_t period;   /* mean bytecodes from one burst to the next,
                          2..2^30; 0 -> 32768                             */
    uint32_t burst;    /* bytecodes per burst, 1..period; 0 -> 512        */
    uint32_t pc_step;  /* bytes between consecutive bytecodes (where
                          hwp_vm_ops' k-th bytecode is); 0 -> 1           */
    uint32_t op_cycles;/* cost-shim cycles per bytecode; 0 -> 1           */
    uint64_t hot_calls;/* a function is hot at this many calls; 0 -> 1000 */
    uint64_t hot_loops;/* a loop is hot at this many back edges;
                          0 -> 10000                                     */
    double spec_inv;   /* specialise at this invariance, (0, 1); 0 -> 0.9 */
    uint32_t min_samples; /* fewest samples behind a site verdict; 0 -> 30 */
    uint32_t hpt_plain; /* 1: hpt.policy 0 is the paper's plain LFU table;
                          0: it is the layer's, decay (docs/vm.md,
                          "Options")                                      */
    uint64_t seed;     /* the burst gaps: give each thread's layer its own
                          so their bursts are independent draws; the
                          models keep their descs' seeds, which a merge
                          needs equal                                     */
    hwp_vm_decide_fn on_decision; /* NULL: decisions are only pulled      */
    void *user;
    /* Each model's own desc; zero is its paper's default except where
     * the layer's defaults say (docs/vm.md, "Options"). The layer owns
     * the callbacks (deliver, on_interrupt, on_interval): leave them 0. */
    hwp_pm_desc pm;
    hwp_strat_desc strat;
    hwp_strat_acc_desc strat_acc;
    hwp_rap_desc rap;
    hwp_path_desc path;
    hwp_hpt_desc hpt;
    hwp_phase_desc phase;
    hwp_cp_desc cp;
} hwp_vm_desc;

typedef struct hwp_vm_stats {
    uint64_t events;     /* bytecodes retired: the clock                  */
    uint64_t dropped;    /* rejected + loop headers that found their
                            probe run full                                */
    uint64_t evicted;    /* 0: the layer replaces nothing                 */
    uint64_t cycles;     /* 0: the models charge the cost shim themselves */
    uint64_t burst_ops;  /* bytecodes inside bursts                       */
    uint64_t bursts;     /* bursts closed                                 */
    uint64_t annotated;  /* branch/jump/call/ret/load events in bursts    */
    uint64_t rejected;   /* events naming an id past the declared range   */
    uint64_t decisions;  /* decisions streamed                            */
    uint64_t samples;    /* ProfileMe selections                          */
} hwp_vm_stats;

/* A burst-sampled count: events seen in bursts and the sum over bursts of
 * the square of each burst's events (its cluster variance). */
typedef struct hwp__vm_tally {
    uint64_t k, k2;
    uint32_t cur; /* events in burst `at` (not yet in k2)               */
    uint32_t at;  /* burst number of cur; 0 = none                      */
} hwp__vm_tally;

typedef struct hwp__vm_unit { /* a function or a loop header */
    uint64_t pc;     /* loop: header pc + 1 (0 = free); function: entry
                        pc + 1 once a burst saw it                        */
    hwp__vm_tally n;  /* calls or back edges                             */
    uint64_t state;  /* HWP__VM_DECIDED, HWP__VM_PATHED bits              */
} hwp__vm_unit;

typedef struct hwp__vm_pending { /* the transfer or sample awaiting its next op */
    uint64_t pc;
    uint32_t cls;    /* HWP_CLS_*; HWP_CLS_OTHER = none pending           */
    uint32_t taken;
    uint32_t fn;
} hwp__vm_pending;

typedef struct hwp_vm {
    hwp_head head;     /* first, as in every handle                       */
    /* hot: the events read these (the same cache line as head)           */
    int64_t left;      /* bytecodes before the cold path must see one     */
    uint32_t watch;    /* annotation events wanted (a burst, or a sample
                          waiting for its class)                          */
    uint32_t mode;     /* HWP__VM_CHECK or HWP__VM_BURST                  */
    hwp_vm_desc desc;
    hwp_cost *cost;
    int64_t armed;     /* left when last armed                            */
    uint64_t gap;      /* bytecodes to the next burst (checking phase)    */
    uint64_t burst_left;
    uint64_t ticked;   /* clock at the last cost tick                     */
    hwp_rng rng;
    hwp_vm_stats st;
    /* inside a burst */
    hwp__vm_pending xfer;    /* a transfer waiting for its target         */
    hwp_insn sample;         /* ProfileMe's selection waiting for its class */
    uint64_t sample_at;      /* ... and the clock when it retired         */
    uint32_t sampling;       /* sample holds a selection                  */
    uint32_t path_open;      /* the path stack has a path at this burst   */
    uint64_t block_pc;       /* RAP: the open basic block's first pc      */
    uint64_t block_len;
    uint64_t since_branch;   /* ops since the last transfer (path stack)  */
    uint64_t since_load;     /* ops since the last load (co-processor)    */
    /* tables */
    hwp__vm_unit *funcs;     /* desc.funcs                                */
    hwp__vm_unit *loops;     /* desc.loops, open addressing               */
    uint8_t *site_state;     /* desc.sites: HWP__VM_* bits per site       */
    uint32_t *touched;       /* units counted in this burst (index;
                                loops above desc.funcs)                  */
    uint32_t ntouched;
    uint32_t *pending;       /* sites loaded since the last checkpoint    */
    uint32_t npending;
    uint32_t *hot;           /* hot units still without a path decision  */
    uint32_t nhot;
    hwp_path_row *rows;      /* scratch for the hot path table's export   */
    size_t nrows;
    /* the models */
    hwp_pm pm;
    hwp_pm_table pm_table;
    hwp_strat strat;
    hwp_strat_acc strat_acc;
    hwp_rap rap;
    hwp_path path;
    hwp_hpt hpt;
    hwp_phase phase;
    hwp_cp cp;
} hwp_vm;

/* The contract's calls (cost.h, HWP__CONTRACT); what hwp_vm's do:
 *   read_desc: a report back: its desc (the layer's fields and each model's
 *     own), or the whole layer into an instance of the same desc (its counts,
 *     bursts and every model's state), as the models' readers do.
 *   desc_fields: the layer's desc fields (hwp_field), for hosts' key=value
 *     options. */
HWP__CONTRACT(vm);
HWP_API hwp_status hwp_vm_flush(hwp_vm *vm);
HWP_API hwp_status hwp_vm_func(const hwp_vm *vm, uint32_t fn,
                               hwp_vm_decision *out);
HWP_API hwp_status hwp_vm_loop(const hwp_vm *vm, uint64_t pc,
                               hwp_vm_decision *out);
HWP_API hwp_status hwp_vm_site(const hwp_vm *vm, uint32_t site, uint32_t kind,
                               hwp_vm_decision *out);
HWP_API uint64_t hwp_vm_clock(const hwp_vm *vm);
HWP_API double hwp_vm_scale(const hwp_vm *vm);
HWP_API const char *hwp_vm_kind_str(uint32_t kind);
HWP_API const char *hwp_vm_verdict_str(uint32_t verdict);

HWP_API hwp_pm *hwp_vm_pm(hwp_vm *vm);
HWP_API hwp_pm_table *hwp_vm_pm_table(hwp_vm *vm);
HWP_API hwp_strat *hwp_vm_strat(hwp_vm *vm);
HWP_API hwp_strat_acc *hwp_vm_strat_acc(hwp_vm *vm);
HWP_API hwp_rap *hwp_vm_rap(hwp_vm *vm);
HWP_API hwp_path *hwp_vm_path(hwp_vm *vm);
HWP_API hwp_hpt *hwp_vm_hpt(hwp_vm *vm);
HWP_API hwp_phase *hwp_vm_phase(hwp_vm *vm);
HWP_API hwp_cp *hwp_vm_cp(hwp_vm *vm);

/* Cold halves of the events (private). hwp__vm_expire returns the new
 * countdown. */
HWP_API int64_t hwp__vm_expire(hwp_vm *vm, uint64_t pc, uint32_t n);
HWP_API void hwp__vm_xfer(hwp_vm *vm, uint64_t pc, uint32_t cls,
                          uint32_t taken, uint32_t fn);
HWP_API void hwp__vm_load(hwp_vm *vm, uint32_t site, uint64_t value,
                          uint64_t type);

/* ---- hot paths ---------------------------------------------------------- */

HWP_INLINE void hwp_vm_op(hwp_vm *vm, uint64_t pc) {
    if (HWP_UNLIKELY(--vm->left <= 0)) hwp__vm_expire(vm, pc, 1);
}

HWP_INLINE void hwp_vm_ops(hwp_vm *vm, uint64_t pc, uint32_t n) {
    if (HWP_UNLIKELY((vm->left -= n) <= 0)) hwp__vm_expire(vm, pc, n);
}

/* The countdown kept in a local by the interpreter (see the top block). */
HWP_INLINE int64_t hwp_vm_left(const hwp_vm *vm) { return vm->left; }
HWP_INLINE void hwp_vm_set_left(hwp_vm *vm, int64_t left) { vm->left = left; }
HWP_INLINE int64_t hwp_vm_expire(hwp_vm *vm, uint64_t pc, int64_t left) {
    vm->left = left;
    return hwp__vm_expire(vm, pc, 1);
}
/* ... and for a straight-line run of n ops counted down in the local. */
HWP_INLINE int64_t hwp_vm_expire_n(hwp_vm *vm, uint64_t pc, int64_t left, uint32_t n) {
    vm->left = left;
    return hwp__vm_expire(vm, pc, n);
}
/* In the local form, whether the annotation events are wanted, from the
 * register alone: the layer arms a countdown of exactly 1 whenever it
 * watches (inside a burst, or a sample waiting for its class), so the
 * interpreter may skip the events' own flag load with
 *   if (HWP_UNLIKELY(hwp_vm_watching(left))) hwp_vm_branch(vm, pc, taken);
 * (a countdown passing through 1 on its way down calls an event that
 * returns at once: once per countdown, not per bytecode). */
HWP_INLINE bool hwp_vm_watching(int64_t left) { return left == 1; }
/* The same from the handle: whether the layer wants the annotation
 * events now, for a host that keeps flags of its own in step with it. */
HWP_INLINE bool hwp_vm_watched(const hwp_vm *vm) { return vm->watch != 0; }

HWP_INLINE void hwp_vm_branch(hwp_vm *vm, uint64_t pc, bool taken) {
    if (HWP_UNLIKELY(vm->watch))
        hwp__vm_xfer(vm, pc, HWP_CLS_BR_COND, taken ? 1u : 0u, 0);
}

HWP_INLINE void hwp_vm_jump(hwp_vm *vm, uint64_t pc) {
    if (HWP_UNLIKELY(vm->watch)) hwp__vm_xfer(vm, pc, HWP_CLS_JUMP, 1u, 0);
}

HWP_INLINE void hwp_vm_call(hwp_vm *vm, uint64_t pc, uint32_t fn) {
    if (HWP_UNLIKELY(vm->watch)) hwp__vm_xfer(vm, pc, HWP_CLS_CALL, 1u, fn);
}

HWP_INLINE void hwp_vm_ret(hwp_vm *vm, uint64_t pc) {
    if (HWP_UNLIKELY(vm->watch)) hwp__vm_xfer(vm, pc, HWP_CLS_RET, 1u, 0);
}

HWP_INLINE void hwp_vm_load(hwp_vm *vm, uint32_t site, uint64_t value,
                            uint64_t type) {
    if (HWP_UNLIKELY(vm->watch)) hwp__vm_load(vm, site, value, type);
}

#ifdef __cplusplus
}
#endif

/* ======================================================================== */
#ifdef HWPROF_IMPL
#ifndef HWPROF_VM_IMPL_DONE
#define HWPROF_VM_IMPL_DONE

#define HWP__VM_MAGIC HWP__MAGIC('h', 'w', 'v', 'm')
#define HWP__VM_CHECK 0u
#define HWP__VM_BURST 1u
#define HWP__VM_NEVER ((int64_t)1 << 62) /* a countdown that never expires */
/* unit state */
#define HWP__VM_DECIDED 1u
#define HWP__VM_PATHED 2u
/* site state: loaded since the checkpoint; value / type verdict taken */
#define HWP__VM_SITE_PENDING 1u
#define HWP__VM_SITE_VALUE 2u
#define HWP__VM_SITE_TYPE 4u
#define HWP__VM_Z 1.96 /* the 95% intervals every model reports */
/* Hot units waiting for a path decision: a JIT compiles a few hundred. */
#define HWP__VM_HOT_CAP 256u

HWP_INLINE bool hwp__vm_ok(const hwp_vm *vm) {
    return vm && vm->head.magic == HWP__VM_MAGIC;
}

HWP_INLINE bool hwp__vm_burst_models(const hwp_vm_desc *d) {
    return (d->models & ~(uint32_t)HWP_VM_PM) != 0 || d->on_decision;
}

/* The layer's desc as a field table (base.h): its defaults, ranges, the
 * report's "desc" and the mismatch reasons. The models' descs are each
 * model's own (its report carries it). The seed comes last: a merge lets
 * it differ (one per thread). */
#define HWP__VM_F(f, type, def, lo, hi, flags, bad) \
    HWP__FN(hwp_vm_desc, "vm", f, type, def, lo, hi, flags, bad)
static const hwp_field hwp__vm_desc_f[] = {
    HWP__VM_F(models, UINT, 0, 1, HWP_VM_ALL, 0,
              "vm: models has an unknown bit (HWP_VM_ALL is 0x1f)"),
    HWP__VM_F(funcs, UINT, 0, 1, 1u << 24, 0, "vm: funcs must be in 1..2^24"),
    HWP__VM_F(sites, UINT, 0, 1, 1u << 24, 0, "vm: sites must be in 1..2^24"),
    HWP__VM_F(loops, UINT, 256, 16, 1u << 20, HWP_FIELD_POW2,
              "vm: loops must be a power of two in 16..2^20"),
    HWP__VM_F(period, UINT, 32768, 2, 1u << 30, 0, "vm: period must be in 2..2^30"),
    HWP__VM_F(burst, UINT, 512, 1, 1u << 30, 0, "vm: burst must be in 1..period"),
    HWP__VM_F(pc_step, UINT, 1, 1, 0xFFFFFFFFu, 0, "vm: pc_step must be in 1..2^32-1"),
    HWP__VM_F(op_cycles, UINT, 1, 1, 0xFFFFFFFFu, 0, "vm: op_cycles must be in 1..2^32-1"),
    HWP__VM_F(hot_calls, UINT, 1000, 1, ~(uint64_t)0, 0, "vm: hot_calls must be positive"),
    HWP__VM_F(hot_loops, UINT, 10000, 1, ~(uint64_t)0, 0, "vm: hot_loops must be positive"),
    /* 1 would never be reached: Wilson's floor stays below it */
    HWP__VM_F(spec_inv, F64, HWP__NANO(0.9), 1, 999999999, 0, "vm: spec_inv must be in (0, 1)"),
    HWP__VM_F(min_samples, UINT, 30, 1, 0xFFFFFFFFu, 0,
              "vm: min_samples must be in 1..2^32-1"),
    HWP__VM_F(hpt_plain, UINT, 0, 0, 1, 0, "vm: hpt_plain must be 0 or 1"),
    HWP__VM_F(seed, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
};
#undef HWP__VM_F
HWP__FIELDS_FN(hwp_vm_desc_fields, hwp__vm_desc_f)

/* The models the layer holds: (bit, report key, member), where member is
 * the hwp_vm member, its functions' prefix (hwp_<member>_merge) and, but
 * for pm_table (its desc follows pm's), the hwp_vm_desc member. */
#define HWP__VM_MODELS(X)                        \
    X(HWP_VM_PM, "profileme", pm)                \
    X(HWP_VM_PM, "pm_table", pm_table)           \
    HWP__VM_DESC_MODELS(X)
#define HWP__VM_DESC_MODELS(X)                   \
    X(HWP_VM_STRAT, "stratified", strat)         \
    X(HWP_VM_STRAT, "strat_acc", strat_acc)      \
    X(HWP_VM_RAP, "rap", rap)                    \
    X(HWP_VM_PATH, "pathprof", path)             \
    X(HWP_VM_PATH, "hpt", hpt)                   \
    X(HWP_VM_PATH, "phase", phase)               \
    X(HWP_VM_CP, "coproc", cp)

/* Fill the defaults; returns the reason a desc is invalid, or NULL. The
 * three fields with no default are checked first. */
static const char *hwp__vm_fill(hwp_vm_desc *d) {
    const char *why;
    if (!d->burst && d->period >= 2 && d->period < 512) d->burst = d->period;
    why = hwp__field_fill(d, hwp__vm_desc_f, HWP__N(hwp__vm_desc_f));
    if (!d->models) return "vm: models names no model (HWP_VM_* bits)";
    if (!d->funcs) return hwp__vm_desc_f[1].bad;
    if (!d->sites) return hwp__vm_desc_f[2].bad;
    if (why) return why;
    if (d->burst > d->period) return "vm: burst must be in 1..period";
    if (d->pm.deliver || d->strat.on_interrupt || d->phase.on_interval || d->path.on_path)
        return "vm: the layer owns the models' callbacks: leave them 0";
    return NULL;
}

/* The layer's own defaults for its models, where the paper's are sized
 * for hardware runs of billions of instructions (docs/vm.md, "Options"). */
static void hwp__vm_model_descs(hwp_vm_desc *d) {
    /* One sample in 4 of the burst's loads, in 256 strata (sec. 3 allows
     * any r and n): bursts already thin the stream 64-fold, and the
     * paper's H[P_256]_2048 would need 512K events per report; at 32 a
     * site needs 2048 executions a sample, 150K for the 73 samples a
     * verdict at 0.95 takes, and the Lua host's scripts specialised
     * almost nothing (docs/lua.md; at 1 they cost 5-10% more). */
    if (!d->strat.rate) d->strat.rate = 4;
    if (!d->strat.entries) d->strat.entries = 256;
    if (!d->strat.hash) d->strat.hash = HWP_STRAT_HASH_CHEAP;
    if (!d->strat_acc.strata) d->strat_acc.strata = d->strat.entries;
    /* Phases over burst bytecodes: 64 bursts an interval. */
    if (!d->phase.interval) d->phase.interval = (uint64_t)d->burst * 64u;
    /* Decay: on the layer's own path streams (the Lua benchmarks, the
     * minivm programs) it held the most of the perfect table's overlap
     * in the tables they overflow, and at 512 x 4, which they do not,
     * every policy held all of it (docs/vm.md, "Results"). An LRU table
     * has no policy. */
    if (!d->hpt_plain && d->hpt.policy == HWP_HPT_PLAIN && d->hpt.repl == HWP_HPT_LFU)
        d->hpt.policy = HWP_HPT_DECAY;
}

/* Storage: the layer's tables, then each enabled model's storage. */
static uint32_t hwp__vm_touch_cap(const hwp_vm_desc *d) {
    uint64_t units = (uint64_t)d->funcs + d->loops;
    return d->burst < units ? d->burst : (uint32_t)units;
}

typedef struct hwp__vm_sizes {
    size_t funcs, loops, sites, touched, pending, hot, rows;
    size_t pm, pmt, strat, acc, rap, path, hpt, phase, cp;
} hwp__vm_sizes;

static bool hwp__vm_size(const hwp_vm_desc *d, hwp__vm_sizes *s) {
    hwp_pm_table_desc td;
    hwp__zero(s, sizeof *s);
    s->funcs = hwp__align((size_t)d->funcs * sizeof(hwp__vm_unit));
    s->loops = hwp__align((size_t)d->loops * sizeof(hwp__vm_unit));
    s->sites = hwp__align((size_t)d->sites);
    /* a burst counts at most burst units, and never more than there are */
    s->touched = hwp__align((size_t)hwp__vm_touch_cap(d) * sizeof(uint32_t));
    s->pending = hwp__align((size_t)d->sites * sizeof(uint32_t));
    s->hot = hwp__align(HWP__VM_HOT_CAP * sizeof(uint32_t));
    if (d->models & HWP_VM_PM) {
        s->pm = hwp_pm_bytes(&d->pm);
        hwp__zero(&td, sizeof td);
        td.interval = d->pm.interval;
        td.window = d->pm.window;
        td.paired = d->pm.paired;
        s->pmt = hwp_pm_table_bytes(&td);
        if (!s->pm || !s->pmt) return false;
    }
    if (d->models & HWP_VM_STRAT) {
        s->strat = hwp_strat_bytes(&d->strat);
        s->acc = hwp_strat_acc_bytes(&d->strat_acc);
        if (!s->strat || !s->acc) return false;
    }
    if (d->models & HWP_VM_RAP) {
        s->rap = hwp_rap_bytes(&d->rap);
        if (!s->rap) return false;
    }
    if (d->models & HWP_VM_PATH) {
        s->path = hwp_path_bytes(&d->path);
        s->hpt = hwp_hpt_bytes(&d->hpt);
        s->phase = hwp_phase_bytes(&d->phase);
        if (!s->path || !s->hpt || !s->phase) return false;
        s->rows = hwp__align(((size_t)(d->hpt.entries ? d->hpt.entries : 512u) + 1u) *
                             sizeof(hwp_path_row));
    }
    if (d->models & HWP_VM_CP) {
        s->cp = hwp_cp_bytes(&d->cp);
        if (!s->cp) return false;
    }
    return true;
}

static size_t hwp__vm_total(const hwp__vm_sizes *s) {
    return s->funcs + s->loops + s->sites + s->touched + s->pending + s->hot +
           s->rows + hwp__align(s->pm) + hwp__align(s->pmt) +
           hwp__align(s->strat) + hwp__align(s->acc) + hwp__align(s->rap) +
           hwp__align(s->path) + hwp__align(s->hpt) + hwp__align(s->phase) +
           hwp__align(s->cp);
}

HWP_API size_t hwp_vm_bytes(const hwp_vm_desc *d) {
    hwp_vm_desc c;
    hwp__vm_sizes s;
    if (!d) return 0;
    c = *d;
    if (hwp__vm_fill(&c)) return 0;
    hwp__vm_model_descs(&c);
    if (!hwp__vm_size(&c, &s)) return 0;
    return hwp__bytes(hwp__vm_total(&s));
}

static void hwp__vm_on_interval(void *ctx, const hwp_phase_interval *r);

/* The bytecodes to the next burst (base.h's schedule); none when burst
 * == period (every bytecode in a burst: full profiling). The layer keeps
 * its own edges rather than an hwp_burst: a run of ops straddles one, and
 * a burst's last op waits for its annotation before the burst closes. */
static void hwp__vm_new_gap(hwp_vm *vm) {
    vm->gap = hwp_burst_gap(&vm->rng, vm->desc.period, vm->desc.burst);
}

/* Re-arm the countdown: the nearer of the burst boundary and ProfileMe's
 * next selection; every op inside a burst (or with a sample waiting for
 * its class) comes to the cold path. */
static int64_t hwp__vm_arm(hwp_vm *vm) {
    uint64_t n = HWP__VM_NEVER;
    if (vm->mode == HWP__VM_BURST || vm->sampling) {
        n = 1;
    } else {
        if (hwp__vm_burst_models(&vm->desc)) n = vm->gap;
        if (vm->desc.models & HWP_VM_PM) {
            uint64_t c = hwp_pm_countdown(&vm->pm);
            if (c < n) n = c;
        }
        if (!n) n = 1;
        if (n > 0x7FFFFFFFu) n = 0x7FFFFFFFu; /* `done` fits ProfileMe's 32 bits */
    }
    vm->armed = vm->left = (int64_t)n;
    vm->watch = vm->mode == HWP__VM_BURST || vm->sampling;
    return vm->left;
}

static void hwp__vm_clear(hwp_vm *vm) {
    hwp__zero(&vm->st, sizeof vm->st);
    hwp__zero(&vm->xfer, sizeof vm->xfer);
    hwp__zero(&vm->sample, sizeof vm->sample);
    vm->xfer.cls = HWP_CLS_OTHER;
    vm->sampling = vm->path_open = 0;
    vm->block_pc = vm->block_len = vm->since_branch = vm->since_load = 0;
    vm->ntouched = vm->npending = vm->nhot = 0;
    vm->ticked = 0;
    hwp__zero(vm->funcs, (size_t)vm->desc.funcs * sizeof *vm->funcs);
    hwp__zero(vm->loops, (size_t)vm->desc.loops * sizeof *vm->loops);
    hwp__zero(vm->site_state, vm->desc.sites);
    hwp_rng_seed(&vm->rng, hwp_mix64(vm->desc.seed ^ 0x766d6275727374ull));
    hwp__vm_new_gap(vm);
    vm->mode = !vm->gap && hwp__vm_burst_models(&vm->desc) ? HWP__VM_BURST : HWP__VM_CHECK;
    vm->burst_left = vm->desc.burst;
}

/* The reason of the first model whose desc sizes no storage: its own
 * init refuses the desc before it looks at the storage. */
static const char *hwp__vm_model_why(hwp_vm *vm, const hwp_vm_desc *c) {
#define HWP__VM_WHY(bit, bytes, init, obj, d)                                  \
    if ((c->models & (bit)) && !bytes(&c->d)) {                                \
        init(&vm->obj, NULL, 0, &c->d, NULL);                                  \
        return hwp_why(&vm->obj);                                              \
    }
    HWP__VM_WHY(HWP_VM_PM, hwp_pm_bytes, hwp_pm_init, pm, pm)
    HWP__VM_WHY(HWP_VM_STRAT, hwp_strat_bytes, hwp_strat_init, strat, strat)
    HWP__VM_WHY(HWP_VM_RAP, hwp_rap_bytes, hwp_rap_init, rap, rap)
    HWP__VM_WHY(HWP_VM_PATH, hwp_path_bytes, hwp_path_init, path, path)
    HWP__VM_WHY(HWP_VM_PATH, hwp_hpt_bytes, hwp_hpt_init, hpt, hpt)
    HWP__VM_WHY(HWP_VM_PATH, hwp_phase_bytes, hwp_phase_init, phase, phase)
    HWP__VM_WHY(HWP_VM_CP, hwp_cp_bytes, hwp_cp_init, cp, cp)
#undef HWP__VM_WHY
    if ((c->models & HWP_VM_STRAT) && !hwp_strat_acc_bytes(&c->strat_acc)) {
        hwp_strat_acc_init(&vm->strat_acc, NULL, 0, &c->strat_acc, NULL);
        return hwp_why(&vm->strat_acc);
    }
    return "vm: a model's desc sizes no storage";
}

HWP_API hwp_status hwp_vm_init(hwp_vm *vm, void *storage, size_t bytes,
                               const hwp_vm_desc *d, hwp_cost *cost) {
    hwp_vm_desc c;
    hwp__vm_sizes s;
    unsigned char *cur;
    const char *why;
    hwp_status st;
    if (!vm) return HWP_EINVAL;
    hwp__zero(vm, sizeof *vm);
    vm->head.why = "";
    if (!d) return hwp__fail(&vm->head, HWP_EINVAL, "vm: desc must be non-NULL");
    c = *d; /* copy first, then fill the defaults once */
    why = hwp__vm_fill(&c);
    if (!why) {
        hwp__vm_model_descs(&c);
        if (!hwp__vm_size(&c, &s)) why = hwp__vm_model_why(vm, &c);
    }
    st = hwp__admit(&vm->head, why, &storage, &bytes, why ? 0 : hwp__vm_total(&s));
    if (st != HWP_OK) return st;
    vm->desc = c;
    vm->cost = cost;
    cur = (unsigned char *)storage;
    vm->funcs = (hwp__vm_unit *)hwp__carve(&cur, s.funcs);
    vm->loops = (hwp__vm_unit *)hwp__carve(&cur, s.loops);
    vm->site_state = (uint8_t *)hwp__carve(&cur, s.sites);
    vm->touched = (uint32_t *)hwp__carve(&cur, s.touched);
    vm->pending = (uint32_t *)hwp__carve(&cur, s.pending);
    vm->hot = (uint32_t *)hwp__carve(&cur, s.hot);
    vm->rows = (hwp_path_row *)hwp__carve(&cur, s.rows);
    vm->nrows = s.rows / sizeof(hwp_path_row);
#define HWP__VM_MODEL(bit, size, call, obj)                                    \
    do {                                                                       \
        if ((c.models & (bit)) && (st = (call)) != HWP_OK)                     \
            return hwp__fail(&vm->head, st, hwp_why(obj));                     \
        if (c.models & (bit)) cur += hwp__align(size);                         \
    } while (0)
    if (c.models & HWP_VM_PM) {
        c.pm.deliver = hwp_pm_table_deliver;
        c.pm.user = &vm->pm_table;
    }
    HWP__VM_MODEL(HWP_VM_PM, s.pm, hwp_pm_init(&vm->pm, cur, s.pm, &c.pm, cost), &vm->pm);
    if (c.models & HWP_VM_PM) {
        hwp_pm_table_desc td;
        hwp_pm_table_desc_for(&vm->pm, &td);
        HWP__VM_MODEL(HWP_VM_PM, s.pmt, hwp_pm_table_init(&vm->pm_table, cur, s.pmt, &td, NULL),
                      &vm->pm_table);
    }
    HWP__VM_MODEL(HWP_VM_STRAT, s.acc,
                  hwp_strat_acc_init(&vm->strat_acc, cur, s.acc, &c.strat_acc, NULL),
                  &vm->strat_acc);
    if (c.models & HWP_VM_STRAT) {
        c.strat.on_interrupt = hwp_strat_acc_handler;
        c.strat.ctx = &vm->strat_acc;
    }
    HWP__VM_MODEL(HWP_VM_STRAT, s.strat,
                  hwp_strat_init(&vm->strat, cur, s.strat, &c.strat, cost), &vm->strat);
    HWP__VM_MODEL(HWP_VM_RAP, s.rap, hwp_rap_init(&vm->rap, cur, s.rap, &c.rap, cost),
                  &vm->rap);
    HWP__VM_MODEL(HWP_VM_PATH, s.path,
                  hwp_path_init(&vm->path, cur, s.path, &c.path, cost), &vm->path);
    HWP__VM_MODEL(HWP_VM_PATH, s.hpt, hwp_hpt_init(&vm->hpt, cur, s.hpt, &c.hpt, cost),
                  &vm->hpt);
    if (c.models & HWP_VM_PATH) {
        c.phase.on_interval = hwp__vm_on_interval;
        c.phase.ctx = vm;
    }
    HWP__VM_MODEL(HWP_VM_PATH, s.phase,
                  hwp_phase_init(&vm->phase, cur, s.phase, &c.phase, cost), &vm->phase);
    if (c.models & HWP_VM_PATH) hwp_path_attach(&vm->path, &vm->hpt, &vm->phase);
    HWP__VM_MODEL(HWP_VM_CP, s.cp, hwp_cp_init(&vm->cp, cur, s.cp, &c.cp, cost), &vm->cp);
    if ((c.models & HWP_VM_CP) && (st = hwp_cp_lvp_start(&vm->cp, NULL)) != HWP_OK)
        return hwp__fail(&vm->head, st, hwp_why(&vm->cp));
#undef HWP__VM_MODEL
    vm->head.magic = HWP__VM_MAGIC;
    hwp__vm_clear(vm);
    hwp__vm_arm(vm);
    return hwp__fail(&vm->head, HWP_OK, "");
}

/* ---- counts --------------------------------------------------------------- */

HWP_API uint64_t hwp_vm_clock(const hwp_vm *vm) {
    if (!hwp__vm_ok(vm)) return 0;
    return vm->st.events + (uint64_t)(vm->armed - vm->left);
}

/* Bytecodes per bytecode seen in a burst: the measured inverse of the
 * sampling rate, so an estimate stays unbiased whatever the gaps were. */
HWP_API double hwp_vm_scale(const hwp_vm *vm) {
    if (!hwp__vm_ok(vm) || !vm->st.burst_ops) return 0.0;
    return (double)hwp_vm_clock(vm) / (double)vm->st.burst_ops;
}

static void hwp__vm_count(hwp_vm *vm, hwp__vm_tally *c) {
    uint32_t b = (uint32_t)vm->st.bursts + 1u;
    if (c->at != b) {
        c->k2 += (uint64_t)c->cur * c->cur;
        c->cur = 0;
        c->at = b;
    }
    c->cur++;
    c->k++;
}

/* N = s k, bursts the sampling unit, each in the sample with p = 1/s:
 * Var(N) is estimated by (s^2 - s) times the sum of squared per-burst
 * counts (Horvitz-Thompson for a cluster sample). */
static void hwp__vm_count_est(const hwp_vm *vm, const hwp__vm_tally *c,
                              double *est, double *lo, double *hi) {
    double s = hwp_vm_scale(vm), k2, half;
    k2 = (double)c->k2 + (double)c->cur * (double)c->cur;
    *est = s * (double)c->k;
    half = s > 1.0 ? HWP__VM_Z * hwp_sqrt((s * s - s) * k2) : 0.0;
    *lo = *est > half ? *est - half : 0.0;
    *hi = *est + half;
}

static hwp__vm_unit *hwp__vm_loop_slot(hwp_vm *vm, uint64_t header, bool add) {
    uint32_t mask = vm->desc.loops - 1u, i = (uint32_t)hwp_mix64(header) & mask, n;
    for (n = 0; n < 8u; n++, i = (i + 1u) & mask) {
        hwp__vm_unit *u = &vm->loops[i];
        if (u->pc == header + 1u) return u;
        if (!u->pc) {
            if (!add) return NULL;
            u->pc = header + 1u;
            return u;
        }
    }
    if (add) vm->st.dropped++; /* the probe run is full: the header is dropped */
    return NULL;
}

static void hwp__vm_touch(hwp_vm *vm, hwp__vm_unit *u, uint32_t index) {
    if (u->n.at != (uint32_t)vm->st.bursts + 1u && vm->ntouched < hwp__vm_touch_cap(&vm->desc))
        vm->touched[vm->ntouched++] = index;
    hwp__vm_count(vm, &u->n);
}

/* ---- decisions ------------------------------------------------------------ */

static void hwp__vm_emit(hwp_vm *vm, hwp_vm_decision *d) {
    d->clock = hwp_vm_clock(vm);
    vm->st.decisions++;
    if (vm->desc.on_decision) vm->desc.on_decision(vm->desc.user, d);
}

static void hwp__vm_unit_decision(const hwp_vm *vm, const hwp__vm_unit *u,
                                  uint32_t kind, uint64_t threshold,
                                  hwp_vm_decision *d) {
    hwp__zero(d, sizeof *d);
    d->kind = kind;
    d->id = kind == HWP_VM_FUNC ? (uint64_t)(u - vm->funcs) : u->pc - 1u;
    d->samples = u->n.k;
    d->clock = hwp_vm_clock(vm);
    hwp__vm_count_est(vm, &u->n, &d->est, &d->lo, &d->hi);
    /* Hot once the interval's floor clears the threshold; a unit is never
     * called cold while the run goes on (it may yet get hot). */
    d->verdict = d->lo >= (double)threshold && d->samples ? HWP_VM_YES : HWP_VM_UNSURE;
}

static void hwp__vm_site_decision(const hwp_vm *vm, uint32_t site, uint32_t kind,
                                  hwp_vm_decision *d) {
    hwp__zero(d, sizeof *d);
    d->kind = kind;
    d->id = site;
    d->clock = hwp_vm_clock(vm);
    if (vm->desc.models & HWP_VM_STRAT) {
        /* The accumulator keeps each pc's most frequent value beside its
         * counts: a lookup, not a scan of every tuple. */
        uint32_t k = kind == HWP_VM_TYPE ? HWP_VM_STRAT_KIND_TYPE : (uint32_t)HWP_STRAT_KIND_VALUE;
        const hwp__strat_pslot *p = hwp__strat_pfind(&vm->strat_acc, k, site);
        if (!p->used || !p->count) return;
        d->samples = p->samples;
        if (p->top_count) {
            d->what = p->top_w;
            hwp__strat_share(&vm->strat_acc, p, p->top_count, &d->est, &d->lo, &d->hi);
        } else { /* its top tuple was evicted: the next fold names a new one */
            hwp_strat_value v;
            if (!hwp_strat_acc_top_values(&vm->strat_acc, k, site, &v, 1)) return;
            d->what = v.w;
            d->est = v.invariance;
            d->lo = v.lo;
            d->hi = v.hi;
        }
    } else if ((vm->desc.models & HWP_VM_CP) && kind == HWP_VM_VALUE) {
        hwp_cp_vprof p;
        if (!hwp_cp_lvp_value(&vm->cp, site, &p) || !p.nvals) return;
        d->what = p.value[0];
        d->est = p.inv[0];
        d->lo = p.lo[0];
        d->hi = p.hi[0];
        d->samples = p.samples;
    } else {
        return;
    }
    if (d->samples < vm->desc.min_samples) return;
    if (d->lo >= vm->desc.spec_inv) d->verdict = HWP_VM_YES;
    else if (d->hi < vm->desc.spec_inv) d->verdict = HWP_VM_NO;
}

/* The hottest path the hot path table holds from `start`. */
static bool hwp__vm_best_path(const hwp_vm *vm, size_t n, uint64_t start,
                              hwp_path_row *best) {
    size_t i;
    bool found = false;
    for (i = 0; i < n; i++)
        if (vm->rows[i].pd.start == start && (!found || vm->rows[i].count > best->count)) {
            *best = vm->rows[i];
            found = true;
        }
    return found;
}

static hwp__vm_unit *hwp__vm_unit_at(hwp_vm *vm, uint32_t ix) {
    return ix < vm->desc.funcs ? &vm->funcs[ix] : &vm->loops[ix - vm->desc.funcs];
}

/* Every hot unit starting at pc + 1 has its path. */
static void hwp__vm_drop_hot(hwp_vm *vm, uint64_t pc1) {
    uint32_t i = 0;
    while (i < vm->nhot) {
        hwp__vm_unit *u = hwp__vm_unit_at(vm, vm->hot[i]);
        if (u->pc == pc1) {
            u->state |= HWP__VM_PATHED;
            vm->hot[i] = vm->hot[--vm->nhot];
        } else {
            i++;
        }
    }
}

static void hwp__vm_paths(hwp_vm *vm) {
    size_t n, i = 0;
    double s = hwp_vm_scale(vm);
    if (!vm->nhot) return;
    n = hwp_hpt_export(&vm->hpt, vm->rows, vm->nrows);
    if (n > vm->nrows) n = vm->nrows;
    while (i < vm->nhot) {
        hwp__vm_unit *u = hwp__vm_unit_at(vm, vm->hot[i]);
        hwp_path_row r = {{0, 0}, 0};
        if (u->pc && hwp__vm_best_path(vm, n, u->pc - 1u, &r)) {
            hwp_vm_decision d;
            hwp__zero(&d, sizeof d);
            d.kind = HWP_VM_HOTPATH;
            d.verdict = HWP_VM_YES;
            d.id = r.pd.start;
            d.what = r.pd.shape;
            d.samples = r.count;
            d.est = d.lo = d.hi = s * (double)r.count;
            hwp__vm_drop_hot(vm, u->pc); /* a function whose entry heads a loop: one path */
            hwp__vm_emit(vm, &d);
        } else {
            i++;
        }
    }
}

static void hwp__vm_check_unit(hwp_vm *vm, uint32_t ix) {
    bool is_fn = ix < vm->desc.funcs;
    hwp__vm_unit *u = hwp__vm_unit_at(vm, ix);
    hwp_vm_decision d;
    if (u->state & HWP__VM_DECIDED) return;
    hwp__vm_unit_decision(vm, u, is_fn ? HWP_VM_FUNC : HWP_VM_LOOP,
                          is_fn ? vm->desc.hot_calls : vm->desc.hot_loops, &d);
    if (d.verdict != HWP_VM_YES) return;
    u->state |= HWP__VM_DECIDED;
    if ((vm->desc.models & HWP_VM_PATH) && vm->nhot < HWP__VM_HOT_CAP) vm->hot[vm->nhot++] = ix;
    hwp__vm_emit(vm, &d);
}

static void hwp__vm_check_site(hwp_vm *vm, uint32_t site) {
    static const uint32_t kinds[2] = {HWP_VM_VALUE, HWP_VM_TYPE};
    static const uint8_t bits[2] = {HWP__VM_SITE_VALUE, HWP__VM_SITE_TYPE};
    unsigned i;
    vm->site_state[site] &= (uint8_t)~HWP__VM_SITE_PENDING;
    for (i = 0; i < 2; i++) {
        hwp_vm_decision d;
        if (vm->site_state[site] & bits[i]) continue;
        hwp__vm_site_decision(vm, site, kinds[i], &d);
        if (d.verdict == HWP_VM_UNSURE) continue;
        vm->site_state[site] |= bits[i];
        hwp__vm_emit(vm, &d);
    }
}

/* At the end of every burst: the units it counted; the sites loaded since
 * the previous checkpoint once the models have had 8 bursts to report
 * (their interrupts are batched); hot units' paths at the same pace. */
static void hwp__vm_checkpoint(hwp_vm *vm, bool last) {
    uint32_t i;
    for (i = 0; i < vm->ntouched; i++) hwp__vm_check_unit(vm, vm->touched[i]);
    vm->ntouched = 0;
    if (!last && (vm->st.bursts & 7u)) return;
    for (i = 0; i < vm->npending; i++) hwp__vm_check_site(vm, vm->pending[i]);
    vm->npending = 0;
    if (vm->desc.models & HWP_VM_PATH) hwp__vm_paths(vm);
}

static void hwp__vm_on_interval(void *ctx, const hwp_phase_interval *r) {
    hwp_vm *vm = (hwp_vm *)ctx;
    hwp_vm_decision d;
    if (!r->changed) return;
    hwp__zero(&d, sizeof d);
    d.kind = HWP_VM_PHASE;
    d.verdict = HWP_VM_YES;
    d.id = r->index;
    d.what = r->phase;
    d.est = d.lo = d.hi = (double)r->distance;
    d.samples = 1;
    hwp__vm_emit(vm, &d);
}

/* ---- the cold path of the events ----------------------------------------- */

static void hwp__vm_block_end(hwp_vm *vm) {
    if ((vm->desc.models & HWP_VM_RAP) && vm->block_len)
        hwp_rap_add(&vm->rap, vm->block_pc, vm->block_len);
    vm->block_len = 0;
}

/* The transfer waiting for its target: `next` is where it went. */
static void hwp__vm_land(hwp_vm *vm, uint64_t next) {
    hwp__vm_pending *x = &vm->xfer;
    if (x->cls == HWP_CLS_OTHER) return;
    if (vm->desc.models & HWP_VM_PATH)
        hwp_path_branch(&vm->path, x->pc, next, x->cls, x->taken != 0,
                        vm->since_branch > 0xFFFFFFFFu ? 0xFFFFFFFFu
                                                       : (uint32_t)vm->since_branch,
                        0);
    vm->since_branch = 0;
    if (x->cls == HWP_CLS_CALL) {
        hwp__vm_unit *u = &vm->funcs[x->fn];
        u->pc = next + 1u;
        hwp__vm_touch(vm, u, x->fn);
    } else if (x->taken && next <= x->pc && x->cls != HWP_CLS_RET) {
        hwp__vm_unit *u = hwp__vm_loop_slot(vm, next, true);
        if (u) hwp__vm_touch(vm, u, vm->desc.funcs + (uint32_t)(u - vm->loops));
    }
    hwp__vm_block_end(vm);
    x->cls = HWP_CLS_OTHER;
}

static void hwp__vm_burst_op(hwp_vm *vm, uint64_t pc, uint32_t n) {
    if (!vm->path_open) {
        if (vm->desc.models & HWP_VM_PATH) hwp_path_begin(&vm->path, pc);
        vm->path_open = 1;
    }
    hwp__vm_land(vm, pc);
    if (!vm->block_len) vm->block_pc = pc;
    vm->block_len += n;
    vm->since_branch += n;
    vm->since_load += n;
    vm->st.burst_ops += n;
    /* at 0 the burst stays open for this op's annotation; the next op
     * closes it */
    vm->burst_left = vm->burst_left > n ? vm->burst_left - n : 0;
}

/* Close a burst. The caller has landed its last transfer (the first op
 * after the burst) or, at the end of the run, it went nowhere the layer
 * saw and is dropped: no transfer is given a made-up target. */
static void hwp__vm_burst_close(hwp_vm *vm) {
    vm->xfer.cls = HWP_CLS_OTHER;
    hwp__vm_block_end(vm);
    /* Paths still open at the burst's end are incomplete: dropped, as at
     * the end of a run (their head would start a different path). */
    if ((vm->desc.models & HWP_VM_PATH) && vm->path.n)
        hwp_path_unwind(&vm->path, vm->path.n, false);
    vm->path_open = 0;
    vm->since_load = vm->since_branch = 0;
    vm->st.bursts++;
}

/* ... and start the next gap, or the next burst at once when there is
 * none, then take the decisions the burst made possible. */
static void hwp__vm_burst_end(hwp_vm *vm) {
    hwp__vm_burst_close(vm);
    hwp__vm_new_gap(vm);
    vm->mode = vm->gap ? HWP__VM_CHECK : HWP__VM_BURST;
    vm->burst_left = vm->desc.burst;
    hwp__vm_checkpoint(vm, false);
}

/* The k ops of a run from `first` on that follow the burst's start: the
 * burst takes those on its side of its end; after it they count towards
 * the next gap, or open the next burst at once when there is none. */
static void hwp__vm_burst_run(hwp_vm *vm, uint64_t first, uint32_t k) {
    while (k) {
        uint32_t m = vm->burst_left < k ? (uint32_t)vm->burst_left : k;
        hwp__vm_burst_op(vm, first, m);
        if (m == k) return; /* the run's last op, and its annotation, are in */
        hwp__vm_burst_end(vm);
        first += (uint64_t)m * vm->desc.pc_step;
        k -= m;
        if (vm->mode == HWP__VM_CHECK) {
            vm->gap = vm->gap > k ? vm->gap - k : 1u;
            return;
        }
    }
}

/* ProfileMe selected bytecode `pc` (retired at `clock`). Its class and
 * data come from the annotation that follows it, so the record waits for
 * the next op. */
static void hwp__vm_select(hwp_vm *vm, uint64_t pc, uint64_t clock) {
    hwp__zero(&vm->sample, sizeof vm->sample);
    vm->sample.pc = pc;
    vm->sample_at = clock;
    vm->sample.cls = HWP_CLS_OTHER;
    vm->sampling = 1;
    vm->st.samples++;
}

static void hwp__vm_sample_done(hwp_vm *vm, uint64_t next) {
    vm->sample.next_pc = next;
    hwp_pm_sample_insn(&vm->pm, &vm->sample, vm->sample_at);
    vm->sampling = 0;
}

/* ProfileMe's countdown over the `done` ops that ended with this event's
 * n (the ones before were straight-line ops it skipped). A selection of
 * the event's last op waits for its annotation (its class and data); one
 * inside a run of ops is complete at once (class OTHER), and the ops after
 * it count towards the next selection. */
static void hwp__vm_pm_fetch(hwp_vm *vm, uint64_t pc, uint32_t n, uint32_t done,
                             uint64_t clock) {
    uint32_t k;
    while ((k = hwp_pm_fetch_block(&vm->pm, done)) != 0) {
        uint32_t back = done - k; /* ops after the selected one */
        uint64_t at = back < n ? pc + (uint64_t)(n - 1u - back) * vm->desc.pc_step : pc;
        hwp__vm_select(vm, at, clock - back);
        if (!back) return;
        hwp__vm_sample_done(vm, at + vm->desc.pc_step);
        done = back;
    }
}

/* The cost shim's clock moves with the bytecodes retired so far. */
static void hwp__vm_tick(hwp_vm *vm) {
    if (!vm->cost) return;
    hwp_cost_tick(vm->cost, (vm->st.events - vm->ticked) * vm->desc.op_cycles);
    vm->ticked = vm->st.events;
}

HWP_API int64_t hwp__vm_expire(hwp_vm *vm, uint64_t pc, uint32_t n) {
    uint64_t done, clock;
    if (!hwp__vm_ok(vm)) { /* a zeroed handle: off */
        vm->left = HWP__VM_NEVER;
        return vm->left;
    }
    done = (uint64_t)(vm->armed - vm->left); /* ops since the last arm */
    vm->st.events += done;
    clock = vm->st.events;
    vm->left = vm->armed = 0;
    if (vm->sampling) hwp__vm_sample_done(vm, pc);
    hwp__vm_tick(vm);
    if (vm->desc.models & HWP_VM_PM) hwp__vm_pm_fetch(vm, pc, n, (uint32_t)done, clock);
    if (vm->mode == HWP__VM_BURST && !vm->burst_left) {
        /* the burst's last op had its annotation: its transfer lands here */
        hwp__vm_land(vm, pc);
        hwp__vm_burst_end(vm); /* back to checking, or at once a new burst */
    }
    /* A run of n ops may straddle a burst's edge: the burst takes only
     * the ops on its side, so every op is in a burst with the same
     * chance and the scale stays the inverse of that chance. */
    if (vm->mode == HWP__VM_BURST) {
        hwp__vm_burst_run(vm, pc, n);
    } else if (hwp__vm_burst_models(&vm->desc)) {
        if (vm->gap <= done) { /* the gap ran out at this run's op done - gap + 1 from its end */
            uint32_t in = (uint32_t)(done - vm->gap) + 1u;
            vm->mode = HWP__VM_BURST;
            vm->burst_left = vm->desc.burst;
            hwp__vm_burst_run(vm, pc + (uint64_t)(n - in) * vm->desc.pc_step, in);
        } else {
            vm->gap -= done;
        }
    }
    return hwp__vm_arm(vm);
}

HWP_API void hwp__vm_xfer(hwp_vm *vm, uint64_t pc, uint32_t cls, uint32_t taken,
                          uint32_t fn) {
    if (!hwp__vm_ok(vm)) return;
    if (cls == HWP_CLS_CALL && fn >= vm->desc.funcs) {
        vm->st.rejected++;
        vm->st.dropped++;
        hwp__fail(&vm->head, HWP_EINVAL, "vm: call: fn past desc.funcs (dropped)");
        return;
    }
    if (vm->sampling && vm->sample.pc == pc) {
        vm->sample.cls = cls;
        vm->sample.events = taken ? (uint32_t)HWP_EV_TAKEN : 0u;
    }
    if (vm->mode != HWP__VM_BURST) return;
    vm->st.annotated++;
    vm->xfer.pc = pc;
    vm->xfer.cls = cls;
    vm->xfer.taken = taken;
    vm->xfer.fn = fn;
}

HWP_API void hwp__vm_load(hwp_vm *vm, uint32_t site, uint64_t value,
                          uint64_t type) {
    if (!hwp__vm_ok(vm)) return;
    if (site >= vm->desc.sites) {
        vm->st.rejected++;
        vm->st.dropped++;
        hwp__fail(&vm->head, HWP_EINVAL, "vm: load: site past desc.sites (dropped)");
        return;
    }
    if (vm->sampling && !vm->sample.cls) {
        vm->sample.cls = HWP_CLS_LOAD;
        vm->sample.value = value;
    }
    if (vm->mode != HWP__VM_BURST) return;
    vm->st.annotated++;
    if (vm->desc.models & HWP_VM_STRAT) {
        hwp_strat_push(&vm->strat, HWP_STRAT_KIND_VALUE, site, value);
        hwp_strat_push(&vm->strat, HWP_VM_STRAT_KIND_TYPE, site, type);
    }
    if (vm->desc.models & HWP_VM_CP) {
        hwp_insn in;
        hwp__zero(&in, sizeof in);
        in.pc = site;
        in.cls = HWP_CLS_LOAD;
        in.value = value;
        /* the co-processor runs only in bursts: what it sees retire is
         * the burst's own bytecodes */
        if (vm->since_load > 1u) hwp_cp_tick(&vm->cp, vm->since_load - 1u);
        hwp_cp_insn(&vm->cp, &in);
        vm->since_load = 0;
    }
    if (!(vm->site_state[site] & HWP__VM_SITE_PENDING)) {
        vm->site_state[site] |= HWP__VM_SITE_PENDING;
        vm->pending[vm->npending++] = site;
    }
}

/* ---- end of run, queries, reports ----------------------------------------- */

HWP_API hwp_status hwp_vm_flush(hwp_vm *vm) {
    if (!hwp__vm_ok(vm)) return HWP_ESTATE;
    vm->st.events = hwp_vm_clock(vm);
    vm->armed = vm->left = 0;
    if (vm->sampling) hwp__vm_sample_done(vm, 0);
    hwp__vm_tick(vm);
    if (vm->mode == HWP__VM_BURST) hwp__vm_burst_close(vm); /* the run ends inside one */
    hwp__vm_new_gap(vm);
    vm->mode = HWP__VM_CHECK;
    vm->burst_left = vm->desc.burst;
    if (vm->desc.models & HWP_VM_PM) {
        hwp_pm_flush(&vm->pm);
        hwp_pm_table_flush(&vm->pm_table);
    }
    if (vm->desc.models & HWP_VM_STRAT) hwp_strat_flush(&vm->strat);
    if (vm->desc.models & HWP_VM_RAP) hwp_rap_flush(&vm->rap);
    if (vm->desc.models & HWP_VM_CP) hwp_cp_flush(&vm->cp);
    hwp__vm_checkpoint(vm, true);
    hwp__vm_arm(vm);
    return hwp__fail(&vm->head, HWP_OK, "");
}

HWP_API hwp_status hwp_vm_reset(hwp_vm *vm) {
    if (!hwp__vm_ok(vm)) return HWP_ESTATE;
#define HWP__VM_RESET(bit, key, m) \
    if (vm->desc.models & (bit)) hwp_##m##_reset(&vm->m);
    HWP__VM_MODELS(HWP__VM_RESET)
#undef HWP__VM_RESET
    if (vm->desc.models & HWP_VM_CP) hwp_cp_lvp_start(&vm->cp, NULL);
    hwp__vm_clear(vm);
    hwp__vm_arm(vm);
    return hwp__fail(&vm->head, HWP_OK, "");
}

/* The counts of a unit with its open burst folded in: after a merge the
 * two instances' bursts are different draws. */
static void hwp__vm_count_close(hwp__vm_tally *c) {
    c->k2 += (uint64_t)c->cur * c->cur;
    c->cur = 0;
    c->at = 0;
}

static void hwp__vm_unit_merge(hwp__vm_unit *d, const hwp__vm_unit *s) {
    hwp__vm_count_close(&d->n);
    d->n.k += s->n.k;
    d->n.k2 += s->n.k2 + (uint64_t)s->n.cur * s->n.cur;
    if (!d->pc) d->pc = s->pc;
    d->state |= s->state;
}

HWP_API hwp_status hwp_vm_merge(hwp_vm *dst, const hwp_vm *src) {
    const hwp_field *diff;
    hwp_status st;
    uint32_t i;
    if (!hwp__vm_ok(dst) || !hwp__vm_ok(src)) return HWP_EINVAL;
    diff = hwp__field_diff(&dst->desc, &src->desc, hwp__vm_desc_f, HWP__N(hwp__vm_desc_f) - 1u);
    if (diff) return hwp__fail(&dst->head, HWP_EMISMATCH, diff->why);
    /* the models first: a model that refuses stops the merge there, with
     * the models before it merged (check the descs' seeds before) */
#define HWP__VM_MERGE(bit, key, m)                                             \
    if ((dst->desc.models & (bit)) && (st = hwp_##m##_merge(&dst->m, &src->m)) != HWP_OK) \
        return hwp__fail(&dst->head, st, hwp_why(&dst->m));
    HWP__VM_MODELS(HWP__VM_MERGE)
#undef HWP__VM_MERGE
    dst->st.events = hwp_vm_clock(dst) + hwp_vm_clock(src);
    dst->armed = dst->left; /* the clock now lives in st.events */
    dst->ticked += hwp_vm_clock(src); /* src's host cycles are its own host's */
    dst->st.dropped += src->st.dropped;
    dst->st.burst_ops += src->st.burst_ops;
    dst->st.bursts += src->st.bursts;
    dst->st.annotated += src->st.annotated;
    dst->st.rejected += src->st.rejected;
    dst->st.decisions += src->st.decisions;
    dst->st.samples += src->st.samples;
    for (i = 0; i < dst->desc.funcs; i++) hwp__vm_unit_merge(&dst->funcs[i], &src->funcs[i]);
    for (i = 0; i < dst->desc.loops; i++) {
        const hwp__vm_unit *u = &src->loops[i];
        hwp__vm_unit *d;
        if (!u->pc) continue;
        d = hwp__vm_loop_slot(dst, u->pc - 1u, true);
        if (d) hwp__vm_unit_merge(d, u);
    }
    for (i = 0; i < dst->desc.sites; i++)
        dst->site_state[i] |= (uint8_t)(src->site_state[i] & (HWP__VM_SITE_VALUE | HWP__VM_SITE_TYPE));
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API hwp_status hwp_vm_get_stats(const hwp_vm *vm, hwp_vm_stats *out) {
    if (!hwp__vm_ok(vm) || !out) return HWP_EINVAL;
    *out = vm->st;
    out->events = hwp_vm_clock(vm);
    return HWP_OK;
}

HWP__GET_DESC_FN(vm, desc, hwp__vm_ok(x))

HWP_API hwp_status hwp_vm_func(const hwp_vm *vm, uint32_t fn, hwp_vm_decision *out) {
    if (!hwp__vm_ok(vm) || !out) return HWP_EINVAL;
    if (fn >= vm->desc.funcs) return HWP_EINVAL;
    hwp__vm_unit_decision(vm, &vm->funcs[fn], HWP_VM_FUNC, vm->desc.hot_calls, out);
    return HWP_OK;
}

HWP_API hwp_status hwp_vm_loop(const hwp_vm *vm, uint64_t pc, hwp_vm_decision *out) {
    const hwp__vm_unit *u;
    if (!hwp__vm_ok(vm) || !out) return HWP_EINVAL;
    u = hwp__vm_loop_slot((hwp_vm *)(uintptr_t)vm, pc, false);
    if (!u) {
        hwp__zero(out, sizeof *out);
        out->kind = HWP_VM_LOOP;
        out->id = pc;
        out->clock = hwp_vm_clock(vm);
        return HWP_OK;
    }
    hwp__vm_unit_decision(vm, u, HWP_VM_LOOP, vm->desc.hot_loops, out);
    return HWP_OK;
}

HWP_API hwp_status hwp_vm_site(const hwp_vm *vm, uint32_t site, uint32_t kind,
                               hwp_vm_decision *out) {
    if (!hwp__vm_ok(vm) || !out) return HWP_EINVAL;
    if (site >= vm->desc.sites || (kind != HWP_VM_VALUE && kind != HWP_VM_TYPE))
        return HWP_EINVAL;
    hwp__vm_site_decision(vm, site, kind, out);
    return HWP_OK;
}

HWP_API const char *hwp_vm_kind_str(uint32_t kind) {
    static const char *const s[] = {"?", "func", "loop", "path", "value", "type", "phase"};
    return kind < sizeof s / sizeof s[0] ? s[kind] : "?";
}

HWP_API const char *hwp_vm_verdict_str(uint32_t verdict) {
    static const char *const s[] = {"unsure", "yes", "no"};
    return verdict < 3u ? s[verdict] : "?";
}

#define HWP__VM_ACCESSOR(name, type, member, bit)                              \
    HWP_API type *hwp_vm_##name(hwp_vm *vm) {                                  \
        return hwp__vm_ok(vm) && (vm->desc.models & (bit)) ? &vm->member : NULL; \
    }
HWP__VM_ACCESSOR(pm, hwp_pm, pm, HWP_VM_PM)
HWP__VM_ACCESSOR(pm_table, hwp_pm_table, pm_table, HWP_VM_PM)
HWP__VM_ACCESSOR(strat, hwp_strat, strat, HWP_VM_STRAT)
HWP__VM_ACCESSOR(strat_acc, hwp_strat_acc, strat_acc, HWP_VM_STRAT)
HWP__VM_ACCESSOR(rap, hwp_rap, rap, HWP_VM_RAP)
HWP__VM_ACCESSOR(path, hwp_path, path, HWP_VM_PATH)
HWP__VM_ACCESSOR(hpt, hwp_hpt, hpt, HWP_VM_PATH)
HWP__VM_ACCESSOR(phase, hwp_phase, phase, HWP_VM_PATH)
HWP__VM_ACCESSOR(cp, hwp_cp, cp, HWP_VM_CP)
#undef HWP__VM_ACCESSOR

static const hwp_field hwp__vm_stats_f[] = {
    HWP__FS_HEAD(hwp_vm_stats),
    HWP__FS(hwp_vm_stats, burst_ops), HWP__FS(hwp_vm_stats, bursts),
    HWP__FS(hwp_vm_stats, annotated), HWP__FS(hwp_vm_stats, rejected),
    HWP__FS(hwp_vm_stats, decisions), HWP__FS(hwp_vm_stats, samples),
};

/* The units a burst saw, with their estimates:
 * [id or header pc, entry pc, samples, sum of squares, estimate, lo, hi]. */
static void hwp__vm_put_units(const hwp_vm *vm, const hwp_writer *w, const char *key,
                              const hwp__vm_unit *u, uint32_t n, bool funcs) {
    const char *sep = "";
    uint32_t i;
    hwp__put_key(w, ",", key);
    hwp_put_str(w, "[");
    for (i = 0; i < n; i++) {
        double est, lo, hi;
        if (!u[i].n.k) continue;
        hwp__vm_count_est(vm, &u[i].n, &est, &lo, &hi);
        hwp_put_str(w, sep);
        hwp_put_str_u64(w, "[", funcs ? i : u[i].pc - 1u);
        hwp_put_str_u64(w, ",", u[i].pc ? u[i].pc - 1u : 0u);
        hwp_put_str_u64(w, ",", u[i].n.k);
        hwp_put_str_u64(w, ",", u[i].n.k2 + (uint64_t)u[i].n.cur * u[i].n.cur);
        hwp__put_str_f64(w, ",", est, 1);
        hwp__put_str_f64(w, ",", lo, 1);
        hwp__put_str_f64(w, ",", hi, 1);
        hwp_put_str(w, "]");
        sep = ",";
    }
    hwp_put_str(w, "]");
}

HWP_API void hwp_vm_write_json(const hwp_vm *vm, const hwp_writer *w) {
    hwp_vm_stats s;
    if (hwp_vm_get_stats(vm, &s) != HWP_OK) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_json_envelope(w, "vm", 1);
    hwp__field_put(w, "desc", &vm->desc, hwp__vm_desc_f, HWP__N(hwp__vm_desc_f));
    hwp__field_put(w, "stats", &s, hwp__vm_stats_f, HWP__N(hwp__vm_stats_f));
    hwp_put_json_f64(w, "scale", hwp_vm_scale(vm), 4);
    hwp__vm_put_units(vm, w, "funcs", vm->funcs, vm->desc.funcs, true);
    hwp__vm_put_units(vm, w, "loops", vm->loops, vm->desc.loops, false);
    hwp_put_str(w, ",\"models\":{");
    {
        const char *sep = "";
#define HWP__VM_PUT(bit, key, m)                                               \
    if (vm->desc.models & (bit)) {                                             \
        hwp__put_key(w, sep, key);                                             \
        hwp_##m##_write_json(&vm->m, w);                                       \
        sep = ",";                                                             \
    }
        HWP__VM_MODELS(HWP__VM_PUT)
#undef HWP__VM_PUT
    }
    hwp_put_str(w, "}}");
}

/* A member's value as its own text (the cursor after its key), for a
 * model's reader; an error there is placed in the whole report. */
typedef struct hwp__vm_span {
    const char *s;
    size_t n, at;
} hwp__vm_span;

static bool hwp__vm_span_of(hwp_json *j, hwp__vm_span *v) {
    (void)hwp__json_peek(j); /* to the value's first character */
    v->at = j->pos;
    v->s = j->s + j->pos;
    if (!hwp_json_skip(j)) return false;
    v->n = j->pos - v->at;
    return true;
}

/* A model reader's status, its error moved to the report's offsets. */
static hwp_status hwp__vm_sub(hwp_status st, const hwp__vm_span *v, const hwp_json_err *e,
                              hwp_json_err *err) {
    if (st != HWP_OK && err) {
        err->offset = v->at + e->offset;
        err->why = e->why;
    }
    return st;
}

/* "models":{...}: each model's desc (into d) or state (into vm) through
 * its own reader; a model the layer does not hold is an error. */
static hwp_status hwp__vm_read_models(hwp_json *j, hwp_vm_desc *d, hwp_vm *vm,
                                      hwp_json_err *err) {
    char key[16];
    hwp_json_err e = {0, NULL};
    hwp__vm_span v;
    hwp_status st = HWP_OK;
    if (!hwp_json_object(j)) return hwp_json_status(j, err);
    while (st == HWP_OK && hwp_json_member(j, key, sizeof key)) {
        if (!hwp__vm_span_of(j, &v)) break;
        if (vm) {
#define HWP__VM_READ(bit, name, m)                                               \
    if (hwp_json_key_is(key, name) && (vm->desc.models & (bit))) {                \
        st = hwp__vm_sub(hwp_##m##_read_json(&vm->m, v.s, v.n, &e), &v, &e, err); \
        continue;                                                                \
    }
            HWP__VM_MODELS(HWP__VM_READ)
#undef HWP__VM_READ
        } else {
#define HWP__VM_READ(bit, name, m)                                               \
    if (hwp_json_key_is(key, name)) {                                            \
        st = hwp__vm_sub(hwp_##m##_read_desc(&d->m, v.s, v.n, &e), &v, &e, err); \
        continue;                                                                \
    }
            HWP__VM_READ(HWP_VM_PM, "profileme", pm)
            HWP__VM_DESC_MODELS(HWP__VM_READ)
#undef HWP__VM_READ
            if (hwp_json_key_is(key, "pm_table")) continue; /* its desc is pm's */
        }
        j->pos = v.at;
        hwp_json_fail(j, "vm: a model the layer does not hold");
    }
    return st != HWP_OK ? st : hwp_json_status(j, err);
}

HWP_API hwp_status hwp_vm_read_desc(hwp_vm_desc *d, const char *json, size_t n,
                                    hwp_json_err *err) {
    hwp_json j;
    char key[16];
    hwp_status st = HWP_OK;
    bool got = false;
    if (!d) return HWP_EINVAL;
    hwp__zero(d, sizeof *d);
    hwp_json_init(&j, json, n);
    if (hwp_json_envelope(&j, "vm", 1))
        while (st == HWP_OK && hwp_json_member(&j, key, sizeof key)) {
            if (!got && hwp_json_key_is(key, "desc"))
                got = hwp__field_read(&j, d, hwp__vm_desc_f, HWP__N(hwp__vm_desc_f), false);
            else if (hwp_json_key_is(key, "models"))
                st = hwp__vm_read_models(&j, d, NULL, err);
            else
                hwp_json_skip(&j);
        }
    if (st != HWP_OK) return st;
    if (hwp_json_end(&j) && !got) hwp_json_fail(&j, "json: report without a \"desc\"");
    return hwp_json_status(&j, err);
}

#define HWP__VM_UNIT_WHY "vm: a unit is [id, pc, samples, squares, est, lo, hi]"

/* One unit: [id or header pc, entry pc, samples, sum of squares, est, lo,
 * hi] (the estimates are derived: read and dropped). */
static bool hwp__vm_read_unit(hwp_json *j, hwp_vm *vm, bool funcs) {
    uint64_t v[4];
    double x;
    hwp__vm_unit *u;
    unsigned k = 0;
    if (!hwp_json_array(j)) return false;
    for (; hwp_json_next(j); k++)
        if (k > 6 || !(k < 4 ? hwp_json_u64(j, &v[k]) : hwp_json_f64(j, &x)))
            return hwp_json_fail(j, HWP__VM_UNIT_WHY);
    if (j->why || k != 7) return hwp_json_fail(j, HWP__VM_UNIT_WHY);
    if (funcs && v[0] >= vm->desc.funcs) return hwp_json_fail(j, "vm: a function id past desc.funcs");
    u = funcs ? &vm->funcs[v[0]] : hwp__vm_loop_slot(vm, v[0], true);
    if (!u || u->n.k) return hwp_json_fail(j, "vm: a unit repeated, or no loop slot for it");
    u->pc = v[1] + 1u;
    u->n.k = v[2];
    u->n.k2 = v[3];
    return true;
}

static bool hwp__vm_read_units(hwp_json *j, hwp_vm *vm, bool funcs) {
    if (!hwp_json_array(j)) return false;
    while (hwp_json_next(j))
        if (!hwp__vm_read_unit(j, vm, funcs)) return false;
    return !j->why;
}

static const char *hwp__vm_fill_any(void *d) { return hwp__vm_fill((hwp_vm_desc *)d); }

HWP_API hwp_status hwp_vm_read_json(hwp_vm *vm, const char *json, size_t n,
                                    hwp_json_err *err) {
    hwp_json j;
    hwp_vm_desc d;
    hwp_vm_stats s;
    char key[16];
    hwp_status st;
    if (!hwp__vm_ok(vm)) return HWP_EINVAL;
    hwp__zero(&d, sizeof d);
    hwp_json_init(&j, json, n);
    st = hwp__field_begin(&j, &vm->head, "vm", &d, &vm->desc, hwp__vm_desc_f,
                          HWP__N(hwp__vm_desc_f), hwp__vm_fill_any, err);
    if (st != HWP_OK) return st;
    hwp_vm_reset(vm); /* what follows replaces everything; a failure resets again */
    hwp__zero(&s, sizeof s);
    while (st == HWP_OK && hwp_json_member(&j, key, sizeof key)) {
        if (hwp_json_key_is(key, "stats"))
            hwp__field_read(&j, &s, hwp__vm_stats_f, HWP__N(hwp__vm_stats_f), true);
        else if (hwp_json_key_is(key, "funcs"))
            hwp__vm_read_units(&j, vm, true);
        else if (hwp_json_key_is(key, "loops"))
            hwp__vm_read_units(&j, vm, false);
        else if (hwp_json_key_is(key, "models"))
            st = hwp__vm_read_models(&j, NULL, vm, err);
        else
            hwp_json_skip(&j); /* scale: derived */
    }
    if (st == HWP_OK) {
        hwp_json_end(&j);
        st = hwp_json_status(&j, err);
    }
    if (st != HWP_OK) {
        const char *why = j.why ? j.why : hwp_why(vm);
        hwp_vm_reset(vm);
        return hwp__fail(&vm->head, st, why);
    }
    vm->st = s;
    vm->armed = vm->left;  /* the clock is st.events */
    vm->ticked = s.events; /* its bytecodes were charged where they ran */
    return HWP_OK;
}

HWP_API void hwp_vm_write_text(const hwp_vm *vm, const hwp_writer *w) {
    hwp_vm_stats s;
    if (hwp_vm_get_stats(vm, &s) != HWP_OK) {
        hwp_put_str(w, "vm: not initialised\n");
        return;
    }
    hwp_put_str_u64(w, "vm: bytecodes ", s.events);
    hwp_put_str_u64(w, ", in bursts ", s.burst_ops);
    hwp_put_str_u64(w, " (", s.bursts);
    hwp__put_str_f64(w, " bursts, scale ", hwp_vm_scale(vm), 2);
    hwp_put_str_u64(w, "), decisions ", s.decisions);
    hwp_put_str_u64(w, ", ProfileMe samples ", s.samples);
    hwp_put_str_u64(w, ", rejected ", s.rejected);
    hwp_put_str_u64(w, ", dropped ", s.dropped);
    if (vm->desc.models & HWP_VM_PATH) { /* the policy is the layer's choice */
        hwp_put_str_u64(w, ", hot path table ", vm->hpt.desc.entries);
        hwp_put_str_u64(w, "x", vm->hpt.desc.ways);
        hwp_put_str(w, vm->hpt.desc.repl == HWP_HPT_LRU ? " LRU" : " LFU ");
        if (vm->hpt.desc.repl != HWP_HPT_LRU)
            hwp_put_str(w, hwp__hpt_policy_names[vm->hpt.desc.policy]);
    }
    hwp_put_str(w, "\n");
}

#endif /* HWPROF_VM_IMPL_DONE */
#endif /* HWPROF_IMPL */
#endif /* HWPROF_VM_H */
