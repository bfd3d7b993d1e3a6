package io.diffuser.list;

import io.diffuser.Function;
import io.diffuser.internal.ListNative;
import io.diffuser.internal.ListReader;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.function.BiPredicate;
import java.util.function.ToLongFunction;

/**
 * What changed from one list to the next, with items identified by a key and their
 * content compared separately.
 *
 * <pre>{@code
 * ListDiff diff = ListDiff.of(oldRows, newRows, Row::id, Row::sameContent, ListDiff.Part.SCRIPT);
 * rows = newRows;
 * diff.script.forEach(new ListScript.Receiver() {
 *   public void remove(int at, int count) { adapter.notifyItemRangeRemoved(at, count); }
 *   public void move(int from, int to) { adapter.notifyItemMoved(from, to); }
 *   public void insert(int at, int count) { adapter.notifyItemRangeInserted(at, count); }
 *   public void change(int at, int count) { adapter.notifyItemRangeChanged(at, count); }
 * });
 * }</pre>
 *
 * <p><b>Pairing.</b> An old item and a new item are the same item (are <i>matched</i>)
 * when their keys are equal. Items of the common prefix and suffix (equal keys at the
 * same places from either end) pair in place. In the rest, the k-th old occurrence of a
 * key pairs with the k-th new occurrence of that key; extra occurrences on either side
 * are deletes or inserts. Duplicate keys are therefore never an error, but the diff
 * reports them ({@link #hasDuplicates}).
 *
 * <p><b>Minimal moves.</b> Of the matched items, those on one longest increasing
 * subsequence (taken in new order, of old indices) stay where they are and every other
 * matched item moves: no smaller set of moves can reorder them.
 *
 * <p><b>Indices.</b> {@link #deletes} and the old index of a pair are indices into the
 * old list; {@link #inserts} and the new index of a pair are indices into the new list.
 * Every array is ascending by the index it is listed in (pair arrays by their new index).
 * A pair array holds its pairs flat: old, new, old, new... The arrays belong to this
 * object: do not modify them.
 *
 * <p><b>Calls.</b> Every factory computes the diff, and the batch and the script when
 * asked for, in one call of the native core, which calls the key function and the
 * content comparison back on the calling thread when it needs them, in the order Swift's
 * {@code ListDiff} calls them: a key where the diff asks for it (at most twice an item;
 * none of an item the diff does not need, such as every item of either list when the
 * other is empty), the content once per matched pair. An exception thrown by either
 * stops the diff and reaches the caller of the factory unchanged.
 */
public final class ListDiff {
  /** The parts a factory computes besides the diff itself. */
  public enum Part {
    /**
     * The batch in UIKit's coordinates ({@link ListDiff#batch}), an item both moved and
     * changed being deleted and inserted.
     */
    BATCH,
    /**
     * The batch ({@link ListDiff#batch}), an item both moved and changed being moved and
     * listed in {@link ListBatch#reloadsAfterMoves} at its new index. Takes the place of
     * {@link #BATCH}.
     */
    BATCH_MOVE_THEN_RELOAD,
    /** The step-by-step script ({@link ListDiff#script}). */
    SCRIPT
  }

  /** The number of items in the old list. */
  public final int oldCount;
  /** The number of items in the new list. */
  public final int newCount;
  /** Old indices of the items that are not in the new list, ascending. */
  public final int[] deletes;
  /** New indices of the items that were not in the old list, ascending. */
  public final int[] inserts;
  /**
   * The matched items that changed place relative to the others, as pairs (old, new)
   * ascending by new index: the matched items outside one longest increasing subsequence.
   */
  public final int[] moves;
  /**
   * The matched items whose content changed, as pairs (old, new) ascending by new index.
   * Includes items that also moved.
   */
  public final int[] updates;
  /** For each old index, the new index of the same item, or -1 for a deleted item. */
  public final int[] oldToNew;
  /** For each new index, the old index of the same item, or -1 for an inserted item. */
  public final int[] newToOld;
  /**
   * Whether a key occurred twice in one list outside the common prefix and suffix, where
   * items pair by occurrence (looked for only when both lists have items there).
   */
  public final boolean hasDuplicates;
  /**
   * The batch, if {@link Part#BATCH} or {@link Part#BATCH_MOVE_THEN_RELOAD} was asked for;
   * otherwise {@code null}.
   */
  public final ListBatch batch;
  /** The script, if {@link Part#SCRIPT} was asked for; otherwise {@code null}. */
  public final ListScript script;

