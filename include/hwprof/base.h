/* hwprof/base.h: types, status codes, PRNG, LFSR, hashes, saturating
 * counters, the shared event record and the report writer.
 *
 * Every other hwprof header includes this one. It is freestanding: it needs
 * only <stdint.h>, <stddef.h> and <stdbool.h>, so a Valgrind tool, a kernel
 * or firmware can embed it with no libc.
 *
 * USAGE (sokol/stb style)
 *   In every file that uses hwprof:       #include "hwprof/hwprof.h"
 *   In exactly one translation unit:      #define HWPROF_IMPL
 *                                         #include "hwprof/hwprof.h"
 *   Everything private to one file:       #define HWPROF_STATIC
 *                                         #define HWPROF_IMPL
 *                                         #include "hwprof/hwprof.h"
 *
 *   Hot paths are static inline and always visible; cold paths (init,
 *   reports, merges) are compiled where HWPROF_IMPL is defined.
 *
 * CONFIGURATION MACROS (define before including)
 *   HWPROF_IMPL      compile the cold-path implementations here
 *   HWPROF_STATIC    give every cold-path function internal linkage
 *   HWPROF_STDIO     add hwp_writer_stdio(FILE *) (pulls in <stdio.h>)
 *   HWP_ASSERT(c)    internal invariant check; default traps when
 *                    HWPROF_DEBUG is defined, else compiles to nothing.
 *                    Never used on user input: that gets a status.
 *
 * CONTENTS
 *   hwp_status, hwp_status_str()        status codes (X-macro list)
 *   hwp_head, hwp_why()                 per-instance status and reason
 *   hwp_sqrt, hwp_ln                    freestanding math for cold paths
 *   hwp_rng_*                           SplitMix64 PRNG, seeded, portable
 *   hwp_lfsr_*                          16/32-bit maximal-length LFSR
 *   hwp_mix64, hwp_flip64, hwp_xor_fold cheap hashes and the paper's parts
 *   hwp_bytehash_*                      stratified-sampling "randomize" hash
 *   hwp_sat_*                           saturating counters, 1..32 bits
 *   hwp_insn, HWP_CLS_*, HWP_EV_*       the shared event record
 *   hwp_writer, hwp_put_*               report output without libc
 */
#ifndef HWPROF_BASE_H
#define HWPROF_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HWP_VERSION_MAJOR 0
#define HWP_VERSION_MINOR 1
#define HWP_VERSION_PATCH 0

#ifdef __cplusplus
extern "C" {
#endif

/* ---- linkage ---------------------------------------------------------- */

#if defined(__GNUC__) || defined(__clang__)
#define HWP__UNUSED __attribute__((unused))
#define HWP_LIKELY(x) __builtin_expect(!!(x), 1)
#define HWP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define HWP__UNUSED
#define HWP_LIKELY(x) (x)
#define HWP_UNLIKELY(x) (x)
#endif

/* Hot paths: inlined into the host's loop. */
#define HWP_INLINE static inline HWP__UNUSED

/* Cold paths: one definition where HWPROF_IMPL is set. */
#ifdef HWPROF_STATIC
#define HWP_API static HWP__UNUSED
#else
#define HWP_API extern
#endif

#ifndef HWP_ASSERT
#if defined(HWPROF_DEBUG) && (defined(__GNUC__) || defined(__clang__))
#define HWP_ASSERT(c) ((c) ? (void)0 : __builtin_trap())
#else
#define HWP_ASSERT(c) ((void)0)
#endif
#endif

/* C99 has no static_assert; a negative array size stops the build. */
#define HWP_STATIC_ASSERT(name, cond) \
    typedef char hwp__static_assert_##name[(cond) ? 1 : -1]

/* ---- status ----------------------------------------------------------- */

/* X(name, text): one list makes the enum and hwp_status_str(). */
#define HWP__STATUS_LIST(X)                                              \
    X(OK, "ok")                                                          \
    X(EINVAL, "invalid argument")                                        \
    X(ENOSPC, "not enough storage")                                      \
    X(EFORMAT, "malformed input")                                        \
    X(ESTATE, "call not valid in this state")                            \
    X(EMISMATCH, "instances were built from different descs")

typedef enum hwp_status {
#define HWP__STATUS_ENUM(name, text) HWP_##name,
    HWP__STATUS_LIST(HWP__STATUS_ENUM)
#undef HWP__STATUS_ENUM
    HWP_STATUS_COUNT
} hwp_status;

HWP_INLINE const char *hwp_status_str(hwp_status s) {
    static const char *const text[] = {
#define HWP__STATUS_TEXT(name, text) text,
        HWP__STATUS_LIST(HWP__STATUS_TEXT)
#undef HWP__STATUS_TEXT
    };
    return (unsigned)s < (unsigned)HWP_STATUS_COUNT ? text[s] : "unknown status";
}

/* Every model instance begins with a hwp_head. `magic` identifies the
 * component so cold calls can reject an uninitialised or foreign handle;
 * `why` is a static string saying what the last failing call objected to
 * ("rap: eps must be in (0, 1)"), or "" after success. */
typedef struct hwp_head {
    uint32_t magic;
    uint32_t status; /* hwp_status of the last cold call */
    const char *why;
} hwp_head;

/* The reason behind the last status of any instance: hwp_why(&rap). */
#define hwp_why(x) ((x)->head.why)

/* Record a failure (or success, why = "") on an instance; returns s. */
HWP_INLINE hwp_status hwp__fail(hwp_head *h, hwp_status s, const char *why) {
    h->status = (uint32_t)s;
    h->why = why;
    return s;
}

/* Magic numbers, one per component: four ASCII letters. */
#define HWP__MAGIC(a, b, c, d)                                       \
    ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) |  \
     ((uint32_t)(d) << 24))

