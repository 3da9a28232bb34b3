/* SPDX-License-Identifier: MIT */
/* hwprof/coproc.h: the programmable profiling co-processor.
 *
 * Model of Zilles & Sohi, "A Programmable Co-Processor for Profiling",
 * HPCA-7 2001. Retired instructions pass an instruction filter
 * (sec. 3.1: opcode-class mask, a hashed PC masked and compared with a
 * match value to select one region of the program, and a bit table indexed
 * by hashed PCs that masks single instructions, with several hash
 * functions); the ones it tags enter a sample buffer of a fixed size in
 * bytes (sec. 3.1: full buffer = the sample is dropped and counted); a
 * small profiling processor takes them in order and runs one routine per
 * opcode class (sec. 3.4: the decoder/field extractor's class -> routine
 * table; here the routines are C callbacks playing the microcode). A
 * routine works with the processor's resources through this API (sec.
 * 3.3): an associative array (CAM with valid bits, match -> index,
 * invalidate-all), a data array with read-modify-write and saturating
 * arithmetic of any width, index registers of configurable width, an LFSR.
 * Each operation costs co-processor cycles (cost.h COPROC_OP / RMW /
 * DISPATCH); the co-processor runs at a configurable clock ratio to the
 * host, so routines slower than the sample arrival rate fill the buffer
 * and samples are dropped, as in the paper's timing simulation (sec. 5.1).
 * A routine ends with done or interrupt (sec. 3.4); at an interrupt the
 * host's handler copies state out and the cost shim charges the interrupt,
 * every word read and every sample/slot processed (sec. 3.5: overhead =
 * interrupts x samples per interrupt x cost per sample).
 *
 * Ready programs:
 *   load-value profiling, the case study (sec. 4 and the appendix): slots,
 *     informational replacement, failed/done counters, thrash detection
 *     and PC-filter partitioning, confidence masking, active-value
 *     re-selection, saturation rules, the invariance estimation algorithm;
 *   edge, call-stack, memory-dependence and cache-conflict profiling
 *     (sec. 3.6);
 *   the buffered value sampler it is compared with (sec. 5),
 *     hwp_cp_simple_*, on the same cost figures.
 * Interpretations of the word-stripped text are listed in docs/coproc.md.
 *
 * API (cold unless marked inline); docs/coproc.md is the guide
 *   co-processor (the contract of docs/ARCHITECTURE.md)
 *     hwp_cp_bytes(d), HWP_CP_BYTES(...)     storage, padding included
 *     hwp_cp_init(x, storage, bytes, d, cost)   storage of any alignment
 *     hwp_cp_insn(x, insn)           inline  one retired host instruction
 *     hwp_cp_load(x, pc, addr, value)  inline narrow entry point
 *     hwp_cp_tick(x, n)              inline  n instructions not handed over
 *     hwp_cp_sync(x)                 run the samples the co-processor has
 *                                    reached by now (host's current time)
 *     hwp_cp_flush(x)                run buffered samples, final interrupt
 *     hwp_cp_reset(x)                back to right after init
 *     hwp_cp_program_load(x, program)   download a custom program
 *     hwp_cp_get_stats(x, stats)     events, dropped, evicted, cycles, ...
 *     hwp_cp_merge(dst, src)         fold per-vCPU instances (no cycles)
 *     hwp_cp_clone(dst, storage, bytes, src, cost)   a running copy: flush
 *                                    it for what src would report now
 *     hwp_cp_write_text(x, w), hwp_cp_write_json(x, w)
 *     hwp_cp_read_desc(d, json, n, err), hwp_cp_read_json(x, json, n, err)
 *     hwp_cp_desc_fields, hwp_cp_lvp_desc_fields, hwp_cp_simple_desc_fields
 *   instruction filter (host side, sec. 3.1)
 *     hwp_cp_filter_classes(x, cls_mask)
 *     hwp_cp_filter_region(x, mask, match)
 *     hwp_cp_filter_mask_pc(x, pc), hwp_cp_filter_masked(x, pc) (inline)
 *     hwp_cp_filter_clear(x), hwp_cp_filter_idle(x, limit)
 *   resources for routines (inline, each charges co-processor cycles)
 *     hwp_cp_cam_match(x, key), hwp_cp_cam_valid(x, i)
 *     hwp_cp_cam_write(x, i, key), hwp_cp_cam_invalidate(x, i),
 *     hwp_cp_cam_invalidate_all(x)                                 (cold)
 *     hwp_cp_dread(x, a), hwp_cp_dwrite(x, a, v),
 *     hwp_cp_dsat_add(x, a, d, bits), hwp_cp_dsat_inc(x, a, bits)
 *     hwp_cp_ireg(x, r), hwp_cp_ireg_set(x, r, v), hwp_cp_ireg_width(x, r, b),
 *     hwp_cp_ireg_inc(x, r) (wraps), hwp_cp_ireg_sinc / _sdec (saturate)
 *     hwp_cp_rand(x)
 *   host access bus (charged as words transferred)
 *     hwp_cp_host_data(x, a), hwp_cp_host_cam(x, i), hwp_cp_host_reset(x)
 *   load-value profiling
 *     hwp_cp_lvp_start(x, lvp_desc)
 *     hwp_cp_lvp_estimates(x, out, cap)   (pc, value, inv., interval, n)
 *     hwp_cp_lvp_value(x, pc, vprof)      one PC's profile, O(1) (a JIT)
 *     hwp_cp_lvp_on_characterised(x, fn, ctx), hwp_cp_lvp_invalidate(x, pc)
 *   other applications (sec. 3.6)
 *     hwp_cp_edge_start(x), hwp_cp_edge(x, pc, &taken, &not_taken),
 *     hwp_cp_edge_target(x, pc, target)
 *     hwp_cp_callstack_start(x, ev_mask, ev_classes, depth),
 *     hwp_cp_callstack_count(x, sites, n),
 *     hwp_cp_callstack_key(sites, n), hwp_cp_callstack_contexts(x, out, cap)
 *     hwp_cp_memdep_start(x, gran_bits), hwp_cp_memdep_count(x, st, ld)
 *     hwp_cp_conflict_start(x, line_bits, sets), hwp_cp_conflict_set(x, set),
 *     hwp_cp_conflict_block(x, addr), hwp_cp_conflict_pc(x, pc)
 *   the buffered baseline sampler (sec. 5) and the metric
 *     hwp_cp_simple_bytes(d), HWP_CP_SIMPLE_BYTES(buffer, entries)
 *     hwp_cp_simple_init(s, storage, bytes, d, cost), _reset, _flush,
 *     _merge, _get_stats, _write_json, _write_text, _read_desc, _read_json
 *     hwp_cp_simple_clone(dst, storage, bytes, src, cost)   as hwp_cp_clone
 *     hwp_cp_simple_load(s, pc, value)   inline
 *     hwp_cp_simple_due(s), hwp_cp_simple_skip(s, n)   inline: batches of
 *                                        loads that take no sample
 *     hwp_cp_simple_estimates(s, out, cap)
 *     hwp_cp_simple_period_for(loads, overhead, d, cost)  equal overhead
 *     hwp_cp_simple_overhead(loads, period, d, cost)      its model
 *     hwp_cp_wrms(truth, n, est, m, min_inv)  weighted RMS invariance error
 */
#ifndef HWPROF_COPROC_H
#define HWPROF_COPROC_H

#include "base.h"
#include "cost.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sample-buffer fields (sec. 3.1: only the fields the current application
 * needs are captured, which sets how many samples the buffer holds). The
 * opcode class always travels with a sample: the decoder needs it. */
enum {
    HWP_CP_F_PC = 1u << 0,    /* 8 bytes */
    HWP_CP_F_NEXT = 1u << 1,  /* 8 bytes: next pc (branch outcome)     */
    HWP_CP_F_ADDR = 1u << 2,  /* 8 bytes: effective address or target  */
    HWP_CP_F_VALUE = 1u << 3, /* 8 bytes: loaded value                 */
    HWP_CP_F_EVENTS = 1u << 4, /* 4 bytes: class and event bits        */
    HWP_CP_F_ALL = 31u
};

/* What a routine returns (sec. 3.4: the done and interrupt branch
 * targets). RETRY interrupts the host and then runs the same sample
 * again, for a routine that found its arrays full. */
enum { HWP_CP_DONE = 0, HWP_CP_IRQ = 1, HWP_CP_IRQ_RETRY = 2 };

#define HWP_CP_NONE 0xFFFFFFFFu /* cam_match: no entry holds the key */
#define HWP_CP_IREGS 8u
#define HWP_CP_MAX_HASHES 4u

/* The running program. */
enum {
    HWP_CP_APP_NONE,
    HWP_CP_APP_CUSTOM,
    HWP_CP_APP_LVP,
    HWP_CP_APP_EDGE,
    HWP_CP_APP_CALLSTACK,
    HWP_CP_APP_MEMDEP,
    HWP_CP_APP_CONFLICT
};

typedef struct hwp_cp hwp_cp;

/* A routine for one opcode class: the microcode run per sample. */
typedef int (*hwp_cp_routine)(hwp_cp *x, const hwp_insn *s, void *ctx);
/* The host's interrupt (or filter-idle) handler. Returns how many samples
 * or slots it processed; each is charged COPROC_SAMPLE. */
typedef uint32_t (*hwp_cp_handler)(hwp_cp *x, void *ctx);

typedef struct hwp_cp_program {
    hwp_cp_routine routine[HWP_CLS_COUNT]; /* NULL: the class is skipped  */
    hwp_cp_handler on_interrupt;           /* may be NULL                 */
    hwp_cp_handler on_idle;                /* filter idle watchdog, NULL  */
    void *ctx;
    uint32_t cls_mask; /* opcode filter: HWP_CLS_BIT()s to tag            */
} hwp_cp_program;

typedef struct hwp_cp_desc {
    uint32_t buffer_bytes;   /* sample buffer, default 2048              */
    uint32_t fields;         /* HWP_CP_F_* captured, default F_ALL        */
    uint32_t cam_entries;    /* associative array entries, pow2, def. 256 */
    uint32_t data_words;     /* data array 64-bit words, pow2, def. 1024  */
    uint32_t bit_table_bits; /* PC bit table, pow2 >= 64, default 8192    */
    uint32_t n_hashes;       /* bit-table hash functions 1..4, default 2 */
    uint32_t clock_x16;      /* co-processor cycles per host instruction,
                                x16; default 16 (same clock, host IPC 1)  */
    uint32_t table_entries;  /* host-memory result table (edge, call
                                stack, dependences, conflicts), pow2,
                                default 4096                              */
    uint32_t lvp_loads;      /* host-memory load table, pow2, def. 2048  */
    uint32_t lvp_values;     /* values kept per load, default 8          */
    uint64_t seed;           /* LFSR seed (0 is allowed)                 */
} hwp_cp_desc;

/* Load-value profiling parameters (sec. 4, appendix); zero = default. */
typedef struct hwp_cp_lvp_desc {
    uint32_t slots;         /* pow2, 1 CAM entry + 4 data words each; 256 */
    uint32_t counter_bits;  /* hit/miss/total counters, default 8        */
    uint32_t resel_min;     /* hits+misses before invariance is tested;
                               default 16                                */
    uint32_t resel_shift;   /* re-select when invariance < 2^-shift:
                               hits << shift < hits + misses; default 3  */
    uint32_t keep_hits;     /* hits that make a region worth keeping
                               (slot off instead of re-selection); 32    */
    uint32_t failed_limit;  /* failed counter that interrupts; slots     */
    uint32_t done_limit;    /* slots turned off that interrupt; slots/2  */
    uint32_t thrash_mult;   /* thrash: replacements since the last
                               interrupt >= mult * slots; default 4      */
    uint32_t conf_samples;  /* samples before a confidence decision; 200 */
    uint32_t conf_hi_pct;   /* mask if top invariance >= this; 90        */
    uint32_t conf_lo_pct;   /* ... or <= this; 10                        */
    uint32_t min_visits;    /* slot copies before a confident mask; 2    */
    uint32_t max_visits;    /* mask after this many slot copies; 4       */
    uint32_t idle_limit;    /* filter-rejected loads in a row that move to
                               the next partition; 65536                 */
    uint32_t max_part_log2; /* at most 2^this partitions; 8              */
    uint32_t visit_loads;   /* a partition visit ends after this many
                               class-passing loads (accepted or not);
                               default 2^17 (our bound, see docs)        */
    uint32_t copy_min;      /* slots with fewer samples are removed by the
                               co-processor before the interrupt, not
                               copied (sec. 3.5: low information); 4     */
    uint32_t min_samples;   /* samples a load needs before its estimate
                               counts as characterised (reports, the
                               JIT callback); default 64                 */
    uint32_t resample_insns; /* masked loads are unmasked to be profiled
                               again at the first interrupt after every
                               this many host instructions (sec. 4.3:
                               phases need periodic re-sampling);
                               default 2^23, 0xFFFFFFFF never (ours)     */
} hwp_cp_lvp_desc;

/* Exact profile entry (tests and hosts build it beside the model). */
typedef struct hwp_cp_truth {
    uint64_t pc, value, count;
} hwp_cp_truth;

/* Estimated invariance of one (load, value) pair. */
typedef struct hwp_cp_est {
    uint64_t pc, value;
    double inv;       /* estimated invariance                          */
    double lo, hi;    /* 95% Wilson interval of inv given `samples`     */
    uint64_t samples; /* samples that measured this value's invariance
                         (hits and misses of its regions; the buffered
                         sampler: every sample of the load)          */
    uint32_t characterised; /* samples >= min_samples (and, for the
                               co-processor, min_visits visits)       */
} hwp_cp_est;

/* One PC's value profile for a JIT (hwp_cp_lvp_value): the top values by
 * estimated invariance, best first. */
#define HWP_CP_TOP 4u
typedef struct hwp_cp_vprof {
    uint64_t pc, samples;
    uint32_t nvals, characterised;
    uint64_t value[HWP_CP_TOP];
    double inv[HWP_CP_TOP], lo[HWP_CP_TOP], hi[HWP_CP_TOP];
} hwp_cp_vprof;

/* Called when a load first has min_samples samples: a JIT may specialise
 * its code then. Runs inside the host's interrupt handler. */
typedef void (*hwp_cp_characterised_fn)(void *ctx, const hwp_cp_vprof *p);

typedef struct hwp_cp_stats {
    uint64_t events;          /* host instructions seen                   */
    uint64_t dropped;         /* samples dropped at a full buffer, result
                                 entries and load records that did not fit */
    uint64_t evicted;         /* slots replaced before any copy (lvp) and
                                 value records given up by full lists     */
    uint64_t cycles;          /* modelled host cycles charged             */
    uint64_t class_passed;    /* passed the opcode filter                 */
    uint64_t region_rejected; /* PC region mismatch                       */
    uint64_t masked_rejected; /* PC masked in the bit table               */
    uint64_t tagged;          /* reached the sample buffer               */
    uint64_t buffer_dropped;  /* ... and found it full                    */
    uint64_t processed;       /* routines run                             */
    uint64_t cp_cycles;       /* co-processor cycles spent in routines    */
    uint64_t interrupts;      /* host interrupts (routines, idle, finish)  */
    uint64_t idle_events;     /* filter idle watchdog events              */
    uint64_t irq_samples;     /* samples/slots the handlers processed     */
    uint64_t words;           /* words read over the host access bus      */
    uint64_t table_lost;      /* result-table entries that did not fit    */
    uint64_t loads_lost;      /* load records that did not fit            */
    uint64_t values_lost;     /* value records that did not fit           */
    uint64_t samples_lost;    /* samples in slots whose load record did not
                                 fit (not copied, not charged)            */
    uint64_t visits;          /* partition visits (lvp)                   */
    uint64_t lowinfo_slots;   /* slots removed before an interrupt        */
    uint64_t lowinfo_samples; /* ... and the samples they held            */
    uint32_t buffer_samples;  /* capacity of the sample buffer            */
    uint32_t sample_bytes;    /* bytes per sample for the fields chosen   */
} hwp_cp_stats;

/* Private parts, exposed so the instance can live in static storage. */
typedef struct hwp__cp_ent { /* result table: (kind, k1, k2) -> a, b */
    uint64_t k1, k2, a, b;
    uint32_t kind, used;
} hwp__cp_ent;

typedef struct hwp__cp_val { /* one active-value region summary */
    uint64_t value, hits, misses;
    uint64_t vhits, vmisses; /* the same in the load's current visit     */
    double share; /* over the load's earlier visits, the sum of the
                     value's estimate from each visit alone times the
                     visit's weight (hwp__cp_estimate)                 */
} hwp__cp_val;

typedef struct hwp__cp_load { /* the host's memory record of one load */
    uint64_t pc, total, last_visit;
    uint64_t vtotal;  /* samples copied in the current visit           */
    uint64_t vweight; /* the earlier visits' weights, summed           */
    uint32_t visits, nvals, masked, used, told, pad_;
} hwp__cp_load;

typedef struct hwp__cp_lvp {
    hwp_cp_lvp_desc d;
    uint32_t cmax, cause, part_bits, idle_streak, complete;
    uint32_t part; /* the turn: partitions entered so far; the current part
                      is its low part_bits bits, at any level of the split */
    uint64_t replacements, ignored, thrash, masked, reselect, turned_off;
    uint64_t by_cause[6];
    uint64_t loads_lost, values_lost, visit, lowinfo_slots, lowinfo_samples;
    uint64_t invalidated, samples_lost, resampled, next_resample;
    hwp_cp_characterised_fn on_char;
    void *char_ctx;
} hwp__cp_lvp;

struct hwp_cp {
    hwp_head head;
    /* filter (hot) */
    uint64_t events, class_passed, region_rejected, masked_rejected;
    uint64_t idle, idle_limit, visit_n, visit_limit;
    uint32_t cls_mask, pc_mask, pc_match, bt_shift, n_hashes, app;
    uint64_t *bits;
    /* sample buffer and timing */
    hwp_insn *buf;
    uint64_t *arrive; /* arrival time of each buffered sample, x16 cycles */
    uint32_t cap, first, count, sample_bytes, clock_x16, fields;
    uint64_t cp_free; /* when the co-processor is next free, x16 cycles  */
    uint64_t tagged, dropped, processed;
    /* resources */
    uint64_t *cam_key, *cam_valid, *data;
    uint32_t *cam_hix; /* hash index over valid keys: entry + 1, 0 empty */
    uint32_t cam_n, cam_hmask, data_mask;
    uint32_t ireg[HWP_CP_IREGS], ireg_max[HWP_CP_IREGS];
    hwp_lfsr lfsr;
    uint32_t op_cyc, rmw_cyc, dispatch_cyc;
    uint64_t cyc; /* cycles of the routine now running */
    uint64_t cp_cycles, interrupts, idle_events, irq_samples, words;
    hwp_cost *cost;
    uint64_t host_cycles; /* modelled cycles this instance charged       */
    void *mem;            /* aligned storage, kept for reset             */
    uint32_t flushed;     /* nothing new since the last flush            */
    hwp_cp_program prog;
    /* host memory */
    hwp__cp_ent *tab;
    uint32_t tab_mask, app_arg[2]; /* the running program's parameters */
    uint64_t tab_lost;
    hwp__cp_load *loads;
    hwp__cp_val *vals;
    uint32_t loads_mask, vals_per;
    hwp__cp_lvp lvp;
    hwp_cp_desc d;
};

/* Storage for a desc whose fields are all set (no zero defaults), with
 * the alignment padding hwp_cp_bytes counts; fields_bytes is the sample
 * size of the chosen fields (36 for F_ALL: four 8-byte fields and 4 bytes
 * of class and events). */
#define HWP__CP_A(n) ((((size_t)(n)) + 15u) & ~(size_t)15u)
#define HWP_CP_BYTES(buffer_bytes, fields_bytes, cam_entries, data_words,    \
                     bit_table_bits, table_entries, lvp_loads, lvp_values)    \
    ((size_t)HWP__ALIGN - 1u + HWP__CP_A((size_t)((buffer_bytes) / (fields_bytes)) * 40u) +            \
     HWP__CP_A((size_t)((buffer_bytes) / (fields_bytes)) * 8u) +             \
     HWP__CP_A((size_t)(cam_entries) * 8u) +                                 \
     HWP__CP_A(((size_t)(cam_entries) + 63u) / 64u * 8u) +                   \
     HWP__CP_A((size_t)(cam_entries) * 8u) +                                 \
     HWP__CP_A((size_t)(data_words) * 8u) +                                  \
     HWP__CP_A((size_t)(bit_table_bits) / 8u) +                              \
     HWP__CP_A((size_t)(table_entries) * sizeof(hwp__cp_ent)) +              \
     HWP__CP_A((size_t)(lvp_loads) * sizeof(hwp__cp_load)) +                 \
     HWP__CP_A((size_t)(lvp_loads) * (lvp_values) * sizeof(hwp__cp_val)))

/* The contract's calls (cost.h, HWP__CONTRACT). */
HWP__CONTRACT(cp);
HWP_API hwp_status hwp_cp_program_load(hwp_cp *x, const hwp_cp_program *p);
HWP_API hwp_status hwp_cp_sync(hwp_cp *x);
HWP_API hwp_status hwp_cp_flush(hwp_cp *x);
HWP_API hwp_status hwp_cp_clone(hwp_cp *dst, void *storage, size_t bytes,
                                const hwp_cp *src, hwp_cost *cost);
