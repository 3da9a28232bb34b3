/* minivm: a small dynamically typed bytecode VM, the language-VM host of
 * hwprof.
 *
 *   mv_asm.c   text assembler (.mvs -> mv_prog), errors as file:line:col
 *   mv_vm.c    the interpreter loop; feeds hwprof through prof.h
 *   prof.h/.c  the embedding: every hwprof model the VM drives, plus the
 *              exact profiles that --exact compares against
 *   tier.c     the tiering policy: traces, load specialisation, inlining,
 *              re-profiling points, from either profile
 *   main.c     the command line
 *
 * Values are tagged (nil, int, float, object, function), so the receiver
 * type of a method call and the type of a loaded value are run-time facts
 * that a profile can observe. Objects and arrays live in one bump heap of
 * value cells; code and heap have fixed fake addresses (MV_CODE_BASE,
 * MV_HEAP_BASE) so hwprof sees stable 64-bit PCs and data addresses.
 */
#ifndef MINIVM_MV_H
#define MINIVM_MV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* Where bytecodes and heap cells "are" for the profilers: each bytecode
 * is 8 bytes at MV_CODE_BASE + 8 * index, each value cell 16 bytes at
 * MV_HEAP_BASE + 16 * cell, each global 16 bytes at MV_GLOBAL_BASE. */
#define MV_CODE_BASE 0x10000ull
#define MV_HEAP_BASE 0x40000000ull
#define MV_GLOBAL_BASE 0x20000000ull
#define MV_PC(i) (MV_CODE_BASE + 8u * (uint64_t)(i))
#define MV_PC_INDEX(pc) ((uint32_t)(((pc) - MV_CODE_BASE) >> 3))

enum { MV_NIL, MV_INT, MV_FLT, MV_OBJ, MV_FN, MV_NTAGS };

typedef struct mv_val {
    union {
        int64_t i;
        double f;
        uint64_t u; /* raw bits; object = heap cell index, fn = index */
    } as;
    uint32_t tag;
    uint32_t pad_; /* keeps the cell 16 bytes and fully initialised */
} mv_val;

/* Operand kinds the assembler accepts. */
enum {
    MV_A_NONE,  /* no operand                               */
    MV_A_INT,   /* signed integer immediate                 */
    MV_A_FLT,   /* float literal (into the constant pool)   */
    MV_A_LOCAL, /* local slot index                          */
    MV_A_GLOBAL,/* global name                               */
    MV_A_LABEL, /* label in the current function             */
    MV_A_FUNC,  /* function name                             */
    MV_A_FUNCN, /* function name, argument count             */
    MV_A_SELN,  /* selector name, argument count             */
    MV_A_CLASS, /* class name                                */
    MV_A_FIELD  /* field index                               */
};

/* X(name, operand kind, cycles, hwprof class)
 * `cycles` is the VM's own per-opcode cost model: what a simple in-order
 * core would take to execute the bytecode's work (loads 3, multiplies 3,
 * divides 20, calls 5). It drives the virtual cycle counter and supplies
 * ProfileMe's latency fields. */
