/*
 * test_callbacks.c — a callback that fails aborts the run with DFS_ERR_CALLBACK:
 * effects, transforms, change predicates and equality. The message set with
 * dfs_set_error reaches dfs_last_error; the failing node keeps its old cache (the next
 * run with the same value retries it); nodes after it do not run. Also map_all, whose
 * one selection call may fail part-way.
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
 * A fan-out whose children are all maps into gates: the core runs the maps in its own
 * loop. Nothing may differ from running each map: transform calls, comparisons,
 * effects, order, the stop at a failure, and who releases which part.
 * ------------------------------------------------------------------------------------ */

typedef struct digit_ctx {
    test_log *log;
    long divisor;   /* the part is box(value / divisor % 10) */
    long fail_on;   /* fail (after making the part) when the value is this */
    box *kept[10];  /* one box per digit, handed out again with a new reference */
} digit_ctx;

/* Hands over the same box for the same digit, so a gate that holds it is skipped. */
static int select_digit(const void *value, const void **out, void *ctx) {
    digit_ctx *d = ctx;
    long v = (long)(intptr_t)value, digit = v / d->divisor % 10;
    log_add(d->log, "t%ld:%ld", d->divisor, v);
    if (d->kept[digit] == NULL) d->kept[digit] = box_new(digit);
    d->kept[digit]->refs++;
    *out = d->kept[digit];
    if (v == d->fail_on) {
        dfs_set_error("digit refused");
        return 5;
    }
    return 0;
}

/* Lends a fresh box each time, kept in `kept` until the test ends: equal, never identical. */
static int select_fresh_digit(const void *value, const void **out, void *ctx) {
    digit_ctx *d = ctx;
    long v = (long)(intptr_t)value, digit = v / d->divisor % 10;
    log_add(d->log, "t%ld:%ld", d->divisor, v);
    box *b = box_new(digit);
    if (d->kept[digit] != NULL) box_unref(d->kept[digit]);
    d->kept[digit] = b;
    *out = b;
    return 0;
}

static void test_fan_out_of_maps(void) {
    check_section("a fan-out of maps into gates, run in one loop");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    dfs_type *bt = box_type_fresh(&tc, &log);
    int live = box_live;
    recorder r[3] = {rec_make("ones", &log, REC_BOX), rec_make("tens", &log, REC_BOX), rec_make("hundreds", &log, REC_BOX)};
    digit_ctx d[3] = {{&log, 1, -1, {0}}, {&log, 10, 555, {0}}, {&log, 100, -1, {0}}};
    dfs_diffuser *maps[3] = {NULL, NULL, NULL}, *root = NULL;
    for (int i = 0; i < 3; i++) {
        dfs_diffuser *leaf = NULL;
        CHECK_OK(dfs_diffuser_into(bt, rec_effect, &r[i], rec_destroy, &leaf), "leaf");
        if (i == 2)
            CHECK_OK(dfs_diffuser_map_borrowed(dfs_type_pointer(), select_fresh_digit, &d[i], NULL, leaf, &maps[i]), "lending map");
        else
            CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_digit, &d[i], NULL, leaf, &maps[i]), "map");
        dfs_diffuser_release(leaf);
    }
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), maps, 3, &root), "into_all over three maps");
    for (int i = 0; i < 3; i++) dfs_diffuser_release(maps[i]);

    CHECK_OK(dfs_diffuser_run(root, IV(123)), "run 123");
    CHECK_LOG(&log, "t1:123 ones:3 t10:123 tens:2 t100:123 hundreds:1", "the first run renders every digit");
    CHECK_OK(dfs_diffuser_run(root, IV(223)), "run 223");
    CHECK_LOG(&log, "t1:223 t10:223 t100:223 eq:1,2 hundreds:2",
              "the boxes the gates hold are neither compared nor rendered; a fresh box is compared");
    CHECK_OK(dfs_diffuser_run(root, IV(243)), "run 243");
    CHECK_LOG(&log, "t1:243 t10:243 eq:2,4 tens:4 t100:243 eq:2,2", "another box for the tens is compared, then rendered");
    CHECK_STATUS(dfs_diffuser_run(root, IV(555)), DFS_ERR_CALLBACK, "run 555: the tens' transform fails");
    CHECK_ERROR_HAS("digit refused", "the transform's message (\"%s\")", dfs_last_error());
    CHECK_LOG(&log, "t1:555 eq:3,5 ones:5 t10:555", "the ones ran; the hundreds were not reached");
    CHECK_OK(dfs_diffuser_run(root, IV(545)), "run 545");
    CHECK_LOG(&log, "t1:545 t10:545 t100:545 eq:2,5 hundreds:5", "the tens' gate kept its 4; the ones kept the 5 of the failed run");

    dfs_diffuser_release(root);
    for (int i = 0; i < 3; i++) {
        CHECK_INT(r[i].destroyed, 1, "each effect destroyed once");
        for (int k = 0; k < 10; k++) if (d[i].kept[k]) box_unref(d[i].kept[k]);
    }
    CHECK_INT(box_live - live, 0, "every part released: the handed over ones by the core, once");
    dfs_type_release(bt);
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
 * transform instead of a field map: a mixed fan-out, whose children run one by one. */
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

