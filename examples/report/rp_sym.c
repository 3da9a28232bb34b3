/* examples/report/rp_sym.c: addresses to function names. The modules come
 * from the report's "modules" member (docs/report-format.md) and from
 * --elf PATH[@BIAS]. Symbols are read with binutils' `nm` (run without a
 * shell); where the image was loaded comes from the module's bias, or for
 * a position-dependent executable (ELF type EXEC) is 0, or for a
 * position-independent one (type DYN) is the module's low address minus
 * the lowest PT_LOAD address (ELF-64 header and program headers, System V
 * gABI). A missing, unreadable or stripped file is a one-line warning;
 * its addresses stay addresses. */
#define _GNU_SOURCE
#include "rp.h"

#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct rp__sym {
    uint64_t lo, size; /* size 0: unknown */
    char *name;
    unsigned mod;
} rp__sym;

struct rp_syms {
    rp__sym *s;
    size_t n, cap;
    char mods[RP_MAXMOD][256];
    uint64_t mlo[RP_MAXMOD], mhi[RP_MAXMOD], mbias[RP_MAXMOD];
    unsigned nmods;
};

/* ELF-64 little-endian: e_type and the lowest p_vaddr of an executable
 * PT_LOAD segment (of any PT_LOAD when none is marked executable). */
static int rp__elf_layout(const char *path, unsigned *type, uint64_t *minva) {
    unsigned char h[64], ph[56];
    FILE *f = fopen(path, "rb");
    uint64_t phoff;
    unsigned phnum, phentsize, i;
    int ok = 0;
    if (!f) return 0;
    if (fread(h, 1, 64, f) == 64 && !memcmp(h, "\177ELF", 4) && h[4] == 2 && h[5] == 1) {
        uint64_t anyva = UINT64_MAX;
        memcpy(&phoff, h + 32, 8);
        phentsize = (unsigned)h[54] | (unsigned)h[55] << 8;
        phnum = (unsigned)h[56] | (unsigned)h[57] << 8;
        *type = (unsigned)h[16] | (unsigned)h[17] << 8;
        *minva = UINT64_MAX;
        for (i = 0; i < phnum && phentsize >= 56; i++) {
            uint32_t pt, flags;
            uint64_t va;
            if (fseek(f, (long)(phoff + (uint64_t)i * phentsize), SEEK_SET) ||
                fread(ph, 1, 56, f) != 56)
                break;
            memcpy(&pt, ph, 4);
            memcpy(&flags, ph + 4, 4);
            memcpy(&va, ph + 16, 8);
            if (pt == 1 && va < anyva) anyva = va;
            if (pt == 1 && (flags & 1u) && va < *minva) *minva = va; /* PF_X */
        }
        if (*minva == UINT64_MAX) *minva = anyva == UINT64_MAX ? 0 : anyva;
        ok = 1;
    }
    fclose(f);
    return ok;
}

static int rp__push(rp_syms *y, uint64_t lo, uint64_t size, const char *name,
                   unsigned mod) {
    if (y->n == y->cap) {
        size_t cap = y->cap ? 2 * y->cap : 4096;
        rp__sym *p = (rp__sym *)realloc(y->s, cap * sizeof *p);
        if (!p) return -1;
        y->s = p;
        y->cap = cap;
    }
    y->s[y->n].lo = lo;
    y->s[y->n].size = size;
    y->s[y->n].name = strdup(name);
    y->s[y->n].mod = mod;
    if (!y->s[y->n].name) return -1;
    y->n++;
    return 0;
}

/* nm -S --defined-only [-D] PATH: "addr [size] type name" per line; code
 * symbols only. dyn: the dynamic symbol table, all a stripped shared
 * library keeps. */
