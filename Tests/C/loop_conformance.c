/*
 * loop_conformance.c — the C runner of the loop vectors (conformance/README.md, section
 * 11), called by conformance_runner.c for every vector of kind "loop".
 *
 * Values are jansson json_t *, of one dfs_type (equality json_equal, retain json_incref,
 * release json_decref). The loop is made with dfs_loop_new (manual_start, the vector's
 * handlers and executor, coalescing keys numbered by first use, an inspector), recorded
 * by a journal (dfs_journal_new, given in the loop config) when the vector asks; observers are
 * dfs_loop_observe, feedbacks dfs_loop_add_feedback (those given at creation
 * dfs_feedback_work, in the loop config), executors dfs_executor_new_manual.
 * Every callback only interprets the vector's vocabulary and logs what it is called
 * with; what happens when is the library's. Each step's log, result, model and running
 * state (and, for a replay, the journal and the replayed models) are compared with its
 * expect.
 *
 * One file because it is one interpreter: every callback logs into the run's record and
 * the steps look up the same named executors, jobs and registrations, so the
 * vocabulary, the steps and the comparison of a vector read together; only
 * run_loop_vector is visible outside.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "diffuser.h"
#include "loop_conformance.h"

#define MAX_NAMED 16

typedef struct named_executor {
    const char *name;
    dfs_executor *executor;
} named_executor;

typedef struct named_job {
    char *name;
    dfs_job *job;
} named_job;

typedef struct named_disposable {
    const char *name;
    dfs_disposable *disposable;
} named_disposable;

/* One vector's run: the current step's log, and everything made for the vector. */
typedef struct loop_run {
    json_t *log;
    dfs_loop *loop;
    dfs_type *type;
    dfs_journal *journal;
    int coalesce;
    /* The vector's restart rules, or NULL (no restart). */
    const json_t *restart_rules;
    named_executor executors[MAX_NAMED];
    size_t executor_count;
    named_job jobs[MAX_NAMED];
    size_t job_count;
    named_disposable registrations[MAX_NAMED];
    size_t registration_count;
    const char *keys[MAX_NAMED];
    size_t key_count;
    char problem[512];
} loop_run;

/* What a handler, observer or feedback callback knows: its run, label and rules. */
typedef struct callback_ctx {
    loop_run *run;
    const char *label;
    const json_t *rules;
} callback_ctx;

/* ------------------------------------------------------------------------------------
 * Values and the log
 * ------------------------------------------------------------------------------------ */

static int value_equal(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return json_equal((json_t *)a, (json_t *)b);
}

static const void *value_retain(const void *value, void *ctx) {
    (void)ctx;
    return json_incref((json_t *)value);
}

static void value_release(const void *value, void *ctx) {
    (void)ctx;
    json_decref((json_t *)value);
}

/* Appends [kind, values...] to the log: each argument a borrowed json_t *, NULL-ended;
 * strings are given as json_string made here (json_pack would need a format). */
static void record(loop_run *run, const char *kind, ...) {
    json_t *entry = json_array();
    json_array_append_new(entry, json_string(kind));
    va_list args;
    va_start(args, kind);
    for (const json_t *value = va_arg(args, const json_t *); value != NULL; value = va_arg(args, const json_t *))
        json_array_append(entry, (json_t *)value);
    va_end(args);
    json_array_append_new(run->log, entry);
}

static void record_text(loop_run *run, const char *kind, const char *text, const json_t *value) {
    json_t *s = json_string(text);
    record(run, kind, s, value, NULL);
    json_decref(s);
}

/* ------------------------------------------------------------------------------------
 * The vocabulary: update, actions, rules (README 11.2, 11.3)
 * ------------------------------------------------------------------------------------ */

static int update_cb(const void *model_value, const void *event_value, dfs_next *next, void *ctx) {
    loop_run *run = ctx;
    const json_t *model = model_value, *event = event_value;
    record(run, "update", event, model, NULL);
    if (json_is_true(json_object_get(event, "fail"))) {
        dfs_set_error("scripted update failure");
        return 1;
    }
    const json_t *set = json_object_get(event, "set"), *add = json_object_get(event, "add");
    if (set != NULL) dfs_next_model(next, json_incref((json_t *)set));
    else if (add != NULL) dfs_next_model(next, json_integer(json_integer_value(model) + json_integer_value(add)));
    size_t i;
    const json_t *effect;
    json_array_foreach(json_object_get(event, "emit"), i, effect) dfs_next_effect(next, json_incref((json_t *)effect));
    return 0;
}

