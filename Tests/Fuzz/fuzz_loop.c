/*
 * fuzz_loop.c — the loop operations of fuzz_api.c, included by it (one translation
 * unit: they use its program reader, records, callback contexts and status checks).
 *
 * OP_LOOP_NEW: dfs_loop_new with model, event and effect types from the type pool, a
 * first model and start effects, an update (may fail, give a model, give it twice,
 * give effects, misuse a stale dfs_next, run its own program), up to three handlers
 * (inline, or on a manual or C-written executor), coalescing keys, an inspector, a
 * journal, manual_start, the caller's or another executor, up to three dfs_feedback
 * handles (config.feedbacks), a restart (may give a model and an effect, misuse a stale
 * dfs_next, run its own program: stop or dispose the loop it starts); misuse (NULL config, update, handlers, start effects; a
 * journal of other types; a NULL, released or wrong-kind feedback entry, a NULL
 * feedbacks array with a non-zero count; a feedback, handler or start-effect count out
 * of range, SIZE_MAX among them).
 * OP_LOOP_DISPATCH, OP_LOOP_READ (model, is_running, dfs_next outside its update),
 * OP_LOOP_OBSERVE, OP_LOOP_ATTACH (render a diffuser, connect a fuser), OP_LOOP_FEEDBACK
 * (add_feedback, add_request_feedback: each overlap, inline or on an executor),
 * OP_LOOP_LIFE (start, stop, dispose, retain, release, record), OP_JOB (send, finish,
 * cancel, on_cancel, is_cancelled, retain, release: on the job a callback borrows or on
 * one held since), OP_EXECUTOR (manual and C-written executors; run_next, run_all,
 * dfs_work_run in order, and again: DFS_ERR_HANDLE), OP_GEAR, OP_JOURNAL,
 * OP_LOOP_SELF: from inside a loop callback, dispatch into, start, stop, dispose or
 * release its own loop, and OP_FEEDBACK: dfs_feedback handles (dfs_feedback_work,
 * dfs_feedback_request, dfs_feedback_pushing, dfs_feedback_attached, with the arguments
 * of OP_LOOP_FEEDBACK and OP_GEAR and their misuse; dfs_loop_add on running, stopped and
 * disposed loops, one handle with several loops, a NULL, released or wrong-kind
 * feedback; retain; release, also while loops use the handle, and once too often:
 * DFS_ERR_HANDLE). A feedback handle serves the loops of the model and event types it
 * was made for (its callbacks expect their values); a live one is also the wrong-kind
 * handle forged for the other loop handles. Only the caller's, manual and C-written
 * executors: no thread.
 *
 * Oracles: statuses as check_status, by the harness's model of each loop (running,
 * stopped, disposed, closing) and job; every destroy once by the end (the harness
 * disposes every loop and drains every executor first); no callback of a loop (update,
 * observer, feedback, handler, inspector, request, gear propagate) starts after its
 * dfs_loop_dispose (or last release) returned; a callback of a step (update, observer,
 * inline feedback and handler, request, push propagate) never starts while another of
 * the same loop's step runs on this thread, unless the harness itself ran an executor
 * in between (a nested step: an event dispatched during a step must be queued); an
 * observer is called at once by dfs_loop_observe on an idle running loop of the
 * caller's executor, never after the dispose of its registration returned; the
 * inspector is never nested in itself, sees DISPOSED once and nothing after it, and
 * sees each accepted event (dispatch, job send) once: at every top-level point for a
 * loop on the caller's executor, and by the end for all (exactly, unless sources or
 * gears queue events the harness cannot count); an on-cancel action runs at most once,
 * never after its job finished, at once on a cancelled job, during dfs_job_cancel, and
 * by the end unless its job finished; replay calls its update only inside the call.
 * Feedback handles: a failing dfs_loop_new leaves them alone (callbacks alive, handle
 * usable); dfs_loop_add (and a dfs_loop_new that starts) on an idle running loop of the
 * caller's executor calls at once what hears the model (inline work, request, push);
 * a handler of a loop runs only once its config's feedbacks heard a first model; the
 * destroys of a handle's callbacks run once, only when neither the handle nor a loop
 * (not disposed, its registration not disposed) uses them; none of them is called once
 * every loop it was registered with was disposed. The callbacks of a handle serving
 * one live loop are that loop's (the oracles above hold for them as for the others);
 * with several, the harness cannot tell which loop calls, so it checks them only as the
 * callbacks of one of them (no nested-step check, their jobs are not kept or sent on).
 *
 * One file because loops, jobs, executors, gears, journals and feedback handles are one
 * family of handles that refer to each other (a job belongs to a loop, a handler runs on
 * an executor, a gear, a journal or a feedback handle attaches to loops), and the
 * harness's model of their states, which every oracle above reads, is one set of
 * records at the top.
 */

#define MAX_LOOPS 8
#define MAX_JOBS 48
#define MAX_EXECUTORS 6
#define MAX_WORKS 48
#define MAX_GEARS 4
#define MAX_JOURNALS 4
#define MAX_LEVELS 8
#define MAX_FEEDBACKS 8
#define MAX_USES 64 /* registrations of feedback handles */
#define AUTO_EVENTS 200 /* events callbacks send on their own, per input (no endless loop) */

enum loop_state { L_RUNNING, L_STOPPED, L_DISPOSED };

typedef struct erec {
    dfs_executor *h;
    int refs, manual;
    int id;
} erec;

typedef struct lrec {
    dfs_loop *h;
    int refs;
    enum loop_state state;
    int closing;   /* a stop, dispose or last release of it is in progress */
    int disposing; /* a dispose or last release of it is in progress */
    int disposed;  /* dfs_loop_dispose (or the last release) returned */
    int run;       /* changes at every start and close: jobs of another run have ended */
    int manual;      /* made with manual_start: its first dfs_loop_start is its first start */
    int start_calls; /* dfs_loop_start calls on it: a restart needs one more than the first start */
    trec *model, *event, *effect;
    erec *exec; /* NULL: the caller's executor */
    cb *inspect;
    int step[MAX_LEVELS]; /* callbacks of a step in progress, by executor level */
    long accepted, seen;  /* events accepted (dispatch, job send); events the inspector saw */
    int uncertain;        /* sources or gears may queue events the harness does not count */
    int disposed_traces;
    int late_step; /* disposed from inside a callback: its outcome's trace may follow */
    cb *config_hears[3]; /* what hears the first model for its config's feedbacks */
    int n_config_hears;
    int id;
} lrec;

typedef struct jrec {
    dfs_job *h;
    int refs, borrowed;
    lrec *loop;
    int run, finished, cancelled;
} jrec;

typedef struct wrec {
    dfs_work *h;
    erec *exec;
    int ran;
} wrec;

typedef struct grec {
    dfs_gear *h;
    int refs;
    trec *type;
} grec;

typedef struct nrec {
    dfs_journal *h;
    int refs;
    trec *model, *event;
} nrec;

enum feedback_kind { FB_WORK, FB_REQUEST, FB_PUSHING, FB_ATTACHED };

/* A dfs_feedback handle. The harness registers it only with loops of its model and
 * event types: its callbacks check and make values of those. */
typedef struct brec {
    dfs_feedback *h;
    int refs;
    enum feedback_kind kind;
    trec *model, *event;
    cb *fn, *request; /* fn: the feedback's or the propagate */
    int id;
} brec;

/* A registration of a feedback handle with a loop: by its config (x NULL) or dfs_loop_add. */
typedef struct urec {
    brec *feedback;
    lrec *loop;
    xrec *x;
    int removed; /* the call failed, or the registration was disposed untracked */
} urec;

static lrec loops[MAX_LOOPS];
static int n_loops, making_loop;
static jrec jobs[MAX_JOBS];
static int n_jobs;
static erec executors[MAX_EXECUTORS];
static int n_executors;
static wrec works[MAX_WORKS];
static int n_works;
static grec gears[MAX_GEARS];
static int n_gears;
static nrec journals[MAX_JOURNALS];
static int n_journals;
static brec feedbacks[MAX_FEEDBACKS];
static int n_feedbacks;
static urec uses[MAX_USES];
static int n_uses;
static unsigned char loop_typed[MAX_TYPES]; /* a loop, gear, journal or request used the type */
static int exec_level;                      /* executor runs the harness is inside */
static int auto_events, updates_active, replays_active, actions_active;
static dfs_next *last_next;

static int loop_type_use(const trec *t) { return loop_typed[t->id]; }

static enum validity lrec_validity(const lrec *l) { return l->refs > 0 ? V_OK : V_BAD; }
static enum validity jrec_validity(const jrec *j) { return j->refs > 0 || j->borrowed > 0 ? V_OK : V_BAD; }
static enum validity erec_validity(const erec *e) { return e->refs > 0 ? V_OK : V_BAD; }
static enum validity grec_validity(const grec *g) { return g->refs > 0 ? V_OK : V_BAD; }
static enum validity nrec_validity(const nrec *n) { return n->refs > 0 ? V_OK : V_BAD; }
static enum validity brec_validity(const brec *b) { return b->refs > 0 ? V_OK : V_BAD; }

/* Forged handles of the loop family: never issued, a live handle of an older kind, or
 * a live dfs_feedback (forged_feedback). */
#define K_LOOPS ((enum kind)5)
static pick pick_loop(void) { PICK(K_LOOPS, loops, n_loops, lrec_validity); }
static pick pick_job(void) { PICK(K_LOOPS, jobs, n_jobs, jrec_validity); }
static pick pick_executor(void) { PICK(K_LOOPS, executors, n_executors, erec_validity); }
static pick pick_gear(void) { PICK(K_LOOPS, gears, n_gears, grec_validity); }
static pick pick_journal(void) { PICK(K_LOOPS, journals, n_journals, nrec_validity); }

/* A live handle of the loop family other than a dfs_feedback, or NULL. */
static void *live_in_family(uint8_t b) {
    for (int k = 0; k < 4; k++) switch (((b >> 3) + k) % 4) {
        case 0: for (int i = 0; i < n_loops; i++) if (loops[i].refs > 0) return loops[i].h; break;
        case 1: for (int i = 0; i < n_gears; i++) if (gears[i].refs > 0) return gears[i].h; break;
        case 2: for (int i = 0; i < n_executors; i++) if (executors[i].refs > 0) return executors[i].h; break;
        default: for (int i = 0; i < n_journals; i++) if (journals[i].refs > 0) return journals[i].h; break;
        }
    return NULL;
}

/* For fuzz_api.c's forge: a live dfs_feedback where another loop handle is expected. */
static void *forged_feedback(enum kind kind, uint8_t b) {
    if (kind != K_LOOPS || !(b & 0x80)) return NULL;
    for (int i = 0; i < n_feedbacks; i++)
        if (feedbacks[(i + b) % n_feedbacks].refs > 0) return feedbacks[(i + b) % n_feedbacks].h;
    return NULL;
}

