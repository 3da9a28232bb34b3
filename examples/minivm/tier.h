/* minivm tiering policy: what a JIT would compile, specialise and inline,
 * decided from a profile summary. The same policy runs on the summary
 * hwprof's models produce (prof.c) and on the exact one (exact.c), so
 * --exact can report how far the cheap profile leads the JIT astray.
 *
 * Decisions:
 *   trace     a hot path: its share of path executions >= trace_share
 *   load      a hot load (>= hot_share of load executions and at least
 *             min_execs executions) whose most
 *             common value covers >= invariance of its executions
 *   inline    a hot call site (>= hot_share of calls, >= min_execs)
 *             whose receiver type
 *             (method calls) or target (other calls) covers >= mono of
 *             its executions
 *   phase     a phase change: the interval at which to re-profile
 */
#ifndef MINIVM_TIER_H
#define MINIVM_TIER_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "mv.h"

typedef struct mvt_load {
    uint64_t pc, execs, top_value, top_count;
} mvt_load;

typedef struct mvt_site {
    uint64_t pc, execs;
    uint64_t top_target, top_target_count;
    uint64_t top_type, top_type_count; /* method calls only */
    int method;
} mvt_site;

typedef struct mvt_path {
    uint64_t start; /* path start PC                           */
    uint64_t id;    /* length << 32 | direction bits            */
    uint64_t count; /* executions                               */
} mvt_path;

enum { MVT_TRACE, MVT_LOAD, MVT_INLINE, MVT_PHASE, MVT_KINDS };

typedef struct mvt_profile {
    mvt_load *loads;
    size_t nloads;
    uint64_t load_total;
    mvt_site *sites;
    size_t nsites;
    uint64_t call_total;
    mvt_path *paths;
    size_t npaths;
    uint64_t path_total;
    uint64_t *phases; /* interval numbers at which a new phase starts */
    size_t nphases;
    unsigned have;    /* bit per MVT_* kind this profile can decide  */
} mvt_profile;

typedef struct mvt_policy {
    double trace_share; /* 0.05 */
    double hot_share;   /* 0.02 */
    uint64_t min_execs; /* 1000: loads and sites executed less are cold
                           (the stratified paper's selection, 5.3.1) */
    double invariance;  /* 0.90 */
    double mono;        /* 0.95 */
    unsigned phase_slack; /* phase changes match within this many intervals */
} mvt_policy;

/* One decision: a key (path start and id, load pc, call pc, interval)
 * and what the profile said about it, for printing. */
typedef struct mvt_item {
    uint64_t key, key2;
    double share, detail;
} mvt_item;

typedef struct mvt_decisions {
    mvt_item *items[MVT_KINDS];
    size_t n[MVT_KINDS];
    unsigned have;
} mvt_decisions;

typedef struct mvt_agreement {
    double precision[MVT_KINDS], recall[MVT_KINDS];
    size_t tp[MVT_KINDS], fp[MVT_KINDS], fn[MVT_KINDS];
    unsigned have;
} mvt_agreement;

void mvt_policy_default(mvt_policy *p);
void mvt_decide(const mvt_profile *prof, const mvt_policy *pol,
                mvt_decisions *out);
void mvt_agree(const mvt_decisions *got, const mvt_decisions *truth,
               const mvt_policy *pol, mvt_agreement *out);
void mvt_print(FILE *f, const char *label, const mv_prog *prog,
               const mvt_decisions *d);
void mvt_print_agreement(FILE *f, const mvt_agreement *a);
void mvt_decisions_free(mvt_decisions *d);
void mvt_profile_free(mvt_profile *p);
const char *mvt_kind_name(unsigned k);

#endif
