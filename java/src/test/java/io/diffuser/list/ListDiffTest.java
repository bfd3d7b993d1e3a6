package io.diffuser.list;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import org.junit.Test;

/**
 * The keyed list diff through the Java API: seeded property tests with the invariants of
 * the Swift tests (a slow reference pairing, moves equal to matched minus a longest
 * increasing subsequence, both batches played by UIKit's rules, the script replayed with
 * every index in range), and the binding's own behaviour (exceptions, forms, arguments).
 *
 * <p>One file because the generators, the slow reference and the UIKit and script
 * players sit next to the properties that use them, so each invariant is read with its
 * checker in view; {@link IntoListTest} and {@link ListSectionsDiffTest} import its items
 * and checks (and IntoListTest its generators and players) instead of keeping copies.
 */
public class ListDiffTest {
  /** SplitMix64, seeded: every case replays. */
  static final class Random {
    private long state;

    Random(long seed) {
      state = seed * 0x2545F4914F6CDD1DL + 1;
    }

    long next() {
      state += 0x9E3779B97F4A7C15L;
      long z = state;
      z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
      z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
      return z ^ (z >>> 31);
    }

    /** Uniform in 0 ..< bound. */
    int below(int bound) {
      return (int) Long.remainderUnsigned(next(), bound);
    }

    /** Uniform in lo ... hi. */
    int between(int lo, int hi) {
      return lo + below(hi - lo + 1);
    }

    boolean chance(double p) {
      return (next() >>> 11) * 0x1.0p-53 < p;
    }

    <T> void shuffle(List<T> list) {
      for (int i = list.size() - 1; i > 0; i--) Collections.swap(list, i, below(i + 1));
    }
  }

  /** A list item: identified by key, with content that may change. */
  static final class Item {
    final int key;
    final int content;

    Item(int key, int content) {
      this.key = key;
      this.content = content;
    }

    @Override
    public boolean equals(Object other) {
      return other instanceof Item && ((Item) other).key == key && ((Item) other).content == content;
    }

    @Override
    public int hashCode() {
      return key * 31 + content;
    }

    @Override
    public String toString() {
      return content == 0 ? Integer.toString(key) : key + "'" + content;
    }
  }

  // ---- Generators ---------------------------------------------------------------------

  static List<Item> randomList(Random g, int count, int alphabet) {
    List<Item> list = new ArrayList<>();
    for (int i = 0; i < count; i++) list.add(new Item(g.below(Math.max(alphabet, 1)), g.chance(0.2) ? g.between(1, 3) : 0));
    return list;
  }

  static List<Item> uniqueList(Random g, int count, int alphabet) {
    List<Integer> keys = new ArrayList<>();
    for (int k = 0; k < Math.max(alphabet, count); k++) keys.add(k);
    g.shuffle(keys);
    List<Item> list = new ArrayList<>();
    for (int i = 0; i < count; i++) list.add(new Item(keys.get(i), g.chance(0.2) ? g.between(1, 3) : 0));
    return list;
  }

  static List<Item> edited(List<Item> list, Random g, int alphabet, boolean unique) {
    List<Item> result = new ArrayList<>(list);
    int nextKey = alphabet;
    int edits = g.between(0, 10);
    for (int e = 0; e < edits; e++) {
      int n = result.size();
      switch (g.below(6)) {
        case 0:
          if (n > 0) result.remove(g.below(n));
          break;
        case 1:
          result.add(g.between(0, n), new Item(unique ? nextKey++ : g.below(Math.max(alphabet, 1)), 0));
          break;
        case 2:
          if (n > 0) result.add(g.between(0, n - 1), result.remove(g.below(n)));
          break;
        case 3:
          if (n > 0) {
            int i = g.below(n);
            result.set(i, new Item(result.get(i).key, g.between(0, 3)));
          }
          break;
        case 4:
          if (n > 1) Collections.swap(result, g.below(n), g.below(n));
          break;
        default:
          if (n > 1) {
            int start = g.below(n);
            int end = Math.min(n, start + g.between(1, 5));
            List<Item> block = new ArrayList<>(result.subList(start, end));
            result.subList(start, end).clear();
            result.addAll(g.between(0, result.size()), block);
          }
          break;
      }
    }
    return result;
  }

