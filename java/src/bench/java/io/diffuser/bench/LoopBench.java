package io.diffuser.bench;

import io.diffuser.Effect;
import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.Source;
import io.diffuser.loop.Feedback;
import io.diffuser.loop.Gear;
import io.diffuser.loop.Loop;
import io.diffuser.loop.Next;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;
import java.util.function.IntConsumer;
import java.util.function.Supplier;

/**
 * The loop benchmark (Java): events per second through a {@link Loop} against a
 * hand-written queue + reducer + render, in one JVM; medians and minima of interleaved
 * rounds, after warm-up rounds.
 *
 * <ul>
 *   <li>{@code render-100}: a trivial update (a new model with one of 100 leaves bumped)
 *       and a render through a {@link Diffuser} of 100 leaves ({@code loop.render}),
 *       against a hand-written render comparing 100 cached leaves, and against the
 *       hand-written queue + reducer running the same Diffuser ({@code hand+diffuser}:
 *       the loop's own share is the difference between that and the loop);
 *   <li>{@code no-render}: a trivial update (a counter) and nothing observing the loop;
 *   <li>{@code source}: no-render's loop fed through a source: each event is sent to an
 *       {@link Output} whose fuser the loop connected
 *       ({@code loop.connect(Fuser.from(output))}), against the same kind of {@code Output}
 *       connected to the hand-written loop ({@code Fuser.from(output).connect}): the
 *       difference is what a loop's source connection adds to a plain connection;
 *   <li>{@code gear}: no-render's loop fed through a gear: each event is sent into a
 *       {@link Gear} ({@code gear.send}) the loop is attached to by one feedback turning
 *       each gear event into the loop's event ({@code Feedback.attached(gear, g -> g)}),
 *       against a {@link HandGear}, a list of subscribers called in turn, that the
 *       hand-written loop subscribed to. The Java binding has no plain subscription to a
 *       gear (a gear reaches only loops, through attached feedbacks), so unlike Swift's
 *       baseline this one is not the library's gear: the difference is the gear's own
 *       sending (a JNI call down, one up for the propagate) and the attachment;
 *   <li>{@code effects}: no-render's loop whose update returns, with each new model, one
 *       effect (the event itself), handled inside the step by one {@code handler} without
 *       an executor that passes it to the sink, against the hand-written counter loop
 *       handing the same effect to the sink after each reducer call.
 * </ul>
 *
 * <p>Both sides call the same reducer. Every event reaches an idle loop from the
 * benchmark's thread, and the loop handles it before {@code dispatch} (or {@code send},
 * {@code gear.send}) returns.
 *
 * <pre>
 *   gradle bench -Pargs='--loop [--rounds N] [--warmup N] [--tsv]'
 * </pre>
 *
 * <p>One program although over 400 lines, as {@link Bench}: the library's runners and the
 * hand-written ones are read side by side, checked to do the same work
 * ({@code checkSameWork}) and timed by the same loop.
 */
final class LoopBench {
  private LoopBench() {}

  static final int LEAVES = 100;

  /** An immutable model of 100 int leaves. */
  static final class Leaves {
    final int[] values;

    Leaves(int[] values) {
      this.values = values;
    }

    @Override public boolean equals(Object o) {
      return o instanceof Leaves && Arrays.equals(values, ((Leaves) o).values);
    }

    @Override public int hashCode() {
      return Arrays.hashCode(values);
    }
  }

  /** The trivial update of render-100: a new model with leaf {@code event % 100} bumped. */
  static Leaves bump(Leaves model, int event) {
    int[] next = model.values.clone();
    next[event % LEAVES] += 1;
    return new Leaves(next);
  }

  /** The trivial update of no-render: a counter. */
  static long add(long model, int event) {
    return model + event;
  }

  static long sinkAccumulator;

  static void sink(int value) {
    sinkAccumulator = sinkAccumulator * 31 + value;
  }

  /** A Diffuser of 100 leaves, each {@code map(leaf i, into(sink))}. */
  static Diffuser<Leaves> screen() {
    List<Diffuser<Leaves>> leaves = new ArrayList<>();
    for (int i = 0; i < LEAVES; i++) {
      final int leaf = i;
      leaves.add(Diffuser.map((Leaves m) -> m.values[leaf], Diffuser.into(LoopBench::sink)));
    }
    return new Diffuser<>(leaves);
  }

