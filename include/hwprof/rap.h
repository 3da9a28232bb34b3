/* hwprof/rap.h: Range Adaptive Profiling trees in fixed memory.
 *
 * Model of Mysore, Agrawal, Sherwood, Shrivastava & Suri, "Profiling over
 * Adaptive Ranges" (seed 002). A stream of 64-bit keys (PCs, load values,
 * data addresses, any event identifier) is summarised into a tree of
 * ranges over the domain [0, 2^w): every event is counted once, in the
 * smallest range of the tree that contains it (sec. 2.1); a range whose
 * counter passes SplitThreshold grows b children (sec. 2.2); batched,
 * bottom-up merges at exponentially growing intervals fold ranges that no
 * longer carry weight back into their parents (sec. 3.1); hot ranges are
 * read off with the paper's definition (sec. 4.1). Counters are never
 * decremented, so every estimate is a lower bound (sec. 4.3).
 *
 * Implemented from the paper
 *   sec. 2.1   update: smallest containing range, one counter per event
 *   sec. 2.2   split: count > SplitThreshold = eps * n / log(R), b children
 *              with zero counts, the parent keeps its count; merge: folded
 *              children are added into the parent
 *   sec. 3.1   branching factor b (default 4), merges batched at n = e,
 *              e q, e q^2, ... (default e = 2^10 as in sec. 3.3, q = 2)
 *   sec. 3.3   stage-0 event buffer that combines identical events; the
 *              partial-children split after an internal merge; cycle cost
 *              (4 cycles an event, a pipeline flush per split, a stall per
 *              node scanned in a merge batch) through cost.h
 *   sec. 3.4   ~128 bits a node: hwp_rap_node is 16 bytes
 *   sec. 4.1   hot ranges: count plus the counts of non-hot sub-ranges is
 *              at least a fraction phi of n
 *   sec. 4.3   percent error on hot ranges against an exact profile
 *
 * Choices the paper leaves open (docs/rap.md explains each)
 *   log(R)     the maximum height of the tree, ceil(w / log2 b) levels
 *              (sec. 2.2 calls log(R) "the maximum possible height of the
 *              tree"); with it the error of any tree range is at most
 *              eps * n + levels * max_weight (the second term is the one
 *              event each ancestor may take before it splits).
 *   threshold  recomputed in the cold path whenever n has grown by 1/64
 *              since the last time; between recomputations a slightly
 *              lower (stale) threshold is used, which only splits earlier
 *              and so keeps the bound.
 *   merge      post-order; a leaf child C of A folds into A while
 *              count(A) + count(C) <= threshold, smallest child first.
 *              Folding some children but not others leaves A with partial
 *              children; events for a missing child count at A, and when
 *              A passes the threshold again it re-grows the missing
 *              children around the surviving ones (sec. 3.3).
 *   pool full  a split that finds no room runs a merge batch early (at most
 *              once per 25% growth of n); if that is not allowed or does
 *              not help, splits are deferred until n grows by 1/64 and the
 *              deferral is counted. A deferred split can loosen the eps
 *              bound; hwp_rap_bound() always gives the bound that holds.
 *   buffer     stage 0 is a direct-mapped combining buffer: an event whose
 *              key is resident adds to that entry, otherwise the resident
 *              entry goes to the tree as one weighted update. Sec. 3.3's
 *              entries drain into the engine rather than wait: once the
 *              buffer holds more than L = max(T, min(4 * entries, 4 * T))
 *              weight (T = SplitThreshold), entries leave in slot order
 *              (a round robin) until it holds no more. Updates then weigh
 *              at most L + w_max, and without deferral every tree range's
 *              error is at most eps * n + levels * (L + w_max) plus the
 *              weight still buffered; L <= 4 T, so at most 5 eps n +
 *              levels * w_max at any n (docs/rap.md, "The bound"), and
 *              L = T once T >= 4 * entries.
 *   lookup     the TCAM of sec. 3.3 finds the smallest range in one step;
 *              software walks the trie. The walk starts at the end of the
 *              root's single-child spine, where a 256-entry table (jump[],
 *              in the instance) indexed by the next 8 key bits gives the
 *              deepest node on that stretch of the path, or, when the
 *              key lies in the range at the end of that node's chain of
 *              single-internal-child nodes, the chain's end (skip[]);
 *              for b <= 4 each further level is a table lookup on
 *              (mask, digit). An optional cache (desc.cache) maps a key
 *              to its smallest range until the tree next changes shape.
 *              None of them changes the tree (docs/rap.md, "Speed").
 *              Without cache, with b = 4 and an even w, one test per
 *              event (two with a cost shim) selects a copy of the update
 *              with the cache and walk tests compiled out, with or without
 *              the cost shim's charge (r->cfg); the stage-0 buffer's
 *              hit is inline too, its misses and every other
 *              configuration call one out-of-line copy (hwp__rap_tree).
 *              The charge stays per tree update.
 *
 * API (hot paths inline, the rest with HWPROF_IMPL)
 *   hwp_rap_bytes(desc)                 storage for a desc (0 if invalid)
 *   HWP_RAP_BYTES(nodes, buffer, cache) the same at compile time
 *   hwp_rap_nodes_for(eps, w, b)        worst-case node count, to size a pool
 *   hwp_rap_init(r, mem, bytes, desc, cost)
 *   hwp_rap_reset(r)                    empty tree, same desc and storage
 *   hwp_rap_add(r, key, weight)         inline: one event (weight >= 1)
 *   hwp_rap_insn(r, insn)               inline: the shared record, filtered
 *                                       by desc.cls_mask / desc.ev_mask,
 *                                       keyed by desc.source
 *   hwp_rap_flush(r)                    drain the stage-0 buffer into the tree
 *   hwp_rap_foreach(r, fn, ctx)         every node, children before parents
 *   hwp_rap_estimate(r, lo, hi, &lower, &upper)   any interval [lo, hi]
 *   hwp_rap_bound(r)                    additive error that holds for every
 *                                       tree range (a posteriori), weight
 *                                       still in stage 0 included
 *   hwp_rap_hot(r, phi, out, cap)       hot ranges (sec. 4.1)
 *   hwp_rap_accuracy(r, phi, exact, ctx, &acc) percent error on hot ranges
 *                                       and worst error over all nodes
 *   hwp_rap_merge(dst, src)             fold a tree built with the same desc
 *   hwp_rap_write_text(r, w)            dump in the spirit of rap_finalize
 *   hwp_rap_write_json(r, w)            stable schema, see docs/rap.md
 *   hwp_rap_write_svg(r, w)             hot ranges as nested bars
 *   hwp_rap_write_svg_range(r, w, lo, hi)  the same over the smallest
 *                                       tree range holding [lo, hi];
 *                                       HWP_EINVAL (nothing drawn, r
 *                                       const so no hwp_why) for a NULL
 *                                       tree or writer, lo > hi or
 *                                       hi >= 2^w
 *
 * Readable fields of hwp_rap (never write them): n, nodes, peak, cap,
 * used, levels, split_at, updates, buffered, buf_limit, splits, merges,
 * early_merges, folded, deferred, scanned.
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
    HWP_RAP_SRC_ADDR,    /* data addresses (zero-load ranges, sec 4.4) */
    HWP_RAP_SRC_VALUE    /* load values (sec. 4.1, 4.4)                */
};

