/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_cp.c: the profiling co-processor (row "cp") or its
 * buffered sampling baseline (row "cp_simple", built with
 * -DFZ_NAME=cp_simple) under the shared engine (fuzz_model.h), plus
 * loads of the input's choosing, the component's second event (the
 * co-processor: whole instructions; the baseline: a skip, which never
 * passes over a sample), and the estimates query with random
 * capacities (the count it returns does not depend on the capacity; it
 * writes only `cap` estimates, into an exact-size buffer ASan watches). */
#include "fuzz_model.h"

#ifndef FZ_NAME
#define FZ_NAME cp
#endif
#define FZ_STR2(x) #x
#define FZ_STR(x) FZ_STR2(x)

static bool cp_simple(const fz_ctx *c) { return c->row->name[2] == '_'; }

static void cp_loads(fz_ctx *c, void *x, uint8_t sub, fz_in *f) {
    unsigned k, n = 1u + fz_u8(f);
    for (k = 0; k < n; k++) {
        uint64_t pc = 0x1000u + 4u * (fz_u8(f) & 31u), v = fz_u8(f);
        if (cp_simple(c))
            hwp_cp_simple_load((hwp_cp_simple *)x, pc, v);
        else
            hwp_cp_load((hwp_cp *)x, pc, v, fz_u8(f) & (sub >> 4));
    }
}

static void cp_insns(hwp_cp *x, fz_in *f) {
    unsigned k, n = 1u + fz_u8(f);
    for (k = 0; k < n; k++) {
        hwp_insn in;
        in.pc = 0x1000u + 4u * (fz_u8(f) & 31u);
        in.next_pc = in.pc + ((fz_u8(f) & 1u) ? 4u : 64u);
        in.addr = fz_u8(f);
        in.value = fz_u8(f);
        in.cls = fz_u8(f) % (HWP_CLS_COUNT + 1u);
        in.events = fz_u8(f);
        hwp_cp_insn(x, &in);
    }
}

static void cp_skip(hwp_cp_simple *s, fz_in *f) {
    uint64_t due = hwp_cp_simple_due(s), n = fz_u32(f), k;
    k = hwp_cp_simple_skip(s, n);
    FZ_CHECK(k <= n && k < due);
    FZ_CHECK(hwp_cp_simple_due(s) == due - k);
}

static size_t cp_estimates(const fz_ctx *c, const void *x, hwp_cp_est *out, size_t cap) {
    return cp_simple(c) ? hwp_cp_simple_estimates((const hwp_cp_simple *)x, out, cap)
                        : hwp_cp_lvp_estimates((const hwp_cp *)x, out, cap);
}

static void cp_op(fz_ctx *c, int w, fz_in *f) {
    void *x = c->in[w].x;
    uint8_t sub = fz_u8(f);
    switch (sub % 3u) {
    case 0:
        cp_loads(c, x, sub, f);
        break;
    case 1:
        if (cp_simple(c))
            cp_skip((hwp_cp_simple *)x, f);
        else
            cp_insns((hwp_cp *)x, f);
        break;
    default: {
        size_t cap = fz_u8(f) % 20u, n1, n2;
        hwp_cp_est *out = cap ? (hwp_cp_est *)malloc(cap * sizeof *out) : NULL;
        FZ_CHECK(!cap || out);
        n1 = cp_estimates(c, x, out, cap);
        n2 = cp_estimates(c, x, NULL, 0);
        FZ_CHECK(n1 == n2);
        free(out);
        break;
    }
    }
}

static const fz_hooks cp_hooks = {NULL, NULL, cp_op, NULL, NULL,
                                  NULL, NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_coproc, FZ_STR(FZ_NAME)), &cp_hooks, data, size);
}
