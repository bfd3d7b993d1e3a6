/* The per-thread note of a gate's comparison that found one value behind two pointers
 * (DFS_EQUAL_SAME): see dfsi_same_value in CDiffuserFFI.h. */
#include "CDiffuserFFI.h"

__thread __attribute__((tls_model("initial-exec"))) dfsi_same_value_note dfsi_same_value_storage;
