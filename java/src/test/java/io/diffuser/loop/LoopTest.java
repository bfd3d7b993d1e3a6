package io.diffuser.loop;

import static org.junit.Assert.assertArrayEquals;
import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertFalse;
import static org.junit.Assert.assertNotNull;
import static org.junit.Assert.assertSame;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;

import io.diffuser.diffuser.Diffuser;
import io.diffuser.fuser.Disposable;
import io.diffuser.fuser.Fuser;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.Test;

/**
 * Loops through the Java binding: the same core, the same order, the same rules.
 *
 * <p>One file because every test drives the same counter loop ({@code update} and
 * {@code counter()}) and checks the same log, one test per feature of {@link Loop};
 * gears, journals and update specs, which need fixtures of their own, have their own
 * files.
 */
public class LoopTest {
  /** A counter model: an int, events add, "fail" fails, "echo:n" makes the effect n. */
  static Next<Integer, String> update(Integer model, String event) {
    if (event.equals("fail")) {
      throw new IllegalStateException("refused");
    }
    if (event.equals("silent")) {
      return Next.noChange();
    }
    if (event.startsWith("effect:")) {
      return Next.dispatch(event.substring(7));
    }
    int n = Integer.parseInt(event);
    return n == 1 ? Next.next(model + 1, "inc->" + (model + 1)) : Next.next(model + n);
  }

  private final List<String> log = Collections.synchronizedList(new ArrayList<>());

  private Loop.Builder<Integer, String, String> counter() {
    return Loop.builder(0, LoopTest::update);
  }

  @Test
  public void stepsUpdateStorePublishThenHandleEffectsInOrder() {
    try (Loop<Integer, String, String> loop = counter()
        .handler((effect, job) -> log.add("h1 " + effect))
        .handler((effect, job) -> log.add("h2 " + effect))
        .feedback(Feedback.react(model -> {
          log.add("f " + model);
          return List.of();
        }))
        .build()) {
      AtomicReference<Loop<Integer, String, String>> self = new AtomicReference<>(loop);
      loop.observe(model -> log.add("o1 " + model + " stored " + self.get().model()));
      loop.observe(model -> log.add("o2 " + model));
      log.clear();
      assertTrue(loop.dispatch("1"));
      loop.dispatch("effect:x");
      loop.dispatch("silent");
      assertEquals(Arrays.asList("f 1", "o1 1 stored 1", "o2 1", "h1 inc->1", "h2 inc->1", "h1 x", "h2 x"), log);
      assertEquals(Integer.valueOf(1), loop.model());
    }
  }

  @Test
  public void reducerLoopAndRefusedEvents() {
    Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(1, Integer::sum).manualStart().build();
    assertFalse(loop.dispatch(5));
    try {
      loop.tryDispatch(5);
      fail("a stopped loop refuses");
    } catch (LoopRefusedException expected) {
      assertTrue(expected.getMessage().contains("stopped"));
      assertFalse(expected.isDisposed());
    }
    assertTrue(loop.start());
    loop.dispatch(2);
    loop.dispatch(3);
    assertEquals(Integer.valueOf(6), loop.model());
    loop.close();
    assertFalse(loop.dispatch(1));
    assertFalse(loop.isRunning());
    assertFalse(loop.start());
    try {
      loop.tryDispatch(1);
      fail("a disposed loop refuses");
    } catch (LoopRefusedException expected) {
      assertTrue(expected.getMessage().contains("disposed"));
      assertTrue(expected.isDisposed());
    }
  }

