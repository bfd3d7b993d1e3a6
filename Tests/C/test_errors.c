/*
 * test_errors.c — misuse returns an error, never crashes: NULL, released, wrong-kind
 * and forged handles, type mismatches, NULL out parameters and children arrays.
 * Every constructor hands ownership of ctx to the call: destroy(ctx) runs exactly once,
 * also when the constructor fails. dfs_last_error() explains each failure.
 *
 * One program because it is one promise of the header (misuse returns an error, never
 * crashes) and each section walks the API for one kind of misuse, on the same no-op
 * callbacks and make_diffuser / make_fuser fixtures at the top.
 */
#include "check.h"

static int noop_effect(const void *value, void *ctx) {
    (void)value;
    (void)ctx;
    return 0;
}

static int noop_did_change(const void *a, const void *b, void *ctx) {
    (void)ctx;
    return a != b;
}

static int noop_transform(const void *value, const void **out, void *ctx) {
    (void)ctx;
    *out = value;
    return 0;
}

static int noop_connect(dfs_dispatch *dispatch, void *ctx, void **connection) {
    (void)dispatch;
    (void)ctx;
    *connection = NULL;
    return 0;
}

#define GARBAGE ((void *)(uintptr_t)0x5a5a5a5a)

/* A value that is not a valid handle of any kind (forged). */
static void *const forged[] = {
    (void *)(uintptr_t)0xdeadbeef,
    (void *)(uintptr_t)0x0000123400000001ull, /* slot 0 with a wrong generation */
    (void *)(uintptr_t)0x7fffffff,
    (void *)(uintptr_t)UINTPTR_MAX,
    (void *)(uintptr_t)8,
};
#define FORGED_COUNT (sizeof forged / sizeof forged[0])

static dfs_diffuser *make_diffuser(void) {
    dfs_diffuser *d = NULL;
    if (dfs_diffuser_into_always(dfs_type_pointer(), noop_effect, NULL, NULL, &d) != DFS_OK) exit(2);
    return d;
}

static dfs_fuser *make_fuser(dfs_type *type) {
    dfs_fuser *f = NULL;
    if (dfs_fuser_from(type, noop_connect, NULL, NULL, NULL, &f) != DFS_OK) exit(2);
    return f;
}

/* ------------------------------------------------------------------------------------ */

