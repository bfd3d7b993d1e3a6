/*
 * test_diffuser.c — every diffuser combinator with exact effect logs, equality gating
 * with built-in and user types (a gate compares with the previous run's value and keeps
 * every new one, also under an equality that is not transitive), value ownership (every
 * retained value is released), shared caches, handle reference counts, versions and
 * status names.
 *
 * One program for the diffuser half of the C API when nothing fails: every combinator
 * and what its gates compare, keep and release, checked through the same recorders and
 * logs of check.h; failures, misuse, threads and lists have programs of their own.
 */
#include "check.h"

/* ------------------------------------------------------------------------------------ */

static void test_versions(void) {
    check_section("versions and status names");
    CHECK_INT(dfs_abi_version(), DFS_ABI_VERSION, "dfs_abi_version() == DFS_ABI_VERSION (%d)", DFS_ABI_VERSION);
    const char *version = dfs_version();
    int major = -1, minor = -1, patch = -1;
    char extra = 0;
    CHECK(version != NULL && sscanf(version, "%d.%d.%d%c", &major, &minor, &patch, &extra) == 3,
          "dfs_version() is \"major.minor.patch\" (\"%s\")", version ? version : "(null)");
    CHECK(dfs_version() == version, "dfs_version() returns static storage");

    static const char *const names[] = {"DFS_OK", "DFS_ERR_NULL", "DFS_ERR_HANDLE", "DFS_ERR_ARGUMENT",
                                        "DFS_ERR_TYPE", "DFS_ERR_CALLBACK", "DFS_ERR_MEMORY"};
    static const int codes[] = {DFS_OK, DFS_ERR_NULL, DFS_ERR_HANDLE, DFS_ERR_ARGUMENT,
                                DFS_ERR_TYPE, DFS_ERR_CALLBACK, DFS_ERR_MEMORY};
    for (size_t i = 0; i < sizeof codes / sizeof codes[0]; i++) {
        CHECK_STR(dfs_status_name(codes[i]), names[i], "dfs_status_name(%d) == %s", codes[i], names[i]);
    }
    CHECK_STR(dfs_status_name(-1), "DFS_UNKNOWN", "dfs_status_name(-1) == DFS_UNKNOWN");
    CHECK_STR(dfs_status_name(7), "DFS_ERR_STOPPED", "dfs_status_name(7) == DFS_ERR_STOPPED");
    CHECK_STR(dfs_status_name(8), "DFS_ERR_DISPOSED", "dfs_status_name(8) == DFS_ERR_DISPOSED");
    CHECK_STR(dfs_status_name(9), "DFS_UNKNOWN", "dfs_status_name(9) == DFS_UNKNOWN");
    CHECK_STR(dfs_status_name(1 << 30), "DFS_UNKNOWN", "dfs_status_name(1<<30) == DFS_UNKNOWN");

    dfs_set_error("a message from C");
    CHECK_STR(dfs_last_error(), "a message from C", "dfs_set_error sets dfs_last_error");
    dfs_set_error(NULL);
    CHECK_STR(dfs_last_error(), "", "dfs_set_error(NULL) clears the message");
}

/* ------------------------------------------------------------------------------------ */

static void test_into_always(void) {
    check_section("into_always");
    test_log log;
    log_clear(&log);
    recorder a = rec_make("a", &log, REC_INT);
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), rec_effect, &a, rec_destroy, &d), "into_always: created");
    CHECK(d != NULL, "into_always: handle is not NULL");
    CHECK(dfs_diffuser_type(d) == dfs_type_pointer(), "into_always: type is the given type");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1 again");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2");
    CHECK_OK(dfs_diffuser_run(d, NULL), "run NULL");
    CHECK_LOG(&log, "a:1 a:1 a:2 a:0", "into_always runs on every value");
    CHECK_INT(a.destroyed, 0, "destroy not called while the diffuser lives");
    CHECK_OK(dfs_diffuser_release(d), "release");
    CHECK_INT(a.destroyed, 1, "destroy(ctx) called exactly once after release");
}

static void test_into(void) {
    check_section("into (equality of the type)");
    test_log log;
    log_clear(&log);

    recorder a = rec_make("a", &log, REC_INT);
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &a, rec_destroy, &d), "into(pointer): created");
    CHECK_OK(dfs_diffuser_run(d, NULL), "run NULL (first run)");
    CHECK_OK(dfs_diffuser_run(d, NULL), "run NULL");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_LOG(&log, "a:0 a:1 a:2 a:1", "first run always runs, then only on change");
    dfs_diffuser_release(d);
    CHECK_INT(a.destroyed, 1, "destroy once");

    /* cstring: compared by content, and the cache keeps a copy. */
    recorder s = rec_make("s", &log, REC_STR);
    CHECK_OK(dfs_diffuser_into(dfs_type_cstring(), rec_effect, &s, rec_destroy, &d), "into(cstring): created");
    char first[16] = "hello", second[16] = "hello", buffer[16] = "x";
    CHECK_OK(dfs_diffuser_run(d, first), "run \"hello\"");
    CHECK_OK(dfs_diffuser_run(d, second), "run an equal \"hello\" in another buffer");
    CHECK_LOG(&log, "s:hello", "equal strings in different buffers do not re-run");
    CHECK_OK(dfs_diffuser_run(d, buffer), "run \"x\"");
    strcpy(buffer, "y");
    CHECK_OK(dfs_diffuser_run(d, buffer), "run the same buffer now holding \"y\"");
    CHECK_OK(dfs_diffuser_run(d, buffer), "run \"y\" again");
    CHECK_OK(dfs_diffuser_run(d, NULL), "run NULL");
    CHECK_OK(dfs_diffuser_run(d, NULL), "run NULL again");
    CHECK_OK(dfs_diffuser_run(d, "y"), "run \"y\"");
    CHECK_LOG(&log, "s:x s:y s:(null) s:y", "the cache holds a copy: a mutated buffer is a change; NULL equals only NULL");
    dfs_diffuser_release(d);
    CHECK_INT(s.destroyed, 1, "destroy once");
}

static void test_into_once(void) {
    check_section("into_once");
    test_log log;
    log_clear(&log);
    recorder a = rec_make("a", &log, REC_INT);
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into_once(dfs_type_pointer(), rec_effect, &a, rec_destroy, &d), "into_once: created");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(3)), "run 3");
    CHECK_LOG(&log, "a:1", "into_once runs on the first value only");
    dfs_diffuser_release(d);
    CHECK_INT(a.destroyed, 1, "destroy once");
}

