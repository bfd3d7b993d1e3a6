/*
 * test_list.c — the keyed list diff through the C API: hand-picked cases, seeded
 * property tests (small key alphabets, so duplicates are common; sizes 0-64 and some
 * large) checked with a UIKit batch simulator, a script replayer and a slow LIS, the
 * content callback, and misuse; then the combinator dfs_diffuser_into_list: when its
 * sink is called and with what, the order of its reader's calls, every callback failing
 * in turn, seeded sequences whose every change the sink checks, hashed keys, composition
 * under gates, and misuse.
 *
 * One program because the into_list tests check every change a sink gets with the same
 * generators and whole-diff checks (check_diff: UIKit batch, script, slow LIS) as the
 * direct diff tests, so the checker is written once and read next to both users.
 */
#include "check.h"

#include <stddef.h>

/* ------------------------------------------------------------------------------------
 * Lists and generators
 * ------------------------------------------------------------------------------------ */

#define MAX_ITEMS 4096

typedef struct list {
    uint64_t keys[MAX_ITEMS];
    uint64_t contents[MAX_ITEMS];
    int count;
} list;

static uint64_t rng_state;

static uint64_t rng_next(void) {
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int rng_below(int n) { return n <= 0 ? 0 : (int)(rng_next() % (uint64_t)n); }

static dfs_list_side side_of(const list *l) {
    dfs_list_side side = {l->keys, l->contents, (size_t)l->count};
    return side;
}

static void list_random(list *l, int count, int alphabet) {
    l->count = count;
    for (int i = 0; i < count; i++) {
        l->keys[i] = (uint64_t)rng_below(alphabet) * 0x100000001ull; /* not small integers */
        l->contents[i] = rng_below(5) == 0 ? (uint64_t)rng_below(3) : 0;
    }
}

static void list_remove(list *l, int at) {
    memmove(&l->keys[at], &l->keys[at + 1], (size_t)(l->count - at - 1) * sizeof(uint64_t));
    memmove(&l->contents[at], &l->contents[at + 1], (size_t)(l->count - at - 1) * sizeof(uint64_t));
    l->count--;
}

static void list_insert(list *l, int at, uint64_t key, uint64_t content) {
    memmove(&l->keys[at + 1], &l->keys[at], (size_t)(l->count - at) * sizeof(uint64_t));
    memmove(&l->contents[at + 1], &l->contents[at], (size_t)(l->count - at) * sizeof(uint64_t));
    l->keys[at] = key;
    l->contents[at] = content;
    l->count++;
}

/* `to` = `from` after a few random edits (or shuffled, reversed, unrelated). */
static void list_edited(const list *from, list *to, int alphabet, int max_count) {
    *to = *from;
    switch (rng_below(8)) {
    case 0:
        list_random(to, rng_below(max_count + 1), alphabet);
        return;
    case 1:
        for (int i = to->count - 1; i > 0; i--) {
            int j = rng_below(i + 1);
            uint64_t k = to->keys[i], c = to->contents[i];
            to->keys[i] = to->keys[j], to->contents[i] = to->contents[j];
            to->keys[j] = k, to->contents[j] = c;
        }
        return;
    case 2:
        for (int i = 0; i < from->count; i++) {
            to->keys[i] = from->keys[from->count - 1 - i];
            to->contents[i] = from->contents[from->count - 1 - i];
        }
        return;
    default:
        break;
    }
    int edits = rng_below(11);
    for (int e = 0; e < edits; e++) {
        switch (rng_below(4)) {
        case 0:
            if (to->count > 0) list_remove(to, rng_below(to->count));
            break;
        case 1:
            if (to->count < MAX_ITEMS) {
                list_insert(to, rng_below(to->count + 1), (uint64_t)rng_below(alphabet) * 0x100000001ull, 0);
            }
            break;
        case 2:
            if (to->count > 0) {
                int i = rng_below(to->count);
                uint64_t k = to->keys[i], c = to->contents[i];
                list_remove(to, i);
                list_insert(to, rng_below(to->count + 1), k, c);
            }
            break;
        default:
            if (to->count > 0) to->contents[rng_below(to->count)] = (uint64_t)rng_below(4);
            break;
        }
    }
}

/* ------------------------------------------------------------------------------------
 * Checks of one diff
 * ------------------------------------------------------------------------------------ */

static char failure[256];

#define FAIL(...) (snprintf(failure, sizeof failure, __VA_ARGS__), 0)

static int same_item(const list *a, int i, const list *b, int j) {
    return a->keys[i] == b->keys[j] && a->contents[i] == b->contents[j];
}

/* The length of a longest increasing subsequence, by the O(n^2) recurrence. */
static int lis_length(const int32_t *values, int count) {
    static int best[MAX_ITEMS];
    int result = 0;
    for (int i = 0; i < count; i++) {
        best[i] = 1;
        for (int j = 0; j < i; j++) {
            if (values[j] < values[i] && best[j] + 1 > best[i]) best[i] = best[j] + 1;
        }
        if (best[i] > result) result = best[i];
    }
    return result;
}

/* Plays the batch by UIKit's rules into `shown` (a view holding `old`, whose data source
 * holds `new`): 1 if it is accepted and shows `new`. */
static int play_batch(const dfs_list_diff *d, const list *old, const list *new_) {
    static unsigned char old_used[MAX_ITEMS], new_used[MAX_ITEMS], reloaded[MAX_ITEMS], gone[MAX_ITEMS];
    static int from_old[MAX_ITEMS]; /* per new slot: old index shown, -1 new item, -2 empty */
    if (old->count - d->batch_delete_count + d->batch_insert_count != new_->count) return FAIL("invalid number of items");
    memset(old_used, 0, sizeof old_used);
    memset(new_used, 0, sizeof new_used);
    memset(reloaded, 0, sizeof reloaded);
    memset(gone, 0, sizeof gone);
    for (int k = 0; k < d->batch_delete_count; k++) {
        int i = d->batch_deletes[k];
        if (i < 0 || i >= old->count || old_used[i]++) return FAIL("delete %d", i);
        gone[i] = 1;
    }
    for (int k = 0; k < d->batch_reload_count; k++) {
        int i = d->batch_reloads[k];
        if (i < 0 || i >= old->count || old_used[i]++) return FAIL("reload %d", i);
        reloaded[i] = 1;
    }
    for (int j = 0; j < new_->count; j++) from_old[j] = -2;
    for (int k = 0; k < d->batch_move_count; k++) {
        int i = d->batch_moves[2 * k], j = d->batch_moves[2 * k + 1];
        if (i < 0 || i >= old->count || old_used[i]++) return FAIL("move from %d", i);
        if (j < 0 || j >= new_->count || new_used[j]++) return FAIL("move to %d", j);
        gone[i] = 1;
        from_old[j] = i;
    }
    for (int k = 0; k < d->batch_insert_count; k++) {
        int j = d->batch_inserts[k];
        if (j < 0 || j >= new_->count || new_used[j]++) return FAIL("insert %d", j);
        from_old[j] = -1;
    }
    int slot = 0;
    for (int i = 0; i < old->count; i++) {
        if (gone[i]) continue;
        while (slot < new_->count && from_old[slot] != -2) slot++;
        if (slot == new_->count) return FAIL("no place for old %d", i);
        from_old[slot] = reloaded[i] ? -1 : i;
        slot++;
    }
    for (int k = 0; k < d->batch_reload_after_move_count; k++) {
        int j = d->batch_reloads_after_moves[k];
        if (j < 0 || j >= new_->count || !new_used[j] || from_old[j] < 0) return FAIL("reload after moves %d", j);
        from_old[j] = -1;
    }
    for (int j = 0; j < new_->count; j++) {
        if (from_old[j] >= 0 && !same_item(old, from_old[j], new_, j)) return FAIL("slot %d shows old %d", j, from_old[j]);
    }
    return 1;
}

/* Replays the script on a copy of `old`, every index in range: 1 if it gives `new`. */
static int play_script(const dfs_list_diff *d, const list *old, const list *new_) {
    static list work;
    work = *old;
    for (int s = 0; s < d->script_count; s++) {
        int kind = d->script[3 * s], a = d->script[3 * s + 1], b = d->script[3 * s + 2];
        switch (kind) {
        case DFS_LIST_REMOVE:
            if (b <= 0 || a < 0 || a + b > work.count) return FAIL("remove %d %d of %d", a, b, work.count);
            for (int k = 0; k < b; k++) list_remove(&work, a);
            break;
        case DFS_LIST_MOVE: {
            if (a < 0 || a >= work.count || b < 0 || b >= work.count) return FAIL("move %d %d of %d", a, b, work.count);
            uint64_t key = work.keys[a], content = work.contents[a];
            list_remove(&work, a);
            list_insert(&work, b, key, content);
            break;
        }
        case DFS_LIST_INSERT:
            if (b <= 0 || a < 0 || a > work.count || a + b > new_->count) return FAIL("insert %d %d of %d", a, b, work.count);
            for (int k = 0; k < b; k++) list_insert(&work, a + k, new_->keys[a + k], new_->contents[a + k]);
            break;
        case DFS_LIST_CHANGE:
            if (b <= 0 || a < 0 || a + b > work.count) return FAIL("change %d %d of %d", a, b, work.count);
            for (int k = 0; k < b; k++) work.contents[a + k] = new_->contents[a + k];
            break;
        default:
            return FAIL("step kind %d", kind);
        }
    }
    if (work.count != new_->count) return FAIL("script gives %d items", work.count);
    for (int j = 0; j < work.count; j++) {
        if (!same_item(&work, j, new_, j)) return FAIL("script differs at %d", j);
    }
    return 1;
}

/* Every property of a diff computed with DFS_LIST_BATCH (or _MOVE_THEN_RELOAD) and
 * DFS_LIST_SCRIPT. */
static int check_diff(const dfs_list_diff *d, const list *old, const list *new_) {
    static int32_t sequence[MAX_ITEMS];
    if (d->old_count != old->count || d->new_count != new_->count) return FAIL("counts");
    int matched = 0;
    for (int i = 0; i < old->count; i++) {
        int j = d->old_to_new[i];
        if (j < 0) continue;
        if (j >= new_->count || d->new_to_old[j] != i) return FAIL("maps at old %d", i);
        if (old->keys[i] != new_->keys[j]) return FAIL("old %d paired with new %d, keys differ", i, j);
        matched++;
    }
    if (old->count - d->delete_count != matched || new_->count - d->insert_count != matched) return FAIL("counts do not add up");
    for (int k = 0; k < d->delete_count; k++) {
        if (d->old_to_new[d->deletes[k]] != -1 || (k > 0 && d->deletes[k - 1] >= d->deletes[k])) return FAIL("deletes");
    }
    for (int k = 0; k < d->insert_count; k++) {
        if (d->new_to_old[d->inserts[k]] != -1 || (k > 0 && d->inserts[k - 1] >= d->inserts[k])) return FAIL("inserts");
    }
    int changed = 0;
    for (int j = 0; j < new_->count; j++) {
        int i = d->new_to_old[j];
        if (i >= 0 && old->contents[i] != new_->contents[j]) {
            if (changed >= d->update_count || d->updates[2 * changed] != i || d->updates[2 * changed + 1] != j) return FAIL("update %d->%d missing", i, j);
            changed++;
        }
    }
    if (changed != d->update_count) return FAIL("extra updates");
    int n = 0;
    for (int j = 0; j < new_->count; j++) {
        if (d->new_to_old[j] >= 0) sequence[n++] = d->new_to_old[j];
    }
    int lis = lis_length(sequence, n);
    if (d->move_count != matched - lis) return FAIL("%d moves, minimum %d", d->move_count, matched - lis);
    for (int k = 0; k < d->move_count; k++) {
        if (d->old_to_new[d->moves[2 * k]] != d->moves[2 * k + 1]) return FAIL("move %d is not a pair", k);
    }
    return play_batch(d, old, new_) && play_script(d, old, new_);
}

/* ------------------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------------------ */

static void test_examples(void) {
    check_section("examples");
    /* A B C D E -> B C D E A: one move. */
    uint64_t abcde[] = {1, 2, 3, 4, 5}, bcdea[] = {2, 3, 4, 5, 1};
    dfs_list_side old = {abcde, NULL, 5}, new_ = {bcdea, NULL, 5};
    dfs_list_diff d;
    CHECK_OK(dfs_list_diff_compute(&old, &new_, NULL, NULL, DFS_LIST_SCRIPT, &d), "rotation");
    CHECK_INT(d.move_count, 1, "a rotation is one move");
    CHECK(d.moves[0] == 0 && d.moves[1] == 4, "A moves from 0 to 4");
    CHECK_INT(d.script_count, 1, "one script step");
    CHECK(d.script[0] == DFS_LIST_MOVE && d.script[1] == 0 && d.script[2] == 4, "move(0, 4)");
    CHECK(d.batch_deletes == NULL && d.batch_delete_count == 0, "no batch without DFS_LIST_BATCH");
    dfs_list_diff_free(&d);
    CHECK(d.block == NULL && d.moves == NULL, "free zeroes the diff");
    dfs_list_diff_free(&d); /* twice: a zeroed diff */
    dfs_list_diff_free(NULL);

    /* Moved and changed: delete + insert by default, move + reload after with the flag. */
    uint64_t k_old[] = {1, 2, 3}, c_old[] = {0, 0, 0};
    uint64_t k_new[] = {3, 1, 2}, c_new[] = {1, 0, 5};
    dfs_list_side o = {k_old, c_old, 3}, n = {k_new, c_new, 3};
    CHECK_OK(dfs_list_diff_compute(&o, &n, NULL, NULL, DFS_LIST_BATCH, &d), "moved and changed");
    CHECK_INT(d.update_count, 2, "two updates");
    CHECK(d.batch_delete_count == 1 && d.batch_deletes[0] == 2, "deleted at 2");
    CHECK(d.batch_insert_count == 1 && d.batch_inserts[0] == 0, "inserted at 0");
    CHECK(d.batch_reload_count == 1 && d.batch_reloads[0] == 1, "the item that stays is reloaded at old 1");
    CHECK_INT(d.batch_move_count, 0, "no move");
    dfs_list_diff_free(&d);
    CHECK_OK(dfs_list_diff_compute(&o, &n, NULL, NULL, DFS_LIST_BATCH_MOVE_THEN_RELOAD, &d), "move then reload");
    CHECK(d.batch_move_count == 1 && d.batch_moves[0] == 2 && d.batch_moves[1] == 0, "moved 2 -> 0");
    CHECK(d.batch_reload_after_move_count == 1 && d.batch_reloads_after_moves[0] == 0, "reloaded at new 0 after");
    dfs_list_diff_free(&d);

    /* Duplicates: the k-th occurrences pair up. */
    uint64_t dup_old[] = {7, 7, 8}, dup_new[] = {8, 7, 7, 7};
    dfs_list_side dold = {dup_old, NULL, 3}, dnew = {dup_new, NULL, 4};
    CHECK_OK(dfs_list_diff_compute(&dold, &dnew, NULL, NULL, 0, &d), "duplicates");
    CHECK_INT(d.has_duplicates, 1, "duplicates reported");
    CHECK(d.old_to_new[0] == 1 && d.old_to_new[1] == 2 && d.old_to_new[2] == 0, "k-th with k-th");
    CHECK(d.insert_count == 1 && d.inserts[0] == 3, "the extra one is an insert");
    dfs_list_diff_free(&d);

    /* Empty lists, NULL arrays. */
    dfs_list_side empty = {NULL, NULL, 0};
    CHECK_OK(dfs_list_diff_compute(&empty, &empty, NULL, NULL, DFS_LIST_BATCH | DFS_LIST_SCRIPT, &d), "empty");
    CHECK(d.old_count == 0 && d.new_count == 0 && d.script_count == 0 && d.old_to_new == NULL, "nothing");
    dfs_list_diff_free(&d);
    CHECK_OK(dfs_list_diff_compute(&empty, &o, NULL, NULL, DFS_LIST_SCRIPT, &d), "from empty, contents on one side");
    CHECK(d.insert_count == 3 && d.script_count == 1 && d.script[0] == DFS_LIST_INSERT && d.script[2] == 3, "insert(0, 3)");
    dfs_list_diff_free(&d);
}

static int property_cases(int cases, int max_count, unsigned int flags, uint64_t seed) {
    static list old, new_;
    int failures = 0, duplicates = 0;
    for (int c = 0; c < cases; c++) {
        rng_state = seed + (uint64_t)c;
        static const int alphabets[] = {1, 2, 3, 5, 8, 16, 64, 1000000};
        int alphabet = alphabets[rng_below(8)];
        list_random(&old, rng_below(max_count + 1), alphabet);
        list_edited(&old, &new_, alphabet, max_count);
        dfs_list_side o = side_of(&old), n = side_of(&new_);
        dfs_list_diff d;
        int status = dfs_list_diff_compute(&o, &n, NULL, NULL, flags | DFS_LIST_SCRIPT, &d);
        failure[0] = '\0';
        if (status != DFS_OK || !check_diff(&d, &old, &new_)) {
            if (failures++ == 0) printf("     case %d (seed %llu): %s %s\n", c, (unsigned long long)(seed + (uint64_t)c), failure, dfs_last_error());
        }
        duplicates += d.has_duplicates;
        dfs_list_diff_free(&d);
    }
    if (max_count <= 64 && cases >= 1000) CHECK(duplicates > cases / 5, "duplicates are common (%d of %d cases)", duplicates, cases);
    return failures;
}

static void test_properties(void) {
    check_section("properties: UIKit batch, script, minimal moves");
    int cases = check_scale(3000, 300);
    CHECK_INT(property_cases(cases, 64, DFS_LIST_BATCH, 1000), 0, "%d small cases, delete + insert", cases);
    CHECK_INT(property_cases(cases, 64, DFS_LIST_BATCH_MOVE_THEN_RELOAD, 500000), 0, "%d small cases, move then reload", cases);
    int large = check_scale(20, 3);
    CHECK_INT(property_cases(large, MAX_ITEMS - 16, DFS_LIST_BATCH, 900000), 0, "%d large cases", large);
}

typedef struct compare_ctx {
    const list *old, *new_;
    int calls;
    int fail_at;
} compare_ctx;

static int compare_contents(int32_t old_index, int32_t new_index, void *ctx) {
    compare_ctx *c = ctx;
    if (++c->calls == c->fail_at) {
        dfs_set_error("comparison failed on purpose");
        return -1;
    }
    return c->old->contents[old_index] == c->new_->contents[new_index];
}

static void test_callback(void) {
    check_section("content callback");
    static list old, new_;
    rng_state = 77;
    list_random(&old, 40, 10);
    list_edited(&old, &new_, 10, 40);
    dfs_list_side o = {old.keys, NULL, (size_t)old.count}, n = {new_.keys, NULL, (size_t)new_.count};
    compare_ctx ctx = {&old, &new_, 0, -1};
    dfs_list_diff d;
    CHECK_OK(dfs_list_diff_compute(&o, &n, compare_contents, &ctx, DFS_LIST_BATCH | DFS_LIST_SCRIPT, &d), "diff with a callback");
    failure[0] = '\0';
    CHECK(check_diff(&d, &old, &new_), "the callback decides updates %s", failure);
    CHECK_INT(ctx.calls, old.count - d.delete_count, "called once per matched pair");
    dfs_list_diff_free(&d);

    /* The callback decides even when fingerprints are given. */
    dfs_list_side of = side_of(&old), nf = side_of(&new_);
    ctx.calls = 0;
    CHECK_OK(dfs_list_diff_compute(&of, &nf, compare_contents, &ctx, 0, &d), "callback and fingerprints");
    CHECK(ctx.calls > 0, "the callback ran");
    dfs_list_diff_free(&d);

    ctx.calls = 0;
    ctx.fail_at = 2;
    CHECK_STATUS(dfs_list_diff_compute(&o, &n, compare_contents, &ctx, DFS_LIST_BATCH, &d), DFS_ERR_CALLBACK, "a failing callback aborts");
    CHECK_ERROR_HAS("on purpose", "its message comes back");
    CHECK_INT(ctx.calls, 2, "nothing is called after the failure");
    CHECK(d.block == NULL && d.deletes == NULL && d.old_count == 0, "the result is zeroed");
    dfs_list_diff_free(&d);
}

static void test_misuse(void) {
    check_section("misuse");
    uint64_t keys[] = {1, 2};
    uint64_t contents[] = {0, 0};
    dfs_list_side ok = {keys, NULL, 2}, no_keys = {NULL, NULL, 2}, with_contents = {keys, contents, 2};
    dfs_list_side huge = {keys, NULL, (size_t)1 << 40};
    dfs_list_diff d;
    memset(&d, 0x5a, sizeof d);
    CHECK_STATUS(dfs_list_diff_compute(NULL, &ok, NULL, NULL, 0, &d), DFS_ERR_NULL, "NULL old list");
    CHECK_ERROR_HAS("old_list", "names the argument");
    CHECK(d.block == NULL && d.deletes == NULL, "out zeroed on failure");
    CHECK_STATUS(dfs_list_diff_compute(&ok, NULL, NULL, NULL, 0, &d), DFS_ERR_NULL, "NULL new list");
    CHECK_STATUS(dfs_list_diff_compute(&ok, &ok, NULL, NULL, 0, NULL), DFS_ERR_NULL, "NULL out");
    CHECK_STATUS(dfs_list_diff_compute(&no_keys, &ok, NULL, NULL, 0, &d), DFS_ERR_NULL, "NULL keys");
    CHECK_ERROR_HAS("keys", "names the keys");
    CHECK_STATUS(dfs_list_diff_compute(&ok, &ok, NULL, NULL, 64, &d), DFS_ERR_ARGUMENT, "unknown flags");
    CHECK_STATUS(dfs_list_diff_compute(&ok, &with_contents, NULL, NULL, 0, &d), DFS_ERR_NULL, "contents on one side only");
    CHECK_STATUS(dfs_list_diff_compute(&huge, &ok, NULL, NULL, 0, &d), DFS_ERR_ARGUMENT, "a list too long");
    /* SIZE_MAX is no list length either (a size_t past the largest signed size). */
    dfs_list_side all = {keys, NULL, SIZE_MAX};
    CHECK_STATUS(dfs_list_diff_compute(&ok, &all, NULL, NULL, 0, &d), DFS_ERR_ARGUMENT, "a count of SIZE_MAX");
    CHECK_ERROR_HAS("new_list->count 18446744073709551615 is out of range (at most 2147483646)",
                    "names the count as given and the limit");
    dfs_list_diff_free(&d);
}

/* ------------------------------------------------------------------------------------
 * dfs_diffuser_into_list: the combinator
 * ------------------------------------------------------------------------------------ */

/* A list value of the node: reference counted (retain adds one, release drops one), and
 * named for the call log. vlist_live counts the lists not yet freed. */
#define VLIST_MAX 128

typedef struct vlist {
    int refs;
    char name;
    int count;
    uint64_t keys[VLIST_MAX];
    uint64_t contents[VLIST_MAX];
} vlist;

static int vlist_live;

static vlist *vlist_new(char name, const uint64_t *keys, const uint64_t *contents, int count) {
    vlist *v = calloc(1, sizeof *v);
    v->refs = 1;
    v->name = name;
    v->count = count;
    for (int i = 0; i < count; i++) {
        v->keys[i] = keys[i];
        v->contents[i] = contents ? contents[i] : 0;
    }
    vlist_live++;
    return v;
}

static vlist *vlist_of(char name, const list *l) { return vlist_new(name, l->keys, l->contents, l->count); }

static void vlist_unref(vlist *v) {
    if (v != NULL && --v->refs == 0) {
        free(v);
        vlist_live--;
    }
}

static void list_of_vlist(list *l, const vlist *v) {
    l->count = v->count;
    memcpy(l->keys, v->keys, sizeof(uint64_t) * (size_t)v->count);
    memcpy(l->contents, v->contents, sizeof(uint64_t) * (size_t)v->count);
}

typedef struct vlist_type_ctx {
    int retains, releases, destroyed;
    int fail_retain; /* retain returns NULL */
} vlist_type_ctx;

static const void *vlist_retain(const void *value, void *ctx) {
    vlist_type_ctx *t = ctx;
    if (t->fail_retain) return NULL;
    t->retains++;
    ((vlist *)value)->refs++;
    return value;
}

static void vlist_release(const void *value, void *ctx) {
    ((vlist_type_ctx *)ctx)->releases++;
    vlist_unref((vlist *)value);
}

static void vlist_type_destroy(void *ctx) { ((vlist_type_ctx *)ctx)->destroyed++; }

static dfs_type *vlist_type_fresh(vlist_type_ctx *ctx) {
    memset(ctx, 0, sizeof *ctx);
    dfs_type *type = NULL;
    if (dfs_type_new("vlist", NULL, vlist_retain, vlist_release, ctx, vlist_type_destroy, &type) != DFS_OK) {
        printf("FATAL dfs_type_new: %s\n", dfs_last_error());
        exit(2);
    }
    return type;
}

/* The reader's and the sink's context: a log of every call (when `log` is set), an
 * injected failure (the fail_at-th call of any reader or sink function fails), and
 * what the sink received. */
enum { CONTENT_NONE, CONTENT_FINGERPRINT, CONTENT_CALLBACK };

typedef struct node_ctx {
    test_log *log;
    int calls;
    int fail_at;              /* 0: never */
    int fail_sink;            /* the next fail_sink sink calls fail */
    int content;              /* CONTENT_* */
    int hashed;               /* keys are key % hash_mod, same_key compares the real keys */
    uint64_t hash_mod;
    int reader_destroyed, sink_destroyed;
    /* What the sink saw: the last changes, checked against the list it applied. */
    int sink_calls;
    list shown;               /* the list the sink applied last (the "view") */
    int shown_set;
    int checked, check_failures;
    unsigned int flags;
    int64_t huge_count;       /* if > 0, count reports this */
} node_ctx;

static int node_fail(node_ctx *c, const char *what) {
    ++c->calls;
    int sink = strcmp(what, "sink") == 0;
    if (sink && c->fail_sink > 0) c->fail_sink--;
    else if (c->calls != c->fail_at) return 0;
    if (c->log) log_add(c->log, "!");
    char message[64];
    snprintf(message, sizeof message, "%s failed on purpose", what);
    dfs_set_error(message);
    return 1;
}

static int r_count(const void *l, size_t *count, void *ctx) {
    node_ctx *c = ctx;
    const vlist *v = l;
    if (c->log) log_add(c->log, "count(%c)", v->name);
    if (node_fail(c, "count")) return 7;
    *count = c->huge_count > 0 ? (size_t)c->huge_count : (size_t)v->count;
    return 0;
}

static int r_key(const void *l, int32_t index, uint64_t *key, void *ctx) {
    node_ctx *c = ctx;
    const vlist *v = l;
    if (c->log) log_add(c->log, "key(%c%d)", v->name, index);
    if (node_fail(c, "key")) return -3;
    if (index < 0 || index >= v->count) {
        printf("FATAL key index %d out of range\n", index);
        exit(2);
    }
    *key = c->hashed ? v->keys[index] % c->hash_mod : v->keys[index];
    return 0;
}

static int r_same_key(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    node_ctx *c = ctx;
    const vlist *x = a, *y = b;
    if (c->log) log_add(c->log, "same_key(%c%d,%c%d)", x->name, i, y->name, j);
    if (node_fail(c, "same_key")) return -1;
    return x->keys[i] == y->keys[j];
}

static int r_same_content(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    node_ctx *c = ctx;
    const vlist *x = a, *y = b;
    if (c->log) log_add(c->log, "same_content(%c%d,%c%d)", x->name, i, y->name, j);
    if (node_fail(c, "same_content")) return -2;
    return x->contents[i] == y->contents[j];
}

static int r_content(const void *l, int32_t index, uint64_t *fingerprint, void *ctx) {
    node_ctx *c = ctx;
    const vlist *v = l;
    if (c->log) log_add(c->log, "content(%c%d)", v->name, index);
    if (node_fail(c, "content")) return 9;
    *fingerprint = v->contents[index];
    return 0;
}

/* The sink: logs, may fail, and checks the changes against the list it applied last
 * (every property of check_diff: counts, maps, minimal moves, the UIKit batch and the
 * script replayed). */
static int r_sink(const dfs_list_diff *changes, const void *new_list, int is_first, void *ctx) {
    node_ctx *c = ctx;
    const vlist *v = new_list;
    if (c->log) log_add(c->log, "sink(%c:-%d+%d~%d>%d)", v->name, changes->delete_count, changes->insert_count,
                        changes->update_count, changes->move_count);
    /* is_first: exactly while no sink call succeeded (the view shows nothing yet). */
    if (is_first != !c->shown_set || (is_first && changes->old_count != 0)) {
        if (c->check_failures++ == 0) printf("     sink got is_first %d after %d applied lists\n", is_first, c->sink_calls);
    }
    if (node_fail(c, "sink")) return 1;
    c->sink_calls++;
    static list old, new_;
    if (c->shown_set) old = c->shown;
    else old.count = 0;
    list_of_vlist(&new_, v);
    if (c->content == CONTENT_NONE) {
        /* Content never changes: compare keys only. */
        for (int i = 0; i < old.count; i++) old.contents[i] = 0;
        for (int j = 0; j < new_.count; j++) new_.contents[j] = 0;
    }
    if ((c->flags & (DFS_LIST_BATCH | DFS_LIST_BATCH_MOVE_THEN_RELOAD)) && (c->flags & DFS_LIST_SCRIPT)) {
        failure[0] = '\0';
        c->checked++;
        if (!check_diff(changes, &old, &new_)) {
            if (c->check_failures++ == 0) printf("     sink check: %s\n", failure);
        }
    }
    c->shown = new_;
    c->shown_set = 1;
    return 0;
}

static void r_reader_destroy(void *ctx) { ((node_ctx *)ctx)->reader_destroyed++; }
static void r_sink_destroy(void *ctx) { ((node_ctx *)ctx)->sink_destroyed++; }

static dfs_list_reader reader_for(const node_ctx *c) {
    dfs_list_reader r;
    memset(&r, 0, sizeof r);
    r.count = r_count;
    r.key = r_key;
    if (c->hashed) r.same_key = r_same_key;
    if (c->content == CONTENT_CALLBACK) r.same_content = r_same_content;
    if (c->content == CONTENT_FINGERPRINT) r.content = r_content;
    return r;
}

static dfs_diffuser *node_new(dfs_type *type, node_ctx *c) {
    dfs_list_reader r = reader_for(c);
    dfs_diffuser *d = NULL;
    dfs_status status = dfs_diffuser_into_list(type, &r, c, r_reader_destroy, c->flags, r_sink, c, r_sink_destroy, &d);
    if (status != DFS_OK) {
        printf("FATAL dfs_diffuser_into_list: %s\n", dfs_last_error());
        exit(2);
    }
    return d;
}

static void node_ctx_init(node_ctx *c, test_log *log, int content, unsigned int flags) {
    memset(c, 0, sizeof *c);
    c->log = log;
    c->content = content;
    c->flags = flags;
}

#define KEYS(...) ((const uint64_t[]){__VA_ARGS__})

static void test_into_list_behaviour(void) {
    check_section("into_list: when the sink is called, and what it gets");
    test_log log;
    log_clear(&log);
    vlist_type_ctx tc;
    dfs_type *type = vlist_type_fresh(&tc);
    node_ctx c;
    node_ctx_init(&c, &log, CONTENT_FINGERPRINT, DFS_LIST_BATCH | DFS_LIST_SCRIPT);
    dfs_diffuser *d = node_new(type, &c);

    /* The first run calls the sink even for an empty list. */
    vlist *e = vlist_new('E', NULL, NULL, 0);
    CHECK_OK(dfs_diffuser_run(d, e), "first run, empty list");
    CHECK_LOG(&log, "count(E) sink(E:-0+0~0>0)", "the first run reads the count only and calls the sink");
    CHECK_INT(tc.retains, 1, "the list is kept (retained)");
    /* An empty list again: an empty diff, no sink call. */
    vlist *e2 = vlist_new('F', NULL, NULL, 0);
    CHECK_OK(dfs_diffuser_run(d, e2), "empty again");
    CHECK_LOG(&log, "count(E) count(F)", "no sink call for an empty diff");

    /* A B C, then the same keys and contents in another list: no sink call, but the new
     * list is kept (the next run reads F's successor G, not A). */
    vlist *a = vlist_new('A', KEYS(10, 20, 30), KEYS(0, 0, 0), 3);
    vlist *a2 = vlist_new('G', KEYS(10, 20, 30), KEYS(0, 0, 0), 3);
    vlist *b = vlist_new('B', KEYS(10, 30, 20, 40), KEYS(0, 1, 0, 0), 4);
    CHECK_OK(dfs_diffuser_run(d, a), "A");
    CHECK_LOG(&log, "count(F) count(A) sink(A:-0+3~0>0)", "from the empty list: three inserts");
    CHECK_OK(dfs_diffuser_run(d, a2), "G: the same items as A");
    CHECK_LOG(&log,
              "count(A) count(G) key(A0) key(G0) content(A0) content(G0) key(A1) key(G1) content(A1) content(G1) "
              "key(A2) key(G2) content(A2) content(G2)",
              "an unchanged list: the prefix covers it, no sink call");
    CHECK_OK(dfs_diffuser_run(d, b), "B");
    CHECK_LOG(&log,
              "count(G) count(B) key(G0) key(B0) content(G0) content(B0) key(G1) key(B1) key(G2) key(B3) "
              "key(G1) key(G2) key(B1) key(B2) key(B3) content(G2) content(B1) content(G1) content(B2) "
              "sink(B:-0+1~1>1)",
              "diffed from G, the kept list; keys and contents in the core's order");
    CHECK_INT(c.sink_calls, 3, "three sink calls");
    CHECK_INT(c.check_failures, 0, "every change checked (batch played, script replayed, %d checked)", c.checked);

    /* The runs' lists are borrowed: the caller may drop them; the node keeps the last. */
    vlist_unref(e);
    vlist_unref(e2);
    vlist_unref(a);
    vlist_unref(a2);
    vlist_unref(b);
    CHECK_INT(vlist_live, 1, "only the kept list is alive");
    CHECK_OK(dfs_diffuser_release(d), "release");
    CHECK_OK(dfs_type_release(type), "release type");
    CHECK_INT(vlist_live, 0, "the kept list is released with the node");
    CHECK(c.reader_destroyed == 1 && c.sink_destroyed == 1, "both destroys ran once (%d, %d)", c.reader_destroyed,
          c.sink_destroyed);
    CHECK_INT(tc.retains, tc.releases, "every retain released");
    CHECK_INT(tc.destroyed, 1, "the type's destroy ran");
}

/* The diff the sink gets, in each form the flags ask for. */
typedef struct capture_ctx {
    dfs_list_diff copy;   /* counts only: the arrays are borrowed for the sink call */
    int32_t old_to_new[VLIST_MAX], new_to_old[VLIST_MAX];
    int batch_moves, reloads_after, scripts, calls;
    int first_move_old, first_move_new;
    int is_first, firsts; /* the last is_first, and how many calls had it */
    int fail_next;        /* the next fail_next calls fail (after being recorded) */
} capture_ctx;

static int capture_sink(const dfs_list_diff *changes, const void *new_list, int is_first, void *ctx) {
    (void)new_list;
    capture_ctx *c = ctx;
    c->calls++;
    c->is_first = is_first;
    c->firsts += is_first != 0;
    if (c->fail_next > 0) {
        c->fail_next--;
        dfs_set_error("capture_sink failed on purpose");
        return 1;
    }
    c->copy = *changes;
    memcpy(c->old_to_new, changes->old_to_new, sizeof(int32_t) * (size_t)changes->old_count);
    memcpy(c->new_to_old, changes->new_to_old, sizeof(int32_t) * (size_t)changes->new_count);
    c->batch_moves = changes->batch_move_count;
    c->reloads_after = changes->batch_reload_after_move_count;
    c->scripts = changes->script_count;
    if (changes->move_count > 0) {
        c->first_move_old = changes->moves[0];
        c->first_move_new = changes->moves[1];
    }
    return 0;
}

static void test_into_list_flags(void) {
    check_section("into_list: flags, borrowed diff");
    node_ctx r;
    node_ctx_init(&r, NULL, CONTENT_CALLBACK, 0);
    dfs_list_reader reader = reader_for(&r);
    vlist *a = vlist_new('A', KEYS(1, 2, 3), KEYS(0, 0, 0), 3);
    vlist *b = vlist_new('B', KEYS(3, 1, 2), KEYS(1, 0, 0), 3);
    static const unsigned int forms[] = {0, DFS_LIST_BATCH, DFS_LIST_BATCH_MOVE_THEN_RELOAD, DFS_LIST_SCRIPT};
    for (int f = 0; f < 4; f++) {
        capture_ctx cap;
        memset(&cap, 0, sizeof cap);
        dfs_diffuser *d = NULL;
        CHECK_OK(dfs_diffuser_into_list(dfs_type_pointer(), &reader, &r, NULL, forms[f], capture_sink, &cap, NULL, &d),
                 "flags %u", forms[f]);
        CHECK_OK(dfs_diffuser_run(d, a), "A");
        CHECK_OK(dfs_diffuser_run(d, b), "B");
        CHECK_INT(cap.calls, 2, "two sink calls");
        CHECK(cap.copy.move_count == 1 && cap.first_move_old == 2 && cap.first_move_new == 0, "3 moved from 2 to 0");
        CHECK_INT(cap.copy.update_count, 1, "one update");
        CHECK_INT(cap.batch_moves, forms[f] == DFS_LIST_BATCH_MOVE_THEN_RELOAD ? 1 : 0, "batch moves as asked");
        CHECK_INT(cap.reloads_after, forms[f] == DFS_LIST_BATCH_MOVE_THEN_RELOAD ? 1 : 0, "reloads after moves");
        CHECK_INT(cap.copy.batch_delete_count, forms[f] == DFS_LIST_BATCH ? 1 : 0, "delete + insert by default");
        CHECK(forms[f] == DFS_LIST_SCRIPT ? cap.scripts > 0 : cap.scripts == 0, "a script only if asked");
        dfs_diffuser_release(d);
    }
    vlist_unref(a);
    vlist_unref(b);
}

/* is_first tells the first delivery (the view shows nothing of the node yet) from a
 * later one that also starts from an empty list, as Swift's ListChanges.isFirst does. */
static void test_into_list_is_first(void) {
    check_section("into_list: is_first");
    node_ctx r;
    node_ctx_init(&r, NULL, CONTENT_NONE, 0);
    dfs_list_reader reader = reader_for(&r);
    vlist *e = vlist_new('E', NULL, NULL, 0);
    vlist *a = vlist_new('A', KEYS(1, 2, 3), NULL, 3);
    capture_ctx cap;
    memset(&cap, 0, sizeof cap);
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into_list(dfs_type_pointer(), &reader, &r, NULL, 0, capture_sink, &cap, NULL, &d), "node");
    CHECK_OK(dfs_diffuser_run(d, e), "first run, empty list");
    CHECK(cap.calls == 1 && cap.is_first == 1, "the first call has is_first 1");
    CHECK_OK(dfs_diffuser_run(d, a), "from the empty list to A");
    CHECK(cap.calls == 2 && cap.is_first == 0 && cap.copy.old_count == 0 && cap.copy.insert_count == 3,
          "a later call from an empty list has is_first 0");
    CHECK_OK(dfs_diffuser_run(d, e), "back to empty");
    CHECK(cap.calls == 3 && cap.is_first == 0 && cap.copy.delete_count == 3, "three deletes, not first");
    dfs_diffuser_release(d);

    /* A failed first call leaves nothing applied: the next call is first again. */
    memset(&cap, 0, sizeof cap);
    cap.fail_next = 2;
    CHECK_OK(dfs_diffuser_into_list(dfs_type_pointer(), &reader, &r, NULL, 0, capture_sink, &cap, NULL, &d), "node");
    CHECK_STATUS(dfs_diffuser_run(d, a), DFS_ERR_CALLBACK, "the first call fails");
    CHECK_STATUS(dfs_diffuser_run(d, e), DFS_ERR_CALLBACK, "the second call fails too");
    CHECK_OK(dfs_diffuser_run(d, a), "the third succeeds");
    CHECK(cap.calls == 3 && cap.firsts == 3, "all three had is_first 1 (%d of %d)", cap.firsts, cap.calls);
    CHECK_OK(dfs_diffuser_run(d, e), "then empty");
    CHECK(cap.calls == 4 && cap.is_first == 0, "and the next is not first");
    dfs_diffuser_release(d);
    vlist_unref(e);
    vlist_unref(a);
}