static void test_null_handles(void) {
    check_section("NULL handles and NULL required arguments");
    int destroyed = 0;
    dfs_diffuser *out = GARBAGE;
    dfs_diffuser *good = make_diffuser();

    CHECK_STATUS(dfs_diffuser_run(NULL, NULL), DFS_ERR_NULL, "run(NULL)");
    CHECK_ERROR_HAS("NULL", "message says NULL (\"%s\")", dfs_last_error());
    CHECK_ERROR_HAS("diffuser", "message names the argument");

    CHECK_STATUS(dfs_diffuser_into_always(NULL, noop_effect, &destroyed, count_destroy, &out), DFS_ERR_NULL, "into_always(type NULL)");
    CHECK(out == NULL, "out is set to NULL on failure");
    CHECK_INT(destroyed, 1, "destroy(ctx) called once when the constructor fails");
    CHECK_ERROR_HAS("type", "message names the type (\"%s\")", dfs_last_error());

    destroyed = 0;
    out = GARBAGE;
    CHECK_STATUS(dfs_diffuser_into(dfs_type_pointer(), NULL, &destroyed, count_destroy, &out), DFS_ERR_NULL, "into(effect NULL)");
    CHECK(out == NULL, "out is NULL");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_ERROR_HAS("effect", "message names the effect (\"%s\")", dfs_last_error());

    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_into_once(NULL, noop_effect, &destroyed, count_destroy, &out), DFS_ERR_NULL, "into_once(type NULL)");
    CHECK_INT(destroyed, 1, "destroy once");

    destroyed = 0;
    out = GARBAGE;
    CHECK_STATUS(dfs_diffuser_into_when(noop_did_change, &destroyed, count_destroy, NULL, &out), DFS_ERR_NULL, "into_when(child NULL)");
    CHECK(out == NULL, "out is NULL");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_ERROR_HAS("child", "message names the child (\"%s\")", dfs_last_error());

    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_into_when(NULL, &destroyed, count_destroy, good, &out), DFS_ERR_NULL, "into_when(did_change NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_ERROR_HAS("did_change", "message names did_change (\"%s\")", dfs_last_error());

    int destroyed2 = 0;
    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_into_when_effect(dfs_type_pointer(), NULL, &destroyed, count_destroy, noop_effect,
                                               &destroyed2, count_destroy, &out), DFS_ERR_NULL, "into_when_effect(did_change NULL)");
    CHECK(destroyed == 1 && destroyed2 == 1, "both contexts destroyed once (%d, %d)", destroyed, destroyed2);
    destroyed = destroyed2 = 0;
    CHECK_STATUS(dfs_diffuser_into_when_effect(dfs_type_pointer(), noop_did_change, &destroyed, count_destroy, NULL,
                                               &destroyed2, count_destroy, &out), DFS_ERR_NULL, "into_when_effect(effect NULL)");
    CHECK(destroyed == 1 && destroyed2 == 1, "both contexts destroyed once (%d, %d)", destroyed, destroyed2);
    destroyed = destroyed2 = 0;
    CHECK_STATUS(dfs_diffuser_into_when_effect(NULL, noop_did_change, &destroyed, count_destroy, noop_effect,
                                               &destroyed2, count_destroy, &out), DFS_ERR_NULL, "into_when_effect(type NULL)");
    CHECK(destroyed == 1 && destroyed2 == 1, "both contexts destroyed once (%d, %d)", destroyed, destroyed2);

    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_map(dfs_type_pointer(), noop_transform, &destroyed, count_destroy, NULL, &out), DFS_ERR_NULL, "map(child NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_map(dfs_type_pointer(), NULL, &destroyed, count_destroy, good, &out), DFS_ERR_NULL, "map(transform NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_ERROR_HAS("transform", "message names the transform (\"%s\")", dfs_last_error());
    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_map(NULL, noop_transform, &destroyed, count_destroy, good, &out), DFS_ERR_NULL, "map(type NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_map_borrowed(dfs_type_pointer(), noop_transform, &destroyed, count_destroy, NULL, &out),
                 DFS_ERR_NULL, "map_borrowed(child NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_map_borrowed(dfs_type_pointer(), NULL, &destroyed, count_destroy, good, &out),
                 DFS_ERR_NULL, "map_borrowed(transform NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_map_borrowed(NULL, noop_transform, &destroyed, count_destroy, good, &out), DFS_ERR_NULL,
                 "map_borrowed(type NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_STATUS(dfs_diffuser_map_field(dfs_type_pointer(), 0, sizeof(void *), NULL, &out), DFS_ERR_NULL,
                 "map_field(child NULL)");
    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_pointer(), &good, (size_t)1 << 40, &out), DFS_ERR_ARGUMENT,
                 "into_all with a count out of range");
    CHECK_STATUS(dfs_diffuser_into_always_all(dfs_type_pointer(), &good, (size_t)1 << 40, &out), DFS_ERR_ARGUMENT,
                 "into_always_all with a count out of range");

    CHECK_STATUS(dfs_diffuser_invert(NULL, &out), DFS_ERR_NULL, "invert(NULL)");
    CHECK_STATUS(dfs_diffuser_into_all(NULL, &good, 1, &out), DFS_ERR_NULL, "into_all(type NULL)");
    CHECK_STATUS(dfs_diffuser_into_always_all(NULL, &good, 1, &out), DFS_ERR_NULL, "into_always_all(type NULL)");

    CHECK(dfs_diffuser_type(NULL) == NULL, "dfs_diffuser_type(NULL) is NULL");
    CHECK(dfs_fuser_type(NULL) == NULL, "dfs_fuser_type(NULL) is NULL");
    CHECK_STATUS(dfs_diffuser_retain(NULL), DFS_ERR_NULL, "dfs_diffuser_retain(NULL)");
    CHECK_STATUS(dfs_type_retain(NULL), DFS_ERR_NULL, "dfs_type_retain(NULL)");
    CHECK_STATUS(dfs_fuser_retain(NULL), DFS_ERR_NULL, "dfs_fuser_retain(NULL)");
    CHECK_OK(dfs_diffuser_release(NULL), "dfs_diffuser_release(NULL) is accepted");
    CHECK_OK(dfs_type_release(NULL), "dfs_type_release(NULL) is accepted");
    CHECK_OK(dfs_fuser_release(NULL), "dfs_fuser_release(NULL) is accepted");
    CHECK_OK(dfs_disposable_release(NULL), "dfs_disposable_release(NULL) is accepted");
    CHECK_STATUS(dfs_disposable_dispose(NULL), DFS_ERR_NULL, "dfs_disposable_dispose(NULL)");
    CHECK_STATUS(dfs_dispatch_emit(NULL, NULL), DFS_ERR_NULL, "dfs_dispatch_emit(NULL)");
    CHECK_ERROR_HAS("dispatch", "message names the dispatch (\"%s\")", dfs_last_error());

    /* Fuser constructors. */
    dfs_fuser *fout = GARBAGE;
    destroyed = 0;
    CHECK_STATUS(dfs_fuser_from(NULL, noop_connect, NULL, &destroyed, count_destroy, &fout), DFS_ERR_NULL, "fuser_from(type NULL)");
    CHECK(fout == NULL, "out is NULL");
    CHECK_INT(destroyed, 1, "destroy once");
    destroyed = 0;
    CHECK_STATUS(dfs_fuser_from(dfs_type_pointer(), NULL, NULL, &destroyed, count_destroy, &fout), DFS_ERR_NULL, "fuser_from(connect NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_ERROR_HAS("connect", "message names connect (\"%s\")", dfs_last_error());

    dfs_fuser *fgood = make_fuser(dfs_type_pointer());
    destroyed = 0;
    CHECK_STATUS(dfs_fuser_extract(dfs_type_pointer(), noop_transform, &destroyed, count_destroy, NULL, &fout), DFS_ERR_NULL, "extract(child NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    destroyed = 0;
    CHECK_STATUS(dfs_fuser_extract(dfs_type_pointer(), NULL, &destroyed, count_destroy, fgood, &fout), DFS_ERR_NULL, "extract(transform NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    destroyed = 0;
    CHECK_STATUS(dfs_fuser_extract_unless_null(NULL, noop_transform, &destroyed, count_destroy, fgood, &fout), DFS_ERR_NULL, "extract_unless_null(type NULL)");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_STATUS(dfs_fuser_extract_constant(dfs_type_cstring(), "c", NULL, &fout), DFS_ERR_NULL, "extract_constant(child NULL)");
    CHECK_STATUS(dfs_fuser_extract_constant(NULL, "c", fgood, &fout), DFS_ERR_NULL, "extract_constant(type NULL)");
    CHECK_STATUS(dfs_fuser_from_all(NULL, &fgood, 1, &fout), DFS_ERR_NULL, "from_all(type NULL)");

    dfs_disposable *dout = GARBAGE;
    destroyed = 0;
    CHECK_STATUS(dfs_fuser_connect(NULL, noop_effect, &destroyed, count_destroy, &dout), DFS_ERR_NULL, "connect(fuser NULL)");
    CHECK(dout == NULL, "out is NULL");
    CHECK_INT(destroyed, 1, "destroy once");
    destroyed = 0;
    CHECK_STATUS(dfs_fuser_connect(fgood, NULL, &destroyed, count_destroy, &dout), DFS_ERR_NULL, "connect(effect NULL)");
    CHECK_INT(destroyed, 1, "destroy once");

    void (*fn)(void) = (void (*)(void))(uintptr_t)0x5a5a5a5a;
    static const dfs_ffi_type args[] = {DFS_FFI_INT32};
    CHECK_STATUS(dfs_closure_new(NULL, DFS_FFI_VOID, args, 1, &fn), DFS_ERR_NULL, "closure_new(dispatch NULL)");
    CHECK(fn == NULL, "*fn is NULL on failure");

    dfs_type *tout = GARBAGE;
    destroyed = 0;
    CHECK_STATUS(dfs_type_new("t", NULL, NULL, NULL, &destroyed, count_destroy, NULL), DFS_ERR_NULL, "type_new(out NULL)");
    CHECK_INT(destroyed, 1, "type ctx destroyed once when type_new fails");
    CHECK_ERROR_HAS("out", "message names out (\"%s\")", dfs_last_error());
    (void)tout;

    dfs_fuser_release(fgood);
    dfs_diffuser_release(good);
}

/* ------------------------------------------------------------------------------------ */

static void test_null_out(void) {
    check_section("NULL out parameters");
    int destroyed = 0, d2 = 0;
    dfs_diffuser *good = make_diffuser();
    dfs_fuser *fgood = make_fuser(dfs_type_pointer());

#define EXPECT_NULL_OUT(call, what)                                                         \
    do {                                                                                    \
        destroyed = 0;                                                                      \
        CHECK_STATUS(call, DFS_ERR_NULL, "%s with out NULL", what);                         \
        CHECK_INT(destroyed, 1, "%s: destroy(ctx) once", what);                             \
        CHECK_ERROR_HAS("out", "%s: message names out", what);                              \
    } while (0)

    EXPECT_NULL_OUT(dfs_diffuser_into_always(dfs_type_pointer(), noop_effect, &destroyed, count_destroy, NULL), "into_always");
    EXPECT_NULL_OUT(dfs_diffuser_into(dfs_type_pointer(), noop_effect, &destroyed, count_destroy, NULL), "into");
    EXPECT_NULL_OUT(dfs_diffuser_into_once(dfs_type_pointer(), noop_effect, &destroyed, count_destroy, NULL), "into_once");
    EXPECT_NULL_OUT(dfs_diffuser_into_when(noop_did_change, &destroyed, count_destroy, good, NULL), "into_when");
    d2 = 0;
    EXPECT_NULL_OUT(dfs_diffuser_into_when_effect(dfs_type_pointer(), noop_did_change, &destroyed, count_destroy,
                                                  noop_effect, &d2, count_destroy, NULL), "into_when_effect");
    CHECK_INT(d2, 1, "into_when_effect: effect ctx destroyed once");
    EXPECT_NULL_OUT(dfs_diffuser_map(dfs_type_pointer(), noop_transform, &destroyed, count_destroy, good, NULL), "map");
    EXPECT_NULL_OUT(dfs_fuser_from(dfs_type_pointer(), noop_connect, NULL, &destroyed, count_destroy, NULL), "fuser_from");
    EXPECT_NULL_OUT(dfs_fuser_extract(dfs_type_pointer(), noop_transform, &destroyed, count_destroy, fgood, NULL), "extract");
    EXPECT_NULL_OUT(dfs_fuser_extract_unless_null(dfs_type_pointer(), noop_transform, &destroyed, count_destroy, fgood, NULL), "extract_unless_null");
    EXPECT_NULL_OUT(dfs_fuser_connect(fgood, noop_effect, &destroyed, count_destroy, NULL), "connect");
    EXPECT_NULL_OUT(dfs_type_new("t", NULL, NULL, NULL, &destroyed, count_destroy, NULL), "type_new");
#undef EXPECT_NULL_OUT

    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_pointer(), &good, 1, NULL), DFS_ERR_NULL, "into_all with out NULL");
    CHECK_STATUS(dfs_diffuser_into_always_all(dfs_type_pointer(), &good, 1, NULL), DFS_ERR_NULL, "into_always_all with out NULL");
    CHECK_STATUS(dfs_diffuser_invert(good, NULL), DFS_ERR_NULL, "invert with out NULL");
    CHECK_STATUS(dfs_fuser_from_all(dfs_type_pointer(), &fgood, 1, NULL), DFS_ERR_NULL, "from_all with out NULL");
    CHECK_STATUS(dfs_fuser_extract_constant(dfs_type_pointer(), NULL, fgood, NULL), DFS_ERR_NULL, "extract_constant with out NULL");
    CHECK_STATUS(dfs_closure_new(NULL, DFS_FFI_VOID, NULL, 0, NULL), DFS_ERR_NULL, "closure_new with fn NULL");

    dfs_fuser_release(fgood);
    dfs_diffuser_release(good);
}

