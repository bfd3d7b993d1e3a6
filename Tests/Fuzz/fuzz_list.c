/*
 * fuzz_list.c — the list operations of fuzz_api.c, included by it (one translation
 * unit: they use its program reader, records, callback contexts and status checks).
 *
 * OP_LIST_DIFF: dfs_list_diff_compute on two lists read from the input (or generated
 * from a seed byte: one list and an edited copy), with keys from a small alphabet (so
 * duplicates are common), content by fingerprints, a callback or not at all, any flags,
 * and misuse (NULL sides, out or keys, fingerprints on one side, counts too large,
 * unknown flags). The callback checks its indices, may fail, and may run a diff of its
 * own inside the outer one.
 * OP_LIST_SECTIONS: dfs_list_sections_diff_compute, the same way for lists of sections.
 * OP_INTO_LIST: dfs_diffuser_into_list over a harness type: a value stands for one of
 * eight lists of its node (by its value key), read through a reader context that may
 * fail and may compare hashed keys with same_key; the sink is a callback context like
 * any effect (it may fail and run its own program: reentrant runs, releases).
 *
 * Oracles (Tests/C/list_oracles.h): every successful diff is checked whole (maps,
 * counts, updates, moves equal matched minus a slow LIS, the batch played by UIKit's
 * rules, the script replayed with every index in range, parts not asked for empty); a
 * failure leaves *out zeroed; a sink gets changes from exactly the list it applied last
 * (none before its first success), with is_first set exactly then; the reader is asked
 * only about indices below the count it gave.
 *
 * One file for the three list operations because they share the random lists at the
 * top (sections and the into_list node's lists are made by the same reader and
 * generator) and the oracles of list_oracles.h: the list half of the interpreter, as
 * fuzz_loop.c is the loop half.
 */
#include "../C/list_oracles.h"

/* ------------------------------------------------------------------------------------
 * Lists from the input
 * ------------------------------------------------------------------------------------ */

typedef struct flist {
    int count;
    uint64_t keys[MAX_ITEMS], contents[MAX_ITEMS];
} flist;

static uint64_t list_rng;

static int list_below(int n) { return oracle_below(&list_rng, n); }

static uint64_t list_key(int small) { return (uint64_t)small * 0x100000001ull; }

/* A list of up to 15 items spelled out by the input: one byte per item (key in the low
 * bits, a content bit on top). */
static void flist_read(flist *l, int alphabet) {
    l->count = u8() % 16;
    for (int i = 0; i < l->count; i++) {
        uint8_t b = u8();
        l->keys[i] = list_key(b % alphabet);
        l->contents[i] = b >> 7;
    }
}

/* A random list, or `from` edited: removes, inserts, moves, content changes, shuffles. */
static void flist_random(flist *l, int count, int alphabet) {
    l->count = count;
    for (int i = 0; i < count; i++) {
        l->keys[i] = list_key(list_below(alphabet));
        l->contents[i] = list_below(4) == 0;
    }
}

static void flist_edited(const flist *from, flist *to, int alphabet) {
    *to = *from;
    if (list_below(6) == 0) {
        for (int i = to->count - 1; i > 0; i--) {
            int j = list_below(i + 1);
            uint64_t k = to->keys[i], c = to->contents[i];
            to->keys[i] = to->keys[j], to->contents[i] = to->contents[j], to->keys[j] = k, to->contents[j] = c;
        }
        return;
    }
    for (int e = list_below(8); e > 0; e--) {
        int n = to->count, at = list_below(n);
        switch (list_below(4)) {
        case 0:
            if (n > 0) items_remove(to->keys, to->contents, &to->count, at);
            break;
        case 1:
            if (n < MAX_ITEMS) {
                at = list_below(n + 1);
                items_insert(to->keys, to->contents, &to->count, at, list_key(list_below(alphabet)), 0);
            }
            break;
        case 2:
            if (n > 1) {
                int b = list_below(n);
                uint64_t k = to->keys[at], c = to->contents[at];
                to->keys[at] = to->keys[b], to->contents[at] = to->contents[b], to->keys[b] = k, to->contents[b] = c;
            }
            break;
        default:
            if (n > 0) to->contents[at] ^= 1;
            break;
        }
    }
}

