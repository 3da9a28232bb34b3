/* minivm interpreter loop.
 *
 * One switch over the opcodes. The loop is written once as an always-inline
 * function taking the profiler handle; mv_run calls it with NULL (no
 * profiling: every `if (prof)` folds away) or with the handle, so "hwprof
 * off" is the plain interpreter, not one with dead hooks in it.
 *
 * With a profiler, each load, store, branch, call and return fills one
 * hwp_insn record (PC, class, effective address and loaded value, branch
 * target and taken bit, call target and receiver type) and hands it to
 * mvp_event() in prof.h. The other bytecodes (arithmetic, stack shuffles)
 * cost the profiled loop nothing: they sit between two events in
 * straight-line code, so mvp_event knows which ran from the two events'
 * PCs. Without a profiler the loop counts bytecodes and nothing else (the
 * virtual cycle counter belongs to the profiler).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "hwprof/vm.h"
#include "prof.h"

#if defined(__GNUC__) || defined(__clang__)
#define MV__ALWAYS_INLINE static inline __attribute__((always_inline))
#else
#define MV__ALWAYS_INLINE static inline
#endif

static const uint8_t mv__cycles[] = {
#define MV__OP_CYC(name, kind, cyc, cls) cyc,
    MV_OPS(MV__OP_CYC)
#undef MV__OP_CYC
};
static const uint8_t mv__cls[] = {
#define MV__OP_CLS(name, kind, cyc, cls) cls,
    MV_OPS(MV__OP_CLS)
#undef MV__OP_CLS
};

unsigned mv_op_cls(unsigned op) { return op < MV_OP_COUNT ? mv__cls[op] : HWP_CLS_OTHER; }
unsigned mv_op_cycles(unsigned op) { return op < MV_OP_COUNT ? mv__cycles[op] : 1u; }

#define MV_MAX_FRAMES 10000u

int mv_vm_init(mv_vm *vm, const mv_prog *p, uint32_t heap_cells, FILE *out) {
    uint32_t g;
    memset(vm, 0, sizeof *vm);
    vm->prog = p;
    vm->out = out;
    vm->stack_cap = 1u << 20;
    vm->frame_cap = MV_MAX_FRAMES;
    vm->heap_cap = heap_cells;
    vm->stack = calloc(vm->stack_cap, sizeof *vm->stack);
    vm->frames = calloc(vm->frame_cap, sizeof *vm->frames);
    vm->heap = calloc(heap_cells ? heap_cells : 1, sizeof *vm->heap);
    vm->globals = calloc(p->nglobals ? p->nglobals : 1, sizeof *vm->globals);
    if (!vm->stack || !vm->frames || !vm->heap || !vm->globals) {
        mv_vm_free(vm);
        return -1;
    }
    for (g = 0; g < p->nglobals; g++) vm->globals[g] = p->globals[g].init;
    vm->heap_top = 1; /* cell 0 unused: no object lives at address 0 */
    return 0;
}

void mv_vm_free(mv_vm *vm) {
    free(vm->stack);
    free(vm->frames);
    free(vm->heap);
    free(vm->globals);
    vm->stack = NULL;
    vm->frames = NULL;
    vm->heap = NULL;
    vm->globals = NULL;
}

static const char *const mv__tag_names[] = {"nil", "int", "float", "object",
                                            "function"};

/* The type a profile sees: the tag, or for an object 8 + its class
 * (arrays are class -1, so type 7). */
static inline uint64_t mv__type(const mv_vm *vm, mv_val v) {
    if (v.tag != MV_OBJ) return v.tag;
    return (uint64_t)(8 + MV_HDR_CLASS(vm->heap[v.as.u].as.u));
}

/* A loaded value as 64 bits for value profiling: payload and tag, so int
 * 0, float 0.0 and nil differ. */
static inline uint64_t mv__bits(mv_val v) {
    return v.as.u ^ ((uint64_t)v.tag << 60);
}

static void mv__print(mv_vm *vm, mv_val v) {
    switch (v.tag) {
    case MV_INT: fprintf(vm->out, "%lld\n", (long long)v.as.i); break;
    case MV_FLT: fprintf(vm->out, "%.9f\n", v.as.f); break;
    case MV_OBJ: {
        int32_t c = MV_HDR_CLASS(vm->heap[v.as.u].as.u);
        fprintf(vm->out, "<%s>\n", c < 0 ? "array" : vm->prog->classes[c].name);
        break;
    }
    case MV_FN: fprintf(vm->out, "<fn %s>\n", vm->prog->funcs[v.as.u].name); break;
    default: fprintf(vm->out, "nil\n"); break;
    }
}