  @Test
  public void aSourceThatRefusesToConnectGoesToTheInspector() {
    List<LoopTrace<Integer, String, String>> traces = new CopyOnWriteArrayList<>();
    IllegalStateException refusal = new IllegalStateException("not now");
    AtomicInteger refusals = new AtomicInteger(1);
    List<io.diffuser.Effect<String>> connected = new CopyOnWriteArrayList<>();
    Fuser<String> good = Fuser.from(effect -> {
      connected.add(effect);
      return () -> connected.remove(effect);
    });
    Fuser<String> refusing = Fuser.from(effect -> {
      if (refusals.getAndDecrement() > 0) {
        throw refusal;
      }
      return () -> { };
    });
    try (Loop<Integer, String, String> loop = counter().inspector(traces::add).build()) {
      loop.connect(Fuser.fromAll(good, refusing));
      LoopTrace<Integer, String, String> failed = traces.get(traces.size() - 1);
      assertEquals(LoopTrace.Kind.SOURCE_FAILED, failed.kind());
      assertSame("the source's own exception", refusal, failed.failure());
      assertTrue(failed.error(), failed.error().contains("not now"));
      assertEquals("sourceFailed: " + failed.error(), failed.toString());
      assertEquals("nothing of the fuser stays connected", 0, connected.size());
      loop.dispatch("1");
      assertEquals(Integer.valueOf(1), loop.model());
      loop.stop();
      assertTrue(loop.start());
      assertEquals("the next start connects the fuser again", 1, connected.size());
      connected.get(0).run("2");
      assertEquals(Integer.valueOf(3), loop.model());
    }
  }

  /**
   * Each refusal reaches its own trace untouched: the loop's calls never throw what a
   * source threw, so it is not kept for them (where it would collect the next refusal as
   * suppressed, start after start).
   */
  @Test
  public void refusalsStayApartAcrossFusersAndStarts() {
    List<LoopTrace<Integer, String, String>> traces = new CopyOnWriteArrayList<>();
    IllegalStateException first = new IllegalStateException("first");
    Fuser<String> a = Fuser.from(effect -> {
      throw first; // the same object at every start
    });
    Fuser<String> b = Fuser.from(effect -> {
      throw new IllegalStateException("second");
    });
    try (Loop<Integer, String, String> loop = counter().inspector(traces::add).manualStart().build()) {
      loop.connect(a);
      loop.connect(b);
      for (int i = 0; i < 3; i++) {
        assertTrue(loop.start());
        loop.stop();
      }
      List<String> refusals = new ArrayList<>();
      for (LoopTrace<Integer, String, String> trace : traces) {
        if (trace.kind() == LoopTrace.Kind.SOURCE_FAILED) {
          refusals.add(trace.failure().getMessage() + "/" + trace.failure().getSuppressed().length);
        }
      }
      assertEquals(Arrays.asList("first/0", "second/0", "first/0", "second/0", "first/0", "second/0"), refusals);
      loop.start();
      loop.dispatch("1");
      assertEquals("the loop's own calls go on", Integer.valueOf(1), loop.model());
    }
  }

  @Test
  public void failuresGoToTheInspectorAndTheLoopGoesOn() {
    List<LoopTrace<Integer, String, String>> traces = new CopyOnWriteArrayList<>();
    RuntimeException handlerFailure = new RuntimeException("handler");
    try (Loop<Integer, String, String> loop = counter()
        .handler((effect, job) -> {
          throw handlerFailure;
        })
        .inspector(traces::add)
        .build()) {
      loop.dispatch("fail");
      loop.dispatch("1");
      assertEquals(Integer.valueOf(1), loop.model());
      LoopTrace<Integer, String, String> failed = traces.get(1);
      assertEquals(LoopTrace.Kind.FAILED, failed.kind());
      assertEquals("fail", failed.event());
      assertEquals(Integer.valueOf(0), failed.model());
      assertTrue(failed.failure() instanceof IllegalStateException);
      assertTrue(failed.error().contains("refused"));
      assertTrue("the printed trace carries the error: " + failed,
          failed.toString().startsWith("failed fail on 0: ") && failed.toString().endsWith(failed.error()));
      LoopTrace<Integer, String, String> stepped = traces.get(2);
      assertEquals(LoopTrace.Kind.STEPPED, stepped.kind());
      assertEquals(Integer.valueOf(1), stepped.nextModel());
      assertEquals(List.of("inc->1"), stepped.effects());
      LoopTrace<Integer, String, String> effectFailed = traces.get(3);
      assertEquals(LoopTrace.Kind.EFFECT_FAILED, effectFailed.kind());
      assertEquals("inc->1", effectFailed.effect());
      assertSame(handlerFailure, effectFailed.failure());
      assertTrue("the printed trace carries the error: " + effectFailed,
          effectFailed.toString().startsWith("effectFailed inc->1: ") && effectFailed.toString().contains("handler"));
    }
    assertEquals(LoopTrace.Kind.DISPOSED, traces.get(traces.size() - 1).kind());
  }

