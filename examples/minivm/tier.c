/* minivm tiering policy (see tier.h). */
#include <stdlib.h>
#include <string.h>

#include "hwprof/base.h"
#include "tier.h"

static const char *const mvt__names[MVT_KINDS] = {"trace", "load", "inline",
                                                  "phase"};

const char *mvt_kind_name(unsigned k) { return k < MVT_KINDS ? mvt__names[k] : "?"; }

void mvt_policy_default(mvt_policy *p) {
    p->trace_share = 0.05;
    p->hot_share = 0.02;
    p->min_execs = 1000;
    p->invariance = 0.90;
    p->mono = 0.95;
    p->phase_slack = 1;
}

static void mvt__push(mvt_decisions *d, unsigned kind, uint64_t key,
                      uint64_t key2, double share, double detail) {
    mvt_item *it;
    size_t n = d->n[kind];
    if ((n & (n - 1)) == 0) { /* grow at powers of two */
        mvt_item *q = realloc(d->items[kind], sizeof *q * (n ? 2 * n : 4));
        if (!q) {
            fprintf(stderr, "minivm: out of memory\n");
            exit(3);
        }
        d->items[kind] = q;
    }
    it = &d->items[kind][n];
    it->key = key;
    it->key2 = key2;
    it->share = share;
    it->detail = detail;
    d->n[kind] = n + 1;
}

void mvt_decide(const mvt_profile *p, const mvt_policy *pol, mvt_decisions *d) {
    size_t i;
    memset(d, 0, sizeof *d);
    d->have = p->have;
    if ((p->have & (1u << MVT_TRACE)) && p->path_total)
        for (i = 0; i < p->npaths; i++) {
            double s = (double)p->paths[i].count / (double)p->path_total;
            if (s >= pol->trace_share)
                mvt__push(d, MVT_TRACE, p->paths[i].start, p->paths[i].id, s, 0);
        }
    if ((p->have & (1u << MVT_LOAD)) && p->load_total)
        for (i = 0; i < p->nloads; i++) {
            const mvt_load *l = &p->loads[i];
            double s = (double)l->execs / (double)p->load_total;
            double inv = l->execs ? (double)l->top_count / (double)l->execs : 0;
            if (s >= pol->hot_share && l->execs >= pol->min_execs &&
                inv >= pol->invariance)
                mvt__push(d, MVT_LOAD, l->pc, l->top_value, s, inv);
        }
    if ((p->have & (1u << MVT_INLINE)) && p->call_total)
        for (i = 0; i < p->nsites; i++) {
            const mvt_site *c = &p->sites[i];
            double s = (double)c->execs / (double)p->call_total;
            uint64_t top = c->method ? c->top_type_count : c->top_target_count;
            double mono = c->execs ? (double)top / (double)c->execs : 0;
            if (s >= pol->hot_share && c->execs >= pol->min_execs &&
                mono >= pol->mono)
                mvt__push(d, MVT_INLINE, c->pc,
                          c->method ? c->top_type : c->top_target, s, mono);
        }
    /* A change usually shows in two intervals in a row (the one that
     * straddles the boundary differs from both neighbours): re-profile
     * once, at the first. */
    if (p->have & (1u << MVT_PHASE))
        for (i = 0; i < p->nphases; i++)
            if (i == 0 || p->phases[i] != p->phases[i - 1] + 1)
                mvt__push(d, MVT_PHASE, p->phases[i], 0, 0, 0);
}

/* Is `it` among `set`? Phases match within the slack; traces match on
 * start and id; loads and call sites on their PC alone (the specialised
 * value or inlined receiver is reported, not compared: a load picked for
 * specialisation by both is the same decision). */
static int mvt__member(unsigned kind, const mvt_item *it, const mvt_item *set,
                       size_t n, unsigned slack) {
    size_t i;
    for (i = 0; i < n; i++) {
        if (kind == MVT_PHASE) {
            uint64_t a = it->key, b = set[i].key;
            if ((a > b ? a - b : b - a) <= slack) return 1;
        } else if (set[i].key == it->key &&
                   (kind != MVT_TRACE || set[i].key2 == it->key2)) {
            return 1;
        }
    }
    return 0;
}