  /** A pair of lists of one of several shapes. */
  static List<List<Item>> pair(Random g, int maxCount, boolean unique) {
    int[] alphabets = {1, 2, 3, 5, 8, 16, 64, 1000};
    int count = g.between(0, maxCount);
    int alphabet = unique ? Math.max(count * 2, 4) + g.between(0, maxCount) : alphabets[g.below(alphabets.length)];
    List<Item> old = unique ? uniqueList(g, count, alphabet) : randomList(g, count, alphabet);
    List<Item> next;
    switch (g.below(10)) {
      case 0:
        int newCount = g.between(0, maxCount);
        next = unique ? uniqueList(g, newCount, alphabet) : randomList(g, newCount, alphabet);
        break;
      case 1:
        next = new ArrayList<>(old);
        g.shuffle(next);
        break;
      case 2:
        next = new ArrayList<>(old);
        Collections.reverse(next);
        break;
      case 3:
        next = new ArrayList<>(old);
        break;
      default:
        next = edited(old, g, alphabet, unique);
        break;
    }
    return Arrays.asList(old, next);
  }

  // ---- References and simulators ------------------------------------------------------

  /** The promised pairing, slowly: prefix and suffix in place, then k-th occurrences. */
  static int[] referencePairing(List<Item> old, List<Item> next, boolean[] duplicates) {
    int n = old.size();
    int m = next.size();
    int[] o2n = new int[n];
    Arrays.fill(o2n, -1);
    int p = 0;
    while (p < Math.min(n, m) && old.get(p).key == next.get(p).key) {
      o2n[p] = p;
      p++;
    }
    int s = 0;
    while (s < Math.min(n, m) - p && old.get(n - 1 - s).key == next.get(m - 1 - s).key) {
      o2n[n - 1 - s] = m - 1 - s;
      s++;
    }
    Map<Integer, List<Integer>> olds = new HashMap<>();
    Map<Integer, List<Integer>> news = new HashMap<>();
    for (int i = p; i < n - s; i++) olds.computeIfAbsent(old.get(i).key, k -> new ArrayList<>()).add(i);
    for (int j = p; j < m - s; j++) news.computeIfAbsent(next.get(j).key, k -> new ArrayList<>()).add(j);
    boolean repeated = false;
    for (Map.Entry<Integer, List<Integer>> e : olds.entrySet()) {
      List<Integer> js = news.getOrDefault(e.getKey(), Collections.emptyList());
      for (int k = 0; k < Math.min(e.getValue().size(), js.size()); k++) o2n[e.getValue().get(k)] = js.get(k);
      repeated |= e.getValue().size() > 1;
    }
    for (List<Integer> js : news.values()) repeated |= js.size() > 1;
    duplicates[0] = p < n - s && p < m - s && repeated;
    return o2n;
  }

  /** The length of a longest increasing subsequence, by the O(n^2) recurrence. */
  static int lisLength(List<Integer> values) {
    int[] best = new int[values.size()];
    int result = 0;
    for (int i = 0; i < values.size(); i++) {
      best[i] = 1;
      for (int j = 0; j < i; j++) if (values.get(j) < values.get(i)) best[i] = Math.max(best[i], best[j] + 1);
      result = Math.max(result, best[i]);
    }
    return result;
  }

  static final class CheckFailure extends Exception {
    private static final long serialVersionUID = 1L;

    CheckFailure(String message) {
      super(message);
    }
  }

