/*
 * test_callbacks.c — a callback that fails aborts the run with DFS_ERR_CALLBACK:
 * effects, transforms, change predicates and equality. The message set with
 * dfs_set_error reaches dfs_last_error; the failing node keeps its old cache (the next
 * run with the same value retries it); nodes after it do not run. Fan-outs of maps call
 * every user callback in tree order, whatever the form of map (owned parts, borrowed
 * parts, field maps), and the first failure in that order is the one reported.
 *
 * One program because failure and order are one rule (the first failure in tree order
 * wins, nothing after it runs): the failing-callback tests, the tree-order tests and the
 * map forms they run through (field maps, borrowed parts that a failing transform has
 * already lent) check it from every side, on the same recorders and logs of check.h.
 */
#include "check.h"

static void test_failing_effect(void) {
    check_section("a failing effect");
    test_log log;
    log_clear(&log);
    recorder a = rec_make("a", &log, REC_INT);
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &a, rec_destroy, &d), "into");
    a.fail_times = 1;
    a.fail_on_int = 2;
    a.fail_code = 7;
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_STATUS(dfs_diffuser_run(d, IV(2)), DFS_ERR_CALLBACK, "run 2: the effect returns 7");
    CHECK_ERROR_HAS("effect", "without dfs_set_error the message names the effect (\"%s\")", dfs_last_error());
    CHECK_ERROR_HAS("7", "and its return code");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2 again: retried, succeeds");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2 once more");
    CHECK_LOG(&log, "a:1 a:2! a:2", "the failing node kept its old cache, retried once, then cached");

    a.fail_times = 1;
    a.fail_on_int = 3;
    a.fail_message = "the printer is on fire";
    CHECK_STATUS(dfs_diffuser_run(d, IV(3)), DFS_ERR_CALLBACK, "run 3 fails with a message");
    CHECK_STR(dfs_last_error(), "the printer is on fire", "dfs_set_error's message reaches dfs_last_error");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2: the cache is still 2, nothing runs");
    CHECK_LOG(&log, "a:3!", "after a failure the cache is the last successful value");
    dfs_diffuser_release(d);
    CHECK_INT(a.destroyed, 1, "destroy once");

    /* into_always_all: nodes after the failing one do not run. */
    recorder x = rec_make("x", &log, REC_STR), y = rec_make("y", &log, REC_STR), z = rec_make("z", &log, REC_STR);
    dfs_diffuser *kids[3] = {NULL, NULL, NULL}, *all = NULL;
    dfs_diffuser_into(dfs_type_cstring(), rec_effect, &x, rec_destroy, &kids[0]);
    dfs_diffuser_into(dfs_type_cstring(), rec_effect, &y, rec_destroy, &kids[1]);
    dfs_diffuser_into(dfs_type_cstring(), rec_effect, &z, rec_destroy, &kids[2]);
    CHECK_OK(dfs_diffuser_into_all(dfs_type_cstring(), kids, 3, &all), "into_all(x, y, z)");
    for (int i = 0; i < 3; i++) dfs_diffuser_release(kids[i]);
    y.fail_times = 1;
    y.fail_on_str = "new";
    y.fail_message = "y failed";
    CHECK_OK(dfs_diffuser_run(all, "old"), "run \"old\"");
    CHECK_LOG(&log, "x:old y:old z:old", "first run: all three");
    CHECK_STATUS(dfs_diffuser_run(all, "new"), DFS_ERR_CALLBACK, "run \"new\": y fails");
    CHECK_STR(dfs_last_error(), "y failed", "y's message");
    CHECK_LOG(&log, "x:new y:new!", "x ran, y failed, z did not run");
    CHECK_OK(dfs_diffuser_run(all, "new"), "run \"new\" again");
    CHECK_LOG(&log, "y:new z:new", "the parent kept its cache and re-ran; x was cached, y retried, z ran");
    CHECK_OK(dfs_diffuser_run(all, "new"), "run \"new\" once more");
    CHECK_LOG(&log, "", "now everything is cached");
    dfs_diffuser_release(all);
    CHECK_INT(x.destroyed + y.destroyed + z.destroyed, 3, "destroyed once each");

    /* into_always and into_once. */
    recorder o = rec_make("o", &log, REC_INT);
    CHECK_OK(dfs_diffuser_into_once(dfs_type_pointer(), rec_effect, &o, rec_destroy, &d), "into_once");
    o.fail_times = 1;
    o.fail_any = 1;
    CHECK_STATUS(dfs_diffuser_run(d, IV(1)), DFS_ERR_CALLBACK, "the first run fails");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "the next value counts as the first");
    CHECK_OK(dfs_diffuser_run(d, IV(3)), "and then never again");
    CHECK_LOG(&log, "o:1! o:2", "into_once retries after a failed first run");
    dfs_diffuser_release(d);
    CHECK_INT(o.destroyed, 1, "destroy once");
}

/* ------------------------------------------------------------------------------------ */

typedef struct select_ctx {
    test_log *log;
    long fail_on;
    int produce_box_then_fail; /* make a box, store it in *out, then fail */
} select_ctx;

static int select_value(const void *value, const void **out, void *ctx) {
    select_ctx *s = ctx;
    long v = (long)(intptr_t)value;
    log_add(s->log, "t:%ld", v);
    if (v == s->fail_on) {
        if (s->produce_box_then_fail) *out = box_new(v);
        dfs_set_error("transform refused");
        return 3;
    }
    *out = IV(v * 10);
    return 0;
}

static int select_box(const void *value, const void **out, void *ctx) {
    select_ctx *s = ctx;
    long v = (long)(intptr_t)value;
    *out = box_new(v);
    if (v == s->fail_on) return 3; /* fails after producing a value: the core must release it */
    return 0;
}

/* dfs_set_error's message belongs to the callback that set it while running: one set by
 * a callback that then returned 0 is not given for a later failure, in a later run, in
 * the same run or in the callback that made the nested run it was set in; one set before
 * a nested run that succeeded still is. */
static int tentative_effect(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    dfs_set_error("a tentative message");
    return 0;
}

static int silent_failure(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    return 42;
}

static int quiet_effect(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    return 0;
}

/* Sets its message, then runs the diffuser `ctx` (whose effects succeed), then fails. */
static int message_then_nested_run(const void *value, void *ctx) {
    (void)value;
    dfs_set_error("the outer effect's message");
    if (dfs_diffuser_run((dfs_diffuser *)ctx, NULL) != DFS_OK) return 1;
    return 43;
}

/* Runs the diffuser `ctx` (whose effect sets a message and succeeds), then fails. */
static int nested_run_then_failure(const void *value, void *ctx) {
    (void)value;
    if (dfs_diffuser_run((dfs_diffuser *)ctx, NULL) != DFS_OK) return 1;
    return 44;
}

/* A list reader whose count sets a message, returns 0 and gives a count the core
 * refuses: the nested call fails for a reason of its own (DFS_ERR_ARGUMENT). */
static int refused_count(const void *list, size_t *count, void *ctx) {
    (void)list;
    (void)ctx;
    dfs_set_error("a tentative message of a count that succeeded");
    *count = (size_t)-1;
    return 0;
}

static int no_key(const void *list, int32_t index, uint64_t *key, void *ctx) {
    (void)list;
    (void)index;
    (void)ctx;
    *key = 0;
    return 0;
}

/* Makes a nested call that fails for a reason of its own, then fails. */
static int nested_refusal_then_failure(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    dfs_list_reader reader = {refused_count, no_key, NULL, NULL, NULL};
    dfs_list_diff d;
    int list = 0;
    if (dfs_list_diff_read(&reader, NULL, &list, &list, 0, &d) == DFS_OK) dfs_list_diff_free(&d);
    return 5;
}

