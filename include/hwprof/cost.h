/* SPDX-License-Identifier: MIT */
/* hwprof/cost.h: the cycle-cost shim.
 *
 * Each model knows what its hardware would have cost the host: interrupts,
 * messages, pipeline stalls. A host keeps one hwp_cost per host CPU (vCPU,
 * thread), hands a pointer to the models it runs, advances the cost's clock
 * with its own time, and asks hwp_cost_take() "how many stall cycles did
 * profiling add since I last asked" to charge them to its virtual time
 * (an interpreter's cycle counter, QEMU's icount, or a report of modelled
 * overhead %). A model given a NULL cost pays nothing.
 *
 * The per-operation figures live in one table, HWP__COST_OPS below, with
 * the paper each default comes from. Two kinds of entry:
 *   charged   the model calls hwp_cost_charge() with it: host-visible
 *             overhead (an interrupt, a message handler, a commit stall);
 *   latency   the model reads it with hwp_cost_cycles() to time its own
 *             hardware (a branch-queue service time, a co-processor
 *             operation); it reaches the host only through the stalls or
 *             drops that timing causes.
 * Change any figure with hwp_cost_set() or the desc.
 *
 * SOURCES (cited below by first author)
 *   Dean et al., "ProfileMe: Hardware Support for Instruction-Level
 *     Profiling on Out-of-Order Processors", MICRO-30, 1997
 *   Sastry, Bodik & Smith, "Rapid Profiling via Stratified Sampling",
 *     ISCA 2001
 *   Mysore, Agrawal, Sherwood, Shrivastava & Suri, "Profiling over
 *     Adaptive Ranges", CGO 2006
 *   Vaswani, Jacob & Srikant, "Representing, Detecting and Profiling Paths
 *     in Hardware", IISc technical report IISc-CSA-TR-2004-2
 *   Zilles & Sohi, "A Programmable Co-Processor for Profiling", HPCA-7, 2001
 *
 * API
 *   hwp_cost_init(c, desc)          desc may be NULL: all paper defaults
 *   hwp_cost_set(c, op, cycles)     override one figure (0 is allowed)
 *   hwp_cost_cycles(c, op)          figure in force (default if c is NULL)
 *   hwp_cost_charge(c, op, n)       add n operations (inline, NULL-safe)
 *   hwp_cost_stall(c, op, cycles)   add raw stall cycles under op
 *   hwp_cost_tick(c, n)             the host's clock advanced by n
 *   hwp_cost_clock(c)               the host's clock
 *   hwp_cost_take(c)                overhead cycles since the last take
 *   hwp_cost_overhead_pct(c)        total overhead / host clock * 100
 *   hwp_cost_model_cycles(c, m)     overhead charged by one model
 *   hwp_cost_merge(dst, src)        fold per-vCPU costs together
 *   hwp_cost_write_text/json(c, w)  reports
 */
#ifndef HWPROF_COST_H
#define HWPROF_COST_H

#include "base.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- the component list ------------------------------------------------
 *
 * One row per component: X(c, header, envelope, kind, model).
 *   c         the C prefix: hwp_<c>, hwp_<c>_desc, hwp_<c>_stats and the
 *             contract's calls hwp_<c>_bytes, _init, _reset, _merge,
 *             _get_stats, _get_desc, _write_json, _write_text, _read_desc,
 *             _read_json, _desc_fields
 *   header    the header that defines it (<header>.h), which is also its
 *             page (docs/<header>.md), its conformance rows
 *             (tests/conformance/<header>.c) and its tests' and
 *             benchmarks' folders
 *   envelope  the "model" its JSON report carries
 *   kind      MODEL: the first component of a model: the cost shim's
 *             hwp_model HWP_MODEL_<model>, named "<header>", and the
 *             hosts' adapter hwx__adapter_<c> (examples/common/hwx_<c>.c);
 *             PART: another component of that model, charged to it;
 *             LAYER: the VM layer, a front end to the models
 *   model     the hwp_model suffix
 * Whatever handles every component reads this list: cost.h's model enum,
 * the hosts' adapter registry, the report tool's loader, hwprof-bench,
 * the conformance driver, the fuzz targets and the build (through
 * tests/components.py for Meson and Python); the test compile/components
 * fails when a component lacks what the list implies. A new model adds
 * its row here and its operations to HWP__COST_OPS below. The core comes
 * first: the hosts' core adapter times each instruction before the
 * other models see it. */
