package io.diffuser.loop;

import java.util.function.BiFunction;

/**
 * The pure heart of a loop: given the current model and an event, what happens next.
 *
 * <p>An update that throws leaves the model as it was; the loop's inspector sees the
 * exception and the loop goes on. It must not have side effects.
 *
 * @param <M> the type of models
 * @param <E> the type of events
 * @param <F> the type of effects
 */
@FunctionalInterface
public interface Update<M, E, F> {
  /**
   * Computes the next step.
   *
   * @param model the current model
   * @param event the event
   * @return what happens next
   */
  Next<M, F> next(M model, E event);

  /**
   * An update from a reducer (Spin's and RaspSwift's form): every event yields a model,
   * and no effect.
   *
   * @param reducer the reducer
   * @param <M> the type of models
   * @param <E> the type of events
   * @param <F> the type of effects
   * @return the update
   */
  static <M, E, F> Update<M, E, F> reducer(BiFunction<? super M, ? super E, ? extends M> reducer) {
    return (model, event) -> Next.next(reducer.apply(model, event));
  }
}
