/* examples/common/hwx.h: host glue shared by the binary-translation hosts
 * (the QEMU TCG plugin in examples/qemu, the Valgrind tool in
 * examples/valgrind) and the trace replayer (examples/replay).
 *
 * Written once so that every host parses the same options, feeds the
 * models the same way, computes the same exact ground truth, prints the
 * same report and reads/writes the same trace format. The session knows
 * no model: each model of the component list (HWP_COMPONENTS in
 * hwprof/cost.h) has an adapter (hwx_<model>.c) in one registry
 * (hwx_int.h), so a model added there reaches every host.
 * Like the library it is FREESTANDING: no libc headers, no malloc. Memory
 * comes from the host (`*_bytes()` then init on caller memory), output
 * goes through hwp_writer. Hosts with a C library also get hwx_host.h
 * (checks before the guest starts, reports complete or absent).
 *
 * BUILD
 *   Meson: dependency `hwx_dep` (examples/common/meson.build) compiles the
 *   sources below into a static library. The hwprof cold paths (HWPROF_IMPL) are
 *   compiled inside hwx (hwx_impl.c): a host linking hwx must NOT define
 *   HWPROF_IMPL itself. A host that compiles the files with its own flags
 *   (Valgrind) takes `hwx_sources` and `hwx_inc`.
 *
 * OPTIONS (one "key=value" at a time, hwx_opts_set; same syntax in every
 * host, e.g. qemu -plugin ./libhwprof-tcg.so,rap=on,rap_kb=8,exact=on).
 * A value is taken whole or refused with the option's name and accepted
 * range (hwx_arg.h); a number of 0 keeps the default.
 *   <model>=on|off        enable a model: pm, strat, rap, path, coproc,
 *                         core ("profileme", "stratified", "pathprof" also
 *                         work); core times every instruction and becomes
 *                         the other models' clock (ProfileMe's stages)
 *   models=all|none|a+b   enable a set at once ('+' or ':' separated); all
 *                         is the five profilers, not the core
 *   <model>_<param>=V     a model's desc parameter (see docs/qemu.md); also
 *                         the shorthands key=pc|value|addr|target|pcaddr|dmiss
 *                         (RAP key; dmiss: the data addresses of the core's
 *                         D-cache misses, needs core=on),
 *                         hpt=512x4 (path profiler hot path table)
 *   exact=on|off          exact ground truth + accuracy report
 *   exact_mb=N            memory for the exact tables (default 256 MiB,
 *                         at most 65536)
 *   seed=N                base seed for every model (default 1)
 *   top=N                 entries per report section (default 10)
 *   report=FILE json=FILE record=FILE   output files (host-side)
 *   bbv=FILE              basic-block vectors in exp-bbv's format, one
 *                         file per vCPU/thread (hwx_session_bbv_out)
 *   bbv_interval=N        instructions per vector (default 100000000,
 *                         exp-bbv's)
 *   bbv_blocks=N          blocks the vectors number (default 131072);
 *                         the instructions of blocks beyond are counted
 *                         as dropped in the report
 *   values=on|off         read loaded values (memory callbacks)
 *   flush=N               flush the trace every N instructions (0: only
 *                         when a chunk fills and at exit)
 *   guest_base=N          QEMU -B offset if the host cannot find it (0:
 *                         let the host find it)
 *   retire=on|off         let go of code the guest unmaps (default on)
 *
 * API
 *   hwx_opts_default(o)                       no model, exact off, values on
 *   hwx_opts_set(o, key, value, &why)         one option
 *   hwx_opts_parse(o, "k=v,k=v", &why)        comma-separated list
 *   hwx_opts_validate(o, scratch, n, &why)    every enabled model's desc
 *                                             checked by the model, and
 *                                             (scratch of
 *                                             hwx_opts_scratch_bytes(o))
 *                                             every model built once
 *   hwx_opts_need_values(o)                   any enabled model reads loads
 *   hwx_session_bytes(o) / hwx_session_init(s, mem, bytes, o)
 *   hwx_session_insn(s, in)                   every retired instruction
 *   hwx_session_block_ok(s) / hwx_session_block(s, pcs, n, last, mem, k)
 *                                             a basic block at once
 *   hwx_session_core_blocks_ok(s), hwx_core_block_init(s, mem, bytes, pc,
 *   cls, ops, n) / hwx_core_block(s, blk, ops)
 *                                             the same with the core on: a
 *                                             block translated for it once
 *   hwx_session_tally_ok(s) / hwx_session_tally(s, pc, n)
 *                                             blocks' counts in bulk
 *   hwx_session_retire(s, lo, hi)             code there is gone
 *   hwx_session_finish(s)                     end of stream (flush paths)
 *   hwx_session_merge(dst, src)               per-vCPU sessions at exit
 *   hwx_session_report_text/json(s, w)
 *   hwx_session_eval_bytes(s) / hwx_session_evaluate(s, scratch, bytes)
 *                                             metrics vs exact (exact=on)
 *   hwx_session_metric(s, "rap_hot_err_pct", &m) one metric by its key
 *   hwx_x86_classify(bytes, len, &insn_len)   HWP_CLS_* from x86-64 bytes
 *   hwx_x86_decode(bytes, len, pc, &info)     the same plus target/indirect
 *   hwx_trace_*                               docs/trace-format.md
 */
