/* examples/common/hwx_int.h: private declarations shared by the hwx
 * sources. Not for hosts: use hwx.h. */
#ifndef HWX_INT_H
#define HWX_INT_H

#include "hwx.h"

/* The models the session integrates. */
#include "hwprof/profileme.h"
#include "hwprof/stratified.h"
#include "hwprof/rap.h"
#include "hwprof/pathprof.h"
#include "hwprof/coproc.h"
#include "hwprof/core.h"

/* ---- model adapters (hwx_<model>.c) and their registry (hwx_session.c) ----
 *
 * The session knows no model: it loops over hwx__registry, and each
 * adapter says which options it takes, which events it wants, how it
 * sizes and inits its model from the options, feeds it, flushes and
 * merges it, reports it and scores it against the exact profile. Adding
 * a model to every host = its row in the component list (cost.h) and its
 * adapter file.
 *
 * Every adapter keeps its instances in one state struct of `state_size`
 * bytes, carved from the session's memory right before the model
 * storage it asks for with `bytes`. Descs go through a `desc_size`
 * bundle (at most HWX_DESC_MAX bytes): `defaults` fills the host's
 * choices from the global options, `set` applies one model_key=value
 * (key without the model prefix) in the order given. */

#define HWX_DESC_MAX 1024

/* bbv= defaults: exp-bbv's interval; a map of 131072 blocks (4.5 MiB)
 * numbers every block of a compressor or an interpreter, and a compiler
 * with bbv_blocks raised. */
#define HWX__BBV_INTERVAL 100000000u
#define HWX__BBV_BLOCKS (1u << 17)

/* What an adapter wants from the stream (hwx_opts_need_values/memory). */
#define HWX_WANT_VALUES 1u /* loaded values                              */
#define HWX_WANT_MEMORY 2u /* load/store records with their addresses    */

/* One basic block (hwx_session_block). */
typedef struct hwx_block {
    const uint64_t *pcs;
    const hwp_insn *last;
    const hwp_insn *mem;
    uint32_t n, nmem;
    uint64_t cycle; /* instructions retired before the block */
} hwx_block;

/* A metric an adapter computes: its JSON key, the text line's label,
 * decimals and unit (label NULL: the adapter's eval_text prints it). */
typedef struct hwx_metric_def {
    const char *key;
    const char *label;
    unsigned dec;
    const char *unit;
} hwx_metric_def;

/* A model desc inside an adapter's desc bundle: its field table and
 * its offset in the bundle. */
typedef struct hwx_desc_part {
    const hwp_field *(*fields)(size_t *n);
    size_t off;
} hwx_desc_part;

#define HWX_MAX_PARTS 3
#define HWX_COUNT(a) (sizeof(a) / sizeof((a)[0]))

