/* make_trace OUT N: a small trace of N records (docs/trace-format.md) for
 * the replayer's tests: a loop of loads, stores and a conditional branch
 * over a few pcs, one vCPU. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#define HWPROF_STDIO
#include "hwx.h"

int main(int argc, char **argv) {
    static hwx_trace_writer t;
    hwp_writer w;
    FILE *f;
    unsigned long long n, i;
    if (argc != 3 || !(f = fopen(argv[1], "wb"))) {
        fprintf(stderr, "usage: make_trace OUT N\n");
        return 2;
    }
    n = strtoull(argv[2], NULL, 10);
    w = hwp_writer_stdio(f);
    hwx_trace_write_header(&w);
    hwx_trace_writer_init(&t, &w, 0);
    for (i = 0; i < n; i++) {
        hwp_insn in;
        unsigned k = (unsigned)(i % 8);
        hwp__zero(&in, sizeof in);
        in.pc = 0x401000 + 4 * k;
        in.next_pc = k == 7 ? 0x401000 : in.pc + 4;
        in.cls = k == 7 ? HWP_CLS_BR_COND : k % 3 == 0 ? HWP_CLS_LOAD
                                          : k % 3 == 1 ? HWP_CLS_STORE : HWP_CLS_OTHER;
        if (k == 7) in.events = HWP_EV_TAKEN;
        if (in.cls == HWP_CLS_LOAD || in.cls == HWP_CLS_STORE) {
            in.addr = 0x600000 + 8 * (i % 64);
            in.value = (i / 8) % 5;
        }
        hwx_trace_put(&t, &in);
    }
    hwx_trace_flush(&t);
    hwx_trace_write_end(&w, t.total);
    return fclose(f) == 0 ? 0 : 1;
}
