package io.diffuser;

/**
 * A side effect: something done with a value, such as updating a view or sending an
 * event on.
 *
 * <p>An effect may throw an unchecked exception (or an {@link Error}): it aborts the run
 * or the emission that called it and reaches the caller of {@code Diffuser.run} (or of
 * the emitting {@code Effect}) as the same object. The diffuser node that failed keeps
 * its previous cache, so the next run retries it.
 *
 * @param <A> the type of value the effect receives
 */
@FunctionalInterface
public interface Effect<A> {
  /**
   * Performs the effect.
   *
   * @param a the value (may be {@code null})
   */
  void run(A a);
}