/* Zero means the paper's default for every field. */
typedef struct hwp_rap_desc {
    uint32_t key_bits;    /* w: domain [0, 2^w), 1..64; 0 = 64           */
    uint32_t branching;   /* b: 2, 4, 8 or 16; 0 = 4 (sec. 3.1)          */
    double eps;           /* error parameter in (0, 1); 0 = 0.01         */
    uint32_t nodes;       /* pool size in nodes, >= b + 1; 0 = 512, the
                             paper's 8 KB at 128 bits a node             */
    uint32_t q;           /* merge interval ratio 2..64; 0 = 2 (sec 3.1) */
    uint64_t first_merge; /* events before the first merge batch;
                             0 = 1024 (the 2^10 of sec. 3.3)             */
    uint32_t buffer;      /* stage-0 entries: 0 = no buffer, else a power
                             of two up to 2^20 (the paper used 1K)       */
    uint32_t cache;       /* lookup-cache entries: 0 = none, else a power
                             of two up to 2^20; the software stand-in for
                             the TCAM match of sec. 3.3 (docs/rap.md)    */
    uint32_t source;      /* HWP_RAP_SRC_*, for hwp_rap_insn             */
    uint32_t cls_mask;    /* HWP_CLS_BIT()s hwp_rap_insn accepts; 0 = all */
    uint32_t ev_mask;     /* HWP_EV_* bits of which one must be set;
                             0 = no requirement                          */
    double hot;           /* hot fraction for the reports; 0 = 0.10      */
} hwp_rap_desc;

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

/* A stage-0 buffer entry: a key and how often it was seen (sec. 3.3). */
typedef struct hwp_rap_slot {
    uint64_t key, count;
} hwp_rap_slot;

/* A lookup-cache entry: the smallest range holding `key`, valid while the
 * tree's shape is the one of `epoch`. */
typedef struct hwp_rap_hit {
    uint64_t key;
    uint32_t node, epoch;
} hwp_rap_hit;

