/*
 * conformance_runner.c — runs every conformance vector through the C API, in every form
 * the C API offers for maps.
 *
 *     conformance_runner CONFORMANCE_DIR [--verbose]
 *
 * Loads every `*.json` file under CONFORMANCE_DIR, recursively, sorted by path, and
 * executes each vector as conformance/README.md (sections 3-6) and its exactness
 * extension (top-level "equality", the failing "boom", labelled maps and predicates)
 * specify:
 *
 * - values are jansson `json_t *`, with a dfs_type per vector: its equality is the
 *   vector's ("json", "near" or "nan") and fails (returns -1, error "equality") when the
 *   new value is the string "boom"; retain = json_incref, release = json_decref (in form
 *   borrowed_values: no retain and no release);
 * - every diffuser op is built with the corresponding C combinator (intoAlways effect /
 *   children, into, intoOnce, intoAll, intoWhen with an effect / a child, map); `invert`
 *   is a map with the `not` transform, because dfs_diffuser_invert works on truth values
 *   encoded in pointers (dfs_type_pointer), not on JSON values;
 * - a user call that fails (an effect, a labelled transform or predicate whose label is
 *   in the step's fail list, the equality on "boom") records its label in the runner
 *   context, calls dfs_set_error(label) and returns non-zero; the step's error is that
 *   label when the library call returned DFS_ERR_CALLBACK (and dfs_last_error() must
 *   then be the label), null for DFS_OK;
 * - each run's value is a fresh deep copy of the step's value (jansson's null, true and
 *   false are singletons: they are reflexive under every equality, so that is harmless);
 * - fuser vectors use scripted sources (dfs_fuser_from) that log ["connect", S] and
 *   every ["dispose", S] call, and emit through dfs_dispatch_emit to a copy of their
 *   connection list, stopping at the first DFS_ERR_CALLBACK.
 *
 * List vectors (README section 10) run through dfs_list_diff_compute in two forms:
 * list_callback (contents compared by a same_content callback, JSON equality) and
 * list_fingerprint (one 64-bit fingerprint per distinct content). Keys are 64-bit values,
 * one per distinct key (1 and "1" differ). Each form makes three calls (batch and script,
 * the moveThenReload batch, no flags) and compares the diff, the batches and the script
 * with the vector's expect. Two more forms run them through dfs_diffuser_into_list (a run
 * with the old list, then one with the new list, whose sink call must carry the vector's
 * diff, or which must not call the sink for an empty diff): list_into_list with exact
 * keys, list_into_list_hashed with keys reduced to their top two bits (most collide) and
 * a same_key callback that compares the exact keys.
 *
 * Forms (one fresh tree per vector and form):
 * - map: every map and invert is dfs_diffuser_map; transforms return a new reference.
 * - map_borrowed: every map and invert is dfs_diffuser_map_borrowed; transforms return a
 *   pointer into the run's value (or one of jansson's immortal singletons).
 * - map_field: the run's value is a C struct (`jv`) that wraps the JSON value and has one
 *   member per selection step the vector's maps make (a field name, an array index, the
 *   value itself, its `not`), pointing to the `jv` of the selected part (of null when the
 *   part is missing). Every unlabelled map is a chain of dfs_diffuser_map_field, one per
 *   step, and invert is a dfs_diffuser_map_field of the `not` member: the core reads the
 *   parts in place, no callback. A labelled map's transform is a user call (it logs and
 *   may fail), which a field map cannot make: it stays a dfs_diffuser_map over `jv`.
 * - borrowed_values: the vector's type has the same equality but no retain and no
 *   release, so the core borrows every value it keeps (the header: such a value must stay
 *   valid while the core may hold it). Every map and invert is dfs_diffuser_map_borrowed,
 *   as in form map_borrowed; the runner keeps every run's value (a fresh deep copy, as in
 *   the other forms) alive until the vector's tree is released, so that what the gates
 *   cache stays valid, and frees them after. Gates keep a value of such a type as it is,
 *   with no user call, so an equal value with the very bits of a gate's cache is left as
 *   it is (GateNode's `keepsItself` path): a named node reached twice in one run (a ref
 *   under two parents) sees the same pointer twice, and so do gates fed jansson's
 *   immortal null, true and false (run values, missing parts, `not`). Every transform of
 *   a diffuser vector, labelled or not, returns a part of its input, never a new value.
 *   Fuser vectors run in this form too: their values (events, extractConstant's constant)
 *   are borrowed from the vector, which outlives the graph, and an extract transform's
 *   new value, which the core never releases, is kept in the same per-vector list.
 * A pair (vector, form) is executed or counted as not applicable, with a reason: fuser
 * vectors have no diffuser map (they run in forms map and borrowed_values only); a
 * diffuser vector without a map or invert builds the same tree in forms map,
 * map_borrowed and map_field (it runs in forms map and borrowed_values only, the latter
 * with another value type); a vector whose every map is labelled has nothing to read as
 * a field. A pair neither executed nor counted fails the runner.
 *
 * Each step's log and error are compared with `expect` (strict JSON equality, whatever
 * the vector's equality); a mismatch prints the vector, the form, the step index, what
 * was got and what was expected, and the runner goes on. The exit status is 1 if any
 * pair failed or a vector could not be run (unknown op / selector / predicate /
 * transform / key, unreadable file), or if fewer than 600 vectors were found.
 *
 * Every handle, every json_t and every jv is released, so the program is clean under
 * valgrind.
 *
 * One program because every (vector, form) pair is counted in one tally, which is what
 * proves none went unrun; the diffuser and fuser runners share the runner context of a
 * vector in a form, its value type and the README's selectors and transforms, and the
 * list forms share the file walk and the tally. Loop vectors, which share only the
 * walk, run in loop_conformance.c.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "diffuser.h"
#include "loop_conformance.h"

/** The corpus must have at least this many vectors, and this many list vectors. */
#define MIN_VECTORS 600
#define MIN_LIST_VECTORS 120
#define MIN_LOOP_VECTORS 150

/** The label of a failing equality (never a node label). */
#define EQUALITY_ERROR "equality"

/* ------------------------------------------------------------------------------------
 * Small helpers
 * ------------------------------------------------------------------------------------ */

static void *xmalloc(size_t size) {
    void *p = calloc(1, size ? size : 1);
    if (p == NULL) {
        fprintf(stderr, "conformance_runner: out of memory\n");
        exit(2);
    }
    return p;
}

static char *xstrdup(const char *s) {
    char *copy = strdup(s);
    if (copy == NULL) {
        fprintf(stderr, "conformance_runner: out of memory\n");
        exit(2);
    }
    return copy;
}

/** A compact rendering of a JSON value (sorted keys), for messages. Caller frees. */
static char *render(const json_t *value) {
    if (value == NULL) return xstrdup("(nothing)");
    char *text = json_dumps(value, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    return text ? text : xstrdup("(unprintable)");
}

/* ------------------------------------------------------------------------------------
 * Forms and equalities
 * ------------------------------------------------------------------------------------ */

enum form { FORM_MAP, FORM_BORROWED, FORM_FIELD, FORM_VALUES, FORM_COUNT };

static const char *const form_names[FORM_COUNT] = {"map", "map_borrowed", "map_field", "borrowed_values"};

static const char *const form_descriptions[FORM_COUNT] = {
    "dfs_diffuser_map, parts owned by the core (new references; also every fuser vector)",
    "dfs_diffuser_map_borrowed, parts borrowed from the run's value",
    "dfs_diffuser_map_field, parts read in place from members of a C struct indexing the value",
    "a type without retain and release (values borrowed, kept alive by the runner), "
    "dfs_diffuser_map_borrowed (also every fuser vector)",
};

/** Whether the form's maps are dfs_diffuser_map_borrowed (transforms return parts). */
static int form_borrows_parts(int form) { return form == FORM_BORROWED || form == FORM_VALUES; }

/** Why a (vector, form) pair is not applicable. */
enum na_reason { NA_FUSER, NA_NO_MAP, NA_ONLY_LABELLED, NA_COUNT };

static const char *const na_descriptions[NA_COUNT] = {
    "a fuser vector has no diffuser map (it runs in forms map and borrowed_values)",
    "no map or invert in the vector: the same tree as in form map (it runs in forms map and borrowed_values)",
    "every map is labelled: a labelled transform is a user call, which a field map cannot make",
};

enum equality_kind { EQ_JSON, EQ_NEAR, EQ_NAN };

/* ------------------------------------------------------------------------------------
 * The runner context of one vector in one form
 * ------------------------------------------------------------------------------------ */

typedef struct source source;
typedef struct jv jv;

/** A member of `jv`: what one selection step reads. */
enum slot_kind { SLOT_SELF, SLOT_NOT, SLOT_FIELD, SLOT_INDEX };

typedef struct slot {
    int kind;
    char *name;        /* SLOT_FIELD */
    json_int_t index;  /* SLOT_INDEX */
} slot;

typedef struct runner {
    dfs_type *type;        /* the vector's value type (json_t *, or jv * in form map_field) */
    int form;
    int equality;          /* enum equality_kind */
    char label[256];       /* "name [form]", for messages */
    /* The current step. */
    json_t *log;           /* the entries of the step, a JSON array (owned) */
    const json_t *fail;    /* the step's fail list (borrowed from the vector) or NULL */
    json_t *calls;         /* how many times each label was called in the step (owned) */
    char *failed_label;    /* the label of the first user call that failed in the step */
    int failures;          /* how many user calls failed in the step */
    /* Building. */
    const json_t *named;   /* the vector's `nodes` */
    char problem[512];     /* why the vector could not be built or run */
    /* Contexts handed to the library and not destroyed yet (must end at 0). */
    int live_contexts;
    /* Form map_field: the members of jv, and the jvs of null, true and false. */
    slot *slots;
    size_t slot_count, slot_cap;
    jv *jv_null, *jv_true, *jv_false;
    long live_jvs;         /* jvs made and not freed (must end at 0) */
    /* Fuser vectors. */
    source *sources;
    size_t source_count;
    /* Form borrowed_values: every run's value and every new value a transform returned,
     * which the core borrows (the type has no retain and no release); owned, released
     * after every handle of the vector. */
    json_t **kept;
    size_t kept_count, kept_cap;
} runner;

/** Form borrowed_values: keeps `value` (the runner's reference) alive until the vector's
 *  handles are released (runner_free_kept). */
static void runner_keep(runner *r, json_t *value) {
    if (r->kept_count == r->kept_cap) {
        r->kept_cap = r->kept_cap ? r->kept_cap * 2 : 16;
        json_t **grown = realloc(r->kept, r->kept_cap * sizeof *grown);
        if (grown == NULL) {
            fprintf(stderr, "conformance_runner: out of memory\n");
            exit(2);
        }
        r->kept = grown;
    }
    r->kept[r->kept_count++] = value;
}

static void runner_free_kept(runner *r) {
    for (size_t i = 0; i < r->kept_count; i++) json_decref(r->kept[i]);
    free(r->kept);
    r->kept = NULL;
    r->kept_count = r->kept_cap = 0;
}

static void runner_problem(runner *r, const char *fmt, ...) {
    if (r->problem[0] != '\0') return; /* keep the first one */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->problem, sizeof r->problem, fmt, ap);
    va_end(ap);
}

/** Counts a call of `label` in the step: whether it fails, because the step's fail list
 *  names the label (every call fails) or "label@k" for this, its k-th call. */
static int label_fails(runner *r, const char *label) {
    json_int_t count = json_integer_value(json_object_get(r->calls, label)) + 1;
    json_object_set_new(r->calls, label, json_integer(count));
    if (r->fail == NULL) return 0;
    char counted[256];
    snprintf(counted, sizeof counted, "%s@%lld", label, (long long)count);
    size_t i;
    const json_t *entry;
    json_array_foreach(r->fail, i, entry) {
        if (!json_is_string(entry)) continue;
        const char *listed = json_string_value(entry);
        if (strcmp(listed, label) == 0 || strcmp(listed, counted) == 0) return 1;
    }
    return 0;
}

/** A user call fails: records the label (the first one is the step's error), sets the
 *  message and returns the callback's non-zero result. */
static int user_failure(runner *r, const char *label) {
    r->failures++;
    if (r->failed_label == NULL) r->failed_label = xstrdup(label);
    dfs_set_error(label);
    return 1;
}

static void log_append(runner *r, const char *label, const json_t *value) {
    json_t *entry = json_pack("[sO]", label, (json_t *)value);
    if (entry == NULL || json_array_append_new(r->log, entry) != 0) {
        fprintf(stderr, "conformance_runner: cannot append to the log\n");
        exit(2);
    }
}

