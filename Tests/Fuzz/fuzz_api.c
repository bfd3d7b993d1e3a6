/*
 * fuzz_api.c — a libFuzzer target that drives the whole C API of libdiffuser with
 * programs of calls (built and run by scripts/fuzz.sh; see Tests/Fuzz/README.md).
 *
 * The input is a program. Each byte picks an operation (make a type, compose a
 * diffuser, run it, build a fuser, connect, emit, dispose, make and call a libffi
 * closure, retain and release any handle, diff lists and lists of sections, make an
 * into_list node: fuzz_list.c; make loops and drive them, with jobs, executors, gears,
 * journals and feedback handles: fuzz_loop.c) and the next bytes its operands: which
 * handle from a small pool (live, released, NULL, forged, or a live handle of another
 * kind), which value, which callback behaviour. Callbacks fail on demand, and each may
 * carry a small program of its own that it executes when called, so every call of the
 * API also happens from inside effects, predicates, transforms, and source connect and
 * disconnect: reentrant runs, disposals from inside effects (also of the connection
 * that is delivering, through a closure), releases of handles that are in use.
 *
 * Oracles, besides AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer
 * (any violation aborts with a "fuzz_api:" message):
 * - every status is a dfs_status; a failure leaves a message in dfs_last_error() and
 *   NULL in the out parameter;
 * - a NULL, released, forged or wrong-kind handle is refused with DFS_ERR_NULL or
 *   DFS_ERR_HANDLE; a call whose handles are all valid does not fail with those; a type
 *   released more times than the caller retained it is refused with DFS_ERR_HANDLE while
 *   a diffuser still uses it; composing children of another type fails with
 *   DFS_ERR_TYPE, bad sizes and counts with DFS_ERR_ARGUMENT;
 * - every destroy runs at most once, never while its callback runs, and by the end of
 *   the input (after everything is released) exactly once; a constructor that fails has
 *   run it before it returns;
 * - no callback is called on a context after its destroy; callbacks of a diffuser run
 *   only inside a run and never nested in themselves; an into_once effect never runs
 *   again after it succeeded; an equality is never asked about two identical pointers;
 *   no event reaches an effect after the dispose of its connection returned; a source
 *   is disconnected at most once, and its dispatch still works inside disconnect;
 * - values: every value the core retains it releases (reference-counted boxes, all freed
 *   by the end of the input), none is used after its release (boxes are checked on
 *   every use, and ASan sees freed ones);
 * - loops: the oracles listed at the top of fuzz_loop.c (no callback after dispose
 *   returned, no nested step, each accepted event seen by the inspector once, jobs and
 *   on-cancel actions as the header says). Once an input made a loop, diffuser and
 *   fuser callbacks may also run outside run, emit and connect (a loop renders and
 *   connects from any call that drives it).
 *
 * Set FUZZ_API_TRACE=1 to print the program as it runs (to turn a crash into a
 * reproducer).
 *
 * One translation unit because it is one interpreter: an operation may call back into a
 * program that runs any operation, so the reader, the handle pool, the status checks
 * and the callback contexts are state every operation shares. The list and loop
 * operations, which only use that core, are in fuzz_list.c and fuzz_loop.c, included
 * below.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diffuser.h"

/* ------------------------------------------------------------------------------------
 * Failures, tracing
 * ------------------------------------------------------------------------------------ */

static int trace;
/* FUZZ_API_ALLOW_NESTED=1: do not stop at a diffuser callback called again while it
 * runs (the bug of Tests/Fuzz/repro/nested_merge.c), to look past it for others. */
static int allow_nested;
static int depth; /* how deep inside callbacks the interpreter is */

__attribute__((noreturn, format(printf, 1, 2))) static void fail(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "\nfuzz_api: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...) {
    if (!trace) return;
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%*s", 2 * depth, "");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
}

/* ------------------------------------------------------------------------------------
 * The program reader
 * ------------------------------------------------------------------------------------ */

typedef struct reader {
    const uint8_t *data;
    size_t size, at;
} reader;

static reader *in;

static int exhausted(void) { return in->at >= in->size; }
/* The next byte; 0 once the program is exhausted. */
static uint8_t u8(void) { return in->at < in->size ? in->data[in->at++] : 0; }

/* ------------------------------------------------------------------------------------
 * Values: reference-counted boxes, checked on every use
 * ------------------------------------------------------------------------------------ */

#define BOX_MAGIC 0xB0C5B0C5u
typedef struct box {
    uint32_t magic;
    int32_t value;
    int32_t refs;
    uint32_t serial;
} box;

static long live_boxes;
static uint32_t box_serial;

static box *box_new(int value) {
    box *b = malloc(sizeof *b);
    if (b == NULL) abort();
    b->magic = BOX_MAGIC;
    b->value = value;
    b->refs = 1;
    b->serial = ++box_serial;
    live_boxes++;
    return b;
}

static void box_check(const void *p, const char *who) {
    if (p == NULL) return;
    const box *b = p;
    if (b->magic != BOX_MAGIC || b->refs <= 0) fail("%s: got a box that is not alive (%p)", who, p);
}

static const void *box_retain(const void *p) {
    box_check(p, "box_retain");
    ((box *)p)->refs++;
    return p;
}

static void box_release(const void *p) {
    box_check(p, "box_release");
    box *b = (box *)p;
    if (--b->refs == 0) {
        b->magic = 0xDEADDEADu;
        free(b);
        live_boxes--;
    }
}

/* Boxes the harness keeps until the end of the input: values of types that do not
 * retain (borrowed), and parts of borrowed maps. */
#define MAX_ARENA 256
static box *arena[MAX_ARENA];
static int n_arena;

static const box *arena_box(int value) {
    if (n_arena < MAX_ARENA) return arena[n_arena++] = box_new(value);
    for (int i = 0; i < n_arena; i++) {
        if (arena[i]->value == value) return arena[i];
    }
    return arena[0];
}

static const char *const strings[4] = {"s0", "s1", "s2", "s3"};

/* ------------------------------------------------------------------------------------
 * Records: what the harness made, and what it believes about each handle
 * ------------------------------------------------------------------------------------ */

enum repr { REPR_INT, REPR_STR, REPR_FFI, REPR_BOX };
static const char *const repr_names[] = {"pointer", "cstring", "ffi_event", "box"};

struct cb;

typedef struct trec {
    dfs_type *h;
    int builtin;
    enum repr repr;
    int refs;  /* the harness's references (user types), those of contexts included */
    int owned; /* how many of them callback contexts own (released by their destroy) */
    int has_equal, has_retain, has_release, copy_retain;
    int fail_equal, fail_retain;
    struct cb *ctx;
    int id;
} trec;

typedef struct drec {
    dfs_diffuser *h;
    int refs;
    int owned;
    trec *type;
    int id;
    int nest; /* combinators deep: 1 for a leaf (DFS_MAX_DEPTH at most) */
} drec;

typedef struct frec {
    dfs_fuser *h;
    int refs;
    int owned;
    trec *type;
    int id;
    int nest; /* combinators deep: 1 for a source (DFS_MAX_DEPTH at most) */
} frec;

typedef struct xrec {
    dfs_disposable *h;
    int refs; /* 1 or 0: there is no dfs_disposable_retain */
    int disposed;
    int disposing; /* its dfs_disposable_dispose is in progress */
    struct cb *effect;
    int id;
} xrec;

enum dispatch_state {
    D_LIVE,     /* connected: emits work */
    D_ENDING,   /* disconnect called (or connect refused): invalid once the call returns */
    D_DEAD,     /* invalid */
    D_UNTRACKED /* a source without disconnect: the harness cannot tell when it ends */
};

typedef struct prec {
    dfs_dispatch *h;
    enum dispatch_state state;
    trec *type;
    struct cb *source;
    int id;
} prec;

typedef struct crec {
    void (*fn)(void);
    int sig;
    prec *dispatch;
} crec;

enum cb_kind {
    CB_TYPE, CB_EFFECT, CB_CHANGE, CB_TRANSFORM, CB_SOURCE, CB_CONN, CB_LIST_READER, CB_LIST_SINK,
    CB_UPDATE, CB_OBSERVER, CB_FEEDBACK, CB_HANDLER, CB_INSPECT, CB_KEY, CB_REQUEST, CB_PROPAGATE, CB_ACTION, CB_EXECUTE,
    CB_RESTART
};
static const char *const cb_kind_names[] = {
    "type", "effect", "did_change", "transform", "source", "connection effect", "list reader", "list sink",
    "update", "observer", "feedback", "handler", "inspector", "coalescing key", "request", "propagate",
    "on-cancel action", "execute", "restart"};

#define CB_MAGIC 0xCBCBCBCBu
#define MAX_PROG 24
enum fail_mode { FAIL_NEVER, FAIL_ODD, FAIL_VALUE, FAIL_ALWAYS };

typedef struct cb {
    uint32_t magic;
    int id;
    enum cb_kind kind;
    int tracked;  /* a destroy was given: it must run exactly once */
    int destroys; /* destroy calls so far */
    int calls;
    int active; /* calls in progress */
    int successes;
    enum fail_mode fail;
    int set_error;
    int variant;
    trec *in, *out;   /* value types received and produced */
    int borrowed;     /* transform of dfs_diffuser_map_borrowed */
    int fuser_side;   /* a fuser's transform or connection effect: may be nested */
    int unless_null;  /* transform of extract_unless_null */
    int once;         /* effect of into_once */
    int off_step;     /* a loop callback on an executor or behind a gear, not in a step */
    int fate;         /* an on-cancel action: 0 runs by the end, 1 never runs, 2 unknown */
    int refuse;       /* source: refuse connect */
    int has_disconnect;
    int emit_in_disconnect;
    drec *self_d; /* the diffuser this callback was made for */
    xrec *self_x; /* the connection of a connection effect */
    prec *self_p; /* the latest dispatch of a source */
    int own_kind; /* a handle this context holds a reference to, released by its destroy */
    void *own_rec;
    uint8_t prog[MAX_PROG];
    int prog_len;
    int budget;
    void *extra; /* a list node's state (fuzz_list.c), shared by its reader and sink; the
                  * loop, job or executor of a loop callback (fuzz_loop.c) */
    void *shared; /* a callback of a dfs_feedback handle, which loops share: its record
                   * (fuzz_loop.c; extra is then unused) */
} cb;

#define MAX_TYPES 12
#define MAX_DIFFUSERS 48
#define MAX_FUSERS 32
#define MAX_DISPOSABLES 32
#define MAX_DISPATCHES 48
#define MAX_CLOSURES 16
#define MAX_CBS 256
#define MAX_OPS 2000
#define MAX_DEPTH 4
#define ACTION_BUDGET 3

static trec types[MAX_TYPES];
static int n_types;
static drec diffusers[MAX_DIFFUSERS];
static int n_diffusers;
static frec fusers[MAX_FUSERS];
static int n_fusers;
static xrec disposables[MAX_DISPOSABLES];
static int n_disposables;
static prec dispatches[MAX_DISPATCHES];
static int n_dispatches;
static crec closures[MAX_CLOSURES];
static int n_closures;
static cb *cbs[MAX_CBS];
static int n_cbs;
static int ops_left;
static int cleaning; /* actions are off while the harness releases everything */
static int runs_active;  /* dfs_diffuser_run calls in progress */
static int emits_active; /* emits and closure calls in progress */
static int connects_active;
/* Whether this input made a loop (fuzz_loop.c): a loop runs diffusers (render) and
 * connects and emits through fusers (sources) from any call that drives it, also from
 * an emit or the dispose of a registration, not only inside run, emit and connect. */
