/*
 * loop_bench.c — Loop benchmark (C): events per second through a dfs_loop against a
 * hand-written queue + reducer + render, in one process; medians and minima of
 * interleaved rounds.
 *
 *   diffuser_bench_loop_c [--rounds N] [--tsv] [--only render-100|no-render|source|gear|effects]
 *
 * render-100: a trivial update (a new model with one of 100 leaves bumped) and a render
 *   through a diffuser of 100 leaves (dfs_loop_render; each leaf a dfs_diffuser_map_field
 *   of a long into a sink), against a hand-written render comparing 100 cached leaves,
 *   and against the hand-written queue + reducer running the same diffuser
 *   (hand+diffuser: the loop's own share is the difference between that and the loop).
 * no-render: a trivial update (a counter carried in the model pointer) and nothing
 *   observing the loop.
 * source: no-render's loop fed through a source: each event is emitted by a source of
 *   dfs_fuser_from (through the dispatch its connect callback kept) that the loop
 *   connected (dfs_loop_connect), against the same kind of source connected with
 *   dfs_fuser_connect to the hand-written loop's dispatch: the difference is what a
 *   loop's source connection adds to a plain connection.
 * gear: no-render's loop fed through a gear: each event is sent into a dfs_gear
 *   (dfs_gear_send) the loop is attached to by one feedback turning each gear event into
 *   the loop's event (dfs_loop_attach_to_gear, the event itself), against a hand-written
 *   bus (subscribers called in turn on the sending thread) that the hand-written loop's
 *   dispatch subscribed to. The C API has no plain subscription to a gear (a gear reaches
 *   only loops, through attached feedbacks), so unlike Swift's baseline this one is not
 *   the library's gear: the difference is the gear's own sending and the attachment.
 * effects: no-render's loop whose update gives, with each new model, one effect (the
 *   event itself, dfs_next_effect) to one handler without an executor (it runs inside
 *   the step) that passes it to the sink, against the hand-written counter loop handing
 *   the same effect to the sink after each reducer call.
 *
 * Both sides call the same reducer. Models of render-100 are reference-counted boxes
 * (the type's retain and release), as a C program keeping immutable models would have;
 * single-threaded, so the counts are plain ints. Events travel in the pointer
 * (dfs_type_pointer). Every event reaches an idle loop from the benchmark's thread, and
 * the loop handles it before dfs_loop_dispatch (or dfs_dispatch_emit, dfs_gear_send)
 * returns (the caller's executor).
 *
 * One program because both sides share the models and reducers below, and
 * check_same_work compares their results before anything is timed: a reader sees in one
 * file that the loop and the hand-written queue do the same work and are timed alike.
 */
#include <diffuser.h>

#include <malloc.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { LEAVES = 100, QUEUE = 64 };

/* ---- Models, reducers, sink (shared by the loop and the baselines) ------------------ */

typedef struct leaves {
    int refs;
    long values[LEAVES];
} leaves;

static leaves *leaves_new(void) {
    leaves *m = calloc(1, sizeof *m);
    if (m == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    m->refs = 1;
    return m;
}

static void leaves_release(const leaves *m) {
    leaves *box = (leaves *)m;
    if (--box->refs == 0) free(box);
}

/* The trivial update of render-100: a new model with leaf `event % 100` bumped. */
static leaves *bump(const leaves *model, intptr_t event) {
    leaves *next = leaves_new();
    memcpy(next->values, model->values, sizeof next->values);
    next->values[event % LEAVES] += 1;
    return next;
}

/* The trivial update of no-render: a counter. */
static intptr_t add(intptr_t model, intptr_t event) { return model + event; }

static uint64_t sink_accumulator;

__attribute__((noinline)) static void sink(long value) { sink_accumulator = sink_accumulator * 31 + (uint64_t)value; }

/* ---- The library's side ------------------------------------------------------------- */

static int leaves_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return a == b || memcmp(((const leaves *)a)->values, ((const leaves *)b)->values, sizeof(long) * LEAVES) == 0;
}