/* ------------------------------------------------------------------------------------ */

static void test_children_arrays(void) {
    check_section("children arrays: count with NULL, NULL entries, absurd counts");
    dfs_diffuser *good = make_diffuser(), *out = GARBAGE;
    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_pointer(), NULL, 3, &out), DFS_ERR_NULL, "into_all(children NULL, count 3)");
    CHECK(out == NULL, "out is NULL");
    CHECK_ERROR_HAS("children", "message names the children (\"%s\")", dfs_last_error());
    CHECK_STATUS(dfs_diffuser_into_always_all(dfs_type_pointer(), NULL, 1, &out), DFS_ERR_NULL, "into_always_all(children NULL, count 1)");

    dfs_diffuser *with_null[3] = {good, NULL, good};
    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_pointer(), with_null, 3, &out), DFS_ERR_NULL, "into_all with a NULL entry");
    CHECK_ERROR_HAS("children[1]", "message names the entry (\"%s\")", dfs_last_error());

    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_pointer(), &good, (size_t)-1, &out), DFS_ERR_ARGUMENT, "into_all with count SIZE_MAX");
    CHECK_ERROR_HAS("count 18446744073709551615 is out of range (at most 16777215)",
                    "names the count as given and the limit (\"%s\")", dfs_last_error());
    CHECK_STATUS(dfs_diffuser_into_always_all(dfs_type_pointer(), &good, (size_t)1 << 40, &out), DFS_ERR_ARGUMENT, "into_always_all with count 2^40");
    /* The count is checked before the array, as in a loop's config: NULL is not read. */
    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_pointer(), NULL, (size_t)1 << 24, &out), DFS_ERR_ARGUMENT,
                 "into_all(children NULL, count 2^24)");
    CHECK_ERROR_HAS("count 16777216 is out of range", "names the count (\"%s\")", dfs_last_error());

    dfs_fuser *fgood = make_fuser(dfs_type_pointer()), *fout = GARBAGE;
    CHECK_STATUS(dfs_fuser_from_all(dfs_type_pointer(), NULL, 2, &fout), DFS_ERR_NULL, "from_all(children NULL, count 2)");
    CHECK(fout == NULL, "out is NULL");
    dfs_fuser *fwith_null[2] = {fgood, NULL};
    CHECK_STATUS(dfs_fuser_from_all(dfs_type_pointer(), fwith_null, 2, &fout), DFS_ERR_NULL, "from_all with a NULL entry");
    CHECK_STATUS(dfs_fuser_from_all(dfs_type_pointer(), &fgood, (size_t)-1, &fout), DFS_ERR_ARGUMENT, "from_all with count SIZE_MAX");
    CHECK_STATUS(dfs_fuser_from_all(dfs_type_pointer(), NULL, (size_t)1 << 24, &fout), DFS_ERR_ARGUMENT,
                 "from_all(children NULL, count 2^24)");
    CHECK_OK(dfs_fuser_from_all(dfs_type_pointer(), NULL, 0, &fout), "from_all with no children");
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_connect(fout, noop_effect, NULL, NULL, &c), "connect an empty from_all");
    CHECK_OK(dfs_disposable_dispose(c), "dispose it");
    dfs_disposable_release(c);
    dfs_fuser_release(fout);
    dfs_fuser_release(fgood);
    dfs_diffuser_release(good);
}

