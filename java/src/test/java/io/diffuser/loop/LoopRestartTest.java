package io.diffuser.loop;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Function;
import org.junit.Rule;
import org.junit.Test;

/**
 * A loop's restart ({@link Loop.Builder#restart}, Mobius's {@code Init}) through the Java
 * binding: not called at the first start, called at every later one with the kept model;
 * the run starts from the {@link Next} it returns; one that throws or returns null starts
 * from the kept model and reports to the uncaught exception handler; one that stops or
 * disposes its loop cancels the start; the journal records the restarted model; what it
 * gave is released. The loops run on the calling thread (but one on a manual executor),
 * whose uncaught exception handler the tests replace.
 */
public class LoopRestartTest {
  private final List<String> log = Collections.synchronizedList(new ArrayList<>());
  @Rule public final UncaughtRecorder uncaughtHandler = new UncaughtRecorder();
  private final List<Throwable> uncaught = uncaughtHandler.seen;

  /** Adds the event to the model. */
  static Next<Integer, String> add(Integer model, String event) {
    return Next.next(model + Integer.parseInt(event));
  }

  /**
   * A loop at model 3, with {@code restart}, an observer, a handler and an inspector that
   * log, started (its first start) and moved to 5; the log is cleared.
   */
  private Loop<Integer, String, String> restarting(Function<Integer, Next<Integer, String>> restart) {
    return restarting(Loop.builder(3, LoopRestartTest::add), restart);
  }

  private Loop<Integer, String, String> restarting(Loop.Builder<Integer, String, String> builder,
      Function<Integer, Next<Integer, String>> restart) {
    Loop<Integer, String, String> loop = builder
        .restart(model -> {
          log.add("restart " + model);
          return restart.apply(model);
        })
        .handler((effect, job) -> log.add("h " + effect))
        .inspector(this::inspect)
        .build();
    loop.observe(model -> log.add("o " + model));
    loop.dispatch("2");
    log.clear();
    return loop;
  }

  private void inspect(LoopTrace<Integer, String, String> trace) {
    switch (trace.kind()) {
      case STARTED:
        log.add("started " + trace.model() + " " + trace.effects());
        break;
      case STOPPED:
        log.add("stopped " + trace.model());
        break;
      case DISPOSED:
        log.add("disposed " + trace.model());
        break;
      case FAILED:
      case EFFECT_FAILED:
      case OBSERVER_FAILED:
        log.add("failure " + trace.failure());
        break;
      default:
        break;
    }
  }

  @Test
  public void laterStartsRunFromWhatTheRestartMakesOfTheKeptModel() {
    try (Loop<Integer, String, String> loop = Loop.builder(3, LoopRestartTest::add)
        .startEffects("first")
        .restart(model -> {
          log.add("restart " + model);
          return Next.next(model + 40, "e1", "e2");
        })
        .handler((effect, job) -> log.add("h " + effect))
        .inspector(this::inspect)
        .build()) {
      assertEquals("the first start takes the builder's model and start effects",
          Arrays.asList("started 3 [first]", "h first"), log);
      loop.observe(model -> log.add("o " + model));
      loop.dispatch("2");
      loop.stop();
      log.clear();

      assertTrue(loop.start());
      assertEquals("called with the kept model; its model is published, then its effects handled in order",
          Arrays.asList("restart 5", "started 45 [e1, e2]", "o 45", "h e1", "h e2"), log);
      assertEquals(Integer.valueOf(45), loop.model());
      log.clear();
      loop.dispatch("1");
      assertEquals("the run steps from it", Arrays.asList("o 46"), log);

      loop.stop();
      log.clear();
      assertTrue(loop.start());
      assertEquals("every later start restarts",
          Arrays.asList("restart 46", "started 86 [e1, e2]", "o 86", "h e1", "h e2"), log);
      assertTrue(loop.isRunning());
    }
  }

