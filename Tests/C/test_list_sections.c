/*
 * test_list_sections.c — the sections diff through the C API
 * (dfs_list_sections_diff_compute): a hand-picked case, seeded property tests (small key
 * alphabets for sections and items, so duplicates are common; a few sections of a few
 * items, and some large) whose every result is replayed (the sections' script, then each
 * section's item script, must turn old into new) and played as one UIKit batch by a
 * simulator of its rules, with every sub-diff checked (maps, counts, updates, moves equal
 * matched minus a slow LIS); the content callback; misuse; and dfs_list_sections_diff_read
 * against it (the same arrays, the reader's order, failures, misuse). One file, as both
 * read the same generated lists of sections.
 */
#include "check.h"
#include "list_oracles.h"

#include <stddef.h>

/* ------------------------------------------------------------------------------------
 * Lists of sections and generators
 * ------------------------------------------------------------------------------------ */

/* The flat arrays of a dfs_list_sections_side. */
typedef struct flat {
    uint64_t section_keys[MAX_SECTIONS], section_contents[MAX_SECTIONS];
    size_t item_counts[MAX_SECTIONS];
    uint64_t item_keys[MAX_SECTIONS * MAX_ITEMS], item_contents[MAX_SECTIONS * MAX_ITEMS];
} flat;

static uint64_t rng_state;

static int rng_below(int n) { return oracle_below(&rng_state, n); }

static dfs_list_sections_side side_of(const sections *l, flat *f) {
    int at = 0;
    for (int s = 0; s < l->count; s++) {
        f->section_keys[s] = l->s[s].key;
        f->section_contents[s] = l->s[s].content;
        f->item_counts[s] = (size_t)l->s[s].count;
        for (int i = 0; i < l->s[s].count; i++, at++) {
            f->item_keys[at] = l->s[s].keys[i];
            f->item_contents[at] = l->s[s].contents[i];
        }
    }
    dfs_list_sections_side side = {f->section_keys, f->section_contents, f->item_counts, f->item_keys, f->item_contents,
                                   (size_t)l->count};
    return side;
}

static uint64_t small(int alphabet) { return (uint64_t)rng_below(alphabet) * 0x100000001ull; }

static void section_random(section *s, int max_items, int alphabet) {
    s->key = small(alphabet);
    s->content = rng_below(4) == 0 ? 1 : 0;
    s->count = rng_below(max_items + 1);
    for (int i = 0; i < s->count; i++) {
        s->keys[i] = small(alphabet);
        s->contents[i] = rng_below(5) == 0 ? (uint64_t)rng_below(3) : 0;
    }
}

static void item_remove(section *s, int at) { items_remove(s->keys, s->contents, &s->count, at); }

static void item_insert(section *s, int at, uint64_t key, uint64_t content) {
    items_insert(s->keys, s->contents, &s->count, at, key, content);
}

static void section_remove(sections *l, int at) {
    memmove(&l->s[at], &l->s[at + 1], (size_t)(l->count - at - 1) * sizeof(section));
    l->count--;
}

static void section_insert(sections *l, int at, const section *s) {
    memmove(&l->s[at + 1], &l->s[at], (size_t)(l->count - at) * sizeof(section));
    l->s[at] = *s;
    l->count++;
}

static void sections_random(sections *l, int count, int max_items, int alphabet) {
    l->count = count;
    for (int s = 0; s < count; s++) section_random(&l->s[s], max_items, alphabet);
}