#define HWP_COMPONENTS(X)                                                      \
    /* the processor core: the other models' clock and stages          */    \
    X(core, core, "core", MODEL, CORE)                                         \
    /* Dean et al., ProfileMe: the sampler, the software's PC table     */    \
    X(pm, profileme, "profileme", MODEL, PROFILEME)                            \
    X(pm_table, profileme, "pm_table", PART, PROFILEME)                        \
    /* Sastry et al., stratified sampling: compressor, accumulator      */    \
    X(strat, stratified, "strat", MODEL, STRAT)                                \
    X(strat_acc, stratified, "strat_acc", PART, STRAT)                         \
    /* Mysore et al., Range Adaptive Profiling: 1-D and 2-D trees       */    \
    X(rap, rap, "rap", MODEL, RAP)                                             \
    X(rap2, rap, "rap2", PART, RAP)                                            \
    /* Vaswani et al., path profiling: stack, hot path table, phases    */    \
    X(path, pathprof, "path", MODEL, PATH)                                     \
    X(hpt, pathprof, "hpt", PART, PATH)                                        \
    X(phase, pathprof, "phase", PART, PATH)                                    \
    /* Zilles & Sohi, the profiling co-processor; its sampling baseline */    \
    X(cp, coproc, "coproc", MODEL, COPROC)                                     \
    X(cp_simple, coproc, "coproc_simple", PART, COPROC)                        \
    /* the VM-facing layer in front of the models                       */    \
    X(vm, vm, "vm", LAYER, NONE)

/* The contract's calls of component c, declared here once so that no
 * component's signatures can drift (docs/ARCHITECTURE.md, "The
 * contract"); each header says what its own do where the contract's
 * words are not enough:
 *   bytes(d)                    storage a desc needs (0: invalid desc)
 *   init(x, storage, bytes, d, cost)  build on caller memory
 *   reset(x)                    back to right after init
 *   merge(dst, src)             fold src into dst (same desc)
 *   get_stats(x, out), get_desc(x, out)  the counters; the desc in force
 *   write_text(x, w), write_json(x, w)   the reports
 *   read_desc(d, json, n, err)  a report's desc
 *   read_json(x, json, n, err)  a report back into an instance
 *   desc_fields(&n)             the desc's field table (base.h) */
#define HWP__CONTRACT(c)                                                           \
    HWP_API size_t hwp_##c##_bytes(const hwp_##c##_desc *d);                        \
    HWP_API hwp_status hwp_##c##_init(hwp_##c *x, void *storage, size_t bytes,      \
                                      const hwp_##c##_desc *d, hwp_cost *cost);     \
    HWP_API hwp_status hwp_##c##_reset(hwp_##c *x);                                 \
    HWP_API hwp_status hwp_##c##_merge(hwp_##c *dst, const hwp_##c *src);           \
    HWP_API hwp_status hwp_##c##_get_stats(const hwp_##c *x, hwp_##c##_stats *out); \
    HWP_API hwp_status hwp_##c##_get_desc(const hwp_##c *x, hwp_##c##_desc *out);   \
    HWP_API void hwp_##c##_write_text(const hwp_##c *x, const hwp_writer *w);       \
    HWP_API void hwp_##c##_write_json(const hwp_##c *x, const hwp_writer *w);       \
    HWP_API hwp_status hwp_##c##_read_desc(hwp_##c##_desc *d, const char *json,     \
                                           size_t n, hwp_json_err *err);            \
    HWP_API hwp_status hwp_##c##_read_json(hwp_##c *x, const char *json, size_t n,  \
                                           hwp_json_err *err);                      \
    HWP_API const hwp_field *hwp_##c##_desc_fields(size_t *n)

/* HWP_ONLY_##kind(...): the arguments for a MODEL row, else nothing;
 * public, for hosts that expand the list (a registry of model adapters). */
#define HWP_ONLY_MODEL(...) __VA_ARGS__
#define HWP_ONLY_PART(...)
#define HWP_ONLY_LAYER(...)