void mvt_agree(const mvt_decisions *got, const mvt_decisions *truth,
               const mvt_policy *pol, mvt_agreement *a) {
    unsigned k;
    memset(a, 0, sizeof *a);
    a->have = got->have & truth->have;
    for (k = 0; k < MVT_KINDS; k++) {
        size_t i, hit = 0, found = 0;
        for (i = 0; i < got->n[k]; i++)
            hit += (size_t)mvt__member(k, &got->items[k][i], truth->items[k],
                                       truth->n[k], pol->phase_slack);
        for (i = 0; i < truth->n[k]; i++)
            found += (size_t)mvt__member(k, &truth->items[k][i], got->items[k],
                                         got->n[k], pol->phase_slack);
        a->tp[k] = hit;
        a->fp[k] = got->n[k] - hit;
        a->fn[k] = truth->n[k] - found;
        /* No decisions at all is vacuously precise; nothing to find is
         * vacuously recalled. */
        a->precision[k] = got->n[k] ? (double)hit / (double)got->n[k] : 1.0;
        a->recall[k] = truth->n[k] ? (double)found / (double)truth->n[k] : 1.0;
    }
}

static void mvt__where(FILE *f, const mv_prog *prog, uint64_t pc) {
    uint32_t i = MV_PC_INDEX(pc);
    const mv_func *fn = mv_func_at(prog, i);
    fprintf(f, "%s+%u (%s)", fn ? fn->name : "?", fn ? i - fn->entry : i,
            i < prog->ncode ? mv_op_name(prog->code[i].op) : "?");
}

void mvt_print(FILE *f, const char *label, const mv_prog *prog,
               const mvt_decisions *d) {
    unsigned k;
    size_t i;
    for (k = 0; k < MVT_KINDS; k++) {
        if (!(d->have & (1u << k))) {
            fprintf(f, "%s %-6s (no profile for this decision)\n", label,
                    mvt__names[k]);
            continue;
        }
        for (i = 0; i < d->n[k]; i++) {
            const mvt_item *it = &d->items[k][i];
            fprintf(f, "%s %-6s ", label, mvt__names[k]);
            switch (k) {
            case MVT_TRACE:
                fprintf(f, "compile path at ");
                mvt__where(f, prog, it->key);
                fprintf(f, " branches %u directions 0x%llx share %.3f\n",
                        hwp_log2(it->key2),
                        (unsigned long long)(it->key2 ^ (1ull << hwp_log2(it->key2))),
                        it->share);
                break;
            case MVT_LOAD:
                fprintf(f, "specialise ");
                mvt__where(f, prog, it->key);
                fprintf(f, " on 0x%llx invariance %.3f share %.3f\n",
                        (unsigned long long)it->key2, it->detail, it->share);
                break;
            case MVT_INLINE:
                fprintf(f, "inline at ");
                mvt__where(f, prog, it->key);
                fprintf(f, " %s %llu monomorphic %.3f share %.3f\n",
                        prog->code[MV_PC_INDEX(it->key)].op == MV_OP_callm
                            ? "receiver type" : "target pc",
                        (unsigned long long)it->key2, it->detail, it->share);
                break;
            default:
                fprintf(f, "re-profile at interval %llu\n",
                        (unsigned long long)it->key);
            }
        }
    }
}

void mvt_print_agreement(FILE *f, const mvt_agreement *a) {
    unsigned k;
    for (k = 0; k < MVT_KINDS; k++) {
        if (!(a->have & (1u << k))) {
            fprintf(f, "agreement %-6s n/a\n", mvt__names[k]);
            continue;
        }
        fprintf(f, "agreement %-6s precision %.3f recall %.3f (tp %zu fp %zu fn %zu)\n",
                mvt__names[k], a->precision[k], a->recall[k], a->tp[k], a->fp[k],
                a->fn[k]);
    }
}

void mvt_decisions_free(mvt_decisions *d) {
    unsigned k;
    for (k = 0; k < MVT_KINDS; k++) free(d->items[k]);
    memset(d, 0, sizeof *d);
}

void mvt_profile_free(mvt_profile *p) {
    free(p->loads);
    free(p->sites);
    free(p->paths);
    free(p->phases);
    memset(p, 0, sizeof *p);
}
