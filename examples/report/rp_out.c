/* examples/report/rp_out.c: hwprof-report's listing and exports (CSV,
 * callgrind's profile format, folded stacks, the merged JSON). */
#define _GNU_SOURCE
#include "rp_out.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

FILE *rp_open(const char *path) {
    FILE *f;
    if (!strcmp(path, "-")) return stdout;
    f = fopen(path, "w");
    if (!f) fprintf(stderr, "hwprof-report: %s: cannot write: %s\n", path, strerror(errno));
    return f;
}

int rp_close(FILE *f, const char *path) {
    int bad = ferror(f);
    if (f == stdout) bad |= fflush(f) != 0;
    else bad |= fclose(f) != 0;
    if (bad) fprintf(stderr, "hwprof-report: %s: write failed\n", path);
    return bad ? 1 : 0;
}

int rp_save(const char *path, const void *b, size_t n) {
    char tmp[4200];
    FILE *f;
    int fd, bad;
    if (!strcmp(path, "-")) {
        fwrite(b, 1, n, stdout); /* a short write sets the error rp_close reports */
        return rp_close(stdout, path);
    }
    /* beside the file, so the rename stays in one file system */
    if (snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= (int)sizeof tmp) {
        fprintf(stderr, "hwprof-report: %s: name too long\n", path);
        return 1;
    }
    fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL, 0666);
    f = fd < 0 ? NULL : fdopen(fd, "wb");
    if (!f) {
        fprintf(stderr, "hwprof-report: %s: cannot write: %s\n", path, strerror(errno));
        if (fd >= 0) {
            close(fd);
            unlink(tmp);
        }
        return 1;
    }
    bad = fwrite(b, 1, n, f) != n;
    bad |= fclose(f) != 0;
    if (!bad && rename(tmp, path) != 0) bad = 1;
    if (bad) {
        fprintf(stderr, "hwprof-report: %s: write failed: %s\n", path, strerror(errno));
        unlink(tmp);
    }
    return bad;
}

void rp_key_name(const rp_syms *y, uint64_t pc, char *buf, size_t cap) {
    const char *fn, *mod;
    uint64_t off;
    if (rp_sym(y, pc, &fn, &mod, &off)) {
        if (off) snprintf(buf, cap, "%s+0x%llx", fn, (unsigned long long)off);
        else snprintf(buf, cap, "%s", fn);
    } else if (rp_sym_module(y, pc, &mod, &off)) {
        const char *base = strrchr(mod, '/');
        snprintf(buf, cap, "[%s+0x%llx]", base ? base + 1 : mod, (unsigned long long)off);
    } else {
        buf[0] = '\0';
    }
}

void rp_path_text(const rp_syms *y, const rp_hpath *p, char *buf, size_t cap) {
    size_t l = 0;
    uint32_t i;
    buf[0] = '\0';
    if (!p->n) {
        snprintf(buf, cap, "(not decoded: %s)", p->why);
        return;
    }
    for (i = 0; i < p->n && l + 1 < cap; i++) {
        char name[256];
        rp_key_name(y, p->blk[i], name, sizeof name);
        if (name[0]) snprintf(buf + l, cap - l, "%s%s", i ? " > " : "", name);
        else snprintf(buf + l, cap - l, "%s0x%llx", i ? " > " : "", (unsigned long long)p->blk[i]);
        l += strlen(buf + l);
    }
}


static const rp_table *rp__find(const rp_table *t, size_t n, const char *name) {
    size_t i, l = strlen(name);
    const rp_table *hit = NULL;
    for (i = 0; i < n; i++) {
        if (!strcmp(t[i].name, name)) return &t[i];
        if (!strncmp(t[i].name, name, l)) {
            if (hit) return NULL; /* ambiguous prefix */
            hit = &t[i];
        }
    }
    return hit;
}

/* A CSV field quoted: a symbol may hold commas (C++). */
static void rp__csv_str(FILE *f, const char *s) {
    fputc('"', f);
    for (; *s; s++) {
        if (*s == '"') fputc('"', f);
        fputc(*s, f);
    }
    fputc('"', f);
}

static void rp__key(FILE *f, const rp_table *t, const rp_row *r, const rp_syms *y,
                    int csv) {
    char name[300];
    if (r->label) fprintf(f, "%s", r->label);
    else if (t->pc_keyed || t->key2_name) fprintf(f, "0x%llx", (unsigned long long)r->key);
    else fprintf(f, "%llu", (unsigned long long)r->key);
    if (t->key2_name) fprintf(f, "%s0x%llx", csv ? "," : "  ", (unsigned long long)r->key2);
    if (t->pc_keyed) {
        rp_key_name(y, r->key, name, sizeof name);
        if (csv) {
            fputc(',', f);
            rp__csv_str(f, name);
        } else if (name[0]) {
            fprintf(f, "  %s", name);
        }
    }
}

