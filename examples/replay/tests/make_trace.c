/* make_trace [--vcpu2 V] [--blocks|--paths|--calls] OUT N: small traces
 * (docs/trace-format.md) of known programs for the replayer's and
 * hwprof-report's tests, as vCPU 0's stream (with --vcpu2, then the same
 * program again as vCPU V's). The tests compute what each program must
 * give from the descriptions here, never from this code's output.
 *
 *   (no mode)  N records: a loop of loads, stores and a conditional
 *              branch over eight pcs from 0x401000; loads and stores
 *              at 0x600000 + 8 * (i % 64), value (i / 8) % 5.
 *   --blocks   N iterations of three basic blocks: per iteration i,
 *              block A (3 instructions at 0x1000), then block B (5 at
 *              0x2000) when i % 3 == 0, then block C (2 at 0x3000);
 *              every block ends with a taken jump.
 *   --paths    N iterations of a loop with two Ball-Larus paths: block
 *              A (3 instructions at 0x1000) ends with a conditional
 *              branch, taken to block C (2 at 0x3000) when i % 3 != 0,
 *              else falling through to block B (5 at 0x100c), which
 *              ends with a jump to C; C ends with a jump back to A.
 *   --calls    N iterations of a program with known calling contexts:
 *              main (0x10000, never called) runs a taken conditional
 *              branch, then calls f (0x20000) from 0x10100. f runs a
 *              taken branch; when i % 2 == 0 it calls g (0x30000) from
 *              0x20100 with d = 1 + i % 5; then returns (at 0x20200). g(d)
 *              runs a taken branch; when d > 1 it calls g(d - 1) from
 *              0x30100; then returns (at 0x30200). Calls and returns are
 *              taken too. Every branch, call and return follows
 *              HWX__PAD other instructions, so a co-processor at its
 *              default clock keeps up.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HWPROF_STDIO
#include "hwx.h"

static hwx_trace_writer t;
static hwp_insn pend; /* written once the next pc is known */
static int have_pend;

static void put(uint64_t pc, uint32_t cls, uint32_t events) {
    if (have_pend) {
        pend.next_pc = pc;
        hwx_trace_put(&t, &pend);
    }
    hwp_zero(&pend, sizeof pend);
    pend.pc = pc;
    pend.cls = cls;
    pend.events = events;
    have_pend = 1;
}

static void loop(unsigned long long n) {
    unsigned long long i;
    for (i = 0; i < n; i++) {
        unsigned k = (unsigned)(i % 8);
        uint32_t cls = k == 7 ? HWP_CLS_BR_COND : k % 3 == 0 ? HWP_CLS_LOAD
                                                : k % 3 == 1 ? HWP_CLS_STORE : HWP_CLS_OTHER;
        put(0x401000 + 4 * k, cls, k == 7 ? HWP_EV_TAKEN : 0);
        if (cls == HWP_CLS_LOAD || cls == HWP_CLS_STORE) {
            pend.addr = 0x600000 + 8 * (i % 64);
            pend.value = (i / 8) % 5;
        }
    }
}

static void block(uint64_t start, unsigned n) {
    unsigned k;
    for (k = 0; k < n; k++)
        put(start + 4 * k, k + 1 == n ? HWP_CLS_JUMP : HWP_CLS_OTHER,
            k + 1 == n ? HWP_EV_TAKEN : 0);
}

static void blocks(unsigned long long n) {
    unsigned long long i;
    for (i = 0; i < n; i++) {
        block(0x1000, 3);
        if (i % 3 == 0) block(0x2000, 5);
        block(0x3000, 2);
    }
}

static void paths(unsigned long long n) {
    unsigned long long i;
    unsigned k;
    for (i = 0; i < n; i++) {
        for (k = 0; k < 3; k++)
            put(0x1000 + 4 * k, k == 2 ? HWP_CLS_BR_COND : HWP_CLS_OTHER,
                k == 2 && i % 3 ? HWP_EV_TAKEN : 0);
        if (i % 3 == 0) block(0x100c, 5);
        block(0x3000, 2);
    }
}

#define HWX__PAD 24u

/* HWX__PAD other instructions from `at`, then one of class cls, taken. */
static void step(uint64_t at, uint64_t pc, uint32_t cls) {
    unsigned k;
    for (k = 0; k < HWX__PAD; k++) put(at + 4 * k, HWP_CLS_OTHER, 0);
    put(pc, cls, HWP_EV_TAKEN);
}

static void g(unsigned d) {
    step(0x30000, 0x30080, HWP_CLS_BR_COND);
    if (d > 1) {
        step(0x30084, 0x30100, HWP_CLS_CALL);
        g(d - 1);
    }
    step(0x30104, 0x30200, HWP_CLS_RET);
}

static void calls(unsigned long long n) {
    unsigned long long i;
    for (i = 0; i < n; i++) {
        step(0x10000, 0x10080, HWP_CLS_BR_COND);
        step(0x10084, 0x10100, HWP_CLS_CALL);
        step(0x20000, 0x20080, HWP_CLS_BR_COND);
        if (i % 2 == 0) {
            step(0x20084, 0x20100, HWP_CLS_CALL);
            g(1u + (unsigned)(i % 5));
        }
        step(0x20104, 0x20200, HWP_CLS_RET);
    }
}

/* The program of `mode` as one vCPU's stream; the last record goes where
 * the program would go next. */
static void program(const char *mode, unsigned long long n, uint32_t vcpu, const hwp_writer *w) {
    hwx_trace_writer_init(&t, w, vcpu);
    have_pend = 0;
    if (!strcmp(mode, "--blocks")) blocks(n);
    else if (!strcmp(mode, "--paths")) paths(n);
    else if (!strcmp(mode, "--calls")) calls(n);
    else loop(n);
    if (have_pend) {
        pend.next_pc = !strcmp(mode, "--blocks") || !strcmp(mode, "--paths") ? 0x1000
                       : !strcmp(mode, "--calls") ? 0x10000
                       : pend.cls == HWP_CLS_BR_COND ? 0x401000
                                                     : pend.pc + 4;
        hwx_trace_put(&t, &pend);
    }
    hwx_trace_flush(&t);
}

int main(int argc, char **argv) {
    hwp_writer w;
    FILE *f;
    const char *mode;
    unsigned long long n, total;
    long vcpu2 = -1;
    if (argc > 2 && !strcmp(argv[1], "--vcpu2")) {
        vcpu2 = strtol(argv[2], NULL, 10);
        argc -= 2;
        argv += 2;
    }
    mode = argc == 4 ? argv[1] : "";
    if ((argc != 3 && argc != 4) || vcpu2 < -1 || vcpu2 > 0x7fffffff ||
        (argc == 4 && strcmp(mode, "--blocks") && strcmp(mode, "--paths") &&
         strcmp(mode, "--calls")) ||
        !(f = fopen(argv[argc - 2], "wb"))) {
        fprintf(stderr, "usage: make_trace [--vcpu2 V] [--blocks|--paths|--calls] OUT N\n");
        return 2;
    }
    n = strtoull(argv[argc - 1], NULL, 10);
    w = hwp_writer_stdio(f);
    hwx_trace_write_header(&w);
    program(mode, n, 0, &w);
    total = t.total;
    if (vcpu2 >= 0) { /* the same program again, as a second vCPU's stream */
        program(mode, n, (uint32_t)vcpu2, &w);
        total += t.total;
    }
    hwx_trace_write_end(&w, total);
    return fclose(f) == 0 ? 0 : 1;
}
