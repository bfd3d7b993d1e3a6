package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.fail;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.Test;

/**
 * Fan-outs of maps judge their parts: in the one upcall that selects the parts, each part
 * going to a gate that nothing else under the fan-out reaches is compared with the gate's
 * cached value, and the core skips an equal part and lets a different one through
 * without comparing it again. Effects must be exactly those of separate maps; the only
 * visible difference is when {@code equals} is called.
 */
public class DiffuserJudgedPartsTest {
  private final List<String> log = new ArrayList<>();

  private List<String> take() {
    List<String> copy = new ArrayList<>(log);
    log.clear();
    return copy;
  }

  /** A value whose equals logs its calls ("eq:cached-new") and can be made to throw. */
  private final class Key {
    final String name;
    final boolean throwing;

    Key(String name) {
      this(name, false);
    }

    Key(String name, boolean throwing) {
      this.name = name;
      this.throwing = throwing;
    }

    @Override
    public boolean equals(Object o) {
      log.add("eq:" + name + "-" + (o instanceof Key ? ((Key) o).name : o));
      if (throwing) throw new IllegalStateException("equals of " + name);
      return o instanceof Key && ((Key) o).name.equals(name);
    }

    @Override
    public int hashCode() {
      return name.hashCode();
    }

    @Override
    public String toString() {
      return name;
    }
  }

  /** A map from a list model to a new Key for its element i (never the same object). */
  private Diffuser<List<String>> keyLeaf(int i, String tag) {
    return Diffuser.map((List<String> l) -> {
      log.add("t" + i);
      return new Key(l.get(i));
    }, Diffuser.into((Key k) -> log.add(tag + ":" + k)));
  }

  @Test
  public void partsAreComparedInTheSelectionOnceAndBeforeAnyChildRuns() {
    Diffuser<List<String>> d = Diffuser.intoAlways(Arrays.asList(keyLeaf(0, "a"), keyLeaf(1, "b")));
    d.run(Arrays.asList("x", "y"));
    assertEquals(Arrays.asList("t0", "t1", "a:x", "b:y"), take());
    d.run(Arrays.asList("x", "z"));
    // Both comparisons in the selection, none by the gates: each part compared once.
    assertEquals(Arrays.asList("t0", "eq:x-x", "t1", "eq:y-z", "b:z"), take());
    d.run(Arrays.asList("x", "z"));
    assertEquals(Arrays.asList("t0", "eq:x-x", "t1", "eq:z-z"), take());
  }

  @Test
  public void anEqualsThatThrowsIsLeftToTheGateAndFailsTheRunAtItsTurn() {
    Diffuser<String> first = Diffuser.into((String s) -> log.add("first:" + s));
    List<Key> keys = new ArrayList<>();
    Diffuser<String> d = Diffuser.intoAlways(Arrays.asList(
        Diffuser.map((String s) -> s, first),
        Diffuser.map((String s) -> keys.get(keys.size() - 1), Diffuser.into((Key k) -> log.add("key:" + k)))));
    keys.add(new Key("k1", true));
    d.run("a");
    assertEquals(Arrays.asList("first:a", "key:k1"), take());
    keys.add(new Key("k2"));
    try {
      d.run("b");
      fail("the cached key's equals throws");
    } catch (IllegalStateException expected) {
      assertEquals("equals of k1", expected.getMessage());
    }
    // Called in the selection (its failure ignored there), then by the gate after the
    // first child ran: the run fails where it would have without judging.
    assertEquals(Arrays.asList("eq:k1-k2", "first:b", "eq:k1-k2"), take());
  }

  /**
   * Runs "a" twice through {@code intoAlways(map(s + "1", first(shared)), map(s + "2",
   * shared))}, where the first child reaches the gate {@code shared} too, and checks that
   * the gate saw both parts both times: the first child changes the gate's cache before
   * the second child's turn, so a verdict made before either ran would be stale (it
   * would skip the second part, or judge it against the wrong value). Compared at its
   * turn, the second part is compared with the first one.
   */
  private void aSharedGateComparesAtItsTurn(java.util.function.Function<Diffuser<String>, Diffuser<String>> first) {
    Diffuser<String> shared = Diffuser.into((String s) -> log.add("shared:" + s));
    Diffuser<String> d = Diffuser.intoAlways(Arrays.asList(
        Diffuser.map((String s) -> s + "1", first.apply(shared)), Diffuser.map((String s) -> s + "2", shared)));
    d.run("a");
    d.run("a");
    assertEquals(Arrays.asList("shared:a1", "shared:a2", "shared:a1", "shared:a2"), take());
  }

  @Test
  public void aGateUnderTheFanOutTwiceIsNotJudged() {
    aSharedGateComparesAtItsTurn(shared -> shared);
  }

  @Test
  public void aGateReachedThroughAnotherChildIsNotJudged() {
    aSharedGateComparesAtItsTurn(shared -> Diffuser.intoAlways(Arrays.asList(shared)));
  }

  @Test
  public void aCacheChangedOutsideTheFanOutIsSeenByTheNextSelection() {
    Diffuser<String> gate = Diffuser.into((String s) -> log.add("gate:" + s));
    Diffuser<String> d = Diffuser.intoAlways(Arrays.asList(
        Diffuser.map((String s) -> s, gate), Diffuser.map((String s) -> s, Diffuser.into((String s) -> { }))));
    d.run("a");
    gate.run("b"); // the gate now caches "b", behind the fan-out's back
    d.run("a"); // "a" differs from "b": the copy the selection judges against moved
    gate.run("a");
    d.run("a");
    assertEquals(Arrays.asList("gate:a", "gate:b", "gate:a"), take());
  }
}
