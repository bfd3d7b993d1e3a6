/*
 * test_fuser.c — fusers over sources written in C: from, from_all, extract,
 * extract_constant, extract_unless_null, connect and dispose; events before connect and
 * after dispose are dropped; connections are independent; failures go back to the
 * emitter; a refusing source undoes the connections already made; and with threads, no
 * event reaches an effect, and no transform runs, after its dispose returned.
 *
 * One program because every section emits through the same small C event registry at
 * the top, which stands for what a fuser's sources wrap, and checks the same promise:
 * an event reaches an effect only while its connection is live.
 */
#include "check.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <time.h>

/* ------------------------------------------------------------------------------------
 * A small C event registry: the source's connect registers the dispatch, disconnect
 * removes it; emit sends an event through every registered dispatch.
 * ------------------------------------------------------------------------------------ */

#define SLOTS 16

typedef struct registry {
    pthread_mutex_t mutex;
    dfs_dispatch *slots[SLOTS];
    dfs_dispatch *last;       /* the last dispatch registered, kept after disconnect */
    int connects;
    int disconnects;
    int destroyed;
    int refuse;               /* connect returns this when non-zero */
    int disconnects_with_bad_token;
} registry;

static void registry_init(registry *r) {
    memset(r, 0, sizeof *r);
    pthread_mutex_init(&r->mutex, NULL);
}

static void registry_fini(registry *r) { pthread_mutex_destroy(&r->mutex); }

static int registry_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    registry *r = ctx;
    if (r->refuse) {
        dfs_set_error("the registry refused the connection");
        return r->refuse;
    }
    pthread_mutex_lock(&r->mutex);
    int slot = -1;
    for (int i = 0; i < SLOTS; i++) {
        if (r->slots[i] == NULL) {
            slot = i;
            break;
        }
    }
    if (slot < 0) {
        pthread_mutex_unlock(&r->mutex);
        return 1;
    }
    r->slots[slot] = dispatch;
    r->last = dispatch;
    r->connects++;
    pthread_mutex_unlock(&r->mutex);
    *connection = (void *)(intptr_t)(slot + 1);
    return 0;
}

static void registry_disconnect(void *connection, void *ctx) {
    registry *r = ctx;
    intptr_t slot = (intptr_t)connection - 1;
    pthread_mutex_lock(&r->mutex);
    if (slot < 0 || slot >= SLOTS || r->slots[slot] == NULL) {
        r->disconnects_with_bad_token++;
    } else {
        r->slots[slot] = NULL;
    }
    r->disconnects++;
    pthread_mutex_unlock(&r->mutex);
}

static void registry_destroy(void *ctx) { ((registry *)ctx)->destroyed++; }

static int registry_live(registry *r) {
    pthread_mutex_lock(&r->mutex);
    int n = 0;
    for (int i = 0; i < SLOTS; i++) n += r->slots[i] != NULL;
    pthread_mutex_unlock(&r->mutex);
    return n;
}

/* Emits through every registered dispatch (outside the lock); the first error wins. */
static dfs_status registry_emit(registry *r, const void *event) {
    dfs_dispatch *snapshot[SLOTS];
    pthread_mutex_lock(&r->mutex);
    memcpy(snapshot, r->slots, sizeof snapshot);
    pthread_mutex_unlock(&r->mutex);
    dfs_status result = DFS_OK;
    for (int i = 0; i < SLOTS; i++) {
        if (snapshot[i] == NULL) continue;
        dfs_status s = dfs_dispatch_emit(snapshot[i], event);
        if (result == DFS_OK) result = s;
    }
    return result;
}

static dfs_fuser *registry_fuser(registry *r, dfs_type *type) {
    dfs_fuser *f = NULL;
    if (dfs_fuser_from(type, registry_connect, registry_disconnect, r, registry_destroy, &f) != DFS_OK) {
        printf("FATAL dfs_fuser_from: %s\n", dfs_last_error());
        exit(2);
    }
    return f;
}

/* ------------------------------------------------------------------------------------ */

