package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.diffuser.Function;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.Test;

/**
 * Fan-outs whose children are maps: each map is a node of its own whose transform is
 * called at its turn, after every effect of the children before it (the exact order of
 * every user call is pinned in {@link DiffuserOrderTest}). The same trees built with each
 * map wrapped in a one-child {@code intoAlways} (ungated, so meaning the same) serve as
 * the reference.
 *
 * <p>One file because every test is about this one node kind, through one log
 * ({@code take()}) and the same field helpers: its effects, the order of its transforms,
 * failures, threads, lifetimes and the gates below it; only the exact order of every
 * user call is pinned in a file of its own.
 */
public class DiffuserFanOutTest {
  private final List<String> log = new ArrayList<>();

  private List<String> take() {
    List<String> copy = new ArrayList<>(log);
    log.clear();
    return copy;
  }

  private static Throwable runCatching(Diffuser<?> d, Object value) {
    try {
      @SuppressWarnings("unchecked")
      Diffuser<Object> any = (Diffuser<Object>) d;
      any.run(value);
    } catch (Throwable t) {
      return t;
    }
    fail("run(" + value + ") should have thrown");
    return null;
  }

  /** Field {@code i} of a list model; null if the model is null or too short. */
  private static Function<List<String>, String> field(int i) {
    return l -> l == null || l.size() <= i ? null : l.get(i);
  }

  /** The same child as given, or wrapped in a one-child intoAlways, which means the same. */
  private static <A> Diffuser<A> maybeHide(Diffuser<A> map, boolean hide) {
    return hide ? Diffuser.intoAlways(Collections.singletonList(map)) : map;
  }

  /** {@code fanOut(map(field_i, into(log tag_i)))} for i below {@code width}. */
  private Diffuser<List<String>> fieldsTree(int width, boolean gated, boolean hide, List<String> into, String tag) {
    List<Diffuser<List<String>>> children = new ArrayList<>();
    for (int i = 0; i < width; i++) {
      String label = tag + i;
      children.add(maybeHide(Diffuser.map(field(i), Diffuser.into((String v) -> into.add(label + ":" + v))), hide));
    }
    return gated ? Diffuser.intoAll(children) : Diffuser.intoAlways(children);
  }

  private static final List<List<String>> FIELD_VALUES = Arrays.asList(
      Arrays.asList("a", "b", "c"),
      Arrays.asList(new String("a"), new String("b"), new String("c")), // equal, other objects
      Arrays.asList("a", "x", "c"), // one field changed
      Arrays.asList("d", "e", "f"), // all changed
      Arrays.asList("d", null, "f"), // a null part
      Arrays.asList("d", null, "f"),
      null, // every part null
      Arrays.asList("d"), // the last parts null
      Arrays.asList("d", "e", "f"));

  private void sameEffectsAsSeparateMaps(boolean gated) {
    List<String> fast = new ArrayList<>();
    List<String> reference = new ArrayList<>();
    Diffuser<List<String>> d = fieldsTree(3, gated, false, fast, "f");
    Diffuser<List<String>> r = fieldsTree(3, gated, true, reference, "f");
    for (List<String> value : FIELD_VALUES) {
      d.run(value);
      r.run(value);
      assertEquals("after " + value, reference, fast);
    }
    assertEquals(Arrays.asList(
        "f0:a", "f1:b", "f2:c",
        "f1:x",
        "f0:d", "f1:e", "f2:f",
        "f1:null",
        "f0:null", "f2:null",
        "f0:d",
        "f1:e", "f2:f"), fast);
  }

  @Test
  public void aFanOutOfMapsWithIntoAllHasTheEffectsOfSeparateMaps() {
    sameEffectsAsSeparateMaps(true);
  }

  @Test
  public void aFanOutOfMapsWithIntoAlwaysHasTheEffectsOfSeparateMaps() {
    sameEffectsAsSeparateMaps(false);
  }

  @Test
  public void theConstructorsBuildTheSameFanOut() {
    Diffuser<List<String>> viaVarargs = new Diffuser<>(
        Diffuser.map(field(0), Diffuser.into((String v) -> log.add("0:" + v))),
        Diffuser.map(field(1), Diffuser.into((String v) -> log.add("1:" + v))));
    viaVarargs.run(Arrays.asList("a", "b"));
    viaVarargs.run(Arrays.asList("a", "b"));
    viaVarargs.run(Arrays.asList("a", "c"));
    assertEquals(Arrays.asList("0:a", "1:b", "1:c"), take());
  }

