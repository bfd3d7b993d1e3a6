/*
 * test_closures.c — plain C function pointers made with libffi (dfs_closure_new) for
 * callback registries that take a bare function pointer and no user data, like GLFW's
 * key callback. The source's connect makes a closure and registers it; disconnect
 * unregisters it; calling the function pointer emits an ffi event.
 *
 * One program for one function, dfs_closure_new: each section is one thing a closure
 * must do (arguments of every type, an int return, refusals, extract), each over a fake
 * context-less registry like the first, so they read best side by side.
 */
#include "check.h"

#include <math.h>

/* ------------------------------------------------------------------------------------
 * A fake context-less registry, as a C library would have it.
 * ------------------------------------------------------------------------------------ */

static void (*key_cb)(int key, int mods);
static void on_key(void (*cb)(int, int)) { key_cb = cb; }
/* The library calls the registered callback, if any. */
static void press(int key, int mods) {
    if (key_cb) key_cb(key, mods);
}

typedef struct key_source {
    int connects;
    int disconnects;
    int destroyed;
    int call_during_disconnect; /* call the closure from inside disconnect, before unregistering */
    dfs_status last_status;
} key_source;

static int key_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    key_source *k = ctx;
    static const dfs_ffi_type args[] = {DFS_FFI_INT32, DFS_FFI_INT32};
    void (*fn)(void) = NULL;
    k->last_status = dfs_closure_new(dispatch, DFS_FFI_VOID, args, 2, &fn);
    if (k->last_status != DFS_OK) return 1;
    on_key((void (*)(int, int))fn);
    k->connects++;
    *connection = NULL;
    return 0;
}

static void key_disconnect(void *connection, void *ctx) {
    (void)connection;
    key_source *k = ctx;
    if (k->call_during_disconnect && key_cb) key_cb(9, 9); /* still allocated: dropped */
    on_key(NULL);
    k->disconnects++;
}

static void key_destroy(void *ctx) { ((key_source *)ctx)->destroyed++; }

typedef struct event_log {
    test_log *log;
    int bad_shape;
} event_log;

static int key_effect(const void *value, void *ctx) {
    event_log *e = ctx;
    const dfs_ffi_event *ev = value;
    if (ev == NULL || ev->count != 2 || ev->args[0].type != DFS_FFI_INT32 || ev->args[1].type != DFS_FFI_INT32) {
        e->bad_shape++;
        return 0;
    }
    log_add(e->log, "key:%lld/%lld", (long long)ev->args[0].as.i, (long long)ev->args[1].as.i);
    return 0;
}

static void test_key_callback(void) {
    check_section("a closure registered with a context-less C callback API");
    test_log log;
    log_clear(&log);
    key_source ks = {0, 0, 0, 0, DFS_OK};
    event_log el = {&log, 0};
    dfs_fuser *keys = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), key_connect, key_disconnect, &ks, key_destroy, &keys), "from(ffi_event source)");
    CHECK(dfs_fuser_type(keys) == dfs_type_ffi_event(), "type ffi_event");

    press(1, 1);
    CHECK(key_cb == NULL, "nothing registered before connect");

    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_connect(keys, key_effect, &el, NULL, &c), "connect");
    CHECK_OK(ks.last_status, "dfs_closure_new succeeded in connect");
    CHECK(key_cb != NULL, "connect registered a function pointer");
    press(65, 2);
    press(-1, 0x7fffffff);
    CHECK_LOG(&log, "key:65/2 key:-1/2147483647", "calling key_cb(65, 2) delivers an ffi event with args 65 and 2");
    CHECK_INT(el.bad_shape, 0, "every event had two INT32 arguments");

    void (*old)(int, int) = key_cb; /* the registry may keep a copy somewhere */
    ks.call_during_disconnect = 1;
    CHECK_OK(dfs_disposable_dispose(c), "dispose");
    CHECK_INT(ks.disconnects, 1, "disconnected");
    CHECK(key_cb == NULL, "disconnect unregistered the function pointer");
    CHECK_LOG(&log, "", "a call during disconnect (closure not yet freed) was dropped");
    press(66, 0);
    CHECK_LOG(&log, "", "emission through the registry after dispose is dropped (the registry no longer calls it)");
    CHECK(old != NULL, "the old pointer is never called again: it was freed after disconnect");
    dfs_disposable_release(c);

    /* Connect again: a new closure. */
    ks.call_during_disconnect = 0;
    CHECK_OK(dfs_fuser_connect(keys, key_effect, &el, NULL, &c), "connect again");
    press(67, 1);
    CHECK_LOG(&log, "key:67/1", "the new closure delivers");
    dfs_disposable_dispose(c);
    dfs_disposable_release(c);
    dfs_fuser_release(keys);
    CHECK_INT(ks.destroyed, 1, "source destroyed once");
    CHECK_INT(ks.connects, ks.disconnects, "connects == disconnects");
}