static void test_from(void) {
    check_section("from: a C source; connect, dispose, idempotent dispose");
    test_log log;
    log_clear(&log);
    registry reg;
    registry_init(&reg);
    recorder e = rec_make("e", &log, REC_STR);
    dfs_fuser *f = registry_fuser(&reg, dfs_type_cstring());
    CHECK(dfs_fuser_type(f) == dfs_type_cstring(), "the fuser has the source's type");
    CHECK_INT(reg.connects, 0, "making a fuser connects nothing");

    CHECK_OK(registry_emit(&reg, "before"), "an event before connect");
    CHECK_LOG(&log, "", "is dropped (nobody listens)");

    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_connect(f, rec_effect, &e, rec_destroy, &c), "connect");
    CHECK_INT(reg.connects, 1, "the source connected once");
    dfs_dispatch *kept = reg.last;
    CHECK_OK(registry_emit(&reg, "a"), "emit a");
    char buffer[8] = "b";
    CHECK_OK(registry_emit(&reg, buffer), "emit b");
    CHECK_LOG(&log, "e:a e:b", "events reach the effect in order");

    CHECK_OK(dfs_disposable_dispose(c), "dispose");
    CHECK_INT(reg.disconnects, 1, "the source disconnected");
    CHECK_INT(reg.disconnects_with_bad_token, 0, "disconnect got the connection token connect stored");
    CHECK_OK(registry_emit(&reg, "after"), "emit through the registry after dispose");
    CHECK_LOG(&log, "", "is dropped");
    CHECK_STATUS(dfs_dispatch_emit(kept, "stale"), DFS_ERR_HANDLE, "emitting through a kept dispatch after disconnect");
    CHECK_ERROR_HAS("dispatch", "message names the dispatch (\"%s\")", dfs_last_error());
    CHECK_LOG(&log, "", "nothing delivered");
    CHECK_OK(dfs_disposable_dispose(c), "dispose again");
    CHECK_INT(reg.disconnects, 1, "dispose is idempotent: one disconnect");
    CHECK_INT(e.destroyed, 1, "the effect ctx is destroyed once the connection is disposed");
    CHECK_OK(dfs_disposable_release(c), "release the disposable");

    /* The fuser can be connected again. */
    recorder e2 = rec_make("e2", &log, REC_STR);
    CHECK_OK(dfs_fuser_connect(f, rec_effect, &e2, rec_destroy, &c), "connect again");
    registry_emit(&reg, "c");
    CHECK_LOG(&log, "e2:c", "a new connection works");
    dfs_disposable_dispose(c);
    dfs_disposable_release(c);

    CHECK_INT(reg.destroyed, 0, "source ctx alive while the fuser lives");
    dfs_fuser_release(f);
    CHECK_INT(reg.destroyed, 1, "source ctx destroyed once");
    CHECK_INT(reg.connects, reg.disconnects, "every connect was disconnected");
    registry_fini(&reg);
}

static void test_multiple_connections(void) {
    check_section("multiple connections are independent");
    test_log log;
    log_clear(&log);
    registry reg;
    registry_init(&reg);
    recorder one = rec_make("one", &log, REC_STR), two = rec_make("two", &log, REC_STR);
    dfs_fuser *f = registry_fuser(&reg, dfs_type_cstring());
    dfs_disposable *c1 = NULL, *c2 = NULL;
    CHECK_OK(dfs_fuser_connect(f, rec_effect, &one, rec_destroy, &c1), "connect one");
    CHECK_OK(dfs_fuser_connect(f, rec_effect, &two, rec_destroy, &c2), "connect two");
    CHECK_INT(reg.connects, 2, "the source connected twice");
    CHECK_INT(registry_live(&reg), 2, "two dispatches registered");
    registry_emit(&reg, "x");
    CHECK_LOG(&log, "one:x two:x", "both connections receive the event");
    CHECK_OK(dfs_disposable_dispose(c1), "dispose one");
    CHECK_INT(registry_live(&reg), 1, "one dispatch left");
    registry_emit(&reg, "y");
    CHECK_LOG(&log, "two:y", "only the other connection receives");
    CHECK_INT(one.destroyed, 1, "the disposed effect is destroyed");
    CHECK_INT(two.destroyed, 0, "the other one is not");
    dfs_disposable_dispose(c2);
    dfs_disposable_release(c1);
    dfs_disposable_release(c2);
    dfs_fuser_release(f);
    CHECK_INT(two.destroyed + reg.destroyed, 2, "destroyed once");
    registry_fini(&reg);
}

