/* SPDX-License-Identifier: MIT */
/* hwprof/profileme.h: ProfileMe instruction sampling and paired sampling.
 *
 * A software model of Dean, Hicks, Waldspurger, Weihl & Chrysos,
 * "ProfileMe: Hardware Support for Instruction-Level Profiling on
 * Out-of-Order Processors", MICRO-30, 1997. Instead of counting
 * events, ProfileMe samples instructions: a countdown picks one fetched
 * instruction at random, the pipeline records everything that happens to
 * it, and software estimates per-instruction event frequencies and, with
 * paired sampling, useful concurrency.
 *
 * PAPER SECTIONS MODELLED
 *   4.1.1  Fetched Instruction Counter: decremented once per fetched
 *          instruction (or per fetch opportunity, desc.unit), reloaded at
 *          each selection with a pseudo-random interval (desc.dist, mean
 *          desc.interval = S) from the seeded PRNG.
 *   4.1.2  ProfileMe tag: hwp_pm_tag() returns a small tag 1..ways that
 *          the host carries with the in-flight instruction.
 *   4.1.3  Profile registers (hwp_pm_record): context, PC, effective
 *          address / target, event bits, path register (global history of
 *          the last h conditional-branch directions, kept by the model from
 *          hwp_pm_branch), latency registers of Table 1 computed from the
 *          stage timestamps the host reports with hwp_pm_stage().
 *   4.1.4  Completion at retire or abort; 4.3 records buffered K at a time;
 *          one modelled interrupt per delivery (HWP_COST_PM_INTERRUPT) plus
 *          a handler cost per record (HWP_COST_PM_SAMPLE).
 *   4.2, 5.2.1  Paired sampling: the major interval picks the first
 *          instruction, a minor interval uniform on 1..W picks the second;
 *          both records carry the intra-pair fetch latency in cycles and
 *          are delivered together, never apart.
 *   5      Software side: hwp_pm_table, a DCPI-style per-PC table in caller
 *          memory; 5.1 the estimator kS, its coefficient of variation
 *          sqrt(1/k) and a confidence interval; 5.2.3 wasted issue slots
 *          (L_I C S / 2) - (U_I W S); 5.2.4 IPC near I; 5.3 path
 *          reconstruction from history bits on a host CFG.
 *
 * INTERPRETATIONS (see docs/profileme.md for the reasoning)
 *   - Intervals are measured from one selection (the first of a pair) to
 *     the next, so one sample (pair) is taken every S fetched instructions
 *     on average. A paired sampler therefore takes two samples per S
 *     fetches: every per-sample estimate (kS of 5.1, the total latency)
 *     uses S / 2 when the table's desc says paired, so that single and
 *     paired sampling of one stream estimate the same totals. Wasted issue
 *     slots (5.2.3) keep the paper's own formula, whose /2 is that factor.
 *   - Total latency per PC comes from every sample (single or paired): the
 *     sum of the sampled fetch -> retire-ready latencies times the
 *     per-sample interval, with the compound-Poisson envelope
 *     sqrt(sum of squared latencies) / sum, which is the paper's
 *     1/sqrt(k) when every latency is equal. Pairs are needed only for the
 *     concurrency measures (wasted issue slots, IPC near I).
 *   - A tag carries the record's generation: a report (stage, note, retire,
 *     abort) for a record already completed or replaced fails the tag
 *     check, is dropped and counted (stats.late), as the hardware ignores a
 *     stale ProfileMe tag.
 *   - A latency register whose start stage the host never reported is
 *     measured from the latest earlier stage it did report: the cycles are
 *     charged to the next reported stage and the registers still sum to
 *     fetch -> retire. A host with no pipeline reports no stages and gets
 *     all-zero latencies (and so no concurrency information).
 *   - A selection that finds no free profile registers (every tag still in
 *     flight) is dropped and counted, as the hardware would lose it.
 *   - Estimates from fewer than the table's min_samples samples (default
 *     HWP_PM_MIN_SAMPLES = 10, our choice: a coefficient of variation of
 *     1/sqrt(10), about 0.32, by 5.1) are flagged (est.enough = false) and
 *     the reports print them as "-".
 *
 * HOST PROTOCOL
 *   per fetched instruction (or opportunity):
 *       if (hwp_pm_fetch(p)) tag = hwp_pm_tag(p, pc, fetch_cycle);
 *   a tag != 0 travels with the instruction; then, as they happen:
 *       hwp_pm_stage(p, tag, HWP_PM_ST_ISSUE, cycle) ...
 *       hwp_pm_note(p, tag, cls, addr, HWP_EV_* bits)
 *       hwp_pm_retire(p, tag, cycle)  or  hwp_pm_abort(p, tag, reason)
 *   per conditional branch (predicted direction, in fetch order):
 *       hwp_pm_branch(p, taken)
 *   A host without a pipeline (interpreter, QEMU) calls hwp_pm_insn() once
 *   per executed instruction with the shared hwp_insn record instead.
 *   When hwp_pm_fetch() returns true the host must call hwp_pm_tag() (or
 *   hwp_pm_tag_empty() for an empty fetch opportunity) before fetching on.
 *
 * API: sampler `pm` (one per vCPU / thread); every member of hwp_pm is
 * private, read it through these functions
 *   hwp_pm_bytes(d), HWP_PM_BYTES(ways, buffer)   storage, any alignment
 *   hwp_pm_init(p, storage, bytes, d, cost)        d may be NULL
 *   hwp_pm_reset(p), hwp_pm_flush(p), hwp_pm_merge(dst, src)
 *   hwp_pm_get_stats(p, &stats), hwp_pm_get_desc(p, &desc)
 *   hwp_pm_set_deliver(p, fn, user)   where records go from now on
 *   hwp_pm_fetch(p)               inline: decrement, true when selected
 *   hwp_pm_fetch_block(p, n)      inline: n fetches at once, 0 or 1..n
 *   hwp_pm_branch(p, taken)       inline: shift the global history
 *   hwp_pm_set_context(p, ctx)    inline: the Profiled Context Register
 *   hwp_pm_countdown(p), hwp_pm_history(p), hwp_pm_set_history(p, h)
 *                                 inline: for hosts that count themselves
 *   hwp_pm_insn(p, insn, cycle)   inline: the whole protocol for hwp_insn
 *   hwp_pm_sample_insn(p, insn, cycle)   its cold half
 *   hwp_pm_tag(p, pc, cycle), hwp_pm_tag_empty(p, cycle)
 *   hwp_pm_stage(p, tag, stage, cycle)
 *   hwp_pm_note(p, tag, cls, addr, events)
 *   hwp_pm_retire(p, tag, cycle), hwp_pm_abort(p, tag, reason)
 *   hwp_pm_fetched(p), hwp_pm_interval(p), hwp_pm_window(p),
 *   hwp_pm_paired(p)
 *   hwp_pm_write_text(p, w), hwp_pm_write_json(p, w)
 *   hwp_pm_read_desc(d, json, n, err), hwp_pm_read_json(p, json, n, err)
 *   hwp_pm_desc_fields(&n)   the desc's fields (base.h's hwp_field)
 *   hwp_pm_rec_offset(r, stage), hwp_pm_rec_in_progress(r)   inline
 *
 * API: per-PC table `pm_table` (the profiling software of section 5; a
 * host-side profile, so its init takes no hwp_cost and stats.cycles is 0)
 *   hwp_pm_table_bytes(d), HWP_PM_TABLE_BYTES(capacity)
 *   hwp_pm_table_init(t, storage, bytes, d, NULL)
 *   hwp_pm_table_desc_for(p, &td)     a table desc matching a sampler
 *   hwp_pm_table_reset(t), hwp_pm_table_flush(t), hwp_pm_table_merge(dst, src)
 *   hwp_pm_table_get_stats(t, &stats)
 *   hwp_pm_table_add(t, recs, n)      aggregate delivered records
 *   hwp_pm_table_deliver              a hwp_pm_deliver_fn (user = table)
 *   hwp_pm_table_find(t, pc), hwp_pm_table_at(t, i)
 *   hwp_pm_table_rank(t, by, z, out, cap)   entries ranked by total cost
 *   hwp_pm_table_min_samples(t)       the advised minimum k (10)
 *   hwp_pm_table_interval(t)          S per sample (S / 2 when paired)
 *   hwp_pm_count(e, prop)             samples with a property
 *   hwp_pm_estimate(k, S, z)          kS, cv, confidence interval (5.1)
 *   hwp_pm_table_estimate(t, e, prop, z)
 *   hwp_pm_latency_total(t, e, z)     total in-progress cycles of a PC
 *   hwp_pm_wasted_slots(t, e)         (L_I C S / 2) - (U_I W S)  (5.2.3)
 *   hwp_pm_ipc_near(t, e)             IPC near I (5.2.4)
 *   hwp_pm_accuracy(t, prop, truth, ctx, min_ek, out)  Fig. 3 metrics
 *   hwp_pm_table_write_text(t, w), hwp_pm_table_write_top(t, w, top),
 *   hwp_pm_table_write_json(t, w)
 *   hwp_pm_table_read_desc(d, json, n, err), hwp_pm_table_read_json(t, ...)
 *   hwp_pm_table_desc_fields(&n)
 *
 * API: path reconstruction (5.3)
 *   hwp_pm_paths(cfg, n_blocks, query, out, out_cap, &n_paths, &n_words)
 */
#ifndef HWPROF_PROFILEME_H
#define HWPROF_PROFILEME_H

#include "base.h"
#include "cost.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- configuration ----------------------------------------------------- */

/* Interval distributions for the Fetched Instruction Counter (4.1.1). All
 * have mean S = desc.interval and never go below lo = 1 (+ W when paired,
 * so a pair's second selection always fits before the next first). */
enum {
    HWP_PM_DIST_UNIFORM = 0,   /* default: lo + uniform{0 .. 2(S - lo)}   */
    HWP_PM_DIST_GEOMETRIC = 1, /* lo + geometric with mean S - lo          */
    HWP_PM_DIST_FIXED = 2      /* always S: not random, aliases; for tests */
};

/* What the counter counts (4.1.1). */
enum {
    HWP_PM_UNIT_INSN = 0, /* default: fetched instructions on the predicted path */
    HWP_PM_UNIT_SLOT = 1  /* fetch opportunities; a selected opportunity may be
                             empty (hwp_pm_tag_empty) */
};

/* Paper defaults, chosen from the text:
 *   interval 10000: the middle (log scale) of the 10^3..10^5 of 5.1;
 *   window 80: the Alpha 21264 holds up to 80 instructions in flight and
 *     5.2.1 asks W to cover every pair that can be in flight together;
 *   history 12: "current processors ... between 8 to 12" (5.3);
 *   issue width 4: the 21264's sustainable issue slots per cycle (5.2.3). */
#define HWP_PM_DEFAULT_INTERVAL 10000u
#define HWP_PM_DEFAULT_WINDOW 80u
#define HWP_PM_DEFAULT_HISTORY 12u
#define HWP_PM_DEFAULT_ISSUE_WIDTH 4u
#define HWP_PM_DEFAULT_NEAR_CYCLES 15u
#define HWP_PM_DEFAULT_CAPACITY 4096u
#define HWP_PM_MAX_WAYS 16u
#define HWP_PM_MAX_WINDOW 65536u
#define HWP_PM_MAX_INTERVAL 0x7FFFFFFFu
/* The advised minimum number of samples behind an estimate (see the top
 * comment): reports show an estimate only with at least this many. */
#define HWP_PM_MIN_SAMPLES 10u

/* Pipeline stages the host can report (Figure 1 / Table 1). */
typedef enum hwp_pm_stage_id {
    HWP_PM_ST_FETCH = 0,
    HWP_PM_ST_MAP,
    HWP_PM_ST_DATA_READY,
    HWP_PM_ST_ISSUE,
    HWP_PM_ST_RETIRE_READY,
    HWP_PM_ST_RETIRE,
    HWP_PM_ST_LOAD_ISSUE,
    HWP_PM_ST_LOAD_DONE,
    HWP_PM_ST_COUNT
} hwp_pm_stage_id;

/* Latency registers of Table 1. The first five chain fetch -> retire. */
enum {
    HWP_PM_LAT_FETCH_MAP = 0, /* lack of physical registers / queue slots */
    HWP_PM_LAT_MAP_READY,     /* data dependences                       */
    HWP_PM_LAT_READY_ISSUE,   /* execution resource contention          */
    HWP_PM_LAT_ISSUE_RR,      /* execution latency                      */
    HWP_PM_LAT_RR_RETIRE,     /* waiting on prior unretired instructions */
    HWP_PM_LAT_LOAD,          /* load issue -> completion (memory)      */
    HWP_PM_LAT_COUNT
};

/* hwp_pm_record.flags */
enum {
    HWP_PM_F_RETIRED = 1u << 0, /* retired (else aborted: HWP_EV_ABORTED) */
    HWP_PM_F_EMPTY = 1u << 1,   /* an empty fetch opportunity (UNIT_SLOT)  */
    HWP_PM_F_FIRST = 1u << 2,   /* first of a pair; its second follows it */
    HWP_PM_F_SECOND = 1u << 3   /* second of a pair; its first precedes it */
};

/* The profile registers of one sampled instruction (4.1.3), as delivered.
 * Fixed-width fields: hosts may store or ship these as they are. */
