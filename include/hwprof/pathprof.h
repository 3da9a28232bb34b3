/* SPDX-License-Identifier: MIT */
/* hwprof/pathprof.h: hardware path detection and profiling.
 *
 * A software model of Vaswani, Jacob & Srikant, "Representing, Detecting
 * and Profiling Paths in Hardware" (IISc-CSA-TR-2004-2). The host reports
 * every retired branch; a path stack turns the branch stream into program
 * paths, each named by a compact path descriptor; every completed path
 * goes to a Hot Path Table that keeps the hot ones, to a path-based phase
 * detector, and to a host callback (e.g. a Whole Program Path compressor).
 *
 * PAPER SECTIONS MODELLED
 *   3    path descriptor (start, length, direction bits); path stack with
 *        push / pop / update / update-count and their fixed order; the
 *        PPCR branch-type -> operation table with presets for Table 1 (BL
 *        paths), Table 2 (WPP sub-paths) and extended paths (extension
 *        counter); splitting at the maximum length; both overflow policies
 *        (drop the bottom entry and ignore the incomplete path it leaves,
 *        or spill to host memory); popping n entries for longjmp/unwinding
 *   4    a per-entry event counter (8 bits by default, saturating) fed with
 *        the block event count of every branch: branches, instructions or
 *        host-reported events (misses, mispredictions, relative energy)
 *   5    Hot Path Table: entries x ways, 32-bit saturating accumulators,
 *        index p / pb / plb, LFU replacement (LRU for comparison), and
 *        hwprof's aging policy (LFU with dynamic aging)
 *   6    path-based phase detection (accumulators indexed by a hash of the
 *        descriptor, signatures from their high-order bits, Manhattan
 *        distance against the previous interval and a table of past
 *        phases) and, beside it, the BBV detector of Sherwood, Sair &
 *        Calder ("Phase Tracking and Prediction", ISCA 2003)
 *   8.1  overlap percentage (Arnold & Ryder) as a reusable function
 *   8.2  latency model: push 1, pop 1 + HPT update, HPT miss log2(ways),
 *        a branch queue (default 4) and commit stalls when it is full
 *   8.3  sensitivity, false positives, stability against a reference
 *
 * THE PATH DESCRIPTOR
 *   hwp_path_pd is 16 bytes: the start address and a `shape` word that
 *   holds the direction bits below a leading 1 (the sentinel). The most
 *   recent branch is bit 0 and the first branch of the path is bit len-1,
 *   so recording a branch is `shape = shape << 1 | taken` and the length
 *   is the sentinel's position. A 16-byte descriptor cannot hold a 64-bit
 *   start, 64 direction bits and a length (that is 135 bits), so the
 *   maximum path length is configurable from 1 to 63 (default 32).
 *
 * API (hot paths are static inline; everything else needs HWPROF_IMPL).
 * Three components, each with the hwprof contract (docs/ARCHITECTURE.md):
 * X_bytes, HWP_X_BYTES, X_init (storage of any alignment), X_reset,
 * X_flush, X_merge, X_get_stats, X_write_json, X_read_desc, X_read_json,
 * X_desc_fields.
 *   descriptors
 *     hwp_path_pd_len(pd)  hwp_path_pd_dir(pd, i)  hwp_path_pd_dirs(pd)
 *     hwp_path_pd_eq(a, b)  hwp_path_pd_hash(pd)
 *     hwp_path_index(key, mask)         the HPT set / phase counter of a key
 *     hwp_path_decode(p, pd, map, ctx, out, cap)   the blocks a path covers
 *   path stack (hwp_path)
 *     hwp_path_attach(p, hpt, phase)    wire the HPT / phase detector
 *     hwp_path_branch(p, pc, next_pc, cls, taken, insns, events)   inline
 *     hwp_path_insn(p, insn)            the shared hwp_insn record, inline
 *     hwp_path_begin(p, pc)             push a fresh path at pc (entry)
 *     hwp_path_unwind(p, n, emit)       pop n entries (longjmp, unwind)
 *     hwp_path_depth(p)                 entries on chip: the open paths
 *     hwp_path_flush(p)                 pop and emit every entry (exit)
 *     hwp_path_overhead_pct(p)  hwp_path_write_text(p, w)
 *   Hot Path Table (hwp_hpt)
 *     hwp_hpt_add(h, pd, value)         inline; returns 1 on a hit
 *     hwp_hpt_lookup(h, pd)  hwp_hpt_export(h, rows, cap)
 *     hwp_hpt_write_text(h, w)
 *   phase detectors (hwp_phase: path-based or BBV, desc.kind)
 *     hwp_phase_add_path(ph, pd, insns)    inline, path-based (sec. 6)
 *     hwp_phase_add_branch(ph, pc, insns)  inline, BBV (Sherwood et al.)
 *     hwp_phase_hw_bytes(d)  hwp_phase_bbv_desc(path_desc, out)
 *     hwp_phase_write_text(ph, w)
 *   metrics
 *     hwp_path_overlap(a, na, b, nb)     overlap percentage (sorts a, b)
 *     hwp_phase_score(ref, det, n, min_run, out)
 *                                        sensitivity, false positives,
 *                                        same-phase accuracy, stability
 *
 * COMPILE-TIME SIZES (equal to the *_bytes() of the matching desc)
 *   HWP_PATH_BYTES(depth, queue)  (queue 0 for HWP_PATH_QUEUE_NONE)
 *   HWP_HPT_BYTES(entries)  HWP_PHASE_BYTES(counters, table)
 *
 * COST
 *   The path stack's branch-queue model charges commit stalls to the cost
 *   given to hwp_path_init (HWP_COST_PATH_STALL) and reads the operation
 *   latencies HWP_COST_PATH_* from it; a NULL cost skips the queue model.
 *   The HPT's update latency reaches the host through the path stack's
 *   queue. Policy aging (LFUDA) sets a newcomer's priority from one
 *   register on the miss path, at no extra cycle; when that register
 *   reaches 2^31 every priority is halved, a pass that occupies the
 *   table for one cycle per set (HWP_COST_PATH_HPT_AGE), charged to the
 *   cost given to hwp_hpt_init as a stall. The phase detector is off the commit path
 *   and charges nothing.
 *
 * Reports and the JSON schemas: docs/pathprof.md.
 */
#ifndef HWPROF_PATHPROF_H
#define HWPROF_PATHPROF_H

#include "base.h"
#include "cost.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- path descriptor (section 3, Figure 3) ----------------------------- */

typedef struct hwp_path_pd {
    uint64_t start; /* address of the first instruction on the path       */
    uint64_t shape; /* 1 sentinel bit, then one direction bit per branch;
                       the newest branch is bit 0. 0 = no path.            */
} hwp_path_pd;

HWP_STATIC_ASSERT(path_pd_is_16_bytes, sizeof(hwp_path_pd) == 16);

#define HWP_PATH_MAX_LEN 63u

/* Branches along the path. */
HWP_INLINE unsigned hwp_path_pd_len(const hwp_path_pd *pd) {
    return pd->shape ? hwp_log2(pd->shape) : 0u;
}

/* Direction of the i-th branch from the path's start (0 = first): 1 if
 * it was taken. i must be below the length. */
HWP_INLINE unsigned hwp_path_pd_dir(const hwp_path_pd *pd, unsigned i) {
    return (unsigned)(pd->shape >> (hwp_path_pd_len(pd) - 1u - i)) & 1u;
}

/* The direction bits without the sentinel (newest branch in bit 0). */
HWP_INLINE uint64_t hwp_path_pd_dirs(const hwp_path_pd *pd) {
    return pd->shape ^ ((uint64_t)1 << hwp_path_pd_len(pd));
}

HWP_INLINE bool hwp_path_pd_eq(const hwp_path_pd *a, const hwp_path_pd *b) {
    return a->start == b->start && a->shape == b->shape;
}

/* A well-mixed 64-bit hash of the whole descriptor. */
HWP_INLINE uint64_t hwp_path_pd_hash(const hwp_path_pd *pd) {
    return hwp_mix64(pd->start ^ hwp_mix64(pd->shape));
}

/* A completed path as the stack hands it to its consumers. */
typedef struct hwp_path_rec {
    hwp_path_pd pd;
    uint32_t value; /* 1 (execution counts) or the event counter, clamped */
    uint32_t insns; /* instructions along the path (saturating)             */
} hwp_path_rec;

/* A profile row: the HPT export and the exact profiles hosts build. */
typedef struct hwp_path_row {
    hwp_path_pd pd;
    uint64_t count;
} hwp_path_row;

/* The per-path work is inlined into the per-branch hot path even where
 * the compiler would rather call it (it has a few cold callers too). */
#define HWP__PATH_HOT HWP__FORCE_INLINE

/* Fibonacci hashing: the high half of key * 2^64/phi indexes a table.
 * The Hot Path Table's set and the phase detector's counter for a key
 * (public for a host that simulates either, bench/pathprof/hpt_sim.c). */
#define HWP__PATH_PHI 0x9E3779B97F4A7C15ull
HWP_INLINE uint32_t hwp_path_index(uint64_t key, uint32_t mask) {
    return (uint32_t)((key * HWP__PATH_PHI) >> 32) & mask;
}
#define hwp__path_index hwp_path_index /* the model's spelling */

/* ---- Hot Path Table (section 5, Figure 7) ------------------------------ */

enum hwp_hpt_index {
    HWP_HPT_PLB = 0, /* start xor length xor direction bits (default)  */
    HWP_HPT_PB,      /* start xor direction bits                       */
    HWP_HPT_P        /* start address bits only                        */
};

enum hwp_hpt_repl {
    HWP_HPT_LFU = 0, /* least frequently used: smallest accumulator    */
    HWP_HPT_LRU      /* least recently used, for comparison            */
};

/* What decides the LFU victim. PLAIN is the paper's (section 5): the
 * accumulator itself. AGING and DECAY are hwprof's, both on a
 * replacement priority beside the exact accumulator that a hit grows
 * like the accumulator (docs/pathprof.md, "Aging"). AGING is LFU with
 * dynamic aging (LFUDA): a newcomer's priority starts at the last
 * victim's (one register for the table), so paths that were hot early
 * and then stop are overtaken by the rising floor. DECAY is Misra and
 * Gries' frequent-items counting per set: a miss in a full set lowers
 * every way's priority by the newcomer's value, and the newcomer takes
 * the first way that reaches zero or is left out, so passing paths wear
 * old paths down without evicting the ones that keep being hit. */
enum hwp_hpt_policy {
    HWP_HPT_PLAIN = 0,
    HWP_HPT_AGING,
    HWP_HPT_DECAY
};

typedef struct hwp_hpt_desc {
    uint32_t entries; /* total entries, power of two; 0 -> 512           */
    uint32_t ways;    /* associativity, power of two <= entries; 0 -> 4  */
    uint32_t index;   /* enum hwp_hpt_index; 0 = plb                     */
    uint32_t repl;    /* enum hwp_hpt_repl; 0 = LFU                      */
    uint32_t policy;  /* enum hwp_hpt_policy; 0 = plain (the paper's)    */
} hwp_hpt_desc;

typedef struct hwp_hpt_entry {
    hwp_path_pd pd;  /* shape == 0: empty                                */
    uint32_t acc;    /* 32-bit saturating accumulator                    */
    uint32_t stamp;  /* last use (LRU) or replacement priority (AGING,
                        DECAY)                                           */
} hwp_hpt_entry;

HWP_STATIC_ASSERT(hpt_entry_is_24_bytes, sizeof(hwp_hpt_entry) == 24);

/* The HPT's public counters: events = paths added, dropped = adds whose
 * value the saturated accumulator could not hold, evicted = valid
 * entries replaced (merges included) and newcomers DECAY left out,
 * cycles = aging passes' stalls. */
typedef struct hwp_hpt_stats {
    uint64_t events, dropped, evicted, cycles;
    uint64_t hits, misses;
    uint64_t evicted_value; /* accumulated value the evictions lost     */
    uint64_t total;         /* sum of every value added                 */
    uint64_t agings;        /* aging passes (policy AGING)              */
} hwp_hpt_stats;

/* All members are private (exposed only for static allocation). */
typedef struct hwp_hpt {
    hwp_head head;
    hwp_hpt_desc desc; /* with defaults filled in                       */
    hwp_hpt_entry *e;  /* sets * ways entries in the host's storage      */
    hwp_cost *cost;
    uint64_t kmask;    /* shape bits the index sees: all (plb), none (p)  */
    uint32_t set_mask, way_shift;
    uint32_t set_bytes;/* ways * sizeof(hwp_hpt_entry)                    */
    uint32_t clock;    /* LRU time                                       */
    uint32_t lru;      /* 1 when the replacement policy is LRU           */
    uint32_t dflt;     /* 1 for plb, 4 ways, LFU, plain: the paper's
                          default, which hwp_hpt_add handles on its short
                          path                                           */
    uint32_t aging;    /* 1 for policy AGING or DECAY: hits grow stamp   */
    uint32_t decay;    /* 1 for policy DECAY                             */
    uint32_t age4;     /* 1 for plb, 4 ways, LFU, aging: hwp_hpt_add's
                          second short path                              */
    uint32_t floor;    /* AGING: the last victim's priority              */
    uint64_t off_mask; /* dflt: set_mask << 5, see hwp_hpt_add          */
    uint64_t hits, misses;  /* paths added = hits + misses              */
    uint64_t evictions;     /* valid entries replaced                    */
    uint64_t evicted_value; /* their accumulated values, lost            */
    uint64_t saturations;   /* adds that hit the accumulator's ceiling   */
    uint64_t total;         /* sum of every value added                  */
    uint64_t agings, age_cycles;
} hwp_hpt;

#define HWP_HPT_BYTES(entries) \
    ((size_t)(entries) * sizeof(hwp_hpt_entry) + (HWP__ALIGN - 1u))

/* The contract's calls (cost.h, HWP__CONTRACT); what hwp_hpt's do:
 *   merge: folds src's entries into dst set by set: each set keeps the `ways`
 *     hottest of the union (same path: accumulators added; hottest by the
 *     accumulator, or by the aging priority under AGING), as a table that had
 *     seen both streams keeps its hot paths. Equal to the whole stream when no
 *     set overflows; otherwise it keeps every path whose merged count is among
 *     its set's `ways` largest (the whole stream's LFU may have evicted some
 *     of them). Charges no cycles. Same desc required. */
HWP__CONTRACT(hpt);
/* Nothing is buffered: the table is always up to date. */
HWP_API hwp_status hwp_hpt_flush(hwp_hpt *h);
/* The accumulator for pd, 0 when it is not in the table. */
HWP_API uint32_t hwp_hpt_lookup(const hwp_hpt *h, const hwp_path_pd *pd);
/* The valid entries, hottest first (count descending, ties by start,
 * then shape): returns how many the table holds and writes the hottest
 * min(that, cap) to rows (rows may be NULL when cap is 0). */
HWP_API size_t hwp_hpt_export(const hwp_hpt *h, hwp_path_row *rows,
                              size_t cap);
HWP_API int hwp__hpt_miss(hwp_hpt *h, hwp_hpt_entry *set,
                          const hwp_path_pd *pd, uint32_t value);
HWP_API void hwp__hpt_restamp(hwp_hpt *h);
HWP_API void hwp__hpt_age(hwp_hpt *h);

/* The key the index function sees: plb hashes start ^ shape (the shape
 * carries both the length, as the sentinel's position, and the
 * directions), pb drops the sentinel, p keeps the start only. */
HWP_INLINE uint64_t hwp__hpt_key(const hwp_hpt *h, const hwp_path_pd *pd) {
    uint64_t k = pd->start ^ (pd->shape & h->kmask);
    if (HWP_UNLIKELY(h->desc.index == HWP_HPT_PB)) k ^= (uint64_t)1 << hwp_path_pd_len(pd);
    return k;
}

/* The set pd maps to. */
HWP_INLINE hwp_hpt_entry *hwp__hpt_set(const hwp_hpt *h, const hwp_path_pd *pd) {
    uint64_t k = HWP_LIKELY(h->desc.index == HWP_HPT_PLB) ? pd->start ^ pd->shape
                                                          : hwp__hpt_key(h, pd);
    return (hwp_hpt_entry *)((unsigned char *)h->e +
                             (size_t)hwp__path_index(k, h->set_mask) * h->set_bytes);
}

