/*
 * check.h — the tiny test harness of the C tests of libdiffuser.
 *
 * Every check prints one line ("ok" or "FAIL" with the place and the expression);
 * check_finish() prints "N passed, M failed" and gives the exit status.
 * Checks are made from the main thread only: threads collect counts, the main thread
 * checks them after joining.
 *
 * Also here: an effect log (a string of space-separated entries, compared exactly),
 * recorders (effect contexts that log what they see and count their destroy calls),
 * and the --valgrind switch that makes the stress loops smaller.
 */
#ifndef DFS_TEST_CHECK_H
#define DFS_TEST_CHECK_H

/* strdup and friends under a strict -std=c11. Include this header first. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "diffuser.h"

static int check_passed;
static int check_failed;
/** 1 when the program runs under valgrind (--valgrind): loops are made shorter. */
static int check_slow;

static inline void check_init(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--valgrind") == 0) check_slow = 1;
    }
    setvbuf(stdout, NULL, _IOLBF, 0);
}

/** Picks the iteration count: `fast` normally, `slow` under valgrind. */
static inline int check_scale(int fast, int slow) { return check_slow ? slow : fast; }

static inline void check_section(const char *name) { printf("\n# %s\n", name); }

static inline int check_report(int ok, const char *file, int line, const char *expr, const char *fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (ok) {
        check_passed++;
        printf("ok   %s\n", what);
    } else {
        check_failed++;
        printf("FAIL %s  [%s:%d: %s]\n", what, file, line, expr);
    }
    return ok;
}

/** CHECK(condition, "description %d", args...) */
#define CHECK(cond, ...) check_report((cond) ? 1 : 0, __FILE__, __LINE__, #cond, __VA_ARGS__)

/** Checks that an expression gives the expected dfs_status; on a mismatch, prints both
 *  names and the calling thread's last error. */
#define CHECK_STATUS(expr, expected, ...)                                                   \
    do {                                                                                    \
        int check_got_ = (int)(expr);                                                       \
        int check_want_ = (int)(expected);                                                  \
        if (!CHECK(check_got_ == check_want_, __VA_ARGS__)) {                               \
            printf("     got %s, expected %s; dfs_last_error: \"%s\"\n",                    \
                   dfs_status_name(check_got_), dfs_status_name(check_want_), dfs_last_error()); \
        }                                                                                   \
    } while (0)

#define CHECK_OK(expr, ...) CHECK_STATUS(expr, DFS_OK, __VA_ARGS__)

/** Checks two C strings for equality; prints both on a mismatch. */
#define CHECK_STR(actual, expected, ...)                                                    \
    do {                                                                                    \
        const char *check_a_ = (actual);                                                    \
        const char *check_e_ = (expected);                                                  \
        int check_same_ = check_a_ != NULL && check_e_ != NULL && strcmp(check_a_, check_e_) == 0; \
        if (!CHECK(check_same_, __VA_ARGS__)) {                                             \
            printf("     got      \"%s\"\n     expected \"%s\"\n", check_a_ ? check_a_ : "(null)", \
                   check_e_ ? check_e_ : "(null)");                                         \
        }                                                                                   \
    } while (0)

/** Checks two integers for equality; prints both on a mismatch. */
#define CHECK_INT(actual, expected, ...)                                                    \
    do {                                                                                    \
        long long check_a_ = (long long)(actual);                                           \
        long long check_e_ = (long long)(expected);                                         \
        if (!CHECK(check_a_ == check_e_, __VA_ARGS__)) {                                    \
            printf("     got %lld, expected %lld\n", check_a_, check_e_);                    \
        }                                                                                   \
    } while (0)

/** Checks that dfs_last_error() contains `needle` (a meaningful message). */
#define CHECK_ERROR_HAS(needle, ...)                                                        \
    do {                                                                                    \
        const char *check_msg_ = dfs_last_error();                                          \
        if (!CHECK(check_msg_ != NULL && check_msg_[0] != '\0' && strstr(check_msg_, (needle)) != NULL, \
                   __VA_ARGS__)) {                                                          \
            printf("     dfs_last_error: \"%s\", expected it to contain \"%s\"\n",          \
                   check_msg_ ? check_msg_ : "(null)", (needle));                           \
        }                                                                                   \
    } while (0)

