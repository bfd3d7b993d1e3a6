package io.diffuser.internal;

import io.diffuser.Function;
import java.util.Arrays;
import java.util.Objects;

/**
 * The Java half of a fan-out of maps ({@code dfs_diffuser_map_all_judged}): the selection
 * that the native glue calls once per run of the fan-out, instead of once per {@link
 * Function} and once per comparison. An upcall from the core into Java costs a few
 * hundred nanoseconds, much more than most transforms and comparisons, so making all
 * the parts and judging them in one upcall is what makes a wide fan-out of maps cheap.
 *
 * <p>Judging: for each child that the core lets it judge (an equality gate that nothing
 * but its own part can change during the run), the selection compares the part with the
 * gate's cached value, exactly as the gate would ({@link Objects#equals} with the cached
 * value first), and reports the verdict: the core then skips a gate whose part is equal
 * and lets a different one through without comparing again. The glue keeps {@link
 * #cached} in step with the gates' caches, refreshing an element only when the core
 * says that cache changed. The core still decides which verdicts count, and caches,
 * orders and runs everything.
 *
 * <p>One instance per fan-out node; the core calls it only with the node's graph locked,
 * so never from two threads at once. Called by the native glue only. Not API.
 */
final class MapAll {
  /** In {@link #cached}: the core does not let this fan-out judge the child. */
  static final Object UNJUDGED = new Object();
  /** In {@link #cached}: the child is judged but holds no value yet. */
  static final Object ABSENT = new Object();

  /** The verdicts, as in the C ABI's {@code dfs_part_verdict}. */
  static final byte UNKNOWN = -1;

  static final byte CHANGED = 0;
  static final byte UNCHANGED = 1;

  /** The transforms of the fan-out's maps, in the children's order. */
  private final Function<?, ?>[] transforms;
  /**
   * Per child, its gate's cached value, or {@link #UNJUDGED} or {@link #ABSENT}. Written
   * by the glue before each call of {@link #select}.
   */
  final Object[] cached;
  /** Per child, the verdict of the last {@link #select}; read by the glue after it. */
  final byte[] verdicts;

  MapAll(Function<?, ?>[] transforms) {
    this.transforms = transforms;
    this.cached = new Object[transforms.length];
    Arrays.fill(cached, UNJUDGED);
    this.verdicts = new byte[transforms.length];
  }

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
   * Applies every transform to {@code value}, in order, judges each part against {@link
   * #cached} into {@link #verdicts}, and returns the parts.
   *
   * <p>If transform {@code k} throws, no later transform is called and the result has
   * {@code transforms.length + 1} elements: the parts of the transforms before {@code k}
   * first, then nulls, and last a {@link Failure} with {@code k} and the Throwable. The
   * core then runs the children of those first parts and aborts the run with that
   * Throwable, as if the transform had thrown on its own. Any Throwable is caught, Errors
   * included, since a single transform's Errors reach the caller of {@code run} too.
   *
   * @param value the value of the run (may be {@code null})
   * @return {@code transforms.length} parts (each may be {@code null}), or the first
   *     parts and a {@link Failure}
   */
  @SuppressWarnings("unchecked") // each transform accepts the fan-out's value type
  Object[] select(Object value) {
    int count = transforms.length;
    Object[] parts = new Object[count];
    for (int i = 0; i < count; i++) {
      Object part;
      try {
        part = ((Function<Object, ?>) transforms[i]).apply(value);
      } catch (Throwable failure) {
        Object[] partial = Arrays.copyOf(parts, count + 1);
        partial[count] = new Failure(i, failure);
        return partial;
      }
      parts[i] = part;
      verdicts[i] = judge(cached[i], part);
    }
    return parts;
  }

  /**
   * The verdict on {@code part} for a gate caching {@code old}. An equals that throws
   * leaves the part unjudged: the gate then compares it itself, at its turn, and its
   * failure aborts the run there, as without judging.
   */
  private static byte judge(Object old, Object part) {
    if (old == UNJUDGED) return UNKNOWN;
    if (old == ABSENT) return CHANGED;
    try {
      return Objects.equals(old, part) ? UNCHANGED : CHANGED;
    } catch (Throwable failure) {
      return UNKNOWN;
    }
  }
}
