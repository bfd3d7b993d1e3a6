package io.diffuser.bench;

import io.diffuser.Effect;
import io.diffuser.diffuser.Diffuser;
import io.diffuser.internal.Native;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.lang.management.ManagementFactory;
import java.util.function.Supplier;

/**
 * The Java binding against hand-written caching code on the 1,000-leaf model of
 * bench/swift: a screen of 100 sections of 10 fields (5 Strings, 5 ints).
 *
 * <ul>
 *   <li>{@code library}: {@code intoAll(sections: map(section_i, intoAll(fields: map(field_j,
 *       into(sink)))))} through the binding;
 *   <li>{@code hand}: flat arrays of previous leaf values, every leaf compared with equals;
 *   <li>{@code hand-tree}: compare the screen, then each section, then each leaf of a
 *       changed section;
 *   <li>{@code floor} (printed as {@code java-floor}): the least any library with this
 *       API does, even in pure Java; see {@link FloorRenderer}.
 * </ul>
 *
 * <p>Scenarios: unchanged-same, unchanged-equal, one-leaf, one-leaf-deep, ten-pct (runs
 * alternate between two models), and build (constructing the renderer). ns per run (or
 * per build); medians of interleaved rounds in one JVM, after warm-up rounds.
 *
 * <p>Also printed: the Java heap the library allocates per run (or per build), from
 * {@code com.sun.management.ThreadMXBean#getThreadAllocatedBytes} of the running thread,
 * which includes whatever upcalls from the native core allocate. The unchanged-*
 * scenarios must show 0.
 *
 * <p>{@code --cpu} times the running thread's CPU time instead of wall-clock time: on a
 * loaded machine this leaves out the time the thread spends waiting for a core.
 *
 * <pre>
 *   gradle bench [-PbenchArgs='--rounds 15 --tsv']     (--loop first: the loop benchmark, LoopBench)
 *   java -cp build/libs/diffuser-0.1.0.jar:build/classes/java/bench io.diffuser.bench.Bench \
 *       [--rounds N] [--warmup N] [--only scenario] [--cpu] [--tsv]
 * </pre>
 *
 * <p>One program because the comparison is only fair if a reader can check in one place
 * that every renderer gets the same model, does the same work
 * ({@code checkRenderersAgree} runs before anything is timed) and is timed by the same
 * loop; the loop benchmark, which shares none of the model, is {@link LoopBench}.
 */
public final class Bench {
  private Bench() {}

  static final int SECTIONS = 100;
  static final int FIELDS = 10;
  static final int LEAVES = SECTIONS * FIELDS;

  // ---------------------------------------------------------------------------------
  // Model

  /** One section: five Strings and five ints. */
  static final class Section {
    final String s0, s1, s2, s3, s4;
    final int i0, i1, i2, i3, i4;

    Section(String s0, String s1, String s2, String s3, String s4, int i0, int i1, int i2, int i3, int i4) {
      this.s0 = s0;
      this.s1 = s1;
      this.s2 = s2;
      this.s3 = s3;
      this.s4 = s4;
      this.i0 = i0;
      this.i1 = i1;
      this.i2 = i2;
      this.i3 = i3;
      this.i4 = i4;
    }

    String s(int k) {
      switch (k) {
        case 0: return s0;
        case 1: return s1;
        case 2: return s2;
        case 3: return s3;
        default: return s4;
      }
    }

    int i(int k) {
      switch (k) {
        case 0: return i0;
        case 1: return i1;
        case 2: return i2;
        case 3: return i3;
        default: return i4;
      }
    }

    @Override
    public boolean equals(Object o) {
      if (this == o) return true;
      if (!(o instanceof Section)) return false;
      Section x = (Section) o;
      return i0 == x.i0 && i1 == x.i1 && i2 == x.i2 && i3 == x.i3 && i4 == x.i4
          && s0.equals(x.s0) && s1.equals(x.s1) && s2.equals(x.s2) && s3.equals(x.s3) && s4.equals(x.s4);
    }

    @Override
    public int hashCode() {
      return ((s0.hashCode() * 31 + s1.hashCode()) * 31 + i0) * 31 + i4;
    }
  }

  /** The screen: 100 sections. */
  static final class Screen {
    final Section[] sections;

    Screen(Section[] sections) {
      this.sections = sections;
    }

    @Override
    public boolean equals(Object o) {
      if (this == o) return true;
      return o instanceof Screen && Arrays.equals(sections, ((Screen) o).sections);
    }

