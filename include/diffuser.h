/*
 * diffuser.h — the C API of Diffuser.
 *
 * A Diffuser spreads an immutable model into side effects, re-running only what
 * changed; a Fuser gathers events from many sources into one stream. The behaviour is
 * implemented once, in the Swift core; this header is a thin, stable door to it.
 *
 * It is one header, as is usual for a C library (sqlite3.h, zlib.h): a program includes
 * one file and gets the whole API, whose parts (value types, diffusers, fusers,
 * closures, lists, loops) share the conventions below and take each other's handles;
 * scripts/check_abi.py checks this one file against the library's exports.
 *
 * Conventions
 * -----------
 * - Every symbol starts with dfs_ (types, functions) or DFS_ (macros, constants).
 * - Objects are opaque handles (dfs_type, dfs_diffuser, dfs_fuser, dfs_disposable,
 *   dfs_dispatch; for loops dfs_loop, dfs_job, dfs_executor, dfs_work, dfs_feedback,
 *   dfs_gear, dfs_journal). A handle you receive through an `out` parameter is yours: release it
 *   with the matching *_release function. Handles are reference counted: *_retain adds
 *   a reference to a type, diffuser, fuser, feedback, loop, gear, job or journal (a
 *   disposable and an executor have one owner; a dispatch and a piece of work are lent,
 *   see their functions). The core also keeps what it needs, so you may release a child
 *   right after composing it into a parent.
 * - Handles are validated: a NULL, released or wrong-kind handle makes a call return
 *   DFS_ERR_HANDLE (or DFS_ERR_NULL); it never crashes the process.
 * - Every function that can fail returns a dfs_status. On failure, dfs_last_error()
 *   gives a message for the calling thread, and `out` parameters are set to NULL. A call
 *   that succeeds sets no message of its own (its callbacks may set one with
 *   dfs_set_error): read dfs_last_error() only after a failure.
 * - Callbacks come as a (fn, ctx, destroy) triple: the core calls fn(..., ctx), and
 *   calls destroy(ctx) once it drops its last reference to the callback. destroy may be
 *   NULL. A constructor that fails still calls destroy(ctx) before it returns, so
 *   ownership of ctx always passes to the call.
 * - Callbacks return 0 for success. Any other value aborts the run (or the emission):
 *   the caller gets DFS_ERR_CALLBACK and the node that failed keeps its old cache, so the
 *   next run retries it. A callback may call dfs_set_error() first to give the message.
 * - Values are `const void *`, described by a dfs_type (equality, retain, release). The
 *   core never looks inside a value except through its type.
 *
 * Threads
 * -------
 * Every function may be called from any thread. dfs_diffuser_run on one graph is
 * serialized. Running forms the graph: a diffuser's first run joins it with every
 * diffuser it was composed from (and with every graph that shares a node with it), and
 * from then on runs of any of them are serialized; composing alone joins nothing. A run
 * called from inside one of the graph's own effects, on the same thread, is queued and
 * performed right after the current pass, before the outermost run returns: no
 * deadlock, no half-updated caches. Each fuser connection delivers one event at a time:
 * an event's transforms and the effect run under the connection's lock, except that an
 * event a transform or the effect itself causes on the same thread (it emits into a
 * source of its own connection) is delivered at once, nested in the delivery in
 * progress; once dfs_disposable_dispose has returned, none of its transforms or its
 * effect runs again.
 *
 * A run holds its graph's lock while its effects run, and dfs_disposable_dispose waits
 * for an event being delivered on another thread (in its transforms or its effect). Like any two locks, they deadlock when
 * threads wait for each other in a circle: an effect that waits for another thread's run
 * of its own graph; graph A's effect running graph B on one thread while B's effect runs
 * A on another; an effect that disposes a connection whose effect, delivering an event
 * on another thread, runs the first effect's graph. Keep such calls one-way, or make the
 * second call after the run has returned. None of the functions may be called from a
 * signal handler.
 *
 * Order of calls
 * --------------
 * Callbacks run in tree order, depth first: a fan-out runs its first child entirely
 * (transform, comparisons, predicates, effects below it) before it calls anything of
 * its second child. The first callback that fails stops the run; nothing after it in
 * that order is called, and its error is the one the run returns.
 *
 * Gates
 * -----
 * A gate (into, into_all, into_when) compares each new value with the value of the
 * previous successful run, and keeps the new value after every successful run, whether
 * the comparison found them equal or not. A run that fails leaves every gate on the
 * path to the failure as it was, so that the next run retries.
 *
 * Limits
 * ------
 * A composite takes fewer than 2^24 children, and each array of a loop's config (its
 * handlers, start effects and feedbacks) fewer than 2^24 entries: a longer count fails
 * with DFS_ERR_ARGUMENT, and the array, even a NULL one, is not read. Handles are
 * 64-bit values; the library is built for 64-bit platforms.
 */
#ifndef DIFFUSER_H
#define DIFFUSER_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The version of the library this header describes (dfs_version() returns the
 *  library's own as a string). */
#define DFS_VERSION_MAJOR 0
#define DFS_VERSION_MINOR 1
#define DFS_VERSION_PATCH 0

/** Marks the functions the library exports (default visibility). Define it before
 *  including this header to add what a build needs, such as a calling convention. */
#ifndef DFS_API
#if defined(__GNUC__) || defined(__clang__)
#define DFS_API __attribute__((visibility("default")))
#else
#define DFS_API
#endif
#endif

/** The version of the ABI this header describes. dfs_abi_version() returns the
 *  library's; they must be equal. */
#define DFS_ABI_VERSION 6

/** Status codes. 0 is success; every error is positive. */
typedef enum dfs_status {
    /** Success. */
    DFS_OK = 0,
    /** A required pointer argument was NULL (or a field map's value, see
     *  dfs_diffuser_map_field). */
    DFS_ERR_NULL = 1,
    /** A handle is not valid: released, never issued, or of another kind. */
    DFS_ERR_HANDLE = 2,
    /** An argument is out of range or inconsistent (e.g. an unknown ffi type). */
    DFS_ERR_ARGUMENT = 3,
    /** The value types of composed objects do not match. */
    DFS_ERR_TYPE = 4,
    /** A user callback returned non-zero; the run or emission was aborted. */
    DFS_ERR_CALLBACK = 5,
    /** Out of memory, libffi could not make a closure, or a thread could not start. */
    DFS_ERR_MEMORY = 6,
    /** A loop refuses events: it is stopped (start it again) or stopping. */
    DFS_ERR_STOPPED = 7,
    /** A loop was disposed, or is being disposed, or a job ended: no more events. */
    DFS_ERR_DISPOSED = 8
} dfs_status;

/** Frees a callback context. */
typedef void (*dfs_destroy_fn)(void *ctx);

/** The library's version as "major.minor.patch". Static storage; never NULL. */
DFS_API const char *dfs_version(void);

/** The library's ABI version; compare with DFS_ABI_VERSION. */
DFS_API int dfs_abi_version(void);

/** The message of the last error on the calling thread, or "" if none. The string
 *  belongs to the library and stays valid until the thread's next call into it: a dfs_
 *  function, or a function pointer made by dfs_closure_new. */
DFS_API const char *dfs_last_error(void);

/** A short constant name for a status ("DFS_ERR_HANDLE"); "DFS_UNKNOWN" for others. */
DFS_API const char *dfs_status_name(int status);

/** Sets the calling thread's error message. Meant for callbacks that are about to
 *  return non-zero: the message then reaches the caller of the run or emission.
 *  `message` is copied as UTF-8 text (a byte sequence that is not UTF-8 reads back with
 *  U+FFFD in its place); NULL clears it. A failing callback's message is the last one
 *  set while it ran; one set by a callback that then returned 0 is for no failure (not
 *  a later callback's, nor that of a callback whose nested call it was set in). */
DFS_API void dfs_set_error(const char *message);

/* ------------------------------------------------------------------------------------
 * Value types
 * ------------------------------------------------------------------------------------ */

/** Describes values: how to compare them and how to keep them.
 *
 *  equal:   called as equal(old, new): returns 1 if the values are equal, 0 if not,
 *           negative to report an error (aborts the run with DFS_ERR_CALLBACK). NULL:
 *           pointer identity. Must be reflexive (a value equals itself): the core does
 *           not call it with two identical pointers, which are equal. It need not be
 *           transitive: a gate always compares with the previous run's value.
 *           It may return DFS_EQUAL_SAME instead of 1 when the two pointers are two
 *           references to one and the same value (one object, as two handles): a gate
 *           then keeps the reference it holds instead of retaining `new` and releasing
 *           `old`, which is the same thing for that value. Types without retain get 1.
 *  retain:  called when the core keeps a value beyond the call that passed it (in a
 *           cache, for a queued run or event). Returns the pointer to keep: the same one
 *           after incrementing a reference count, or a copy; returning NULL fails the
 *           call that needed it with DFS_ERR_MEMORY. A NULL retain function: the value
 *           is borrowed and must stay valid while the core may use it (until it is
 *           replaced in every cache that holds it, or the diffuser is released).
 *  release: drops a value the core kept, or a value a transform returned. NULL: no-op. */
typedef struct dfs_type dfs_type;

/** A type's equality (see dfs_type). */
typedef int (*dfs_equal_fn)(const void *a, const void *b, void *ctx);
/** What an equal callback may return for two references to one value (see dfs_type). */
#define DFS_EQUAL_SAME 2
/** A type's retain (see dfs_type). */
typedef const void *(*dfs_retain_fn)(const void *value, void *ctx);
/** A type's release (see dfs_type). */
typedef void (*dfs_release_fn)(const void *value, void *ctx);

/** Makes a value type. `name` (copied; may be NULL) appears in error messages.
 *  On success *out is a new handle; release it with dfs_type_release. */
DFS_API dfs_status dfs_type_new(const char *name, dfs_equal_fn equal, dfs_retain_fn retain,
                        dfs_release_fn release, void *ctx, dfs_destroy_fn destroy,
                        dfs_type **out);

/** Adds a reference to a type handle. */
DFS_API dfs_status dfs_type_retain(dfs_type *type);

/** Drops a reference to a type handle. NULL is accepted and ignored. */
DFS_API dfs_status dfs_type_release(dfs_type *type);

/** A built-in type: pointer identity, borrowed values. Also the type of integers and
 *  booleans encoded in pointers ((const void *)(intptr_t)x; NULL is false). The handle
 *  is static: releasing it is allowed and does nothing. */
DFS_API dfs_type *dfs_type_pointer(void);

/** A built-in type: NUL-terminated strings compared with strcmp (NULL equals only
 *  NULL); retain copies the string (malloc), release frees it (free). Static handle. So
 *  a string handed over as a new reference (a dfs_diffuser_map transform's output, a
 *  model or effect given to dfs_next, a request or an event a callback returns) must
 *  come from malloc or strdup; a string inside
 *  the input belongs with dfs_diffuser_map_borrowed or dfs_diffuser_map_field. */
DFS_API dfs_type *dfs_type_cstring(void);

/* ------------------------------------------------------------------------------------
 * Diffuser
 * ------------------------------------------------------------------------------------ */

/** A diffuser: a tree of combinators over values of one type (dfs_diffuser_type). */
typedef struct dfs_diffuser dfs_diffuser;

