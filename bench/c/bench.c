/*
 * bench.c — Diffuser C benchmark: the library through its C API against hand-written
 * caching code, on the scenarios of the Swift benchmark (bench/swift).
 *
 *   diffuser_bench_c [--rounds N] [--tsv] [--only SCENARIO]
 *
 * Model: a screen of 100 sections x 10 fields (5 strings longer than 15 bytes, 5 ints).
 * A screen is an array of pointers to sections, so an edited screen can share every
 * unchanged section with the base model (what copy-on-write gives in Swift).
 *
 * Library: into_all(sections: map(section_i, into_all(fields: map(field_j, into(sink)))))
 * built through the C API, one dfs_diffuser_map per map. A second form, `fields`, is the
 * same tree with every map a dfs_diffuser_map_field: the section pointer and each member
 * are read by the core, at their offsets, instead of by a transform callback (C's way of
 * selecting a member). Before measuring, every renderer must run the same effects on the
 * same screens. Screen, section and string types are made with dfs_type_new
 * (equality comparing contents, with an identity fast path); values are borrowed (no
 * retain/release) because the models outlive the runs. Ints travel in the pointer
 * (dfs_type_pointer).
 *
 * Baselines by hand: `hand` keeps flat arrays of the previous leaf values and compares
 * every leaf on every run; `hand-tree` prunes like the diffuser: screen, then section,
 * then leaf. A `floor` (printed as c-floor) is hand-tree reaching every value through
 * the first form's callbacks, and for build one block per combinator: the least any
 * library with this API does. The `node floor` does the same with one node per
 * combinator, and the `handle floor` builds and runs that node tree through checked
 * handles, as any C API that turns a bad handle into an error must.
 *
 * Prints ns per run (median of interleaved rounds in one process) and the native memory
 * per leaf node of a built tree (mallinfo2 before and after building many trees).
 *
 * One program because the comparison is only fair if a reader can check in one place
 * that every renderer gets the same screens, runs the same effects
 * (check_renderers_agree, before anything is timed) and is timed by the same loop.
 */
#include <diffuser.h>

#include <malloc.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SECTIONS 100
#define FIELDS 10
#define STRINGS 5
#define LEAVES (SECTIONS * FIELDS)

typedef struct section {
    const char *s[STRINGS];
    long i[FIELDS - STRINGS];
} section;

typedef struct screen {
    const section *sections[SECTIONS];
} screen;

/* ------------------------------------------------------------------------------------
 * Allocations of the models, freed at exit.
 * ------------------------------------------------------------------------------------ */

static void **owned;
static size_t owned_count, owned_capacity;

static void *own(void *p) {
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    if (owned_count == owned_capacity) {
        owned_capacity = owned_capacity ? owned_capacity * 2 : 1024;
        owned = realloc(owned, owned_capacity * sizeof *owned);
    }
    owned[owned_count++] = p;
    return p;
}

__attribute__((format(printf, 1, 2))) static char *own_string(const char *fmt, ...) {
    char buffer[96];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buffer, sizeof buffer, fmt, ap);
    va_end(ap);
    return own(strdup(buffer));
}

static screen *make_screen(int seed) {
    screen *sc = own(malloc(sizeof *sc));
    for (int i = 0; i < SECTIONS; i++) {
        section *s = own(malloc(sizeof *s));
        for (int j = 0; j < STRINGS; j++) s->s[j] = own_string("section-%d-field-%d-value-%d", i, j, seed);
        for (int j = 0; j < FIELDS - STRINGS; j++) s->i[j] = i * 10 + j;
        sc->sections[i] = s;
    }
    return sc;
}

/* An equal screen sharing no storage: new sections, copies of every string. */
static screen *deep_copy(const screen *base) {
    screen *sc = own(malloc(sizeof *sc));
    for (int i = 0; i < SECTIONS; i++) {
        section *s = own(malloc(sizeof *s));
        *s = *base->sections[i];
        for (int j = 0; j < STRINGS; j++) s->s[j] = own(strdup(base->sections[i]->s[j]));
        sc->sections[i] = s;
    }
    return sc;
}

/* A new screen sharing every section with `base`. */
static screen *shallow_copy(const screen *base) {
    screen *sc = own(malloc(sizeof *sc));
    *sc = *base;
    return sc;
}

/* Changes leaf `leaf`. With copy_section, the section is copied first (the others stay
 * shared, as with copy-on-write); without, it is edited in place (a uniquely owned copy). */
static void edit(screen *sc, int leaf, int generation, int copy_section) {
    int i = leaf / FIELDS, j = leaf % FIELDS;
    section *s;
    if (copy_section) {
        s = own(malloc(sizeof *s));
        *s = *sc->sections[i];
        sc->sections[i] = s;
    } else {
        s = (section *)sc->sections[i];
    }
    if (j < STRINGS) s->s[j] = own_string("changed-leaf-%d-generation-%d", leaf, generation);
    else s->i[j - STRINGS] = -generation - leaf;
}

/* ------------------------------------------------------------------------------------
 * Equality (shared by the library's types and the hand-written baselines) and the sink
 * ------------------------------------------------------------------------------------ */

