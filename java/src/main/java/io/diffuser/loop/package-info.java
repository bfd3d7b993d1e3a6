/**
 * Loops: a model, the events that change it, and the effects and feedbacks around it,
 * between a {@link io.diffuser.fuser.Fuser} (events in) and a
 * {@link io.diffuser.diffuser.Diffuser} (the model out).
 *
 * <p>{@link io.diffuser.loop.Loop} is a handle to the native core's loop, the same one
 * the Swift and C APIs use: one event at a time, first in first out; each step updates,
 * stores and publishes the model, then hands the effects to the handlers; events sent
 * during a step are queued, never handled inside it.
 */
package io.diffuser.loop;