/** An effect: receives a value (borrowed for the duration of the call). Return 0, or
 *  non-zero to abort the run. */
typedef int (*dfs_effect_fn)(const void *value, void *ctx);

/** A change predicate: return 1 to run, 0 to skip, negative to abort the run. */
typedef int (*dfs_did_change_fn)(const void *old_value, const void *new_value, void *ctx);

/** A transform: store the part of `value` the child needs in *out and return 0, or
 *  return non-zero to abort. *out is owned by the core, which passes it to the output
 *  type's release when done: return a new reference (or a copy) if that type has a
 *  release function, or a pointer that stays valid (e.g. into `value`) if it has none. */
typedef int (*dfs_transform_fn)(const void *value, const void **out, void *ctx);

/** The most combinators a path from a diffuser down to an effect, or from a fuser down to
 *  a source, may pass through, the first and the last included (a diffuser made by
 *  dfs_diffuser_into is 1 deep, a map, a gate or a fan-out over it 2; dfs_fuser_from is
 *  1 deep). A run steps from each combinator into its children on the calling thread's
 *  stack, an event climbs through each fuser the same way, and releasing a tree releases
 *  its parts the same way; this bound keeps each to about 100 KB of stack. Composing a
 *  deeper one (dfs_diffuser_map*, _into_when, _into_all, _into_always_all, _invert;
 *  dfs_fuser_from_all, _extract*) returns DFS_ERR_ARGUMENT. Width is not limited. */
#define DFS_MAX_DEPTH 200

/** intoAlways(effect): runs the effect on every value of `type`. */
DFS_API dfs_status dfs_diffuser_into_always(dfs_type *type, dfs_effect_fn effect, void *ctx,
                                    dfs_destroy_fn destroy, dfs_diffuser **out);

/** into(effect): runs the effect on the first value and whenever the value is not
 *  equal (by `type`'s equality) to the previous one. */
DFS_API dfs_status dfs_diffuser_into(dfs_type *type, dfs_effect_fn effect, void *ctx,
                             dfs_destroy_fn destroy, dfs_diffuser **out);

/** intoOnce(effect): runs the effect on the first value only. */
DFS_API dfs_status dfs_diffuser_into_once(dfs_type *type, dfs_effect_fn effect, void *ctx,
                                  dfs_destroy_fn destroy, dfs_diffuser **out);

/** intoWhen(didChange, child): runs `child` on the first value, later only when
 *  did_change(old, new) returns 1. The value is cached after every successful run.
 *  The new diffuser has the child's type. */
DFS_API dfs_status dfs_diffuser_into_when(dfs_did_change_fn did_change, void *ctx,
                                  dfs_destroy_fn destroy, dfs_diffuser *child,
                                  dfs_diffuser **out);

/** intoWhen(didChange, effect): the same with an effect instead of a child. */
DFS_API dfs_status dfs_diffuser_into_when_effect(dfs_type *type, dfs_did_change_fn did_change,
                                         void *did_change_ctx, dfs_destroy_fn did_change_destroy,
                                         dfs_effect_fn effect, void *effect_ctx,
                                         dfs_destroy_fn effect_destroy, dfs_diffuser **out);

/** intoAll(children): runs every child, in order, on the first value and whenever the
 *  value is not equal to the previous one. Every child must have type `type`.
 *  `children` may be NULL when count is 0; the array is copied. */
DFS_API dfs_status dfs_diffuser_into_all(dfs_type *type, dfs_diffuser *const *children, size_t count,
                                 dfs_diffuser **out);

/** intoAlways(children): runs every child, in order, on every value. */
DFS_API dfs_status dfs_diffuser_into_always_all(dfs_type *type, dfs_diffuser *const *children,
                                        size_t count, dfs_diffuser **out);

/** map(transform, child): feeds `child` the part of each value of `type` that
 *  `transform` selects. The transform's output has the child's type. */
DFS_API dfs_status dfs_diffuser_map(dfs_type *type, dfs_transform_fn transform, void *ctx,
                            dfs_destroy_fn destroy, dfs_diffuser *child, dfs_diffuser **out);

/** dfs_diffuser_map for parts the core borrows instead of owning: a part must stay
 *  valid until the dfs_diffuser_run call during which the transform made it returns
 *  (runs queued from inside effects are performed within the outermost call), for
 *  instance a JNI local reference. The core never releases a borrowed part, not even one
 *  stored by a failing transform; a gate that caches a part retains it through the part
 *  type first, so give that type a retain function unless the parts outlive every cache
 *  anyway. Saves a retain and a release per part and run where references are dear and
 *  most parts are only compared. */
DFS_API dfs_status dfs_diffuser_map_borrowed(dfs_type *type, dfs_transform_fn transform, void *ctx,
                                     dfs_destroy_fn destroy, dfs_diffuser *child,
                                     dfs_diffuser **out);

/** map(field, child) for a part that is a member of the value: the part is the
 *  unsigned integer of `size` bytes (1, 2, 4 or sizeof(void *)) stored `offset` bytes
 *  into the value, read in place and widened to a pointer, with no callback. For
 *  instance offsetof(struct screen, title) and sizeof(const char *) for a member
 *  `const char *title`, or offsetof(struct screen, count) and sizeof(int) for a member
 *  `int count` (the child then gets (const void *)(uintptr_t)(unsigned)count; cast it
 *  back with (int)(uintptr_t)part).
 *
 *  The part is borrowed from the value, as with dfs_diffuser_map_borrowed: a gate that
 *  caches it retains it through the child's type first. A field map run on a NULL value
 *  aborts the run with DFS_ERR_NULL. DFS_ERR_ARGUMENT for another size. */
DFS_API dfs_status dfs_diffuser_map_field(dfs_type *type, size_t offset, size_t size, dfs_diffuser *child,
                                  dfs_diffuser **out);

/** invert(child): for truth values encoded as pointers (dfs_type_pointer: NULL is false,
 *  anything else true), feeds `child` the negation: (const void *)1 or NULL. */
DFS_API dfs_status dfs_diffuser_invert(dfs_diffuser *child, dfs_diffuser **out);

/** Runs the diffuser on `value` (borrowed for the call; retained by the core if cached
 *  or queued). Returns DFS_ERR_CALLBACK if a callback aborted the run, DFS_ERR_MEMORY if
 *  a type's retain returned NULL. A run called from inside the graph's own effect is
 *  queued and returns DFS_OK at once; the queued run happens before the outermost run
 *  returns, and if it fails while the outermost run's own pass succeeded, the outermost
 *  run returns its error (the first such error), since no other caller can receive it. */
DFS_API dfs_status dfs_diffuser_run(dfs_diffuser *diffuser, const void *value);

/** dfs_diffuser_run, also telling whether the run was queued: *queued (unless `queued`
 *  is NULL) is 1 if the run was queued behind the pass under way on this thread (a run
 *  called from inside the graph's own effect, see dfs_diffuser_run), 0 if it was done,
 *  or failed, before this returned. A queued run still uses the value and what the
 *  diffuser's callbacks need until the outermost run returns; a run that was not queued
 *  needs nothing more, unless another run of the same diffuser made during it was queued
 *  (that one's call says so): a run's graph may be joined, while it runs, with the graph
 *  of a pass under way, which then runs the runs queued on it. For a binding that keeps
 *  the objects of a run alive only as long as the core needs them. */
DFS_API dfs_status dfs_diffuser_run_or_queue(dfs_diffuser *diffuser, const void *value, int *queued);

/** The value type a diffuser accepts (borrowed: do not release). NULL if invalid. */
DFS_API dfs_type *dfs_diffuser_type(dfs_diffuser *diffuser);

/** Adds a reference to a diffuser handle. */
DFS_API dfs_status dfs_diffuser_retain(dfs_diffuser *diffuser);

/** Drops a reference; the tree lives on inside parents that were composed from it.
 *  NULL is accepted and ignored. */
DFS_API dfs_status dfs_diffuser_release(dfs_diffuser *diffuser);

/* ------------------------------------------------------------------------------------
 * Fuser
 * ------------------------------------------------------------------------------------ */

/** A fuser: sources of events of one type (dfs_fuser_type), connected on demand. */
typedef struct dfs_fuser dfs_fuser;
/** A connection (of a fuser, or a registration with a loop): dispose it to end it. */
typedef struct dfs_disposable dfs_disposable;

/** Where a source sends its events: valid from the source's connect call until its
 *  disconnect call returns. Emitting through it later returns DFS_ERR_HANDLE. */
typedef struct dfs_dispatch dfs_dispatch;

/** Sends `event` (borrowed for the call) to the connection. Returns DFS_ERR_CALLBACK if
 *  a downstream effect or transform failed, DFS_ERR_MEMORY if a type's retain returned
 *  NULL (a loop fed by the connection keeps each event it queues). Events sent after the
 *  connection was disposed are dropped (DFS_OK). */
DFS_API dfs_status dfs_dispatch_emit(dfs_dispatch *dispatch, const void *event);

/** Starts a source connection: keep `dispatch` and emit through it. Store anything you
 *  need to stop it in *connection. Return 0, or non-zero to refuse (connect fails; no
 *  disconnect follows, and the closures made on `dispatch` are freed once connect
 *  returns: unregister them first, as disconnect would). */
typedef int (*dfs_source_connect_fn)(dfs_dispatch *dispatch, void *ctx, void **connection);

/** Stops a source connection made by connect. After it returns, `dispatch` is invalid.
 *  May be NULL for a source with nothing to stop. It may run inside the source's own
 *  dfs_dispatch_emit, on the emitting thread: an effect that disposes its connection
 *  disconnects the sources right after it returns, and a loop's work run by the emitting
 *  thread disconnects and connects sources (see dfs_loop_connect). So a source must not
 *  hold across dfs_dispatch_emit a lock that its connect or disconnect takes: take the
 *  dispatches under the lock and emit once it is released. */
typedef void (*dfs_source_disconnect_fn)(void *connection, void *ctx);

/** from(source): a fuser whose events of `type` come from a source written in C. The
 *  source is connected at each dfs_fuser_connect (or loop connection) once for every
 *  place it has in the fuser connected (a fuser given twice to dfs_fuser_from_all makes
 *  two connections of its sources, each with its own dispatch), and disconnected on
 *  dispose. */
DFS_API dfs_status dfs_fuser_from(dfs_type *type, dfs_source_connect_fn connect,
                          dfs_source_disconnect_fn disconnect, void *ctx,
                          dfs_destroy_fn destroy, dfs_fuser **out);

/** fromAll(children): merges the events of children of type `type`. */
DFS_API dfs_status dfs_fuser_from_all(dfs_type *type, dfs_fuser *const *children, size_t count,
                              dfs_fuser **out);

/** extract(transform, child): turns each event of `child` into an event of `type`
 *  (ownership of *out as for dfs_transform_fn, with `type`'s release). The transform runs
 *  on the emitting thread as part of its connection's delivery, under the connection's
 *  lock: never at the same time as another transform or the effect of that connection,
 *  and never after its dfs_disposable_dispose returned. */
DFS_API dfs_status dfs_fuser_extract(dfs_type *type, dfs_transform_fn transform, void *ctx,
                             dfs_destroy_fn destroy, dfs_fuser *child, dfs_fuser **out);

