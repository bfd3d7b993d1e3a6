package io.diffuser.diffuser;

import static org.junit.Assert.assertEquals;

import java.util.ArrayList;
import java.util.List;
import org.junit.Test;

/**
 * The parts a map selects are lent to the core for the run (JNI local references)
 * instead of handed over as global references, and the value of a run is kept only by
 * the gates that cache it. What must hold: a cached part or value outlives its run and
 * any garbage collection, a part that is only compared costs nothing that outlives the
 * run (nor its pass, when runs queued from effects make one run of many passes), and
 * runs with many parts (more than a JNI frame's default capacity, and more than the JVM
 * lets a frame hold) work.
 */
public class DiffuserBorrowedPartsTest {
  /** A value equal to another with the same number, but never the same object. */
  static final class Box {
    final int n;

    Box(int n) {
      this.n = n;
    }

    @Override
    public boolean equals(Object o) {
      return o instanceof Box && ((Box) o).n == n;
    }

    @Override
    public int hashCode() {
      return n;
    }

    @Override
    public String toString() {
      return "Box(" + n + ")";
    }
  }

  /** A model whose parts are fresh objects on every call of the transforms. */
  static final class Model {
    final int[] numbers;

    Model(int... numbers) {
      this.numbers = numbers;
    }
  }

  private static void collectGarbage() {
    for (int i = 0; i < 3; i++) {
      System.gc();
      System.runFinalization();
    }
  }

  @Test
  public void cachedPartsOutliveTheirRunAndGarbageCollection() {
    final int width = 3000; // far more parts than a JNI frame holds by default
    List<String> log = new ArrayList<>();
    List<Diffuser<Model>> maps = new ArrayList<>();
    for (int i = 0; i < width; i++) {
      final int index = i;
      maps.add(Diffuser.map((Model m) -> new Box(m.numbers[index]),
          Diffuser.into((Box b) -> log.add(index + ":" + b.n))));
    }
    Diffuser<Model> d = Diffuser.intoAll(maps);

    int[] first = new int[width];
    for (int i = 0; i < width; i++) first[i] = i;
    d.run(new Model(first));
    assertEquals(width, log.size());
    log.clear();

    for (int round = 0; round < 5; round++) {
      collectGarbage();
      int[] next = first.clone();
      next[round * 7] = -1 - round; // one part changes per round
      d.run(new Model(next));
      List<String> expected = new ArrayList<>();
      if (round > 0) expected.add((round - 1) * 7 + ":" + ((round - 1) * 7));
      expected.add(round * 7 + ":" + (-1 - round));
      java.util.Collections.sort(expected);
      java.util.Collections.sort(log);
      assertEquals("round " + round + ": only the changed parts (and the one changed back) run",
          expected, log);
      log.clear();
      first[round * 7] = round * 7;
    }
  }

  /**
   * More parts than the JVM lets one JNI frame hold: the test JVM caps a frame at 4,096
   * references (build.gradle; HotSpot's default cap is 65,536), past which the glue lends
   * parts as global references, deleted when the run returns.
   */
  private static final int BEYOND_A_FRAME = 5_000;

  @Test
  public void theTestJvmCapsAFrame() {
    assertEquals("build.gradle caps a JNI frame, so that these tests spill", true,
        java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments()
            .contains("-XX:MaxJNILocalCapacity=4096"));
  }

  @Test
  public void aRunLendsMorePartsThanAFrameHolds() {
    List<Integer> changed = new ArrayList<>();
    List<Diffuser<Model>> maps = new ArrayList<>();
    for (int i = 0; i < BEYOND_A_FRAME; i++) {
      final int index = i;
      maps.add(Diffuser.map((Model m) -> new Box(m.numbers[0] == index ? -1 : index),
          Diffuser.into((Box b) -> changed.add(index))));
    }
    Diffuser<Model> d = Diffuser.intoAll(maps);
    d.run(new Model(-1));
    assertEquals(BEYOND_A_FRAME, changed.size());
    changed.clear();
    collectGarbage();
    int last = BEYOND_A_FRAME - 1;
    d.run(new Model(last)); // only the last part, lent past the cap, changes
    d.run(new Model(-1));   // and changes back
    assertEquals(java.util.Arrays.asList(last, last), changed);
  }