    @Override
    public int hashCode() {
      return Arrays.hashCode(sections);
    }
  }

  static long sinkAccumulator;

  static void sink(long value) {
    sinkAccumulator = sinkAccumulator * 31 + value;
  }

  static long stringHash(String s) {
    return s.length() + (s.isEmpty() ? 0 : s.charAt(0));
  }

  static long fieldHash(Section section, int j) {
    return j < 5 ? stringHash(section.s(j)) : section.i(j - 5);
  }

  /** A string equal to {@code s} with its own character storage. */
  static String deepCopy(String s) {
    return new String(s.toCharArray());
  }

  static Section deepCopy(Section x) {
    return new Section(deepCopy(x.s0), deepCopy(x.s1), deepCopy(x.s2), deepCopy(x.s3), deepCopy(x.s4),
        x.i0, x.i1, x.i2, x.i3, x.i4);
  }

  static Screen deepCopy(Screen screen) {
    Section[] sections = new Section[SECTIONS];
    for (int i = 0; i < SECTIONS; i++) sections[i] = deepCopy(screen.sections[i]);
    return new Screen(sections);
  }

  static Screen makeScreen(int seed) {
    Section[] sections = new Section[SECTIONS];
    for (int i = 0; i < SECTIONS; i++) {
      String[] t = new String[5];
      for (int j = 0; j < 5; j++) t[j] = "section-" + i + "-field-" + j + "-value-" + seed;
      sections[i] = new Section(t[0], t[1], t[2], t[3], t[4], i * 10, i * 10 + 1, i * 10 + 2, i * 10 + 3, i * 10 + 4);
    }
    return new Screen(sections);
  }

  /** A copy of {@code screen} with leaf {@code leaf} changed; other sections are shared. */
  static Screen edit(Screen screen, int leaf, int generation) {
    int i = leaf / FIELDS;
    int j = leaf % FIELDS;
    Section x = screen.sections[i];
    String marker = "changed-leaf-" + leaf + "-generation-" + generation;
    int number = -generation - leaf;
    String[] s = {x.s0, x.s1, x.s2, x.s3, x.s4};
    int[] n = {x.i0, x.i1, x.i2, x.i3, x.i4};
    if (j < 5) s[j] = marker;
    else n[j - 5] = number;
    Section[] sections = screen.sections.clone();
    sections[i] = new Section(s[0], s[1], s[2], s[3], s[4], n[0], n[1], n[2], n[3], n[4]);
    return new Screen(sections);
  }

  // ---------------------------------------------------------------------------------
  // Renderers

  interface Renderer {
    void render(Screen screen);
  }

  /** The library. */
  static final class LibraryRenderer implements Renderer {
    final Diffuser<Screen> diffuser;

    LibraryRenderer() {
      List<Diffuser<Screen>> sections = new ArrayList<>(SECTIONS);
      for (int i = 0; i < SECTIONS; i++) {
        final int index = i;
        sections.add(Diffuser.map((Screen screen) -> screen.sections[index], section()));
      }
      diffuser = Diffuser.intoAll(sections);
    }

    static Diffuser<Section> section() {
      Effect<String> text = s -> sink(stringHash(s));
      Effect<Integer> number = n -> sink(n);
      List<Diffuser<Section>> leaves = new ArrayList<>(FIELDS);
      leaves.add(Diffuser.map((Section x) -> x.s0, Diffuser.into(text)));
      leaves.add(Diffuser.map((Section x) -> x.s1, Diffuser.into(text)));
      leaves.add(Diffuser.map((Section x) -> x.s2, Diffuser.into(text)));
      leaves.add(Diffuser.map((Section x) -> x.s3, Diffuser.into(text)));
      leaves.add(Diffuser.map((Section x) -> x.s4, Diffuser.into(text)));
      leaves.add(Diffuser.map((Section x) -> x.i0, Diffuser.into(number)));
      leaves.add(Diffuser.map((Section x) -> x.i1, Diffuser.into(number)));
      leaves.add(Diffuser.map((Section x) -> x.i2, Diffuser.into(number)));
      leaves.add(Diffuser.map((Section x) -> x.i3, Diffuser.into(number)));
      leaves.add(Diffuser.map((Section x) -> x.i4, Diffuser.into(number)));
      return Diffuser.intoAll(leaves);
    }

    @Override
    public void render(Screen screen) {
      diffuser.run(screen);
    }
  }