static inline int check_finish(void) {
    printf("\n%d passed, %d failed\n", check_passed, check_failed);
    return check_failed == 0 ? 0 : 1;
}

/* ------------------------------------------------------------------------------------
 * Effect log
 * ------------------------------------------------------------------------------------ */

typedef struct test_log {
    char text[8192];
} test_log;

static inline void log_clear(test_log *log) { log->text[0] = '\0'; }

static inline void log_add(test_log *log, const char *fmt, ...) {
    size_t used = strlen(log->text);
    if (used > 0 && used + 1 < sizeof log->text) {
        log->text[used++] = ' ';
        log->text[used] = '\0';
    }
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(log->text + used, sizeof log->text - used, fmt, ap);
    va_end(ap);
}

/** Checks the log's content and clears it. */
#define CHECK_LOG(log, expected, ...)                                                       \
    do {                                                                                    \
        CHECK_STR((log)->text, (expected), __VA_ARGS__);                                    \
        log_clear(log);                                                                     \
    } while (0)

/* ------------------------------------------------------------------------------------
 * Recorders: effect contexts
 * ------------------------------------------------------------------------------------ */

/* ------------------------------------------------------------------------------------
 * Boxes: a user value type with reference counts, to prove every value the core
 * retains is released. A box is freed when its count reaches 0; box_live counts the
 * boxes not yet freed (so valgrind also sees any use after the core released one). The
 * counts are atomic: a loop makes and drops boxes on its executors' threads.
 * ------------------------------------------------------------------------------------ */

typedef struct box {
    int refs;
    long value;
} box;

static int box_live;
static int box_retains;
static int box_releases;

static inline box *box_new(long value) {
    box *b = malloc(sizeof *b);
    b->refs = 1;
    b->value = value;
    __atomic_add_fetch(&box_live, 1, __ATOMIC_RELAXED);
    return b;
}

static inline void box_unref(box *b) {
    if (__atomic_sub_fetch(&b->refs, 1, __ATOMIC_ACQ_REL) == 0) {
        free(b);
        __atomic_sub_fetch(&box_live, 1, __ATOMIC_RELAXED);
    }
}

/** The context of a box type: counts, and an optional injected equality failure. */
typedef struct box_type_ctx {
    int destroyed;
    int equal_calls;
    test_log *log;      /* if set, equality calls are logged as "eq:a,b" */
    int fail_enabled;   /* equal returns -1 when either value is fail_on */
    long fail_on;
    const char *fail_message;
} box_type_ctx;

static inline int box_equal(const void *a, const void *b, void *ctx) {
    box_type_ctx *t = ctx;
    const box *x = a, *y = b;
    t->equal_calls++;
    if (t->log) log_add(t->log, "eq:%ld,%ld", x ? x->value : -1, y ? y->value : -1);
    if (t->fail_enabled && ((x && x->value == t->fail_on) || (y && y->value == t->fail_on))) {
        if (t->fail_message) dfs_set_error(t->fail_message);
        return -1;
    }
    if (x == y) return 1;
    if (x == NULL || y == NULL) return 0;
    return x->value == y->value;
}

static inline const void *box_retain(const void *value, void *ctx) {
    (void)ctx;
    __atomic_add_fetch(&((box *)value)->refs, 1, __ATOMIC_RELAXED);
    __atomic_add_fetch(&box_retains, 1, __ATOMIC_RELAXED);
    return value;
}

static inline void box_release(const void *value, void *ctx) {
    (void)ctx;
    __atomic_add_fetch(&box_releases, 1, __ATOMIC_RELAXED);
    box_unref((box *)value);
}

static inline void box_type_destroy(void *ctx) { ((box_type_ctx *)ctx)->destroyed++; }