/* A run of B after A fails at each of B's callbacks in turn (reader and sink), for every
 * form of keys and content: the log stops at the failing call, the status and message
 * are the callback's, and the next run diffs from A, the list the sink applied. */
static void test_into_list_failures(void) {
    check_section("into_list: every failing callback aborts, first failure wins, the kept list stays");
    test_log log;
    vlist *a = vlist_new('A', KEYS(1, 2, 3, 4, 5), KEYS(0, 0, 0, 0, 0), 5);
    vlist *b = vlist_new('B', KEYS(1, 3, 2, 9, 4, 5), KEYS(0, 1, 0, 0, 0, 2), 6);
    vlist *c3 = vlist_new('C', KEYS(5, 1, 2, 3, 4), KEYS(2, 0, 0, 1, 0), 5);
    static const int contents[] = {CONTENT_NONE, CONTENT_FINGERPRINT, CONTENT_CALLBACK};
    for (int hashed = 0; hashed < 2; hashed++) {
        for (int k = 0; k < 3; k++) {
            /* The reference: the log of A then B without failure, and how many calls B makes. */
            vlist_type_ctx tc;
            dfs_type *type = vlist_type_fresh(&tc);
            node_ctx c;
            node_ctx_init(&c, &log, contents[k], DFS_LIST_BATCH | DFS_LIST_SCRIPT);
            c.hashed = hashed;
            c.hash_mod = 2; /* keys collide: same_key decides */
            dfs_diffuser *d = node_new(type, &c);
            log_clear(&log);
            CHECK_OK(dfs_diffuser_run(d, a), "A (hashed %d, content %d)", hashed, k);
            int before_b = c.calls;
            log_clear(&log);
            CHECK_OK(dfs_diffuser_run(d, b), "B");
            int b_calls = c.calls - before_b;
            char reference[8192];
            snprintf(reference, sizeof reference, "%s", log.text);
            dfs_diffuser_release(d);
            int bad = 0;
            for (int fail_at = 1; fail_at <= b_calls; fail_at++) {
                node_ctx_init(&c, &log, contents[k], DFS_LIST_BATCH | DFS_LIST_SCRIPT);
                c.hashed = hashed;
                c.hash_mod = 2;
                d = node_new(type, &c);
                log_clear(&log);
                dfs_diffuser_run(d, a);
                c.fail_at = c.calls + fail_at;
                log_clear(&log);
                dfs_status status = dfs_diffuser_run(d, b);
                /* The log is the reference's first fail_at calls, then "!". */
                char expected[8192];
                const char *end = reference;
                for (int n = 0; n < fail_at && end != NULL; n++) {
                    end = strchr(end, ' ');
                    if (end != NULL && n + 1 < fail_at) end++;
                }
                int cut = end ? (int)(end - reference) : (int)strlen(reference);
                snprintf(expected, sizeof expected, "%.*s !", cut, reference);
                if (status != DFS_ERR_CALLBACK || strcmp(log.text, expected) != 0 ||
                    strstr(dfs_last_error(), "failed on purpose") == NULL) {
                    if (bad++ == 0) {
                        printf("     fail_at %d: status %s, log \"%s\", expected \"%s\", error \"%s\"\n", fail_at,
                               dfs_status_name(status), log.text, expected, dfs_last_error());
                    }
                }
                /* The next run starts from A, the list the sink applied: C's changes are
                 * checked against A by the sink (c.shown is still A). */
                c.fail_at = 0;
                log_clear(&log);
                if (dfs_diffuser_run(d, c3) != DFS_OK || c.sink_calls != 2 || c.check_failures != 0) {
                    if (bad++ == 0) printf("     fail_at %d: the run after the failure did not start from A\n", fail_at);
                }
                dfs_diffuser_release(d);
            }
            CHECK_INT(bad, 0, "hashed %d, content %d: each of the %d calls of B failing aborts there, the next run "
                      "diffs from A", hashed, k, b_calls);
            dfs_type_release(type);
        }
    }

    /* The same after a failed first run: the next run is a first run again. */
    vlist_type_ctx tc;
    dfs_type *type = vlist_type_fresh(&tc);
    node_ctx c;
    node_ctx_init(&c, &log, CONTENT_NONE, DFS_LIST_BATCH | DFS_LIST_SCRIPT);
    dfs_diffuser *d = node_new(type, &c);
    log_clear(&log);
    c.fail_at = 2; /* the sink */
    CHECK_STATUS(dfs_diffuser_run(d, a), DFS_ERR_CALLBACK, "a failing sink on the first run");
    CHECK_LOG(&log, "count(A) sink(A:-0+5~0>0) !", "the sink was called once");
    CHECK_INT(tc.retains - tc.releases, 0, "nothing kept");
    CHECK_OK(dfs_diffuser_run(d, b), "B after it");
    CHECK_LOG(&log, "count(B) sink(B:-0+6~0>0)", "a first run again: from the empty list, no old list read");
    /* The same list again: nothing to do. */
    dfs_diffuser_run(d, b);
    CHECK_LOG(&log,
              "count(B) count(B) key(B0) key(B0) key(B1) key(B1) key(B2) key(B2) key(B3) key(B3) key(B4) key(B4) "
              "key(B5) key(B5)",
              "the same list again: nothing to do");
    /* A sink that fails later keeps B; the next run is diffed from B again. */
    c.fail_sink = 1;
    CHECK_STATUS(dfs_diffuser_run(d, c3), DFS_ERR_CALLBACK, "C with a failing sink");
    CHECK_ERROR_HAS("sink failed on purpose", "the sink's message");
    CHECK(strstr(log.text, "sink(C") != NULL && strcmp(log.text + strlen(log.text) - 2, " !") == 0,
          "the sink was called last: %s", log.text);
    log_clear(&log);
    CHECK_OK(dfs_diffuser_run(d, c3), "C again");
    CHECK(strncmp(log.text, "count(B) count(C)", 17) == 0 && strstr(log.text, "sink(C") != NULL,
          "retried from B, the list the sink applied: %s", log.text);
    log_clear(&log);
    CHECK_INT(c.check_failures, 0, "the sink's changes always start from what it applied");
    dfs_diffuser_release(d);
    dfs_type_release(type);
    CHECK_INT(tc.retains, tc.releases, "every retain released");

    vlist_unref(a);
    vlist_unref(b);
    vlist_unref(c3);
}