static void test_from_all(void) {
    check_section("from_all");
    test_log log;
    log_clear(&log);
    registry r1, r2;
    registry_init(&r1);
    registry_init(&r2);
    recorder e = rec_make("e", &log, REC_STR);
    dfs_fuser *kids[2] = {registry_fuser(&r1, dfs_type_cstring()), registry_fuser(&r2, dfs_type_cstring())};
    dfs_fuser *all = NULL;
    CHECK_OK(dfs_fuser_from_all(dfs_type_cstring(), kids, 2, &all), "from_all");
    dfs_fuser_release(kids[0]);
    dfs_fuser_release(kids[1]);
    CHECK(dfs_fuser_type(all) == dfs_type_cstring(), "type");
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_connect(all, rec_effect, &e, rec_destroy, &c), "connect");
    CHECK(r1.connects == 1 && r2.connects == 1, "both sources connected");
    registry_emit(&r2, "from-2");
    registry_emit(&r1, "from-1");
    registry_emit(&r2, "again-2");
    CHECK_LOG(&log, "e:from-2 e:from-1 e:again-2", "events of both sources, in the order they arrive");
    dfs_disposable_dispose(c);
    CHECK(r1.disconnects == 1 && r2.disconnects == 1, "dispose disconnects both sources");
    registry_emit(&r1, "late");
    CHECK_LOG(&log, "", "nothing after dispose");
    dfs_disposable_release(c);
    dfs_fuser_release(all);
    CHECK(r1.destroyed == 1 && r2.destroyed == 1 && e.destroyed == 1, "everything destroyed once");
    registry_fini(&r1);
    registry_fini(&r2);
}

/* ------------------------------------------------------------------------------------ */

static int number_to_string(const void *value, const void **out, void *ctx) {
    (void)ctx;
    long v = (long)(intptr_t)value;
    if (v < 0) {
        dfs_set_error("negative numbers are not allowed");
        return 2;
    }
    char buffer[32];
    snprintf(buffer, sizeof buffer, "n%ld", v);
    *out = strdup(buffer); /* cstring has a release: the core frees it */
    return 0;
}

static int even_to_string(const void *value, const void **out, void *ctx) {
    long v = (long)(intptr_t)value;
    if (v & 1) {
        *out = NULL; /* dropped */
        return 0;
    }
    return number_to_string(value, out, ctx);
}

static void test_extract(void) {
    check_section("extract, extract_constant, extract_unless_null");
    test_log log;
    log_clear(&log);
    registry reg;
    registry_init(&reg);
    int destroyed = 0;
    dfs_fuser *numbers = registry_fuser(&reg, dfs_type_pointer());
    dfs_fuser *strings = NULL, *taps = NULL, *evens = NULL;
    CHECK_OK(dfs_fuser_extract(dfs_type_cstring(), number_to_string, &destroyed, count_destroy, numbers, &strings), "extract");
    CHECK(dfs_fuser_type(strings) == dfs_type_cstring(), "extract has its output type");
    char constant[8] = "tap";
    CHECK_OK(dfs_fuser_extract_constant(dfs_type_cstring(), constant, numbers, &taps), "extract_constant");
    strcpy(constant, "XXX"); /* the constant was retained (copied) */
    CHECK_OK(dfs_fuser_extract_unless_null(dfs_type_cstring(), even_to_string, &destroyed, count_destroy, numbers, &evens),
             "extract_unless_null");
    dfs_fuser_release(numbers);

    recorder s = rec_make("s", &log, REC_STR), t = rec_make("t", &log, REC_STR), v = rec_make("v", &log, REC_STR);
    dfs_disposable *cs = NULL, *ct = NULL, *cv = NULL;
    CHECK_OK(dfs_fuser_connect(strings, rec_effect, &s, rec_destroy, &cs), "connect extract");
    CHECK_OK(dfs_fuser_connect(taps, rec_effect, &t, rec_destroy, &ct), "connect extract_constant");
    CHECK_OK(dfs_fuser_connect(evens, rec_effect, &v, rec_destroy, &cv), "connect extract_unless_null");
    CHECK_INT(reg.connects, 3, "each connection connected the source once");
    for (long i = 1; i <= 4; i++) CHECK_OK(registry_emit(&reg, IV(i)), "emit %ld", i);
    CHECK_LOG(&log, "s:n1 t:tap s:n2 t:tap v:n2 s:n3 t:tap s:n4 t:tap v:n4",
              "extract converts, extract_constant emits its constant, extract_unless_null drops NULL");

    /* A failing transform goes back to the emitter; other connections still got it. */
    CHECK_STATUS(registry_emit(&reg, IV(-1)), DFS_ERR_CALLBACK, "a failing extract transform returns DFS_ERR_CALLBACK to the emitter");
    CHECK_STR(dfs_last_error(), "negative numbers are not allowed", "with the transform's message");
    CHECK_LOG(&log, "t:tap", "the failed event did not reach the extract effect");
    CHECK_OK(registry_emit(&reg, IV(6)), "the connections stay usable");
    CHECK_LOG(&log, "s:n6 t:tap v:n6", "after a failure");

    dfs_disposable *all[3] = {cs, ct, cv};
    for (int i = 0; i < 3; i++) {
        dfs_disposable_dispose(all[i]);
        dfs_disposable_release(all[i]);
    }
    CHECK_INT(reg.disconnects, 3, "three disconnects");
    dfs_fuser_release(strings);
    dfs_fuser_release(taps);
    dfs_fuser_release(evens);
    CHECK_INT(destroyed, 2, "transform contexts destroyed once each");
    CHECK_INT(reg.destroyed + s.destroyed + t.destroyed + v.destroyed, 4, "everything else destroyed once");
    registry_fini(&reg);

    /* extract_constant of a user type: the constant is retained and released. */
    box_type_ctx tc;
    dfs_type *bt = box_type_fresh(&tc, NULL);
    registry_init(&reg);
    dfs_fuser *src = registry_fuser(&reg, dfs_type_pointer()), *boxes = NULL;
    box *k = box_new(42);
    CHECK_OK(dfs_fuser_extract_constant(bt, k, src, &boxes), "extract_constant(box)");
    CHECK_INT(k->refs, 2, "the constant was retained");
    box_unref(k);
    dfs_fuser_release(src);
    dfs_type_release(bt);
    recorder b = rec_make("b", &log, REC_BOX);
    dfs_disposable *cb = NULL;
    dfs_fuser_connect(boxes, rec_effect, &b, rec_destroy, &cb);
    registry_emit(&reg, IV(1));
    CHECK_LOG(&log, "b:42", "the constant arrives");
    dfs_disposable_dispose(cb);
    dfs_disposable_release(cb);
    dfs_fuser_release(boxes);
    CHECK_INT(box_live, 0, "the constant was released with the fuser");
    CHECK_INT(tc.destroyed, 1, "type destroyed once");
    registry_fini(&reg);
}