/** Starts a step: a fresh log, the step's fail list, no failure yet. */
static void step_begin(runner *r, const json_t *fail) {
    json_decref(r->log);
    r->log = json_array();
    json_decref(r->calls);
    r->calls = json_object();
    r->fail = fail;
    free(r->failed_label);
    r->failed_label = NULL;
    r->failures = 0;
}

/* ------------------------------------------------------------------------------------
 * Form map_field: jv, a C struct over a JSON value with one member per selection step
 * ------------------------------------------------------------------------------------ */

/** The run value of form map_field. `slot[k]` is the jv of what step k selects from this
 *  value: itself (SLOT_SELF, not counted), its `not` (SLOT_NOT), the member / element
 *  (SLOT_FIELD / SLOT_INDEX; the jv of null when missing). The jvs of null, true and
 *  false are per vector and never freed before its end (refs < 0); every other jv holds
 *  a reference to its JSON value and to each part it points to. */
struct jv {
    long refs;
    json_t *json;
    const jv *slot[];
};

static size_t slot_offset(size_t k) { return offsetof(jv, slot) + k * sizeof(const jv *); }

/** The index of a member, added if new (only while building, before any jv exists). */
static size_t slot_find(runner *r, int kind, const char *name, json_int_t index) {
    for (size_t k = 0; k < r->slot_count; k++) {
        const slot *s = &r->slots[k];
        if (s->kind != kind) continue;
        if (kind == SLOT_FIELD && strcmp(s->name, name) != 0) continue;
        if (kind == SLOT_INDEX && s->index != index) continue;
        return k;
    }
    if (r->slot_count == r->slot_cap) {
        r->slot_cap = r->slot_cap ? r->slot_cap * 2 : 8;
        slot *grown = realloc(r->slots, r->slot_cap * sizeof *grown);
        if (grown == NULL) {
            fprintf(stderr, "conformance_runner: out of memory\n");
            exit(2);
        }
        r->slots = grown;
    }
    r->slots[r->slot_count] = (slot){kind, name ? xstrdup(name) : NULL, index};
    return r->slot_count++;
}

static jv *jv_alloc(runner *r, long refs, json_t *json) {
    jv *v = xmalloc(sizeof *v + r->slot_count * sizeof v->slot[0]);
    v->refs = refs;
    v->json = json;
    r->live_jvs++;
    return v;
}

/** Makes the jvs of null, true and false (after the tree is built: every slot known). */
static void jv_make_constants(runner *r) {
    r->jv_null = jv_alloc(r, -1, json_null());
    r->jv_true = jv_alloc(r, -1, json_true());
    r->jv_false = jv_alloc(r, -1, json_false());
    jv *constants[3] = {r->jv_null, r->jv_true, r->jv_false};
    for (int c = 0; c < 3; c++) {
        for (size_t k = 0; k < r->slot_count; k++) {
            switch (r->slots[k].kind) {
            case SLOT_SELF: constants[c]->slot[k] = constants[c]; break;
            case SLOT_NOT: constants[c]->slot[k] = c == 1 ? r->jv_false : r->jv_true; break;
            default: constants[c]->slot[k] = r->jv_null; break;
            }
        }
    }
}

static void jv_free_constants(runner *r) {
    jv *constants[3] = {r->jv_null, r->jv_true, r->jv_false};
    for (int c = 0; c < 3; c++) {
        if (constants[c] != NULL) {
            free(constants[c]);
            r->live_jvs--;
        }
    }
    r->jv_null = r->jv_true = r->jv_false = NULL;
    for (size_t k = 0; k < r->slot_count; k++) free(r->slots[k].name);
    free(r->slots);
    r->slots = NULL;
    r->slot_count = r->slot_cap = 0;
}

/** The jv of a JSON value, with a new reference (the constants: none needed). */
static jv *jv_build(runner *r, json_t *x) {
    if (json_is_null(x)) return r->jv_null;
    if (json_is_true(x)) return r->jv_true;
    if (json_is_false(x)) return r->jv_false;
    jv *v = jv_alloc(r, 1, json_incref(x));
    for (size_t k = 0; k < r->slot_count; k++) {
        const slot *s = &r->slots[k];
        json_t *part = NULL;
        switch (s->kind) {
        case SLOT_SELF: v->slot[k] = v; continue;
        case SLOT_NOT: v->slot[k] = r->jv_false; continue; /* neither null nor false */
        case SLOT_FIELD:
            part = json_is_object(x) ? json_object_get(x, s->name) : NULL;
            break;
        default:
            part = json_is_array(x) && s->index >= 0 && (size_t)s->index < json_array_size(x)
                ? json_array_get(x, (size_t)s->index)
                : NULL;
            break;
        }
        v->slot[k] = part ? jv_build(r, part) : r->jv_null;
    }
    return v;
}

static void jv_unref(runner *r, const jv *value) {
    jv *v = (jv *)value;
    if (v->refs < 0 || --v->refs > 0) return;
    for (size_t k = 0; k < r->slot_count; k++) {
        if (r->slots[k].kind == SLOT_FIELD || r->slots[k].kind == SLOT_INDEX) jv_unref(r, v->slot[k]);
    }
    json_decref(v->json);
    free(v);
    r->live_jvs--;
}

static const jv *jv_ref(const jv *value) {
    jv *v = (jv *)value;
    if (v->refs >= 0) v->refs++;
    return v;
}

/* ------------------------------------------------------------------------------------
 * The value type of a vector
 * ------------------------------------------------------------------------------------ */

/** The JSON value of a value of the runner's type. */
static const json_t *J(const runner *r, const void *value) {
    return r->form == FORM_FIELD ? ((const jv *)value)->json : value;
}

/** The relation of the vector's equality (exactness extension, section 1); never fails
 *  and never decides by identity (under "nan", "NaN" is not equal to itself). */
static int relation(int equality, const json_t *a, const json_t *b) {
    if (a == NULL || b == NULL) return a == b;
    if (json_typeof(a) != json_typeof(b)) return 0;
    switch (json_typeof(a)) {
    case JSON_INTEGER: {
        json_int_t x = json_integer_value(a), y = json_integer_value(b);
        if (equality == EQ_NEAR) return x - y <= 1 && y - x <= 1;
        return x == y;
    }
    case JSON_STRING: {
        size_t n = json_string_length(a);
        if (n != json_string_length(b) || memcmp(json_string_value(a), json_string_value(b), n) != 0) return 0;
        return !(equality == EQ_NAN && n == 3 && memcmp(json_string_value(a), "NaN", 3) == 0);
    }
    case JSON_ARRAY: {
        size_t n = json_array_size(a);
        if (n != json_array_size(b)) return 0;
        for (size_t i = 0; i < n; i++) {
            if (!relation(equality, json_array_get(a, i), json_array_get(b, i))) return 0;
        }
        return 1;
    }
    case JSON_OBJECT: {
        if (json_object_size(a) != json_object_size(b)) return 0;
        const char *key;
        json_t *item;
        json_object_foreach((json_t *)a, key, item) {
            if (!relation(equality, item, json_object_get(b, key))) return 0;
        }
        return 1;
    }
    case JSON_REAL: /* not in vectors */
        return json_real_value(a) == json_real_value(b);
    default: /* null, true, false: the type is the value */
        return 1;
    }
}

/** The equality of the vector's type, as an equality gate calls it: eq(old, new). It
 *  fails when the new value is exactly the string "boom". */
static int value_equal(const void *a, const void *b, void *ctx) {
    runner *r = ctx;
    const json_t *x = J(r, a), *y = J(r, b);
    if (json_is_string(y) && json_string_length(y) == 4 && memcmp(json_string_value(y), "boom", 4) == 0) {
        return -user_failure(r, EQUALITY_ERROR);
    }
    return relation(r->equality, x, y);
}

static const void *value_retain(const void *value, void *ctx) {
    runner *r = ctx;
    if (r->form == FORM_FIELD) return jv_ref(value);
    return json_incref((json_t *)value);
}

static void value_release(const void *value, void *ctx) {
    runner *r = ctx;
    if (r->form == FORM_FIELD) jv_unref(r, value);
    else json_decref((json_t *)value);
}

/* ------------------------------------------------------------------------------------
 * Semantics of the format: not, selectors, predicates, transforms (README 3.2, 4.1)
 * ------------------------------------------------------------------------------------ */

static json_t *json_not(const json_t *x) {
    return json_boolean(json_is_null(x) || json_is_false(x));
}

/** The selected part of `value` (borrowed), or NULL for "null". */
static const json_t *select_path(const json_t *selector, const json_t *value) {
    const json_t *steps = json_object_get(selector, "path");
    const json_t *x = value;
    size_t i;
    const json_t *step;
    json_array_foreach(steps, i, step) {
        if (json_is_string(step)) {
            if (!json_is_object(x)) return NULL;
            x = json_object_get(x, json_string_value(step));
            if (x == NULL) return NULL;
        } else { /* integer, checked when built */
            json_int_t index = json_integer_value(step);
            if (!json_is_array(x) || index < 0 || (size_t)index >= json_array_size(x)) return NULL;
            x = json_array_get(x, (size_t)index);
        }
    }
    return x;
}

enum selector_kind { SEL_IDENTITY, SEL_FIELD, SEL_PATH };

/** The transform of a map (and of invert, with `not`). */
typedef struct selector_ctx {
    runner *r;
    int kind;
    int not;          /* invert's `not` instead of a selector */
    json_t *selector; /* owned reference; NULL for `not` */
    char *label;      /* a labelled map: a logged user call that may fail; or NULL */
    size_t *steps;    /* form map_field: the members to read, in order */
    size_t step_count;
} selector_ctx;

static int selector_transform(const void *value, const void **out, void *ctx) {
    selector_ctx *s = ctx;
    runner *r = s->r;
    if (s->label != NULL) {
        if (label_fails(r, s->label)) return user_failure(r, s->label);
        log_append(r, s->label, J(r, value)); /* the input value */
    }
    if (r->form == FORM_FIELD) {
        /* A labelled map over jv: the same members the field maps read. Owned part. */
        const jv *part = value;
        for (size_t i = 0; i < s->step_count; i++) part = part->slot[s->steps[i]];
        *out = jv_ref(part);
        return 0;
    }
    const json_t *v = value;
    const json_t *selected = NULL;
    if (s->not) {
        selected = json_not(v); /* an immortal singleton: owned and borrowed alike */
    } else if (s->kind == SEL_IDENTITY) {
        selected = v;
    } else if (s->kind == SEL_FIELD) {
        selected = json_is_object(v)
            ? json_object_get(v, json_string_value(json_object_get(s->selector, "field")))
            : NULL;
    } else {
        selected = select_path(s->selector, v);
    }
    if (selected == NULL) selected = json_null();
    /* map: a new reference; map_borrowed and borrowed_values: a pointer into the value,
     * valid for the run (borrowed_values: until the tree is released). */
    *out = form_borrows_parts(r->form) ? selected : json_incref((json_t *)selected);
    return 0;
}

static void selector_destroy(void *ctx) {
    selector_ctx *s = ctx;
    s->r->live_contexts--;
    json_decref(s->selector);
    free(s->label);
    free(s->steps);
    free(s);
}

enum predicate_kind { PRED_CHANGED, PRED_ALWAYS, PRED_NEVER, PRED_INCREASED, PRED_DECREASED };

static const struct {
    const char *name;
    int kind;
} predicate_names[] = {
    {"changed", PRED_CHANGED},     {"always", PRED_ALWAYS},       {"never", PRED_NEVER},
    {"increased", PRED_INCREASED}, {"decreased", PRED_DECREASED},
};

typedef struct predicate_ctx {
    runner *r;
    int kind;
    char *label;      /* a labelled predicate: logs [label, [old, new]], may fail; or NULL */
} predicate_ctx;

static int predicate_call(const void *old_value, const void *new_value, void *ctx) {
    predicate_ctx *p = ctx;
    runner *r = p->r;
    const json_t *a = J(r, old_value), *b = J(r, new_value);
    if (p->label != NULL) {
        if (label_fails(r, p->label)) return -user_failure(r, p->label);
        json_t *pair = json_pack("[OO]", (json_t *)a, (json_t *)b);
        log_append(r, p->label, pair);
        json_decref(pair);
    }
    switch (p->kind) {
    case PRED_CHANGED:
        return !relation(r->equality, a, b); /* never fails, whatever the values */
    case PRED_ALWAYS:
        return 1;
    case PRED_NEVER:
        return 0;
    case PRED_INCREASED:
        return json_is_integer(a) && json_is_integer(b) && json_integer_value(b) > json_integer_value(a);
    default: /* PRED_DECREASED */
        return json_is_integer(a) && json_is_integer(b) && json_integer_value(b) < json_integer_value(a);
    }
}