  /**
   * Plays a batch by UIKit's rules (the data source already holds {@code next}) and returns
   * what the view shows: an item not deleted, inserted or reloaded keeps its old content.
   * Throws where UIKit raises an exception.
   */
  static List<Item> playUIKitBatch(ListBatch batch, List<Item> old, List<Item> next) throws CheckFailure {
    int n = old.size();
    int m = next.size();
    if (n - batch.deletes.length + batch.inserts.length != m) throw new CheckFailure("invalid number of items");
    boolean[] oldUsed = new boolean[n];
    boolean[] newUsed = new boolean[m];
    boolean[] deleted = new boolean[n];
    boolean[] reloaded = new boolean[n];
    boolean[] moveSource = new boolean[n];
    for (int i : batch.deletes) {
      use(oldUsed, i, "delete");
      deleted[i] = true;
    }
    for (int i : batch.reloads) {
      use(oldUsed, i, "reload");
      reloaded[i] = true;
    }
    for (int k = 0; k < batch.moves.length; k += 2) {
      use(oldUsed, batch.moves[k], "move source");
      moveSource[batch.moves[k]] = true;
    }
    for (int j : batch.inserts) use(newUsed, j, "insert");
    for (int k = 0; k < batch.moves.length; k += 2) use(newUsed, batch.moves[k + 1], "move destination");
    Item[] shown = new Item[m];
    for (int j : batch.inserts) shown[j] = next.get(j);
    for (int k = 0; k < batch.moves.length; k += 2) shown[batch.moves[k + 1]] = old.get(batch.moves[k]);
    int slot = 0;
    for (int i = 0; i < n; i++) {
      if (deleted[i] || moveSource[i]) continue;
      while (slot < m && shown[slot] != null) slot++;
      if (slot >= m) throw new CheckFailure("no place left for old item " + i);
      shown[slot] = reloaded[i] ? next.get(slot) : old.get(i);
      slot++;
    }
    Set<Integer> movedInto = new HashSet<>();
    for (int k = 0; k < batch.moves.length; k += 2) movedInto.add(batch.moves[k + 1]);
    for (int j : batch.reloadsAfterMoves) {
      if (!movedInto.remove(j)) throw new CheckFailure("reload after moves at " + j + ", not a moved item");
      shown[j] = next.get(j);
    }
    return Arrays.asList(shown);
  }

  static void use(boolean[] used, int index, String what) throws CheckFailure {
    if (index < 0 || index >= used.length) throw new CheckFailure(what + " index " + index + " out of range");
    if (used[index]) throw new CheckFailure("index " + index + " used twice (" + what + ")");
    used[index] = true;
  }

  /** Replays a script, checking every index against the list as the steps left it. */
  static List<Item> playScript(ListScript script, List<Item> old, List<Item> next) throws CheckFailure {
    List<Item> list = new ArrayList<>(old);
    int[] steps = script.steps;
    if (steps.length % 3 != 0) throw new CheckFailure("script length " + steps.length);
    int phase = 0;
    int[] last = {Integer.MAX_VALUE, -2, -2};
    for (int k = 0; k < steps.length; k += 3) {
      int kind = steps[k];
      int a = steps[k + 1];
      int b = steps[k + 2];
      // Phases: removes (kind 1), moves (2), inserts (3), changes (4), in that order.
      if (kind < phase) throw new CheckFailure("phases out of order");
      phase = kind;
      switch (kind) {
        case ListScript.REMOVE:
          if (b <= 0 || a < 0 || a + b > list.size()) throw new CheckFailure("remove " + a + "," + b + " on " + list.size());
          if (a + b >= last[0]) throw new CheckFailure("removes not descending or not merged");
          last[0] = a;
          list.subList(a, a + b).clear();
          break;
        case ListScript.MOVE:
          if (a < 0 || a >= list.size() || b < 0 || b >= list.size()) throw new CheckFailure("move " + a + "," + b + " on " + list.size());
          list.add(b, list.remove(a));
          break;
        case ListScript.INSERT:
          if (b <= 0 || a < 0 || a > list.size() || a + b > next.size()) throw new CheckFailure("insert " + a + "," + b + " on " + list.size());
          if (a <= last[1]) throw new CheckFailure("inserts not ascending or not merged");
          last[1] = a + b;
          list.addAll(a, next.subList(a, a + b));
          break;
        case ListScript.CHANGE:
          if (b <= 0 || a < 0 || a + b > list.size() || a + b > next.size()) throw new CheckFailure("change " + a + "," + b + " on " + list.size());
          if (a <= last[2]) throw new CheckFailure("changes not ascending or not merged");
          last[2] = a + b;
          for (int i = a; i < a + b; i++) list.set(i, next.get(i));
          break;
        default:
          throw new CheckFailure("unknown step kind " + kind);
      }
    }
    return list;
  }