typedef struct hwp_rap {
    hwp_head head;
    hwp_rap_desc desc; /* the desc with defaults filled in              */
    hwp_cost *cost;
    hwp_rap_node *pool;
    uint64_t *live;    /* compaction scratch: a bit per slot            */
    uint32_t *rank;    /* compaction scratch: live slots before a word  */
    hwp_rap_slot *buf; /* stage-0 buffer, NULL when off                  */
    hwp_rap_hit *cache; /* lookup cache, NULL when off                   */
    uint64_t key_mask; /* keys are taken modulo 2^w                     */
    uint64_t n;        /* weight delivered to the tree                  */
    uint64_t split_at; /* threshold in force; all-ones while deferred   */
    uint64_t next_cold;  /* n at which the hot path enters the cold path */
    uint64_t recalc_at;  /* n at which the threshold is recomputed       */
    uint64_t next_merge; /* n of the next scheduled merge batch          */
    uint64_t last_merge; /* n at the last merge batch                    */
    double eps_per_level; /* eps / levels                                */
    /* statistics */
    uint64_t updates;  /* tree updates (events leaving stage 0)          */
    uint64_t buffered; /* weight waiting in the stage-0 buffer; the
                          weight offered is n + buffered                 */
    uint64_t buf_limit; /* most weight the buffer may hold: max(T,
                           min(4 * entries, 4 * T)), T the threshold, set
                           with it; past it entries drain in slot order */
    uint64_t splits, merges, early_merges, folded, deferred, scanned;
    uint32_t cap;    /* pool size in nodes                               */
    uint32_t used;   /* slots in use, live or awaiting compaction        */
    uint32_t nodes;  /* live nodes                                       */
    uint32_t peak;   /* most live nodes ever                             */
    uint32_t levels; /* maximum height of the tree: ceil(w / log2 b)     */
    uint32_t digit_mask, buf_mask, log2b;
    uint32_t buf_next; /* the next slot to drain                        */
    uint32_t cache_mask, epoch; /* epoch: bumped whenever the shape changes */
    /* The root's spine: the chain of single-child nodes below the root
     * (the 40 empty top bits above a code region in a 64-bit space). A
     * key inside the spine's last range starts its walk there. */
    uint32_t spine_node, spine_depth;
    uint64_t spine_lo, spine_mask;
    /* The next HWP__RAP_JUMP_BITS key bits below the spine index jump[]:
     * the deepest node on that stretch of the key's path, so one load
     * replaces up to 8 / log2 b levels of the walk (rebuilt on every
     * reshape, like the spine). */
    uint32_t jump_shift, jump_mask, jump_depth;
    hwp_rap_node *jump[256];
    /* Chain skip: below jump[e] (a node at the jump depth), the chain of
     * nodes with exactly one internal child ends at skip[e], whose range
     * starts at skip_lo[e] and spans 2^skip_sh[e] keys. A key inside it
     * starts its walk there: on a Zipf stream at eps = 10% a hot key's
     * chain runs 20+ levels below the jump table. Where there is no
     * chain, skip[e] = jump[e]. */
    hwp_rap_node *skip[256];
    uint64_t skip_lo[256];
    uint8_t skip_sh[256];
    /* HWP__RAP_* bits, fixed at init: which tests the per-event path can
     * leave out (hwp_rap_add passes them to hwp__rap_update as constants). */
    uint32_t cfg;
    /* hwp__rap_stride, used when walk != 0 (b <= 4 and log2 b divides w;
     * walk = log2 b): step[(mask << log2 b) | digit] is 1 + the child's
     * offset in its block, 0 when the child is absent or the node is a
     * leaf; lsh[d] = 64 - shift[d] moves the key bits below the start of a
     * depth-d range to the top (0 at the deepest level: only leaves). */
    uint32_t walk;
    uint8_t step[64];
    uint8_t lsh[68];
    uint8_t shift[68]; /* shift[d]: a depth-d range spans 2^shift[d] keys */
} hwp_rap;