static inline int str_eq(const char *a, const char *b) { return a == b || strcmp(a, b) == 0; }

static inline int section_eq(const section *a, const section *b) {
    if (a == b) return 1;
    for (int j = 0; j < STRINGS; j++)
        if (!str_eq(a->s[j], b->s[j])) return 0;
    for (int j = 0; j < FIELDS - STRINGS; j++)
        if (a->i[j] != b->i[j]) return 0;
    return 1;
}

static inline int screen_eq(const screen *a, const screen *b) {
    if (a == b) return 1;
    for (int i = 0; i < SECTIONS; i++)
        if (!section_eq(a->sections[i], b->sections[i])) return 0;
    return 1;
}

/* Cheap but not removable: folds a value into a global printed at the end. */
static uint64_t sink_accumulator;

__attribute__((noinline)) static void sink(uint64_t value) { sink_accumulator = sink_accumulator * 31 + value; }

static inline uint64_t string_hash(const char *s) { return (uint64_t)strlen(s) + (uint8_t)s[0]; }

static inline uint64_t field_hash(const section *s, int j) {
    return j < STRINGS ? string_hash(s->s[j]) : (uint64_t)(int64_t)s->i[j - STRINGS];
}

/* ------------------------------------------------------------------------------------
 * The library
 * ------------------------------------------------------------------------------------ */

static dfs_type *screen_type, *section_type, *string_type;

static int screen_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return screen_eq(a, b);
}

static int section_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return section_eq(a, b);
}

static int string_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return str_eq(a, b);
}

static int select_section(const void *value, const void **out, void *ctx) {
    *out = ((const screen *)value)->sections[(intptr_t)ctx];
    return 0;
}

static int select_string(const void *value, const void **out, void *ctx) {
    *out = ((const section *)value)->s[(intptr_t)ctx];
    return 0;
}

static int select_int(const void *value, const void **out, void *ctx) {
    *out = (const void *)(intptr_t)((const section *)value)->i[(intptr_t)ctx];
    return 0;
}

static int sink_string(const void *value, void *ctx) {
    (void)ctx;
    sink(string_hash(value));
    return 0;
}

static int sink_int(const void *value, void *ctx) {
    (void)ctx;
    sink((uint64_t)(int64_t)(intptr_t)value);
    return 0;
}

static void must(dfs_status status, const char *what) {
    if (status != DFS_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, dfs_status_name(status), dfs_last_error());
        exit(1);
    }
}

static void make_types(void) {
    must(dfs_type_new("screen", screen_equal, NULL, NULL, NULL, NULL, &screen_type), "type screen");
    must(dfs_type_new("section", section_equal, NULL, NULL, NULL, NULL, &section_type), "type section");
    must(dfs_type_new("string", string_equal, NULL, NULL, NULL, NULL, &string_type), "type string");
}

_Static_assert(sizeof(long) == sizeof(void *), "ints and pointers are both one word");

/* map(member, child) over `type`'s values, the member selected by `select` with `ctx`,
 * or, in the fields form (`fields`), read in place at `offset` (a pointer-sized member). */
static dfs_diffuser *member(int fields, dfs_type *type, dfs_transform_fn select, intptr_t ctx, size_t offset,
                            dfs_diffuser *child) {
    dfs_diffuser *mapped = NULL;
    if (fields)
        must(dfs_diffuser_map_field(type, offset, sizeof(void *), child, &mapped), "map_field");
    else
        must(dfs_diffuser_map(type, select, (void *)ctx, NULL, child, &mapped), "map");
    dfs_diffuser_release(child);
    return mapped;
}

/* The diffuser of one section: one gated leaf per field. */
static dfs_diffuser *build_section(int fields) {
    dfs_diffuser *leaves[FIELDS];
    for (int j = 0; j < FIELDS; j++) {
        dfs_diffuser *leaf = NULL;
        if (j < STRINGS) {
            must(dfs_diffuser_into(string_type, sink_string, NULL, NULL, &leaf), "into");
            leaves[j] = member(fields, section_type, select_string, j,
                               offsetof(section, s) + (size_t)j * sizeof(const char *), leaf);
        } else {
            must(dfs_diffuser_into(dfs_type_pointer(), sink_int, NULL, NULL, &leaf), "into");
            leaves[j] = member(fields, section_type, select_int, j - STRINGS,
                               offsetof(section, i) + (size_t)(j - STRINGS) * sizeof(long), leaf);
        }
    }
    dfs_diffuser *all = NULL;
    must(dfs_diffuser_into_all(section_type, leaves, FIELDS, &all), "into_all");
    for (int j = 0; j < FIELDS; j++) dfs_diffuser_release(leaves[j]);
    return all;
}

/* The library's tree: with transform callbacks, or (`fields`) with field maps. */
static dfs_diffuser *build_tree(int fields) {
    dfs_diffuser *sections[SECTIONS];
    for (int i = 0; i < SECTIONS; i++)
        sections[i] = member(fields, screen_type, select_section, i,
                             offsetof(screen, sections) + (size_t)i * sizeof(const section *), build_section(fields));
    dfs_diffuser *root = NULL;
    must(dfs_diffuser_into_all(screen_type, sections, SECTIONS, &root), "into_all");
    for (int i = 0; i < SECTIONS; i++) dfs_diffuser_release(sections[i]);
    return root;
}