/** extractConstant(constant, child): emits `constant` (retained by `type`) for every
 *  event of `child`. */
DFS_API dfs_status dfs_fuser_extract_constant(dfs_type *type, const void *constant, dfs_fuser *child,
                                      dfs_fuser **out);

/** extractUnlessNull(transform, child): like extract, dropping events whose transformed
 *  value is NULL. */
DFS_API dfs_status dfs_fuser_extract_unless_null(dfs_type *type, dfs_transform_fn transform, void *ctx,
                                         dfs_destroy_fn destroy, dfs_fuser *child,
                                         dfs_fuser **out);

/** Connects every source to `effect` (events borrowed for the call). On success *out is
 *  the connection: dispose it to stop, release it to free the handle. If a source
 *  refuses, the sources already connected are disconnected and DFS_ERR_CALLBACK is
 *  returned. Events are delivered as they are emitted, also while the sources connect:
 *  those emitted before a source refused have reached `effect`. */
DFS_API dfs_status dfs_fuser_connect(dfs_fuser *fuser, dfs_effect_fn effect, void *ctx,
                             dfs_destroy_fn destroy, dfs_disposable **out);

/** The event type of a fuser (borrowed). NULL if invalid. */
DFS_API dfs_type *dfs_fuser_type(dfs_fuser *fuser);

/** Adds a reference: one more dfs_fuser_release is needed. */
DFS_API dfs_status dfs_fuser_retain(dfs_fuser *fuser);
/** NULL is accepted and ignored. */
DFS_API dfs_status dfs_fuser_release(dfs_fuser *fuser);

/** Stops a connection: disconnects every source it made. Idempotent. Once it returns,
 *  neither the effect nor a transform of the connection runs again, even for sources
 *  emitting on other threads. A dispose made while another one is under way (an effect
 *  disposing its connection on a source's thread) returns once neither can be called; the sources'
 *  disconnects may then still be running on that other thread, so keep what they use
 *  alive until they return (a ctx with a destroy is kept for you). */
DFS_API dfs_status dfs_disposable_dispose(dfs_disposable *disposable);

/** Drops the handle. A connection released without dispose stays connected: keep the
 *  handle as long as you want events, or dispose first. NULL is accepted. */
DFS_API dfs_status dfs_disposable_release(dfs_disposable *disposable);

/* ------------------------------------------------------------------------------------
 * C closures (libffi)
 * ------------------------------------------------------------------------------------ */

/** The C types a closure may take or return. */
typedef enum dfs_ffi_type {
    DFS_FFI_VOID = 0,   /* return type only */
    DFS_FFI_INT8, DFS_FFI_UINT8, DFS_FFI_INT16, DFS_FFI_UINT16,
    DFS_FFI_INT32, DFS_FFI_UINT32, DFS_FFI_INT64, DFS_FFI_UINT64,
    DFS_FFI_FLOAT, DFS_FFI_DOUBLE,
    DFS_FFI_POINTER,    /* void * */
    DFS_FFI_STRING,     /* const char *: borrowed during the emission, copied by retain */
    DFS_FFI_INT = DFS_FFI_INT32 /* return type: int */
} dfs_ffi_type;

/** One argument of a closure call. */
typedef struct dfs_ffi_value {
    dfs_ffi_type type;
    union {
        int64_t i;      /* signed integers */
        uint64_t u;     /* unsigned integers */
        double d;       /* float and double */
        const void *p;  /* pointers */
        const char *s;  /* strings (NULL stays NULL) */
    } as;
} dfs_ffi_value;

/** The event a closure emits: its arguments, in order. */
typedef struct dfs_ffi_event {
    size_t count;
    const dfs_ffi_value *args;
} dfs_ffi_event;

/** The type of ffi events (const dfs_ffi_event *): equal when arguments are equal
 *  (strings by content, floats and doubles by ==, as Swift's Double: an event holding a
 *  NaN equals no other, so a gate runs on every such event, since it keeps a copy);
 *  retain makes a deep copy. Static handle. */
DFS_API dfs_type *dfs_type_ffi_event(void);

/** Makes a function pointer with the signature `ret (*)(args[0], ..., args[count-1])`
 *  that, when called, packs its arguments into a dfs_ffi_event and emits it through
 *  `dispatch` (which must carry events of dfs_type_ffi_event()). `ret` is DFS_FFI_VOID
 *  or DFS_FFI_INT; an int function returns the dfs_status of the emission, a failure
 *  with its message in dfs_last_error(), as a dfs_ function would.
 *  *fn receives the function pointer: cast it to the real signature. The closure is
 *  freed when the connection of `dispatch` is disposed, right after the source's
 *  disconnect returns. So disconnect must unregister it and wait for the calls through
 *  it under way on other threads, as for any callback whose memory is freed (a call
 *  that has entered the closure cannot be waited for by the library): each caller
 *  holds a use count, or a recursive lock, from before it reads the pointer until its
 *  call returned, and disconnect waits for the other threads' counts, or takes the
 *  lock. Not for its own thread's: an effect that disposes its connection runs the
 *  disconnect inside the call through the closure that delivered the event, and the
 *  closure is then freed once that call returns. Calling the closure after disconnect
 *  returned is undefined. A call made after the connection's dispose began but before
 *  its disconnect returned drops the event. A dfs_closure_new on `dispatch` that starts
 *  once the dispose has begun (its disconnect running, on any thread) fails with
 *  DFS_ERR_HANDLE; one already under way may still succeed. So a source that makes
 *  closures on other threads than connect's makes and registers each under the lock (or
 *  use count) its disconnect waits for: the disconnect then unregisters every closure
 *  made. A connect that refuses must unregister the closures it made (see
 *  dfs_source_connect_fn).
 *  At most 32 arguments, each of DFS_FFI_INT8 to DFS_FFI_STRING; `args` may be NULL
 *  only when count is 0. Checked in this order: `fn` NULL: DFS_ERR_NULL; `dispatch` not
 *  a live dispatch: DFS_ERR_NULL or DFS_ERR_HANDLE; a dispatch of another event type:
 *  DFS_ERR_TYPE; a bad return type or count: DFS_ERR_ARGUMENT; NULL args with a count:
 *  DFS_ERR_NULL; a bad argument type: DFS_ERR_ARGUMENT. Each message names what is
 *  wrong. */
DFS_API dfs_status dfs_closure_new(dfs_dispatch *dispatch, dfs_ffi_type ret,
                           const dfs_ffi_type *args, size_t count, void (**fn)(void));

/* ------------------------------------------------------------------------------------
 * Lists: keyed list diff
 * ------------------------------------------------------------------------------------
 * Diffs two lists whose items are identified by 64-bit keys, with content compared by
 * a per-item fingerprint or by a callback. Items of the common prefix and suffix pair in
 * place; elsewhere the k-th old occurrence of a key pairs with its k-th new occurrence,
 * extra occurrences are deletes or inserts, and has_duplicates says it happened.
 * Only matched items outside one longest increasing subsequence move: no fewer moves
 * can reorder them, for this pairing (with duplicate keys another pairing may need
 * fewer: a b a b to b a b a moves two items here, where one would do). Expected O(n)
 * plus O(k log k) for k matched items.
 *
 * The result comes in one struct whose arrays live in one block: free it with
 * dfs_list_diff_free. Indices and counts are int32_t (lists hold fewer than 2^31 - 1
 * items). A pair array holds `count` pairs as 2 * count values: old, new, old, new...
 *
 * Memory: each function here (and an into_list run), once it knows the counts and
 * before it reads an item, asks malloc for what any diff of such lists holds at once,
 * and returns DFS_ERR_MEMORY if it cannot be had: 12 bytes an item of both lists (the
 * core's index maps and the result's), and for a sections diff about 250 bytes more a
 * new section (its item diff, in the core and in the result). That is a lower bound, so
 * no diff that fits is refused; a diff's peak can be twice as much (inserts and deletes,
 * a batch, a script). The core is Swift: when an allocation of its own fails, which can
 * happen to a diff that passed the check, the process stops. So the check turns lists
 * far too large for the memory left into an error, not every diff that would not fit.
 */

/** One list: `count` keys, and optionally `count` content fingerprints (items with the
 *  same key and equal fingerprints have the same content). `keys` (and `contents`) may
 *  be NULL when count is 0. */
typedef struct dfs_list_side {
    const uint64_t *keys;
    const uint64_t *contents;
    size_t count;
} dfs_list_side;

/** Compares the contents of a matched pair: old item `old_index` and new item
 *  `new_index` (same key). Returns 1 if the content is the same, 0 if it changed,
 *  negative to abort the diff with DFS_ERR_CALLBACK. */
typedef int (*dfs_list_same_fn)(int32_t old_index, int32_t new_index, void *ctx);

/** What dfs_list_diff_compute adds to the diff itself. */
typedef enum dfs_list_flags {
    /** Also the batch in UIKit's coordinates (the batch_ fields): deletes, reloads and
     *  move sources in old indices, inserts and move destinations in new indices; no old
     *  index is used twice, no new index twice; an item both moved and changed is
     *  deleted and inserted. */
    DFS_LIST_BATCH = 1,
    /** The batch (implies DFS_LIST_BATCH), with an item both moved and changed moved,
     *  and listed in batch_reloads_after_moves at its new index, to reload after the
     *  batch. */
    DFS_LIST_BATCH_MOVE_THEN_RELOAD = 2,
    /** Also the step-by-step script (the script fields). */
    DFS_LIST_SCRIPT = 4
} dfs_list_flags;

/** The kinds of script steps. Each step is three int32_t: kind, a, b. */
typedef enum dfs_list_step {
    /** Remove b items starting at a. Removes come first, highest index first. */
    DFS_LIST_REMOVE = 1,
    /** Remove the item at a, then insert it at b (b counts without it); positions are
     *  those of the list as the previous steps left it. */
    DFS_LIST_MOVE = 2,
    /** Insert new items a..a+b-1 at a. Inserts come after the moves, lowest first. */
    DFS_LIST_INSERT = 3,
    /** Items a..a+b-1 (final positions) changed content. Changes come last. */
    DFS_LIST_CHANGE = 4
} dfs_list_step;

/** A diff. Every index array is ascending (pair arrays by their new index). */
typedef struct dfs_list_diff {
    int32_t old_count;
    int32_t new_count;
    /** 1 if a key occurred twice in one list outside the common prefix and suffix, where
     *  items pair by occurrence. Looked for only when both lists have items there: from
     *  or to an empty list (a first run) it is 0 whatever the keys. */
    int32_t has_duplicates;
    int32_t delete_count;
    int32_t insert_count;
    int32_t move_count;
    int32_t update_count;
    /** Old indices of deleted items. */
    const int32_t *deletes;
    /** New indices of inserted items. */
    const int32_t *inserts;
    /** Pairs (old, new) of matched items that move. */
    const int32_t *moves;
    /** Pairs (old, new) of matched items whose content changed (moved ones too). */
    const int32_t *updates;
    /** old_count entries: the new index of each old item, or -1. */
    const int32_t *old_to_new;
    /** new_count entries: the old index of each new item, or -1. */
    const int32_t *new_to_old;

    /* With DFS_LIST_BATCH (otherwise counts 0 and pointers NULL). */
    int32_t batch_delete_count;
    int32_t batch_insert_count;
    int32_t batch_move_count;
    int32_t batch_reload_count;
    int32_t batch_reload_after_move_count;
    const int32_t *batch_deletes;              /* old indices */
    const int32_t *batch_inserts;              /* new indices */
    const int32_t *batch_moves;                /* pairs (old, new) */
    const int32_t *batch_reloads;              /* old indices */
    const int32_t *batch_reloads_after_moves;  /* new indices */

    /* With DFS_LIST_SCRIPT (otherwise 0 and NULL). */
    int32_t script_count;
    /** script_count steps of three values: dfs_list_step, a, b. */
    const int32_t *script;

    /** The block that holds the arrays: for dfs_list_diff_free. */
    void *block;
} dfs_list_diff;