static void test_message_belongs_to_its_callback(void) {
    check_section("a callback's dfs_set_error message is its own");
    dfs_diffuser *tentative = NULL, *silent = NULL, *nested = NULL, *both[2] = {NULL, NULL}, *all = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), tentative_effect, NULL, NULL, &tentative), "tentative");
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), silent_failure, NULL, NULL, &silent), "silent");
    CHECK_OK(dfs_diffuser_run(tentative, NULL), "a callback that set a message and returned 0");
    CHECK_STATUS(dfs_diffuser_run(silent, NULL), DFS_ERR_CALLBACK, "a later run fails without a message");
    CHECK_ERROR_HAS("returned 42", "its own description, not the stale message (\"%s\")", dfs_last_error());

    both[0] = tentative;
    both[1] = silent;
    CHECK_OK(dfs_diffuser_into_always_all(dfs_type_pointer(), both, 2, &all), "into_always_all(tentative, silent)");
    CHECK_STATUS(dfs_diffuser_run(all, NULL), DFS_ERR_CALLBACK, "the second effect of one run fails");
    CHECK_ERROR_HAS("returned 42", "its own description in the same run too (\"%s\")", dfs_last_error());

    dfs_diffuser *quiet = NULL, *outer = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), quiet_effect, NULL, NULL, &quiet), "quiet");
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), message_then_nested_run, quiet, NULL, &outer), "outer");
    CHECK_STATUS(dfs_diffuser_run(outer, NULL), DFS_ERR_CALLBACK, "an effect fails after a nested run succeeded");
    CHECK_STR(dfs_last_error(), "the outer effect's message", "the message it set before the nested run");
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), nested_run_then_failure, tentative, NULL, &nested), "nested");
    CHECK_STATUS(dfs_diffuser_run(nested, NULL), DFS_ERR_CALLBACK, "an effect fails after a nested run's effect set a message and succeeded");
    CHECK_ERROR_HAS("returned 44", "its own description, not the nested effect's message (\"%s\")", dfs_last_error());
    dfs_diffuser *refusal = NULL;
    CHECK_OK(dfs_diffuser_into_always(dfs_type_pointer(), nested_refusal_then_failure, NULL, NULL, &refusal), "refusal");
    CHECK_STATUS(dfs_diffuser_run(refusal, NULL), DFS_ERR_CALLBACK, "an effect fails after a nested call failed otherwise");
    CHECK_ERROR_HAS("returned 5", "its own description, not the nested count's message (\"%s\")", dfs_last_error());
    dfs_diffuser_release(refusal);
    dfs_diffuser_release(all);
    dfs_diffuser_release(outer);
    dfs_diffuser_release(quiet);
    dfs_diffuser_release(nested);
    dfs_diffuser_release(silent);
    dfs_diffuser_release(tentative);
}

static void test_failing_transform(void) {
    check_section("a failing transform");
    test_log log;
    log_clear(&log);
    recorder a = rec_make("a", &log, REC_INT);
    select_ctx s = {&log, 3, 0};
    dfs_diffuser *leaf = NULL, *d = NULL;
    dfs_diffuser_into(dfs_type_pointer(), rec_effect, &a, rec_destroy, &leaf);
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_value, &s, NULL, leaf, &d), "map");
    dfs_diffuser_release(leaf);
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1");
    CHECK_STATUS(dfs_diffuser_run(d, IV(3)), DFS_ERR_CALLBACK, "run 3: the transform fails");
    CHECK_STR(dfs_last_error(), "transform refused", "its message");
    CHECK_OK(dfs_diffuser_run(d, IV(1)), "run 1: the child's cache is still 10");
    CHECK_OK(dfs_diffuser_run(d, IV(2)), "run 2");
    CHECK_LOG(&log, "t:1 a:10 t:3 t:1 t:2 a:20", "the child does not run after a failed transform");
    dfs_diffuser_release(d);
    CHECK_INT(a.destroyed, 1, "destroy once");

    /* A transform that stores a value and then fails: the value is released. */
    box_type_ctx tc;
    dfs_type *bt = box_type_fresh(&tc, NULL);
    recorder b = rec_make("b", &log, REC_BOX);
    int live = box_live;
    dfs_diffuser_into(bt, rec_effect, &b, rec_destroy, &leaf);
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_box, &s, NULL, leaf, &d), "map into boxes");
    dfs_diffuser_release(leaf);
    dfs_type_release(bt);
    dfs_diffuser_run(d, IV(1));
    CHECK_STATUS(dfs_diffuser_run(d, IV(3)), DFS_ERR_CALLBACK, "run 3: fails after producing a box");
    CHECK_ERROR_HAS("transform", "message names the transform (\"%s\")", dfs_last_error());
    dfs_diffuser_run(d, IV(4));
    CHECK_LOG(&log, "b:1 b:4", "the failed value never reached the child");
    CHECK_INT(box_live - live, 1, "only the cached box is alive: the failed one was released");
    dfs_diffuser_release(d);
    CHECK_INT(box_live, live, "no box outstanding");
    CHECK_INT(b.destroyed + tc.destroyed, 2, "contexts destroyed once");
}

/* ------------------------------------------------------------------------------------ */

typedef struct dc_ctx {
    test_log *log;
    long fail_on;
} dc_ctx;

/* "increased", failing (-1) when the new value is fail_on. */
static int increased_or_fail(const void *old_value, const void *new_value, void *ctx) {
    dc_ctx *c = ctx;
    long a = (long)(intptr_t)old_value, b = (long)(intptr_t)new_value;
    log_add(c->log, "dc:%ld>%ld", a, b);
    if (b == c->fail_on) return -1;
    return b > a;
}

static void test_failing_did_change(void) {
    check_section("a failing did_change");
    test_log log;
    log_clear(&log);
    recorder a = rec_make("a", &log, REC_INT);
    dc_ctx c = {&log, 99};
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into_when_effect(dfs_type_pointer(), increased_or_fail, &c, NULL, rec_effect, &a, rec_destroy, &d),
             "into_when_effect");
    CHECK_OK(dfs_diffuser_run(d, IV(5)), "run 5");
    CHECK_STATUS(dfs_diffuser_run(d, IV(99)), DFS_ERR_CALLBACK, "run 99: did_change returns -1");
    CHECK_ERROR_HAS("did_change", "message names did_change (\"%s\")", dfs_last_error());
    CHECK_OK(dfs_diffuser_run(d, IV(3)), "run 3: compared with 5, the cache before the failure");
    CHECK_OK(dfs_diffuser_run(d, IV(4)), "run 4");
    CHECK_LOG(&log, "a:5 dc:5>99 dc:5>3 dc:3>4 a:4", "the failed run did not update the cache");
    dfs_diffuser_release(d);
    CHECK_INT(a.destroyed, 1, "destroy once");

    /* into_when with a child diffuser. */
    recorder k = rec_make("k", &log, REC_INT);
    dfs_diffuser *child = NULL;
    dfs_diffuser_into_always(dfs_type_pointer(), rec_effect, &k, rec_destroy, &child);
    c.fail_on = 7;
    CHECK_OK(dfs_diffuser_into_when(increased_or_fail, &c, NULL, child, &d), "into_when(child)");
    dfs_diffuser_release(child);
    dfs_diffuser_run(d, IV(1));
    CHECK_STATUS(dfs_diffuser_run(d, IV(7)), DFS_ERR_CALLBACK, "run 7 fails");
    dfs_diffuser_run(d, IV(2));
    CHECK_LOG(&log, "k:1 dc:1>7 dc:1>2 k:2", "into_when(child) keeps its cache on failure");
    dfs_diffuser_release(d);
    CHECK_INT(k.destroyed, 1, "destroy once");
}

/* ------------------------------------------------------------------------------------ */

/* Always the box passed as ctx, lent. */
static int select_fixed(const void *value, const void **out, void *ctx) {
    (void)value;
    *out = ctx;
    return 0;
}

