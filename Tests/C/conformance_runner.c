/*
 * conformance_runner.c — runs every conformance vector through the C API.
 *
 *     conformance_runner CONFORMANCE_DIR [--verbose]
 *
 * Loads every `*.json` file under CONFORMANCE_DIR, recursively (today: hand/ and
 * generated/), sorted by path, and executes each vector as conformance/README.md
 * (sections 3-6) specifies:
 *
 * - values are jansson `json_t *` with one dfs_type: equal = json_equal, retain =
 *   json_incref, release = json_decref;
 * - every diffuser op is built with the corresponding C combinator (intoAlways effect /
 *   children, into, intoOnce, intoAll, intoWhen with an effect / a child, map); `invert`
 *   is dfs_diffuser_map with the `not` transform, because dfs_diffuser_invert works on
 *   truth values encoded in pointers (dfs_type_pointer), not on JSON values;
 * - a failing effect records its label in the runner context, calls dfs_set_error(label)
 *   and returns non-zero; the step's error is that label when the library call returned
 *   DFS_ERR_CALLBACK (and dfs_last_error() must then be the label), null for DFS_OK;
 * - fuser vectors use scripted sources (dfs_fuser_from) that log ["connect", S] and
 *   every ["dispose", S] call, and emit through dfs_dispatch_emit to a copy of their
 *   connection list, stopping at the first DFS_ERR_CALLBACK.
 *
 * Each step's log and error are compared with `expect` (deep JSON equality); a mismatch
 * prints the vector, the step index, what was got and what was expected, and the runner
 * goes on with the next vector. The exit status is 1 if any vector failed or could not
 * be run (unknown op / selector / predicate / transform / key, unreadable file), or if
 * fewer than 600 vectors were found.
 *
 * Every handle and every json_t is released, so the program is clean under valgrind.
 */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "diffuser.h"

/** The corpus must have at least this many vectors (README: 663 today). */
#define MIN_VECTORS 600

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
 * The runner context of one vector
 * ------------------------------------------------------------------------------------ */

typedef struct source source;

typedef struct runner {
    dfs_type *type;        /* the JSON value type (shared by every vector) */
    const char *vector;    /* the vector's name, for messages */
    /* The current step. */
    json_t *log;           /* the entries of the step, a JSON array (owned) */
    const json_t *fail;    /* the step's fail list (borrowed from the vector) or NULL */
    char *failed_label;    /* the label of the first effect that failed in the step */
    int failures;          /* how many effects failed in the step */
    /* Building. */
    const json_t *named;   /* the vector's `nodes` */
    char problem[512];     /* why the vector could not be built or run */
    /* Contexts handed to the library and not destroyed yet (must end at 0). */
    int live_contexts;
    /* Fuser vectors. */
    source *sources;
    size_t source_count;
} runner;

static void runner_problem(runner *r, const char *fmt, ...) {
    if (r->problem[0] != '\0') return; /* keep the first one */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->problem, sizeof r->problem, fmt, ap);
    va_end(ap);
}

static int label_fails(const runner *r, const char *label) {
    if (r->fail == NULL) return 0;
    size_t i;
    const json_t *entry;
    json_array_foreach(r->fail, i, entry) {
        if (json_is_string(entry) && strcmp(json_string_value(entry), label) == 0) return 1;
    }
    return 0;
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
    r->fail = fail;
    free(r->failed_label);
    r->failed_label = NULL;
    r->failures = 0;
}

/* ------------------------------------------------------------------------------------
 * The JSON value type
 * ------------------------------------------------------------------------------------ */

static int json_type_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    if (a == b) return 1;
    if (a == NULL || b == NULL) return 0;
    return json_equal(a, b) ? 1 : 0;
}

static const void *json_type_retain(const void *value, void *ctx) {
    (void)ctx;
    return json_incref((json_t *)value);
}