  /** The bench's shape, sections of fields, against the reference on random edits. */
  @Test
  public void nestedFanOutsOfMapsHaveTheEffectsOfSeparateMaps() {
    List<String> fast = new ArrayList<>();
    List<String> reference = new ArrayList<>();
    Diffuser<List<List<String>>> d = sectionsTree(false, fast);
    Diffuser<List<List<String>>> r = sectionsTree(true, reference);
    Random random = new Random(42);
    List<List<String>> model = new ArrayList<>();
    for (int s = 0; s < 6; s++) {
      model.add(Arrays.asList("s" + s + "f0", "s" + s + "f1", "s" + s + "f2", "s" + s + "f3"));
    }
    for (int step = 0; step < 200; step++) {
      List<List<String>> next = new ArrayList<>(model);
      int edits = random.nextInt(4); // 0: an equal model
      for (int e = 0; e < edits; e++) {
        int s = random.nextInt(next.size());
        List<String> section = new ArrayList<>(next.get(s));
        int f = random.nextInt(section.size());
        section.set(f, random.nextInt(5) == 0 ? null : "v" + random.nextInt(3));
        next.set(s, Collections.unmodifiableList(section));
      }
      model = next;
      d.run(model);
      r.run(model);
      assertEquals("step " + step, reference, fast);
    }
    assertTrue(fast.size() > 200);
  }

  private static Diffuser<List<List<String>>> sectionsTree(boolean hide, List<String> into) {
    List<Diffuser<List<List<String>>>> sections = new ArrayList<>();
    for (int s = 0; s < 6; s++) {
      int index = s;
      List<Diffuser<List<String>>> fields = new ArrayList<>();
      for (int f = 0; f < 4; f++) {
        String label = s + "." + f;
        fields.add(maybeHide(Diffuser.map(field(f), Diffuser.into((String v) -> into.add(label + ":" + v))), hide));
      }
      sections.add(maybeHide(
          Diffuser.map((List<List<String>> m) -> m.get(index), Diffuser.intoAll(fields)), hide));
    }
    return Diffuser.intoAll(sections);
  }

  /** Logs its call, then selects field {@code i}. */
  private Function<List<String>, String> logged(int i) {
    Function<List<String>, String> select = field(i);
    return l -> {
      log.add("t" + i);
      return select.apply(l);
    };
  }

  private Diffuser<List<String>> loggedMap(int i) {
    return Diffuser.map(logged(i), Diffuser.intoAlways((String v) -> log.add("e" + i + ":" + v)));
  }

  @Test
  public void eachTransformOfAFanOutOfMapsIsCalledRightBeforeItsChild() {
    Diffuser<List<String>> gated = Diffuser.intoAll(loggedMap(0), loggedMap(1), loggedMap(2));
    gated.run(Arrays.asList("a", "b", "c"));
    assertEquals(Arrays.asList("t0", "e0:a", "t1", "e1:b", "t2", "e2:c"), take());
    Diffuser<List<String>> ungated = Diffuser.intoAlways(Arrays.asList(loggedMap(0), loggedMap(1)));
    ungated.run(Arrays.asList("a", "b"));
    assertEquals(Arrays.asList("t0", "e0:a", "t1", "e1:b"), take());
  }

  @Test
  public void aFanOutWithAnotherChildCallsEachTransformBeforeItsChild() {
    Diffuser<List<String>> d = Diffuser.intoAll(
        loggedMap(0), Diffuser.intoAlways((List<String> v) -> log.add("other")), loggedMap(2));
    d.run(Arrays.asList("a", "b", "c"));
    d.run(Arrays.asList("a", "b", "c"));
    d.run(Arrays.asList("a", "b", "x"));
    assertEquals(Arrays.asList(
        "t0", "e0:a", "other", "t2", "e2:c",
        "t0", "e0:a", "other", "t2", "e2:x"), take());
  }