static void test_failing_equality(void) {
    check_section("a failing equality (equal returns -1)");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    memset(&tc, 0, sizeof tc);
    tc.log = &log;
    tc.fail_enabled = 1;
    tc.fail_on = 13;
    dfs_type *fragile = box_type_new("fragile", &tc);
    recorder a = rec_make("a", &log, REC_BOX);
    dfs_diffuser *d = NULL;
    int live = box_live;
    CHECK_OK(dfs_diffuser_into(fragile, rec_effect, &a, rec_destroy, &d), "into(fragile)");
    box *one = box_new(1), *bad = box_new(13), *two = box_new(2);
    CHECK_OK(dfs_diffuser_run(d, one), "run 1");
    CHECK_STATUS(dfs_diffuser_run(d, bad), DFS_ERR_CALLBACK, "run 13: equality fails");
    CHECK_ERROR_HAS("fragile", "message names the type (\"%s\")", dfs_last_error());
    CHECK_ERROR_HAS("equal", "message mentions equality");
    CHECK_OK(dfs_diffuser_run(d, two), "run 2: compared with 1, the old cache");
    CHECK_LOG(&log, "a:1 eq:1,13 eq:1,2 a:2", "the effect never saw 13; the cache stayed 1");

    tc.fail_message = "cannot compare 13";
    CHECK_STATUS(dfs_diffuser_run(d, bad), DFS_ERR_CALLBACK, "run 13 again");
    CHECK_STR(dfs_last_error(), "cannot compare 13", "equality's dfs_set_error message");
    log_clear(&log);

    /* into_all over the fragile type: the gate itself fails. */
    dfs_diffuser *kid = NULL, *all = NULL;
    recorder k = rec_make("k", &log, REC_BOX);
    dfs_diffuser_into_always(fragile, rec_effect, &k, rec_destroy, &kid);
    CHECK_OK(dfs_diffuser_into_all(fragile, &kid, 1, &all), "into_all(fragile)");
    dfs_diffuser_release(kid);
    dfs_diffuser_run(all, two);
    CHECK_STATUS(dfs_diffuser_run(all, bad), DFS_ERR_CALLBACK, "into_all: equality fails");
    dfs_diffuser_run(all, one);
    CHECK_LOG(&log, "k:2 eq:2,13 eq:2,1 k:1", "into_all's children did not run on the failed value");

    /* A gate below the root given the very pointer it holds does not ask the equality:
     * a value equals itself. Here the equality would fail on 13. */
    dfs_diffuser *held = NULL, *same = NULL;
    recorder h = rec_make("h", &log, REC_BOX);
    dfs_diffuser_into(fragile, rec_effect, &h, rec_destroy, &held);
    CHECK_OK(dfs_diffuser_map_borrowed(dfs_type_pointer(), select_fixed, bad, NULL, held, &same),
             "map_borrowed(always box 13, into(fragile))");
    dfs_diffuser_release(held);
    CHECK_OK(dfs_diffuser_run(same, IV(1)), "run 1: the gate caches box 13");
    int calls = tc.equal_calls;
    CHECK_OK(dfs_diffuser_run(same, IV(2)), "run 2: the same box 13 again, not compared");
    CHECK_INT(tc.equal_calls - calls, 0, "the equality was not called");
    CHECK_LOG(&log, "h:13", "the effect ran once");
    dfs_diffuser_release(same);

    box_unref(one);
    box_unref(bad);
    box_unref(two);
    dfs_diffuser_release(all);
    dfs_diffuser_release(d);
    dfs_type_release(fragile);
    CHECK_INT(box_live, live, "no box outstanding");
    CHECK_INT(a.destroyed + k.destroyed + tc.destroyed, 3, "contexts destroyed once");
}

/* ------------------------------------------------------------------------------------ */

/* An effect deep in a map/into_all tree fails: the whole path keeps its caches. */
static int select_first(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = IV(((const long *)value)[0]);
    return 0;
}

static int select_second(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = IV(((const long *)value)[1]);
    return 0;
}

static void test_failing_deep(void) {
    check_section("a failure deep in a tree");
    test_log log;
    log_clear(&log);
    recorder first = rec_make("first", &log, REC_INT), second = rec_make("second", &log, REC_INT);
    dfs_diffuser *l1 = NULL, *l2 = NULL, *parts[2] = {NULL, NULL}, *root = NULL;
    dfs_diffuser_into(dfs_type_pointer(), rec_effect, &first, rec_destroy, &l1);
    dfs_diffuser_into(dfs_type_pointer(), rec_effect, &second, rec_destroy, &l2);
    dfs_diffuser_map(dfs_type_pointer(), select_first, NULL, NULL, l1, &parts[0]);
    dfs_diffuser_map(dfs_type_pointer(), select_second, NULL, NULL, l2, &parts[1]);
    /* The model is a long[2] compared by identity: had the root cached m2 on failure, the retry would skip. */
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), parts, 2, &root), "root");
    dfs_diffuser_release(l1);
    dfs_diffuser_release(l2);
    dfs_diffuser_release(parts[0]);
    dfs_diffuser_release(parts[1]);

    long m1[2] = {1, 1}, m2[2] = {2, 2};
    first.fail_times = 1;
    first.fail_on_int = 2;
    CHECK_OK(dfs_diffuser_run(root, m1), "run {1,1}");
    CHECK_STATUS(dfs_diffuser_run(root, m2), DFS_ERR_CALLBACK, "run {2,2}: the first leaf fails");
    CHECK_OK(dfs_diffuser_run(root, m2), "run {2,2} again: the root gate kept {1,1}");
    CHECK_LOG(&log, "first:1 second:1 first:2! first:2 second:2", "second did not run on the failed pass; both ran on the retry");
    dfs_diffuser_release(root);
    CHECK_INT(first.destroyed + second.destroyed, 2, "destroyed once");
}

/* ------------------------------------------------------------------------------------
 * Fan-outs of maps: user calls in tree order, in every form of map
 *
 * A fan-out runs child 1 entirely (its transform, then the comparison and the effects
 * below it) before child 2's transform is called, whether the children are maps with
 * owned parts, maps with borrowed parts or field maps. Every run gets fresh boxes, so no
 * gate ever sees the pointer it holds and every comparison is a call of the equality.
 * ------------------------------------------------------------------------------------ */

/* A model of three boxed members. */
typedef struct trio {
    box *a, *b, *c;
} trio;

static trio *trio_new(long a, long b, long c) {
    trio *t = malloc(sizeof *t);
    t->a = box_new(a);
    t->b = box_new(b);
    t->c = box_new(c);
    return t;
}

static void trio_free(trio *t) {
    box_unref(t->a);
    box_unref(t->b);
    box_unref(t->c);
    free(t);
}

/* The transform of a member: logs its name, fails (after logging) while fail_times > 0. */
typedef struct member_ctx {
    test_log *log;
    const char *name;
    int member;        /* 0: a, 1: b, 2: c */
    int fail_times;
} member_ctx;

static box *trio_member(const trio *t, int member) { return member == 0 ? t->a : member == 1 ? t->b : t->c; }

/* For dfs_diffuser_map: a new reference to the member. */
static int take_member(const void *value, const void **out, void *ctx) {
    member_ctx *m = ctx;
    log_add(m->log, "%s", m->name);
    if (m->fail_times > 0) {
        m->fail_times--;
        dfs_set_error(m->name);
        return 6;
    }
    box *b = trio_member(value, m->member);
    b->refs++;
    *out = b;
    return 0;
}

/* For dfs_diffuser_map_borrowed: the member itself, lent for the run. */
static int lend_member(const void *value, const void **out, void *ctx) {
    member_ctx *m = ctx;
    log_add(m->log, "%s", m->name);
    if (m->fail_times > 0) {
        m->fail_times--;
        dfs_set_error(m->name);
        return 6;
    }
    *out = trio_member(value, m->member);
    return 0;
}