  static boolean ascending(int[] values, int start, int stride) {
    for (int k = start + stride; k < values.length; k += stride) if (values[k - stride] >= values[k]) return false;
    return true;
  }

  /** Every property of {@code diff} (and of both batches and the script) from old to next. */
  static void check(List<Item> old, List<Item> next) throws CheckFailure {
    ListDiff diff = ListDiff.byLongKey(old, next, item -> item.key, Item::equals, ListDiff.Part.BATCH, ListDiff.Part.SCRIPT);
    ListDiff mtr = ListDiff.byLongKey(old, next, item -> item.key, Item::equals, ListDiff.Part.BATCH_MOVE_THEN_RELOAD);
    int n = old.size();
    int m = next.size();
    if (diff.oldCount != n || diff.newCount != m || diff.oldToNew.length != n || diff.newToOld.length != m) throw new CheckFailure("counts");

    int matched = 0;
    for (int i = 0; i < n; i++) {
      int j = diff.oldToNew[i];
      if (j < 0) continue;
      if (j >= m || diff.newToOld[j] != i) throw new CheckFailure("maps disagree at old " + i);
      if (old.get(i).key != next.get(j).key) throw new CheckFailure("old " + i + " paired with new " + j + ", keys differ");
      matched++;
    }
    int pairedNew = 0;
    for (int i : diff.newToOld) if (i >= 0) pairedNew++;
    if (pairedNew != matched) throw new CheckFailure("newToOld has extra pairs");

    boolean[] duplicates = new boolean[1];
    int[] reference = referencePairing(old, next, duplicates);
    if (!Arrays.equals(reference, diff.oldToNew)) throw new CheckFailure("pairing differs from the reference " + Arrays.toString(reference));
    if (duplicates[0] != diff.hasDuplicates) throw new CheckFailure("hasDuplicates " + diff.hasDuplicates);

    List<Integer> deletes = new ArrayList<>();
    for (int i = 0; i < n; i++) if (diff.oldToNew[i] < 0) deletes.add(i);
    List<Integer> inserts = new ArrayList<>();
    List<Integer> updates = new ArrayList<>();
    for (int j = 0; j < m; j++) {
      int i = diff.newToOld[j];
      if (i < 0) inserts.add(j);
      else if (!old.get(i).equals(next.get(j))) {
        updates.add(i);
        updates.add(j);
      }
    }
    if (!deletes.equals(box(diff.deletes))) throw new CheckFailure("deletes");
    if (!inserts.equals(box(diff.inserts))) throw new CheckFailure("inserts");
    if (!updates.equals(box(diff.updates))) throw new CheckFailure("updates, expected " + updates);
    if (n - diff.deletes.length + diff.inserts.length != m) throw new CheckFailure("counts do not add up");
    if (diff.matchedCount() != matched) throw new CheckFailure("matchedCount");

    Set<Integer> movedNew = new HashSet<>();
    for (int k = 0; k < diff.moves.length; k += 2) {
      int i = diff.moves[k];
      int j = diff.moves[k + 1];
      if (i < 0 || i >= n || diff.oldToNew[i] != j) throw new CheckFailure("move " + i + "->" + j + " is not a pair");
      movedNew.add(j);
    }
    if (!ascending(diff.moves, 1, 2)) throw new CheckFailure("moves not ascending");
    List<Integer> sequence = new ArrayList<>();
    List<Integer> staying = new ArrayList<>();
    for (int j = 0; j < m; j++) {
      int i = diff.newToOld[j];
      if (i < 0) continue;
      sequence.add(i);
      if (!movedNew.contains(j)) staying.add(i);
    }
    for (int k = 1; k < staying.size(); k++) if (staying.get(k - 1) >= staying.get(k)) throw new CheckFailure("items that stay are not in order");
    if (diff.moves.length / 2 != matched - lisLength(sequence)) throw new CheckFailure(diff.moves.length / 2 + " moves, minimum " + (matched - lisLength(sequence)));

    // The other call made the same diff.
    if (!Arrays.equals(diff.moves, mtr.moves) || !Arrays.equals(diff.updates, mtr.updates)
        || !Arrays.equals(diff.oldToNew, mtr.oldToNew) || diff.hasDuplicates != mtr.hasDuplicates) {
      throw new CheckFailure("two calls, two diffs");
    }

    Set<Integer> movedAndChanged = new HashSet<>(movedNew);
    Set<Integer> changedNew = new HashSet<>();
    for (int k = 1; k < diff.updates.length; k += 2) changedNew.add(diff.updates[k]);
    movedAndChanged.retainAll(changedNew);
    for (ListBatch batch : Arrays.asList(diff.batch, mtr.batch)) {
      String mode = batch.moveThenReload ? "moveThenReload" : "deleteAndInsert";
      if (!ascending(batch.deletes, 0, 1) || !ascending(batch.inserts, 0, 1) || !ascending(batch.reloads, 0, 1)
          || !ascending(batch.reloadsAfterMoves, 0, 1) || !ascending(batch.moves, 1, 2)) {
        throw new CheckFailure(mode + ": not ascending");
      }
      if (batch.moveThenReload) {
        if (!Arrays.equals(batch.moves, diff.moves) || !Arrays.equals(batch.deletes, diff.deletes)
            || !Arrays.equals(batch.inserts, diff.inserts) || !new HashSet<>(box(batch.reloadsAfterMoves)).equals(movedAndChanged)) {
          throw new CheckFailure(mode + ": counts");
        }
      } else if (batch.reloadsAfterMoves.length != 0 || batch.moves.length / 2 != diff.moves.length / 2 - movedAndChanged.size()
          || batch.deletes.length != diff.deletes.length + movedAndChanged.size()
          || batch.inserts.length != diff.inserts.length + movedAndChanged.size()) {
        throw new CheckFailure(mode + ": counts");
      }
      if (batch.reloads.length != diff.updates.length / 2 - movedAndChanged.size()) throw new CheckFailure(mode + ": reloads");
      List<Item> shown = playUIKitBatch(batch, old, next);
      if (!shown.equals(next)) throw new CheckFailure(mode + " " + batch + " shows " + shown);
    }

    List<Item> replayed = playScript(diff.script, old, next);
    if (!replayed.equals(next)) throw new CheckFailure("script " + diff.script + " gives " + replayed);
    List<Item> applied = new ArrayList<>(old);
    diff.script.applyTo(applied, next);
    if (!applied.equals(next)) throw new CheckFailure("applyTo gives " + applied);
    int scriptMoves = 0;
    for (int k = 0; k < diff.script.steps.length; k += 3) if (diff.script.steps[k] == ListScript.MOVE) scriptMoves++;
    if (scriptMoves > diff.moves.length / 2) throw new CheckFailure("script has more moves than the diff");
  }