/* The predicate "increased", logging its calls as "dc:old>new". */
typedef struct predicate {
    test_log *log;
    int calls;
    int destroyed;
} predicate;

static int increased(const void *old_value, const void *new_value, void *ctx) {
    predicate *p = ctx;
    p->calls++;
    log_add(p->log, "dc:%ld>%ld", (long)(intptr_t)old_value, (long)(intptr_t)new_value);
    return (intptr_t)new_value > (intptr_t)old_value;
}

static void predicate_destroy(void *ctx) { ((predicate *)ctx)->destroyed++; }

/* "increased" over boxes. */
static int box_increased(const void *old_value, const void *new_value, void *ctx) {
    predicate *p = ctx;
    p->calls++;
    long a = ((const box *)old_value)->value, b = ((const box *)new_value)->value;
    log_add(p->log, "dc:%ld>%ld", a, b);
    return b > a;
}

static void test_into_when(void) {
    check_section("into_when (child) with the predicate \"increased\"");
    test_log log;
    log_clear(&log);
    recorder a = rec_make("a", &log, REC_INT);
    predicate p = {&log, 0, 0};
    dfs_diffuser *child = NULL, *d = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), rec_effect, &a, rec_destroy, &child), "child created");
    CHECK_OK(dfs_diffuser_into_when(increased, &p, predicate_destroy, child, &d), "into_when created");
    CHECK_OK(dfs_diffuser_release(child), "child handle released right after composing");
    CHECK(dfs_diffuser_type(d) == dfs_type_pointer(), "into_when has the child's type");
    long inputs[] = {1, 3, 2, 3, 3, 4};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        CHECK_OK(dfs_diffuser_run(d, IV(inputs[i])), "run %ld", inputs[i]);
    }
    /* The value is cached after every run, ran or not: 3>2 is false, then 2>3 is true. */
    CHECK_LOG(&log, "a:1 dc:1>3 a:3 dc:3>2 dc:2>3 a:3 dc:3>3 dc:3>4 a:4",
              "first run skips the predicate; the cache follows every value");
    CHECK_INT(a.destroyed + p.destroyed, 0, "nothing destroyed while the parent lives");
    dfs_diffuser_release(d);
    CHECK_INT(a.destroyed, 1, "child effect destroyed once");
    CHECK_INT(p.destroyed, 1, "predicate destroyed once");
}

static void test_into_when_effect(void) {
    check_section("into_when_effect");
    test_log log;
    log_clear(&log);
    recorder a = rec_make("a", &log, REC_INT);
    predicate p = {&log, 0, 0};
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into_when_effect(dfs_type_pointer(), increased, &p, predicate_destroy,
                                           rec_effect, &a, rec_destroy, &d), "into_when_effect created");
    long inputs[] = {5, 4, 6, 6, 7, 1, 2};
    for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
        CHECK_OK(dfs_diffuser_run(d, IV(inputs[i])), "run %ld", inputs[i]);
    }
    CHECK_LOG(&log, "a:5 dc:5>4 dc:4>6 a:6 dc:6>6 dc:6>7 a:7 dc:7>1 dc:1>2 a:2",
              "into_when_effect: first run always, then only when increased");
    dfs_diffuser_release(d);
    CHECK_INT(a.destroyed, 1, "effect ctx destroyed once");
    CHECK_INT(p.destroyed, 1, "predicate ctx destroyed once");
}

static void test_into_all(void) {
    check_section("into_all and into_always_all");
    test_log log;
    log_clear(&log);
    recorder a = rec_make("a", &log, REC_INT), b = rec_make("b", &log, REC_INT);
    dfs_diffuser *children[2] = {NULL, NULL}, *d = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), rec_effect, &a, rec_destroy, &children[0]), "child a");
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), rec_effect, &b, rec_destroy, &children[1]), "child b");
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), children, 2, &d), "into_all created");
    dfs_diffuser_release(children[0]);
    dfs_diffuser_release(children[1]);
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_LOG(&log, "a:1 b:1 a:2 b:2 a:1 b:1", "into_all: children in order, gated by equality");
    dfs_diffuser_release(d);
    CHECK_INT(a.destroyed + b.destroyed, 2, "both children destroyed once");

    /* into_always_all: ungated, the children keep their own gating. */
    a = rec_make("a", &log, REC_INT);
    b = rec_make("b", &log, REC_INT);
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &a, rec_destroy, &children[0]), "gated child a");
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), rec_effect, &b, rec_destroy, &children[1]), "ungated child b");
    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_pointer(), children, 2, &d), "into_always_all created");
    dfs_diffuser_release(children[0]);
    dfs_diffuser_release(children[1]);
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2");
    CHECK_LOG(&log, "a:1 b:1 b:1 a:2 b:2", "into_always_all: every run, children in order with their own gates");
    dfs_diffuser_release(d);
    CHECK_INT(a.destroyed + b.destroyed, 2, "both children destroyed once");

    /* No children: count 0 with a NULL array. */
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), NULL, 0, &d), "into_all with no children");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "runs");
    dfs_diffuser_release(d);
    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_pointer(), NULL, 0, &d), "into_always_all with no children");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "runs");
    dfs_diffuser_release(d);

    /* Nested into_all: inner gates prune. */
    recorder x = rec_make("x", &log, REC_INT);
    dfs_diffuser *leaf = NULL, *inner = NULL, *outer = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), rec_effect, &x, rec_destroy, &leaf), "leaf");
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), &leaf, 1, &inner), "inner into_all");
    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_pointer(), &inner, 1, &outer), "outer into_always_all");
    dfs_diffuser_release(leaf);
    dfs_diffuser_release(inner);
    for (long v = 1; v <= 3; v++) {
        dfs_diffuser_run(outer, IV(v));
        dfs_diffuser_run(outer, IV(v));
    }
    CHECK_LOG(&log, "x:1 x:2 x:3", "a gate inside an ungated parent still gates");
    dfs_diffuser_release(outer);
    CHECK_INT(x.destroyed, 1, "leaf destroyed once");
}

/* ------------------------------------------------------------------------------------
 * map and invert over a C struct model
 * ------------------------------------------------------------------------------------ */

typedef struct model {
    long count;
    const char *title;
    int visible;
} model;

