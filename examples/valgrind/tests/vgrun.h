/* examples/valgrind/tests/vgrun.h: run a program under the hwprof
 * Valgrind tool from a test. The build passes the paths in the
 * environment (tests/meson.build): HWVG_VALGRIND (the valgrind launcher),
 * HWVG_LIB (the launcher dir holding hwprof-amd64-linux), HWVG_TMP (a
 * scratch dir in the build tree). */
#ifndef HWVG_RUN_H
#define HWVG_RUN_H

#define _XOPEN_SOURCE 700
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *vgr_env(const char *name) {
    const char *v = getenv(name);
    if (!v || !*v) {
        fprintf(stderr, "%s is not set (run through meson test)\n", name);
        exit(77);
    }
    return v;
}

/* A path in the scratch dir; returns a static buffer per slot 0..7. */
static const char *vgr_tmp(const char *name) {
    static char buf[8][512];
    static unsigned slot;
    char *b = buf[slot++ & 7];
    snprintf(b, sizeof buf[0], "%s/%s", vgr_env("HWVG_TMP"), name);
    return b;
}

/* valgrind --tool=hwprof -q <tool_args...> -- <prog...>, stdout to
 * `out` (NULL: /dev/null), stdin from `in` (NULL: /dev/null), `env` a
 * NULL-terminated list of extra NAME=VALUE strings. Returns the exit
 * status, or -1 if it did not exit normally. */
static int vgr_run(const char *const *tool_args, const char *const *prog,
                   const char *in, const char *out, const char *const *env) {
    const char *argv[64];
    int n = 0, i, st;
    pid_t pid;
    argv[n++] = vgr_env("HWVG_VALGRIND");
    argv[n++] = "--tool=hwprof";
    argv[n++] = "-q";
    for (i = 0; tool_args && tool_args[i] && n < 40; i++) argv[n++] = tool_args[i];
    for (i = 0; prog[i] && n < 63; i++) argv[n++] = prog[i];
    argv[n] = NULL;
    fflush(stdout);
    pid = fork();
    if (pid < 0) return -1;
    if (pid == 0) {
        int fi = open(in ? in : "/dev/null", O_RDONLY);
        int fo = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fi < 0 || fo < 0) _exit(126);
        dup2(fi, 0);
        dup2(fo, 1);
        setenv("VALGRIND_LIB", vgr_env("HWVG_LIB"), 1);
        for (i = 0; env && env[i]; i++) putenv((char *)env[i]);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return -1;
    return WEXITSTATUS(st);
}

/* The whole file, NUL-terminated, in malloc'd memory (*len without the
 * NUL); NULL if unreadable. */
static char *vgr_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    char *b = NULL;
    size_t cap = 0, n = 0, k;
    if (!f) return NULL;
    do {
        if (n + 65536 + 1 > cap) {
            cap = (n + 65536 + 1) * 2;
            b = realloc(b, cap);
            if (!b) break;
        }
        k = fread(b + n, 1, 65536, f);
        n += k;
    } while (k > 0);
    fclose(f);
    if (b) b[n] = '\0';
    if (len) *len = n;
    return b;
}

/* Do two files hold the same bytes (and both exist, non-empty)? */
static int vgr_same_file(const char *a, const char *b) {
    size_t la, lb;
    char *x = vgr_slurp(a, &la), *y = vgr_slurp(b, &lb);
    int same = x && y && la == lb && la > 0 && memcmp(x, y, la) == 0;
    free(x);
    free(y);
    return same;
}

#endif