/* The load-value profiler's desc fields (base.h's hwp_field). */
HWP_API const hwp_field *hwp_cp_lvp_desc_fields(size_t *n);

HWP_API hwp_status hwp_cp_filter_classes(hwp_cp *x, uint32_t cls_mask);
HWP_API hwp_status hwp_cp_filter_region(hwp_cp *x, uint32_t mask,
                                        uint32_t match);
HWP_API hwp_status hwp_cp_filter_mask_pc(hwp_cp *x, uint64_t pc);
HWP_API hwp_status hwp_cp_filter_clear(hwp_cp *x);
HWP_API hwp_status hwp_cp_filter_idle(hwp_cp *x, uint64_t limit);

HWP_API void hwp_cp_cam_write(hwp_cp *x, uint32_t i, uint64_t key);
HWP_API void hwp_cp_cam_invalidate(hwp_cp *x, uint32_t i);
HWP_API void hwp_cp_cam_invalidate_all(hwp_cp *x);
HWP_API uint64_t hwp_cp_host_data(hwp_cp *x, uint32_t a);
HWP_API uint64_t hwp_cp_host_cam(hwp_cp *x, uint32_t i);
HWP_API void hwp_cp_host_reset(hwp_cp *x);

HWP_API hwp_status hwp_cp_lvp_start(hwp_cp *x, const hwp_cp_lvp_desc *ld);
HWP_API size_t hwp_cp_lvp_estimates(const hwp_cp *x, hwp_cp_est *out,
                                    size_t cap);
HWP_API bool hwp_cp_lvp_value(const hwp_cp *x, uint64_t pc, hwp_cp_vprof *out);
HWP_API hwp_status hwp_cp_lvp_on_characterised(hwp_cp *x,
                                               hwp_cp_characterised_fn fn,
                                               void *ctx);
HWP_API hwp_status hwp_cp_lvp_invalidate(hwp_cp *x, uint64_t pc);
HWP_API hwp_status hwp_cp_edge_start(hwp_cp *x);
HWP_API bool hwp_cp_edge(const hwp_cp *x, uint64_t pc, uint64_t *taken,
                         uint64_t *not_taken);
HWP_API uint64_t hwp_cp_edge_target(const hwp_cp *x, uint64_t pc,
                                    uint64_t target);
HWP_API hwp_status hwp_cp_callstack_start(hwp_cp *x, uint32_t ev_mask,
                                          uint32_t ev_classes, uint32_t depth);
HWP_API uint64_t hwp_cp_callstack_count(const hwp_cp *x, const uint64_t *sites,
                                        uint32_t n);
/* A calling context as the call-stack program keeps it: only the hash of
 * its innermost call sites (hwp_cp_callstack_key), never the sites. A
 * host that wants names keeps its own key -> sites dictionary. */
typedef struct hwp_cp_ctx {
    uint64_t key, events;
} hwp_cp_ctx;
HWP_API uint64_t hwp_cp_callstack_key(const uint64_t *sites, uint32_t n);
HWP_API size_t hwp_cp_callstack_contexts(const hwp_cp *x, hwp_cp_ctx *out,
                                         size_t cap);
HWP_API hwp_status hwp_cp_memdep_start(hwp_cp *x, uint32_t gran_bits);
HWP_API uint64_t hwp_cp_memdep_count(const hwp_cp *x, uint64_t store_pc,
                                     uint64_t load_pc);
HWP_API hwp_status hwp_cp_conflict_start(hwp_cp *x, uint32_t line_bits,
                                         uint32_t sets);
HWP_API uint64_t hwp_cp_conflict_set(const hwp_cp *x, uint64_t set);
HWP_API uint64_t hwp_cp_conflict_block(const hwp_cp *x, uint64_t addr);
HWP_API uint64_t hwp_cp_conflict_pc(const hwp_cp *x, uint64_t pc);

/* The metric's default threshold of true invariance (sec. 5.2). */
#define HWP_CP_MIN_INV 0.1
HWP_API double hwp_cp_wrms(hwp_cp_truth *truth, size_t n, hwp_cp_est *est,
                           size_t m, double min_inv);

/* Private cold entry points of the hot path. */
HWP_API void hwp__cp_accept(hwp_cp *x, const hwp_insn *in);
HWP_API void hwp__cp_idle(hwp_cp *x);

/* ---- filter (sec. 3.1) ------------------------------------------------- */

/* Region filter: the top 32 bits of a multiplicative hash of the PC, so
 * masks of any width split the loads evenly. Bit table: one odd
 * multiplier per hash function, top bits index the table. */
#define HWP__CP_REGION_MUL 0x9E3779B97F4A7C15ull

HWP_INLINE uint32_t hwp__cp_bt_index(const hwp_cp *x, uint64_t pc,
                                     unsigned k) {
    static const uint64_t mul[HWP_CP_MAX_HASHES] = {
        0xD6E8FEB86659FD93ull, 0xA0761D6478BD642Full, 0xE7037ED1A0B428DBull,
        0x8EBC6AF09C88C6E3ull};
    return (uint32_t)((pc * mul[k]) >> x->bt_shift);
}

/* Masked when every hash function's bit is set (sec. 3.1: several hash
 * functions reduce conflicts between instructions). */
HWP_INLINE bool hwp_cp_filter_masked(const hwp_cp *x, uint64_t pc) {
    unsigned k;
    for (k = 0; k < x->n_hashes; k++) {
        uint32_t i = hwp__cp_bt_index(x, pc, k);
        if (!((x->bits[i >> 6] >> (i & 63u)) & 1u)) return false;
    }
    return true;
}

/* One retired host instruction. Rejection by class costs a counter, a
 * shift and a branch; by PC a multiply, compare and bit-table probes. */
HWP_INLINE void hwp_cp_insn(hwp_cp *x, const hwp_insn *in) {
    x->events++;
    if (HWP_LIKELY(!((x->cls_mask >> (in->cls & 31u)) & 1u))) return;
    x->class_passed++;
    if (((uint32_t)((in->pc * HWP__CP_REGION_MUL) >> 32) & x->pc_mask) !=
        x->pc_match) {
        x->region_rejected++;
    } else if (hwp_cp_filter_masked(x, in->pc)) {
        x->masked_rejected++;
    } else {
        hwp__cp_accept(x, in);
        return;
    }
    if (HWP_UNLIKELY(++x->idle == x->idle_limit)) hwp__cp_idle(x);
}

HWP_INLINE void hwp_cp_load(hwp_cp *x, uint64_t pc, uint64_t addr,
                                   uint64_t value) {
    hwp_insn in;
    in.pc = pc;
    in.next_pc = pc + 4;
    in.addr = addr;
    in.value = value;
    in.cls = HWP_CLS_LOAD;
    in.events = 0;
    hwp_cp_insn(x, &in);
}

/* Instructions the host did not hand over still take time. */
HWP_INLINE void hwp_cp_tick(hwp_cp *x, uint64_t n) { x->events += n; }

/* ---- resources (sec. 3.3); each operation charges co-processor cycles */

HWP_INLINE bool hwp_cp_cam_valid(const hwp_cp *x, uint32_t i) {
    return i < x->cam_n && ((x->cam_valid[i >> 6] >> (i & 63u)) & 1u);
}

/* The CAM's match lines, modelled by a hash index over the valid keys. */
HWP_INLINE uint32_t hwp__cp_cam_find(const hwp_cp *x, uint64_t key) {
    uint32_t h = (uint32_t)hwp_mix64(key) & x->cam_hmask, e;
    while ((e = x->cam_hix[h]) != 0) {
        if (x->cam_key[e - 1] == key) return e - 1;
        h = (h + 1) & x->cam_hmask;
    }
    return HWP_CP_NONE;
}

/* Match: the index of the valid entry holding key, or HWP_CP_NONE. */
HWP_INLINE uint32_t hwp_cp_cam_match(hwp_cp *x, uint64_t key) {
    x->cyc += x->op_cyc;
    return hwp__cp_cam_find(x, key);
}

/* Data array: addresses wrap at its power-of-two size, as hardware
 * address bits would. */
HWP_INLINE uint64_t hwp_cp_dread(hwp_cp *x, uint32_t a) {
    x->cyc += x->op_cyc;
    return x->data[a & x->data_mask];
}

HWP_INLINE void hwp_cp_dwrite(hwp_cp *x, uint32_t a, uint64_t v) {
    x->cyc += x->op_cyc;
    x->data[a & x->data_mask] = v;
}

/* Read-modify-write with saturation at `bits` (1..32): never wraps. */
HWP_INLINE uint32_t hwp_cp_dsat_add(hwp_cp *x, uint32_t a, uint32_t d,
                                    unsigned bits) {
    uint64_t *w = &x->data[a & x->data_mask];
    uint32_t max = hwp_sat_max(bits);
    uint32_t v = *w > max ? max : (uint32_t)*w;
    x->cyc += x->rmw_cyc;
    v = hwp_sat_add(v, d, max);
    *w = v;
    return v;
}

HWP_INLINE uint32_t hwp_cp_dsat_inc(hwp_cp *x, uint32_t a, unsigned bits) {
    return hwp_cp_dsat_add(x, a, 1, bits);
}

/* Index registers have their own ALU (sec. 3.3): no extra cycle. */
HWP_INLINE uint32_t hwp_cp_ireg(const hwp_cp *x, unsigned r) {
    return x->ireg[r & (HWP_CP_IREGS - 1)];
}

HWP_INLINE void hwp_cp_ireg_set(hwp_cp *x, unsigned r, uint32_t v) {
    r &= HWP_CP_IREGS - 1;
    x->ireg[r] = v & x->ireg_max[r];
}

/* Width 1..32 bits, set when a program is loaded. */
HWP_INLINE void hwp_cp_ireg_width(hwp_cp *x, unsigned r, unsigned bits) {
    r &= HWP_CP_IREGS - 1;
    x->ireg_max[r] = hwp_sat_max(bits ? bits : 1);
    x->ireg[r] &= x->ireg_max[r];
}

/* Wrapping increment: circular buffers. */
HWP_INLINE uint32_t hwp_cp_ireg_inc(hwp_cp *x, unsigned r) {
    r &= HWP_CP_IREGS - 1;
    return x->ireg[r] = (x->ireg[r] + 1u) & x->ireg_max[r];
}

HWP_INLINE uint32_t hwp_cp_ireg_sinc(hwp_cp *x, unsigned r) {
    r &= HWP_CP_IREGS - 1;
    return x->ireg[r] = hwp_sat_inc(x->ireg[r], x->ireg_max[r]);
}

HWP_INLINE uint32_t hwp_cp_ireg_sdec(hwp_cp *x, unsigned r) {
    r &= HWP_CP_IREGS - 1;
    return x->ireg[r] = hwp_sat_sub(x->ireg[r], 1);
}

/* The LFSR random source (sec. 3.3). One step of a Galois LFSR only
 * shifts the state, so two draws one step apart share 31 bits; the
 * source is modelled as a parallel LFSR that advances 32 steps per draw,
 * so every draw is a fresh word (still one operation). */
HWP_INLINE uint32_t hwp_cp_rand(hwp_cp *x) {
    unsigned k;
    x->cyc += x->op_cyc;
    for (k = 0; k < 31u; k++) hwp_lfsr_next(&x->lfsr);
    return hwp_lfsr_next(&x->lfsr);
}

/* ---- the buffered value sampler (the sec. 5 baseline) -----------------
 * The paper's simple sampler as hardware: every period-th load (the
 * countdown is reloaded uniformly in [period/2, 3 period/2) so loops
 * cannot alias with it) writes (pc, value) into a buffer of `buffer`
 * samples; a full buffer interrupts the host once, and its handler counts
 * every sample in a memory hash table. Charged by the co-processor's
 * cost model: one COPROC_INTERRUPT per full buffer, one COPROC_SAMPLE and
 * two COPROC_WORDs (pc and value read out) per sample. */
typedef struct hwp_cp_simple_desc {
    uint32_t period;  /* loads between samples, default 10000 (>= 2)    */
    uint32_t buffer;  /* samples per interrupt, default 128: the
                         co-processor's 2048-byte buffer at 16 bytes per
                         (pc, value) sample                              */
    uint32_t entries; /* pow2 table of (pc, value) and (pc) counts; 16384 */
    uint32_t min_samples; /* samples before an estimate is characterised;
                             default 64, as the co-processor             */
    uint64_t seed;
} hwp_cp_simple_desc;

typedef struct hwp_cp_simple_stats {
    uint64_t events;     /* loads seen                                    */
    uint64_t dropped;    /* samples whose pair did not fit in the table   */
    uint64_t evicted;    /* always 0: the table never replaces            */
    uint64_t cycles;     /* modelled host cycles charged                  */
    uint64_t samples;    /* samples taken                                 */
    uint64_t interrupts; /* full buffers (and the final partial one)      */
    uint64_t pending;    /* samples in the buffer now                     */
} hwp_cp_simple_stats;

typedef struct hwp__cp_pair {
    uint64_t pc, value, count;
    uint32_t kind, used; /* kind 1: a (pc, value) pair, 2: a pc total */
} hwp__cp_pair;

typedef struct hwp_cp_simple {
    hwp_head head;
    uint64_t countdown, loads, samples, lost, interrupts, host_cycles;
    uint32_t period, mask, pending, pad_;
    hwp_rng rng;
    hwp_cost *cost;
    hwp__cp_pair *tab;
    uint64_t *buf; /* pending samples: pc, value */
    void *mem;
    hwp_cp_simple_desc d;
} hwp_cp_simple;

/* Static storage for a desc with every field set, padding included. */
#define HWP_CP_SIMPLE_BYTES(buffer, entries)                                  \
    ((size_t)HWP__ALIGN - 1u +                                                \
     HWP__CP_A((size_t)(entries) * sizeof(hwp__cp_pair)) +                    \
     HWP__CP_A((size_t)(buffer) * 16u))

/* The contract's calls (cost.h, HWP__CONTRACT). */
HWP__CONTRACT(cp_simple);
HWP_API hwp_status hwp_cp_simple_flush(hwp_cp_simple *s);
HWP_API hwp_status hwp_cp_simple_clone(hwp_cp_simple *dst, void *storage,
                                       size_t bytes, const hwp_cp_simple *src,
                                       hwp_cost *cost);
HWP_API size_t hwp_cp_simple_estimates(const hwp_cp_simple *s,
                                       hwp_cp_est *out, size_t cap);
HWP_API uint32_t hwp_cp_simple_period_for(uint64_t loads, uint64_t overhead,
                                          const hwp_cp_simple_desc *d,
                                          const hwp_cost *cost);
HWP_API uint64_t hwp_cp_simple_overhead(uint64_t loads, uint32_t period,
                                        const hwp_cp_simple_desc *d,
                                        const hwp_cost *cost);
HWP_API void hwp__cp_simple_sample(hwp_cp_simple *s, uint64_t pc,
                                   uint64_t value);

HWP_INLINE void hwp_cp_simple_load(hwp_cp_simple *s, uint64_t pc,
                                   uint64_t value) {
    s->loads++;
    if (HWP_UNLIKELY(--s->countdown == 0)) hwp__cp_simple_sample(s, pc, value);
}

/* Loads until the next sample: the next hwp_cp_simple_load call that
 * many loads from now takes its sample. */
HWP_INLINE uint64_t hwp_cp_simple_due(const hwp_cp_simple *s) {
    return s->countdown;
}

/* What n hwp_cp_simple_load calls that take no sample do, at once: a host
 * driving several samplers counts loads once and hands each its batch.
 * n is capped below hwp_cp_simple_due(s) (a skip never passes over a
 * sample); returns the loads skipped. */