static int transforms;

static int select_count(const void *value, const void **out, void *ctx) {
    (void)ctx;
    transforms++;
    *out = IV(((const model *)value)->count);
    return 0;
}

/* The output type (cstring) has a release function: return a copy the core will free. */
static int select_title(const void *value, const void **out, void *ctx) {
    (void)ctx;
    transforms++;
    *out = strdup(((const model *)value)->title);
    return 0;
}

static int select_visible(const void *value, const void **out, void *ctx) {
    (void)ctx;
    transforms++;
    *out = ((const model *)value)->visible ? IV(1) : NULL;
    return 0;
}

/* The output type (box) counts references: return a new one. */
static int boxes_from_transforms;

static int select_count_box(const void *value, const void **out, void *ctx) {
    (void)ctx;
    transforms++;
    boxes_from_transforms++;
    *out = box_new(((const model *)value)->count);
    return 0;
}

static void test_map_and_invert(void) {
    check_section("map over a struct model, and invert");
    test_log log;
    log_clear(&log);
    recorder count = rec_make("count", &log, REC_INT);
    recorder title = rec_make("title", &log, REC_STR);
    recorder hidden = rec_make("hidden", &log, REC_INT);
    int map_destroys = 0;

    dfs_diffuser *leaf = NULL, *parts[3] = {NULL, NULL, NULL}, *inv = NULL, *root = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &count, rec_destroy, &leaf), "count leaf");
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_count, &map_destroys, count_destroy, leaf, &parts[0]), "map count");
    dfs_diffuser_release(leaf);
    CHECK(dfs_diffuser_type(parts[0]) == dfs_type_pointer(), "map has the given input type");

    CHECK_OK(dfs_diffuser_into(dfs_type_cstring(), rec_effect, &title, rec_destroy, &leaf), "title leaf");
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_title, &map_destroys, count_destroy, leaf, &parts[1]), "map title");
    CHECK(dfs_diffuser_type(leaf) == dfs_type_cstring(), "the leaf has type cstring");
    dfs_diffuser_release(leaf);

    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &hidden, rec_destroy, &leaf), "hidden leaf");
    CHECK_OK(dfs_diffuser_invert(leaf, &inv), "invert");
    CHECK(dfs_diffuser_type(inv) == dfs_type_pointer(), "invert has type pointer");
    dfs_diffuser_release(leaf);
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_visible, &map_destroys, count_destroy, inv, &parts[2]), "map visible");
    dfs_diffuser_release(inv);

    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_pointer(), parts, 3, &root), "root");
    for (int i = 0; i < 3; i++) dfs_diffuser_release(parts[i]);

    model m1 = {1, "Inbox", 1}, m2 = {1, "Archive", 1}, m3 = {2, "Archive", 0}, m4 = {2, "Archive", 0};
    char title_buffer[16];
    strcpy(title_buffer, "Archive");
    m4.title = title_buffer; /* equal content, other storage */

    transforms = 0;
    CHECK_OK(dfs_diffuser_run(root, &m1), "run m1");
    CHECK_LOG(&log, "count:1 title:Inbox hidden:0", "first model renders everything");
    CHECK_OK(dfs_diffuser_run(root, &m2), "run m2 (title changed)");
    CHECK_LOG(&log, "title:Archive", "only the title re-renders");
    CHECK_OK(dfs_diffuser_run(root, &m3), "run m3 (count and visibility changed)");
    CHECK_LOG(&log, "count:2 hidden:1", "count and the inverted flag re-render");
    CHECK_OK(dfs_diffuser_run(root, &m4), "run m4 (equal to m3, other storage)");
    CHECK_LOG(&log, "", "an equal model renders nothing");
    CHECK_INT(transforms, 12, "every transform ran on every model (map does not gate)");
    dfs_diffuser_release(root);
    CHECK_INT(count.destroyed + title.destroyed + hidden.destroyed, 3, "leaf contexts destroyed once each");
    CHECK_INT(map_destroys, 3, "transform contexts destroyed once each");

    /* invert alone: the child receives exactly (const void *)1 or NULL. */
    recorder shown = rec_make("shown", &log, REC_INT);
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &shown, rec_destroy, &leaf), "shown leaf");
    CHECK_OK(dfs_diffuser_invert(leaf, &inv), "invert");
    dfs_diffuser_release(leaf);
    dfs_diffuser_run(inv, NULL);
    dfs_diffuser_run(inv, IV(5));
    dfs_diffuser_run(inv, IV(7));
    dfs_diffuser_run(inv, NULL);
    dfs_diffuser_run(inv, NULL);
    CHECK_LOG(&log, "shown:1 shown:0 shown:1", "invert: NULL -> 1, any other pointer -> NULL");
    dfs_diffuser_release(inv);
    CHECK_INT(shown.destroyed, 1, "destroyed once");

    /* map into a reference-counted type: the transform's new references are released. */
    box_type_ctx tc;
    dfs_type *bt = box_type_fresh(&tc, NULL);
    recorder boxed = rec_make("boxed", &log, REC_BOX);
    CHECK_OK(dfs_diffuser_into(bt, rec_effect, &boxed, rec_destroy, &leaf), "box leaf");
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_count_box, NULL, NULL, leaf, &root), "map count -> box");
    dfs_diffuser_release(leaf);
    dfs_type_release(bt);
    int live_before = box_live;
    dfs_diffuser_run(root, &m1);
    dfs_diffuser_run(root, &m2);
    dfs_diffuser_run(root, &m3);
    dfs_diffuser_run(root, &m4);
    CHECK_LOG(&log, "boxed:1 boxed:2", "map into a box type gates on box equality");
    CHECK_INT(box_live - live_before, 1, "only the cached box is alive between runs");
    dfs_diffuser_release(root);
    CHECK_INT(box_live, live_before, "every box a transform made was released");
    CHECK_INT(tc.destroyed, 1, "the box type was destroyed once, after its last user");
}

/* ------------------------------------------------------------------------------------
 * A user type made with dfs_type_new: equality gating and value ownership
 * ------------------------------------------------------------------------------------ */