/* ------------------------------------------------------------------------------------ */

/* An effect that disposes its own connection while handling an event. */
typedef struct self_stop {
    test_log *log;
    dfs_disposable *self;
    dfs_status dispose_status;
} self_stop;

static int self_stop_effect(const void *value, void *ctx) {
    self_stop *s = ctx;
    log_add(s->log, "got:%s", (const char *)value);
    if (strcmp(value, "stop") == 0) s->dispose_status = dfs_disposable_dispose(s->self);
    return 0;
}

static void test_effect_failure_and_self_dispose(void) {
    check_section("effect failures go to the emitter; an effect may dispose its connection");
    test_log log;
    log_clear(&log);
    registry reg;
    registry_init(&reg);
    dfs_fuser *f = registry_fuser(&reg, dfs_type_cstring());
    recorder e = rec_make("e", &log, REC_STR);
    e.fail_times = 1;
    e.fail_on_str = "bad";
    e.fail_code = 9;
    e.fail_message = "the effect rejected it";
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_connect(f, rec_effect, &e, rec_destroy, &c), "connect");
    CHECK_OK(registry_emit(&reg, "good"), "emit good");
    CHECK_STATUS(registry_emit(&reg, "bad"), DFS_ERR_CALLBACK, "emit bad: the effect fails, the emitter gets DFS_ERR_CALLBACK");
    CHECK_STR(dfs_last_error(), "the effect rejected it", "with the effect's message");
    CHECK_OK(registry_emit(&reg, "good again"), "the connection stays usable");
    CHECK_LOG(&log, "e:good e:bad! e:good again", "exact log");
    dfs_disposable_dispose(c);
    dfs_disposable_release(c);

    self_stop s = {&log, NULL, DFS_ERR_MEMORY};
    CHECK_OK(dfs_fuser_connect(f, self_stop_effect, &s, NULL, &s.self), "connect a self-stopping effect");
    CHECK_OK(registry_emit(&reg, "one"), "emit one");
    CHECK_OK(registry_emit(&reg, "stop"), "emit stop: the effect disposes its own connection");
    CHECK_OK(s.dispose_status, "dispose from inside the effect returned DFS_OK (no deadlock)");
    CHECK_OK(registry_emit(&reg, "two"), "emit two");
    CHECK_LOG(&log, "got:one got:stop", "nothing after the effect disposed its connection");
    CHECK_INT(registry_live(&reg), 0, "the source was disconnected");
    dfs_disposable_release(s.self);
    dfs_fuser_release(f);
    CHECK_INT(reg.destroyed + e.destroyed, 2, "destroyed once");
    registry_fini(&reg);
}

