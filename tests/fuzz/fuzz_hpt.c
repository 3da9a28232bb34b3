/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_hpt.c: the Hot Path Table (Vaswani, Jacob and
 * Srikant, Representing, Detecting and Profiling Paths in Hardware,
 * section 5) under the shared engine (fuzz_model.h), plus paths and
 * values of the input's choosing (a few starts and shapes, so sets
 * overflow and accumulators saturate) and the export with random
 * capacities. Checked: an add reports a hit exactly when the path was
 * held, and afterwards the path is held with its accumulator grown by
 * the value (saturating at 2^32 - 1) or, on a miss, equal to it; the
 * export's count does not depend on its capacity, it writes only `cap`
 * rows, hottest first, each row's count is the table's lookup, and the
 * table never holds more paths than entries; hits + misses = events. */
#include "fuzz_model.h"

static hwp_hpt *hpt_of(fz_ctx *c, int w) { return (hwp_hpt *)c->in[w].x; }

static hwp_path_pd hpt_pd(fz_in *f) {
    hwp_path_pd pd;
    uint8_t b = fz_u8(f);
    pd.start = (b & 1u) ? fz_u64(f) : 0x400000u + 0x40u * (fz_u8(f) & 15u);
    pd.shape = (b & 2u) ? fz_u64(f) : (uint64_t)(4u | (fz_u8(f) & 3u));
    return pd;
}

static void hpt_op(fz_ctx *c, int w, fz_in *f) {
    hwp_hpt *h = hpt_of(c, w);
    uint8_t sub = fz_u8(f);
    if (sub & 1u) {
        unsigned k, n = 1u + fz_u8(f) % 64u;
        for (k = 0; k < n; k++) {
            hwp_path_pd pd = hpt_pd(f);
            uint8_t how = fz_u8(f);
            uint32_t v = (how & 1u) ? fz_u32(f) : how >> 1, before, after;
            int hit;
            if (!pd.shape) continue; /* no path: nothing to add */
            before = hwp_hpt_lookup(h, &pd);
            hit = hwp_hpt_add(h, &pd, v);
            after = hwp_hpt_lookup(h, &pd);
            if (hit) {
                FZ_CHECK(after == (before > 0xFFFFFFFFu - v ? 0xFFFFFFFFu : before + v));
            } else {
                FZ_CHECK(after == v);
            }
            /* a held path with an accumulator of 0 reads as absent */
            if (before) FZ_CHECK(hit);
        }
    } else {
        const hwp_hpt_desc *d = (const hwp_hpt_desc *)c->desc;
        size_t cap = fz_u8(f) % 40u, n1, n2, i;
        hwp_path_row *rows = cap ? (hwp_path_row *)malloc(cap * sizeof *rows) : NULL;
        FZ_CHECK(!cap || rows);
        n1 = hwp_hpt_export(h, rows, cap);
        n2 = hwp_hpt_export(h, NULL, 0);
        FZ_CHECK(n1 == n2 && n1 <= (d->entries ? d->entries : 512u));
        for (i = 0; i < n1 && i < cap; i++) {
            FZ_CHECK(rows[i].count == hwp_hpt_lookup(h, &rows[i].pd));
            if (i) FZ_CHECK(rows[i - 1].count >= rows[i].count);
        }
        free(rows);
    }
}

static void hpt_check(fz_ctx *c) {
    int w;
    for (w = 0; w < 2; w++) {
        hwp_hpt_stats st;
        FZ_CHECK(hwp_hpt_get_stats(hpt_of(c, w), &st) == HWP_OK);
        FZ_CHECK(st.events == st.hits + st.misses);
        FZ_CHECK(st.evicted <= st.misses);
    }
}

static const fz_hooks hpt_hooks = {NULL, NULL, hpt_op, hpt_check, NULL,
                                   NULL, NULL, NULL};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    return fz_run(fz_row(hwp_conf_pathprof, "hpt"), &hpt_hooks, data, size);
}