HWP_INLINE uint64_t hwp_cp_simple_skip(hwp_cp_simple *s, uint64_t n) {
    if (n >= s->countdown) n = s->countdown - 1;
    s->loads += n;
    s->countdown -= n;
    return n;
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_COPROC_H */

/* ======================================================================= */
#if defined(HWPROF_IMPL) && !defined(HWPROF_COPROC_IMPL)
#define HWPROF_COPROC_IMPL

#ifdef __cplusplus
extern "C" {
#endif

#define HWP__CP_MAGIC HWP__MAGIC('c', 'p', 'r', 'c')
#define HWP__CP_SMAGIC HWP__MAGIC('c', 'p', 's', 's')

/* Result-table kinds. */
enum {
    HWP__CP_K_EDGE = 1,   /* k1 = pc: a = taken, b = not taken           */
    HWP__CP_K_TARGET,     /* k1 = pc, k2 = target: a = count             */
    HWP__CP_K_CTX,        /* k1 = context hash: a = events               */
    HWP__CP_K_DEP,        /* k1 = store pc, k2 = load pc: a = count      */
    HWP__CP_K_SET,        /* k1 = set: a = conflict refills              */
    HWP__CP_K_BLOCK,      /* k1 = block: a = conflict refills            */
    HWP__CP_K_CPC         /* k1 = load pc: a = conflict refills it took  */
};

/* Why the load-value program interrupted (appendix). */
enum {
    HWP__CP_C_FAILED,
    HWP__CP_C_DONE,
    HWP__CP_C_THRASH,
    HWP__CP_C_IDLE,
    HWP__CP_C_FINAL,
    HWP__CP_C_VISIT
};

/* Load-value index registers. */
enum { HWP__CP_R_REPL, HWP__CP_R_FAILED, HWP__CP_R_DONE, HWP__CP_R_NREPL,
       HWP__CP_R_SAMPLES };
/* Counting-table and window programs. */
enum { HWP__CP_R_NEXT, HWP__CP_R_LOG, HWP__CP_R_SP, HWP__CP_R_DEPTH };

static uint32_t hwp__cp_sample_bytes(uint32_t f) {
    return ((f & HWP_CP_F_PC) ? 8u : 0u) + ((f & HWP_CP_F_NEXT) ? 8u : 0u) +
           ((f & HWP_CP_F_ADDR) ? 8u : 0u) + ((f & HWP_CP_F_VALUE) ? 8u : 0u) +
           ((f & HWP_CP_F_EVENTS) ? 4u : 0u);
}

/* Defaults as hwp_cp_desc's comments attribute them. */
static const hwp_field hwp__cp_desc_f[] = {
    HWP__FN(hwp_cp_desc, "coproc", buffer_bytes, UINT, 2048, 1, 1u << 24, 0,
            "coproc: buffer_bytes must hold one sample and be <= 16 MiB"),
    HWP__FN(hwp_cp_desc, "coproc", fields, UINT, HWP_CP_F_ALL, 0, HWP_CP_F_ALL, 0,
            "coproc: fields must be HWP_CP_F_* bits (<= 31)"),
    HWP__FN(hwp_cp_desc, "coproc", cam_entries, UINT, 256, 1, 1u << 20, HWP_FIELD_POW2,
            "coproc: cam_entries must be a power of two <= 2^20"),
    HWP__FN(hwp_cp_desc, "coproc", data_words, UINT, 1024, 16, 1u << 24, HWP_FIELD_POW2,
            "coproc: data_words must be a power of two in [16, 2^24]"),
    HWP__FN(hwp_cp_desc, "coproc", bit_table_bits, UINT, 8192, 64, 1u << 28,
            HWP_FIELD_POW2, "coproc: bit_table_bits must be a power of two in [64, 2^28]"),
    HWP__FN(hwp_cp_desc, "coproc", n_hashes, UINT, 2, 1, HWP_CP_MAX_HASHES, 0,
            "coproc: n_hashes must be 1..4"),
    HWP__FN(hwp_cp_desc, "coproc", clock_x16, UINT, 16, 1, 1024, 0,
            "coproc: clock_x16 must be <= 1024"),
    HWP__FN(hwp_cp_desc, "coproc", table_entries, UINT, 4096, 1, 1u << 24,
            HWP_FIELD_POW2, "coproc: table_entries must be a power of two <= 2^24"),
    HWP__FN(hwp_cp_desc, "coproc", lvp_loads, UINT, 2048, 1, 1u << 24, HWP_FIELD_POW2,
            "coproc: lvp_loads must be a power of two <= 2^24"),
    HWP__FN(hwp_cp_desc, "coproc", lvp_values, UINT, 8, 1, 64, 0,
            "coproc: lvp_values must be 1..64"),
    HWP__FN(hwp_cp_desc, "coproc", seed, HEX, 0, 0, ~(uint64_t)0, 0, NULL)};

HWP__FIELDS_FN(hwp_cp_desc_fields, hwp__cp_desc_f)

/* Fill the defaults once, validate: a reason or NULL. */
static const char *hwp__cp_fill(hwp_cp_desc *d) {
    const char *why = hwp__field_fill(d, hwp__cp_desc_f, HWP__N(hwp__cp_desc_f));
    if (!why && d->buffer_bytes < hwp__cp_sample_bytes(d->fields))
        why = hwp__cp_desc_f[0].bad;
    return why;
}

/* The aligned bytes the carve-outs take (HWP_CP_BYTES less padding). */
static size_t hwp__cp_size(const hwp_cp_desc *d) {
    return HWP_CP_BYTES(d->buffer_bytes, hwp__cp_sample_bytes(d->fields),
                        d->cam_entries, d->data_words, d->bit_table_bits,
                        d->table_entries, d->lvp_loads, d->lvp_values) -
           (HWP__ALIGN - 1u);
}

HWP_API size_t hwp_cp_bytes(const hwp_cp_desc *dp) {
    hwp_cp_desc d;
    if (dp) d = *dp;
    else hwp__zero(&d, sizeof d);
    return hwp__cp_fill(&d) ? 0 : hwp__bytes(hwp__cp_size(&d));
}

/* Every modelled host cycle goes through here, so the instance's own
 * stats can say what it cost beside the shared hwp_cost. */
static void hwp__cp_charge(hwp_cp *x, hwp_cost_op op, uint64_t n) {
    x->host_cycles += n * hwp_cost_cycles(x->cost, op);
    hwp_cost_charge(x->cost, op, n);
}

static void hwp__cp_reset_resources(hwp_cp *x) {
    unsigned r;
    hwp__zero(x->cam_valid, ((size_t)x->cam_n + 63u) / 64u * 8u);
    hwp__zero(x->cam_hix, ((size_t)x->cam_hmask + 1u) * 4u);
    hwp__zero(x->data, ((size_t)x->data_mask + 1u) * 8u);
    for (r = 0; r < HWP_CP_IREGS; r++) {
        x->ireg[r] = 0;
        x->ireg_max[r] = 0xFFFFFFFFu;
    }
}

HWP_API hwp_status hwp_cp_init(hwp_cp *x, void *storage, size_t bytes,
                               const hwp_cp_desc *dp, hwp_cost *cost) {
    hwp_cp_desc d;
    const char *why;
    unsigned char *cur;
    if (!x) return HWP_EINVAL;
    hwp__zero(x, sizeof *x);
    if (dp) d = *dp;
    else hwp__zero(&d, sizeof d);
    why = hwp__cp_fill(&d);
    if (hwp__admit(&x->head, why, &storage, &bytes,
                       why ? 0 : hwp__cp_size(&d)) != HWP_OK)
        return (hwp_status)x->head.status;
    cur = (unsigned char *)storage;
    hwp__zero(storage, hwp__cp_size(&d));
    x->mem = storage;
    x->d = d;
    x->sample_bytes = hwp__cp_sample_bytes(d.fields);
    x->cap = d.buffer_bytes / x->sample_bytes;
    x->buf = (hwp_insn *)hwp__carve(&cur, (size_t)x->cap * 40u);
    x->arrive = (uint64_t *)hwp__carve(&cur, (size_t)x->cap * 8u);
    x->cam_n = d.cam_entries;
    x->cam_key = (uint64_t *)hwp__carve(&cur, (size_t)x->cam_n * 8u);
    x->cam_valid = (uint64_t *)hwp__carve(&cur, ((size_t)x->cam_n + 63u) / 64u * 8u);
    x->cam_hmask = 2u * x->cam_n - 1u;
    x->cam_hix = (uint32_t *)hwp__carve(&cur, ((size_t)x->cam_hmask + 1u) * 4u);
    x->data_mask = d.data_words - 1u;
    x->data = (uint64_t *)hwp__carve(&cur, (size_t)d.data_words * 8u);
    x->bits = (uint64_t *)hwp__carve(&cur, (size_t)d.bit_table_bits / 8u);
    x->tab_mask = d.table_entries - 1u;
    x->tab = (hwp__cp_ent *)hwp__carve(&cur, (size_t)d.table_entries * sizeof(hwp__cp_ent));
    x->loads_mask = d.lvp_loads - 1u;
    x->loads = (hwp__cp_load *)hwp__carve(&cur, (size_t)d.lvp_loads * sizeof(hwp__cp_load));
    x->vals_per = d.lvp_values;
    x->vals = (hwp__cp_val *)hwp__carve(
        &cur, (size_t)d.lvp_loads * d.lvp_values * sizeof(hwp__cp_val));
    x->bt_shift = 64u - hwp_log2(d.bit_table_bits);
    x->n_hashes = d.n_hashes;
    x->clock_x16 = d.clock_x16;
    x->fields = d.fields;
    x->cost = cost;
    x->op_cyc = hwp_cost_cycles(cost, HWP_COST_COPROC_OP);
    x->rmw_cyc = hwp_cost_cycles(cost, HWP_COST_COPROC_RMW);
    x->dispatch_cyc = hwp_cost_cycles(cost, HWP_COST_COPROC_DISPATCH);
    hwp_lfsr_init(&x->lfsr, 32, (uint32_t)(d.seed ^ (d.seed >> 32)));
    hwp__cp_reset_resources(x);
    x->head.magic = HWP__CP_MAGIC;
    return hwp__fail(&x->head, HWP_OK, "");
}

static bool hwp__cp_ok(const hwp_cp *x) {
    return x && x->head.magic == HWP__CP_MAGIC;
}

/* ---- CAM ---------------------------------------------------------------- */

static void hwp__cp_hix_remove(hwp_cp *x, uint32_t i) {
    uint32_t m = x->cam_hmask, h = (uint32_t)hwp_mix64(x->cam_key[i]) & m, j;
    while (x->cam_hix[h] != i + 1) h = (h + 1) & m;
    /* backward-shift deletion keeps every probe chain unbroken */
    for (j = (h + 1) & m; x->cam_hix[j]; j = (j + 1) & m) {
        uint32_t home = (uint32_t)hwp_mix64(x->cam_key[x->cam_hix[j] - 1]) & m;
        if (((j - home) & m) >= ((j - h) & m)) {
            x->cam_hix[h] = x->cam_hix[j];
            h = j;
        }
    }
    x->cam_hix[h] = 0;
}

static void hwp__cp_cam_drop(hwp_cp *x, uint32_t i) {
    if (!hwp_cp_cam_valid(x, i)) return;
    hwp__cp_hix_remove(x, i);
    x->cam_valid[i >> 6] &= ~((uint64_t)1 << (i & 63u));
}

/* Keys stay unique: writing a key that another valid entry holds
 * invalidates that entry (the match logic returns one index). */
HWP_API void hwp_cp_cam_write(hwp_cp *x, uint32_t i, uint64_t key) {
    uint32_t h, old;
    if (i >= x->cam_n) return;
    x->cyc += x->op_cyc;
    old = hwp__cp_cam_find(x, key);
    if (old != HWP_CP_NONE) hwp__cp_cam_drop(x, old);
    hwp__cp_cam_drop(x, i);
    x->cam_key[i] = key;
    x->cam_valid[i >> 6] |= (uint64_t)1 << (i & 63u);
    for (h = (uint32_t)hwp_mix64(key) & x->cam_hmask; x->cam_hix[h];
         h = (h + 1) & x->cam_hmask) {
    }
    x->cam_hix[h] = i + 1;
}

/* Clears the valid bit; the key stays readable by the host. */
HWP_API void hwp_cp_cam_invalidate(hwp_cp *x, uint32_t i) {
    x->cyc += x->op_cyc;
    hwp__cp_cam_drop(x, i);
}

HWP_API void hwp_cp_cam_invalidate_all(hwp_cp *x) {
    x->cyc += x->op_cyc;
    hwp__zero(x->cam_valid, ((size_t)x->cam_n + 63u) / 64u * 8u);
    hwp__zero(x->cam_hix, ((size_t)x->cam_hmask + 1u) * 4u);
}

/* ---- host access bus (sec. 3.5): loads from the co-processor's address
 * range, one word each. Unlike the routines' resources above (called by
 * a loaded program, so on a live instance), these are the host's calls:
 * a bad handle reads 0 and is left untouched. */
HWP_API uint64_t hwp_cp_host_data(hwp_cp *x, uint32_t a) {
    if (!hwp__cp_ok(x)) return 0;
    x->words++;
    hwp__cp_charge(x, HWP_COST_COPROC_WORD, 1);
    return x->data[a & x->data_mask];
}

HWP_API uint64_t hwp_cp_host_cam(hwp_cp *x, uint32_t i) {
    if (!hwp__cp_ok(x)) return 0;
    x->words++;
    hwp__cp_charge(x, HWP_COST_COPROC_WORD, 1);
    return i < x->cam_n ? x->cam_key[i] : 0;
}

/* The special invalidate-CAM and clear-data operations (sec. 3.5): two
 * stores, and the index registers back to zero. */
HWP_API void hwp_cp_host_reset(hwp_cp *x) {
    unsigned r;
    uint32_t keep[HWP_CP_IREGS];
    if (!hwp__cp_ok(x)) return;
    for (r = 0; r < HWP_CP_IREGS; r++) keep[r] = x->ireg_max[r];
    hwp__cp_reset_resources(x);
    for (r = 0; r < HWP_CP_IREGS; r++) x->ireg_max[r] = keep[r];
    x->words += 2;
    hwp__cp_charge(x, HWP_COST_COPROC_WORD, 2);
}

/* ---- filter (host side) ------------------------------------------------- */

HWP_API hwp_status hwp_cp_filter_classes(hwp_cp *x, uint32_t cls_mask) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (cls_mask & ~(uint32_t)HWP_CLS_ALL)
        return hwp__fail(&x->head, HWP_EINVAL, "coproc: unknown class bits");
    x->cls_mask = cls_mask;
    return hwp__fail(&x->head, HWP_OK, "");
}

HWP_API hwp_status hwp_cp_filter_region(hwp_cp *x, uint32_t mask,
                                        uint32_t match) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (match & ~mask)
        return hwp__fail(&x->head, HWP_EINVAL,
                         "coproc: region match has bits outside the mask");
    x->pc_mask = mask;
    x->pc_match = match;
    return hwp__fail(&x->head, HWP_OK, "");
}

/* Setting a PC's bits is one host store per hash function. */
HWP_API hwp_status hwp_cp_filter_mask_pc(hwp_cp *x, uint64_t pc) {
    unsigned k;
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    for (k = 0; k < x->n_hashes; k++) {
        uint32_t i = hwp__cp_bt_index(x, pc, k);
        x->bits[i >> 6] |= (uint64_t)1 << (i & 63u);
    }
    x->words += x->n_hashes;
    hwp__cp_charge(x, HWP_COST_COPROC_WORD, x->n_hashes);
    return hwp__fail(&x->head, HWP_OK, "");
}

HWP_API hwp_status hwp_cp_filter_clear(hwp_cp *x) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    hwp__zero(x->bits, (size_t)x->d.bit_table_bits / 8u);
    return hwp__fail(&x->head, HWP_OK, "");
}

/* The idle watchdog (our addition, see docs): after `limit` class-passing
 * instructions in a row rejected by the PC filter the program's on_idle
 * handler runs; 0 turns it off. */
HWP_API hwp_status hwp_cp_filter_idle(hwp_cp *x, uint64_t limit) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    x->idle_limit = limit;
    x->idle = 0;
    return hwp__fail(&x->head, HWP_OK, "");
}

/* ---- the co-processor's control (sec. 3.4) ------------------------------ */

static void hwp__cp_interrupt(hwp_cp *x, hwp_cp_handler fn) {
    uint32_t n;
    x->interrupts++;
    hwp__cp_charge(x, HWP_COST_COPROC_INTERRUPT, 1);
    n = fn ? fn(x, x->prog.ctx) : 0;
    x->irq_samples += n;
    hwp__cp_charge(x, HWP_COST_COPROC_SAMPLE, n);
}

/* Run one sample's routine; returns its co-processor cycles. */
static uint64_t hwp__cp_run(hwp_cp *x, const hwp_insn *s) {
    hwp_cp_routine fn = x->prog.routine[s->cls < HWP_CLS_COUNT ? s->cls : 0];
    x->cyc = x->dispatch_cyc;
    if (fn) {
        int r = fn(x, s, x->prog.ctx);
        if (r != HWP_CP_DONE) {
            hwp__cp_interrupt(x, x->prog.on_interrupt);
            if (r == HWP_CP_IRQ_RETRY && fn(x, s, x->prog.ctx) != HWP_CP_DONE)
                hwp__cp_interrupt(x, x->prog.on_interrupt);
        }
    }
    x->processed++;
    x->cp_cycles += x->cyc;
    return x->cyc;
}

/* Start every buffered sample the co-processor reaches by time `now`
 * (x16 cycles). A sample leaves the buffer when its routine starts (it
 * is copied into the decoder/field extractor). */
static void hwp__cp_drain(hwp_cp *x, uint64_t now) {
    while (x->count && x->cp_free <= now) {
        hwp_insn s = x->buf[x->first];
        uint64_t start = x->arrive[x->first] > x->cp_free ? x->arrive[x->first]
                                                          : x->cp_free;
        x->first = x->first + 1 == x->cap ? 0 : x->first + 1;
        x->count--;
        x->cp_free = start + 16u * hwp__cp_run(x, &s);
    }
}

static void hwp__cp_visit_end(hwp_cp *x);

HWP_API void hwp__cp_accept(hwp_cp *x, const hwp_insn *in) {
    uint64_t now = x->events * x->clock_x16;
    uint32_t i;
    hwp_insn *s;
    /* the loads rejected since the last accept belong to the visit too:
     * counting them here keeps the filter's rejection path unchanged */
    x->visit_n += x->idle + 1u;
    x->idle = 0;
    x->tagged++;
    x->flushed = 0;
    hwp__cp_drain(x, now);
    if (x->visit_limit && x->visit_n >= x->visit_limit) hwp__cp_visit_end(x);
    if (x->count == x->cap) {
        x->dropped++;
        return;
    }
    i = x->first + x->count;
    if (i >= x->cap) i -= x->cap;
    s = &x->buf[i];
    s->pc = (x->fields & HWP_CP_F_PC) ? in->pc : 0;
    s->next_pc = (x->fields & HWP_CP_F_NEXT) ? in->next_pc : 0;
    s->addr = (x->fields & HWP_CP_F_ADDR) ? in->addr : 0;
    s->value = (x->fields & HWP_CP_F_VALUE) ? in->value : 0;
    s->cls = in->cls;
    s->events = (x->fields & HWP_CP_F_EVENTS) ? in->events : 0;
    x->arrive[i] = now;
    x->count++;
}

HWP_API void hwp__cp_idle(hwp_cp *x) {
    x->visit_n += x->idle;
    x->idle = 0;
    x->flushed = 0;
    x->idle_events++;
    if (x->prog.on_idle) hwp__cp_interrupt(x, x->prog.on_idle);
}

HWP_API hwp_status hwp_cp_program_load(hwp_cp *x, const hwp_cp_program *p) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (!p) return hwp__fail(&x->head, HWP_EINVAL, "coproc: program is NULL");
    if (p->cls_mask & ~(uint32_t)HWP_CLS_ALL)
        return hwp__fail(&x->head, HWP_EINVAL, "coproc: unknown class bits");
    hwp__cp_drain(x, ~(uint64_t)0); /* the old program finishes its samples */
    x->prog = *p;
    x->app = HWP_CP_APP_CUSTOM;
    x->cls_mask = p->cls_mask;
    x->pc_mask = x->pc_match = 0;
    x->idle_limit = x->idle = 0;
    x->visit_limit = x->visit_n = 0;
    hwp__zero(x->bits, (size_t)x->d.bit_table_bits / 8u);
    hwp__zero(&x->lvp, sizeof x->lvp);
    hwp__cp_reset_resources(x);
    return hwp__fail(&x->head, HWP_OK, "");
}

/* ---- host-memory result table ------------------------------------------- */

static uint32_t hwp__cp_tab_hash(uint32_t kind, uint64_t k1, uint64_t k2) {
    return (uint32_t)hwp_mix64(k1 ^ hwp_mix64(k2 + kind));
}

static const hwp__cp_ent *hwp__cp_tab_find(const hwp_cp *x, uint32_t kind,
                                           uint64_t k1, uint64_t k2) {
    uint32_t h = hwp__cp_tab_hash(kind, k1, k2) & x->tab_mask, n;
    for (n = 0; n <= x->tab_mask && x->tab[h].used; n++) {
        const hwp__cp_ent *e = &x->tab[h];
        if (e->kind == kind && e->k1 == k1 && e->k2 == k2) return e;
        h = (h + 1) & x->tab_mask;
    }
    return 0;
}

static void hwp__cp_tab_add(hwp_cp *x, uint32_t kind, uint64_t k1, uint64_t k2,
                            uint64_t a, uint64_t b) {
    uint32_t h = hwp__cp_tab_hash(kind, k1, k2) & x->tab_mask, n;
    for (n = 0; n <= x->tab_mask; n++) {
        hwp__cp_ent *e = &x->tab[h];
        if (!e->used) {
            e->used = 1;
            e->kind = kind;
            e->k1 = k1;
            e->k2 = k2;
        }
        if (e->kind == kind && e->k1 == k1 && e->k2 == k2) {
            e->a = hwp_sat_add64(e->a, a);
            e->b = hwp_sat_add64(e->b, b);
            return;
        }
        h = (h + 1) & x->tab_mask;
    }
    x->tab_lost++;
}

/* ---- load-value profiling (sec. 4, appendix) ---------------------------- */

/* Slot i: CAM entry i holds the PC; data words 4i..4i+3 hold the active
 * value, hits, misses and total (appendix, slot figure). */
#define HWP__CP_SV(i) (4u * (i))
#define HWP__CP_SH(i) (4u * (i) + 1u)
#define HWP__CP_SM(i) (4u * (i) + 2u)
#define HWP__CP_ST(i) (4u * (i) + 3u)

/* Defaults as hwp_cp_lvp_desc's comments attribute them; failed_limit's
 * and done_limit's depend on slots, and the checks tying fields to each
 * other or to the co-processor are hwp__cp_lvp_fill's. */
static const hwp_field hwp__cp_lvpd_f[] = {
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", slots, UINT, 256, 1, 0xFFFFFFFFu,
            HWP_FIELD_POW2, "coproc: lvp slots must be a power of two with one "
                            "CAM entry and 4 data words each"),
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", counter_bits, UINT, 8, 2, 16, 0,
            "coproc: lvp counter_bits must be 2..16"),
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", resel_min, UINT, 16, 1, 0xFFFFu, 0,
            "coproc: lvp resel_min must be <= 65535"),
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", resel_shift, UINT, 3, 1, 8, 0,
            "coproc: lvp resel_shift must be <= 8"),
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", keep_hits, UINT, 32, 1, 0xFFFFu, 0,
            "coproc: lvp keep_hits must be <= 65535"),
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", failed_limit, UINT, 0, 1, 0xFFFFu, 0,
            "coproc: lvp failed_limit must be <= 65535"),
    HWP__FANY(hwp_cp_lvp_desc, "coproc lvp", done_limit),
    HWP__FDEF(hwp_cp_lvp_desc, "coproc lvp", thrash_mult, 4),
    HWP__FDEF(hwp_cp_lvp_desc, "coproc lvp", conf_samples, 200),
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", conf_hi_pct, UINT, 90, 1, 100, 0,
            "coproc: lvp needs conf_lo_pct < conf_hi_pct <= 100"),
    HWP__FDEF(hwp_cp_lvp_desc, "coproc lvp", conf_lo_pct, 10),
    HWP__FDEF(hwp_cp_lvp_desc, "coproc lvp", min_visits, 2),
    HWP__FDEF(hwp_cp_lvp_desc, "coproc lvp", max_visits, 4),
    HWP__FDEF(hwp_cp_lvp_desc, "coproc lvp", idle_limit, 65536),
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", max_part_log2, UINT, 8, 1, 16, 0,
            "coproc: lvp needs the PC and VALUE fields and max_part_log2 <= 16"),
    HWP__FDEF(hwp_cp_lvp_desc, "coproc lvp", visit_loads, 1u << 17),
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", copy_min, UINT, 4, 1, 0xFFFFu, 0,
            "coproc: lvp copy_min must be <= 65535"),
    HWP__FN(hwp_cp_lvp_desc, "coproc lvp", min_samples, UINT, 64, 1, 0x7FFFFFFFu, 0,
            "coproc: lvp min_samples must be < 2^31"),
    HWP__FDEF(hwp_cp_lvp_desc, "coproc lvp", resample_insns, 1u << 23)};

HWP__FIELDS_FN(hwp_cp_lvp_desc_fields, hwp__cp_lvpd_f)

/* Fill the defaults once, validate against x: a reason or NULL. */
static const char *hwp__cp_lvp_fill(const hwp_cp *x, hwp_cp_lvp_desc *d) {
    const char *why = hwp__field_fill(d, hwp__cp_lvpd_f, HWP__N(hwp__cp_lvpd_f));
    if (why) return why;
    if (!d->failed_limit) d->failed_limit = d->slots;
    if (!d->done_limit) d->done_limit = d->slots > 1 ? d->slots / 2 : 1;
    if (d->slots > x->cam_n || 4u * d->slots > x->d.data_words)
        return hwp__cp_lvpd_f[0].bad;
    if (d->failed_limit > 0xFFFFu) return hwp__cp_lvpd_f[5].bad;
    if (d->done_limit > d->slots) return "coproc: lvp done_limit must be <= slots";
    if (d->min_visits > d->max_visits)
        return "coproc: lvp needs min_visits <= max_visits";
    if ((uint64_t)d->thrash_mult * d->slots >= 0xFFFFu)
        return "coproc: lvp thrash_mult * slots must be < 65535";
    if (d->conf_lo_pct >= d->conf_hi_pct) return hwp__cp_lvpd_f[9].bad;
    if (!(x->fields & HWP_CP_F_PC) || !(x->fields & HWP_CP_F_VALUE))
        return hwp__cp_lvpd_f[14].bad;
    return NULL;
}