  /** A loop whose update throws {@code update} on event 1 and whose handler throws {@code handler}. */
  private static Loop<Integer, Integer, String> failing(RuntimeException update, RuntimeException handler,
                                                        List<LoopTrace<Integer, Integer, String>> traces) {
    return Loop.<Integer, Integer, String>builder(0, (m, e) -> {
          if (e == 1) throw update;
          return Next.next(m + e, "f");
        })
        .handler((f, job) -> {
          throw handler;
        })
        .inspector(traces::add).build();
  }

  @Test
  public void aTraceCarriesTheTextOfTheFailureExactly() {
    // Characters outside the BMP and U+0000 included: the trace's error is the
    // exception's own text, not a copy that went through the core's C string.
    RuntimeException update = new RuntimeException("caf\u00e9 \uD83D\uDE00 end");
    RuntimeException handler = new RuntimeException("nul\u0000byte");
    List<LoopTrace<Integer, Integer, String>> traces = new ArrayList<>();
    try (Loop<Integer, Integer, String> loop = failing(update, handler, traces)) {
      loop.dispatch(1);
      loop.dispatch(2);
    }
    LoopTrace<Integer, Integer, String> failed = find(traces, LoopTrace.Kind.FAILED);
    assertSame(update, failed.failure());
    assertEquals(String.valueOf(update), failed.error());
    LoopTrace<Integer, Integer, String> effectFailed = find(traces, LoopTrace.Kind.EFFECT_FAILED);
    assertSame(handler, effectFailed.failure());
    assertEquals(String.valueOf(handler), effectFailed.error());
  }

  @Test
  public void theInspectorGetsAFailureWhoseToStringThrows() {
    // The update's, the handler's and the observer's own exception, with a text that
    // names it: not what describing it threw, nor the core's generic text.
    RuntimeException update = new Unprintable();
    RuntimeException handler = new Unprintable();
    RuntimeException observer = new Unprintable();
    List<LoopTrace<Integer, Integer, String>> traces = new ArrayList<>();
    try (Loop<Integer, Integer, String> loop = failing(update, handler, traces)) {
      loop.dispatch(1);
      loop.observe(m -> {
        if (m == 2) throw observer;
      });
      loop.dispatch(2);
    }
    String text = Unprintable.class.getName() + " (its toString() threw java.lang.IllegalStateException)";
    LoopTrace<Integer, Integer, String> failed = find(traces, LoopTrace.Kind.FAILED);
    assertTrue("the update's own exception", failed.failure() == update); // assertSame would print it
    assertEquals(text, failed.error());
    LoopTrace<Integer, Integer, String> effectFailed = find(traces, LoopTrace.Kind.EFFECT_FAILED);
    assertTrue("the handler's own exception", effectFailed.failure() == handler); // assertSame would print it
    assertEquals(text, effectFailed.error());
    LoopTrace<Integer, Integer, String> observerFailed = find(traces, LoopTrace.Kind.OBSERVER_FAILED);
    assertTrue("the observer's own exception", observerFailed.failure() == observer); // assertSame would print it
    assertEquals(text, observerFailed.error());
  }

  @Test
  public void theCoreGetsTheTextOfAFailureAsStandardUtf8() {
    // A character outside the BMP is one 4-byte sequence (not two 3-byte surrogates);
    // a lone surrogate and U+0000, which a C string cannot hold, become U+FFFD.
    LoopNative.setError("caf\u00e9 \uD83D\uDE00 \uD800 nul\u0000 end");
    assertArrayEquals("caf\u00e9 \uD83D\uDE00 \uFFFD nul\uFFFD end".getBytes(StandardCharsets.UTF_8),
        NativeErrors.lastError());
  }