typedef struct hwp_pm_record {
    uint64_t context; /* Profiled Context Register                       */
    uint64_t pc;      /* Profiled PC Register                            */
    uint64_t addr;    /* Profiled Address Register: EA or branch target  */
    uint64_t history; /* Profiled Path Register: bit 0 = newest branch,
                         1 = taken; h bits, the rest 0                    */
    uint32_t lat[HWP_PM_LAT_COUNT]; /* Latency Registers, cycles          */
    uint32_t pair_latency;  /* cycles from the first's fetch to the
                               second's (same value on both records)     */
    uint32_t pair_distance; /* minor interval: fetches from first to
                               second (same value on both records)       */
    uint32_t events;        /* Profiled Event Register: HWP_EV_* bits    */
    uint32_t cls;           /* hwp_cls the host noted, else OTHER        */
    uint32_t trap;          /* abort / trap reason code from the host    */
    uint32_t flags;         /* HWP_PM_F_*                                */
    /* The settings of the sampler that took the record, so that a table
     * set up for other ones refuses it instead of scaling it by the wrong
     * S (hwp_pm_table_add). 0: not from a sampler (a host's own record),
     * which a table takes as it is. */
    uint32_t interval;      /* the sampler's S                           */
    uint32_t window;        /* its W when it pairs, else 0               */
} hwp_pm_record;

HWP_STATIC_ASSERT(pm_record_is_88_bytes, sizeof(hwp_pm_record) == 88);

/* Called with K buffered records (pairs adjacent, first then second) when
 * the buffer fills or at hwp_pm_flush: the performance interrupt. */
typedef void (*hwp_pm_deliver_fn)(void *user, const hwp_pm_record *recs,
                                  uint32_t n);

typedef struct hwp_pm_desc {
    uint64_t seed;      /* PRNG seed: same seed, same samples              */
    uint32_t interval;  /* S, mean fetches between selections (10000)     */
    uint32_t dist;      /* HWP_PM_DIST_* (uniform)                          */
    uint32_t unit;      /* HWP_PM_UNIT_* (instructions)                     */
    uint32_t paired;    /* 1: paired sampling (4.2)                         */
    uint32_t window;    /* W for paired sampling (80)                       */
    uint32_t ways;      /* profile register sets: 1, or 2 when paired      */
    uint32_t buffer;    /* K records per interrupt (ways: one per sample or
                           pair, the base design; larger amortises, 4.3)    */
    uint32_t history;   /* h, branch history bits kept, 1..64 (12)          */
    hwp_pm_deliver_fn deliver; /* NULL: records are counted and discarded */
    void *user;                /* passed to deliver                        */
} hwp_pm_desc;

/* One set of profile registers plus the tag's bookkeeping. */
typedef struct hwp_pm_slot {
    hwp_pm_record rec;
    uint64_t stage[HWP_PM_ST_COUNT]; /* timestamps reported by the host */
    uint32_t known;                  /* bit per stage reported          */
    uint32_t state;                  /* hwp__pm_slot_state              */
    uint32_t partner;                /* slot index + 1 of the pair mate  */
    uint32_t gen;                    /* generation: bumped per record    */
} hwp_pm_slot;

HWP_STATIC_ASSERT(pm_slot_is_168_bytes, sizeof(hwp_pm_slot) == 168);

/* The sampler's public counters (hwp_pm_get_stats). */
typedef struct hwp_pm_stats {
    uint64_t events;     /* fetches (or opportunities) counted: fetched    */
    uint64_t dropped;    /* selections lost: no free profile registers   */
    uint64_t evicted;    /* always 0: an in-flight record is never replaced */
    uint64_t cycles;     /* modelled cycles charged: interrupts + handler */
    uint64_t selected;   /* counter reached zero                         */
    uint64_t tagged;     /* records started                              */
    uint64_t empty;      /* selected opportunities with no instruction   */
    uint64_t pairs;      /* pairs started                                */
    uint64_t retired, aborted;
    uint64_t delivered;  /* records handed to the deliver callback       */
    uint64_t discarded;  /* records delivered with no callback set       */
    uint64_t interrupts; /* deliveries                                   */
    uint64_t late;       /* reports for a completed or replaced record,
                            dropped by the tag check                     */
} hwp_pm_stats;

typedef struct hwp_pm {
    hwp_head head;
    uint64_t countdown; /* the Fetched Instruction Counter (hot)          */
    uint64_t history;   /* global branch history, newest in bit 0 (hot)   */
    uint64_t context;   /* current context, copied into each record       */
    uint64_t loaded;    /* sum of all values loaded into the counter      */
    uint64_t rest;      /* paired: interval left after the minor one      */
    uint64_t fetched0;  /* fetches merged or restored from elsewhere     */
    hwp_pm_desc d;      /* the desc with defaults filled                  */
    hwp_rng rng;
    hwp_cost *cost;
    hwp_pm_slot *slots;
    hwp_pm_record *buf;
    uint32_t buf_len;
    uint32_t open_pair;  /* paired: slot index + 1 reserved for a second */
    uint32_t minor;      /* the minor interval in force                 */
    uint32_t pad;
    hwp_pm_stats st;    /* events is derived (hwp_pm_fetched)           */
} hwp_pm;

#define HWP__PM_MAGIC HWP__MAGIC('p', 'm', 'e', ' ')

/* Storage for `ways` profile register sets and a `buffer` of records,
 * plus the padding that lets hwp_pm_init align storage of any alignment
 * (equal to hwp_pm_bytes of a desc with those ways and buffer). */
#define HWP__PM_NEED(ways, buffer)                                   \
    (((((size_t)(ways) * sizeof(hwp_pm_slot)) + 15u) / 16u * 16u) +  \
     ((((size_t)(buffer) * sizeof(hwp_pm_record)) + 15u) / 16u * 16u))
#define HWP_PM_BYTES(ways, buffer)                                   \
    (HWP__PM_NEED((ways), (buffer)) + (HWP__ALIGN - 1u))

/* The contract's calls (cost.h, HWP__CONTRACT); what hwp_pm's do:
 *   reset: back to the state right after init: same desc, storage, seed, cost.
 *   merge: fold src's counters into dst (per-vCPU samplers into one report).
 *     The descs must agree in every field but seed, deliver and user: the
 *     first that differs is named with HWP_EMISMATCH. Charges no modelled
 *     cycles.
 *   get_desc: the desc in force, defaults filled.
 *   write_json:
 *     {"model":"profileme","version":1,"desc":{"seed":"0x..","interval",
 *     "dist","unit","paired","window","ways","buffer","history"},
 *     "stats":{every hwp_pm_stats field in order}}
 *   read_desc: the desc of a sampler report (deliver and user are left NULL).
 *   read_json: restore a report's counters into p, whose desc must match the
 *     report's (HWP_EMISMATCH naming the first field that differs). */
HWP__CONTRACT(pm);
/* Deliver records to fn(user, ...) from now on (records already buffered
 * go with the next delivery); fn NULL counts and discards them. */
HWP_API hwp_status hwp_pm_set_deliver(hwp_pm *p, hwp_pm_deliver_fn fn,
                                      void *user);

/* ---- hot paths --------------------------------------------------------- */

/* One fetched instruction (or opportunity): true when it is selected, and
 * then the host must call hwp_pm_tag() (or hwp_pm_tag_empty()) for it. */
HWP_INLINE bool hwp_pm_fetch(hwp_pm *p) {
    return HWP_UNLIKELY(--p->countdown == 0);
}

/* n fetches at once (a translation block): 0 when none of them is
 * selected, else the 1-based position of the selected one. After tagging
 * it, call again with the n - position fetches that follow it. */
HWP_INLINE uint32_t hwp_pm_fetch_block(hwp_pm *p, uint32_t n) {
    uint32_t k;
    if (HWP_LIKELY(p->countdown > n)) {
        p->countdown -= n;
        return 0;
    }
    k = (uint32_t)p->countdown;
    p->countdown = 0;
    return k;
}

/* A conditional branch's (predicted) direction, in fetch order: the global
 * history register the Profiled Path Register copies (4.1.3, 5.3). */
HWP_INLINE void hwp_pm_branch(hwp_pm *p, bool taken) {
    p->history = (p->history << 1) | (uint64_t)taken;
}

HWP_INLINE void hwp_pm_set_context(hwp_pm *p, uint64_t context) {
    p->context = context;
}

/* Fetches left before the next selection (the Fetched Instruction
 * Counter). A host that counts down itself (an interpreter that looks at
 * the counter only at branches) starts from this and hands the fetches
 * back with hwp_pm_fetch_block. */
HWP_INLINE uint64_t hwp_pm_countdown(const hwp_pm *p) { return p->countdown; }

/* The global branch history register (newest direction in bit 0), for a
 * host that keeps it in its own register between selections and writes
 * it back with hwp_pm_set_history before one. */
HWP_INLINE uint64_t hwp_pm_history(const hwp_pm *p) { return p->history; }
HWP_INLINE void hwp_pm_set_history(hwp_pm *p, uint64_t history) {
    p->history = history;
}

/* The cold half of hwp_pm_insn: tag, note and complete one instruction. */
HWP_API void hwp_pm_sample_insn(hwp_pm *p, const hwp_insn *in, uint64_t cycle);

/* A host without a pipeline model: one call per executed instruction, in
 * program order. The record completes at once (retired, or aborted when
 * in->events has HWP_EV_ABORTED); every latency is zero. */
HWP_INLINE void hwp_pm_insn(hwp_pm *p, const hwp_insn *in, uint64_t cycle) {
    /* The history update stays a branch: a branch-free shift by 0 or 1
     * would load and store p->history on every instruction, a dependency
     * through memory that measured twice as slow (bench_profileme). */
    if (hwp_pm_fetch(p)) hwp_pm_sample_insn(p, in, cycle);
    if (in->cls == HWP_CLS_BR_COND)
        hwp_pm_branch(p, (in->events & HWP_EV_TAKEN) != 0);
}

/* ---- the sampled path (cold) ------------------------------------------- */

/* Tag the selected instruction: returns its tag (nonzero: the profile
 * register set and the record's generation), or 0 when no selection was
 * pending (HWP_ESTATE) or no profile registers were free (counted in
 * stats.dropped). `fetch_cycle` is the host's clock. A report with a tag
 * whose record has completed or been replaced since returns HWP_ESTATE
 * and is counted in stats.late (the hardware's tag check). */
HWP_API uint32_t hwp_pm_tag(hwp_pm *p, uint64_t pc, uint64_t fetch_cycle);
/* The selected fetch opportunity held no instruction (UNIT_SLOT only): an
 * EMPTY record completes at once. */
HWP_API hwp_status hwp_pm_tag_empty(hwp_pm *p, uint64_t fetch_cycle);
HWP_API hwp_status hwp_pm_stage(hwp_pm *p, uint32_t tag, hwp_pm_stage_id st,
                                uint64_t cycle);
/* OR in HWP_EV_* bits; cls and addr replace the record's when nonzero. */
HWP_API hwp_status hwp_pm_note(hwp_pm *p, uint32_t tag, uint32_t cls,
                               uint64_t addr, uint32_t events);
HWP_API hwp_status hwp_pm_retire(hwp_pm *p, uint32_t tag, uint64_t cycle);
HWP_API hwp_status hwp_pm_abort(hwp_pm *p, uint32_t tag, uint32_t reason);
/* End of stream: deliver what is buffered (records still in flight stay
 * in flight: the host has not completed them). Idempotent. */
HWP_API hwp_status hwp_pm_flush(hwp_pm *p);
HWP_API uint64_t hwp_pm_fetched(const hwp_pm *p);
HWP_API uint32_t hwp_pm_interval(const hwp_pm *p);
HWP_API uint32_t hwp_pm_window(const hwp_pm *p);
HWP_API bool hwp_pm_paired(const hwp_pm *p);

/* Cycles from the record's fetch to `st` (stages chain fetch -> retire). */
HWP_INLINE uint64_t hwp_pm_rec_offset(const hwp_pm_record *r,
                                      hwp_pm_stage_id st) {
    uint64_t t = 0;
    unsigned i;
    for (i = 0; i < (unsigned)st && i <= HWP_PM_LAT_RR_RETIRE; i++)
        t += r->lat[i];
    return t;
}

/* Fetch -> retire-ready: the "in progress" time of 5.2.3 and Fig. 7. */
HWP_INLINE uint64_t hwp_pm_rec_in_progress(const hwp_pm_record *r) {
    return hwp_pm_rec_offset(r, HWP_PM_ST_RETIRE_READY);
}

/* ---- the software side: per-PC table (section 5) ----------------------- */

/* Properties an entry counts: all samples, retired ones, or one per
 * HWP_EV_* bit: HWP_PM_PROP_EVENT(HWP_EV_DCMISS). */
#define HWP_PM_NEVENTS 9u
enum { HWP_PM_PROP_SAMPLES = 0, HWP_PM_PROP_RETIRED = 1 };
#define HWP_PM_PROP_EVENT(bit) (2u + hwp_log2(bit))
#define HWP_PM_PROP_COUNT (2u + HWP_PM_NEVENTS)

typedef struct hwp_pm_entry {
    uint64_t pc;                       /* 0 = unused slot (see table)   */
    uint64_t samples;                  /* k: samples of this PC         */
    uint64_t retired;
    uint64_t events[HWP_PM_NEVENTS];   /* samples per HWP_EV_* bit      */
    uint64_t lat_sum[HWP_PM_LAT_COUNT];
    uint64_t lat_sq;                   /* sum of squared fetch ->
                                          retire-ready latencies (each
                                          clamped to 2^31, saturating)  */
    uint64_t pair_samples;             /* samples of I inside pairs     */
    uint64_t in_progress;              /* L_I: sum of fetch->retire-ready
                                          over the pair samples          */
    uint64_t useful_fwd;               /* U_I^F                          */
    uint64_t useful_bwd;               /* U_I^B                          */
    uint64_t near;                     /* pairs retiring within X cycles */
} hwp_pm_entry;

HWP_STATIC_ASSERT(pm_entry_is_192_bytes, sizeof(hwp_pm_entry) == 192);
HWP_STATIC_ASSERT(pm_six_latency_registers, HWP_PM_LAT_COUNT == 6);

