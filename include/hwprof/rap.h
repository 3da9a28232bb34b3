/* SPDX-License-Identifier: MIT */
/* hwprof/rap.h: Range Adaptive Profiling trees in fixed memory.
 *
 * Model of Mysore, Agrawal, Sherwood, Shrivastava and Suri, "Profiling
 * over Adaptive Ranges", CGO 2006. A stream of 64-bit keys (PCs, load
 * values, data addresses, any event identifier) inside a declared domain
 * [key_base, key_base + 2^key_bits) is summarised into a tree of ranges:
 * every event is counted once, in the smallest range of the tree that
 * holds it (sec. 2.1); a range whose counter passes SplitThreshold = eps n
 * / log(R) grows b children (sec. 2.2); batched, bottom-up merges at
 * exponentially growing intervals fold ranges that no longer carry weight
 * back into their parents (sec. 3.1); hot ranges are read off with the
 * paper's definition (sec. 4.1). Counters are never decremented, so every
 * estimate is a lower bound (sec. 4.3), and the sum of a range's ancestors
 * bounds what it may be missing.
 *
 * The paper's hardware (sec. 3.3) is a pipeline beside the core: a stage-0
 * buffer that combines identical events, a TCAM that finds the smallest
 * range, the counters and the split comparator. The host pays only when
 * the engine falls so far behind that stage 0 is full; the cost model here
 * is that queue (docs/rap.md, "Cost model").
 *
 * Where the paper leaves a choice open, the reason is next to the code
 * that makes it; docs/rap.md collects them ("Choices").
 *
 * API (hot paths inline, the rest where HWPROF_IMPL is defined)
 *   hwp_rap_bytes(desc), HWP_RAP_BYTES(nodes, buffer, cache)
 *   hwp_rap_init(r, mem, bytes, desc, cost)   mem of any alignment
 *   hwp_rap_add(r, key, weight), hwp_rap_insn(r, insn)     hot paths
 *   hwp_rap_takes(d, insn), hwp_rap_key(insn, source)      what rap_insn feeds
 *   hwp_rap_reset, hwp_rap_flush, hwp_rap_merge, hwp_rap_get_stats
 *   hwp_rap_retire(r, lo, hi)          code in [lo, hi] is gone: fold it
 *   hwp_rap_query(r, lo, hi, &est)     estimate and bounds of [lo, hi]
 *   hwp_rap_estimate(r, lo, hi, &lower, &upper)   the bounds alone
 *   hwp_rap_top(r, bits, out, cap)     hottest aligned 2^bits-key blocks
 *   hwp_rap_hot(r, phi, out, cap)      hot ranges (sec. 4.1)
 *   hwp_rap_foreach(r, fn, ctx)        every range, children first
 *   hwp_rap_bound(r)                   additive error of every range
 *   hwp_rap_accuracy(r, phi, exact, ctx, &acc)   against an exact profile
 *   hwp_rap_nodes_for(eps, w, b)       worst-case nodes, to size a pool
 *   hwp_rap_write_json / read_desc / read_json, write_text, write_svg(_range)
 *   hwp_rap_desc_fields(&n)            the desc's fields (base.h's hwp_field)
 *
 * Every member of hwp_rap is private: it is declared here only so that a
 * host can allocate one statically.
 */
#ifndef HWPROF_RAP_H
#define HWPROF_RAP_H

#include "base.h"
#include "cost.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Which field of hwp_insn hwp_rap_insn() profiles. */
enum {
    HWP_RAP_SRC_PC = 0,  /* code profile (sec. 4.2)                    */
    HWP_RAP_SRC_NEXT_PC, /* targets / next instruction                 */
    HWP_RAP_SRC_ADDR,    /* data addresses (sec. 4.4)                  */
    HWP_RAP_SRC_VALUE    /* load values (sec. 4.1, 4.4)                */
};

/* desc.buffer for a tree fed directly, with no stage 0. */
#define HWP_RAP_BUFFER_NONE 0xFFFFFFFFu

/* Zero means the default for every field; docs/rap.md attributes each. */
typedef struct hwp_rap_desc {
    uint64_t key_base;    /* first key of the domain; 0                   */
    uint32_t key_bits;    /* the domain holds 2^key_bits keys, 1..64; 64 */
    uint32_t branching;   /* b: 2, 4, 8 or 16; 4 (sec. 3.1)               */
    double eps;           /* error parameter in [1e-9, 1), kept to 9
                             decimals (the report's); 0.10, the eps the
                             paper pairs with ~500 nodes (sec. 4.3)       */
    uint32_t nodes;       /* tree nodes, b + 1 .. 2^30; 512 (8 KB at the
                             128 bits a node of sec. 3.4)                 */
    uint32_t q;           /* merge interval ratio 2..64; 2 (sec. 3.1)     */
    uint64_t first_merge; /* events before the first merge batch; 1024
                             (the 2^10 of sec. 3.3)                       */
    uint32_t buffer;      /* stage-0 entries, a power of two up to 2^20;
                             1024 (the 1k buffer of sec. 3.3);
                             HWP_RAP_BUFFER_NONE: no stage 0              */
    uint32_t cache;       /* lookup-cache entries: a power of two up to
                             2^20; 0 = none                               */
    uint32_t source;      /* HWP_RAP_SRC_*, for hwp_rap_insn              */
    uint32_t cls_mask;    /* HWP_CLS_BIT()s hwp_rap_insn takes; 0 = all   */
    uint32_t ev_mask;     /* HWP_EV_* bits of which one must be set; 0 =
                             no requirement                               */
    double hot;           /* hot fraction for the reports, [1e-9, 1] to 9
                             decimals; 0.10 (sec. 4.1)                    */
} hwp_rap_desc;

/* What a host may read. The first four are every model's. Weights, not
 * calls: an event of weight 3 counts 3. */
typedef struct hwp_rap_stats {
    uint64_t events;   /* weight offered to hwp_rap_add / hwp_rap_insn   */
    uint64_t dropped;  /* weight of keys outside the declared domain     */
    uint64_t evicted;  /* ranges folded into a parent by merges and by
                          hwp_rap_retire                                */
    uint64_t cycles;   /* host stall cycles charged to the cost shim     */
    uint64_t n;        /* weight in the tree                             */
    uint64_t buffered; /* weight waiting in stage 0                      */
    uint64_t updates;  /* tree updates (entries leaving stage 0)         */
    uint64_t splits, merges, early_merges, deferred, scanned;
    uint64_t threshold; /* SplitThreshold at the current n               */
    uint64_t bound;    /* hwp_rap_bound(): additive error of any range   */
    uint64_t engine_cycles; /* busy time of the modelled engine          */
    uint32_t nodes, peak, pool, levels;
} hwp_rap_stats;

/* Estimate of the weight of keys in [lo, hi]: lower <= true <= upper, and
 * estimate spreads the count of each range that only partly overlaps
 * [lo, hi] evenly over that range's keys (a point between the bounds). */
typedef struct hwp_rap_est {
    uint64_t lower, upper;
    double estimate;
} hwp_rap_est;

/* One range of the tree: 128 bits, as in sec. 3.4. Its range is implied
 * by the path from the root (a multibit trie, sec. 3.3 stage 2). */
typedef struct hwp_rap_node {
    uint64_t count; /* events whose smallest containing range is this   */
    uint32_t child; /* pool index of the first child; the present
                       children sit contiguously in digit order          */
    uint16_t mask;  /* bit d: the child for digit d exists               */
    uint8_t depth;  /* 0 = root, which covers the whole domain           */
    uint8_t flags;  /* HWP__RAP_GARBAGE while a slot awaits compaction   */
} hwp_rap_node;

HWP_STATIC_ASSERT(rap_node_is_16_bytes, sizeof(hwp_rap_node) == 16);

/* A stage-0 entry: a key (relative to key_base) and its weight. */
typedef struct hwp_rap_slot {
    uint64_t key, count;
} hwp_rap_slot;

/* A lookup-cache entry: the smallest range holding `key`, valid while the
 * tree's shape is the one of `epoch`. */
typedef struct hwp_rap_hit {
    uint64_t key;
    uint32_t node, epoch;
} hwp_rap_hit;

#define HWP__RAP_JUMP_BITS 8u /* the jump table takes 8 key bits */
#define HWP__RAP_JUMP (1u << HWP__RAP_JUMP_BITS)

/* The walk's shortcut tables, in the host's storage like the tree: the
 * TCAM of sec. 3.3 finds the smallest range in one step, software walks
 * the trie, and these tables let it start deep. */
typedef struct hwp__rap_index {
    hwp_rap_node *jump[HWP__RAP_JUMP];
    hwp_rap_node *skip[HWP__RAP_JUMP];
    uint64_t skip_lo[HWP__RAP_JUMP];
    uint8_t skip_sh[HWP__RAP_JUMP];
} hwp__rap_index;

typedef struct hwp_rap {
    hwp_head head;
    hwp_rap_desc desc;
    hwp_cost *cost;
    hwp_rap_node *pool;
    hwp__rap_index *ix;
    uint64_t *live;     /* compaction: a bit per slot                     */
    uint32_t *rank;     /* compaction: live slots before each word        */
    hwp_rap_slot *buf;  /* stage 0 in arrival order, NULL when off        */
    uint32_t *bidx;     /* stage 0's key index: sequence numbers          */
    uint64_t *fin;      /* engine queue: when stage 1 freed, last q + 1   */
    hwp_rap_hit *cache;
    uint64_t key_base, key_mask;
    uint64_t n;
    uint64_t split_at;  /* all-ones while splits are deferred             */
    uint64_t next_cold, recalc_at, next_merge, last_merge;
    double eps_per_level;
    uint64_t updates, buffered, buf_limit, dropped;
    uint64_t splits, merges, early_merges, folded, deferred, scanned;
    /* Engine timing, in host cycles (cost shim attached only). */
    uint64_t busy, stall, engine;
    uint64_t quiet;     /* updates when split or merge work last ended    */
    uint32_t qslots, qi;
    uint32_t bhead, btail;     /* stage 0: sequence numbers              */
    uint32_t buf_mask, idx_shift;
    uint32_t cap, used, nodes, peak, levels;
    uint32_t digit_mask, log2b, cache_mask, epoch;
    uint32_t spine_node, spine_depth;
    uint64_t spine_lo, spine_mask;
    uint32_t jump_shift, jump_mask, jump_depth;
    uint32_t cfg, walk;
    uint8_t step[64];
    uint8_t lsh[68];
    uint8_t shift[68]; /* shift[d]: a depth-d range spans 2^shift[d] keys */
} hwp_rap;

/* What hwp_rap_foreach, hwp_rap_hot and hwp_rap_top report for a range. */
typedef struct hwp_rap_range {
    uint64_t lo, hi;  /* the range, inclusive                           */
    uint64_t count;   /* the node's own counter (0 for a hwp_rap_top
                         block that is not a node)                     */
    uint64_t sum;     /* lower bound on the weight in [lo, hi]          */
    uint64_t upper;   /* upper bound: sum + ancestors + stage 0         */
    uint64_t excl;    /* count + non-hot descendants (hot weight, 4.1)   */
    uint32_t depth;
    uint32_t node;    /* pool index                                     */
    uint32_t hot;     /* 1 when excl >= phi * n (desc.hot in foreach)    */
    uint32_t pad;
} hwp_rap_range;

typedef void (*hwp_rap_visit)(void *ctx, const hwp_rap_range *range);

/* Exact count of events with key in [lo, hi], supplied by the host for
 * accuracy measurement (an offline or shadow profiler). */
typedef uint64_t (*hwp_rap_exact_fn)(void *ctx, uint64_t lo, uint64_t hi);

typedef struct hwp_rap_acc {
    uint32_t hot;       /* hot ranges found                             */
    double mean_pct;    /* average percent error on hot ranges (4.3)    */
    double max_pct;     /* worst percent error on a hot range           */
    double worst_eps;   /* max over all nodes of (true - sum) / n       */
    uint64_t violations; /* nodes whose true count fell outside
                            [sum, upper]: must be 0                     */
} hwp_rap_acc;

#define HWP__RAP_MAGIC HWP__MAGIC('r', 'a', 'p', ' ')
#define HWP__RAP_GARBAGE 1u
/* What the per-event path knows at compile time (r->cfg, and the `cfg`
 * constant of each inlined copy of hwp__rap_update). */
#define HWP__RAP_FAST 1u   /* b = 4 and 2 | w (the strided walk), no cache */
#define HWP__RAP_NOCOST 2u /* no cost shim: no timing                     */
#define HWP__RAP_COST 4u   /* a cost shim: the engine queue is timed      */
#define HWP__RAP_BUF 8u    /* a stage-0 buffer (r->cfg only)             */
#define HWP__RAP_DOM 16u   /* a domain narrower than 2^64: keys are checked */
#if defined(__GNUC__) || defined(__clang__)
#define HWP__RAP_ASSUME(x) ((x) ? (void)0 : __builtin_unreachable())
#else
#define HWP__RAP_ASSUME(x) ((void)0)
#endif
#define HWP__RAP_A16(n) ((((size_t)(n)) + 15u) & ~(size_t)15u)
/* Storage for `nodes` tree nodes, `buffer` stage-0 entries (0 for none)
 * and `cache` lookup entries, including the alignment padding: the pool
 * and its compaction bitmaps, the walk's tables, stage 0 (16 bytes an
 * entry, an 8-byte index of 2 x entries) and the engine queue (8 bytes a
 * stage-0 entry, plus one). Equal to hwp_rap_bytes() of the desc. */
#define HWP_RAP_BYTES(nodes, buffer, cache)                                   \
    (HWP__RAP_A16((size_t)(nodes) * 16u) +                                    \
     HWP__RAP_A16(((size_t)(nodes) + 63u) / 64u * 8u) +                       \
     HWP__RAP_A16(((size_t)(nodes) + 63u) / 64u * 4u) +                       \
     HWP__RAP_A16(sizeof(hwp__rap_index)) +                                   \
     HWP__RAP_A16((size_t)(buffer) * 16u) +                                   \
     HWP__RAP_A16((size_t)(buffer) * 8u) +                                    \
     HWP__RAP_A16(((size_t)(buffer) + 1u) * 8u) +                             \
     HWP__RAP_A16((size_t)(cache) * 16u) + (HWP__ALIGN - 1u))

/* The contract's calls (cost.h, HWP__CONTRACT). */
HWP__CONTRACT(rap);
HWP_API uint64_t hwp_rap_nodes_for(double eps, unsigned key_bits,
                                   unsigned branching);
HWP_API hwp_status hwp_rap_flush(hwp_rap *r);
/* The keys in [lo, hi] name something that is gone (code a JIT freed or
 * rewrote, an unmapped page): every range inside [lo, hi] folds its
 * subtree into itself, as a merge would (counts kept, nodes freed for
 * the code that replaces it), after stage 0 has drained. Ranges that
 * straddle lo or hi keep their children. */
HWP_API hwp_status hwp_rap_retire(hwp_rap *r, uint64_t lo, uint64_t hi);
HWP_API hwp_status hwp_rap_foreach(const hwp_rap *r, hwp_rap_visit fn,
                                   void *ctx);
HWP_API hwp_status hwp_rap_query(const hwp_rap *r, uint64_t lo, uint64_t hi,
                                 hwp_rap_est *out);
HWP_API hwp_status hwp_rap_estimate(const hwp_rap *r, uint64_t lo,
                                    uint64_t hi, uint64_t *lower,
                                    uint64_t *upper);
HWP_API uint64_t hwp_rap_bound(const hwp_rap *r);
HWP_API size_t hwp_rap_hot(const hwp_rap *r, double phi, hwp_rap_range *out,
                           size_t cap);
HWP_API size_t hwp_rap_top(const hwp_rap *r, unsigned bits,
                           hwp_rap_range *out, size_t cap);
HWP_API hwp_status hwp_rap_accuracy(const hwp_rap *r, double phi,
                                    hwp_rap_exact_fn exact, void *ctx,
                                    hwp_rap_acc *out);
HWP_API void hwp_rap_write_svg(const hwp_rap *r, const hwp_writer *w);
HWP_API hwp_status hwp_rap_write_svg_range(const hwp_rap *r,
                                           const hwp_writer *w, uint64_t lo,
                                           uint64_t hi);

/* Cold paths the hot path calls when something fires. */
HWP_API void hwp__rap_split(hwp_rap *r, uint32_t idx, uint64_t key,
                            unsigned depth);