/* Whether the harness may register b with l (NULL: any loop). */
static int serves(const brec *b, const lrec *l) { return l == NULL || (b->model == l->model && b->event == l->event); }

/* A feedback handle as PICK picks one, among those that serve `l`; forged: also a live
 * handle of another kind of the loop family. */
static pick pick_feedback_for(const lrec *l) {
    uint8_t b = u8();
    unsigned mode = b >> 5;
    int n = 0, valid = 0;
    for (int i = 0; i < n_feedbacks; i++)
        if (serves(&feedbacks[i], l)) n++, valid += feedbacks[i].refs > 0;
    if (mode <= 5 && n > 0) {
        int among_valid = mode <= 4 && valid > 0, want = (b & 31) % (among_valid ? valid : n);
        for (int i = 0; i < n_feedbacks; i++) {
            brec *r = &feedbacks[i];
            if (!serves(r, l) || (among_valid && r->refs <= 0) || want-- != 0) continue;
            return (pick){r->h, brec_validity(r), r};
        }
    }
    if (mode == 7) {
        uint8_t f = u8();
        void *h = (f & 0x84) == 0x84 ? live_in_family(f) : NULL;
        return (pick){h ? h : forge(K_LOOPS, f & 0x7F), V_BAD, NULL};
    }
    return (pick){NULL, V_NULL, NULL};
}

/* The loops that may call the callbacks of b: those it was registered with, until
 * disposed (bits by loop id). */
static unsigned feedback_users(const brec *b) {
    unsigned m = 0;
    for (int i = 0; i < n_uses; i++)
        if (uses[i].feedback == b && !uses[i].removed && !uses[i].loop->disposed) m |= 1u << uses[i].loop->id;
    return m;
}

/* The loop of a callback of a feedback handle, if only one loop may call it. */
static lrec *feedback_loop(const cb *c) {
    unsigned m = feedback_users(c->shared);
    return m != 0 && (m & (m - 1)) == 0 ? &loops[__builtin_ctz(m)] : NULL;
}

/* What hears every model published to b: called at once when an idle running loop of
 * the caller's executor registers it. */
static cb *feedback_hears(const brec *b) {
    switch (b->kind) {
    case FB_WORK: return b->fn->off_step ? NULL : b->fn;
    case FB_REQUEST: return b->request;
    case FB_PUSHING: return b->fn;
    default: return NULL;
    }
}

/* From cb_destroy: a callback of a feedback handle goes once nothing uses it. */
static void feedback_destroyed(cb *c) {
    brec *b = c->shared;
    if (b->refs > 0) fail("%s #%d destroyed while its feedback handle #%d is held", cb_kind_names[c->kind], c->id, b->id);
    for (int i = 0; i < n_uses; i++) {
        urec *u = &uses[i];
        if (u->feedback != b || u->removed || u->loop->disposed || u->loop->disposing) continue;
        if (u->x && (u->x->disposed || u->x->disposing)) continue;
        fail("%s #%d of feedback handle #%d destroyed while loop #%d still uses it", cb_kind_names[c->kind], c->id, b->id,
             u->loop->id);
    }
}

static int level(void) { return exec_level < MAX_LEVELS ? exec_level : MAX_LEVELS - 1; }

/* A value of type t from a byte given here, not read from the input. */
static void value_from(const trec *t, uint8_t b, value *v) {
    reader r = {&b, 1, 0}, *outer = in;
    in = &r;
    make_value(t, v);
    in = outer;
}

/* A value the core will own (ownership as a transform's output). */
static const void *owned_value(const trec *t, int k) {
    switch (t->repr) {
    case REPR_INT: return (const void *)(uintptr_t)(k % 3);
    case REPR_STR:
        if (t->has_release) {
            char *s = strdup(strings[k & 3]);
            if (s == NULL) abort();
            return s;
        }
        return strings[k & 3];
    case REPR_FFI: return NULL;
    case REPR_BOX: return t->has_release ? (const void *)box_new(k % 6) : (const void *)arena_box(k % 6);
    }
    return NULL;
}

static void drop_owned(const trec *t, const void *v) {
    if (v == NULL || !t->has_release) return;
    if (t->repr == REPR_BOX) box_release(v);
    if (t->repr == REPR_STR) free((void *)v);
}

/* A job whose run is still going on, as far as the harness knows. */
static int run_alive(const jrec *j) {
    const lrec *l = j->loop;
    return j->run == l->run && l->state == L_RUNNING && !l->closing;
}

static int job_ended(const jrec *j) { return j->finished || j->cancelled || !run_alive(j); }

/* After each operation at the top level: a loop on the caller's executor is idle, so
 * its inspector has seen every event it accepted. */
static void loops_check_handled(const char *after) {
    if (depth > 0 || exec_level > 0) return;
    for (int i = 0; i < n_loops; i++) {
        lrec *l = &loops[i];
        if (l->exec == NULL && l->inspect && l->seen < l->accepted)
            fail("loop #%d (caller's executor): after %s, its inspector saw %ld of %ld accepted events", l->id, after,
                 l->seen, l->accepted);
    }
}

/* ------------------------------------------------------------------------------------
 * Loop callbacks
 * ------------------------------------------------------------------------------------ */

static lrec *loop_of(cb *c) {
    if (c == NULL) return NULL;
    if (c->shared) return feedback_loop(c);
    if (c->extra == NULL) return NULL;
    switch (c->kind) {
    case CB_UPDATE: case CB_OBSERVER: case CB_FEEDBACK: case CB_HANDLER: case CB_INSPECT: case CB_KEY: case CB_REQUEST:
    case CB_PROPAGATE: case CB_RESTART: return c->extra;
    case CB_ACTION: return ((jrec *)c->extra)->loop;
    default: return NULL;
    }
}

/* Enters a callback of a loop; `in_step`: a callback of a step (not on an executor).
 * Returns its loop; NULL for a feedback handle's that several loops may call. */
static lrec *loop_enter(void *ctx, enum cb_kind kind, int in_step, const char *who) {
    cb *c = cb_enter(ctx, who);
    if (c->kind != kind) fail("%s called with the ctx of a %s", who, cb_kind_names[c->kind]);
    if (c->shared && feedback_users(c->shared) == 0)
        fail("%s #%d of feedback handle #%d called after every loop it was registered with was disposed", who, c->id,
             ((brec *)c->shared)->id);
    lrec *l = c->shared ? feedback_loop(c) : c->extra;
    if (l && l->disposed && !(kind == CB_INSPECT && l->late_step)) fail("%s #%d of loop #%d called after dfs_loop_dispose returned", who, c->id, l->id);
    if (l && in_step && l->step[level()]++ > 0)
        fail("%s #%d of loop #%d called while another callback of its step runs (a nested step)", who, c->id, l->id);
    c->calls++;
    return l;
}

static void loop_leave(lrec *l, int in_step) {
    if (l && in_step) l->step[level()]--;
}

static void act(cb *c) {
    /* The loops it may belong to (a feedback handle serves several), live before. */
    lrec *l = loop_of(c);
    unsigned mine = c->shared ? feedback_users(c->shared) : l && !l->disposed ? 1u << l->id : 0;
    c->active++;
    run_action(c);
    c->active--;
    /* Disposed from inside: the inspector may still see what this callback gave (the
     * step, a failure), after DISPOSED. */
    for (int i = 0; i < MAX_LOOPS; i++)
        if ((mine >> i & 1) && loops[i].disposed) loops[i].late_step = 1;
}

static int on_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    lrec *l = loop_enter(ctx, CB_UPDATE, 1, "update");
    cb *c = ctx;
    check_value(l->model, model, "update(model)");
    check_value(l->event, event, "update(event)");
    if (next == NULL) fail("update #%d: next is NULL", c->id);
    int k = value_key(l->event, event);
    say("update #%d of loop #%d (model key %d, event key %d)", c->id, l->id, value_key(l->model, model), k);
    updates_active++;
    act(c);
    for (int i = 0; i < ((c->variant & 1) ? 1 + (k == 3) : 0); i++)
        check_status(dfs_next_model(next, owned_value(l->model, k + i + value_key(l->model, model))), 0, 0, 0, "dfs_next_model");
    for (int i = 0; i < ((c->variant & 2) ? 1 + (k & 1) : 0); i++)
        check_status(dfs_next_effect(next, owned_value(l->effect, k + i)), 0, 0, 0, "dfs_next_effect");
    if (last_next != NULL && last_next != next && (k & 1)) {
        /* The next of an update that returned: refused, the value stays the caller's. */
        const void *v = owned_value(l->model, k);
        dfs_status s = dfs_next_model(last_next, v);
        check_status(s, B(DFS_ERR_HANDLE), 0, 0, "dfs_next_model (a stale next)");
        drop_owned(l->model, v);
    }
    last_next = next;
    updates_active--;
    loop_leave(l, 1);
    check_value(l->event, event, "update(event) after its action");
    if (should_fail(c, event)) {
        if (c->set_error) dfs_set_error("fuzz: the update failed");
        return 3;
    }
    return 0;
}

/* A restart: called with the kept model at a start after the first, within the start.
 * Its variant gives a model and an effect; its program may stop or dispose the loop (the
 * start then returns how, see loop_start) or try the stale next of an earlier call. */
static void on_restart(const void *model, dfs_next *next, void *ctx) {
    lrec *l = loop_enter(ctx, CB_RESTART, 1, "restart");
    cb *c = ctx;
    check_value(l->model, model, "restart(model)");
    if (next == NULL) fail("restart #%d: next is NULL", c->id);
    if (l->start_calls < (l->manual ? 2 : 1))
        fail("restart #%d of loop #%d called at the loop's first start (%d dfs_loop_start calls, manual_start %d)", c->id,
             l->id, l->start_calls, l->manual);
    int k = value_key(l->model, model);
    say("restart #%d of loop #%d (model key %d)", c->id, l->id, k);
    updates_active++;
    act(c);
    if (c->variant & 1) check_status(dfs_next_model(next, owned_value(l->model, k + 1)), 0, 0, 0, "dfs_next_model (restart)");
    if (c->variant & 2) check_status(dfs_next_effect(next, owned_value(l->effect, k)), 0, 0, 0, "dfs_next_effect (restart)");
    if (last_next != NULL && last_next != next && (k & 1)) {
        const void *v = owned_value(l->model, k);
        check_status(dfs_next_model(last_next, v), B(DFS_ERR_HANDLE), 0, 0, "dfs_next_model (a stale next, in a restart)");
        drop_owned(l->model, v);
    }
    last_next = next;
    updates_active--;
    loop_leave(l, 1);
}