  static List<Integer> box(int[] values) {
    List<Integer> list = new ArrayList<>();
    for (int v : values) list.add(v);
    return list;
  }

  static void checkSeeds(long first, int count, int maxCount, boolean unique, int[] duplicateCases) {
    for (long seed = first; seed < first + count; seed++) {
      Random g = new Random(seed);
      List<List<Item>> lists = pair(g, maxCount, unique);
      try {
        check(lists.get(0), lists.get(1));
      } catch (CheckFailure e) {
        fail("seed " + seed + ": " + e.getMessage() + "\nold " + lists.get(0) + "\nnew " + lists.get(1));
      }
      if (duplicateCases != null && ListDiff.byLongKey(lists.get(0), lists.get(1), item -> item.key, Item::equals).hasDuplicates) {
        duplicateCases[0]++;
      }
    }
  }

  // ---- Property tests -----------------------------------------------------------------

  /** Small lists (0-64 items), small key alphabets so that duplicates are common. */
  @Test
  public void propertiesOfSmallLists() {
    int[] duplicateCases = {0};
    checkSeeds(0, 3000, 64, false, duplicateCases);
    assertTrue("the generator must exercise duplicates: " + duplicateCases[0], duplicateCases[0] > 700);
  }

  /** Lists of unique keys. */
  @Test
  public void propertiesOfUniqueKeys() {
    checkSeeds(10_000, 1500, 64, true, null);
  }

