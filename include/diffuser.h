/*
 * diffuser.h — the C API of Diffuser.
 *
 * A Diffuser spreads an immutable model into side effects, re-running only what
 * changed; a Fuser gathers events from many sources into one stream. The behaviour is
 * implemented once, in the Swift core; this header is a thin, stable door to it.
 *
 * Conventions
 * -----------
 * - Every symbol starts with dfs_ (types, functions) or DFS_ (macros, constants).
 * - Objects are opaque handles (dfs_type, dfs_diffuser, dfs_fuser, dfs_disposable,
 *   dfs_dispatch). A handle you receive through an `out` parameter is yours: release it
 *   with the matching *_release function. Handles are reference counted (*_retain adds
 *   a reference); the core also keeps what it needs, so you may release a child right
 *   after composing it into a parent.
 * - Handles are validated: a NULL, released or wrong-kind handle makes a call return
 *   DFS_ERR_HANDLE (or DFS_ERR_NULL); it never crashes the process.
 * - Every function that can fail returns a dfs_status. On failure, dfs_last_error()
 *   gives a message for the calling thread, and `out` parameters are set to NULL.
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
 * Every function may be called from any thread. dfs_diffuser_run on one graph (a
 * diffuser and everything composed with it) is serialized. A run called from inside one
 * of the graph's own effects, on the same thread, is queued and performed right after
 * the current pass, before the outermost run returns: no deadlock, no half-updated
 * caches. Each fuser connection delivers one event at a time, and once
 * dfs_disposable_dispose has returned its effect receives nothing more. None of the
 * functions may be called from a signal handler.
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
 * A composite takes fewer than 2^24 children. Handles are 64-bit values; the library
 * is built for 64-bit platforms.
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
#define DFS_ABI_VERSION 2

/** Status codes. 0 is success; every error is positive. */
typedef enum dfs_status {
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
    /** Out of memory, or libffi could not make a closure. */
    DFS_ERR_MEMORY = 6,
} dfs_status;

/** Frees a callback context. */
typedef void (*dfs_destroy_fn)(void *ctx);

/** The library's version as "major.minor.patch". Static storage; never NULL. */
DFS_API const char *dfs_version(void);

/** The library's ABI version; compare with DFS_ABI_VERSION. */
DFS_API int dfs_abi_version(void);

/** The message of the last error on the calling thread, or "" if none. The string
 *  belongs to the library and stays valid until the next dfs_ call on this thread. */
DFS_API const char *dfs_last_error(void);

/** A short constant name for a status ("DFS_ERR_HANDLE"); "DFS_UNKNOWN" for others. */
DFS_API const char *dfs_status_name(int status);

/** Sets the calling thread's error message. Meant for callbacks that are about to
 *  return non-zero: the message then reaches the caller of the run or emission.
 *  `message` is copied; NULL clears it. */
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
 *  retain:  called when the core keeps a value beyond the call that passed it (in a
 *           cache, for a queued run). Returns the pointer to keep: the same one after
 *           incrementing a reference count, or a copy. NULL: the value is borrowed and
 *           must stay valid while the core may use it (until it is replaced in every
 *           cache that holds it, or the diffuser is released).
 *  release: drops a value the core kept, or a value a transform returned. NULL: no-op. */
typedef struct dfs_type dfs_type;

typedef int (*dfs_equal_fn)(const void *a, const void *b, void *ctx);
typedef const void *(*dfs_retain_fn)(const void *value, void *ctx);
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
 *  NULL); retain copies the string, release frees the copy. Static handle. */
DFS_API dfs_type *dfs_type_cstring(void);

/* ------------------------------------------------------------------------------------
 * Diffuser
 * ------------------------------------------------------------------------------------ */

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

/** dfs_diffuser_map for parts the core borrows instead of owning: a part must stay valid until the dfs_diffuser_run call during which the
 *  transform made it returns (runs queued from inside effects are performed within the
 *  outermost call), for instance a JNI local reference. The core never releases a
 *  borrowed part, not even one stored by a failing transform; a gate that caches a part
 *  retains it through the part type first, so give that type a retain function unless
 *  the parts outlive every cache anyway. Saves a retain and a release per part and run
 *  where references are dear and most parts are only compared. */
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
 *  or queued). Returns DFS_ERR_CALLBACK if a callback aborted the run. A run called from
 *  inside the graph's own effect is queued and returns DFS_OK at once. */
