package io.diffuser;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertTrue;

import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import io.diffuser.fuser.Source;
import io.diffuser.list.ListSink;
import io.diffuser.loop.Loop;
import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.Test;

/**
 * The Java objects decide what can be collected, as in a library written in Java: a
 * diffuser or a fuser whose user objects capture the object that holds it is collected
 * with that object, while whatever can still run a node (a diffuser being run, a run
 * queued from an effect, a connection not yet disposed) keeps what the node calls.
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
    Fuser<Integer> fuser = Fuser.extract((String s) -> s.length(), Fuser.from(button));
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
    Fuser<Integer> fuser = Fuser.extract((String s) -> s.length(), Fuser.from(button));
    connections.add(loop.connect(fuser));
    return new WeakReference<>(fuser);
  }
}
