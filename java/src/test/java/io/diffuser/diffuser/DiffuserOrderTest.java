package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.diffuser.Effect;
import io.diffuser.Function;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * The exact order of user calls (transforms, {@code equals}, predicates, effects), the same
 * as in Swift and C: tree order, depth first, a fan-out running each child entirely
 * before the next child's transform is called. The first failure in that order is the one
 * reported and nothing after it is called; the gates on its path keep their caches, so
 * the next run retries.
 *
 * <p>Every user call below logs an entry when it is made, unless it fails: then it logs
 * nothing and throws a {@link Failure} of its own, so a log is exactly the calls that
 * completed, in order.
 *
 * <p>One file because every test reads the one log that the fixtures below write (the
 * {@code V} values, the {@code part}, {@code copy}, {@code changed} and {@code effect}
 * calls, {@code tree()} and its expected runs): orders are only comparable side by side,
 * against the same tree and the same expected lists.
 */
public class DiffuserOrderTest {
  private final List<String> log = new ArrayList<>();
  /** The entries whose call fails, and the exception each one throws. */
  private final Map<String, Failure> failing = new HashMap<>();

  private List<String> take() {
    List<String> copy = new ArrayList<>(log);
    log.clear();
    return copy;
  }

  /** The exception of a failing user call. */
  static final class Failure extends RuntimeException {
    private static final long serialVersionUID = 1L;

    Failure(String entry) {
      super(entry);
    }
  }

  /** Logs {@code entry}, or throws its failure if it is armed. */
  private void call(String entry) {
    Failure failure = failing.get(entry);
    if (failure != null) throw failure;
    log.add(entry);
  }

  private Failure arm(String entry) {
    Failure failure = new Failure(entry);
    failing.put(entry, failure);
    return failure;
  }

  /**
   * A value compared by its text, never the same object from one run to the next. Its
   * equals is a user call "eq:this-other": the previous value first, as the gates call
   * it.
   */
  private final class V {
    final String text;

    V(String text) {
      this.text = text;
    }

    @Override
    public boolean equals(Object o) {
      call("eq:" + text + "-" + ((V) o).text);
      return ((V) o).text.equals(text);
    }

    @Override
    public int hashCode() {
      return text.hashCode();
    }

    @Override
    public String toString() {
      return text;
    }
  }

  /** A transform "t:name" that gives part {@code index} of a comma-separated model. */
  private Function<V, V> part(String name, int index) {
    return v -> {
      call("t:" + name);
      return new V(v.text.split(",")[index]);
    };
  }

  /** A transform "t:name" that gives a fresh copy of its value. */
  private Function<V, V> copy(String name) {
    return v -> {
      call("t:" + name);
      return new V(v.text);
    };
  }

  /** A predicate "p:name:old-new", true when the texts differ. */
  private DidChange<V> changed(String name) {
    return (a, b) -> {
      call("p:" + name + ":" + a.text + "-" + b.text);
      return !a.text.equals(b.text);
    };
  }

  /** An effect "e:name:value". */
  private Effect<V> effect(String name) {
    return v -> call("e:" + name + ":" + v.text);
  }

  /**
   * <pre>
   * intoAll(
   *   map(t0, intoWhen(p0, intoAlways(e0))),
   *   map(t1, intoAll(map(t1a, into(e1a)), map(t1b, into(e1b)))),
   *   map(t2, into(e2)))
   * </pre>
   */
  private Diffuser<V> tree() {
    return Diffuser.intoAll(
        Diffuser.map(part("0", 0), Diffuser.intoWhen(changed("0"), Diffuser.intoAlways(effect("0")))),
        Diffuser.map(part("1", 1), Diffuser.intoAll(
            Diffuser.map(copy("1a"), Diffuser.into(effect("1a"))),
            Diffuser.map(copy("1b"), Diffuser.into(effect("1b"))))),
        Diffuser.map(part("2", 2), Diffuser.into(effect("2"))));
  }

  private static final List<String> FIRST_RUN = Arrays.asList(
      "t:0", "e:0:a", "t:1", "t:1a", "e:1a:b", "t:1b", "e:1b:b", "t:2", "e:2:c");