/** Diffs `old_list` -> `new_list` into *out (which the caller owns; its arrays are the
 *  library's until dfs_list_diff_free). Content: `same_content` decides if non-NULL
 *  (called once per matched pair, only during this call, with `ctx`); else the
 *  fingerprints in `contents`, which both lists give (or neither); else contents never
 *  change. `flags`: a combination of dfs_list_flags.
 *
 *  Errors: DFS_ERR_NULL for a NULL old_list, new_list or out, for NULL keys with items,
 *  and for NULL contents in one list with items while the other gives contents (and
 *  same_content is NULL); DFS_ERR_ARGUMENT for unknown flags and for more than
 *  INT32_MAX - 1 items; DFS_ERR_CALLBACK if same_content aborted (nothing is called
 *  after it); DFS_ERR_MEMORY. On failure *out is zeroed (freeing it is allowed). */
DFS_API dfs_status dfs_list_diff_compute(const dfs_list_side *old_list, const dfs_list_side *new_list,
                                 dfs_list_same_fn same_content, void *ctx, unsigned int flags,
                                 dfs_list_diff *out);

/** Frees the arrays of a diff and zeroes it. NULL and zeroed diffs are accepted. */
DFS_API void dfs_list_diff_free(dfs_list_diff *diff);

/* Sections: a list of sections, each holding its own items, diffed in one call. Sections
 * are paired by their keys like the items of a list (their own content, a header, by
 * fingerprints or the callback). The items of each new section are diffed against those
 * of the old section it is paired with (none for a new section): items move within their
 * section; an item that changes section is deleted from one and inserted into the other.
 * It is the Swift core's ListSectionsDiff and ListSectionsBatch, laid out flat. */

/** One list of sections. Section s has item_counts[s] items, stored in item_keys (and
 *  item_contents) section after section: section 0's items first, then section 1's...
 *  `section_contents` and `item_contents` are optional fingerprints, as in
 *  dfs_list_side: both lists give each (or neither), unless same_content decides; one
 *  given for one list only, while the other has values, is DFS_ERR_NULL (see
 *  dfs_list_sections_diff_compute). Arrays may be NULL when they would be empty. */
typedef struct dfs_list_sections_side {
    const uint64_t *section_keys;     /* section_count keys */
    const uint64_t *section_contents; /* section_count fingerprints, or NULL */
    const size_t *item_counts;        /* section_count counts */
    const uint64_t *item_keys;        /* the sum of item_counts keys */
    const uint64_t *item_contents;    /* as many fingerprints, or NULL */
    size_t section_count;
} dfs_list_sections_side;

/** Compares the contents of a matched pair of a sections diff. With old_item and
 *  new_item both -1: old section `old_section` and new section `new_section` (same key),
 *  their own content apart from their items. Otherwise: item `old_item` of old section
 *  `old_section` and item `new_item` of new section `new_section` (paired sections, same
 *  item key). Returns 1 same, 0 changed, negative to abort with DFS_ERR_CALLBACK. */
typedef int (*dfs_list_sections_same_fn)(int32_t old_section, int32_t old_item, int32_t new_section,
                                         int32_t new_item, void *ctx);

/** A sections diff, in one block. `sections` and every `items[j]` are dfs_list_diffs
 *  that share that block: their own `block` is NULL, do not free them one by one. With
 *  DFS_LIST_SCRIPT each carries its script (the sections' script rearranges whole
 *  sections; an item script applies to the items of its section); their batch_ fields
 *  stay empty, the batch of a sections diff being the batch_ fields below.
 *
 *  The batch (DFS_LIST_BATCH or DFS_LIST_BATCH_MOVE_THEN_RELOAD) is one UIKit batch:
 *  section deletes, reloads and move sources, and item deletes, reloads and move
 *  sources in old coordinates; section inserts and move destinations, and item inserts,
 *  move destinations and reloads after moves, in new coordinates. Item changes are only
 *  listed for sections that stay in place and are not reloaded: a section that changed
 *  and stayed is reloaded with its items; a section that moved is moved if neither it
 *  nor its items changed, otherwise deleted and inserted (or, with
 *  DFS_LIST_BATCH_MOVE_THEN_RELOAD, moved and then reloaded at its new index, in
 *  batch_section_reloads_after_moves). An index path is two values, section and item;
 *  an item move is four: old section, old item, new section, new item. */
typedef struct dfs_list_sections_diff {
    /** The diff of the sections themselves (updates: sections whose own content changed). */
    dfs_list_diff sections;
    /** sections.new_count: one diff per new section. */
    int32_t item_diff_count;
    /** For each new section j, the diff of its items from those of the old section
     *  paired with it (sections.new_to_old[j]), or from no items for a new section. */
    const dfs_list_diff *items;
    /** 1 if sections.has_duplicates or the has_duplicates of any diff in items is: a key
     *  that occurred twice where keys pair by occurrence (outside the common prefix and
     *  suffix), as dfs_list_diff.has_duplicates says for one list. */
    int32_t has_duplicates;

    /* With DFS_LIST_BATCH (otherwise counts 0 and pointers NULL). */
    int32_t batch_section_delete_count;
    int32_t batch_section_insert_count;
    int32_t batch_section_move_count;
    int32_t batch_section_reload_count;
    int32_t batch_section_reload_after_move_count;
    int32_t batch_item_delete_count;
    int32_t batch_item_insert_count;
    int32_t batch_item_move_count;
    int32_t batch_item_reload_count;
    int32_t batch_item_reload_after_move_count;
    const int32_t *batch_section_deletes;             /* old section indices, ascending */
    const int32_t *batch_section_inserts;             /* new section indices, ascending */
    const int32_t *batch_section_moves;               /* pairs (old, new), ascending by new */
    const int32_t *batch_section_reloads;             /* old section indices, ascending */
    const int32_t *batch_section_reloads_after_moves; /* new section indices, ascending */
    const int32_t *batch_item_deletes;                /* old index paths, ascending */
    const int32_t *batch_item_inserts;                /* new index paths, ascending */
    const int32_t *batch_item_moves;                  /* (old path, new path) */
    const int32_t *batch_item_reloads;                /* old index paths, ascending */
    const int32_t *batch_item_reloads_after_moves;    /* new index paths */

    /** The block that holds everything: for dfs_list_sections_diff_free. */
    void *block;
} dfs_list_sections_diff;

/** Diffs the sections `old_list` -> `new_list` into *out (which the caller owns; what it
 *  points to is the library's until dfs_list_sections_diff_free). Content, for sections
 *  and items alike: `same_content` decides if non-NULL (called once per matched pair,
 *  sections first, then the items of each new section in order, only during this call,
 *  with `ctx`); else the fingerprints given for both lists; else content never changes.
 *  `flags`: a combination of dfs_list_flags.
 *
 *  Errors: DFS_ERR_NULL for a NULL old_list, new_list or out, and for a NULL array that
 *  must hold values (section_keys or item_counts with sections, item_keys with items, a
 *  fingerprint array given for one list only while same_content is NULL);
 *  DFS_ERR_ARGUMENT for unknown flags and for more than INT32_MAX - 1 sections, items in
 *  a section, or items in all; DFS_ERR_CALLBACK if same_content aborted (nothing is
 *  called after it); DFS_ERR_MEMORY. On failure *out is zeroed (freeing it is allowed). */
DFS_API dfs_status dfs_list_sections_diff_compute(const dfs_list_sections_side *old_list,
                                          const dfs_list_sections_side *new_list,
                                          dfs_list_sections_same_fn same_content, void *ctx, unsigned int flags,
                                          dfs_list_sections_diff *out);

/** Frees a sections diff (its sub-diffs too) and zeroes it. NULL and zeroed diffs are
 *  accepted. */
DFS_API void dfs_list_sections_diff_free(dfs_list_sections_diff *diff);

/* intoList: a diffuser node that keeps a list view in step with a list value. The list is
 * a value of a dfs_type like any other (`const void *`): the node reads it through a
 * dfs_list_reader, diffs each new list against the last one it applied, and hands its
 * sink the diff and the new list together. It is the Swift core's intoList node, the one
 * Swift's Diffuser.intoList and Java's Diffuser.intoList are: same calls, same order. */

/** How an into_list node reads a list value. Each function receives the list (the value
 *  passed to the run, or the one the node kept from an earlier run) and the reader's
 *  ctx, and returns 0, or non-zero to abort the run (DFS_ERR_CALLBACK). Indices are
 *  0 ..< count. The list is the value as it came, NULL too: a reader of a type whose
 *  values may be NULL answers for NULL (as an empty list, or by failing with a
 *  message).
 *
 *  count:        stores the number of items in *count (at most INT32_MAX - 1).
 *  key:          stores the 64-bit key of item `index` in *key.
 *  same_key:     NULL: items are the same item exactly when their keys are equal. Else
 *                the keys are only hashes, and for items whose keys are equal, same_key
 *                decides: 1 same item, 0 not, negative to abort. It compares an old
 *                item with a new one, or (looking for duplicates) two items of one list,
 *                earlier first. It must be an equivalence.
 *  same_content: may be NULL. Whether old item `old_index` and new item `new_index`
 *                (same item) have the same content: 1 same, 0 changed, negative to
 *                abort. Called once per matched pair.
 *  content:      may be NULL; used when same_content is NULL. Stores a fingerprint of
 *                item `index`'s content in *fingerprint: matched items with equal
 *                fingerprints have the same content. Called for the old item and then
 *                the new item of each matched pair.
 *  With neither same_content nor content, content never changes.
 *
 *  Order, per run: count(old), count(new), then key, same_key and the content functions
 *  in the order the core's diff asks for them: along the common prefix, the old and the
 *  new key at each place (same_key if they are equal), then the pair's content; the
 *  same along the common suffix, from the end (where it reaches the place the prefix
 *  ended at, with that place's key asked already); then the keys of the rest of the old
 *  list and of the new list; then same_key for items of the rest of the old list whose
 *  keys are equal (looking for duplicates, from the last item to the first); then, for
 *  each item of the rest of the new list in order, same_key with the items whose keys
 *  are equal to its own (old items, or a new item met before it), and the content of
 *  its pair if it has one. Each key is asked at most twice. Then `type`'s retain of the
 *  new list, then the sink.
 *  The first run asks count(new) only.
 *  A key is asked only where the diff needs it: never on the first run, and past the
 *  common prefix and suffix only when both lists have items left there. A `key` that
 *  fails for an item therefore fails the first later run that needs that item's key,
 *  and every later run that needs it while the item is in the list the node kept (a run
 *  that fails keeps that list). */
