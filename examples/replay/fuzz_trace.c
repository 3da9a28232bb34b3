/* examples/replay/fuzz_trace.c: libFuzzer entry for the trace reader.
 * Any input must be rejected with an in-range offset or decoded (records
 * and retire items); the
 * reader must never read outside the buffer (ASan checks that). Built
 * with clang -fsanitize=fuzzer when available (fuzz_trace target); the
 * deterministic corpus test (test_fuzz_corpus) links the same entry to a
 * small driver. */
#include <stddef.h>
#include <stdint.h>

#include "hwx.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    hwx_trace_reader r;
    hwp_insn in;
    int rc;
    if (hwx_trace_open(&r, data, size) != HWP_OK) {
        if (r.err_off > size) __builtin_trap();
        return 0;
    }
    r.want_retire = 1;
    while ((rc = hwx_trace_next(&r, &in)) > 0) {
        if (rc == HWX_TRACE_RETIRE ? r.lo > r.hi : in.cls >= HWP_CLS_COUNT) __builtin_trap();
    }
    if (rc < 0 && (r.err_off > size || !r.why || !r.why[0])) __builtin_trap();
    return 0;
}