/* ---- memory helpers (no <string.h> in a freestanding core) ------------- */

HWP_INLINE void hwp__zero(void *p, size_t n) {
    unsigned char *b = (unsigned char *)p;
    while (n--) *b++ = 0;
}

HWP_INLINE void hwp__copy(void *dst, const void *src, size_t n) {
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    while (n--) *d++ = *s++;
}

/* Round a byte count up so the next carve-out of storage stays aligned. */
#define HWP__ALIGN 16u
HWP_INLINE size_t hwp__align(size_t n) {
    return (n + (HWP__ALIGN - 1)) & ~(size_t)(HWP__ALIGN - 1);
}

/* Carve `n` bytes off a storage cursor. Models lay out their tables in the
 * host's storage with this, after hwp_X_bytes() said how much it takes. */
HWP_INLINE void *hwp__carve(unsigned char **cursor, size_t n) {
    void *p = *cursor;
    *cursor += hwp__align(n);
    return p;
}

HWP_INLINE bool hwp__aligned(const void *p) {
    return ((uintptr_t)p & (HWP__ALIGN - 1)) == 0;
}

/* What every model's init checks once its desc is filled: the desc's own
 * reason (NULL when valid), then the host's storage: aligned, and at least
 * the `need` bytes that the model's *_bytes() reported. */
HWP_INLINE hwp_status hwp__admit(hwp_head *h, const char *why,
                                 const void *storage, size_t bytes,
                                 size_t need) {
    if (why) return hwp__fail(h, HWP_EINVAL, why);
    if (!storage || !hwp__aligned(storage))
        return hwp__fail(h, HWP_EINVAL,
                         "storage must be non-NULL and 16-byte aligned");
    if (bytes < need)
        return hwp__fail(h, HWP_ENOSPC,
                         "storage smaller than the model's *_bytes() size");
    return HWP_OK;
}

/* ---- bit helpers ------------------------------------------------------- */

HWP_INLINE bool hwp_is_pow2(uint64_t x) { return x && !(x & (x - 1)); }

/* floor(log2(x)) for x > 0; 0 for x == 0. */
HWP_INLINE unsigned hwp_log2(uint64_t x) {
#if defined(__GNUC__) || defined(__clang__)
    return x ? 63u - (unsigned)__builtin_clzll(x) : 0u;
#else
    unsigned r = 0;
    while (x >>= 1) r++;
    return r;
#endif
}

