package io.diffuser;

/**
 * A pure function from one value to another, used to select part of a model
 * ({@code Diffuser.map}) or to convert events ({@code Fuser.extract}).
 *
 * <p>It may throw an unchecked exception: the run or emission is aborted and the
 * exception reaches its caller unchanged.
 *
 * @param <T> the argument type
 * @param <R> the result type
 */
@FunctionalInterface
public interface Function<T, R> {
  /**
   * Applies the function.
   *
   * @param t the argument (may be {@code null})
   * @return the result (may be {@code null})
   */
  R apply(T t);
}
