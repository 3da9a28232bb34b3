/* examples/report/rp_html.c: hwprof-report --html FILE, one page that
 * needs nothing but a browser: inline CSS and SVG, no script, no network.
 * Figures: RAP's range tree (the model's own SVG writer), ProfileMe's
 * costliest instructions with their latency by pipeline stage, the hot
 * paths, the phase timeline of both detectors, the load-value invariance
 * histogram, and the modelled hardware overhead per model. A figure
 * whose data the report does not hold says so in words instead of
 * drawing an empty frame. */
#include "rp_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void rp__esc(FILE *f, const char *s) {
    for (; *s; s++) {
        if (*s == '<') fputs("&lt;", f);
        else if (*s == '>') fputs("&gt;", f);
        else if (*s == '&') fputs("&amp;", f);
        else if (*s == '"') fputs("&quot;", f);
        else fputc(*s, f);
    }
}

static const rp_table *rp__tab(const rp_table *t, size_t nt, const char *model,
                               const char *suffix) {
    size_t i, l = strlen(model);
    for (i = 0; i < nt; i++)
        if (!strncmp(t[i].name, model, l) && t[i].name[l] == '.' &&
            !strcmp(t[i].name + l + 1, suffix))
            return &t[i];
    return NULL;
}

/* The row's key as text: symbol when known, else the address. */
static void rp__label(const rp_syms *y, const rp_table *t, const rp_row *r, char *buf,
                      size_t cap) {
    char name[256];
    rp_key_name(y, r->key, name, sizeof name);
    if (r->label) snprintf(buf, cap, "%s", r->label);
    else if (name[0]) snprintf(buf, cap, "0x%llx %.60s", (unsigned long long)r->key, name);
    else snprintf(buf, cap, "0x%llx", (unsigned long long)r->key);
    if (t->key2_name && !r->label) {
        size_t l = strlen(buf);
        snprintf(buf + l, cap - l, " %s 0x%llx", t->key2_name, (unsigned long long)r->key2);
    }
}

static const char *const rp__colors[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2",
                                         "#59a14f", "#edc948", "#b07aa1", "#9c755f"};

/* Horizontal bars, each the stack of ncol columns of a row. */
static void rp__bars(FILE *f, const rp_syms *y, const rp_table *t, size_t top,
                     const unsigned *cols, unsigned ncol, const char *unit) {
    size_t i, n = t->n < top ? t->n : top;
    unsigned c;
    double max = 0;
    const int left = 330, width = 560, bh = 16, gap = 4, head = 26;
    for (i = 0; i < n; i++) {
        double s = 0;
        for (c = 0; c < ncol; c++) s += t->rows[i].v[cols[c]];
        if (s > max) max = s;
    }
    if (max <= 0) max = 1;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n",
            left + width + 110, head + (int)n * (bh + gap) + 4);
    for (c = 0; c < ncol; c++) {
        fprintf(f, "<rect x=\"%d\" y=\"4\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                   "<text x=\"%d\" y=\"13\">%s</text>\n",
                left + (int)c * 110, rp__colors[c % 8], left + (int)c * 110 + 14, t->col[cols[c]]);
    }
    for (i = 0; i < n; i++) {
        char lab[300];
        double x = left, s = 0;
        int yy = head + (int)i * (bh + gap);
        rp__label(y, t, &t->rows[i], lab, sizeof lab);
        fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">", left - 6, yy + 12);
        if (t->rows[i].path) { /* a hot path: its blocks, whole in the tooltip */
            char blk[4096];
            rp_path_text(y, t->rows[i].path, blk, sizeof blk);
            fprintf(f, "<title>");
            rp__esc(f, blk);
            fprintf(f, "</title>");
            if (strlen(blk) > 56) memcpy(blk + 53, "...", 4);
            snprintf(lab, sizeof lab, "%s", blk);
        }
        rp__esc(f, lab);
        fprintf(f, "</text>\n");
        for (c = 0; c < ncol; c++) {
            double v = t->rows[i].v[cols[c]], w = v / max * width;
            s += v;
            if (w <= 0) continue;
            fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
                       "<title>%s: %.0f %s</title></rect>\n",
                    x, yy, w < 0.5 ? 0.5 : w, bh, rp__colors[c % 8], t->col[cols[c]], v, unit);
            x += w;
        }
        fprintf(f, "<text x=\"%.1f\" y=\"%d\">%.0f</text>\n", x + 4, yy + 12, s);
    }
    fprintf(f, "</svg>\n");
}

