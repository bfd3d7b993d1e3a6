package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.diffuser.Effect;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import org.junit.Test;

/** Every combinator of Diffuser, through the native core. */
public class DiffuserTest {
  private final List<Object> log = new ArrayList<>();

  private <A> Effect<A> record(String tag) {
    return a -> log.add(tag + ":" + a);
  }

  private List<Object> take() {
    List<Object> copy = new ArrayList<>(log);
    log.clear();
    return copy;
  }

  @Test
  public void intoAlwaysRunsOnEveryValue() {
    Diffuser<String> d = Diffuser.intoAlways(record("e"));
    d.run("a");
    d.run("a");
    d.run("b");
    d.run(null);
    d.run(null);
    assertEquals(Arrays.asList("e:a", "e:a", "e:b", "e:null", "e:null"), take());
  }

  @Test
  public void intoRunsOnFirstValueAndOnChangesByEquals() {
    Diffuser<String> d = Diffuser.into(record("e"));
    d.run("a");
    d.run(new String("a")); // equal, not the same object
    d.run("b");
    d.run("b");
    d.run("a");
    assertEquals(Arrays.asList("e:a", "e:b", "e:a"), take());
  }

  @Test
  public void nullsAreValuesComparedWithObjectsEquals() {
    Diffuser<String> d = Diffuser.into(record("e"));
    d.run(null);
    d.run(null);
    d.run("x");
    d.run(null);
    assertEquals(Arrays.asList("e:null", "e:x", "e:null"), take());
  }

  @Test
  public void intoUsesTheValuesEquals() {
    // Equal by equals(), never identical.
    Diffuser<List<Integer>> d = Diffuser.into(record("e"));
    d.run(new ArrayList<>(Arrays.asList(1, 2)));
    d.run(new ArrayList<>(Arrays.asList(1, 2)));
    d.run(Arrays.asList(1, 3));
    assertEquals(Arrays.asList("e:[1, 2]", "e:[1, 3]"), take());
  }

  @Test
  public void intoWhenWithEffectAsksDidChangeWithOldAndNew() {
    List<String> asked = new ArrayList<>();
    Diffuser<Integer> d = Diffuser.intoWhen((Integer o, Integer n) -> {
      asked.add(o + "->" + n);
      return n > o;
    }, record("e"));
    d.run(5); // first: always, no question
    d.run(3); // not increased; 3 is cached anyway
    d.run(4); // increased relative to 3
    d.run(4);
    assertEquals(Arrays.asList("5->3", "3->4", "4->4"), asked);
    assertEquals(Arrays.asList("e:5", "e:4"), take());
  }

  @Test
  public void intoWhenWithDiffuser() {
    Diffuser<Integer> d = Diffuser.intoWhen((o, n) -> n % 2 == 0, Diffuser.intoAlways(record("child")));
    d.run(1);
    d.run(3);
    d.run(4);
    d.run(4);
    assertEquals(Arrays.asList("child:1", "child:4", "child:4"), take());
  }

  @Test
  public void intoWhenSeesNulls() {
    List<String> asked = new ArrayList<>();
    Diffuser<String> d = Diffuser.intoWhen((String o, String n) -> {
      asked.add(o + "->" + n);
      return true;
    }, record("e"));
    d.run(null);
    d.run("a");
    d.run(null);
    assertEquals(Arrays.asList("null->a", "a->null"), asked);
    assertEquals(Arrays.asList("e:null", "e:a", "e:null"), take());
  }

  @Test
  public void intoOnceRunsOnlyOnTheFirstValue() {
    Diffuser<String> d = Diffuser.intoOnce(record("e"));
    d.run("a");
    d.run("b");
    d.run(null);
    assertEquals(Collections.singletonList("e:a"), take());
  }

  @Test
  public void intoOnceWithNullFirst() {
    Diffuser<String> d = Diffuser.intoOnce(record("e"));
    d.run(null);
    d.run("b");
    assertEquals(Collections.singletonList("e:null"), take());
  }