/* The maps of a fan-out all of one form are not kept: the fan-out keeps their gates and
 * their transforms (the contexts, which are destroyed with it). A map the caller keeps
 * still feeds the same gate. */
static void test_fan_out_keeps_no_maps(void) {
    check_section("a fan-out of maps of one form keeps their transforms and gates, not the maps");
    test_log log;
    log_clear(&log);
    transforms_destroyed = 0;
    recorder r[2] = {rec_make("a", &log, REC_INT), rec_make("b", &log, REC_INT)};
    select_ctx s = {&log, -1, 0};
    dfs_diffuser *maps[2] = {NULL, NULL}, *root = NULL;
    for (int i = 0; i < 2; i++) {
        dfs_diffuser *leaf = NULL;
        CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &r[i], rec_destroy, &leaf), "leaf");
        CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), select_value, &s, count_transform_destroy, leaf, &maps[i]), "map");
        dfs_diffuser_release(leaf);
    }
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), maps, 2, &root), "into_all over two maps");
    dfs_diffuser_release(maps[1]);
    CHECK_INT(transforms_destroyed, 0, "the fan-out holds the released map's transform");

    CHECK_OK(dfs_diffuser_run(root, IV(1)), "run 1");
    CHECK_OK(dfs_diffuser_run(maps[0], IV(1)), "the kept map, 1");
    CHECK_OK(dfs_diffuser_run(maps[0], IV(2)), "the kept map, 2");
    CHECK_OK(dfs_diffuser_run(root, IV(2)), "run 2");
    CHECK_LOG(&log, "t:1 a:10 t:1 b:10 t:1 t:2 a:20 t:2 t:2 b:20",
              "the kept map and the fan-out feed one gate: 20 is rendered once");
    dfs_diffuser_release(maps[0]);
    CHECK_INT(transforms_destroyed, 0, "the fan-out's copies hold the contexts");
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
        /* 0: into_all over field maps (their own loop); 1: the same mixed with a callback
         * map (children one by one); 2: into_always_all over field maps. */
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
    CHECK_STR(traces[1], expected, "a mixed fan-out runs its children one by one, to the same effect");
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
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), (size_t)-1, 8, leaf, &out), DFS_ERR_ARGUMENT,
                 "an offset past any object");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, 8, NULL, &out), DFS_ERR_NULL, "no child");
    CHECK_STATUS(dfs_diffuser_map_field(NULL, 0, 8, leaf, &out), DFS_ERR_NULL, "no type");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, 8, leaf, NULL), DFS_ERR_NULL, "no out");
    dfs_diffuser_release(leaf);
    CHECK_INT(one.destroyed, 1, "destroyed once, with its last reference");
}