  @Test
  public void runsQueuedFromEffectsLendMorePartsThanAFrameHolds() {
    final Object[] self = new Object[1];
    int[] effects = {0};
    Diffuser<Integer> d = Diffuser.map((Integer n) -> new Box(n), Diffuser.intoAlways((Box b) -> {
      effects[0]++;
      if (b.n < BEYOND_A_FRAME) {
        @SuppressWarnings("unchecked")
        Diffuser<Integer> again = (Diffuser<Integer>) self[0];
        again.run(b.n + 1); // queued: every run lends its part to the first run's frame
      }
    }));
    self[0] = d;
    d.run(0);
    assertEquals(BEYOND_A_FRAME + 1, effects[0]);
  }

  @Test
  public void aPartLentPastTheCapIsFreedWhenTheRunReturns() {
    List<java.lang.ref.WeakReference<Box>> lastParts = new ArrayList<>();
    List<Diffuser<Integer>> maps = new ArrayList<>();
    for (int i = 0; i < BEYOND_A_FRAME; i++) {
      final boolean last = i == BEYOND_A_FRAME - 1;
      maps.add(Diffuser.map((Integer n) -> {
        Box part = new Box(n);
        if (last) lastParts.add(new java.lang.ref.WeakReference<>(part));
        return part;
      }, Diffuser.intoAlways((Box b) -> { }))); // compared with nothing, kept by nothing
    }
    Diffuser<Integer> d = Diffuser.intoAlways(maps);
    d.run(1);
    assertEquals(1, lastParts.size());
    for (int i = 0; i < 50 && lastParts.get(0).get() != null; i++) collectGarbage();
    assertEquals("the spilled reference was deleted", null, lastParts.get(0).get());
  }

  @Test
  public void aRunInsideASpillingRunLendsItsOwnParts() {
    List<String> log = new ArrayList<>();
    Diffuser<Integer> inner = Diffuser.map((Integer n) -> new Box(n), Diffuser.into((Box b) -> log.add("inner " + b.n)));
    List<Diffuser<Integer>> maps = new ArrayList<>();
    for (int i = 0; i < BEYOND_A_FRAME; i++) {
      final int index = i;
      maps.add(Diffuser.map((Integer n) -> {
        if (index == BEYOND_A_FRAME - 2) inner.run(n + index); // another graph: runs at once
        return new Box(n + index);
      }, Diffuser.into((Box b) -> {
        if (index >= BEYOND_A_FRAME - 2) log.add("outer " + b.n);
      })));
    }
    Diffuser<Integer> d = Diffuser.intoAll(maps);
    d.run(0);
    collectGarbage();
    d.run(0);
    d.run(1);
    int a = BEYOND_A_FRAME - 2, b = BEYOND_A_FRAME - 1;
    assertEquals(java.util.Arrays.asList("inner " + a, "outer " + a, "outer " + b,
        "inner " + (a + 1), "outer " + (a + 1), "outer " + (b + 1)), log);
  }

  @Test
  public void aChainOfSingleMapsLendsEachPartToTheNext() {
    List<Integer> seen = new ArrayList<>();
    Diffuser<Box> d = Diffuser.into((Box b) -> seen.add(b.n));
    int maps = Diffuser.MAX_DEPTH - 1; // as deep as a tree may be
    for (int i = 0; i < maps; i++) d = Diffuser.map((Box b) -> new Box(b.n + 1), d);
    d.run(new Box(0));
    collectGarbage();
    d.run(new Box(0));
    d.run(new Box(1));
    assertEquals(java.util.Arrays.asList(maps, maps + 1), seen);
  }

  @Test
  public void aRunQueuedFromAnEffectKeepsItsValue() {
    List<String> log = new ArrayList<>();
    final Object[] self = new Object[1];
    Diffuser<Box> d = Diffuser.into((Box b) -> {
      log.add("run:" + b.n);
      if (b.n == 1) {
        @SuppressWarnings("unchecked")
        Diffuser<Box> again = (Diffuser<Box>) self[0];
        again.run(new Box(5)); // queued: runs after this pass, after this object is unreachable here
        collectGarbage();
      }
    });
    self[0] = d;
    d.run(new Box(1));
    assertEquals(java.util.Arrays.asList("run:1", "run:5"), log);
    log.clear();
    collectGarbage();
    d.run(new Box(5));
    assertEquals("the queued value was cached and is still equal", new ArrayList<String>(), log);
  }

  @Test
  public void nullPartsAreLentToo() {
    List<String> log = new ArrayList<>();
    Diffuser<Model> d = Diffuser.intoAll(
        Diffuser.map((Model m) -> m.numbers.length > 0 ? new Box(m.numbers[0]) : null,
            Diffuser.into((Box b) -> log.add("a:" + b))),
        Diffuser.map((Model m) -> (Box) null, Diffuser.into((Box b) -> log.add("b:" + b))));
    d.run(new Model());
    d.run(new Model(1));
    d.run(new Model(1, 2));
    assertEquals(java.util.Arrays.asList("a:null", "b:null", "a:Box(1)"), log);
  }

