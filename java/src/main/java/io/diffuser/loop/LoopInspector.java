package io.diffuser.loop;

/**
 * Sees every start, event (stepped, failed or dropped), error, stop and dispose of a
 * loop, one call at a time, in order: on the thread running the loop's step, except for
 * an error thrown by a callback on another thread (a handler on its own executor), which
 * that thread reports at once. An inspector cannot fail its loop: what it throws goes to
 * the thread's uncaught exception handler.
 *
 * @param <M> the type of models
 * @param <E> the type of events
 * @param <F> the type of effects
 */
@FunctionalInterface
public interface LoopInspector<M, E, F> {
  /**
   * Sees one thing.
   *
   * @param trace what happened
   */
  void inspect(LoopTrace<M, E, F> trace);
}