/* A seeded sequence of lists through one node, for each form of keys and content and
 * each batch form: every sink call's changes, checked against the list the sink applied
 * last (UIKit batch played, script replayed, minimal moves), turn it into the new list;
 * a run without a sink call had nothing to do. With hashed keys (key % 3, so most keys
 * collide and same_key decides), the changes are those of the exact keys. */
static void test_into_list_sequences(void) {
    check_section("into_list: seeded sequences, every change checked by the sink");
    static list current, next, shown_before;
    static const int contents[] = {CONTENT_NONE, CONTENT_FINGERPRINT, CONTENT_CALLBACK};
    int steps = check_scale(400, 60);
    for (int form = 0; form < 12; form++) {
        int content = contents[form % 3];
        int hashed = (form / 3) % 2;
        unsigned int flags = (form / 6 ? DFS_LIST_BATCH_MOVE_THEN_RELOAD : DFS_LIST_BATCH) | DFS_LIST_SCRIPT;
        vlist_type_ctx tc;
        dfs_type *type = vlist_type_fresh(&tc);
        node_ctx c;
        node_ctx_init(&c, NULL, content, flags);
        c.hashed = hashed;
        c.hash_mod = 3;
        dfs_diffuser *d = node_new(type, &c);
        rng_state = 31337 + (uint64_t)form;
        current.count = 0;
        int unexpected = 0, quiet = 0;
        for (int step = 0; step < steps; step++) {
            int alphabet = (int)(2 + rng_below(12));
            if (rng_below(5) == 0) next = current; /* unchanged */
            else list_edited(&current, &next, alphabet, 64);
            if (next.count > 64) next.count = 64;
            if (content == CONTENT_NONE) {
                for (int j = 0; j < next.count; j++) next.contents[j] = 0;
            }
            vlist *v = vlist_of('L', &next);
            int calls = c.sink_calls;
            shown_before = c.shown;
            int was_shown = c.shown_set;
            if (dfs_diffuser_run(d, v) != DFS_OK) unexpected++;
            if (c.sink_calls == calls) {
                /* No sink call: only after a first run, and the diff from what the sink
                 * applied is empty. */
                quiet++;
                dfs_list_side o = side_of(&shown_before), n = side_of(&next);
                dfs_list_diff diff;
                dfs_list_diff_compute(&o, &n, NULL, NULL, 0, &diff);
                if (!was_shown || diff.delete_count + diff.insert_count + diff.move_count + diff.update_count != 0) {
                    if (unexpected++ == 0) printf("     step %d: no sink call for a change\n", step);
                }
                dfs_list_diff_free(&diff);
                c.shown = next; /* the node kept it; same keys, order and content */
            }
            vlist_unref(v);
            current = next;
        }
        CHECK(unexpected == 0 && c.check_failures == 0 && c.checked == c.sink_calls && quiet > steps / 10,
              "form %d (content %d, hashed %d, flags %u): %d sink calls checked, %d runs without (%d problems, %d "
              "check failures)",
              form, content, hashed, flags, c.checked, quiet, unexpected, c.check_failures);
        dfs_diffuser_release(d);
        dfs_type_release(type);
        CHECK(tc.retains == tc.releases && vlist_live == 0, "every list released");
    }

    /* Hashed keys give the same changes as exact keys (same pairing, same moves). */
    int differ = 0;
    for (int k = 0; k < check_scale(300, 40); k++) {
        static list old, new_;
        rng_state = 4000 + (uint64_t)k;
        int alphabet = 1 + rng_below(10);
        list_random(&old, rng_below(40), alphabet);
        list_edited(&old, &new_, alphabet, 40);
        capture_ctx exact, hashed;
        dfs_list_diff *results[2];
        capture_ctx *caps[2] = {&exact, &hashed};
        for (int h = 0; h < 2; h++) {
            memset(caps[h], 0, sizeof *caps[h]);
            node_ctx r;
            node_ctx_init(&r, NULL, CONTENT_FINGERPRINT, 0);
            r.hashed = h;
            r.hash_mod = 2;
            dfs_list_reader reader = reader_for(&r);
            dfs_diffuser *d = NULL;
            dfs_diffuser_into_list(dfs_type_pointer(), &reader, &r, NULL, 0, capture_sink, caps[h], NULL, &d);
            vlist *a = vlist_of('A', &old), *b = vlist_of('B', &new_);
            dfs_diffuser_run(d, a);
            caps[h]->calls = 0;
            dfs_diffuser_run(d, b);
            dfs_diffuser_release(d);
            vlist_unref(a);
            vlist_unref(b);
            results[h] = &caps[h]->copy;
        }
        if (exact.calls != hashed.calls ||
            (exact.calls && (memcmp(exact.old_to_new, hashed.old_to_new, sizeof(int32_t) * (size_t)old.count) != 0 ||
                             memcmp(exact.new_to_old, hashed.new_to_old, sizeof(int32_t) * (size_t)new_.count) != 0)) ||
            (exact.calls && (results[0]->delete_count != results[1]->delete_count ||
                             results[0]->insert_count != results[1]->insert_count ||
                             results[0]->move_count != results[1]->move_count ||
                             results[0]->update_count != results[1]->update_count ||
                             results[0]->has_duplicates != results[1]->has_duplicates))) {
            differ++;
        }
    }
    CHECK_INT(differ, 0, "hashed keys with same_key: the same pairing and changes as exact keys (%d cases)",
              check_scale(300, 40));
}

