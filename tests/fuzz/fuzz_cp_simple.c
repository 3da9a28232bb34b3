/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_cp_simple.c: the buffered sampling baseline of the
 * co-processor model under the shared engine (fuzz_model.h), plus loads,
 * skips and the estimates query with random capacities. */
#include "fuzz_model.h"

static void cs_op(fz_ctx *c, int w, fz_in *f) {
    hwp_cp_simple *s = (hwp_cp_simple *)c->in[w].x;
    uint8_t sub = fz_u8(f);
    switch (sub % 3u) {
    case 0: {
        unsigned k, n = 1u + fz_u8(f);
        for (k = 0; k < n; k++)
            hwp_cp_simple_load(s, 0x1000u + 4u * (fz_u8(f) & 31u), fz_u8(f));
        break;
    }
    case 1: { /* a skip never passes over a sample */
        uint64_t due = hwp_cp_simple_due(s), n = fz_u32(f), k;
        k = hwp_cp_simple_skip(s, n);
        FZ_CHECK(k <= n && k < due);
        FZ_CHECK(hwp_cp_simple_due(s) == due - k);
        break;
    }
    default: {
        size_t cap = fz_u8(f) % 20u, n1, n2;
        hwp_cp_est *out = cap ? (hwp_cp_est *)malloc(cap * sizeof *out) : NULL;
        FZ_CHECK(!cap || out);
        n1 = hwp_cp_simple_estimates(s, out, cap);
        n2 = hwp_cp_simple_estimates(s, NULL, 0);
        FZ_CHECK(n1 == n2);
        free(out);
        break;
    }
    }
}

static const fz_hooks cs_hooks = {NULL, NULL, cs_op, NULL, NULL, NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_coproc, "cp_simple"), &cs_hooks, data, size);
}