static void test_refusing_source(void) {
    check_section("a source that refuses to connect");
    test_log log;
    log_clear(&log);
    registry ok1, ok2, no;
    registry_init(&ok1);
    registry_init(&ok2);
    registry_init(&no);
    no.refuse = 4;
    dfs_fuser *kids[3] = {registry_fuser(&ok1, dfs_type_cstring()), registry_fuser(&ok2, dfs_type_cstring()),
                          registry_fuser(&no, dfs_type_cstring())};
    dfs_fuser *all = NULL;
    CHECK_OK(dfs_fuser_from_all(dfs_type_cstring(), kids, 3, &all), "from_all(ok, ok, refusing)");
    recorder e = rec_make("e", &log, REC_STR);
    dfs_disposable *c = (dfs_disposable *)(uintptr_t)0x5a5a;
    CHECK_STATUS(dfs_fuser_connect(all, rec_effect, &e, rec_destroy, &c), DFS_ERR_CALLBACK, "connect fails with DFS_ERR_CALLBACK");
    CHECK(c == NULL, "out is NULL");
    CHECK_STR(dfs_last_error(), "the registry refused the connection", "the source's message");
    CHECK(ok1.connects == 1 && ok1.disconnects == 1, "the first sibling was connected, then disconnected");
    CHECK(ok2.connects == 1 && ok2.disconnects == 1, "the second sibling was connected, then disconnected");
    CHECK_INT(no.disconnects, 0, "the refusing source is not disconnected");
    CHECK_INT(e.destroyed, 1, "the effect ctx was destroyed once");
    registry_emit(&ok1, "late");
    CHECK_LOG(&log, "", "nothing is delivered");

    /* Alone, it fails the same way. */
    dfs_set_error(NULL);
    CHECK_STATUS(dfs_fuser_connect(kids[2], rec_effect, &e, NULL, &c), DFS_ERR_CALLBACK, "connecting the refusing source alone fails");
    CHECK_ERROR_HAS("refused", "message (\"%s\")", dfs_last_error());
    CHECK(c == NULL, "out is NULL");

    no.refuse = 0;
    CHECK_OK(dfs_fuser_connect(all, rec_effect, &e, NULL, &c), "once it accepts, connect succeeds");
    registry_emit(&no, "now");
    CHECK_LOG(&log, "e:now", "and delivers");
    dfs_disposable_dispose(c);
    dfs_disposable_release(c);
    for (int i = 0; i < 3; i++) dfs_fuser_release(kids[i]);
    dfs_fuser_release(all);
    CHECK(ok1.destroyed == 1 && ok2.destroyed == 1 && no.destroyed == 1, "sources destroyed once");
    CHECK(ok1.connects == ok1.disconnects && ok2.connects == ok2.disconnects && no.connects == no.disconnects,
          "every connect was disconnected");
    registry_fini(&ok1);
    registry_fini(&ok2);
    registry_fini(&no);
}

/* ------------------------------------------------------------------------------------
 * Threads
 * ------------------------------------------------------------------------------------ */

/* Several threads emitting to one connection: events are delivered one at a time. */
typedef struct serial_counter {
    volatile long count;
    volatile int inside;
    atomic_int overlaps;
} serial_counter;

static int serial_effect(const void *value, void *ctx) {
    (void)value;
    serial_counter *c = ctx;
    if (c->inside) atomic_fetch_add(&c->overlaps, 1);
    c->inside = 1;
    long seen = c->count;
    if ((seen & 63) == 0) sched_yield();
    c->count = seen + 1;
    c->inside = 0;
    return 0;
}

typedef struct emitter {
    registry *reg;
    int count;
    atomic_int *errors;
} emitter;

static void *emit_many(void *arg) {
    emitter *e = arg;
    for (int i = 0; i < e->count; i++) {
        if (registry_emit(e->reg, IV(i)) != DFS_OK) atomic_fetch_add(e->errors, 1);
    }
    return NULL;
}

static void test_concurrent_emits(void) {
    check_section("emits from several threads reach one connection one at a time");
    int per_thread = check_scale(20000, 1000);
    registry reg;
    registry_init(&reg);
    dfs_fuser *f = registry_fuser(&reg, dfs_type_pointer());
    serial_counter sc = {0, 0, 0};
    atomic_int errors = 0;
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_connect(f, serial_effect, &sc, NULL, &c), "connect");
    pthread_t threads[4];
    emitter em[4];
    for (int t = 0; t < 4; t++) {
        em[t] = (emitter){&reg, per_thread, &errors};
        pthread_create(&threads[t], NULL, emit_many, &em[t]);
    }
    for (int t = 0; t < 4; t++) pthread_join(threads[t], NULL);
    CHECK_INT(atomic_load(&errors), 0, "every emission returned DFS_OK");
    CHECK_INT(sc.count, 4L * per_thread, "no event lost (non-atomic counter)");
    CHECK_INT(atomic_load(&sc.overlaps), 0, "no two deliveries overlapped");
    dfs_disposable_dispose(c);
    dfs_disposable_release(c);
    dfs_fuser_release(f);
    registry_fini(&reg);
}