/* [map(ta: a) -> into(A), map_borrowed(tb: b) -> into(B), map_field(c) -> into(C),
 *  map(td: a) -> into_all([into_always(D)])] under into_all or into_always_all. */
static dfs_diffuser *trio_tree(dfs_type *bt, int always, member_ctx m[3], recorder r[4]) {
    dfs_diffuser *leaf = NULL, *kids[4] = {NULL, NULL, NULL, NULL}, *root = NULL;
    dfs_diffuser_into(bt, rec_effect, &r[0], rec_destroy, &leaf);
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), take_member, &m[0], NULL, leaf, &kids[0]), "map (owned parts)");
    dfs_diffuser_release(leaf);
    dfs_diffuser_into(bt, rec_effect, &r[1], rec_destroy, &leaf);
    CHECK_OK(dfs_diffuser_map_borrowed(dfs_type_pointer(), lend_member, &m[1], NULL, leaf, &kids[1]), "map_borrowed");
    dfs_diffuser_release(leaf);
    dfs_diffuser_into(bt, rec_effect, &r[2], rec_destroy, &leaf);
    CHECK_OK(dfs_diffuser_map_field(dfs_type_pointer(), offsetof(trio, c), sizeof(box *), leaf, &kids[2]), "map_field");
    dfs_diffuser_release(leaf);
    dfs_diffuser *effect = NULL, *gate = NULL;
    dfs_diffuser_into_always(bt, rec_effect, &r[3], rec_destroy, &effect);
    CHECK_OK(dfs_diffuser_into_all(bt, &effect, 1, &gate), "into_all below a map");
    dfs_diffuser_release(effect);
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), take_member, &m[2], NULL, gate, &kids[3]), "map into into_all");
    dfs_diffuser_release(gate);
    if (always)
        CHECK_OK(dfs_diffuser_into_always_all(dfs_type_pointer(), kids, 4, &root), "into_always_all over the maps");
    else
        CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), kids, 4, &root), "into_all over the maps");
    for (int i = 0; i < 4; i++) dfs_diffuser_release(kids[i]);
    return root;
}

static void test_fan_out_order(void) {
    check_section("a fan-out of maps calls each child's transform, comparison and effects in tree order");
    test_log log;
    log_clear(&log);
    for (int always = 0; always < 2; always++) {
        box_type_ctx tc;
        dfs_type *bt = box_type_fresh(&tc, &log);
        int live = box_live;
        member_ctx m[3] = {{&log, "ta", 0, 0}, {&log, "tb", 1, 0}, {&log, "td", 0, 0}};
        recorder r[4] = {rec_make("A", &log, REC_BOX), rec_make("B", &log, REC_BOX), rec_make("C", &log, REC_BOX),
                         rec_make("D", &log, REC_BOX)};
        dfs_diffuser *root = trio_tree(bt, always, m, r);
        dfs_type_release(bt);
        const char *root_name = always ? "into_always_all" : "into_all";

        trio *t1 = trio_new(1, 1, 1), *t2 = trio_new(2, 1, 1), *t3 = trio_new(2, 1, 1), *t4 = trio_new(3, 4, 5);
        CHECK_OK(dfs_diffuser_run(root, t1), "%s: run (1,1,1)", root_name);
        CHECK_LOG(&log, "ta A:1 tb B:1 C:1 td D:1", "%s: first run, child after child", root_name);
        CHECK_OK(dfs_diffuser_run(root, t2), "%s: run (2,1,1)", root_name);
        CHECK_LOG(&log, "ta eq:1,2 A:2 tb eq:1,1 eq:1,1 td eq:1,2 D:2",
                  "%s: each transform, then its child's comparison and effect, before the next transform", root_name);
        CHECK(t1->b->refs == 1 && t2->b->refs == 2, "%s: B's gate let go of the old b and holds the equal new one (refs %d, %d)",
              root_name, t1->b->refs, t2->b->refs);
        CHECK(t1->c->refs == 1 && t2->c->refs == 2, "%s: so did C's gate, below the field map (refs %d, %d)", root_name,
              t1->c->refs, t2->c->refs);
        CHECK_OK(dfs_diffuser_run(root, t3), "%s: run an equal model of fresh boxes", root_name);
        CHECK_LOG(&log, "ta eq:2,2 tb eq:1,1 eq:1,1 td eq:2,2", "%s: every gate compared, nothing rendered", root_name);
        CHECK(t2->a->refs == 1 && t3->a->refs == 3, "%s: both gates of member a hold the new box (refs %d, %d)", root_name,
              t2->a->refs, t3->a->refs);
        CHECK_OK(dfs_diffuser_run(root, t4), "%s: run (3,4,5)", root_name);
        CHECK_LOG(&log, "ta eq:2,3 A:3 tb eq:1,4 B:4 eq:1,5 C:5 td eq:2,3 D:3", "%s: every child renders, in order", root_name);

        trio_free(t1);
        trio_free(t2);
        trio_free(t3);
        CHECK_INT(box_live - live, 3, "%s: only the boxes of the last model are alive", root_name);
        trio_free(t4);
        dfs_diffuser_release(root);
        CHECK_INT(box_live, live, "%s: every box released", root_name);
        CHECK_INT(r[0].destroyed + r[1].destroyed + r[2].destroyed + r[3].destroyed + tc.destroyed, 5,
                  "%s: contexts destroyed once", root_name);
    }
}

/* Removes the transforms' entries ("ta", "tb", "tc") from an expected log: what a fan-out
 * of field maps, which call no transform, logs. */
static void without_transforms(const char *log, char *out, size_t size) {
    out[0] = '\0';
    char copy[512];
    snprintf(copy, sizeof copy, "%s", log);
    for (char *save = NULL, *token = strtok_r(copy, " ", &save); token; token = strtok_r(NULL, " ", &save)) {
        if (strlen(token) == 2 && token[0] == 't') continue;
        size_t used = strlen(out);
        snprintf(out + used, size - used, "%s%s", used ? " " : "", token);
    }
}