static void test_user_type(void) {
    check_section("user type: equality, retain and release");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    int live_before = box_live;
    int retains_before = box_retains, releases_before = box_releases;
    dfs_type *bt = box_type_fresh(&tc, &log);
    recorder a = rec_make("a", &log, REC_BOX);
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into(bt, rec_effect, &a, rec_destroy, &d), "into(box)");
    CHECK(dfs_diffuser_type(d) == bt, "dfs_diffuser_type gives the user type");

    box *one = box_new(1), *one_again = box_new(1), *two = box_new(2);
    CHECK_OK(dfs_diffuser_run(d, one), "run box 1");
    CHECK_LOG(&log, "a:1", "first run: no equality call, the effect runs");
    CHECK(one->refs >= 2, "the cached value was retained (refs %d)", one->refs);
    CHECK_OK(dfs_diffuser_run(d, one_again), "run an equal box");
    CHECK_LOG(&log, "eq:1,1", "equal box: compared, no effect");
    CHECK(one->refs == 1 && one_again->refs == 2, "the equal box replaced the cached one (refs %d, %d)", one->refs,
          one_again->refs);
    CHECK_OK(dfs_diffuser_run(d, two), "run box 2");
    CHECK_LOG(&log, "eq:1,2 a:2", "different box: compared with the equal box that replaced 1, the effect runs");
    CHECK_OK(dfs_diffuser_run(d, two), "run box 2 again (same pointer)");
    CHECK_LOG(&log, "", "the box the gate holds: neither compared (equality is reflexive) nor rendered");
    CHECK(one->refs == 1 && one_again->refs == 1, "replaced values are released");

    box_unref(one);
    box_unref(one_again);
    box_unref(two);
    CHECK_INT(box_live - live_before, 1, "only the cached box is still alive");
    CHECK_INT((box_retains - retains_before) - (box_releases - releases_before), 1,
              "retains - releases == 1 (the cache)");

    CHECK_OK(dfs_type_release(bt), "type handle released while the diffuser uses it");
    CHECK_INT(tc.destroyed, 0, "the type is not destroyed while a diffuser uses it");
    CHECK(dfs_diffuser_type(d) == bt, "the diffuser still reports its type");

    CHECK_OK(dfs_diffuser_release(d), "release the diffuser");
    CHECK_INT(box_live, live_before, "zero outstanding boxes after release");
    CHECK_INT(box_retains - retains_before, box_releases - releases_before,
              "every retain was released (%d retains)", box_retains - retains_before);
    CHECK_INT(a.destroyed, 1, "effect ctx destroyed once");
    CHECK_INT(tc.destroyed, 1, "type ctx destroyed once");

    /* A type without callbacks: pointer identity, borrowed values. */
    int destroyed = 0;
    dfs_type *plain = NULL;
    CHECK_OK(dfs_type_new(NULL, NULL, NULL, NULL, &destroyed, count_destroy, &plain), "a type with no callbacks (and no name)");
    recorder p = rec_make("p", &log, REC_INT);
    CHECK_OK(dfs_diffuser_into(plain, rec_effect, &p, rec_destroy, &d), "into(plain)");
    dfs_diffuser_run(d, IV(1));
    dfs_diffuser_run(d, IV(1));
    dfs_diffuser_run(d, IV(3));
    CHECK_LOG(&log, "p:1 p:3", "NULL equality means pointer identity");
    dfs_diffuser_release(d);
    dfs_type_release(plain);
    CHECK_INT(destroyed, 1, "plain type ctx destroyed once");

    /* into_all and into_when over boxes: nothing leaks either. */
    bt = box_type_fresh(&tc, NULL);
    dfs_diffuser *kids[2] = {NULL, NULL}, *all = NULL, *when = NULL;
    recorder k1 = rec_make("k1", &log, REC_BOX), k2 = rec_make("k2", &log, REC_BOX);
    predicate pr = {&log, 0, 0};
    CHECK_OK(dfs_diffuser_into_always(bt, rec_effect, &k1, rec_destroy, &kids[0]), "k1");
    CHECK_OK(dfs_diffuser_into_when_effect(bt, box_increased, &pr, predicate_destroy, rec_effect, &k2, rec_destroy, &kids[1]), "k2");
    CHECK_OK(dfs_diffuser_into_all(bt, kids, 2, &all), "into_all(box)");
    CHECK_OK(dfs_diffuser_into_when(box_increased, &pr, NULL, all, &when), "into_when over into_all");
    dfs_diffuser_release(kids[0]);
    dfs_diffuser_release(kids[1]);
    dfs_diffuser_release(all);
    dfs_type_release(bt);
    long values[] = {1, 2, 2, 1, 3};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++) {
        box *b = box_new(values[i]);
        CHECK_OK(dfs_diffuser_run(when, b), "run box %ld", values[i]);
        box_unref(b);
    }
    /* when: 1 first; 2>1 runs all; 2>2 no; 1>2 no; 3>1 runs all (k2's own cache is 2). */
    CHECK_LOG(&log, "k1:1 k2:1 dc:1>2 k1:2 dc:1>2 k2:2 dc:2>2 dc:2>1 dc:1>3 k1:3 dc:2>3 k2:3",
              "into_when over into_all over boxes: exact log");
    CHECK(box_live > live_before, "cached boxes are alive while the diffuser lives");
    dfs_diffuser_release(when);
    CHECK_INT(box_live, live_before, "zero outstanding boxes after releasing into_when/into_all");
    CHECK_INT(tc.destroyed, 1, "type destroyed once");
    CHECK_INT(k1.destroyed + k2.destroyed + pr.destroyed, 3, "contexts destroyed once each");
    log_clear(&log);
}

/* ------------------------------------------------------------------------------------
 * An equality that answers DFS_EQUAL_SAME: two references to one value
 *
 * A "ref" is a handle to a box, as a JNI reference is a handle to an object: retain makes
 * a new handle, release frees one. Two handles to one box are the same value; the
 * equality says so with DFS_EQUAL_SAME, and a gate then keeps the handle it holds
 * instead of retaining the new one and releasing its own. Equal boxes (not the same)
 * still replace the cache; a type without retain takes DFS_EQUAL_SAME as 1.
 * ------------------------------------------------------------------------------------ */

typedef struct ref {
    box *target;
} ref;

static int ref_retains, ref_releases;
static const void *ref_last_old;  /* the `old` of the last comparison */
static const box *ref_last_old_box; /* and the box it referred to */

static ref *ref_new(box *target) {
    ref *r = malloc(sizeof *r);
    target->refs++;
    r->target = target;
    return r;
}