  /**
   * A diff from the arrays of a native result (laid out as {@link ListNative}'s indices);
   * also called by the JNI glue, with the arrays of a diff an intoList node made, and by
   * {@link ListSectionsDiff} for its parts.
   */
  ListDiff(int[][] result, boolean moveThenReload) {
    int[] header = result[ListNative.HEADER];
    oldCount = header[0];
    newCount = header[1];
    hasDuplicates = header[2] != 0;
    deletes = result[ListNative.DELETES];
    inserts = result[ListNative.INSERTS];
    moves = result[ListNative.MOVES];
    updates = result[ListNative.UPDATES];
    oldToNew = result[ListNative.OLD_TO_NEW];
    newToOld = result[ListNative.NEW_TO_OLD];
    batch = result[ListNative.BATCH_DELETES] == null ? null
        : new ListBatch(result[ListNative.BATCH_DELETES], result[ListNative.BATCH_INSERTS],
            result[ListNative.BATCH_MOVES], result[ListNative.BATCH_RELOADS],
            result[ListNative.BATCH_RELOADS_AFTER_MOVES], moveThenReload);
    script = result[ListNative.SCRIPT_STEPS] == null ? null
        : new ListScript(result[ListNative.SCRIPT_STEPS]);
  }

  /**
   * Diffs two lists whose items are identified by {@code key}, with content compared by
   * {@code sameContent}.
   *
   * <p>Keys are compared with {@link Object#equals(Object)} and {@link Object#hashCode()}
   * ({@code null} is a key like any other), exactly: the core asks for a key's hash (a
   * call of {@code key}), and for the equality of two keys with equal hashes (of the keys
   * those calls returned). {@code sameContent.test(oldItem, newItem)} is called
   * once for every matched pair; {@code false} makes the pair an update.
   *
   * @param <T> the type of items
   * @param oldList the list applied last
   * @param newList the list to apply
   * @param key identifies an item
   * @param sameContent whether two matched items have the same content
   * @param parts what to compute besides the diff: a batch, the script
   * @return the diff
   * @throws RuntimeException what {@code key} or {@code sameContent} threw, unchanged
   */
  public static <T> ListDiff of(List<? extends T> oldList, List<? extends T> newList,
      Function<? super T, ?> key, BiPredicate<? super T, ? super T> sameContent, Part... parts) {
    return read(ListReader.byKey(key, sameContent), true, oldList, newList, parts);
  }

  /**
   * Diffs two lists whose items are identified by {@code key}, with content compared by
   * {@link Objects#equals(Object, Object)}.
   *
   * @param <T> the type of items
   * @param oldList the list applied last
   * @param newList the list to apply
   * @param key identifies an item
   * @param parts what to compute besides the diff: a batch, the script
   * @return the diff
   * @throws RuntimeException what {@code key} or an item's {@code equals} threw, unchanged
   */
  public static <T> ListDiff of(List<? extends T> oldList, List<? extends T> newList,
      Function<? super T, ?> key, Part... parts) {
    return of(oldList, newList, key, Objects::equals, parts);
  }

  /**
   * Diffs two lists whose items are identified by a {@code long} key, with content
   * compared by {@code sameContent}. Two items are matched only if their keys are equal,
   * so the key function must give distinct items distinct keys (an id, not a hash).
   *
   * @param <T> the type of items
   * @param oldList the list applied last
   * @param newList the list to apply
   * @param key identifies an item
   * @param sameContent whether two matched items have the same content
   * @param parts what to compute besides the diff: a batch, the script
   * @return the diff
   * @throws RuntimeException what {@code key} or {@code sameContent} threw, unchanged
   */
  public static <T> ListDiff byLongKey(List<? extends T> oldList, List<? extends T> newList,
      ToLongFunction<? super T> key, BiPredicate<? super T, ? super T> sameContent, Part... parts) {
    return read(ListReader.byLongKey(key, sameContent), false, oldList, newList, parts);
  }

