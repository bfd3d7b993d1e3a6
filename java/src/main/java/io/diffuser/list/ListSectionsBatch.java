package io.diffuser.list;

import java.util.Arrays;

/**
 * A sections diff as one batch update in UIKit's coordinates ({@code performBatchUpdates}
 * with {@code deleteSections}, {@code insertSections}, {@code moveSection},
 * {@code reloadSections} and the item calls): section deletes, reloads and move sources,
 * and item deletes, reloads and move sources, in old coordinates; section inserts and
 * move destinations, and item inserts, move destinations and reloads after moves, in new
 * coordinates.
 *
 * <p>To stay within what UIKit accepts, item changes are listed only for sections that
 * stay in place and are not reloaded: a section that changed and stayed is reloaded with
 * its items; a section that moved is moved if neither it nor its items changed, and
 * otherwise deleted and inserted (or, with {@link ListDiff.Part#BATCH_MOVE_THEN_RELOAD},
 * moved and reloaded after the batch at its new index, in
 * {@link #sectionReloadsAfterMoves}).
 *
 * <p>An index path is two values, section and item, and path arrays hold them flat: a
 * path array of {@code n} paths has {@code 2 n} values. An item move is four values: old
 * section, old item, new section, new item. The arrays belong to this object: do not
 * modify them.
 */
public final class ListSectionsBatch {
  /** Old indices of sections to delete, ascending. */
  public final int[] sectionDeletes;
  /** New indices of sections to insert, ascending. */
  public final int[] sectionInserts;
  /** Sections to move, as pairs (old, new) ascending by new index. */
  public final int[] sectionMoves;
  /** Old indices of sections to reload, ascending. */
  public final int[] sectionReloads;
  /** New indices of moved sections to reload after the batch, ascending. */
  public final int[] sectionReloadsAfterMoves;
  /** Items to delete, as old index paths, ascending. */
  public final int[] itemDeletes;
  /** Items to insert, as new index paths, ascending. */
  public final int[] itemInserts;
  /** Items to move within their section, four values each (old path, new path). */
  public final int[] itemMoves;
  /** Items to reload, as old index paths, ascending. */
  public final int[] itemReloads;
  /** Moved items to reload after the batch, as new index paths. */
  public final int[] itemReloadsAfterMoves;

  /** The batch from the ten arrays of a native result, in the order of the fields. */
  ListSectionsBatch(int[][] arrays, int first) {
    sectionDeletes = arrays[first];
    sectionInserts = arrays[first + 1];
    sectionMoves = arrays[first + 2];
    sectionReloads = arrays[first + 3];
    sectionReloadsAfterMoves = arrays[first + 4];
    itemDeletes = arrays[first + 5];
    itemInserts = arrays[first + 6];
    itemMoves = arrays[first + 7];
    itemReloads = arrays[first + 8];
    itemReloadsAfterMoves = arrays[first + 9];
  }

  /**
   * Whether the batch does nothing.
   *
   * @return whether every array is empty
   */
  public boolean isEmpty() {
    return sectionDeletes.length + sectionInserts.length + sectionMoves.length + sectionReloads.length
        + sectionReloadsAfterMoves.length + itemDeletes.length + itemInserts.length + itemMoves.length
        + itemReloads.length + itemReloadsAfterMoves.length == 0;
  }

  @Override
  public String toString() {
    return "ListSectionsBatch(sections: deletes " + Arrays.toString(sectionDeletes) + ", inserts "
        + Arrays.toString(sectionInserts) + ", moves " + ListDiff.pairs(sectionMoves) + ", reloads "
        + Arrays.toString(sectionReloads) + ", reloads after moves " + Arrays.toString(sectionReloadsAfterMoves)
        + "; items: deletes " + Arrays.toString(itemDeletes) + ", inserts " + Arrays.toString(itemInserts)
        + ", moves " + Arrays.toString(itemMoves) + ", reloads " + Arrays.toString(itemReloads)
        + ", reloads after moves " + Arrays.toString(itemReloadsAfterMoves) + ")";
  }
}