/* Four threads connect and dispose while another emits continuously. */
typedef struct watched {
    atomic_int disposed;   /* set right after dfs_disposable_dispose returned */
    atomic_int received;
    atomic_int late;       /* events received after dispose returned: must stay 0 */
    atomic_int destroyed;
} watched;

static int watched_effect(const void *value, void *ctx) {
    (void)value;
    watched *w = ctx;
    if (atomic_load(&w->disposed)) atomic_fetch_add(&w->late, 1);
    atomic_fetch_add(&w->received, 1);
    return 0;
}

static void watched_destroy(void *ctx) { atomic_fetch_add(&((watched *)ctx)->destroyed, 1); }

typedef struct churner {
    dfs_fuser *fuser;
    watched *slots;
    int count;
    atomic_int *errors;
} churner;

static void *connect_dispose_many(void *arg) {
    churner *c = arg;
    for (int i = 0; i < c->count; i++) {
        watched *w = &c->slots[i];
        dfs_disposable *d = NULL;
        if (dfs_fuser_connect(c->fuser, watched_effect, w, watched_destroy, &d) != DFS_OK) {
            atomic_fetch_add(c->errors, 1);
            continue;
        }
        /* Wait (bounded) for a few events so that dispose races with deliveries. */
        for (int spin = 0; spin < 2000 && atomic_load(&w->received) < 2; spin++) sched_yield();
        if (dfs_disposable_dispose(d) != DFS_OK) atomic_fetch_add(c->errors, 1);
        atomic_store(&w->disposed, 1);
        for (int spin = 0; spin < 20; spin++) sched_yield();
        if (dfs_disposable_release(d) != DFS_OK) atomic_fetch_add(c->errors, 1);
    }
    return NULL;
}

typedef struct stream {
    registry *reg;
    atomic_int stop;
    atomic_long emitted;
    atomic_int bad_status;
} stream;

static void *emit_until_stopped(void *arg) {
    stream *s = arg;
    while (!atomic_load(&s->stop)) {
        dfs_dispatch *snapshot[SLOTS];
        pthread_mutex_lock(&s->reg->mutex);
        memcpy(snapshot, s->reg->slots, sizeof snapshot);
        pthread_mutex_unlock(&s->reg->mutex);
        for (int i = 0; i < SLOTS; i++) {
            if (snapshot[i] == NULL) continue;
            /* The dispatch may have been disconnected since the snapshot: then the
             * emission must fail cleanly with DFS_ERR_HANDLE (or be dropped). */
            dfs_status st = dfs_dispatch_emit(snapshot[i], IV(1));
            if (st != DFS_OK && st != DFS_ERR_HANDLE) atomic_fetch_add(&s->bad_status, 1);
            atomic_fetch_add(&s->emitted, 1);
        }
        sched_yield();
    }
    return NULL;
}

static void test_dispose_while_emitting(void) {
    check_section("no event after dispose returned, with 4 threads connecting/disposing while another emits");
    int per_thread = check_scale(300, 25);
    registry reg;
    registry_init(&reg);
    dfs_fuser *f = registry_fuser(&reg, dfs_type_pointer());
    watched *slots = calloc((size_t)4 * per_thread, sizeof *slots);
    atomic_int errors = 0;
    stream s;
    s.reg = &reg;
    atomic_init(&s.stop, 0);
    atomic_init(&s.emitted, 0);
    atomic_init(&s.bad_status, 0);
    pthread_t emitter_thread, workers[4];
    churner ch[4];
    pthread_create(&emitter_thread, NULL, emit_until_stopped, &s);
    for (int t = 0; t < 4; t++) {
        ch[t] = (churner){f, slots + (size_t)t * per_thread, per_thread, &errors};
        pthread_create(&workers[t], NULL, connect_dispose_many, &ch[t]);
    }
    for (int t = 0; t < 4; t++) pthread_join(workers[t], NULL);
    atomic_store(&s.stop, 1);
    pthread_join(emitter_thread, NULL);

    long late = 0, received = 0, destroyed = 0;
    for (int i = 0; i < 4 * per_thread; i++) {
        late += atomic_load(&slots[i].late);
        received += atomic_load(&slots[i].received);
        destroyed += atomic_load(&slots[i].destroyed) == 1;
    }
    CHECK_INT(atomic_load(&errors), 0, "connect, dispose and release all returned DFS_OK");
    CHECK_INT(late, 0, "no event reached an effect after its dispose returned (%ld delivered)", received);
    CHECK(received > 0, "events were delivered meanwhile (%ld emissions)", (long)atomic_load(&s.emitted));
    CHECK_INT(atomic_load(&s.bad_status), 0, "every emission returned DFS_OK or DFS_ERR_HANDLE");
    CHECK_INT(destroyed, 4L * per_thread, "every effect ctx was destroyed exactly once");
    CHECK_INT(reg.connects, reg.disconnects, "every connect was disconnected (%d)", reg.connects);
    CHECK_INT(registry_live(&reg), 0, "no dispatch left registered");
    free(slots);
    dfs_fuser_release(f);
    CHECK_INT(reg.destroyed, 1, "source destroyed once");
    registry_fini(&reg);
}