/* ------------------------------------------------------------------------------------ */

static void test_released_handles(void) {
    check_section("released handles");
    int destroyed = 0;
    dfs_diffuser *d = make_diffuser(), *out = GARBAGE;
    CHECK_OK(dfs_diffuser_release(d), "release");
    CHECK_STATUS(dfs_diffuser_run(d, NULL), DFS_ERR_HANDLE, "run a released diffuser");
    CHECK_ERROR_HAS("released", "message says released (\"%s\")", dfs_last_error());
    CHECK_STATUS(dfs_diffuser_release(d), DFS_ERR_HANDLE, "release it twice");
    CHECK_STATUS(dfs_diffuser_retain(d), DFS_ERR_HANDLE, "retain it");
    CHECK(dfs_diffuser_type(d) == NULL, "its type is NULL");
    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_pointer(), &d, 1, &out), DFS_ERR_HANDLE, "compose it in into_all");
    CHECK(out == NULL, "out is NULL");
    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_map(dfs_type_pointer(), noop_transform, &destroyed, count_destroy, d, &out), DFS_ERR_HANDLE, "compose it in map");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_STATUS(dfs_diffuser_invert(d, &out), DFS_ERR_HANDLE, "invert it");
    destroyed = 0;
    CHECK_STATUS(dfs_diffuser_into_when(noop_did_change, &destroyed, count_destroy, d, &out), DFS_ERR_HANDLE, "into_when on it");
    CHECK_INT(destroyed, 1, "destroy once");

    /* A new handle may reuse the slot: the old one stays invalid. */
    dfs_diffuser *d2 = make_diffuser();
    CHECK_STATUS(dfs_diffuser_run(d, NULL), DFS_ERR_HANDLE, "the old handle is still invalid after a new diffuser was made");
    CHECK_OK(dfs_diffuser_run(d2, NULL), "the new handle works");
    CHECK(d != d2, "handles are not reused verbatim");
    dfs_diffuser_release(d2);

    dfs_type *t = NULL;
    destroyed = 0;
    CHECK_OK(dfs_type_new("gone", NULL, NULL, NULL, NULL, NULL, &t), "type");
    dfs_type_release(t);
    CHECK_STATUS(dfs_diffuser_into(t, noop_effect, &destroyed, count_destroy, &out), DFS_ERR_HANDLE, "into(released type)");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_ERROR_HAS("dfs_type", "message names the kind (\"%s\")", dfs_last_error());
    CHECK_STATUS(dfs_type_retain(t), DFS_ERR_HANDLE, "retain a released type");
    CHECK_STATUS(dfs_type_release(t), DFS_ERR_HANDLE, "release a released type");

    dfs_fuser *f = make_fuser(dfs_type_pointer()), *fout = GARBAGE;
    dfs_fuser_release(f);
    dfs_disposable *c = GARBAGE;
    destroyed = 0;
    CHECK_STATUS(dfs_fuser_connect(f, noop_effect, &destroyed, count_destroy, &c), DFS_ERR_HANDLE, "connect a released fuser");
    CHECK(c == NULL, "out is NULL");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_STATUS(dfs_fuser_from_all(dfs_type_pointer(), &f, 1, &fout), DFS_ERR_HANDLE, "from_all with a released fuser");
    CHECK_STATUS(dfs_fuser_extract_constant(dfs_type_pointer(), NULL, f, &fout), DFS_ERR_HANDLE, "extract_constant of a released fuser");
    CHECK_STATUS(dfs_fuser_release(f), DFS_ERR_HANDLE, "release a released fuser");
    CHECK(dfs_fuser_type(f) == NULL, "type of a released fuser is NULL");

    f = make_fuser(dfs_type_pointer());
    CHECK_OK(dfs_fuser_connect(f, noop_effect, NULL, NULL, &c), "connect");
    CHECK_OK(dfs_disposable_release(c), "release the disposable without dispose");
    CHECK_STATUS(dfs_disposable_dispose(c), DFS_ERR_HANDLE, "dispose a released disposable");
    CHECK_STATUS(dfs_disposable_release(c), DFS_ERR_HANDLE, "release a released disposable");
    dfs_fuser_release(f);
}