/* Turn a slot off: its PC no longer matches, its counters wait for the
 * interrupt, and the done counter may ask for one (appendix). */
static int hwp__cp_lvp_off(hwp_cp *x, uint32_t i) {
    hwp_cp_cam_invalidate(x, i);
    x->lvp.turned_off++;
    if (hwp_cp_ireg_sinc(x, HWP__CP_R_DONE) >= x->lvp.d.done_limit) {
        x->lvp.cause = HWP__CP_C_DONE;
        return HWP_CP_IRQ;
    }
    return HWP_CP_DONE;
}

/* The appendix flowchart, one load sample. */
static int hwp__cp_lvp_routine(hwp_cp *x, const hwp_insn *s, void *ctx) {
    hwp__cp_lvp *L = &x->lvp;
    unsigned bits = L->d.counter_bits;
    uint32_t i, r, t;
    (void)ctx;
    hwp_cp_ireg_sinc(x, HWP__CP_R_SAMPLES);
    i = hwp_cp_cam_match(x, s->pc);
    if (i != HWP_CP_NONE) {
        uint32_t h, m;
        t = hwp_cp_dsat_inc(x, HWP__CP_ST(i), bits);
        if (s->value == hwp_cp_dread(x, HWP__CP_SV(i))) {
            h = hwp_cp_dsat_inc(x, HWP__CP_SH(i), bits);
            m = (uint32_t)hwp_cp_dread(x, HWP__CP_SM(i));
        } else {
            m = hwp_cp_dsat_inc(x, HWP__CP_SM(i), bits);
            h = (uint32_t)hwp_cp_dread(x, HWP__CP_SH(i));
            /* value re-sampling: measured invariance below 2^-shift once
             * enough has been seen; a region with a useful number of hits
             * is kept by turning the slot off instead (appendix) */
            if (h + m >= L->d.resel_min &&
                ((uint64_t)h << L->d.resel_shift) < (uint64_t)h + m) {
                if (h >= L->d.keep_hits) return hwp__cp_lvp_off(x, i);
                L->reselect++;
                hwp_cp_dwrite(x, HWP__CP_SV(i), s->value);
                hwp_cp_dwrite(x, HWP__CP_SH(i), 1);
                hwp_cp_dwrite(x, HWP__CP_SM(i), 0);
                h = 1;
                m = 0;
            }
        }
        /* saturation (appendix): total >= hits, misses, so it saturates
         * first; turning the slot off then keeps the count exact and the
         * hit/miss ratio undamaged */
        if (t >= L->cmax || h >= L->cmax || m >= L->cmax)
            return hwp__cp_lvp_off(x, i);
        return HWP_CP_DONE;
    }
    /* informational replacement of the one candidate slot r */
    r = hwp_cp_ireg(x, HWP__CP_R_REPL);
    t = (uint32_t)hwp_cp_dread(x, HWP__CP_ST(r));
    if (t == 0 ||
        (hwp_cp_cam_valid(x, r) && (hwp_cp_rand(x) & L->cmax) > t)) {
        uint32_t nrepl = 0;
        if (t) {
            L->replacements++;
            nrepl = hwp_cp_ireg_sinc(x, HWP__CP_R_NREPL);
        }
        hwp_cp_cam_write(x, r, s->pc);
        hwp_cp_dwrite(x, HWP__CP_SV(r), s->value);
        hwp_cp_dwrite(x, HWP__CP_SH(r), 1);
        hwp_cp_dwrite(x, HWP__CP_SM(r), 0);
        hwp_cp_dwrite(x, HWP__CP_ST(r), 1);
        hwp_cp_ireg_inc(x, HWP__CP_R_REPL);
        hwp_cp_ireg_sdec(x, HWP__CP_R_FAILED);
        /* thrash: a few times as many replacements as slots since the
         * last interrupt (appendix); how fast that came decides the split */
        if (nrepl >= L->d.thrash_mult * L->d.slots) {
            L->cause = HWP__CP_C_THRASH;
            return HWP_CP_IRQ;
        }
        return HWP_CP_DONE;
    }
    L->ignored++;
    if (hwp_cp_ireg_sinc(x, HWP__CP_R_FAILED) >= L->d.failed_limit) {
        L->cause = HWP__CP_C_FAILED;
        return HWP_CP_IRQ;
    }
    return HWP_CP_DONE;
}

static hwp__cp_load *hwp__cp_load_find(const hwp_cp *x, uint64_t pc,
                                       bool *found) {
    uint32_t h = (uint32_t)hwp_mix64(pc) & x->loads_mask, n;
    for (n = 0; n <= x->loads_mask; n++) {
        hwp__cp_load *l = &x->loads[h];
        if (!l->used || l->pc == pc) {
            *found = l->used != 0;
            return l;
        }
        h = (h + 1) & x->loads_mask;
    }
    *found = false;
    return 0;
}

static hwp__cp_val *hwp__cp_vals(const hwp_cp *x, const hwp__cp_load *l) {
    return &x->vals[(size_t)(l - x->loads) * x->vals_per];
}

/* Add a region summary (value, hits, misses) to a load's memory record;
 * a full list gives way to the larger region. Returns the value's record,
 * or 0 when it was the one dropped. */
static hwp__cp_val *hwp__cp_load_add(hwp_cp *x, hwp__cp_load *l, uint64_t value,
                                     uint64_t hits, uint64_t misses) {
    hwp__cp_val *v = hwp__cp_vals(x, l);
    uint32_t k, small = 0;
    for (k = 0; k < l->nvals; k++) {
        if (v[k].value == value) {
            v[k].hits += hits;
            v[k].misses += misses;
            return &v[k];
        }
        if (v[k].hits + v[k].misses < v[small].hits + v[small].misses) small = k;
    }
    if (l->nvals < x->vals_per) {
        k = l->nvals++;
    } else {
        x->lvp.values_lost++;
        if (v[small].hits + v[small].misses >= hits + misses) return 0;
        k = small;
    }
    hwp__zero(&v[k], sizeof v[k]);
    v[k].value = value;
    v[k].hits = hits;
    v[k].misses = misses;
    return &v[k];
}

/* The invariance estimation algorithm (sec. 4.4, appendix) on a load's
 * region summaries, its whole record or (visit) its current visit's: a
 * value gets (1) its own hits; (2) of every other region's misses, a
 * share in proportion to its measured invariance among the values that
 * could have caused them; (3) of the samples no region accounts for
 * (total minus all hits and misses), its measured invariance. inv[]
 * receives the invariance estimate of each record. */
static void hwp__cp_inv(const hwp__cp_val *v, uint32_t n, uint64_t total,
                        bool visit, double *inv) {
    double w[64], sum_w = 0, acc = 0, unacc, norm;
    uint32_t i, j;
#define HWP__CP_H(k) (visit ? v[k].vhits : v[k].hits)
#define HWP__CP_M(k) (visit ? v[k].vmisses : v[k].misses)
    for (i = 0; i < n; i++) {
        uint64_t seen = HWP__CP_H(i) + HWP__CP_M(i);
        w[i] = seen ? (double)HWP__CP_H(i) / (double)seen : 0.0;
        sum_w += w[i];
        acc += (double)seen;
    }
    unacc = (double)total > acc ? (double)total - acc : 0.0;
    norm = sum_w > 1.0 ? sum_w : 1.0;
    for (i = 0; i < n; i++) {
        double est = (double)HWP__CP_H(i) + unacc * w[i] / norm;
        for (j = 0; j < n; j++) {
            double others = sum_w - w[j], d;
            if (j == i || !HWP__CP_M(j)) continue;
            d = others > 1.0 - w[j] ? others : 1.0 - w[j];
            if (d > 0) est += (double)HWP__CP_M(j) * w[i] / d;
        }
        inv[i] = total ? est / (double)total : 0.0;
        if (inv[i] > 1.0) inv[i] = 1.0;
    }
#undef HWP__CP_H
#undef HWP__CP_M
}

/* A visit's weight: its samples, up to the number that characterises
 * an estimate (min_samples). */
static uint64_t hwp__cp_visit_weight(const hwp_cp *x, const hwp__cp_load *l) {
    uint64_t m = x->lvp.d.min_samples;
    return l->vtotal < m ? l->vtotal : m;
}

/* A load's first copy in a new visit closes its previous one: each
 * value's estimate from that visit's samples alone joins its sum,
 * weighted. */
static void hwp__cp_visit_fold(const hwp_cp *x, hwp__cp_load *l) {
    hwp__cp_val *v = hwp__cp_vals(x, l);
    double inv[64], wt = (double)hwp__cp_visit_weight(x, l);
    uint32_t k;
    if (l->vtotal) hwp__cp_inv(v, l->nvals, l->vtotal, true, inv);
    for (k = 0; k < l->nvals; k++) {
        if (l->vtotal) v[k].share += wt * inv[k];
        v[k].vhits = v[k].vmisses = 0;
    }
    l->vweight += (uint64_t)wt;
    l->vtotal = 0;
}

/* sh[k]: the weighted sum over the load's visits, the current one
 * included, of value k's estimate from that visit alone. Returns the
 * sum of the weights. */
static uint64_t hwp__cp_shares(const hwp_cp *x, const hwp__cp_load *l,
                               double *sh) {
    const hwp__cp_val *v = hwp__cp_vals(x, l);
    double inv[64];
    uint64_t wt = hwp__cp_visit_weight(x, l);
    uint32_t k;
    if (l->vtotal) hwp__cp_inv(v, l->nvals, l->vtotal, true, inv);
    for (k = 0; k < l->nvals; k++)
        sh[k] = v[k].share + (l->vtotal ? (double)wt * inv[k] : 0.0);
    return l->vweight + wt;
}

/* A load's estimates: the estimation algorithm on its whole record, and,
 * ours for phases, an estimate that calls a value invariant held to the
 * mean of the value's estimates from each partition visit alone, each
 * visit weighted by its samples up to min_samples. Weighting by samples
 * alone misleads: a load alone in its partition during one phase gives
 * every execution there, and a few in a later, crowded one, so a value
 * held for that phase dominates the total (bzip2: 322 of 348 samples,
 * estimated 0.93, exactly 0.30), while each visit is one moment of the
 * run, and past the samples that characterise a value more samples from
 * the same moment say nothing more about the run. Weighting visits
 * equally misleads too: a visit that copied a slot with four samples of
 * a minority value would say the dominant one is absent. */
static void hwp__cp_estimate(const hwp_cp *x, const hwp__cp_load *l,
                             double *inv) {
    double sh[64];
    uint64_t wt;
    uint32_t i;
    hwp__cp_inv(hwp__cp_vals(x, l), l->nvals, l->total, false, inv);
    wt = hwp__cp_shares(x, l, sh);
    if (!wt) return;
    for (i = 0; i < l->nvals; i++) {
        double mean = sh[i] / (double)wt;
        if (inv[i] * 100.0 >= (double)x->lvp.d.conf_hi_pct && mean < inv[i])
            inv[i] = mean;
    }
}

/* The samples that measured a value's invariance: the hits and misses of
 * its regions. The estimator also hands a value shares of samples none
 * of its regions saw (other regions' misses, the unaccounted samples),
 * which say nothing about it: a value re-selected on a slot's last
 * sample has one hit, yet would otherwise carry the slot's whole total. */
static uint64_t hwp__cp_measured(const hwp__cp_val *v) {
    return v->hits + v->misses;
}

/* A value's estimate is characterised (reported, told to a JIT) when
 * min_samples samples measured it and the load was copied in min_visits
 * partition visits: one visit sees one moment of the run, and a value
 * held for a phase looks invariant inside it (sec. 4.3 profiles a load
 * several times before masking it, for the same reason). */
static bool hwp__cp_characterised(const hwp_cp *x, const hwp__cp_load *l,
                                  const hwp__cp_val *v) {
    return hwp__cp_measured(v) >= x->lvp.d.min_samples &&
           l->visits >= x->lvp.d.min_visits;
}

/* Confidence (sec. 4.3): mask a load that is clearly invariant or clearly
 * variant once enough samples are in and it has been profiled min_visits
 * times (so a value held for a long phase is not taken for the only one),
 * or that has been profiled max_visits times. */
static void hwp__cp_lvp_confidence(hwp_cp *x, hwp__cp_load *l) {
    double inv[64], top = 0;
    uint32_t k;
    const hwp_cp_lvp_desc *d = &x->lvp.d;
    if (l->masked) return;
    hwp__cp_estimate(x, l, inv);
    for (k = 0; k < l->nvals; k++)
        if (inv[k] > top) top = inv[k];
    if (l->visits >= d->max_visits ||
        (l->total >= d->conf_samples && l->visits >= d->min_visits &&
         (top * 100.0 >= (double)d->conf_hi_pct ||
          top * 100.0 <= (double)d->conf_lo_pct))) {
        l->masked = 1;
        x->lvp.masked++;
        hwp_cp_filter_mask_pc(x, l->pc);
    }
}

/* Entering a partition starts a visit: the host writes the filter's
 * mask and match registers (two words). */
static void hwp__cp_lvp_region(hwp_cp *x) {
    uint32_t m = (uint32_t)hwp_mask64(x->lvp.part_bits);
    x->pc_mask = m;
    x->pc_match = x->lvp.part & m;
    x->lvp.visit++;
    x->visit_n = 0;
    x->words += 2;
    hwp__cp_charge(x, HWP_COST_COPROC_WORD, 2);
}

/* A visit that reached the desc's bound ends like a routine's interrupt:
 * the slots are copied and the next partition is entered. */
static void hwp__cp_visit_end(hwp_cp *x) {
    x->visit_n = 0;
    if (x->app != HWP_CP_APP_LVP) return;
    x->lvp.cause = HWP__CP_C_VISIT;
    hwp__cp_interrupt(x, x->prog.on_interrupt);
}

static void hwp__cp_vprof(const hwp_cp *x, const hwp__cp_load *l,
                          hwp_cp_vprof *out);

/* A load's best estimate became characterised: tell the JIT once. */
static void hwp__cp_lvp_tell(hwp_cp *x, hwp__cp_load *l) {
    hwp_cp_vprof p;
    if (l->told) return;
    hwp__cp_vprof(x, l, &p);
    if (!p.characterised) return;
    l->told = 1;
    if (x->lvp.on_char) x->lvp.on_char(x->lvp.char_ctx, &p);
}

/* Thrash (appendix): the faster it was detected (the larger the share of
 * samples that replaced a slot) the more ways the current partition is
 * split: one more bit, plus log2(4 x replacements / samples). */
static void hwp__cp_lvp_split(hwp_cp *x) {
    hwp__cp_lvp *L = &x->lvp;
    uint32_t samples = hwp_cp_ireg(x, HWP__CP_R_SAMPLES);
    uint32_t nrepl = hwp_cp_ireg(x, HWP__CP_R_NREPL), more = 1;
    L->thrash++;
    if (samples) more += hwp_log2((4ull * nrepl) / samples);
    if (L->part_bits + more > L->d.max_part_log2)
        more = L->d.max_part_log2 - L->part_bits;
    /* the current partition p becomes p, p + 2^b, p + 2^(b+1), ...; the
     * turn's higher bits say which of them is profiled now */
    L->part_bits += more;
    L->idle_streak = 0;
    hwp__cp_lvp_region(x);
}

/* When the next re-sampling is due: resample_insns host instructions from
 * now, or never. */
static uint64_t hwp__cp_resample_after(const hwp_cp *x) {
    uint32_t p = x->lvp.d.resample_insns;
    return p == 0xFFFFFFFFu ? UINT64_MAX : x->events + p;
}

/* Re-sampling (sec. 4.3: "phase behavior [makes it] necessary [to]
 * periodically re-sample"): a load masked as invariant was measured in
 * the visits that happened to see it, and a value held for a phase (a
 * block's base, a per-call constant) looks invariant in all of them,
 * and masked for the rest of the run it would be reported invariant
 * while its executions over the whole run are not. Every
 * resample_insns instructions the host clears the bit table (one special
 * operation) and its masked flags, so masked loads are profiled again
 * when their partition next runs; their new samples join the records
 * and the confidence test, and they are masked again after it. The
 * check runs at interrupts and idle events, never in the filter's path. */
static void hwp__cp_lvp_resample(hwp_cp *x) {
    hwp__cp_lvp *L = &x->lvp;
    uint32_t i;
    if (x->events < L->next_resample) return;
    L->next_resample = hwp__cp_resample_after(x);
    L->resampled++;
    hwp__zero(x->bits, (size_t)x->d.bit_table_bits / 8u);
    x->words++;
    hwp__cp_charge(x, HWP_COST_COPROC_WORD, 1);
    for (i = 0; i <= x->loads_mask; i++) x->loads[i].masked = 0;
    L->complete = 0;
    L->idle_streak = 0;
    x->idle_limit = L->d.idle_limit;
}

static uint32_t hwp__cp_lvp_irq(hwp_cp *x, void *ctx) {
    hwp__cp_lvp *L = &x->lvp;
    uint32_t i, n = 0, fresh = 0;
    (void)ctx;
    L->by_cause[L->cause]++;
    if (L->cause == HWP__CP_C_THRASH) {
        /* the slots hold little information: no copy (appendix) */
        hwp__cp_lvp_split(x);
    } else {
        /* sec. 3.5: before interrupting, the co-processor removes slots of
         * low information content (fewer than copy_min samples), one
         * data-array read each, so the host copies only what teaches */
        for (i = 0; i < L->d.slots; i++) {
            uint64_t t = x->data[HWP__CP_ST(i)];
            x->cp_cycles += x->op_cyc;
            if (!t || t >= L->d.copy_min || L->cause == HWP__CP_C_FINAL) continue;
            L->lowinfo_slots++;
            L->lowinfo_samples += t;
            x->data[HWP__CP_ST(i)] = 0;
        }
        for (i = 0; i < L->d.slots; i++) {
            uint64_t t = hwp_cp_host_data(x, HWP__CP_ST(i)), pc, h, ms;
            hwp__cp_load *l;
            hwp__cp_val *rec;
            bool found;
            if (!t) continue;
            pc = hwp_cp_host_cam(x, i);
            l = hwp__cp_load_find(x, pc, &found);
            if (!l) {
                /* the host's table is full: the slot is not copied, so
                 * neither its value words nor a sample's handler time is
                 * charged; the drop is counted with its samples */
                L->loads_lost++;
                L->samples_lost += t;
                continue;
            }
            n++;
            if (!found) {
                l->used = 1;
                l->pc = pc;
            }
            fresh += !l->masked;
            l->total += t;
            /* one visit however many interrupts copied the load in it */
            if (l->last_visit != L->visit) {
                l->last_visit = L->visit;
                l->visits++;
                hwp__cp_visit_fold(x, l);
            }
            l->vtotal += t;
            h = hwp_cp_host_data(x, HWP__CP_SH(i));
            ms = hwp_cp_host_data(x, HWP__CP_SM(i));
            rec = hwp__cp_load_add(x, l, hwp_cp_host_data(x, HWP__CP_SV(i)), h, ms);
            if (rec) {
                rec->vhits += h;
                rec->vmisses += ms;
            }
        }
        for (i = 0; i < L->d.slots; i++) {
            bool found;
            hwp__cp_load *l;
            if (!x->data[HWP__CP_ST(i)]) continue;
            l = hwp__cp_load_find(x, x->cam_key[i], &found);
            if (found) {
                hwp__cp_lvp_confidence(x, l);
                hwp__cp_lvp_tell(x, l);
            }
        }
        /* an unmasked load was still there to profile (not the last
         * samples of one masked at the previous interrupt, which were
         * already in the buffer): the profile is not complete, and the
         * watchdog's window is the desc's again */
        if (fresh) {
            L->complete = 0;
            x->idle_limit = L->d.idle_limit;
        }
        hwp__cp_lvp_resample(x);
        /* the final estimation pass is linear in the loads profiled
         * (sec. 5.3): one handler step per load record */
        if (L->cause == HWP__CP_C_FINAL)
            for (i = 0; i <= x->loads_mask; i++) n += x->loads[i].used;
        /* partitions are profiled in turn (sec. 4.2): the next one now.
         * A visit that reached the desc's bound saw the slots neither
         * fill (failed), saturate (done) nor thrash in visit_loads loads:
         * the part's unmasked working set is far smaller than the slots,
         * so, as after a quiet part (the idle event below), the split is
         * merged one level. A thrash split made in one phase would
         * otherwise hold for the rest of the run, and a later phase with
         * a small working set would spend its time visiting a few fine
         * parts while the heavy loads of the others go unprofiled. */
        L->idle_streak = 0;
        if (L->cause == HWP__CP_C_VISIT && L->part_bits) L->part_bits--;
        /* the turn counts on and the current part is its low part_bits
         * bits, whatever the level of the split: a turn taken modulo the
         * current number of parts would land every split on the sub-part
         * whose new bits are zero and wrap back at the next merge, so a
         * program that splits and merges over and over would never visit
         * half of its finer parts (unit test_lvp_fine_parts_in_turn) */
        L->part++;
        hwp__cp_lvp_region(x);
    }
    hwp_cp_host_reset(x);
    return n;
}

