/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_strat_acc.c: the stratified model's host-side profile
 * (hwp_strat_acc) under the shared engine (fuzz_model.h), plus messages
 * and tuples of the input's choosing and a JIT's queries with random
 * capacities. Checked: a query's count does not depend on its capacity
 * and it writes only `cap` rows (exact-size buffers, ASan watches);
 * values come most frequent first, pcs most invariant first; every
 * invariance and its interval lie in [0, 1] with lo <= invariance <= hi;
 * the profile holds at most desc.tuples tuples and desc.pcs pcs, and
 * iterating it visits exactly the tuples held; the invariance error of
 * section 5.3.1 between the two instances is a finite percentage or a
 * refusal. */
#include "fuzz_model.h"

static hwp_strat_acc *sa_of(fz_ctx *c, int w) { return (hwp_strat_acc *)c->in[w].x; }

static void sa_msgs(hwp_strat_acc *a, fz_in *f, unsigned n) {
    hwp_strat_msg m[8];
    unsigned k;
    for (k = 0; k < n; k++) {
        hwp_strat_msg *x = &m[k % 8u];
        uint8_t how = fz_u8(f);
        x->kind = how & 3u;
        x->pc = 0x400000u + 4u * (fz_u8(f) & 31u);
        x->w = (how & 4u) ? fz_u64(f) : fz_u8(f) & 15u;
        x->count = (how & 8u) ? fz_u64(f) : 1u + fz_u8(f);
        x->stratum = (how & 16u) ? fz_u32(f) : fz_u8(f) & 7u;
        x->samples = fz_u8(f) & 3u;
        x->reserved = 0;
        if (how & 32u) hwp_strat_acc_add(a, x->kind, x->pc, x->w, x->count);
        if (k % 8u == 7u || k + 1u == n) hwp_strat_acc_fold(a, m, k % 8u + 1u);
    }
}

static void sa_interval(double inv, double lo, double hi) {
    FZ_CHECK(inv >= 0.0 && inv <= 1.0);
    FZ_CHECK(lo >= 0.0 && hi <= 1.0 && lo <= inv + 1e-12 && inv <= hi + 1e-12);
}

static void sa_values(hwp_strat_acc *a, fz_in *f) {
    uint32_t kind = fz_u8(f) & 3u;
    uint64_t pc = 0x400000u + 4u * (fz_u8(f) & 31u);
    size_t cap = fz_u8(f) % 12u, n1, n2, i;
    hwp_strat_value *v = cap ? (hwp_strat_value *)malloc(cap * sizeof *v) : NULL;
    FZ_CHECK(!cap || v);
    n1 = hwp_strat_acc_top_values(a, kind, pc, v, cap);
    n2 = hwp_strat_acc_top_values(a, kind, pc, NULL, 0);
    FZ_CHECK(n1 == n2);
    for (i = 0; i < n1 && i < cap; i++) {
        sa_interval(v[i].invariance, v[i].lo, v[i].hi);
        FZ_CHECK(v[i].count == hwp_strat_acc_count(a, kind, pc, v[i].w));
        if (i) FZ_CHECK(v[i - 1].count >= v[i].count);
    }
    free(v);
}

static void sa_pcs(hwp_strat_acc *a, fz_in *f) {
    uint32_t kind = fz_u8(f) & 3u;
    size_t cap = fz_u8(f) % 12u, n1, n2, i;
    hwp_strat_pc *p = cap ? (hwp_strat_pc *)malloc(cap * sizeof *p) : NULL;
    FZ_CHECK(!cap || p);
    n1 = hwp_strat_acc_top_pcs(a, kind, p, cap);
    n2 = hwp_strat_acc_top_pcs(a, kind, NULL, 0);
    FZ_CHECK(n1 == n2);
    for (i = 0; i < n1 && i < cap; i++) {
        sa_interval(p[i].invariance, p[i].lo, p[i].hi);
        FZ_CHECK(p[i].kind == kind && p[i].samples > 0);
        if (i) FZ_CHECK(p[i - 1].invariance >= p[i].invariance);
    }
    free(p);
}

static void sa_op(fz_ctx *c, int w, fz_in *f) {
    hwp_strat_acc *a = sa_of(c, w);
    uint8_t sub = fz_u8(f);
    switch (sub % 4u) {
    case 0:
        sa_msgs(a, f, 1u + fz_u8(f) % 64u);
        break;
    case 1:
        sa_values(a, f);
        break;
    case 2:
        sa_pcs(a, f);
        break;
    default: { /* section 5.3.1: this instance as the ideal profile */
        hwp_strat_metric_desc md;
        hwp_strat_metric m;
        hwp_status st;
        memset(&md, 0, sizeof md);
        md.min_exec = fz_u8(f);
        md.min_inv = (double)(fz_u8(f) % 101u) / 100.0;
        md.min_cover = (double)(fz_u8(f) % 101u) / 100.0;
        st = hwp_strat_invariance_error(a, sa_of(c, !w), &md, &m);
        FZ_CHECK(st == HWP_OK || st == HWP_EINVAL || st == HWP_EMISMATCH);
        if (st == HWP_OK) FZ_CHECK(m.error_pct >= 0.0 && m.error_pct <= 100.0 + 1e-9);
        break;
    }
    }
}

static void sa_check_one(fz_ctx *c, int w) {
    const hwp_strat_acc_desc *d = (const hwp_strat_acc_desc *)c->desc;
    hwp_strat_acc *a = sa_of(c, w);
    hwp_strat_acc_stats st;
    hwp_strat_msg m;
    uint32_t cur = 0, tuples = d->tuples ? d->tuples : 65536u;
    uint64_t seen = 0;
    FZ_CHECK(hwp_strat_acc_get_stats(a, &st) == HWP_OK);
    FZ_CHECK(st.tuples <= tuples);
    FZ_CHECK(st.pcs <= (d->pcs ? d->pcs : (tuples / 4u ? tuples / 4u : 1u)));
    FZ_CHECK(st.cycles == 0);
    while (hwp_strat_acc_next(a, &cur, &m)) {
        FZ_CHECK(hwp_strat_acc_count(a, m.kind, m.pc, m.w) == m.count);
        seen++;
    }
    FZ_CHECK(seen == st.tuples);
}

static void sa_check(fz_ctx *c) {
    sa_check_one(c, 0);
    sa_check_one(c, 1);
}

static const fz_hooks sa_hooks = {NULL, NULL, sa_op, sa_check, NULL,
                                  NULL, NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_stratified, "strat_acc"), &sa_hooks, data, size);
}