/* A source whose disconnect sends one last event through its dispatch, and notes how
 * far the connection's effect had been destroyed by then. */
typedef struct flushing {
    dfs_dispatch *dispatch;
    const recorder *effect;
    int effect_destroyed_at_disconnect;
    dfs_status last_status;
} flushing;

static int flushing_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    ((flushing *)ctx)->dispatch = dispatch;
    *connection = ctx;
    return 0;
}

static void flushing_disconnect(void *connection, void *ctx) {
    (void)connection;
    flushing *f = ctx;
    f->effect_destroyed_at_disconnect = f->effect->destroyed;
    f->last_status = dfs_dispatch_emit(f->dispatch, "last");
}

static void test_disconnecting_source(void) {
    check_section("a source that sends while it disconnects: dropped; the effect is destroyed after the sources");
    test_log log;
    log_clear(&log);
    recorder e = rec_make("e", &log, REC_STR);
    flushing source = {NULL, &e, -1, DFS_ERR_CALLBACK};
    dfs_fuser *f = NULL;
    CHECK_OK(dfs_fuser_from(dfs_type_cstring(), flushing_connect, flushing_disconnect, &source, NULL, &f), "from");
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_connect(f, rec_effect, &e, rec_destroy, &c), "connect");
    CHECK_OK(dfs_dispatch_emit(source.dispatch, "a"), "emit a");
    CHECK_OK(dfs_disposable_dispose(c), "dispose");
    CHECK_OK(source.last_status, "the event sent while disconnecting is accepted");
    CHECK_LOG(&log, "e:a", "and dropped: the connection was disposed");
    CHECK_INT(source.effect_destroyed_at_disconnect, 0, "the effect is not yet destroyed while the sources disconnect");
    CHECK_INT(e.destroyed, 1, "it is destroyed once dispose returns");
    dfs_disposable_release(c);
    dfs_fuser_release(f);
}

/* ------------------------------------------------------------------------------------
 * A transform is part of its connection's delivery: dispose waits for an event inside it.
 * ------------------------------------------------------------------------------------ */

typedef struct held_transform {
    atomic_int inside;          /* the transform has started */
    atomic_int release;         /* the transform may return */
    atomic_int dispose_returned;
    atomic_int late;            /* transform or effect calls after dispose returned */
    atomic_int delivered;
    dfs_disposable *connection;
    registry *reg;
} held_transform;

static void pause_briefly(void) {
    struct timespec ts = {0, 1000000};
    nanosleep(&ts, NULL);
}

static int held_identity(const void *value, const void **out, void *ctx) {
    held_transform *h = ctx;
    atomic_store(&h->inside, 1);
    for (int i = 0; i < 5000 && !atomic_load(&h->release); i++) pause_briefly();
    if (atomic_load(&h->dispose_returned)) atomic_fetch_add(&h->late, 1);
    *out = value;
    return 0;
}

static int held_effect(const void *value, void *ctx) {
    held_transform *h = ctx;
    if (atomic_load(&h->dispose_returned)) atomic_fetch_add(&h->late, 1);
    if ((long)(intptr_t)value == 7) atomic_fetch_add(&h->delivered, 1);
    return 0;
}

static void *held_emit(void *arg) {
    held_transform *h = arg;
    registry_emit(h->reg, IV(7));
    return NULL;
}

static void *held_dispose(void *arg) {
    held_transform *h = arg;
    dfs_disposable_dispose(h->connection);
    atomic_store(&h->dispose_returned, 1);
    return NULL;
}