HWP_API void hwp__rap_cold(hwp_rap *r);
HWP_API void hwp__rap_tree(hwp_rap *r, uint64_t key, uint64_t weight);
HWP_API void hwp__rap_push(hwp_rap *r, uint32_t *ix, uint64_t key,
                           uint64_t weight);
HWP_API void hwp__rap_drain(hwp_rap *r, uint64_t limit);
HWP_API void hwp__rap_wait(hwp_rap *r, uint64_t t, uint64_t f);

/* Children before digit `dig` of a mask of up to 16 bits. */
HWP_INLINE unsigned hwp__rap_popcnt16(unsigned m) {
#if defined(__POPCNT__) && (defined(__GNUC__) || defined(__clang__))
    return (unsigned)__builtin_popcount(m);
#else
    if (m < 16u) /* b <= 4: a nibble table in a constant */
        return (unsigned)(0x4332322132212110ull >> (4u * m)) & 15u;
    m = m - ((m >> 1) & 0x5555u);
    m = (m & 0x3333u) + ((m >> 2) & 0x3333u);
    m = (m + (m >> 4)) & 0x0F0Fu;
    return (m + (m >> 8)) & 0x1Fu;
#endif
}

/* Inlined into the per-event path even where the compiler would rather
 * call: a call per event costs more than the walk. */
#define HWP__RAP_HOT HWP__FORCE_INLINE

/* The walk for b <= 4 when every level takes log2 b key bits: kk holds
 * the key bits below the start of x's range, rotated so that the next
 * digit is its low lb bits. lb is a constant at each call, so the shifts
 * are immediates; a level is two loads, a table lookup and one branch. */
HWP__RAP_HOT hwp_rap_node *hwp__rap_stride(const hwp_rap *r, hwp_rap_node *x,
                                           uint64_t kk, unsigned lb) {
    hwp_rap_node *pool = r->pool;
    kk = kk << lb | kk >> (64u - lb);
    for (;;) {
        unsigned s = r->step[((unsigned)x->mask << lb) |
                             ((unsigned)kk & ((1u << lb) - 1u))];
        if (!s) return x; /* a leaf, or partial children: count here */
        x = pool + (x->child + s - 1u);
        kk = kk << lb | kk >> (64u - lb);
    }
}

/* Stages 1-2 of sec. 3.3: the smallest range containing key (the
 * longest-prefix match). A code region in a 64-bit space hangs below a
 * long chain of single-child nodes (the spine); inside it, jump[] gives
 * the deepest node on the next 8 key bits of the path, or the end of that
 * node's chain of single-internal-child nodes when the key lies inside
 * it, so a hot key does not walk 20 levels one by one. */
HWP__RAP_HOT hwp_rap_node *hwp__rap_descend(const hwp_rap *r, uint64_t key,
                                            bool fast) {
    hwp_rap_node *pool = r->pool, *x = pool;
    unsigned d = 0, m;
    if (!((key ^ r->spine_lo) & r->spine_mask)) {
        const hwp__rap_index *ix = r->ix;
        unsigned e = (unsigned)(key >> r->jump_shift) & r->jump_mask;
        x = ((key ^ ix->skip_lo[e]) >> ix->skip_sh[e]) ? ix->jump[e]
                                                       : ix->skip[e];
        d = x->depth;
    }
    if (fast || r->walk == 2u) return hwp__rap_stride(r, x, key << r->lsh[d], 2u);
    if (r->walk == 1u) return hwp__rap_stride(r, x, key << r->lsh[d], 1u);
    while ((m = x->mask) != 0) {
        unsigned dig = (unsigned)(key >> r->shift[d + 1]) & r->digit_mask;
        if (!((m >> dig) & 1u)) break; /* partial children: count here */
        x = pool + (x->child + hwp__rap_popcnt16(m & ((1u << dig) - 1u)));
        d++;
    }
    return x;
}

/* The engine of sec. 3.3 is a pipeline beside the core: tree updates
 * enter stage 1 in order, one every HWP_COST_RAP_ISSUE cycles (its
 * slowest stages, the TCAM and the SRAM, take 2 cycles each, sec. 3.4),
 * and reach the split comparator HWP_COST_RAP_EVENT cycles later. Up to
 * `buffer` updates may wait in stage 0. An update that arrives (at the
 * host's clock plus the stalls so far) while the one `buffer` places
 * ahead has not entered stage 1 finds stage 0 full: the host stalls until
 * it does (hwp__rap_wait, out of line: the common case is no stall).
 * fin[] keeps, for the last `buffer` + 1 updates, when stage 1 could take
 * the next one; the update `buffer` + 1 back frees stage 1 exactly when
 * the one `buffer` back enters it, unless that one had not yet arrived,
 * and arrivals are in order. The same queue as the branch queue of
 * pathprof.h. */
HWP__RAP_HOT void hwp__rap_engine(hwp_rap *r) {
    hwp_cost *c = r->cost;
    /* Arrival: the host's clock plus its stalls, which only grow. */
    uint64_t t = c->clock + r->stall, b = r->busy;
    uint64_t *f = r->fin + r->qi;
    uint32_t ii = c->cycles[HWP_COST_RAP_ISSUE];
    if (HWP_UNLIKELY(*f > t)) {
        hwp__rap_wait(r, t, *f);
        t = *f;
    }
    r->engine += ii;
    b = (b > t ? b : t) + ii; /* enters stage 1 at b - ii */
    r->busy = b;
    *f = b;
    r->qi = r->qi + 1u == r->qslots ? 0u : r->qi + 1u;
}

/* Stages 1-4 of sec. 3.3 for one tree update: find, count, compare with
 * the split threshold. `cfg` is a constant at each call (hwp_rap_add
 * picks it from r->cfg): with HWP__RAP_FAST neither the cache test nor
 * the walk selection is on the path; HWP__RAP_NOCOST leaves out the
 * engine's timing, HWP__RAP_COST includes it without a NULL test. The
 * key is relative to key_base and inside the domain. */
HWP__RAP_HOT void hwp__rap_update(hwp_rap *r, uint64_t key, uint64_t weight,
                                  unsigned cfg) {
    const bool fast = (cfg & HWP__RAP_FAST) != 0;
    /* Fields are read into locals first: the count store may alias them,
     * and reloading after it costs instructions on every event. */
    hwp_rap_node *node;
    hwp_rap_hit *h = NULL;
    uint64_t n = r->n + weight, count;
    r->n = n;
    r->updates++;
    if (!fast && r->cache)
        h = r->cache + (((key * 0x9E3779B97F4A7C15ull) >> 32) & r->cache_mask);
    if (h && h->key == key && h->epoch == r->epoch) {
        node = r->pool + h->node;
    } else {
        node = hwp__rap_descend(r, key, fast);
        if (h) {
            h->key = key;
            h->node = (uint32_t)(node - r->pool);
            h->epoch = r->epoch;
        }
    }
    count = node->count + weight;
    node->count = count;
    if (cfg & HWP__RAP_COST) HWP__RAP_ASSUME(r->cost != NULL);
    if (!(cfg & HWP__RAP_NOCOST) && r->cost) hwp__rap_engine(r);
    if (HWP_UNLIKELY(count > r->split_at) && node->depth < r->levels)
        hwp__rap_split(r, (uint32_t)(node - r->pool), key, node->depth);
    if (HWP_UNLIKELY(n >= r->next_cold)) hwp__rap_cold(r);
}

/* Stage 0 (sec. 3.3): an event whose key already waits there adds to its
 * entry; otherwise it joins the back of the queue, and when the queue is
 * full its oldest entry leaves for the tree first (hwp__rap_push). The
 * index finds a waiting key in one probe; a key whose index entry was
 * taken by another waiting key just gets an entry of its own. Past
 * buf_limit waiting weight, the oldest entries leave until it is back
 * under: weight cannot hide in stage 0 for the rest of the run. */
HWP__RAP_HOT void hwp__rap_stage0(hwp_rap *r, uint64_t key, uint64_t weight) {
    uint32_t *ix = r->bidx + ((key * 0x9E3779B97F4A7C15ull) >> r->idx_shift);
    uint32_t s = *ix, head = r->bhead;
    hwp_rap_slot *e = r->buf + (s & r->buf_mask);
    uint64_t b;
    if (HWP_UNLIKELY((uint32_t)(s - head) >= (uint32_t)(r->btail - head) ||
                     e->key != key)) {
        hwp__rap_push(r, ix, key, weight);
        return;
    }
    e->count += weight;
    b = r->buffered + weight;
    r->buffered = b;
    if (HWP_UNLIKELY(b > r->buf_limit)) hwp__rap_drain(r, r->buf_limit);
}

/* One event of `weight` (>= 1) for `key`. A key outside the domain is
 * counted in stats.dropped and goes nowhere: folding it into the domain
 * would credit another region with its weight. */
HWP_INLINE void hwp_rap_add(hwp_rap *r, uint64_t key, uint64_t weight) {
    unsigned f = r->cfg;
    if (HWP_LIKELY(f == (HWP__RAP_FAST | HWP__RAP_NOCOST))) {
        hwp__rap_update(r, key, weight, HWP__RAP_FAST | HWP__RAP_NOCOST);
        return;
    }
    if (f & HWP__RAP_DOM) { /* a 64-bit domain holds every key */
        key -= r->key_base;
        if (HWP_UNLIKELY(key > r->key_mask)) {
            r->dropped += weight;
            return;
        }
        f &= ~HWP__RAP_DOM;
        if (f == (HWP__RAP_FAST | HWP__RAP_NOCOST)) {
            hwp__rap_update(r, key, weight, HWP__RAP_FAST | HWP__RAP_NOCOST);
            return;
        }
    }
    if (f & HWP__RAP_BUF) {
        hwp__rap_stage0(r, key, weight);
    } else if (f == (HWP__RAP_FAST | HWP__RAP_COST)) {
        hwp__rap_update(r, key, weight, HWP__RAP_FAST | HWP__RAP_COST);
    } else {
        hwp__rap_tree(r, key, weight);
    }
}

/* Whether a record passes a desc's class and event filters, and the key
 * it gives for a HWP_RAP_SRC_* source: what hwp_rap_insn feeds the tree,
 * for a host that feeds a copy of its own (an exact peer, an anchor). */
HWP_INLINE bool hwp_rap_takes(const hwp_rap_desc *d, const hwp_insn *in) {
    if (d->cls_mask && in->cls < 32u && !(d->cls_mask & HWP_CLS_BIT(in->cls)))
        return false;
    return !d->ev_mask || (d->ev_mask & in->events) != 0;
}

/* The field of a record that HWP_RAP_SRC_* `source` names. */
HWP_INLINE uint64_t hwp_rap_key(const hwp_insn *in, uint32_t source) {
    switch (source) {
    case HWP_RAP_SRC_NEXT_PC: return in->next_pc;
    case HWP_RAP_SRC_ADDR: return in->addr;
    case HWP_RAP_SRC_VALUE: return in->value;
    default: return in->pc;
    }
}
#define hwp__rap_takes hwp_rap_takes /* the model's spelling */
#define hwp__rap_key hwp_rap_key

/* The shared record: filtered by class and event bits, keyed by source. */
HWP_INLINE void hwp_rap_insn(hwp_rap *r, const hwp_insn *in) {
    if (hwp__rap_takes(&r->desc, in))
        hwp_rap_add(r, hwp__rap_key(in, r->desc.source), 1);
}

/* ---- Two-dimensional ranges ------------------------------------------------
 *
 * The paper's future work (sec. 6): pairs such as (PC, data address) or
 * (PC, load value), profiled over rectangles. hwp_rap2 is the RAP tree
 * above over one interleaved key: the low m = min(x_bits, y_bits) bits
 * of x and y alternate (x's bit above y's), and the longer dimension's
 * remaining bits sit above them. Every prefix of such a key fixes a
 * prefix of x and a prefix of y, so every range of the tree is an
 * aligned rectangle (with b = 4 and equal widths, a quadtree cell) and
 * the tree's update, split, merge, stage 0, memory and bound carry over
 * unchanged: none of them looks inside the key. docs/rap.md,
 * "Two-dimensional ranges", states the bound and the cost.
 *
 * It lives in this header because it is that tree: its queries walk the
 * tree's private nodes and its report embeds the tree's own report.
 *
 * API
 *   hwp_rap2_bytes(desc), HWP_RAP2_BYTES(nodes, buffer, cache)
 *   hwp_rap2_init(r, mem, bytes, desc, cost), reset, flush, merge
 *   hwp_rap2_add(r, x, y, weight), hwp_rap2_insn(r, insn)   hot paths
 *   hwp_rap2_get_stats (hwp_rap2_stats: the tree's), hwp_rap2_get_desc
 *   hwp_rap2_query(r, &rect, &est)   estimate and bounds of a rectangle
 *   hwp_rap2_hot(r, phi, out, cap)   hot rectangles (sec. 4.1's rule)
 *   hwp_rap2_foreach, hwp_rap2_bound, hwp_rap2_accuracy
 *   hwp_rap2_write_json / write_text / read_desc / read_json,
 *   hwp_rap2_desc_fields */

/* Zero means the default for every field. */
typedef struct hwp_rap2_desc {
    uint64_t x_base;   /* first x of the domain; 0                        */
    uint64_t y_base;   /* first y of the domain; 0                        */
    uint32_t x_bits;   /* x in [x_base, x_base + 2^x_bits); 1..63; 32     */
    uint32_t y_bits;   /* likewise for y; x_bits + y_bits <= 64; 32       */
    uint32_t x_source; /* HWP_RAP_SRC_* for hwp_rap2_insn; 0 = PC         */
    uint32_t y_source; /* HWP_RAP_SRC_*; 0 = ADDR (PC only on x)          */
    /* The tree's fields as in hwp_rap_desc, with its defaults. key_bits
     * is x_bits + y_bits (0 or that value), key_base and source must be
     * 0: the dimensions carry the domain and the sources. */
    hwp_rap_desc tree;
} hwp_rap2_desc;

/* A rectangle [x_lo, x_hi] x [y_lo, y_hi], inclusive. */
typedef struct hwp_rap2_box {
    uint64_t x_lo, x_hi, y_lo, y_hi;
} hwp_rap2_box;

/* A range of the tree as a rectangle; the counts as in hwp_rap_range. */
typedef struct hwp_rap2_rect {
    hwp_rap2_box box;
    uint64_t count, sum, upper, excl;
    uint32_t depth, node, hot, pad;
} hwp_rap2_rect;

typedef void (*hwp_rap2_visit)(void *ctx, const hwp_rap2_rect *rect);

/* Exact weight of the pairs inside a box, supplied by the host. */
typedef uint64_t (*hwp_rap2_exact_fn)(void *ctx, const hwp_rap2_box *box);

typedef struct hwp_rap2 {
    hwp_head head;
    hwp_rap2_desc desc;
    uint64_t x_mask, y_mask;
    uint32_t m;      /* min(x_bits, y_bits): the interleaved bits of each */
    uint32_t x_long; /* 1: x has the bits above the interleaved ones     */
    hwp_rap t;       /* the tree over interleaved keys                   */
} hwp_rap2;

/* The 2-D profile's counters are its tree's, under its own name (every
 * component has an hwp_X_stats). */
typedef hwp_rap_stats hwp_rap2_stats;

#define HWP__RAP2_MAGIC HWP__MAGIC('r', 'a', 'p', '2')
/* The tree's storage: a 2-D profile adds no memory to it. */
#define HWP_RAP2_BYTES(nodes, buffer, cache) HWP_RAP_BYTES(nodes, buffer, cache)

/* The contract's calls (cost.h, HWP__CONTRACT). */
HWP__CONTRACT(rap2);
HWP_API hwp_status hwp_rap2_flush(hwp_rap2 *r);
HWP_API hwp_status hwp_rap2_foreach(const hwp_rap2 *r, hwp_rap2_visit fn,
                                    void *ctx);
HWP_API hwp_status hwp_rap2_query(const hwp_rap2 *r, const hwp_rap2_box *box,
                                  hwp_rap_est *out);
HWP_API uint64_t hwp_rap2_bound(const hwp_rap2 *r);
HWP_API size_t hwp_rap2_hot(const hwp_rap2 *r, double phi, hwp_rap2_rect *out,
                            size_t cap);
HWP_API hwp_status hwp_rap2_accuracy(const hwp_rap2 *r, double phi,
                                     hwp_rap2_exact_fn exact, void *ctx,
                                     hwp_rap_acc *out);