static int mv__fail(mv_vm *vm, uint32_t pc, const char *what, const char *a,
                    const char *b) {
    const mv_func *f = mv_func_at(vm->prog, pc);
    snprintf(vm->err, sizeof vm->err,
             "run-time error in %s at bytecode %u (%s): %s%s%s%s",
             f ? f->name : "?", (unsigned)pc, mv_op_name(vm->prog->code[pc].op),
             what, a ? a : "", b ? " and " : "", b ? b : "");
    return -1;
}

static int mv__alloc(mv_vm *vm, uint32_t n, int32_t cls, mv_val fill,
                     uint32_t *cell) {
    uint32_t i;
    if (n >= vm->heap_cap - vm->heap_top) return -1;
    *cell = vm->heap_top;
    vm->heap[*cell].as.u = MV_HDR(cls, n);
    vm->heap[*cell].tag = MV_INT;
    for (i = 1; i <= n; i++) vm->heap[*cell + i] = fill;
    vm->heap_top += n + 1;
    return 0;
}

#define MV__NUM(v) ((v).tag == MV_INT || (v).tag == MV_FLT)
#define MV__F(v) ((v).tag == MV_FLT ? (v).as.f : (double)(v).as.i)

/* The loop is instantiated three times (mode is a constant in each):
 *   MV__OFF      no profiler: count bytecodes, nothing else
 *   MV__EVENTS   every load, store, branch, call and return goes to
 *                mvp_event (any model but ProfileMe alone, or --exact)
 *   MV__SAMPLE   ProfileMe alone: its countdown is kept by the loop and
 *                looked at only at events, the branch history is kept,
 *                and only the selected bytecode's record goes out
 *                (mvp_pm_run), which also advances the virtual clock by an
 *                estimate (see prof.c)
 *   MV__LAYER    hwprof/vm.h: every bytecode is the layer's clock (one
 *                decrement of `left`, its countdown kept in a register),
 *                every event an annotation (one flag test); the layer
 *                samples in bursts and decides (layer.c)
 * SAMPLE keeps ProfileMe's countdown in `left` and moves it where OFF
 * counts: one subtract per bytecode, in place of OFF's `steps++`. It is
 * looked at only at events (one test and branch): a run of straight-line
 * code in which it reached zero ends at this event (every control
 * transfer is one), so the selected bytecode is -left places before it.
 * An earlier version kept the countdown as the bytecode index it selects
 * and moved it by each jump's distance: GCC 12 kept that in memory, so a
 * control transfer cost a load, an add and a store and an event a load
 * more (fib 33.3 instructions per bytecode against 30.9 now). */
enum { MV__OFF, MV__EVENTS, MV__SAMPLE, MV__LAYER };

/* A conditional branch's direction, for ProfileMe's history register
 * (4.1.3, 5.3); mvp_event does it in MV__EVENTS mode. SAMPLE keeps the
 * register in a local (`hist`) and hands it over only at a selection, the
 * one place it is read: one shift per branch instead of a load and a
 * store. After EVENT: a selected branch's history holds the branches
 * before it. */
#define HISTORY(taken)                                               \
    do {                                                             \
        if (mode == MV__SAMPLE) hist = (hist << 1) | (taken);        \
    } while (0)

/* A bytecode the models care about (load, store, branch, call, return)
 * has run: its record (class, effective address or target, loaded value
 * or receiver type, HWP_EV_* bits) goes to the profiler. Bytecodes of
 * class OTHER never come here; mvp_event counts them (and their cycles)
 * from the PCs, so the profiled loop pays nothing for them. In SAMPLE
 * mode the run ending here moves ProfileMe's countdown, and the record is
 * built only for a selection. Must follow the update of `next`. */
