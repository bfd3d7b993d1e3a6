package io.diffuser.list;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.diffuser.list.ListDiffTest.CheckFailure;
import io.diffuser.list.ListDiffTest.Item;
import io.diffuser.list.ListDiffTest.Random;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import org.junit.Test;

/**
 * The sections diff through the Java API: seeded property tests (small key alphabets for
 * sections and items, so duplicates are common) whose every result is replayed (the
 * sections' script, then each section's item script, turns old into new) and played as one
 * UIKit batch of sections and items, every part checked (maps, counts, updates, moves
 * equal matched minus a longest increasing subsequence); and the binding's own behaviour
 * (exceptions unchanged, arguments).
 *
 * <p>One file although over 400 lines: the random tests and the example replay and play
 * their results through the same checkers (replayed scripts, a played batch), a third of
 * the file.
 */
public class ListSectionsDiffTest {
  /** A section: a key, a header (its own content) and items. */
  static final class Section {
    final int key;
    final int header;
    final List<Item> items;

    Section(int key, int header, List<Item> items) {
      this.key = key;
      this.header = header;
      this.items = items;
    }

    Item asItem() {
      return new Item(key, header);
    }

    @Override
    public String toString() {
      return key + (header == 0 ? "" : "'" + header) + items;
    }
  }

  // ---- Generators ---------------------------------------------------------------------

  static List<Section> randomSections(Random g, int count, int maxItems, int alphabet) {
    List<Section> list = new ArrayList<>();
    for (int s = 0; s < count; s++) {
      list.add(new Section(g.below(alphabet), g.chance(0.2) ? 1 : 0,
          ListDiffTest.randomList(g, g.between(0, maxItems), alphabet)));
    }
    return list;
  }

  static List<Section> editedSections(List<Section> from, Random g, int maxItems, int alphabet) {
    if (g.chance(0.1)) return randomSections(g, g.between(0, from.size() + 2), maxItems, alphabet);
    List<Section> list = new ArrayList<>(from);
    for (int e = g.between(0, 10); e > 0; e--) {
      int n = list.size();
      int s = n == 0 ? 0 : g.below(n);
      switch (g.below(7)) {
        case 0:
          if (n > 0) list.remove(s);
          break;
        case 1:
          list.addAll(g.between(0, n), randomSections(g, 1, maxItems, alphabet));
          break;
        case 2:
          if (n > 0) list.add(g.between(0, n - 1), list.remove(s));
          break;
        case 3:
          if (n > 0) list.set(s, new Section(list.get(s).key, g.between(0, 2), list.get(s).items));
          break;
        case 4: // an item moves to another section
          if (n > 1 && !list.get(s).items.isEmpty()) {
            List<Item> items = new ArrayList<>(list.get(s).items);
            Item item = items.remove(g.below(items.size()));
            list.set(s, new Section(list.get(s).key, list.get(s).header, items));
            int t = g.below(n);
            List<Item> into = new ArrayList<>(list.get(t).items);
            into.add(g.between(0, into.size()), item);
            list.set(t, new Section(list.get(t).key, list.get(t).header, into));
          }
          break;
        default:
          if (n > 0) {
            Section x = list.get(s);
            list.set(s, new Section(x.key, x.header, ListDiffTest.edited(x.items, g, alphabet, false)));
          }
          break;
      }
    }
    return list;
  }

  // ---- Checks -------------------------------------------------------------------------

  static List<Item> headers(List<Section> sections) {
    List<Item> items = new ArrayList<>();
    for (Section s : sections) items.add(s.asItem());
    return items;
  }