/* ------------------------------------------------------------------------------------
 * dfs_diffuser_map_all: one selection call for a fan-out of maps
 * ------------------------------------------------------------------------------------ */

typedef struct select_all_ctx {
    test_log *log;
    long fail_on;     /* fail when the value is this */
    size_t fail_at;   /* ... after storing this many parts */
    int destroyed;
} select_all_ctx;

/* Part i of integer v is box(v * 10 + i); logs each call as "s:v". */
static int select_boxes(const void *value, size_t count, const void **out, size_t *produced, void *ctx) {
    select_all_ctx *s = ctx;
    long v = (long)(intptr_t)value;
    log_add(s->log, "s:%ld", v);
    size_t n = v == s->fail_on ? s->fail_at : count;
    for (size_t i = 0; i < n; i++) out[i] = box_new(v * 10 + (long)i);
    if (v == s->fail_on) {
        *produced = n;
        dfs_set_error("selection refused");
        return 4;
    }
    return 0;
}

static void select_all_destroy(void *ctx) { ((select_all_ctx *)ctx)->destroyed++; }

static void test_map_all(void) {
    check_section("map_all: one selection for a fan-out of maps");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    dfs_type *bt = box_type_fresh(&tc, NULL);
    recorder r[3] = {rec_make("a", &log, REC_BOX), rec_make("b", &log, REC_BOX), rec_make("c", &log, REC_BOX)};
    dfs_diffuser *kids[3], *fan = NULL, *gate = NULL;
    for (int i = 0; i < 3; i++) dfs_diffuser_into(bt, rec_effect, &r[i], rec_destroy, &kids[i]);
    select_all_ctx s = {&log, 5, 1, 0};
    int live = box_live;
    CHECK_OK(dfs_diffuser_map_all(dfs_type_pointer(), select_boxes, &s, select_all_destroy, kids, 3, &fan),
             "map_all over three boxed leaves");
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), &fan, 1, &gate), "gated by into_all");
    for (int i = 0; i < 3; i++) dfs_diffuser_release(kids[i]);
    dfs_diffuser_release(fan);

    CHECK_OK(dfs_diffuser_run(gate, IV(1)), "run 1");
    CHECK_LOG(&log, "s:1 a:10 b:11 c:12", "one selection, then every child in order");
    CHECK_OK(dfs_diffuser_run(gate, IV(1)), "run 1 again");
    CHECK_LOG(&log, "", "the gate skips an equal value: no selection");
    CHECK_OK(dfs_diffuser_run(gate, IV(2)), "run 2");
    CHECK_LOG(&log, "s:2 a:20 b:21 c:22", "a new value: one selection");
    CHECK_INT(box_live - live, 3, "the three cached parts are alive, the others were released");

    CHECK_STATUS(dfs_diffuser_run(gate, IV(5)), DFS_ERR_CALLBACK, "run 5: the selection fails after one part");
    CHECK_STR(dfs_last_error(), "selection refused", "its message");
    CHECK_LOG(&log, "s:5 a:50", "the child of the part made ran, the others did not");
    CHECK_OK(dfs_diffuser_run(gate, IV(2)), "run 2: the gate kept 2, nothing runs");
    CHECK_LOG(&log, "", "the failed run did not replace the gate's cache");
    CHECK_OK(dfs_diffuser_run(gate, IV(3)), "run 3");
    CHECK_LOG(&log, "s:3 a:30 b:31 c:32", "all three again");
    CHECK_INT(box_live - live, 3, "no part leaked by the failed selection");

    dfs_diffuser_release(gate);
    CHECK_INT(s.destroyed, 1, "the selection's context destroyed once");
    CHECK_INT(box_live, live, "no box outstanding");
    dfs_type_release(bt);

    /* Argument errors. */
    dfs_diffuser *leaf = NULL, *other = NULL, *out = NULL;
    dfs_diffuser_into(dfs_type_pointer(), rec_effect, &r[0], NULL, &leaf);
    dfs_diffuser_into(dfs_type_cstring(), rec_effect, &r[1], NULL, &other);
    dfs_diffuser *mixed[2] = {leaf, other};
    CHECK_STATUS(dfs_diffuser_map_all(dfs_type_pointer(), select_boxes, &s, select_all_destroy, mixed, 2, &out),
                 DFS_ERR_TYPE, "children of two types");
    CHECK_ERROR_HAS("children[1]", "names the child (\"%s\")", dfs_last_error());
    CHECK_INT(s.destroyed, 2, "the context of a failed call is destroyed too");
    CHECK_STATUS(dfs_diffuser_map_all(dfs_type_pointer(), NULL, NULL, NULL, &leaf, 1, &out), DFS_ERR_NULL,
                 "a NULL selection");
    CHECK_STATUS(dfs_diffuser_map_all(dfs_type_pointer(), select_boxes, &s, NULL, NULL, 2, &out), DFS_ERR_NULL,
                 "NULL children with a count");
    CHECK_OK(dfs_diffuser_map_all(dfs_type_pointer(), select_boxes, &s, NULL, NULL, 0, &out), "no children");
    CHECK_OK(dfs_diffuser_run(out, IV(9)), "runs without calling the selection");
    CHECK_LOG(&log, "", "nothing selected");
    dfs_diffuser_release(out);
    dfs_diffuser_release(leaf);
    dfs_diffuser_release(other);
}