static int on_observer(const void *model, void *ctx) {
    lrec *l = loop_enter(ctx, CB_OBSERVER, 1, "observer");
    cb *c = ctx;
    check_value(l->model, model, "observer");
    if (c->self_x && c->self_x->disposed) fail("observer #%d called after the dispose of its registration returned", c->id);
    say("observer #%d of loop #%d (model key %d)", c->id, l->id, value_key(l->model, model));
    act(c);
    loop_leave(l, 1);
    return should_fail(c, model) ? 2 : 0;
}

static void job_send_on(pick p, uint8_t b);

/* The job of a handler or feedback call: a record for the borrowed handle, then what
 * the context does with it (send now, hold it, finish it) and its program. No record
 * (nothing sent or held) for a job of one of several loops (`l` NULL): the harness
 * could not tell what its sends must return, nor count them. */
static void job_callback(cb *c, lrec *l, dfs_job *job) {
    if (job == NULL) fail("%s #%d: job is NULL", cb_kind_names[c->kind], c->id);
    jrec *j = l && n_jobs < MAX_JOBS ? &jobs[n_jobs++] : NULL; /* never reused: actions point to them */
    int live = l && !l->disposed;
    if (j) *j = (jrec){.h = job, .borrowed = 1, .loop = l, .run = l->run};
    pick p = {job, V_OK, j};
    depth++; /* inside the callback (for the trace and the top-level checks) */
    switch (c->variant) {
    case 1:
        if (j && auto_events-- > 0) job_send_on(p, (uint8_t)c->calls);
        break;
    case 2:
        if (j && dfs_job_retain(job) == DFS_OK) j->refs++;
        break;
    case 3:
        check_status(dfs_job_finish(job), 0, 0, 0, "dfs_job_finish (in the callback)");
        if (j) j->finished = 1;
        break;
    default: break;
    }
    depth--;
    act(c);
    /* A send above may have run a step that disposed the loop: the inspector may still
     * see this callback's outcome (a handler's failure) after DISPOSED, as after a
     * dispose by its actions (see act). */
    if (live && l->disposed) l->late_step = 1;
    if (j) j->borrowed = 0; /* the handle is the library's again */
}

static int on_handler(const void *effect, dfs_job *job, void *ctx) {
    cb *c = ctx;
    int in_step = !(cb_enter(ctx, "handler")->off_step);
    lrec *l = loop_enter(ctx, CB_HANDLER, in_step, "handler");
    check_value(l->effect, effect, "handler");
    for (int i = 0; i < l->n_config_hears; i++) /* they hear every first model before the start effects */
        if (l->config_hears[i]->calls == 0)
            fail("handler #%d of loop #%d called before %s #%d of its config's feedbacks heard a first model", c->id, l->id,
                 cb_kind_names[l->config_hears[i]->kind], l->config_hears[i]->id);
    say("handler #%d of loop #%d (effect key %d%s)", c->id, l->id, value_key(l->effect, effect), in_step ? "" : ", on an executor");
    job_callback(c, l, job);
    loop_leave(l, in_step);
    return should_fail(c, effect) ? 6 : 0;
}

static void on_feedback(const void *value, dfs_job *job, void *ctx) {
    cb *c = ctx;
    int in_step = !(cb_enter(ctx, "feedback")->off_step);
    lrec *l = loop_enter(ctx, CB_FEEDBACK, in_step, "feedback");
    check_value(c->in, value, "feedback");
    say("feedback #%d of loop #%d (key %d%s)", c->id, l ? l->id : -1, value_key(c->in, value), in_step ? "" : ", on an executor");
    job_callback(c, l, job);
    loop_leave(l, in_step);
}

static int on_request(const void *model, const void **out, void *ctx) {
    lrec *l = loop_enter(ctx, CB_REQUEST, 1, "request");
    cb *c = ctx;
    check_value(c->in, model, "request");
    if (out == NULL) fail("request #%d: out is NULL", c->id);
    act(c);
    loop_leave(l, 1);
    if (should_fail(c, model)) {
        if (c->variant & 1) *out = transform_output(c, model); /* the core releases it */
        return 5;
    }
    *out = transform_output(c, model);
    return 0;
}

/* A gear propagate: push (in the step, model to gear event) or attach (gear event to
 * the loop's event, from wherever the gear is sent). */
static int on_propagate(const void *value, const void **out, void *ctx) {
    cb *c = ctx;
    int in_step = !(cb_enter(ctx, "propagate")->off_step);
    lrec *l = loop_enter(ctx, CB_PROPAGATE, in_step, "propagate");
    check_value(c->in, value, "propagate");
    if (out == NULL) fail("propagate #%d: out is NULL", c->id);
    say("propagate #%d of loop #%d (key %d)", c->id, l ? l->id : -1, value_key(c->in, value));
    loop_leave(l, in_step);
    if (should_fail(c, value) || auto_events-- <= 0) return c->variant == 3 ? 2 : 0;
    *out = transform_output(c, value);
    return 1;
}

static int on_key(const void *event, uint64_t *key, void *ctx) {
    cb *c = cb_enter(ctx, "coalescing key");
    if (c->kind != CB_KEY) fail("coalescing key called with the ctx of a %s", cb_kind_names[c->kind]);
    check_value(c->in, event, "coalescing key");
    if (key == NULL) fail("coalescing key #%d: key is NULL", c->id);
    c->calls++;
    if (c->variant == 0 || should_fail(c, event)) return 0;
    *key = (uint64_t)value_key(c->in, event) >> (c->variant - 1);
    return 1;
}

static void check_effects(const lrec *l, const dfs_trace *t) {
    if (t->effect_count > 0 && t->effects == NULL) fail("inspector: %zu effects, no array", t->effect_count);
    for (size_t i = 0; i < t->effect_count; i++) check_value(l->effect, t->effects[i], "inspector (effects)");
}

static void check_message(const char *error, int kind) {
    if (error == NULL) fail("inspector: trace %d without an error message", kind);
    (void)strlen(error);
}

static void on_inspect(const dfs_trace *t, void *ctx) {
    lrec *l = loop_enter(ctx, CB_INSPECT, 0, "inspector");
    cb *c = ctx;
    if (c->active) fail("inspector #%d of loop #%d called while it runs", c->id, l->id);
    if (t == NULL) fail("inspector #%d: trace is NULL", c->id);
    int late = l->disposed_traces && l->late_step &&
               ((t->kind >= DFS_TRACE_STEPPED && t->kind <= DFS_TRACE_OBSERVER_FAILED && t->kind != DFS_TRACE_DROPPED) ||
                t->kind == DFS_TRACE_SOURCE_FAILED || t->kind == DFS_TRACE_FEEDBACK_FAILED);
    if (late) l->late_step = 0;
    else if (l->disposed_traces) fail("inspector #%d of loop #%d: trace %d after DISPOSED", c->id, l->id, (int)t->kind);
    say("  (inspector #%d of loop #%d: trace %d)", c->id, l->id, (int)t->kind);
    c->active++;
    switch (t->kind) {
    case DFS_TRACE_STARTED: check_value(l->model, t->model, "inspector (started)"); check_effects(l, t); break;
    case DFS_TRACE_STEPPED:
        check_value(l->event, t->event, "inspector (stepped: event)");
        check_value(l->model, t->model, "inspector (stepped: model)");
        if (t->has_next_model) check_value(l->model, t->next_model, "inspector (stepped: next model)");
        check_effects(l, t);
        l->seen++;
        break;
    case DFS_TRACE_FAILED:
        check_value(l->event, t->event, "inspector (failed)");
        check_message(t->error, t->kind);
        l->seen++;
        break;
    case DFS_TRACE_DROPPED:
        check_value(l->event, t->event, "inspector (dropped)");
        if (t->reason < DFS_DROP_CANCELLED_WORK || t->reason > DFS_DROP_DISPOSED) fail("inspector: drop reason %d", (int)t->reason);
        l->seen++;
        break;
    case DFS_TRACE_EFFECT_FAILED: check_value(l->effect, t->effect, "inspector (effect failed)"); check_message(t->error, t->kind); break;
    case DFS_TRACE_OBSERVER_FAILED: check_message(t->error, t->kind); break;
    case DFS_TRACE_SOURCE_FAILED: check_message(t->error, t->kind); break;
    case DFS_TRACE_FEEDBACK_FAILED: check_message(t->error, t->kind); break;
    case DFS_TRACE_STOPPED: check_value(l->model, t->model, "inspector (stopped)"); break;
    case DFS_TRACE_DISPOSED: check_value(l->model, t->model, "inspector (disposed)"); l->disposed_traces++; break;
    default: fail("inspector #%d: trace of kind %d", c->id, (int)t->kind);
    }
    c->active--;
}

/* An on-cancel action (c->fate: whether it must run by the end). */
static void on_action(void *ctx) {
    cb *c = cb_enter(ctx, "on-cancel action");
    if (c->kind != CB_ACTION) fail("on-cancel action called with the ctx of a %s", cb_kind_names[c->kind]);
    if (c->calls) fail("on-cancel action #%d ran twice", c->id);
    if (c->fate == 1) fail("on-cancel action #%d ran after its job finished", c->id);
    say("on-cancel action #%d", c->id);
    c->calls++;
    actions_active++;
    act(c);
    actions_active--;
}

/* ------------------------------------------------------------------------------------
 * Executors and work
 * ------------------------------------------------------------------------------------ */

static void run_work(wrec *w, const char *why) {
    w->ran = 1; /* before: the work may hand over more, and run some */
    say("dfs_work_run(work of executor #%d%s)", w->exec ? w->exec->id : -1, why);
    exec_level++;
    dfs_status s = dfs_work_run(w->h);
    exec_level--;
    check_status(s, 0, 0, 0, "dfs_work_run");
}

/* Runs the pending work of `e`, oldest first, up to and including `upto` (or all).
 * Each run may hand over more work and compact the list: look again each time. */
static void run_works_of(const erec *e, const dfs_work *upto) {
    for (;;) {
        wrec *w = NULL;
        for (int i = 0; i < n_works && w == NULL; i++)
            if (!works[i].ran && works[i].exec == e) w = &works[i];
        if (w == NULL) return;
        dfs_work *h = w->h;
        run_work(w, "");
        if (h == upto) return;
    }
}

static void on_execute(dfs_work *work, void *ctx) {
    cb *c = cb_enter(ctx, "execute");
    if (c->kind != CB_EXECUTE) fail("execute called with the ctx of a %s", cb_kind_names[c->kind]);
    if (work == NULL) fail("execute #%d: work is NULL", c->id);
    c->calls++;
    erec *e = c->extra;
    if (n_works == MAX_WORKS) { /* keep the pending ones, and one that ran */
        int kept = 0, last_ran = -1;
        for (int i = 0; i < n_works; i++) if (works[i].ran) last_ran = i;
        for (int i = 0; i < n_works; i++)
            if (!works[i].ran || i == last_ran) works[kept++] = works[i];
        n_works = kept;
    }
    if (n_works == MAX_WORKS) fail("too much pending work");
    wrec *w = &works[n_works++];
    *w = (wrec){work, e, 0};
    if (c->variant & 1 || n_works >= MAX_WORKS - 4) run_works_of(e, work); /* now, after the older ones */
}