  /** Maps, counts, updates and minimal moves of one part. */
  static void checkPart(ListDiff d, List<Item> old, List<Item> next, String what) throws CheckFailure {
    int n = old.size();
    int m = next.size();
    if (d.oldCount != n || d.newCount != m) throw new CheckFailure(what + ": counts");
    if (d.batch != null) throw new CheckFailure(what + ": a part with a batch of its own");
    int matched = 0;
    for (int i = 0; i < n; i++) {
      int j = d.oldToNew[i];
      if (j < 0) continue;
      if (j >= m || d.newToOld[j] != i || old.get(i).key != next.get(j).key) throw new CheckFailure(what + ": map at " + i);
      matched++;
    }
    if (n - d.deletes.length != matched || m - d.inserts.length != matched) throw new CheckFailure(what + ": counts do not add up");
    List<Integer> sequence = new ArrayList<>();
    List<Integer> updates = new ArrayList<>();
    for (int j = 0; j < m; j++) {
      int i = d.newToOld[j];
      if (i < 0) continue;
      sequence.add(i);
      if (!old.get(i).equals(next.get(j))) updates.addAll(Arrays.asList(i, j));
    }
    if (!updates.equals(ListDiffTest.box(d.updates))) throw new CheckFailure(what + ": updates " + ListDiff.pairs(d.updates));
    int moves = matched - ListDiffTest.lisLength(sequence);
    if (d.moves.length / 2 != moves) throw new CheckFailure(what + ": " + d.moves.length / 2 + " moves, minimum " + moves);
  }

  /** The sections' script, then each section's item script: old becomes next. */
  static void checkScripts(ListSectionsDiff d, List<Section> old, List<Section> next) throws CheckFailure {
    checkPart(d.sections, headers(old), headers(next), "sections");
    List<Item> shown = ListDiffTest.playScript(d.sections.script, headers(old), headers(next));
    if (!shown.equals(headers(next))) throw new CheckFailure("the sections' script shows " + shown);
    if (d.items.size() != next.size()) throw new CheckFailure(d.items.size() + " item diffs");
    for (int j = 0; j < next.size(); j++) {
      int o = d.sections.newToOld[j];
      List<Item> from = o >= 0 ? old.get(o).items : Collections.<Item>emptyList();
      checkPart(d.items.get(j), from, next.get(j).items, "section " + j);
      List<Item> items = ListDiffTest.playScript(d.items.get(j).script, from, next.get(j).items);
      if (!items.equals(next.get(j).items)) throw new CheckFailure("section " + j + ": the item script shows " + items);
    }
  }

  /** The index paths of one section out of a path array: its items (or pairs, for moves). */
  static int[] pathsIn(int[] paths, int stride, int section) {
    List<Integer> out = new ArrayList<>();
    for (int k = 0; k < paths.length; k += stride) {
      if (paths[k] != section) continue;
      out.add(paths[k + 1]);
      if (stride == 4) out.add(paths[k + 3]);
    }
    int[] result = new int[out.size()];
    for (int k = 0; k < result.length; k++) result[k] = out.get(k);
    return result;
  }