static dfs_diffuser *build_library(void) { return build_tree(0); }

/* The fields form: the same tree with every map a dfs_diffuser_map_field, the member
 * read in place by the core instead of by a transform. */
static dfs_diffuser *build_library_fields(void) { return build_tree(1); }

/* ------------------------------------------------------------------------------------
 * Renderers: the library (two forms) and the two baselines behind one interface
 * ------------------------------------------------------------------------------------ */

typedef struct renderer {
    const char *name;
    void *(*make)(void);
    void (*render)(void *self, const screen *sc);
    void (*destroy)(void *self);
} renderer;

static void *library_make(void) { return build_library(); }


static void *fields_make(void) { return build_library_fields(); }

static void library_render(void *self, const screen *sc) {
    if (dfs_diffuser_run(self, sc) != DFS_OK) {
        fprintf(stderr, "run failed: %s\n", dfs_last_error());
        exit(1);
    }
}

static void library_destroy(void *self) { dfs_diffuser_release(self); }

/* hand: flat arrays of previous leaf values, every leaf compared each run. */
typedef struct hand {
    const char *strings[SECTIONS * STRINGS]; /* NULL: never rendered */
    long ints[SECTIONS * (FIELDS - STRINGS)];
    unsigned char has_int[SECTIONS * (FIELDS - STRINGS)];
} hand;

static void *hand_make(void) { return calloc(1, sizeof(hand)); }

static void hand_render(void *self, const screen *sc) {
    hand *h = self;
    for (int i = 0; i < SECTIONS; i++) {
        const section *s = sc->sections[i];
        for (int k = 0; k < STRINGS; k++) {
            const char **old = &h->strings[i * STRINGS + k];
            if (*old == NULL || !str_eq(*old, s->s[k])) {
                sink(string_hash(s->s[k]));
                *old = s->s[k];
            }
        }
        for (int k = 0; k < FIELDS - STRINGS; k++) {
            int at = i * (FIELDS - STRINGS) + k;
            if (!h->has_int[at] || h->ints[at] != s->i[k]) {
                sink((uint64_t)(int64_t)s->i[k]);
                h->ints[at] = s->i[k];
                h->has_int[at] = 1;
            }
        }
    }
}

/* hand-tree: compare the screen, then each section, then each leaf of a changed one. */
typedef struct hand_tree {
    const screen *screen;
    const section *sections[SECTIONS];
} hand_tree;

static void *hand_tree_make(void) { return calloc(1, sizeof(hand_tree)); }

static void hand_tree_render(void *self, const screen *sc) {
    hand_tree *t = self;
    if (t->screen != NULL && screen_eq(t->screen, sc)) return;
    for (int i = 0; i < SECTIONS; i++) {
        const section *s = sc->sections[i], *old = t->sections[i];
        if (old == NULL) {
            for (int j = 0; j < FIELDS; j++) sink(field_hash(s, j));
            t->sections[i] = s;
            continue;
        }
        if (section_eq(old, s)) continue;
        for (int k = 0; k < STRINGS; k++)
            if (!str_eq(old->s[k], s->s[k])) sink(string_hash(s->s[k]));
        for (int k = 0; k < FIELDS - STRINGS; k++)
            if (old->i[k] != s->i[k]) sink((uint64_t)(int64_t)s->i[k]);
        t->sections[i] = s;
    }
    t->screen = sc;
}


/* floor: not a baseline to beat but the least work any library driven through this C
 * API's callbacks must do (the `c` form). It prunes as hand-tree does, but reaches every
 * value through the callbacks the library is given: the screen's, a section's and a
 * string's equality (after an identity test, as the library's types have), the part
 * transforms (select_section, select_string, select_int) and the effects, all through
 * function pointers kept per node, and it keeps a cache per leaf as a gate does: the new
 * value after every run, equal or not, so that the next run compares with the last value
 * (the reference semantics; comparing with an older, identical pointer would be cheaper
 * and wrong). A library can only add to this. Its make is the floor of `build`: one block per
 * combinator of the tree (2,201), each keeping its callback, and the per-leaf caches;
 * nothing else. */
typedef struct floor_call {
    dfs_transform_fn select;
    void *ctx;
} floor_call;

typedef struct floor_node {
    floor_call call;
    dfs_effect_fn effect;
    struct floor_node *child;
} floor_node;

typedef struct floor_tree {
    dfs_equal_fn screen_equal, section_equal, string_equal;
    floor_node *sections[SECTIONS];                /* a map per section */
    floor_node *fields[SECTIONS][FIELDS];          /* a map per field, its child the into */
    void *fan_outs[SECTIONS + 1];                  /* the intoAll blocks: kept, not used */
    const void *screen;
    const void *section_cache[SECTIONS];
    const void *leaf_cache[SECTIONS][FIELDS];
    unsigned char has_leaf[SECTIONS][FIELDS];
} floor_tree;