/* ------------------------------------------------------------------------------------ */

/* Borrowed parts: the test owns the boxes; the selection lends them. pool[v][i] is the
 * part i of integer v. */
typedef struct lend_ctx {
    test_log *log;
    box *pool[8][3];
    long fail_on;     /* the selection fails on this value after lending one part */
} lend_ctx;

static int lend_boxes(const void *value, size_t count, const void **out, size_t *produced, void *ctx) {
    lend_ctx *l = ctx;
    long v = (long)(intptr_t)value;
    log_add(l->log, "s:%ld", v);
    if (v == l->fail_on) {
        out[0] = l->pool[v][0];
        *produced = 1;
        return 9;
    }
    for (size_t i = 0; i < count; i++) out[i] = l->pool[v][i];
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
    check_section("borrowed parts and run values: retained only when cached");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    dfs_type *bt = box_type_fresh(&tc, NULL);
    int live = box_live;

    /* A run's value: a gate retains it when it caches it, not on every run. */
    recorder e = rec_make("e", &log, REC_BOX);
    dfs_diffuser *leaf = NULL;
    CHECK_OK(dfs_diffuser_into(bt, rec_effect, &e, rec_destroy, &leaf), "into(box)");
    box *one = box_new(1), *also_one = box_new(1), *two = box_new(2);
    int retains = box_retains, releases = box_releases;
    CHECK_OK(dfs_diffuser_run(leaf, one), "run 1");
    CHECK_INT(box_retains - retains, 1, "the gate retained the value it cached");
    CHECK_OK(dfs_diffuser_run(leaf, also_one), "run an equal box");
    CHECK_OK(dfs_diffuser_run(leaf, one), "run 1 again");
    CHECK_INT(box_retains - retains, 1, "equal values are only compared: no retain");
    CHECK_INT(box_releases - releases, 0, "and no release");
    CHECK_OK(dfs_diffuser_run(leaf, two), "run 2");
    CHECK_INT(box_retains - retains, 2, "a new value is retained once");
    CHECK_INT(box_releases - releases, 1, "the one it replaced released once");
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

    /* Borrowed parts of a selection. */
    lend_ctx l;
    memset(&l, 0, sizeof l);
    l.log = &log;
    l.fail_on = 4;
    for (int v = 1; v < 8; v++)
        for (int i = 0; i < 3; i++) l.pool[v][i] = box_new(v == 3 ? 20 + i : v * 10 + i);
    recorder r[3] = {rec_make("a", &log, REC_BOX), rec_make("b", &log, REC_BOX), rec_make("c", &log, REC_BOX)};
    dfs_diffuser *kids[3], *fan = NULL, *gate = NULL;
    for (int i = 0; i < 3; i++) dfs_diffuser_into(bt, rec_effect, &r[i], rec_destroy, &kids[i]);
    CHECK_OK(dfs_diffuser_map_all_borrowed(dfs_type_pointer(), lend_boxes, &l, NULL, kids, 3, &fan),
             "map_all_borrowed over three boxed leaves");
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), &fan, 1, &gate), "gated by into_all");
    for (int i = 0; i < 3; i++) dfs_diffuser_release(kids[i]);
    dfs_diffuser_release(fan);

    retains = box_retains;
    releases = box_releases;
    CHECK_OK(dfs_diffuser_run(gate, IV(1)), "run 1");
    CHECK_LOG(&log, "s:1 a:10 b:11 c:12", "one selection, every child");
    CHECK_INT(box_retains - retains, 3, "each leaf retained the part it cached");
    CHECK_INT(box_releases - releases, 0, "no part released: they are lent");
    for (int i = 0; i < 3; i++) box_unref(l.pool[1][i]);
    CHECK_INT(box_live - live, 7 * 3 - 3 + 3, "the lender dropped pool 1; the caches keep its boxes");

    CHECK_OK(dfs_diffuser_run(gate, IV(2)), "run 2");
    CHECK_LOG(&log, "s:2 a:20 b:21 c:22", "new parts");
    CHECK_INT(box_releases - releases, 3, "the replaced caches (pool 1) released");
    CHECK_INT(box_live - live, 6 * 3, "pool 1 is gone");
    retains = box_retains;
    CHECK_OK(dfs_diffuser_run(gate, IV(3)), "run 3: other boxes, equal values");
    CHECK_LOG(&log, "s:3", "selected, compared, nothing ran");
    CHECK_INT(box_retains - retains, 0, "equal borrowed parts cost no retain");

    CHECK_STATUS(dfs_diffuser_run(gate, IV(4)), DFS_ERR_CALLBACK, "run 4: fails after lending one part");
    CHECK_LOG(&log, "s:4 a:40", "the child of the lent part ran");
    CHECK_INT(box_live - live, 6 * 3, "the failing selection's part was not released by the core");

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
    CHECK_STATUS(dfs_diffuser_map_borrowed(dfs_type_pointer(), NULL, NULL, NULL, mapped, &inner), DFS_ERR_NULL,
                 "a NULL transform");
    CHECK_STATUS(dfs_diffuser_map_all_borrowed(dfs_type_pointer(), lend_boxes, &l, NULL, NULL, 1, &inner),
                 DFS_ERR_NULL, "NULL children with a count");

    dfs_diffuser_release(mapped);
    dfs_diffuser_release(gate);
    for (int v = 2; v < 8; v++)
        for (int i = 0; i < 3; i++) box_unref(l.pool[v][i]);
    CHECK_INT(box_live, live, "no box outstanding");
    dfs_type_release(bt);
}