/* `to` = `from` after a few random edits of sections and items (or unrelated). */
static void sections_edited(const sections *from, sections *to, int max_sections, int max_items, int alphabet) {
    *to = *from;
    if (rng_below(10) == 0) {
        sections_random(to, rng_below(max_sections + 1), max_items, alphabet);
        return;
    }
    int edits = rng_below(12);
    static section moving;
    for (int e = 0; e < edits; e++) {
        int s = rng_below(to->count);
        section *x = &to->s[s];
        switch (rng_below(9)) {
        case 0: if (to->count > 0) section_remove(to, s); break;
        case 1:
            if (to->count < max_sections) {
                section_random(&moving, max_items, alphabet);
                section_insert(to, rng_below(to->count + 1), &moving);
            }
            break;
        case 2:
            if (to->count > 0) {
                moving = *x;
                section_remove(to, s);
                section_insert(to, rng_below(to->count + 1), &moving);
            }
            break;
        case 3: if (to->count > 0) x->content = (uint64_t)rng_below(3); break;
        case 4: if (to->count > 0 && x->count > 0) item_remove(x, rng_below(x->count)); break;
        case 5: if (to->count > 0 && x->count < max_items) item_insert(x, rng_below(x->count + 1), small(alphabet), 0); break;
        case 6: /* an item moves within its section, or to another one */
            if (to->count > 0 && x->count > 0) {
                int i = rng_below(x->count);
                uint64_t k = x->keys[i], c = x->contents[i];
                item_remove(x, i);
                section *y = &to->s[rng_below(3) == 0 ? rng_below(to->count) : s];
                if (y->count < max_items) item_insert(y, rng_below(y->count + 1), k, c);
            }
            break;
        case 7: if (to->count > 0 && x->count > 0) x->contents[rng_below(x->count)] = (uint64_t)rng_below(4); break;
        default: /* the items of a section shuffled */
            if (to->count > 0) {
                for (int i = x->count - 1; i > 0; i--) {
                    int j = rng_below(i + 1);
                    uint64_t k = x->keys[i], c = x->contents[i];
                    x->keys[i] = x->keys[j], x->contents[i] = x->contents[j];
                    x->keys[j] = k, x->contents[j] = c;
                }
            }
            break;
        }
    }
}

/* ------------------------------------------------------------------------------------
 * Tests
 * ------------------------------------------------------------------------------------ */

static void test_example(void) {
    check_section("example");
    /* Sections A [1 2 3] and B [4 5] -> B [5 4] and A [1 3 2 6], A's header changed. */
    static sections old, new_;
    static flat fo, fn;
    old.count = 2;
    old.s[0] = (section){.key = 'A', .count = 3, .keys = {1, 2, 3}};
    old.s[1] = (section){.key = 'B', .count = 2, .keys = {4, 5}};
    new_.count = 2;
    new_.s[0] = (section){.key = 'B', .count = 2, .keys = {5, 4}};
    new_.s[1] = (section){.key = 'A', .content = 1, .count = 4, .keys = {1, 3, 2, 6}};
    dfs_list_sections_side o = side_of(&old, &fo), n = side_of(&new_, &fn);
    dfs_list_sections_diff d;
    CHECK_OK(dfs_list_sections_diff_compute(&o, &n, NULL, NULL, DFS_LIST_BATCH | DFS_LIST_SCRIPT, &d), "diff");
    CHECK(d.sections.move_count == 1 && d.sections.update_count == 1, "one section moves, A's header changed");
    CHECK(d.item_diff_count == 2 && d.items[0].move_count == 1 && d.items[1].move_count == 1 &&
              d.items[1].insert_count == 1 && d.items[1].inserts[0] == 3,
          "B: one item moves; A: one moves, 6 inserted at 3");
    CHECK(d.items[0].block == NULL && d.sections.block == NULL && d.block != NULL, "one block for everything");
    CHECK(d.batch_section_delete_count == 1 && d.batch_section_insert_count == 1 && d.batch_item_move_count == 0,
          "a moved and changed section is deleted and inserted, its items not listed");
    list_failure[0] = '\0';
    CHECK(check_all(&d, &old, &new_), "scripts and batch check out %s", list_failure);
    dfs_list_sections_diff_free(&d);
    CHECK(d.block == NULL && d.items == NULL && d.item_diff_count == 0, "free zeroes the diff");
    dfs_list_sections_diff_free(&d);
    dfs_list_sections_diff_free(NULL);

    CHECK_OK(dfs_list_sections_diff_compute(&o, &n, NULL, NULL, DFS_LIST_BATCH_MOVE_THEN_RELOAD, &d), "move then reload");
    CHECK(d.batch_section_move_count == 1 && d.batch_section_reload_after_move_count == 1 &&
              d.batch_section_reloads_after_moves[0] == d.batch_section_moves[1] && d.items[0].script_count == 0,
          "the section that moves is moved, then reloaded at its new index; no script unless asked");
    dfs_list_sections_diff_free(&d);

    dfs_list_sections_side empty = {NULL, NULL, NULL, NULL, NULL, 0};
    CHECK_OK(dfs_list_sections_diff_compute(&empty, &empty, NULL, NULL, DFS_LIST_BATCH | DFS_LIST_SCRIPT, &d), "empty");
    CHECK(d.item_diff_count == 0 && d.items == NULL && d.sections.new_count == 0, "nothing");
    dfs_list_sections_diff_free(&d);
}