  @Test
  public void intoAllWithVarargsRunsChildrenInOrderWhenChanged() {
    Diffuser<String> d = Diffuser.intoAll(
        Diffuser.intoAlways(record("1")), Diffuser.intoAlways(record("2")), Diffuser.intoAlways(record("3")));
    d.run("a");
    d.run(new String("a"));
    d.run("b");
    assertEquals(Arrays.asList("1:a", "2:a", "3:a", "1:b", "2:b", "3:b"), take());
  }

  @Test
  public void intoAllWithCollection() {
    List<Diffuser<String>> children = new ArrayList<>();
    children.add(Diffuser.intoAlways(record("1")));
    children.add(Diffuser.intoAlways(record("2")));
    Diffuser<String> d = Diffuser.intoAll(children);
    d.run("a");
    d.run("a");
    d.run(null);
    d.run(null);
    assertEquals(Arrays.asList("1:a", "2:a", "1:null", "2:null"), take());
  }

  @Test
  public void emptyIntoAll() {
    Diffuser<String> d = Diffuser.intoAll(new ArrayList<>());
    d.run("a");
    Diffuser<String> e = Diffuser.intoAll();
    e.run("a");
    assertEquals(Collections.emptyList(), take());
  }

  @Test
  public void constructorsAreIntoAll() {
    List<Diffuser<String>> children = new ArrayList<>();
    children.add(Diffuser.intoAlways(record("c")));
    Diffuser<String> fromCollection = new Diffuser<>(children);
    Diffuser<String> fromVarargs = new Diffuser<>(Diffuser.intoAlways(record("v")), Diffuser.intoAlways(record("w")));
    fromCollection.run("a");
    fromCollection.run("a");
    fromVarargs.run("a");
    fromVarargs.run("a");
    fromVarargs.run("b");
    assertEquals(Arrays.asList("c:a", "v:a", "w:a", "v:b", "w:b"), take());
  }

  @Test
  public void collectionsAndArraysAreCopied() {
    List<Diffuser<String>> children = new ArrayList<>();
    children.add(Diffuser.intoAlways(record("1")));
    Diffuser<String> viaCollection = Diffuser.intoAll(children);
    Diffuser<String> viaConstructor = new Diffuser<>(children);
    children.add(Diffuser.intoAlways(record("late")));
    children.clear();

    @SuppressWarnings({"unchecked", "rawtypes"})
    Diffuser<String>[] array = new Diffuser[] {Diffuser.intoAlways(record("2"))};
    Diffuser<String> viaArray = Diffuser.intoAll(array);
    Diffuser<String> viaArrayConstructor = new Diffuser<>(array);
    array[0] = Diffuser.intoAlways(record("replaced"));

    viaCollection.run("a");
    viaConstructor.run("b");
    viaArray.run("c");
    viaArrayConstructor.run("d");
    assertEquals(Arrays.asList("1:a", "1:b", "2:c", "2:d"), take());
  }

  @Test
  public void intoAlwaysChildrenIsUngated() {
    Diffuser<String> d = Diffuser.intoAlways(Diffuser.into(record("into")), Diffuser.intoAlways(record("always")));
    d.run("a");
    d.run("a");
    Diffuser<String> e = Diffuser.intoAlways(Collections.singletonList(Diffuser.intoAlways(record("c"))));
    e.run("x");
    e.run("x");
    assertEquals(Arrays.asList("into:a", "always:a", "always:a", "c:x", "c:x"), take());
  }

  @Test
  public void mapFeedsThePart() {
    Diffuser<int[]> d = Diffuser.intoAll(
        Diffuser.map((int[] p) -> p[0], Diffuser.into(record("x"))),
        Diffuser.map((int[] p) -> p[1], Diffuser.into(record("y"))));
    d.run(new int[] {1, 2});
    d.run(new int[] {1, 3}); // arrays are never equal: both maps run, only y changed
    d.run(new int[] {4, 3});
    assertEquals(Arrays.asList("x:1", "y:2", "y:3", "x:4"), take());
  }