static const void *leaves_retain(const void *v, void *ctx) {
    (void)ctx;
    ((leaves *)v)->refs++;
    return v;
}

static void leaves_release_value(const void *v, void *ctx) {
    (void)ctx;
    leaves_release(v);
}

static dfs_type *leaves_type;

static void must(dfs_status status, const char *what) {
    if (status != DFS_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, dfs_status_name(status), dfs_last_error());
        exit(1);
    }
}

static int sink_leaf(const void *value, void *ctx) {
    (void)ctx;
    sink((long)(intptr_t)value);
    return 0;
}

/* into_all(map_field(leaf i, into(sink)) for each of the 100 leaves). */
static dfs_diffuser *make_screen(void) {
    dfs_diffuser *children[LEAVES];
    for (int i = 0; i < LEAVES; i++) {
        dfs_diffuser *leaf;
        must(dfs_diffuser_into(dfs_type_pointer(), sink_leaf, NULL, NULL, &leaf), "into");
        must(dfs_diffuser_map_field(leaves_type, offsetof(leaves, values) + (size_t)i * sizeof(long), sizeof(long),
                                    leaf, &children[i]),
             "map_field");
        dfs_diffuser_release(leaf);
    }
    dfs_diffuser *screen;
    must(dfs_diffuser_into_all(leaves_type, children, LEAVES, &screen), "into_all");
    for (int i = 0; i < LEAVES; i++) dfs_diffuser_release(children[i]);
    return screen;
}

static int bump_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    return dfs_next_model(next, bump(model, (intptr_t)event)) == DFS_OK ? 0 : 1;
}

static int add_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    return dfs_next_model(next, (const void *)add((intptr_t)model, (intptr_t)event)) == DFS_OK ? 0 : 1;
}

/* add_update that also gives the event itself as the step's one effect. */
static int add_effect_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    (void)ctx;
    return dfs_next_model(next, (const void *)add((intptr_t)model, (intptr_t)event)) == DFS_OK &&
                   dfs_next_effect(next, event) == DFS_OK
               ? 0
               : 1;
}

/* The handler of effects: the effect to the sink. */
static int sink_effect(const void *effect, dfs_job *job, void *ctx) {
    (void)job;
    (void)ctx;
    sink((long)(intptr_t)effect);
    return 0;
}

typedef struct library_loop {
    dfs_loop *loop;
    dfs_disposable *rendering;
} library_loop;

/* `handle`: the loop's one effect handler, run inside the step (no executor); NULL for none. */
static void *library_loop_new(dfs_type *model_type, const void *model, dfs_update_fn update, int render,
                              dfs_handler_fn handle) {
    library_loop *self = calloc(1, sizeof *self);
    dfs_handler handler = {.fn = handle}; /* copied by dfs_loop_new */
    dfs_loop_config config = {
        .model_type = model_type,
        .event_type = dfs_type_pointer(),
        .effect_type = dfs_type_pointer(),
        .model = model,
        .update = update,
        .handlers = &handler,
        .handler_count = handle != NULL,
    };
    must(dfs_loop_new(&config, &self->loop), "loop_new");
    if (render) {
        dfs_diffuser *screen = make_screen();
        must(dfs_loop_render(self->loop, screen, &self->rendering), "loop_render");
        dfs_diffuser_release(screen);
    }
    return self;
}

static void *library_render_new(void) {
    leaves *first = leaves_new();
    void *self = library_loop_new(leaves_type, first, bump_update, 1, NULL);
    leaves_release(first); /* the loop retained it */
    return self;
}

static void *library_counter_new(void) {
    return library_loop_new(dfs_type_pointer(), (const void *)1, add_update, 0, NULL);
}

static void *library_effects_new(void) {
    return library_loop_new(dfs_type_pointer(), (const void *)1, add_effect_update, 0, sink_effect);
}