/* The way of a 4-way set that holds pd, or NULL: unrolled, so a way
 * that does not match costs one compare. */
HWP__PATH_HOT hwp_hpt_entry *hwp__hpt_find4(hwp_hpt_entry *set,
                                            uint64_t start, uint64_t shape) {
    if (set[0].pd.shape == shape && set[0].pd.start == start) return set;
    if (set[1].pd.shape == shape && set[1].pd.start == start) return set + 1;
    if (set[2].pd.shape == shape && set[2].pd.start == start) return set + 2;
    if (set[3].pd.shape == shape && set[3].pd.start == start) return set + 3;
    return NULL;
}

/* The way of `set` that holds pd, or NULL. */
HWP_INLINE hwp_hpt_entry *hwp__hpt_find(const hwp_hpt *h, hwp_hpt_entry *set,
                                        const hwp_path_pd *pd) {
    uint32_t w, ways = 1u << h->way_shift;
    if (ways == 4) return hwp__hpt_find4(set, pd->start, pd->shape);
    for (w = 0; w < ways; w++)
        if (hwp_path_pd_eq(&set[w].pd, pd)) return set + w;
    return NULL;
}

/* A hit: `value` goes into the way's 32-bit saturating accumulator. */
HWP_INLINE void hwp__hpt_hit(hwp_hpt *h, hwp_hpt_entry *e, uint32_t value) {
    uint32_t a = e->acc + value;
    if (HWP_UNLIKELY(a < value)) { /* 32-bit accumulator saturates */
        a = 0xFFFFFFFFu;
        h->saturations++;
    }
    e->acc = a;
    h->hits++;
}

/* hwp_hpt_add for a table with h->dflt set (plb, 4 ways, LFU), or with
 * h->age4 (the same under policy aging: `age` is 1, a constant at every
 * call site, and a hit also grows the replacement priority and counts
 * down to the next aging pass). */
HWP__PATH_HOT int hwp__hpt_add_dflt(hwp_hpt *h, const hwp_path_pd *pd,
                                    uint32_t value, const int age) {
    uint64_t start = pd->start, shape = pd->shape;
    /* the set hwp__hpt_set picks, in bytes: index * 4 ways * 24 bytes =
     * (index << 5) * 3, and index << 5 is the hash shifted 5 bits less */
    uint64_t off = ((start ^ shape) * HWP__PATH_PHI) >> 27 & h->off_mask;
    hwp_hpt_entry *set = (hwp_hpt_entry *)((unsigned char *)h->e + off * 3);
    hwp_hpt_entry *e;
    h->total += value;
    e = hwp__hpt_find4(set, start, shape);
    if (HWP_UNLIKELY(!e)) return hwp__hpt_miss(h, set, pd, value);
    hwp__hpt_hit(h, e, value);
    if (age) e->stamp = hwp_sat_add(e->stamp, value, 0xFFFFFFFFu);
    return 1;
}

/* One completed path: add `value` to its accumulator, or replace a victim
 * in its set. Returns 1 on a hit, 0 on a miss (the latency model needs
 * to know). */
HWP__PATH_HOT int hwp_hpt_add(hwp_hpt *h, const hwp_path_pd *pd, uint32_t value) {
    hwp_hpt_entry *set, *e;
    /* plb, 4 ways, LFU: one test for all three */
    if (HWP_LIKELY(h->dflt)) return hwp__hpt_add_dflt(h, pd, value, 0);
    if (h->age4) return hwp__hpt_add_dflt(h, pd, value, 1);
    h->total += value;
    set = hwp__hpt_set(h, pd);
    e = hwp__hpt_find(h, set, pd);
    if (!e) return hwp__hpt_miss(h, set, pd, value);
    hwp__hpt_hit(h, e, value);
    if (h->lru) {
        e->stamp = ++h->clock;
        if (HWP_UNLIKELY(h->clock == 0xFFFFFFFFu)) hwp__hpt_restamp(h);
    } else if (h->aging) {
        e->stamp = hwp_sat_add(e->stamp, value, 0xFFFFFFFFu);
    }
    return 1;
}

/* ---- phase detection (section 6, Figure 9) ----------------------------- */

typedef struct hwp_phase_interval {
    uint64_t index;    /* interval number, from 0                        */
    uint64_t distance; /* Manhattan distance to the previous interval,
                          in instructions (0 for the first)              */
    uint32_t phase;    /* phase id, from 0                               */
    uint32_t changed;  /* 1 when the phase differs from the previous     */
} hwp_phase_interval;

/* What the detector's accumulators are indexed by. The structure is the
 * same (section 6 builds the path detector on Sherwood et al.'s); the
 * kind says which hot path the host feeds (hwp_phase_add_path or
 * hwp_phase_add_branch) and is written in the report. */
enum hwp_phase_kind {
    HWP_PHASE_PATH = 0, /* path descriptors, instructions along the path */
    HWP_PHASE_BBV       /* branch addresses, instructions since the last
                           branch: Sherwood, Sair & Calder's tracker     */
};

typedef struct hwp_phase_desc {
    uint32_t kind;     /* enum hwp_phase_kind; 0 = path                  */
    uint32_t counters; /* accumulators, power of two 1..1024; 0 -> 32    */
    uint32_t sig_bits; /* high-order bits kept per accumulator 1..8; 0->6 */
    uint32_t table;    /* past phase signatures 1..1024; 0 -> 32         */
    uint64_t interval; /* instructions per interval, 1..2^31; 0 -> 10M   */
    uint64_t threshold;/* Manhattan distance in instructions below which
                          two signatures are one phase, 1..2 x interval;
                          0 -> 6/10 of the interval (the paper's optimum:
                          6M of 10M)                                     */
    void (*on_interval)(void *ctx, const hwp_phase_interval *r);
    void *ctx;
} hwp_phase_desc;

/* events = paths or branches fed, dropped = 0 (nothing is lost: the
 * accumulators saturate at 32 bits, far above an interval), evicted =
 * past-phase signatures replaced in the full table, cycles = 0 (off the
 * commit path). */
typedef struct hwp_phase_stats {
    uint64_t events, dropped, evicted, cycles;
    uint64_t insns;     /* instructions fed                              */
    uint64_t intervals; /* intervals closed                              */
    uint64_t phases;    /* phase ids handed out                          */
    uint64_t changes;   /* intervals whose phase differs from the last   */
    uint64_t phase;     /* the last interval's phase                     */
    uint64_t distance;  /* its distance to the interval before           */
} hwp_phase_stats;

/* All members are private (exposed only for static allocation). */
typedef struct hwp_phase {
    hwp_head head;
    hwp_phase_desc desc; /* with defaults filled in                     */
    uint32_t *acc;       /* counters accumulators                        */
    uint8_t *prev, *cur; /* previous and current signatures             */
    uint8_t *tab_sig;    /* table * counters past signatures             */
    uint32_t *tab_id, *tab_stamp;
    uint32_t mask, shift, sig_max, used; /* used: valid table entries    */
    uint32_t next_id, clock;
    uint64_t fill;       /* instructions in the open interval            */
    uint64_t intervals, changes, adds, insns, replaced;
    hwp_phase_interval last;
} hwp_phase;

#define HWP__PHASE_R16(n) (((size_t)(n) + 15u) / 16u * 16u)
#define HWP_PHASE_BYTES(counters, table)                                    \
    (HWP__PHASE_R16((size_t)(counters) * 4u) +                              \
     HWP__PHASE_R16(counters) * 2u +                                        \
     HWP__PHASE_R16((size_t)(counters) * (table)) +                         \
     HWP__PHASE_R16((size_t)(table) * 4u) * 2u + (HWP__ALIGN - 1u))

/* The contract's calls (cost.h, HWP__CONTRACT); what hwp_phase's do:
 *   merge: adds src's counters into dst (events, instructions, intervals,
 *     changes; phase ids are local to each detector, so phases adds too: an
 *     upper bound on the distinct phases of both). The signatures are not
 *     merged: a detector is a per-stream tracker. */
HWP__CONTRACT(phase);
/* The open (partial) interval stays open: a signature of fewer
 * instructions than the interval is not comparable with the others
 * (the threshold is in instructions of a whole interval). */
HWP_API hwp_status hwp_phase_flush(hwp_phase *ph);
/* The detector's storage in hardware, in bytes (0 for an invalid desc):
 * the accumulators (wide enough to count a whole interval), the previous
 * interval's signature and the past-signature table with a phase id per
 * entry, at sig_bits per counter. */
HWP_API size_t hwp_phase_hw_bytes(const hwp_phase_desc *d);
/* The BBV baseline the paper compares with (Sherwood et al.'s phase
 * tracker: branch addresses hashed into the accumulators, 6-bit
 * signatures, a table of past signatures) at the hardware budget of the
 * detector `like`: the same accumulators, signature width, table and
 * threshold, so hwp_phase_hw_bytes is equal. */
HWP_API hwp_status hwp_phase_bbv_desc(const hwp_phase_desc *like,
                                      hwp_phase_desc *out);
HWP_API void hwp__phase_close(hwp_phase *ph);

HWP__PATH_HOT void hwp__phase_add(hwp_phase *ph, uint64_t key, uint32_t insns) {
    uint32_t *a = ph->acc + hwp__path_index(key, ph->mask);
    *a = hwp_sat_add(*a, insns, 0xFFFFFFFFu);
    ph->adds++;
    ph->fill += insns;
    if (HWP_UNLIKELY(ph->fill >= ph->desc.interval)) hwp__phase_close(ph);
}

/* Path-based detector: the accumulator indexed by a hash of the path
 * descriptor grows by the instructions along the path (section 6). */
HWP__PATH_HOT void hwp_phase_add_path(hwp_phase *ph, const hwp_path_pd *pd,
                                   uint32_t insns) {
    hwp__phase_add(ph, pd->start ^ hwp_mix64(pd->shape), insns);
}

/* BBV detector (Sherwood, Sair & Calder, ISCA 2003, as section 6
 * describes it): the accumulator indexed by a hash of the branch's
 * address grows by the instructions since the previous branch. */
HWP_INLINE void hwp_phase_add_branch(hwp_phase *ph, uint64_t pc,
                                     uint32_t insns) {
    hwp__phase_add(ph, pc, insns);
}

/* ---- path stack (section 3) -------------------------------------------- */

/* Branch types the profiler decodes (section 3). A conditional branch or
 * direct jump is backward when it is taken to an address at or below its
 * own; a not-taken backward branch leaves the loop and counts as forward,
 * so the last iteration and the code after the loop form one path. */
enum hwp_path_bt {
    HWP_PATH_BT_CALL = 0,
    HWP_PATH_BT_RETURN,
    HWP_PATH_BT_FORWARD,
    HWP_PATH_BT_BACKWARD,
    HWP_PATH_BT_INDIRECT,
    HWP_PATH_BT_COUNT
};

/* Operations, combined in the PPCR per branch type. The hardware always
 * performs them in this order: update or update-count, pop, push. */
enum {
    HWP_PATH_OP_UPDATE = 1,   /* record the branch, count its events     */
    HWP_PATH_OP_UPDCOUNT = 2, /* count its events only                   */
    HWP_PATH_OP_POP = 4,      /* the top path is complete                */
    HWP_PATH_OP_PUSH = 8      /* a new path starts at the next pc        */
};

enum hwp_path_mode {
    HWP_PATH_BL = 0,     /* Table 1: acyclic intra-procedural paths       */
    HWP_PATH_WPP,        /* Table 2: sub-paths of a Whole Program Path    */
    HWP_PATH_EXT_LOOP,   /* Table 1, paths span ext_max back-edges        */
    HWP_PATH_EXT_CALL,   /* Table 2, paths span ext_max calls (and their
                            returns)                                      */
    HWP_PATH_CUSTOM      /* the ops[] table as given                      */
};

enum hwp_path_metric {
    HWP_PATH_M_PATHS = 0, /* execution counts: every path counts 1        */
    HWP_PATH_M_BRANCHES,  /* branches (updates and update-counts)         */
    HWP_PATH_M_INSNS,     /* instructions, the block event count = insns  */
    HWP_PATH_M_EVENTS     /* host-reported events (misses, energy, ...)   */
};

enum hwp_path_overflow {
    HWP_PATH_DROP = 0, /* drop the bottom entry; its path is ignored     */
    HWP_PATH_SPILL     /* spill the bottom entry to host memory          */
};

#define HWP_PATH_QUEUE_NONE 0xFFFFFFFFu /* no branch queue at all       */
#define HWP_PATH_QUEUE_MAX 1024u

/* One path-stack entry: what the hardware keeps per active path. The
 * event counter saturates at counter_bits (section 4); a saturating
 * counter fed non-negative increments ends where min(sum, max) does, so
 * the model keeps the sum in 64 bits (a plain add per branch) and clamps
 * it when the path is popped. */
typedef struct hwp_path_entry {
    hwp_path_pd pd;
    uint64_t count;     /* event counter sum; read it clamped             */
    uint64_t insns;     /* instructions along the path                    */
    uint32_t ext;       /* extension counter (3 bits used)                */
    uint32_t incomplete;/* its start was lost to an overflow: ignore it   */
} hwp_path_entry;

HWP_STATIC_ASSERT(path_entry_is_40_bytes, sizeof(hwp_path_entry) == 40);

typedef struct hwp_path_desc {
    uint32_t mode;         /* enum hwp_path_mode; 0 = BL (Table 1)        */
    uint8_t ops[HWP_PATH_BT_COUNT]; /* PPCR, used when mode is CUSTOM     */
    uint8_t ext_loops;     /* CUSTOM: extend across back-edges            */
    uint8_t ext_calls;     /* CUSTOM: extend across calls (needs calls
                              that pop, as in Table 2)                    */
    uint8_t pad;
    uint32_t ext_max;      /* boundaries a path may span, 1..7; 0 -> 1 when paths extend (0 otherwise) */
    uint32_t max_len;      /* branches per path 1..63; 0 -> 32            */
    uint32_t depth;        /* path-stack entries 1..65536; 0 -> 32        */
    uint32_t counter_bits; /* event counter width 1..32; 0 -> 8           */
    uint32_t metric;       /* enum hwp_path_metric; 0 = execution counts  */
    uint32_t event_mask;   /* HWP_EV_* bits hwp_path_insn counts as events;
                              0 -> HWP_EV_DCMISS                          */
    uint32_t overflow;     /* enum hwp_path_overflow; 0 = drop            */
    uint32_t queue;        /* branch-queue entries 1..1024; 0 -> 4;
                              HWP_PATH_QUEUE_NONE for none                */
    uint32_t cycles_per_insn_q8; /* host commit time per instruction in
                              1/256 cycles, for the queue model; 0 -> 256 */
    /* Path sink: every completed path (after the HPT and phase detector
     * saw it). Spill/fill: the SPILL policy's host memory; fill returns
     * false when it has nothing (the entry is then incomplete). */
    void (*on_path)(void *ctx, const hwp_path_rec *r);
    void (*spill)(void *ctx, const hwp_path_entry *e);
    bool (*fill)(void *ctx, hwp_path_entry *e);
    void *ctx;
} hwp_path_desc;