static void ref_free(ref *r) {
    box_unref(r->target);
    free(r);
}

static int ref_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    const ref *x = a, *y = b;
    ref_last_old = a;
    ref_last_old_box = x->target;
    if (x->target == y->target) return DFS_EQUAL_SAME;
    return x->target->value == y->target->value;
}

static const void *ref_retain(const void *value, void *ctx) {
    (void)ctx;
    ref_retains++;
    return ref_new(((const ref *)value)->target);
}

static void ref_release(const void *value, void *ctx) {
    (void)ctx;
    ref_releases++;
    ref_free((ref *)value);
}

static int ref_effect(const void *value, void *ctx) {
    log_add(ctx, "e:%ld", ((const ref *)value)->target->value);
    return 0;
}

/* Runs `d` on a new handle to `target`, freed after the run (the run borrows it). */
static void ref_run(dfs_diffuser *d, box *target, const char *what) {
    ref *r = ref_new(target);
    CHECK_OK(dfs_diffuser_run(d, r), "%s", what);
    ref_free(r);
}

/* The map's transform: a new handle to the box the input refers to, lent for the run
 * (dfs_diffuser_map_borrowed); freed by the test after the run. */
static ref *lent_parts[8];
static int lent_count;

static int lend_ref(const void *value, const void **out, void *ctx) {
    (void)ctx;
    ref *part = ref_new(((const ref *)value)->target);
    lent_parts[lent_count++] = part;
    *out = part;
    return 0;
}

static void free_lent_parts(void) {
    for (int i = 0; i < lent_count; i++) ref_free(lent_parts[i]);
    lent_count = 0;
}

static void test_same_value(void) {
    check_section("equality answering DFS_EQUAL_SAME: the gate keeps the reference it holds");
    test_log log;
    log_clear(&log);
    int live_before = box_live;
    dfs_type *rt = NULL;
    CHECK_OK(dfs_type_new("ref", ref_equal, ref_retain, ref_release, NULL, NULL, &rt), "ref type");
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into(rt, ref_effect, &log, NULL, &d), "into(ref)");
    box *a = box_new(1), *b = box_new(1), *c = box_new(2);

    ref_run(d, a, "run a");
    CHECK_LOG(&log, "e:1", "first run renders");
    CHECK_INT(ref_retains, 1, "the gate retained the first handle");
    ref_run(d, a, "run a through another handle");
    CHECK_LOG(&log, "", "the same value renders nothing");
    CHECK(ref_retains == 1 && ref_releases == 0, "and is kept by the handle the gate held (retains %d, releases %d)",
          ref_retains, ref_releases);
    ref_run(d, b, "run b, equal to a");
    CHECK_LOG(&log, "", "an equal value renders nothing");
    CHECK(ref_retains == 2 && ref_releases == 1, "and replaces the cache (retains %d, releases %d)", ref_retains,
          ref_releases);
    CHECK(ref_last_old_box == a, "b was compared with a");
    ref_run(d, c, "run c");
    CHECK_LOG(&log, "e:2", "a different value renders");
    CHECK(ref_last_old_box == b, "c was compared with b, the value kept last");
    dfs_diffuser_release(d);
    CHECK_INT(ref_retains, ref_releases, "every retained handle was released");

    /* Through a borrowed map into into_all: each run's part is a new handle. */
    dfs_diffuser *leaf = NULL, *all = NULL, *map = NULL;
    CHECK_OK(dfs_diffuser_into(rt, ref_effect, &log, NULL, &leaf), "leaf");
    CHECK_OK(dfs_diffuser_into_all(rt, &leaf, 1, &all), "into_all(ref)");
    CHECK_OK(dfs_diffuser_map_borrowed(rt, lend_ref, NULL, NULL, all, &map), "map_borrowed -> into_all");
    dfs_diffuser_release(leaf);
    dfs_diffuser_release(all);
    int retains_before = ref_retains;
    for (int i = 0; i < 3; i++) {
        ref_run(map, a, "run a through the map");
        free_lent_parts();
    }
    CHECK_LOG(&log, "e:1", "the map's part renders once");
    CHECK_INT(ref_retains - retains_before, 2, "the two gates retained a part once each, on the first run");
    ref_run(map, c, "run c through the map");
    free_lent_parts();
    CHECK_LOG(&log, "e:2", "a different part renders");
    dfs_diffuser_release(map);
    CHECK_INT(ref_retains, ref_releases, "every retained handle was released");

    /* A type that retains nothing: DFS_EQUAL_SAME is "equal", and the new pointer is kept. */
    dfs_type *borrowed = NULL;
    CHECK_OK(dfs_type_new("borrowed ref", ref_equal, NULL, NULL, NULL, NULL, &borrowed), "borrowed ref type");
    CHECK_OK(dfs_diffuser_into(borrowed, ref_effect, &log, NULL, &d), "into(borrowed ref)");
    ref *r1 = ref_new(a), *r2 = ref_new(a), *r3 = ref_new(c);
    CHECK_OK(dfs_diffuser_run(d, r1), "run r1");
    CHECK_OK(dfs_diffuser_run(d, r2), "run r2, the same value");
    CHECK_OK(dfs_diffuser_run(d, r3), "run r3");
    CHECK_LOG(&log, "e:1 e:2", "renders as equality says");
    CHECK(ref_last_old == r2, "r3 was compared with r2: the gate kept the new pointer");
    dfs_diffuser_release(d);
    ref_free(r1);
    ref_free(r2);
    ref_free(r3);

    dfs_type_release(rt);
    dfs_type_release(borrowed);
    box_unref(a);
    box_unref(b);
    box_unref(c);
    CHECK_INT(box_live, live_before, "zero outstanding boxes");
}

/* ------------------------------------------------------------------------------------
 * A gate keeps the new value after every successful run, equal or not
 *
 * With an equality that is not transitive ("within 1": 0 ~ 1 ~ 2 ~ 3, but 0 !~ 2), a
 * gate that compares each value with the previous run's sees 0, 1, 2, 3 as one value:
 * the effect runs once. A gate that kept its first value would run it again at 2.
 * Every run gets a fresh box, so every comparison is a call of the equality.
 * ------------------------------------------------------------------------------------ */

static int box_near(const void *a, const void *b, void *ctx) {
    const box *x = a, *y = b;
    log_add(ctx, "~%ld,%ld", x->value, y->value);
    return labs(x->value - y->value) <= 1;
}