/* ------------------------------------------------------------------------------------ */

static void test_wrong_kind(void) {
    check_section("wrong-kind handles");
    dfs_diffuser *d = make_diffuser(), *out = GARBAGE;
    dfs_fuser *f = make_fuser(dfs_type_pointer()), *fout = GARBAGE;
    dfs_disposable *c = NULL;
    CHECK_OK(dfs_fuser_connect(f, noop_effect, NULL, NULL, &c), "connect");
    dfs_type *t = NULL;
    CHECK_OK(dfs_type_new("kind", NULL, NULL, NULL, NULL, NULL, &t), "type");

    CHECK_STATUS(dfs_diffuser_run((dfs_diffuser *)f, NULL), DFS_ERR_HANDLE, "a fuser passed as a diffuser");
    CHECK_ERROR_HAS("dfs_fuser", "message says it is a dfs_fuser (\"%s\")", dfs_last_error());
    CHECK_ERROR_HAS("dfs_diffuser", "and that a dfs_diffuser was expected");
    CHECK_STATUS(dfs_diffuser_release((dfs_diffuser *)f), DFS_ERR_HANDLE, "releasing a fuser as a diffuser fails");
    CHECK(dfs_fuser_type(f) == dfs_type_pointer(), "the fuser is untouched");
    CHECK_STATUS(dfs_diffuser_run((dfs_diffuser *)t, NULL), DFS_ERR_HANDLE, "a type passed as a diffuser");
    CHECK_STATUS(dfs_diffuser_run((dfs_diffuser *)c, NULL), DFS_ERR_HANDLE, "a disposable passed as a diffuser");
    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_pointer(), (dfs_diffuser **)&f, 1, &out), DFS_ERR_HANDLE, "a fuser as a child of into_all");
    CHECK_STATUS(dfs_diffuser_into((dfs_type *)d, noop_effect, NULL, NULL, &out),
                 DFS_ERR_HANDLE, "a diffuser passed as a type");
    CHECK_ERROR_HAS("dfs_diffuser", "message says it is a dfs_diffuser (\"%s\")", dfs_last_error());
    CHECK_STATUS(dfs_type_release((dfs_type *)d), DFS_ERR_HANDLE, "releasing a diffuser as a type fails");
    dfs_disposable *c_bad = GARBAGE;
    CHECK_STATUS(dfs_fuser_connect((dfs_fuser *)d, noop_effect, NULL, NULL, &c_bad), DFS_ERR_HANDLE, "a diffuser passed as a fuser");
    CHECK(c_bad == NULL, "out is NULL");
    CHECK_STATUS(dfs_fuser_from_all(dfs_type_pointer(), (dfs_fuser **)&d, 1, &fout), DFS_ERR_HANDLE, "a diffuser in from_all");
    CHECK_STATUS(dfs_disposable_dispose((dfs_disposable *)f), DFS_ERR_HANDLE, "a fuser passed as a disposable");
    CHECK_STATUS(dfs_dispatch_emit((dfs_dispatch *)d, NULL), DFS_ERR_HANDLE, "a diffuser passed as a dispatch");
    void (*fn)(void) = NULL;
    CHECK_STATUS(dfs_closure_new((dfs_dispatch *)f, DFS_FFI_VOID, NULL, 0, &fn), DFS_ERR_HANDLE, "a fuser passed as a dispatch to closure_new");
    CHECK_STATUS(dfs_fuser_release((dfs_fuser *)t), DFS_ERR_HANDLE, "releasing a type as a fuser fails");
    CHECK_OK(dfs_diffuser_run(d, NULL), "the diffuser is untouched");

    CHECK_OK(dfs_disposable_dispose(c), "the disposable is untouched: dispose");
    dfs_disposable_release(c);

    dfs_type_release(t);
    dfs_fuser_release(f);
    dfs_diffuser_release(d);
}