  @Test
  public void aManualStartIsTheFirstStart() {
    try (Loop<Integer, String, String> loop = Loop.builder(3, LoopRestartTest::add)
        .startEffects("first")
        .restart(model -> {
          log.add("restart " + model);
          return Next.next(model * 10);
        })
        .handler((effect, job) -> log.add("h " + effect))
        .manualStart()
        .build()) {
      loop.observe(model -> log.add("o " + model));
      assertTrue(loop.start());
      assertEquals(Arrays.asList("o 3", "h first"), log);
      loop.stop();
      log.clear();
      assertTrue(loop.start());
      assertEquals(Arrays.asList("restart 3", "o 30"), log);
    }
  }

  @Test
  public void aNextWithoutAModelKeepsTheKeptModel() {
    AtomicReference<Next<Integer, String>> next = new AtomicReference<>(Next.dispatch("reload"));
    try (Loop<Integer, String, String> loop = restarting(model -> next.get())) {
      loop.stop();
      log.clear();
      assertTrue(loop.start());
      assertEquals("the kept model is published again, then the start effects go out",
          Arrays.asList("restart 5", "started 5 [reload]", "o 5", "h reload"), log);

      next.set(Next.noChange());
      loop.stop();
      log.clear();
      assertTrue(loop.start());
      assertEquals(Arrays.asList("restart 5", "started 5 []", "o 5"), log);
      assertEquals(Integer.valueOf(5), loop.model());
    }
  }

  @Test
  public void theRestartRunsOnTheLoopsTurn() {
    ManualExecutor executor = new ManualExecutor();
    AtomicReference<Thread> thread = new AtomicReference<>();
    try (Loop<Integer, String, String> loop = restarting(Loop.builder(3, LoopRestartTest::add).executor(executor),
        model -> {
          thread.set(Thread.currentThread());
          return Next.next(model + 1);
        })) {
      executor.runAll();
      loop.stop();
      executor.runAll();
      log.clear();
      assertTrue(loop.start());
      assertEquals("queued, not called by start()", Collections.emptyList(), log);
      executor.runAll();
      assertEquals(Arrays.asList("restart 5", "started 6 []", "o 6"), log);
      assertSame("on the thread running the executor's work", Thread.currentThread(), thread.get());
    }
  }

  @Test
  public void aRestartThatThrowsStartsFromTheKeptModel() {
    IllegalStateException boom = new IllegalStateException("restart failed");
    try (Loop<Integer, String, String> loop = restarting(model -> {
      throw boom;
    })) {
      loop.stop();
      log.clear();
      assertTrue(loop.start());
      assertEquals("no effect, no failure trace",
          Arrays.asList("restart 5", "started 5 []", "o 5"), log);
      assertEquals("the exception goes to the thread's uncaught exception handler", List.of(boom), uncaught);
      log.clear();
      assertTrue(loop.dispatch("1"));
      assertEquals("the run goes on", Arrays.asList("o 6"), log);
    }
  }

  @Test
  public void aRestartThatReturnsNullStartsFromTheKeptModel() {
    try (Loop<Integer, String, String> loop = restarting(model -> null)) {
      loop.stop();
      log.clear();
      assertTrue(loop.start());
      assertEquals(Arrays.asList("restart 5", "started 5 []", "o 5"), log);
      assertEquals(1, uncaught.size());
      assertEquals(NullPointerException.class, uncaught.get(0).getClass());
      assertEquals("the restart returned null", uncaught.get(0).getMessage());
      assertTrue(loop.isRunning());
    }
  }

  @Test
  public void aRestartThatStopsItsLoopCancelsTheStart() {
    AtomicReference<Loop<Integer, String, String>> self = new AtomicReference<>();
    AtomicInteger stops = new AtomicInteger(1);
    try (Loop<Integer, String, String> loop = restarting(model -> {
      if (stops.getAndDecrement() > 0) {
        self.get().stop();
        log.add("stop returned");
      }
      return Next.next(model + 40, "e");
    })) {
      self.set(loop);
      loop.stop();
      log.clear();
      assertFalse("the start reports the stop", loop.start());
      assertEquals("nothing of the start happens: no trace, no model, no effect",
          Arrays.asList("restart 5", "stopped 5", "stop returned"), log);
      assertEquals(Integer.valueOf(5), loop.model());
      assertFalse(loop.isRunning());
      assertFalse(loop.dispatch("1"));

      log.clear();
      assertTrue("a later start restarts again", loop.start());
      assertEquals(Arrays.asList("restart 5", "started 45 [e]", "o 45", "h e"), log);
      assertEquals(Collections.emptyList(), uncaught);
    }
  }