typedef struct hwp_pm_table_desc {
    uint32_t capacity;    /* entries, a power of two (4096)               */
    uint32_t interval;    /* S of the sampler feeding it (10000)          */
    uint32_t window;      /* W of the sampler feeding it (80)             */
    uint32_t issue_width; /* C, issue slots per cycle (4)                 */
    uint32_t near_cycles; /* X of the IPC-near metric (15: a 30-cycle
                             window as in section 6)                      */
    uint32_t paired;      /* 1: the sampler pairs (two samples per S);
                             a sampler's records of the other kind are
                             refused, a host's own dropped (0)            */
    uint32_t min_samples; /* advised minimum k behind an estimate (10)    */
} hwp_pm_table_desc;

/* The table's public counters (hwp_pm_table_get_stats). */
typedef struct hwp_pm_table_stats {
    uint64_t events;     /* records offered to the table                  */
    uint64_t dropped;    /* records not aggregated: full + zero_pc +
                            mismatched                                    */
    uint64_t evicted;    /* always 0: entries are never replaced          */
    uint64_t cycles;     /* always 0: host-side software, no hwp_cost     */
    uint64_t used;       /* PCs in the table                              */
    uint64_t samples;    /* records aggregated (non-empty)                */
    uint64_t empty;      /* EMPTY records seen (counted, not aggregated)  */
    uint64_t full;       /* records for PCs the table could not hold      */
    uint64_t zero_pc;    /* records with pc 0 (the free-slot mark)        */
    uint64_t mismatched; /* single records in a paired table or pair
                            records in a single one                       */
} hwp_pm_table_stats;

typedef struct hwp_pm_table {
    hwp_head head;
    hwp_pm_table_desc d;
    hwp_pm_entry *e;
    uint32_t used, limit;  /* entries in use; at most 7/8 of capacity   */
    uint64_t samples;      /* records aggregated (non-empty)           */
    uint64_t empty;        /* EMPTY records seen                       */
    uint64_t dropped;      /* records for PCs the table could not hold */
    uint64_t zero_pc;      /* records with pc 0 (the free-slot mark)   */
    uint64_t mismatched;   /* records whose pairing is not the desc's  */
    uint64_t refused;      /* records refused for their sampler's settings */
    char why[128];         /* the reason, with those settings and the
                              table's: flush and the text report repeat it */
} hwp_pm_table;

#define HWP__PM_TABLE_MAGIC HWP__MAGIC('p', 'm', 't', 'b')
/* Storage for `capacity` entries plus the alignment padding (equal to
 * hwp_pm_table_bytes of a desc with that capacity). */
#define HWP_PM_TABLE_BYTES(capacity) \
    (((size_t)(capacity) * sizeof(hwp_pm_entry)) + (HWP__ALIGN - 1u))

/* An estimate with what it rests on: `samples` samples, each standing for
 * `interval` fetches (S, or S / 2 when paired). */
typedef struct hwp_pm_est {
    double value;     /* kS, or S x the sum of sampled values        */
    double cv;        /* coefficient of variation; 0 when k = 0      */
    double lo, hi;    /* confidence interval on value                */
    uint64_t samples; /* k                                           */
    double interval;  /* fetches per sample                          */
    bool enough;      /* k >= the table's min_samples                */
} hwp_pm_est;

/* Fig. 3 style accuracy against exact counts: truth(ctx, pc) is the real
 * number of fetched instructions at pc with the property. Only PCs in the
 * table whose truth is at least min_ek * S (E[k] >= min_ek) are scored;
 * filtering on E[k] rather than on the observed k keeps the mean ratio
 * unbiased (choose min_ek large enough, e.g. 10, that a PC with that many
 * expected samples is essentially never missing from the table). Here S
 * is the per-sample interval (hwp_pm_table_interval). */
typedef struct hwp_pm_acc {
    uint64_t pcs;         /* PCs scored                                   */
    double in_envelope;   /* fraction with |est/truth - 1| <= 1/sqrt(E[k]) */
    double mean_ratio;    /* mean of est / truth                          */
    double weighted_err;  /* sum |est - truth| / sum truth                */
} hwp_pm_acc;

typedef uint64_t (*hwp_pm_truth_fn)(void *ctx, uint64_t pc);

/* What hwp_pm_table_rank orders by: the estimated total cost of a PC. */
enum {
    HWP_PM_RANK_LATENCY = 0, /* total fetch -> retire-ready cycles        */
    HWP_PM_RANK_WASTED = 1,  /* wasted issue slots (paired tables)        */
    HWP_PM_RANK_SAMPLES = 2  /* samples (the estimated fetch count)       */
};

/* One ranked PC: every estimate with its sample count and interval. */
typedef struct hwp_pm_row {
    uint64_t pc;
    hwp_pm_est count;    /* fetches of pc (retired or not)               */
    hwp_pm_est latency;  /* total fetch -> retire-ready cycles           */
    hwp_pm_est dcmiss;   /* fetches of pc that missed the D-cache        */
    double wasted_slots; /* 5.2.3 (0 without pairs)                      */
    double ipc_near;     /* 5.2.4 (0 without pairs)                      */
    uint64_t pair_samples;
    double cost;         /* the ranking key                              */
} hwp_pm_row;

/* The contract's calls (cost.h, HWP__CONTRACT); what hwp_pm_table's do:
 *   init: cost: the contract's one init shape; the table is the software side
 *     and charges nothing itself (the handler's per-sample cost is
 *     HWP_COST_PM_SAMPLE, charged by the sampler that delivers).
 *   merge: fold src's entries into dst (equal descs, else HWP_EMISMATCH naming
 *     the first differing field). Every count adds, so merging the tables of
 *     two halves of a stream gives the whole stream's entries (slot order may
 *     differ) unless dst fills up, which is counted in stats.full.
 *   write_text: hwp_pm_table_write_top(t, w, 20).
 *   write_json: {"model":"pm_table","version":1,"desc":{...},"stats":{...},
 *     "pcs":[{"pc":"0x..","samples","retired","events":{"taken",...},
 *     "lat_sum":[6],"lat_sq","pair_samples","in_progress","useful_fwd",
 *     "useful_bwd","near", then derived: "est","cv","latency","wasted_slots",
 *     "ipc_near"}]}; "pcs" in an order the reader restores exactly.
 *   read_json: restore a saved table into t (its desc must match the
 *     report's); derived values in the report are recomputed, not read. */
HWP__CONTRACT(pm_table);
/* The `top` PCs by estimated total cost: wasted issue slots for a paired
 * table, else total latency, or estimated fetches when no sample carries a
 * latency (a host without stages); every estimate with its samples, "-"
 * below min_samples. */
HWP_API void hwp_pm_table_write_top(const hwp_pm_table *t, const hwp_writer *w,
                                    uint32_t top);
/* A table desc whose interval, window and paired match sampler p (the
 * other fields zero: defaults). */
HWP_API hwp_status hwp_pm_table_desc_for(const hwp_pm *p,
                                         hwp_pm_table_desc *out);
/* Nothing is buffered in the table: returns HWP_OK, or HWP_EINVAL when
 * it refused a sampler's records (hwp_pm_table_add). */
HWP_API hwp_status hwp_pm_table_flush(hwp_pm_table *t);
/* Aggregate n delivered records. A record carries its sampler's S, W
 * and pairing: one whose settings differ from the table's is refused
 * with HWP_EINVAL and a reason naming the field and both values, and
 * none of the n is taken. hwp_pm_table_deliver drops the status, so the
 * table counts what it refused, hwp_pm_table_flush returns the refusal
 * and the text report leads with it. */
HWP_API hwp_status hwp_pm_table_add(hwp_pm_table *t, const hwp_pm_record *r,
                                    uint32_t n);
HWP_API void hwp_pm_table_deliver(void *table, const hwp_pm_record *r,
                                  uint32_t n);
HWP_API const hwp_pm_entry *hwp_pm_table_find(const hwp_pm_table *t,
                                              uint64_t pc);
/* Entry slot i in 0..capacity-1, or NULL when that slot is unused. */
HWP_API const hwp_pm_entry *hwp_pm_table_at(const hwp_pm_table *t, uint32_t i);
/* The table's PCs ranked by estimated total cost (HWP_PM_RANK_*, highest
 * first, ties by PC; PCs with fewer than min_samples samples after the
 * others): returns how many PCs there are and writes the first
 * min(that, cap). z: normal quantile of the intervals (1.96 for 95%). */
HWP_API size_t hwp_pm_table_rank(const hwp_pm_table *t, unsigned by, double z,
                                 hwp_pm_row *out, size_t cap);
HWP_API uint32_t hwp_pm_table_min_samples(const hwp_pm_table *t);
/* Fetches each sample stands for: S, or S / 2 for a paired table. */
HWP_API double hwp_pm_table_interval(const hwp_pm_table *t);
HWP_API uint64_t hwp_pm_count(const hwp_pm_entry *e, unsigned prop);
/* kS from k samples of interval S; z: normal quantile of the interval
 * (1.96 for 95%). enough is k >= HWP_PM_MIN_SAMPLES. */
HWP_API hwp_pm_est hwp_pm_estimate(uint64_t k, double S, double z);
HWP_API hwp_pm_est hwp_pm_table_estimate(const hwp_pm_table *t,
                                         const hwp_pm_entry *e, unsigned prop,
                                         double z);
/* Total fetch -> retire-ready cycles of pc over the run, from every
 * sample: S x sum of sampled latencies, cv sqrt(sum l^2) / sum l. */
HWP_API hwp_pm_est hwp_pm_latency_total(const hwp_pm_table *t,
                                        const hwp_pm_entry *e, double z);
HWP_API double hwp_pm_wasted_slots(const hwp_pm_table *t,
                                   const hwp_pm_entry *e);
HWP_API double hwp_pm_ipc_near(const hwp_pm_table *t, const hwp_pm_entry *e);
HWP_API hwp_status hwp_pm_accuracy(const hwp_pm_table *t, unsigned prop,
                                   hwp_pm_truth_fn truth, void *ctx,
                                   double min_ek, hwp_pm_acc *out);

/* ---- path reconstruction (5.3) ------------------------------------------ */

#define HWP_PM_NONE 0xFFFFFFFFu
#define HWP_PM_MAX_PATH 256u

/* One basic block of the host's CFG: instructions [start, end), `insns`
 * of them. A block ending in a conditional branch (cond = 1) reaches
 * `taken` or `fall` and its direction is one history bit; otherwise it
 * reaches its one successor (`taken` or `fall`) without a bit.
 * HWP_PM_NONE: no edge. `insns` is only read by the paired-distance check
 * (0 makes that check more permissive, never wrong). */
typedef struct hwp_pm_block {
    uint64_t start, end;
    uint32_t taken, fall;
    uint32_t cond;
    uint32_t insns;
} hwp_pm_block;

typedef struct hwp_pm_path_query {
    uint64_t pc;         /* the sampled instruction                     */
    uint64_t history;    /* its Profiled Path Register                  */
    uint64_t other_pc;   /* paired: the earlier instruction of the pair */
    uint32_t bits;       /* history bits to match, 0..64                */
    uint32_t max_blocks; /* longest segment, 1..HWP_PM_MAX_PATH (64)    */
    uint32_t use_other;  /* 1: keep only paths that contain other_pc    */
    uint32_t other_distance; /* the pair's distance in instructions
                                (record.pair_distance), 0 = unknown     */
} hwp_pm_path_query;

/* Walk the CFG backwards from q->pc, keeping the paths whose conditional
 * branch directions match the history bits (bit 0 = the newest branch).
 * A path ends when it has used all q->bits bits, reaches a block with no
 * predecessor (the routine's entry) or grows to max_blocks. With use_other
 * (the third scheme of 5.3) a path must contain other_pc; when
 * other_distance is known, a path whose older blocks hold fewer than that
 * many instructions cannot have reached the other instruction yet and is
 * kept if some way into it (any directions) holds other_pc within the
 * remaining distance, so the narrowing never drops the true path when
 * fetch distance is program distance. Each path is
 * written to out as [length, oldest block, ..., the block holding pc];
 * *n_paths counts every consistent path (more than one = ambiguous), even
 * those that did not fit in out_cap words (*n_words says what was
 * written). */
HWP_API hwp_status hwp_pm_paths(const hwp_pm_block *cfg, uint32_t n_blocks,
                                const hwp_pm_path_query *q, uint32_t *out,
                                uint32_t out_cap, uint32_t *n_paths,
                                uint32_t *n_words);

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_PROFILEME_H */

/* ======================================================================= */
/* IMPLEMENTATION                                                          */
/* ======================================================================= */
#if defined(HWPROF_IMPL) && !defined(HWPROF_PROFILEME_IMPL)
#define HWPROF_PROFILEME_IMPL