/* An into_list under a gate and a map: a failing sink leaves every gate on the path
 * unchanged, so that the same model again retries the list. */
typedef struct screen {
    long title;
    const vlist *rows;
} screen;

static void test_into_list_composed(void) {
    check_section("into_list: composed under gates and maps");
    test_log log;
    log_clear(&log);
    node_ctx c;
    node_ctx_init(&c, &log, CONTENT_FINGERPRINT, DFS_LIST_SCRIPT);
    dfs_diffuser *rows = node_new(dfs_type_pointer(), &c);
    recorder title = rec_make("title", &log, REC_INT);
    dfs_diffuser *title_effect = NULL, *title_map = NULL, *rows_map = NULL, *all = NULL;
    CHECK_OK(dfs_diffuser_into(dfs_type_pointer(), rec_effect, &title, rec_destroy, &title_effect), "title effect");
    CHECK_OK(dfs_diffuser_map_field(dfs_type_pointer(), offsetof(screen, title), sizeof(long), title_effect, &title_map),
             "title map");
    CHECK_OK(dfs_diffuser_map_field(dfs_type_pointer(), offsetof(screen, rows), sizeof(void *), rows, &rows_map),
             "rows map");
    dfs_diffuser *children[] = {title_map, rows_map};
    CHECK_OK(dfs_diffuser_into_all(dfs_type_pointer(), children, 2, &all), "into_all");
    dfs_diffuser_release(title_effect);
    dfs_diffuser_release(title_map);
    dfs_diffuser_release(rows_map);
    dfs_diffuser_release(rows);

    vlist *a = vlist_new('A', KEYS(1, 2), KEYS(0, 0), 2);
    vlist *b = vlist_new('B', KEYS(2, 1), KEYS(0, 0), 2);
    screen s1 = {1, a}, s2 = {2, b};
    CHECK_OK(dfs_diffuser_run(all, &s1), "s1");
    CHECK_LOG(&log, "title:1 count(A) sink(A:-0+2~0>0)", "tree order: the title, then the list");
    c.fail_sink = 1;
    CHECK_STATUS(dfs_diffuser_run(all, &s2), DFS_ERR_CALLBACK, "s2, the sink fails");
    log_clear(&log);
    CHECK_OK(dfs_diffuser_run(all, &s2), "s2 again");
    CHECK_LOG(&log, "count(A) count(B) key(A0) key(B0) key(A1) key(B1) key(A0) key(A1) key(B0) key(B1) "
                    "content(A1) content(B0) content(A0) content(B1) sink(B:-0+0~0>1)",
              "the gate above kept s1: the list is retried from A; the title is not run again");
    dfs_diffuser_release(all);
    CHECK(c.reader_destroyed == 1 && c.sink_destroyed == 1 && title.destroyed == 1, "destroys ran once");
    vlist_unref(a);
    vlist_unref(b);
}

