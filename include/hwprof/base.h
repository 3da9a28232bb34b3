/* SPDX-License-Identifier: MIT */
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
 *   HWPROF_COVERAGE  a coverage build: no hot path is forced inline
 *   HWP_ASSERT(c)    internal invariant check; default traps when
 *                    HWPROF_DEBUG is defined, else compiles to nothing.
 *                    Never used on user input: that gets a status.
 *
 * CONTENTS
 *   hwp_status, hwp_status_str()        status codes (X-macro list)
 *   hwp_head, hwp_why()                 per-instance status and reason
 *                                       (never NULL; "not initialised")
 *   hwp_fail(h, status, why)            record a status on a head
 *   HWP_MAGIC(a, b, c, d), HWP_UNUSED   a component's magic; an attribute
 *   hwp_zero, hwp_copy                  memset / memcpy without libc
 *   HWP_ALIGN, hwp_align, hwp_carve     lay tables out in one block of
 *                                       caller storage, 16-byte aligned
 *   hwp_sqrt, hwp_ln                    freestanding math for cold paths
 *   hwp_rng_*                           SplitMix64 PRNG, seeded, portable
 *   hwp_lfsr_*                          16/32-bit maximal-length LFSR
 *   hwp_burst_*                         burst sampling: gaps and bursts
 *                                       over a stream of units
 *   hwp_mix64, hwp_flip64, hwp_xor_fold cheap hashes and the paper's parts
 *   hwp_bytehash_*                      stratified-sampling "randomize" hash
 *   hwp_sat_*                           saturating counters, 1..32 bits
 *   hwp_insn, HWP_CLS_*, HWP_EV_*       the shared event record
 *   hwp_writer, hwp_put_*               report output without libc
 *   hwp_json_*                          the JSON reader every model uses;
 *                                       hwp_json_read_desc, hwp_json_mismatch
 *                                       for a new component's readers
 *   hwp_field, hwp_<model>_desc_fields  a desc as a table of fields: name,
 *                                       type, default, range, reason; the
 *                                       models' fill, checks, JSON and
 *                                       merge check walk it, and a host
 *                                       lists or sets fields by name
 *
 * Names with a double underscore (hwp__, HWP__) are private: the models'
 * own, which hosts must not call. hwp__zero and its kin above are the
 * models' spelling of the public helpers.
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
#define HWP_UNUSED __attribute__((unused))
#define HWP_LIKELY(x) __builtin_expect(!!(x), 1)
#define HWP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#else
#define HWP_UNUSED
#define HWP_LIKELY(x) (x)
#define HWP_UNLIKELY(x) (x)
#endif
#define HWP__UNUSED HWP_UNUSED /* the models' spelling */

/* Hot paths: inlined into the host's loop. */
#define HWP_INLINE static inline HWP__UNUSED

/* The few hot paths a model inlines even where the compiler would rather
 * call. HWPROF_COVERAGE (a coverage build, tests/coverage.sh) drops the
 * force, so that at -O0 each function is compiled once per translation
 * unit and gcov counts each source branch once instead of once per
 * inlined copy. */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(HWPROF_COVERAGE)
#define HWP__FORCE_INLINE HWP_INLINE __attribute__((always_inline))
#else
#define HWP__FORCE_INLINE HWP_INLINE
#endif

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
    X(HWP_OK, "ok")                                                      \
    X(HWP_EINVAL, "invalid argument")                                    \
    X(HWP_ENOSPC, "not enough storage")                                  \
    X(HWP_EFORMAT, "malformed input")                                    \
    X(HWP_ESTATE, "call not valid in this state")                        \
    X(HWP_EMISMATCH, "instances were built from different descs")

/* An X(name, text) list's two uses: the enum's members, its names. */
#define HWP__X_ENUM(name, text) name,
#define HWP__X_TEXT(name, text) text,

typedef enum hwp_status { HWP__STATUS_LIST(HWP__X_ENUM) HWP_STATUS_COUNT } hwp_status;

HWP_INLINE const char *hwp_status_str(hwp_status s) {
    static const char *const text[] = {HWP__STATUS_LIST(HWP__X_TEXT)};
    return (unsigned)s < (unsigned)HWP_STATUS_COUNT ? text[s] : "unknown status";
}

/* Every model instance begins with a hwp_head. `magic` identifies the
 * component so cold calls can reject an uninitialised or foreign handle;
 * `why` is a static string saying what the last failing call objected to
 * ("rap: key_bits must be 1..64"), or "" after success. A handle nobody
 * initialised should be zeroed (`hwp_rap r = {0};`, static or calloc'd
 * storage): every call refuses it, and hwp_why says so. */
typedef struct hwp_head {
    uint32_t magic;
    uint32_t status; /* hwp_status of the last cold call */
    const char *why;
} hwp_head;

/* The reason behind the last status of any instance: hwp_why(&rap).
 * Never NULL, so it can go straight to printf("%s"): a zeroed handle
 * that no init ever touched reads "not initialised". */
#define hwp_why(x) hwp_head_why(&(x)->head)

HWP_INLINE const char *hwp_head_why(const hwp_head *h) {
    return h->why ? h->why : "not initialised";
}

/* Record a failure (or success, why = "") on an instance; returns s.
 * Public for a host's own components built the same way (a head first,
 * e.g. examples/common's sessions). */
HWP_INLINE hwp_status hwp_fail(hwp_head *h, hwp_status s, const char *why) {
    h->status = (uint32_t)s;
    h->why = why;
    return s;
}
#define hwp__fail hwp_fail /* the models' spelling */

/* The same for a query, which takes its instance const: a query that
 * refuses its arguments still says why in hwp_why. The head's status and
 * reason are the one part of a live instance a query writes, and only
 * when it refuses, so concurrent queries that succeed stay read-only.
 * (The instance is the host's, never an object defined const: init
 * writes it.) */
HWP_INLINE hwp_status hwp__refuse(const hwp_head *h, hwp_status s,
                                  const char *why) {
    return hwp_fail((hwp_head *)(uintptr_t)h, s, why);
}

/* Magic numbers, one per component: four ASCII letters. */
#define HWP_MAGIC(a, b, c, d)                                        \
    ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) |  \
     ((uint32_t)(d) << 24))
#define HWP__MAGIC HWP_MAGIC /* the models' spelling */

/* ---- memory helpers (no <string.h> in a freestanding core) -------------
 * Public: a host without libc (the Valgrind tool) clears and copies with
 * these, and every host lays its own tables out in one block of storage
 * the way the models do. */

HWP_INLINE void hwp_zero(void *p, size_t n) {
    unsigned char *b = (unsigned char *)p;
    while (n--) *b++ = 0;
}

HWP_INLINE void hwp_copy(void *dst, const void *src, size_t n) {
    unsigned char *d = (unsigned char *)dst;
    const unsigned char *s = (const unsigned char *)src;
    while (n--) *d++ = *s++;
}

/* Round a byte count up so the next carve-out of storage stays aligned. */
#define HWP_ALIGN 16u
HWP_INLINE size_t hwp_align(size_t n) {
    return (n + (HWP_ALIGN - 1)) & ~(size_t)(HWP_ALIGN - 1);
}

/* Carve `n` bytes off a storage cursor. Models lay out their tables in the
 * host's storage with this, after hwp_X_bytes() said how much it takes. */
