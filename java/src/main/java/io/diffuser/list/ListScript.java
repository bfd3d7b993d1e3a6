package io.diffuser.list;

import java.util.List;

/**
 * A diff as a sequence of steps, each valid on the list as the steps before it left it:
 * what RecyclerView's {@code notifyItemRange*} and {@code notifyItemMoved} calls expect,
 * and what patches a list in place.
 *
 * <p>The steps come in four phases: removes, highest index first; moves, each from the
 * item's current position to the position it moves to (as
 * {@code list.add(to, list.remove(from))}); inserts, lowest index first, at their final
 * indices; changes, at final indices, for every item whose content changed. Adjacent
 * removes, inserts and changes are merged into runs.
 *
 * <p>{@link #steps} holds three values per step: its kind ({@link #REMOVE}, {@link #MOVE},
 * {@link #INSERT} or {@link #CHANGE}), then two numbers (at and count, or from and to).
 * The array belongs to this object: do not modify it.
 */
public final class ListScript {
  /** Remove {@code count} items starting at {@code at}. */
  public static final int REMOVE = 1;
  /** Remove the item at {@code from}, then insert it at {@code to}. */
  public static final int MOVE = 2;
  /** Insert the new list's items {@code at .. at + count - 1} at {@code at}. */
  public static final int INSERT = 3;
  /** The items {@code at .. at + count - 1} (final positions) changed content. */
  public static final int CHANGE = 4;

  /** The steps, three values each: kind, then at and count (or from and to). */
  public final int[] steps;

  ListScript(int[] steps) {
    this.steps = steps;
  }

  /** Receives the steps of a script, in order. */
  public interface Receiver {
    /**
     * Remove {@code count} items starting at {@code at}.
     *
     * @param at the first position
     * @param count the number of items, at least 1
     */
    void remove(int at, int count);

    /**
     * Remove the item at {@code from}, then insert it at {@code to} ({@code to} counts
     * without it).
     *
     * @param from the item's current position
     * @param to its position afterwards
     */
    void move(int from, int to);

    /**
     * Insert the new list's items {@code at .. at + count - 1} at {@code at}.
     *
     * @param at the first position
     * @param count the number of items, at least 1
     */
    void insert(int at, int count);

    /**
     * The items at {@code at .. at + count - 1} (final positions) changed content.
     *
     * @param at the first position
     * @param count the number of items, at least 1
     */
    void change(int at, int count);
  }

  /**
   * The number of steps.
   *
   * @return {@code steps.length / 3}
   */
  public int size() {
    return steps.length / 3;
  }

  /**
   * Hands every step to {@code receiver}, in order.
   *
   * @param receiver what receives the steps
   */
  public void forEach(Receiver receiver) {
    for (int k = 0; k + 2 < steps.length; k += 3) {
      int a = steps[k + 1];
      int b = steps[k + 2];
      switch (steps[k]) {
        case REMOVE:
          receiver.remove(a, b);
          break;
        case MOVE:
          receiver.move(a, b);
          break;
        case INSERT:
          receiver.insert(a, b);
          break;
        default:
          receiver.change(a, b);
          break;
      }
    }
  }

  /**
   * Applies the script to {@code list}, which must hold the old list; inserted and changed
   * items are taken from {@code newList}. Afterwards {@code list} holds the new list's
   * items (the matched unchanged items are the old ones). Each step costs up to O(n) for
   * an {@link java.util.ArrayList}.
   *
   * @param <T> the type of items
   * @param list the list to patch, holding the old items
   * @param newList the new list
   */
  public <T> void applyTo(List<T> list, List<? extends T> newList) {
    forEach(new Receiver() {
      @Override
      public void remove(int at, int count) {
        list.subList(at, at + count).clear();
      }

      @Override
      public void move(int from, int to) {
        list.add(to, list.remove(from));
      }

      @Override
      public void insert(int at, int count) {
        list.addAll(at, newList.subList(at, at + count));
      }

      @Override
      public void change(int at, int count) {
        for (int i = at; i < at + count; i++) list.set(i, newList.get(i));
      }
    });
  }

  @Override
  public String toString() {
    StringBuilder text = new StringBuilder("ListScript[");
    for (int k = 0; k + 2 < steps.length; k += 3) {
      if (k > 0) text.append(", ");
      String kind = steps[k] == REMOVE ? "remove" : steps[k] == MOVE ? "move"
          : steps[k] == INSERT ? "insert" : "change";
      text.append(kind).append('(').append(steps[k + 1]).append(", ").append(steps[k + 2]).append(')');
    }
    return text.append(']').toString();
  }
}
