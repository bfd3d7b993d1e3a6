/*
 * list_oracles.h — what makes a list diff right, checked from the outside: the maps and
 * counts of a diff agree with the lists, updates are exactly the matched items whose
 * content differs, moves are exactly matched minus a longest increasing subsequence
 * (a slow one), a script replayed on the old list (every index in range) gives the new
 * one, and a batch played by UIKit's rules (no index twice, the counts add up, sections
 * before items) shows the new list. Shared by test_list_sections.c and the fuzzer
 * (Tests/Fuzz/fuzz_list.c), which include it, with the seeded generator and the item
 * edits both make their lists with; every function is static.
 *
 * A failed check returns 0 and leaves its reason in list_failure.
 *
 * One header although over 400 lines: both of its users check a diff with all of it
 * (check_all, check_flat), and make their lists with the same generator and edits.
 */
#ifndef DFS_TEST_LIST_ORACLES_H
#define DFS_TEST_LIST_ORACLES_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diffuser.h"

#define MAX_SECTIONS 160
#define MAX_ITEMS 48 /* per section */

typedef struct section {
    uint64_t key, content;
    int count;
    uint64_t keys[MAX_ITEMS], contents[MAX_ITEMS];
} section;

typedef struct sections {
    int count;
    section s[MAX_SECTIONS];
} sections;

