/**
 * Loops: a model, the events that change it, and the effects and feedbacks around it,
 * between a {@link io.diffuser.fuser.Fuser} (events in) and a
 * {@link io.diffuser.diffuser.Diffuser} (the model out).
 *
 * <p>{@link io.diffuser.loop.Loop} is a handle to the native core's loop, the same one
 * the Swift and C APIs use: one event at a time, first in first out; each step updates,
 * stores and publishes the model, then hands the effects to the handlers; events sent
 * during a step are queued, never handled inside it.
 *
 * <p>Around it: {@link io.diffuser.loop.Feedback} (Spin's feedbacks, request-gated ones,
 * overlap strategies, and the gear feedbacks of {@link io.diffuser.loop.Gear}, a bus
 * between loops), {@link io.diffuser.loop.Job} (the way back into the loop from work in
 * progress), {@link io.diffuser.loop.ManualExecutor} and
 * {@link io.diffuser.loop.UpdateSpec} for tests, {@link io.diffuser.loop.Journal} to record
 * a loop's runs and replay them through an update, and
 * {@link io.diffuser.loop.LoopInspector} to see every step, drop and failure.
 *
 * <p>{@link io.diffuser.loop.Loop#builder Loop.builder} sets the rest: the handlers, each
 * inside the step or on an {@link java.util.concurrent.Executor} of its own; the executor
 * that runs the steps (the dispatching thread by default); coalescing keys; and the
 * restart (Mobius's {@code Init}), which gives the model and effects of every start after
 * the first.
 */
package io.diffuser.loop;