  /** A few large lists, with duplicates and without. */
  @Test
  public void propertiesOfLargeLists() {
    checkSeeds(50_000, 8, 1500, false, null);
    checkSeeds(60_000, 8, 1500, true, null);
  }

  // ---- The forms agree ----------------------------------------------------------------

  /** Object keys, long keys, equals and fingerprints give the same diff. */
  @Test
  public void everyFormGivesTheSameDiff() {
    for (long seed = 0; seed < 300; seed++) {
      Random g = new Random(90_000 + seed);
      List<List<Item>> lists = pair(g, 40, false);
      List<Item> old = lists.get(0);
      List<Item> next = lists.get(1);
      ListDiff a = ListDiff.byLongKey(old, next, item -> item.key, Item::equals, ListDiff.Part.SCRIPT);
      // Keys as objects that are equal but not identical.
      ListDiff b = ListDiff.of(old, next, item -> "key " + item.key, Item::equals, ListDiff.Part.SCRIPT);
      ListDiff c = ListDiff.of(old, next, item -> item.key, ListDiff.Part.SCRIPT);
      long[][] arrays = new long[4][];
      for (int s = 0; s < 2; s++) {
        List<Item> side = lists.get(s);
        arrays[2 * s] = new long[side.size()];
        arrays[2 * s + 1] = new long[side.size()];
        for (int i = 0; i < side.size(); i++) {
          arrays[2 * s][i] = side.get(i).key * 0x9E3779B97F4A7C15L;
          arrays[2 * s + 1][i] = side.get(i).content;
        }
      }
      ListDiff d = ListDiff.ofKeys(arrays[0], arrays[1], arrays[2], arrays[3], ListDiff.Part.SCRIPT);
      for (ListDiff other : Arrays.asList(b, c, d)) {
        String where = "seed " + seed + ": " + a + " / " + other;
        assertArrayEquals(where, a.moves, other.moves);
        assertArrayEquals(where, a.updates, other.updates);
        assertArrayEquals(where, a.oldToNew, other.oldToNew);
        assertArrayEquals(where, a.script.steps, other.script.steps);
        assertEquals(where, a.hasDuplicates, other.hasDuplicates);
      }
      // Keys only: the same pairing, no updates.
      ListDiff keysOnly = ListDiff.ofKeys(arrays[0], arrays[2]);
      assertArrayEquals(a.oldToNew, keysOnly.oldToNew);
      assertEquals(0, keysOnly.updates.length);
    }
  }

  // ---- The binding ----------------------------------------------------------------------