  /** Flat arrays of previous leaf values, every leaf compared each run. */
  static final class HandRenderer implements Renderer {
    final String[] strings = new String[SECTIONS * 5];
    final int[] ints = new int[SECTIONS * 5];
    final boolean[] seen = new boolean[SECTIONS * 5];

    @Override
    public void render(Screen screen) {
      for (int i = 0; i < SECTIONS; i++) {
        Section x = screen.sections[i];
        int base = i * 5;
        string(base, x.s0);
        string(base + 1, x.s1);
        string(base + 2, x.s2);
        string(base + 3, x.s3);
        string(base + 4, x.s4);
        number(base, x.i0);
        number(base + 1, x.i1);
        number(base + 2, x.i2);
        number(base + 3, x.i3);
        number(base + 4, x.i4);
      }
    }

    private void string(int k, String v) {
      if (!v.equals(strings[k])) {
        sink(stringHash(v));
        strings[k] = v;
      }
    }

    private void number(int k, int v) {
      if (!seen[k] || ints[k] != v) {
        sink(v);
        ints[k] = v;
        seen[k] = true;
      }
    }
  }

  /** The diffuser's pruning by hand: screen, then section, then leaf. */
  static final class HandTreeRenderer implements Renderer {
    Screen screen;
    final Section[] sections = new Section[SECTIONS];

    @Override
    public void render(Screen next) {
      if (screen != null && screen.equals(next)) return;
      for (int i = 0; i < SECTIONS; i++) {
        Section x = next.sections[i];
        Section old = sections[i];
        if (old == null) {
          for (int j = 0; j < FIELDS; j++) sink(fieldHash(x, j));
          sections[i] = x;
          continue;
        }
        if (old.equals(x)) continue;
        if (!old.s0.equals(x.s0)) sink(stringHash(x.s0));
        if (!old.s1.equals(x.s1)) sink(stringHash(x.s1));
        if (!old.s2.equals(x.s2)) sink(stringHash(x.s2));
        if (!old.s3.equals(x.s3)) sink(stringHash(x.s3));
        if (!old.s4.equals(x.s4)) sink(stringHash(x.s4));
        if (old.i0 != x.i0) sink(x.i0);
        if (old.i1 != x.i1) sink(x.i1);
        if (old.i2 != x.i2) sink(x.i2);
        if (old.i3 != x.i3) sink(x.i3);
        if (old.i4 != x.i4) sink(x.i4);
        sections[i] = x;
      }
      screen = next;
    }
  }


  /**
   * {@code floor}: not a baseline to beat but the least work a library with this API must
   * do, even one written in pure Java with no native core (so for the binding, which also
   * crosses JNI, a loose lower bound). It prunes as {@code hand-tree} does, but gets every
   * part through a {@link io.diffuser.Function} of the kind {@code map} is given, keeps a
   * cache per leaf as a gate does ({@code Objects.equals}, ints boxed as the binding sees
   * them) and runs every effect through an {@link Effect}. Like a gate it keeps the new
   * value after every run, equal or not, so that the next run compares with the last
   * value (the reference semantics; comparing with an older, identical value would be
   * cheaper and wrong). Its constructor is the floor of
   * {@code build}: the benchmark's own description of the tree (the same lambdas and
   * lists as {@link LibraryRenderer}) with one small object per combinator that keeps what
   * it was given, and nothing else.
   */
  static final class FloorRenderer implements Renderer {
    /** One combinator: what it was given, nothing else. */
    static final class Node {
      final io.diffuser.Function<Object, Object> transform;
      final Effect<Object> effect;
      final Node child;
      final Node[] children;

      @SuppressWarnings("unchecked")
      Node(io.diffuser.Function<?, ?> transform, Effect<?> effect, Node child, List<Node> children) {
        this.transform = (io.diffuser.Function<Object, Object>) transform;
        this.effect = (Effect<Object>) effect;
        this.child = child;
        this.children = children == null ? null : children.toArray(new Node[0]);
      }

      static Node map(io.diffuser.Function<?, ?> transform, Node child) {
        return new Node(transform, null, child, null);
      }

      static Node into(Effect<?> effect) {
        return new Node(null, effect, null, null);
      }

      static Node all(List<Node> children) {
        return new Node(null, null, null, children);
      }
    }

    final Node root;
    Screen screen;
    final Object[] sections = new Object[SECTIONS];
    final Object[] leaves = new Object[LEAVES];
    final boolean[] seen = new boolean[LEAVES];

    FloorRenderer() {
      List<Node> sections = new ArrayList<>(SECTIONS);
      for (int i = 0; i < SECTIONS; i++) {
        final int index = i;
        sections.add(Node.map((Screen screen) -> screen.sections[index], section()));
      }
      root = Node.all(sections);
    }