/* ------------------------------------------------------------------------------------
 * Every argument type
 * ------------------------------------------------------------------------------------ */

typedef void (*all_fn)(int8_t, uint8_t, int16_t, uint16_t, int32_t, uint32_t, int64_t, uint64_t, float, double,
                       void *, const char *);
static all_fn all_cb;

static const dfs_ffi_type all_types[] = {
    DFS_FFI_INT8,  DFS_FFI_UINT8,  DFS_FFI_INT16, DFS_FFI_UINT16, DFS_FFI_INT32,   DFS_FFI_UINT32,
    DFS_FFI_INT64, DFS_FFI_UINT64, DFS_FFI_FLOAT, DFS_FFI_DOUBLE, DFS_FFI_POINTER, DFS_FFI_STRING,
};
#define ALL_COUNT (sizeof all_types / sizeof all_types[0])

static int all_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)ctx;
    (void)connection;
    void (*fn)(void) = NULL;
    dfs_status s = dfs_closure_new(dispatch, DFS_FFI_VOID, all_types, ALL_COUNT, &fn);
    if (s != DFS_OK) return 1;
    all_cb = (all_fn)fn;
    return 0;
}

static void all_disconnect(void *connection, void *ctx) {
    (void)connection;
    (void)ctx;
    all_cb = NULL;
}

typedef struct snapshot {
    int events;
    size_t count;
    dfs_ffi_value args[ALL_COUNT];
    char text[64];
} snapshot;

static int all_effect(const void *value, void *ctx) {
    snapshot *s = ctx;
    const dfs_ffi_event *ev = value;
    s->events++;
    s->count = ev->count;
    for (size_t i = 0; i < ev->count && i < ALL_COUNT; i++) s->args[i] = ev->args[i];
    s->text[0] = '\0';
    if (ev->count == ALL_COUNT && ev->args[11].as.s != NULL) {
        snprintf(s->text, sizeof s->text, "%s", ev->args[11].as.s); /* borrowed: copy it */
    }
    return 0;
}

