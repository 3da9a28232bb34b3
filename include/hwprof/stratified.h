/* SPDX-License-Identifier: MIT */
/* hwprof/stratified.h: the stream-compression profiler of Sastry, Bodik &
 * Smith, "Rapid Profiling via Stratified Sampling", ISCA 2001.
 *
 * A host selects tuples <pc, w> (a load and its value, a branch and its
 * target, a call and its callee, ...). The modelled hardware compresses the
 * tuple stream into (tuple, count) messages; a fixed output queue hands
 * them to a host callback once per interrupt; software folds them into a
 * profile. The compressor never interprets the tuple, so several profile
 * types share it, told apart by a per-profile-type `kind` (section 2.1).
 *
 * WHAT IS MODELLED (paper sections)
 *   3.1  R_r    stateless random sampler, p = 1/r        (HWP_STRAT_RANDOM)
 *        Rcd_r  countdown random sampler, interval drawn
 *               uniformly from [1, 2r-1] as in [2,15,33]  (HWP_STRAT_COUNTDOWN)
 *        P_r    every r-th event                          (HWP_STRAT_PERIODIC)
 *        C      counter of stream length: messages carry the events seen
 *               since the substream's last sample (desc.counter) -> CR_r
 *   3.2  H[X]_n hash split into n substreams, each with its own X
 *               (desc.entries = n; n = 1 is plain X)
 *   3.4  A_k    associative table of k counters, lossless; emits (tuple,
 *               count) on replacement or counter saturation. As a first
 *               level (HWP_STRAT_ASSOC) or behind a sampler
 *               (desc.l2_entries, the paper's "+ A_16" of 5.6)
 *   3.5  the hash: byte randomize tables, flip, xor_fold (base.h's
 *               hwp_bytehash), bit-exact from tables folded at init, or
 *               a cheaper multiply hash (desc.hash)
 *   4    the tagged compressor (HWP_STRAT_TAGGED): partial tag
 *               xor_fold(pc ^ w, tag_bits), direct-mapped or set-assoc,
 *               hit counter (8 bits = rate 256), miss counter (3 bits),
 *               Empty/Valid/Evict and transitions E1-E6 of Fig. 6 with
 *               ShouldEvict, ShouldReplace and the E5/E6 count inheritance
 *   2.2, 5.3.2  output queue + interrupt: the host callback runs when
 *               `queue` messages (default 100) are waiting, or on flush;
 *               cost shim charged HWP_COST_STRAT_INTERRUPT (214) per
 *               interrupt and HWP_COST_STRAT_MESSAGE (30) per message
 *   5.3.1  the weighted invariance error metric, on two accumulators
 * A composition is a desc: the zero desc is the paper's H[P_256]_2048.
 * docs/stratified.md lists the interpretations we had to choose.
 *
 * API (compressor, component "strat"; the model contract of
 * docs/ARCHITECTURE.md: every handle member is private)
 *   hwp_strat_bytes(d), HWP_STRAT_BYTES(...)   storage, padding included
 *   hwp_strat_init(s, mem, bytes, d, cost)     mem of any alignment
 *   hwp_strat_push(s, kind, pc, w)             one tuple (inline hot path)
 *   hwp_strat_pc_key(s, kind, pc), hwp_strat_push_key(s, key, kind, pc, w)
 *                                      the same with the pc's half of the
 *                                      hash computed once per pc
 *   hwp_strat_insn(s, insn)            selector over the shared hwp_insn
 *   hwp_strat_flush / reset / merge / get_stats / pending
 *   hwp_strat_write_text/json, hwp_strat_read_desc/read_json,
 *   hwp_strat_desc_fields (base.h's hwp_field)
 * API (software side, component "strat_acc": a host-side profile)
 *   hwp_strat_acc_bytes(d), HWP_STRAT_ACC_BYTES(tuples, pcs, strata)
 *   hwp_strat_acc_init(a, mem, bytes, d, NULL)
 *   hwp_strat_acc_add(a, kind, pc, w, count)   fold one (tuple, count)
 *   hwp_strat_acc_fold(a, msgs, n), hwp_strat_acc_handler
 *   hwp_strat_acc_count / pc_count / invariance / estimate (the C estimator)
 *   hwp_strat_acc_top_values(a, kind, pc, out, cap)   a JIT's value query
 *   hwp_strat_acc_top_pcs(a, kind, out, cap)          most invariant pcs
 *   hwp_strat_acc_next, merge, reset, flush, get_stats
 *   hwp_strat_acc_write_text/json, hwp_strat_acc_read_desc/read_json,
 *   hwp_strat_acc_desc_fields
 *   hwp_strat_invariance_error(ideal, prof, md, &out)   section 5.3.1
 */
#ifndef HWPROF_STRATIFIED_H
#define HWPROF_STRATIFIED_H

#include "base.h"
#include "cost.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- desc ------------------------------------------------------------- */

enum { /* desc.scheme: the first-level compressor */
    HWP_STRAT_SAMPLED = 0, /* H[X]_n with X from desc.sampler (default) */
    HWP_STRAT_TAGGED = 1,  /* section 4                                  */
    HWP_STRAT_ASSOC = 2    /* A_k alone, section 3.4                     */
};
enum { /* desc.sampler, for HWP_STRAT_SAMPLED */
    HWP_STRAT_PERIODIC = 0, /* P_r (default)                             */
    HWP_STRAT_RANDOM = 1,   /* R_r, stateless                            */
    HWP_STRAT_COUNTDOWN = 2 /* countdown random                          */
};
enum { /* desc.hash */
    HWP_STRAT_HASH_PAPER = 0, /* randomize/flip/xor_fold, section 3.5     */
    HWP_STRAT_HASH_CHEAP = 1  /* two multiplies, high bits                */
};
enum { /* profile-type kinds used by hwp_strat_insn (0..255 in general) */
    HWP_STRAT_KIND_VALUE = 0, /* <load pc, loaded value>                  */
    HWP_STRAT_KIND_EDGE = 1,  /* <branch pc, next pc>                     */
    HWP_STRAT_KIND_CALL = 2,  /* <call pc, callee>                        */
    HWP_STRAT_KINDS = 256
};
/* desc.select bits for hwp_strat_insn: HWP_STRAT_SEL(HWP_STRAT_KIND_EDGE) */
#define HWP_STRAT_SEL(kind) (1u << (kind))

/* One compressed message: the tuple and how many events it stands for. */
typedef struct hwp_strat_msg {
    uint64_t pc;
    uint64_t w;
    uint64_t count;
    uint32_t kind;
    uint32_t stratum; /* substream (SAMPLED) or set index it came from,
                         for estimators that use the stratum sizes   */
    uint32_t samples; /* first-level samples the message stands for: 1,
                         or what an A_k folded into it (the C
                         estimator needs it); 0 reads as 1           */
    uint32_t reserved; /* 0 */
} hwp_strat_msg;
HWP_STATIC_ASSERT(strat_msg_is_40_bytes, sizeof(hwp_strat_msg) == 40);

/* Runs once per interrupt with the queued messages (n >= 1). */
typedef void (*hwp_strat_handler)(void *ctx, const hwp_strat_msg *msgs,
                                  uint32_t n);

typedef struct hwp_strat_desc {
    uint32_t scheme;     /* HWP_STRAT_SAMPLED / TAGGED / ASSOC           */
    uint32_t sampler;    /* SAMPLED: PERIODIC / RANDOM / COUNTDOWN       */
    uint32_t counter;    /* SAMPLED: nonzero adds C (section 3.1)        */
    uint32_t rate;       /* SAMPLED: r, 1..2^30; 0 = 256                 */
    uint32_t entries;    /* SAMPLED: strata n (1 = no split), TAGGED:
                            table entries, ASSOC: k; power of two;
                            0 = 2048 (SAMPLED, TAGGED) or 4096 (ASSOC)   */
    uint32_t ways;       /* TAGGED: 0 = 2 (1..16); ASSOC: 0 = k if k <= 16
                            else 8 (power of two, 1..64)                 */
    uint32_t hash;       /* HWP_STRAT_HASH_PAPER / CHEAP                 */
    uint32_t tag_bits;   /* TAGGED: partial tag width 1..16; 0 = 2       */
    uint32_t count_bits; /* TAGGED: hit counter 1..16, ASSOC and level 2:
                            fold counter 1..32; 0 = 8 (rate 256)         */
    uint32_t miss_bits;  /* TAGGED: miss counter 1..8; 0 = 3             */
    uint32_t l2_entries; /* second-level A_k; 0 = none (paper: 16)       */
    uint32_t l2_ways;    /* 0 = fully associative up to 16, else 8       */
    uint32_t queue;      /* messages per interrupt 1..2^20; 0 = 100      */
    uint32_t select;     /* hwp_strat_insn: HWP_STRAT_SEL bits; 0 = value */
    hwp_strat_handler on_interrupt; /* NULL: messages are counted, dropped */
    void *ctx;
    uint64_t seed;       /* hash tables and samplers                     */
} hwp_strat_desc;

/* ---- instance ----------------------------------------------------------- */

/* Transitions of Fig. 6, counted per instance. */
enum {
    HWP_STRAT_E1, HWP_STRAT_E2, HWP_STRAT_E3, HWP_STRAT_E4,
    HWP_STRAT_E5, HWP_STRAT_E5A, HWP_STRAT_E6, HWP_STRAT_E6A,
    HWP_STRAT_TRANSITIONS
};

typedef struct hwp_strat_stats {
    uint64_t events;     /* tuples pushed                                */
    uint64_t dropped;    /* messages lost: emitted while the handler was
                            draining the queue (a push from inside it)   */
    uint64_t evicted;    /* entries replaced: A_k LRU victims (both
                            levels), tagged E5 and E6                     */
    uint64_t cycles;     /* modelled cycles charged: 214 per interrupt,
                            30 per message (section 5.3.2)               */
    uint64_t samples;    /* messages out of the first level              */
    uint64_t messages;   /* messages into the output queue               */
    uint64_t interrupts; /* handler runs                                 */
    uint64_t unhandled;  /* messages delivered with no handler set       */
    uint64_t trans[HWP_STRAT_TRANSITIONS]; /* TAGGED only               */
} hwp_strat_stats;

/* Tagged entry (section 4.2): Empty when !valid (hits then holds the
 * count E6 handed on); Evict is Valid with misses != 0. */
typedef struct hwp__strat_tent {
    uint32_t hits;
    uint16_t tag;
    uint8_t misses;
    uint8_t valid;
} hwp__strat_tent;

/* A_k entry: the full tuple, the exact count, and the fold counter. */
typedef struct hwp__strat_aent {
    uint64_t pc, w, count, stamp;
    uint32_t kind, folds; /* folds == 0: entry unused */
    uint32_t stratum, pad; /* pad: 0, keeps the entry 48 bytes */
} hwp__strat_aent;

HWP_STATIC_ASSERT(strat_tent_is_8_bytes, sizeof(hwp__strat_tent) == 8);
HWP_STATIC_ASSERT(strat_aent_is_48_bytes, sizeof(hwp__strat_aent) == 48);

/* The paper's hash folded to the level-1 index width, one table per
 * byte position of the (kind-tagged) pc and of w. randomize maps each
 * byte on its own, flip moves bytes and xor_fold is linear over XOR, so
 *   xor_fold(flip(randomize(pc)) ^ randomize(w), bits)
 *     = XOR over i of pc_tab[i][pc byte i] ^ w_tab[i][w byte i]
 * with pc_tab[i][b] = xor_fold(randomize_i(b) << 8(7-i), bits) and
 * w_tab[i][b] = xor_fold(randomize_i(b) << 8i, bits): the same index
 * from 16 loads and 15 XORs, without the 64-bit fold. 16 KiB. */
typedef struct hwp__strat_fast {
    uint32_t pc[8][256], w[8][256];
} hwp__strat_fast;

typedef struct hwp__strat_atab {
    hwp__strat_aent *e;
    uint64_t clock;      /* LRU stamps                                   */
    uint32_t set_bits, ways, max_folds;
} hwp__strat_atab;

/* The push's dispatch, one value per first level. */
enum {
    HWP__STRAT_M_PERIODIC,     /* P_r with the paper's hash over n > 1 */
    HWP__STRAT_M_PERIODIC_CHEAP, /* P_r with the cheap hash            */
    HWP__STRAT_M_PERIODIC_ONE, /* P_r with the paper's hash, n = 1     */
    HWP__STRAT_M_RANDOM, HWP__STRAT_M_COUNTDOWN,
    HWP__STRAT_M_STATELESS, HWP__STRAT_M_TAGGED, HWP__STRAT_M_ASSOC
};

typedef struct hwp_strat {
    hwp_head head;
    hwp_strat_desc d;      /* the desc with defaults filled              */
    hwp_strat_stats st;    /* read-only for hosts                        */
    hwp_cost *cost;
    hwp_bytehash *bh;      /* NULL with the cheap hash                   */
    hwp__strat_fast *fh;   /* level-1 index tables, NULL unless hashing  */
    uint32_t *ctr;         /* SAMPLED: P_r events to the next sample,
                              R and countdown events since the last one */
    uint32_t *due;         /* COUNTDOWN: the interval drawn per stratum  */
    hwp__strat_tent *tab;  /* TAGGED                                     */
    hwp__strat_atab a1, a2;/* ASSOC first level, second level            */
    hwp_strat_msg *q;
    uint32_t qn;
    uint32_t index_bits;   /* level 1: log2(strata or sets)              */
    uint32_t hit_limit;    /* TAGGED: 2^count_bits, the trigger threshold */
    uint32_t miss_max;
    uint32_t busy;         /* the handler is draining the queue          */
    uint32_t mode;         /* HWP__STRAT_M_*: scheme and sampler in one  */
    hwp_rng rng;
} hwp_strat;