static int loops_made;

/* ------------------------------------------------------------------------------------
 * Status checks
 * ------------------------------------------------------------------------------------ */

#define B(s) (1u << (s))

static const char *status_name(dfs_status s) { return dfs_status_name((int)s); }

/* Checks a status: in range; a failure has a message. `errors`: the errors the call
 * must fail with (one of them) because of its arguments; `uncertain`: some handle may
 * or may not be valid; `extra`: errors a call with valid arguments may return. */
static void check_status(dfs_status s, unsigned errors, int uncertain, unsigned extra, const char *call) {
    if ((unsigned)s > DFS_ERR_DISPOSED) fail("%s returned %d, not a dfs_status", call, (int)s);
    if (strcmp(dfs_status_name((int)s), "DFS_UNKNOWN") == 0) fail("%s: no name for status %d", call, (int)s);
    if (s != DFS_OK) {
        const char *message = dfs_last_error();
        if (message == NULL || message[0] == '\0') fail("%s failed with %s but left no message", call, status_name(s));
    }
    unsigned bit = B(s);
    if (uncertain) {
        if (!(bit & (errors | extra | B(DFS_OK) | B(DFS_ERR_HANDLE))))
            fail("%s returned %s (allowed: some handle may be stale; errors %#x, extra %#x)", call, status_name(s), errors, extra);
    } else if (errors) {
        if (s == DFS_OK || !(bit & (errors | extra)))
            fail("%s returned %s, but it must fail with one of %#x (invalid arguments)", call, status_name(s), errors);
    } else if (!(bit & (B(DFS_OK) | extra))) {
        fail("%s returned %s (%s) with valid arguments (allowed extra errors %#x)", call, status_name(s), dfs_last_error(), extra);
    }
    say("  -> %s%s%s", status_name(s), s ? ": " : "", s ? dfs_last_error() : "");
}

/* ------------------------------------------------------------------------------------
 * Callback contexts
 * ------------------------------------------------------------------------------------ */

static void run_action(cb *c);

static cb *cb_enter(void *ctx, const char *who) {
    cb *c = ctx;
    if (c == NULL || c->magic != CB_MAGIC) fail("%s: called with a ctx that is not a live callback context (%p)", who, ctx);
    if (c->destroys) fail("%s: %s #%d called after its destroy", who, cb_kind_names[c->kind], c->id);
    return c;
}

/* A context may hold a reference to an older handle (as a binding holds what its
 * callback needs) and drop it in its destroy, that is from wherever the core happens
 * to drop the callback. Older: so that no cycle keeps both alive. */
enum own_kind { OWN_NONE, OWN_TYPE, OWN_DIFFUSER, OWN_FUSER };

static void check_status(dfs_status s, unsigned errors, int uncertain, unsigned extra, const char *call);

static void cb_own(cb *c, uint8_t a, uint8_t b) {
    int kind = (a & 3) % 3, n = 0, want;
    switch (kind) {
    case 0:
        for (int i = 3; i < n_types; i++) n += types[i].refs > 0;
        if (n == 0) return;
        want = b % n;
        for (int i = 3; i < n_types; i++) {
            trec *t = &types[i];
            if (t->refs <= 0 || want-- != 0) continue;
            check_status(dfs_type_retain(t->h), 0, 0, 0, "dfs_type_retain (for a context)");
            t->refs++;
            t->owned++;
            c->own_kind = OWN_TYPE;
            c->own_rec = t;
            say("  (context #%d holds type #%d)", c->id, t->id);
            return;
        }
        return;
    case 1:
        for (int i = 0; i < n_diffusers; i++) n += diffusers[i].refs > 0;
        if (n == 0) return;
        want = b % n;
        for (int i = 0; i < n_diffusers; i++) {
            drec *d = &diffusers[i];
            if (d->refs <= 0 || want-- != 0) continue;
            check_status(dfs_diffuser_retain(d->h), 0, 0, 0, "dfs_diffuser_retain (for a context)");
            d->refs++;
            d->owned++;
            c->own_kind = OWN_DIFFUSER;
            c->own_rec = d;
            say("  (context #%d holds diffuser #%d)", c->id, d->id);
            return;
        }
        return;
    default:
        for (int i = 0; i < n_fusers; i++) n += fusers[i].refs > 0;
        if (n == 0) return;
        want = b % n;
        for (int i = 0; i < n_fusers; i++) {
            frec *f = &fusers[i];
            if (f->refs <= 0 || want-- != 0) continue;
            check_status(dfs_fuser_retain(f->h), 0, 0, 0, "dfs_fuser_retain (for a context)");
            f->refs++;
            f->owned++;
            c->own_kind = OWN_FUSER;
            c->own_rec = f;
            say("  (context #%d holds fuser #%d)", c->id, f->id);
            return;
        }
        return;
    }
}

static void cb_disown(cb *c) {
    if (c->own_kind == OWN_NONE) return;
    depth++; /* like a callback: objects in flight may hold types */
    switch (c->own_kind) {
    case OWN_TYPE: {
        trec *t = c->own_rec;
        say("(context #%d drops type #%d)", c->id, t->id);
        t->refs--;
        t->owned--;
        check_status(dfs_type_release(t->h), 0, 0, 0, "dfs_type_release (in a destroy)");
        break;
    }
    case OWN_DIFFUSER: {
        drec *d = c->own_rec;
        say("(context #%d drops diffuser #%d)", c->id, d->id);
        d->refs--;
        d->owned--;
        check_status(dfs_diffuser_release(d->h), 0, 0, 0, "dfs_diffuser_release (in a destroy)");
        break;
    }
    case OWN_FUSER: {
        frec *f = c->own_rec;
        say("(context #%d drops fuser #%d)", c->id, f->id);
        f->refs--;
        f->owned--;
        check_status(dfs_fuser_release(f->h), 0, 0, 0, "dfs_fuser_release (in a destroy)");
        break;
    }
    default: break;
    }
    c->own_kind = OWN_NONE;
    depth--;
}

static void feedback_destroyed(cb *c); /* fuzz_loop.c */

static void cb_destroy(void *ctx) {
    cb *c = ctx;
    if (c == NULL || c->magic != CB_MAGIC) fail("destroy: ctx %p is not a callback context", ctx);
    say("  (destroy %s #%d)", cb_kind_names[c->kind], c->id);
    if (!c->tracked) fail("destroy: %s #%d was given no destroy", cb_kind_names[c->kind], c->id);
    if (c->destroys++) fail("destroy: %s #%d destroyed twice", cb_kind_names[c->kind], c->id);
    if (c->active) fail("destroy: %s #%d destroyed while its callback runs", cb_kind_names[c->kind], c->id);
    if (c->shared) feedback_destroyed(c);
    cb_disown(c);
}

/* A callback context, with its behaviour read from the program: how it fails, whether
 * it has a destroy, and its own little program. NULL when the pool is full. */
static cb *make_cb(enum cb_kind kind, trec *in_type, trec *out_type) {
    uint8_t f = u8();
    uint8_t a = u8();
    uint8_t own = a >= 0xA0 && a < 0xC0 ? u8() : 0;
    if (n_cbs >= MAX_CBS) return NULL;
    cb *c = calloc(1, sizeof *c);
    if (c == NULL) abort();
    c->magic = CB_MAGIC;
    c->id = n_cbs;
    c->kind = kind;
    c->in = in_type;
    c->out = out_type;
    switch (f & 7) {
    case 5: c->fail = FAIL_ODD; break;
    case 6: c->fail = FAIL_VALUE; break;
    case 7: c->fail = FAIL_ALWAYS; break;
    default: c->fail = FAIL_NEVER; break;
    }
    c->set_error = (f & 8) != 0;
    c->tracked = (f & 0x30) != 0x30;
    c->variant = f >> 6;
    if (a >= 0xC0) {
        c->prog_len = (a & 0x0F) + 1;
        for (int i = 0; i < c->prog_len; i++) c->prog[i] = u8();
        c->budget = ACTION_BUDGET;
    }
    cbs[n_cbs++] = c;
    if (a >= 0xA0 && a < 0xC0 && c->tracked) cb_own(c, a, own);
    return c;
}

/* A context that was made but never handed to the library. */
static void discard_cb(cb *c) {
    cb_disown(c);
    c->tracked = 0;
}

static dfs_destroy_fn destroy_of(cb *c) { return c != NULL && c->tracked ? cb_destroy : NULL; }

/* After a constructor failed: its callbacks must have been destroyed already. */
static void check_destroyed(cb *c, const char *call) {
    if (c != NULL && c->tracked && c->destroys != 1)
        fail("%s failed but did not destroy %s #%d before returning", call, cb_kind_names[c->kind], c->id);
}

static void check_alive(cb *c, const char *call) {
    if (c != NULL && c->destroys) fail("%s succeeded but destroyed %s #%d", call, cb_kind_names[c->kind], c->id);
}

/* ------------------------------------------------------------------------------------
 * Values by representation
 * ------------------------------------------------------------------------------------ */

static void check_event(const dfs_ffi_event *e, const char *who) {
    if (e->count > 32) fail("%s: ffi event with %zu arguments", who, e->count);
    if (e->count > 0 && e->args == NULL) fail("%s: ffi event without arguments", who);
    for (size_t i = 0; i < e->count; i++) {
        const dfs_ffi_value *v = &e->args[i];
        if (v->type <= DFS_FFI_VOID || v->type > DFS_FFI_STRING) fail("%s: ffi argument of type %d", who, (int)v->type);
        if (v->type == DFS_FFI_STRING && v->as.s != NULL) (void)strlen(v->as.s);
    }
}

static void check_value(const trec *t, const void *v, const char *who) {
    if (v == NULL) return;
    switch (t->repr) {
    case REPR_BOX: box_check(v, who); break;
    case REPR_STR: (void)strlen(v); break;
    case REPR_FFI: check_event(v, who); break;
    case REPR_INT: break;
    }
}

/* A small key of a value, for failures "on this value" and for transforms. */
static int value_key(const trec *t, const void *v) {
    if (v == NULL) return 0;
    switch (t->repr) {
    case REPR_BOX: return ((const box *)v)->value & 7;
    case REPR_STR: return (((const char *)v)[1] - '0') & 7;
    case REPR_FFI: return (int)((const dfs_ffi_event *)v)->count & 7;
    case REPR_INT: return (int)((uintptr_t)v & 7);
    }
    return 0;
}

/* A value of type `t` for a call; *drop says what to do after the call. */
typedef struct value {
    const void *p;
    enum { DROP_NONE, DROP_BOX, DROP_FREE } drop;
    dfs_ffi_event event;
    dfs_ffi_value args[3];
} value;