static void test_forged(void) {
    check_section("forged handle values");
    dfs_diffuser *keep = make_diffuser(); /* so that slot 0 is live */
    for (size_t i = 0; i < FORGED_COUNT; i++) {
        void *h = forged[i];
        dfs_diffuser *out = GARBAGE;
        CHECK_STATUS(dfs_diffuser_run((dfs_diffuser *)h, NULL), DFS_ERR_HANDLE, "run(%p)", h);
        CHECK_ERROR_HAS("not a live", "message: \"%s\"", dfs_last_error());
        CHECK_STATUS(dfs_diffuser_release((dfs_diffuser *)h), DFS_ERR_HANDLE, "dfs_diffuser_release(%p)", h);
        CHECK_STATUS(dfs_diffuser_retain((dfs_diffuser *)h), DFS_ERR_HANDLE, "dfs_diffuser_retain(%p)", h);
        CHECK_STATUS(dfs_type_release((dfs_type *)h), DFS_ERR_HANDLE, "dfs_type_release(%p)", h);
        CHECK_STATUS(dfs_fuser_release((dfs_fuser *)h), DFS_ERR_HANDLE, "dfs_fuser_release(%p)", h);
        CHECK_STATUS(dfs_disposable_dispose((dfs_disposable *)h), DFS_ERR_HANDLE, "dfs_disposable_dispose(%p)", h);
        CHECK_STATUS(dfs_disposable_release((dfs_disposable *)h), DFS_ERR_HANDLE, "dfs_disposable_release(%p)", h);
        CHECK_STATUS(dfs_dispatch_emit((dfs_dispatch *)h, NULL), DFS_ERR_HANDLE, "dfs_dispatch_emit(%p)", h);
        CHECK_STATUS(dfs_diffuser_into((dfs_type *)h, noop_effect, NULL, NULL, &out), DFS_ERR_HANDLE, "into(type %p)", h);
        CHECK(dfs_diffuser_type((dfs_diffuser *)h) == NULL, "dfs_diffuser_type(%p) is NULL", h);
        CHECK(dfs_fuser_type((dfs_fuser *)h) == NULL, "dfs_fuser_type(%p) is NULL", h);
    }
    CHECK_OK(dfs_diffuser_run(keep, NULL), "a live handle still works");
    dfs_diffuser_release(keep);
}

