/*
 * test_list.c — the keyed list diff through the C API: hand-picked cases, seeded
 * property tests (small key alphabets, so duplicates are common; sizes 0-64 and some
 * large) checked with a UIKit batch simulator, a script replayer and a slow LIS, the
 * content callback, and misuse.
 */
#include "check.h"

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
    dfs_list_diff_free(&d);
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_examples();
    test_properties();
    test_callback();
    test_misuse();
    return check_finish();
}