static void predicate_destroy(void *ctx) {
    predicate_ctx *p = ctx;
    p->r->live_contexts--;
    free(p->label);
    free(p);
}

enum transform_kind { TR_IDENTITY, TR_DOUBLE, TR_NEGATE, TR_NOT, TR_LENGTH, TR_FIELD, TR_WRAP };

typedef struct transform_ctx {
    runner *r;
    int kind;
    int unless_null;  /* 1 for extractUnlessNull: a JSON null result is returned as NULL */
    char *name;       /* field:NAME / wrap:NAME */
} transform_ctx;

static json_t *transform_apply(const transform_ctx *t, const json_t *x) {
    switch (t->kind) {
    case TR_IDENTITY:
        return json_incref((json_t *)x);
    case TR_DOUBLE:
        return json_is_integer(x) ? json_integer(2 * json_integer_value(x)) : json_null();
    case TR_NEGATE:
        return json_is_integer(x) ? json_integer(-json_integer_value(x)) : json_null();
    case TR_NOT:
        return json_not(x);
    case TR_LENGTH:
        if (json_is_string(x)) return json_integer((json_int_t)json_string_length(x));
        if (json_is_array(x)) return json_integer((json_int_t)json_array_size(x));
        if (json_is_object(x)) return json_integer((json_int_t)json_object_size(x));
        return json_null();
    case TR_FIELD: {
        const json_t *field = json_is_object(x) ? json_object_get(x, t->name) : NULL;
        return field ? json_incref((json_t *)field) : json_null();
    }
    default: /* TR_WRAP */
        return json_pack("{sO}", t->name, (json_t *)x);
    }
}

static int transform_call(const void *value, const void **out, void *ctx) {
    const transform_ctx *t = ctx;
    json_t *result = transform_apply(t, value);
    if (result == NULL) {
        dfs_set_error("transform: out of memory");
        return 1;
    }
    if (t->unless_null && json_is_null(result)) {
        json_decref(result);
        *out = NULL; /* "nil": the event is dropped */
        return 0;
    }
    /* JSON null stays json_null(), a non-NULL pointer. Form borrowed_values: the type has
     * no release, so the core never drops the new value: the runner keeps it until the
     * vector's handles are released. */
    if (t->r->form == FORM_VALUES) runner_keep(t->r, result);
    *out = result;
    return 0;
}

static void transform_destroy(void *ctx) {
    transform_ctx *t = ctx;
    t->r->live_contexts--;
    free(t->name);
    free(t);
}

/* ------------------------------------------------------------------------------------
 * Effects
 * ------------------------------------------------------------------------------------ */

typedef struct effect_ctx {
    runner *r;
    char *label;
} effect_ctx;

static int effect_call(const void *value, void *ctx) {
    effect_ctx *e = ctx;
    runner *r = e->r;
    if (label_fails(r, e->label)) return user_failure(r, e->label);
    log_append(r, e->label, J(r, value));
    return 0;
}

static void effect_destroy(void *ctx) {
    effect_ctx *e = ctx;
    e->r->live_contexts--;
    free(e->label);
    free(e);
}

static effect_ctx *effect_new(runner *r, const char *label) {
    effect_ctx *e = xmalloc(sizeof *e);
    e->r = r;
    e->label = xstrdup(label);
    r->live_contexts++;
    return e;
}

/* ------------------------------------------------------------------------------------
 * Checking the shape of nodes
 * ------------------------------------------------------------------------------------ */

/** 1 if every key of `object` is in the NULL-terminated list `allowed`. */
static int keys_allowed(runner *r, const json_t *object, const char *const *allowed, const char *what) {
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)object, key, value) {
        int known = 0;
        for (const char *const *a = allowed; *a; a++) {
            if (strcmp(*a, key) == 0) known = 1;
        }
        if (!known) {
            runner_problem(r, "unknown key \"%s\" in %s", key, what);
            return 0;
        }
    }
    return 1;
}

static int valid_name(const char *s, int allow_underscore_first) {
    if (s == NULL || s[0] == '\0') return 0;
    for (size_t i = 0; s[i]; i++) {
        char c = s[i];
        int letter = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
        int digit = c >= '0' && c <= '9';
        if (i == 0 ? !(letter || (allow_underscore_first && c == '_')) : !(letter || digit || c == '_')) return 0;
    }
    return 1;
}

/** The string value of a required key, or NULL (and a problem). */
static const char *need_string(runner *r, const json_t *node, const char *key, const char *op) {
    const json_t *v = json_object_get(node, key);
    if (!json_is_string(v)) {
        runner_problem(r, "op \"%s\" needs a string \"%s\"", op, key);
        return NULL;
    }
    return json_string_value(v);
}

/** The optional "label" of a map or intoWhen: NULL if absent, a copy if valid. Sets
 *  *ok to 0 (and a problem) if present but not a valid label. */
static char *optional_label(runner *r, const json_t *node, const char *op, int *ok) {
    const json_t *v = json_object_get(node, "label");
    *ok = 1;
    if (v == NULL) return NULL;
    if (!json_is_string(v) || !valid_name(json_string_value(v), 0) ||
        strcmp(json_string_value(v), EQUALITY_ERROR) == 0) {
        runner_problem(r, "op \"%s\": \"label\" must be a label (not \"%s\")", op, EQUALITY_ERROR);
        *ok = 0;
        return NULL;
    }
    return xstrdup(json_string_value(v));
}

/** 1 if the node has exactly one of the keys a and b. */
static int exactly_one(runner *r, const json_t *node, const char *a, const char *b, const char *op) {
    int has_a = json_object_get(node, a) != NULL, has_b = json_object_get(node, b) != NULL;
    if (has_a == has_b) {
        runner_problem(r, "op \"%s\" needs exactly one of \"%s\" and \"%s\"", op, a, b);
        return 0;
    }
    return 1;
}

/* ------------------------------------------------------------------------------------
 * Named nodes: one built handle per name (diffuser: required; fuser: allowed)
 * ------------------------------------------------------------------------------------ */

typedef struct memo {
    char **names;
    void **handles;     /* dfs_diffuser * or dfs_fuser *; the memo owns one reference */
    int *building;      /* cycle guard */
    size_t count;
} memo;

static void memo_init(memo *m, const json_t *named) {
    size_t n = json_object_size(named);
    m->names = xmalloc(n * sizeof *m->names);
    m->handles = xmalloc(n * sizeof *m->handles);
    m->building = xmalloc(n * sizeof *m->building);
    m->count = 0;
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)named, key, value) {
        m->names[m->count++] = xstrdup(key);
    }
}

static size_t memo_find(const memo *m, const char *name) {
    for (size_t i = 0; i < m->count; i++) {
        if (strcmp(m->names[i], name) == 0) return i;
    }
    return (size_t)-1;
}

static void memo_free(memo *m, int fuser) {
    for (size_t i = 0; i < m->count; i++) {
        if (m->handles[i]) {
            if (fuser) dfs_fuser_release(m->handles[i]);
            else dfs_diffuser_release(m->handles[i]);
        }
        free(m->names[i]);
    }
    free(m->names);
    free(m->handles);
    free(m->building);
}

/* ------------------------------------------------------------------------------------
 * Building diffusers (README 3.1), in the runner's form
 * ------------------------------------------------------------------------------------ */

typedef struct builder {
    runner *r;
    memo memo;
} builder;

static dfs_diffuser *build_diffuser(builder *b, const json_t *node);

static int status_ok(runner *r, dfs_status status, const char *what) {
    if (status == DFS_OK) return 1;
    runner_problem(r, "%s returned %s: %s", what, dfs_status_name(status), dfs_last_error());
    return 0;
}

/** Builds the children array of a fan-out; returns 0 on failure (nothing leaked). */
static int build_diffuser_children(builder *b, const json_t *node, const char *op, dfs_diffuser ***out, size_t *count) {
    const json_t *children = json_object_get(node, "children");
    if (!json_is_array(children)) {
        runner_problem(b->r, "op \"%s\" needs an array \"children\"", op);
        return 0;
    }
    size_t n = json_array_size(children);
    dfs_diffuser **list = xmalloc(n * sizeof *list);
    for (size_t i = 0; i < n; i++) {
        list[i] = build_diffuser(b, json_array_get(children, i));
        if (list[i] == NULL) {
            for (size_t j = 0; j < i; j++) dfs_diffuser_release(list[j]);
            free(list);
            return 0;
        }
    }
    *out = list;
    *count = n;
    return 1;
}

static void release_diffusers(dfs_diffuser **list, size_t count) {
    for (size_t i = 0; i < count; i++) dfs_diffuser_release(list[i]);
    free(list);
}

static predicate_ctx *make_predicate(runner *r, const json_t *node) {
    const char *name = need_string(r, node, "predicate", "intoWhen");
    if (name == NULL) return NULL;
    int ok;
    char *label = optional_label(r, node, "intoWhen", &ok);
    if (!ok) return NULL;
    for (size_t i = 0; i < sizeof predicate_names / sizeof predicate_names[0]; i++) {
        if (strcmp(predicate_names[i].name, name) == 0) {
            predicate_ctx *p = xmalloc(sizeof *p);
            p->r = r;
            p->kind = predicate_names[i].kind;
            p->label = label;
            r->live_contexts++;
            return p;
        }
    }
    free(label);
    runner_problem(r, "unknown predicate \"%s\"", name);
    return NULL;
}

static selector_ctx *selector_new(runner *r) {
    selector_ctx *s = xmalloc(sizeof *s);
    s->r = r;
    r->live_contexts++;
    return s;
}

/** The transform of a map node; in form map_field also the members its steps read. */
static selector_ctx *make_selector(runner *r, const json_t *node) {
    const json_t *selector = json_object_get(node, "selector");
    if (!json_is_object(selector) || json_object_size(selector) != 1) {
        runner_problem(r, "a selector must be an object with one key");
        return NULL;
    }
    int kind;
    const json_t *v;
    if ((v = json_object_get(selector, "identity")) != NULL) {
        if (!json_is_true(v)) {
            runner_problem(r, "selector \"identity\" must be true");
            return NULL;
        }
        kind = SEL_IDENTITY;
    } else if ((v = json_object_get(selector, "field")) != NULL) {
        if (!json_is_string(v) || !valid_name(json_string_value(v), 1)) {
            runner_problem(r, "selector \"field\" must be a name");
            return NULL;
        }
        kind = SEL_FIELD;
    } else if ((v = json_object_get(selector, "path")) != NULL) {
        if (!json_is_array(v)) {
            runner_problem(r, "selector \"path\" must be an array");
            return NULL;
        }
        size_t i;
        const json_t *step;
        json_array_foreach(v, i, step) {
            if (!(json_is_string(step) && valid_name(json_string_value(step), 1)) &&
                !(json_is_integer(step) && json_integer_value(step) >= 0)) {
                runner_problem(r, "path steps must be names or integers >= 0");
                return NULL;
            }
        }
        kind = SEL_PATH;
    } else {
        char *text = render(selector);
        runner_problem(r, "unknown selector %s", text);
        free(text);
        return NULL;
    }
    int ok;
    char *label = optional_label(r, node, "map", &ok);
    if (!ok) return NULL;
    selector_ctx *s = selector_new(r);
    s->kind = kind;
    s->selector = json_incref((json_t *)selector);
    s->label = label;
    if (r->form == FORM_FIELD) {
        size_t n = kind == SEL_PATH ? json_array_size(v) : 1;
        s->steps = xmalloc((n ? n : 1) * sizeof *s->steps);
        if (kind == SEL_IDENTITY || n == 0) {
            s->steps[0] = slot_find(r, SLOT_SELF, NULL, 0);
            n = 1;
        } else if (kind == SEL_FIELD) {
            s->steps[0] = slot_find(r, SLOT_FIELD, json_string_value(v), 0);
        } else {
            for (size_t i = 0; i < n; i++) {
                const json_t *step = json_array_get(v, i);
                s->steps[i] = json_is_string(step) ? slot_find(r, SLOT_FIELD, json_string_value(step), 0)
                                                   : slot_find(r, SLOT_INDEX, NULL, json_integer_value(step));
            }
        }
        s->step_count = n;
    }
    return s;
}

/** Form map_field: `child` fed the part the members steps[0], steps[1], ... lead to, as a
 *  chain of field maps. Consumes the caller's reference to `child`. */
