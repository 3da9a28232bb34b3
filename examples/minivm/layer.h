/* minivm/layer.h: the minivm through hwprof/vm.h, the VM-facing layer.
 *
 * This is the embedding a VM author copies now: one desc, one storage
 * block, one clock (mv_vm.c's MV__LAYER loop: a decrement per bytecode),
 * annotations for branches, jumps, calls, returns and loads, and one
 * callback that receives every decision the layer takes. The older
 * embedding (prof.h) feeds every event to every model and keeps the
 * exact profiles and the tiering policy it is compared with. */
#ifndef MINIVM_LAYER_H
#define MINIVM_LAYER_H

#include <stdio.h>

#include "hwprof/vm.h"
#include "mv.h"

typedef struct mvl {
    hwp_vm vm;     /* zeroed: compiled in and off                        */
    void *mem;
    FILE *out;     /* where decisions are printed, one line each        */
    uint64_t by_kind[HWP_VM_PHASE + 1];
} mvl;

/* models: HWP_VM_* bits (minivm's MVP_* bits are the same); 0 leaves the
 * layer zeroed (off). Returns 0, or -1 with the layer's reason in err. */
int mvl_init(mvl *l, unsigned models, const mv_prog *prog, uint64_t seed,
             uint32_t pm_interval, FILE *out, char *err, size_t errcap);
/* End of run: the last decisions, then one summary line. */
void mvl_finish(mvl *l);
void mvl_free(mvl *l);

#endif