/* Addresses of the per-PC tables no symbol covers: how many, the first
 * few, so a user knows which modules to give --elf for. */
static void rp__unresolved(const rp_set *s, const rp_table *t, size_t nt, const rp_syms *y) {
    size_t i, k, n = 0, all = 0;
    char some[8][24];
    for (i = 0; i < nt; i++)
        for (k = 0; t[i].pc_keyed && !strstr(t[i].name, ".ranges") && k < t[i].n; k++) {
            all++;
            if (rp_sym(y, t[i].rows[k].key, NULL, NULL, NULL)) continue;
            if (n < 8) snprintf(some[n], sizeof some[n], "0x%llx", (unsigned long long)t[i].rows[k].key);
            n++;
        }
    if (!all) return;
    if (!s->nmod && n == all) {
        printf("\nnames: the report names no module and no --elf was given: addresses shown\n");
        return;
    }
    printf("\nnames: %zu of %zu per-PC rows unresolved", n, all);
    for (i = 0; i < n && i < 8; i++) printf("%s%s", i ? " " : ": ", some[i]);
    printf("%s\n", n > 8 ? " ..." : "");
}

/* A table's first rows with every column as wide as its widest cell:
 * the key (and second key, symbol) left, the figures right. */
/* Hot path rows the host decoded: their blocks get a column. */
static int rp__has_paths(const rp_table *t) {
    size_t k;
    for (k = 0; k < t->n; k++)
        if (t->rows[k].path) return 1;
    return 0;
}

static void rp__aligned(const rp_table *t, uint64_t top, const rp_syms *y, int named) {
    size_t n = t->n < top ? t->n : (size_t)top, k, j, nc = t->ncol + 1;
    size_t w[RP_MAXCOL + 2];
    char *cell;
    const int paths = rp__has_paths(t);
    const size_t cw = paths ? 1024 : 320, pc = nc; /* pc: the blocks column */
    nc += (size_t)paths;
    cell = (char *)calloc((n + 1) * nc, cw);
    if (!cell) return;
#define RP__CELL(r, c) (cell + ((r) * nc + (c)) * cw)
    snprintf(RP__CELL(0, 0), cw, "%s%s%s%s", t->key_name, t->key2_name ? "  " : "",
             t->key2_name ? t->key2_name : "", t->pc_keyed && named ? "  symbol" : "");
    for (j = 0; j < t->ncol; j++) snprintf(RP__CELL(0, j + 1), cw, "%s", t->col[j]);
    if (paths) snprintf(RP__CELL(0, pc), cw, "blocks");
    for (k = 0; k < n; k++) {
        char name[256], *c = RP__CELL(k + 1, 0);
        const rp_row *r = &t->rows[k];
        if (r->label) snprintf(c, cw, "%s", r->label);
        else if (t->pc_keyed || t->key2_name) snprintf(c, cw, "0x%llx", (unsigned long long)r->key);
        else snprintf(c, cw, "%llu", (unsigned long long)r->key);
        if (t->key2_name)
            snprintf(c + strlen(c), cw - strlen(c), "  0x%llx", (unsigned long long)r->key2);
        if (t->pc_keyed && named) {
            rp_key_name(y, r->key, name, sizeof name);
            snprintf(c + strlen(c), cw - strlen(c), "  %.200s", name);
        }
        for (j = 0; j < t->ncol; j++) {
            if (r->v[j] != r->v[j]) snprintf(RP__CELL(k + 1, j + 1), cw, "-");
            else snprintf(RP__CELL(k + 1, j + 1), cw, "%.*f", (int)t->dec[j], r->v[j]);
        }
        if (paths && r->path) rp_path_text(y, r->path, RP__CELL(k + 1, pc), cw);
    }
    for (j = 0; j < nc; j++) {
        w[j] = 0;
        for (k = 0; k <= n; k++)
            if (strlen(RP__CELL(k, j)) > w[j]) w[j] = strlen(RP__CELL(k, j));
    }
    for (k = 0; k <= n; k++) {
        printf("%-*s", (int)w[0], RP__CELL(k, 0));
        for (j = 1; j < pc; j++) printf("  %*s", (int)w[j], RP__CELL(k, j));
        if (paths) printf("  %s", RP__CELL(k, pc)); /* last, left-aligned */
        printf("\n");
    }
#undef RP__CELL
    free(cell);
}