  /** Every user call of the run of "A,B,C" after "a,b,c", in order. */
  private static final List<String> SECOND_RUN = Arrays.asList(
      "eq:a,b,c-A,B,C",
      "t:0", "p:0:a-A", "e:0:A",
      "t:1", "eq:b-B", "t:1a", "eq:b-B", "e:1a:B", "t:1b", "eq:b-B", "e:1b:B",
      "t:2", "eq:c-C", "e:2:C");

  private static final List<String> EFFECTS_OF_SECOND_RUN = Arrays.asList("e:0:A", "e:1a:B", "e:1b:B", "e:2:C");

  private Throwable runCatching(Diffuser<V> d, String value) {
    try {
      d.run(new V(value));
    } catch (Throwable t) {
      return t;
    }
    fail("run(" + value + ") should have thrown");
    return null;
  }

  @Test
  public void userCallsOfNestedFanOutsOfMapsAreInterleavedInTreeOrder() {
    Diffuser<V> d = tree();
    d.run(new V("a,b,c"));
    assertEquals(FIRST_RUN, take());
    d.run(new V("A,B,C"));
    assertEquals(SECOND_RUN, take());
    d.run(new V("A,B,C"));
    assertEquals(Arrays.asList("eq:A,B,C-A,B,C"), take());
    d.run(new V("A,x,C"));
    assertEquals(Arrays.asList(
        "eq:A,B,C-A,x,C",
        "t:0", "p:0:A-A",
        "t:1", "eq:B-x", "t:1a", "eq:B-x", "e:1a:x", "t:1b", "eq:B-x", "e:1b:x",
        "t:2", "eq:C-C"), take());
  }

  @Test
  public void theUngatedFanOutOfMapsInterleavesToo() {
    Diffuser<V> d = Diffuser.intoAlways(
        Diffuser.map(part("0", 0), Diffuser.into(effect("0"))),
        Diffuser.map(part("1", 1), Diffuser.intoAlways(effect("1"))),
        Diffuser.map(part("2", 2), Diffuser.into(effect("2"))));
    d.run(new V("a,b,c"));
    assertEquals(Arrays.asList("t:0", "e:0:a", "t:1", "e:1:b", "t:2", "e:2:c"), take());
    d.run(new V("a,b,x"));
    assertEquals(Arrays.asList("t:0", "eq:a-a", "t:1", "e:1:b", "t:2", "eq:c-x", "e:2:x"), take());
  }

  /**
   * Any two calls of the second run fail: the caller gets the exception of the earlier
   * one, every call before it was made and nothing after it. The next run retries: over
   * the failed run and the retry, each effect of the second run ran exactly once, and a
   * third run finds every cache up to date. (A call is armed by its log entry, so an
   * entry made by several calls, such as "eq:b-B", fails at its first occurrence.)
   */
  @Test
  public void whenTwoCallsWouldFailTheFirstInTreeOrderWinsAndTheNextRunRetries() {
    List<String> calls = new ArrayList<>(new java.util.LinkedHashSet<>(SECOND_RUN));
    int pairs = 0;
    for (int i = 0; i < calls.size(); i++) {
      for (int j = i; j < calls.size(); j++) {
        String where = "failing " + calls.get(i) + " and " + calls.get(j);
        Diffuser<V> d = tree();
        d.run(new V("a,b,c"));
        take();
        Failure first = arm(calls.get(i));
        if (j != i) arm(calls.get(j));
        assertSame(where, first, runCatching(d, "A,B,C"));
        List<String> failedRun = take();
        assertEquals(where, SECOND_RUN.subList(0, SECOND_RUN.indexOf(calls.get(i))), failedRun);
        failing.clear();

        d.run(new V("A,B,C"));
        List<String> effects = new ArrayList<>();
        for (String entry : failedRun) if (entry.startsWith("e:")) effects.add(entry);
        for (String entry : take()) if (entry.startsWith("e:")) effects.add(entry);
        assertEquals(where, EFFECTS_OF_SECOND_RUN, effects);
        d.run(new V("A,B,C"));
        assertEquals(where, Arrays.asList("eq:A,B,C-A,B,C"), take());
        pairs++;
      }
    }
    assertEquals(calls.size() * (calls.size() + 1) / 2, pairs);
  }