static size_t rp__nm(rp_syms *y, const char *path, uint64_t bias, unsigned mod, int dyn) {
    int fd[2];
    pid_t pid;
    FILE *f;
    char line[1024];
    size_t got = 0;
    int st;
    if (pipe(fd)) return 0;
    pid = fork();
    if (pid < 0) {
        close(fd[0]);
        close(fd[1]);
        return 0;
    }
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(fd[1], 1);
        if (null >= 0) dup2(null, 2);
        close(fd[0]);
        if (dyn) execlp("nm", "nm", "-D", "-S", "--defined-only", "-C", path, (char *)NULL);
        else execlp("nm", "nm", "-S", "--defined-only", "-C", path, (char *)NULL);
        _exit(127);
    }
    close(fd[1]);
    f = fdopen(fd[0], "r");
    if (!f) {
        close(fd[0]);
        waitpid(pid, &st, 0);
        return 0;
    }
    while (fgets(line, sizeof line, f)) {
        char *end, *name, *e2;
        unsigned long long a = strtoull(line, &end, 16), size = 0;
        size_t l;
        if (end == line || end[0] != ' ') continue;
        size = strtoull(end + 1, &e2, 16);
        if (e2 != end + 1 && e2[0] == ' ') end = e2; /* a size was given */
        else size = 0;
        if (!end[1] || end[2] != ' ') continue;
        if (!strchr("TtWwi", end[1])) continue;
        name = end + 3;
        l = strlen(name);
        while (l && (name[l - 1] == '\n' || name[l - 1] == '\r')) name[--l] = '\0';
        if (rp__push(y, (uint64_t)a + bias, size, name, mod)) break;
        got++;
    }
    fclose(f);
    waitpid(pid, &st, 0);
    return got;
}

static int rp__symcmp(const void *a, const void *b) {
    const rp__sym *x = (const rp__sym *)a, *y = (const rp__sym *)b;
    return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static void rp__module(rp_syms *y, const char *path, uint64_t lo, uint64_t hi,
                       int have_bias, uint64_t bias, FILE *warn) {
    unsigned type = 0;
    uint64_t minva = 0;
    if (y->nmods >= RP_MAXMOD) return;
    if (access(path, R_OK)) {
        if (warn) fprintf(warn, "hwprof-report: %s: cannot read it: its addresses stay addresses\n", path);
        return;
    }
    if (!have_bias) {
        if (!rp__elf_layout(path, &type, &minva)) {
            if (warn) fprintf(warn, "hwprof-report: %s: not an ELF-64 file: its addresses stay addresses\n", path);
            return;
        }
        /* lo is where the first executable segment landed (QEMU's
         * start_code) */
        bias = type == 3 /* ET_DYN */ && lo ? lo - minva : 0;
    }
    snprintf(y->mods[y->nmods], sizeof y->mods[0], "%s", path);
    y->mlo[y->nmods] = lo;
    y->mhi[y->nmods] = hi;
    y->mbias[y->nmods] = bias;
    if (!rp__nm(y, path, bias, y->nmods, 0) && !rp__nm(y, path, bias, y->nmods, 1) && warn)
        fprintf(warn, "hwprof-report: %s: no symbols (stripped?): its addresses stay addresses\n",
                path);
    y->nmods++;
}

rp_syms *rp_syms_load(const rp_set *s, char **elf, unsigned nelf, FILE *warn) {
    rp_syms *y = (rp_syms *)calloc(1, sizeof *y);
    unsigned i;
    if (!y) return NULL;
    for (i = 0; i < s->nmod; i++)
        rp__module(y, s->mod[i].path, s->mod[i].lo, s->mod[i].hi, s->mod[i].have_bias,
                   s->mod[i].bias,
                   warn);
    for (i = 0; i < nelf; i++) {
        char path[256], *at;
        uint64_t bias = 0;
        int have = 0;
        snprintf(path, sizeof path, "%s", elf[i]);
        at = strrchr(path, '@');
        if (at) {
            char *end;
            bias = strtoull(at + 1, &end, 0);
            if (*end == '\0' && end != at + 1) {
                *at = '\0';
                have = 1;
            }
        }
        rp__module(y, path, 0, 0, have, bias, warn);
    }
    if (y->n > 1) qsort(y->s, y->n, sizeof *y->s, rp__symcmp);
    return y;
}

int rp_sym(const rp_syms *y, uint64_t pc, const char **fn, const char **mod,
           uint64_t *off) {
    size_t lo = 0, hi;
    if (!y || !y->n || pc < y->s[0].lo) return 0;
    hi = y->n;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (y->s[mid].lo <= pc) lo = mid;
        else hi = mid;
    }
    /* Past a sized symbol's end, or far past an unsized one (64 KiB):
     * unresolved rather than blamed on the symbol before. */
    if (y->s[lo].size ? pc - y->s[lo].lo >= y->s[lo].size : pc - y->s[lo].lo > 65536)
        return 0;
    if (fn) *fn = y->s[lo].name;
    if (mod) *mod = y->mods[y->s[lo].mod];
    if (off) *off = pc - y->s[lo].lo;
    return 1;
}