static void make_value(const trec *t, value *v) {
    uint8_t b = u8();
    v->p = NULL;
    v->drop = DROP_NONE;
    int k = b & 7;
    if ((b & 0xF0) == 0xF0) return; /* NULL */
    switch (t->repr) {
    case REPR_INT: v->p = (const void *)(uintptr_t)(k % 3); break;
    case REPR_STR:
        v->p = strdup(strings[k & 3]);
        v->drop = DROP_FREE;
        break;
    case REPR_FFI:
        v->args[0].type = DFS_FFI_INT32;
        v->args[0].as.i = k;
        v->args[1].type = DFS_FFI_STRING;
        v->args[1].as.s = (b & 8) ? NULL : strings[k & 3];
        v->args[2].type = DFS_FFI_DOUBLE;
        v->args[2].as.d = k * 0.5;
        v->event.count = (size_t)(b >> 4) % 4;
        v->event.args = v->args;
        v->p = &v->event;
        break;
    case REPR_BOX:
        if (t->has_retain && (b & 8)) {
            v->p = box_new(k % 6);
            v->drop = DROP_BOX;
        } else {
            v->p = arena_box(k % 6);
        }
        break;
    }
}

static void drop_value(value *v) {
    if (v->drop == DROP_BOX) box_release(v->p);
    if (v->drop == DROP_FREE) free((void *)v->p);
    v->p = NULL;
    v->drop = DROP_NONE;
}

/* ------------------------------------------------------------------------------------
 * Handles: validity, picking
 * ------------------------------------------------------------------------------------ */

enum validity { V_OK, V_NULL, V_BAD, V_MAYBE };

typedef struct pick {
    void *h;
    enum validity v;
    void *rec;
} pick;

static int type_used(const trec *t) {
    for (int i = 0; i < n_diffusers; i++)
        if (diffusers[i].refs > 0 && diffusers[i].type == t) return 1;
    for (int i = 0; i < n_fusers; i++)
        if (fusers[i].refs > 0 && fusers[i].type == t) return 1;
    return 0;
}

/* Whether a type's handle is valid: the caller holds a reference, or a live diffuser
 * or fuser was built on it. Inside a callback, objects in flight (the diffuser being
 * run) may hold it too, so a type the harness cannot prove valid is "maybe". */
static int loop_type_use(const trec *t); /* fuzz_loop.c */

static enum validity type_validity(const trec *t) {
    if (t->builtin || t->refs > 0 || type_used(t)) return V_OK;
    if (loop_type_use(t)) return V_MAYBE; /* a loop object may hold it, for as long as it lives */
    return depth > 0 ? V_MAYBE : V_BAD;
}

static enum validity dispatch_validity(const prec *p) {
    switch (p->state) {
    case D_LIVE: return V_OK;
    case D_DEAD: return V_BAD;
    default: return V_MAYBE;
    }
}

/* Live handles of any kind but `not`, for wrong-kind tests. */
enum kind { K_TYPE, K_DIFFUSER, K_FUSER, K_DISPOSABLE, K_DISPATCH };

static void *other_kind(enum kind not, uint8_t b) {
    for (int tries = 0; tries < 5; tries++) {
        enum kind k = (enum kind)((b + tries) % 5);
        if (k == not) continue;
        int n;
        switch (k) {
        case K_TYPE: return types[(b >> 3) % n_types].h; /* a builtin one at least is live */
        case K_DIFFUSER:
            n = n_diffusers;
            for (int i = 0; i < n; i++)
                if (diffusers[(i + b) % n].refs > 0) return diffusers[(i + b) % n].h;
            break;
        case K_FUSER:
            n = n_fusers;
            for (int i = 0; i < n; i++)
                if (fusers[(i + b) % n].refs > 0) return fusers[(i + b) % n].h;
            break;
        case K_DISPOSABLE:
            n = n_disposables;
            for (int i = 0; i < n; i++)
                if (disposables[(i + b) % n].refs > 0) return disposables[(i + b) % n].h;
            break;
        case K_DISPATCH:
            n = n_dispatches;
            for (int i = 0; i < n; i++)
                if (dispatches[(i + b) % n].state == D_LIVE) return dispatches[(i + b) % n].h;
            break;
        }
    }
    return NULL;
}

static int forge_target;
static void *forged_feedback(enum kind kind, uint8_t b); /* fuzz_loop.c */

/* A handle that is not valid for `kind`: never issued, a pointer, or another kind's. */
static void *forge(enum kind kind, uint8_t b) {
    switch (b & 7) {
    case 0: return (void *)(uintptr_t)0xFFFFFFFFu;             /* generation 0, huge index */
    case 1: return (void *)(uintptr_t)(((b >> 3) & 31) + 1);   /* generation 0: never issued */
    case 2: {
        uintptr_t p = (uintptr_t)&forge_target; /* a real pointer: index out of range */
        return (p & 0xFFFFFFFFu) < 0x10000 ? (void *)(uintptr_t)0xFFFFFFFEu : (void *)p;
    }
    case 3: return (void *)(uintptr_t)UINTPTR_MAX;
    default: {
        void *h = forged_feedback(kind, b); /* a live dfs_feedback, for the rest of its family */
        if (h == NULL) h = other_kind(kind, b);
        return h ? h : (void *)(uintptr_t)0x7FFFFFFFu;
    }
    }
}

/* Picks a record index among those with `live` validity first. Modes of the byte:
 * 0-4 a valid record (or any if none is), 5 any record, 6 NULL, 7 forged (the next
 * byte says how). Without records, 0-6 give NULL. */
#define PICK(kind, arr, n, validity_of)                                                  \
    do {                                                                                \
        uint8_t b = u8();                                                               \
        unsigned mode = b >> 5;                                                         \
        if (mode <= 5 && (n) > 0) {                                                     \
            int chosen = -1;                                                            \
            if (mode <= 4) {                                                            \
                int valid = 0;                                                          \
                for (int i = 0; i < (n); i++) valid += validity_of(&arr[i]) == V_OK;    \
                if (valid > 0) {                                                        \
                    int want = (b & 31) % valid;                                        \
                    for (int i = 0; i < (n); i++) {                                     \
                        if (validity_of(&arr[i]) == V_OK && want-- == 0) {              \
                            chosen = i;                                                 \
                            break;                                                      \
                        }                                                               \
                    }                                                                   \
                }                                                                       \
            }                                                                           \
            if (chosen < 0) chosen = (b & 31) % (n);                                    \
            return (pick){arr[chosen].h, validity_of(&arr[chosen]), &arr[chosen]};      \
        }                                                                               \
        if (mode == 7) return (pick){forge(kind, u8()), V_BAD, NULL};                   \
        return (pick){NULL, V_NULL, NULL};                                              \
    } while (0)

static enum validity drec_validity(const drec *d) { return d->refs > 0 ? V_OK : V_BAD; }
static enum validity frec_validity(const frec *f) { return f->refs > 0 ? V_OK : V_BAD; }
static enum validity xrec_validity(const xrec *x) { return x->refs > 0 ? V_OK : V_BAD; }

static pick pick_type(void) { PICK(K_TYPE, types, n_types, type_validity); }
static pick pick_diffuser(void) { PICK(K_DIFFUSER, diffusers, n_diffusers, drec_validity); }
static pick pick_fuser(void) { PICK(K_FUSER, fusers, n_fusers, frec_validity); }
static pick pick_disposable(void) { PICK(K_DISPOSABLE, disposables, n_disposables, xrec_validity); }
static pick pick_dispatch(void) { PICK(K_DISPATCH, dispatches, n_dispatches, dispatch_validity); }

/* The errors a handle argument may cause. */
static unsigned handle_errors(enum validity v) {
    return v == V_NULL ? B(DFS_ERR_NULL) : v == V_BAD ? B(DFS_ERR_HANDLE) : 0;
}

static trec *type_of_diffuser_pick(pick p) { return p.rec ? ((drec *)p.rec)->type : &types[0]; }
static trec *type_of_fuser_pick(pick p) { return p.rec ? ((frec *)p.rec)->type : &types[0]; }
static trec *type_of_type_pick(pick p) { return p.rec ? (trec *)p.rec : &types[0]; }

static drec *add_diffuser(dfs_diffuser *h, trec *type) {
    if (n_diffusers >= MAX_DIFFUSERS) {
        /* No room to track it: let it go (still a valid test of release). */
        check_status(dfs_diffuser_release(h), 0, 0, 0, "dfs_diffuser_release (untracked)");
        return NULL;
    }
    drec *d = &diffusers[n_diffusers];
    *d = (drec){.h = h, .refs = 1, .type = type, .id = n_diffusers, .nest = 1};
    n_diffusers++;
    say("  = diffuser #%d of %s #%d", d->id, repr_names[type->repr], type->id);
    return d;
}

static frec *add_fuser(dfs_fuser *h, trec *type) {
    if (n_fusers >= MAX_FUSERS) {
        check_status(dfs_fuser_release(h), 0, 0, 0, "dfs_fuser_release (untracked)");
        return NULL;
    }
    frec *f = &fusers[n_fusers];
    *f = (frec){.h = h, .refs = 1, .type = type, .id = n_fusers, .nest = 1};
    n_fusers++;
    say("  = fuser #%d of %s #%d", f->id, repr_names[type->repr], type->id);
    return f;
}

/* How many combinators deep the picked diffuser (or fuser) is; 0 for a handle that is
 * not one the harness made (NULL, forged). */
static int nest_of(pick p, int fuser) {
    if (p.rec == NULL) return 0;
    return fuser ? ((frec *)p.rec)->nest : ((drec *)p.rec)->nest;
}

/* A combinator over children whose deepest is `nest` deep must fail past the bound. */
static unsigned depth_errors(int nest) { return nest >= DFS_MAX_DEPTH ? B(DFS_ERR_ARGUMENT) : 0; }

/* Records that the new diffuser or fuser (if tracked) is one above `nest`. */
static void set_nest(drec *d, frec *f, int nest) {
    if (d) d->nest = nest + 1;
    if (f) f->nest = nest + 1;
}

/* ------------------------------------------------------------------------------------
 * The callbacks
 * ------------------------------------------------------------------------------------ */

static int should_fail(cb *c, const void *v) {
    switch (c->fail) {
    case FAIL_NEVER: return 0;
    case FAIL_ODD: return c->calls % 2 == 1;
    case FAIL_VALUE: return value_key(c->in, v) == 3;
    case FAIL_ALWAYS: return 1;
    }
    return 0;
}

static void enter_diffuser_callback(cb *c, const char *who) {
    if (runs_active == 0 && !loops_made) fail("%s #%d called outside any dfs_diffuser_run", who, c->id);
    if (c->active && !allow_nested)
        fail("%s #%d called again while it runs (runs must be queued)", who, c->id);
}

static void enter_fuser_callback(cb *c, const char *who) {
    if (emits_active == 0 && connects_active == 0 && !loops_made)
        fail("%s #%d called outside any emission", who, c->id);
}