static int property_cases(int cases, int max_sections, int max_items, unsigned int flags, uint64_t seed, int *dups) {
    static sections old, new_;
    static flat fo, fn;
    int failures = 0;
    for (int c = 0; c < cases; c++) {
        rng_state = seed + (uint64_t)c;
        static const int alphabets[] = {1, 2, 3, 5, 8, 16, 1000000};
        int alphabet = alphabets[rng_below(7)];
        sections_random(&old, rng_below(max_sections + 1), max_items, alphabet);
        sections_edited(&old, &new_, max_sections, max_items, alphabet);
        dfs_list_sections_side o = side_of(&old, &fo), n = side_of(&new_, &fn);
        dfs_list_sections_diff d;
        int status = dfs_list_sections_diff_compute(&o, &n, NULL, NULL, flags | DFS_LIST_SCRIPT, &d);
        list_failure[0] = '\0';
        if (status != DFS_OK || !check_all(&d, &old, &new_)) {
            if (failures++ == 0)
                printf("     case %d (seed %llu): %s %s\n", c, (unsigned long long)(seed + (uint64_t)c), list_failure,
                       status ? dfs_last_error() : "");
        }
        *dups += d.has_duplicates;
        dfs_list_sections_diff_free(&d);
    }
    return failures;
}

static void test_properties(void) {
    check_section("properties: scripts replayed, UIKit batch, minimal moves in every part");
    int cases = check_scale(2000, 200), dups = 0;
    CHECK_INT(property_cases(cases, 8, 12, DFS_LIST_BATCH, 1000, &dups), 0, "%d small cases, delete + insert", cases);
    CHECK_INT(property_cases(cases, 8, 12, DFS_LIST_BATCH_MOVE_THEN_RELOAD, 70000, &dups), 0, "%d small cases, move then reload", cases);
    CHECK(dups > cases / 5, "duplicates are common (%d of %d cases)", dups, 2 * cases);
    int large = check_scale(20, 3);
    CHECK_INT(property_cases(large, MAX_SECTIONS, MAX_ITEMS, DFS_LIST_BATCH, 900000, &dups), 0, "%d large cases", large);
}

typedef struct same_ctx {
    const sections *old, *new_;
    int section_calls, item_calls, fail_at, bad_args;
} same_ctx;

static int same_content(int32_t os, int32_t oi, int32_t ns, int32_t ni, void *ctx) {
    same_ctx *c = ctx;
    if (c->section_calls + c->item_calls + 1 == c->fail_at) {
        dfs_set_error("same_content failed on purpose");
        return -1;
    }
    if (os < 0 || os >= c->old->count || ns < 0 || ns >= c->new_->count) return c->bad_args++, 0;
    const section *a = &c->old->s[os], *b = &c->new_->s[ns];
    if (oi == -1 && ni == -1) return c->section_calls++, a->content == b->content;
    c->item_calls++;
    if (oi < 0 || oi >= a->count || ni < 0 || ni >= b->count) return c->bad_args++, 0;
    return a->contents[oi] == b->contents[ni];
}

static void test_callback(void) {
    check_section("content callback");
    static sections old, new_;
    static flat fo, fn;
    rng_state = 4242;
    sections_random(&old, 8, 10, 6);
    sections_edited(&old, &new_, 8, 10, 6);
    dfs_list_sections_side o = side_of(&old, &fo), n = side_of(&new_, &fn);
    o.section_contents = o.item_contents = n.section_contents = n.item_contents = NULL;
    same_ctx c = {&old, &new_, 0, 0, 0, 0};
    dfs_list_sections_diff d;
    CHECK_OK(dfs_list_sections_diff_compute(&o, &n, same_content, &c, DFS_LIST_BATCH | DFS_LIST_SCRIPT, &d), "diff");
    list_failure[0] = '\0';
    CHECK(check_all(&d, &old, &new_), "the callback decides updates %s", list_failure);
    CHECK_INT(c.bad_args, 0, "every index in range");
    CHECK_INT(c.section_calls, d.sections.old_count - d.sections.delete_count, "once per matched section");
    int matched = 0;
    for (int j = 0; j < d.item_diff_count; j++) matched += d.items[j].old_count - d.items[j].delete_count;
    CHECK_INT(c.item_calls, matched, "once per matched item");
    int calls = c.section_calls + c.item_calls;
    dfs_list_sections_diff_free(&d);

    c = (same_ctx){&old, &new_, 0, 0, calls, 0};
    CHECK_STATUS(dfs_list_sections_diff_compute(&o, &n, same_content, &c, 0, &d), DFS_ERR_CALLBACK, "the last call fails");
    CHECK_ERROR_HAS("on purpose", "its message comes back");
    CHECK(d.block == NULL && d.items == NULL && d.item_diff_count == 0, "the result is zeroed");
    CHECK_INT(c.section_calls + c.item_calls, calls - 1, "nothing is called after the failure");
    dfs_list_sections_diff_free(&d);
}