/* The models, for attributing overhead: the MODEL rows of the component
 * list (base.h), in its order. */
#define HWP__X_MODEL_ENUM(c, header, envelope, kind, model) HWP_ONLY_##kind(HWP_MODEL_##model,)
typedef enum hwp_model { HWP_COMPONENTS(HWP__X_MODEL_ENUM) HWP_MODEL_COUNT } hwp_model;
#undef HWP__X_MODEL_ENUM

/* X(op, model, default cycles, kind, source)
 * kind: 1 = charged to the host, 0 = latency the model times itself with. */
#define HWP__COST_OPS(X)                                                          \
    /* ProfileMe (Dean et al.): the paper gives no cycle figure; we charge one */    \
    /* interrupt of the stratified paper's measured 214 cycles per delivery */    \
    /* and a DCPI-style handler cost per sample read out.                   */    \
    X(PM_INTERRUPT, PROFILEME, 214, 1, "per delivery (one sample or a full buffer); Dean et al. gives none, figure from Sastry et al. sec. 5.3.2") \
    X(PM_SAMPLE, PROFILEME, 20, 1, "handler time per sample read out; within the 10-30 of Zilles & Sohi sec. 3.4") \
    /* Stratified sampling (Sastry et al., section 5.3.2).                        */   \
    X(STRAT_INTERRUPT, STRAT, 214, 1, "per interrupt (Anderson et al.), Sastry et al. sec. 5.3.2") \
    X(STRAT_MESSAGE, STRAT, 30, 1, "per message, worst case; the paper's 30 already holds <3 of amortised interrupt, Sastry et al. sec. 5.3.2") \
    /* RAP (Mysore et al., section 3.3): the engine runs beside the core;  */   \
    /* the host stalls only when stage 0 is full (rap.h, hwp__rap_engine). */   \
    /* The engine is a pipeline: an update takes RAP_EVENT cycles from     */   \
    /* stage 1 to stage 4, and a new one enters every RAP_ISSUE cycles.    */   \
    X(RAP_EVENT, RAP, 4, 0, "engine latency of a tree update, stage 1 to the split comparator: 4 cycles an event on average, 2 each for TCAM and SRAM, Mysore et al. sec. 3.4") \
    X(RAP_ISSUE, RAP, 2, 0, "engine issue interval: the pipeline takes one update every 2 cycles, its slowest stages (TCAM, SRAM) being 2 cycles, Mysore et al. sec. 3.3-3.4") \
    X(RAP_SPLIT, RAP, 5, 0, "engine pipeline flush and replay on a split: 5 stages, Mysore et al. sec. 3.3") \
    X(RAP_MERGE_NODE, RAP, 2, 0, "engine cycles per node scanned in a merge batch: one TCAM + SRAM access pair, Mysore et al. sec. 3.3") \
    X(RAP_STALL, RAP, 1, 1, "host stall cycle while the RAP stage-0 buffer is full") \
    /* Path profiler (Vaswani et al., section 8.2).                                */   \
    X(PATH_PUSH, PATH, 1, 0, "path-stack push, Vaswani et al. sec. 8.2") \
    X(PATH_POP, PATH, 1, 0, "path-stack pop (plus the HPT update), Vaswani et al. sec. 8.2") \
    X(PATH_UPDATE, PATH, 1, 0, "path-stack update; 1 makes a BL backward branch 5 cycles as sec. 8.2 states") \
    X(PATH_UPDATE_COUNT, PATH, 1, 0, "path-stack update-count; 1 makes a BL call 2 cycles as sec. 8.2 states") \
    X(PATH_HPT_UPDATE, PATH, 1, 0, "HPT hit update; our reading, sec. 8.2 quotes only the miss") \
    X(PATH_HPT_MISS, PATH, 1, 0, "HPT miss, per log2(ways): 2 cycles at 4 ways, Vaswani et al. sec. 8.2") \
    X(PATH_BR_BACKWARD, PATH, 5, 0, "backward branch service time (BL, HPT miss), Vaswani et al. sec. 8.2; pathprof.h sums the op latencies, tests check they give this") \
    X(PATH_BR_INDIRECT, PATH, 5, 0, "indirect branch service time (BL, HPT miss), Vaswani et al. sec. 8.2; checked like BR_BACKWARD") \
    X(PATH_BR_CALL, PATH, 2, 0, "call service time (BL), Vaswani et al. sec. 8.2; checked like BR_BACKWARD") \
    X(PATH_STALL, PATH, 1, 1, "commit stall cycle while the branch queue is full") \
    X(PATH_HPT_AGE, PATH, 1, 1, "HPT aging pass, per set: one read-shift-write of a set's priorities; hwprof's aging policy, the paper has none") \
    /* Co-processor (Zilles & Sohi, sections 3.4 and 4).                          */   \
    X(COPROC_INTERRUPT, COPROC, 214, 1, "per interrupt; Zilles & Sohi gives none, figure from Sastry et al. sec. 5.3.2") \
    X(COPROC_SAMPLE, COPROC, 20, 1, "handler time per sample or slot copied out: 10-30, Zilles & Sohi sec. 3.4") \
    X(COPROC_WORD, COPROC, 1, 1, "per word transferred to the host at an interrupt") \
    X(COPROC_OP, COPROC, 1, 0, "co-processor cycles per CAM, data-array or LFSR operation: one microcode cycle, Zilles & Sohi sec. 3.3") \
    X(COPROC_RMW, COPROC, 1, 0, "data-array read-modify-write: one access, the array supports it directly, Zilles & Sohi sec. 3.3") \
    X(COPROC_DISPATCH, COPROC, 1, 0, "the done branch: fetch the head sample and jump to its class routine, Zilles & Sohi sec. 3.4")

