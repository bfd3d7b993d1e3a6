/*
 * test_loop_connection.c — a loop's source connection (dfs_loop_connect) disposed while
 * the loop's turn is still inside the source's connect: from another thread, and from
 * inside that connect. Once dfs_disposable_dispose has returned, no event of the source
 * is accepted (its emits return DFS_OK and the update never sees them), the dispose did
 * not wait for the connect, and the source is disconnected once, when its connect
 * returns, on the connecting thread. And the connecting turn does not wait for a
 * delivery that waits for it.
 */
#include "check.h"

#include <pthread.h>
#include <semaphore.h>
#include <time.h>
#include <unistd.h>

#define EVENT(n) ((const void *)(intptr_t)(n))
#define VALUE(p) ((long)(intptr_t)(p))

/* A source whose connect keeps its dispatch, posts `connecting` and waits for `go_on`
 * (unless `dispose_inside` is set: it then emits, disposes that registration and emits
 * again, without waiting). */
typedef struct slow_source {
    sem_t connecting, go_on;
    dfs_dispatch *volatile dispatch;
    dfs_disposable *volatile dispose_inside;
    pthread_t connect_thread;
    volatile int disconnects;
    pthread_t disconnect_thread;
    volatile int destroyed;
    volatile int wrong_connection;
} slow_source;

static int slow_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    slow_source *s = ctx;
    s->dispatch = dispatch;
    s->connect_thread = pthread_self();
    *connection = s;
    if (s->dispose_inside != NULL) {
        CHECK_OK(dfs_dispatch_emit(dispatch, EVENT(1)), "an emit inside the connect");
        CHECK_OK(dfs_disposable_dispose(s->dispose_inside), "the registration disposed from the connect");
        CHECK_OK(dfs_dispatch_emit(dispatch, EVENT(10)), "an emit after that dispose: dropped");
        CHECK_INT(s->disconnects, 0, "not disconnected inside its own connect");
        return 0;
    }
    sem_post(&s->connecting);
    sem_wait(&s->go_on);
    return 0;
}

static void slow_disconnect(void *connection, void *ctx) {
    slow_source *s = ctx;
    if (connection != s) s->wrong_connection = 1;
    s->disconnect_thread = pthread_self();
    s->disconnects++;
}

static void slow_destroy(void *ctx) { ((slow_source *)ctx)->destroyed++; }

static dfs_type *event_type;

/* The model counts the events added to it; event 0 blocks its step until `end_step`. */
typedef struct stepper {
    sem_t in_step, end_step;
    volatile long total;
} stepper;

static int add_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    stepper *st = ctx;
    (void)model;
    (void)next;
    if (VALUE(event) == 0) {
        sem_post(&st->in_step);
        sem_wait(&st->end_step);
    }
    st->total += VALUE(event);
    return 0;
}

static dfs_loop *new_loop(stepper *st) {
    sem_init(&st->in_step, 0, 0);
    sem_init(&st->end_step, 0, 0);
    st->total = 0;
    dfs_loop_config config = {0};
    config.model_type = event_type;
    config.event_type = event_type;
    config.effect_type = event_type;
    config.update = add_update;
    config.update_ctx = st;
    dfs_loop *loop = NULL;
    CHECK_OK(dfs_loop_new(&config, &loop), "a loop");
    return loop;
}

static dfs_fuser *new_source(slow_source *s) {
    sem_init(&s->connecting, 0, 0);
    sem_init(&s->go_on, 0, 0);
    dfs_fuser *fuser = NULL;
    CHECK_OK(dfs_fuser_from(event_type, slow_connect, slow_disconnect, s, slow_destroy, &fuser), "a source");
    return fuser;
}

typedef struct drain_call {
    dfs_loop *loop;
    dfs_status status;
} drain_call;

static void *dispatch_blocking_step(void *arg) {
    drain_call *call = arg;
    call->status = dfs_loop_dispatch(call->loop, EVENT(0));
    return NULL;
}

static void *dispose_on_a_thread(void *arg) {
    CHECK_OK(dfs_disposable_dispose(arg), "the dispose on another thread");
    return NULL;
}

/* Thread A dispatches event 0, whose step blocks; the connect is queued behind it; once
 * A's turn is inside the source's connect, the connection is disposed (on this thread,
 * or on a third), and the source emits again before its connect returns. */