/* A content callback for which nothing ever changes. */
static int always_same(int32_t os, int32_t oi, int32_t ns, int32_t ni, void *ctx) {
    (void)os, (void)oi, (void)ns, (void)ni, (void)ctx;
    return 1;
}

static void test_misuse(void) {
    check_section("misuse");
    uint64_t keys[] = {1, 2}, contents[] = {0, 0};
    size_t counts[] = {1, 1}, huge[] = {1, (size_t)1 << 40}, big[] = {0x7FFFFFF0, 0x7FFFFFF0};
    size_t all[] = {SIZE_MAX, 1};
    dfs_list_sections_side ok = {keys, NULL, counts, keys, NULL, 2};
    dfs_list_sections_side cases[] = {
        {NULL, NULL, counts, keys, NULL, 2},     /* no section keys */
        {keys, NULL, NULL, keys, NULL, 2},       /* no item counts */
        {keys, NULL, counts, NULL, NULL, 2},     /* no item keys */
        {keys, contents, counts, keys, NULL, 2}, /* section contents on one side */
        {keys, NULL, counts, keys, contents, 2}, /* item contents on one side */
        {keys, NULL, counts, keys, NULL, (size_t)1 << 40},
        {keys, NULL, huge, keys, NULL, 2},
        {keys, NULL, big, keys, NULL, 2},        /* too many items in all */
        {keys, NULL, counts, keys, NULL, SIZE_MAX},
        {keys, NULL, all, keys, NULL, 2},
    };
    static const struct { int status; const char *message; } expect[] = {
        {DFS_ERR_NULL, "section_keys"}, {DFS_ERR_NULL, "item_counts"}, {DFS_ERR_NULL, "item_keys"},
        {DFS_ERR_NULL, "section_contents"}, {DFS_ERR_NULL, "item_contents"}, {DFS_ERR_ARGUMENT, "section_count"},
        {DFS_ERR_ARGUMENT, "item_counts[1]"}, {DFS_ERR_ARGUMENT, "in all"},
        {DFS_ERR_ARGUMENT, "section_count 18446744073709551615 is out of range"},
        {DFS_ERR_ARGUMENT, "item_counts[0] 18446744073709551615 is out of range"},
    };
    dfs_list_sections_diff d;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        memset(&d, 0x5a, sizeof d);
        CHECK_STATUS(dfs_list_sections_diff_compute(&cases[k], &ok, NULL, NULL, 0, &d), expect[k].status, "case %zu", k);
        CHECK_ERROR_HAS(expect[k].message, "names %s", expect[k].message);
        CHECK(d.block == NULL && d.items == NULL, "out zeroed");
    }
    CHECK_STATUS(dfs_list_sections_diff_compute(NULL, &ok, NULL, NULL, 0, &d), DFS_ERR_NULL, "NULL old list");
    CHECK_ERROR_HAS("old_list", "names it");
    CHECK_STATUS(dfs_list_sections_diff_compute(&ok, NULL, NULL, NULL, 0, &d), DFS_ERR_NULL, "NULL new list");
    CHECK_ERROR_HAS("new_list", "names it");
    CHECK_STATUS(dfs_list_sections_diff_compute(&ok, &ok, NULL, NULL, 0, NULL), DFS_ERR_NULL, "NULL out");
    CHECK_STATUS(dfs_list_sections_diff_compute(&ok, &ok, NULL, NULL, 64, &d), DFS_ERR_ARGUMENT, "unknown flags");
    CHECK_ERROR_HAS("flags", "says so");
    /* Arrays may be NULL where they would be empty. */
    size_t none[] = {0, 0};
    dfs_list_sections_side no_items = {keys, NULL, none, NULL, NULL, 2}, empty = {NULL, NULL, NULL, NULL, NULL, 0};
    dfs_list_sections_side one_sided = {keys, contents, none, NULL, contents, 2};
    CHECK_OK(dfs_list_sections_diff_compute(&no_items, &empty, NULL, NULL, DFS_LIST_SCRIPT, &d), "sections without items");
    CHECK(d.sections.delete_count == 2 && d.item_diff_count == 0, "two deletes");
    dfs_list_sections_diff_free(&d);
    CHECK_OK(dfs_list_sections_diff_compute(&one_sided, &empty, NULL, NULL, 0, &d), "contents next to an empty list");
    dfs_list_sections_diff_free(&d);
    /* With same_content, fingerprints are not read: one list's alone is no error. */
    for (size_t k = 3; k <= 4; k++) {
        CHECK_OK(dfs_list_sections_diff_compute(&cases[k], &ok, always_same, NULL, 0, &d), "case %zu beside same_content", k);
        CHECK(d.sections.delete_count == 0 && d.sections.insert_count == 0, "nothing changed");
        dfs_list_sections_diff_free(&d);
    }
}

