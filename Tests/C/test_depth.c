/*
 * test_depth.c — a diffuser or a fuser nests at most DFS_MAX_DEPTH combinators: every
 * composing call refuses to go deeper with DFS_ERR_ARGUMENT (and a message, out NULL,
 * its ctx destroyed once), width is not limited, and a tree at the bound runs (or
 * delivers an event) and is released on a thread with a small stack: the bound exists
 * so that none of these overflows a thread's stack.
 */
#include <pthread.h>

#include "check.h"

static int effects;

static int count_effect(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    effects++;
    return 0;
}

static int differ(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return a != b;
}

static int identity(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = value;
    return 0;
}

/* The ways to put one combinator over a child; every one nests one level deeper. */
enum form { MAP, MAP_BORROWED, MAP_FIELD, INTO_WHEN, INTO_ALL, INTO_ALWAYS_ALL, INVERT, FORMS };
static const char *const form_names[FORMS] = {
    "map", "map_borrowed", "map_field", "into_when", "into_all", "into_always_all", "invert",
};

/* One combinator of `form` over `child`; `destroyed` counts the destroys of its ctx. */
static dfs_status compose(enum form form, dfs_diffuser *child, int *destroyed, dfs_diffuser **out) {
    dfs_type *type = dfs_type_pointer();
    switch (form) {
    case MAP: return dfs_diffuser_map(type, identity, destroyed, count_destroy, child, out);
    case MAP_BORROWED: return dfs_diffuser_map_borrowed(type, identity, destroyed, count_destroy, child, out);
    case MAP_FIELD: return dfs_diffuser_map_field(type, 0, sizeof(void *), child, out);
    case INTO_WHEN: return dfs_diffuser_into_when(differ, destroyed, count_destroy, child, out);
    case INTO_ALL: return dfs_diffuser_into_all(type, &child, 1, out);
    case INTO_ALWAYS_ALL: return dfs_diffuser_into_always_all(type, &child, 1, out);
    default: return dfs_diffuser_invert(child, out);
    }
}

/* A chain of `form` over one `into` leaf, `depth` combinators deep (the leaf is 1). */
static dfs_diffuser *chain(enum form form, int depth) {
    dfs_diffuser *top = NULL;
    if (dfs_diffuser_into(dfs_type_pointer(), count_effect, NULL, NULL, &top) != DFS_OK) return NULL;
    int destroyed = 0;
    for (int level = 2; level <= depth; level++) {
        dfs_diffuser *next = NULL;
        if (compose(form, top, &destroyed, &next) != DFS_OK) {
            dfs_diffuser_release(top);
            return NULL;
        }
        dfs_diffuser_release(top);
        top = next;
    }
    return top;
}

static void test_every_form_stops_at_the_bound(void) {
    check_section("every composing call refuses to nest deeper than DFS_MAX_DEPTH");
    for (int f = 0; f < FORMS; f++) {
        dfs_diffuser *deepest = chain((enum form)f, DFS_MAX_DEPTH);
        CHECK(deepest != NULL, "%s: a chain %d deep composes", form_names[f], DFS_MAX_DEPTH);
        if (deepest == NULL) continue;
        int destroyed = 0;
        dfs_diffuser *out = (dfs_diffuser *)&destroyed;
        CHECK_STATUS(compose((enum form)f, deepest, &destroyed, &out), DFS_ERR_ARGUMENT,
                     "%s: one more level is refused", form_names[f]);
        CHECK_ERROR_HAS("DFS_MAX_DEPTH", "%s: the message names the bound (\"%s\")", form_names[f],
                        dfs_last_error());
        CHECK(out == NULL, "%s: out is NULL", form_names[f]);
        if (f == MAP || f == MAP_BORROWED || f == INTO_WHEN)
            CHECK_INT(destroyed, 1, "%s: its ctx is destroyed once", form_names[f]);
        dfs_diffuser_release(deepest);
    }
}