/* ------------------------------------------------------------------------------------
 * dfs_diffuser_map_all_judged: a selection that also judges its parts
 * ------------------------------------------------------------------------------------ */

/* Lends pool[v][i] as part i of integer v and judges it by box value against what the
 * core says is cached; logs "s:v" and, per child, "gG" (generation) with "=c" (the
 * cached value) when there is one. With `lie`, it calls every judged part with a cache
 * unchanged. Fails on fail_on after one part. */
typedef struct judge_ctx {
    test_log *log;
    box *pool[8][4];
    long fail_on;
    int lie;
    int destroyed;
} judge_ctx;

static int judge_boxes(const void *value, size_t count, const dfs_cached_part *cached, const void **out,
                       signed char *verdict, size_t *produced, void *ctx) {
    judge_ctx *j = ctx;
    long v = (long)(intptr_t)value;
    log_add(j->log, "s:%ld", v);
    size_t n = v == j->fail_on ? 1 : count;
    for (size_t i = 0; i < n; i++) {
        if (verdict[i] != DFS_PART_UNKNOWN) log_add(j->log, "verdict-not-reset");
        const box *part = j->pool[v][i];
        if (cached[i].present)
            log_add(j->log, "g%llu=%ld", (unsigned long long)cached[i].generation, ((const box *)cached[i].value)->value);
        else
            log_add(j->log, "g%llu", (unsigned long long)cached[i].generation);
        if (cached[i].generation == 0) {
            out[i] = part;
        } else if (!cached[i].present) {
            out[i] = part;
            verdict[i] = DFS_PART_CHANGED;
        } else if (j->lie || ((const box *)cached[i].value)->value == part->value) {
            verdict[i] = DFS_PART_UNCHANGED; /* out[i] left NULL: not read */
        } else {
            out[i] = part;
            verdict[i] = DFS_PART_CHANGED;
        }
    }
    if (v == j->fail_on) {
        *produced = n;
        dfs_set_error("judge refused");
        return 3;
    }
    return 0;
}