typedef struct hwp_path {
    hwp_head head;
    hwp_path_desc desc;   /* with defaults filled in                     */
    hwp_path_entry *stack;/* depth entries, a ring: the bottom can drop  */
    uint64_t *fin;        /* finish times of the last queue+1 branches   */
    hwp_hpt *hpt;
    hwp_phase *phase;
    hwp_cost *cost;
    hwp_path_entry *tp;   /* the top entry (a slot of the ring)          */
    hwp_path_entry *end;  /* stack + depth: where the ring wraps         */
    uint8_t opx[16];      /* HWP_CLS_* x 2 + taken-backward -> the PPCR
                             ops, | HWP__PATH_BR, | HWP__PATH_EXT where
                             the extension counter decides, | HWP__PATH_FAST
                             on a plain update the short path handles   */
    uint8_t ext_max;      /* extension counter limit; 0 = off           */
    uint8_t sinks;        /* HWP__PATH_SINK_PHASE | HWP__PATH_SINK_CB    */
    uint8_t plain;        /* the HPT is dflt (plb, 4 ways, LFU): 2 when
                             it is the only sink, 3 beside other sinks;
                             4 for its aging twin alone; 0 otherwise     */
    uint8_t qfast;        /* HWP__PATH_Q when a cost is attached: the
                             short paths then run the queue model too   */
    uint8_t pad[2];
    uint16_t fastm;       /* opx entries that carry HWP__PATH_FAST while
                             the stack is not empty (hwp__path_arm)      */
    uint32_t n, depth;    /* live entries, ring size                     */
    uint32_t lost;        /* dropped entries not yet met by an underflow */
    uint32_t cnt_max;     /* event counter ceiling                       */
    uint32_t one;         /* 1 when the metric is execution counts       */
    uint32_t w_br, w_ins, w_ev; /* metric = w_br + w_ins*insns + w_ev*ev */
    uint32_t pend_insns, pend_events; /* hwp_path_insn: since last branch*/
    uint32_t qslots;      /* ring entries: queue + 1                     */
    uint64_t *qp;         /* the ring slot of the branch q+1 places back */
    uint64_t *qend;       /* fin + qslots                                */
    uint64_t lat[16];     /* service time per operation set, in 1/256
                             cycles (the queue's unit)                   */
    uint64_t lat_hit, lat_miss; /* HPT update on a hit / a miss, same unit */
    uint64_t full_bit;    /* shape >= full_bit: the path is at max_len   */
    uint64_t clk;         /* commit time, 1/256 cycles, stalls included  */
    uint64_t busy;        /* when the profiler finishes its last branch  */
    uint64_t stall_q8, charged; /* stall time and cycles charged so far;
                             clk - stall_q8 is the host's own time       */
    uint64_t expect;      /* where the next branch's block starts: the
                             last branch's next_pc (0: not known)        */
    /* statistics */
    uint64_t branches, paths, ignored, splits;
    uint64_t overflows, underflows, cold_starts, spills, fills;
    uint64_t unwound, max_n, unchained;
} hwp_path;

/* The path stack's public counters. events = branches decoded; dropped =
 * completed paths ignored because their start was lost (an overflow
 * under DROP, a branch whose block did not chain, or an unwind past the
 * stack's contents); evicted = entries pushed off the bottom of a full
 * stack (overflows: a path deeper than the stack); cycles = commit stall
 * cycles charged by the branch-queue model. */
typedef struct hwp_path_stats {
    uint64_t events, dropped, evicted, cycles;
    uint64_t paths;          /* completed paths handed to the consumers   */
    uint64_t splits;         /* paths cut at max_len                      */
    uint64_t underflows;     /* branches that met an empty stack after an
                                overflow (a dropped or spilled frame)     */
    uint64_t cold_starts;    /* ... with no frame lost: a start mid-run   */
    uint64_t spills, fills;  /* SPILL policy traffic                      */
    uint64_t unwound;        /* entries popped by hwp_path_unwind         */
    uint64_t max_depth_used; /* the deepest the stack has been            */
    uint64_t unchained;      /* branches at an address below the previous
                                branch's next_pc: a lost record; the open
                                path is marked incomplete (dropped)       */
    uint64_t host_cycles;    /* the host's modelled time, stalls excluded */
} hwp_path_stats;

#define HWP_PATH_BYTES(depth, queue)                                        \
    (((size_t)(depth) * sizeof(hwp_path_entry) +                            \
      ((size_t)(queue) + 1u) * 8u + 15u) / 16u * 16u + (HWP__ALIGN - 1u))

/* A basic block as the host's block map describes it, for decoding a
 * path back to its blocks (hwp_path_decode). */
typedef struct hwp_path_block {
    uint64_t branch_pc;   /* the branch that ends the block              */
    uint64_t target;      /* its direct target; 0 if indirect or a return */
    uint64_t fallthrough; /* the address after the branch                 */
    uint32_t cls;         /* the branch's HWP_CLS_* class                 */
    uint32_t pad;
} hwp_path_block;

/* The host's block map: fill *b for the block starting at `start`;
 * false when no block starts there. */
typedef bool (*hwp_path_block_fn)(void *ctx, uint64_t start, hwp_path_block *b);

/* The contract's calls (cost.h, HWP__CONTRACT); what hwp_path's do:
 *   merge: adds src's counters into dst (the stack's profile is its counters;
 *     its paths went to the HPT, merged with hwp_hpt_merge). The stacks'
 *     contents are not merged: a stream cut in two leaves the first half's
 *     open paths in the first stack (emitted by its flush) and starts the
 *     second half on an empty stack (cold starts), so merged counts differ
 *     from the whole stream's by at most the depth of the cut. */
HWP__CONTRACT(path);
HWP_API hwp_status hwp_path_attach(hwp_path *p, hwp_hpt *hpt,
                                   hwp_phase *phase);
HWP_API hwp_status hwp_path_begin(hwp_path *p, uint64_t pc);
HWP_API hwp_status hwp_path_unwind(hwp_path *p, uint32_t n, bool emit);
/* The entries on chip, each an open path (0 for an invalid handle): what
 * a sampled host unwinds when it stops watching (a burst's end). */
HWP_API uint32_t hwp_path_depth(const hwp_path *p);
HWP_API hwp_status hwp_path_flush(hwp_path *p);
HWP_API double hwp_path_overhead_pct(const hwp_path *p);
/* The blocks path pd covers, decoded with the stack's PPCR (its desc)
 * and the host's block map: returns how many there are and writes the
 * first min(that, cap) block start addresses to out (out may be NULL
 * when cap is 0); 0 when the map and the descriptor disagree (an
 * unknown block, an indirect target inside the path, direction bits
 * left over). The list ends with the block whose branch ended the path
 * (a pop, or the split at max_len); a path emitted by flush or unwind
 * ends with its last recorded branch, also when the block after it ends
 * without a branch or is not in the map (the program's last block). */
HWP_API size_t hwp_path_decode(const hwp_path *p, const hwp_path_pd *pd,
                               hwp_path_block_fn map, void *ctx,
                               uint64_t *out, size_t cap);
HWP_API void hwp__path_unchained(hwp_path *p);
HWP_API void hwp__path_overflow(hwp_path *p);
HWP_API void hwp__path_underflow(hwp_path *p, uint64_t pc);
HWP_API uint64_t hwp__path_stall(hwp_path *p, uint64_t t, uint64_t e);
HWP_API uint64_t hwp__path_split(hwp_path *p, hwp_path_entry *t,
                                 uint64_t next_pc);
HWP_API void hwp__path_arm(hwp_path *p);
HWP_API void hwp__path_deeper(hwp_path *p);
HWP_API void hwp__path_step(hwp_path *p, uint64_t pc, uint64_t next_pc,
                            uint32_t x, bool taken, uint32_t insns,
                            uint32_t events);
HWP_API void hwp__path_insn_branch(hwp_path *p, const hwp_insn *in);

#define HWP__PATH_BR 0x10u  /* opx: a branch the profiler decodes         */
#define HWP__PATH_EXT 0x20u /* opx: a boundary an extended path may cross */
/* opx: a branch hwp_path_branch finishes on a short path: the stack is
 * not empty, the instance counts executions, the extension counter plays
 * no part, and the operations are one of Table 1's rows
 * (hwp__path_fast_ops); HWP__PATH_FWD is a forward branch. HWP__PATH_Q
 * rides along when a cost is attached: that short path also times the
 * branch in the queue model (hwp__path_qadd). */
#define HWP__PATH_FAST 0x40u
#define HWP__PATH_Q 0x80u
/* sinks: what hwp__path_emit_v feeds besides the HPT */
#define HWP__PATH_SINK_PHASE 1u /* the phase detector (hwp_path_attach) */
#define HWP__PATH_SINK_CB 2u    /* desc.on_path                         */
#define HWP__PATH_FWD (HWP__PATH_FAST | HWP__PATH_BR | HWP_PATH_OP_UPDATE)

/* metrics */
/* Overlap percentage (Arnold & Ryder, PLDI 2001; section 8): the sum over
 * paths of the smaller of the two shares of total flow, times 100. Each
 * profile's total is the sum of its rows. Sorts both arrays by
 * descriptor in place; duplicate descriptors within one array are summed.
 * Returns 0 when either profile is empty. */
HWP_API double hwp_path_overlap(hwp_path_row *a, size_t na, hwp_path_row *b,
                                size_t nb);

typedef struct hwp_phase_scores {
    double sensitivity;   /* % of reference changes the detector flagged */
    double false_pos;     /* % of flagged changes that are not reference */
    double same_phase;    /* % of reference non-changes left unflagged   */
    double stability;     /* % of intervals in runs of >= min_run
                             intervals without a flagged change          */
    double avg_phase_len; /* intervals per detected run                  */
    uint64_t ref_changes, det_changes, hits;
} hwp_phase_scores;

/* Scores a detector's phase ids det[0..n) against reference ids ref[]
 * (a change at i > 0 is id[i] != id[i-1]); min_run 0 means 2. */
HWP_API hwp_status hwp_phase_score(const uint32_t *ref, const uint32_t *det,
                                   size_t n, uint32_t min_run,
                                   hwp_phase_scores *out);

/* A completed path goes to every consumer; returns the HPT update's
 * latency for the queue model. Incomplete paths are ignored (section 3,
 * the drop overflow policy). With execution counts every path is worth
 * 1; otherwise the event counter, clamped to its width (section 4).
 * `more` instructions belong to the path beyond e->insns (the closing
 * block, which the short paths do not store into an entry that dies). */
HWP__PATH_HOT uint64_t hwp__path_emit_v(hwp_path *p, const hwp_path_entry *e,
                                        uint32_t value, uint32_t more) {
    uint64_t lat = 0;
    if (HWP_UNLIKELY(e->incomplete)) {
        p->ignored++;
        return 0;
    }
    p->paths++;
    if (HWP_LIKELY(p->plain == 2)) /* the default HPT alone: one test */
        return hwp__hpt_add_dflt(p->hpt, &e->pd, value, 0) ? p->lat_hit : p->lat_miss;
    if (p->plain == 4) /* the default HPT under aging, alone */
        return hwp__hpt_add_dflt(p->hpt, &e->pd, value, 1) ? p->lat_hit : p->lat_miss;
    if (p->plain == 3)
        lat = hwp__hpt_add_dflt(p->hpt, &e->pd, value, 0) ? p->lat_hit : p->lat_miss;
    else if (p->hpt)
        lat = hwp_hpt_add(p->hpt, &e->pd, value) ? p->lat_hit : p->lat_miss;
    if (HWP_UNLIKELY(p->sinks)) {
        uint64_t all = e->insns + more;
        uint32_t insns = all < 0xFFFFFFFFu ? (uint32_t)all : 0xFFFFFFFFu;
        if (p->sinks & HWP__PATH_SINK_PHASE) hwp_phase_add_path(p->phase, &e->pd, insns);
        if (p->sinks & HWP__PATH_SINK_CB) {
            hwp_path_rec r;
            r.pd = e->pd;
            r.value = value;
            r.insns = insns;
            p->desc.on_path(p->desc.ctx, &r);
        }
    }
    return lat;
}

HWP__PATH_HOT uint64_t hwp__path_emit(hwp_path *p, const hwp_path_entry *e) {
    return hwp__path_emit_v(
        p, e, p->one ? 1u : e->count < p->cnt_max ? (uint32_t)e->count : p->cnt_max, 0);
}

/* A new path at pc. The event counter is left alone: the short paths
 * run only for execution counts, where it stays 0 (hwp__path_fresh). */
HWP_INLINE void hwp__path_restart(hwp_path_entry *e, uint64_t pc) {
    e->pd.start = pc;
    e->pd.shape = 1;
    e->insns = 0;
    e->ext = e->incomplete = 0;
}

HWP_INLINE void hwp__path_fresh(hwp_path_entry *e, uint64_t pc) {
    hwp__path_restart(e, pc);
    e->count = 0;
}

/* The extension counter (section 3, "Detecting extended paths"): at a
 * boundary the path may still cross, only update is performed. `x` is
 * the opx index: class * 2 + taken-backward. */
HWP_INLINE uint32_t hwp__path_extend(const hwp_path *p, hwp_path_entry *t,
                                     uint32_t x, uint32_t ops) {
    if (x >> 1 == HWP_CLS_RET) {
        if (t->ext) { /* back out of a call the path entered */
            t->ext--;
            return HWP_PATH_OP_UPDATE;
        }
    } else if (t->ext < p->ext_max) { /* a back-edge or a call */
        t->ext++;
        return HWP_PATH_OP_UPDATE;
    }
    return ops;
}

/* The branch queue of section 8.2 for one branch that the profiler
 * serves in `serve`: the branch commits at T = clk + its instructions'
 * host time, enters the queue at E = max(T, F') once the branch q+1
 * places ahead (F', its finish time, in the ring slot qp) has left the
 * profiler (q queue entries plus the one in service), starts at
 * max(E, F_prev) and finishes `serve` later. E - T is a commit stall
 * that delays every later commit (hwp__path_stall, out of line: the
 * common case is no stall). Times are in 1/256 cycles. */
HWP__PATH_HOT void hwp__path_qadd(hwp_path *p, uint32_t insns, uint64_t serve) {
    uint64_t t = p->clk + (uint64_t)insns * p->desc.cycles_per_insn_q8;
    uint64_t *f = p->qp, b = p->busy;
    if (HWP_UNLIKELY(*f > t)) t = hwp__path_stall(p, t, *f);
    p->clk = t;
    b = (b > t ? b : t) + serve;
    p->busy = b;
    *f = b;
    p->qp = f + 1 == p->qend ? p->fin : f + 1;
}

/* The short paths: what hwp__path_step does for the four Table 1 rows,
 * without the work the instance never needs (every path is worth 1, no
 * extension counter; see HWP__PATH_FAST). `q` is 0 or HWP__PATH_Q, a
 * constant at both call sites: with HWP__PATH_Q the branch's service
 * time (the same sum of operation and HPT latencies hwp__path_step
 * computes) goes through the queue model. Returns 0 when ops is not a
 * short-path row. */
HWP__PATH_HOT int hwp__path_short(hwp_path *p, uint64_t next_pc, uint32_t ops,
                                  bool taken, uint32_t insns, const uint32_t q) {
    hwp_path_entry *t = p->tp;
    uint64_t lat;
    if (HWP_LIKELY(ops == (HWP__PATH_FWD | q))) {
        /* a forward branch: shift its direction in */
        uint64_t shape = t->pd.shape << 1 | (uint64_t)taken;
        p->branches++;
        t->insns += insns;
        t->pd.shape = shape;
        lat = p->lat[HWP_PATH_OP_UPDATE];
        if (HWP_UNLIKELY(shape >= p->full_bit)) lat += hwp__path_split(p, t, next_pc);
    } else if (ops == (HWP__PATH_FWD | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH | q)) {
        /* a back-edge or indirect jump: the path ends, the next starts at
         * the target in the same slot */
        p->branches++;
        t->pd.shape = t->pd.shape << 1 | (uint64_t)taken;
        lat = p->lat[HWP_PATH_OP_UPDATE | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH] +
              hwp__path_emit_v(p, t, 1, insns);
        hwp__path_restart(t, next_pc);
    } else if (ops == (HWP__PATH_FAST | HWP__PATH_BR | HWP_PATH_OP_UPDCOUNT |
                       HWP_PATH_OP_POP | q)) {
        /* a return (Table 1): the callee's path ends */
        p->branches++;
        lat = p->lat[HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_POP] +
              hwp__path_emit_v(p, t, 1, insns);
        p->tp = t == p->stack ? p->end - 1 : t - 1;
        if (HWP_UNLIKELY(--p->n == 0)) hwp__path_arm(p);
    } else if (ops == (HWP__PATH_FAST | HWP__PATH_BR | HWP_PATH_OP_UPDCOUNT |
                       HWP_PATH_OP_PUSH | q)) {
        /* a call (Table 1): the caller's path waits below the callee's */
        p->branches++;
        t->insns += insns;
        if (HWP_UNLIKELY(p->n >= p->max_n)) hwp__path_deeper(p);
        p->n++;
        t = t + 1 == p->end ? p->stack : t + 1;
        p->tp = t;
        hwp__path_restart(t, next_pc);
        lat = p->lat[HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_PUSH];
    } else {
        return 0;
    }
    if (q) hwp__path_qadd(p, insns, lat);
    return 1;
}