/* ------------------------------------------------------------------------------------
 * dfs_list_sections_diff_read: the same lists read through a dfs_list_sections_reader
 * ------------------------------------------------------------------------------------ */

/* The reader's context: a log of its calls (if logging), items lent and released, and
 * the call that fails (counting every call, 0 for none). */
typedef struct read_ctx {
    test_log *log;
    const sections *old;
    int lent, released, calls, fail_at, fail_items;
} read_ctx;

static char list_name(const read_ctx *c, const sections *l) { return l == c->old ? 'o' : 'n'; }

/* A section's name in the log: its list and its key (a letter in the order test). */
static void section_name(const read_ctx *c, const section *s, char *out) {
    int in_old = s >= c->old->s && s < c->old->s + MAX_SECTIONS;
    out[0] = in_old ? 'o' : 'n';
    out[1] = (char)s->key;
    out[2] = '\0';
}

static int read_failing(read_ctx *c) {
    if (++c->calls != c->fail_at) return 0;
    char message[64];
    snprintf(message, sizeof message, "the reader fails at call %d", c->calls);
    dfs_set_error(message);
    return 9;
}

static int rs_count(const void *list, size_t *count, void *ctx) {
    read_ctx *c = ctx;
    if (c->log) log_add(c->log, "count(%c)", list_name(c, list));
    *count = (size_t)((const sections *)list)->count;
    return read_failing(c);
}

static int rs_key(const void *list, int32_t i, uint64_t *key, void *ctx) {
    read_ctx *c = ctx;
    *key = ((const sections *)list)->s[i].key;
    if (c->log) log_add(c->log, "sk(%c%c)", list_name(c, list), (char)*key);
    return read_failing(c);
}

static int rs_content(const void *list, int32_t i, uint64_t *fingerprint, void *ctx) {
    *fingerprint = ((const sections *)list)->s[i].content;
    return read_failing(ctx);
}

static int rs_same(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    read_ctx *c = ctx;
    const section *x = &((const sections *)a)->s[i], *y = &((const sections *)b)->s[j];
    if (c->log) log_add(c->log, "ss(o%c,n%c)", (char)x->key, (char)y->key);
    return read_failing(c) ? -1 : x->content == y->content;
}

static int rs_items(const void *list, int32_t index, const void **items, void *ctx) {
    read_ctx *c = ctx;
    const section *s = &((const sections *)list)->s[index];
    char name[3];
    section_name(c, s, name);
    if (c->log) log_add(c->log, "items(%s)", name);
    if (c->fail_items && ++c->calls == c->fail_at) {
        if (c->fail_items == 2) { /* stores its list, then fails */
            *items = s;
            c->lent++;
        }
        return 9; /* without a message */
    }
    int failed = c->fail_items ? 0 : read_failing(c);
    if (failed) return failed;
    *items = s;
    c->lent++;
    return 0;
}

static void rs_release(const void *items, void *ctx) {
    read_ctx *c = ctx;
    char name[3];
    section_name(c, items, name);
    if (c->log) log_add(c->log, "release(%s)", name);
    c->released++;
}

static int ri_count(const void *list, size_t *count, void *ctx) {
    read_ctx *c = ctx;
    char name[3];
    section_name(c, list, name);
    if (c->log) log_add(c->log, "count(%s)", name);
    *count = (size_t)((const section *)list)->count;
    return read_failing(c);
}

static int ri_key(const void *list, int32_t i, uint64_t *key, void *ctx) {
    read_ctx *c = ctx;
    char name[3];
    section_name(c, list, name);
    *key = ((const section *)list)->keys[i];
    if (c->log) log_add(c->log, "ik(%s%d)", name, (int)*key);
    return read_failing(c);
}