static int on_effect(const void *v, void *ctx) {
    cb *c = cb_enter(ctx, "effect");
    if (c->kind != CB_EFFECT && c->kind != CB_CONN) fail("effect called with the ctx of a %s", cb_kind_names[c->kind]);
    check_value(c->in, v, "effect");
    if (c->kind == CB_CONN) {
        enter_fuser_callback(c, "connection effect");
        if (c->self_x && c->self_x->disposed)
            fail("connection effect #%d called after the dispose of its connection returned", c->id);
    } else {
        enter_diffuser_callback(c, "effect");
        if (c->once && c->successes > 0) fail("into_once effect #%d ran again after it succeeded", c->id);
    }
    say("%s #%d (%s key %d, %p)", cb_kind_names[c->kind], c->id, repr_names[c->in->repr], value_key(c->in, v), v);
    c->calls++;
    c->active++;
    run_action(c);
    c->active--;
    check_value(c->in, v, "effect (after its action)");
    if (should_fail(c, v)) {
        if (c->set_error) dfs_set_error("fuzz: the effect failed");
        return 7;
    }
    c->successes++;
    return 0;
}

static int on_change(const void *old, const void *new_value, void *ctx) {
    cb *c = cb_enter(ctx, "did_change");
    if (c->kind != CB_CHANGE) fail("did_change called with the ctx of a %s", cb_kind_names[c->kind]);
    check_value(c->in, old, "did_change(old)");
    check_value(c->in, new_value, "did_change(new)");
    enter_diffuser_callback(c, "did_change");
    say("did_change #%d (key %d -> %d)", c->id, value_key(c->in, old), value_key(c->in, new_value));
    c->calls++;
    c->active++;
    run_action(c);
    c->active--;
    check_value(c->in, old, "did_change(old) after its action");
    check_value(c->in, new_value, "did_change(new) after its action");
    if (should_fail(c, new_value)) {
        if (c->set_error) dfs_set_error("fuzz: did_change failed");
        return -3;
    }
    switch (c->variant) {
    case 0: return value_key(c->in, old) != value_key(c->in, new_value);
    case 1: return 1;
    case 2: return 0;
    default: return c->calls % 2;
    }
}

/* What a transform stores in *out: a value of its output type, owned by the core when
 * the map owns its parts and the type releases, borrowed (valid until the end of the
 * input) otherwise. */
static const void *transform_output(cb *c, const void *v) {
    trec *o = c->out;
    int owned = !c->borrowed && o->has_release;
    int k = value_key(c->in, v);
    if (c->unless_null && k == 2) return NULL;
    switch (o->repr) {
    case REPR_INT: return (const void *)(uintptr_t)(k & 1);
    case REPR_STR:
        if (owned) {
            char *s = strdup(strings[k & 3]);
            if (s == NULL) abort();
            return s;
        }
        return strings[k & 3];
    case REPR_FFI: return NULL; /* an owned event would need the library's layout */
    case REPR_BOX:
        if (owned && (c->variant & 2) && c->in->repr == REPR_BOX && v != NULL) return box_retain(v);
        return owned ? box_new(k % 4) : arena_box(k % 4);
    }
    return NULL;
}

static int on_transform(const void *v, const void **out, void *ctx) {
    cb *c = cb_enter(ctx, "transform");
    if (c->kind != CB_TRANSFORM) fail("transform called with the ctx of a %s", cb_kind_names[c->kind]);
    if (out == NULL) fail("transform #%d: out is NULL", c->id);
    check_value(c->in, v, "transform");
    if (c->fuser_side) enter_fuser_callback(c, "extract transform");
    else enter_diffuser_callback(c, "transform");
    say("transform #%d (%s key %d -> %s%s)", c->id, repr_names[c->in->repr], value_key(c->in, v),
        repr_names[c->out->repr], c->borrowed ? ", borrowed" : "");
    c->calls++;
    c->active++;
    run_action(c);
    c->active--;
    check_value(c->in, v, "transform (after its action)");
    if (should_fail(c, v)) {
        if (c->set_error) dfs_set_error("fuzz: the transform failed");
        /* Sometimes fail after storing a value: the core must release an owned one. */
        if (c->variant & 1) *out = transform_output(c, v);
        return 5;
    }
    *out = transform_output(c, v);
    return 0;
}

/* Value-type callbacks: pure, no actions. */
static int on_equal(const void *a, const void *b, void *ctx) {
    cb *c = cb_enter(ctx, "equal");
    if (c->kind != CB_TYPE) fail("equal called with the ctx of a %s", cb_kind_names[c->kind]);
    if (a == b) fail("equal of type #%d called with two identical pointers", c->in->id);
    box_check(a, "equal(a)");
    box_check(b, "equal(b)");
    int ka = a ? ((const box *)a)->value : -1, kb = b ? ((const box *)b)->value : -1;
    if (c->in->fail_equal && (ka == 5 || kb == 5)) {
        if (c->set_error) dfs_set_error("fuzz: equal failed");
        return -1;
    }
    return ka == kb;
}

static const void *on_retain(const void *v, void *ctx) {
    cb *c = cb_enter(ctx, "retain");
    if (c->kind != CB_TYPE) fail("retain called with the ctx of a %s", cb_kind_names[c->kind]);
    if (v == NULL) return NULL;
    box_check(v, "retain");
    if (c->in->fail_retain && ((const box *)v)->value == 4) return NULL;
    return c->in->copy_retain ? box_new(((const box *)v)->value) : box_retain(v);
}

static void on_release(const void *v, void *ctx) {
    cb *c = cb_enter(ctx, "release");
    if (c->kind != CB_TYPE) fail("release called with the ctx of a %s", cb_kind_names[c->kind]);
    if (v != NULL) box_release(v);
}

/* Sources: connect makes a dispatch record; disconnect checks it is called once. */
#define TOKEN_MAGIC 0x70CE0070u
typedef struct token {
    uint32_t magic;
    prec *dispatch;
} token;

static int on_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    cb *c = cb_enter(ctx, "connect");
    if (c->kind != CB_SOURCE) fail("connect called with the ctx of a %s", cb_kind_names[c->kind]);
    if (dispatch == NULL || connection == NULL) fail("connect #%d: NULL dispatch or connection", c->id);
    if (connects_active == 0 && !loops_made) fail("source #%d connected outside dfs_fuser_connect", c->id);
    c->calls++;
    prec *p = NULL;
    if (n_dispatches < MAX_DISPATCHES) {
        p = &dispatches[n_dispatches];
        *p = (prec){.h = dispatch, .state = c->has_disconnect ? D_LIVE : D_UNTRACKED, .type = c->in, .source = c,
                    .id = n_dispatches};
        n_dispatches++;
        c->self_p = p;
    }
    say("connect source #%d -> dispatch #%d", c->id, p ? p->id : -1);
    c->active++;
    run_action(c);
    c->active--;
    int refuse = p == NULL || c->refuse == 1 || (c->refuse == 2 && c->calls % 2 == 0);
    if (refuse) {
        if (p) p->state = D_ENDING;
        say("  (refused)");
        if (c->set_error) dfs_set_error("fuzz: the source refused");
        return 9;
    }
    if (c->has_disconnect) {
        token *t = malloc(sizeof *t);
        if (t == NULL) abort();
        t->magic = TOKEN_MAGIC;
        t->dispatch = p;
        *connection = t;
    }
    return 0;
}

static void on_disconnect(void *connection, void *ctx) {
    cb *c = cb_enter(ctx, "disconnect");
    if (c->kind != CB_SOURCE) fail("disconnect called with the ctx of a %s", cb_kind_names[c->kind]);
    token *t = connection;
    if (t == NULL || t->magic != TOKEN_MAGIC) fail("disconnect of source #%d with a connection it did not make (or twice)", c->id);
    prec *p = t->dispatch;
    if (p->state != D_LIVE) fail("disconnect of dispatch #%d, which is not connected", p->id);
    say("disconnect source #%d dispatch #%d", c->id, p->id);
    if (c->emit_in_disconnect) {
        /* The dispatch stays valid until disconnect returns. */
        value v;
        make_value(p->type, &v);
        emits_active++;
        dfs_status s = dfs_dispatch_emit(p->h, v.p);
        emits_active--;
        check_status(s, 0, 0, B(DFS_ERR_CALLBACK), "dfs_dispatch_emit inside disconnect");
        drop_value(&v);
    }
    p->state = D_ENDING;
    c->active++;
    run_action(c);
    c->active--;
    t->magic = 0;
    free(t);
}

/* ------------------------------------------------------------------------------------
 * Closures
 * ------------------------------------------------------------------------------------ */

typedef struct sig {
    dfs_ffi_type ret;
    size_t count;
    dfs_ffi_type args[12];
} sig;

static const sig sigs[] = {
    {DFS_FFI_VOID, 0, {0}},
    {DFS_FFI_INT, 1, {DFS_FFI_INT32}},
    {DFS_FFI_VOID, 3, {DFS_FFI_INT32, DFS_FFI_DOUBLE, DFS_FFI_STRING}},
    {DFS_FFI_INT, 4, {DFS_FFI_INT8, DFS_FFI_UINT16, DFS_FFI_INT64, DFS_FFI_FLOAT}},
    {DFS_FFI_INT, 1, {DFS_FFI_STRING}},
    {DFS_FFI_VOID, 11,
     {DFS_FFI_POINTER, DFS_FFI_UINT64, DFS_FFI_STRING, DFS_FFI_DOUBLE, DFS_FFI_INT32, DFS_FFI_INT32,
      DFS_FFI_UINT32, DFS_FFI_UINT8, DFS_FFI_INT16, DFS_FFI_DOUBLE, DFS_FFI_FLOAT}},
};
#define N_SIGS (sizeof sigs / sizeof sigs[0])

/* Calls a closure through its real signature. Returns the status an int closure
 * returns, or DFS_OK. */
__attribute__((no_sanitize("function"))) static int call_closure(const crec *c, uint8_t b) {
    const char *s = (b & 1) ? NULL : strings[b & 3];
    switch (c->sig) {
    case 0: ((void (*)(void))c->fn)(); return DFS_OK;
    case 1: return ((int (*)(int32_t))c->fn)(b);
    case 2: ((void (*)(int32_t, double, const char *))c->fn)(b, b * 0.25, s); return DFS_OK;
    case 3: return ((int (*)(int8_t, uint16_t, int64_t, float))c->fn)((int8_t)b, (uint16_t)(b * 257), -(int64_t)b, b * 0.5f);
    case 4: return ((int (*)(const char *))c->fn)(s);
    case 5:
        ((void (*)(void *, uint64_t, const char *, double, int32_t, int32_t, uint32_t, uint8_t, int16_t, double,
                   float))c->fn)((void *)(uintptr_t)b, (uint64_t)b << 40, s, 1.5, b, -b, b, b, (int16_t)-b, 2.5, 3.5f);
        return DFS_OK;
    }
    return DFS_OK;
}

/* ------------------------------------------------------------------------------------
 * Operations
 * ------------------------------------------------------------------------------------ */