static void test_into_list_misuse(void) {
    check_section("into_list: misuse");
    node_ctx c;
    node_ctx_init(&c, NULL, CONTENT_NONE, 0);
    dfs_list_reader ok = reader_for(&c), no_count = ok, no_key = ok;
    no_count.count = NULL;
    no_key.key = NULL;
    dfs_diffuser *d = (dfs_diffuser *)(intptr_t)1;
    struct {
        const char *what;
        dfs_type *type;
        const dfs_list_reader *reader;
        unsigned int flags;
        dfs_list_sink_fn sink;
        int status;
        const char *message;
    } cases[] = {
        {"NULL reader", dfs_type_pointer(), NULL, 0, r_sink, DFS_ERR_NULL, "reader"},
        {"NULL count", dfs_type_pointer(), &no_count, 0, r_sink, DFS_ERR_NULL, "count"},
        {"NULL key", dfs_type_pointer(), &no_key, 0, r_sink, DFS_ERR_NULL, "key"},
        {"NULL sink", dfs_type_pointer(), &ok, 0, NULL, DFS_ERR_NULL, "sink"},
        {"unknown flags", dfs_type_pointer(), &ok, 8, r_sink, DFS_ERR_ARGUMENT, "flags"},
        {"NULL type", NULL, &ok, 0, r_sink, DFS_ERR_NULL, "type"},
        {"forged type", (dfs_type *)(intptr_t)0x7777, &ok, 0, r_sink, DFS_ERR_HANDLE, "type"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        c.reader_destroyed = c.sink_destroyed = 0;
        d = (dfs_diffuser *)(intptr_t)1;
        CHECK_STATUS(dfs_diffuser_into_list(cases[k].type, cases[k].reader, &c, r_reader_destroy, cases[k].flags,
                                            cases[k].sink, &c, r_sink_destroy, &d),
                     cases[k].status, "%s", cases[k].what);
        CHECK_ERROR_HAS(cases[k].message, "the message names it");
        CHECK(d == NULL, "out is NULL");
        CHECK(c.reader_destroyed == 1 && c.sink_destroyed == 1, "both destroys ran once");
    }
    CHECK_STATUS(dfs_diffuser_into_list(dfs_type_pointer(), &ok, NULL, NULL, 0, r_sink, NULL, NULL, NULL), DFS_ERR_NULL,
                 "NULL out");

    /* A count too large, and a retain that fails, abort the run and keep the last list. */
    vlist_type_ctx tc;
    dfs_type *type = vlist_type_fresh(&tc);
    node_ctx_init(&c, NULL, CONTENT_NONE, DFS_LIST_BATCH | DFS_LIST_SCRIPT);
    d = node_new(type, &c);
    vlist *a = vlist_new('A', KEYS(1, 2), NULL, 2), *b = vlist_new('B', KEYS(2, 3), NULL, 2);
    CHECK_OK(dfs_diffuser_run(d, a), "A");
    c.huge_count = (int64_t)1 << 31;
    CHECK_STATUS(dfs_diffuser_run(d, b), DFS_ERR_ARGUMENT, "a count of 2^31");
    CHECK_ERROR_HAS("too large", "says so");
    c.huge_count = 0;
    tc.fail_retain = 1;
    CHECK_STATUS(dfs_diffuser_run(d, b), DFS_ERR_MEMORY, "a retain returning NULL");
    CHECK_INT(c.sink_calls, 1, "the sink was not called: the list is retained first");
    tc.fail_retain = 0;
    CHECK_OK(dfs_diffuser_run(d, b), "B");
    CHECK(c.sink_calls == 2 && c.check_failures == 0, "diffed from A, checked");
    dfs_diffuser_release(d);
    dfs_type_release(type);
    vlist_unref(a);
    vlist_unref(b);
    CHECK(vlist_live == 0 && tc.retains == tc.releases, "every list released");
}

/* The reader promises of the header, on the two lists that broke them: a key is asked at
 * most twice a run (the suffix reaches the place where the prefix ended), and same_key
 * gets two items of one list earlier first (a duplicate in the old middle). */
typedef struct {
    uint64_t keys[8];
    int32_t n;
    char name;
    int asked[8];
    int misordered;
} promise_list;

static int promise_count(const void *list, size_t *count, void *ctx) {
    (void)ctx;
    *count = (size_t)((const promise_list *)list)->n;
    return 0;
}

static int promise_key(const void *list, int32_t index, uint64_t *key, void *ctx) {
    (void)ctx;
    promise_list *l = (promise_list *)list;
    l->asked[index]++;
    *key = l->keys[index];
    return 0;
}

static int promise_same_key(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    (void)ctx;
    promise_list *x = (promise_list *)a;
    const promise_list *y = b;
    if (x == y && i >= j) x->misordered++;
    return x->keys[i] == y->keys[j];
}

static int promise_sink(const dfs_list_diff *diff, const void *new_list, int is_first, void *ctx) {
    (void)diff;
    (void)new_list;
    (void)is_first;
    (void)ctx;
    return 0;
}

static void test_into_list_reader_promises(void) {
    check_section("into_list: each key asked at most twice, same_key earlier first");
    dfs_list_reader reader = {promise_count, promise_key, promise_same_key, NULL, NULL};
    dfs_diffuser *d = NULL;
    CHECK_OK(dfs_diffuser_into_list(dfs_type_pointer(), &reader, NULL, NULL, 0, promise_sink, NULL, NULL, &d), "node");
    promise_list a = {{1, 2}, 2, 'a', {0}, 0};
    promise_list b = {{3, 4, 2}, 3, 'b', {0}, 0};
    CHECK_OK(dfs_diffuser_run(d, &a), "first run");
    CHECK_OK(dfs_diffuser_run(d, &b), "[1 2] to [3 4 2]");
    for (int i = 0; i < a.n; i++) CHECK(a.asked[i] <= 2, "old key %d asked %d times", i, a.asked[i]);
    for (int i = 0; i < b.n; i++) CHECK(b.asked[i] <= 2, "new key %d asked %d times", i, b.asked[i]);
    dfs_diffuser_release(d);

    CHECK_OK(dfs_diffuser_into_list(dfs_type_pointer(), &reader, NULL, NULL, 0, promise_sink, NULL, NULL, &d), "node");
    promise_list c = {{1, 7, 7, 2}, 4, 'c', {0}, 0};
    promise_list e = {{3, 7, 4}, 3, 'e', {0}, 0};
    CHECK_OK(dfs_diffuser_run(d, &c), "first run");
    CHECK_OK(dfs_diffuser_run(d, &e), "[1 7 7 2] to [3 7 4]");
    CHECK(c.misordered == 0 && e.misordered == 0, "same_key of one list earlier first (%d, %d calls later first)",
          c.misordered, e.misordered);
    dfs_diffuser_release(d);
}

/* dfs_list_diff_read: the same diff as dfs_list_diff_compute on the same keys, the reader
 * asked as an into_list node asks it (keys only where the diff needs them), and its
 * errors. */
static int failing_key(const void *list, int32_t index, uint64_t *key, void *ctx) {
    (void)list;
    (void)index;
    (void)key;
    (void)ctx;
    dfs_set_error("no key here");
    return 3;
}

static void test_diff_read(void) {
    check_section("dfs_list_diff_read");
    dfs_list_reader reader = {promise_count, promise_key, NULL, NULL, NULL};
    promise_list a = {{1, 7, 7, 2, 5}, 5, 'a', {0}, 0};
    promise_list b = {{3, 7, 2, 9, 5}, 5, 'b', {0}, 0};
    dfs_list_diff read, computed;
    unsigned int flags = DFS_LIST_BATCH | DFS_LIST_SCRIPT;
    CHECK_OK(dfs_list_diff_read(&reader, NULL, &a, &b, flags, &read), "read");
    dfs_list_side old_side = {a.keys, NULL, (size_t)a.n}, new_side = {b.keys, NULL, (size_t)b.n};
    CHECK_OK(dfs_list_diff_compute(&old_side, &new_side, NULL, NULL, flags, &computed), "compute");
    CHECK(read.delete_count == computed.delete_count && read.insert_count == computed.insert_count &&
              read.move_count == computed.move_count && read.update_count == computed.update_count &&
              read.has_duplicates == computed.has_duplicates,
          "the same counts as dfs_list_diff_compute");
    CHECK(memcmp(read.old_to_new, computed.old_to_new, sizeof(int32_t) * (size_t)a.n) == 0 &&
              memcmp(read.new_to_old, computed.new_to_old, sizeof(int32_t) * (size_t)b.n) == 0,
          "the same pairs");
    CHECK(read.script_count == computed.script_count &&
              memcmp(read.script, computed.script, sizeof(int32_t) * 3 * (size_t)read.script_count) == 0,
          "the same script");
    CHECK(a.asked[4] == 1 && b.asked[4] == 1, "the suffix's paired items asked once");
    for (int i = 0; i < a.n; i++) CHECK(a.asked[i] <= 2 && b.asked[i] <= 2, "item %d asked at most twice", i);
    dfs_list_diff_free(&read);
    dfs_list_diff_free(&computed);

    /* A key is asked only where the diff needs it: none for an empty old list. */
    promise_list empty = {{0}, 0, 'e', {0}, 0};
    dfs_list_reader refusing = {promise_count, failing_key, NULL, NULL, NULL};
    CHECK_OK(dfs_list_diff_read(&refusing, NULL, &empty, &b, 0, &read), "from an empty list: no key asked");
    CHECK(read.insert_count == b.n, "every item inserted");
    dfs_list_diff_free(&read);
    CHECK_STATUS(dfs_list_diff_read(&refusing, NULL, &a, &b, 0, &read), DFS_ERR_CALLBACK, "a failing key");
    CHECK_STR(dfs_last_error(), "no key here", "its message");
    CHECK(read.block == NULL && read.old_count == 0, "out zeroed on failure");

    CHECK_STATUS(dfs_list_diff_read(NULL, NULL, &a, &b, 0, &read), DFS_ERR_NULL, "NULL reader");
    dfs_list_reader keyless = {promise_count, NULL, NULL, NULL, NULL};
    CHECK_STATUS(dfs_list_diff_read(&keyless, NULL, &a, &b, 0, &read), DFS_ERR_NULL, "NULL reader->key");
    CHECK_STATUS(dfs_list_diff_read(&reader, NULL, &a, &b, 0, NULL), DFS_ERR_NULL, "NULL out");
    CHECK_STATUS(dfs_list_diff_read(&reader, NULL, &a, &b, 1u << 9, &read), DFS_ERR_ARGUMENT, "unknown flags");
}

/* The order of a reader's calls, as the header gives it, with a duplicate in the rest of
 * the old list; and a content callback that set a message and succeeded for the old
 * item does not give it to the new item's failure. */
typedef struct {
    uint64_t keys[8];
    int n;
    char name;
} order_list;

static test_log order_log;

static int order_count(const void *list, size_t *count, void *ctx) {
    const order_list *l = list;
    (void)ctx;
    log_add(&order_log, "count(%c)", l->name);
    *count = (size_t)l->n;
    return 0;
}

static int order_key(const void *list, int32_t i, uint64_t *key, void *ctx) {
    const order_list *l = list;
    (void)ctx;
    log_add(&order_log, "key(%c%d)", l->name, i);
    *key = l->keys[i];
    return 0;
}

static int order_same_key(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    const order_list *x = a, *y = b;
    (void)ctx;
    log_add(&order_log, "same_key(%c%d,%c%d)", x->name, i, y->name, j);
    return x->keys[i] == y->keys[j];
}

static int order_same_content(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    (void)a;
    (void)b;
    (void)ctx;
    log_add(&order_log, "content(%d,%d)", i, j);
    return 1;
}

static const order_list *content_old_list;

static int order_content(const void *list, int32_t index, uint64_t *fingerprint, void *ctx) {
    (void)ctx;
    (void)index;
    if (list == content_old_list) {
        dfs_set_error("a tentative message of the old item's content");
        *fingerprint = 1;
        return 0;
    }
    return 7;
}

static void test_reader_order(void) {
    check_section("dfs_list_reader: the header's order, with a duplicate in the old list");
    order_list o = {{1, 5, 5, 9}, 4, 'o'}, n = {{1, 9, 5, 7}, 4, 'n'};
    dfs_list_reader reader = {order_count, order_key, order_same_key, order_same_content, NULL};
    dfs_list_diff d;
    log_clear(&order_log);
    CHECK_OK(dfs_list_diff_read(&reader, NULL, &o, &n, 0, &d), "read");
    CHECK_LOG(&order_log,
              "count(o) count(n) key(o0) key(n0) same_key(o0,n0) content(0,0) key(o1) key(n1) key(o3) key(n3) "
              "key(o1) key(o2) key(o3) key(n1) key(n2) key(n3) same_key(o1,o2) "
              "same_key(o3,n1) content(3,1) same_key(o1,n2) content(1,2)",
              "the calls in the header's order");
    dfs_list_diff_free(&d);

    check_section("dfs_list_reader: content's message belongs to the call that set it");
    order_list a = {{1, 2}, 2, 'a'}, b = {{1, 2}, 2, 'b'};
    content_old_list = &a;
    dfs_list_reader fingerprints = {order_count, order_key, NULL, NULL, order_content};
    CHECK_STATUS(dfs_list_diff_read(&fingerprints, NULL, &a, &b, 0, &d), DFS_ERR_CALLBACK, "content of the new item fails");
    CHECK_ERROR_HAS("returned 7", "its own description, not the old item's message (\"%s\")", dfs_last_error());
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_examples();
    test_properties();
    test_callback();
    test_misuse();
    test_into_list_behaviour();
    test_into_list_is_first();
    test_into_list_flags();
    test_into_list_failures();
    test_into_list_sequences();
    test_into_list_composed();
    test_into_list_misuse();
    test_into_list_reader_promises();
    test_diff_read();
    test_reader_order();
    return check_finish();
}