static int ri_content(const void *list, int32_t i, uint64_t *fingerprint, void *ctx) {
    *fingerprint = ((const section *)list)->contents[i];
    return read_failing(ctx);
}

static int ri_same(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    read_ctx *c = ctx;
    const section *x = a, *y = b;
    if (c->log) log_add(c->log, "si(o%c%d,n%c%d)", (char)x->key, (int)x->keys[i], (char)y->key, (int)y->keys[j]);
    return read_failing(c) ? -1 : x->contents[i] == y->contents[j];
}

/* A reader of both kinds, all three contexts `c`. */
static dfs_list_sections_reader reader_of(int fingerprints, read_ctx *c) {
    dfs_list_reader sections = {rs_count, rs_key, NULL, fingerprints ? NULL : rs_same, fingerprints ? rs_content : NULL};
    dfs_list_reader items = {ri_count, ri_key, NULL, fingerprints ? NULL : ri_same, fingerprints ? ri_content : NULL};
    dfs_list_sections_reader reader = {sections, c, rs_items, rs_release, c, items, c};
    return reader;
}

static int same_ints(const int32_t *a, const int32_t *b, int32_t count) {
    return count == 0 || memcmp(a, b, sizeof(int32_t) * (size_t)count) == 0;
}

static int same_list_diff(const dfs_list_diff *a, const dfs_list_diff *b) {
    return a->old_count == b->old_count && a->new_count == b->new_count && a->has_duplicates == b->has_duplicates &&
           a->delete_count == b->delete_count && a->insert_count == b->insert_count &&
           a->move_count == b->move_count && a->update_count == b->update_count &&
           a->script_count == b->script_count && same_ints(a->deletes, b->deletes, a->delete_count) &&
           same_ints(a->inserts, b->inserts, a->insert_count) && same_ints(a->moves, b->moves, 2 * a->move_count) &&
           same_ints(a->updates, b->updates, 2 * a->update_count) &&
           same_ints(a->old_to_new, b->old_to_new, a->old_count) &&
           same_ints(a->new_to_old, b->new_to_old, a->new_count) &&
           same_ints(a->script, b->script, 3 * a->script_count);
}

static int same_sections_diff(const dfs_list_sections_diff *a, const dfs_list_sections_diff *b) {
    if (!same_list_diff(&a->sections, &b->sections) || a->item_diff_count != b->item_diff_count ||
        a->has_duplicates != b->has_duplicates)
        return 0;
    for (int32_t j = 0; j < a->item_diff_count; j++)
        if (!same_list_diff(&a->items[j], &b->items[j])) return 0;
    return a->batch_section_delete_count == b->batch_section_delete_count &&
           a->batch_section_insert_count == b->batch_section_insert_count &&
           a->batch_section_move_count == b->batch_section_move_count &&
           a->batch_section_reload_count == b->batch_section_reload_count &&
           a->batch_section_reload_after_move_count == b->batch_section_reload_after_move_count &&
           a->batch_item_delete_count == b->batch_item_delete_count &&
           a->batch_item_insert_count == b->batch_item_insert_count &&
           a->batch_item_move_count == b->batch_item_move_count &&
           a->batch_item_reload_count == b->batch_item_reload_count &&
           a->batch_item_reload_after_move_count == b->batch_item_reload_after_move_count &&
           same_ints(a->batch_section_deletes, b->batch_section_deletes, a->batch_section_delete_count) &&
           same_ints(a->batch_section_inserts, b->batch_section_inserts, a->batch_section_insert_count) &&
           same_ints(a->batch_section_moves, b->batch_section_moves, 2 * a->batch_section_move_count) &&
           same_ints(a->batch_section_reloads, b->batch_section_reloads, a->batch_section_reload_count) &&
           same_ints(a->batch_section_reloads_after_moves, b->batch_section_reloads_after_moves,
                     a->batch_section_reload_after_move_count) &&
           same_ints(a->batch_item_deletes, b->batch_item_deletes, 2 * a->batch_item_delete_count) &&
           same_ints(a->batch_item_inserts, b->batch_item_inserts, 2 * a->batch_item_insert_count) &&
           same_ints(a->batch_item_moves, b->batch_item_moves, 4 * a->batch_item_move_count) &&
           same_ints(a->batch_item_reloads, b->batch_item_reloads, 2 * a->batch_item_reload_count) &&
           same_ints(a->batch_item_reloads_after_moves, b->batch_item_reloads_after_moves,
                     2 * a->batch_item_reload_after_move_count);
}