static floor_node *floor_map(dfs_transform_fn select, intptr_t ctx, floor_node *child) {
    floor_node *n = malloc(sizeof *n);
    n->call = (floor_call){select, (void *)ctx};
    n->effect = NULL;
    n->child = child;
    return n;
}

static floor_node *floor_into(dfs_effect_fn effect) {
    floor_node *n = malloc(sizeof *n);
    n->call = (floor_call){NULL, NULL};
    n->effect = effect;
    n->child = NULL;
    return n;
}

static void *floor_make(void) {
    floor_tree *t = calloc(1, sizeof *t);
    t->screen_equal = screen_equal;
    t->section_equal = section_equal;
    t->string_equal = string_equal;
    for (int i = 0; i < SECTIONS; i++) {
        for (int j = 0; j < FIELDS; j++)
            t->fields[i][j] = j < STRINGS ? floor_map(select_string, j, floor_into(sink_string))
                                          : floor_map(select_int, j - STRINGS, floor_into(sink_int));
        t->fan_outs[i] = malloc(sizeof(floor_node *) * FIELDS);
        t->sections[i] = floor_map(select_section, i, NULL);
    }
    t->fan_outs[SECTIONS] = malloc(sizeof(floor_node *) * SECTIONS);
    return t;
}

static void floor_destroy(void *self) {
    floor_tree *t = self;
    for (int i = 0; i < SECTIONS; i++) {
        for (int j = 0; j < FIELDS; j++) {
            free(t->fields[i][j]->child);
            free(t->fields[i][j]);
        }
        free(t->sections[i]);
    }
    for (int i = 0; i <= SECTIONS; i++) free(t->fan_outs[i]);
    free(t);
}

static inline int floor_equal(dfs_equal_fn equal, const void *a, const void *b) {
    return a == b || equal(a, b, NULL);
}

static void floor_render(void *self, const screen *sc) {
    floor_tree *t = self;
    if (t->screen != NULL && floor_equal(t->screen_equal, t->screen, sc)) {
        t->screen = sc;
        return;
    }
    for (int i = 0; i < SECTIONS; i++) {
        const floor_node *m = t->sections[i];
        const void *s = NULL;
        m->call.select(sc, &s, m->call.ctx);
        if (t->section_cache[i] != NULL && floor_equal(t->section_equal, t->section_cache[i], s)) {
            t->section_cache[i] = s;
            continue;
        }
        t->section_cache[i] = s;
        for (int j = 0; j < FIELDS; j++) {
            const floor_node *f = t->fields[i][j];
            const void *part = NULL;
            f->call.select(s, &part, f->call.ctx);
            int same = t->has_leaf[i][j] &&
                       (j < STRINGS ? floor_equal(t->string_equal, t->leaf_cache[i][j], part)
                                    : t->leaf_cache[i][j] == part);
            if (same) {
                t->leaf_cache[i][j] = part;
                continue;
            }
            f->child->effect(part, NULL);
            t->leaf_cache[i][j] = part;
            t->has_leaf[i][j] = 1;
        }
    }
    t->screen = sc;
}

/* node floor: the least a library does that keeps one node per combinator, as this
 * one must (a diffuser handle is a node, and a node used twice shares its cache): each
 * node a separate block holding what its combinator was given and its cache, reached
 * from its parent through a function pointer (a parent cannot know its child's kind),
 * with a status checked after every call. It does what floor_render does, through the
 * same callbacks, in the same order; the gap between the two is the price of the tree's
 * shape, which no library of composable nodes avoids. Fewer nodes than the library:
 * intoAll is one node here (gate and fan-out), and into keeps its effect in place. */
typedef struct nf_node nf_node;
typedef int (*nf_step_fn)(nf_node *self, const void *value);
struct nf_node {
    nf_step_fn step;
};

typedef struct nf_gate { /* into(effect) and intoAll(children): equality-gated */
    nf_node base;
    dfs_equal_fn equal; /* NULL: identity (dfs_type_pointer) */
    const void *cache;
    int has;
    dfs_effect_fn effect; /* into */
    nf_node **children;   /* intoAll */
    int count;
} nf_gate;

typedef struct nf_map {
    nf_node base;
    dfs_transform_fn select;
    void *ctx;
    nf_node *child;
} nf_map;

static int nf_gate_step(nf_node *self, const void *value) {
    nf_gate *g = (nf_gate *)self;
    if (g->has && (g->cache == value || (g->equal != NULL && g->equal(g->cache, value, NULL)))) {
        g->cache = value;
        return 0;
    }
    if (g->effect != NULL) {
        int code = g->effect(value, NULL);
        if (code != 0) return code;
    }
    for (int i = 0; i < g->count; i++) {
        int code = g->children[i]->step(g->children[i], value);
        if (code != 0) return code;
    }
    g->cache = value;
    g->has = 1;
    return 0;
}