static void test_uniform_fan_outs(void) {
    check_section("fan-outs whose maps are all of one form keep the tree order");
    static const char *const forms[] = {"map", "map_borrowed", "map_field"};
    test_log log;
    log_clear(&log);
    for (int form = 0; form < 3; form++) {
        for (int always = 0; always < 2; always++) {
            char what[64], expected[512];
            snprintf(what, sizeof what, "%s under %s", forms[form], always ? "into_always_all" : "into_all");
            box_type_ctx tc;
            dfs_type *bt = box_type_fresh(&tc, &log);
            int live = box_live;
            member_ctx m[3] = {{&log, "ta", 0, 0}, {&log, "tb", 1, 0}, {&log, "tc", 2, 0}};
            recorder r[3] = {rec_make("A", &log, REC_BOX), rec_make("B", &log, REC_BOX), rec_make("C", &log, REC_BOX)};
            r[1].fail_message = "B failed";
            static const size_t offsets[3] = {offsetof(trio, a), offsetof(trio, b), offsetof(trio, c)};
            dfs_diffuser *kids[3] = {NULL, NULL, NULL}, *root = NULL;
            for (int i = 0; i < 3; i++) {
                dfs_diffuser *leaf = NULL;
                dfs_diffuser_into(bt, rec_effect, &r[i], rec_destroy, &leaf);
                dfs_status st = form == 0   ? dfs_diffuser_map(dfs_type_pointer(), take_member, &m[i], NULL, leaf, &kids[i])
                                : form == 1 ? dfs_diffuser_map_borrowed(dfs_type_pointer(), lend_member, &m[i], NULL, leaf,
                                                                        &kids[i])
                                            : dfs_diffuser_map_field(dfs_type_pointer(), offsets[i], sizeof(box *), leaf,
                                                                     &kids[i]);
                CHECK_OK(st, "%s: child %d", what, i);
                dfs_diffuser_release(leaf);
            }
            if (always) dfs_diffuser_into_always_all(dfs_type_pointer(), kids, 3, &root);
            else dfs_diffuser_into_all(dfs_type_pointer(), kids, 3, &root);
            for (int i = 0; i < 3; i++) dfs_diffuser_release(kids[i]);
            dfs_type_release(bt);

            static const long models[][3] = {{1, 1, 1}, {2, 1, 5}, {2, 1, 5}, {3, 3, 3}, {3, 3, 3}};
            static const char *const logs[] = {
                "ta A:1 tb B:1 tc C:1",
                "ta eq:1,2 A:2 tb eq:1,1 tc eq:1,5 C:5",
                "ta eq:2,2 tb eq:1,1 tc eq:5,5",
                "ta eq:2,3 A:3 tb eq:1,3 B:3!",
                "ta eq:3,3 tb eq:1,3 B:3 tc eq:5,3 C:3",
            };
            trio *t[5];
            for (int run = 0; run < 5; run++) {
                t[run] = trio_new(models[run][0], models[run][1], models[run][2]);
                if (run == 3) {
                    r[1].fail_times = 1;
                    r[1].fail_any = 1;
                }
                dfs_status status = dfs_diffuser_run(root, t[run]);
                if (run == 3) {
                    CHECK_STATUS(status, DFS_ERR_CALLBACK, "%s: run %d: B fails", what, run);
                    CHECK_STR(dfs_last_error(), "B failed", "%s: B's error", what);
                } else {
                    CHECK_OK(status, "%s: run %d", what, run);
                }
                if (form == 2) without_transforms(logs[run], expected, sizeof expected);
                else snprintf(expected, sizeof expected, "%s", logs[run]);
                CHECK_LOG(&log, expected, "%s: run %d: child after child, each transform just before its gate", what,
                          run);
                if (run == 2) {
                    CHECK(t[1]->b->refs == 1 && t[2]->b->refs == 2 && t[1]->c->refs == 1 && t[2]->c->refs == 2,
                          "%s: the gates hold the equal boxes of the last run", what);
                }
            }
            for (int run = 0; run < 5; run++) trio_free(t[run]);
            dfs_diffuser_release(root);
            CHECK_INT(box_live, live, "%s: every box released", what);
            CHECK_INT(r[0].destroyed + r[1].destroyed + r[2].destroyed + tc.destroyed, 4, "%s: contexts destroyed once",
                      what);
        }
    }
}

static void test_first_failure_wins(void) {
    check_section("the first failure in tree order is the one reported; nothing after it runs");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    memset(&tc, 0, sizeof tc);
    tc.log = &log;
    tc.fail_enabled = 1;
    tc.fail_on = 13;
    tc.fail_message = "cannot compare 13";
    dfs_type *fragile = box_type_new("fragile", &tc);
    int live = box_live;
    member_ctx m[3] = {{&log, "ta", 0, 0}, {&log, "tb", 1, 0}, {&log, "td", 0, 0}};
    recorder r[4] = {rec_make("A", &log, REC_BOX), rec_make("B", &log, REC_BOX), rec_make("C", &log, REC_BOX),
                     rec_make("D", &log, REC_BOX)};
    r[0].fail_message = "A failed";
    r[2].fail_message = "C failed";
    r[3].fail_message = "D failed";
    dfs_diffuser *root = trio_tree(fragile, 1, m, r);
    dfs_type_release(fragile);
    trio *t[8];
    int n = 0;

    t[n] = trio_new(1, 1, 1);
    CHECK_OK(dfs_diffuser_run(root, t[n++]), "run (1,1,1)");
    CHECK_LOG(&log, "ta A:1 tb B:1 C:1 td D:1", "every child ran");

    /* A's effect fails; tb would fail too. */
    r[0].fail_times = 1;
    r[0].fail_any = 1;
    m[1].fail_times = 1;
    t[n] = trio_new(2, 2, 2);
    CHECK_STATUS(dfs_diffuser_run(root, t[n++]), DFS_ERR_CALLBACK, "run (2,2,2): A fails, tb would");
    CHECK_STR(dfs_last_error(), "A failed", "A's error is reported");
    CHECK_LOG(&log, "ta eq:1,2 A:2!", "tb was never called");
    m[1].fail_times = 0;

    /* ta fails; C's effect and D's would too. */
    m[0].fail_times = 1;
    r[2].fail_times = 1;
    r[2].fail_any = 1;
    r[3].fail_times = 1;
    r[3].fail_any = 1;
    t[n] = trio_new(3, 3, 3);
    CHECK_STATUS(dfs_diffuser_run(root, t[n++]), DFS_ERR_CALLBACK, "run (3,3,3): ta fails, C and D would");
    CHECK_STR(dfs_last_error(), "ta", "the transform's error is reported");
    CHECK_LOG(&log, "ta", "nothing after the transform was called");
    r[2].fail_times = 0;

    /* The equality fails on 13 below ta; D would fail. */
    t[n] = trio_new(13, 3, 3);
    CHECK_STATUS(dfs_diffuser_run(root, t[n++]), DFS_ERR_CALLBACK, "run (13,3,3): A's comparison fails");
    CHECK_STR(dfs_last_error(), "cannot compare 13", "the equality's error is reported");
    CHECK_LOG(&log, "ta eq:1,13", "A's gate still holds 1 (both failed runs left it); nothing after the comparison");

    /* tb fails after A rendered; D would fail. */
    m[1].fail_times = 1;
    t[n] = trio_new(2, 3, 4);
    CHECK_STATUS(dfs_diffuser_run(root, t[n++]), DFS_ERR_CALLBACK, "run (2,3,4): tb fails");
    CHECK_STR(dfs_last_error(), "tb", "tb's error is reported");
    CHECK_LOG(&log, "ta eq:1,2 A:2 tb", "A rendered before tb was called; C and D were not reached");

    /* D fails, last in the tree. */
    t[n] = trio_new(2, 3, 4);
    CHECK_STATUS(dfs_diffuser_run(root, t[n++]), DFS_ERR_CALLBACK, "run (2,3,4) again: D fails");
    CHECK_STR(dfs_last_error(), "D failed", "D's error is reported");
    CHECK_LOG(&log, "ta eq:2,2 tb eq:1,3 B:3 eq:1,4 C:4 td eq:1,2 D:2!",
              "A kept 2, B and C were retried, the gate above D kept 1");
    t[n] = trio_new(2, 3, 4);
    CHECK_OK(dfs_diffuser_run(root, t[n++]), "run (2,3,4) once more");
    CHECK_LOG(&log, "ta eq:2,2 tb eq:3,3 eq:4,4 td eq:1,2 D:2", "only D's gate, which kept 1, lets it through");

    for (int i = 0; i < n; i++) trio_free(t[i]);
    dfs_diffuser_release(root);
    CHECK_INT(box_live, live, "every box released");
    CHECK_INT(tc.destroyed, 1, "the type destroyed once");
}

/* A digit of a boxed number, as a new box: value / divisor % 10. Logs its name; fails
 * (after logging) while fail_times > 0. */
typedef struct digit_ctx {
    test_log *log;
    const char *name;
    long divisor;
    int fail_times;
} digit_ctx;

static int take_digit(const void *value, const void **out, void *ctx) {
    digit_ctx *d = ctx;
    log_add(d->log, "%s", d->name);
    if (d->fail_times > 0) {
        d->fail_times--;
        dfs_set_error(d->name);
        return 2;
    }
    *out = box_new(((const box *)value)->value / d->divisor % 10);
    return 0;
}

