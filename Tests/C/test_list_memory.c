/*
 * test_list_memory.c — a list diff too large for the memory left returns DFS_ERR_MEMORY
 * (include/diffuser.h, "Lists": the memory a diff needs is asked for before the items
 * are read) instead of stopping the process. Each case runs in a child process whose
 * address space is limited to what it has mapped plus 64 MB, and diffs a list of 20
 * million items (a diff of it holds at least 240 MB): through dfs_list_diff_compute,
 * dfs_list_diff_read, dfs_list_sections_diff_compute and an into_list run; and a list of
 * a million empty sections (whose item diffs alone take about 250 MB) through both
 * sections diffs; and an into_list run between two lists that fit one at a time but not
 * together. The items are never there to read: a call that went on would read
 * past them and crash the child.
 *
 * Under valgrind, which manages the address space itself, the limit cannot be applied
 * to the program alone, and the cases are not run (the plain run of this test runs them).
 */
#include "check.h"

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#define HUGE_COUNT ((size_t)20 * 1000 * 1000)

static uint64_t few_keys[4] = {1, 2, 3, 4};

/* Limits the address space to what is mapped now plus 64 MB. */
static int limit_address_space(void) {
    FILE *statm = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (!statm || fscanf(statm, "%lu", &pages) != 1) return -1;
    fclose(statm);
    rlim_t bytes = (rlim_t)pages * (rlim_t)sysconf(_SC_PAGESIZE) + ((rlim_t)64 << 20);
    struct rlimit limit = {bytes, bytes};
    return setrlimit(RLIMIT_AS, &limit);
}

static int compute_huge(void) {
    dfs_list_side old_list = {few_keys, NULL, 4}, new_list = {few_keys, NULL, HUGE_COUNT};
    dfs_list_diff diff;
    int status = dfs_list_diff_compute(&old_list, &new_list, NULL, NULL, DFS_LIST_BATCH, &diff);
    dfs_list_diff_free(&diff);
    return status;
}

/* A reader whose lists are counts: the list value is its count. */
static int huge_count(const void *list, size_t *count, void *ctx) {
    (void)ctx;
    *count = (size_t)(uintptr_t)list;
    return 0;
}

static int key_of(const void *list, int32_t index, uint64_t *key, void *ctx) {
    (void)list, (void)ctx;
    *key = few_keys[index % 4];
    return 0;
}

static int read_huge(void) {
    dfs_list_reader reader = {0};
    reader.count = huge_count;
    reader.key = key_of;
    dfs_list_diff diff;
    int status = dfs_list_diff_read(&reader, NULL, (const void *)(uintptr_t)4, (const void *)(uintptr_t)HUGE_COUNT,
                                    0, &diff);
    dfs_list_diff_free(&diff);
    return status;
}

static int sections_huge(void) {
    size_t old_counts[1] = {4}, new_counts[1] = {HUGE_COUNT};
    dfs_list_sections_side old_list = {0}, new_list = {0};
    old_list.section_keys = few_keys;
    old_list.item_counts = old_counts;
    old_list.item_keys = few_keys;
    old_list.section_count = 1;
    new_list.section_keys = few_keys;
    new_list.item_counts = new_counts;
    new_list.item_keys = few_keys;
    new_list.section_count = 1;
    dfs_list_sections_diff diff;
    int status = dfs_list_sections_diff_compute(&old_list, &new_list, NULL, NULL, 0, &diff);
    dfs_list_sections_diff_free(&diff);
    return status;
}

/* A million new sections, none with items. */
#define MANY_SECTIONS ((size_t)1000 * 1000)
static uint64_t *many_keys;
static size_t *no_items;

static int sections_many_compute(void) {
    dfs_list_sections_side old_list = {0}, new_list = {0};
    new_list.section_keys = many_keys;
    new_list.item_counts = no_items;
    new_list.section_count = MANY_SECTIONS;
    dfs_list_sections_diff diff;
    int status = dfs_list_sections_diff_compute(&old_list, &new_list, NULL, NULL, 0, &diff);
    dfs_list_sections_diff_free(&diff);
    return status;
}

/* A sections reader over counts: a list value is its section count, and every section
 * holds no items (the items list is the count 0). */
static int no_items_of(const void *sections, int32_t index, const void **items, void *ctx) {
    (void)sections, (void)index, (void)ctx;
    *items = NULL;
    return 0;
}

static int sections_many_read(void) {
    dfs_list_sections_reader reader = {0};
    reader.sections.count = huge_count;
    reader.sections.key = key_of;
    reader.items = no_items_of;
    reader.items_reader.count = huge_count;
    reader.items_reader.key = key_of;
    dfs_list_sections_diff diff;
    int status = dfs_list_sections_diff_read(&reader, NULL, (const void *)(uintptr_t)MANY_SECTIONS, 0, &diff);
    dfs_list_sections_diff_free(&diff);
    return status;
}

static int sink_calls;
static int32_t sink_old_count, sink_new_count;

static int count_sink(const dfs_list_diff *changes, const void *new_list, int is_first, void *ctx) {
    (void)new_list, (void)is_first, (void)ctx;
    sink_calls++;
    sink_old_count = changes->old_count;
    sink_new_count = changes->new_count;
    return 0;
}

/* An into_list node runs a list of 4, then one of 20 million: the second run fails and
 * the node keeps the list it applied, from which the next run's diff starts. */