#ifdef __cplusplus
extern "C" {
#endif

enum { HWP__PM_FREE = 0, HWP__PM_RESERVED, HWP__PM_LIVE, HWP__PM_DONE };

/* A tag is the profile register set (1..16, 5 bits) and the generation
 * of the record in it, so a report for a record that has since completed
 * or been replaced fails the check instead of landing in the new one. */
#define HWP__PM_TAG_BITS 5u
#define HWP__PM_GEN_MASK (0xFFFFFFFFu >> HWP__PM_TAG_BITS)
HWP_STATIC_ASSERT(pm_ways_fit_the_tag,
                  HWP_PM_MAX_WAYS < (1u << HWP__PM_TAG_BITS));

/* Defaults as hwp_pm_desc's comments attribute them (ways' and buffer's
 * depend on paired); seed first, as the reports write it, so a merge,
 * which takes another seed, compares the rows after it. */
static const char *const hwp__pm_dist_names[] = {"uniform", "geometric", "fixed"};
static const char *const hwp__pm_unit_names[] = {"insn", "slot"};
HWP_STATIC_ASSERT(pm_names_by_value,
                  HWP_PM_DIST_FIXED == 2 && HWP_PM_UNIT_SLOT == 1);
static const hwp_field hwp__pm_desc_f[] = {
    HWP__FN(hwp_pm_desc, "profileme", seed, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
    HWP__FN(hwp_pm_desc, "profileme", interval, UINT, HWP_PM_DEFAULT_INTERVAL, 1,
            HWP_PM_MAX_INTERVAL, 0, "profileme: interval must be in 1..2^31-1"),
    HWP__FNAMED(hwp_pm_desc, "profileme", dist, 0, hwp__pm_dist_names,
                "profileme: dist must be 0..2 (HWP_PM_DIST_*)"),
    HWP__FNAMED(hwp_pm_desc, "profileme", unit, 0, hwp__pm_unit_names,
                "profileme: unit must be 0 or 1 (HWP_PM_UNIT_*)"),
    HWP__FN(hwp_pm_desc, "profileme", paired, UINT, 0, 0, 1, 0,
            "profileme: paired must be 0 or 1"),
    HWP__FN(hwp_pm_desc, "profileme", window, UINT, HWP_PM_DEFAULT_WINDOW, 1,
            HWP_PM_MAX_WINDOW, 0, "profileme: window must be in 1..65536"),
    HWP__FN(hwp_pm_desc, "profileme", ways, UINT, 0, 1, HWP_PM_MAX_WAYS, 0,
            "profileme: ways must be in 1..16"),
    HWP__FN(hwp_pm_desc, "profileme", buffer, UINT, 0, 1, 0x10000000u, 0,
            "profileme: buffer must be in 1..2^28 records"),
    HWP__FN(hwp_pm_desc, "profileme", history, UINT, HWP_PM_DEFAULT_HISTORY, 1, 64, 0,
            "profileme: history must be in 1..64 bits")};

HWP__FIELDS_FN(hwp_pm_desc_fields, hwp__pm_desc_f)

/* Copy the desc and fill defaults; returns the reason it is invalid or
 * NULL. */
static const char *hwp__pm_fill(hwp_pm_desc *o, const hwp_pm_desc *d) {
    const char *why;
    if (d) hwp__copy(o, d, sizeof *o);
    else hwp__zero(o, sizeof *o);
    if (!o->ways) o->ways = o->paired ? 2u : 1u;
    if (!o->buffer) o->buffer = o->paired ? 2u : 1u;
    if ((why = hwp__field_fill(o, hwp__pm_desc_f, HWP__N(hwp__pm_desc_f))) != NULL)
        return why;
    if (o->paired && o->ways < 2)
        return "profileme: ways must be >= 2 when paired";
    if (o->paired && o->buffer < 2)
        return "profileme: buffer must be >= 2 records when paired";
    if (o->interval < 1u + (o->paired ? o->window : 0u))
        return "profileme: interval must be at least window + 1 when paired";
    return NULL;
}

HWP_API size_t hwp_pm_bytes(const hwp_pm_desc *d) {
    hwp_pm_desc o;
    if (hwp__pm_fill(&o, d)) return 0;
    return HWP_PM_BYTES(o.ways, o.buffer);
}

/* The next interval of the counter (4.1.1), mean S, at least lo. */
static uint64_t hwp__pm_draw(hwp_pm *p) {
    uint64_t lo = 1u + (p->d.paired ? p->d.window : 0u);
    uint64_t span = (uint64_t)p->d.interval - lo; /* the mean above lo */
    double q, x;
    switch (p->d.dist) {
    case HWP_PM_DIST_FIXED:
        return p->d.interval;
    case HWP_PM_DIST_GEOMETRIC:
        /* P(X = j) = (1 - q) q^j with q = span / (span + 1): mean span. */
        if (!span) return lo;
        q = (double)span / (double)(span + 1u);
        x = hwp_ln(1.0 - hwp_rng_unit(&p->rng)) / hwp_ln(q);
        return lo + (x < 4.0e9 ? (uint64_t)x : (uint64_t)4000000000u);
    default:
        return lo + hwp_rng_below(&p->rng, 2u * span + 1u);
    }
}

static void hwp__pm_load(hwp_pm *p, uint64_t v) {
    p->countdown = v;
    p->loaded += v;
}

HWP_API hwp_status hwp_pm_init(hwp_pm *p, void *storage, size_t bytes,
                               const hwp_pm_desc *d, hwp_cost *cost) {
    hwp_pm_desc o;
    hwp_status rc;
    const char *why;
    unsigned char *cur;
    if (!p) return HWP_EINVAL;
    hwp__zero(p, sizeof *p);
    p->head.magic = HWP__PM_MAGIC;
    why = hwp__pm_fill(&o, d); /* before o is read below */
    rc = hwp__admit(&p->head, why, &storage, &bytes,
                        HWP__PM_NEED(o.ways, o.buffer));
    if (rc != HWP_OK) return rc;
    cur = (unsigned char *)storage;
    p->d = o;
    p->cost = cost;
    hwp_rng_seed(&p->rng, o.seed ^ 0x70726f66696c656dull /* "profilem" */);
    p->slots = (hwp_pm_slot *)hwp__carve(&cur, o.ways * sizeof(hwp_pm_slot));
    p->buf = (hwp_pm_record *)hwp__carve(&cur, o.buffer * sizeof(hwp_pm_record));
    hwp__zero(p->slots, o.ways * sizeof(hwp_pm_slot));
    hwp__pm_load(p, hwp__pm_draw(p));
    return hwp__fail(&p->head, HWP_OK, "");
}

static bool hwp__pm_ok(const hwp_pm *p) {
    return p && p->head.magic == HWP__PM_MAGIC && p->slots;
}

/* Hand the buffer to the host: one performance interrupt (4.1.4, 4.3). */
static void hwp__pm_deliver(hwp_pm *p) {
    if (!p->buf_len) return;
    hwp_cost_charge(p->cost, HWP_COST_PM_INTERRUPT, 1);
    hwp_cost_charge(p->cost, HWP_COST_PM_SAMPLE, p->buf_len);
    if (p->cost) /* NULL pays nothing */
        p->st.cycles += hwp_cost_cycles(p->cost, HWP_COST_PM_INTERRUPT) +
                        (uint64_t)p->buf_len *
                            hwp_cost_cycles(p->cost, HWP_COST_PM_SAMPLE);
    p->st.interrupts++;
    if (p->d.deliver) {
        p->d.deliver(p->d.user, p->buf, p->buf_len);
        p->st.delivered += p->buf_len;
    } else {
        p->st.discarded += p->buf_len;
    }
    p->buf_len = 0;
}

/* The lowest set bit's index, x != 0 (one instruction with the builtin;
 * hwp_log2 would add a test for x == 0 that cannot happen here). */
HWP_INLINE unsigned hwp__pm_lowbit(uint32_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return (unsigned)__builtin_ctz(x);
#else
    return hwp_log2(x & (0u - x));
#endif
}

/* Stages MAP..RETIRE: the chain of the first five latency registers. */
#define HWP__PM_CHAIN \
    (((1u << (HWP_PM_ST_RETIRE + 1)) - 1u) & ~(1u << HWP_PM_ST_FETCH))

/* Latency registers from the reported stage timestamps (see the top
 * comment: a missing stage's cycles go to the next reported one). The
 * registers are zero from hwp__pm_start and a slot completes once, so
 * only the reported stages are visited (a host reports two to four). */
static void hwp__pm_latencies(hwp_pm_slot *s) {
    uint64_t prev = s->stage[HWP_PM_ST_FETCH], d;
    uint32_t k;
    for (k = s->known & HWP__PM_CHAIN; k; k &= k - 1u) {
        unsigned st = hwp__pm_lowbit(k);
        if (s->stage[st] <= prev) continue; /* no cycles: stays 0 */
        d = s->stage[st] - prev;
        s->rec.lat[st - 1] = d > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)d;
        prev = s->stage[st];
    }
    if ((s->known & (1u << HWP_PM_ST_LOAD_ISSUE)) &&
        (s->known & (1u << HWP_PM_ST_LOAD_DONE)) &&
        s->stage[HWP_PM_ST_LOAD_DONE] > s->stage[HWP_PM_ST_LOAD_ISSUE]) {
        d = s->stage[HWP_PM_ST_LOAD_DONE] - s->stage[HWP_PM_ST_LOAD_ISSUE];
        s->rec.lat[HWP_PM_LAT_LOAD] = d > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)d;
    }
}

/* Move a completed record (and its completed mate) into the buffer. */
static void hwp__pm_complete(hwp_pm *p, hwp_pm_slot *s) {
    hwp_pm_slot *first, *second;
    hwp__pm_latencies(s);
    s->state = HWP__PM_DONE;
    if (s->partner) {
        hwp_pm_slot *m = &p->slots[s->partner - 1];
        if (m->state != HWP__PM_DONE) return; /* wait for the mate (4.2) */
        first = (s->rec.flags & HWP_PM_F_FIRST) ? s : m;
        second = first == s ? m : s;
    } else {
        first = s;
        second = 0;
    }
    p->buf[p->buf_len++] = first->rec;
    first->state = HWP__PM_FREE;
    first->partner = 0;
    if (second) {
        p->buf[p->buf_len++] = second->rec;
        second->state = HWP__PM_FREE;
        second->partner = 0;
    }
    /* Full, or (paired) no room for the next pair: interrupt now. */
    if (p->buf_len + (p->d.paired ? 1u : 0u) >= p->d.buffer) hwp__pm_deliver(p);
}

static uint32_t hwp__pm_free_slot(const hwp_pm *p, uint32_t skip) {
    uint32_t i;
    for (i = 0; i < p->d.ways; i++)
        if (p->slots[i].state == HWP__PM_FREE && i + 1 != skip) return i + 1;
    return 0;
}

/* A fresh record in slot s. Only the record is cleared: a stage
 * timestamp is read only once its `known` bit is set. */
static void hwp__pm_start(hwp_pm *p, hwp_pm_slot *s, uint64_t pc,
                          uint64_t cycle) {
    hwp__zero(&s->rec, sizeof s->rec);
    s->partner = 0;
    s->rec.context = p->context;
    s->rec.pc = pc;
    s->rec.history = p->history & hwp_mask64(p->d.history);
    s->rec.interval = p->d.interval;
    s->rec.window = p->d.paired ? p->d.window : 0;
    s->stage[HWP_PM_ST_FETCH] = cycle;
    s->known = 1u << HWP_PM_ST_FETCH;
    s->state = HWP__PM_LIVE;
    s->gen = (s->gen + 1u) & HWP__PM_GEN_MASK;
    p->st.tagged++;
}

/* The tag of the record in slot index i: set index + 1 in the low bits,
 * the record's generation above them (never 0). */
static uint32_t hwp__pm_tag_of(const hwp_pm *p, uint32_t i) {
    return (i + 1u) | (p->slots[i].gen << HWP__PM_TAG_BITS);
}

HWP_API uint32_t hwp_pm_tag(hwp_pm *p, uint64_t pc, uint64_t fetch_cycle) {
    uint32_t a, b;
    uint64_t t;
    if (!hwp__pm_ok(p)) return 0;
    if (p->countdown != 0) {
        hwp__fail(&p->head, HWP_ESTATE, "profileme: no selection pending");
        return 0;
    }
    p->st.selected++;
    hwp__fail(&p->head, HWP_OK, "");
    if (p->open_pair) { /* the second of a pair (5.2.1) */
        hwp_pm_slot *s = &p->slots[p->open_pair - 1], *f;
        uint32_t mate = s->partner;
        uint64_t lat;
        a = p->open_pair;
        p->open_pair = 0;
        hwp__pm_load(p, p->rest);
        hwp__pm_start(p, s, pc, fetch_cycle);
        f = &p->slots[mate - 1]; /* live, or done and waiting for us */
        s->partner = mate;
        s->rec.flags = HWP_PM_F_SECOND;
        lat = fetch_cycle > f->stage[HWP_PM_ST_FETCH]
                  ? fetch_cycle - f->stage[HWP_PM_ST_FETCH] : 0;
        s->rec.pair_latency = f->rec.pair_latency =
            lat > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)lat;
        s->rec.pair_distance = f->rec.pair_distance = p->minor;
        return hwp__pm_tag_of(p, a - 1u);
    }
    t = hwp__pm_draw(p);
    a = hwp__pm_free_slot(p, 0);
    b = p->d.paired && a ? hwp__pm_free_slot(p, a) : 0;
    if (!a || (p->d.paired && !b)) { /* every profile register set busy */
        p->st.dropped++;
        hwp__pm_load(p, t);
        return 0;
    }
    hwp__pm_start(p, &p->slots[a - 1], pc, fetch_cycle);
    if (!p->d.paired) {
        hwp__pm_load(p, t);
        return hwp__pm_tag_of(p, a - 1u);
    }
    p->st.pairs++;
    p->minor = 1u + hwp_rng_below(&p->rng, p->d.window);
    p->rest = t - p->minor;
    p->slots[a - 1].partner = b;
    p->slots[a - 1].rec.flags = HWP_PM_F_FIRST;
    p->slots[b - 1].state = HWP__PM_RESERVED;
    p->slots[b - 1].partner = a;
    p->open_pair = b;
    hwp__pm_load(p, p->minor);
    return hwp__pm_tag_of(p, a - 1u);
}