#ifndef HWX_H
#define HWX_H

#include "hwprof/base.h"
#include "hwprof/cost.h"
#include "hwx_arg.h" /* hwx_parse_u64, hwx_streq, ... */

#ifdef __cplusplus
extern "C" {
#endif

/* ---- options ------------------------------------------------------------ */

/* Which models; bit positions follow hwp_model (cost.h). */
#define HWX_M_PM (1u << HWP_MODEL_PROFILEME)
#define HWX_M_STRAT (1u << HWP_MODEL_STRAT)
#define HWX_M_RAP (1u << HWP_MODEL_RAP)
#define HWX_M_PATH (1u << HWP_MODEL_PATH)
#define HWX_M_COPROC (1u << HWP_MODEL_COPROC)
#define HWX_M_CORE (1u << HWP_MODEL_CORE)
/* models=all: every profiler of the component list. The core (core=on)
 * is opt-in: it costs the host 145-430 instructions per guest
 * instruction. */
#define HWX_M_ALL (((1u << HWP_MODEL_COUNT) - 1) & ~HWX_M_CORE)

/* What the RAP model is keyed on (the paper profiles code and value
 * ranges, Mysore et al. sec. 4). */
enum { HWX_KEY_PC = 0, HWX_KEY_VALUE = 1, HWX_KEY_ADDR = 2,
       HWX_KEY_TARGET = 3, /* where taken branches and calls go     */
       HWX_KEY_PCADDR = 4, /* (pc, data address) pairs: the 2-D tree */
       HWX_KEY_DMISS = 5   /* data addresses of the loads and stores the
                              core (core=on) finds missing the L1D      */ };

#define HWX_PATH_MAX 256 /* file names                                  */
#define HWX_MAX_PARAMS 32 /* model parameters kept as text               */
#define HWX_PARAM_KEY 24
#define HWX_PARAM_VAL 40

typedef struct hwx_param {
    uint32_t model; /* hwp_model it belongs to */
    char key[HWX_PARAM_KEY]; /* without the model prefix: "kb", "eps" */
    char val[HWX_PARAM_VAL];
} hwx_param;

typedef struct hwx_opts {
    uint32_t models;    /* HWX_M_* enabled                                 */
    uint32_t exact;     /* exact ground truth on                           */
    uint32_t values;    /* host reads loaded values                        */
    uint32_t rap_key;   /* HWX_KEY_*                                       */
    uint32_t top;       /* entries per report section                      */
    uint32_t nparam;
    uint64_t seed;
    uint64_t exact_bytes;
    uint64_t flush;     /* instructions between periodic flushes, 0 off    */
    uint64_t guest_base;
    uint32_t guest_base_set;
    uint32_t bbv_blocks;  /* bbv=: ids the block map holds                */
    uint64_t bbv_interval; /* bbv=: instructions per vector              */
    uint64_t timeline;  /* timeline=: instructions between the first
                           points of the counters over time, 0 off      */
    uint32_t burst_period; /* burst_period=: mean instructions from one
                           burst to the next, 0 off (hwx_session_insn)  */
    uint32_t burst_len; /* burst_len=: instructions per burst, 1..period;
                           0 -> min(1024, period)                       */
    uint32_t retire;    /* retire=: code the host sees unmapped is let go
                           (hwx_session_retire); on by default          */
    char report[HWX_PATH_MAX];
    char json[HWX_PATH_MAX];
    char record[HWX_PATH_MAX];
    char bbv[HWX_PATH_MAX];
    hwx_param param[HWX_MAX_PARAMS]; /* model desc parameters, in order */
} hwx_opts;

void hwx_opts_default(hwx_opts *o);
/* One "key=value"; on failure returns HWP_EINVAL and *why says why (a
 * static string). `why` may be NULL. */
hwp_status hwx_opts_set(hwx_opts *o, const char *key, const char *value,
                        const char **why);
/* "k=v,k=v,..." (the plugin's argument syntax as one string). */
hwp_status hwx_opts_parse(hwx_opts *o, const char *list, const char **why);
/* Check the options before the guest starts, so that a run is refused
 * at once (non-zero exit) instead of failing in every vCPU's session:
 * every enabled model's desc is built from the options and checked by
 * the model itself; then, when `scratch` is non-NULL (at least
 * hwx_opts_scratch_bytes(o), any alignment, freed by the caller after),
 * every model is initialised there, which runs the checks that need an
 * instance. *why names the option or the model's desc field and its
 * accepted range. The exact tables are not built here: a host checks
 * that hwx_session_bytes(o) can be allocated. */
size_t hwx_opts_scratch_bytes(const hwx_opts *o);
hwp_status hwx_opts_validate(const hwx_opts *o, void *scratch, size_t bytes,
                             const char **why);
/* Does any enabled model (or the exact profile) need load values? */
bool hwx_opts_need_values(const hwx_opts *o);
/* Does any enabled part need memory events (address) at all? */
bool hwx_opts_need_memory(const hwx_opts *o);
/* burst_period=: the instructions per burst (burst_len=, or its default
 * min(1024, burst_period)); 0 with bursts off. */
uint32_t hwx_opts_burst_len(const hwx_opts *o);

/* ---- session: one per vCPU / thread ------------------------------------- */

/* One accuracy figure against exact, each model with its paper's metric
 * (the model's adapter defines them: examples/common/hwx_<model>.c). A
 * metric whose model is off (or exact is off) has valid = 0. */
typedef struct hwx_metric {
    uint32_t valid;
    uint32_t n;          /* how many items the metric averaged over       */
    double value;
} hwx_metric;

/* Room for one state pointer per registered model adapter, and for
 * their metrics. */
#define HWX_MAX_MODELS 8
#define HWX_MAX_METRICS 24

typedef struct hwx_exact hwx_exact;     /* exact ground truth (hwx_exact.c) */
typedef struct hwx_bbv hwx_bbv;         /* basic-block vectors (below)      */

/* What a timing model (the core adapter, registered first) says about
 * the instruction being fed, for the adapters after it: they get `cycle`
 * as their clock, and ProfileMe the stage cycles and event bits of its
 * selected instructions. All zero when no timing model is on. */
typedef struct hwx_timing {
    uint64_t fetch, map, issue, ready, retire; /* valid when timed        */
    uint64_t data_ready; /* map -> data ready: the last source's result */
    uint64_t cycle;   /* the modelled clock after this instruction       */
    uint64_t want;    /* instructions until a later adapter wants one
                         timed (ProfileMe's countdown); 0: none         */
    uint32_t events;  /* HWP_EV_* the model found (misses, mispredict)   */
    uint32_t timed;   /* the stage cycles are valid                      */
    uint32_t on;      /* a timing model is on in this session            */
    uint32_t pad_;
    /* hwx_core_regs: the host's registers for the instruction being fed,
     * and where they come from; NULL: the host gives none */
    const struct hwp_core_ops *ops;
    const char *regs_from;
    /* hwx_core_block: the core's translated block for the next
     * hwx_session_block and its instructions' hwp_core_ops (lengths,
     * registers); NULL: none, that block goes one instruction at a time */
    const struct hwp_core_block *blk;
    const struct hwp_core_ops *blk_ops;
} hwx_timing;

typedef struct hwx_session {
    hwp_head head;
    hwx_opts opts;
    hwp_cost cost;       /* modelled hardware overhead, all models        */
    uint64_t insns;      /* retired instructions seen                     */
    uint64_t loads, stores, branches, taken;
    uint64_t cls[HWP_CLS_COUNT];
    uint32_t finished;   /* hwx_session_finish ran                       */
    uint32_t evaluated;  /* hwx_session_evaluate filled the metrics      */
    void *st[HWX_MAX_MODELS]; /* adapter i's state (hwx_int.h), NULL: off */
    hwx_metric acc[HWX_MAX_METRICS]; /* the adapters' metrics, in order  */
    hwx_exact *exact;    /* NULL unless exact=on                          */
    hwx_bbv *bbv;        /* NULL unless bbv=FILE                          */
    struct hwx_tl *tl;   /* counters over time, NULL unless timeline=N    */
    uint64_t tl_next;    /* the clock of the next point (UINT64_MAX: off) */
    hwx_timing timing;   /* the current instruction's timing (core=on)    */
    /* burst_period=: the stratified compressors, the path profiler and
     * the co-processor see the instructions inside bursts only (the
     * hardware gated between them); the rest see every one. */
    hwp_burst gate;
    uint64_t gate_at;    /* the burst the gated models last saw (+1)      */
    uint64_t fed;        /* instructions they saw                         */
    uint64_t unseen;     /* instructions handed over without a record
                            (skip, tally): classes unknown, in cls[OTHER] */
    uint32_t quiet;      /* every enabled part can go without records
                            between bursts (hwx_session_quiet)           */
    uint64_t retired;    /* code ranges let go (hwx_session_retire)       */
} hwx_session;

/* burst_period=: how many instructions from the next one on are outside
 * bursts and need no record; 0 when the next one is needed. That is the
 * case when every enabled model is either fed in bursts, or ProfileMe
 * (which needs only its selections whole: the count runs up to the next
 * one), or RAP on code (which takes each block's count as a tally); and
 * there is no exact profile and no bbv=. A host may hand fewer than that
 * over in one hwx_session_skip, each block's count also through
 * hwx_session_tally, and then give the block that reaches a burst or the
 * selection whole: the QEMU plugin's TBs between bursts cost a callback
 * that adds their length (and with RAP, counts the TB). */
uint64_t hwx__session_quiet(const hwx_session *s);
static inline uint64_t hwx_session_quiet(const hwx_session *s) {
    return s->quiet && !s->gate.in ? hwx__session_quiet(s) : 0;
}

size_t hwx_session_bytes(const hwx_opts *o);
hwp_status hwx_session_init(hwx_session *s, void *mem, size_t bytes,
                            const hwx_opts *o);
void hwx_session_insn(hwx_session *s, const hwp_insn *in);
/* Block mode, for hosts that see basic blocks (a TB exec callback): the n
 * instructions at pcs[] retired in order; `last` is the last one's record
 * (class, next_pc, taken bit, or its load) and mem[0..nmem) the records
 * of the other memory instructions, in order; the remaining instructions
 * carry no events. Valid
 * when hwx_session_block_ok() (no exact profile: that one counts every
 * instruction). ProfileMe, the path profiler, the value models and the
 * co-processor see what per-instruction feeding gives them (the
 * co-processor's clock advances by each run of other instructions in one
 * tick, before the memory record that follows it); RAP on pc
 * counts each block's n instructions at its first pc, one combined event,
 * so its code ranges are block-granular. */
bool hwx_session_block_ok(const hwx_session *s);
/* Block mode with the core on (core=on), for hosts that translate blocks
 * (the QEMU plugin): valid when the core runs alone or with ProfileMe
 * only (the other models read the core's figures of each instruction:
 * the co-processor's miss events, RAP's dmiss key, the path profiler's
 * cycles), with no exact profile. The host translates each block for the core once
 * (hwx_core_block_init) and names it before each hwx_session_block
 * (hwx_core_block); the core then runs it in one hwp_core_run, and goes
 * one instruction at a time, with the same result, where its pipeline
 * must time one (a ProfileMe window) or a block comes unnamed. */
bool hwx_session_core_blocks_ok(const hwx_session *s);
/* The same from the options, before any session exists (a host choosing
 * its translation-time callbacks). */
bool hwx_opts_core_blocks(const hwx_opts *o);
/* VM mode, for hosts that count their instructions (bytecodes) in a
 * register: hwx_session_until() says how many instructions may retire
 * before one must come whole through hwx_session_insn (1 with exact=on,
 * which counts every instruction); hwx_session_skip(s, n) hands over n
 * instructions, fewer than that, that carry no event (no branch, call
 * or memory access). examples/lua/hwlua.c is the worked example. */
uint64_t hwx_session_until(const hwx_session *s);
void hwx_session_skip(hwx_session *s, uint64_t n);
void hwx_session_block(hwx_session *s, const uint64_t *pcs, uint32_t n,
                       const hwp_insn *last, const hwp_insn *mem,
                       uint32_t nmem);
/* Tally mode, for hosts that count each block's executions apart (the
 * QEMU plugin's inline per-TB counters) and hand them over in bulk: n
 * instructions retired in blocks that start at pc, in any order within
 * the host's drain. Valid when hwx_session_tally_ok(): RAP on code keys
 * the only model, no exact profile, no bbv=; RAP counts them as it counts
 * blocks (one weighted event at the first pc). A tally feeds RAP only:
 * the host passes the same instructions through hwx_session_skip for the
 * clock and the counts (right after the tally in tally mode; between
 * bursts, the gap's skip), and the class counts take them as "other". */
bool hwx_session_tally_ok(const hwx_session *s);
void hwx_session_tally(hwx_session *s, uint64_t pc, uint64_t n);
/* Code at [lo, hi] is gone (the host saw it unmapped, or rewritten):
 * each model lets go of what it holds for it (RAP on code keys folds its
 * ranges there, hwp_rap_retire); what was counted stays counted. */
void hwx_session_retire(hwx_session *s, uint64_t lo, uint64_t hi);
/* With bbv=FILE: where this session's vectors go (the host opens the
 * file; one per session). Set it before the first instruction. */
void hwx_session_bbv_out(hwx_session *s, const hwp_writer *w);
/* End of the stream: models that hold partial state (an open path, a
 * sample buffer) flush it. Idempotent; call it before the reports. */
void hwx_session_finish(hwx_session *s);
/* What the core (core=on) found for the instruction being handed on, for
 * the adapters registered after it (the path profiler's cycle metric, the
 * co-processor's miss stream): its modelled clock after the instruction
 * and its HWP_EV_ICMISS/DCMISS/ITLBMISS/DTLBMISS/MISPRED bits. false, and
 * zeros, when the core is off. (hwx_core.c) */
bool hwx_core_last(const hwx_session *s, uint64_t *cycle, uint32_t *events);
/* A host that knows each instruction's registers (hwprof/core.h's
 * hwp_core_ops: sources, destinations, op class) fills *ops before every
 * hwx_session_insn; the core times with those dependences and its report
 * says "registers from <from>". Call after hwx_session_init; without it
 * the core times without dependences and says so. (hwx_core.c) */
void hwx_core_regs(hwx_session *s, const struct hwp_core_ops *ops, const char *from);
/* Block mode with the core (hwx_session_core_blocks_ok): the block of n
 * instructions from pc translated for this session's core into the
 * caller's `bytes` of mem (hwprof/core.h's hwp_core_block_bytes(n)):
 * cls[i] the class of instruction i's record as hwx_session_block will
 * get it (LOAD or STORE for the memory ones among the first n - 1, the
 * last one's own class), ops[i] its length and registers. Sessions built
 * from the same options may share it. NULL when the core is off or
 * refuses the block. */
struct hwp_core_block *hwx_core_block_init(const hwx_session *s, void *mem, size_t bytes,
                                           uint64_t pc, const uint8_t *cls,
                                           const struct hwp_core_ops *ops, uint32_t n);
/* The next hwx_session_block's translated block and its ops (n of them,
 * for the instructions it feeds one at a time); blk NULL: that block's
 * records do not match the translation (an access that did not happen),
 * so it goes one instruction at a time. */
void hwx_core_block(hwx_session *s, const struct hwp_core_block *blk,
                    const struct hwp_core_ops *ops);
hwp_status hwx_session_merge(hwx_session *dst, const hwx_session *src);
void hwx_session_report_text(const hwx_session *s, const hwp_writer *w);
void hwx_session_report_json(const hwx_session *s, const hwp_writer *w);
/* A code image the host saw (docs/report-format.md, "modules"): its ELF
 * file, the guest addresses of its code (lo: where its first executable
 * segment starts) and, when the host knows it, `bias`: what was added to
 * the file's addresses when it was loaded. */
typedef struct hwx_module {
    const char *path;
    uint64_t lo, hi;     /* hi 0: unknown                                 */
    uint64_t bias;
    uint32_t have_bias, pad;
} hwx_module;
/* The session's JSON with an optional "modules" member (n may be 0),
 * which hwprof-report resolves symbols with and older readers skip. */
void hwx_session_report_json_mods(const hwx_session *s, const hwp_writer *w,
                                  const hwx_module *mods, size_t n);
/* ,"modules":[...] alone, for hosts that write their own wrapper. */
void hwx_modules_json(const hwp_writer *w, const hwx_module *mods, size_t n);

/* After the stream ends (calls hwx_session_finish): compute every
 * enabled model's accuracy against exact, which the reports then print
 * and hwx_session_metric returns. Needs exact=on and hwx_session_eval_bytes(s) of scratch
 * memory (freed by the host afterwards). */
size_t hwx_session_eval_bytes(const hwx_session *s);
hwp_status hwx_session_evaluate(hwx_session *s, void *scratch, size_t bytes);
/* One metric by its JSON report key ("rap_hot_err_pct", "hpt_overlap_pct",
 * ...): false (and m->valid = 0) when no enabled model defines it. */
bool hwx_session_metric(const hwx_session *s, const char *key, hwx_metric *m);

/* ---- basic-block vectors (hwx_bbv.c) ------------------------------------
 * exp-bbv's "T:id:count ..." lines, one per interval of N instructions,
 * for SimPoint: the one writer behind every host's bbv=FILE and
 * hwprof-report --bbv. A block starts at the first instruction and after
 * every branch; its id is its rank in order of first execution. The map
 * of block starts to ids lives in caller memory; a full map grows through
 * `grow` when the caller sets it (hwx_bbv_move into larger memory), else
 * the instructions of blocks it could not number are counted in
 * `dropped` and missing from the lines. */
#define HWX_BBV_MAX_BLOCKS (1u << 26)

struct hwx_bbv {
    hwp_writer out;      /* lines go here; write NULL: off               */
    uint64_t *key;       /* block start + 1 per slot, 0: empty           */
    uint32_t *slot_id;   /* the slot's block id                          */
    uint64_t *cnt;       /* instructions in the open interval, per id    */
    uint32_t *touched;   /* ids counted in the open interval, in order   */
    uint64_t mask;       /* slots - 1                                    */
    uint32_t max, used;  /* ids the map holds, ids given                 */
    uint32_t ntouched, id; /* ..., the open block's id (0: dropped)      */
    uint32_t in_block, pad_;
    uint64_t interval, fill, start;
    uint64_t insns;      /* instructions seen                            */
    uint64_t lines;      /* intervals written                            */
    uint64_t dropped;    /* instructions of blocks beyond the map        */
    /* A full map: the callback may hwx_bbv_move it into more memory. */
    hwp_status (*grow)(void *ctx, hwx_bbv *b);
    void *grow_ctx;
};

/* Memory for a map of `blocks` ids (1..HWX_BBV_MAX_BLOCKS), 0 beyond. */
size_t hwx_bbv_bytes(uint32_t blocks);
/* HWP_EINVAL for a zero interval, HWP_ENOSPC for memory too small. */
hwp_status hwx_bbv_init(hwx_bbv *b, void *mem, size_t bytes, uint32_t blocks,
                        uint64_t interval, const hwp_writer *out);
/* n instructions retired in a straight run from `pc` (one instruction, a
 * TB, a VM's event-free instructions); ends_block: the last one is a
 * branch. pc matters only when a block starts (hwx_bbv_until says when
 * a run may come without one: after the first instruction of a block). */
void hwx_bbv_run(hwx_bbv *b, uint64_t pc, uint64_t n, bool ends_block);
/* The map into new memory of `blocks` ids (at least the ids given); the
 * old memory is the caller's to free. */
hwp_status hwx_bbv_move(hwx_bbv *b, void *mem, size_t bytes, uint32_t blocks);
/* The last, partial interval's line. */
void hwx_bbv_finish(hwx_bbv *b);

/* ---- x86-64 branch classification -------------------------------------- */

typedef struct hwx_x86_info {
    uint32_t cls;       /* HWP_CLS_OTHER or a branch class                 */
    uint32_t len;       /* decoded length, 0 if it could not be decoded    */
    uint32_t indirect;  /* target comes from a register or memory          */
    uint32_t has_target;/* direct branch: target below is valid            */
    uint64_t target;    /* pc + len + displacement                         */
} hwx_x86_info;

/* Decode the instruction at `bytes` (at most `len` bytes available, as in
 * 64-bit mode). Returns HWP_CLS_BR_COND (jcc, loop*, jrcxz), HWP_CLS_JUMP
 * (jmp rel), HWP_CLS_CALL (call rel or indirect), HWP_CLS_RET (ret, retf,
 * iret), HWP_CLS_INDIRECT (jmp r/m) or HWP_CLS_OTHER. Never reads past
 * `len`. */
uint32_t hwx_x86_decode(const uint8_t *bytes, size_t len, uint64_t pc,
                        hwx_x86_info *info);
uint32_t hwx_x86_classify(const uint8_t *bytes, size_t len,
                          uint32_t *insn_len);

/* The registers of the instruction at `bytes` in hwprof/core.h's form,
 * the numbers the Valgrind tool gives: 1..16 RAX..R15 (encoding order),
 * 17 the flags, 18..33 XMM/YMM0..15, 34 the x87 stack (and MMX). Sources:
 * ModRM reg and r/m (REX.R, REX.B), VEX.vvvv, SIB base and index (REX.X)
 * of a memory operand, the implicit ones (RSP of push/pop/call/ret, RAX
 * and RDX of mul/div, RSI/RDI/RCX of string ops, CL of shifts) and the
 * flags jcc/cmovcc/setcc/adc/sbb read; a two-operand form's destination
 * is a source too. Destinations: registers first, then the flags;
 * `upd` marks stack and string pointer updates. The op class is MUL,
 * DIV, FP or FDIV where the opcode says so. Always sets ops->regs = 1.
 * Returns HWX_X86_OPS_OK, with HWX_X86_SRC_OVER / _DST_OVER when
 * sources beyond three or destinations beyond two were left out, or 0
 * (no registers, ops empty) for an opcode it does not decode (EVEX,
 * syscall, cpuid and other system instructions). Never reads past
 * `len`. */
enum { HWX_X86_OPS_OK = 1u, HWX_X86_SRC_OVER = 2u, HWX_X86_DST_OVER = 4u };
uint32_t hwx_x86_ops(const uint8_t *bytes, size_t len, struct hwp_core_ops *ops);

/* ---- trace record / replay (docs/trace-format.md) ----------------------- */

#define HWX_TRACE_VERSION 2u /* written; readers take 1 and 2         */
#define HWX_TRACE_CHUNK 65536u /* payload bytes that close a chunk        */
#define HWX_TRACE_HDR 48u      /* room for a chunk header before payload  */
#define HWX_TRACE_SLACK 64u    /* room for the record that crosses CHUNK  */

/* Writer: encodes records into its own buffer and emits whole chunks
 * through `out`. One writer per vCPU; the chunks of several writers may be
 * interleaved in one file (each chunk names its vCPU). */
typedef struct hwx_trace_writer {
    hwp_writer out;
    uint32_t vcpu;
    uint32_t len;         /* payload bytes buffered                       */
    uint64_t nrec;        /* records in the buffered chunk                */
    uint64_t total;       /* records written by this writer               */
    uint64_t prev_next;   /* delta state, reset at each chunk             */
    uint64_t prev_addr;
    uint8_t buf[HWX_TRACE_HDR + HWX_TRACE_CHUNK + HWX_TRACE_SLACK];
} hwx_trace_writer;

/* The 16-byte file header; write it once per file. */
void hwx_trace_write_header(const hwp_writer *out);
void hwx_trace_writer_init(hwx_trace_writer *t, const hwp_writer *out,
                           uint32_t vcpu);
void hwx_trace_put(hwx_trace_writer *t, const hwp_insn *in);
void hwx_trace_flush(hwx_trace_writer *t); /* emit the buffered chunk */
/* Code in [lo, hi] is gone (an unmap) at this point of the writer's
 * stream: its chunk is emitted first, then a retire item, so a replay
 * retires it between the same two records (hwx_session_retire). */
void hwx_trace_put_retire(hwx_trace_writer *t, uint64_t lo, uint64_t hi);
/* The end marker with the file's total record count (all writers). */
void hwx_trace_write_end(const hwp_writer *out, uint64_t total_records);

/* Reader over a whole file in memory (mmap it). Never reads outside
 * [buf, buf + len); on malformed input returns -1 with err_off (byte
 * offset of the offending byte) and why set. */
typedef struct hwx_trace_reader {
    const uint8_t *buf;
    size_t len, off;
    size_t chunk_end;     /* end of the current chunk payload             */
    uint64_t chunk_left;  /* records left in the current chunk            */
    uint64_t records;     /* records delivered                            */
    uint64_t prev_next, prev_addr;
    uint32_t vcpu;        /* vCPU of the current chunk or retire item     */
    uint32_t ended;       /* end marker seen                              */
    uint32_t version;     /* the file's: 1 or 2                           */
    uint32_t want_retire; /* set after open: hwx_trace_next returns the
                             retire items (else it passes over them)    */
    uint64_t lo, hi;      /* the last retire item's range                 */
    uint64_t retires;     /* retire items read                            */
    size_t err_off;
    const char *why;
} hwx_trace_reader;

hwp_status hwx_trace_open(hwx_trace_reader *r, const void *buf, size_t len);
/* 1: *out holds the next record (r->vcpu says whose); 0: clean end;
 * -1: error (r->err_off, r->why); HWX_TRACE_RETIRE (only with
 * r->want_retire): code in [r->lo, r->hi] of vCPU r->vcpu is gone. */
#define HWX_TRACE_RETIRE 2
int hwx_trace_next(hwx_trace_reader *r, hwp_insn *out);

#ifdef __cplusplus
}
#endif

#endif /* HWX_H */