static void rp__listing(const rp_set *s, rp_table *t, size_t nt, const rp_opts *o,
                        const rp_syms *y) {
    size_t i, k;
    int named = 0;
    for (i = 0; i < nt; i++)
        for (k = 0; t[i].pc_keyed && k < t[i].n && !named; k++)
            named = rp_sym(y, t[i].rows[k].key, NULL, NULL, NULL) ||
                    rp_sym_module(y, t[i].rows[k].key, NULL, NULL);
    printf("== hwprof report: %u file%s, first %s ==\n", s->files, s->files == 1 ? "" : "s",
           s->first);
    if (s->insns) printf("instructions %llu\n", (unsigned long long)s->insns);
    printf("%-12s %-32s %14s %10s %10s %12s\n", "model", "at", "events", "dropped",
           "evicted", "cycles");
    for (i = 0; i < s->ncomp; i++) {
        rp_stat4 st;
        rp_comp_stats(&s->comp[i], &st);
        printf("%-12s %-32s %14llu %10llu %10llu %12llu\n", rp_comp_model(&s->comp[i]),
               s->comp[i].path, (unsigned long long)st.events,
               (unsigned long long)st.dropped, (unsigned long long)st.evicted,
               (unsigned long long)st.cycles);
    }
    for (i = 0; i < nt; i++) {
        if (o->table && rp__find(t, nt, o->table) != &t[i]) continue;
        printf("\n-- %s: %s (%zu rows%s) --\n", t[i].name, t[i].title, t[i].n,
               t[i].n > o->top ? ", top shown" : "");
        rp__aligned(&t[i], o->top, y, named);
    }
    if (s->nhp) { /* the decoded hot paths: how many did not decode */
        size_t bad = 0;
        for (i = 0; i < s->nhp; i++) bad += !s->hp[i].n;
        printf("\nhot paths: %zu of %zu decoded to their blocks", s->nhp - bad, s->nhp);
        if (s->hp_overflow)
            printf("; %llu branches found the hosts' block maps full (path_blocks=N)",
                   (unsigned long long)s->hp_overflow);
        printf("\n");
    }
    rp__unresolved(s, t, nt, y);
}

/* Per-function totals of every per-PC table's summable columns: rows
 * named by symbol, [module] for a module's PCs without a symbol, or
 * "(unresolved)"; ranked like the table. */
static void rp__functions(const rp_table *t, size_t nt, const rp_opts *o, const rp_syms *y) {
    size_t i, k, j;
    for (i = 0; i < nt; i++) {
        rp_table f;
        unsigned map[RP_MAXCOL], c;
        char **names;
        size_t nn = 0;
        if (!t[i].pc_keyed || !t[i].sums) continue;
        if (o->table && strncmp(t[i].name, o->table, strlen(o->table))) continue;
        memset(&f, 0, sizeof f);
        memcpy(f.name, t[i].name, sizeof f.name);
        f.title = "per function";
        f.key_name = "function";
        for (c = 0; c < t[i].ncol; c++)
            if (t[i].sums & (1u << c)) {
                if (c == t[i].sort) f.sort = f.ncol;
                map[f.ncol] = c;
                f.dec[f.ncol] = t[i].dec[c];
                f.col[f.ncol++] = t[i].col[c];
            }
        f.rows = (rp_row *)calloc(t[i].n ? t[i].n : 1, sizeof *f.rows);
        names = (char **)calloc(t[i].n ? t[i].n : 1, sizeof *names);
        if (!f.rows || !names) {
            free(f.rows);
            free(names);
            continue;
        }
        for (k = 0; k < t[i].n; k++) {
            const char *fn, *mod;
            char name[300];
            if (rp_sym(y, t[i].rows[k].key, &fn, NULL, NULL)) {
                snprintf(name, sizeof name, "%s", fn);
            } else if (rp_sym_module(y, t[i].rows[k].key, &mod, NULL)) {
                const char *b = strrchr(mod, '/');
                snprintf(name, sizeof name, "[%s]", b ? b + 1 : mod);
            } else {
                snprintf(name, sizeof name, "(unresolved)");
            }
            for (j = 0; j < nn && strcmp(names[j], name); j++) continue;
            if (j == nn) {
                names[nn] = strdup(name);
                if (!names[nn]) break;
                f.rows[nn].label = names[nn];
                f.rows[nn].key = nn;
                nn++;
            }
            for (c = 0; c < f.ncol; c++) f.rows[j].v[c] += t[i].rows[k].v[map[c]];
        }
        f.n = nn;
        rp_table_sort(&f);
        printf("\n-- %s per function (%zu functions%s) --\n", t[i].name, nn,
               nn > o->top ? ", top shown" : "");
        rp__aligned(&f, o->top, y, 0);
        for (j = 0; j < nn; j++) free(names[j]);
        free(names);
        free(f.rows);
    }
}