static void judge_destroy(void *ctx) { ((judge_ctx *)ctx)->destroyed++; }

/* Fails without storing a part, and reports a nonsense number of parts made. */
static int judge_nonsense(const void *value, size_t count, const dfs_cached_part *cached, const void **out,
                          signed char *verdict, size_t *produced, void *ctx) {
    (void)value, (void)count, (void)cached, (void)out, (void)verdict;
    log_add(((judge_ctx *)ctx)->log, "nonsense");
    *produced = (size_t)-1;
    return 2;
}

/* Part i of integer v is v * 100 + i; judged by pointer equality. Logs "s:v" and, for
 * the last child only, "gG" with "=c" (its cached value) when there is one. */
static int judge_ints(const void *value, size_t count, const dfs_cached_part *cached, const void **out,
                      signed char *verdict, size_t *produced, void *ctx) {
    (void)produced;
    long v = (long)(intptr_t)value;
    log_add(ctx, "s:%ld", v);
    for (size_t i = 0; i < count; i++) {
        out[i] = IV(v * 100 + (long)i);
        if (i + 1 == count) {
            if (cached[i].present)
                log_add(ctx, "g%llu=%ld", (unsigned long long)cached[i].generation, (long)(intptr_t)cached[i].value);
            else
                log_add(ctx, "g%llu", (unsigned long long)cached[i].generation);
        }
        if (cached[i].generation != 0)
            verdict[i] = cached[i].present && cached[i].value == out[i] ? DFS_PART_UNCHANGED : DFS_PART_CHANGED;
    }
    return 0;
}

/* A judged gate whose cache is replaced from outside its fan-out (run through its own
 * handle): the next selection is told the new value and generation. With `count`
 * children, the last of them that gate: a small fan-out makes its views of the caches
 * for each call, a wide one (16 children or more) keeps them and refreshes only those
 * whose generation moved. */
static void test_judged_gate_changed_elsewhere(test_log *log, size_t count) {
    enum { MAX = 18 };
    recorder r[MAX];
    dfs_diffuser *kids[MAX], *fan = NULL;
    for (size_t i = 0; i < count; i++) {
        r[i] = rec_make(i + 1 == count ? "g" : "o", log, REC_INT);
        dfs_diffuser_into(dfs_type_pointer(), rec_effect, &r[i], rec_destroy, &kids[i]);
    }
    dfs_diffuser *gate = kids[count - 1];
    CHECK_OK(dfs_diffuser_map_all_judged(dfs_type_pointer(), judge_ints, log, NULL, kids, count, &fan),
             "map_all_judged with the last gate kept by handle");
    for (size_t i = 0; i + 1 < count; i++) dfs_diffuser_release(kids[i]);
    char expected[64];
    CHECK_OK(dfs_diffuser_run(fan, IV(1)), "run 1");
    log_clear(log);
    CHECK_OK(dfs_diffuser_run(fan, IV(1)), "run 1 again");
    snprintf(expected, sizeof expected, "s:1 g2=%zu", 100 + count - 1);
    CHECK_LOG(log, expected, "every part judged unchanged");
    CHECK_OK(dfs_diffuser_run(gate, IV(500)), "the gate run by itself");
    CHECK_LOG(log, "g:500", "it stores 500");
    CHECK_OK(dfs_diffuser_run(fan, IV(1)), "run 1 once more");
    snprintf(expected, sizeof expected, "s:1 g3=500 g:%zu", 100 + count - 1);
    CHECK_LOG(log, expected, "the selection is told 500, so the last part differs and passes");
    dfs_diffuser_release(fan);
    dfs_diffuser_release(gate);
}