static void op_type_new(void) {
    uint8_t f = u8();
    int null_out = (f & 0xE0) == 0xE0;
    if (n_types >= MAX_TYPES) return;
    trec *t = &types[n_types];
    memset(t, 0, sizeof *t);
    t->id = n_types;
    t->repr = REPR_BOX;
    switch (f & 3) {
    case 0: t->has_retain = t->has_release = 1; break;                      /* reference counts */
    case 1: t->has_retain = t->has_release = t->copy_retain = 1; break;     /* copies */
    case 2: break;                                                          /* borrowed */
    case 3: t->has_release = 1; break;                                      /* only transform outputs owned */
    }
    t->has_equal = !(f & 4);
    t->fail_equal = (f & 8) != 0;
    t->fail_retain = (f & 16) != 0;
    cb *c = make_cb(CB_TYPE, t, NULL);
    if (c == NULL) return;
    dfs_type *h = (dfs_type *)(uintptr_t)1;
    say("dfs_type_new(#%d: equal %d retain %d%s release %d%s)", t->id, t->has_equal, t->has_retain,
        t->copy_retain ? " (copy)" : "", t->has_release, null_out ? ", out NULL" : "");
    dfs_status s = dfs_type_new((f & 0x40) ? NULL : "fuzz", t->has_equal ? on_equal : NULL,
                                t->has_retain ? on_retain : NULL, t->has_release ? on_release : NULL, c,
                                destroy_of(c), null_out ? NULL : &h);
    check_status(s, null_out ? B(DFS_ERR_NULL) : 0, 0, 0, "dfs_type_new");
    if (s != DFS_OK) {
        check_destroyed(c, "dfs_type_new");
        return;
    }
    check_alive(c, "dfs_type_new");
    t->h = h;
    t->refs = 1;
    t->ctx = c;
    n_types++;
}

static void op_type_retain_release(int release) {
    pick p = pick_type();
    trec *t = p.rec;
    /* The references contexts hold are theirs to drop. */
    if (release && t && !t->builtin && t->refs > 0 && t->refs <= t->owned) return;
    say("dfs_type_%s(#%d)", release ? "release" : "retain", t ? t->id : -1);
    dfs_status s = release ? dfs_type_release(p.h) : dfs_type_retain(p.h);
    unsigned errors = release && p.v == V_NULL ? 0 : handle_errors(p.v);
    int uncertain = p.v == V_MAYBE;
    if (release && t && !t->builtin && p.v != V_NULL && t->refs == 0) {
        errors = B(DFS_ERR_HANDLE); /* over-release, or stale: refused either way */
        uncertain = 0;
    }
    check_status(s, errors, uncertain, 0, release ? "dfs_type_release" : "dfs_type_retain");
    if (s == DFS_OK && t && !t->builtin) t->refs += release ? -1 : 1;
}

/* into, into_always, into_once */
static void op_into(void) {
    uint8_t f = u8();
    pick tp = pick_type();
    trec *t = type_of_type_pick(tp);
    cb *c = make_cb(CB_EFFECT, t, NULL);
    if (c == NULL) return;
    int variant = f % 3, null_fn = (f & 0x1C) == 0x1C, null_out = (f & 0xE0) == 0xE0;
    c->once = variant == 2;
    dfs_diffuser *d = (dfs_diffuser *)(uintptr_t)1;
    static const char *const names[] = {"dfs_diffuser_into", "dfs_diffuser_into_always", "dfs_diffuser_into_once"};
    say("%s(type #%d, effect #%d)", names[variant], t->id, c->id);
    dfs_effect_fn fn = null_fn ? NULL : on_effect;
    dfs_diffuser **out = null_out ? NULL : &d;
    dfs_status s = variant == 0   ? dfs_diffuser_into(tp.h, fn, c, destroy_of(c), out)
                   : variant == 1 ? dfs_diffuser_into_always(tp.h, fn, c, destroy_of(c), out)
                                  : dfs_diffuser_into_once(tp.h, fn, c, destroy_of(c), out);
    unsigned errors = handle_errors(tp.v) | (null_fn || null_out ? B(DFS_ERR_NULL) : 0);
    check_status(s, errors, tp.v == V_MAYBE, 0, names[variant]);
    if (s != DFS_OK) {
        if (!null_out && d != NULL) fail("%s failed but *out is not NULL", names[variant]);
        check_destroyed(c, names[variant]);
        return;
    }
    check_alive(c, names[variant]);
    c->self_d = add_diffuser(d, t);
}

static void op_into_when(void) {
    uint8_t f = u8();
    pick cp = pick_diffuser();
    trec *t = type_of_diffuser_pick(cp);
    cb *c = make_cb(CB_CHANGE, t, NULL);
    if (c == NULL) return;
    int null_fn = (f & 0x1C) == 0x1C, null_out = (f & 0xE0) == 0xE0;
    dfs_diffuser *d = (dfs_diffuser *)(uintptr_t)1;
    say("dfs_diffuser_into_when(did_change #%d, child #%d)", c->id, cp.rec ? ((drec *)cp.rec)->id : -1);
    dfs_status s = dfs_diffuser_into_when(null_fn ? NULL : on_change, c, destroy_of(c), cp.h, null_out ? NULL : &d);
    unsigned errors = handle_errors(cp.v) | (null_fn || null_out ? B(DFS_ERR_NULL) : 0) | depth_errors(nest_of(cp, 0));
    check_status(s, errors, 0, 0, "dfs_diffuser_into_when");
    if (s != DFS_OK) {
        if (!null_out && d != NULL) fail("dfs_diffuser_into_when failed but *out is not NULL");
        check_destroyed(c, "dfs_diffuser_into_when");
        return;
    }
    check_alive(c, "dfs_diffuser_into_when");
    c->self_d = add_diffuser(d, t);
    set_nest(c->self_d, NULL, nest_of(cp, 0));
}

static void op_into_when_effect(void) {
    uint8_t f = u8();
    pick tp = pick_type();
    trec *t = type_of_type_pick(tp);
    cb *c = make_cb(CB_CHANGE, t, NULL);
    cb *e = make_cb(CB_EFFECT, t, NULL);
    if (c == NULL || e == NULL) { /* the pool is full: never handed over */
        if (c) discard_cb(c);
        if (e) discard_cb(e);
        return;
    }
    int null_change = (f & 0x0C) == 0x0C, null_effect = (f & 0x30) == 0x30, null_out = (f & 0xC0) == 0xC0 && (f & 1);
    dfs_diffuser *d = (dfs_diffuser *)(uintptr_t)1;
    say("dfs_diffuser_into_when_effect(type #%d, did_change #%d, effect #%d)", t->id, c->id, e->id);
    dfs_status s = dfs_diffuser_into_when_effect(tp.h, null_change ? NULL : on_change, c, destroy_of(c),
                                                 null_effect ? NULL : on_effect, e, destroy_of(e), null_out ? NULL : &d);
    unsigned errors = handle_errors(tp.v) | (null_change || null_effect || null_out ? B(DFS_ERR_NULL) : 0);
    check_status(s, errors, tp.v == V_MAYBE, 0, "dfs_diffuser_into_when_effect");
    if (s != DFS_OK) {
        if (!null_out && d != NULL) fail("dfs_diffuser_into_when_effect failed but *out is not NULL");
        check_destroyed(c, "dfs_diffuser_into_when_effect");
        check_destroyed(e, "dfs_diffuser_into_when_effect");
        return;
    }
    check_alive(c, "dfs_diffuser_into_when_effect");
    check_alive(e, "dfs_diffuser_into_when_effect");
    drec *r = add_diffuser(d, t);
    c->self_d = e->self_d = r;
}

/* into_all, into_always_all, fuser_from_all: a list of children with a count that may
 * lie. Returns the errors the list causes. */
static unsigned pick_children(void **list, size_t *count, int *list_null, int *uncertain, int *nest, trec *t,
                              int fuser) {
    uint8_t f = u8();
    size_t n = f % 5;
    unsigned errors = 0;
    *nest = 0;
    for (size_t i = 0; i < n; i++) {
        pick p = fuser ? pick_fuser() : pick_diffuser();
        list[i] = p.h;
        errors |= handle_errors(p.v);
        if (nest_of(p, fuser) > *nest) *nest = nest_of(p, fuser);
        if (p.v == V_MAYBE) *uncertain = 1;
        if (p.v == V_OK) {
            trec *ct = fuser ? ((frec *)p.rec)->type : ((drec *)p.rec)->type;
            if (ct != t) errors |= B(DFS_ERR_TYPE);
        }
    }
    *count = n;
    *list_null = 0;
    switch (f >> 5) {
    case 5: /* NULL list */
        *list_null = 1;
        if (n == 0) break;
        return B(DFS_ERR_NULL);
    case 6: /* a count out of range (the list is never read) */
        *count = (f & 0x10) ? SIZE_MAX : (size_t)1 << 24;
        return B(DFS_ERR_ARGUMENT);
    default: break;
    }
    return errors | depth_errors(*nest);
}

static void op_into_all(void) {
    uint8_t f = u8();
    pick tp = pick_type();
    trec *t = type_of_type_pick(tp);
    void *list[4];
    size_t count;
    int list_null, uncertain = tp.v == V_MAYBE, nest;
    unsigned errors = pick_children(list, &count, &list_null, &uncertain, &nest, t, 0);
    int always = f & 1, null_out = (f & 0xE0) == 0xE0;
    if (null_out) errors |= B(DFS_ERR_NULL);
    errors |= handle_errors(tp.v);
    const char *name = always ? "dfs_diffuser_into_always_all" : "dfs_diffuser_into_all";
    say("%s(type #%d, %zu children%s)", name, t->id, count, list_null ? ", NULL list" : "");
    dfs_diffuser *d = (dfs_diffuser *)(uintptr_t)1;
    dfs_diffuser *const *children = list_null ? NULL : (dfs_diffuser *const *)list;
    dfs_status s = always ? dfs_diffuser_into_always_all(tp.h, children, count, null_out ? NULL : &d)
                          : dfs_diffuser_into_all(tp.h, children, count, null_out ? NULL : &d);
    check_status(s, errors, uncertain, 0, name);
    if (s != DFS_OK) {
        if (!null_out && d != NULL) fail("%s failed but *out is not NULL", name);
        return;
    }
    set_nest(add_diffuser(d, t), NULL, nest);
}

static void op_map(void) {
    uint8_t f = u8();
    pick tp = pick_type();
    pick cp = pick_diffuser();
    trec *t = type_of_type_pick(tp), *ct = type_of_diffuser_pick(cp);
    cb *c = make_cb(CB_TRANSFORM, t, ct);
    if (c == NULL) return;
    c->borrowed = f & 1;
    int null_fn = (f & 0x1C) == 0x1C, null_out = (f & 0xE0) == 0xE0;
    const char *name = c->borrowed ? "dfs_diffuser_map_borrowed" : "dfs_diffuser_map";
    say("%s(type #%d, transform #%d, child #%d of type #%d)", name, t->id, c->id, cp.rec ? ((drec *)cp.rec)->id : -1, ct->id);
    dfs_diffuser *d = (dfs_diffuser *)(uintptr_t)1;
    dfs_transform_fn fn = null_fn ? NULL : on_transform;
    dfs_status s = c->borrowed ? dfs_diffuser_map_borrowed(tp.h, fn, c, destroy_of(c), cp.h, null_out ? NULL : &d)
                               : dfs_diffuser_map(tp.h, fn, c, destroy_of(c), cp.h, null_out ? NULL : &d);
    unsigned errors = handle_errors(tp.v) | handle_errors(cp.v) | (null_fn || null_out ? B(DFS_ERR_NULL) : 0) |
                      depth_errors(nest_of(cp, 0));
    check_status(s, errors, tp.v == V_MAYBE, 0, name);
    if (s != DFS_OK) {
        if (!null_out && d != NULL) fail("%s failed but *out is not NULL", name);
        check_destroyed(c, name);
        return;
    }
    check_alive(c, name);
    c->self_d = add_diffuser(d, t);
    set_nest(c->self_d, NULL, nest_of(cp, 0));
}