static void executor_run(pick p, int all) {
    erec *e = p.rec;
    say("dfs_executor_run_%s(#%d)", all ? "all" : "next", e ? e->id : -1);
    exec_level++;
    int r = all ? dfs_executor_run_all(p.h) : dfs_executor_run_next(p.h);
    exec_level--;
    int want = p.v == V_NULL ? -DFS_ERR_NULL : p.v == V_BAD ? -DFS_ERR_HANDLE : e->manual ? 0 : -DFS_ERR_ARGUMENT;
    if (want < 0 ? r != want : r < 0 || (!all && r > 1)) fail("dfs_executor_run_%s returned %d (expected %d)", all ? "all" : "next", r, want);
    say("  -> %d", r);
}

static void op_executor(void) {
    uint8_t f = u8();
    int null_out = (f & 0xE0) == 0xE0;
    switch (f % 6) {
    case 0:
    case 1: {
        cb *c = f % 6 ? make_cb(CB_EXECUTE, NULL, NULL) : NULL;
        if ((f % 6 && c == NULL) || n_executors >= MAX_EXECUTORS) {
            if (c) discard_cb(c);
            return;
        }
        erec *e = &executors[n_executors];
        int null_fn = (f & 0x18) == 0x18;
        dfs_executor *h = (dfs_executor *)(uintptr_t)1;
        say("dfs_executor_new%s(steps %d)", c ? "" : "_manual", (f >> 3) % 3);
        dfs_status s = c ? dfs_executor_new(null_fn ? NULL : on_execute, c, destroy_of(c), (size_t)(f >> 3) % 3, null_out ? NULL : &h)
                         : dfs_executor_new_manual(null_out ? NULL : &h);
        check_status(s, null_out || (c && null_fn) ? B(DFS_ERR_NULL) : 0, 0, 0, "dfs_executor_new");
        if (s != DFS_OK) {
            check_destroyed(c, "dfs_executor_new");
            return;
        }
        *e = (erec){h, 1, c == NULL, n_executors++};
        if (c) c->extra = e;
        return;
    }
    case 2: executor_run(pick_executor(), 0); return;
    case 3: executor_run(pick_executor(), 1); return;
    case 4: {
        uint8_t b = u8();
        int pending = 0, ran = -1;
        for (int i = 0; i < n_works; i++) pending += !works[i].ran, ran = works[i].ran ? i : ran;
        if (b >= 0xE0) {
            check_status(dfs_work_run(NULL), B(DFS_ERR_NULL), 0, 0, "dfs_work_run(NULL)");
        } else if ((b & 0x80) && ran >= 0) {
            say("dfs_work_run(a work that ran)");
            check_status(dfs_work_run(works[ran].h), B(DFS_ERR_HANDLE), 0, 0, "dfs_work_run (again)");
        } else if (pending > 0) {
            int want = b % pending;
            for (int i = 0; i < n_works; i++)
                if (!works[i].ran && want-- == 0) {
                    run_works_of(works[i].exec, works[i].h); /* in the order it was handed */
                    break;
                }
        }
        return;
    }
    default: {
        pick p = pick_executor();
        erec *e = p.rec;
        /* A manual executor's queue holds work that holds its loop: kept to the end. */
        if (e && e->manual && p.v == V_OK) return;
        say("dfs_executor_release(#%d)", e ? e->id : -1);
        dfs_status s = dfs_executor_release(p.h);
        check_status(s, p.v == V_NULL ? 0 : handle_errors(p.v), 0, 0, "dfs_executor_release");
        if (s == DFS_OK && e) e->refs--;
        return;
    }
    }
}

/* ------------------------------------------------------------------------------------
 * Loops
 * ------------------------------------------------------------------------------------ */

static int cbs_ready(cb **list, int n) {
    int ok = 1;
    for (int i = 0; i < n; i++) ok &= list[i] != NULL;
    if (!ok)
        for (int i = 0; i < n; i++)
            if (list[i]) discard_cb(list[i]);
    return ok;
}

/* After a dfs_loop_new that failed: a feedback handle of its config is as it was. */
static void feedback_left_alone(brec *b) {
    if (b->refs <= 0) return;
    if (b->fn->destroys || (b->request && b->request->destroys))
        fail("dfs_loop_new failed and destroyed a callback of its config's feedback handle #%d", b->id);
    check_status(dfs_feedback_retain(b->h), 0, 0, 0, "dfs_feedback_retain (after a failing dfs_loop_new)");
    check_status(dfs_feedback_release(b->h), 0, 0, 0, "dfs_feedback_release (after a failing dfs_loop_new)");
}

static void op_loop_new(void) {
    uint8_t f = u8(), g = u8(), r = u8();
    pick mp = pick_type(), ep = pick_type(), xp = pick_type();
    trec *mt = type_of_type_pick(mp), *et = type_of_type_pick(ep), *xt = type_of_type_pick(xp);
    unsigned errors = handle_errors(mp.v) | handle_errors(ep.v) | handle_errors(xp.v);
    int uncertain = mp.v == V_MAYBE || ep.v == V_MAYBE || xp.v == V_MAYBE, misuse = f >> 5, nh = g & 3;
    if (n_loops >= MAX_LOOPS || making_loop) return;
    lrec *l = &loops[n_loops];
    *l = (lrec){.model = mt, .event = et, .effect = xt, .id = n_loops, .state = (f & 4) ? L_STOPPED : L_RUNNING,
                .manual = (f & 4) != 0};
    cb *made[7] = {make_cb(CB_UPDATE, et, mt)};
    dfs_handler handlers[3];
    for (int i = 0; i < nh; i++) {
        made[1 + i] = make_cb(CB_HANDLER, xt, NULL);
        pick p = pick_executor();
        handlers[i] = (dfs_handler){on_handler, made[1 + i], destroy_of(made[1 + i]), p.v == V_NULL ? NULL : p.h};
        if (p.v == V_BAD) errors |= B(DFS_ERR_HANDLE);
        if (made[1 + i]) made[1 + i]->off_step = p.v != V_NULL; /* on an executor: not in the step */
    }
    int n = 1 + nh;
    cb *key = (f & 1) ? (made[n++] = make_cb(CB_KEY, et, NULL)) : NULL;
    cb *inspect = (f & 2) ? (made[n++] = make_cb(CB_INSPECT, NULL, NULL)) : NULL;
    cb *restart = (r & 1) ? (made[n++] = make_cb(CB_RESTART, mt, mt)) : NULL;
    pick xe = (f & 0x10) ? pick_executor() : (pick){NULL, V_NULL, NULL};
    pick jp = (f & 8) ? pick_journal() : (pick){NULL, V_NULL, NULL};
    if (xe.v == V_BAD || jp.v == V_BAD) errors |= B(DFS_ERR_HANDLE);
    if (jp.v == V_OK && (((nrec *)jp.rec)->model != mt || ((nrec *)jp.rec)->event != et)) errors |= B(DFS_ERR_TYPE);
    value model, effects[3];
    int ne = (g >> 2) & 3;
    make_value(mt, &model);
    for (int i = 0; i < ne; i++) make_value(xt, &effects[i]);
    /* Feedback handles: (g >> 4) & 3 entries, and g >> 6 the misuse of the array (1 NULL
     * with a non-zero count, 2 a count out of range; 3 with three entries: out NULL). */
    int nf = (g >> 4) & 3, fmisuse = g >> 6, entries_ok = 1;
    pick fp[3];
    dfs_feedback *feedback_list[3];
    for (int i = 0; i < nf; i++) fp[i] = pick_feedback_for(l), feedback_list[i] = fp[i].h;
    if (!cbs_ready(made, n)) {
        for (int i = 0; i < ne; i++) drop_value(&effects[i]);
        drop_value(&model);
        return;
    }
    for (int i = 0; i < n; i++) made[i]->extra = l;
    const void *effect_list[3] = {effects[0].p, effects[1].p, effects[2].p};
    dfs_loop_config config = {mt->h, et->h, xt->h, model.p, effect_list, (size_t)ne, on_update, made[0], destroy_of(made[0]),
                              handlers, (size_t)nh, xe.h, key ? on_key : NULL, key, destroy_of(key),
                              inspect ? on_inspect : NULL, inspect, destroy_of(inspect), (f & 4) != 0, jp.h, feedback_list, 0};
    config.restart = restart ? on_restart : NULL;
    config.restart_ctx = restart;
    config.restart_destroy = destroy_of(restart);
    config.model_type = mp.h, config.event_type = ep.h, config.effect_type = xp.h;
    switch (misuse) { /* callbacks the library never sees are never destroyed */
    case 7: errors |= B(DFS_ERR_NULL); for (int i = 0; i < n; i++) discard_cb(made[i]); break;
    case 6: config.update = NULL; errors |= B(DFS_ERR_NULL); break;
    case 5: if (nh > 0) { config.handlers = NULL; errors |= B(DFS_ERR_NULL); } for (int i = 0; i < nh; i++) discard_cb(made[1 + i]); break;
    case 4: if (ne > 0) { config.start_effects = NULL; errors |= B(DFS_ERR_NULL); } break;
    case 3: { /* a count out of range: past the limit, or past PTRDIFF_MAX (SIZE_MAX) */
        uint8_t h = u8();
        size_t huge = (h & 1) ? SIZE_MAX : (size_t)1 << 30;
        if (h & 2) {
            config.start_effect_count = huge;
        } else {
            config.handler_count = huge, config.handlers = NULL;
            for (int i = 0; i < nh; i++) discard_cb(made[1 + i]);
        }
        errors |= B(DFS_ERR_ARGUMENT);
        break;
    }
    default: break;
    }
    if (fmisuse == 1) {
        config.feedbacks = NULL, config.feedback_count = nf ? (size_t)nf : 1;
        errors |= B(DFS_ERR_NULL);
    } else if (fmisuse == 2) {
        config.feedback_count = (f & 8) ? SIZE_MAX : (size_t)1 << 30;
        errors |= B(DFS_ERR_ARGUMENT);
    } else {
        if (n_uses + nf > MAX_USES) nf = 0; /* no room to track their registrations: none */
        config.feedback_count = (size_t)nf;
        for (int i = 0; i < nf; i++) errors |= handle_errors(fp[i].v), entries_ok &= fp[i].v == V_OK;
    }
    /* Registered before the call: the start inside it publishes to them (and its
     * callbacks may register more). */
    int first_use = n_uses, registered = 0, heard[3] = {0};
    if (fmisuse != 1 && fmisuse != 2 && entries_ok && misuse != 7)
        for (; registered < nf; registered++) {
            brec *b = fp[registered].rec;
            cb *hears = feedback_hears(b);
            uses[n_uses++] = (urec){b, l, NULL, 0};
            if (hears) heard[registered] = hears->calls, l->config_hears[l->n_config_hears++] = hears;
        }
    dfs_loop *h = (dfs_loop *)(uintptr_t)1;
    int null_out = (g & 0xF0) == 0xF0;
    if (null_out) errors |= B(DFS_ERR_NULL);
    say("dfs_loop_new(loop #%d: types #%d #%d #%d, update #%d, %d handlers, %d start effects, %d feedbacks, flags %#x, "
        "misuse %d, feedbacks misuse %d)", l->id, mt->id, et->id, xt->id, made[0]->id, nh, ne, nf, f & 0x1F, misuse, fmisuse);
    making_loop = 1;
    dfs_status s = dfs_loop_new(misuse == 7 ? NULL : &config, null_out ? NULL : &h);
    making_loop = 0;
    /* MEMORY: a retain refused the first model or a start effect. */
    check_status(s, errors, uncertain, B(DFS_ERR_MEMORY), "dfs_loop_new");
    for (int i = 0; i < ne; i++) drop_value(&effects[i]);
    drop_value(&model);
    if (s != DFS_OK) {
        if (!null_out && h != NULL) fail("dfs_loop_new failed but *out is not NULL");
        for (int i = 0; i < n; i++) check_destroyed(made[i], "dfs_loop_new");
        for (int i = 0; i < registered; i++) uses[first_use + i].removed = 1;
        for (int i = 0; i < nf; i++) if (fp[i].rec) feedback_left_alone(fp[i].rec);
        return;
    }
    for (int i = 0; i < n; i++) check_alive(made[i], "dfs_loop_new");
    for (int i = 0; i < registered; i++) {
        brec *b = uses[first_use + i].feedback;
        cb *hears = feedback_hears(b);
        if (b->kind == FB_ATTACHED) l->uncertain = 1; /* gear events: not counted */
        /* Started now: it heard the first model. */
        if (hears && !(f & 4) && xe.v == V_NULL && depth == 0 && exec_level == 0 && hears->calls == heard[i])
            fail("dfs_loop_new: %s #%d of the config's feedback handle #%d did not hear the first model", cb_kind_names[hears->kind],
                 hears->id, b->id);
    }
    l->h = h;
    l->refs = 1;
    l->exec = xe.rec;
    l->inspect = inspect;
    loop_typed[mt->id] = loop_typed[et->id] = loop_typed[xt->id] = 1;
    loops_made = 1;
    n_loops++;
    say("  = loop #%d", l->id);
}