typedef enum hwp_cost_op {
#define HWP__COST_ENUM(op, model, cycles, kind, src) HWP_COST_##op,
    HWP__COST_OPS(HWP__COST_ENUM)
#undef HWP__COST_ENUM
    HWP_COST_OP_COUNT
} hwp_cost_op;

typedef struct hwp_cost_desc {
    /* Per-op cycles; 0 keeps the paper default (use hwp_cost_set for a
     * true zero). */
    uint32_t cycles[HWP_COST_OP_COUNT];
} hwp_cost_desc;

typedef struct hwp_cost {
    hwp_head head;
    uint32_t cycles[HWP_COST_OP_COUNT]; /* figures in force              */
    uint64_t count[HWP_COST_OP_COUNT];  /* operations charged            */
    uint64_t spent[HWP_COST_OP_COUNT];  /* cycles charged per operation  */
    uint64_t total;                     /* overhead cycles charged       */
    uint64_t taken;                     /* total at the last take        */
    uint64_t clock;                     /* host time advanced by tick    */
} hwp_cost;

#define HWP__COST_MAGIC HWP__MAGIC('c', 'o', 's', 't')

HWP_INLINE uint32_t hwp_cost_default(hwp_cost_op op) {
    static const uint32_t table[] = {
#define HWP__COST_DEF(op, model, cycles, kind, src) cycles,
        HWP__COST_OPS(HWP__COST_DEF)
#undef HWP__COST_DEF
    };
    return (unsigned)op < (unsigned)HWP_COST_OP_COUNT ? table[op] : 0u;
}

HWP_INLINE uint32_t hwp_cost_cycles(const hwp_cost *c, hwp_cost_op op) {
    return c ? c->cycles[op] : hwp_cost_default(op);
}

HWP_INLINE void hwp_cost_stall(hwp_cost *c, hwp_cost_op op, uint64_t cycles) {
    if (c) {
        c->count[op] += 1;
        c->spent[op] += cycles;
        c->total += cycles;
    }
}

HWP_INLINE void hwp_cost_charge(hwp_cost *c, hwp_cost_op op, uint64_t n) {
    if (c) {
        uint64_t cyc = n * c->cycles[op];
        c->count[op] += n;
        c->spent[op] += cyc;
        c->total += cyc;
    }
}

HWP_INLINE void hwp_cost_tick(hwp_cost *c, uint64_t n) {
    if (c) c->clock += n;
}

HWP_INLINE uint64_t hwp_cost_take(hwp_cost *c) {
    uint64_t d;
    if (!c) return 0;
    d = c->total - c->taken;
    c->taken = c->total;
    return d;
}

