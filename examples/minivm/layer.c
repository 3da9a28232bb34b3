/* minivm/layer.c: set up hwprof/vm.h for a program and print what it
 * decides (see layer.h). The library's implementation is compiled in
 * prof.c, the minivm's one HWPROF_IMPL translation unit. */
#include <stdlib.h>
#include <string.h>

#include "layer.h"

static void mvl__decision(void *user, const hwp_vm_decision *d) {
    mvl *l = (mvl *)user;
    if (d->kind <= HWP_VM_PHASE) l->by_kind[d->kind]++;
    fprintf(l->out,
            "vm %-5s %-6s id 0x%llx what 0x%llx est %.4g [%.4g, %.4g] samples %llu "
            "at %llu\n",
            hwp_vm_kind_str(d->kind), hwp_vm_verdict_str(d->verdict),
            (unsigned long long)d->id, (unsigned long long)d->what, d->est, d->lo,
            d->hi, (unsigned long long)d->samples, (unsigned long long)d->clock);
}

/* Key bits for RAP's domain of bytecode addresses (MV_PC: 8 bytes each
 * from MV_CODE_BASE), rounded up to even so each level takes 2 bits. */
static unsigned mvl__key_bits(uint64_t x) { return (hwp_log2(x) + 2u) & ~1u; }

int mvl_init(mvl *l, unsigned models, const mv_prog *prog, uint64_t seed,
             uint32_t pm_interval, FILE *out, char *err, size_t errcap) {
    hwp_vm_desc d;
    size_t n;
    memset(l, 0, sizeof *l);
    l->out = out;
    if (!models) return 0;
    memset(&d, 0, sizeof d);
    d.models = models;
    d.funcs = prog->nfuncs ? prog->nfuncs : 1u;
    d.sites = prog->ncode; /* a load's site is its bytecode index */
    d.pc_step = 8;         /* MV_PC */
    d.seed = seed;
    d.pm.interval = pm_interval;
    d.on_decision = mvl__decision;
    d.user = l;
    d.rap.key_base = MV_CODE_BASE;
    d.rap.key_bits = mvl__key_bits(8u * (uint64_t)prog->ncode);
    d.rap.eps = 0.01;
    n = hwp_vm_bytes(&d);
    l->mem = n ? malloc(n) : NULL;
    if (!l->mem || hwp_vm_init(&l->vm, l->mem, n, &d, NULL) != HWP_OK) {
        snprintf(err, errcap, "%s", n ? (l->mem ? hwp_why(&l->vm) : "out of memory")
                                      : "vm: the layer refused its desc");
        return -1;
    }
    return 0;
}

void mvl_finish(mvl *l) {
    hwp_vm_stats s;
    if (hwp_vm_flush(&l->vm) != HWP_OK) return; /* off */
    hwp_vm_get_stats(&l->vm, &s);
    fprintf(l->out,
            "vm bytecodes %llu in bursts %llu (%llu bursts, scale %.2f) decisions: "
            "func %llu loop %llu path %llu value %llu type %llu phase %llu\n",
            (unsigned long long)s.events, (unsigned long long)s.burst_ops,
            (unsigned long long)s.bursts, hwp_vm_scale(&l->vm),
            (unsigned long long)l->by_kind[HWP_VM_FUNC],
            (unsigned long long)l->by_kind[HWP_VM_LOOP],
            (unsigned long long)l->by_kind[HWP_VM_HOTPATH],
            (unsigned long long)l->by_kind[HWP_VM_VALUE],
            (unsigned long long)l->by_kind[HWP_VM_TYPE],
            (unsigned long long)l->by_kind[HWP_VM_PHASE]);
}

void mvl_free(mvl *l) {
    free(l->mem);
    memset(l, 0, sizeof *l);
}