/* "not within 1", a change predicate over boxes, logged as "p:old,new". */
static int box_not_near(const void *old_value, const void *new_value, void *ctx) {
    const box *x = old_value, *y = new_value;
    log_add(ctx, "p:%ld,%ld", x->value, y->value);
    return labs(x->value - y->value) > 1;
}

static int always_changed(const void *old_value, const void *new_value, void *ctx) {
    (void)old_value, (void)new_value, (void)ctx;
    return 1;
}

/* Boxes an integer (a transform into the near type: a new box on every run). */
static int box_int(const void *value, const void **out, void *ctx) {
    (void)ctx;
    boxes_from_transforms++;
    *out = box_new((long)(intptr_t)value);
    return 0;
}

static void test_gates_keep_every_value(void) {
    check_section("gates compare with the previous run's value and keep every new one");
    test_log log;
    log_clear(&log);
    int live_before = box_live;
    dfs_type *near = NULL;
    CHECK_OK(dfs_type_new("near", box_near, box_retain, box_release, &log, NULL, &near), "a \"within 1\" box type");
    const long values[] = {0, 1, 2, 3, 5};
    enum { RUNS = sizeof values / sizeof values[0] };
    static const struct {
        const char *where;
        const char *first_four;   /* the log of runs 0, 1, 2, 3 */
        const char *fifth;        /* the log of run 5 */
        int refs[4];              /* the references to boxes 0..3 after run 3 (the test's + the gates'); 0: not checked */
    } places[] = {
        {"into at the root", "A:0 ~0,1 ~1,2 ~2,3", "~3,5 A:5", {1, 1, 1, 2}},
        {"into below a map", "A:0 ~0,1 ~1,2 ~2,3", "~3,5 A:5", {0, 0, 0, 0}},
        {"into_all at the root", "A:0 ~0,1 ~1,2 ~2,3", "~3,5 A:5", {1, 1, 1, 2}},
        {"into below into_always_all", "A:0 ~0,1 ~1,2 ~2,3", "~3,5 A:5", {1, 1, 1, 2}},
        /* The inner gate saw only 0 (into_all let nothing else through) and compares 0, 5. */
        {"into below into_all", "A:0 ~0,1 ~1,2 ~2,3", "~3,5 ~0,5 A:5", {2, 1, 1, 2}},
        /* into_when keeps every value too: box 3 is held by both gates. */
        {"into below into_when(always)", "A:0 ~0,1 ~1,2 ~2,3", "~3,5 A:5", {1, 1, 1, 3}},
        {"into_when(\"not within 1\") at the root", "A:0 p:0,1 p:1,2 p:2,3", "p:3,5 A:5", {1, 1, 1, 2}},
    };
    for (size_t place = 0; place < sizeof places / sizeof places[0]; place++) {
        const char *where = places[place].where;
        recorder a = rec_make("A", &log, REC_BOX);
        dfs_diffuser *leaf = NULL, *root = NULL;
        int by_map = place == 1;
        if (place == 2) {
            CHECK_OK(dfs_diffuser_into_always(near, rec_effect, &a, rec_destroy, &leaf), "into_always");
            CHECK_OK(dfs_diffuser_into_all(near, &leaf, 1, &root), "into_all");
            dfs_diffuser_release(leaf);
        } else if (place == 6) {
            CHECK_OK(dfs_diffuser_into_when_effect(near, box_not_near, &log, NULL, rec_effect, &a, rec_destroy, &root),
                     "into_when_effect(\"not within 1\")");
        } else {
            CHECK_OK(dfs_diffuser_into(near, rec_effect, &a, rec_destroy, &leaf), "into");
            dfs_status status = DFS_OK;
            switch (place) {
            case 0: status = dfs_diffuser_retain(root = leaf); break;
            case 1: status = dfs_diffuser_map(dfs_type_pointer(), box_int, NULL, NULL, leaf, &root); break;
            case 3: status = dfs_diffuser_into_always_all(near, &leaf, 1, &root); break;
            case 4: status = dfs_diffuser_into_all(near, &leaf, 1, &root); break;
            default: status = dfs_diffuser_into_when(always_changed, NULL, NULL, leaf, &root); break;
            }
            CHECK_OK(status, "%s: built", where);
            dfs_diffuser_release(leaf);
        }
        box *runs[RUNS];
        for (int i = 0; i < RUNS; i++) {
            runs[i] = box_new(values[i]);
            CHECK_OK(dfs_diffuser_run(root, by_map ? IV(values[i]) : (const void *)runs[i]), "%s: run %ld", where,
                     values[i]);
            if (i == 3) {
                CHECK_LOG(&log, places[place].first_four,
                          "%s: 0, 1, 2, 3 run the effect once, each compared with the run before", where);
                if (!by_map) {
                    int same = 1;
                    for (int k = 0; k < 4; k++) same = same && runs[k]->refs == places[place].refs[k];
                    CHECK(same, "%s: the gates hold the last value they saw (refs %d %d %d %d)", where, runs[0]->refs,
                          runs[1]->refs, runs[2]->refs, runs[3]->refs);
                }
            }
        }
        CHECK_LOG(&log, places[place].fifth, "%s: 5 is not within 1 of 3: the effect runs", where);
        for (int i = 0; i < RUNS; i++) box_unref(runs[i]);
        dfs_diffuser_release(root);
        CHECK_INT(a.destroyed, 1, "%s: effect destroyed once", where);
        CHECK_INT(box_live, live_before, "%s: every box released", where);
    }
    dfs_type_release(near);
}

/* ------------------------------------------------------------------------------------ */

/* Runs of the value the root gate holds: the equality is not called (it is reflexive)
 * and nothing renders; a run queued from inside an effect, or a retry after a failed
 * pass, is an ordinary run. */
typedef struct feedback {
    dfs_diffuser *diffuser;
    const void *again;  /* run from inside the effect when it sees `trigger` */
    long trigger;
    test_log *log;
} feedback;

static int feedback_effect(const void *value, void *ctx) {
    feedback *f = ctx;
    const box *b = value;
    log_add(f->log, "f:%ld", b->value);
    if (b->value == f->trigger && f->again) {
        const void *again = f->again;
        f->again = NULL;
        dfs_status status = dfs_diffuser_run(f->diffuser, again);
        log_add(f->log, "queued:%s", dfs_status_name(status));
    }
    return 0;
}