/* addr2line -e PATH ADDR...: "file:line" per address, "??:0" or "??:?"
 * without line information, maybe followed by " (discriminator N)". */
static void rp__a2l(const char *path, const uint64_t *addr, size_t n, char **file,
                    unsigned *line) {
    int fd[2], st;
    pid_t pid;
    FILE *f;
    char buf[1200];
    size_t i, k = 0;
    char **argv = (char **)calloc(n + 4, sizeof *argv);
    char *nums = (char *)calloc(n, 20);
    if (!argv || !nums || pipe(fd)) {
        free(argv);
        free(nums);
        return;
    }
    argv[0] = (char *)"addr2line";
    argv[1] = (char *)"-e";
    argv[2] = (char *)path;
    for (i = 0; i < n; i++) {
        snprintf(nums + 20 * i, 20, "%llx", (unsigned long long)addr[i]);
        argv[3 + i] = nums + 20 * i;
    }
    pid = fork();
    if (pid == 0) {
        int null = open("/dev/null", O_WRONLY);
        dup2(fd[1], 1);
        if (null >= 0) dup2(null, 2);
        close(fd[0]);
        execvp("addr2line", argv);
        _exit(127);
    }
    close(fd[1]);
    f = pid > 0 ? fdopen(fd[0], "r") : NULL;
    while (f && k < n && fgets(buf, sizeof buf, f)) {
        char *colon, *end;
        unsigned long l;
        buf[strcspn(buf, "\n")] = '\0';
        if (strstr(buf, " (discriminator")) *strstr(buf, " (discriminator") = '\0';
        colon = strrchr(buf, ':');
        if (colon && strncmp(buf, "??", 2)) {
            *colon = '\0';
            l = strtoul(colon + 1, &end, 10);
            file[k] = strdup(buf);
            line[k] = end != colon + 1 ? (unsigned)l : 0;
        }
        k++;
    }
    if (f) fclose(f);
    else close(fd[0]);
    if (pid > 0) waitpid(pid, &st, 0);
    free(argv);
    free(nums);
}

void rp_lines(const rp_syms *y, const uint64_t *pc, size_t n, char **file, unsigned *line) {
    unsigned m;
    size_t i, k;
    uint64_t *a = (uint64_t *)calloc(n ? n : 1, sizeof *a);
    size_t *at = (size_t *)calloc(n ? n : 1, sizeof *at);
    for (i = 0; i < n; i++) {
        file[i] = NULL;
        line[i] = 0;
    }
    if (!a || !at) {
        free(a);
        free(at);
        return;
    }
    for (m = 0; y && m < y->nmods; m++) {
        /* the PCs this module holds: its range, or its symbols' */
        for (i = 0, k = 0; i < n; i++) {
            const char *mod = NULL;
            if (!(rp_sym(y, pc[i], NULL, &mod, NULL) && mod == y->mods[m]) &&
                !(y->mhi[m] && pc[i] >= y->mlo[m] && pc[i] <= y->mhi[m]))
                continue;
            a[k] = pc[i] - y->mbias[m];
            at[k++] = i;
        }
        for (i = 0; i < k; i += 256) {
            size_t c = k - i < 256 ? k - i : 256, j;
            char *f[256];
            unsigned l[256];
            memset(f, 0, sizeof f);
            memset(l, 0, sizeof l);
            rp__a2l(y->mods[m], a + i, c, f, l);
            for (j = 0; j < c; j++) {
                if (file[at[i + j]]) free(f[j]);
                else file[at[i + j]] = f[j], line[at[i + j]] = l[j];
            }
        }
    }
    free(a);
    free(at);
}

int rp_sym_module(const rp_syms *y, uint64_t pc, const char **mod, uint64_t *off) {
    unsigned i;
    for (i = 0; y && i < y->nmods; i++)
        if (y->mhi[i] && pc >= y->mlo[i] && pc <= y->mhi[i]) {
            if (mod) *mod = y->mods[i];
            if (off) *off = pc - y->mbias[i];
            return 1;
        }
    return 0;
}

void rp_syms_free(rp_syms *y) {
    size_t i;
    if (!y) return;
    for (i = 0; i < y->n; i++) free(y->s[i].name);
    free(y->s);
    free(y);
}