typedef struct dfs_list_reader {
    int (*count)(const void *list, size_t *count, void *ctx);
    int (*key)(const void *list, int32_t index, uint64_t *key, void *ctx);
    int (*same_key)(const void *list_a, int32_t index_a, const void *list_b, int32_t index_b, void *ctx);
    int (*same_content)(const void *old_list, int32_t old_index, const void *new_list, int32_t new_index,
                        void *ctx);
    int (*content)(const void *list, int32_t index, uint64_t *fingerprint, void *ctx);
} dfs_list_reader;

/** Applies a diff: `changes` goes from the list the sink applied last (the empty list on
 *  the first call) to `new_list`. `is_first` is 1 on the first call (and on any call
 *  while no earlier one succeeded): the view shows nothing of this node yet, so it may
 *  simply reload; 0 afterwards, even when the list applied last was empty (the same as
 *  Swift's ListChanges.isFirst). `changes` and its arrays are borrowed for the call (do
 *  not free them; copy what you keep); `new_list` is the run's value, borrowed as an
 *  effect's is. Return 0, or non-zero to abort the run. */
typedef int (*dfs_list_sink_fn)(const dfs_list_diff *changes, const void *new_list, int is_first, void *ctx);

/** intoList(reader, sink): a diffuser of list values of `type` that keeps the last list
 *  it applied (retained through `type`) and, on each run:
 *  - diffs it against the new list (the first run: from the empty list, every item an
 *    insert), with the parts `flags` asks for (dfs_list_flags, as in
 *    dfs_list_diff_compute);
 *  - calls sink(changes, new_list, 1) on the first run, even for an empty list, and
 *    sink(changes, new_list, 0) on every later run whose diff is not empty;
 *  - on a later run with an empty diff (same keys in the same order, same content), does
 *    not call the sink, but keeps the new list all the same, like every gate;
 *  - after the sink returned 0, keeps the new list.
 *  A failing callback of the reader or the sink aborts the run with DFS_ERR_CALLBACK
 *  (the first failure wins; nothing after it is called), and the node keeps the last
 *  list it applied, so the next run's diff starts from what the view shows: after a
 *  failed sink call, the next call gets changes from that same list. The same holds
 *  for a list longer than INT32_MAX - 1 items (DFS_ERR_ARGUMENT), for one too large for
 *  the memory left (DFS_ERR_MEMORY, see Lists above) and for a retain of `type` that
 *  returns NULL (DFS_ERR_MEMORY; the list is retained before the sink is called).
 *
 *  `reader` is copied; reader_ctx is passed to its functions and reader_destroy(reader_ctx)
 *  runs when the node is dropped; the same for the sink's triple. reader, reader->count,
 *  reader->key and sink must not be NULL (DFS_ERR_NULL); unknown flags: DFS_ERR_ARGUMENT.
 *  As every constructor, it calls both destroys if it fails. */
DFS_API dfs_status dfs_diffuser_into_list(dfs_type *type, const dfs_list_reader *reader, void *reader_ctx,
                                  dfs_destroy_fn reader_destroy, unsigned int flags, dfs_list_sink_fn sink,
                                  void *sink_ctx, dfs_destroy_fn sink_destroy, dfs_diffuser **out);

/** Diffs `old_list` -> `new_list`, two list values read through `reader`, into *out (as
 *  dfs_list_diff_compute: the caller owns it, dfs_list_diff_free frees it), with the
 *  parts `flags` asks for. The reader is asked as an into_list node asks it on a later
 *  run: count(old_list), count(new_list), then its other functions in the order the
 *  core's diff asks for them (see dfs_list_reader), each key at most twice; so a key is
 *  asked only where the diff needs it. `reader` is read during the call only (nothing is
 *  destroyed). Errors: DFS_ERR_NULL for a NULL reader, reader->count, reader->key or
 *  out; DFS_ERR_ARGUMENT for unknown flags and lists longer than INT32_MAX - 1 items;
 *  DFS_ERR_CALLBACK if a reader function failed (nothing is called after it);
 *  DFS_ERR_MEMORY. On failure *out is zeroed (freeing it is allowed). */
DFS_API dfs_status dfs_list_diff_read(const dfs_list_reader *reader, void *reader_ctx, const void *old_list,
                              const void *new_list, unsigned int flags, dfs_list_diff *out);

/** How dfs_list_sections_diff_read reads two lists of sections. Each reader comes with
 *  the ctx its functions receive, so that a dfs_list_reader made for lists of items
 *  (for dfs_diffuser_into_list, say) serves here as it is.
 *
 *  sections:      reads a list of sections as a dfs_list_reader reads a list (with
 *                 sections_ctx): its keys pair the sections; its content functions
 *                 compare a section's own content (a header), apart from its items.
 *  items:         stores in *items the items of section `index` of `sections` (with
 *                 items_ctx): a list value for items_reader, which must stay valid until
 *                 items_release (or, without it, until the call returns). Returns 0, or
 *                 non-zero to abort. It is asked only for paired old sections and for
 *                 new sections.
 *  items_release: may be NULL. Called (with items_ctx) once for each list `items`
 *                 stored, when the diff no longer reads it (also when the call fails,
 *                 and for a non-NULL list stored by a call of `items` that failed).
 *  items_reader:  reads the items of a section (with items_reader_ctx).
 *
 *  Order: the sections are diffed first, `sections` asked as dfs_list_diff_read asks a
 *  reader. Then, for each new section j in order: items(old, o) if new section j is
 *  paired with old section o, then items(new, j), then the diff of those two lists of
 *  items, items_reader asked as dfs_list_diff_read asks a reader (for a new section:
 *  count(new items) only, as from an empty list), then items_release of the new list
 *  and of the old one. Apart from count and items_release, this is the order in which
 *  Swift's ListSectionsDiff calls its functions. */
typedef struct dfs_list_sections_reader {
    dfs_list_reader sections;
    void *sections_ctx;
    int (*items)(const void *sections, int32_t index, const void **items, void *ctx);
    void (*items_release)(const void *items, void *ctx);
    void *items_ctx;
    dfs_list_reader items_reader;
    void *items_reader_ctx;
} dfs_list_sections_reader;

/** Diffs two lists of sections, `old_list` -> `new_list`, read through `reader`, into
 *  *out (as dfs_list_sections_diff_compute: the caller owns it, dfs_list_sections_diff_
 *  free frees it), with the parts `flags` asks for. `reader` is read during the call
 *  only. Errors: DFS_ERR_NULL for a NULL reader, out, reader->items, or count or key of
 *  either of its list readers; DFS_ERR_ARGUMENT for unknown flags and for more than
 *  INT32_MAX - 1 sections, items in a section, or items read in all; DFS_ERR_CALLBACK
 *  if a reader function failed (nothing is called after it but items_release, which
 *  takes back every list `items` stored, even one a failing call of it stored);
 *  DFS_ERR_MEMORY. On failure *out is zeroed (freeing it is allowed). */
DFS_API dfs_status dfs_list_sections_diff_read(const dfs_list_sections_reader *reader, const void *old_list,
                                       const void *new_list, unsigned int flags, dfs_list_sections_diff *out);

/* ------------------------------------------------------------------------------------
 * Loops
 * ------------------------------------------------------------------------------------
 * A loop holds a model, reduces events into new models through an update, hands the
 * effects the update makes to effect handlers, and publishes every new model to its
 * observers and feedbacks: the Swift core's Loop (Mobius's loop, with Spin's feedbacks).
 * Models, events and effects are `const void *` values of three dfs_types.
 *
 * Order: one event at a time, first in first out. Each step: the update; its STEPPED
 * trace to the inspector (dfs_loop_model still gives the model the update was given);
 * the model stored; the model published to observers and feedbacks in the order they
 * were registered; then each effect handed to every handler (effects in the order the
 * update gave them, handlers in the order of the config), before the next event starts.
 * A step whose update gives no model publishes nothing. An event dispatched during a
 * step (from any callback, on any thread) is queued and handled after it, never inside
 * it; dfs_loop_dispatch never waits for a step, so nothing deadlocks. A start is a step
 * too: the STARTED trace (on a restart dfs_loop_model still gives the kept model, not
 * the one the restart gave); the model stored; the first model published to the
 * observers and feedbacks registered by then (those of the config first); the start
 * effects handed to the handlers; the sources connected.
 *
 * Threads: every function may be called from any thread. The executor of the config
 * decides who runs the steps: NULL, the thread that dispatches into an idle loop (it
 * handles the queue before dfs_loop_dispatch returns; a thread that dispatches while
 * another one drains returns at once). dfs_loop_start and the registrations queue their
 * work the same way, so they too may drain the queue before returning; so does a source
 * emitting into a loop it is connected to (dfs_loop_connect), once the connection has
 * delivered the event (not while the connection holds its lock; another thread's
 * emission meanwhile returns at once, its event handled by that drain).
 *
 * Lifecycle: a loop starts when made (unless config.manual_start). dfs_loop_stop ends
 * the run and keeps the model and the registrations; dfs_loop_start starts a new run
 * from the kept model (or from what config.restart gives for it: dfs_restart_fn),
 * publishing it again and reconnecting the sources.
 * dfs_loop_dispose ends the loop for good (idempotent). Stop and dispose refuse events
 * from the moment they are called (DFS_ERR_STOPPED, DFS_ERR_DISPOSED); events accepted
 * before them are still handled when the draining thread can be waited for (always
 * with the caller's executor), otherwise dropped (the inspector sees each); they cancel
 * every job (running its on-cancel actions) and disconnect the sources, and wait for
 * callbacks in progress on other threads: once they return, no callback of that run
 * starts. They may be called from inside a callback: the rest of that step is then
 * skipped (from inside the update: no model is stored, nothing is published or handled,
 * the journal does not record the event, and the event's STEPPED or FAILED trace comes
 * right after the STOPPED or DISPOSED one; a handler or observer that fails after
 * stopping or disposing its loop is reported after it too, and so are the drops a stop
 * still reports when a callback of it disposes the loop). A callback must not wait
 * for the thread that stops or disposes its loop. A stop or dispose of another loop from
 * a callback waits for that loop's callbacks, so it is such a wait when one of them stops
 * or disposes this loop: two loops whose callbacks stop or dispose each other may
 * deadlock, as two locks taken in opposite orders do.
 *
 * Closes that meet: a stop or dispose made while another thread's is under way returns
 * once that one has (a second dispose too), except from a callback of the run, from the
 * drain's step or from the inspector, which return at once and leave the work to it (a
 * dispose then follows that stop); one made once the loop is stopped or disposed waits
 * for no callback. One that waits for the drain gives way to a stop or dispose from that
 * drain's step, or from the executor's own thread when the drain is queued there, and
 * returns once that step and the run's callbacks on other threads have ended;
 * dfs_loop_start from there returns DFS_ERR_STOPPED while the stop is under way. A
 * callback that waits for another thread's callback (a handler disposing an observer or
 * feedback that the drain is calling, or reporting its failure while the inspector runs)
 * is not waited for by a stop or dispose from that other callback, which would wait for
 * itself: its trace or its dispose comes after that stop, and may still be in progress
 * when a close that met that stop returns. A stop or dispose from the inspector on a
 * thread other than the drain's does not wait for the drain, whose traces need the
 * inspector; nor, while that drain waits for the inspector, for the handler the drain
 * runs inside (a handler whose dfs_job_send into the idle loop, on the caller's executor,
 * drains it on the handler's thread). It drops the events not yet handled, and returns
 * while the drain's callback in progress, if any, and that handler finish. A stop or
 * dispose from an attached feedback's propagate does the same while the loop's turn that
 * removes that feedback waits for the propagate to return. A gear event that a
 * propagate turns into an event of the idle loop is drained once the propagate has
 * returned, outside the gear's lock: a stop or dispose from the inspector, which
 * disconnects the gear, does not wait for that drain. A propagate that itself drains the
 * loop (its dfs_loop_dispatch into the idle loop, with the caller's executor) is waited
 * for: a stop or dispose from the inspector while that drain waits for the inspector
 * deadlocks.
 *
 * Work a loop hands to an executor does not keep the loop alive: releasing the loop
 * disposes it even while a manual executor holds its work.
 * Registrations on a disposed loop (observe, render, connect, add, record) return DFS_OK
 * and do nothing: none of their callbacks is ever called, and each destroy runs at the
 * latest when the registration's *out is disposed or released. Their arguments are
 * checked first, as on a running loop: a NULL callback, an invalid handle, or a
 * diffuser, sources or journal of other types still fails.
 *
 * Errors: an update that fails leaves the model as it was; the inspector sees it and
 * the loop goes on. So do failing handlers, observers and feedback requests, and sources
 * that refuse to connect. The inspector is the only
 * place these failures go: a loop made without one drops them, so give every loop an
 * inspector that logs them.
 */

