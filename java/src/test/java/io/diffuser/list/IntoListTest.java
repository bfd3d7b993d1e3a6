package io.diffuser.list;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.diffuser.diffuser.Diffuser;
import io.diffuser.list.ListDiffTest.CheckFailure;
import io.diffuser.list.ListDiffTest.Item;
import io.diffuser.list.ListDiffTest.Random;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import org.junit.Test;

/**
 * {@code Diffuser.intoList}: when the sink is called and with what, what the node keeps,
 * the order in which the core asks the key, equality and content functions (the same as
 * in Swift and C), exceptions from every callback reaching the caller unchanged with the
 * applied list kept, and seeded sequences whose every change, applied by UIKit's rules
 * and replayed as a script, turns the list the sink applied last into the new one.
 *
 * <p>One file for one node: each test is one clause of the summary above, so the file
 * reads as the node's specification; the seeded sequences reuse the generators and
 * players of {@link ListDiffTest} rather than keeping copies.
 */
public class IntoListTest {
  /** What a sink received. */
  static final class Call {
    final ListDiff changes;
    final List<Item> list;

    Call(ListDiff changes, List<Item> list) {
      this.changes = changes;
      this.list = list;
    }
  }

  static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Failure(String message) {
      super(message);
    }
  }

  static List<Item> items(int... keys) {
    List<Item> list = new ArrayList<>();
    for (int key : keys) list.add(new Item(key, 0));
    return list;
  }

  static Item changed(int key, int content) {
    return new Item(key, content);
  }

  @Test
  public void firstRunUnchangedRunsAndWhatTheSinkGets() {
    List<Call> calls = new ArrayList<>();
    Diffuser<List<Item>> diffuser = Diffuser.intoList((Item item) -> item.key,
        (ListDiff changes, List<Item> list) -> calls.add(new Call(changes, list)),
        ListDiff.Part.BATCH, ListDiff.Part.SCRIPT);

    List<Item> empty = Collections.emptyList();
    diffuser.run(empty);
    assertEquals("the first run calls the sink, even for an empty list", 1, calls.size());
    assertSame(empty, calls.get(0).list);
    assertEquals(0, calls.get(0).changes.oldCount);
    diffuser.run(new ArrayList<>());
    assertEquals("an empty diff: no call", 1, calls.size());

    List<Item> a = items(1, 2, 3);
    diffuser.run(a);
    assertEquals(2, calls.size());
    ListDiff first = calls.get(1).changes;
    assertArrayEquals("from the empty list: inserts", new int[] {0, 1, 2}, first.inserts);
    assertNotNull(first.batch);
    assertNotNull(first.script);

    diffuser.run(items(1, 2, 3));
    assertEquals("same keys, order and content: no call", 2, calls.size());

    List<Item> b = Arrays.asList(new Item(3, 0), new Item(1, 5), new Item(4, 0));
    diffuser.run(b);
    assertEquals(3, calls.size());
    Call call = calls.get(2);
    assertSame("the sink gets the run's list", b, call.list);
    assertArrayEquals(new int[] {1}, call.changes.deletes);
    assertArrayEquals(new int[] {2}, call.changes.inserts);
    assertArrayEquals(new int[] {0, 1}, call.changes.updates);
    assertArrayEquals(new int[] {2, 0}, call.changes.moves);
    assertFalse(call.changes.batch.moveThenReload);
  }

  /** A sink that records {@code isFirst} of each call, and may throw. */
  static final class FirstSink implements ListSink<Item> {
    final List<Boolean> firsts = new ArrayList<>();
    int failures;

    @Override
    public void apply(ListDiff changes, List<Item> newList) {
      fail("the diffuser calls apply(changes, newList, isFirst)");
    }

    @Override
    public void apply(ListDiff changes, List<Item> newList, boolean isFirst) {
      firsts.add(isFirst);
      if (failures > 0) {
        failures--;
        throw new Failure("sink");
      }
    }
  }

  @Test
  public void isFirstTellsTheFirstDeliveryApart() {
    FirstSink sink = new FirstSink();
    Diffuser<List<Item>> diffuser = Diffuser.intoList((Item item) -> item.key, sink);
    diffuser.run(Collections.<Item>emptyList());
    diffuser.run(items(1, 2));
    diffuser.run(Collections.<Item>emptyList());
    assertEquals("first, then not, even from an empty list", Arrays.asList(true, false, false), sink.firsts);

    FirstSink failing = new FirstSink();
    failing.failures = 2;
    Diffuser<List<Item>> retried = Diffuser.intoList((Item item) -> item.key, failing);
    for (int k = 0; k < 2; k++) {
      try {
        retried.run(items(1));
        fail("no exception");
      } catch (Failure expected) {
        // the sink threw
      }
    }
    retried.run(items(1));
    retried.run(items(2));
    assertEquals("first until a call returned normally", Arrays.asList(true, true, true, false), failing.firsts);

    // A lambda sink gets the two-argument call.
    List<ListDiff> seen = new ArrayList<>();
    Diffuser.intoList((Item item) -> item.key, (ListDiff changes, List<Item> list) -> seen.add(changes))
        .run(items(3));
    assertEquals(1, seen.size());

    // A lambda through withFirst is told.
    List<Boolean> firsts = new ArrayList<>();
    Diffuser<List<Item>> aware = Diffuser.intoList((Item item) -> item.key,
        ListSink.withFirst((ListDiff changes, List<Item> list, boolean isFirst) -> firsts.add(isFirst)));
    aware.run(items(1));
    aware.run(items(1, 2));
    assertEquals(Arrays.asList(true, false), firsts);
    try {
      ListSink.withFirst(null);
      fail("no exception");
    } catch (NullPointerException expected) {
      assertEquals("sink", expected.getMessage());
    }
  }

  @Test
  public void partsAsAskedFor() {
    List<ListDiff> seen = new ArrayList<>();
    Diffuser<List<Item>> plain = Diffuser.intoList((Item item) -> item.key,
        (ListDiff changes, List<Item> list) -> seen.add(changes));
    Diffuser<List<Item>> moveThenReload = Diffuser.intoList((Item item) -> item.key,
        (ListDiff changes, List<Item> list) -> seen.add(changes),
        ListDiff.Part.BATCH, ListDiff.Part.BATCH_MOVE_THEN_RELOAD);
    List<Item> a = items(1, 2, 3);
    List<Item> b = Arrays.asList(changed(3, 1), new Item(1, 0), new Item(2, 0));
    plain.run(a);
    plain.run(b);
    assertNull(seen.get(1).batch);
    assertNull(seen.get(1).script);
    moveThenReload.run(a);
    moveThenReload.run(b);
    ListBatch batch = seen.get(3).batch;
    assertTrue(batch.moveThenReload);
    assertArrayEquals(new int[] {2, 0}, batch.moves);
    assertArrayEquals(new int[] {0}, batch.reloadsAfterMoves);
  }

  /** Items named by list and key ("a1"), for a log of the key function's calls. */
  static final class Named {
    final String name;
    final String key;
    final int content;

    Named(String name, String key, int content) {
      this.name = name;
      this.key = key;
      this.content = content;
    }
  }

  static List<Named> named(String list, String... keys) {
    List<Named> result = new ArrayList<>();
    for (String key : keys) result.add(new Named(list + key, key, 0));
    return result;
  }

  @Test
  public void theCoreAsksInItsOrder() {
    List<String> log = new ArrayList<>();
    Diffuser<List<Named>> diffuser = Diffuser.intoList((Named item) -> {
      log.add("k:" + item.name);
      return item.key;
    }, (Named x, Named y) -> {
      log.add("c:" + x.name + "," + y.name);
      return x.content == y.content;
    }, (ListDiff changes, List<Named> list) -> log.add("sink"));
    diffuser.run(named("a", "1", "2", "3"));
    assertEquals("the first run reads no key", Arrays.asList("sink"), log);
    log.clear();
    diffuser.run(named("b", "1", "3", "2"));
    // Prefix: the keys, then (equal) the content; at the first difference, the suffix
    // from the end; then the middle's keys, old then new, and each match's content. The
    // key function is called only where the core asks for a key (the equality compares
    // the keys it made): as in Swift (ListIntoListTests.testKeyCallsInTheCoresOrder).
    assertEquals(String.join(" ", "k:a1 k:b1 c:a1,b1", "k:a2 k:b3", "k:a3 k:b2",
        "k:a2 k:a3 k:b3 k:b2", "c:a3,b3", "c:a2,b2", "sink"),
        String.join(" ", log));
  }

  @Test
  public void keysAreExactDespiteEqualHashes() {
    // Keys whose hashCode is constant: the core asks equals for every pair of them.
    final class Key {
      final int id;

      Key(int id) {
        this.id = id;
      }

      @Override
      public boolean equals(Object other) {
        return other instanceof Key && ((Key) other).id == id;
      }

      @Override
      public int hashCode() {
        return 7;
      }
    }
    Random g = new Random(99);
    List<ListDiff> seen = new ArrayList<>();
    Diffuser<List<Item>> diffuser = Diffuser.intoList((Item item) -> new Key(item.key),
        (ListDiff changes, List<Item> list) -> seen.add(changes));
    List<Item> shown = new ArrayList<>();
    diffuser.run(shown);
    for (int step = 0; step < 200; step++) {
      List<Item> next = ListDiffTest.edited(shown, g, 6, false);
      int before = seen.size();
      diffuser.run(next);
      ListDiff expected = ListDiff.of(shown, next, (Item item) -> item.key);
      if (seen.size() == before) {
        assertTrue(expected.isEmpty());
      } else {
        ListDiff got = seen.get(seen.size() - 1);
        assertArrayEquals("step " + step, expected.oldToNew, got.oldToNew);
        assertArrayEquals("step " + step, expected.moves, got.moves);
        assertArrayEquals("step " + step, expected.updates, got.updates);
        assertEquals(expected.hasDuplicates, got.hasDuplicates);
      }
      shown = next;
    }
  }

  @Test
  public void nullKeysAndLongKeys() {
    List<ListDiff> seen = new ArrayList<>();
    Diffuser<List<String>> byObject = Diffuser.intoList((String s) -> s == null ? null : s.substring(0, 1),
        (ListDiff changes, List<String> list) -> seen.add(changes));
    byObject.run(Arrays.asList("a1", null, "b1"));
    byObject.run(Arrays.asList(null, "b2", "a1"));
    ListDiff diff = seen.get(1);
    assertArrayEquals("null is a key like any other", new int[] {2, 0, 1}, diff.oldToNew);
    assertArrayEquals(new int[] {2, 1}, diff.updates);

    List<ListDiff> longs = new ArrayList<>();
    Diffuser<List<Item>> byLong = Diffuser.intoListByLongKey((Item item) -> item.key, Item::equals,
        (ListDiff changes, List<Item> list) -> longs.add(changes), ListDiff.Part.SCRIPT);
    byLong.run(items(1, 2, 3));
    byLong.run(items(3, 2, 1, 4));
    assertEquals(2, longs.size());
    assertEquals(2, longs.get(1).moves.length / 2);
    assertArrayEquals(new int[] {3}, longs.get(1).inserts);
  }

  @Test
  public void everyCallbackFailingReachesTheCallerAndTheAppliedListIsKept() {
    String[] where = {"key", "equals", "hashCode", "content", "sink"};
    for (String place : where) {
      Failure failure = new Failure(place);
      boolean[] armed = {false};
      final class Key {
        final int id;

        Key(int id) {
          this.id = id;
        }

        @Override
        public boolean equals(Object other) {
          if (armed[0] && place.equals("equals")) throw failure;
          return other instanceof Key && ((Key) other).id == id;
        }

        @Override
        public int hashCode() {
          if (armed[0] && place.equals("hashCode")) throw failure;
          return id;
        }
      }
      List<Call> calls = new ArrayList<>();
      Diffuser<List<Item>> diffuser = Diffuser.intoList((Item item) -> {
        if (armed[0] && place.equals("key")) throw failure;
        return new Key(item.key);
      }, (Item x, Item y) -> {
        if (armed[0] && place.equals("content")) throw failure;
        return x.equals(y);
      }, (ListDiff changes, List<Item> list) -> {
        if (armed[0] && place.equals("sink")) throw failure;
        calls.add(new Call(changes, list));
      }, ListDiff.Part.BATCH);
      List<Item> a = items(1, 2, 3);
      List<Item> b = Arrays.asList(new Item(1, 0), changed(2, 1), new Item(4, 0));
      diffuser.run(a);
      armed[0] = true;
      try {
        diffuser.run(b);
        fail(place + ": no exception");
      } catch (Failure thrown) {
        assertSame(place + ": the same object", failure, thrown);
      }
      armed[0] = false;
      List<Item> c = items(4, 1, 2, 3);
      diffuser.run(c);
      assertEquals(place, 2, calls.size());
      ListDiff changes = calls.get(1).changes;
      assertEquals(place + ": diffed from a, the applied list", 3, changes.oldCount);
      assertArrayEquals(place, new int[] {0}, changes.inserts);
      assertEquals(place, 0, changes.deletes.length);
      // The same list again after a failure: retried, then nothing to do.
      armed[0] = true;
      try {
        diffuser.run(b);
        fail(place + ": no exception the second time");
      } catch (Failure thrown) {
        assertSame(failure, thrown);
      }
      armed[0] = false;
      diffuser.run(c);
      assertEquals(place + ": c is still the applied list", 2, calls.size());
    }
  }

  @Test
  public void failedFirstRunIsFirstAgainAndNullListsFail() {
    boolean[] fail = {true};
    List<Call> calls = new ArrayList<>();
    Diffuser<List<Item>> diffuser = Diffuser.intoList((Item item) -> item.key,
        (ListDiff changes, List<Item> list) -> {
          if (fail[0]) throw new Failure("sink");
          calls.add(new Call(changes, list));
        });
    try {
      diffuser.run(items(1));
      fail();
    } catch (Failure expected) {
      // the sink threw
    }
    fail[0] = false;
    diffuser.run(items(2, 3));
    assertEquals(1, calls.size());
    assertEquals("a first run again", 0, calls.get(0).changes.oldCount);
    try {
      diffuser.run(null);
      fail("a null list");
    } catch (NullPointerException expected) {
      assertEquals("intoList: the list is null (run it with an empty list instead)", expected.getMessage());
    }
    diffuser.run(items(2, 3));
    assertEquals("the applied list was kept", 1, calls.size());
  }

  @Test
  public void nullArguments() {
    ListSink<Item> sink = (changes, list) -> {};
    try {
      Diffuser.intoList(null, sink);
      fail();
    } catch (NullPointerException expected) {
      assertEquals("key", expected.getMessage());
    }
    try {
      Diffuser.intoList((Item item) -> item.key, (ListSink<Item>) null);
      fail();
    } catch (NullPointerException expected) {
      assertEquals("sink", expected.getMessage());
    }
    try {
      Diffuser.intoList((Item item) -> item.key, null, sink);
      fail();
    } catch (NullPointerException expected) {
      assertEquals("sameContent", expected.getMessage());
    }
    try {
      Diffuser.intoList((Item item) -> item.key, sink, (ListDiff.Part) null);
      fail();
    } catch (NullPointerException expected) {
      assertEquals("part", expected.getMessage());
    }
  }

  static final class Screen {
    final String title;
    final List<Item> rows;

    Screen(String title, List<Item> rows) {
      this.title = title;
      this.rows = rows;
    }
  }

  @Test
  public void underAMapAndAGateAFailedSinkIsRetried() {
    List<String> log = new ArrayList<>();
    boolean[] fail = {false};
    Diffuser<Screen> diffuser = new Diffuser<>(
        Diffuser.map((Screen s) -> s.title, Diffuser.into((String title) -> log.add("title:" + title))),
        Diffuser.map((Screen s) -> s.rows, Diffuser.intoList((Item item) -> item.key,
            (ListDiff changes, List<Item> rows) -> {
              log.add("rows:" + rows + " moves " + ListDiff.pairs(changes.moves));
              if (fail[0]) throw new Failure("rows");
            })));
    Screen s1 = new Screen("x", items(1, 2));
    Screen s2 = new Screen("y", items(2, 1));
    diffuser.run(s1);
    fail[0] = true;
    try {
      diffuser.run(s2);
      fail();
    } catch (Failure expected) {
      // the rows' sink threw
    }
    fail[0] = false;
    diffuser.run(s2);
    assertEquals(Arrays.asList("title:x", "rows:[1, 2] moves []", "title:y", "rows:[2, 1] moves [1->0]",
        "rows:[2, 1] moves [1->0]"), log);
  }

  /**
   * A seeded sequence of lists (small key alphabets, so duplicates are common): every sink
   * call's batch, played by UIKit's rules on the list the sink applied last, shows the new
   * list, and so does its script replayed; a run without a call changed nothing.
   */
  @Test
  public void seededSequencesApplyTheBatchAndTheScript() throws CheckFailure {
    for (long seed = 1; seed <= 12; seed++) {
      Random g = new Random(seed * 7919);
      boolean moveThenReload = seed % 2 == 0;
      boolean longKeys = seed % 3 == 0;
      List<List<Item>> shown = new ArrayList<>();
      shown.add(new ArrayList<>());
      int[] calls = {0};
      List<CheckFailure> failures = new ArrayList<>();
      ListSink<Item> sink = (changes, list) -> {
        calls[0]++;
        try {
          List<Item> old = shown.get(0);
          List<Item> played = ListDiffTest.playUIKitBatch(changes.batch, old, list);
          if (!played.equals(list)) throw new CheckFailure("batch shows " + played + ", not " + list);
          List<Item> replayed = ListDiffTest.playScript(changes.script, old, list);
          if (!replayed.equals(list)) throw new CheckFailure("script gives " + replayed + ", not " + list);
          if (changes.oldCount != old.size() || changes.newCount != list.size()) throw new CheckFailure("counts");
        } catch (CheckFailure failure) {
          failures.add(failure);
        }
        shown.set(0, list);
      };
      ListDiff.Part batch = moveThenReload ? ListDiff.Part.BATCH_MOVE_THEN_RELOAD : ListDiff.Part.BATCH;
      Diffuser<List<Item>> diffuser = longKeys
          ? Diffuser.intoListByLongKey((Item item) -> item.key, Item::equals, sink, batch, ListDiff.Part.SCRIPT)
          : Diffuser.intoList((Item item) -> item.key, sink, batch, ListDiff.Part.SCRIPT);
      List<Item> list = new ArrayList<>();
      int quiet = 0;
      for (int step = 0; step < 300; step++) {
        int alphabet = g.between(1, 12);
        if (g.chance(0.2)) {
          list = new ArrayList<>(list);
        } else if (g.chance(0.05)) {
          list = ListDiffTest.randomList(g, g.between(0, 64), alphabet);
        } else {
          list = ListDiffTest.edited(list, g, alphabet, false);
        }
        List<Item> before = shown.get(0);
        int callsBefore = calls[0];
        diffuser.run(list);
        if (calls[0] == callsBefore) {
          quiet++;
          assertTrue("seed " + seed + " step " + step + ": no call, but the list changed",
              ListDiff.of(before, list, (Item item) -> item.key).isEmpty());
          shown.set(0, list);
        }
        if (!failures.isEmpty()) throw new CheckFailure("seed " + seed + " step " + step + ": " + failures.get(0).getMessage());
      }
      assertTrue("seed " + seed + ": some runs changed nothing", quiet > 0);
      assertTrue("seed " + seed + ": most runs called the sink", calls[0] > 150);
      assertEquals(Objects.toString(list), Objects.toString(shown.get(0)));
    }
  }

  /**
   * In a fresh JVM whose first use of the binding is {@code Diffuser.intoList} (class
   * {@code ListNative} loads the libraries, and their {@code JNI_OnLoad} initializes
   * {@code Native}, which asks for them again): one copy of the libraries is loaded, so the
   * node's callbacks and the run share one per-thread state and a sink's exception reaches
   * the caller unchanged.
   */
  @Test
  public void firstUseOfTheBindingThroughIntoList() throws Exception {
    String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
    String classpath = System.getProperty("diffuser.jar") + File.pathSeparator + System.getProperty("diffuser.testClasses");
    ProcessBuilder builder = new ProcessBuilder(java, "-cp", classpath, IntoListFirstUse.class.getName())
        .redirectErrorStream(true);
    builder.environment().remove("JAVA_TOOL_OPTIONS");
    Process process = builder.start();
    String output;
    try (InputStream in = process.getInputStream()) {
      ByteArrayOutputStream bytes = new ByteArrayOutputStream();
      in.transferTo(bytes);
      output = new String(bytes.toByteArray(), StandardCharsets.UTF_8);
    }
    assertTrue(process.waitFor(60, TimeUnit.SECONDS));
    assertEquals(output, 0, process.exitValue());
    assertTrue(output, output.contains("glue copies 1\n"));
    assertTrue(output, output.contains("the same exception\n"));
  }
}