static void hold_job(loop_run *run, const char *name, dfs_job *job);

/* What a scripted callback does once called and logged: 1 to fail, else 0. */
static int act(loop_run *run, const char *label, const json_t *action, dfs_job *job) {
    if (json_is_true(json_object_get(action, "fail"))) {
        dfs_set_error("scripted failure");
        return 1;
    }
    size_t i;
    const json_t *event;
    json_array_foreach(json_object_get(action, "send"), i, event) {
        dfs_status status = job != NULL ? dfs_job_send(job, event) : dfs_loop_dispatch(run->loop, event);
        if (status != DFS_OK) record_text(run, "refused", label, event);
    }
    json_array_foreach(json_object_get(action, "dispatch"), i, event) {
        if (dfs_loop_dispatch(run->loop, event) != DFS_OK) record_text(run, "refused", label, event);
    }
    if (job != NULL) {
        const char *hold = json_string_value(json_object_get(action, "hold"));
        if (hold != NULL) hold_job(run, hold, job);
        else dfs_job_finish(job);
    }
    /* "cancel": the job held under that name, if there is one by now. */
    const char *cancel = json_string_value(json_object_get(action, "cancel"));
    for (size_t k = 0; cancel != NULL && k < run->job_count; k++)
        if (strcmp(run->jobs[k].name, cancel) == 0) dfs_job_cancel(run->jobs[k].job);
    /* "loop": one lifecycle call, or an array of them made in order. */
    json_t *calls = json_object_get(action, "loop");
    size_t count = json_is_array(calls) ? json_array_size(calls) : calls != NULL;
    for (i = 0; i < count; i++) {
        const char *call = json_string_value(json_is_array(calls) ? json_array_get(calls, i) : calls);
        if (call == NULL) continue;
        if (strcmp(call, "stop") == 0) dfs_loop_stop(run->loop);
        else if (strcmp(call, "start") == 0) dfs_loop_start(run->loop);
        else if (strcmp(call, "dispose") == 0) dfs_loop_dispose(run->loop);
    }
    return 0;
}

/* The action of the first rule whose model matches (or is null); NULL for none. */
static const json_t *choose(const json_t *rules, const json_t *model) {
    size_t i;
    const json_t *rule;
    json_array_foreach(rules, i, rule) {
        const json_t *match = json_array_get(rule, 0);
        if (json_is_null(match) || json_equal((json_t *)match, (json_t *)model)) return json_array_get(rule, 1);
    }
    return NULL;
}

/* The restart (README 11): logs ["restart", M], makes the result's loop call, and gives
 * its `set` (else M, by giving none) and its `emit`. */
static void restart_cb(const void *model_value, dfs_next *next, void *ctx) {
    loop_run *run = ctx;
    const json_t *model = model_value;
    record(run, "restart", model, NULL);
    const json_t *result = choose(run->restart_rules, model);
    const char *call = json_string_value(json_object_get(result, "loop"));
    if (call != NULL && strcmp(call, "stop") == 0) dfs_loop_stop(run->loop);
    else if (call != NULL && strcmp(call, "dispose") == 0) dfs_loop_dispose(run->loop);
    const json_t *set = json_object_get(result, "set");
    if (set != NULL) dfs_next_model(next, json_incref((json_t *)set));
    size_t i;
    const json_t *effect;
    json_array_foreach(json_object_get(result, "emit"), i, effect) dfs_next_effect(next, json_incref((json_t *)effect));
}

/* What is wrong with a non-null `restart` (README 11.1, 11.3), or NULL: rules
 * [[null or integer, result], ...], each result an object with only an integer `set`,
 * an array `emit` and a `loop` of "stop" or "dispose". */