static int rp__csv(const rp_table *t, const rp_syms *y, const char *path) {
    FILE *f = rp_open(path);
    size_t j, k;
    const int paths = rp__has_paths(t);
    if (!f) return 1;
    fprintf(f, "%s", t->key_name);
    if (t->key2_name) fprintf(f, ",%s", t->key2_name);
    if (t->pc_keyed) fprintf(f, ",symbol");
    for (j = 0; j < t->ncol; j++) fprintf(f, ",%s", t->col[j]);
    if (paths) fprintf(f, ",blocks");
    fprintf(f, "\n");
    for (k = 0; k < t->n; k++) {
        rp__key(f, t, &t->rows[k], y, 1);
        for (j = 0; j < t->ncol; j++) {
            fputc(',', f);
            if (t->rows[k].v[j] == t->rows[k].v[j])
                fprintf(f, "%.*f", (int)t->dec[j], t->rows[k].v[j]);
        }
        if (paths) {
            char text[4096];
            text[0] = '\0';
            if (t->rows[k].path) rp_path_text(y, t->rows[k].path, text, sizeof text);
            fputc(',', f);
            rp__csv_str(f, text);
        }
        fprintf(f, "\n");
    }
    return rp_close(f, path);
}

/* ---- callgrind ---------------------------------------------------------------
 * The profile format of callgrind (Valgrind's docs, "Callgrind Format
 * Specification"): "events:" names the cost columns, "ob=", "fl=", "fn="
 * set the object, file and function, and with "positions: instr line"
 * each cost line is an address, a line number (0: unknown) and the
 * costs. Costs are integers: each figure is rounded per PC, and
 * "totals:" is the sum of what is written. */

static const rp_event rp__events[] = {
    {"insns", "pm_table", 0, "PM_Samples", "pm_samples", "count", 0},
    {"insns", "pm_table", 1, "PM_Fetches", "pm_fetches", "count", 0},
    {"insns", "pm_table", 4, "PM_Latency", "pm_latency", "cycles", 0},
    {"insns", "pm_table", 5, "PM_DcMiss", "pm_dcache_misses", "count", 0},
    {"insns", "pm_table", 6, "PM_WastedSlots", "pm_wasted_slots", "count", 0},
    {"insns", "pm_table", 8, "PM_LatFetchMap", "pm_lat_fetch_map", "cycles", 0},
    {"insns", "pm_table", 9, "PM_LatMapReady", "pm_lat_map_ready", "cycles", 0},
    {"insns", "pm_table", 10, "PM_LatReadyIssue", "pm_lat_ready_issue", "cycles", 0},
    {"insns", "pm_table", 11, "PM_LatIssueRR", "pm_lat_issue_rr", "cycles", 0},
    {"insns", "pm_table", 12, "PM_LatRRRetire", "pm_lat_rr_retire", "cycles", 0},
    {"insns", "pm_table", 13, "PM_LatLoad", "pm_lat_load", "cycles", 0},
    {"ranges", "rap", 3, "RAP_Events", "rap_events", "count", 0},
    {"invariance", "strat_acc", 0, "STRAT_Events", "strat_events", "count", 0},
    {"invariance", "strat_acc", 1, "STRAT_Invariant", "strat_invariant", "count", 0},
    {"invariance", "coproc", 0, "CP_Samples", "coproc_samples", "count", 1},
    {"invariance", "coproc", 1, "CP_Invariant", "coproc_invariant", "count", 1},
};
#define RP__NEV (sizeof rp__events / sizeof rp__events[0])

/* Does table t (named "<model>[N].<suffix>") carry event e? Only the
 * first instance of a model counts: two RAP trees over the same code
 * would count every event twice. */
static int rp__is(const rp_table *t, const rp_event *e) {
    size_t l = strlen(e->model);
    return t->pc_keyed && !strncmp(t->name, e->model, l) && t->name[l] == '.' &&
           !strcmp(t->name + l + 1, e->table);
}