  /** The batch by UIKit's rules: sections, then the items of the sections left in place. */
  static void playBatch(ListSectionsBatch b, List<Section> old, List<Section> next) throws CheckFailure {
    int n = old.size();
    int m = next.size();
    if (n - b.sectionDeletes.length + b.sectionInserts.length != m) throw new CheckFailure("invalid number of sections");
    boolean[] oldUsed = new boolean[n];
    boolean[] newUsed = new boolean[m];
    boolean[] gone = new boolean[n];
    boolean[] reloaded = new boolean[n];
    Integer[] source = new Integer[m]; // old section shown, -1 for the new one
    boolean[] movedIn = new boolean[m];
    for (int o : b.sectionDeletes) {
      ListDiffTest.use(oldUsed, o, "section delete");
      gone[o] = true;
    }
    for (int o : b.sectionReloads) {
      ListDiffTest.use(oldUsed, o, "section reload");
      reloaded[o] = true;
    }
    for (int k = 0; k < b.sectionMoves.length; k += 2) {
      ListDiffTest.use(oldUsed, b.sectionMoves[k], "section move");
      ListDiffTest.use(newUsed, b.sectionMoves[k + 1], "section move");
      gone[b.sectionMoves[k]] = true;
      source[b.sectionMoves[k + 1]] = b.sectionMoves[k];
      movedIn[b.sectionMoves[k + 1]] = true;
    }
    for (int j : b.sectionInserts) {
      ListDiffTest.use(newUsed, j, "section insert");
      source[j] = -1;
    }
    int[] slotOf = new int[n];
    boolean[] stays = new boolean[m];
    int slot = 0;
    for (int o = 0; o < n; o++) {
      slotOf[o] = -1;
      if (gone[o]) continue;
      while (slot < m && source[slot] != null) slot++;
      if (slot >= m) throw new CheckFailure("no place for section " + o);
      source[slot] = reloaded[o] ? -1 : o;
      if (!reloaded[o]) {
        stays[slot] = true;
        slotOf[o] = slot;
      }
      slot++;
    }
    for (int j : b.sectionReloadsAfterMoves) {
      if (j < 0 || j >= m || !movedIn[j]) throw new CheckFailure("section reload after moves " + j);
      source[j] = -1;
    }
    for (int[] paths : Arrays.asList(b.itemDeletes, b.itemReloads)) {
      for (int k = 0; k < paths.length; k += 2) {
        if (paths[k] < 0 || paths[k] >= n || slotOf[paths[k]] < 0) throw new CheckFailure("item change in old section " + paths[k]);
      }
    }
    for (int k = 0; k < b.itemMoves.length; k += 4) {
      int o = b.itemMoves[k];
      if (o < 0 || o >= n || slotOf[o] != b.itemMoves[k + 2]) throw new CheckFailure("an item moves between sections");
    }
    for (int[] paths : Arrays.asList(b.itemInserts, b.itemReloadsAfterMoves)) {
      for (int k = 0; k < paths.length; k += 2) {
        if (paths[k] < 0 || paths[k] >= m || !stays[paths[k]]) throw new CheckFailure("item change in new section " + paths[k]);
      }
    }
    for (int j = 0; j < m; j++) {
      int o = source[j];
      if (o < 0) continue;
      Section a = old.get(o);
      Section x = next.get(j);
      if (a.key != x.key || a.header != x.header) throw new CheckFailure("section " + j + " shows old " + o);
      List<Item> shown = a.items;
      if (stays[j]) {
        ListBatch items = new ListBatch(pathsIn(b.itemDeletes, 2, o), pathsIn(b.itemInserts, 2, j),
            pathsIn(b.itemMoves, 4, o), pathsIn(b.itemReloads, 2, o), pathsIn(b.itemReloadsAfterMoves, 2, j), false);
        shown = ListDiffTest.playUIKitBatch(items, a.items, x.items);
      }
      if (!shown.equals(x.items)) throw new CheckFailure("section " + j + " shows items " + shown);
    }
  }

  static final ListDiff.Part[] BATCH_AND_SCRIPT = {ListDiff.Part.BATCH, ListDiff.Part.SCRIPT};
  static final ListDiff.Part[] MOVE_THEN_RELOAD = {ListDiff.Part.BATCH_MOVE_THEN_RELOAD, ListDiff.Part.SCRIPT};

  static ListSectionsDiff diff(List<Section> old, List<Section> next, ListDiff.Part... parts) {
    return ListSectionsDiff.of(old, next, (Section s) -> s.key, (a, b) -> a.header == b.header,
        (Section s) -> s.items, (Item i) -> i.key, Item::equals, parts);
  }

  /** Checks {@code count} seeded cases; returns how many had duplicates. */
  static int checkSeeds(long first, int count, int maxSections, int maxItems) {
    int[] alphabets = {1, 2, 3, 5, 8, 16, 1000};
    int duplicates = 0;
    for (long seed = first; seed < first + count; seed++) {
      Random g = new Random(seed);
      int alphabet = alphabets[g.below(alphabets.length)];
      List<Section> old = randomSections(g, g.between(0, maxSections), maxItems, alphabet);
      List<Section> next = editedSections(old, g, maxItems, alphabet);
      try {
        for (ListDiff.Part[] parts : Arrays.asList(BATCH_AND_SCRIPT, MOVE_THEN_RELOAD)) {
          ListSectionsDiff d = diff(old, next, parts);
          checkScripts(d, old, next);
          playBatch(d.batch, old, next);
          if (parts == BATCH_AND_SCRIPT) duplicates += d.hasDuplicates ? 1 : 0;
        }
      } catch (CheckFailure e) {
        fail("seed " + seed + ": " + e.getMessage() + "\n old " + old + "\n new " + next);
      }
    }
    return duplicates;
  }