static void test_read(void) {
    check_section("dfs_list_sections_diff_read: the same diff as from flat arrays");
    static sections old, new_;
    static flat fo, fn;
    int cases = check_scale(1000, 100), differ = 0, unbalanced = 0;
    for (int k = 0; k < cases; k++) {
        rng_state = 555000 + (uint64_t)k;
        static const int alphabets[] = {1, 2, 3, 5, 8, 1000000};
        int alphabet = alphabets[rng_below(6)];
        sections_random(&old, rng_below(9), 10, alphabet);
        sections_edited(&old, &new_, 8, 10, alphabet);
        dfs_list_sections_side o = side_of(&old, &fo), n = side_of(&new_, &fn);
        unsigned int flags = (k % 2 ? DFS_LIST_BATCH_MOVE_THEN_RELOAD : DFS_LIST_BATCH) | DFS_LIST_SCRIPT;
        dfs_list_sections_diff read, computed;
        read_ctx c = {NULL, &old, 0, 0, 0, 0, 0};
        dfs_list_sections_reader fingerprints = reader_of(1, &c);
        CHECK_OK(dfs_list_sections_diff_read(&fingerprints, &old, &new_, flags, &read), "case %d", k);
        CHECK_OK(dfs_list_sections_diff_compute(&o, &n, NULL, NULL, flags, &computed), "case %d", k);
        differ += !same_sections_diff(&read, &computed);
        unbalanced += c.lent != c.released;
        dfs_list_sections_diff_free(&read);
        dfs_list_sections_diff_free(&computed);
    }
    CHECK_INT(differ, 0, "%d cases: every array equal", cases);
    CHECK_INT(unbalanced, 0, "every list of items lent is released");

    check_section("dfs_list_sections_diff_read: the header's order");
    /* A [1 2] B [3] C [4 5] -> A [2 1] D [6] C [4 5]: A and C paired, B deleted, D new. */
    static test_log log;
    old.count = 3;
    old.s[0] = (section){.key = 'A', .count = 2, .keys = {1, 2}};
    old.s[1] = (section){.key = 'B', .count = 1, .keys = {3}};
    old.s[2] = (section){.key = 'C', .count = 2, .keys = {4, 5}};
    new_.count = 3;
    new_.s[0] = (section){.key = 'A', .count = 2, .keys = {2, 1}};
    new_.s[1] = (section){.key = 'D', .count = 1, .keys = {6}};
    new_.s[2] = (section){.key = 'C', .count = 2, .keys = {4, 5}, .contents = {0, 1}};
    read_ctx c = {&log, &old, 0, 0, 0, 0, 0};
    dfs_list_sections_reader r = reader_of(0, &c);
    dfs_list_sections_diff d;
    log_clear(&log);
    CHECK_OK(dfs_list_sections_diff_read(&r, &old, &new_, 0, &d), "read");
    /* Without count and release: the calls Swift's ListSectionsDiff makes of its
     * functions (ListSectionsTests.testCallOrder, Java ListSectionsDiffTest). */
    CHECK_LOG(&log,
              "count(o) count(n) sk(oA) sk(nA) ss(oA,nA) sk(oB) sk(nD) sk(oC) sk(nC) ss(oC,nC) sk(oB) sk(nD) "
              "items(oA) items(nA) count(oA) count(nA) ik(oA1) ik(nA2) ik(oA2) ik(nA1) ik(oA1) ik(oA2) ik(nA2) "
              "ik(nA1) si(oA2,nA2) si(oA1,nA1) release(nA) release(oA) "
              "items(nD) count(nD) release(nD) "
              "items(oC) items(nC) count(oC) count(nC) ik(oC4) ik(nC4) si(oC4,nC4) ik(oC5) ik(nC5) si(oC5,nC5) "
              "release(nC) release(oC)",
              "sections, then each new section's items, old before new");
    CHECK(d.sections.delete_count == 1 && d.sections.insert_count == 1 && d.items[0].move_count == 1 &&
              d.items[1].insert_count == 1 && d.items[2].update_count == 1,
          "B deleted, D inserted, A's items move, C's 5 changed");
    dfs_list_sections_diff_free(&d);

    check_section("dfs_list_sections_diff_read: failures");
    int calls = c.calls;
    int released = 0;
    for (int at = 1; at <= calls; at++) {
        c = (read_ctx){NULL, &old, 0, 0, 0, at, 0};
        memset(&d, 0x5a, sizeof d);
        int status = dfs_list_sections_diff_read(&r, &old, &new_, DFS_LIST_BATCH, &d);
        CHECK(status == DFS_ERR_CALLBACK && d.block == NULL && d.items == NULL, "call %d fails the diff", at);
        CHECK(strstr(dfs_last_error(), "the reader fails") != NULL, "call %d: its message (%s)", at, dfs_last_error());
        CHECK(c.calls == at, "call %d: nothing asked after it (%d calls)", at, c.calls);
        released += c.lent == c.released;
    }
    CHECK_INT(released, calls, "every list of items lent before a failure is released");
    /* Call 14 is items(nA): items fails for the new section, the old one's are lent. */
    c = (read_ctx){NULL, &old, 0, 0, 0, 14, 1};
    CHECK_STATUS(dfs_list_sections_diff_read(&r, &old, &new_, 0, &d), DFS_ERR_CALLBACK, "items fails");
    CHECK_ERROR_HAS("the sections reader's items", "names the function (%s)", dfs_last_error());
    CHECK(c.lent == 1 && c.released == 1, "the old section's items released (%d lent, %d released)", c.lent, c.released);
    c = (read_ctx){NULL, &old, 0, 0, 0, 14, 2};
    CHECK_STATUS(dfs_list_sections_diff_read(&r, &old, &new_, 0, &d), DFS_ERR_CALLBACK, "items stores and fails");
    CHECK(c.lent == 2 && c.released == 2, "the list it stored is released too (%d lent, %d released)", c.lent, c.released);

    check_section("dfs_list_sections_diff_read: misuse");
    c = (read_ctx){NULL, &old, 0, 0, 0, 0, 0};
    dfs_list_sections_reader valid = reader_of(0, &c);
    r = valid;
    CHECK_STATUS(dfs_list_sections_diff_read(NULL, &old, &new_, 0, &d), DFS_ERR_NULL, "NULL reader");
    CHECK_ERROR_HAS("reader", "names it");
    CHECK_STATUS(dfs_list_sections_diff_read(&r, &old, &new_, 0, NULL), DFS_ERR_NULL, "NULL out");
    CHECK_STATUS(dfs_list_sections_diff_read(&r, &old, &new_, 1u << 9, &d), DFS_ERR_ARGUMENT, "unknown flags");
    r.items = NULL;
    CHECK_STATUS(dfs_list_sections_diff_read(&r, &old, &new_, 0, &d), DFS_ERR_NULL, "NULL items");
    CHECK_ERROR_HAS("reader->items", "names it");
    r = valid;
    r.sections.count = NULL;
    CHECK_STATUS(dfs_list_sections_diff_read(&r, &old, &new_, 0, &d), DFS_ERR_NULL, "NULL sections.count");
    CHECK_ERROR_HAS("reader->sections->count", "names it");
    r = valid;
    r.items_reader.key = NULL;
    CHECK_STATUS(dfs_list_sections_diff_read(&r, &old, &new_, 0, &d), DFS_ERR_NULL, "NULL items_reader.key");
    CHECK_ERROR_HAS("reader->items_reader->key", "names it");
    CHECK_INT(c.calls, 0, "nothing was asked");
    read_ctx own[3] = {{NULL, &old, 0, 0, 0, 0, 0}, {NULL, &old, 0, 0, 0, 0, 0}, {NULL, &old, 0, 0, 0, 0, 0}};
    r = valid;
    r.sections_ctx = &own[0], r.items_ctx = &own[1], r.items_reader_ctx = &own[2];
    CHECK_OK(dfs_list_sections_diff_read(&r, &old, &new_, 0, &d), "three contexts");
    CHECK(own[0].calls == 12 && own[1].lent == 5 && own[1].released == 5 && own[1].calls == 5 && own[2].calls == 21,
          "each function gets its own reader's ctx (%d, %d, %d calls)", own[0].calls, own[1].calls, own[2].calls);
    dfs_list_sections_diff_free(&d);
    r = valid;
    r.items_release = NULL;
    CHECK_OK(dfs_list_sections_diff_read(&r, &old, &new_, 0, &d), "items_release may be NULL");
    dfs_list_sections_diff_free(&d);
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    test_example();
    test_properties();
    test_callback();
    test_misuse();
    test_read();
    return check_finish();
}