static const char *restart_malformed(const json_t *rules) {
    if (!json_is_array(rules)) return "restart: not null nor an array of rules";
    size_t i;
    const json_t *rule;
    json_array_foreach(rules, i, rule) {
        if (!json_is_array(rule) || json_array_size(rule) != 2) return "restart: a rule is not [match, result]";
        const json_t *match = json_array_get(rule, 0), *result = json_array_get(rule, 1);
        if (!json_is_null(match) && !json_is_integer(match)) return "restart: a match is not an integer nor null";
        if (!json_is_object(result)) return "restart: a result is not an object";
        const char *key;
        const json_t *value;
        json_object_foreach((json_t *)result, key, value) {
            const char *call = json_string_value(value);
            int bad = strcmp(key, "set") == 0    ? !json_is_integer(value)
                      : strcmp(key, "emit") == 0 ? !json_is_array(value)
                      : strcmp(key, "loop") == 0 ? call == NULL || (strcmp(call, "stop") != 0 && strcmp(call, "dispose") != 0)
                                                 : 1;
            if (bad) return "restart: a result has an unknown key, or a malformed set, emit or loop";
        }
    }
    return NULL;
}

typedef struct cancel_ctx {
    loop_run *run;
    char *name;
} cancel_ctx;

static void cancelled_cb(void *ctx) {
    cancel_ctx *c = ctx;
    json_t *name = json_string(c->name);
    record(c->run, "cancelled", name, NULL);
    json_decref(name);
}

static void cancel_destroy(void *ctx) {
    cancel_ctx *c = ctx;
    free(c->name);
    free(c);
}

static void hold_job(loop_run *run, const char *name, dfs_job *job) {
    dfs_job_retain(job);
    size_t k = 0;
    while (k < run->job_count && strcmp(run->jobs[k].name, name) != 0) k++;
    if (k == run->job_count) {
        if (k == MAX_NAMED) abort();
        run->jobs[k].name = strdup(name);
        run->job_count++;
    } else {
        dfs_job_release(run->jobs[k].job);
    }
    run->jobs[k].job = job;
    cancel_ctx *c = malloc(sizeof *c);
    c->run = run;
    c->name = strdup(name);
    dfs_job_on_cancel(job, cancelled_cb, c, cancel_destroy);
}

static int handler_cb(const void *effect, dfs_job *job, void *ctx) {
    callback_ctx *c = ctx;
    json_t *label = json_string(c->label);
    record(c->run, "handle", label, (const json_t *)effect, NULL);
    json_decref(label);
    return act(c->run, c->label, json_object_get(json_object_get(effect, "do"), c->label), job);
}

static int observer_cb(const void *model, void *ctx) {
    callback_ctx *c = ctx;
    record_text(c->run, "observe", c->label, model);
    return act(c->run, c->label, choose(c->rules, model), NULL);
}

static void feedback_cb(const void *model, dfs_job *job, void *ctx) {
    callback_ctx *c = ctx;
    record_text(c->run, "feedback", c->label, model);
    act(c->run, c->label, choose(c->rules, model), job);
}

static int key_cb(const void *event, uint64_t *key, void *ctx) {
    loop_run *run = ctx;
    const char *name = json_string_value(json_object_get(event, "key"));
    if (!run->coalesce || name == NULL) return 0;
    size_t k = 0;
    while (k < run->key_count && strcmp(run->keys[k], name) != 0) k++;
    if (k == run->key_count) {
        if (k == MAX_NAMED) abort();
        run->keys[run->key_count++] = name;
    }
    *key = k + 1;
    return 1;
}

static json_t *effects_array(const dfs_trace *trace) {
    json_t *array = json_array();
    for (size_t i = 0; i < trace->effect_count; i++) json_array_append(array, (json_t *)trace->effects[i]);
    return array;
}