static void test_all_types(void) {
    check_section("every argument type");
    snapshot snap;
    memset(&snap, 0, sizeof snap);
    dfs_fuser *f = NULL;
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), all_connect, all_disconnect, NULL, NULL, &f), "from");
    CHECK_OK(dfs_fuser_connect(f, all_effect, &snap, NULL, &c), "connect");
    CHECK(all_cb != NULL, "a 12-argument closure was registered");
    int marker = 0;
    char text[16] = "héllo";
    all_cb(-5, 250, -30000, 65000, -2000000000, 4000000000u, INT64_MIN + 1, UINT64_MAX, 1.5f, -3.25,
           &marker, text);
    strcpy(text, "gone");
    CHECK_INT(snap.events, 1, "one event");
    CHECK_INT(snap.count, ALL_COUNT, "with 12 arguments");
    int types_ok = 1;
    for (size_t i = 0; i < ALL_COUNT; i++) types_ok &= snap.args[i].type == all_types[i];
    CHECK(types_ok, "each argument carries its declared type");
    CHECK_INT(snap.args[0].as.i, -5, "int8 -5");
    CHECK(snap.args[1].as.u == 250, "uint8 250");
    CHECK_INT(snap.args[2].as.i, -30000, "int16 -30000");
    CHECK(snap.args[3].as.u == 65000, "uint16 65000");
    CHECK_INT(snap.args[4].as.i, -2000000000, "int32 -2000000000");
    CHECK(snap.args[5].as.u == 4000000000u, "uint32 4000000000");
    CHECK(snap.args[6].as.i == INT64_MIN + 1, "int64 INT64_MIN+1");
    CHECK(snap.args[7].as.u == UINT64_MAX, "uint64 UINT64_MAX");
    CHECK(snap.args[8].as.d == 1.5, "float 1.5 (as a double)");
    CHECK(snap.args[9].as.d == -3.25, "double -3.25");
    CHECK(snap.args[10].as.p == &marker, "pointer");
    CHECK_STR(snap.text, "héllo", "string (borrowed during the emission)");

    all_cb(0, 0, 0, 0, 0, 0, 0, 0, 0.0f, 0.0, NULL, NULL);
    CHECK_INT(snap.events, 2, "a second event");
    CHECK(snap.args[10].as.p == NULL && snap.args[11].as.s == NULL, "NULL pointer and NULL string stay NULL");
    CHECK(snap.args[1].as.u == 0 && snap.args[7].as.u == 0, "zeros");

    dfs_disposable_dispose(c);
    CHECK(all_cb == NULL, "unregistered on dispose");
    dfs_disposable_release(c);
    dfs_fuser_release(f);
}

/* ------------------------------------------------------------------------------------
 * An int return type: the status of the emission
 * ------------------------------------------------------------------------------------ */

typedef int (*click_fn)(int x);
static click_fn click_cb;

static int click_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)ctx;
    (void)connection;
    static const dfs_ffi_type args[] = {DFS_FFI_INT32};
    void (*fn)(void) = NULL;
    if (dfs_closure_new(dispatch, DFS_FFI_INT, args, 1, &fn) != DFS_OK) return 1;
    click_cb = (click_fn)fn;
    return 0;
}

static void click_disconnect(void *connection, void *ctx) {
    (void)connection;
    int *during = ctx;
    if (*during && click_cb) *during = 100 + click_cb(1); /* dropped: returns DFS_OK */
    click_cb = NULL;
}

static int click_effect(const void *value, void *ctx) {
    test_log *log = ctx;
    const dfs_ffi_event *ev = value;
    long long x = ev->args[0].as.i;
    log_add(log, "click:%lld", x);
    if (x == 13) {
        dfs_set_error("unlucky click");
        return 1;
    }
    return 0;
}

static void test_int_return(void) {
    check_section("a closure returning int returns the emission's status");
    test_log log;
    log_clear(&log);
    int during = 0;
    dfs_fuser *f = NULL;
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), click_connect, click_disconnect, &during, NULL, &f), "from");
    CHECK_OK(dfs_fuser_connect(f, click_effect, &log, NULL, &c), "connect");
    CHECK_INT(click_cb(7), DFS_OK, "click_cb(7) returns DFS_OK");
    CHECK_INT(click_cb(13), DFS_ERR_CALLBACK, "click_cb(13) returns DFS_ERR_CALLBACK: the effect failed");
    CHECK_STR(dfs_last_error(), "unlucky click", "the effect's message");
    CHECK_INT(click_cb(-8), DFS_OK, "the closure keeps working");
    CHECK_LOG(&log, "click:7 click:13 click:-8", "exact log");
    during = 1;
    dfs_disposable_dispose(c);
    CHECK_INT(during, 100 + DFS_OK, "called during disconnect: dropped, returns DFS_OK");
    CHECK_LOG(&log, "", "nothing delivered during disconnect");
    dfs_disposable_release(c);
    dfs_fuser_release(f);
}