static void test_depth_is_the_deepest_child(void) {
    check_section("a fan-out is as deep as its deepest child, plus one; width is free");
    dfs_diffuser *deep = chain(MAP, DFS_MAX_DEPTH - 1);
    dfs_diffuser *leaf = chain(MAP, 1);
    CHECK(deep != NULL && leaf != NULL, "a chain one short of the bound, and a leaf");
    if (deep == NULL || leaf == NULL) return;

    dfs_diffuser *shallow_first[] = {leaf, deep};
    dfs_diffuser *all = NULL;
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), shallow_first, 2, &all),
             "into_all over the two: at the bound, whichever child comes first");
    dfs_diffuser *over = NULL;
    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_pointer(), &all, 1, &over), DFS_ERR_ARGUMENT,
                 "and nothing more over it");
    dfs_diffuser_release(all);

    enum { WIDE = 5000 };
    static dfs_diffuser *leaves[WIDE];
    for (int i = 0; i < WIDE; i++) leaves[i] = leaf;
    dfs_diffuser *wide = NULL;
    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_pointer(), leaves, WIDE, &wide), "5,000 children side by side");
    dfs_diffuser *wider = NULL;
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), identity, NULL, NULL, wide, &wider), "and a map over them (3 deep)");
    dfs_diffuser_release(wider);
    dfs_diffuser_release(wide);
    dfs_diffuser_release(leaf);
    dfs_diffuser_release(deep);
}

/* The form that takes the most stack a level (a gate and a fan-out), at the bound, run
 * and released on a thread of 256 KB: the bound's promise (about 100 KB), with room to
 * spare for a build with larger frames. */
static void *run_deepest(void *unused) {
    (void)unused;
    dfs_diffuser *deepest = chain(INTO_ALL, DFS_MAX_DEPTH);
    if (deepest == NULL) return "the chain did not compose";
    effects = 0;
    for (uintptr_t value = 1; value <= 3; value++)
        if (dfs_diffuser_run(deepest, (const void *)value) != DFS_OK) return "a run failed";
    dfs_diffuser_release(deepest);
    return effects == 3 ? NULL : "the effect did not run once a value";
}

/* ---- Fusers ---- */

static dfs_dispatch *source_dispatch;

static int source_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)ctx;
    source_dispatch = dispatch;
    *connection = NULL;
    return 0;
}

enum fuser_form { FROM_ALL, EXTRACT, EXTRACT_CONSTANT, EXTRACT_UNLESS_NULL, FUSER_FORMS };
static const char *const fuser_form_names[FUSER_FORMS] = {
    "from_all", "extract", "extract_constant", "extract_unless_null",
};

static dfs_status compose_fuser(enum fuser_form form, dfs_fuser *child, int *destroyed, dfs_fuser **out) {
    dfs_type *type = dfs_type_pointer();
    switch (form) {
    case FROM_ALL: return dfs_fuser_from_all(type, &child, 1, out);
    case EXTRACT: return dfs_fuser_extract(type, identity, destroyed, count_destroy, child, out);
    case EXTRACT_CONSTANT: return dfs_fuser_extract_constant(type, (const void *)(uintptr_t)7, child, out);
    default: return dfs_fuser_extract_unless_null(type, identity, destroyed, count_destroy, child, out);
    }
}

/* A chain of `form` over one source, `depth` combinators deep (the source is 1). */
static dfs_fuser *fuser_chain(enum fuser_form form, int depth) {
    dfs_fuser *top = NULL;
    if (dfs_fuser_from(dfs_type_pointer(), source_connect, NULL, NULL, NULL, &top) != DFS_OK) return NULL;
    int destroyed = 0;
    for (int level = 2; level <= depth; level++) {
        dfs_fuser *next = NULL;
        if (compose_fuser(form, top, &destroyed, &next) != DFS_OK) {
            dfs_fuser_release(top);
            return NULL;
        }
        dfs_fuser_release(top);
        top = next;
    }
    return top;
}

static void test_every_fuser_form_stops_at_the_bound(void) {
    check_section("every fuser composing call refuses to nest deeper than DFS_MAX_DEPTH");
    for (int f = 0; f < FUSER_FORMS; f++) {
        dfs_fuser *deepest = fuser_chain((enum fuser_form)f, DFS_MAX_DEPTH);
        CHECK(deepest != NULL, "%s: a chain %d deep composes", fuser_form_names[f], DFS_MAX_DEPTH);
        if (deepest == NULL) continue;
        int destroyed = 0;
        dfs_fuser *out = (dfs_fuser *)&destroyed;
        CHECK_STATUS(compose_fuser((enum fuser_form)f, deepest, &destroyed, &out), DFS_ERR_ARGUMENT,
                     "%s: one more level is refused", fuser_form_names[f]);
        CHECK_ERROR_HAS("fuser would nest", "%s: the message says what (\"%s\")", fuser_form_names[f],
                        dfs_last_error());
        CHECK(out == NULL, "%s: out is NULL", fuser_form_names[f]);
        if (f == EXTRACT || f == EXTRACT_UNLESS_NULL)
            CHECK_INT(destroyed, 1, "%s: its ctx is destroyed once", fuser_form_names[f]);
        dfs_fuser_release(deepest);
    }
}

