/* Plain C function pointers that emit their arguments as events, made with libffi. */
#include "CDiffuserFFI.h"

#include <ffi.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ARGS 32

typedef struct binding {
    ffi_closure *closure;      /* must stay first: freed through it */
    ffi_cif cif;
    ffi_type *arg_types[MAX_ARGS];
    dfs_ffi_type kinds[MAX_ARGS];
    size_t count;
    dfs_ffi_type ret;
    uintptr_t userdata;
    dfsi_ffi_handler handler;
    /* One reference for the owner (dropped by dfsi_ffi_closure_free) and one for each
     * call in the trampoline: a handler may dispose the dispatch, and so free the
     * closure, while its own call is still inside the trampoline. The last one frees.
     * A call on another thread is not covered: libffi reads the closure before the
     * trampoline runs, so the source's disconnect must wait for such calls (the
     * contract of dfs_closure_new in diffuser.h). */
    _Atomic size_t refs;
} binding;

static void binding_release(binding *b) {
    if (atomic_fetch_sub_explicit(&b->refs, 1, memory_order_acq_rel) == 1) {
        ffi_closure_free(b->closure);
        free(b);
    }
}

static ffi_type *ffi_type_of(dfs_ffi_type t) {
    switch (t) {
    case DFS_FFI_INT8: return &ffi_type_sint8;
    case DFS_FFI_UINT8: return &ffi_type_uint8;
    case DFS_FFI_INT16: return &ffi_type_sint16;
    case DFS_FFI_UINT16: return &ffi_type_uint16;
    case DFS_FFI_INT32: return &ffi_type_sint32;
    case DFS_FFI_UINT32: return &ffi_type_uint32;
    case DFS_FFI_INT64: return &ffi_type_sint64;
    case DFS_FFI_UINT64: return &ffi_type_uint64;
    case DFS_FFI_FLOAT: return &ffi_type_float;
    case DFS_FFI_DOUBLE: return &ffi_type_double;
    case DFS_FFI_POINTER: return &ffi_type_pointer;
    case DFS_FFI_STRING: return &ffi_type_pointer;
    default: return NULL;
    }
}

/* Called by libffi for every call of the function pointer. */
static void trampoline(ffi_cif *cif, void *ret, void **args, void *user) {
    (void)cif;
    binding *b = user;
    atomic_fetch_add_explicit(&b->refs, 1, memory_order_relaxed);
    dfs_ffi_value values[MAX_ARGS];
    for (size_t i = 0; i < b->count; i++) {
        dfs_ffi_value *v = &values[i];
        v->type = b->kinds[i];
        void *a = args[i];
        switch (b->kinds[i]) {
        case DFS_FFI_INT8: v->as.i = *(int8_t *)a; break;
        case DFS_FFI_UINT8: v->as.u = *(uint8_t *)a; break;
        case DFS_FFI_INT16: v->as.i = *(int16_t *)a; break;
        case DFS_FFI_UINT16: v->as.u = *(uint16_t *)a; break;
        case DFS_FFI_INT32: v->as.i = *(int32_t *)a; break;
        case DFS_FFI_UINT32: v->as.u = *(uint32_t *)a; break;
        case DFS_FFI_INT64: v->as.i = *(int64_t *)a; break;
        case DFS_FFI_UINT64: v->as.u = *(uint64_t *)a; break;
        case DFS_FFI_FLOAT: v->as.d = *(float *)a; break;
        case DFS_FFI_DOUBLE: v->as.d = *(double *)a; break;
        case DFS_FFI_POINTER: v->as.p = *(void **)a; break;
        case DFS_FFI_STRING: v->as.s = *(const char **)a; break;
        default: v->as.u = 0; break;
        }
    }
    dfs_ffi_event event = { b->count, values };
    dfs_ffi_type ret_kind = b->ret;
    int status = b->handler(b->userdata, &event);
    binding_release(b);
    if (ret_kind == DFS_FFI_INT) {
        /* libffi widens integral returns to ffi_arg. */
        *(ffi_arg *)ret = (ffi_arg)(ffi_sarg)status;
    }
}

int dfsi_ffi_closure_make(dfs_ffi_type ret, const dfs_ffi_type *args, size_t count,
                         uintptr_t userdata, dfsi_ffi_handler handler,
                         void (**fn_out)(void), void **closure_out) {
    if (count > MAX_ARGS || (count > 0 && args == NULL)) return DFS_ERR_ARGUMENT;
    if (ret != DFS_FFI_VOID && ret != DFS_FFI_INT) return DFS_ERR_ARGUMENT;
    void *code = NULL;
    ffi_closure *closure = ffi_closure_alloc(sizeof(ffi_closure), &code);
    if (closure == NULL) return DFS_ERR_MEMORY;
    binding *b = calloc(1, sizeof(binding));
    if (b == NULL) {
        ffi_closure_free(closure);
        return DFS_ERR_MEMORY;
    }
    b->closure = closure;
    b->count = count;
    b->ret = ret;
    b->userdata = userdata;
    b->handler = handler;
    atomic_init(&b->refs, 1);
    for (size_t i = 0; i < count; i++) {
        b->arg_types[i] = ffi_type_of(args[i]);
        b->kinds[i] = args[i];
        if (b->arg_types[i] == NULL) {
            ffi_closure_free(closure);
            free(b);
            return DFS_ERR_ARGUMENT;
        }
    }
    ffi_type *rtype = ret == DFS_FFI_INT ? &ffi_type_sint32 : &ffi_type_void;
    if (ffi_prep_cif(&b->cif, FFI_DEFAULT_ABI, (unsigned)count, rtype, b->arg_types) != FFI_OK ||
        ffi_prep_closure_loc(closure, &b->cif, trampoline, b, code) != FFI_OK) {
        ffi_closure_free(closure);
        free(b);
        return DFS_ERR_ARGUMENT;
    }
    *fn_out = (void (*)(void))code;
    *closure_out = b;
    return DFS_OK;
}

void dfsi_ffi_closure_free(void *closure) {
    binding *b = closure;
    if (b == NULL) return;
    binding_release(b);
}