/* ------------------------------------------------------------------------------------ */

static void test_type_mismatch(void) {
    check_section("type mismatches");
    dfs_diffuser *ptr_child = make_diffuser(), *str_child = NULL, *out = GARBAGE;
    CHECK_OK(dfs_diffuser_into(dfs_type_cstring(), noop_effect, NULL, NULL, &str_child), "a cstring child");
    dfs_diffuser *mixed[2] = {str_child, ptr_child};

    CHECK_STATUS(dfs_diffuser_into_all(dfs_type_cstring(), mixed, 2, &out), DFS_ERR_TYPE, "into_all(cstring) with a pointer child");
    CHECK(out == NULL, "out is NULL");
    CHECK_ERROR_HAS("children[1]", "message names the child (\"%s\")", dfs_last_error());
    CHECK_ERROR_HAS("pointer", "message names the child's type");
    CHECK_ERROR_HAS("cstring", "message names the expected type");
    CHECK_STATUS(dfs_diffuser_into_always_all(dfs_type_pointer(), mixed, 2, &out), DFS_ERR_TYPE, "into_always_all(pointer) with a cstring child");
    CHECK_ERROR_HAS("children[0]", "message names the child (\"%s\")", dfs_last_error());

    dfs_type *user = NULL;
    CHECK_OK(dfs_type_new("celsius", NULL, NULL, NULL, NULL, NULL, &user), "a user type with pointer-like callbacks");
    CHECK_STATUS(dfs_diffuser_into_all(user, &ptr_child, 1, &out), DFS_ERR_TYPE,
                 "a user type is not the pointer type even with the same (NULL) callbacks");
    CHECK_ERROR_HAS("celsius", "message names the user type (\"%s\")", dfs_last_error());
    dfs_type *twin = NULL;
    dfs_diffuser *twin_child = NULL;
    CHECK_OK(dfs_type_new("celsius", NULL, NULL, NULL, NULL, NULL, &twin), "another type named celsius");
    CHECK_OK(dfs_diffuser_into(twin, noop_effect, NULL, NULL, &twin_child), "a child of it");
    CHECK_STATUS(dfs_diffuser_into_all(user, &twin_child, 1, &out), DFS_ERR_TYPE, "two types of one name differ");
    CHECK_ERROR_HAS("two different types named 'celsius'", "message says the names are alike (\"%s\")", dfs_last_error());
    dfs_diffuser_release(twin_child);
    dfs_type_release(twin);

    CHECK_STATUS(dfs_diffuser_invert(str_child, &out), DFS_ERR_TYPE, "invert of a cstring child");
    CHECK_ERROR_HAS("invert", "message mentions invert (\"%s\")", dfs_last_error());
    dfs_diffuser *user_child = NULL;
    CHECK_OK(dfs_diffuser_into(user, noop_effect, NULL, NULL, &user_child), "a user-typed child");
    CHECK_STATUS(dfs_diffuser_invert(user_child, &out), DFS_ERR_TYPE, "invert of a user-typed child");
    dfs_type *fake = NULL;
    dfs_diffuser *fake_child = NULL;
    CHECK_OK(dfs_type_new("pointer", NULL, NULL, NULL, NULL, NULL, &fake), "a user type named pointer");
    CHECK_OK(dfs_diffuser_into(fake, noop_effect, NULL, NULL, &fake_child), "a child of it");
    CHECK_STATUS(dfs_diffuser_invert(fake_child, &out), DFS_ERR_TYPE, "invert of a child whose type is only named pointer");
    CHECK_ERROR_HAS("two different types named 'pointer'", "message says so (\"%s\")", dfs_last_error());
    dfs_diffuser_release(fake_child);
    dfs_type_release(fake);

    /* map: the input type is map's own and the output type is the child's, so there is
     * nothing to mismatch; a handle of another kind in the type's place is refused. */
    int destroyed = 0;
    CHECK_STATUS(dfs_diffuser_map((dfs_type *)ptr_child, noop_transform, &destroyed, count_destroy, str_child, &out),
                 DFS_ERR_HANDLE, "map with a diffuser as its type");
    CHECK_INT(destroyed, 1, "destroy once");
    CHECK_OK(dfs_diffuser_map(user, noop_transform, NULL, NULL, str_child, &out), "map from a user type onto a cstring child");
    CHECK(dfs_diffuser_type(out) == user, "map has its input type");
    dfs_diffuser_release(out);

    dfs_fuser *fp = make_fuser(dfs_type_pointer()), *fs = make_fuser(dfs_type_cstring()), *fout = GARBAGE;
    dfs_fuser *fmixed[2] = {fp, fs};
    CHECK_STATUS(dfs_fuser_from_all(dfs_type_pointer(), fmixed, 2, &fout), DFS_ERR_TYPE, "from_all(pointer) with a cstring fuser");
    CHECK(fout == NULL, "out is NULL");
    CHECK_ERROR_HAS("children[1]", "message names the child (\"%s\")", dfs_last_error());
    CHECK_ERROR_HAS("cstring", "message names its type");
    CHECK_STATUS(dfs_fuser_from_all(dfs_type_cstring(), fmixed, 2, &fout), DFS_ERR_TYPE, "from_all(cstring) with a pointer fuser");
    CHECK_ERROR_HAS("children[0]", "message names the child (\"%s\")", dfs_last_error());

    dfs_fuser_release(fp);
    dfs_fuser_release(fs);
    dfs_diffuser_release(user_child);
    dfs_type_release(user);
    dfs_diffuser_release(str_child);
    dfs_diffuser_release(ptr_child);
}