static dfs_diffuser *field_chain(runner *r, const size_t *steps, size_t count, dfs_diffuser *child) {
    dfs_diffuser *d = child;
    for (size_t i = count; i-- > 0;) {
        dfs_diffuser *out = NULL;
        dfs_status st = dfs_diffuser_map_field(r->type, slot_offset(steps[i]), sizeof(const jv *), d, &out);
        dfs_diffuser_release(d);
        if (!status_ok(r, st, "dfs_diffuser_map_field")) return NULL;
        d = out;
    }
    return d;
}

/** A map (or invert) over `child` in the runner's form; consumes `s` and the caller's
 *  reference to `child`. */
static dfs_diffuser *build_map(runner *r, selector_ctx *s, dfs_diffuser *child) {
    dfs_diffuser *out = NULL;
    if (r->form == FORM_FIELD && s->label == NULL) {
        dfs_diffuser *d = field_chain(r, s->steps, s->step_count, child);
        selector_destroy(s);
        return d;
    }
    dfs_status st;
    const char *what;
    if (form_borrows_parts(r->form)) {
        st = dfs_diffuser_map_borrowed(r->type, selector_transform, s, selector_destroy, child, &out);
        what = "dfs_diffuser_map_borrowed";
    } else {
        /* Forms map, and map_field for a labelled map (a user call). */
        st = dfs_diffuser_map(r->type, selector_transform, s, selector_destroy, child, &out);
        what = "dfs_diffuser_map";
    }
    dfs_diffuser_release(child);
    return status_ok(r, st, what) ? out : NULL;
}

static dfs_diffuser *build_diffuser(builder *b, const json_t *node) {
    runner *r = b->r;
    dfs_type *type = r->type;
    dfs_diffuser *out = NULL;
    const char *op = json_is_object(node) ? json_string_value(json_object_get(node, "op")) : NULL;
    if (op == NULL) {
        runner_problem(r, "a node must be an object with a string \"op\"");
        return NULL;
    }

    if (strcmp(op, "ref") == 0) {
        static const char *const keys[] = {"op", "ref", NULL};
        const char *name = need_string(r, node, "ref", op);
        if (name == NULL || !keys_allowed(r, node, keys, "ref")) return NULL;
        size_t i = memo_find(&b->memo, name);
        if (i == (size_t)-1) {
            runner_problem(r, "ref to unknown node \"%s\"", name);
            return NULL;
        }
        if (b->memo.handles[i] == NULL) {
            if (b->memo.building[i]) {
                runner_problem(r, "ref cycle through \"%s\"", name);
                return NULL;
            }
            b->memo.building[i] = 1;
            b->memo.handles[i] = build_diffuser(b, json_object_get(r->named, name));
            b->memo.building[i] = 0;
            if (b->memo.handles[i] == NULL) return NULL;
        }
        /* One node per name: every ref is the same handle (the caller gets a reference). */
        if (!status_ok(r, dfs_diffuser_retain(b->memo.handles[i]), "dfs_diffuser_retain")) return NULL;
        return b->memo.handles[i];
    }

    if (strcmp(op, "intoAlways") == 0) {
        static const char *const keys[] = {"op", "effect", "children", NULL};
        if (!keys_allowed(r, node, keys, op) || !exactly_one(r, node, "effect", "children", op)) return NULL;
        if (json_object_get(node, "children") != NULL) {
            dfs_diffuser **children;
            size_t count;
            if (!build_diffuser_children(b, node, op, &children, &count)) return NULL;
            dfs_status st = dfs_diffuser_into_always_all(type, children, count, &out);
            release_diffusers(children, count); /* the parent keeps what it needs */
            return status_ok(r, st, "dfs_diffuser_into_always_all") ? out : NULL;
        }
        const char *label = need_string(r, node, "effect", op);
        if (label == NULL) return NULL;
        dfs_status st = dfs_diffuser_into_always(type, effect_call, effect_new(r, label), effect_destroy, &out);
        return status_ok(r, st, "dfs_diffuser_into_always") ? out : NULL;
    }

    if (strcmp(op, "into") == 0 || strcmp(op, "intoOnce") == 0) {
        static const char *const keys[] = {"op", "effect", NULL};
        const char *label = need_string(r, node, "effect", op);
        if (label == NULL || !keys_allowed(r, node, keys, op)) return NULL;
        int once = strcmp(op, "intoOnce") == 0;
        dfs_status st = once ? dfs_diffuser_into_once(type, effect_call, effect_new(r, label), effect_destroy, &out)
                             : dfs_diffuser_into(type, effect_call, effect_new(r, label), effect_destroy, &out);
        return status_ok(r, st, once ? "dfs_diffuser_into_once" : "dfs_diffuser_into") ? out : NULL;
    }

    if (strcmp(op, "intoAll") == 0) {
        static const char *const keys[] = {"op", "children", NULL};
        if (!keys_allowed(r, node, keys, op)) return NULL;
        dfs_diffuser **children;
        size_t count;
        if (!build_diffuser_children(b, node, op, &children, &count)) return NULL;
        dfs_status st = dfs_diffuser_into_all(type, children, count, &out);
        release_diffusers(children, count);
        return status_ok(r, st, "dfs_diffuser_into_all") ? out : NULL;
    }

    if (strcmp(op, "intoWhen") == 0) {
        static const char *const keys[] = {"op", "predicate", "effect", "child", "label", NULL};
        if (!keys_allowed(r, node, keys, op) || !exactly_one(r, node, "effect", "child", op)) return NULL;
        if (json_object_get(node, "effect") != NULL) {
            const char *label = need_string(r, node, "effect", op);
            if (label == NULL) return NULL;
            predicate_ctx *p = make_predicate(r, node);
            if (p == NULL) return NULL;
            dfs_status st = dfs_diffuser_into_when_effect(type, predicate_call, p, predicate_destroy, effect_call,
                                                          effect_new(r, label), effect_destroy, &out);
            return status_ok(r, st, "dfs_diffuser_into_when_effect") ? out : NULL;
        }
        predicate_ctx *p = make_predicate(r, node);
        if (p == NULL) return NULL;
        dfs_diffuser *child = build_diffuser(b, json_object_get(node, "child"));
        if (child == NULL) {
            predicate_destroy(p);
            return NULL;
        }
        dfs_status st = dfs_diffuser_into_when(predicate_call, p, predicate_destroy, child, &out);
        dfs_diffuser_release(child);
        return status_ok(r, st, "dfs_diffuser_into_when") ? out : NULL;
    }

    if (strcmp(op, "map") == 0) {
        static const char *const keys[] = {"op", "selector", "child", "label", NULL};
        if (!keys_allowed(r, node, keys, op)) return NULL;
        selector_ctx *s = make_selector(r, node);
        if (s == NULL) return NULL;
        dfs_diffuser *child = build_diffuser(b, json_object_get(node, "child"));
        if (child == NULL) {
            selector_destroy(s);
            return NULL;
        }
        return build_map(r, s, child);
    }

    if (strcmp(op, "invert") == 0) {
        /* dfs_diffuser_invert negates pointer-encoded truth values (dfs_type_pointer), not
         * JSON values: invert is map(not, child) (README 3.1, decision 4). */
        static const char *const keys[] = {"op", "child", NULL};
        if (!keys_allowed(r, node, keys, op)) return NULL;
        selector_ctx *s = selector_new(r);
        s->not = 1;
        if (r->form == FORM_FIELD) {
            s->steps = xmalloc(sizeof *s->steps);
            s->steps[0] = slot_find(r, SLOT_NOT, NULL, 0);
            s->step_count = 1;
        }
        dfs_diffuser *child = build_diffuser(b, json_object_get(node, "child"));
        if (child == NULL) {
            selector_destroy(s);
            return NULL;
        }
        return build_map(r, s, child);
    }

    runner_problem(r, "unknown diffuser op \"%s\"", op);
    return NULL;
}

/** Counts the maps and inverts reachable from `node` (refs followed), and among them
 *  those without a label (`plain`), to tell which forms apply. */
static void count_maps(const json_t *node, const json_t *named, int depth, int *maps, int *plain) {
    if (!json_is_object(node) || depth > 64) return; /* a cycle is reported when built */
    const char *op = json_string_value(json_object_get(node, "op"));
    if (op == NULL) return;
    if (strcmp(op, "ref") == 0) {
        const char *name = json_string_value(json_object_get(node, "ref"));
        if (name != NULL) count_maps(json_object_get(named, name), named, depth + 1, maps, plain);
        return;
    }
    if (strcmp(op, "map") == 0 || strcmp(op, "invert") == 0) {
        (*maps)++;
        if (json_object_get(node, "label") == NULL) (*plain)++;
    }
    count_maps(json_object_get(node, "child"), named, depth + 1, maps, plain);
    size_t i;
    const json_t *child;
    json_array_foreach(json_object_get(node, "children"), i, child) {
        count_maps(child, named, depth + 1, maps, plain);
    }
}

/* ------------------------------------------------------------------------------------
 * Scripted sources (README 4.2)
 * ------------------------------------------------------------------------------------ */

typedef struct connection {
    source *src;
    dfs_dispatch *dispatch;
} connection;

struct source {
    runner *r;
    char *name;
    connection **active;      /* active connections, in the order they were made */
    size_t active_count, active_cap;
    connection **all;         /* every connection ever made (freed with the source), so a
                                 repeated disconnect of one connection is safe to log */
    size_t all_count, all_cap;
};

static void push(connection ***list, size_t *count, size_t *cap, connection *c) {
    if (*count == *cap) {
        *cap = *cap ? *cap * 2 : 4;
        connection **grown = realloc(*list, *cap * sizeof **list);
        if (grown == NULL) {
            fprintf(stderr, "conformance_runner: out of memory\n");
            exit(2);
        }
        *list = grown;
    }
    (*list)[(*count)++] = c;
}

static void log_source(source *s, const char *what) {
    json_t *name = json_string(s->name);
    log_append(s->r, what, name);
    json_decref(name);
}

static int source_connect(dfs_dispatch *dispatch, void *ctx, void **out) {
    source *s = ctx;
    connection *c = xmalloc(sizeof *c);
    c->src = s;
    c->dispatch = dispatch;
    push(&s->all, &s->all_count, &s->all_cap, c);
    push(&s->active, &s->active_count, &s->active_cap, c);
    log_source(s, "connect");
    *out = c;
    return 0;
}

/** Logs every call (not idempotent on purpose: a double disconnect must show). */
static void source_disconnect(void *conn, void *ctx) {
    source *s = ctx;
    connection *c = conn;
    for (size_t i = 0; i < s->active_count; i++) {
        if (s->active[i] == c) {
            memmove(&s->active[i], &s->active[i + 1], (s->active_count - i - 1) * sizeof *s->active);
            s->active_count--;
            break;
        }
    }
    log_source(s, "dispose");
}

static source *find_source(runner *r, const char *name) {
    for (size_t i = 0; i < r->source_count; i++) {
        if (strcmp(r->sources[i].name, name) == 0) return &r->sources[i];
    }
    return NULL;
}

static void free_sources(runner *r) {
    for (size_t i = 0; i < r->source_count; i++) {
        source *s = &r->sources[i];
        for (size_t j = 0; j < s->all_count; j++) free(s->all[j]);
        free(s->all);
        free(s->active);
        free(s->name);
    }
    free(r->sources);
    r->sources = NULL;
    r->source_count = 0;
}

/* ------------------------------------------------------------------------------------
 * Building fusers (README 4.1)
 * ------------------------------------------------------------------------------------ */

static dfs_fuser *build_fuser(builder *b, const json_t *node);

static transform_ctx *make_transform(runner *r, const json_t *node, int unless_null) {
    const char *name = need_string(r, node, "transform", unless_null ? "extractUnlessNull" : "extract");
    if (name == NULL) return NULL;
    static const struct {
        const char *name;
        int kind;
    } plain[] = {{"identity", TR_IDENTITY}, {"double", TR_DOUBLE}, {"negate", TR_NEGATE},
                 {"not", TR_NOT},           {"length", TR_LENGTH}};
    int kind = -1;
    const char *arg = NULL;
    for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++) {
        if (strcmp(plain[i].name, name) == 0) kind = plain[i].kind;
    }
    if (kind < 0) {
        const char *colon = strchr(name, ':');
        if (colon != NULL && valid_name(colon + 1, 1)) {
            size_t prefix = (size_t)(colon - name);
            if (prefix == 5 && strncmp(name, "field", 5) == 0) kind = TR_FIELD;
            if (prefix == 4 && strncmp(name, "wrap", 4) == 0) kind = TR_WRAP;
            arg = colon + 1;
        }
    }
    if (kind < 0) {
        runner_problem(r, "unknown transform \"%s\"", name);
        return NULL;
    }
    transform_ctx *t = xmalloc(sizeof *t);
    t->r = r;
    t->kind = kind;
    t->unless_null = unless_null;
    t->name = arg ? xstrdup(arg) : NULL;
    r->live_contexts++;
    return t;
}