#define HWP__STRAT_MAGIC HWP__MAGIC('s', 't', 'r', 'a')

/* Storage for static allocation: equal to hwp_strat_bytes of a desc
 * with these six fields (zero = default, as in the desc) and any values
 * of the others. Each argument is used in full parentheses. */
#define HWP__STRAT_AL(n) ((((size_t)(n)) + 15u) & ~(size_t)15u)
#define HWP__STRAT_E(scheme, entries)                                         \
    ((entries) ? (size_t)(entries)                                            \
               : ((scheme) == HWP_STRAT_ASSOC ? (size_t)4096 : (size_t)2048))
#define HWP_STRAT_BYTES(scheme, sampler, hash, entries, l2_entries, queue)     \
    (((hash) == HWP_STRAT_HASH_PAPER                                          \
          ? HWP__STRAT_AL(sizeof(hwp_bytehash)) +                             \
                HWP__STRAT_AL(sizeof(hwp__strat_fast))                        \
          : (size_t)0) +                                                      \
     ((scheme) == HWP_STRAT_SAMPLED                                           \
          ? HWP__STRAT_AL(4u * HWP__STRAT_E(scheme, entries)) *               \
                ((sampler) == HWP_STRAT_COUNTDOWN ? 2u : 1u)                  \
          : (scheme) == HWP_STRAT_TAGGED                                      \
                ? HWP__STRAT_AL(sizeof(hwp__strat_tent) *                     \
                                HWP__STRAT_E(scheme, entries))                \
                : HWP__STRAT_AL(sizeof(hwp__strat_aent) *                     \
                                HWP__STRAT_E(scheme, entries))) +             \
     HWP__STRAT_AL(sizeof(hwp__strat_aent) * (size_t)(l2_entries)) +          \
     HWP__STRAT_AL(sizeof(hwp_strat_msg) * ((queue) ? (size_t)(queue) : 100u)) + \
     (HWP__ALIGN - 1u))

/* The contract's calls (cost.h, HWP__CONTRACT); what hwp_strat's do:
 *   reset: back to the state right after init: same desc, storage and seed.
 *   merge: the compressor's record is its counters: merge adds src's stats to
 *     dst's (events still in src's tables stay there: flush src first).
 *     Charges no modelled cycles. HWP_EMISMATCH names the first desc field
 *     that differs.
 *   write_json: {"model":"strat","version":1,"desc":{every field but the
 *     handler}, "stats":{events, dropped, evicted, cycles, samples, messages,
 *     interrupts, unhandled, E1..E6a},"composition":"H[P_256]_2048"}
 *   read_desc: the desc of a report (on_interrupt and ctx NULL: set them
 *     before init).
 *   read_json: restore a report's stats into s (reset first); s's desc must
 *     match. */
HWP__CONTRACT(strat);
/* End of stream: emit what the tables hold, deliver the queue. */
HWP_API hwp_status hwp_strat_flush(hwp_strat *s);
/* Events held in tables, not yet in a message (the queue not counted).
 * P_r's counters start at a random phase (see hwp__strat_clear), which
 * they hold too: for P_r without C, message counts + pending = events +
 * the pending right after init or reset; for every other first level,
 * message counts + pending = events. */
HWP_API uint64_t hwp_strat_pending(const hwp_strat *s);

/* Private cold paths the hot path calls when a message is emitted. */
HWP_API void hwp__strat_emit(hwp_strat *s, uint32_t kind, uint64_t pc,
                             uint64_t w, uint64_t count, uint32_t stratum,
                             uint32_t samples);
HWP_API void hwp__strat_aout(hwp_strat *s, const hwp__strat_atab *t,
                             const hwp__strat_aent *e);

/* ---- hot path ----------------------------------------------------------- */

/* The profile-type kind goes into the top byte of the pc before hashing,
 * so <pc, w> of two kinds fall into different strata and tags. */
HWP_INLINE uint64_t hwp__strat_kpc(uint32_t kind, uint64_t pc) {
    return pc ^ ((uint64_t)(kind & 0xFFu) << 56);
}

/* The level-1 index is inlined into the push even where the compiler
 * would rather call it (three callers; a call costs more than the
 * lookups). */
#define HWP__STRAT_HOT HWP__FORCE_INLINE

/* Level-1 index from the byte tables (see hwp__strat_fast), two bytes
 * of each word per step so the compiler can take them as a register's
 * low and second bytes. */
#define HWP__STRAT_F2(t, x, i) \
    ((t)[i][(x) & 0xFFu] ^ (t)[(i) + 1][((x) >> 8) & 0xFFu])
HWP__STRAT_HOT uint32_t hwp__strat_fast_index(const hwp__strat_fast *f,
                                              uint64_t kpc, uint64_t w) {
    uint32_t r = HWP__STRAT_F2(f->pc, kpc, 0) ^ HWP__STRAT_F2(f->w, w, 0);
    uint32_t a = (uint32_t)kpc, b = (uint32_t)w;
    uint32_t c = (uint32_t)(kpc >> 32), d = (uint32_t)(w >> 32);
    a >>= 16;
    b >>= 16;
    r ^= HWP__STRAT_F2(f->pc, a, 2) ^ HWP__STRAT_F2(f->w, b, 2);
    r ^= HWP__STRAT_F2(f->pc, c, 4) ^ HWP__STRAT_F2(f->w, d, 4);
    c >>= 16;
    d >>= 16;
    return r ^ HWP__STRAT_F2(f->pc, c, 6) ^ HWP__STRAT_F2(f->w, d, 6);
}

/* The cheap hash: multiply, xorshift, multiply, top bits (0 bits: 0). */
HWP_INLINE uint32_t hwp__strat_cheap(uint64_t kpc, uint64_t w, unsigned bits) {
    uint64_t x = (kpc ^ hwp_flip64(w)) * 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 32)) * 0xD6E8FEB86659FD93ull;
    return (uint32_t)((x >> (63 - bits)) >> 1);
}

/* Index of `bits` bits (section 3.5), any width: the paper's
 * xor_fold(flip(randomize(pc)) ^ randomize(w), bits) from the byte
 * permutations (the reference the folded tables are tested against),
 * or the cheap hash. */
HWP_INLINE uint32_t hwp__strat_index(const hwp_strat *s, uint64_t kpc,
                                     uint64_t w, unsigned bits) {
    if (!bits) return 0;
    if (s->bh)
        return (uint32_t)hwp_xor_fold(hwp_bytehash_sig(s->bh, kpc, w), bits);
    return hwp__strat_cheap(kpc, w, bits);
}

/* w's half of the folded tables (the pc's half is a pc key). */
HWP__STRAT_HOT uint32_t hwp__strat_fast_w(const hwp__strat_fast *f, uint64_t w) {
    uint32_t b = (uint32_t)w, d = (uint32_t)(w >> 32);
    uint32_t r = HWP__STRAT_F2(f->w, b, 0);
    b >>= 16;
    r ^= HWP__STRAT_F2(f->w, b, 2) ^ HWP__STRAT_F2(f->w, d, 4);
    d >>= 16;
    return r ^ HWP__STRAT_F2(f->w, d, 6);
}

/* The level-1 index (strata, tagged sets, A_k sets): the same value as
 * hwp__strat_index at index_bits, the paper's hash from the folded
 * tables. */
HWP__STRAT_HOT uint32_t hwp__strat_index1(const hwp_strat *s, uint64_t kpc,
                                      uint64_t w) {
    if (s->fh) return hwp__strat_fast_index(s->fh, kpc, w);
    if (s->bh) return 0; /* the paper's hash over one set */
    return hwp__strat_cheap(kpc, w, s->index_bits);
}

/* The same with the pc's half already known (key != NULL). */
HWP__STRAT_HOT uint32_t hwp__strat_index1k(const hwp_strat *s, uint64_t kpc,
                                           uint64_t w, const uint32_t *key) {
    if (key && s->fh) return *key ^ hwp__strat_fast_w(s->fh, w);
    return hwp__strat_index1(s, kpc, w);
}

/* A_k lookup and fold (section 3.4): a hit adds the count; a miss takes a
 * free way or the least recently used one, whose tuple goes out first. */
HWP_INLINE void hwp__strat_afold(hwp_strat *s, hwp__strat_atab *t,
                                 uint32_t kind, uint64_t pc, uint64_t w,
                                 uint64_t count, uint32_t stratum) {
    uint64_t kpc = hwp__strat_kpc(kind, pc);
    uint32_t set = t == &s->a1 ? hwp__strat_index1(s, kpc, w)
                               : hwp__strat_index(s, kpc, w, t->set_bits);
    hwp__strat_aent *e = t->e + (size_t)set * t->ways, *v = e;
    uint32_t j;
    t->clock++;
    for (j = 0; j < t->ways; j++) {
        hwp__strat_aent *x = e + j;
        if (x->folds && x->pc == pc && x->w == w && x->kind == kind) {
            x->count += count;
            x->stamp = t->clock;
            if (++x->folds >= t->max_folds) { /* counter saturates */
                hwp__strat_aout(s, t, x);
                x->folds = 0;
            }
            return;
        }
        if (v->folds && (!x->folds || x->stamp < v->stamp)) v = x;
    }
    if (v->folds) { /* replacement */
        s->st.evicted++;
        hwp__strat_aout(s, t, v);
    }
    v->pc = pc;
    v->w = w;
    v->kind = kind;
    v->count = count;
    v->stratum = t == &s->a1 ? set : stratum; /* level 1: its own set */
    v->folds = 1;
    v->stamp = t->clock;
    if (v->folds >= t->max_folds) {
        hwp__strat_aout(s, t, v);
        v->folds = 0;
    }
}

/* Fig. 6 conditions on the entry as the event finds it; T = hit_limit. */
HWP_INLINE bool hwp__strat_should_evict(const hwp_strat *s, uint32_t h,
                                        uint32_t m) {
    /* (hits >= T/4) && (misses >= T/hits), the division as (m+1)h > T */
    return 4u * h >= s->hit_limit &&
           (uint64_t)(m + 1u) * h > (uint64_t)s->hit_limit;
}

HWP_INLINE bool hwp__strat_should_replace(const hwp_strat *s, uint32_t h,
                                          uint32_t m) {
    return m >= s->miss_max || h == 1u || (h > 1u && h < 2u * m);
}

/* A Valid entry takes `hits` events for the incoming tuple; at the hit
 * counter's limit the tuple is reported and the entry empties (E2). */
HWP_INLINE void hwp__strat_tset(hwp_strat *s, hwp__strat_tent *e,
                                uint32_t kind, uint64_t pc, uint64_t w,
                                uint32_t hits, uint32_t set) {
    if (hits >= s->hit_limit) {
        s->st.trans[HWP_STRAT_E2]++;
        hwp__strat_emit(s, kind, pc, w, hits, set, 1);
        e->valid = 0;
        e->hits = 0;
    } else {
        e->hits = hits;
    }
    e->misses = 0;
}

/* The tagged compressor, section 4. Every event is counted in the entry
 * it reaches; transitions move counts (to a message or to the next
 * tuple), never drop them, so hits + misses over the table plus the
 * reported counts always equal the stream length. */
HWP__STRAT_HOT void hwp__strat_tagged(hwp_strat *s, uint32_t kind, uint64_t pc,
                                      uint64_t w, const uint32_t *key) {
    uint64_t kpc = hwp__strat_kpc(kind, pc);
    uint32_t set = hwp__strat_index1k(s, kpc, w, key);
    uint16_t tag = (uint16_t)hwp_xor_fold(kpc ^ w, s->d.tag_bits);
    hwp__strat_tent *e = s->tab + (size_t)set * s->d.ways, *v = e;
    uint32_t j, h, m;
    for (j = 0; j < s->d.ways; j++) {
        hwp__strat_tent *x = e + j;
        if (x->valid && x->tag == tag) { /* Hit */
            h = x->hits;
            m = x->misses;
            if (!m) { /* Valid: E3, or E2 when the counter saturates */
                if (h + 1u < s->hit_limit) s->st.trans[HWP_STRAT_E3]++;
                hwp__strat_tset(s, x, kind, pc, w, h + 1u, set);
            } else if (h + 1u < s->hit_limit && !hwp__strat_should_evict(s, h, m)) {
                s->st.trans[HWP_STRAT_E6A]++;
                x->hits = h + 1u;
            } else { /* E6 (a saturating E6a evicts the same way) */
                s->st.trans[HWP_STRAT_E6]++;
                s->st.evicted++;
                hwp__strat_emit(s, kind, pc, w, h + 1u, set, 1);
                x->valid = 0; /* Empty, handing the misses to the next tuple */
                x->hits = m;
                x->misses = 0;
            }
            return;
        }
        /* Victim for a miss: an Empty way, else one already in Evict,
         * else the way with the fewest hits (the paper leaves it open). */
        if (v->valid && (!x->valid || (x->misses && !v->misses) ||
                         (!x->misses == !v->misses && x->hits < v->hits)))
            v = x;
    }
    if (!v->valid) { /* E1: allocate, inheriting what E6 left */
        s->st.trans[HWP_STRAT_E1]++;
        v->valid = 1;
        v->tag = tag;
        hwp__strat_tset(s, v, kind, pc, w, v->hits + 1u, set);
        return;
    }
    h = v->hits;
    m = v->misses;
    if (!m) { /* E4: Valid -> Evict */
        s->st.trans[HWP_STRAT_E4]++;
        v->misses = 1;
    } else if (hwp__strat_should_replace(s, h, m)) {
        /* E5: new.hits = orig.hits + orig.misses, counting this miss */
        s->st.trans[HWP_STRAT_E5]++;
        s->st.evicted++;
        v->tag = tag;
        hwp__strat_tset(s, v, kind, pc, w, h + m + 1u, set);
    } else { /* E5a */
        s->st.trans[HWP_STRAT_E5A]++;
        v->misses = (uint8_t)(m + 1u);
    }
}