  @Test
  public void partsAreComputedOnlyWhenAskedFor() {
    List<Item> old = Arrays.asList(new Item(1, 0), new Item(2, 0), new Item(3, 0));
    List<Item> next = Arrays.asList(new Item(3, 1), new Item(1, 0), new Item(2, 0));
    ListDiff plain = ListDiff.of(old, next, item -> item.key);
    assertNull(plain.batch);
    assertNull(plain.script);
    assertFalse(plain.isEmpty());
    assertArrayEquals(new int[] {2, 0}, plain.moves);
    assertArrayEquals(new int[] {2, 0}, plain.updates);

    ListDiff batch = ListDiff.of(old, next, item -> item.key, ListDiff.Part.BATCH);
    assertFalse(batch.batch.moveThenReload);
    assertArrayEquals(new int[] {2}, batch.batch.deletes);
    assertArrayEquals(new int[] {0}, batch.batch.inserts);
    assertEquals(0, batch.batch.moves.length);
    assertNull(batch.script);

    ListDiff both = ListDiff.of(old, next, item -> item.key, ListDiff.Part.BATCH, ListDiff.Part.BATCH_MOVE_THEN_RELOAD,
        ListDiff.Part.SCRIPT);
    assertTrue(both.batch.moveThenReload);
    assertArrayEquals(new int[] {2, 0}, both.batch.moves);
    assertArrayEquals(new int[] {0}, both.batch.reloadsAfterMoves);
    assertArrayEquals(new int[] {ListScript.MOVE, 2, 0, ListScript.CHANGE, 0, 1}, both.script.steps);
    assertEquals(2, both.script.size());

    List<String> calls = new ArrayList<>();
    both.script.forEach(new ListScript.Receiver() {
      @Override
      public void remove(int at, int count) {
        calls.add("remove " + at + " " + count);
      }

      @Override
      public void move(int from, int to) {
        calls.add("move " + from + " " + to);
      }

      @Override
      public void insert(int at, int count) {
        calls.add("insert " + at + " " + count);
      }

      @Override
      public void change(int at, int count) {
        calls.add("change " + at + " " + count);
      }
    });
    assertEquals(Arrays.asList("move 2 0", "change 0 1"), calls);

    ListDiff same = ListDiff.of(old, old, item -> item.key, ListDiff.Part.BATCH, ListDiff.Part.SCRIPT);
    assertTrue(same.isEmpty());
    assertTrue(same.batch.isEmpty());
    assertEquals(0, same.script.size());
    assertEquals(3, same.matchedCount());
  }