  /** {@code list}, or a copy of it whose {@code get} takes constant time. */
  private static List<?> indexed(List<?> list, String name) {
    Objects.requireNonNull(list, name);
    return list instanceof RandomAccess ? list : Arrays.asList(list.toArray());
  }

  /** The diff of two lists read through {@code reader} by the core. */
  private static ListDiff read(ListReader reader, boolean keyObjects, List<?> oldList, List<?> newList,
      Part... parts) {
    int flags = ListNative.flags(parts);
    return new ListDiff(ListNative.diffRead(reader, keyObjects, indexed(oldList, "oldList"),
        indexed(newList, "newList"), flags),
        (flags & ListNative.BATCH_MOVE_THEN_RELOAD) != 0);
  }

  /**
   * Diffs two lists of keys: deletes, inserts and moves, never updates.
   *
   * @param oldKeys the keys of the list applied last
   * @param newKeys the keys of the list to apply
   * @param parts what to compute besides the diff: a batch, the script
   * @return the diff
   */
  public static ListDiff ofKeys(long[] oldKeys, long[] newKeys, Part... parts) {
    Objects.requireNonNull(oldKeys, "oldKeys");
    Objects.requireNonNull(newKeys, "newKeys");
    return compute(oldKeys, null, newKeys, null, parts);
  }

  /**
   * Diffs two lists given by their keys and content fingerprints: two matched items have
   * the same content if their fingerprints are equal (so a fingerprint must change
   * whenever the content does: a version number, not a hash).
   *
   * @param oldKeys the keys of the list applied last
   * @param oldContents one content fingerprint per old key
   * @param newKeys the keys of the list to apply
   * @param newContents one content fingerprint per new key
   * @param parts what to compute besides the diff: a batch, the script
   * @return the diff
   * @throws IllegalArgumentException if a list has not one fingerprint per key
   */
  public static ListDiff ofKeys(long[] oldKeys, long[] oldContents, long[] newKeys,
      long[] newContents, Part... parts) {
    Objects.requireNonNull(oldKeys, "oldKeys");
    Objects.requireNonNull(oldContents, "oldContents");
    Objects.requireNonNull(newKeys, "newKeys");
    Objects.requireNonNull(newContents, "newContents");
    return compute(oldKeys, oldContents, newKeys, newContents, parts);
  }

  private static ListDiff compute(long[] oldKeys, long[] oldContents, long[] newKeys,
      long[] newContents, Part... parts) {
    int flags = ListNative.flags(parts);
    return new ListDiff(ListNative.diff(oldKeys, oldContents, newKeys, newContents, flags),
        (flags & ListNative.BATCH_MOVE_THEN_RELOAD) != 0);
  }

  /**
   * Whether nothing changed: no delete, insert, move or update.
   *
   * @return whether the diff is empty
   */
  public boolean isEmpty() {
    return deletes.length == 0 && inserts.length == 0 && moves.length == 0 && updates.length == 0;
  }

  /**
   * The number of matched items (items in both lists).
   *
   * @return {@code oldCount - deletes.length}
   */
  public int matchedCount() {
    return oldCount - deletes.length;
  }

  static String pairs(int[] pairs) {
    StringBuilder text = new StringBuilder("[");
    for (int k = 0; k + 1 < pairs.length; k += 2) {
      if (k > 0) text.append(", ");
      text.append(pairs[k]).append("->").append(pairs[k + 1]);
    }
    return text.append(']').toString();
  }

  @Override
  public String toString() {
    return "ListDiff(" + oldCount + "->" + newCount + ": deletes " + Arrays.toString(deletes)
        + ", inserts " + Arrays.toString(inserts) + ", moves " + pairs(moves) + ", updates "
        + pairs(updates) + (hasDuplicates ? ", duplicates" : "") + ")";
  }
}