static void test_dispose_waits_for_transform(void) {
    check_section("dispose waits for an event inside a transform; a transform runs under the connection's lock");
    registry reg;
    registry_init(&reg);
    held_transform h = {0};
    h.reg = &reg;
    dfs_fuser *source = registry_fuser(&reg, dfs_type_pointer());
    dfs_fuser *extracted = NULL;
    CHECK_OK(dfs_fuser_extract(dfs_type_pointer(), held_identity, &h, NULL, source, &extracted), "extract");
    CHECK_OK(dfs_fuser_connect(extracted, held_effect, &h, NULL, &h.connection), "connect");
    pthread_t emitter_thread, disposer_thread;
    pthread_create(&emitter_thread, NULL, held_emit, &h);
    while (!atomic_load(&h.inside)) pause_briefly();
    pthread_create(&disposer_thread, NULL, held_dispose, &h);
    for (int i = 0; i < 300; i++) pause_briefly();
    CHECK_INT(atomic_load(&h.dispose_returned), 0, "dispose has not returned while the transform runs");
    atomic_store(&h.release, 1);
    pthread_join(disposer_thread, NULL);
    pthread_join(emitter_thread, NULL);
    CHECK_INT(atomic_load(&h.late), 0, "no transform or effect ran after dispose returned");
    CHECK_INT(atomic_load(&h.delivered), 1, "the event inside the transform reached the effect before dispose returned");
    CHECK_INT(registry_emit(&reg, IV(7)), DFS_OK, "an emission after dispose is dropped");
    CHECK_INT(atomic_load(&h.delivered), 1, "nothing delivered after dispose");
    dfs_disposable_release(h.connection);
    dfs_fuser_release(extracted);
    dfs_fuser_release(source);
    registry_fini(&reg);
}

/* A transform that disposes its own connection is the last user code of its event. */
typedef struct self_disposing {
    test_log *log;
    dfs_disposable *connection;
} self_disposing;

static int disposing_inner(const void *value, const void **out, void *ctx) {
    self_disposing *s = ctx;
    log_add(s->log, "inner:%ld", (long)(intptr_t)value);
    if ((long)(intptr_t)value == 2) dfs_disposable_dispose(s->connection);
    *out = value;
    return 0;
}

static int disposing_outer(const void *value, const void **out, void *ctx) {
    self_disposing *s = ctx;
    log_add(s->log, "outer:%ld", (long)(intptr_t)value);
    *out = value;
    return 0;
}

static int disposing_effect(const void *value, void *ctx) {
    log_add(((self_disposing *)ctx)->log, "effect:%ld", (long)(intptr_t)value);
    return 0;
}

static void test_transform_disposes_its_connection(void) {
    check_section("a transform that disposes its own connection is the last user code of its event");
    test_log log;
    log_clear(&log);
    registry reg;
    registry_init(&reg);
    self_disposing s = {&log, NULL};
    dfs_fuser *source = registry_fuser(&reg, dfs_type_pointer());
    dfs_fuser *inner = NULL, *outer = NULL;
    CHECK_OK(dfs_fuser_extract(dfs_type_pointer(), disposing_inner, &s, NULL, source, &inner), "inner extract");
    CHECK_OK(dfs_fuser_extract(dfs_type_pointer(), disposing_outer, &s, NULL, inner, &outer), "outer extract");
    CHECK_OK(dfs_fuser_connect(outer, disposing_effect, &s, NULL, &s.connection), "connect");
    CHECK_OK(registry_emit(&reg, IV(1)), "emit 1");
    CHECK_OK(registry_emit(&reg, IV(2)), "emit 2, whose inner transform disposes the connection");
    CHECK_OK(registry_emit(&reg, IV(3)), "emit 3");
    CHECK_LOG(&log, "inner:1 outer:1 effect:1 inner:2", "nothing of event 2 runs after the dispose, nothing of 3 at all");
    CHECK_INT(registry_live(&reg), 0, "the source is disconnected");
    dfs_disposable_release(s.connection);
    dfs_fuser_release(outer);
    dfs_fuser_release(inner);
    dfs_fuser_release(source);
    registry_fini(&reg);
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_from();
    test_multiple_connections();
    test_from_all();
    test_extract();
    test_effect_failure_and_self_dispose();
    test_refusing_source();
    test_concurrent_emits();
    test_dispose_while_emitting();
    test_disconnecting_source();
    test_dispose_waits_for_transform();
    test_transform_disposes_its_connection();
    return check_finish();
}