/* What hwp_rap_foreach and hwp_rap_hot report for a range. */
typedef struct hwp_rap_range {
    uint64_t lo, hi;  /* the range, inclusive                           */
    uint64_t count;   /* the node's own counter                         */
    uint64_t sum;     /* its subtree: lower bound on events in [lo, hi]  */
    uint64_t upper;   /* sum + every ancestor's count: upper bound       */
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
#define HWP__RAP_JUMP_BITS 8u /* jump[] has 2^8 entries */
/* What the per-event path knows at compile time (r->cfg, and the `cfg`
 * constant of each inlined copy of hwp__rap_update). */
#define HWP__RAP_FAST 1u   /* b = 4 and 2 | w (the strided walk), no cache */
#define HWP__RAP_NOCOST 2u /* no cost shim: no charge                     */
#define HWP__RAP_COST 4u   /* a cost shim: charged without the NULL test  */
#define HWP__RAP_BUF 8u    /* a stage-0 buffer (r->cfg only)             */
/* Neither NOCOST nor COST: the NULL-safe hwp_cost_charge decides. */
#if defined(__GNUC__) || defined(__clang__)
#define HWP__RAP_ASSUME(x) ((x) ? (void)0 : __builtin_unreachable())
#else
#define HWP__RAP_ASSUME(x) ((void)0)
#endif
#define HWP__RAP_ALIGN16(n) (((n) + 15u) & ~(size_t)15u)
/* Storage for a pool of `nodes`, a stage-0 buffer of `buffer` entries and
 * a lookup cache of `cache` entries. */
#define HWP_RAP_BYTES(nodes, buffer, cache)                                 \
    (HWP__RAP_ALIGN16((size_t)(nodes) * 16u) +                              \
     HWP__RAP_ALIGN16(((size_t)(nodes) + 63u) / 64u * 8u) +                 \
     HWP__RAP_ALIGN16(((size_t)(nodes) + 63u) / 64u * 4u) +                 \
     HWP__RAP_ALIGN16((size_t)(buffer) * 16u) +                             \
     HWP__RAP_ALIGN16((size_t)(cache) * 16u))

HWP_API size_t hwp_rap_bytes(const hwp_rap_desc *d);
HWP_API uint64_t hwp_rap_nodes_for(double eps, unsigned key_bits,
                                   unsigned branching);
HWP_API hwp_status hwp_rap_init(hwp_rap *r, void *storage, size_t bytes,
                                const hwp_rap_desc *d, hwp_cost *cost);
HWP_API hwp_status hwp_rap_reset(hwp_rap *r);
HWP_API hwp_status hwp_rap_flush(hwp_rap *r);
HWP_API hwp_status hwp_rap_foreach(const hwp_rap *r, hwp_rap_visit fn,
                                   void *ctx);
HWP_API hwp_status hwp_rap_estimate(const hwp_rap *r, uint64_t lo,
                                    uint64_t hi, uint64_t *lower,
                                    uint64_t *upper);
HWP_API uint64_t hwp_rap_bound(const hwp_rap *r);
HWP_API size_t hwp_rap_hot(const hwp_rap *r, double phi, hwp_rap_range *out,
                           size_t cap);
HWP_API hwp_status hwp_rap_accuracy(const hwp_rap *r, double phi,
                                    hwp_rap_exact_fn exact, void *ctx,
                                    hwp_rap_acc *out);
HWP_API hwp_status hwp_rap_merge(hwp_rap *dst, const hwp_rap *src);
HWP_API void hwp_rap_write_text(const hwp_rap *r, const hwp_writer *w);
HWP_API void hwp_rap_write_json(const hwp_rap *r, const hwp_writer *w);
HWP_API void hwp_rap_write_svg(const hwp_rap *r, const hwp_writer *w);
HWP_API hwp_status hwp_rap_write_svg_range(const hwp_rap *r,
                                           const hwp_writer *w, uint64_t lo,
                                           uint64_t hi);

/* Cold paths the hot path calls when something fires. */
HWP_API void hwp__rap_split(hwp_rap *r, uint32_t idx, uint64_t key,
                            unsigned depth);
HWP_API void hwp__rap_cold(hwp_rap *r);
HWP_API void hwp__rap_tree(hwp_rap *r, uint64_t key, uint64_t weight);
HWP_API void hwp__rap_miss(hwp_rap *r, hwp_rap_slot *s, uint64_t key,
                           uint64_t weight);
HWP_API void hwp__rap_drain(hwp_rap *r, uint64_t limit);

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

/* The lookup is inlined into the per-event path even where the compiler
 * would rather call it. */
#if defined(__GNUC__) || defined(__clang__)
#define HWP__RAP_HOT HWP_INLINE __attribute__((always_inline))
#else
#define HWP__RAP_HOT HWP_INLINE
#endif

/* The walk for b <= 4 when every level takes log2 b key bits: kk holds
 * the key bits below the start of x's range, rotated so that the next
 * digit is its low lb bits; a level is two loads, a table lookup and one
 * branch. lb is a constant at each call, so the shifts are immediates.
 * Nodes are handled by pointer: the index is only needed when something
 * fires. */
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
 * longest-prefix match). Inside the spine, jump[] gives the deepest node
 * on the next 8 key bits of the path, or, when the key also lies in the
 * range at the end of that node's single-internal-child chain (skip_lo,
 * skip_sh), the chain's last node; the walk goes on from there. `fast`
 * is a constant at each call: b = 4 with every level taking 2 key bits. */