  @Test
  public void aFanOutOfOneMapCallsItsTransformAsAMapDoes() {
    Diffuser<List<String>> d = Diffuser.intoAll(loggedMap(0));
    d.run(Arrays.asList("a"));
    assertEquals(Arrays.asList("t0", "e0:a"), take());
  }

  /** A transform that counts its calls. */
  private static final class Counting implements Function<List<String>, String> {
    final int index;
    int calls;

    Counting(int index) {
      this.index = index;
    }

    @Override
    public String apply(List<String> l) {
      calls++;
      return l.get(index);
    }
  }

  @Test
  public void eachTransformIsCalledOncePerRunThatReachesIt() {
    Counting[] counting = {new Counting(0), new Counting(1), new Counting(2), new Counting(3)};
    List<Diffuser<List<String>>> children = new ArrayList<>();
    for (Counting c : counting) {
      children.add(Diffuser.map(c, Diffuser.into((String v) -> log.add(v))));
    }
    Diffuser<List<String>> gated = Diffuser.intoAll(children);
    Diffuser<List<String>> ungated = Diffuser.intoAlways(children);
    List<String> abcd = Arrays.asList("a", "b", "c", "d");

    gated.run(abcd);
    for (Counting c : counting) assertEquals(1, c.calls);
    gated.run(new ArrayList<>(abcd)); // equal: the gate skips the fan-out
    for (Counting c : counting) assertEquals(1, c.calls);
    gated.run(Arrays.asList("a", "b", "c", "x"));
    for (Counting c : counting) assertEquals(2, c.calls);
    ungated.run(Arrays.asList("a", "b", "c", "x")); // no gate: called, children shared
    ungated.run(Arrays.asList("a", "b", "c", "x"));
    for (Counting c : counting) assertEquals(4, c.calls);
    assertEquals(Arrays.asList("a", "b", "c", "d", "x"), take());
  }

  /** Throws {@code failure} while armed, from transform {@code index}. */
  private static final class Failing implements Function<List<String>, String> {
    final RuntimeException failure = new IllegalStateException("boom");
    final int index;
    final List<String> log;
    boolean armed = true;

    Failing(int index, List<String> log) {
      this.index = index;
      this.log = log;
    }

    @Override
    public String apply(List<String> l) {
      log.add("t" + index);
      if (armed) throw failure;
      return l.get(index);
    }
  }