  static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Failure(String message) {
      super(message);
    }
  }

  @Test
  public void aThrowingContentPredicateIsRethrownUnchanged() {
    List<Item> old = Arrays.asList(new Item(1, 0), new Item(2, 0), new Item(3, 0));
    List<Item> next = Arrays.asList(new Item(3, 0), new Item(2, 0), new Item(1, 0));
    Failure failure = new Failure("content");
    List<String> compared = new ArrayList<>();
    try {
      ListDiff.of(old, next, item -> item.key, (a, b) -> {
        compared.add(a + "/" + b);
        if (a.key == 2) throw failure;
        return true;
      }, ListDiff.Part.SCRIPT);
      fail("no exception");
    } catch (Failure e) {
      assertSame(failure, e);
    }
    // The comparison stopped at the failure.
    assertEquals("2/2", compared.get(compared.size() - 1));
    // An Error too, and the binding still works afterwards.
    AssertionError error = new AssertionError("an error");
    try {
      ListDiff.byLongKey(old, next, item -> item.key, (a, b) -> {
        throw error;
      });
      fail("no error");
    } catch (AssertionError e) {
      assertSame(error, e);
    }
    assertEquals(2, ListDiff.of(old, next, item -> item.key).moves.length / 2);
  }

  @Test
  public void aThrowingKeyFunctionIsRethrownUnchanged() {
    List<Item> old = Arrays.asList(new Item(1, 0), new Item(2, 0));
    Failure failure = new Failure("key");
    try {
      ListDiff.of(old, old, item -> {
        if (item.key == 2) throw failure;
        return item.key;
      });
      fail("no exception");
    } catch (Failure e) {
      assertSame(failure, e);
    }
  }

  @Test
  public void nullKeysAndNullItemsAreKeysAndItems() {
    List<String> old = Arrays.asList("a", null, "b");
    List<String> next = Arrays.asList(null, "b", "a");
    ListDiff diff = ListDiff.of(old, next, item -> item, ListDiff.Part.SCRIPT);
    assertArrayEquals(new int[] {2, 0, 1}, diff.oldToNew);
    assertEquals(0, diff.updates.length);
    List<String> patched = new ArrayList<>(old);
    diff.script.applyTo(patched, next);
    assertEquals(next, patched);
  }

  @Test
  public void duplicatesAreReportedNotRefused() {
    ListDiff diff = ListDiff.ofKeys(new long[] {1, 2, 1, 3}, new long[] {3, 1, 1, 1, 2});
    assertTrue(diff.hasDuplicates);
    assertEquals(4, diff.matchedCount());
    assertArrayEquals(new int[] {3}, diff.inserts);
    assertNotNull(diff.toString());
  }

  @Test
  public void badArgumentsAreRefused() {
    try {
      ListDiff.ofKeys(new long[] {1, 2}, new long[] {0}, new long[] {1}, new long[] {0});
      fail("no exception");
    } catch (IllegalArgumentException expected) {
      // one fingerprint per key
    }
    try {
      ListDiff.ofKeys(null, new long[0]);
      fail("no exception");
    } catch (NullPointerException expected) {
      // keys are required
    }
    try {
      ListDiff.of(Collections.<Item>emptyList(), Collections.<Item>emptyList(), item -> item.key, (ListDiff.Part) null);
      fail("no exception");
    } catch (NullPointerException expected) {
      // parts are not null
    }
    try {
      ListDiff.of(Collections.<Item>emptyList(), Collections.<Item>emptyList(), item -> item.key, (ListDiff.Part[]) null);
      fail("no exception");
    } catch (NullPointerException expected) {
      assertEquals("parts", expected.getMessage());
    }
    List<Item> empty = Collections.emptyList();
    ListDiff diff = ListDiff.of(empty, empty, item -> item.key, ListDiff.Part.BATCH, ListDiff.Part.SCRIPT);
    assertTrue(diff.isEmpty());
    assertEquals(0, diff.oldToNew.length);
    assertEquals(0, diff.script.steps.length);
  }

  @Test
  public void theContentPredicateSeesEveryMatchedPairOnce() {
    Random g = new Random(4242);
    for (int round = 0; round < 50; round++) {
      List<List<Item>> lists = pair(g, 30, false);
      List<Item> old = lists.get(0);
      List<Item> next = lists.get(1);
      Map<String, Integer> seen = new HashMap<>();
      ListDiff diff = ListDiff.of(old, next, item -> item.key, (a, b) -> {
        seen.merge(System.identityHashCode(a) + "/" + System.identityHashCode(b), 1, Integer::sum);
        return Objects.equals(a, b);
      });
      int calls = 0;
      for (int count : seen.values()) calls += count;
      assertEquals(diff.matchedCount(), calls);
    }
  }

  /** The core asks for keys and contents in its order, as Swift's ListDiff does
   * (ListDiffTests.testKeyCallsInTheCoresOrder): a key where the diff needs it. */
  @Test
  public void theCoreAsksForKeysInItsOrder() {
    List<String> log = new ArrayList<>();
    ListDiff diff = ListDiff.of(IntoListTest.named("a", "1", "2", "3"), IntoListTest.named("b", "1", "3", "2"),
        (IntoListTest.Named item) -> {
          log.add("k:" + item.name);
          return item.key;
        }, (IntoListTest.Named x, IntoListTest.Named y) -> {
          log.add("c:" + x.name + "," + y.name);
          return true;
        });
    assertEquals("k:a1 k:b1 c:a1,b1 k:a2 k:b3 k:a3 k:b2 k:a2 k:a3 k:b3 k:b2 c:a3,b3 c:a2,b2",
        String.join(" ", log));
    assertEquals(1, diff.moves.length / 2);
  }

  /** A key the diff does not need is not asked for: none, when one list is empty. */
  @Test
  public void keysOfAnEmptySideAreNotAsked() {
    ListDiff diff = ListDiff.of(Collections.<String>emptyList(), Arrays.asList("x", "y"), (String item) -> {
      throw new IllegalStateException("no key may be asked");
    });
    assertEquals(2, diff.inserts.length);
    IllegalStateException thrown = new IllegalStateException("refused");
    try {
      ListDiff.of(Arrays.asList("x"), Arrays.asList("y"), (String item) -> {
        throw thrown;
      });
      fail("a key that is needed and throws");
    } catch (IllegalStateException e) {
      assertSame(thrown, e);
    }
  }
}