  private static <M, E, F> LoopTrace<M, E, F> find(List<LoopTrace<M, E, F>> traces, LoopTrace.Kind kind) {
    for (LoopTrace<M, E, F> trace : traces) {
      if (trace.kind() == kind) {
        return trace;
      }
    }
    throw new AssertionError("no " + kind + " trace in " + traces);
  }

  @Test
  public void stopAndDisposeThrowWhatASourceDisposeThrewOnceTheyAreDone() {
    // As disposing a Fuser connection does: every source is disconnected and the loop
    // closed, then the call throws the source's exception.
    RuntimeException boom = new RuntimeException("source dispose failed");
    List<String> seen = new CopyOnWriteArrayList<>();
    List<LoopTrace<Integer, Integer, Void>> traces = new CopyOnWriteArrayList<>();
    Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, Integer::sum).inspector(traces::add).build();
    loop.connect(Fuser.fromAll(
        Fuser.from(effect -> () -> {
          seen.add("failing disconnected");
          throw boom;
        }),
        Fuser.from(effect -> () -> seen.add("other disconnected"))));
    try {
      loop.stop();
      fail("stop returned");
    } catch (RuntimeException thrown) {
      assertSame(boom, thrown);
    }
    assertFalse(loop.isRunning());
    assertEquals(List.of("failing disconnected", "other disconnected"), seen);
    assertEquals(LoopTrace.Kind.STOPPED, traces.get(traces.size() - 1).kind());
    assertTrue(loop.start());
    seen.clear();
    try {
      loop.dispose();
      fail("dispose returned");
    } catch (RuntimeException thrown) {
      assertSame(boom, thrown);
    }
    assertEquals(List.of("failing disconnected", "other disconnected"), seen);
    assertEquals(LoopTrace.Kind.DISPOSED, traces.get(traces.size() - 1).kind());
    assertFalse(loop.dispatch(1));
    loop.dispose(); // disposed already: nothing to disconnect, nothing thrown
  }

  @Test
  public void eventsSentDuringAStepAreQueued() throws Exception {
    List<Job<String>> kept = new CopyOnWriteArrayList<>();
    try (Loop<Integer, String, String> loop = counter()
        .handler((effect, job) -> {
          log.add("h " + effect);
          if (effect.equals("now")) {
            assertTrue(job.send("10"));
            log.add("sent");
          }
          if (effect.equals("later")) {
            kept.add(job);
          }
        })
        .build()) {
      loop.observe(model -> log.add("o " + model));
      loop.dispatch("effect:now");
      assertEquals(Arrays.asList("o 0", "h now", "sent", "o 10"), log);

      loop.dispatch("effect:later");
      Job<String> job = kept.get(0);
      Thread thread = new Thread(() -> {
        job.send("5");
        job.finish();
      });
      thread.start();
      thread.join();
      assertEquals(Integer.valueOf(15), loop.model());
      assertFalse("a finished job sends nothing", job.send("5"));
    }
  }

  @Test
  public void jobsAreCancelledOnDisposeAndTheirActionsRun() {
    List<Job<String>> kept = new CopyOnWriteArrayList<>();
    AtomicInteger cancelled = new AtomicInteger();
    Loop<Integer, String, String> loop = counter()
        .handler((effect, job) -> {
          job.onCancel(cancelled::incrementAndGet);
          kept.add(job);
        })
        .startEffects("long")
        .build();
    assertFalse(kept.get(0).isCancelled());
    loop.dispose();
    assertEquals(1, cancelled.get());
    assertTrue(kept.get(0).isCancelled());
    assertFalse(kept.get(0).send("1"));
  }

  @Test
  public void feedbacksWithOverlapAndRequests() {
    try (Loop<Integer, String, String> loop = counter().build()) {
      List<Job<String>> works = new CopyOnWriteArrayList<>();
      Disposable work = loop.add(Feedback.work((model, job) -> {
        log.add("work " + model);
        job.onCancel(() -> log.add("cancel " + model));
        works.add(job);
      }));
      loop.dispatch("2");
      assertEquals(Arrays.asList("work 0", "cancel 0", "work 2"), log);
      assertFalse(works.get(0).send("1"));
      work.dispose();
      log.clear();

      loop.add(Feedback.request((Integer model) -> model >= 10 ? model / 10 : null, (Integer request, Job<String> job) -> {
        log.add("request " + request);
        job.onCancel(() -> log.add("cancel request " + request));
      }));
      loop.dispatch("8");   // 10
      loop.dispatch("5");   // 15: same request
      loop.dispatch("5");   // 20
      loop.dispatch("-15"); // 5: none
      assertEquals(Arrays.asList("request 1", "cancel request 1", "request 2", "cancel request 2"), log);
    }
  }

  /**
   * A counter loop built with a start effect and one feedback of each kind, run to its
   * rest on {@code executor}; the log of its traces and callbacks.
   */
  private List<String> startWithFeedbacks(java.util.concurrent.Executor executor, boolean manualStart)
      throws Exception {
    ManualExecutor manual = executor instanceof ManualExecutor ? (ManualExecutor) executor : null;
    Gear<String> gear = new Gear<>();
    Loop.Builder<Integer, String, String> builder = counter()
        .executor(executor)
        .startEffects("s")
        .handler((effect, job) -> {
          log.add("h " + effect);
          job.send("10");
        })
        .feedback(Feedback.react(model -> {
          log.add("react " + model);
          return model == 0 ? List.of("2") : List.of();
        }))
        .feedback(Feedback.work((model, job) -> log.add("work " + model)))
        .feedback(Feedback.request((Integer model) -> model, (Integer model, Job<String> job) -> log.add("request " + model)))
        .feedback(Feedback.pushing(gear, model -> {
          log.add("gear " + model);
          return null;
        }))
        .inspector(trace -> log.add(trace.kind() + (trace.event() == null ? "" : " " + trace.event())));
    if (manualStart) {
      builder.manualStart();
    }
    Loop<Integer, String, String> loop = builder.build();
    if (manualStart) {
      assertTrue(loop.start());
    }
    if (manual != null) {
      log.add("runs " + manual.runAll());
    } else {
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (loop.model() != 12 && System.nanoTime() < deadline) {
        Thread.sleep(1);
      }
    }
    loop.dispose();
    List<String> seen = new ArrayList<>(log);
    log.clear();
    return seen;
  }

  @Test
  public void builderFeedbacksHearTheFirstModelBeforeTheStartEffects() throws Exception {
    // The order of Swift's Loop(feedbacks:): the start publishes the first model to the
    // feedbacks, then hands the start effects to the handlers, whatever the executor;
    // so the feedback's event (2) is queued before the handler's (10).
    List<String> expected = Arrays.asList("STARTED", "react 0", "work 0", "request 0", "gear 0", "h s",
        "STEPPED 2", "react 2", "work 2", "request 2", "gear 2",
        "STEPPED 10", "react 12", "work 12", "request 12", "gear 12", "DISPOSED");
    assertEquals(expected, startWithFeedbacks(null, false));
    assertEquals(expected, startWithFeedbacks(null, true));
    List<String> manual = new ArrayList<>(expected);
    manual.add(manual.size() - 1, "runs 3"); // the start and two events: one piece each
    assertEquals(manual, startWithFeedbacks(new ManualExecutor(), false));
    assertEquals(manual, startWithFeedbacks(new ManualExecutor(), true));
    ExecutorService single = Executors.newSingleThreadExecutor();
    try {
      for (int round = 0; round < 20; round++) {
        assertEquals("round " + round, expected, startWithFeedbacks(single, round % 2 == 1));
      }
    } finally {
      single.shutdown();
    }
  }

  @Test
  public void spinLevelsConverge() {
    // Spin's README example, with two synchronous feedbacks and a reducer.
    try (Loop<List<Integer>, String, Void> loop = Loop.<List<Integer>, String>reducer(List.of(10, 20), (levels, event) -> {
      int left = levels.get(0);
      int right = levels.get(1);
      if (left == right) {
        return levels;
      }
      switch (event) {
        case "left+": return List.of(left + 1, right);
        case "left-": return List.of(left - 1, right);
        case "right+": return List.of(left, right + 1);
        default: return List.of(left, right - 1);
      }
    })
        .feedback(Feedback.react(l -> l.get(0).equals(l.get(1)) ? List.of() : List.of(l.get(0) < l.get(1) ? "left+" : "left-")))
        .feedback(Feedback.react(l -> l.get(0).equals(l.get(1)) ? List.of() : List.of(l.get(1) < l.get(0) ? "right+" : "right-")))
        .build()) {
      assertEquals(List.of(15, 15), loop.model());
    }
  }

  @Test
  public void observeSelectorsOwnersAndRender() {
    try (Loop<Integer, String, String> loop = counter().build()) {
      loop.observe((Integer model) -> model / 10, tens -> log.add("tens " + tens));
      Object[] owner = {new Object()};
      loop.observe(owner[0], (o, model) -> log.add("owned " + model));
      loop.render(Diffuser.map((Integer model) -> model % 2 == 0, Diffuser.into(even -> log.add("even " + even))));
      loop.dispatch("2");
      loop.dispatch("1");
      loop.dispatch("10");
      assertEquals(Arrays.asList("tens 0", "owned 0", "even true", "owned 2", "owned 3", "even false", "tens 1",
          "owned 13"), log);
    }
  }

  /** A null argument is refused when it is given, with its name; nothing is registered. */
  @Test
  public void nullArgumentsAreRefusedAtOnce() {
    try (Loop<Integer, String, String> loop = counter().build()) {
      assertNullRefused("observer", () -> loop.observe((io.diffuser.Effect<Integer>) null));
      assertNullRefused("observer", () -> loop.observe(new Object(), null));
      assertNullRefused("owner", () -> loop.observe(null, (owner, model) -> { }));
      loop.dispatch("1");
      assertEquals("the loop goes on, with no failing observer", Integer.valueOf(1), loop.model());
    }
    assertNullRefused("effects", () -> counter().startEffects((String[]) null));
    assertNullRefused("effects", () -> Next.next(1, (String[]) null));
    assertNullRefused("effects", () -> Next.next(1, (List<String>) null));
    assertNullRefused("effects", () -> Next.dispatch((String[]) null));
  }

  private static void assertNullRefused(String name, Runnable call) {
    try {
      call.run();
      fail("null " + name + " accepted");
    } catch (NullPointerException expected) {
      assertEquals(name, expected.getMessage());
    }
  }

  @Test
  public void sourcesConnectWhileRunning() {
    List<io.diffuser.Effect<String>> emitters = new CopyOnWriteArrayList<>();
    AtomicInteger disconnects = new AtomicInteger();
    Fuser<String> sources = Fuser.from(effect -> {
      emitters.add(effect);
      return () -> {
        emitters.remove(effect);
        disconnects.incrementAndGet();
      };
    });
    try (Loop<Integer, String, String> loop = counter().build()) {
      loop.connect(sources);
      assertEquals(1, emitters.size());
      emitters.get(0).run("3");
      assertEquals(Integer.valueOf(3), loop.model());
      loop.stop();
      assertEquals(0, emitters.size());
      assertEquals(Integer.valueOf(3), loop.model());
      loop.start();
      assertEquals(1, emitters.size());
      emitters.get(0).run("4");
      assertEquals(Integer.valueOf(7), loop.model());
    }
    assertEquals(2, disconnects.get());
  }

  @Test
  public void manualExecutorStepsTheLoop() {
    ManualExecutor executor = new ManualExecutor();
    try (Loop<Integer, String, String> loop = counter().executor(executor).build()) {
      loop.observe(model -> log.add("o " + model));
      loop.dispatch("2");
      loop.dispatch("3");
      assertEquals(List.of(), log);
      assertTrue(executor.runNext()); // the start
      assertTrue(executor.runNext()); // the observer
      assertEquals(List.of("o 0"), log);
      assertTrue(executor.runNext());
      assertEquals(List.of("o 0", "o 2"), log);
      assertEquals(1, executor.runAll());
      assertEquals(List.of("o 0", "o 2", "o 5"), log);
    }
  }

  @Test
  public void coalescingReplacesInPlace() {
    ManualExecutor executor = new ManualExecutor();
    List<String> seen = new CopyOnWriteArrayList<>();
    try (Loop<Integer, String, String> loop = Loop.<Integer, String, String>builder(0, (model, event) -> {
      seen.add(event);
      return Next.next(model + 1);
    }).executor(executor).coalescing(event -> event.startsWith("move") ? "move" : null).build()) {
      executor.runAll();
      loop.dispatch("move1");
      loop.dispatch("click");
      loop.dispatch("move2");
      executor.runAll();
      assertEquals(List.of("move2", "click"), seen);
    }
  }

  @Test
  public void javaExecutorsForTheLoopAndItsWork() throws Exception {
    ExecutorService single = Executors.newSingleThreadExecutor();
    ExecutorService pool = Executors.newFixedThreadPool(2);
    CountDownLatch handled = new CountDownLatch(1);
    List<String> threads = new CopyOnWriteArrayList<>();
    try (Loop<Integer, String, String> loop = counter()
        .executor(single)
        .handler(pool, (effect, job) -> {
          threads.add(Thread.currentThread().getName());
          job.send("100");
          handled.countDown();
        })
        .build()) {
      loop.dispatch("1");
      assertTrue(handled.await(5, TimeUnit.SECONDS));
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
      while (loop.model() != 101 && System.nanoTime() < deadline) {
        Thread.sleep(1);
      }
      assertEquals(Integer.valueOf(101), loop.model());
      assertTrue(threads.get(0).startsWith("pool"));
    } finally {
      single.shutdown();
      pool.shutdown();
    }
  }

  @Test
  public void eightThreadsDispatching() throws Exception {
    int perThread = 2_000;
    int[] last = new int[8];
    AtomicInteger outOfOrder = new AtomicInteger();
    try (Loop<Integer, int[], Void> loop = Loop.<Integer, int[]>reducer(0, (model, event) -> {
      if (event[1] <= last[event[0]]) {
        outOfOrder.incrementAndGet();
      }
      last[event[0]] = event[1];
      return model + 1;
    }).build()) {
      Thread[] threads = new Thread[8];
      for (int t = 0; t < 8; t++) {
        int thread = t;
        threads[t] = new Thread(() -> {
          for (int i = 1; i <= perThread; i++) {
            loop.dispatch(new int[] {thread, i});
          }
        });
        threads[t].start();
      }
      for (Thread thread : threads) {
        thread.join();
      }
      assertEquals(Integer.valueOf(8 * perThread), loop.model());
      assertEquals(0, outOfOrder.get());
    }
  }

  @Test
  public void disposeRacingDispatch() throws Exception {
    for (int round = 0; round < 20; round++) {
      AtomicInteger updates = new AtomicInteger();
      AtomicInteger late = new AtomicInteger();
      AtomicInteger accepted = new AtomicInteger();
      boolean[] disposed = {false};
      Loop<Integer, Integer, Void> loop = Loop.<Integer, Integer>reducer(0, (model, event) -> {
        synchronized (disposed) {
          if (disposed[0]) {
            late.incrementAndGet();
          }
        }
        updates.incrementAndGet();
        return model + 1;
      }).build();
      Thread[] threads = new Thread[8];
      for (int t = 0; t < 8; t++) {
        threads[t] = new Thread(() -> {
          while (loop.dispatch(1)) {
            accepted.incrementAndGet();
          }
        });
        threads[t].start();
      }
      Thread.sleep(1);
      loop.dispose();
      synchronized (disposed) {
        disposed[0] = true;
      }
      for (Thread thread : threads) {
        thread.join();
      }
      assertEquals("round " + round + ": every accepted event was handled", accepted.get(), updates.get());
      assertEquals("round " + round + ": nothing after dispose returned", 0, late.get());
      assertNotNull(loop.toString());
    }
  }
}