/* The host's clock: everything hwp_cost_tick() added. */
HWP_INLINE uint64_t hwp_cost_clock(const hwp_cost *c) { return c ? c->clock : 0; }

/* Modelled overhead in percent of the host's clock (0 before any tick). */
HWP_INLINE double hwp_cost_overhead_pct(const hwp_cost *c) {
    return c && c->clock ? 100.0 * (double)c->total / (double)c->clock : 0.0;
}

HWP_API hwp_status hwp_cost_init(hwp_cost *c, const hwp_cost_desc *d);
HWP_API hwp_status hwp_cost_set(hwp_cost *c, hwp_cost_op op, uint32_t cycles);
/* Keep the figures, zero the counts; HWP_EINVAL for a bad handle, like
 * every component's reset. */
HWP_API hwp_status hwp_cost_reset(hwp_cost *c);
HWP_API hwp_status hwp_cost_merge(hwp_cost *dst, const hwp_cost *src);
HWP_API uint64_t hwp_cost_model_cycles(const hwp_cost *c, hwp_model m);
HWP_API const char *hwp_cost_op_name(hwp_cost_op op);
HWP_API const char *hwp_cost_op_source(hwp_cost_op op);
HWP_API hwp_model hwp_cost_op_model(hwp_cost_op op);
HWP_API bool hwp_cost_op_charged(hwp_cost_op op);
HWP_API const char *hwp_model_name(hwp_model m);
HWP_API void hwp_cost_write_text(const hwp_cost *c, const hwp_writer *w);
HWP_API void hwp_cost_write_json(const hwp_cost *c, const hwp_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_COST_H */

/* ======================================================================= */
#if defined(HWPROF_IMPL) && !defined(HWPROF_COST_IMPL)
#define HWPROF_COST_IMPL

#ifdef __cplusplus
extern "C" {
#endif

static const struct hwp__cost_info {
    const char *name, *source;
    hwp_model model;
    bool charged;
} hwp__cost_info[] = {
#define HWP__COST_INFO(op, model, cycles, kind, src) \
    {#op, src, HWP_MODEL_##model, kind != 0},
    HWP__COST_OPS(HWP__COST_INFO)
#undef HWP__COST_INFO
};

HWP_API hwp_status hwp_cost_init(hwp_cost *c, const hwp_cost_desc *d) {
    unsigned i;
    if (!c) return HWP_EINVAL;
    hwp__zero(c, sizeof *c);
    c->head.magic = HWP__COST_MAGIC;
    for (i = 0; i < HWP_COST_OP_COUNT; i++)
        c->cycles[i] = d && d->cycles[i] ? d->cycles[i]
                                         : hwp_cost_default((hwp_cost_op)i);
    return hwp__fail(&c->head, HWP_OK, "");
}

HWP_API hwp_status hwp_cost_set(hwp_cost *c, hwp_cost_op op, uint32_t cycles) {
    if (!c || c->head.magic != HWP__COST_MAGIC) return HWP_EINVAL;
    if ((unsigned)op >= (unsigned)HWP_COST_OP_COUNT)
        return hwp__fail(&c->head, HWP_EINVAL, "cost: no such operation");
    c->cycles[op] = cycles;
    return hwp__fail(&c->head, HWP_OK, "");
}

HWP_API hwp_status hwp_cost_reset(hwp_cost *c) {
    if (!c || c->head.magic != HWP__COST_MAGIC) return HWP_EINVAL;
    hwp__zero(c->count, sizeof c->count);
    hwp__zero(c->spent, sizeof c->spent);
    c->total = c->taken = c->clock = 0;
    return hwp__fail(&c->head, HWP_OK, "");
}

HWP_API hwp_status hwp_cost_merge(hwp_cost *dst, const hwp_cost *src) {
    unsigned i;
    if (!dst || !src || dst->head.magic != HWP__COST_MAGIC ||
        src->head.magic != HWP__COST_MAGIC)
        return HWP_EINVAL;
    for (i = 0; i < HWP_COST_OP_COUNT; i++) {
        dst->count[i] += src->count[i];
        dst->spent[i] += src->spent[i];
    }
    dst->total += src->total;
    dst->taken += src->taken;
    dst->clock += src->clock;
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API uint64_t hwp_cost_model_cycles(const hwp_cost *c, hwp_model m) {
    uint64_t sum = 0;
    unsigned i;
    if (!c) return 0;
    for (i = 0; i < HWP_COST_OP_COUNT; i++)
        if (hwp__cost_info[i].model == m) sum += c->spent[i];
    return sum;
}

HWP_API const char *hwp_cost_op_name(hwp_cost_op op) {
    return (unsigned)op < (unsigned)HWP_COST_OP_COUNT ? hwp__cost_info[op].name
                                                      : "?";
}

HWP_API const char *hwp_cost_op_source(hwp_cost_op op) {
    return (unsigned)op < (unsigned)HWP_COST_OP_COUNT
               ? hwp__cost_info[op].source
               : "?";
}

HWP_API hwp_model hwp_cost_op_model(hwp_cost_op op) {
    return (unsigned)op < (unsigned)HWP_COST_OP_COUNT ? hwp__cost_info[op].model
                                                      : HWP_MODEL_COUNT;
}

HWP_API bool hwp_cost_op_charged(hwp_cost_op op) {
    return (unsigned)op < (unsigned)HWP_COST_OP_COUNT &&
           hwp__cost_info[op].charged;
}

HWP_API const char *hwp_model_name(hwp_model m) {
#define HWP__X_MODEL_NAME(c, header, envelope, kind, model) HWP_ONLY_##kind(#header,)
    static const char *const names[] = {HWP_COMPONENTS(HWP__X_MODEL_NAME)};
#undef HWP__X_MODEL_NAME
    return (unsigned)m < (unsigned)HWP_MODEL_COUNT ? names[m] : "?";
}

HWP_API void hwp_cost_write_text(const hwp_cost *c, const hwp_writer *w) {
    unsigned m, i;
    if (!c) return;
    hwp_put_str_u64(w, "modelled overhead: ", c->total);
    hwp_put_str_u64(w, " cycles over ", c->clock);
    hwp__put_str_f64(w, " host cycles (", hwp_cost_overhead_pct(c), 3);
    hwp_put_str(w, "%)\n");
    for (m = 0; m < HWP_MODEL_COUNT; m++) {
        uint64_t cyc = hwp_cost_model_cycles(c, (hwp_model)m);
        if (!cyc) continue;
        hwp_put_str(w, "  ");
        hwp_put_str(w, hwp_model_name((hwp_model)m));
        hwp_put_str_u64(w, ": ", cyc);
        hwp_put_str(w, " cycles");
        for (i = 0; i < HWP_COST_OP_COUNT; i++) {
            if (hwp__cost_info[i].model != (hwp_model)m || !c->count[i] ||
                !hwp__cost_info[i].charged)
                continue;
            hwp_put_str_u64(w, ", ", c->count[i]);
            hwp_put_str(w, " x ");
            hwp_put_str(w, hwp__cost_info[i].name);
        }
        hwp_put_str(w, "\n");
    }
}

HWP_API void hwp_cost_write_json(const hwp_cost *c, const hwp_writer *w) {
    unsigned m, i;
    const char *sep = "";
    if (!c) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_str_u64(w, "{\"total_cycles\":", c->total);
    hwp_put_json_u64(w, "host_clock", c->clock);
    hwp_put_json_f64(w, "overhead_pct", hwp_cost_overhead_pct(c), 4);
    hwp_put_str(w, ",\"models\":{");
    for (m = 0; m < HWP_MODEL_COUNT; m++) {
        hwp__put_key(w, m ? "," : "", hwp_model_name((hwp_model)m));
        hwp_put_u64(w, hwp_cost_model_cycles(c, (hwp_model)m));
    }
    hwp_put_str(w, "},\"ops\":{");
    for (i = 0; i < HWP_COST_OP_COUNT; i++) {
        if (!c->count[i]) continue;
        hwp__put_key(w, sep, hwp__cost_info[i].name);
        sep = ",";
        hwp_put_str_u64(w, "{\"count\":", c->count[i]);
        hwp_put_json_u64(w, "cycles", c->spent[i]);
        hwp_put_str(w, "}");
    }
    hwp_put_str(w, "}}");
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_IMPL */
