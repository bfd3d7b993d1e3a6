package io.diffuser.diffuser;

/**
 * Decides whether a change from an old value to a new one should run an effect, for
 * {@link Diffuser#intoWhen(DidChange, Diffuser)}.
 *
 * <p>It may throw an unchecked exception: the run is aborted, the exception reaches the
 * caller of {@link Diffuser#run(Object)} unchanged, and the node keeps its old value.
 *
 * @param <A> the type of the values compared
 */
@FunctionalInterface
public interface DidChange<A> {
  /**
   * Tells whether the change is worth reacting to.
   *
   * @param oldValue the value of the previous run (may be {@code null})
   * @param newValue the value of this run (may be {@code null})
   * @return {@code true} to run the effect or child
   */
  boolean test(A oldValue, A newValue);
}