static void op_map_field(void) {
    uint8_t f = u8();
    pick tp = pick_type();
    pick cp = pick_diffuser();
    trec *t = type_of_type_pick(tp), *ct = type_of_diffuser_pick(cp);
    static const size_t offsets[] = {offsetof(box, magic), offsetof(box, value), offsetof(box, refs), 0, 8, 12, 1, 3};
    static const size_t good_sizes[] = {1, 2, 4, 8};
    size_t offset = offsets[f & 7], size = good_sizes[(f >> 3) & 3];
    /* Only a box type can be read in place, and only into integer parts (pointer type):
     * anything else is given a bad size, so that it fails. */
    int usable = t->repr == REPR_BOX && ct->repr == REPR_INT && offset + size <= sizeof(box);
    int bad = !usable || (f & 0xE0) == 0xE0;
    if (bad) {
        static const size_t bad_sizes[] = {0, 3, 5, 16};
        size = bad_sizes[(f >> 5) & 3];
        if ((f & 0x60) == 0x60) offset = SIZE_MAX - 3; /* above PTRDIFF_MAX */
    }
    say("dfs_diffuser_map_field(type #%d, offset %zu, size %zu, child #%d of type #%d)", t->id, offset, size,
        cp.rec ? ((drec *)cp.rec)->id : -1, ct->id);
    dfs_diffuser *d = (dfs_diffuser *)(uintptr_t)1;
    dfs_status s = dfs_diffuser_map_field(tp.h, offset, size, cp.h, &d);
    unsigned errors = handle_errors(tp.v) | handle_errors(cp.v) | (bad ? B(DFS_ERR_ARGUMENT) : 0) |
                      depth_errors(nest_of(cp, 0));
    check_status(s, errors, tp.v == V_MAYBE, 0, "dfs_diffuser_map_field");
    if (s != DFS_OK) {
        if (d != NULL) fail("dfs_diffuser_map_field failed but *out is not NULL");
        return;
    }
    set_nest(add_diffuser(d, t), NULL, nest_of(cp, 0));
}

static void op_invert(void) {
    uint8_t f = u8();
    pick cp = pick_diffuser();
    trec *ct = type_of_diffuser_pick(cp);
    int null_out = (f & 0xE0) == 0xE0;
    say("dfs_diffuser_invert(child #%d of type #%d)", cp.rec ? ((drec *)cp.rec)->id : -1, ct->id);
    dfs_diffuser *d = (dfs_diffuser *)(uintptr_t)1;
    dfs_status s = dfs_diffuser_invert(cp.h, null_out ? NULL : &d);
    unsigned errors = handle_errors(cp.v) | (null_out ? B(DFS_ERR_NULL) : 0) | depth_errors(nest_of(cp, 0));
    if (cp.v == V_OK && ct != &types[0]) errors |= B(DFS_ERR_TYPE);
    check_status(s, errors, 0, 0, "dfs_diffuser_invert");
    if (s != DFS_OK) {
        if (!null_out && d != NULL) fail("dfs_diffuser_invert failed but *out is not NULL");
        return;
    }
    int nest = nest_of(cp, 0) + 1;
    if ((f & 0x1F) == 0x1F) {
        /* Up to the bound, keeping only the top: a tree the pool could not grow to (it
         * tracks a few dozen diffusers), over which every composing call must fail. */
        say("  inverts up to DFS_MAX_DEPTH (%d deep now)", nest);
        for (; nest < DFS_MAX_DEPTH; nest++) {
            dfs_diffuser *next = NULL;
            check_status(dfs_diffuser_invert(d, &next), 0, 0, 0, "dfs_diffuser_invert (to the bound)");
            check_status(dfs_diffuser_release(d), 0, 0, 0, "dfs_diffuser_release (to the bound)");
            d = next;
        }
        dfs_diffuser *over = (dfs_diffuser *)(uintptr_t)1;
        check_status(dfs_diffuser_invert(d, &over), B(DFS_ERR_ARGUMENT), 0, 0, "dfs_diffuser_invert (past the bound)");
        if (over != NULL) fail("dfs_diffuser_invert past the bound failed but *out is not NULL");
    }
    set_nest(add_diffuser(d, &types[0]), NULL, nest - 1);
}

static void run_diffuser(pick p) {
    trec *t = type_of_diffuser_pick(p);
    value v;
    make_value(t, &v);
    say("dfs_diffuser_run(diffuser #%d, %s key %d)", p.rec ? ((drec *)p.rec)->id : -1, repr_names[t->repr], value_key(t, v.p));
    runs_active++;
    dfs_status s = dfs_diffuser_run(p.h, v.p);
    runs_active--;
    /* NULL: a field map run on a NULL value; MEMORY: a retain that returned NULL. */
    check_status(s, handle_errors(p.v), 0, B(DFS_ERR_CALLBACK) | B(DFS_ERR_NULL) | B(DFS_ERR_MEMORY), "dfs_diffuser_run");
    drop_value(&v);
}

static void op_run(void) { run_diffuser(pick_diffuser()); }

static void op_diffuser_handle(void) {
    uint8_t f = u8();
    pick p = pick_diffuser();
    drec *d = p.rec;
    switch (f % 3) {
    case 0: {
        say("dfs_diffuser_retain(#%d)", d ? d->id : -1);
        dfs_status s = dfs_diffuser_retain(p.h);
        check_status(s, handle_errors(p.v), 0, 0, "dfs_diffuser_retain");
        if (s == DFS_OK && d) d->refs++;
        break;
    }
    case 1: {
        if (d && d->refs > 0 && d->refs <= d->owned) return; /* only contexts' references */
        say("dfs_diffuser_release(#%d)", d ? d->id : -1);
        dfs_status s = dfs_diffuser_release(p.h);
        check_status(s, p.v == V_NULL ? 0 : handle_errors(p.v), 0, 0, "dfs_diffuser_release");
        if (s == DFS_OK && d) d->refs--;
        break;
    }
    default: {
        dfs_type *t = dfs_diffuser_type(p.h);
        say("dfs_diffuser_type(#%d)", d ? d->id : -1);
        if (p.v == V_OK && t != d->type->h) fail("dfs_diffuser_type of diffuser #%d is not its type", d->id);
        if (p.v != V_OK && t != NULL) fail("dfs_diffuser_type of an invalid handle is not NULL");
        break;
    }
    }
}

static void op_fuser_from(void) {
    uint8_t f = u8();
    pick tp = pick_type();
    trec *t = type_of_type_pick(tp);
    cb *c = make_cb(CB_SOURCE, t, NULL);
    if (c == NULL) return;
    int null_connect = (f & 0x07) == 0x07, null_out = (f & 0xE0) == 0xE0;
    c->has_disconnect = (f & 0x18) != 0x18;
    c->refuse = (f & 0x60) == 0x20 ? 1 : (f & 0x60) == 0x40 ? 2 : 0;
    c->emit_in_disconnect = (f & 0x80) != 0;
    say("dfs_fuser_from(type #%d, source #%d%s%s)", t->id, c->id, c->has_disconnect ? "" : ", no disconnect",
        c->refuse ? ", refusing" : "");
    dfs_fuser *h = (dfs_fuser *)(uintptr_t)1;
    dfs_status s = dfs_fuser_from(tp.h, null_connect ? NULL : on_connect, c->has_disconnect ? on_disconnect : NULL, c,
                                  destroy_of(c), null_out ? NULL : &h);
    unsigned errors = handle_errors(tp.v) | (null_connect || null_out ? B(DFS_ERR_NULL) : 0);
    check_status(s, errors, tp.v == V_MAYBE, 0, "dfs_fuser_from");
    if (s != DFS_OK) {
        if (!null_out && h != NULL) fail("dfs_fuser_from failed but *out is not NULL");
        check_destroyed(c, "dfs_fuser_from");
        return;
    }
    check_alive(c, "dfs_fuser_from");
    add_fuser(h, t);
}

static void op_fuser_from_all(void) {
    uint8_t f = u8();
    pick tp = pick_type();
    trec *t = type_of_type_pick(tp);
    void *list[4];
    size_t count;
    int list_null, uncertain = tp.v == V_MAYBE, nest;
    unsigned errors = pick_children(list, &count, &list_null, &uncertain, &nest, t, 1) | handle_errors(tp.v);
    int null_out = (f & 0xE0) == 0xE0;
    if (null_out) errors |= B(DFS_ERR_NULL);
    say("dfs_fuser_from_all(type #%d, %zu children%s)", t->id, count, list_null ? ", NULL list" : "");
    dfs_fuser *h = (dfs_fuser *)(uintptr_t)1;
    dfs_status s = dfs_fuser_from_all(tp.h, list_null ? NULL : (dfs_fuser *const *)list, count, null_out ? NULL : &h);
    check_status(s, errors, uncertain, 0, "dfs_fuser_from_all");
    if (s != DFS_OK) {
        if (!null_out && h != NULL) fail("dfs_fuser_from_all failed but *out is not NULL");
        return;
    }
    nest += 1;
    if (count == 1 && (f & 0x1F) == 0x1F) {
        /* Up to the bound, keeping only the top (see op_invert). */
        say("  single fan-ins up to DFS_MAX_DEPTH (%d deep now)", nest);
        for (; nest < DFS_MAX_DEPTH; nest++) {
            dfs_fuser *next = NULL;
            check_status(dfs_fuser_from_all(tp.h, &h, 1, &next), 0, 0, 0, "dfs_fuser_from_all (to the bound)");
            check_status(dfs_fuser_release(h), 0, 0, 0, "dfs_fuser_release (to the bound)");
            h = next;
        }
        dfs_fuser *over = (dfs_fuser *)(uintptr_t)1;
        check_status(dfs_fuser_from_all(tp.h, &h, 1, &over), B(DFS_ERR_ARGUMENT), 0, 0,
                     "dfs_fuser_from_all (past the bound)");
        if (over != NULL) fail("dfs_fuser_from_all past the bound failed but *out is not NULL");
    }
    set_nest(NULL, add_fuser(h, t), nest - 1);
}