#define EVENT(CLS, ADDR, VALUE, EVENTS)                              \
    do {                                                             \
        if (mode == MV__EVENTS) {                                    \
            rec.pc = MV_PC(pc);                                      \
            rec.next_pc = MV_PC(next);                               \
            MV__RECORD(CLS, ADDR, VALUE, EVENTS);                    \
            mvp_event(prof, &rec);                                   \
        } else if (mode == MV__SAMPLE) {                             \
            if (HWP_UNLIKELY(left <= 0)) {                           \
                MV__RECORD(CLS, ADDR, VALUE, EVENTS);                \
                left = (int64_t)mvp_pm_run(prof, &rec, pc, next,     \
                                           hist, (uint32_t)-left);   \
            }                                                        \
        } else if (mode == MV__LAYER) {                              \
            if (HWP_UNLIKELY(hwp_vm_watching(left)))                 \
                MV__ANNOTATE(CLS, VALUE, EVENTS);                    \
        }                                                            \
    } while (0)
/* The layer's annotation for the event's class (a constant at each use):
 * a load's site is its bytecode and its type the tag of the value it left
 * on top of the stack (every load does); a call names its function (the new
 * frame's) and a method call's receiver type is an operand of its site;
 * stores carry nothing the layer wants. */
#define MV__ANNOTATE(CLS, VALUE, EVENTS)                             \
    do {                                                             \
        if ((CLS) == HWP_CLS_LOAD) {                                 \
            hwp_vm_load(L, pc, (VALUE), st[sp - 1].tag);             \
        } else if ((CLS) == HWP_CLS_BR_COND) {                       \
            hwp_vm_branch(L, MV_PC(pc), ((EVENTS) & HWP_EV_TAKEN) != 0); \
        } else if ((CLS) == HWP_CLS_JUMP) {                          \
            hwp_vm_jump(L, MV_PC(pc));                               \
        } else if ((CLS) == HWP_CLS_CALL) {                          \
            hwp_vm_call(L, MV_PC(pc), fr[depth - 1].fn);             \
            if (VALUE) hwp_vm_load(L, pc, (VALUE), (VALUE));         \
        } else if ((CLS) == HWP_CLS_RET) {                           \
            hwp_vm_ret(L, MV_PC(pc));                                \
        }                                                            \
    } while (0)
/* The PCs are left to mvp_pm_run in SAMPLE mode: computed here, GCC 12
 * kept 8 * pc in a register of its own for them, an instruction more on
 * every bytecode. */
#define MV__RECORD(CLS, ADDR, VALUE, EVENTS)                         \
    do {                                                             \
        rec.cls = (CLS);                                             \
        rec.addr = (ADDR);                                           \
        rec.value = (VALUE);                                         \
        rec.events = (EVENTS);                                       \
    } while (0)