/* The filter found the current partition quiet: nothing unmasked in it
 * ran for a watchdog window. Move on. A full round of quiet partitions
 * means every load that ran in those windows is masked: the profile is
 * complete for now (sec. 4.1), and `complete` says so. Profiling does not
 * stop: a window is a moment of the run, and loads that run later (a
 * later phase, the end of the program) are still unprofiled; the paper's
 * co-processor never turns itself off, its interrupts just grow rare as
 * loads are masked. So the opcode filter stays on and the watchdog window
 * doubles with every quiet round (up to 2^40 loads), which makes the cost
 * of a quiet program's idle events fall geometrically; the next interrupt
 * that copies a slot clears `complete` and restores the window. */
static uint32_t hwp__cp_lvp_idle(hwp_cp *x, void *ctx) {
    hwp__cp_lvp *L = &x->lvp;
    (void)ctx;
    L->by_cause[HWP__CP_C_IDLE]++;
    hwp__cp_lvp_resample(x);
    if (++L->idle_streak >= (1u << L->part_bits)) {
        L->complete = 1;
        L->idle_streak = 0;
        if (x->idle_limit && x->idle_limit < ((uint64_t)1 << 40)) x->idle_limit <<= 1;
    }
    /* A quiet partition also says the program is now split finer than
     * its working set needs: thrash at start-up (the dynamic linker runs
     * thousands of loads once) would otherwise split the whole run for
     * good, and a load that runs in short bursts (gzip's CRC table load,
     * three bursts in 17.5 M instructions) is then profiled only if its
     * part happens to be the current one during a burst. So each quiet
     * partition merges one level of the split; thrash splits again when
     * the working set grows. */
    if (L->part_bits) L->part_bits--;
    L->part++;
    hwp__cp_lvp_region(x);
    return 0;
}

HWP_API hwp_status hwp_cp_lvp_start(hwp_cp *x, const hwp_cp_lvp_desc *ld) {
    hwp_cp_program p;
    hwp_cp_lvp_desc d;
    const char *why;
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (ld) d = *ld;
    else hwp__zero(&d, sizeof d);
    if ((why = hwp__cp_lvp_fill(x, &d)) != NULL)
        return hwp__fail(&x->head, HWP_EINVAL, why);
    hwp__zero(&p, sizeof p);
    p.routine[HWP_CLS_LOAD] = hwp__cp_lvp_routine;
    p.on_interrupt = hwp__cp_lvp_irq;
    p.on_idle = hwp__cp_lvp_idle;
    p.cls_mask = HWP_CLS_BIT(HWP_CLS_LOAD);
    hwp_cp_program_load(x, &p);
    x->app = HWP_CP_APP_LVP;
    x->lvp.d = d;
    x->lvp.cmax = hwp_sat_max(d.counter_bits);
    hwp_cp_ireg_width(x, HWP__CP_R_REPL, hwp_log2(d.slots) ? hwp_log2(d.slots) : 1);
    if (d.slots == 1) x->ireg_max[HWP__CP_R_REPL] = 0;
    hwp_cp_ireg_width(x, HWP__CP_R_FAILED, 16);
    hwp_cp_ireg_width(x, HWP__CP_R_DONE, 16);
    hwp_cp_ireg_width(x, HWP__CP_R_NREPL, 16);
    hwp_cp_ireg_width(x, HWP__CP_R_SAMPLES, 16);
    x->idle_limit = d.idle_limit;
    x->visit_limit = d.visit_loads;
    x->lvp.visit = 1;
    x->lvp.next_resample = hwp__cp_resample_after(x);
    return hwp__fail(&x->head, HWP_OK, "");
}

static void hwp__cp_sort(void *base, size_t n, size_t size);

/* 95% Wilson score interval of a proportion p seen in n samples: never
 * outside [0, 1], wide when n is small (a single sample gives about
 * [0.21, 1]), which is what keeps one lucky sample from reading as an
 * invariant load. */
static void hwp__cp_wilson(double p, uint64_t n, double *lo, double *hi) {
    const double z = 1.959964, z2 = z * z;
    double dn = (double)n, c, h, den;
    if (!n) {
        *lo = 0.0;
        *hi = 1.0;
        return;
    }
    den = 1.0 + z2 / dn;
    c = (p + z2 / (2.0 * dn)) / den;
    h = z * hwp_sqrt(p * (1.0 - p) / dn + z2 / (4.0 * dn * dn)) / den;
    *lo = c - h < 0.0 ? 0.0 : c - h;
    *hi = c + h > 1.0 ? 1.0 : c + h;
    /* the interval holds p; rounding at p = 0 or 1 must not say it does not */
    if (*lo > p) *lo = p;
    if (*hi < p) *hi = p;
}

static void hwp__cp_est_fill(hwp_cp_est *e, uint64_t pc, uint64_t value,
                             double inv, uint64_t samples, bool characterised) {
    e->pc = pc;
    e->value = value;
    e->inv = inv;
    e->samples = samples;
    e->characterised = characterised;
    hwp__cp_wilson(inv, samples, &e->lo, &e->hi);
}

HWP_API size_t hwp_cp_lvp_estimates(const hwp_cp *x, hwp_cp_est *out,
                                    size_t cap) {
    size_t n = 0;
    uint32_t i, k;
    if (!hwp__cp_ok(x)) return 0;
    for (i = 0; i <= x->loads_mask; i++) {
        const hwp__cp_load *l = &x->loads[i];
        const hwp__cp_val *v;
        double inv[64];
        if (!l->used) continue;
        hwp__cp_estimate(x, l, inv);
        v = hwp__cp_vals(x, l);
        for (k = 0; k < l->nvals; k++, n++) {
            if (n >= cap || !out) continue;
            hwp__cp_est_fill(&out[n], l->pc, v[k].value, inv[k],
                             hwp__cp_measured(&v[k]),
                             hwp__cp_characterised(x, l, &v[k]));
        }
    }
    if (out) hwp__cp_sort(out, n < cap ? n : cap, sizeof *out);
    return n;
}

static void hwp__cp_vprof(const hwp_cp *x, const hwp__cp_load *l,
                          hwp_cp_vprof *out) {
    const hwp__cp_val *v = hwp__cp_vals(x, l);
    double inv[64];
    uint32_t k, j, top[HWP_CP_TOP];
    hwp__zero(out, sizeof *out);
    out->pc = l->pc;
    out->samples = l->total;
    hwp__cp_estimate(x, l, inv);
    /* insertion into the top HWP_CP_TOP: lists hold at most 64 values */
    for (k = 0; k < l->nvals; k++) {
        for (j = out->nvals; j > 0 && inv[k] > out->inv[j - 1]; j--) {
            if (j < HWP_CP_TOP) {
                out->inv[j] = out->inv[j - 1];
                top[j] = top[j - 1];
            }
        }
        if (j < HWP_CP_TOP) {
            out->inv[j] = inv[k];
            top[j] = k;
            if (out->nvals < HWP_CP_TOP) out->nvals++;
        }
    }
    for (k = 0; k < out->nvals; k++) {
        out->value[k] = v[top[k]].value;
        hwp__cp_wilson(out->inv[k], hwp__cp_measured(&v[top[k]]), &out->lo[k],
                       &out->hi[k]);
    }
    /* the load is characterised when its best estimate is */
    out->characterised = out->nvals && hwp__cp_characterised(x, l, &v[top[0]]);
}

/* One PC's value profile, for a JIT deciding whether to specialise: a
 * hash probe plus the load's value list (at most lvp_values), so O(1) in
 * the number of loads profiled. False when the PC has no record. */
HWP_API bool hwp_cp_lvp_value(const hwp_cp *x, uint64_t pc, hwp_cp_vprof *out) {
    hwp__cp_load *l;
    bool found = false;
    if (!hwp__cp_ok(x) || !out) return false;
    l = hwp__cp_load_find(x, pc, &found);
    if (!found) {
        hwp__zero(out, sizeof *out);
        out->pc = pc;
        return false;
    }
    hwp__cp_vprof(x, l, out);
    return true;
}

/* Set after hwp_cp_lvp_start (starting a program clears it). */
HWP_API hwp_status hwp_cp_lvp_on_characterised(hwp_cp *x,
                                               hwp_cp_characterised_fn fn,
                                               void *ctx) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (x->app != HWP_CP_APP_LVP)
        return hwp__fail(&x->head, HWP_EINVAL,
                         "coproc: the callback needs load-value profiling started");
    x->lvp.on_char = fn;
    x->lvp.char_ctx = ctx;
    return hwp__fail(&x->head, HWP_OK, "");
}

/* The host's code for pc was invalidated (deoptimised, patched, moved):
 * forget its record and let the filter tag it again. The bit table is
 * shared between PCs (several hash bits each), so the host rebuilds it
 * from the loads still masked: one store per hash function each. */
HWP_API hwp_status hwp_cp_lvp_invalidate(hwp_cp *x, uint64_t pc) {
    hwp__cp_load *l;
    bool found = false;
    uint32_t i;
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (x->app != HWP_CP_APP_LVP)
        return hwp__fail(&x->head, HWP_EINVAL,
                         "coproc: invalidate needs load-value profiling started");
    l = hwp__cp_load_find(x, pc, &found);
    if (!found) return hwp__fail(&x->head, HWP_OK, "");
    x->lvp.invalidated++;
    x->lvp.complete = 0;
    x->cls_mask = x->prog.cls_mask; /* the load filter is on */
    x->lvp.idle_streak = 0;
    /* the record is emptied, not removed: removing would break the
     * table's probe chains */
    l->total = 0;
    l->nvals = 0;
    l->visits = 0;
    l->masked = 0;
    l->told = 0;
    l->last_visit = 0;
    l->vtotal = l->vweight = 0;
    hwp__zero(x->bits, (size_t)x->d.bit_table_bits / 8u);
    for (i = 0; i <= x->loads_mask; i++)
        if (x->loads[i].used && x->loads[i].masked)
            hwp_cp_filter_mask_pc(x, x->loads[i].pc);
    return hwp__fail(&x->head, HWP_OK, "");
}

/* ---- counting programs: edge profiling and call-stack monitoring -------
 * Entry e: CAM entry e holds the key, data words 4e..4e+3 hold k1, k2, a,
 * b. Entries are taken in order; a full array or a saturating 16-bit
 * counter interrupts and the host folds every entry into its table. */
#define HWP__CP_CTR_BITS 16u

#define HWP__CP_STACK 64u

static uint32_t hwp__cp_ctab_entries(const hwp_cp *x) {
    uint32_t e = (x->d.data_words -
                  (x->app == HWP_CP_APP_CALLSTACK ? HWP__CP_STACK : 0u)) / 4u;
    return e < x->cam_n ? e : x->cam_n;
}

/* Bump counter word `which` (2 = a, 3 = b) of the entry for key. */
static int hwp__cp_ctab_bump(hwp_cp *x, uint64_t key, uint64_t k1, uint64_t k2,
                             unsigned which) {
    uint32_t e = hwp_cp_cam_match(x, key);
    if (e == HWP_CP_NONE) {
        e = hwp_cp_ireg(x, HWP__CP_R_NEXT);
        if (e >= hwp__cp_ctab_entries(x)) return HWP_CP_IRQ_RETRY;
        hwp_cp_ireg_sinc(x, HWP__CP_R_NEXT);
        hwp_cp_cam_write(x, e, key);
        hwp_cp_dwrite(x, 4u * e, k1);
        hwp_cp_dwrite(x, 4u * e + 1u, k2);
    }
    if (hwp_cp_dsat_inc(x, 4u * e + which, HWP__CP_CTR_BITS) >=
        hwp_sat_max(HWP__CP_CTR_BITS))
        return HWP_CP_IRQ;
    return HWP_CP_DONE;
}

static uint32_t hwp__cp_ctab_irq(hwp_cp *x, void *ctx) {
    uint32_t e, n = hwp_cp_ireg(x, HWP__CP_R_NEXT);
    (void)ctx;
    for (e = 0; e < n; e++) {
        uint64_t key = hwp_cp_host_cam(x, e);
        uint64_t k1 = hwp_cp_host_data(x, 4u * e);
        uint64_t k2 = hwp_cp_host_data(x, 4u * e + 1u);
        uint32_t kind = x->app == HWP_CP_APP_CALLSTACK ? HWP__CP_K_CTX
                        : key == k1                    ? HWP__CP_K_EDGE
                                                       : HWP__CP_K_TARGET;
        hwp__cp_tab_add(x, kind, k1, k2, hwp_cp_host_data(x, 4u * e + 2u),
                        hwp_cp_host_data(x, 4u * e + 3u));
    }
    /* the call stack survives: only the counting entries are cleared */
    for (e = 0; e < n; e++) {
        x->data[4u * e + 2u] = x->data[4u * e + 3u] = 0;
    }
    hwp_cp_cam_invalidate_all(x);
    x->words++;
    hwp__cp_charge(x, HWP_COST_COPROC_WORD, 1);
    x->ireg[HWP__CP_R_NEXT] = 0;
    return n;
}

/* Indirect targets are keyed by a hash of (pc, target); the exact pair
 * travels in the entry's data words, so the host table is exact. */
static uint64_t hwp__cp_pair_key(uint64_t a, uint64_t b) {
    return hwp_mix64(a ^ hwp_mix64(b ^ 0x7461726765740000ull));
}

static int hwp__cp_edge_cond(hwp_cp *x, const hwp_insn *s, void *ctx) {
    (void)ctx;
    return hwp__cp_ctab_bump(x, s->pc, s->pc, 0,
                             (s->events & HWP_EV_TAKEN) ? 2u : 3u);
}

static int hwp__cp_edge_indirect(hwp_cp *x, const hwp_insn *s, void *ctx) {
    (void)ctx;
    if (s->cls == HWP_CLS_CALL && !(s->events & HWP_EV_INDIRECT))
        return HWP_CP_DONE;
    return hwp__cp_ctab_bump(x, hwp__cp_pair_key(s->pc, s->next_pc), s->pc,
                             s->next_pc, 2u);
}

HWP_API hwp_status hwp_cp_edge_start(hwp_cp *x) {
    hwp_cp_program p;
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if ((x->fields & (HWP_CP_F_PC | HWP_CP_F_NEXT | HWP_CP_F_EVENTS)) !=
        (HWP_CP_F_PC | HWP_CP_F_NEXT | HWP_CP_F_EVENTS))
        return hwp__fail(&x->head, HWP_EINVAL,
                         "coproc: edge profiling needs the PC, NEXT and EVENTS fields");
    hwp__zero(&p, sizeof p);
    p.routine[HWP_CLS_BR_COND] = hwp__cp_edge_cond;
    p.routine[HWP_CLS_INDIRECT] = hwp__cp_edge_indirect;
    p.routine[HWP_CLS_CALL] = hwp__cp_edge_indirect;
    p.on_interrupt = hwp__cp_ctab_irq;
    p.cls_mask = HWP_CLS_BIT(HWP_CLS_BR_COND) | HWP_CLS_BIT(HWP_CLS_INDIRECT) |
                 HWP_CLS_BIT(HWP_CLS_CALL);
    hwp_cp_program_load(x, &p);
    x->app = HWP_CP_APP_EDGE;
    return hwp__fail(&x->head, HWP_OK, "");
}

HWP_API bool hwp_cp_edge(const hwp_cp *x, uint64_t pc, uint64_t *taken,
                         uint64_t *not_taken) {
    const hwp__cp_ent *e = hwp__cp_ok(x) ? hwp__cp_tab_find(x, HWP__CP_K_EDGE, pc, 0) : 0;
    if (taken) *taken = e ? e->a : 0;
    if (not_taken) *not_taken = e ? e->b : 0;
    return e != 0;
}

HWP_API uint64_t hwp_cp_edge_target(const hwp_cp *x, uint64_t pc,
                                    uint64_t target) {
    const hwp__cp_ent *e =
        hwp__cp_ok(x) ? hwp__cp_tab_find(x, HWP__CP_K_TARGET, pc, target) : 0;
    return e ? e->a : 0;
}

/* Call stack: the top of the data array is a circular stack of call-site
 * PCs (SP wraps, DEPTH saturates), sec. 3.6. A context is the hash of the
 * innermost `depth` call sites. */
static uint32_t hwp__cp_stack_base(const hwp_cp *x) {
    return x->d.data_words - HWP__CP_STACK;
}

static uint64_t hwp__cp_ctx_hash(const uint64_t *sites, uint32_t n) {
    uint64_t k = hwp_mix64(0x63747800ull + n);
    uint32_t j;
    for (j = 0; j < n; j++) k = hwp_mix64(k ^ sites[j]);
    return k;
}

static int hwp__cp_cs_routine(hwp_cp *x, const hwp_insn *s, void *ctx) {
    uint32_t base = hwp__cp_stack_base(x), sp, depth, n, j;
    uint64_t sites[HWP__CP_STACK];
    int r = HWP_CP_DONE;
    (void)ctx;
    if (s->events & x->app_arg[0]) {
        depth = hwp_cp_ireg(x, HWP__CP_R_DEPTH);
        sp = hwp_cp_ireg(x, HWP__CP_R_SP);
        n = depth < x->app_arg[1] ? depth : x->app_arg[1];
        for (j = 0; j < n; j++)
            sites[j] = hwp_cp_dread(x, base + ((sp - 1u - j) & (HWP__CP_STACK - 1u)));
        r = hwp__cp_ctab_bump(x, hwp__cp_ctx_hash(sites, n),
                              hwp__cp_ctx_hash(sites, n), 0, 2u);
        if (r == HWP_CP_IRQ_RETRY) return r;
    }
    if (s->cls == HWP_CLS_CALL) {
        hwp_cp_dwrite(x, base + hwp_cp_ireg(x, HWP__CP_R_SP), s->pc);
        hwp_cp_ireg_inc(x, HWP__CP_R_SP);
        hwp_cp_ireg_sinc(x, HWP__CP_R_DEPTH);
    } else if (s->cls == HWP_CLS_RET && hwp_cp_ireg(x, HWP__CP_R_DEPTH)) {
        hwp_cp_ireg_set(x, HWP__CP_R_SP, hwp_cp_ireg(x, HWP__CP_R_SP) - 1u);
        hwp_cp_ireg_sdec(x, HWP__CP_R_DEPTH);
    }
    return r;
}

HWP_API hwp_status hwp_cp_callstack_start(hwp_cp *x, uint32_t ev_mask,
                                          uint32_t ev_classes, uint32_t depth) {
    hwp_cp_program p;
    unsigned c;
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (!ev_mask || depth < 1 || depth > HWP__CP_STACK ||
        (ev_classes & ~(uint32_t)HWP_CLS_ALL))
        return hwp__fail(&x->head, HWP_EINVAL,
                         "coproc: call stack needs events, depth 1..64 and known classes");
    if ((x->fields & (HWP_CP_F_PC | HWP_CP_F_EVENTS)) !=
        (HWP_CP_F_PC | HWP_CP_F_EVENTS))
        return hwp__fail(&x->head, HWP_EINVAL,
                         "coproc: call stack needs the PC and EVENTS fields");
    if (x->d.data_words < 2u * HWP__CP_STACK)
        return hwp__fail(&x->head, HWP_EINVAL, "coproc: call stack needs >= 128 data words");
    hwp__zero(&p, sizeof p);
    p.cls_mask = ev_classes | HWP_CLS_BIT(HWP_CLS_CALL) | HWP_CLS_BIT(HWP_CLS_RET);
    for (c = 0; c < HWP_CLS_COUNT; c++)
        if (p.cls_mask & HWP_CLS_BIT(c)) p.routine[c] = hwp__cp_cs_routine;
    p.on_interrupt = hwp__cp_ctab_irq;
    hwp_cp_program_load(x, &p);
    x->app = HWP_CP_APP_CALLSTACK;
    x->app_arg[0] = ev_mask;
    x->app_arg[1] = depth;
    hwp_cp_ireg_width(x, HWP__CP_R_SP, 6);
    hwp_cp_ireg_width(x, HWP__CP_R_DEPTH, 6);
    return hwp__fail(&x->head, HWP_OK, "");
}

HWP_API uint64_t hwp_cp_callstack_count(const hwp_cp *x, const uint64_t *sites,
                                        uint32_t n) {
    const hwp__cp_ent *e;
    uint64_t k;
    if (!hwp__cp_ok(x) || (n && !sites) || n > HWP__CP_STACK) return 0;
    k = hwp__cp_ctx_hash(sites, n);
    e = hwp__cp_tab_find(x, HWP__CP_K_CTX, k, 0);
    return e ? e->a : 0;
}

/* sites[0] the innermost call site; n <= 64 (0 for the outermost code). */
HWP_API uint64_t hwp_cp_callstack_key(const uint64_t *sites, uint32_t n) {
    return (n && !sites) || n > HWP__CP_STACK ? 0 : hwp__cp_ctx_hash(sites, n);
}

/* Every context the host's table holds (after hwp_cp_flush: the entries
 * still in the co-processor's array are not in it yet), in table order;
 * returns how many there are, of which at most cap are written. */