static void dispatch_into(pick p) {
    lrec *l = p.rec;
    trec *t = l ? l->event : &types[0];
    value v;
    make_value(t, &v);
    unsigned errors = handle_errors(p.v);
    if (p.v == V_OK && l->closing) errors = B(DFS_ERR_STOPPED) | B(DFS_ERR_DISPOSED);
    else if (p.v == V_OK && l->state != L_RUNNING) errors = B(l->state == L_STOPPED ? DFS_ERR_STOPPED : DFS_ERR_DISPOSED);
    say("dfs_loop_dispatch(loop #%d, %s key %d)", l ? l->id : -1, repr_names[t->repr], value_key(t, v.p));
    dfs_status s = dfs_loop_dispatch(p.h, v.p);
    /* MEMORY: the event type's retain refused the event. */
    check_status(s, errors, 0, B(DFS_ERR_MEMORY), "dfs_loop_dispatch");
    if (s == DFS_OK && l) l->accepted++;
    drop_value(&v);
}

static void op_loop_dispatch(void) {
    dispatch_into(pick_loop());
    loops_check_handled("dfs_loop_dispatch");
}

static int read_fails;
static int read_model(const void *model, void *ctx) {
    lrec *l = ctx;
    check_value(l->model, model, "dfs_loop_model reader");
    return read_fails;
}

static void op_loop_read(void) {
    uint8_t f = u8();
    pick p = pick_loop();
    lrec *l = p.rec;
    switch (f % 3) {
    case 0: {
        int null_fn = (f & 0x1C) == 0x1C;
        read_fails = (f >> 5) & 1;
        unsigned errors = handle_errors(p.v) | (null_fn ? B(DFS_ERR_NULL) : 0);
        if (!errors && read_fails) errors = B(DFS_ERR_CALLBACK);
        say("dfs_loop_model(loop #%d)", l ? l->id : -1);
        check_status(dfs_loop_model(p.h, null_fn ? NULL : read_model, l ? (void *)l : (void *)&loops[0]), errors, 0, 0, "dfs_loop_model");
        break;
    }
    case 1: {
        int r = dfs_loop_is_running(p.h);
        say("dfs_loop_is_running(loop #%d) -> %d", l ? l->id : -1, r);
        int want = p.v == V_NULL ? -DFS_ERR_NULL : p.v == V_BAD ? -DFS_ERR_HANDLE : l->state == L_RUNNING && !l->closing;
        if (r != want) fail("dfs_loop_is_running(loop #%d) returned %d, expected %d", l ? l->id : -1, r, want);
        break;
    }
    default: {
        /* A next outside its update: refused, the value stays the caller's. (Not inside
         * an update: the next of a new update may have the address of a stale one.) */
        if (updates_active) return;
        trec *t = l ? l->model : &types[0];
        const void *v = owned_value(t, f >> 3);
        dfs_status s = (f & 8) ? dfs_next_effect(last_next, v) : dfs_next_model(last_next, v);
        say("dfs_next_%s(a stale next)", (f & 8) ? "effect" : "model");
        check_status(s, last_next ? B(DFS_ERR_HANDLE) : B(DFS_ERR_NULL), 0, 0, "dfs_next_model (outside its update)");
        if (s != DFS_OK) drop_owned(t, v);
        break;
    }
    }
}

/* A registration's disposable, tracked like a connection (fuzz_api.c disposes and
 * releases it). NULL if there is no room to track it: disposed and released at once. */
static xrec *add_registration(dfs_disposable *x, cb *c) {
    if (n_disposables >= MAX_DISPOSABLES) {
        check_status(dfs_disposable_dispose(x), 0, 0, 0, "dfs_disposable_dispose (untracked)");
        check_status(dfs_disposable_release(x), 0, 0, 0, "dfs_disposable_release (untracked)");
        return NULL;
    }
    xrec *r = &disposables[n_disposables];
    *r = (xrec){.h = x, .refs = 1, .effect = c, .id = n_disposables};
    n_disposables++;
    if (c) c->self_x = r;
    say("  = registration #%d", r->id);
    return r;
}

static void op_loop_observe(void) {
    uint8_t f = u8();
    pick p = pick_loop();
    lrec *l = p.rec;
    cb *c = make_cb(CB_OBSERVER, l ? l->model : &types[0], NULL);
    if (c == NULL) return;
    c->extra = l ? l : &loops[0];
    int null_fn = (f & 7) == 7, null_out = (f & 0xE0) == 0xE0;
    dfs_disposable *x = (dfs_disposable *)(uintptr_t)1;
    say("dfs_loop_observe(loop #%d, observer #%d)", l ? l->id : -1, c->id);
    dfs_status s = dfs_loop_observe(p.h, null_fn ? NULL : on_observer, c, destroy_of(c), null_out ? NULL : &x);
    check_status(s, handle_errors(p.v) | (null_fn || null_out ? B(DFS_ERR_NULL) : 0), 0, 0, "dfs_loop_observe");
    if (s != DFS_OK) {
        if (!null_out && x != NULL) fail("dfs_loop_observe failed but *out is not NULL");
        check_destroyed(c, "dfs_loop_observe");
        return;
    }
    /* At once on an idle running loop of the caller's executor. */
    if (depth == 0 && exec_level == 0 && l->exec == NULL && l->state == L_RUNNING && c->calls == 0)
        fail("dfs_loop_observe: observer #%d of the idle running loop #%d was not called at once", c->id, l->id);
    add_registration(x, c);
    loops_check_handled("dfs_loop_observe");
}

static void op_loop_attach(void) {
    uint8_t f = u8();
    pick p = pick_loop();
    lrec *l = p.rec;
    int render = f & 1, null_out = (f & 0xE0) == 0xE0;
    pick q = render ? pick_diffuser() : pick_fuser();
    trec *qt = render ? type_of_diffuser_pick(q) : type_of_fuser_pick(q);
    unsigned errors = handle_errors(p.v) | handle_errors(q.v) | (null_out ? B(DFS_ERR_NULL) : 0);
    if (p.v == V_OK && q.v == V_OK && qt != (render ? l->model : l->event)) errors |= B(DFS_ERR_TYPE);
    dfs_disposable *x = (dfs_disposable *)(uintptr_t)1;
    say("dfs_loop_%s(loop #%d, %s of type #%d)", render ? "render" : "connect", l ? l->id : -1, render ? "diffuser" : "fuser", qt->id);
    dfs_status s = render ? dfs_loop_render(p.h, q.h, null_out ? NULL : &x) : dfs_loop_connect(p.h, q.h, null_out ? NULL : &x);
    check_status(s, errors, 0, 0, render ? "dfs_loop_render" : "dfs_loop_connect");
    if (s != DFS_OK) {
        if (!null_out && x != NULL) fail("dfs_loop_render/connect failed but *out is not NULL");
        return;
    }
    if (!render) l->uncertain = 1;
    add_registration(x, NULL);
    loops_check_handled("dfs_loop_render/connect");
}

static void feedback_made(brec *b, dfs_feedback *h, enum feedback_kind kind, cb *fn, cb *request);

/* A work or request feedback: added to the loop of `p` (dfs_loop_add_feedback,
 * dfs_loop_add_request_feedback), or, with `b`, a handle for the loops of b's types
 * (dfs_feedback_work, dfs_feedback_request). */