  /** A Box that logs every call of its equals as "receiver=argument", by name. */
  static final class Named {
    final String name;
    final int n;
    final List<String> log;

    Named(String name, int n, List<String> log) {
      this.name = name;
      this.n = n;
      this.log = log;
    }

    @Override
    public boolean equals(Object o) {
      log.add(name + "=" + (o instanceof Named ? ((Named) o).name : String.valueOf(o)));
      return o instanceof Named && ((Named) o).n == n;
    }

    @Override
    public int hashCode() {
      return n;
    }
  }

  /**
   * A part that is the very object a gate holds is another reference to it: the gate keeps
   * the reference it has (no new global reference), which must change nothing that Java
   * can see. Its equals is not called (identity), an equal object that is not the same
   * still replaces the cache (the next equals is called on it), and the kept object
   * outlives garbage collection.
   */
  @Test
  public void aPartThatIsTheCachedObjectKeepsIt() {
    List<String> log = new ArrayList<>();
    Named one = new Named("one", 1, log);
    Named oneAgain = new Named("oneAgain", 1, log);
    Named two = new Named("two", 2, log);
    Named[] current = {one};
    Diffuser<Object> d = Diffuser.map((Object ignored) -> current[0],
        Diffuser.into((Named b) -> log.add("effect:" + b.name)));

    d.run("run 1");
    d.run("run 2");
    collectGarbage();
    d.run("run 3");
    assertEquals(List.of("effect:one"), log);
    log.clear();

    current[0] = oneAgain;
    d.run("run 4");
    assertEquals("an equal object is compared with the cached one", List.of("one=oneAgain"), log);
    log.clear();

    current[0] = one;
    d.run("run 5");
    assertEquals("and was kept: it is the receiver of the next comparison", List.of("oneAgain=one"), log);
    log.clear();
    d.run("run 6");
    collectGarbage();
    d.run("run 7");
    assertEquals("one is now the cached object itself", List.of(), log);

    current[0] = two;
    d.run("run 8");
    assertEquals(List.of("one=two", "effect:two"), log);
  }

  private static Diffuser<Integer> feedback;
  private static int passes;

  /**
   * Runs queued from an effect are passes of the same outermost run, one after the
   * other: a part is dead once the pass that lent it has passed its map, and must not be
   * kept until the outermost run returns (1,000 passes of a 1 MB part in a 256 MB heap).
   */
  @Test(timeout = 60000)
  public void queuedPassesDoNotKeepTheirPartsUntilTheRunReturns() {
    passes = 0;
    feedback = Diffuser.map((Integer x) -> new byte[1 << 20], Diffuser.intoAlways((byte[] part) -> {
      passes++;
      if (passes < 1000) feedback.run(passes); // queued: the next pass of this run
    }));
    try {
      feedback.run(0);
    } finally {
      feedback = null;
    }
    assertEquals(1000, passes);
  }

  /**
   * The same with more parts than the test JVM lets a frame hold (so that later parts are
   * spilled as global references): 200 passes of 64 parts of 64 KB, 800 MB if every
   * pass's parts were kept, in a 256 MB heap; every pass sees its own parts.
   */
  @Test(timeout = 60000)
  public void queuedPassesPastTheFrameCapDoNotKeepTheirParts() {
    passes = 0;
    int[] wrong = {0};
    List<Diffuser<Integer>> maps = new ArrayList<>();
    for (int k = 0; k < 64; k++) {
      final int slot = k;
      maps.add(Diffuser.map((Integer n) -> {
        byte[] part = new byte[64 << 10];
        part[0] = (byte) n.intValue();
        part[1] = (byte) slot;
        return part;
      }, Diffuser.intoAlways((byte[] part) -> {
        if (part[0] != (byte) passes || part[1] != (byte) slot) wrong[0]++;
      })));
    }
    maps.add(Diffuser.intoAlways((Integer n) -> {
      passes++;
      if (passes < 200) feedback.run(passes);
    }));
    feedback = Diffuser.intoAlways(maps);
    try {
      feedback.run(0);
    } finally {
      feedback = null;
    }
    assertEquals(200, passes);
    assertEquals("parts seen by the wrong pass or map", 0, wrong[0]);
  }
}