static void json_type_release(const void *value, void *ctx) {
    (void)ctx;
    json_decref((json_t *)value);
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

typedef struct selector_ctx {
    runner *r;
    int kind;
    json_t *selector; /* owned reference */
} selector_ctx;

static int selector_transform(const void *value, const void **out, void *ctx) {
    selector_ctx *s = ctx;
    const json_t *v = value;
    const json_t *selected = NULL;
    switch (s->kind) {
    case SEL_IDENTITY:
        selected = v;
        break;
    case SEL_FIELD:
        selected = json_is_object(v)
            ? json_object_get(v, json_string_value(json_object_get(s->selector, "field")))
            : NULL;
        break;
    default:
        selected = select_path(s->selector, v);
        break;
    }
    *out = selected ? json_incref((json_t *)selected) : json_null();
    return 0;
}

static void selector_destroy(void *ctx) {
    selector_ctx *s = ctx;
    s->r->live_contexts--;
    json_decref(s->selector);
    free(s);
}

/** The `not` transform of `invert` (a diffuser map): no context. */
static int not_transform(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = json_not(value);
    return 0;
}

enum predicate_kind { PRED_CHANGED, PRED_ALWAYS, PRED_NEVER, PRED_INCREASED, PRED_DECREASED };

static const struct {
    const char *name;
    int kind;
} predicate_names[] = {
    {"changed", PRED_CHANGED},     {"always", PRED_ALWAYS},       {"never", PRED_NEVER},
    {"increased", PRED_INCREASED}, {"decreased", PRED_DECREASED},
};

/** A predicate: ctx is a pointer to one int of predicate_kinds[]. */
static const int predicate_kinds[] = {PRED_CHANGED, PRED_ALWAYS, PRED_NEVER, PRED_INCREASED, PRED_DECREASED};

static int predicate_call(const void *old_value, const void *new_value, void *ctx) {
    const json_t *a = old_value, *b = new_value;
    switch (*(const int *)ctx) {
    case PRED_CHANGED:
        return json_equal(a, b) ? 0 : 1;
    case PRED_ALWAYS:
        return 1;
    case PRED_NEVER:
        return 0;
    case PRED_INCREASED:
        return json_is_integer(a) && json_is_integer(b) && json_integer_value(b) > json_integer_value(a);
    case PRED_DECREASED:
        return json_is_integer(a) && json_is_integer(b) && json_integer_value(b) < json_integer_value(a);
    default:
        return -1;
    }
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
    *out = result; /* JSON null stays json_null(), a non-NULL pointer */
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
    if (label_fails(r, e->label)) {
        r->failures++;
        if (r->failed_label == NULL) r->failed_label = xstrdup(e->label);
        dfs_set_error(e->label);
        return 1;
    }
    log_append(r, e->label, value);
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
 * Building diffusers (README 3.1)
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

static const int *find_predicate(runner *r, const json_t *node) {
    const char *name = need_string(r, node, "predicate", "intoWhen");
    if (name == NULL) return NULL;
    for (size_t i = 0; i < sizeof predicate_names / sizeof predicate_names[0]; i++) {
        if (strcmp(predicate_names[i].name, name) == 0) return &predicate_kinds[predicate_names[i].kind];
    }
    runner_problem(r, "unknown predicate \"%s\"", name);
    return NULL;
}

static selector_ctx *make_selector(runner *r, const json_t *selector) {
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
        if (!json_is_string(v)) {
            runner_problem(r, "selector \"field\" must be a string");
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
            if (!json_is_string(step) && !(json_is_integer(step) && json_integer_value(step) >= 0)) {
                runner_problem(r, "path steps must be strings or integers >= 0");
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
    selector_ctx *s = xmalloc(sizeof *s);
    s->r = r;
    s->kind = kind;
    s->selector = json_incref((json_t *)selector);
    r->live_contexts++;
    return s;
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
        static const char *const keys[] = {"op", "predicate", "effect", "child", NULL};
        if (!keys_allowed(r, node, keys, op) || !exactly_one(r, node, "effect", "child", op)) return NULL;
        const int *predicate = find_predicate(r, node);
        if (predicate == NULL) return NULL;
        if (json_object_get(node, "effect") != NULL) {
            const char *label = need_string(r, node, "effect", op);
            if (label == NULL) return NULL;
            dfs_status st = dfs_diffuser_into_when_effect(type, predicate_call, (void *)predicate, NULL,
                                                          effect_call, effect_new(r, label), effect_destroy, &out);
            return status_ok(r, st, "dfs_diffuser_into_when_effect") ? out : NULL;
        }
        dfs_diffuser *child = build_diffuser(b, json_object_get(node, "child"));
        if (child == NULL) return NULL;
        dfs_status st = dfs_diffuser_into_when(predicate_call, (void *)predicate, NULL, child, &out);
        dfs_diffuser_release(child);
        return status_ok(r, st, "dfs_diffuser_into_when") ? out : NULL;
    }

    if (strcmp(op, "map") == 0) {
        static const char *const keys[] = {"op", "selector", "child", NULL};
        if (!keys_allowed(r, node, keys, op)) return NULL;
        selector_ctx *s = make_selector(r, json_object_get(node, "selector"));
        if (s == NULL) return NULL;
        dfs_diffuser *child = build_diffuser(b, json_object_get(node, "child"));
        if (child == NULL) {
            selector_destroy(s);
            return NULL;
        }
        dfs_status st = dfs_diffuser_map(type, selector_transform, s, selector_destroy, child, &out);
        dfs_diffuser_release(child);
        return status_ok(r, st, "dfs_diffuser_map") ? out : NULL;
    }

    if (strcmp(op, "invert") == 0) {
        /* dfs_diffuser_invert negates pointer-encoded truth values (dfs_type_pointer), not
         * JSON values: invert is map(not, child) (README 3.1, decision 4). */
        static const char *const keys[] = {"op", "child", NULL};
        if (!keys_allowed(r, node, keys, op)) return NULL;
        dfs_diffuser *child = build_diffuser(b, json_object_get(node, "child"));
        if (child == NULL) return NULL;
        dfs_status st = dfs_diffuser_map(type, not_transform, NULL, NULL, child, &out);
        dfs_diffuser_release(child);
        return status_ok(r, st, "dfs_diffuser_map (invert)") ? out : NULL;
    }

    runner_problem(r, "unknown diffuser op \"%s\"", op);
    return NULL;
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
        printf("FAIL %s: step %zu: log\n     got      %s\n     expected %s\n", r->vector, index, got, want);
        free(got);
        free(want);
        ok = 0;
    }
    const char *want_error = json_is_string(expected_error) ? json_string_value(expected_error) : NULL;
    int same = (error == NULL && want_error == NULL) ||
               (error != NULL && want_error != NULL && strcmp(error, want_error) == 0);
    if (!same) {
        printf("FAIL %s: step %zu: error\n     got      %s\n     expected %s\n", r->vector, index,
               error ? error : "null", want_error ? want_error : "null");
        ok = 0;
    }
    if (note != NULL) {
        printf("FAIL %s: step %zu: %s\n", r->vector, index, note);
        ok = 0;
    }
    return ok;
}

/**
 * Turns the status of a run / an emission into the step's error (README 5.2):
 * DFS_OK -> null; DFS_ERR_CALLBACK -> the label of the effect that failed, which
 * dfs_last_error() must also give. Anything else, or a failure the library did not
 * report, is written to `note`.
 */
static const char *status_error(runner *r, dfs_status status, const char *call, char *note, size_t note_size) {
    if (status == DFS_OK) {
        if (r->failed_label != NULL) {
            snprintf(note, note_size, "effect \"%s\" failed but %s returned DFS_OK", r->failed_label, call);
        }
        return NULL;
    }
    if (status != DFS_ERR_CALLBACK) {
        snprintf(note, note_size, "%s returned %s: %s", call, dfs_status_name(status), dfs_last_error());
        return "(library error)";
    }
    if (r->failed_label == NULL) {
        snprintf(note, note_size, "%s returned DFS_ERR_CALLBACK but no effect failed (dfs_last_error: \"%s\")",
                 call, dfs_last_error());
        return "(callback error without a failing effect)";
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
 * Running a vector
 * ------------------------------------------------------------------------------------ */

/** Runs a diffuser vector; returns 1 if every step matched. Problems go to r->problem. */
static int run_diffuser_vector(runner *r, const json_t *root, const json_t *steps) {
    builder b = {.r = r};
    memo_init(&b.memo, r->named);
    dfs_diffuser *diffuser = build_diffuser(&b, root);
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
            step_begin(r, json_object_get(step, "fail"));
            dfs_status status = dfs_diffuser_run(diffuser, value);
            char note[512] = "";
            const char *error = status_error(r, status, "dfs_diffuser_run", note, sizeof note);
            if (r->failures > 1 && note[0] == '\0') {
                snprintf(note, sizeof note, "%d effects failed in one run (the run must stop at the first)",
                         r->failures);
            }
            if (!check_step(r, index, step, error, note[0] ? note : NULL)) ok = 0;
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

/** Runs one vector file. Returns 1 if it passed. */
static int run_file(dfs_type *type, const char *path, int verbose) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    json_error_t jerr;
    json_t *vector = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (vector == NULL) {
        printf("FAIL %s: could not read: %s (line %d)\n", base, jerr.text, jerr.line);
        return 0;
    }

    runner r;
    memset(&r, 0, sizeof r);
    r.type = type;
    r.vector = base;
    r.log = json_array();

    static const char *const top_keys[] = {"format", "name", "kind", "description", "sources",
                                           "nodes", "root", "steps", NULL};
    const json_t *name = json_object_get(vector, "name");
    const char *kind = json_string_value(json_object_get(vector, "kind"));
    const json_t *root = json_object_get(vector, "root");
    const json_t *steps = json_object_get(vector, "steps");
    r.named = json_object_get(vector, "nodes");
    size_t base_len = strlen(base) - 5; /* without ".json" */

    int ok = 0;
    if (!json_is_object(vector)) {
        runner_problem(&r, "not a JSON object");
    } else if (!keys_allowed(&r, vector, top_keys, "the vector")) {
        /* problem set */
    } else if (json_integer_value(json_object_get(vector, "format")) != 1 ||
               !json_is_integer(json_object_get(vector, "format"))) {
        runner_problem(&r, "\"format\" must be 1");
    } else if (!json_is_string(name) || strlen(json_string_value(name)) != base_len ||
               strncmp(json_string_value(name), base, base_len) != 0) {
        runner_problem(&r, "\"name\" must be the file name without .json");
    } else if (has_real(vector)) {
        runner_problem(&r, "the vector contains a floating-point number");
    } else if (!json_is_object(r.named) || root == NULL || !json_is_array(steps) || json_array_size(steps) == 0) {
        runner_problem(&r, "a vector needs \"nodes\" (object), \"root\" and non-empty \"steps\"");
    } else if (kind != NULL && strcmp(kind, "diffuser") == 0) {
        if (json_object_get(vector, "sources") != NULL) runner_problem(&r, "a diffuser vector has no \"sources\"");
        else ok = run_diffuser_vector(&r, root, steps);
    } else if (kind != NULL && strcmp(kind, "fuser") == 0) {
        ok = run_fuser_vector(&r, vector, root, steps);
    } else {
        runner_problem(&r, "unknown kind \"%s\"", kind ? kind : "(none)");
    }

    if (r.problem[0] != '\0') {
        printf("FAIL %s: could not run: %s\n", base, r.problem);
        ok = 0;
    }
    /* Every context handed to the library must have been destroyed with the handles. */
    if (r.live_contexts != 0) {
        printf("FAIL %s: %d callback contexts were not destroyed after every handle was released\n", base,
               r.live_contexts);
        ok = 0;
    }
    if (ok && verbose) printf("ok   %s\n", base);

    json_decref(r.log);
    free(r.failed_label);
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

    dfs_type *type = NULL;
    if (dfs_type_new("json", json_type_equal, json_type_retain, json_type_release, NULL, NULL, &type) != DFS_OK) {
        printf("FAIL dfs_type_new: %s\n", dfs_last_error());
        return 1;
    }

    int passed = 0, failed = 0;
    for (size_t i = 0; i < files.count; i++) {
        if (run_file(type, files.items[i], verbose)) passed++;
        else failed++;
        free(files.items[i]);
    }
    free(files.items);
    dfs_type_release(type);

    printf("Conformance (C): %zu vectors executed\n", files.count);
    int status = 0;
    if (!listed) status = 1;
    if (files.count < MIN_VECTORS) {
        printf("FAIL only %zu vectors found under %s (at least %d expected): the corpus is incomplete\n",
               files.count, dir, MIN_VECTORS);
        status = 1;
    }
    if (failed > 0) status = 1;
    printf("%d passed, %d failed\n", passed, failed);
    return status;
}
