package io.diffuser.internal;

import io.diffuser.list.ListDiff;
import io.diffuser.list.ListSink;
import java.util.Objects;

/**
 * The native methods of the keyed list diff ({@code io.diffuser.list}): one call of
 * {@code dfs_list_diff_compute} (or of {@code dfs_list_sections_diff_compute}, in
 * {@code list_sections_jni.c}), and the {@code intoList} node
 * ({@code dfs_diffuser_into_list}), implemented in {@code list_jni.c} of
 * {@code libdiffuser_jni.so}.
 *
 * <p>Not API.
 */
public final class ListNative {
  static {
    NativeLoader.load();
  }

  private ListNative() {}

  /** {@code DFS_LIST_BATCH}: also the batch. */
  public static final int BATCH = 1;
  /** {@code DFS_LIST_BATCH_MOVE_THEN_RELOAD}: also the batch, moved items reloaded after it. */
  public static final int BATCH_MOVE_THEN_RELOAD = 2;
  /** {@code DFS_LIST_SCRIPT}: also the script. */
  public static final int SCRIPT = 4;

  /** Index of {@code {oldCount, newCount, hasDuplicates ? 1 : 0}} in the result. */
  public static final int HEADER = 0;
  /** Index of the deletes in the result. */
  public static final int DELETES = 1;
  /** Index of the inserts in the result. */
  public static final int INSERTS = 2;
  /** Index of the moves (pairs) in the result. */
  public static final int MOVES = 3;
  /** Index of the updates (pairs) in the result. */
  public static final int UPDATES = 4;
  /** Index of old-to-new in the result. */
  public static final int OLD_TO_NEW = 5;
  /** Index of new-to-old in the result. */
  public static final int NEW_TO_OLD = 6;
  /** Index of the batch's deletes in the result (null without a batch). */
  public static final int BATCH_DELETES = 7;
  /** Index of the batch's inserts in the result. */
  public static final int BATCH_INSERTS = 8;
  /** Index of the batch's moves (pairs) in the result. */
  public static final int BATCH_MOVES = 9;
  /** Index of the batch's reloads in the result. */
  public static final int BATCH_RELOADS = 10;
  /** Index of the batch's reloads after moves in the result. */
  public static final int BATCH_RELOADS_AFTER_MOVES = 11;
  /** Index of the script (triples) in the result (null without a script). */
  public static final int SCRIPT_STEPS = 12;

  /** Index of {@code {hasDuplicates ? 1 : 0, itemDiffCount}} in a sections result. */
  public static final int SECTIONS_HEADER = 0;
  /**
   * Index of the first of the ten batch arrays of a sections result (null without a
   * batch): section deletes, inserts, moves, reloads, reloads after moves; item deletes,
   * inserts, moves, reloads, reloads after moves.
   */
  public static final int SECTIONS_BATCH = 1;
  /**
   * Index of the sections' own diff in a sections result; the diff of new section
   * {@code j}'s items follows at {@code SECTIONS_DIFFS + DIFF_SIZE * (1 + j)}.
   */
  public static final int SECTIONS_DIFFS = 11;
  /** The number of arrays of one diff (HEADER ... SCRIPT_STEPS). */
  public static final int DIFF_SIZE = 13;

  /**
   * The flags of {@code dfs_list_diff_compute} for the parts asked for:
   * {@link ListDiff.Part#BATCH_MOVE_THEN_RELOAD} takes the place of
   * {@link ListDiff.Part#BATCH}.
   *
   * @param parts the parts
   * @return a combination of {@link #BATCH}, {@link #BATCH_MOVE_THEN_RELOAD} and
   *     {@link #SCRIPT}
   */
  public static int flags(ListDiff.Part... parts) {
    int flags = 0;
    for (ListDiff.Part part : Objects.requireNonNull(parts, "parts")) {
      switch (Objects.requireNonNull(part, "part")) {
        case BATCH:
          flags |= BATCH;
          break;
        case BATCH_MOVE_THEN_RELOAD:
          flags |= BATCH_MOVE_THEN_RELOAD;
          break;
        default:
          flags |= SCRIPT;
          break;
      }
    }
    return (flags & BATCH_MOVE_THEN_RELOAD) != 0 ? flags & ~BATCH : flags;
  }