/** A loop: a model, the update that turns events into models and effects, and what is
 *  registered with it. */
typedef struct dfs_loop dfs_loop;

/** A piece of work a loop started (an effect being handled, a feedback reacting to a
 *  model) and its way back into the loop. A callback receives a job handle borrowed for
 *  the call: dfs_job_retain it to keep it (to send events later, from any thread), and
 *  dfs_job_release it when done. */
typedef struct dfs_job dfs_job;

/** What an update or a restart returns, filled during its call: see dfs_update_fn and
 *  dfs_restart_fn. */
typedef struct dfs_next dfs_next;

/** Where a loop, a feedback or a handler runs its work (see dfs_executor_new). */
typedef struct dfs_executor dfs_executor;

/** A piece of work handed to a dfs_executor_new executor: run it with dfs_work_run. */
typedef struct dfs_work dfs_work;

/** A record of a loop's runs, to replay them (see Journals below). */
typedef struct dfs_journal dfs_journal;

/** A feedback not tied to a loop: a description (the Swift core's Feedback) that loops
 *  register, at their creation (dfs_loop_config.feedbacks) or later (dfs_loop_add). Each
 *  run of each loop makes its own instance of it, so one handle may serve several loops
 *  and several runs. See Feedbacks below. */
typedef struct dfs_feedback dfs_feedback;

/** The update: what `event` does to `model` (both borrowed for the call). Give the new
 *  model with dfs_next_model (at most once; without it the model stays and nothing is
 *  published) and each effect with dfs_next_effect, in order. Return 0, or non-zero to
 *  fail: the model stays, the effects given are dropped, the inspector sees the error.
 *  An update must not have side effects. */
typedef int (*dfs_update_fn)(const void *model, const void *event, dfs_next *next, void *ctx);

/** The new model of the step (or the first model of a restarted run). Ownership as a
 *  transform's output (dfs_transform_fn): the core passes it to the model type's release
 *  when done. Only during the update or restart call that received `next`, on its
 *  thread: DFS_ERR_HANDLE otherwise (the value then stays the caller's). A second call
 *  replaces the model given first. */
DFS_API dfs_status dfs_next_model(dfs_next *next, const void *model);

/** Adds an effect to the step, or a start effect to a restarted run (ownership as
 *  dfs_next_model, with the effect type). */
DFS_API dfs_status dfs_next_effect(dfs_next *next, const void *effect);

/** The restart (Mobius's Init): what every run after the loop's first starts from, given
 *  the kept model (borrowed for the call). Called on the loop's turn when dfs_loop_start
 *  starts a stopped loop. Give the run's first model with dfs_next_model (without it the
 *  run starts from the kept model) and its start effects with dfs_next_effect, in order;
 *  `next` is good for this call only, as an update's. A restart
 *  cannot fail: one with nothing to give gives nothing. One that stops or disposes its
 *  loop cancels the start: nothing of it happens (no DFS_TRACE_STARTED, no model
 *  published, no effect handled; the inspector sees only the stop's or dispose's own
 *  trace), and what it gave is dropped. */
typedef void (*dfs_restart_fn)(const void *model, dfs_next *next, void *ctx);

/** Handles one effect (borrowed for the call). Send events back with dfs_job_send, now
 *  or later. Return 0, or non-zero: the inspector sees the failure, the loop goes on. */
typedef int (*dfs_handler_fn)(const void *effect, dfs_job *job, void *ctx);

/** An effect handler of a loop's config. */
typedef struct dfs_handler {
    dfs_handler_fn fn;
    void *ctx;
    dfs_destroy_fn destroy;
    /** Where fn runs: NULL, inside the step; else handed to this executor, where it runs
     *  unless the job was cancelled or the loop stopped first. */
    dfs_executor *executor;
} dfs_handler;

/** Gives a coalescing key to an event (borrowed): store it in *key and return 1, or
 *  return 0 for none. A queued event with the same key is replaced in place by the new
 *  one (the older is dropped), for high-frequency input. Called on the dispatching thread
 *  for every event sent, before the loop decides to accept it: also for an event that a
 *  stopped loop then refuses. */
typedef int (*dfs_key_fn)(const void *event, uint64_t *key, void *ctx);

/** Hands back a key that dfs_key_fn gave: called exactly once for each key the coalescing
 *  function gave (returned 1), once the loop holds that key no more: its event was
 *  handled or dropped, replaced a queued one with the same key (the queued one keeps its
 *  key), or was refused. So a binding that numbers keys may forget a number once every
 *  key it gave with that number came back. Any thread may call it, possibly with the
 *  loop's lock held: it must not call the loop. Runs before coalesce_destroy. */
typedef void (*dfs_key_done_fn)(uint64_t key, void *ctx);

/** What the inspector sees. An inspector ignores kinds it does not know: a later version
 *  may report more (added after the last, keeping every value). */
typedef enum dfs_trace_kind {
    /** A run started: `model` (the first model), `effects` (the start effects). */
    DFS_TRACE_STARTED = 1,
    /** The update returned: `event`, `model` (before), `has_next_model` and
     *  `next_model`, `effects`. */
    DFS_TRACE_STEPPED = 2,
    /** The update failed: `event`, `model` (kept), `error`. */
    DFS_TRACE_FAILED = 3,
    /** An accepted event never reached the update: `event`, `reason`. */
    DFS_TRACE_DROPPED = 4,
    /** A handler failed: `effect`, `error`. */
    DFS_TRACE_EFFECT_FAILED = 5,
    /** An observer failed: `error`. */
    DFS_TRACE_OBSERVER_FAILED = 6,
    /** The loop stopped with `model`. */
    DFS_TRACE_STOPPED = 7,
    /** The loop was disposed with `model`. */
    DFS_TRACE_DISPOSED = 8,
    /** A source of a fuser given to dfs_loop_connect refused to connect (its connect
     *  returned non-zero) when the loop connected it, on the loop's turn after the call
     *  or at a start: `error`. Nothing of that fuser is connected for the run; the next
     *  start tries again. */
    DFS_TRACE_SOURCE_FAILED = 9,
    /** A request feedback's `request` failed, or the equality of its request_type did
     *  (dfs_feedback_request), on a model it heard: one just published, or the current
     *  one when it was added to a running loop: `error`. That feedback's request stays as
     *  it was; the loop goes on. */
    DFS_TRACE_FEEDBACK_FAILED = 10
} dfs_trace_kind;

/** Why an accepted event never reached the update. */
typedef enum dfs_drop_reason {
    DFS_DROP_CANCELLED_WORK = 1, /* the job that sent it was cancelled first */
    DFS_DROP_COALESCED = 2,      /* a newer event with the same key replaced it */
    DFS_DROP_STOPPED = 3,        /* the loop stopped first */
    DFS_DROP_DISPOSED = 4       /* the loop was disposed first */
} dfs_drop_reason;

/** One thing the inspector sees; every pointer is borrowed for the call. Fields that do
 *  not apply to the kind are NULL or 0. */
typedef struct dfs_trace {
    dfs_trace_kind kind;
    const void *event;
    const void *model;
    int has_next_model;
    const void *next_model;
    size_t effect_count;
    const void *const *effects;
    const void *effect;
    dfs_drop_reason reason;
    const char *error;
} dfs_trace;

/** Sees every start, event (stepped, failed or dropped, each accepted event once),
 *  error, stop and dispose, one call at a time, in order: on the thread running the
 *  loop's step, except for an error of a callback on another thread (a handler on its
 *  own executor), which that thread reports at once. */
typedef void (*dfs_inspect_fn)(const dfs_trace *trace, void *ctx);

/** What dfs_loop_new makes. Zero what you do not use. */
typedef struct dfs_loop_config {
    dfs_type *model_type;
    dfs_type *event_type;
    dfs_type *effect_type;
    /** The first model (retained through model_type). */
    const void *model;
    /** Effects handed to the handlers once the first model is published (retained
     *  through effect_type). May be NULL when the count is 0. */
    const void *const *start_effects;
    size_t start_effect_count;
    dfs_update_fn update;
    void *update_ctx;
    dfs_destroy_fn update_destroy;
    /** The handlers, copied. May be NULL when the count is 0. */
    const dfs_handler *handlers;
    size_t handler_count;
    /** Who runs the steps; NULL: the dispatching thread. */
    dfs_executor *executor;
    /** Optional: coalescing keys. */
    dfs_key_fn coalesce;
    void *coalesce_ctx;
    dfs_destroy_fn coalesce_destroy;
    /** Optional: the inspector. */
    dfs_inspect_fn inspect;
    void *inspect_ctx;
    dfs_destroy_fn inspect_destroy;
    /** 0: start now. 1: the first dfs_loop_start starts the loop. */
    int manual_start;
    /** Optional: a journal (retained) that records the loop's runs from the first start
     *  on, as dfs_loop_record would before any start. */
    dfs_journal *journal;
    /** Optional: feedbacks registered as the loop is made, in this order and before
     *  anything else, as the Swift core's `Loop(feedbacks:)` registers them: every start
     *  publishes its first model to them before the start effects reach the handlers,
     *  whatever the executor and whether or not manual_start is set. The handles stay
     *  yours (release them when you like: the loop keeps what it needs). May be NULL when
     *  the count is 0; no entry may be NULL. */
    dfs_feedback *const *feedbacks;
    size_t feedback_count;
    /** Optional, with coalesce: each key coalesce gave, handed back (with coalesce_ctx)
     *  once the loop holds it no more. */
    dfs_key_done_fn coalesce_done;
    /** Optional: the restart (see dfs_restart_fn). Without it, a run after the first
     *  starts from the kept model with no effect. */
    dfs_restart_fn restart;
    void *restart_ctx;
    dfs_destroy_fn restart_destroy;
} dfs_loop_config;

