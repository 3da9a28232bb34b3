/* minivm exact profiles: the ground truth --exact compares hwprof with.
 *
 * Plain hosted C (malloc, growable hash maps); nothing here is what a VM
 * would ship. It sees the same event records the models see (with the
 * count of bytecodes each ends) and keeps every count exactly:
 *   per bytecode           executions
 *   per load               executions, every distinct value and its count
 *   per call site          executions, every target and receiver type
 *   per path               executions (the path definition of paths.h)
 *   per interval           a path-signature for the phase reference
 */
#ifndef MINIVM_EXACT_H
#define MINIVM_EXACT_H

#include <stdint.h>

#include "hwprof/base.h"
#include "mv.h"
#include "tier.h"

/* (a, b) -> count, open addressing, grows by doubling. */
typedef struct mvx_map {
    uint64_t *key; /* 2 words per slot; a slot is empty when count == 0 */
    uint64_t *count;
    uint64_t cap, used;
} mvx_map;

void mvx_map_add(mvx_map *m, uint64_t a, uint64_t b, uint64_t n);
uint64_t mvx_map_get(const mvx_map *m, uint64_t a, uint64_t b);
void mvx_map_free(mvx_map *m);

/* One entry of the reference path stack (Vaswani et al., Table 1). A path
 * is named as the paper's descriptor names it: its start and the branch
 * directions below a leading 1 bit (newest branch in bit 0), so the
 * reference and the Hot Path Table speak of the same paths. */
typedef struct mvx_pathent {
    uint64_t start;  /* first PC of the path                 */
    uint64_t shape;  /* 1, then one bit per branch           */
    uint64_t insns;  /* bytecodes executed along the path    */
} mvx_pathent;

/* The paper's (and pathprof's default) 32-branch limit. */
#define MVX_PATH_MAX 32u

typedef struct mvx {
    uint32_t ncode;
    uint64_t *execs;  /* per code index */
    mvx_map values;   /* (load pc, value bits)   -> count */
    mvx_map targets;  /* (call pc, target pc)    -> count */
    mvx_map types;    /* (call pc, receiver type)-> count */
    mvx_map paths;    /* (path start pc, path id)-> count */
    uint64_t steps;
    /* path stack: one entry per active call, as the hardware keeps it */
    mvx_pathent *pstack;
    uint32_t pdepth, pcap;
    /* phase reference: per interval, bytecodes per path; an interval
     * closes when the paths completed in it hold `interval` bytecodes */
    uint64_t interval;
    double phase_threshold; /* Manhattan distance, 0..2                 */
    mvx_map cur, prev;      /* (start, id) -> bytecodes, this and last  */
    uint64_t cur_total, prev_total, nintervals;
    uint64_t *changes;      /* interval numbers that start a new phase  */
    size_t nchanges, capchanges;
} mvx;

int mvx_init(mvx *x, uint32_t ncode, uint64_t interval, double threshold);
void mvx_free(mvx *x);
/* One event bytecode `in`, ending a straight-line run of n bytecodes. */
void mvx_event(mvx *x, const hwp_insn *in, uint32_t n);

/* Per-PC aggregation of (pc, w, count) tuples into the policy's profile
 * summary; shared by the exact profile and the models' summaries. */
typedef struct mvx_tally {
    const mv_prog *prog;
    uint64_t *ltot, *lval, *lcnt; /* loads: executions, top value, its count */
    uint64_t *ctot, *ctgt, *ccnt; /* calls: executions, top target, count   */
    uint64_t *ttyp, *tcnt;        /* method calls: top receiver type, count */
} mvx_tally;

void mvx_tally_init(mvx_tally *t, const mv_prog *prog);
void mvx_tally_load(mvx_tally *t, uint64_t pc, uint64_t value, uint64_t n);
void mvx_tally_target(mvx_tally *t, uint64_t pc, uint64_t target, uint64_t n);
void mvx_tally_type(mvx_tally *t, uint64_t pc, uint64_t type, uint64_t n);
/* Fill out's loads and sites and free the tally. */
void mvx_tally_finish(mvx_tally *t, mvt_profile *out);

/* The exact profile in the policy's terms. */
void mvx_summary(const mvx *x, const mv_prog *prog, mvt_profile *out);

#endif