static view view_of(const flist *l, int with_contents) {
    static const uint64_t zeros[MAX_ITEMS];
    return (view){l->keys, with_contents ? l->contents : zeros, l->count};
}

/* ------------------------------------------------------------------------------------
 * OP_LIST_DIFF
 * ------------------------------------------------------------------------------------ */

typedef struct list_same_ctx {
    const flist *old, *new_;
    const uint64_t *old_contents, *new_contents; /* of the sections op: flat */
    int calls, fail_at, failed, nest;
} list_same_ctx;

static void nested_diff(void) {
    uint64_t a[] = {1, 2, 3}, b[] = {3, 1};
    dfs_list_side o = {a, NULL, 3}, n = {b, NULL, 2};
    dfs_list_diff d;
    dfs_status s = dfs_list_diff_compute(&o, &n, NULL, NULL, DFS_LIST_SCRIPT | DFS_LIST_BATCH, &d);
    if (s != DFS_OK || d.delete_count != 1 || d.move_count != 1) fail("a diff inside a content callback went wrong");
    dfs_list_diff_free(&d);
}

static int list_same(int32_t i, int32_t j, void *ctx) {
    list_same_ctx *c = ctx;
    if (c->failed) fail("list same_content called after it failed");
    if (i < 0 || i >= c->old->count || j < 0 || j >= c->new_->count) fail("list same_content(%d, %d) out of range", i, j);
    if (c->old->keys[i] != c->new_->keys[j]) fail("list same_content(%d, %d) of items with different keys", i, j);
    if (c->nest && c->calls == 0) nested_diff();
    if (++c->calls == c->fail_at) {
        c->failed = 1;
        return -1 - (c->fail_at & 3);
    }
    return c->old->contents[i] == c->new_->contents[j];
}

/* The flags byte: bits 0-2 dfs_list_flags, bit 3 an unknown flag. */
static unsigned int list_flags(uint8_t f, int *unknown) {
    *unknown = (f & 8) != 0;
    return (f & 7) | (*unknown ? 64u : 0u);
}

static void check_zeroed(const void *out, size_t size, const char *call) {
    static const unsigned char zero[sizeof(dfs_list_sections_diff)];
    if (memcmp(out, zero, size) != 0) fail("%s failed but *out is not zeroed", call);
}

static void op_list_diff(void) {
    static flist old, new_;
    uint8_t f = u8(), g = u8(), m = u8();
    int alphabet = 1 + (g & 7), unknown;
    unsigned int flags = list_flags(f, &unknown);
    if (g & 0x80) {
        list_rng = u8();
        flist_random(&old, list_below(MAX_ITEMS + 1), alphabet);
        flist_edited(&old, &new_, alphabet);
    } else {
        flist_read(&old, alphabet);
        flist_read(&new_, alphabet);
    }
    int content = (f >> 4) & 3; /* 0 none, 1 fingerprints, 2 callback, 3 fingerprints of one list */
    dfs_list_side o = {old.keys, content & 1 ? old.contents : NULL, (size_t)old.count};
    dfs_list_side n = {new_.keys, content == 1 ? new_.contents : NULL, (size_t)new_.count};
    list_same_ctx same = {&old, &new_, NULL, NULL, 0, content == 2 ? (m & 15) : 0, 0, (m & 0x10) != 0};
    unsigned errors = unknown ? B(DFS_ERR_ARGUMENT) : 0;
    if (content == 3 && new_.count > 0) errors |= B(DFS_ERR_NULL);
    int misuse = (f >> 6) == 3 ? m >> 5 : 0;
    dfs_list_side *po = &o, *pn = &n;
    dfs_list_diff d, *out = &d;
    switch (misuse) {
    case 1: po = NULL; errors |= B(DFS_ERR_NULL); break;
    case 2: pn = NULL; errors |= B(DFS_ERR_NULL); break;
    case 3: out = NULL; errors |= B(DFS_ERR_NULL); break;
    case 4: if (old.count > 0) { o.keys = NULL; errors |= B(DFS_ERR_NULL); } break;
    case 5: n.count = (m & 7) == 7 ? SIZE_MAX : (size_t)1 << (31 + (m & 7)); errors |= B(DFS_ERR_ARGUMENT); break;
    default: break;
    }
    say("dfs_list_diff_compute(%d -> %d items, alphabet %d, flags %#x, content %d, misuse %d)", old.count, new_.count,
        alphabet, flags, content, misuse);
    memset(&d, 0x5a, sizeof d);
    dfs_status s = dfs_list_diff_compute(po, pn, content == 2 ? list_same : NULL, &same, flags, out);
    if (!errors && same.failed) errors = B(DFS_ERR_CALLBACK);
    check_status(s, errors, 0, 0, "dfs_list_diff_compute");
    if (s != DFS_OK) {
        if (out) check_zeroed(&d, sizeof d, "dfs_list_diff_compute");
        dfs_list_diff_free(out);
        return;
    }
    list_failure[0] = '\0';
    if (!check_flat(&d, view_of(&old, content != 0), view_of(&new_, content != 0), flags))
        fail("dfs_list_diff_compute (%d -> %d, flags %#x): %s", old.count, new_.count, flags, list_failure);
    dfs_list_diff_free(&d);
    check_zeroed(&d, sizeof d, "dfs_list_diff_free (it must zero)");
}

