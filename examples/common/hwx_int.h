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

/* ---- model glue (hwx_session.c) ------------------------------------------ */

/* Validate one model parameter against a scratch desc (so hwx_opts_set
 * reports a bad value at once, not at init). */
hwp_status hwx__model_param(uint32_t model, const char *key, const char *val,
                            const char **why);

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
 * style definition of seed 003 sec. 3 as hwx implements it: see
 * hwx_exact.c. */
struct hwx_exact {
    hwx_xtab pc;        /* pc -> executions, aux = taken (branches)      */
    hwx_xtab val;       /* (load pc, value) -> count                     */
    hwx_xtab key;       /* RAP key (value or addr) -> count; unused for pc */
    hwx_xtab path;      /* (start pc, length << 32 | direction bits)       */
    void *pstack;       /* the open paths (hwx_exact.c)                  */
    uint32_t rap_key;
    uint32_t pad_;
    uint64_t paths;     /* paths completed                               */
};

size_t hwx__exact_bytes(const hwx_opts *o);
void hwx__exact_init(hwx_exact *x, unsigned char **cursor, const hwx_opts *o);
void hwx__exact_insn(hwx_exact *x, const hwp_insn *in);
void hwx__exact_finish(hwx_exact *x);
void hwx__exact_merge(hwx_exact *dst, const hwx_exact *src);
/* Lookups: 0 when the key was never seen. */
uint64_t hwx__xtab_get(const hwx_xtab *t, uint64_t k1, uint64_t k2);
void hwx__xtab_add(hwx_xtab *t, uint64_t k1, uint64_t k2, uint64_t n,
                   uint64_t aux);
/* Sum of counts of keys k1 in [lo, hi] (k2 ignored): exact range count. */
uint64_t hwx__xtab_range(const hwx_xtab *t, uint64_t lo, uint64_t hi);
/* The n entries with the largest counts, into out[] (descending); returns
 * how many. */
uint32_t hwx__xtab_top(const hwx_xtab *t, hwx_xent *out, uint32_t n);
/* "label" then a number: the building block of report lines. */
void hwx__kv(const hwp_writer *w, const char *label, uint64_t v);
void hwx__exact_report_text(const hwx_exact *x, const hwp_writer *w,
                            uint32_t top);
void hwx__exact_report_json(const hwx_exact *x, const hwp_writer *w,
                            uint32_t top);

#endif /* HWX_INT_H */