static void library_dispatch(void *self, intptr_t event) {
    if (dfs_loop_dispatch(((library_loop *)self)->loop, (const void *)event) != DFS_OK) {
        fprintf(stderr, "dispatch failed: %s\n", dfs_last_error());
        exit(1);
    }
}

static int read_sum(const void *model, void *ctx) {
    intptr_t *sum = ctx;
    if (*sum < 0) {
        *sum = (intptr_t)model; /* a counter */
    } else {
        for (int i = 0; i < LEAVES; i++) *sum += ((const leaves *)model)->values[i] * (i + 1);
    }
    return 0;
}

static intptr_t library_digest(void *self, int counter) {
    intptr_t sum = counter ? -1 : 0;
    must(dfs_loop_model(((library_loop *)self)->loop, read_sum, &sum), "loop_model");
    return sum;
}

static void library_free(void *self) {
    library_loop *l = self;
    if (l->rendering) dfs_disposable_release(l->rendering);
    dfs_loop_release(l->loop);
    free(l);
}

/* ---- The hand-written side: a queue drained by the dispatching thread (an event sent
 * during a step waits its turn, as in the loop), the reducer, a render -------------- */

typedef struct queue {
    intptr_t slots[QUEUE];
    int head, count;
} queue;

static void queue_push(queue *q, intptr_t event) {
    if (q->count == QUEUE) {
        fprintf(stderr, "queue full\n");
        exit(1);
    }
    q->slots[(q->head + q->count++) % QUEUE] = event;
}

static intptr_t queue_pop(queue *q) {
    intptr_t event = q->slots[q->head];
    q->head = (q->head + 1) % QUEUE;
    q->count--;
    return event;
}

typedef struct hand_loop {
    queue queue;
    int draining;
    const leaves *model;  /* render-100 */
    intptr_t counter;     /* no-render */
    long cache[LEAVES];   /* the hand-written render's */
    int rendered;
    dfs_diffuser *screen; /* hand+diffuser: the library's diffuser instead */
} hand_loop;

/* 100 cached leaves compared by hand (every leaf the first time). */
static void hand_render(hand_loop *h, const leaves *model) {
    for (int i = 0; i < LEAVES; i++) {
        if (!h->rendered || h->cache[i] != model->values[i]) {
            h->cache[i] = model->values[i];
            sink(model->values[i]);
        }
    }
    h->rendered = 1;
}

static void render(hand_loop *h, const leaves *model) {
    if (h->screen) must(dfs_diffuser_run(h->screen, model), "run");
    else hand_render(h, model);
}

static void *hand_render_make(int with_diffuser) {
    hand_loop *h = calloc(1, sizeof *h);
    h->model = leaves_new();
    if (with_diffuser) h->screen = make_screen();
    render(h, h->model);
    return h;
}

static void *hand_render_new(void) { return hand_render_make(0); }
static void *hand_diffuser_new(void) { return hand_render_make(1); }

static void *hand_counter_new(void) {
    hand_loop *h = calloc(1, sizeof *h);
    h->counter = 1;
    return h;
}

static void hand_render_dispatch(void *self, intptr_t event) {
    hand_loop *h = self;
    queue_push(&h->queue, event);
    if (h->draining) return;
    h->draining = 1;
    while (h->queue.count > 0) {
        const leaves *next = bump(h->model, queue_pop(&h->queue));
        render(h, next);
        leaves_release(h->model);
        h->model = next;
    }
    h->draining = 0;
}

static void hand_counter_dispatch(void *self, intptr_t event) {
    hand_loop *h = self;
    queue_push(&h->queue, event);
    if (h->draining) return;
    h->draining = 1;
    while (h->queue.count > 0) h->counter = add(h->counter, queue_pop(&h->queue));
    h->draining = 0;
}