/** Makes a loop. Every destroy of the config (update, handlers, coalesce, inspect, restart) runs
 *  once the loop no longer needs its callback, also if dfs_loop_new fails (the
 *  feedbacks' callbacks belong to their dfs_feedback handles: a failure leaves them as
 *  they were), except the handlers' when handler_count is out of range (2^24 or more:
 *  DFS_ERR_ARGUMENT, and the handlers are not read). On success *out is a new handle:
 *  dfs_loop_release it; the last release disposes the loop. */
DFS_API dfs_status dfs_loop_new(const dfs_loop_config *config, dfs_loop **out);

/** Queues `event` (retained through the event type; a type without retain must keep
 *  it valid until handled). DFS_OK, DFS_ERR_STOPPED or DFS_ERR_DISPOSED; DFS_ERR_MEMORY
 *  if the event type's retain returns NULL (nothing is queued; retain is called first,
 *  so also on a stopped or disposed loop). With the caller's
 *  executor the event has been handled on return, unless another thread was draining
 *  the loop (that thread handles it). The draining thread also handles what other
 *  threads queue meanwhile, so while they keep dispatching, its call does not return. */
DFS_API dfs_status dfs_loop_dispatch(dfs_loop *loop, const void *event);

/** Calls reader(model, ctx) with the current model, borrowed for the call. Returns
 *  DFS_ERR_CALLBACK if reader returns non-zero. */
DFS_API dfs_status dfs_loop_model(dfs_loop *loop, dfs_effect_fn reader, void *ctx);

/** Calls observer(model, ctx) with the current model (on the loop's turn; at once with
 *  the caller's executor and an idle running loop; at the next start if the loop is
 *  not running), then with every new model, until *out is disposed. Non-zero returns
 *  go to the inspector. */
DFS_API dfs_status dfs_loop_observe(dfs_loop *loop, dfs_effect_fn observer, void *ctx, dfs_destroy_fn destroy,
                                    dfs_disposable **out);

/** Runs `diffuser` (of the model type) on the current model, then on every new model,
 *  until *out is disposed. A failing run goes to the inspector. DFS_ERR_TYPE if the
 *  diffuser's type is not the model type. */
DFS_API dfs_status dfs_loop_render(dfs_loop *loop, dfs_diffuser *diffuser, dfs_disposable **out);

/** Connects `sources` (of the event type) while the loop runs: disconnected on stop,
 *  reconnected on start, until *out is disposed. Events are retained through the event
 *  type. DFS_ERR_TYPE if the fuser's type is not the event type. The sources connect on
 *  the loop's turn, so a source that refuses is not this call's error: it goes to the
 *  inspector (DFS_TRACE_SOURCE_FAILED), and nothing of the fuser is connected until the
 *  next start. Once dfs_disposable_dispose(*out) has returned, no event of the sources is
 *  accepted (their emits drop it: DFS_OK, or DFS_ERR_HANDLE once a source's disconnect
 *  has returned). If the loop's turn is still inside their connect on another thread
 *  then, the dispose does not wait for it (a connect may wait for the disposing thread):
 *  they are disconnected once their connect has returned and the dispose is through, on
 *  the thread of whichever ends last (usually that turn's).
 *
 *  With the caller's executor, a source's dfs_dispatch_emit may run the loop's queued
 *  work before it returns (see Threads above), and that work connects and disconnects
 *  sources: at a start, a stop (also one a handler makes), a connect, and where a
 *  callback it runs disposes a connection. So a source must not hold a lock across
 *  dfs_dispatch_emit that its own connect or disconnect, or another source's of the
 *  loop, takes: one source deadlocks on its own lock, two on each other's. Take the
 *  dispatches under the lock and emit once it is released (a dispatch whose disconnect
 *  has returned gives DFS_ERR_HANDLE, nothing worse), as the Swift core's `Output`
 *  does. */
DFS_API dfs_status dfs_loop_connect(dfs_loop *loop, dfs_fuser *sources, dfs_disposable **out);

/** What a feedback does with its work in progress when a new model (or request) comes. */
typedef enum dfs_overlap {
    /** Cancel it and start anew (events of the cancelled job still queued are dropped). */
    DFS_OVERLAP_CANCEL_PREVIOUS = 0,
    /** Keep it and ignore the new one while its job runs (finish the job to let the next
     *  one start). */
    DFS_OVERLAP_KEEP_PREVIOUS = 1,
    /** Start anew and let it run to its end. Finish every job: the open ones are kept
     *  until the loop stops. */
    DFS_OVERLAP_CONCURRENT = 2
} dfs_overlap;

/** Work a feedback starts on a value (a model, or a request), borrowed for the call.
 *  Send events with dfs_job_send; dfs_job_finish when done. */
typedef void (*dfs_feedback_fn)(const void *value, dfs_job *job, void *ctx);

/* Feedbacks: a dfs_feedback describes one; a loop registers it at its creation
 * (dfs_loop_config.feedbacks) or later (dfs_loop_add). The constructors below, and the
 * gear feedbacks' (dfs_feedback_pushing, dfs_feedback_attached), give a new handle in
 * *out: dfs_feedback_release it when you no longer register it anywhere; the loops it
 * is registered with keep what they need. As every constructor, each calls its destroys
 * if it fails; otherwise they run once neither the handle nor any loop needs the
 * callback. */

/** A feedback that starts fn(model, job) on every model published to it, on `executor`
 *  if not NULL (else inside the step), with `overlap` deciding about the work in
 *  progress. */
DFS_API dfs_status dfs_feedback_work(dfs_overlap overlap, dfs_executor *executor, dfs_feedback_fn fn, void *ctx,
                                     dfs_destroy_fn destroy, dfs_feedback **out);

/** A feedback gated by a request: `request` selects each model's request (a value of
 *  request_type, ownership as dfs_transform_fn; NULL for none). fn(request, job) starts
 *  when the request changes (request_type's equality) to a non-NULL one, and the job is
 *  cancelled when it becomes NULL; `overlap` decides about the work of the previous
 *  request. A failing `request`, or a failing equality of request_type, leaves the
 *  request as it was (nothing starts or stops) and goes to the loop's inspector
 *  (DFS_TRACE_FEEDBACK_FAILED). */
DFS_API dfs_status dfs_feedback_request(dfs_type *request_type, dfs_transform_fn request, void *request_ctx,
                                        dfs_destroy_fn request_destroy, dfs_overlap overlap, dfs_executor *executor,
                                        dfs_feedback_fn fn, void *ctx, dfs_destroy_fn destroy, dfs_feedback **out);

/** Registers `feedback` with `loop` on the loop's turn (after the entries queued before;
 *  at once with the caller's executor and an idle loop), after the observers and
 *  feedbacks registered so far. If the loop is running then, the feedback hears the
 *  current model at once; otherwise it hears the first model of the next start. A start
 *  that comes before that turn (one already made, or, with another executor, one asked
 *  for meanwhile: a start goes ahead of queued registrations) has handed its effects to
 *  the handlers by then; the feedbacks of dfs_loop_config hear every first model before
 *  the start effects. Dispose *out to remove it: it hears of no model once the dispose
 *  returns (which waits for a model it is hearing on another thread). Its work in
 *  progress is cancelled, and a gear attachment (dfs_feedback_attached) lets go of its
 *  gear, on the loop's turn: before the dispose returns with the caller's executor and
 *  an idle loop, otherwise once the executor has run the entries queued before (a
 *  manual executor: when dfs_executor_run_next or _run_all reaches it). Until then a
 *  job of it may still send (the events are dropped when it is cancelled), and a gear
 *  attachment still calls its propagate for each gear event and queues what it makes
 *  into the loop, which handles it. */
DFS_API dfs_status dfs_loop_add(dfs_loop *loop, dfs_feedback *feedback, dfs_disposable **out);

/** dfs_feedback_work and dfs_loop_add in one call. */
DFS_API dfs_status dfs_loop_add_feedback(dfs_loop *loop, dfs_overlap overlap, dfs_executor *executor,
                                         dfs_feedback_fn fn, void *ctx, dfs_destroy_fn destroy,
                                         dfs_disposable **out);

/** dfs_feedback_request and dfs_loop_add in one call. */
DFS_API dfs_status dfs_loop_add_request_feedback(dfs_loop *loop, dfs_type *request_type, dfs_transform_fn request,
                                                 void *request_ctx, dfs_destroy_fn request_destroy,
                                                 dfs_overlap overlap, dfs_executor *executor, dfs_feedback_fn fn,
                                                 void *ctx, dfs_destroy_fn destroy, dfs_disposable **out);

/** Adds a reference to a feedback handle. */
DFS_API dfs_status dfs_feedback_retain(dfs_feedback *feedback);
/** Drops a reference to a feedback handle; the loops it is registered with keep what
 *  they need. NULL is accepted and ignored. */
DFS_API dfs_status dfs_feedback_release(dfs_feedback *feedback);

/** Starts a stopped loop (or one made with manual_start). DFS_OK if it runs afterwards
 *  (after the start's steps, when this call runs them); if not, DFS_ERR_DISPOSED when the
 *  loop was disposed or is being disposed (also by a callback of this start), and
 *  DFS_ERR_STOPPED when it was stopped again (by a callback of this start, or another
 *  thread) or is being stopped (a call from a callback of the run that another thread
 *  is stopping). */
DFS_API dfs_status dfs_loop_start(dfs_loop *loop);

/** Ends the run, keeping the model and the registrations (see Lifecycle). DFS_OK also
 *  when the loop was not running (stopped, disposed, or made with manual_start and not
 *  started); a stop or dispose under way on another thread is waited for first, as
 *  Lifecycle says. */
DFS_API dfs_status dfs_loop_stop(dfs_loop *loop);

/** Ends the loop for good (see Lifecycle). Idempotent. The loop's own record, its
 *  update, handlers, inspector and executor (a background executor's thread too) stay
 *  until the last reference is released. */
DFS_API dfs_status dfs_loop_dispose(dfs_loop *loop);

/** 1 if the loop accepts events, 0 if not, negative (a dfs_status, negated) for an
 *  invalid handle. */
DFS_API int dfs_loop_is_running(dfs_loop *loop);

/** Adds a reference: one more dfs_loop_release is needed. */
DFS_API dfs_status dfs_loop_retain(dfs_loop *loop);
/** Drops a reference; the last one disposes the loop. NULL is accepted and ignored. */
DFS_API dfs_status dfs_loop_release(dfs_loop *loop);

/* Gears: a bus between loops (Spin's Gear). A feedback of one loop pushes gear events
 * made from its models (dfs_loop_push_to_gear); a feedback of another loop turns gear
 * events into its own events (dfs_loop_attach_to_gear), queued there like dispatched
 * ones. A loop hears a gear only while it runs. */

/** A bus of gear events of one type. */
typedef struct dfs_gear dfs_gear;

/** Makes something of `value` (borrowed), or nothing: store a new value in *out and
 *  return 1 (ownership as a transform's output, with the type the caller names), or
 *  return 0 for nothing. Any other return counts as 0. A value stored in *out with a
 *  return other than 1 is released through that type, as a failing transform's is. */
typedef int (*dfs_propagate_fn)(const void *value, const void **out, void *ctx);