static int into_list_huge(void) {
    dfs_list_reader reader = {0};
    reader.count = huge_count;
    reader.key = key_of;
    dfs_diffuser *node = NULL;
    if (dfs_diffuser_into_list(dfs_type_pointer(), &reader, NULL, NULL, 0, count_sink, NULL, NULL, &node) != DFS_OK)
        return 100;
    if (dfs_diffuser_run(node, (const void *)(uintptr_t)4) != DFS_OK || sink_calls != 1) return 101;
    int status = dfs_diffuser_run(node, (const void *)(uintptr_t)HUGE_COUNT);
    if (sink_calls != 1) return 102;
    const char *said = strstr(dfs_last_error(), "out of memory") ? "out of memory" : "";
    if (dfs_diffuser_run(node, (const void *)(uintptr_t)3) != DFS_OK) return 103;
    if (sink_calls != 2 || sink_old_count != 4 || sink_new_count != 3) return 104;
    dfs_diffuser_release(node);
    dfs_set_error(said); /* what the failing run said, for in_limited_child to check */
    return status;
}

/* Two lists that fit one at a time but not together (48 MB each, 96 MB both): an
 * into_list node that applied the first is run with the second in the child, and must
 * ask for both lists' memory before it reads an item. The lists are counts tagged apart. */
#define HALF_COUNT ((size_t)4 * 1000 * 1000)
#define LIST_TAG ((uintptr_t)1 << 40)
static dfs_diffuser *half_node;

static int tagged_count(const void *list, size_t *count, void *ctx) {
    (void)ctx;
    *count = (size_t)((uintptr_t)list & (LIST_TAG - 1));
    return 0;
}

/* Keys of one list are disjoint from the other's: every item is a delete or an insert,
 * so the diff needs the memory of both lists (with equal keys it would be a common prefix
 * that the memory the first run left behind could hold). */
static int disjoint_key(const void *list, int32_t index, uint64_t *key, void *ctx) {
    (void)ctx;
    *key = (uint64_t)index | (((uintptr_t)list & LIST_TAG) ? (uint64_t)1 << 40 : 0);
    return 0;
}

static int into_list_both_halves(void) {
    return dfs_diffuser_run(half_node, (const void *)((uintptr_t)HALF_COUNT | LIST_TAG));
}

/* Runs `diff` in a child under the limit; the child's exit code is its status (0 when
 * the status was DFS_ERR_MEMORY with a message that says so). */
static int in_limited_child(int (*diff)(void)) {
    fflush(NULL);
    pid_t child = fork();
    if (child == 0) {
        if (limit_address_space() != 0) _exit(90);
        int status = diff();
        int said = strstr(dfs_last_error(), "out of memory") != NULL;
        _exit(status == DFS_ERR_MEMORY && said ? 0 : status == DFS_ERR_MEMORY ? 91 : 10 + status);
    }
    int wstatus = 0;
    if (child < 0 || waitpid(child, &wstatus, 0) != child) return -1;
    if (!WIFEXITED(wstatus)) return 1000 + (WIFSIGNALED(wstatus) ? WTERMSIG(wstatus) : 0);
    return WEXITSTATUS(wstatus);
}

static int under_valgrind(void) {
    const char *preload = getenv("LD_PRELOAD");
    return preload && strstr(preload, "vgpreload");
}

int main(int argc, char **argv) {
    check_init(argc, argv);
    check_section("lists too large for the memory left: DFS_ERR_MEMORY, not a stop");
    if (under_valgrind()) {
        printf("# under valgrind: the address-space limit cannot be applied; see the plain run\n");
        return check_finish();
    }
    CHECK_INT(in_limited_child(compute_huge), 0, "dfs_list_diff_compute refuses a list it cannot hold");
    CHECK_INT(in_limited_child(read_huge), 0, "dfs_list_diff_read refuses once the reader gave the count");
    CHECK_INT(in_limited_child(sections_huge), 0, "dfs_list_sections_diff_compute refuses items it cannot hold");
    CHECK_INT(in_limited_child(into_list_huge), 0, "an into_list run fails and the node goes on");
    dfs_list_reader halves = {0};
    halves.count = tagged_count;
    halves.key = disjoint_key;
    CHECK_OK(dfs_diffuser_into_list(dfs_type_pointer(), &halves, NULL, NULL, 0, count_sink, NULL, NULL, &half_node),
             "an into_list node");
    CHECK_OK(dfs_diffuser_run(half_node, (const void *)(uintptr_t)HALF_COUNT), "its first list, before the limit");
    CHECK_INT(in_limited_child(into_list_both_halves), 0,
              "an into_list run refuses two lists that fit one at a time but not together");
    dfs_diffuser_release(half_node);
    many_keys = calloc(MANY_SECTIONS, sizeof *many_keys);
    no_items = calloc(MANY_SECTIONS, sizeof *no_items);
    for (size_t i = 0; i < MANY_SECTIONS; i++) many_keys[i] = i;
    CHECK_INT(in_limited_child(sections_many_compute), 0,
              "dfs_list_sections_diff_compute refuses more new sections than their item diffs fit in");
    CHECK_INT(in_limited_child(sections_many_read), 0, "so does dfs_list_sections_diff_read");
    free(many_keys);
    free(no_items);
    return check_finish();
}
