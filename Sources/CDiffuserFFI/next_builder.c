/* The per-thread builder of the update in progress: see dfsi_next_builder in
 * CDiffuserFFI.h. */
#include "CDiffuserFFI.h"

__thread __attribute__((tls_model("initial-exec"))) void *dfsi_next_builder_storage;