/* ------------------------------------------------------------------------------------ */

static void test_destroy_once(void) {
    check_section("destroy(ctx) exactly once on success");
    int destroyed = 0;
    dfs_diffuser *a = NULL, *b = NULL, *c = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), noop_effect, &destroyed, count_destroy, &a), "into");
    CHECK_OK(dfs_diffuser_into_when(noop_did_change, &destroyed, count_destroy, a, &b), "into_when");
    CHECK_OK(dfs_diffuser_map(dfs_type_pointer(), noop_transform, &destroyed, count_destroy, b, &c), "map");
    dfs_diffuser_run(c, IV(1));
    dfs_diffuser_run(c, IV(2));
    dfs_diffuser_release(a);
    dfs_diffuser_release(b);
    CHECK_INT(destroyed, 0, "nothing destroyed while the root lives");
    dfs_diffuser_release(c);
    CHECK_INT(destroyed, 3, "each of the three contexts destroyed once");

    destroyed = 0;
    dfs_type *t = NULL;
    CHECK_OK(dfs_type_new("t", NULL, NULL, NULL, &destroyed, count_destroy, &t), "type");
    CHECK_OK(dfs_diffuser_into(t, noop_effect, NULL, NULL, &a), "a diffuser of it");
    dfs_type_release(t);
    CHECK_INT(destroyed, 0, "the type lives while a diffuser uses it");
    dfs_diffuser_release(a);
    CHECK_INT(destroyed, 1, "then it is destroyed once");

    /* A destroy NULL is fine. */
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), noop_effect, &destroyed, NULL, &a), "destroy may be NULL");
    dfs_diffuser_release(a);
    CHECK_INT(destroyed, 1, "nothing was called");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_null_handles();
    test_null_out();
    test_children_arrays();
    test_released_handles();
    test_wrong_kind();
    test_forged();
    test_type_mismatch();
    test_destroy_once();
    return check_finish();
}