/* The counter loop handing each event, as its effect, to the sink after the reducer. */
static void hand_effects_dispatch(void *self, intptr_t event) {
    hand_loop *h = self;
    queue_push(&h->queue, event);
    if (h->draining) return;
    h->draining = 1;
    while (h->queue.count > 0) {
        intptr_t next = queue_pop(&h->queue);
        h->counter = add(h->counter, next);
        sink((long)next);
    }
    h->draining = 0;
}

static intptr_t hand_digest(void *self, int counter) {
    hand_loop *h = self;
    if (counter) return h->counter;
    intptr_t sum = 0;
    for (int i = 0; i < LEAVES; i++) sum += h->model->values[i] * (i + 1);
    return sum;
}

static void hand_free(void *self) {
    hand_loop *h = self;
    if (h->model) leaves_release(h->model);
    if (h->screen) dfs_diffuser_release(h->screen);
    free(h);
}

/* ---- source: the counter loops fed through a source --------------------------------- */

/* The source: keeps the dispatch its connection gives it and emits each event sent. */
typedef struct output {
    dfs_dispatch *dispatch; /* NULL while disconnected */
} output;

static int output_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    ((output *)ctx)->dispatch = dispatch;
    *connection = ctx;
    return 0;
}

static void output_disconnect(void *connection, void *ctx) {
    (void)ctx;
    ((output *)connection)->dispatch = NULL;
}

typedef struct fed_loop {
    output output;
    void *loop; /* a library_loop, or a hand_loop (when `hand`) */
    int hand;
    dfs_fuser *fuser;
    dfs_disposable *feeding;
} fed_loop;

static int hand_counter_effect(const void *event, void *ctx) {
    hand_counter_dispatch(ctx, (intptr_t)event);
    return 0;
}

static void *fed_loop_new(int hand) {
    fed_loop *f = calloc(1, sizeof *f);
    f->hand = hand;
    must(dfs_fuser_from(dfs_type_pointer(), output_connect, output_disconnect, &f->output, NULL, &f->fuser),
         "fuser_from");
    if (hand) {
        f->loop = hand_counter_new();
        must(dfs_fuser_connect(f->fuser, hand_counter_effect, f->loop, NULL, &f->feeding), "fuser_connect");
    } else {
        f->loop = library_counter_new();
        must(dfs_loop_connect(((library_loop *)f->loop)->loop, f->fuser, &f->feeding), "loop_connect");
    }
    if (f->output.dispatch == NULL) { /* an idle loop connects its sources at once */
        fprintf(stderr, "the source was not connected\n");
        exit(1);
    }
    return f;
}

static void *library_source_new(void) { return fed_loop_new(0); }
static void *hand_source_new(void) { return fed_loop_new(1); }

static void output_send(void *self, intptr_t event) {
    if (dfs_dispatch_emit(((fed_loop *)self)->output.dispatch, (const void *)event) != DFS_OK) {
        fprintf(stderr, "emit failed: %s\n", dfs_last_error());
        exit(1);
    }
}

static intptr_t fed_digest(void *self, int counter) {
    fed_loop *f = self;
    return f->hand ? hand_digest(f->loop, counter) : library_digest(f->loop, counter);
}

static void fed_free(void *self) {
    fed_loop *f = self;
    must(dfs_disposable_dispose(f->feeding), "dispose");
    dfs_disposable_release(f->feeding);
    if (f->hand) hand_free(f->loop);
    else library_free(f->loop);
    dfs_fuser_release(f->fuser);
    free(f);
}

/* ---- gear: the counter loops fed through a gear ------------------------------------ */

/* The library's propagate: the gear event itself is the loop's event. */
static int same_event(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = value;
    return 1;
}

/* What a C program writes for a bus without the library: subscribers, each a callback
 * and its context, called in turn on the sending thread. Single-threaded: no lock. */
typedef struct hand_gear {
    struct {
        void (*fn)(intptr_t event, void *ctx);
        void *ctx;
    } subscribers[4];
    int count;
} hand_gear;