/* ------------------------------------------------------------------------------------
 * OP_LIST_SECTIONS
 * ------------------------------------------------------------------------------------ */

typedef struct sections_flat {
    uint64_t section_keys[MAX_SECTIONS], section_contents[MAX_SECTIONS];
    size_t item_counts[MAX_SECTIONS];
    uint64_t item_keys[MAX_SECTIONS * MAX_ITEMS], item_contents[MAX_SECTIONS * MAX_ITEMS];
} sections_flat;

static dfs_list_sections_side sections_side(const sections *l, sections_flat *f) {
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
    return (dfs_list_sections_side){f->section_keys, f->section_contents, f->item_counts, f->item_keys,
                                    f->item_contents, (size_t)l->count};
}

/* Up to 5 sections from the input (or, from a seed, up to 24 random ones), and the new
 * list: edited from the old one, by the input or by the seed. */
static void sections_read(sections *l, int alphabet, int generated) {
    l->count = generated ? list_below(25) : u8() % 6;
    for (int s = 0; s < l->count; s++) {
        section *x = &l->s[s];
        flist items;
        if (generated) {
            x->key = list_key(list_below(alphabet)), x->content = list_below(4) == 0;
            flist_random(&items, list_below(13), alphabet);
        } else {
            uint8_t b = u8();
            x->key = list_key(b % alphabet), x->content = b >> 7;
            flist_read(&items, alphabet);
        }
        x->count = items.count;
        memcpy(x->keys, items.keys, sizeof(uint64_t) * (size_t)items.count);
        memcpy(x->contents, items.contents, sizeof(uint64_t) * (size_t)items.count);
    }
}

static void sections_edit(const sections *from, sections *to, int alphabet) {
    *to = *from;
    for (int e = list_below(6); e > 0 && to->count > 0; e--) {
        int a = list_below(to->count), b = list_below(to->count);
        static flist items, edited;
        switch (list_below(4)) {
        case 0: { section x = to->s[a]; to->s[a] = to->s[b]; to->s[b] = x; break; }
        case 1: to->s[a] = to->s[--to->count]; break;
        case 2: to->s[a].content ^= 1; break;
        default:
            items.count = to->s[a].count;
            memcpy(items.keys, to->s[a].keys, sizeof items.keys);
            memcpy(items.contents, to->s[a].contents, sizeof items.contents);
            flist_edited(&items, &edited, alphabet);
            to->s[a].count = edited.count;
            memcpy(to->s[a].keys, edited.keys, sizeof edited.keys);
            memcpy(to->s[a].contents, edited.contents, sizeof edited.contents);
            break;
        }
    }
}

typedef struct sections_same_ctx {
    const sections *old, *new_;
    int calls, fail_at, failed, with_contents;
} sections_same_ctx;