#define MV_OPS(X)                                        \
    X(nop, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(push, MV_A_INT, 1, HWP_CLS_OTHER)                  \
    X(pushf, MV_A_FLT, 1, HWP_CLS_OTHER)                 \
    X(pushnil, MV_A_NONE, 1, HWP_CLS_OTHER)              \
    X(pushfn, MV_A_FUNC, 1, HWP_CLS_OTHER)               \
    X(pop, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(dup, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(swap, MV_A_NONE, 1, HWP_CLS_OTHER)                 \
    X(over, MV_A_NONE, 1, HWP_CLS_OTHER)                 \
    X(lload, MV_A_LOCAL, 1, HWP_CLS_OTHER)               \
    X(lstore, MV_A_LOCAL, 1, HWP_CLS_OTHER)              \
    X(gload, MV_A_GLOBAL, 3, HWP_CLS_LOAD)               \
    X(gstore, MV_A_GLOBAL, 1, HWP_CLS_STORE)             \
    X(add, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(sub, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(mul, MV_A_NONE, 3, HWP_CLS_OTHER)                  \
    X(div, MV_A_NONE, 20, HWP_CLS_OTHER)                 \
    X(mod, MV_A_NONE, 20, HWP_CLS_OTHER)                 \
    X(neg, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(band, MV_A_NONE, 1, HWP_CLS_OTHER)                 \
    X(bor, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(bxor, MV_A_NONE, 1, HWP_CLS_OTHER)                 \
    X(shl, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(shr, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(i2f, MV_A_NONE, 2, HWP_CLS_OTHER)                  \
    X(f2i, MV_A_NONE, 2, HWP_CLS_OTHER)                  \
    X(sqrt, MV_A_NONE, 15, HWP_CLS_OTHER)                \
    X(lt, MV_A_NONE, 1, HWP_CLS_OTHER)                   \
    X(le, MV_A_NONE, 1, HWP_CLS_OTHER)                   \
    X(gt, MV_A_NONE, 1, HWP_CLS_OTHER)                   \
    X(ge, MV_A_NONE, 1, HWP_CLS_OTHER)                   \
    X(eq, MV_A_NONE, 1, HWP_CLS_OTHER)                   \
    X(ne, MV_A_NONE, 1, HWP_CLS_OTHER)                   \
    X(not, MV_A_NONE, 1, HWP_CLS_OTHER)                  \
    X(jmp, MV_A_LABEL, 1, HWP_CLS_JUMP)                  \
    X(jz, MV_A_LABEL, 1, HWP_CLS_BR_COND)                \
    X(jnz, MV_A_LABEL, 1, HWP_CLS_BR_COND)               \
    X(call, MV_A_FUNCN, 5, HWP_CLS_CALL)                 \
    X(callm, MV_A_SELN, 8, HWP_CLS_CALL)                 \
    X(callc, MV_A_INT, 6, HWP_CLS_CALL)                  \
    X(ret, MV_A_NONE, 5, HWP_CLS_RET)                    \
    X(new, MV_A_CLASS, 10, HWP_CLS_STORE)                \
    X(getf, MV_A_FIELD, 3, HWP_CLS_LOAD)                 \
    X(setf, MV_A_FIELD, 1, HWP_CLS_STORE)                \
    X(newarr, MV_A_NONE, 10, HWP_CLS_STORE)              \
    X(aload, MV_A_NONE, 3, HWP_CLS_LOAD)                 \
    X(astore, MV_A_NONE, 1, HWP_CLS_STORE)               \
    X(alen, MV_A_NONE, 3, HWP_CLS_LOAD)                  \
    X(typeof, MV_A_NONE, 1, HWP_CLS_OTHER)               \
    X(print, MV_A_NONE, 1, HWP_CLS_OTHER)                \
    X(halt, MV_A_NONE, 1, HWP_CLS_OTHER)

typedef enum mv_opcode {
#define MV__OP_ENUM(name, kind, cyc, cls) MV_OP_##name,
    MV_OPS(MV__OP_ENUM)
#undef MV__OP_ENUM
    MV_OP_COUNT
} mv_opcode;

typedef struct mv_ins {
    uint16_t op;
    uint16_t b; /* argument count of calls */
    int32_t a;  /* immediate, slot, label target, function, class, ... */
} mv_ins;

typedef struct mv_func {
    char name[32];
    uint32_t entry;   /* code index of the first bytecode */
    uint32_t nargs;
    uint32_t nlocals; /* including the arguments */
    uint32_t maxstack; /* operand-stack depth bound, from the verifier */
} mv_func;

typedef struct mv_class {
    char name[32];
    uint32_t nfields;
    int32_t *methods; /* [nsel]: function index, -1 when not understood */
} mv_class;

typedef struct mv_global {
    char name[32];
    mv_val init; /* .global / .param default, overridable by -D */
    int is_param;
} mv_global;

typedef struct mv_prog {
    mv_ins *code;
    uint32_t ncode, capcode;
    double *consts;
    uint32_t nconsts, capconsts;
    mv_func *funcs;
    uint32_t nfuncs, capfuncs;
    mv_class *classes;
    uint32_t nclasses, capclasses;
    char (*sels)[32];
    uint32_t nsels, capsels;
    mv_global *globals;
    uint32_t nglobals, capglobals;
    int32_t main_fn;
} mv_prog;

/* Assemble `src` (NUL-terminated) named `file`. On failure returns -1 and
 * writes "file:line:col: error: message" into err. */
int mv_assemble(mv_prog *p, const char *file, const char *src, char *err,
                size_t errcap);
void mv_prog_free(mv_prog *p);
/* Set a .param by name from "name=value" (int or float); -1 if unknown. */
int mv_prog_define(mv_prog *p, const char *assignment, char *err,
                   size_t errcap);
const char *mv_op_name(unsigned op);
/* The HWP_CLS_* class the interpreter reports for an opcode. */
unsigned mv_op_cls(unsigned op);
/* Its cycles in the VM's cost model. */
unsigned mv_op_cycles(unsigned op);
/* The function containing code index i (for reports), or NULL. */
const mv_func *mv_func_at(const mv_prog *p, uint32_t i);

/* ---- the interpreter ---------------------------------------------------- */

struct mvp; /* prof.h: the hwprof embedding */

typedef struct mv_frame {
    uint32_t ret_pc, bp, fn;
} mv_frame;

typedef struct mv_vm {
    const mv_prog *prog;
    mv_val *stack;
    uint32_t stack_cap;
    mv_frame *frames;
    uint32_t frame_cap;
    mv_val *heap; /* cell 0 of an object is its header: class, length */
    uint32_t heap_cap, heap_top;
    mv_val *globals;
    FILE *out;
    uint64_t steps;  /* bytecodes executed                      */
    uint64_t cycles; /* virtual cycles: cost model + profiling    */
    char err[160];   /* run-time error, "" when none              */
} mv_vm;

/* Heap object header, stored in the cell's payload: class or -1 for an
 * array, and the number of cells that follow. */
#define MV_HDR(cls, n) ((uint64_t)(uint32_t)(cls) << 32 | (uint32_t)(n))
#define MV_HDR_CLASS(u) ((int32_t)(uint32_t)((u) >> 32))
#define MV_HDR_LEN(u) ((uint32_t)(u))

int mv_vm_init(mv_vm *vm, const mv_prog *p, uint32_t heap_cells, FILE *out);
void mv_vm_free(mv_vm *vm);
/* Run main to completion. 0 on success; -1 with vm->err set on a run-time
 * error (type error, heap exhausted, stack overflow, ...). prof may be
 * NULL: the loop is then compiled without any profiling code. */
int mv_run(mv_vm *vm, struct mvp *prof);
/* The same program through hwprof/vm.h's layer (layer.h); a zeroed
 * layer is compiled in and off. */
struct hwp_vm;
int mv_run_layer(mv_vm *vm, struct hwp_vm *L);

#endif
