package io.diffuser.internal;

import io.diffuser.Function;
import java.util.Arrays;

/**
 * The Java half of {@code dfs_diffuser_map_all}: the selection that the native glue calls
 * once per run of a fan-out of maps, instead of once per {@link Function}. An upcall
 * from the core into Java costs a few hundred nanoseconds, much more than most
 * transforms, so calling them all in one upcall is what makes a wide fan-out of maps
 * cheap. Called by the native glue only.
 *
 * <p>Not API.
 */
final class MapAll {
  private MapAll() {}

  /**
   * The failure of a selection: which transform threw, and what. It is the last element
   * of the array {@link #select} returns, one past the parts, so that the glue can tell a
   * failure from a part by the array's length alone: a transform may well return a
   * Throwable as a value.
   */
  static final class Failure {
    /** The index of the transform that threw; the parts before it are valid. */
    final int index;
    /** What it threw, passed on unchanged to the caller of {@code run}. */
    final Throwable cause;

    Failure(int index, Throwable cause) {
      this.index = index;
      this.cause = cause;
    }
  }

  /**
   * Applies every transform to {@code value}, in order, and returns the parts.
   *
   * <p>If transform {@code k} throws, no later transform is called and the result has
   * {@code transforms.length + 1} elements: the parts of the transforms before {@code k}
   * first, then nulls, and last a {@link Failure} with {@code k} and the Throwable. The
   * core then runs the children of those first parts and aborts the run with that
   * Throwable, as if the transform had thrown on its own. Any Throwable is caught, Errors
   * included, since a single transform's Errors reach the caller of {@code run} too.
   *
   * @param transforms the transforms of the fan-out's maps, in the children's order
   * @param value the value of the run (may be {@code null})
   * @return {@code transforms.length} parts (each may be {@code null}), or the first
   *     parts and a {@link Failure}
   */
  @SuppressWarnings("unchecked") // each transform accepts the fan-out's value type
  static Object[] select(Function<?, ?>[] transforms, Object value) {
    int count = transforms.length;
    Object[] parts = new Object[count];
    for (int i = 0; i < count; i++) {
      try {
        parts[i] = ((Function<Object, ?>) transforms[i]).apply(value);
      } catch (Throwable failure) {
        Object[] partial = Arrays.copyOf(parts, count + 1);
        partial[count] = new Failure(i, failure);
        return partial;
      }
    }
    return parts;
  }
}