/* Set bits in x (SWAR; one instruction where the target has popcnt). */
HWP_INLINE unsigned hwp_popcount64(uint64_t v) {
#if defined(__POPCNT__) && (defined(__GNUC__) || defined(__clang__))
    return (unsigned)__builtin_popcountll(v);
#else
    v = v - ((v >> 1) & 0x5555555555555555ull);
    v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
    v = (v + (v >> 4)) & 0x0F0F0F0F0F0F0F0Full;
    return (unsigned)((v * 0x0101010101010101ull) >> 56);
#endif
}

/* All-ones mask of `bits` low bits, 0..64. */
HWP_INLINE uint64_t hwp_mask64(unsigned bits) {
    return bits >= 64 ? ~(uint64_t)0 : (((uint64_t)1 << bits) - 1);
}

/* ---- freestanding math (no libm) ---------------------------------------
 * Cold-path helpers for estimators and thresholds; accurate to a few ulp. */

/* sqrt(x) for x >= 0 (0 for x <= 0 or NaN): scale into [0.25, 1) by powers
 * of 4, then Newton's iteration, which doubles the correct digits. */
HWP_INLINE double hwp_sqrt(double x) {
    double scale = 1.0, g;
    int i;
    if (!(x > 0.0) || x > 1.7e308) return x > 1.7e308 ? x : 0.0;
    while (x >= 1.0) { x *= 0.25; scale *= 2.0; }
    while (x < 0.25) { x *= 4.0; scale *= 0.5; }
    g = 0.5 + 0.5 * x;
    for (i = 0; i < 6; i++) g = 0.5 * (g + x / g);
    return g * scale;
}

/* Natural log for x > 0 (a large negative number for x <= 0): x = m 2^e
 * with m in [1, 2), ln m = 2 atanh((m - 1) / (m + 1)) by its series. */
HWP_INLINE double hwp_ln(double x) {
    double t, t2, term, sum;
    int e = 0, k;
    if (!(x > 0.0)) return -1.0e308;
    while (x >= 2.0) { x *= 0.5; e++; }
    while (x < 1.0) { x *= 2.0; e--; }
    t = (x - 1.0) / (x + 1.0);
    t2 = t * t;
    term = t;
    sum = 0.0;
    for (k = 1; k < 60; k += 2) {
        sum += term / k;
        term *= t2;
    }
    return 2.0 * sum + e * 0.69314718055994530942;
}

/* ---- PRNG: SplitMix64 ---------------------------------------------------
 * Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
 * OOPSLA 2014. One 64-bit word of state, integer-only arithmetic, so the
 * same seed yields the same sequence on every platform and compiler. */

typedef struct hwp_rng {
    uint64_t s;
} hwp_rng;

HWP_INLINE void hwp_rng_seed(hwp_rng *r, uint64_t seed) { r->s = seed; }