static int nf_map_step(nf_node *self, const void *value) {
    nf_map *m = (nf_map *)self;
    const void *part = NULL;
    int code = m->select(value, &part, m->ctx);
    if (code != 0) return code;
    return m->child->step(m->child, part);
}

static nf_node *nf_gate_new(dfs_equal_fn equal, dfs_effect_fn effect, nf_node **children, int count) {
    nf_gate *g = calloc(1, sizeof *g);
    g->base.step = nf_gate_step;
    g->equal = equal;
    g->effect = effect;
    g->children = children;
    g->count = count;
    return &g->base;
}

static nf_node *nf_map_new(dfs_transform_fn select, intptr_t ctx, nf_node *child) {
    nf_map *m = malloc(sizeof *m);
    m->base.step = nf_map_step;
    m->select = select;
    m->ctx = (void *)ctx;
    m->child = child;
    return &m->base;
}

static void *node_floor_make(void) {
    nf_node **sections = malloc(sizeof(nf_node *) * SECTIONS);
    for (int i = 0; i < SECTIONS; i++) {
        nf_node **fields = malloc(sizeof(nf_node *) * FIELDS);
        for (int j = 0; j < FIELDS; j++)
            fields[j] = j < STRINGS ? nf_map_new(select_string, j, nf_gate_new(string_equal, sink_string, NULL, 0))
                                    : nf_map_new(select_int, j - STRINGS, nf_gate_new(NULL, sink_int, NULL, 0));
        sections[i] = nf_map_new(select_section, i, nf_gate_new(section_equal, NULL, fields, FIELDS));
    }
    return nf_gate_new(screen_equal, NULL, sections, SECTIONS);
}

static void node_floor_render(void *self, const screen *sc) {
    nf_node *root = self;
    if (root->step(root, sc) != 0) {
        fprintf(stderr, "node floor failed\n");
        exit(1);
    }
}

static void node_floor_destroy(void *self) {
    nf_gate *root = self;
    for (int i = 0; i < root->count; i++) {
        nf_map *section = (nf_map *)root->children[i];
        nf_gate *fan = (nf_gate *)section->child;
        for (int j = 0; j < fan->count; j++) {
            nf_map *field = (nf_map *)fan->children[j];
            free(field->child);
            free(field);
        }
        free(fan->children);
        free(fan);
        free(section);
    }
    free(root->children);
    free(root);
}

/* handle floor: the node floor built and run through the least a C API with checked
 * handles must do, as this one is (a released or forged handle is an error, never a
 * crash). A handle is a slot index and a generation, checked under a lock on every
 * call; a node carries an atomic reference count, since a node may be shared by trees
 * run on other threads. Building a combinator is one call that, under the lock, checks
 * the type's handle and each child's, takes a reference to each child and registers the
 * new node; the caller then releases each child's handle, another call under the lock.
 * A run checks its handle and takes a reference for the run. Each node is one block
 * with its count; types are checked but not counted. The gap between this and the node
 * floor is the price of checked handles; what lies above it is the library's own. */
typedef struct hf_record {
    atomic_long references;
    int is_gate;
    union {
        nf_map map;
        nf_gate gate;
    } node;
} hf_record;

typedef struct hf_slot {
    uint32_t generation;
    uint32_t references; /* the caller's; 0: free */
    int kind;            /* 0: type, 1: diffuser */
    hf_record *record;
} hf_slot;

static struct {
    atomic_uint lock;
    hf_slot *slots;
    int count, capacity;
    int *free;
    int free_count, free_capacity;
} hf_table;

static void hf_lock(void) {
    unsigned expected = 0;
    while (!atomic_compare_exchange_weak_explicit(&hf_table.lock, &expected, 1, memory_order_acquire,
                                                  memory_order_relaxed))
        expected = 0;
}

static void hf_unlock(void) { atomic_exchange_explicit(&hf_table.lock, 0, memory_order_release); }

/* A new slot holding `record` (NULL for a type), with the lock held. */
static uintptr_t hf_insert(hf_record *record, int kind) {
    int i;
    if (hf_table.free_count > 0) {
        i = hf_table.free[--hf_table.free_count];
    } else {
        if (hf_table.count == hf_table.capacity) {
            hf_table.capacity = hf_table.capacity ? hf_table.capacity * 2 : 64;
            hf_table.slots = realloc(hf_table.slots, sizeof *hf_table.slots * (size_t)hf_table.capacity);
        }
        i = hf_table.count++;
        hf_table.slots[i].generation = 1;
    }
    hf_table.slots[i].references = 1;
    hf_table.slots[i].kind = kind;
    hf_table.slots[i].record = record;
    return (uintptr_t)hf_table.slots[i].generation << 32 | (uintptr_t)(i + 1);
}

/* The slot of a live handle of `kind`, with the lock held; exits on a bad handle. */
static hf_slot *hf_live(uintptr_t handle, int kind) {
    long i = (long)(handle & 0xffffffffu) - 1;
    if (i < 0 || i >= hf_table.count || hf_table.slots[i].generation != (uint32_t)(handle >> 32) ||
        hf_table.slots[i].references == 0 || hf_table.slots[i].kind != kind) {
        fprintf(stderr, "handle floor: bad handle\n");
        exit(1);
    }
    return &hf_table.slots[i];
}