static void work_feedback(uint8_t f, pick p, brec *b) {
    pick e = pick_executor();
    lrec *l = p.rec;
    int request = f & 1, null_fn = (f & 0x60) == 0x60, null_out = (f & 0x80) && (f & 0x18) == 0x18;
    dfs_overlap overlap = (dfs_overlap)((f >> 1) & 3);
    if (overlap == 3) overlap = (dfs_overlap)7;
    unsigned errors = (b ? 0 : handle_errors(p.v)) | (e.v == V_BAD ? B(DFS_ERR_HANDLE) : 0) | (overlap == 7 ? B(DFS_ERR_ARGUMENT) : 0);
    if (null_fn || null_out) errors |= B(DFS_ERR_NULL);
    trec *mt = b ? b->model : l ? l->model : &types[0];
    pick tp = request ? pick_type() : (pick){NULL, V_NULL, NULL};
    trec *rt = type_of_type_pick(tp);
    if (request) errors |= handle_errors(tp.v);
    cb *made[2] = {make_cb(CB_FEEDBACK, request ? rt : mt, NULL), request ? make_cb(CB_REQUEST, mt, rt) : NULL};
    if (!cbs_ready(made, 1 + request)) return;
    cb *c = made[0], *r = made[1];
    c->extra = b ? NULL : l ? l : &loops[0];
    c->off_step = e.v != V_NULL; /* on an executor: not in the step */
    if (r) r->extra = c->extra, r->unless_null = 1;
    dfs_disposable *x = (dfs_disposable *)(uintptr_t)1;
    dfs_feedback *h = (dfs_feedback *)(uintptr_t)1;
    const char *call = b ? (request ? "dfs_feedback_request" : "dfs_feedback_work")
                         : (request ? "dfs_loop_add_request_feedback" : "dfs_loop_add_feedback");
    say("%s(loop #%d, overlap %d, executor #%d, feedback #%d)", call, b ? -1 : l ? l->id : -1, (int)overlap,
        e.rec ? ((erec *)e.rec)->id : -1, c->id);
    dfs_feedback_fn fn = null_fn ? NULL : on_feedback;
    dfs_executor *on = e.v == V_NULL ? NULL : e.h;
    dfs_status s;
    if (b)
        s = request ? dfs_feedback_request(tp.h, on_request, r, destroy_of(r), overlap, on, fn, c, destroy_of(c), null_out ? NULL : &h)
                    : dfs_feedback_work(overlap, on, fn, c, destroy_of(c), null_out ? NULL : &h);
    else
        s = request ? dfs_loop_add_request_feedback(p.h, tp.h, on_request, r, destroy_of(r), overlap, on, fn, c, destroy_of(c),
                                                    null_out ? NULL : &x)
                    : dfs_loop_add_feedback(p.h, overlap, on, fn, c, destroy_of(c), null_out ? NULL : &x);
    check_status(s, errors, tp.v == V_MAYBE, 0, call);
    if (s != DFS_OK) {
        if (!null_out && (b ? (void *)h : (void *)x) != NULL) fail("%s failed but *out is not NULL", call);
        check_destroyed(c, call);
        check_destroyed(r, call);
        return;
    }
    if (request) loop_typed[rt->id] = 1;
    if (b) {
        feedback_made(b, h, request ? FB_REQUEST : FB_WORK, c, r);
        return;
    }
    add_registration(x, NULL);
    loops_check_handled("dfs_loop_add_feedback");
}

static void op_loop_feedback(void) {
    uint8_t f = u8();
    pick p = pick_loop();
    work_feedback(f, p, NULL);
}

/* Lifecycle calls. A close (stop, dispose, last release) changes the run first: the
 * callbacks it runs see the loop closing. */
static void loop_close(pick p, int how /* 0 stop, 1 dispose, 2 release */) {
    lrec *l = p.rec;
    static const char *const names[] = {"dfs_loop_stop", "dfs_loop_dispose", "dfs_loop_release"};
    int last = how != 2 || (l && p.v == V_OK && l->refs == 1);
    say("%s(loop #%d)", names[how], l ? l->id : -1);
    int run = 0;
    if (p.v == V_OK && last) l->closing++, l->disposing += how != 0, run = ++l->run;
    if (p.v == V_OK && how == 2) l->refs--; /* the handle is stale while the last release disposes */
    dfs_status s = how == 0 ? dfs_loop_stop(p.h) : how == 1 ? dfs_loop_dispose(p.h) : dfs_loop_release(p.h);
    if (p.v == V_OK && last) l->closing--, l->disposing -= how != 0;
    check_status(s, how == 2 && p.v == V_NULL ? 0 : handle_errors(p.v), 0, 0, names[how]);
    if (s != DFS_OK || l == NULL || !last) return;
    if (how == 0) {
        if (l->state != L_DISPOSED && l->run == run) l->state = L_STOPPED; /* unless restarted inside */
    } else {
        l->state = L_DISPOSED;
        l->disposed = 1;
    }
}

static void loop_start(pick p) {
    lrec *l = p.rec;
    say("dfs_loop_start(loop #%d)", l ? l->id : -1);
    unsigned errors = handle_errors(p.v), extra = 0;
    if (p.v == V_OK && l->state == L_DISPOSED) errors = B(DFS_ERR_DISPOSED);
    /* From a callback of its close: refused as being disposed or stopped. */
    if (p.v == V_OK && l->closing) extra = B(l->disposing ? DFS_ERR_DISPOSED : DFS_ERR_STOPPED);
    /* Running from the call on: the start may run at once. */
    int now = p.v == V_OK && !l->closing && l->state == L_STOPPED;
    if (p.v == V_OK) l->start_calls++;
    if (now) l->state = L_RUNNING, l->run++;
    dfs_status s = dfs_loop_start(p.h);
    /* A callback of the start, run in this call (the harness runs no threads), may end the
     * new run before the call returns: the call must then say how. */
    if (now && l->state != L_RUNNING) {
        dfs_status want = l->state == L_DISPOSED ? DFS_ERR_DISPOSED : DFS_ERR_STOPPED;
        if (s != want)
            fail("dfs_loop_start returned %s, but its callbacks left the loop %s", status_name(s),
                 l->state == L_DISPOSED ? "disposed" : "stopped");
        extra |= B(want);
    }
    check_status(s, errors, 0, extra, "dfs_loop_start");
    if (s == DFS_OK && !now && l->state == L_STOPPED) l->state = L_RUNNING, l->run++;
}

static void record_into(pick p) {
    lrec *l = p.rec;
    pick j = pick_journal();
    nrec *n = j.rec;
    unsigned errors = handle_errors(p.v) | (j.v == V_BAD ? B(DFS_ERR_HANDLE) : 0);
    if (p.v == V_OK && j.v == V_OK && (n->model != l->model || n->event != l->event)) errors |= B(DFS_ERR_TYPE);
    say("dfs_loop_record(loop #%d, journal %p)", l ? l->id : -1, (void *)j.h);
    dfs_status s = dfs_loop_record(p.h, j.v == V_NULL ? NULL : j.h);
    check_status(s, errors, 0, 0, "dfs_loop_record");
}

static void op_loop_life(void) {
    uint8_t f = u8();
    pick p = pick_loop();
    lrec *l = p.rec;
    switch (f % 6) {
    case 0: loop_start(p); break;
    case 1: loop_close(p, 0); break;
    case 2: loop_close(p, 1); break;
    case 3: {
        say("dfs_loop_retain(loop #%d)", l ? l->id : -1);
        dfs_status s = dfs_loop_retain(p.h);
        check_status(s, handle_errors(p.v), 0, 0, "dfs_loop_retain");
        if (s == DFS_OK && l) l->refs++;
        break;
    }
    case 4: loop_close(p, 2); break;
    default: record_into(p); break;
    }
    loops_check_handled("a lifecycle call");
}

/* Inside a loop callback: act on its own loop. */
static void op_loop_self(cb *self) {
    uint8_t f = u8();
    lrec *l = loop_of(self);
    if (l == NULL || l->h == NULL) return; /* not a loop callback, or dfs_loop_new has not returned */
    pick p = {l->h, lrec_validity(l), l};
    say("self (loop #%d): %s", l->id, (const char *const[]){"dispatch", "stop", "dispose", "release", "start"}[f % 5]);
    switch (f % 5) {
    case 0: dispatch_into(p); break;
    case 1: loop_close(p, 0); break;
    case 2: loop_close(p, 1); break;
    case 3: if (l->refs > 0) loop_close(p, 2); break;
    default: loop_start(p); break;
    }
}

/* ------------------------------------------------------------------------------------
 * Jobs
 * ------------------------------------------------------------------------------------ */

static void job_send_on(pick p, uint8_t b) {
    jrec *j = p.rec;
    lrec *l = j ? j->loop : NULL;
    value v;
    value_from(l ? l->event : &types[0], b, &v);
    unsigned errors = handle_errors(p.v), extra = B(DFS_ERR_MEMORY);
    if (p.v == V_OK && job_ended(j)) errors = B(DFS_ERR_DISPOSED);
    else if (p.v == V_OK) extra |= B(DFS_ERR_DISPOSED); /* an overlap may have cancelled it */
    say("dfs_job_send(job of loop #%d, key %d)", l ? l->id : -1, l ? value_key(l->event, v.p) : 0);
    dfs_status s = dfs_job_send(p.h, v.p);
    check_status(s, errors, 0, extra, "dfs_job_send");
    if (s == DFS_OK && l) l->accepted++;
    drop_value(&v);
}

/* The actions registered on j: c->extra is j. */
static void job_actions(jrec *j, int finished, int cancelled) {
    for (int i = 0; i < n_cbs; i++) {
        cb *c = cbs[i];
        if (c->kind != CB_ACTION || c->extra != j) continue;
        if (finished && c->calls == 0) c->fate = run_alive(j) ? 1 : 2;
        if (cancelled && c->fate == 0 && c->calls == 0)
            fail("on-cancel action #%d did not run during dfs_job_cancel", c->id);
    }
}

