/* SPDX-License-Identifier: MIT */
/* tests/conformance/vm.c: vm.h's row of the model contract: the layer
 * with all five models, as a VM embeds it. */
#include "conformance.h"

#include <string.h>

#define VM_FUNCS 16u
#define VM_SITES 16u

/* models, funcs and sites have no default. */
static void vm_required(void *dv) {
    hwp_vm_desc *d = (hwp_vm_desc *)dv;
    d->models = HWP_VM_ALL;
    d->funcs = VM_FUNCS;
    d->sites = VM_SITES;
}

/* Short bursts, so a 20,000-bytecode stream holds many; small model
 * tables. */
static void vm_small(void *dv) {
    hwp_vm_desc *d = (hwp_vm_desc *)dv;
    vm_required(d);
    d->period = 256;
    d->burst = 64;
    d->hot_calls = 50;
    d->hot_loops = 100;
    d->pm.interval = 97;
    d->strat_acc.tuples = 256;
    d->rap.key_bits = 16;
    d->hpt.entries = 64;
}

/* The defaults of vm.h and docs/vm.md ("Options"), written out; the
 * models' descs stay zero (each model's row checks its own). */
static void vm_documented(void *dv) {
    hwp_vm_desc *d = (hwp_vm_desc *)dv;
    vm_required(d);
    d->loops = 256;
    d->period = 32768;
    d->burst = 512;
    d->pc_step = 1;
    d->op_cycles = 1;
    d->hot_calls = 1000;
    d->hot_loops = 10000;
    d->spec_inv = 0.9;
    d->min_samples = 30;
}

static const char *const vm_bad_fields[] = {
    "models", "unknown", "funcs", "sites", "loops", "period", "burst",
    "spec_inv", "callbacks", "rap"};

static void vm_sink(void *ctx, const hwp_path_rec *r) {
    (void)ctx;
    (void)r;
}

static void vm_bad(void *dv, size_t i) {
    hwp_vm_desc *d = (hwp_vm_desc *)dv;
    switch (i) {
    case 0: d->models = 0; break;
    case 1: d->models = 0x40; break;          /* an unknown bit */
    case 2: d->funcs = (1u << 24) + 1; break;
    case 3: d->sites = 0; break;
    case 4: d->loops = 100; break;             /* not a power of two */
    case 5: d->period = 1u << 31; break;
    case 6: d->burst = d->period + 1; break;
    case 7: d->spec_inv = 1.0; break;
    case 8: d->path.on_path = vm_sink; break; /* the layer's own */
    default: d->rap.eps = 2.0; break;          /* a model's own refusal */
    }
}

static size_t vm_bytes(const void *d) { return hwp_vm_bytes((const hwp_vm_desc *)d); }
static hwp_status vm_init(void *x, void *mem, size_t n, const void *d, hwp_cost *cost) {
    return hwp_vm_init((hwp_vm *)x, mem, n, (const hwp_vm_desc *)d, cost);
}
static hwp_status vm_reset(void *x) { return hwp_vm_reset((hwp_vm *)x); }
static hwp_status vm_flush(void *x) { return hwp_vm_flush((hwp_vm *)x); }
static hwp_status vm_merge(void *dst, const void *src) {
    return hwp_vm_merge((hwp_vm *)dst, (const hwp_vm *)src);
}
static hwp_status vm_stats(const void *x, hwp_conf_stats *out) {
    hwp_vm_stats s;
    hwp_status st = hwp_vm_get_stats((const hwp_vm *)x, &s);
    out->events = s.events;
    out->dropped = s.dropped;
    out->evicted = s.evicted;
    out->cycles = s.cycles;
    return st;
}
static void vm_write_json(const void *x, const hwp_writer *w) {
    hwp_vm_write_json((const hwp_vm *)x, w);
}
static hwp_status vm_read_desc(void *d, const char *s, size_t n, hwp_json_err *err) {
    return hwp_vm_read_desc((hwp_vm_desc *)d, s, n, err);
}
static hwp_status vm_read_json(void *x, const char *s, size_t n, hwp_json_err *err) {
    return hwp_vm_read_json((hwp_vm *)x, s, n, err);
}