  /** The retry after each kind of failure, exactly. */
  @Test
  public void aFailureKeepsTheCachesOnItsPathAndTheNextRunRetriesFromThere() {
    String[][] cases = {
      // failing call, then the log of the retry
      {"t:1a", "eq:a,b,c-A,B,C", "t:0", "p:0:A-A", "t:1", "eq:b-B", "t:1a", "eq:b-B", "e:1a:B",
          "t:1b", "eq:b-B", "e:1b:B", "t:2", "eq:c-C", "e:2:C"},
      {"eq:b-B", "eq:a,b,c-A,B,C", "t:0", "p:0:A-A", "t:1", "eq:b-B", "t:1a", "eq:b-B", "e:1a:B",
          "t:1b", "eq:b-B", "e:1b:B", "t:2", "eq:c-C", "e:2:C"},
      {"p:0:a-A", "eq:a,b,c-A,B,C", "t:0", "p:0:a-A", "e:0:A", "t:1", "eq:b-B", "t:1a", "eq:b-B",
          "e:1a:B", "t:1b", "eq:b-B", "e:1b:B", "t:2", "eq:c-C", "e:2:C"},
      {"e:1b:B", "eq:a,b,c-A,B,C", "t:0", "p:0:A-A", "t:1", "eq:b-B", "t:1a", "eq:B-B", "t:1b",
          "eq:b-B", "e:1b:B", "t:2", "eq:c-C", "e:2:C"},
      {"e:2:C", "eq:a,b,c-A,B,C", "t:0", "p:0:A-A", "t:1", "eq:B-B", "t:2", "eq:c-C", "e:2:C"},
      {"eq:a,b,c-A,B,C", "eq:a,b,c-A,B,C", "t:0", "p:0:a-A", "e:0:A", "t:1", "eq:b-B", "t:1a",
          "eq:b-B", "e:1a:B", "t:1b", "eq:b-B", "e:1b:B", "t:2", "eq:c-C", "e:2:C"},
    };
    for (String[] c : cases) {
      Diffuser<V> d = tree();
      d.run(new V("a,b,c"));
      take();
      Failure failure = arm(c[0]);
      assertSame(c[0], failure, runCatching(d, "A,B,C"));
      assertSame(c[0], failure, runCatching(d, "A,B,C")); // the same value is retried, not skipped
      take();
      failing.clear();
      d.run(new V("A,B,C"));
      assertEquals(c[0], Arrays.asList(c).subList(1, c.length), take());
    }
  }

  @Test
  public void aLaterTransformSeesWhatAnEarlierEffectDid() {
    AtomicReference<String> written = new AtomicReference<>("nothing yet");
    Diffuser<String> d = Diffuser.intoAll(
        Diffuser.map((String s) -> s + "!", Diffuser.into((String v) -> written.set(v))),
        Diffuser.map((String s) -> s + " after " + written.get(), Diffuser.into((String v) -> log.add(v))),
        Diffuser.map((String s) -> written.get(), Diffuser.intoAll(
            Diffuser.map((String w) -> w + "?", Diffuser.into((String v) -> written.set(v))),
            Diffuser.map((String w) -> written.get(), Diffuser.into((String v) -> log.add(v))))));
    d.run("a");
    assertEquals(Arrays.asList("a after a!", "a!?"), take());
    d.run("b");
    assertEquals(Arrays.asList("b after b!", "b!?"), take());
  }

  @Test
  public void aLaterTransformSeesWhatAnEarlierEffectDidInANestedFanOutOfMaps() {
    List<String> seen = new ArrayList<>();
    Diffuser<List<String>> d = Diffuser.intoAll(
        Diffuser.map((List<String> m) -> m.get(0), Diffuser.intoAll(
            Diffuser.map((String s) -> s, Diffuser.into((String v) -> seen.add("0:" + v))),
            Diffuser.map((String s) -> seen.size(), Diffuser.into((Integer n) -> log.add("size " + n))))),
        Diffuser.map((List<String> m) -> seen.size(), Diffuser.into((Integer n) -> log.add("then " + n))));
    d.run(Arrays.asList("x"));
    assertEquals(Arrays.asList("size 1", "then 1"), take());
  }

  /** Equal when the integers differ by at most 1: not transitive. Never the same object. */
  private final class Near {
    final int n;

    Near(int n) {
      this.n = n;
    }