static void inspect_cb(const dfs_trace *trace, void *ctx) {
    loop_run *run = ctx;
    static const char *const reasons[] = {"?", "cancelledWork", "coalesced", "stopped", "disposed"};
    json_t *entry = json_pack("[s]", "trace");
    switch (trace->kind) {
    case DFS_TRACE_STARTED:
        json_array_append_new(entry, json_string("started"));
        json_array_append(entry, (json_t *)trace->model);
        json_array_append_new(entry, effects_array(trace));
        break;
    case DFS_TRACE_STEPPED:
        json_array_append_new(entry, json_string("stepped"));
        json_array_append(entry, (json_t *)trace->event);
        json_array_append(entry, (json_t *)trace->model);
        json_array_append(entry, trace->has_next_model ? (json_t *)trace->next_model : json_null());
        json_array_append_new(entry, effects_array(trace));
        break;
    case DFS_TRACE_FAILED:
        json_array_append_new(entry, json_string("failed"));
        json_array_append(entry, (json_t *)trace->event);
        json_array_append(entry, (json_t *)trace->model);
        break;
    case DFS_TRACE_DROPPED:
        json_array_append_new(entry, json_string("dropped"));
        json_array_append(entry, (json_t *)trace->event);
        json_array_append_new(entry, json_string(trace->reason >= 1 && trace->reason <= 4 ? reasons[trace->reason] : "?"));
        break;
    case DFS_TRACE_EFFECT_FAILED:
        json_array_append_new(entry, json_string("effectFailed"));
        json_array_append(entry, (json_t *)trace->effect);
        break;
    case DFS_TRACE_OBSERVER_FAILED:
        json_array_append_new(entry, json_string("observerFailed"));
        break;
    case DFS_TRACE_SOURCE_FAILED:
        json_array_append_new(entry, json_string("sourceFailed"));
        break;
    case DFS_TRACE_FEEDBACK_FAILED:
        json_array_append_new(entry, json_string("feedbackFailed"));
        break;
    case DFS_TRACE_STOPPED:
    case DFS_TRACE_DISPOSED:
        json_array_append_new(entry, json_string(trace->kind == DFS_TRACE_STOPPED ? "stopped" : "disposed"));
        json_array_append(entry, (json_t *)trace->model);
        break;
    default:
        json_array_append_new(entry, json_string("unknown trace kind"));
        break;
    }
    json_array_append_new(run->log, entry);
}

/* ------------------------------------------------------------------------------------
 * Steps
 * ------------------------------------------------------------------------------------ */

static void problem(loop_run *run, const char *format, ...) {
    if (run->problem[0] != '\0') return;
    va_list args;
    va_start(args, format);
    vsnprintf(run->problem, sizeof run->problem, format, args);
    va_end(args);
}

static dfs_executor *executor_named(loop_run *run, const json_t *name) {
    if (json_is_null(name) || name == NULL) return NULL;
    for (size_t k = 0; k < run->executor_count; k++)
        if (strcmp(run->executors[k].name, json_string_value(name)) == 0) return run->executors[k].executor;
    problem(run, "unknown executor %s", json_string_value(name));
    return NULL;
}

static dfs_job *job_named(loop_run *run, const char *name) {
    for (size_t k = 0; k < run->job_count; k++)
        if (strcmp(run->jobs[k].name, name) == 0) return run->jobs[k].job;
    problem(run, "no job held as %s", name);
    return NULL;
}

static dfs_disposable *registration_named(loop_run *run, const char *name) {
    for (size_t k = 0; k < run->registration_count; k++)
        if (strcmp(run->registrations[k].name, name) == 0) return run->registrations[k].disposable;
    problem(run, "no registration %s", name);
    return NULL;
}

static void add_registration(loop_run *run, const char *name, dfs_disposable *disposable) {
    if (run->registration_count == MAX_NAMED) abort();
    run->registrations[run->registration_count++] = (named_disposable){name, disposable};
}

static int read_model(const void *model, void *ctx) {
    *(json_t **)ctx = json_incref((json_t *)model);
    return 0;
}

static int visit_entry(dfs_journal_entry kind, const void *value, void *ctx) {
    json_array_append_new(ctx, json_pack("[sO]", kind == DFS_JOURNAL_START ? "start" : "event", (json_t *)value));
    return 0;
}

static int visit_model(const void *model, void *ctx) {
    json_array_append(ctx, (json_t *)model);
    return 0;
}

static void destroy_free(void *ctx) { free(ctx); }

static callback_ctx *callback_for(loop_run *run, const char *label, const json_t *rules) {
    callback_ctx *c = malloc(sizeof *c);
    *c = (callback_ctx){run, label, rules};
    return c;
}

