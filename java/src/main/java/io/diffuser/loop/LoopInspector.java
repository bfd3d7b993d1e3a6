package io.diffuser.loop;

/**
 * Sees every start, event (stepped, failed or dropped), error, stop and dispose of a
 * loop, one call at a time, in order. An inspector cannot fail its loop: what it throws
 * goes to the thread's uncaught exception handler.
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