DFS_API dfs_status dfs_diffuser_run(dfs_diffuser *diffuser, const void *value);

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

typedef struct dfs_fuser dfs_fuser;
typedef struct dfs_disposable dfs_disposable;

/** Where a source sends its events: valid from the source's connect call until its
 *  disconnect call returns. Emitting through it later returns DFS_ERR_HANDLE. */
typedef struct dfs_dispatch dfs_dispatch;

/** Sends `event` (borrowed for the call) to the connection. Returns DFS_ERR_CALLBACK if
 *  a downstream effect or transform failed. Events sent after the connection was
 *  disposed are dropped (DFS_OK). */
DFS_API dfs_status dfs_dispatch_emit(dfs_dispatch *dispatch, const void *event);

/** Starts a source connection: keep `dispatch` and emit through it. Store anything you
 *  need to stop it in *connection. Return 0, or non-zero to refuse (connect fails). */
typedef int (*dfs_source_connect_fn)(dfs_dispatch *dispatch, void *ctx, void **connection);

/** Stops a source connection made by connect. After it returns, `dispatch` is invalid. */
typedef void (*dfs_source_disconnect_fn)(void *connection, void *ctx);

/** from(source): a fuser whose events of `type` come from a source written in C. The
 *  source is connected once per dfs_fuser_connect and disconnected on dispose. */
DFS_API dfs_status dfs_fuser_from(dfs_type *type, dfs_source_connect_fn connect,
                          dfs_source_disconnect_fn disconnect, void *ctx,
                          dfs_destroy_fn destroy, dfs_fuser **out);

/** fromAll(children): merges the events of children of type `type`. */
DFS_API dfs_status dfs_fuser_from_all(dfs_type *type, dfs_fuser *const *children, size_t count,
                              dfs_fuser **out);

/** extract(transform, child): turns each event of `child` into an event of `type`
 *  (ownership of *out as for dfs_transform_fn, with `type`'s release). */
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
 *  returned. */
DFS_API dfs_status dfs_fuser_connect(dfs_fuser *fuser, dfs_effect_fn effect, void *ctx,
                             dfs_destroy_fn destroy, dfs_disposable **out);

/** The event type of a fuser (borrowed). NULL if invalid. */
DFS_API dfs_type *dfs_fuser_type(dfs_fuser *fuser);

DFS_API dfs_status dfs_fuser_retain(dfs_fuser *fuser);
/** NULL is accepted and ignored. */
DFS_API dfs_status dfs_fuser_release(dfs_fuser *fuser);

/** Stops a connection: disconnects every source it made. Idempotent. Once it returns,
 *  the effect receives nothing more, even from sources emitting on other threads. */
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
 *  (strings by content); retain makes a deep copy. Static handle. */
DFS_API dfs_type *dfs_type_ffi_event(void);

/** Makes a function pointer with the signature `ret (*)(args[0], ..., args[count-1])`
 *  that, when called, packs its arguments into a dfs_ffi_event and emits it through
 *  `dispatch` (which must carry events of dfs_type_ffi_event()). `ret` is DFS_FFI_VOID
 *  or DFS_FFI_INT; an int function returns the dfs_status of the emission.
 *  *fn receives the function pointer: cast it to the real signature. The closure is
 *  freed when the connection of `dispatch` is disposed (after the source's disconnect
 *  returns, so unregister it there); calling it afterwards is undefined. A closure whose
 *  dispatch was disposed but is called before being freed drops the event.
 *  At most 32 arguments. */
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
 * can reorder them. Expected O(n) plus O(k log k) for k matched items.
 *
 * The result comes in one struct whose arrays live in one block: free it with
 * dfs_list_diff_free. Indices and counts are int32_t (lists hold fewer than 2^31 - 1
 * items). A pair array holds `count` pairs as 2 * count values: old, new, old, new...
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
    DFS_LIST_SCRIPT = 4,
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
    DFS_LIST_CHANGE = 4,
} dfs_list_step;