/** Makes the "box" type (or another name) over a context. */
static inline dfs_type *box_type_new(const char *name, box_type_ctx *ctx) {
    dfs_type *type = NULL;
    dfs_status status = dfs_type_new(name, box_equal, box_retain, box_release, ctx, box_type_destroy, &type);
    if (status != DFS_OK) {
        printf("FATAL dfs_type_new failed: %s\n", dfs_last_error());
        exit(2);
    }
    return type;
}

/** Clears `ctx`, logs its equality calls to `log` (NULL: not logged) and makes a "box"
 *  type over it: the start of most tests with boxes. */
static inline dfs_type *box_type_fresh(box_type_ctx *ctx, test_log *log) {
    memset(ctx, 0, sizeof *ctx);
    ctx->log = log;
    return box_type_new("box", ctx);
}

/** Reads a box's value into the long at `ctx` (a dfs_loop_model reader). */
static inline int box_read(const void *value, void *ctx) {
    *(long *)ctx = ((const box *)value)->value;
    return 0;
}

/** The value of a loop's model, a box; -1 if the model cannot be read. */
static inline long box_model_of(dfs_loop *loop) {
    long value = -1;
    dfs_loop_model(loop, box_read, &value);
    return value;
}

enum { REC_INT, REC_STR, REC_BOX };

typedef struct recorder {
    const char *name;   /* prefix of the log entries */
    test_log *log;
    int kind;           /* REC_INT: integers in pointers; REC_STR: C strings; REC_BOX: boxes */
    int calls;
    int destroyed;      /* how many times destroy(ctx) ran: must end at exactly 1 */
    /* Failure injection: the effect fails (returns fail_code) while fail_times > 0 and
     * the value matches fail_on (any value if fail_any). */
    int fail_times;
    int fail_any;
    long fail_on_int;
    const char *fail_on_str;
    int fail_code;
    const char *fail_message; /* given to dfs_set_error before failing, if not NULL */
} recorder;

static inline recorder rec_make(const char *name, test_log *log, int kind) {
    recorder r;
    memset(&r, 0, sizeof r);
    r.name = name;
    r.log = log;
    r.kind = kind;
    r.fail_code = 1;
    return r;
}

static inline int rec_should_fail(recorder *r, const void *value) {
    if (r->fail_times <= 0) return 0;
    int match;
    if (r->fail_any) {
        match = 1;
    } else if (r->kind == REC_INT) {
        match = (long)(intptr_t)value == r->fail_on_int;
    } else if (r->kind == REC_BOX) {
        match = value != NULL && ((const box *)value)->value == r->fail_on_int;
    } else {
        match = value != NULL && r->fail_on_str != NULL && strcmp(value, r->fail_on_str) == 0;
    }
    if (!match) return 0;
    r->fail_times--;
    return 1;
}

/** The effect of a recorder: logs "name:value"; "name:value!" when it fails. */
static inline int rec_effect(const void *value, void *ctx) {
    recorder *r = ctx;
    r->calls++;
    int fail = rec_should_fail(r, value);
    const char *mark = fail ? "!" : "";
    if (r->kind == REC_INT) {
        log_add(r->log, "%s:%ld%s", r->name, (long)(intptr_t)value, mark);
    } else if (r->kind == REC_BOX) {
        log_add(r->log, "%s:%ld%s", r->name, value ? ((const box *)value)->value : -1L, mark);
    } else {
        log_add(r->log, "%s:%s%s", r->name, value ? (const char *)value : "(null)", mark);
    }
    if (fail) {
        if (r->fail_message) dfs_set_error(r->fail_message);
        return r->fail_code;
    }
    return 0;
}

static inline void rec_destroy(void *ctx) { ((recorder *)ctx)->destroyed++; }

/** A destroy function for contexts that are just an int counter. */
static inline void count_destroy(void *ctx) { (*(int *)ctx)++; }

/** Integers and truth values travel as pointers of dfs_type_pointer(). */
#define IV(x) ((const void *)(intptr_t)(x))

#endif
