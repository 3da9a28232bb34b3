/* SPDX-License-Identifier: MIT */
/* hwprof/core.h: a parameterised processor core fed the host's stream.
 *
 * The other models observe a pipeline; hosts (interpreters, QEMU,
 * Valgrind) only retire instructions. This component turns the retired
 * stream into what a real core would report for each instruction: where
 * its fetch and its data access hit (L1I, L1D, L2, optional LLC, ITLB,
 * DTLB), whether its branch was predicted, ProfileMe's stage timestamps
 * (fetch, map, issue, ready to retire, retire) and event bits, and the
 * modelled cycle, which a host uses as its clock. The default machine is
 * ProfileMe's own, the Alpha 21264 (Dean et al., "ProfileMe: Hardware
 * Support for Instruction-Level Profiling on Out-of-Order Processors",
 * MICRO 1997, fig. 1; the figures are from Kessler, "The Alpha 21264
 * Microprocessor", IEEE Micro 1999, and Leibholz & Razdan, "The Alpha
 * 21264: A 500 MHz Out-of-Order Execution Microprocessor", CompCon 1997).
 * docs/core.md is the guide; every default below says where it comes from.
 *
 * WHAT IS MODELLED
 *   caches   set-associative, true LRU, write-allocate, non-inclusive (an
 *            L2 eviction does not remove the line from L1), no write-back
 *            traffic. An access that straddles two lines looks both up and
 *            counts one reference, missed if either line missed (the policy
 *            Valgrind's cachegrind documents); only the missing line goes
 *            on to the next level. Instruction fetch is one reference per
 *            instruction, of its length.
 *   TLBs     set-associative LRU over pages, the caches' true LRU found
 *            through an index rather than a walk (hwp__core_tlb); a miss
 *            adds the page-walk latency (no page-table accesses through
 *            the caches).
 *   branches conditional direction: the 21264's tournament predictor
 *            (local history -> 3-bit counters, global history -> 2-bit
 *            counters, a chooser indexed by global history), gshare, or
 *            gselect (history bits concatenated with PC bits: cachegrind's
 *            16K-counter table is gselect with 7 + 7 bits). Indirect jumps
 *            and calls: a tagless table of last targets indexed by the low
 *            PC bits. Returns: a return address stack (circular, overflow
 *            overwrites the oldest); with HWP_CORE_NO_RAS returns are
 *            taken as predicted and not counted (cachegrind assumes a
 *            perfect return predictor). Direct branch targets are taken
 *            as known at fetch.
 *   timing   fetch groups of fetch_width ending at a taken branch; an
 *            I-cache miss stalls fetch for the latency of the level that
 *            hit; map = fetch + 2 (21264: fetch, slot, map), bounded by
 *            the ROB (map waits for the retire of the instruction rob
 *            older) and the issue window (map waits for the issue of the
 *            instruction `window` older: a conservative in-order release
 *            of issue-queue entries); data ready when the last source
 *            register's result is (not before map); issue at the first
 *            cycle >= map + 1 and >= data ready with an issue slot free
 *            (issue_width per cycle; in order: also not before the
 *            previous issue); ready to retire = issue + latency (loads:
 *            the latency of the level that hit, plus the walk on a DTLB
 *            miss); retire in order, retire_width per cycle. After a
 *            mispredicted branch fetch resumes at max(branch fetch +
 *            mispredict, branch ready + 1). Only the committed path is
 *            modelled: no wrong-path fetch, so HWP_EV_ABORTED never
 *            appears and wrong-path cache pollution is absent.
 *   modes    HWP_CORE_TIMING (default): every instruction timed.
 *            HWP_CORE_CACHES: caches, TLBs and predictor only; the cycle
 *            is a first-order additive estimate: 1/issue_width per
 *            instruction plus each stall's latency (I-miss level latency,
 *            load latency beyond an L1 hit, walks, mispredict).
 *            HWP_CORE_SAMPLED: caches and predictor always, the additive
 *            clock outside windows, pipeline timing for the instructions
 *            a host asks for with hwp_core_window() (a ProfileMe
 *            selection and the window around it).
 *   wasted issue slots: for each timed instruction I, the issue slots
 *            available while I was in progress (fetch to ready, as in
 *            ProfileMe sec. 5.2.3: issue_width x (ready - fetch)) minus
 *            the instructions that issued in that interval (all retire:
 *            the committed path only). Exact, summed in the stats, and
 *            per instruction through hwp_core_done() once every
 *            instruction that could issue in the interval has been seen.
 *
 * API (hot paths inline, the rest with HWPROF_IMPL)
 *   hwp_core_bytes(desc), HWP_CORE_BYTES(...), HWP_CORE_BYTES_DEFAULT
 *   hwp_core_init(c, mem, n, desc, cost)  any alignment; cost may be NULL
 *                                  (given, its clock advances with the
 *                                  modelled cycle: hwp_cost_tick)
 *   hwp_core_insn(c, insn, out)    one retired instruction; out may be NULL
 *   hwp_core_insn_ex(c, insn, ops, out)  with length, access size, op
 *                                  class and registers (ops may be NULL)
 *   hwp_core_window(c, n)          sampled mode: time the next n
 *   hwp_core_block_bytes(n), HWP_CORE_BLOCK_BYTES(n)
 *   hwp_core_block_init(c, mem, bytes, pc, cls, ops, n)
 *                                  a basic block of n consecutive
 *                                  instructions (classes, ops with their
 *                                  lengths), translated once: the I-side
 *                                  steps its fetches take, its loads and
 *                                  stores; NULL when refused
 *   hwp_core_run(c, blk, exec, out)  one execution of it (its data
 *                                  addresses, where it went): the stats
 *                                  and clock of its instructions one by
 *                                  one, for one step per new line or page
 *   hwp_core_cycle(c)              the modelled clock
 *   hwp_core_done(c, out, cap)     finished records (wasted slots known)
 *   hwp_core_reset / flush / merge / get_stats
 *   hwp_core_write_text(c, w)      the stats a person reads first
 *   hwp_core_write_json / read_desc / read_json, hwp_core_desc_fields
 * The handle's members are private.
 */
#ifndef HWPROF_CORE_H
#define HWPROF_CORE_H

#include "base.h"
#include "cost.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { /* desc.mode */
    HWP_CORE_TIMING = 1,  /* every instruction through the pipeline  */
    HWP_CORE_CACHES = 2,  /* caches + predictor, additive clock      */
    HWP_CORE_SAMPLED = 3  /* caches + predictor, timing in windows   */
};
enum { /* desc.order */
    HWP_CORE_OOO = 1,     /* out of order issue, in-order retire      */
    HWP_CORE_INORDER = 2  /* in-order issue                           */
};
enum { /* desc.bp */
    HWP_CORE_TOURNAMENT = 1, /* 21264: local + global + chooser       */
    HWP_CORE_GSHARE = 2,     /* (pc ^ history) indexes 2-bit counters */
    HWP_CORE_GSELECT = 3     /* history bits above pc bits            */
};
enum { /* desc.flags */
    HWP_CORE_NO_RAS = 1u,  /* no return stack: returns count as predicted
                              and are not in the stats (cachegrind's
                              assumption of a perfect return predictor) */
    HWP_CORE_NO_TLB = 2u,  /* no ITLB/DTLB (caches only, as cachegrind) */
    HWP_CORE_FLAGS_ALL = 3u
};

/* Operation classes of hwp_core_ops.op; 0 = from the hwp_insn class. */
enum {
    HWP_CORE_OP_AUTO = 0,
    HWP_CORE_OP_INT,  /* lat_int  */
    HWP_CORE_OP_MUL,  /* lat_mul  */
    HWP_CORE_OP_DIV,  /* lat_div  */
    HWP_CORE_OP_FP,   /* lat_fp   */
    HWP_CORE_OP_FDIV, /* lat_fdiv */
    HWP_CORE_OP_COUNT
};

/* One cache or TLB. sets = ways = line = 0 takes the level's default
 * geometry; a partly given geometry must be complete (ways 0 is then an
 * error). latency 0 takes the level's default. For a TLB, `line` is the
 * page size and `latency` is unused (desc.walk is). `latency` is the
 * whole load-to-use time from that level, not an addition to the
 * levels above it. */
typedef struct hwp_core_cache_desc {
    uint32_t sets;    /* power of two                                  */
    uint32_t ways;    /* >= 1                                          */
    uint32_t line;    /* bytes, power of two, 4 .. 2^20 (TLB: 2^30)    */
    uint32_t latency; /* load-to-use cycles on a hit at this level     */
} hwp_core_cache_desc;

/* Zero means the default for every field (21264 figures unless said). */
typedef struct hwp_core_desc {
    uint32_t mode;   /* HWP_CORE_*; 0 = HWP_CORE_TIMING                 */
    uint32_t order;  /* HWP_CORE_OOO (default) or HWP_CORE_INORDER      */
    uint32_t flags;  /* HWP_CORE_NO_RAS, HWP_CORE_NO_TLB; 0 = none      */
    hwp_core_cache_desc l1i; /* 512 x 2 x 64 B = 64 KB, latency 1       */
    hwp_core_cache_desc l1d; /* 512 x 2 x 64 B = 64 KB, latency 3       */
    hwp_core_cache_desc l2;  /* 32768 x 1 x 64 B = 2 MB direct mapped,
                                latency 12 (the 21264's board cache is
                                1-16 MB direct mapped; size and latency
                                our choice)                             */
    hwp_core_cache_desc llc; /* all zero = no LLC (the default); given:
                                latency 0 = 40 (our choice)             */
    hwp_core_cache_desc itlb; /* 1 x 128 ways, 8 KB pages (fully
                                 associative, 128 entries)              */
    hwp_core_cache_desc dtlb; /* 1 x 128 ways, 8 KB pages               */
    uint32_t memory;      /* cycles to memory after the last level: 80
                             (our choice, ~130 ns at 600 MHz)           */
    uint32_t walk;        /* TLB miss cycles: 30 (our choice; the 21264
                             refills in PALcode)                        */
    uint32_t bp;          /* HWP_CORE_TOURNAMENT (default), _GSHARE,
                             _GSELECT                                   */
    uint32_t bp_global;   /* global (gshare/gselect) 2-bit counters, and
                             the chooser's: 4096, power of two          */
    uint32_t bp_hist;     /* global history bits: 12 (tournament),
                             log2(bp_global) for gshare; gselect takes
                             log2(bp_global) - bp_hist pc bits          */
    uint32_t bp_local;    /* local histories and 3-bit counters: 1024,
                             power of two (tournament only)             */
    uint32_t bp_local_hist; /* local history bits: 10                   */
    uint32_t btb;         /* indirect target entries: 512, power of two
                             (our choice, cachegrind's size)            */
    uint32_t ras;         /* return address stack entries: 32 (ours)    */
    uint32_t mispredict;  /* minimum cycles from a mispredicted branch's
                             fetch to the correct path's fetch: 7       */
    uint32_t fetch_width; /* 4                                          */
    uint32_t issue_width; /* 4 (ProfileMe sec. 5.2.3: four sustainable) */
    uint32_t retire_width; /* 8 (our choice; the 21264 peaks at 11)     */
    uint32_t rob;         /* in-flight instructions: 80                 */
    uint32_t window;      /* issue queue entries, <= rob: 20 (the integer
                             queue)                                     */
    uint32_t lat_int;     /* 1                                          */
    uint32_t lat_mul;     /* 7                                          */
    uint32_t lat_div;     /* 20 (our choice; the 21264 has no integer
                             divide instruction)                        */
    uint32_t lat_fp;      /* 4                                          */
    uint32_t lat_fdiv;    /* 15 (double-precision divide, 21264)        */
    uint32_t horizon;     /* cycles an issue may lie ahead of fetch, the
                             size of the issue-slot ring: power of two,
                             0 = the smallest that holds rob x (largest
                             latency + mispredict)                       */
} hwp_core_desc;