/* "changed" over boxes, logged as "p:old,new". */
static int box_changed(const void *old_value, const void *new_value, void *ctx) {
    long a = ((const box *)old_value)->value, b = ((const box *)new_value)->value;
    log_add(ctx, "p:%ld,%ld", a, b);
    return a != b;
}

static void test_transform_failure_keeps_caches(void) {
    check_section("a failing transform leaves the gates above it as they were: the next run retries");
    test_log log;
    log_clear(&log);
    for (int variant = 0; variant < 2; variant++) {
        box_type_ctx tc;
        dfs_type *bt = box_type_fresh(&tc, &log);
        int live = box_live;
        digit_ctx d[2] = {{&log, "tx", 10, 0}, {&log, "ty", 1, 0}};
        recorder r[2] = {rec_make("X", &log, REC_BOX), rec_make("Y", &log, REC_BOX)};
        dfs_diffuser *kids[2] = {NULL, NULL}, *root = NULL;
        for (int i = 0; i < 2; i++) {
            dfs_diffuser *leaf = NULL;
            dfs_diffuser_into(bt, rec_effect, &r[i], rec_destroy, &leaf);
            CHECK_OK(dfs_diffuser_map(bt, take_digit, &d[i], NULL, leaf, &kids[i]), "map");
            dfs_diffuser_release(leaf);
        }
        /* 0: into_all over the maps; 1: into_when("changed") over into_always_all. */
        const char *name = variant == 0 ? "into_all" : "into_when";
        if (variant == 0) {
            CHECK_OK(dfs_diffuser_into_all(bt, kids, 2, &root), "into_all");
        } else {
            dfs_diffuser *all = NULL;
            CHECK_OK(dfs_diffuser_into_always_all(bt, kids, 2, &all), "into_always_all");
            CHECK_OK(dfs_diffuser_into_when(box_changed, &log, NULL, all, &root), "into_when over it");
            dfs_diffuser_release(all);
        }
        for (int i = 0; i < 2; i++) dfs_diffuser_release(kids[i]);
        dfs_type_release(bt);
        const char *root_check = variant == 0 ? "eq:11,22" : "p:11,22";

        box *v[4] = {box_new(11), box_new(22), box_new(22), box_new(22)};
        char expected[128];
        CHECK_OK(dfs_diffuser_run(root, v[0]), "%s: run 11", name);
        CHECK_LOG(&log, "tx X:1 ty Y:1", "%s: first run", name);
        d[1].fail_times = 1;
        CHECK_STATUS(dfs_diffuser_run(root, v[1]), DFS_ERR_CALLBACK, "%s: run 22, ty fails", name);
        CHECK_STR(dfs_last_error(), "ty", "%s: ty's error", name);
        snprintf(expected, sizeof expected, "%s tx eq:1,2 X:2 ty", root_check);
        CHECK_LOG(&log, expected, "%s: X's gate rendered 2 before ty failed", name);
        CHECK_OK(dfs_diffuser_run(root, v[2]), "%s: run an equal 22", name);
        snprintf(expected, sizeof expected, "%s tx eq:2,2 ty eq:1,2 Y:2", root_check);
        CHECK_LOG(&log, expected, "%s: the root still held 11, X's gate 2, Y's gate 1: Y is retried", name);
        CHECK_OK(dfs_diffuser_run(root, v[3]), "%s: run an equal 22 again", name);
        CHECK_LOG(&log, variant == 0 ? "eq:22,22" : "p:22,22", "%s: now the root holds 22", name);

        for (int i = 0; i < 4; i++) box_unref(v[i]);
        dfs_diffuser_release(root);
        CHECK_INT(box_live, live, "%s: every box released", name);
        CHECK_INT(r[0].destroyed + r[1].destroyed + tc.destroyed, 3, "%s: contexts destroyed once", name);
    }
}

/* ------------------------------------------------------------------------------------
 * dfs_diffuser_map_field: members read in place, no callback
 * ------------------------------------------------------------------------------------ */

typedef struct record {
    const char *name;
    long big;
    int count;
    uint16_t code;
    uint8_t flag;
} record;

enum { RECORD_FIELDS = 5 };

static int select_big(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = IV(((const record *)value)->big);
    return 0;
}

/* A gate over every member of a record. With big_by_callback, `big` is selected by a
 * transform instead of a field map: a fan-out of both forms. */
static dfs_diffuser *record_tree(recorder *r, int always, int big_by_callback) {
    static const size_t offsets[RECORD_FIELDS] = {offsetof(record, name), offsetof(record, big),
                                                  offsetof(record, count), offsetof(record, code),
                                                  offsetof(record, flag)};
    static const size_t sizes[RECORD_FIELDS] = {sizeof(const char *), sizeof(long), sizeof(int), sizeof(uint16_t),
                                                sizeof(uint8_t)};
    dfs_diffuser *maps[RECORD_FIELDS], *root = NULL;
    for (int i = 0; i < RECORD_FIELDS; i++) {
        dfs_diffuser *leaf = NULL;
        CHECK_OK(dfs_diffuser_into(i == 0 ? dfs_type_cstring() : dfs_type_pointer(), rec_effect, &r[i], rec_destroy,
                                   &leaf), "leaf");
        if (i == 1 && big_by_callback)
            CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_big, NULL, NULL, leaf, &maps[i]), "map big");
        else
            CHECK_OK(dfs_diffuser_map_field(dfs_type_pointer(), offsets[i], sizes[i], leaf, &maps[i]), "map_field");
        dfs_diffuser_release(leaf);
    }
    if (always)
        CHECK_OK(dfs_diffuser_into_always_all(dfs_type_pointer(), maps, RECORD_FIELDS, &root), "into_always_all");
    else
        CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), maps, RECORD_FIELDS, &root), "into_all");
    for (int i = 0; i < RECORD_FIELDS; i++) dfs_diffuser_release(maps[i]);
    return root;
}

/* Runs the records a record tree sees in test_field_maps; returns the log. */
static void run_records(dfs_diffuser *root, test_log *log, char *trace, size_t size) {
    static char ann[] = "ann";
    char *ann_again = strdup("ann");
    record r1 = {ann, 5, 1, 7, 1};
    record r2 = r1;
    r2.name = ann_again; /* equal, another pointer: compared by the cstring type */
    r2.count = -1;
    record r3 = r2;
    r3.code = 65535;
    r3.flag = 0;
    record r4 = r3;
    r4.big = -2;
    const record *runs[] = {&r1, &r1, &r2, &r3, NULL, &r3, &r1, &r4};
    trace[0] = '\0';
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        dfs_status status = dfs_diffuser_run(root, runs[i]);
        if (status != DFS_OK) log_add(log, "%s[%s]", dfs_status_name(status), dfs_last_error());
        size_t used = strlen(trace);
        snprintf(trace + used, size - used, "%s%s|", i ? " " : "", log->text);
        log_clear(log);
    }
    free(ann_again);
}

static int transforms_destroyed;

static void count_transform_destroy(void *ctx) {
    (void)ctx;
    transforms_destroyed++;
}

/* A map kept by the caller and also composed into a fan-out is one node: run through
 * either, it feeds the same gate, and its transform's context is destroyed once, with the
 * last of them. A gate below the fan-out that is run by its own handle in between shows
 * its new cache to the fan-out's next run. */