/* One tuple; key (may be NULL) is hwp_strat_pc_key of (kind, pc). */
HWP__STRAT_HOT void hwp__strat_push(hwp_strat *s, uint32_t kind, uint64_t pc,
                                    uint64_t w, const uint32_t *key) {
    uint32_t i;
    s->st.events++;
    if (s->mode == HWP__STRAT_M_PERIODIC) { /* the paper's H[P_r]_n first */
        /* this mode has the folded tables: no test for them */
        i = key ? *key ^ hwp__strat_fast_w(s->fh, w)
                : hwp__strat_fast_index(s->fh, hwp__strat_kpc(kind, pc), w);
        if (--s->ctr[i]) return; /* P_r counts down: one decrement and test */
    } else if (s->mode == HWP__STRAT_M_PERIODIC_CHEAP) {
        i = hwp__strat_cheap(hwp__strat_kpc(kind, pc), w, s->index_bits);
        if (--s->ctr[i]) return;
    } else if (s->mode == HWP__STRAT_M_PERIODIC_ONE) {
        i = 0;
        if (--s->ctr[0]) return;
    } else if (s->mode == HWP__STRAT_M_TAGGED) {
        hwp__strat_tagged(s, kind, pc, w, key);
        return;
    } else if (s->mode == HWP__STRAT_M_ASSOC) {
        hwp__strat_afold(s, &s->a1, kind, pc, w, 1, 0);
        return;
    } else if (s->mode == HWP__STRAT_M_STATELESS) {
        /* Stateless R_r: the split has nothing to act on, H[R] = R
         * (section 3.3), so no index is computed. */
        if (hwp_rng_below(&s->rng, s->d.rate) == 0)
            hwp__strat_emit(s, kind, pc, w, s->d.rate, 0, 1);
        return;
    } else {
        uint32_t c;
        i = hwp__strat_index1k(s, hwp__strat_kpc(kind, pc), w, key);
        c = ++s->ctr[i];
        if (s->mode == HWP__STRAT_M_RANDOM) {
            if (hwp_rng_below(&s->rng, s->d.rate) != 0) return;
        } else {
            if (c < s->due[i]) return;
            s->due[i] = 1u + hwp_rng_below(&s->rng, 2u * (uint64_t)s->d.rate - 1u);
        }
        s->ctr[i] = 0;
        hwp__strat_emit(s, kind, pc, w, s->d.counter ? c : s->d.rate, i, 1);
        return;
    }
    s->ctr[i] = s->d.rate; /* P_r: with or without C, r events */
    hwp__strat_emit(s, kind, pc, w, s->d.rate, i, 1);
}

/* Feed one tuple of profile type `kind` (0..255) to the compressor. */
HWP_INLINE void hwp_strat_push(hwp_strat *s, uint32_t kind, uint64_t pc,
                               uint64_t w) {
    hwp__strat_push(s, kind, pc, w, NULL);
}

/* The pc's half of the paper's hash for this instance (its seed and
 * level-1 width): the index is linear over XOR, so a host that knows
 * its pcs ahead (a JIT at translation time, an emulator per block) may
 * compute this once per (kind, pc) and pass it to hwp_strat_push_key,
 * which then looks up only w's eight bytes. The result is the same
 * index, so the same profile, as hwp_strat_push. 0 with the cheap hash
 * (which push_key then computes in full). */
HWP_INLINE uint32_t hwp_strat_pc_key(const hwp_strat *s, uint32_t kind,
                                     uint64_t pc) {
    /* fast_index(kpc, 0) holds w = 0's half as well: take it out */
    return s->fh ? hwp__strat_fast_index(s->fh, hwp__strat_kpc(kind, pc), 0) ^
                       hwp__strat_fast_w(s->fh, 0)
                 : 0u;
}

HWP_INLINE void hwp_strat_push_key(hwp_strat *s, uint32_t key, uint32_t kind,
                                   uint64_t pc, uint64_t w) {
    hwp__strat_push(s, kind, pc, w, &key);
}

/* The selector of section 2.1 over the shared event record: loads give
 * <pc, value>, conditional branches and indirect jumps <pc, next_pc>,
 * calls <pc, next_pc>, each when its kind is in desc.select. */
HWP_INLINE void hwp_strat_insn(hwp_strat *s, const hwp_insn *in) {
    uint32_t kind;
    uint64_t w;
    switch (in->cls) {
    case HWP_CLS_LOAD: kind = HWP_STRAT_KIND_VALUE; w = in->value; break;
    case HWP_CLS_BR_COND:
    case HWP_CLS_INDIRECT: kind = HWP_STRAT_KIND_EDGE; w = in->next_pc; break;
    case HWP_CLS_CALL: kind = HWP_STRAT_KIND_CALL; w = in->next_pc; break;
    default: return;
    }
    if (s->d.select & HWP_STRAT_SEL(kind)) hwp_strat_push(s, kind, in->pc, w);
}

/* ---- software side: the profile accumulator --------------------------- */
/* A host-side profile: it models no hardware, takes no hwp_cost and its
 * stats' cycles stay 0. */

enum { /* hwp_strat_acc_desc.replace: a full tuple table meets a new tuple */
    HWP_STRAT_ACC_EVICT = 0, /* evict the smallest count among the 8 slots
                                from the newcomer's home when that count is
                                at most the newcomer's (default, measured:
                                docs/stratified.md)                       */
    HWP_STRAT_ACC_KEEP = 1   /* keep what is held, drop the newcomer      */
};

typedef struct hwp_strat_acc_desc {
    uint32_t tuples; /* distinct tuples held, 1..2^28; 0 = 65536       */
    uint32_t pcs;    /* distinct (kind, pc) held, 1..2^28; 0 = tuples/4 */
    uint32_t strata; /* 0: off; else the compressor's strata (or sets),
                        a power of two up to 2^24: keep each stratum's
                        length and samples for hwp_strat_acc_estimate   */
    uint32_t replace;     /* HWP_STRAT_ACC_EVICT (0) or _KEEP           */
    uint32_t min_samples; /* queries: a pc with fewer samples is never
                             reported invariant (its interval is [0, 1]
                             and hwp_strat_acc_top_pcs leaves it out);
                             0 = 30 (our choice: the binomial interval's
                             normal approximation needs ~30)           */
} hwp_strat_acc_desc;

typedef struct hwp__strat_tslot {
    uint64_t pc, w, count, samples; /* samples: first-level samples */
    uint32_t kind, used, stratum, pad; /* pad: 0 */
} hwp__strat_tslot;

HWP_STATIC_ASSERT(strat_tslot_is_48_bytes, sizeof(hwp__strat_tslot) == 48);

typedef struct hwp__strat_pslot {
    uint64_t pc, count, samples;
    uint64_t top_w, top_count; /* the pc's most frequent value held     */
    uint64_t lost;             /* counts of its tuples evicted or dropped:
                                  any held tuple may have had up to this
                                  many more                             */
    uint64_t scratch;          /* the metric's coverage sum            */
    uint32_t kind, used;
} hwp__strat_pslot;

typedef struct hwp_strat_acc_stats {
    uint64_t events;  /* messages folded (and tuples added)             */
    uint64_t dropped; /* messages whose tuple found no room (KEEP, or no
                         smaller entry to evict)                        */
    uint64_t evicted; /* tuples evicted for a newcomer (EVICT)          */
    uint64_t cycles;  /* 0: a host-side profile                         */
    uint64_t total;   /* counts folded, held or not                     */
    uint64_t dropped_count;    /* counts of dropped and evicted tuples  */
    uint64_t dropped_pc_count; /* counts whose (kind, pc) found no room */
    uint64_t tuples, pcs;      /* held now                              */
} hwp_strat_acc_stats;

typedef struct hwp_strat_acc {
    hwp_head head;
    hwp_strat_acc_desc d;
    hwp__strat_tslot *t;
    hwp__strat_pslot *p;
    uint64_t *slen, *snum;    /* per stratum: sum of counts, samples    */
    uint32_t tmask, pmask;    /* slots - 1                              */
    hwp_strat_acc_stats st;
} hwp_strat_acc;

#define HWP__STRAT_ACC_MAGIC HWP__MAGIC('s', 'a', 'c', 'c')

/* One value of one pc, as a JIT asks for it. */
typedef struct hwp_strat_value {
    uint64_t w;
    uint64_t count;      /* events the profile attributes to <pc, w>     */
    uint64_t samples;    /* first-level samples behind that count        */
    double estimate;     /* hwp_strat_acc_estimate: the C estimator      */
    double invariance;   /* count / n(pc)                                */
    double lo, hi;       /* 95% interval of the invariance: Wilson's, over
                            the pc's samples, its upper end from count
                            plus the pc's counts lost to a full table;
                            [0, 1] below min_samples                     */
} hwp_strat_value;

/* One pc, ranked by its top value's invariance. */
typedef struct hwp_strat_pc {
    uint64_t pc;
    uint32_t kind, pad;
    uint64_t count;      /* n(pc): events at the pc                      */
    uint64_t samples;    /* first-level samples at the pc                */
    uint64_t top_w;      /* its most frequent value                       */
    double invariance, lo, hi; /* that value's share and 95% interval  */
} hwp_strat_pc;

/* Section 5.3.1 selection; zero fields take the paper's values. */
typedef struct hwp_strat_metric_desc {
    uint64_t min_exec; /* loads executed at least this often: 1000      */
    double min_inv;    /* tuples with at least this invariance: 0.10    */
    double min_cover;  /* loads this much covered by such tuples: 0.40  */
} hwp_strat_metric_desc;

typedef struct hwp_strat_metric {
    double error_pct;  /* sum f(v)/f |I_ideal(v) - I_prof(v)|, in %     */
    uint64_t loads;    /* (kind, pc) selected                           */
    uint64_t tuples;   /* tuples selected                               */
    uint64_t weight;   /* f: their ideal execution count                */
} hwp_strat_metric;

/* The contract's calls (cost.h, HWP__CONTRACT); what hwp_strat_acc's do:
 *   init: cost: the contract's one init shape; the accumulator is the software
 *     side and charges nothing itself (the handler's per-message cost is
 *     HWP_COST_STRAT_MESSAGE, charged by the compressor that delivers).
 *   merge: fold src's profile into dst (same desc, else HWP_EMISMATCH naming
 *     the field). With room for every tuple in dst, merge(first half, second
 *     half) equals the whole stream's profile.
 *   write_json: {"model":"strat_acc","version":1,"desc":{..},"stats":{..},
 *     "strata":[[length,samples],...],"pc_profile":[{"kind","pc","count",
 *     "samples","top_w","top_count","lost"},...],"profile":[{"kind","pc","w",
 *     "count","samples","stratum"},...]}; pcs and values as hex strings. */
HWP__CONTRACT(strat_acc);
/* The same at compile time, for static storage: tuples and pcs powers of
 * two or 0 (the defaults), strata as in the desc. Other counts are
 * rounded up inside: ask hwp_strat_acc_bytes for them. */
#define HWP__STRAT_ACC_T(t) ((t) ? (size_t)(t) : (size_t)65536)
#define HWP__STRAT_ACC_P(t, p) \
    ((p) ? (size_t)(p) : HWP__STRAT_ACC_T(t) >= 4u ? HWP__STRAT_ACC_T(t) / 4u : (size_t)1)
#define HWP_STRAT_ACC_BYTES(tuples, pcs, strata)                                \
    (HWP__STRAT_AL(sizeof(hwp__strat_tslot) * 2u * HWP__STRAT_ACC_T(tuples)) + \
     HWP__STRAT_AL(sizeof(hwp__strat_pslot) * 2u * HWP__STRAT_ACC_P(tuples, pcs)) + \
     2u * HWP__STRAT_AL(sizeof(uint64_t) * (size_t)(strata)) + (HWP__ALIGN - 1u))
HWP_API void hwp_strat_acc_add(hwp_strat_acc *a, uint32_t kind, uint64_t pc,
                               uint64_t w, uint64_t count);
HWP_API void hwp_strat_acc_fold(hwp_strat_acc *a, const hwp_strat_msg *msgs,
                                uint32_t n);
HWP_API void hwp_strat_acc_handler(void *acc, const hwp_strat_msg *msgs,
                                   uint32_t n);
HWP_API uint64_t hwp_strat_acc_count(const hwp_strat_acc *a, uint32_t kind,
                                     uint64_t pc, uint64_t w);
HWP_API uint64_t hwp_strat_acc_pc_count(const hwp_strat_acc *a, uint32_t kind,
                                        uint64_t pc);
HWP_API double hwp_strat_acc_invariance(const hwp_strat_acc *a, uint32_t kind,
                                        uint64_t pc, uint64_t w);
/* The ratio estimate for samplers with C (sections 3.1, 3.3 and footnote
 * 1): the tuple's first-level samples times its stratum's length per
 * sample (an A_k before the accumulator folds several samples into one
 * message; hwp_strat_msg.samples carries them). Needs desc.strata;
 * without it, or for a stratum out of range, the count. */
