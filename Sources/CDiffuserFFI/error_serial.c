/* The per-thread count of dfs_set_error calls: see dfsi_error_serial in CDiffuserFFI.h. */
#include "CDiffuserFFI.h"

__thread __attribute__((tls_model("initial-exec"))) uint64_t dfsi_error_serial_storage;