/* The low 32 bits of v on the even bit positions. */
HWP_INLINE uint64_t hwp__rap2_spread(uint64_t v) {
    v &= 0xFFFFFFFFull;
    v = (v | v << 16) & 0x0000FFFF0000FFFFull;
    v = (v | v << 8) & 0x00FF00FF00FF00FFull;
    v = (v | v << 4) & 0x0F0F0F0F0F0F0F0Full;
    v = (v | v << 2) & 0x3333333333333333ull;
    return (v | v << 1) & 0x5555555555555555ull;
}

/* The tree key of (x, y), both relative to their bases and in range. */
HWP_INLINE uint64_t hwp__rap2_join(const hwp_rap2 *r, uint64_t x, uint64_t y) {
    unsigned m = r->m;
    uint64_t low = hwp_mask64(m);
    uint64_t k = hwp__rap2_spread(x & low) << 1 | hwp__rap2_spread(y & low);
    /* Two shifts of m: 2m may be 64. */
    return ((r->x_long ? x : y) >> m << m << m) | k;
}

/* One pair of `weight` (>= 1). A pair with either coordinate outside its
 * dimension's domain is counted in stats.dropped and goes nowhere. */
HWP_INLINE void hwp_rap2_add(hwp_rap2 *r, uint64_t x, uint64_t y,
                             uint64_t weight) {
    x -= r->desc.x_base;
    y -= r->desc.y_base;
    if (HWP_UNLIKELY(x > r->x_mask || y > r->y_mask)) {
        r->t.dropped += weight;
        return;
    }
    hwp_rap_add(&r->t, hwp__rap2_join(r, x, y), weight);
}

/* The shared record: the tree's class and event filters, then the pair of
 * fields x_source and y_source name. */