static void op_fuser_extract(void) {
    uint8_t f = u8();
    pick tp = pick_type();
    pick cp = pick_fuser();
    trec *t = type_of_type_pick(tp), *ct = type_of_fuser_pick(cp);
    int variant = f % 3, null_out = (f & 0xE0) == 0xE0;
    dfs_fuser *h = (dfs_fuser *)(uintptr_t)1;
    dfs_status s;
    unsigned errors = handle_errors(tp.v) | handle_errors(cp.v) | (null_out ? B(DFS_ERR_NULL) : 0) |
                      depth_errors(nest_of(cp, 1));
    const char *name;
    cb *c = NULL;
    if (variant == 2) {
        name = "dfs_fuser_extract_constant";
        value v;
        make_value(t, &v);
        say("%s(type #%d, key %d, child of type #%d)", name, t->id, value_key(t, v.p), ct->id);
        s = dfs_fuser_extract_constant(tp.h, v.p, cp.h, null_out ? NULL : &h);
        drop_value(&v);
        /* MEMORY: the type's retain refused the constant. */
        check_status(s, errors, tp.v == V_MAYBE, B(DFS_ERR_MEMORY), name);
    } else {
        name = variant ? "dfs_fuser_extract_unless_null" : "dfs_fuser_extract";
        c = make_cb(CB_TRANSFORM, ct, t);
        if (c == NULL) return;
        c->fuser_side = 1;
        c->unless_null = variant == 1;
        int null_fn = (f & 0x1C) == 0x1C;
        if (null_fn) errors |= B(DFS_ERR_NULL);
        say("%s(type #%d, transform #%d, child of type #%d)", name, t->id, c->id, ct->id);
        dfs_transform_fn fn = null_fn ? NULL : on_transform;
        s = variant ? dfs_fuser_extract_unless_null(tp.h, fn, c, destroy_of(c), cp.h, null_out ? NULL : &h)
                    : dfs_fuser_extract(tp.h, fn, c, destroy_of(c), cp.h, null_out ? NULL : &h);
        check_status(s, errors, tp.v == V_MAYBE, 0, name);
    }
    if (s != DFS_OK) {
        if (!null_out && h != NULL) fail("%s failed but *out is not NULL", name);
        check_destroyed(c, name);
        return;
    }
    check_alive(c, name);
    set_nest(NULL, add_fuser(h, t), nest_of(cp, 1));
}

static void op_connect(void) {
    uint8_t f = u8();
    pick fp = pick_fuser();
    trec *t = type_of_fuser_pick(fp);
    cb *c = make_cb(CB_CONN, t, NULL);
    if (c == NULL) return;
    c->fuser_side = 1;
    int null_fn = (f & 0x07) == 0x07, null_out = (f & 0xE0) == 0xE0;
    say("dfs_fuser_connect(fuser #%d, effect #%d)", fp.rec ? ((frec *)fp.rec)->id : -1, c->id);
    dfs_disposable *x = (dfs_disposable *)(uintptr_t)1;
    connects_active++;
    dfs_status s = dfs_fuser_connect(fp.h, null_fn ? NULL : on_effect, c, destroy_of(c), null_out ? NULL : &x);
    connects_active--;
    unsigned errors = handle_errors(fp.v) | (null_fn || null_out ? B(DFS_ERR_NULL) : 0);
    /* CALLBACK: a source refused. */
    check_status(s, errors, 0, B(DFS_ERR_CALLBACK), "dfs_fuser_connect");
    if (s != DFS_OK) {
        if (!null_out && x != NULL) fail("dfs_fuser_connect failed but *out is not NULL");
        check_destroyed(c, "dfs_fuser_connect");
        return;
    }
    check_alive(c, "dfs_fuser_connect");
    if (n_disposables >= MAX_DISPOSABLES) {
        check_status(dfs_disposable_dispose(x), 0, 0, 0, "dfs_disposable_dispose (untracked)");
        check_status(dfs_disposable_release(x), 0, 0, 0, "dfs_disposable_release (untracked)");
        c->self_x = NULL;
        return;
    }
    xrec *r = &disposables[n_disposables];
    *r = (xrec){.h = x, .refs = 1, .effect = c, .id = n_disposables};
    n_disposables++;
    c->self_x = r;
    say("  = connection #%d", r->id);
}

static void emit_on(pick p) {
    prec *d = p.rec;
    trec *t = d ? d->type : &types[0];
    value v;
    make_value(t, &v);
    say("dfs_dispatch_emit(dispatch #%d, %s key %d)", d ? d->id : -1, repr_names[t->repr], value_key(t, v.p));
    emits_active++;
    dfs_status s = dfs_dispatch_emit(p.h, v.p);
    emits_active--;
    check_status(s, handle_errors(p.v), p.v == V_MAYBE, B(DFS_ERR_CALLBACK) | B(DFS_ERR_MEMORY), "dfs_dispatch_emit");
    drop_value(&v);
}

static void op_emit(void) { emit_on(pick_dispatch()); }

static void dispose(pick p) {
    xrec *x = p.rec;
    say("dfs_disposable_dispose(#%d)", x ? x->id : -1);
    if (x) x->disposing++;
    dfs_status s = dfs_disposable_dispose(p.h);
    if (x) x->disposing--;
    check_status(s, handle_errors(p.v), 0, 0, "dfs_disposable_dispose");
    if (s == DFS_OK && x) x->disposed = 1;
}

static void release_disposable(pick p) {
    xrec *x = p.rec;
    /* A connection released without dispose stays connected for ever (diffuser.h):
     * the harness disposes first. */
    if (x && p.v == V_OK && !x->disposed) {
        dispose(p);
        p.v = xrec_validity(x); /* a disconnect may have released it meanwhile */
    }
    say("dfs_disposable_release(#%d)", x ? x->id : -1);
    dfs_status s = dfs_disposable_release(p.h);
    check_status(s, p.v == V_NULL ? 0 : handle_errors(p.v), 0, 0, "dfs_disposable_release");
    if (s == DFS_OK && x) x->refs--;
}

static void op_dispose(void) { dispose(pick_disposable()); }
static void op_disposable_release(void) { release_disposable(pick_disposable()); }

static void op_fuser_handle(void) {
    uint8_t f = u8();
    pick p = pick_fuser();
    frec *r = p.rec;
    switch (f % 3) {
    case 0: {
        say("dfs_fuser_retain(#%d)", r ? r->id : -1);
        dfs_status s = dfs_fuser_retain(p.h);
        check_status(s, handle_errors(p.v), 0, 0, "dfs_fuser_retain");
        if (s == DFS_OK && r) r->refs++;
        break;
    }
    case 1: {
        if (r && r->refs > 0 && r->refs <= r->owned) return; /* only contexts' references */
        say("dfs_fuser_release(#%d)", r ? r->id : -1);
        dfs_status s = dfs_fuser_release(p.h);
        check_status(s, p.v == V_NULL ? 0 : handle_errors(p.v), 0, 0, "dfs_fuser_release");
        if (s == DFS_OK && r) r->refs--;
        break;
    }
    default: {
        dfs_type *t = dfs_fuser_type(p.h);
        say("dfs_fuser_type(#%d)", r ? r->id : -1);
        if (p.v == V_OK && t != r->type->h) fail("dfs_fuser_type of fuser #%d is not its type", r->id);
        if (p.v != V_OK && t != NULL) fail("dfs_fuser_type of an invalid handle is not NULL");
        break;
    }
    }
}

static void op_closure_new(void) {
    uint8_t f = u8();
    uint8_t g = u8();
    pick p = pick_dispatch();
    prec *d = p.rec;
    const sig *sg = &sigs[f % N_SIGS];
    dfs_ffi_type args[40];
    memcpy(args, sg->args, sizeof sg->args);
    dfs_ffi_type ret = sg->ret;
    size_t count = sg->count;
    const dfs_ffi_type *arg_list = args;
    unsigned errors = handle_errors(p.v);
    int null_fn = (g & 0x0F) == 0x0F;
    if (null_fn) errors |= B(DFS_ERR_NULL);
    switch (g >> 5) {
    case 5: ret = DFS_FFI_DOUBLE; errors |= B(DFS_ERR_ARGUMENT); break;
    case 6:
        if (g & 0x10) {
            count = 33;
            for (int i = 0; i < 40; i++) args[i] = DFS_FFI_INT32;
            errors |= B(DFS_ERR_ARGUMENT);
        } else if (count > 0) {
            args[count - 1] = (dfs_ffi_type)99;
            errors |= B(DFS_ERR_ARGUMENT);
        } else {
            count = 1;
            arg_list = NULL;
            errors |= B(DFS_ERR_NULL);
        }
        break;
    case 7:
        if (count > 0) {
            args[0] = DFS_FFI_VOID;
            errors |= B(DFS_ERR_ARGUMENT);
        }
        break;
    default: break;
    }
    if ((p.v == V_OK || p.v == V_MAYBE) && d->type != &types[2]) errors |= B(DFS_ERR_TYPE);
    say("dfs_closure_new(dispatch #%d, signature %d, ret %d, count %zu)", d ? d->id : -1, (int)(f % N_SIGS), (int)ret, count);
    void (*fn)(void) = (void (*)(void))(uintptr_t)1;
    dfs_status s = dfs_closure_new(p.h, ret, arg_list, count, null_fn ? NULL : &fn);
    check_status(s, errors, p.v == V_MAYBE, B(DFS_ERR_MEMORY), "dfs_closure_new");
    if (s != DFS_OK) {
        if (!null_fn && fn != NULL) fail("dfs_closure_new failed but *fn is not NULL");
        return;
    }
    if (fn == NULL) fail("dfs_closure_new succeeded with a NULL function");
    if (d == NULL || d->state != D_LIVE || n_closures >= MAX_CLOSURES) return; /* never called */
    closures[n_closures++] = (crec){fn, (int)(f % N_SIGS), d};
}

static void op_closure_call(void) {
    uint8_t f = u8();
    uint8_t b = u8();
    int live = 0;
    for (int i = 0; i < n_closures; i++) live += closures[i].dispatch->state == D_LIVE;
    if (live == 0) return;
    int want = f % live;
    for (int i = 0; i < n_closures; i++) {
        crec *c = &closures[i];
        if (c->dispatch->state != D_LIVE || want-- != 0) continue;
        say("call closure %d (signature %d, dispatch #%d)", i, c->sig, c->dispatch->id);
        emits_active++;
        int status = call_closure(c, b);
        emits_active--;
        if (status != DFS_OK && status != DFS_ERR_CALLBACK)
            fail("a closure returned %d (%s)", status, dfs_status_name(status));
        say("  -> %s", dfs_status_name(status));
        return;
    }
}

static void op_misc(void) {
    uint8_t f = u8();
    switch (f % 6) {
    case 0: (void)strlen(dfs_last_error()); break;
    case 1: dfs_set_error(NULL); if (dfs_last_error()[0] != '\0') fail("dfs_set_error(NULL) left a message"); break;
    case 2:
        dfs_set_error("fuzz: a message");
        if (strcmp(dfs_last_error(), "fuzz: a message") != 0) fail("dfs_set_error did not set the message");
        break;
    case 3: {
        const char *n = dfs_status_name((int)(int8_t)u8());
        if (n == NULL) fail("dfs_status_name returned NULL");
        (void)strlen(n);
        break;
    }
    case 4:
        if (dfs_abi_version() != DFS_ABI_VERSION) fail("ABI version mismatch");
        (void)strlen(dfs_version());
        break;
    default:
        if (dfs_diffuser_type(NULL) != NULL || dfs_fuser_type(NULL) != NULL) fail("type of NULL is not NULL");
        break;
    }
}