HWP__RAP_HOT hwp_rap_node *hwp__rap_descend(const hwp_rap *r, uint64_t key,
                                            bool fast) {
    hwp_rap_node *pool = r->pool, *x = pool;
    unsigned d = 0, m;
    if (!((key ^ r->spine_lo) & r->spine_mask)) {
        unsigned e = (unsigned)(key >> r->jump_shift) & r->jump_mask;
        x = ((key ^ r->skip_lo[e]) >> r->skip_sh[e]) ? r->jump[e] : r->skip[e];
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

/* Stages 1-4 of sec. 3.3: find, count, compare with the split threshold.
 * `cfg` is a constant at each call (hwp_rap_add picks it once per event
 * from r->cfg): with HWP__RAP_FAST there is no lookup cache and b = 4, so
 * neither the cache test nor the walk selection is on the path; with
 * HWP__RAP_NOCOST there is no cost shim and no charge, with HWP__RAP_COST
 * there is one and the charge skips its NULL test. Every copy
 * charges HWP_COST_RAP_EVENT per tree update as it happens, at the figure
 * in force, so whatever a host reads from its hwp_cost between two events
 * (counts, cycles, total, hwp_cost_take) is the same in every copy. */
HWP__RAP_HOT void hwp__rap_update(hwp_rap *r, uint64_t key, uint64_t weight,
                                  unsigned cfg) {
    const bool fast = (cfg & HWP__RAP_FAST) != 0;
    /* Fields are read into locals first: the count store may alias them,
     * and reloading after it costs instructions on every event. */
    hwp_rap_node *node;
    hwp_rap_hit *h = NULL;
    uint64_t n = r->n + weight, count;
    key &= r->key_mask;
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
    if (!(cfg & HWP__RAP_NOCOST)) hwp_cost_charge(r->cost, HWP_COST_RAP_EVENT, 1);
    if (HWP_UNLIKELY(count > r->split_at) && node->depth < r->levels)
        hwp__rap_split(r, (uint32_t)(node - r->pool), key, node->depth);
    if (HWP_UNLIKELY(n >= r->next_cold)) hwp__rap_cold(r);
}

/* One event of `weight` (>= 1) for `key`; the key is taken mod 2^w. Two
 * copies of the update are inlined (b = 4, 2 | w, no cache: without and
 * with a cost shim) and the stage-0 buffer's hit; a buffer miss and every
 * other configuration call the update out of line (hwp__rap_tree). */
HWP_INLINE void hwp_rap_add(hwp_rap *r, uint64_t key, uint64_t weight) {
    unsigned f = r->cfg;
    if (HWP_LIKELY(f == (HWP__RAP_FAST | HWP__RAP_NOCOST))) {
        hwp__rap_update(r, key, weight, HWP__RAP_FAST | HWP__RAP_NOCOST);
    } else if (f == (HWP__RAP_FAST | HWP__RAP_COST)) { /* the hosts' case */
        hwp__rap_update(r, key, weight, HWP__RAP_FAST | HWP__RAP_COST);
    } else if (f & HWP__RAP_BUF) {
        /* Stage 0 (sec. 3.3): identical events combine in their slot. The
         * buffer holds at most buf_limit weight; past it, entries drain
         * into the tree in slot order, so weight cannot wait there for
         * the rest of the run (docs/rap.md, "The bound"). */
        hwp_rap_slot *s =
            r->buf + (((key * 0x9E3779B97F4A7C15ull) >> 40) & r->buf_mask);
        uint64_t c = s->count, b;
        if (HWP_UNLIKELY(c && s->key != key)) {
            hwp__rap_miss(r, s, key, weight);
            return;
        }
        s->key = key;
        s->count = c + weight;
        b = r->buffered + weight;
        r->buffered = b;
        if (HWP_UNLIKELY(b > r->buf_limit)) hwp__rap_drain(r, r->buf_limit);
    } else {
        hwp__rap_tree(r, key, weight);
    }
}

/* The shared record: filtered by class and event bits, keyed by source. */
HWP_INLINE void hwp_rap_insn(hwp_rap *r, const hwp_insn *in) {
    uint64_t key;
    if (r->desc.cls_mask && in->cls < 32u &&
        !(r->desc.cls_mask & HWP_CLS_BIT(in->cls)))
        return;
    if (r->desc.ev_mask && !(r->desc.ev_mask & in->events)) return;
    switch (r->desc.source) {
    case HWP_RAP_SRC_NEXT_PC: key = in->next_pc; break;
    case HWP_RAP_SRC_ADDR: key = in->addr; break;
    case HWP_RAP_SRC_VALUE: key = in->value; break;
    default: key = in->pc; break;
    }
    hwp_rap_add(r, key, 1);
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

/* Copy the desc, fill the defaults once, validate. Returns a reason or
 * NULL. */
static const char *hwp__rap_fill(hwp_rap_desc *o, const hwp_rap_desc *d) {
    if (d) hwp__copy(o, d, sizeof *o);
    else hwp__zero(o, sizeof *o);
    if (!o->key_bits) o->key_bits = 64;
    if (!o->branching) o->branching = 4;
    if (o->eps == 0.0) o->eps = 0.01;
    if (!o->nodes) o->nodes = 512;
    if (!o->q) o->q = 2;
    if (!o->first_merge) o->first_merge = 1024;
    if (o->hot == 0.0) o->hot = 0.10;
    if (o->key_bits > 64) return "rap: key_bits must be 1..64";
    if (o->branching < 2 || o->branching > 16 || !hwp_is_pow2(o->branching))
        return "rap: branching must be 2, 4, 8 or 16";
    if (!(o->eps > 0.0 && o->eps < 1.0)) return "rap: eps must be in (0, 1)";
    if (o->nodes < o->branching + 1u || o->nodes > 0x40000000u)
        return "rap: nodes must be in [branching + 1, 2^30]";
    if (o->q < 2 || o->q > 64) return "rap: q must be 2..64";
    if (o->buffer && (!hwp_is_pow2(o->buffer) || o->buffer > (1u << 20)))
        return "rap: buffer must be 0 or a power of two up to 2^20";
    if (o->cache && (!hwp_is_pow2(o->cache) || o->cache > (1u << 20)))
        return "rap: cache must be 0 or a power of two up to 2^20";
    if (o->source > HWP_RAP_SRC_VALUE) return "rap: unknown source";
    if (!(o->hot > 0.0 && o->hot <= 1.0)) return "rap: hot must be in (0, 1]";
    return NULL;
}

HWP_API size_t hwp_rap_bytes(const hwp_rap_desc *d) {
    hwp_rap_desc o;
    if (hwp__rap_fill(&o, d)) return 0;
    return HWP_RAP_BYTES(o.nodes, o.buffer, o.cache);
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
    r->split_at = t;
    /* Stage 0 may hold four events an entry, but never more than four
     * thresholds nor less than one: its share of the bound then scales
     * with n (docs/rap.md, "The bound", where other limits are measured). */
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
    r->skip[e] = r->pool + x;
    r->skip_lo[e] = lo;
    r->skip_sh[e] = (uint8_t)(r->shift[d] < 64u ? r->shift[d] : 63u);
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
        r->jump[base + i] = r->skip[base + i] = r->pool + x;
        r->skip_sh[base + i] = 63u; /* either way the walk starts at x */
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
    if (r->buf) hwp__zero(r->buf, ((size_t)r->buf_mask + 1u) * sizeof *r->buf);
    r->n = r->updates = r->buffered = 0;
    r->buf_next = 0;
    r->splits = r->merges = r->early_merges = r->folded = 0;
    r->deferred = r->scanned = 0;
    r->used = r->nodes = r->peak = 1;
    r->next_merge = r->desc.first_merge;
    r->last_merge = 0;
    hwp__rap_threshold(r);
}

HWP_API hwp_status hwp_rap_init(hwp_rap *r, void *storage, size_t bytes,
                                const hwp_rap_desc *d, hwp_cost *cost) {
    hwp_rap_desc o;
    const char *why;
    unsigned char *cur = (unsigned char *)storage;
    unsigned i;
    uint32_t words;
    if (!r) return HWP_EINVAL;
    hwp__zero(r, sizeof *r);
    r->head.magic = HWP__RAP_MAGIC;
    why = hwp__rap_fill(&o, d);
    if (hwp__admit(&r->head, why, storage, bytes,
                   HWP_RAP_BYTES(o.nodes, o.buffer, o.cache)) != HWP_OK)
        return (hwp_status)r->head.status;
    r->desc = o;
    r->cost = cost;
    words = (o.nodes + 63u) / 64u;
    r->pool = (hwp_rap_node *)hwp__carve(&cur, (size_t)o.nodes * 16u);
    r->live = (uint64_t *)hwp__carve(&cur, (size_t)words * 8u);
    r->rank = (uint32_t *)hwp__carve(&cur, (size_t)words * 4u);
    r->buf = o.buffer ? (hwp_rap_slot *)hwp__carve(&cur, (size_t)o.buffer * 16u)
                      : NULL;
    r->buf_mask = o.buffer ? o.buffer - 1u : 0u;
    r->cache = o.cache ? (hwp_rap_hit *)hwp__carve(&cur, (size_t)o.cache * 16u)
                       : NULL;
    r->cache_mask = o.cache ? o.cache - 1u : 0u;
    r->cap = o.nodes;
    r->log2b = hwp_log2(o.branching);
    r->digit_mask = o.branching - 1u;
    r->levels = hwp__rap_levels(o.key_bits, r->log2b);
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
              (r->buf ? HWP__RAP_BUF : 0u);
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

/* The update out of line: a stage-0 buffer's misses and drains, and the
 * configurations hwp_rap_add does not inline (a cache, b != 4, odd w). A
 * cost shim, if any, is charged through the NULL-safe hwp_cost_charge. */
HWP_API void hwp__rap_tree(hwp_rap *r, uint64_t key, uint64_t weight) {
    if (r->cfg & HWP__RAP_FAST) hwp__rap_update(r, key, weight, HWP__RAP_FAST);
    else hwp__rap_update(r, key, weight, 0u);
}

/* Stage 0 until at most `limit` weight is buffered: slots leave for the
 * tree as one weighted update each, in slot order from where the last
 * drain stopped (a round robin, so every entry leaves within one pass). */
HWP_API void hwp__rap_drain(hwp_rap *r, uint64_t limit) {
    while (r->buffered > limit) {
        hwp_rap_slot *s = &r->buf[r->buf_next];
        uint64_t c = s->count;
        r->buf_next = (r->buf_next + 1u) & r->buf_mask;
        if (c) {
            s->count = 0;
            r->buffered -= c;
            hwp__rap_tree(r, s->key, c);
        }
    }
}

/* A different key is resident in s: it leaves for the tree as one
 * weighted update and the new event takes its place. */
HWP_API void hwp__rap_miss(hwp_rap *r, hwp_rap_slot *s, uint64_t key,
                           uint64_t weight) {
    uint64_t k = s->key, c = s->count;
    s->key = key;
    s->count = weight;
    r->buffered += weight - c;
    hwp__rap_tree(r, k, c);
    if (r->buffered > r->buf_limit) hwp__rap_drain(r, r->buf_limit);
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
    hwp_cost_charge(r->cost, HWP_COST_RAP_SPLIT, 1);
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
    hwp_cost_charge(r->cost, HWP_COST_RAP_MERGE_NODE, scanned);
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
    rg.lo = lo;
    rg.hi = lo | hwp_mask64(r->shift[x->depth]);
    rg.count = x->count;
    rg.sum = sum;
    rg.upper = sum + anc;
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

/* Interval estimate: nodes inside [lo, hi] give the lower bound, nodes
 * that meet it the upper bound (events are counted in exactly one node,
 * and a node holds only keys of its own range). */
static void hwp__rap_interval(const hwp_rap *r, uint32_t idx, uint64_t nlo,
                              uint64_t lo, uint64_t hi, uint64_t *lower,
                              uint64_t *upper) {
    const hwp_rap_node *x = &r->pool[idx];
    uint64_t nhi = nlo | hwp_mask64(r->shift[x->depth]);
    unsigned dig, k = 0;
    if (nhi < lo || nlo > hi) return;
    *upper += x->count;
    if (nlo >= lo && nhi <= hi) *lower += x->count;
    for (dig = 0; dig < 16; dig++)
        if ((x->mask >> dig) & 1u)
            hwp__rap_interval(r, x->child + k++,
                              hwp__rap_lo_of(r, nlo, x->depth, dig), lo, hi,
                              lower, upper);
}

HWP_API hwp_status hwp_rap_estimate(const hwp_rap *r, uint64_t lo,
                                    uint64_t hi, uint64_t *lower,
                                    uint64_t *upper) {
    uint64_t l = 0, u = 0;
    if (!hwp__rap_ok(r) || !lower || !upper || lo > hi) return HWP_EINVAL;
    hwp__rap_interval(r, 0, 0, lo, hi, &l, &u);
    *lower = l;
    *upper = u;
    return HWP_OK;
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
    while (d < s->depth) {
        unsigned m = dst->pool[x].mask;
        dig = (unsigned)(lo >> dst->shift[d + 1]) & dst->digit_mask;
        if (!((m >> dig) & 1u) && !hwp__rap_grow(dst, x, lo, d)) break;
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

HWP_API hwp_status hwp_rap_merge(hwp_rap *dst, const hwp_rap *src) {
    const hwp_rap_desc *a, *b;
    if (!hwp__rap_ok(dst)) return HWP_EINVAL;
    if (!hwp__rap_ok(src) || dst == src)
        return hwp__fail(&dst->head, HWP_EINVAL,
                         "rap: merge needs two distinct, initialised trees");
    a = &dst->desc;
    b = &src->desc;
    if (a->key_bits != b->key_bits || a->branching != b->branching ||
        a->eps != b->eps || a->q != b->q || a->first_merge != b->first_merge)
        return hwp__fail(&dst->head, HWP_EMISMATCH,
                         "rap: merge needs trees with the same desc");
    if (src->buffered)
        return hwp__fail(&dst->head, HWP_ESTATE,
                         "rap: flush the source tree before merging it");
    hwp__rap_absorb(dst, src, 0, 0);
    dst->n += src->n;
    dst->updates += src->updates;
    dst->deferred += src->deferred;
    /* Prune what the union does not warrant, on dst's merge schedule. */
    hwp__rap_merge_batch(dst);
    while (dst->next_merge <= dst->n) {
        uint64_t nx = dst->next_merge * dst->desc.q;
        dst->next_merge = nx / dst->desc.q == dst->next_merge ? nx : ~(uint64_t)0;
    }
    hwp__rap_threshold(dst);
    return hwp__fail(&dst->head, HWP_OK, "");
}

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
    hwp_put_str(w, "  [");
    hwp_put_hex(w, rg->lo);
    hwp_put_str(w, ", ");
    hwp_put_hex(w, rg->hi);
    hwp_put_str(w, "] depth ");
    hwp_put_u64(w, rg->depth);
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
    hwp_put_str(w, "[");
    hwp_put_hex(w, lo);
    hwp_put_str(w, ", ");
    hwp_put_hex(w, lo | hwp_mask64(r->shift[x->depth]));
    hwp_put_str(w, "] ");
    hwp_put_u64(w, x->count);
    hwp_put_str(w, "\n");
    for (dig = 0; dig < 16; dig++)
        if ((x->mask >> dig) & 1u)
            hwp__rap_text_node(r, w, x->child + k++,
                               hwp__rap_lo_of(r, lo, x->depth, dig));
}

/* The counters both reports print, from one list: ` name=v` in text,
 * `,"name":v` in JSON. */
static void hwp__rap_fields(const hwp_rap *r, const hwp_writer *w, bool json) {
    const struct {
        const char *name;
        uint64_t v;
    } f[] = {{"levels", r->levels},
             {"pool", r->cap},
             {"n", r->n},
             {"events", r->n + r->buffered},
             {"buffered", r->buffered},
             {"updates", r->updates},
             {"nodes", r->nodes},
             {"peak", r->peak},
             {"threshold", (uint64_t)(r->eps_per_level * (double)r->n)},
             {"splits", r->splits},
             {"merges", r->merges},
             {"early_merges", r->early_merges},
             {"folded", r->folded},
             {"deferred", r->deferred},
             {"bound", hwp_rap_bound(r)}};
    unsigned i;
    for (i = 0; i < sizeof f / sizeof f[0]; i++) {
        hwp_put_str(w, json ? ",\"" : " ");
        hwp_put_str(w, f[i].name);
        hwp_put_str_u64(w, json ? "\":" : "=", f[i].v);
    }
}

HWP_API void hwp_rap_write_text(const hwp_rap *r, const hwp_writer *w) {
    hwp__rap_rep rep;
    if (!hwp__rap_ok(r)) return;
    hwp_put_str_u64(w, "rap: w=", r->desc.key_bits);
    hwp_put_str_u64(w, " b=", r->desc.branching);
    hwp_put_str(w, " eps=");
    hwp_put_f64(w, r->desc.eps, 4);
    hwp__rap_fields(r, w, false);
    hwp_put_str(w, "\nrap: hot ranges (>= ");
    hwp_put_f64(w, 100.0 * r->desc.hot, 1);
    hwp_put_str(w, "% of n, own weight first):\n");
    rep.w = w;
    rep.r = r;
    rep.first = true;
    (void)hwp__rap_run(r, hwp__rap_text_hot, &rep, r->desc.hot, true);
    hwp_put_str(w, "rap: tree ([lo, hi] own count):\n");
    hwp__rap_text_node(r, w, 0, 0);
}

static void hwp__rap_json_node(void *ctx, const hwp_rap_range *rg) {
    hwp__rap_rep *j = (hwp__rap_rep *)ctx;
    const hwp_writer *w = j->w;
    hwp_put_str(w, j->first ? "\n{\"lo\":\"" : ",\n{\"lo\":\"");
    j->first = false;
    hwp_put_hex(w, rg->lo);
    hwp_put_str(w, "\",\"hi\":\"");
    hwp_put_hex(w, rg->hi);
    hwp_put_str_u64(w, "\",\"depth\":", rg->depth);
    hwp_put_str_u64(w, ",\"count\":", rg->count);
    hwp_put_str_u64(w, ",\"sum\":", rg->sum);
    hwp_put_str_u64(w, ",\"upper\":", rg->upper);
    hwp_put_str_u64(w, ",\"excl\":", rg->excl);
    hwp_put_str(w, rg->hot ? ",\"hot\":true}" : ",\"hot\":false}");
}

HWP_API void hwp_rap_write_json(const hwp_rap *r, const hwp_writer *w) {
    hwp__rap_rep j;
    if (!hwp__rap_ok(r)) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_str_u64(w, "{\"model\":\"rap\",\"schema\":1,\"key_bits\":",
                r->desc.key_bits);
    hwp_put_str_u64(w, ",\"branching\":", r->desc.branching);
    hwp_put_str(w, ",\"eps\":");
    hwp_put_f64(w, r->desc.eps, 6);
    hwp_put_str(w, ",\"hot\":");
    hwp_put_f64(w, r->desc.hot, 6);
    hwp__rap_fields(r, w, true);
    hwp_put_str(w, ",\"ranges\":[");
    j.w = w;
    j.r = r;
    j.first = true;
    (void)hwp__rap_run(r, hwp__rap_json_node, &j, r->desc.hot, false);
    hwp_put_str(w, "]}\n");
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
    hwp_put_str(w, "<rect x=\"");
    hwp_put_f64(w, x0, 2);
    hwp_put_str(w, "\" y=\"");
    hwp_put_f64(w, y, 1);
    hwp_put_str(w, "\" width=\"");
    hwp_put_f64(w, x1 - x0, 2);
    hwp_put_str(w, "\" height=\"14\" fill=\"");
    if (rg->hot) {
        hwp_put_str(w, "#d62728\" stroke=\"#000\"><title>hot ");
    } else {
        hwp_put_str(w, "rgb(");
        hwp_put_u64(w, (uint64_t)(230.0 - 180.0 * frac));
        hwp_put_str(w, ",");
        hwp_put_u64(w, (uint64_t)(230.0 - 180.0 * frac));
        hwp_put_str(w, ",240)\"><title>");
    }
    hwp_put_hex(w, rg->lo);
    hwp_put_str(w, "-");
    hwp_put_hex(w, rg->hi);
    hwp_put_str(w, ": ");
    hwp__rap_pct(w, rg->sum, s->r->n);
    hwp_put_str(w, " (own+cold ");
    hwp__rap_pct(w, rg->excl, s->r->n);
    hwp_put_str(w, ")</title></rect>\n");
    if (rg->hot && x1 - x0 > 40.0) {
        hwp_put_str(w, "<text x=\"");
        hwp_put_f64(w, x0 + 2.0, 2);
        hwp_put_str(w, "\" y=\"");
        hwp_put_f64(w, y + 11.0, 1);
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
    s.flo = flo;
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
    hwp_put_str(w, ", ");
    hwp_put_hex(w, s.flo | hwp_mask64(r->shift[s.fdepth]));
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
 * Like the other readers (hwp_rap_estimate, hwp_rap_foreach) it takes
 * the tree const and so records no reason: HWP_EINVAL means no tree, no
 * writer, lo > hi or hi >= 2^w, all checkable by the caller. */
HWP_API hwp_status hwp_rap_write_svg_range(const hwp_rap *r,
                                           const hwp_writer *w, uint64_t lo,
                                           uint64_t hi) {
    uint32_t x = 0;
    uint64_t flo = 0;
    if (!hwp__rap_ok(r) || !w || lo > hi || hi > r->key_mask)
        return HWP_EINVAL;
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