HWP_API size_t hwp_cp_callstack_contexts(const hwp_cp *x, hwp_cp_ctx *out,
                                         size_t cap) {
    size_t n = 0;
    uint32_t i;
    if (!hwp__cp_ok(x)) return 0;
    for (i = 0; i <= x->tab_mask; i++) {
        const hwp__cp_ent *e = &x->tab[i];
        if (!e->used || e->kind != HWP__CP_K_CTX) continue;
        if (out && n < cap) {
            out[n].key = e->k1;
            out[n].events = e->a;
        }
        n++;
    }
    return n;
}

/* ---- window programs: memory dependences and cache conflicts ------------
 * The CAM holds the last W keys (stored addresses, missed blocks), taken
 * round-robin: that is the "short duration" window. A hit is logged as a
 * pair in the data array after the window's words; a full log interrupts
 * and the host folds it into its table (sec. 3.6). */
static uint32_t hwp__cp_window(const hwp_cp *x) {
    uint32_t w = x->d.data_words / 2u;
    return w < x->cam_n ? w : x->cam_n;
}

static uint32_t hwp__cp_log_cap(const hwp_cp *x) {
    return (x->d.data_words - hwp__cp_window(x)) / 2u;
}

static int hwp__cp_log(hwp_cp *x, uint64_t a, uint64_t b) {
    uint32_t j = hwp_cp_ireg(x, HWP__CP_R_LOG), base = hwp__cp_window(x);
    hwp_cp_dwrite(x, base + 2u * j, a);
    hwp_cp_dwrite(x, base + 2u * j + 1u, b);
    return hwp_cp_ireg_sinc(x, HWP__CP_R_LOG) >= hwp__cp_log_cap(x) ? HWP_CP_IRQ
                                                                   : HWP_CP_DONE;
}

/* Remember key (with payload) in the window; returns the entry it had. */
static uint32_t hwp__cp_window_put(hwp_cp *x, uint64_t key, uint64_t payload) {
    uint32_t e = hwp_cp_cam_match(x, key), hit = e;
    if (e == HWP_CP_NONE) {
        e = hwp_cp_ireg(x, HWP__CP_R_NEXT);
        hwp_cp_ireg_set(x, HWP__CP_R_NEXT, e + 1u == hwp__cp_window(x) ? 0 : e + 1u);
        hwp_cp_cam_write(x, e, key);
    }
    hwp_cp_dwrite(x, e, payload);
    return hit;
}

static int hwp__cp_md_routine(hwp_cp *x, const hwp_insn *s, void *ctx) {
    uint64_t key = s->addr >> x->app_arg[0];
    uint32_t e;
    (void)ctx;
    if (s->cls == HWP_CLS_STORE) {
        hwp__cp_window_put(x, key, s->pc);
        return HWP_CP_DONE;
    }
    e = hwp_cp_cam_match(x, key);
    return e == HWP_CP_NONE ? HWP_CP_DONE
                            : hwp__cp_log(x, hwp_cp_dread(x, e), s->pc);
}

static int hwp__cp_cc_routine(hwp_cp *x, const hwp_insn *s, void *ctx) {
    uint64_t block = s->addr >> x->app_arg[0];
    (void)ctx;
    if (!(s->events & HWP_EV_DCMISS)) return HWP_CP_DONE;
    if (hwp__cp_window_put(x, block, s->pc) == HWP_CP_NONE) return HWP_CP_DONE;
    return hwp__cp_log(x, block, s->pc);
}

static uint32_t hwp__cp_window_irq(hwp_cp *x, void *ctx) {
    uint32_t j, n = hwp_cp_ireg(x, HWP__CP_R_LOG), base = hwp__cp_window(x);
    (void)ctx;
    for (j = 0; j < n; j++) {
        uint64_t a = hwp_cp_host_data(x, base + 2u * j);
        uint64_t b = hwp_cp_host_data(x, base + 2u * j + 1u);
        if (x->app == HWP_CP_APP_MEMDEP) {
            hwp__cp_tab_add(x, HWP__CP_K_DEP, a, b, 1, 0);
        } else {
            hwp__cp_tab_add(x, HWP__CP_K_BLOCK, a, 0, 1, 0);
            hwp__cp_tab_add(x, HWP__CP_K_CPC, b, 0, 1, 0);
            hwp__cp_tab_add(x, HWP__CP_K_SET, a & (x->app_arg[1] - 1u), 0, 1, 0);
        }
    }
    x->ireg[HWP__CP_R_LOG] = 0; /* the window itself stays */
    return n;
}

static hwp_status hwp__cp_window_start(hwp_cp *x, hwp_cp_routine fn,
                                       uint32_t app, uint32_t shift,
                                       uint32_t sets) {
    hwp_cp_program p;
    hwp__zero(&p, sizeof p);
    p.routine[HWP_CLS_LOAD] = fn;
    p.routine[HWP_CLS_STORE] = fn;
    p.on_interrupt = hwp__cp_window_irq;
    p.cls_mask = HWP_CLS_BIT(HWP_CLS_LOAD) | HWP_CLS_BIT(HWP_CLS_STORE);
    hwp_cp_program_load(x, &p);
    x->app = app;
    x->app_arg[0] = shift;
    x->app_arg[1] = sets;
    return hwp__fail(&x->head, HWP_OK, "");
}

HWP_API hwp_status hwp_cp_memdep_start(hwp_cp *x, uint32_t gran_bits) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (gran_bits > 12 || (x->fields & (HWP_CP_F_PC | HWP_CP_F_ADDR)) !=
                              (HWP_CP_F_PC | HWP_CP_F_ADDR))
        return hwp__fail(&x->head, HWP_EINVAL,
                         "coproc: memdep needs gran_bits <= 12 and the PC and ADDR fields");
    return hwp__cp_window_start(x, hwp__cp_md_routine, HWP_CP_APP_MEMDEP,
                                gran_bits, 1);
}

HWP_API uint64_t hwp_cp_memdep_count(const hwp_cp *x, uint64_t store_pc,
                                     uint64_t load_pc) {
    const hwp__cp_ent *e =
        hwp__cp_ok(x) ? hwp__cp_tab_find(x, HWP__CP_K_DEP, store_pc, load_pc) : 0;
    return e ? e->a : 0;
}

HWP_API hwp_status hwp_cp_conflict_start(hwp_cp *x, uint32_t line_bits,
                                         uint32_t sets) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (line_bits > 16 || !hwp_is_pow2(sets) || sets > (1u << 24) ||
        (x->fields & (HWP_CP_F_ADDR | HWP_CP_F_EVENTS)) !=
            (HWP_CP_F_ADDR | HWP_CP_F_EVENTS))
        return hwp__fail(&x->head, HWP_EINVAL,
                         "coproc: conflict needs line_bits <= 16, pow2 sets and "
                         "the ADDR and EVENTS fields");
    return hwp__cp_window_start(x, hwp__cp_cc_routine, HWP_CP_APP_CONFLICT,
                                line_bits, sets);
}

HWP_API uint64_t hwp_cp_conflict_set(const hwp_cp *x, uint64_t set) {
    const hwp__cp_ent *e =
        hwp__cp_ok(x) ? hwp__cp_tab_find(x, HWP__CP_K_SET, set, 0) : 0;
    return e ? e->a : 0;
}

/* Conflict refills taken by the load at pc: the instruction a
 * prefetch or a data-layout change would target. */
HWP_API uint64_t hwp_cp_conflict_pc(const hwp_cp *x, uint64_t pc) {
    const hwp__cp_ent *e =
        hwp__cp_ok(x) ? hwp__cp_tab_find(x, HWP__CP_K_CPC, pc, 0) : 0;
    return e ? e->a : 0;
}

HWP_API uint64_t hwp_cp_conflict_block(const hwp_cp *x, uint64_t addr) {
    const hwp__cp_ent *e =
        hwp__cp_ok(x) ? hwp__cp_tab_find(x, HWP__CP_K_BLOCK, addr >> x->app_arg[0], 0)
                      : 0;
    return e ? e->a : 0;
}

/* ---- end of run, stats, merge ------------------------------------------- */

HWP_API hwp_status hwp_cp_sync(hwp_cp *x) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    hwp__cp_drain(x, x->events * x->clock_x16);
    return hwp__fail(&x->head, HWP_OK, "");
}

/* End of stream: the co-processor runs every buffered sample, then the
 * host takes the final interrupt. Idempotent: a second flush with no
 * sample accepted in between changes nothing and charges nothing. */
HWP_API hwp_status hwp_cp_flush(hwp_cp *x) {
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    if (x->flushed) return hwp__fail(&x->head, HWP_OK, "");
    hwp__cp_drain(x, ~(uint64_t)0);
    if (x->app == HWP_CP_APP_LVP) x->lvp.cause = HWP__CP_C_FINAL;
    if (x->app != HWP_CP_APP_NONE && x->prog.on_interrupt)
        hwp__cp_interrupt(x, x->prog.on_interrupt);
    x->flushed = 1;
    return hwp__fail(&x->head, HWP_OK, "");
}

/* Back to the instance right after init: same desc, storage, cost and
 * seed, no program loaded. */
HWP_API hwp_status hwp_cp_reset(hwp_cp *x) {
    hwp_cp_desc d;
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    d = x->d;
    return hwp_cp_init(x, x->mem, hwp__cp_size(&d), &d, x->cost);
}

/* A copy of src's whole state in other storage (hwp_cp_bytes of its
 * desc) that runs on by itself and charges `cost` (give it src's cost
 * figures, or the copy's timing differs): flushing the copy gives the
 * profile src would report if its run stopped now, src untouched (the
 * convergence curve of hwprof-cp-compare). The state holds pointers into
 * its storage, so a memcpy of the handle is not a copy. The copy does not
 * call src's JIT callback: src's loads would be told twice. */
HWP_API hwp_status hwp_cp_clone(hwp_cp *dst, void *storage, size_t bytes,
                                const hwp_cp *src, hwp_cost *cost) {
    hwp_cp t;
    if (!hwp__cp_ok(src) || !dst || dst == src) return HWP_EINVAL;
    if (hwp_cp_init(dst, storage, bytes, &src->d, cost) != HWP_OK)
        return (hwp_status)dst->head.status;
    t = *dst; /* the copy's own storage, its pointers into it, its cost */
    hwp__copy(t.mem, src->mem, hwp__cp_size(&t.d));
    *dst = *src;
    dst->bits = t.bits, dst->buf = t.buf, dst->arrive = t.arrive;
    dst->cam_key = t.cam_key, dst->cam_valid = t.cam_valid, dst->cam_hix = t.cam_hix;
    dst->data = t.data, dst->tab = t.tab, dst->loads = t.loads, dst->vals = t.vals;
    dst->mem = t.mem, dst->cost = t.cost;
    dst->op_cyc = t.op_cyc, dst->rmw_cyc = t.rmw_cyc, dst->dispatch_cyc = t.dispatch_cyc;
    dst->lvp.on_char = NULL;
    dst->lvp.char_ctx = NULL;
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API hwp_status hwp_cp_get_stats(const hwp_cp *x, hwp_cp_stats *o) {
    if (!hwp__cp_ok(x) || !o) return HWP_EINVAL;
    hwp__zero(o, sizeof *o);
    o->events = x->events;
    o->dropped = x->dropped + x->tab_lost + x->lvp.loads_lost;
    o->evicted = x->lvp.replacements + x->lvp.values_lost;
    o->cycles = x->host_cycles;
    o->class_passed = x->class_passed;
    o->region_rejected = x->region_rejected;
    o->masked_rejected = x->masked_rejected;
    o->tagged = x->tagged;
    o->buffer_dropped = x->dropped;
    o->processed = x->processed;
    o->cp_cycles = x->cp_cycles;
    o->interrupts = x->interrupts;
    o->idle_events = x->idle_events;
    o->irq_samples = x->irq_samples;
    o->words = x->words;
    o->table_lost = x->tab_lost;
    o->loads_lost = x->lvp.loads_lost;
    o->values_lost = x->lvp.values_lost;
    o->samples_lost = x->lvp.samples_lost;
    o->visits = x->app == HWP_CP_APP_LVP ? x->lvp.visit - 1u : 0;
    o->lowinfo_slots = x->lvp.lowinfo_slots;
    o->lowinfo_samples = x->lvp.lowinfo_samples;
    o->buffer_samples = x->cap;
    o->sample_bytes = x->sample_bytes;
    return HWP_OK;
}

HWP__GET_DESC_FN(cp, d, hwp__cp_ok(x))

/* Counters add; result tables and load records merge by key. A host
 * operation: nothing is charged. Flush both first so no state is left in
 * the co-processor's arrays. The two halves of a stream do not merge to
 * the whole stream's report: the program's state (partition, masks,
 * slots) at the cut differs; the bound tests check is that every event
 * and every copied sample is accounted for exactly once. */
HWP_API hwp_status hwp_cp_merge(hwp_cp *dst, const hwp_cp *src) {
    uint32_t i, k;
    const hwp_field *f;
    if (!hwp__cp_ok(dst) || !hwp__cp_ok(src)) return HWP_EINVAL;
    if ((f = hwp__field_diff(&dst->d, &src->d, hwp__cp_desc_f, HWP__N(hwp__cp_desc_f))))
        return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    if (dst->app == HWP_CP_APP_NONE && src->app != HWP_CP_APP_NONE &&
        dst->events == 0) {
        /* an empty instance takes the program of what merges into it */
        dst->app = src->app;
        dst->prog = src->prog;
        dst->lvp.d = src->lvp.d;
        dst->lvp.cmax = src->lvp.cmax;
        dst->lvp.visit = 1;
    }
    if (dst->app != src->app && src->app != HWP_CP_APP_NONE)
        return hwp__fail(&dst->head, HWP_EMISMATCH,
                         "coproc: merge: the running programs differ");
    dst->events += src->events;
    dst->class_passed += src->class_passed;
    dst->region_rejected += src->region_rejected;
    dst->masked_rejected += src->masked_rejected;
    dst->tagged += src->tagged;
    dst->dropped += src->dropped;
    dst->processed += src->processed;
    dst->cp_cycles += src->cp_cycles;
    dst->interrupts += src->interrupts;
    dst->idle_events += src->idle_events;
    dst->irq_samples += src->irq_samples;
    dst->words += src->words;
    dst->host_cycles += src->host_cycles;
    dst->tab_lost += src->tab_lost;
    for (i = 0; i <= src->tab_mask; i++) {
        const hwp__cp_ent *e = &src->tab[i];
        if (e->used) hwp__cp_tab_add(dst, e->kind, e->k1, e->k2, e->a, e->b);
    }
    for (i = 0; i <= src->loads_mask; i++) {
        const hwp__cp_load *l = &src->loads[i];
        const hwp__cp_val *v = hwp__cp_vals(src, l);
        hwp__cp_load *t;
        double sh[64];
        bool found;
        if (!l->used) continue;
        t = hwp__cp_load_find(dst, l->pc, &found);
        if (!t) {
            dst->lvp.loads_lost++;
            continue;
        }
        if (!found) {
            t->used = 1;
            t->pc = l->pc;
        }
        t->total += l->total;
        t->visits += l->visits;
        t->masked |= l->masked;
        t->told |= l->told;
        t->vweight += hwp__cp_shares(src, l, sh);
        for (k = 0; k < l->nvals; k++) {
            hwp__cp_val *rec = hwp__cp_load_add(dst, t, v[k].value, v[k].hits,
                                                v[k].misses);
            if (rec) rec->share += sh[k];
        }
    }
    dst->lvp.replacements += src->lvp.replacements;
    dst->lvp.ignored += src->lvp.ignored;
    dst->lvp.thrash += src->lvp.thrash;
    dst->lvp.masked += src->lvp.masked;
    dst->lvp.reselect += src->lvp.reselect;
    dst->lvp.turned_off += src->lvp.turned_off;
    dst->lvp.loads_lost += src->lvp.loads_lost;
    dst->lvp.values_lost += src->lvp.values_lost;
    dst->lvp.lowinfo_slots += src->lvp.lowinfo_slots;
    dst->lvp.lowinfo_samples += src->lvp.lowinfo_samples;
    dst->lvp.invalidated += src->lvp.invalidated;
    dst->lvp.resampled += src->lvp.resampled;
    dst->lvp.samples_lost += src->lvp.samples_lost;
    if (src->lvp.visit > 1) dst->lvp.visit += src->lvp.visit - 1u;
    for (k = 0; k < 6; k++) dst->lvp.by_cause[k] += src->lvp.by_cause[k];
    return hwp__fail(&dst->head, HWP_OK, "");
}

/* ---- the buffered sampler ---------------------------------------------- */

/* Defaults as hwp_cp_simple_desc's comments attribute them. */
static const hwp_field hwp__cp_simple_desc_f[] = {
    HWP__FN(hwp_cp_simple_desc, "coproc simple", period, UINT, 10000, 2, 0xFFFFFFFFu,
            0, "coproc simple: period must be >= 2"),
    HWP__FN(hwp_cp_simple_desc, "coproc simple", buffer, UINT, 128, 1, 1u << 20, 0,
            "coproc simple: buffer must be 1..2^20 samples"),
    HWP__FN(hwp_cp_simple_desc, "coproc simple", entries, UINT, 16384, 4, 1u << 26,
            HWP_FIELD_POW2, "coproc simple: entries must be a power of two in [4, 2^26]"),
    HWP__FN(hwp_cp_simple_desc, "coproc simple", min_samples, UINT, 64, 1,
            0x7FFFFFFFu, 0, "coproc simple: min_samples must be < 2^31"),
    HWP__FN(hwp_cp_simple_desc, "coproc simple", seed, HEX, 0, 0, ~(uint64_t)0, 0,
            NULL)};

HWP__FIELDS_FN(hwp_cp_simple_desc_fields, hwp__cp_simple_desc_f)

/* Fill the defaults once, validate: a reason or NULL. */
static const char *hwp__cp_simple_fill(hwp_cp_simple_desc *d) {
    return hwp__field_fill(d, hwp__cp_simple_desc_f, HWP__N(hwp__cp_simple_desc_f));
}

static size_t hwp__cp_simple_size(const hwp_cp_simple_desc *d) {
    return HWP_CP_SIMPLE_BYTES(d->buffer, d->entries) - (HWP__ALIGN - 1u);
}

HWP_API size_t hwp_cp_simple_bytes(const hwp_cp_simple_desc *dp) {
    hwp_cp_simple_desc d;
    if (dp) d = *dp;
    else hwp__zero(&d, sizeof d);
    return hwp__cp_simple_fill(&d) ? 0 : hwp__bytes(hwp__cp_simple_size(&d));
}

static void hwp__cp_simple_reload(hwp_cp_simple *s) {
    s->countdown = s->period / 2u + hwp_rng_below(&s->rng, s->period);
}

static void hwp__cp_simple_charge(hwp_cp_simple *s, hwp_cost_op op, uint64_t n) {
    s->host_cycles += n * hwp_cost_cycles(s->cost, op);
    hwp_cost_charge(s->cost, op, n);
}

HWP_API hwp_status hwp_cp_simple_init(hwp_cp_simple *s, void *storage,
                                      size_t bytes,
                                      const hwp_cp_simple_desc *dp,
                                      hwp_cost *cost) {
    hwp_cp_simple_desc d;
    const char *why;
    unsigned char *cur;
    if (!s) return HWP_EINVAL;
    hwp__zero(s, sizeof *s);
    if (dp) d = *dp;
    else hwp__zero(&d, sizeof d);
    why = hwp__cp_simple_fill(&d);
    if (hwp__admit(&s->head, why, &storage, &bytes,
                       why ? 0 : hwp__cp_simple_size(&d)) != HWP_OK)
        return (hwp_status)s->head.status;
    hwp__zero(storage, hwp__cp_simple_size(&d));
    cur = (unsigned char *)storage;
    s->mem = storage;
    s->d = d;
    s->tab = (hwp__cp_pair *)hwp__carve(&cur, (size_t)d.entries * sizeof(hwp__cp_pair));
    s->buf = (uint64_t *)hwp__carve(&cur, (size_t)d.buffer * 16u);
    s->period = d.period;
    s->mask = d.entries - 1u;
    s->cost = cost;
    hwp_rng_seed(&s->rng, d.seed);
    hwp__cp_simple_reload(s);
    s->head.magic = HWP__CP_SMAGIC;
    return hwp__fail(&s->head, HWP_OK, "");
}

static bool hwp__cp_simple_ok(const hwp_cp_simple *s) {
    return s && s->head.magic == HWP__CP_SMAGIC;
}

HWP_API hwp_status hwp_cp_simple_reset(hwp_cp_simple *s) {
    hwp_cp_simple_desc d;
    if (!hwp__cp_simple_ok(s)) return HWP_EINVAL;
    d = s->d;
    return hwp_cp_simple_init(s, s->mem, hwp__cp_simple_size(&d), &d, s->cost);
}

static hwp__cp_pair *hwp__cp_pair_slot(const hwp_cp_simple *s, uint32_t kind,
                                       uint64_t pc, uint64_t value) {
    uint32_t h = (uint32_t)hwp_mix64(pc ^ hwp_mix64(value + kind)) & s->mask, n;
    for (n = 0; n <= s->mask; n++) {
        hwp__cp_pair *p = &s->tab[h];
        if (!p->used || (p->kind == kind && p->pc == pc && p->value == value))
            return p;
        h = (h + 1) & s->mask;
    }
    return 0;
}

static bool hwp__cp_pair_bump(hwp_cp_simple *s, uint32_t kind, uint64_t pc,
                              uint64_t value, uint64_t n) {
    hwp__cp_pair *p = hwp__cp_pair_slot(s, kind, pc, value);
    if (!p) return false;
    p->used = 1;
    p->kind = kind;
    p->pc = pc;
    p->value = value;
    p->count += n;
    return true;
}

/* A sample goes into the table only with its load's total, so an
 * estimate's numerator and denominator always count the same samples. */
static void hwp__cp_simple_count(hwp_cp_simple *s, uint64_t pc, uint64_t value,
                                 uint64_t n) {
    hwp__cp_pair *t = hwp__cp_pair_slot(s, 2, pc, 0), *v;
    if (!t) {
        s->lost += n;
        return;
    }
    if (!t->used) { /* claim it first, so the pair's probe skips it */
        t->used = 1;
        t->kind = 2;
        t->pc = pc;
        t->value = 0;
    }
    v = hwp__cp_pair_slot(s, 1, pc, value);
    if (!v) {
        s->lost += n;
        return;
    }
    t->count += n;
    hwp__cp_pair_bump(s, 1, pc, value, n);
}

/* The interrupt: the handler reads every buffered sample. */
static void hwp__cp_simple_irq(hwp_cp_simple *s) {
    uint32_t i;
    if (!s->pending) return;
    s->interrupts++;
    hwp__cp_simple_charge(s, HWP_COST_COPROC_INTERRUPT, 1);
    hwp__cp_simple_charge(s, HWP_COST_COPROC_SAMPLE, s->pending);
    hwp__cp_simple_charge(s, HWP_COST_COPROC_WORD, 2u * (uint64_t)s->pending);
    for (i = 0; i < s->pending; i++)
        hwp__cp_simple_count(s, s->buf[2u * i], s->buf[2u * i + 1u], 1);
    s->pending = 0;
}

HWP_API void hwp__cp_simple_sample(hwp_cp_simple *s, uint64_t pc,
                                   uint64_t value) {
    s->samples++;
    s->buf[2u * s->pending] = pc;
    s->buf[2u * s->pending + 1u] = value;
    if (++s->pending >= s->d.buffer) hwp__cp_simple_irq(s);
    hwp__cp_simple_reload(s);
}

/* End of stream: the partial buffer interrupts once. Idempotent. */
HWP_API hwp_status hwp_cp_simple_flush(hwp_cp_simple *s) {
    if (!hwp__cp_simple_ok(s)) return HWP_EINVAL;
    hwp__cp_simple_irq(s);
    return hwp__fail(&s->head, HWP_OK, "");
}

/* As hwp_cp_clone: a running copy, flushed for what src would report
 * now. */
HWP_API hwp_status hwp_cp_simple_clone(hwp_cp_simple *dst, void *storage,
                                       size_t bytes, const hwp_cp_simple *src,
                                       hwp_cost *cost) {
    hwp_cp_simple t;
    if (!hwp__cp_simple_ok(src) || !dst || dst == src) return HWP_EINVAL;
    if (hwp_cp_simple_init(dst, storage, bytes, &src->d, cost) != HWP_OK)
        return (hwp_status)dst->head.status;
    t = *dst;
    hwp__copy(t.mem, src->mem, hwp__cp_simple_size(&t.d));
    *dst = *src;
    dst->tab = t.tab, dst->buf = t.buf, dst->mem = t.mem, dst->cost = t.cost;
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API hwp_status hwp_cp_simple_get_stats(const hwp_cp_simple *s,
                                           hwp_cp_simple_stats *o) {
    if (!hwp__cp_simple_ok(s) || !o) return HWP_EINVAL;
    hwp__zero(o, sizeof *o);
    o->events = s->loads;
    o->dropped = s->lost;
    o->cycles = s->host_cycles;
    o->samples = s->samples;
    o->interrupts = s->interrupts;
    o->pending = s->pending;
    return HWP_OK;
}

HWP__GET_DESC_FN(cp_simple, d, hwp__cp_simple_ok(x))

HWP_API size_t hwp_cp_simple_estimates(const hwp_cp_simple *s, hwp_cp_est *out,
                                       size_t cap) {
    size_t n = 0;
    uint32_t i;
    if (!hwp__cp_simple_ok(s)) return 0;
    for (i = 0; i <= s->mask; i++) {
        const hwp__cp_pair *p = &s->tab[i], *t;
        if (!p->used || p->kind != 1) continue;
        t = hwp__cp_pair_slot(s, 2, p->pc, 0);
        if (n < cap && out && t && t->used && t->count)
            hwp__cp_est_fill(&out[n], p->pc, p->value,
                             (double)p->count / (double)t->count, t->count,
                             t->count >= s->d.min_samples);
        n++;
    }
    if (out) hwp__cp_sort(out, n < cap ? n : cap, sizeof *out);
    return n;
}

HWP_API hwp_status hwp_cp_simple_merge(hwp_cp_simple *dst,
                                       const hwp_cp_simple *src) {
    uint32_t i;
    const hwp_field *f;
    if (!hwp__cp_simple_ok(dst) || !hwp__cp_simple_ok(src)) return HWP_EINVAL;
    if ((f = hwp__field_diff(&dst->d, &src->d, hwp__cp_simple_desc_f,
                             HWP__N(hwp__cp_simple_desc_f))) != NULL)
        return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    for (i = 0; i <= src->mask; i++) {
        const hwp__cp_pair *p = &src->tab[i];
        if (p->used && p->kind == 1) hwp__cp_simple_count(dst, p->pc, p->value, p->count);
    }
    for (i = 0; i < src->pending; i++) /* unflushed samples travel too */
        hwp__cp_simple_count(dst, src->buf[2u * i], src->buf[2u * i + 1u], 1);
    dst->loads += src->loads;
    dst->samples += src->samples;
    dst->lost += src->lost;
    dst->interrupts += src->interrupts;
    dst->host_cycles += src->host_cycles;
    return hwp__fail(&dst->head, HWP_OK, "");
}

/* Expected modelled overhead of the buffered sampler on `loads` loads at
 * `period`: samples = loads / period, each read out, plus one interrupt
 * per full buffer and one for the final partial buffer. */
HWP_API uint64_t hwp_cp_simple_overhead(uint64_t loads, uint32_t period,
                                        const hwp_cp_simple_desc *dp,
                                        const hwp_cost *cost) {
    hwp_cp_simple_desc d;
    uint64_t samples, irqs;
    double gap;
    if (dp) d = *dp;
    else hwp__zero(&d, sizeof d);
    (void)hwp__cp_simple_fill(&d); /* the defaults; a bad desc is not refused here */
    if (period < 2) period = 2;
    /* the countdown's mean: period/2 (rounded down) + (period - 1)/2 */
    gap = (double)(period / 2u) + ((double)period - 1.0) / 2.0;
    samples = (uint64_t)((double)loads / gap);
    irqs = (samples + d.buffer - 1u) / d.buffer;
    return irqs * hwp_cost_cycles(cost, HWP_COST_COPROC_INTERRUPT) +
           samples * (hwp_cost_cycles(cost, HWP_COST_COPROC_SAMPLE) +
                      2u * (uint64_t)hwp_cost_cycles(cost, HWP_COST_COPROC_WORD));
}

/* The period whose modelled overhead on `loads` loads is closest to
 * `overhead` (equal overhead for the comparison of sec. 5): a binary
 * search over the period, since the overhead falls as the period grows.
 * With many samples the result is within 2% of the target (tests check
 * it against a run); 0xFFFFFFFF when even one sample costs too much. */
HWP_API uint32_t hwp_cp_simple_period_for(uint64_t loads, uint64_t overhead,
                                          const hwp_cp_simple_desc *d,
                                          const hwp_cost *cost) {
    uint64_t lo = 2, hi = 0xFFFFFFFFull, best;
    if (hwp_cp_simple_overhead(loads, 0xFFFFFFFFu, d, cost) > overhead &&
        loads < 0xFFFFFFFFull)
        return 0xFFFFFFFFu;
    while (lo < hi) { /* the smallest period whose overhead <= target */
        uint64_t mid = lo + (hi - lo) / 2u;
        if (hwp_cp_simple_overhead(loads, (uint32_t)mid, d, cost) <= overhead) hi = mid;
        else lo = mid + 1u;
    }
    best = lo;
    /* the neighbour just above the target may be closer */
    if (best > 2) {
        uint64_t a = hwp_cp_simple_overhead(loads, (uint32_t)best, d, cost);
        uint64_t b = hwp_cp_simple_overhead(loads, (uint32_t)(best - 1u), d, cost);
        if (b - overhead < overhead - a) best--;
    }
    return (uint32_t)best;
}

/* ---- the metric (sec. 5.2) ---------------------------------------------- */

/* Heapsort by (pc, value), the first two fields of both record types. */
static bool hwp__cp_less(const unsigned char *a, const unsigned char *b) {
    const uint64_t *p = (const uint64_t *)(const void *)a;
    const uint64_t *q = (const uint64_t *)(const void *)b;
    return p[0] != q[0] ? p[0] < q[0] : p[1] < q[1];
}

static void hwp__cp_swap(unsigned char *a, unsigned char *b, size_t size) {
    while (size--) {
        unsigned char t = *a;
        *a++ = *b;
        *b++ = t;
    }
}

static void hwp__cp_sift(unsigned char *v, size_t i, size_t n, size_t size) {
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && hwp__cp_less(v + c * size, v + (c + 1) * size)) c++;
        if (!hwp__cp_less(v + i * size, v + c * size)) return;
        hwp__cp_swap(v + i * size, v + c * size, size);
        i = c;
    }
}

