package io.diffuser.list;

import java.util.List;

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
}