typedef struct hwx_adapter {
    const char *name;    /* option prefix and models= name: "rap"          */
    const char *alias;   /* long name ("pathprof"), or NULL                */
    uint32_t model;      /* hwp_model: its bit in hwx_opts.models, cost    */
    const char *params;  /* its shorthands, for the unknown-key message    */
    /* The model descs in the bundle, in order (fields NULL past the
     * last): a parameter `set` does not take is a member of the first
     * that has one of its name, by the name its report gives it. */
    hwx_desc_part parts[HWX_MAX_PARTS];
    size_t desc_size;    /* bytes of its desc bundle (<= HWX_DESC_MAX)      */
    size_t state_size;   /* bytes of its state struct                      */
    const hwx_metric_def *metrics; /* nmetrics definitions, in report order */
    uint32_t nmetrics;
    void (*defaults)(void *d, const hwx_opts *o);
    /* One shorthand parameter: key without the model prefix, opt as the
     * user spelt it (for messages). A key it does not take returns
     * HWP_EINVAL with *why NULL: the session then looks it up in parts. */
    hwp_status (*set)(void *d, const char *key, const char *opt, const char *val,
                      const char **why);
    uint32_t (*wants)(const hwx_opts *o); /* HWX_WANT_* */
    /* Model storage after the state struct (each piece hwp_align'ed);
     * 0 with the model's own reason in *why when a desc is invalid. */
    size_t (*bytes)(const void *d, const hwx_opts *o, const char **why);
    /* Carve instances from *cur and init them; a failure returns the
     * status with the model's reason through hwp_fail(&s->head, ...). */
    hwp_status (*init)(void *st, void *d, unsigned char **cur, hwx_session *s);
    void (*insn)(void *st, const hwp_insn *in, uint64_t cycle);
    /* NULL: the adapter needs every instruction whole (hwx_session_block_ok
     * is then false). */
    void (*block)(void *st, const hwx_block *b);
    void (*flush)(void *st);
    void (*merge)(void *dst, const void *src);
    void (*report_text)(const void *st, const hwx_session *s, const hwp_writer *w);
    /* Writes ,"key":{...} into the session's "models" object. */
    void (*report_json)(const void *st, const hwp_writer *w);
    /* Scoring against s->exact (exact=on, after flush). */
    size_t (*eval_bytes)(const void *st, const hwx_session *s);
    void (*evaluate)(void *st, const hwx_session *s, unsigned char *scratch,
                     hwx_metric *out);
    /* Text lines of metrics whose label is NULL; may be NULL. */
    void (*eval_text)(const hwx_metric *m, const hwp_writer *w);
    /* For hosts that count event-free instructions themselves (a VM's
     * dispatch loop, hwx_session_skip): `skip` takes n instructions that
     * carry no event (NULL: nothing to do), `until` says how many may go
     * by that way before the adapter must see one whole (ProfileMe's next
     * selection; NULL: any number). */
    void (*skip)(void *st, uint64_t n);
    uint64_t (*until)(const void *st);
    /* With burst_period= set: 1 when the adapter sees the instructions
     * inside bursts only; its figures are then shares of what it saw (or
     * say they are). `burst_end`, when non-NULL, runs before the first
     * instruction of each burst after the first: what the last burst left
     * open (a path) ends there, since the instructions between are unseen. */
    uint32_t in_bursts;
    void (*burst_end)(void *st);
    /* For hosts that count each block's executions apart and hand them
     * over in bulk (hwx_session_tally): n instructions retired in blocks
     * that start at pc, with no record of any of them. NULL: the adapter
     * needs the records (every model but RAP on code). */
    void (*tally)(void *st, uint64_t pc, uint64_t n);
    /* Code at [lo, hi] is gone (unmapped, or rewritten by a JIT): the
     * adapter lets go of what it holds for those addresses (RAP on code
     * keys folds their ranges). NULL: it holds nothing per address. */
    void (*retire)(void *st, uint64_t lo, uint64_t hi);
    /* Counters over time (timeline=N): the names (NULL-terminated) of
     * what `counters` writes, each cumulative since init. NULL: none. */
    const char *const *counter_names;
    void (*counters)(const void *st, uint64_t *out);
} hwx_adapter;

/* The session's counters over time (hwx_session.c): points of the clock
 * and every enabled adapter's counters, then the modelled overhead. At
 * most HWX_TL_POINTS: a full timeline keeps every other point and
 * doubles `every`, so any run fits and the points stay evenly spaced. */
#define HWX_TL_POINTS 512u
typedef struct hwx_tl {
    uint64_t every;  /* instructions between points                    */
    uint32_t n;      /* points held                                    */
    uint32_t cols;   /* values per point: the clock, counters, overhead */
    uint64_t *v;     /* HWX_TL_POINTS x cols                           */
} hwx_tl;

/* The registry: the component list's MODEL rows (HWP_COMPONENTS in
 * cost.h), in its order, which is the reports' order; the core comes
 * first, so that it times each instruction before the others see it
 * (hwx_timing). Model <c>'s adapter file (hwx_<c>.c) defines
 * `const hwx_adapter hwx__adapter_<c>`. */
#define HWX__DECLARE(c, header, envelope, kind, model) \
    HWP_ONLY_##kind(extern const hwx_adapter hwx__adapter_##c;)
HWP_COMPONENTS(HWX__DECLARE)
#undef HWX__DECLARE

extern const hwx_adapter *const hwx__registry[];
extern const uint32_t hwx__nadapters;
/* The adapter of an hwp_model, or NULL. */
const hwx_adapter *hwx__adapter_of(uint32_t model);

/* Validate one model parameter against a scratch desc (so hwx_opts_set
 * reports a bad value at once, not at init). */