/* ------------------------------------------------------------------------------------
 * Wrong dispatch type and bad signatures
 * ------------------------------------------------------------------------------------ */

enum { PROBES = 10 };

typedef struct probe {
    dfs_status status[PROBES];
    int fn_null[PROBES];
    char message[PROBES][160];
    int made;
    void (*zero_arg)(void);
} probe;

/* Call dfs_closure_new first, then record (argument evaluation order is unspecified). */
static void record(probe *p, int i, dfs_status s, void (*fn)(void)) {
    p->status[i] = s;
    p->fn_null[i] = fn == NULL;
    snprintf(p->message[i], sizeof p->message[i], "%s", dfs_last_error());
}

/* connect of a cstring source: closures need an ffi_event dispatch. */
static int wrong_type_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)connection;
    probe *p = ctx;
    static const dfs_ffi_type args[] = {DFS_FFI_INT32};
    void (*fn)(void) = (void (*)(void))(uintptr_t)0x1;
    dfs_status st = dfs_closure_new(dispatch, DFS_FFI_VOID, args, 1, &fn);
    record(p, 0, st, fn);
    return 0;
}

static int bad_signatures_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)connection;
    probe *p = ctx;
    void (*fn)(void);
    dfs_status st;
    static const dfs_ffi_type one_int[] = {DFS_FFI_INT32};
    static const dfs_ffi_type with_void[] = {DFS_FFI_INT32, DFS_FFI_VOID};
    const dfs_ffi_type with_unknown[] = {DFS_FFI_INT32, (dfs_ffi_type)42};
    const dfs_ffi_type with_negative[] = {(dfs_ffi_type)-1};
    dfs_ffi_type many[33];
    for (int i = 0; i < 33; i++) many[i] = DFS_FFI_INT32;

    fn = (void (*)(void))(uintptr_t)0x1;
    st = dfs_closure_new(dispatch, DFS_FFI_DOUBLE, one_int, 1, &fn);
    record(p, 0, st, fn);
    fn = (void (*)(void))(uintptr_t)0x1;
    st = dfs_closure_new(dispatch, DFS_FFI_VOID, with_void, 2, &fn);
    record(p, 1, st, fn);
    fn = (void (*)(void))(uintptr_t)0x1;
    st = dfs_closure_new(dispatch, DFS_FFI_VOID, with_unknown, 2, &fn);
    record(p, 2, st, fn);
    fn = (void (*)(void))(uintptr_t)0x1;
    st = dfs_closure_new(dispatch, DFS_FFI_VOID, many, 33, &fn);
    record(p, 3, st, fn);
    fn = (void (*)(void))(uintptr_t)0x1;
    st = dfs_closure_new(dispatch, DFS_FFI_VOID, NULL, 2, &fn);
    record(p, 4, st, fn);
    fn = (void (*)(void))(uintptr_t)0x1;
    st = dfs_closure_new(dispatch, DFS_FFI_VOID, with_negative, 1, &fn);
    record(p, 5, st, fn);
    fn = (void (*)(void))(uintptr_t)0x1;
    st = dfs_closure_new(dispatch, (dfs_ffi_type)77, one_int, 1, &fn);
    record(p, 6, st, fn);
    fn = (void (*)(void))(uintptr_t)0x1;
    st = dfs_closure_new(dispatch, DFS_FFI_VOID, one_int, (size_t)-1, &fn);
    record(p, 7, st, fn);
    /* Valid edge cases: 32 arguments, and no arguments at all. */
    fn = NULL;
    st = dfs_closure_new(dispatch, DFS_FFI_INT, many, 32, &fn);
    record(p, 8, st, fn);
    fn = NULL;
    st = dfs_closure_new(dispatch, DFS_FFI_VOID, NULL, 0, &fn);
    record(p, 9, st, fn);
    p->zero_arg = fn;
    p->made++;
    return 0;
}

