/* examples/common/hwx_host.h: what every host with a C library (the QEMU
 * plugin, the replayer) does at start and at exit, written once:
 *
 *   hwx_host_check(o, &why)    before the guest starts: every option and
 *                              model desc (hwx_opts_validate, with the
 *                              models built once in scratch memory), the
 *                              memory of one session, the report=, json=
 *                              and record= paths. A refusal is a non-zero
 *                              exit with *why, never a run that fails in
 *                              every vCPU.
 *   hwx_out_open / hwx_out_close
 *                              a report is complete or absent: it goes to
 *                              a temporary file beside the target, every
 *                              write is checked, and only a report whose
 *                              writes and close all succeeded is renamed
 *                              over the target. A target that is not a
 *                              regular file (a terminal, a pipe,
 *                              /dev/full) is written in place, checked
 *                              the same way.
 *
 * The Valgrind tool has no C library: hw_main.c does the same with
 * Valgrind's own file calls. Messages live in a static buffer (start and
 * exit run on one thread). */
#ifndef HWX_HOST_H
#define HWX_HOST_H

#include "hwx.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hwx_out {
    hwp_writer w;        /* the report goes through this                 */
    void *f;             /* FILE *                                        */
    int direct;          /* writing the target itself (stdout, a device)  */
    int err;             /* errno of the first failed write, 0: none      */
    char path[HWX_PATH_MAX];
    char tmp[HWX_PATH_MAX + 32];
} hwx_out;

/* path NULL, "" or "-": standard output. */
hwp_status hwx_out_open(hwx_out *o, const char *path, const char **why);
/* Flush, close and (for a file) rename into place; on any failure the
 * temporary file is removed and *why says what failed. */
hwp_status hwx_out_close(hwx_out *o, const char **why);
/* Give up: remove the temporary file, leave the target as it was. */
void hwx_out_abort(hwx_out *o);

/* Can a report be written to `path`? (its directory exists and is
 * writable, or the path is a writable device). `opt` names the option. */
hwp_status hwx_out_check(const char *opt, const char *path, const char **why);
hwp_status hwx_host_check(const hwx_opts *o, const char **why);

/* Copy n bytes at `addr` of this process into out; false when the range
 * is not readable (unmapped or protected), instead of a SIGSEGV that the
 * host would blame on its guest. One system call (process_vm_readv on
 * the process itself): for checking an address such as a guest base, or
 * for occasional reads, not for every load. */
bool hwx_host_read(uint64_t addr, void *out, size_t n);

/* ---- the session's exact profiles (exact=on), for a host's own checks --
 *
 * A host that takes decisions of its own from the exact ground truth
 * (a VM's tiering advisor: examples/lua/hwlua.c) reads the session's
 * exact tables through these, during the run or after it. Tables: */
enum {
    HWX_EXACT_PC = 0,    /* k1 pc: count executions, aux taken (branches) */
    HWX_EXACT_VALUE = 1, /* (k1 load pc, k2 value loaded): count          */
    HWX_EXACT_PATH = 2   /* (k1 path start, k2 length << 32 | direction
                            bits): count of completed paths              */
};
typedef struct hwx_exact_row {
    uint64_t k1, k2, count, aux;
} hwx_exact_row;
/* The count of one key: 0 when it was never seen or exact is off. */
uint64_t hwx_exact_count(const hwx_session *s, uint32_t table, uint64_t k1, uint64_t k2);
/* Every key of a table, in no order: start with *it = 0; false at the
 * end (at once when exact is off). */
bool hwx_exact_next(const hwx_session *s, uint32_t table, uint64_t *it, hwx_exact_row *row);

/* ---- a tiering advisor's decisions, as they are taken ------------------
 *
 * A VM host that advises a JIT (examples/lua/hwlua.c) takes the
 * decisions a JIT would take from the models' profiles during the run,
 * and hands each to a callback the embedding VM registers, once, when
 * the evidence first satisfies the decision rule (docs/lua.md, "Tiering
 * decisions"). A decision is never taken back, as a compiled trace is
 * not. */
enum {
    HWX_DEC_FUNCTION = 1, /* compile a function: site = its code          */
    HWX_DEC_LOOP = 2,     /* compile a loop: site = its header            */
    HWX_DEC_TYPE = 3,     /* specialise a site's operands on `what`, their
                             type pair                                     */
    HWX_DEC_VALUE = 4,    /* specialise a table read on `what`, its value  */
    HWX_DEC_PATH = 5      /* lay out a path straight: site = its start,
                             what = its shape (length << 32 | directions)  */
};
typedef struct hwx_decision {
    uint32_t kind;       /* HWX_DEC_*                                      */
    uint32_t line;       /* source line of a function or loop, else 0     */
    const char *source;  /* its source's name, else NULL                  */
    uint64_t site, what;
    uint64_t when;       /* instructions (bytecodes) retired when taken   */
    /* The evidence, as the profile showed it when the rule was met:
     * FUNCTION, LOOP: count = the site's estimated calls or iterations,
     * of `total` calls + back edges; TYPE, VALUE: count = the site's
     * estimated events of `total` value events, invariance = the share
     * of `what` among them with its 95% interval [lo, hi] over `samples`
     * samples; PATH: count = the path's count in the profile. */
    uint64_t count, total, samples;
    double invariance, lo, hi;
} hwx_decision;
typedef void (*hwx_decision_fn)(void *ctx, const hwx_decision *d);

/* {"models":{...}}: the models' profiles alone, as the session's JSON
 * report has them (each model's reader takes its member back), without
 * the report's exact tables: what an advisor reads at a checkpoint. */
void hwx_session_profiles_json(const hwx_session *s, const hwp_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* HWX_HOST_H */
