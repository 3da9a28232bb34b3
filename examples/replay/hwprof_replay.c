/* examples/replay/hwprof_replay.c: feed a recorded trace (record=FILE of
 * the QEMU plugin or the Valgrind tool; docs/trace-format.md) through any
 * hwprof model at full speed, with the same options and report.
 *
 *   hwprof-replay TRACE [key=value ...]     e.g. models=all exact=on
 *   hwprof-replay --check TRACE             validate only: prints records or
 *                                           "offset N: reason", exit 1
 *   hwprof-replay --dump pc|value|addr TRACE OUT
 *                                           write one key per record as a
 *                                           little-endian uint64 (the input
 *                                           of `hwprof-bench --keys OUT`)
 *
 * Every vCPU stream in the trace gets its own session (as in the plugin);
 * they are merged at the end. A retire item (code the host saw unmapped)
 * reaches its vCPU's session where the host's did. Prints the text report on stdout (or
 * report=FILE), the JSON report to json=FILE and each vCPU's basic-block
 * vectors to bbv=FILE (FILE.n for vCPU n); the timing line goes to
 * stderr. Options, model descs and output paths are checked before the
 * trace is read; a report that cannot be written completely is an error
 * (exit 3) and leaves no partial file. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HWPROF_STDIO
#include "hwx_host.h"

#define REPLAY_MAX_VCPUS 256

/* CPU time of the process, not wall time: the figure is the per-record
 * cost of decoding and the models, which other load on the machine would
 * otherwise inflate. */