static void hand_gear_subscribe(hand_gear *g, void (*fn)(intptr_t event, void *ctx), void *ctx) {
    g->subscribers[g->count].fn = fn;
    g->subscribers[g->count++].ctx = ctx;
}

/* The hand-written loop's subscription: the gear event itself is the loop's event. */
static void hand_counter_hear(intptr_t event, void *ctx) { hand_counter_dispatch(ctx, event); }

typedef struct geared_loop {
    void *loop; /* a library_loop, or a hand_loop (when `hand`) */
    int hand;
    dfs_gear *gear;             /* the library's */
    dfs_disposable *attachment; /* the library's */
    hand_gear hand_gear;
} geared_loop;

static void *geared_loop_new(int hand) {
    geared_loop *g = calloc(1, sizeof *g);
    g->hand = hand;
    if (hand) {
        g->loop = hand_counter_new();
        hand_gear_subscribe(&g->hand_gear, hand_counter_hear, g->loop);
    } else {
        g->loop = library_counter_new();
        must(dfs_gear_new(dfs_type_pointer(), &g->gear), "gear_new");
        must(dfs_loop_attach_to_gear(((library_loop *)g->loop)->loop, g->gear, same_event, NULL, NULL,
                                     &g->attachment),
             "loop_attach_to_gear");
    }
    return g;
}

static void *library_gear_new(void) { return geared_loop_new(0); }
static void *hand_gear_new(void) { return geared_loop_new(1); }

static void library_gear_send(void *self, intptr_t event) {
    if (dfs_gear_send(((geared_loop *)self)->gear, (const void *)event) != DFS_OK) {
        fprintf(stderr, "gear send failed: %s\n", dfs_last_error());
        exit(1);
    }
}

static void hand_gear_send(void *self, intptr_t event) {
    hand_gear *g = &((geared_loop *)self)->hand_gear;
    for (int i = 0; i < g->count; i++) g->subscribers[i].fn(event, g->subscribers[i].ctx);
}

static intptr_t geared_digest(void *self, int counter) {
    geared_loop *g = self;
    return g->hand ? hand_digest(g->loop, counter) : library_digest(g->loop, counter);
}

static void geared_free(void *self) {
    geared_loop *g = self;
    if (g->hand) {
        hand_free(g->loop);
    } else {
        must(dfs_disposable_dispose(g->attachment), "dispose");
        dfs_disposable_release(g->attachment);
        library_free(g->loop);
        dfs_gear_release(g->gear);
    }
    free(g);
}

/* ---- Measuring ---------------------------------------------------------------------- */

typedef struct runner {
    const char *name;
    void *(*make)(void);
    void (*dispatch)(void *self, intptr_t event);
    intptr_t (*digest)(void *self, int counter);
    void (*destroy)(void *self);
} runner;

enum {
    LIBRARY_RENDER, HAND_RENDER, HAND_DIFFUSER, LIBRARY_COUNTER, HAND_COUNTER, LIBRARY_SOURCE, HAND_SOURCE,
    LIBRARY_GEAR, HAND_GEAR, LIBRARY_EFFECTS, HAND_EFFECTS, RUNNERS
};

static const runner runners[RUNNERS] = {
    {"library render-100", library_render_new, library_dispatch, library_digest, library_free},
    {"hand render-100", hand_render_new, hand_render_dispatch, hand_digest, hand_free},
    {"hand+diffuser render-100", hand_diffuser_new, hand_render_dispatch, hand_digest, hand_free},
    {"library no-render", library_counter_new, library_dispatch, library_digest, library_free},
    {"hand no-render", hand_counter_new, hand_counter_dispatch, hand_digest, hand_free},
    {"library source", library_source_new, output_send, fed_digest, fed_free},
    {"hand source", hand_source_new, output_send, fed_digest, fed_free},
    {"library gear", library_gear_new, library_gear_send, geared_digest, geared_free},
    {"hand gear", hand_gear_new, hand_gear_send, geared_digest, geared_free},
    {"library effects", library_effects_new, library_dispatch, library_digest, library_free},
    {"hand effects", hand_counter_new, hand_effects_dispatch, hand_digest, hand_free},
};

