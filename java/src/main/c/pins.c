/*
 * pins.c — the Java diffusers and fusers a native method keeps reachable for work the
 * core queued during it (a run asked for from inside another native method of the same
 * thread, the fuser of a loop connection disposed from a callback): dfsj_pin, dfsj_keep
 * and dfsj_unpin while the method runs, dfsj_drop_pins when the outermost one returns.
 *
 * The pins live in the thread's state (jni_glue.h), in an open-addressing table keyed by
 * the objects' handles.
 */
#include <stdint.h>
#include <stdlib.h>

#include "jni_glue.h"

/* The first slot of `key`'s probe sequence in a table of `cap` slots (a power of two). */
static size_t pin_home(jlong key, size_t cap) {
    return (size_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> 32) & (cap - 1);
}

/* The slot holding `key`, or the empty slot where it would go. */
static struct dfsj_pin *pin_slot(struct dfsj_pin *pins, size_t cap, jlong key) {
    size_t i = pin_home(key, cap);
    while (pins[i].ref != NULL && pins[i].key != key) i = (i + 1) & (cap - 1);
    return &pins[i];
}

/* Keeps `object`, the Java object of handle `key` (a diffuser asked to run, or the fuser
 * of a loop connection disposed, from inside another native method of this thread),
 * reachable until the outermost native method returns, or until dfsj_unpin: 1 if this
 * call pinned it, 0 if it was pinned already, or -1 with an exception pending. Each
 * object is pinned once per outermost call, so the table holds at most the distinct
 * objects pinned in that call (a loop draining many events that each render pins its
 * diffuser once). Handles are unique among live objects, and a pinned one stays live. */
int dfsj_pin(JNIEnv *env, jlong key, jobject object) {
    dfsj_thread_state *ts = &dfsj_thread;
    if (ts->pin_cap > 0 && pin_slot(ts->pins, ts->pin_cap, key)->ref != NULL) return 0;
    if ((ts->pinned + 1) * 2 > ts->pin_cap) {
        size_t cap = ts->pin_cap ? ts->pin_cap * 2 : 16;
        struct dfsj_pin *grown = cap <= SIZE_MAX / sizeof *grown ? calloc(cap, sizeof *grown) : NULL;
        if (grown == NULL) {
            (*env)->ThrowNew(env, dfsj_c_oome, "too many diffusers and fusers kept for one native call");
            return -1;
        }
        for (size_t i = 0; i < ts->pin_cap; i++)
            if (ts->pins[i].ref != NULL) *pin_slot(grown, cap, ts->pins[i].key) = ts->pins[i];
        free(ts->pins);
        ts->pins = grown;
        ts->pin_cap = cap;
    }
    jobject global = dfsj_hold(env, object);
    if (global == NULL) return -1;
    struct dfsj_pin *slot = pin_slot(ts->pins, ts->pin_cap, key);
    slot->key = key;
    slot->ref = global;
    slot->kept = 0;
    ts->pinned++;
    return 1;
}

/* Marks the pin of `key`, if any, as needed until the outermost native method returns: a
 * run of its diffuser was queued, and it may run after the call that made the pin
 * returned (a run queued on a graph that is then joined with the outer pass's moves
 * there). */
void dfsj_keep(jlong key) {
    dfsj_thread_state *ts = &dfsj_thread;
    if (ts->pin_cap == 0) return;
    struct dfsj_pin *slot = pin_slot(ts->pins, ts->pin_cap, key);
    if (slot->ref != NULL) slot->kept = 1;
}

/* Drops the pin of `key` made by dfsj_pin, if any: for a run that turned out not to be
 * queued, which needs nothing after it returned. The slots after it in its probe run
 * move back where their own probe sequence can still find them. */
void dfsj_unpin(JNIEnv *env, jlong key) {
    dfsj_thread_state *ts = &dfsj_thread;
    if (ts->pin_cap == 0) return;
    size_t mask = ts->pin_cap - 1;
    struct dfsj_pin *slot = pin_slot(ts->pins, ts->pin_cap, key);
    if (slot->ref == NULL || slot->kept) return;
    (*env)->DeleteGlobalRef(env, slot->ref);
    ts->pinned--;
    size_t hole = (size_t)(slot - ts->pins);
    for (size_t i = (hole + 1) & mask; ts->pins[i].ref != NULL; i = (i + 1) & mask) {
        size_t home = pin_home(ts->pins[i].key, ts->pin_cap);
        /* The entry at i may fill the hole unless its home lies cyclically in (hole, i]. */
        int stays = hole <= i ? (hole < home && home <= i) : (hole < home || home <= i);
        if (stays) continue;
        ts->pins[hole] = ts->pins[i];
        hole = i;
    }
    ts->pins[hole].ref = NULL;
    ts->pins[hole].key = 0;
    ts->pins[hole].kept = 0;
}

void dfsj_drop_pins(dfsj_thread_state *ts) {
    for (size_t i = 0; i < ts->pin_cap; i++)
        if (ts->pins[i].ref != NULL) (*ts->env)->DeleteGlobalRef(ts->env, ts->pins[i].ref);
    free(ts->pins);
    ts->pins = NULL;
    ts->pinned = 0;
    ts->pin_cap = 0;
}