/* One retired branch. cls is an HWP_CLS_* class (OTHER, LOAD and STORE
 * are ignored); next_pc is the address executed next (the target when
 * taken, the fall-through after pc when not); insns and events are the
 * block counts since the previous branch, this branch included. */
HWP__PATH_HOT void hwp_path_branch(hwp_path *p, uint64_t pc, uint64_t next_pc,
                                   uint32_t cls, bool taken, uint32_t insns,
                                   uint32_t events) {
    /* one table lookup decodes the branch type (section 3): a taken
     * branch to an address at or below its own is a back-edge. A branch
     * not taken falls through to the address after it, above pc, so
     * next_pc <= pc alone says taken backward (the taken bit would cost
     * every branch an instruction to say it again). */
    size_t x = (size_t)cls * 2 + (size_t)(next_pc <= pc);
    uint32_t ops;
    if (HWP_UNLIKELY(x >= 2 * HWP_CLS_COUNT)) return;
    ops = p->opx[x];
    if (HWP_LIKELY(!(ops & HWP__PATH_Q))) {
        if (hwp__path_short(p, next_pc, ops, taken, insns, 0)) return;
    } else {
        if (hwp__path_short(p, next_pc, ops, taken, insns, HWP__PATH_Q)) return;
    }
    hwp__path_step(p, pc, next_pc, (uint32_t)x, taken, insns, events);
}

/* The shared record: every instruction counts towards the block; a
 * branch class hands the block to hwp_path_branch (out of line, in
 * hwp__path_insn_branch: inlined, its size would make the host's whole
 * per-instruction function pay for it, models off included). Taken
 * comes from HWP_EV_TAKEN, the next pc from next_pc. Events are counted
 * only under the events metric, the one metric that reads them. */
