// The header from C++: it compiles without a warning (-Wall -Wextra -pedantic -Werror),
// every status a function returns is an enumerator of dfs_status (so C++ code holds and
// compares it as one, with no value outside the enumeration's range), and a small
// diffuser and loop work through it.
#include "diffuser.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <type_traits>

#define STATUS_IS_ENUMERATOR(name) \
    static_assert(std::is_same<decltype(name), dfs_status>::value, #name " is an enumerator of dfs_status")
STATUS_IS_ENUMERATOR(DFS_OK);
STATUS_IS_ENUMERATOR(DFS_ERR_NULL);
STATUS_IS_ENUMERATOR(DFS_ERR_HANDLE);
STATUS_IS_ENUMERATOR(DFS_ERR_ARGUMENT);
STATUS_IS_ENUMERATOR(DFS_ERR_TYPE);
STATUS_IS_ENUMERATOR(DFS_ERR_CALLBACK);
STATUS_IS_ENUMERATOR(DFS_ERR_MEMORY);
STATUS_IS_ENUMERATOR(DFS_ERR_STOPPED);
STATUS_IS_ENUMERATOR(DFS_ERR_DISPOSED);

static int passed;
static int failed;

static void check(bool ok, const char *what) {
    std::printf("%s %s\n", ok ? "ok  " : "FAIL", what);
    (ok ? passed : failed)++;
}

static int record(const void *value, void *ctx) {
    static_cast<std::string *>(ctx)->append(std::to_string(reinterpret_cast<std::intptr_t>(value)));
    return 0;
}

static int count_up(const void *model, const void *event, dfs_next *next, void *) {
    std::intptr_t sum = reinterpret_cast<std::intptr_t>(model) + reinterpret_cast<std::intptr_t>(event);
    return dfs_next_model(next, reinterpret_cast<const void *>(sum)) == DFS_OK ? 0 : 1;
}

int main() {
    std::string log;
    dfs_diffuser *diffuser = nullptr;
    check(dfs_diffuser_into(dfs_type_pointer(), record, &log, nullptr, &diffuser) == DFS_OK, "a diffuser from C++");
    dfs_diffuser_run(diffuser, reinterpret_cast<const void *>(1));
    dfs_diffuser_run(diffuser, reinterpret_cast<const void *>(1));
    dfs_diffuser_run(diffuser, reinterpret_cast<const void *>(2));
    check(log == "12", "it runs its effect when the value changes");
    dfs_diffuser_release(diffuser);

    dfs_loop_config config = {};
    config.model_type = dfs_type_pointer();
    config.event_type = dfs_type_pointer();
    config.effect_type = dfs_type_pointer();
    config.update = count_up;
    dfs_loop *loop = nullptr;
    check(dfs_loop_new(&config, &loop) == DFS_OK, "a loop from C++");
    check(dfs_loop_dispatch(loop, reinterpret_cast<const void *>(5)) == DFS_OK, "it takes an event");
    check(dfs_loop_dispose(loop) == DFS_OK, "it is disposed");
    dfs_status refused = dfs_loop_dispatch(loop, reinterpret_cast<const void *>(1));
    check(refused == DFS_ERR_DISPOSED, "then it refuses events with DFS_ERR_DISPOSED, a dfs_status");
    check(std::strcmp(dfs_status_name(refused), "DFS_ERR_DISPOSED") == 0, "named DFS_ERR_DISPOSED");
    dfs_loop_release(loop);

    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
}