/* The overlap named by the "overlap" member of a feedback step or entry. */
static dfs_overlap overlap_named(loop_run *run, const json_t *feedback) {
    static const char *const overlaps[] = {"cancelPrevious", "keepPrevious", "concurrent"};
    const char *overlap = json_string_value(json_object_get(feedback, "overlap"));
    int o = 0;
    while (o < 3 && (overlap == NULL || strcmp(overlaps[o], overlap) != 0)) o++;
    if (o == 3) {
        problem(run, "unknown overlap");
        o = 0;
    }
    return (dfs_overlap)o;
}

static const char *const step_kinds[] = {"dispatch", "observe", "unobserve", "feedback", "remove", "send", "cancel",
                                         "finish", "run", "runAll", "start", "stop", "dispose", "replay", NULL};

/* Runs one step; returns what it gives to compare with expect (a new object). */
static json_t *run_step(loop_run *run, const json_t *step) {
    const char *kind = NULL;
    for (int k = 0; step_kinds[k] != NULL; k++) {
        if (json_object_get(step, step_kinds[k]) == NULL) continue;
        if (kind != NULL) problem(run, "a step with both %s and %s", kind, step_kinds[k]);
        kind = step_kinds[k];
    }
    json_t *result = json_null(), *got = json_object();
    if (kind == NULL) {
        problem(run, "a step of no known kind");
        return got;
    }
    const char *label = json_string_value(json_object_get(step, kind));
    const json_t *event = json_object_get(step, "event");
    if (strcmp(kind, "dispatch") == 0) {
        dfs_status status = dfs_loop_dispatch(run->loop, event);
        result = json_string(status == DFS_OK ? "ok" : (int)status == DFS_ERR_STOPPED ? "stopped"
                             : (int)status == DFS_ERR_DISPOSED ? "disposed" : "error");
    } else if (strcmp(kind, "observe") == 0) {
        dfs_disposable *made = NULL;
        dfs_loop_observe(run->loop, observer_cb, callback_for(run, label, json_object_get(step, "rules")),
                         destroy_free, &made);
        add_registration(run, label, made);
    } else if (strcmp(kind, "feedback") == 0) {
        dfs_disposable *made = NULL;
        dfs_overlap overlap = overlap_named(run, step);
        dfs_loop_add_feedback(run->loop, overlap, executor_named(run, json_object_get(step, "executor")),
                              feedback_cb, callback_for(run, label, json_object_get(step, "rules")), destroy_free,
                              &made);
        add_registration(run, label, made);
    } else if (strcmp(kind, "unobserve") == 0 || strcmp(kind, "remove") == 0) {
        dfs_disposable_dispose(registration_named(run, label));
    } else if (strcmp(kind, "send") == 0 || strcmp(kind, "cancel") == 0 || strcmp(kind, "finish") == 0) {
        dfs_job *job = job_named(run, label);
        if (job != NULL && kind[0] == 's') result = json_boolean(dfs_job_send(job, event) == DFS_OK);
        else if (job != NULL && kind[0] == 'c') dfs_job_cancel(job);
        else if (job != NULL) dfs_job_finish(job);
    } else if (strcmp(kind, "run") == 0) {
        dfs_executor *executor = executor_named(run, json_object_get(step, kind));
        if (executor != NULL) result = json_boolean(dfs_executor_run_next(executor) == 1);
    } else if (strcmp(kind, "runAll") == 0) {
        dfs_executor *executor = executor_named(run, json_object_get(step, kind));
        if (executor != NULL) result = json_integer(dfs_executor_run_all(executor));
    } else if (strcmp(kind, "start") == 0) {
        result = json_boolean(dfs_loop_start(run->loop) == DFS_OK);
    } else if (strcmp(kind, "stop") == 0) {
        dfs_loop_stop(run->loop);
    } else if (strcmp(kind, "dispose") == 0) {
        dfs_loop_dispose(run->loop);
    } else if (strcmp(kind, "replay") == 0) {
        json_t *entries = json_array(), *models = json_array();
        if (run->journal == NULL) problem(run, "replay without a journal");
        else if (dfs_journal_entries(run->journal, visit_entry, entries) != DFS_OK ||
                 dfs_journal_replay(run->journal, run->type, update_cb, run, visit_model, models) != DFS_OK)
            problem(run, "replay: %s", dfs_last_error());
        json_object_set_new(got, "journal", entries);
        json_object_set_new(got, "models", models);
    }
    json_t *model = NULL;
    if (dfs_loop_model(run->loop, read_model, &model) != DFS_OK) problem(run, "dfs_loop_model: %s", dfs_last_error());
    json_object_set_new(got, "log", json_incref(run->log));
    json_object_set_new(got, "result", result);
    json_object_set_new(got, "model", model ? model : json_null());
    json_object_set_new(got, "running", json_boolean(dfs_loop_is_running(run->loop) == 1));
    return got;
}