  /** Something events are dispatched into, and what it leaves behind. */
  interface Runner extends IntConsumer, AutoCloseable {
    /** A digest of the model: runners that did the same work agree on it. */
    long digest();

    @Override void close();
  }

  static long digest(Leaves model) {
    long sum = 0;
    for (int i = 0; i < LEAVES; i++) sum += (long) model.values[i] * (i + 1);
    return sum;
  }

  // ---------------------------------------------------------------------------------
  // The library

  static Runner libraryRender() {
    Loop<Leaves, Integer, Void> loop = Loop.<Leaves, Integer>reducer(new Leaves(new int[LEAVES]), LoopBench::bump).build();
    Disposable rendering = loop.render(screen());
    return new Runner() {
      @Override public void accept(int event) { loop.dispatch(event); }
      @Override public long digest() { return LoopBench.digest(loop.model()); }
      @Override public void close() { rendering.dispose(); loop.close(); }
    };
  }

  static Runner libraryCounter() {
    Loop<Long, Integer, Void> loop = Loop.<Long, Integer>reducer(0L, LoopBench::add).build();
    return new Runner() {
      @Override public void accept(int event) { loop.dispatch(event); }
      @Override public long digest() { return loop.model(); }
      @Override public void close() { loop.close(); }
    };
  }

  /** The update of effects: no-render's counter, and the event itself as the one effect. */
  static Next<Long, Integer> addWithEffect(Long model, Integer event) {
    return Next.next(add(model, event), event);
  }

  /** A counter loop whose effects one handler without an executor passes to the sink. */
  static Runner libraryEffects() {
    Loop<Long, Integer, Integer> loop =
        Loop.builder(0L, LoopBench::addWithEffect).handler((effect, job) -> sink(effect)).build();
    return new Runner() {
      @Override public void accept(int event) { loop.dispatch(event); }
      @Override public long digest() { return loop.model(); }
      @Override public void close() { loop.close(); }
    };
  }

  /** A source that keeps the effect of its connection and sends each event to it. */
  static final class Output implements Source<Integer> {
    private Effect<Integer> effect;

    @Override public Disposable connect(Effect<Integer> effect) {
      this.effect = effect;
      return () -> this.effect = null;
    }

    void send(int event) {
      effect.run(event);
    }
  }

  static Runner librarySource() {
    Loop<Long, Integer, Void> loop = Loop.<Long, Integer>reducer(0L, LoopBench::add).build();
    Output output = new Output();
    Disposable feeding = loop.connect(Fuser.from(output));
    return new Runner() {
      @Override public void accept(int event) { output.send(event); }
      @Override public long digest() { return loop.model(); }
      @Override public void close() { feeding.dispose(); loop.close(); }
    };
  }

  /** The hand-written counter loop fed by the same kind of Output. */
  static Runner handSource() {
    HandCounterLoop loop = new HandCounterLoop();
    Output output = new Output();
    Disposable feeding = Fuser.from(output).connect(event -> loop.accept(event));
    return new Runner() {
      @Override public void accept(int event) { output.send(event); }
      @Override public long digest() { return loop.digest(); }
      @Override public void close() { feeding.dispose(); }
    };
  }

  /** A counter loop attached to a gear: one feedback turns each gear event into its event. */
  static Runner libraryGear() {
    Gear<Integer> gear = new Gear<>();
    Loop<Long, Integer, Void> loop = Loop.<Long, Integer>reducer(0L, LoopBench::add)
        .feedback(Feedback.<Long, Integer, Integer>attached(gear, g -> g))
        .build();
    return new Runner() {
      @Override public void accept(int event) { gear.send(event); }
      @Override public long digest() { return loop.model(); }
      @Override public void close() { loop.close(); }
    };
  }

  /** The hand-written counter loop subscribed to a {@link HandGear}. */
  static Runner handGear() {
    HandCounterLoop loop = new HandCounterLoop();
    HandGear<Integer> gear = new HandGear<>();
    gear.subscribe(g -> loop.accept(g));
    return new Runner() {
      @Override public void accept(int event) { gear.send(event); }
      @Override public long digest() { return loop.digest(); }
      @Override public void close() {}
    };
  }

  // ---------------------------------------------------------------------------------
  // By hand: a queue drained by the dispatching thread (an event sent during a step
  // waits its turn, as in the loop), the reducer, a render. Single-threaded: no lock.