static int sections_same(int32_t os, int32_t oi, int32_t ns, int32_t ni, void *ctx) {
    sections_same_ctx *c = ctx;
    if (c->failed) fail("sections same_content called after it failed");
    if (os < 0 || os >= c->old->count || ns < 0 || ns >= c->new_->count) fail("sections same_content: section out of range");
    const section *a = &c->old->s[os], *b = &c->new_->s[ns];
    if (a->key != b->key) fail("sections same_content of sections with different keys");
    if ((oi == -1) != (ni == -1)) fail("sections same_content(%d, %d, %d, %d)", os, oi, ns, ni);
    if (oi != -1 && (oi < 0 || oi >= a->count || ni < 0 || ni >= b->count || a->keys[oi] != b->keys[ni]))
        fail("sections same_content: item out of range or of another key");
    if (++c->calls == c->fail_at) {
        c->failed = 1;
        return -1;
    }
    return oi == -1 ? a->content == b->content : a->contents[oi] == b->contents[ni];
}

/* The contents the core compared: those of the lists, or none (all equal). */
static void sections_without_contents(sections *l) {
    for (int s = 0; s < l->count; s++) {
        l->s[s].content = 0;
        for (int i = 0; i < l->s[s].count; i++) l->s[s].contents[i] = 0;
    }
}

static void op_list_sections(void) {
    static sections old, new_;
    static sections_flat fo, fn;
    uint8_t f = u8(), g = u8(), m = u8();
    int alphabet = 1 + (g & 7), unknown, generated = (g & 0x80) != 0;
    unsigned int flags = list_flags(f, &unknown);
    if (generated) list_rng = u8();
    sections_read(&old, alphabet, generated);
    if (generated || (g & 0x40)) {
        if (!generated) list_rng = u8();
        sections_edit(&old, &new_, alphabet);
    } else {
        sections_read(&new_, alphabet, 0);
    }
    int content = (f >> 4) & 3; /* 0 none, 1 fingerprints, 2 callback, 3 item fingerprints of one list */
    dfs_list_sections_side o = sections_side(&old, &fo), n = sections_side(&new_, &fn);
    unsigned errors = unknown ? B(DFS_ERR_ARGUMENT) : 0;
    if (content == 0 || content == 2) o.section_contents = o.item_contents = n.section_contents = n.item_contents = NULL;
    if (content == 3) {
        n.item_contents = NULL;
        int items = 0;
        for (int s = 0; s < new_.count; s++) items += new_.s[s].count;
        if (items > 0) errors |= B(DFS_ERR_NULL);
    }
    int misuse = (f >> 6) == 3 ? m >> 5 : 0;
    size_t huge[] = {(m & 1) ? SIZE_MAX : (size_t)1 << 33};
    dfs_list_sections_side *po = &o, *pn = &n;
    dfs_list_sections_diff d, *out = &d;
    switch (misuse) {
    case 1: po = NULL; errors |= B(DFS_ERR_NULL); break;
    case 2: out = NULL; errors |= B(DFS_ERR_NULL); break;
    case 3: if (old.count > 0) { o.section_keys = NULL; errors |= B(DFS_ERR_NULL); } break;
    case 4: if (new_.count > 0) { n.item_counts = NULL; errors |= B(DFS_ERR_NULL); } break;
    case 5: n.item_counts = huge, n.section_count = 1; errors |= B(DFS_ERR_ARGUMENT); break;
    case 6: n.section_count = SIZE_MAX; errors |= B(DFS_ERR_ARGUMENT); break;
    default: break;
    }
    sections_same_ctx same = {&old, &new_, 0, content == 2 ? (m & 15) : 0, 0, 1};
    say("dfs_list_sections_diff_compute(%d -> %d sections, alphabet %d, flags %#x, content %d, misuse %d)", old.count,
        new_.count, alphabet, flags, content, misuse);
    memset(&d, 0x5a, sizeof d);
    dfs_status s = dfs_list_sections_diff_compute(po, pn, content == 2 ? sections_same : NULL, &same, flags, out);
    if (!errors && same.failed) errors = B(DFS_ERR_CALLBACK);
    check_status(s, errors, 0, 0, "dfs_list_sections_diff_compute");
    if (s != DFS_OK) {
        if (out) check_zeroed(&d, sizeof d, "dfs_list_sections_diff_compute");
        dfs_list_sections_diff_free(out);
        return;
    }
    if (content == 0) {
        sections_without_contents(&old);
        sections_without_contents(&new_);
    }
    list_failure[0] = '\0';
    /* check_all replays the scripts and plays the batch: ask for both when checking. */
    if ((flags & DFS_LIST_SCRIPT) && (flags & 3) && !check_all(&d, &old, &new_))
        fail("dfs_list_sections_diff_compute (%d -> %d sections, flags %#x): %s", old.count, new_.count, flags, list_failure);
    if (d.item_diff_count != new_.count) fail("dfs_list_sections_diff_compute: %d item diffs", d.item_diff_count);
    if (!(flags & 3) && (d.batch_section_deletes || d.batch_item_deletes || d.batch_section_insert_count))
        fail("dfs_list_sections_diff_compute: a batch that was not asked for");
    dfs_list_sections_diff_free(&d);
    check_zeroed(&d, sizeof d, "dfs_list_sections_diff_free (it must zero)");
}