static dfs_fuser *build_fuser(builder *b, const json_t *node) {
    runner *r = b->r;
    dfs_type *type = r->type;
    dfs_fuser *out = NULL;
    const char *op = json_is_object(node) ? json_string_value(json_object_get(node, "op")) : NULL;
    if (op == NULL) {
        runner_problem(r, "a node must be an object with a string \"op\"");
        return NULL;
    }

    if (strcmp(op, "ref") == 0) {
        static const char *const keys[] = {"op", "ref", NULL};
        const char *name = need_string(r, node, "ref", op);
        if (name == NULL || !keys_allowed(r, node, keys, "ref")) return NULL;
        size_t i = memo_find(&b->memo, name);
        if (i == (size_t)-1) {
            runner_problem(r, "ref to unknown node \"%s\"", name);
            return NULL;
        }
        if (b->memo.handles[i] == NULL) {
            if (b->memo.building[i]) {
                runner_problem(r, "ref cycle through \"%s\"", name);
                return NULL;
            }
            b->memo.building[i] = 1;
            b->memo.handles[i] = build_fuser(b, json_object_get(r->named, name));
            b->memo.building[i] = 0;
            if (b->memo.handles[i] == NULL) return NULL;
        }
        if (!status_ok(r, dfs_fuser_retain(b->memo.handles[i]), "dfs_fuser_retain")) return NULL;
        return b->memo.handles[i];
    }

    if (strcmp(op, "from") == 0) {
        static const char *const keys[] = {"op", "source", NULL};
        const char *name = need_string(r, node, "source", op);
        if (name == NULL || !keys_allowed(r, node, keys, op)) return NULL;
        source *s = find_source(r, name);
        if (s == NULL) {
            runner_problem(r, "source \"%s\" is not in \"sources\"", name);
            return NULL;
        }
        /* The source outlives every fuser and connection of the vector: no destroy. */
        dfs_status st = dfs_fuser_from(type, source_connect, source_disconnect, s, NULL, &out);
        return status_ok(r, st, "dfs_fuser_from") ? out : NULL;
    }

    if (strcmp(op, "fromAll") == 0) {
        static const char *const keys[] = {"op", "children", NULL};
        if (!keys_allowed(r, node, keys, op)) return NULL;
        const json_t *children = json_object_get(node, "children");
        if (!json_is_array(children)) {
            runner_problem(r, "op \"fromAll\" needs an array \"children\"");
            return NULL;
        }
        size_t n = json_array_size(children);
        dfs_fuser **list = xmalloc(n * sizeof *list);
        size_t made = 0;
        for (; made < n; made++) {
            list[made] = build_fuser(b, json_array_get(children, made));
            if (list[made] == NULL) break;
        }
        dfs_status st = made == n ? dfs_fuser_from_all(type, list, n, &out) : DFS_OK;
        for (size_t i = 0; i < made; i++) dfs_fuser_release(list[i]);
        free(list);
        if (made != n) return NULL;
        return status_ok(r, st, "dfs_fuser_from_all") ? out : NULL;
    }

    if (strcmp(op, "extract") == 0 || strcmp(op, "extractUnlessNull") == 0) {
        static const char *const keys[] = {"op", "transform", "child", NULL};
        if (!keys_allowed(r, node, keys, op)) return NULL;
        int unless_null = strcmp(op, "extractUnlessNull") == 0;
        transform_ctx *t = make_transform(r, node, unless_null);
        if (t == NULL) return NULL;
        dfs_fuser *child = build_fuser(b, json_object_get(node, "child"));
        if (child == NULL) {
            transform_destroy(t);
            return NULL;
        }
        dfs_status st = unless_null
            ? dfs_fuser_extract_unless_null(type, transform_call, t, transform_destroy, child, &out)
            : dfs_fuser_extract(type, transform_call, t, transform_destroy, child, &out);
        dfs_fuser_release(child);
        return status_ok(r, st, unless_null ? "dfs_fuser_extract_unless_null" : "dfs_fuser_extract") ? out : NULL;
    }

    if (strcmp(op, "extractConstant") == 0) {
        static const char *const keys[] = {"op", "constant", "child", NULL};
        if (!keys_allowed(r, node, keys, op)) return NULL;
        const json_t *constant = json_object_get(node, "constant");
        if (constant == NULL) {
            runner_problem(r, "op \"extractConstant\" needs \"constant\"");
            return NULL;
        }
        dfs_fuser *child = build_fuser(b, json_object_get(node, "child"));
        if (child == NULL) return NULL;
        /* The constant is borrowed from the vector; the type's retain keeps it. */
        dfs_status st = dfs_fuser_extract_constant(type, constant, child, &out);
        dfs_fuser_release(child);
        return status_ok(r, st, "dfs_fuser_extract_constant") ? out : NULL;
    }

    runner_problem(r, "unknown fuser op \"%s\"", op);
    return NULL;
}


/* ------------------------------------------------------------------------------------
 * Checking a step (README 5)
 * ------------------------------------------------------------------------------------ */

/** Compares the step's log and error with `expect`. Prints and returns 0 on a mismatch. */
static int check_step(runner *r, size_t index, const json_t *step, const char *error, const char *note) {
    const json_t *expect = json_object_get(step, "expect");
    const json_t *expected_log = json_object_get(expect, "log");
    const json_t *expected_error = json_object_get(expect, "error");
    int ok = 1;
    if (!json_equal(r->log, expected_log)) {
        char *got = render(r->log), *want = render(expected_log);
        printf("FAIL %s: step %zu: log\n     got      %s\n     expected %s\n", r->label, index, got, want);
        free(got);
        free(want);
        ok = 0;
    }
    const char *want_error = json_is_string(expected_error) ? json_string_value(expected_error) : NULL;
    int same = (error == NULL && want_error == NULL) ||
               (error != NULL && want_error != NULL && strcmp(error, want_error) == 0);
    if (!same) {
        printf("FAIL %s: step %zu: error\n     got      %s\n     expected %s\n", r->label, index,
               error ? error : "null", want_error ? want_error : "null");
        ok = 0;
    }
    if (note != NULL) {
        printf("FAIL %s: step %zu: %s\n", r->label, index, note);
        ok = 0;
    }
    return ok;
}

/**
 * Turns the status of a run / an emission into the step's error (README 5.2):
 * DFS_OK -> null; DFS_ERR_CALLBACK -> the label of the user call that failed, which
 * dfs_last_error() must also give. Anything else, or a failure the library did not
 * report, is written to `note`.
 */
static const char *status_error(runner *r, dfs_status status, const char *call, char *note, size_t note_size) {
    if (status == DFS_OK) {
        if (r->failed_label != NULL) {
            snprintf(note, note_size, "user call \"%s\" failed but %s returned DFS_OK", r->failed_label, call);
        }
        return NULL;
    }
    if (status != DFS_ERR_CALLBACK) {
        snprintf(note, note_size, "%s returned %s: %s", call, dfs_status_name(status), dfs_last_error());
        return "(library error)";
    }
    if (r->failed_label == NULL) {
        snprintf(note, note_size, "%s returned DFS_ERR_CALLBACK but no user call failed (dfs_last_error: \"%s\")",
                 call, dfs_last_error());
        return "(callback error without a failing user call)";
    }
    const char *message = dfs_last_error();
    if (strcmp(message, r->failed_label) != 0) {
        snprintf(note, note_size, "dfs_last_error() is \"%s\", expected the failing label \"%s\"", message,
                 r->failed_label);
    }
    return r->failed_label;
}

/** Checks the common keys of a step: `expect` and an optional `fail` list of strings. */
static int step_shape(runner *r, size_t index, const json_t *step, const char *const *keys) {
    if (!json_is_object(step)) {
        runner_problem(r, "step %zu is not an object", index);
        return 0;
    }
    char what[64];
    snprintf(what, sizeof what, "step %zu", index);
    if (!keys_allowed(r, step, keys, what)) return 0;
    const json_t *expect = json_object_get(step, "expect");
    static const char *const expect_keys[] = {"log", "error", NULL};
    if (!json_is_object(expect) || !json_is_array(json_object_get(expect, "log")) ||
        !(json_is_null(json_object_get(expect, "error")) || json_is_string(json_object_get(expect, "error"))) ||
        !keys_allowed(r, expect, expect_keys, "expect")) {
        runner_problem(r, "step %zu: \"expect\" must be {\"log\": [...], \"error\": null | label}", index);
        return 0;
    }
    const json_t *fail = json_object_get(step, "fail");
    if (fail != NULL) {
        size_t i;
        const json_t *label;
        if (!json_is_array(fail)) {
            runner_problem(r, "step %zu: \"fail\" must be an array", index);
            return 0;
        }
        json_array_foreach(fail, i, label) {
            if (!json_is_string(label)) {
                runner_problem(r, "step %zu: \"fail\" must list strings", index);
                return 0;
            }
        }
    }
    return 1;
}

/* ------------------------------------------------------------------------------------
 * Running a vector in a form
 * ------------------------------------------------------------------------------------ */

/** Runs a diffuser vector; returns 1 if every step matched. Problems go to r->problem. */
static int run_diffuser_vector(runner *r, const json_t *root, const json_t *steps) {
    builder b = {.r = r};
    memo_init(&b.memo, r->named);
    dfs_diffuser *diffuser = build_diffuser(&b, root);
    if (r->form == FORM_FIELD) jv_make_constants(r); /* every member is known now */
    int ok = diffuser != NULL;
    static const char *const keys[] = {"run", "fail", "comment", "expect", NULL};
    size_t index;
    const json_t *step;
    if (diffuser != NULL) {
        json_array_foreach(steps, index, step) {
            if (!step_shape(r, index, step, keys)) {
                ok = 0;
                break;
            }
            const json_t *value = json_object_get(step, "run"); /* present even when null */
            if (value == NULL) {
                runner_problem(r, "step %zu has no \"run\"", index);
                ok = 0;
                break;
            }
            /* A fresh value for every run: no gate ever holds a pointer of this run. */
            json_t *fresh = json_deep_copy(value);
            const void *argument = fresh;
            jv *model = NULL;
            if (r->form == FORM_FIELD) argument = model = jv_build(r, fresh);
            step_begin(r, json_object_get(step, "fail"));
            dfs_status status = dfs_diffuser_run(diffuser, argument);
            char note[512] = "";
            const char *error = status_error(r, status, "dfs_diffuser_run", note, sizeof note);
            if (r->failures > 1 && note[0] == '\0') {
                snprintf(note, sizeof note, "%d user calls failed in one run (the run must stop at the first)",
                         r->failures);
            }
            if (!check_step(r, index, step, error, note[0] ? note : NULL)) ok = 0;
            if (model != NULL) jv_unref(r, model);
            /* Form borrowed_values: the gates may hold the value (or parts of it), which the
             * core borrows: it stays alive until the tree is released. */
            if (r->form == FORM_VALUES) runner_keep(r, fresh);
            else json_decref(fresh);
        }
    }
    dfs_diffuser_release(diffuser);
    memo_free(&b.memo, 0);
    return ok;
}