static hf_record *hf_of(nf_node *node) {
    return (hf_record *)((char *)node - offsetof(hf_record, node));
}

static void hf_drop(hf_record *r) {
    if (atomic_fetch_sub_explicit(&r->references, 1, memory_order_acq_rel) != 1) return;
    if (r->is_gate) {
        for (int k = 0; k < r->node.gate.count; k++) hf_drop(hf_of(r->node.gate.children[k]));
        free(r->node.gate.children);
    } else {
        hf_drop(hf_of(r->node.map.child));
    }
    free(r);
}

static uintptr_t hf_type;

static uintptr_t hf_map(dfs_transform_fn select, intptr_t ctx, uintptr_t child) {
    hf_lock();
    hf_live(hf_type, 0);
    hf_record *c = hf_live(child, 1)->record;
    atomic_fetch_add_explicit(&c->references, 1, memory_order_relaxed);
    hf_record *r = malloc(sizeof *r);
    atomic_init(&r->references, 1);
    r->is_gate = 0;
    r->node.map = (nf_map){{nf_map_step}, select, (void *)ctx, (nf_node *)&c->node};
    uintptr_t handle = hf_insert(r, 1);
    hf_unlock();
    return handle;
}

/* into (effect, no children) or into_all (children, no effect). */
static uintptr_t hf_gate(dfs_equal_fn equal, dfs_effect_fn effect, const uintptr_t *children, int count) {
    hf_lock();
    hf_live(hf_type, 0);
    nf_node **nodes = NULL;
    if (count > 0) {
        nodes = malloc(sizeof *nodes * (size_t)count);
        for (int k = 0; k < count; k++) {
            hf_record *c = hf_live(children[k], 1)->record;
            atomic_fetch_add_explicit(&c->references, 1, memory_order_relaxed);
            nodes[k] = (nf_node *)&c->node;
        }
    }
    hf_record *r = malloc(sizeof *r);
    atomic_init(&r->references, 1);
    r->is_gate = 1;
    r->node.gate = (nf_gate){{nf_gate_step}, equal, NULL, 0, effect, nodes, count};
    uintptr_t handle = hf_insert(r, 1);
    hf_unlock();
    return handle;
}

static void hf_release(uintptr_t handle) {
    hf_lock();
    hf_slot *slot = hf_live(handle, 1);
    hf_record *dropped = NULL;
    if (--slot->references == 0) {
        dropped = slot->record;
        slot->record = NULL;
        slot->generation++;
        if (hf_table.free_count == hf_table.free_capacity) {
            hf_table.free_capacity = hf_table.free_capacity ? hf_table.free_capacity * 2 : 64;
            hf_table.free = realloc(hf_table.free, sizeof *hf_table.free * (size_t)hf_table.free_capacity);
        }
        hf_table.free[hf_table.free_count++] = (int)(slot - hf_table.slots);
    }
    hf_unlock();
    if (dropped != NULL) hf_drop(dropped);
}

static void *handle_floor_make(void) {
    if (hf_type == 0) {
        hf_lock();
        hf_type = hf_insert(NULL, 0);
        hf_unlock();
    }
    uintptr_t sections[SECTIONS];
    for (int i = 0; i < SECTIONS; i++) {
        uintptr_t fields[FIELDS];
        for (int j = 0; j < FIELDS; j++) {
            uintptr_t leaf = hf_gate(j < STRINGS ? string_equal : NULL, j < STRINGS ? sink_string : sink_int, NULL, 0);
            fields[j] = j < STRINGS ? hf_map(select_string, j, leaf) : hf_map(select_int, j - STRINGS, leaf);
            hf_release(leaf);
        }
        uintptr_t all = hf_gate(section_equal, NULL, fields, FIELDS);
        for (int j = 0; j < FIELDS; j++) hf_release(fields[j]);
        sections[i] = hf_map(select_section, i, all);
        hf_release(all);
    }
    uintptr_t root = hf_gate(screen_equal, NULL, sections, SECTIONS);
    for (int i = 0; i < SECTIONS; i++) hf_release(sections[i]);
    return (void *)root;
}

static void handle_floor_render(void *self, const screen *sc) {
    hf_lock();
    hf_record *root = hf_live((uintptr_t)self, 1)->record;
    atomic_fetch_add_explicit(&root->references, 1, memory_order_relaxed);
    hf_unlock();
    nf_node *node = (nf_node *)&root->node;
    int code = node->step(node, sc);
    hf_drop(root);
    if (code != 0) {
        fprintf(stderr, "handle floor failed\n");
        exit(1);
    }
}

static void handle_floor_destroy(void *self) { hf_release((uintptr_t)self); }

enum { RENDERERS = 7 };
static const renderer renderers[RENDERERS] = {
    {"library", library_make, library_render, library_destroy},
    {"fields", fields_make, library_render, library_destroy},
    {"hand", hand_make, hand_render, free},
    {"hand-tree", hand_tree_make, hand_tree_render, free},
    {"floor", floor_make, floor_render, floor_destroy},
    {"node-floor", node_floor_make, node_floor_render, node_floor_destroy},
    {"handle-floor", handle_floor_make, handle_floor_render, handle_floor_destroy},
};

