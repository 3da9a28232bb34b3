/* SPDX-License-Identifier: MIT */
/* examples/lua/hwlua_map.h: the exact profiles' table: 64-bit key -> a
 * few 64-bit counters, open addressing, doubling when 3/4 full. Host code
 * (the exact ground truth is the host's, not a model's), so it may
 * allocate; an allocation failure stops exact profiling and is reported,
 * the models go on. */
#ifndef HWLUA_MAP_H
#define HWLUA_MAP_H

#include <stdint.h>
#include <stdlib.h>

#define HWLUA_MAP_VALS 4

typedef struct hwlua_ent {
    uint64_t key; /* 0 marks an empty slot: keys are made non-zero */
    uint64_t v[HWLUA_MAP_VALS];
} hwlua_ent;

typedef struct hwlua_map {
    hwlua_ent *e;
    size_t cap, n; /* cap is a power of two */
    int failed;    /* an allocation failed: counts are incomplete */
} hwlua_map;

static uint64_t hwlua_map_hash(uint64_t k) {
    k ^= k >> 33;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return k;
}

static int hwlua_map_grow(hwlua_map *m) {
    size_t cap = m->cap ? m->cap * 2 : 1024, i;
    hwlua_ent *e = (hwlua_ent *)calloc(cap, sizeof *e);
    if (!e) {
        m->failed = 1;
        return 0;
    }
    for (i = 0; i < m->cap; i++)
        if (m->e[i].key) {
            size_t j = hwlua_map_hash(m->e[i].key) & (cap - 1);
            while (e[j].key) j = (j + 1) & (cap - 1);
            e[j] = m->e[i];
        }
    free(m->e);
    m->e = e;
    m->cap = cap;
    return 1;
}

/* The entry of `key` (made non-zero by the caller), created on first use;
 * NULL only when the table could not grow. */
static hwlua_ent *hwlua_map_get(hwlua_map *m, uint64_t key) {
    size_t j;
    if (4 * (m->n + 1) > 3 * m->cap && !hwlua_map_grow(m)) return NULL;
    j = hwlua_map_hash(key) & (m->cap - 1);
    while (m->e[j].key && m->e[j].key != key) j = (j + 1) & (m->cap - 1);
    if (!m->e[j].key) {
        m->e[j].key = key;
        m->n++;
    }
    return &m->e[j];
}

/* The entry of `key`, or NULL when it has none (nothing is created). */
static hwlua_ent *hwlua_map_find(const hwlua_map *m, uint64_t key) {
    size_t j;
    if (!m->cap) return NULL;
    j = hwlua_map_hash(key) & (m->cap - 1);
    while (m->e[j].key && m->e[j].key != key) j = (j + 1) & (m->cap - 1);
    return m->e[j].key ? &m->e[j] : NULL;
}

#endif
