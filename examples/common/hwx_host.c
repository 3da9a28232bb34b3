/* examples/common/hwx_host.c: see hwx_host.h. POSIX + C library. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "hwx_host.h"

static char hwx__hmsg[2 * HWX_PATH_MAX + 128];

static hwp_status hwx__hfail(const char **why, const char *what, const char *path, int err) {
    snprintf(hwx__hmsg, sizeof hwx__hmsg, "%s%s%s%s%s", what, path ? " " : "", path ? path : "",
             err ? ": " : "", err ? strerror(err) : "");
    if (why) *why = hwx__hmsg;
    return HWP_EINVAL;
}

static void hwx__out_write(void *ctx, const char *s, size_t n) {
    hwx_out *o = (hwx_out *)ctx;
    if (o->err || !n) return;
    if (fwrite(s, 1, n, (FILE *)o->f) != n) o->err = errno ? errno : EIO;
}

/* A target that exists and is not a regular file is written in place:
 * renaming over a device or a pipe would replace it. */
static int hwx__is_special(const char *path) {
    struct stat st;
    return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

hwp_status hwx_out_open(hwx_out *o, const char *path, const char **why) {
    int fd;
    memset(o, 0, sizeof *o);
    o->w.write = hwx__out_write;
    o->w.ctx = o;
    if (!path || !path[0] || !strcmp(path, "-")) {
        o->f = stdout;
        o->direct = 1;
        return HWP_OK;
    }
    if (strlen(path) >= sizeof o->path) return hwx__hfail(why, "report path too long:", path, 0);
    strcpy(o->path, path);
    if (hwx__is_special(path)) {
        o->direct = 1;
        o->f = fopen(path, "w");
        if (!o->f) return hwx__hfail(why, "cannot open", path, errno);
        return HWP_OK;
    }
    snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", path, (long)getpid());
    fd = open(o->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0 || !(o->f = fdopen(fd, "w"))) {
        int e = errno;
        if (fd >= 0) close(fd);
        o->tmp[0] = 0;
        return hwx__hfail(why, "cannot create", path, e);
    }
    return HWP_OK;
}

void hwx_out_abort(hwx_out *o) {
    if (o->f && o->f != stdout) fclose((FILE *)o->f);
    o->f = NULL;
    if (o->tmp[0]) unlink(o->tmp);
    o->tmp[0] = 0;
}

hwp_status hwx_out_close(hwx_out *o, const char **why) {
    FILE *f = (FILE *)o->f;
    int err = o->err;
    const char *name = o->path[0] ? o->path : "standard output";
    if (!f) return hwx__hfail(why, "report not open:", name, 0);
    if (fflush(f) != 0 && !err) err = errno ? errno : EIO;
    if (ferror(f) && !err) err = EIO;
    if (f != stdout) {
        if (!o->direct && !err && fsync(fileno(f)) != 0) err = errno;
        if (fclose(f) != 0 && !err) err = errno ? errno : EIO;
    }
    o->f = NULL;
    if (!err && o->tmp[0] && rename(o->tmp, o->path) != 0) err = errno;
    if (err) {
        if (o->tmp[0]) unlink(o->tmp);
        o->tmp[0] = 0;
        return hwx__hfail(why, "cannot write", name, err);
    }
    o->tmp[0] = 0;
    return HWP_OK;
}

hwp_status hwx_out_check(const char *opt, const char *path, const char **why) {
    char dir[HWX_PATH_MAX];
    const char *slash;
    struct stat st;
    char what[HWX_PATH_MAX + 32];
    snprintf(what, sizeof what, "%s=%s:", opt, path);
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
        return hwx__hfail(why, what, "is a directory", 0);
    if (hwx__is_special(path)) {
        if (access(path, W_OK) != 0) return hwx__hfail(why, what, "cannot write", errno);
        return HWP_OK;
    }
    slash = strrchr(path, '/');
    if (!slash) strcpy(dir, ".");
    else if (slash == path) strcpy(dir, "/");
    else if ((size_t)(slash - path) < sizeof dir) {
        memcpy(dir, path, (size_t)(slash - path));
        dir[slash - path] = 0;
    } else {
        return hwx__hfail(why, what, "path too long", 0);
    }
    if (stat(dir, &st) != 0) return hwx__hfail(why, what, "no directory", errno);
    if (!S_ISDIR(st.st_mode)) return hwx__hfail(why, what, "not under a directory", ENOTDIR);
    if (access(dir, W_OK | X_OK) != 0) return hwx__hfail(why, what, "directory not writable", errno);
    return HWP_OK;
}

hwp_status hwx_host_check(const hwx_opts *o, const char **why) {
    size_t n = hwx_opts_scratch_bytes(o);
    void *scratch;
    hwp_status st;
    if (hwx_opts_validate(o, NULL, 0, why) != HWP_OK) return HWP_EINVAL;
    scratch = n ? malloc(n) : NULL;
    if (n && !scratch) return hwx__hfail(why, "hwx: out of memory for the model check", NULL, 0);
    st = hwx_opts_validate(o, scratch, n, why);
    free(scratch);
    if (st != HWP_OK) return st;
    /* One session's memory, exact tables included, must exist: refused
     * here, not after the guest has run. Physical memory bounds it (a
     * lazy allocator would accept more and fail later). */
    n = hwx_session_bytes(o);
    {
        long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
        void *p = NULL;
        if ((pages > 0 && psize > 0 && (double)n > (double)pages * (double)psize) ||
            !(p = malloc(n))) {
            snprintf(hwx__hmsg, sizeof hwx__hmsg,
                     "%scannot allocate %zu MiB for one session (exact_mb=%llu, "
                     "physical memory %lld MiB)",
                     o->exact ? "exact_mb: " : "", n >> 20,
                     (unsigned long long)(o->exact_bytes >> 20),
                     (long long)((double)pages * (double)psize / 1048576.0));
            if (why) *why = hwx__hmsg;
            return HWP_EINVAL;
        }
        free(p);
    }
    if (o->report[0] && hwx_out_check("report", o->report, why) != HWP_OK) return HWP_EINVAL;
    if (o->json[0] && hwx_out_check("json", o->json, why) != HWP_OK) return HWP_EINVAL;
    if (o->record[0] && hwx_out_check("record", o->record, why) != HWP_OK) return HWP_EINVAL;
    if (o->bbv[0] && hwx_out_check("bbv", o->bbv, why) != HWP_OK) return HWP_EINVAL;
    return HWP_OK;
}

bool hwx_host_read(uint64_t addr, void *out, size_t n) {
    struct iovec local, remote;
    ssize_t got;
    if (!n) return true;
    if (!addr || addr + n < addr) return false;
    local.iov_base = out;
    local.iov_len = n;
    remote.iov_base = (void *)(uintptr_t)addr;
    remote.iov_len = n;
    got = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);
    return got == (ssize_t)n;
}