static void test_dispose_while_the_turn_connects(int dispose_elsewhere) {
    check_section(dispose_elsewhere ? "a dispose on a third thread while the turn connects the source"
                                    : "a dispose on the registering thread while the turn connects the source");
    stepper st;
    slow_source s = {0};
    dfs_loop *loop = new_loop(&st);
    dfs_fuser *fuser = new_source(&s);

    drain_call call = {loop, DFS_ERR_ARGUMENT};
    pthread_t turn;
    pthread_create(&turn, NULL, dispatch_blocking_step, &call);
    sem_wait(&st.in_step);
    dfs_disposable *connection = NULL;
    CHECK_OK(dfs_loop_connect(loop, fuser, &connection), "the connect is queued behind the step");
    sem_post(&st.end_step);
    sem_wait(&s.connecting);

    CHECK_OK(dfs_dispatch_emit(s.dispatch, EVENT(1)), "an emit during the connect, before the dispose");
    if (dispose_elsewhere) {
        pthread_t disposer;
        pthread_create(&disposer, NULL, dispose_on_a_thread, connection);
        pthread_join(disposer, NULL);
    } else {
        CHECK_OK(dfs_disposable_dispose(connection), "the dispose returns while the source still connects");
    }
    CHECK_INT(s.disconnects, 0, "not disconnected before its connect returns");
    CHECK_OK(dfs_dispatch_emit(s.dispatch, EVENT(10)), "an emit after the dispose returned: dropped");

    sem_post(&s.go_on);
    pthread_join(turn, NULL);
    CHECK_OK(call.status, "the turn's dispatch");
    CHECK_INT(s.disconnects, 1, "disconnected once its connect returned");
    CHECK(!s.wrong_connection, "the disconnect gets the connection");
    CHECK(pthread_equal(s.disconnect_thread, s.connect_thread), "on the connecting thread");
    CHECK_INT(st.total, 1, "the event before the dispose was handled, the one after it was not");

    CHECK_OK(dfs_loop_stop(loop), "a stop");
    CHECK_OK(dfs_loop_start(loop), "a restart does not connect the disposed registration again");
    CHECK_INT(s.disconnects, 1, "disconnected once in all");
    CHECK_OK(dfs_disposable_release(connection), "the connection released");
    dfs_fuser_release(fuser);
    dfs_loop_release(loop);
    CHECK_INT(s.destroyed, 1, "the source's context destroyed once");
}

/* The source's connect, on the loop's turn, disposes its own registration. */
static void test_dispose_from_inside_the_connect(void) {
    check_section("a source that disposes its registration from its connect");
    stepper st;
    slow_source s = {0};
    dfs_loop *loop = new_loop(&st);
    dfs_fuser *fuser = new_source(&s);
    dfs_disposable *connection = NULL;
    CHECK_OK(dfs_loop_stop(loop), "stopped, so that the connect waits for the start");
    CHECK_OK(dfs_loop_connect(loop, fuser, &connection), "registered");
    s.dispose_inside = connection;
    CHECK_OK(dfs_loop_start(loop), "the start connects the source");
    CHECK_INT(s.disconnects, 1, "disconnected once its connect returned");
    CHECK_INT(st.total, 1, "the emit before the dispose was handled, the one after it was not");
    CHECK_OK(dfs_loop_stop(loop), "a stop");
    CHECK_OK(dfs_loop_start(loop), "a restart");
    CHECK_INT(s.disconnects, 1, "not connected again");
    CHECK_OK(dfs_disposable_release(connection), "the connection released");
    dfs_fuser_release(fuser);
    dfs_loop_release(loop);
    CHECK_INT(s.destroyed, 1, "the source's context destroyed once");
}

/* ------------------------------------------------------------------------------------
 * A connect that hands its dispatch to a thread E: E emits 1, then 2, whose transform
 * stops the loop (waiting for the turn, which is inside the connect). The registration
 * is disposed meanwhile: by that transform before it stops the loop (from inside E's
 * delivery), or by a third thread (which waits for E's delivery). The turn must not wait
 * for E's delivery when its connect returns: the sources are disconnected once the
 * dispose is through, on E or on the third thread.
 * ------------------------------------------------------------------------------------ */