static void rp__none(FILE *f, const char *what) {
    fprintf(f, "<p class=\"none\">%s</p>\n", what);
}

/* The first column's bars, or why there are none. */
static void rp__bars_or(FILE *f, const rp_syms *y, const rp_table *t, size_t top,
                        const char *unit, const char *none) {
    unsigned first = 0;
    if (t && t->n) rp__bars(f, y, t, top, &first, 1, unit);
    else rp__none(f, none);
}

static void rp__phases(FILE *f, const rp_set *s) {
    size_t n = s->nphase > s->nbbv ? s->nphase : s->nbbv, i;
    double w = n ? 900.0 / (double)n : 0;
    int row;
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"1010\" height=\"80\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n");
    for (row = 0; row < 2; row++) {
        const uint32_t *ids = row ? s->bbv_ids : s->phase_ids;
        size_t k = row ? s->nbbv : s->nphase;
        fprintf(f, "<text x=\"0\" y=\"%d\">%s</text>\n", 22 + row * 30,
                row ? "BBV detector" : "path detector");
        for (i = 0; i < k; i++)
            fprintf(f, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"22\" "
                       "fill=\"hsl(%u,60%%,55%%)\"><title>interval %zu: phase %u</title></rect>\n",
                    100 + w * (double)i, 8 + row * 30, w < 0.5 ? 0.5 : w,
                    (ids[i] * 137u) % 360u, i, ids[i]);
    }
    fprintf(f, "</svg>\n");
}

/* Invariance of each load's best value, in ten bins of 0.1. */
static void rp__hist(FILE *f, const rp_table *a, const rp_table *b) {
    const rp_table *src[2] = {a, b};
    double bins[2][10];
    double max = 1;
    int k, i;
    size_t r;
    memset(bins, 0, sizeof bins);
    for (k = 0; k < 2; k++) {
        uint64_t last = 0;
        int have = 0;
        if (!src[k]) continue;
        /* rows of one PC are adjacent after sorting by key */
        for (r = 0; r < src[k]->n; r++) {
            const rp_row *x = &src[k]->rows[r];
            double inv = x->v[2];
            if (have && x->key == last) continue; /* a PC's best row comes first */
            i = inv >= 1.0 ? 9 : inv <= 0 ? 0 : (int)(inv * 10.0);
            bins[k][i] += 1;
            last = x->key;
            have = 1;
        }
    }
    for (k = 0; k < 2; k++)
        for (i = 0; i < 10; i++)
            if (bins[k][i] > max) max = bins[k][i];
    fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"250\" "
               "font-family=\"sans-serif\" font-size=\"11\">\n");
    for (k = 0; k < 2; k++)
        if (src[k])
            fprintf(f, "<rect x=\"%d\" y=\"4\" width=\"10\" height=\"10\" fill=\"%s\"/>"
                       "<text x=\"%d\" y=\"13\">%s (loads)</text>\n",
                    60 + k * 220, rp__colors[k], 74 + k * 220, src[k]->name);
    for (i = 0; i < 10; i++) {
        for (k = 0; k < 2; k++) {
            double h = bins[k][i] / max * 180.0;
            if (!src[k] || h <= 0) continue;
            fprintf(f, "<rect x=\"%d\" y=\"%.1f\" width=\"24\" height=\"%.1f\" fill=\"%s\">"
                       "<title>%s: %.0f loads with invariance in [%.1f, %.1f)</title></rect>\n",
                    50 + i * 56 + k * 25, 210 - h, h, rp__colors[k], src[k]->name, bins[k][i],
                    i / 10.0, (i + 1) / 10.0);
        }
        fprintf(f, "<text x=\"%d\" y=\"226\">%.1f</text>\n", 50 + i * 56, i / 10.0);
    }
    fprintf(f, "<line x1=\"48\" y1=\"210\" x2=\"612\" y2=\"210\" stroke=\"#333\"/>"
               "<text x=\"250\" y=\"244\">invariance of the load's most frequent value</text>\n"
               "</svg>\n");
}