/* ------------------------------------------------------------------------------------
 * OP_INTO_LIST
 * ------------------------------------------------------------------------------------ */

#define NODE_LISTS 8

/* The state of an into_list node's reader and sink contexts (cb->extra). */
typedef struct list_node {
    trec *type;
    flist lists[NODE_LISTS]; /* a value with value key k is lists[k] */
    unsigned int flags;
    int content;  /* 0 none, 1 fingerprints (content), 2 same_content */
    int hashed;   /* keys are hashed to one bit, same_key compares the real ones */
    flist shown;  /* what the sink applied last */
    int shown_set;
} list_node;

static const flist *node_list(cb *c, const void *v, const char *who) {
    list_node *n = c->extra;
    check_value(n->type, v, who);
    return &n->lists[value_key(n->type, v)];
}

static cb *reader_enter(void *ctx, const char *who) {
    cb *c = cb_enter(ctx, who);
    if (c->kind != CB_LIST_READER) fail("%s called with the ctx of a %s", who, cb_kind_names[c->kind]);
    enter_diffuser_callback(c, who);
    c->calls++;
    return c;
}

static int reader_fails(cb *c, const void *v) {
    if (!should_fail(c, v)) return 0;
    if (c->set_error) dfs_set_error("fuzz: the list reader failed");
    return 1;
}

static int lr_count(const void *list, size_t *count, void *ctx) {
    cb *c = reader_enter(ctx, "list count");
    const flist *l = node_list(c, list, "list count");
    if (reader_fails(c, list)) return 3;
    *count = (size_t)l->count;
    return 0;
}

static void index_check(cb *c, const flist *l, int32_t i, const char *who) {
    if (i < 0 || i >= l->count) fail("%s #%d: index %d of a list of %d", who, c->id, i, l->count);
}

static int lr_key(const void *list, int32_t index, uint64_t *key, void *ctx) {
    cb *c = reader_enter(ctx, "list key");
    const flist *l = node_list(c, list, "list key");
    index_check(c, l, index, "list key");
    if (reader_fails(c, list)) return -2;
    list_node *n = c->extra;
    *key = n->hashed ? l->keys[index] & 1 : l->keys[index];
    return 0;
}

static int lr_same_key(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    cb *c = reader_enter(ctx, "list same_key");
    const flist *x = node_list(c, a, "list same_key"), *y = node_list(c, b, "list same_key");
    index_check(c, x, i, "list same_key");
    index_check(c, y, j, "list same_key");
    if ((x->keys[i] & 1) != (y->keys[j] & 1)) fail("list same_key #%d asked about keys with different hashes", c->id);
    if (reader_fails(c, b)) return -1;
    return x->keys[i] == y->keys[j];
}

static int lr_same_content(const void *a, int32_t i, const void *b, int32_t j, void *ctx) {
    cb *c = reader_enter(ctx, "list same_content");
    const flist *x = node_list(c, a, "list same_content"), *y = node_list(c, b, "list same_content");
    index_check(c, x, i, "list same_content");
    index_check(c, y, j, "list same_content");
    if (x->keys[i] != y->keys[j]) fail("list same_content #%d of items with different keys", c->id);
    if (reader_fails(c, b)) return -4;
    return x->contents[i] == y->contents[j];
}

static int lr_content(const void *list, int32_t index, uint64_t *fingerprint, void *ctx) {
    cb *c = reader_enter(ctx, "list content");
    const flist *l = node_list(c, list, "list content");
    index_check(c, l, index, "list content");
    if (reader_fails(c, list)) return 6;
    *fingerprint = l->contents[index];
    return 0;
}