static void test_map_all_judged(void) {
    check_section("map_all_judged: a selection that judges its parts");
    test_log log;
    log_clear(&log);
    box_type_ctx tc;
    dfs_type *bt = box_type_fresh(&tc, NULL);
    int live = box_live;
    judge_ctx j;
    memset(&j, 0, sizeof j);
    j.log = &log;
    j.fail_on = 5;
    /* v = 1: 10 11 12 13; v = 2: 10 21 12 23 (parts 0 and 2 equal to v = 1's). */
    for (int v = 1; v < 8; v++)
        for (int i = 0; i < 4; i++) j.pool[v][i] = box_new(v == 2 && i % 2 == 0 ? 10 + i : v * 10 + i);

    /* Children: gates a and b, an ungated effect, and gate c. */
    recorder r[4] = {rec_make("a", &log, REC_BOX), rec_make("b", &log, REC_BOX), rec_make("x", &log, REC_BOX),
                     rec_make("c", &log, REC_BOX)};
    dfs_diffuser *kids[4], *fan = NULL;
    dfs_diffuser_into(bt, rec_effect, &r[0], rec_destroy, &kids[0]);
    dfs_diffuser_into(bt, rec_effect, &r[1], rec_destroy, &kids[1]);
    dfs_diffuser_into_always(bt, rec_effect, &r[2], rec_destroy, &kids[2]);
    dfs_diffuser_into(bt, rec_effect, &r[3], rec_destroy, &kids[3]);
    CHECK_OK(dfs_diffuser_map_all_judged(dfs_type_pointer(), judge_boxes, &j, judge_destroy, kids, 4, &fan),
             "map_all_judged over three gates and an effect");
    for (int i = 0; i < 4; i++) dfs_diffuser_release(kids[i]);

    CHECK_OK(dfs_diffuser_run(fan, IV(1)), "run 1");
    CHECK_LOG(&log, "s:1 g1 g1 g0 g1 a:10 b:11 x:12 c:13", "no caches yet: every gate judged changed");
    CHECK_OK(dfs_diffuser_run(fan, IV(2)), "run 2");
    CHECK_LOG(&log, "s:2 g2=10 g2=11 g0 g2=13 b:21 x:12 c:23", "a skipped (equal), b and c let through, x always");
    CHECK_INT(tc.equal_calls, 0, "no gate compared anything itself");
    CHECK_OK(dfs_diffuser_run(fan, IV(2)), "run 2 again");
    CHECK_LOG(&log, "s:2 g2=10 g3=21 g0 g3=23 x:12", "generations moved only for the gates that stored");

    /* A failing selection: the children of the parts it made run, by their verdicts. */
    CHECK_STATUS(dfs_diffuser_run(fan, IV(5)), DFS_ERR_CALLBACK, "run 5: fails after one part");
    CHECK_STR(dfs_last_error(), "judge refused", "its message");
    CHECK_LOG(&log, "s:5 g2=10 a:50", "part 0 differed: a ran; nothing after");

    /* Verdicts are trusted: a lying judge stops different parts. */
    j.lie = 1;
    CHECK_OK(dfs_diffuser_run(fan, IV(3)), "run 3, lying");
    CHECK_LOG(&log, "s:3 g3=50 g3=21 g0 g3=23 x:32", "every gate stopped; the ungated effect ran");
    j.lie = 0;
    CHECK_INT(tc.equal_calls, 0, "still no comparison by the gates");

    /* A gate reached from another child is not judged. */
    dfs_diffuser *shared = NULL, *under = NULL, *fan2 = NULL;
    recorder sr = rec_make("s", &log, REC_BOX);
    dfs_diffuser_into(bt, rec_effect, &sr, rec_destroy, &shared);
    CHECK_OK(dfs_diffuser_into_all(bt, &shared, 1, &under), "a gate over the shared one");
    dfs_diffuser *pair[2] = {under, shared};
    CHECK_OK(dfs_diffuser_map_all_judged(dfs_type_pointer(), judge_boxes, &j, judge_destroy, pair, 2, &fan2),
             "map_all_judged over [into_all([s]), s]");
    CHECK_OK(dfs_diffuser_run(fan2, IV(1)), "run 1");
    CHECK_LOG(&log, "s:1 g1 g0 s:10 s:11", "only the outer gate is judged; s compares itself");
    dfs_diffuser_release(fan2);
    dfs_diffuser_release(under);
    dfs_diffuser_release(shared);
    CHECK_INT(tc.equal_calls, 1, "that one comparison");

    test_judged_gate_changed_elsewhere(&log, 1);
    test_judged_gate_changed_elsewhere(&log, 18);

    dfs_diffuser_release(fan);
    CHECK_INT(j.destroyed, 2, "each selection context destroyed once");

    /* Argument errors. */
    dfs_diffuser *leaf = NULL, *out = NULL;
    dfs_diffuser_into(bt, rec_effect, &r[0], NULL, &leaf);
    CHECK_STATUS(dfs_diffuser_map_all_judged(dfs_type_pointer(), NULL, NULL, NULL, &leaf, 1, &out), DFS_ERR_NULL,
                 "a NULL selection");
    CHECK_STATUS(dfs_diffuser_map_all_judged(dfs_type_pointer(), judge_boxes, &j, judge_destroy, NULL, 2, &out),
                 DFS_ERR_NULL, "NULL children with a count");
    CHECK_INT(j.destroyed, 3, "the context of a failed call is destroyed");
    CHECK_STATUS(dfs_diffuser_map_all_judged(NULL, judge_boxes, &j, NULL, &leaf, 1, &out), DFS_ERR_NULL,
                 "a NULL type");
    dfs_diffuser *many[2] = {leaf, leaf};
    CHECK_STATUS(dfs_diffuser_map_all_judged(dfs_type_pointer(), judge_boxes, &j, judge_destroy, many,
                                             (size_t)1 << 40, &out),
                 DFS_ERR_ARGUMENT, "a count out of range (before anything is sized by it)");
    CHECK_INT(j.destroyed, 4, "that context is destroyed too");

    /* A selection that fails reporting more parts made than there are children (here
     * SIZE_MAX, which a signed reading makes negative) ran none of them. */
    dfs_diffuser *odd = NULL;
    CHECK_OK(dfs_diffuser_map_all_judged(dfs_type_pointer(), judge_nonsense, &j, NULL, many, 2, &odd),
             "map_all_judged with a selection that reports nonsense");
    CHECK_STATUS(dfs_diffuser_run(odd, IV(1)), DFS_ERR_CALLBACK, "its run fails");
    CHECK_LOG(&log, "nonsense", "no child ran: no part was made");
    dfs_diffuser_release(odd);
    dfs_diffuser_release(leaf);
    for (int v = 1; v < 8; v++)
        for (int i = 0; i < 4; i++) box_unref(j.pool[v][i]);
    CHECK_INT(box_live, live, "no box outstanding");
    dfs_type_release(bt);
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_failing_effect();
    test_failing_transform();
    test_failing_did_change();
    test_failing_equality();
    test_failing_deep();
    test_fan_out_of_maps();
    test_fan_out_keeps_no_maps();
    test_field_maps();
    test_map_all();
    test_borrowed();
    test_map_all_judged();
    CHECK_INT(box_live, 0, "no box outstanding at exit");
    return check_finish();
}