/* Bytecode i depends on (seed, i) only: one of four 16-bytecode loops
 * (a new one every 4096 bytecodes), a call at its top, loads of mostly
 * one value at every fifth bytecode, the back edge at its end, and now
 * and then an id past the range (dropped and counted). */
static void vm_feed(void *x, uint64_t seed, uint64_t first, uint64_t n) {
    hwp_vm *vm = (hwp_vm *)x;
    uint64_t i;
    for (i = first; i < first + n; i++) {
        uint64_t h = hwp_mix64(seed ^ (i * 0x9E3779B97F4A7C15ull));
        uint64_t top = 0x100 + ((i / 4096) % 4) * 0x100, k = i % 16, pc = top + k;
        hwp_vm_op(vm, pc);
        if (k == 0) {
            hwp_vm_call(vm, pc, (uint32_t)(h % (VM_FUNCS + 1)));
        } else if (k == 15) {
            hwp_vm_jump(vm, pc);
        } else if (k % 5 == 3) {
            hwp_vm_load(vm, (uint32_t)((h >> 8) % VM_SITES), (h >> 16) % 8 ? 7 : h >> 20, 1);
        } else if (k == 7) {
            hwp_vm_branch(vm, pc, (h >> 4) & 1);
        } else if (k == 9) {
            hwp_vm_ret(vm, pc);
        }
    }
}

/* Two halves draw their bursts apart from the whole's, so only the
 * clock and what every bytecode carries must agree: the bytecodes, and
 * the bursts' share of them within a factor of two of the whole's. */
static const char *vm_merge_check(const void *whole, const void *merged) {
    hwp_vm_stats w, m;
    hwp_vm_get_stats((const hwp_vm *)whole, &w);
    hwp_vm_get_stats((const hwp_vm *)merged, &m);
    if (w.events != m.events) return "the clocks differ";
    if (2 * m.burst_ops < w.burst_ops || m.burst_ops > 2 * w.burst_ops)
        return "bytecodes in bursts differ by more than 2x";
    return NULL;
}

static const char *vm_unset(void *x) {
    hwp_vm *vm = (hwp_vm *)x;
    hwp_vm_decision d;
    hwp_vm_desc desc;
    HWP_CONF_TOOK(hwp_vm_func(vm, 0, &d) == HWP_OK);
    HWP_CONF_TOOK(hwp_vm_loop(vm, 0x100, &d) == HWP_OK);
    HWP_CONF_TOOK(hwp_vm_site(vm, 0, HWP_VM_VALUE, &d) == HWP_OK);
    HWP_CONF_TOOK(hwp_vm_get_desc(vm, &desc) == HWP_OK);
    HWP_CONF_TOOK(hwp_vm_clock(vm) != 0);
    HWP_CONF_TOOK(hwp_vm_scale(vm) != 0.0);
    HWP_CONF_TOOK(hwp_vm_rap(vm) != NULL);
    HWP_CONF_TOOK(hwp_vm_cp(vm) != NULL);
    HWP_CONF_TOOK_TEXT(hwp_vm_write_text(vm, &w));
    return NULL;
}

const hwp_conf_row hwp_conf_vm[] = {
    {"vm", sizeof(hwp_vm_desc), sizeof(hwp_vm), vm_small, vm_documented, vm_bad_fields,
     sizeof vm_bad_fields / sizeof *vm_bad_fields, vm_bad, vm_bytes, vm_init, vm_reset,
     vm_flush, vm_merge, vm_stats, vm_write_json, vm_read_desc, vm_read_json, vm_feed,
     vm_merge_check, vm_unset, vm_required},
    {NULL, 0, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
     NULL, NULL, NULL, NULL, NULL, NULL}};