HWP_INLINE void hwp_rap2_insn(hwp_rap2 *r, const hwp_insn *in) {
    if (hwp__rap_takes(&r->desc.tree, in))
        hwp_rap2_add(r, hwp__rap_key(in, r->desc.x_source),
                     hwp__rap_key(in, r->desc.y_source), 1);
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_RAP_H */

/* ======================================================================= */
#if defined(HWPROF_IMPL) && !defined(HWPROF_RAP_IMPL)
#define HWPROF_RAP_IMPL

#ifdef __cplusplus
extern "C" {
#endif

/* Defaults and ranges as hwp_rap_desc's comments attribute them. eps
 * and hot are kept on the reports' 9-decimal grid (base.h's fill), so the
 * instance runs with what its report states; key_base and nodes depend on
 * other fields, checked in hwp__rap_fill. */
static const hwp_field hwp__rap_desc_f[] = {
    HWP__FN(hwp_rap_desc, "rap", key_base, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
    HWP__FN(hwp_rap_desc, "rap", key_bits, UINT, 64, 1, 64, 0,
            "rap: key_bits must be 1..64"),
    HWP__FN(hwp_rap_desc, "rap", branching, UINT, 4, 2, 16, HWP_FIELD_POW2,
            "rap: branching must be 2, 4, 8 or 16"),
    HWP__FN(hwp_rap_desc, "rap", eps, F64, HWP__NANO(0.10), 1, 999999999u, 0,
            "rap: eps must be in [1e-9, 1) (reports carry 9 decimals)"),
    HWP__FN(hwp_rap_desc, "rap", nodes, UINT, 512, 3, 1u << 30, 0,
            "rap: nodes must be in [branching + 1, 2^30]"),
    HWP__FN(hwp_rap_desc, "rap", q, UINT, 2, 2, 64, 0, "rap: q must be 2..64"),
    HWP__FDEF(hwp_rap_desc, "rap", first_merge, 1024),
    HWP__FN(hwp_rap_desc, "rap", buffer, UINT, 1024, 1, 1u << 20,
            HWP_FIELD_POW2 | HWP_FIELD_NONE,
            "rap: buffer must be a power of two up to 2^20 or HWP_RAP_BUFFER_NONE"),
    HWP__FN(hwp_rap_desc, "rap", cache, UINT, 0, 1, 1u << 20, HWP_FIELD_POW2,
            "rap: cache must be 0 or a power of two up to 2^20"),
    HWP__FN(hwp_rap_desc, "rap", source, UINT, 0, 0, HWP_RAP_SRC_VALUE, 0,
            "rap: source must be 0..3"),
    HWP__FANY(hwp_rap_desc, "rap", cls_mask),
    HWP__FANY(hwp_rap_desc, "rap", ev_mask),
    HWP__FN(hwp_rap_desc, "rap", hot, F64, HWP__NANO(0.10), 1, 1000000000u, 0,
            "rap: hot must be in [1e-9, 1] (reports carry 9 decimals)")};

HWP__FIELDS_FN(hwp_rap_desc_fields, hwp__rap_desc_f)

/* Copy the desc (NULL: the zero desc; d may be o), fill the defaults
 * once, validate. Returns a reason or NULL. */
static const char *hwp__rap_fill(hwp_rap_desc *o, const hwp_rap_desc *d) {
    const char *why = hwp__field_fill_from(o, d, sizeof *o, hwp__rap_desc_f, HWP__N(hwp__rap_desc_f));
    if (why) return why;
    if (o->key_bits < 64 &&
        o->key_base > ~(uint64_t)0 - hwp_mask64(o->key_bits))
        return "rap: key_base + 2^key_bits must not exceed 2^64";
    if (o->key_bits == 64 && o->key_base)
        return "rap: key_base must be 0 when key_bits is 64";
    if (o->nodes < o->branching + 1u) return hwp__rap_desc_f[4].bad;
    return NULL;
}

/* Stage-0 entries of a filled desc (0: none). */
static uint32_t hwp__rap_entries(const hwp_rap_desc *o) {
    return o->buffer == HWP_RAP_BUFFER_NONE ? 0u : o->buffer;
}

HWP_API size_t hwp_rap_bytes(const hwp_rap_desc *d) {
    hwp_rap_desc o;
    if (hwp__rap_fill(&o, d)) return 0;
    return HWP_RAP_BYTES(o.nodes, hwp__rap_entries(&o), o.cache);
}

static unsigned hwp__rap_levels(unsigned key_bits, unsigned log2b) {
    return (key_bits + log2b - 1u) / log2b;
}

/* Worst case of the O(log R / eps) bound for this algorithm: between two
 * merge batches at most (q + 1) * levels / eps ranges can hold a count
 * over the threshold (counts are disjoint and the threshold is eps * n /
 * levels, with n at most q times the n of the last batch), and each such
 * range hangs from a chain of at most `levels` splits of b children. The
 * figure counts the default q = 2. */
HWP_API uint64_t hwp_rap_nodes_for(double eps, unsigned key_bits,
                                   unsigned branching) {
    double heavy, total;
    unsigned levels;
    if (!(eps > 0.0 && eps < 1.0) || key_bits < 1 || key_bits > 64 ||
        branching < 2 || branching > 16 || !hwp_is_pow2(branching))
        return 0;
    levels = hwp__rap_levels(key_bits, hwp_log2(branching));
    heavy = 3.0 * (double)levels / eps + 1.0;
    total = 1.0 + (double)branching * (double)levels * heavy;
    /* The tree can never hold more ranges than the domain has. */
    if (key_bits < 40 && total > 2.0 * (double)((uint64_t)1 << key_bits))
        total = 2.0 * (double)((uint64_t)1 << key_bits);
    return total >= 1.8e19 ? ~(uint64_t)0 : (uint64_t)total;
}

/* The threshold for the current n (sec. 2.2), and when to look again. */
static void hwp__rap_threshold(hwp_rap *r) {
    uint64_t t = (uint64_t)(r->eps_per_level * (double)r->n);
    uint64_t t4 = t >> 62 ? ~(uint64_t)0 : t << 2;
    uint64_t per_entry = 4u * ((uint64_t)r->buf_mask + 1u);
    /* Stage 0 may hold four events an entry, but never more than four
     * thresholds nor less than one: its share of the error bound then
     * scales with n (docs/rap.md, "The bound"). */
    r->split_at = t;
    r->buf_limit = per_entry < t4 ? per_entry : t4;
    if (t > r->buf_limit) r->buf_limit = t;
    r->recalc_at = r->n + (r->n >> 6) + 1u;
    if (r->recalc_at < r->n) r->recalc_at = ~(uint64_t)0;
    r->next_cold = r->recalc_at < r->next_merge ? r->recalc_at : r->next_merge;
}

/* The start of child `dig` of a depth-`depth` range that starts at lo. */
static uint64_t hwp__rap_lo_of(const hwp_rap *r, uint64_t lo, unsigned depth,
                               unsigned dig) {
    return lo | ((uint64_t)dig << r->shift[depth + 1]);
}

/* The chain below jump entry e's node x (depth d, range from lo): while
 * exactly one child has children of its own, every key that reaches that
 * child's range walks into it, so a key inside the last such range may
 * start there (skip[e]). */
static void hwp__rap_chain(hwp_rap *r, uint32_t e, uint32_t x, unsigned d,
                           uint64_t lo) {
    for (;;) {
        const hwp_rap_node *a = &r->pool[x];
        unsigned dig, k = 0, inner = 0, idig = 0;
        uint32_t next = x;
        for (dig = 0; dig < 16; dig++)
            if ((a->mask >> dig) & 1u) {
                uint32_t c = a->child + k++;
                if (r->pool[c].mask) {
                    inner++;
                    next = c;
                    idig = dig;
                }
            }
        if (inner != 1u) break;
        lo = hwp__rap_lo_of(r, lo, d, idig);
        x = next;
        d++;
    }
    r->ix->skip[e] = r->pool + x;
    r->ix->skip_lo[e] = lo;
    r->ix->skip_sh[e] = (uint8_t)(r->shift[d] < 64u ? r->shift[d] : 63u);
}

/* Point jump[] entries [base, base + 2^(shift[d] - jump_shift)) at node x
 * (depth d, range from lo), then let x's children above the jump depth
 * overwrite their parts: each entry ends up at the deepest node on its
 * path, and a node at the jump depth gets its chain. */
static void hwp__rap_jump_fill(hwp_rap *r, uint32_t x, unsigned d,
                               uint32_t base, uint64_t lo) {
    unsigned m = r->pool[x].mask, dig, k = 0, span, sub;
    uint32_t i, n = (uint32_t)1 << (r->shift[d] - r->jump_shift);
    for (i = 0; i < n; i++) {
        r->ix->jump[base + i] = r->ix->skip[base + i] = r->pool + x;
        r->ix->skip_lo[base + i] = 0;
        r->ix->skip_sh[base + i] = 63u; /* either way the walk starts at x */
    }
    if (d == r->jump_depth) hwp__rap_chain(r, base, x, d, lo);
    if (d >= r->jump_depth || !m) return;
    span = (1u << (r->shift[d] - r->shift[d + 1])) - 1u;
    sub = r->shift[d + 1] - r->jump_shift;
    for (dig = 0; dig < 16; dig++)
        if ((m >> dig) & 1u)
            hwp__rap_jump_fill(r, r->pool[x].child + k++, d + 1,
                               base + ((uint32_t)(dig & span) << sub),
                               hwp__rap_lo_of(r, lo, d, dig));
}

/* The tree changed shape: every cached lookup is stale (epoch 0 is never
 * valid, so a wrap clears the cache), and the spine and jump[] are
 * recomputed. */
static void hwp__rap_reshaped(hwp_rap *r) {
    uint32_t x = 0;
    unsigned d = 0, dig;
    uint64_t lo = 0;
    if (++r->epoch == 0) {
        if (r->cache)
            hwp__zero(r->cache, ((size_t)r->cache_mask + 1u) * sizeof *r->cache);
        r->epoch = 1;
    }
    while (hwp__rap_popcnt16(r->pool[x].mask) == 1u) {
        for (dig = 0; !((r->pool[x].mask >> dig) & 1u); dig++) {
        }
        lo |= (uint64_t)dig << r->shift[d + 1];
        x = r->pool[x].child;
        d++;
    }
    r->spine_node = x;
    r->spine_depth = d;
    r->spine_lo = lo;
    r->spine_mask = r->key_mask & ~hwp_mask64(r->shift[d]);
    r->jump_depth = d + HWP__RAP_JUMP_BITS / r->log2b;
    if (r->jump_depth > r->levels) r->jump_depth = r->levels;
    r->jump_shift = r->shift[r->jump_depth];
    r->jump_mask = (1u << (r->shift[d] - r->jump_shift)) - 1u;
    hwp__rap_jump_fill(r, x, d, 0, lo);
}

static void hwp__rap_empty(hwp_rap *r) {
    hwp__zero(r->pool, sizeof(hwp_rap_node));
    r->epoch = ~(uint32_t)0; /* the next reshape clears the cache */
    hwp__rap_reshaped(r);
    if (r->buf) {
        hwp__zero(r->buf, ((size_t)r->buf_mask + 1u) * sizeof *r->buf);
        hwp__zero(r->bidx, ((size_t)r->buf_mask + 1u) * 2u * sizeof *r->bidx);
    }
    hwp__zero(r->fin, (size_t)r->qslots * sizeof *r->fin);
    r->n = r->updates = r->buffered = r->dropped = 0;
    r->bhead = r->btail = 0;
    r->busy = r->stall = r->engine = r->quiet = 0;
    r->qi = 0;
    r->splits = r->merges = r->early_merges = r->folded = 0;
    r->deferred = r->scanned = 0;
    r->used = r->nodes = r->peak = 1;
    r->next_merge = r->desc.first_merge;
    r->last_merge = 0;
    hwp__rap_threshold(r);
}

HWP_API hwp_status hwp_rap_init(hwp_rap *r, void *mem, size_t bytes,
                                const hwp_rap_desc *d, hwp_cost *cost) {
    hwp_rap_desc o;
    const char *why;
    unsigned char *cur;
    unsigned i;
    uint32_t words, entries;
    if (!r) return HWP_EINVAL;
    hwp__zero(r, sizeof *r);
    r->head.magic = HWP__RAP_MAGIC;
    why = hwp__rap_fill(&o, d);
    entries = why ? 0u : hwp__rap_entries(&o);
    if (hwp__admit(&r->head, why, &mem, &bytes,
                       why ? 0u
                           : HWP_RAP_BYTES(o.nodes, entries, o.cache) -
                                 (HWP__ALIGN - 1u)) != HWP_OK)
        return (hwp_status)r->head.status;
    cur = (unsigned char *)mem;
    r->desc = o;
    r->cost = cost;
    words = (o.nodes + 63u) / 64u;
    r->pool = (hwp_rap_node *)hwp__carve(&cur, (size_t)o.nodes * 16u);
    r->live = (uint64_t *)hwp__carve(&cur, (size_t)words * 8u);
    r->rank = (uint32_t *)hwp__carve(&cur, (size_t)words * 4u);
    r->ix = (hwp__rap_index *)hwp__carve(&cur, sizeof(hwp__rap_index));
    if (entries) {
        r->buf = (hwp_rap_slot *)hwp__carve(&cur, (size_t)entries * 16u);
        r->bidx = (uint32_t *)hwp__carve(&cur, (size_t)entries * 8u);
        r->buf_mask = entries - 1u;
        r->idx_shift = 64u - (hwp_log2(entries) + 1u);
    }
    r->qslots = entries + 1u;
    r->fin = (uint64_t *)hwp__carve(&cur, (size_t)r->qslots * 8u);
    r->cache = o.cache ? (hwp_rap_hit *)hwp__carve(&cur, (size_t)o.cache * 16u)
                       : NULL;
    r->cache_mask = o.cache ? o.cache - 1u : 0u;
    r->cap = o.nodes;
    r->log2b = hwp_log2(o.branching);
    r->digit_mask = o.branching - 1u;
    r->levels = hwp__rap_levels(o.key_bits, r->log2b);
    r->key_base = o.key_base;
    r->key_mask = hwp_mask64(o.key_bits);
    for (i = 0; i < sizeof r->shift; i++)
        r->shift[i] = (uint8_t)(i * r->log2b < o.key_bits
                                    ? o.key_bits - i * r->log2b
                                    : 0u);
    r->eps_per_level = o.eps / (double)r->levels;
    if (r->log2b <= 2u && o.key_bits % r->log2b == 0) {
        unsigned m, dig;
        r->walk = r->log2b;
        for (i = 0; i < sizeof r->lsh; i++)
            r->lsh[i] = (uint8_t)(r->shift[i] ? 64u - r->shift[i] : 0u);
        for (m = 0; m < (1u << o.branching); m++)
            for (dig = 0; dig < o.branching; dig++)
                r->step[(m << r->log2b) | dig] = (uint8_t)(
                    (m >> dig) & 1u
                        ? 1u + hwp__rap_popcnt16(m & ((1u << dig) - 1u))
                        : 0u);
    }
    r->cfg = (!r->cache && r->walk == 2u ? HWP__RAP_FAST : 0u) |
             (cost ? HWP__RAP_COST : HWP__RAP_NOCOST) |
             (r->buf ? HWP__RAP_BUF : 0u) |
             (o.key_bits < 64 ? HWP__RAP_DOM : 0u);
    hwp__rap_empty(r);
    return hwp__fail(&r->head, HWP_OK, "");
}

HWP_API hwp_status hwp_rap_reset(hwp_rap *r) {
    if (!r || r->head.magic != HWP__RAP_MAGIC || !r->pool) return HWP_EINVAL;
    hwp__rap_empty(r);
    return hwp__fail(&r->head, HWP_OK, "");
}

HWP_API hwp_status hwp_rap_flush(hwp_rap *r) {
    if (!r || r->head.magic != HWP__RAP_MAGIC || !r->pool) return HWP_EINVAL;
    hwp__rap_drain(r, 0);
    return hwp__fail(&r->head, HWP_OK, "");
}

/* The update out of line: stage 0's departures and the configurations
 * hwp_rap_add does not inline (a cache, b != 4, odd w). */
HWP_API void hwp__rap_tree(hwp_rap *r, uint64_t key, uint64_t weight) {
    if (r->cfg & HWP__RAP_FAST) hwp__rap_update(r, key, weight, HWP__RAP_FAST);
    else hwp__rap_update(r, key, weight, 0u);
}

/* The oldest stage-0 entry leaves for the tree as one weighted update:
 * a hardware buffer is a queue, and arrival order is also what bounds how
 * long an entry can wait (one pass of the buffer). */
static void hwp__rap_pop(hwp_rap *r) {
    hwp_rap_slot *e = &r->buf[r->bhead & r->buf_mask];
    uint64_t c = e->count;
    r->bhead++;
    e->count = 0;
    r->buffered -= c;
    if (c) hwp__rap_tree(r, e->key, c);
}

/* Oldest first until at most `limit` weight waits in stage 0. */
HWP_API void hwp__rap_drain(hwp_rap *r, uint64_t limit) {
    while (r->buffered > limit && r->bhead != r->btail) hwp__rap_pop(r);
}

/* A key not waiting in stage 0 joins the back of the queue; a full queue
 * first sends its oldest entry to the tree. */
HWP_API void hwp__rap_push(hwp_rap *r, uint32_t *ix, uint64_t key,
                           uint64_t weight) {
    hwp_rap_slot *e;
    if (r->btail - r->bhead > r->buf_mask) hwp__rap_pop(r);
    e = &r->buf[r->btail & r->buf_mask];
    e->key = key;
    e->count = weight;
    *ix = r->btail++;
    r->buffered += weight;
    if (r->buffered > r->buf_limit) hwp__rap_drain(r, r->buf_limit);
}

/* An update found stage 0 full: the host waits from t until f, when the
 * update `buffer` places ahead enters stage 1, and every later arrival is
 * delayed with it. */
HWP_API void hwp__rap_wait(hwp_rap *r, uint64_t t, uint64_t f) {
    r->stall += f - t;
    hwp_cost_stall(r->cost, HWP_COST_RAP_STALL, f - t);
}

/* Engine work beyond a pipelined update (a split's pipeline flush, a
 * merge batch's scan): it starts once the updates in flight have left
 * stage 4 (a split is seen there, sec. 3.3; a merge batch stalls the
 * pipeline), keeps the engine busy, so later updates wait behind it, but
 * costs the host nothing unless stage 0 fills meanwhile. */
static void hwp__rap_busy(hwp_rap *r, hwp_cost_op op, uint64_t n) {
    uint64_t c, now, ii, lat;
    if (!r->cost) return;
    c = n * hwp_cost_cycles(r->cost, op);
    if (!c) return; /* work the engine does for free drains nothing */
    now = r->cost->clock + r->stall;
    r->engine += c;
    /* The last update entered stage 1 at busy - ii, unless none has
     * since the last such work: the hot path keeps no more state. */
    ii = hwp_cost_cycles(r->cost, HWP_COST_RAP_ISSUE);
    lat = hwp_cost_cycles(r->cost, HWP_COST_RAP_EVENT);
    if (r->updates != r->quiet && lat > ii) r->busy += lat - ii;
    if (r->busy < now) r->busy = now;
    r->busy += c;
    r->quiet = r->updates; /* the pipeline is empty after it */
    /* Stage 1 takes the next update only after it. */
    r->fin[(r->qi ? r->qi : r->qslots) - 1u] = r->busy;
}

/* ---- growing: the split of sec. 2.2 / 3.3 stage 4 ----------------------- */

/* Give node idx (depth d, containing key) every child its range allows.
 * Existing children (the partial case after an internal merge) move into
 * the new block around the new zero-count ones. Returns false when the
 * pool has no room for the block. */
static bool hwp__rap_grow(hwp_rap *r, uint32_t idx, uint64_t key, unsigned d) {
    hwp_rap_node *a = &r->pool[idx];
    unsigned cs = r->shift[d + 1];
    unsigned span = 1u << (r->shift[d] - cs);
    unsigned base = (unsigned)(key >> cs) & r->digit_mask & ~(span - 1u);
    unsigned full = ((1u << span) - 1u) << base, old = a->mask, i, k = 0;
    uint32_t nb = r->used;
    if (r->cap - r->used < span) return false;
    r->used += span;
    for (i = 0; i < span; i++) {
        hwp_rap_node *c = &r->pool[nb + i];
        if ((old >> (base + i)) & 1u) {
            hwp_rap_node *o = &r->pool[a->child + k++];
            *c = *o;
            o->flags = HWP__RAP_GARBAGE;
        } else {
            hwp__zero(c, sizeof *c);
            c->depth = (uint8_t)(d + 1u);
        }
    }
    r->nodes += span - k;
    if (r->nodes > r->peak) r->peak = r->nodes;
    a->child = nb;
    a->mask = (uint16_t)full;
    r->splits++;
    hwp__rap_reshaped(r);
    hwp__rap_busy(r, HWP_COST_RAP_SPLIT, 1);
    return true;
}

/* ---- merging: batched, bottom-up (sec. 2.2, 3.1, 3.3) --------------------- */

/* Post-order over the subtree at idx: fold leaf children into their
 * parent, smallest first, while the parent stays within the threshold.
 * Returns the nodes scanned. Slots are only marked, never moved across
 * blocks, so indices on the recursion stack stay valid. */
static uint64_t hwp__rap_prune(hwp_rap *r, uint32_t idx, uint64_t thr) {
    hwp_rap_node *a = &r->pool[idx];
    uint64_t scanned = 1;
    unsigned n = hwp__rap_popcnt16(a->mask), i;
    for (i = 0; i < n; i++) scanned += hwp__rap_prune(r, a->child + i, thr);
    while (n) {
        unsigned best = n, j, dig;
        for (i = 0; i < n; i++) {
            const hwp_rap_node *c = &r->pool[a->child + i];
            if (!c->mask &&
                (best == n || c->count < r->pool[a->child + best].count))
                best = i;
        }
        if (best == n || a->count + r->pool[a->child + best].count > thr)
            break;
        a->count += r->pool[a->child + best].count;
        /* Close the gap so the remaining children stay contiguous. */
        for (j = best; j + 1 < n; j++)
            r->pool[a->child + j] = r->pool[a->child + j + 1];
        r->pool[a->child + n - 1].flags = HWP__RAP_GARBAGE;
        for (dig = 0, j = 0; dig < 16; dig++)
            if ((a->mask >> dig) & 1u) {
                if (j++ == best) {
                    a->mask = (uint16_t)(a->mask & ~(1u << dig));
                    break;
                }
            }
        n--;
        r->nodes--;
        r->folded++;
    }
    if (!a->mask) a->child = 0;
    return scanned;
}

/* New index of live slot c after the compaction being prepared. */
static uint32_t hwp__rap_fwd(const hwp_rap *r, uint32_t c) {
    return r->rank[c >> 6] +
           hwp_popcount64(r->live[c >> 6] &
                             (((uint64_t)1 << (c & 63u)) - 1u));
}

/* Slide live slots down over garbage, keeping their order; child indices
 * (and *track, a live slot the caller holds) are forwarded through a live
 * bitmap and per-word ranks. */
static void hwp__rap_compact(hwp_rap *r, uint32_t *track) {
    uint32_t words = (r->used + 63u) / 64u, i, acc = 0;
    for (i = 0; i < words; i++) r->live[i] = 0;
    for (i = 0; i < r->used; i++)
        if (!(r->pool[i].flags & HWP__RAP_GARBAGE))
            r->live[i >> 6] |= (uint64_t)1 << (i & 63u);
    for (i = 0; i < words; i++) {
        r->rank[i] = acc;
        acc += hwp_popcount64(r->live[i]);
    }
    for (i = 0; i < r->used; i++) {
        hwp_rap_node *x = &r->pool[i];
        if (!(x->flags & HWP__RAP_GARBAGE) && x->mask)
            x->child = hwp__rap_fwd(r, x->child);
    }
    if (track) *track = hwp__rap_fwd(r, *track);
    for (i = 0, acc = 0; i < r->used; i++)
        if (!(r->pool[i].flags & HWP__RAP_GARBAGE)) r->pool[acc++] = r->pool[i];
    r->used = acc;
    hwp__rap_reshaped(r);
}

static void hwp__rap_merge_batch(hwp_rap *r) {
    uint64_t scanned;
    r->split_at = (uint64_t)(r->eps_per_level * (double)r->n);
    scanned = hwp__rap_prune(r, 0, r->split_at);
    hwp__rap_compact(r, NULL); /* reshapes: folds and moves */
    r->merges++;
    r->scanned += scanned;
    r->last_merge = r->n;
    hwp__rap_busy(r, HWP_COST_RAP_MERGE_NODE, scanned);
}

HWP_API void hwp__rap_split(hwp_rap *r, uint32_t idx, uint64_t key,
                            unsigned depth) {
    unsigned span = 1u << (r->shift[depth] - r->shift[depth + 1]);
    if (hwp__rap_grow(r, idx, key, depth)) return;
    /* Slots left behind by re-grown partial children are reclaimed first:
     * the live nodes, not the slots, are the paper's memory. */
    if (r->used > r->nodes) {
        hwp__rap_compact(r, &idx);
        if (hwp__rap_grow(r, idx, key, depth)) return;
    }
    /* No room: a merge batch ahead of schedule, at most once per 25%
     * growth of n; the node splits on its next event if room was made. */
    if (r->n - r->last_merge >= (r->last_merge >> 2)) {
        hwp__rap_merge_batch(r);
        r->early_merges++;
        hwp__rap_threshold(r);
        if (r->cap - r->used >= span) return;
    }
    /* Still no room: defer every split until the threshold is next
     * recomputed (n grows by 1/64). */
    r->deferred++;
    r->split_at = ~(uint64_t)0;
}

HWP_API void hwp__rap_cold(hwp_rap *r) {
    if (r->n >= r->next_merge) {
        hwp__rap_merge_batch(r);
        while (r->next_merge <= r->n) {
            uint64_t nx = r->next_merge * r->desc.q;
            r->next_merge = nx / r->desc.q == r->next_merge ? nx : ~(uint64_t)0;
        }
    }
    hwp__rap_threshold(r);
}

/* ---- walking the tree (cold; recursion depth <= levels + 1 <= 65) ------- */

typedef struct hwp__rap_walk {
    const hwp_rap *r;
    hwp_rap_visit fn;
    void *ctx;
    uint64_t hot_min; /* a range is hot when its excl reaches this      */
    uint64_t worst;   /* largest ancestor sum seen (hwp_rap_bound)      */
    bool only_hot;    /* call fn for hot ranges only                    */
} hwp__rap_walk;

/* Post-order. Returns the subtree sum; *excl gets the node's hot weight,
 * or 0 when the node is hot (a hot child does not add to its parent). */
static uint64_t hwp__rap_visit(hwp__rap_walk *w, uint32_t idx, uint64_t lo,
                               uint64_t anc, uint64_t *excl) {
    const hwp_rap *r = w->r;
    const hwp_rap_node *x = &r->pool[idx];
    hwp_rap_range rg;
    uint64_t sum = x->count, ex = x->count;
    unsigned dig, k = 0;
    if (anc > w->worst) w->worst = anc;
    for (dig = 0; dig < 16; dig++)
        if ((x->mask >> dig) & 1u) {
            uint64_t ce = 0;
            sum += hwp__rap_visit(w, x->child + k++,
                                  hwp__rap_lo_of(r, lo, x->depth, dig),
                                  anc + x->count, &ce);
            ex += ce;
        }
    rg.lo = r->key_base + lo;
    rg.hi = r->key_base + (lo | hwp_mask64(r->shift[x->depth]));
    rg.count = x->count;
    rg.sum = sum;
    rg.upper = sum + anc + r->buffered; /* stage 0 may hold any key */
    rg.excl = ex;
    rg.depth = x->depth;
    rg.node = idx;
    rg.hot = ex >= w->hot_min;
    rg.pad = 0;
    *excl = rg.hot ? 0 : ex;
    if (w->fn && (rg.hot || !w->only_hot)) w->fn(w->ctx, &rg);
    return sum;
}

static bool hwp__rap_ok(const hwp_rap *r) {
    return r && r->head.magic == HWP__RAP_MAGIC && r->pool;
}

/* ---- retiring code that is gone (cold) ---------------------------------- */

/* Every descendant of x folds into x: its count is kept, its slot becomes
 * garbage. Returns the nodes freed. */
static uint32_t hwp__rap_fold(hwp_rap *r, hwp_rap_node *x) {
    uint32_t freed = 0, k, n = hwp__rap_popcnt16(x->mask);
    for (k = 0; k < n; k++) {
        hwp_rap_node *c = &r->pool[x->child + k];
        freed += hwp__rap_fold(r, c) + 1u;
        x->count += c->count;
        c->flags = HWP__RAP_GARBAGE;
    }
    x->mask = 0;
    x->child = 0;
    return freed;
}

/* The nodes under idx (its range starts at lo) that lie inside [a, b]
 * fold their subtrees into themselves; *scanned counts the nodes read. */
static uint32_t hwp__rap_retire_at(hwp_rap *r, uint32_t idx, uint64_t lo,
                                   uint64_t a, uint64_t b, uint64_t *scanned) {
    hwp_rap_node *x = &r->pool[idx];
    uint64_t hi = lo | hwp_mask64(r->shift[x->depth]);
    uint32_t freed = 0, k = 0;
    unsigned dig;
    (*scanned)++;
    if (hi < a || lo > b || !x->mask) return 0;
    if (a <= lo && hi <= b) return hwp__rap_fold(r, x);
    for (dig = 0; dig < 16; dig++)
        if ((x->mask >> dig) & 1u)
            freed += hwp__rap_retire_at(r, x->child + k++,
                                        hwp__rap_lo_of(r, lo, x->depth, dig),
                                        a, b, scanned);
    return freed;
}

HWP_API hwp_status hwp_rap_retire(hwp_rap *r, uint64_t lo, uint64_t hi) {
    uint64_t scanned = 0, top;
    uint32_t freed;
    if (!hwp__rap_ok(r)) return HWP_EINVAL;
    top = r->key_base + r->key_mask;
    if (lo > hi)
        return hwp__fail(&r->head, HWP_EINVAL, "rap: retire: lo must be <= hi");
    if (hi < r->key_base || lo > top) return hwp__fail(&r->head, HWP_OK, "");
    lo = lo < r->key_base ? 0 : lo - r->key_base;
    hi = (hi > top ? top : hi) - r->key_base;
    /* What stage 0 still holds for the range lands before the fold: a
     * count arriving after it would find a range far over the threshold
     * and split it again at once. */
    hwp__rap_drain(r, 0);
    freed = hwp__rap_retire_at(r, 0, 0, lo, hi, &scanned);
    if (freed) {
        r->nodes -= freed;
        r->folded += freed;
        hwp__rap_compact(r, NULL); /* reshapes */
    }
    r->scanned += scanned;
    hwp__rap_busy(r, HWP_COST_RAP_MERGE_NODE, scanned);
    return hwp__fail(&r->head, HWP_OK, "");
}

/* The least count that is at least phi * n (and at least 1). */
static uint64_t hwp__rap_hot_min(const hwp_rap *r, double phi) {
    double m = phi * (double)r->n;
    uint64_t v = (uint64_t)m;
    if ((double)v < m) v++;
    return v ? v : 1u;
}

/* Walk the whole tree, classifying hot ranges at fraction phi; returns
 * the largest sum of ancestor counts over all nodes. */
static uint64_t hwp__rap_run(const hwp_rap *r, hwp_rap_visit fn, void *ctx,
                             double phi, bool only_hot) {
    hwp__rap_walk w;
    uint64_t ex;
    w.r = r;
    w.fn = fn;
    w.ctx = ctx;
    w.hot_min = hwp__rap_hot_min(r, phi);
    w.worst = 0;
    w.only_hot = only_hot;
    (void)hwp__rap_visit(&w, 0, 0, 0, &ex);
    return w.worst;
}

HWP_API hwp_status hwp_rap_foreach(const hwp_rap *r, hwp_rap_visit fn,
                                   void *ctx) {
    if (!hwp__rap_ok(r) || !fn) return HWP_EINVAL;
    (void)hwp__rap_run(r, fn, ctx, r->desc.hot, false);
    return HWP_OK;
}

/* Every event of a tree range sits in the range's subtree, in one of its
 * ancestors or in stage 0, so the largest ancestor sum plus the buffered
 * weight bounds the error of every tree range, whatever happened
 * (deferrals, weights, merged trees). */
HWP_API uint64_t hwp_rap_bound(const hwp_rap *r) {
    if (!hwp__rap_ok(r)) return 0;
    /* Weight still in stage 0 is unknown to the tree: any range may be
     * missing all of it until hwp_rap_flush(). */
    return hwp__rap_run(r, NULL, NULL, r->desc.hot, false) + r->buffered;
}

/* Nodes inside [lo, hi] give the lower bound, nodes that meet it the
 * upper bound (an event is counted in exactly one node, and a node holds
 * only keys of its own range); a node that only meets [lo, hi] adds its
 * share by width to the estimate. lo, hi are relative to key_base. */
static void hwp__rap_interval(const hwp_rap *r, uint32_t idx, uint64_t nlo,
                              uint64_t lo, uint64_t hi, hwp_rap_est *e) {
    const hwp_rap_node *x = &r->pool[idx];
    uint64_t nhi = nlo | hwp_mask64(r->shift[x->depth]);
    unsigned dig, k = 0;
    if (nhi < lo || nlo > hi) return;
    e->upper += x->count;
    if (nlo >= lo && nhi <= hi) {
        e->lower += x->count;
        e->estimate += (double)x->count;
    } else if (x->count) {
        uint64_t a = nlo > lo ? nlo : lo, b = nhi < hi ? nhi : hi;
        e->estimate += (double)x->count * ((double)(b - a) + 1.0) /
                       ((double)(nhi - nlo) + 1.0);
    }
    for (dig = 0; dig < 16; dig++)
        if ((x->mask >> dig) & 1u)
            hwp__rap_interval(r, x->child + k++,
                              hwp__rap_lo_of(r, nlo, x->depth, dig), lo, hi, e);
}

/* A stage-0 slot's weight, exact per key: both bounds take it. */
static void hwp__rap_est_exact(hwp_rap_est *e, uint64_t count) {
    e->lower += count;
    e->upper += count;
    e->estimate += (double)count;
}

/* The estimate kept between its bounds, handed out. */
static hwp_status hwp__rap_est_out(hwp_rap_est e, hwp_rap_est *out) {
    if (e.estimate < (double)e.lower) e.estimate = (double)e.lower;
    if (e.estimate > (double)e.upper) e.estimate = (double)e.upper;
    *out = e;
    return HWP_OK;
}

HWP_API hwp_status hwp_rap_query(const hwp_rap *r, uint64_t lo, uint64_t hi,
                                 hwp_rap_est *out) {
    hwp_rap_est e;
    uint32_t i;
    if (!hwp__rap_ok(r)) return HWP_EINVAL;
    if (!out) return hwp__refuse(&r->head, HWP_EINVAL, "rap: query: out must be non-NULL");
    if (lo > hi) return hwp__refuse(&r->head, HWP_EINVAL, "rap: query: lo must be <= hi");
    e.lower = e.upper = 0;
    e.estimate = 0.0;
    /* Only the part of [lo, hi] inside the domain can hold weight. */
    if (hi >= r->key_base && lo <= r->key_base + r->key_mask) {
        lo = lo < r->key_base ? 0 : lo - r->key_base;
        hi = hi - r->key_base > r->key_mask ? r->key_mask : hi - r->key_base;
        hwp__rap_interval(r, 0, 0, lo, hi, &e);
        for (i = r->bhead; i != r->btail; i++) {
            const hwp_rap_slot *s = &r->buf[i & r->buf_mask];
            if (s->key >= lo && s->key <= hi) hwp__rap_est_exact(&e, s->count);
        }
    }
    return hwp__rap_est_out(e, out);
}

HWP_API hwp_status hwp_rap_estimate(const hwp_rap *r, uint64_t lo,
                                    uint64_t hi, uint64_t *lower,
                                    uint64_t *upper) {
    hwp_rap_est e;
    hwp_status st;
    if (!hwp__rap_ok(r)) return HWP_EINVAL;
    if (!lower || !upper)
        return hwp__refuse(&r->head, HWP_EINVAL, "rap: estimate: lower and upper must be non-NULL");
    st = hwp_rap_query(r, lo, hi, &e);
    if (st != HWP_OK) return st;
    *lower = e.lower;
    *upper = e.upper;
    return HWP_OK;
}

/* hwp_rap_top: blocks of 2^bits keys, scored by their lower bound. */
typedef struct hwp__rap_top {
    const hwp_rap *r;
    hwp_rap_range *out;
    size_t cap, n;
    unsigned bits;
    bool open;
    hwp_rap_range cur; /* the block being summed */
} hwp__rap_top;

static uint64_t hwp__rap_subsum(const hwp_rap *r, uint32_t idx);

/* Insert the finished block into out[], kept sorted by sum (descending,
 * ties by lo), at most cap long. */
static void hwp__rap_top_emit(hwp__rap_top *t) {
    size_t i, m;
    if (!t->open) return;
    t->open = false;
    if (!t->cur.sum) return;
    t->n++;
    m = t->n - 1u < t->cap ? t->n - 1u : t->cap;
    for (i = m; i > 0 && t->out[i - 1].sum < t->cur.sum; i--)
        if (i < t->cap) t->out[i] = t->out[i - 1];
    if (i < t->cap) t->out[i] = t->cur;
}

/* Pre-order: a node no wider than a block starts or extends the block
 * that holds it (siblings come in key order, so a block's nodes are
 * consecutive); a wider node's own count may lie in any of its blocks
 * and so only raises their upper bounds (anc). */
static void hwp__rap_top_walk(hwp__rap_top *t, uint32_t idx, uint64_t lo,
                              uint64_t anc) {
    const hwp_rap *r = t->r;
    const hwp_rap_node *x = &r->pool[idx];
    unsigned dig, k = 0;
    if (r->shift[x->depth] <= t->bits) {
        uint64_t blo = t->bits >= 64 ? 0 : lo & ~hwp_mask64(t->bits);
        uint64_t s = hwp__rap_subsum(r, idx);
        if (t->open && t->cur.lo != r->key_base + blo) hwp__rap_top_emit(t);
        if (!t->open) {
            hwp__zero(&t->cur, sizeof t->cur);
            t->open = true;
            t->cur.lo = r->key_base + blo;
            t->cur.hi = r->key_base + (blo | (hwp_mask64(t->bits) &
                                              r->key_mask));
            t->cur.depth = x->depth;
            t->cur.node = idx;
            t->cur.upper = anc + r->buffered;
        }
        if (r->shift[x->depth] == t->bits) t->cur.count = x->count;
        t->cur.sum += s;
        t->cur.excl += s;
        t->cur.upper += s;
        return;
    }
    hwp__rap_top_emit(t);
    for (dig = 0; dig < 16; dig++)
        if ((x->mask >> dig) & 1u)
            hwp__rap_top_walk(t, x->child + k++,
                              hwp__rap_lo_of(r, lo, x->depth, dig),
                              anc + x->count);
    hwp__rap_top_emit(t);
}

/* The hottest aligned blocks of 2^bits keys (bits 0 = single keys,
 * >= key_bits = the whole domain), hottest first: sum is what the tree
 * can place inside the block for certain, upper what it may hold. Blocks
 * the tree cannot tell apart (inside one wider leaf range) are not
 * listed: ask hwp_rap_query for them. Returns the number of blocks with
 * weight; writes the first min(that, cap). */
HWP_API size_t hwp_rap_top(const hwp_rap *r, unsigned bits,
                           hwp_rap_range *out, size_t cap) {
    hwp__rap_top t;
    if (!hwp__rap_ok(r) || (cap && !out)) return 0;
    hwp__zero(&t, sizeof t);
    t.r = r;
    t.out = out;
    t.cap = cap;
    t.bits = bits > r->desc.key_bits ? r->desc.key_bits : bits;
    hwp__rap_top_walk(&t, 0, 0, 0);
    hwp__rap_top_emit(&t);
    return t.n;
}

typedef struct hwp__rap_hotbuf {
    hwp_rap_range *out;
    size_t cap, n;
} hwp__rap_hotbuf;

static void hwp__rap_collect(void *ctx, const hwp_rap_range *rg) {
    hwp__rap_hotbuf *h = (hwp__rap_hotbuf *)ctx;
    if (h->n < h->cap) h->out[h->n] = *rg;
    h->n++;
}

HWP_API size_t hwp_rap_hot(const hwp_rap *r, double phi, hwp_rap_range *out,
                           size_t cap) {
    hwp__rap_hotbuf h;
    if (!hwp__rap_ok(r) || !(phi > 0.0 && phi <= 1.0) || (cap && !out))
        return 0;
    h.out = out;
    h.cap = cap;
    h.n = 0;
    (void)hwp__rap_run(r, hwp__rap_collect, &h, phi, true);
    return h.n;
}

typedef struct hwp__rap_acc {
    const hwp_rap *r;
    hwp_rap_exact_fn exact;
    void *ctx;
    hwp_rap_acc a;
    double sum_pct;
} hwp__rap_acc;

static void hwp__rap_acc_visit(void *ctx, const hwp_rap_range *rg) {
    hwp__rap_acc *c = (hwp__rap_acc *)ctx;
    uint64_t t = c->exact(c->ctx, rg->lo, rg->hi);
    if (t < rg->sum || t > rg->upper) c->a.violations++;
    if (c->r->n && t > rg->sum) {
        double e = (double)(t - rg->sum) / (double)c->r->n;
        if (e > c->a.worst_eps) c->a.worst_eps = e;
    }
    if (rg->hot) {
        double pct = t ? 100.0 * (double)(t > rg->sum ? t - rg->sum
                                                     : rg->sum - t) /
                             (double)t
                       : 0.0;
        c->a.hot++;
        c->sum_pct += pct;
        if (pct > c->a.max_pct) c->a.max_pct = pct;
    }
}

/* Percent error (sec. 4.3) of every hot range's estimate (its subtree
 * sum) against the exact count of the same range, plus the worst
 * additive error over all nodes as a fraction of n (the empirical eps). */
HWP_API hwp_status hwp_rap_accuracy(const hwp_rap *r, double phi,
                                    hwp_rap_exact_fn exact, void *ctx,
                                    hwp_rap_acc *out) {
    hwp__rap_acc c;
    if (!hwp__rap_ok(r) || !exact || !out || !(phi > 0.0 && phi <= 1.0))
        return HWP_EINVAL;
    hwp__zero(&c, sizeof c);
    c.r = r;
    c.exact = exact;
    c.ctx = ctx;
    (void)hwp__rap_run(r, hwp__rap_acc_visit, &c, phi, false);
    c.a.mean_pct = c.a.hot ? c.sum_pct / c.a.hot : 0.0;
    *out = c.a;
    return HWP_OK;
}

/* ---- merging two trees ------------------------------------------------------ */

/* Pre-order over src: rebuild src's shape in dst where the pool allows
 * (a split in dst), else count at dst's smallest range containing the src
 * range. Each event stays inside its own range, so the result keeps every
 * lower bound and the a-posteriori bound of both trees adds. */
static void hwp__rap_absorb(hwp_rap *dst, const hwp_rap *src, uint32_t sidx,
                            uint64_t lo) {
    const hwp_rap_node *s = &src->pool[sidx];
    uint32_t x = 0;
    unsigned d = 0, dig, k = 0;
    bool pruned = false;
    while (d < s->depth) {
        unsigned m = dst->pool[x].mask;
        dig = (unsigned)(lo >> dst->shift[d + 1]) & dst->digit_mask;
        if (!((m >> dig) & 1u) && !hwp__rap_grow(dst, x, lo, d)) {
            /* A full pool: fold what is cold at the merged stream's
             * threshold (dst's own ranges, or src's absorbed so far) and
             * walk again, rather than count src's range at a coarse one.
             * Walk again even when nothing folded: the compaction moves
             * nodes (it reclaims the slots a re-grow left), so x is stale,
             * and the reclaimed slots may let the grow succeed. */
            if (pruned) break;
            pruned = true;
            dst->scanned += hwp__rap_prune(dst, 0, dst->split_at);
            hwp__rap_compact(dst, NULL);
            x = 0;
            d = 0;
            continue;
        }
        m = dst->pool[x].mask;
        x = dst->pool[x].child + hwp__rap_popcnt16(m & ((1u << dig) - 1u));
        d++;
    }
    dst->pool[x].count += s->count;
    for (dig = 0; dig < 16; dig++)
        if ((s->mask >> dig) & 1u)
            hwp__rap_absorb(dst, src, s->child + k++,
                            hwp__rap_lo_of(src, lo, s->depth, dig));
}

/* A host operation: src's tree, then the weight waiting in src's stage 0
 * (each at dst's smallest range holding its key), fold into dst, which is
 * then pruned on its own schedule. No modelled cycles: the engine is not
 * involved, so dst's cost shim is detached meanwhile. */
HWP_API hwp_status hwp_rap_merge(hwp_rap *dst, const hwp_rap *src) {
    const hwp_field *diff;
    hwp_cost *cost;
    uint32_t i;
    if (!hwp__rap_ok(dst)) return HWP_EINVAL;
    if (!hwp__rap_ok(src) || dst == src)
        return hwp__fail(&dst->head, HWP_EINVAL,
                         "rap: merge needs two distinct, initialised trees");
    /* Every field counts: trees of different shape, domain or filter do
     * not describe the same stream. */
    diff = hwp__field_diff(&dst->desc, &src->desc, hwp__rap_desc_f,
                           HWP__N(hwp__rap_desc_f));
    if (diff) return hwp__fail(&dst->head, HWP_EMISMATCH, diff->why);
    cost = dst->cost;
    dst->cost = NULL;
    /* The absorb folds at the merged stream's threshold. */
    dst->n += src->n + src->buffered;
    dst->split_at = (uint64_t)(dst->eps_per_level * (double)dst->n);
    hwp__rap_absorb(dst, src, 0, 0);
    for (i = src->bhead; i != src->btail; i++) {
        const hwp_rap_slot *e = &src->buf[i & src->buf_mask];
        hwp__rap_descend(dst, e->key, false)->count += e->count;
    }
    dst->updates += src->updates;
    dst->deferred += src->deferred;
    dst->dropped += src->dropped;
    dst->stall += src->stall;
    dst->engine += src->engine;
    hwp__rap_merge_batch(dst);
    while (dst->next_merge <= dst->n) {
        uint64_t nx = dst->next_merge * dst->desc.q;
        dst->next_merge = nx / dst->desc.q == dst->next_merge ? nx : ~(uint64_t)0;
    }
    hwp__rap_threshold(dst);
    dst->cost = cost;
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API hwp_status hwp_rap_get_stats(const hwp_rap *r, hwp_rap_stats *out) {
    if (!hwp__rap_ok(r) || !out) return HWP_EINVAL;
    hwp__zero(out, sizeof *out);
    out->events = r->n + r->buffered + r->dropped;
    out->dropped = r->dropped;
    out->evicted = r->folded;
    out->cycles = r->stall;
    out->n = r->n;
    out->buffered = r->buffered;
    out->updates = r->updates;
    out->splits = r->splits;
    out->merges = r->merges;
    out->early_merges = r->early_merges;
    out->deferred = r->deferred;
    out->scanned = r->scanned;
    out->threshold = (uint64_t)(r->eps_per_level * (double)r->n);
    out->bound = hwp_rap_bound(r);
    out->engine_cycles = r->engine;
    out->nodes = r->nodes;
    out->peak = r->peak;
    out->pool = r->cap;
    out->levels = r->levels;
    return HWP_OK;
}

HWP__GET_DESC_FN(rap, desc, hwp__rap_ok(x))

/* ---- reports -------------------------------------------------------------- */

static void hwp__rap_pct(const hwp_writer *w, uint64_t part, uint64_t n) {
    hwp_put_f64(w, n ? 100.0 * (double)part / (double)n : 0.0, 2);
    hwp_put_str(w, "%");
}

/* Context of the report callbacks. */
typedef struct hwp__rap_rep {
    const hwp_writer *w;
    const hwp_rap *r;
    bool first;
} hwp__rap_rep;

static void hwp__rap_text_hot(void *ctx, const hwp_rap_range *rg) {
    const hwp_writer *w = ((hwp__rap_rep *)ctx)->w;
    const hwp_rap *r = ((hwp__rap_rep *)ctx)->r;
    hwp__put_str_hex(w, "  [", rg->lo);
    hwp__put_str_hex(w, ", ", rg->hi);
    hwp_put_str_u64(w, "] depth ", rg->depth);
    hwp_put_str(w, ": ");
    hwp__rap_pct(w, rg->excl, r->n);
    hwp_put_str(w, " (with hot sub-ranges ");
    hwp__rap_pct(w, rg->sum, r->n);
    hwp_put_str(w, ")\n");
}

static void hwp__rap_text_node(const hwp_rap *r, const hwp_writer *w,
                               uint32_t idx, uint64_t lo) {
    const hwp_rap_node *x = &r->pool[idx];
    unsigned i, dig, k = 0;
    for (i = 0; i <= x->depth; i++) hwp_put_str(w, "  ");
    hwp__put_str_hex(w, "[", r->key_base + lo);
    hwp__put_str_hex(w, ", ", r->key_base + (lo | hwp_mask64(r->shift[x->depth])));
    hwp_put_str_u64(w, "] ", x->count);
    hwp_put_str(w, "\n");
    for (dig = 0; dig < 16; dig++)
        if ((x->mask >> dig) & 1u)
            hwp__rap_text_node(r, w, x->child + k++,
                               hwp__rap_lo_of(r, lo, x->depth, dig));
}

/* The stats both reports print, from one table: ` name=v` in text, the
 * "stats" object in JSON. */
static const hwp_field hwp__rap_stats_f[] = {
    HWP__FS_HEAD(hwp_rap_stats),
    HWP__FS(hwp_rap_stats, n), HWP__FS(hwp_rap_stats, buffered),
    HWP__FS(hwp_rap_stats, updates), HWP__FS(hwp_rap_stats, splits),
    HWP__FS(hwp_rap_stats, merges), HWP__FS(hwp_rap_stats, early_merges),
    HWP__FS(hwp_rap_stats, deferred), HWP__FS(hwp_rap_stats, scanned),
    HWP__FS(hwp_rap_stats, threshold), HWP__FS(hwp_rap_stats, bound),
    HWP__FS(hwp_rap_stats, engine_cycles), HWP__FS(hwp_rap_stats, nodes),
    HWP__FS(hwp_rap_stats, peak), HWP__FS(hwp_rap_stats, pool),
    HWP__FS(hwp_rap_stats, levels)};

HWP_API void hwp_rap_write_text(const hwp_rap *r, const hwp_writer *w) {
    hwp__rap_rep rep;
    hwp_rap_stats st;
    if (!hwp__rap_ok(r)) return;
    hwp__put_str_hex(w, "rap: domain [", r->key_base);
    hwp__put_str_hex(w, ", ", r->key_base + r->key_mask);
    hwp_put_str_u64(w, "] b=", r->desc.branching);
    hwp__put_str_f64(w, " eps=", r->desc.eps, 4);
    (void)hwp_rap_get_stats(r, &st);
    hwp__field_text(w, &st, hwp__rap_stats_f, HWP__N(hwp__rap_stats_f), " ", "=", "");
    hwp__put_str_f64(w, "\nrap: hot ranges (>= ", 100.0 * r->desc.hot, 1);
    hwp_put_str(w, "% of n, own weight first):\n");
    rep.w = w;
    rep.r = r;
    rep.first = true;
    (void)hwp__rap_run(r, hwp__rap_text_hot, &rep, r->desc.hot, true);
    hwp_put_str(w, "rap: tree ([lo, hi] own count):\n");
    hwp__rap_text_node(r, w, 0, 0);
}

/* "hot": the hot ranges with their bounds, for readers of the report;
 * derived from "ranges", so hwp_rap_read_json skips it. */
static void hwp__rap_json_hot(void *ctx, const hwp_rap_range *rg) {
    hwp__rap_rep *j = (hwp__rap_rep *)ctx;
    const hwp_writer *w = j->w;
    hwp_put_str(w, j->first ? "\n{\"lo\":\"" : ",\n{\"lo\":\"");
    j->first = false;
    hwp_put_hex(w, rg->lo);
    hwp__put_str_hex(w, "\",\"hi\":\"", rg->hi);
    hwp_put_str_u64(w, "\",\"depth\":", rg->depth);
    hwp_put_str_u64(w, ",\"sum\":", rg->sum);
    hwp_put_str_u64(w, ",\"upper\":", rg->upper);
    hwp_put_str_u64(w, ",\"excl\":", rg->excl);
    hwp_put_str(w, "}");
}

/* "ranges": every node in pre-order with its child mask, which is all
 * the reader needs to rebuild the tree node for node. */
static void hwp__rap_json_tree(const hwp_rap *r, const hwp_writer *w,
                               uint32_t idx, uint64_t lo, bool first) {
    const hwp_rap_node *x = &r->pool[idx];
    unsigned dig, k = 0;
    hwp_put_str(w, first ? "\n{\"lo\":\"" : ",\n{\"lo\":\"");
    hwp_put_hex(w, r->key_base + lo);
    hwp__put_str_hex(w, "\",\"hi\":\"", r->key_base + (lo | hwp_mask64(r->shift[x->depth])));
    hwp_put_str_u64(w, "\",\"depth\":", x->depth);
    hwp_put_str_u64(w, ",\"count\":", x->count);
    hwp_put_str_u64(w, ",\"kids\":", x->mask);
    hwp_put_str(w, "}");
    for (dig = 0; dig < 16; dig++)
        if ((x->mask >> dig) & 1u)
            hwp__rap_json_tree(r, w, x->child + k++,
                               hwp__rap_lo_of(r, lo, x->depth, dig), false);
}

HWP_API void hwp_rap_write_json(const hwp_rap *r, const hwp_writer *w) {
    hwp__rap_rep j;
    hwp_rap_stats st;
    uint32_t i;
    if (!hwp__rap_ok(r)) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_json_envelope(w, "rap", 1);
    hwp__field_put(w, "desc", &r->desc, hwp__rap_desc_f, HWP__N(hwp__rap_desc_f));
    (void)hwp_rap_get_stats(r, &st);
    hwp__field_put(w, "stats", &st, hwp__rap_stats_f, HWP__N(hwp__rap_stats_f));
    hwp_put_json_u64(w, "last_merge", r->last_merge);
    hwp_put_str(w, ",\"stage0\":[");
    for (i = r->bhead; i != r->btail; i++) {
        const hwp_rap_slot *e = &r->buf[i & r->buf_mask];
        hwp_put_str(w, i == r->bhead ? "[\"" : ",[\"");
        hwp_put_hex(w, r->key_base + e->key);
        hwp_put_str_u64(w, "\",", e->count);
        hwp_put_str(w, "]");
    }
    hwp_put_str(w, "],\"ranges\":[");
    hwp__rap_json_tree(r, w, 0, 0, true);
    hwp_put_str(w, "],\"hot\":[");
    j.w = w;
    j.r = r;
    j.first = true;
    (void)hwp__rap_run(r, hwp__rap_json_hot, &j, r->desc.hot, true);
    hwp_put_str(w, "]}\n");
}

/* ---- reading a report back ------------------------------------------------ */

/* hwp__rap_fill in place, as base.h's readers take it. */
static const char *hwp__rap_refill(void *d) {
    return hwp__rap_fill((hwp_rap_desc *)d, (const hwp_rap_desc *)d);
}

HWP__READ_DESC_FN(rap, "rap", hwp__rap_desc_f, hwp__rap_refill)

/* Where the walk of "ranges" stands: one frame per open node. */
typedef struct hwp__rap_frame {
    uint32_t idx;  /* pool index (valid when building)                  */
    unsigned left; /* child digits not yet seen                          */
    unsigned mask, depth;
    uint64_t lo;   /* relative to key_base                               */
} hwp__rap_frame;

typedef struct hwp__rap_load {
    hwp_rap *r;
    bool build;
    uint32_t used, nodes;
    uint64_t sum, buffered, last_merge;
    hwp_rap_stats stats;
    unsigned nstage;
    bool mismatch; /* the report's desc is not r's                   */
    size_t stats_at; /* offset of "stats", where a disagreement points */
    hwp__rap_frame st[66];
    unsigned sp;
} hwp__rap_load;

/* One element of "ranges" as written by hwp__rap_json_tree: every member
 * is needed. */
typedef struct hwp__rap_rec {
    uint64_t lo, hi, depth, count, kids;
} hwp__rap_rec;

static const hwp_field hwp__rap_rec_f[] = {
    HWP__FN(hwp__rap_rec, "rap", lo, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
    HWP__FN(hwp__rap_rec, "rap", hi, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
    HWP__FS(hwp__rap_rec, depth), HWP__FS(hwp__rap_rec, count),
    HWP__FS(hwp__rap_rec, kids)};

/* One element of "ranges" (the cursor is at its '{'). */
static bool hwp__rap_load_range(hwp_json *j, hwp__rap_load *L) {
    hwp_rap *r = L->r;
    hwp__rap_rec rec;
    uint64_t lo, hi, depth, count, kids, bit;
    unsigned span, dig = 0;
    size_t at = j->pos;
    if (!hwp__field_read(j, &rec, hwp__rap_rec_f, HWP__N(hwp__rap_rec_f), true))
        return false;
    lo = rec.lo, hi = rec.hi, depth = rec.depth, count = rec.count, kids = rec.kids;
    /* Errors below point at the range's '{'. */
#define HWP__RAP_BAD(msg) return (j->pos = at, hwp_json_fail(j, msg))
    if (lo < r->key_base || lo - r->key_base > r->key_mask)
        HWP__RAP_BAD("rap: range outside the domain");
    lo -= r->key_base;
    if (L->sp == 0) {
        if (L->used) HWP__RAP_BAD("rap: more than one root range");
        if (depth || lo) HWP__RAP_BAD("rap: the first range must be the root");
    } else {
        hwp__rap_frame *f = &L->st[L->sp - 1];
        for (dig = 0; !((f->left >> dig) & 1u); dig++) {
        }
        if (depth != f->depth + 1u ||
            lo != hwp__rap_lo_of(r, f->lo, f->depth, dig))
            HWP__RAP_BAD("rap: ranges out of pre-order or not matching their parent's kids");
    }
    if (hi - r->key_base != (lo | hwp_mask64(r->shift[depth])))
        HWP__RAP_BAD("rap: range hi does not match its lo and depth");
    span = depth < r->levels ? 1u << (r->shift[depth] - r->shift[depth + 1]) : 0u;
    /* Children exist only below the deepest level and inside the node's
     * range (the top level of an odd width has fewer digits). */
    bit = span ? (uint64_t)((1u << span) - 1u) << ((lo >> r->shift[depth + 1]) & r->digit_mask & ~(span - 1u)) : 0u;
    if (kids & ~bit) HWP__RAP_BAD("rap: kids names children the range cannot have");
    if (L->sum + count < L->sum) HWP__RAP_BAD("rap: counts overflow");
    L->sum += count;
    if (L->used + hwp__rap_popcnt16((unsigned)kids) + (L->sp ? 0u : 1u) > r->cap)
        HWP__RAP_BAD("rap: more ranges than the desc's nodes");
    {
        uint32_t idx;
        if (L->sp == 0) {
            idx = 0;
            L->used = 1;
        } else {
            hwp__rap_frame *f = &L->st[L->sp - 1];
            idx = L->build ? r->pool[f->idx].child +
                                 hwp__rap_popcnt16(f->mask & ((1u << dig) - 1u))
                           : 0u;
            f->left &= ~(1u << dig);
        }
        if (L->build) {
            hwp_rap_node *x = &r->pool[idx];
            hwp__zero(x, sizeof *x);
            x->count = count;
            x->depth = (uint8_t)depth;
            x->mask = (uint16_t)kids;
            x->child = kids ? L->used : 0u;
        }
        L->used += hwp__rap_popcnt16((unsigned)kids);
        L->nodes++;
        while (L->sp && !L->st[L->sp - 1].left) L->sp--;
        if (kids) {
            hwp__rap_frame *f = &L->st[L->sp++];
            f->idx = idx;
            f->left = f->mask = (unsigned)kids;
            f->depth = (unsigned)depth;
            f->lo = lo;
        }
    }
#undef HWP__RAP_BAD
    return true;
}

/* One pass over a report: with build false it only checks (r is not
 * touched), with build true it rebuilds r from a report already checked. */
static bool hwp__rap_load_pass(hwp_json *j, hwp__rap_load *L) {
    hwp_rap *r = L->r;
    char key[16];
    unsigned seen = 0;
    if (!hwp_json_envelope(j, "rap", 1)) return false;
    while (hwp_json_member(j, key, sizeof key)) {
        size_t at = j->pos;
        if (hwp_json_key_is(key, "desc")) {
            hwp_rap_desc d;
            const hwp_field *diff;
            if (!hwp__field_read_filled(j, &d, sizeof d, hwp__rap_desc_f,
                                        HWP__N(hwp__rap_desc_f), hwp__rap_refill))
                return false;
            diff = hwp__field_diff(&r->desc, &d, hwp__rap_desc_f,
                                   HWP__N(hwp__rap_desc_f));
            if (diff) {
                L->mismatch = true;
                j->pos = at;
                return hwp_json_fail(j, diff->why);
            }
            seen |= 1u;
        } else if (hwp_json_key_is(key, "stats")) {
            L->stats_at = at;
            if (!hwp__field_read(j, &L->stats, hwp__rap_stats_f,
                                 HWP__N(hwp__rap_stats_f), true))
                return false;
            seen |= 2u;
        } else if (hwp_json_key_is(key, "last_merge")) {
            if (!hwp_json_u64(j, &L->last_merge)) return false;
            seen |= 4u;
        } else if (hwp_json_key_is(key, "stage0")) {
            if (!hwp_json_array(j)) return false;
            while (hwp_json_next(j)) {
                uint64_t k, c;
                size_t eat = j->pos;
                if (!hwp_json_array(j) || !hwp_json_next(j) ||
                    !hwp_json_u64(j, &k) || !hwp_json_next(j) ||
                    !hwp_json_u64(j, &c))
                    return false;
                if (hwp_json_next(j)) return hwp_json_fail(j, "rap: a stage0 entry is [key, count]");
                if (j->why) return false;
                if (!r->buf || L->nstage > r->buf_mask) {
                    j->pos = eat;
                    return hwp_json_fail(j, "rap: more stage0 entries than the desc's buffer");
                }
                if (k < r->key_base || k - r->key_base > r->key_mask || !c) {
                    j->pos = eat;
                    return hwp_json_fail(j, "rap: stage0 entry outside the domain or empty");
                }
                if (L->buffered + c < L->buffered) return hwp_json_fail(j, "rap: counts overflow");
                L->buffered += c;
                if (L->build) {
                    hwp_rap_slot *e = &r->buf[L->nstage];
                    e->key = k - r->key_base;
                    e->count = c;
                    r->bidx[(e->key * 0x9E3779B97F4A7C15ull) >> r->idx_shift] = L->nstage;
                }
                L->nstage++;
            }
            if (j->why) return false;
            seen |= 8u;
        } else if (hwp_json_key_is(key, "ranges")) {
            if (!hwp_json_array(j)) return false;
            while (hwp_json_next(j))
                if (!hwp__rap_load_range(j, L)) return false;
            if (j->why) return false;
            if (!L->nodes || L->sp) {
                j->pos = at;
                return hwp_json_fail(j, "rap: ranges end before every kid appeared");
            }
            seen |= 16u;
        } else if (!hwp_json_skip(j)) {
            return false;
        }
    }
    if (!hwp_json_end(j)) return false;
    if (seen != 31u)
        return hwp_json_fail(j, "rap: report needs desc, stats, last_merge, stage0 and ranges");
    /* The stats must agree with the profile they describe. */
    if (L->stats.n != L->sum || L->stats.buffered != L->buffered ||
        L->stats.events != L->sum + L->buffered + L->stats.dropped ||
        L->stats.nodes != L->nodes || L->stats.peak < L->nodes ||
        L->stats.peak > r->cap ||
        L->last_merge > L->sum) {
        j->pos = L->stats_at;
        return hwp_json_fail(j, "rap: stats disagree with the ranges and stage0");
    }
    return true;
}

HWP_API hwp_status hwp_rap_read_json(hwp_rap *r, const char *json, size_t n,
                                     hwp_json_err *err) {
    hwp_json j;
    hwp__rap_load L;
    hwp_status st;
    if (!hwp__rap_ok(r)) return HWP_EINVAL;
    hwp__zero(&L, sizeof L);
    L.r = r;
    hwp_json_init(&j, json, n);
    if (!hwp__rap_load_pass(&j, &L)) {
        st = hwp_json_status(&j, err);
        if (L.mismatch) st = HWP_EMISMATCH;
        return hwp__fail(&r->head, st, j.why);
    }
    /* Checked: now rebuild, which cannot fail. */
    hwp__rap_empty(r);
    hwp__zero(&L, sizeof L);
    L.r = r;
    L.build = true;
    hwp_json_init(&j, json, n);
    (void)hwp__rap_load_pass(&j, &L);
    r->used = r->nodes = L.nodes;
    r->n = L.sum;
    r->buffered = L.buffered;
    r->btail = L.nstage;
    r->dropped = L.stats.dropped;
    r->folded = L.stats.evicted;
    r->stall = L.stats.cycles;
    r->updates = L.stats.updates;
    r->splits = L.stats.splits;
    r->merges = L.stats.merges;
    r->early_merges = L.stats.early_merges;
    r->deferred = L.stats.deferred;
    r->scanned = L.stats.scanned;
    r->engine = L.stats.engine_cycles;
    r->peak = L.stats.peak;
    r->last_merge = L.last_merge;
    /* The merge schedule is a function of n: the first e q^k above it. */
    r->next_merge = r->desc.first_merge;
    while (r->next_merge <= r->n) {
        uint64_t nx = r->next_merge * r->desc.q;
        r->next_merge = nx / r->desc.q == r->next_merge ? nx : ~(uint64_t)0;
    }
    r->epoch = ~(uint32_t)0;
    hwp__rap_reshaped(r);
    hwp__rap_threshold(r);
    if (err) {
        err->offset = 0;
        err->why = NULL;
    }
    return hwp__fail(&r->head, HWP_OK, "");
}

/* ---- two-dimensional ranges --------------------------------------------- */

/* The even bits of v, packed into the low 32 (hwp__rap2_spread undone). */
static uint64_t hwp__rap2_squeeze(uint64_t v) {
    v &= 0x5555555555555555ull;
    v = (v | v >> 1) & 0x3333333333333333ull;
    v = (v | v >> 2) & 0x0F0F0F0F0F0F0F0Full;
    v = (v | v >> 4) & 0x00FF00FF00FF00FFull;
    v = (v | v >> 8) & 0x0000FFFF0000FFFFull;
    return (v | v >> 16) & 0xFFFFFFFFull;
}

/* (x, y) of a tree key, relative to the bases (hwp__rap2_join undone). */
static void hwp__rap2_part(const hwp_rap2 *r, uint64_t k, uint64_t *x,
                           uint64_t *y) {
    unsigned m = r->m;
    uint64_t hi = k >> m >> m, low = k & hwp_mask64(2u * m);
    uint64_t xl = hwp__rap2_squeeze(low >> 1), yl = hwp__rap2_squeeze(low);
    *x = r->x_long ? hi << m | xl : xl;
    *y = r->x_long ? yl : hi << m | yl;
}

/* The rectangle of the tree range [lo, hi] (an aligned block of keys),
 * relative to the bases: the block's free bits are the low bits of both
 * dimensions, all clear in lo and all set in hi. */
static void hwp__rap2_box_of(const hwp_rap2 *r, uint64_t lo, uint64_t hi,
                             hwp_rap2_box *b) {
    hwp__rap2_part(r, lo, &b->x_lo, &b->y_lo);
    hwp__rap2_part(r, hi, &b->x_hi, &b->y_hi);
}

/* Defaults as hwp_rap2_desc's comments attribute them; the tree's are
 * hwp_rap_desc's, filled once the dimensions give its key_bits. */
static const hwp_field hwp__rap2_desc_f[] = {
    HWP__FN(hwp_rap2_desc, "rap2", x_base, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
    HWP__FN(hwp_rap2_desc, "rap2", x_bits, UINT, 32, 1, 63, 0,
            "rap2: x_bits and y_bits must be 1..63 with x_bits + y_bits <= 64"),
    HWP__FN(hwp_rap2_desc, "rap2", y_base, HEX, 0, 0, ~(uint64_t)0, 0, NULL),
    HWP__FN(hwp_rap2_desc, "rap2", y_bits, UINT, 32, 1, 63, 0,
            "rap2: x_bits and y_bits must be 1..63 with x_bits + y_bits <= 64"),
    HWP__FN(hwp_rap2_desc, "rap2", x_source, UINT, 0, 0, HWP_RAP_SRC_VALUE, 0,
            "rap2: x_source must be 0..3"),
    HWP__FN(hwp_rap2_desc, "rap2", y_source, UINT, HWP_RAP_SRC_ADDR, 0,
            HWP_RAP_SRC_VALUE, 0, "rap2: y_source must be 0..3"),
    HWP__FSUB(hwp_rap2_desc, "rap2", tree, hwp__rap_desc_f)};

HWP__FIELDS_FN(hwp_rap2_desc_fields, hwp__rap2_desc_f)

/* As hwp__rap_fill, for the 2-D desc. */
static const char *hwp__rap2_fill(hwp_rap2_desc *o, const hwp_rap2_desc *d) {
    const char *why = hwp__field_fill_from(o, d, sizeof *o, hwp__rap2_desc_f, HWP__N(hwp__rap2_desc_f));
    if (why) return why;
    if (o->x_bits + o->y_bits > 64) return hwp__rap2_desc_f[1].bad;
    if (o->x_base > ~(uint64_t)0 - hwp_mask64(o->x_bits))
        return "rap2: x_base + 2^x_bits must not exceed 2^64";
    if (o->y_base > ~(uint64_t)0 - hwp_mask64(o->y_bits))
        return "rap2: y_base + 2^y_bits must not exceed 2^64";
    if (o->tree.key_base)
        return "rap2: tree.key_base must be 0 (x_base and y_base place the domain)";
    if (o->tree.source)
        return "rap2: tree.source must be 0 (x_source and y_source pick the fields)";
    if (o->tree.key_bits && o->tree.key_bits != o->x_bits + o->y_bits)
        return "rap2: tree.key_bits must be 0 or x_bits + y_bits";
    o->tree.key_bits = o->x_bits + o->y_bits;
    return hwp__rap_fill(&o->tree, &o->tree);
}

static bool hwp__rap2_ok(const hwp_rap2 *r) {
    return r && r->head.magic == HWP__RAP2_MAGIC && hwp__rap_ok(&r->t);
}

HWP_API size_t hwp_rap2_bytes(const hwp_rap2_desc *d) {
    hwp_rap2_desc o;
    if (hwp__rap2_fill(&o, d)) return 0;
    return hwp_rap_bytes(&o.tree);
}

HWP_API hwp_status hwp_rap2_init(hwp_rap2 *r, void *mem, size_t bytes,
                                 const hwp_rap2_desc *d, hwp_cost *cost) {
    hwp_rap2_desc o;
    const char *why;
    hwp_status st;
    if (!r) return HWP_EINVAL;
    hwp__zero(r, sizeof *r);
    why = hwp__rap2_fill(&o, d);
    if (why) return hwp__fail(&r->head, HWP_EINVAL, why);
    st = hwp_rap_init(&r->t, mem, bytes, &o.tree, cost);
    if (st != HWP_OK) return hwp__fail(&r->head, st, hwp_why(&r->t));
    r->desc = o;
    r->x_mask = hwp_mask64(o.x_bits);
    r->y_mask = hwp_mask64(o.y_bits);
    r->m = o.x_bits < o.y_bits ? o.x_bits : o.y_bits;
    r->x_long = o.x_bits > o.y_bits;
    r->head.magic = HWP__RAP2_MAGIC;
    return hwp__fail(&r->head, HWP_OK, "");
}

/* The tree's own status and reason, as the 2-D instance's. */
static hwp_status hwp__rap2_pass(hwp_rap2 *r, hwp_status st) {
    return hwp__fail(&r->head, st, st == HWP_OK ? "" : hwp_why(&r->t));
}

HWP_API hwp_status hwp_rap2_reset(hwp_rap2 *r) {
    if (!hwp__rap2_ok(r)) return HWP_EINVAL;
    return hwp__rap2_pass(r, hwp_rap_reset(&r->t));
}

HWP_API hwp_status hwp_rap2_flush(hwp_rap2 *r) {
    if (!hwp__rap2_ok(r)) return HWP_EINVAL;
    return hwp__rap2_pass(r, hwp_rap_flush(&r->t));
}

/* The tree's merge: a host operation, no modelled cycles. */
HWP_API hwp_status hwp_rap2_merge(hwp_rap2 *dst, const hwp_rap2 *src) {
    const hwp_field *diff;
    if (!hwp__rap2_ok(dst)) return HWP_EINVAL;
    if (!hwp__rap2_ok(src) || dst == src)
        return hwp__fail(&dst->head, HWP_EINVAL,
                         "rap2: merge needs two distinct, initialised trees");
    diff = hwp__field_diff(&dst->desc, &src->desc, hwp__rap2_desc_f,
                           HWP__N(hwp__rap2_desc_f));
    if (diff) return hwp__fail(&dst->head, HWP_EMISMATCH, diff->why);
    return hwp__rap2_pass(dst, hwp_rap_merge(&dst->t, &src->t));
}

HWP_API hwp_status hwp_rap2_get_stats(const hwp_rap2 *r, hwp_rap2_stats *out) {
    if (!hwp__rap2_ok(r)) return HWP_EINVAL;
    return hwp_rap_get_stats(&r->t, out);
}

HWP__GET_DESC_FN(rap2, desc, hwp__rap2_ok(x))

HWP_API uint64_t hwp_rap2_bound(const hwp_rap2 *r) {
    return hwp__rap2_ok(r) ? hwp_rap_bound(&r->t) : 0;
}

/* A tree range as a rectangle in the caller's coordinates. */
static void hwp__rap2_rect_of(const hwp_rap2 *r, const hwp_rap_range *rg,
                              hwp_rap2_rect *o) {
    hwp__rap2_box_of(r, rg->lo, rg->hi, &o->box);
    o->box.x_lo += r->desc.x_base;
    o->box.x_hi += r->desc.x_base;
    o->box.y_lo += r->desc.y_base;
    o->box.y_hi += r->desc.y_base;
    o->count = rg->count;
    o->sum = rg->sum;
    o->upper = rg->upper;
    o->excl = rg->excl;
    o->depth = rg->depth;
    o->node = rg->node;
    o->hot = rg->hot;
    o->pad = 0;
}

/* A visitor of tree ranges that hands rectangles on (fn), or keeps the
 * first cap of them (out), or writes them to a report (w). */
typedef struct hwp__rap2_each {
    const hwp_rap2 *r;
    hwp_rap2_visit fn;
    void *ctx;
    hwp_rap2_rect *out;
    size_t cap, n;
    const hwp_writer *w;
} hwp__rap2_each;

static void hwp__rap2_each_visit(void *ctx, const hwp_rap_range *rg) {
    hwp__rap2_each *e = (hwp__rap2_each *)ctx;
    hwp_rap2_rect x;
    hwp__rap2_rect_of(e->r, rg, &x);
    if (e->fn) e->fn(e->ctx, &x);
    if (e->out && e->n < e->cap) e->out[e->n] = x;
    if (e->w) {
        hwp_put_str(e->w, e->n ? ",{\"x_lo\":\"" : "{\"x_lo\":\"");
        hwp_put_hex(e->w, x.box.x_lo);
        hwp_put_str(e->w, "\"");
        hwp_put_json_hex(e->w, "x_hi", x.box.x_hi);
        hwp_put_json_hex(e->w, "y_lo", x.box.y_lo);
        hwp_put_json_hex(e->w, "y_hi", x.box.y_hi);
        hwp_put_json_u64(e->w, "sum", x.sum);
        hwp_put_json_u64(e->w, "upper", x.upper);
        hwp_put_json_u64(e->w, "excl", x.excl);
        hwp_put_str(e->w, "}");
    }
    e->n++;
}

static size_t hwp__rap2_run(const hwp_rap2 *r, hwp__rap2_each *e, double phi,
                            bool only_hot) {
    e->r = r;
    e->n = 0;
    (void)hwp__rap_run(&r->t, hwp__rap2_each_visit, e, phi, only_hot);
    return e->n;
}

HWP_API hwp_status hwp_rap2_foreach(const hwp_rap2 *r, hwp_rap2_visit fn,
                                    void *ctx) {
    hwp__rap2_each e;
    if (!hwp__rap2_ok(r) || !fn) return HWP_EINVAL;
    hwp__zero(&e, sizeof e);
    e.fn = fn;
    e.ctx = ctx;
    (void)hwp__rap2_run(r, &e, r->desc.tree.hot, false);
    return HWP_OK;
}

/* Hot rectangles by sec. 4.1's rule on the tree: a range whose own count
 * plus its non-hot descendants' reaches phi * n. */
HWP_API size_t hwp_rap2_hot(const hwp_rap2 *r, double phi, hwp_rap2_rect *out,
                            size_t cap) {
    hwp__rap2_each e;
    if (!hwp__rap2_ok(r) || !(phi > 0.0 && phi <= 1.0) || (cap && !out))
        return 0;
    hwp__zero(&e, sizeof e);
    e.out = out;
    e.cap = cap;
    return hwp__rap2_run(r, &e, phi, true);
}

/* keys in [lo, hi] of a box's side [a, b] as a fraction of the side. */
static double hwp__rap2_share(uint64_t lo, uint64_t hi, uint64_t a,
                              uint64_t b) {
    uint64_t s = lo > a ? lo : a, t = hi < b ? hi : b;
    return ((double)(t - s) + 1.0) / ((double)(b - a) + 1.0);
}

/* As hwp__rap_interval, over rectangles: nodes inside q give the lower
 * bound, nodes that meet it the upper bound, and a node that only meets
 * it adds its share by area to the estimate. q is relative to the bases;
 * a node's rectangle holds its children's, so a miss prunes the subtree. */
static void hwp__rap2_within(const hwp_rap2 *r, uint32_t idx, uint64_t nlo,
                             const hwp_rap2_box *q, hwp_rap_est *e) {
    const hwp_rap *t = &r->t;
    const hwp_rap_node *x = &t->pool[idx];
    hwp_rap2_box b;
    unsigned dig, k = 0;
    hwp__rap2_box_of(r, nlo, nlo | hwp_mask64(t->shift[x->depth]), &b);
    if (b.x_hi < q->x_lo || b.x_lo > q->x_hi || b.y_hi < q->y_lo ||
        b.y_lo > q->y_hi)
        return;
    e->upper += x->count;
    if (b.x_lo >= q->x_lo && b.x_hi <= q->x_hi && b.y_lo >= q->y_lo &&
        b.y_hi <= q->y_hi) {
        e->lower += x->count;
        e->estimate += (double)x->count;
    } else if (x->count) {
        e->estimate += (double)x->count *
                       hwp__rap2_share(q->x_lo, q->x_hi, b.x_lo, b.x_hi) *
                       hwp__rap2_share(q->y_lo, q->y_hi, b.y_lo, b.y_hi);
    }
    for (dig = 0; dig < 16; dig++)
        if ((x->mask >> dig) & 1u)
            hwp__rap2_within(r, x->child + k++,
                             hwp__rap_lo_of(t, nlo, x->depth, dig), q, e);
}

/* One side of a box clipped to a dimension's domain, relative to its
 * base; false when they do not meet. */
static bool hwp__rap2_clip(uint64_t lo, uint64_t hi, uint64_t base,
                           uint64_t mask, uint64_t *a, uint64_t *b) {
    if (hi < base || (lo > base && lo - base > mask)) return false;
    *a = lo < base ? 0 : lo - base;
    *b = hi - base > mask ? mask : hi - base;
    return true;
}

HWP_API hwp_status hwp_rap2_query(const hwp_rap2 *r, const hwp_rap2_box *box,
                                  hwp_rap_est *out) {
    const hwp_rap *t;
    hwp_rap_est e;
    hwp_rap2_box q;
    uint32_t i;
    if (!hwp__rap2_ok(r)) return HWP_EINVAL;
    if (!box || !out)
        return hwp__refuse(&r->head, HWP_EINVAL, "rap2: query: box and out must be non-NULL");
    if (box->x_lo > box->x_hi || box->y_lo > box->y_hi)
        return hwp__refuse(&r->head, HWP_EINVAL, "rap2: query: the box needs x_lo <= x_hi and y_lo <= y_hi");
    t = &r->t;
    e.lower = e.upper = 0;
    e.estimate = 0.0;
    if (hwp__rap2_clip(box->x_lo, box->x_hi, r->desc.x_base, r->x_mask,
                       &q.x_lo, &q.x_hi) &&
        hwp__rap2_clip(box->y_lo, box->y_hi, r->desc.y_base, r->y_mask,
                       &q.y_lo, &q.y_hi)) {
        hwp__rap2_within(r, 0, 0, &q, &e);
        for (i = t->bhead; i != t->btail; i++) {
            const hwp_rap_slot *s = &t->buf[i & t->buf_mask];
            uint64_t x, y;
            hwp__rap2_part(r, s->key, &x, &y);
            if (x >= q.x_lo && x <= q.x_hi && y >= q.y_lo && y <= q.y_hi)
                hwp__rap_est_exact(&e, s->count);
        }
    }
    return hwp__rap_est_out(e, out);
}

typedef struct hwp__rap2_exact {
    const hwp_rap2 *r;
    hwp_rap2_exact_fn fn;
    void *ctx;
} hwp__rap2_exact;

/* Every tree range is a rectangle: its exact count is the box's. */
static uint64_t hwp__rap2_exact_range(void *ctx, uint64_t lo, uint64_t hi) {
    const hwp__rap2_exact *c = (const hwp__rap2_exact *)ctx;
    hwp_rap_range rg;
    hwp_rap2_rect x;
    hwp__zero(&rg, sizeof rg);
    rg.lo = lo;
    rg.hi = hi;
    hwp__rap2_rect_of(c->r, &rg, &x);
    return c->fn(c->ctx, &x.box);
}

/* hwp_rap_accuracy over rectangles: sec. 4.3's percent error on the hot
 * rectangles, the worst additive error of any node, and the nodes whose
 * exact count falls outside [sum, upper] (must be none). */
HWP_API hwp_status hwp_rap2_accuracy(const hwp_rap2 *r, double phi,
                                     hwp_rap2_exact_fn exact, void *ctx,
                                     hwp_rap_acc *out) {
    hwp__rap2_exact c;
    if (!hwp__rap2_ok(r) || !exact) return HWP_EINVAL;
    c.r = r;
    c.fn = exact;
    c.ctx = ctx;
    return hwp_rap_accuracy(&r->t, phi, hwp__rap2_exact_range, &c, out);
}

/* The envelope, the desc, the tree's own report (which holds the whole
 * profile, pairs outside the domain in its dropped) and the hot
 * rectangles for readers that do not decode tree keys. */
HWP_API void hwp_rap2_write_json(const hwp_rap2 *r, const hwp_writer *w) {
    hwp__rap2_each e;
    if (!hwp__rap2_ok(r)) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_json_envelope(w, "rap2", 1);
    hwp__field_put(w, "desc", &r->desc, hwp__rap2_desc_f, HWP__N(hwp__rap2_desc_f));
    hwp_put_str(w, ",\"tree\":");
    hwp_rap_write_json(&r->t, w);
    hwp_put_str(w, ",\"hot\":[");
    hwp__zero(&e, sizeof e);
    e.w = w;
    (void)hwp__rap2_run(r, &e, r->desc.tree.hot, true);
    hwp_put_str(w, "]}\n");
}

/* A hot rectangle a line: [x_lo, x_hi] x [y_lo, y_hi], its sum and bound. */
static void hwp__rap2_text_rect(void *ctx, const hwp_rap2_rect *x) {
    const hwp_writer *w = (const hwp_writer *)ctx;
    hwp__put_str_hex(w, "  [", x->box.x_lo);
    hwp__put_str_hex(w, ", ", x->box.x_hi);
    hwp__put_str_hex(w, "] x [", x->box.y_lo);
    hwp__put_str_hex(w, ", ", x->box.y_hi);
    hwp_put_str_u64(w, "] sum ", x->sum);
    hwp_put_str_u64(w, " upper ", x->upper);
    hwp_put_str(w, "\n");
}

HWP_API void hwp_rap2_write_text(const hwp_rap2 *r, const hwp_writer *w) {
    hwp__rap2_each e;
    hwp_rap2_stats st;
    if (!hwp__rap2_ok(r)) {
        hwp_put_str(w, "rap2: not initialised\n");
        return;
    }
    hwp_put_str_u64(w, "rap2: x ", r->desc.x_bits);
    hwp_put_str_u64(w, " bits, y ", r->desc.y_bits);
    hwp__put_str_f64(w, " bits, eps=", r->desc.tree.eps, 4);
    (void)hwp_rap2_get_stats(r, &st);
    hwp__field_text(w, &st, hwp__rap_stats_f, HWP__N(hwp__rap_stats_f), " ", "=", "");
    hwp__put_str_f64(w, "\nrap2: hot rectangles (>= ", 100.0 * r->desc.tree.hot, 1);
    hwp_put_str(w, "% of n):\n");
    hwp__zero(&e, sizeof e);
    e.fn = hwp__rap2_text_rect;
    e.ctx = (void *)(uintptr_t)w;
    (void)hwp__rap2_run(r, &e, r->desc.tree.hot, true);
}

static const char *hwp__rap2_refill(void *d) {
    return hwp__rap2_fill((hwp_rap2_desc *)d, (const hwp_rap2_desc *)d);
}

HWP__READ_DESC_FN(rap2, "rap2", hwp__rap2_desc_f, hwp__rap2_refill)

/* The envelope and desc are checked here, then the tree's report goes to
 * the tree's reader, which checks all of it before it changes anything:
 * a refused report leaves the profile as it was. Offsets are the whole
 * text's. */
HWP_API hwp_status hwp_rap2_read_json(hwp_rap2 *r, const char *json, size_t n,
                                      hwp_json_err *err) {
    hwp_json j;
    char key[16];
    size_t tat = 0, tend = 0;
    unsigned seen = 0;
    hwp_status st;
    if (!hwp__rap2_ok(r)) return HWP_EINVAL;
    hwp_json_init(&j, json, n);
    if (hwp_json_envelope(&j, "rap2", 1)) {
        while (hwp_json_member(&j, key, sizeof key)) {
            size_t at = j.pos;
            if (hwp_json_key_is(key, "desc") && !(seen & 1u)) {
                hwp_rap2_desc d;
                const hwp_field *diff;
                if (!hwp__field_read_filled(&j, &d, sizeof d, hwp__rap2_desc_f,
                                            HWP__N(hwp__rap2_desc_f), hwp__rap2_refill))
                    break;
                diff = hwp__field_diff(&r->desc, &d, hwp__rap2_desc_f,
                                       HWP__N(hwp__rap2_desc_f));
                if (diff) {
                    j.pos = at;
                    (void)hwp_json_fail(&j, diff->why);
                    (void)hwp_json_status(&j, err);
                    return hwp__fail(&r->head, HWP_EMISMATCH, diff->why);
                }
                seen |= 1u;
            } else if (hwp_json_key_is(key, "tree") && !(seen & 2u)) {
                tat = at;
                if (!hwp_json_skip(&j)) break;
                tend = j.pos;
                seen |= 2u;
            } else if (!hwp_json_skip(&j)) {
                break;
            }
        }
        if (hwp_json_end(&j) && seen != 3u)
            (void)hwp_json_fail(&j, "rap2: report needs desc and tree");
    }
    if (j.why) {
        st = hwp_json_status(&j, err);
        return hwp__fail(&r->head, st, j.why);
    }
    st = hwp_rap_read_json(&r->t, json + tat, tend - tat, err);
    if (st != HWP_OK && err) err->offset += tat;
    return hwp__rap2_pass(r, st);
}

/* ---- SVG: ranges as nested bars over the key space -------------------------- */

typedef struct hwp__rap_svg {
    const hwp_writer *w;
    const hwp_rap *r;
    uint64_t flo;
    unsigned fdepth;
    double span; /* keys in the focus range */
} hwp__rap_svg;

#define HWP__RAP_SVG_W 960.0
#define HWP__RAP_SVG_ROW 16.0

static void hwp__rap_svg_node(void *ctx, const hwp_rap_range *rg) {
    hwp__rap_svg *s = (hwp__rap_svg *)ctx;
    const hwp_writer *w = s->w;
    double x0, x1, y, frac;
    if (rg->depth < s->fdepth || rg->lo < s->flo ||
        (double)(rg->lo - s->flo) >= s->span || !rg->sum)
        return;
    x0 = (double)(rg->lo - s->flo) / s->span * HWP__RAP_SVG_W;
    x1 = ((double)(rg->hi - s->flo) + 1.0) / s->span * HWP__RAP_SVG_W;
    if (x1 - x0 < 1.0) x1 = x0 + 1.0;
    y = 20.0 + (rg->depth - s->fdepth) * HWP__RAP_SVG_ROW;
    frac = s->r->n ? (double)rg->sum / (double)s->r->n : 0.0;
    hwp__put_str_f64(w, "<rect x=\"", x0, 2);
    hwp__put_str_f64(w, "\" y=\"", y, 1);
    hwp__put_str_f64(w, "\" width=\"", x1 - x0, 2);
    hwp_put_str(w, "\" height=\"14\" fill=\"");
    if (rg->hot) {
        hwp_put_str(w, "#d62728\" stroke=\"#000\"><title>hot ");
    } else {
        hwp_put_str_u64(w, "rgb(", (uint64_t)(230.0 - 180.0 * frac));
        hwp_put_str_u64(w, ",", (uint64_t)(230.0 - 180.0 * frac));
        hwp_put_str(w, ",240)\"><title>");
    }
    hwp_put_hex(w, rg->lo);
    hwp__put_str_hex(w, "-", rg->hi);
    hwp_put_str(w, ": ");
    hwp__rap_pct(w, rg->sum, s->r->n);
    hwp_put_str(w, " (own+cold ");
    hwp__rap_pct(w, rg->excl, s->r->n);
    hwp_put_str(w, ")</title></rect>\n");
    if (rg->hot && x1 - x0 > 40.0) {
        hwp__put_str_f64(w, "<text x=\"", x0 + 2.0, 2);
        hwp__put_str_f64(w, "\" y=\"", y + 11.0, 1);
        hwp_put_str(w, "\" font-size=\"10\" fill=\"#fff\">");
        hwp__rap_pct(w, rg->excl, s->r->n);
        hwp_put_str(w, "</text>\n");
    }
}

static uint64_t hwp__rap_subsum(const hwp_rap *r, uint32_t idx) {
    const hwp_rap_node *x = &r->pool[idx];
    uint64_t s = x->count;
    unsigned i, n = hwp__rap_popcnt16(x->mask);
    for (i = 0; i < n; i++) s += hwp__rap_subsum(r, x->child + i);
    return s;
}

/* Rows are tree depths from node x (whose range starts at flo) down; the
 * x axis is x's range. */
static void hwp__rap_svg_draw(const hwp_rap *r, const hwp_writer *w,
                              uint32_t x, uint64_t flo) {
    hwp__rap_svg s;
    unsigned maxd = 0, i;
    s.w = w;
    s.r = r;
    s.flo = r->key_base + flo;
    s.fdepth = r->pool[x].depth;
    s.span = (double)hwp_mask64(r->shift[s.fdepth]) + 1.0;
    for (i = 0; i < r->used; i++)
        if (!(r->pool[i].flags & HWP__RAP_GARBAGE) && r->pool[i].depth > maxd)
            maxd = r->pool[i].depth;
    hwp_put_str(w, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"960\" "
                   "height=\"");
    hwp_put_u64(w, (uint64_t)(40.0 + (maxd - s.fdepth + 1) * HWP__RAP_SVG_ROW));
    hwp_put_str(w, "\" font-family=\"sans-serif\">\n<text x=\"0\" y=\"12\" "
                   "font-size=\"11\">RAP tree over [");
    hwp_put_hex(w, s.flo);
    hwp__put_str_hex(w, ", ", s.flo | hwp_mask64(r->shift[s.fdepth]));
    hwp_put_str_u64(w, "], n = ", r->n);
    hwp_put_str_u64(w, ", ", r->nodes);
    hwp_put_str(w, " nodes; one row per depth; red = hot (sec. 4.1), "
                   "shade = share of n</text>\n");
    (void)hwp__rap_run(r, hwp__rap_svg_node, &s, r->desc.hot, false);
    hwp_put_str(w, "</svg>\n");
}

/* The x axis is the smallest range that holds 99% of the weight (found
 * by walking down while one child carries it), so a code region in a
 * 64-bit space is not drawn as a sliver. */
HWP_API void hwp_rap_write_svg(const hwp_rap *r, const hwp_writer *w) {
    uint32_t x = 0;
    uint64_t flo = 0;
    if (!hwp__rap_ok(r)) return;
    for (;;) {
        const hwp_rap_node *a = &r->pool[x];
        unsigned dig, k = 0;
        uint32_t next = x;
        for (dig = 0; dig < 16; dig++)
            if ((a->mask >> dig) & 1u) {
                uint32_t c = a->child + k++;
                if ((double)hwp__rap_subsum(r, c) >= 0.99 * (double)r->n) {
                    next = c;
                    flo = hwp__rap_lo_of(r, flo, a->depth, dig);
                }
            }
        if (next == x) break;
        x = next;
    }
    hwp__rap_svg_draw(r, w, x, flo);
}

/* The x axis is the smallest tree range holding [lo, hi]: e.g. a
 * program's text segment when shared libraries hold more than 1% of the
 * PCs and the 99% rule would draw all of them. An empty interval, or one
 * reaching past 2^w (taken mod 2^w its ends could swap), draws nothing.
 * HWP_EINVAL, with the reason in hwp_why, for no tree, no writer,
 * lo > hi or an interval outside the domain. */
HWP_API hwp_status hwp_rap_write_svg_range(const hwp_rap *r,
                                           const hwp_writer *w, uint64_t lo,
                                           uint64_t hi) {
    uint32_t x = 0;
    uint64_t flo = 0;
    if (!hwp__rap_ok(r)) return HWP_EINVAL;
    if (!w) return hwp__refuse(&r->head, HWP_EINVAL, "rap: svg: the writer must be non-NULL");
    if (lo > hi) return hwp__refuse(&r->head, HWP_EINVAL, "rap: svg: lo must be <= hi");
    if (lo < r->key_base || hi - r->key_base > r->key_mask)
        return hwp__refuse(&r->head, HWP_EINVAL,
                           "rap: svg: [lo, hi] must lie inside the domain [key_base, key_base + 2^key_bits)");
    lo -= r->key_base;
    hi -= r->key_base;
    for (;;) {
        const hwp_rap_node *a = &r->pool[x];
        unsigned d = a->depth, dig;
        if (d >= r->levels) break;
        dig = (unsigned)(lo >> r->shift[d + 1]) & r->digit_mask;
        /* x holds both ends; its child for lo's digit holds hi too when
         * the digits agree (the bits above are x's). */
        if (dig != ((unsigned)(hi >> r->shift[d + 1]) & r->digit_mask) ||
            !((a->mask >> dig) & 1u))
            break;
        x = a->child + hwp__rap_popcnt16(a->mask & ((1u << dig) - 1u));
        flo = hwp__rap_lo_of(r, flo, d, dig);
    }
    hwp__rap_svg_draw(r, w, x, flo);
    return HWP_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_IMPL */