    @Override
    public boolean equals(Object o) {
      log.add("eq:" + n + "-" + ((Near) o).n);
      return Math.abs(((Near) o).n - n) <= 1;
    }

    @Override
    public int hashCode() {
      return 0;
    }
  }

  /**
   * A gate keeps the new value after every run, equal or not: 0, 1, 2, 3 with "within 1"
   * run the effect once, since each value is compared with the one before it, never with
   * 0 again.
   */
  @Test
  public void anEqualButNotIdenticalValueReplacesTheCache() {
    Diffuser<Near> d = Diffuser.into((Near v) -> log.add("e:" + v.n));
    for (int n = 0; n < 4; n++) d.run(new Near(n));
    assertEquals(Arrays.asList("e:0", "eq:0-1", "eq:1-2", "eq:2-3"), take());
  }

  @Test
  public void anEqualButNotIdenticalPartReplacesTheCacheInAFanOutOfMaps() {
    Diffuser<Integer> d = Diffuser.intoAll(
        Diffuser.map((Integer n) -> new Near(n), Diffuser.into((Near v) -> log.add("a:" + v.n))),
        Diffuser.map((Integer n) -> new Near(-n), Diffuser.into((Near v) -> log.add("b:" + v.n))));
    for (int n = 0; n < 4; n++) d.run(n);
    assertEquals(Arrays.asList(
        "a:0", "b:0",
        "eq:0-1", "eq:0--1",
        "eq:1-2", "eq:-1--2",
        "eq:2-3", "eq:-2--3"), take());

    Diffuser<Near> gated = Diffuser.intoAll(
        Diffuser.map((Near v) -> v.n, Diffuser.into((Integer n) -> log.add("n:" + n))));
    for (int n = 0; n < 4; n++) gated.run(new Near(n));
    assertEquals(Arrays.asList("n:0", "eq:0-1", "eq:1-2", "eq:2-3"), take());
  }

  @Test
  public void intoWhenGetsThePreviousValueNotTheLastOneThatPassed() {
    List<String> calls = new ArrayList<>();
    Diffuser<Integer> d = Diffuser.intoWhen((Integer a, Integer b) -> {
      calls.add(a + "-" + b);
      return b - a > 1;
    }, Diffuser.intoAlways((Integer v) -> calls.add("e:" + v)));
    for (int n = 0; n < 4; n++) d.run(n);
    assertEquals(Arrays.asList("e:0", "0-1", "1-2", "2-3"), calls);
  }

  /** Each kind of user call fails once in a fan-out of maps; the next run retries it. */
  @Test
  public void everyKindOfFailureLeavesTheCachesForARetry() {
    for (String kind : new String[] {"transform", "equals", "predicate", "effect"}) {
      Set<String> armed = new HashSet<>();
      RuntimeException failure = new IllegalStateException(kind);
      class Part {
        final int n;

        Part(int n) {
          this.n = n;
        }

        @Override
        public boolean equals(Object o) {
          if (armed.remove("equals")) throw failure;
          return ((Part) o).n == n;
        }

        @Override
        public int hashCode() {
          return n;
        }
      }
      Diffuser<Integer> d = Diffuser.intoAll(
          Diffuser.map((Integer n) -> new Part(n), Diffuser.into((Part p) -> log.add("first:" + p.n))),
          Diffuser.map((Integer n) -> {
            if (armed.remove("transform")) throw failure;
            return new Part(n * 10);
          }, Diffuser.intoWhen((Part a, Part b) -> {
            if (armed.remove("predicate")) throw failure;
            return !a.equals(b);
          }, Diffuser.into((Part p) -> {
            if (armed.remove("effect")) throw failure;
            log.add("second:" + p.n);
          }))));
      d.run(1);
      assertEquals(kind, Arrays.asList("first:1", "second:10"), take());
      armed.add(kind);
      try {
        d.run(2);
        fail(kind + " should have failed");
      } catch (IllegalStateException e) {
        assertSame(kind, failure, e);
      }
      assertTrue(kind, armed.isEmpty());
      List<String> firstTry = take();
      d.run(2);
      List<String> all = new ArrayList<>(firstTry);
      all.addAll(take());
      assertEquals(kind, Arrays.asList("first:2", "second:20"), all);
      d.run(2);
      assertEquals(kind, Collections.emptyList(), take());
    }
  }
}