/* ------------------------------------------------------------------------------------
 * A vector
 * ------------------------------------------------------------------------------------ */

static void report(const char *base, size_t index, const char *key, const json_t *got, const json_t *expected) {
    char *g = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    char *e = json_dumps(expected, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
    printf("FAIL %s [loop]: step %zu: %s\n  got      %s\n  expected %s\n", base, index, key, g ? g : "?",
           e ? e : "?");
    free(g);
    free(e);
}

/* Makes the loop of the vector; 0 with run->problem set if it cannot. */
static int make_loop(loop_run *run, const json_t *vector, callback_ctx **handler_ctx, size_t *handler_count) {
    if (dfs_type_new("json", value_equal, value_retain, value_release, NULL, NULL, &run->type) != DFS_OK) {
        problem(run, "dfs_type_new: %s", dfs_last_error());
        return 0;
    }
    size_t i;
    const json_t *name;
    json_array_foreach(json_object_get(vector, "executors"), i, name) {
        if (i == MAX_NAMED) abort();
        run->executors[i].name = json_string_value(name);
        dfs_executor_new_manual(&run->executors[i].executor);
        run->executor_count++;
    }
    const json_t *handlers = json_object_get(vector, "handlers");
    const json_t *effects = json_object_get(vector, "startEffects");
    dfs_handler list[MAX_NAMED];
    const void *start[MAX_NAMED];
    const json_t *handler;
    json_array_foreach(handlers, i, handler) {
        if (i == MAX_NAMED) abort();
        handler_ctx[i] = callback_for(run, json_string_value(json_object_get(handler, "label")), NULL);
        list[i] = (dfs_handler){handler_cb, handler_ctx[i], NULL, executor_named(run, json_object_get(handler, "executor"))};
    }
    *handler_count = json_array_size(handlers);
    const json_t *effect;
    json_array_foreach(effects, i, effect) {
        if (i == MAX_NAMED) abort();
        start[i] = effect;
    }
    /* The feedbacks given at creation: the same work feedbacks as a feedback step adds,
     * registered by dfs_loop_new; each handle is released once the loop is made (the loop
     * keeps what it needs, and the callback context goes with the last of them). */
    const json_t *feedbacks = json_object_get(vector, "feedbacks");
    dfs_feedback *made[MAX_NAMED];
    size_t made_count = 0;
    int made_all = 1;
    const json_t *feedback;
    json_array_foreach(feedbacks, i, feedback) {
        if (i == MAX_NAMED) abort();
        const char *label = json_string_value(json_object_get(feedback, "label"));
        if (dfs_feedback_work(overlap_named(run, feedback), executor_named(run, json_object_get(feedback, "executor")),
                              feedback_cb, callback_for(run, label, json_object_get(feedback, "rules")), destroy_free,
                              &made[made_count]) != DFS_OK) {
            problem(run, "dfs_feedback_work: %s", dfs_last_error());
            made_all = 0;
            break;
        }
        made_count++;
    }
    if (!made_all) {
        for (size_t k = 0; k < made_count; k++) dfs_feedback_release(made[k]);
        return 0;
    }
    run->coalesce = json_is_true(json_object_get(vector, "coalesce"));
    json_t *model = json_incref(json_object_get(vector, "model"));
    dfs_loop_config config = {0};
    config.model_type = config.event_type = config.effect_type = run->type;
    config.model = model;
    config.start_effects = start;
    config.start_effect_count = json_array_size(effects);
    config.update = update_cb;
    config.update_ctx = run;
    config.handlers = list;
    config.handler_count = *handler_count;
    config.executor = executor_named(run, json_object_get(vector, "executor"));
    config.coalesce = key_cb;
    config.coalesce_ctx = run;
    config.inspect = inspect_cb;
    config.inspect_ctx = run;
    config.manual_start = 1;
    if (run->restart_rules != NULL) {
        config.restart = restart_cb;
        config.restart_ctx = run;
    }
    if (json_is_true(json_object_get(vector, "journal"))) {
        if (dfs_journal_new(run->type, run->type, &run->journal) != DFS_OK) {
            json_decref(model);
            for (size_t k = 0; k < made_count; k++) dfs_feedback_release(made[k]);
            problem(run, "dfs_journal_new: %s", dfs_last_error());
            return 0;
        }
        config.journal = run->journal;
    }
    config.feedbacks = made;
    config.feedback_count = made_count;
    dfs_status status = dfs_loop_new(&config, &run->loop);
    json_decref(model);
    for (size_t k = 0; k < made_count; k++) dfs_feedback_release(made[k]);
    if (status != DFS_OK) {
        problem(run, "dfs_loop_new: %s", dfs_last_error());
        return 0;
    }
    return 1;
}

int run_loop_vector(const json_t *vector, const char *base) {
    static const char *const keys[] = {"format", "name", "kind", "description", "model", "startEffects", "executor",
                                       "executors", "coalesce", "journal", "handlers", "feedbacks", "restart", "steps", NULL};
    loop_run *run = calloc(1, sizeof *run);
    run->log = json_array();
    const char *key;
    const json_t *value;
    json_object_foreach((json_t *)vector, key, value) {
        int known = 0;
        for (int k = 0; keys[k] != NULL; k++) known |= strcmp(keys[k], key) == 0;
        if (!known) problem(run, "unknown key %s", key);
    }
    callback_ctx *handler_ctx[MAX_NAMED];
    size_t handler_count = 0;
    /* The restart's rules, checked before anything is made: NULL for none (absent or null). */
    run->restart_rules = json_object_get(vector, "restart");
    if (json_is_null(run->restart_rules)) run->restart_rules = NULL;
    const char *malformed = run->restart_rules != NULL ? restart_malformed(run->restart_rules) : NULL;
    if (malformed != NULL) problem(run, "%s", malformed);
    int ok = run->problem[0] == '\0' && make_loop(run, vector, handler_ctx, &handler_count);
    size_t index;
    const json_t *step;
    json_array_foreach(json_object_get(vector, "steps"), index, step) {
        if (!ok) break;
        json_array_clear(run->log);
        json_t *got = run_step(run, step);
        const json_t *expect = json_object_get(step, "expect");
        if (run->problem[0] != '\0') {
            ok = 0;
        } else if (json_object_size(expect) != json_object_size(got)) {
            problem(run, "step %zu: expect has %zu keys, the runner checks %zu", index, json_object_size(expect),
                    json_object_size(got));
            ok = 0;
        } else {
            json_object_foreach(got, key, value) {
                if (!json_equal(value, json_object_get(expect, key))) {
                    report(base, index, key, value, json_object_get(expect, key));
                    ok = 0;
                    break;
                }
            }
        }
        json_decref(got);
    }
    if (run->problem[0] != '\0') printf("FAIL %s [loop]: could not run: %s\n", base, run->problem);
    /* Nothing of the vector outlives it: the loop ends, its executors' work runs (none
     * of it calls back once the loop is disposed), every handle is released. */
    if (run->loop != NULL) dfs_loop_dispose(run->loop);
    for (size_t k = 0; k < run->executor_count; k++) dfs_executor_run_all(run->executors[k].executor);
    for (size_t k = 0; k < run->registration_count; k++) dfs_disposable_release(run->registrations[k].disposable);
    for (size_t k = 0; k < run->job_count; k++) {
        dfs_job_release(run->jobs[k].job);
        free(run->jobs[k].name);
    }
    dfs_loop_release(run->loop);
    dfs_journal_release(run->journal);
    for (size_t k = 0; k < run->executor_count; k++) dfs_executor_release(run->executors[k].executor);
    for (size_t k = 0; k < handler_count; k++) free(handler_ctx[k]);
    dfs_type_release(run->type);
    json_decref(run->log);
    free(run);
    return ok;
}