static void test_shared_map(void) {
    check_section("a map shared by a fan-out and its own handle");
    test_log log;
    log_clear(&log);
    transforms_destroyed = 0;
    recorder r[2] = {rec_make("a", &log, REC_INT), rec_make("b", &log, REC_INT)};
    select_ctx s = {&log, -1, 0};
    dfs_diffuser *maps[2] = {NULL, NULL}, *leaves[2] = {NULL, NULL}, *root = NULL;
    for (int i = 0; i < 2; i++) {
        CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &r[i], rec_destroy, &leaves[i]), "leaf");
        CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_value, &s, count_transform_destroy, leaves[i], &maps[i]),
                 "map");
    }
    dfs_diffuser_release(leaves[0]);
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), maps, 2, &root), "into_all over two maps");
    dfs_diffuser_release(maps[1]);
    CHECK_INT(transforms_destroyed, 0, "the fan-out holds the released map's transform");

    CHECK_OK(dfs_diffuser_run(root, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(maps[0], IV(1)), "the kept map, 1");
    CHECK_OK(dfs_diffuser_run(maps[0], IV(2)), "the kept map, 2");
    CHECK_OK(dfs_diffuser_run(root, IV(2)), "run 2");
    CHECK_LOG(&log, "t:1 a:10 t:1 b:10 t:1 t:2 a:20 t:2 t:2 b:20",
              "the kept map and the fan-out feed one gate: 20 is rendered once");
    CHECK_OK(dfs_diffuser_run(leaves[1], IV(30)), "b's gate run by its own handle with 30");
    CHECK_OK(dfs_diffuser_run(root, IV(3)), "run 3");
    CHECK_LOG(&log, "b:30 t:3 a:30 t:3", "the fan-out's run finds 30 in b's gate: not rendered again");
    dfs_diffuser_release(leaves[1]);
    dfs_diffuser_release(maps[0]);
    CHECK_INT(transforms_destroyed, 0, "the fan-out holds the map, and so its transform's context");
    dfs_diffuser_release(root);
    CHECK_INT(transforms_destroyed, 2, "each transform's context destroyed once, with the fan-out");
    CHECK_INT(r[0].destroyed + r[1].destroyed, 2, "each effect destroyed once");
}

static void test_field_maps(void) {
    check_section("map_field: members read in place, alone or in a fan-out");
    test_log log;
    log_clear(&log);
    char traces[3][2048];
    for (int variant = 0; variant < 3; variant++) {
        recorder r[RECORD_FIELDS] = {rec_make("name", &log, REC_STR), rec_make("big", &log, REC_INT),
                                     rec_make("count", &log, REC_INT), rec_make("code", &log, REC_INT),
                                     rec_make("flag", &log, REC_INT)};
        /* 0: into_all over field maps; 1: the same with a callback map for `big`;
         * 2: into_always_all over field maps. */
        dfs_diffuser *root = record_tree(r, variant == 2, variant == 1);
        run_records(root, &log, traces[variant], sizeof traces[variant]);
        dfs_diffuser_release(root);
        for (int i = 0; i < RECORD_FIELDS; i++) CHECK_INT(r[i].destroyed, 1, "each effect destroyed once");
    }
    const char *expected =
        "name:ann big:5 count:1 code:7 flag:1| "
        "| "
        "count:4294967295| "
        "code:65535 flag:0| "
        "DFS_ERR_NULL[a field map (offset 0, size 8) was run on a NULL value]| "
        "| "
        "count:1 code:7 flag:1| "
        "big:-2 count:4294967295 code:65535 flag:0|";
    CHECK_STR(traces[0], expected, "each member in its own size, compared with its gate's cache");
    CHECK_STR(traces[1], expected, "a fan-out of field maps and a callback map, to the same effect");
    CHECK_STR(traces[2], expected, "into_always_all over field maps: the gates below decide alone");

    /* A field map on its own, and its argument errors. */
    recorder one = rec_make("count", &log, REC_INT);
    dfs_diffuser *leaf = NULL, *map = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &one, rec_destroy, &leaf), "leaf");
    CHECK_OK(dfs_diffuser_map_field(dfs_type_pointer(), offsetof(record, count), sizeof(int), leaf, &map), "alone");
    record rec = {"x", 0, 42, 0, 0};
    CHECK_OK(dfs_diffuser_run(map, &rec), "run");
    rec.count = -7;
    CHECK_OK(dfs_diffuser_run(map, &rec), "run, the same record edited");
    CHECK_STATUS(dfs_diffuser_run(map, NULL), DFS_ERR_NULL, "a NULL value");
    CHECK_ERROR_HAS("NULL value", "says so (\"%s\")", dfs_last_error());
    CHECK_OK(dfs_diffuser_run(map, &rec), "run after the failure: the gate kept -7");
    CHECK_LOG(&log, "count:42 count:4294967289", "ints are widened as unsigned");
    CHECK_INT((int)(uintptr_t)IV(4294967289u), -7, "and cast back as the header says");
    dfs_diffuser_release(map);
    CHECK_INT(one.destroyed, 0, "the leaf is still referenced");

    dfs_diffuser *out = (dfs_diffuser *)&rec;
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, 3, leaf, &out), DFS_ERR_ARGUMENT, "size 3");
    CHECK_ERROR_HAS("size 3", "names the size (\"%s\")", dfs_last_error());
    CHECK_INT(out == NULL, 1, "out is NULL on failure");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, 16, leaf, &out), DFS_ERR_ARGUMENT, "size 16");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, 0, leaf, &out), DFS_ERR_ARGUMENT, "size 0");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, 6, leaf, &out), DFS_ERR_ARGUMENT, "size 6");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, (size_t)-8, leaf, &out), DFS_ERR_ARGUMENT,
                 "a size past any object");
    char as_given[40];
    snprintf(as_given, sizeof as_given, "size %zu", (size_t)-8);
    CHECK_ERROR_HAS(as_given, "names the size as given (\"%s\")", dfs_last_error());
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, (size_t)PTRDIFF_MAX + 1, leaf, &out),
                 DFS_ERR_ARGUMENT, "a size above PTRDIFF_MAX");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), (size_t)-1, 8, leaf, &out), DFS_ERR_ARGUMENT,
                 "an offset past any object");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, 8, NULL, &out), DFS_ERR_NULL, "no child");
    CHECK_STATUS(dfs_diffuser_map_field(NULL, 0, 8, leaf, &out), DFS_ERR_NULL, "no type");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, 8, leaf, NULL), DFS_ERR_NULL, "no out");
    dfs_diffuser_release(leaf);
    CHECK_INT(one.destroyed, 1, "destroyed once, with its last reference");
}

/* ------------------------------------------------------------------------------------
 * Borrowed values: run values, and parts of dfs_diffuser_map_borrowed
 * ------------------------------------------------------------------------------------ */

/* Borrowed parts: the test owns the boxes; the transforms lend them. pool[v][i] is the
 * part i of integer v. */
typedef struct lend_ctx {
    test_log *log;
    box *pool[8][3];
    long fail_on;     /* part 1's transform fails on this value, after lending its part */
} lend_ctx;

typedef struct lend_part_ctx {
    lend_ctx *l;
    int index;
} lend_part_ctx;

static int lend_part(const void *value, const void **out, void *ctx) {
    lend_part_ctx *p = ctx;
    long v = (long)(intptr_t)value;
    *out = p->l->pool[v][p->index];
    if (p->index == 1 && v == p->l->fail_on) {
        dfs_set_error("lender refused");
        return 9;
    }
    return 0;
}

static int lend_first(const void *value, const void **out, void *ctx) {
    lend_ctx *l = ctx;
    long v = (long)(intptr_t)value;
    *out = l->pool[v][0];
    return v == l->fail_on ? 9 : 0;
}

/* An effect that, on box 1, runs its own diffuser on a box it frees right after: the
 * queued run must have retained it. */
typedef struct requeue_ctx {
    test_log *log;
    dfs_diffuser *self;
} requeue_ctx;

static int requeue_effect(const void *value, void *ctx) {
    requeue_ctx *q = ctx;
    const box *b = value;
    log_add(q->log, "q:%ld", b->value);
    if (b->value == 1) {
        box *later = box_new(5);
        dfs_status status = dfs_diffuser_run(q->self, later);
        log_add(q->log, "queued:%s", dfs_status_name(status));
        box_unref(later);
    }
    return 0;
}

