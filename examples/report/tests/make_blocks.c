/* make_blocks OUT ITERATIONS: a trace (docs/trace-format.md) of three
 * basic blocks for check_exports.py's BBV test: per iteration i, block A
 * (3 instructions at 0x1000), then block B (5 at 0x2000) when i % 3 == 0,
 * then block C (2 at 0x3000); every block ends with a branch. */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#define HWPROF_STDIO
#include "hwx.h"

static hwx_trace_writer t;

static void block(uint64_t start, unsigned n, uint64_t next) {
    unsigned k;
    for (k = 0; k < n; k++) {
        hwp_insn in;
        hwp__zero(&in, sizeof in);
        in.pc = start + 4 * k;
        in.next_pc = k + 1 == n ? next : in.pc + 4;
        in.cls = k + 1 == n ? HWP_CLS_JUMP : HWP_CLS_OTHER;
        if (k + 1 == n) in.events = HWP_EV_TAKEN;
        hwx_trace_put(&t, &in);
    }
}

int main(int argc, char **argv) {
    hwp_writer w;
    FILE *f;
    unsigned long long n, i;
    if (argc != 3 || !(f = fopen(argv[1], "wb"))) {
        fprintf(stderr, "usage: make_blocks OUT ITERATIONS\n");
        return 2;
    }
    n = strtoull(argv[2], NULL, 10);
    w = hwp_writer_stdio(f);
    hwx_trace_write_header(&w);
    hwx_trace_writer_init(&t, &w, 0);
    for (i = 0; i < n; i++) {
        block(0x1000, 3, i % 3 == 0 ? 0x2000 : 0x3000);
        if (i % 3 == 0) block(0x2000, 5, 0x3000);
        block(0x3000, 2, 0x1000);
    }
    hwx_trace_flush(&t);
    hwx_trace_write_end(&w, t.total);
    return fclose(f) == 0 ? 0 : 1;
}
