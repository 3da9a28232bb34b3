/* SPDX-License-Identifier: MIT */
/* tests/fuzz/fuzz_minivm_asm.c: the minivm assembler (examples/minivm,
 * mv_assemble) on raw input. Any input is either refused with one
 * "FILE:LINE:COL: error: ..." message, or gives a program the
 * interpreter can run without checks of its own: main exists and takes
 * no arguments; every instruction has a known opcode; jumps stay inside
 * their function; local slots are below the function's locals, globals,
 * functions, classes, selectors and constants index their tables; a
 * call passes the callee's argument count and a method call at least
 * the receiver; class method tables name functions or nothing. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../../examples/minivm/mv.h"

#define CHECK(c)                                                              \
    do {                                                                      \
        if (!(c)) __builtin_trap();                                           \
    } while (0)

/* The end of function f's code: the next function's entry, or the end. */
static uint32_t fn_end(const mv_prog *p, uint32_t f) {
    uint32_t g, end = p->ncode;
    for (g = 0; g < p->nfuncs; g++)
        if (p->funcs[g].entry > p->funcs[f].entry && p->funcs[g].entry < end)
            end = p->funcs[g].entry;
    return end;
}

static void check_prog(const mv_prog *p) {
    uint32_t f, i, c, s;
    CHECK(p->main_fn >= 0 && (uint32_t)p->main_fn < p->nfuncs);
    CHECK(p->funcs[p->main_fn].nargs == 0);
    for (f = 0; f < p->nfuncs; f++) {
        const mv_func *fn = &p->funcs[f];
        uint32_t end = fn_end(p, f);
        CHECK(fn->entry < end && fn->nargs <= fn->nlocals);
        CHECK(memchr(fn->name, 0, sizeof fn->name) != NULL);
        for (i = fn->entry; i < end; i++) {
            const mv_ins *in = &p->code[i];
            CHECK(in->op < MV_OP_COUNT);
            switch (in->op) {
            case MV_OP_jmp: case MV_OP_jz: case MV_OP_jnz:
                CHECK(in->a >= 0 && (uint32_t)in->a >= fn->entry && (uint32_t)in->a < end);
                break;
            case MV_OP_lload: case MV_OP_lstore:
                CHECK(in->a >= 0 && (uint32_t)in->a < fn->nlocals);
                break;
            case MV_OP_gload: case MV_OP_gstore:
                CHECK(in->a >= 0 && (uint32_t)in->a < p->nglobals);
                break;
            case MV_OP_pushfn:
                CHECK(in->a >= 0 && (uint32_t)in->a < p->nfuncs);
                break;
            case MV_OP_call:
                CHECK(in->a >= 0 && (uint32_t)in->a < p->nfuncs);
                CHECK(in->b == p->funcs[in->a].nargs);
                break;
            case MV_OP_callm:
                CHECK(in->a >= 0 && (uint32_t)in->a < p->nsels && in->b >= 1);
                break;
            case MV_OP_new:
                CHECK(in->a >= 0 && (uint32_t)in->a < p->nclasses);
                break;
            case MV_OP_pushf:
                CHECK(in->a >= 0 && (uint32_t)in->a < p->nconsts);
                break;
            default:
                break;
            }
        }
    }
    for (c = 0; c < p->nclasses; c++)
        for (s = 0; s < p->nsels; s++)
            CHECK(p->classes[c].methods[s] >= -1 &&
                  p->classes[c].methods[s] < (int32_t)p->nfuncs);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    static const char prefix[] = "in.mvs:";
    char *src = (char *)malloc(size + 1), err[256];
    mv_prog p;
    if (!src) __builtin_trap();
    memcpy(src, data, size);
    src[size] = '\0';
    if (mv_assemble(&p, "in.mvs", src, err, sizeof err) != 0) {
        CHECK(!strncmp(err, prefix, sizeof prefix - 1) && strstr(err, ": error: "));
    } else {
        check_prog(&p);
        mv_prog_free(&p);
    }
    free(src);
    return 0;
}
