package io.diffuser.list;

import io.diffuser.Function;
import io.diffuser.internal.ListNative;
import io.diffuser.internal.ListReader;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.function.BiPredicate;

/**
 * What changed in a list of sections, each holding its own items, diffed in one call.
 *
 * <pre>{@code
 * ListSectionsDiff diff = ListSectionsDiff.of(oldGroups, newGroups, Group::id, Group::sameHeader,
 *     Group::rows, Row::id, Row::sameContent, ListDiff.Part.BATCH);
 * groups = newGroups;
 * // diff.batch: deleteSections, insertSections, moveSection, reloadSections, then the
 * // item changes of the sections that stay in place.
 * }</pre>
 *
 * <p>Sections are paired by their own key like the items of a {@link ListDiff}
 * ({@link #sections}, whose updates are the sections whose own content, such as a header,
 * changed). The items of each new section are diffed against those of the old section it
 * is paired with ({@link #items}): items move within their section; an item that changes
 * section is deleted from one and inserted into the other.
 *
 * <p>Every factory computes the whole diff, and the batch and the scripts when asked for,
 * in one call of the native core ({@code dfs_list_sections_diff_read}, or
 * {@code dfs_list_sections_diff_compute} for keys), the code the Swift and C APIs use. The
 * key, items and content functions are called back from the core during it, on the
 * calling thread, when and in the order Swift's {@code ListSectionsDiff} calls them: the
 * sections' keys and contents as {@link ListDiff#of} asks them, then for each new section
 * the items of the old section paired with it, its own items, and their diff. An
 * exception thrown by any of them reaches the caller of the factory unchanged, and
 * nothing is called after it.
 */
public final class ListSectionsDiff {
  /**
   * The diff of the sections themselves; with {@link ListDiff.Part#SCRIPT} its script
   * rearranges whole sections. Its {@link ListDiff#batch} is null: the batch of a sections
   * diff is {@link #batch}.
   */
  public final ListDiff sections;
  /**
   * For each new section, the diff of its items from those of the old section paired
   * with it ({@code sections.newToOld}), or from no items for a new section; with
   * {@link ListDiff.Part#SCRIPT} each has the script of its section's items. Unmodifiable.
   */
  public final List<ListDiff> items;
  /**
   * Whether the sections' diff or any section's item diff has duplicates: a key that
   * occurred twice where keys pair by occurrence, outside the common prefix and suffix
   * (see {@link ListDiff#hasDuplicates}).
   */
  public final boolean hasDuplicates;
  /**
   * The batch, if {@link ListDiff.Part#BATCH} or
   * {@link ListDiff.Part#BATCH_MOVE_THEN_RELOAD} was asked for; otherwise {@code null}.
   */
  public final ListSectionsBatch batch;

  private ListSectionsDiff(int[][] result, boolean moveThenReload) {
    int[] header = result[ListNative.SECTIONS_HEADER];
    hasDuplicates = header[0] != 0;
    batch = result[ListNative.SECTIONS_BATCH] == null ? null
        : new ListSectionsBatch(result, ListNative.SECTIONS_BATCH);
    sections = part(result, 0, moveThenReload);
    List<ListDiff> parts = new ArrayList<>(header[1]);
    for (int j = 0; j < header[1]; j++) parts.add(part(result, 1 + j, moveThenReload));
    items = Collections.unmodifiableList(parts);
  }

  private static ListDiff part(int[][] result, int index, boolean moveThenReload) {
    int start = ListNative.SECTIONS_DIFFS + ListNative.DIFF_SIZE * index;
    return new ListDiff(Arrays.copyOfRange(result, start, start + ListNative.DIFF_SIZE), moveThenReload);
  }

  /**
   * Diffs two lists of sections.
   *
   * <p>Section keys and item keys are compared with {@link Object#equals(Object)} and
   * {@link Object#hashCode()} ({@code null} is a key like any other). A key function is
   * called only where the diff needs a key, as for {@link ListDiff#of}. {@code items} is
   * called for each new section and for each old section paired with one (not for a
   * deleted section); {@code sameSection} once per matched pair of sections and
   * {@code sameItem} once per matched pair of items; {@code false} makes the pair an
   * update.
   *
   * @param <S> the type of sections
   * @param <T> the type of items
   * @param oldSections the sections applied last
   * @param newSections the sections to apply
   * @param sectionKey identifies a section
   * @param sameSection whether two matched sections have the same own content (a header),
   *     apart from their items
   * @param items the items of a section
   * @param itemKey identifies an item within its section
   * @param sameItem whether two matched items have the same content
   * @param parts what to compute besides the diff: a batch, the scripts
   * @return the diff
   * @throws NullPointerException if a list, a function or a section's items is null
   * @throws RuntimeException what a function threw, unchanged
   */
  public static <S, T> ListSectionsDiff of(List<? extends S> oldSections, List<? extends S> newSections,
      Function<? super S, ?> sectionKey, BiPredicate<? super S, ? super S> sameSection,
      Function<? super S, ? extends List<? extends T>> items, Function<? super T, ?> itemKey,
      BiPredicate<? super T, ? super T> sameItem, ListDiff.Part... parts) {
    Objects.requireNonNull(oldSections, "oldSections");
    Objects.requireNonNull(newSections, "newSections");
    Objects.requireNonNull(sectionKey, "sectionKey");
    Objects.requireNonNull(sameSection, "sameSection");
    Objects.requireNonNull(items, "items");
    Objects.requireNonNull(itemKey, "itemKey");
    Objects.requireNonNull(sameItem, "sameItem");
    ListReader sectionReader = ListReader.sections(sectionKey, sameSection, items);
    ListReader itemReader = ListReader.byKey(itemKey, sameItem);
    int flags = ListNative.flags(parts);
    int[][] result = ListNative.sectionsDiffRead(sectionReader, true, itemReader, true,
        indexed(oldSections, "oldSections"), indexed(newSections, "newSections"), flags);
    return new ListSectionsDiff(result, (flags & ListNative.BATCH_MOVE_THEN_RELOAD) != 0);
  }