static void test_identical_runs(void) {
    check_section("a run of the value the root gate holds");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    int live_before = box_live;
    dfs_type *bt = box_type_fresh(&tc, &log);
    box *one = box_new(1), *two = box_new(2), *two_again = box_new(2);

    /* From inside the pass of 2, the gate still holds 1: a run of 1 is queued, then
     * renders 1 again. */
    feedback f = {NULL, one, 2, &log};
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into(bt, feedback_effect, &f, NULL, &d), "into(box) with a feedback effect");
    f.diffuser = d;
    CHECK_OK(dfs_diffuser_run(d, one), "run 1");
    CHECK_OK(dfs_diffuser_run(d, one), "run 1 again");
    CHECK_LOG(&log, "f:1", "the held box: nothing compared, nothing rendered");
    CHECK_OK(dfs_diffuser_run(d, two), "run 2, whose effect runs 1");
    CHECK_LOG(&log, "eq:1,2 f:2 queued:DFS_OK eq:2,1 f:1", "the run of the held box from the effect was queued and rendered");
    CHECK_OK(dfs_diffuser_run(d, two), "run 2");
    CHECK_OK(dfs_diffuser_run(d, two_again), "run an equal box");
    CHECK_LOG(&log, "eq:1,2 f:2 eq:2,2", "an equal box that is another pointer is compared, and not rendered");
    dfs_diffuser_release(d);

    /* A failed pass leaves the gate's old value: the same pointer is tried again. */
    recorder r = rec_make("r", &log, REC_BOX);
    r.fail_times = 1;
    r.fail_any = 1;
    dfs_diffuser *inner = NULL, *all = NULL;
    CHECK_OK(dfs_diffuser_into_always(bt, rec_effect, &r, rec_destroy, &inner), "into_always(box)");
    CHECK_OK(dfs_diffuser_into_all(bt, &inner, 1, &all), "into_all over it");
    dfs_diffuser_release(inner);
    CHECK_INT(dfs_diffuser_run(all, one), DFS_ERR_CALLBACK, "the first pass fails");
    CHECK_OK(dfs_diffuser_run(all, one), "the same box again");
    CHECK_OK(dfs_diffuser_run(all, one), "and again");
    CHECK_LOG(&log, "r:1! r:1", "retried once, then held");
    dfs_diffuser_release(all);

    /* A released handle is still reported as one. */
    CHECK_INT(dfs_diffuser_run(all, one), DFS_ERR_HANDLE, "run on a released diffuser");
    CHECK(strstr(dfs_last_error(), "not a live dfs_diffuser") != NULL, "with its message (\"%s\")", dfs_last_error());

    box_unref(one);
    box_unref(two);
    box_unref(two_again);
    dfs_type_release(bt);
    CHECK_INT(box_live, live_before, "no box outlives the diffusers");
    CHECK_INT(r.destroyed, 1, "effect ctx destroyed once");
    log_clear(&log);
}

/* ------------------------------------------------------------------------------------ */

/* dfs_diffuser_run_or_queue tells a run queued behind the pass under way on this thread
 * from one done before it returned. */
typedef struct queue_probe {
    dfs_diffuser *self;
    dfs_diffuser *other;
    int self_queued, other_queued;
    int other_runs;
    int other_runs_seen;  /* other_runs right after the other diffuser's run returned */
} queue_probe;

static int queue_probe_other(const void *value, void *ctx) {
    (void)value;
    ((queue_probe *)ctx)->other_runs++;
    return 0;
}

static int queue_probe_self(const void *value, void *ctx) {
    queue_probe *p = ctx;
    if ((long)(intptr_t)value != 1) return 0;
    p->self_queued = -1;
    p->other_queued = -1;
    if (dfs_diffuser_run_or_queue(p->self, IV(2), &p->self_queued) != DFS_OK) return 1;
    if (dfs_diffuser_run_or_queue(p->other, IV(5), &p->other_queued) != DFS_OK) return 1;
    p->other_runs_seen = p->other_runs;
    return 0;
}

static void test_run_or_queue(void) {
    check_section("dfs_diffuser_run_or_queue: queued behind the pass under way, or done");
    queue_probe p = {0};
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), queue_probe_self, &p, NULL, &p.self), "into_always");
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), queue_probe_other, &p, NULL, &p.other), "another graph");
    int queued = -1;
    CHECK_OK(dfs_diffuser_run_or_queue(p.self, IV(1), &queued), "run 1, whose effect runs both");
    CHECK_INT(queued, 0, "a run outside any effect is done, not queued");
    CHECK_INT(p.self_queued, 1, "a run of its own graph from its effect is queued");
    CHECK_INT(p.other_queued, 0, "a run of another graph from the effect is not queued");
    CHECK_INT(p.other_runs_seen, 1, "and was done before it returned");
    CHECK_OK(dfs_diffuser_run_or_queue(p.other, IV(6), NULL), "a NULL flag is accepted");
    CHECK_INT(p.other_runs, 2, "and the run done");
    queued = -1;
    dfs_diffuser_release(p.other);
    CHECK_INT(dfs_diffuser_run_or_queue(p.other, IV(7), &queued), DFS_ERR_HANDLE, "a released handle is refused");
    CHECK_INT(queued, 0, "and the flag says not queued");
    dfs_diffuser_release(p.self);
}