/** A gear whose events have `event_type`. On success *out is a new handle: release it
 *  with dfs_gear_release; feedbacks attached to it keep it. */
DFS_API dfs_status dfs_gear_new(dfs_type *event_type, dfs_gear **out);

/** Pushes `event` (retained through the gear's event type) to every loop attached.
 *  Events sent from several threads reach the loops one at a time, in the order sent,
 *  each delivered by the thread delivering when it was sent, whose call therefore does
 *  not return while other threads keep sending. */
DFS_API dfs_status dfs_gear_send(dfs_gear *gear, const void *event);

/** A feedback (see Feedbacks above) that pushes into `gear` what `propagate` makes of
 *  each model, a gear event of the gear's type. */
DFS_API dfs_status dfs_feedback_pushing(dfs_gear *gear, dfs_propagate_fn propagate, void *ctx,
                                        dfs_destroy_fn destroy, dfs_feedback **out);

/** A feedback (see Feedbacks above) that turns each gear event of `gear` into what
 *  `propagate` makes of it, an event of the event type of the loop it is registered
 *  with, queued into that loop while it runs. `propagate` runs on the thread that sends
 *  into the gear, as a callback of the loop's run (a stop or dispose from it behaves as
 *  from any callback); a gear event sent once the run has ended is dropped unseen. With
 *  the caller's executor, an event `propagate` makes while the loop is idle is handled
 *  on the sending thread once `propagate` has returned, outside the gear's lock and
 *  before the gear moves on to its next loop; inside a delivery of a loop's source (or
 *  another gear's propagate), once the outermost one is over. (While the loop drains,
 *  the event waits its turn in the queue, as a dispatched one does.) */
DFS_API dfs_status dfs_feedback_attached(dfs_gear *gear, dfs_propagate_fn propagate, void *ctx,
                                         dfs_destroy_fn destroy, dfs_feedback **out);

/** dfs_feedback_pushing and dfs_loop_add in one call. */
DFS_API dfs_status dfs_loop_push_to_gear(dfs_loop *loop, dfs_gear *gear, dfs_propagate_fn propagate, void *ctx,
                                         dfs_destroy_fn destroy, dfs_disposable **out);

/** dfs_feedback_attached and dfs_loop_add in one call. */
DFS_API dfs_status dfs_loop_attach_to_gear(dfs_loop *loop, dfs_gear *gear, dfs_propagate_fn propagate, void *ctx,
                                           dfs_destroy_fn destroy, dfs_disposable **out);

/** Adds a reference: one more dfs_gear_release is needed. */
DFS_API dfs_status dfs_gear_retain(dfs_gear *gear);
/** NULL is accepted and ignored. */
DFS_API dfs_status dfs_gear_release(dfs_gear *gear);

/** Queues `event` (retained through the loop's event type) as the job's. DFS_OK;
 *  DFS_ERR_DISPOSED once the job ended (finished or cancelled) or its loop refuses
 *  events; DFS_ERR_MEMORY if the event type's retain returns NULL (nothing is queued).
 *  Events of a job cancelled before their turn are dropped. */
DFS_API dfs_status dfs_job_send(dfs_job *job, const void *event);

/** Marks the work done: later sends are refused, on-cancel actions dropped. Does nothing
 *  once the job was cancelled or its run ended. */
DFS_API dfs_status dfs_job_finish(dfs_job *job);

/** Cancels the work: later sends are refused, its queued events are dropped, and its
 *  on-cancel actions run on the calling thread. */
DFS_API dfs_status dfs_job_cancel(dfs_job *job);

/** 1 if the job was cancelled (or its run ended before it finished), 0 if not (a job
 *  that finished first stays finished), negative for an invalid handle. */
DFS_API int dfs_job_is_cancelled(dfs_job *job);

/** An action run once, on cancellation. */
typedef void (*dfs_action_fn)(void *ctx);

/** Runs action(ctx) once when the job is cancelled (at once if it was); never if it
 *  finishes first. destroy(ctx) runs when the action is no longer needed. */
DFS_API dfs_status dfs_job_on_cancel(dfs_job *job, dfs_action_fn action, void *ctx, dfs_destroy_fn destroy);

/** Adds a reference: one more dfs_job_release is needed. */
DFS_API dfs_status dfs_job_retain(dfs_job *job);
/** Drops a reference taken by dfs_job_retain. NULL is accepted and ignored. A release
 *  beyond those is refused with DFS_ERR_HANDLE: the handle a callback was lent stays
 *  valid until the callback returns. */
DFS_API dfs_status dfs_job_release(dfs_job *job);

/** Hands work to an executor of yours: arrange for dfs_work_run(work) to be called
 *  exactly once, now or later, on any thread (a main-loop queue, a thread pool). Work
 *  handed in an order must run in that order. Running it now, inside this call, is
 *  fine: when the work is the rest of a loop's queue handed back after steps_per_run
 *  entries, it returns at once and the drain that handed it over goes on once this call
 *  returns (no stack level per piece of work), so those steps run inside the piece of
 *  work already running, not inside this call. A stop or dispose made inside this call
 *  after such work returned comes from that drain, as one made inside a step: it does
 *  not wait, and the queued events are dropped. */
typedef void (*dfs_execute_fn)(dfs_work *work, void *ctx);

/** An executor over `execute`. A loop on it handles at most `steps_per_run` queued
 *  entries per piece of work (0, or anything above PTRDIFF_MAX: no limit), handing the
 *  rest back as new work. */
DFS_API dfs_status dfs_executor_new(dfs_execute_fn execute, void *ctx, dfs_destroy_fn destroy,
                                    size_t steps_per_run, dfs_executor **out);

/** An executor with one background thread of its own, serial. DFS_ERR_MEMORY if the
 *  system cannot start a thread (too many threads, or no memory for its stack).
 *
 *  The thread ends on its own once nothing holds the executor (its handle, and every
 *  loop, handler or feedback given it, dfs_feedback handles included) and the work
 *  handed to it before has run; nothing waits for it. So the end of a released loop's
 *  teardown may still run there after the last dfs_loop_release or
 *  dfs_executor_release has returned: the last release of its values, and the destroy
 *  functions of its types and of its callbacks (update, handlers, inspector, ...). A
 *  program that must see every such call before it goes on (a test that counts values,
 *  or one about to unload what the callbacks use) runs its loops on an executor of its
 *  own (dfs_executor_new), whose thread it can join. A thread still running at exit
 *  shows as "possibly lost" under valgrind (its thread-local storage). */
DFS_API dfs_status dfs_executor_new_background(dfs_executor **out);

/** An executor that runs nothing until dfs_executor_run_next or _run_all, for tests: a
 *  loop on it handles one queued entry per piece of work. */
DFS_API dfs_status dfs_executor_new_manual(dfs_executor **out);

/** Manual executors: runs the oldest piece of work. 1 if there was one, 0 if not,
 *  negative (a dfs_status, negated) otherwise: -DFS_ERR_HANDLE (or -DFS_ERR_NULL) for
 *  an invalid executor, -DFS_ERR_ARGUMENT for one that is not manual. */
DFS_API int dfs_executor_run_next(dfs_executor *executor);

/** Manual executors: runs work until none is left, also work handed meanwhile; returns
 *  how many pieces ran, or negative as dfs_executor_run_next. */
DFS_API int dfs_executor_run_all(dfs_executor *executor);

/** Runs a piece of work handed to a dfs_executor_new executor, and frees it.
 *  DFS_ERR_HANDLE if it already ran. Work whose loop was disposed or released meanwhile
 *  runs nothing (DFS_OK): an executor that shuts down runs what it holds to free it. */
DFS_API dfs_status dfs_work_run(dfs_work *work);

/** Drops an executor handle; loops, handlers and feedbacks using it keep it. NULL is
 *  accepted. */
DFS_API dfs_status dfs_executor_release(dfs_executor *executor);

/* Journals
 * ------------------------------------------------------------------------------------
 * A journal records a loop's runs: the model each run started from and every event that
 * reached the update (also those whose update failed), in order. Replaying it through
 * an update re-derives every model the loop published, without handling a single
 * effect: to reproduce a bug report, or to check that a new update keeps old sessions'
 * models. Replay means something because an update has no side effects.
 *
 *     dfs_journal *journal;
 *     dfs_journal_new(model_type, event_type, &journal);
 *     config.journal = journal;          // or dfs_loop_record(loop, journal) later
 *     ...
 *     dfs_journal_replay(journal, effect_type, update, update_ctx, print_model, NULL);
 *
 * Values are retained through their types for as long as the journal holds them. Every
 * function may be called from any thread.
 */

/** A new, empty journal of models of model_type and events of event_type. *out: a new
 *  handle, dfs_journal_release it. DFS_ERR_NULL / DFS_ERR_HANDLE for a missing or
 *  invalid type. */
DFS_API dfs_status dfs_journal_new(dfs_type *model_type, dfs_type *event_type, dfs_journal **out);

/** Makes `loop` record into `journal` (which it retains), in place of the journal it
 *  recorded into so far; NULL stops recording. Takes effect on the loop's turn, after
 *  the entries queued before (at once with the caller's executor and an idle loop). If
 *  the loop is running then, the journal first records the current model as a start;
 *  otherwise it records the next start. DFS_ERR_TYPE if the journal's types are not the
 *  loop's model and event types. */
DFS_API dfs_status dfs_loop_record(dfs_loop *loop, dfs_journal *journal);

/** What an entry of a journal is. */
typedef enum dfs_journal_entry {
    /** A run started from the model. */
    DFS_JOURNAL_START = 1,
    /** The event reached the update. */
    DFS_JOURNAL_EVENT = 2
} dfs_journal_entry;

/** Sees one entry: its kind and its value (a model or an event), borrowed for the
 *  call. Return 0 to go on, non-zero to stop. */
typedef int (*dfs_journal_visit_fn)(dfs_journal_entry kind, const void *value, void *ctx);

/** Calls visit for every entry, in order (a copy taken when called: the loop may record
 *  meanwhile). DFS_ERR_CALLBACK if visit returned non-zero (the rest is not visited). */
DFS_API dfs_status dfs_journal_entries(dfs_journal *journal, dfs_journal_visit_fn visit, void *ctx);

/** Forgets every entry. */
DFS_API dfs_status dfs_journal_clear(dfs_journal *journal);

/** Replays the journal through `update` (the core's replay): each start model, then the
 *  model of each event's step that made one, starting from the last start; an event
 *  whose update fails (or comes before any start) leaves the model as it was. Effects
 *  the update gives are released through effect_type, never handled. Then calls
 *  visit(model, visit_ctx) for each model, in order, borrowed for the call.
 *  DFS_ERR_CALLBACK if visit returned non-zero (the rest is not visited). The update is
 *  called on the calling thread, during this call only. */
DFS_API dfs_status dfs_journal_replay(dfs_journal *journal, dfs_type *effect_type, dfs_update_fn update,
                                      void *update_ctx, dfs_effect_fn visit, void *visit_ctx);

/** Adds a reference: one more dfs_journal_release is needed. */
DFS_API dfs_status dfs_journal_retain(dfs_journal *journal);
/** NULL is accepted and ignored. */
DFS_API dfs_status dfs_journal_release(dfs_journal *journal);

#ifdef __cplusplus
}
#endif

#endif /* DIFFUSER_H */