static int rp__pccmp(const void *a, const void *b) {
    const rp_pc *x = (const rp_pc *)a, *y = (const rp_pc *)b;
    int c = strcmp(x->mod ? x->mod : "", y->mod ? y->mod : "");
    if (c) return c;
    c = strcmp(x->fn ? x->fn : "", y->fn ? y->fn : "");
    if (c) return c;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

void rp_pcs_free(rp_pcs *p) {
    size_t i;
    for (i = 0; i < p->n; i++) free(p->r[i].file);
    free(p->r);
    memset(p, 0, sizeof *p);
}

int rp_pcs_get(const rp_table *t, size_t nt, const rp_syms *y, rp_pcs *p) {
    size_t i, k, cap = 0, m;
    unsigned e;
    memset(p, 0, sizeof *p);
    for (e = 0; e < RP__NEV; e++) {
        int have = 0;
        for (i = 0; i < nt; i++) have |= rp__is(&t[i], &rp__events[e]);
        if (have) p->ev[p->nev++] = &rp__events[e];
    }
    for (i = 0; i < nt; i++)
        for (k = 0; k < t[i].n; k++) {
            int any = 0;
            rp_pc *r;
            for (e = 0; e < p->nev; e++) any |= rp__is(&t[i], p->ev[e]);
            if (!any) continue;
            if (p->n == cap) {
                rp_pc *q;
                cap = cap ? 2 * cap : 1024;
                q = (rp_pc *)realloc(p->r, cap * sizeof *q);
                if (!q) {
                    rp_pcs_free(p);
                    return -1;
                }
                p->r = q;
            }
            r = &p->r[p->n++];
            memset(r, 0, sizeof *r);
            r->pc = t[i].rows[k].key;
            for (e = 0; e < p->nev; e++)
                if (rp__is(&t[i], p->ev[e])) r->c[e] = floor(t[i].rows[k].v[p->ev[e]->col] + 0.5);
            if (!rp_sym(y, r->pc, &r->fn, &r->mod, NULL)) {
                r->fn = r->mod = NULL;
                rp_sym_module(y, r->pc, &r->mod, NULL);
            }
        }
    if (p->n > 1) qsort(p->r, p->n, sizeof *p->r, rp__pccmp);
    /* one entry per PC: rows of several tables at one PC fold together */
    for (i = 0, m = 0; i < p->n; i++) {
        if (m && p->r[m - 1].pc == p->r[i].pc) {
            for (e = 0; e < p->nev; e++) {
                double *d = &p->r[m - 1].c[e], v = p->r[i].c[e];
                *d = p->ev[e]->max ? (v > *d ? v : *d) : *d + v;
            }
        } else {
            p->r[m++] = p->r[i];
        }
    }
    p->n = m;
    {
        uint64_t *pcs = (uint64_t *)calloc(m ? m : 1, sizeof *pcs);
        char **files = (char **)calloc(m ? m : 1, sizeof *files);
        unsigned *lines = (unsigned *)calloc(m ? m : 1, sizeof *lines);
        if (pcs && files && lines) {
            for (i = 0; i < m; i++) pcs[i] = p->r[i].pc;
            rp_lines(y, pcs, m, files, lines);
            for (i = 0; i < m; i++) {
                p->r[i].file = files[i];
                p->r[i].line = lines[i];
            }
        }
        free(pcs);
        free(files);
        free(lines);
    }
    return 0;
}

static int rp__same(const char *a, const char *b) {
    return a && b ? !strcmp(a, b) : a == b;
}

static int rp__callgrind(const rp_set *s, const rp_table *t, size_t nt, const rp_syms *y,
                         const char *path) {
    size_t i;
    unsigned e;
    const char *cur = "";
    double tot[RP_MAXEV];
    rp_pcs p;
    FILE *f;
    if (rp_pcs_get(t, nt, y, &p)) {
        fprintf(stderr, "hwprof-report: out of memory\n");
        return 1;
    }
    memset(tot, 0, sizeof tot);
    for (i = 0; i < p.n; i++)
        for (e = 0; e < p.nev; e++) tot[e] += p.r[i].c[e];
    f = rp_open(path);
    if (!f) {
        rp_pcs_free(&p);
        return 1;
    }
    fprintf(f, "# callgrind format\nversion: 1\ncreator: hwprof-report\n");
    fprintf(f, "cmd: hwprof report of %s (%u file%s merged)\n", s->first, s->files,
            s->files == 1 ? "" : "s");
    fprintf(f, "positions: instr line\nevents:");
    for (e = 0; e < p.nev; e++) fprintf(f, " %s", p.ev[e]->name);
    fprintf(f, "\n");
    for (i = 0; i < p.n; i++) {
        /* fl= opens a function with its first PC's file; a PC from
         * another file (inlined code) is marked with fi= */
        static const char unknown[] = "???";
        const rp_pc *r = &p.r[i];
        const char *file = r->file ? r->file : unknown;
        if (i == 0 || !rp__same(r->fn, r[-1].fn) || !rp__same(r->mod, r[-1].mod) || !r->fn) {
            fprintf(f, "\nob=%s\nfl=%s\n", r->mod ? r->mod : "(no module)", file);
            if (r->fn) fprintf(f, "fn=%s\n", r->fn);
            else fprintf(f, "fn=0x%llx\n", (unsigned long long)r->pc);
            cur = file;
        } else if (strcmp(file, cur)) {
            fprintf(f, "fi=%s\n", file);
            cur = file;
        }
        fprintf(f, "0x%llx %u", (unsigned long long)r->pc, r->line);
        for (e = 0; e < p.nev; e++) fprintf(f, " %.0f", r->c[e]);
        fprintf(f, "\n");
    }
    fprintf(f, "\ntotals:");
    for (e = 0; e < p.nev; e++) fprintf(f, " %.0f", tot[e]);
    fprintf(f, "\n");
    rp_pcs_free(&p);
    return rp_close(f, path);
}

/* ---- folded stacks ------------------------------------------------------------
 * "frame;frame;frame count" per line, outermost frame first (Brendan
 * Gregg's stackcollapse format, read by flamegraph.pl and speedscope),
 * from the report's first call-stack profile (--stacks picks another):
 *   samples   the host's sampled stacks of function names (call_stacks)
 *   contexts  the co-processor's events per calling context, named with
 *             the host's dictionary (coproc_contexts)
 *   pm        no call stack: ProfileMe's estimated fetches by
 *             module;function;pc of the first per-PC table
 * Identical stacks fold into one line, so the counts sum to the
 * profile's total. */

typedef struct rp__lines {
    rp_stack *l;
    size_t n, cap;
} rp__lines;

static int rp__line(rp__lines *L, const char *frames, uint64_t count) {
    if (!count) return 0;
    if (L->n == L->cap) {
        rp_stack *p;
        L->cap = L->cap ? 2 * L->cap : 256;
        p = (rp_stack *)realloc(L->l, L->cap * sizeof *p);
        if (!p) return -1;
        L->l = p;
    }
    if (!(L->l[L->n].frames = strdup(frames))) return -1;
    L->l[L->n++].count = count;
    return 0;
}

static int rp__stkcmp(const void *a, const void *b) {
    return strcmp(((const rp_stack *)a)->frames, ((const rp_stack *)b)->frames);
}

static void rp__lines_free(rp__lines *L) {
    size_t i;
    for (i = 0; i < L->n; i++) free(L->l[i].frames);
    free(L->l);
    memset(L, 0, sizeof *L);
}

/* Sort, fold identical stacks, write, free; returns the sum written. */
static uint64_t rp__lines_write(rp__lines *L, FILE *f) {
    uint64_t sum = 0, c;
    size_t i, k;
    if (L->n > 1) qsort(L->l, L->n, sizeof *L->l, rp__stkcmp);
    for (i = 0; i < L->n; i = k) {
        for (c = 0, k = i; k < L->n && !strcmp(L->l[k].frames, L->l[i].frames); k++)
            c += L->l[k].count;
        fprintf(f, "%s %llu\n", L->l[i].frames, (unsigned long long)c);
        sum += c;
    }
    rp__lines_free(L);
    return sum;
}

/* One frame: the function holding pc, else [module+offset], else the
 * address; ';' and ' ' would break the line's format. */
static void rp__frame(char *buf, size_t cap, const rp_syms *y, uint64_t pc) {
    const char *fn, *mod;
    uint64_t off;
    size_t i;
    if (rp_sym(y, pc, &fn, NULL, NULL)) {
        snprintf(buf, cap, "%s", fn);
    } else if (rp_sym_module(y, pc, &mod, &off)) {
        const char *base = strrchr(mod, '/');
        snprintf(buf, cap, "[%s+0x%llx]", base ? base + 1 : mod, (unsigned long long)off);
    } else {
        snprintf(buf, cap, "0x%llx", (unsigned long long)pc);
    }
    for (i = 0; buf[i]; i++)
        if (buf[i] == ';') buf[i] = ':';
        else if (buf[i] == ' ') buf[i] = '_';
}

static int rp__ctxcmp(const void *a, const void *b) {
    uint64_t x = ((const rp_ctx *)a)->key, y = ((const rp_ctx *)b)->key;
    return x < y ? -1 : x > y;
}

/* The co-processor's contexts: [stale] when the co-processor counted it
 * while its stack was off the true one (it had dropped a call or return
 * sample), [...] when more calls were open than the context keeps, the functions of its call sites outermost first, then
 * the callee of the innermost call ([indirect] when one site called
 * several); [outermost] before any call; [context 0xKEY] for a key the
 * host's dictionary lacks (it was full, or the co-processor's own stack
 * lost a call with a dropped sample). */
static int rp__folded_contexts(const rp_set *s, const rp_syms *y, rp__lines *L) {
    uint64_t *kv = NULL, lost = 0, all = 0;
    size_t n = rp_cp_contexts(s, &kv), i;
    rp_ctx *d = NULL;
    char line[4096], fr[300];
    int rc = 0;
    if (s->calls.nctx) {
        d = (rp_ctx *)malloc(s->calls.nctx * sizeof *d);
        if (!d) rc = -1;
        else {
            memcpy(d, s->calls.ctx, s->calls.nctx * sizeof *d);
            qsort(d, s->calls.nctx, sizeof *d, rp__ctxcmp);
        }
    }
    for (i = 0; i < n && !rc; i++) {
        rp_ctx want;
        const rp_ctx *c;
        size_t len = 0;
        unsigned j;
        want.key = kv[2 * i];
        all += kv[2 * i + 1];
        c = d ? (const rp_ctx *)bsearch(&want, d, s->calls.nctx, sizeof *d, rp__ctxcmp) : NULL;
        if (!c) {
            lost += kv[2 * i + 1];
            snprintf(line, sizeof line, "[context 0x%llx]", (unsigned long long)want.key);
            rc = rp__line(L, line, kv[2 * i + 1]);
            continue;
        }
        line[0] = '\0';
        if (c->stale) len += (size_t)snprintf(line + len, sizeof line - len, "[stale];");
        if (c->deeper) len += (size_t)snprintf(line + len, sizeof line - len, "[...];");
        for (j = c->n; j-- > 0 && len < sizeof line;) {
            rp__frame(fr, sizeof fr, y, c->site[j]);
            len += (size_t)snprintf(line + len, sizeof line - len, "%s;", fr);
        }
        if (!c->n) snprintf(fr, sizeof fr, "[outermost]");
        else if (!c->callee) snprintf(fr, sizeof fr, "[indirect]");
        else rp__frame(fr, sizeof fr, y, c->callee);
        if (len < sizeof line) snprintf(line + len, sizeof line - len, "%s", fr);
        rc = rp__line(L, line, kv[2 * i + 1]);
    }
    if (!rc && (lost || s->calls.ctx_overflow))
        fprintf(stderr, "hwprof-report: --folded: %llu of %llu co-processor events in contexts "
                        "the host's dictionary lacks (it dropped %llu for want of room)\n",
                (unsigned long long)lost, (unsigned long long)all,
                (unsigned long long)s->calls.ctx_overflow);
    if (!rc && s->calls.ctx_lost)
        fprintf(stderr, "hwprof-report: --folded: the co-processor dropped %llu call and return "
                        "samples; contexts it counted while its stack was off are [stale]\n",
                (unsigned long long)s->calls.ctx_lost);
    free(d);
    free(kv);
    return rc;
}

/* The host's sampled stacks; samples it could not keep are [dropped]. */
static int rp__folded_samples(const rp_set *s, rp__lines *L) {
    size_t i;
    for (i = 0; i < s->calls.nstk; i++)
        if (rp__line(L, s->calls.stk[i].frames, s->calls.stk[i].count)) return -1;
    return rp__line(L, "[dropped]", s->calls.stk_dropped);
}

static int rp__folded_pm(const rp_table *t, size_t nt, const rp_syms *y, rp__lines *L) {
    const rp_table *p = NULL;
    size_t i;
    unsigned col;
    char line[700], fr[300];
    for (i = 0; i < nt && !p; i++)
        if (t[i].pc_keyed && !strncmp(t[i].name, "pm_table", 8)) p = &t[i];
    for (i = 0; i < nt && !p; i++)
        if (t[i].pc_keyed && !t[i].key2_name) p = &t[i];
    if (!p) {
        fprintf(stderr, "hwprof-report: --folded: the report has no call-stack profile and "
                        "no per-PC table\n");
        return 1;
    }
    col = !strncmp(p->name, "pm_table", 8) ? 1 : p->sort;
    for (i = 0; i < p->n; i++) {
        const char *fn, *mod;
        double v = floor(p->rows[i].v[col] + 0.5);
        uint64_t off;
        if (v <= 0) continue;
        if (rp_sym(y, p->rows[i].key, &fn, &mod, NULL)) {
            const char *base = strrchr(mod, '/');
            rp__frame(fr, sizeof fr, y, p->rows[i].key);
            snprintf(line, sizeof line, "%s;%s;0x%llx", base ? base + 1 : mod, fr,
                     (unsigned long long)p->rows[i].key);
        } else if (rp_sym_module(y, p->rows[i].key, &mod, &off)) {
            const char *base = strrchr(mod, '/');
            snprintf(line, sizeof line, "%s;[unknown];0x%llx", base ? base + 1 : mod,
                     (unsigned long long)off);
        } else {
            snprintf(line, sizeof line, "[unknown];0x%llx", (unsigned long long)p->rows[i].key);
        }
        if (rp__line(L, line, (uint64_t)v)) return -1;
    }
    return 0;
}

static int rp__folded(const rp_set *s, const rp_table *t, size_t nt, const rp_syms *y,
                      const rp_opts *o) {
    rp__lines L = {NULL, 0, 0};
    const char *w = o->stacks ? o->stacks : "auto";
    int auto_ = !strcmp(w, "auto"), rc;
    uint64_t *kv = NULL;
    int have_ctx = rp_cp_contexts(s, &kv) > 0;
    FILE *f;
    free(kv);
    if (!strcmp(w, "samples") || (auto_ && s->calls.have_stk)) {
        if (!s->calls.have_stk) {
            fprintf(stderr, "hwprof-report: --stacks samples: the report has no sampled "
                            "call stacks (call_stacks)\n");
            return 1;
        }
        rc = rp__folded_samples(s, &L);
    } else if (!strcmp(w, "contexts") || (auto_ && have_ctx)) {
        if (!have_ctx) {
            fprintf(stderr, "hwprof-report: --stacks contexts: no co-processor in the report "
                            "ran its call-stack program\n");
            return 1;
        }
        rc = rp__folded_contexts(s, y, &L);
    } else if (!strcmp(w, "pm") || auto_) {
        rc = rp__folded_pm(t, nt, y, &L);
    } else {
        fprintf(stderr, "hwprof-report: --stacks: \"%s\" is none of auto, samples, contexts, "
                        "pm\n", w);
        return 2;
    }
    if (rc < 0) fprintf(stderr, "hwprof-report: --folded: out of memory\n");
    f = rc ? NULL : rp_open(o->folded);
    if (!f) {
        rp__lines_free(&L);
        return 1;
    }
    rp__lines_write(&L, f);
    return rp_close(f, o->folded);
}

int rp_out(const rp_set *s, const rp_opts *o) {
    rp_table t[RP_MAXTAB];
    size_t nt = rp_tables(s, t, RP_MAXTAB), i, j;
    rp_syms *y = rp_syms_load(s, o->elf, o->nelf, stderr);
    int rc = 0;
    for (i = 0; i < nt; i++) rp_table_sort(&t[i]);
    if (o->table && !rp__find(t, nt, o->table)) {
        fprintf(stderr, "hwprof-report: no table \"%s\" (or more than one starts so); "
                        "the tables:", o->table);
        for (i = 0; i < nt; i++) fprintf(stderr, " %s", t[i].name);
        fprintf(stderr, "\n");
        rc = 1;
        goto out;
    }
    if (o->list) {
        for (i = 0; i < nt; i++) {
            printf("%-24s %8zu rows  %s", t[i].name, t[i].n, t[i].key_name);
            if (t[i].key2_name) printf(",%s", t[i].key2_name);
            for (j = 0; j < t[i].ncol; j++) printf(",%s", t[i].col[j]);
            printf("\n");
        }
    } else if (o->have_key) {
        char name[300];
        rp_key_name(y, o->key, name, sizeof name);
        printf("0x%llx%s%s\n", (unsigned long long)o->key, name[0] ? "  " : "", name);
        rp_detail(s, o->key, stdout);
    } else if (o->functions) {
        rp__functions(t, nt, o, y);
    } else if (!o->quiet) {
        rp__listing(s, t, nt, o, y);
    }
    if (!rc && o->csv) {
        const rp_table *c = o->table ? rp__find(t, nt, o->table) : nt ? &t[0] : NULL;
        if (!c) {
            fprintf(stderr, "hwprof-report: --csv: the report has no table\n");
            rc = 1;
        } else {
            rc = rp__csv(c, y, o->csv);
        }
    }
    if (!rc && o->callgrind) rc = rp__callgrind(s, t, nt, y, o->callgrind);
    if (!rc && o->folded) rc = rp__folded(s, t, nt, y, o);
    if (!rc && o->pprof) rc = rp_out_pprof(s, t, nt, y, o->pprof);
    if (!rc && o->chrome) rc = rp_out_chrome_trace(s, o->chrome);
    if (!rc && o->json) {
        FILE *f = rp_open(o->json);
        if (!f) rc = 1;
        else {
            rp_write_json(s, f);
            rc = rp_close(f, o->json);
        }
    }
    if (!rc && o->html) {
        FILE *f = rp_open(o->html);
        if (!f) rc = 1;
        else {
            rp_out_html(s, t, nt, y, f);
            rc = rp_close(f, o->html);
        }
    }
out:
    rp_tables_free(t, nt);
    rp_syms_free(y);
    return rc;
}