    static Node section() {
      Effect<String> text = s -> sink(stringHash(s));
      Effect<Integer> number = n -> sink(n);
      List<Node> leaves = new ArrayList<>(FIELDS);
      leaves.add(Node.map((Section x) -> x.s0, Node.into(text)));
      leaves.add(Node.map((Section x) -> x.s1, Node.into(text)));
      leaves.add(Node.map((Section x) -> x.s2, Node.into(text)));
      leaves.add(Node.map((Section x) -> x.s3, Node.into(text)));
      leaves.add(Node.map((Section x) -> x.s4, Node.into(text)));
      leaves.add(Node.map((Section x) -> x.i0, Node.into(number)));
      leaves.add(Node.map((Section x) -> x.i1, Node.into(number)));
      leaves.add(Node.map((Section x) -> x.i2, Node.into(number)));
      leaves.add(Node.map((Section x) -> x.i3, Node.into(number)));
      leaves.add(Node.map((Section x) -> x.i4, Node.into(number)));
      return Node.all(leaves);
    }

    @Override
    public void render(Screen next) {
      if (screen != null && screen.equals(next)) {
        screen = next;
        return;
      }
      Node[] maps = root.children;
      for (int i = 0; i < SECTIONS; i++) {
        Object section = maps[i].transform.apply(next);
        if (sections[i] != null && sections[i].equals(section)) {
          sections[i] = section;
          continue;
        }
        sections[i] = section;
        Node[] fields = maps[i].child.children;
        for (int j = 0; j < FIELDS; j++) {
          int leaf = i * FIELDS + j;
          Object part = fields[j].transform.apply(section);
          if (seen[leaf] && java.util.Objects.equals(leaves[leaf], part)) {
            leaves[leaf] = part;
            continue;
          }
          fields[j].child.effect.run(part);
          leaves[leaf] = part;
          seen[leaf] = true;
        }
      }
      screen = next;
    }
  }

  // ---------------------------------------------------------------------------------
  // Measuring

  static final class Scenario {
    final String name;
    final Screen first;
    final Screen second;

    Scenario(String name, Screen first, Screen second) {
      this.name = name;
      this.first = first;
      this.second = second;
    }
  }

  static List<Scenario> scenarios() {
    Screen base = makeScreen(1);
    Screen oneLeaf = edit(base, 537, 1);
    Screen deepBase = deepCopy(base);
    Screen oneLeafDeep = edit(deepCopy(base), 537, 1);
    Screen tenPct = base;
    for (int leaf = 3; leaf < LEAVES; leaf += 10) tenPct = edit(tenPct, leaf, 1);
    return Arrays.asList(
        new Scenario("unchanged-same", base, base),
        new Scenario("unchanged-equal", base, deepCopy(base)),
        new Scenario("one-leaf", base, oneLeaf),
        new Scenario("one-leaf-deep", deepBase, oneLeafDeep),
        new Scenario("ten-pct", base, tenPct));
  }

  /** Allocation counters of the JVM's threads (HotSpot's extension of ThreadMXBean). */
  static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  /** Whether times are the running thread's CPU time rather than wall-clock time. */
  static boolean cpuTime;

  /** The clock of the measurements, in ns. */
  static long clock() {
    return cpuTime ? THREADS.getCurrentThreadCpuTime() : System.nanoTime();
  }

  /** Java heap bytes allocated so far by the calling thread. */
  static long allocatedBytes() {
    return THREADS.getThreadAllocatedBytes(Thread.currentThread().getId());
  }

  /** Heap bytes per run or build of the last measureRuns or measureBuild call. */
  static double lastBytes;

  /**
   * ns per run of a new renderer alternating between the scenario's two models; the heap
   * bytes per run go to {@link #lastBytes}.
   */
  static double measureRuns(Supplier<Renderer> make, Scenario scenario, int iterations) {
    Renderer renderer = make.get();
    renderer.render(scenario.first);
    renderer.render(scenario.second);
    long bytes = allocatedBytes();
    long start = clock();
    for (int i = 0; i < iterations; i++) {
      renderer.render((i & 1) == 0 ? scenario.first : scenario.second);
    }
    long elapsed = clock() - start;
    lastBytes = (double) (allocatedBytes() - bytes) / iterations;
    return (double) elapsed / iterations;
  }

  static Object keepAlive;