  // ---- Tests --------------------------------------------------------------------------

  @Test
  public void smallSectionsReplayAndPlay() {
    int duplicates = checkSeeds(1, 2000, 8, 12);
    assertTrue("duplicates are common: " + duplicates, duplicates > 300);
  }

  @Test
  public void largeSectionsReplayAndPlay() {
    checkSeeds(100000, 20, 120, 40);
  }

  @Test
  public void anExample() throws CheckFailure {
    List<Section> old = Arrays.asList(new Section(1, 0, Arrays.asList(new Item(1, 0), new Item(2, 0), new Item(3, 0))),
        new Section(2, 0, Arrays.asList(new Item(4, 0), new Item(5, 0))));
    List<Section> next = Arrays.asList(new Section(2, 0, Arrays.asList(new Item(4, 0), new Item(5, 0))),
        new Section(1, 1, Arrays.asList(new Item(1, 0), new Item(3, 0), new Item(2, 0))));
    ListSectionsDiff d = diff(old, next, ListDiff.Part.BATCH, ListDiff.Part.SCRIPT);
    assertEquals(1, d.sections.moves.length / 2);
    assertEquals("section 1's header changed", 1, d.sections.updates.length / 2);
    assertTrue("section 2's items did not change", d.items.get(0).isEmpty());
    assertEquals("one item moves in section 1", 1, d.items.get(1).moves.length / 2);
    assertFalse(d.hasDuplicates);
    assertNull(d.sections.batch);
    assertNotNull(d.batch);
    checkScripts(d, old, next);
    playBatch(d.batch, old, next);
    assertTrue(diff(old, old).isEmpty());
    assertNull(diff(old, next).batch);
  }

  @Test
  public void keysOnly() throws CheckFailure {
    ListSectionsDiff d = ListSectionsDiff.ofKeys(new long[] {1, 2}, new long[][] {{10, 11}, {}},
        new long[] {2, 1}, new long[][] {{12}, {11, 10}}, ListDiff.Part.BATCH);
    assertEquals(1, d.sections.moves.length / 2);
    assertArrayEquals(new int[] {0}, d.items.get(0).inserts);
    assertEquals(1, d.items.get(1).moves.length / 2);
    assertEquals(0, d.sections.updates.length);
    assertEquals("a moved section whose items changed is deleted and inserted", 1, d.batch.sectionDeletes.length);
  }

  private static void assertArrayEquals(int[] expected, int[] actual) {
    assertEquals(Arrays.toString(expected), Arrays.toString(actual));
  }

