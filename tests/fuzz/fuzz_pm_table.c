/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_pm_table.c: the ProfileMe profile table under the shared
 * engine (fuzz_model.h), plus records of the input's choosing and the
 * ranking with random capacities: the count it returns does not depend
 * on the capacity, and it writes only `cap` rows (ASan watches the
 * exact-size buffer). */
#include "fuzz_model.h"

static void pmt_op(fz_ctx *c, int w, fz_in *f) {
    hwp_pm_table *t = (hwp_pm_table *)c->in[w].x;
    uint8_t sub = fz_u8(f);
    if (sub & 1u) { /* one record, or a pair (paired sampling) */
        hwp_pm_record r[2];
        unsigned k, i, n = (sub & 2u) ? 2u : 1u;
        hwp_status st;
        memset(r, 0, sizeof r);
        for (i = 0; i < n; i++) {
            r[i].pc = 0x1000u + 4u * (fz_u8(f) & 63u);
            r[i].history = fz_u8(f);
            r[i].cls = fz_u8(f) % (HWP_CLS_COUNT + 1u);
            r[i].events = fz_u8(f);
            r[i].flags = fz_u8(f);
            r[i].pair_latency = fz_u8(f);
            r[i].pair_distance = fz_u8(f);
            for (k = 0; k < HWP_PM_LAT_COUNT; k++) r[i].lat[k] = fz_u8(f);
        }
        st = hwp_pm_table_add(t, r, n);
        FZ_CHECK(st == HWP_OK || st == HWP_EINVAL);
    } else {
        size_t cap = fz_u8(f) % 20u, n1, n2;
        unsigned by = fz_u8(f) % 4u;
        double z = (double)fz_u8(f) / 64.0;
        hwp_pm_row *out = cap ? (hwp_pm_row *)malloc(cap * sizeof *out) : NULL;
        FZ_CHECK(!cap || out);
        n1 = hwp_pm_table_rank(t, by, z, out, cap);
        n2 = hwp_pm_table_rank(t, by, z, NULL, 0);
        FZ_CHECK(n1 == n2);
        free(out);
    }
}

static const fz_hooks pmt_hooks = {NULL, NULL, pmt_op, NULL, NULL,
                                   NULL, NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_profileme, "pm_table"), &pmt_hooks, data, size);
}
