package io.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.Source;
import io.diffuser.list.ListSink;
import io.diffuser.loop.Feedback;
import io.diffuser.loop.Loop;
import io.diffuser.loop.Next;
import java.lang.management.ManagementFactory;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.management.ObjectName;
import org.junit.Test;

/**
 * The Java objects decide what can be collected, as in a library written in Java: a
 * diffuser or a fuser whose user objects capture the object that holds it is collected
 * with that object, while whatever can still run a node (a diffuser being run, a run
 * queued from an effect, a connection not yet disposed) keeps what the node calls.
 *
 * <p>One file because the tests are one experiment (let go of the Java objects, collect,
 * look at what survived or still runs) over each way a node can be reached, sharing the
 * helpers that collect and the owners they drop: split, each file would repeat them.
 */
public class ReachabilityTest {
  private static final int OWNERS = 50;

  /** Collects until every reference is cleared, or gives up after many tries. */
  private static int uncollected(List<? extends WeakReference<?>> refs) throws InterruptedException {
    int left = refs.size();
    for (int i = 0; i < 50 && left > 0; i++) {
      System.gc();
      Thread.sleep(5);
      left = 0;
      for (WeakReference<?> ref : refs) {
        if (ref.get() != null) left++;
      }
    }
    return left;
  }

  private static void collect() throws InterruptedException {
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(5);
    }
  }

  /** A screen whose diffuser's effects and transforms call back into it. */
  static final class Screen {
    final byte[] bitmap = new byte[1 << 16];
    int renders;
    final Diffuser<String> diffuser = Diffuser.intoAll(
        Diffuser.into(this::render),
        Diffuser.map(this::measure, Diffuser.intoWhen((Integer a, Integer b) -> a < b, this::grow)),
        Diffuser.intoOnce(title -> bitmap[1]++));

    void render(String title) {
      renders++;
      bitmap[0]++;
    }

    Integer measure(String title) {
      return title.length() + bitmap.length * 0;
    }

    void grow(Integer length) {
      bitmap[2]++;
    }
  }

  @Test
  public void aDiffuserWhoseEffectsCaptureItsOwnerIsCollectedWithIt() throws Exception {
    List<WeakReference<Screen>> screens = new ArrayList<>();
    for (int i = 0; i < OWNERS; i++) {
      Screen screen = new Screen();
      screen.diffuser.run("title " + i);
      screen.diffuser.run("title " + i + "!");
      assertEquals(2, screen.renders);
      screens.add(new WeakReference<>(screen));
    }
    assertEquals(0, uncollected(screens));
  }

  /** A list view whose intoList sink and keys call back into it. */
  static final class ListView {
    final List<String> shown = new ArrayList<>();
    final Diffuser<List<String>> diffuser = Diffuser.intoList(this::key, (ListSink<String>) this::apply);

    Object key(String item) {
      return item + shown.size() * 0;
    }

    void apply(io.diffuser.list.ListDiff diff, List<String> items) {
      shown.clear();
      shown.addAll(items);
    }
  }

  @Test
  public void anIntoListWhoseSinkCapturesItsOwnerIsCollectedWithIt() throws Exception {
    List<WeakReference<ListView>> views = new ArrayList<>();
    for (int i = 0; i < OWNERS; i++) {
      ListView view = new ListView();
      view.diffuser.run(Arrays.asList("a", "b"));
      view.diffuser.run(Arrays.asList("b", "a", "c"));
      assertEquals(Arrays.asList("b", "a", "c"), view.shown);
      views.add(new WeakReference<>(view));
    }
    assertEquals(0, uncollected(views));
  }

  /** A controller whose fuser's sources and transforms call back into it. */
  static final class Controller {
    final byte[] state = new byte[1 << 16];
    final Fuser<Integer> events = Fuser.fromAll(
        Fuser.from(this::clicks),
        Fuser.extract((String s) -> s.length() + state[0], Fuser.from(this::texts)));

    Disposable clicks(Effect<Integer> effect) {
      effect.run(1 + state[0]);
      return () -> state[1]++;
    }

    Disposable texts(Effect<String> effect) {
      effect.run("typed");
      return () -> state[2]++;
    }
  }

  @Test
  public void aFuserWhoseSourcesCaptureItsOwnerIsCollectedWithIt() throws Exception {
    List<WeakReference<Controller>> controllers = new ArrayList<>();
    for (int i = 0; i < OWNERS; i++) {
      Controller controller = new Controller();
      controllers.add(new WeakReference<>(controller));
    }
    assertEquals("never connected", 0, uncollected(controllers));

    controllers.clear();
    for (int i = 0; i < OWNERS; i++) {
      Controller controller = new Controller();
      List<Integer> got = new ArrayList<>();
      controller.events.connect(got::add).dispose();
      assertEquals(Arrays.asList(1, 5), got);
      assertEquals(1, controller.state[1]);
      controllers.add(new WeakReference<>(controller));
    }
    assertEquals("connected, then disposed", 0, uncollected(controllers));
  }

  /** A source the test drives, holding the emitters it was connected with. */
  static final class Button implements Source<String> {
    final List<Effect<String>> listeners = new CopyOnWriteArrayList<>();

    @Override
    public Disposable connect(Effect<String> effect) {
      listeners.add(effect);
      return () -> listeners.remove(effect);
    }

    void press(String what) {
      for (Effect<String> listener : listeners) listener.run(what);
    }
  }

  /** The connection and fuser are dropped at once; only the button remains. */
  private static WeakReference<Fuser<Integer>> connectAndDrop(Button button, List<Integer> got) {
    int offset = got.size();
    Fuser<Integer> fuser = Fuser.extract((String s) -> s.length() + offset, Fuser.from(button));
    fuser.connect(got::add);
    return new WeakReference<>(fuser);
  }

  @Test
  public void aDroppedConnectionStaysConnectedWithEverythingItCalls() throws Exception {
    Button button = new Button();
    List<Integer> got = new ArrayList<>();
    WeakReference<Fuser<Integer>> fuser = connectAndDrop(button, got);
    collect();
    assertNotNull("a connection holds its fuser until disposed", fuser.get());
    button.press("four");
    assertEquals(Arrays.asList(4), got);
  }

  /** Asks for a run of a diffuser sharing `shared` (so queued) and drops it at once. */
  private static void askAndDrop(Diffuser<Integer> shared, List<String> log) {
    Diffuser<Integer> later = Diffuser.map((Integer x) -> {
      log.add("transform " + x);
      return x * 10;
    }, shared);
    later.run(5);
    log.add("asked");
  }

  @Test
  public void aRunQueuedFromAnEffectKeepsItsDiffuserUntilItIsDone() throws Exception {
    List<String> log = new ArrayList<>();
    Diffuser<Integer> shared = Diffuser.into(x -> log.add("shared " + x));
    Diffuser<Integer> root = Diffuser.intoAll(shared, Diffuser.into(x -> {
      if (x == 1) {
        askAndDrop(shared, log);
        try {
          collect();
        } catch (InterruptedException e) {
          throw new AssertionError(e);
        }
      }
    }));
    root.run(1);
    assertEquals(Arrays.asList("shared 1", "asked", "transform 5", "shared 50"), log);
  }

  @Test
  public void aLoopHoldsTheFusersItConnectsUntilTheyAreDisposed() throws Exception {
    Button button = new Button();
    try (Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum).build()) {
      WeakReference<Fuser<Integer>> fuser = connectToLoop(loop, button);
      collect();
      assertNotNull(fuser.get());
      button.press("four");
      assertEquals(Integer.valueOf(4), loop.model());
      Disposable connection = connections.remove(0);
      connection.dispose();
      connection = null;
      assertTrue(button.listeners.isEmpty());
      assertEquals(0, uncollected(Arrays.asList(fuser)));
    }
  }

  private final List<Disposable> connections = new ArrayList<>();

  private WeakReference<Fuser<Integer>> connectToLoop(Loop<Integer, Integer, Void> loop, Button button) {
    int offset = connections.size();
    Fuser<Integer> fuser = Fuser.extract((String s) -> s.length() + offset, Fuser.from(button));
    connections.add(loop.connect(fuser));
    return new WeakReference<>(fuser);
  }

  /** Connects a fuser whose transform captures `offset`, keeping only the connection. */
  private static WeakReference<Fuser<Integer>> connectToLoop(Loop<Integer, Integer, ?> loop, Button button,
      Disposable[] connection, int offset) {
    Fuser<Integer> fuser = Fuser.extract((String s) -> s.length() + offset, Fuser.from(button));
    connection[0] = loop.connect(fuser);
    return new WeakReference<>(fuser);
  }

  /**
   * Without an executor the update runs inside the delivery of the event: disposing the
   * connection (or the loop) there disconnects the sources only once the delivery ends,
   * and an event they send meanwhile is dropped, not run through a collected transform.
   */
  @Test
  public void aLoopConnectionDisposedInsideItsDeliveryKeepsItsFuserUntilTheSourcesAreDisconnected()
      throws Exception {
    for (boolean wholeLoop : new boolean[] {false, true}) {
      Button button = new Button();
      Disposable[] connection = new Disposable[1];
      List<Throwable> thrown = new ArrayList<>();
      List<Integer> events = new ArrayList<>();
      AtomicReference<Loop<Integer, Integer, Void>> self = new AtomicReference<>();
      Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, (model, event) -> {
        events.add(event);
        if (events.size() == 1) {
          if (wholeLoop) self.get().dispose();
          else connection[0].dispose();
          connection[0] = null;
          try {
            collect();
            button.press("again");
          } catch (Throwable t) {
            thrown.add(t);
          }
        }
        return model + event;
      }).build();
      self.set(loop);
      WeakReference<Fuser<Integer>> fuser = connectToLoop(loop, button, connection, 10);
      button.press("four");
      assertEquals(new ArrayList<Throwable>(), thrown);
      assertEquals(Arrays.asList(14), events);
      assertTrue("disconnected once the delivery ended", button.listeners.isEmpty());
      assertEquals(0, uncollected(Arrays.asList(fuser)));
      loop.dispose();
    }
  }

  /**
   * The same while a handler on another thread disposes the loop too: its dispose returns
   * at once and clears the loop's connections before the delivering thread's dispose
   * returns, which must still keep the fuser until the delivery ends.
   */
  @Test
  public void aLoopDisposedInsideADeliveryAndOnAnotherThreadKeepsItsFuserUntilTheSourcesAreDisconnected()
      throws Exception {
    ExecutorService handlers = Executors.newSingleThreadExecutor();
    try {
      Button button = new Button();
      Disposable[] connection = new Disposable[1];
      List<Throwable> thrown = new ArrayList<>();
      List<Integer> events = new ArrayList<>();
      CountDownLatch handling = new CountDownLatch(1);
      AtomicReference<Loop<Integer, Integer, String>> self = new AtomicReference<>();
      Loop<Integer, Integer, String> loop = Loop.<Integer, Integer, String>builder(0, (model, event) -> {
        events.add(event);
        if (events.size() == 1) {
          try {
            handling.await();
            self.get().dispose(); // waits for the handler, which disposes the loop as well
            connection[0] = null;
            collect();
            button.press("again");
          } catch (Throwable t) {
            thrown.add(t);
          }
        }
        return Next.<Integer, String>next(model + event);
      }).startEffects("watch").handler(handlers, (effect, job) -> {
        handling.countDown();
        while (self.get().isRunning()) Thread.sleep(1);
        self.get().dispose();
      }).manualStart().build();
      self.set(loop);
      WeakReference<Fuser<Integer>> fuser = connectToLoop(loop, button, connection, 20);
      loop.start();
      button.press("four");
      assertEquals(new ArrayList<Throwable>(), thrown);
      assertEquals(Arrays.asList(24), events);
      assertTrue("disconnected once the delivery ended", button.listeners.isEmpty());
      assertEquals(0, uncollected(Arrays.asList(fuser)));
    } finally {
      handlers.shutdownNow();
    }
  }

  /** A source that sends one last event while it is being disconnected. */
  static final class FlushingSource implements Source<String> {
    final List<Throwable> thrown = new ArrayList<>();

    @Override
    public Disposable connect(Effect<String> effect) {
      return () -> {
        try {
          collect();
          effect.run("last");
        } catch (Throwable t) {
          thrown.add(t);
        }
      };
    }
  }

  /**
   * Only the connection is kept: it is all that holds the fuser. (Each transform captures
   * something: a lambda that captures nothing is a constant, never collected.)
   */
  private static Disposable connectKeepingOnlyTheConnection(Source<String> source, List<Integer> got, int offset) {
    return Fuser.extract((String s) -> s.length() + offset, Fuser.from(source)).connect(got::add);
  }

  @Test
  public void anEventSentWhileItsConnectionDisconnectsIsDropped() {
    FlushingSource source = new FlushingSource();
    List<Integer> got = new ArrayList<>();
    Disposable connection = connectKeepingOnlyTheConnection(source, got, 1);
    connection.dispose();
    assertEquals(new ArrayList<Integer>(), got);
    assertEquals(new ArrayList<Throwable>(), source.thrown);
  }

  /** A source that sends on a thread of its own until it is disconnected. */
  static final class Ticker implements Source<String> {
    final List<Throwable> thrown = new CopyOnWriteArrayList<>();
    final AtomicInteger sent = new AtomicInteger();
    volatile boolean disconnected;

    @Override
    public Disposable connect(Effect<String> effect) {
      Thread thread = new Thread(() -> {
        while (!disconnected) {
          try {
            effect.run("tick");
            sent.incrementAndGet();
          } catch (Throwable t) {
            thrown.add(t);
          }
        }
      }, "ticker");
      thread.setDaemon(true);
      thread.start();
      return () -> disconnected = true;
    }
  }

  private static void connectAndDropTheLoop(Ticker ticker, ExecutorService executor, int offset) {
    Loop<Integer, Integer, Void> loop =
        Loop.<Integer, Integer>reducer(0, Integer::sum).executor(executor).build();
    loop.connect(Fuser.extract((String s) -> s.length() + offset, Fuser.from(ticker)));
  }

  @Test
  public void aLoopThatNothingReachesIsDisposedWithoutFailingItsSources() throws Exception {
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try {
      for (int round = 0; round < 5; round++) {
        Ticker ticker = new Ticker();
        connectAndDropTheLoop(ticker, executor, round);
        while (ticker.sent.get() < 100) Thread.sleep(1);
        for (int i = 0; i < 200 && !ticker.disconnected; i++) {
          System.gc();
          Thread.sleep(10);
        }
        assertTrue("collected and disposed", ticker.disconnected);
        assertEquals(new ArrayList<Throwable>(), ticker.thrown);
      }
    } finally {
      executor.shutdown();
    }
  }

  private static void connectAFailingSourceAndDropTheLoop(AtomicInteger disposes, RuntimeException failure) {
    Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum).build();
    loop.connect(Fuser.from((Source<Integer>) effect -> () -> {
      disposes.incrementAndGet();
      throw failure;
    }));
    loop.dispatch(1);
  }

  @Test
  public void aLoopThatNothingReachesReportsWhatItsSourceThrewAsItIsDisposed() throws Exception {
    // No call of the user's disposes the loop: the Cleaner's release does, and what the
    // source's dispose() throws goes to the uncaught exception handler, not nowhere.
    RuntimeException failure = new IllegalStateException("the source's dispose failed");
    List<Throwable> uncaught = new CopyOnWriteArrayList<>();
    Thread.UncaughtExceptionHandler saved = Thread.getDefaultUncaughtExceptionHandler();
    Thread.setDefaultUncaughtExceptionHandler((thread, thrown) -> uncaught.add(thrown));
    try {
      AtomicInteger disposes = new AtomicInteger();
      connectAFailingSourceAndDropTheLoop(disposes, failure);
      for (int i = 0; i < 200 && uncaught.isEmpty(); i++) {
        System.gc();
        Thread.sleep(10);
      }
      assertEquals("collected and disposed", 1, disposes.get());
      assertEquals(List.of(failure), uncaught);
    } finally {
      Thread.setDefaultUncaughtExceptionHandler(saved);
    }
  }

  /** The parts of a loop that can call back into it, one at a time. */
  private enum Part { UPDATE, HANDLER, INSPECTOR, KEY, RESTART, EXECUTOR, HANDLER_EXECUTOR, FEEDBACK, OBSERVER }

  /**
   * A loop one of whose parts reaches the loop (a screen's loop whose callbacks go
   * through the screen), used, disposed and let go of.
   */
  private static WeakReference<Object> disposeALoopItsPartReaches(Part part) {
    AtomicReference<Loop<Integer, Integer, Integer>> self = new AtomicReference<>();
    Loop.Builder<Integer, Integer, Integer> builder = Loop.<Integer, Integer, Integer>builder(0,
        part == Part.UPDATE
            ? (model, event) -> Next.next(model + event + (self.get() == null ? 0 : 0), event)
            : (model, event) -> Next.next(model + event, event));
    switch (part) {
      case HANDLER:
        builder.handler((effect, job) -> assertNotNull(self.get()));
        break;
      case INSPECTOR:
        builder.inspector(trace -> assertNotNull(self.get()));
        break;
      case KEY:
        builder.coalescing(event -> self.get() == null ? 0 : 1);
        break;
      case RESTART:
        builder.restart(model -> {
          assertNotNull(self.get());
          return Next.noChange();
        });
        break;
      case EXECUTOR:
        builder.executor(work -> {
          assertNotNull(self.get());
          work.run();
        });
        break;
      case HANDLER_EXECUTOR:
        builder.handler(work -> {
          assertNotNull(self.get());
          work.run();
        }, (effect, job) -> { });
        break;
      case FEEDBACK:
        builder.feedback(Feedback.react(model -> self.get() == null ? List.of() : List.<Integer>of()));
        break;
      default:
        break;
    }
    Loop<Integer, Integer, Integer> loop = builder.build();
    self.set(loop);
    if (part == Part.OBSERVER) {
      loop.observe(model -> assertNotNull(self.get()));
    }
    loop.dispatch(1);
    if (part == Part.RESTART) {
      loop.stop();
      loop.start(); // calls the restart
    }
    loop.dispose();
    return new WeakReference<>(loop);
  }

  @Test
  public void aDisposedLoopWhosePartsReachItIsCollected() throws Exception {
    List<String> kept = new ArrayList<>();
    for (Part part : Part.values()) {
      List<WeakReference<Object>> loops = new ArrayList<>();
      for (int i = 0; i < 10; i++) loops.add(disposeALoopItsPartReaches(part));
      if (uncollected(loops) > 0) kept.add(part.name());
    }
    assertEquals("parts that keep a disposed loop", new ArrayList<String>(), kept);
  }

  private static WeakReference<Object> connectWithAFailingDispose(Loop<Integer, Integer, Void> loop,
      Disposable[] connection) {
    Object captured = new byte[1 << 16];
    Fuser<Integer> fuser = Fuser.extract((String s) -> s.length() + captured.hashCode() * 0,
        Fuser.from(effect -> () -> {
          throw new IllegalStateException("the source's dispose failed");
        }));
    connection[0] = loop.connect(fuser);
    return new WeakReference<>(captured);
  }

  @Test
  public void aLoopLetsGoOfAFuserWhoseDisposeFailed() throws Exception {
    try (Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum).build()) {
      Disposable[] connection = new Disposable[1];
      WeakReference<Object> captured = connectWithAFailingDispose(loop, connection);
      try {
        connection[0].dispose();
      } catch (IllegalStateException expected) {
        assertEquals("the source's dispose failed", expected.getMessage());
      }
      connection[0] = null;
      assertEquals(0, uncollected(Arrays.asList(captured)));
    }
  }

  /** A large object that an exception reaches. */
  static final class Payload {
    final byte[] data = new byte[1 << 20];
  }

  static final class Carrying extends RuntimeException {
    private static final long serialVersionUID = 1L;
    final Payload payload;

    Carrying(Payload payload) {
      super("carrying a payload");
      this.payload = payload;
    }
  }

  /** A loop without an inspector whose update, handler and observer throw, used and disposed. */
  private static List<WeakReference<Payload>> failWithoutInspector() {
    List<WeakReference<Payload>> payloads = new ArrayList<>();
    List<RuntimeException> failures = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      Payload payload = new Payload();
      payloads.add(new WeakReference<>(payload));
      failures.add(new Carrying(payload));
    }
    try (Loop<Integer, Integer, Integer> loop = Loop.<Integer, Integer, Integer>builder(0, (m, e) -> {
          if (e == 1) throw failures.get(0);
          return Next.next(m + e, e);
        })
        .handler((effect, job) -> {
          throw failures.get(1);
        }).build()) {
      loop.observe(model -> {
        if (model == 2) throw failures.get(2);
      });
      loop.dispatch(1);
      loop.dispatch(2);
    }
    return payloads;
  }

  @Test
  public void theFailuresOfALoopWithoutInspectorAreNotKept() throws Exception {
    // Nothing takes them (an inspector would): the thread that ran the callbacks does not
    // keep them either, once the loop is gone.
    assertEquals(0, uncollected(failWithoutInspector()));
  }

  /** The JVM's count of JNI global references (HotSpot's thread dump reports it). */
  private static long globalReferences() throws Exception {
    String dump = (String) ManagementFactory.getPlatformMBeanServer().invoke(
        new ObjectName("com.sun.management:type=DiagnosticCommand"), "threadPrint",
        new Object[] {new String[0]}, new String[] {String[].class.getName()});
    Matcher count = Pattern.compile("JNI global refs: (\\d+)").matcher(dump);
    assertTrue("the thread dump gives the count", count.find());
    return Long.parseLong(count.group(1));
  }

  @Test
  public void runsAskedForFromEffectsPinEachDiffuserOnce() throws Exception {
    int[] sink = new int[1];
    Diffuser<Integer> a = Diffuser.into(x -> sink[0] += x);
    Diffuser<Integer> b = Diffuser.into(x -> sink[0] -= x);
    long[] counts = new long[2];
    Diffuser<Integer> outer = Diffuser.into(n -> {
      try {
        counts[0] = globalReferences();
        for (int i = 0; i < n; i++) {
          a.run(i);
          b.run(i);
        }
        counts[1] = globalReferences();
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    });
    outer.run(20_000);
    assertTrue("global references grew by " + (counts[1] - counts[0]), counts[1] - counts[0] < 100);
    long after = globalReferences();
    assertTrue("the pins are dropped after the run", after <= counts[0] + 2);
  }
}
