/* examples/report/rp_bbv.c: basic-block vectors of a recorded trace
 * (docs/trace-format.md) in the format of Valgrind's exp-bbv tool, which
 * SimPoint reads: one line per interval, "T" then ":id:count" for every
 * block executed in it, ids from 1 in order of first execution, count =
 * instructions executed in that block during the interval (exp-bbv's
 * weighting, so the counts of a line sum to the interval).
 *
 * The vectors come from hwx_bbv (examples/common/hwx_bbv.c), the writer
 * the hosts' bbv= option uses too, so a host's file of a run equals this
 * one of the run's trace; here its block map grows as needed. */

#define _GNU_SOURCE
#include "rp_out.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwx.h"

/* The block map's first size; it doubles when full. */
#define RP__BBV_BLOCKS 4096u

static void rp__bbv_write(void *ctx, const char *s, size_t n) { fwrite(s, 1, n, (FILE *)ctx); }

/* hwx_bbv's map is full: move it into twice the memory. */
static hwp_status rp__bbv_grow(void *ctx, hwx_bbv *b) {
    void **mem = (void **)ctx;
    uint32_t blocks = b->max * 2;
    size_t n = hwx_bbv_bytes(blocks);
    void *m = n ? malloc(n) : NULL;
    if (!m || hwx_bbv_move(b, m, n, blocks) != HWP_OK) {
        free(m);
        return HWP_ENOSPC;
    }
    free(*mem);
    *mem = m;
    return HWP_OK;
}

int rp_out_bbv(const rp_opts *o) {
    int fd = open(o->trace, O_RDONLY), rc = 0, got;
    struct stat st;
    void *map;
    hwx_trace_reader r;
    hwp_insn in;
    hwx_bbv b;
    hwp_writer w;
    void *mem;
    FILE *out;
    if (fd < 0 || fstat(fd, &st)) {
        fprintf(stderr, "hwprof-report: %s: cannot open: %s\n", o->trace, strerror(errno));
        if (fd >= 0) close(fd);
        return 1;
    }
    map = st.st_size ? mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0) : NULL;
    close(fd);
    if (st.st_size && map == MAP_FAILED) {
        fprintf(stderr, "hwprof-report: %s: cannot map: %s\n", o->trace, strerror(errno));
        return 1;
    }
    if (hwx_trace_open(&r, map, (size_t)st.st_size) != HWP_OK) {
        fprintf(stderr, "hwprof-report: %s: byte %zu: %s\n", o->trace, r.err_off,
                r.why ? r.why : "not a trace");
        if (map) munmap(map, (size_t)st.st_size);
        return 1;
    }
    out = rp_open(o->bbv);
    if (!out) {
        if (map) munmap(map, (size_t)st.st_size);
        return 1;
    }
    w.write = rp__bbv_write;
    w.ctx = out;
    mem = malloc(hwx_bbv_bytes(RP__BBV_BLOCKS));
    if (!mem || hwx_bbv_init(&b, mem, hwx_bbv_bytes(RP__BBV_BLOCKS), RP__BBV_BLOCKS,
                             o->interval, &w) != HWP_OK) {
        fprintf(stderr, "hwprof-report: --bbv: %s\n",
                mem ? "--interval: expected at least 1" : "out of memory");
        rc = 1;
    } else {
        b.grow = rp__bbv_grow;
        b.grow_ctx = &mem;
        while ((got = hwx_trace_next(&r, &in)) == 1)
            hwx_bbv_run(&b, in.pc, 1, hwp_cls_is_branch(in.cls));
        if (got < 0) {
            fprintf(stderr, "hwprof-report: %s: byte %zu: %s\n", o->trace, r.err_off, r.why);
            rc = 1;
        }
        if (b.dropped) {
            fprintf(stderr, "hwprof-report: --bbv: out of memory for the block map\n");
            rc = 1;
        }
        hwx_bbv_finish(&b); /* the last, partial interval, as exp-bbv does */
    }
    rc |= rp_close(out, o->bbv);
    free(mem);
    if (map) munmap(map, (size_t)st.st_size);
    return rc;
}
