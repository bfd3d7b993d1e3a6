package io.diffuser.loop;

/**
 * Carries out a loop's effects, and may send events back through the effect's
 * {@link Job}, at once or later, from any thread.
 *
 * <p>Each effect of a step reaches every handler, effects in the order the update gave
 * them and, for each, handlers in the order they were added, before the next event
 * starts. An exception goes to the loop's inspector; the loop goes on.
 *
 * @param <F> the type of effects
 * @param <E> the type of events
 */
@FunctionalInterface
public interface EffectHandler<F, E> {
  /**
   * Handles one effect.
   *
   * @param effect the effect
   * @param job the way back into the loop
   * @throws Exception to report a failure to the inspector
   */
  void handle(F effect, Job<E> job) throws Exception;
}