static int count_args_effect(const void *value, void *ctx) {
    test_log *log = ctx;
    log_add(log, "args:%zu", ((const dfs_ffi_event *)value)->count);
    return 0;
}

static void test_bad_closures(void) {
    check_section("closures on a non-ffi dispatch; bad signatures");
    test_log log;
    log_clear(&log);
    probe p;
    memset(&p, 0, sizeof p);
    dfs_fuser *f = NULL;
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_cstring(), wrong_type_connect, NULL, &p, NULL, &f), "a cstring source");
    CHECK_OK(dfs_fuser_connect(f, count_args_effect, &log, NULL, &c), "connect");
    CHECK_STATUS(p.status[0], DFS_ERR_TYPE, "dfs_closure_new on a cstring dispatch");
    CHECK(p.fn_null[0], "*fn is NULL");
    CHECK(strstr(p.message[0], "ffi_event") != NULL && strstr(p.message[0], "cstring") != NULL,
          "message names both types (\"%s\")", p.message[0]);
    dfs_disposable_dispose(c);
    dfs_disposable_release(c);
    dfs_fuser_release(f);

    memset(&p, 0, sizeof p);
    CHECK_OK(dfs_fuser_from(dfs_type_ffi_event(), bad_signatures_connect, NULL, &p, NULL, &f), "an ffi source");
    CHECK_OK(dfs_fuser_connect(f, count_args_effect, &log, NULL, &c), "connect");
    static const struct { const char *what; dfs_status status; const char *message; } bad[] = {
        {"return type double", DFS_ERR_ARGUMENT, "return type (10) must be DFS_FFI_VOID or DFS_FFI_INT"},
        {"an argument of type void", DFS_ERR_ARGUMENT, "args[1] (0) is not an argument type"},
        {"an unknown argument type (42)", DFS_ERR_ARGUMENT, "args[1] (42) is not an argument type"},
        {"33 arguments", DFS_ERR_ARGUMENT, "count 33 is out of range (at most 32)"},
        {"args NULL with count 2", DFS_ERR_NULL, "args is NULL"},
        {"a negative argument type", DFS_ERR_ARGUMENT, "args[0] (-1) is not an argument type"},
        {"an unknown return type (77)", DFS_ERR_ARGUMENT, "return type (77)"},
        {"count SIZE_MAX", DFS_ERR_ARGUMENT, "count 18446744073709551615 is out of range"},
    };
    for (int i = 0; i < 8; i++) {
        CHECK_STATUS(p.status[i], bad[i].status, "bad signature: %s", bad[i].what);
        CHECK(p.fn_null[i], "  *fn is NULL");
        CHECK(strstr(p.message[i], bad[i].message) != NULL, "  message \"%s\" has \"%s\"", p.message[i], bad[i].message);
    }
    CHECK_OK(p.status[8], "32 int arguments returning int are fine");
    CHECK_OK(p.status[9], "no arguments at all is fine");
    CHECK(p.zero_arg != NULL, "got a function pointer");
    p.zero_arg();
    CHECK_LOG(&log, "args:0", "a void(void) closure emits an empty event");
    dfs_disposable_dispose(c);
    dfs_disposable_release(c);
    dfs_fuser_release(f);

    /* A stale dispatch: the closure cannot be made. */
    void (*fn)(void) = NULL;
    CHECK_STATUS(dfs_closure_new((dfs_dispatch *)(uintptr_t)0xfeed00000002ull, DFS_FFI_VOID, NULL, 0, &fn), DFS_ERR_HANDLE,
                 "dfs_closure_new with a forged dispatch");
}

/* ------------------------------------------------------------------------------------
 * Closures through extract, and the ffi_event type itself
 * ------------------------------------------------------------------------------------ */

static int key_code(const void *value, const void **out, void *ctx) {
    (void)ctx;
    const dfs_ffi_event *ev = value;
    *out = IV(ev->args[0].as.i);
    return 0;
}