/* Callers often pass the same truth again (one exact profile scored
 * against several estimates), and hwp_cp_wrms sorted it in place the
 * first time: a linear check makes every later call O(n). */
static void hwp__cp_sort(void *base, size_t n, size_t size) {
    unsigned char *v = (unsigned char *)base;
    size_t i;
    for (i = 1; i < n && !hwp__cp_less(v + i * size, v + (i - 1) * size); i++) {}
    if (i >= n) return;
    for (i = n / 2; i-- > 0;) hwp__cp_sift(v, i, n, size);
    for (i = n - 1; i > 0; i--) {
        hwp__cp_swap(v, v + i * size, size);
        hwp__cp_sift(v, 0, i, size);
    }
}

/* Root mean square of (estimated - true invariance) over the (load,
 * value) pairs whose true invariance is at least min_inv (0 means the
 * documented default HWP_CP_MIN_INV, 0.1: the paper's sec. 5.2 scores
 * the values worth specialising on), each weighted by the pair's dynamic
 * count. A pair without an estimate counts as 0.
 * Sorts both arrays in place; truth must not repeat a pair. Returns a
 * fraction (0.05 = 5 points of invariance), or -1 if nothing qualifies. */
HWP_API double hwp_cp_wrms(hwp_cp_truth *truth, size_t n, hwp_cp_est *est,
                           size_t m, double min_inv) {
    double num = 0, den = 0;
    size_t i = 0, j = 0, g;
    if (!truth || (m && !est)) return -1.0;
    if (min_inv <= 0.0) min_inv = HWP_CP_MIN_INV;
    hwp__cp_sort(truth, n, sizeof *truth);
    hwp__cp_sort(est, m, sizeof *est);
    while (i < n) {
        uint64_t total = 0;
        for (g = i; g < n && truth[g].pc == truth[i].pc; g++) total += truth[g].count;
        for (; i < g; i++) {
            double tinv = total ? (double)truth[i].count / (double)total : 0, e = 0;
            while (j < m && hwp__cp_less((const unsigned char *)&est[j],
                                         (const unsigned char *)&truth[i]))
                j++;
            if (j < m && est[j].pc == truth[i].pc && est[j].value == truth[i].value)
                e = est[j].inv;
            if (tinv < min_inv) continue;
            num += (double)truth[i].count * (e - tinv) * (e - tinv);
            den += (double)truth[i].count;
        }
    }
    return den > 0 ? hwp_sqrt(num / den) : -1.0;
}

/* ---- reports ------------------------------------------------------------
 * Both report kinds are driven by the same field tables, so the JSON
 * reader restores exactly what the writer wrote. */

/* Raw counters after the four contract fields (which are derived). */
static const hwp_field hwp__cp_stat_f[] = {
    HWP__FS(hwp_cp, class_passed), HWP__FS(hwp_cp, region_rejected),
    HWP__FS(hwp_cp, masked_rejected), HWP__FS(hwp_cp, tagged),
    HWP__FSN(hwp_cp, "buffer_dropped", dropped), HWP__FS(hwp_cp, processed),
    HWP__FS(hwp_cp, cp_cycles), HWP__FS(hwp_cp, interrupts),
    HWP__FS(hwp_cp, idle_events), HWP__FS(hwp_cp, irq_samples),
    HWP__FS(hwp_cp, words), HWP__FSN(hwp_cp, "table_lost", tab_lost)};

static const hwp_field hwp__cp_lvps_f[] = {
    HWP__FS(hwp__cp_lvp, replacements), HWP__FS(hwp__cp_lvp, ignored),
    HWP__FS(hwp__cp_lvp, thrash), HWP__FS(hwp__cp_lvp, masked),
    HWP__FS(hwp__cp_lvp, reselect), HWP__FS(hwp__cp_lvp, turned_off),
    HWP__FS(hwp__cp_lvp, loads_lost), HWP__FS(hwp__cp_lvp, values_lost),
    HWP__FS(hwp__cp_lvp, visit), HWP__FS(hwp__cp_lvp, lowinfo_slots),
    HWP__FS(hwp__cp_lvp, lowinfo_samples), HWP__FS(hwp__cp_lvp, invalidated),
    HWP__FS(hwp__cp_lvp, samples_lost), HWP__FS(hwp__cp_lvp, resampled)};

/* The rest of the lvp object in the JSON report (not the text's). */
static const hwp_field hwp__cp_lvpx_f[] = {
    HWP__FS(hwp__cp_lvp, part_bits), HWP__FS(hwp__cp_lvp, complete),
    HWP__FSN(hwp__cp_lvp, "irq_failed", by_cause[0]),
    HWP__FSN(hwp__cp_lvp, "irq_done", by_cause[1]),
    HWP__FSN(hwp__cp_lvp, "irq_thrash", by_cause[2]),
    HWP__FSN(hwp__cp_lvp, "idle", by_cause[3]),
    HWP__FSN(hwp__cp_lvp, "irq_final", by_cause[4]),
    HWP__FSN(hwp__cp_lvp, "irq_visit", by_cause[5])};

static const char *const hwp__cp_app_names[7] = {
    "none", "custom", "lvp", "edge", "callstack", "memdep", "conflict"};

static const char *const hwp__cp_kind_names[8] = {
    "?", "edge", "target", "context", "dependence", "set", "block", "conflict_pc"};