/** Runs a fuser vector; returns 1 if every step matched. */
static int run_fuser_vector(runner *r, const json_t *vector, const json_t *root, const json_t *steps) {
    const json_t *names = json_object_get(vector, "sources");
    if (!json_is_array(names)) {
        runner_problem(r, "a fuser vector needs an array \"sources\"");
        return 0;
    }
    r->source_count = json_array_size(names);
    r->sources = xmalloc(r->source_count * sizeof *r->sources);
    for (size_t i = 0; i < r->source_count; i++) {
        const json_t *name = json_array_get(names, i);
        r->sources[i].r = r;
        r->sources[i].name = xstrdup(json_is_string(name) ? json_string_value(name) : "");
        if (!json_is_string(name)) runner_problem(r, "\"sources\" must list strings");
    }
    if (r->problem[0] != '\0') {
        free_sources(r);
        return 0;
    }

    builder b = {.r = r};
    memo_init(&b.memo, r->named);
    dfs_fuser *fuser = build_fuser(&b, root);
    int ok = fuser != NULL;

    /* The connections made by `connect` steps, by label. */
    size_t step_count = json_array_size(steps);
    char **labels = xmalloc(step_count * sizeof *labels);
    dfs_disposable **disposables = xmalloc(step_count * sizeof *disposables);
    size_t connected = 0;

    static const char *const keys[] = {"connect", "dispose", "emit", "value", "fail", "comment", "expect", NULL};
    size_t index;
    const json_t *step;
    if (fuser != NULL) {
        json_array_foreach(steps, index, step) {
            if (!step_shape(r, index, step, keys)) {
                ok = 0;
                break;
            }
            const json_t *connect = json_object_get(step, "connect");
            const json_t *dispose = json_object_get(step, "dispose");
            const json_t *emit = json_object_get(step, "emit");
            if ((connect != NULL) + (dispose != NULL) + (emit != NULL) != 1 ||
                (connect && !json_is_string(connect)) || (dispose && !json_is_string(dispose)) ||
                (emit && !json_is_string(emit)) ||
                (!emit && (json_object_get(step, "value") || json_object_get(step, "fail")))) {
                runner_problem(r, "step %zu: needs exactly one of connect / dispose / emit (with value)", index);
                ok = 0;
                break;
            }
            step_begin(r, json_object_get(step, "fail"));
            const char *error = NULL;
            char note[512] = "";
            if (connect != NULL) {
                const char *label = json_string_value(connect);
                for (size_t i = 0; i < connected; i++) {
                    if (strcmp(labels[i], label) == 0) runner_problem(r, "step %zu: \"%s\" connected twice", index, label);
                }
                if (r->problem[0] != '\0') {
                    ok = 0;
                    break;
                }
                dfs_disposable *d = NULL;
                dfs_status status = dfs_fuser_connect(fuser, effect_call, effect_new(r, label), effect_destroy, &d);
                if (status != DFS_OK) {
                    snprintf(note, sizeof note, "dfs_fuser_connect returned %s: %s", dfs_status_name(status),
                             dfs_last_error());
                } else {
                    labels[connected] = xstrdup(label);
                    disposables[connected++] = d;
                }
            } else if (dispose != NULL) {
                const char *label = json_string_value(dispose);
                dfs_disposable *d = NULL;
                for (size_t i = 0; i < connected; i++) {
                    if (strcmp(labels[i], label) == 0) d = disposables[i];
                }
                if (d == NULL) {
                    runner_problem(r, "step %zu: dispose of \"%s\", which is not connected", index, label);
                    ok = 0;
                    break;
                }
                dfs_status status = dfs_disposable_dispose(d);
                if (status != DFS_OK) {
                    snprintf(note, sizeof note, "dfs_disposable_dispose returned %s: %s", dfs_status_name(status),
                             dfs_last_error());
                }
            } else {
                source *s = find_source(r, json_string_value(emit));
                const json_t *value = json_object_get(step, "value");
                if (s == NULL || value == NULL) {
                    runner_problem(r, "step %zu: emit needs a listed source and a \"value\"", index);
                    ok = 0;
                    break;
                }
                /* Deliver to a copy of the list as it is at the start of the emit. */
                size_t n = s->active_count;
                connection **copy = xmalloc(n * sizeof *copy);
                if (n) memcpy(copy, s->active, n * sizeof *copy);
                dfs_status status = DFS_OK;
                for (size_t i = 0; i < n && status == DFS_OK; i++) {
                    /* The emit stops at the first delivery that reports a failure. */
                    status = dfs_dispatch_emit(copy[i]->dispatch, value);
                }
                free(copy);
                error = status_error(r, status, "dfs_dispatch_emit", note, sizeof note);
            }
            if (r->failures > 1 && note[0] == '\0') {
                snprintf(note, sizeof note, "%d effects failed in one step (the emit must stop at the first)",
                         r->failures);
            }
            if (!check_step(r, index, step, error, note[0] ? note : NULL)) ok = 0;
        }
    }

    /* Cleanup: dispose what is still connected (a released connection would stay
     * connected), then release every handle. Log entries made here are not checked. */
    step_begin(r, NULL);
    for (size_t i = 0; i < connected; i++) {
        dfs_disposable_dispose(disposables[i]);
        dfs_disposable_release(disposables[i]);
        free(labels[i]);
    }
    free(labels);
    free(disposables);
    dfs_fuser_release(fuser);
    memo_free(&b.memo, 1);
    free_sources(r);
    return ok;
}

/** 1 if a JSON value contains a real number (the format has none). */
static int has_real(const json_t *v) {
    if (json_is_real(v)) return 1;
    size_t i;
    const char *key;
    const json_t *item;
    if (json_is_array(v)) {
        json_array_foreach(v, i, item) {
            if (has_real(item)) return 1;
        }
    } else if (json_is_object(v)) {
        json_object_foreach((json_t *)v, key, item) {
            if (has_real(item)) return 1;
        }
    }
    return 0;
}

/** Runs one vector in one form. Returns 1 if it passed. */
static int run_form(const json_t *vector, const char *name, int form, int equality) {
    runner r;
    memset(&r, 0, sizeof r);
    r.form = form;
    r.equality = equality;
    snprintf(r.label, sizeof r.label, "%s [%s]", name, form_names[form]);
    r.log = json_array();
    r.named = json_object_get(vector, "nodes");
    const char *kind = json_string_value(json_object_get(vector, "kind"));
    const json_t *root = json_object_get(vector, "root");
    const json_t *steps = json_object_get(vector, "steps");

    /* The vector's value type; its context is the runner, which outlives every handle.
     * Form borrowed_values: the same equality, no retain and no release (borrowed). */
    dfs_status st = form == FORM_VALUES
        ? dfs_type_new("json (borrowed)", value_equal, NULL, NULL, &r, NULL, &r.type)
        : dfs_type_new(form == FORM_FIELD ? "jv" : "json", value_equal, value_retain, value_release, &r, NULL,
                       &r.type);
    int ok = 0;
    if (st != DFS_OK) {
        runner_problem(&r, "dfs_type_new returned %s: %s", dfs_status_name(st), dfs_last_error());
    } else if (strcmp(kind, "diffuser") == 0) {
        ok = run_diffuser_vector(&r, root, steps);
    } else {
        ok = run_fuser_vector(&r, vector, root, steps);
    }
    dfs_type_release(r.type);
    /* Every handle is released: nothing borrows the kept values any more. */
    runner_free_kept(&r);

    if (r.problem[0] != '\0') {
        printf("FAIL %s: could not run: %s\n", r.label, r.problem);
        ok = 0;
    }
    /* Every context handed to the library must have been destroyed with the handles. */
    if (r.live_contexts != 0) {
        printf("FAIL %s: %d callback contexts were not destroyed after every handle was released\n", r.label,
               r.live_contexts);
        ok = 0;
    }
    jv_free_constants(&r);
    if (r.live_jvs != 0) {
        printf("FAIL %s: %ld jv values were not released after every handle was released\n", r.label, r.live_jvs);
        ok = 0;
    }
    json_decref(r.log);
    json_decref(r.calls);
    free(r.failed_label);
    return ok;
}

/* ------------------------------------------------------------------------------------
 * List vectors (README section 10): dfs_list_diff_compute
 * ------------------------------------------------------------------------------------ */

/* Forms of list vectors: how the contents reach the library. Keys are always 64-bit
 * values, one per distinct key (JSON equality, so 1 and "1" differ), spread over the
 * whole 64 bits. */
enum list_form {
    LIST_FORM_CALLBACK,
    LIST_FORM_FINGERPRINT,
    LIST_FORM_INTO_LIST,
    LIST_FORM_INTO_LIST_HASHED,
    LIST_FORM_COUNT
};

static const char *const list_form_names[LIST_FORM_COUNT] = {"list_callback", "list_fingerprint", "list_into_list",
                                                             "list_into_list_hashed"};

static const char *const list_form_descriptions[LIST_FORM_COUNT] = {
    "dfs_list_diff_compute with a same_content callback (JSON equality of the contents)",
    "dfs_list_diff_compute with content fingerprints (one per distinct content)",
    "dfs_diffuser_into_list, two runs: keys, same_content (JSON equality)",
    "dfs_diffuser_into_list, two runs: colliding keys (top two bits) and same_key",
};

/** The number of a value among `seen` (JSON equality), adding it if new. */
static size_t intern(json_t *seen, json_t *value) {
    size_t i;
    json_t *item;
    json_array_foreach(seen, i, item) {
        if (json_equal(item, value)) return i;
    }
    json_array_append(seen, value);
    return json_array_size(seen) - 1;
}

/** The 64-bit key of the interned key number `n`: distinct numbers give distinct keys. */
static uint64_t list_key_bits(size_t n) {
    return ((uint64_t)n + 1) * UINT64_C(0x9E3779B97F4A7C15);
}

typedef struct list_side {
    uint64_t *keys;
    uint64_t *contents;
    json_t **items_content; /* borrowed */
    size_t count;
} list_side;

typedef struct list_ctx {
    const list_side *old_side, *new_side;
    long calls;
    int bad_index;
} list_ctx;

static int list_same(int32_t old_index, int32_t new_index, void *ctx) {
    list_ctx *c = ctx;
    c->calls++;
    if (old_index < 0 || (size_t)old_index >= c->old_side->count || new_index < 0 ||
        (size_t)new_index >= c->new_side->count) {
        c->bad_index = 1;
        return -1;
    }
    return json_equal(c->old_side->items_content[old_index], c->new_side->items_content[new_index]) ? 1 : 0;
}

/** Reads `items` ([key, content] pairs) into a side; 0 with `problem` set if malformed. */
static int list_read_side(const json_t *items, json_t *keys_seen, json_t *contents_seen, list_side *side,
                          char *problem, size_t problem_size, const char *what) {
    memset(side, 0, sizeof *side);
    if (!json_is_array(items)) {
        snprintf(problem, problem_size, "\"%s\" is not an array", what);
        return 0;
    }
    side->count = json_array_size(items);
    side->keys = xmalloc(side->count * sizeof *side->keys);
    side->contents = xmalloc(side->count * sizeof *side->contents);
    side->items_content = xmalloc(side->count * sizeof *side->items_content);
    for (size_t i = 0; i < side->count; i++) {
        json_t *item = json_array_get(items, i);
        json_t *key = json_array_get(item, 0);
        if (!json_is_array(item) || json_array_size(item) != 2 || !(json_is_integer(key) || json_is_string(key))) {
            snprintf(problem, problem_size, "\"%s\"[%zu] is not [key (integer or string), content]", what, i);
            return 0;
        }
        side->keys[i] = list_key_bits(intern(keys_seen, key));
        side->items_content[i] = json_array_get(item, 1);
        side->contents[i] = (uint64_t)intern(contents_seen, side->items_content[i]);
    }
    return 1;
}

static void list_free_side(list_side *side) {
    free(side->keys);
    free(side->contents);
    free(side->items_content);
}

static json_t *ints_json(const int32_t *values, int32_t count) {
    json_t *array = json_array();
    for (int32_t i = 0; i < count; i++) json_array_append_new(array, json_integer(values[i]));
    return array;
}

static json_t *pairs_json(const int32_t *values, int32_t count) {
    json_t *array = json_array();
    for (int32_t i = 0; i < count; i++)
        json_array_append_new(array, json_pack("[ii]", (int)values[2 * i], (int)values[2 * i + 1]));
    return array;
}

static json_t *script_json(const int32_t *values, int32_t count) {
    json_t *array = json_array();
    for (int32_t i = 0; i < count; i++) {
        const char *kind;
        switch (values[3 * i]) {
        case DFS_LIST_REMOVE: kind = "remove"; break;
        case DFS_LIST_MOVE: kind = "move"; break;
        case DFS_LIST_INSERT: kind = "insert"; break;
        case DFS_LIST_CHANGE: kind = "change"; break;
        default: kind = "(unknown step kind)"; break;
        }
        json_array_append_new(array, json_pack("[sii]", kind, (int)values[3 * i + 1], (int)values[3 * i + 2]));
    }
    return array;
}

/** The diff part of a dfs_list_diff as the vector's expect keys. */
static json_t *list_diff_json(const dfs_list_diff *d) {
    return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:b}",
                     "deletes", ints_json(d->deletes, d->delete_count),
                     "inserts", ints_json(d->inserts, d->insert_count),
                     "moves", pairs_json(d->moves, d->move_count),
                     "updates", pairs_json(d->updates, d->update_count),
                     "oldToNew", ints_json(d->old_to_new, d->old_count),
                     "newToOld", ints_json(d->new_to_old, d->new_count),
                     "hasDuplicates", d->has_duplicates != 0);
}

