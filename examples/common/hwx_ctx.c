/* SPDX-License-Identifier: MIT */
/* examples/common/hwx_ctx.c: the host's dictionary of the co-processor's
 * calling contexts (hwx_ctx.h). */
#include "hwx_ctx.h"

#include "hwprof/coproc.h"

#define HWX__CTX_USED 1u
#define HWX__CTX_DEEPER 2u /* seen with more calls open than it keeps */
#define HWX__CTX_STALE 4u  /* seen while the co-processor's stack was off */

size_t hwx_ctx_bytes(void) { return HWX_CTX_ENTRIES * sizeof(hwx_ctx_ent); }

/* Add (or complete) the context of sites[0..n); flags: HWX__CTX_DEEPER,
 * HWX__CTX_STALE. */
static void hwx__ctx_put(hwx_ctx *c, uint64_t key, const uint64_t *site, uint32_t n,
                         uint64_t callee, uint32_t flags) {
    uint32_t h = (uint32_t)key & (HWX_CTX_ENTRIES - 1u), k, j;
    for (k = 0; k < HWX_CTX_ENTRIES; k++, h = (h + 1u) & (HWX_CTX_ENTRIES - 1u)) {
        hwx_ctx_ent *e = &c->e[h];
        if (!(e->flags & HWX__CTX_USED)) {
            e->key = key;
            e->n = n;
            for (j = 0; j < n; j++) e->site[j] = site[j];
            e->callee = callee;
            e->flags = HWX__CTX_USED | flags;
            c->stored++;
            return;
        }
        if (e->key != key) continue;
        /* one call site, several callees: an indirect call */
        if (e->callee != callee) e->callee = 0;
        e->flags |= flags;
        return;
    }
    c->overflow++;
}

/* The innermost n call sites of t, as the program's routine reads them. */
static uint32_t hwx__ctx_sites(const hwx_ctx_stack *t, uint32_t keep, uint64_t *s) {
    uint32_t n = t->depth < keep ? t->depth : keep, j;
    for (j = 0; j < n; j++) s[j] = t->site[(t->sp - 1u - j) & (HWX_CTX_STACK - 1u)];
    return n;
}

/* The co-processor's context now; stale when the true stack's innermost
 * sites differ (the co-processor's context then names calls that are not
 * the open ones; a difference deeper than it keeps changes nothing it
 * records). */
static void hwx__ctx_now(hwx_ctx *c) {
    uint64_t s[HWX_CTX_SITES], r[HWX_CTX_SITES];
    uint32_t n = hwx__ctx_sites(&c->cp, c->keep, s), j, flags = 0;
    if (c->lost) {
        int same = hwx__ctx_sites(&c->real, c->keep, r) == n;
        for (j = 0; same && j < n; j++) same = s[j] == r[j];
        if (!same) flags |= HWX__CTX_STALE;
    }
    if (c->cp.depth > n) flags |= HWX__CTX_DEEPER;
    hwx__ctx_put(c, hwp_cp_callstack_key(s, n), s, n,
                 n ? c->cp.callee[(c->cp.sp - 1u) & (HWX_CTX_STACK - 1u)] : 0, flags);
}

void hwx_ctx_init(hwx_ctx *c, void *e, uint32_t keep) {
    hwp_zero(c, sizeof *c);
    hwp_zero(e, hwx_ctx_bytes()); /* the host's storage comes uncleared */
    c->e = (hwx_ctx_ent *)e;
    c->keep = keep < 1 ? 1 : keep > HWX_CTX_SITES ? HWX_CTX_SITES : keep;
    hwx__ctx_now(c);
}

/* What coproc.h's routine does to its stack at a call or a return. */
static void hwx__ctx_move(hwx_ctx_stack *t, const hwp_insn *in) {
    if (in->cls == HWP_CLS_CALL) {
        t->site[t->sp] = in->pc;
        t->callee[t->sp] = in->next_pc;
        t->sp = (t->sp + 1u) & (HWX_CTX_STACK - 1u);
        if (t->depth < HWX_CTX_STACK - 1u) t->depth++;
    } else if (in->cls == HWP_CLS_RET && t->depth) {
        t->sp = (t->sp - 1u) & (HWX_CTX_STACK - 1u);
        t->depth--;
    }
}

void hwx_ctx_step(hwx_ctx *c, const hwp_insn *in, int dropped) {
    if (in->cls != HWP_CLS_CALL && in->cls != HWP_CLS_RET) return;
    hwx__ctx_move(&c->real, in);
    if (dropped) {
        c->lost++;
        return; /* the co-processor's context has not changed */
    }
    hwx__ctx_move(&c->cp, in);
    hwx__ctx_now(c);
}

void hwx_ctx_merge(hwx_ctx *dst, const hwx_ctx *src) {
    uint32_t i;
    for (i = 0; i < HWX_CTX_ENTRIES; i++) {
        const hwx_ctx_ent *e = &src->e[i];
        if (e->flags & HWX__CTX_USED)
            hwx__ctx_put(dst, e->key, e->site, e->n, e->callee, e->flags & ~HWX__CTX_USED);
    }
    dst->overflow += src->overflow;
    dst->lost += src->lost;
}

void hwx_ctx_json(const hwx_ctx *c, const hwp_writer *w) {
    uint32_t i, j;
    int first = 1;
    hwp_put_str_u64(w, ",\"coproc_contexts\":{\"depth\":", c->keep);
    hwp_put_json_u64(w, "capacity", HWX_CTX_ENTRIES);
    hwp_put_json_u64(w, "stored", c->stored);
    hwp_put_json_u64(w, "overflow", c->overflow);
    hwp_put_json_u64(w, "lost", c->lost);
    hwp_put_str(w, ",\"contexts\":[");
    for (i = 0; i < HWX_CTX_ENTRIES; i++) {
        const hwx_ctx_ent *e = &c->e[i];
        if (!(e->flags & HWX__CTX_USED)) continue;
        hwp_put_str(w, first ? "{\"key\":" : ",{\"key\":");
        first = 0;
        hwp_put_str(w, "\"");
        hwp_put_hex(w, e->key);
        hwp_put_str(w, "\",\"sites\":[");
        for (j = 0; j < e->n; j++) {
            hwp_put_str(w, j ? ",\"" : "\"");
            hwp_put_hex(w, e->site[j]);
            hwp_put_str(w, "\"");
        }
        hwp_put_str(w, "]");
        hwp_put_json_hex(w, "callee", e->callee);
        hwp_put_str(w, (e->flags & HWX__CTX_DEEPER) ? ",\"deeper\":1" : ",\"deeper\":0");
        hwp_put_str(w, (e->flags & HWX__CTX_STALE) ? ",\"stale\":1}" : ",\"stale\":0}");
    }
    hwp_put_str(w, "]}");
}