/* A seeded generator (splitmix64), for the lists of the test programs and the fuzzer. */
static inline uint64_t oracle_next(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static inline int oracle_below(uint64_t *state, int n) { return n <= 0 ? 0 : (int)(oracle_next(state) % (uint64_t)n); }

/* Removes the item at `at` from the parallel keys and contents of *count items. */
static inline void items_remove(uint64_t *keys, uint64_t *contents, int *count, int at) {
    memmove(&keys[at], &keys[at + 1], (size_t)(*count - at - 1) * sizeof(uint64_t));
    memmove(&contents[at], &contents[at + 1], (size_t)(*count - at - 1) * sizeof(uint64_t));
    (*count)--;
}

/* Inserts an item at `at` into the parallel keys and contents of *count items. */
static inline void items_insert(uint64_t *keys, uint64_t *contents, int *count, int at, uint64_t key,
                                uint64_t content) {
    memmove(&keys[at + 1], &keys[at], (size_t)(*count - at) * sizeof(uint64_t));
    memmove(&contents[at + 1], &contents[at], (size_t)(*count - at) * sizeof(uint64_t));
    keys[at] = key;
    contents[at] = content;
    (*count)++;
}

static char list_failure[256];

#define FAIL(...) (snprintf(list_failure, sizeof list_failure, __VA_ARGS__), 0)

/* One list as the checks see it: keys and contents (the sections, or a section's items). */
typedef struct view {
    const uint64_t *keys, *contents;
    int count;
} view;

static inline view items_of(const section *s) { return (view){s->keys, s->contents, s->count}; }

static inline int lis_length(const int32_t *values, int count) {
    static int best[MAX_SECTIONS > MAX_ITEMS ? MAX_SECTIONS : MAX_ITEMS];
    int result = 0;
    for (int i = 0; i < count; i++) {
        best[i] = 1;
        for (int j = 0; j < i; j++)
            if (values[j] < values[i] && best[j] + 1 > best[i]) best[i] = best[j] + 1;
        if (best[i] > result) result = best[i];
    }
    return result;
}

/* The properties of one diff: maps, counts, updates, minimal moves; a sub-diff of a
 * sections diff (`sub`) has no block and no batch of its own. */
static inline int check_one(const dfs_list_diff *d, view old, view new_, int sub, const char *what) {
    static int32_t sequence[MAX_SECTIONS > MAX_ITEMS ? MAX_SECTIONS : MAX_ITEMS];
    if (sub && d->block != NULL) return FAIL("%s: a sub-diff has its own block", what);
    if (sub && (d->batch_delete_count || d->batch_deletes || d->batch_move_count)) return FAIL("%s: a sub-diff has a batch", what);
    if (d->old_count != old.count || d->new_count != new_.count) return FAIL("%s: counts", what);
    int matched = 0, n = 0, changed = 0;
    for (int i = 0; i < old.count; i++) {
        int j = d->old_to_new[i];
        if (j < 0) continue;
        if (j >= new_.count || d->new_to_old[j] != i || old.keys[i] != new_.keys[j]) return FAIL("%s: map at %d", what, i);
        matched++;
    }
    if (old.count - d->delete_count != matched || new_.count - d->insert_count != matched) return FAIL("%s: counts do not add up", what);
    for (int k = 0; k < d->delete_count; k++) {
        int i = d->deletes[k];
        if (i < 0 || i >= old.count || d->old_to_new[i] != -1 || (k > 0 && d->deletes[k - 1] >= i)) return FAIL("%s: deletes", what);
    }
    for (int k = 0; k < d->insert_count; k++) {
        int j = d->inserts[k];
        if (j < 0 || j >= new_.count || d->new_to_old[j] != -1 || (k > 0 && d->inserts[k - 1] >= j)) return FAIL("%s: inserts", what);
    }
    for (int k = 0; k < d->move_count; k++) {
        int i = d->moves[2 * k], j = d->moves[2 * k + 1];
        if (i < 0 || i >= old.count || d->old_to_new[i] != j || (k > 0 && d->moves[2 * k - 1] >= j)) return FAIL("%s: move %d", what, k);
    }
    for (int j = 0; j < new_.count; j++) {
        int i = d->new_to_old[j];
        if (i < 0) continue;
        sequence[n++] = i;
        if (old.contents[i] != new_.contents[j]) {
            if (changed >= d->update_count || d->updates[2 * changed] != i || d->updates[2 * changed + 1] != j)
                return FAIL("%s: update %d->%d missing", what, i, j);
            changed++;
        }
    }
    if (changed != d->update_count) return FAIL("%s: extra updates", what);
    int lis = lis_length(sequence, n);
    if (d->move_count != matched - lis) return FAIL("%s: %d moves, minimum %d", what, d->move_count, matched - lis);
    return 1;
}

/* Replays a script on `work` (positions of `old`, or -1 - j for new item j, changed ones
 * marked in `fresh`), every index in range. */
static inline int replay(const dfs_list_diff *d, int32_t *work, int *count, int new_count, unsigned char *fresh, const char *what) {
    for (int s = 0; s < d->script_count; s++) {
        int kind = d->script[3 * s], a = d->script[3 * s + 1], b = d->script[3 * s + 2];
        int n = *count;
        if (kind == DFS_LIST_REMOVE) {
            if (b <= 0 || a < 0 || a + b > n) return FAIL("%s: remove %d %d of %d", what, a, b, n);
            memmove(&work[a], &work[a + b], (size_t)(n - a - b) * sizeof *work);
            *count -= b;
        } else if (kind == DFS_LIST_MOVE) {
            if (a < 0 || a >= n || b < 0 || b >= n) return FAIL("%s: move %d %d of %d", what, a, b, n);
            int32_t x = work[a];
            memmove(&work[a], &work[a + 1], (size_t)(n - a - 1) * sizeof *work);
            memmove(&work[b + 1], &work[b], (size_t)(n - 1 - b) * sizeof *work);
            work[b] = x;
        } else if (kind == DFS_LIST_INSERT) {
            if (b <= 0 || a < 0 || a > n || a + b > new_count) return FAIL("%s: insert %d %d of %d", what, a, b, n);
            memmove(&work[a + b], &work[a], (size_t)(n - a) * sizeof *work);
            for (int k = 0; k < b; k++) work[a + k] = -1 - (a + k);
            *count += b;
        } else if (kind == DFS_LIST_CHANGE) {
            if (b <= 0 || a < 0 || a + b > n) return FAIL("%s: change %d %d of %d", what, a, b, n);
            for (int k = 0; k < b; k++) fresh[a + k] = 1;
        } else {
            return FAIL("%s: step kind %d", what, kind);
        }
    }
    return *count == new_count ? 1 : FAIL("%s: the script gives %d, not %d", what, *count, new_count);
}

/* Whether position j of a replayed list shows new item j. */
static inline int shows(int32_t at, int fresh, view old, view new_, int j) {
    if (at < 0) return at == -1 - j;
    return old.keys[at] == new_.keys[j] && (fresh || old.contents[at] == new_.contents[j]);
}

/* The sections' script, then each section's item script: old becomes new. */
static inline int check_scripts(const dfs_list_sections_diff *d, const sections *old, const sections *new_) {
    static int32_t work[MAX_SECTIONS + MAX_ITEMS];
    static unsigned char fresh[MAX_SECTIONS + MAX_ITEMS];
    static uint64_t ok[MAX_SECTIONS], oc[MAX_SECTIONS], nk[MAX_SECTIONS], nc[MAX_SECTIONS];
    for (int s = 0; s < old->count; s++) ok[s] = old->s[s].key, oc[s] = old->s[s].content;
    for (int s = 0; s < new_->count; s++) nk[s] = new_->s[s].key, nc[s] = new_->s[s].content;
    view o = {ok, oc, old->count}, n = {nk, nc, new_->count};
    int count = old->count;
    for (int s = 0; s < count; s++) work[s] = s;
    memset(fresh, 0, sizeof fresh);
    if (!replay(&d->sections, work, &count, new_->count, fresh, "sections")) return 0;
    static int32_t placed[MAX_SECTIONS];
    for (int j = 0; j < new_->count; j++) {
        if (!shows(work[j], fresh[j], o, n, j)) return FAIL("the sections' script: place %d", j);
        placed[j] = work[j];
    }
    for (int j = 0; j < new_->count; j++) {
        const dfs_list_diff *items = &d->items[j];
        view from = placed[j] >= 0 ? items_of(&old->s[placed[j]]) : (view){NULL, NULL, 0};
        view to = items_of(&new_->s[j]);
        char what[32];
        snprintf(what, sizeof what, "section %d", j);
        if (!check_one(items, from, to, 1, what)) return 0;
        count = from.count;
        for (int i = 0; i < count; i++) work[i] = i;
        memset(fresh, 0, sizeof fresh);
        if (!replay(items, work, &count, to.count, fresh, what)) return 0;
        for (int i = 0; i < to.count; i++)
            if (!shows(work[i], fresh[i], from, to, i)) return FAIL("%s: the item script, place %d", what, i);
    }
    return 1;
}

/* The batch of one section's items (already filtered from the index paths), played by
 * UIKit's rules on the items it shows: 1 if it then shows `new_`. */
typedef struct item_ops {
    int32_t deletes[MAX_ITEMS], reloads[MAX_ITEMS], inserts[MAX_ITEMS], after[MAX_ITEMS], moves[2 * MAX_ITEMS];
    int n_deletes, n_reloads, n_inserts, n_after, n_moves;
} item_ops;

static inline int play_items(const item_ops *b, view old, view new_, int section) {
    unsigned char old_used[MAX_ITEMS] = {0}, new_used[MAX_ITEMS] = {0}, gone[MAX_ITEMS] = {0}, reloaded[MAX_ITEMS] = {0};
    int src[MAX_ITEMS];
    if (old.count - b->n_deletes + b->n_inserts != new_.count) return FAIL("section %d: invalid number of items", section);
    for (int j = 0; j < new_.count; j++) src[j] = -2;
    for (int k = 0; k < b->n_deletes; k++) {
        int i = b->deletes[k];
        if (i < 0 || i >= old.count || old_used[i]++) return FAIL("section %d: delete %d", section, i);
        gone[i] = 1;
    }
    for (int k = 0; k < b->n_reloads; k++) {
        int i = b->reloads[k];
        if (i < 0 || i >= old.count || old_used[i]++) return FAIL("section %d: reload %d", section, i);
        reloaded[i] = 1;
    }
    for (int k = 0; k < b->n_moves; k++) {
        int i = b->moves[2 * k], j = b->moves[2 * k + 1];
        if (i < 0 || i >= old.count || old_used[i]++ || j < 0 || j >= new_.count || new_used[j]++)
            return FAIL("section %d: move %d %d", section, i, j);
        gone[i] = 1;
        src[j] = i;
    }
    for (int k = 0; k < b->n_inserts; k++) {
        int j = b->inserts[k];
        if (j < 0 || j >= new_.count || new_used[j]++) return FAIL("section %d: insert %d", section, j);
        src[j] = -1;
    }
    for (int i = 0, slot = 0; i < old.count; i++, slot++) {
        if (gone[i]) { slot--; continue; }
        while (slot < new_.count && src[slot] != -2) slot++;
        if (slot == new_.count) return FAIL("section %d: no place for item %d", section, i);
        src[slot] = reloaded[i] ? -1 : i;
    }
    for (int k = 0; k < b->n_after; k++) {
        int j = b->after[k];
        if (j < 0 || j >= new_.count || !new_used[j] || src[j] < 0) return FAIL("section %d: reload after moves %d", section, j);
        src[j] = -1;
    }
    for (int j = 0; j < new_.count; j++) {
        int i = src[j];
        if (i >= 0 && (old.keys[i] != new_.keys[j] || old.contents[i] != new_.contents[j]))
            return FAIL("section %d: item %d shows old %d", section, j, i);
    }
    return 1;
}

/* Picks the index paths of `section` out of a path array (stride 2, or 4 for moves). */
static inline int paths_in(const int32_t *paths, int count, int stride, int section, int32_t *out, int pair) {
    int n = 0;
    for (int k = 0; k < count; k++) {
        const int32_t *p = &paths[stride * k];
        if (p[0] != section) continue;
        if (pair) out[2 * n] = p[1], out[2 * n + 1] = p[3];
        else out[n] = p[1];
        n++;
    }
    return n;
}

/* The whole batch by UIKit's rules: sections first, then the items of the sections that
 * stay in place; every section must then show the new one. */
static inline int play_batch(const dfs_list_sections_diff *d, const sections *old, const sections *new_) {
    static unsigned char old_used[MAX_SECTIONS], new_used[MAX_SECTIONS], gone[MAX_SECTIONS], reloaded[MAX_SECTIONS],
        moved_in[MAX_SECTIONS], stays[MAX_SECTIONS];
    static int src[MAX_SECTIONS];
    static item_ops ops;
    int no = old->count, nn = new_->count;
    if (no - d->batch_section_delete_count + d->batch_section_insert_count != nn) return FAIL("invalid number of sections");
    memset(old_used, 0, sizeof old_used), memset(new_used, 0, sizeof new_used), memset(gone, 0, sizeof gone);
    memset(reloaded, 0, sizeof reloaded), memset(moved_in, 0, sizeof moved_in), memset(stays, 0, sizeof stays);
    for (int j = 0; j < nn; j++) src[j] = -2;
    for (int k = 0; k < d->batch_section_delete_count; k++) {
        int o = d->batch_section_deletes[k];
        if (o < 0 || o >= no || old_used[o]++) return FAIL("section delete %d", o);
        gone[o] = 1;
    }
    for (int k = 0; k < d->batch_section_reload_count; k++) {
        int o = d->batch_section_reloads[k];
        if (o < 0 || o >= no || old_used[o]++) return FAIL("section reload %d", o);
        reloaded[o] = 1;
    }
    for (int k = 0; k < d->batch_section_move_count; k++) {
        int o = d->batch_section_moves[2 * k], j = d->batch_section_moves[2 * k + 1];
        if (o < 0 || o >= no || old_used[o]++ || j < 0 || j >= nn || new_used[j]++) return FAIL("section move %d %d", o, j);
        gone[o] = 1, src[j] = o, moved_in[j] = 1;
    }
    for (int k = 0; k < d->batch_section_insert_count; k++) {
        int j = d->batch_section_inserts[k];
        if (j < 0 || j >= nn || new_used[j]++) return FAIL("section insert %d", j);
        src[j] = -1;
    }
    static int slot_of[MAX_SECTIONS];
    for (int o = 0, slot = 0; o < no; o++) {
        slot_of[o] = -1;
        if (gone[o]) continue;
        while (slot < nn && src[slot] != -2) slot++;
        if (slot == nn) return FAIL("no place for section %d", o);
        src[slot] = reloaded[o] ? -1 : o;
        if (!reloaded[o]) stays[slot] = 1, slot_of[o] = slot;
        slot++;
    }
    for (int k = 0; k < d->batch_section_reload_after_move_count; k++) {
        int j = d->batch_section_reloads_after_moves[k];
        if (j < 0 || j >= nn || !moved_in[j]) return FAIL("section reload after moves %d", j);
        src[j] = -1;
    }
    /* Item changes only in sections that stay in place, in the right coordinates. */
    for (int k = 0; k < d->batch_item_delete_count + d->batch_item_reload_count + d->batch_item_move_count; k++) {
        int o = k < d->batch_item_delete_count ? d->batch_item_deletes[2 * k]
                : k < d->batch_item_delete_count + d->batch_item_reload_count
                    ? d->batch_item_reloads[2 * (k - d->batch_item_delete_count)]
                    : d->batch_item_moves[4 * (k - d->batch_item_delete_count - d->batch_item_reload_count)];
        if (o < 0 || o >= no || slot_of[o] < 0) return FAIL("an item change in old section %d, which does not stay", o);
    }
    for (int k = 0; k < d->batch_item_move_count; k++) {
        const int32_t *m = &d->batch_item_moves[4 * k];
        if (slot_of[m[0]] != m[2]) return FAIL("an item moves from section %d to %d", m[0], m[2]);
    }
    for (int k = 0; k < d->batch_item_insert_count + d->batch_item_reload_after_move_count; k++) {
        int j = k < d->batch_item_insert_count ? d->batch_item_inserts[2 * k]
                                               : d->batch_item_reloads_after_moves[2 * (k - d->batch_item_insert_count)];
        if (j < 0 || j >= nn || !stays[j]) return FAIL("an item change in new section %d, which is not in place", j);
    }
    for (int j = 0; j < nn; j++) {
        int o = src[j];
        if (o == -1) continue; /* inserted or reloaded: shows the new section */
        if (o < 0) return FAIL("section %d shows nothing", j);
        const section *a = &old->s[o], *b = &new_->s[j];
        if (a->key != b->key || a->content != b->content) return FAIL("section %d shows old %d", j, o);
        int oo = o;
        ops.n_deletes = paths_in(d->batch_item_deletes, d->batch_item_delete_count, 2, oo, ops.deletes, 0);
        ops.n_reloads = paths_in(d->batch_item_reloads, d->batch_item_reload_count, 2, oo, ops.reloads, 0);
        ops.n_moves = paths_in(d->batch_item_moves, d->batch_item_move_count, 4, oo, ops.moves, 1);
        ops.n_inserts = paths_in(d->batch_item_inserts, d->batch_item_insert_count, 2, j, ops.inserts, 0);
        ops.n_after = paths_in(d->batch_item_reloads_after_moves, d->batch_item_reload_after_move_count, 2, j, ops.after, 0);
        if (!stays[j]) ops.n_deletes = ops.n_reloads = ops.n_moves = ops.n_inserts = ops.n_after = 0;
        if (!play_items(&ops, items_of(a), items_of(b), j)) return 0;
    }
    return 1;
}

static inline int check_all(const dfs_list_sections_diff *d, const sections *old, const sections *new_) {
    static uint64_t ok[MAX_SECTIONS], oc[MAX_SECTIONS], nk[MAX_SECTIONS], nc[MAX_SECTIONS];
    for (int s = 0; s < old->count; s++) ok[s] = old->s[s].key, oc[s] = old->s[s].content;
    for (int s = 0; s < new_->count; s++) nk[s] = new_->s[s].key, nc[s] = new_->s[s].content;
    if (d->item_diff_count != new_->count) return FAIL("%d item diffs for %d sections", d->item_diff_count, new_->count);
    int duplicates = d->sections.has_duplicates;
    for (int j = 0; j < d->item_diff_count; j++) duplicates |= d->items[j].has_duplicates;
    if (d->has_duplicates != duplicates) return FAIL("has_duplicates is not that of the parts");
    return check_one(&d->sections, (view){ok, oc, old->count}, (view){nk, nc, new_->count}, 1, "sections") &&
           check_scripts(d, old, new_) && play_batch(d, old, new_);
}

/* Every property of a plain diff (dfs_list_diff_compute, or an into_list sink's
 * changes) with the parts `flags` asked for, the batch played and the script replayed;
 * the parts not asked for must be empty. Lists of at most MAX_ITEMS. */
static inline int check_flat(const dfs_list_diff *d, view old, view new_, unsigned int flags) {
    static int32_t work[MAX_ITEMS];
    static unsigned char fresh[MAX_ITEMS];
    static item_ops ops;
    if (!check_one(d, old, new_, 0, "list")) return 0;
    int batch = (flags & (DFS_LIST_BATCH | DFS_LIST_BATCH_MOVE_THEN_RELOAD)) != 0;
    if (!batch && (d->batch_delete_count || d->batch_insert_count || d->batch_move_count || d->batch_reload_count ||
                   d->batch_reload_after_move_count || d->batch_deletes || d->batch_inserts || d->batch_moves))
        return FAIL("a batch that was not asked for");
    if (!(flags & DFS_LIST_SCRIPT) && (d->script_count || d->script)) return FAIL("a script that was not asked for");
    if (!(flags & DFS_LIST_BATCH_MOVE_THEN_RELOAD) && d->batch_reload_after_move_count) return FAIL("reloads after moves");
    if (batch) {
        if (d->batch_delete_count > MAX_ITEMS || d->batch_reload_count > MAX_ITEMS || d->batch_move_count > MAX_ITEMS ||
            d->batch_insert_count > MAX_ITEMS || d->batch_reload_after_move_count > MAX_ITEMS)
            return FAIL("batch counts");
        ops.n_deletes = d->batch_delete_count, ops.n_reloads = d->batch_reload_count, ops.n_moves = d->batch_move_count;
        ops.n_inserts = d->batch_insert_count, ops.n_after = d->batch_reload_after_move_count;
        if (ops.n_deletes) memcpy(ops.deletes, d->batch_deletes, sizeof(int32_t) * (size_t)ops.n_deletes);
        if (ops.n_reloads) memcpy(ops.reloads, d->batch_reloads, sizeof(int32_t) * (size_t)ops.n_reloads);
        if (ops.n_moves) memcpy(ops.moves, d->batch_moves, 2 * sizeof(int32_t) * (size_t)ops.n_moves);
        if (ops.n_inserts) memcpy(ops.inserts, d->batch_inserts, sizeof(int32_t) * (size_t)ops.n_inserts);
        if (ops.n_after) memcpy(ops.after, d->batch_reloads_after_moves, sizeof(int32_t) * (size_t)ops.n_after);
        if (!play_items(&ops, old, new_, 0)) return 0;
    }
    if (flags & DFS_LIST_SCRIPT) {
        int count = old.count;
        for (int i = 0; i < count; i++) work[i] = i;
        memset(fresh, 0, sizeof fresh);
        if (!replay(d, work, &count, new_.count, fresh, "list")) return 0;
        for (int j = 0; j < new_.count; j++)
            if (!shows(work[j], fresh[j], old, new_, j)) return FAIL("the script, place %d", j);
    }
    return 1;
}

#undef FAIL

#endif