  static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;
  }

  @Test
  public void exceptionsReachTheCallerUnchanged() {
    List<Section> old = randomSections(new Random(7), 5, 6, 4);
    List<Section> next = editedSections(old, new Random(8), 6, 4);
    Failure failure = new Failure();
    int[] calls = {0};
    try {
      ListSectionsDiff.of(old, next, (Section s) -> s.key, (a, b) -> true, (Section s) -> s.items,
          (Item i) -> i.key, (a, b) -> {
            if (++calls[0] == 2) throw failure;
            return true;
          });
      fail("no exception");
    } catch (Failure thrown) {
      assertSame(failure, thrown);
      assertEquals("nothing is called after it", 2, calls[0]);
    }
    try {
      ListSectionsDiff.of(old, next, (Section s) -> {
        throw failure;
      }, (Section s) -> s.items, (Item i) -> i.key);
      fail("no exception");
    } catch (Failure thrown) {
      assertSame(failure, thrown);
    }
    // Usable afterwards.
    assertNotNull(diff(old, next, ListDiff.Part.BATCH).batch);
  }

  /** A section named by its list and key ("oA"), for a log of the functions' calls. */
  static final class Named {
    final String name;
    final List<String> items;

    Named(String list, char key, String... items) {
      this.name = list + key;
      this.items = Arrays.asList(items);
    }
  }

  /**
   * The core calls the functions in the order Swift's ListSectionsDiff calls them
   * (ListSectionsTests.testCallOrder; test_list_sections.c checks the same log):
   * the sections first, then for each new section the items of its old section, its
   * own, and their diff; never the items of a deleted section (B). Items are named
   * by section and key, "5*" a changed 5.
   */
  @Test
  public void theCoreCallsTheFunctionsInSwiftsOrder() {
    // A [1 2] B [3] C [4 5] -> A [2 1] D [6] C [4 5*].
    List<Named> old = Arrays.asList(new Named("o", 'A', "1", "2"), new Named("o", 'B', "3"),
        new Named("o", 'C', "4", "5"));
    List<Named> next = Arrays.asList(new Named("n", 'A', "2", "1"), new Named("n", 'D', "6"),
        new Named("n", 'C', "4", "5*"));
    List<String> log = new ArrayList<>();
    ListSectionsDiff d = ListSectionsDiff.of(old, next, (Named s) -> {
      log.add("sk(" + s.name + ")");
      return s.name.charAt(1);
    }, (Named a, Named b) -> {
      log.add("ss(" + a.name + "," + b.name + ")");
      return true;
    }, (Named s) -> {
      log.add("items(" + s.name + ")");
      List<String> items = new ArrayList<>();
      for (String item : s.items) items.add(s.name + item);
      return items;
    }, (String item) -> {
      log.add("ik(" + item.substring(0, 3) + ")");
      return item.charAt(2);
    }, (String a, String b) -> {
      log.add("si(" + a.substring(0, 3) + "," + b.substring(0, 3) + ")");
      return a.length() == b.length();
    });
    assertEquals(String.join(" ",
        "sk(oA) sk(nA) ss(oA,nA) sk(oB) sk(nD) sk(oC) sk(nC) ss(oC,nC) sk(oB) sk(nD)",
        "items(oA) items(nA) ik(oA1) ik(nA2) ik(oA2) ik(nA1) ik(oA1) ik(oA2) ik(nA2) ik(nA1) si(oA2,nA2) si(oA1,nA1)",
        "items(nD)",
        "items(oC) items(nC) ik(oC4) ik(nC4) si(oC4,nC4) ik(oC5) ik(nC5) si(oC5,nC5)"), String.join(" ", log));
    assertArrayEquals(new int[] {1}, d.sections.deletes);
    assertArrayEquals(new int[] {1}, d.sections.inserts);
    assertArrayEquals(new int[] {1, 1}, d.items.get(2).updates);
  }

  @Test
  public void badArguments() {
    try {
      ListSectionsDiff.ofKeys(new long[] {1}, new long[][] {}, new long[0], new long[0][]);
      fail("no exception");
    } catch (IllegalArgumentException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("item keys"));
    }
    try {
      ListSectionsDiff.ofKeys(new long[] {1}, new long[][] {null}, new long[0], new long[0][]);
      fail("no exception");
    } catch (NullPointerException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("section 0"));
    }
    try {
      ListSectionsDiff.of(null, Collections.<Section>emptyList(), (Section s) -> s.key, (Section s) -> s.items,
          (Item i) -> i.key);
      fail("no exception");
    } catch (NullPointerException e) {
      assertEquals("oldSections", e.getMessage());
    }
    List<Section> itemless = Arrays.asList(new Section(1, 0, null));
    try {
      ListSectionsDiff.of(itemless, itemless, (Section s) -> s.key, (Section s) -> s.items, (Item i) -> i.key);
      fail("no exception");
    } catch (NullPointerException e) {
      assertTrue(e.getMessage(), e.getMessage().contains("items of section 0"));
    }
    // The items of a deleted section are not asked for (as in Swift).
    assertEquals(1, ListSectionsDiff.of(itemless, Collections.<Section>emptyList(), (Section s) -> s.key,
        (Section s) -> s.items, (Item i) -> i.key).sections.deletes.length);
    assertTrue(Objects.requireNonNull(ListSectionsDiff.ofKeys(new long[0], new long[0][], new long[0],
        new long[0][])).isEmpty());
  }
}