static json_t *list_batch_json(const dfs_list_diff *d) {
    return json_pack("{s:o, s:o, s:o, s:o, s:o}",
                     "deletes", ints_json(d->batch_deletes, d->batch_delete_count),
                     "inserts", ints_json(d->batch_inserts, d->batch_insert_count),
                     "moves", pairs_json(d->batch_moves, d->batch_move_count),
                     "reloads", ints_json(d->batch_reloads, d->batch_reload_count),
                     "reloadsAfterMoves", ints_json(d->batch_reloads_after_moves, d->batch_reload_after_move_count));
}

/** Compares `got` with expect[key]; prints and returns 0 on a mismatch. Takes `got`. */
static int list_compare(const char *label, const json_t *expect, const char *key, json_t *got, const char *call) {
    const json_t *want = json_object_get(expect, key);
    int ok = want != NULL && json_equal(want, got);
    if (!ok) {
        char *g = render(got), *w = render(want);
        printf("FAIL %s: %s (%s)\n     got      %s\n     expected %s\n", label, key, call, g, w);
        free(g);
        free(w);
    }
    json_decref(got);
    return ok;
}

/* dfs_diffuser_into_list over list_side values (dfs_type_pointer: the sides outlive the
 * node). The reader's ctx says whether keys are reduced to their top two bits. */
typedef struct list_node_ctx {
    int hashed;
    int bad_index;
} list_node_ctx;

static int list_node_count(const void *list, size_t *count, void *ctx) {
    (void)ctx;
    *count = ((const list_side *)list)->count;
    return 0;
}

static int list_node_index_ok(list_node_ctx *c, const list_side *side, int32_t index) {
    if (index >= 0 && (size_t)index < side->count) return 1;
    c->bad_index = 1;
    return 0;
}

static int list_node_key(const void *list, int32_t index, uint64_t *key, void *ctx) {
    list_node_ctx *c = ctx;
    const list_side *side = list;
    if (!list_node_index_ok(c, side, index)) return -1;
    *key = c->hashed ? side->keys[index] >> 62 : side->keys[index];
    return 0;
}

static int list_node_same_key(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    list_node_ctx *c = ctx;
    const list_side *x = a, *y = b;
    if (!list_node_index_ok(c, x, i) || !list_node_index_ok(c, y, j)) return -1;
    return x->keys[i] == y->keys[j];
}

static int list_node_same_content(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    list_node_ctx *c = ctx;
    const list_side *x = a, *y = b;
    if (!list_node_index_ok(c, x, i) || !list_node_index_ok(c, y, j)) return -1;
    return json_equal(x->items_content[i], y->items_content[j]) ? 1 : 0;
}

/* What the sink of one node saw. */
typedef struct list_sink_ctx {
    const char *label, *what;
    const json_t *expect;
    const list_side *old_side, *new_side;
    unsigned int flags;
    int calls;
    int ok;
} list_sink_ctx;

static int list_node_sink(const dfs_list_diff *d, const void *new_list, int is_first, void *ctx) {
    list_sink_ctx *k = ctx;
    k->calls++;
    if (is_first != (k->calls == 1)) {
        printf("FAIL %s: sink call %d (%s) has is_first %d\n", k->label, k->calls, k->what, is_first);
        k->ok = 0;
    }
    if (k->calls == 1) {
        /* The first run: from the empty list, every item of the old list inserted. */
        if (new_list != k->old_side || d->old_count != 0 || d->new_count != (int32_t)k->old_side->count ||
            d->insert_count != d->new_count || d->delete_count || d->move_count || d->update_count) {
            printf("FAIL %s: the first sink call (%s) is not every item inserted\n", k->label, k->what);
            k->ok = 0;
        }
        return 0;
    }
    if (new_list != k->new_side || d->old_count != (int32_t)k->old_side->count ||
        d->new_count != (int32_t)k->new_side->count) {
        printf("FAIL %s: the second sink call (%s) is not from the old list to the new one\n", k->label, k->what);
        k->ok = 0;
        return 0;
    }
    json_t *diff = list_diff_json(d);
    const char *key;
    json_t *value;
    json_object_foreach(diff, key, value) {
        k->ok &= list_compare(k->label, k->expect, key, json_incref(value), k->what);
    }
    json_decref(diff);
    if (k->flags & DFS_LIST_BATCH_MOVE_THEN_RELOAD) {
        k->ok &= list_compare(k->label, k->expect, "batchMoveThenReload", list_batch_json(d), k->what);
    } else {
        k->ok &= list_compare(k->label, k->expect, "batch", list_batch_json(d), k->what);
        k->ok &= list_compare(k->label, k->expect, "script", script_json(d->script, d->script_count), k->what);
    }
    return 0;
}

/** Whether the vector's expected diff is empty (no delete, insert, move or update). */
static int list_expect_empty(const json_t *expect) {
    static const char *const parts[] = {"deletes", "inserts", "moves", "updates"};
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        if (json_array_size(json_object_get(expect, parts[i])) != 0) return 0;
    }
    return 1;
}

/** Runs a list vector through dfs_diffuser_into_list: the old list, then the new one. */
static int run_list_node(const json_t *expect, const char *label, const list_side *old_side,
                         const list_side *new_side, int hashed) {
    static const struct {
        unsigned int flags;
        const char *what;
    } nodes[] = {
        {DFS_LIST_BATCH | DFS_LIST_SCRIPT, "into_list, DFS_LIST_BATCH | DFS_LIST_SCRIPT"},
        {DFS_LIST_BATCH_MOVE_THEN_RELOAD, "into_list, DFS_LIST_BATCH_MOVE_THEN_RELOAD"},
    };
    int ok = 1;
    for (size_t n = 0; n < sizeof nodes / sizeof nodes[0]; n++) {
        list_node_ctx reader_ctx = {hashed, 0};
        list_sink_ctx sink_ctx = {label, nodes[n].what, expect, old_side, new_side, nodes[n].flags, 0, 1};
        dfs_list_reader reader = {list_node_count, list_node_key, hashed ? list_node_same_key : NULL,
                                  list_node_same_content, NULL};
        dfs_diffuser *node = NULL;
        dfs_status st = dfs_diffuser_into_list(dfs_type_pointer(), &reader, &reader_ctx, NULL, nodes[n].flags,
                                               list_node_sink, &sink_ctx, NULL, &node);
        if (st == DFS_OK) st = dfs_diffuser_run(node, old_side);
        if (st == DFS_OK) st = dfs_diffuser_run(node, new_side);
        dfs_diffuser_release(node);
        if (st != DFS_OK) {
            printf("FAIL %s: %s: %s: %s\n", label, nodes[n].what, dfs_status_name(st), dfs_last_error());
            ok = 0;
            continue;
        }
        int expected_calls = list_expect_empty(expect) ? 1 : 2;
        if (sink_ctx.calls != expected_calls) {
            printf("FAIL %s: %s: %d sink calls, expected %d\n", label, nodes[n].what, sink_ctx.calls, expected_calls);
            ok = 0;
        }
        if (reader_ctx.bad_index) {
            printf("FAIL %s: %s: a reader function got an index out of range\n", label, nodes[n].what);
            ok = 0;
        }
        ok &= sink_ctx.ok;
    }
    return ok;
}

/** Runs one list vector in one form. Returns 1 if it passed. */
static int run_list_form(const json_t *vector, const char *name, int form) {
    char label[300];
    snprintf(label, sizeof label, "%s [%s]", name, list_form_names[form]);
    const json_t *expect = json_object_get(vector, "expect");
    json_t *keys_seen = json_array(), *contents_seen = json_array();
    list_side old_side, new_side;
    char problem[256] = "";
    int ok = list_read_side(json_object_get(vector, "old"), keys_seen, contents_seen, &old_side, problem,
                            sizeof problem, "old") &&
             list_read_side(json_object_get(vector, "new"), keys_seen, contents_seen, &new_side, problem,
                            sizeof problem, "new");
    if (!ok) {
        printf("FAIL %s: could not run: %s\n", label, problem);
    } else if (form == LIST_FORM_INTO_LIST || form == LIST_FORM_INTO_LIST_HASHED) {
        ok = run_list_node(expect, label, &old_side, &new_side, form == LIST_FORM_INTO_LIST_HASHED);
    } else {
        dfs_list_side o = {old_side.keys, form == LIST_FORM_FINGERPRINT ? old_side.contents : NULL, old_side.count};
        dfs_list_side n = {new_side.keys, form == LIST_FORM_FINGERPRINT ? new_side.contents : NULL, new_side.count};
        static const struct {
            unsigned int flags;
            const char *what;
        } calls[] = {
            {DFS_LIST_BATCH | DFS_LIST_SCRIPT, "DFS_LIST_BATCH | DFS_LIST_SCRIPT"},
            {DFS_LIST_BATCH_MOVE_THEN_RELOAD, "DFS_LIST_BATCH_MOVE_THEN_RELOAD"},
            {0, "no flags"},
        };
        for (size_t c = 0; c < sizeof calls / sizeof calls[0]; c++) {
            list_ctx ctx = {&old_side, &new_side, 0, 0};
            dfs_list_diff d;
            dfs_status st = dfs_list_diff_compute(&o, &n, form == LIST_FORM_CALLBACK ? list_same : NULL, &ctx,
                                                  calls[c].flags, &d);
            if (st != DFS_OK) {
                printf("FAIL %s: dfs_list_diff_compute (%s) returned %s: %s\n", label, calls[c].what,
                       dfs_status_name(st), dfs_last_error());
                ok = 0;
                continue;
            }
            if (ctx.bad_index) {
                printf("FAIL %s: same_content called with an index out of range (%s)\n", label, calls[c].what);
                ok = 0;
            }
            if (d.old_count != (int32_t)old_side.count || d.new_count != (int32_t)new_side.count) {
                printf("FAIL %s: counts %d -> %d, lists %zu -> %zu (%s)\n", label, d.old_count, d.new_count,
                       old_side.count, new_side.count, calls[c].what);
                ok = 0;
            }
            /* The diff, key by key, for readable messages. */
            json_t *diff = list_diff_json(&d);
            const char *key;
            json_t *value;
            json_object_foreach(diff, key, value) {
                ok &= list_compare(label, expect, key, json_incref(value), calls[c].what);
            }
            json_decref(diff);
            if (calls[c].flags & DFS_LIST_BATCH_MOVE_THEN_RELOAD) {
                ok &= list_compare(label, expect, "batchMoveThenReload", list_batch_json(&d), calls[c].what);
            } else if (calls[c].flags & DFS_LIST_BATCH) {
                ok &= list_compare(label, expect, "batch", list_batch_json(&d), calls[c].what);
            } else if (d.batch_delete_count || d.batch_insert_count || d.batch_move_count || d.batch_reload_count ||
                       d.batch_reload_after_move_count || d.batch_deletes || d.batch_moves) {
                printf("FAIL %s: a batch without DFS_LIST_BATCH\n", label);
                ok = 0;
            }
            if (calls[c].flags & DFS_LIST_SCRIPT) {
                ok &= list_compare(label, expect, "script", script_json(d.script, d.script_count), calls[c].what);
            } else if (d.script_count != 0 || d.script != NULL) {
                printf("FAIL %s: a script without DFS_LIST_SCRIPT\n", label);
                ok = 0;
            }
            dfs_list_diff_free(&d);
            if (d.block != NULL || d.deletes != NULL || d.delete_count != 0) {
                printf("FAIL %s: dfs_list_diff_free did not zero the diff\n", label);
                ok = 0;
            }
        }
    }
    list_free_side(&old_side);
    list_free_side(&new_side);
    json_decref(keys_seen);
    json_decref(contents_seen);
    return ok;
}

