/* examples/report/rp_bbv.c: basic-block vectors of a recorded trace
 * (docs/trace-format.md) in the format of Valgrind's exp-bbv tool, which
 * SimPoint reads: one line per interval, "T" then ":id:count" for every
 * block executed in it, ids from 1 in order of first execution, count =
 * instructions executed in that block during the interval (exp-bbv's
 * weighting, so the counts of a line sum to the interval).
 *
 * A block starts at the first instruction and after every branch
 * (hwp_cls_is_branch); an interval is cut at exactly N instructions, so
 * a block may count in two intervals. The writer is plain C over a
 * hwp_writer-free FILE: hosts that want BBVs from a live run can share
 * rp_bbv_* (an open-addressed map from block start to id). */
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

typedef struct rp_bbv {
    uint64_t *key;   /* block start + 1, 0: empty                       */
    uint32_t *id;
    uint64_t *cnt;   /* instructions in the open interval, per id       */
    uint32_t *touched;
    size_t cap, used, ntouched, idcap;
    uint64_t interval, fill, start;
    int in_block;
    FILE *out;
} rp_bbv;

static int rp__bbv_grow(rp_bbv *b) {
    size_t cap = b->cap ? 2 * b->cap : 4096, i;
    uint64_t *key = (uint64_t *)calloc(cap, sizeof *key);
    uint32_t *id = (uint32_t *)calloc(cap, sizeof *id);
    if (!key || !id) {
        free(key);
        free(id);
        return -1;
    }
    for (i = 0; i < b->cap; i++)
        if (b->key[i]) {
            size_t h = (size_t)((b->key[i] * 0x9E3779B97F4A7C15ull) >> 20) & (cap - 1);
            while (key[h]) h = (h + 1) & (cap - 1);
            key[h] = b->key[i];
            id[h] = b->id[i];
        }
    free(b->key);
    free(b->id);
    b->key = key;
    b->id = id;
    b->cap = cap;
    return 0;
}

static uint32_t rp__bbv_id(rp_bbv *b, uint64_t start) {
    uint64_t k = start + 1;
    size_t h;
    if (2 * (b->used + 1) > b->cap && rp__bbv_grow(b)) return 0;
    h = (size_t)((k * 0x9E3779B97F4A7C15ull) >> 20) & (b->cap - 1);
    while (b->key[h] && b->key[h] != k) h = (h + 1) & (b->cap - 1);
    if (!b->key[h]) {
        if (b->used + 1 >= b->idcap) {
            size_t c = b->idcap ? 2 * b->idcap : 4096;
            uint64_t *cnt = (uint64_t *)realloc(b->cnt, c * sizeof *cnt);
            uint32_t *t;
            if (!cnt) return 0;
            memset(cnt + b->idcap, 0, (c - b->idcap) * sizeof *cnt);
            b->cnt = cnt;
            t = (uint32_t *)realloc(b->touched, c * sizeof *t);
            if (!t) return 0;
            b->touched = t;
            b->idcap = c;
        }
        b->key[h] = k;
        b->id[h] = (uint32_t)++b->used;
    }
    return b->id[h];
}

static void rp__bbv_line(rp_bbv *b) {
    size_t i;
    if (!b->ntouched) return;
    fputc('T', b->out);
    for (i = 0; i < b->ntouched; i++) {
        uint32_t id = b->touched[i];
        fprintf(b->out, ":%u:%llu ", id, (unsigned long long)b->cnt[id]);
        b->cnt[id] = 0;
    }
    fputc('\n', b->out);
    b->ntouched = 0;
    b->fill = 0;
}

/* One retired instruction; 0, or -1 when out of memory. */
static int rp__bbv_insn(rp_bbv *b, const hwp_insn *in) {
    uint32_t id;
    if (!b->in_block) {
        b->start = in->pc;
        b->in_block = 1;
    }
    id = rp__bbv_id(b, b->start);
    if (!id) return -1;
    if (!b->cnt[id]) b->touched[b->ntouched++] = id;
    b->cnt[id]++;
    if (hwp_cls_is_branch(in->cls)) b->in_block = 0;
    if (++b->fill == b->interval) rp__bbv_line(b);
    return 0;
}

int rp_out_bbv(const rp_opts *o) {
    int fd = open(o->trace, O_RDONLY), rc = 0, got;
    struct stat st;
    void *map;
    hwx_trace_reader r;
    hwp_insn in;
    rp_bbv b;
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
    memset(&b, 0, sizeof b);
    b.interval = o->interval;
    b.out = rp_open(o->bbv);
    if (!b.out) {
        if (map) munmap(map, (size_t)st.st_size);
        return 1;
    }
    while ((got = hwx_trace_next(&r, &in)) == 1)
        if (rp__bbv_insn(&b, &in)) {
            fprintf(stderr, "hwprof-report: --bbv: out of memory\n");
            rc = 1;
            break;
        }
    if (got < 0) {
        fprintf(stderr, "hwprof-report: %s: byte %zu: %s\n", o->trace, r.err_off, r.why);
        rc = 1;
    }
    rp__bbv_line(&b); /* the last, partial interval, as exp-bbv does */
    rc |= rp_close(b.out, o->bbv);
    free(b.key);
    free(b.id);
    free(b.cnt);
    free(b.touched);
    if (map) munmap(map, (size_t)st.st_size);
    return rc;
}