static void test_shared_child(void) {
    check_section("a child shared by two parents shares one cache");
    test_log log;
    log_clear(&log);
    recorder c = rec_make("c", &log, REC_STR);
    dfs_diffuser *child = NULL, *p1 = NULL, *p2 = NULL, *p3 = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_cstring(), rec_effect, &c, rec_destroy, &child), "child");
    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_cstring(), &child, 1, &p1), "parent 1");
    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_cstring(), &child, 1, &p2), "parent 2");
    dfs_diffuser *twice[2] = {child, child};
    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_cstring(), twice, 2, &p3), "parent 3 (the child twice)");
    dfs_diffuser_release(child);

    dfs_diffuser_run(p1, "a");
    CHECK_LOG(&log, "c:a", "parent 1 runs the child");
    dfs_diffuser_run(p2, "a");
    CHECK_LOG(&log, "", "parent 2 with the same value: the shared cache says unchanged");
    dfs_diffuser_run(p2, "b");
    CHECK_LOG(&log, "c:b", "parent 2 with a new value runs it");
    dfs_diffuser_run(p1, "b");
    CHECK_LOG(&log, "", "parent 1 sees the cache parent 2 updated");
    dfs_diffuser_run(p3, "c");
    CHECK_LOG(&log, "c:c", "the same child twice in one parent runs once");

    dfs_diffuser_release(p1);
    dfs_diffuser_release(p2);
    CHECK_INT(c.destroyed, 0, "child alive while parent 3 holds it");
    dfs_diffuser_release(p3);
    CHECK_INT(c.destroyed, 1, "child destroyed once with its last parent");

    check_section("a graph that shares a child at every level: its first run meets each node once");
    /* into_all(d, d), 64 times over one leaf: 2^64 paths to the leaf, a few nodes a
     * level. A first run that walked every path would never return (ctest's timeout
     * fails it). */
    log_clear(&log);
    recorder leaf = rec_make("leaf", &log, REC_STR);
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_cstring(), rec_effect, &leaf, rec_destroy, &d), "leaf");
    for (int level = 0; level < 64 && d != NULL; level++) {
        dfs_diffuser *both[2] = {d, d}, *up = NULL;
        CHECK_OK(dfs_diffuser_into_all(dfs_type_cstring(), both, 2, &up), "a level");
        dfs_diffuser_release(d);
        d = up;
    }
    CHECK_OK(dfs_diffuser_run(d, "a"), "first run");
    CHECK_OK(dfs_diffuser_run(d, "a"), "same value");
    CHECK_OK(dfs_diffuser_run(d, "b"), "new value");
    CHECK_LOG(&log, "leaf:a leaf:b", "the leaf runs once a value");
    dfs_diffuser_release(d);
    CHECK_INT(leaf.destroyed, 1, "leaf destroyed once");
}

/* ------------------------------------------------------------------------------------ */

static int connect_nothing(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)dispatch;
    (void)ctx;
    *connection = NULL;
    return 0;
}

static int count_effect(const void *value, void *ctx) {
    (void)value;
    (*(int *)ctx)++;
    return 0;
}

static void test_handle_refcounts(void) {
    check_section("retain and release of handles");
    int runs = 0, destroyed = 0;
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), count_effect, &runs, NULL, &d), "diffuser");
    CHECK_OK(dfs_diffuser_retain(d), "dfs_diffuser_retain");
    CHECK_OK(dfs_diffuser_retain(d), "dfs_diffuser_retain again");
    CHECK_OK(dfs_diffuser_release(d), "release 1 of 3");
    CHECK_OK(dfs_diffuser_release(d), "release 2 of 3");
    CHECK_OK(dfs_diffuser_run(d, NULL), "still valid with one reference");
    CHECK_INT(runs, 1, "it ran");
    CHECK_OK(dfs_diffuser_release(d), "release 3 of 3");
    CHECK_STATUS(dfs_diffuser_run(d, NULL), DFS_ERR_HANDLE, "gone after the last release");
    CHECK_STATUS(dfs_diffuser_retain(d), DFS_ERR_HANDLE, "retain after the last release fails");

    dfs_type *t = NULL;
    CHECK_OK(dfs_type_new("counted", NULL, NULL, NULL, &destroyed, count_destroy, &t), "type");
    CHECK_OK(dfs_type_retain(t), "dfs_type_retain");
    CHECK_OK(dfs_type_release(t), "release 1 of 2");
    CHECK_INT(destroyed, 0, "type alive");
    CHECK_OK(dfs_diffuser_into_always(t, count_effect, &runs, NULL, &d), "the type is still usable");
    dfs_diffuser_release(d);
    CHECK_OK(dfs_type_release(t), "release 2 of 2");
    CHECK_INT(destroyed, 1, "type ctx destroyed once");
    CHECK_STATUS(dfs_type_release(t), DFS_ERR_HANDLE, "releasing it again fails");

    /* Built-in types are static: retain and release do nothing. */
    for (int i = 0; i < 3; i++) {
        dfs_type_release(dfs_type_pointer());
        dfs_type_release(dfs_type_cstring());
        dfs_type_release(dfs_type_ffi_event());
    }
    CHECK_OK(dfs_type_retain(dfs_type_cstring()), "retain a built-in type");
    CHECK_OK(dfs_diffuser_into_always(dfs_type_cstring(), count_effect, &runs, NULL, &d), "built-in types survive releases");
    dfs_diffuser_release(d);
    CHECK(dfs_type_pointer() != NULL && dfs_type_cstring() != NULL && dfs_type_ffi_event() != NULL &&
          dfs_type_pointer() != dfs_type_cstring() && dfs_type_cstring() != dfs_type_ffi_event(),
          "three distinct built-in types");

    destroyed = 0;
    dfs_fuser *f = NULL;
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_pointer(), connect_nothing, NULL, &destroyed, count_destroy, &f), "fuser");
    CHECK(dfs_fuser_type(f) == dfs_type_pointer(), "dfs_fuser_type");
    CHECK_OK(dfs_fuser_retain(f), "dfs_fuser_retain");
    CHECK_OK(dfs_fuser_release(f), "release 1 of 2");
    CHECK_OK(dfs_fuser_connect(f, count_effect, &runs, NULL, &c), "still connectable");
    CHECK_OK(dfs_disposable_dispose(c), "dispose");
    CHECK_OK(dfs_disposable_release(c), "release the disposable");
    CHECK_OK(dfs_fuser_release(f), "release 2 of 2");
    CHECK_INT(destroyed, 1, "source ctx destroyed once");
    CHECK_STATUS(dfs_fuser_connect(f, count_effect, &runs, NULL, &c), DFS_ERR_HANDLE, "gone after the last release");
    CHECK_STATUS(dfs_fuser_retain(f), DFS_ERR_HANDLE, "retain after the last release fails");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_versions();
    test_into_always();
    test_into();
    test_into_once();
    test_into_when();
    test_into_when_effect();
    test_into_all();
    test_map_and_invert();
    test_user_type();
    test_gates_keep_every_value();
    test_same_value();
    test_identical_runs();
    test_run_or_queue();
    test_shared_child();
    test_handle_refcounts();
    check_section("totals");
    CHECK_INT(box_live, 0, "no box outstanding at exit");
    CHECK_INT(box_retains + boxes_from_transforms, box_releases,
              "every retain and every transform output was released, once");
    return check_finish();
}