/* Sort a copy by key so the rows of one PC are adjacent, best first. */
static int rp__bykey(const void *a, const void *b) {
    const rp_row *x = (const rp_row *)a, *y = (const rp_row *)b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return x->v[2] > y->v[2] ? -1 : x->v[2] < y->v[2];
}

static rp_table rp__keyed(const rp_table *t) {
    rp_table c;
    memset(&c, 0, sizeof c);
    if (!t) return c;
    c = *t;
    c.rows = (rp_row *)malloc((t->n ? t->n : 1) * sizeof *c.rows);
    if (!c.rows) {
        c.n = 0;
        return c;
    }
    memcpy(c.rows, t->rows, t->n * sizeof *c.rows);
    qsort(c.rows, c.n, sizeof *c.rows, rp__bykey);
    return c;
}

static void rp__fig(FILE *f, const char *id, const char *title, const char *caption) {
    fprintf(f, "<figure id=\"%s\"><figcaption><b>%s</b> %s</figcaption>\n", id, title, caption);
}

int rp_out_html(const rp_set *s, rp_table *t, size_t nt, const rp_syms *y, FILE *f) {
    const rp_table *pm = rp__tab(t, nt, "pm_table", "insns");
    const rp_table *hpt = rp__tab(t, nt, "hpt", "paths");
    const rp_table *cp = rp__tab(t, nt, "coproc", "invariance");
    const rp_table *st = rp__tab(t, nt, "strat_acc", "invariance");
    size_t i;
    fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
               "<title>hwprof report: ");
    rp__esc(f, s->first);
    fprintf(f, "</title>\n<style>\n"
               "body{font-family:sans-serif;margin:1.5em;max-width:1100px;color:#222}\n"
               "figure{margin:1.5em 0;border-top:1px solid #ccc;padding-top:.5em}\n"
               "table{border-collapse:collapse;font-size:12px}"
               "td,th{padding:2px 8px;text-align:right;border-bottom:1px solid #eee}\n"
               "td:first-child,th:first-child,td:nth-child(2){text-align:left}.none{color:#777}\n"
               "</style></head><body>\n<h1>hwprof report</h1>\n<p>");
    rp__esc(f, s->first);
    fprintf(f, "%s", s->files > 1 ? " and others" : "");
    fprintf(f, ": %u file%s merged", s->files, s->files == 1 ? "" : "s");
    if (s->insns) fprintf(f, ", %llu instructions", (unsigned long long)s->insns);
    fprintf(f, ".</p>\n<table><tr><th>model</th><th>at</th><th>events</th><th>dropped</th>"
               "<th>evicted</th><th>modelled cycles</th></tr>\n");
    for (i = 0; i < s->ncomp; i++) {
        rp_stat4 x;
        rp_comp_stats(&s->comp[i], &x);
        fprintf(f, "<tr><td>%s</td><td>%s</td><td>%llu</td><td>%llu</td><td>%llu</td>"
                   "<td>%llu</td></tr>\n",
                rp_comp_model(&s->comp[i]), s->comp[i].path, (unsigned long long)x.events,
                (unsigned long long)x.dropped, (unsigned long long)x.evicted,
                (unsigned long long)x.cycles);
    }
    fprintf(f, "</table>\n");

    rp__fig(f, "rap", "RAP range tree",
            "(Mysore et al., Profiling over Adaptive Ranges): one row per depth, "
            "hot ranges in red.");
    if (!rp_rap_svg(s, f)) rp__none(f, "This report has no RAP profile.");
    fprintf(f, "</figure>\n");

    rp__fig(f, "profileme", "Costliest instructions",
            "(ProfileMe, Dean et al.): estimated cycles by pipeline stage, ranked as the "
            "model ranks them.");
    if (pm && pm->n) {
        unsigned cols[6] = {8, 9, 10, 11, 12, 13}, c, lat = 0;
        for (i = 0; i < pm->n; i++)
            for (c = 0; c < 6; c++) lat |= pm->rows[i].v[cols[c]] > 0;
        if (lat) {
            rp__bars(f, y, pm, 25, cols, 6, "cycles");
        } else {
            unsigned one = 1;
            fprintf(f, "<p>No sample carries a latency (a host without pipeline stages): "
                       "estimated fetches.</p>\n");
            rp__bars(f, y, pm, 25, &one, 1, "fetches");
        }
    } else {
        rp__none(f, "This report has no ProfileMe samples.");
    }
    fprintf(f, "</figure>\n");

    rp__fig(f, "paths", "Hot paths",
            "(Vaswani, Jacob &amp; Srikant): the hot path table's paths by count, named by "
            "their blocks where the host decoded them (first &gt; ... &gt; last; the whole "
            "list in the tooltip), else by their first instruction.");
    rp__bars_or(f, y, hpt, 20, "executions", "This report has no hot path table.");
    fprintf(f, "</figure>\n");

    rp__fig(f, "phases", "Phase timeline",
            "one cell per interval, coloured by phase id: the path-based detector against "
            "the basic-block-vector detector at the same hardware budget.");
    if (s->nphase || s->nbbv) rp__phases(f, s);
    else rp__none(f, "This report holds no closed interval (a run shorter than one interval).");
    fprintf(f, "</figure>\n");

    rp__fig(f, "invariance", "Load-value invariance",
            "(co-processor, Zilles &amp; Sohi; stratified sampling, Sastry, Bodik &amp; Smith): "
            "loads by the invariance of their most frequent value.");
    if ((cp && cp->n) || (st && st->n)) {
        rp_table a = rp__keyed(cp), b = rp__keyed(st);
        rp__hist(f, cp && cp->n ? &a : NULL, st && st->n ? &b : NULL);
        free(a.rows);
        free(b.rows);
    } else {
        rp__none(f, "This report has no value profile.");
    }
    fprintf(f, "</figure>\n");

    rp__fig(f, "overhead", "Modelled hardware overhead",
            "cycles each model's hardware would have charged the host.");
    {
        const rp_table *ov = NULL;
        for (i = 0; i < nt; i++)
            if (!strcmp(t[i].name, "overhead")) ov = &t[i];
        rp__bars_or(f, y, ov, 16, "cycles", "This report does not carry the cost shim's figures.");
        if (ov && ov->n && s->host_clock > 0)
            fprintf(f, "<p>Total %.0f cycles over a host clock of %.0f: %.3f%%.</p>\n",
                    s->total_cycles, s->host_clock, 100.0 * s->total_cycles / s->host_clock);
    }
    fprintf(f, "</figure>\n");

    if (pm && pm->n) {
        size_t j;
        fprintf(f, "<h2>Costliest instructions</h2>\n<table><tr><th>pc</th>");
        for (j = 0; j < pm->ncol; j++) fprintf(f, "<th>%s</th>", pm->col[j]);
        fprintf(f, "</tr>\n");
        for (i = 0; i < pm->n && i < 25; i++) {
            char lab[300];
            rp__label(y, pm, &pm->rows[i], lab, sizeof lab);
            fprintf(f, "<tr><td>");
            rp__esc(f, lab);
            fprintf(f, "</td>");
            for (j = 0; j < pm->ncol; j++)
                fprintf(f, "<td>%.*f</td>", (int)pm->dec[j], pm->rows[i].v[j]);
            fprintf(f, "</tr>\n");
        }
        fprintf(f, "</table>\n");
    }
    fprintf(f, "<p>Written by hwprof-report; every figure is in this file.</p>\n"
               "</body></html>\n");
    return 0;
}