static void test_extract_and_type(void) {
    check_section("closures through extract; the ffi_event value type");
    test_log log;
    log_clear(&log);
    key_source ks = {0, 0, 0, 0, DFS_OK};
    dfs_fuser *keys = NULL, *codes = NULL;
    dfs_fuser_from(dfs_type_ffi_event(), key_connect, key_disconnect, &ks, key_destroy, &keys);
    CHECK_OK(dfs_fuser_extract(dfs_type_pointer(), key_code, NULL, NULL, keys, &codes), "extract key codes");
    dfs_fuser_release(keys);
    recorder r = rec_make("code", &log, REC_INT);
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_connect(codes, rec_effect, &r, rec_destroy, &c), "connect");
    press(32, 0);
    press(13, 4);
    CHECK_LOG(&log, "code:32 code:13", "key codes arrive through extract");
    dfs_disposable_dispose(c);
    dfs_disposable_release(c);
    dfs_fuser_release(codes);
    CHECK(ks.destroyed == 1 && r.destroyed == 1, "destroyed once");

    /* The ffi_event type: equal by content (strings by content), retain copies deeply. */
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_ffi_event(), count_args_effect, &log, NULL, &d), "into(ffi_event)");
    char name[8] = "a";
    dfs_ffi_value v1[2] = {{DFS_FFI_INT32, {.i = 1}}, {DFS_FFI_STRING, {.s = name}}};
    dfs_ffi_value v2[2] = {{DFS_FFI_INT32, {.i = 1}}, {DFS_FFI_STRING, {.s = "a"}}};
    dfs_ffi_value v3[2] = {{DFS_FFI_INT64, {.i = 1}}, {DFS_FFI_STRING, {.s = "a"}}};
    dfs_ffi_event e1 = {2, v1}, e2 = {2, v2}, e3 = {2, v3}, e0 = {0, NULL};
    CHECK_OK(dfs_diffuser_run(d, &e1), "run {1, \"a\"}");
    strcpy(name, "b"); /* the cache holds a deep copy: still {1, "a"} */
    CHECK_OK(dfs_diffuser_run(d, &e2), "run an equal event in other storage");
    CHECK_LOG(&log, "args:2", "equal events are gated, and the cache did not alias the caller's string");
    CHECK_OK(dfs_diffuser_run(d, &e1), "run {1, \"b\"}");
    CHECK_OK(dfs_diffuser_run(d, &e3), "run {int64 1, \"a\"}: another argument type");
    CHECK_OK(dfs_diffuser_run(d, &e0), "run an empty event");
    CHECK_OK(dfs_diffuser_run(d, &e0), "run it again");
    CHECK_LOG(&log, "args:2 args:2 args:0", "changes by string content, by argument type, by count");
    dfs_diffuser_release(d);

    /* Doubles compare by ==, as Swift's Double: NaN equals nothing, 0.0 equals -0.0. */
    log_clear(&log);
    CHECK_OK(dfs_diffuser_into(dfs_type_ffi_event(), count_args_effect, &log, NULL, &d), "into(ffi_event)");
    dfs_ffi_value real = {DFS_FFI_DOUBLE, {.d = 0.0}};
    dfs_ffi_event e = {1, &real};
    dfs_diffuser_run(d, &e);
    real.as.d = -0.0;
    dfs_diffuser_run(d, &e);
    CHECK_LOG(&log, "args:1", "0.0 then -0.0: equal, the second run is gated");
    real.as.d = NAN;
    dfs_diffuser_run(d, &e);
    dfs_diffuser_run(d, &e);
    CHECK_LOG(&log, "args:1 args:1", "an event holding a NaN equals no other: each run passes the gate");
    dfs_diffuser_release(d);
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_key_callback();
    test_all_types();
    test_int_return();
    test_bad_closures();
    test_extract_and_type();
    return check_finish();
}