HWP_API hwp_status hwp_pm_tag_empty(hwp_pm *p, uint64_t fetch_cycle) {
    uint32_t tag;
    hwp_pm_slot *s;
    if (!hwp__pm_ok(p)) return HWP_EINVAL;
    if (p->d.unit != HWP_PM_UNIT_SLOT)
        return hwp__fail(&p->head, HWP_ESTATE,
                         "profileme: empty selections need unit = SLOT");
    tag = hwp_pm_tag(p, 0, fetch_cycle);
    if (!tag) return (hwp_status)p->head.status;
    s = &p->slots[(tag & ((1u << HWP__PM_TAG_BITS) - 1u)) - 1u];
    s->rec.flags |= HWP_PM_F_EMPTY;
    s->rec.events |= HWP_EV_ABORTED;
    p->st.empty++;
    hwp__pm_complete(p, s);
    return HWP_OK;
}

/* Why a tag failed the check (cold: off the path of every report). */
static hwp_status hwp__pm_bad_tag(hwp_pm *p, uint32_t i) {
    if (i >= p->d.ways)
        return hwp__fail(&p->head, HWP_EINVAL,
                         "profileme: tag was not returned by hwp_pm_tag");
    p->st.late++; /* the tag check: the report is dropped */
    return hwp__fail(&p->head, HWP_ESTATE,
                     "profileme: tag's record has completed or been "
                     "replaced (late report dropped)");
}

/* The live slot behind a tag, or a status saying why there is none. */
HWP_INLINE hwp_status hwp__pm_slot(hwp_pm *p, uint32_t tag,
                                   hwp_pm_slot **out) {
    uint32_t i = (tag & ((1u << HWP__PM_TAG_BITS) - 1u)) - 1u; /* 0 wraps */
    *out = 0;
    if (!hwp__pm_ok(p)) return HWP_EINVAL;
    if (i < p->d.ways && p->slots[i].state == HWP__PM_LIVE &&
        p->slots[i].gen == tag >> HWP__PM_TAG_BITS) {
        *out = &p->slots[i];
        return hwp__fail(&p->head, HWP_OK, "");
    }
    return hwp__pm_bad_tag(p, i);
}

HWP_API hwp_status hwp_pm_stage(hwp_pm *p, uint32_t tag, hwp_pm_stage_id st,
                                uint64_t cycle) {
    hwp_pm_slot *s;
    hwp_status rc = hwp__pm_slot(p, tag, &s);
    if (rc != HWP_OK) return rc;
    if ((unsigned)st - 1u >= (unsigned)HWP_PM_ST_COUNT - 1u) /* MAP.. */
        return hwp__fail(&p->head, HWP_EINVAL,
                         "profileme: stage must be MAP..LOAD_DONE");
    s->stage[st] = cycle;
    s->known |= 1u << st;
    return HWP_OK;
}

HWP_API hwp_status hwp_pm_note(hwp_pm *p, uint32_t tag, uint32_t cls,
                               uint64_t addr, uint32_t events) {
    hwp_pm_slot *s;
    hwp_status rc = hwp__pm_slot(p, tag, &s);
    if (rc != HWP_OK) return rc;
    if (cls) s->rec.cls = cls;
    if (addr) s->rec.addr = addr;
    s->rec.events |= events & ~(uint32_t)HWP_EV_ABORTED;
    return HWP_OK;
}

HWP_API hwp_status hwp_pm_retire(hwp_pm *p, uint32_t tag, uint64_t cycle) {
    hwp_pm_slot *s;
    hwp_status rc = hwp__pm_slot(p, tag, &s);
    if (rc != HWP_OK) return rc;
    s->stage[HWP_PM_ST_RETIRE] = cycle;
    s->known |= 1u << HWP_PM_ST_RETIRE;
    s->rec.flags |= HWP_PM_F_RETIRED;
    p->st.retired++;
    hwp__pm_complete(p, s);
    return HWP_OK;
}

HWP_API hwp_status hwp_pm_abort(hwp_pm *p, uint32_t tag, uint32_t reason) {
    hwp_pm_slot *s;
    hwp_status rc = hwp__pm_slot(p, tag, &s);
    if (rc != HWP_OK) return rc;
    s->rec.events |= HWP_EV_ABORTED;
    s->rec.trap = reason;
    p->st.aborted++;
    hwp__pm_complete(p, s);
    return HWP_OK;
}

HWP_API void hwp_pm_sample_insn(hwp_pm *p, const hwp_insn *in, uint64_t cycle) {
    uint32_t tag = hwp_pm_tag(p, in->pc, cycle);
    if (!tag) return;
    hwp_pm_note(p, tag, in->cls, in->addr, in->events);
    if (in->events & HWP_EV_ABORTED)
        hwp_pm_abort(p, tag, (in->events & HWP_EV_TRAP) ? 1u : 0u);
    else
        hwp_pm_retire(p, tag, cycle);
}

HWP_API hwp_status hwp_pm_flush(hwp_pm *p) {
    if (!hwp__pm_ok(p)) return HWP_EINVAL;
    hwp__pm_deliver(p);
    return hwp__fail(&p->head, HWP_OK, "");
}

HWP_API hwp_status hwp_pm_reset(hwp_pm *p) {
    hwp_pm_desc d;
    if (!hwp__pm_ok(p)) return HWP_EINVAL;
    d = p->d; /* init zeroes p: keep what it needs */
    return hwp_pm_init(p, p->slots, HWP__PM_NEED(d.ways, d.buffer), &d,
                       p->cost);
}

HWP_API uint64_t hwp_pm_fetched(const hwp_pm *p) {
    return hwp__pm_ok(p) ? p->fetched0 + (p->loaded - p->countdown) : 0;
}

HWP_API uint32_t hwp_pm_interval(const hwp_pm *p) {
    return hwp__pm_ok(p) ? p->d.interval : 0;
}

HWP_API uint32_t hwp_pm_window(const hwp_pm *p) {
    return hwp__pm_ok(p) ? p->d.window : 0;
}

HWP_API bool hwp_pm_paired(const hwp_pm *p) {
    return hwp__pm_ok(p) && p->d.paired;
}

HWP_API hwp_status hwp_pm_get_stats(const hwp_pm *p, hwp_pm_stats *out) {
    if (!hwp__pm_ok(p) || !out) return HWP_EINVAL;
    *out = p->st;
    out->events = hwp_pm_fetched(p);
    return HWP_OK;
}

HWP__GET_DESC_FN(pm, d, hwp__pm_ok(x))

HWP_API hwp_status hwp_pm_set_deliver(hwp_pm *p, hwp_pm_deliver_fn fn,
                                      void *user) {
    if (!hwp__pm_ok(p)) return HWP_EINVAL;
    p->d.deliver = fn;
    p->d.user = user;
    return hwp__fail(&p->head, HWP_OK, "");
}

/* Counters, in hwp_pm_stats order (events first: derived, see get_stats). */
static const hwp_field hwp__pm_stats_f[] = {
    HWP__FS_HEAD(hwp_pm_stats),
    HWP__FS(hwp_pm_stats, selected), HWP__FS(hwp_pm_stats, tagged),
    HWP__FS(hwp_pm_stats, empty), HWP__FS(hwp_pm_stats, pairs),
    HWP__FS(hwp_pm_stats, retired), HWP__FS(hwp_pm_stats, aborted),
    HWP__FS(hwp_pm_stats, delivered), HWP__FS(hwp_pm_stats, discarded),
    HWP__FS(hwp_pm_stats, interrupts), HWP__FS(hwp_pm_stats, late)};

HWP_API hwp_status hwp_pm_merge(hwp_pm *dst, const hwp_pm *src) {
    hwp_pm_stats b;
    const hwp_field *f;
    size_t i;
    if (!hwp__pm_ok(dst) || !hwp__pm_ok(src)) return HWP_EINVAL;
    /* samplers of other seeds merge: the rows after seed */
    f = hwp__field_diff(&dst->d, &src->d, hwp__pm_desc_f + 1, HWP__N(hwp__pm_desc_f) - 1);
    if (f) return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    hwp_pm_get_stats(src, &b);
    /* events lives in fetched0; every other counter adds. */
    dst->fetched0 += b.events;
    for (i = 1; i < HWP__N(hwp__pm_stats_f); i++)
        hwp__field_set(&dst->st, &hwp__pm_stats_f[i],
                       hwp__field_get(&dst->st, &hwp__pm_stats_f[i]) +
                           hwp__field_get(&b, &hwp__pm_stats_f[i]));
    return hwp__fail(&dst->head, HWP_OK, "");
}

/* The sampler's report, as text or as JSON (see hwp_pm_write_json). */
static void hwp__pm_report(const hwp_pm *p, const hwp_writer *w, bool json) {
    hwp_pm_stats st;
    if (!hwp__pm_ok(p)) {
        hwp_put_str(w, json ? "null" : "profileme: not initialised\n");
        return;
    }
    hwp_pm_get_stats(p, &st);
    if (json) {
        hwp_put_json_envelope(w, "profileme", 1);
        hwp__field_put(w, "desc", &p->d, hwp__pm_desc_f, HWP__N(hwp__pm_desc_f));
        hwp__field_put(w, "stats", &st, hwp__pm_stats_f, HWP__N(hwp__pm_stats_f));
        hwp_put_str(w, "}");
        return;
    }
    hwp__put_str_hex(w, "profileme sampler:\n  seed=", p->d.seed);
    hwp__field_text(w, &p->d, hwp__pm_desc_f + 1, HWP__N(hwp__pm_desc_f) - 1, " ", "=",
                    "");
    hwp_put_str(w, "\n ");
    hwp__field_text(w, &st, hwp__pm_stats_f, 7, " ", "=", "");
    hwp_put_str(w, "\n ");
    hwp__field_text(w, &st, hwp__pm_stats_f + 7, HWP__N(hwp__pm_stats_f) - 7, " ", "=",
                    "");
    hwp_put_str(w, "\n");
}

HWP_API void hwp_pm_write_text(const hwp_pm *p, const hwp_writer *w) {
    hwp__pm_report(p, w, false);
}

HWP_API void hwp_pm_write_json(const hwp_pm *p, const hwp_writer *w) {
    hwp__pm_report(p, w, true);
}

/* hwp__pm_fill in place, as base.h's readers take it. */
static const char *hwp__pm_refill(void *d) {
    hwp_pm_desc c = *(hwp_pm_desc *)d;
    return hwp__pm_fill((hwp_pm_desc *)d, &c);
}

HWP__READ_DESC_FN(pm, "profileme", hwp__pm_desc_f, hwp__pm_refill)

HWP_API hwp_status hwp_pm_read_json(hwp_pm *p, const char *json, size_t n,
                                    hwp_json_err *err) {
    hwp_pm_desc d;
    hwp_pm_stats st;
    hwp_json j;
    char key[16];
    hwp_status rc;
    if (!hwp__pm_ok(p) || !json) return HWP_EINVAL;
    hwp__zero(&d, sizeof d);
    hwp__zero(&st, sizeof st);
    hwp_json_init(&j, json, n);
    rc = hwp__field_begin(&j, &p->head, "profileme", &d, &p->d, hwp__pm_desc_f,
                          HWP__N(hwp__pm_desc_f), hwp__pm_refill, err);
    if (rc != HWP_OK) return rc;
    while (hwp_json_member(&j, key, sizeof key))
        if (!hwp_json_key_is(key, "stats")) hwp_json_skip(&j);
        else if (!hwp__field_read(&j, &st, hwp__pm_stats_f, HWP__N(hwp__pm_stats_f), false))
            break;
    hwp_json_end(&j);
    rc = hwp_json_status(&j, err);
    if (rc != HWP_OK) return hwp__fail(&p->head, rc, "profileme: malformed report");
    /* The counters are the report's; the counter state (countdown, PRNG)
     * stays p's, so fetched continues from the report's events. */
    p->fetched0 = st.events - (p->loaded - p->countdown); /* modular */
    st.events = 0;
    p->st = st;
    return hwp__fail(&p->head, HWP_OK, "");
}

/* ---- per-PC table ------------------------------------------------------ */

/* Defaults as hwp_pm_table_desc's comments attribute them. */
static const hwp_field hwp__pmt_desc_f[] = {
    HWP__FN(hwp_pm_table_desc, "profileme table", capacity, UINT,
            HWP_PM_DEFAULT_CAPACITY, 8, 1u << 26, HWP_FIELD_POW2,
            "profileme table: capacity must be a power of two in 8..2^26"),
    HWP__FN(hwp_pm_table_desc, "profileme table", interval, UINT,
            HWP_PM_DEFAULT_INTERVAL, 1, HWP_PM_MAX_INTERVAL, 0,
            "profileme table: interval must be in 1..2^31-1"),
    HWP__FN(hwp_pm_table_desc, "profileme table", window, UINT, HWP_PM_DEFAULT_WINDOW,
            1, HWP_PM_MAX_WINDOW, 0, "profileme table: window must be in 1..65536"),
    HWP__FN(hwp_pm_table_desc, "profileme table", issue_width, UINT,
            HWP_PM_DEFAULT_ISSUE_WIDTH, 1, 64, 0,
            "profileme table: issue_width must be in 1..64"),
    HWP__FN(hwp_pm_table_desc, "profileme table", near_cycles, UINT,
            HWP_PM_DEFAULT_NEAR_CYCLES, 1, 0x10000u, 0,
            "profileme table: near_cycles must be in 1..65536"),
    HWP__FN(hwp_pm_table_desc, "profileme table", paired, UINT, 0, 0, 1, 0,
            "profileme table: paired must be 0 or 1"),
    HWP__FN(hwp_pm_table_desc, "profileme table", min_samples, UINT,
            HWP_PM_MIN_SAMPLES, 0, 0xFFFFFFFFu, 0, NULL)};

HWP__FIELDS_FN(hwp_pm_table_desc_fields, hwp__pmt_desc_f)