static int list_sink(const dfs_list_diff *changes, const void *new_list, int is_first, void *ctx) {
    cb *c = cb_enter(ctx, "list sink");
    if (c->kind != CB_LIST_SINK) fail("list sink called with the ctx of a %s", cb_kind_names[c->kind]);
    enter_diffuser_callback(c, "list sink");
    if (changes == NULL) fail("list sink #%d: changes is NULL", c->id);
    list_node *n = c->extra;
    const flist *l = node_list(c, new_list, "list sink");
    say("list sink #%d (list %d, %d items, is_first %d: -%d +%d ~%d >%d)", c->id, value_key(n->type, new_list), l->count,
        is_first, changes->delete_count, changes->insert_count, changes->update_count, changes->move_count);
    if (is_first != !n->shown_set) fail("list sink #%d: is_first %d, but %s list was applied", c->id, is_first, n->shown_set ? "a" : "no");
    c->calls++;
    c->active++;
    run_action(c); /* the changes stay borrowed for the whole call */
    c->active--;
    static flist none;
    list_failure[0] = '\0';
    if (!check_flat(changes, view_of(n->shown_set ? &n->shown : &none, n->content != 0), view_of(l, n->content != 0), n->flags))
        fail("list sink #%d: changes from the list applied last (%d items) to this one (%d): %s", c->id,
             n->shown_set ? n->shown.count : 0, l->count, list_failure);
    if (should_fail(c, new_list)) {
        if (c->set_error) dfs_set_error("fuzz: the list sink failed");
        return 4;
    }
    n->shown = *l;
    n->shown_set = 1;
    c->successes++;
    return 0;
}

static void op_into_list(void) {
    uint8_t f = u8(), g = u8();
    pick tp = pick_type();
    trec *t = type_of_type_pick(tp);
    cb *r = make_cb(CB_LIST_READER, t, NULL);
    cb *k = make_cb(CB_LIST_SINK, t, NULL);
    if (r == NULL || k == NULL) {
        if (r) discard_cb(r);
        if (k) discard_cb(k);
        return;
    }
    list_node *n = calloc(1, sizeof *n);
    if (n == NULL) abort();
    r->extra = k->extra = n; /* freed with the sink's context, at the end of the input */
    n->type = t;
    int unknown;
    n->flags = list_flags(f, &unknown) & ~64u;
    n->content = (f >> 4) % 3;
    n->hashed = (f & 0x40) != 0;
    list_rng = g;
    int alphabet = 1 + (g & 7);
    flist_random(&n->lists[0], list_below(MAX_ITEMS / 2 + 1), alphabet);
    for (int i = 1; i < NODE_LISTS; i++) flist_edited(&n->lists[list_below(i)], &n->lists[i], alphabet);
    dfs_list_reader reader = {lr_count, lr_key, n->hashed ? lr_same_key : NULL, n->content == 2 ? lr_same_content : NULL,
                              n->content == 1 ? lr_content : NULL};
    int null_reader = (f & 0x88) == 0x88, null_sink = (g & 0xF0) == 0xF0, null_out = (f & 0x88) == 0x08 && (g & 8);
    unsigned errors = handle_errors(tp.v) | (null_reader || null_sink || null_out ? B(DFS_ERR_NULL) : 0);
    dfs_diffuser *d = (dfs_diffuser *)(uintptr_t)1;
    say("dfs_diffuser_into_list(type #%d, reader #%d, sink #%d, flags %#x, content %d, hashed %d)", t->id, r->id, k->id,
        n->flags, n->content, n->hashed);
    dfs_status s = dfs_diffuser_into_list(tp.h, null_reader ? NULL : &reader, r, destroy_of(r), n->flags,
                                          null_sink ? NULL : list_sink, k, destroy_of(k), null_out ? NULL : &d);
    check_status(s, errors, tp.v == V_MAYBE, 0, "dfs_diffuser_into_list");
    if (s != DFS_OK) {
        if (!null_out && d != NULL) fail("dfs_diffuser_into_list failed but *out is not NULL");
        check_destroyed(r, "dfs_diffuser_into_list");
        check_destroyed(k, "dfs_diffuser_into_list");
        return;
    }
    check_alive(r, "dfs_diffuser_into_list");
    check_alive(k, "dfs_diffuser_into_list");
    drec *rec = add_diffuser(d, t);
    r->self_d = k->self_d = rec;
}