/* The reports walk the desc as 48 uint32_t fields. */
HWP_STATIC_ASSERT(core_desc_words, sizeof(hwp_core_desc) == 48u * 4u);

/* The facts a richer host knows: hwp_core_insn_ex. Zero = unknown. */
typedef struct hwp_core_ops {
    uint8_t len;     /* instruction length in bytes                     */
    uint8_t size;    /* data access size in bytes (0: 1)                */
    uint8_t op;      /* HWP_CORE_OP_*                                   */
    uint8_t nsrc, ndst; /* registers used (0..3) and written (0..2)     */
    uint8_t src[3];  /* register numbers 1..255 (0 = none)              */
    uint8_t dst[2];
    uint8_t regs;    /* 1: the host supplies registers (even none)      */
    uint8_t upd;     /* bit i: dst[i] is an address update (pop's stack
                        pointer, a string op's pointers), ready lat_int
                        after issue, not when the load's data arrives  */
} hwp_core_ops;

/* What the core reports for one instruction. Stage cycles are valid when
 * `timed` is 1 (always in HWP_CORE_TIMING). */
typedef struct hwp_core_out {
    uint64_t fetch, map, issue, ready, retire;
    uint64_t data_ready; /* the last source register's result is ready,
                            never before map (ProfileMe's map -> data
                            ready stage); map without registers        */
    uint64_t cycle;   /* the modelled clock after this instruction      */
    uint32_t events;  /* HWP_EV_*: the host's TAKEN/TRAP/INDIRECT bits
                         plus ICMISS, DCMISS, ITLBMISS, DTLBMISS, MISPRED */
    uint8_t ilevel;   /* level the fetch hit: 1 L1, 2 L2, 3 LLC, 4 memory */
    uint8_t dlevel;   /* the same for the data access; 0 none           */
    uint8_t timed;
    uint8_t pad_;
} hwp_core_out;

/* A finished timed instruction: its wasted issue slots are known. */
typedef struct hwp_core_rec {
    uint64_t pc;
    uint64_t fetch, map, issue, ready, retire;
    uint64_t wasted;  /* issue_width x (ready - fetch) - issues in it   */
    uint32_t events;
    uint32_t pad_;
} hwp_core_rec;

typedef struct hwp_core_stats {
    uint64_t events;  /* instructions seen                              */
    uint64_t dropped; /* instructions with an unknown class (ignored)   */
    uint64_t evicted; /* valid lines and TLB entries replaced            */
    uint64_t cycles;  /* the modelled clock                              */
    uint64_t timed;   /* instructions through the pipeline model         */
    uint64_t no_regs; /* timed without registers (no dependences)        */
    /* caches: references and references that missed (cachegrind's
     * counting: a straddling reference counts once); l2/llc split by
     * the kind of reference that reached them: i(nstruction), r(ead),
     * w(rite). */
    uint64_t l1i_refs, l1i_misses;
    uint64_t l1d_reads, l1d_read_misses, l1d_writes, l1d_write_misses;
    uint64_t l2_irefs, l2_imisses, l2_rrefs, l2_rmisses, l2_wrefs, l2_wmisses;
    uint64_t llc_refs, llc_misses;
    uint64_t itlb_misses, dtlb_misses;
    /* branches */
    uint64_t cond, cond_mispredicts;
    uint64_t indirect, indirect_mispredicts; /* jumps, calls via a register */
    uint64_t returns, return_mispredicts;    /* through the RAS           */
    /* timing */
    uint64_t issue_slots;  /* issue_width x timed cycles                  */
    uint64_t wasted_slots; /* sum over finished timed instructions         */
    uint64_t finished;     /* timed instructions whose slots are summed    */
} hwp_core_stats;

/* One execution of a translated block (hwp_core_run): what only the run
 * knows. */
typedef struct hwp_core_exec {
    const uint64_t *addr; /* the data addresses of the block's loads and
                             stores, in order                          */
    uint64_t next_pc;     /* where the last instruction went: its target
                             or its fall-through                       */
    uint32_t events;      /* the last instruction's HWP_EV_TAKEN, _TRAP,
                             _INDIRECT (the others' are 0)             */
    uint32_t win_at;      /* sampled mode: hwp_core_window(c, win_n)
                             before the block's instruction win_at     */
    uint64_t win_n;       /* 0: no window opens in the block           */
} hwp_core_exec;

/* A step of a block's run, in the order the instructions one by one
 * would take it: a fetch that gets past the last-line filter (an ITLB
 * check, an L1I lookup, or both) or a load's or store's data access. */
typedef struct hwp__core_step {
    uint64_t pc;   /* fetch: the instruction's pc, its ITLB page         */
    uint64_t addr; /* fetch: where the L1I lookup starts                 */
    uint8_t kind;  /* 0 fetch, HWP_CLS_LOAD, HWP_CLS_STORE               */
    uint8_t itlb;  /* fetch: 1 to check the ITLB                         */
    uint8_t len;   /* fetch: the bytes looked up from addr, 0 none; load,
                      store: the access size                           */
    uint8_t pad_[5];
} hwp__core_step;

/* A basic block as the host translated it (hwp_core_block_init), for
 * cores of the desc it was made for. The members are private. */
typedef struct hwp_core_block {
    hwp__core_step head[2]; /* the first instruction's fetch: [0] after
                               another line, [1] in the line fetched
                               last (the last-line filter decides)    */
    const hwp__core_step *step; /* then the rest, nstep of them        */
    const hwp_core_ops *ops;    /* the instructions' facts, and        */
    const uint8_t *cls;         /* classes (copies, for hwp__core_each) */
    uint64_t pc, line;          /* the first instruction's pc, L1I line */
    uint64_t last_pc;
    uint32_t n, nstep;
    uint32_t frac;              /* n x frac_step: the issue, 1/256 cycles */
    uint32_t last_cls;
} hwp_core_block;

/* One cache at run time. */
typedef struct hwp__core_cache {
    uint64_t *tag;     /* sets x ways block numbers, MRU first          */
    uint64_t set_mask;
    uint32_t ways, shift, latency, pad_;
} hwp__core_cache;

/* One TLB at run time: the caches' true LRU without their walk. A TLB is
 * looked up at every page change, and hwp__core_ref would walk the
 * default's one 128-way set to the page each time; here an index finds
 * the page's entry, and each set's entries form a ring from its
 * MRU entry on (the LRU is the MRU's prev), so a hit relinks one entry
 * and a miss refills the LRU entry and turns the ring by one. The hits,
 * misses and victims are the walk's: empty entries (HWP__CORE_NONE) stay
 * behind the valid ones, since a hit moves only a valid entry to the
 * front and a miss takes the LRU end, so a set fills its empty entries
 * before it evicts. Entries never change sets. */
typedef struct hwp__core_tlb {
    uint64_t *tag;          /* sets x ways pages, set by set            */
    uint32_t *prev, *next;  /* per entry: its neighbours in its set's ring */
    uint32_t *index;        /* 2 x sets x ways buckets, linear probing:
                               an entry + 1 (0: empty)                  */
    uint32_t *mru;          /* per set: its MRU entry                   */
    uint64_t set_mask;
    uint32_t ways, shift, buckets, pad_;
} hwp__core_tlb;

typedef struct hwp_core {
    hwp_head head;
    hwp_core_desc desc; /* defaults filled in                          */
    hwp_cost *cost;
    hwp_core_stats st;
    hwp__core_cache l1i, l1d, l2, llc;
    hwp__core_tlb itlb, dtlb;
    uint32_t has_llc, has_tlb, ras_on, timing_all;
    uint64_t last_iline, last_ipage, last_dpage;
    uint64_t ibase, ifast;  /* fetches in [ibase, ibase + ifast) hit the
                               MRU line whatever their length (<= 15)   */
    uint64_t dbase, dline;  /* the MRU data line's address and size     */
    /* predictor */
    uint8_t *gctr, *chooser, *lctr;
    uint16_t *lhist;
    uint64_t *btb, *ras;
    uint64_t ghist, gmask, hmask, lmask, lhmask, btb_mask;
    uint32_t ras_top, ras_n, gsel_bits, pad0_;
    uint8_t *ras_fuzzy;    /* 1: pushed without the call's length     */
    uint64_t gsel_mask;
    /* pipeline */
    uint64_t *rob_ring;    /* retire cycle of the last rob instructions  */
    uint64_t *win_ring;    /* issue cycle of the last window ones        */
    uint8_t *slots;        /* issues per cycle, a ring of horizon cycles */
    uint32_t *cum;         /* issues before each closed cycle (mod 2^32) */
    hwp_core_rec *recs;    /* one ring of 2 x rec_cap: done_n finished
                              records from done_head (for hwp_core_done),
                              then pend_n whose wasted slots are not yet
                              known; finishing one moves no record     */
    uint32_t rob_i, win_i, pend_n, done_head, done_n;
    uint32_t rec_cap, hmask_slots;
    uint32_t fetch_n, map_n, retire_n, cum_total;
    uint64_t fetch_c, map_c, issue_c, issue_max, retire_c;
    uint64_t redirect;     /* earliest next fetch                        */
    uint64_t closed;       /* no issue can land below this cycle         */
    uint64_t clock;        /* the modelled cycle                         */
    uint32_t frac;         /* additive clock: 1/256 cycles               */
    uint32_t frac_step;    /* 256 / issue_width                          */
    uint64_t window_left;  /* sampled mode: instructions still to time   */
    uint64_t ready[256];   /* register ready cycles                      */
} hwp_core;

#define HWP__CORE_MAGIC HWP__MAGIC('c', 'o', 'r', 'e')

/* Storage, at compile time, from the desc's table sizes:
 *   tags     cache lines + TLB entries over all levels (sets x ways)
 *   tlb, tlb_sets  ITLB + DTLB entries, and their sets: each entry's two
 *            ring links and two index buckets, each set's MRU (uint32)
 *   counters predictor counters: bp_global (+ bp_global chooser and
 *            bp_local 3-bit counters for the tournament)
 *   local    bp_local for the tournament, else 0
 *   btb, ras, rob, window, horizon as in the desc (ras 0 with NO_RAS)
 * hwp_core_bytes(d) equals HWP_CORE_BYTES of the same figures. */
#define HWP__CORE_A(n) ((((size_t)(n)) + 15u) & ~(size_t)15u)
#define HWP_CORE_BYTES(tags, tlb, tlb_sets, counters, local, btb, ras, rob, \
                       window, horizon)                                      \
    (HWP__CORE_A((size_t)(tags) * 8u) +                                    \
     HWP__CORE_A(((size_t)(tlb) * 4u + (size_t)(tlb_sets)) * 4u) +         \
     HWP__CORE_A(counters) +                                               \
     HWP__CORE_A((size_t)(local) * 2u) + HWP__CORE_A((size_t)(btb) * 8u) + \
     HWP__CORE_A((size_t)(ras) * 9u) + HWP__CORE_A((size_t)(rob) * 8u) +   \
     HWP__CORE_A((size_t)(window) * 8u) + HWP__CORE_A(horizon) +           \
     HWP__CORE_A((size_t)(horizon) * 4u) +                                 \
     2u * HWP__CORE_A((size_t)((rob) + 64u) * sizeof(hwp_core_rec)) +      \
     (HWP__ALIGN - 1u))
