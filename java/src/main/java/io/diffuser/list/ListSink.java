package io.diffuser.list;

import java.util.List;
import java.util.Objects;

/**
 * Applies list changes to a list view: what {@code Diffuser.intoList} calls with the
 * diff from the list it applied last to the new list, and the new list.
 *
 * <p>Set the data source to {@code newList} and apply {@code changes} in the same update:
 * {@code changes.batch} for one batch (UIKit's rules), or {@code changes.script} for
 * step-by-step notifications (RecyclerView's {@code notifyItem*}). An exception aborts
 * the run and reaches the caller of {@code run} unchanged; the diffuser then keeps the
 * list applied before, so the next run's changes start from it.
 *
 * @param <T> the type of items
 */
@FunctionalInterface
public interface ListSink<T> {
  /**
   * Applies the changes.
   *
   * @param changes from the list applied last (the empty list the first time) to
   *     {@code newList}, with the batch and the script if they were asked for
   * @param newList the list to show (the run's value)
   */
  void apply(ListDiff changes, List<T> newList);

  /**
   * Applies the changes, told whether they are the first: what the diffuser calls. The
   * default ignores {@code isFirst} and calls {@link #apply(ListDiff, List)}; override it
   * in a class, or write the sink as a lambda through {@link #withFirst(WithFirst)}, to
   * tell the first delivery apart, as Swift's {@code ListChanges.isFirst} and C's
   * {@code is_first} do.
   *
   * @param changes as for {@link #apply(ListDiff, List)}
   * @param newList the list to show (the run's value)
   * @param isFirst {@code true} on the first call (and on any call while no earlier one
   *     returned normally): the view shows nothing of this diffuser yet, so it may simply
   *     reload; {@code false} afterwards, even when the list applied last was empty
   */
  default void apply(ListDiff changes, List<T> newList, boolean isFirst) {
    apply(changes, newList);
  }

  /**
   * A sink written as a lambda that is told whether the changes are the first:
   * {@code ListSink.withFirst((changes, list, isFirst) -> ...)}.
   *
   * @param <T> the type of items
   */
  @FunctionalInterface
  interface WithFirst<T> {
    /**
     * Applies the changes; see {@link ListSink#apply(ListDiff, List, boolean)}.
     *
     * @param changes from the list applied last to {@code newList}
     * @param newList the list to show (the run's value)
     * @param isFirst whether the view shows nothing of this diffuser yet
     */
    void apply(ListDiff changes, List<T> newList, boolean isFirst);
  }

  /**
   * The sink that calls {@code sink} with {@code isFirst}. Called as
   * {@link #apply(ListDiff, List)}, without {@code isFirst} (never by the diffuser), it
   * passes {@code false}.
   *
   * @param <T> the type of items
   * @param sink the lambda
   * @return the sink
   * @throws NullPointerException if {@code sink} is null
   */
  static <T> ListSink<T> withFirst(WithFirst<T> sink) {
    Objects.requireNonNull(sink, "sink");
    return new ListSink<T>() {
      @Override
      public void apply(ListDiff changes, List<T> newList) {
        sink.apply(changes, newList, false);
      }

      @Override
      public void apply(ListDiff changes, List<T> newList, boolean isFirst) {
        sink.apply(changes, newList, isFirst);
      }
    };
  }
}
