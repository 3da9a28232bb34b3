/* minivm exact profiles (see exact.h). */
#include <stdlib.h>
#include <string.h>

#include "exact.h"

static uint64_t mvx__slot(uint64_t a, uint64_t b, uint64_t mask) {
    return hwp_mix64(a * 0x9E3779B97F4A7C15ull ^ hwp_mix64(b)) & mask;
}

static void mvx__rehash(mvx_map *m) {
    mvx_map n;
    uint64_t i;
    n.cap = m->cap ? m->cap * 2 : 1024;
    n.used = 0;
    n.key = calloc(n.cap * 2, sizeof *n.key);
    n.count = calloc(n.cap, sizeof *n.count);
    if (!n.key || !n.count) {
        fprintf(stderr, "minivm: out of memory in the exact profile\n");
        exit(3);
    }
    for (i = 0; i < m->cap; i++)
        if (m->count[i]) mvx_map_add(&n, m->key[2 * i], m->key[2 * i + 1], m->count[i]);
    free(m->key);
    free(m->count);
    *m = n;
}

void mvx_map_add(mvx_map *m, uint64_t a, uint64_t b, uint64_t n) {
    uint64_t i;
    if (!n) return;
    if (2 * (m->used + 1) > m->cap) mvx__rehash(m);
    for (i = mvx__slot(a, b, m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        if (!m->count[i]) {
            m->key[2 * i] = a;
            m->key[2 * i + 1] = b;
            m->count[i] = n;
            m->used++;
            return;
        }
        if (m->key[2 * i] == a && m->key[2 * i + 1] == b) {
            m->count[i] += n;
            return;
        }
    }
}

uint64_t mvx_map_get(const mvx_map *m, uint64_t a, uint64_t b) {
    uint64_t i;
    if (!m->cap) return 0;
    for (i = mvx__slot(a, b, m->cap - 1); m->count[i]; i = (i + 1) & (m->cap - 1))
        if (m->key[2 * i] == a && m->key[2 * i + 1] == b) return m->count[i];
    return 0;
}

void mvx_map_free(mvx_map *m) {
    free(m->key);
    free(m->count);
    memset(m, 0, sizeof *m);
}

int mvx_init(mvx *x, uint32_t ncode, uint64_t interval, double threshold) {
    memset(x, 0, sizeof *x);
    x->ncode = ncode;
    x->execs = calloc(ncode ? ncode : 1, sizeof *x->execs);
    x->pcap = 64;
    x->pstack = calloc(x->pcap, sizeof *x->pstack);
    x->interval = interval;
    x->phase_threshold = threshold;
    return x->execs && x->pstack ? 0 : -1;
}

void mvx_free(mvx *x) {
    free(x->execs);
    free(x->pstack);
    free(x->changes);
    mvx_map_free(&x->values);
    mvx_map_free(&x->targets);
    mvx_map_free(&x->types);
    mvx_map_free(&x->paths);
    mvx_map_free(&x->cur);
    mvx_map_free(&x->prev);
    memset(x, 0, sizeof *x);
}

/* ---- reference paths (Vaswani et al., section 3, Table 1: BL paths) ----------
 * call: update-count, push a path starting at the callee
 * return: update-count, pop
 * forward branch: update;  backward branch (taken, to an address at or
 * below its own): update, pop, push at the target
 * A path that reaches MVX_PATH_MAX branches ends and a new one starts at
 * the branch's target. Popped paths are counted, and their bytecodes go
 * into the phase reference. Written from the paper, not from pathprof.h. */

static void mvx__interval_end(mvx *x);

static void mvx__end_path(mvx *x, const mvx_pathent *e) {
    mvx_map_add(&x->paths, e->start, e->shape, 1);
    mvx_map_add(&x->cur, e->start, e->shape, e->insns);
    x->cur_total += e->insns;
    if (x->cur_total >= x->interval) mvx__interval_end(x);
}

static void mvx__push_path(mvx *x, uint64_t start) {
    mvx_pathent *e;
    if (x->pdepth == x->pcap) {
        mvx_pathent *q = realloc(x->pstack, sizeof *q * x->pcap * 2);
        if (!q) {
            fprintf(stderr, "minivm: out of memory in the exact profile\n");
            exit(3);
        }
        x->pstack = q;
        x->pcap *= 2;
    }
    e = &x->pstack[x->pdepth++];
    e->start = start;
    e->shape = 1;
    e->insns = 0;
}

/* Manhattan distance of the two intervals' normalised path distributions
 * (0: identical, 2: disjoint), the reference for the phase detector. */
static double mvx__distance(const mvx *x) {
    double d = 0;
    uint64_t i;
    for (i = 0; i < x->cur.cap; i++)
        if (x->cur.count[i]) {
            double a = (double)x->cur.count[i] / (double)x->cur_total;
            double b = (double)mvx_map_get(&x->prev, x->cur.key[2 * i],
                                           x->cur.key[2 * i + 1]) /
                       (double)x->prev_total;
            d += a > b ? a - b : b - a;
        }
    for (i = 0; i < x->prev.cap; i++)
        if (x->prev.count[i] &&
            !mvx_map_get(&x->cur, x->prev.key[2 * i], x->prev.key[2 * i + 1]))
            d += (double)x->prev.count[i] / (double)x->prev_total;
    return d;
}

static void mvx__interval_end(mvx *x) {
    mvx_map t;
    if (x->nintervals > 0 && mvx__distance(x) > x->phase_threshold) {
        if (x->nchanges == x->capchanges) {
            uint64_t *q = realloc(x->changes, sizeof *q * (x->capchanges * 2 + 8));
            if (!q) exit(3);
            x->changes = q;
            x->capchanges = x->capchanges * 2 + 8;
        }
        x->changes[x->nchanges++] = x->nintervals;
    }
    x->nintervals++;
    t = x->prev; /* the current interval becomes the previous one */
    x->prev = x->cur;
    x->prev_total = x->cur_total;
    x->cur = t;
    if (x->cur.cap) {
        memset(x->cur.count, 0, sizeof *x->cur.count * x->cur.cap);
        x->cur.used = 0;
    }
    x->cur_total = 0;
}

static void mvx__path_event(mvx *x, const hwp_insn *in, uint32_t n) {
    mvx_pathent *top;
    if (!x->pdepth) mvx__push_path(x, in->pc - 8u * (uint64_t)(n - 1u)); /* main */
    top = &x->pstack[x->pdepth - 1];
    top->insns += n;
    switch (in->cls) {
    case HWP_CLS_CALL:
        mvx__push_path(x, in->next_pc);
        break;
    case HWP_CLS_RET:
        x->pdepth--;
        mvx__end_path(x, top);
        break;
    case HWP_CLS_BR_COND:
    case HWP_CLS_JUMP: {
        uint64_t taken = (in->events & HWP_EV_TAKEN) != 0;
        top->shape = top->shape << 1 | taken;
        if ((taken && in->next_pc <= in->pc) ||
            top->shape >= (uint64_t)1 << MVX_PATH_MAX) {
            mvx__end_path(x, top);
            top->start = in->next_pc;
            top->shape = 1;
            top->insns = 0;
        }
        break;
    }
    default:
        break;
    }
}

void mvx_event(mvx *x, const hwp_insn *in, uint32_t n) {
    uint32_t i, last = MV_PC_INDEX(in->pc);
    x->steps += n;
    for (i = 0; i < n; i++) x->execs[last - i]++; /* the straight-line run */
    if (in->cls == HWP_CLS_LOAD) {
        mvx_map_add(&x->values, in->pc, in->value, 1);
    } else if (in->cls == HWP_CLS_CALL) {
        mvx_map_add(&x->targets, in->pc, in->addr, 1);
        if (in->events & HWP_EV_INDIRECT && in->value)
            mvx_map_add(&x->types, in->pc, in->value, 1);
    }
    mvx__path_event(x, in, n);
}

/* ---- per-PC tallies ---------------------------------------------------- */

void mvx_tally_init(mvx_tally *t, const mv_prog *prog) {
    size_t n = prog->ncode ? prog->ncode : 1;
    t->prog = prog;
    t->ltot = calloc(n * 8, sizeof *t->ltot);
    if (!t->ltot) {
        fprintf(stderr, "minivm: out of memory\n");
        exit(3);
    }
    t->lval = t->ltot + n;
    t->lcnt = t->lval + n;
    t->ctot = t->lcnt + n;
    t->ctgt = t->ctot + n;
    t->ccnt = t->ctgt + n;
    t->ttyp = t->ccnt + n;
    t->tcnt = t->ttyp + n;
}

static int mvx__index(const mvx_tally *t, uint64_t pc, uint32_t *i) {
    if (pc < MV_CODE_BASE || MV_PC_INDEX(pc) >= t->prog->ncode) return 0;
    *i = MV_PC_INDEX(pc);
    return 1;
}

/* Count n at pc for w: into the PC's total (when kept) and, when n beats
 * the PC's best so far, as its top tuple. Each (pc, w) arrives once. */
static void mvx__tally(const mvx_tally *t, uint64_t *tot, uint64_t *top,
                       uint64_t *which, uint64_t pc, uint64_t w, uint64_t n) {
    uint32_t i;
    if (!mvx__index(t, pc, &i)) return;
    if (tot) tot[i] += n;
    if (n > top[i]) {
        top[i] = n;
        which[i] = w;
    }
}

void mvx_tally_load(mvx_tally *t, uint64_t pc, uint64_t v, uint64_t n) {
    mvx__tally(t, t->ltot, t->lcnt, t->lval, pc, v, n);
}

void mvx_tally_target(mvx_tally *t, uint64_t pc, uint64_t target, uint64_t n) {
    mvx__tally(t, t->ctot, t->ccnt, t->ctgt, pc, target, n);
}

void mvx_tally_type(mvx_tally *t, uint64_t pc, uint64_t type, uint64_t n) {
    mvx__tally(t, NULL, t->tcnt, t->ttyp, pc, type, n);
}

void mvx_tally_finish(mvx_tally *t, mvt_profile *out) {
    uint32_t i, n = t->prog->ncode, nl = 0, ns = 0;
    for (i = 0; i < n; i++) {
        nl += t->ltot[i] != 0;
        ns += t->ctot[i] != 0;
    }
    out->loads = calloc(nl ? nl : 1, sizeof *out->loads);
    out->sites = calloc(ns ? ns : 1, sizeof *out->sites);
    if (!out->loads || !out->sites) exit(3);
    for (i = 0; i < n; i++) {
        if (t->ltot[i]) {
            mvt_load *l = &out->loads[out->nloads++];
            l->pc = MV_PC(i);
            l->execs = t->ltot[i];
            l->top_value = t->lval[i];
            l->top_count = t->lcnt[i];
            out->load_total += t->ltot[i];
        }
        if (t->ctot[i]) {
            mvt_site *c = &out->sites[out->nsites++];
            c->pc = MV_PC(i);
            c->execs = t->ctot[i];
            c->top_target = t->ctgt[i];
            c->top_target_count = t->ccnt[i];
            c->top_type = t->ttyp[i];
            c->top_type_count = t->tcnt[i];
            c->method = t->prog->code[i].op == MV_OP_callm;
            out->call_total += t->ctot[i];
        }
    }
    free(t->ltot);
    memset(t, 0, sizeof *t);
}

static void mvx__tally_map(mvx_tally *t, const mvx_map *m,
                           void (*fn)(mvx_tally *, uint64_t, uint64_t, uint64_t)) {
    uint64_t i;
    for (i = 0; i < m->cap; i++)
        if (m->count[i]) fn(t, m->key[2 * i], m->key[2 * i + 1], m->count[i]);
}

void mvx_summary(const mvx *x, const mv_prog *prog, mvt_profile *out) {
    mvx_tally t;
    uint64_t i;
    memset(out, 0, sizeof *out);
    mvx_tally_init(&t, prog);
    mvx__tally_map(&t, &x->values, mvx_tally_load);
    mvx__tally_map(&t, &x->targets, mvx_tally_target);
    mvx__tally_map(&t, &x->types, mvx_tally_type);
    mvx_tally_finish(&t, out);
    out->paths = calloc(x->paths.used ? x->paths.used : 1, sizeof *out->paths);
    out->phases = calloc(x->nchanges ? x->nchanges : 1, sizeof *out->phases);
    if (!out->paths || !out->phases) exit(3);
    for (i = 0; i < x->paths.cap; i++)
        if (x->paths.count[i]) {
            mvt_path *p = &out->paths[out->npaths++];
            p->start = x->paths.key[2 * i];
            p->id = x->paths.key[2 * i + 1];
            p->count = x->paths.count[i];
            out->path_total += p->count;
        }
    for (i = 0; i < x->nchanges; i++) out->phases[out->nphases++] = x->changes[i];
    out->have = (1u << MVT_KINDS) - 1u;
}
