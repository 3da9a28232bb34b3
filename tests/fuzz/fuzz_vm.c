/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_vm.c: the VM-facing layer (include/hwprof/vm.h) on a
 * desc and an event stream of the input's choosing: any models, id
 * ranges, burst settings (burst == period included: every bytecode in a
 * burst), thresholds; events in both the memory and the local-countdown
 * forms, ids past the declared range, runs of many bytecodes. Checked:
 * a desc is taken or refused with a reason, never a crash; the clock
 * equals the bytecodes the input retired; bursts never cover more
 * bytecodes than ran; rejected events are at most the bad ones sent and
 * are in stats.dropped; every streamed decision has a known kind and
 * verdict, an interval around its estimate and a clock not past the
 * run; a pulled decision's interval is ordered; the JSON report is
 * written whole. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hwprof/vm.h"

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) __builtin_trap();                                           \
    } while (0)

typedef struct in {
    const uint8_t *p;
    size_t n;
} in;

static uint32_t u8(in *f) {
    uint32_t v = 0;
    if (f->n) {
        v = *f->p++;
        f->n--;
    }
    return v;
}

static uint32_t u16(in *f) { return u8(f) | u8(f) << 8; }

typedef struct run {
    hwp_vm vm;
    uint64_t ops, bad, clock_seen;
} run;

static void on_decision(void *user, const hwp_vm_decision *d) {
    run *r = (run *)user;
    CHECK(d->kind >= HWP_VM_FUNC && d->kind <= HWP_VM_PHASE);
    CHECK(d->verdict <= HWP_VM_NO);
    CHECK(d->lo <= d->est + 1e-9 && d->est <= d->hi + 1e-9);
    CHECK(d->clock <= r->ops && d->clock >= r->clock_seen);
    r->clock_seen = d->clock;
    if (d->kind == HWP_VM_VALUE || d->kind == HWP_VM_TYPE)
        CHECK(d->est >= 0.0 && d->est <= 1.0 && d->verdict != HWP_VM_UNSURE);
}

static void put(void *ctx, const char *s, size_t n) {
    size_t *total = (size_t *)ctx;
    (void)s;
    *total += n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    in f = {data, size};
    hwp_vm_desc d;
    hwp_vm_stats s;
    run *r = (run *)calloc(1, sizeof *r);
    void *mem = NULL;
    size_t n, total = 0;
    int64_t left;
    uint32_t local = u8(&f) & 1u;
    hwp_writer w;
    CHECK(r);
    memset(&d, 0, sizeof d);
    d.models = u8(&f) & 0x3fu; /* 0x20 is unknown: refused */
    d.funcs = u8(&f) % 65u;
    d.sites = u8(&f) % 65u;
    d.period = u16(&f);
    d.burst = u16(&f) % (d.period + 2u);
    d.loops = u8(&f) & 1u ? 16u : 0u;
    d.hot_calls = u8(&f);
    d.hot_loops = u8(&f);
    d.spec_inv = (double)(u8(&f) % 12u) / 10.0;
    d.min_samples = u8(&f) % 8u;
    d.seed = u8(&f);
    d.pm.interval = 2u + u8(&f) % 64u;
    d.strat.rate = 1u + u8(&f) % 8u;
    d.rap.key_bits = 16;
    d.strat_acc.tuples = 1024; /* small tables: more runs a second */
    d.hpt.entries = 64;
    d.on_decision = on_decision;
    d.user = r;
    n = hwp_vm_bytes(&d);
    mem = n ? malloc(n) : NULL;
    if (!mem || hwp_vm_init(&r->vm, mem, n, &d, NULL) != HWP_OK) {
        CHECK(!n || hwp_why(&r->vm)[0] != '\0');
        free(mem);
        free(r);
        return 0;
    }
    hwp_vm_get_desc(&r->vm, &d);
    left = hwp_vm_left(&r->vm);
    while (f.n) {
        uint32_t op = u8(&f), id = u8(&f);
        uint64_t pc = 0x1000u + 4u * (uint64_t)(u8(&f) % 32u);
        bool bad_id = false;
        if (local) hwp_vm_set_left(&r->vm, left);
        switch (op % 8u) {
        case 0:
        case 1:
            r->ops++; /* first: a decision taken at this op sees it */
            if (local) {
                left = hwp_vm_left(&r->vm);
                if (--left <= 0) left = hwp_vm_expire(&r->vm, pc, left);
                hwp_vm_set_left(&r->vm, left);
            } else {
                hwp_vm_op(&r->vm, pc);
            }
            break;
        case 2: {
            uint32_t k = 1u + id % 200u;
            r->ops += k;
            hwp_vm_ops(&r->vm, pc, k);
            break;
        }
        case 3: hwp_vm_branch(&r->vm, pc, id & 1u); break;
        case 4: hwp_vm_jump(&r->vm, pc); break;
        case 5:
            bad_id = id % 80u >= d.funcs;
            hwp_vm_call(&r->vm, pc, id % 80u);
            break;
        case 6: hwp_vm_ret(&r->vm, pc); break;
        default:
            bad_id = id % 80u >= d.sites;
            hwp_vm_load(&r->vm, id % 80u, u8(&f) % 4u, u8(&f) % 3u);
            break;
        }
        r->bad += bad_id;
        left = hwp_vm_left(&r->vm);
        CHECK(hwp_vm_clock(&r->vm) == r->ops);
    }
    CHECK(hwp_vm_flush(&r->vm) == HWP_OK);
    CHECK(hwp_vm_get_stats(&r->vm, &s) == HWP_OK);
    CHECK(s.events == r->ops && s.burst_ops <= s.events);
    CHECK(s.rejected <= r->bad && s.dropped >= s.rejected);
    {
        hwp_vm_decision q;
        uint32_t i;
        for (i = 0; i < d.funcs; i++) {
            CHECK(hwp_vm_func(&r->vm, i, &q) == HWP_OK && q.lo <= q.hi);
        }
        for (i = 0; i < d.sites; i++)
            CHECK(hwp_vm_site(&r->vm, i, HWP_VM_VALUE, &q) == HWP_OK && q.lo <= q.hi);
        CHECK(hwp_vm_func(&r->vm, d.funcs, &q) == HWP_EINVAL);
        CHECK(hwp_vm_loop(&r->vm, 0x1000, &q) == HWP_OK);
    }
    { /* folded into a fresh layer of the same desc: the clock carries over */
        size_t m2 = hwp_vm_bytes(&d);
        void *mem2 = malloc(m2);
        hwp_vm *e = (hwp_vm *)calloc(1, sizeof *e);
        hwp_vm_stats es;
        CHECK(mem2 && e);
        d.on_decision = NULL;
        CHECK(hwp_vm_init(e, mem2, m2, &d, NULL) == HWP_OK);
        CHECK(hwp_vm_flush(e) == HWP_OK);
        CHECK(hwp_vm_merge(e, &r->vm) == HWP_OK);
        CHECK(hwp_vm_get_stats(e, &es) == HWP_OK && es.events == s.events);
        free(mem2);
        free(e);
    }
    w.write = put;
    w.ctx = &total;
    hwp_vm_write_json(&r->vm, &w);
    CHECK(total > 0);
    CHECK(hwp_vm_reset(&r->vm) == HWP_OK && hwp_vm_clock(&r->vm) == 0);
    free(mem);
    free(r);
    return 0;
}