static void op_job(void) {
    uint8_t f = u8();
    pick p = pick_job();
    jrec *j = p.rec;
    unsigned errors = handle_errors(p.v);
    switch (f % 7) {
    case 0: job_send_on(p, u8()); loops_check_handled("dfs_job_send"); break;
    case 1: {
        say("dfs_job_finish(job %p)", (void *)p.h);
        int running = p.v == V_OK && dfs_job_is_cancelled(p.h) == 0; /* not cancelled by an overlap */
        dfs_status s = dfs_job_finish(p.h);
        check_status(s, errors, 0, 0, "dfs_job_finish");
        if (s == DFS_OK && j && running && !j->cancelled) j->finished = 1, job_actions(j, 1, 0);
        break;
    }
    case 2: {
        say("dfs_job_cancel(job %p)", (void *)p.h);
        dfs_status s = dfs_job_cancel(p.h);
        check_status(s, errors, 0, 0, "dfs_job_cancel");
        if (s != DFS_OK || j == NULL) break;
        if (!j->finished) j->cancelled = 1;
        /* Its actions ran, unless an action of a cancel in progress called this one. */
        if (!actions_active && !j->loop->closing) job_actions(j, 0, 1);
        break;
    }
    case 3: {
        cb *c = make_cb(CB_ACTION, NULL, NULL);
        if (c == NULL) return;
        int null_fn = (f & 0x30) == 0x30;
        say("dfs_job_on_cancel(job %p, action #%d)", (void *)p.h, c->id);
        c->extra = j ? (void *)j : (void *)&jobs[0];
        int at_once = j && (j->cancelled || (!j->loop->closing && !run_alive(j) && !j->finished));
        c->fate = !j || j->loop->closing ? 2 : at_once ? 0 : j->finished ? 1 : 0;
        dfs_status s = dfs_job_on_cancel(p.h, null_fn ? NULL : on_action, c, destroy_of(c));
        check_status(s, errors | (null_fn ? B(DFS_ERR_NULL) : 0), 0, 0, "dfs_job_on_cancel");
        if (s != DFS_OK) {
            c->fate = 2;
            check_destroyed(c, "dfs_job_on_cancel");
        } else if (at_once && c->calls != 1) {
            fail("on-cancel action #%d on a cancelled job did not run at once", c->id);
        }
        break;
    }
    case 4: {
        int r = dfs_job_is_cancelled(p.h);
        say("dfs_job_is_cancelled(job %p) -> %d", (void *)p.h, r);
        if (p.v != V_OK ? r != -(int)(p.v == V_NULL ? DFS_ERR_NULL : DFS_ERR_HANDLE) : r != 0 && r != 1)
            fail("dfs_job_is_cancelled returned %d", r);
        if (p.v == V_OK && !j->loop->closing && (j->cancelled || (!run_alive(j) && !j->finished)) && r != 1)
            fail("dfs_job_is_cancelled of a cancelled job (or of an ended run) returned %d", r);
        if (p.v == V_OK && j->finished && r != 0) fail("dfs_job_is_cancelled of a finished job returned %d", r);
        break;
    }
    case 5: {
        say("dfs_job_retain(job %p)", (void *)p.h);
        dfs_status s = dfs_job_retain(p.h);
        check_status(s, errors, 0, 0, "dfs_job_retain");
        if (s == DFS_OK && j) j->refs++;
        break;
    }
    default: {
        say("dfs_job_release(job %p)", (void *)p.h);
        dfs_status s = dfs_job_release(p.h);
        /* A job only lent to the callback in progress: the release is refused, the
         * handle stays valid for the call. */
        int lent_only = p.v == V_OK && j && j->refs == 0;
        check_status(s, p.v == V_NULL ? 0 : lent_only ? B(DFS_ERR_HANDLE) : errors, 0, 0, "dfs_job_release");
        if (s == DFS_OK && j && j->refs > 0) j->refs--;
        break;
    }
    }
}

/* ------------------------------------------------------------------------------------
 * Gears and journals
 * ------------------------------------------------------------------------------------ */

/* A gear feedback over a propagate: added to the loop of `p` (dfs_loop_push_to_gear,
 * dfs_loop_attach_to_gear), or, with `b`, a handle for the loops of b's types
 * (dfs_feedback_pushing, dfs_feedback_attached). */
static void gear_feedback(int attach, uint8_t f, pick p, brec *b) {
    int null_fn = (f & 0x70) == 0x70, null_out = b && (f & 0x0F) == 0x0F;
    pick g = pick_gear();
    lrec *l = p.rec;
    trec *mt = b ? b->model : l ? l->model : &types[0], *et = b ? b->event : l ? l->event : &types[0];
    trec *lt = attach ? et : mt, *gt = g.rec ? ((grec *)g.rec)->type : &types[0];
    cb *c = make_cb(CB_PROPAGATE, attach ? gt : lt, attach ? lt : gt);
    if (c == NULL) return;
    c->extra = b ? NULL : l ? l : &loops[0];
    c->off_step = attach; /* from wherever the gear is sent: not in the step */
    dfs_disposable *x = (dfs_disposable *)(uintptr_t)1;
    dfs_feedback *h = (dfs_feedback *)(uintptr_t)1;
    const char *call = b ? (attach ? "dfs_feedback_attached" : "dfs_feedback_pushing")
                         : (attach ? "dfs_loop_attach_to_gear" : "dfs_loop_push_to_gear");
    say("%s(loop #%d, gear %p, propagate #%d)", call, b ? -1 : l ? l->id : -1, (void *)g.h, c->id);
    dfs_propagate_fn fn = null_fn ? NULL : on_propagate;
    dfs_status s = b ? (attach ? dfs_feedback_attached : dfs_feedback_pushing)(g.h, fn, c, destroy_of(c), null_out ? NULL : &h)
                     : (attach ? dfs_loop_attach_to_gear : dfs_loop_push_to_gear)(p.h, g.h, fn, c, destroy_of(c), &x);
    check_status(s, (b ? 0 : handle_errors(p.v)) | handle_errors(g.v) | (null_fn || null_out ? B(DFS_ERR_NULL) : 0), 0, 0, call);
    if (s != DFS_OK) {
        if (b && !null_out && h != NULL) fail("%s failed but *out is not NULL", call);
        check_destroyed(c, call);
        return;
    }
    if (b) {
        feedback_made(b, h, attach ? FB_ATTACHED : FB_PUSHING, c, NULL);
        return;
    }
    if (attach) l->uncertain = 1;
    add_registration(x, c);
    loops_check_handled("dfs_loop_push/attach_to_gear");
}

static void op_gear(void) {
    uint8_t f = u8();
    switch (f % 5) {
    case 0: {
        pick tp = pick_type();
        int null_out = (f & 0xE0) == 0xE0;
        if (n_gears >= MAX_GEARS) return;
        dfs_gear *h = (dfs_gear *)(uintptr_t)1;
        say("dfs_gear_new(type #%d)", type_of_type_pick(tp)->id);
        dfs_status s = dfs_gear_new(tp.h, null_out ? NULL : &h);
        check_status(s, handle_errors(tp.v) | (null_out ? B(DFS_ERR_NULL) : 0), tp.v == V_MAYBE, 0, "dfs_gear_new");
        if (s != DFS_OK) return;
        gears[n_gears++] = (grec){h, 1, type_of_type_pick(tp)};
        loop_typed[type_of_type_pick(tp)->id] = 1;
        return;
    }
    case 1: {
        pick g = pick_gear();
        trec *t = g.rec ? ((grec *)g.rec)->type : &types[0];
        value v;
        make_value(t, &v);
        say("dfs_gear_send(gear %p, key %d)", (void *)g.h, value_key(t, v.p));
        dfs_status s = dfs_gear_send(g.h, v.p);
        check_status(s, handle_errors(g.v), 0, B(DFS_ERR_MEMORY), "dfs_gear_send");
        drop_value(&v);
        loops_check_handled("dfs_gear_send");
        return;
    }
    case 2:
    case 3: {
        pick p = pick_loop();
        gear_feedback(f % 5 == 3, f, p, NULL);
        return;
    }
    default: {
        pick g = pick_gear();
        grec *r = g.rec;
        int release = (f >> 3) & 1;
        say("dfs_gear_%s(gear %p)", release ? "release" : "retain", (void *)g.h);
        dfs_status s = release ? dfs_gear_release(g.h) : dfs_gear_retain(g.h);
        check_status(s, release && g.v == V_NULL ? 0 : handle_errors(g.v), 0, 0, "dfs_gear_retain/release");
        if (s == DFS_OK && r) r->refs += release ? -1 : 1;
        return;
    }
    }
}

typedef struct replay_ctx {
    nrec *journal;
    trec *effect;
    int calls, fail_at;
} replay_ctx;

static int visit_entry(dfs_journal_entry kind, const void *value, void *ctx) {
    replay_ctx *r = ctx;
    if (kind != DFS_JOURNAL_START && kind != DFS_JOURNAL_EVENT) fail("journal entry of kind %d", (int)kind);
    check_value(kind == DFS_JOURNAL_START ? r->journal->model : r->journal->event, value, "journal entry");
    return ++r->calls == r->fail_at;
}

static int visit_model(const void *model, void *ctx) {
    replay_ctx *r = ctx;
    check_value(r->journal->model, model, "replayed model");
    return ++r->calls == r->fail_at;
}

static int replay_update(const void *model, const void *event, dfs_next *next, void *ctx) {
    replay_ctx *r = ctx;
    if (replays_active == 0) fail("a replay's update called outside dfs_journal_replay");
    check_value(r->journal->model, model, "replay update (model)");
    check_value(r->journal->event, event, "replay update (event)");
    int k = value_key(r->journal->event, event);
    if (k == 3) return 1;
    check_status(dfs_next_model(next, owned_value(r->journal->model, k + value_key(r->journal->model, model))), 0, 0, 0, "dfs_next_model (replay)");
    if (k & 1) check_status(dfs_next_effect(next, owned_value(r->effect, k)), 0, 0, 0, "dfs_next_effect (replay)");
    return 0;
}

static void op_journal(void) {
    uint8_t f = u8(), fail_at = f >> 5;
    if (f % 6 == 0) {
        pick mp = pick_type(), ep = pick_type();
        int null_out = (f & 0x18) == 0x18;
        if (n_journals >= MAX_JOURNALS) return;
        dfs_journal *h = (dfs_journal *)(uintptr_t)1;
        say("dfs_journal_new(types #%d #%d)", type_of_type_pick(mp)->id, type_of_type_pick(ep)->id);
        dfs_status s = dfs_journal_new(mp.h, ep.h, null_out ? NULL : &h);
        check_status(s, handle_errors(mp.v) | handle_errors(ep.v) | (null_out ? B(DFS_ERR_NULL) : 0),
                     mp.v == V_MAYBE || ep.v == V_MAYBE, 0, "dfs_journal_new");
        if (s != DFS_OK) return;
        journals[n_journals++] = (nrec){h, 1, type_of_type_pick(mp), type_of_type_pick(ep)};
        loop_typed[type_of_type_pick(mp)->id] = loop_typed[type_of_type_pick(ep)->id] = 1;
        return;
    }
    pick j = pick_journal();
    nrec *n = j.rec;
    unsigned errors = handle_errors(j.v);
    replay_ctx r = {n ? n : &journals[0], &types[0], 0, fail_at};
    switch (f % 6) {
    case 1: {
        int null_fn = (f & 0x18) == 0x18;
        say("dfs_journal_entries(journal %p)", (void *)j.h);
        dfs_status s = dfs_journal_entries(j.h, null_fn ? NULL : visit_entry, &r);
        check_status(s, errors | (null_fn ? B(DFS_ERR_NULL) : 0), 0, B(DFS_ERR_CALLBACK), "dfs_journal_entries");
        if (s == DFS_ERR_CALLBACK && r.calls != fail_at) fail("dfs_journal_entries: DFS_ERR_CALLBACK, but visit did not fail");
        if (s == DFS_OK && fail_at && r.calls >= fail_at) fail("dfs_journal_entries: visit failed, but DFS_OK");
        return;
    }
    case 2: {
        pick tp = pick_type();
        r.effect = type_of_type_pick(tp);
        int null_fn = (f & 0x18) == 0x18, null_visit = (f & 0x18) == 0x10;
        say("dfs_journal_replay(journal %p, effect type #%d)", (void *)j.h, r.effect->id);
        replays_active++;
        dfs_status s = dfs_journal_replay(j.h, tp.h, null_fn ? NULL : replay_update, &r, null_visit ? NULL : visit_model, &r);
        replays_active--;
        check_status(s, errors | handle_errors(tp.v) | (null_fn || null_visit ? B(DFS_ERR_NULL) : 0), tp.v == V_MAYBE,
                     B(DFS_ERR_CALLBACK), "dfs_journal_replay");
        return;
    }
    case 3: say("dfs_journal_clear(journal %p)", (void *)j.h); check_status(dfs_journal_clear(j.h), errors, 0, 0, "dfs_journal_clear"); return;
    default: {
        int release = (f >> 3) & 1;
        say("dfs_journal_%s(journal %p)", release ? "release" : "retain", (void *)j.h);
        dfs_status s = release ? dfs_journal_release(j.h) : dfs_journal_retain(j.h);
        check_status(s, release && j.v == V_NULL ? 0 : errors, 0, 0, "dfs_journal_retain/release");
        if (s == DFS_OK && n) n->refs += release ? -1 : 1;
        return;
    }
    }
}