static void test_borrowed(void) {
    check_section("borrowed parts and run values: retained when a gate keeps them");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    dfs_type *bt = box_type_fresh(&tc, NULL);
    int live = box_live;

    /* A run's value: a gate retains it when it keeps it, after every successful run,
     * equal to the one before or not, and releases the one it held. */
    recorder e = rec_make("e", &log, REC_BOX);
    dfs_diffuser *leaf = NULL;
    CHECK_OK(dfs_diffuser_into(bt, rec_effect, &e, rec_destroy, &leaf), "into(box)");
    box *one = box_new(1), *also_one = box_new(1), *two = box_new(2);
    int retains = box_retains, releases = box_releases;
    CHECK_OK(dfs_diffuser_run(leaf, one), "run 1");
    CHECK_INT(box_retains - retains, 1, "the gate retained the value it keeps");
    CHECK_OK(dfs_diffuser_run(leaf, also_one), "run an equal box");
    CHECK_INT(box_retains - retains, 2, "the equal box is kept: retained");
    CHECK_INT(box_releases - releases, 1, "and the one it replaced released");
    CHECK(one->refs == 1 && also_one->refs == 2, "the gate holds the new box (refs %d, %d)", one->refs, also_one->refs);
    CHECK_OK(dfs_diffuser_run(leaf, two), "run 2");
    CHECK_INT(box_retains - retains, 3, "a new value is retained once");
    CHECK_INT(box_releases - releases, 2, "the one it replaced released once");
    CHECK_LOG(&log, "e:1 e:2", "the effect saw 1 and 2");
    box_unref(one);
    box_unref(also_one);
    box_unref(two);
    dfs_diffuser_release(leaf);
    CHECK_INT(box_live, live, "every run value released");

    /* A run queued from inside an effect keeps its value past the caller's. */
    requeue_ctx q = {&log, NULL};
    CHECK_OK(dfs_diffuser_into(bt, requeue_effect, &q, NULL, &q.self), "into(requeue)");
    box *start = box_new(1);
    CHECK_OK(dfs_diffuser_run(q.self, start), "run 1: queues a run of 5, frees its box");
    CHECK_LOG(&log, "q:1 queued:DFS_OK q:5", "the queued run saw 5 after its caller freed it");
    box_unref(start);
    dfs_diffuser_release(q.self);
    CHECK_INT(box_live, live, "the queued value released");

    /* Borrowed parts in a fan-out of map_borrowed. */
    lend_ctx l;
    memset(&l, 0, sizeof l);
    l.log = &log;
    l.fail_on = 4;
    for (int v = 1; v < 8; v++)
        for (int i = 0; i < 3; i++) l.pool[v][i] = box_new(v == 3 ? 20 + i : v * 10 + i);
    recorder r[3] = {rec_make("a", &log, REC_BOX), rec_make("b", &log, REC_BOX), rec_make("c", &log, REC_BOX)};
    lend_part_ctx parts[3] = {{&l, 0}, {&l, 1}, {&l, 2}};
    dfs_diffuser *maps[3], *gate = NULL;
    for (int i = 0; i < 3; i++) {
        dfs_diffuser *kid = NULL;
        dfs_diffuser_into(bt, rec_effect, &r[i], rec_destroy, &kid);
        CHECK_OK(dfs_diffuser_map_borrowed(dfs_type_pointer(), lend_part, &parts[i], NULL, kid, &maps[i]),
                 "map_borrowed over a boxed leaf");
        dfs_diffuser_release(kid);
    }
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), maps, 3, &gate), "gated by into_all");
    for (int i = 0; i < 3; i++) dfs_diffuser_release(maps[i]);

    retains = box_retains;
    releases = box_releases;
    CHECK_OK(dfs_diffuser_run(gate, IV(1)), "run 1");
    CHECK_LOG(&log, "a:10 b:11 c:12", "every child");
    CHECK_INT(box_retains - retains, 3, "each leaf retained the part it keeps");
    CHECK_INT(box_releases - releases, 0, "no part released: they are lent");
    for (int i = 0; i < 3; i++) box_unref(l.pool[1][i]);
    CHECK_INT(box_live - live, 7 * 3 - 3 + 3, "the lender dropped pool 1; the caches keep its boxes");

    CHECK_OK(dfs_diffuser_run(gate, IV(2)), "run 2");
    CHECK_LOG(&log, "a:20 b:21 c:22", "new parts");
    CHECK_INT(box_releases - releases, 3, "the replaced caches (pool 1) released");
    CHECK_INT(box_live - live, 6 * 3, "pool 1 is gone");
    retains = box_retains;
    releases = box_releases;
    CHECK_OK(dfs_diffuser_run(gate, IV(3)), "run 3: other boxes, equal values");
    CHECK_LOG(&log, "", "compared, nothing ran");
    CHECK_INT(box_retains - retains, 3, "the equal parts are kept: retained");
    CHECK_INT(box_releases - releases, 3, "the parts they replaced released");
    CHECK(l.pool[2][1]->refs == 1 && l.pool[3][1]->refs == 2, "b's gate holds pool 3's box (refs %d, %d)",
          l.pool[2][1]->refs, l.pool[3][1]->refs);

    CHECK_STATUS(dfs_diffuser_run(gate, IV(4)), DFS_ERR_CALLBACK, "run 4: part 1's transform fails after lending");
    CHECK_STR(dfs_last_error(), "lender refused", "its message");
    CHECK_LOG(&log, "a:40", "the child of part 0 ran; nothing after the failure");
    CHECK_INT(box_live - live, 6 * 3, "the failing transform's part was not released by the core");
    CHECK_OK(dfs_diffuser_run(gate, IV(5)), "run 5");
    CHECK_LOG(&log, "a:50 b:51 c:52", "every child");

    /* A single borrowed transform. */
    recorder m = rec_make("m", &log, REC_BOX);
    dfs_diffuser *inner = NULL, *mapped = NULL;
    dfs_diffuser_into(bt, rec_effect, &m, rec_destroy, &inner);
    CHECK_OK(dfs_diffuser_map_borrowed(dfs_type_pointer(), lend_first, &l, NULL, inner, &mapped), "map_borrowed");
    dfs_diffuser_release(inner);
    CHECK_OK(dfs_diffuser_run(mapped, IV(5)), "run 5");
    CHECK_STATUS(dfs_diffuser_run(mapped, IV(4)), DFS_ERR_CALLBACK, "run 4: the transform fails after storing a part");
    CHECK_OK(dfs_diffuser_run(mapped, IV(6)), "run 6");
    CHECK_LOG(&log, "m:50 m:60", "the failed part never reached the child");
    CHECK_INT(box_live - live, 6 * 3, "nothing released or leaked by the failure");
    int destroyed = 0;
    CHECK_STATUS(dfs_diffuser_map_borrowed(dfs_type_pointer(), NULL, &destroyed, count_destroy, mapped, &inner),
                 DFS_ERR_NULL, "a NULL transform");
    CHECK_INT(destroyed, 1, "its context destroyed once");

    dfs_diffuser_release(mapped);
    dfs_diffuser_release(gate);
    for (int v = 2; v < 8; v++)
        for (int i = 0; i < 3; i++) box_unref(l.pool[v][i]);
    CHECK_INT(box_live, live, "no box outstanding");
    dfs_type_release(bt);
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_message_belongs_to_its_callback();
    test_failing_effect();
    test_failing_transform();
    test_failing_did_change();
    test_failing_equality();
    test_failing_deep();
    test_fan_out_order();
    test_uniform_fan_outs();
    test_first_failure_wins();
    test_transform_failure_keeps_caches();
    test_shared_map();
    test_field_maps();
    test_borrowed();
    CHECK_INT(box_live, 0, "no box outstanding at exit");
    return check_finish();
}
