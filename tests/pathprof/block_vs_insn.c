/* tests/pathprof/block_vs_insn.c: the hosts' block-mode fast path
 * (hwx_path.c: one hwp_path_branch per block-ending branch, what the QEMU
 * plugin and the Valgrind tool run without the exact profile) against
 * their per-record path (hwp_path_insn, which check_path_reference.py
 * holds to the exact profile's own path stack) on a recorded real trace.
 *
 * Usage: block_vs_insn TRACE
 * Two sessions (models=path, a stack deep enough never to drop, a table
 * large enough never to evict) see the trace's first vCPU: one record by
 * record, the other in blocks cut after every branch and after 64
 * instructions (as a translation block is cut at a page or size limit),
 * memory records passed beside the block. The two Hot Path Tables must
 * be identical slot by slot, count by count. Exit 1 if not.
 * A host-side test (stdio, malloc, mmap). */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hwx.h"

#define BLOCK_MAX 64u

static char *hpt_paths(const hwx_session *s, char *buf, size_t cap) {
    hwp_bufwriter bw;
    hwp_writer w = hwp_writer_buf(&bw, buf, cap);
    char *hpt, *p;
    hwx_session_report_json(s, &w);
    if (bw.dropped) return NULL;
    hpt = strstr(buf, "\"hpt\":{\"model\":\"hpt\"");
    if (!hpt || !(p = strstr(hpt, "\"paths\":["))) return NULL;
    return p;
}

static hwx_session *open_session(const hwx_opts *o) {
    size_t bytes = hwx_session_bytes(o);
    hwx_session *s = malloc(sizeof *s);
    void *mem = malloc(bytes);
    if (!s || !mem || hwx_session_init(s, mem, bytes, o) != HWP_OK) {
        fprintf(stderr, "block_vs_insn: session: %s\n", s && mem ? hwp_why(s) : "out of memory");
        exit(2);
    }
    return s;
}

int main(int argc, char **argv) {
    static char ja[1 << 24], jb[1 << 24];
    hwx_opts o;
    hwx_trace_reader r;
    hwp_insn in, last, mem[BLOCK_MAX];
    uint64_t pcs[BLOCK_MAX], blocks = 0;
    uint32_t n = 0, nmem = 0, vcpu = 0;
    hwx_session *a, *b;
    struct stat st;
    const void *buf;
    const char *why = "";
    char *pa, *pb;
    int fd, got, started = 0;
    if (argc != 2) {
        fputs("usage: block_vs_insn TRACE\n", stderr);
        return 2;
    }
    hwx_opts_default(&o);
    if (hwx_opts_parse(&o, "path=on,hpt=16384x256,path_depth=1024", &why) != HWP_OK) {
        fprintf(stderr, "block_vs_insn: %s\n", why);
        return 2;
    }
    a = open_session(&o);
    b = open_session(&o);
    if (!hwx_session_block_ok(b)) {
        fputs("block_vs_insn: the session refuses block mode\n", stderr);
        return 2;
    }
    fd = open(argv[1], O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) { perror(argv[1]); return 2; }
    buf = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (buf == MAP_FAILED) { perror(argv[1]); return 2; }
    memset(&r, 0, sizeof r);
    if (hwx_trace_open(&r, buf, (size_t)st.st_size) != HWP_OK) {
        fprintf(stderr, "block_vs_insn: %s: byte %zu: %s\n", argv[1], r.err_off, r.why);
        return 2;
    }
    while ((got = hwx_trace_next(&r, &in)) == 1) {
        if (!started) { vcpu = r.vcpu; started = 1; }
        if (r.vcpu != vcpu) continue;
        hwx_session_insn(a, &in);
        last = in;
        pcs[n++] = in.pc;
        if (hwp_cls_is_branch(in.cls) || n == BLOCK_MAX) {
            hwx_session_block(b, pcs, n, &in, mem, nmem);
            blocks++;
            n = nmem = 0;
        } else if (in.cls == HWP_CLS_LOAD || in.cls == HWP_CLS_STORE) {
            mem[nmem++] = in;
        }
    }
    if (got < 0) {
        fprintf(stderr, "block_vs_insn: %s: byte %zu: %s\n", argv[1], r.err_off, r.why);
        return 2;
    }
    if (n) { /* the open block at the end; its last record is not in mem[] */
        if (nmem && mem[nmem - 1].pc == last.pc) nmem--;
        hwx_session_block(b, pcs, n, &last, mem, nmem);
    }
    hwx_session_finish(a);
    hwx_session_finish(b);
    pa = hpt_paths(a, ja, sizeof ja);
    pb = hpt_paths(b, jb, sizeof jb);
    if (!pa || !pb) {
        fputs("block_vs_insn: no HPT paths in a report\n", stderr);
        return 2;
    }
    *strchr(pa, ']') = 0;
    *strchr(pb, ']') = 0;
    printf("records %llu, blocks %llu; HPT paths: %zu bytes per-record, %zu block mode\n",
           (unsigned long long)r.records, (unsigned long long)blocks, strlen(pa), strlen(pb));
    if (strcmp(pa, pb)) {
        size_t i = 0;
        while (pa[i] == pb[i]) i++;
        printf("FAIL the tables differ at byte %zu:\n  per-record %.80s\n  block      %.80s\n", i,
               pa + (i > 40 ? i - 40 : 0), pb + (i > 40 ? i - 40 : 0));
        return 1;
    }
    puts("ok   the block-mode table is the per-record table");
    munmap((void *)buf, (size_t)st.st_size);
    close(fd);
    return 0;
}