  /** A ring buffer of int events. */
  static final class EventQueue {
    private int[] slots = new int[16];
    private int head;
    private int count;

    boolean isEmpty() { return count == 0; }

    void push(int event) {
      if (count == slots.length) {
        int[] grown = new int[slots.length * 2];
        for (int k = 0; k < count; k++) grown[k] = slots[(head + k) % slots.length];
        slots = grown;
        head = 0;
      }
      slots[(head + count) % slots.length] = event;
      count++;
    }

    int pop() {
      int event = slots[head];
      head = (head + 1) % slots.length;
      count--;
      return event;
    }
  }

  /**
   * What a Java program writes for a bus without the library: subscribers called in turn
   * on the sending thread.
   */
  static final class HandGear<G> {
    private final List<Consumer<? super G>> subscribers = new ArrayList<>();

    void subscribe(Consumer<? super G> subscriber) {
      subscribers.add(subscriber);
    }

    void send(G event) {
      for (int i = 0; i < subscribers.size(); i++) subscribers.get(i).accept(event);
    }
  }

  /** Queue + reducer + a render: by hand, or (with a screen) a Diffuser's run. */
  static final class HandRenderLoop implements Runner {
    private final EventQueue queue = new EventQueue();
    private final Diffuser<Leaves> screen;
    private final int[] cache = new int[LEAVES];
    private boolean rendered;
    private boolean draining;
    private Leaves model = new Leaves(new int[LEAVES]);

    HandRenderLoop(Diffuser<Leaves> screen) {
      this.screen = screen;
      render(model);
    }

    @Override public void accept(int event) {
      queue.push(event);
      if (draining) return;
      draining = true;
      while (!queue.isEmpty()) {
        model = bump(model, queue.pop());
        render(model);
      }
      draining = false;
    }

    private void render(Leaves m) {
      if (screen != null) {
        screen.run(m);
        return;
      }
      for (int i = 0; i < LEAVES; i++) {
        if (!rendered || cache[i] != m.values[i]) {
          cache[i] = m.values[i];
          sink(m.values[i]);
        }
      }
      rendered = true;
    }

    @Override public long digest() { return LoopBench.digest(model); }

    @Override public void close() {}
  }

  static final class HandCounterLoop implements Runner {
    private final EventQueue queue = new EventQueue();
    private boolean draining;
    private long model;

    @Override public void accept(int event) {
      queue.push(event);
      if (draining) return;
      draining = true;
      while (!queue.isEmpty()) model = add(model, queue.pop());
      draining = false;
    }

    @Override public long digest() { return model; }

    @Override public void close() {}
  }

  /** The counter loop handing each event, as its effect, to the sink after the reducer. */
  static final class HandEffectsLoop implements Runner {
    private final EventQueue queue = new EventQueue();
    private boolean draining;
    private long model;

    @Override public void accept(int event) {
      queue.push(event);
      if (draining) return;
      draining = true;
      while (!queue.isEmpty()) {
        int next = queue.pop();
        model = add(model, next);
        sink(next);
      }
      draining = false;
    }

    @Override public long digest() { return model; }

    @Override public void close() {}
  }

  // ---------------------------------------------------------------------------------
  // Measuring

  /** ns per event of {@code events} events into a new runner, after a warm-up. */
  static double measure(Supplier<Runner> make, int events) {
    try (Runner runner = make.get()) {
      for (int e = 0; e < 1000; e++) runner.accept(e);
      long start = System.nanoTime();
      for (int e = 0; e < events; e++) runner.accept(e);
      return (double) (System.nanoTime() - start) / events;
    }
  }

  /** The runners of a scenario must reach the same model through the same effects. */
  static void checkSameWork(List<Supplier<Runner>> runners, String scenario) {
    long expectedModel = 0, expectedSink = 0;
    for (int r = 0; r < runners.size(); r++) {
      long saved = sinkAccumulator;
      sinkAccumulator = 0;
      long model;
      try (Runner runner = runners.get(r).get()) {
        for (int e = 0; e < 1000; e++) runner.accept(e * 7);
        model = runner.digest();
      }
      long sink = sinkAccumulator;
      sinkAccumulator = saved;
      if (r == 0) {
        expectedModel = model;
        expectedSink = sink;
      } else if (model != expectedModel || sink != expectedSink) {
        System.err.println(scenario + ": runner " + r + " did different work than the loop");
        System.exit(1);
      }
    }
  }

