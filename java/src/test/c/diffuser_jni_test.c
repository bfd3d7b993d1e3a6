/*
 * diffuser_jni_test.c — native helpers for the JUnit tests of the Java binding
 * (class io.diffuser.fuser.NativeThreads). Not part of the jar.
 *
 * emitOnNativeThread(effect, events): the effect a Source received in connect (an
 * io.diffuser.internal.DispatchEffect) wraps a dfs_dispatch handle. This starts a
 * pthread, which the JVM did not start and which never attaches itself, and emits
 * every event through dfs_dispatch_emit from it. The events are Java objects held by
 * global references (values of the binding's value type are jobject pointers).
 * Returns, per event, the dfs_status of the emission, followed by one more entry: 1 if
 * the thread was detached again after the emissions (the glue detaches what it
 * attached), 0 if it was left attached.
 *
 * NativeErrors.lastError() (class io.diffuser.loop.NativeErrors): the bytes of
 * dfs_last_error() on the calling thread, as the core holds them (standard UTF-8).
 *
 * NativeHeap.inUse() (class io.diffuser.NativeHeap): the bytes malloc has handed out and
 * not taken back, over every arena (glibc's mallinfo2: uordblks + hblkhd). The core and
 * the glue allocate through malloc, so a leak per round of some operation shows here,
 * free of the page-level noise of the process's RSS.
 */
#include <jni.h>
#include <malloc.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "diffuser.h"

static JavaVM *g_vm;

typedef struct {
    dfs_dispatch *dispatch;
    jobject *events;
    jsize count;
    jint *statuses;
    jint detached_after;
} emission;

static void *emit_all(void *arg) {
    emission *job = arg;
    for (jsize i = 0; i < job->count; i++)
        job->statuses[i] = (jint)dfs_dispatch_emit(job->dispatch, job->events[i]);
    JNIEnv *env = NULL;
    job->detached_after = (*g_vm)->GetEnv(g_vm, (void **)&env, JNI_VERSION_1_8) == JNI_EDETACHED;
    return NULL;
}

JNIEXPORT jintArray JNICALL
Java_io_diffuser_fuser_NativeThreads_emitOnNativeThread(JNIEnv *env, jclass cls, jobject effect,
                                                         jobjectArray events) {
    (void)cls;
    jclass effect_class = (*env)->GetObjectClass(env, effect);
    jfieldID field = (*env)->GetFieldID(env, effect_class, "dispatch", "J");
    if (field == NULL) return NULL;
    emission job;
    job.dispatch = (dfs_dispatch *)(intptr_t)(*env)->GetLongField(env, effect, field);
    job.count = (*env)->GetArrayLength(env, events);
    job.events = calloc((size_t)job.count + 1, sizeof(jobject));
    job.statuses = calloc((size_t)job.count + 1, sizeof(jint));
    job.detached_after = 0;
    for (jsize i = 0; i < job.count; i++) {
        jobject event = (*env)->GetObjectArrayElement(env, events, i);
        job.events[i] = event == NULL ? NULL : (*env)->NewGlobalRef(env, event);
        (*env)->DeleteLocalRef(env, event);
    }

    pthread_t thread;
    int started = pthread_create(&thread, NULL, emit_all, &job) == 0;
    if (started) pthread_join(thread, NULL);

    jintArray result = NULL;
    if (started) {
        job.statuses[job.count] = job.detached_after;
        result = (*env)->NewIntArray(env, job.count + 1);
        if (result != NULL) (*env)->SetIntArrayRegion(env, result, 0, job.count + 1, job.statuses);
    } else {
        jclass error = (*env)->FindClass(env, "java/lang/IllegalStateException");
        if (error != NULL) (*env)->ThrowNew(env, error, "pthread_create failed");
    }
    for (jsize i = 0; i < job.count; i++)
        if (job.events[i] != NULL) (*env)->DeleteGlobalRef(env, job.events[i]);
    free(job.events);
    free(job.statuses);
    return result;
}

JNIEXPORT jbyteArray JNICALL Java_io_diffuser_loop_NativeErrors_lastError(JNIEnv *env, jclass cls) {
    (void)cls;
    const char *text = dfs_last_error();
    jsize size = (jsize)strlen(text);
    jbyteArray bytes = (*env)->NewByteArray(env, size);
    if (bytes != NULL) (*env)->SetByteArrayRegion(env, bytes, 0, size, (const jbyte *)text);
    return bytes;
}

JNIEXPORT jlong JNICALL Java_io_diffuser_NativeHeap_inUse(JNIEnv *env, jclass cls) {
    (void)env, (void)cls;
    struct mallinfo2 info = mallinfo2();
    return (jlong)(info.uordblks + info.hblkhd);
}

JNIEXPORT jint JNICALL JNI_OnLoad(JavaVM *vm, void *reserved) {
    (void)reserved;
    g_vm = vm;
    return JNI_VERSION_1_8;
}