static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static const uint8_t *map_file(const char *path, size_t *len) {
    struct stat st;
    void *p;
    int fd = open(path, O_RDONLY);
    if (fd < 0 || fstat(fd, &st) != 0) {
        fprintf(stderr, "hwprof-replay: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    *len = (size_t)st.st_size;
    p = *len ? mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0) : (void *)"";
    close(fd);
    if (p == MAP_FAILED) {
        fprintf(stderr, "hwprof-replay: mmap %s: %s\n", path, strerror(errno));
        exit(2);
    }
    return (const uint8_t *)p;
}

static int check_only(const char *path) {
    size_t len;
    const uint8_t *b = map_file(path, &len);
    hwx_trace_reader r;
    hwp_insn in;
    int rc;
    if (hwx_trace_open(&r, b, len) != HWP_OK) {
        printf("offset %zu: %s\n", r.err_off, r.why);
        return 1;
    }
    while ((rc = hwx_trace_next(&r, &in)) == 1) {}
    if (rc < 0) {
        printf("offset %zu: %s (after %llu records)\n", r.err_off, r.why,
               (unsigned long long)r.records);
        return 1;
    }
    printf("ok: %llu records", (unsigned long long)r.records);
    if (r.retires) printf(", %llu retire items", (unsigned long long)r.retires);
    printf("\n");
    return 0;
}

/* --dump: the keys the session's RAP would see with key=pc|value|addr
 * (hwx_session.c: values of LOAD records, addresses of LOAD and STORE
 * records, the pc of every record), in file order, so a model benchmark
 * can run the same real key stream without the trace decoder. */
static int dump_keys(const char *key, const char *path, const char *out) {
    size_t len;
    const uint8_t *b;
    hwx_trace_reader r;
    hwp_insn in;
    uint64_t n = 0;
    uint32_t mask;
    int rc, which;
    FILE *f;
    if (!strcmp(key, "pc")) {
        which = HWX_KEY_PC;
        mask = ~0u;
    } else if (!strcmp(key, "value")) {
        which = HWX_KEY_VALUE;
        mask = HWP_CLS_BIT(HWP_CLS_LOAD);
    } else if (!strcmp(key, "addr")) {
        which = HWX_KEY_ADDR;
        mask = HWP_CLS_BIT(HWP_CLS_LOAD) | HWP_CLS_BIT(HWP_CLS_STORE);
    } else {
        fprintf(stderr, "hwprof-replay: --dump %s: want pc, value or addr\n", key);
        return 2;
    }
    b = map_file(path, &len);
    if (hwx_trace_open(&r, b, len) != HWP_OK) {
        fprintf(stderr, "hwprof-replay: %s: offset %zu: %s\n", path, r.err_off, r.why);
        return 1;
    }
    f = fopen(out, "wb");
    if (!f) {
        fprintf(stderr, "hwprof-replay: %s: %s\n", out, strerror(errno));
        return 2;
    }
    while ((rc = hwx_trace_next(&r, &in)) == 1) {
        uint64_t k = which == HWX_KEY_PC ? in.pc : which == HWX_KEY_VALUE ? in.value : in.addr;
        uint8_t le[8];
        int i;
        if (!(mask & HWP_CLS_BIT(in.cls))) continue;
        for (i = 0; i < 8; i++) le[i] = (uint8_t)(k >> (8 * i));
        fwrite(le, 1, sizeof le, f);
        n++;
    }
    if (fclose(f) != 0) {
        fprintf(stderr, "hwprof-replay: %s: %s\n", out, strerror(errno));
        return 2;
    }
    if (rc < 0) {
        fprintf(stderr, "hwprof-replay: %s: offset %zu: %s (%llu keys written)\n",
                path, r.err_off, r.why, (unsigned long long)n);
        return 1;
    }
    printf("%llu %s keys of %llu records\n", (unsigned long long)n, key,
           (unsigned long long)r.records);
    return 0;
}

/* bbv=FILE: vCPU 0's vectors in FILE, vCPU n's in FILE.n, as the QEMU
 * plugin names them; each complete or absent (hwx_out). */
static hwx_out *bbv_out[REPLAY_MAX_VCPUS];

static int bbv_open(hwx_session *s, const char *path, uint32_t vcpu) {
    char name[HWX_PATH_MAX + 16];
    const char *why = "";
    snprintf(name, sizeof name, vcpu ? "%s.%u" : "%s", path, vcpu);
    bbv_out[vcpu] = (hwx_out *)malloc(sizeof(hwx_out));
    if (!bbv_out[vcpu] || hwx_out_open(bbv_out[vcpu], name, &why) != HWP_OK) {
        fprintf(stderr, "hwprof-replay: %s\n", bbv_out[vcpu] ? why : "out of memory");
        return 3;
    }
    hwx_session_bbv_out(s, &bbv_out[vcpu]->w);
    return 0;
}

/* After the sessions' finish wrote the last lines: 0 or 3. */
static int bbv_close(void) {
    const char *why = "";
    int i, rc = 0;
    for (i = 0; i < REPLAY_MAX_VCPUS; i++)
        if (bbv_out[i] && hwx_out_close(bbv_out[i], &why) != HWP_OK) {
            fprintf(stderr, "hwprof-replay: %s\n", why);
            rc = 3;
        }
    return rc;
}

/* An exit before bbv_close: the vectors already opened leave nothing. */
static int bbv_abort(int rc) {
    int i;
    for (i = 0; i < REPLAY_MAX_VCPUS; i++)
        if (bbv_out[i]) hwx_out_abort(bbv_out[i]);
    return rc;
}

/* One report through hwx_out (complete or absent); 0 or 3. */
static int write_report(const char *path, const hwx_session *all, int json) {
    hwx_out out;
    const char *why = "";
    if (hwx_out_open(&out, path, &why) != HWP_OK) {
        fprintf(stderr, "hwprof-replay: %s\n", why);
        return 3;
    }
    if (json) hwx_session_report_json(all, &out.w);
    else hwx_session_report_text(all, &out.w);
    if (hwx_out_close(&out, &why) != HWP_OK) {
        fprintf(stderr, "hwprof-replay: %s\n", why);
        return 3;
    }
    return 0;
}

int main(int argc, char **argv) {
    static hwx_session *sess[REPLAY_MAX_VCPUS];
    hwx_opts o;
    hwx_trace_reader r;
    hwp_insn in;
    hwx_session *all = NULL;
    const uint8_t *buf;
    const char *why = "";
    size_t len, bytes;
    double t0, t1;
    int i, rc, wrc;
    if (argc >= 3 && !strcmp(argv[1], "--check")) return check_only(argv[2]);
    if (argc >= 5 && !strcmp(argv[1], "--dump")) return dump_keys(argv[2], argv[3], argv[4]);
    if (argc < 2 || argv[1][0] == '-') {
        fprintf(stderr, "usage: %s TRACE [key=value ...] | --check TRACE"
                " | --dump pc|value|addr TRACE OUT\n", argv[0]);
        return 2;
    }
    hwx_opts_default(&o);
    for (i = 2; i < argc; i++)
        if (hwx_opts_parse(&o, argv[i], &why) != HWP_OK) {
            fprintf(stderr, "hwprof-replay: %s\n", why);
            return 2;
        }
    if (hwx_host_check(&o, &why) != HWP_OK) {
        fprintf(stderr, "hwprof-replay: %s\n", why);
        return 2;
    }
    bytes = hwx_session_bytes(&o);
    buf = map_file(argv[1], &len);
    if (hwx_trace_open(&r, buf, len) != HWP_OK) {
        fprintf(stderr, "hwprof-replay: %s: offset %zu: %s\n", argv[1], r.err_off, r.why);
        return 1;
    }
    r.want_retire = 1;
    t0 = cpu_s();
    while ((rc = hwx_trace_next(&r, &in)) > 0) {
        hwx_session *s;
        if (rc == HWX_TRACE_RETIRE) { /* code the host saw unmapped */
            if (r.vcpu < REPLAY_MAX_VCPUS && sess[r.vcpu])
                hwx_session_retire(sess[r.vcpu], r.lo, r.hi);
            continue;
        }
        if (r.vcpu >= REPLAY_MAX_VCPUS) {
            fprintf(stderr, "hwprof-replay: vCPU %u beyond %d\n", r.vcpu, REPLAY_MAX_VCPUS);
            return bbv_abort(1);
        }
        s = sess[r.vcpu];
        if (!s) {
            s = sess[r.vcpu] = (hwx_session *)malloc(sizeof *s);
            void *mem = malloc(bytes);
            if (!s || !mem || hwx_session_init(s, mem, bytes, &o) != HWP_OK) {
                fprintf(stderr, "hwprof-replay: session: %s\n", s && mem ? hwp_why(s) : "out of memory");
                return bbv_abort(1);
            }
            if (o.bbv[0] && bbv_open(s, o.bbv, r.vcpu)) return bbv_abort(3);
        }
        hwx_session_insn(s, &in);
    }
    t1 = cpu_s();
    if (rc < 0)
        fprintf(stderr, "hwprof-replay: %s: offset %zu: %s (report covers the %llu records before)\n",
                argv[1], r.err_off, r.why, (unsigned long long)r.records);
    for (i = 0; i < REPLAY_MAX_VCPUS; i++) {
        if (!sess[i]) continue;
        hwx_session_finish(sess[i]);
        if (!all) all = sess[i];
        else if (hwx_session_merge(all, sess[i]) != HWP_OK) {
            fprintf(stderr, "hwprof-replay: merge: %s\n", hwp_why(all));
            return bbv_abort(1);
        }
    }
    wrc = bbv_close();
    if (!all) {
        fprintf(stderr, "hwprof-replay: no records\n");
        return rc < 0 ? 1 : 0;
    }
    if (all->exact) {
        size_t n = hwx_session_eval_bytes(all);
        void *scratch = malloc(n);
        if (!scratch || hwx_session_evaluate(all, scratch, n) != HWP_OK)
            fprintf(stderr, "hwprof-replay: accuracy: %s\n", scratch ? hwp_why(all) : "out of memory");
        free(scratch);
    }
    if (!wrc) wrc = write_report(o.report, all, 0);
    if (o.json[0] && !wrc) wrc = write_report(o.json, all, 1);
    fprintf(stderr, "replay: %llu records in %.3f s CPU (%.1f ns/record)\n",
            (unsigned long long)r.records, t1 - t0,
            r.records ? 1e9 * (t1 - t0) / (double)r.records : 0.0);
    if (wrc) return wrc;
    return rc < 0 ? 1 : 0;
}