  @Test
  public void aThrowingTransformAbortsAfterTheChildrenBeforeItWithTheSameObject() {
    for (int k = 0; k < 4; k++) {
      Failing failing = new Failing(k, log);
      failing.armed = false;
      List<Diffuser<List<String>>> children = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        int index = i;
        Function<List<String>, String> transform = i == k ? failing : l -> {
          log.add("t" + index);
          return l.get(index);
        };
        children.add(Diffuser.map(transform, Diffuser.into((String v) -> log.add("e" + index + ":" + v))));
      }
      Diffuser<List<String>> d = Diffuser.intoAll(children);
      d.run(Arrays.asList("a", "b", "c", "d"));
      failing.armed = true;
      log.clear();

      assertSame("k=" + k, failing.failure, runCatching(d, Arrays.asList("A", "B", "C", "D")));
      List<String> expected = new ArrayList<>();
      for (int i = 0; i < k; i++) {
        expected.add("t" + i);
        expected.add("e" + i + ":" + "ABCD".charAt(i));
      }
      expected.add("t" + k); // nothing called after it
      assertEquals("k=" + k, expected, take());

      failing.armed = false;
      d.run(Arrays.asList("A", "B", "C", "D")); // the gate kept "abcd": all run, the first k cached
      expected.clear();
      for (int i = 0; i < 4; i++) {
        expected.add("t" + i);
        if (i >= k) expected.add("e" + i + ":" + "ABCD".charAt(i));
      }
      assertEquals("k=" + k, expected, take());
      d.run(Arrays.asList("A", "B", "C", "D"));
      assertEquals("k=" + k, Collections.emptyList(), take());
    }
  }

  /**
   * The effect of child 0 throws and the transform of child 2 would throw too: the run
   * stops at the effect, the first failure in tree order, and neither child 1 nor the
   * transform of child 2 is called.
   */
  @Test
  public void whenAChildBeforeAThrowingTransformThrowsTooTheFirstInTreeOrderWins() {
    RuntimeException transformFailure = new IllegalStateException("transform");
    RuntimeException effectFailure = new IllegalArgumentException("effect");
    Diffuser<String> d = Diffuser.intoAll(
        Diffuser.map((String s) -> s + "0", Diffuser.intoAlways((String v) -> {
          log.add(v);
          throw effectFailure;
        })),
        Diffuser.map((String s) -> s + "1", Diffuser.intoAlways((String v) -> log.add(v))),
        Diffuser.map((String s) -> {
          log.add("t2");
          throw transformFailure;
        }, Diffuser.intoAlways((String v) -> log.add(v))));
    assertSame(effectFailure, runCatching(d, "a"));
    assertEquals(Arrays.asList("a0"), take());
  }

  @SuppressWarnings("unchecked")
  private static <T extends Throwable> void sneaky(Throwable t) throws T {
    throw (T) t;
  }

  @Test
  public void errorsAndCheckedExceptionsFromATransformPassUnchanged() {
    Throwable[] thrown = {new AssertionError("error"), new java.io.IOException("checked"), new StackOverflowError()};
    for (Throwable t : thrown) {
      Diffuser<String> d = Diffuser.intoAlways(
          Diffuser.map((String s) -> s, Diffuser.intoAlways((String v) -> log.add("0:" + v))),
          Diffuser.map((String s) -> {
            DiffuserFanOutTest.<RuntimeException>sneaky(t);
            return s;
          }, Diffuser.intoAlways((String v) -> log.add("1:" + v))));
      assertSame(t, runCatching(d, "x"));
    }
    assertEquals(Arrays.asList("0:x", "0:x", "0:x"), take());
  }

  @Test
  public void aFailureInANestedFanOutOfMapsKeepsTheCachesAboveIt() {
    Failing failing = new Failing(1, new ArrayList<>());
    failing.armed = false;
    Diffuser<List<List<String>>> d = Diffuser.intoAll(
        Diffuser.map((List<List<String>> m) -> m.get(0), Diffuser.intoAll(
            Diffuser.map(field(0), Diffuser.into((String v) -> log.add("0.0:" + v))),
            Diffuser.map(field(1), Diffuser.into((String v) -> log.add("0.1:" + v))))),
        Diffuser.map((List<List<String>> m) -> m.get(1), Diffuser.intoAll(
            Diffuser.map(field(0), Diffuser.into((String v) -> log.add("1.0:" + v))),
            Diffuser.map(failing, Diffuser.into((String v) -> log.add("1.1:" + v))),
            Diffuser.map(field(2), Diffuser.into((String v) -> log.add("1.2:" + v))))),
        Diffuser.map((List<List<String>> m) -> m.get(2), Diffuser.into((List<String> v) -> log.add("2:" + v))));
    d.run(Arrays.asList(Arrays.asList("a", "b"), Arrays.asList("c", "d", "e"), Arrays.asList("f")));
    take();

    List<List<String>> next = Arrays.asList(Arrays.asList("A", "b"), Arrays.asList("C", "D", "E"), Arrays.asList("F"));
    failing.armed = true;
    assertSame(failing.failure, runCatching(d, next));
    assertEquals(Arrays.asList("0.0:A", "1.0:C"), take());
    assertSame(failing.failure, runCatching(d, next)); // retried: nothing cached on the way
    assertEquals(Collections.emptyList(), take()); // the leaves before it did cache
    failing.armed = false;
    d.run(next);
    assertEquals(Arrays.asList("1.1:D", "1.2:E", "2:[F]"), take());
    d.run(next);
    assertEquals(Collections.emptyList(), take());
  }

  @Test
  public void nullPartsAndNullValues() {
    Diffuser<String> d = Diffuser.intoAll(
        Diffuser.map((String s) -> s == null ? "none" : null, Diffuser.into((String v) -> log.add("0:" + v))),
        Diffuser.map((String s) -> s, Diffuser.into((String v) -> log.add("1:" + v))),
        Diffuser.map((String s) -> null, Diffuser.into((Object v) -> log.add("2:" + v))));
    d.run("a");
    d.run(null);
    d.run(null);
    d.run("b");
    assertEquals(Arrays.asList("0:null", "1:a", "2:null", "0:none", "1:null", "0:null", "1:b"), take());
  }

  @Test
  public void aMapInAFanOutStillWorksOnItsOwnAndSharesItsChild() {
    Diffuser<String> leaf = Diffuser.into((String v) -> log.add("leaf:" + v));
    Diffuser<String> upper = Diffuser.map((String s) -> s.toUpperCase(), leaf);
    Diffuser<String> d = Diffuser.intoAll(
        upper, Diffuser.map((String s) -> s + "!", Diffuser.intoAlways((String v) -> log.add("bang:" + v))));

    d.run("a");
    assertEquals(Arrays.asList("leaf:A", "bang:a!"), take());
    upper.run("a"); // the same leaf node: it cached "A"
    upper.run("b");
    leaf.run("B");
    assertEquals(Arrays.asList("leaf:B"), take());
    d.run("b"); // the leaf cached "B" through the map on its own
    assertEquals(Arrays.asList("bang:b!"), take());
    Diffuser<String> again = Diffuser.intoAlways(upper, upper); // one map twice: one leaf twice
    again.run("c");
    assertEquals(Arrays.asList("leaf:C"), take());
  }

  @Test
  public void aNewMapRunFromManyThreadsAtOnceLosesNoRun() throws Exception {
    int threads = 8;
    for (int attempt = 0; attempt < 20; attempt++) {
      AtomicInteger effects = new AtomicInteger();
      Diffuser<Integer> map = Diffuser.map((Integer n) -> n * 2, Diffuser.intoAlways((Integer v) -> effects.incrementAndGet()));
      CyclicBarrier start = new CyclicBarrier(threads);
      List<Thread> running = new ArrayList<>();
      List<Throwable> failures = Collections.synchronizedList(new ArrayList<>());
      for (int t = 0; t < threads; t++) {
        int value = t;
        Thread thread = new Thread(() -> {
          try {
            start.await();
            map.run(value);
          } catch (Throwable e) {
            failures.add(e);
          }
        });
        thread.start();
        running.add(thread);
      }
      for (Thread thread : running) thread.join();
      assertEquals(Collections.emptyList(), failures);
      assertEquals(threads, effects.get());
      map.run(0);
      assertEquals(threads + 1, effects.get());
    }
  }

  @Test
  public void aMixedFanOutIsTheOrdinaryOne() {
    Diffuser<String> d = Diffuser.intoAll(
        Diffuser.map((String s) -> s.length(), Diffuser.into((Integer n) -> log.add("len:" + n))),
        Diffuser.into((String v) -> log.add("v:" + v)),
        Diffuser.map((String s) -> s.charAt(0), Diffuser.into((Character c) -> log.add("c:" + c))));
    d.run("ab");
    d.run("ab");
    d.run("ac");
    d.run("b");
    assertEquals(Arrays.asList("len:2", "v:ab", "c:a", "v:ac", "len:1", "v:b", "c:b"), take());
  }

  @Test
  public void aTransformMayRunAnotherDiffuser() {
    RuntimeException inner = new RuntimeException("inner");
    Diffuser<String> failing = Diffuser.intoAlways((String v) -> {
      throw inner;
    });
    Diffuser<String> d = Diffuser.intoAlways(
        Diffuser.map((String s) -> {
          try {
            failing.run(s);
            fail();
          } catch (RuntimeException e) {
            assertSame(inner, e);
          }
          return s + "0";
        }, Diffuser.intoAlways((String v) -> log.add(v))),
        Diffuser.map((String s) -> s + "1", Diffuser.intoAlways((String v) -> log.add(v))));
    d.run("a"); // the caught failure does not leak into this run
    assertEquals(Arrays.asList("a0", "a1"), take());

    Diffuser<String> propagating = Diffuser.intoAlways(
        Diffuser.map((String s) -> s + "0", Diffuser.intoAlways((String v) -> log.add(v))),
        Diffuser.map((String s) -> {
          failing.run(s);
          return s;
        }, Diffuser.intoAlways((String v) -> log.add(v))));
    assertSame(inner, runCatching(propagating, "b"));
    assertEquals(Arrays.asList("b0"), take());
  }

  @Test
  public void aRunFromInsideATransformIsQueued() {
    List<String> order = new ArrayList<>();
    @SuppressWarnings({"unchecked", "rawtypes"})
    Diffuser<Integer>[] self = new Diffuser[1];
    self[0] = Diffuser.intoAll(
        Diffuser.map((Integer v) -> {
          order.add("t0 " + v);
          if (v < 2) self[0].run(v + 1);
          return v;
        }, Diffuser.into((Integer v) -> order.add("e0 " + v))),
        Diffuser.map((Integer v) -> {
          order.add("t1 " + v);
          return -v;
        }, Diffuser.into((Integer v) -> order.add("e1 " + v))));
    self[0].run(1);
    assertEquals(Arrays.asList("t0 1", "e0 1", "t1 1", "e1 -1", "t0 2", "e0 2", "t1 2", "e1 -2"), order);
  }

  @Test
  public void aWideFanOutOfMaps() {
    int width = 5000;
    int[] sum = new int[1];
    List<Diffuser<int[]>> children = new ArrayList<>();
    for (int i = 0; i < width; i++) {
      int index = i;
      children.add(Diffuser.map((int[] m) -> m[index] == 0 ? null : m[index],
          Diffuser.into((Integer v) -> sum[0] += v == null ? 1_000_000 : v)));
    }
    Diffuser<int[]> d = Diffuser.intoAll(children);
    int[] model = new int[width];
    Arrays.fill(model, 1);
    d.run(model);
    assertEquals(width, sum[0]);
    model = model.clone();
    model[1234] = 7;
    model[4999] = 0;
    d.run(model);
    assertEquals(width + 7 + 1_000_000, sum[0]);
  }

  private static void collectUntil(WeakReference<?>... refs) throws InterruptedException {
    long deadline = System.nanoTime() + 20_000_000_000L;
    while (System.nanoTime() < deadline) {
      boolean cleared = true;
      for (WeakReference<?> ref : refs) cleared &= ref.get() == null;
      if (cleared) return;
      System.gc();
      Thread.sleep(20);
    }
  }

  private Diffuser<String> fanOutOfTwoMaps() {
    return Diffuser.intoAll(
        Diffuser.map((String s) -> s + "0", Diffuser.into((String v) -> log.add(v))),
        Diffuser.map((String s) -> s + "1", Diffuser.into((String v) -> log.add(v))));
  }

  @Test
  public void aFanOutOfMapsHoldsItsChildrenUntilItIsUnreachable() throws InterruptedException {
    List<WeakReference<Diffuser<String>>> children = new ArrayList<>();
    Diffuser<String> d = fanOutOfTwoMaps(); // only d refers to its maps and leaves
    Diffuser<String> leaf = Diffuser.into((String v) -> log.add("leaf:" + v));
    children.add(new WeakReference<>(leaf));
    Diffuser<String> map = Diffuser.map((String s) -> s + "2", leaf);
    children.add(new WeakReference<>(map));
    Diffuser<String> e = Diffuser.intoAll(map, Diffuser.map((String s) -> s + "3", Diffuser.into((String v) -> log.add(v))));
    leaf = null;
    map = null;
    for (int i = 0; i < 3; i++) {
      System.gc();
      Thread.sleep(20); // a Cleaner would release a collected child's handle
    }
    assertNotNull("a fan-out holds its children", children.get(0).get());
    assertNotNull(children.get(1).get());
    d.run("a");
    e.run("a");
    assertEquals(Arrays.asList("a0", "a1", "leaf:a2", "a3"), take());
    e = null;
    collectUntil(children.get(0), children.get(1));
    assertNull("collected with the fan-out", children.get(0).get());
    assertNull(children.get(1).get());
    d.run("b");
    assertEquals(Arrays.asList("b0", "b1"), take());
  }

  /** A transform object of its own (a non-capturing lambda would be a shared constant). */
  private static final class Suffix implements Function<String, String> {
    @Override
    public String apply(String s) {
      return s + "!";
    }
  }

  private static Diffuser<String> droppedFanOut(Function<String, String> transform, boolean gated) {
    List<Diffuser<String>> children = Arrays.asList(
        Diffuser.map(transform, Diffuser.into((String v) -> { })),
        Diffuser.map((String s) -> s, Diffuser.into((String v) -> { })));
    Diffuser<String> d = gated ? Diffuser.intoAll(children) : Diffuser.intoAlways(children);
    d.run("a");
    return d;
  }

  @Test
  public void theTransformsAreReleasedWithTheFanOut() throws InterruptedException {
    Suffix gated = new Suffix();
    Suffix ungated = new Suffix();
    WeakReference<Diffuser<String>> first = new WeakReference<>(droppedFanOut(gated, true));
    WeakReference<Diffuser<String>> second = new WeakReference<>(droppedFanOut(ungated, false));
    WeakReference<Suffix> gatedRef = new WeakReference<>(gated);
    WeakReference<Suffix> ungatedRef = new WeakReference<>(ungated);
    gated = null;
    ungated = null;
    collectUntil(first, second, gatedRef, ungatedRef);
    assertNull("the fan-out's Java object", first.get());
    assertNull("the gated fan-out's transform", gatedRef.get());
    assertNull("the ungated fan-out's transform", ungatedRef.get());
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
  public void eachPartIsComparedOnceByItsGateAtItsTurn() {
    Diffuser<List<String>> d = Diffuser.intoAlways(Arrays.asList(keyLeaf(0, "a"), keyLeaf(1, "b")));
    d.run(Arrays.asList("x", "y"));
    assertEquals(Arrays.asList("t0", "a:x", "t1", "b:y"), take());
    d.run(Arrays.asList("x", "z"));
    assertEquals(Arrays.asList("t0", "eq:x-x", "t1", "eq:y-z", "b:z"), take());
    d.run(Arrays.asList("x", "z"));
    assertEquals(Arrays.asList("t0", "eq:x-x", "t1", "eq:z-z"), take());
  }

  @Test
  public void anEqualsThatThrowsFailsTheRunAtItsTurn() {
    Diffuser<String> first = Diffuser.into((String s) -> log.add("first:" + s));
    List<Key> keys = new ArrayList<>();
    Diffuser<String> d = Diffuser.intoAlways(Arrays.asList(
        Diffuser.map((String s) -> s, first),
        Diffuser.map((String s) -> keys.get(keys.size() - 1), Diffuser.into((Key k) -> log.add("key:" + k))),
        Diffuser.map((String s) -> s, Diffuser.into((String s) -> log.add("last:" + s)))));
    keys.add(new Key("k1", true));
    d.run("a");
    assertEquals(Arrays.asList("first:a", "key:k1", "last:a"), take());
    keys.add(new Key("k2"));
    try {
      d.run("b");
      fail("the cached key's equals throws");
    } catch (IllegalStateException expected) {
      assertEquals("equals of k1", expected.getMessage());
    }
    // Called once, by the gate, after the first child ran; the last child did not run.
    assertEquals(Arrays.asList("first:b", "eq:k1-k2"), take());
  }

  /**
   * Runs "a" twice through {@code intoAlways(map(s + "1", first(shared)), map(s + "2",
   * shared))}, where the first child reaches the gate {@code shared} too: the first child
   * changes the gate's cache before the second child's turn, so the gate sees both parts
   * both times, the second compared with the first.
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
  public void aGateUnderTheFanOutTwiceComparesAtEachTurn() {
    aSharedGateComparesAtItsTurn(shared -> shared);
  }

  @Test
  public void aGateReachedThroughAnotherChildComparesAtEachTurn() {
    aSharedGateComparesAtItsTurn(shared -> Diffuser.intoAlways(Arrays.asList(shared)));
  }

  @Test
  public void aCacheChangedOutsideTheFanOutIsSeenByTheNextRun() {
    Diffuser<String> gate = Diffuser.into((String s) -> log.add("gate:" + s));
    Diffuser<String> d = Diffuser.intoAlways(Arrays.asList(
        Diffuser.map((String s) -> s, gate), Diffuser.map((String s) -> s, Diffuser.into((String s) -> { }))));
    d.run("a");
    gate.run("b"); // the gate now caches "b", behind the fan-out's back
    d.run("a"); // "a" differs from "b"
    gate.run("a");
    d.run("a");
    assertEquals(Arrays.asList("gate:a", "gate:b", "gate:a"), take());
  }
}