HWP_API double hwp_strat_acc_estimate(const hwp_strat_acc *a, uint32_t kind,
                                      uint64_t pc, uint64_t w);
/* The values seen at (kind, pc), most frequent first: returns how many
 * there are, writes min(that, cap) into out (NULL when cap is 0). */
HWP_API size_t hwp_strat_acc_top_values(const hwp_strat_acc *a, uint32_t kind,
                                        uint64_t pc, hwp_strat_value *out,
                                        size_t cap);
/* The pcs of `kind` with at least desc.min_samples samples, most
 * invariant first (ties: more events first): returns how many qualify,
 * writes min(that, cap). */
HWP_API size_t hwp_strat_acc_top_pcs(const hwp_strat_acc *a, uint32_t kind,
                                     hwp_strat_pc *out, size_t cap);
/* Iterate: *cursor = 0 first; returns false at the end. */
HWP_API bool hwp_strat_acc_next(const hwp_strat_acc *a, uint32_t *cursor,
                                hwp_strat_msg *out);
/* Nothing is buffered: returns HWP_OK (the contract's end of stream). */
HWP_API hwp_status hwp_strat_acc_flush(hwp_strat_acc *a);
/* Uses ideal's scratch column, hence non-const. */
HWP_API hwp_status hwp_strat_invariance_error(hwp_strat_acc *ideal,
                                              const hwp_strat_acc *prof,
                                              const hwp_strat_metric_desc *md,
                                              hwp_strat_metric *out);

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_STRATIFIED_H */

/* ======================================================================= */
/* IMPLEMENTATION                                                          */
/* ======================================================================= */
#if defined(HWPROF_IMPL) && !defined(HWPROF_STRATIFIED_IMPL)
#define HWPROF_STRATIFIED_IMPL

