package io.diffuser.internal;

import io.diffuser.Function;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.RandomAccess;
import java.util.function.BiPredicate;
import java.util.function.ToLongFunction;

/**
 * How the native core reads a Java list, for the {@code intoList} node and for
 * {@link io.diffuser.list.ListDiff}'s factories ({@code dfs_list_diff_read}): the
 * functions of a {@code dfs_list_reader}, each called by the core (through
 * {@code list_jni.c}) when the core needs it, on the calling thread. Each only
 * translates one question into calls of the user's functions and decides nothing; the
 * only state it holds is the key objects of the run under way (below).
 *
 * <p>Keys: with a key function returning objects, {@link #key} is the key's
 * {@link Objects#hashCode(Object) hash} and {@link #sameKey} compares the key objects
 * with {@link Objects#equals(Object, Object)}: the core matches items exactly by key,
 * asking the equality only for keys with equal hashes. The key function is called only
 * where the core asks for a key, as Swift's {@code intoList} calls its key function:
 * {@link #sameKey} compares the key objects {@link #key} made for those items in the
 * same run, which the reader keeps until the next run's {@link #count}. With a
 * {@code long} key function, {@link #key} is the key itself, and the core compares keys
 * as numbers.
 *
 * <p>A reader of sections ({@link #sections}) also gives each section's items
 * ({@link #items}), for {@code dfs_list_sections_diff_read}.
 *
 * <p>Not API.
 */
public final class ListReader {
  private final Function<Object, ?> key;
  private final ToLongFunction<Object> longKey;
  private final BiPredicate<Object, Object> sameContent;
  private final Function<Object, ? extends List<?>> items;
  /**
   * The key objects of a run's two lists, by index (null where not asked yet), for
   * {@link #sameKey}; a run counts each list before asking anything else, which
   * starts its keys afresh. Touched only by the node's runs, which the graph's lock
   * orders.
   */
  private final Object[] lists = new Object[2];
  private final Object[][] keys = new Object[2][];
  /**
   * The sizes of the lists counted in this run: their key slots are made at the first
   * key asked, once the core has accepted the counts (a size it refuses makes none).
   */
  private final int[] sizes = new int[2];
  private int nextSide;

  @SuppressWarnings("unchecked")
  private ListReader(Function<?, ?> key, ToLongFunction<?> longKey, BiPredicate<?, ?> sameContent,
      Function<?, ? extends List<?>> items) {
    this.key = (Function<Object, ?>) key;
    this.longKey = (ToLongFunction<Object>) longKey;
    this.sameContent = (BiPredicate<Object, Object>) Objects.requireNonNull(sameContent, "sameContent");
    this.items = (Function<Object, ? extends List<?>>) items;
  }

  /**
   * A reader of lists whose items are identified by key objects.
   *
   * @param key identifies an item
   * @param sameContent whether two matched items have the same content
   * @return the reader
   */
  public static ListReader byKey(Function<?, ?> key, BiPredicate<?, ?> sameContent) {
    return new ListReader(Objects.requireNonNull(key, "key"), null, sameContent, null);
  }

  /**
   * A reader of lists of sections identified by key objects, each holding a list of items.
   *
   * @param key identifies a section
   * @param sameContent whether two matched sections have the same own content
   * @param items the items of a section
   * @return the reader
   */
  public static ListReader sections(Function<?, ?> key, BiPredicate<?, ?> sameContent,
      Function<?, ? extends List<?>> items) {
    return new ListReader(Objects.requireNonNull(key, "key"), null, sameContent,
        Objects.requireNonNull(items, "items"));
  }

  /**
   * A reader of lists whose items are identified by {@code long} keys.
   *
   * @param key identifies an item
   * @param sameContent whether two matched items have the same content
   * @return the reader
   */
  public static ListReader byLongKey(ToLongFunction<?> key, BiPredicate<?, ?> sameContent) {
    return new ListReader(null, Objects.requireNonNull(key, "key"), sameContent, null);
  }

  /**
   * Whether keys are objects, compared by {@link #sameKey} after their hashes.
   *
   * @return whether the core must ask {@link #sameKey}
   */
  public boolean hasKeyObjects() {
    return key != null;
  }

  private static Object item(Object list, int index) {
    return ((List<?>) list).get(index);
  }

  /**
   * The number of items.
   *
   * @param list a run's value
   * @return its size
   */
  public int count(Object list) {
    if (list == null) {
      throw new NullPointerException("intoList: the list is null (run it with an empty list instead)");
    }
    int size = ((List<?>) list).size();
    if (key != null) {
      int side = lists[0] == list ? 0 : lists[1] == list ? 1 : nextSide;
      if (side == nextSide) nextSide ^= 1;
      lists[side] = list;
      keys[side] = null;
      sizes[side] = size;
    }
    return size;
  }

  /** The key objects of {@code list}, made in this run. */
  private Object[] keysOf(Object list) {
    int side = lists[0] == list ? 0 : 1;
    if (keys[side] == null) keys[side] = new Object[sizes[side]];
    return keys[side];
  }

  /**
   * The key of an item: the {@code long} key, or the hash of the key object.
   *
   * @param list a run's value
   * @param index the item's index
   * @return the key
   */
  public long key(Object list, int index) {
    Object item = item(list, index);
    if (longKey != null) return longKey.applyAsLong(item);
    Object k = key.apply(item);
    keysOf(list)[index] = k;
    return Objects.hashCode(k);
  }

  /**
   * Whether two items have equal key objects.
   *
   * @param a a list
   * @param i an index in {@code a}
   * @param b a list
   * @param j an index in {@code b}
   * @return {@code Objects.equals} of the key objects {@link #key} made for them
   */
  public boolean sameKey(Object a, int i, Object b, int j) {
    return Objects.equals(keysOf(a)[i], keysOf(b)[j]);
  }

  /**
   * Whether two matched items have the same content.
   *
   * @param oldList the list applied last
   * @param oldIndex an index in it
   * @param newList the run's list
   * @param newIndex an index in it
   * @return the user's answer
   */
  public boolean sameContent(Object oldList, int oldIndex, Object newList, int newIndex) {
    return sameContent.test(item(oldList, oldIndex), item(newList, newIndex));
  }

  /**
   * The items of a section, for a reader made by {@link #sections}: a list whose
   * {@code get} takes constant time (the section's own list, or a copy of it).
   *
   * @param sections a list of sections
   * @param index the section's index
   * @return its items
   * @throws NullPointerException if the items function returned null
   */
  public Object items(Object sections, int index) {
    List<?> list = items.apply(item(sections, index));
    if (list == null) throw new NullPointerException("the items of section " + index + " are null");
    return list instanceof RandomAccess ? list : Arrays.asList(list.toArray());
  }
}