/* ------------------------------------------------------------------------------------
 * Feedback handles
 * ------------------------------------------------------------------------------------ */

/* After work_feedback or gear_feedback made the handle: its callbacks are b's. */
static void feedback_made(brec *b, dfs_feedback *h, enum feedback_kind kind, cb *fn, cb *request) {
    b->h = h, b->refs = 1, b->kind = kind, b->fn = fn, b->request = request;
    fn->shared = b;
    if (request) request->shared = b;
    n_feedbacks++;
    say("  = feedback handle #%d (types #%d #%d)", b->id, b->model->id, b->event->id);
}

/* The loop types a new handle serves: those of a loop record (a byte below 0x80), or
 * two type picks. */
static void feedback_types(trec **mt, trec **et) {
    uint8_t b = u8();
    if (b & 0x80) {
        *mt = type_of_type_pick(pick_type());
        *et = type_of_type_pick(pick_type());
    } else if (n_loops > 0) {
        *mt = loops[b % n_loops].model;
        *et = loops[b % n_loops].event;
    } else {
        *mt = *et = &types[0];
    }
}

/* dfs_loop_add: `l` hears the models from the loop's turn on, at once on an idle
 * running loop of the caller's executor. */
static void loop_add(uint8_t f) {
    pick p = pick_loop();
    lrec *l = p.rec;
    pick fp = pick_feedback_for(l);
    brec *b = fp.rec;
    int null_out = (f & 0xF8) == 0xF8;
    unsigned errors = handle_errors(p.v) | handle_errors(fp.v) | (null_out ? B(DFS_ERR_NULL) : 0);
    if (!errors && n_uses >= MAX_USES) return; /* no room to track it */
    urec *u = errors ? NULL : &uses[n_uses++];
    if (u) *u = (urec){b, l, NULL, 0}; /* before the call: it may hear the model at once */
    cb *hears = b ? feedback_hears(b) : NULL;
    int heard = hears ? hears->calls : 0;
    dfs_disposable *x = (dfs_disposable *)(uintptr_t)1;
    say("dfs_loop_add(loop #%d, feedback handle #%d)", l ? l->id : -1, b ? b->id : -1);
    dfs_status s = dfs_loop_add(p.h, fp.h, null_out ? NULL : &x);
    check_status(s, errors, 0, 0, "dfs_loop_add");
    if (s != DFS_OK) {
        if (!null_out && x != NULL) fail("dfs_loop_add failed but *out is not NULL");
        return;
    }
    if (b->kind == FB_ATTACHED) l->uncertain = 1; /* gear events: not counted */
    if (hears && depth == 0 && exec_level == 0 && l->exec == NULL && l->state == L_RUNNING && !l->closing && hears->calls == heard)
        fail("dfs_loop_add: %s #%d of feedback handle #%d did not hear the model of the idle running loop #%d at once",
             cb_kind_names[hears->kind], hears->id, b->id, l->id);
    if (n_disposables >= MAX_DISPOSABLES) u->removed = 1; /* disposed at once, untracked */
    u->x = add_registration(x, NULL);
    loops_check_handled("dfs_loop_add");
}

static void op_feedback(void) {
    uint8_t f = u8();
    switch (f % 8) {
    case 0: /* dfs_feedback_work, dfs_feedback_request */
    case 1: /* dfs_feedback_pushing */
    case 2: /* dfs_feedback_attached */ {
        uint8_t g = u8();
        trec *mt, *et;
        feedback_types(&mt, &et);
        if (n_feedbacks >= MAX_FEEDBACKS) return;
        brec *b = &feedbacks[n_feedbacks];
        *b = (brec){.model = mt, .event = et, .id = n_feedbacks};
        pick none = {NULL, V_NULL, NULL};
        if (f % 8 == 0) work_feedback(g, none, b);
        else gear_feedback(f % 8 == 2, g, none, b);
        return;
    }
    case 3:
    case 4:
    case 5: loop_add(f); return;
    case 6: {
        pick fp = pick_feedback_for(NULL);
        brec *b = fp.rec;
        say("dfs_feedback_retain(feedback handle #%d)", b ? b->id : -1);
        dfs_status s = dfs_feedback_retain(fp.h);
        check_status(s, handle_errors(fp.v), 0, 0, "dfs_feedback_retain");
        if (s == DFS_OK && b) b->refs++;
        return;
    }
    default: {
        /* Also while loops use it, and once too often (a stale handle: DFS_ERR_HANDLE). */
        pick fp = pick_feedback_for(NULL);
        brec *b = fp.rec;
        int held = b && fp.v == V_OK;
        say("dfs_feedback_release(feedback handle #%d)", b ? b->id : -1);
        if (held) b->refs--; /* before: the last release destroys the callbacks no loop uses */
        dfs_status s = dfs_feedback_release(fp.h);
        check_status(s, fp.v == V_NULL ? 0 : handle_errors(fp.v), 0, 0, "dfs_feedback_release");
        if (s != DFS_OK && held) b->refs++;
        return;
    }
    }
}

/* ------------------------------------------------------------------------------------
 * One input: reset, and the end (every loop disposed, every executor drained)
 * ------------------------------------------------------------------------------------ */

static void loop_reset(void) {
    n_loops = n_jobs = n_executors = n_works = n_gears = n_journals = n_feedbacks = n_uses = 0;
    making_loop = exec_level = updates_active = replays_active = actions_active = 0;
    auto_events = AUTO_EVENTS;
    last_next = NULL;
    memset(loop_typed, 0, sizeof loop_typed);
}

static int drain_executors(void) {
    int ran = 0;
    for (int i = 0; i < n_executors; i++) {
        erec *e = &executors[i];
        if (e->manual && e->refs > 0) ran += dfs_executor_run_all(e->h);
    }
    for (int i = 0; i < n_works; i++)
        if (!works[i].ran) {
            run_works_of(works[i].exec, works[i].h);
            ran++;
            i = -1; /* the list may have changed */
        }
    return ran;
}

static void loop_cleanup(void) {
    for (int i = 0; i < n_loops; i++)
        if (loops[i].refs > 0) loop_close((pick){loops[i].h, V_OK, &loops[i]}, 1);
    for (int rounds = 0; drain_executors() > 0; rounds++)
        if (rounds > 100) fail("executors still get work after every loop was disposed");
    for (int i = 0; i < n_jobs; i++)
        for (; jobs[i].refs > 0; jobs[i].refs--) check_status(dfs_job_release(jobs[i].h), 0, 0, 0, "dfs_job_release (cleanup)");
    for (int i = 0; i < n_loops; i++) {
        lrec *l = &loops[i];
        for (; l->refs > 0; l->refs--) check_status(dfs_loop_release(l->h), 0, 0, 0, "dfs_loop_release (cleanup)");
        if (l->inspect && l->disposed_traces != 1) fail("loop #%d: its inspector saw DISPOSED %d times", l->id, l->disposed_traces);
        if (l->inspect && (l->uncertain ? l->seen < l->accepted : l->seen != l->accepted))
            fail("loop #%d: its inspector saw %ld events stepped, failed or dropped; %ld were accepted%s", l->id, l->seen,
                 l->accepted, l->uncertain ? " (and more from sources or gears)" : "");
        if (dfs_loop_retain(l->h) != DFS_ERR_HANDLE) fail("loop #%d is still valid after its release", l->id);
    }
    for (int i = 0; i < n_feedbacks; i++)
        while (feedbacks[i].refs > 0) {
            feedbacks[i].refs--; /* before: the release destroys the callbacks */
            check_status(dfs_feedback_release(feedbacks[i].h), 0, 0, 0, "dfs_feedback_release (cleanup)");
        }
    for (int i = 0; i < n_executors; i++)
        for (; executors[i].refs > 0; executors[i].refs--) check_status(dfs_executor_release(executors[i].h), 0, 0, 0, "dfs_executor_release (cleanup)");
    for (int i = 0; i < n_gears; i++)
        for (; gears[i].refs > 0; gears[i].refs--) check_status(dfs_gear_release(gears[i].h), 0, 0, 0, "dfs_gear_release (cleanup)");
    for (int i = 0; i < n_journals; i++)
        for (; journals[i].refs > 0; journals[i].refs--) check_status(dfs_journal_release(journals[i].h), 0, 0, 0, "dfs_journal_release (cleanup)");
    for (int i = 0; i < n_jobs; i++)
        if (dfs_job_retain(jobs[i].h) != DFS_ERR_HANDLE) fail("a job is still valid after its loop was disposed and released");
    for (int i = 0; i < n_works; i++)
        if (dfs_work_run(works[i].h) != DFS_ERR_HANDLE) fail("a piece of work can run again");
    for (int i = 0; i < n_gears; i++)
        if (dfs_gear_retain(gears[i].h) != DFS_ERR_HANDLE) fail("gear %d is still valid after its release", i);
    for (int i = 0; i < n_journals; i++)
        if (dfs_journal_retain(journals[i].h) != DFS_ERR_HANDLE) fail("journal %d is still valid after its release", i);
    for (int i = 0; i < n_feedbacks; i++)
        if (dfs_feedback_retain(feedbacks[i].h) != DFS_ERR_HANDLE) fail("feedback handle #%d is still valid after its release", i);
    /* An on-cancel action runs by the end unless its job finished first. */
    for (int i = 0; i < n_cbs; i++)
        if (cbs[i]->kind == CB_ACTION && cbs[i]->fate == 0 && cbs[i]->calls != 1)
            fail("on-cancel action #%d never ran, though its job never finished", cbs[i]->id);
}