/* ------------------------------------------------------------------------------------
 * Measuring
 * ------------------------------------------------------------------------------------ */

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

typedef struct scenario {
    const char *name;
    const screen *a, *b; /* the runs alternate between them, after a first run on each */
} scenario;

/* Untimed, after each measurement: consolidates what the measured renderer freed, so
 * that glibc does not charge that work to the next renderer's first allocation. */
static void settle_heap(void) { malloc_trim(0); }

static double measure_runs(const renderer *r, const scenario *s, int iterations) {
    void *self = r->make();
    r->render(self, s->a);
    r->render(self, s->b);
    uint64_t start = now_ns();
    for (int i = 0; i < iterations; i++) r->render(self, (i & 1) == 0 ? s->a : s->b);
    uint64_t elapsed = now_ns() - start;
    r->destroy(self);
    settle_heap();
    return (double)elapsed / iterations;
}

static double measure_build(const renderer *r, int iterations) {
    void *built[64];
    if (iterations > 64) iterations = 64;
    uint64_t start = now_ns();
    for (int i = 0; i < iterations; i++) built[i] = r->make();
    uint64_t elapsed = now_ns() - start;
    for (int i = 0; i < iterations; i++) r->destroy(built[i]);
    settle_heap();
    return (double)elapsed / iterations;
}

/* Before measuring: every renderer must run the same effects on the same sequence of
 * screens (same sink sums), or the figures would compare different work. */
