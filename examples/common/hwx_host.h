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

#ifdef __cplusplus
}
#endif

#endif /* HWX_HOST_H */