/* The default desc: L1s 2 x 1024 lines, L2 32768, TLBs 2 x 128; 4096
 * global + 4096 chooser + 1024 local counters; horizon 32768. */
#define HWP_CORE_BYTES_DEFAULT \
    HWP_CORE_BYTES(1024u + 1024u + 32768u + 128u + 128u, 128u + 128u, 2u,    \
                   4096u + 4096u + 1024u, 1024u, 512u, 32u, 80u, 20u, 32768u)

/* A block of n instructions (1..HWP_CORE_BLOCK_MAX, so its issue share,
 * n x 256 / issue_width, fits 32 bits): the handle, at most two steps an
 * instruction, and the copies of its facts and classes. */
#define HWP_CORE_BLOCK_MAX 65535u
#define HWP_CORE_BLOCK_BYTES(n)                                              \
    (HWP__CORE_A(sizeof(hwp_core_block)) +                                   \
     HWP__CORE_A((size_t)(n) * 2u * sizeof(hwp__core_step)) +                \
     HWP__CORE_A((size_t)(n) * sizeof(hwp_core_ops)) + HWP__CORE_A(n) +      \
     (HWP__ALIGN - 1u))

/* The contract's calls (cost.h, HWP__CONTRACT); what hwp_core's do:
 *   write_text: instructions, cycles and IPC, then each cache's and
 *     predictor's references and misses: nothing for a bad handle, like every
 *     text report.
 *   desc_fields: the desc's fields (base.h's hwp_field); the cache levels' as
 *     "l1i.sets". */
HWP__CONTRACT(core);
HWP_API hwp_status hwp_core_flush(hwp_core *c);
HWP_API size_t hwp_core_done(hwp_core *c, hwp_core_rec *out, size_t cap);
HWP_API void hwp__core_timed(hwp_core *c, const hwp_insn *in,
                             const hwp_core_ops *ops, hwp_core_out *o,
                             uint32_t ilat, uint32_t dlat, uint32_t mis);
HWP_API void hwp__core_rebase(hwp_core *c);
HWP_API size_t hwp_core_block_bytes(uint32_t n);
HWP_API hwp_core_block *hwp_core_block_init(const hwp_core *c, void *mem, size_t bytes,
                                            uint64_t pc, const uint8_t *cls,
                                            const hwp_core_ops *ops, uint32_t n);
HWP_API uint32_t hwp__core_each(hwp_core *c, const hwp_core_block *b,
                                const hwp_core_exec *x, hwp_core_out *out);

/* ---- hot path ----------------------------------------------------------- */

#define HWP__CORE_NONE (~(uint64_t)0)

/* Inlined even where the compiler would rather call: the pipeline's
 * per-instruction steps, where a call's saves and restores cost as much
 * as the work (not in a coverage build, see base.h). */
#define HWP__CORE_HOT HWP__FORCE_INLINE

/* One reference to one block: true on a hit; the set is kept MRU first
 * (true LRU). A miss fills the block, counting a valid victim. */
HWP_INLINE bool hwp__core_ref(hwp__core_cache *k, uint64_t block,
                              uint64_t *evicted) {
    uint64_t *s = k->tag + (size_t)(block & k->set_mask) * k->ways;
    uint64_t prev = s[0];
    uint32_t i;
    if (prev == block) return true;
    for (i = 1; i < k->ways; i++) {
        uint64_t t = s[i];
        s[i] = prev;
        if (t == block) {
            s[0] = block;
            return true;
        }
        prev = t;
    }
    if (prev != HWP__CORE_NONE) (*evicted)++;
    s[0] = block;
    return false;
}

/* L2 (and LLC) for a block that missed in an L1; kind 0 i, 1 r, 2 w.
 * Returns the latency of the level that had it. */
HWP_INLINE uint32_t hwp__core_outer(hwp_core *c, uint64_t addr,
                                    unsigned kind, uint32_t *level) {
    uint64_t *refs = &c->st.l2_irefs + 2u * kind;
    refs[0]++;
    if (hwp__core_ref(&c->l2, addr >> c->l2.shift, &c->st.evicted)) {
        if (*level < 2) *level = 2;
        return c->l2.latency;
    }
    refs[1]++;
    if (c->has_llc) {
        c->st.llc_refs++;
        if (hwp__core_ref(&c->llc, addr >> c->llc.shift, &c->st.evicted)) {
            if (*level < 3) *level = 3;
            return c->llc.latency;
        }
        c->st.llc_misses++;
    }
    *level = 4;
    return c->desc.memory;
}

/* A reference of `size` bytes at addr through an L1 (and on). Returns its
 * latency (the slowest line), sets *level, counts one reference. */
HWP_INLINE uint32_t hwp__core_access(hwp_core *c, hwp__core_cache *l1,
                                     uint64_t addr, uint32_t size,
                                     unsigned kind, uint32_t *level) {
    uint64_t b1 = addr >> l1->shift;
    uint64_t b2 = (addr + (size ? size - 1u : 0u)) >> l1->shift;
    uint32_t lat = l1->latency, l;
    *level = 1;
    if (!hwp__core_ref(l1, b1, &c->st.evicted)) {
        l = hwp__core_outer(c, addr, kind, level);
        if (l > lat) lat = l;
    }
    if (HWP_UNLIKELY(b2 != b1)) {
        if (!hwp__core_ref(l1, b2, &c->st.evicted)) {
            l = hwp__core_outer(c, b2 << l1->shift, kind, level);
            if (l > lat) lat = l;
        }
    }
    return lat;
}

/* The page's first bucket: the high bits of a Fibonacci hash scaled to
 * the bucket count (2 x entries, not a power of two, so that
 * HWP_CORE_BYTES stays a sum of the desc's figures). */
HWP_INLINE uint32_t hwp__core_tlb_home(const hwp__core_tlb *t, uint64_t page) {
    uint64_t h = (page * 0x9E3779B97F4A7C15ull) >> 32;
    return (uint32_t)((h * t->buckets) >> 32);
}

HWP_INLINE uint32_t hwp__core_tlb_next(const hwp__core_tlb *t, uint32_t b) {
    return b + 1u == t->buckets ? 0u : b + 1u;
}

/* Probe steps from bucket a on to bucket b. */
HWP_INLINE uint32_t hwp__core_tlb_dist(const hwp__core_tlb *t, uint32_t a, uint32_t b) {
    return b >= a ? b - a : b + t->buckets - a;
}

/* The first empty bucket from page's home on: where it goes in. */
HWP_INLINE uint32_t hwp__core_tlb_free(const hwp__core_tlb *t, uint64_t page) {
    uint32_t b = hwp__core_tlb_home(t, page);
    while (t->index[b]) b = hwp__core_tlb_next(t, b);
    return b;
}

/* Take page (indexed) out of the index. The buckets after it move back
 * into the hole when their home allows (no tombstones, so a lookup's
 * probe stays as short as the load makes it). */
HWP_INLINE void hwp__core_tlb_unindex(hwp__core_tlb *t, uint64_t page) {
    uint32_t hole = hwp__core_tlb_home(t, page), b;
    while (t->tag[t->index[hole] - 1u] != page) hole = hwp__core_tlb_next(t, hole);
    for (b = hwp__core_tlb_next(t, hole); t->index[b]; b = hwp__core_tlb_next(t, b)) {
        uint32_t home = hwp__core_tlb_home(t, t->tag[t->index[b] - 1u]);
        /* b's page may sit in the hole unless its home is past the hole */
        if (hwp__core_tlb_dist(t, home, b) >= hwp__core_tlb_dist(t, hole, b)) {
            t->index[hole] = t->index[b];
            hole = b;
        }
    }
    t->index[hole] = 0;
}

/* One reference to one page, hwp__core_ref's result in O(1): true on a
 * hit, which makes its entry the set's MRU; a miss fills the set's LRU
 * entry, counting a valid victim. */
HWP_INLINE bool hwp__core_tlb_ref(hwp__core_tlb *t, uint64_t page, uint64_t *evicted) {
    uint32_t *mru = &t->mru[page & t->set_mask];
    uint32_t b, e;
    for (b = hwp__core_tlb_home(t, page); (e = t->index[b]) != 0;
         b = hwp__core_tlb_next(t, b)) {
        uint32_t m, p, n;
        if (t->tag[--e] != page) continue;
        m = *mru;
        if (e == m) return true;
        /* out of its place, then in before the MRU (after the LRU) */
        p = t->prev[e];
        n = t->next[e];
        t->next[p] = n;
        t->prev[n] = p;
        p = t->prev[m];
        t->next[p] = e;
        t->prev[e] = p;
        t->next[e] = m;
        t->prev[m] = e;
        *mru = e;
        return true;
    }
    e = t->prev[*mru]; /* the LRU entry, or an empty one */
    if (t->tag[e] != HWP__CORE_NONE) {
        (*evicted)++;
        hwp__core_tlb_unindex(t, t->tag[e]);
        b = hwp__core_tlb_free(t, page); /* the unindex may have opened one earlier */
    }
    t->index[b] = e + 1u;
    t->tag[e] = page;
    *mru = e; /* the ring turns by one: the LRU entry is the MRU */
    return false;
}

/* A TLB lookup past the last-page filter: the walk's latency on a miss. */
HWP_INLINE uint32_t hwp__core_page(hwp_core *c, hwp__core_tlb *t,
                                   uint64_t *last, uint64_t addr,
                                   uint64_t *misses) {
    uint64_t page = addr >> t->shift;
    if (HWP_LIKELY(page == *last)) return 0;
    *last = page;
    if (hwp__core_tlb_ref(t, page, &c->st.evicted)) return 0;
    (*misses)++;
    return c->desc.walk;
}

/* Direction prediction and update; true when mispredicted. */
HWP__CORE_HOT bool hwp__core_cond(hwp_core *c, uint64_t pc, bool taken) {
    uint64_t g = c->ghist;
    bool pred, mis;
    uint8_t *ctr;
    if (c->desc.bp == HWP_CORE_TOURNAMENT) {
        uint16_t *lh = &c->lhist[pc & c->lmask];
        uint8_t *lc = &c->lctr[*lh & c->lhmask];
        uint8_t *ch = &c->chooser[g & c->gmask];
        bool lp = *lc >= 4, gp;
        ctr = &c->gctr[g & c->gmask];
        gp = *ctr >= 2;
        pred = *ch >= 2 ? gp : lp;
        if (lp != gp) { /* the chooser learns which one was right */
            if (gp == taken) { if (*ch < 3) (*ch)++; }
            else if (*ch) (*ch)--;
        }
        if (taken) { if (*lc < 7) (*lc)++; }
        else if (*lc) (*lc)--;
        *lh = (uint16_t)((*lh << 1) | (taken ? 1u : 0u));
    } else if (c->desc.bp == HWP_CORE_GSHARE) {
        ctr = &c->gctr[(pc ^ (g & c->hmask)) & c->gmask];
        pred = *ctr >= 2;
    } else {
        ctr = &c->gctr[(((g & c->hmask) << c->gsel_bits) |
                        (pc & c->gsel_mask)) & c->gmask];
        pred = *ctr >= 2;
    }
    if (taken) { if (*ctr < 3) (*ctr)++; }
    else if (*ctr) (*ctr)--;
    c->ghist = (g << 1) | (taken ? 1u : 0u);
    mis = pred != taken;
    c->st.cond++;
    c->st.cond_mispredicts += mis;
    return mis;
}

HWP_INLINE bool hwp__core_target(hwp_core *c, uint64_t pc, uint64_t target) {
    uint64_t *e = &c->btb[pc & c->btb_mask];
    bool mis = *e != target;
    *e = target;
    c->st.indirect++;
    c->st.indirect_mispredicts += mis;
    return mis;
}