hwp_status hwx__model_param(uint32_t model, const char *key, const char *val,
                            const char **why);

/* Shared by the adapters (hwx_session.c). Numbers take any value of
 * their type here; the model's own check refuses what it cannot model. */
hwp_status hwx__bad(const char **why, const char *reason);
hwp_status hwx__unknown(const char **why); /* see hwx_adapter.set */
hwp_status hwx__u32(const char *opt, const char *v, uint32_t *out, const char **why);
hwp_status hwx__u64(const char *opt, const char *v, uint64_t *out, const char **why);
/* One of names[] (NULL-terminated list) -> vals[i]. */
hwp_status hwx__enum(const char *opt, const char *v, const char *const *names,
                     const uint32_t *vals, uint32_t *out, const char **why);
/* The model's reason for refusing a desc: its init checks the desc
 * before the storage (base.h admits storage last), so none is given. `call` is
 * the init call on a local instance `x_` with storage `m_`, 0 bytes. */
#define HWX__WHY(type, call, why)                                           \
    do {                                                                    \
        type x_;                                                            \
        unsigned char m_[HWP_ALIGN];                                       \
        if ((call) != HWP_OK && (why)) *(why) = hwp_why(&x_);               \
    } while (0)
void hwx__pct(const hwp_writer *w, double num, double den);
/* "  (0.873)": the exact share of `value` among the loads at `pc`. */
void hwx__exact_inv(const hwp_writer *w, const hwx_exact *x, uint64_t pc, uint64_t value);
void hwx__metric_text(const hwp_writer *w, const char *name, const hwx_metric *m,
                      unsigned dec, const char *unit);

/* ---- exact ground truth (hwx_exact.c) ------------------------------------ */

/* One table entry: k1/k2 the key, count the occurrences, aux a second
 * counter (taken count for branch PCs). count == 0 marks an empty slot. */
typedef struct hwx_xent {
    uint64_t k1, k2, count, aux;
} hwx_xent;

typedef struct hwx_xtab {
    hwx_xent *e;
    uint64_t mask;      /* entries - 1 (power of two)                   */
    uint64_t used;
    uint64_t limit;     /* refuse new keys beyond this (load 3/4)       */
    uint64_t dropped;   /* occurrences of keys that found no room       */
    uint64_t total;     /* occurrences recorded                          */
} hwx_xtab;

/* Exact profiles of the stream. Path descriptors follow the Ball-Larus
 * style definition of Vaswani et al. sec. 3 as hwx implements it: see
 * hwx_exact.c. */
struct hwx_exact {
    hwx_xtab pc;        /* pc -> executions, aux = taken (branches)      */
    hwx_xtab val;       /* (load pc, value) -> count                     */
    hwx_xtab key;       /* RAP key (value, addr, or pc and addr) -> count */
    hwx_xtab path;      /* (start pc, length << 32 | direction bits)       */
    /* core=on: (pc, HWX_TM_LATENCY) -> timed executions, aux = their
     * fetch -> retire-ready cycles (the span ProfileMe's total-latency
     * estimator sums); (pc, HWX_TM_WASTED) -> executions, aux = issue
     * slots wasted while in progress. From core.h's finished records. */
    hwx_xtab tm;
    void *pstack;       /* the open paths (hwx_exact.c)                  */
    uint32_t rap_key;
    uint32_t pad_;
    uint64_t paths;     /* paths completed                               */
};

enum { HWX_TM_LATENCY = 0, HWX_TM_WASTED = 1 }; /* hwx_exact.tm's k2 */

size_t hwx__exact_bytes(const hwx_opts *o);
void hwx__exact_init(hwx_exact *x, unsigned char **cursor, const hwx_opts *o);
/* core_ev: the HWP_EV_* bits the core (core=on) found for `in`, else 0. */
void hwx__exact_insn(hwx_exact *x, const hwp_insn *in, uint32_t core_ev);
/* The core's finished records (timing and wasted slots) into x->tm. */
void hwx__exact_timed(hwx_exact *x, hwx_session *s);
void hwx__exact_finish(hwx_exact *x);
void hwx__exact_merge(hwx_exact *dst, const hwx_exact *src);
/* Lookups: 0 when the key was never seen. */
uint64_t hwx__xtab_get(const hwx_xtab *t, uint64_t k1, uint64_t k2);
/* The entry itself (count and aux), or NULL. */
const hwx_xent *hwx__xtab_find(const hwx_xtab *t, uint64_t k1, uint64_t k2);
void hwx__xtab_add(hwx_xtab *t, uint64_t k1, uint64_t k2, uint64_t n,
                   uint64_t aux);
