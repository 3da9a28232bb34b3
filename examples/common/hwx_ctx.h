/* SPDX-License-Identifier: MIT */
/* examples/common/hwx_ctx.h: the host's dictionary of the co-processor's
 * calling contexts.
 *
 * The co-processor's call-stack program (Zilles and Sohi, sec. 3.6) keeps
 * only a hash per calling context, as the hardware would: its report
 * cannot say which calls a context was. The host sees the same calls
 * and returns, so it keeps the same stack beside it (64 call sites,
 * SP wrapping, DEPTH saturating at 63, as coproc.h's program does) and,
 * at each call and return, records the new context's key
 * (hwp_cp_callstack_key of its innermost `depth` call sites) with those
 * sites and the callee of the innermost call. A call or return whose
 * sample the co-processor dropped (a full buffer) never reaches its
 * stack, so the host leaves it out of this stack too, counts it in
 * `lost`, and keeps the true stack beside it: a context recorded while
 * the two differ is marked stale (the co-processor counted it for calls
 * that were not, or no longer, open). The dictionary is fixed in
 * size: a context that finds it full is not stored and is counted in
 * `overflow`. It is written beside the model's report as host data
 * ("coproc_contexts", docs/report-format.md), which hwprof-report joins
 * with the model's per-context counts to write folded stacks. Freestanding. */
#ifndef HWX_CTX_H
#define HWX_CTX_H

#include "hwprof/base.h"

#define HWX_CTX_STACK 64u  /* coproc.h's call-site stack                  */
#define HWX_CTX_SITES 8u   /* call sites kept per context (>= the depth)  */
#define HWX_CTX_ENTRIES 4096u

typedef struct hwx_ctx_ent {
    uint64_t key;
    uint64_t site[HWX_CTX_SITES]; /* site[0] the innermost                */
    uint64_t callee;              /* of site[0]; 0 when calls from it went
                                     to more than one function            */
    uint32_t n;                   /* sites                                 */
    uint32_t flags;               /* HWX__CTX_USED, _DEEPER, _STALE        */
} hwx_ctx_ent;

/* A call-site stack as the co-processor's program keeps it. */
typedef struct hwx_ctx_stack {
    uint64_t site[HWX_CTX_STACK], callee[HWX_CTX_STACK];
    uint32_t sp, depth;
} hwx_ctx_stack;

typedef struct hwx_ctx {
    hwx_ctx_stack cp, real; /* the co-processor's, and every call's     */
    uint32_t keep;
    uint32_t stored;
    uint64_t overflow;
    uint64_t lost; /* calls and returns the co-processor dropped        */
    hwx_ctx_ent *e; /* HWX_CTX_ENTRIES, open addressing by key */
} hwx_ctx;

size_t hwx_ctx_bytes(void);
/* keep: the program's depth (1..HWX_CTX_SITES); e: hwx_ctx_bytes() of
 * zeroed storage. Records the outermost context (no call yet). */
void hwx_ctx_init(hwx_ctx *c, void *e, uint32_t keep);
/* A call (in->pc the call site, in->next_pc the callee) or a return;
 * `dropped` when the co-processor dropped its sample. */
void hwx_ctx_step(hwx_ctx *c, const hwp_insn *in, int dropped);
/* Contexts of src that dst lacks; overflow adds. */
void hwx_ctx_merge(hwx_ctx *dst, const hwx_ctx *src);
/* ,"coproc_contexts":{...} */
void hwx_ctx_json(const hwx_ctx *c, const hwp_writer *w);

#endif