typedef struct handing {
    dfs_loop *loop;
    dfs_disposable *volatile registration;
    int dispose_in_transform;
    sem_t in_transform, disposed;
    pthread_t emitter;
    volatile int disconnects;
    pthread_t disconnect_thread;
    dfs_status stop_status, dispose_status, emit_status[2];
} handing;

static int stopping_transform(const void *value, const void **out, void *ctx) {
    handing *h = ctx;
    if (VALUE(value) == 2) {
        if (h->dispose_in_transform) {
            h->dispose_status = dfs_disposable_dispose(h->registration);
            sem_post(&h->disposed);
        }
        sem_post(&h->in_transform); /* for the connect */
        if (!h->dispose_in_transform) sem_post(&h->in_transform); /* for the third thread */
        h->stop_status = dfs_loop_stop(h->loop);
    }
    *out = value;
    return 0;
}

static dfs_dispatch *volatile handed_dispatch;

/* The checks of other threads are made by the main thread once they are joined: the
 * check counters are plain. */
static void *handed_emitter(void *arg) {
    handing *h = arg;
    h->emit_status[0] = dfs_dispatch_emit(handed_dispatch, EVENT(1));
    h->emit_status[1] = dfs_dispatch_emit(handed_dispatch, EVENT(2));
    return NULL;
}

static int handing_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    handing *h = ctx;
    *connection = h;
    handed_dispatch = dispatch;
    pthread_create(&h->emitter, NULL, handed_emitter, h);
    sem_wait(&h->in_transform);
    if (h->dispose_in_transform) sem_wait(&h->disposed);
    else {
        /* lets the third thread's dispose begin (either order must work) */
        struct timespec pause = {0, 50000000};
        nanosleep(&pause, NULL);
    }
    return 0;
}

static void handing_disconnect(void *connection, void *ctx) {
    handing *h = ctx;
    (void)connection;
    h->disconnect_thread = pthread_self();
    h->disconnects++;
}

static void *dispose_when_in_transform(void *arg) {
    handing *h = arg;
    sem_wait(&h->in_transform);
    h->dispose_status = dfs_disposable_dispose(h->registration);
    return NULL;
}

static void test_dispose_while_a_delivery_waits_for_the_connecting_turn(int dispose_in_transform) {
    check_section(dispose_in_transform
                      ? "a transform disposes the registration, then stops the loop whose turn connects it"
                      : "a third thread disposes the registration while a transform stops the loop whose turn connects it");
    stepper st;
    handing h = {0};
    h.dispose_in_transform = dispose_in_transform;
    sem_init(&h.in_transform, 0, 0);
    sem_init(&h.disposed, 0, 0);
    h.loop = new_loop(&st);
    dfs_fuser *source = NULL, *fuser = NULL;
    CHECK_OK(dfs_fuser_from(event_type, handing_connect, handing_disconnect, &h, NULL, &source), "a source");
    CHECK_OK(dfs_fuser_extract(event_type, stopping_transform, &h, NULL, source, &fuser), "its transform");
    CHECK_OK(dfs_loop_stop(h.loop), "stopped");
    dfs_disposable *registration = NULL;
    CHECK_OK(dfs_loop_connect(h.loop, fuser, &registration), "registered");
    h.registration = registration;
    pthread_t third;
    if (!dispose_in_transform) pthread_create(&third, NULL, dispose_when_in_transform, &h);
    alarm(60); /* a deadlock ends the test here rather than at ctest's timeout */
    dfs_status started = dfs_loop_start(h.loop);
    CHECK(started == DFS_OK || started == DFS_ERR_STOPPED, "the start, whose turn connects the source: %d", started);
    pthread_join(h.emitter, NULL);
    if (!dispose_in_transform) pthread_join(third, NULL);
    alarm(0);
    CHECK_OK(h.emit_status[0], "E's first emit");
    CHECK_OK(h.emit_status[1], "E's second emit, whose transform stops the loop");
    CHECK_OK(h.dispose_status, dispose_in_transform ? "the transform's dispose" : "the third thread's dispose");
    CHECK_OK(h.stop_status, "the transform's stop");
    CHECK_INT(h.disconnects, 1, "disconnected once");
    CHECK(dispose_in_transform ? pthread_equal(h.disconnect_thread, h.emitter) : 1,
          "by E, once its delivery was over");
    CHECK_INT(st.total, 1, "the event before the dispose was handled");
    CHECK_OK(dfs_loop_start(h.loop), "a restart");
    CHECK_INT(h.disconnects, 1, "not connected again");
    CHECK_OK(dfs_disposable_release(registration), "released");
    dfs_fuser_release(fuser);
    dfs_fuser_release(source);
    dfs_loop_release(h.loop);
}