/* A result table record; "?" (kind 0) is what no record holds. */
static const hwp_field hwp__cp_ent_f[] = {
    HWP__FE(hwp__cp_ent, "coproc", kind, hwp__cp_kind_names, "coproc: unknown table kind"),
    HWP__FN(hwp__cp_ent, "coproc", k1, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
    HWP__FN(hwp__cp_ent, "coproc", k2, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
    HWP__FS(hwp__cp_ent, a), HWP__FS(hwp__cp_ent, b)};

static void hwp__cp_put_vals(const hwp_cp *x, const hwp__cp_load *l,
                             const hwp_writer *w, bool json) {
    const hwp__cp_val *v = hwp__cp_vals(x, l);
    double inv[64], sh[64], lo, hi;
    uint32_t k;
    hwp__cp_estimate(x, l, inv);
    hwp__cp_shares(x, l, sh);
    for (k = 0; k < l->nvals; k++) {
        hwp__cp_wilson(inv[k], hwp__cp_measured(&v[k]), &lo, &hi);
        if (json) {
            hwp_put_str(w, k ? ",{\"value\":\"" : "{\"value\":\"");
            hwp_put_hex(w, v[k].value);
            hwp_put_str(w, "\"");
            hwp_put_json_u64(w, "hits", v[k].hits);
            hwp_put_json_u64(w, "misses", v[k].misses);
            hwp_put_json_f64(w, "share", sh[k], 6);
            hwp_put_json_f64(w, "invariance", inv[k], 4);
            hwp_put_json_f64(w, "lo", lo, 4);
            hwp_put_json_f64(w, "hi", hi, 4);
            hwp_put_str(w, "}");
        } else {
            hwp__put_str_hex(w, "    value ", v[k].value);
            hwp_put_str_u64(w, " hits ", v[k].hits);
            hwp_put_str_u64(w, " misses ", v[k].misses);
            hwp__put_str_f64(w, " invariance ", inv[k], 4);
            hwp__put_str_f64(w, " [", lo, 3);
            hwp__put_str_f64(w, ", ", hi, 3);
            hwp_put_str(w, "]\n");
        }
    }
}

/* The slot to list the load table from so that a reader inserting the
 * records in that order puts each in the slot it has here (so a report
 * reads back and writes out the same). Loads are never removed, so each
 * load's probe path runs from its home slot to its slot over used slots;
 * a listing must not start inside any such path. Walking the table twice
 * backwards, lo is the lowest slot after the home of a path ending at or
 * after u; u is a safe start when no path enters it from the slot
 * before. One exists: no path enters the slot after the last load
 * inserted, which was empty until then. */
static uint32_t hwp__cp_loads_start(const hwp_cp *x) {
    uint32_t n = x->loads_mask + 1, u = 2 * n, lo = 2 * n;
    while (u-- > 0) {
        const hwp__cp_load *l = &x->loads[u & x->loads_mask];
        if (l->used) {
            uint32_t d = ((uint32_t)u - (uint32_t)hwp_mix64(l->pc)) & x->loads_mask;
            uint32_t from = u + 1 > d ? u + 1 - d : 0;
            if (from < lo) lo = from;
        }
        if (u < n && lo > u) return u;
    }
    return 0; /* an empty table */
}

static void hwp__cp_write_loads(const hwp_cp *x, const hwp_writer *w,
                                bool json) {
    uint32_t i, at = hwp__cp_loads_start(x);
    bool first = true;
    for (i = 0; i <= x->loads_mask; i++) {
        const hwp__cp_load *l = &x->loads[(at + i) & x->loads_mask];
        hwp_cp_vprof p;
        bool ch;
        if (!l->used) continue;
        hwp__cp_vprof(x, l, &p);
        ch = p.characterised != 0;
        if (json) {
            hwp_put_str(w, first ? "{\"pc\":\"" : ",{\"pc\":\"");
            hwp_put_hex(w, l->pc);
            hwp_put_str(w, "\"");
            hwp_put_json_u64(w, "samples", l->total);
            hwp_put_json_u64(w, "visits", l->visits);
            hwp_put_json_u64(w, "weight", l->vweight + hwp__cp_visit_weight(x, l));
            hwp_put_str(w, l->masked ? ",\"masked\":true" : ",\"masked\":false");
            hwp_put_str(w, l->told ? ",\"told\":true" : ",\"told\":false");
            hwp_put_str(w, ch ? ",\"characterised\":true,\"values\":["
                              : ",\"characterised\":false,\"values\":[");
            hwp__cp_put_vals(x, l, w, true);
            hwp_put_str(w, "]}");
        } else {
            hwp__put_str_hex(w, "  load ", l->pc);
            hwp_put_str_u64(w, " samples ", l->total);
            hwp_put_str_u64(w, " visits ", l->visits);
            hwp_put_str(w, l->masked ? " masked" : "");
            hwp_put_str(w, ch ? " characterised\n" : " (too few samples)\n");
            hwp__cp_put_vals(x, l, w, false);
        }
        first = false;
    }
}

static void hwp__cp_write_table(const hwp_cp *x, const hwp_writer *w,
                                bool json) {
    uint32_t i;
    bool first = true;
    for (i = 0; i <= x->tab_mask; i++) {
        const hwp__cp_ent *e = &x->tab[i];
        const char *kind = hwp__cp_kind_names[e->kind < 8 ? e->kind : 0];
        if (!e->used) continue;
        if (json) {
            hwp_put_str(w, first ? "" : ",");
            hwp__field_obj_put(w, e, hwp__cp_ent_f, HWP__N(hwp__cp_ent_f));
        } else {
            hwp_put_str(w, "  ");
            hwp_put_str(w, kind);
            hwp__put_str_hex(w, " ", e->k1);
            hwp__put_str_hex(w, " ", e->k2);
            hwp_put_str_u64(w, " a ", e->a);
            hwp_put_str_u64(w, " b ", e->b);
            hwp_put_str(w, "\n");
        }
        first = false;
    }
}

HWP_API void hwp_cp_write_text(const hwp_cp *x, const hwp_writer *w) {
    hwp_cp_stats st;
    if (!hwp__cp_ok(x)) return;
    hwp_cp_get_stats(x, &st);
    hwp_put_str(w, "coproc: program ");
    hwp_put_str(w, hwp__cp_app_names[x->app < 7 ? x->app : 0]);
    hwp_put_str_u64(w, "\n  events ", st.events);
    hwp_put_str_u64(w, "\n  dropped ", st.dropped);
    hwp_put_str_u64(w, "\n  evicted ", st.evicted);
    hwp_put_str_u64(w, "\n  cycles ", st.cycles);
    hwp_put_str(w, "\n");
    hwp__field_text(w, x, hwp__cp_stat_f, HWP__N(hwp__cp_stat_f), "  ", " ", "\n");
    if (x->app == HWP_CP_APP_LVP)
        hwp__field_text(w, &x->lvp, hwp__cp_lvps_f, HWP__N(hwp__cp_lvps_f), "  ", " ",
                        "\n");
    hwp__cp_write_loads(x, w, false);
    hwp__cp_write_table(x, w, false);
}

/* Schema (docs/coproc.md): the envelope, "desc", "stats", then
 * "app":NAME,"app_args":[a,b],"lvp":{desc and counters...},
 * "loads":[{"pc":"0x..","samples":N,"visits":N,"weight":N,"masked":B,
 *           "told":B,"characterised":B,"values":[{"value":"0x..",
 *           "hits":N,"misses":N,"share":F,"invariance":F,"lo":F,
 *           "hi":F}]}],
 * "table":[{"kind":K,"k1":"0x..","k2":"0x..","a":N,"b":N}] */
HWP_API void hwp_cp_write_json(const hwp_cp *x, const hwp_writer *w) {
    hwp_cp_stats st;
    if (!hwp__cp_ok(x)) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_cp_get_stats(x, &st);
    hwp_put_json_envelope(w, "coproc", 1);
    hwp__field_put(w, "desc", &x->d, hwp__cp_desc_f, HWP__N(hwp__cp_desc_f));
    hwp_put_str_u64(w, ",\"stats\":{\"events\":", st.events);
    hwp_put_json_u64(w, "dropped", st.dropped);
    hwp_put_json_u64(w, "evicted", st.evicted);
    hwp_put_json_u64(w, "cycles", st.cycles);
    hwp_put_str(w, ",");
    hwp__field_members(w, x, hwp__cp_stat_f, HWP__N(hwp__cp_stat_f));
    hwp_put_str(w, "},\"app\":");
    hwp_put_json_str(w, hwp__cp_app_names[x->app < 7 ? x->app : 0]);
    hwp_put_str_u64(w, ",\"app_args\":[", x->app_arg[0]);
    hwp_put_str_u64(w, ",", x->app_arg[1]);
    hwp_put_str(w, "]");
    if (x->app == HWP_CP_APP_LVP) {
        hwp_put_str(w, ",\"lvp\":{");
        hwp__field_members(w, &x->lvp.d, hwp__cp_lvpd_f, HWP__N(hwp__cp_lvpd_f));
        hwp_put_str(w, ",");
        hwp__field_members(w, &x->lvp, hwp__cp_lvps_f, HWP__N(hwp__cp_lvps_f));
        hwp_put_str(w, ",");
        hwp__field_members(w, &x->lvp, hwp__cp_lvpx_f, HWP__N(hwp__cp_lvpx_f));
        hwp_put_str(w, "}");
    }
    hwp_put_str(w, ",\"loads\":[");
    hwp__cp_write_loads(x, w, true);
    hwp_put_str(w, "],\"table\":[");
    hwp__cp_write_table(x, w, true);
    hwp_put_str(w, "]}");
}

/* ---- JSON readers -------------------------------------------------------- */

HWP__READ_DESC_FN(cp, "coproc", hwp__cp_desc_f, NULL)

static void hwp__cp_read_vals(hwp_json *j, hwp_cp *x, hwp__cp_load *l) {
    char key[32];
    if (!hwp_json_array(j)) return;
    while (hwp_json_next(j)) {
        uint64_t value = 0, hits = 0, misses = 0;
        double share = -1;
        hwp__cp_val *rec;
        if (!hwp_json_object(j)) return;
        while (hwp_json_member(j, key, sizeof key)) {
            if (hwp_json_key_is(key, "value")) hwp_json_u64(j, &value);
            else if (hwp_json_key_is(key, "hits")) hwp_json_u64(j, &hits);
            else if (hwp_json_key_is(key, "misses")) hwp_json_u64(j, &misses);
            else if (hwp_json_key_is(key, "share")) hwp_json_f64(j, &share);
            else hwp_json_skip(j);
        }
        if (j->why) return;
        if (share > (double)l->vweight * (1.0 + 1e-6)) {
            hwp_json_fail(j, "coproc: a value's share is more than its load's weight");
            return;
        }
        if (share < 0) /* a report without shares: as if every visit had
                        * seen the value's measured hit ratio */
            share = hits + misses ? (double)l->vweight * (double)hits /
                                        (double)(hits + misses) : 0.0;
        rec = hwp__cp_load_add(x, l, value, hits, misses);
        if (rec) rec->share += share;
    }
}

static void hwp__cp_read_loads(hwp_json *j, hwp_cp *x) {
    char key[32];
    if (!hwp_json_array(j)) return;
    while (hwp_json_next(j)) {
        hwp__cp_load *l = 0;
        uint64_t pc, v;
        bool found, b;
        if (!hwp_json_object(j)) return;
        while (hwp_json_member(j, key, sizeof key)) {
            if (!l) {
                /* a profile never holds more loads than its table, nor
                 * one load twice: such a report is not one x wrote */
                if (!hwp_json_key_is(key, "pc"))
                    hwp_json_fail(j, "coproc: a load record starts with its \"pc\"");
                else if (hwp_json_u64(j, &pc) && !(l = hwp__cp_load_find(x, pc, &found)))
                    hwp_json_fail(j, "coproc: more load records than the load table holds");
                else if (l && found)
                    hwp_json_fail(j, "coproc: two load records of one pc");
                if (j->why) return;
                l->used = 1;
                l->pc = pc;
            } else if (hwp_json_key_is(key, "samples")) {
                if (hwp_json_u64(j, &v)) l->total = v;
            } else if (hwp_json_key_is(key, "visits")) {
                if (hwp_json_u64(j, &v)) l->visits = (uint32_t)v;
            } else if (hwp_json_key_is(key, "weight")) {
                hwp_json_u64(j, &l->vweight);
            } else if (hwp_json_key_is(key, "masked")) {
                if (hwp_json_bool(j, &b)) l->masked = b;
            } else if (hwp_json_key_is(key, "told")) {
                if (hwp_json_bool(j, &b)) l->told = b;
            } else if (hwp_json_key_is(key, "values")) {
                hwp__cp_read_vals(j, x, l);
            } else {
                hwp_json_skip(j);
            }
        }
        if (!l && !j->why) /* {}: no pc at all */
            hwp_json_fail(j, "coproc: a load record starts with its \"pc\"");
        if (j->why) return;
    }
}

static void hwp__cp_read_table(hwp_json *j, hwp_cp *x) {
    hwp__cp_ent e;
    if (!hwp_json_array(j)) return;
    while (hwp_json_next(j)) {
        hwp__zero(&e, sizeof e);
        if (!hwp__field_read(j, &e, hwp__cp_ent_f, HWP__N(hwp__cp_ent_f), false)) return;
        if (!e.kind) {
            hwp_json_fail(j, hwp__cp_ent_f[0].bad);
            return;
        }
        hwp__cp_tab_add(x, e.kind, e.k1, e.k2, e.a, e.b);
    }
}

/* Restores the profile a report holds into x (reset first): counters,
 * the running program's parameters and counters, load records, result
 * table. A load-value report starts load-value profiling again with its
 * desc, so x can go on profiling; other programs' routines are not in a
 * report, so only their results come back. */
HWP_API hwp_status hwp_cp_read_json(hwp_cp *x, const char *json, size_t n,
                                    hwp_json_err *err) {
    hwp_json j;
    char key[32], name[16];
    hwp_cp_desc d;
    hwp__cp_lvp lv;
    uint32_t app = HWP_CP_APP_NONE, args[2] = {0, 0}, k;
    bool have_lvp = false, have_desc = false, have_app = false;
    const hwp_field *f;
    hwp_json_err e;
    hwp_status rc;
    if (!hwp__cp_ok(x)) return HWP_EINVAL;
    /* The desc first, before x changes: a report of another configuration
     * leaves x as it was. */
    if ((rc = hwp_cp_read_desc(&d, json, n, &e)) != HWP_OK) {
        if (err) *err = e;
        return hwp__fail(&x->head, rc, e.why);
    }
    (void)hwp__cp_fill(&d); /* a bad desc differs from x's anyway */
    if ((f = hwp__field_diff(&x->d, &d, hwp__cp_desc_f, HWP__N(hwp__cp_desc_f))) != NULL)
        return hwp__json_mismatch(&x->head, err, json, n, f->why);
    hwp_cp_reset(x);
    hwp__zero(&lv, sizeof lv);
    hwp_json_init(&j, json, n);
    if (!hwp_json_envelope(&j, "coproc", 1)) goto out;
    while (hwp_json_member(&j, key, sizeof key)) {
        if (hwp_json_key_is(key, "desc")) {
            /* checked above; read_desc takes the first of several */
            if (have_desc) hwp_json_fail(&j, "coproc: a report holds one desc");
            else hwp_json_skip(&j);
            have_desc = true;
        } else if (hwp_json_key_is(key, "stats")) {
            if (!hwp_json_object(&j)) goto out;
            while (hwp_json_member(&j, key, sizeof key)) {
                if (hwp_json_key_is(key, "events")) hwp_json_u64(&j, &x->events);
                else if (hwp_json_key_is(key, "cycles")) hwp_json_u64(&j, &x->host_cycles);
                else if ((f = hwp__field_find(hwp__cp_stat_f, HWP__N(hwp__cp_stat_f), key)))
                    hwp__field_value(&j, x, f);
                else
                    hwp_json_skip(&j);
            }
        } else if (hwp_json_key_is(key, "app")) {
            /* one app, before its lvp: x->lvp is what app = lvp started */
            if (have_app) hwp_json_fail(&j, "coproc: a report holds one app");
            have_app = true;
            if (!j.why && hwp_json_str(&j, name, sizeof name)) {
                for (k = 0; k < 7 && !hwp_json_key_is(name, hwp__cp_app_names[k]); k++)
                    ;
                if (k == 7) hwp_json_fail(&j, "coproc: unknown app");
                else app = k;
            }
        } else if (hwp_json_key_is(key, "app_args")) {
            uint64_t v;
            k = 0;
            if (!hwp_json_array(&j)) goto out;
            while (hwp_json_next(&j))
                if (hwp_json_u64(&j, &v) && k < 2) args[k++] = (uint32_t)v;
        } else if (hwp_json_key_is(key, "lvp")) {
            hwp_cost *c;
            uint64_t hc, words;
            if (app != HWP_CP_APP_LVP || have_lvp)
                hwp_json_fail(&j, "coproc: one \"lvp\", after \"app\":\"lvp\"");
            have_lvp = true;
            if (j.why || !hwp_json_object(&j)) goto out;
            while (hwp_json_member(&j, key, sizeof key)) {
                if ((f = hwp__field_find(hwp__cp_lvpd_f, HWP__N(hwp__cp_lvpd_f), key)))
                    hwp__field_value(&j, &lv.d, f);
                else if ((f = hwp__field_find(hwp__cp_lvps_f, HWP__N(hwp__cp_lvps_f), key)) ||
                         (f = hwp__field_find(hwp__cp_lvpx_f, HWP__N(hwp__cp_lvpx_f), key)))
                    hwp__field_value(&j, &lv, f);
                else
                    hwp_json_skip(&j);
            }
            if (j.why) goto out;
            /* the load records come after: start the program first,
             * charging nothing */
            c = x->cost;
            hc = x->host_cycles;
            words = x->words;
            x->cost = NULL;
            if (hwp_cp_lvp_start(x, &lv.d) != HWP_OK) {
                x->cost = c;
                hwp_json_fail(&j, x->head.why);
                goto out;
            }
            x->cost = c;
            x->host_cycles = hc;
            x->words = words;
            lv.d = x->lvp.d;
            lv.cmax = x->lvp.cmax;
            lv.part = 0;
            x->lvp = lv;
        } else if (hwp_json_key_is(key, "loads")) {
            hwp__cp_read_loads(&j, x);
        } else if (hwp_json_key_is(key, "table")) {
            hwp__cp_read_table(&j, x);
        } else {
            hwp_json_skip(&j);
        }
        if (j.why) goto out;
    }
    hwp_json_end(&j);
    if (!j.why && app == HWP_CP_APP_LVP && !have_lvp)
        hwp_json_fail(&j, "coproc: a load-value report needs \"lvp\"");
    if (!j.why) {
        x->app = app;
        x->app_arg[0] = args[0];
        x->app_arg[1] = args[1];
        x->flushed = 1;
    }
out:
    if (j.why) {
        hwp_cp_reset(x);
        hwp_json_status(&j, err);
        return hwp__fail(&x->head, HWP_EFORMAT, j.why);
    }
    hwp_json_status(&j, err);
    return hwp__fail(&x->head, HWP_OK, "");
}

/* ---- the buffered sampler's report -------------------------------------- */

HWP_API void hwp_cp_simple_write_json(const hwp_cp_simple *s,
                                      const hwp_writer *w) {
    uint32_t i, k, start;
    bool first = true;
    if (!hwp__cp_simple_ok(s)) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_json_envelope(w, "coproc_simple", 1);
    hwp__field_put(w, "desc", &s->d, hwp__cp_simple_desc_f,
                   HWP__N(hwp__cp_simple_desc_f));
    hwp_put_str_u64(w, ",\"stats\":{\"events\":", s->loads);
    hwp_put_json_u64(w, "dropped", s->lost);
    hwp_put_json_u64(w, "evicted", 0);
    hwp_put_json_u64(w, "cycles", s->host_cycles);
    hwp_put_json_u64(w, "samples", s->samples);
    hwp_put_json_u64(w, "interrupts", s->interrupts);
    hwp_put_json_u64(w, "pending", s->pending);
    hwp_put_str(w, "},\"buffer\":[");
    for (i = 0; i < s->pending; i++) {
        hwp_put_str(w, i ? ",{\"pc\":\"" : "{\"pc\":\"");
        hwp_put_hex(w, s->buf[2u * i]);
        hwp_put_str(w, "\"");
        hwp_put_json_hex(w, "value", s->buf[2u * i + 1u]);
        hwp_put_str(w, "}");
    }
    hwp_put_str(w, "],\"pairs\":[");
    /* From the slot after a free one: the reader re-inserts in this order,
     * and a probe run that wraps past the table's end is then whole when
     * its entries come, so the table (and this report) comes back the
     * same (from slot 0, a wrapped run's tail would come first and take
     * its home slot). A full table has no free slot and starts at 0. */
    for (start = 0; start <= s->mask && s->tab[start].used; start++) {}
    start = start <= s->mask ? start + 1u : 0u;
    for (k = 0; k <= s->mask; k++) {
        const hwp__cp_pair *p = &s->tab[(start + k) & s->mask];
        if (!p->used) continue;
        hwp_put_str(w, first ? "{\"pc\":\"" : ",{\"pc\":\"");
        first = false;
        hwp_put_hex(w, p->pc);
        hwp_put_str(w, "\"");
        if (p->kind == 1) hwp_put_json_hex(w, "value", p->value);
        hwp_put_json_u64(w, "count", p->count);
        hwp_put_str(w, "}");
    }
    hwp_put_str(w, "]}");
}

/* One line: the sampler's counters, then the (pc, value) pairs counted and
 * how many of them have min_samples behind their pc. */
HWP_API void hwp_cp_simple_write_text(const hwp_cp_simple *s,
                                      const hwp_writer *w) {
    uint64_t pairs = 0, known = 0;
    uint32_t i;
    if (!hwp__cp_simple_ok(s)) {
        hwp_put_str(w, "coproc_simple: not initialised\n");
        return;
    }
    for (i = 0; i <= s->mask; i++) {
        const hwp__cp_pair *p = &s->tab[i], *t;
        if (!p->used || p->kind != 1) continue;
        pairs++;
        t = hwp__cp_pair_slot(s, 2, p->pc, 0);
        known += t && t->used && t->count >= s->d.min_samples;
    }
    hwp_put_str_u64(w, "coproc_simple: loads ", s->loads);
    hwp_put_str_u64(w, ", period ", s->d.period);
    hwp_put_str_u64(w, ", samples ", s->samples);
    hwp_put_str_u64(w, ", interrupts ", s->interrupts);
    hwp_put_str_u64(w, ", dropped ", s->lost);
    hwp_put_str_u64(w, ", cycles ", s->host_cycles);
    hwp_put_str_u64(w, "; pairs ", pairs);
    hwp_put_str_u64(w, ", characterised ", known);
    hwp_put_str(w, "\n");
}

HWP__READ_DESC_FN(cp_simple, "coproc_simple", hwp__cp_simple_desc_f, NULL)

static void hwp__cp_simple_read_pairs(hwp_json *j, hwp_cp_simple *s, bool buffer) {
    char key[32];
    if (!hwp_json_array(j)) return;
    while (hwp_json_next(j)) {
        uint64_t pc = 0, value = 0, count = 0;
        bool pair = false, have_pc = false;
        size_t at = j->pos;
        if (!hwp_json_object(j)) return;
        while (hwp_json_member(j, key, sizeof key)) {
            if (hwp_json_key_is(key, "pc")) have_pc = hwp_json_u64(j, &pc);
            else if (hwp_json_key_is(key, "value")) pair = hwp_json_u64(j, &value);
            else if (hwp_json_key_is(key, "count")) hwp_json_u64(j, &count);
            else if (!hwp_json_fail(j, "json: unknown field")) return;
        }
        if (j->why) return;
        /* what the writer writes: a pc always, a table entry's count of at
         * least one (a zero count would be a free slot, which the table
         * keeps out of its probe runs) */
        if (!have_pc || (!buffer && !count)) {
            j->pos = at;
            hwp_json_fail(j, !have_pc ? "coproc simple: a record without its pc"
                                      : "coproc simple: a pair's count must be at least 1");
            return;
        }
        if (buffer) {
            /* a full buffer interrupts, so at rest it holds buffer - 1 */
            if (s->pending + 1u >= s->d.buffer) {
                hwp_json_fail(j, "coproc simple: more buffered samples than the buffer holds");
                return;
            }
            s->buf[2u * s->pending] = pc;
            s->buf[2u * s->pending + 1u] = value;
            s->pending++;
        } else if (!hwp__cp_pair_bump(s, pair ? 1u : 2u, pc, pair ? value : 0, count)) {
            hwp_json_fail(j, "coproc simple: more pairs than the table holds");
            return;
        }
    }
}

HWP_API hwp_status hwp_cp_simple_read_json(hwp_cp_simple *s, const char *json,
                                           size_t n, hwp_json_err *err) {
    hwp_json j;
    hwp_json_err e;
    char key[32];
    hwp_cp_simple_desc d;
    const hwp_field *f;
    hwp_status rc;
    bool have_desc = false;
    if (!hwp__cp_simple_ok(s)) return HWP_EINVAL;
    /* The desc first, before s changes: a report of another configuration
     * leaves s as it was. */
    if ((rc = hwp_cp_simple_read_desc(&d, json, n, &e)) != HWP_OK) {
        if (err) *err = e;
        return hwp__fail(&s->head, rc, e.why);
    }
    (void)hwp__cp_simple_fill(&d); /* a bad desc differs from s's anyway */
    if ((f = hwp__field_diff(&s->d, &d, hwp__cp_simple_desc_f,
                             HWP__N(hwp__cp_simple_desc_f))) != NULL)
        return hwp__json_mismatch(&s->head, err, json, n, f->why);
    hwp_cp_simple_reset(s);
    hwp_json_init(&j, json, n);
    if (hwp_json_envelope(&j, "coproc_simple", 1)) {
        while (hwp_json_member(&j, key, sizeof key)) {
            if (hwp_json_key_is(key, "desc")) {
                /* checked above; read_desc takes the first of several */
                if (have_desc) hwp_json_fail(&j, "coproc simple: a report holds one desc");
                else hwp_json_skip(&j);
                have_desc = true;
            } else if (hwp_json_key_is(key, "stats")) {
                if (!hwp_json_object(&j)) break;
                while (hwp_json_member(&j, key, sizeof key)) {
                    if (hwp_json_key_is(key, "events")) hwp_json_u64(&j, &s->loads);
                    else if (hwp_json_key_is(key, "dropped")) hwp_json_u64(&j, &s->lost);
                    else if (hwp_json_key_is(key, "cycles")) hwp_json_u64(&j, &s->host_cycles);
                    else if (hwp_json_key_is(key, "samples")) hwp_json_u64(&j, &s->samples);
                    else if (hwp_json_key_is(key, "interrupts")) hwp_json_u64(&j, &s->interrupts);
                    else hwp_json_skip(&j);
                }
            } else if (hwp_json_key_is(key, "buffer")) {
                hwp__cp_simple_read_pairs(&j, s, true);
            } else if (hwp_json_key_is(key, "pairs")) {
                hwp__cp_simple_read_pairs(&j, s, false);
            } else {
                hwp_json_skip(&j);
            }
            if (j.why) break;
        }
        hwp_json_end(&j);
    }
    if (j.why) {
        hwp_cp_simple_reset(s);
        hwp_json_status(&j, err);
        return hwp__fail(&s->head, HWP_EFORMAT, j.why);
    }
    hwp_json_status(&j, err);
    return hwp__fail(&s->head, HWP_OK, "");
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_IMPL */
