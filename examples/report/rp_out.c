/* examples/report/rp_out.c: hwprof-report's listing and exports (CSV,
 * callgrind's profile format, folded stacks, the merged JSON). */
#define _GNU_SOURCE
#include "rp_out.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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
            /* a symbol may hold commas (C++): quote it */
            size_t i;
            fputs(",\"", f);
            for (i = 0; name[i]; i++) {
                if (name[i] == '"') fputc('"', f);
                fputc(name[i], f);
            }
            fputc('"', f);
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
static void rp__aligned(const rp_table *t, uint64_t top, const rp_syms *y, int named) {
    size_t n = t->n < top ? t->n : (size_t)top, k, j, nc = t->ncol + 1;
    size_t w[RP_MAXCOL + 1];
    char *cell;
    const size_t cw = 320;
    cell = (char *)calloc((n + 1) * nc, cw);
    if (!cell) return;
#define RP__CELL(r, c) (cell + ((r) * nc + (c)) * cw)
    snprintf(RP__CELL(0, 0), cw, "%s%s%s%s", t->key_name, t->key2_name ? "  " : "",
             t->key2_name ? t->key2_name : "", t->pc_keyed && named ? "  symbol" : "");
    for (j = 0; j < t->ncol; j++) snprintf(RP__CELL(0, j + 1), cw, "%s", t->col[j]);
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
    }
    for (j = 0; j < nc; j++) {
        w[j] = 0;
        for (k = 0; k <= n; k++)
            if (strlen(RP__CELL(k, j)) > w[j]) w[j] = strlen(RP__CELL(k, j));
    }
    for (k = 0; k <= n; k++) {
        printf("%-*s", (int)w[0], RP__CELL(k, 0));
        for (j = 1; j < nc; j++) printf("  %*s", (int)w[j], RP__CELL(k, j));
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
    if (!f) return 1;
    fprintf(f, "%s", t->key_name);
    if (t->key2_name) fprintf(f, ",%s", t->key2_name);
    if (t->pc_keyed) fprintf(f, ",symbol");
    for (j = 0; j < t->ncol; j++) fprintf(f, ",%s", t->col[j]);
    fprintf(f, "\n");
    for (k = 0; k < t->n; k++) {
        rp__key(f, t, &t->rows[k], y, 1);
        for (j = 0; j < t->ncol; j++) {
            fputc(',', f);
            if (t->rows[k].v[j] == t->rows[k].v[j])
                fprintf(f, "%.*f", (int)t->dec[j], t->rows[k].v[j]);
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

typedef struct rp__ev {
    const char *table; /* table-name suffix after the model            */
    const char *model;
    unsigned col;
    const char *name;
    int max;           /* several rows per PC: keep the largest        */
} rp__ev;

static const rp__ev rp__events[] = {
    {"insns", "pm_table", 0, "PM_Samples", 0},
    {"insns", "pm_table", 1, "PM_Fetches", 0},
    {"insns", "pm_table", 4, "PM_Latency", 0},
    {"insns", "pm_table", 5, "PM_DcMiss", 0},
    {"insns", "pm_table", 6, "PM_WastedSlots", 0},
    {"ranges", "rap", 3, "RAP_Events", 0},
    {"invariance", "strat_acc", 0, "STRAT_Events", 0},
    {"invariance", "strat_acc", 1, "STRAT_Invariant", 0},
    {"invariance", "coproc", 0, "CP_Samples", 1},
    {"invariance", "coproc", 1, "CP_Invariant", 1},
};
#define RP__NEV (sizeof rp__events / sizeof rp__events[0])

typedef struct rp__cg {
    uint64_t pc;
    const char *fn, *mod;
    char *file;    /* source file (addr2line), NULL: unknown */
    unsigned line;
    double c[RP__NEV];
} rp__cg;

/* Does table t (named "<model>[N].<suffix>") carry event e? Only the
 * first instance of a model counts: two RAP trees over the same code
 * would count every event twice. */
static int rp__is(const rp_table *t, const rp__ev *e) {
    size_t l = strlen(e->model);
    return !strncmp(t->name, e->model, l) && t->name[l] == '.' &&
           !strcmp(t->name + l + 1, e->table);
}

static int rp__cgcmp(const void *a, const void *b) {
    const rp__cg *x = (const rp__cg *)a, *y = (const rp__cg *)b;
    int c = strcmp(x->mod ? x->mod : "", y->mod ? y->mod : "");
    if (c) return c;
    c = strcmp(x->fn ? x->fn : "", y->fn ? y->fn : "");
    if (c) return c;
    return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static int rp__same(const char *a, const char *b) {
    return a && b ? !strcmp(a, b) : a == b;
}

static int rp__callgrind(const rp_set *s, const rp_table *t, size_t nt, const rp_syms *y,
                         const char *path) {
    size_t i, k, n = 0, cap = 0, m;
    unsigned e, used[RP__NEV], nused = 0;
    rp__cg *r = NULL;
    const char *cur = "";
    double tot[RP__NEV];
    FILE *f;
    memset(tot, 0, sizeof tot);
    for (e = 0; e < RP__NEV; e++) {
        int have = 0;
        for (i = 0; i < nt; i++) have |= rp__is(&t[i], &rp__events[e]) && t[i].pc_keyed;
        if (have) used[nused++] = e;
    }
    for (i = 0; i < nt; i++)
        for (k = 0; k < t[i].n; k++) {
            int any = 0;
            for (e = 0; e < nused; e++) any |= rp__is(&t[i], &rp__events[used[e]]);
            if (!any || !t[i].pc_keyed) continue;
            if (n == cap) {
                rp__cg *p;
                cap = cap ? 2 * cap : 1024;
                p = (rp__cg *)realloc(r, cap * sizeof *p);
                if (!p) {
                    free(r);
                    fprintf(stderr, "hwprof-report: out of memory\n");
                    return 1;
                }
                r = p;
            }
            memset(&r[n], 0, sizeof r[n]);
            r[n].pc = t[i].rows[k].key;
            for (e = 0; e < nused; e++)
                if (rp__is(&t[i], &rp__events[used[e]]))
                    r[n].c[e] = floor(t[i].rows[k].v[rp__events[used[e]].col] + 0.5);
            if (!rp_sym(y, r[n].pc, &r[n].fn, &r[n].mod, NULL)) {
                r[n].fn = r[n].mod = NULL;
                rp_sym_module(y, r[n].pc, &r[n].mod, NULL);
            }
            n++;
        }
    if (n > 1) qsort(r, n, sizeof *r, rp__cgcmp);
    /* one line per PC: rows of several tables at one PC fold together */
    for (i = 0, m = 0; i < n; i++) {
        if (m && r[m - 1].pc == r[i].pc) {
            for (e = 0; e < nused; e++)
                r[m - 1].c[e] = rp__events[used[e]].max
                                    ? (r[i].c[e] > r[m - 1].c[e] ? r[i].c[e] : r[m - 1].c[e])
                                    : r[m - 1].c[e] + r[i].c[e];
        } else {
            r[m++] = r[i];
        }
    }
    n = m;
    for (i = 0; i < n; i++)
        for (e = 0; e < nused; e++) tot[e] += r[i].c[e];
    {
        uint64_t *pcs = (uint64_t *)calloc(n ? n : 1, sizeof *pcs);
        char **files = (char **)calloc(n ? n : 1, sizeof *files);
        unsigned *lines = (unsigned *)calloc(n ? n : 1, sizeof *lines);
        if (pcs && files && lines) {
            for (i = 0; i < n; i++) pcs[i] = r[i].pc;
            rp_lines(y, pcs, n, files, lines);
            for (i = 0; i < n; i++) {
                r[i].file = files[i];
                r[i].line = lines[i];
            }
        }
        free(pcs);
        free(files);
        free(lines);
    }
    f = rp_open(path);
    if (!f) {
        free(r);
        return 1;
    }
    fprintf(f, "# callgrind format\nversion: 1\ncreator: hwprof-report\n");
    fprintf(f, "cmd: hwprof report of %s (%u file%s merged)\n", s->first, s->files,
            s->files == 1 ? "" : "s");
    fprintf(f, "positions: instr line\nevents:");
    for (e = 0; e < nused; e++) fprintf(f, " %s", rp__events[used[e]].name);
    fprintf(f, "\n");
    for (i = 0; i < n; i++) {
        /* fl= opens a function with its first PC's file; a PC from
         * another file (inlined code) is marked with fi= */
        static const char unknown[] = "???";
        const char *file = r[i].file ? r[i].file : unknown;
        if (i == 0 || !rp__same(r[i].fn, r[i - 1].fn) || !rp__same(r[i].mod, r[i - 1].mod) ||
            !r[i].fn) {
            fprintf(f, "\nob=%s\nfl=%s\n", r[i].mod ? r[i].mod : "(no module)", file);
            if (r[i].fn) fprintf(f, "fn=%s\n", r[i].fn);
            else fprintf(f, "fn=0x%llx\n", (unsigned long long)r[i].pc);
            cur = file;
        } else if (strcmp(file, cur)) {
            fprintf(f, "fi=%s\n", file);
            cur = file;
        }
        fprintf(f, "0x%llx %u", (unsigned long long)r[i].pc, r[i].line);
        for (e = 0; e < nused; e++) fprintf(f, " %.0f", r[i].c[e]);
        fprintf(f, "\n");
    }
    for (i = 0; i < n; i++) free(r[i].file);
    fprintf(f, "\ntotals:");
    for (e = 0; e < nused; e++) fprintf(f, " %.0f", tot[e]);
    fprintf(f, "\n");
    free(r);
    return rp_close(f, path);
}

/* ---- folded stacks ------------------------------------------------------------
 * "frame;frame;frame count" per line (Brendan Gregg's stackcollapse
 * format, read by flamegraph.pl and speedscope): module, function and
 * PC of the first per-PC table, weighted by its cost column. */
static int rp__folded(const rp_table *t, size_t nt, const rp_syms *y, const char *path) {
    const rp_table *p = NULL;
    size_t i;
    unsigned col;
    FILE *f;
    for (i = 0; i < nt && !p; i++)
        if (t[i].pc_keyed && !strncmp(t[i].name, "pm_table", 8)) p = &t[i];
    for (i = 0; i < nt && !p; i++)
        if (t[i].pc_keyed && !t[i].key2_name) p = &t[i];
    if (!p) {
        fprintf(stderr, "hwprof-report: --folded: no per-PC table in the report\n");
        return 1;
    }
    col = !strncmp(p->name, "pm_table", 8) ? 1 : p->sort;
    f = rp_open(path);
    if (!f) return 1;
    for (i = 0; i < p->n; i++) {
        const char *fn, *mod;
        double v = floor(p->rows[i].v[col] + 0.5);
        if (v <= 0) continue;
        uint64_t off;
        if (rp_sym(y, p->rows[i].key, &fn, &mod, NULL)) {
            const char *base = strrchr(mod, '/');
            fprintf(f, "%s;%s;0x%llx %.0f\n", base ? base + 1 : mod, fn,
                    (unsigned long long)p->rows[i].key, v);
        } else if (rp_sym_module(y, p->rows[i].key, &mod, &off)) {
            const char *base = strrchr(mod, '/');
            fprintf(f, "%s;[unknown];0x%llx %.0f\n", base ? base + 1 : mod,
                    (unsigned long long)off, v);
        } else {
            fprintf(f, "[unknown];0x%llx %.0f\n", (unsigned long long)p->rows[i].key, v);
        }
    }
    return rp_close(f, path);
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
    if (!rc && o->folded) rc = rp__folded(t, nt, y, o->folded);
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