/* The instruction's length: the host's, or the fall-through distance of
 * an instruction that did not jump (x86 instructions are 1..15 bytes);
 * 1 when unknown (a taken branch), so it cannot straddle a line. */
HWP_INLINE uint32_t hwp__core_len(const hwp_insn *in) {
    uint64_t d = in->next_pc - in->pc;
    return (!(in->events & HWP_EV_TAKEN) && d - 1u < 15u) ? (uint32_t)d : 1u;
}

/* The block is in its set's MRU way: a hit that changes nothing (the
 * common case, kept out of the call to hwp__core_access). */
HWP_INLINE bool hwp__core_mru(const hwp__core_cache *k, uint64_t block) {
    return k->tag[(size_t)(block & k->set_mask) * k->ways] == block;
}

/* The ITLB check of a fetch at pc: the walk's latency when its page missed. */
HWP__CORE_HOT uint32_t hwp__core_itlb(hwp_core *c, uint64_t pc, uint32_t *ilat) {
    uint32_t w = hwp__core_page(c, &c->itlb, &c->last_ipage, pc, &c->st.itlb_misses);
    if (!w) return 0;
    *ilat += w;
    return HWP_EV_ITLBMISS;
}

/* The L1I lookup of the len bytes at pc (one reference, two lines if it
 * straddles); the last line becomes the MRU line the fast path tests. */
HWP__CORE_HOT uint32_t hwp__core_iline(hwp_core *c, uint64_t pc, uint32_t len,
                                       uint32_t *ilevel, uint32_t *ilat) {
    uint64_t first = pc >> c->l1i.shift, last = (pc + len - 1u) >> c->l1i.shift;
    uint32_t l;
    c->last_iline = last;
    c->ibase = last << c->l1i.shift;
    if (first == last && hwp__core_mru(&c->l1i, first))
        return 0; /* in its set's MRU way: a hit that changes nothing */
    l = hwp__core_access(c, &c->l1i, pc, len, 0, ilevel);
    if (*ilevel == 1) return 0;
    c->st.l1i_misses++;
    *ilat += l;
    return HWP_EV_ICMISS;
}

/* Instruction fetch off the fast path: a new line (or a fetch that may
 * straddle the end of the current one). The page can only change here. */
HWP_INLINE uint32_t hwp__core_fetch(hwp_core *c, const hwp_insn *in,
                                    uint32_t len, uint32_t *ilevel,
                                    uint32_t *ilat) {
    uint32_t ev = 0;
    uint64_t pc = in->pc;
    if (c->has_tlb && (pc >> c->itlb.shift) != c->last_ipage)
        ev = hwp__core_itlb(c, pc, ilat);
    if ((pc >> c->l1i.shift) == c->last_iline &&
        ((pc + len - 1u) >> c->l1i.shift) == c->last_iline)
        return ev; /* the MRU line again: a hit that changes nothing */
    return ev | hwp__core_iline(c, pc, len, ilevel, ilat);
}

/* A load's or store's data access (kind 1 or 2: its class) of size
 * bytes (>= 1) at a: the DTLB, then the L1D past its two MRU filters. */
HWP__CORE_HOT uint32_t hwp__core_data(hwp_core *c, uint64_t a, uint32_t size,
                                      unsigned kind, uint32_t *dlevel,
                                      uint32_t *dlat) {
    uint32_t ev = 0, l = c->l1d.latency;
    if (c->has_tlb && (a >> c->dtlb.shift) != c->last_dpage) {
        uint32_t w = hwp__core_page(c, &c->dtlb, &c->last_dpage, a,
                                    &c->st.dtlb_misses);
        if (w) { ev |= HWP_EV_DTLBMISS; *dlat += w; }
    }
    if (size > c->dline) size = c->dline;
    if (a - c->dbase <= c->dline - size) {
        *dlevel = 1; /* within the MRU line */
    } else if (((a ^ (a + size - 1u)) >> c->l1d.shift) == 0 &&
               hwp__core_mru(&c->l1d, a >> c->l1d.shift)) {
        *dlevel = 1; /* one line, in its set's MRU way */
        c->dbase = (a >> c->l1d.shift) << c->l1d.shift;
    } else {
        l = hwp__core_access(c, &c->l1d, a, size, kind, dlevel);
        c->dbase = ((a + size - 1u) >> c->l1d.shift) << c->l1d.shift;
    }
    (&c->st.l1d_reads)[2u * (kind - 1u)]++;
    if (*dlevel > 1) {
        (&c->st.l1d_read_misses)[2u * (kind - 1u)]++;
        ev |= HWP_EV_DCMISS;
    }
    *dlat += l;
    return ev;
}

/* Branch prediction and the return stack for a branch class. len is the
 * instruction's length when the fetch needed it, else 0. */
HWP__CORE_HOT uint32_t hwp__core_branch(hwp_core *c, const hwp_insn *in,
                                        const hwp_core_ops *ops, uint32_t len) {
    uint32_t ev = 0, cls = in->cls;
    uint64_t pc = in->pc;
    if (cls == HWP_CLS_BR_COND) {
        if (hwp__core_cond(c, pc, (in->events & HWP_EV_TAKEN) != 0))
            ev |= HWP_EV_MISPRED;
    } else if (cls == HWP_CLS_INDIRECT ||
               (cls == HWP_CLS_CALL && (in->events & HWP_EV_INDIRECT))) {
        if (hwp__core_target(c, pc, in->next_pc)) ev |= HWP_EV_MISPRED;
    } else if (cls == HWP_CLS_RET && c->ras_on) {
        uint32_t t = c->ras_top;
        bool mis = !c->ras_n ||
                   (c->ras_fuzzy[t] ? in->next_pc - c->ras[t] >= 15u
                                    : c->ras[t] != in->next_pc);
        if (c->ras_n) {
            c->ras_n--;
            c->ras_top = t ? t - 1u : c->desc.ras - 1u;
        }
        c->st.returns++;
        c->st.return_mispredicts += mis;
        if (mis) ev |= HWP_EV_MISPRED;
    }
    if (cls == HWP_CLS_CALL && c->ras_on) {
        /* The return address is the call's pc + length. A host that does
         * not give the length of a (taken) call leaves it unknown: the
         * return then counts as predicted when it lands 1..15 bytes after
         * the call (x86's instruction lengths). */
        bool len_known = (ops && ops->len) || !(in->events & HWP_EV_TAKEN);
        uint32_t t = c->ras_top + 1u == c->desc.ras ? 0u : c->ras_top + 1u;
        if (!len) len = ops && ops->len ? ops->len : hwp__core_len(in);
        c->ras_fuzzy[t] = len_known ? 0u : 1u;
        c->ras[t] = len_known ? pc + len : pc + 1u;
        c->ras_top = t;
        if (c->ras_n < c->desc.ras) c->ras_n++;
    }
    return ev;
}

/* A load's stall in the additive clock: its latency beyond an L1 hit. */
HWP_INLINE uint32_t hwp__core_dstall(const hwp_core *c, uint32_t cls, uint32_t dlat) {
    return cls == HWP_CLS_LOAD && dlat > c->l1d.latency ? dlat - c->l1d.latency : 0u;
}

/* The additive clock: frac 1/256 cycles of issue (frac_step, a
 * 1/issue_width, per instruction) plus the stalls' cycles. Returns the
 * cycles it moved. */
HWP_INLINE uint64_t hwp__core_additive(hwp_core *c, uint32_t frac, uint64_t stall) {
    uint64_t d;
    c->frac += frac;
    d = (c->frac >> 8) + stall;
    c->frac &= 255u;
    c->clock += d;
    return d;
}

HWP__CORE_HOT void hwp_core_insn_ex(hwp_core *c, const hwp_insn *in,
                                    const hwp_core_ops *ops, hwp_core_out *out) {
    /* Everything in locals until the end: a store through a uint8_t field
     * of *out may alias *c, and would make the compiler reload it. */
    hwp_core_out o;
    uint32_t len = 0, ilat = 0, dlat = 0, ilevel = 1, dlevel = 0, ev;
    uint32_t cls = in->cls;
    uint64_t pc = in->pc, before = c->clock;
    if (HWP_UNLIKELY(cls >= HWP_CLS_COUNT)) {
        c->st.dropped++;
        if (out) {
            hwp__zero(out, sizeof *out);
            out->cycle = c->clock;
        }
        return;
    }
    c->st.events++;
    ev = in->events & (HWP_EV_TAKEN | HWP_EV_TRAP | HWP_EV_INDIRECT);
    /* Fast path: at least 15 bytes before the end of the line fetched
     * last, so the same line whatever the length: a hit on the MRU way. */
    if (HWP_UNLIKELY(pc - c->ibase >= c->ifast)) {
        len = ops && ops->len ? ops->len : hwp__core_len(in);
        ev |= hwp__core_fetch(c, in, len, &ilevel, &ilat);
    }
    if (cls == HWP_CLS_LOAD || cls == HWP_CLS_STORE)
        ev |= hwp__core_data(c, in->addr, ops && ops->size ? ops->size : 1u, cls,
                             &dlevel, &dlat);
    else if (cls != HWP_CLS_OTHER)
        ev |= hwp__core_branch(c, in, ops, len);
    o.timed = 0;
    if (c->timing_all || c->window_left) {
        if (c->window_left) c->window_left--;
        hwp__core_timed(c, in, ops, &o, ilat, dlat, ev);
    } else {
        hwp__core_additive(c, c->frac_step, (uint64_t)ilat + hwp__core_dstall(c, cls, dlat) +
                                                (ev & HWP_EV_MISPRED ? c->desc.mispredict : 0u));
    }
    if (c->cost) hwp_cost_tick(c->cost, c->clock - before);
    if (out) {
        if (o.timed) {
            out->fetch = o.fetch;
            out->map = o.map;
            out->data_ready = o.data_ready;
            out->issue = o.issue;
            out->ready = o.ready;
            out->retire = o.retire;
        }
        out->cycle = c->clock;
        out->events = ev;
        out->ilevel = (uint8_t)ilevel;
        out->dlevel = (uint8_t)dlevel;
        out->timed = o.timed;
    }
}

HWP_INLINE void hwp_core_insn(hwp_core *c, const hwp_insn *in,
                              hwp_core_out *out) {
    hwp_core_insn_ex(c, in, NULL, out);
}

/* Sampled mode: time the next n instructions through the pipeline (a
 * ProfileMe selection with the window around it; a lead-in of about rob
 * instructions fills the pipeline first). Ignored in the other modes. */
HWP_INLINE void hwp_core_window(hwp_core *c, uint64_t n) {
    if (c->desc.mode != HWP_CORE_SAMPLED) return;
    if (!c->window_left) hwp__core_rebase(c);
    if (n > c->window_left) c->window_left = n;
}

HWP_INLINE uint64_t hwp_core_cycle(const hwp_core *c) { return c->clock; }

/* A fetch step of a block: the ITLB check, then the L1I lookup. */
HWP__CORE_HOT uint32_t hwp__core_istep(hwp_core *c, const hwp__core_step *s,
                                       uint32_t *ilat) {
    uint32_t ev = 0, ilevel = 1;
    if (s->itlb) ev = hwp__core_itlb(c, s->pc, ilat);
    if (s->len) ev |= hwp__core_iline(c, s->addr, s->len, &ilevel, ilat);
    return ev;
}