HWP_INLINE void *hwp_carve(unsigned char **cursor, size_t n) {
    void *p = *cursor;
    *cursor += hwp_align(n);
    return p;
}

/* The models' spelling of the four above. */
#define hwp__zero hwp_zero
#define hwp__copy hwp_copy
#define HWP__ALIGN HWP_ALIGN
#define hwp__align hwp_align
#define hwp__carve hwp_carve

/* The storage a model asks for: `need` bytes plus room to align whatever
 * address the host hands over (0 stays 0: an invalid desc). */
HWP_INLINE size_t hwp__bytes(size_t need) {
    return need ? need + (HWP__ALIGN - 1) : 0;
}

/* What every model's init checks once its desc is filled: the desc's own
 * reason (NULL when valid), then the host's storage, which may have any
 * alignment: *storage is moved up to the next aligned address and *bytes
 * shrinks by the padding, which must leave the `need` bytes that the
 * model's *_bytes() reported (need plus padding, see hwp__bytes). */
HWP_INLINE hwp_status hwp__admit(hwp_head *h, const char *why,
                                     void **storage, size_t *bytes,
                                     size_t need) {
    size_t pad;
    if (why) return hwp__fail(h, HWP_EINVAL, why);
    if (!*storage) return hwp__fail(h, HWP_EINVAL, "storage must be non-NULL");
    pad = (size_t)(-(uintptr_t)*storage & (HWP__ALIGN - 1));
    if (*bytes < pad || *bytes - pad < need)
        return hwp__fail(h, HWP_ENOSPC,
                         "storage smaller than the model's *_bytes() size");
    *storage = (unsigned char *)*storage + pad;
    *bytes -= pad;
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

/* ---- burst sampling ----------------------------------------------------
 * A stream of units (a VM's bytecodes, an emulator's guest instructions)
 * alternates between gaps and bursts of `len` units; each gap is drawn
 * uniform over 1 .. 2 (period - len), so bursts begin `period` units
 * apart on average and do not lock onto a loop whose length divides the
 * period. Every unit is inside a burst with chance len / period, so a
 * count over what the bursts saw, times units / units seen, estimates the
 * whole stream's. period == len: one endless burst (full profiling).
 * The VM layer (vm.h) draws its gaps here; the hosts' sessions gate
 * their sampled models with an hwp_burst. */

/* Units in the next gap; 0 when there is none (period == len). */
HWP_INLINE uint64_t hwp_burst_gap(hwp_rng *r, uint32_t period, uint32_t len) {
    uint64_t mean = (uint64_t)period - len;
    return mean ? 1u + hwp_rng_below(r, 2u * mean) : 0u;
}

typedef struct hwp_burst {
    uint64_t left;   /* units to the next edge: the gap's or the burst's end */
    uint64_t bursts; /* bursts begun                                        */
    uint32_t period; /* 1 <= len <= period, checked by the caller's desc    */
    uint32_t len;
    uint32_t in;     /* the next unit is inside a burst                     */
    hwp_rng rng;
} hwp_burst;

HWP_INLINE void hwp__burst_edge(hwp_burst *b) {
    if (b->in && (b->left = hwp_burst_gap(&b->rng, b->period, b->len)) != 0) {
        b->in = 0;
        return;
    }
    b->in = 1;
    b->left = b->len;
    b->bursts++;
}

/* The stream begins in a gap (in a burst when there are none). */
HWP_INLINE void hwp_burst_init(hwp_burst *b, uint32_t period, uint32_t len, uint64_t seed) {
    hwp_zero(b, sizeof *b);
    b->period = period;
    b->len = len;
    hwp_rng_seed(&b->rng, seed);
    b->in = 1; /* so the first edge draws a gap */
    hwp__burst_edge(b);
}

/* n more units go by (a block of n instructions, say): returns whether
 * the first is inside a burst. A host that takes or leaves the n whole
 * keeps every unit's chance at len / period. */
HWP_INLINE bool hwp_burst_step(hwp_burst *b, uint64_t n) {
    bool first = b->in != 0;
    while (n >= b->left) {
        n -= b->left;
        hwp__burst_edge(b);
    }
    b->left -= n;
    return first;
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
    X(HWP_CLS_OTHER, "other")                                            \
    X(HWP_CLS_LOAD, "load")                                              \
    X(HWP_CLS_STORE, "store")                                            \
    X(HWP_CLS_BR_COND, "conditional branch")                             \
    X(HWP_CLS_JUMP, "direct jump")                                       \
    X(HWP_CLS_CALL, "call")                                              \
    X(HWP_CLS_RET, "return")                                             \
    X(HWP_CLS_INDIRECT, "indirect jump")

typedef enum hwp_cls { HWP__CLS_LIST(HWP__X_ENUM) HWP_CLS_COUNT } hwp_cls;

HWP_INLINE const char *hwp_cls_str(uint32_t cls) {
    static const char *const text[] = {HWP__CLS_LIST(HWP__X_TEXT)};
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

/* More JSON members after an earlier one: ,"key":"0x1f" for 64-bit keys,
 * ids and bit masks (a JSON number loses precision above 2^53) and
 * ,"key":0.125 for fractions. */
HWP_API void hwp_put_json_hex(const hwp_writer *w, const char *key, uint64_t v);
HWP_API void hwp_put_json_f64(const hwp_writer *w, const char *key, double v,
                              unsigned decimals);
/* Every model's JSON report opens the same way, then adds ,"desc":{...},
 * ,"stats":{...} and its payload, and closes the object:
 *   {"model":"rap","version":1,"desc":{...},"stats":{...},...} */
HWP_API void hwp_put_json_envelope(const hwp_writer *w, const char *model,
                                   uint32_t version);

/* ---- JSON reader -------------------------------------------------------
 * A cursor over a JSON text, enough to read hwprof's own reports back (the
 * models' *_read_json): no allocation, no libc, every error kept with its
 * byte offset. The first error sticks: later calls return false, so a
 * reader may check once at the end. Usage:
 *
 *   hwp_json j; char key[32];
 *   hwp_json_init(&j, text, len);
 *   if (!hwp_json_envelope(&j, "rap", 1)) ...          // {"model":..,"version":..
 *   while (hwp_json_member(&j, key, sizeof key)) {      // ,"key":
 *       if (hwp_json_key_is(key, "desc")) ... else hwp_json_skip(&j);
 *   }
 *   if (!hwp_json_end(&j)) report(j.why, j.err_pos);
 *
 * Objects: hwp_json_object() consumes '{', then hwp_json_member() returns
 * each key (with its ':') until it consumes the closing '}' and returns
 * false. Arrays: hwp_json_array() consumes '[', hwp_json_next() returns
 * true before each element and false after consuming ']'. Commas are
 * checked, not just skipped. */
typedef struct hwp_json_err {
    size_t offset;   /* byte offset of the first error                */
    const char *why; /* what was expected there (static string)       */
} hwp_json_err;

typedef struct hwp_json {
    const char *s;
    size_t n, pos;
    size_t err_pos;  /* valid when why != NULL                        */
    const char *why; /* first error, NULL while the text is well formed */
    bool after_value; /* a value ended: the next member needs a comma  */
    uint32_t depth;
} hwp_json;

#define HWP_JSON_MAX_DEPTH 64u

HWP_API void hwp_json_init(hwp_json *j, const char *s, size_t n);
/* Record an error at the cursor (the first one sticks); returns false. */
HWP_API bool hwp_json_fail(hwp_json *j, const char *why);
HWP_API bool hwp_json_object(hwp_json *j);
HWP_API bool hwp_json_member(hwp_json *j, char *key, size_t cap);
HWP_API bool hwp_json_array(hwp_json *j);
HWP_API bool hwp_json_next(hwp_json *j);
/* A non-negative integer, or a "0x..." string (hwp_put_json_hex). */
HWP_API bool hwp_json_u64(hwp_json *j, uint64_t *v);
HWP_API bool hwp_json_i64(hwp_json *j, int64_t *v);
/* A number; null reads as NaN (hwp_put_f64 writes NaN as null). */
HWP_API bool hwp_json_f64(hwp_json *j, double *v);
HWP_API bool hwp_json_bool(hwp_json *j, bool *v);
/* A string into buf (NUL-terminated); too long for cap is an error. */
HWP_API bool hwp_json_str(hwp_json *j, char *buf, size_t cap);
HWP_API bool hwp_json_skip(hwp_json *j); /* any one value */
/* Only white space is left. */
HWP_API bool hwp_json_end(hwp_json *j);
/* '{' then "model" equal to `model` and "version" not newer than
 * `version`; a mismatch is an error naming what was found wanting. */
HWP_API bool hwp_json_envelope(hwp_json *j, const char *model,
                               uint32_t version);
/* Copy the cursor's first error into err (may be NULL); returns
 * HWP_EFORMAT, or HWP_OK when there was none. */
HWP_API hwp_status hwp_json_status(const hwp_json *j, hwp_json_err *err);

/* Every model's read_desc (and a new component's): the envelope of
 * `model`, then the first "desc" member read by `obj` into `d` (the other
 * members skipped, but well formed). A report without a desc is refused. */
typedef bool (*hwp_json_obj_fn)(hwp_json *j, void *d);
HWP_API hwp_status hwp_json_read_desc(const char *json, size_t n,
                                      const char *model, hwp_json_obj_fn obj,
                                      void *d, hwp_json_err *err);

/* Every model's read_json, on a report of another configuration: the
 * reason goes to err (at the offset of the report's desc, when err is
 * given) and to the instance, which the reader has not changed. Returns
 * HWP_EMISMATCH. */
HWP_API hwp_status hwp_json_mismatch(hwp_head *h, hwp_json_err *err,
                                     const char *json, size_t n, const char *why);

/* The models' spelling of the three above. */
#define hwp__json_obj_fn hwp_json_obj_fn
#define hwp__json_read_desc hwp_json_read_desc
#define hwp__json_mismatch hwp_json_mismatch

HWP_INLINE bool hwp_json_key_is(const char *key, const char *lit) {
    while (*key && *key == *lit) key++, lit++;
    return *key == *lit;
}

/* ---- field tables ------------------------------------------------------
 * Each desc (and each stats struct a report carries) is one table of
 * hwp_field rows, one row per member: its name, type, default, accepted
 * range and reason. A model's defaults fill, range checks, JSON writer
 * and reader and its merge-mismatch check all walk that one table, so a
 * desc field is added by adding its row. hwp_<model>_desc_fields(&n)
 * returns a model's table, rows in the report's order: a host lists or
 * sets a desc's fields by name through it (key=value options) without
 * knowing the struct:
 *
 *   size_t n, i;
 *   const hwp_field *f = hwp_rap_desc_fields(&n);
 *   for (i = 0; i < n; i++) if (hwp_json_key_is(f[i].key, "nodes")) ...
 *       // f[i].off into the desc, f[i].size bytes, [lo, hi] accepted
 *
 * A model's fill gives every zero member its default, then checks each
 * against its range (a default always passes); checks that tie fields
 * together stay in the model's own fill. */
typedef enum hwp_field_type {
    HWP_FIELD_UINT,  /* unsigned integer of `size` bytes (1, 2, 4 or 8)  */
    HWP_FIELD_HEX,   /* the same, written as a "0x..." string (keys)     */
    HWP_FIELD_F64,   /* double on the reports' 9-decimal grid; def, lo
                        and hi in billionths                             */
    HWP_FIELD_ENUM,  /* unsigned, written by name: names[0..hi]          */
    HWP_FIELD_BYTES, /* unsigned char[size], each byte in [lo, hi]       */
    HWP_FIELD_SUB,   /* a nested desc, its rows sub[0..hi]; its owner's
                        fill completes it                                */
    HWP_FIELD_U64S   /* uint64_t[size / 8], any values; read whole, or
                        refused with bad                                 */
} hwp_field_type;

#define HWP_FIELD_POW2 1u /* the value must also be a power of two       */
#define HWP_FIELD_NONE 2u /* all ones is also accepted (a NONE value)    */

typedef struct hwp_field {
    const char *key;          /* the member's name (JSON key, option)    */
    size_t off;               /* offsetof in the struct                  */
    uint32_t type, size;      /* hwp_field_type; bytes                   */
    uint32_t flags;           /* HWP_FIELD_POW2, HWP_FIELD_NONE          */
    const char *const *names; /* names by value, [0, hi] (an ENUM's, or
                                 a UINT's that options take by name;
                                 NULL entries have none), else NULL      */
    const struct hwp_field *sub; /* a nested desc's table, else NULL     */
    uint64_t def;             /* a zero member reads as def              */
    uint64_t lo, hi;          /* accepted range (def always is)          */
    const char *bad;          /* reason when outside: field and range    */
    const char *why;          /* reason when two descs differ here       */
} hwp_field;

/* The models' rows, for struct T of component M ("rap"). A number with
 * its default, range, flags and reason: */
#define HWP__FN(T, M, f, type, def, lo, hi, flags, bad)                     \
    {#f, offsetof(T, f), HWP_FIELD_##type, sizeof(((T *)0)->f), flags, NULL, \
     NULL, def, lo, hi, bad, M ": " #f " differs from the other desc"}
/* A number the reports write as a number but options also take by
 * name (names[v], NULL for a value without one): */
#define HWP__FNAMED(T, M, f, def, names, bad)                                \
    {#f, offsetof(T, f), HWP_FIELD_UINT, sizeof(((T *)0)->f), 0, names, NULL, \
     def, 0, HWP__N(names) - 1, bad, M ": " #f " differs from the other desc"}
/* An enum written by name (default 0); bad names the accepted names. */
#define HWP__FE(T, M, f, names, bad)                                         \
    {#f, offsetof(T, f), HWP_FIELD_ENUM, sizeof(((T *)0)->f), 0, names, NULL, \
     0, 0, HWP__N(names) - 1, bad, M ": " #f " differs from the other desc"}
/* A stats counter: any value, never compared; HWP__FSN names it. */
#define HWP__FSN(T, name, f)                                                \
    {name, offsetof(T, f), HWP_FIELD_UINT, sizeof(((T *)0)->f), 0, NULL, NULL, \
     0, 0, ~(uint64_t)0, NULL, NULL}
#define HWP__FS(T, f) HWP__FSN(T, #f, f)
/* The four counters every stats struct begins with (the contract). */
#define HWP__FS_HEAD(T) \
    HWP__FS(T, events), HWP__FS(T, dropped), HWP__FS(T, evicted), HWP__FS(T, cycles)
/* A desc number with a default (or none) and no range of its own. */
#define HWP__FDEF(T, M, f, def) HWP__FN(T, M, f, UINT, def, 0, ~(uint64_t)0, 0, NULL)
#define HWP__FANY(T, M, f) HWP__FDEF(T, M, f, 0)
/* A nested desc with its own table. */
#define HWP__FSUB(T, M, f, table)                                          \
    {#f, offsetof(T, f), HWP_FIELD_SUB, sizeof(((T *)0)->f), 0, NULL, table, \
     0, 0, HWP__N(table) - 1, NULL, M ": " #f " differs from the other desc"}
/* A record's array of counters, refused with bad unless all are given. */
#define HWP__FU64S(T, f, bad) \
    {#f, offsetof(T, f), HWP_FIELD_U64S, sizeof(((T *)0)->f), 0, NULL, NULL, 0, 0, 0, bad, NULL}
/* The nearest billionth of a double constant, for F64 rows. */
#define HWP__NANO(x) ((uint64_t)((x) * 1e9 + 0.5))
#define HWP__N(a) (sizeof(a) / sizeof((a)[0]))
/* hwp_<model>_desc_fields(), defined from the model's table. */
/* The row of member `name` in table f (n rows), a nested desc's member
 * as "sub.member" ("l1d.sets"), or NULL; *off is then the member's
 * offset from the start of the table's struct. */
HWP_API const hwp_field *hwp_field_find(const hwp_field *f, size_t n,
                                        const char *name, size_t *off);
/* Store v in the member of row f at offset off of base (as found by
 * hwp_field_find): false, storing nothing, when v does not fit the
 * member (wider than its bytes, an enum or a named number past its last
 * name, a nested desc or byte array). Ranges are the model's init's to
 * check, with its reason. set_f64 is for HWP_FIELD_F64 rows only. */
HWP_API bool hwp_field_set_u64(void *base, const hwp_field *f, size_t off, uint64_t v);
HWP_API bool hwp_field_set_f64(void *base, const hwp_field *f, size_t off, double v);
/* hwp_<c>_get_desc, defined for a component whose handle x keeps the
 * desc it runs (defaults filled) in member m, when `ok` accepts x. */
#define HWP__GET_DESC_FN(c, m, ok)                                            \
    HWP_API hwp_status hwp_##c##_get_desc(const hwp_##c *x, hwp_##c##_desc *out) { \
        if (!(ok) || !out) return HWP_EINVAL;                                 \
        *out = x->m;                                                          \
        return HWP_OK;                                                        \
    }
/* hwp_<c>_read_desc for a component whose desc is read by its field
 * table t alone, completed by fill (NULL when the table's defaults are
 * all it has). */
#define HWP__READ_DESC_FN(c, envelope, t, fill)                                \
    HWP_API hwp_status hwp_##c##_read_desc(hwp_##c##_desc *d, const char *json, \
                                           size_t n, hwp_json_err *err) {      \
        return hwp__field_read_desc(d, sizeof *d, envelope, t, HWP__N(t), fill, \
                                    json, n, err);                             \
    }
#define HWP__FIELDS_FN(name, table)                 \
    HWP_API const hwp_field *name(size_t *n) {      \
        if (n) *n = HWP__N(table);                  \
        return table;                               \
    }

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

/* s, then v: the text reports' label-and-number pairs. */
static HWP__UNUSED void hwp__put_str_f64(const hwp_writer *w, const char *s, double v,
                                         unsigned decimals) {
    hwp_put_str(w, s);
    hwp_put_f64(w, v, decimals);
}

static HWP__UNUSED void hwp__put_str_hex(const hwp_writer *w, const char *s, uint64_t v) {
    hwp_put_str(w, s);
    hwp_put_hex(w, v);
}

/* sep"key": the start of an object's member (sep "," after another). */
static HWP__UNUSED void hwp__put_key(const hwp_writer *w, const char *sep,
                                      const char *key) {
    hwp_put_str(w, sep);
    hwp_put_json_str(w, key);
    hwp_put(w, ":", 1);
}

HWP_API void hwp_put_json_u64(const hwp_writer *w, const char *key,
                              uint64_t v) {
    hwp__put_key(w, ",", key);
    hwp_put_u64(w, v);
}

static void hwp__buf_write(void *ctx, const char *s, size_t n) {
    hwp_bufwriter *b = (hwp_bufwriter *)ctx;
    size_t room = b->cap ? b->cap - 1 - b->len : 0;
    size_t k = n < room ? n : room;
    if (k) hwp__copy(b->buf + b->len, s, k); /* buf may be NULL at cap 0 */
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

HWP_API void hwp_put_json_hex(const hwp_writer *w, const char *key,
                              uint64_t v) {
    hwp__put_key(w, ",", key);
    hwp_put(w, "\"", 1);
    hwp_put_hex(w, v);
    hwp_put(w, "\"", 1);
}

HWP_API void hwp_put_json_f64(const hwp_writer *w, const char *key, double v,
                              unsigned decimals) {
    hwp__put_key(w, ",", key);
    hwp_put_f64(w, v, decimals);
}

HWP_API void hwp_put_json_envelope(const hwp_writer *w, const char *model,
                                   uint32_t version) {
    hwp_put_str(w, "{\"model\":");
    hwp_put_json_str(w, model);
    hwp_put_json_u64(w, "version", version);
}

HWP_API void hwp_json_init(hwp_json *j, const char *s, size_t n) {
    j->s = s;
    j->n = s ? n : 0;
    j->pos = 0;
    j->err_pos = 0;
    j->why = NULL;
    j->after_value = false;
    j->depth = 0;
}

HWP_API bool hwp_json_fail(hwp_json *j, const char *why) {
    if (!j->why) {
        j->why = why;
        j->err_pos = j->pos;
    }
    return false;
}

/* Next significant character, or 0 at the end (JSON text has no NULs
 * outside strings, and a NUL there is an error anyway). */
static char hwp__json_peek(hwp_json *j) {
    while (j->pos < j->n && (j->s[j->pos] == ' ' || j->s[j->pos] == '\n' ||
                             j->s[j->pos] == '\r' || j->s[j->pos] == '\t'))
        j->pos++;
    return j->pos < j->n ? j->s[j->pos] : '\0';
}

/* Before a value in an array or after a member's ':' nothing is needed;
 * a value at the top level may not follow another one. */
static bool hwp__json_open(hwp_json *j, char c, const char *why) {
    if (j->why) return false;
    if (hwp__json_peek(j) != c) return hwp_json_fail(j, why);
    if (j->depth >= HWP_JSON_MAX_DEPTH)
        return hwp_json_fail(j, "json: nested too deeply");
    j->pos++;
    j->depth++;
    j->after_value = false;
    return true;
}

HWP_API bool hwp_json_object(hwp_json *j) {
    return hwp__json_open(j, '{', "json: expected '{'");
}

HWP_API bool hwp_json_array(hwp_json *j) {
    return hwp__json_open(j, '[', "json: expected '['");
}

/* Shared by members and array elements: the closing bracket ends the
 * container (and makes it a value of its parent); otherwise a comma is
 * required exactly when a value came before. */
static bool hwp__json_more(hwp_json *j, char close) {
    char c;
    if (j->why) return false;
    c = hwp__json_peek(j);
    if (c == close) {
        j->pos++;
        j->depth--;
        j->after_value = true;
        return false;
    }
    if (j->after_value) {
        if (c != ',')
            return hwp_json_fail(j, close == '}' ? "json: expected ',' or '}'"
                                                 : "json: expected ',' or ']'");
        j->pos++;
        if (hwp__json_peek(j) == close)
            return hwp_json_fail(j, "json: trailing comma");
    }
    j->after_value = false;
    return true;
}

HWP_API bool hwp_json_next(hwp_json *j) {
    return hwp__json_more(j, ']');
}

HWP_API bool hwp_json_str(hwp_json *j, char *buf, size_t cap) {
    size_t k = 0;
    if (j->why) return false;
    if (hwp__json_peek(j) != '"') return hwp_json_fail(j, "json: expected a string");
    j->pos++;
    for (;;) {
        char c;
        if (j->pos >= j->n) return hwp_json_fail(j, "json: unterminated string");
        c = j->s[j->pos];
        if (c == '"') break;
        if ((unsigned char)c < 0x20)
            return hwp_json_fail(j, "json: control character in a string");
        if (c == '\\') {
            if (++j->pos >= j->n) return hwp_json_fail(j, "json: unterminated string");
            c = j->s[j->pos];
            if (c == 'u') {
                unsigned v = 0, d;
                for (d = 0; d < 4; d++) {
                    char h;
                    if (++j->pos >= j->n) return hwp_json_fail(j, "json: bad \\u escape");
                    h = j->s[j->pos];
                    v <<= 4;
                    if (h >= '0' && h <= '9') v |= (unsigned)(h - '0');
                    else if (h >= 'a' && h <= 'f') v |= (unsigned)(h - 'a' + 10);
                    else if (h >= 'A' && h <= 'F') v |= (unsigned)(h - 'A' + 10);
                    else return hwp_json_fail(j, "json: bad \\u escape");
                }
                /* hwprof writes \u only for control characters. */
                if (v >= 0x80) return hwp_json_fail(j, "json: \\u escape outside ASCII");
                c = (char)v;
            } else if (c == 'n') c = '\n';
            else if (c == 't') c = '\t';
            else if (c == 'r') c = '\r';
            else if (c == 'b') c = '\b';
            else if (c == 'f') c = '\f';
            else if (c != '"' && c != '\\' && c != '/')
                return hwp_json_fail(j, "json: bad escape");
        }
        if (buf) {
            if (k + 1 >= cap) return hwp_json_fail(j, "json: string too long");
            buf[k] = c;
        }
        k++;
        j->pos++;
    }
    j->pos++;
    if (buf && cap) buf[k] = '\0';
    j->after_value = true;
    return true;
}

HWP_API bool hwp_json_member(hwp_json *j, char *key, size_t cap) {
    if (!hwp__json_more(j, '}')) return false;
    if (!hwp_json_str(j, key, cap)) return false;
    if (hwp__json_peek(j) != ':') return hwp_json_fail(j, "json: expected ':'");
    j->pos++;
    j->after_value = false;
    return true;
}

/* Digits of an unsigned decimal; false (no error set) on overflow. */
static bool hwp__json_digits(hwp_json *j, uint64_t *v, unsigned *ndig) {
    uint64_t x = 0;
    unsigned k = 0;
    while (j->pos < j->n && j->s[j->pos] >= '0' && j->s[j->pos] <= '9') {
        unsigned d = (unsigned)(j->s[j->pos] - '0');
        if (x > (UINT64_MAX - d) / 10u) return false;
        x = x * 10u + d;
        j->pos++;
        k++;
    }
    *v = x;
    *ndig = k;
    return true;
}

HWP_API bool hwp_json_u64(hwp_json *j, uint64_t *v) {
    unsigned k;
    char c;
    if (j->why) return false;
    c = hwp__json_peek(j);
    if (c == '"') { /* "0x..." */
        uint64_t x = 0;
        size_t start = j->pos;
        unsigned nd = 0;
        if (j->pos + 3 > j->n || j->s[j->pos + 1] != '0' ||
            (j->s[j->pos + 2] != 'x' && j->s[j->pos + 2] != 'X'))
            return hwp_json_fail(j, "json: expected a number or a \"0x\" string");
        j->pos += 3;
        for (; j->pos < j->n && j->s[j->pos] != '"'; j->pos++, nd++) {
            char h = j->s[j->pos];
            unsigned d;
            if (h >= '0' && h <= '9') d = (unsigned)(h - '0');
            else if (h >= 'a' && h <= 'f') d = (unsigned)(h - 'a' + 10);
            else if (h >= 'A' && h <= 'F') d = (unsigned)(h - 'A' + 10);
            else return hwp_json_fail(j, "json: bad hex digit");
            if (nd >= 16) return hwp_json_fail(j, "json: hex number over 64 bits");
            x = (x << 4) | d;
        }
        if (j->pos >= j->n || nd == 0) {
            j->pos = start;
            return hwp_json_fail(j, "json: bad hex string");
        }
        j->pos++;
        *v = x;
        j->after_value = true;
        return true;
    }
    if (c < '0' || c > '9') return hwp_json_fail(j, "json: expected an unsigned integer");
    if (c == '0' && j->pos + 1 < j->n && j->s[j->pos + 1] >= '0' && j->s[j->pos + 1] <= '9') {
        j->pos++; /* JSON writes no leading zeros, and neither does hwprof */
        return hwp_json_fail(j, "json: leading zero");
    }
    if (!hwp__json_digits(j, v, &k)) return hwp_json_fail(j, "json: integer over 64 bits");
    if (j->pos < j->n && (j->s[j->pos] == '.' || j->s[j->pos] == 'e' ||
                          j->s[j->pos] == 'E'))
        return hwp_json_fail(j, "json: expected an integer");
    j->after_value = true;
    return true;
}

HWP_API bool hwp_json_i64(hwp_json *j, int64_t *v) {
    uint64_t u;
    bool neg = false;
    if (j->why) return false;
    if (hwp__json_peek(j) == '-') {
        neg = true;
        j->pos++;
        /* JSON's minus sign is part of the number: no space, no string */
        if (j->pos >= j->n || j->s[j->pos] < '0' || j->s[j->pos] > '9')
            return hwp_json_fail(j, "json: expected a digit after '-'");
    }
    if (!hwp_json_u64(j, &u)) return false;
    if (u > (uint64_t)INT64_MAX + (neg ? 1u : 0u))
        return hwp_json_fail(j, "json: integer out of range");
    *v = neg ? (int64_t)(0 - u) : (int64_t)u;
    return true;
}

HWP_API bool hwp_json_f64(hwp_json *j, double *v) {
    uint64_t ip = 0, fp = 0;
    unsigned ki = 0, kf = 0;
    int ex = 0;
    double x, p10 = 10.0;
    bool neg = false;
    char c;
    if (j->why) return false;
    c = hwp__json_peek(j);
    if (c == 'n') {
        if (j->pos + 4 <= j->n && j->s[j->pos + 1] == 'u' &&
            j->s[j->pos + 2] == 'l' && j->s[j->pos + 3] == 'l') {
            j->pos += 4;
            uint64_t nan_bits = 0x7ff8000000000000ull; /* a quiet NaN */
            hwp__copy(v, &nan_bits, sizeof *v);
            j->after_value = true;
            return true;
        }
        return hwp_json_fail(j, "json: expected a number");
    }
    if (c == '-') {
        neg = true;
        j->pos++;
    }
    if (j->pos >= j->n || j->s[j->pos] < '0' || j->s[j->pos] > '9')
        return hwp_json_fail(j, "json: expected a number");
    if (!hwp__json_digits(j, &ip, &ki)) return hwp_json_fail(j, "json: number too long");
    x = (double)ip;
    if (j->pos < j->n && j->s[j->pos] == '.') {
        double scale = 1.0;
        j->pos++;
        if (!hwp__json_digits(j, &fp, &kf) || kf == 0 || kf > 19)
            return hwp_json_fail(j, "json: bad fraction");
        while (kf--) scale *= 10.0;
        x += (double)fp / scale;
    }
    if (j->pos < j->n && (j->s[j->pos] == 'e' || j->s[j->pos] == 'E')) {
        uint64_t e;
        bool eneg = false;
        j->pos++;
        if (j->pos < j->n && (j->s[j->pos] == '+' || j->s[j->pos] == '-'))
            eneg = j->s[j->pos++] == '-';
        if (!hwp__json_digits(j, &e, &kf) || kf == 0 || e > 400)
            return hwp_json_fail(j, "json: bad exponent");
        for (ex = (int)e; ex; ex >>= 1, p10 *= p10)
            if (ex & 1) x = eneg ? x / p10 : x * p10;
    }
    *v = neg ? -x : x;
    j->after_value = true;
    return true;
}

HWP_API bool hwp_json_bool(hwp_json *j, bool *v) {
    char c;
    if (j->why) return false;
    c = hwp__json_peek(j);
    if (c == 't' && j->pos + 4 <= j->n && j->s[j->pos + 1] == 'r' &&
        j->s[j->pos + 2] == 'u' && j->s[j->pos + 3] == 'e') {
        j->pos += 4;
        *v = true;
    } else if (c == 'f' && j->pos + 5 <= j->n && j->s[j->pos + 1] == 'a' &&
               j->s[j->pos + 2] == 'l' && j->s[j->pos + 3] == 's' &&
               j->s[j->pos + 4] == 'e') {
        j->pos += 5;
        *v = false;
    } else {
        return hwp_json_fail(j, "json: expected true or false");
    }
    j->after_value = true;
    return true;
}

HWP_API bool hwp_json_skip(hwp_json *j) {
    char c;
    if (j->why) return false;
    c = hwp__json_peek(j);
    if (c == '{') {
        if (!hwp_json_object(j)) return false;
        while (hwp_json_member(j, NULL, 0))
            if (!hwp_json_skip(j)) return false;
        return !j->why;
    }
    if (c == '[') {
        if (!hwp_json_array(j)) return false;
        while (hwp_json_next(j))
            if (!hwp_json_skip(j)) return false;
        return !j->why;
    }
    if (c == '"') return hwp_json_str(j, NULL, 0);
    if (c == 't' || c == 'f') {
        bool b;
        return hwp_json_bool(j, &b);
    }
    {
        double d;
        return hwp_json_f64(j, &d);
    }
}

HWP_API bool hwp_json_end(hwp_json *j) {
    if (j->why) return false;
    if (j->depth) return hwp_json_fail(j, "json: unclosed object or array");
    if (hwp__json_peek(j) != '\0' || j->pos < j->n)
        return hwp_json_fail(j, "json: text after the report");
    return true;
}

HWP_API bool hwp_json_envelope(hwp_json *j, const char *model,
                               uint32_t version) {
    char key[16], name[32];
    uint64_t v;
    size_t at;
    if (!hwp_json_object(j)) return false;
    if (!hwp_json_member(j, key, sizeof key) || !hwp_json_key_is(key, "model"))
        return hwp_json_fail(j, "json: a report begins with \"model\"");
    at = j->pos;
    if (!hwp_json_str(j, name, sizeof name)) return false;
    if (!hwp_json_key_is(name, model)) {
        j->pos = at;
        return hwp_json_fail(j, "json: report of another model");
    }
    if (!hwp_json_member(j, key, sizeof key) || !hwp_json_key_is(key, "version"))
        return hwp_json_fail(j, "json: \"version\" must follow \"model\"");
    at = j->pos;
    if (!hwp_json_u64(j, &v)) return false;
    if (v == 0 || v > version) {
        j->pos = at;
        return hwp_json_fail(j, v ? "json: report version newer than this reader"
                                  : "json: report version 0");
    }
    return true;
}

HWP_API hwp_status hwp_json_status(const hwp_json *j, hwp_json_err *err) {
    if (err) {
        err->offset = j->why ? j->err_pos : 0;
        err->why = j->why;
    }
    return j->why ? HWP_EFORMAT : HWP_OK;
}

HWP_API hwp_status hwp_json_read_desc(const char *json, size_t n,
                                      const char *model, hwp_json_obj_fn obj,
                                      void *d, hwp_json_err *err) {
    hwp_json j;
    char key[16];
    bool got = false;
    hwp_json_init(&j, json, n);
    if (hwp_json_envelope(&j, model, 1)) {
        while (hwp_json_member(&j, key, sizeof key)) {
            if (!got && hwp_json_key_is(key, "desc")) got = obj(&j, d);
            else hwp_json_skip(&j);
        }
        if (hwp_json_end(&j) && !got) hwp_json_fail(&j, "json: report without a \"desc\"");
    }
    return hwp_json_status(&j, err);
}

HWP_API hwp_status hwp_json_mismatch(hwp_head *h, hwp_json_err *err,
                                     const char *json, size_t n, const char *why) {
    if (err) {
        hwp_json j;
        char key[16];
        err->offset = 0;
        err->why = why;
        hwp_json_init(&j, json, n);
        if (hwp_json_object(&j))
            while (hwp_json_member(&j, key, sizeof key)) {
                if (hwp_json_key_is(key, "desc")) {
                    err->offset = j.pos;
                    break;
                }
                hwp_json_skip(&j);
            }
    }
    return hwp__fail(h, HWP_EMISMATCH, why);
}

/* ---- field tables ------------------------------------------------------ */

static HWP__UNUSED uint64_t hwp__field_get(const void *base, const hwp_field *f) {
    const unsigned char *p = (const unsigned char *)base + f->off;
    uint16_t v2;
    uint32_t v4;
    uint64_t v8;
    switch (f->size) {
    case 1: return *p;
    case 2: hwp__copy(&v2, p, 2); return v2;
    case 4: hwp__copy(&v4, p, 4); return v4;
    default: hwp__copy(&v8, p, 8); return v8;
    }
}

static HWP__UNUSED void hwp__field_set(void *base, const hwp_field *f, uint64_t v) {
    unsigned char *p = (unsigned char *)base + f->off;
    uint16_t v2 = (uint16_t)v;
    uint32_t v4 = (uint32_t)v;
    switch (f->size) {
    case 1: *p = (unsigned char)v; break;
    case 2: hwp__copy(p, &v2, 2); break;
    case 4: hwp__copy(p, &v4, 4); break;
    default: hwp__copy(p, &v, 8);
    }
}

static HWP__UNUSED void hwp__field_obj_put(const hwp_writer *w, const void *base,
                                           const hwp_field *f, size_t n);

/* "key":value for every field of the table, comma-separated (the members
 * of an object that may hold more). */
static HWP__UNUSED void hwp__field_members(const hwp_writer *w, const void *base,
                                           const hwp_field *f, size_t n) {
    size_t i, k, e;
    for (i = 0; i < n; i++, f++) {
        const unsigned char *p = (const unsigned char *)base + f->off;
        double d;
        hwp__put_key(w, i ? "," : "", f->key);
        switch (f->type) {
        case HWP_FIELD_HEX:
            hwp_put(w, "\"", 1);
            hwp_put_hex(w, hwp__field_get(base, f));
            hwp_put(w, "\"", 1);
            break;
        case HWP_FIELD_F64:
            hwp__copy(&d, p, sizeof d);
            hwp_put_f64(w, d, 9);
            break;
        case HWP_FIELD_ENUM:
            k = (size_t)hwp__field_get(base, f);
            hwp_put_json_str(w, k <= f->hi ? f->names[k] : "?");
            break;
        case HWP_FIELD_BYTES:
        case HWP_FIELD_U64S:
            e = f->type == HWP_FIELD_BYTES ? 1 : 8;
            hwp_put(w, "[", 1);
            for (k = 0; k < f->size; k += e) {
                uint64_t v = p[k];
                if (e == 8) hwp__copy(&v, p + k, 8);
                hwp_put_str_u64(w, k ? "," : "", v);
            }
            hwp_put(w, "]", 1);
            break;
        case HWP_FIELD_SUB:
            hwp__field_obj_put(w, p, f->sub, (size_t)f->hi + 1);
            break;
        default:
            hwp_put_u64(w, hwp__field_get(base, f));
        }
    }
}

/* {...every field of the table...} */
static HWP__UNUSED void hwp__field_obj_put(const hwp_writer *w, const void *base,
                                           const hwp_field *f, size_t n) {
    hwp_put(w, "{", 1);
    hwp__field_members(w, base, f, n);
    hwp_put(w, "}", 1);
}

/* A text report's numbers: pre key eq value post, for each row. */
static HWP__UNUSED void hwp__field_text(const hwp_writer *w, const void *base,
                                        const hwp_field *f, size_t n,
                                        const char *pre, const char *eq,
                                        const char *post) {
    for (; n--; f++) {
        hwp_put_str(w, pre);
        hwp_put_str(w, f->key);
        hwp_put_str_u64(w, eq, hwp__field_get(base, f));
        hwp_put_str(w, post);
    }
}

/* ,"key":{...} */
static HWP__UNUSED void hwp__field_put(const hwp_writer *w, const char *key,
                                       const void *base, const hwp_field *f,
                                       size_t n) {
    hwp__put_key(w, ",", key);
    hwp__field_obj_put(w, base, f, n);
}

/* The row named key, or NULL. */
static HWP__UNUSED const hwp_field *hwp__field_find(const hwp_field *f, size_t n,
                                                    const char *key) {
    for (; n--; f++)
        if (hwp_json_key_is(key, f->key)) return f;
    return NULL;
}

HWP_API const hwp_field *hwp_field_find(const hwp_field *f, size_t n,
                                        const char *name, size_t *off) {
    size_t at = 0;
    if (!f || !name) return NULL;
    while (n--) {
        const char *k = f->key, *s = name;
        while (*k && *k == *s) k++, s++;
        if (*k) {
            f++;
        } else if (!*s) {
            if (off) *off = at + f->off;
            return f;
        } else if (*s == '.' && f->type == HWP_FIELD_SUB) {
            at += f->off;
            name = s + 1;
            n = (size_t)f->hi + 1;
            f = f->sub;
        } else {
            f++;
        }
    }
    return NULL;
}

HWP_API bool hwp_field_set_u64(void *base, const hwp_field *f, size_t off, uint64_t v) {
    hwp_field at;
    if (!base || !f || f->type == HWP_FIELD_SUB || f->type == HWP_FIELD_BYTES ||
        f->type == HWP_FIELD_F64 || f->type == HWP_FIELD_U64S)
        return false;
    if ((f->size < 8 && v >> (8 * f->size)) || (f->names && v > f->hi)) return false;
    at = *f;
    at.off = off;
    hwp__field_set(base, &at, v);
    return true;
}

HWP_API bool hwp_field_set_f64(void *base, const hwp_field *f, size_t off, double v) {
    if (!base || !f || f->type != HWP_FIELD_F64) return false;
    hwp__copy((unsigned char *)base + off, &v, sizeof v);
    return true;
}

static HWP__UNUSED bool hwp__field_read(hwp_json *j, void *base,
                                        const hwp_field *f, size_t n, bool all);

/* One member's value (the cursor after its key) into row f of base. Only
 * the member's width is checked here: ranges are the fill's. */
static HWP__UNUSED bool hwp__field_value(hwp_json *j, void *base,
                                         const hwp_field *f) {
    unsigned char *p = (unsigned char *)base + f->off;
    char name[32];
    size_t k, at = j->pos;
    uint64_t v;
    double d;
    switch (f->type) {
    case HWP_FIELD_SUB:
        return hwp__field_read(j, p, f->sub, (size_t)f->hi + 1, false);
    case HWP_FIELD_BYTES:
        if (!hwp_json_array(j)) return false;
        for (k = 0; hwp_json_next(j); k++) {
            if (!hwp_json_u64(j, &v)) return false;
            if (k == f->size || v > 255)
                return hwp_json_fail(j, "json: too many bytes, or one over 255");
            p[k] = (unsigned char)v;
        }
        return !j->why;
    case HWP_FIELD_U64S:
        if (!hwp_json_array(j)) return false;
        for (k = 0; hwp_json_next(j); k += 8) {
            if (k == f->size) return hwp_json_fail(j, f->bad);
            if (!hwp_json_u64(j, &v)) return false;
            hwp__copy(p + k, &v, 8);
        }
        return !j->why && (k == f->size || hwp_json_fail(j, f->bad));
    case HWP_FIELD_F64:
        if (!hwp_json_f64(j, &d)) return false;
        hwp__copy(p, &d, sizeof d);
        return true;
    case HWP_FIELD_ENUM:
        if (!hwp_json_str(j, name, sizeof name)) return false;
        for (v = 0; v <= f->hi && !hwp_json_key_is(name, f->names[v]); v++) {}
        if (v > f->hi) {
            j->pos = at;
            return hwp_json_fail(j, f->bad);
        }
        break;
    default:
        if (!hwp_json_u64(j, &v)) return false;
        if (f->size < 8 && v >> (8 * f->size)) {
            j->pos = at;
            return hwp_json_fail(j, "json: value out of the field's range");
        }
    }
    hwp__field_set(base, f, v);
    return true;
}

/* Reads an object written by hwp__field_put into base: every key must be
 * one of the table's (at most 64), each at most once; absent ones are
 * left as they were, or with `all` refused. */
static HWP__UNUSED bool hwp__field_read(hwp_json *j, void *base,
                                        const hwp_field *f, size_t n, bool all) {
    char key[32];
    uint64_t seen = 0, bit;
    const hwp_field *r;
    HWP_ASSERT(n <= 64);
    if (!hwp_json_object(j)) return false;
    while (hwp_json_member(j, key, sizeof key)) {
        if (!(r = hwp__field_find(f, n, key))) return hwp_json_fail(j, "json: unknown field");
        bit = (uint64_t)1 << (r - f);
        if (seen & bit) return hwp_json_fail(j, "json: field given twice");
        seen |= bit;
        if (!hwp__field_value(j, base, r)) return false;
    }
    if (!j->why && all && seen != hwp_mask64((unsigned)n))
        hwp_json_fail(j, "json: a field is missing");
    return !j->why;
}

/* The first field where a and b differ, or NULL. */
static HWP__UNUSED const hwp_field *hwp__field_diff(const void *a, const void *b,
                                                    const hwp_field *f, size_t n) {
    size_t k;
    for (; n--; f++) {
        const unsigned char *p = (const unsigned char *)a + f->off;
        const unsigned char *q = (const unsigned char *)b + f->off;
        if (f->type == HWP_FIELD_SUB) {
            const hwp_field *d = hwp__field_diff(p, q, f->sub, (size_t)f->hi + 1);
            if (d) return d;
        } else if (f->type == HWP_FIELD_BYTES || f->type == HWP_FIELD_U64S) {
            for (k = 0; k < f->size; k++)
                if (p[k] != q[k]) return f;
        } else if (hwp__field_get(a, f) != hwp__field_get(b, f)) {
            return f;
        }
    }
    return NULL;
}

/* A zero field takes its default, then must be in its range (a default
 * always is). Doubles move to the 9-decimal grid of the reports, so an
 * instance runs with what its report states and the report reads back
 * to its desc. */
static HWP__UNUSED bool hwp__field_fill_one(void *base, const hwp_field *f) {
    unsigned char *p = (unsigned char *)base + f->off;
    uint64_t v;
    double d;
    size_t k;
    switch (f->type) {
    case HWP_FIELD_SUB: /* its owner's fill */
    case HWP_FIELD_U64S:
        return true;
    case HWP_FIELD_BYTES:
        for (k = 0; k < f->size; k++)
            if (p[k] < f->lo || p[k] > f->hi) return false;
        return true;
    case HWP_FIELD_F64:
        hwp__copy(&d, p, sizeof d);
        if (d == 0.0) d = (double)f->def / 1e9;
        if (!(d >= 0.0 && d < (double)f->hi / 1e9 + 1.0)) return false;
        v = (uint64_t)(d * 1e9 + 0.5);
        d = (double)v / 1e9;
        hwp__copy(p, &d, sizeof d);
        return v >= f->lo && v <= f->hi;
    default:
        v = hwp__field_get(base, f);
        if (!v) hwp__field_set(base, f, v = f->def);
        return v == f->def ||
               (f->flags & HWP_FIELD_NONE && v == hwp_mask64(8 * f->size)) ||
               (v >= f->lo && v <= f->hi &&
                !(f->flags & HWP_FIELD_POW2 && !hwp_is_pow2(v)));
    }
}

/* Every field through hwp__field_fill_one (all take their defaults even
 * past a bad one); the first bad field's reason, or NULL. */
static HWP__UNUSED const char *hwp__field_fill(void *base, const hwp_field *f,
                                               size_t n) {
    const char *why = NULL;
    for (; n--; f++)
        if (!hwp__field_fill_one(base, f) && !why) why = f->bad;
    return why;
}

/* o = *d (the zero desc when d is NULL; d may be o), then
 * hwp__field_fill. */
static HWP__UNUSED const char *hwp__field_fill_from(void *o, const void *d, size_t size,
                                                    const hwp_field *f, size_t n) {
    if (!d) hwp__zero(o, size);
    else if (d != o) hwp__copy(o, d, size);
    return hwp__field_fill(o, f, n);
}

/* A desc object (the cursor at its '{') through its table into d, zeroed
 * first; with `fill`, completed and validated like init's, a bad one
 * refused at the object's offset. */
static HWP__UNUSED bool hwp__field_read_filled(hwp_json *j, void *d, size_t dsize,
                                               const hwp_field *f, size_t n,
                                               const char *(*fill)(void *)) {
    size_t at = j->pos;
    const char *why;
    hwp__zero(d, dsize);
    if (!hwp__field_read(j, d, f, n, false)) return false;
    if (fill && (why = fill(d)) != NULL) {
        j->pos = at;
        return hwp_json_fail(j, why);
    }
    return true;
}

/* read_desc for any component: the desc object through its table. */
typedef struct hwp__field_ctx {
    void *desc;
    size_t dsize;
    const hwp_field *f;
    size_t n;
    const char *(*fill)(void *);
} hwp__field_ctx;

static HWP__UNUSED bool hwp__field_obj(hwp_json *j, void *ctx) {
    const hwp__field_ctx *c = (const hwp__field_ctx *)ctx;
    return hwp__field_read_filled(j, c->desc, c->dsize, c->f, c->n, c->fill);
}

static HWP__UNUSED hwp_status hwp__field_read_desc(void *desc, size_t dsize,
                                                   const char *model,
                                                   const hwp_field *f, size_t n,
                                                   const char *(*fill)(void *),
                                                   const char *json, size_t len,
                                                   hwp_json_err *err) {
    hwp__field_ctx c;
    if (!desc || !json) return HWP_EINVAL;
    hwp__zero(desc, dsize);
    c.desc = desc;
    c.dsize = dsize;
    c.f = f;
    c.n = n;
    c.fill = fill;
    return hwp__json_read_desc(json, len, model, hwp__field_obj, &c, err);
}

/* The start of a component's read_json: the envelope, then "desc" read
 * into d (zeroed by the caller), completed by `fill` where the component
 * has defaults, and equal to the component's own; a different one is
 * refused naming the field. Leaves j at the members after "desc". */
static HWP__UNUSED hwp_status hwp__field_begin(hwp_json *j, hwp_head *head,
                                               const char *model, void *d,
                                               const void *own, const hwp_field *f,
                                               size_t n, const char *(*fill)(void *),
                                               hwp_json_err *err) {
    const hwp_field *diff;
    const char *bad;
    char key[16];
    /* the first error sticks: a bad envelope keeps its own reason */
    if (!hwp_json_envelope(j, model, 1) || !hwp_json_member(j, key, sizeof key) ||
        !hwp_json_key_is(key, "desc"))
        hwp_json_fail(j, "json: \"desc\" must follow \"version\"");
    if (j->why || !hwp__field_read(j, d, f, n, false))
        return hwp__fail(head, hwp_json_status(j, err), j->why);
    bad = fill ? fill(d) : NULL;
    if (!bad && (diff = hwp__field_diff(own, d, f, n)) != NULL) bad = diff->why;
    if (bad) {
        hwp_json_fail(j, "json: the report's desc differs from the component's");
        hwp_json_status(j, err);
        return hwp__fail(head, HWP_EMISMATCH, bad);
    }
    return HWP_OK;
}

#ifdef __cplusplus
}
#endif

#endif /* HWPROF_IMPL */