/** Checks a list vector's top level (README 10.1); 0 with `problem` set if malformed. */
static int list_vector_shape(runner *check, const json_t *vector, const char *base, size_t base_len) {
    static const char *const top_keys[] = {"format", "name", "kind", "description", "old", "new", "expect", NULL};
    static const char *const expect_keys[] = {"deletes", "inserts", "moves", "updates", "oldToNew", "newToOld",
                                              "hasDuplicates", "batch", "batchMoveThenReload", "script", NULL};
    static const char *const batch_keys[] = {"deletes", "inserts", "moves", "reloads", "reloadsAfterMoves", NULL};
    const json_t *name = json_object_get(vector, "name");
    const json_t *expect = json_object_get(vector, "expect");
    if (!keys_allowed(check, vector, top_keys, "the list vector")) return 0;
    if (json_integer_value(json_object_get(vector, "format")) != 1 ||
        !json_is_integer(json_object_get(vector, "format"))) {
        runner_problem(check, "\"format\" must be 1");
    } else if (!json_is_string(name) || strlen(json_string_value(name)) != base_len ||
               strncmp(json_string_value(name), base, base_len) != 0) {
        runner_problem(check, "\"name\" must be the file name without .json");
    } else if (has_real(vector)) {
        runner_problem(check, "the vector contains a floating-point number");
    } else if (!json_is_object(expect) || !json_is_array(json_object_get(vector, "old")) ||
               !json_is_array(json_object_get(vector, "new"))) {
        runner_problem(check, "a list vector needs \"old\" and \"new\" (arrays) and \"expect\" (object)");
    } else if (keys_allowed(check, expect, expect_keys, "expect") &&
               keys_allowed(check, json_object_get(expect, "batch"), batch_keys, "expect.batch") &&
               keys_allowed(check, json_object_get(expect, "batchMoveThenReload"), batch_keys,
                            "expect.batchMoveThenReload")) {
        for (size_t i = 0; expect_keys[i] != NULL; i++) {
            if (json_object_get(expect, expect_keys[i]) == NULL) {
                runner_problem(check, "expect has no \"%s\"", expect_keys[i]);
                break;
            }
        }
    }
    return check->problem[0] == '\0';
}

/** What happened to the (vector, form) pairs. */
typedef struct tally {
    int executed[FORM_COUNT];
    int failed[FORM_COUNT];
    int not_applicable[FORM_COUNT][NA_COUNT];
    int unrunnable;   /* vectors that could not be read or are malformed at the top level */
    int lists;        /* list vectors, each run in every list form */
    int loops;        /* loop vectors (README 11), each run once: loop_conformance.c */
    int loop_failed;
    int list_executed[LIST_FORM_COUNT];
    int list_failed[LIST_FORM_COUNT];
} tally;

/** Runs one vector file in every form that applies. Returns 1 if it passed. */
static int run_file(tally *t, const char *path, int verbose) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    json_error_t jerr;
    json_t *vector = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (vector == NULL) {
        printf("FAIL %s: could not read: %s (line %d)\n", base, jerr.text, jerr.line);
        t->unrunnable++;
        return 0;
    }

    runner check; /* only for the top-level problems */
    memset(&check, 0, sizeof check);
    static const char *const top_keys[] = {"format", "name", "kind", "description", "sources", "equality",
                                           "nodes", "root", "steps", NULL};
    const json_t *name = json_object_get(vector, "name");
    const char *kind = json_string_value(json_object_get(vector, "kind"));
    const json_t *equality_name = json_object_get(vector, "equality");
    const json_t *named = json_object_get(vector, "nodes");
    const json_t *root = json_object_get(vector, "root");
    const json_t *steps = json_object_get(vector, "steps");
    size_t base_len = strlen(base) - 5; /* without ".json" */
    int diffuser = kind != NULL && strcmp(kind, "diffuser") == 0;
    int equality = EQ_JSON;

    if (json_is_object(vector) && kind != NULL && strcmp(kind, "list") == 0) {
        if (!list_vector_shape(&check, vector, base, base_len)) {
            printf("FAIL %s: could not run: %s\n", base, check.problem);
            t->unrunnable++;
            json_decref(vector);
            return 0;
        }
        t->lists++;
        int ok = 1;
        for (int form = 0; form < LIST_FORM_COUNT; form++) {
            t->list_executed[form]++;
            if (!run_list_form(vector, json_string_value(name), form)) {
                t->list_failed[form]++;
                ok = 0;
            }
        }
        if (ok && verbose) printf("ok   %s\n", base);
        json_decref(vector);
        return ok;
    }

    if (json_is_object(vector) && kind != NULL && strcmp(kind, "loop") == 0) {
        t->loops++;
        int ok = run_loop_vector(vector, base);
        if (!ok) t->loop_failed++;
        if (ok && verbose) printf("ok   %s\n", base);
        json_decref(vector);
        return ok;
    }

    if (!json_is_object(vector)) {
        runner_problem(&check, "not a JSON object");
    } else if (!keys_allowed(&check, vector, top_keys, "the vector")) {
        /* problem set */
    } else if (json_integer_value(json_object_get(vector, "format")) != 1 ||
               !json_is_integer(json_object_get(vector, "format"))) {
        runner_problem(&check, "\"format\" must be 1");
    } else if (!json_is_string(name) || strlen(json_string_value(name)) != base_len ||
               strncmp(json_string_value(name), base, base_len) != 0) {
        runner_problem(&check, "\"name\" must be the file name without .json");
    } else if (has_real(vector)) {
        runner_problem(&check, "the vector contains a floating-point number");
    } else if (!json_is_object(named) || root == NULL || !json_is_array(steps) || json_array_size(steps) == 0) {
        runner_problem(&check, "a vector needs \"nodes\" (object), \"root\" and non-empty \"steps\"");
    } else if (!diffuser && !(kind != NULL && strcmp(kind, "fuser") == 0)) {
        runner_problem(&check, "unknown kind \"%s\"", kind ? kind : "(none)");
    } else if (diffuser && json_object_get(vector, "sources") != NULL) {
        runner_problem(&check, "a diffuser vector has no \"sources\"");
    } else if (!diffuser && equality_name != NULL) {
        runner_problem(&check, "a fuser vector has no \"equality\"");
    } else if (equality_name != NULL) {
        const char *e = json_string_value(equality_name);
        if (e != NULL && strcmp(e, "json") == 0) equality = EQ_JSON;
        else if (e != NULL && strcmp(e, "near") == 0) equality = EQ_NEAR;
        else if (e != NULL && strcmp(e, "nan") == 0) equality = EQ_NAN;
        else runner_problem(&check, "\"equality\" must be \"json\", \"near\" or \"nan\"");
    }
    if (check.problem[0] != '\0') {
        printf("FAIL %s: could not run: %s\n", base, check.problem);
        t->unrunnable++;
        json_decref(vector);
        return 0;
    }

    int maps = 0, plain = 0;
    if (diffuser) count_maps(root, named, 0, &maps, &plain);
    int ok = 1;
    for (int form = 0; form < FORM_COUNT; form++) {
        int reason = -1;
        /* Forms map and borrowed_values (another value type) run every vector. */
        if (form == FORM_BORROWED || form == FORM_FIELD) {
            if (!diffuser) reason = NA_FUSER;
            else if (maps == 0) reason = NA_NO_MAP;
            else if (form == FORM_FIELD && plain == 0) reason = NA_ONLY_LABELLED;
        }
        if (reason >= 0) {
            t->not_applicable[form][reason]++;
            continue;
        }
        t->executed[form]++;
        if (!run_form(vector, json_string_value(name), form, equality)) {
            t->failed[form]++;
            ok = 0;
        }
    }
    if (ok && verbose) printf("ok   %s\n", base);
    json_decref(vector);
    return ok;
}

/* ------------------------------------------------------------------------------------
 * Finding the vectors
 * ------------------------------------------------------------------------------------ */

typedef struct path_list {
    char **items;
    size_t count, cap;
} path_list;

static void path_add(path_list *list, char *path) {
    if (list->count == list->cap) {
        list->cap = list->cap ? list->cap * 2 : 64;
        char **grown = realloc(list->items, list->cap * sizeof *grown);
        if (grown == NULL) {
            fprintf(stderr, "conformance_runner: out of memory\n");
            exit(2);
        }
        list->items = grown;
    }
    list->items[list->count++] = path;
}

/** Adds every *.json file under `dir`, recursively. Returns 0 if a directory could not
 *  be read. */
static int collect(const char *dir, path_list *list) {
    DIR *d = opendir(dir);
    if (d == NULL) {
        printf("FAIL cannot open directory %s\n", dir);
        return 0;
    }
    int ok = 1;
    struct dirent *entry;
    while ((entry = readdir(d)) != NULL) {
        const char *name = entry->d_name;
        if (name[0] == '.') continue;
        size_t len = strlen(dir) + 1 + strlen(name) + 1;
        char *path = xmalloc(len);
        snprintf(path, len, "%s/%s", dir, name);
        struct stat st;
        if (stat(path, &st) != 0) {
            printf("FAIL cannot stat %s\n", path);
            ok = 0;
            free(path);
        } else if (S_ISDIR(st.st_mode)) {
            if (!collect(path, list)) ok = 0;
            free(path);
        } else if (strlen(name) > 5 && strcmp(name + strlen(name) - 5, ".json") == 0) {
            path_add(list, path);
        } else {
            free(path);
        }
    }
    closedir(d);
    return ok;
}

static int compare_paths(const void *a, const void *b) {
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
    setvbuf(stdout, NULL, _IOLBF, 0);
    const char *dir = NULL;
    int verbose = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--verbose") == 0 || strcmp(argv[i], "-v") == 0) verbose = 1;
        else if (dir == NULL) dir = argv[i];
        else {
            fprintf(stderr, "usage: %s CONFORMANCE_DIR [--verbose]\n", argv[0]);
            return 2;
        }
    }
    if (dir == NULL) {
        fprintf(stderr, "usage: %s CONFORMANCE_DIR [--verbose]\n", argv[0]);
        return 2;
    }
    if (dfs_abi_version() != DFS_ABI_VERSION) {
        printf("FAIL ABI version %d, header %d\n", dfs_abi_version(), DFS_ABI_VERSION);
        return 1;
    }

    path_list files = {0};
    int listed = collect(dir, &files);
    qsort(files.items, files.count, sizeof *files.items, compare_paths);

    tally t;
    memset(&t, 0, sizeof t);
    int passed = 0, failed = 0;
    for (size_t i = 0; i < files.count; i++) {
        if (run_file(&t, files.items[i], verbose)) passed++;
        else failed++;
        free(files.items[i]);
    }
    free(files.items);

    long executed = 0, not_applicable = 0, pair_failures = 0;
    for (int form = 0; form < FORM_COUNT; form++) {
        executed += t.executed[form];
        pair_failures += t.failed[form];
        for (int reason = 0; reason < NA_COUNT; reason++) not_applicable += t.not_applicable[form][reason];
    }
    for (int form = 0; form < LIST_FORM_COUNT; form++) {
        executed += t.list_executed[form];
        pair_failures += t.list_failed[form];
    }
    printf("Conformance (C): %zu vectors, %ld (vector, form) pairs executed, %ld not applicable\n", files.count,
           executed, not_applicable);
    for (int form = 0; form < FORM_COUNT; form++) {
        printf("  form %-15s %4d executed, %d failed: %s\n", form_names[form], t.executed[form], t.failed[form],
               form_descriptions[form]);
    }
    for (int form = 0; form < FORM_COUNT; form++) {
        for (int reason = 0; reason < NA_COUNT; reason++) {
            if (t.not_applicable[form][reason] > 0) {
                printf("  not applicable to form %-15s %4d: %s\n", form_names[form], t.not_applicable[form][reason],
                       na_descriptions[reason]);
            }
        }
    }
    printf("  list vectors: %d, each in %d forms\n", t.lists, LIST_FORM_COUNT);
    for (int form = 0; form < LIST_FORM_COUNT; form++) {
        printf("  form %-21s %4d executed, %d failed: %s\n", list_form_names[form], t.list_executed[form],
               t.list_failed[form], list_form_descriptions[form]);
    }

    printf("  loop vectors: %d executed, %d failed\n", t.loops, t.loop_failed);

    int status = 0;
    if (!listed) status = 1;
    if (t.loop_failed > 0) status = 1;
    if (t.loops < MIN_LOOP_VECTORS) {
        printf("FAIL only %d loop vectors found under %s (at least %d expected)\n", t.loops, dir, MIN_LOOP_VECTORS);
        status = 1;
    }
    long expected_pairs = (long)(files.count - (size_t)t.unrunnable - (size_t)t.lists - (size_t)t.loops) * FORM_COUNT +
                          (long)t.lists * LIST_FORM_COUNT;
    if (executed + not_applicable != expected_pairs || t.unrunnable > 0) {
        printf("FAIL %ld (vector, form) pairs were neither executed nor counted as not applicable\n",
               expected_pairs - executed - not_applicable);
        status = 1;
    }
    if (t.lists < MIN_LIST_VECTORS) {
        printf("FAIL only %d list vectors found under %s (at least %d expected)\n", t.lists, dir, MIN_LIST_VECTORS);
        status = 1;
    }
    if (files.count < MIN_VECTORS) {
        printf("FAIL only %zu vectors found under %s (at least %d expected): the corpus is incomplete\n",
               files.count, dir, MIN_VECTORS);
        status = 1;
    }
    if (failed > 0 || pair_failures > 0) status = 1;
    printf("%d vectors passed, %d failed (%ld failed pairs)\n", passed, failed, pair_failures);
    return status;
}