HWP_INLINE uint64_t hwp_rng_next(hwp_rng *r) {
    uint64_t z = (r->s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

HWP_INLINE uint32_t hwp_rng_u32(hwp_rng *r) {
    return (uint32_t)(hwp_rng_next(r) >> 32);
}

/* Uniform on [0, n) for 0 < n <= 2^32, by Lemire's multiply-shift; the
 * bias is below n / 2^32, far under anything a profile can notice. */
HWP_INLINE uint32_t hwp_rng_below(hwp_rng *r, uint64_t n) {
    return (uint32_t)(((uint64_t)hwp_rng_u32(r) * n) >> 32);
}

/* Uniform double on [0, 1) with 53 random bits. */
HWP_INLINE double hwp_rng_unit(hwp_rng *r) {
    return (double)(hwp_rng_next(r) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---- LFSR --------------------------------------------------------------
 * Galois LFSRs with maximal-length taps (period 2^w - 1; state 0 is the
 * one excluded value). Taps from the standard tables of primitive
 * trinomials/pentanomials (e.g. Xilinx XAPP052):
 *   16 bits: x^16 + x^14 + x^13 + x^11 + 1   -> mask 0xB400
 *   32 bits: x^32 + x^22 + x^2 + x^1 + 1     -> mask 0x80200003
 * The co-processor paper uses one as its random source (section 3.3). */

typedef struct hwp_lfsr {
    uint32_t state;
    uint32_t taps;
} hwp_lfsr;

#define HWP_LFSR16_TAPS 0xB400u
#define HWP_LFSR32_TAPS 0x80200003u

/* width is 16 or 32; a zero seed (the LFSR's dead state) becomes 1. */
HWP_INLINE void hwp_lfsr_init(hwp_lfsr *l, unsigned width, uint32_t seed) {
    l->taps = width == 16 ? HWP_LFSR16_TAPS : HWP_LFSR32_TAPS;
    if (width == 16) seed &= 0xFFFFu;
    l->state = seed ? seed : 1u;
}

HWP_INLINE uint32_t hwp_lfsr_next(hwp_lfsr *l) {
    uint32_t lsb = l->state & 1u;
    l->state >>= 1;
    l->state ^= (uint32_t)(0u - lsb) & l->taps;
    return l->state;
}

/* ---- hashes ------------------------------------------------------------ */

/* A cheap, good 64-bit mixer (the SplitMix64 finaliser). */
HWP_INLINE uint64_t hwp_mix64(uint64_t x) {
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* flip(w): reverse the bytes of w (stratified paper, section 3.5). */
HWP_INLINE uint64_t hwp_flip64(uint64_t w) {
#if defined(__GNUC__) || defined(__clang__)
    return __builtin_bswap64(w);
#else
    w = ((w & 0x00FF00FF00FF00FFull) << 8) | ((w >> 8) & 0x00FF00FF00FF00FFull);
    w = ((w & 0x0000FFFF0000FFFFull) << 16) | ((w >> 16) & 0x0000FFFF0000FFFFull);
    return (w << 32) | (w >> 32);
#endif
}

/* xor_fold(w, n): split w into n-bit chunks and xor them together
 * (stratified paper, section 3.5). n in 1..64; n >= 64 returns w. A
 * power-of-two width folds in log2 halving steps (a 2-bit fold would
 * otherwise take 32 rounds); other widths walk the chunks. */
HWP_INLINE uint64_t hwp_xor_fold(uint64_t w, unsigned n) {
    uint64_t r = 0;
    unsigned h;
    if (n >= 64 || n == 0) return w;
    if (!(n & (n - 1u))) {
        for (h = 32; h >= n; h >>= 1) w ^= w >> h;
        return w & hwp_mask64(n);
    }
    while (w) {
        r ^= w & hwp_mask64(n);
        w >>= n;
    }
    return r;
}

/* The stratified paper's hash, section 3.5:
 *   randomize(w): look every byte of w up in a 256-entry random table
 *   npc = flip(randomize(pc)); nw = randomize(w);
 *   index = xor_fold(npc ^ nw, index_bits)
 * The text leaves open whether one table serves all eight byte positions
 * or each position has its own; we give each position its own table
 * (a random permutation of 0..255 drawn from the seed), which makes
 * randomize a bijection and keeps equal bytes in different positions from
 * cancelling. 2 KiB of state. */
typedef struct hwp_bytehash {
    uint8_t tab[8][256];
} hwp_bytehash;

HWP_INLINE void hwp_bytehash_init(hwp_bytehash *h, uint64_t seed) {
    hwp_rng r;
    unsigned pos, i;
    hwp_rng_seed(&r, seed ^ 0x6279746568617368ull /* "bytehash" */);
    for (pos = 0; pos < 8; pos++) {
        for (i = 0; i < 256; i++) h->tab[pos][i] = (uint8_t)i;
        for (i = 255; i > 0; i--) { /* Fisher-Yates */
            unsigned j = hwp_rng_below(&r, i + 1);
            uint8_t t = h->tab[pos][i];
            h->tab[pos][i] = h->tab[pos][j];
            h->tab[pos][j] = t;
        }
    }
}

/* The eight lookups written out: a loop costs ~12 instructions a byte at
 * -O2, this ~5, and randomize sits on the stratified compressor's hot path. */
#define HWP__BYTEHASH_RB(h, w, i) \
    ((uint64_t)(h)->tab[i][((w) >> (8 * (i))) & 0xFFu] << (8 * (i)))
HWP_INLINE uint64_t hwp_bytehash_randomize(const hwp_bytehash *h, uint64_t w) {
    return HWP__BYTEHASH_RB(h, w, 0) | HWP__BYTEHASH_RB(h, w, 1) |
           HWP__BYTEHASH_RB(h, w, 2) | HWP__BYTEHASH_RB(h, w, 3) |
           HWP__BYTEHASH_RB(h, w, 4) | HWP__BYTEHASH_RB(h, w, 5) |
           HWP__BYTEHASH_RB(h, w, 6) | HWP__BYTEHASH_RB(h, w, 7);
}

/* The full signature before folding: flip(randomize(pc)) ^ randomize(w). */
HWP_INLINE uint64_t hwp_bytehash_sig(const hwp_bytehash *h, uint64_t pc,
                                     uint64_t w) {
    return hwp_flip64(hwp_bytehash_randomize(h, pc)) ^
           hwp_bytehash_randomize(h, w);
}

/* ---- saturating counters ----------------------------------------------
 * Counters of any width 1..32 held in a uint32_t; `max` is
 * hwp_sat_max(bits). The papers use 3-bit (miss counters), 8-bit (hit,
 * event and slot counters) and 16-bit ones. */

HWP_INLINE uint32_t hwp_sat_max(unsigned bits) {
    return bits >= 32 ? 0xFFFFFFFFu : ((uint32_t)1 << bits) - 1u;
}

HWP_INLINE uint32_t hwp_sat_add(uint32_t v, uint32_t d, uint32_t max) {
    return d >= max - v ? max : v + d; /* never wraps: v <= max holds */
}

HWP_INLINE uint32_t hwp_sat_inc(uint32_t v, uint32_t max) {
    return v < max ? v + 1u : max;
}

HWP_INLINE uint32_t hwp_sat_sub(uint32_t v, uint32_t d) {
    return v > d ? v - d : 0u;
}

HWP_INLINE bool hwp_sat_full(uint32_t v, uint32_t max) { return v >= max; }

/* Saturating 64-bit add, for accumulators that must never wrap. */
HWP_INLINE uint64_t hwp_sat_add64(uint64_t v, uint64_t d) {
    return d > ~(uint64_t)0 - v ? ~(uint64_t)0 : v + d;
}

/* ---- the shared event record -------------------------------------------
 * Filled once per retired (or fetched) instruction by the host and handed
 * to whichever models it enabled. Fields a host does not know stay 0. */

#define HWP__CLS_LIST(X)                                                 \
    X(OTHER, "other")                                                    \
    X(LOAD, "load")                                                      \
    X(STORE, "store")                                                    \
    X(BR_COND, "conditional branch")                                     \
    X(JUMP, "direct jump")                                               \
    X(CALL, "call")                                                      \
    X(RET, "return")                                                     \
    X(INDIRECT, "indirect jump")

typedef enum hwp_cls {
#define HWP__CLS_ENUM(name, text) HWP_CLS_##name,
    HWP__CLS_LIST(HWP__CLS_ENUM)
#undef HWP__CLS_ENUM
    HWP_CLS_COUNT
} hwp_cls;

HWP_INLINE const char *hwp_cls_str(uint32_t cls) {
    static const char *const text[] = {
#define HWP__CLS_TEXT(name, text) text,
        HWP__CLS_LIST(HWP__CLS_TEXT)
#undef HWP__CLS_TEXT
    };
    return cls < (uint32_t)HWP_CLS_COUNT ? text[cls] : "unknown class";
}

/* A mask bit per class, for filters: HWP_CLS_BIT(HWP_CLS_LOAD). */
#define HWP_CLS_BIT(c) (1u << (c))
#define HWP_CLS_ALL ((1u << HWP_CLS_COUNT) - 1u)

/* Is this class a control transfer (ends a basic block)? */
HWP_INLINE bool hwp_cls_is_branch(uint32_t cls) {
    return cls >= HWP_CLS_BR_COND && cls <= HWP_CLS_INDIRECT;
}

enum {
    HWP_EV_TAKEN = 1u << 0,      /* control transfer taken               */
    HWP_EV_MISPRED = 1u << 1,    /* branch or target mispredicted        */
    HWP_EV_ICMISS = 1u << 2,     /* instruction-cache miss               */
    HWP_EV_DCMISS = 1u << 3,     /* data-cache miss                      */
    HWP_EV_ITLBMISS = 1u << 4,   /* instruction-TLB miss                 */
    HWP_EV_DTLBMISS = 1u << 5,   /* data-TLB miss                        */
    HWP_EV_ABORTED = 1u << 6,    /* fetched but never retired            */
    HWP_EV_TRAP = 1u << 7,       /* raised a trap or exception           */
    HWP_EV_INDIRECT = 1u << 8    /* a CALL whose target came from a register */
};

typedef struct hwp_insn {
    uint64_t pc;      /* address of the instruction                      */
    uint64_t next_pc; /* address of the next instruction executed        */
    uint64_t addr;    /* effective address (load/store) or branch target */
    uint64_t value;   /* loaded or produced value when the host knows it */
    uint32_t cls;     /* hwp_cls                                          */
    uint32_t events;  /* HWP_EV_* bits                                    */
} hwp_insn;

HWP_STATIC_ASSERT(insn_is_40_bytes, sizeof(hwp_insn) == 40);

/* ---- report writer -----------------------------------------------------
 * Reports go through a host callback, never to a FILE * directly: a
 * Valgrind tool passes VG_(printf)-backed writes, a kernel its log. */

typedef struct hwp_writer {
    void (*write)(void *ctx, const char *s, size_t n);
    void *ctx;
} hwp_writer;

HWP_API void hwp_put(const hwp_writer *w, const char *s, size_t n);
HWP_API void hwp_put_str(const hwp_writer *w, const char *s);
HWP_API void hwp_put_u64(const hwp_writer *w, uint64_t v);
HWP_API void hwp_put_i64(const hwp_writer *w, int64_t v);
HWP_API void hwp_put_hex(const hwp_writer *w, uint64_t v); /* 0x... */
/* Fixed-point decimal with `decimals` digits (0..9); NaN and infinities
 * print as JSON-safe null. */
HWP_API void hwp_put_f64(const hwp_writer *w, double v, unsigned decimals);
/* A JSON string literal with quotes and escapes. */
HWP_API void hwp_put_json_str(const hwp_writer *w, const char *s);
/* Report building blocks every model uses: a label then a number
 * ("entries 512"), and a JSON member after an earlier one (,"key":512). */
HWP_API void hwp_put_str_u64(const hwp_writer *w, const char *s, uint64_t v);
HWP_API void hwp_put_json_u64(const hwp_writer *w, const char *key, uint64_t v);

/* A writer into a fixed char buffer; always NUL-terminated, counts what
 * did not fit. */
typedef struct hwp_bufwriter {
    char *buf;
    size_t cap, len, dropped;
} hwp_bufwriter;

HWP_API hwp_writer hwp_writer_buf(hwp_bufwriter *b, char *buf, size_t cap);

#ifdef __cplusplus
}
#endif

/* stdio convenience, opt-in: the core stays freestanding without it. */
#if defined(HWPROF_STDIO) && !defined(HWPROF_BASE_STDIO_H)
#define HWPROF_BASE_STDIO_H
#include <stdio.h>
#ifdef __cplusplus
extern "C" {
#endif
HWP__UNUSED static void hwp__stdio_write(void *ctx, const char *s, size_t n) {
    fwrite(s, 1, n, (FILE *)ctx);
}
HWP_INLINE hwp_writer hwp_writer_stdio(FILE *f) {
    hwp_writer w;
    w.write = hwp__stdio_write;
    w.ctx = f;
    return w;
}
#ifdef __cplusplus
}
#endif
#endif

#endif /* HWPROF_BASE_H */

/* ======================================================================= */
/* IMPLEMENTATION                                                          */
/* ======================================================================= */
#if defined(HWPROF_IMPL) && !defined(HWPROF_BASE_IMPL)
#define HWPROF_BASE_IMPL

#ifdef __cplusplus
extern "C" {
#endif

HWP_API void hwp_put(const hwp_writer *w, const char *s, size_t n) {
    if (w && w->write && n) w->write(w->ctx, s, n);
}

HWP_API void hwp_put_str(const hwp_writer *w, const char *s) {
    size_t n = 0;
    while (s[n]) n++;
    hwp_put(w, s, n);
}

HWP_API void hwp_put_u64(const hwp_writer *w, uint64_t v) {
    char buf[20];
    size_t i = sizeof buf;
    do {
        buf[--i] = (char)('0' + v % 10u);
        v /= 10u;
    } while (v);
    hwp_put(w, buf + i, sizeof buf - i);
}

HWP_API void hwp_put_i64(const hwp_writer *w, int64_t v) {
    if (v < 0) {
        hwp_put(w, "-", 1);
        hwp_put_u64(w, (uint64_t)0 - (uint64_t)v);
    } else {
        hwp_put_u64(w, (uint64_t)v);
    }
}

HWP_API void hwp_put_hex(const hwp_writer *w, uint64_t v) {
    static const char digits[] = "0123456789abcdef";
    char buf[18];
    size_t i = sizeof buf;
    do {
        buf[--i] = digits[v & 15u];
        v >>= 4;
    } while (v);
    buf[--i] = 'x';
    buf[--i] = '0';
    hwp_put(w, buf + i, sizeof buf - i);
}

HWP_API void hwp_put_f64(const hwp_writer *w, double v, unsigned decimals) {
    uint64_t scale = 1, ip, fp;
    unsigned d;
    if (v != v || v > 1.8e19 || v < -1.8e19) { /* NaN or out of u64 range */
        hwp_put_str(w, "null");
        return;
    }
    if (decimals > 9) decimals = 9;
    for (d = 0; d < decimals; d++) scale *= 10u;
    if (v < 0) {
        hwp_put(w, "-", 1);
        v = -v;
    }
    v = v * (double)scale + 0.5; /* round half up at the last digit */
    if (v >= 1.8e19) {
        hwp_put_str(w, "null");
        return;
    }
    ip = (uint64_t)v / scale;
    fp = (uint64_t)v % scale;
    hwp_put_u64(w, ip);
    if (decimals) {
        char buf[10];
        for (d = decimals; d > 0; d--) {
            buf[d - 1] = (char)('0' + fp % 10u);
            fp /= 10u;
        }
        hwp_put(w, ".", 1);
        hwp_put(w, buf, decimals);
    }
}

HWP_API void hwp_put_json_str(const hwp_writer *w, const char *s) {
    static const char hex[] = "0123456789abcdef";
    hwp_put(w, "\"", 1);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\') {
            char e[2];
            e[0] = '\\';
            e[1] = (char)c;
            hwp_put(w, e, 2);
        } else if (c < 0x20) {
            char e[6];
            e[0] = '\\'; e[1] = 'u'; e[2] = '0'; e[3] = '0';
            e[4] = hex[c >> 4];
            e[5] = hex[c & 15u];
            hwp_put(w, e, 6);
        } else {
            hwp_put(w, (const char *)s, 1);
        }
    }
    hwp_put(w, "\"", 1);
}

HWP_API void hwp_put_str_u64(const hwp_writer *w, const char *s, uint64_t v) {
    hwp_put_str(w, s);
    hwp_put_u64(w, v);
}

HWP_API void hwp_put_json_u64(const hwp_writer *w, const char *key,
                              uint64_t v) {
    hwp_put(w, ",", 1);
    hwp_put_json_str(w, key);
    hwp_put(w, ":", 1);
    hwp_put_u64(w, v);
}

static void hwp__buf_write(void *ctx, const char *s, size_t n) {
    hwp_bufwriter *b = (hwp_bufwriter *)ctx;
    size_t room = b->cap ? b->cap - 1 - b->len : 0;
    size_t k = n < room ? n : room;
    hwp__copy(b->buf + b->len, s, k);
    b->len += k;
    b->dropped += n - k;
    if (b->cap) b->buf[b->len] = '\0';
}

HWP_API hwp_writer hwp_writer_buf(hwp_bufwriter *b, char *buf, size_t cap) {
    hwp_writer w;
    b->buf = buf;
    b->cap = cap;
    b->len = 0;
    b->dropped = 0;
    if (cap) buf[0] = '\0';
    w.write = hwp__buf_write;
    w.ctx = b;
    return w;
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_IMPL */