/** A diff. Every index array is ascending (pair arrays by their new index). */
typedef struct dfs_list_diff {
    int32_t old_count;
    int32_t new_count;
    /** 1 if a key occurred twice in one list outside the common prefix and suffix. */
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
 *  (called once per matched pair, only during this call, with `ctx`); else fingerprints
 *  if `contents` is given for both lists; else contents never change. `flags`: a
 *  combination of dfs_list_flags. On failure *out is zeroed (freeing it is allowed). */
DFS_API dfs_status dfs_list_diff_compute(const dfs_list_side *old_list, const dfs_list_side *new_list,
                                 dfs_list_same_fn same_content, void *ctx, unsigned int flags,
                                 dfs_list_diff *out);

/** Frees the arrays of a diff and zeroes it. NULL and zeroed diffs are accepted. */
DFS_API void dfs_list_diff_free(dfs_list_diff *diff);

/* intoList: a diffuser node that keeps a list view in step with a list value. The list is
 * a value of a dfs_type like any other (`const void *`): the node reads it through a
 * dfs_list_reader, diffs each new list against the last one it applied, and hands its
 * sink the diff and the new list together. It is the Swift core's intoList node, the one
 * Swift's Diffuser.intoList and Java's Diffuser.intoList are: same calls, same order. */

/** How an into_list node reads a list value. Each function receives the list (the value
 *  passed to the run, or the one the node kept from an earlier run) and the reader's
 *  ctx, and returns 0, or non-zero to abort the run (DFS_ERR_CALLBACK). Indices are
 *  0 ..< count.
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
 *  same along the common suffix, from the end; then the keys of the rest of the old
 *  list and of the new list, and for each new item matched, same_key and its content.
 *  Each key is asked at most twice. Then `type`'s retain of the new list, then the sink.
 *  The first run asks count(new) only. */
typedef struct dfs_list_reader {
    int (*count)(const void *list, size_t *count, void *ctx);
    int (*key)(const void *list, int32_t index, uint64_t *key, void *ctx);
    int (*same_key)(const void *list_a, int32_t index_a, const void *list_b, int32_t index_b, void *ctx);
    int (*same_content)(const void *old_list, int32_t old_index, const void *new_list, int32_t new_index,
                        void *ctx);
    int (*content)(const void *list, int32_t index, uint64_t *fingerprint, void *ctx);
} dfs_list_reader;

/** Applies a diff: `changes` goes from the list the sink applied last (the empty list on
 *  the first call) to `new_list`. `changes` and its arrays are borrowed for the call (do
 *  not free them; copy what you keep); `new_list` is the run's value, borrowed as an
 *  effect's is. Return 0, or non-zero to abort the run. */
typedef int (*dfs_list_sink_fn)(const dfs_list_diff *changes, const void *new_list, void *ctx);

/** intoList(reader, sink): a diffuser of list values of `type` that keeps the last list
 *  it applied (retained through `type`) and, on each run:
 *  - diffs it against the new list (the first run: from the empty list, every item an
 *    insert), with the parts `flags` asks for (dfs_list_flags, as in
 *    dfs_list_diff_compute);
 *  - calls sink(changes, new_list) on the first run, even for an empty list, and on
 *    every later run whose diff is not empty;
 *  - on a later run with an empty diff (same keys in the same order, same content), does
 *    not call the sink, but keeps the new list all the same, like every gate;
 *  - after the sink returned 0, keeps the new list.
 *  A failing callback of the reader or the sink aborts the run with DFS_ERR_CALLBACK
 *  (the first failure wins; nothing after it is called), and the node keeps the last
 *  list it applied, so the next run's diff starts from what the view shows: after a
 *  failed sink call, the next call gets changes from that same list. The same holds
 *  for a list longer than INT32_MAX - 1 items (DFS_ERR_ARGUMENT) and for a retain of
 *  `type` that returns NULL (DFS_ERR_MEMORY; the list is retained before the sink is
 *  called).
 *
 *  `reader` is copied; reader_ctx is passed to its functions and reader_destroy(reader_ctx)
 *  runs when the node is dropped; the same for the sink's triple. reader, reader->count,
 *  reader->key and sink must not be NULL (DFS_ERR_NULL); unknown flags: DFS_ERR_ARGUMENT.
 *  As every constructor, it calls both destroys if it fails. */
DFS_API dfs_status dfs_diffuser_into_list(dfs_type *type, const dfs_list_reader *reader, void *reader_ctx,
                                  dfs_destroy_fn reader_destroy, unsigned int flags, dfs_list_sink_fn sink,
                                  void *sink_ctx, dfs_destroy_fn sink_destroy, dfs_diffuser **out);

#ifdef __cplusplus
}
#endif

#endif /* DIFFUSER_H */