/* A fan-in at the bound (the fuser form that takes the most stack a level) connects,
 * delivers an event and is disposed and released on a thread of 256 KB. */
static void *deliver_deepest(void *unused) {
    (void)unused;
    dfs_fuser *deepest = fuser_chain(FROM_ALL, DFS_MAX_DEPTH);
    if (deepest == NULL) return "the chain did not compose";
    effects = 0;
    dfs_disposable *connection = NULL;
    if (dfs_fuser_connect(deepest, count_effect, NULL, NULL, &connection) != DFS_OK) return "connect failed";
    if (dfs_dispatch_emit(source_dispatch, (const void *)(uintptr_t)1) != DFS_OK) return "emit failed";
    dfs_disposable_dispose(connection);
    dfs_disposable_release(connection);
    dfs_fuser_release(deepest);
    return effects == 1 ? NULL : "the effect did not get the event once";
}

/* A loop whose model is the last event. */
static int take_event(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)model;
    (void)ctx;
    return dfs_next_model(next, event) == DFS_OK ? 0 : 1;
}

static int read_model(const void *model, void *ctx) {
    *(const void **)ctx = model;
    return 0;
}

static void test_a_loop_takes_a_fuser_at_the_bound(void) {
    check_section("a loop connects a fuser at the bound (without a level of its own)");
    dfs_loop_config config = {
        .model_type = dfs_type_pointer(),
        .event_type = dfs_type_pointer(),
        .effect_type = dfs_type_pointer(),
        .update = take_event,
    };
    dfs_loop *loop = NULL;
    CHECK_OK(dfs_loop_new(&config, &loop), "a loop");
    dfs_fuser *deepest = fuser_chain(FROM_ALL, DFS_MAX_DEPTH);
    CHECK(deepest != NULL, "a fuser %d deep", DFS_MAX_DEPTH);
    if (loop == NULL || deepest == NULL) return;
    dfs_disposable *connection = NULL;
    CHECK_OK(dfs_loop_connect(loop, deepest, &connection), "the loop connects it");
    CHECK_OK(dfs_dispatch_emit(source_dispatch, (const void *)(uintptr_t)42), "its source emits");
    const void *model = NULL;
    dfs_loop_model(loop, read_model, &model);
    CHECK_INT((int)(uintptr_t)model, 42, "the event reached the loop");
    dfs_disposable_dispose(connection);
    dfs_disposable_release(connection);
    dfs_fuser_release(deepest);
    dfs_loop_release(loop);
}

/* Runs `body` on a new thread of 256 KB; NULL if it succeeded, else what failed. */
static const char *on_small_stack(void *(*body)(void *)) {
    pthread_attr_t attributes;
    pthread_attr_init(&attributes);
    pthread_attr_setstacksize(&attributes, 256 * 1024);
    pthread_t thread;
    void *failure = "the thread did not start";
    if (pthread_create(&thread, &attributes, body, NULL) == 0) pthread_join(thread, &failure);
    pthread_attr_destroy(&attributes);
    return failure;
}

static void test_the_bound_fits_a_small_stack(void) {
    check_section("a tree at the bound runs, delivers and is released on a 256 KB stack");
    const char *failure = on_small_stack(run_deepest);
    CHECK(failure == NULL, "%d nested intoAll ran three values and were released (%s)", DFS_MAX_DEPTH,
          failure ? failure : "ok");
    failure = on_small_stack(deliver_deepest);
    CHECK(failure == NULL, "%d nested fromAll delivered an event and were released (%s)", DFS_MAX_DEPTH,
          failure ? failure : "ok");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_every_form_stops_at_the_bound();
    test_depth_is_the_deepest_child();
    test_every_fuser_form_stops_at_the_bound();
    test_a_loop_takes_a_fuser_at_the_bound();
    test_the_bound_fits_a_small_stack();
    return check_finish();
}