  @Test
  public void mapToNull() {
    Diffuser<String> d = Diffuser.map((String s) -> s.isEmpty() ? null : s.substring(0, 1), Diffuser.into(record("e")));
    d.run("");
    d.run("");
    d.run("ab");
    d.run("ac");
    d.run("");
    assertEquals(Arrays.asList("e:null", "e:a", "e:null"), take());
  }

  @Test
  public void aSharedChildSharesItsCache() {
    Diffuser<String> shared = Diffuser.into(record("shared"));
    Diffuser<String> d = Diffuser.intoAlways(shared, Diffuser.map((String s) -> s, shared));
    d.run("a");
    d.run("a");
    d.run("b");
    assertEquals(Arrays.asList("shared:a", "shared:b"), take());
  }

  @Test
  public void childrenCanBeDroppedAfterComposing() {
    Diffuser<String> d = Diffuser.intoAll(Diffuser.into(record("e")));
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    d.run("a");
    assertEquals(Collections.singletonList("e:a"), take());
  }

  @Test
  public void nestedTrees() {
    Diffuser<List<String>> d = new Diffuser<>(
        Diffuser.map((List<String> l) -> l.size(), Diffuser.into(record("size"))),
        Diffuser.map((List<String> l) -> l.isEmpty() ? null : l.get(0),
            new Diffuser<>(Diffuser.into(record("first")), Diffuser.intoOnce(record("once")))));
    d.run(Arrays.asList("a", "b"));
    d.run(Arrays.asList("a", "b"));
    d.run(Arrays.asList("a", "c"));
    d.run(Arrays.asList("z"));
    assertEquals(Arrays.asList("size:2", "first:a", "once:a", "size:1", "first:z"), take());
  }

  @Test
  public void reentrantRunIsQueuedAfterTheCurrentPass() {
    List<String> order = new ArrayList<>();
    Diffuser<Integer>[] self = newArray();
    self[0] = Diffuser.intoAll(
        Diffuser.into((Integer v) -> {
          order.add("first " + v);
          if (v < 3) {
            self[0].run(v + 1); // queued, not nested
          }
          order.add("first " + v + " done");
        }),
        Diffuser.into((Integer v) -> order.add("second " + v)));
    self[0].run(1);
    assertEquals(Arrays.asList(
        "first 1", "first 1 done", "second 1",
        "first 2", "first 2 done", "second 2",
        "first 3", "first 3 done", "second 3"), order);
  }

  @Test
  public void runningAnotherDiffuserFromAnEffectIsNotQueued() {
    List<String> order = new ArrayList<>();
    Diffuser<String> inner = Diffuser.intoAlways(v -> order.add("inner " + v));
    Diffuser<String> outer = Diffuser.intoAlways(v -> {
      order.add("outer " + v);
      inner.run(v);
      order.add("outer done");
    });
    outer.run("x");
    assertEquals(Arrays.asList("outer x", "inner x", "outer done"), order);
  }

  @Test
  public void nullArgumentsAreRejected() {
    try {
      Diffuser.into(null);
      fail();
    } catch (NullPointerException expected) {
      // ok
    }
    try {
      Diffuser.intoAll((Diffuser<String>) null, Diffuser.into(record("x")));
      fail();
    } catch (NullPointerException expected) {
      assertTrue(expected.getMessage().contains("children[0]"));
    }
    try {
      Diffuser.map(null, Diffuser.into(record("x")));
      fail();
    } catch (NullPointerException expected) {
      // ok
    }
  }

  @SuppressWarnings({"unchecked", "rawtypes"})
  private static <A> Diffuser<A>[] newArray() {
    return new Diffuser[1];
  }
}