#ifdef __cplusplus
extern "C" {
#endif

/* Ways of an A_k table: fully associative up to 16, else 8-way. */
static uint32_t hwp__strat_aways(uint32_t k, uint32_t ways) {
    return ways ? ways : (k <= 16u ? k : 8u);
}

/* Defaults as hwp_strat_desc's comments attribute them. entries' and
 * ways' depend on the scheme, and the ranges of ways, tag_bits,
 * miss_bits and l2_ways on the scheme or on another field: those are
 * hwp__strat_fill's. */
static const char *const hwp__strat_scheme_names[] = {"sampled", "tagged", "assoc"};
static const char *const hwp__strat_sampler_names[] = {"periodic", "random", "countdown"};
static const char *const hwp__strat_hash_names[] = {"paper", "cheap"};
HWP_STATIC_ASSERT(strat_names_by_value, HWP_STRAT_ASSOC == 2 &&
                                            HWP_STRAT_COUNTDOWN == 2 &&
                                            HWP_STRAT_HASH_CHEAP == 1);
static const hwp_field hwp__strat_desc_f[] = {
    HWP__FNAMED(hwp_strat_desc, "strat", scheme, 0, hwp__strat_scheme_names,
                "strat: scheme must be SAMPLED, TAGGED or ASSOC (0..2)"),
    HWP__FNAMED(hwp_strat_desc, "strat", sampler, 0, hwp__strat_sampler_names,
                "strat: sampler must be PERIODIC, RANDOM or COUNTDOWN (0..2)"),
    HWP__FANY(hwp_strat_desc, "strat", counter),
    HWP__FN(hwp_strat_desc, "strat", rate, UINT, 256, 1, 1u << 30, 0,
            "strat: rate must be in 1..2^30"),
    HWP__FN(hwp_strat_desc, "strat", entries, UINT, 0, 1, 1u << 24, HWP_FIELD_POW2,
            "strat: entries must be a power of two, 1..2^24"),
    HWP__FANY(hwp_strat_desc, "strat", ways),
    HWP__FNAMED(hwp_strat_desc, "strat", hash, 0, hwp__strat_hash_names,
                "strat: hash must be PAPER or CHEAP (0..1)"),
    HWP__FDEF(hwp_strat_desc, "strat", tag_bits, 2),
    HWP__FN(hwp_strat_desc, "strat", count_bits, UINT, 8, 1, 32, 0,
            "strat: count_bits must be 1..32"),
    HWP__FDEF(hwp_strat_desc, "strat", miss_bits, 3),
    HWP__FN(hwp_strat_desc, "strat", l2_entries, UINT, 0, 1, 1u << 20, HWP_FIELD_POW2,
            "strat: l2_entries must be 0 or a power of two up to 2^20"),
    HWP__FANY(hwp_strat_desc, "strat", l2_ways),
    HWP__FN(hwp_strat_desc, "strat", queue, UINT, 100, 1, 1u << 20, 0,
            "strat: queue must be 1..2^20 messages"),
    HWP__FN(hwp_strat_desc, "strat", select, UINT, HWP_STRAT_SEL(HWP_STRAT_KIND_VALUE),
            0, 0xFFFFFFFFu, 0, NULL),
    HWP__FN(hwp_strat_desc, "strat", seed, HEX, 0, 0, ~(uint64_t)0, 0, NULL)};

HWP__FIELDS_FN(hwp_strat_desc_fields, hwp__strat_desc_f)

/* Copy, fill defaults, validate; returns the reason or NULL. Zero
 * fields take the defaults, so a zero-sized table or queue cannot be
 * asked for; what can go wrong is a size out of range or a composition
 * the paper does not build. */
static const char *hwp__strat_fill(hwp_strat_desc *o, const hwp_strat_desc *d) {
    const char *why;
    if (d) hwp__copy(o, d, sizeof *o);
    else hwp__zero(o, sizeof *o);
    if (!o->entries) o->entries = o->scheme == HWP_STRAT_ASSOC ? 4096u : 2048u;
    if (!o->ways && o->scheme == HWP_STRAT_TAGGED) o->ways = 2;
    if (o->scheme == HWP_STRAT_ASSOC) o->ways = hwp__strat_aways(o->entries, o->ways);
    if (o->l2_ways && !o->l2_entries)
        return "strat: l2_ways needs l2_entries (an A_k of k >= 1 entries)";
    if (o->l2_entries) o->l2_ways = hwp__strat_aways(o->l2_entries, o->l2_ways);
    if ((why = hwp__field_fill(o, hwp__strat_desc_f, HWP__N(hwp__strat_desc_f))))
        return why;
    if (o->scheme == HWP_STRAT_TAGGED) {
        if (!hwp_is_pow2(o->ways) || o->ways > 16u || o->ways > o->entries)
            return "strat: ways (tagged) must be a power of two, 1..16, <= entries";
        if (o->tag_bits > 16u) return "strat: tag_bits must be 1..16";
        if (o->count_bits > 16u) return "strat: count_bits (tagged) must be 1..16";
        if (o->miss_bits > 8u) return "strat: miss_bits must be 1..8";
        /* Section 4's compressor already folds repeats into counts;
         * section 3.4 places A_k behind the samplers only. */
        if (o->l2_entries)
            return "strat: l2_entries must be 0 with the tagged compressor (A_k follows samplers only)";
    }
    if (o->scheme == HWP_STRAT_ASSOC) {
        if (!hwp_is_pow2(o->ways) || o->ways > 64u || o->ways > o->entries)
            return "strat: ways (assoc) must be a power of two, 1..64, <= entries";
        /* a lossless table behind a lossless table adds nothing */
        if (o->l2_entries)
            return "strat: l2_entries must be 0 with the assoc scheme (A_k follows samplers only)";
    }
    if (o->l2_entries &&
        (!hwp_is_pow2(o->l2_ways) || o->l2_ways > 64u || o->l2_ways > o->l2_entries))
        return "strat: l2_ways must be a power of two, 1..64, <= l2_entries";
    return NULL;
}

/* Lays the tables out; with base == NULL only measures. HWP_STRAT_BYTES
 * repeats this arithmetic: the paper's hash always gets its tables
 * (even where one set needs no index), so the size depends on the six
 * fields the macro takes and on nothing else. */
static size_t hwp__strat_layout(hwp_strat *s, const hwp_strat_desc *o,
                                unsigned char *base) {
    unsigned char *cur = base;
    size_t n = 0, part;
#define HWP__STRAT_CARVE(dst, type, count)                    \
    do {                                                      \
        part = sizeof(type) * (size_t)(count);                \
        if (base) (dst) = (type *)hwp__carve(&cur, part);     \
        n += hwp__align(part);                                \
    } while (0)
    if (o->hash == HWP_STRAT_HASH_PAPER) {
        HWP__STRAT_CARVE(s->bh, hwp_bytehash, 1);
        HWP__STRAT_CARVE(s->fh, hwp__strat_fast, 1);
    }
    if (o->scheme == HWP_STRAT_SAMPLED) {
        HWP__STRAT_CARVE(s->ctr, uint32_t, o->entries);
        if (o->sampler == HWP_STRAT_COUNTDOWN)
            HWP__STRAT_CARVE(s->due, uint32_t, o->entries);
    } else if (o->scheme == HWP_STRAT_TAGGED) {
        HWP__STRAT_CARVE(s->tab, hwp__strat_tent, o->entries);
    } else {
        HWP__STRAT_CARVE(s->a1.e, hwp__strat_aent, o->entries);
    }
    if (o->l2_entries) HWP__STRAT_CARVE(s->a2.e, hwp__strat_aent, o->l2_entries);
    HWP__STRAT_CARVE(s->q, hwp_strat_msg, o->queue);
#undef HWP__STRAT_CARVE
    return n;
}

/* Fold the byte permutations into the level-1 index tables. */
static void hwp__strat_fast_init(hwp__strat_fast *f, const hwp_bytehash *h,
                                 unsigned bits) {
    unsigned i, b;
    for (i = 0; i < 8; i++)
        for (b = 0; b < 256; b++) {
            uint64_t r = h->tab[i][b];
            f->pc[i][b] = (uint32_t)hwp_xor_fold(r << (8 * (7 - i)), bits);
            f->w[i][b] = (uint32_t)hwp_xor_fold(r << (8 * i), bits);
        }
}

HWP_API size_t hwp_strat_bytes(const hwp_strat_desc *d) {
    hwp_strat_desc o;
    hwp_strat tmp;
    if (hwp__strat_fill(&o, d)) return 0;
    return hwp__bytes(hwp__strat_layout(&tmp, &o, NULL));
}

static void hwp__strat_atab_init(hwp__strat_atab *t, uint32_t k, uint32_t ways,
                                 uint32_t bits) {
    t->set_bits = hwp_log2(k / ways);
    t->ways = ways;
    t->max_folds = hwp_sat_max(bits);
}

/* Back to the state right after init: the seed's random stream from its
 * start, zero tables and counters. The byte tables depend only on the
 * seed and stay. */
static void hwp__strat_clear(hwp_strat *s) {
    uint32_t i;
    const hwp_strat_desc *o = &s->d;
    hwp_rng_seed(&s->rng, o->seed);
    if (s->ctr) hwp__zero(s->ctr, sizeof(uint32_t) * o->entries);
    /* P_r's counters count down to the next sample (one decrement and
     * test per tuple) and start at a random phase in [0, r), as a counter
     * does when profiling starts mid-run (the paper measures after the
     * programs' initialisation). From 0, a stratum's first message would
     * come only after r events and the last E mod r of its E events would
     * never be represented: a stratum of few events (a thinly spread
     * load's values) then under-counts, and a load's other values with
     * it (a Lua run: 0.504 read as 0.576). With the phase, each event
     * is sampled with probability 1/r, so message counts of r are
     * unbiased. With C the message count is the counter: no phase. */
    if (s->mode <= HWP__STRAT_M_PERIODIC_ONE)
        for (i = 0; i < o->entries; i++)
            s->ctr[i] = o->rate - (o->counter ? 0u : (uint32_t)hwp_rng_below(&s->rng, o->rate));
    if (s->due)
        for (i = 0; i < o->entries; i++)
            s->due[i] = 1u + hwp_rng_below(&s->rng, 2u * (uint64_t)o->rate - 1u);
    if (s->tab) hwp__zero(s->tab, sizeof(hwp__strat_tent) * o->entries);
    if (s->a1.e) hwp__zero(s->a1.e, sizeof(hwp__strat_aent) * o->entries);
    if (s->a2.e) hwp__zero(s->a2.e, sizeof(hwp__strat_aent) * o->l2_entries);
    s->a1.clock = s->a2.clock = 0;
    s->qn = 0;
    hwp__zero(&s->st, sizeof s->st);
}

HWP_API hwp_status hwp_strat_init(hwp_strat *s, void *storage, size_t bytes,
                                  const hwp_strat_desc *d, hwp_cost *cost) {
    hwp_strat_desc o;
    const char *why;
    hwp_status st;
    if (!s) return HWP_EINVAL;
    hwp__zero(s, sizeof *s);
    s->head.magic = HWP__STRAT_MAGIC;
    why = hwp__strat_fill(&o, d);
    st = hwp__admit(&s->head, why, &storage, &bytes,
                        why ? 0 : hwp__strat_layout(s, &o, NULL));
    if (st != HWP_OK) return st;
    s->d = o;
    s->cost = cost;
    hwp__strat_layout(s, &o, (unsigned char *)storage);
    if (o.scheme == HWP_STRAT_ASSOC)
        hwp__strat_atab_init(&s->a1, o.entries, o.ways, o.count_bits);
    s->index_bits = hwp_log2(o.entries / (o.scheme == HWP_STRAT_SAMPLED ? 1u : o.ways));
    if (o.l2_entries)
        hwp__strat_atab_init(&s->a2, o.l2_entries, o.l2_ways, o.count_bits);
    if (s->bh) {
        hwp_bytehash_init(s->bh, o.seed);
        hwp__strat_fast_init(s->fh, s->bh, s->index_bits);
        if (!s->index_bits) s->fh = NULL; /* one set: no index to compute */
    }
    /* the hit counter's limit exists only for the tagged compressor,
     * whose count_bits is at most 16 (32 would shift past the width) */
    s->hit_limit = o.scheme == HWP_STRAT_TAGGED ? (uint32_t)1 << o.count_bits : 0u;
    s->miss_max = hwp_sat_max(o.miss_bits);
    if (o.scheme == HWP_STRAT_TAGGED) s->mode = HWP__STRAT_M_TAGGED;
    else if (o.scheme == HWP_STRAT_ASSOC) s->mode = HWP__STRAT_M_ASSOC;
    else if (o.sampler == HWP_STRAT_RANDOM && !o.counter) s->mode = HWP__STRAT_M_STATELESS;
    else if (o.sampler == HWP_STRAT_RANDOM) s->mode = HWP__STRAT_M_RANDOM;
    else if (o.sampler == HWP_STRAT_COUNTDOWN) s->mode = HWP__STRAT_M_COUNTDOWN;
    else if (!s->bh) s->mode = HWP__STRAT_M_PERIODIC_CHEAP;
    else s->mode = s->fh ? HWP__STRAT_M_PERIODIC : HWP__STRAT_M_PERIODIC_ONE;
    hwp__strat_clear(s);
    return hwp__fail(&s->head, HWP_OK, "");
}

/* One interrupt: the handler takes the queue; the host pays for it.
 * While the handler runs the queue is its input, so the hardware cannot
 * append to it: a message emitted meanwhile (the handler pushed, or
 * flushed) is dropped and counted, and no interrupt nests. */
static void hwp__strat_interrupt(hwp_strat *s) {
    if (s->busy) return;
    s->st.interrupts++;
    s->st.cycles += hwp_cost_cycles(s->cost, HWP_COST_STRAT_INTERRUPT) +
                    (uint64_t)hwp_cost_cycles(s->cost, HWP_COST_STRAT_MESSAGE) * s->qn;
    hwp_cost_charge(s->cost, HWP_COST_STRAT_INTERRUPT, 1);
    hwp_cost_charge(s->cost, HWP_COST_STRAT_MESSAGE, s->qn);
    if (s->d.on_interrupt) {
        s->busy = 1;
        s->d.on_interrupt(s->d.ctx, s->q, s->qn);
        s->busy = 0;
    } else {
        s->st.unhandled += s->qn;
    }
    s->qn = 0;
}

static void hwp__strat_enqueue(hwp_strat *s, uint32_t kind, uint64_t pc,
                               uint64_t w, uint64_t count, uint32_t stratum,
                               uint32_t samples) {
    hwp_strat_msg *m;
    if (s->busy || s->qn >= s->d.queue) {
        s->st.dropped++;
        return;
    }
    m = s->q + s->qn++;
    m->pc = pc;
    m->w = w;
    m->count = count;
    m->kind = kind;
    m->stratum = stratum;
    m->samples = samples;
    m->reserved = 0;
    s->st.messages++;
    if (s->qn >= s->d.queue) hwp__strat_interrupt(s);
}

HWP_API void hwp__strat_emit(hwp_strat *s, uint32_t kind, uint64_t pc,
                             uint64_t w, uint64_t count, uint32_t stratum,
                             uint32_t samples) {
    s->st.samples++;
    if (s->a2.e) hwp__strat_afold(s, &s->a2, kind, pc, w, count, stratum);
    else hwp__strat_enqueue(s, kind, pc, w, count, stratum, samples);
}

/* An A_k entry leaves its table: level 1 feeds the first-level output,
 * level 2 the queue. Every fold took one first-level sample (level 1:
 * one event), so the folds are the samples the message stands for. */
HWP_API void hwp__strat_aout(hwp_strat *s, const hwp__strat_atab *t,
                             const hwp__strat_aent *e) {
    if (t == &s->a1)
        hwp__strat_emit(s, e->kind, e->pc, e->w, e->count, e->stratum, e->folds);
    else
        hwp__strat_enqueue(s, e->kind, e->pc, e->w, e->count, e->stratum, e->folds);
}

static void hwp__strat_aflush(hwp_strat *s, hwp__strat_atab *t, uint32_t k) {
    uint32_t i;
    for (i = 0; i < k; i++)
        if (t->e[i].folds) {
            hwp__strat_aout(s, t, t->e + i);
            t->e[i].folds = 0;
        }
}

HWP_API hwp_status hwp_strat_flush(hwp_strat *s) {
    if (!s || s->head.magic != HWP__STRAT_MAGIC) return HWP_EINVAL;
    if (s->a1.e) hwp__strat_aflush(s, &s->a1, s->d.entries);
    if (s->a2.e) hwp__strat_aflush(s, &s->a2, s->d.l2_entries);
    if (s->qn) hwp__strat_interrupt(s);
    return hwp__fail(&s->head, HWP_OK, "");
}

static uint64_t hwp__strat_apending(const hwp__strat_atab *t, uint32_t k) {
    uint64_t n = 0;
    uint32_t i;
    for (i = 0; i < k; i++)
        if (t->e[i].folds) n += t->e[i].count;
    return n;
}

HWP_API uint64_t hwp_strat_pending(const hwp_strat *s) {
    uint64_t n = 0;
    uint32_t i;
    if (!s || s->head.magic != HWP__STRAT_MAGIC) return 0;
    if (s->ctr) /* P_r counts down from r */
        for (i = 0; i < s->d.entries; i++)
            n += s->mode <= HWP__STRAT_M_PERIODIC_ONE ? s->d.rate - s->ctr[i] : s->ctr[i];
    if (s->tab)
        for (i = 0; i < s->d.entries; i++) n += s->tab[i].hits + s->tab[i].misses;
    if (s->a1.e) n += hwp__strat_apending(&s->a1, s->d.entries);
    if (s->a2.e) n += hwp__strat_apending(&s->a2, s->d.l2_entries);
    return n;
}

HWP_API hwp_status hwp_strat_reset(hwp_strat *s) {
    if (!s || s->head.magic != HWP__STRAT_MAGIC) return HWP_EINVAL;
    hwp__strat_clear(s);
    return hwp__fail(&s->head, HWP_OK, "");
}

/* A label, then a number. */
static void hwp__strat_lu(const hwp_writer *w, const char *label, uint64_t v) {
    hwp_put_str(w, label);
    hwp_put_u64(w, v);
}

/* "H[P_256]_2048 + A_16" style name of the composition. */
static void hwp__strat_put_name(const hwp_strat *s, const hwp_writer *w) {
    static const char *const sampler[] = {"P", "R", "Rcd"};
    const hwp_strat_desc *o = &s->d;
    if (o->scheme == HWP_STRAT_SAMPLED) {
        if (o->entries > 1) hwp_put_str(w, "H[");
        if (o->counter) hwp_put_str(w, "C");
        hwp_put_str(w, sampler[o->sampler]);
        hwp__strat_lu(w, "_", o->rate);
        if (o->entries > 1) hwp__strat_lu(w, "]_", o->entries);
    } else if (o->scheme == HWP_STRAT_TAGGED) {
        hwp__strat_lu(w, "tag", o->tag_bits);
        hwp__strat_lu(w, "-", s->hit_limit);
        hwp__strat_lu(w, "-", o->entries);
        hwp__strat_lu(w, "x", o->ways);
    } else {
        hwp__strat_lu(w, "A_", o->entries);
    }
    if (o->l2_entries) hwp__strat_lu(w, " + A_", o->l2_entries);
}

static const char *const hwp__strat_tnames[HWP_STRAT_TRANSITIONS] = {
    "E1", "E2", "E3", "E4", "E5", "E5a", "E6", "E6a"};

HWP_API void hwp_strat_write_text(const hwp_strat *s, const hwp_writer *w) {
    unsigned i;
    if (!s || s->head.magic != HWP__STRAT_MAGIC) return;
    hwp_put_str(w, "stratified ");
    hwp__strat_put_name(s, w);
    hwp_put_str(w, s->d.hash == HWP_STRAT_HASH_PAPER ? " (paper hash)" : " (cheap hash)");
    if (!s->st.events) {
        /* P_r's counters start part-way (hwp_strat_pending), which would
         * read as events pending when none came. */
        hwp_put_str(w, ": no events: the stream held no tuple of the kinds it profiles\n");
        return;
    }
    hwp__strat_lu(w, ": ", s->st.events);
    hwp__strat_lu(w, " events, ", s->st.samples);
    hwp__strat_lu(w, " first-level messages, ", s->st.messages);
    hwp__strat_lu(w, " messages, ", s->st.interrupts);
    hwp__strat_lu(w, " interrupts, ", hwp_strat_pending(s));
    hwp_put_str(w, " events pending\n");
    if (s->d.scheme == HWP_STRAT_TAGGED) {
        hwp_put_str(w, "  transitions:");
        for (i = 0; i < HWP_STRAT_TRANSITIONS; i++) {
            hwp_put_str(w, " ");
            hwp_put_str(w, hwp__strat_tnames[i]);
            hwp_put_str_u64(w, "=", s->st.trans[i]);
        }
        hwp_put_str(w, "\n");
    }
}

/* ---- reports: field tables shared by the writers and the readers ------ */

#define HWP__STRAT_T(name, i) HWP__FSN(hwp_strat_stats, name, trans[i])
static const hwp_field hwp__strat_stats_f[] = {
    HWP__FS_HEAD(hwp_strat_stats),
    HWP__FS(hwp_strat_stats, samples), HWP__FS(hwp_strat_stats, messages),
    HWP__FS(hwp_strat_stats, interrupts), HWP__FS(hwp_strat_stats, unhandled),
    HWP__STRAT_T("E1", HWP_STRAT_E1), HWP__STRAT_T("E2", HWP_STRAT_E2),
    HWP__STRAT_T("E3", HWP_STRAT_E3), HWP__STRAT_T("E4", HWP_STRAT_E4),
    HWP__STRAT_T("E5", HWP_STRAT_E5), HWP__STRAT_T("E5a", HWP_STRAT_E5A),
    HWP__STRAT_T("E6", HWP_STRAT_E6), HWP__STRAT_T("E6a", HWP_STRAT_E6A)};
#undef HWP__STRAT_T

HWP_API void hwp_strat_write_json(const hwp_strat *s, const hwp_writer *w) {
    if (!s || s->head.magic != HWP__STRAT_MAGIC) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_json_envelope(w, "strat", 1);
    hwp__field_put(w, "desc", &s->d, hwp__strat_desc_f, HWP__N(hwp__strat_desc_f));
    hwp__field_put(w, "stats", &s->st, hwp__strat_stats_f, HWP__N(hwp__strat_stats_f));
    hwp_put_str(w, ",\"composition\":\"");
    hwp__strat_put_name(s, w);
    hwp_put_str(w, "\"}");
}

/* What a report reader does with a member other than desc and stats:
 * 1 read it, 0 skip it, -1 a format error (in j), -2 the report's desc
 * differs from the instance's (the caller names the field). */
typedef int (*hwp__strat_member)(hwp_json *j, const char *key, void *ctx);

/* Both components' reports: the envelope, the desc into d, with st != NULL
 * the stats into st, the rest through member (NULL: skipped). */
static bool hwp__strat_read_report(hwp_json *j, const char *model, void *d,
                                   const hwp_field *df, size_t nd, void *st,
                                   const hwp_field *sf, size_t ns,
                                   hwp__strat_member member, void *ctx) {
    char key[24];
    bool got_desc = false, got_stats = false;
    if (!hwp_json_envelope(j, model, 1)) return false;
    while (hwp_json_member(j, key, sizeof key)) {
        int r = 0;
        if (hwp_json_key_is(key, "desc")) {
            if (!hwp__field_read(j, d, df, nd, true)) return false;
            got_desc = true;
            continue;
        }
        if (st && got_desc && hwp_json_key_is(key, "stats")) {
            if (!hwp__field_read(j, st, sf, ns, true)) return false;
            got_stats = true;
            continue;
        }
        if (member && got_desc) r = member(j, key, ctx);
        if (r < 0) return false;
        if (!r && !hwp_json_skip(j)) return false;
    }
    if (!hwp_json_end(j)) return false;
    if (!got_desc) return hwp_json_fail(j, "strat: the report has no desc");
    if (st && !got_stats) return hwp_json_fail(j, "strat: the report has no stats");
    return true;
}

/* Either component's read_desc: the envelope and the desc, into d. */
static hwp_status hwp__strat_read_desc(void *d, size_t dsize, const char *model,
                                       const hwp_field *f, size_t n,
                                       const char *json, size_t len,
                                       hwp_json_err *err) {
    hwp_json j;
    if (!d) return HWP_EINVAL;
    hwp__zero(d, dsize);
    hwp_json_init(&j, json, len);
    hwp__strat_read_report(&j, model, d, f, n, NULL, NULL, 0, NULL, NULL);
    return hwp_json_status(&j, err);
}

HWP_API hwp_status hwp_strat_read_desc(hwp_strat_desc *d, const char *json,
                                       size_t n, hwp_json_err *err) {
    return hwp__strat_read_desc(d, sizeof *d, "strat", hwp__strat_desc_f,
                                HWP__N(hwp__strat_desc_f), json, n, err);
}

HWP_API hwp_status hwp_strat_read_json(hwp_strat *s, const char *json,
                                       size_t n, hwp_json_err *err) {
    hwp_json j;
    hwp_strat_desc d;
    hwp_strat_stats st;
    const hwp_field *f;
    hwp_status r;
    if (!s || s->head.magic != HWP__STRAT_MAGIC) return HWP_EINVAL;
    hwp_json_init(&j, json, n);
    hwp__zero(&st, sizeof st);
    hwp__zero(&d, sizeof d);
    hwp__strat_read_report(&j, "strat", &d, hwp__strat_desc_f, HWP__N(hwp__strat_desc_f),
                           &st, hwp__strat_stats_f, HWP__N(hwp__strat_stats_f), NULL, NULL);
    r = hwp_json_status(&j, err);
    if (r != HWP_OK) return hwp__fail(&s->head, r, j.why);
    f = hwp__field_diff(&s->d, &d, hwp__strat_desc_f, HWP__N(hwp__strat_desc_f));
    if (f) return hwp__json_mismatch(&s->head, err, json, n, f->why);
    hwp__strat_clear(s);
    s->st = st;
    return hwp__fail(&s->head, HWP_OK, "");
}

HWP_API hwp_status hwp_strat_merge(hwp_strat *dst, const hwp_strat *src) {
    const hwp_field *f;
    size_t i;
    if (!dst || !src || dst->head.magic != HWP__STRAT_MAGIC ||
        src->head.magic != HWP__STRAT_MAGIC || dst == src)
        return HWP_EINVAL;
    f = hwp__field_diff(&dst->d, &src->d, hwp__strat_desc_f, HWP__N(hwp__strat_desc_f));
    if (f) return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    for (i = 0; i < HWP__N(hwp__strat_stats_f); i++) {
        const hwp_field *g = hwp__strat_stats_f + i;
        hwp__field_set(&dst->st, g, hwp_sat_add64(hwp__field_get(&dst->st, g),
                                                  hwp__field_get(&src->st, g)));
    }
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API hwp_status hwp_strat_get_stats(const hwp_strat *s, hwp_strat_stats *out) {
    if (!s || s->head.magic != HWP__STRAT_MAGIC || !out) return HWP_EINVAL;
    *out = s->st;
    return HWP_OK;
}

HWP__GET_DESC_FN(strat, d, x && x->head.magic == HWP__STRAT_MAGIC)

/* ---- accumulator -------------------------------------------------------- */

/* Slots: a power of two at least twice the limit, so linear probing
 * stays short and a free slot always exists. */
static uint32_t hwp__strat_slots(uint32_t cap) {
    uint32_t n = 1;
    while (n < 2u * cap) n <<= 1;
    return n;
}

/* Defaults as hwp_strat_acc_desc's comments attribute them; pcs's
 * depends on tuples. */
static const hwp_field hwp__strat_acc_desc_f[] = {
    HWP__FN(hwp_strat_acc_desc, "strat_acc", tuples, UINT, 65536, 1, 1u << 28, 0,
            "strat_acc: tuples must be 1..2^28"),
    HWP__FN(hwp_strat_acc_desc, "strat_acc", pcs, UINT, 0, 1, 1u << 28, 0,
            "strat_acc: pcs must be 1..2^28"),
    HWP__FN(hwp_strat_acc_desc, "strat_acc", strata, UINT, 0, 1, 1u << 24,
            HWP_FIELD_POW2, "strat_acc: strata must be 0 or a power of two up to 2^24"),
    HWP__FN(hwp_strat_acc_desc, "strat_acc", replace, UINT, 0, 0, HWP_STRAT_ACC_KEEP, 0,
            "strat_acc: replace must be EVICT or KEEP (0..1)"),
    HWP__FDEF(hwp_strat_acc_desc, "strat_acc", min_samples, 30)};

HWP__FIELDS_FN(hwp_strat_acc_desc_fields, hwp__strat_acc_desc_f)

static const char *hwp__strat_acc_fill(hwp_strat_acc_desc *o,
                                       const hwp_strat_acc_desc *d) {
    const char *why = hwp__field_fill_from(o, d, sizeof *o, hwp__strat_acc_desc_f,
                                           HWP__N(hwp__strat_acc_desc_f));
    if (!o->pcs) o->pcs = o->tuples / 4u ? o->tuples / 4u : 1u;
    return why;
}

static size_t hwp__strat_acc_need(const hwp_strat_acc_desc *o) {
    return hwp__align(sizeof(hwp__strat_tslot) * hwp__strat_slots(o->tuples)) +
           hwp__align(sizeof(hwp__strat_pslot) * hwp__strat_slots(o->pcs)) +
           2u * hwp__align(sizeof(uint64_t) * o->strata);
}

HWP_API size_t hwp_strat_acc_bytes(const hwp_strat_acc_desc *d) {
    hwp_strat_acc_desc o;
    if (hwp__strat_acc_fill(&o, d)) return 0;
    return hwp__bytes(hwp__strat_acc_need(&o));
}

HWP_API hwp_status hwp_strat_acc_init(hwp_strat_acc *a, void *storage,
                                      size_t bytes, const hwp_strat_acc_desc *d,
                                      hwp_cost *cost) {
    hwp_strat_acc_desc o;
    const char *why;
    unsigned char *cur;
    hwp_status st;
    (void)cost;
    if (!a) return HWP_EINVAL;
    hwp__zero(a, sizeof *a);
    a->head.magic = HWP__STRAT_ACC_MAGIC;
    why = hwp__strat_acc_fill(&o, d);
    st = hwp__admit(&a->head, why, &storage, &bytes,
                        why ? 0 : hwp__strat_acc_need(&o));
    if (st != HWP_OK) return st;
    cur = (unsigned char *)storage;
    a->d = o;
    a->tmask = hwp__strat_slots(o.tuples) - 1u;
    a->pmask = hwp__strat_slots(o.pcs) - 1u;
    a->t = (hwp__strat_tslot *)hwp__carve(&cur, sizeof(hwp__strat_tslot) * (a->tmask + 1u));
    a->p = (hwp__strat_pslot *)hwp__carve(&cur, sizeof(hwp__strat_pslot) * (a->pmask + 1u));
    if (o.strata) {
        a->slen = (uint64_t *)hwp__carve(&cur, sizeof(uint64_t) * o.strata);
        a->snum = (uint64_t *)hwp__carve(&cur, sizeof(uint64_t) * o.strata);
    }
    return hwp_strat_acc_reset(a);
}

static uint32_t hwp__strat_thash(uint32_t kind, uint64_t pc, uint64_t w) {
    return (uint32_t)(hwp_mix64(hwp_mix64(pc ^ ((uint64_t)kind << 56)) ^ w) >> 32);
}

static uint32_t hwp__strat_phash(uint32_t kind, uint64_t pc) {
    return (uint32_t)(hwp_mix64(pc ^ ((uint64_t)kind << 56)) >> 32);
}

/* Slot of the tuple, or of the free slot where it would go. */
static hwp__strat_tslot *hwp__strat_tfind(const hwp_strat_acc *a, uint32_t kind,
                                          uint64_t pc, uint64_t w) {
    uint32_t i = hwp__strat_thash(kind, pc, w) & a->tmask;
    for (;; i = (i + 1u) & a->tmask) {
        hwp__strat_tslot *t = a->t + i;
        if (!t->used || (t->pc == pc && t->w == w && t->kind == kind)) return t;
    }
}

static hwp__strat_pslot *hwp__strat_pfind(const hwp_strat_acc *a, uint32_t kind,
                                          uint64_t pc) {
    uint32_t i = hwp__strat_phash(kind, pc) & a->pmask;
    for (;; i = (i + 1u) & a->pmask) {
        hwp__strat_pslot *p = a->p + i;
        if (!p->used || (p->pc == pc && p->kind == kind)) return p;
    }
}

/* The (kind, pc) entry, made when there is room; NULL otherwise. */
static hwp__strat_pslot *hwp__strat_pget(hwp_strat_acc *a, uint32_t kind,
                                         uint64_t pc) {
    hwp__strat_pslot *p = hwp__strat_pfind(a, kind, pc);
    if (!p->used) {
        if (a->st.pcs >= a->d.pcs) return NULL;
        p->used = 1;
        p->pc = pc;
        p->kind = kind;
        a->st.pcs++;
    }
    return p;
}

/* Remove slot i of the tuple table, shifting later members of its
 * probe run back so that every lookup still finds them. */
static void hwp__strat_tdel(hwp_strat_acc *a, uint32_t i) {
    uint32_t j = i;
    for (;;) {
        uint32_t h;
        j = (j + 1u) & a->tmask;
        if (!a->t[j].used) break;
        h = hwp__strat_thash(a->t[j].kind, a->t[j].pc, a->t[j].w) & a->tmask;
        /* j may move to i when its home h is not in (i, j] cyclically */
        if (((j - h) & a->tmask) >= ((j - i) & a->tmask)) {
            a->t[i] = a->t[j];
            i = j;
        }
    }
    hwp__zero(a->t + i, sizeof a->t[i]);
}

/* A full table meets a new tuple of `count` events: under EVICT, the
 * smallest count among the 8 slots from the newcomer's home leaves if
 * it is at most `count` (its events count as dropped and as its pc's
 * lost, its pc loses the top when it was the top). Returns whether room
 * was made. */
static bool hwp__strat_evict(hwp_strat_acc *a, uint32_t kind, uint64_t pc,
                             uint64_t w, uint64_t count) {
    uint32_t i = hwp__strat_thash(kind, pc, w) & a->tmask, k, v = i;
    hwp__strat_pslot *p;
    if (a->d.replace != HWP_STRAT_ACC_EVICT) return false;
    for (k = 0; k < 8; k++) {
        uint32_t j = (i + k) & a->tmask;
        if (a->t[j].used && (!a->t[v].used || a->t[j].count < a->t[v].count)) v = j;
    }
    if (!a->t[v].used || a->t[v].count > count) return false;
    p = hwp__strat_pfind(a, a->t[v].kind, a->t[v].pc);
    if (p->used && p->top_w == a->t[v].w) p->top_count = 0; /* stale: the next fold sets it */
    if (p->used) p->lost = hwp_sat_add64(p->lost, a->t[v].count);
    a->st.evicted++;
    a->st.dropped_count = hwp_sat_add64(a->st.dropped_count, a->t[v].count);
    a->st.tuples--;
    hwp__strat_tdel(a, v);
    return true;
}

/* Fold one (tuple, count, samples) into the tables; the tuple keeps the
 * stratum of its latest message. p: the pc's entry or NULL. */
static void hwp__strat_tadd(hwp_strat_acc *a, const hwp_strat_msg *m,
                            uint64_t samples, hwp__strat_pslot *p) {
    hwp__strat_tslot *t = hwp__strat_tfind(a, m->kind, m->pc, m->w);
    if (!t->used && a->st.tuples >= a->d.tuples) {
        if (!hwp__strat_evict(a, m->kind, m->pc, m->w, m->count)) {
            a->st.dropped++;
            a->st.dropped_count = hwp_sat_add64(a->st.dropped_count, m->count);
            if (p) p->lost = hwp_sat_add64(p->lost, m->count);
            return;
        }
        t = hwp__strat_tfind(a, m->kind, m->pc, m->w);
    }
    if (!t->used) {
        t->used = 1;
        t->pc = m->pc;
        t->w = m->w;
        t->kind = m->kind;
        a->st.tuples++;
    }
    t->count = hwp_sat_add64(t->count, m->count);
    t->samples += samples;
    t->stratum = m->stratum;
    if (p && (t->count > p->top_count || p->top_w == t->w)) {
        p->top_w = t->w;
        p->top_count = t->count;
    }
}

/* One message: (kind, pc), tuple and stratum tables. */
static void hwp__strat_put(hwp_strat_acc *a, const hwp_strat_msg *m) {
    uint64_t k = m->samples ? m->samples : 1u;
    hwp__strat_pslot *p = hwp__strat_pget(a, m->kind, m->pc);
    a->st.events++;
    a->st.total = hwp_sat_add64(a->st.total, m->count);
    if (p) {
        p->count = hwp_sat_add64(p->count, m->count);
        p->samples += k;
    } else {
        a->st.dropped_pc_count = hwp_sat_add64(a->st.dropped_pc_count, m->count);
    }
    hwp__strat_tadd(a, m, k, p);
    if (m->stratum < a->d.strata) {
        a->slen[m->stratum] = hwp_sat_add64(a->slen[m->stratum], m->count);
        a->snum[m->stratum] += k;
    }
}

#define HWP__STRAT_ACC_OK(a) ((a) && (a)->head.magic == HWP__STRAT_ACC_MAGIC)

/* A (tuple, count) from no compressor: one sample in stratum 0. */
HWP_API void hwp_strat_acc_add(hwp_strat_acc *a, uint32_t kind, uint64_t pc,
                               uint64_t w, uint64_t count) {
    hwp_strat_msg m;
    if (!HWP__STRAT_ACC_OK(a)) return;
    m.pc = pc;
    m.w = w;
    m.count = count;
    m.kind = kind;
    m.stratum = 0;
    m.samples = 1;
    m.reserved = 0;
    hwp__strat_put(a, &m);
}

HWP_API void hwp_strat_acc_fold(hwp_strat_acc *a, const hwp_strat_msg *msgs,
                                uint32_t n) {
    uint32_t i;
    if (!HWP__STRAT_ACC_OK(a)) return;
    for (i = 0; i < n; i++) hwp__strat_put(a, msgs + i);
}

HWP_API void hwp_strat_acc_handler(void *acc, const hwp_strat_msg *msgs,
                                   uint32_t n) {
    hwp_strat_acc_fold((hwp_strat_acc *)acc, msgs, n);
}

HWP_API uint64_t hwp_strat_acc_count(const hwp_strat_acc *a, uint32_t kind,
                                     uint64_t pc, uint64_t w) {
    const hwp__strat_tslot *t;
    if (!HWP__STRAT_ACC_OK(a)) return 0;
    t = hwp__strat_tfind(a, kind, pc, w);
    return t->used ? t->count : 0;
}

HWP_API uint64_t hwp_strat_acc_pc_count(const hwp_strat_acc *a, uint32_t kind,
                                        uint64_t pc) {
    const hwp__strat_pslot *p;
    if (!HWP__STRAT_ACC_OK(a)) return 0;
    p = hwp__strat_pfind(a, kind, pc);
    return p->used ? p->count : 0;
}

HWP_API double hwp_strat_acc_invariance(const hwp_strat_acc *a, uint32_t kind,
                                        uint64_t pc, uint64_t w) {
    uint64_t n = hwp_strat_acc_pc_count(a, kind, pc);
    return n ? (double)hwp_strat_acc_count(a, kind, pc, w) / (double)n : 0.0;
}

static double hwp__strat_test(const hwp_strat_acc *a, const hwp__strat_tslot *t) {
    if (t->stratum < a->d.strata && a->snum[t->stratum])
        return (double)t->samples * (double)a->slen[t->stratum] /
               (double)a->snum[t->stratum];
    return (double)t->count;
}

HWP_API double hwp_strat_acc_estimate(const hwp_strat_acc *a, uint32_t kind,
                                      uint64_t pc, uint64_t w) {
    const hwp__strat_tslot *t;
    if (!HWP__STRAT_ACC_OK(a)) return 0.0;
    t = hwp__strat_tfind(a, kind, pc, w);
    return t->used ? hwp__strat_test(a, t) : 0.0;
}

/* Square root by Newton's method (no libm in a freestanding header). */
static double hwp__strat_sqrt(double x) {
    double r = x > 1.0 ? x : 1.0;
    int i;
    if (!(x > 0.0)) return 0.0;
    for (i = 0; i < 64; i++) {
        double n = 0.5 * (r + x / r);
        if (n >= r) break;
        r = n;
    }
    return r;
}

/* Wilson's 95% interval for a share p of n samples; [0, 1] below the
 * minimum sample count. */
static void hwp__strat_wilson(const hwp_strat_acc *a, double p, uint64_t n,
                              double *lo, double *hi) {
    const double z = 1.959963984540054, z2 = z * z;
    double nn = (double)n, c, h;
    if (n < a->d.min_samples || n == 0) {
        *lo = 0.0;
        *hi = 1.0;
        return;
    }
    c = (p + z2 / (2.0 * nn)) / (1.0 + z2 / nn);
    h = z * hwp__strat_sqrt(p * (1.0 - p) / nn + z2 / (4.0 * nn * nn)) / (1.0 + z2 / nn);
    *lo = c - h > 0.0 ? c - h : 0.0;
    *hi = c + h < 1.0 ? c + h : 1.0;
}

/* The interval of a held count's share of its pc: Wilson's lower end at
 * the count, its upper end at the count plus the pc's lost counts (a
 * tuple evicted and added again restarts from zero, so what is held is
 * a floor). */
static void hwp__strat_share(const hwp_strat_acc *a, const hwp__strat_pslot *p,
                             uint64_t count, double *share, double *lo, double *hi) {
    double n = p->used && p->count ? (double)p->count : 0.0, up, unused;
    *share = n > 0.0 ? (double)count / n : 0.0;
    up = n > 0.0 ? ((double)count + (double)p->lost) / n : 0.0;
    hwp__strat_wilson(a, *share, p->used ? p->samples : 0, lo, &unused);
    hwp__strat_wilson(a, up < 1.0 ? up : 1.0, p->used ? p->samples : 0, &unused, hi);
}

/* Place x into the first `*n` items of a list ordered by before(),
 * keeping at most cap items. */
#define HWP__STRAT_RANK(out, n, cap, x, before)                               \
    do {                                                                      \
        size_t at_ = *(n) < (cap) ? *(n) : (cap);                             \
        if (at_ == (cap) && (at_ == 0 || !before(&(x), &(out)[at_ - 1])))     \
            break;                                                            \
        if (at_ == (cap)) at_--;                                              \
        else (*(n))++;                                                        \
        while (at_ > 0 && before(&(x), &(out)[at_ - 1])) {                    \
            (out)[at_] = (out)[at_ - 1];                                      \
            at_--;                                                            \
        }                                                                     \
        (out)[at_] = (x);                                                     \
    } while (0)

static bool hwp__strat_vbefore(const hwp_strat_value *x, const hwp_strat_value *y) {
    return x->count > y->count || (x->count == y->count && x->w < y->w);
}

static bool hwp__strat_pbefore(const hwp_strat_pc *x, const hwp_strat_pc *y) {
    if (x->invariance != y->invariance) return x->invariance > y->invariance;
    if (x->count != y->count) return x->count > y->count;
    return x->pc < y->pc;
}

HWP_API size_t hwp_strat_acc_top_values(const hwp_strat_acc *a, uint32_t kind,
                                        uint64_t pc, hwp_strat_value *out,
                                        size_t cap) {
    const hwp__strat_pslot *p;
    size_t avail = 0, held = 0;
    uint32_t i;
    if (!HWP__STRAT_ACC_OK(a) || (cap && !out)) return 0;
    p = hwp__strat_pfind(a, kind, pc);
    for (i = 0; i <= a->tmask; i++) {
        const hwp__strat_tslot *t = a->t + i;
        hwp_strat_value v;
        if (!t->used || t->kind != kind || t->pc != pc) continue;
        avail++;
        if (!cap) continue;
        v.w = t->w;
        v.count = t->count;
        v.samples = t->samples;
        v.estimate = hwp__strat_test(a, t);
        hwp__strat_share(a, p, t->count, &v.invariance, &v.lo, &v.hi);
        HWP__STRAT_RANK(out, &held, cap, v, hwp__strat_vbefore);
    }
    return avail;
}

HWP_API size_t hwp_strat_acc_top_pcs(const hwp_strat_acc *a, uint32_t kind,
                                     hwp_strat_pc *out, size_t cap) {
    size_t avail = 0, held = 0;
    uint32_t i;
    if (!HWP__STRAT_ACC_OK(a) || (cap && !out)) return 0;
    for (i = 0; i <= a->pmask; i++) {
        const hwp__strat_pslot *p = a->p + i;
        hwp_strat_pc x;
        if (!p->used || p->kind != kind || !p->count || p->samples < a->d.min_samples)
            continue;
        avail++;
        if (!cap) continue;
        x.pc = p->pc;
        x.kind = kind;
        x.pad = 0;
        x.count = p->count;
        x.samples = p->samples;
        x.top_w = p->top_w;
        hwp__strat_share(a, p, p->top_count, &x.invariance, &x.lo, &x.hi);
        HWP__STRAT_RANK(out, &held, cap, x, hwp__strat_pbefore);
    }
    return avail;
}

/* Iteration and reports go round each table once, starting after a free
 * slot: re-inserting in that order rebuilds the same table (each entry's
 * probe run is already in place when it comes), so a report read back
 * writes out byte-identical. */
static uint32_t hwp__strat_start(const void *tab, size_t size, uint32_t mask) {
    uint32_t i;
    for (i = 0; i <= mask; i++) {
        const unsigned char *e = (const unsigned char *)tab + (size_t)i * size;
        uint32_t used = size == sizeof(hwp__strat_tslot)
                            ? ((const hwp__strat_tslot *)(const void *)e)->used
                            : ((const hwp__strat_pslot *)(const void *)e)->used;
        if (!used) return (i + 1u) & mask;
    }
    return 0; /* unreachable: slots are at least twice the limit */
}

HWP_API bool hwp_strat_acc_next(const hwp_strat_acc *a, uint32_t *cursor,
                                hwp_strat_msg *out) {
    uint32_t start;
    if (!HWP__STRAT_ACC_OK(a) || !cursor || !out) return false;
    start = hwp__strat_start(a->t, sizeof *a->t, a->tmask);
    for (; *cursor <= a->tmask; (*cursor)++) {
        const hwp__strat_tslot *t = a->t + ((start + *cursor) & a->tmask);
        if (!t->used) continue;
        out->pc = t->pc;
        out->w = t->w;
        out->count = t->count;
        out->kind = t->kind;
        out->stratum = t->stratum;
        out->samples = t->samples > 0xFFFFFFFFu ? 0xFFFFFFFFu : (uint32_t)t->samples;
        out->reserved = 0;
        (*cursor)++;
        return true;
    }
    return false;
}

static const hwp_field hwp__strat_acc_stats_f[] = {
    HWP__FS_HEAD(hwp_strat_acc_stats),
    HWP__FS(hwp_strat_acc_stats, total), HWP__FS(hwp_strat_acc_stats, dropped_count),
    HWP__FS(hwp_strat_acc_stats, dropped_pc_count), HWP__FS(hwp_strat_acc_stats, tuples),
    HWP__FS(hwp_strat_acc_stats, pcs)};

/* The profile's entries: keys and values as hex, counts as numbers. */
#define HWP__STRAT_X(T, f) HWP__FN(T, "strat_acc", f, HEX, 0, 0, ~(uint64_t)0, 0, NULL)
static const hwp_field hwp__strat_tslot_f[] = {
    HWP__FS(hwp__strat_tslot, kind), HWP__STRAT_X(hwp__strat_tslot, pc),
    HWP__STRAT_X(hwp__strat_tslot, w), HWP__FS(hwp__strat_tslot, count),
    HWP__FS(hwp__strat_tslot, samples), HWP__FS(hwp__strat_tslot, stratum)};

static const hwp_field hwp__strat_pslot_f[] = {
    HWP__FS(hwp__strat_pslot, kind), HWP__STRAT_X(hwp__strat_pslot, pc),
    HWP__FS(hwp__strat_pslot, count), HWP__FS(hwp__strat_pslot, samples),
    HWP__STRAT_X(hwp__strat_pslot, top_w), HWP__FS(hwp__strat_pslot, top_count),
    HWP__FS(hwp__strat_pslot, lost)};
#undef HWP__STRAT_X

/* Folds src's pcs, then its tuples (so the tops follow), then strata. */
HWP_API hwp_status hwp_strat_acc_merge(hwp_strat_acc *dst,
                                       const hwp_strat_acc *src) {
    const hwp_field *f;
    uint64_t moved = 0; /* src's dropped pc events now in dst's pc entries */
    uint32_t i;
    if (!HWP__STRAT_ACC_OK(dst) || !HWP__STRAT_ACC_OK(src) || dst == src)
        return HWP_EINVAL;
    f = hwp__field_diff(&dst->d, &src->d, hwp__strat_acc_desc_f, HWP__N(hwp__strat_acc_desc_f));
    if (f) return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    for (i = 0; i <= src->pmask; i++) {
        const hwp__strat_pslot *q = src->p + i;
        hwp__strat_pslot *p;
        if (!q->used) continue;
        p = hwp__strat_pget(dst, q->kind, q->pc);
        if (p) {
            p->count = hwp_sat_add64(p->count, q->count);
            p->samples += q->samples;
            p->lost = hwp_sat_add64(p->lost, q->lost);
        } else {
            dst->st.dropped_pc_count = hwp_sat_add64(dst->st.dropped_pc_count, q->count);
        }
    }
    for (i = 0; i <= src->tmask; i++) {
        const hwp__strat_tslot *t = src->t + i;
        hwp_strat_msg m;
        hwp__strat_pslot *p;
        if (!t->used) continue;
        m.pc = t->pc;
        m.w = t->w;
        m.count = t->count;
        m.kind = t->kind;
        m.stratum = t->stratum;
        p = hwp__strat_pfind(dst, t->kind, t->pc);
        if (p->used && !hwp__strat_pfind(src, t->kind, t->pc)->used) {
            /* src counted this tuple while its pc table was full, so its
             * events are in src's dropped_pc_count, not in a pc entry;
             * dst holds the pc, which takes them, or the tuple would
             * count more events than its pc (an invariance above 1) */
            p->count = hwp_sat_add64(p->count, t->count);
            p->samples += t->samples;
            moved = hwp_sat_add64(moved, t->count);
        }
        hwp__strat_tadd(dst, &m, t->samples, p->used ? p : NULL);
    }
    for (i = 0; i < src->d.strata; i++) {
        dst->slen[i] = hwp_sat_add64(dst->slen[i], src->slen[i]);
        dst->snum[i] += src->snum[i];
    }
    dst->st.events += src->st.events;
    dst->st.dropped += src->st.dropped;
    dst->st.evicted += src->st.evicted;
    dst->st.total = hwp_sat_add64(dst->st.total, src->st.total);
    dst->st.dropped_count = hwp_sat_add64(dst->st.dropped_count, src->st.dropped_count);
    dst->st.dropped_pc_count =
        hwp_sat_add64(dst->st.dropped_pc_count, src->st.dropped_pc_count > moved
                                                    ? src->st.dropped_pc_count - moved
                                                    : 0);
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API hwp_status hwp_strat_acc_reset(hwp_strat_acc *a) {
    if (!HWP__STRAT_ACC_OK(a)) return HWP_EINVAL;
    hwp__zero(a->t, sizeof(hwp__strat_tslot) * (a->tmask + 1u));
    hwp__zero(a->p, sizeof(hwp__strat_pslot) * (a->pmask + 1u));
    if (a->d.strata) {
        hwp__zero(a->slen, sizeof(uint64_t) * a->d.strata);
        hwp__zero(a->snum, sizeof(uint64_t) * a->d.strata);
    }
    hwp__zero(&a->st, sizeof a->st);
    return hwp__fail(&a->head, HWP_OK, "");
}

HWP_API hwp_status hwp_strat_acc_flush(hwp_strat_acc *a) {
    return HWP__STRAT_ACC_OK(a) ? HWP_OK : HWP_EINVAL;
}

HWP_API hwp_status hwp_strat_acc_get_stats(const hwp_strat_acc *a,
                                           hwp_strat_acc_stats *out) {
    if (!HWP__STRAT_ACC_OK(a) || !out) return HWP_EINVAL;
    *out = a->st;
    return HWP_OK;
}

HWP__GET_DESC_FN(strat_acc, d, HWP__STRAT_ACC_OK(x))

HWP_API void hwp_strat_acc_write_text(const hwp_strat_acc *a,
                                      const hwp_writer *w) {
    uint32_t cur = 0;
    hwp_strat_msg m;
    if (!HWP__STRAT_ACC_OK(a)) return;
    hwp__strat_lu(w, "profile: ", a->st.tuples);
    hwp__strat_lu(w, " tuples, ", a->st.total);
    hwp__strat_lu(w, " events from ", a->st.events);
    hwp__strat_lu(w, " messages, ", a->st.dropped);
    hwp__strat_lu(w, " messages dropped, ", a->st.evicted);
    hwp_put_str(w, " tuples evicted\n");
    while (hwp_strat_acc_next(a, &cur, &m)) {
        hwp__strat_lu(w, "  kind ", m.kind);
        hwp__put_str_hex(w, " pc ", m.pc);
        hwp__put_str_hex(w, " w ", m.w);
        hwp__strat_lu(w, " count ", m.count);
        hwp__put_str_f64(w, " invariance ", hwp_strat_acc_invariance(a, m.kind, m.pc, m.w), 4);
        hwp_put_str(w, "\n");
    }
}

/* Every used entry of a table, from after a free slot round. */
static void hwp__strat_put_table(const hwp_writer *w, const void *tab, size_t size,
                                 uint32_t mask, const hwp_field *f,
                                 size_t nf) {
    uint32_t start = hwp__strat_start(tab, size, mask), k;
    bool first = true;
    hwp_put_str(w, "[");
    for (k = 0; k <= mask; k++) {
        const unsigned char *e =
            (const unsigned char *)tab + (size_t)((start + k) & mask) * size;
        uint32_t used = size == sizeof(hwp__strat_tslot)
                            ? ((const hwp__strat_tslot *)(const void *)e)->used
                            : ((const hwp__strat_pslot *)(const void *)e)->used;
        if (!used) continue;
        if (!first) hwp_put_str(w, ",");
        first = false;
        hwp__field_obj_put(w, e, f, nf);
    }
    hwp_put_str(w, "]");
}

HWP_API void hwp_strat_acc_write_json(const hwp_strat_acc *a,
                                      const hwp_writer *w) {
    uint32_t i;
    if (!HWP__STRAT_ACC_OK(a)) {
        hwp_put_str(w, "null");
        return;
    }
    hwp_put_json_envelope(w, "strat_acc", 1);
    hwp__field_put(w, "desc", &a->d, hwp__strat_acc_desc_f, HWP__N(hwp__strat_acc_desc_f));
    hwp__field_put(w, "stats", &a->st, hwp__strat_acc_stats_f,
                   HWP__N(hwp__strat_acc_stats_f));
    hwp_put_str(w, ",\"strata\":[");
    for (i = 0; i < a->d.strata; i++) {
        hwp_put_str(w, i ? ",[" : "[");
        hwp_put_u64(w, a->slen[i]);
        hwp_put_str_u64(w, ",", a->snum[i]);
        hwp_put_str(w, "]");
    }
    hwp_put_str(w, "],\"pc_profile\":");
    hwp__strat_put_table(w, a->p, sizeof *a->p, a->pmask, hwp__strat_pslot_f,
                         HWP__N(hwp__strat_pslot_f));
    hwp_put_str(w, ",\"profile\":");
    hwp__strat_put_table(w, a->t, sizeof *a->t, a->tmask, hwp__strat_tslot_f,
                         HWP__N(hwp__strat_tslot_f));
    hwp_put_str(w, "}");
}

/* The profile's members of a strat_acc report, into ctx's instance. */
typedef struct hwp__strat_acc_rd {
    hwp_strat_acc *a;
    const hwp_strat_acc_desc *d;
} hwp__strat_acc_rd;

static int hwp__strat_acc_member(hwp_json *j, const char *key, void *ctx) {
    hwp__strat_acc_rd *c = (hwp__strat_acc_rd *)ctx;
    hwp_strat_acc *a = c->a;
    if (hwp__field_diff(&a->d, c->d, hwp__strat_acc_desc_f, HWP__N(hwp__strat_acc_desc_f)))
        return -2; /* nothing may go into tables of another size */
    if (hwp_json_key_is(key, "strata")) {
        uint32_t i = 0;
        if (!hwp_json_array(j)) return -1;
        while (hwp_json_next(j)) {
            if (i >= a->d.strata)
                return hwp_json_fail(j, "strat_acc: more strata than desc.strata"), -1;
            if (!hwp_json_array(j) || !hwp_json_next(j) || !hwp_json_u64(j, a->slen + i) ||
                !hwp_json_next(j) || !hwp_json_u64(j, a->snum + i))
                return -1;
            if (hwp_json_next(j))
                return hwp_json_fail(j, "strat_acc: a stratum is [length, samples]"), -1;
            i++;
        }
        if (j->why) return -1;
        if (i != a->d.strata)
            return hwp_json_fail(j, "strat_acc: fewer strata than desc.strata"), -1;
        return 1;
    }
    if (hwp_json_key_is(key, "pc_profile")) {
        if (!hwp_json_array(j)) return -1;
        while (hwp_json_next(j)) {
            hwp__strat_pslot e, *p;
            hwp__zero(&e, sizeof e);
            if (!hwp__field_read(j, &e, hwp__strat_pslot_f, HWP__N(hwp__strat_pslot_f),
                                 true))
                return -1;
            p = hwp__strat_pfind(a, e.kind, e.pc);
            if (p->used || a->st.pcs >= a->d.pcs)
                return hwp_json_fail(j, "strat_acc: pc repeated or over desc.pcs"), -1;
            e.used = 1;
            *p = e;
            a->st.pcs++;
        }
        return j->why ? -1 : 1;
    }
    if (hwp_json_key_is(key, "profile")) {
        if (!hwp_json_array(j)) return -1;
        while (hwp_json_next(j)) {
            hwp__strat_tslot e, *t;
            hwp__zero(&e, sizeof e);
            if (!hwp__field_read(j, &e, hwp__strat_tslot_f, HWP__N(hwp__strat_tslot_f),
                                 true))
                return -1;
            t = hwp__strat_tfind(a, e.kind, e.pc, e.w);
            if (t->used || a->st.tuples >= a->d.tuples)
                return hwp_json_fail(j, "strat_acc: tuple repeated or over desc.tuples"), -1;
            e.used = 1;
            *t = e;
            a->st.tuples++;
        }
        return j->why ? -1 : 1;
    }
    return 0;
}

/* The envelope, the desc and the profile, into a. */
static bool hwp__strat_acc_read(hwp_json *j, hwp_strat_acc_desc *d,
                                hwp_strat_acc *a, hwp_strat_acc_stats *st) {
    hwp__strat_acc_rd c;
    c.a = a;
    c.d = d;
    hwp__zero(d, sizeof *d);
    if (!hwp__strat_read_report(j, "strat_acc", d, hwp__strat_acc_desc_f,
                                HWP__N(hwp__strat_acc_desc_f), st,
                                hwp__strat_acc_stats_f, HWP__N(hwp__strat_acc_stats_f),
                                hwp__strat_acc_member, &c))
        return false;
    if (hwp__field_diff(&a->d, d, hwp__strat_acc_desc_f, HWP__N(hwp__strat_acc_desc_f)))
        return false; /* the caller names the field */
    if (st->tuples != a->st.tuples || st->pcs != a->st.pcs)
        return hwp_json_fail(j, "strat_acc: stats.tuples or stats.pcs disagree with the profile");
    return true;
}

HWP_API hwp_status hwp_strat_acc_read_desc(hwp_strat_acc_desc *d,
                                           const char *json, size_t n,
                                           hwp_json_err *err) {
    return hwp__strat_read_desc(d, sizeof *d, "strat_acc", hwp__strat_acc_desc_f,
                                HWP__N(hwp__strat_acc_desc_f), json, n, err);
}

HWP_API hwp_status hwp_strat_acc_read_json(hwp_strat_acc *a, const char *json,
                                           size_t n, hwp_json_err *err) {
    hwp_json j;
    hwp_strat_acc_desc d;
    hwp_strat_acc_stats st;
    hwp_status r;
    const hwp_field *f;
    if (!HWP__STRAT_ACC_OK(a)) return HWP_EINVAL;
    hwp_strat_acc_reset(a);
    hwp__zero(&st, sizeof st);
    hwp_json_init(&j, json, n);
    if (!hwp__strat_acc_read(&j, &d, a, &st) && !j.why) {
        f = hwp__field_diff(&a->d, &d, hwp__strat_acc_desc_f, HWP__N(hwp__strat_acc_desc_f));
        hwp_strat_acc_reset(a);
        return hwp__json_mismatch(&a->head, err, json, n,
                                  f ? f->why : "strat_acc: desc differs");
    }
    r = hwp_json_status(&j, err);
    if (r != HWP_OK) {
        hwp_strat_acc_reset(a);
        return hwp__fail(&a->head, r, j.why);
    }
    a->st = st;
    return hwp__fail(&a->head, HWP_OK, "");
}

/* Section 5.3.1. Selection is made on the ideal profile: (kind, pc) that
 * executed at least min_exec times, its tuples with invariance at least
 * min_inv, and only loads whose such tuples cover at least min_cover of
 * the executions. Error: sum over selected v of f(v)/f |I_i(v) - I_p(v)|
 * where f(v) is v's ideal count; I_p is 0 for a tuple the profile lacks. */
HWP_API hwp_status hwp_strat_invariance_error(hwp_strat_acc *ideal,
                                              const hwp_strat_acc *prof,
                                              const hwp_strat_metric_desc *md,
                                              hwp_strat_metric *out) {
    hwp_strat_metric_desc m;
    double sum = 0.0, weight = 0.0; /* counts may be near 2^64: sums in
                                       double, the reported weight
                                       saturates */
    uint32_t i, pass;
    if (!ideal || ideal->head.magic != HWP__STRAT_ACC_MAGIC || !out)
        return HWP_EINVAL;
    if (!prof || prof->head.magic != HWP__STRAT_ACC_MAGIC)
        return hwp__fail(&ideal->head, HWP_EINVAL,
                         "strat_acc metric: prof is not an accumulator");
    if (md) m = *md;
    else hwp__zero(&m, sizeof m);
    if (!m.min_exec) m.min_exec = 1000;
    if (m.min_inv == 0.0) m.min_inv = 0.10;
    if (m.min_cover == 0.0) m.min_cover = 0.40;
    if (!(m.min_inv > 0.0 && m.min_inv <= 1.0) ||
        !(m.min_cover > 0.0 && m.min_cover <= 1.0))
        return hwp__fail(&ideal->head, HWP_EINVAL,
                         "strat_acc metric: min_inv and min_cover must be in (0, 1]");
    hwp__zero(out, sizeof *out);
    for (i = 0; i <= ideal->pmask; i++) ideal->p[i].scratch = 0;
    /* pass 0 sums coverage per load; pass 1 weighs the selected tuples */
    for (pass = 0; pass < 2; pass++) {
        for (i = 0; i <= ideal->tmask; i++) {
            const hwp__strat_tslot *t = ideal->t + i;
            hwp__strat_pslot *p;
            double ii, ip;
            uint64_t np;
            if (!t->used) continue;
            p = hwp__strat_pfind(ideal, t->kind, t->pc);
            if (!p->used || p->count < m.min_exec ||
                (double)t->count < m.min_inv * (double)p->count)
                continue;
            if (pass == 0) {
                p->scratch = hwp_sat_add64(p->scratch, t->count);
                continue;
            }
            if ((double)p->scratch < m.min_cover * (double)p->count) continue;
            ii = (double)t->count / (double)p->count;
            np = hwp_strat_acc_pc_count(prof, t->kind, t->pc);
            ip = np ? (double)hwp_strat_acc_count(prof, t->kind, t->pc, t->w) / (double)np
                    : 0.0;
            sum += (double)t->count * (ii > ip ? ii - ip : ip - ii);
            weight += (double)t->count;
            out->tuples++;
            out->weight = hwp_sat_add64(out->weight, t->count);
        }
    }
    for (i = 0; i <= ideal->pmask; i++) {
        const hwp__strat_pslot *p = ideal->p + i;
        if (p->used && p->count >= m.min_exec &&
            (double)p->scratch >= m.min_cover * (double)p->count)
            out->loads++;
    }
    out->error_pct = weight > 0.0 ? 100.0 * sum / weight : 0.0;
    return hwp__fail(&ideal->head, HWP_OK, "");
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_IMPL */