static const char *scenario_of(int r) {
    return r < LIBRARY_COUNTER  ? "render-100"
           : r < LIBRARY_SOURCE  ? "no-render"
           : r < LIBRARY_GEAR    ? "source"
           : r < LIBRARY_EFFECTS ? "gear"
                                 : "effects";
}

static uint64_t now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns per event over `events` events (events are 1, 2, ...: never NULL), after a warm-up. */
static double measure(const runner *r, int events) {
    void *self = r->make();
    for (intptr_t e = 1; e <= 1000; e++) r->dispatch(self, e);
    uint64_t start = now_ns();
    for (intptr_t e = 1; e <= events; e++) r->dispatch(self, e);
    uint64_t elapsed = now_ns() - start;
    r->destroy(self);
    malloc_trim(0);
    return (double)elapsed / events;
}

/* Before measuring: the loop and the baselines must reach the same models through the
 * same effects (sink sums), or the figures would compare different work. */
static void check_same_work(void) {
    uint64_t saved = sink_accumulator;
    intptr_t models[RUNNERS];
    uint64_t sinks[RUNNERS];
    for (int r = 0; r < RUNNERS; r++) {
        int counter = r >= LIBRARY_COUNTER; /* no-render, source, gear and effects: the same counter */
        sink_accumulator = 0;
        void *self = runners[r].make();
        for (intptr_t e = 1; e <= 1000; e++) runners[r].dispatch(self, e * 7);
        models[r] = runners[r].digest(self, counter);
        sinks[r] = sink_accumulator;
        runners[r].destroy(self);
        /* effects: the same counter, and its effects reach the sink as well */
        int reference = r >= LIBRARY_EFFECTS ? LIBRARY_EFFECTS : counter ? LIBRARY_COUNTER : LIBRARY_RENDER;
        if (models[r] != models[reference] || sinks[r] != sinks[reference]) {
            fprintf(stderr, "%s did different work than %s\n", runners[r].name, runners[reference].name);
            exit(1);
        }
    }
    sink_accumulator = saved;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts xs; returns the median. */
static double median(double *xs, int n) {
    qsort(xs, (size_t)n, sizeof *xs, compare_doubles);
    return n % 2 ? xs[n / 2] : (xs[n / 2 - 1] + xs[n / 2]) / 2;
}

int main(int argc, char **argv) {
    int rounds = 15, tsv = 0;
    const char *only = NULL; /* for profiling one scenario */
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = atoi(argv[++i]);
        else if (strcmp(argv[i], "--tsv") == 0) tsv = 1;
        else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) only = argv[++i];
        else {
            fprintf(stderr,
                    "usage: diffuser_bench_loop_c [--rounds N] [--tsv] "
                    "[--only render-100|no-render|source|gear|effects]\n");
            return 2;
        }
    }
    if (rounds < 1 || rounds > 1000) rounds = 15;
    must(dfs_type_new("leaves", leaves_equal, leaves_retain, leaves_release_value, NULL, NULL, &leaves_type),
         "type");
    check_same_work();

    double *ns[RUNNERS];
    for (int r = 0; r < RUNNERS; r++) ns[r] = calloc((size_t)rounds, sizeof(double));
    for (int k = 0; k < rounds; k++) {
        for (int r = 0; r < RUNNERS; r++) {
            if (only == NULL || strcmp(only, scenario_of(r)) == 0)
                ns[r][k] = measure(&runners[r], r < LIBRARY_COUNTER   ? 100000
                                                : r < LIBRARY_SOURCE  ? 500000
                                                : r < LIBRARY_EFFECTS ? 200000 /* source, gear */
                                                                      : 500000);
        }
    }

    double med[RUNNERS], best[RUNNERS];
    for (int r = 0; r < RUNNERS; r++) {
        med[r] = median(ns[r], rounds);
        best[r] = ns[r][0];
    }
    if (tsv) {
        /* language, scenario, then median and min ns/event of: the library, hand,
         * hand+diffuser ("-" where it does not apply) */
        printf("c\trender-100\t%f\t%f\t%f\t%f\t%f\t%f\n", med[LIBRARY_RENDER], best[LIBRARY_RENDER],
               med[HAND_RENDER], best[HAND_RENDER], med[HAND_DIFFUSER], best[HAND_DIFFUSER]);
        printf("c\tno-render\t%f\t%f\t%f\t%f\t-\t-\n", med[LIBRARY_COUNTER], best[LIBRARY_COUNTER],
               med[HAND_COUNTER], best[HAND_COUNTER]);
        printf("c\tsource\t%f\t%f\t%f\t%f\t-\t-\n", med[LIBRARY_SOURCE], best[LIBRARY_SOURCE], med[HAND_SOURCE],
               best[HAND_SOURCE]);
        printf("c\tgear\t%f\t%f\t%f\t%f\t-\t-\n", med[LIBRARY_GEAR], best[LIBRARY_GEAR], med[HAND_GEAR],
               best[HAND_GEAR]);
        printf("c\teffects\t%f\t%f\t%f\t%f\t-\t-\n", med[LIBRARY_EFFECTS], best[LIBRARY_EFFECTS],
               med[HAND_EFFECTS], best[HAND_EFFECTS]);
    } else {
        printf("Loop C benchmark: events/s (median of %d interleaved rounds; best in the second column)\n", rounds);
        printf("scenario       library ev/s        best   hand ev/s        best  x hand (time)   hand+diffuser ev/s\n");
        printf("%-12s%15.0f%12.0f%12.0f%12.0f%8.2f%21.0f\n", "render-100", 1e9 / med[LIBRARY_RENDER],
               1e9 / best[LIBRARY_RENDER], 1e9 / med[HAND_RENDER], 1e9 / best[HAND_RENDER],
               med[LIBRARY_RENDER] / med[HAND_RENDER], 1e9 / med[HAND_DIFFUSER]);
        printf("%-12s%15.0f%12.0f%12.0f%12.0f%8.2f\n", "no-render", 1e9 / med[LIBRARY_COUNTER],
               1e9 / best[LIBRARY_COUNTER], 1e9 / med[HAND_COUNTER], 1e9 / best[HAND_COUNTER],
               med[LIBRARY_COUNTER] / med[HAND_COUNTER]);
        printf("%-12s%15.0f%12.0f%12.0f%12.0f%8.2f\n", "source", 1e9 / med[LIBRARY_SOURCE], 1e9 / best[LIBRARY_SOURCE],
               1e9 / med[HAND_SOURCE], 1e9 / best[HAND_SOURCE], med[LIBRARY_SOURCE] / med[HAND_SOURCE]);
        printf("%-12s%15.0f%12.0f%12.0f%12.0f%8.2f\n", "gear", 1e9 / med[LIBRARY_GEAR], 1e9 / best[LIBRARY_GEAR],
               1e9 / med[HAND_GEAR], 1e9 / best[HAND_GEAR], med[LIBRARY_GEAR] / med[HAND_GEAR]);
        printf("%-12s%15.0f%12.0f%12.0f%12.0f%8.2f\n", "effects", 1e9 / med[LIBRARY_EFFECTS],
               1e9 / best[LIBRARY_EFFECTS], 1e9 / med[HAND_EFFECTS], 1e9 / best[HAND_EFFECTS],
               med[LIBRARY_EFFECTS] / med[HAND_EFFECTS]);
    }
    printf("(sink %llu)\n", (unsigned long long)(sink_accumulator % 1000));
    for (int r = 0; r < RUNNERS; r++) free(ns[r]);
    dfs_type_release(leaves_type);
    return 0;
}