/* ------------------------------------------------------------------------------------
 * Two disposes of one registration: the test's thread disposes it while E's delivery is
 * under way (that dispose waits for the delivery); E's transform then disposes it too
 * and emits again, nested. The transform's dispose must not return while the connection
 * still delivers: the event it was called for is its last user code, and the nested
 * event is dropped.
 * ------------------------------------------------------------------------------------ */

typedef struct twice {
    dfs_dispatch *volatile dispatch;
    dfs_disposable *volatile registration;
    sem_t in_transform;
    volatile int transforms_after_own_dispose, after_own_dispose;
    dfs_status dispose_status, nested_status, emit_status;
} twice;

static int twice_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    ((twice *)ctx)->dispatch = dispatch;
    *connection = NULL;
    return 0;
}

static int twice_transform(const void *value, const void **out, void *ctx) {
    twice *t = ctx;
    if (t->after_own_dispose) t->transforms_after_own_dispose++;
    if (VALUE(value) == 2) {
        sem_post(&t->in_transform);
        /* lets the test's dispose reach the connection's lock (either order must work) */
        struct timespec pause = {0, 100000000};
        nanosleep(&pause, NULL);
        t->dispose_status = dfs_disposable_dispose(t->registration);
        t->after_own_dispose = 1;
        t->nested_status = dfs_dispatch_emit(t->dispatch, EVENT(100));
    }
    *out = value;
    return 0;
}

static void *twice_emitter(void *arg) {
    twice *t = arg;
    t->emit_status = dfs_dispatch_emit(t->dispatch, EVENT(2));
    return NULL;
}

static void test_a_second_dispose_waits_like_the_first(void) {
    check_section("a second dispose, from inside the delivery the first waits for");
    stepper st;
    twice t = {0};
    sem_init(&t.in_transform, 0, 0);
    dfs_loop *loop = new_loop(&st);
    dfs_fuser *source = NULL, *fuser = NULL;
    CHECK_OK(dfs_fuser_from(event_type, twice_connect, NULL, &t, NULL, &source), "a source");
    CHECK_OK(dfs_fuser_extract(event_type, twice_transform, &t, NULL, source, &fuser), "its transform");
    dfs_disposable *registration = NULL;
    CHECK_OK(dfs_loop_connect(loop, fuser, &registration), "registered and connected");
    t.registration = registration;
    CHECK(t.dispatch != NULL, "connected");
    pthread_t emitter;
    pthread_create(&emitter, NULL, twice_emitter, &t);
    sem_wait(&t.in_transform);
    CHECK_OK(dfs_disposable_dispose(registration), "the first dispose, waiting for E's delivery");
    pthread_join(emitter, NULL);
    CHECK_OK(t.emit_status, "E's emit");
    CHECK_OK(t.dispose_status, "the transform's dispose");
    CHECK(t.nested_status == DFS_OK || t.nested_status == DFS_ERR_HANDLE, "the nested emit: %d", t.nested_status);
    CHECK_INT(t.transforms_after_own_dispose, 0, "no transform after the transform's own dispose returned");
    CHECK_INT(st.total, 0, "neither the event whose transform disposed (as for a fuser's connection) nor the nested one reached the loop");
    CHECK_OK(dfs_disposable_release(registration), "released");
    dfs_fuser_release(fuser);
    dfs_fuser_release(source);
    dfs_loop_release(loop);
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    event_type = dfs_type_pointer();
    test_dispose_while_the_turn_connects(0);
    test_dispose_while_the_turn_connects(1);
    test_dispose_from_inside_the_connect();
    test_dispose_while_a_delivery_waits_for_the_connecting_turn(1);
    test_dispose_while_a_delivery_waits_for_the_connecting_turn(0);
    test_a_second_dispose_waits_like_the_first();
    dfs_type_release(event_type);
    return check_finish();
}