MV__ALWAYS_INLINE int mv__loop(mv_vm *vm, struct mvp *prof, hwp_vm *L,
                               const int mode) {
    const mv_prog *P = vm->prog;
    const mv_ins *code = P->code;
    mv_val *st = vm->stack, *heap = vm->heap, *glob = vm->globals;
    mv_frame *fr = vm->frames;
    uint32_t sp, bp, pc, depth = 0, next;
    uint64_t steps = 0; /* MV__OFF: bytecodes run                       */
    int64_t left = 0;   /* MV__SAMPLE: ProfileMe's countdown (above)    */
    uint64_t hist = 0;  /* MV__SAMPLE: ProfileMe's branch history       */
    const mv_func *mf = &P->funcs[P->main_fn];
    hwp_insn rec;
    memset(&rec, 0, sizeof rec);

    bp = 0;
    sp = mf->nlocals;
    for (next = 0; next < sp; next++) memset(&st[next], 0, sizeof st[next]);
    fr[0].ret_pc = UINT32_MAX;
    fr[0].bp = 0;
    fr[0].fn = (uint32_t)P->main_fn;
    depth = 1;
    pc = mf->entry;
    if (mode == MV__SAMPLE) { /* the countdown-th bytecode from here */
        left = (int64_t)hwp_pm_countdown(&prof->pm);
        hist = hwp_pm_history(&prof->pm);
    }
    if (mode == MV__LAYER) left = hwp_vm_left(L);

    for (;;) {
        const mv_ins *in = &code[pc];
        mv_val a, b;
        next = pc + 1;
        if (mode == MV__OFF) steps++; /* else the profiler counts them */
        if (mode == MV__SAMPLE) left--;
        if (mode == MV__LAYER && HWP_UNLIKELY(--left <= 0))
            left = hwp_vm_expire(L, MV_PC(pc), left);
        switch ((mv_opcode)in->op) {
        case MV_OP_nop: break;
        case MV_OP_push:
            st[sp].tag = MV_INT;
            st[sp++].as.i = in->a;
            break;
        case MV_OP_pushf:
            st[sp].tag = MV_FLT;
            st[sp++].as.f = P->consts[in->a];
            break;
        case MV_OP_pushnil:
            st[sp].tag = MV_NIL;
            st[sp++].as.u = 0;
            break;
        case MV_OP_pushfn:
            st[sp].tag = MV_FN;
            st[sp++].as.u = (uint64_t)in->a;
            break;
        case MV_OP_pop: sp--; break;
        case MV_OP_dup: st[sp] = st[sp - 1]; sp++; break;
        case MV_OP_swap: a = st[sp - 1]; st[sp - 1] = st[sp - 2]; st[sp - 2] = a; break;
        case MV_OP_over: st[sp] = st[sp - 2]; sp++; break;
        case MV_OP_lload: st[sp++] = st[bp + (uint32_t)in->a]; break;
        case MV_OP_lstore: st[bp + (uint32_t)in->a] = st[--sp]; break;
        case MV_OP_gload:
            st[sp] = glob[in->a];
            sp++;
            EVENT(HWP_CLS_LOAD, MV_GLOBAL_BASE + 16u * (uint64_t)in->a,
                  mv__bits(st[sp - 1]), 0u);
            break;
        case MV_OP_gstore:
            glob[in->a] = st[--sp];
            EVENT(HWP_CLS_STORE, MV_GLOBAL_BASE + 16u * (uint64_t)in->a, 0u, 0u);
            break;

#define MV__ARITH(OP, IEXPR, FEXPR)                                        \
    case MV_OP_##OP:                                                       \
        b = st[--sp];                                                      \
        a = st[sp - 1];                                                    \
        if (a.tag == MV_INT && b.tag == MV_INT) {                          \
            st[sp - 1].as.i = IEXPR;                                       \
        } else if (MV__NUM(a) && MV__NUM(b)) {                             \
            st[sp - 1].tag = MV_FLT;                                       \
            st[sp - 1].as.f = FEXPR;                                       \
        } else {                                                           \
            return mv__fail(vm, pc, "cannot " #OP " ",                     \
                            mv__tag_names[a.tag], mv__tag_names[b.tag]);   \
        }                                                                  \
        break;
            MV__ARITH(add, (int64_t)((uint64_t)a.as.i + (uint64_t)b.as.i),
                      MV__F(a) + MV__F(b))
            MV__ARITH(sub, (int64_t)((uint64_t)a.as.i - (uint64_t)b.as.i),
                      MV__F(a) - MV__F(b))
            MV__ARITH(mul, (int64_t)((uint64_t)a.as.i * (uint64_t)b.as.i),
                      MV__F(a) * MV__F(b))
#undef MV__ARITH
        case MV_OP_div:
        case MV_OP_mod:
            b = st[--sp];
            a = st[sp - 1];
            if (a.tag == MV_INT && b.tag == MV_INT) {
                if (b.as.i == 0) return mv__fail(vm, pc, "division by zero", 0, 0);
                if (b.as.i == -1) /* INT64_MIN / -1 overflows in C */
                    st[sp - 1].as.i = in->op == MV_OP_div
                                          ? (int64_t)(0 - (uint64_t)a.as.i) : 0;
                else
                    st[sp - 1].as.i = in->op == MV_OP_div ? a.as.i / b.as.i
                                                          : a.as.i % b.as.i;
            } else if (MV__NUM(a) && MV__NUM(b) && in->op == MV_OP_div) {
                st[sp - 1].tag = MV_FLT;
                st[sp - 1].as.f = MV__F(a) / MV__F(b);
            } else {
                return mv__fail(vm, pc, "bad operand types ", mv__tag_names[a.tag],
                                mv__tag_names[b.tag]);
            }
            break;

#define MV__INTOP(OP, EXPR)                                                \
    case MV_OP_##OP:                                                       \
        b = st[--sp];                                                      \
        a = st[sp - 1];                                                    \
        if (a.tag != MV_INT || b.tag != MV_INT)                            \
            return mv__fail(vm, pc, #OP " needs two ints", 0, 0);          \
        st[sp - 1].as.i = EXPR;                                            \
        break;
            MV__INTOP(band, a.as.i & b.as.i)
            MV__INTOP(bor, a.as.i | b.as.i)
            MV__INTOP(bxor, a.as.i ^ b.as.i)
            MV__INTOP(shl, (int64_t)((uint64_t)a.as.i << (b.as.i & 63)))
            MV__INTOP(shr, (int64_t)((uint64_t)a.as.i >> (b.as.i & 63)))
#undef MV__INTOP

#define MV__CMP(OP, C)                                                     \
    case MV_OP_##OP:                                                       \
        b = st[--sp];                                                      \
        a = st[sp - 1];                                                    \
        if (a.tag == MV_INT && b.tag == MV_INT)                            \
            st[sp - 1].as.i = a.as.i C b.as.i;                             \
        else if (MV__NUM(a) && MV__NUM(b))                                 \
            st[sp - 1].as.i = MV__F(a) C MV__F(b);                         \
        else                                                               \
            return mv__fail(vm, pc, "cannot compare ", mv__tag_names[a.tag], \
                            mv__tag_names[b.tag]);                         \
        st[sp - 1].tag = MV_INT;                                           \
        break;
            MV__CMP(lt, <)
            MV__CMP(le, <=)
            MV__CMP(gt, >)
            MV__CMP(ge, >=)
#undef MV__CMP
        case MV_OP_eq:
        case MV_OP_ne: {
            int e;
            b = st[--sp];
            a = st[sp - 1];
            if (MV__NUM(a) && MV__NUM(b))
                e = a.tag == MV_INT && b.tag == MV_INT ? a.as.i == b.as.i
                                                       : MV__F(a) == MV__F(b);
            else
                e = a.tag == b.tag && a.as.u == b.as.u;
            st[sp - 1].tag = MV_INT;
            st[sp - 1].as.i = in->op == MV_OP_eq ? e : !e;
            break;
        }
        case MV_OP_neg:
            a = st[sp - 1];
            if (a.tag == MV_INT) st[sp - 1].as.i = (int64_t)(0 - (uint64_t)a.as.i);
            else if (a.tag == MV_FLT) st[sp - 1].as.f = -a.as.f;
            else return mv__fail(vm, pc, "cannot negate ", mv__tag_names[a.tag], 0);
            break;
        case MV_OP_not:
            a = st[sp - 1];
            st[sp - 1].tag = MV_INT;
            st[sp - 1].as.i = a.tag == MV_NIL || (a.tag == MV_INT && !a.as.i);
            break;
        case MV_OP_i2f:
            a = st[sp - 1];
            if (a.tag != MV_INT) return mv__fail(vm, pc, "i2f of ", mv__tag_names[a.tag], 0);
            st[sp - 1].tag = MV_FLT;
            st[sp - 1].as.f = (double)a.as.i;
            break;
        case MV_OP_f2i:
            a = st[sp - 1];
            if (a.tag != MV_FLT)
                return mv__fail(vm, pc, "f2i of ", mv__tag_names[a.tag], 0);
            if (!(a.as.f > -9.2e18 && a.as.f < 9.2e18))
                return mv__fail(vm, pc, "f2i of a float out of range", 0, 0);
            st[sp - 1].tag = MV_INT;
            st[sp - 1].as.i = (int64_t)a.as.f;
            break;
        case MV_OP_sqrt:
            a = st[sp - 1];
            if (!MV__NUM(a)) return mv__fail(vm, pc, "sqrt of ", mv__tag_names[a.tag], 0);
            st[sp - 1].tag = MV_FLT;
            st[sp - 1].as.f = sqrt(MV__F(a));
            break;
        case MV_OP_typeof:
            st[sp - 1].as.u = mv__type(vm, st[sp - 1]);
            st[sp - 1].tag = MV_INT;
            break;

        case MV_OP_jmp:
            next = (uint32_t)in->a;
            EVENT(HWP_CLS_JUMP, MV_PC(next), 0u, HWP_EV_TAKEN);
            break;
        case MV_OP_jz:
        case MV_OP_jnz: {
            int truth;
            a = st[--sp];
            truth = !(a.tag == MV_NIL || (a.tag == MV_INT && !a.as.i) ||
                      (a.tag == MV_FLT && a.as.f == 0.0));
            /* Two arms, each with its own EVENT: with one EVENT after an
             * `if`, GCC 12 made `next` a conditional move, so the next
             * dispatch waited for the operand instead of being predicted
             * (sieve with ProfileMe alone: 0.128 -> 0.094 s user time). */
            if (truth == (in->op == MV_OP_jnz)) {
                next = (uint32_t)in->a;
                EVENT(HWP_CLS_BR_COND, MV_PC(next), 0u, HWP_EV_TAKEN);
                HISTORY(1);
            } else {
                EVENT(HWP_CLS_BR_COND, MV_PC(in->a), 0u, 0u);
                HISTORY(0);
            }
            break;
        }

        case MV_OP_callm:
        case MV_OP_callc:
        case MV_OP_call: {
            uint32_t f, nargs = in->b;
            const mv_func *fn;
            if (in->op == MV_OP_call) {
                f = (uint32_t)in->a;
            } else if (in->op == MV_OP_callc) {
                a = st[--sp];
                if (a.tag != MV_FN)
                    return mv__fail(vm, pc, "callc of ", mv__tag_names[a.tag], 0);
                f = (uint32_t)a.as.u;
                if (P->funcs[f].nargs != nargs)
                    return mv__fail(vm, pc, "wrong argument count for ",
                                    P->funcs[f].name, 0);
            } else {
                int32_t cls, m;
                a = st[sp - nargs]; /* the receiver */
                if (a.tag != MV_OBJ)
                    return mv__fail(vm, pc, "method call on ",
                                    mv__tag_names[a.tag], 0);
                cls = MV_HDR_CLASS(heap[a.as.u].as.u);
                m = cls < 0 ? -1 : P->classes[cls].methods[in->a];
                if (m < 0)
                    return mv__fail(vm, pc, "receiver does not understand ",
                                    P->sels[in->a], 0);
                f = (uint32_t)m;
                if (P->funcs[f].nargs != nargs)
                    return mv__fail(vm, pc, "wrong argument count for ",
                                    P->funcs[f].name, 0);
            }
            fn = &P->funcs[f];
            if (depth == vm->frame_cap)
                return mv__fail(vm, pc, "call stack overflow", 0, 0);
            if (sp + fn->nlocals + fn->maxstack + 1 > vm->stack_cap)
                return mv__fail(vm, pc, "value stack overflow", 0, 0);
            fr[depth].ret_pc = next;
            fr[depth].bp = bp;
            fr[depth].fn = f;
            depth++;
            bp = sp - nargs;
            for (; sp < bp + fn->nlocals; sp++) memset(&st[sp], 0, sizeof st[sp]);
            next = fn->entry;
            /* callm's value is the receiver's type, 8 + its class; the
             * receiver is the new frame's first argument */
            EVENT(HWP_CLS_CALL, MV_PC(next),
                  in->op == MV_OP_callm ? mv__type(vm, st[bp]) : 0u,
                  in->op == MV_OP_call ? HWP_EV_TAKEN : HWP_EV_TAKEN | HWP_EV_INDIRECT);
            break;
        }
        case MV_OP_ret:
            a = st[sp - 1];
            depth--;
            sp = bp;
            st[sp++] = a;
            if (depth == 0) { /* main returns: the program ends here */
                next = pc;
                EVENT(HWP_CLS_RET, 0u, 0u, 0u);
                goto done;
            }
            next = fr[depth].ret_pc;
            bp = fr[depth].bp;
            EVENT(HWP_CLS_RET, MV_PC(next), 0u, HWP_EV_TAKEN);
            break;

        case MV_OP_new: {
            uint32_t cell;
            mv_val nil;
            memset(&nil, 0, sizeof nil);
            if (mv__alloc(vm, P->classes[in->a].nfields, in->a, nil, &cell))
                return mv__fail(vm, pc, "heap exhausted", 0, 0);
            st[sp].tag = MV_OBJ;
            st[sp++].as.u = cell;
            EVENT(HWP_CLS_STORE, MV_HEAP_BASE + 16u * (uint64_t)cell, 0u, 0u);
            break;
        }
        case MV_OP_newarr: {
            uint32_t cell;
            mv_val zero;
            a = st[sp - 1];
            if (a.tag != MV_INT || a.as.i < 0 || a.as.i > (int64_t)vm->heap_cap)
                return mv__fail(vm, pc, "bad array length", 0, 0);
            memset(&zero, 0, sizeof zero);
            zero.tag = MV_INT;
            if (mv__alloc(vm, (uint32_t)a.as.i, -1, zero, &cell))
                return mv__fail(vm, pc, "heap exhausted", 0, 0);
            st[sp - 1].tag = MV_OBJ;
            st[sp - 1].as.u = cell;
            EVENT(HWP_CLS_STORE, MV_HEAP_BASE + 16u * (uint64_t)cell, 0u, 0u);
            break;
        }
        case MV_OP_getf:
        case MV_OP_setf:
        case MV_OP_aload:
        case MV_OP_astore: {
            /* Operands: getf obj | setf obj v | aload arr i | astore arr i v */
            int store = in->op == MV_OP_setf || in->op == MV_OP_astore;
            int field = in->op == MV_OP_getf || in->op == MV_OP_setf;
            uint32_t base = sp - 1 - (uint32_t)store - (uint32_t)!field, cell;
            uint64_t ix;
            a = st[base];
            if (a.tag != MV_OBJ)
                return mv__fail(vm, pc, "field or element access on ",
                                mv__tag_names[a.tag], 0);
            if (field) {
                ix = (uint64_t)in->a;
            } else {
                if (st[base + 1].tag != MV_INT)
                    return mv__fail(vm, pc, "array index is ",
                                    mv__tag_names[st[base + 1].tag], 0);
                ix = st[base + 1].as.u;
            }
            if (ix >= MV_HDR_LEN(heap[a.as.u].as.u))
                return mv__fail(vm, pc, field ? "no such field" : "index out of bounds",
                                0, 0);
            cell = (uint32_t)a.as.u + 1u + (uint32_t)ix;
            if (store) {
                heap[cell] = st[sp - 1];
                sp = base;
                EVENT(HWP_CLS_STORE, MV_HEAP_BASE + 16u * (uint64_t)cell, 0u, 0u);
            } else {
                st[base] = heap[cell];
                sp = base + 1;
                EVENT(HWP_CLS_LOAD, MV_HEAP_BASE + 16u * (uint64_t)cell,
                      mv__bits(heap[cell]), 0u);
            }
            break;
        }
        case MV_OP_alen:
            a = st[sp - 1];
            if (a.tag != MV_OBJ) return mv__fail(vm, pc, "alen of ", mv__tag_names[a.tag], 0);
            st[sp - 1].tag = MV_INT;
            st[sp - 1].as.i = (int64_t)MV_HDR_LEN(heap[a.as.u].as.u);
            EVENT(HWP_CLS_LOAD, MV_HEAP_BASE + 16u * a.as.u,
                  (uint64_t)st[sp - 1].as.i, 0u);
            break;
        case MV_OP_print: mv__print(vm, st[--sp]); break;
        case MV_OP_halt:
            next = pc;
            /* counts the bytecodes since the last event */
            EVENT(HWP_CLS_OTHER, 0u, 0u, 0u);
            goto done;
        default: return mv__fail(vm, pc, "bad opcode", 0, 0);
        }
        pc = next;
    }
done:
    if (mode == MV__SAMPLE) mvp_pm_end(prof, hist, (uint64_t)left);
    if (mode == MV__LAYER) {
        hwp_vm_set_left(L, left);
        vm->steps = hwp_vm_clock(L); /* 0 when the layer is off */
    } else if (mode == MV__OFF) {
        vm->steps = steps;
    } else {
        vm->steps = prof->steps;
        mvp_sync(prof);
        vm->cycles = prof->vclock;
    }
    return 0;
}

int mv_run(mv_vm *vm, struct mvp *prof) {
    vm->err[0] = '\0';
    if (!prof) return mv__loop(vm, NULL, NULL, MV__OFF);
    if (prof->sampled) return mv__loop(vm, prof, NULL, MV__SAMPLE);
    return mv__loop(vm, prof, NULL, MV__EVENTS);
}

int mv_run_layer(mv_vm *vm, hwp_vm *L) {
    vm->err[0] = '\0';
    return mv__loop(vm, NULL, L, MV__LAYER);
}