static const char *hwp__pm_table_fill(hwp_pm_table_desc *o,
                                      const hwp_pm_table_desc *d) {
    if (d) hwp__copy(o, d, sizeof *o);
    else hwp__zero(o, sizeof *o);
    return hwp__field_fill(o, hwp__pmt_desc_f, HWP__N(hwp__pmt_desc_f));
}

HWP_API size_t hwp_pm_table_bytes(const hwp_pm_table_desc *d) {
    hwp_pm_table_desc o;
    if (hwp__pm_table_fill(&o, d)) return 0;
    return HWP_PM_TABLE_BYTES(o.capacity);
}

HWP_API hwp_status hwp_pm_table_init(hwp_pm_table *t, void *storage,
                                     size_t bytes, const hwp_pm_table_desc *d,
                                     hwp_cost *cost) {
    hwp_pm_table_desc o;
    hwp_status rc;
    const char *why;
    (void)cost;
    if (!t) return HWP_EINVAL;
    hwp__zero(t, sizeof *t);
    t->head.magic = HWP__PM_TABLE_MAGIC;
    why = hwp__pm_table_fill(&o, d); /* before o is read below */
    rc = hwp__admit(&t->head, why, &storage, &bytes,
                        (size_t)o.capacity * sizeof(hwp_pm_entry));
    if (rc != HWP_OK) return rc;
    t->d = o;
    t->e = (hwp_pm_entry *)storage;
    t->limit = o.capacity - o.capacity / 8u;
    hwp__zero(t->e, (size_t)o.capacity * sizeof(hwp_pm_entry));
    return hwp__fail(&t->head, HWP_OK, "");
}

static bool hwp__pm_table_ok(const hwp_pm_table *t) {
    return t && t->head.magic == HWP__PM_TABLE_MAGIC && t->e;
}

HWP_API hwp_status hwp_pm_table_desc_for(const hwp_pm *p,
                                         hwp_pm_table_desc *out) {
    if (!hwp__pm_ok(p) || !out) return HWP_EINVAL;
    hwp__zero(out, sizeof *out);
    out->interval = p->d.interval;
    out->window = p->d.window;
    out->paired = p->d.paired;
    return HWP_OK;
}

HWP_API hwp_status hwp_pm_table_reset(hwp_pm_table *t) {
    hwp_pm_table_desc d;
    if (!hwp__pm_table_ok(t)) return HWP_EINVAL;
    d = t->d;
    return hwp_pm_table_init(t, t->e, (size_t)d.capacity * sizeof(hwp_pm_entry),
                             &d, NULL);
}

HWP_API hwp_status hwp_pm_table_flush(hwp_pm_table *t) {
    if (!hwp__pm_table_ok(t)) return HWP_EINVAL;
    /* A sampler that delivers through hwp_pm_table_deliver cannot see
     * the refusal: the end of the stream reports it again. */
    if (t->refused) return hwp__fail(&t->head, HWP_EINVAL, t->why);
    return hwp__fail(&t->head, HWP_OK, "");
}

HWP_API hwp_status hwp_pm_table_get_stats(const hwp_pm_table *t,
                                          hwp_pm_table_stats *out) {
    if (!hwp__pm_table_ok(t) || !out) return HWP_EINVAL;
    hwp__zero(out, sizeof *out);
    out->used = t->used;
    out->samples = t->samples;
    out->empty = t->empty;
    out->full = t->dropped;
    out->zero_pc = t->zero_pc;
    out->mismatched = t->mismatched;
    out->dropped = t->dropped + t->zero_pc + t->mismatched;
    out->events = t->samples + t->empty + out->dropped;
    return HWP_OK;
}

HWP__GET_DESC_FN(pm_table, d, hwp__pm_table_ok(x))

/* Linear probing on a mixed PC; pc 0 marks a free slot. Returns the
 * entry, inserting it when `add` and there is room under the 7/8 limit
 * (DCPI's tables are fixed size too; what does not fit is counted). */
static hwp_pm_entry *hwp__pm_lookup(const hwp_pm_table *t, uint64_t pc,
                                    bool add, uint32_t *used) {
    uint32_t mask = t->d.capacity - 1u;
    uint32_t i = (uint32_t)(hwp_mix64(pc) >> 32) & mask;
    for (;; i = (i + 1u) & mask) {
        hwp_pm_entry *e = &t->e[i];
        if (e->pc == pc) return e;
        if (e->pc == 0) {
            if (!add || *used >= t->limit) return 0;
            (*used)++;
            e->pc = pc;
            return e;
        }
    }
}

/* Did `b`, paired with `a`, issue while `a` was in progress and retire?
 * `dt` is b's fetch minus a's, in cycles (negative when b came first). */
static bool hwp__pm_useful(const hwp_pm_record *a, const hwp_pm_record *b,
                           int64_t dt) {
    int64_t issue = dt + (int64_t)hwp_pm_rec_offset(b, HWP_PM_ST_ISSUE);
    if (!(b->flags & HWP_PM_F_RETIRED) || (b->flags & HWP_PM_F_EMPTY))
        return false;
    return issue >= 0 && issue < (int64_t)hwp_pm_rec_in_progress(a);
}

static void hwp__pm_add_one(hwp_pm_table *t, hwp_pm_entry *e,
                            const hwp_pm_record *r) {
    uint32_t ev = r->events & ((1u << HWP_PM_NEVENTS) - 1u);
    uint64_t ip;
    e->samples++;
    e->retired += (r->flags & HWP_PM_F_RETIRED) ? 1u : 0u;
    /* Only the set bits: most samples carry none or one event. */
    for (; ev; ev &= ev - 1u) e->events[hwp__pm_lowbit(ev)]++;
    /* Written out: as a loop it costs 30 instructions a record (callgrind). */
    e->lat_sum[0] += r->lat[0];
    e->lat_sum[1] += r->lat[1];
    e->lat_sum[2] += r->lat[2];
    e->lat_sum[3] += r->lat[3];
    e->lat_sum[4] += r->lat[4];
    e->lat_sum[5] += r->lat[5];
    /* The in-progress latency's square, for the total latency's envelope;
     * clamped so that one square cannot overflow. */
    ip = (uint64_t)r->lat[0] + r->lat[1] + r->lat[2] + r->lat[3];
    if (ip) {
        ip = ip > 0x80000000u ? 0x80000000u : ip;
        e->lat_sq = hwp_sat_add64(e->lat_sq, ip * ip);
    }
    t->samples++;
}

/* A pair's contribution to its two entries (5.2.3, 5.2.4). */
static void hwp__pm_add_pair(const hwp_pm_table *t, hwp_pm_entry *e1,
                             hwp_pm_entry *e2, const hwp_pm_record *r1,
                             const hwp_pm_record *r2) {
    int64_t dt = (int64_t)r2->pair_latency;
    int64_t ret1 = (int64_t)hwp_pm_rec_offset(r1, HWP_PM_ST_COUNT);
    int64_t ret2 = dt + (int64_t)hwp_pm_rec_offset(r2, HWP_PM_ST_COUNT);
    int64_t gap = ret1 > ret2 ? ret1 - ret2 : ret2 - ret1;
    bool near = (r1->flags & r2->flags & HWP_PM_F_RETIRED) &&
                !((r1->flags | r2->flags) & HWP_PM_F_EMPTY) &&
                gap <= (int64_t)t->d.near_cycles;
    if (e1) {
        e1->pair_samples++;
        e1->in_progress += hwp_pm_rec_in_progress(r1);
        e1->useful_fwd += hwp__pm_useful(r1, r2, dt) ? 1u : 0u;
        e1->near += near ? 1u : 0u;
    }
    if (e2) {
        e2->pair_samples++;
        e2->in_progress += hwp_pm_rec_in_progress(r2);
        e2->useful_bwd += hwp__pm_useful(r2, r1, -dt) ? 1u : 0u;
        e2->near += near ? 1u : 0u;
    }
}

/* The entry a record goes to, or NULL (counted) for empty / unplaceable. */
static hwp_pm_entry *hwp__pm_entry_for(hwp_pm_table *t,
                                       const hwp_pm_record *r) {
    hwp_pm_entry *e;
    if (r->flags & HWP_PM_F_EMPTY) {
        t->empty++;
        return 0;
    }
    if (r->pc == 0) {
        t->zero_pc++;
        return 0;
    }
    e = hwp__pm_lookup(t, r->pc, true, &t->used);
    if (!e) t->dropped++;
    else hwp__pm_add_one(t, e, r);
    return e;
}

/* NULL when a sampler's record fits the table's settings, else the
 * reason, naming the field and both values (written into t->why). A
 * table of another S would scale every estimate by the ratio of the two. */
static const char *hwp__pm_table_foreign(hwp_pm_table *t, const hwp_pm_record *r) {
    hwp_bufwriter b;
    hwp_writer w;
    const char *field;
    uint32_t theirs, ours;
    if (r->interval != t->d.interval) {
        field = "interval", theirs = r->interval, ours = t->d.interval;
    } else if ((r->window != 0) != (t->d.paired != 0)) {
        field = "paired", theirs = r->window != 0, ours = t->d.paired;
    } else if (r->window && r->window != t->d.window) {
        field = "window", theirs = r->window, ours = t->d.window;
    } else {
        return NULL;
    }
    w = hwp_writer_buf(&b, t->why, sizeof t->why);
    hwp_put_str(&w, "pm_table: a record from a sampler with ");
    hwp_put_str(&w, field);
    hwp_put_str(&w, " ");
    hwp_put_u64(&w, theirs);
    hwp_put_str(&w, ", the table's is ");
    hwp_put_u64(&w, ours);
    hwp_put_str(&w, " (hwp_pm_table_desc_for gives the sampler's)");
    return t->why;
}

HWP_API hwp_status hwp_pm_table_add(hwp_pm_table *t, const hwp_pm_record *r,
                                    uint32_t n) {
    uint32_t i;
    const char *why;
    if (!hwp__pm_table_ok(t) || (n && !r)) return HWP_EINVAL;
    /* The whole batch or none of it: no half-aggregated delivery. */
    for (i = 0; i < n; i++)
        if (r[i].interval && (why = hwp__pm_table_foreign(t, &r[i])) != NULL) {
            t->refused += n;
            return hwp__fail(&t->head, HWP_EINVAL, why);
        }
    for (i = 0; i < n; i++) {
        bool pair = (r[i].flags & HWP_PM_F_FIRST) && i + 1 < n &&
                    (r[i + 1].flags & HWP_PM_F_SECOND);
        bool single = !(r[i].flags & (HWP_PM_F_FIRST | HWP_PM_F_SECOND));
        /* A sample stands for S / 2 fetches in a paired table and S in a
         * single one: a record of the other kind would skew every
         * estimate, so it is counted and left out. */
        if (t->d.paired ? !pair : !single) {
            t->mismatched++;
            continue;
        }
        if (pair) {
            hwp_pm_entry *e1 = hwp__pm_entry_for(t, &r[i]);
            hwp_pm_entry *e2 = hwp__pm_entry_for(t, &r[i + 1]);
            hwp__pm_add_pair(t, e1, e2, &r[i], &r[i + 1]);
            i++;
        } else {
            hwp__pm_entry_for(t, &r[i]);
        }
    }
    return hwp__fail(&t->head, HWP_OK, "");
}

HWP_API void hwp_pm_table_deliver(void *table, const hwp_pm_record *r,
                                  uint32_t n) {
    hwp_pm_table_add((hwp_pm_table *)table, r, n);
}

HWP_API const hwp_pm_entry *hwp_pm_table_find(const hwp_pm_table *t,
                                              uint64_t pc) {
    uint32_t used;
    if (!hwp__pm_table_ok(t) || pc == 0) return 0;
    used = t->used;
    return hwp__pm_lookup(t, pc, false, &used);
}

HWP_API const hwp_pm_entry *hwp_pm_table_at(const hwp_pm_table *t,
                                            uint32_t i) {
    if (!hwp__pm_table_ok(t) || i >= t->d.capacity || t->e[i].pc == 0)
        return 0;
    return &t->e[i];
}

/* Add s's counts into d (same PC). */
static void hwp__pm_entry_add(hwp_pm_entry *d, const hwp_pm_entry *s) {
    unsigned b;
    d->samples += s->samples;
    d->retired += s->retired;
    for (b = 0; b < HWP_PM_NEVENTS; b++) d->events[b] += s->events[b];
    for (b = 0; b < HWP_PM_LAT_COUNT; b++) d->lat_sum[b] += s->lat_sum[b];
    d->lat_sq = hwp_sat_add64(d->lat_sq, s->lat_sq);
    d->pair_samples += s->pair_samples;
    d->in_progress += s->in_progress;
    d->useful_fwd += s->useful_fwd;
    d->useful_bwd += s->useful_bwd;
    d->near += s->near;
}

