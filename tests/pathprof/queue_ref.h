/* tests/pathprof/queue_ref.h: a test-only reference for the branch queue
 * of Vaswani et al. (section 8.2), to check the model's queue timing on long
 * random streams.
 *
 * Written from the paper's description, not from pathprof.h, and in a
 * different form: the model keeps a ring of finish times and compares
 * the commit time with the finish time of the branch q+1 places back;
 * this reference keeps the profiler's contents as a FIFO of the branches
 * still inside it and lets them leave explicitly.
 *
 *   "If a retiring branch finds the branch queue full, the commit stage
 *    stalls and no further instructions are committed until the stalling
 *    branch can be accommodated in the branch queue."
 *
 * The profiler holds `queue` waiting branches plus the one it is
 * serving (docs/pathprof.md, "Branch queue"; HWP_PATH_QUEUE_NONE: only
 * the one in service). A branch commits after its block's instructions
 * at cycles_per_insn_q8/256 cycles each; branches whose service has
 * finished by then have left. If the profiler is still full, the branch
 * (and every later commit) waits until the oldest one leaves: a commit
 * stall. It is served after the branch before it, for its service time.
 * Whole stall cycles are charged to the cost shim as they accumulate:
 * one charge each time the whole-cycle total grows. Times in 1/256
 * cycles. Hosted; tests only. */
#ifndef HWPROF_TESTS_PATHPROF_QUEUE_REF_H
#define HWPROF_TESTS_PATHPROF_QUEUE_REF_H

#include <stdint.h>
#include <string.h>

#define QREF_MAX 1025 /* HWP_PATH_QUEUE_MAX waiting + 1 in service */

typedef struct qref {
    uint32_t cap;           /* branches the profiler can hold            */
    uint32_t cpi_q8;        /* host time per instruction                 */
    uint64_t inside[QREF_MAX]; /* finish times, oldest at head           */
    uint32_t head, len;
    uint64_t now;           /* last commit time, stalls included         */
    uint64_t host;          /* commit time the host alone would take     */
    uint64_t stall;         /* total commit stall                        */
    uint64_t last_finish;   /* when the profiler is done with all        */
    uint64_t charged;       /* whole stall cycles charged                */
    uint64_t charges;       /* how many charges                          */
} qref;

static void qref_init(qref *q, uint32_t queue_entries, uint32_t cpi_q8) {
    memset(q, 0, sizeof *q);
    q->cap = queue_entries + 1;
    q->cpi_q8 = cpi_q8;
}

/* Branches that have finished by time t leave the profiler. */
static void qref_leave(qref *q, uint64_t t) {
    while (q->len && q->inside[q->head] <= t) {
        q->head = (q->head + 1) % q->cap;
        q->len--;
    }
}

/* One branch after `insns` instructions, served in `cycles`. */
static void qref_branch(qref *q, uint32_t insns, uint64_t cycles) {
    uint64_t t = q->now + (uint64_t)insns * q->cpi_q8, start;
    q->host += (uint64_t)insns * q->cpi_q8;
    qref_leave(q, t);
    if (q->len == q->cap) { /* full: wait until the oldest has left */
        uint64_t leave = q->inside[q->head];
        q->stall += leave - t;
        t = leave;
        qref_leave(q, t);
        if (q->stall / 256 > q->charged) {
            q->charges++;
            q->charged = q->stall / 256;
        }
    }
    start = t > q->last_finish ? t : q->last_finish;
    q->last_finish = start + cycles * 256;
    q->inside[(q->head + q->len) % q->cap] = q->last_finish;
    q->len++;
    q->now = t;
}

#endif