HWP__PATH_HOT void hwp_path_insn(hwp_path *p, const hwp_insn *in) {
    p->pend_insns++;
    if (HWP_UNLIKELY(p->w_ev)) p->pend_events += (in->events & p->desc.event_mask) != 0;
    if (hwp_cls_is_branch(in->cls)) hwp__path_insn_branch(p, in);
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_PATHPROF_H */

/* ======================================================================= */
/* IMPLEMENTATION                                                          */
/* ======================================================================= */
#if defined(HWPROF_IMPL) && !defined(HWPROF_PATHPROF_IMPL)
#define HWPROF_PATHPROF_IMPL

#ifdef __cplusplus
extern "C" {
#endif

#define HWP__PATH_MAGIC HWP__MAGIC('p', 'a', 't', 'h')
#define HWP__HPT_MAGIC HWP__MAGIC('h', 'p', 't', ' ')
#define HWP__PHASE_MAGIC HWP__MAGIC('p', 'h', 'a', 's')

/* ---- shared helpers ---------------------------------------------------- */

/* Row orders for the heap sort: does a come after b? */
static int hwp__path_after_count(const hwp_path_row *a, const hwp_path_row *b) {
    if (a->count != b->count) return a->count < b->count;
    if (a->pd.start != b->pd.start) return a->pd.start > b->pd.start;
    return a->pd.shape > b->pd.shape;
}

static int hwp__path_after_key(const hwp_path_row *a, const hwp_path_row *b) {
    if (a->pd.start != b->pd.start) return a->pd.start > b->pd.start;
    return a->pd.shape > b->pd.shape;
}

typedef int (*hwp__path_order)(const hwp_path_row *, const hwp_path_row *);

/* Sift r[i] down a heap whose root is the row that comes last. */
static void hwp__path_sift(hwp_path_row *r, size_t n, size_t i,
                          hwp__path_order after) {
    for (;;) {
        size_t c = 2 * i + 1, m = i;
        hwp_path_row t;
        if (c < n && after(&r[c], &r[m])) m = c;
        if (c + 1 < n && after(&r[c + 1], &r[m])) m = c + 1;
        if (m == i) return;
        t = r[i];
        r[i] = r[m];
        r[m] = t;
        i = m;
    }
}

/* Heap sort (no libc qsort in a freestanding core): first to last. */
static void hwp__path_sort(hwp_path_row *r, size_t n, hwp__path_order after) {
    size_t i;
    for (i = n / 2; i-- > 0;) hwp__path_sift(r, n, i, after);
    while (n > 1) {
        hwp_path_row t = r[0];
        r[0] = r[n - 1];
        r[n - 1] = t;
        hwp__path_sift(r, --n, 0, after);
    }
}

/* A path descriptor's JSON members: the start and the direction bits
 * as hex strings (a 64-bit value above 2^53 does not survive a JSON
 * number in most readers), the length as a number. */
static void hwp__path_pd_json(const hwp_writer *w, const hwp_path_pd *pd) {
    hwp_put_json_hex(w, "start", pd->start);
    hwp_put_json_u64(w, "len", hwp_path_pd_len(pd));
    hwp_put_json_hex(w, "dirs", hwp_path_pd_dirs(pd));
}

/* The reverse, one member at a time: false when key is not one of the
 * three. The shape is rebuilt (and checked) by hwp__path_pd_make. */
static bool hwp__path_pd_member(hwp_json *j, const char *key, uint64_t *start,
                                uint64_t *len, uint64_t *dirs) {
    if (hwp_json_key_is(key, "start")) return hwp_json_u64(j, start);
    if (hwp_json_key_is(key, "len")) return hwp_json_u64(j, len);
    if (hwp_json_key_is(key, "dirs")) return hwp_json_u64(j, dirs);
    return false;
}

static bool hwp__path_pd_make(hwp_json *j, hwp_path_pd *pd, uint64_t start,
                              uint64_t len, uint64_t dirs) {
    if (len > HWP_PATH_MAX_LEN || (dirs >> len) != 0)
        return hwp_json_fail(j, "json: a path's dirs do not fit its len (0..63)");
    pd->start = start;
    pd->shape = (uint64_t)1 << len | dirs;
    return true;
}

/* Direction bits as a string of 0/1, first branch first. */
static void hwp__path_put_dirs(const hwp_writer *w, const hwp_path_pd *pd) {
    unsigned i, len = hwp_path_pd_len(pd);
    for (i = 0; i < len; i++) hwp_put(w, hwp_path_pd_dir(pd, i) ? "1" : "0", 1);
}

/* ---- Hot Path Table ---------------------------------------------------- */

static const char *const hwp__hpt_index_names[] = {"plb", "pb", "p"};
static const char *const hwp__hpt_repl_names[] = {"lfu", "lru"};
static const char *const hwp__hpt_policy_names[] = {"plain", "aging", "decay"};

/* Defaults as hwp_hpt_desc's comments attribute them. */
static const hwp_field hwp__hpt_desc_f[] = {
    HWP__FN(hwp_hpt_desc, "hpt", entries, UINT, 512, 1, 1u << 24, HWP_FIELD_POW2,
            "hpt: entries must be a power of two up to 2^24"),
    HWP__FN(hwp_hpt_desc, "hpt", ways, UINT, 4, 1, 256, HWP_FIELD_POW2,
            "hpt: ways must be a power of two, at most 256 and entries"),
    HWP__FE(hwp_hpt_desc, "hpt", index, hwp__hpt_index_names,
            "hpt: index must be plb, pb or p"),
    HWP__FE(hwp_hpt_desc, "hpt", repl, hwp__hpt_repl_names,
            "hpt: repl must be lfu or lru"),
    HWP__FE(hwp_hpt_desc, "hpt", policy, hwp__hpt_policy_names,
            "hpt: policy must be plain, aging or decay")};

static const hwp_field hwp__hpt_stats_f[] = {
    HWP__FS_HEAD(hwp_hpt_stats),
    HWP__FS(hwp_hpt_stats, hits), HWP__FS(hwp_hpt_stats, misses),
    HWP__FS(hwp_hpt_stats, evicted_value), HWP__FS(hwp_hpt_stats, total),
    HWP__FS(hwp_hpt_stats, agings)};

HWP__FIELDS_FN(hwp_hpt_desc_fields, hwp__hpt_desc_f)

static const char *hwp__hpt_fill(void *desc) {
    hwp_hpt_desc *d = (hwp_hpt_desc *)desc;
    const char *why = hwp__field_fill(d, hwp__hpt_desc_f, HWP__N(hwp__hpt_desc_f));
    if (why) return why;
    if (d->ways > d->entries) return hwp__hpt_desc_f[1].bad;
    if (d->policy != HWP_HPT_PLAIN && d->repl != HWP_HPT_LFU)
        return "hpt: policy aging or decay ages LFU priorities: it needs repl lfu";
    return NULL;
}

HWP_API size_t hwp_hpt_bytes(const hwp_hpt_desc *d) {
    hwp_hpt_desc c;
    hwp__zero(&c, sizeof c);
    if (d) c = *d;
    return hwp__hpt_fill(&c) ? 0 : HWP_HPT_BYTES(c.entries);
}

HWP_API hwp_status hwp_hpt_init(hwp_hpt *h, void *storage, size_t bytes,
                                const hwp_hpt_desc *d, hwp_cost *cost) {
    hwp_hpt_desc c;
    const char *why;
    if (!h) return HWP_EINVAL;
    hwp__zero(&c, sizeof c);
    if (d) c = *d;
    hwp__zero(h, sizeof *h);
    why = hwp__hpt_fill(&c); /* before the size below reads c */
    if (hwp__admit(&h->head, why, &storage, &bytes,
                       (size_t)c.entries * sizeof(hwp_hpt_entry)))
        return (hwp_status)h->head.status;
    h->desc = c;
    h->e = (hwp_hpt_entry *)storage;
    h->cost = cost;
    h->way_shift = hwp_log2(c.ways);
    h->set_mask = c.entries / c.ways - 1;
    h->set_bytes = c.ways * (uint32_t)sizeof(hwp_hpt_entry);
    h->kmask = c.index == HWP_HPT_P ? 0 : ~(uint64_t)0;
    h->lru = c.repl == HWP_HPT_LRU;
    h->aging = c.policy != HWP_HPT_PLAIN;
    h->decay = c.policy == HWP_HPT_DECAY;
    h->dflt = c.index == HWP_HPT_PLB && c.ways == 4 && !h->lru && !h->aging;
    h->age4 = c.index == HWP_HPT_PLB && c.ways == 4 && h->aging;
    h->off_mask = (uint64_t)h->set_mask << 5;
    h->head.magic = HWP__HPT_MAGIC; /* only a successful init is valid */
    return hwp_hpt_reset(h);
}

HWP_API hwp_status hwp_hpt_reset(hwp_hpt *h) {
    if (!h || h->head.magic != HWP__HPT_MAGIC) return HWP_EINVAL;
    hwp__zero(h->e, (size_t)h->desc.entries * sizeof(hwp_hpt_entry));
    h->clock = 0;
    h->floor = 0;
    h->hits = h->misses = 0;
    h->evictions = h->evicted_value = h->saturations = h->total = 0;
    h->agings = h->age_cycles = 0;
    return hwp__fail(&h->head, HWP_OK, "");
}

HWP_API hwp_status hwp_hpt_flush(hwp_hpt *h) {
    if (!h || h->head.magic != HWP__HPT_MAGIC) return HWP_EINVAL;
    return hwp__fail(&h->head, HWP_OK, "");
}

HWP_API hwp_status hwp_hpt_get_stats(const hwp_hpt *h, hwp_hpt_stats *out) {
    if (!h || !out || h->head.magic != HWP__HPT_MAGIC) return HWP_EINVAL;
    out->events = h->hits + h->misses;
    out->dropped = h->saturations;
    out->evicted = h->evictions;
    out->cycles = h->age_cycles;
    out->hits = h->hits;
    out->misses = h->misses;
    out->evicted_value = h->evicted_value;
    out->total = h->total;
    out->agings = h->agings;
    return HWP_OK;
}

HWP__GET_DESC_FN(hpt, desc, x && x->head.magic == HWP__HPT_MAGIC)

/* LRU stamps are 32 bits: when the clock would wrap, renumber every set
 * by rank, which keeps the order and frees the clock. */
HWP_API void hwp__hpt_restamp(hwp_hpt *h) {
    uint32_t s, w, v, ways = 1u << h->way_shift;
    for (s = 0; s <= h->set_mask; s++) {
        hwp_hpt_entry *set = h->e + ((size_t)s << h->way_shift);
        uint32_t rank[256];
        for (w = 0; w < ways; w++) {
            rank[w] = 1;
            for (v = 0; v < ways; v++)
                rank[w] += set[v].stamp < set[w].stamp ||
                           (set[v].stamp == set[w].stamp && v < w);
        }
        for (w = 0; w < ways; w++) set[w].stamp = rank[w];
    }
    h->clock = ways;
}

/* The aging pass, when the floor reaches half the priorities' 32 bits:
 * every priority and the floor are halved (their order is kept; one
 * shift per entry, a set per cycle in hardware, which stalls the HPT
 * for `sets` cycles). The accumulators stay exact: they are the
 * profile. */
HWP_API void hwp__hpt_age(hwp_hpt *h) {
    uint32_t i, sets = h->set_mask + 1u;
    for (i = 0; i < h->desc.entries; i++) h->e[i].stamp >>= 1;
    h->floor >>= 1;
    h->agings++;
    if (h->cost) {
        uint64_t c = (uint64_t)hwp_cost_cycles(h->cost, HWP_COST_PATH_HPT_AGE) * sets;
        hwp_cost_stall(h->cost, HWP_COST_PATH_HPT_AGE, c);
        h->age_cycles += c;
    }
}

/* DECAY's miss in a full set (Misra and Gries per set): every way's
 * priority drops by the newcomer's value, in one pass (a subtractor per
 * way in hardware, within the miss's log2(ways) cycles); the newcomer
 * takes the lowest way whose priority reached zero, or is left out,
 * counted as an eviction of its value as a merge counts the path it
 * leaves out. Returns the way taken, or `ways` when none. */
static uint32_t hwp__hpt_decay(hwp_hpt *h, hwp_hpt_entry *set, uint32_t ways,
                               uint32_t value) {
    uint32_t w, v = ways;
    for (w = 0; w < ways; w++) {
        set[w].stamp = set[w].stamp > value ? set[w].stamp - value : 0;
        if (!set[w].stamp && v == ways) v = w;
    }
    if (v == ways) {
        h->evictions++;
        h->evicted_value += value;
    }
    return v;
}

/* The miss path: pick the victim, the smallest accumulator for LFU, the
 * smallest priority under AGING or the oldest stamp for LRU, empty
 * entries first, the lowest way on ties (section 5). */
HWP_API int hwp__hpt_miss(hwp_hpt *h, hwp_hpt_entry *set,
                          const hwp_path_pd *pd, uint32_t value) {
    uint32_t w, v = 0, ways = 1u << h->way_shift;
    bool st = h->lru || h->aging;
    for (w = 1; w < ways && set[v].pd.shape; w++) {
        uint32_t kw = st ? set[w].stamp : set[w].acc;
        uint32_t kv = st ? set[v].stamp : set[v].acc;
        if (!set[w].pd.shape || kw < kv) v = w;
    }
    h->misses++;
    if (h->decay) {
        if (set[v].pd.shape && (v = hwp__hpt_decay(h, set, ways, value)) == ways) return 0;
        if (set[v].pd.shape) {
            h->evictions++;
            h->evicted_value += set[v].acc;
        }
        set[v].pd = *pd;
        set[v].acc = value;
        set[v].stamp = value; /* a newcomer starts at its value */
        return 0;
    }
    if (set[v].pd.shape) {
        h->evictions++;
        h->evicted_value += set[v].acc;
        if (h->aging) h->floor = set[v].stamp; /* LFUDA: the victim's priority */
    }
    set[v].pd = *pd;
    set[v].acc = value;
    if (h->aging) { /* the newcomer starts at the last victim's priority */
        set[v].stamp = hwp_sat_add(h->floor, value, 0xFFFFFFFFu);
        if (HWP_UNLIKELY(h->floor >= 0x80000000u)) hwp__hpt_age(h);
        return 0;
    }
    set[v].stamp = ++h->clock;
    if (h->clock == 0xFFFFFFFFu) hwp__hpt_restamp(h);
    return 0;
}

HWP_API uint32_t hwp_hpt_lookup(const hwp_hpt *h, const hwp_path_pd *pd) {
    hwp_hpt_entry *set, *e;
    if (!h || h->head.magic != HWP__HPT_MAGIC || !pd) return 0;
    set = hwp__hpt_set(h, pd);
    e = hwp__hpt_find(h, set, pd);
    return e ? e->acc : 0;
}

HWP_API size_t hwp_hpt_export(const hwp_hpt *h, hwp_path_row *rows,
                              size_t cap) {
    size_t i, n = 0, valid = 0;
    if (!h || h->head.magic != HWP__HPT_MAGIC) return 0;
    if (!rows) cap = 0;
    /* Keep the best `cap` in a heap whose root is the worst of them. */
    for (i = 0; i < h->desc.entries; i++) {
        hwp_path_row r;
        if (!h->e[i].pd.shape) continue;
        valid++;
        if (!cap) continue;
        r.pd = h->e[i].pd;
        r.count = h->e[i].acc;
        if (n < cap) {
            size_t c = n++;
            rows[c] = r;
            while (c && hwp__path_after_count(&rows[c], &rows[(c - 1) / 2])) {
                hwp_path_row t = rows[c];
                rows[c] = rows[(c - 1) / 2];
                rows[(c - 1) / 2] = t;
                c = (c - 1) / 2;
            }
        } else if (hwp__path_after_count(&rows[0], &r)) {
            rows[0] = r;
            hwp__path_sift(rows, n, 0, hwp__path_after_count);
        }
    }
    hwp__path_sort(rows, n, hwp__path_after_count);
    return valid;
}

/* Does entry a rank below entry b for keeping (merge): by priority under
 * AGING, else by accumulator; empty entries rank lowest. */
static bool hwp__hpt_colder(const hwp_hpt *h, const hwp_hpt_entry *a,
                            const hwp_hpt_entry *b) {
    if (!a->pd.shape || !b->pd.shape) return !a->pd.shape && b->pd.shape;
    return h->aging ? a->stamp < b->stamp : a->acc < b->acc;
}

HWP_API hwp_status hwp_hpt_merge(hwp_hpt *dst, const hwp_hpt *src) {
    const hwp_field *f;
    uint32_t s, w, v, ways;
    if (!dst || !src || dst->head.magic != HWP__HPT_MAGIC ||
        src->head.magic != HWP__HPT_MAGIC)
        return HWP_EINVAL;
    if ((f = hwp__field_diff(&dst->desc, &src->desc, hwp__hpt_desc_f,
                          HWP__N(hwp__hpt_desc_f))) != NULL)
        return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    if (dst == src)
        return hwp__fail(&dst->head, HWP_EINVAL, "hpt: cannot merge into itself");
    ways = 1u << dst->way_shift;
    /* Set by set (both tables index alike): a path in both adds its
     * accumulators; a path only in src replaces dst's coldest way when it
     * is hotter than that way, else it is the one left out. Never through
     * hwp_hpt_add, whose LFU would let a newcomer evict a hotter entry. */
    for (s = 0; s <= dst->set_mask; s++) {
        hwp_hpt_entry *ds = dst->e + ((size_t)s << dst->way_shift);
        const hwp_hpt_entry *ss = src->e + ((size_t)s << src->way_shift);
        for (w = 0; w < ways; w++) {
            const hwp_hpt_entry *e = ss + w;
            hwp_hpt_entry *cold = ds;
            if (!e->pd.shape) continue;
            for (v = 0; v < ways && !hwp_path_pd_eq(&ds[v].pd, &e->pd); v++) {}
            if (v < ways) {
                uint64_t a = (uint64_t)ds[v].acc + e->acc;
                if (a > 0xFFFFFFFFu) dst->saturations++;
                ds[v].acc = a > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)a;
                if (dst->aging) ds[v].stamp = hwp_sat_add(ds[v].stamp, e->stamp, 0xFFFFFFFFu);
                else if (e->stamp > ds[v].stamp) ds[v].stamp = e->stamp;
                continue;
            }
            for (v = 1; v < ways; v++)
                if (hwp__hpt_colder(dst, ds + v, cold)) cold = ds + v;
            if (cold->pd.shape && !hwp__hpt_colder(dst, cold, e)) {
                /* src's path is the coldest: it is the one evicted */
                dst->evictions++;
                dst->evicted_value += e->acc;
                continue;
            }
            if (cold->pd.shape) {
                dst->evictions++;
                dst->evicted_value += cold->acc;
            }
            *cold = *e;
        }
    }
    dst->hits += src->hits;
    dst->misses += src->misses;
    dst->evictions += src->evictions;
    dst->evicted_value += src->evicted_value;
    dst->saturations += src->saturations;
    dst->total += src->total;
    dst->agings += src->agings;
    dst->age_cycles += src->age_cycles;
    if (src->clock > dst->clock) dst->clock = src->clock;
    if (src->floor > dst->floor) dst->floor = src->floor;
    return hwp__fail(&dst->head, HWP_OK, "");
}

/* The hottest valid entry ranked after prev (count descending, then
 * slot): the text report's top 20, O(entries) per row. */
static const hwp_hpt_entry *hwp__hpt_next(const hwp_hpt *h,
                                          const hwp_hpt_entry *prev) {
    const hwp_hpt_entry *best = 0;
    size_t i;
    for (i = 0; i < h->desc.entries; i++) {
        const hwp_hpt_entry *e = h->e + i;
        if (!e->pd.shape) continue;
        if (prev && (e->acc > prev->acc || (e->acc == prev->acc && e <= prev)))
            continue;
        if (!best || e->acc > best->acc) best = e;
    }
    return best;
}

HWP_API void hwp_hpt_write_text(const hwp_hpt *h, const hwp_writer *w) {
    const hwp_hpt_entry *e = 0;
    unsigned k;
    if (!h || h->head.magic != HWP__HPT_MAGIC) return;
    hwp_put_str_u64(w, "hot path table: ", h->desc.entries);
    hwp_put_str_u64(w, " entries, ", h->desc.ways);
    hwp_put_str(w, "-way, ");
    hwp_put_str(w, h->desc.repl == HWP_HPT_LRU ? "LRU, " : "LFU, ");
    if (h->decay) hwp_put_str(w, "decay (Misra-Gries per set), ");
    else if (h->aging) hwp_put_str(w, "aging (LFUDA), ");
    hwp_put_str(w, hwp__hpt_index_names[h->desc.index]);
    hwp_put_str_u64(w, " index\n  paths ", h->hits + h->misses);
    hwp_put_str_u64(w, ", hits ", h->hits);
    hwp_put_str_u64(w, ", misses ", h->misses);
    hwp_put_str_u64(w, ", evictions ", h->evictions);
    hwp_put_str_u64(w, " (value lost ", h->evicted_value);
    hwp_put_str_u64(w, " of ", h->total);
    hwp_put_str(w, ")\n");
    for (k = 0; k < 20 && (e = hwp__hpt_next(h, e)) != 0; k++) {
        hwp_put_str_u64(w, "  ", e->acc);
        hwp__put_str_hex(w, "  ", e->pd.start);
        hwp_put_str_u64(w, " len ", hwp_path_pd_len(&e->pd));
        hwp_put_str(w, " ");
        hwp__path_put_dirs(w, &e->pd);
        hwp_put_str(w, "\n");
    }
}

/* One pass over the table in slot order (O(entries)); each path carries
 * its slot so a reader restores the table exactly. Hosts sort with
 * hwp_hpt_export. */
HWP_API void hwp_hpt_write_json(const hwp_hpt *h, const hwp_writer *w) {
    hwp_hpt_stats st;
    bool first = true;
    size_t i;
    if (hwp_hpt_get_stats(h, &st) != HWP_OK) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_json_envelope(w, "hpt", 1);
    hwp__field_put(w, "desc", &h->desc, hwp__hpt_desc_f, HWP__N(hwp__hpt_desc_f));
    hwp__field_put(w, "stats", &st, hwp__hpt_stats_f, HWP__N(hwp__hpt_stats_f));
    hwp_put_json_u64(w, "clock", h->clock);
    hwp_put_json_u64(w, "floor", h->floor);
    hwp_put_str(w, ",\"paths\":[");
    for (i = 0; i < h->desc.entries; i++) {
        const hwp_hpt_entry *e = h->e + i;
        if (!e->pd.shape) continue;
        hwp_put_str(w, first ? "{" : ",{");
        first = false;
        hwp_put_str_u64(w, "\"slot\":", i);
        hwp__path_pd_json(w, &e->pd);
        hwp_put_json_u64(w, "count", e->acc);
        hwp_put_json_u64(w, "stamp", e->stamp);
        hwp_put_str(w, "}");
    }
    hwp_put_str(w, "]}");
}

HWP__READ_DESC_FN(hpt, "hpt", hwp__hpt_desc_f, NULL)

/* One "paths" element into its slot. */
static bool hwp__hpt_read_entry(hwp_json *j, hwp_hpt *h) {
    char key[16];
    uint64_t slot = ~(uint64_t)0, start = 0, len = 0, dirs = 0, acc = 0, stamp = 0;
    hwp_path_pd pd;
    size_t at, end;
    if (!hwp_json_object(j)) return false;
    at = j->pos - 1;
    while (hwp_json_member(j, key, sizeof key)) {
        if (hwp_json_key_is(key, "slot")) hwp_json_u64(j, &slot);
        else if (hwp_json_key_is(key, "count")) hwp_json_u64(j, &acc);
        else if (hwp_json_key_is(key, "stamp")) hwp_json_u64(j, &stamp);
        else if (!hwp__path_pd_member(j, key, &start, &len, &dirs) && !j->why)
            return hwp_json_fail(j, "json: unknown field");
    }
    if (j->why || !hwp__path_pd_make(j, &pd, start, len, dirs)) return false;
    end = j->pos;
    j->pos = at; /* errors below point at the element */
    if (slot >= h->desc.entries || acc > 0xFFFFFFFFu || stamp > 0xFFFFFFFFu ||
        h->e[slot].pd.shape)
        return hwp_json_fail(j, "hpt: a path's slot, count or stamp is out of range");
    if ((size_t)(hwp__hpt_set(h, &pd) - h->e) != (slot >> h->way_shift << h->way_shift))
        return hwp_json_fail(j, "hpt: a path is in a slot its index does not map to");
    h->e[slot].pd = pd;
    h->e[slot].acc = (uint32_t)acc;
    h->e[slot].stamp = (uint32_t)stamp;
    j->pos = end;
    return true;
}

HWP_API hwp_status hwp_hpt_read_json(hwp_hpt *h, const char *json, size_t n,
                                     hwp_json_err *err) {
    hwp_hpt_desc d;
    hwp_hpt_stats st;
    hwp_json j;
    char key[16];
    hwp_status rc;
    uint64_t clock = 0, floor = 0;
    if (!h || h->head.magic != HWP__HPT_MAGIC) return HWP_EINVAL;
    hwp__zero(&d, sizeof d);
    hwp__zero(&st, sizeof st);
    hwp_json_init(&j, json, n);
    rc = hwp__field_begin(&j, &h->head, "hpt", &d, &h->desc, hwp__hpt_desc_f,
                       HWP__N(hwp__hpt_desc_f), hwp__hpt_fill, err);
    if (rc != HWP_OK) return rc;
    hwp_hpt_reset(h);
    while (hwp_json_member(&j, key, sizeof key)) {
        if (hwp_json_key_is(key, "stats")) {
            hwp__field_read(&j, &st, hwp__hpt_stats_f,
                            HWP__N(hwp__hpt_stats_f), false);
        } else if (hwp_json_key_is(key, "clock")) {
            hwp_json_u64(&j, &clock);
        } else if (hwp_json_key_is(key, "floor")) {
            hwp_json_u64(&j, &floor);
        } else if (hwp_json_key_is(key, "paths")) {
            if (!hwp_json_array(&j)) break;
            while (hwp_json_next(&j))
                if (!hwp__hpt_read_entry(&j, h)) break;
        } else {
            hwp_json_fail(&j, "json: unknown field");
        }
    }
    hwp_json_end(&j);
    if (!j.why && (clock > 0xFFFFFFFFu || floor > 0xFFFFFFFFu ||
                   st.hits + st.misses != st.events))
        hwp_json_fail(&j, "hpt: clock, floor or the hit/miss counts are inconsistent");
    if (j.why) {
        hwp_status s = hwp_json_status(&j, err);
        hwp_hpt_reset(h);
        return hwp__fail(&h->head, s, j.why);
    }
    h->clock = (uint32_t)clock;
    h->floor = (uint32_t)floor;
    h->hits = st.hits;
    h->misses = st.misses;
    h->evictions = st.evicted;
    h->evicted_value = st.evicted_value;
    h->saturations = st.dropped;
    h->total = st.total;
    h->agings = st.agings;
    h->age_cycles = st.cycles;
    hwp_json_status(&j, err);
    return hwp__fail(&h->head, HWP_OK, "");
}

/* ---- phase detection --------------------------------------------------- */

static const char *const hwp__phase_kind_names[] = {"path", "bbv"};

/* Defaults as hwp_phase_desc's comments attribute them; threshold's
 * (60% of interval) depends on interval, so the fill computes it. */
static const hwp_field hwp__phase_desc_f[] = {
    HWP__FE(hwp_phase_desc, "phase", kind, hwp__phase_kind_names,
            "phase: kind must be path or bbv"),
    HWP__FN(hwp_phase_desc, "phase", counters, UINT, 32, 1, 1024, HWP_FIELD_POW2,
            "phase: counters must be a power of two up to 1024"),
    HWP__FN(hwp_phase_desc, "phase", sig_bits, UINT, 6, 1, 8, 0,
            "phase: sig_bits must be 1..8"),
    HWP__FN(hwp_phase_desc, "phase", table, UINT, 32, 1, 1024, 0,
            "phase: table must be 1..1024"),
    HWP__FN(hwp_phase_desc, "phase", interval, UINT, 10000000u, 1, 1ull << 31, 0,
            "phase: interval must be 1..2^31 instructions (0 for 10M)"),
    HWP__FANY(hwp_phase_desc, "phase", threshold)};

static const hwp_field hwp__phase_stats_f[] = {
    HWP__FS_HEAD(hwp_phase_stats),
    HWP__FS(hwp_phase_stats, insns), HWP__FS(hwp_phase_stats, intervals),
    HWP__FS(hwp_phase_stats, phases), HWP__FS(hwp_phase_stats, changes),
    HWP__FS(hwp_phase_stats, phase), HWP__FS(hwp_phase_stats, distance)};

HWP__FIELDS_FN(hwp_phase_desc_fields, hwp__phase_desc_f)

static const char *hwp__phase_fill(void *desc) {
    hwp_phase_desc *d = (hwp_phase_desc *)desc;
    const char *why = hwp__field_fill(d, hwp__phase_desc_f, HWP__N(hwp__phase_desc_f));
    if (why) return why;
    if (!d->threshold) d->threshold = d->interval / 10u * 6u + d->interval % 10u * 6u / 10u;
    if (!d->threshold) d->threshold = 1; /* intervals under 2 instructions */
    if (d->threshold > 2 * d->interval)
        return "phase: threshold must be 1..2 x interval (a larger one never "
               "sees a change)";
    return NULL;
}

HWP_API size_t hwp_phase_bytes(const hwp_phase_desc *d) {
    hwp_phase_desc c;
    hwp__zero(&c, sizeof c);
    if (d) c = *d;
    return hwp__phase_fill(&c) ? 0 : HWP_PHASE_BYTES(c.counters, c.table);
}

/* Accumulator width: enough to count a whole interval. */
static unsigned hwp__phase_acc_bits(const hwp_phase_desc *d) {
    return hwp_log2(d->interval) + !hwp_is_pow2(d->interval);
}

HWP_API size_t hwp_phase_hw_bytes(const hwp_phase_desc *d) {
    hwp_phase_desc c;
    uint64_t bits;
    hwp__zero(&c, sizeof c);
    if (d) c = *d;
    if (hwp__phase_fill(&c)) return 0;
    bits = (uint64_t)c.counters * hwp__phase_acc_bits(&c) +   /* accumulators */
           (uint64_t)c.counters * c.sig_bits +                /* previous     */
           (uint64_t)c.table * (c.counters * c.sig_bits +     /* past table   */
                                hwp_log2(c.table) + 1u);      /* + phase id   */
    return (size_t)((bits + 7u) / 8u);
}

HWP_API hwp_status hwp_phase_bbv_desc(const hwp_phase_desc *like,
                                      hwp_phase_desc *out) {
    hwp_phase_desc c;
    if (!out) return HWP_EINVAL;
    hwp__zero(&c, sizeof c);
    if (like) c = *like;
    if (hwp__phase_fill(&c)) return HWP_EINVAL;
    c.kind = HWP_PHASE_BBV;
    *out = c;
    return HWP_OK;
}

HWP_API hwp_status hwp_phase_init(hwp_phase *ph, void *storage, size_t bytes,
                                  const hwp_phase_desc *d, hwp_cost *cost) {
    hwp_phase_desc c;
    const char *why;
    unsigned char *cur;
    unsigned lg;
    if (!ph) return HWP_EINVAL;
    hwp__zero(&c, sizeof c);
    if (d) c = *d;
    hwp__zero(ph, sizeof *ph);
    why = hwp__phase_fill(&c); /* before the size below reads c */
    if (hwp__admit(&ph->head, why, &storage, &bytes,
                       HWP_PHASE_BYTES(c.counters, c.table) - (HWP__ALIGN - 1u)))
        return (hwp_status)ph->head.status;
    cur = (unsigned char *)storage;
    ph->desc = c;
    ph->acc = (uint32_t *)hwp__carve(&cur, (size_t)c.counters * 4u);
    ph->prev = (uint8_t *)hwp__carve(&cur, c.counters);
    ph->cur = (uint8_t *)hwp__carve(&cur, c.counters);
    ph->tab_sig = (uint8_t *)hwp__carve(&cur, (size_t)c.counters * c.table);
    ph->tab_id = (uint32_t *)hwp__carve(&cur, (size_t)c.table * 4u);
    ph->tab_stamp = (uint32_t *)hwp__carve(&cur, (size_t)c.table * 4u);
    ph->mask = c.counters - 1;
    /* Keep the top sig_bits of a counter that can reach the interval
     * length: ceil(log2(interval)) bits wide (Sherwood et al. compress
     * their 24-bit counters the same way for 10M intervals). */
    lg = hwp__phase_acc_bits(&c);
    ph->shift = lg > c.sig_bits ? lg - c.sig_bits : 0;
    ph->sig_max = (1u << c.sig_bits) - 1;
    (void)cost; /* the detector is off the commit path: it costs nothing */
    ph->head.magic = HWP__PHASE_MAGIC;
    return hwp_phase_reset(ph);
}

HWP_API hwp_status hwp_phase_reset(hwp_phase *ph) {
    if (!ph || ph->head.magic != HWP__PHASE_MAGIC) return HWP_EINVAL;
    hwp__zero(ph->acc, (size_t)ph->desc.counters * 4u);
    hwp__zero(ph->prev, ph->desc.counters);
    ph->used = ph->next_id = ph->clock = 0;
    ph->fill = ph->intervals = ph->changes = 0;
    ph->adds = ph->insns = ph->replaced = 0;
    hwp__zero(&ph->last, sizeof ph->last);
    return hwp__fail(&ph->head, HWP_OK, "");
}

HWP_API hwp_status hwp_phase_flush(hwp_phase *ph) {
    if (!ph || ph->head.magic != HWP__PHASE_MAGIC) return HWP_EINVAL;
    return hwp__fail(&ph->head, HWP_OK, "");
}

HWP_API hwp_status hwp_phase_get_stats(const hwp_phase *ph, hwp_phase_stats *out) {
    if (!ph || !out || ph->head.magic != HWP__PHASE_MAGIC) return HWP_EINVAL;
    out->events = ph->adds;
    out->dropped = 0;
    out->evicted = ph->replaced;
    out->cycles = 0;
    out->insns = ph->insns + ph->fill;
    out->intervals = ph->intervals;
    out->phases = ph->next_id;
    out->changes = ph->changes;
    out->phase = ph->last.phase;
    out->distance = ph->last.distance;
    return HWP_OK;
}

HWP__GET_DESC_FN(phase, desc, x && x->head.magic == HWP__PHASE_MAGIC)

HWP_API hwp_status hwp_phase_merge(hwp_phase *dst, const hwp_phase *src) {
    const hwp_field *f;
    if (!dst || !src || dst->head.magic != HWP__PHASE_MAGIC ||
        src->head.magic != HWP__PHASE_MAGIC)
        return HWP_EINVAL;
    if ((f = hwp__field_diff(&dst->desc, &src->desc, hwp__phase_desc_f,
                          HWP__N(hwp__phase_desc_f))) != NULL)
        return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    if (dst == src)
        return hwp__fail(&dst->head, HWP_EINVAL, "phase: cannot merge into itself");
    dst->adds += src->adds;
    dst->insns += src->insns + src->fill;
    dst->intervals += src->intervals;
    dst->changes += src->changes;
    dst->replaced += src->replaced;
    dst->next_id += src->next_id;
    return hwp__fail(&dst->head, HWP_OK, "");
}

static uint64_t hwp__phase_dist(const hwp_phase *ph, const uint8_t *a,
                                const uint8_t *b) {
    uint64_t d = 0;
    uint32_t i;
    for (i = 0; i < ph->desc.counters; i++)
        d += a[i] > b[i] ? (uint64_t)(a[i] - b[i]) : (uint64_t)(b[i] - a[i]);
    return d << ph->shift;
}

/* End of an interval (section 6): signature from the accumulators'
 * high-order bits; the same phase as the previous interval when the
 * Manhattan distance is under the threshold; otherwise the closest past
 * phase under the threshold, or a new phase that takes the least recently
 * seen slot of the past-signature table. */
HWP_API void hwp__phase_close(hwp_phase *ph) {
    hwp_phase_interval r;
    uint32_t i, slot = 0, best = 0xFFFFFFFFu, lru = 0;
    uint64_t best_d = ~(uint64_t)0;
    for (i = 0; i < ph->desc.counters; i++) {
        uint32_t s = ph->acc[i] >> ph->shift;
        ph->cur[i] = (uint8_t)(s > ph->sig_max ? ph->sig_max : s);
        ph->acc[i] = 0;
    }
    r.index = ph->intervals;
    r.distance = ph->intervals ? hwp__phase_dist(ph, ph->cur, ph->prev) : 0;
    if (ph->intervals && r.distance < ph->desc.threshold) {
        r.phase = ph->last.phase;
        r.changed = 0;
    } else {
        for (i = 0; i < ph->used; i++) {
            uint64_t d = hwp__phase_dist(ph, ph->cur,
                                         ph->tab_sig + (size_t)i * ph->desc.counters);
            if (d < ph->desc.threshold && d < best_d) {
                best_d = d;
                best = i;
            }
        }
        r.phase = best != 0xFFFFFFFFu ? ph->tab_id[best] : ph->next_id++;
        r.changed = ph->intervals != 0;
    }
    /* The phase's slot keeps its latest signature. */
    for (i = 0; i < ph->used && ph->tab_id[i] != r.phase; i++) {}
    if (i == ph->used) {
        if (ph->used < ph->desc.table) {
            i = ph->used++;
        } else {
            for (slot = 1; slot < ph->used; slot++)
                if (ph->tab_stamp[slot] < ph->tab_stamp[lru]) lru = slot;
            i = lru;
            ph->replaced++;
        }
    }
    hwp__copy(ph->tab_sig + (size_t)i * ph->desc.counters, ph->cur,
              ph->desc.counters);
    ph->tab_id[i] = r.phase;
    ph->tab_stamp[i] = ++ph->clock;
    hwp__copy(ph->prev, ph->cur, ph->desc.counters);
    {
        uint64_t closed = ph->fill < ph->desc.interval ? ph->fill : ph->desc.interval;
        ph->fill -= closed;
        ph->insns += closed;
    }
    ph->intervals++;
    ph->changes += r.changed;
    ph->last = r;
    if (ph->desc.on_interval) ph->desc.on_interval(ph->desc.ctx, &r);
}

HWP_API void hwp_phase_write_text(const hwp_phase *ph, const hwp_writer *w) {
    if (!ph || ph->head.magic != HWP__PHASE_MAGIC) return;
    hwp_put_str_u64(w, "phase detector: ", ph->desc.counters);
    hwp_put_str_u64(w, " counters, ", ph->desc.sig_bits);
    hwp_put_str_u64(w, "-bit signatures, interval ", ph->desc.interval);
    hwp_put_str_u64(w, ", threshold ", ph->desc.threshold);
    hwp_put_str_u64(w, "\n  intervals ", ph->intervals);
    hwp_put_str_u64(w, ", phases ", ph->next_id);
    hwp_put_str_u64(w, ", changes ", ph->changes);
    hwp_put_str_u64(w, ", current phase ", ph->last.phase);
    hwp_put_str(w, "\n");
}

HWP_API void hwp_phase_write_json(const hwp_phase *ph, const hwp_writer *w) {
    hwp_phase_stats st;
    if (hwp_phase_get_stats(ph, &st) != HWP_OK) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_json_envelope(w, "phase", 1);
    hwp__field_put(w, "desc", &ph->desc, hwp__phase_desc_f, HWP__N(hwp__phase_desc_f));
    hwp__field_put(w, "stats", &st, hwp__phase_stats_f, HWP__N(hwp__phase_stats_f));
    hwp_put_json_u64(w, "hw_bytes", hwp_phase_hw_bytes(&ph->desc));
    hwp_put_json_u64(w, "open_insns", ph->fill);
    hwp_put_str(w, "}");
}

HWP__READ_DESC_FN(phase, "phase", hwp__phase_desc_f, NULL)

/* Restores the report's counters (what merge and the report use); the
 * signatures are not in the report, so a restored detector starts its
 * next interval without a previous one to compare with. */
HWP_API hwp_status hwp_phase_read_json(hwp_phase *ph, const char *json, size_t n,
                                       hwp_json_err *err) {
    hwp_phase_desc d;
    hwp_phase_stats st;
    hwp_json j;
    char key[16];
    hwp_status rc;
    uint64_t open = 0, hwb = 0;
    if (!ph || ph->head.magic != HWP__PHASE_MAGIC) return HWP_EINVAL;
    hwp__zero(&d, sizeof d);
    hwp__zero(&st, sizeof st);
    hwp_json_init(&j, json, n);
    rc = hwp__field_begin(&j, &ph->head, "phase", &d, &ph->desc, hwp__phase_desc_f,
                       HWP__N(hwp__phase_desc_f), hwp__phase_fill, err);
    if (rc != HWP_OK) return rc;
    while (hwp_json_member(&j, key, sizeof key)) {
        if (hwp_json_key_is(key, "stats"))
            hwp__field_read(&j, &st, hwp__phase_stats_f,
                            HWP__N(hwp__phase_stats_f), false);
        else if (hwp_json_key_is(key, "open_insns")) hwp_json_u64(&j, &open);
        else if (hwp_json_key_is(key, "hw_bytes")) hwp_json_u64(&j, &hwb);
        else hwp_json_fail(&j, "json: unknown field");
    }
    hwp_json_end(&j);
    /* open may exceed the interval: an add closes at most one interval
     * (the next add closes the next), so one add of more than two
     * intervals' instructions leaves more than an interval open */
    if (!j.why && (open > st.insns ||
                   st.phases > 0xFFFFFFFFu || st.phase > 0xFFFFFFFFu ||
                   (st.phases && st.phase >= st.phases) || st.changes > st.intervals))
        hwp_json_fail(&j, "phase: open_insns, phases or changes are inconsistent");
    if (j.why) return hwp__fail(&ph->head, hwp_json_status(&j, err), j.why);
    hwp_phase_reset(ph);
    ph->adds = st.events;
    ph->replaced = st.evicted;
    ph->fill = open;
    ph->insns = st.insns - open;
    ph->intervals = st.intervals;
    ph->next_id = (uint32_t)st.phases;
    ph->changes = st.changes;
    ph->last.phase = (uint32_t)st.phase;
    ph->last.distance = st.distance;
    ph->last.index = st.intervals ? st.intervals - 1 : 0;
    hwp_json_status(&j, err);
    return hwp__fail(&ph->head, HWP_OK, "");
}

/* ---- path stack -------------------------------------------------------- */

static const uint8_t hwp__path_ppcr[2][HWP_PATH_BT_COUNT] = {
    /* Table 1, BL paths: call, return, forward, backward, indirect */
    {HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_PUSH,
     HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_POP, HWP_PATH_OP_UPDATE,
     HWP_PATH_OP_UPDATE | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH,
     HWP_PATH_OP_UPDATE | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH},
    /* Table 2, WPP sub-paths: calls and returns also end the path */
    {HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH,
     HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH,
     HWP_PATH_OP_UPDATE,
     HWP_PATH_OP_UPDATE | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH,
     HWP_PATH_OP_UPDATE | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH}};

static const char *const hwp__path_mode_names[] = {"bl", "wpp", "ext_loop",
                                                    "ext_call", "custom"};
static const char *const hwp__path_metric_names[] = {"paths", "branches",
                                                      "insns", "events"};
static const char *const hwp__path_overflow_names[] = {"drop", "spill"};

/* Every desc field but the callbacks (a report cannot hold them: a
 * reader of a SPILL desc adds its own spill and fill); defaults as
 * hwp_path_desc's comments attribute them (ext_max's depends on the
 * mode, so the fill sets it). queue is written as given:
 * HWP_PATH_QUEUE_NONE is 4294967295. */
static const hwp_field hwp__path_desc_f[] = {
    HWP__FE(hwp_path_desc, "path", mode, hwp__path_mode_names,
            "path: mode must be bl, wpp, ext_loop, ext_call or custom"),
    HWP__FN(hwp_path_desc, "path", ops, BYTES, 0, 0, 15, 0,
            "path: ops (the PPCR): an entry has bits beyond update/count/pop/push"),
    HWP__FANY(hwp_path_desc, "path", ext_loops),
    HWP__FANY(hwp_path_desc, "path", ext_calls),
    HWP__FN(hwp_path_desc, "path", ext_max, UINT, 0, 1, 7, 0,
            "path: ext_max must be 1..7 (a 3-bit extension counter)"),
    HWP__FN(hwp_path_desc, "path", max_len, UINT, 32, 1, HWP_PATH_MAX_LEN, 0,
            "path: max_len must be 1..63 (16-byte descriptor)"),
    HWP__FN(hwp_path_desc, "path", depth, UINT, 32, 1, 65536, 0,
            "path: depth must be 1..65536"),
    HWP__FN(hwp_path_desc, "path", counter_bits, UINT, 8, 1, 32, 0,
            "path: counter_bits must be 1..32"),
    HWP__FE(hwp_path_desc, "path", metric, hwp__path_metric_names,
            "path: metric must be paths, branches, insns or events"),
    HWP__FDEF(hwp_path_desc, "path", event_mask, HWP_EV_DCMISS),
    HWP__FE(hwp_path_desc, "path", overflow, hwp__path_overflow_names,
            "path: overflow must be drop or spill"),
    HWP__FN(hwp_path_desc, "path", queue, UINT, 4, 1, HWP_PATH_QUEUE_MAX,
            HWP_FIELD_NONE, "path: queue must be 1..1024 or HWP_PATH_QUEUE_NONE"),
    HWP__FN(hwp_path_desc, "path", cycles_per_insn_q8, UINT, 256, 0, 1u << 20, 0,
            "path: cycles_per_insn_q8 must be at most 2^20")};

HWP__FIELDS_FN(hwp_path_desc_fields, hwp__path_desc_f)

static hwp_status hwp__path_fill(hwp_path_desc *d, const char **why) {
    unsigned i;
    if (d->mode < HWP_PATH_CUSTOM) {
        bool wpp = d->mode == HWP_PATH_WPP || d->mode == HWP_PATH_EXT_CALL;
        for (i = 0; i < HWP_PATH_BT_COUNT; i++) d->ops[i] = hwp__path_ppcr[wpp][i];
        d->ext_loops = d->mode == HWP_PATH_EXT_LOOP;
        d->ext_calls = d->mode == HWP_PATH_EXT_CALL;
    }
    if ((d->ext_loops || d->ext_calls) && !d->ext_max) d->ext_max = 1;
    *why = hwp__field_fill(d, hwp__path_desc_f, HWP__N(hwp__path_desc_f));
    for (i = 0; !*why && i < HWP_PATH_BT_COUNT; i++)
        if ((d->ops[i] & 3) == 3)
            *why = "path: ops (the PPCR): an entry may not both update and update-count";
    if (*why) return HWP_EINVAL;
    *why = "";
    if (d->ext_calls && !(d->ops[HWP_PATH_BT_CALL] & HWP_PATH_OP_POP))
        *why = "path: call extension needs calls that pop (Table 2 style)";
    else if (d->overflow == HWP_PATH_SPILL && (!d->spill || !d->fill))
        *why = "path: the SPILL policy needs spill and fill callbacks";
    return **why ? HWP_EINVAL : HWP_OK;
}

/* Does hwp_path_branch have a short path for these PPCR operations?
 * The four Table 1 rows: update (forward), update-pop-push (back-edge,
 * indirect), update-count-pop (return), update-count-push (call). */
static bool hwp__path_fast_ops(uint32_t ops) {
    return ops == HWP_PATH_OP_UPDATE ||
           ops == (HWP_PATH_OP_UPDATE | HWP_PATH_OP_POP | HWP_PATH_OP_PUSH) ||
           ops == (HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_POP) ||
           ops == (HWP_PATH_OP_UPDCOUNT | HWP_PATH_OP_PUSH);
}

static uint32_t hwp__path_qslots(const hwp_path_desc *d) {
    return d->queue == HWP_PATH_QUEUE_NONE ? 1u : d->queue + 1u;
}

HWP_API size_t hwp_path_bytes(const hwp_path_desc *d) {
    hwp_path_desc c;
    const char *why;
    hwp__zero(&c, sizeof c);
    if (d) c = *d;
    if (hwp__path_fill(&c, &why) != HWP_OK) return 0;
    return HWP_PATH_BYTES(c.depth, hwp__path_qslots(&c) - 1u);
}

HWP_API hwp_status hwp_path_init(hwp_path *p, void *storage, size_t bytes,
                                 const hwp_path_desc *d, hwp_cost *cost) {
    hwp_path_desc c;
    const char *why;
    unsigned ops;
    if (!p) return HWP_EINVAL;
    hwp__zero(&c, sizeof c);
    if (d) c = *d;
    hwp__zero(p, sizeof *p);
    if (hwp__path_fill(&c, &why) != HWP_OK)
        return hwp__fail(&p->head, HWP_EINVAL, why);
    p->qslots = hwp__path_qslots(&c);
    if (hwp__admit(&p->head, NULL, &storage, &bytes,
                       HWP_PATH_BYTES(c.depth, p->qslots - 1u) - (HWP__ALIGN - 1u)))
        return (hwp_status)p->head.status;
    p->desc = c;
    p->stack = (hwp_path_entry *)storage;
    p->depth = c.depth;
    p->end = p->stack + c.depth;
    p->fin = (uint64_t *)(p->stack + c.depth);
    p->qend = p->fin + p->qslots;
    p->cost = cost;
    p->qfast = (uint8_t)(cost ? HWP__PATH_Q : 0);
    for (ops = 0; ops < 16; ops++) {
        /* class * 2 + taken-backward -> branch type */
        static const int8_t bt[16] = {
            -1, -1, -1, -1, -1, -1,
            HWP_PATH_BT_FORWARD, HWP_PATH_BT_BACKWARD,
            HWP_PATH_BT_FORWARD, HWP_PATH_BT_BACKWARD,
            HWP_PATH_BT_CALL, HWP_PATH_BT_CALL,
            HWP_PATH_BT_RETURN, HWP_PATH_BT_RETURN,
            HWP_PATH_BT_INDIRECT, HWP_PATH_BT_INDIRECT};
        int b = bt[ops];
        bool ext = (b == HWP_PATH_BT_BACKWARD && c.ext_loops) ||
                   ((b == HWP_PATH_BT_CALL || b == HWP_PATH_BT_RETURN) && c.ext_calls);
        p->opx[ops] = (uint8_t)(b < 0 ? 0
                                      : c.ops[b] | HWP__PATH_BR |
                                            (ext ? HWP__PATH_EXT : 0));
        if (b >= 0 && !ext && c.metric == HWP_PATH_M_PATHS &&
            hwp__path_fast_ops(c.ops[b]))
            p->fastm |= (uint16_t)(1u << ops);
    }
    p->sinks = (uint8_t)(c.on_path ? HWP__PATH_SINK_CB : 0);
    p->ext_max = (uint8_t)(c.ext_loops || c.ext_calls ? c.ext_max : 0);
    p->cnt_max = hwp_sat_max(c.counter_bits);
    p->one = c.metric == HWP_PATH_M_PATHS;
    p->w_br = c.metric == HWP_PATH_M_BRANCHES;
    p->w_ins = c.metric == HWP_PATH_M_INSNS;
    p->w_ev = c.metric == HWP_PATH_M_EVENTS;
    p->full_bit = (uint64_t)1 << c.max_len;
    /* Section 8.2: a branch costs the sum of its operations' latencies
     * (kept in the queue's 1/256 cycles). */
    for (ops = 0; ops < 16; ops++) {
        uint64_t cyc = 0;
        if (ops & HWP_PATH_OP_UPDATE) cyc += hwp_cost_cycles(cost, HWP_COST_PATH_UPDATE);
        if (ops & HWP_PATH_OP_UPDCOUNT) cyc += hwp_cost_cycles(cost, HWP_COST_PATH_UPDATE_COUNT);
        if (ops & HWP_PATH_OP_POP) cyc += hwp_cost_cycles(cost, HWP_COST_PATH_POP);
        if (ops & HWP_PATH_OP_PUSH) cyc += hwp_cost_cycles(cost, HWP_COST_PATH_PUSH);
        p->lat[ops] = cyc << 8;
    }
    p->head.magic = HWP__PATH_MAGIC;
    hwp_path_reset(p);
    return hwp__fail(&p->head, HWP_OK, "");
}

HWP_API hwp_status hwp_path_attach(hwp_path *p, hwp_hpt *hpt,
                                   hwp_phase *phase) {
    if (!p || p->head.magic != HWP__PATH_MAGIC) return HWP_EINVAL;
    if (hpt && hpt->head.magic != HWP__HPT_MAGIC)
        return hwp__fail(&p->head, HWP_EINVAL, "path: hpt is not initialised");
    if (phase && phase->head.magic != HWP__PHASE_MAGIC)
        return hwp__fail(&p->head, HWP_EINVAL,
                         "path: phase detector is not initialised");
    p->hpt = hpt;
    p->phase = phase;
    p->sinks = (uint8_t)((phase ? HWP__PATH_SINK_PHASE : 0) |
                         (p->desc.on_path ? HWP__PATH_SINK_CB : 0));
    p->plain = (uint8_t)(hpt && hpt->dflt ? 2 + (p->sinks != 0)
                         : hpt && hpt->age4 && !p->sinks ? 4 : 0);
    p->lat_hit = (uint64_t)hwp_cost_cycles(p->cost, HWP_COST_PATH_HPT_UPDATE) << 8;
    p->lat_miss = hpt ? ((uint64_t)hwp_cost_cycles(p->cost, HWP_COST_PATH_HPT_MISS) *
                         hwp_log2(hpt->desc.ways)) << 8
                      : 0;
    return hwp__fail(&p->head, HWP_OK, "");
}

HWP_API hwp_status hwp_path_reset(hwp_path *p) {
    if (!p || p->head.magic != HWP__PATH_MAGIC) return HWP_EINVAL;
    p->tp = p->stack;
    p->n = p->lost = 0;
    hwp__path_arm(p);
    p->pend_insns = p->pend_events = 0;
    p->qp = p->fin;
    hwp__zero(p->fin, (size_t)p->qslots * 8u);
    p->clk = p->busy = p->stall_q8 = p->charged = 0;
    p->branches = p->paths = p->ignored = p->splits = 0;
    p->overflows = p->underflows = p->cold_starts = p->spills = p->fills = 0;
    p->unwound = p->max_n = p->unchained = 0;
    p->expect = 0;
    return hwp__fail(&p->head, HWP_OK, "");
}

/* A branch below the previous branch's next_pc: the host lost a record
 * (or its blocks do not chain), so the open path holds a wrong
 * sequence. It is marked incomplete, which makes its pop an ignored
 * path (dropped), never a wrong one in the profile. */
HWP_API void hwp__path_unchained(hwp_path *p) {
    p->unchained++;
    if (p->n) p->tp->incomplete = 1;
}

HWP_API hwp_status hwp_path_get_stats(const hwp_path *p, hwp_path_stats *out) {
    if (!p || !out || p->head.magic != HWP__PATH_MAGIC) return HWP_EINVAL;
    out->events = p->branches;
    out->dropped = p->ignored;
    out->evicted = p->overflows;
    out->cycles = p->stall_q8 >> 8;
    out->paths = p->paths;
    out->splits = p->splits;
    out->underflows = p->underflows;
    out->cold_starts = p->cold_starts;
    out->spills = p->spills;
    out->fills = p->fills;
    out->unwound = p->unwound;
    out->max_depth_used = p->max_n;
    out->unchained = p->unchained;
    out->host_cycles = (p->clk - p->stall_q8) >> 8;
    return HWP_OK;
}

HWP__GET_DESC_FN(path, desc, x && x->head.magic == HWP__PATH_MAGIC)

/* The short paths need a top entry: HWP__PATH_FAST is set on the
 * eligible opx entries while the stack holds one, cleared while it is
 * empty, so an empty stack sends every branch to hwp__path_step and its
 * underflow handling. Called whenever n moves between 0 and 1. */
HWP_API void hwp__path_arm(hwp_path *p) {
    uint32_t x;
    for (x = 0; x < 16; x++) {
        uint32_t o = p->opx[x] & ~(HWP__PATH_FAST | HWP__PATH_Q);
        if (p->n && (p->fastm >> x & 1u)) o |= HWP__PATH_FAST | p->qfast;
        p->opx[x] = (uint8_t)o;
    }
}

/* Push on a full stack (section 3): the bottom entry goes to host memory
 * (SPILL) or is dropped; a dropped frame's path is marked incomplete when
 * the program returns to it. */
HWP_API void hwp__path_overflow(hwp_path *p) {
    hwp_path_entry *bottom = p->tp + 1 == p->end ? p->stack : p->tp + 1;
    p->overflows++;
    if (p->desc.overflow == HWP_PATH_SPILL) {
        p->desc.spill(p->desc.ctx, bottom);
        p->spills++;
    } else {
        p->lost++;
    }
    p->n--;
}

/* A push at the deepest level seen so far (max_n): the stack is full
 * and overflows, or the push sets a new high-water mark. One test in
 * the push covers both. */
HWP_API void hwp__path_deeper(hwp_path *p) {
    if (p->n == p->depth) hwp__path_overflow(p);
    if (p->n + 1u > p->max_n) p->max_n = p->n + 1u;
}

/* Every branch hwp_path_branch does not finish on its short path: the
 * PPCR operations in the hardware's fixed order (update or update-count,
 * pop, push), the extension counter, the event counter and the queue
 * model. Out of line: it keeps the inlined hwp_path_branch small enough
 * to inline everywhere (the default configuration with a non-empty
 * stack never comes here). */
HWP_API void hwp__path_step(hwp_path *p, uint64_t pc, uint64_t next_pc,
                            uint32_t x, bool taken, uint32_t insns,
                            uint32_t events) {
    hwp_path_entry *t;
    uint64_t lat = 0;
    uint32_t ops = p->opx[x];
    if (HWP_UNLIKELY(!ops)) return;
    p->branches++;
    if (HWP_UNLIKELY(p->n == 0)) hwp__path_underflow(p, pc);
    t = p->tp;
    if (HWP_UNLIKELY(ops & HWP__PATH_EXT)) ops = hwp__path_extend(p, t, x, ops);
    if (ops & (HWP_PATH_OP_UPDATE | HWP_PATH_OP_UPDCOUNT)) {
        if (HWP_UNLIKELY(!p->one))
            t->count += p->w_br + (uint64_t)p->w_ins * insns + (uint64_t)p->w_ev * events;
        t->insns += insns;
    }
    if (ops & HWP_PATH_OP_UPDATE) {
        uint64_t shape = t->pd.shape << 1 | (uint64_t)taken;
        t->pd.shape = shape;
        if (HWP_UNLIKELY(shape >= p->full_bit) && !(ops & HWP_PATH_OP_POP))
            lat += hwp__path_split(p, t, next_pc);
    }
    if (ops & HWP_PATH_OP_POP) {
        lat += hwp__path_emit(p, t);
        if (ops & HWP_PATH_OP_PUSH) { /* a new path in the same slot */
            hwp__path_fresh(t, next_pc);
        } else {
            p->tp = t == p->stack ? p->end - 1 : t - 1;
            if (HWP_UNLIKELY(--p->n == 0)) hwp__path_arm(p);
        }
    } else if (ops & HWP_PATH_OP_PUSH) {
        if (HWP_UNLIKELY(p->n >= p->max_n)) hwp__path_deeper(p);
        p->n++;
        t = t + 1 == p->end ? p->stack : t + 1;
        p->tp = t;
        hwp__path_fresh(t, next_pc);
    }
    if (HWP_UNLIKELY(p->cost != NULL)) hwp__path_qadd(p, insns, p->lat[ops & 15] + lat);
}

/* hwp_path_insn's branch: the block ends here. */
HWP_API void hwp__path_insn_branch(hwp_path *p, const hwp_insn *in) {
    /* the block runs from the last branch's next_pc to this branch */
    if (HWP_UNLIKELY(in->pc < p->expect)) hwp__path_unchained(p);
    p->expect = in->next_pc;
    hwp_path_branch(p, in->pc, in->next_pc, in->cls,
                    (in->events & HWP_EV_TAKEN) != 0, p->pend_insns,
                    p->pend_events);
    p->pend_insns = p->pend_events = 0;
}

/* A path reached the maximum length on an update without a pop
 * (section 3): it is popped and a new one pushed at the target. */
HWP_API uint64_t hwp__path_split(hwp_path *p, hwp_path_entry *t,
                                 uint64_t next_pc) {
    uint64_t lat = hwp__path_emit(p, t) + p->lat[HWP_PATH_OP_POP | HWP_PATH_OP_PUSH];
    hwp__path_fresh(t, next_pc);
    p->splits++;
    return lat;
}

/* A branch found the stack empty: refill from host memory, or start an
 * incomplete path whose real start is unknown (a dropped frame, or a
 * profiler attached in the middle of a run). */
HWP_API void hwp__path_underflow(hwp_path *p, uint64_t pc) {
    hwp_path_entry *e = p->tp;
    hwp__path_fresh(e, pc);
    p->n = 1;
    hwp__path_arm(p);
    if (p->desc.overflow == HWP_PATH_SPILL && p->spills > p->fills) {
        p->underflows++;
        if (p->desc.fill(p->desc.ctx, e)) {
            p->fills++;
            return;
        }
        hwp__path_fresh(e, pc);
    } else if (p->lost) {
        p->underflows++;
        p->lost--;
    } else {
        p->cold_starts++;
    }
    e->incomplete = 1;
}

/* A branch found the queue full (section 8.2): it commits at e instead
 * of t, and the stall delays every later commit. Whole stall cycles are
 * charged as they accumulate. */
HWP_API uint64_t hwp__path_stall(hwp_path *p, uint64_t t, uint64_t e) {
    uint64_t whole;
    p->stall_q8 += e - t;
    whole = p->stall_q8 >> 8;
    if (whole > p->charged) {
        hwp_cost_stall(p->cost, HWP_COST_PATH_STALL, whole - p->charged);
        p->charged = whole;
    }
    return e;
}

HWP_API double hwp_path_overhead_pct(const hwp_path *p) {
    if (!p || p->head.magic != HWP__PATH_MAGIC || p->clk == p->stall_q8) return 0.0;
    return 100.0 * (double)p->stall_q8 / (double)(p->clk - p->stall_q8);
}

HWP_API hwp_status hwp_path_begin(hwp_path *p, uint64_t pc) {
    if (!p || p->head.magic != HWP__PATH_MAGIC) return HWP_EINVAL;
    if (p->n == p->desc.depth) hwp__path_overflow(p);
    if (p->n) p->tp = p->tp + 1 == p->end ? p->stack : p->tp + 1;
    p->n++;
    hwp__path_fresh(p->tp, pc);
    if (p->n == 1) hwp__path_arm(p);
    if (p->n > p->max_n) p->max_n = p->n;
    p->expect = pc;
    return hwp__fail(&p->head, HWP_OK, "");
}

HWP_API hwp_status hwp_path_unwind(hwp_path *p, uint32_t n, bool emit) {
    uint64_t below;
    if (!p || p->head.magic != HWP__PATH_MAGIC) return HWP_EINVAL;
    /* entries in host memory (SPILL) or dropped (DROP) are below the
     * on-chip ones, so a longjmp may reach them too */
    below = p->desc.overflow == HWP_PATH_SPILL ? p->spills - p->fills : p->lost;
    if (n > p->n + below)
        return hwp__fail(&p->head, HWP_EINVAL,
                         "path: unwind n exceeds the entries the stack holds "
                         "(on chip, spilled or dropped)");
    for (; n && p->n; n--) {
        if (emit) hwp__path_emit(p, p->tp);
        p->tp = p->tp == p->stack ? p->end - 1 : p->tp - 1;
        p->n--;
        p->unwound++;
    }
    for (; n; n--) {
        hwp_path_entry e;
        if (p->desc.overflow == HWP_PATH_SPILL) {
            p->fills++;
            if (p->desc.fill(p->desc.ctx, &e) && emit) hwp__path_emit(p, &e);
        } else {
            p->lost--;
        }
        p->unwound++;
    }
    hwp__path_arm(p);
    p->expect = 0; /* control went elsewhere: the next branch starts anew */
    return hwp__fail(&p->head, HWP_OK, "");
}

HWP_API uint32_t hwp_path_depth(const hwp_path *p) {
    return p && p->head.magic == HWP__PATH_MAGIC ? p->n : 0;
}

HWP_API hwp_status hwp_path_flush(hwp_path *p) {
    if (!p || p->head.magic != HWP__PATH_MAGIC) return HWP_EINVAL;
    return hwp_path_unwind(p, p->n, true);
}

HWP_API void hwp_path_write_text(const hwp_path *p, const hwp_writer *w) {
    if (!p || p->head.magic != HWP__PATH_MAGIC) return;
    hwp_put_str(w, "path stack: ");
    hwp_put_str(w, hwp__path_mode_names[p->desc.mode]);
    hwp_put_str(w, " paths, metric ");
    hwp_put_str(w, hwp__path_metric_names[p->desc.metric]);
    hwp_put_str_u64(w, ", depth ", p->desc.depth);
    hwp_put_str_u64(w, ", max length ", p->desc.max_len);
    hwp_put_str_u64(w, "\n  branches ", p->branches);
    hwp_put_str_u64(w, ", paths ", p->paths);
    hwp_put_str_u64(w, ", ignored ", p->ignored);
    hwp_put_str_u64(w, ", split ", p->splits);
    hwp_put_str_u64(w, ", overflows ", p->overflows);
    hwp_put_str_u64(w, ", underflows ", p->underflows);
    hwp_put_str(w, "\n  branch queue ");
    if (p->desc.queue == HWP_PATH_QUEUE_NONE) hwp_put_str(w, "none");
    else hwp_put_u64(w, p->desc.queue);
    hwp_put_str_u64(w, ": stall cycles ", p->stall_q8 >> 8);
    hwp__put_str_f64(w, ", modelled overhead ", hwp_path_overhead_pct(p), 3);
    hwp_put_str(w, "%\n");
}


static const hwp_field hwp__path_stats_f[] = {
    HWP__FS_HEAD(hwp_path_stats),
    HWP__FS(hwp_path_stats, paths), HWP__FS(hwp_path_stats, splits),
    HWP__FS(hwp_path_stats, underflows), HWP__FS(hwp_path_stats, cold_starts),
    HWP__FS(hwp_path_stats, spills), HWP__FS(hwp_path_stats, fills),
    HWP__FS(hwp_path_stats, unwound), HWP__FS(hwp_path_stats, max_depth_used),
    HWP__FS(hwp_path_stats, unchained), HWP__FS(hwp_path_stats, host_cycles)};

HWP_API hwp_status hwp_path_merge(hwp_path *dst, const hwp_path *src) {
    const hwp_field *f;
    if (!dst || !src || dst->head.magic != HWP__PATH_MAGIC ||
        src->head.magic != HWP__PATH_MAGIC)
        return HWP_EINVAL;
    if ((f = hwp__field_diff(&dst->desc, &src->desc, hwp__path_desc_f,
                          HWP__N(hwp__path_desc_f))) != NULL)
        return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    if (dst == src)
        return hwp__fail(&dst->head, HWP_EINVAL, "path: cannot merge into itself");
    dst->branches += src->branches;
    dst->paths += src->paths;
    dst->ignored += src->ignored;
    dst->splits += src->splits;
    dst->overflows += src->overflows;
    dst->underflows += src->underflows;
    dst->cold_starts += src->cold_starts;
    dst->spills += src->spills;
    dst->fills += src->fills;
    dst->unwound += src->unwound;
    dst->unchained += src->unchained;
    if (src->max_n > dst->max_n) dst->max_n = src->max_n;
    /* the host's time and the stalls add; charged follows the stalls so
     * dst's next stall charges only new cycles */
    dst->clk += src->clk;
    dst->stall_q8 += src->stall_q8;
    dst->charged = dst->stall_q8 >> 8;
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API void hwp_path_write_json(const hwp_path *p, const hwp_writer *w) {
    hwp_path_stats st;
    if (hwp_path_get_stats(p, &st) != HWP_OK) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_json_envelope(w, "path", 1);
    hwp__field_put(w, "desc", &p->desc, hwp__path_desc_f, HWP__N(hwp__path_desc_f));
    hwp__field_put(w, "stats", &st, hwp__path_stats_f, HWP__N(hwp__path_stats_f));
    /* the queue model's clocks in its 1/256-cycle unit, so a reader
     * restores the overhead exactly */
    hwp_put_json_u64(w, "clk_q8", p->clk);
    hwp_put_json_u64(w, "stall_q8", p->stall_q8);
    hwp_put_json_f64(w, "overhead_pct", hwp_path_overhead_pct(p), 4);
    hwp_put_str(w, "}");
}

HWP__READ_DESC_FN(path, "path", hwp__path_desc_f, NULL)

/* Restores the counters (the stack's profile); the stack itself is
 * empty afterwards, as after a flush. */
HWP_API hwp_status hwp_path_read_json(hwp_path *p, const char *json, size_t n,
                                      hwp_json_err *err) {
    hwp_path_desc d;
    hwp_path_stats st;
    hwp_json j;
    char key[16];
    hwp_status rc;
    uint64_t clk = 0, stall = 0;
    double pct;
    if (!p || p->head.magic != HWP__PATH_MAGIC) return HWP_EINVAL;
    hwp__zero(&d, sizeof d);
    hwp__zero(&st, sizeof st);
    hwp_json_init(&j, json, n);
    /* the callbacks are not in the field table, so not compared */
    rc = hwp__field_begin(&j, &p->head, "path", &d, &p->desc, hwp__path_desc_f,
                       HWP__N(hwp__path_desc_f), NULL, err);
    if (rc != HWP_OK) return rc;
    while (hwp_json_member(&j, key, sizeof key)) {
        if (hwp_json_key_is(key, "stats"))
            hwp__field_read(&j, &st, hwp__path_stats_f,
                            HWP__N(hwp__path_stats_f), false);
        else if (hwp_json_key_is(key, "clk_q8")) hwp_json_u64(&j, &clk);
        else if (hwp_json_key_is(key, "stall_q8")) hwp_json_u64(&j, &stall);
        else if (hwp_json_key_is(key, "overhead_pct")) hwp_json_f64(&j, &pct);
        else hwp_json_fail(&j, "json: unknown field");
    }
    hwp_json_end(&j);
    if (!j.why && (stall > clk || stall >> 8 != st.cycles ||
                   (clk - stall) >> 8 != st.host_cycles))
        hwp_json_fail(&j, "path: clk_q8 and stall_q8 disagree with the stats");
    if (j.why) return hwp__fail(&p->head, hwp_json_status(&j, err), j.why);
    hwp_path_reset(p);
    p->branches = st.events;
    p->ignored = st.dropped;
    p->overflows = st.evicted;
    p->paths = st.paths;
    p->splits = st.splits;
    p->underflows = st.underflows;
    p->cold_starts = st.cold_starts;
    p->spills = st.spills;
    p->fills = st.fills;
    p->unwound = st.unwound;
    p->max_n = st.max_depth_used;
    p->unchained = st.unchained;
    p->clk = clk;
    p->stall_q8 = stall;
    p->charged = stall >> 8;
    hwp_json_status(&j, err);
    return hwp__fail(&p->head, HWP_OK, "");
}

HWP_API size_t hwp_path_decode(const hwp_path *p, const hwp_path_pd *pd,
                               hwp_path_block_fn map, void *ctx,
                               uint64_t *out, size_t cap) {
    unsigned len, used = 0;
    uint32_t ext = 0;
    uint64_t addr;
    size_t n = 0, guard;
    if (!p || p->head.magic != HWP__PATH_MAGIC || !pd || !map || !pd->shape) return 0;
    if (!out) cap = 0;
    len = hwp_path_pd_len(pd);
    addr = pd->start;
    /* a path holds at most max_len recorded branches, and between two of
     * them at most the calls a BL path steps over: bound the walk */
    for (guard = 0; guard < 4096; guard++) {
        hwp_path_block b;
        bool taken = true, bit = false;
        uint32_t x, ops;
        /* No branch ends the next block (the program's last block, left by
         * an exit), or the map does not know it: a path flushed or
         * unwound there ends with its last recorded branch. */
        if (!map(ctx, addr, &b) || b.cls >= HWP_CLS_COUNT || !hwp_cls_is_branch(b.cls))
            return used == len && n ? n : 0;
        if (b.cls == HWP_CLS_BR_COND || b.cls == HWP_CLS_JUMP || b.cls == HWP_CLS_INDIRECT) {
            /* these record a direction in every preset (Tables 1 and 2) */
            if (used == len) return n; /* the path ended before this branch */
            bit = hwp_path_pd_dir(pd, used) != 0;
            if (b.cls == HWP_CLS_JUMP && !bit) return 0; /* always taken */
            taken = bit;
        }
        x = b.cls * 2u + (taken && b.target && b.target <= b.branch_pc);
        if (b.cls == HWP_CLS_INDIRECT) x = b.cls * 2u;
        ops = p->opx[x];
        if (ops & HWP__PATH_EXT) { /* the extension counter, as the stack runs it */
            if (b.cls == HWP_CLS_RET) {
                if (ext) { ext--; ops = HWP_PATH_OP_UPDATE; }
            } else if (ext < p->ext_max) {
                ext++;
                ops = HWP_PATH_OP_UPDATE;
            }
        }
        if (n < cap) out[n] = addr;
        n++;
        if (ops & HWP_PATH_OP_UPDATE) {
            if (used == len) return 0;
            if (hwp_path_pd_dir(pd, used) != (unsigned)taken) return 0;
            used++;
        }
        if (ops & HWP_PATH_OP_POP) return used == len ? n : 0;
        if ((ops & HWP_PATH_OP_UPDATE) && used == p->desc.max_len) return n; /* split */
        if ((ops & HWP_PATH_OP_PUSH) && b.cls == HWP_CLS_CALL) {
            addr = b.fallthrough; /* the caller's path resumes after the call */
        } else if (taken) {
            if (!b.target) return 0; /* an indirect target inside a path */
            addr = b.target;
        } else {
            addr = b.fallthrough;
        }
    }
    return 0;
}

/* ---- metrics ----------------------------------------------------------- */

static uint64_t hwp__path_total(const hwp_path_row *r, size_t n) {
    uint64_t t = 0;
    size_t i;
    for (i = 0; i < n; i++) t += r[i].count;
    return t;
}

/* Sum of the run of rows equal to r[*i]; advances *i past it. */
static uint64_t hwp__path_run(const hwp_path_row *r, size_t n, size_t *i) {
    uint64_t c = r[*i].count;
    size_t j = *i + 1;
    while (j < n && hwp_path_pd_eq(&r[j].pd, &r[*i].pd)) c += r[j++].count;
    *i = j;
    return c;
}

HWP_API double hwp_path_overlap(hwp_path_row *a, size_t na, hwp_path_row *b,
                                size_t nb) {
    double ta, tb, sum = 0.0;
    size_t i = 0, j = 0;
    if (!a || !b || !na || !nb) return 0.0;
    ta = (double)hwp__path_total(a, na);
    tb = (double)hwp__path_total(b, nb);
    if (ta <= 0.0 || tb <= 0.0) return 0.0;
    hwp__path_sort(a, na, hwp__path_after_key);
    hwp__path_sort(b, nb, hwp__path_after_key);
    while (i < na && j < nb) {
        if (hwp__path_after_key(&a[i], &b[j])) {
            hwp__path_run(b, nb, &j);
        } else if (hwp__path_after_key(&b[j], &a[i])) {
            hwp__path_run(a, na, &i);
        } else {
            double sa = (double)hwp__path_run(a, na, &i) / ta;
            double sb = (double)hwp__path_run(b, nb, &j) / tb;
            sum += sa < sb ? sa : sb;
        }
    }
    return 100.0 * sum;
}

HWP_API hwp_status hwp_phase_score(const uint32_t *ref, const uint32_t *det,
                                   size_t n, uint32_t min_run,
                                   hwp_phase_scores *out) {
    size_t i, run = 1, stable = 0, runs = 0;
    uint64_t same = 0, same_ok = 0;
    if (!ref || !det || !out || !n) return HWP_EINVAL;
    hwp__zero(out, sizeof *out);
    if (!min_run) min_run = 2;
    for (i = 1; i <= n; i++) {
        bool dc = i < n && det[i] != det[i - 1];
        if (i < n) {
            bool rc = ref[i] != ref[i - 1];
            out->ref_changes += rc;
            out->det_changes += dc;
            out->hits += rc && dc;
            same += !rc;
            same_ok += !rc && !dc;
        }
        if (i == n || dc) { /* a detected run of `run` intervals ends */
            runs++;
            if (run >= min_run) stable += run;
            run = 1;
        } else {
            run++;
        }
    }
    out->sensitivity =
        out->ref_changes ? 100.0 * (double)out->hits / (double)out->ref_changes : 100.0;
    out->false_pos = out->det_changes
                         ? 100.0 * (double)(out->det_changes - out->hits) /
                               (double)out->det_changes
                         : 0.0;
    out->same_phase = same ? 100.0 * (double)same_ok / (double)same : 100.0;
    out->stability = 100.0 * (double)stable / (double)n;
    out->avg_phase_len = (double)n / (double)runs;
    return HWP_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_IMPL */