HWP_API hwp_status hwp_pm_table_merge(hwp_pm_table *dst,
                                      const hwp_pm_table *src) {
    uint32_t i;
    const hwp_field *f;
    if (!hwp__pm_table_ok(dst) || !hwp__pm_table_ok(src)) return HWP_EINVAL;
    f = hwp__field_diff(&dst->d, &src->d, hwp__pmt_desc_f, HWP__N(hwp__pmt_desc_f));
    if (f) return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    for (i = 0; i < src->d.capacity; i++) {
        const hwp_pm_entry *s = &src->e[i];
        hwp_pm_entry *d;
        if (!s->pc) continue;
        d = hwp__pm_lookup(dst, s->pc, true, &dst->used);
        if (!d) { /* dst is full: its samples are lost, and counted */
            dst->dropped += s->samples;
            continue;
        }
        hwp__pm_entry_add(d, s);
        dst->samples += s->samples;
    }
    dst->empty += src->empty;
    dst->dropped += src->dropped;
    dst->zero_pc += src->zero_pc;
    dst->mismatched += src->mismatched;
    if (src->refused && !dst->refused) hwp__copy(dst->why, src->why, sizeof dst->why);
    dst->refused += src->refused;
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API uint64_t hwp_pm_count(const hwp_pm_entry *e, unsigned prop) {
    if (!e || prop >= HWP_PM_PROP_COUNT) return 0;
    if (prop == HWP_PM_PROP_SAMPLES) return e->samples;
    if (prop == HWP_PM_PROP_RETIRED) return e->retired;
    return e->events[prop - 2u];
}

HWP_API uint32_t hwp_pm_table_min_samples(const hwp_pm_table *t) {
    return hwp__pm_table_ok(t) ? t->d.min_samples : HWP_PM_MIN_SAMPLES;
}

HWP_API double hwp_pm_table_interval(const hwp_pm_table *t) {
    if (!hwp__pm_table_ok(t)) return 0.0;
    return (double)t->d.interval / (t->d.paired ? 2.0 : 1.0);
}

/* 5.1: kS estimates fN with coefficient of variation about sqrt(1/k).
 * The interval is the score interval for a Poisson count (k + z^2/2 +/-
 * z sqrt(k + z^2/4)), which stays sensible at k = 0 where the plain
 * kS +/- z S sqrt(k) would be empty. */
HWP_API hwp_pm_est hwp_pm_estimate(uint64_t k, double S, double z) {
    hwp_pm_est r;
    double kd = (double)k, mid = kd + 0.5 * z * z;
    double half = z * hwp_sqrt(kd + 0.25 * z * z);
    r.value = kd * S;
    r.cv = k ? hwp_sqrt(1.0 / kd) : 0.0;
    r.lo = (mid - half > 0.0 ? mid - half : 0.0) * S;
    r.hi = (mid + half) * S;
    r.samples = k;
    r.interval = S;
    r.enough = k >= HWP_PM_MIN_SAMPLES;
    return r;
}

HWP_API hwp_pm_est hwp_pm_table_estimate(const hwp_pm_table *t,
                                         const hwp_pm_entry *e, unsigned prop,
                                         double z) {
    hwp_pm_est r = hwp_pm_estimate(hwp_pm_count(e, prop),
                                   hwp_pm_table_interval(t), z);
    r.enough = r.samples >= hwp_pm_table_min_samples(t);
    return r;
}

/* Total fetch -> retire-ready latency of I over the run from every sample:
 * each sample stands for S fetches, so S x (sum of sampled latencies)
 * estimates the total (the estimator of 5.1 applied to a sum). Sampling
 * is close to Poisson, so the variance of the estimate is S^2 x (sum of
 * squared latencies) and its cv sqrt(sum l^2) / sum l, which is 1/sqrt(k)
 * when all latencies are equal: the envelope of Fig. 3. */
HWP_API hwp_pm_est hwp_pm_latency_total(const hwp_pm_table *t,
                                        const hwp_pm_entry *e, double z) {
    hwp_pm_est r;
    double S = hwp_pm_table_interval(t), sum, sd;
    hwp__zero(&r, sizeof r);
    r.interval = S;
    if (!hwp__pm_table_ok(t) || !e) return r;
    sum = (double)e->lat_sum[0] + (double)e->lat_sum[1] +
          (double)e->lat_sum[2] + (double)e->lat_sum[3];
    sd = hwp_sqrt((double)e->lat_sq);
    r.samples = e->samples;
    r.enough = e->samples >= t->d.min_samples;
    r.value = S * sum;
    r.cv = sum > 0.0 ? sd / sum : 0.0;
    r.lo = S * (sum - z * sd > 0.0 ? sum - z * sd : 0.0);
    r.hi = S * (sum + z * sd);
    return r;
}

/* 5.2.3: issue slots wasted over all executions of I,
 * (L_I C S / 2) - (U_I W S): L_I sums both samples of every pair, so the
 * /2 is the two samples a pair takes per S. 0 without pairs. */
HWP_API double hwp_pm_wasted_slots(const hwp_pm_table *t,
                                   const hwp_pm_entry *e) {
    double S, u;
    if (!hwp__pm_table_ok(t) || !e) return 0.0;
    S = (double)t->d.interval;
    u = (double)(e->useful_fwd + e->useful_bwd);
    return (double)e->in_progress * t->d.issue_width * S / 2.0 -
           u * t->d.window * S;
}

/* 5.2.4: instructions retiring within X cycles of I, per execution of I,
 * is about 2 W near_I / pair_samples_I (each pair samples the +/-W window
 * once, as in 5.2.2); counting I itself and dividing by the 2X + 1 cycles
 * of the window gives the IPC near I. */
HWP_API double hwp_pm_ipc_near(const hwp_pm_table *t, const hwp_pm_entry *e) {
    double around;
    if (!hwp__pm_table_ok(t) || !e || !e->pair_samples) return 0.0;
    around = 2.0 * t->d.window * (double)e->near / (double)e->pair_samples;
    return (1.0 + around) / (2.0 * t->d.near_cycles + 1.0);
}

static void hwp__pm_row(const hwp_pm_table *t, const hwp_pm_entry *e,
                        unsigned by, double z, hwp_pm_row *r) {
    r->pc = e->pc;
    r->count = hwp_pm_table_estimate(t, e, HWP_PM_PROP_SAMPLES, z);
    r->latency = hwp_pm_latency_total(t, e, z);
    r->dcmiss = hwp_pm_table_estimate(t, e, HWP_PM_PROP_EVENT(HWP_EV_DCMISS),
                                      z);
    r->wasted_slots = hwp_pm_wasted_slots(t, e);
    r->ipc_near = hwp_pm_ipc_near(t, e);
    r->pair_samples = e->pair_samples;
    r->cost = by == HWP_PM_RANK_WASTED   ? r->wasted_slots
              : by == HWP_PM_RANK_SAMPLES ? r->count.value
                                          : r->latency.value;
}

/* a before b in the ranking: PCs with the advised minimum of samples
 * first (the others have no estimate to show), then higher cost, then
 * lower PC. */
static bool hwp__pm_row_before(const hwp_pm_row *a, const hwp_pm_row *b) {
    if (a->count.enough != b->count.enough) return a->count.enough;
    return a->cost > b->cost || (a->cost == b->cost && a->pc < b->pc);
}

/* Keeps the best `cap` rows sorted in out by insertion: O(used x cap)
 * worst case, no scratch memory (reports ask for a few dozen rows). */
HWP_API size_t hwp_pm_table_rank(const hwp_pm_table *t, unsigned by, double z,
                                 hwp_pm_row *out, size_t cap) {
    size_t have = 0, j;
    uint32_t i;
    hwp_pm_row r;
    if (!hwp__pm_table_ok(t) || by > HWP_PM_RANK_SAMPLES) return 0;
    if (!out) cap = 0;
    for (i = 0; cap && i < t->d.capacity; i++) {
        if (!t->e[i].pc) continue;
        hwp__pm_row(t, &t->e[i], by, z, &r);
        if (have == cap && !hwp__pm_row_before(&r, &out[cap - 1])) continue;
        j = have < cap ? have++ : cap - 1;
        for (; j > 0 && hwp__pm_row_before(&r, &out[j - 1]); j--)
            out[j] = out[j - 1];
        out[j] = r;
    }
    return t->used;
}

HWP_API hwp_status hwp_pm_accuracy(const hwp_pm_table *t, unsigned prop,
                                   hwp_pm_truth_fn truth, void *ctx,
                                   double min_ek, hwp_pm_acc *out) {
    uint32_t i;
    double S, sum_ratio = 0, sum_err = 0, sum_truth = 0, inside = 0;
    if (!hwp__pm_table_ok(t)) return HWP_EINVAL;
    if (!truth || !out || prop >= HWP_PM_PROP_COUNT) return HWP_EINVAL;
    hwp__zero(out, sizeof *out);
    S = hwp_pm_table_interval(t);
    for (i = 0; i < t->d.capacity; i++) {
        const hwp_pm_entry *e = &t->e[i];
        uint64_t n;
        double est, ratio, ek;
        if (!e->pc) continue;
        n = truth(ctx, e->pc);
        ek = (double)n / S; /* E[k]: the envelope of Fig. 3 */
        if (!n || ek < min_ek) continue;
        est = (double)hwp_pm_count(e, prop) * S;
        ratio = est / (double)n;
        out->pcs++;
        sum_ratio += ratio;
        inside += (ratio - 1.0) * (ratio - 1.0) * ek <= 1.0 ? 1.0 : 0.0;
        sum_err += est > (double)n ? est - (double)n : (double)n - est;
        sum_truth += (double)n;
    }
    if (out->pcs) {
        out->in_envelope = inside / (double)out->pcs;
        out->mean_ratio = sum_ratio / (double)out->pcs;
        out->weighted_err = sum_err / sum_truth;
    }
    return HWP_OK;
}

/* A "pcs" element of the table's report: its members by these rows, then
 * the derived values the writer adds, which the reader recomputes. */
typedef struct hwp__pm_events {
    uint64_t n[HWP_PM_NEVENTS];
} hwp__pm_events;

static const hwp_field hwp__pm_event_f[HWP_PM_NEVENTS] = {
    HWP__FSN(hwp__pm_events, "taken", n[0]), HWP__FSN(hwp__pm_events, "mispred", n[1]),
    HWP__FSN(hwp__pm_events, "icmiss", n[2]), HWP__FSN(hwp__pm_events, "dcmiss", n[3]),
    HWP__FSN(hwp__pm_events, "itlbmiss", n[4]), HWP__FSN(hwp__pm_events, "dtlbmiss", n[5]),
    HWP__FSN(hwp__pm_events, "aborted", n[6]), HWP__FSN(hwp__pm_events, "trap", n[7]),
    HWP__FSN(hwp__pm_events, "indirect", n[8])};

static const hwp_field hwp__pm_entry_f[] = {
    HWP__FN(hwp_pm_entry, "profileme table", pc, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
    HWP__FS(hwp_pm_entry, samples), HWP__FS(hwp_pm_entry, retired),
    HWP__FSUB(hwp_pm_entry, "profileme table", events, hwp__pm_event_f),
    HWP__FU64S(hwp_pm_entry, lat_sum, "profileme table: lat_sum has 6 values"),
    HWP__FS(hwp_pm_entry, lat_sq), HWP__FS(hwp_pm_entry, pair_samples),
    HWP__FS(hwp_pm_entry, in_progress), HWP__FS(hwp_pm_entry, useful_fwd),
    HWP__FS(hwp_pm_entry, useful_bwd), HWP__FS(hwp_pm_entry, near)};

/* An estimate's value, or "-" below the advised minimum of samples. */
static void hwp__pm_put_est(const hwp_writer *w, double v, bool enough,
                            unsigned decimals) {
    hwp_put_str(w, "  ");
    if (enough) hwp_put_f64(w, v, decimals);
    else hwp_put_str(w, "-");
}

HWP_API void hwp_pm_table_write_text(const hwp_pm_table *t, const hwp_writer *w) {
    hwp_pm_table_write_top(t, w, 20);
}

HWP_API void hwp_pm_table_write_top(const hwp_pm_table *t, const hwp_writer *w,
                                    uint32_t top) {
    hwp_pm_row best, r, last;
    uint32_t shown, i;
    unsigned by;
    bool found;
    if (!hwp__pm_table_ok(t)) return;
    /* Total cost: wasted slots need pairs, latency needs a host that
     * reports stages; without either the fetch estimate is all there is. */
    by = HWP_PM_RANK_SAMPLES;
    for (i = 0; i < t->d.capacity; i++)
        if (t->e[i].pc && (t->e[i].lat_sum[0] | t->e[i].lat_sum[1] |
                           t->e[i].lat_sum[2] | t->e[i].lat_sum[3])) {
            by = t->d.paired ? HWP_PM_RANK_WASTED : HWP_PM_RANK_LATENCY;
            break;
        }
    if (t->refused) {
        hwp_put_u64(w, t->refused);
        hwp_put_str(w, " records refused: ");
        hwp_put_str(w, t->why);
        hwp_put_str(w, "\n");
    }
    hwp_put_str_u64(w, "profileme table: ", t->used);
    hwp_put_str_u64(w, " PCs, ", t->samples);
    hwp__put_str_f64(w, " samples, one per ", hwp_pm_table_interval(t), 1);
    hwp_put_str_u64(w, " fetches; ", t->dropped + t->zero_pc + t->mismatched);
    hwp_put_str(w, " records dropped\n  ranked by estimated total ");
    hwp_put_str(w, by == HWP_PM_RANK_WASTED    ? "wasted issue slots"
                   : by == HWP_PM_RANK_LATENCY ? "fetch->retire-ready cycles"
                                               : "fetches");
    hwp_put_str_u64(w, "; estimates from fewer than ", t->d.min_samples);
    hwp_put_str(w, " samples shown as -\n");
    /* No sample carries a stage: the host times nothing, so latencies,
     * D-cache misses and wasted slots were not measured and are left
     * out rather than shown as zeros. */
    if (by == HWP_PM_RANK_SAMPLES)
        hwp_put_str(w, "  no stage latencies reported (a host that times "
                       "instructions gives them): latency, D-miss and wasted-slot "
                       "columns left out\n  pc  samples  est_fetches\n");
    else
        hwp_put_str(w, "  pc  samples  est_fetches  est_latency_cycles  latency_cv"
                       "  dcmiss_samples  est_wasted_slots\n");
    /* Next best after the last row shown, by repeated selection:
     * O(top x capacity) and no scratch memory. */
    hwp__zero(&last, sizeof last);
    for (shown = 0; shown < top; shown++) {
        found = false;
        for (i = 0; i < t->d.capacity; i++) {
            if (!t->e[i].pc) continue;
            hwp__pm_row(t, &t->e[i], by, 1.96, &r);
            if (shown && !hwp__pm_row_before(&last, &r)) continue;
            if (!found || hwp__pm_row_before(&r, &best)) best = r;
            found = true;
        }
        if (!found) break;
        last = best;
        hwp__put_str_hex(w, "  ", best.pc);
        hwp_put_str_u64(w, "  ", best.count.samples);
        hwp__pm_put_est(w, best.count.value, best.count.enough, 0);
        if (by == HWP_PM_RANK_SAMPLES) {
            hwp_put_str(w, "\n");
            continue;
        }
        hwp__pm_put_est(w, best.latency.value, best.latency.enough, 0);
        hwp__pm_put_est(w, best.latency.cv, best.latency.enough, 3);
        hwp_put_str_u64(w, "  ", best.dcmiss.samples);
        hwp__pm_put_est(w, best.wasted_slots,
                        t->d.paired && best.pair_samples >= t->d.min_samples,
                        0);
        hwp_put_str(w, "\n");
    }
}

/* The table's counters in hwp_pm_table_stats order. */
static const hwp_field hwp__pmt_stats_f[] = {
    HWP__FS_HEAD(hwp_pm_table_stats),
    HWP__FS(hwp_pm_table_stats, used), HWP__FS(hwp_pm_table_stats, samples),
    HWP__FS(hwp_pm_table_stats, empty), HWP__FS(hwp_pm_table_stats, full),
    HWP__FS(hwp_pm_table_stats, zero_pc), HWP__FS(hwp_pm_table_stats, mismatched)};

/* The first free slot: the entries are written from the one after it
 * round the table, the order in which re-inserting them (read_json)
 * puts every one back in its own slot (no probe run crosses a free
 * slot). One is always free: the table fills to 7/8 at most. */
static uint32_t hwp__pmt_free(const hwp_pm_table *t) {
    uint32_t z = 0;
    while (z < t->d.capacity && t->e[z].pc) z++;
    return z;
}

HWP_API void hwp_pm_table_write_json(const hwp_pm_table *t,
                                     const hwp_writer *w) {
    hwp_pm_table_stats st;
    hwp_pm_table_desc d;
    uint32_t k, mask, z;
    bool first = true;
    if (!hwp__pm_table_ok(t)) {
        hwp_put_str(w, "null");
        return;
    }
    d = t->d;
    hwp_pm_table_get_stats(t, &st);
    hwp_put_json_envelope(w, "pm_table", 1);
    hwp__field_put(w, "desc", &d, hwp__pmt_desc_f, HWP__N(hwp__pmt_desc_f));
    hwp__field_put(w, "stats", &st, hwp__pmt_stats_f, HWP__N(hwp__pmt_stats_f));
    hwp_put_str(w, ",\"pcs\":[");
    mask = d.capacity - 1u;
    z = hwp__pmt_free(t);
    for (k = 1; k <= d.capacity; k++) {
        const hwp_pm_entry *e = &t->e[(z + k) & mask];
        if (!e->pc) continue;
        hwp_put_str(w, first ? "{" : ",{");
        first = false;
        hwp__field_members(w, e, hwp__pm_entry_f, HWP__N(hwp__pm_entry_f));
        /* Derived, for readers of the report; read_json recomputes them. */
        hwp_put_json_f64(w, "est",
                         hwp_pm_table_estimate(t, e, HWP_PM_PROP_SAMPLES,
                                               1.96).value, 1);
        hwp_put_json_f64(w, "cv", e->samples ? hwp_sqrt(1.0 / (double)e->samples)
                                              : 0.0, 4);
        hwp_put_json_f64(w, "latency", hwp_pm_latency_total(t, e, 1.96).value,
                         1);
        hwp_put_json_f64(w, "wasted_slots", hwp_pm_wasted_slots(t, e), 1);
        hwp_put_json_f64(w, "ipc_near", hwp_pm_ipc_near(t, e), 4);
        hwp_put_str(w, "}");
    }
    hwp_put_str(w, "]}");
}

/* One "pcs" element into a fresh entry of t. */
static bool hwp__pmt_read_entry(hwp_json *j, hwp_pm_table *t) {
    hwp_pm_entry x, *e;
    const hwp_field *f;
    char key[24];
    hwp__zero(&x, sizeof x);
    if (!hwp_json_object(j)) return false;
    while (hwp_json_member(j, key, sizeof key)) {
        if (!(f = hwp__field_find(hwp__pm_entry_f, HWP__N(hwp__pm_entry_f), key)))
            hwp_json_skip(j); /* derived values: recomputed */
        else if (!hwp__field_value(j, &x, f))
            return false;
    }
    if (j->why) return false;
    if (!x.pc) return hwp_json_fail(j, "profileme table: pc must be nonzero");
    if (hwp_pm_table_find(t, x.pc))
        return hwp_json_fail(j, "profileme table: pc listed twice");
    e = hwp__pm_lookup(t, x.pc, true, &t->used);
    if (!e) return hwp_json_fail(j, "profileme table: more pcs than capacity "
                                    "holds");
    *e = x;
    return true;
}

/* Read a table report: its desc into *d and, when t is not NULL, check
 * it against t's and restore the profile into t. */
static hwp_status hwp__pmt_read(hwp_pm_table_desc *d, hwp_pm_table *t,
                                const char *json, size_t n,
                                hwp_json_err *err) {
    hwp_json j;
    char key[24];
    bool have_desc = false;
    hwp_status rc;
    hwp__zero(d, sizeof *d);
    hwp_json_init(&j, json, n);
    if (hwp_json_envelope(&j, "pm_table", 1)) {
        while (hwp_json_member(&j, key, sizeof key)) {
            if (hwp_json_key_is(key, "desc")) {
                hwp_pm_table_desc o;
                const hwp_field *f;
                const char *why;
                if (!hwp__field_read(&j, d, hwp__pmt_desc_f, HWP__N(hwp__pmt_desc_f),
                                     false))
                    break;
                why = hwp__pm_table_fill(&o, d);
                if (why) {
                    hwp_json_fail(&j, why);
                    break;
                }
                *d = o;
                have_desc = true;
                if (!t) continue;
                f = hwp__field_diff(&t->d, d, hwp__pmt_desc_f, HWP__N(hwp__pmt_desc_f));
                if (f) return hwp__json_mismatch(&t->head, err, json, n, f->why);
                hwp_pm_table_reset(t);
            } else if (!t) {
                hwp_json_skip(&j);
            } else if (!have_desc) {
                hwp_json_fail(&j, "profileme table: desc must come first");
            } else if (hwp_json_key_is(key, "stats")) {
                hwp_pm_table_stats st;
                hwp__zero(&st, sizeof st);
                if (!hwp__field_read(&j, &st, hwp__pmt_stats_f, HWP__N(hwp__pmt_stats_f),
                                     false))
                    break;
                /* events, dropped and used are derived */
                t->samples = st.samples;
                t->empty = st.empty;
                t->dropped = st.full;
                t->zero_pc = st.zero_pc;
                t->mismatched = st.mismatched;
            } else if (hwp_json_key_is(key, "pcs")) {
                if (!hwp_json_array(&j)) break;
                while (hwp_json_next(&j))
                    if (!hwp__pmt_read_entry(&j, t)) break;
            } else {
                hwp_json_skip(&j);
            }
        }
        if (!have_desc && !j.why) hwp_json_fail(&j, "profileme table: no desc");
        hwp_json_end(&j);
    }
    rc = hwp_json_status(&j, err);
    if (t) {
        if (rc != HWP_OK) {
            if (have_desc) hwp_pm_table_reset(t); /* no half-loaded profile */
            return hwp__fail(&t->head, rc, "profileme table: malformed report");
        }
        return hwp__fail(&t->head, HWP_OK, "");
    }
    return rc;
}

HWP_API hwp_status hwp_pm_table_read_desc(hwp_pm_table_desc *d,
                                          const char *json, size_t n,
                                          hwp_json_err *err) {
    if (!d || !json) return HWP_EINVAL;
    return hwp__pmt_read(d, 0, json, n, err);
}

HWP_API hwp_status hwp_pm_table_read_json(hwp_pm_table *t, const char *json,
                                          size_t n, hwp_json_err *err) {
    hwp_pm_table_desc d;
    if (!hwp__pm_table_ok(t) || !json) return HWP_EINVAL;
    return hwp__pmt_read(&d, t, json, n, err);
}

/* ---- path reconstruction ------------------------------------------------ */

typedef struct hwp__pm_walk {
    const hwp_pm_block *cfg;
    uint32_t n;
    const hwp_pm_path_query *q;
    uint32_t *out, cap, words, paths;
    uint32_t budget; /* blocks the paired-PC search may still visit */
    uint32_t path[HWP_PM_MAX_PATH]; /* newest block first */
} hwp__pm_walk;

static bool hwp__pm_in(const hwp_pm_block *b, uint64_t pc, uint64_t end) {
    return pc >= b->start && pc < end;
}

/* Could the pair's other instruction lie within `left` instructions
 * before block b, on some way into b? Branch directions are unknown past
 * the history bits, so every predecessor counts. Each answer errs towards
 * yes: a predecessor is searched whole, a routine entry, an unknown block
 * size or an exhausted search budget all say yes. */
static bool hwp__pm_reaches(hwp__pm_walk *k, uint32_t b, uint64_t left) {
    uint32_t x, preds = 0;
    for (x = 0; x < k->n; x++) {
        const hwp_pm_block *p = &k->cfg[x];
        if (p->taken != b && p->fall != b) continue;
        preds++;
        if (!k->budget || !p->insns) return true;
        k->budget--;
        if (hwp__pm_in(p, k->q->other_pc, p->end)) return true;
        if (p->insns < left && hwp__pm_reaches(k, x, left - p->insns))
            return true;
    }
    return !preds;
}

/* A finished segment path[0..len-1]: filter by the paired PC (5.3's third
 * scheme), count it, and write it oldest block first when it fits. */
static void hwp__pm_emit(hwp__pm_walk *k, uint32_t len) {
    uint32_t i;
    uint64_t older = 0; /* instructions in the blocks before pc's */
    if (k->q->use_other) {
        bool found = hwp__pm_in(&k->cfg[k->path[0]], k->q->other_pc, k->q->pc);
        for (i = 1; i < len; i++) {
            found = found || hwp__pm_in(&k->cfg[k->path[i]], k->q->other_pc,
                                        k->cfg[k->path[i]].end);
            older += k->cfg[k->path[i]].insns;
        }
        /* Too short to have reached the other instruction: keep it if
         * some way into its oldest block can still hold it. */
        if (!found && k->q->other_distance && older < k->q->other_distance) {
            k->budget = 4096;
            found = hwp__pm_reaches(k, k->path[len - 1],
                                    k->q->other_distance - older);
        }
        if (!found) return;
    }
    k->paths++;
    if (k->words + len + 1 > k->cap) return;
    k->out[k->words++] = len;
    for (i = len; i > 0; i--) k->out[k->words++] = k->path[i - 1];
}

/* Extend the segment backwards from path[len - 1] having matched `used`
 * history bits. Depth is bounded by max_blocks. */
static void hwp__pm_walk_back(hwp__pm_walk *k, uint32_t len, uint32_t used) {
    uint32_t b = k->path[len - 1], x, preds = 0;
    if (used == k->q->bits || len == k->q->max_blocks) {
        hwp__pm_emit(k, len);
        return;
    }
    for (x = 0; x < k->n; x++) {
        const hwp_pm_block *p = &k->cfg[x];
        unsigned dir;
        if (!p->cond) { /* one successor, no history bit */
            uint32_t succ = p->taken != HWP_PM_NONE ? p->taken : p->fall;
            if (succ != b) continue;
            preds++;
            k->path[len] = x;
            hwp__pm_walk_back(k, len + 1, used);
            continue;
        }
        for (dir = 0; dir < 2; dir++) { /* dir 1: the taken edge */
            if ((dir ? p->taken : p->fall) != b) continue;
            preds++;
            if (((k->q->history >> used) & 1u) != dir) continue;
            k->path[len] = x;
            hwp__pm_walk_back(k, len + 1, used + 1);
        }
    }
    if (!preds) hwp__pm_emit(k, len); /* the routine's entry */
}

HWP_API hwp_status hwp_pm_paths(const hwp_pm_block *cfg, uint32_t n_blocks,
                                const hwp_pm_path_query *q, uint32_t *out,
                                uint32_t out_cap, uint32_t *n_paths,
                                uint32_t *n_words) {
    hwp__pm_walk k;
    hwp_pm_path_query qq;
    uint32_t i;
    if (!cfg || !q || !n_paths || !n_words || (out_cap && !out))
        return HWP_EINVAL;
    *n_paths = *n_words = 0;
    qq = *q;
    if (!qq.max_blocks) qq.max_blocks = 64;
    if (qq.max_blocks > HWP_PM_MAX_PATH || qq.bits > 64) return HWP_EINVAL;
    for (i = 0; i < n_blocks; i++)
        if ((cfg[i].taken != HWP_PM_NONE && cfg[i].taken >= n_blocks) ||
            (cfg[i].fall != HWP_PM_NONE && cfg[i].fall >= n_blocks))
            return HWP_EFORMAT;
    for (i = 0; i < n_blocks; i++)
        if (hwp__pm_in(&cfg[i], qq.pc, cfg[i].end)) break;
    if (i == n_blocks) return HWP_EINVAL; /* pc is in no block */
    k.cfg = cfg;
    k.n = n_blocks;
    k.q = &qq;
    k.out = out;
    k.cap = out_cap;
    k.words = k.paths = 0;
    k.path[0] = i;
    hwp__pm_walk_back(&k, 1, 0);
    *n_paths = k.paths;
    *n_words = k.words;
    return HWP_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_IMPL */