static void check_renderers_agree(const screen *const *sequence, int length) {
    uint64_t expected = 0;
    for (int r = 0; r < RENDERERS; r++) {
        uint64_t saved = sink_accumulator;
        sink_accumulator = 0;
        void *self = renderers[r].make();
        for (int k = 0; k < length; k++) renderers[r].render(self, sequence[k]);
        renderers[r].destroy(self);
        uint64_t got = sink_accumulator;
        sink_accumulator = saved;
        if (r == 0) {
            expected = got;
        } else if (got != expected) {
            fprintf(stderr, "renderer %s ran different effects than %s\n", renderers[r].name, renderers[0].name);
            exit(1);
        }
    }
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *xs, int n) {
    qsort(xs, (size_t)n, sizeof *xs, compare_doubles);
    return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

/* Native bytes per leaf of what `make` builds (and after its first run, which gives the
 * graph its serializer and fills the caches). */
static void memory_per_leaf(const renderer *r, const screen *base, double *built, double *after_run) {
    enum { TREES = 20 };
    void *trees[TREES];
    malloc_trim(0);
    size_t before = mallinfo2().uordblks;
    for (int t = 0; t < TREES; t++) trees[t] = r->make();
    size_t mid = mallinfo2().uordblks;
    for (int t = 0; t < TREES; t++) r->render(trees[t], base);
    size_t after = mallinfo2().uordblks;
    for (int t = 0; t < TREES; t++) r->destroy(trees[t]);
    *built = (double)(mid - before) / (TREES * LEAVES);
    *after_run = (double)(after - before) / (TREES * LEAVES);
}

int main(int argc, char **argv) {
    int rounds = 15, tsv = 0;
    const char *only = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) {
            rounds = atoi(argv[++i]);
            if (rounds < 1) rounds = 1;
        } else if (strcmp(argv[i], "--tsv") == 0) {
            tsv = 1;
        } else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else {
            fprintf(stderr, "usage: %s [--rounds N] [--tsv] [--only SCENARIO]\n", argv[0]);
            return 2;
        }
    }
    make_types();

    screen *base = make_screen(1);
    screen *one_leaf = shallow_copy(base);
    edit(one_leaf, 537, 1, 1);
    screen *one_leaf_deep = deep_copy(base);
    edit(one_leaf_deep, 537, 1, 0);
    screen *ten_pct = shallow_copy(base);
    for (int leaf = 3; leaf < LEAVES; leaf += 10) edit(ten_pct, leaf, 1, 1);

    const screen *sequence[] = {base, one_leaf, ten_pct, one_leaf_deep, deep_copy(base), base, one_leaf, base};
    check_renderers_agree(sequence, (int)(sizeof sequence / sizeof sequence[0]));

    scenario scenarios[] = {
        {"unchanged-same", base, base},
        {"unchanged-equal", base, deep_copy(base)},
        {"one-leaf", base, one_leaf},
        {"one-leaf-deep", deep_copy(base), one_leaf_deep},
        {"ten-pct", base, ten_pct},
    };
    enum { SCENARIOS = sizeof scenarios / sizeof scenarios[0] };
    const char *names[SCENARIOS + 1];
    double results[SCENARIOS + 1][RENDERERS];
    double *samples = malloc(sizeof(double) * (size_t)rounds * RENDERERS);

    if (only != NULL && strcmp(only, "build") != 0) {
        int known = 0;
        for (int s = 0; s < SCENARIOS; s++) known |= strcmp(only, scenarios[s].name) == 0;
        if (!known) {
            fprintf(stderr, "no scenario %s:", only);
            for (int s = 0; s < SCENARIOS; s++) fprintf(stderr, " %s,", scenarios[s].name);
            fprintf(stderr, " build\n");
            return 2;
        }
    }
    int shown[SCENARIOS + 1];
    for (int s = 0; s < SCENARIOS; s++) {
        names[s] = scenarios[s].name;
        shown[s] = only == NULL || strcmp(only, names[s]) == 0;
        if (!shown[s]) continue;
        for (int round = 0; round < rounds; round++)
            for (int r = 0; r < RENDERERS; r++)
                samples[r * rounds + round] = measure_runs(&renderers[r], &scenarios[s], 400);
        for (int r = 0; r < RENDERERS; r++) results[s][r] = median(samples + r * rounds, rounds);
    }
    names[SCENARIOS] = "build";
    shown[SCENARIOS] = only == NULL || strcmp(only, "build") == 0;
    if (shown[SCENARIOS]) {
        for (int round = 0; round < rounds; round++)
            for (int r = 0; r < RENDERERS; r++) samples[r * rounds + round] = measure_build(&renderers[r], 40);
        for (int r = 0; r < RENDERERS; r++) results[SCENARIOS][r] = median(samples + r * rounds, rounds);
    }

    double built = 0, after_run = 0, fields_built = 0, fields_after_run = 0, floor_built = 0, floor_after_run = 0;
    if (only == NULL) {
        memory_per_leaf(&renderers[0], base, &built, &after_run);
        memory_per_leaf(&renderers[1], base, &fields_built, &fields_after_run);
        memory_per_leaf(&renderers[4], base, &floor_built, &floor_after_run);
    }

    /* results[s]: library, fields, hand, hand-tree, floor, node floor, handle floor */
    if (tsv) {
        static const char *const rows[RENDERERS] = {"c", "c-fields", NULL, NULL, "c-floor", "c-node-floor",
                                                           "c-handle-floor"};
        for (int s = 0; s <= SCENARIOS; s++) {
            if (!shown[s]) continue;
            for (int r = 0; r < RENDERERS; r++)
                if (rows[r] != NULL)
                    printf("%s\t%s\t%.1f\t%.1f\t%.1f\n", rows[r], names[s], results[s][r], results[s][2],
                           results[s][3]);
        }
        if (only == NULL)
            printf("# memory per leaf (bytes): library %.1f built, %.1f after a run; "
                   "fields %.1f built, %.1f after a run; floor %.1f built, %.1f after a run; "
                   "hand %.1f; hand-tree %.1f\n",
                   built, after_run, fields_built, fields_after_run, floor_built, floor_after_run,
                   (double)sizeof(hand) / LEAVES, (double)sizeof(hand_tree) / LEAVES);
    } else {
        printf("Diffuser C benchmark: 100 sections x 10 fields, median of %d interleaved rounds\n", rounds);
        printf("scenario          library ns    hand ns  hand-tree ns   x hand  x hand-tree"
               "   fields ns  x hand-tree    floor ns  x hand-tree  node floor ns  x hand-tree"
               "  handle floor ns  x hand-tree\n");
        for (int s = 0; s <= SCENARIOS; s++) {
            if (!shown[s]) continue;
            double l = results[s][0], f = results[s][1], h = results[s][2], t = results[s][3], fl = results[s][4],
                   nf = results[s][5], hf = results[s][6];
            printf("%-16s%12.0f%11.0f%14.0f%9.2f%13.2f%12.0f%13.2f%12.0f%13.2f%15.0f%13.2f%17.0f%13.2f\n", names[s], l,
                   h, t, l / h, l / t, f, f / t, fl, fl / t, nf, nf / t, hf, hf / t);
        }
        printf("(floor: the least any library driven through the callbacks of the first form does; see floor_render;\n"
               " node floor: the same with one node per combinator, as a library of composable handles has; see\n"
               " node_floor_render; handle floor: the node floor through checked handles; see handle_floor_render)\n");
        if (only == NULL) {
            printf("\nnative memory per leaf node (mallinfo2, %d leaves per tree):\n", LEAVES);
            printf("  library   %7.1f bytes built, %7.1f bytes after the first run\n", built, after_run);
            printf("  fields    %7.1f bytes built, %7.1f bytes after the first run\n", fields_built, fields_after_run);
            printf("  floor     %7.1f bytes built, %7.1f bytes after the first run\n", floor_built, floor_after_run);
            printf("  hand      %7.1f bytes   hand-tree %5.1f bytes\n", (double)sizeof(hand) / LEAVES,
                   (double)sizeof(hand_tree) / LEAVES);
        }
    }
    printf("(sink %llu)\n", (unsigned long long)(sink_accumulator % 1000));

    free(samples);
    dfs_type_release(screen_type);
    dfs_type_release(section_type);
    dfs_type_release(string_type);
    for (size_t i = 0; i < owned_count; i++) free(owned[i]);
    free(owned);
    return 0;
}