  @Test
  public void aRestartThatDisposesItsLoopCancelsTheStart() {
    AtomicReference<Loop<Integer, String, String>> self = new AtomicReference<>();
    Loop<Integer, String, String> loop = restarting(model -> {
      self.get().dispose();
      log.add("dispose returned");
      return Next.next(model + 40, "e");
    });
    self.set(loop);
    loop.stop();
    log.clear();
    assertFalse("the start reports the dispose", loop.start());
    assertEquals("nothing of the start happens", Arrays.asList("restart 5", "disposed 5", "dispose returned"), log);
    assertFalse(loop.isRunning());
    log.clear();
    assertFalse("disposed for good", loop.start());
    assertEquals("no restart after the dispose", Collections.emptyList(), log);
    assertEquals(Collections.emptyList(), uncaught);
  }

  @Test
  public void theJournalRecordsTheRestartedModel() {
    Journal<Integer, String> journal = new Journal<>();
    try (Loop<Integer, String, String> loop = restarting(Loop.builder(3, LoopRestartTest::add).journal(journal),
        model -> Next.next(model + 40, "reload"))) {
      loop.stop();
      loop.start();
      loop.dispatch("1");
      assertEquals(Arrays.asList("start 3", "event 2", "start 45", "event 1"), JournalTest.describe(journal));
      assertEquals("a replay goes on from the restarted model, not the kept one",
          Arrays.asList(3, 5, 45, 46), journal.replay(LoopRestartTest::add));
    }
  }

  /** A value of the tests below, big enough that a leaked one shows. */
  private static final class Box {
    @SuppressWarnings("unused")
    final byte[] payload = new byte[1 << 12];
  }

  /**
   * A loop that restarts from new boxes (model and effect) and, on {@code close}, stops or
   * disposes itself from inside the restart; its weak references to every box it gave.
   */
  private static Loop<Object, String, Object> boxing(List<WeakReference<Box>> given, String close,
      AtomicInteger calls) {
    AtomicReference<Loop<Object, String, Object>> self = new AtomicReference<>();
    Loop<Object, String, Object> loop = Loop.<Object, String, Object>builder(new Box(), (m, e) -> Next.noChange())
        .restart(model -> {
          calls.incrementAndGet();
          Box model2 = new Box();
          Box effect = new Box();
          given.add(new WeakReference<>(model2));
          given.add(new WeakReference<>(effect));
          if (close.equals("stop")) {
            self.get().stop();
          } else if (close.equals("dispose")) {
            self.get().dispose();
          }
          return Next.next(model2, effect);
        })
        .handler((effect, job) -> { })
        .build();
    self.set(loop);
    return loop;
  }

  private static int uncollected(List<WeakReference<Box>> refs) throws InterruptedException {
    for (int round = 0; round < 50; round++) {
      System.gc();
      if (refs.stream().allMatch(ref -> ref.get() == null)) {
        return 0;
      }
      Thread.sleep(10);
    }
    return (int) refs.stream().filter(ref -> ref.get() != null).count();
  }

  @Test
  public void whatARestartGaveIsReleasedOnceTheLoopIsDone() throws Exception {
    for (String close : new String[] {"none", "stop", "dispose"}) {
      List<WeakReference<Box>> given = new ArrayList<>();
      AtomicInteger calls = new AtomicInteger();
      Loop<Object, String, Object> loop = boxing(given, close, calls);
      for (int i = 0; i < 3; i++) {
        loop.stop();
        loop.start();
      }
      assertEquals(close, close.equals("dispose") ? 1 : 3, calls.get());
      Object kept = close.equals("none") ? loop.model() : null;
      // Still held by the loop: the kept model if the last start gave one. Every other box
      // (the effects handled, the models replaced, what a closed start dropped) is let go.
      List<WeakReference<Box>> released = new ArrayList<>();
      for (WeakReference<Box> ref : given) {
        if (ref.get() != kept) {
          released.add(ref);
        }
      }
      kept = null;
      assertEquals(close + ": boxes the loop still holds", 0, uncollected(released));
      loop.dispose();
    }
  }
}
