package io.diffuser.list;

import java.util.Arrays;

/**
 * A diff as one batch update in UIKit's coordinates (and those of any list view with the
 * same rules): deletes, reloads and the sources of moves are indices in the list before
 * the batch; inserts and the destinations of moves are indices in the list after it.
 *
 * <p>A batch never uses an old index twice (among deletes, reloads and move sources) or a
 * new index twice (among inserts and move destinations), and
 * {@code newCount == oldCount - deletes.length + inserts.length}. An item that both moved
 * and changed cannot be moved and reloaded in one batch: by default it is deleted at its
 * old index and inserted at its new one; with {@link ListDiff.Part#BATCH_MOVE_THEN_RELOAD}
 * it is moved, and listed in {@link #reloadsAfterMoves} to reload once the batch is done.
 *
 * <p>Pair arrays hold their pairs flat: old, new, old, new... The arrays belong to this
 * object: do not modify them.
 */
public final class ListBatch {
  /** Old indices to delete, ascending. */
  public final int[] deletes;
  /** New indices to insert, ascending. */
  public final int[] inserts;
  /** Items to move, as pairs (old, new) ascending by new index. */
  public final int[] moves;
  /** Old indices of items that stay in place and changed content, ascending. */
  public final int[] reloads;
  /**
   * New indices of items moved by this batch that also changed content, ascending: to
   * reload after the batch. Empty unless {@link #moveThenReload}.
   */
  public final int[] reloadsAfterMoves;
  /** Whether items both moved and changed are moved and reloaded after the batch. */
  public final boolean moveThenReload;

  ListBatch(int[] deletes, int[] inserts, int[] moves, int[] reloads, int[] reloadsAfterMoves,
      boolean moveThenReload) {
    this.deletes = deletes;
    this.inserts = inserts;
    this.moves = moves;
    this.reloads = reloads;
    this.reloadsAfterMoves = reloadsAfterMoves;
    this.moveThenReload = moveThenReload;
  }

  /**
   * Whether the batch does nothing.
   *
   * @return whether every array is empty
   */
  public boolean isEmpty() {
    return deletes.length == 0 && inserts.length == 0 && moves.length == 0 && reloads.length == 0
        && reloadsAfterMoves.length == 0;
  }

  @Override
  public String toString() {
    return "ListBatch(deletes " + Arrays.toString(deletes) + ", inserts " + Arrays.toString(inserts)
        + ", moves " + ListDiff.pairs(moves) + ", reloads " + Arrays.toString(reloads)
        + ", reloadsAfterMoves " + Arrays.toString(reloadsAfterMoves) + ")";
  }
}