/* One execution of a translated block: the same stats, clock and
 * finished records as its instructions through hwp_core_insn_ex one by
 * one (with the block's ops, the run's addresses in order, next_pc and
 * events on the last instruction, 0 on the others, and the window opened
 * before instruction win_at), for one I-side step per new line or page
 * instead of a test per instruction, and one additive-clock update.
 * Returns the events of the block's instructions or'ed together. out,
 * when not NULL, takes each instruction's hwp_core_out (n of them): that
 * runs the instructions one by one, as does a block the pipeline may
 * time (full timing, a window open, or win_n given), for exact results. */
HWP_INLINE uint32_t hwp_core_run(hwp_core *c, const hwp_core_block *b,
                                 const hwp_core_exec *x, hwp_core_out *out) {
    const hwp__core_step *s, *end = b->step + b->nstep;
    const uint64_t *a = x->addr;
    uint32_t ilat = 0, ev;
    uint64_t stall = 0, d;
    if (HWP_UNLIKELY(out || x->win_n || c->timing_all || c->window_left))
        return hwp__core_each(c, b, x, out);
    c->st.events += b->n;
    ev = hwp__core_istep(c, &b->head[b->line == c->last_iline], &ilat);
    for (s = b->step; s < end; s++) {
        if (s->kind) {
            uint32_t dlevel, dlat = 0;
            ev |= hwp__core_data(c, *a++, s->len, s->kind, &dlevel, &dlat);
            stall += hwp__core_dstall(c, s->kind, dlat);
        } else {
            ev |= hwp__core_istep(c, s, &ilat);
        }
    }
    if (b->last_cls > HWP_CLS_STORE) {
        hwp_insn in;
        in.pc = b->last_pc;
        in.next_pc = in.addr = x->next_pc;
        in.value = 0;
        in.cls = b->last_cls;
        in.events = x->events;
        ev |= hwp__core_branch(c, &in, &b->ops[b->n - 1u], 0);
    }
    stall += ilat + (ev & HWP_EV_MISPRED ? c->desc.mispredict : 0u);
    d = hwp__core_additive(c, b->frac, stall);
    if (c->cost) hwp_cost_tick(c->cost, d);
    return ev | (x->events & (HWP_EV_TAKEN | HWP_EV_TRAP | HWP_EV_INDIRECT));
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_CORE_H */

/* ======================================================================= */
/* IMPLEMENTATION                                                          */
/* ======================================================================= */
#if defined(HWPROF_IMPL) && !defined(HWPROF_CORE_IMPL)
#define HWPROF_CORE_IMPL

#ifdef __cplusplus
extern "C" {
#endif

static void hwp__core_cache_default(hwp_core_cache_desc *k, uint32_t sets,
                                    uint32_t ways, uint32_t line,
                                    uint32_t lat) {
    /* The geometry is the default only when none of it is given: a level
     * with some fields set and ways (or sets, line) 0 is an error. */
    if (!k->sets && !k->ways && !k->line) {
        k->sets = sets;
        k->ways = ways;
        k->line = line;
    }
    if (!k->latency) k->latency = lat;
}

/* Largest latency any one instruction may see, for the horizon. */
static uint64_t hwp__core_maxlat(const hwp_core_desc *o) {
    uint64_t m = o->lat_int, mem = (uint64_t)o->l1d.latency + o->l2.latency +
                                   o->memory + 2u * (uint64_t)o->walk;
    if (o->lat_mul > m) m = o->lat_mul;
    if (o->lat_div > m) m = o->lat_div;
    if (o->lat_fp > m) m = o->lat_fp;
    if (o->lat_fdiv > m) m = o->lat_fdiv;
    if (o->llc.sets) mem += o->llc.latency;
    if (mem > m) m = mem;
    return m + o->mispredict + (uint64_t)o->l1i.latency + o->l2.latency +
           o->llc.latency + o->memory + o->walk;
}

#define HWP__CORE_MAXLAT 65535u

static const char *hwp__core_check_cache(const hwp_core_cache_desc *k,
                                         const char *why_sets,
                                         const char *why_ways,
                                         const char *why_line,
                                         const char *why_lat, uint32_t maxline) {
    if (!hwp_is_pow2(k->sets) || k->sets > (1u << 24)) return why_sets;
    if (!k->ways || k->ways > 1024u) return why_ways;
    if (!hwp_is_pow2(k->line) || k->line < 4u || k->line > maxline)
        return why_line;
    if (k->latency > HWP__CORE_MAXLAT) return why_lat;
    if ((uint64_t)k->sets * k->ways > (1u << 26)) return why_ways;
    return NULL;
}

/* The desc's rows, in the reports' order; defaults as hwp_core_desc's
 * comments attribute them. The cache levels, bp_local, ras, window and
 * horizon depend on other fields: hwp__core_fill's. */
#define HWP__CORE_ANY(f) HWP__FANY(hwp_core_desc, "core", f)
#define HWP__CORE_LAT(f, def) \
    HWP__FN(hwp_core_desc, "core", f, UINT, def, 0, HWP__CORE_MAXLAT, 0, \
            "core: " #f " must be <= 65535")
#define HWP__CORE_WIDTH(f, def) \
    HWP__FN(hwp_core_desc, "core", f, UINT, def, 1, 64, 0, "core: " #f " must be in 1..64")
#define HWP__CORE_LEVEL(lv) \
    HWP__CORE_ANY(lv.sets), HWP__CORE_ANY(lv.ways), HWP__CORE_ANY(lv.line), \
    HWP__CORE_ANY(lv.latency)
/* Option names of the numbered choices, by value (HWP_CORE_*). */
static const char *const hwp__core_mode_names[] = {NULL, "timing", "caches", "sampled"};
static const char *const hwp__core_order_names[] = {NULL, "ooo", "inorder"};
static const char *const hwp__core_bp_names[] = {NULL, "tournament", "gshare", "gselect"};
HWP_STATIC_ASSERT(core_names_by_value,
                  HWP_CORE_SAMPLED == 3 && HWP_CORE_INORDER == 2 && HWP_CORE_GSELECT == 3);
static const hwp_field hwp__core_desc_f[] = {
    HWP__FNAMED(hwp_core_desc, "core", mode, HWP_CORE_TIMING, hwp__core_mode_names,
                "core: mode must be HWP_CORE_TIMING, _CACHES or _SAMPLED"),
    HWP__FNAMED(hwp_core_desc, "core", order, HWP_CORE_OOO, hwp__core_order_names,
                "core: order must be HWP_CORE_OOO or HWP_CORE_INORDER"),
    HWP__FN(hwp_core_desc, "core", flags, UINT, 0, 0, HWP_CORE_FLAGS_ALL, 0,
            "core: flags has unknown bits"),
    HWP__CORE_LEVEL(l1i), HWP__CORE_LEVEL(l1d), HWP__CORE_LEVEL(l2),
    HWP__CORE_LEVEL(llc), HWP__CORE_LEVEL(itlb), HWP__CORE_LEVEL(dtlb),
    HWP__CORE_LAT(memory, 80), HWP__CORE_LAT(walk, 30),
    HWP__FNAMED(hwp_core_desc, "core", bp, HWP_CORE_TOURNAMENT, hwp__core_bp_names,
                "core: bp must be HWP_CORE_TOURNAMENT, _GSHARE or _GSELECT"),
    HWP__FN(hwp_core_desc, "core", bp_global, UINT, 4096, 1, 1u << 24, HWP_FIELD_POW2,
            "core: bp_global must be a power of two <= 2^24"),
    HWP__FN(hwp_core_desc, "core", bp_hist, UINT, 0, 0, 63, 0,
            "core: bp_hist must be <= 63"),
    HWP__CORE_ANY(bp_local), HWP__CORE_ANY(bp_local_hist),
    HWP__FN(hwp_core_desc, "core", btb, UINT, 512, 1, 1u << 24, HWP_FIELD_POW2,
            "core: btb must be a power of two <= 2^24"),
    HWP__CORE_ANY(ras), HWP__CORE_LAT(mispredict, 7),
    HWP__CORE_WIDTH(fetch_width, 4), HWP__CORE_WIDTH(issue_width, 4),
    HWP__CORE_WIDTH(retire_width, 8),
    HWP__FN(hwp_core_desc, "core", rob, UINT, 80, 1, 4096, 0, "core: rob must be in 1..4096"),
    HWP__CORE_ANY(window), HWP__CORE_LAT(lat_int, 1), HWP__CORE_LAT(lat_mul, 7),
    HWP__CORE_LAT(lat_div, 20), HWP__CORE_LAT(lat_fp, 4), HWP__CORE_LAT(lat_fdiv, 15),
    HWP__CORE_ANY(horizon)};
#undef HWP__CORE_LEVEL
#undef HWP__CORE_WIDTH
#undef HWP__CORE_LAT
#undef HWP__CORE_ANY

HWP__FIELDS_FN(hwp_core_desc_fields, hwp__core_desc_f)

/* Fill the defaults; NULL when valid, else the reason. */
static const char *hwp__core_fill(hwp_core_desc *o, const hwp_core_desc *d) {
    const char *why;
    if (d) *o = *d;
    else hwp__zero(o, sizeof *o);
    hwp__core_cache_default(&o->l1i, 512u, 2u, 64u, 1u);
    hwp__core_cache_default(&o->l1d, 512u, 2u, 64u, 3u);
    hwp__core_cache_default(&o->l2, 32768u, 1u, 64u, 12u);
    /* No LLC unless its geometry is given; its latency defaults to 40. */
    if ((o->llc.sets || o->llc.ways || o->llc.line) && !o->llc.latency)
        o->llc.latency = 40u;
    hwp__core_cache_default(&o->itlb, 1u, 128u, 8192u, 0u);
    hwp__core_cache_default(&o->dtlb, 1u, 128u, 8192u, 0u);
    if ((why = hwp__field_fill(o, hwp__core_desc_f, HWP__N(hwp__core_desc_f))) != NULL)
        return why;
    if (!o->bp_hist)
        o->bp_hist = o->bp == HWP_CORE_TOURNAMENT ? 12u
                   : o->bp == HWP_CORE_GSHARE ? hwp_log2(o->bp_global)
                   : hwp_log2(o->bp_global) / 2u;
    if (o->bp == HWP_CORE_TOURNAMENT) {
        if (!o->bp_local) o->bp_local = 1024u;
        if (!o->bp_local_hist) o->bp_local_hist = 10u;
    }
    if (!o->ras && !(o->flags & HWP_CORE_NO_RAS)) o->ras = 32u;
    if (!o->window) o->window = o->rob < 20u ? o->rob : 20u;
    {
        /* One row of reasons per level, in the desc's order. */
#define HWP__CORE_WHY(lv, what)                                          \
    {"core: " lv ".sets must be a power of two <= 2^24",                 \
     "core: " lv ".ways must be in 1..1024 (sets x ways <= 2^26)",       \
     "core: " lv ".line" what, "core: " lv ".latency must be <= 65535"}
        static const char *const whys[6][4] = {
            HWP__CORE_WHY("l1i", " must be a power of two in 4..2^20"),
            HWP__CORE_WHY("l1d", " must be a power of two in 4..2^20"),
            HWP__CORE_WHY("l2", " must be a power of two in 4..2^20"),
            HWP__CORE_WHY("llc", " must be a power of two in 4..2^20"),
            HWP__CORE_WHY("itlb", " (page size) must be a power of two in 4..2^30"),
            HWP__CORE_WHY("dtlb", " (page size) must be a power of two in 4..2^30")};
#undef HWP__CORE_WHY
        const hwp_core_cache_desc *lv[6];
        unsigned i;
        lv[0] = &o->l1i; lv[1] = &o->l1d; lv[2] = &o->l2;
        lv[3] = &o->llc; lv[4] = &o->itlb; lv[5] = &o->dtlb;
        for (i = 0; i < 6; i++) {
            if (i == 3 && !o->llc.sets && !o->llc.ways && !o->llc.line && !o->llc.latency)
                continue; /* no LLC */
            if ((why = hwp__core_check_cache(lv[i], whys[i][0], whys[i][1], whys[i][2],
                                             whys[i][3], i < 4 ? 1u << 20 : 1u << 30)))
                return why;
        }
    }
    if (o->l1i.line > o->l2.line || o->l1d.line > o->l2.line)
        return "core: l2.line must be >= the L1 lines";
    if (o->bp == HWP_CORE_GSELECT && o->bp_hist > hwp_log2(o->bp_global))
        return "core: bp_hist must be <= log2(bp_global) for gselect";
    if (o->bp == HWP_CORE_TOURNAMENT) {
        if (!hwp_is_pow2(o->bp_local) || o->bp_local > (1u << 24))
            return "core: bp_local must be a power of two <= 2^24";
        if (o->bp_local_hist > 16u) return "core: bp_local_hist must be <= 16";
    } else if (o->bp_local || o->bp_local_hist) {
        return "core: bp_local must be 0 unless bp is the tournament";
    }
    if ((o->flags & HWP_CORE_NO_RAS) ? o->ras != 0 : o->ras > (1u << 16))
        return "core: ras must be in 1..65536 (0 with HWP_CORE_NO_RAS)";
    if (o->window > o->rob) return "core: window must be <= rob";
    {
        uint64_t need = (uint64_t)(o->rob + o->fetch_width) * hwp__core_maxlat(o) + 64u;
        uint64_t h = 1024u;
        while (h < need) h <<= 1;
        if (!o->horizon) {
            if (h > (1u << 24))
                return "core: horizon: rob x latencies exceed 2^24 cycles (lower rob or the latencies)";
            o->horizon = (uint32_t)h;
        }
        if (!hwp_is_pow2(o->horizon) || o->horizon > (1u << 24))
            return "core: horizon must be a power of two <= 2^24";
        if (o->horizon < need)
            return "core: horizon must cover rob x (largest latency + mispredict)";
    }
    return NULL;
}

static uint64_t hwp__core_tlb_entries(const hwp_core_desc *o) {
    return (uint64_t)o->itlb.sets * o->itlb.ways + (uint64_t)o->dtlb.sets * o->dtlb.ways;
}

static uint64_t hwp__core_tags(const hwp_core_desc *o) {
    uint64_t t = (uint64_t)o->l1i.sets * o->l1i.ways +
                 (uint64_t)o->l1d.sets * o->l1d.ways +
                 (uint64_t)o->l2.sets * o->l2.ways + hwp__core_tlb_entries(o);
    if (o->llc.sets) t += (uint64_t)o->llc.sets * o->llc.ways;
    return t;
}

/* The TLBs' uint32 words (HWP_CORE_BYTES's tlb and tlb_sets). */
static uint64_t hwp__core_tlb_words(const hwp_core_desc *o) {
    return 4u * hwp__core_tlb_entries(o) + o->itlb.sets + o->dtlb.sets;
}

static uint64_t hwp__core_counters(const hwp_core_desc *o) {
    return o->bp == HWP_CORE_TOURNAMENT
               ? 2u * (uint64_t)o->bp_global + o->bp_local
               : o->bp_global;
}

HWP_API size_t hwp_core_bytes(const hwp_core_desc *d) {
    hwp_core_desc o;
    if (hwp__core_fill(&o, d)) return 0;
    return HWP_CORE_BYTES(hwp__core_tags(&o), hwp__core_tlb_entries(&o),
                          o.itlb.sets + o.dtlb.sets, hwp__core_counters(&o),
                          o.bp == HWP_CORE_TOURNAMENT ? o.bp_local : 0u,
                          o.btb, o.ras, o.rob, o.window, o.horizon);
}

static void hwp__core_cache_set(hwp__core_cache *k, const hwp_core_cache_desc *d,
                                uint64_t *tag) {
    k->tag = tag;
    k->set_mask = d->sets - 1u;
    k->ways = d->ways;
    k->shift = hwp_log2(d->line);
    k->latency = d->latency;
}

/* A TLB's tables from the core's words (hwp__core_tlb_words): tags are
 * the caller's to clear. */
static void hwp__core_tlb_set(hwp__core_tlb *t, const hwp_core_cache_desc *d,
                              uint64_t *tag, uint32_t **words) {
    uint32_t n = d->sets * d->ways;
    t->tag = tag;
    t->prev = *words;
    t->next = t->prev + n;
    t->index = t->next + n;
    t->mru = t->index + 2u * n;
    *words = t->mru + d->sets;
    t->set_mask = d->sets - 1u;
    t->ways = d->ways;
    t->shift = hwp_log2(d->line);
    t->buckets = 2u * n;
}

/* Empty: each set's ring in entry order, no page indexed. */
static void hwp__core_tlb_clear(hwp__core_tlb *t) {
    uint32_t s, e, sets = (uint32_t)t->set_mask + 1u;
    for (s = 0; s < sets; s++) {
        uint32_t first = s * t->ways, last = first + t->ways - 1u;
        t->mru[s] = first;
        for (e = first; e <= last; e++) {
            t->next[e] = e == last ? first : e + 1u;
            t->prev[e] = e == first ? last : e - 1u;
        }
    }
    hwp__zero(t->index, (size_t)t->buckets * 4u);
}

/* Everything a reset clears: the machine's state and the counters. */
static void hwp__core_clear(hwp_core *c) {
    const hwp_core_desc *o = &c->desc;
    uint64_t i, n = hwp__core_tags(o);
    for (i = 0; i < n; i++) c->l1i.tag[i] = HWP__CORE_NONE;
    hwp__core_tlb_clear(&c->itlb);
    hwp__core_tlb_clear(&c->dtlb);
    /* Every counter starts at 0: strongly not taken, and the chooser
     * strongly local (cachegrind's zeroed tables; the 21264's reset state
     * is not documented). */
    hwp__zero(c->gctr, (size_t)hwp__core_counters(o));
    if (c->lhist) hwp__zero(c->lhist, (size_t)o->bp_local * 2u);
    hwp__zero(c->btb, (size_t)o->btb * 8u);
    if (c->ras) hwp__zero(c->ras, (size_t)o->ras * 9u);
    hwp__zero(c->rob_ring, (size_t)o->rob * 8u);
    hwp__zero(c->win_ring, (size_t)o->window * 8u);
    hwp__zero(c->slots, o->horizon);
    hwp__zero(c->cum, (size_t)o->horizon * 4u);
    hwp__zero(&c->st, sizeof c->st);
    hwp__zero(c->ready, sizeof c->ready);
    c->last_iline = c->last_ipage = c->last_dpage = HWP__CORE_NONE;
    /* No MRU line yet: the fast-path windows start at 2^63, an address
     * no x86-64 or AArch64 access has (not canonical). */
    c->ibase = c->dbase = (uint64_t)1 << 63;
    c->ghist = 0;
    c->ras_top = c->ras_n = 0;
    c->rob_i = c->win_i = 0;
    c->pend_n = c->done_head = c->done_n = 0;
    c->fetch_n = c->map_n = c->retire_n = c->cum_total = 0;
    c->fetch_c = c->map_c = c->issue_c = c->issue_max = c->retire_c = 0;
    c->redirect = c->closed = c->clock = 0;
    c->frac = 0;
    c->window_left = 0;
}

HWP_API hwp_status hwp_core_init(hwp_core *c, void *mem, size_t n,
                                 const hwp_core_desc *d, hwp_cost *cost) {
    hwp_core_desc o;
    const char *why;
    unsigned char *cur;
    uint64_t *tags;
    uint32_t *words;
    size_t need;
    if (!c) return HWP_EINVAL;
    hwp__zero(c, sizeof *c);
    c->head.magic = HWP__CORE_MAGIC;
    why = hwp__core_fill(&o, d);
    need = why ? 0 : hwp_core_bytes(&o) - (HWP__ALIGN - 1u);
    if (hwp__admit(&c->head, why, &mem, &n, need) != HWP_OK)
        return (hwp_status)c->head.status;
    c->desc = o;
    c->cost = cost;
    cur = (unsigned char *)mem;
    tags = (uint64_t *)hwp__carve(&cur, (size_t)hwp__core_tags(&o) * 8u);
    hwp__core_cache_set(&c->l1i, &o.l1i, tags);
    tags += (size_t)o.l1i.sets * o.l1i.ways;
    hwp__core_cache_set(&c->l1d, &o.l1d, tags);
    tags += (size_t)o.l1d.sets * o.l1d.ways;
    hwp__core_cache_set(&c->l2, &o.l2, tags);
    tags += (size_t)o.l2.sets * o.l2.ways;
    words = (uint32_t *)hwp__carve(&cur, (size_t)hwp__core_tlb_words(&o) * 4u);
    hwp__core_tlb_set(&c->itlb, &o.itlb, tags, &words);
    tags += (size_t)o.itlb.sets * o.itlb.ways;
    hwp__core_tlb_set(&c->dtlb, &o.dtlb, tags, &words);
    tags += (size_t)o.dtlb.sets * o.dtlb.ways;
    c->has_llc = o.llc.sets != 0;
    if (c->has_llc) hwp__core_cache_set(&c->llc, &o.llc, tags);
    c->has_tlb = !(o.flags & HWP_CORE_NO_TLB);
    c->ras_on = !(o.flags & HWP_CORE_NO_RAS);
    c->timing_all = o.mode == HWP_CORE_TIMING;
    c->gctr = (uint8_t *)hwp__carve(&cur, (size_t)hwp__core_counters(&o));
    c->gmask = o.bp_global - 1u;
    c->hmask = hwp_mask64(o.bp_hist);
    if (o.bp == HWP_CORE_TOURNAMENT) {
        c->chooser = c->gctr + o.bp_global;
        c->lctr = c->chooser + o.bp_global;
        c->lhist = (uint16_t *)hwp__carve(&cur, (size_t)o.bp_local * 2u);
        c->lmask = o.bp_local - 1u;
        c->lhmask = hwp_mask64(o.bp_local_hist) & (o.bp_local - 1u);
        c->gmask &= c->hmask;
    }
    c->gsel_bits = o.bp == HWP_CORE_GSELECT ? hwp_log2(o.bp_global) - o.bp_hist : 0u;
    c->gsel_mask = hwp_mask64(c->gsel_bits);
    c->btb = (uint64_t *)hwp__carve(&cur, (size_t)o.btb * 8u);
    c->btb_mask = o.btb - 1u;
    if (o.ras) {
        c->ras = (uint64_t *)hwp__carve(&cur, (size_t)o.ras * 9u);
        c->ras_fuzzy = (uint8_t *)(c->ras + o.ras);
    }
    c->rob_ring = (uint64_t *)hwp__carve(&cur, (size_t)o.rob * 8u);
    c->win_ring = (uint64_t *)hwp__carve(&cur, (size_t)o.window * 8u);
    c->slots = (uint8_t *)hwp__carve(&cur, o.horizon);
    c->cum = (uint32_t *)hwp__carve(&cur, (size_t)o.horizon * 4u);
    c->rec_cap = o.rob + 64u;
    c->recs = (hwp_core_rec *)hwp__carve(&cur, 2u * (size_t)c->rec_cap * sizeof(hwp_core_rec));
    c->hmask_slots = o.horizon - 1u;
    c->frac_step = 256u / o.issue_width;
    c->ifast = o.l1i.line > 15u ? o.l1i.line - 15u : 0u;
    c->dline = o.l1d.line;
    hwp__core_clear(c);
    return hwp__fail(&c->head, HWP_OK, "");
}

static bool hwp__core_ok(const hwp_core *c) {
    return c && c->head.magic == HWP__CORE_MAGIC && c->gctr;
}

HWP_API hwp_status hwp_core_reset(hwp_core *c) {
    if (!hwp__core_ok(c)) return HWP_EINVAL;
    hwp__core_clear(c);
    return hwp__fail(&c->head, HWP_OK, "");
}

/* Close issue-slot cycles below `upto`: no instruction can issue there
 * any more (issue >= fetch, and fetch never goes back). */
HWP__CORE_HOT void hwp__core_close(hwp_core *c, uint64_t upto) {
    while (c->closed < upto) {
        uint32_t k = (uint32_t)(c->closed & c->hmask_slots);
        c->cum[k] = c->cum_total; /* issues before cycle `closed` */
        c->cum_total += c->slots[k];
        c->slots[k] = 0;
        c->closed++;
    }
}

/* Instructions issued in cycles [a, b): the closed part from the prefix
 * counts, an open part (a forced finish) from the ring itself. */
HWP__CORE_HOT uint64_t hwp__core_used(const hwp_core *c, uint64_t a, uint64_t b) {
    uint64_t u = 0, e = b < c->closed ? b : c->closed;
    if (a < e && c->closed - a <= c->desc.horizon)
        u = (uint32_t)((e == c->closed ? c->cum_total
                                       : c->cum[e & c->hmask_slots]) -
                       c->cum[a & c->hmask_slots]);
    for (e = a > c->closed ? a : c->closed; e < b; e++)
        u += c->slots[e & c->hmask_slots];
    return u;
}

/* Finish the oldest pending records: those whose interval [fetch, ready)
 * is closed, or all with `force`. */
HWP__CORE_HOT void hwp__core_finish(hwp_core *c, bool force) {
    /* In locals: the stores to the records (uint64_t) could alias the
     * handle's counters and would make the compiler reload them. */
    const uint32_t cap = c->rec_cap, ring = 2u * cap;
    const uint64_t closed = c->closed, width = c->desc.issue_width;
    uint32_t n = c->pend_n, head = c->done_head, dn = c->done_n;
    uint32_t k = head + dn;
    uint64_t wasted = 0, finished = 0;
    if (k >= ring) k -= ring;
    while (n) {
        hwp_core_rec *r = &c->recs[k];
        uint64_t slots, used, w;
        if (!force && r->ready > closed) break;
        slots = width * (r->ready - r->fetch);
        used = hwp__core_used(c, r->fetch, r->ready);
        w = slots > used ? slots - used : 0;
        r->wasted = w;
        wasted += w;
        finished++;
        /* it joins the finished ones; past rec_cap the oldest goes */
        if (dn < cap) dn++;
        else head = head + 1u == ring ? 0u : head + 1u;
        k = k + 1u == ring ? 0u : k + 1u;
        n--;
    }
    c->pend_n = n;
    c->done_head = head;
    c->done_n = dn;
    c->st.wasted_slots += wasted;
    c->st.finished += finished;
}

HWP_API void hwp__core_rebase(hwp_core *c) {
    /* A new window after untimed instructions: finish what is pending,
     * then start the pipeline empty at the additive clock. */
    hwp__core_finish(c, true);
    hwp__core_close(c, c->issue_max + 1u);
    if (c->closed < c->clock) {
        c->closed = c->clock;
        c->cum_total = 0;
    }
    if (c->redirect < c->clock) c->redirect = c->clock;
}

HWP_API void hwp__core_timed(hwp_core *c, const hwp_insn *in,
                             const hwp_core_ops *ops, hwp_core_out *o,
                             uint32_t ilat, uint32_t dlat, uint32_t ev) {
    const hwp_core_desc *d = &c->desc;
    uint64_t f, m, dr, is, rd, rt, t;
    uint32_t lat, i;
    hwp_core_rec *r;
    /* fetch: a group of fetch_width, after any redirect, and no further
     * ahead of map than the two front-end stages (a full ROB or window
     * stalls fetch too) */
    f = c->fetch_c;
    if (c->redirect > f) {
        f = c->redirect;
        c->fetch_n = 0;
    } else if (c->fetch_n >= d->fetch_width) {
        f++;
        c->fetch_n = 0;
    }
    if (c->map_c > f + 2u) {
        f = c->map_c - 2u;
        c->fetch_n = 0;
    }
    if (ilat) { /* the fetch waits for its line (and its page) */
        f += ilat;
        c->fetch_n = 0;
    }
    c->fetch_n++;
    c->fetch_c = f;
    hwp__core_close(c, f);
    /* map: two stages after fetch, a free ROB entry and window entry */
    m = f + 2u;
    t = c->rob_ring[c->rob_i];
    if (t > m) m = t;
    t = c->win_ring[c->win_i];
    if (t > m) m = t;
    if (m < c->map_c) m = c->map_c;
    if (m == c->map_c && c->map_n >= d->fetch_width) m++;
    c->map_n = m == c->map_c ? c->map_n + 1u : 1u;
    c->map_c = m;
    /* data ready: the last source's result, not before map; issue: a
     * cycle after map, not before data ready, and a free slot */
    dr = m;
    if (ops && ops->regs) {
        for (i = 0; i < ops->nsrc && i < 3u; i++)
            if (ops->src[i] && c->ready[ops->src[i]] > dr)
                dr = c->ready[ops->src[i]];
    } else {
        c->st.no_regs++;
    }
    is = dr > m ? dr : m + 1u;
    if (d->order == HWP_CORE_INORDER && is < c->issue_c) is = c->issue_c;
    while (c->slots[is & c->hmask_slots] >= d->issue_width) is++;
    c->slots[is & c->hmask_slots]++;
    c->issue_c = is;
    if (is > c->issue_max) c->issue_max = is;
    switch (ops ? ops->op : 0u) {
    case HWP_CORE_OP_MUL: lat = d->lat_mul; break;
    case HWP_CORE_OP_DIV: lat = d->lat_div; break;
    case HWP_CORE_OP_FP: lat = d->lat_fp; break;
    case HWP_CORE_OP_FDIV: lat = d->lat_fdiv; break;
    default: lat = in->cls == HWP_CLS_LOAD ? dlat : d->lat_int; break;
    }
    rd = is + lat;
    if (ops && ops->regs)
        for (i = 0; i < ops->ndst && i < 2u; i++)
            if (ops->dst[i])
                c->ready[ops->dst[i]] = (ops->upd >> i) & 1u ? is + d->lat_int : rd;
    /* retire: in order, retire_width a cycle, not before ready */
    rt = rd > c->retire_c ? rd : c->retire_c;
    if (rt == c->retire_c && c->retire_n >= d->retire_width) rt++;
    c->retire_n = rt == c->retire_c ? c->retire_n + 1u : 1u;
    c->retire_c = rt;
    c->rob_ring[c->rob_i] = rt;
    c->rob_i = c->rob_i + 1u == d->rob ? 0u : c->rob_i + 1u;
    c->win_ring[c->win_i] = is;
    c->win_i = c->win_i + 1u == d->window ? 0u : c->win_i + 1u;
    /* where the next fetch may start */
    if (ev & HWP_EV_MISPRED) {
        t = f + d->mispredict;
        c->redirect = rd + 1u > t ? rd + 1u : t;
    } else if (ev & HWP_EV_TAKEN) {
        c->redirect = f + 1u; /* a taken branch ends the fetch group */
    }
    if (rt > c->clock) {
        c->st.issue_slots += (uint64_t)d->issue_width * (rt - c->clock);
        c->clock = rt;
    }
    c->st.timed++;
    o->fetch = f;
    o->map = m;
    o->data_ready = dr;
    o->issue = is;
    o->ready = rd;
    o->retire = rt;
    o->timed = 1;
    /* the record waits until no later issue can fall in [fetch, ready) */
    hwp__core_finish(c, false);
    if (c->pend_n == c->rec_cap) { /* cannot happen with fetch tied to
                                      map; kept for safety */
        c->pend_n--;
        hwp__core_finish(c, true);
    }
    i = c->done_head + c->done_n + c->pend_n;
    if (i >= 2u * c->rec_cap) i -= 2u * c->rec_cap;
    r = &c->recs[i];
    r->pc = in->pc;
    r->fetch = f;
    r->map = m;
    r->issue = is;
    r->ready = rd;
    r->retire = rt;
    r->wasted = 0;
    r->events = ev;
    r->pad_ = 0;
    c->pend_n++;
}

HWP_API hwp_status hwp_core_flush(hwp_core *c) {
    if (!hwp__core_ok(c)) return HWP_EINVAL;
    hwp__core_finish(c, true);
    return hwp__fail(&c->head, HWP_OK, "");
}

HWP_API size_t hwp_core_done(hwp_core *c, hwp_core_rec *out, size_t cap) {
    size_t n, i;
    if (!hwp__core_ok(c)) return 0;
    n = c->done_n;
    if (!out) return n;
    for (i = 0; i < n && i < cap; i++) {
        out[i] = c->recs[c->done_head];
        c->done_head = c->done_head + 1u == 2u * c->rec_cap ? 0u : c->done_head + 1u;
        c->done_n--;
    }
    return n;
}

/* ---- translated blocks ------------------------------------------------ */

HWP_API size_t hwp_core_block_bytes(uint32_t n) {
    return n - 1u < HWP_CORE_BLOCK_MAX ? HWP_CORE_BLOCK_BYTES(n) : 0u;
}

/* The steps are the per-instruction path's run ahead of time. Its
 * I-side state is the last line fetched (the fast path's line) and the
 * last ITLB page: inside a block, after its first instruction, both
 * follow from the code alone, since the block's instructions are
 * consecutive and nothing else fetches in between. Only the first
 * instruction depends on the block run before: if that ended in its
 * line, the last-line filter lets all of it but the line's last 15
 * bytes through as a hit (head[1]), else it looks its lines up
 * (head[0]). An ITLB check of the page the previous check took is a
 * hit that changes nothing, and is left out; the first check of the
 * steps is kept whatever head ran, as head[1] may not check. */
HWP_API hwp_core_block *hwp_core_block_init(const hwp_core *c, void *mem, size_t bytes,
                                            uint64_t pc, const uint8_t *cls,
                                            const hwp_core_ops *ops, uint32_t n) {
    unsigned char *cur = (unsigned char *)mem;
    hwp_core_block *b;
    hwp__core_step *st;
    hwp_core_ops *o;
    uint8_t *k;
    uint64_t at = pc, line, page = HWP__CORE_NONE;
    uint32_t i, sh;
    if (!hwp__core_ok(c) || !mem || !cls || !ops || bytes < hwp_core_block_bytes(n) ||
        !hwp_core_block_bytes(n))
        return NULL;
    sh = c->l1i.shift;
    /* Lengths as x86's (the fast path's 15 bytes); a branch only last. */
    for (i = 0; i < n; i++)
        if (ops[i].len - 1u >= 15u || cls[i] >= HWP_CLS_COUNT ||
            (i + 1u < n && cls[i] > HWP_CLS_STORE))
            return NULL;
    cur += (size_t)(-(uintptr_t)cur & (HWP__ALIGN - 1u));
    b = (hwp_core_block *)hwp__carve(&cur, sizeof *b);
    st = (hwp__core_step *)hwp__carve(&cur, (size_t)n * 2u * sizeof *st);
    o = (hwp_core_ops *)hwp__carve(&cur, (size_t)n * sizeof *o);
    k = (uint8_t *)hwp__carve(&cur, n);
    hwp__zero(b, sizeof *b);
    hwp__copy(o, ops, (size_t)n * sizeof *o);
    hwp__copy(k, cls, n);
    b->step = st;
    b->ops = o;
    b->cls = k;
    b->n = n;
    b->frac = n * c->frac_step;
    b->pc = pc;
    b->line = pc >> sh;
    b->last_cls = cls[n - 1u];
    /* The first instruction: both heads end in its last line. */
    line = (pc + o[0].len - 1u) >> sh;
    b->head[0].itlb = (uint8_t)c->has_tlb;
    b->head[0].pc = b->head[0].addr = pc;
    b->head[0].len = o[0].len;
    if (pc - (b->line << sh) >= c->ifast) {
        b->head[1].itlb = (uint8_t)c->has_tlb;
        b->head[1].pc = pc;
        if (line != b->line) { /* the next line; this one is the MRU */
            b->head[1].addr = line << sh;
            b->head[1].len = 1;
        }
    }
    for (i = 0; i < n; at += o[i].len, i++) {
        uint64_t last = (at + o[i].len - 1u) >> sh;
        b->last_pc = at;
        if (i && at - (line << sh) >= c->ifast) { /* past the fast path */
            hwp__core_step f;
            hwp__zero(&f, sizeof f);
            if (c->has_tlb && (at >> c->itlb.shift) != page) {
                f.itlb = 1;
                f.pc = at;
                page = at >> c->itlb.shift;
            }
            if (last != line) { /* a new line, or one more if it straddles */
                f.addr = (at >> sh) == line ? last << sh : at;
                f.len = (at >> sh) == line ? 1u : o[i].len;
                line = last;
            }
            if (f.itlb || f.len) st[b->nstep++] = f;
        }
        if (k[i] == HWP_CLS_LOAD || k[i] == HWP_CLS_STORE) {
            hwp__zero(&st[b->nstep], sizeof *st);
            st[b->nstep].kind = k[i];
            st[b->nstep++].len = o[i].size ? o[i].size : 1u;
        }
    }
    return b;
}

/* A block one instruction at a time: hwp_core_run's reference. */
HWP_API uint32_t hwp__core_each(hwp_core *c, const hwp_core_block *b,
                                const hwp_core_exec *x, hwp_core_out *out) {
    const uint64_t *a = x->addr;
    uint64_t pc = b->pc;
    uint32_t i, ev = 0;
    for (i = 0; i < b->n; i++) {
        hwp_core_out own, *o = out ? &out[i] : &own;
        hwp_insn in;
        hwp__zero(&in, sizeof in);
        in.pc = pc;
        in.cls = b->cls[i];
        pc += b->ops[i].len;
        in.next_pc = pc;
        if (i + 1u == b->n) {
            in.next_pc = in.addr = x->next_pc;
            in.events = x->events;
        }
        if (in.cls == HWP_CLS_LOAD || in.cls == HWP_CLS_STORE) in.addr = *a++;
        if (x->win_n && i == x->win_at) hwp_core_window(c, x->win_n);
        hwp_core_insn_ex(c, &in, &b->ops[i], o);
        ev |= o->events;
    }
    return ev;
}

HWP_API hwp_status hwp_core_get_stats(const hwp_core *c, hwp_core_stats *out) {
    if (!hwp__core_ok(c) || !out) return HWP_EINVAL;
    *out = c->st;
    out->cycles = c->clock;
    out->l1i_refs = c->st.events; /* one fetch reference an instruction */
    return HWP_OK;
}

HWP__GET_DESC_FN(core, desc, hwp__core_ok(x))

/* ---- merge and reports ------------------------------------------------ */

/* "  label misses/refs (pct%)" */
static void hwp__core_ratio(const hwp_writer *w, const char *label, uint64_t miss,
                            uint64_t refs) {
    hwp_put_str(w, label);
    hwp_put_u64(w, miss);
    hwp_put_str_u64(w, "/", refs);
    hwp__put_str_f64(w, " (", refs ? 100.0 * (double)miss / (double)refs : 0.0, 2);
    hwp_put_str(w, "%)");
}

HWP_API void hwp_core_write_text(const hwp_core *c, const hwp_writer *w) {
    hwp_core_stats st;
    if (hwp_core_get_stats(c, &st) != HWP_OK) return;
    hwp_put_str_u64(w, "core: ", st.events);
    hwp_put_str_u64(w, " instructions (", st.dropped);
    hwp_put_str_u64(w, " dropped), ", st.cycles);
    hwp_put_str(w, " cycles, IPC ");
    hwp_put_f64(w, st.cycles ? (double)st.events / (double)st.cycles : 0.0, 3);
    hwp_put_str(w, "\n  caches (misses/references):");
    hwp__core_ratio(w, " L1I ", st.l1i_misses, st.l1i_refs);
    hwp__core_ratio(w, ", L1D reads ", st.l1d_read_misses, st.l1d_reads);
    hwp__core_ratio(w, ", writes ", st.l1d_write_misses, st.l1d_writes);
    hwp__core_ratio(w, ", L2 ", st.l2_imisses + st.l2_rmisses + st.l2_wmisses,
                    st.l2_irefs + st.l2_rrefs + st.l2_wrefs);
    if (c->has_llc) hwp__core_ratio(w, ", LLC ", st.llc_misses, st.llc_refs);
    hwp_put_str(w, "\n  branches (mispredicted/seen):");
    hwp__core_ratio(w, " conditional ", st.cond_mispredicts, st.cond);
    hwp__core_ratio(w, ", indirect ", st.indirect_mispredicts, st.indirect);
    hwp__core_ratio(w, ", returns ", st.return_mispredicts, st.returns);
    hwp_put_str(w, "\n");
}

/* The stats, in struct order. */
static const hwp_field hwp__core_stats_f[] = {
    HWP__FS_HEAD(hwp_core_stats),
    HWP__FS(hwp_core_stats, timed), HWP__FS(hwp_core_stats, no_regs),
    HWP__FS(hwp_core_stats, l1i_refs), HWP__FS(hwp_core_stats, l1i_misses),
    HWP__FS(hwp_core_stats, l1d_reads), HWP__FS(hwp_core_stats, l1d_read_misses),
    HWP__FS(hwp_core_stats, l1d_writes), HWP__FS(hwp_core_stats, l1d_write_misses),
    HWP__FS(hwp_core_stats, l2_irefs), HWP__FS(hwp_core_stats, l2_imisses),
    HWP__FS(hwp_core_stats, l2_rrefs), HWP__FS(hwp_core_stats, l2_rmisses),
    HWP__FS(hwp_core_stats, l2_wrefs), HWP__FS(hwp_core_stats, l2_wmisses),
    HWP__FS(hwp_core_stats, llc_refs), HWP__FS(hwp_core_stats, llc_misses),
    HWP__FS(hwp_core_stats, itlb_misses), HWP__FS(hwp_core_stats, dtlb_misses),
    HWP__FS(hwp_core_stats, cond), HWP__FS(hwp_core_stats, cond_mispredicts),
    HWP__FS(hwp_core_stats, indirect),
    HWP__FS(hwp_core_stats, indirect_mispredicts), HWP__FS(hwp_core_stats, returns),
    HWP__FS(hwp_core_stats, return_mispredicts),
    HWP__FS(hwp_core_stats, issue_slots), HWP__FS(hwp_core_stats, wasted_slots),
    HWP__FS(hwp_core_stats, finished)};

HWP_API hwp_status hwp_core_merge(hwp_core *dst, const hwp_core *src) {
    const hwp_field *f;
    size_t i;
    if (!hwp__core_ok(dst) || !hwp__core_ok(src)) return HWP_EINVAL;
    f = hwp__field_diff(&dst->desc, &src->desc, hwp__core_desc_f, HWP__N(hwp__core_desc_f));
    if (f) return hwp__fail(&dst->head, HWP_EMISMATCH, f->why);
    /* Counters add; the machine state (caches, predictor, pipeline) stays
     * dst's: a merged profile is of two streams run on two cores. */
    for (i = 0; i < HWP__N(hwp__core_stats_f); i++)
        hwp__field_set(&dst->st, &hwp__core_stats_f[i],
                       hwp__field_get(&dst->st, &hwp__core_stats_f[i]) +
                           hwp__field_get(&src->st, &hwp__core_stats_f[i]));
    dst->st.cycles = 0;
    dst->clock += src->clock;
    return hwp__fail(&dst->head, HWP_OK, "");
}

HWP_API void hwp_core_write_json(const hwp_core *c, const hwp_writer *w) {
    hwp_core_stats st;
    if (!hwp__core_ok(c)) { /* like every model: a bad handle is null */
        hwp_put_str(w, "null");
        return;
    }
    hwp_core_get_stats(c, &st);
    hwp_put_json_envelope(w, "core", 1);
    hwp__field_put(w, "desc", &c->desc, hwp__core_desc_f, HWP__N(hwp__core_desc_f));
    hwp__field_put(w, "stats", &st, hwp__core_stats_f, HWP__N(hwp__core_stats_f));
    hwp_put_str(w, "}");
}

/* Reads {"model":"core","version":1,"desc":{...},"stats":{...}} into d
 * and (when st is not NULL) st. Every desc field must be present, and
 * with st every stats field. */
static hwp_status hwp__core_read(hwp_core_desc *d, hwp_core_stats *st,
                                 const char *json, size_t n,
                                 hwp_json_err *err) {
    hwp_json j;
    char key[32];
    hwp_core_stats scratch;
    bool got_desc = false, got_stats = false;
    hwp__zero(d, sizeof *d);
    hwp_json_init(&j, json, n);
    if (!hwp_json_envelope(&j, "core", 1)) return hwp_json_status(&j, err);
    while (hwp_json_member(&j, key, sizeof key)) {
        if (hwp_json_key_is(key, "desc"))
            got_desc = hwp__field_read(&j, d, hwp__core_desc_f, HWP__N(hwp__core_desc_f),
                                       true);
        else if (hwp_json_key_is(key, "stats"))
            got_stats = hwp__field_read(&j, st ? st : &scratch, hwp__core_stats_f,
                                        HWP__N(hwp__core_stats_f), true);
        else
            hwp_json_skip(&j);
    }
    if (hwp_json_end(&j) && (!got_desc || (st && !got_stats)))
        hwp_json_fail(&j, "core: a report needs its desc and stats");
    return hwp_json_status(&j, err);
}

HWP_API hwp_status hwp_core_read_desc(hwp_core_desc *d, const char *json,
                                      size_t n, hwp_json_err *err) {
    if (!d) return HWP_EINVAL;
    return hwp__core_read(d, NULL, json, n, err);
}

HWP_API hwp_status hwp_core_read_json(hwp_core *c, const char *json, size_t n,
                                      hwp_json_err *err) {
    hwp_core_desc d;
    hwp_core_stats st;
    hwp_status s;
    const hwp_field *f;
    if (!hwp__core_ok(c)) return HWP_EINVAL;
    s = hwp__core_read(&d, &st, json, n, err);
    if (s != HWP_OK) return hwp__fail(&c->head, s, err ? err->why : "core: malformed report");
    f = hwp__field_diff(&c->desc, &d, hwp__core_desc_f, HWP__N(hwp__core_desc_f));
    if (f) return hwp__json_mismatch(&c->head, err, json, n, f->why);
    /* The report holds the counters; the machine state is not in it. */
    hwp__core_clear(c);
    c->st = st;
    c->clock = st.cycles;
    c->st.cycles = 0;
    return hwp__fail(&c->head, HWP_OK, "");
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_IMPL */