  /**
   * {@code dfs_diffuser_into_list} over Java lists: the reader's methods are the
   * {@code dfs_list_reader} (with {@code same_key} if its keys are objects, and
   * {@code same_content}); the sink gets each diff as a {@link ListDiff} with the parts of
   * {@code flags}, and the run's list.
   *
   * @param reader reads the lists
   * @param keyObjects {@code reader.hasKeyObjects()}: whether the core must ask
   *     {@link ListReader#sameKey} for keys with equal hashes
   * @param sink applies the changes
   * @param flags from {@link #flags}
   * @return the handle of the new diffuser
   */
  public static native long intoList(ListReader reader, boolean keyObjects, ListSink<?> sink,
      int flags);

  /**
   * {@code dfs_list_diff_read}: two Java lists read through {@code reader}, which the
   * core asks as the {@code intoList} node does.
   *
   * @param reader the reader
   * @param keyObjects whether keys are objects: the core then asks
   *     {@link ListReader#sameKey} for keys with equal hashes
   * @param oldList the list applied last
   * @param newList the list to apply
   * @param flags from {@link #flags}
   * @return the result's arrays, at the indices named by this class's constants
   */
  public static native int[][] diffRead(ListReader reader, boolean keyObjects, Object oldList,
      Object newList, int flags);

  /**
   * {@code dfs_list_sections_diff_read}: two Java lists of sections read through
   * {@code sections} (its keys, content and {@link ListReader#items}) and
   * {@code items}, which the core asks in its order.
   *
   * @param sections reads the lists of sections; made by {@link ListReader#sections}
   * @param sectionKeyObjects {@code sections.hasKeyObjects()}
   * @param items reads the lists of items of the sections
   * @param itemKeyObjects {@code items.hasKeyObjects()}
   * @param oldList the sections applied last
   * @param newList the sections to apply
   * @param flags from {@link #flags}
   * @return the result's arrays, at {@link #SECTIONS_HEADER}, {@link #SECTIONS_BATCH} and
   *     {@link #SECTIONS_DIFFS}
   */
  public static native int[][] sectionsDiffRead(ListReader sections, boolean sectionKeyObjects,
      ListReader items, boolean itemKeyObjects, Object oldList, Object newList, int flags);

  /**
   * {@code dfs_list_diff_compute}.
   *
   * @param oldKeys the old list's keys
   * @param oldContents the old list's content fingerprints, or null
   * @param newKeys the new list's keys
   * @param newContents the new list's content fingerprints, or null (then no content
   *     change)
   * @param flags a combination of {@link #BATCH}, {@link #BATCH_MOVE_THEN_RELOAD} and
   *     {@link #SCRIPT}
   * @return the result's arrays, at the indices named by this class's constants
   */
  public static native int[][] diff(long[] oldKeys, long[] oldContents, long[] newKeys,
      long[] newContents, int flags);

  /**
   * {@code dfs_list_sections_diff_compute}: each list of sections as flat arrays (the
   * items of all sections, section after section).
   *
   * @param oldSectionKeys the old sections' keys
   * @param oldSectionContents their content fingerprints, or null
   * @param oldItemCounts the number of items of each old section
   * @param oldItemKeys the keys of the old items
   * @param oldItemContents their content fingerprints, or null
   * @param newSectionKeys the new sections' keys
   * @param newSectionContents their content fingerprints, or null
   * @param newItemCounts the number of items of each new section
   * @param newItemKeys the keys of the new items
   * @param newItemContents their content fingerprints, or null
   * @param flags a combination of {@link #BATCH}, {@link #BATCH_MOVE_THEN_RELOAD} and
   *     {@link #SCRIPT}
   * @return the result's arrays, at {@link #SECTIONS_HEADER}, {@link #SECTIONS_BATCH} and
   *     {@link #SECTIONS_DIFFS}
   */
  public static native int[][] sectionsDiff(long[] oldSectionKeys, long[] oldSectionContents,
      int[] oldItemCounts, long[] oldItemKeys, long[] oldItemContents, long[] newSectionKeys,
      long[] newSectionContents, int[] newItemCounts, long[] newItemKeys, long[] newItemContents,
      int flags);
}