  /**
   * The C heap in use once the trees of earlier measurements are gone: their handles are
   * released by a Cleaner after a collection, so collect and wait until three readings
   * agree.
   */
  static long settledHeapInUse() throws InterruptedException {
    long last = -1;
    int unchanged = 0;
    for (int i = 0; i < 200; i++) {
      System.gc();
      Thread.sleep(50);
      long now = Native.heapInUse();
      // Three readings alike: the Cleaner thread frees dropped trees in bursts.
      unchanged = now == last ? unchanged + 1 : 0;
      if (unchanged == 2) return now;
      last = now;
    }
    return last;
  }

  /**
   * Native bytes per leaf of the library's tree after its first run on {@code screen}:
   * the C heap in use before and after building and running 20 trees ({@code
   * Native.heapInUse}); 0 where the C library cannot say.
   */
  static double nativeBytesPerLeaf(Supplier<Renderer> make, Screen screen) throws InterruptedException {
    int trees = 20;
    List<Renderer> built = new ArrayList<>(trees);
    keepAlive = null; // the trees of the build rounds, freed before the heap is read
    long before = settledHeapInUse();
    for (int i = 0; i < trees; i++) built.add(make.get());
    for (Renderer renderer : built) renderer.render(screen);
    long after = Native.heapInUse();
    keepAlive = built;
    return before == 0 ? 0 : (double) (after - before) / (trees * LEAVES);
  }

  /**
   * ns to construct a renderer. The trees of the previous measurement are dropped and
   * collected first, and the Cleaner given 100 ms to release their handles (about 10 ms of
   * work), so that neither a collection of everyone's garbage nor the Cleaner's releases
   * land in the timed window of whichever builder comes next (a collection made the
   * pure-Java floor's build 11 us in one process and 450 us in another).
   */
  static double measureBuild(Supplier<Renderer> make, int iterations) throws InterruptedException {
    keepAlive = null;
    System.gc();
    Thread.sleep(100);
    List<Renderer> built = new ArrayList<>(iterations);
    long bytes = allocatedBytes();
    long start = clock();
    for (int i = 0; i < iterations; i++) built.add(make.get());
    long elapsed = clock() - start;
    lastBytes = (double) (allocatedBytes() - bytes) / iterations;
    keepAlive = built;
    return (double) elapsed / iterations;
  }

  /**
   * Before measuring: every renderer must run the same effects on the same sequence of
   * models (the same sink sum), or the figures would compare different work.
   */
  static void checkRenderersAgree(List<Supplier<Renderer>> makers, List<String> names) {
    List<Scenario> all = scenarios();
    Screen[] sequence = {all.get(0).first, all.get(2).second, all.get(4).second, all.get(3).second,
        all.get(1).second, all.get(0).first, all.get(2).second, all.get(0).first};
    long saved = sinkAccumulator;
    long expected = 0;
    for (int r = 0; r < makers.size(); r++) {
      sinkAccumulator = 0;
      Renderer renderer = makers.get(r).get();
      for (Screen screen : sequence) renderer.render(screen);
      if (r == 0) {
        expected = sinkAccumulator;
      } else if (sinkAccumulator != expected) {
        System.err.println("renderer " + names.get(r) + " ran different effects than " + names.get(0));
        System.exit(1);
      }
    }
    sinkAccumulator = saved;
  }

  static double median(List<Double> xs) {
    List<Double> s = new ArrayList<>(xs);
    s.sort(null);
    int n = s.size();
    return n % 2 == 1 ? s.get(n / 2) : (s.get(n / 2 - 1) + s.get(n / 2)) / 2;
  }