/* Inside a callback: act on the very object the callback belongs to. */
static void op_self(cb *self) {
    uint8_t f = u8();
    if (self == NULL) return;
    switch (self->kind) {
    case CB_EFFECT:
    case CB_CHANGE:
    case CB_TRANSFORM:
        if (self->self_d == NULL) return;
        {
            drec *d = self->self_d;
            pick p = {d->h, drec_validity(d), d};
            if (f & 1) {
                say("self: run own diffuser #%d", d->id);
                run_diffuser(p); /* reentrant: queued */
            } else if (d->refs > d->owned) {
                say("self: release own diffuser #%d", d->id);
                dfs_status s = dfs_diffuser_release(d->h);
                check_status(s, 0, 0, 0, "dfs_diffuser_release (self)");
                d->refs--;
            }
        }
        break;
    case CB_CONN:
        if (self->self_x == NULL) return;
        {
            xrec *x = self->self_x;
            pick p = {x->h, xrec_validity(x), x};
            if (f & 1) {
                say("self: dispose own connection #%d", x->id);
                dispose(p);
            } else {
                say("self: dispose and release own connection #%d", x->id);
                release_disposable(p);
            }
        }
        break;
    case CB_SOURCE:
        if (self->self_p == NULL) return;
        {
            prec *d = self->self_p;
            emit_on((pick){d->h, dispatch_validity(d), d});
        }
        break;
    default: break;
    }
}

/* The list operations: op_list_diff, op_list_sections, op_into_list. */
#include "fuzz_list.c"
/* The loop operations: op_loop_new ... op_journal, op_loop_self, op_feedback. */
#include "fuzz_loop.c"

enum op {
    OP_TYPE_NEW, OP_TYPE_RETAIN, OP_TYPE_RELEASE, OP_INTO, OP_INTO_WHEN, OP_INTO_WHEN_EFFECT, OP_INTO_ALL, OP_MAP,
    OP_MAP_FIELD, OP_INVERT, OP_RUN, OP_DIFFUSER_HANDLE, OP_FUSER_FROM, OP_FUSER_FROM_ALL, OP_FUSER_EXTRACT,
    OP_CONNECT, OP_EMIT, OP_DISPOSE, OP_DISPOSABLE_RELEASE, OP_FUSER_HANDLE, OP_CLOSURE_NEW, OP_CLOSURE_CALL,
    OP_MISC, OP_SELF, OP_RUN2, OP_EMIT2, OP_LIST_DIFF, OP_LIST_SECTIONS, OP_INTO_LIST, OP_LOOP_NEW, OP_LOOP_DISPATCH,
    OP_LOOP_READ, OP_LOOP_OBSERVE, OP_LOOP_ATTACH, OP_LOOP_FEEDBACK, OP_LOOP_LIFE, OP_JOB, OP_EXECUTOR, OP_GEAR,
    OP_JOURNAL, OP_LOOP_SELF, OP_LOOP_DISPATCH2, OP_FEEDBACK, N_OPS
};

static void exec_op(cb *self) {
    if (ops_left <= 0) {
        in->at = in->size;
        return;
    }
    ops_left--;
    switch ((enum op)(u8() % N_OPS)) {
    case OP_TYPE_NEW: op_type_new(); break;
    case OP_TYPE_RETAIN: op_type_retain_release(0); break;
    case OP_TYPE_RELEASE: op_type_retain_release(1); break;
    case OP_INTO: op_into(); break;
    case OP_INTO_WHEN: op_into_when(); break;
    case OP_INTO_WHEN_EFFECT: op_into_when_effect(); break;
    case OP_INTO_ALL: op_into_all(); break;
    case OP_MAP: op_map(); break;
    case OP_MAP_FIELD: op_map_field(); break;
    case OP_INVERT: op_invert(); break;
    case OP_RUN:
    case OP_RUN2: op_run(); break;
    case OP_DIFFUSER_HANDLE: op_diffuser_handle(); break;
    case OP_FUSER_FROM: op_fuser_from(); break;
    case OP_FUSER_FROM_ALL: op_fuser_from_all(); break;
    case OP_FUSER_EXTRACT: op_fuser_extract(); break;
    case OP_CONNECT: op_connect(); break;
    case OP_EMIT:
    case OP_EMIT2: op_emit(); break;
    case OP_DISPOSE: op_dispose(); break;
    case OP_DISPOSABLE_RELEASE: op_disposable_release(); break;
    case OP_FUSER_HANDLE: op_fuser_handle(); break;
    case OP_CLOSURE_NEW: op_closure_new(); break;
    case OP_CLOSURE_CALL: op_closure_call(); break;
    case OP_MISC: op_misc(); break;
    case OP_SELF: op_self(self); break;
    case OP_LIST_DIFF: op_list_diff(); break;
    case OP_LIST_SECTIONS: op_list_sections(); break;
    case OP_INTO_LIST: op_into_list(); break;
    case OP_LOOP_NEW: op_loop_new(); break;
    case OP_LOOP_DISPATCH:
    case OP_LOOP_DISPATCH2: op_loop_dispatch(); break;
    case OP_LOOP_READ: op_loop_read(); break;
    case OP_LOOP_OBSERVE: op_loop_observe(); break;
    case OP_LOOP_ATTACH: op_loop_attach(); break;
    case OP_LOOP_FEEDBACK: op_loop_feedback(); break;
    case OP_LOOP_LIFE: op_loop_life(); break;
    case OP_JOB: op_job(); break;
    case OP_EXECUTOR: op_executor(); break;
    case OP_GEAR: op_gear(); break;
    case OP_JOURNAL: op_journal(); break;
    case OP_LOOP_SELF: op_loop_self(self); break;
    case OP_FEEDBACK: op_feedback(); break;
    case N_OPS: break;
    }
}

/* A callback's own program, run when it is called (a few times at most). */
static void run_action(cb *c) {
    if (c->prog_len == 0 || c->budget <= 0 || depth >= MAX_DEPTH || cleaning) return;
    c->budget--;
    /* A callback of no loop may still be part of a loop's step: an effect of a diffuser
     * the loop renders fails as the loop's observer. A loop it disposes may then report
     * that outcome after DISPOSED, as for the loop's own callbacks (see act). */
    int loopless = !c->shared && loop_of(c) == NULL;
    unsigned live = 0;
    for (int i = 0; i < MAX_LOOPS; i++)
        if (!loops[i].disposed) live |= 1u << i;
    reader sub = {c->prog, (size_t)c->prog_len, 0};
    reader *outer = in;
    in = &sub;
    depth++;
    while (!exhausted()) exec_op(c);
    depth--;
    in = outer;
    for (int i = 0; loopless && i < MAX_LOOPS; i++)
        if ((live >> i & 1) && loops[i].disposed) loops[i].late_step = 1;
}

/* After each top-level operation: dispatches whose disconnect was called are invalid. */
static void settle(void) {
    for (int i = 0; i < n_dispatches; i++)
        if (dispatches[i].state == D_ENDING) dispatches[i].state = D_DEAD;
}

/* ------------------------------------------------------------------------------------
 * One input
 * ------------------------------------------------------------------------------------ */

static void reset(void) {
    memset(types, 0, sizeof types);
    types[0] = (trec){.h = dfs_type_pointer(), .builtin = 1, .repr = REPR_INT, .id = 0};
    types[1] = (trec){.h = dfs_type_cstring(), .builtin = 1, .repr = REPR_STR, .has_equal = 1, .has_retain = 1,
                      .has_release = 1, .id = 1};
    types[2] = (trec){.h = dfs_type_ffi_event(), .builtin = 1, .repr = REPR_FFI, .has_equal = 1, .has_retain = 1,
                      .has_release = 1, .id = 2};
    n_types = 3;
    n_diffusers = n_fusers = n_disposables = n_dispatches = n_closures = n_cbs = n_arena = 0;
    ops_left = MAX_OPS;
    depth = 0;
    runs_active = emits_active = connects_active = loops_made = 0;
    loop_reset();
}

static void cleanup(void) {
    say("-- cleanup");
    cleaning = 1;
    loop_cleanup(); /* every loop disposed, every executor drained, loop handles released */
    for (int i = 0; i < n_disposables; i++) {
        xrec *x = &disposables[i];
        if (x->refs > 0) release_disposable((pick){x->h, V_OK, x});
    }
    for (int i = 0; i < n_diffusers; i++) {
        drec *d = &diffusers[i];
        while (d->refs > d->owned) {
            d->refs--;
            check_status(dfs_diffuser_release(d->h), 0, 0, 0, "dfs_diffuser_release (cleanup)");
        }
    }
    for (int i = 0; i < n_fusers; i++) {
        frec *f = &fusers[i];
        while (f->refs > f->owned) {
            f->refs--;
            check_status(dfs_fuser_release(f->h), 0, 0, 0, "dfs_fuser_release (cleanup)");
        }
    }
    for (int i = 3; i < n_types; i++) {
        trec *t = &types[i];
        while (t->refs > t->owned) {
            t->refs--;
            check_status(dfs_type_release(t->h), 0, 0, 0, "dfs_type_release (cleanup)");
        }
    }
    settle();
    /* Every destroy ran, once. */
    for (int i = 0; i < n_cbs; i++) {
        cb *c = cbs[i];
        if (c->tracked && c->destroys != 1)
            fail("%s #%d: destroy ran %d times by the end (leak)", cb_kind_names[c->kind], c->id, c->destroys);
    }
    /* Every handle is stale now. */
    for (int i = 3; i < n_types; i++)
        if (dfs_type_retain(types[i].h) != DFS_ERR_HANDLE) fail("type #%d is still valid after every release", i);
    for (int i = 0; i < n_diffusers; i++)
        if (dfs_diffuser_retain(diffusers[i].h) != DFS_ERR_HANDLE) fail("diffuser #%d is still valid after its release", i);
    for (int i = 0; i < n_fusers; i++)
        if (dfs_fuser_retain(fusers[i].h) != DFS_ERR_HANDLE) fail("fuser #%d is still valid after its release", i);
    for (int i = 0; i < n_disposables; i++)
        if (dfs_disposable_dispose(disposables[i].h) != DFS_ERR_HANDLE) fail("connection #%d is still valid after its release", i);
    for (int i = 0; i < n_dispatches; i++)
        if (dfs_dispatch_emit(dispatches[i].h, NULL) != DFS_ERR_HANDLE)
            fail("dispatch #%d is still valid after every connection was disposed", i);
    for (int i = 0; i < n_arena; i++) box_release(arena[i]);
    n_arena = 0;
    if (live_boxes != 0) fail("%ld values retained by the core were never released (leak)", live_boxes);
    for (int i = 0; i < n_cbs; i++) {
        cbs[i]->magic = 0;
        if (cbs[i]->kind == CB_LIST_SINK) free(cbs[i]->extra);
        free(cbs[i]);
    }
    n_cbs = 0;
    cleaning = 0;
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
    (void)argc;
    (void)argv;
    const char *t = getenv("FUZZ_API_TRACE");
    trace = t != NULL && t[0] != '\0' && t[0] != '0';
    const char *n = getenv("FUZZ_API_ALLOW_NESTED");
    allow_nested = n != NULL && n[0] != '\0' && n[0] != '0';
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    reader r = {data, size, 0};
    in = &r;
    reset();
    while (!exhausted()) {
        exec_op(NULL);
        settle();
    }
    cleanup();
    in = NULL;
    return 0;
}