  static double median(List<Double> xs) {
    double[] s = xs.stream().mapToDouble(Double::doubleValue).sorted().toArray();
    return s.length % 2 == 1 ? s[s.length / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
  }

  static double min(List<Double> xs) {
    return xs.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN);
  }

  static void main(String[] args) {
    int rounds = 15;
    int warmup = 5;
    boolean tsv = false;
    for (int k = 0; k < args.length; k++) {
      switch (args[k]) {
        case "--rounds": rounds = Integer.parseInt(args[++k]); break;
        case "--warmup": warmup = Integer.parseInt(args[++k]); break;
        case "--tsv": tsv = true; break;
        case "--loop": case "": break;
        default:
          System.err.println("usage: Bench --loop [--rounds N] [--warmup N] [--tsv]");
          System.exit(2);
      }
    }
    List<Supplier<Runner>> render = Arrays.asList(
        LoopBench::libraryRender, () -> new HandRenderLoop(null), () -> new HandRenderLoop(screen()));
    List<Supplier<Runner>> counter = Arrays.asList(LoopBench::libraryCounter, HandCounterLoop::new);
    List<Supplier<Runner>> source = Arrays.asList(LoopBench::librarySource, LoopBench::handSource);
    List<Supplier<Runner>> gear = Arrays.asList(LoopBench::libraryGear, LoopBench::handGear);
    List<Supplier<Runner>> effects = Arrays.asList(LoopBench::libraryEffects, HandEffectsLoop::new);
    checkSameWork(render, "render-100");
    checkSameWork(counter, "no-render");
    checkSameWork(source, "source");
    checkSameWork(gear, "gear");
    checkSameWork(effects, "effects");

    // [scenario][runner] -> ns per event of each measured round
    List<List<List<Double>>> ns = new ArrayList<>();
    List<List<Supplier<Runner>>> scenarios = Arrays.asList(render, counter, source, gear, effects);
    int[] events = {20_000, 200_000, 100_000, 100_000, 200_000};
    for (List<Supplier<Runner>> runners : scenarios) {
      List<List<Double>> perRunner = new ArrayList<>();
      for (int r = 0; r < runners.size(); r++) perRunner.add(new ArrayList<>());
      ns.add(perRunner);
    }
    for (int round = 0; round < warmup + rounds; round++) {
      for (int s = 0; s < scenarios.size(); s++) {
        for (int r = 0; r < scenarios.get(s).size(); r++) {
          double x = measure(scenarios.get(s).get(r), events[s]);
          if (round >= warmup) ns.get(s).get(r).add(x);
        }
      }
    }

    String[] names = {"render-100", "no-render", "source", "gear", "effects"};
    if (tsv) {
      // language, scenario, then median and min ns/event of: the library, hand,
      // hand+diffuser ("-" where it does not apply)
      for (int s = 0; s < names.length; s++) {
        List<List<Double>> x = ns.get(s);
        String mixed = x.size() > 2 ? median(x.get(2)) + "\t" + min(x.get(2)) : "-\t-";
        System.out.println("java\t" + names[s] + "\t" + median(x.get(0)) + "\t" + min(x.get(0)) + "\t"
            + median(x.get(1)) + "\t" + min(x.get(1)) + "\t" + mixed);
      }
    } else {
      System.out.println("Loop Java benchmark: events/s (median of " + rounds
          + " interleaved rounds; best in the second column)");
      System.out.println("scenario       library ev/s        best   hand ev/s        best  x hand (time)   hand+diffuser ev/s");
      for (int s = 0; s < names.length; s++) {
        List<List<Double>> x = ns.get(s);
        String mixed = x.size() > 2 ? String.format(Locale.ROOT, "%21.0f", 1e9 / median(x.get(2))) : "";
        System.out.println(String.format(Locale.ROOT, "%-12s%15.0f%12.0f%12.0f%12.0f%8.2f", names[s],
            1e9 / median(x.get(0)), 1e9 / min(x.get(0)), 1e9 / median(x.get(1)), 1e9 / min(x.get(1)),
            median(x.get(0)) / median(x.get(1))) + mixed);
      }
    }
    System.out.println("(sink " + Math.floorMod(sinkAccumulator, 1000L) + ")");
  }
}