  /**
   * Runs the benchmark.
   *
   * @param args {@code [--rounds N] [--warmup N] [--only scenario] [--cpu] [--tsv]}
   */
  public static void main(String[] args) throws InterruptedException {
    if (args.length > 0 && args[0].equals("--loop")) {
      LoopBench.main(args); // the loop benchmark: see LoopBench
      return;
    }
    int rounds = 15;
    int warmup = 5;
    boolean tsv = false;
    String only = null;
    for (int k = 0; k < args.length; k++) {
      switch (args[k]) {
        case "--rounds": rounds = Integer.parseInt(args[++k]); break;
        case "--warmup": warmup = Integer.parseInt(args[++k]); break;
        case "--only": only = args[++k]; break;
        case "--tsv": tsv = true; break;
        case "--cpu": cpuTime = true; break;
        case "": break;
        default:
          System.err.println("usage: Bench [--rounds N] [--warmup N] [--only scenario] [--cpu] [--tsv]");
          System.exit(2);
      }
    }
    if (only != null && !only.equals("build")) {
      final String wanted = only;
      if (scenarios().stream().noneMatch(scenario -> scenario.name.equals(wanted))) {
        StringBuilder known = new StringBuilder();
        for (Scenario scenario : scenarios()) known.append(scenario.name).append(", ");
        System.err.println("no scenario " + only + ": " + known + "build");
        System.exit(2);
      }
    }
    Supplier<Renderer> lib = LibraryRenderer::new;
    Supplier<Renderer> hand = HandRenderer::new;
    Supplier<Renderer> tree = HandTreeRenderer::new;
    Supplier<Renderer> floor = FloorRenderer::new;
    checkRenderersAgree(Arrays.asList(lib, hand, tree, floor), Arrays.asList("library", "hand", "hand-tree", "floor"));

    // Per scenario: median ns of library, hand, hand-tree, then median heap bytes of the
    // library per run.
    List<String> names = new ArrayList<>();
    List<double[]> medians = new ArrayList<>();
    for (Scenario scenario : scenarios()) {
      if (only != null && !only.equals(scenario.name)) continue;
      List<Double> l = new ArrayList<>(), h = new ArrayList<>(), t = new ArrayList<>(), m = new ArrayList<>();
      List<Double> f = new ArrayList<>();
      for (int r = 0; r < warmup + rounds; r++) {
        double a = measureRuns(lib, scenario, 400);
        double bytes = lastBytes;
        double b = measureRuns(hand, scenario, 400);
        double c = measureRuns(tree, scenario, 400);
        double d = measureRuns(floor, scenario, 400);
        if (r >= warmup) {
          l.add(a);
          h.add(b);
          t.add(c);
          m.add(bytes);
          f.add(d);
        }
      }
      names.add(scenario.name);
      medians.add(new double[] {median(l), median(h), median(t), median(m), median(f)});
    }
    if (only == null || only.equals("build")) {
      List<Double> l = new ArrayList<>(), h = new ArrayList<>(), t = new ArrayList<>(), m = new ArrayList<>();
      List<Double> f = new ArrayList<>();
      for (int r = 0; r < warmup + rounds; r++) {
        double a = measureBuild(lib, 40);
        double bytes = lastBytes;
        double b = measureBuild(hand, 40);
        double c = measureBuild(tree, 40);
        double d = measureBuild(floor, 40);
        if (r >= warmup) {
          l.add(a);
          h.add(b);
          t.add(c);
          m.add(bytes);
          f.add(d);
        }
      }
      names.add("build");
      medians.add(new double[] {median(l), median(h), median(t), median(m), median(f)});
    }

    double nativeBytes = only == null ? nativeBytesPerLeaf(lib, makeScreen(1)) : 0;

    if (tsv) {
      if (nativeBytes > 0) {
        System.out.println(String.format(Locale.ROOT, "# java native memory per leaf (bytes): library %.1f", nativeBytes));
      }
      for (int k = 0; k < names.size(); k++) {
        double[] m = medians.get(k);
        System.out.println("java\t" + names.get(k) + "\t" + m[0] + "\t" + m[1] + "\t" + m[2] + "\t" + m[3]);
        System.out.println("java-floor\t" + names.get(k) + "\t" + m[4] + "\t" + m[1] + "\t" + m[2]);
      }
    } else {
      System.out.println("Diffuser Java benchmark: 100 sections x 10 fields, median of " + rounds
          + " interleaved rounds (after " + warmup + " warm-up rounds)");
      System.out.println("scenario          library ns    hand ns  hand-tree ns   x hand  x hand-tree"
          + "  library heap B    floor ns  x hand-tree");
      for (int k = 0; k < names.size(); k++) {
        double[] m = medians.get(k);
        System.out.println(String.format(Locale.ROOT, "%-16s%12.0f%11.0f%14.0f%9.2f%13.2f%16.0f%12.0f%13.2f",
            names.get(k), m[0], m[1], m[2], m[0] / m[1], m[0] / m[2], m[3], m[4], m[4] / m[2]));
      }
      System.out.println("(floor: the least a library with this API does, even in pure Java; see FloorRenderer)");
      if (nativeBytes > 0) {
        System.out.println(String.format(Locale.ROOT,
            "native memory per leaf after the first run (C heap, 1000 leaves per tree): %.1f bytes", nativeBytes));
      }
    }
    System.out.println("(sink " + Math.floorMod(sinkAccumulator, 1000L) + ")");
  }
}