/* Sum of counts of keys k1 in [lo, hi] (k2 ignored): exact range count. */
uint64_t hwx__xtab_range(const hwx_xtab *t, uint64_t lo, uint64_t hi);
/* Sum of counts of keys with k1 in [lo1, hi1] and k2 in [lo2, hi2]. */
uint64_t hwx__xtab_box(const hwx_xtab *t, uint64_t lo1, uint64_t hi1,
                       uint64_t lo2, uint64_t hi2);
/* The n entries with the largest counts, into out[] (descending); returns
 * how many. */
uint32_t hwx__xtab_top(const hwx_xtab *t, hwx_xent *out, uint32_t n);
/* "label" then a number: the building block of report lines. */
void hwx__kv(const hwp_writer *w, const char *label, uint64_t v);
void hwx__exact_report_text(const hwx_exact *x, const hwp_writer *w,
                            uint32_t top);
void hwx__exact_report_json(const hwx_exact *x, const hwp_writer *w,
                            uint32_t top);

/* The path adapter's block map (hwx_blocks.c): block start -> the branch
 * that ends it, for hwp_path_decode. */
#define HWX_BLK_RAS 64u       /* return-address stack pairing calls, returns */
#define HWX_BLK_PATH_MAX 256u /* block starts written per decoded path       */
typedef struct hwx_blocks {
    uint64_t *key;            /* block starts; UINT64_MAX: empty slot       */
    hwp_path_block *b;
    uint32_t mask;            /* capacity - 1                               */
    uint32_t nret;            /* calls pushed on ret[] (wraps)              */
    uint64_t stored, overflow, conflicts;
    uint64_t start;           /* where the next block starts                */
    uint64_t ret[HWX_BLK_RAS];
    int missed;               /* set by a lookup that found no block        */
} hwx_blocks;
size_t hwx_blocks_bytes(uint32_t cap);
void hwx_blocks_init(hwx_blocks *m, unsigned char **cur, uint32_t cap);
void hwx_blocks_begin(hwx_blocks *m, uint64_t pc);
void hwx_blocks_branch(hwx_blocks *m, uint64_t pc, uint64_t next_pc, uint32_t cls,
                       int taken);
bool hwx_blocks_get(void *ctx, uint64_t start, hwp_path_block *out);
void hwx_blocks_merge(hwx_blocks *dst, const hwx_blocks *src);
void hwx_blocks_json(hwx_blocks *m, const hwp_path *p, const hwp_path_row *rows, size_t n,
                     const hwp_writer *w);

/* ---- the core adapter's finished records (hwx_core.c) ------------------- */

/* Finished timed records of the session's core, oldest first (consumes
 * them: hwp_core_done); 0 when the core is off. */
size_t hwx__core_done(hwx_session *s, hwp_core_rec *out, size_t cap);
/* Block mode with the core: runs the block named by hwx_core_block, or
 * returns false for the session to feed it one instruction at a time. */
bool hwx__core_block(hwx_session *s, const hwx_block *b);

/* ---- ProfileMe's scores with the core's timing (hwx_pm.c) ---------------- */

/* Against x->pc and x->tm, over the PCs of E[k] = N / S >= min_ek
 * (S: hwp_pm_table_interval): [0] the fraction of total-latency
 * estimates inside 1 +/- 1/sqrt(E[k]); [1] sum |est - exact| / sum exact
 * of the wasted issue slots (paired tables only; exact as the paper
 * counts them: the core's figure plus I's own issue, one per execution);
 * [2] sum est / sum exact of the same (the bias, apart from the noise);
 * [3] the share of the exact top-20
 * PCs by total latency among the estimated top-20 (all PCs). All invalid
 * unless every execution was timed and no exact table dropped a key. */
void hwx__pm_score(const hwp_pm_table *t, const hwx_exact *x, double min_ek,
                   bool paired, hwx_metric out[4]);

#endif /* HWX_INT_H */