  /** {@code list}, or a copy of it whose {@code get} takes constant time. */
  private static List<?> indexed(List<?> list, String name) {
    Objects.requireNonNull(list, name);
    return list instanceof RandomAccess ? list : Arrays.asList(list.toArray());
  }

  /**
   * {@link #of(List, List, Function, BiPredicate, Function, Function, BiPredicate,
   * ListDiff.Part...)} with sections and items compared by
   * {@link Objects#equals(Object, Object)}: a section whose items changed is equal only if
   * its {@code equals} says so, so prefer the full form when sections hold their items.
   *
   * @param <S> the type of sections
   * @param <T> the type of items
   * @param oldSections the sections applied last
   * @param newSections the sections to apply
   * @param sectionKey identifies a section
   * @param items the items of a section
   * @param itemKey identifies an item within its section
   * @param parts what to compute besides the diff: a batch, the scripts
   * @return the diff
   */
  public static <S, T> ListSectionsDiff of(List<? extends S> oldSections, List<? extends S> newSections,
      Function<? super S, ?> sectionKey, Function<? super S, ? extends List<? extends T>> items,
      Function<? super T, ?> itemKey, ListDiff.Part... parts) {
    return of(oldSections, newSections, sectionKey, Objects::equals, items, itemKey, Objects::equals, parts);
  }

  /**
   * Diffs two lists of sections given by keys: deletes, inserts and moves, never updates.
   *
   * @param oldSectionKeys the keys of the sections applied last
   * @param oldItemKeys for each old section, the keys of its items
   * @param newSectionKeys the keys of the sections to apply
   * @param newItemKeys for each new section, the keys of its items
   * @param parts what to compute besides the diff: a batch, the scripts
   * @return the diff
   * @throws NullPointerException if an array is null
   * @throws IllegalArgumentException if a list has not one array of item keys per section,
   *     or its sections hold more items in all than one array can
   */
  public static ListSectionsDiff ofKeys(long[] oldSectionKeys, long[][] oldItemKeys, long[] newSectionKeys,
      long[][] newItemKeys, ListDiff.Part... parts) {
    Objects.requireNonNull(oldSectionKeys, "oldSectionKeys");
    Objects.requireNonNull(newSectionKeys, "newSectionKeys");
    int[] oldCounts = counts(Objects.requireNonNull(oldItemKeys, "oldItemKeys"), oldSectionKeys.length, "old");
    int[] newCounts = counts(Objects.requireNonNull(newItemKeys, "newItemKeys"), newSectionKeys.length, "new");
    return compute(oldSectionKeys, oldCounts, flatten(oldItemKeys), newSectionKeys, newCounts,
        flatten(newItemKeys), parts);
  }

  private static int[] counts(long[][] itemKeys, int sections, String name) {
    if (itemKeys.length != sections) {
      throw new IllegalArgumentException(name + " sections: " + sections + " keys but " + itemKeys.length
          + " arrays of item keys");
    }
    int[] counts = new int[sections];
    for (int s = 0; s < sections; s++) {
      if (itemKeys[s] == null) throw new NullPointerException(name + " item keys of section " + s);
      counts[s] = itemKeys[s].length;
    }
    return counts;
  }

  private static long[] flatten(long[][] arrays) {
    long total = 0;
    for (long[] array : arrays) total += array.length;
    if (total > Integer.MAX_VALUE - 8) {
      // An array this long cannot be made; the core takes fewer items still.
      throw new IllegalArgumentException("the sections hold " + total + " items in all, more than a list of"
          + " item keys can hold");
    }
    long[] flat = new long[(int) total];
    int at = 0;
    for (long[] array : arrays) {
      System.arraycopy(array, 0, flat, at, array.length);
      at += array.length;
    }
    return flat;
  }

  private static ListSectionsDiff compute(long[] oldSectionKeys, int[] oldCounts, long[] oldItemKeys,
      long[] newSectionKeys, int[] newCounts, long[] newItemKeys, ListDiff.Part... parts) {
    int flags = ListNative.flags(parts);
    int[][] result = ListNative.sectionsDiff(oldSectionKeys, null, oldCounts, oldItemKeys, null, newSectionKeys,
        null, newCounts, newItemKeys, null, flags);
    return new ListSectionsDiff(result, (flags & ListNative.BATCH_MOVE_THEN_RELOAD) != 0);
  }

  /**
   * Whether nothing changed: the sections and the items of every section.
   *
   * @return whether the diff is empty
   */
  public boolean isEmpty() {
    if (!sections.isEmpty()) return false;
    for (ListDiff part : items) if (!part.isEmpty()) return false;
    return true;
  }

  @Override
  public String toString() {
    return "ListSectionsDiff(sections " + sections + ", items " + items + (hasDuplicates ? ", duplicates" : "") + ")";
  }
}
